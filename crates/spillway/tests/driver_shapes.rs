//! The Rust API's driver shapes (issue 13): the calls code written for the official `mongodb`
//! crate makes compile and mean the same here: actions run with `.run()`
//! (`estimated_document_count`, `list_indexes` as a cursor of `IndexModel`s,
//! `list_index_names`, `create_collection` with options, `list_collection_names` with a
//! filter), `Database::drop`, sessions with `start_transaction` / `commit_transaction` /
//! `abort_transaction`, and MongoDB's error codes on errors.

use std::time::Duration;

use spillway::bson::{Document, doc};
use spillway::{
    ClientSession, CollectionOptions, Database, ErrorKind, IndexModel, IndexOptions, Pattern,
};

fn books(db: &Database) -> spillway::Collection<Document> {
    db.collection::<Document>("books")
}

#[test]
fn estimated_document_count_is_an_action_and_counts_views_by_running_them() {
    let db = Database::open_in_memory().unwrap();
    assert_eq!(books(&db).estimated_document_count().run().unwrap(), 0);
    books(&db)
        .insert_many([
            doc! { "_id": 1, "year": 1965 },
            doc! { "_id": 2, "year": 1972 },
        ])
        .run()
        .unwrap();
    assert_eq!(books(&db).estimated_document_count().run().unwrap(), 2);
    db.create_collection("old")
        .view_on("books")
        .pipeline([doc! { "$match": { "year": { "$lt": 1970 } } }])
        .run()
        .unwrap();
    let old = db.collection::<Document>("old");
    assert_eq!(old.estimated_document_count().run().unwrap(), 1);
}

#[test]
fn list_indexes_is_a_cursor_of_index_models_with_their_options() {
    let db = Database::open_in_memory().unwrap();
    let books = books(&db);
    books.insert_one(doc! { "_id": 1 }).run().unwrap();
    let models = [
        IndexModel::builder()
            .keys(doc! { "isbn": 1 })
            .options(IndexOptions::builder().unique(true).sparse(true).build())
            .build(),
        IndexModel::builder()
            .keys(doc! { "added": 1 })
            .options(
                IndexOptions::builder()
                    .name("expiry")
                    .expire_after(Duration::from_secs(3600))
                    .build(),
            )
            .build(),
        IndexModel::builder()
            .keys(doc! { "year": -1, "title": 1 })
            .options(
                IndexOptions::builder()
                    .partial_filter_expression(doc! { "year": { "$gt": 1900 } })
                    .hidden(true)
                    .build(),
            )
            .build(),
    ];
    books.create_indexes(models).run().unwrap();
    let cursor = books.list_indexes().run().unwrap();
    let listed: Vec<IndexModel> = cursor.collect::<spillway::Result<_>>().unwrap();
    let names: Vec<&str> = listed
        .iter()
        .map(|model| model.options.as_ref().unwrap().name.as_deref().unwrap())
        .collect();
    assert_eq!(names, ["_id_", "isbn_1", "expiry", "year_-1_title_1"]);
    let isbn = listed[1].options.as_ref().unwrap();
    assert_eq!((isbn.unique, isbn.sparse), (Some(true), Some(true)));
    let expiry = listed[2].options.as_ref().unwrap();
    assert_eq!(expiry.expire_after, Some(Duration::from_secs(3600)));
    let partial = listed[3].options.as_ref().unwrap();
    assert_eq!(listed[3].keys, doc! { "year": -1, "title": 1 });
    assert_eq!(
        partial.partial_filter_expression,
        Some(doc! { "year": { "$gt": 1900 } })
    );
    assert_eq!(partial.hidden, Some(true));
    assert_eq!(
        books.list_index_names().run().unwrap(),
        ["_id_", "isbn_1", "expiry", "year_-1_title_1"]
    );
    // A collection that does not exist has no indexes.
    let none = db.collection::<Document>("none");
    assert_eq!(none.list_indexes().run().unwrap().count(), 0);
    assert!(none.list_index_names().run().unwrap().is_empty());
}

