//! `insert_many` keeps what MongoDB's `insertMany` keeps: an ordered insert stops at the first
//! refused document and keeps the ones before it, an unordered insert keeps every valid one,
//! and the error says which positions failed and which `_id`s were inserted. Inside a
//! transaction the first failure aborts the transaction as a whole.

use spillway::bson::{Bson, Document};
use spillway::{Database, ErrorKind, IndexModel, IndexOptions, doc};

fn ids(db: &Database) -> Vec<Bson> {
    db.collection::<Document>("items")
        .find(doc! {})
        .run()
        .unwrap()
        .map(|document| document.unwrap().get("_id").cloned().unwrap())
        .collect()
}

fn seeded() -> Database {
    let db = Database::open_in_memory().unwrap();
    let items = db.collection::<Document>("items");
    items
        .insert_one(doc! { "_id": 1, "sku": "a" })
        .run()
        .unwrap();
    items
        .create_index(IndexModel {
            keys: doc! { "sku": 1 },
            options: Some(IndexOptions::builder().unique(true).build()),
        })
        .run()
        .unwrap();
    db
}

#[test]
fn ordered_insert_keeps_the_documents_before_the_failure() {
    let db = seeded();
    let items = db.collection::<Document>("items");
    let error = items
        .insert_many([
            doc! { "_id": 2, "sku": "b" },
            doc! { "_id": 3, "sku": "c" },
            doc! { "_id": 1, "sku": "d" },
            doc! { "_id": 4, "sku": "e" },
        ])
        .run()
        .unwrap_err();
    assert!(error.is_duplicate_key(), "{error}");
    assert_eq!(error.document_index(), Some(2));
    let inserted = error.inserted_ids().expect("an insert_many error");
    assert_eq!(inserted.len(), 2);
    assert_eq!(inserted[&0], Bson::Int32(2));
    assert_eq!(inserted[&1], Bson::Int32(3));
    assert!(error.later_failures().is_empty());
    assert_eq!(
        error.to_string(),
        "duplicate key in collection 'items', index '_id_': 1 (document 2 of the batch; \
         2 inserted: _id 2 (document 0), _id 3 (document 1))"
    );
    assert_eq!(
        ids(&db),
        [Bson::Int32(1), Bson::Int32(2), Bson::Int32(3)],
        "document 3 comes after the failure and is not inserted"
    );
}

#[test]
fn unordered_insert_keeps_every_valid_document_and_reports_each_failure() {
    let db = seeded();
    let items = db.collection::<Document>("items");
    let error = items
        .insert_many([
            doc! { "_id": 1, "sku": "x" },
            doc! { "_id": 2, "sku": "b" },
            doc! { "_id": 3, "sku": "a" },
            doc! { "_id": [1], "sku": "y" },
            doc! { "_id": 4, "sku": "d" },
        ])
        .ordered(false)
        .run()
        .unwrap_err();
    assert!(error.is_duplicate_key(), "{error}");
    assert_eq!(error.document_index(), Some(0));
    let later: Vec<(Option<usize>, bool)> = error
        .later_failures()
        .iter()
        .map(|failure| {
            (
                failure.document_index(),
                matches!(failure.kind(), ErrorKind::InvalidDocument(_)),
            )
        })
        .collect();
    assert_eq!(later, [(Some(2), false), (Some(3), true)]);
    let mut inserted: Vec<(usize, Bson)> = error
        .inserted_ids()
        .unwrap()
        .iter()
        .map(|(position, id)| (*position, id.clone()))
        .collect();
    inserted.sort_by_key(|(position, _)| *position);
    assert_eq!(inserted, [(1, Bson::Int32(2)), (4, Bson::Int32(4))]);
    assert_eq!(
        error.to_string(),
        "duplicate key in collection 'items', index '_id_': 1 (document 0 of the batch; \
         2 more failed (documents 2, 3); 2 inserted: _id 2 (document 1), _id 4 (document 4))"
    );
    assert_eq!(ids(&db), [Bson::Int32(1), Bson::Int32(2), Bson::Int32(4)]);
}

#[test]
fn a_first_document_failure_inserts_nothing_and_says_so() {
    let db = seeded();
    let error = db
        .collection::<Document>("items")
        .insert_many([doc! { "_id": 1 }, doc! { "_id": 9 }])
        .run()
        .unwrap_err();
    assert_eq!(
        error.inserted_ids().map(std::collections::HashMap::len),
        Some(0)
    );
    assert!(
        error
            .to_string()
            .ends_with("(document 0 of the batch; nothing was inserted)")
    );
    assert_eq!(ids(&db), [Bson::Int32(1)]);
}

#[test]
fn inside_a_transaction_the_first_failure_aborts_everything() {
    let db = seeded();
    let items = db.collection::<Document>("items");
    let error = db
        .transaction(|tx| {
            items
                .insert_one(doc! { "_id": 7, "sku": "g" })
                .session(tx)
                .run()?;
            let error = items
                .insert_many([doc! { "_id": 8, "sku": "h" }, doc! { "_id": 1, "sku": "i" }])
                .ordered(false)
                .session(tx)
                .run()
                .unwrap_err();
            assert!(error.is_duplicate_key(), "{error}");
            assert_eq!(error.document_index(), Some(1));
            assert!(
                error.inserted_ids().is_none(),
                "nothing of a transaction stays"
            );
            Ok(())
        })
        .unwrap_err();
    assert!(
        matches!(error.kind(), ErrorKind::TransactionAborted { .. }),
        "{error}"
    );
    assert_eq!(ids(&db), [Bson::Int32(1)]);
}

#[test]
fn a_successful_insert_reports_every_id() {
    let db = seeded();
    let result = db
        .collection::<Document>("items")
        .insert_many([doc! { "sku": "m" }, doc! { "_id": 5, "sku": "n" }])
        .ordered(false)
        .run()
        .unwrap();
    assert_eq!(result.inserted_ids.len(), 2);
    assert!(matches!(result.inserted_ids[&0], Bson::ObjectId(_)));
    assert_eq!(result.inserted_ids[&1], Bson::Int32(5));
}
