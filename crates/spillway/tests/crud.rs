//! CRUD through the facade, checked against `spillway_doc::model::MemoryCollection` (the
//! reference semantics) and against the typed errors and guarantees the facade promises.

use serde::{Deserialize, Serialize};
use spillway::bson::{Bson, Document, oid::ObjectId};
use spillway::{Database, ErrorKind, IndexModel, IndexOptions, ReturnDocument, doc};
use spillway_doc::model::{FindOneAndOptions, FindOptions, MemoryCollection, UpdateOptions};

/// Every document of `name`, sorted by `_id` (the facade's natural order).
fn all(db: &Database, name: &str) -> Vec<Document> {
    db.collection::<Document>(name)
        .find(doc! {})
        .run()
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap()
}

fn model_sorted(model: &MemoryCollection) -> Vec<Document> {
    model
        .find(
            &doc! {},
            &FindOptions {
                sort: Some(doc! { "_id": 1 }),
                ..FindOptions::default()
            },
        )
        .unwrap()
}

fn seed() -> Vec<Document> {
    vec![
        doc! { "_id": 1, "name": "ann", "age": 31, "tags": ["a", "b"], "scores": [3, 9] },
        doc! { "_id": 2, "name": "bob", "age": 25, "tags": ["b"], "address": { "city": "Oslo" } },
        doc! { "_id": 3, "name": "cid", "age": 40, "tags": [], "scores": [1] },
        doc! { "_id": 4, "name": "dan", "age": null },
        doc! { "_id": 5, "name": "eve", "age": 25.0, "reviews": [{ "stars": 2 }, { "stars": 5 }] },
    ]
}

fn setup(indexes: &[Document]) -> (Database, MemoryCollection) {
    let db = Database::open_in_memory().unwrap();
    let people = db.collection::<Document>("people");
    for keys in indexes {
        people
            .create_index(IndexModel {
                keys: keys.clone(),
                options: None,
            })
            .run()
            .unwrap();
    }
    people.insert_many(seed()).run().unwrap();
    let mut model = MemoryCollection::new();
    let (_, failures) = model.insert_many(seed(), true);
    assert!(failures.is_empty());
    (db, model)
}

const INDEX_SETS: &[&[&str]] = &[
    &[],
    &["age"],
    &["name", "age"],
    &["tags"],
    &["reviews.stars"],
];

fn index_specs(fields: &[&str]) -> Vec<Document> {
    fields
        .iter()
        .map(|field| {
            let mut keys = Document::new();
            keys.insert(*field, 1);
            keys
        })
        .collect()
}

#[test]
fn queries_match_the_model_whatever_indexes_exist() {
    let cases: Vec<(Document, Option<Document>, u64, i64)> = vec![
        (doc! {}, None, 0, 0),
        (doc! { "age": 25 }, Some(doc! { "_id": -1 }), 0, 0),
        (doc! { "age": { "$gt": 25 } }, Some(doc! { "age": 1 }), 0, 0),
        (
            doc! { "age": { "$gte": 25, "$lt": 40 } },
            Some(doc! { "_id": 1 }),
            0,
            0,
        ),
        (
            doc! { "age": { "$in": [25, 40] } },
            Some(doc! { "age": -1, "_id": 1 }),
            0,
            0,
        ),
        (doc! { "age": null }, Some(doc! { "_id": 1 }), 0, 0),
        (doc! { "name": "ann", "age": 31 }, None, 0, 0),
        (
            doc! { "name": { "$gte": "b" } },
            Some(doc! { "name": 1 }),
            1,
            2,
        ),
        (doc! { "tags": "b" }, Some(doc! { "_id": 1 }), 0, 0),
        (
            doc! { "tags": { "$in": ["a", "b"] } },
            Some(doc! { "_id": 1 }),
            0,
            0,
        ),
        (
            doc! { "scores": { "$gt": 2, "$lt": 5 } },
            Some(doc! { "_id": 1 }),
            0,
            0,
        ),
        (doc! { "reviews.stars": { "$gte": 4 } }, None, 0, 0),
        (
            doc! { "_id": { "$in": [5, 1, 9] } },
            Some(doc! { "_id": 1 }),
            0,
            0,
        ),
        (
            doc! { "$or": [{ "age": 25 }, { "name": "cid" }] },
            Some(doc! { "_id": 1 }),
            0,
            -2,
        ),
        (doc! { "age": { "$gt": "a" } }, None, 0, 0),
    ];
    for fields in INDEX_SETS {
        let (db, model) = setup(&index_specs(fields));
        let people = db.collection::<Document>("people");
        for (filter, sort, skip, limit) in &cases {
            let mut find = people.find(filter.clone()).skip(*skip).limit(*limit);
            if let Some(sort) = sort {
                find = find.sort(sort.clone());
            }
            let mut actual: Vec<Document> = find.run().unwrap().map(Result::unwrap).collect();
            let mut expected = model
                .find(
                    filter,
                    &FindOptions {
                        sort: sort.clone(),
                        skip: *skip,
                        limit: *limit,
                        projection: None,
                    },
                )
                .unwrap();
            if sort.is_none() {
                let by_id = |a: &Document, b: &Document| {
                    spillway_doc::compare::compare(a.get("_id").unwrap(), b.get("_id").unwrap())
                };
                actual.sort_by(by_id);
                expected.sort_by(by_id);
            }
            assert_eq!(actual, expected, "indexes {fields:?}, filter {filter}");
            let count = people.count_documents(filter.clone()).run().unwrap();
            assert_eq!(count, model.count_documents(filter, 0, 0).unwrap());
        }
    }
}