#[test]
fn index_models_read_the_documents_list_indexes_answers() {
    let described = doc! {
        "v": 2, "key": { "place": "2dsphere", "kind": 1 }, "name": "near",
        "2dsphereIndexVersion": 3, "expireAfterSeconds": 60.0, "ns": "ignored.too",
    };
    let model = IndexModel::try_from(described).unwrap();
    let options = model.options.clone().unwrap();
    assert_eq!(options.name.as_deref(), Some("near"));
    assert_eq!(options.geo.unwrap().sphere_version, Some(3));
    assert_eq!(options.expire_after, Some(Duration::from_secs(60)));
    // What `to_document` writes reads back as the same model.
    assert_eq!(IndexModel::try_from(model.to_document()).unwrap(), model);
    for (bad, problem) in [
        (doc! { "name": "x" }, "'key' must be a document"),
        (
            doc! { "key": { "a": 1 }, "unique": 1 },
            "'unique' must be true or false",
        ),
        (
            doc! { "key": { "a": 1 }, "expireAfterSeconds": -5 },
            "'expireAfterSeconds' must be 0 or more",
        ),
        (
            doc! { "key": { "a": 1 }, "name": 7 },
            "'name' must be a string",
        ),
    ] {
        let error = IndexModel::try_from(bad).unwrap_err();
        assert!(error.contains(problem), "{error}");
    }
}

#[test]
fn create_collection_takes_the_drivers_options() {
    let db = Database::open_in_memory().unwrap();
    db.create_collection("plain").run().unwrap();
    // Without options an existing collection is left alone, as before.
    db.create_collection("plain").run().unwrap();
    db.create_collection("logs")
        .capped(true)
        .size(4096)
        .max(10)
        .run()
        .unwrap();
    let options = db.collection_options("logs").unwrap().unwrap();
    assert_eq!(
        (options.capped, options.size, options.max),
        (Some(true), Some(4096), Some(10))
    );
    db.create_collection("people")
        .validator(doc! { "age": { "$gte": 0 } })
        .run()
        .unwrap();
    let people = db.collection::<Document>("people");
    let refused = people.insert_one(doc! { "age": -1 }).run().unwrap_err();
    assert_eq!(refused.code(), Some(121), "{refused}");
    let exists = db
        .create_collection("logs")
        .capped(true)
        .size(1)
        .run()
        .unwrap_err();
    assert_eq!(exists.code(), Some(48), "{exists}");
    let capped_without_size = db.create_collection("bad").capped(true).run().unwrap_err();
    assert_eq!(
        capped_without_size.code(),
        Some(72),
        "{capped_without_size}"
    );
    db.create_collection("again")
        .with_options(CollectionOptions::default().validator(doc! { "x": 1 }))
        .run()
        .unwrap();
    assert!(
        db.collection_options("again")
            .unwrap()
            .unwrap()
            .validator
            .is_some()
    );
}

#[test]
fn list_collection_names_filters_by_name_and_type() {
    let db = Database::open_in_memory().unwrap();
    for name in ["logs_2024", "logs_2025", "books"] {
        db.create_collection(name).run().unwrap();
    }
    db.create_collection("recent")
        .view_on("books")
        .run()
        .unwrap();
    assert_eq!(
        db.list_collection_names().run().unwrap(),
        ["books", "logs_2024", "logs_2025", "recent"]
    );
    assert_eq!(
        db.list_collection_names()
            .filter(doc! { "name": { "$regex": "^logs_" } })
            .run()
            .unwrap(),
        ["logs_2024", "logs_2025"]
    );
    assert_eq!(
        db.list_collection_names()
            .filter(doc! { "type": "view" })
            .run()
            .unwrap(),
        ["recent"]
    );
    let error = db
        .list_collection_names()
        .filter(doc! { "name": { "$bogus": 1 } })
        .run()
        .unwrap_err();
    assert!(error.to_string().contains("$bogus"), "{error}");
}

