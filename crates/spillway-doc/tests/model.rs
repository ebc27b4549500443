//! The reference model's own guarantees: the behaviour the conformance suite does not pin
//! down but the layers above rely on when they compare themselves with it.

use bson::{Bson, doc};
use spillway_doc::DocError;
use spillway_doc::model::{
    FindOneAndOptions, FindOptions, MemoryCollection, ModelError, ReturnDocument, UpdateOptions,
};

fn books() -> MemoryCollection {
    let mut collection = MemoryCollection::new();
    collection
        .insert_one(doc! { "_id": 1, "title": "Invisible Cities", "tags": ["a"] })
        .unwrap();
    collection
        .insert_one(doc! { "_id": 2, "title": "The Wooden Amulet", "tags": "oops" })
        .unwrap();
    collection
        .insert_one(doc! { "_id": 3, "title": "Dune", "tags": ["b"] })
        .unwrap();
    collection
}

#[test]
fn a_failing_update_many_changes_no_document() {
    let mut collection = books();
    let before = collection.clone();
    let error = collection
        .update(
            &doc! {},
            &doc! { "$push": { "tags": "new" } },
            true,
            &UpdateOptions::default(),
        )
        .unwrap_err();
    assert!(
        matches!(&error, ModelError::Doc(DocError::UpdateFailed { field, .. }) if field == "tags"),
        "{error}"
    );
    assert_eq!(collection, before, "document 1 must not keep its push");
}

#[test]
fn duplicate_ids_are_refused_and_ids_come_first() {
    let mut collection = books();
    let error = collection
        .insert_one(doc! { "title": "again", "_id": 1 })
        .unwrap_err();
    assert_eq!(
        error.to_string(),
        "duplicate key: a document with _id 1 already exists"
    );
    // 1 and 1.0 are the same _id in MongoDB.
    assert!(matches!(
        collection.insert_one(doc! { "_id": 1.0 }),
        Err(ModelError::DuplicateId(_))
    ));

    let id = collection
        .insert_one(doc! { "title": "no id yet" })
        .unwrap();
    assert!(matches!(id, Bson::ObjectId(_)));
    collection
        .insert_one(doc! { "title": "late id", "_id": 9 })
        .unwrap();
    let stored = collection.documents().last().unwrap();
    assert_eq!(stored.keys().next().map(String::as_str), Some("_id"));
}

#[test]
fn invalid_ids_and_oversized_documents_are_refused() {
    let mut collection = MemoryCollection::new();
    let error = collection.insert_one(doc! { "_id": [1, 2] }).unwrap_err();
    assert_eq!(error.to_string(), "_id cannot be an array");
    let error = collection
        .insert_one(doc! { "_id": 1, "blob": "x".repeat(17 << 20) })
        .unwrap_err();
    assert!(
        matches!(error, ModelError::Doc(DocError::DocumentTooLarge { .. })),
        "{error}"
    );
    assert!(collection.documents().is_empty());
}

#[test]
fn upserts_seed_from_the_filter_and_report_their_id() {
    let mut collection = books();
    let result = collection
        .update(
            &doc! { "_id": 7, "author": "Calvino" },
            &doc! { "$push": { "tags": "x" }, "$setOnInsert": { "year": 1972 } },
            false,
            &UpdateOptions {
                upsert: true,
                array_filters: Vec::new(),
            },
        )
        .unwrap();
    assert_eq!(result.upserted_id, Some(Bson::Int32(7)));
    assert_eq!(
        collection.documents().last().unwrap(),
        &doc! { "_id": 7, "author": "Calvino", "tags": ["x"], "year": 1972 }
    );
}

#[test]
fn find_sorts_skips_limits_and_projects_positionally() {
    let collection = books();
    let options = FindOptions {
        sort: Some(doc! { "title": -1 }),
        skip: 1,
        limit: 1,
        projection: Some(doc! { "title": 1, "_id": 0 }),
    };
    let found = collection.find(&doc! {}, &options).unwrap();
    assert_eq!(found, vec![doc! { "title": "Invisible Cities" }]);

    let options = FindOptions {
        projection: Some(doc! { "tags.$": 1 }),
        ..FindOptions::default()
    };
    let found = collection.find(&doc! { "tags": "b" }, &options).unwrap();
    assert_eq!(found, vec![doc! { "_id": 3, "tags": ["b"] }]);
}

#[test]
fn find_one_and_update_returns_before_or_after() {
    let mut collection = books();
    let mut options = FindOneAndOptions {
        sort: Some(doc! { "_id": -1 }),
        ..Default::default()
    };
    let before = collection
        .find_one_and_modify(
            &doc! { "tags": { "$type": "array" } },
            &doc! { "$set": { "seen": true } },
            &options,
        )
        .unwrap();
    assert_eq!(
        before,
        Some(doc! { "_id": 3, "title": "Dune", "tags": ["b"] })
    );
    options.return_document = ReturnDocument::After;
    let after = collection
        .find_one_and_modify(
            &doc! { "_id": 1 },
            &doc! { "title": "Le città invisibili" },
            &options,
        )
        .unwrap();
    assert_eq!(
        after,
        Some(doc! { "_id": 1, "title": "Le città invisibili" })
    );
}

#[test]
fn distinct_unwinds_arrays_and_dedupes_by_value() {
    let mut collection = MemoryCollection::new();
    collection
        .insert_one(doc! { "_id": 1, "v": [1, 2] })
        .unwrap();
    collection.insert_one(doc! { "_id": 2, "v": 2.0 }).unwrap();
    collection
        .insert_one(doc! { "_id": 3, "v": { "x": 1 } })
        .unwrap();
    collection.insert_one(doc! { "_id": 4, "w": 1 }).unwrap();
    let values = collection.distinct("v", &doc! {}).unwrap();
    assert_eq!(
        values,
        vec![
            Bson::Int32(1),
            Bson::Int32(2),
            Bson::Document(doc! { "x": 1 })
        ]
    );
}

#[test]
fn updates_and_replacements_are_not_interchangeable() {
    let mut collection = books();
    let error = collection
        .update(
            &doc! {},
            &doc! { "title": "x" },
            false,
            &UpdateOptions::default(),
        )
        .unwrap_err();
    assert!(matches!(error, ModelError::WrongUpdateKind(_)));
    let error = collection
        .replace_one(&doc! {}, &doc! { "$set": { "title": "x" } }, false)
        .unwrap_err();
    assert!(matches!(error, ModelError::WrongUpdateKind(_)));
}