#[test]
fn writes_match_the_model_whatever_indexes_exist() {
    for fields in INDEX_SETS {
        let (db, mut model) = setup(&index_specs(fields));
        let people = db.collection::<Document>("people");
        let updates = [
            (doc! { "age": 25 }, doc! { "$inc": { "age": 1 } }, true),
            (
                doc! { "tags": "b" },
                doc! { "$push": { "tags": "z" } },
                false,
            ),
            (
                doc! { "scores": 9 },
                doc! { "$set": { "scores.$": 10 } },
                false,
            ),
            (doc! { "name": "zed" }, doc! { "$set": { "age": 7 } }, false),
            (doc! {}, doc! { "$unset": { "address": "" } }, true),
        ];
        for (filter, update, multi) in &updates {
            let action = if *multi {
                people.update_many(filter.clone(), update.clone())
            } else {
                people.update_one(filter.clone(), update.clone())
            };
            let result = action.run().unwrap();
            let expected = model
                .update(filter, update, *multi, &UpdateOptions::default())
                .unwrap();
            assert_eq!(result.matched_count, expected.matched_count, "{update}");
            assert_eq!(result.modified_count, expected.modified_count, "{update}");
        }
        let upserted = people
            .update_one(
                doc! { "_id": 9, "name": "ivy" },
                doc! { "$set": { "age": 50 } },
            )
            .upsert(true)
            .run()
            .unwrap();
        let expected = model
            .update(
                &doc! { "_id": 9, "name": "ivy" },
                &doc! { "$set": { "age": 50 } },
                false,
                &UpdateOptions {
                    upsert: true,
                    array_filters: Vec::new(),
                },
            )
            .unwrap();
        assert_eq!(upserted.upserted_id, expected.upserted_id);
        let replaced = people
            .replace_one(doc! { "name": "cid" }, doc! { "name": "cyd", "age": 41 })
            .run()
            .unwrap();
        model
            .replace_one(
                &doc! { "name": "cid" },
                &doc! { "name": "cyd", "age": 41 },
                false,
            )
            .unwrap();
        assert_eq!(replaced.modified_count, 1);
        let filtered = people
            .update_many(
                doc! { "reviews": { "$exists": true } },
                doc! { "$set": { "reviews.$[low].stars": 3 } },
            )
            .array_filters([doc! { "low.stars": { "$lt": 3 } }])
            .run()
            .unwrap();
        model
            .update(
                &doc! { "reviews": { "$exists": true } },
                &doc! { "$set": { "reviews.$[low].stars": 3 } },
                true,
                &UpdateOptions {
                    upsert: false,
                    array_filters: vec![doc! { "low.stars": { "$lt": 3 } }],
                },
            )
            .unwrap();
        assert_eq!(filtered.modified_count, 1);
        let deleted = people
            .delete_many(doc! { "age": { "$lt": 30 } })
            .run()
            .unwrap();
        assert_eq!(
            deleted.deleted_count,
            model.delete(&doc! { "age": { "$lt": 30 } }, true).unwrap()
        );
        assert_eq!(people.delete_one(doc! {}).run().unwrap().deleted_count, 1);
        model.delete(&doc! {}, false).unwrap();
        assert_eq!(
            all(&db, "people"),
            model_sorted(&model),
            "indexes {fields:?}"
        );
        // The indexes still answer exactly what a collection scan answers.
        for filter in [
            doc! { "age": 41 },
            doc! { "tags": "z" },
            doc! { "reviews.stars": 3 },
        ] {
            let mut indexed: Vec<Document> = people
                .find(filter.clone())
                .run()
                .unwrap()
                .map(Result::unwrap)
                .collect();
            indexed.sort_by_key(|document| document.get_i32("_id").unwrap());
            let expected = model
                .find(
                    &filter,
                    &FindOptions {
                        sort: Some(doc! { "_id": 1 }),
                        ..FindOptions::default()
                    },
                )
                .unwrap();
            assert_eq!(indexed, expected, "indexes {fields:?}, filter {filter}");
        }
    }
}

