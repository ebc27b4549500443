//! Index options (sparse, partial, hidden, TTL), validators and `collMod`, through the facade
//! and through `Commands::execute`, and their persistence across a reopen.

use std::time::{Duration, Instant};

use spillway::bson::{Bson, DateTime, Document, doc};
use spillway::command::Commands;
use spillway::{
    CollectionOptions, Database, DatabaseOptions, IndexModel, IndexModification, IndexOptions,
    ValidationAction, ValidationLevel,
};

fn index(keys: Document, options: IndexOptions) -> IndexModel {
    IndexModel::builder().keys(keys).options(options).build()
}

/// The winning plan's access stage (below `FETCH` and `SORT`).
fn access_stage(collection: &spillway::Collection<Document>, filter: Document) -> Document {
    let explain = collection.find(filter).explain().unwrap();
    let mut stage = explain.winning_plan;
    while let Ok(input) = stage.get_document("inputStage") {
        stage = input.clone();
    }
    stage
}

fn ids(collection: &spillway::Collection<Document>, filter: Document) -> Vec<Bson> {
    collection
        .find(filter)
        .sort(doc! { "_id": 1 })
        .run()
        .unwrap()
        .map(|document| document.unwrap().get("_id").cloned().unwrap())
        .collect()
}

#[test]
fn a_unique_sparse_index_allows_many_documents_without_the_field() {
    let db = Database::open_in_memory().unwrap();
    let users = db.collection::<Document>("users");
    users
        .create_index(index(
            doc! { "email": 1 },
            IndexOptions::builder().unique(true).sparse(true).build(),
        ))
        .run()
        .unwrap();
    users.insert_one(doc! { "_id": 1 }).run().unwrap();
    users.insert_one(doc! { "_id": 2 }).run().unwrap();
    users
        .insert_one(doc! { "_id": 3, "email": "a@x" })
        .run()
        .unwrap();
    let error = users
        .insert_one(doc! { "_id": 4, "email": "a@x" })
        .run()
        .unwrap_err();
    assert_eq!(error.code(), Some(11000));
    // An explicit null is indexed: a second one is a duplicate.
    users
        .insert_one(doc! { "_id": 5, "email": Bson::Null })
        .run()
        .unwrap();
    assert_eq!(
        users
            .insert_one(doc! { "_id": 6, "email": Bson::Null })
            .run()
            .unwrap_err()
            .code(),
        Some(11000)
    );
    assert_eq!(
        access_stage(&users, doc! { "email": "a@x" })
            .get_str("stage")
            .ok(),
        Some("IXSCAN")
    );
    // A query that matches missing fields cannot use the sparse index.
    assert_eq!(
        access_stage(&users, doc! { "email": Bson::Null })
            .get_str("stage")
            .ok(),
        Some("COLLSCAN")
    );
    assert_eq!(ids(&users, doc! { "email": Bson::Null }).len(), 3);
    let listed = users
        .list_indexes()
        .run()
        .unwrap()
        .collect::<spillway::Result<Vec<_>>>()
        .unwrap();
    assert_eq!(listed[1].options.as_ref().unwrap().sparse, Some(true));
    assert!(db.verify().unwrap().problems.is_empty());
}

#[test]
fn a_partial_index_indexes_only_matching_documents_and_serves_implied_queries() {
    let db = Database::open_in_memory().unwrap();
    let items = db.collection::<Document>("items");
    items
        .create_index(index(
            doc! { "x": 1 },
            IndexOptions::builder()
                .unique(true)
                .partial_filter_expression(doc! { "a": { "$lte": 1.5 } })
                .build(),
        ))
        .run()
        .unwrap();
    items
        .insert_many([
            doc! { "_id": 1, "x": 5, "a": 2 },
            doc! { "_id": 2, "x": 6, "a": 1 },
            // Outside the partial filter: the same x is no duplicate.
            doc! { "_id": 3, "x": 6, "a": 3 },
        ])
        .run()
        .unwrap();
    assert_eq!(
        items
            .insert_one(doc! { "_id": 4, "x": 6, "a": 0 })
            .run()
            .unwrap_err()
            .code(),
        Some(11000)
    );
    for implied in [
        doc! { "x": 6, "a": 1 },
        doc! { "x": { "$gt": 1 }, "a": 1 },
        doc! { "x": 6, "a": { "$lte": 1 } },
        doc! { "x": 6, "a": { "$lt": 1.5 } },
        doc! { "x": 6, "a": { "$in": [0, 1] } },
    ] {
        let stage = access_stage(&items, implied.clone());
        assert_eq!(stage.get_str("stage").ok(), Some("IXSCAN"), "{implied}");
        assert_eq!(stage.get_bool("isPartial").ok(), Some(true), "{implied}");
    }
    for not_implied in [
        doc! { "x": 6 },
        doc! { "x": 6, "a": { "$lte": 1.6 } },
        doc! { "x": 6, "a": { "$gte": 1 } },
        doc! { "x": 6, "$or": [{ "a": 1 }, { "a": 2 }] },
    ] {
        assert_eq!(
            access_stage(&items, not_implied.clone())
                .get_str("stage")
                .ok(),
            Some("COLLSCAN"),
            "{not_implied}"
        );
    }
    assert_eq!(
        ids(&items, doc! { "x": 6 }),
        vec![Bson::Int32(2), Bson::Int32(3)]
    );
    assert_eq!(ids(&items, doc! { "x": 6, "a": 1 }), vec![Bson::Int32(2)]);
    // An update that moves a document out of the filter removes its entry.
    items
        .update_one(doc! { "_id": 2 }, doc! { "$set": { "a": 9 } })
        .run()
        .unwrap();
    items
        .insert_one(doc! { "_id": 5, "x": 6, "a": 0 })
        .run()
        .unwrap();
    assert!(db.verify().unwrap().problems.is_empty());
}

