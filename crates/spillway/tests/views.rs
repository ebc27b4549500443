//! Read-only views through the command layer, as a driver uses them: `create` with `viewOn`
//! and `pipeline`, reads through views (and views on views), `listCollections`, the refusal
//! of writes (166), `drop`, `collMod`, definitions that survive a reopen, and the errors of
//! bad definitions with MongoDB's codes.

use spillway::bson::{Bson, Document, doc};
use spillway::command::Commands;
use spillway::{CollectionOptions, Database, ErrorKind};

fn commands() -> Commands {
    Commands::new(Database::open_in_memory().expect("in-memory database"))
}

/// Runs `command` on database `shop`.
fn run(commands: &Commands, mut command: Document) -> Document {
    if !command.contains_key("$db") {
        command.insert("$db", "shop");
    }
    commands.execute(command)
}

/// Runs `command` and checks it succeeded.
fn ok(commands: &Commands, command: Document) -> Document {
    let shown = command.to_string();
    let reply = run(commands, command);
    assert_eq!(
        reply.get_f64("ok").ok(),
        Some(1.0),
        "{shown} failed: {reply}"
    );
    reply
}

/// Runs `command` and returns the code and message of its failure.
fn fails(commands: &Commands, command: Document) -> (i32, String) {
    let shown = command.to_string();
    let reply = run(commands, command);
    assert_eq!(
        reply.get_f64("ok").ok(),
        Some(0.0),
        "{shown} should fail: {reply}"
    );
    let code = reply.get_i32("code").expect("a failure has a code");
    (code, reply.get_str("errmsg").unwrap_or("").to_string())
}

/// The documents of a cursor reply's first batch.
fn batch(reply: &Document) -> Vec<Document> {
    reply
        .get_document("cursor")
        .and_then(|cursor| cursor.get_array("firstBatch"))
        .expect("a cursor reply")
        .iter()
        .map(|value| value.as_document().expect("documents").clone())
        .collect()
}

fn ids(documents: &[Document]) -> Vec<i32> {
    documents
        .iter()
        .map(|document| document.get_i32("_id").expect("an int _id"))
        .collect()
}

/// `orders` with five documents and the view `big` of those with `total >= 20`, as
/// `{ _id, total }`.
fn shop() -> Commands {
    let commands = commands();
    ok(
        &commands,
        doc! { "insert": "orders", "documents": [
            { "_id": 1, "total": 10, "tags": ["a"], "customer": "ann" },
            { "_id": 2, "total": 20, "tags": ["b", "c"], "customer": "bob" },
            { "_id": 3, "total": 30, "tags": ["a", "c"], "customer": "ann" },
            { "_id": 4, "total": 40, "tags": [], "customer": "cy" },
            { "_id": 5, "total": 50, "tags": ["d"], "customer": "bob" },
        ] },
    );
    ok(
        &commands,
        doc! {
            "create": "big", "viewOn": "orders",
            "pipeline": [{ "$match": { "total": { "$gte": 20 } } }, { "$project": { "customer": 0 } }],
        },
    );
    commands
}

#[test]
fn find_through_a_view_applies_filter_sort_skip_limit_and_projection() {
    let commands = shop();
    let all = batch(&ok(&commands, doc! { "find": "big", "filter": {} }));
    assert_eq!(ids(&all), [2, 3, 4, 5]);
    assert!(
        all.iter()
            .all(|document| !document.contains_key("customer")),
        "the view's $project applies: {all:?}"
    );
    let some = batch(&ok(
        &commands,
        doc! {
            "find": "big", "filter": { "total": { "$lt": 50 } }, "sort": { "total": -1 },
            "skip": 1, "limit": 2, "projection": { "total": 1 },
        },
    ));
    assert_eq!(
        some,
        [
            doc! { "_id": 3, "total": 30 },
            doc! { "_id": 2, "total": 20 }
        ]
    );
}

#[test]
fn a_view_reads_what_its_source_holds_now() {
    let commands = shop();
    ok(
        &commands,
        doc! { "insert": "orders", "documents": [{ "_id": 6, "total": 60 }] },
    );
    let count = ok(&commands, doc! { "count": "big" });
    assert_eq!(count.get_i32("n").ok(), Some(5));
}