#[test]
fn database_drop_removes_every_collection_and_policy_at_once() {
    let db = Database::open_in_memory().unwrap();
    let sales = db.collection::<Document>("sales");
    sales
        .insert_one(doc! { "_id": 1, "buyers": ["a", "b", "c", "d"] })
        .run()
        .unwrap();
    db.set_pattern(Pattern::outlier("sales", "buyers").threshold(2))
        .unwrap();
    books(&db).insert_one(doc! { "_id": 1 }).run().unwrap();
    assert_eq!(
        db.list_collection_names().run().unwrap(),
        ["books", "extra_sales", "sales"]
    );
    db.drop().run().unwrap();
    assert!(db.list_collection_names().run().unwrap().is_empty());
    assert!(db.patterns().is_empty());
    assert_eq!(sales.count_documents(doc! {}).run().unwrap(), 0);
    // Dropping an empty database is no error.
    db.drop().run().unwrap();
}

fn balance(db: &Database, id: i32) -> i32 {
    db.collection::<Document>("accounts")
        .find_one(doc! { "_id": id })
        .run()
        .unwrap()
        .unwrap()
        .get_i32("balance")
        .unwrap()
}

#[test]
fn sessions_start_commit_and_abort_transactions() {
    let db = Database::open_in_memory().unwrap();
    let accounts = db.collection::<Document>("accounts");
    accounts
        .insert_many([
            doc! { "_id": 1, "balance": 100 },
            doc! { "_id": 2, "balance": 0 },
        ])
        .run()
        .unwrap();
    let mut session: ClientSession = db.start_session().run().unwrap();
    assert!(!session.in_transaction());

    session.start_transaction().run().unwrap();
    assert!(session.in_transaction());
    accounts
        .update_one(doc! { "_id": 1 }, doc! { "$inc": { "balance": -30 } })
        .session(&mut session)
        .run()
        .unwrap();
    accounts
        .update_one(doc! { "_id": 2 }, doc! { "$inc": { "balance": 30 } })
        .session(&mut session)
        .run()
        .unwrap();
    // The session reads its own writes; others do not see them before the commit.
    let inside = accounts
        .find_one(doc! { "_id": 2 })
        .session(&mut session)
        .run()
        .unwrap()
        .unwrap();
    assert_eq!(inside.get_i32("balance").unwrap(), 30);
    assert_eq!(balance(&db, 2), 0);
    session.commit_transaction().run().unwrap();
    assert!(!session.in_transaction());
    assert_eq!((balance(&db, 1), balance(&db, 2)), (70, 30));

    // Aborted: nothing stays.
    session.start_transaction().run().unwrap();
    accounts
        .delete_many(doc! {})
        .session(&mut session)
        .run()
        .unwrap();
    session.abort_transaction().run().unwrap();
    assert_eq!(accounts.count_documents(doc! {}).run().unwrap(), 2);

    // Between transactions, an operation given the session runs on its own at once.
    accounts
        .insert_one(doc! { "_id": 3, "balance": 5 })
        .session(&mut session)
        .run()
        .unwrap();
    assert_eq!(balance(&db, 3), 5);

    // A session dropped with a transaction in progress leaves nothing of it.
    session.start_transaction().run().unwrap();
    accounts
        .insert_one(doc! { "_id": 4, "balance": 1 })
        .session(&mut session)
        .run()
        .unwrap();
    drop(session);
    assert_eq!(accounts.count_documents(doc! {}).run().unwrap(), 3);
}

#[test]
fn session_misuse_and_conflicts_have_mongodbs_codes() {
    let db = Database::open_in_memory().unwrap();
    let accounts = db.collection::<Document>("accounts");
    accounts
        .insert_one(doc! { "_id": 1, "balance": 100 })
        .run()
        .unwrap();
    let mut session = db.start_session().run().unwrap();
    for error in [
        session.commit_transaction().run().unwrap_err(),
        session.abort_transaction().run().unwrap_err(),
    ] {
        assert_eq!(error.code(), Some(20), "{error}");
        assert!(
            error.to_string().contains("no transaction started"),
            "{error}"
        );
    }
    session.start_transaction().run().unwrap();
    let twice = session.start_transaction().run().unwrap_err();
    assert_eq!(twice.code(), Some(20), "{twice}");
    assert!(twice.to_string().contains("already in progress"), "{twice}");

    // First committer wins: the session's commit fails with WriteConflict (112), labelled
    // TransientTransactionError, and its transaction is over.
    accounts
        .update_one(doc! { "_id": 1 }, doc! { "$inc": { "balance": -1 } })
        .session(&mut session)
        .run()
        .unwrap();
    accounts
        .update_one(doc! { "_id": 1 }, doc! { "$inc": { "balance": 10 } })
        .run()
        .unwrap();
    let conflict = session.commit_transaction().run().unwrap_err();
    assert_eq!(conflict.code(), Some(112), "{conflict}");
    assert_eq!(conflict.labels(), ["TransientTransactionError"]);
    assert!(!session.in_transaction());
    assert_eq!(balance(&db, 1), 110);
    // Run again from the start, it commits.
    session.start_transaction().run().unwrap();
    accounts
        .update_one(doc! { "_id": 1 }, doc! { "$inc": { "balance": -1 } })
        .session(&mut session)
        .run()
        .unwrap();
    session.commit_transaction().run().unwrap();
    assert_eq!(balance(&db, 1), 109);
}

