//! `Database::verify_patterns` on side collections damaged behind the engine's back.
//!
//! A direct write to a side collection through the facade is resynced (the engine brings
//! the main document back in step), so damage has to bypass the pattern layer. The honest
//! path used here: set the policy records aside in the store's catalog keyspace (opening the
//! store with spillway-store itself), open the database without policies and damage the
//! collections through the ordinary API (so that documents and indexes stay consistent
//! with each other), then put the policy records back and reopen. The exact report is an
//! insta snapshot of the `Violation` Display lines, ObjectIds redacted.

use std::path::Path;

use spillway::bson::{Bson, Document, doc};
use spillway::{Database, Pattern};
use spillway_store::{Store, StoreOptions, WriteBatch};

const CATALOG: &str = "catalog";
const POLICY_PREFIX: &[u8] = b"pattern:";

/// Runs `damage` on the database at `dir` with its policy records set aside, so that its
/// writes reach the side collections as they are, then restores the records.
fn behind_the_engine(dir: &Path, damage: impl FnOnce(&Database)) {
    let records = {
        let store = Store::open(dir, StoreOptions::default()).unwrap();
        let catalog = store.keyspace_id(CATALOG).expect("a catalog keyspace");
        let records: Vec<(Vec<u8>, Vec<u8>)> = store
            .snapshot()
            .iter(catalog)
            .unwrap()
            .map(|entry| entry.map(|(key, value)| (key.to_vec(), value.to_vec())))
            .collect::<Result<Vec<_>, _>>()
            .unwrap()
            .into_iter()
            .filter(|(key, _)| key.starts_with(POLICY_PREFIX))
            .collect();
        assert!(!records.is_empty(), "the database has policies");
        let mut batch = WriteBatch::new();
        for (key, _) in &records {
            batch.delete(catalog, key);
        }
        store.commit(batch).unwrap();
        records
    };
    {
        let db = Database::open(dir).unwrap();
        assert!(db.patterns().is_empty());
        damage(&db);
    }
    let store = Store::open(dir, StoreOptions::default()).unwrap();
    let catalog = store.keyspace_id(CATALOG).expect("a catalog keyspace");
    let mut batch = WriteBatch::new();
    for (key, value) in &records {
        batch.put(catalog, key, value);
    }
    store.commit(batch).unwrap();
}

/// The report's lines, each ObjectId's hex replaced by `[oid]`.
fn report(db: &Database) -> String {
    let mut lines = Vec::new();
    for violation in db.verify_patterns().unwrap() {
        let mut line = violation.to_string();
        while let Some(start) = line.find("ObjectId(\"") {
            let hex = start + "ObjectId(\"".len();
            line.replace_range(start..hex + 24 + 2, "[oid]");
        }
        lines.push(line);
    }
    lines.join("\n")
}

fn tags(range: std::ops::Range<i32>) -> Vec<Bson> {
    range.map(Bson::Int32).collect()
}

fn seeded(dir: &Path) {
    let db = Database::open(dir).unwrap();
    db.create_collection("books").run().unwrap();
    db.create_collection("products").run().unwrap();
    db.set_pattern(
        Pattern::outlier("books", "tags")
            .threshold(3)
            .bucket_capacity(2)
            .overflow_collection("extra_books")
            .link_field("book_id"),
    )
    .unwrap();
    db.set_pattern(
        Pattern::subset("products", "reviews")
            .keep(2)
            .sort_by(doc! { "k": -1 })
            .archive_collection("reviews")
            .link_field("product_id"),
    )
    .unwrap();
    let books = db.collection::<Document>("books");
    for id in 1..=6 {
        // 3 embedded, then buckets 0..=3 holding 2, 2, 2 and 1.
        books
            .insert_one(doc! { "_id": id, "tags": tags(0..10) })
            .run()
            .unwrap();
    }
    let products = db.collection::<Document>("products");
    for id in 1..=3 {
        let reviews: Vec<Document> = (0..5)
            .map(|k| doc! { "k": id * 10 + k, "t": "fine" })
            .collect();
        products
            .insert_one(doc! { "_id": id, "reviews": reviews })
            .run()
            .unwrap();
    }
    assert_eq!(db.verify_patterns().unwrap(), Vec::new());
}

