//! Kill -9 loop through the facade (the `spillway-crash` harness): a child process (this binary, re-executed with
//! `SPILLWAY_DB_CRASH_CHILD` set) opens an on-disk `Database` with fsync-every-commit and runs
//! transaction after transaction across two collections with secondary indexes (unique and
//! multikey on each), printing `ack K` after each acknowledged one, with failed and aborted
//! transactions, checkpoints and compactions mixed in. The parent kills it with SIGKILL at a
//! random moment, reopens the database and checks that:
//!
//! - it holds exactly the effects of transactions `0..=L` (replayed on
//!   `spillway_doc::model::MemoryCollection`, the reference semantics), where `L` is the last
//!   acknowledged transaction or the one after it (in flight when killed): every acknowledged
//!   transaction is whole, the in-flight one is whole or absent, and nothing else is there;
//! - every index agrees with the documents: each indexed value looked up through its index
//!   (`explain` proves the `IXSCAN` and counts the entries examined) returns exactly what a
//!   collection scan filtered in Rust returns, and a full-range scan of each index examines
//!   exactly one entry per distinct (document, value) pair, so no entry is stale or missing.
//!
//! Then the next child continues on the same database.
//!
//! Iterations: `SPILLWAY_CRASH_ITERATIONS` (default 10). `cargo xtask crash --iterations N`
//! runs this loop and the store's in release mode.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::time::{Duration, Instant};

use spillway::bson::{Bson, Document};
use spillway::{
    Database, DatabaseOptions, Durability, ErrorKind, IndexModel, IndexOptions, Transaction, doc,
};
use spillway_crash::{Acks, Child, Random, ack_count, child_directory, iterations, last_ack};
use spillway_doc::model::{MemoryCollection, UpdateOptions};

const CHILD_ENV: &str = "SPILLWAY_DB_CRASH_CHILD";
const N_ACCOUNTS: i64 = 16;
/// Values of the accounts' multikey `tags` field.
const TAGS: &[&str] = &["t0", "t1", "t2", "t3", "t4", "t5", "t6"];
/// Values of the orders' multikey `items` field.
const ITEMS: &[&str] = &[
    "sku-0", "sku-1", "sku-2", "sku-3", "sku-4", "sku-5", "sku-6", "gift-0", "gift-1", "gift-2",
];
/// (collection, indexed field, unique) for every secondary index.
const INDEXES: &[(&str, &str, bool)] = &[
    ("accounts", "email", true),
    ("accounts", "tags", false),
    ("orders", "ref", true),
    ("orders", "items", false),
];

fn options() -> DatabaseOptions {
    // Small segments, so that segments fill, rotate and become compaction victims quickly.
    DatabaseOptions::default()
        .durability(Durability::SyncEveryCommit)
        .segment_size(16 * 1024)
}

/// One write of a transaction, applied alike to the database and to the model.
#[derive(Debug, Clone)]
enum Op {
    CreateIndex {
        collection: &'static str,
        field: &'static str,
        unique: bool,
    },
    Insert {
        collection: &'static str,
        document: Document,
    },
    Update {
        collection: &'static str,
        filter: Document,
        update: Document,
        multi: bool,
    },
    Delete {
        collection: &'static str,
        filter: Document,
        multi: bool,
    },
}

fn email(account: i64, version: u64) -> String {
    format!("user{account}.v{version}@example.com")
}