#[test]
fn errors_carry_mongodbs_codes() {
    let db = Database::open_in_memory().unwrap();
    let books = books(&db);
    books.insert_one(doc! { "_id": 1 }).run().unwrap();
    let duplicate = books.insert_one(doc! { "_id": 1 }).run().unwrap_err();
    assert!(matches!(duplicate.kind(), ErrorKind::DuplicateKey { .. }));
    assert_eq!(duplicate.code(), Some(11000));
    assert_eq!(duplicate.code_name().as_deref(), Some("DuplicateKey"));
    let bad_update = books
        .update_one(doc! { "_id": 1 }, doc! { "$inc": { "n": "x" } })
        .run()
        .unwrap_err();
    assert_eq!(bad_update.code(), Some(14), "{bad_update}");
    let bad_filter = books.find(doc! { "a": { "$nope": 1 } }).run().unwrap_err();
    assert_eq!(bad_filter.code(), Some(2), "{bad_filter}");
    let missing_index = books.drop_index("nope_1").run().unwrap_err();
    assert_eq!(missing_index.code(), Some(27), "{missing_index}");
    let length = books.array_len(1, "tags").unwrap();
    assert_eq!(length, None);
    books
        .update_one(doc! { "_id": 1 }, doc! { "$set": { "tags": "x" } })
        .run()
        .unwrap();
    let not_array = books.array_len(1, "tags").unwrap_err();
    assert_eq!(not_array.code(), Some(2), "{not_array}");
    assert!(
        not_array.to_string().contains("is a string, not an array"),
        "{not_array}"
    );
}

fn ids(db: &Database, collection: &str) -> Vec<i32> {
    db.collection::<Document>(collection)
        .find(doc! {})
        .run()
        .unwrap()
        .map(|document| document.unwrap().get_i32("_id").unwrap())
        .collect()
}

fn bulk_failure(error: &spillway::Error) -> &spillway::BulkWriteFailure {
    match error.kind() {
        ErrorKind::BulkWrite(failure) => failure,
        other => panic!("expected a bulk write failure, found {other:?}"),
    }
}

#[test]
fn bulk_write_ordered_stops_at_the_first_failure_and_unordered_goes_on() {
    let db = Database::open_in_memory().unwrap();
    let books = books(&db);
    let models = |books: &spillway::Collection<Document>| {
        vec![
            books.insert_one_model(doc! { "_id": 1 }).unwrap(),
            books.insert_one_model(doc! { "_id": 1 }).unwrap(),
            books.insert_one_model(doc! { "_id": 2 }).unwrap(),
            books.update_one_model(doc! { "_id": 2 }, doc! { "$inc": { "n": "x" } }),
            books.insert_one_model(doc! { "_id": 3 }).unwrap(),
        ]
    };
    let ordered = db.bulk_write(models(&books)).run().unwrap_err();
    let failure = bulk_failure(&ordered);
    assert_eq!(
        failure.write_errors.keys().copied().collect::<Vec<_>>(),
        [1]
    );
    assert_eq!(ordered.code(), Some(11000));
    assert_eq!(failure.partial_result.inserted_count, 1);
    assert_eq!(ids(&db, "books"), [1]);
    assert!(
        ordered
            .to_string()
            .starts_with("bulk write: 1 operation(s) failed; operation 1: duplicate key"),
        "{ordered}"
    );

    books.delete_many(doc! {}).run().unwrap();
    let unordered = db
        .bulk_write(models(&books))
        .ordered(false)
        .run()
        .unwrap_err();
    let failure = bulk_failure(&unordered);
    let failed: Vec<(usize, Option<i32>)> = failure
        .write_errors
        .iter()
        .map(|(index, error)| (*index, error.code()))
        .collect();
    assert_eq!(failed, [(1, Some(11000)), (3, Some(14))]);
    assert_eq!(failure.partial_result.inserted_count, 3);
    assert_eq!(
        failure.partial_result.inserted_ids.keys().copied().max(),
        Some(4)
    );
    assert_eq!(ids(&db, "books"), [1, 2, 3]);
}