#[test]
fn find_one_and_modify_match_the_model() {
    let (db, mut model) = setup(&index_specs(&["age"]));
    let people = db.collection::<Document>("people");
    let after = people
        .find_one_and_update(doc! { "age": 25 }, doc! { "$set": { "seen": true } })
        .sort(doc! { "name": -1 })
        .projection(doc! { "name": 1, "seen": 1 })
        .return_document(ReturnDocument::After)
        .run()
        .unwrap();
    let expected = model
        .find_one_and_modify(
            &doc! { "age": 25 },
            &doc! { "$set": { "seen": true } },
            &FindOneAndOptions {
                sort: Some(doc! { "name": -1 }),
                projection: Some(doc! { "name": 1, "seen": 1 }),
                return_document: spillway_doc::model::ReturnDocument::After,
                ..FindOneAndOptions::default()
            },
        )
        .unwrap();
    assert_eq!(after, expected);
    assert_eq!(after, Some(doc! { "_id": 5, "name": "eve", "seen": true }));
    let before = people
        .find_one_and_replace(doc! { "name": "ann" }, doc! { "name": "ann", "age": 32 })
        .run()
        .unwrap();
    assert_eq!(before.unwrap().get_i32("age").unwrap(), 31);
    let upserted = people
        .find_one_and_update(doc! { "name": "new" }, doc! { "$set": { "age": 1 } })
        .upsert(true)
        .return_document(ReturnDocument::After)
        .run()
        .unwrap()
        .unwrap();
    assert!(matches!(upserted.get("_id"), Some(Bson::ObjectId(_))));
    assert_eq!(upserted.get_str("name").unwrap(), "new");
    let deleted = people
        .find_one_and_delete(doc! { "age": { "$gte": 25 } })
        .sort(doc! { "age": -1 })
        .run()
        .unwrap()
        .unwrap();
    assert_eq!(deleted.get_str("name").unwrap(), "cid");
    assert_eq!(people.count_documents(doc! {}).run().unwrap(), 5);
    assert_eq!(people.estimated_document_count().run().unwrap(), 5);
    assert_eq!(
        people
            .count_documents(doc! {})
            .skip(1)
            .limit(3)
            .run()
            .unwrap(),
        3
    );
}

