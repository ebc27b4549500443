//! Kill -9 loops over the pattern layer (the `spillway-crash` harness): a child process (this binary, re-executed with
//! `SPILLWAY_PATTERN_CRASH_CHILD` set to a directory and `SPILLWAY_PATTERN_CRASH_MODE` to a
//! scenario) writes through a database that fsyncs every commit and prints `ack N` after each
//! acknowledged write; the parent kills it with SIGKILL at a random moment, reopens the
//! database, and checks what survived against what was acknowledged.
//!
//! Scenarios:
//! - `push`: `$push`es of 0, 1, 2, ... onto one book of an outlier policy (threshold 5,
//!   buckets of 4), crossing the threshold and filling buckets. After each reopen the logical
//!   array is exactly `0..m` with `m - 1` the last acknowledged value, or one more (the write
//!   in flight): nothing lost, duplicated or reordered. The child records changes (it opens a
//!   change stream first), and the change log must hold exactly one event per push, of the
//!   logical array (`tags.i` appended, never the buckets), in order, each resumable: a stream
//!   resumed after kill -9 continues without a gap or a duplicate.
//! - `subset`: a product of a subset policy (keep 3, by `k` descending); op `j` pushes review
//!   `k = j`, except every third op, which deletes review `j - 1` directly in the archive.
//!   After each reopen the archive holds exactly the reviews of ops `0..=L` for `L` the last
//!   acknowledged op or the one in flight.
//! - `migrate`: a fresh 3000-document collection gets an outlier policy, whose migration
//!   (batches of 256, each its own commit) the kill interrupts; opening resumes it. After
//!   the reopen the policy is active and every logical document is the one inserted.
//!
//! After every reopen `verify_patterns()` must be empty. Iterations per scenario:
//! `SPILLWAY_CRASH_ITERATIONS` (default 8; a quarter as many interrupted migrations, each
//! seeding 3,000 documents). `cargo xtask crash` runs this loop too.

use std::collections::BTreeSet;
use std::path::Path;
use std::time::{Duration, Instant};

use spillway::bson::{Bson, Document, doc};
use spillway::{Database, Pattern};
use spillway_crash::{Acks, Child, Random, child_directory, iterations, last_ack};
use spillway_store::{Store, StoreOptions};

const CHILD_ENV: &str = "SPILLWAY_PATTERN_CRASH_CHILD";
const MODE_ENV: &str = "SPILLWAY_PATTERN_CRASH_MODE";
const MIGRATED_DOCUMENTS: i32 = 3000;

fn ensure_policy(db: &Database, collection: &str, pattern: impl Into<Pattern>) {
    if db.patterns().is_empty() {
        db.create_collection(collection)
            .run()
            .expect("child: create");
        db.set_pattern(pattern).expect("child: set_pattern");
    }
}

// ---------------------------------------------------------------------------------------
// push

fn push_child(db: &Database) -> ! {
    // Recording starts with the first stream: before any write of the scenario.
    drop(db.watch().run().expect("child: watch"));
    ensure_policy(
        db,
        "books",
        Pattern::outlier("books", "tags")
            .threshold(5)
            .bucket_capacity(4),
    );
    let books = db.collection::<Document>("books");
    if books.find_one(doc! { "_id": 1 }).run().unwrap().is_none() {
        books
            .insert_one(doc! { "_id": 1, "tags": [] })
            .run()
            .expect("child: insert");
    }
    let mut next = books.array_len(1, "tags").unwrap().expect("the book") as i64;
    let mut acks = Acks::new();
    acks.line("ready");
    loop {
        books
            .update_one(doc! { "_id": 1 }, doc! { "$push": { "tags": next } })
            .run()
            .expect("child: push");
        acks.ack(next);
        next += 1;
    }
}

fn push_verify(db: &Database, last_acked: Option<i64>, iteration: u32) -> u64 {
    let logical = db
        .collection::<Document>("books")
        .find_one(doc! { "_id": 1 })
        .run()
        .unwrap();
    let tags: Vec<i64> = logical
        .as_ref()
        .and_then(|book| book.get_array("tags").ok())
        .map(|tags| {
            tags.iter()
                .map(|tag| tag.as_i64().expect("an i64"))
                .collect()
        })
        .unwrap_or_default();
    let expected: Vec<i64> = (0..tags.len() as i64).collect();
    assert_eq!(
        tags, expected,
        "iteration {iteration}: pushes lost, duplicated or reordered"
    );
    if let Some(acked) = last_acked {
        let present = tags.len() as i64 - 1;
        assert!(
            present == acked || present == acked + 1,
            "iteration {iteration}: last acknowledged push {acked}, the array ends at {present}"
        );
    }
    push_events_verify(db, tags.len(), iteration);
    tags.len() as u64
}