#[test]
fn bad_index_options_are_refused() {
    let db = Database::open_in_memory().unwrap();
    let items = db.collection::<Document>("items");
    let bad_filter = items
        .create_index(index(
            doc! { "x": 1 },
            IndexOptions::builder()
                .partial_filter_expression(doc! { "x": { "$asdasd": 3 } })
                .build(),
        ))
        .run()
        .unwrap_err();
    assert!(bad_filter.to_string().contains("partialFilterExpression"));
    let both = items
        .create_index(index(
            doc! { "x": 1 },
            IndexOptions::builder()
                .sparse(true)
                .partial_filter_expression(doc! { "x": 1 })
                .build(),
        ))
        .run()
        .unwrap_err();
    assert_eq!(both.code(), Some(67));
    let compound_ttl = items
        .create_index(index(
            doc! { "x": 1, "y": 1 },
            IndexOptions::builder()
                .expire_after(Duration::from_secs(5))
                .build(),
        ))
        .run()
        .unwrap_err();
    assert_eq!(compound_ttl.code(), Some(67));
    // The same keys and name with other options conflict.
    items
        .create_index(index(doc! { "x": 1 }, IndexOptions::default()))
        .run()
        .unwrap();
    let conflict = items
        .create_index(index(
            doc! { "x": 1 },
            IndexOptions::builder().sparse(true).build(),
        ))
        .run()
        .unwrap_err();
    assert_eq!(conflict.code(), Some(85));
}

#[test]
fn a_hidden_index_is_kept_up_to_date_but_not_used_until_unhidden() {
    let db = Database::open_in_memory().unwrap();
    let items = db.collection::<Document>("items");
    items
        .create_index(index(
            doc! { "x": 1 },
            IndexOptions::builder().hidden(true).build(),
        ))
        .run()
        .unwrap();
    items
        .insert_many((0..20).map(|i| doc! { "_id": i, "x": i }))
        .run()
        .unwrap();
    assert_eq!(
        access_stage(&items, doc! { "x": 3 }).get_str("stage").ok(),
        Some("COLLSCAN")
    );
    let before = db
        .modify_index("items", "x_1", &IndexModification::default().hidden(false))
        .unwrap();
    assert_eq!(before.hidden, Some(true));
    assert_eq!(
        access_stage(&items, doc! { "x": 3 }).get_str("stage").ok(),
        Some("IXSCAN")
    );
    assert_eq!(ids(&items, doc! { "x": 3 }), vec![Bson::Int32(3)]);
    assert!(db.verify().unwrap().problems.is_empty());
}

#[test]
fn options_survive_a_reopen() {
    let directory = tempfile::tempdir().unwrap();
    {
        let db = Database::open(directory.path()).unwrap();
        let items = db.collection::<Document>("items");
        items
            .create_index(index(
                doc! { "s": 1 },
                IndexOptions::builder().sparse(true).build(),
            ))
            .run()
            .unwrap();
        items
            .create_index(index(
                doc! { "p": 1 },
                IndexOptions::builder()
                    .partial_filter_expression(doc! { "kind": "a" })
                    .hidden(true)
                    .build(),
            ))
            .run()
            .unwrap();
        items
            .create_index(index(
                doc! { "at": 1 },
                IndexOptions {
                    expire_after: Some(Duration::from_secs(3600)),
                    background: Some(true),
                    ..IndexOptions::default()
                },
            ))
            .run()
            .unwrap();
        db.create_collection_with(
            "checked",
            &CollectionOptions::default()
                .validator(doc! { "a": { "$exists": true } })
                .validation_level(ValidationLevel::Moderate),
        )
        .unwrap();
    }
    let db = Database::open(directory.path()).unwrap();
    let listed = db
        .collection::<Document>("items")
        .list_indexes()
        .run()
        .unwrap()
        .collect::<spillway::Result<Vec<_>>>()
        .unwrap();
    let options: Vec<IndexOptions> = listed
        .into_iter()
        .map(|model| model.options.unwrap())
        .collect();
    assert_eq!(options[1].sparse, Some(true));
    assert_eq!(
        options[2].partial_filter_expression,
        Some(doc! { "kind": "a" })
    );
    assert_eq!(options[2].hidden, Some(true));
    assert_eq!(options[3].expire_after, Some(Duration::from_secs(3600)));
    assert_eq!(options[3].background, Some(true));
    let checked = db.collection_options("checked").unwrap().unwrap();
    assert_eq!(checked.validator, Some(doc! { "a": { "$exists": true } }));
    assert_eq!(checked.validation_level, Some(ValidationLevel::Moderate));
    let error = db
        .collection::<Document>("checked")
        .insert_one(doc! { "b": 1 })
        .run()
        .unwrap_err();
    assert_eq!(error.code(), Some(121));
}

fn ago(seconds: i64) -> DateTime {
    DateTime::from_millis(DateTime::now().timestamp_millis() - seconds * 1000)
}

#[test]
fn expired_documents_are_removed_through_the_write_path() {
    let db = Database::open_in_memory().unwrap();
    let sessions = db.collection::<Document>("sessions");
    sessions
        .create_index(index(
            doc! { "at": 1 },
            IndexOptions::builder()
                .expire_after(Duration::from_secs(60))
                .build(),
        ))
        .run()
        .unwrap();
    sessions
        .create_index(index(doc! { "user": 1 }, IndexOptions::default()))
        .run()
        .unwrap();
    sessions
        .insert_many([
            doc! { "_id": 1, "user": "a", "at": ago(120) },
            doc! { "_id": 2, "user": "b", "at": ago(10) },
            // The earliest date of an array counts.
            doc! { "_id": 3, "user": "c", "at": [ago(10), ago(600)] },
            // Not a date: never expires.
            doc! { "_id": 4, "user": "d", "at": "yesterday" },
            doc! { "_id": 5, "user": "e" },
        ])
        .run()
        .unwrap();
    assert_eq!(db.remove_expired().unwrap(), 2);
    assert_eq!(
        ids(&sessions, doc! {}),
        vec![Bson::Int32(2), Bson::Int32(4), Bson::Int32(5)]
    );
    assert!(ids(&sessions, doc! { "user": "a" }).is_empty());
    assert!(db.verify().unwrap().problems.is_empty());
}