/// The writes of transaction `k`: deterministic, so that the parent can replay them.
fn operations(k: u64) -> Vec<Op> {
    let mut ops = Vec::new();
    let id = k as i64;
    let account = id % N_ACCOUNTS;
    if k == 0 {
        for &(collection, field, unique) in INDEXES {
            ops.push(Op::CreateIndex {
                collection,
                field,
                unique,
            });
        }
        for account in 0..N_ACCOUNTS {
            ops.push(Op::Insert {
                collection: "accounts",
                document: doc! {
                    "_id": account,
                    "email": email(account, 0),
                    "balance": 0_i64,
                    "tags": [],
                },
            });
        }
    }
    let amount = ((k * 37) % 100 + 1) as i64;
    let items: Vec<&str> = [ITEMS[(k % 7) as usize], ITEMS[((k / 7) % 7) as usize]]
        .into_iter()
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    ops.push(Op::Insert {
        collection: "orders",
        document: doc! {
            "_id": id,
            "ref": format!("order-{k}"),
            "account": account,
            "amount": amount,
            "items": items,
            "status": "new",
        },
    });
    ops.push(Op::Update {
        collection: "accounts",
        filter: doc! { "_id": account },
        update: doc! {
            "$inc": { "balance": amount, "n_orders": 1 },
            "$push": {
                "recent": { "$each": [id], "$slice": -5 },
                "tags": { "$each": [TAGS[(k % 7) as usize]], "$slice": -3 },
            },
        },
        multi: false,
    });
    if k % 13 == 6 {
        let other = (account + 5) % N_ACCOUNTS;
        ops.push(Op::Update {
            collection: "accounts",
            filter: doc! { "_id": other },
            update: doc! { "$set": { "email": email(other, k) } },
            multi: false,
        });
    }
    if k % 7 == 3 {
        ops.push(Op::Update {
            collection: "orders",
            filter: doc! { "account": account, "status": "new" },
            update: doc! {
                "$set": { "status": "shipped", "shipped_by": id },
                "$push": { "items": ITEMS[7 + (k % 3) as usize] },
            },
            multi: true,
        });
    }
    if k % 5 == 2 {
        ops.push(Op::Delete {
            collection: "orders",
            filter: doc! { "_id": id - 3 },
            multi: false,
        });
    }
    if k % 4 == 3 {
        // Keeps the orders to a sliding window, so that replaying the model stays cheap.
        ops.push(Op::Delete {
            collection: "orders",
            filter: doc! { "_id": { "$lte": id - 48 } },
            multi: true,
        });
    }
    ops
}

fn apply_to_database(db: &Database, op: &Op, tx: &mut Transaction) -> spillway::Result<()> {
    match op {
        Op::CreateIndex {
            collection,
            field,
            unique,
        } => {
            db.collection::<Document>(collection)
                .create_index(
                    IndexModel::builder()
                        .keys(doc! { *field: 1 })
                        .options(IndexOptions::builder().unique(*unique).build())
                        .build(),
                )
                .session(tx)
                .run()?;
        }
        Op::Insert {
            collection,
            document,
        } => {
            db.collection::<Document>(collection)
                .insert_one(document)
                .session(tx)
                .run()?;
        }
        Op::Update {
            collection,
            filter,
            update,
            multi,
        } => {
            let collection = db.collection::<Document>(collection);
            let action = if *multi {
                collection.update_many(filter.clone(), update.clone())
            } else {
                collection.update_one(filter.clone(), update.clone())
            };
            action.session(tx).run()?;
        }
        Op::Delete {
            collection,
            filter,
            multi,
        } => {
            let collection = db.collection::<Document>(collection);
            let action = if *multi {
                collection.delete_many(filter.clone())
            } else {
                collection.delete_one(filter.clone())
            };
            action.session(tx).run()?;
        }
    }
    Ok(())
}

/// The state after transactions `0..=last`, per the reference model.
#[derive(Debug, Clone)]
struct Model {
    last: Option<u64>,
    collections: BTreeMap<&'static str, MemoryCollection>,
}

impl Model {
    fn new() -> Model {
        Model {
            last: None,
            collections: BTreeMap::new(),
        }
    }

    fn apply(&mut self, k: u64) {
        assert_eq!(self.last.map_or(0, |last| last + 1), k, "model out of step");
        for op in operations(k) {
            match op {
                Op::CreateIndex { collection, .. } => {
                    self.collections.entry(collection).or_default();
                }
                Op::Insert {
                    collection,
                    document,
                } => {
                    self.collections
                        .entry(collection)
                        .or_default()
                        .insert_one(document)
                        .unwrap();
                }
                Op::Update {
                    collection,
                    filter,
                    update,
                    multi,
                } => {
                    self.collections
                        .entry(collection)
                        .or_default()
                        .update(&filter, &update, multi, &UpdateOptions::default())
                        .unwrap();
                }
                Op::Delete {
                    collection,
                    filter,
                    multi,
                } => {
                    self.collections
                        .entry(collection)
                        .or_default()
                        .delete(&filter, multi)
                        .unwrap();
                }
            }
        }
        self.last = Some(k);
    }