#[test]
fn distinct_matches_the_model() {
    let (db, model) = setup(&[]);
    let people = db.collection::<Document>("people");
    for (field, filter) in [
        ("age", doc! {}),
        ("tags", doc! {}),
        ("reviews.stars", doc! {}),
        ("name", doc! { "age": 25 }),
    ] {
        assert_eq!(
            people.distinct(field, filter.clone()).run().unwrap(),
            model.distinct(field, &filter).unwrap(),
            "{field}"
        );
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Book {
    #[serde(rename = "_id", skip_serializing_if = "Option::is_none")]
    id: Option<ObjectId>,
    title: String,
    year: i32,
}

#[test]
fn typed_collections_round_trip_through_serde_and_generate_object_ids() {
    let db = Database::open_in_memory().unwrap();
    let books = db.collection::<Book>("books");
    let inserted = books
        .insert_one(Book {
            id: None,
            title: "Dune".into(),
            year: 1965,
        })
        .run()
        .unwrap();
    let Bson::ObjectId(id) = inserted.inserted_id else {
        panic!(
            "expected a generated ObjectId, got {:?}",
            inserted.inserted_id
        );
    };
    let many = books
        .insert_many([
            Book {
                id: None,
                title: "Emma".into(),
                year: 1815,
            },
            Book {
                id: None,
                title: "Ulysses".into(),
                year: 1922,
            },
        ])
        .run()
        .unwrap();
    assert_eq!(many.inserted_ids.len(), 2);
    let found = books.find_one(doc! { "_id": id }).run().unwrap().unwrap();
    assert_eq!(found.title, "Dune");
    let old: Vec<Book> = books
        .find(doc! { "year": { "$lt": 1950 } })
        .sort(doc! { "year": 1 })
        .run()
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(
        old.iter()
            .map(|book| book.title.as_str())
            .collect::<Vec<_>>(),
        ["Emma", "Ulysses"]
    );
    // The stored document has _id first, as MongoDB stores it.
    let raw = db
        .collection::<Document>("books")
        .find_one(doc! { "title": "Emma" })
        .run();
    assert_eq!(raw.unwrap().unwrap().keys().next().unwrap(), "_id");
}

#[test]
fn duplicate_id_is_typed_and_changes_nothing() {
    let (db, _) = setup(&[]);
    let people = db.collection::<Document>("people");
    let before = all(&db, "people");
    let error = people
        .insert_one(doc! { "_id": 2, "name": "x" })
        .run()
        .unwrap_err();
    match error.kind() {
        ErrorKind::DuplicateKey {
            collection,
            index,
            key,
        } => {
            assert_eq!((collection.as_str(), index.as_str()), ("people", "_id_"));
            assert_eq!(key, &Bson::Int32(2));
        }
        other => panic!("expected DuplicateKey, got {other:?}"),
    }
    assert_eq!(
        error.to_string(),
        "duplicate key in collection 'people', index '_id_': 2"
    );
    // A duplicate at position 2 of an insert_many inside a transaction leaves nothing: the
    // transaction aborts as a whole.
    let error = db
        .transaction(|tx| {
            people
                .insert_many([doc! { "_id": 10 }, doc! { "_id": 11 }, doc! { "_id": 1 }])
                .session(tx)
                .run()
        })
        .unwrap_err();
    assert!(error.is_duplicate_key(), "{error}");
    assert_eq!(error.document_index(), Some(2));
    assert_eq!(all(&db, "people"), before);
    // An _id of a type MongoDB refuses.
    let error = people.insert_one(doc! { "_id": [1, 2] }).run().unwrap_err();
    assert!(
        matches!(error.kind(), ErrorKind::InvalidDocument(_)),
        "{error}"
    );
}

/// Regression (found by tests/model.rs): a unique index is checked against the state the
/// whole statement leaves, so shifting every value by one succeeds whatever order the
/// documents are updated in, and a statement that does leave a duplicate fails whole.
#[test]
fn unique_indexes_see_the_statement_final_state() {
    let db = Database::open_in_memory().unwrap();
    let ranks = db.collection::<Document>("ranks");
    ranks
        .create_index(IndexModel {
            keys: doc! { "rank": 1 },
            options: Some(IndexOptions::builder().unique(true).build()),
        })
        .run()
        .unwrap();
    ranks
        .insert_many((1..=4).map(|id| doc! { "_id": id, "rank": id }))
        .run()
        .unwrap();
    let result = ranks
        .update_many(doc! {}, doc! { "$inc": { "rank": 1 } })
        .run()
        .unwrap();
    assert_eq!((result.matched_count, result.modified_count), (4, 4));
    let found: Vec<i32> = all(&db, "ranks")
        .iter()
        .map(|document| document.get_i32("rank").unwrap())
        .collect();
    assert_eq!(found, [2, 3, 4, 5]);
    // The same through the index, whose entries moved with the documents.
    let by_rank = ranks.find_one(doc! { "rank": 2 }).run().unwrap().unwrap();
    assert_eq!(by_rank.get_i32("_id").unwrap(), 1);
    // Two documents given one rank fail the statement, and nothing changes.
    let before = all(&db, "ranks");
    let error = ranks
        .update_many(
            doc! { "_id": { "$in": [1, 2] } },
            doc! { "$set": { "rank": 9 } },
        )
        .run()
        .unwrap_err();
    assert!(error.is_duplicate_key(), "{error}");
    assert_eq!(all(&db, "ranks"), before);
    // A key kept by a document the statement does not touch still counts.
    let error = ranks
        .update_many(
            doc! { "_id": { "$gte": 3 } },
            doc! { "$inc": { "rank": -1 } },
        )
        .run()
        .unwrap_err();
    assert!(error.is_duplicate_key(), "rank 3 of _id 2 stays: {error}");
    assert_eq!(all(&db, "ranks"), before);
}

#[test]
fn unique_index_violations_fail_the_whole_write() {
    let (db, _) = setup(&[]);
    let people = db.collection::<Document>("people");
    people
        .create_index(IndexModel {
            keys: doc! { "name": 1 },
            options: Some(IndexOptions {
                unique: Some(true),
                name: Some("unique_name".into()),
                ..Default::default()
            }),
        })
        .run()
        .unwrap();
    let error = people
        .insert_many([
            doc! { "_id": 21, "name": "bob" },
            doc! { "_id": 20, "name": "new" },
        ])
        .run()
        .unwrap_err();
    match error.kind() {
        ErrorKind::DuplicateKey { index, key, .. } => {
            assert_eq!(index, "unique_name");
            assert_eq!(key, &Bson::Document(doc! { "name": "bob" }));
        }
        other => panic!("expected DuplicateKey, got {other:?}"),
    }
    let before = all(&db, "people");
    let error = people
        .update_many(
            doc! { "age": { "$gte": 30 } },
            doc! { "$set": { "name": "same" } },
        )
        .run()
        .unwrap_err();
    assert!(error.is_duplicate_key(), "{error}");
    assert_eq!(all(&db, "people"), before);
    // A unique index treats a missing field as null: two documents without it collide.
    people.insert_one(doc! { "_id": 30 }).run().unwrap();
    let error = people.insert_one(doc! { "_id": 31 }).run().unwrap_err();
    assert!(error.is_duplicate_key());
    people.delete_one(doc! { "_id": 30 }).run().unwrap();
    assert_eq!(all(&db, "people"), before);
    // Building a unique index over duplicates fails and creates nothing.
    let error = people
        .create_index(IndexModel {
            keys: doc! { "age": 1 },
            options: Some(IndexOptions {
                unique: Some(true),
                name: None,
                ..Default::default()
            }),
        })
        .run()
        .unwrap_err();
    assert!(error.is_duplicate_key());
    assert_eq!(
        people.list_index_names().run().unwrap(),
        ["_id_", "unique_name"]
    );
    // Renaming within the unique index is fine.
    people
        .update_one(doc! { "name": "bob" }, doc! { "$set": { "name": "rob" } })
        .run()
        .unwrap();
    people.insert_one(doc! { "name": "bob" }).run().unwrap();
}

#[test]
fn compound_index_refuses_parallel_arrays() {
    let db = Database::open_in_memory().unwrap();
    let coll = db.collection::<Document>("c");
    coll.create_index(IndexModel::builder().keys(doc! { "a": 1, "b": 1 }).build())
        .run()
        .unwrap();
    coll.insert_one(doc! { "a": [1, 2], "b": 1 }).run().unwrap();
    let error = coll
        .insert_one(doc! { "a": [1], "b": [2] })
        .run()
        .unwrap_err();
    assert!(
        matches!(error.kind(), ErrorKind::ParallelArrays { .. }),
        "{error}"
    );
    assert_eq!(coll.count_documents(doc! {}).run().unwrap(), 1);
}

#[test]
fn oversized_and_too_deep_documents_are_refused() {
    let db = Database::open_in_memory().unwrap();
    let coll = db.collection::<Document>("big");
    let big = "x".repeat(16 * 1024 * 1024);
    let error = coll.insert_one(doc! { "blob": big }).run().unwrap_err();
    assert!(
        matches!(error.kind(), ErrorKind::DocumentTooLarge { limit, .. } if *limit == 16 * 1024 * 1024),
        "{error}"
    );
    coll.insert_one(doc! { "_id": 1, "blob": "small" })
        .run()
        .unwrap();
    let error = coll
        .update_one(
            doc! { "_id": 1 },
            doc! { "$set": { "blob": "y".repeat(16 * 1024 * 1024) } },
        )
        .run()
        .unwrap_err();
    assert!(
        matches!(error.kind(), ErrorKind::DocumentTooLarge { .. }),
        "{error}"
    );
    let mut deep = doc! { "leaf": 1 };
    for _ in 0..100 {
        deep = doc! { "d": deep };
    }
    let error = coll.insert_one(deep).run().unwrap_err();
    assert!(
        matches!(error.kind(), ErrorKind::InvalidDocument(_)),
        "{error}"
    );
    assert_eq!(all(&db, "big"), [doc! { "_id": 1, "blob": "small" }]);
}

#[test]
fn invalid_collection_names_are_refused() {
    let db = Database::open_in_memory().unwrap();
    let long = "n".repeat(256);
    for name in ["", "a$b", "nul\0", "system.users", long.as_str()] {
        let error = db
            .collection::<Document>(name)
            .insert_one(doc! {})
            .run()
            .unwrap_err();
        assert!(
            matches!(error.kind(), ErrorKind::InvalidCollectionName { .. }),
            "{name:?}: {error}"
        );
        assert!(db.collection::<Document>(name).find(doc! {}).run().is_err());
    }
    db.collection::<Document>(&"n".repeat(120))
        .insert_one(doc! {})
        .run()
        .unwrap();
    assert_eq!(db.list_collection_names().run().unwrap(), ["n".repeat(120)]);
}

#[test]
fn bad_filters_updates_and_index_specs_are_typed_errors() {
    let (db, _) = setup(&[]);
    let people = db.collection::<Document>("people");
    let error = people
        .find(doc! { "a": { "$bogus": 1 } })
        .run()
        .unwrap_err();
    assert!(
        matches!(error.kind(), ErrorKind::InvalidFilter(_)),
        "{error}"
    );
    let error = people
        .update_one(doc! {}, doc! { "plain": 1 })
        .run()
        .unwrap_err();
    assert!(
        matches!(error.kind(), ErrorKind::InvalidUpdate(_)),
        "{error}"
    );
    let error = people
        .replace_one(doc! {}, doc! { "$set": { "a": 1 } })
        .run()
        .unwrap_err();
    assert!(
        matches!(error.kind(), ErrorKind::InvalidUpdate(_)),
        "{error}"
    );
    let error = people
        .update_many(doc! {}, doc! { "$inc": { "name": 1 } })
        .run()
        .unwrap_err();
    assert!(
        matches!(error.kind(), ErrorKind::InvalidUpdate(_)),
        "{error}"
    );
    let error = people
        .create_index(IndexModel::builder().keys(doc! { "a": 0 }).build())
        .run()
        .unwrap_err();
    assert!(
        matches!(error.kind(), ErrorKind::InvalidIndex { .. }),
        "{error}"
    );
    let error = people.drop_index("nope").run().unwrap_err();
    assert!(
        matches!(error.kind(), ErrorKind::IndexNotFound { .. }),
        "{error}"
    );
    assert_eq!(all(&db, "people"), seed());
}

#[test]
fn compaction_keeps_documents_and_indexes() {
    let dir = tempfile::tempdir().unwrap();
    let options = spillway::DatabaseOptions::default().segment_size(8 * 1024);
    let db = Database::open_with(dir.path(), &options).unwrap();
    let people = db.collection::<Document>("people");
    people
        .create_index(IndexModel::builder().keys(doc! { "age": 1 }).build())
        .run()
        .unwrap();
    people.insert_many(seed()).run().unwrap();
    // Rewrite every document many times, so that early segments hold only dead records.
    for round in 0..200 {
        people
            .update_many(doc! {}, doc! { "$set": { "round": round } })
            .run()
            .unwrap();
    }
    let report = db.compact().unwrap();
    assert!(!report.segments_compacted.is_empty(), "{report:?}");
    let expected: Vec<Document> = seed()
        .into_iter()
        .map(|mut document| {
            document.insert("round", 199);
            document
        })
        .collect();
    assert_eq!(all(&db, "people"), expected);
    assert_eq!(people.count_documents(doc! { "age": 25 }).run().unwrap(), 2);
    drop((db, people));
    let db = Database::open_with(dir.path(), &options).unwrap();
    assert_eq!(all(&db, "people"), expected);
    let explain = db
        .collection::<Document>("people")
        .find(doc! { "age": 25 })
        .explain()
        .unwrap();
    assert_eq!((explain.keys_examined, explain.n_returned), (2, 2));
}

#[test]
fn reopen_keeps_documents_collections_and_indexes() {
    let dir = tempfile::tempdir().unwrap();
    {
        let db = Database::open(dir.path()).unwrap();
        let people = db.collection::<Document>("people");
        people.insert_many(seed()).run().unwrap();
        people
            .create_index(IndexModel::builder().keys(doc! { "age": -1 }).build())
            .run()
            .unwrap();
        db.collection::<Document>("empty").drop().run().unwrap();
        db.create_collection("empty").run().unwrap();
        db.collection::<Document>("gone")
            .insert_one(doc! {})
            .run()
            .unwrap();
        db.collection::<Document>("gone").drop().run().unwrap();
    }
    let db = Database::open(dir.path()).unwrap();
    assert_eq!(
        db.list_collection_names().run().unwrap(),
        ["empty", "people"]
    );
    assert_eq!(all(&db, "people"), seed());
    let people = db.collection::<Document>("people");
    assert_eq!(people.list_index_names().run().unwrap(), ["_id_", "age_-1"]);
    let explain = people.find(doc! { "age": 25 }).explain().unwrap();
    assert_eq!(explain.n_returned, 2);
    assert_eq!(explain.keys_examined, 2);
    // The index is maintained after reopening too.
    people
        .insert_one(doc! { "_id": 6, "age": 25 })
        .run()
        .unwrap();
    assert_eq!(people.count_documents(doc! { "age": 25 }).run().unwrap(), 3);
    // The store closes when the last handle (collections included) is dropped.
    drop((db, people));
    let db = Database::open(dir.path()).unwrap();
    assert_eq!(
        db.collection::<Document>("people")
            .count_documents(doc! { "age": 25 })
            .run()
            .unwrap(),
        3
    );
    // A second open of the same directory is refused while the first is open.
    let error = Database::open(dir.path()).unwrap_err();
    assert!(matches!(error.kind(), ErrorKind::Storage(_)), "{error}");
}

#[test]
fn transactions_commit_across_collections_or_leave_nothing() {
    let db = Database::open_in_memory().unwrap();
    let orders = db.collection::<Document>("orders");
    let stock = db.collection::<Document>("stock");
    stock
        .insert_one(doc! { "_id": "apple", "qty": 5 })
        .run()
        .unwrap();
    let total = db
        .transaction(|tx| {
            orders
                .insert_one(doc! { "_id": 1, "item": "apple", "qty": 2 })
                .session(tx)
                .run()?;
            stock
                .update_one(doc! { "_id": "apple" }, doc! { "$inc": { "qty": -2 } })
                .session(tx)
                .run()?;
            // Reads inside the transaction see its own writes.
            let left = stock.find_one(doc! { "_id": "apple" }).session(tx).run()?;
            assert_eq!(orders.count_documents(doc! {}).session(tx).run()?, 1);
            // Others do not, until it commits.
            assert_eq!(orders.count_documents(doc! {}).run()?, 0);
            Ok(left.unwrap().get_i32("qty").unwrap())
        })
        .unwrap();
    assert_eq!(total, 3);
    assert_eq!(all(&db, "orders").len(), 1);
    assert_eq!(all(&db, "stock"), [doc! { "_id": "apple", "qty": 3 }]);

    let before = (all(&db, "orders"), all(&db, "stock"));
    let error = db
        .transaction(|tx| {
            orders.insert_one(doc! { "_id": 2 }).session(tx).run()?;
            db.collection::<Document>("new")
                .insert_one(doc! {})
                .session(tx)
                .run()?;
            stock
                .update_one(doc! { "_id": "apple" }, doc! { "$inc": { "qty": -9 } })
                .session(tx)
                .run()?;
            Err::<(), _>(spillway::Transaction::abort("not enough apples"))
        })
        .unwrap_err();
    assert!(matches!(error.kind(), ErrorKind::TransactionAborted { .. }));
    assert_eq!((all(&db, "orders"), all(&db, "stock")), before);
    assert_eq!(
        db.list_collection_names().run().unwrap(),
        ["orders", "stock"]
    );

    // A failed operation dooms the transaction even if the closure swallows the error.
    let error = db
        .transaction(|tx| {
            orders.insert_one(doc! { "_id": 3 }).session(tx).run()?;
            let duplicate = orders.insert_one(doc! { "_id": 1 }).session(tx).run();
            assert!(duplicate.unwrap_err().is_duplicate_key());
            Ok(())
        })
        .unwrap_err();
    assert!(matches!(error.kind(), ErrorKind::TransactionAborted { .. }));
    assert_eq!(all(&db, "orders").len(), 1);

    // A write without the session inside a transaction would deadlock: it is refused.
    let error = db
        .transaction(|_| orders.insert_one(doc! { "_id": 4 }).run())
        .unwrap_err();
    assert!(matches!(error.kind(), ErrorKind::TransactionAborted { .. }));
}

#[test]
fn a_cursor_reads_the_snapshot_it_started_on() {
    let db = Database::open_in_memory().unwrap();
    let coll = db.collection::<Document>("c");
    coll.insert_many((0..50).map(|i| doc! { "_id": i, "v": i }))
        .run()
        .unwrap();
    coll.create_index(IndexModel::builder().keys(doc! { "v": 1 }).build())
        .run()
        .unwrap();
    for filter in [doc! {}, doc! { "v": { "$gte": 0 } }] {
        let mut cursor = coll.find(filter.clone()).batch_size(4).run().unwrap();
        let first = cursor.next().unwrap().unwrap();
        assert_eq!(first.get_i32("_id").unwrap(), 0);
        coll.delete_many(doc! { "_id": { "$gte": 25 } })
            .run()
            .unwrap();
        coll.insert_one(doc! { "_id": 100, "v": 100 })
            .run()
            .unwrap();
        coll.update_many(doc! {}, doc! { "$set": { "changed": true } })
            .run()
            .unwrap();
        let rest: Vec<Document> = cursor.map(Result::unwrap).collect();
        assert_eq!(rest.len(), 49, "{filter}");
        assert!(
            rest.iter()
                .all(|document| !document.contains_key("changed"))
        );
        // Put things back for the next filter.
        coll.delete_many(doc! {}).run().unwrap();
        coll.insert_many((0..50).map(|i| doc! { "_id": i, "v": i }))
            .run()
            .unwrap();
    }
    let page: Vec<i32> = coll
        .find(doc! {})
        .skip(10)
        .limit(5)
        .batch_size(2)
        .projection(doc! { "v": 0 })
        .run()
        .unwrap()
        .map(|document| document.unwrap().get_i32("_id").unwrap())
        .collect();
    assert_eq!(page, [10, 11, 12, 13, 14]);
}

#[test]
fn indexes_list_create_idempotently_and_drop() {
    let db = Database::open_in_memory().unwrap();
    let coll = db.collection::<Document>("c");
    assert!(
        coll.list_indexes()
            .run()
            .unwrap()
            .collect::<spillway::Result<Vec<_>>>()
            .unwrap()
            .is_empty()
    );
    let model = IndexModel::builder()
        .keys(doc! { "a": 1, "b": -1 })
        .options(IndexOptions::builder().unique(true).build())
        .build();
    assert_eq!(
        coll.create_index(model.clone()).run().unwrap().index_name,
        "a_1_b_-1"
    );
    assert_eq!(
        coll.create_index(model).run().unwrap().index_name,
        "a_1_b_-1"
    );
    let listed = coll
        .list_indexes()
        .run()
        .unwrap()
        .collect::<spillway::Result<Vec<_>>>()
        .unwrap();
    assert_eq!(listed.len(), 2);
    assert_eq!(listed[1].keys, doc! { "a": 1, "b": -1 });
    assert_eq!(listed[1].options.as_ref().unwrap().unique, Some(true));
    let conflict = coll
        .create_index(IndexModel::builder().keys(doc! { "a": 1, "b": -1 }).build())
        .run()
        .unwrap_err();
    assert!(matches!(conflict.kind(), ErrorKind::InvalidIndex { .. }));
    coll.drop_index("a_1_b_-1").run().unwrap();
    assert_eq!(coll.list_index_names().run().unwrap(), ["_id_"]);
    assert!(coll.drop_index("_id_").run().is_err());
}

#[test]
fn handles_are_send_and_sync() {
    fn assert_send_sync<T: Send + Sync>() {}
    fn assert_send<T: Send>() {}
    assert_send_sync::<Database>();
    assert_send_sync::<spillway::Collection<Book>>();
    assert_send::<spillway::Cursor<Document>>();
    assert_send::<spillway::Transaction>();
}

#[test]
fn a_collection_dropped_and_recreated_in_one_transaction_starts_empty() {
    let db = Database::open_in_memory().unwrap();
    let coll = db.collection::<Document>("c");
    coll.insert_many([doc! { "_id": 1, "a": 1 }, doc! { "_id": 2, "a": 2 }])
        .run()
        .unwrap();
    coll.create_index(IndexModel::builder().keys(doc! { "a": 1 }).build())
        .run()
        .unwrap();
    db.transaction(|tx| {
        coll.drop().session(tx).run()?;
        coll.insert_one(doc! { "_id": 3, "a": 1 })
            .session(tx)
            .run()?;
        assert_eq!(coll.count_documents(doc! {}).session(tx).run()?, 1);
        Ok(())
    })
    .unwrap();
    assert_eq!(all(&db, "c"), [doc! { "_id": 3, "a": 1 }]);
    assert_eq!(coll.list_index_names().run().unwrap(), ["_id_"]);
    assert_eq!(coll.count_documents(doc! { "a": 1 }).run().unwrap(), 1);
}
