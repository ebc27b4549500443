//! `spillway repair` end to end: a database whose only (active) log segment is gone, and one
//! whose collection record is damaged, are repaired by the binary; the report says what was
//! damaged, lost, rebuilt and moved aside; `verify` passes afterwards and a second repair
//! finds nothing to do.

use std::path::Path;

use spillway::bson::Document;
use spillway::{Database, IndexModel, doc};

use crate::common;

use common::{spillway, stdout};

/// `db` with 40 books (an index on `tags`), compacted so that they sit in a compacted
/// segment, and a checkpoint.
fn build(directory: &Path) {
    let database = Database::open(directory.join("db")).unwrap();
    let books = database.collection::<Document>("books");
    books
        .create_index(IndexModel::builder().keys(doc! { "tags": 1 }).build())
        .run()
        .unwrap();
    for id in 0..40 {
        books
            .insert_one(
                doc! { "_id": id, "title": format!("book {id}"), "tags": ["a", format!("t{id}")] },
            )
            .run()
            .unwrap();
    }
    database.compact().unwrap();
    database.checkpoint().unwrap();
}

fn count(directory: &Path) -> u64 {
    let database = Database::open(directory.join("db")).unwrap();
    database
        .collection::<Document>("books")
        .count_documents(doc! {})
        .run()
        .unwrap()
}

fn assert_repaired_then_clean(directory: &Path) {
    let output = spillway(&["verify", "db"], directory);
    assert!(
        output.status.success(),
        "{}{}",
        stdout(&output),
        common::stderr(&output)
    );
    let output = spillway(&["repair", "db"], directory);
    assert!(output.status.success());
    assert!(
        stdout(&output).contains("nothing to repair"),
        "{}",
        stdout(&output)
    );
}

#[test]
fn repair_starts_a_fresh_active_segment_when_it_is_gone_with_the_manifest() {
    let directory = tempfile::tempdir().unwrap();
    build(directory.path());
    // The active segment: the log segment (kind byte 1) with the highest id.
    let mut logs: Vec<_> = std::fs::read_dir(directory.path().join("db"))
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| {
            path.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("seg-")
                && std::fs::read(path).unwrap()[10] == 1
        })
        .collect();
    logs.sort();
    let active = logs.pop().unwrap();
    let active_bytes = std::fs::read(&active).unwrap();
    let books_in_active = (0..40)
        .filter(|id| {
            let title = format!("book {id}\0");
            active_bytes
                .windows(title.len())
                .any(|w| w == title.as_bytes())
        })
        .count() as u64;
    std::fs::remove_file(&active).unwrap();
    std::fs::remove_file(directory.path().join("db/MANIFEST")).unwrap();

    let output = spillway(&["repair", "db"], directory.path());
    let text = stdout(&output);
    assert!(
        output.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(text.contains("damaged: "), "{text}");
    assert!(text.contains("the manifest is missing"), "{text}");
    assert!(text.contains("active log segment"), "{text}");
    assert!(
        text.contains("rebuilt: a fresh active log segment (the old one was missing)"),
        "{text}"
    );
    if books_in_active > 0 {
        assert!(
            text.contains(&format!(
                "lost: {books_in_active} document(s) of collection books"
            )),
            "{text}"
        );
    }
    assert!(text.contains("moved aside: "), "{text}");
    assert_repaired_then_clean(directory.path());
    assert_eq!(count(directory.path()), 40 - books_in_active);
}