    fn advance_to(&mut self, last: Option<u64>) {
        let Some(last) = last else {
            assert!(self.last.is_none(), "the model cannot go back");
            return;
        };
        let mut next = self.last.map_or(0, |known| known + 1);
        while next <= last {
            self.apply(next);
            next += 1;
        }
    }

    /// The documents of `collection` in `_id` order (the facade's natural order).
    fn documents(&self, collection: &str) -> Vec<Document> {
        let mut documents = self
            .collections
            .get(collection)
            .map(|c| c.documents().to_vec())
            .unwrap_or_default();
        documents.sort_by_key(|document| document.get_i64("_id").unwrap());
        documents
    }
}

/// The last transaction in the database: every transaction inserts the order with its own
/// number as `_id`, and none deletes its own order.
fn last_transaction(db: &Database) -> Option<u64> {
    db.collection::<Document>("orders")
        .find_one(doc! {})
        .sort(doc! { "_id": -1 })
        .run()
        .expect("read the last order")
        .map(|order| order.get_i64("_id").expect("order _id") as u64)
}

/// A transaction that writes and then fails on a duplicate key of a unique index, and one
/// that writes and then aborts on purpose: neither may leave a trace.
fn failing_transactions(db: &Database, k: u64) {
    let id = k as i64;
    let duplicate = db.transaction(|tx| {
        db.collection::<Document>("accounts")
            .update_one(doc! { "_id": 0 }, doc! { "$inc": { "balance": 1_000_000 } })
            .session(tx)
            .run()?;
        let orders = db.collection::<Document>("orders");
        orders
            .insert_one(doc! { "_id": 1_000_000 + id, "ref": "unique-ok", "items": ["doomed"] })
            .session(tx)
            .run()?;
        orders
            .insert_one(doc! { "_id": 2_000_000 + id, "ref": format!("order-{}", k - 1) })
            .session(tx)
            .run()?;
        Ok(())
    });
    let error = duplicate.expect_err("a duplicate unique key was admitted");
    assert!(
        error.is_duplicate_key(),
        "expected a duplicate key: {error}"
    );
    let aborted = db.transaction(|tx| {
        db.collection::<Document>("orders")
            .delete_many(doc! {})
            .session(tx)
            .run()?;
        Err::<(), _>(Transaction::abort("changed my mind"))
    });
    let error = aborted.expect_err("an aborted transaction committed");
    assert!(
        matches!(error.kind(), ErrorKind::TransactionAborted { .. }),
        "{error}"
    );
}

fn child(dir: &Path) -> ! {
    let db = Database::open_with(dir, &options()).expect("child: open");
    let mut next = last_transaction(&db).map_or(0, |last| last + 1);
    let mut acks = Acks::new();
    loop {
        if next % 11 == 5 {
            failing_transactions(&db, next);
        }
        let ops = operations(next);
        db.transaction(|tx| {
            for op in &ops {
                apply_to_database(&db, op, tx)?;
            }
            Ok(())
        })
        .unwrap_or_else(|error| panic!("child: transaction {next} failed: {error}"));
        acks.ack(next);
        if next % 25 == 12 {
            db.checkpoint().expect("child: checkpoint");
        }
        if next % 40 == 20 {
            db.compact().expect("child: compact");
        }
        next += 1;
    }
}

fn all(db: &Database, collection: &str) -> Vec<Document> {
    db.collection::<Document>(collection)
        .find(doc! {})
        .run()
        .expect("collection scan")
        .collect::<Result<_, _>>()
        .expect("collection scan")
}

fn ids(documents: &[Document]) -> Vec<i64> {
    documents
        .iter()
        .map(|document| document.get_i64("_id").expect("_id"))
        .collect()
}