#[test]
fn the_background_reaper_deletes_expired_documents() {
    let directory = tempfile::tempdir().unwrap();
    let options = DatabaseOptions::default().ttl_interval(Duration::from_millis(50));
    let db = Database::open_with(directory.path(), &options).unwrap();
    let sessions = db.collection::<Document>("sessions");
    sessions
        .create_index(index(
            doc! { "at": 1 },
            IndexOptions::builder()
                .expire_after(Duration::from_secs(0))
                .build(),
        ))
        .run()
        .unwrap();
    sessions
        .insert_one(doc! { "_id": 1, "at": ago(1) })
        .run()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    while sessions.count_documents(doc! {}).run().unwrap() > 0 {
        assert!(Instant::now() < deadline, "the reaper did not run");
        std::thread::sleep(Duration::from_millis(20));
    }
    drop(sessions);
    drop(db);
    // The reaper keeps no strong handle: the directory can be opened again at once.
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        match Database::open(directory.path()) {
            Ok(_) => break,
            Err(error) => assert!(Instant::now() < deadline, "reopen failed: {error}"),
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn validators_refuse_invalid_writes_unless_bypassed() {
    let db = Database::open_in_memory().unwrap();
    db.create_collection_with(
        "orders",
        &CollectionOptions::default().validator(doc! { "qty": { "$gte": 0 } }),
    )
    .unwrap();
    assert_eq!(
        db.create_collection_with("orders", &CollectionOptions::default())
            .unwrap_err()
            .code(),
        Some(48)
    );
    let orders = db.collection::<Document>("orders");
    orders
        .insert_one(doc! { "_id": 1, "qty": 1 })
        .run()
        .unwrap();
    let refused = orders
        .insert_one(doc! { "_id": 2, "qty": -1 })
        .run()
        .unwrap_err();
    assert_eq!(refused.code(), Some(121));
    assert_eq!(
        orders
            .update_one(doc! { "_id": 1 }, doc! { "$set": { "qty": -5 } })
            .run()
            .unwrap_err()
            .code(),
        Some(121)
    );
    assert_eq!(
        orders
            .find_one_and_update(doc! { "_id": 1 }, doc! { "$unset": { "qty": 1 } })
            .run()
            .unwrap_err()
            .code(),
        Some(121)
    );
    orders
        .insert_one(doc! { "_id": 2, "qty": -1 })
        .bypass_document_validation(true)
        .run()
        .unwrap();
    // Strict: updating an invalid document to another invalid state fails.
    assert!(
        orders
            .update_one(doc! { "_id": 2 }, doc! { "$set": { "note": "x" } })
            .run()
            .is_err()
    );
    // Moderate: documents that were already invalid may be updated.
    db.set_collection_options(
        "orders",
        &CollectionOptions::default().validation_level(ValidationLevel::Moderate),
    )
    .unwrap();
    orders
        .update_one(doc! { "_id": 2 }, doc! { "$set": { "note": "x" } })
        .run()
        .unwrap();
    assert!(
        orders
            .update_one(doc! { "_id": 1 }, doc! { "$set": { "qty": -1 } })
            .run()
            .is_err()
    );
    // Warn: everything goes through.
    db.set_collection_options(
        "orders",
        &CollectionOptions::default().validation_action(ValidationAction::Warn),
    )
    .unwrap();
    orders
        .insert_one(doc! { "_id": 3, "qty": -3 })
        .run()
        .unwrap();
    // An empty validator removes it.
    db.set_collection_options(
        "orders",
        &CollectionOptions::default()
            .validator(Document::new())
            .validation_action(ValidationAction::Error),
    )
    .unwrap();
    orders
        .insert_one(doc! { "_id": 4, "qty": -4 })
        .run()
        .unwrap();
    // A partial index cannot filter on a schema, as in MongoDB.
    let refused_partial = orders
        .create_index(index(
            doc! { "qty": 1 },
            IndexOptions::builder()
                .partial_filter_expression(doc! { "$jsonSchema": { "required": ["qty"] } })
                .build(),
        ))
        .run()
        .unwrap_err();
    assert!(
        refused_partial.to_string().contains("$jsonSchema"),
        "{refused_partial}"
    );
}

/// The schema a Node application declares for its `people` collection.
fn people_schema() -> Document {
    doc! {
        "$jsonSchema": {
            "bsonType": "object",
            "required": ["name", "age"],
            "properties": {
                "name": { "bsonType": "string", "description": "the name, a string" },
                "age": { "bsonType": "int", "minimum": 0 },
            },
        },
    }
}

#[test]
fn a_json_schema_validator_refuses_invalid_writes_unless_bypassed() {
    let db = Database::open_in_memory().unwrap();
    db.create_collection_with(
        "people",
        &CollectionOptions::default().validator(people_schema()),
    )
    .unwrap();
    let people = db.collection::<Document>("people");
    people
        .insert_one(doc! { "_id": 1, "name": "ann", "age": 31 })
        .run()
        .unwrap();
    people
        .insert_one(doc! { "_id": 2, "name": "bob", "age": 0, "tags": ["x"] })
        .run()
        .unwrap();
    for invalid in [
        doc! { "_id": 3, "name": "cy" },
        doc! { "_id": 3, "name": "cy", "age": -1 },
        doc! { "_id": 3, "name": "cy", "age": 31.5 },
        doc! { "_id": 3, "name": 7, "age": 31 },
    ] {
        let refused = people.insert_one(invalid.clone()).run().unwrap_err();
        assert_eq!(refused.code(), Some(121), "{invalid}: {refused}");
    }
    let refused = people
        .insert_many(vec![
            doc! { "_id": 4, "name": "dee", "age": 4 },
            doc! { "_id": 5, "name": "eve" },
        ])
        .run()
        .unwrap_err();
    assert_eq!(refused.code(), Some(121), "{refused}");
    // Ordered, as in MongoDB: the valid document before the refused one is written.
    let refused = people
        .update_one(doc! { "_id": 1 }, doc! { "$set": { "age": -5 } })
        .run()
        .unwrap_err();
    assert_eq!(refused.code(), Some(121));
    let refused = people
        .update_one(doc! { "_id": 1 }, doc! { "$unset": { "name": 1 } })
        .run()
        .unwrap_err();
    assert_eq!(refused.code(), Some(121));
    let refused = people
        .replace_one(doc! { "_id": 2 }, doc! { "name": "bob" })
        .run()
        .unwrap_err();
    assert_eq!(refused.code(), Some(121));
    // Nothing else changed.
    assert_eq!(
        ids(&people, doc! {}),
        vec![Bson::Int32(1), Bson::Int32(2), Bson::Int32(4)]
    );
    assert_eq!(
        people.find_one(doc! { "_id": 1 }).run().unwrap().unwrap(),
        doc! { "_id": 1, "name": "ann", "age": 31 }
    );
    // A valid update goes through; a bypassed invalid insert too.
    people
        .update_one(doc! { "_id": 1 }, doc! { "$inc": { "age": 1 } })
        .run()
        .unwrap();
    people
        .insert_one(doc! { "_id": 6, "name": "fay" })
        .bypass_document_validation(true)
        .run()
        .unwrap();
    // The same schema is a query operator.
    assert_eq!(
        ids(&people, doc! { "$jsonSchema": { "required": ["age"] } }),
        vec![Bson::Int32(1), Bson::Int32(2), Bson::Int32(4)]
    );
    assert_eq!(
        ids(&people, doc! { "$nor": [people_schema()] }),
        vec![Bson::Int32(6)]
    );
    assert_eq!(
        people
            .count_documents(doc! { "$jsonSchema": { "properties": { "age": { "minimum": 1 } } } })
            .run()
            .unwrap(),
        // 1 (32) and 4 (4); 6 has no age, which `properties` does not require.
        3
    );
    // A schema that does not parse is refused with MongoDB's code.
    let refused = db
        .create_collection_with(
            "bad",
            &CollectionOptions::default()
                .validator(doc! { "$jsonSchema": { "bsonType": "object", "requird": ["a"] } }),
        )
        .unwrap_err();
    assert_eq!(refused.code(), Some(9), "{refused}");
    assert!(
        refused
            .to_string()
            .contains("Unknown $jsonSchema keyword: requird"),
        "{refused}"
    );
    let refused = db
        .create_collection_with(
            "bad",
            &CollectionOptions::default().validator(doc! { "$jsonSchema": { "required": "a" } }),
        )
        .unwrap_err();
    assert_eq!(refused.code(), Some(14), "{refused}");
    // The schema survives a reopen of the catalog (set through collMod on an existing
    // collection here).
    db.create_collection_with("later", &CollectionOptions::default())
        .unwrap();
    let later = db.collection::<Document>("later");
    later
        .insert_one(doc! { "_id": 1, "name": "old" })
        .run()
        .unwrap();
    db.set_collection_options(
        "later",
        &CollectionOptions::default().validator(people_schema()),
    )
    .unwrap();
    assert_eq!(
        later
            .insert_one(doc! { "_id": 2, "name": "new" })
            .run()
            .unwrap_err()
            .code(),
        Some(121)
    );
    later
        .insert_one(doc! { "_id": 2, "name": "new", "age": 2 })
        .run()
        .unwrap();
}

#[test]
fn a_json_schema_validator_survives_a_reopen() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    {
        let db = Database::open(&path).unwrap();
        db.create_collection_with(
            "people",
            &CollectionOptions::default().validator(people_schema()),
        )
        .unwrap();
    }
    let db = Database::open(&path).unwrap();
    let people = db.collection::<Document>("people");
    assert_eq!(
        people
            .insert_one(doc! { "_id": 1, "name": "ann" })
            .run()
            .unwrap_err()
            .code(),
        Some(121)
    );
    people
        .insert_one(doc! { "_id": 1, "name": "ann", "age": 1 })
        .run()
        .unwrap();
}

// Through the command layer.

fn run(commands: &Commands, mut command: Document) -> Document {
    command.insert("$db", "shop");
    commands.execute(command)
}

fn ok(commands: &Commands, command: Document) -> Document {
    let shown = command.to_string();
    let reply = run(commands, command);
    assert_eq!(reply.get_f64("ok").ok(), Some(1.0), "{shown}: {reply}");
    reply
}

fn first_batch(reply: &Document) -> Vec<Document> {
    reply
        .get_document("cursor")
        .ok()
        .unwrap()
        .get_array("firstBatch")
        .unwrap()
        .iter()
        .map(|entry| entry.as_document().unwrap().clone())
        .collect()
}

#[test]
fn create_indexes_accepts_index_options_and_list_indexes_echoes_them() {
    let commands = Commands::new(Database::open_in_memory().unwrap());
    ok(
        &commands,
        doc! { "createIndexes": "c", "indexes": [
            { "key": { "a": 1 }, "name": "a_1", "sparse": true, "background": false },
            { "key": { "b": 1 }, "name": "b_1", "partialFilterExpression": { "b": { "$gt": 5 } } },
            { "key": { "c": 1 }, "name": "c_1", "hidden": true, "dropDups": true },
            { "key": { "t": 1 }, "name": "t_1", "expireAfterSeconds": 30 },
        ] },
    );
    let listed = first_batch(&ok(&commands, doc! { "listIndexes": "c" }));
    assert_eq!(listed.len(), 5);
    assert_eq!(listed[1].get_bool("sparse").ok(), Some(true));
    assert_eq!(listed[1].get_bool("background").ok(), Some(false));
    assert_eq!(
        listed[2].get_document("partialFilterExpression").ok(),
        Some(&doc! { "b": { "$gt": 5 } })
    );
    assert_eq!(listed[3].get_bool("hidden").ok(), Some(true));
    assert!(!listed[3].contains_key("dropDups"));
    assert_eq!(listed[4].get_i32("expireAfterSeconds").ok(), Some(30));
    let bad = run(
        &commands,
        doc! { "createIndexes": "c", "indexes": [{ "key": { "x": 1 }, "name": "x_1", "partialFilterExpression": 5 }] },
    );
    assert_eq!(bad.get_f64("ok").ok(), Some(0.0));
    let explain = ok(
        &commands,
        doc! { "explain": { "find": "c", "filter": { "b": 7 } } },
    );
    assert!(
        explain.to_string().contains("\"isPartial\": true"),
        "{explain}"
    );
}

#[test]
fn validators_and_coll_mod_through_commands() {
    let commands = Commands::new(Database::open_in_memory().unwrap());
    ok(
        &commands,
        doc! { "create": "v", "validator": { "a": { "$exists": true } } },
    );
    let listed = first_batch(&ok(
        &commands,
        doc! { "listCollections": 1, "filter": { "name": "v" } },
    ));
    assert_eq!(
        listed[0]
            .get_document("options")
            .ok()
            .unwrap()
            .get_document("validator")
            .ok(),
        Some(&doc! { "a": { "$exists": true } })
    );
    let refused = ok(
        &commands,
        doc! { "insert": "v", "documents": [{ "_id": 1, "x": 1 }] },
    );
    let error = refused.get_array("writeErrors").unwrap()[0]
        .as_document()
        .unwrap()
        .clone();
    assert_eq!(error.get_i32("code").ok(), Some(121));
    assert_eq!(
        error
            .get_document("errInfo")
            .ok()
            .unwrap()
            .get("failingDocumentId"),
        Some(&Bson::Int32(1))
    );
    let bypassed = ok(
        &commands,
        doc! { "insert": "v", "documents": [{ "_id": 1, "x": 1 }], "bypassDocumentValidation": true },
    );
    assert_eq!(bypassed.get_i32("n").ok(), Some(1));
    ok(
        &commands,
        doc! { "collMod": "v", "validator": { "x": { "$exists": true } }, "validationLevel": "strict" },
    );
    ok(
        &commands,
        doc! { "insert": "v", "documents": [{ "_id": 2, "x": 2 }] },
    );
    ok(
        &commands,
        doc! { "createIndexes": "v", "indexes": [{ "key": { "x": 1 }, "name": "x_1" }] },
    );
    let hidden = ok(
        &commands,
        doc! { "collMod": "v", "index": { "keyPattern": { "x": 1 }, "hidden": true } },
    );
    assert_eq!(hidden.get_bool("hidden_old").ok(), Some(false));
    assert_eq!(hidden.get_bool("hidden_new").ok(), Some(true));
    let listed = first_batch(&ok(&commands, doc! { "listIndexes": "v" }));
    assert_eq!(listed[1].get_bool("hidden").ok(), Some(true));
    let missing = run(&commands, doc! { "collMod": "nope", "validator": {} });
    assert_eq!(missing.get_i32("code").ok(), Some(26));
}

#[test]
fn json_schema_validators_through_commands_explain_failures() {
    let commands = Commands::new(Database::open_in_memory().unwrap());
    ok(
        &commands,
        doc! { "create": "people", "validator": people_schema() },
    );
    ok(
        &commands,
        doc! { "insert": "people", "documents": [{ "_id": 1, "name": "ann", "age": 3 }] },
    );
    let refused = ok(
        &commands,
        doc! { "insert": "people", "documents": [{ "_id": 2, "age": -1 }] },
    );
    let error = refused.get_array("writeErrors").unwrap()[0]
        .as_document()
        .unwrap()
        .clone();
    assert_eq!(error.get_i32("code").ok(), Some(121));
    assert_eq!(
        error.get_str("errmsg").ok(),
        Some("Document failed validation")
    );
    let details = error
        .get_document("errInfo")
        .unwrap()
        .get_document("details")
        .unwrap()
        .clone();
    assert_eq!(details.get_str("operatorName").ok(), Some("$jsonSchema"));
    let rules: Vec<&str> = details
        .get_array("schemaRulesNotSatisfied")
        .unwrap()
        .iter()
        .map(|rule| rule.as_document().unwrap().get_str("operatorName").unwrap())
        .collect();
    assert_eq!(rules, ["required", "properties"]);
    // An update that breaks the schema is refused and changes nothing.
    let updated = ok(
        &commands,
        doc! { "update": "people", "updates": [{ "q": { "_id": 1 }, "u": { "$set": { "age": "three" } } }] },
    );
    assert_eq!(updated.get_i32("nModified").ok(), Some(0));
    assert_eq!(
        updated.get_array("writeErrors").unwrap()[0]
            .as_document()
            .unwrap()
            .get_i32("code")
            .ok(),
        Some(121)
    );
    let found = first_batch(&ok(&commands, doc! { "find": "people" }));
    assert_eq!(found, vec![doc! { "_id": 1, "name": "ann", "age": 3 }]);
    // collMod sets a schema; a bad one is refused with its code.
    ok(
        &commands,
        doc! { "collMod": "people", "validator": { "$jsonSchema": { "required": ["email"] } } },
    );
    let refused = ok(
        &commands,
        doc! { "insert": "people", "documents": [{ "_id": 3, "name": "x", "age": 1 }] },
    );
    assert_eq!(
        refused.get_array("writeErrors").unwrap()[0]
            .as_document()
            .unwrap()
            .get_i32("code")
            .ok(),
        Some(121)
    );
    let bad = run(
        &commands,
        doc! { "collMod": "people", "validator": { "$jsonSchema": { "format": "email" } } },
    );
    assert_eq!(bad.get_i32("code").ok(), Some(9), "{bad}");
    // A query-operator validator explains its clause as MongoDB does (more in validation.rs).
    ok(
        &commands,
        doc! { "create": "plain", "validator": { "a": 1 } },
    );
    let refused = ok(
        &commands,
        doc! { "insert": "plain", "documents": [{ "_id": 1, "a": 2 }] },
    );
    let info = refused.get_array("writeErrors").unwrap()[0]
        .as_document()
        .unwrap()
        .get_document("errInfo")
        .unwrap()
        .clone();
    assert_eq!(
        info.get_document("details").ok(),
        Some(&doc! {
            "operatorName": "$eq",
            "specifiedAs": { "a": 1 },
            "reason": "comparison failed",
            "consideredValue": 2,
        }),
        "{info}"
    );
    // find with $jsonSchema through the command layer.
    let found = first_batch(&ok(
        &commands,
        doc! { "find": "people", "filter": { "$jsonSchema": { "properties": { "age": { "bsonType": "int" } } } } },
    ));
    assert_eq!(found.len(), 1);
    let bad = run(
        &commands,
        doc! { "find": "people", "filter": { "$jsonSchema": { "bogus": 1 } } },
    );
    assert_eq!(bad.get_i32("code").ok(), Some(9), "{bad}");
}

#[test]
fn a_capped_collection_keeps_its_newest_documents_within_its_limits() {
    let directory = tempfile::tempdir().unwrap();
    {
        let db = Database::open(directory.path()).unwrap();
        db.create_collection_with(
            "log",
            &CollectionOptions::default().capped(100_000, Some(3)),
        )
        .unwrap();
        let log = db.collection::<Document>("log");
        log.create_index(index(doc! { "x": 1 }, IndexOptions::default()))
            .run()
            .unwrap();
        for x in 1..=5 {
            log.insert_one(doc! { "_id": x, "x": x }).run().unwrap();
        }
        assert_eq!(
            ids(&log, doc! {}),
            vec![Bson::Int32(3), Bson::Int32(4), Bson::Int32(5)]
        );
        assert!(ids(&log, doc! { "x": 1 }).is_empty());
        assert!(db.verify().unwrap().problems.is_empty());
        assert!(
            db.create_collection_with("bad", &{
                let mut options = CollectionOptions::default();
                options.capped = Some(true);
                options
            })
            .is_err()
        );
    }
    let db = Database::open(directory.path()).unwrap();
    let options = db.collection_options("log").unwrap().unwrap();
    assert_eq!(
        (options.capped, options.size, options.max),
        (Some(true), Some(100_000), Some(3))
    );
    let log = db.collection::<Document>("log");
    // The byte limit: each document is about 1 KB.
    db.create_collection_with("small", &CollectionOptions::default().capped(4096, None))
        .unwrap();
    let small = db.collection::<Document>("small");
    for x in 0..10 {
        small
            .insert_one(doc! { "_id": x, "pad": "p".repeat(1000) })
            .run()
            .unwrap();
    }
    let kept = ids(&small, doc! {});
    assert_eq!(kept.len(), 4, "{kept:?}");
    assert_eq!(kept[0], Bson::Int32(6));
    log.insert_one(doc! { "_id": 6, "x": 6 }).run().unwrap();
    assert_eq!(log.count_documents(doc! {}).run().unwrap(), 3);
}

#[test]
fn tailable_cursors_follow_a_capped_collection_through_commands() {
    let commands = Commands::new(Database::open_in_memory().unwrap());
    ok(
        &commands,
        doc! { "create": "tail", "capped": true, "size": 1000, "max": 3 },
    );
    let listed = first_batch(&ok(
        &commands,
        doc! { "listCollections": 1, "filter": { "options.capped": true } },
    ));
    assert_eq!(listed.len(), 1);
    assert_eq!(
        listed[0].get_document("options").ok(),
        Some(&doc! { "capped": true, "size": 1000, "max": 3 })
    );
    ok(
        &commands,
        doc! { "insert": "tail", "documents": [{ "_id": 1 }] },
    );
    let opened = ok(&commands, doc! { "find": "tail", "tailable": true });
    let cursor = opened.get_document("cursor").unwrap();
    let id = cursor.get_i64("id").unwrap();
    assert_ne!(id, 0, "a tailable cursor stays open");
    assert_eq!(first_batch(&opened).len(), 1);
    let more = |commands: &Commands| {
        let reply = ok(commands, doc! { "getMore": id, "collection": "tail" });
        let cursor = reply.get_document("cursor").unwrap().clone();
        (
            cursor.get_i64("id").unwrap(),
            cursor.get_array("nextBatch").unwrap().len(),
        )
    };
    assert_eq!(more(&commands), (id, 0));
    ok(
        &commands,
        doc! { "insert": "tail", "documents": [{ "_id": 2 }] },
    );
    assert_eq!(more(&commands), (id, 1));
    // Roll over: the cursor's last document is gone.
    ok(
        &commands,
        doc! { "insert": "tail", "documents": [{ "_id": 3 }, { "_id": 4 }, { "_id": 5 }] },
    );
    let lost = run(&commands, doc! { "getMore": id, "collection": "tail" });
    assert_eq!(lost.get_i32("code").ok(), Some(136), "{lost}");
    // `$natural` sorts in natural order.
    let sorted = first_batch(&ok(
        &commands,
        doc! { "find": "tail", "sort": { "$natural": -1 } },
    ));
    assert_eq!(sorted[0].get_i32("_id").ok(), Some(5));
    // Not on a plain collection.
    ok(
        &commands,
        doc! { "insert": "plain", "documents": [{ "_id": 1 }] },
    );
    let refused = run(&commands, doc! { "find": "plain", "tailable": true });
    assert_eq!(refused.get_f64("ok").ok(), Some(0.0));
}

#[test]
fn an_await_data_get_more_waits_for_new_documents() {
    let commands = std::sync::Arc::new(Commands::new(Database::open_in_memory().unwrap()));
    ok(
        &commands,
        doc! { "create": "tail", "capped": true, "size": 4096 },
    );
    ok(
        &commands,
        doc! { "insert": "tail", "documents": [{ "_id": 1 }] },
    );
    let opened = ok(
        &commands,
        doc! { "find": "tail", "tailable": true, "awaitData": true },
    );
    let id = opened
        .get_document("cursor")
        .unwrap()
        .get_i64("id")
        .unwrap();
    let started = Instant::now();
    let empty = ok(
        &commands,
        doc! { "getMore": id, "collection": "tail", "maxTimeMS": 200 },
    );
    assert!(started.elapsed() >= Duration::from_millis(150));
    assert!(empty.to_string().contains("\"nextBatch\": []"));
    let writer = {
        let commands = std::sync::Arc::clone(&commands);
        std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(100));
            ok(
                &commands,
                doc! { "insert": "tail", "documents": [{ "_id": 2 }] },
            );
        })
    };
    let started = Instant::now();
    let reply = ok(
        &commands,
        doc! { "getMore": id, "collection": "tail", "maxTimeMS": 5000 },
    );
    writer.join().unwrap();
    assert!(started.elapsed() < Duration::from_secs(4));
    let batch = reply
        .get_document("cursor")
        .unwrap()
        .get_array("nextBatch")
        .unwrap()
        .clone();
    assert_eq!(batch, vec![Bson::Document(doc! { "_id": 2 })]);
}