#[test]
fn find_through_a_view_pages_with_get_more() {
    let commands = shop();
    let first = ok(&commands, doc! { "find": "big", "batchSize": 3 });
    assert_eq!(ids(&batch(&first)), [2, 3, 4]);
    let cursor = first.get_document("cursor").unwrap();
    assert_eq!(cursor.get_str("ns").ok(), Some("shop.big"));
    let id = cursor.get_i64("id").unwrap();
    let more = ok(&commands, doc! { "getMore": id, "collection": "big" });
    let next = more
        .get_document("cursor")
        .unwrap()
        .get_array("nextBatch")
        .unwrap();
    assert_eq!(next.len(), 1);
}

#[test]
fn count_distinct_and_aggregate_go_through_the_view() {
    let commands = shop();
    let count = ok(
        &commands,
        doc! { "count": "big", "query": { "total": { "$gt": 20 } } },
    );
    assert_eq!(count.get_i32("n").ok(), Some(3));
    let limited = ok(&commands, doc! { "count": "big", "skip": 1, "limit": 2 });
    assert_eq!(limited.get_i32("n").ok(), Some(2));
    let distinct = ok(&commands, doc! { "distinct": "big", "key": "tags" });
    assert_eq!(
        distinct.get_array("values").unwrap(),
        &vec![
            Bson::from("b"),
            Bson::from("c"),
            Bson::from("a"),
            Bson::from("d")
        ]
    );
    let grouped = batch(&ok(
        &commands,
        doc! {
            "aggregate": "big",
            "pipeline": [{ "$group": { "_id": null, "sum": { "$sum": "$total" } } }],
            "cursor": {},
        },
    ));
    assert_eq!(grouped, [doc! { "_id": Bson::Null, "sum": 140 }]);
}

#[test]
fn explain_of_a_find_on_a_view_shows_the_pipeline_on_its_source() {
    let commands = shop();
    let reply = ok(
        &commands,
        doc! { "explain": { "find": "big", "filter": { "total": { "$lt": 40 } } } },
    );
    // The same shape as an `aggregate`'s explain.
    let stages = reply
        .get_document("stages")
        .and_then(|plan| plan.get_array("stages"))
        .expect("the pipeline's stages");
    let cursor = stages[0]
        .as_document()
        .and_then(|stage| stage.get_document("$cursor").ok())
        .expect("a $cursor stage first");
    let planner = cursor.get_document("queryPlanner").unwrap();
    assert_eq!(planner.get_str("namespace").ok(), Some("shop.orders"));
    // The view's leading $match goes to the planner; the find's filter follows its $project.
    assert_eq!(
        planner.get_document("parsedQuery").unwrap(),
        &doc! { "total": { "$gte": 20 } }
    );
    let names: Vec<&str> = stages
        .iter()
        .filter_map(|stage| stage.as_document()?.keys().next().map(String::as_str))
        .collect();
    assert_eq!(names, ["$cursor", "$project", "$match"]);
}

#[test]
fn estimated_document_count_counts_the_views_documents() {
    // Drivers send `count` with no query for estimatedDocumentCount.
    let commands = shop();
    let count = ok(&commands, doc! { "count": "big" });
    assert_eq!(count.get_i32("n").ok(), Some(4));
    let direct = commands
        .database()
        .collection::<Document>("shop.big")
        .estimated_document_count()
        .run()
        .unwrap();
    assert_eq!(direct, 4);
}

#[test]
fn a_view_on_a_view_runs_both_pipelines_innermost_first() {
    let commands = shop();
    ok(
        &commands,
        doc! {
            "create": "bigger", "viewOn": "big",
            "pipeline": [{ "$match": { "total": { "$gte": 40 } } }, { "$addFields": { "double": { "$multiply": ["$total", 2] } } }],
        },
    );
    let found = batch(&ok(
        &commands,
        doc! { "find": "bigger", "projection": { "tags": 0 } },
    ));
    assert_eq!(
        found,
        [
            doc! { "_id": 4, "total": 40, "double": 80 },
            doc! { "_id": 5, "total": 50, "double": 100 },
        ]
    );
    // A view with no pipeline shows its source as it is.
    ok(&commands, doc! { "create": "same", "viewOn": "bigger" });
    assert_eq!(ids(&batch(&ok(&commands, doc! { "find": "same" }))), [4, 5]);
}

