//! What opening a database found, as the facade shows it: a torn tail is dropped and reported
//! (`Database::recovery_report`, and in `verify`), damage inside the log refuses the open and
//! changes nothing, and `Database::open_read_only` reads without writing a byte.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use spillway::bson::Document;
use spillway::{Database, DatabaseOptions, ErrorKind, doc};

fn options() -> DatabaseOptions {
    DatabaseOptions::default().segment_size(64 * 1024)
}

/// A database with 20 documents, closed; returns its only segment file and where its log ends.
fn build(dir: &Path) -> (PathBuf, usize) {
    let db = Database::open_with(dir, &options()).unwrap();
    let books = db.collection::<Document>("books");
    for id in 0..20 {
        books
            .insert_one(doc! { "_id": id, "title": format!("book {id}") })
            .run()
            .unwrap();
    }
    let stats = db.stats().unwrap();
    assert_eq!(stats.segments, 1);
    drop(db);
    (
        dir.join("seg-00000001.spw"),
        32 + stats.written_bytes as usize,
    )
}

fn files(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|entry| {
            let entry = entry.unwrap();
            let name = entry.file_name().into_string().unwrap();
            (name, std::fs::read(entry.path()).unwrap())
        })
        .collect()
}

fn count(db: &Database) -> u64 {
    db.collection::<Document>("books")
        .count_documents(doc! {})
        .run()
        .unwrap()
}

#[test]
fn a_torn_tail_is_dropped_and_reported_by_the_database_and_verify() {
    let dir = tempfile::tempdir().unwrap();
    let (segment, end) = build(dir.path());
    let mut bytes = std::fs::read(&segment).unwrap();
    bytes[end..end + 24].fill(0x5A);
    std::fs::write(&segment, &bytes).unwrap();

    let db = Database::open_with(dir.path(), &options()).unwrap();
    let torn = db
        .recovery_report()
        .torn_tail
        .clone()
        .expect("torn tail reported");
    assert_eq!(torn.path, segment);
    assert_eq!((torn.offset as usize, torn.bytes_dropped), (end, 24));
    assert_eq!(count(&db), 20);
    let report = db.verify().unwrap();
    assert!(report.is_clean());
    assert_eq!(report.torn_tail, Some(torn));
    drop(db);
    // Zeroed for good: the next open has nothing to report.
    let db = Database::open_with(dir.path(), &options()).unwrap();
    assert_eq!(db.recovery_report().torn_tail, None);
    assert_eq!(db.verify().unwrap().torn_tail, None);
}

#[test]
fn damage_inside_the_log_refuses_the_open_and_changes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let (segment, end) = build(dir.path());
    let mut bytes = std::fs::read(&segment).unwrap();
    // Inside the frame of one insert, well before the end of the log.
    bytes[end / 2] ^= 0x01;
    std::fs::write(&segment, &bytes).unwrap();
    let before = files(dir.path());
    for read_only in [false, true] {
        let error = if read_only {
            Database::open_read_only(dir.path()).unwrap_err()
        } else {
            Database::open_with(dir.path(), &options()).unwrap_err()
        };
        assert!(
            matches!(error.kind(), ErrorKind::Corruption { .. }),
            "{error}"
        );
        let message = error.to_string();
        assert!(
            message.contains(&segment.display().to_string())
                && message.contains("intact later frame(s) follow")
                && message.contains("run repair")
                && message.starts_with("corruption in ")
                && message.matches("corruption").count() == 1,
            "{message}"
        );
        assert!(
            files(dir.path()) == before,
            "the refused open changed files"
        );
    }
    // Repair salvages the commits after the damage: every insert but the damaged one.
    let report = Database::repair(dir.path(), &options()).unwrap();
    assert!(!report.damage.is_empty());
    let db = Database::open_with(dir.path(), &options()).unwrap();
    assert_eq!(count(&db), 19);
}

#[test]
fn open_read_only_reads_and_refuses_every_write_without_touching_a_file() {
    let dir = tempfile::tempdir().unwrap();
    build(dir.path());
    std::fs::remove_file(dir.path().join("LOCK")).unwrap();
    let before = files(dir.path());
    let db = Database::open_read_only(dir.path()).unwrap();
    assert!(db.is_read_only());
    assert_eq!(count(&db), 20);
    let books = db.collection::<Document>("books");
    let book = books.find_one(doc! { "_id": 7 }).run().unwrap().unwrap();
    assert_eq!(book.get_str("title").unwrap(), "book 7");
    assert!(db.verify().unwrap().is_clean());
    let refused = [
        books.insert_one(doc! { "_id": 100 }).run().map(|_| ()),
        books
            .update_one(doc! { "_id": 1 }, doc! { "$set": { "x": 1 } })
            .run()
            .map(|_| ()),
        books.delete_many(doc! {}).run().map(|_| ()),
        db.create_collection("other").run(),
        db.checkpoint(),
        db.compact().map(|_| ()),
    ];
    for result in refused {
        let error = result.unwrap_err();
        assert!(
            error.to_string().contains("was opened read-only"),
            "{error}"
        );
    }
    // A second reader may share it; a writer may not.
    let other = Database::open_read_only(dir.path()).unwrap();
    assert_eq!(count(&other), 20);
    let writer = Database::open_with(dir.path(), &options()).unwrap_err();
    assert!(writer.to_string().contains("locked"), "{writer}");
    drop((db, other));
    assert!(
        files(dir.path()) == before,
        "a read-only open changed files"
    );
}