#[test]
fn a_clustered_collection_is_listed_as_mongodb_lists_it() {
    let commands = Commands::new(Database::open_in_memory().unwrap());
    ok(
        &commands,
        doc! { "create": "c", "clusteredIndex": { "key": { "_id": 1 }, "unique": true, "name": "by id" } },
    );
    let listed = first_batch(&ok(
        &commands,
        doc! { "listCollections": 1, "filter": { "name": "c" } },
    ));
    assert_eq!(
        listed[0].get_document("options").ok(),
        Some(
            &doc! { "clusteredIndex": { "key": { "_id": 1 }, "unique": true, "name": "by id", "v": 2 } }
        )
    );
    let indexes = first_batch(&ok(&commands, doc! { "listIndexes": "c" }));
    assert_eq!(
        indexes,
        vec![
            doc! { "key": { "_id": 1 }, "unique": true, "name": "by id", "v": 2, "clustered": true }
        ]
    );
    let refused = run(
        &commands,
        doc! { "create": "d", "clusteredIndex": { "key": { "a": 1 }, "unique": true } },
    );
    assert_eq!(refused.get_f64("ok").ok(), Some(0.0));
    ok(
        &commands,
        doc! { "create": "e", "changeStreamPreAndPostImages": { "enabled": true } },
    );
}