/// The change log after a kill: the book's insert, then one update per push appending
/// `tags.i` for `i` in `0..pushes`, in order; and resuming after any event gives the next.
fn push_events_verify(db: &Database, pushes: usize, iteration: u32) {
    let mut stream = db
        .watch()
        .start_at_operation_time(spillway::bson::Timestamp {
            time: 0,
            increment: 0,
        })
        .run()
        .unwrap();
    let mut events = Vec::new();
    while let Some(event) = stream.try_next().unwrap() {
        events.push(event);
    }
    if pushes == 0 && events.is_empty() {
        return;
    }
    let kinds: Vec<&str> = events
        .iter()
        .map(|event| event.get_str("operationType").unwrap())
        .collect();
    assert_eq!(
        kinds.first(),
        Some(&"insert"),
        "iteration {iteration}: {kinds:?}"
    );
    let appended: Vec<String> = events[1..]
        .iter()
        .map(|event| {
            let fields = event
                .get_document("updateDescription")
                .and_then(|description| description.get_document("updatedFields"))
                .unwrap_or_else(|_| panic!("iteration {iteration}: not an update: {event}"));
            assert_eq!(fields.len(), 1, "iteration {iteration}: {event}");
            fields.keys().next().unwrap().clone()
        })
        .collect();
    let expected: Vec<String> = (0..pushes).map(|i| format!("tags.{i}")).collect();
    assert_eq!(
        appended, expected,
        "iteration {iteration}: the change events do not match the pushes one to one"
    );
    let middle = events.len() / 2;
    let token = events[middle].get_document("_id").unwrap().clone();
    let mut resumed = db.watch().resume_after(token).run().unwrap();
    let after = resumed.try_next().unwrap();
    assert_eq!(
        after.as_ref(),
        events.get(middle + 1),
        "iteration {iteration}: resuming after event {middle}"
    );
}

// ---------------------------------------------------------------------------------------
// subset

/// The review keys present after ops `0..=last`.
fn subset_expected(last: Option<i64>) -> BTreeSet<i64> {
    let mut keys = BTreeSet::new();
    for op in 0..=last.unwrap_or(-1) {
        if op % 3 == 2 {
            keys.remove(&(op - 1));
        } else {
            keys.insert(op);
        }
    }
    keys
}

fn subset_child(db: &Database) -> ! {
    ensure_policy(
        db,
        "products",
        Pattern::subset("products", "reviews")
            .keep(3)
            .sort_by(doc! { "k": -1 })
            .archive_collection("reviews")
            .link_field("product_id"),
    );
    let products = db.collection::<Document>("products");
    let reviews = db.collection::<Document>("reviews");
    if products
        .find_one(doc! { "_id": 1 })
        .run()
        .unwrap()
        .is_none()
    {
        products
            .insert_one(doc! { "_id": 1, "reviews": [] })
            .run()
            .expect("child: insert");
    }
    // The last op done is the newest key present: a key `3t + 1` is deleted by op `3t + 2`,
    // and the state after op `3t` equals the state after op `3t + 2`, so resuming at
    // `3t + 1` redoes a push and a delete that leave it as it was.
    let newest = products
        .array_page(1, "reviews", 0, 1)
        .unwrap()
        .expect("the product")
        .first()
        .and_then(|review| review.as_document()?.get("k")?.as_i64());
    let mut op = newest.map_or(0, |newest| newest + 1);
    let mut acks = Acks::new();
    acks.line("ready");
    loop {
        if op % 3 == 2 {
            let deleted = reviews
                .delete_one(doc! { "k": op - 1 })
                .run()
                .expect("child: archive delete");
            assert_eq!(deleted.deleted_count, 1, "child: review {} exists", op - 1);
        } else {
            products
                .update_one(
                    doc! { "_id": 1 },
                    doc! { "$push": { "reviews": { "k": op, "text": format!("review {op}") } } },
                )
                .run()
                .expect("child: push");
        }
        acks.ack(op);
        op += 1;
    }
}