#[test]
fn repair_rebuilds_a_collection_whose_catalog_record_is_damaged() {
    let directory = tempfile::tempdir().unwrap();
    build(directory.path());
    // Damage every stored version of the record's `keyspace` field.
    let needle = b"\x02keyspace\x00";
    for entry in std::fs::read_dir(directory.path().join("db")).unwrap() {
        let path = entry.unwrap().path();
        if !path
            .file_name()
            .unwrap()
            .to_string_lossy()
            .starts_with("seg-")
        {
            continue;
        }
        let mut bytes = std::fs::read(&path).unwrap();
        let mut at = 0;
        while let Some(found) = bytes[at..].windows(needle.len()).position(|w| w == needle) {
            let value = at + found + needle.len() + 4;
            if bytes[value..].starts_with(b"docs.") {
                bytes[value + 1] ^= 0x01;
            }
            at = value;
        }
        std::fs::write(&path, bytes).unwrap();
    }
    let output = spillway(&["verify", "db"], directory.path());
    assert!(!output.status.success());

    let output = spillway(
        &["repair", "db", "--report", "report.txt"],
        directory.path(),
    );
    let text = stdout(&output);
    assert!(
        output.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert_eq!(
        std::fs::read_to_string(directory.path().join("report.txt")).unwrap(),
        text
    );
    assert!(text.contains("lost: catalog record coll:books"), "{text}");
    assert!(
        text.contains("rebuilt: collection books (40 document(s)) from keyspace docs.1.books"),
        "{text}"
    );
    assert!(
        text.contains("rebuilt: index books.tags_1 from the surviving documents"),
        "{text}"
    );
    assert!(!text.contains("lost: 1"), "{text}");
    assert!(text.contains("moved aside: MANIFEST, "), "{text}");
    assert_repaired_then_clean(directory.path());
    assert_eq!(count(directory.path()), 40);
}

/// `db` with 30 books (version 1) at a checkpoint, then one commit that updates all of them
/// to version 2 ("second edition") and deletes book 30, then an intact later commit inserting
/// book 31. Returns the path of the log segment holding those two commits.
fn build_with_a_commit_to_drop(directory: &Path) -> std::path::PathBuf {
    let database = Database::open(directory.join("db")).unwrap();
    let books = database.collection::<Document>("books");
    for id in 0..31 {
        books
            .insert_one(doc! { "_id": id, "edition": "first edition" })
            .run()
            .unwrap();
    }
    database.checkpoint().unwrap();
    database
        .transaction(|tx| {
            books
                .update_many(
                    doc! { "_id": { "$lt": 30 } },
                    doc! { "$set": { "edition": "second edition" } },
                )
                .session(&mut *tx)
                .run()?;
            books
                .delete_one(doc! { "_id": 30 })
                .session(&mut *tx)
                .run()?;
            Ok(())
        })
        .unwrap();
    books
        .insert_one(doc! { "_id": 31, "edition": "first edition" })
        .run()
        .unwrap();
    drop(database);
    std::fs::read_dir(directory.join("db"))
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .find(|path| {
            path.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("seg-")
                && std::fs::read(path)
                    .unwrap()
                    .windows(14)
                    .any(|w| w == b"second edition")
        })
        .unwrap()
}

#[test]
fn repair_names_the_documents_a_dropped_commit_rolled_back() {
    let directory = tempfile::tempdir().unwrap();
    let segment = build_with_a_commit_to_drop(directory.path());
    let mut bytes = std::fs::read(&segment).unwrap();
    let at = bytes
        .windows(14)
        .position(|w| w == b"second edition")
        .unwrap();
    bytes[at] = b'S';
    std::fs::write(&segment, bytes).unwrap();

    let output = spillway(&["repair", "db"], directory.path());
    let text = stdout(&output);
    assert!(
        output.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(text.contains("dropped 1 commit(s)"), "{text}");
    assert!(
        text.contains(
            "lost 31 value(s): 0 whose bytes were damaged or gone, 31 written by dropped commits"
        ),
        "{text}"
    );
    for id in 0..30 {
        assert!(
            text.contains(&format!(
                "rolled back: books _id {id}: its newest version was lost; an older version is visible"
            )),
            "{id}: {text}"
        );
    }
    assert!(
        text.contains("undeleted: books _id 30: its delete was lost; it is visible again"),
        "{text}"
    );
    assert!(!text.contains("books _id 31"), "{text}");
    assert!(
        text.contains(
            "30 document(s) rolled back to an older version, 0 vanished, 1 deleted one(s) back"
        ),
        "{text}"
    );
    // What the report says is what the database holds.
    let database = Database::open(directory.path().join("db")).unwrap();
    let books = database.collection::<Document>("books");
    assert_eq!(
        books
            .count_documents(doc! { "edition": "first edition" })
            .run()
            .unwrap(),
        32
    );
    drop(books);
    drop(database);
    assert_repaired_then_clean(directory.path());
}

/// `db` with an outlier policy (threshold 3, buckets of 2) over 40 books of 10 tags each,
/// each rewritten in small segments, then compacted so that mains and buckets sit in
/// compacted segments, and a checkpoint.
fn build_with_an_outlier_policy(directory: &Path) {
    let options = spillway::DatabaseOptions::default().segment_size(16 * 1024);
    let database = Database::open_with(directory.join("db"), &options).unwrap();
    database.create_collection("books").run().unwrap();
    database
        .set_pattern(
            spillway::Pattern::outlier("books", "tags")
                .threshold(3)
                .bucket_capacity(2)
                .overflow_collection("extra_books")
                .link_field("book_id"),
        )
        .unwrap();
    let books = database.collection::<Document>("books");
    for id in 0..40 {
        let tags: Vec<i32> = (0..10).collect();
        books
            .insert_one(doc! { "_id": id, "tags": tags })
            .run()
            .unwrap();
    }
    for round in 0..3 {
        books
            .update_many(doc! {}, doc! { "$set": { "round": round } })
            .run()
            .unwrap();
    }
    database.compact().unwrap();
    database.checkpoint().unwrap();
}

/// The compacted segments of `db`, largest first.
fn compacted_segments(directory: &Path) -> Vec<std::path::PathBuf> {
    let mut segments: Vec<_> = std::fs::read_dir(directory.join("db"))
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| {
            path.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("seg-")
                && std::fs::read(path).unwrap()[10] == 2
        })
        .collect();
    segments.sort_by_key(|path| std::cmp::Reverse(std::fs::metadata(path).unwrap().len()));
    segments
}

#[test]
fn after_a_truncated_compacted_segment_repair_leaves_the_outlier_layout_whole() {
    for eighths in [2, 4, 6] {
        let directory = tempfile::tempdir().unwrap();
        build_with_an_outlier_policy(directory.path());
        let segments = compacted_segments(directory.path());
        assert!(!segments.is_empty());
        let segment = &segments[0];
        let bytes = std::fs::read(segment).unwrap();
        std::fs::write(segment, &bytes[..bytes.len() * eighths / 8]).unwrap();

        let output = spillway(&["repair", "db"], directory.path());
        let text = stdout(&output);
        assert!(
            output.status.success(),
            "cut at {eighths}/8: {text}{}",
            common::stderr(&output)
        );
        assert!(!text.contains("not repaired"), "cut at {eighths}/8: {text}");
        // The shorter cuts take books and buckets of other books; the longest takes only the
        // last buckets of two books, which leaves a valid layout.
        if eighths < 6 {
            assert!(
                text.contains("resynced: books _id ") || text.contains("removed: extra_books _id "),
                "cut at {eighths}/8: {text}"
            );
        }
        let verify = spillway(&["verify", "db"], directory.path());
        assert!(
            verify.status.success(),
            "cut at {eighths}/8: {text}\n{}",
            stdout(&verify)
        );
        assert_repaired_then_clean(directory.path());
        // Every logical book that survives reads without error.
        let database = Database::open(directory.path().join("db")).unwrap();
        let books = database.collection::<Document>("books");
        let survivors = books.find(doc! {}).run().unwrap().count();
        assert!(survivors <= 40, "cut at {eighths}/8");
    }
}

#[test]
fn repair_of_intact_files_still_restores_a_policy_whose_bucket_is_gone() {
    let directory = tempfile::tempdir().unwrap();
    build_with_an_outlier_policy(directory.path());
    // Delete one bucket behind the facade's back: every file stays intact.
    let store = spillway_store::Store::open(
        directory.path().join("db"),
        spillway_store::StoreOptions::default(),
    )
    .unwrap();
    let (_, buckets) = store
        .keyspaces()
        .into_iter()
        .find(|(name, _)| name.starts_with("docs.") && name.ends_with(".extra_books"))
        .unwrap();
    let key = {
        let snapshot = store.snapshot();
        let (key, _) = snapshot.iter(buckets).unwrap().next().unwrap().unwrap();
        key.to_vec()
    };
    let mut batch = spillway_store::WriteBatch::new();
    batch.delete(buckets, &key);
    store.commit(batch).unwrap();
    drop(store);
    let verify = spillway(&["verify", "db"], directory.path());
    assert!(!verify.status.success(), "{}", stdout(&verify));

    let output = spillway(&["repair", "db"], directory.path());
    let text = stdout(&output);
    assert!(output.status.success(), "{text}{}", common::stderr(&output));
    assert!(!text.contains("nothing to repair"), "{text}");
    assert!(text.contains("resynced: books _id "), "{text}");
    assert_repaired_then_clean(directory.path());
}