#[test]
fn a_hashed_index_answers_equality() {
    let db = Database::open_in_memory().unwrap();
    let items = db.collection::<Document>("items");
    let created = items
        .create_index(index(doc! { "a": "hashed" }, IndexOptions::default()))
        .run()
        .unwrap();
    assert_eq!(created.index_name, "a_hashed");
    // Another index on the same field is not the same index.
    items
        .create_index(index(doc! { "a": 1 }, IndexOptions::default()))
        .run()
        .unwrap();
    items
        .insert_many((0..50).map(|i| doc! { "_id": i, "a": i % 10 }))
        .run()
        .unwrap();
    items.drop_index("a_1").run().unwrap();
    let stage = access_stage(&items, doc! { "a": 3.0 });
    assert_eq!(stage.get_str("indexName").ok(), Some("a_hashed"));
    assert_eq!(
        ids(&items, doc! { "a": 3.0 }),
        vec![
            Bson::Int32(3),
            Bson::Int32(13),
            Bson::Int32(23),
            Bson::Int32(33),
            Bson::Int32(43)
        ]
    );
    assert_eq!(ids(&items, doc! { "a": { "$in": [1, 2] } }).len(), 10);
    // Ranges scan the collection.
    assert_eq!(
        access_stage(&items, doc! { "a": { "$gt": 7 } })
            .get_str("stage")
            .ok(),
        Some("COLLSCAN")
    );
    assert_eq!(ids(&items, doc! { "a": { "$gt": 7 } }).len(), 10);
    let array = items
        .insert_one(doc! { "_id": 100, "a": [1, 2] })
        .run()
        .unwrap_err();
    assert!(array.to_string().contains("array"), "{array}");
    assert!(
        items
            .create_index(index(
                doc! { "b": "hashed" },
                IndexOptions::builder().unique(true).build()
            ))
            .run()
            .is_err()
    );
    assert_eq!(
        items
            .list_indexes()
            .run()
            .unwrap()
            .collect::<spillway::Result<Vec<_>>>()
            .unwrap()[1]
            .keys,
        doc! { "a": "hashed" }
    );
    assert!(db.verify().unwrap().problems.is_empty());
}