#[test]
fn bulk_write_runs_every_kind_of_write_across_collections() {
    let db = Database::open_in_memory().unwrap();
    let books = books(&db);
    let log = db.collection::<Document>("log");
    books
        .insert_many([
            doc! { "_id": 1, "tags": ["a", "b"], "year": 1965 },
            doc! { "_id": 2, "tags": ["a"], "year": 1972 },
            doc! { "_id": 3, "year": 2001 },
        ])
        .run()
        .unwrap();
    let mut array_update =
        books.update_many_model(doc! { "tags": "a" }, doc! { "$set": { "tags.$[t]": "A" } });
    if let spillway::WriteModel::UpdateMany { array_filters, .. } = &mut array_update {
        *array_filters = Some(vec![doc! { "t": "a" }]);
    }
    let result = db
        .bulk_write([
            array_update,
            books
                .update_one_model(doc! { "_id": 9 }, doc! { "$set": { "year": 2024 } })
                .upsert(true),
            books
                .replace_one_model(doc! { "_id": 3 }, doc! { "title": "Replaced" })
                .unwrap(),
            books.delete_one_model(doc! { "year": { "$lt": 1970 } }),
            log.insert_one_model(doc! { "_id": "entry" }).unwrap(),
            log.delete_many_model(doc! { "_id": "nothing" }),
        ])
        .run()
        .unwrap();
    assert_eq!(
        (
            result.matched_count,
            result.modified_count,
            result.upserted_count,
            result.deleted_count,
            result.inserted_count,
        ),
        (3, 3, 1, 1, 1)
    );
    assert_eq!(
        result.upserted_ids.get(&1),
        Some(&spillway::bson::Bson::Int32(9))
    );
    assert_eq!(
        books.find_one(doc! { "_id": 2 }).run().unwrap().unwrap(),
        doc! { "_id": 2, "tags": ["A"], "year": 1972 }
    );
    assert_eq!(
        books.find_one(doc! { "_id": 3 }).run().unwrap().unwrap(),
        doc! { "_id": 3, "title": "Replaced" }
    );
    assert_eq!(ids(&db, "books"), [2, 3, 9]);
    assert_eq!(log.count_documents(doc! {}).run().unwrap(), 1);

    let empty = db.bulk_write(Vec::new()).run().unwrap_err();
    assert!(
        empty.to_string().contains("at least one operation"),
        "{empty}"
    );
}

#[test]
fn bulk_write_in_a_session_transaction_is_all_or_nothing() {
    let db = Database::open_in_memory().unwrap();
    let books = books(&db);
    books.insert_one(doc! { "_id": 1 }).run().unwrap();
    let mut session = db.start_session().run().unwrap();
    session.start_transaction().run().unwrap();
    let error = db
        .bulk_write([
            books.insert_one_model(doc! { "_id": 2 }).unwrap(),
            books.insert_one_model(doc! { "_id": 1 }).unwrap(),
            books.insert_one_model(doc! { "_id": 3 }).unwrap(),
        ])
        .ordered(false)
        .session(&mut session)
        .run()
        .unwrap_err();
    // In a transaction the first failure dooms it: the rest does not run, nothing commits.
    assert_eq!(
        bulk_failure(&error)
            .write_errors
            .keys()
            .copied()
            .collect::<Vec<_>>(),
        [1]
    );
    assert!(session.commit_transaction().run().is_err());
    assert_eq!(ids(&db, "books"), [1]);

    session.start_transaction().run().unwrap();
    db.bulk_write([
        books.insert_one_model(doc! { "_id": 2 }).unwrap(),
        books.delete_one_model(doc! { "_id": 1 }),
    ])
    .session(&mut session)
    .run()
    .unwrap();
    assert_eq!(ids(&db, "books"), [1]);
    session.commit_transaction().run().unwrap();
    assert_eq!(ids(&db, "books"), [2]);
}