#[test]
fn lookup_and_union_with_read_views_too() {
    let commands = shop();
    ok(
        &commands,
        doc! { "insert": "customers", "documents": [{ "_id": "ann" }, { "_id": "bob" }] },
    );
    let joined = batch(&ok(
        &commands,
        doc! {
            "aggregate": "customers",
            "pipeline": [
                { "$lookup": { "from": "big", "localField": "_id", "foreignField": "tags", "as": "none" } },
                { "$unionWith": "big" },
                { "$count": "n" },
            ],
            "cursor": {},
        },
    ));
    assert_eq!(joined, [doc! { "n": 6 }]);
}

#[test]
fn list_collections_shows_views_with_their_definition() {
    let commands = shop();
    let listed = batch(&ok(&commands, doc! { "listCollections": 1 }));
    let view = listed
        .iter()
        .find(|entry| entry.get_str("name").ok() == Some("big"))
        .expect("the view is listed");
    assert_eq!(
        view,
        &doc! {
            "name": "big",
            "type": "view",
            "options": {
                "viewOn": "orders",
                "pipeline": [{ "$match": { "total": { "$gte": 20 } } }, { "$project": { "customer": 0 } }],
            },
            "info": { "readOnly": true },
        }
    );
    let only_views = batch(&ok(
        &commands,
        doc! { "listCollections": 1, "filter": { "type": "view" } },
    ));
    assert_eq!(only_views.len(), 1);
    assert_eq!(only_views[0].get_str("name").ok(), Some("big"));
    let names = batch(&ok(
        &commands,
        doc! { "listCollections": 1, "nameOnly": true, "filter": { "type": "collection" } },
    ));
    assert_eq!(names, [doc! { "name": "orders", "type": "collection" }]);
}

#[test]
fn a_views_lookup_is_listed_with_the_clients_names() {
    let commands = shop();
    ok(
        &commands,
        doc! {
            "create": "joined", "viewOn": "orders",
            "pipeline": [{ "$lookup": { "from": "customers", "localField": "customer", "foreignField": "_id", "as": "who" } }],
        },
    );
    let listed = batch(&ok(
        &commands,
        doc! { "listCollections": 1, "filter": { "name": "joined" } },
    ));
    let pipeline = listed[0]
        .get_document("options")
        .unwrap()
        .get_array("pipeline")
        .unwrap();
    let lookup = pipeline[0]
        .as_document()
        .unwrap()
        .get_document("$lookup")
        .unwrap();
    assert_eq!(lookup.get_str("from").ok(), Some("customers"));
}

#[test]
fn writes_to_a_view_fail_with_command_not_supported_on_view() {
    let commands = shop();
    let message = "Namespace shop.big is a view, not a collection";
    let write_error = |reply: Document| {
        let errors = reply.get_array("writeErrors").expect("a write error");
        let error = errors[0].as_document().unwrap();
        assert_eq!(error.get_i32("code").ok(), Some(166), "{reply}");
        assert_eq!(error.get_str("errmsg").ok(), Some(message));
    };
    write_error(run(
        &commands,
        doc! { "insert": "big", "documents": [{ "_id": 9 }] },
    ));
    write_error(run(
        &commands,
        doc! { "update": "big", "updates": [{ "q": {}, "u": { "$set": { "x": 1 } } }] },
    ));
    write_error(run(
        &commands,
        doc! { "update": "big", "updates": [{ "q": { "_id": 99 }, "u": { "$set": { "x": 1 } }, "upsert": true }] },
    ));
    write_error(run(
        &commands,
        doc! { "delete": "big", "deletes": [{ "q": {}, "limit": 0 }] },
    ));
    assert_eq!(
        fails(
            &commands,
            doc! { "findAndModify": "big", "query": {}, "update": { "$set": { "x": 1 } } },
        ),
        (166, message.to_string())
    );
    assert_eq!(
        fails(
            &commands,
            doc! { "findAndModify": "big", "query": {}, "remove": true }
        ),
        (166, message.to_string())
    );
    let (code, message) = fails(
        &commands,
        doc! { "createIndexes": "big", "indexes": [{ "key": { "total": 1 }, "name": "total_1" }] },
    );
    assert_eq!(
        (code, message.as_str()),
        (166, "Cannot create indexes on a view: shop.big")
    );
    assert_eq!(fails(&commands, doc! { "listIndexes": "big" }).0, 166);
    assert_eq!(
        fails(&commands, doc! { "dropIndexes": "big", "index": "*" }).0,
        166
    );
    // bulkWrite reports the refusal per operation.
    let reply = ok(
        &commands,
        doc! {
            "bulkWrite": 1, "$db": "admin",
            "ops": [{ "insert": 0, "document": { "_id": 9 } }],
            "nsInfo": [{ "ns": "shop.big" }],
        },
    );
    let results = batch(&reply);
    assert_eq!(results[0].get_i32("code").ok(), Some(166), "{reply}");
    // Nothing was written anywhere.
    assert_eq!(
        ok(&commands, doc! { "count": "orders" }).get_i32("n").ok(),
        Some(5)
    );
    assert_eq!(
        ok(&commands, doc! { "count": "big" }).get_i32("n").ok(),
        Some(4)
    );
}