#[test]
fn several_indexes_are_created_and_dropped_at_once() {
    let db = Database::open_in_memory().unwrap();
    let items = db.collection::<Document>("items");
    items
        .insert_many([
            doc! { "_id": 1, "a": 1, "b": 1 },
            doc! { "_id": 2, "a": 1, "b": 2 },
        ])
        .run()
        .unwrap();
    let names = items
        .create_indexes([
            index(doc! { "a": 1 }, IndexOptions::default()),
            index(
                doc! { "b": -1 },
                IndexOptions::builder().unique(true).build(),
            ),
        ])
        .run()
        .unwrap();
    assert_eq!(names, ["a_1", "b_-1"]);
    // All or none: the second index cannot be built, so neither is created.
    let failed = items
        .create_indexes([
            index(doc! { "c": 1 }, IndexOptions::default()),
            index(
                doc! { "a": 1 },
                IndexOptions::builder()
                    .unique(true)
                    .name("a_unique")
                    .build(),
            ),
        ])
        .run();
    assert!(failed.is_err());
    assert_eq!(
        items.list_index_names().run().unwrap(),
        ["_id_", "a_1", "b_-1"]
    );
    items.drop_indexes().run().unwrap();
    assert_eq!(items.list_index_names().run().unwrap(), ["_id_"]);
}