#[test]
fn verify_reports_every_damaged_side_collection() {
    let dir = tempfile::tempdir().unwrap();
    seeded(dir.path());
    behind_the_engine(dir.path(), |db| {
        let extra = db.collection::<Document>("extra_books");
        let one = |filter: Document, update: Document| {
            let result = extra.update_one(filter, update).run().unwrap();
            assert_eq!(result.modified_count, 1);
        };
        // Book 1: a middle bucket is gone.
        let deleted = extra
            .delete_one(doc! { "book_id": 1, "bucket": 1 })
            .run()
            .unwrap();
        assert_eq!(deleted.deleted_count, 1);
        // Book 2: a bucket number is broken.
        one(
            doc! { "book_id": 2, "bucket": 2 },
            doc! { "$set": { "bucket": 7_i64 } },
        );
        // Book 3: a full bucket is overfilled.
        one(
            doc! { "book_id": 3, "bucket": 0 },
            doc! { "$push": { "tags_extra": 99 } },
        );
        // Book 4: the flag is gone while its buckets remain.
        let result = db
            .collection::<Document>("books")
            .update_one(doc! { "_id": 4 }, doc! { "$unset": { "has_extras": "" } })
            .run()
            .unwrap();
        assert_eq!(result.modified_count, 1);
        // Book 5: its last bucket is emptied.
        one(
            doc! { "book_id": 5, "bucket": 3 },
            doc! { "$set": { "tags_extra": [] } },
        );
        // An orphan bucket, and one without a link.
        extra
            .insert_one(doc! { "_id": "orphan", "book_id": 99, "bucket": 0_i64, "tags_extra": [1] })
            .run()
            .unwrap();
        extra
            .insert_one(doc! { "_id": "unlinked", "bucket": 0_i64, "tags_extra": [1] })
            .run()
            .unwrap();
        // Product 1: an embedded review is deleted from the archive, so the main subset is
        // stale. Product 2: an archived review's text changes, but not its embedded copy.
        let reviews = db.collection::<Document>("reviews");
        let deleted = reviews.delete_one(doc! { "k": 14 }).run().unwrap();
        assert_eq!(deleted.deleted_count, 1);
        let edited = reviews
            .update_one(doc! { "k": 23 }, doc! { "$set": { "t": "edited" } })
            .run()
            .unwrap();
        assert_eq!(edited.modified_count, 1);
    });
    let db = Database::open(dir.path()).unwrap();
    assert_eq!(db.patterns().len(), 2);
    insta::assert_snapshot!("verify_damaged_side_collections", report(&db));
}

#[test]
fn a_clean_layout_made_behind_the_engine_verifies_clean() {
    // The control: a round trip through `behind_the_engine` without damage changes nothing.
    let dir = tempfile::tempdir().unwrap();
    seeded(dir.path());
    behind_the_engine(dir.path(), |_| {});
    let db = Database::open(dir.path()).unwrap();
    assert_eq!(report(&db), "");
}

#[test]
fn verify_reports_a_side_index_that_misses_a_bucket() {
    // A stale side index is what made direct side writes look fine to `verify_patterns`: the
    // read paths (and the old checks) found the buckets through it, so a bucket it missed
    // did not exist for them.
    let dir = tempfile::tempdir().unwrap();
    seeded(dir.path());
    {
        let store = Store::open(dir.path(), StoreOptions::default()).unwrap();
        let (_, index) = store
            .keyspaces()
            .into_iter()
            .find(|(name, _)| {
                name.starts_with("index.") && name.ends_with(".extra_books.book_id_1_bucket_1")
            })
            .expect("the overflow collection's side index");
        let (key, _) = store
            .snapshot()
            .iter(index)
            .unwrap()
            .next()
            .expect("an index entry")
            .map(|(key, value)| (key.to_vec(), value.to_vec()))
            .unwrap();
        let mut batch = WriteBatch::new();
        batch.delete(index, &key);
        store.commit(batch).unwrap();
    }
    let db = Database::open(dir.path()).unwrap();
    let report = report(&db);
    assert!(
        report.contains("extra_books _id 1 (tags): the side index finds 3 side document(s) for this _id where 4 are stored"),
        "{report}"
    );
}