#[test]
fn aggregate_cannot_write_into_a_view() {
    let commands = shop();
    let (code, _) = fails(
        &commands,
        doc! { "aggregate": "orders", "pipeline": [{ "$out": "big" }], "cursor": {} },
    );
    assert_eq!(code, 166);
    let (code, _) = fails(
        &commands,
        doc! { "aggregate": "orders", "pipeline": [{ "$merge": { "into": "big" } }], "cursor": {} },
    );
    assert_eq!(code, 166);
    // But a view's documents can be written to a collection.
    ok(
        &commands,
        doc! { "aggregate": "big", "pipeline": [{ "$out": "copy" }], "cursor": {} },
    );
    assert_eq!(
        ok(&commands, doc! { "count": "copy" }).get_i32("n").ok(),
        Some(4)
    );
}

#[test]
fn drop_removes_only_the_view() {
    let commands = shop();
    let reply = ok(&commands, doc! { "drop": "big" });
    assert_eq!(reply.get_str("ns").ok(), Some("shop.big"));
    let names: Vec<String> = batch(&ok(
        &commands,
        doc! { "listCollections": 1, "nameOnly": true },
    ))
    .iter()
    .map(|entry| entry.get_str("name").unwrap().to_string())
    .collect();
    assert_eq!(names, ["orders"]);
    assert_eq!(
        ok(&commands, doc! { "count": "orders" }).get_i32("n").ok(),
        Some(5)
    );
    // The name is free again: a collection of that name is a collection.
    ok(
        &commands,
        doc! { "insert": "big", "documents": [{ "_id": 1 }] },
    );
    assert_eq!(
        ok(&commands, doc! { "count": "big" }).get_i32("n").ok(),
        Some(1)
    );
}

#[test]
fn dropping_the_source_leaves_an_empty_view() {
    let commands = shop();
    ok(&commands, doc! { "drop": "orders" });
    assert!(batch(&ok(&commands, doc! { "find": "big" })).is_empty());
    ok(
        &commands,
        doc! { "insert": "orders", "documents": [{ "_id": 7, "total": 70 }] },
    );
    assert_eq!(ids(&batch(&ok(&commands, doc! { "find": "big" }))), [7]);
}

#[test]
fn coll_mod_redefines_a_view() {
    let commands = shop();
    ok(
        &commands,
        doc! { "collMod": "big", "pipeline": [{ "$match": { "total": { "$lt": 20 } } }] },
    );
    assert_eq!(ids(&batch(&ok(&commands, doc! { "find": "big" }))), [1]);
    ok(
        &commands,
        doc! { "insert": "archive", "documents": [{ "_id": 100 }] },
    );
    ok(
        &commands,
        doc! { "collMod": "big", "viewOn": "archive", "pipeline": [] },
    );
    assert_eq!(ids(&batch(&ok(&commands, doc! { "find": "big" }))), [100]);
    let listed = batch(&ok(
        &commands,
        doc! { "listCollections": 1, "filter": { "name": "big" } },
    ));
    assert_eq!(
        listed[0].get_document("options").unwrap(),
        &doc! { "viewOn": "archive", "pipeline": [] }
    );
    // A view's options are only its definition; a collection has no definition.
    assert_eq!(
        fails(
            &commands,
            doc! { "collMod": "big", "validator": { "x": 1 } }
        )
        .0,
        72
    );
    assert_eq!(
        fails(&commands, doc! { "collMod": "orders", "viewOn": "archive" }).0,
        72
    );
}