#[test]
fn a_hint_picks_the_index_or_fails() {
    let db = Database::open_in_memory().unwrap();
    let items = db.collection::<Document>("items");
    items
        .insert_many((0..20).map(|i| doc! { "_id": i, "num": i }))
        .run()
        .unwrap();
    let missing = items
        .find(doc! { "num": 3 })
        .hint(spillway::Hint::Keys(doc! { "num": 1 }))
        .run()
        .unwrap_err();
    assert_eq!(missing.code(), Some(2));
    items
        .create_index(index(doc! { "num": -1 }, IndexOptions::default()))
        .run()
        .unwrap();
    // A full scan of the hinted index, in its order.
    let first = items
        .find(doc! {})
        .hint(spillway::Hint::Keys(doc! { "num": -1_i64 }))
        .run()
        .unwrap()
        .next()
        .unwrap()
        .unwrap();
    assert_eq!(first.get_i32("num").ok(), Some(19));
    let by_name = items
        .find(doc! {})
        .hint(spillway::Hint::Name("num_-1".into()))
        .explain()
        .unwrap();
    assert!(by_name.winning_plan.to_string().contains("num_-1"));
    let natural = items
        .find(doc! { "num": 3 })
        .hint(spillway::Hint::Keys(doc! { "$natural": 1 }))
        .explain()
        .unwrap();
    assert_eq!(natural.winning_plan.get_str("stage").ok(), Some("COLLSCAN"));
    // The `_id` index, which listIndexes shows as `_id_`, is hinted by name or key pattern: a
    // scan in `_id` order (backwards for -1), or point lookups when the filter pins `_id`.
    let nums = |hint: spillway::Hint, filter: Document| -> Vec<i32> {
        items
            .find(filter)
            .hint(hint)
            .run()
            .unwrap()
            .map(|item| item.unwrap().get_i32("num").unwrap())
            .collect()
    };
    let ascending: Vec<i32> = (0..20).collect();
    let descending: Vec<i32> = (0..20).rev().collect();
    assert_eq!(
        nums(spillway::Hint::Name("_id_".into()), doc! {}),
        ascending
    );
    assert_eq!(
        nums(spillway::Hint::Keys(doc! { "_id": 1 }), doc! {}),
        ascending
    );
    assert_eq!(
        nums(spillway::Hint::Keys(doc! { "_id": -1 }), doc! {}),
        descending
    );
    assert_eq!(
        nums(
            spillway::Hint::Keys(doc! { "_id": 1 }),
            doc! { "num": { "$gte": 18 } }
        ),
        [18, 19]
    );
    let pinned = items
        .find(doc! { "_id": { "$in": [first.get("_id").cloned().unwrap()] } })
        .hint(spillway::Hint::Name("_id_".into()))
        .explain()
        .unwrap();
    assert_eq!(pinned.winning_plan.get_str("stage").ok(), Some("IDHACK"));
    assert_eq!(pinned.n_returned, 1);
    db.modify_index(
        "items",
        "num_-1",
        &IndexModification::default().hidden(true),
    )
    .unwrap();
    assert!(
        items
            .find(doc! {})
            .hint(spillway::Hint::Name("num_-1".into()))
            .run()
            .is_err()
    );
}