/// The values of `field` in `document`: the elements of an array (deduplicated), or the value.
fn values_of(document: &Document, field: &str) -> BTreeSet<String> {
    match document.get(field) {
        Some(Bson::Array(elements)) => elements
            .iter()
            .map(|element| element.as_str().expect("string element").to_string())
            .collect(),
        Some(Bson::String(value)) => BTreeSet::from([value.clone()]),
        other => panic!("unexpected {field}: {other:?}"),
    }
}

/// Runs `filter` on `collection`, checks that `explain` shows an `IXSCAN` of `index` that
/// examined `expected_keys` entries, and returns the `_id`s found.
fn through_index(
    db: &Database,
    collection: &str,
    index: &str,
    filter: &Document,
    expected_keys: u64,
    context: &str,
) -> Vec<i64> {
    let coll = db.collection::<Document>(collection);
    let explain = coll.find(filter.clone()).explain().expect("explain");
    let input = explain
        .winning_plan
        .get_document("inputStage")
        .unwrap_or_else(|_| panic!("{context}: {filter} did not use an index: {explain:?}"));
    assert_eq!(
        (input.get_str("stage").ok(), input.get_str("indexName").ok()),
        (Some("IXSCAN"), Some(index)),
        "{context}: {filter}: {explain:?}"
    );
    assert_eq!(
        explain.keys_examined, expected_keys,
        "{context}: {filter}: index entries examined (a stale or missing entry)"
    );
    let found: Vec<Document> = coll
        .find(filter.clone())
        .run()
        .expect("indexed find")
        .collect::<Result<_, _>>()
        .unwrap_or_else(|error| panic!("{context}: {filter}: {error}"));
    assert_eq!(
        explain.n_returned,
        found.len() as u64,
        "{context}: {filter}"
    );
    let mut found = ids(&found);
    found.sort_unstable();
    found
}

/// Checks every secondary index against a collection scan; returns the lookups made.
fn check_indexes(db: &Database, context: &str) -> u64 {
    let mut lookups = 0;
    for &(collection, field, unique) in INDEXES {
        let index = format!("{field}_1");
        let documents = all(db, collection);
        let mut by_value: BTreeMap<String, Vec<i64>> = BTreeMap::new();
        for document in &documents {
            for value in values_of(document, field) {
                by_value
                    .entry(value)
                    .or_default()
                    .push(document.get_i64("_id").unwrap());
            }
        }
        let candidates: BTreeSet<String> = if field == "tags" {
            TAGS.iter().map(ToString::to_string).collect()
        } else if field == "items" {
            ITEMS.iter().map(ToString::to_string).collect()
        } else {
            by_value.keys().cloned().collect()
        };
        for value in candidates.iter().chain([&"absent".to_string()]) {
            let expected = by_value.get(value).cloned().unwrap_or_default();
            if unique {
                assert!(expected.len() <= 1, "{context}: {field} {value} not unique");
            }
            let filter = doc! { field: value.as_str() };
            let found = through_index(
                db,
                collection,
                &index,
                &filter,
                expected.len() as u64,
                context,
            );
            assert_eq!(found, expected, "{context}: {collection} {filter}");
            lookups += 1;
        }
        // Every entry of the index, through one range scan over the strings.
        let filter = doc! { field: { "$gte": "" } };
        let n_entries: usize = by_value.values().map(Vec::len).sum();
        let mut expected: Vec<i64> = documents
            .iter()
            .filter(|document| !values_of(document, field).is_empty())
            .map(|document| document.get_i64("_id").unwrap())
            .collect();
        expected.sort_unstable();
        let found = through_index(db, collection, &index, &filter, n_entries as u64, context);
        assert_eq!(found, expected, "{context}: {collection} {filter}");
        lookups += 1;
    }
    lookups
}

struct Verified {
    last: Option<u64>,
    in_flight_visible: bool,
    index_lookups: u64,
}

