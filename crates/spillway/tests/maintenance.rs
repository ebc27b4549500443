//! `Database::verify`, `stats`, `compact` and `repair`: healthy databases verify clean, stats
//! count what was written, compaction keeps every document, and repair salvages a database
//! with a damaged document and rebuilds the index that pointed at it.

use spillway::bson::{Bson, Document};
use spillway::{Database, DatabaseOptions, IndexModel, IndexOptions, doc};

fn books(database: &Database) -> spillway::Collection<Document> {
    database.collection::<Document>("books")
}

fn fill(database: &Database) {
    let books = books(database);
    books
        .create_index(IndexModel::builder().keys(doc! { "tags": 1 }).build())
        .run()
        .unwrap();
    books
        .create_index(
            IndexModel::builder()
                .keys(doc! { "title": 1 })
                .options(IndexOptions::builder().unique(true).build())
                .build(),
        )
        .run()
        .unwrap();
    for id in 0..20 {
        books
            .insert_one(
                doc! { "_id": id, "title": format!("book {id}"), "tags": ["a", format!("t{id}")] },
            )
            .run()
            .unwrap();
    }
    books
        .insert_one(
            doc! { "_id": 100, "title": "a long one", "tags": [], "text": "x".repeat(5000) },
        )
        .run()
        .unwrap();
}

#[test]
fn a_healthy_database_verifies_clean() {
    let database = Database::open_in_memory().unwrap();
    fill(&database);
    let report = database.verify().unwrap();
    assert!(report.is_clean(), "{report:?}");
    assert_eq!(report.collections_checked, 1);
    assert_eq!(report.documents_checked, 21);
    // tags: 2 entries for each of 20 books, 1 (undefined) for the empty array; title: 21.
    assert_eq!(report.index_entries_checked, 41 + 21);
    assert!(report.frames_checked > 0);
}

#[test]
fn stats_count_documents_bytes_and_index_entries() {
    let database = Database::open_in_memory().unwrap();
    fill(&database);
    database
        .collection::<Document>("empty")
        .drop()
        .run()
        .unwrap();
    database.create_collection("empty").run().unwrap();
    let stats = database.stats().unwrap();
    let names: Vec<&str> = stats.collections.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, ["books", "empty"]);
    let books = &stats.collections[0];
    assert_eq!(books.documents, 21);
    assert_eq!(
        books.largest_documents.len(),
        spillway::LARGEST_DOCUMENTS_LISTED
    );
    assert_eq!(books.largest_documents[0].id, Bson::Int32(100));
    assert!(books.largest_documents[0].bytes > 5000);
    assert!(
        books
            .largest_documents
            .windows(2)
            .all(|pair| pair[0].bytes >= pair[1].bytes)
    );
    assert!(books.document_bytes > 5000);
    let entries: Vec<(&str, u64)> = books
        .indexes
        .iter()
        .map(|index| (index.name.as_str(), index.entries))
        .collect();
    assert_eq!(entries, [("tags_1", 41), ("title_1", 21)]);
    assert_eq!(stats.collections[1].documents, 0);
    assert!(stats.live_bytes > books.document_bytes);
    assert_eq!(stats.written_bytes, stats.live_bytes + stats.dead_bytes);
}

#[test]
fn compaction_frees_dead_bytes_and_keeps_every_document() {
    let directory = tempfile::tempdir().unwrap();
    let options = DatabaseOptions::default().durability(spillway::Durability::OsBuffered);
    let database = Database::open_with(directory.path(), &options).unwrap();
    fill(&database);
    let books = books(&database);
    for round in 0..20 {
        books
            .update_many(doc! {}, doc! { "$set": { "round": round } })
            .run()
            .unwrap();
    }
    let before = database.stats().unwrap();
    let report = database.compact().unwrap();
    let after = database.stats().unwrap();
    assert!(!report.segments_compacted.is_empty(), "{report:?}");
    assert!(after.dead_bytes < before.dead_bytes, "{before:?} {after:?}");
    assert_eq!(
        books.count_documents(doc! { "round": 19 }).run().unwrap(),
        21
    );
    assert!(database.verify().unwrap().is_clean());
}

/// Flips one byte (the sixth) of the first occurrence of `marker` in any segment file of
/// `directory`.
fn damage_segment_bytes(directory: &std::path::Path, marker: &[u8]) {
    for entry in std::fs::read_dir(directory).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|extension| extension != "spw") {
            continue;
        }
        let mut bytes = std::fs::read(&path).unwrap();
        if let Some(position) = bytes.windows(marker.len()).position(|w| w == marker) {
            bytes[position + 5] ^= 0xff;
            std::fs::write(&path, bytes).unwrap();
            return;
        }
    }
    panic!("marker not found in any segment");
}

#[test]
fn repair_drops_a_damaged_document_and_rebuilds_its_indexes() {
    let directory = tempfile::tempdir().unwrap();
    {
        let database = Database::open(directory.path()).unwrap();
        fill(&database);
        books(&database)
            .insert_one(doc! { "_id": 7000, "title": "DAMAGED-TITLE-MARKER", "tags": ["z"] })
            .run()
            .unwrap();
        // With a checkpoint the damaged value is found on its own, not as part of a frame
        // replay, so only that document is lost and its index entries are left behind.
        database.checkpoint().unwrap();
    }
    // The title as BSON stores it in the document (length prefix 21, then the bytes), not as
    // the title index's key encodes it: the damage must hit the document's value.
    let mut stored_title = vec![21, 0, 0, 0];
    stored_title.extend_from_slice(b"DAMAGED-TITLE-MARKER");
    damage_segment_bytes(directory.path(), &stored_title);

    let report = Database::repair(directory.path(), &DatabaseOptions::default()).unwrap();
    assert!(report.checkpoint_used, "{report:?}");
    assert_eq!(report.values_dropped, 1, "{report:?}");
    assert!(!report.damage.is_empty());
    assert_eq!(report.indexes_rebuilt, ["books.tags_1", "books.title_1"]);
    assert!(report.indexes_dropped.is_empty());
    assert!(report.backup_dir.unwrap().starts_with(directory.path()));

    let database = Database::open(directory.path()).unwrap();
    let verify = database.verify().unwrap();
    assert!(verify.is_clean(), "{verify:?}");
    let books = books(&database);
    assert_eq!(books.count_documents(doc! {}).run().unwrap(), 21);
    assert_eq!(
        books.count_documents(doc! { "tags": "z" }).run().unwrap(),
        0
    );
    assert_eq!(
        books.count_documents(doc! { "tags": "a" }).run().unwrap(),
        20
    );
}