/// Checks the product and returns the newest key present: the op the next child resumes
/// after.
fn subset_verify(db: &Database, last_acked: Option<i64>, iteration: u32) -> Option<i64> {
    let logical = db
        .collection::<Document>("products")
        .find_one(doc! { "_id": 1 })
        .run()
        .unwrap();
    let keys: Vec<i64> = logical
        .as_ref()
        .and_then(|product| product.get_array("reviews").ok())
        .map(|reviews| {
            reviews
                .iter()
                .map(|review| review.as_document().unwrap().get_i64("k").unwrap())
                .collect()
        })
        .unwrap_or_default();
    let present: BTreeSet<i64> = keys.iter().copied().collect();
    assert_eq!(
        present.len(),
        keys.len(),
        "iteration {iteration}: duplicated reviews {keys:?}"
    );
    assert!(
        keys.windows(2).all(|pair| pair[0] > pair[1]),
        "iteration {iteration}: the logical array is not newest first: {keys:?}"
    );
    let candidates = [last_acked, Some(last_acked.map_or(0, |acked| acked + 1))];
    assert!(
        candidates
            .iter()
            .any(|&last| subset_expected(last) == present),
        "iteration {iteration}: after acknowledged op {last_acked:?} the archive holds {keys:?}"
    );
    keys.first().copied()
}

// ---------------------------------------------------------------------------------------
// migrate

fn migrated_document(id: i32) -> Document {
    let tags: Vec<i32> = (0..id % 13).collect();
    doc! { "_id": id, "tags": tags }
}

fn migrate_child(db: &Database) -> ! {
    let mut acks = Acks::new();
    let sales = db.collection::<Document>("sales");
    if sales.count_documents(doc! {}).run().unwrap() == 0 {
        sales
            .insert_many((0..MIGRATED_DOCUMENTS).map(migrated_document))
            .run()
            .expect("child: seed");
    }
    acks.line("seeded");
    db.set_pattern(
        Pattern::outlier("sales", "tags")
            .threshold(5)
            .bucket_capacity(3),
    )
    .expect("child: set_pattern");
    acks.line("applied");
    // Wait to be killed.
    loop {
        std::thread::sleep(Duration::from_secs(1));
    }
}

/// Whether the catalog holds a policy whose migration is unfinished (read from the store,
/// before the database's open resumes it).
fn migration_unfinished(dir: &Path) -> bool {
    let store = Store::open(dir, StoreOptions::default()).unwrap();
    let Some(catalog) = store.keyspace_id("catalog") else {
        return false;
    };
    let records: Vec<Vec<u8>> = store
        .snapshot()
        .iter(catalog)
        .unwrap()
        .map(|entry| entry.map(|(key, value)| (key.to_vec(), value.to_vec())))
        .collect::<Result<Vec<_>, _>>()
        .unwrap()
        .into_iter()
        .filter(|(key, _)| key.starts_with(b"pattern:"))
        .map(|(_, value)| value)
        .collect();
    records.iter().any(|record| {
        let record = Document::from_reader(&mut record.as_slice()).expect("a policy record");
        record
            .get_document("progress")
            .ok()
            .and_then(|progress| progress.get_str("state").ok())
            != Some("active")
    })
}

fn migrate_verify(db: &Database, iteration: u32) -> u64 {
    let sales = db.collection::<Document>("sales");
    let documents: Vec<Document> = sales
        .find(doc! {})
        .sort(doc! { "_id": 1 })
        .run()
        .unwrap()
        .map(Result::unwrap)
        .collect();
    // The seed is one insert_many: all of it or nothing.
    if !documents.is_empty() {
        let expected: Vec<Document> = (0..MIGRATED_DOCUMENTS).map(migrated_document).collect();
        assert!(
            documents == expected,
            "iteration {iteration}: the migrated documents differ from the inserted ones"
        );
    }
    // Finish what the kill interrupted (a no-op when open already did), and a write after.
    if db.patterns().is_empty() && !documents.is_empty() {
        db.set_pattern(
            Pattern::outlier("sales", "tags")
                .threshold(5)
                .bucket_capacity(3),
        )
        .unwrap();
    }
    db.resume_patterns().unwrap();
    if !documents.is_empty() {
        sales
            .update_one(doc! { "_id": 12 }, doc! { "$push": { "tags": 12 } })
            .run()
            .unwrap();
        let expanded = sales.find_one(doc! { "_id": 12 }).run().unwrap().unwrap();
        let tags: Vec<Bson> = (0..=12).map(Bson::Int32).collect();
        assert_eq!(expanded.get_array("tags").unwrap(), &tags);
        assert_eq!(
            sales
                .find_one(doc! { "_id": 12 })
                .stored(true)
                .run()
                .unwrap()
                .unwrap()["has_extras"],
            Bson::Boolean(true)
        );
    }
    documents.len() as u64
}