/// Reopens the database and checks it against the model; `last_acknowledged` is the last
/// transaction the killed child acknowledged (or, without any, the last one verified before).
fn verify(
    dir: &Path,
    model: &mut Model,
    last_acknowledged: Option<u64>,
    iteration: u32,
) -> Verified {
    let context = format!("iteration {iteration}");
    let db = Database::open_with(dir, &options())
        .unwrap_or_else(|error| panic!("{context}: reopen failed: {error}"));
    let last = last_transaction(&db);
    let in_flight = last_acknowledged.map_or(0, |acknowledged| acknowledged + 1);
    assert!(
        last >= last_acknowledged,
        "{context}: acknowledged transaction {last_acknowledged:?} lost (the database ends at {last:?})"
    );
    assert!(
        last.is_none_or(|last| last <= in_flight),
        "{context}: transaction {last:?} is visible but only {last_acknowledged:?} was acknowledged"
    );
    model.advance_to(last_acknowledged);
    let in_flight_visible = last != last_acknowledged;
    let expected = if in_flight_visible {
        let mut with_in_flight = model.clone();
        with_in_flight.advance_to(last);
        with_in_flight
    } else {
        model.clone()
    };
    let collections = db.list_collection_names().run().expect("collection names");
    if last.is_none() {
        assert!(collections.is_empty(), "{context}: {collections:?} left");
    } else {
        assert_eq!(collections, ["accounts", "orders"], "{context}");
        for collection in ["accounts", "orders"] {
            let found = all(&db, collection);
            let wanted = expected.documents(collection);
            if found != wanted {
                let first_difference = found
                    .iter()
                    .zip(&wanted)
                    .find(|(found, wanted)| found != wanted);
                panic!(
                    "{context}: {collection} is not exactly transactions 0..={last:?}: {} documents, expected {}; first difference {first_difference:?}",
                    found.len(),
                    wanted.len()
                );
            }
            let names = db
                .collection::<Document>(collection)
                .list_index_names()
                .run()
                .expect("index names");
            let wanted_names: Vec<String> = std::iter::once("_id_".to_string())
                .chain(
                    INDEXES
                        .iter()
                        .filter(|(c, _, _)| *c == collection)
                        .map(|(_, field, _)| format!("{field}_1")),
                )
                .collect();
            assert_eq!(names, wanted_names, "{context}: {collection} indexes");
        }
    }
    let index_lookups = if last.is_some() {
        check_indexes(&db, &context)
    } else {
        0
    };
    Verified {
        last,
        in_flight_visible,
        index_lookups,
    }
}

fn main() {
    if let Some(dir) = child_directory(CHILD_ENV) {
        child(&dir);
    }
    let iterations = iterations(10);
    let dir = tempfile::tempdir().expect("temp dir");
    let mut random = Random::from_clock();
    let started = Instant::now();
    let mut model = Model::new();
    let mut last_verified: Option<u64> = None;
    let mut acknowledged_total = 0u64;
    let mut in_flight_visible = 0u32;
    let mut index_lookups = 0u64;
    let mut lock_refusals = 0u32;
    for iteration in 0..iterations {
        let mut child = Child::spawn(CHILD_ENV, dir.path(), &[]);
        // Kill at a random moment: during open, mid-transaction, mid-commit, mid-checkpoint
        // or mid-compaction.
        child.sleep_alive(
            Duration::from_millis(10 + random.below(300)),
            format_args!("iteration {iteration}"),
        );
        // The child holds the database open: a second process must be refused.
        if child.acks_seen() > 0 {
            let error = Database::open_with(dir.path(), &options())
                .expect_err("a second process opened the database");
            assert!(
                matches!(error.kind(), ErrorKind::Storage(_)),
                "iteration {iteration}: expected the lock error, got {error}"
            );
            lock_refusals += 1;
        }
        let lines = child.kill();
        let last_acknowledged: Option<u64> = last_ack(&lines);
        acknowledged_total += ack_count(&lines);
        let verified = verify(
            dir.path(),
            &mut model,
            last_acknowledged.or(last_verified),
            iteration,
        );
        last_verified = verified.last;
        in_flight_visible += u32::from(verified.in_flight_visible);
        index_lookups += verified.index_lookups;
    }
    println!(
        "database crash loop: {iterations} kills, {acknowledged_total} acknowledged transactions verified ({} transactions in the database, {in_flight_visible} in-flight transactions found committed, {index_lookups} index lookups checked against collection scans, {lock_refusals} second opens refused by the lock, {:.1}s)",
        last_verified.map_or(0, |last| last + 1),
        started.elapsed().as_secs_f64()
    );
}