#[test]
fn a_waiting_get_more_does_not_block_other_cursors_and_can_be_killed() {
    let commands = std::sync::Arc::new(Commands::new(Database::open_in_memory().unwrap()));
    ok(
        &commands,
        doc! { "create": "tail", "capped": true, "size": 4096 },
    );
    ok(
        &commands,
        doc! { "insert": "tail", "documents": [{ "_id": 1 }] },
    );
    let opened = ok(
        &commands,
        doc! { "find": "tail", "tailable": true, "awaitData": true },
    );
    let id = opened
        .get_document("cursor")
        .unwrap()
        .get_i64("id")
        .unwrap();
    let waiting = {
        let commands = std::sync::Arc::clone(&commands);
        std::thread::spawn(move || {
            run(
                &commands,
                doc! { "getMore": id, "collection": "tail", "maxTimeMS": 3000 },
            )
        })
    };
    std::thread::sleep(Duration::from_millis(200));
    let started = Instant::now();
    // Another cursor is served at once, and the waiting one can be killed.
    ok(&commands, doc! { "find": "tail", "filter": {} });
    let killed = ok(&commands, doc! { "killCursors": "tail", "cursors": [id] });
    assert!(started.elapsed() < Duration::from_secs(1));
    assert_eq!(killed.get_array("cursorsKilled").unwrap().len(), 1);
    let reply = waiting.join().unwrap();
    assert_eq!(reply.get_i32("code").ok(), Some(237), "{reply}");
    let gone = run(&commands, doc! { "getMore": id, "collection": "tail" });
    assert_eq!(gone.get_i32("code").ok(), Some(43));
}