// ---------------------------------------------------------------------------------------
// The loop.

fn child(dir: &Path, mode: &str) -> ! {
    let db = Database::open(dir).expect("child: open");
    match mode {
        "push" => push_child(&db),
        "subset" => subset_child(&db),
        "migrate" => migrate_child(&db),
        other => panic!("unknown mode {other}"),
    }
}

/// Runs one child in `dir`, kills it after `delay` (counted from its line `start_on`, or
/// from the spawn), and returns the lines it printed.
fn run_child(
    dir: &Path,
    mode: &str,
    start_on: Option<&str>,
    delay: Duration,
    iteration: u32,
) -> Vec<String> {
    let mut child = Child::spawn(CHILD_ENV, dir, &[(MODE_ENV, mode)]);
    let context = format!("{mode} iteration {iteration}");
    if let Some(start_on) = start_on {
        child.wait_for(start_on, &context);
    }
    child.sleep_alive(delay, &context);
    child.kill()
}

fn assert_clean(db: &Database, mode: &str, iteration: u32) {
    let violations = db.verify_patterns().unwrap();
    assert!(
        violations.is_empty(),
        "{mode} iteration {iteration}: {:?}",
        violations
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
    );
}

fn main() {
    if let Some(dir) = child_directory(CHILD_ENV) {
        let mode = std::env::var(MODE_ENV).expect("a mode");
        child(&dir, &mode);
    }
    let iterations = iterations(8);
    let mut random = Random::from_clock();
    let started = Instant::now();

    for mode in ["push", "subset"] {
        let dir = tempfile::tempdir().expect("temp dir");
        let mut last_acked: Option<i64> = None;
        let mut acks = 0;
        let mut elements = 0;
        for iteration in 0..iterations {
            // Mostly mid-write; every fourth kill may land in open or setup.
            let start_on = (iteration % 4 != 3).then_some("ready");
            let delay = Duration::from_millis(random.below(300));
            let lines = run_child(dir.path(), mode, start_on, delay, iteration);
            acks += lines.iter().filter(|line| line.starts_with("ack ")).count();
            if let Some(acked) = last_ack::<i64>(&lines) {
                last_acked = Some(last_acked.map_or(acked, |known: i64| known.max(acked)));
            }
            let db = Database::open(dir.path()).unwrap();
            assert_clean(&db, mode, iteration);
            // A resumed child continues from what is stored (and may redo the op that was
            // in flight), so the next acks are checked from there.
            if mode == "push" {
                elements = push_verify(&db, last_acked, iteration);
                last_acked = (elements as i64).checked_sub(1);
            } else {
                last_acked = subset_verify(&db, last_acked, iteration);
                elements = db
                    .collection::<Document>("products")
                    .array_len(1, "reviews")
                    .unwrap()
                    .unwrap_or(0);
            }
        }
        println!(
            "pattern crash loop ({mode}): {iterations} kills, {acks} acknowledged writes verified, {elements} elements at the end"
        );
    }

    // Each migration iteration seeds a fresh 3,000-document collection: a quarter as many.
    let migrations = iterations.div_ceil(4);
    let mut interrupted = 0;
    let mut documents = 0;
    for iteration in 0..migrations {
        let dir = tempfile::tempdir().expect("temp dir");
        let delay = Duration::from_millis(random.below(400));
        let lines = run_child(dir.path(), "migrate", Some("seeded"), delay, iteration);
        if migration_unfinished(dir.path()) {
            interrupted += 1;
        }
        let db = Database::open(dir.path()).unwrap();
        assert!(
            !lines.iter().any(|line| line == "applied") || db.patterns().len() == 1,
            "migrate iteration {iteration}: an applied policy is gone"
        );
        documents = migrate_verify(&db, iteration);
        assert_clean(&db, "migrate", iteration);
        assert_eq!(db.patterns().len(), 1);
    }
    println!(
        "pattern crash loop (migrate): {migrations} kills, {interrupted} mid-migration, resumed at open; {documents} documents checked per iteration; {:.1}s in all",
        started.elapsed().as_secs_f64()
    );
}