#[test]
fn cycles_are_refused_at_create_and_at_coll_mod() {
    let commands = shop();
    let (code, message) = fails(&commands, doc! { "create": "loop", "viewOn": "loop" });
    assert_eq!(code, 150);
    assert_eq!(message, "View cycle detected: shop.loop => shop.loop");
    ok(&commands, doc! { "create": "a", "viewOn": "orders" });
    ok(&commands, doc! { "create": "b", "viewOn": "a" });
    let (code, message) = fails(&commands, doc! { "collMod": "a", "viewOn": "b" });
    assert_eq!(code, 150);
    assert_eq!(message, "View cycle detected: shop.a => shop.b => shop.a");
    // Through a $lookup too.
    let (code, _) = fails(
        &commands,
        doc! {
            "collMod": "a",
            "pipeline": [{ "$lookup": { "from": "b", "localField": "x", "foreignField": "y", "as": "z" } }],
        },
    );
    assert_eq!(code, 150);
    // The refused change changed nothing.
    assert_eq!(
        ok(&commands, doc! { "count": "b" }).get_i32("n").ok(),
        Some(5)
    );
}

#[test]
fn a_chain_deeper_than_twenty_views_is_refused() {
    let commands = commands();
    ok(&commands, doc! { "create": "v0", "viewOn": "c" });
    for depth in 1..20 {
        ok(
            &commands,
            doc! { "create": format!("v{depth}"), "viewOn": format!("v{}", depth - 1) },
        );
    }
    let (code, _) = fails(&commands, doc! { "create": "v20", "viewOn": "v19" });
    assert_eq!(code, 149);
}

#[test]
fn bad_definitions_are_refused_with_mongodbs_codes() {
    let commands = shop();
    let cases: Vec<(Document, i32)> = vec![
        // The name is taken, by a collection or by a view.
        (doc! { "create": "orders", "viewOn": "x" }, 48),
        (doc! { "create": "big", "viewOn": "orders" }, 48),
        // viewOn is a string naming a collection of the same database.
        (doc! { "create": "v", "viewOn": 5 }, 14),
        (doc! { "create": "v", "viewOn": "" }, 2),
        (doc! { "create": "v", "viewOn": "a$b" }, 73),
        // The pipeline is an array of documents, of stages that exist.
        (
            doc! { "create": "v", "viewOn": "orders", "pipeline": { "$match": {} } },
            14,
        ),
        (
            doc! { "create": "v", "viewOn": "orders", "pipeline": [5] },
            14,
        ),
        (
            doc! { "create": "v", "viewOn": "orders", "pipeline": [{ "$nope": {} }] },
            40324,
        ),
        (doc! { "create": "v", "pipeline": [] }, 72),
        // A view writes nothing.
        (
            doc! { "create": "v", "viewOn": "orders", "pipeline": [{ "$out": "x" }] },
            167,
        ),
        (
            doc! { "create": "v", "viewOn": "orders", "pipeline": [{ "$merge": { "into": "x" } }] },
            167,
        ),
        // Collection options do not go with a view; a view's collation is not supported.
        (
            doc! { "create": "v", "viewOn": "orders", "capped": true, "size": 100 },
            72,
        ),
        (
            doc! { "create": "v", "viewOn": "orders", "validator": { "a": 1 } },
            72,
        ),
        (
            // A view's collation is checked as a collection's (an unknown field: 40415).
            doc! { "create": "v", "viewOn": "orders", "collation": { "locale": "fr", "bogus": 1 } },
            40415,
        ),
    ];
    for (command, code) in cases {
        let shown = command.to_string();
        assert_eq!(fails(&commands, command).0, code, "{shown}");
    }
    let (_, message) = fails(
        &commands,
        doc! { "create": "v", "viewOn": "orders", "pipeline": [{ "$match": {} }, { "$out": "x" }] },
    );
    assert_eq!(
        message,
        "The aggregation stage $out in location 1 of the pipeline cannot be used in the view definition of shop.v because it writes to disk"
    );
    // None of them created anything.
    let names = batch(&ok(
        &commands,
        doc! { "listCollections": 1, "nameOnly": true },
    ));
    assert_eq!(names.len(), 2, "{names:?}");
}

#[test]
fn rename_refuses_views() {
    let commands = shop();
    let (code, message) = fails(
        &commands,
        doc! { "renameCollection": "shop.big", "to": "shop.huge", "$db": "admin" },
    );
    assert_eq!(
        (code, message.as_str()),
        (166, "cannot rename view: shop.big")
    );
    let (code, _) = fails(
        &commands,
        doc! { "renameCollection": "shop.orders", "to": "shop.big", "dropTarget": true, "$db": "admin" },
    );
    assert_eq!(code, 48);
}