#[test]
fn options_structs_mean_what_the_builder_methods_mean() {
    use spillway::{
        CountOptions, DeleteOptions, FindOneAndUpdateOptions, FindOneOptions, FindOptions,
        InsertManyOptions, ReplaceOptions, ReturnDocument, UpdateOptions,
    };
    let db = Database::open_in_memory().unwrap();
    let books = books(&db);
    let inserted = books
        .insert_many([
            doc! { "_id": 1, "year": 1965, "tags": ["a", "b"] },
            doc! { "_id": 1 },
            doc! { "_id": 2, "year": 1972 },
            doc! { "_id": 3, "year": 2001 },
        ])
        .with_options(InsertManyOptions::builder().ordered(false).build())
        .run()
        .unwrap_err();
    // Unordered: the duplicate fails alone.
    assert_eq!(
        inserted.inserted_ids().map(std::collections::HashMap::len),
        Some(3)
    );

    let found: Vec<i32> = books
        .find(doc! {})
        .with_options(
            FindOptions::builder()
                .sort(doc! { "year": -1 })
                .skip(1_u64)
                .limit(1_i64)
                .projection(doc! { "year": 0 })
                .build(),
        )
        .run()
        .unwrap()
        .map(|document| document.unwrap().get_i32("_id").unwrap())
        .collect();
    assert_eq!(found, [2]);
    let first = books
        .find_one(doc! {})
        .with_options(Some(
            FindOneOptions::builder().sort(doc! { "year": 1 }).build(),
        ))
        .run()
        .unwrap()
        .unwrap();
    assert_eq!(first.get_i32("_id").unwrap(), 1);
    // No options: the action as it was.
    assert_eq!(
        books
            .count_documents(doc! {})
            .with_options(None)
            .run()
            .unwrap(),
        3
    );
    assert_eq!(
        books
            .count_documents(doc! {})
            .with_options(CountOptions::builder().skip(1_u64).limit(1_u64).build())
            .run()
            .unwrap(),
        1
    );

    let upserted = books
        .update_one(doc! { "_id": 9 }, doc! { "$set": { "year": 2024 } })
        .with_options(UpdateOptions::builder().upsert(true).build())
        .run()
        .unwrap();
    assert_eq!(upserted.upserted_id, Some(spillway::bson::Bson::Int32(9)));
    books
        .update_one(doc! { "_id": 1 }, doc! { "$set": { "tags.$[t]": "A" } })
        .with_options(
            UpdateOptions::builder()
                .array_filters(vec![doc! { "t": "a" }])
                .build(),
        )
        .run()
        .unwrap();
    let replaced = books
        .replace_one(doc! { "_id": 10 }, doc! { "title": "New" })
        .with_options(ReplaceOptions::builder().upsert(true).build())
        .run()
        .unwrap();
    assert!(replaced.upserted_id.is_some());
    let after = books
        .find_one_and_update(doc! { "_id": 2 }, doc! { "$inc": { "year": 1 } })
        .with_options(
            FindOneAndUpdateOptions::builder()
                .return_document(ReturnDocument::After)
                .projection(doc! { "_id": 0 })
                .build(),
        )
        .run()
        .unwrap()
        .unwrap();
    assert_eq!(after, doc! { "year": 1973 });
    let collation = spillway::Collation::parse(&doc! { "locale": "en", "strength": 2 }).unwrap();
    books
        .insert_one(doc! { "_id": 11, "title": "DUNE" })
        .run()
        .unwrap();
    let deleted = books
        .delete_one(doc! { "title": "dune" })
        .with_options(DeleteOptions::builder().collation(collation).build())
        .run()
        .unwrap();
    assert_eq!(deleted.deleted_count, 1);
    assert_eq!(
        books.find_one(doc! { "_id": 1 }).run().unwrap().unwrap(),
        doc! { "_id": 1, "year": 1965, "tags": ["A", "b"] }
    );
}