#[test]
fn creating_a_view_in_a_transaction_is_refused() {
    let commands = shop();
    let (code, _) = fails(
        &commands,
        doc! {
            "create": "v", "viewOn": "orders",
            "lsid": { "id": 1 }, "txnNumber": 1_i64, "autocommit": false, "startTransaction": true,
        },
    );
    assert_eq!(code, 263);
}

#[test]
fn reads_in_a_transaction_see_its_writes_through_the_view() {
    let commands = shop();
    let lsid = doc! { "id": 7 };
    ok(
        &commands,
        doc! {
            "insert": "orders", "documents": [{ "_id": 8, "total": 80 }],
            "lsid": lsid.clone(), "txnNumber": 1_i64, "autocommit": false, "startTransaction": true,
        },
    );
    let inside = ok(
        &commands,
        doc! { "find": "big", "lsid": lsid.clone(), "txnNumber": 1_i64, "autocommit": false },
    );
    assert_eq!(ids(&batch(&inside)), [2, 3, 4, 5, 8]);
    let outside = ok(&commands, doc! { "find": "big" });
    assert_eq!(ids(&batch(&outside)), [2, 3, 4, 5]);
    ok(
        &commands,
        doc! { "abortTransaction": 1, "$db": "admin", "lsid": lsid, "txnNumber": 1_i64, "autocommit": false },
    );
}

#[test]
fn views_survive_a_reopen() {
    let directory = tempfile::tempdir().unwrap();
    {
        let commands = Commands::new(Database::open(directory.path()).unwrap());
        ok(
            &commands,
            doc! { "insert": "orders", "documents": [{ "_id": 1, "total": 5 }, { "_id": 2, "total": 50 }] },
        );
        ok(
            &commands,
            doc! { "create": "big", "viewOn": "orders", "pipeline": [{ "$match": { "total": { "$gt": 10 } } }] },
        );
        ok(&commands, doc! { "create": "bigger", "viewOn": "big" });
    }
    let commands = Commands::new(Database::open(directory.path()).unwrap());
    assert_eq!(ids(&batch(&ok(&commands, doc! { "find": "bigger" }))), [2]);
    let listed = batch(&ok(
        &commands,
        doc! { "listCollections": 1, "filter": { "type": "view" } },
    ));
    assert_eq!(listed.len(), 2);
    let reply = run(
        &commands,
        doc! { "insert": "big", "documents": [{ "_id": 3 }] },
    );
    let error = reply.get_array("writeErrors").expect("a write error")[0]
        .as_document()
        .unwrap()
        .clone();
    assert_eq!(error.get_i32("code").ok(), Some(166));
    let report = commands.database().verify().unwrap();
    assert!(report.problems.is_empty(), "{:?}", report.problems);
}

#[test]
fn the_facade_refuses_writes_to_a_view_and_reads_through_it() {
    let db = Database::open_in_memory().unwrap();
    let orders = db.collection::<Document>("orders");
    orders
        .insert_many([
            doc! { "_id": 1, "total": 5 },
            doc! { "_id": 2, "total": 50 },
        ])
        .run()
        .unwrap();
    db.create_collection_with(
        "big",
        &CollectionOptions::view(
            "orders",
            vec![doc! { "$match": { "total": { "$gt": 10 } } }],
        ),
    )
    .unwrap();
    let big = db.collection::<Document>("big");
    let found: Vec<Document> = big
        .find(doc! {})
        .run()
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert_eq!(found, [doc! { "_id": 2, "total": 50 }]);
    assert_eq!(big.count_documents(doc! {}).run().unwrap(), 1);
    assert_eq!(
        big.distinct("total", doc! {}).run().unwrap(),
        [Bson::Int32(50)]
    );
    let error = big.insert_one(doc! { "_id": 3 }).run().unwrap_err();
    assert!(
        matches!(error.kind(), ErrorKind::NotSupportedOnView { .. }),
        "{error}"
    );
    assert_eq!(error.code(), Some(166));
    // Even a delete that matches nothing is refused: a view is not a collection.
    let error = big.delete_many(doc! { "_id": 99 }).run().unwrap_err();
    assert_eq!(error.code(), Some(166));
    let options = db.collection_options("big").unwrap().unwrap();
    assert_eq!(options.view_on.as_deref(), Some("orders"));
    big.drop().run().unwrap();
    assert_eq!(db.list_collection_names().run().unwrap(), ["orders"]);
}
