//! The command layer: MongoDB's commands as documents, answered with MongoDB's replies,
//! codes and labels, as a driver sees them over the wire.

use spillway::bson::{Bson, Document, doc};
use spillway::command::Commands;
use spillway::{Database, Pattern};

fn commands() -> Commands {
    Commands::new(Database::open_in_memory().expect("in-memory database"))
}

/// Runs `command` on database `shop` and returns the reply without the cluster time fields.
fn run(commands: &Commands, mut command: Document) -> Document {
    if !command.contains_key("$db") {
        command.insert("$db", "shop");
    }
    let mut reply = commands.execute(command);
    assert!(
        reply.remove("operationTime").is_some(),
        "every reply has an operationTime"
    );
    assert!(
        reply.remove("$clusterTime").is_some(),
        "every reply has a $clusterTime"
    );
    reply
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

/// Runs `command` and returns the code of its failure.
fn fails(commands: &Commands, command: Document) -> (i32, String) {
    let shown = command.to_string();
    let reply = run(commands, command);
    assert_eq!(
        reply.get_f64("ok").ok(),
        Some(0.0),
        "{shown} should fail: {reply}"
    );
    let code = reply.get_i32("code").expect("a failure has a code");
    assert!(
        !reply.get_str("codeName").unwrap_or("").is_empty(),
        "{reply}"
    );
    (code, reply.get_str("errmsg").unwrap_or("").to_string())
}

/// A count field, whichever number type carries it (a double only when whole).
fn number(reply: &Document, field: &str) -> i64 {
    match reply.get(field) {
        Some(Bson::Int32(n)) => i64::from(*n),
        Some(Bson::Int64(n)) => *n,
        Some(Bson::Double(n)) if n.fract() == 0.0 => *n as i64,
        other => panic!("{field} is not a number: {other:?} in {reply}"),
    }
}

fn first_batch(reply: &Document) -> Vec<Bson> {
    reply
        .get_document("cursor")
        .and_then(|cursor| cursor.get_array("firstBatch"))
        .expect("a cursor reply")
        .clone()
}

fn cursor_id(reply: &Document) -> i64 {
    reply
        .get_document("cursor")
        .and_then(|cursor| cursor.get_i64("id"))
        .expect("a cursor id")
}

fn seed(commands: &Commands, n: i32) {
    let documents: Vec<Document> = (0..n).map(|i| doc! { "_id": i, "n": i % 3 }).collect();
    let reply = ok(commands, doc! { "insert": "books", "documents": documents });
    assert_eq!(number(&reply, "n"), i64::from(n));
}

#[test]
fn find_pages_through_get_more_until_the_cursor_is_exhausted() {
    let commands = commands();
    seed(&commands, 10);
    let reply = ok(
        &commands,
        doc! { "find": "books", "filter": {}, "sort": { "_id": -1 }, "batchSize": 4 },
    );
    assert_eq!(first_batch(&reply).len(), 4);
    assert_eq!(
        reply.get_document("cursor").unwrap().get_str("ns").ok(),
        Some("shop.books")
    );
    let id = cursor_id(&reply);
    assert_ne!(id, 0);
    let more = ok(
        &commands,
        doc! { "getMore": id, "collection": "books", "batchSize": 4 },
    );
    let batch = more
        .get_document("cursor")
        .unwrap()
        .get_array("nextBatch")
        .unwrap();
    assert_eq!(batch[0].as_document().unwrap().get_i32("_id").ok(), Some(5));
    let last = ok(&commands, doc! { "getMore": id, "collection": "books" });
    assert_eq!(
        last.get_document("cursor")
            .unwrap()
            .get_array("nextBatch")
            .unwrap()
            .len(),
        2
    );
    assert_eq!(cursor_id(&last), 0);
    let (code, _) = fails(&commands, doc! { "getMore": id, "collection": "books" });
    assert_eq!(code, 43, "an exhausted cursor is gone");
}

#[test]
fn a_full_batch_leaves_the_cursor_open_and_a_reached_limit_closes_it() {
    let commands = commands();
    seed(&commands, 3);
    // As in MongoDB: a batch filled to its size does not look ahead, so the cursor stays
    // open and one more getMore finds the end (drivers' exhaust cursors count on it).
    let reply = ok(&commands, doc! { "find": "books", "batchSize": 3 });
    assert_eq!(first_batch(&reply).len(), 3);
    let id = cursor_id(&reply);
    assert_ne!(id, 0);
    let end = ok(&commands, doc! { "getMore": id, "collection": "books" });
    assert_eq!(cursor_id(&end), 0);
    // A batch that ends short of its size closes the cursor at once.
    let reply = ok(&commands, doc! { "find": "books", "batchSize": 4 });
    assert_eq!(cursor_id(&reply), 0);
    // The batch that reaches the find's limit closes it too.
    let reply = ok(
        &commands,
        doc! { "find": "books", "batchSize": 1, "limit": 2 },
    );
    let id = cursor_id(&reply);
    assert_ne!(id, 0);
    let last = ok(
        &commands,
        doc! { "getMore": id, "collection": "books", "batchSize": 5 },
    );
    assert_eq!(
        last.get_document("cursor")
            .unwrap()
            .get_array("nextBatch")
            .unwrap()
            .len(),
        1
    );
    assert_eq!(cursor_id(&last), 0);
}

#[test]
fn kill_cursors_reports_what_it_killed() {
    let commands = commands();
    seed(&commands, 5);
    let reply = ok(&commands, doc! { "find": "books", "batchSize": 1 });
    let id = cursor_id(&reply);
    let killed = ok(
        &commands,
        doc! { "killCursors": "books", "cursors": [id, 12345_i64] },
    );
    assert_eq!(
        killed.get_array("cursorsKilled").unwrap(),
        &vec![Bson::Int64(id)]
    );
    assert_eq!(
        killed.get_array("cursorsNotFound").unwrap(),
        &vec![Bson::Int64(12345)]
    );
}

#[test]
fn find_options_limit_skip_projection_and_single_batch() {
    let commands = commands();
    seed(&commands, 10);
    let reply = ok(
        &commands,
        doc! { "find": "books", "filter": { "n": 1 }, "skip": 1, "limit": 2, "projection": { "n": 0 } },
    );
    assert_eq!(
        first_batch(&reply),
        vec![
            Bson::Document(doc! { "_id": 4 }),
            Bson::Document(doc! { "_id": 7 })
        ]
    );
    assert_eq!(cursor_id(&reply), 0);
    let single = ok(
        &commands,
        doc! { "find": "books", "batchSize": 3, "singleBatch": true },
    );
    assert_eq!(first_batch(&single).len(), 3);
    assert_eq!(cursor_id(&single), 0);
    let missing = ok(&commands, doc! { "find": "nothing" });
    assert!(first_batch(&missing).is_empty());
}

#[test]
fn duplicate_keys_are_write_errors_with_key_pattern_and_value() {
    let commands = commands();
    seed(&commands, 3);
    let ordered = ok(
        &commands,
        doc! { "insert": "books", "documents": [{ "_id": 10 }, { "_id": 1 }, { "_id": 11 }] },
    );
    assert_eq!(number(&ordered, "n"), 1);
    let errors = ordered.get_array("writeErrors").unwrap();
    assert_eq!(errors.len(), 1);
    let error = errors[0].as_document().unwrap();
    assert_eq!(error.get_i32("index").ok(), Some(1));
    assert_eq!(error.get_i32("code").ok(), Some(11000));
    assert_eq!(
        error.get_document("keyPattern").unwrap(),
        &doc! { "_id": 1 }
    );
    assert_eq!(error.get_document("keyValue").unwrap(), &doc! { "_id": 1 });

    let unordered = ok(
        &commands,
        doc! { "insert": "books", "ordered": false, "documents": [{ "_id": 2 }, { "_id": 20 }, { "_id": 0 }] },
    );
    assert_eq!(number(&unordered, "n"), 1);
    let indexes: Vec<i32> = unordered
        .get_array("writeErrors")
        .unwrap()
        .iter()
        .map(|error| error.as_document().unwrap().get_i32("index").unwrap())
        .collect();
    assert_eq!(indexes, [0, 2]);

    ok(
        &commands,
        doc! { "createIndexes": "editions", "indexes": [{ "key": { "isbn": 1 }, "name": "isbn_1", "unique": true }] },
    );
    ok(
        &commands,
        doc! { "insert": "editions", "documents": [{ "_id": 30, "isbn": "x" }] },
    );
    let reply = ok(
        &commands,
        doc! { "insert": "editions", "documents": [{ "_id": 31, "isbn": "x" }] },
    );
    let error = reply.get_array("writeErrors").unwrap()[0]
        .as_document()
        .unwrap()
        .clone();
    assert_eq!(
        error.get_document("keyPattern").unwrap(),
        &doc! { "isbn": 1 }
    );
    assert_eq!(
        error.get_document("keyValue").unwrap(),
        &doc! { "isbn": "x" }
    );
}

#[test]
fn updates_report_matched_modified_and_upserted() {
    let commands = commands();
    seed(&commands, 6);
    let reply = ok(
        &commands,
        doc! { "update": "books", "updates": [
            { "q": { "n": 0 }, "u": { "$set": { "n": 0 } }, "multi": true },
            { "q": { "n": 1 }, "u": { "$inc": { "n": 10 } }, "multi": true },
            { "q": { "_id": 99 }, "u": { "title": "new" }, "upsert": true },
            { "q": { "_id": 2 }, "u": { "title": "replaced" } },
        ] },
    );
    assert_eq!(number(&reply, "n"), 2 + 2 + 1 + 1);
    assert_eq!(reply.get_i32("nModified").ok(), Some(2 + 1));
    assert_eq!(
        reply.get_array("upserted").unwrap()[0]
            .as_document()
            .unwrap(),
        &doc! { "index": 2, "_id": 99 }
    );
    let found = ok(&commands, doc! { "find": "books", "filter": { "_id": 2 } });
    assert_eq!(
        first_batch(&found),
        vec![Bson::Document(doc! { "_id": 2, "title": "replaced" })]
    );

    let reply = ok(
        &commands,
        doc! { "update": "books", "updates": [{ "q": {}, "u": { "title": "x" }, "multi": true }] },
    );
    let error = reply.get_array("writeErrors").unwrap()[0]
        .as_document()
        .unwrap()
        .clone();
    assert_eq!(error.get_i32("code").ok(), Some(9), "{error}");
}

#[test]
fn deletes_honour_their_limit() {
    let commands = commands();
    seed(&commands, 6);
    let reply = ok(
        &commands,
        doc! { "delete": "books", "deletes": [{ "q": { "n": 0 }, "limit": 1 }, { "q": { "n": 1 }, "limit": 0 }] },
    );
    assert_eq!(number(&reply, "n"), 3);
    let count = ok(&commands, doc! { "count": "books" });
    assert_eq!(number(&count, "n"), 3);
    let reply = ok(
        &commands,
        doc! { "delete": "books", "deletes": [{ "q": {}, "limit": 5 }] },
    );
    let error = reply.get_array("writeErrors").unwrap()[0]
        .as_document()
        .unwrap()
        .clone();
    assert_eq!(error.get_i32("code").ok(), Some(9));
}

#[test]
fn find_and_modify_says_what_it_matched_and_upserted() {
    let commands = commands();
    seed(&commands, 3);
    let reply = ok(
        &commands,
        doc! { "findAndModify": "books", "query": { "_id": 1 }, "update": { "$set": { "t": 1 } } },
    );
    assert_eq!(
        reply.get_document("value").unwrap(),
        &doc! { "_id": 1, "n": 1 }
    );
    assert_eq!(
        reply.get_document("lastErrorObject").unwrap(),
        &doc! { "n": 1, "updatedExisting": true }
    );

    let reply = ok(
        &commands,
        doc! { "findAndModify": "books", "query": { "_id": 7 }, "update": { "$set": { "t": 2 } }, "upsert": true },
    );
    assert_eq!(
        reply.get("value"),
        Some(&Bson::Null),
        "new: false returns the document before: none"
    );
    assert_eq!(
        reply.get_document("lastErrorObject").unwrap(),
        &doc! { "n": 1, "updatedExisting": false, "upserted": 7 }
    );

    let reply = ok(
        &commands,
        doc! { "findAndModify": "books", "query": { "_id": 8 }, "update": { "$set": { "t": 3 } },
        "upsert": true, "new": true, "fields": { "t": 1, "_id": 0 } },
    );
    assert_eq!(reply.get_document("value").unwrap(), &doc! { "t": 3 });

    let reply = ok(
        &commands,
        doc! { "findAndModify": "books", "query": { "n": 2 }, "remove": true },
    );
    assert_eq!(
        reply.get_document("value").unwrap(),
        &doc! { "_id": 2, "n": 2 }
    );
    let (code, _) = fails(
        &commands,
        doc! { "findAndModify": "books", "query": {}, "remove": true, "update": { "$set": { "a": 1 } } },
    );
    assert_eq!(code, 9);

    ok(
        &commands,
        doc! { "createIndexes": "books", "indexes": [{ "key": { "t": 1 }, "name": "t_1", "unique": true }] },
    );
    let (code, _) = fails(
        &commands,
        doc! { "findAndModify": "books", "query": { "_id": 1 }, "update": { "$set": { "t": 3 } } },
    );
    assert_eq!(
        code, 11000,
        "the statement's own error, not the transaction's"
    );
}

#[test]
fn count_distinct_and_aggregate_across_collections_of_one_database() {
    let commands = commands();
    seed(&commands, 6);
    ok(
        &commands,
        doc! { "insert": "authors", "documents": [{ "_id": 0, "name": "zero" }, { "_id": 1, "name": "one" }] },
    );
    assert_eq!(
        number(
            &ok(&commands, doc! { "count": "books", "query": { "n": 1 } }),
            "n"
        ),
        2
    );
    let distinct = ok(&commands, doc! { "distinct": "books", "key": "n" });
    assert_eq!(distinct.get_array("values").unwrap().len(), 3);
    let reply = ok(
        &commands,
        doc! { "aggregate": "books", "cursor": {}, "pipeline": [
            { "$match": { "_id": { "$lt": 2 } } },
            { "$lookup": { "from": "authors", "localField": "_id", "foreignField": "_id", "as": "author" } },
            { "$project": { "name": { "$first": "$author.name" } } },
        ] },
    );
    assert_eq!(
        first_batch(&reply),
        vec![
            Bson::Document(doc! { "_id": 0, "name": "zero" }),
            Bson::Document(doc! { "_id": 1, "name": "one" })
        ]
    );
    ok(
        &commands,
        doc! { "aggregate": "books", "cursor": {}, "pipeline": [{ "$match": { "n": 0 } }, { "$out": "zeros" }] },
    );
    let zeros = ok(&commands, doc! { "count": "zeros" });
    assert_eq!(number(&zeros, "n"), 2);
    let names = ok(&commands, doc! { "listCollections": 1, "nameOnly": true });
    let names: Vec<String> = first_batch(&names)
        .iter()
        .map(|entry| {
            entry
                .as_document()
                .unwrap()
                .get_str("name")
                .unwrap()
                .to_string()
        })
        .collect();
    assert_eq!(names, ["authors", "books", "zeros"]);
    let (code, _) = fails(&commands, doc! { "aggregate": "books", "pipeline": [] });
    assert_eq!(code, 9, "cursor is required");
}

#[test]
fn databases_are_separate_namespaces_of_one_store() {
    let commands = commands();
    ok(
        &commands,
        doc! { "insert": "books", "documents": [{ "_id": 1 }], "$db": "a" },
    );
    ok(
        &commands,
        doc! { "insert": "books", "documents": [{ "_id": 1 }, { "_id": 2 }], "$db": "b" },
    );
    assert_eq!(
        number(&ok(&commands, doc! { "count": "books", "$db": "a" }), "n"),
        1
    );
    assert_eq!(
        number(&ok(&commands, doc! { "count": "books", "$db": "b" }), "n"),
        2
    );
    let listed = ok(
        &commands,
        doc! { "listDatabases": 1, "nameOnly": true, "$db": "admin" },
    );
    assert_eq!(
        listed.get_array("databases").unwrap(),
        &vec![
            Bson::Document(doc! { "name": "a" }),
            Bson::Document(doc! { "name": "admin" }),
            Bson::Document(doc! { "name": "b" })
        ],
        "admin is always there, as on a MongoDB server"
    );
    ok(&commands, doc! { "dropDatabase": 1, "$db": "a" });
    assert_eq!(
        number(&ok(&commands, doc! { "count": "books", "$db": "a" }), "n"),
        0
    );
    assert_eq!(
        commands.database().list_collection_names().run().unwrap(),
        ["b.books"]
    );
    let (code, _) = fails(&commands, doc! { "find": "books", "$db": "bad.name" });
    assert_eq!(code, 73);
    let (code, _) = fails(
        &commands,
        doc! { "insert": "system.users", "documents": [{}] },
    );
    assert_eq!(code, 73);
}

#[test]
fn collections_and_indexes_are_managed_by_commands() {
    let commands = commands();
    ok(&commands, doc! { "create": "books" });
    assert_eq!(fails(&commands, doc! { "create": "books" }).0, 48);
    assert_eq!(
        fails(
            &commands,
            doc! { "create": "secrets", "encryptedFields": { "fields": [] } }
        )
        .0,
        115
    );
    let created = ok(
        &commands,
        doc! { "createIndexes": "books", "indexes": [
            { "key": { "a": 1 }, "name": "a_1" },
            { "key": { "b": -1, "c": 1 }, "name": "b_-1_c_1", "unique": true },
        ] },
    );
    assert_eq!(created.get_i32("numIndexesBefore").ok(), Some(1));
    assert_eq!(created.get_i32("numIndexesAfter").ok(), Some(3));
    let listed = ok(&commands, doc! { "listIndexes": "books" });
    let names: Vec<&str> = first_batch(&listed)
        .iter()
        .map(|index| index.as_document().unwrap().get_str("name").unwrap())
        .map(|name| match name {
            "_id_" => "_id_",
            "a_1" => "a_1",
            _ => "b_-1_c_1",
        })
        .collect();
    assert_eq!(names, ["_id_", "a_1", "b_-1_c_1"]);
    // A collation on an index is supported (command_surface.rs); a bad one is BadValue.
    assert_eq!(fails(&commands, doc! { "createIndexes": "books", "indexes": [{ "key": { "x": 1 }, "name": "x_1", "collation": { "locale": "fr", "strength": 0 } }] }).0, 2);
    assert_eq!(
        fails(&commands, doc! { "dropIndexes": "books", "index": "nope" }).0,
        27
    );
    assert_eq!(
        fails(&commands, doc! { "dropIndexes": "books", "index": "_id_" }).0,
        72
    );
    ok(
        &commands,
        doc! { "dropIndexes": "books", "index": { "a": 1 } },
    );
    let dropped = ok(&commands, doc! { "dropIndexes": "books", "index": "*" });
    assert_eq!(dropped.get_i32("nIndexesWas").ok(), Some(2));
    assert_eq!(fails(&commands, doc! { "listIndexes": "nothing" }).0, 26);

    ok(
        &commands,
        doc! { "insert": "books", "documents": [{ "_id": 1, "a": 1 }] },
    );
    ok(
        &commands,
        doc! { "createIndexes": "books", "indexes": [{ "key": { "a": 1 }, "name": "a_1" }] },
    );
    ok(
        &commands,
        doc! { "renameCollection": "shop.books", "to": "archive.old_books", "$db": "admin" },
    );
    assert_eq!(number(&ok(&commands, doc! { "count": "books" }), "n"), 0);
    let moved = ok(&commands, doc! { "find": "old_books", "$db": "archive" });
    assert_eq!(
        first_batch(&moved),
        vec![Bson::Document(doc! { "_id": 1, "a": 1 })]
    );
    let indexes = ok(
        &commands,
        doc! { "listIndexes": "old_books", "$db": "archive" },
    );
    assert_eq!(first_batch(&indexes).len(), 2);
    let dropped = ok(&commands, doc! { "drop": "old_books", "$db": "archive" });
    assert_eq!(dropped.get_i32("nIndexesWas").ok(), Some(2));
    ok(&commands, doc! { "drop": "never_existed" });
}

/// `renameCollection` of a collection with a policy: the policy and its overflow come along
/// (across databases the overflow moves to the target database), `dropTarget` onto a
/// patterned target drops its policy and overflow as `drop` does, and a side collection is
/// refused naming its policy, as its `drop` is.
#[test]
fn rename_collection_carries_pattern_policies() {
    let commands = commands();
    ok(
        &commands,
        doc! { "setPattern": "sales", "outlier": "buyers", "threshold": 2, "bucketCapacity": 3 },
    );
    ok(
        &commands,
        doc! { "insert": "sales", "documents": [
            { "_id": 1, "buyers": ["a", "b", "c", "d", "e", "f", "g"] },
            { "_id": 2, "buyers": ["h"] },
        ] },
    );
    let logical = first_batch(&ok(
        &commands,
        doc! { "find": "sales", "sort": { "_id": 1 } },
    ));
    ok(
        &commands,
        doc! { "setPattern": "orders", "outlier": "items", "threshold": 1 },
    );
    ok(
        &commands,
        doc! { "insert": "orders", "documents": [{ "_id": 9, "items": [1, 2, 3] }] },
    );
    let listed = |database: &str| -> Vec<String> {
        let reply = ok(
            &commands,
            doc! { "listCollections": 1, "nameOnly": true, "$db": database },
        );
        let mut names: Vec<String> = first_batch(&reply)
            .iter()
            .map(|entry| {
                entry
                    .as_document()
                    .unwrap()
                    .get_str("name")
                    .unwrap()
                    .to_string()
            })
            .collect();
        names.sort();
        names
    };
    assert_eq!(
        listed("shop"),
        ["extra_orders", "extra_sales", "orders", "sales"]
    );

    // A side collection cannot be renamed, nor taken as a name, as it cannot be dropped.
    let (code, message) = fails(
        &commands,
        doc! { "renameCollection": "shop.extra_sales", "to": "shop.overflow", "$db": "admin" },
    );
    assert_eq!(code, 2, "{message}");
    assert!(
        message.contains("policy on shop.sales.buyers")
            && message.contains(
                "'shop.extra_sales' is the policy's side collection and cannot be renamed"
            ),
        "{message}"
    );
    let (code, dropped) = fails(&commands, doc! { "drop": "extra_sales" });
    assert!(
        code == 2 && dropped.contains("cannot be dropped"),
        "{dropped}"
    );
    let (code, message) = fails(
        &commands,
        doc! { "renameCollection": "shop.sales", "to": "shop.extra_orders", "dropTarget": true, "$db": "admin" },
    );
    assert!(
        code == 2 && message.contains("policy on shop.orders.items"),
        "{message}"
    );
    let (code, _) = fails(
        &commands,
        doc! { "renameCollection": "shop.sales", "to": "shop.orders", "$db": "admin" },
    );
    assert_eq!(code, 48);

    // dropTarget onto a collection with a policy: the policy and its overflow go.
    ok(
        &commands,
        doc! { "renameCollection": "shop.sales", "to": "shop.orders", "dropTarget": true, "$db": "admin" },
    );
    assert_eq!(listed("shop"), ["extra_sales", "orders"]);
    let patterns = ok(&commands, doc! { "getPatterns": 1 });
    let patterns = patterns.get_array("patterns").unwrap();
    assert_eq!(patterns.len(), 1, "{patterns:?}");
    let pattern = patterns[0].as_document().unwrap();
    assert_eq!(pattern.get_str("collection").ok(), Some("orders"));
    assert_eq!(
        pattern.get_str("overflowCollection").ok(),
        Some("extra_sales")
    );
    assert_eq!(
        first_batch(&ok(
            &commands,
            doc! { "find": "orders", "sort": { "_id": 1 } }
        )),
        logical
    );
    let stored = first_batch(&ok(
        &commands,
        doc! { "find": "system.stored.orders", "filter": { "_id": 1 } },
    ));
    assert_eq!(
        stored[0]
            .as_document()
            .unwrap()
            .get_array("buyers")
            .unwrap()
            .len(),
        2,
        "still split"
    );
    let verified = ok(&commands, doc! { "verifyPatterns": 1 });
    assert!(
        verified.get_array("violations").unwrap().is_empty(),
        "{verified}"
    );

    // Across databases the overflow moves to the target database with the policy.
    ok(
        &commands,
        doc! { "renameCollection": "shop.orders", "to": "archive.old_orders", "$db": "admin" },
    );
    assert!(listed("shop").is_empty());
    assert_eq!(listed("archive"), ["extra_sales", "old_orders"]);
    let patterns = ok(
        &commands,
        doc! { "getPatterns": "old_orders", "$db": "archive" },
    );
    let pattern = patterns.get_array("patterns").unwrap()[0]
        .as_document()
        .unwrap()
        .clone();
    assert_eq!(
        pattern.get_str("overflowCollection").ok(),
        Some("extra_sales")
    );
    assert_eq!(
        first_batch(&ok(
            &commands,
            doc! { "find": "old_orders", "sort": { "_id": 1 }, "$db": "archive" }
        )),
        logical
    );
    ok(
        &commands,
        doc! { "update": "old_orders", "updates": [{ "q": { "_id": 2 }, "u": { "$push": { "buyers": { "$each": ["i", "j", "k"] } } } }], "$db": "archive" },
    );
    let verified = ok(&commands, doc! { "verifyPatterns": 1, "$db": "archive" });
    assert!(
        verified.get_array("violations").unwrap().is_empty(),
        "{verified}"
    );
    // Dropping the target database takes the policy whole.
    ok(&commands, doc! { "dropDatabase": 1, "$db": "archive" });
    assert!(commands.database().patterns().is_empty());
}

#[test]
fn index_keys_may_be_any_number_above_or_below_zero() {
    // pymongo's backpressure tests create `{ x: 11 }`: MongoDB reads every positive number as
    // ascending and every negative one as descending, and lists the pattern as given.
    let commands = commands();
    ok(
        &commands,
        doc! { "insert": "scores", "documents": [{ "_id": 1, "x": 5 }, { "_id": 2, "x": 9 }, { "_id": 3, "x": 7 }] },
    );
    ok(
        &commands,
        doc! { "createIndexes": "scores", "indexes": [
            { "key": { "x": 11 }, "name": "x_11" },
            { "key": { "x": -2.5 }, "name": "x_-2.5" },
        ] },
    );
    let listed = ok(&commands, doc! { "listIndexes": "scores" });
    let keys: Vec<Document> = first_batch(&listed)
        .iter()
        .map(|index| {
            index
                .as_document()
                .unwrap()
                .get_document("key")
                .unwrap()
                .clone()
        })
        .collect();
    assert_eq!(
        keys,
        [doc! { "_id": 1 }, doc! { "x": 11 }, doc! { "x": -2.5 }]
    );
    let descending = ok(
        &commands,
        doc! { "find": "scores", "sort": { "x": -1 }, "hint": "x_-2.5" },
    );
    let order: Vec<Bson> = first_batch(&descending)
        .iter()
        .map(|found| found.as_document().unwrap().get("x").unwrap().clone())
        .collect();
    assert_eq!(order, [Bson::Int32(9), Bson::Int32(7), Bson::Int32(5)]);
    ok(&commands, doc! { "dropIndexes": "scores", "index": "x_11" });
    for zero in [Bson::Int32(0), Bson::Double(0.0), Bson::Double(f64::NAN)] {
        let (code, message) = fails(
            &commands,
            doc! { "createIndexes": "scores", "indexes": [{ "key": { "y": zero }, "name": "y" }] },
        );
        assert_eq!(code, 67, "{message}");
        assert!(message.contains("field 'y'"), "{message}");
    }
}

#[test]
fn a_namespace_may_be_255_bytes_as_in_mongodb() {
    // pymongo's client bulkWrite tests write to `db.` + 200 `c`s; MongoDB's limit on a whole
    // namespace (`database.collection`) is 255 bytes.
    let commands = commands();
    let longest = "c".repeat(255 - "db.".len());
    ok(
        &commands,
        doc! { "insert": longest.as_str(), "documents": [{ "_id": 1 }], "$db": "db" },
    );
    let found = ok(&commands, doc! { "find": longest.as_str(), "$db": "db" });
    assert_eq!(first_batch(&found), [Bson::Document(doc! { "_id": 1 })]);
    let too_long = "c".repeat(256 - "db.".len());
    let (code, message) = fails(
        &commands,
        doc! { "insert": too_long.as_str(), "documents": [{ "_id": 1 }], "$db": "db" },
    );
    assert_eq!(code, 73, "{message}");
    assert!(message.contains("at most 255 bytes"), "{message}");
}

#[test]
fn pattern_policies_are_commands_too() {
    let commands = commands();
    ok(
        &commands,
        doc! { "insert": "sales", "documents": [{ "_id": 2, "title": "The Wooden Amulet", "customers_purchased": [] }] },
    );
    ok(
        &commands,
        doc! { "setPattern": "sales", "outlier": "customers_purchased", "threshold": 3,
        "overflowCollection": "extra_sales", "linkField": "book_id", "bucketCapacity": 4 },
    );
    assert_eq!(
        commands.database().patterns(),
        vec![Pattern::from(
            Pattern::outlier("shop.sales", "customers_purchased")
                .threshold(3)
                .overflow_collection("shop.extra_sales")
                .link_field("book_id")
                .bucket_capacity(4)
        )],
        "stored under the database's prefix, side collection too"
    );
    for n in 0..10 {
        ok(
            &commands,
            doc! { "update": "sales", "updates": [{ "q": { "_id": 2 }, "u": { "$push": { "customers_purchased": format!("user{n}") } } }] },
        );
    }
    let logical = ok(&commands, doc! { "find": "sales" });
    let logical = first_batch(&logical)[0].as_document().unwrap().clone();
    assert_eq!(logical.get_array("customers_purchased").unwrap().len(), 10);
    assert!(!logical.contains_key("has_extras"), "no flag: {logical}");
    let stored = ok(&commands, doc! { "find": "system.stored.sales" });
    let stored = first_batch(&stored)[0].as_document().unwrap().clone();
    assert_eq!(stored.get_array("customers_purchased").unwrap().len(), 3);
    assert_eq!(stored.get_bool("has_extras").ok(), Some(true));
    let (code, message) = fails(&commands, doc! { "find": "sales", "expand": true });
    assert!(code == 2 && message.contains("system.stored"), "{message}");
    let logical = ok(
        &commands,
        doc! { "count": "sales", "query": { "customers_purchased": "user8" } },
    );
    assert_eq!(number(&logical, "n"), 1);
    let length = ok(
        &commands,
        doc! { "arrayLength": "sales", "_id": 2, "field": "customers_purchased" },
    );
    assert_eq!(length.get_i32("length").ok(), Some(10));
    let page = ok(
        &commands,
        doc! { "arrayPage": "sales", "_id": 2, "field": "customers_purchased", "skip": 4, "limit": 2 },
    );
    assert_eq!(
        page.get_array("elements").unwrap(),
        &vec![Bson::from("user4"), Bson::from("user5")]
    );
    let missing = ok(
        &commands,
        doc! { "arrayLength": "sales", "_id": 99, "field": "customers_purchased" },
    );
    assert_eq!(missing.get("length"), Some(&Bson::Null));
    let listed = ok(&commands, doc! { "getPatterns": "sales" });
    let listed = listed.get_array("patterns").unwrap()[0]
        .as_document()
        .unwrap()
        .clone();
    assert_eq!(listed.get_str("collection").ok(), Some("sales"));
    assert_eq!(
        listed.get_str("overflowCollection").ok(),
        Some("extra_sales")
    );
    assert!(
        ok(&commands, doc! { "verifyPatterns": 1 })
            .get_array("violations")
            .unwrap()
            .is_empty()
    );
    let (code, message) = fails(
        &commands,
        doc! { "setPattern": "sales", "outlier": "x", "thresold": 3 },
    );
    assert_eq!(code, 2);
    assert!(message.contains("thresold"), "{message}");
    ok(
        &commands,
        doc! { "removePattern": "sales", "field": "customers_purchased" },
    );
    let folded = ok(&commands, doc! { "find": "sales" });
    let folded = first_batch(&folded)[0].as_document().unwrap().clone();
    assert_eq!(folded.get_array("customers_purchased").unwrap().len(), 10);
}

#[test]
fn a_retried_write_is_applied_once() {
    let commands = commands();
    let lsid = doc! { "id": Bson::Binary(spillway::bson::Binary { subtype: spillway::bson::spec::BinarySubtype::Uuid, bytes: vec![7; 16] }) };
    let push = doc! {
        "update": "counters", "updates": [{ "q": { "_id": 1 }, "u": { "$inc": { "n": 1 } }, "upsert": true }],
        "lsid": lsid.clone(), "txnNumber": 1_i64,
    };
    let first = ok(&commands, push.clone());
    let retried = ok(&commands, push.clone());
    assert_eq!(first, retried, "the retry gets the first reply");
    let mut next = push.clone();
    next.insert("txnNumber", 2_i64);
    ok(&commands, next);
    let found = ok(&commands, doc! { "find": "counters" });
    assert_eq!(
        first_batch(&found),
        vec![Bson::Document(doc! { "_id": 1, "n": 2 })]
    );
    let (code, _) = fails(&commands, push);
    assert_eq!(code, 225, "an older txnNumber is refused");
}

/// A driver whose first attempt timed out retries while that attempt still runs: the retry
/// waits for it (MongoDB's session checkout) and gets its reply, never writing twice.
#[test]
fn a_retry_arriving_while_the_first_attempt_runs_waits_for_it() {
    let commands = commands();
    let documents: Vec<Bson> = (0..20_000)
        .map(|n| Bson::Document(doc! { "_id": n, "pad": "x".repeat(64) }))
        .collect();
    let insert = doc! {
        "insert": "slow", "documents": documents, "lsid": lsid(9), "txnNumber": 1_i64,
    };
    let replies: Vec<Document> = std::thread::scope(|scope| {
        let attempts: Vec<_> = (0..3)
            .map(|_| scope.spawn(|| run(&commands, insert.clone())))
            .collect();
        attempts
            .into_iter()
            .map(|attempt| attempt.join().expect("an attempt"))
            .collect()
    });
    for reply in &replies {
        assert_eq!(reply, &replies[0], "every attempt gets the one reply");
        assert!(!reply.contains_key("writeErrors"), "{reply}");
        assert_eq!(number(reply, "n"), 20_000, "{reply}");
    }
    let counted = ok(&commands, doc! { "count": "slow" });
    assert_eq!(number(&counted, "n"), 20_000);
}

#[test]
fn malformed_commands_get_mongodbs_parse_errors() {
    let commands = commands();
    assert_eq!(fails(&commands, doc! { "frobnicate": 1 }).0, 59);
    assert_eq!(
        fails(&commands, doc! { "find": "books", "filtre": {} }).0,
        40415
    );
    assert_eq!(
        fails(&commands, doc! { "find": "books", "limit": "ten" }).0,
        14
    );
    assert_eq!(
        fails(
            &commands,
            doc! { "find": "books", "filter": { "$bogus": 1 } }
        )
        .0,
        2
    );
    assert_eq!(fails(&commands, doc! { "insert": "books" }).0, 40414);
    assert_eq!(
        fails(&commands, doc! { "insert": "books", "documents": [] }).0,
        16
    );
    assert_eq!(fails(&commands, doc! { "find": 12 }).0, 73);
    assert_eq!(
        fails(
            &commands,
            doc! { "find": "books", "collation": { "locale": "fr", "strength": 0 } }
        )
        .0,
        2
    );
    let reply = commands.execute(doc! { "find": "books" });
    assert_eq!(
        reply.get_i32("code").ok(),
        Some(40414),
        "a command without $db: {reply}"
    );
    assert_eq!(
        fails(&commands, doc! { "commitTransaction": 1, "$db": "admin" }).0,
        50768
    );
}

#[test]
fn pipeline_updates_compute_fields_from_the_document() {
    let commands = commands();
    ok(
        &commands,
        doc! { "insert": "carts", "documents": [{ "_id": 1, "a": 2, "b": 3 }, { "_id": 2, "a": 10, "b": 1 }] },
    );
    let reply = ok(
        &commands,
        doc! { "update": "carts", "updates": [{ "q": {}, "multi": true, "u": [
            { "$set": { "total": { "$add": ["$a", "$b"] } } },
            { "$unset": "b" },
        ] }] },
    );
    assert_eq!(reply.get_i32("nModified").ok(), Some(2));
    let found = ok(&commands, doc! { "find": "carts" });
    assert_eq!(
        first_batch(&found),
        vec![
            Bson::Document(doc! { "_id": 1, "a": 2, "total": 5 }),
            Bson::Document(doc! { "_id": 2, "a": 10, "total": 11 })
        ]
    );
    let reply = ok(
        &commands,
        doc! { "findAndModify": "carts", "query": { "_id": 1 }, "new": true,
        "update": [{ "$replaceWith": { "only": "$total" } }] },
    );
    assert_eq!(
        reply.get_document("value").unwrap(),
        &doc! { "_id": 1, "only": 5 },
        "_id is kept"
    );
    let reply = ok(
        &commands,
        doc! { "update": "carts", "updates": [{ "q": { "_id": 2 }, "u": [{ "$match": {} }] }] },
    );
    assert_eq!(
        reply.get_array("writeErrors").unwrap().len(),
        1,
        "$match is not an update stage"
    );
    let reply = ok(
        &commands,
        doc! { "update": "carts", "updates": [{ "q": { "_id": 2 }, "u": [{ "$set": { "_id": 3 } }] }] },
    );
    assert_eq!(
        reply.get_array("writeErrors").unwrap().len(),
        1,
        "_id is immutable"
    );
    let reply = ok(
        &commands,
        doc! { "update": "carts", "updates": [{ "q": { "_id": 9, "a": 1 }, "upsert": true, "u": [{ "$set": { "b": { "$multiply": ["$a", 5] } } }] }] },
    );
    assert_eq!(reply.get_array("upserted").unwrap().len(), 1);
    let upserted = ok(&commands, doc! { "find": "carts", "filter": { "_id": 9 } });
    assert_eq!(
        first_batch(&upserted),
        vec![Bson::Document(doc! { "_id": 9, "a": 1, "b": 5 })]
    );
}

/// A session id as drivers make them.
fn lsid(n: u8) -> Document {
    doc! { "id": Bson::Binary(spillway::bson::Binary { subtype: spillway::bson::spec::BinarySubtype::Uuid, bytes: vec![n; 16] }) }
}

/// `command` as part of transaction `txn_number` of session `session`.
fn in_txn(mut command: Document, session: &Document, txn_number: i64, start: bool) -> Document {
    command.insert("lsid", session.clone());
    command.insert("txnNumber", txn_number);
    command.insert("autocommit", false);
    if start {
        command.insert("startTransaction", true);
    }
    command
}

fn end_txn(name: &str, session: &Document, txn_number: i64) -> Document {
    in_txn(doc! { name: 1, "$db": "admin" }, session, txn_number, false)
}

#[test]
fn a_transaction_lives_across_commands_and_commits_atomically() {
    let commands = commands();
    let session = lsid(1);
    ok(
        &commands,
        in_txn(
            doc! { "insert": "a", "documents": [{ "_id": 1 }] },
            &session,
            1,
            true,
        ),
    );
    ok(
        &commands,
        in_txn(
            doc! { "insert": "b", "documents": [{ "_id": 1 }], "$db": "other" },
            &session,
            1,
            false,
        ),
    );
    let inside = ok(&commands, in_txn(doc! { "find": "a" }, &session, 1, false));
    assert_eq!(
        first_batch(&inside).len(),
        1,
        "the transaction reads its own writes"
    );
    assert!(
        first_batch(&ok(&commands, doc! { "find": "a" })).is_empty(),
        "others do not see them yet"
    );
    ok(&commands, end_txn("commitTransaction", &session, 1));
    ok(&commands, end_txn("commitTransaction", &session, 1));
    assert_eq!(first_batch(&ok(&commands, doc! { "find": "a" })).len(), 1);
    assert_eq!(
        first_batch(&ok(&commands, doc! { "find": "b", "$db": "other" })).len(),
        1,
        "across databases"
    );
    assert_eq!(
        fails(&commands, end_txn("abortTransaction", &session, 1)).0,
        256
    );

    ok(
        &commands,
        in_txn(
            doc! { "insert": "a", "documents": [{ "_id": 2 }] },
            &session,
            2,
            true,
        ),
    );
    ok(&commands, end_txn("abortTransaction", &session, 2));
    assert_eq!(
        number(&ok(&commands, doc! { "count": "a" }), "n"),
        1,
        "an aborted transaction leaves nothing"
    );
    let (code, _) = fails(
        &commands,
        in_txn(
            doc! { "insert": "a", "documents": [{ "_id": 3 }] },
            &session,
            2,
            false,
        ),
    );
    assert_eq!(code, 251);
    let (code, _) = fails(&commands, in_txn(doc! { "find": "a" }, &session, 1, true));
    assert_eq!(code, 225, "an older transaction number");
}

#[test]
fn concurrent_transactions_on_one_document_conflict_with_a_transient_label() {
    let commands = commands();
    ok(
        &commands,
        doc! { "insert": "a", "documents": [{ "_id": 1, "n": 0 }] },
    );
    let (first, second) = (lsid(1), lsid(2));
    let bump =
        doc! { "update": "a", "updates": [{ "q": { "_id": 1 }, "u": { "$inc": { "n": 1 } } }] };
    ok(&commands, in_txn(bump.clone(), &first, 1, true));
    let reply = run(&commands, in_txn(bump.clone(), &second, 1, true));
    let refused = match reply.get_f64("ok").ok() {
        Some(0.0) => reply,
        // A conflict found at commit instead.
        _ => run(&commands, end_txn("commitTransaction", &second, 1)),
    };
    ok(&commands, end_txn("commitTransaction", &first, 1));
    assert_eq!(refused.get_i32("code").ok(), Some(112), "{refused}");
    let labels = refused.get_array("errorLabels").expect("labels");
    assert!(
        labels.contains(&Bson::from("TransientTransactionError")),
        "{refused}"
    );
    let found = ok(&commands, doc! { "find": "a" });
    assert_eq!(
        first_batch(&found),
        vec![Bson::Document(doc! { "_id": 1, "n": 1 })]
    );
    // The driver retries the whole transaction: it now succeeds.
    ok(&commands, in_txn(bump, &second, 2, true));
    ok(&commands, end_txn("commitTransaction", &second, 2));
    let found = ok(&commands, doc! { "find": "a" });
    assert_eq!(
        first_batch(&found),
        vec![Bson::Document(doc! { "_id": 1, "n": 2 })]
    );
}

#[test]
fn a_failed_write_aborts_its_transaction() {
    let commands = commands();
    ok(
        &commands,
        doc! { "insert": "a", "documents": [{ "_id": 1 }] },
    );
    let session = lsid(3);
    ok(
        &commands,
        in_txn(
            doc! { "insert": "a", "documents": [{ "_id": 2 }] },
            &session,
            1,
            true,
        ),
    );
    let reply = ok(
        &commands,
        in_txn(
            doc! { "insert": "a", "documents": [{ "_id": 1 }] },
            &session,
            1,
            false,
        ),
    );
    assert_eq!(reply.get_array("writeErrors").unwrap().len(), 1);
    let (code, _) = fails(&commands, end_txn("commitTransaction", &session, 1));
    assert_eq!(code, 251);
    assert_eq!(
        number(&ok(&commands, doc! { "count": "a" }), "n"),
        1,
        "nothing of it was committed"
    );
}

#[test]
fn write_concerns_a_single_node_cannot_meet_are_reported_after_the_write() {
    let commands = commands();
    let reply = ok(
        &commands,
        doc! { "insert": "a", "documents": [{ "_id": 1 }], "writeConcern": { "w": 2 } },
    );
    assert_eq!(
        reply
            .get_document("writeConcernError")
            .unwrap()
            .get_i32("code")
            .ok(),
        Some(100)
    );
    assert_eq!(
        number(&ok(&commands, doc! { "count": "a" }), "n"),
        1,
        "the write itself happened"
    );
    let reply = ok(
        &commands,
        doc! { "insert": "a", "documents": [{ "_id": 2 }], "writeConcern": { "w": "majority" } },
    );
    assert!(!reply.contains_key("writeConcernError"));
    assert_eq!(
        fails(
            &commands,
            doc! { "insert": "a", "documents": [{ "_id": 3 }], "writeConcern": { "w": "dc1" } }
        )
        .0,
        79
    );
    assert_eq!(
        number(&ok(&commands, doc! { "count": "a" }), "n"),
        2,
        "a refused write concern writes nothing"
    );
}

#[test]
fn validate_checks_a_collection() {
    let commands = commands();
    seed(&commands, 5);
    let reply = ok(&commands, doc! { "validate": "books" });
    assert_eq!(reply.get_bool("valid").ok(), Some(true));
    assert_eq!(reply.get_i64("nrecords").ok(), Some(5));
    assert_eq!(fails(&commands, doc! { "validate": "nothing" }).0, 26);
    ok(&commands, doc! { "validate": "books", "background": true });
    assert_eq!(
        fails(
            &commands,
            doc! { "validate": "books", "background": true, "full": true }
        )
        .0,
        72,
        "MongoDB refuses a full validation in the background"
    );
}

#[test]
fn fsync_makes_commits_durable_on_admin_only() {
    let commands = commands();
    seed(&commands, 3);
    let reply = ok(&commands, doc! { "fsync": 1, "$db": "admin" });
    assert_eq!(reply.get_i32("numFiles").ok(), Some(1));
    assert_eq!(fails(&commands, doc! { "fsync": 1 }).0, 13, "not on shop");
    assert_eq!(
        fails(&commands, doc! { "fsync": 1, "lock": true, "$db": "admin" }).0,
        115,
        "Spillway never blocks writers"
    );
    assert_eq!(number(&ok(&commands, doc! { "count": "books" }), "n"), 3);
}

#[test]
fn collations_reach_every_command_and_an_empty_one_is_simple() {
    let commands = commands();
    ok(
        &commands,
        doc! { "insert": "books", "documents": [
            { "_id": 1, "t": "ping" }, { "_id": 2, "t": "PING" }, { "_id": 3, "t": "pong" },
        ] },
    );
    let strength_two = doc! { "locale": "en_US", "strength": 2 };
    let found = ok(
        &commands,
        doc! { "find": "books", "filter": { "t": "Ping" }, "collation": strength_two.clone() },
    );
    assert_eq!(first_batch(&found).len(), 2);
    let counted = ok(
        &commands,
        doc! { "count": "books", "query": { "t": "PING" }, "collation": strength_two.clone() },
    );
    assert_eq!(number(&counted, "n"), 2);
    let updated = ok(
        &commands,
        doc! { "update": "books", "updates": [
            { "q": { "t": "PONG" }, "u": { "$set": { "seen": true } }, "collation": strength_two.clone() },
        ] },
    );
    assert_eq!(number(&updated, "nModified"), 1);
    let modified = ok(
        &commands,
        doc! { "findAndModify": "books", "query": { "t": "pONG" }, "remove": true, "collation": strength_two.clone() },
    );
    assert_eq!(
        modified
            .get_document("value")
            .unwrap()
            .get_i32("_id")
            .unwrap(),
        3
    );
    // `{}` is the simple collation: code point order, "PING" is not "ping".
    let reply = ok(
        &commands,
        doc! { "delete": "books", "deletes": [{ "q": { "t": "PING" }, "limit": 0, "collation": {} }] },
    );
    assert_eq!(number(&reply, "n"), 1);
    let (code, message) = fails(
        &commands,
        doc! { "find": "books", "collation": { "locale": "en_US", "strength": "2" } },
    );
    assert_eq!(code, 2, "{message}");
    assert!(message.contains("strength"), "{message}");
}

fn collection_names(commands: &Commands) -> Vec<String> {
    first_batch(&ok(
        commands,
        doc! { "listCollections": 1, "nameOnly": true },
    ))
    .iter()
    .filter_map(|entry| entry.as_document()?.get_str("name").ok().map(str::to_owned))
    .collect()
}

#[test]
fn create_in_a_transaction_is_invisible_until_commit_and_gone_after_abort() {
    let commands = commands();
    let lsid = doc! { "id": 5 };
    for (txn_number, end, exists_after) in [
        (1_i64, "commitTransaction", true),
        (2, "abortTransaction", false),
    ] {
        let name = format!("created{txn_number}");
        ok(
            &commands,
            doc! {
                "create": name.clone(), "lsid": lsid.clone(), "txnNumber": txn_number,
                "autocommit": false, "startTransaction": true,
            },
        );
        assert!(
            !collection_names(&commands).contains(&name),
            "not before the end"
        );
        ok(
            &commands,
            doc! {
                "createIndexes": name.clone(), "indexes": [{ "key": { "x": 1 }, "name": "x_1" }],
                "lsid": lsid.clone(), "txnNumber": txn_number, "autocommit": false,
            },
        );
        ok(
            &commands,
            doc! {
                end: 1, "$db": "admin", "lsid": lsid.clone(), "txnNumber": txn_number,
                "autocommit": false,
            },
        );
        assert_eq!(
            collection_names(&commands).contains(&name),
            exists_after,
            "{end}"
        );
        if exists_after {
            let indexes = first_batch(&ok(&commands, doc! { "listIndexes": name.clone() }));
            assert_eq!(indexes.len(), 2, "_id_ and x_1: {indexes:?}");
            let count = ok(&commands, doc! { "count": name.clone() });
            assert_eq!(number(&count, "n"), 0, "the collection is empty");
        }
    }
}

#[test]
fn let_variables_reach_filters_and_pipeline_updates_of_every_write() {
    let commands = commands();
    ok(
        &commands,
        doc! { "insert": "t", "documents": [{ "_id": 1, "x": 0 }, { "_id": 2, "x": 0 }, { "_id": 3 }] },
    );
    let by_id = doc! { "$expr": { "$eq": ["$_id", "$$id"] } };
    let reply = ok(
        &commands,
        doc! {
            "update": "t",
            "updates": [{ "q": by_id.clone(), "u": [{ "$set": { "x": "$$x", "y": { "$concat": ["$$x", "!"] } } }] }],
            "let": { "id": 1, "x": "foo" },
        },
    );
    assert_eq!((number(&reply, "n"), number(&reply, "nModified")), (1, 1));
    let found = ok(&commands, doc! { "find": "t", "filter": { "_id": 1 } });
    assert_eq!(
        first_batch(&found),
        [Bson::Document(doc! { "_id": 1, "x": "foo", "y": "foo!" })]
    );
    // A later variable may read an earlier one; `$and` branches see them too.
    let reply = ok(
        &commands,
        doc! {
            "update": "t",
            "updates": [{ "q": { "$and": [{ "$expr": { "$eq": ["$_id", "$$next"] } }] }, "u": { "$set": { "x": 2 } }, "multi": true }],
            "let": { "id": 1, "next": { "$add": ["$$id", 1] } },
        },
    );
    assert_eq!(number(&reply, "n"), 1);
    let reply = ok(
        &commands,
        doc! {
            "findAndModify": "t", "query": by_id.clone(), "update": [{ "$set": { "z": "$$id" } }],
            "new": true, "let": { "id": 2 },
        },
    );
    assert_eq!(
        reply.get_document("value").unwrap(),
        &doc! { "_id": 2, "x": 2, "z": 2 }
    );
    let reply = ok(
        &commands,
        doc! { "delete": "t", "deletes": [{ "q": by_id.clone(), "limit": 1 }], "let": { "id": 3 } },
    );
    assert_eq!(number(&reply, "n"), 1);
    let reply = ok(
        &commands,
        doc! { "findAndModify": "t", "query": by_id, "remove": true, "let": { "id": 1 } },
    );
    assert_eq!(
        reply.get_document("value").unwrap().get_i32("_id").ok(),
        Some(1)
    );
    // MongoDB's rule for variable names.
    let (code, _) = fails(
        &commands,
        doc! { "delete": "t", "deletes": [{ "q": {}, "limit": 1 }], "let": { "Id": 1 } },
    );
    assert_eq!(code, 2);
}

#[test]
fn a_malformed_statement_fails_the_whole_command_before_any_write() {
    let commands = commands();
    ok(
        &commands,
        doc! { "insert": "t", "documents": [{ "_id": 1 }, { "_id": 2 }] },
    );
    let (code, message) = fails(
        &commands,
        doc! {
            "update": "t",
            "updates": [
                { "q": { "_id": 1 }, "u": { "$set": { "a": 1 } } },
                { "q": {}, "u": { "$set": { "a": 2 } }, "bogus": { "_id": -1 } },
            ],
        },
    );
    assert_eq!(code, 40415, "{message}");
    let (code, _) = fails(
        &commands,
        doc! { "delete": "t", "deletes": [{ "q": { "_id": 1 }, "limit": 1 }, { "q": {} }] },
    );
    assert_eq!(code, 40414);
    let found = ok(
        &commands,
        doc! { "count": "t", "query": { "a": { "$exists": true } } },
    );
    assert_eq!(number(&found, "n"), 0, "nothing was written");
    assert_eq!(
        number(&ok(&commands, doc! { "count": "t" }), "n"),
        2,
        "nothing was deleted"
    );
}

#[test]
fn database_level_aggregate_makes_its_own_documents() {
    let commands = commands();
    let reply = ok(
        &commands,
        doc! {
            "aggregate": 1,
            "pipeline": [{ "$documents": [{ "x": 1 }, { "x": 2 }] }, { "$match": { "x": 2 } }],
            "cursor": {},
        },
    );
    assert_eq!(first_batch(&reply), [Bson::Document(doc! { "x": 2 })]);
    assert_eq!(
        reply.get_document("cursor").unwrap().get_str("ns").ok(),
        Some("shop.$cmd.aggregate")
    );
    // The sessions this server holds, the caller's own included, in MongoDB's shape.
    let session = lsid(7);
    let reply = ok(
        &commands,
        doc! {
            "aggregate": 1, "pipeline": [{ "$listLocalSessions": {} }], "cursor": {},
            "lsid": session.clone(), "$db": "admin",
        },
    );
    let sessions = first_batch(&reply);
    let listed = sessions
        .iter()
        .filter_map(Bson::as_document)
        .find(|listed| listed.get_document("_id").unwrap().get("id") == session.get("id"))
        .expect("the caller's session is listed");
    assert!(
        listed.get_document("_id").unwrap().get("uid").is_some(),
        "{listed}"
    );
    assert!(listed.get_datetime("lastUse").is_ok(), "{listed}");
    // `$currentOp` reports the calling command, only on admin.
    let reply = ok(
        &commands,
        doc! { "aggregate": 1, "pipeline": [{ "$currentOp": {} }], "cursor": {}, "$db": "admin" },
    );
    let operation = first_batch(&reply)[0].as_document().unwrap().clone();
    assert_eq!(operation.get_str("type").ok(), Some("op"));
    assert_eq!(operation.get_bool("active").ok(), Some(true));
    assert_eq!(
        operation
            .get_document("command")
            .unwrap()
            .get_i32("aggregate")
            .ok(),
        Some(1)
    );
    let (code, _) = fails(
        &commands,
        doc! { "aggregate": 1, "pipeline": [{ "$currentOp": {} }], "cursor": {} },
    );
    assert_eq!(code, 73);
    // A pipeline that needs a collection is refused.
    let (code, _) = fails(
        &commands,
        doc! { "aggregate": 1, "pipeline": [{ "$match": {} }], "cursor": {} },
    );
    assert_eq!(code, 73);
}

#[test]
fn database_level_aggregate_writes_with_out_and_merge() {
    let commands = commands();
    ok(
        &commands,
        doc! {
            "aggregate": 1,
            "pipeline": [{ "$documents": [{ "_id": 1, "x": 1 }] }, { "$out": "copy" }],
            "cursor": {},
        },
    );
    let found = ok(&commands, doc! { "find": "copy", "filter": {} });
    assert_eq!(
        first_batch(&found),
        [Bson::Document(doc! { "_id": 1, "x": 1 })]
    );
    // A `$merge` that fails on an existing `_id` reports the key, as MongoDB does.
    let reply = run(
        &commands,
        doc! {
            "aggregate": 1,
            "pipeline": [{ "$documents": [{ "_id": 1, "x": 2 }] }, { "$merge": { "into": "copy", "whenMatched": "fail" } }],
            "cursor": {},
        },
    );
    assert_eq!(reply.get_i32("code").ok(), Some(11000), "{reply}");
    // Output documents without `_id` get one, as MongoDB's `$merge` gives them.
    ok(
        &commands,
        doc! {
            "aggregate": 1,
            "pipeline": [{ "$documents": [{ "y": 1 }] }, { "$merge": { "into": { "db": "other", "coll": "merged" } } }],
            "cursor": {},
        },
    );
    let found = ok(
        &commands,
        doc! { "find": "merged", "filter": {}, "$db": "other" },
    );
    let merged = first_batch(&found)[0].as_document().unwrap().clone();
    assert!(merged.get_object_id("_id").is_ok(), "{merged}");
    assert_eq!(merged.get_i32("y").ok(), Some(1));
    assert_eq!(
        reply.get_document("keyPattern").ok(),
        Some(&doc! { "_id": 1 })
    );
    assert_eq!(
        reply.get_document("keyValue").ok(),
        Some(&doc! { "_id": 1 })
    );
}

#[test]
fn linearizable_reads_cannot_write_with_out() {
    let commands = commands();
    ok(
        &commands,
        doc! { "insert": "t", "documents": [{ "_id": 1 }] },
    );
    let (code, _) = fails(
        &commands,
        doc! {
            "aggregate": "t", "pipeline": [{ "$out": "copy" }], "cursor": {},
            "readConcern": { "level": "linearizable" },
        },
    );
    assert_eq!(code, 72);
    ok(
        &commands,
        doc! {
            "aggregate": "t", "pipeline": [{ "$match": {} }], "cursor": {},
            "readConcern": { "level": "linearizable" },
        },
    );
}

#[test]
fn dollar_prefixed_field_names_are_stored_as_mongodb_5_stores_them() {
    let commands = commands();
    ok(
        &commands,
        doc! { "insert": "t", "documents": [{ "_id": 1, "$a": 1, "b": { "$c": 2 } }] },
    );
    ok(
        &commands,
        doc! { "update": "t", "updates": [{ "q": { "_id": 1 }, "u": { "_id": 1, "a": { "$b": 3 } } }] },
    );
    ok(
        &commands,
        doc! {
            "update": "t",
            "updates": [{ "q": { "_id": 1 }, "u": [
                { "$set": { "a": { "$setField": { "field": { "$literal": "$d" }, "value": 4, "input": "$a" } } } },
            ] }],
        },
    );
    let found = ok(&commands, doc! { "find": "t", "filter": {} });
    assert_eq!(
        first_batch(&found),
        [Bson::Document(doc! { "_id": 1, "a": { "$b": 3, "$d": 4 } })]
    );
    // Still refused: `$` names inside `_id`, and update operators storing them.
    let reply = ok(
        &commands,
        doc! { "insert": "t", "documents": [{ "_id": { "$a": 1 } }] },
    );
    assert!(reply.get_array("writeErrors").is_ok(), "{reply}");
    let reply = ok(
        &commands,
        doc! { "update": "t", "updates": [{ "q": { "_id": 1 }, "u": { "$set": { "e": { "$f": 1 } } } }] },
    );
    assert!(reply.get_array("writeErrors").is_ok(), "{reply}");
}

#[test]
fn snapshot_reads_of_a_session_see_the_state_of_their_cluster_time() {
    let commands = commands();
    ok(
        &commands,
        doc! { "insert": "t", "documents": [{ "_id": 1, "x": 1 }] },
    );
    let session = lsid(9);
    let snapshot = doc! { "level": "snapshot" };
    let reply = ok(
        &commands,
        doc! {
            "distinct": "t", "key": "x", "lsid": session.clone(), "readConcern": snapshot,
        },
    );
    let Some(Bson::Timestamp(at)) = reply.get("atClusterTime").cloned() else {
        panic!("a snapshot read says when it read: {reply}");
    };
    // A write after the snapshot is not seen by the session's reads at that time.
    ok(
        &commands,
        doc! { "insert": "t", "documents": [{ "_id": 2, "x": 2 }] },
    );
    let at_snapshot = doc! { "level": "snapshot", "atClusterTime": at };
    let reply = ok(
        &commands,
        doc! {
            "find": "t", "filter": {}, "lsid": session.clone(), "readConcern": at_snapshot.clone(),
        },
    );
    assert_eq!(
        first_batch(&reply),
        [Bson::Document(doc! { "_id": 1, "x": 1 })]
    );
    assert_eq!(
        reply.get_document("cursor").unwrap().get("atClusterTime"),
        Some(&Bson::Timestamp(at))
    );
    let reply = ok(
        &commands,
        doc! {
            "aggregate": "t", "pipeline": [{ "$count": "n" }], "cursor": {},
            "lsid": session.clone(), "readConcern": at_snapshot.clone(),
        },
    );
    assert_eq!(first_batch(&reply), [Bson::Document(doc! { "n": 1 })]);
    // A cursor's getMore continues its snapshot, read concern repeated or not.
    let reply = ok(
        &commands,
        doc! {
            "find": "t", "filter": {}, "batchSize": 0, "lsid": session.clone(),
            "readConcern": at_snapshot.clone(),
        },
    );
    let more = ok(
        &commands,
        doc! {
            "getMore": cursor_id(&reply), "collection": "t", "lsid": session.clone(),
            "readConcern": at_snapshot.clone(),
        },
    );
    assert_eq!(
        more.get_document("cursor")
            .unwrap()
            .get_array("nextBatch")
            .unwrap(),
        &vec![Bson::Document(doc! { "_id": 1, "x": 1 })]
    );
    // Another session holds no snapshot of that time.
    let (code, _) = fails(
        &commands,
        doc! { "find": "t", "filter": {}, "lsid": lsid(10), "readConcern": at_snapshot.clone() },
    );
    assert_eq!(code, 239);
    // Writes cannot read at snapshot outside a transaction.
    let (code, _) = fails(
        &commands,
        doc! {
            "insert": "t", "documents": [{ "_id": 3 }], "lsid": session.clone(),
            "readConcern": { "level": "snapshot" },
        },
    );
    assert_eq!(code, 72);
    let (code, _) = fails(
        &commands,
        doc! {
            "aggregate": "t", "pipeline": [{ "$out": "copy" }], "cursor": {},
            "lsid": session, "readConcern": { "level": "snapshot" },
        },
    );
    assert_eq!(code, 72);
}

#[test]
fn single_document_updates_take_mongodb_8_sort() {
    let commands = commands();
    ok(
        &commands,
        doc! { "insert": "t", "documents": [{ "_id": 1 }, { "_id": 2 }, { "_id": 3 }] },
    );
    let reply = ok(
        &commands,
        doc! { "update": "t", "updates": [{ "q": { "_id": { "$gt": 1 } }, "u": { "$set": { "x": 1 } }, "sort": { "_id": -1 } }] },
    );
    assert_eq!(number(&reply, "nModified"), 1);
    ok(
        &commands,
        doc! { "update": "t", "updates": [{ "q": {}, "u": { "y": 1 }, "sort": { "_id": -1 } }] },
    );
    let found = ok(
        &commands,
        doc! { "find": "t", "filter": {}, "sort": { "_id": 1 } },
    );
    assert_eq!(
        first_batch(&found),
        [
            Bson::Document(doc! { "_id": 1 }),
            Bson::Document(doc! { "_id": 2 }),
            Bson::Document(doc! { "_id": 3, "y": 1 }),
        ]
    );
    let reply = ok(
        &commands,
        doc! { "update": "t", "updates": [{ "q": {}, "u": { "$set": { "z": 1 } }, "multi": true, "sort": { "_id": 1 } }] },
    );
    let error = reply.get_array("writeErrors").unwrap()[0]
        .as_document()
        .unwrap()
        .clone();
    assert_eq!(error.get_i32("code").ok(), Some(72));
}

#[test]
fn bulk_write_runs_operations_on_many_namespaces_with_a_result_each() {
    let commands = commands();
    ok(
        &commands,
        doc! { "insert": "a", "documents": [{ "_id": 1, "x": 1 }, { "_id": 2, "x": 2 }] },
    );
    let bulk = |ops: Vec<Document>, ordered: bool, errors_only: bool| {
        doc! {
            "bulkWrite": 1, "$db": "admin", "ops": ops, "ordered": ordered, "errorsOnly": errors_only,
            "nsInfo": [{ "ns": "shop.a" }, { "ns": "other.b" }],
        }
    };
    let reply = ok(
        &commands,
        bulk(
            vec![
                doc! { "insert": 1, "document": { "_id": 10 } },
                doc! { "update": 0, "filter": { "_id": 1 }, "updateMods": { "$inc": { "x": 1 } } },
                doc! { "update": 0, "filter": { "_id": 9 }, "updateMods": { "x": 9 }, "upsert": true },
                doc! { "delete": 0, "filter": { "_id": 2 } },
            ],
            true,
            false,
        ),
    );
    for (field, expected) in [
        ("nErrors", 0),
        ("nInserted", 1),
        ("nMatched", 1),
        ("nModified", 1),
        ("nUpserted", 1),
        ("nDeleted", 1),
    ] {
        assert_eq!(number(&reply, field), expected, "{field} in {reply}");
    }
    let results = first_batch(&reply);
    assert_eq!(
        results,
        [
            Bson::Document(doc! { "ok": 1.0, "idx": 0, "n": 1 }),
            Bson::Document(doc! { "ok": 1.0, "idx": 1, "n": 1, "nModified": 1 }),
            Bson::Document(
                doc! { "ok": 1.0, "idx": 2, "n": 1, "nModified": 0, "upserted": { "_id": 9 } }
            ),
            Bson::Document(doc! { "ok": 1.0, "idx": 3, "n": 1 }),
        ]
    );
    assert_eq!(
        reply.get_document("cursor").unwrap().get_str("ns").ok(),
        Some("admin.$cmd.bulkWrite")
    );
    let found = ok(
        &commands,
        doc! { "find": "b", "filter": {}, "$db": "other" },
    );
    assert_eq!(first_batch(&found), [Bson::Document(doc! { "_id": 10 })]);
    // Ordered, the first error stops the batch; unordered, the rest runs. errorsOnly shows
    // only the errors.
    let ops = vec![
        doc! { "insert": 0, "document": { "_id": 1 } },
        doc! { "insert": 0, "document": { "_id": 20 } },
    ];
    let reply = ok(&commands, bulk(ops.clone(), true, false));
    assert_eq!(
        (number(&reply, "nErrors"), number(&reply, "nInserted")),
        (1, 0)
    );
    let error = first_batch(&reply)[0].as_document().unwrap().clone();
    assert_eq!(error.get_f64("ok").ok(), Some(0.0));
    assert_eq!(error.get_i32("code").ok(), Some(11000));
    assert_eq!(
        error.get_document("keyValue").ok(),
        Some(&doc! { "_id": 1 })
    );
    let reply = ok(&commands, bulk(ops, false, true));
    assert_eq!(
        (number(&reply, "nErrors"), number(&reply, "nInserted")),
        (1, 1)
    );
    assert_eq!(first_batch(&reply).len(), 1, "{reply}");
    // Only on admin.
    let mut elsewhere = bulk(vec![doc! { "insert": 0, "document": {} }], true, false);
    elsewhere.insert("$db", "shop");
    assert_eq!(fails(&commands, elsewhere).0, 13);
}

#[test]
fn change_streams_are_tailable_cursors_of_collection_and_database_events() {
    let commands = commands();
    ok(&commands, doc! { "create": "books" });
    let opened = ok(
        &commands,
        doc! { "aggregate": "books", "pipeline": [{ "$changeStream": {} }], "cursor": {} },
    );
    let id = cursor_id(&opened);
    assert_ne!(id, 0, "a change stream's cursor stays open");
    assert!(first_batch(&opened).is_empty());
    let start = opened
        .get_document("cursor")
        .unwrap()
        .get_document("postBatchResumeToken")
        .expect("a change stream's batches carry the token to resume after them")
        .clone();
    let whole = ok(
        &commands,
        doc! { "aggregate": 1, "pipeline": [
            { "$changeStream": {} },
            { "$match": { "operationType": "insert" } },
        ], "cursor": {} },
    );
    let whole_id = cursor_id(&whole);
    ok(
        &commands,
        doc! { "insert": "books", "documents": [{ "_id": 1, "t": "Dune" }] },
    );
    ok(
        &commands,
        doc! { "update": "books", "updates": [{ "q": { "_id": 1 }, "u": { "$set": { "y": 1965 } } }] },
    );
    ok(
        &commands,
        doc! { "insert": "films", "documents": [{ "_id": 7 }] },
    );
    let next = |id: i64, collection: &str| -> Vec<Document> {
        let reply = ok(
            &commands,
            doc! { "getMore": id, "collection": collection, "maxTimeMS": 2000 },
        );
        reply
            .get_document("cursor")
            .unwrap()
            .get_array("nextBatch")
            .unwrap()
            .iter()
            .map(|event| event.as_document().unwrap().clone())
            .collect()
    };
    let events = next(id, "books");
    assert_eq!(events.len(), 2, "{events:?}");
    assert_eq!(events[0].get_str("operationType").unwrap(), "insert");
    assert_eq!(
        events[0].get_document("ns").unwrap(),
        &doc! { "db": "shop", "coll": "books" }
    );
    assert_eq!(
        events[1]
            .get_document("updateDescription")
            .unwrap()
            .get_document("updatedFields")
            .unwrap(),
        &doc! { "y": 1965 }
    );
    let inserts = next(whole_id, "$cmd.aggregate");
    let collections: Vec<&str> = inserts
        .iter()
        .map(|event| event.get_document("ns").unwrap().get_str("coll").unwrap())
        .collect();
    assert_eq!(collections, ["books", "films"]);
    // Resuming from the start replays both events; after the first event, the second.
    let from_start = ok(
        &commands,
        doc! { "aggregate": "books", "pipeline": [{ "$changeStream": { "startAfter": start } }], "cursor": {} },
    );
    assert_eq!(first_batch(&from_start).len(), 2);
    let token = events[0].get_document("_id").unwrap().clone();
    let resumed = ok(
        &commands,
        doc! { "aggregate": "books", "pipeline": [{ "$changeStream": { "resumeAfter": token } }], "cursor": {} },
    );
    let replayed = first_batch(&resumed);
    assert_eq!(replayed.len(), 1);
    assert_eq!(
        replayed[0]
            .as_document()
            .unwrap()
            .get_str("operationType")
            .unwrap(),
        "update"
    );
    let (code, _) = fails(
        &commands,
        doc! { "aggregate": "books", "pipeline": [{ "$changeStream": { "fullDocument": "always" } }], "cursor": {} },
    );
    assert_eq!(code, 2, "an unknown fullDocument mode is BadValue");
    let (code, _) = fails(
        &commands,
        doc! { "aggregate": "books", "pipeline": [{ "$match": {} }, { "$changeStream": {} }], "cursor": {} },
    );
    assert_eq!(code, 40602);
}

#[test]
fn the_profiler_records_what_its_level_asks_for_in_system_profile() {
    let commands = commands();
    seed(&commands, 2);
    let reply = ok(&commands, doc! { "profile": 2 });
    assert_eq!(reply.get_i32("was").unwrap(), 0);
    ok(&commands, doc! { "find": "books", "comment": "look here" });
    ok(
        &commands,
        doc! { "distinct": "books", "key": "n", "comment": "look here" },
    );
    ok(&commands, doc! { "profile": 0 });
    ok(
        &commands,
        doc! { "find": "books", "comment": "not recorded" },
    );
    let profiled = ok(
        &commands,
        doc! { "find": "system.profile", "filter": { "command.comment": "look here" }, "sort": { "ts": 1 } },
    );
    let entries = first_batch(&profiled);
    assert_eq!(entries.len(), 2, "{entries:?}");
    let query = entries[0].as_document().unwrap();
    assert_eq!(query.get_str("op").unwrap(), "query");
    assert_eq!(query.get_str("ns").unwrap(), "shop.books");
    assert_eq!(query.get_i32("nreturned").unwrap(), 2);
    let distinct = entries[1].as_document().unwrap();
    assert_eq!(distinct.get_str("op").unwrap(), "command");
    assert_eq!(
        distinct
            .get_document("command")
            .unwrap()
            .get_str("distinct")
            .unwrap(),
        "books"
    );
    assert_eq!(
        number(&ok(&commands, doc! { "count": "system.profile" }), "n"),
        2,
        "neither the profile commands nor what runs at level 0 are recorded"
    );
    ok(&commands, doc! { "drop": "system.profile" });
    assert_eq!(fails(&commands, doc! { "profile": 5 }).0, 2);
    assert_eq!(
        fails(
            &commands,
            doc! { "insert": "system.users", "documents": [{}] }
        )
        .0,
        73,
        "the rest of the system. space stays reserved"
    );
}

#[test]
fn dropping_a_database_ends_its_change_stream_with_drop_database_and_invalidate() {
    let commands = commands();
    ok(
        &commands,
        doc! { "insert": "books", "documents": [{ "_id": 1 }] },
    );
    let opened = ok(
        &commands,
        doc! { "aggregate": 1, "pipeline": [{ "$changeStream": {} }], "cursor": {} },
    );
    let id = cursor_id(&opened);
    ok(&commands, doc! { "dropDatabase": 1 });
    let reply = ok(
        &commands,
        doc! { "getMore": id, "collection": "$cmd.aggregate", "maxTimeMS": 2000 },
    );
    let events: Vec<Document> = reply
        .get_document("cursor")
        .unwrap()
        .get_array("nextBatch")
        .unwrap()
        .iter()
        .map(|event| event.as_document().unwrap().clone())
        .collect();
    let kinds: Vec<&str> = events
        .iter()
        .map(|event| event.get_str("operationType").unwrap())
        .collect();
    assert_eq!(kinds, ["drop", "dropDatabase", "invalidate"]);
    assert_eq!(
        events[1].get_document("ns").unwrap(),
        &doc! { "db": "shop" }
    );
    assert!(!events[2].contains_key("ns"));
}

#[test]
fn where_runs_javascript_bounded_by_max_time_ms() {
    let commands = commands();
    seed(&commands, 10);
    let ids = |reply: &Document| -> Vec<i32> {
        first_batch(reply)
            .iter()
            .map(|found| found.as_document().unwrap().get_i32("_id").unwrap())
            .collect()
    };
    let reply = ok(
        &commands,
        doc! { "find": "books", "filter": { "$where": "this._id < 3" }, "sort": { "_id": 1 } },
    );
    assert_eq!(ids(&reply), [0, 1, 2]);
    let code = Bson::JavaScriptCode("function() { return this.n == 2 && this._id > 5; }".into());
    let reply = ok(
        &commands,
        doc! { "find": "books", "filter": { "n": 2, "$where": code }, "sort": { "_id": 1 } },
    );
    assert_eq!(ids(&reply), [8]);
    // A script error is JSInterpreterFailure; code with scope is refused as in MongoDB 4.4+.
    let (code, message) = fails(
        &commands,
        doc! { "find": "books", "filter": { "$where": "this.nothing.deeper" } },
    );
    assert_eq!(code, 139, "{message}");
    let scoped = Bson::JavaScriptCodeWithScope(spillway::bson::JavaScriptCodeWithScope {
        code: "this._id < i".into(),
        scope: doc! { "i": 3 },
    });
    assert_eq!(
        fails(
            &commands,
            doc! { "find": "books", "filter": { "$where": scoped } }
        )
        .0,
        4_649_200
    );
    // maxTimeMS interrupts a sleeping script: MaxTimeMSExpired, well before the sleeps end.
    let started = std::time::Instant::now();
    let (code, message) = fails(
        &commands,
        doc! { "find": "books", "maxTimeMS": 100,
        "filter": { "$where": "function() { sleep(1000); return true; }" } },
    );
    assert_eq!(code, 50, "{message}");
    assert!(started.elapsed() < std::time::Duration::from_secs(5));
    // A delete with $where removes exactly what the script selects.
    let reply = ok(
        &commands,
        doc! { "delete": "books", "deletes": [{ "q": { "$where": "this._id % 2 == 1" }, "limit": 0 }] },
    );
    assert_eq!(number(&reply, "n"), 5);
}

#[test]
fn a_commit_retried_after_a_restart_is_answered_as_committed_not_run_again() {
    let directory = tempfile::tempdir().unwrap();
    let session = lsid(3);
    {
        let commands = Commands::new(Database::open(directory.path()).unwrap());
        ok(
            &commands,
            in_txn(
                doc! { "update": "books", "updates": [{ "q": { "_id": 1 }, "u": { "$push": { "buyers": "ada" } }, "upsert": true }] },
                &session,
                4,
                true,
            ),
        );
        ok(&commands, end_txn("commitTransaction", &session, 4));
        // Another session's transaction stays uncommitted when the server stops.
        ok(
            &commands,
            in_txn(
                doc! { "insert": "books", "documents": [{ "_id": 2 }] },
                &lsid(4),
                1,
                true,
            ),
        );
    }
    // The driver did not hear the commit's answer and retries it against the new process:
    // the durable record says it committed, so nothing runs again.
    let commands = Commands::new(Database::open(directory.path()).unwrap());
    ok(&commands, end_txn("commitTransaction", &session, 4));
    assert_eq!(
        fails(&commands, end_txn("abortTransaction", &session, 4)).0,
        256
    );
    let (code, _) = fails(&commands, end_txn("commitTransaction", &lsid(4), 1));
    assert_eq!(
        code, 251,
        "an uncommitted transaction is gone with the process"
    );
    assert_eq!(
        fails(&commands, end_txn("commitTransaction", &session, 5)).0,
        251,
        "only the committed transaction number is known"
    );
    let books = first_batch(&ok(&commands, doc! { "find": "books" }));
    assert_eq!(
        books,
        vec![Bson::Document(doc! { "_id": 1, "buyers": ["ada"] })]
    );
}

#[test]
fn a_transaction_open_before_the_first_commit_record_still_commits() {
    // The first commit of a session creates the keyspace of session records; a transaction
    // whose snapshot predates it must still commit its own record.
    let commands = commands();
    ok(
        &commands,
        in_txn(
            doc! { "insert": "a", "documents": [{ "_id": 1 }] },
            &lsid(5),
            1,
            true,
        ),
    );
    ok(
        &commands,
        in_txn(
            doc! { "insert": "b", "documents": [{ "_id": 1 }] },
            &lsid(6),
            1,
            true,
        ),
    );
    ok(&commands, end_txn("commitTransaction", &lsid(6), 1));
    ok(&commands, end_txn("commitTransaction", &lsid(5), 1));
    assert_eq!(first_batch(&ok(&commands, doc! { "find": "a" })).len(), 1);
}

#[test]
fn huge_names_are_cut_short_in_error_messages() {
    let commands = commands();
    let huge = "a".repeat(100_000);
    for command in [
        doc! { "insert": huge.clone(), "documents": [{ "_id": 1 }] },
        doc! { "insert": format!("{huge}$"), "documents": [{ "_id": 1 }] },
        doc! { "create": huge.clone() },
        doc! { "insert": "c", "documents": [{ "_id": 1 }], "$db": huge.clone() },
    ] {
        let (_code, message) = fails(&commands, command);
        assert!(
            message.len() < 400 && message.contains("..."),
            "{} characters: {}",
            message.len(),
            &message[..message.len().min(300)]
        );
    }
}

#[test]
fn a_command_whose_id_pymongo_wrote_first_is_still_named_by_its_next_field() {
    let commands = commands();
    ok(
        &commands,
        doc! { "insert": "sales", "documents": [{ "_id": 2, "buyers": ["a", "b", "c", "d"] }] },
    );
    ok(
        &commands,
        doc! { "setPattern": "sales", "outlier": "buyers", "threshold": 2, "bucketCapacity": 2 },
    );
    // pymongo encodes a top-level `_id` before the command's name.
    let page = ok(
        &commands,
        doc! { "_id": 2, "arrayPage": "sales", "field": "buyers", "skip": 1, "limit": 2 },
    );
    assert_eq!(
        page.get_array("elements").unwrap(),
        &vec![Bson::from("b"), Bson::from("c")]
    );
    let (code, _) = fails(&commands, doc! { "_id": 2 });
    assert_eq!(code, 59, "a lone _id names no command");
}

/// `collStats`, `dbStats`, `listDatabases`' sizes and the stages `$collStats` and
/// `$indexStats` give the figures mongosh's `db.c.stats()`, `totalSize()`,
/// `totalIndexSize()`, `latencyStats()` and admin tools read, in MongoDB's shape: sizes
/// that add up, scaled when asked, one size per index, and errors where MongoDB has them.
#[test]
fn stats_commands_and_stages_report_what_is_stored() {
    let commands = commands();
    let documents: Vec<Document> = (0..100)
        .map(|i| doc! { "_id": i, "title": format!("book {i}"), "pages": i * 3 })
        .collect();
    ok(
        &commands,
        doc! { "insert": "books", "documents": documents.clone() },
    );
    ok(
        &commands,
        doc! { "createIndexes": "books", "indexes": [{ "key": { "title": 1 }, "name": "title_1" }] },
    );
    ok(
        &commands,
        doc! { "create": "short_books", "viewOn": "books", "pipeline": [{ "$match": { "pages": { "$lt": 30 } } }] },
    );
    let document_bytes: i64 = documents
        .iter()
        .map(|document| {
            spillway::bson::RawDocumentBuf::try_from(document)
                .unwrap()
                .as_bytes()
                .len() as i64
        })
        .sum();

    let stats = ok(&commands, doc! { "collStats": "books" });
    assert_eq!(stats.get_str("ns").unwrap(), "shop.books");
    assert_eq!(number(&stats, "count"), 100);
    assert_eq!(number(&stats, "size"), document_bytes);
    assert_eq!(number(&stats, "avgObjSize"), document_bytes / 100);
    assert_eq!(number(&stats, "nindexes"), 2);
    let sizes = stats.get_document("indexSizes").unwrap();
    assert_eq!(sizes.keys().collect::<Vec<_>>(), ["_id_", "title_1"]);
    let index_total: i64 = sizes.keys().map(|name| number(sizes, name)).sum();
    assert!(number(sizes, "title_1") > 0 && number(sizes, "_id_") > 0);
    assert_eq!(number(&stats, "totalIndexSize"), index_total);
    assert_eq!(number(&stats, "totalSize"), document_bytes + index_total);
    let scaled = ok(&commands, doc! { "collStats": "books", "scale": 1024 });
    assert_eq!(number(&scaled, "size"), document_bytes / 1024);
    assert_eq!(number(&scaled, "scaleFactor"), 1024);
    assert_eq!(
        fails(&commands, doc! { "collStats": "books", "scale": 0 }).0,
        2
    );
    assert_eq!(fails(&commands, doc! { "collStats": "missing" }).0, 26);
    assert_eq!(fails(&commands, doc! { "collStats": "short_books" }).0, 166);

    let database = ok(&commands, doc! { "dbStats": 1 });
    assert_eq!(number(&database, "collections"), 1);
    assert_eq!(number(&database, "views"), 1);
    assert_eq!(number(&database, "objects"), 100);
    assert_eq!(number(&database, "dataSize"), document_bytes);
    assert_eq!(number(&database, "indexSize"), index_total);
    assert_eq!(number(&database, "indexes"), 2);
    let listed = ok(&commands, doc! { "listDatabases": 1, "$db": "admin" });
    let shop = listed
        .get_array("databases")
        .unwrap()
        .iter()
        .filter_map(Bson::as_document)
        .find(|database| database.get_str("name").ok() == Some("shop"))
        .cloned()
        .unwrap();
    assert_eq!(number(&shop, "sizeOnDisk"), document_bytes + index_total);
    assert_eq!(shop.get_bool("empty").ok(), Some(false));
    assert_eq!(number(&listed, "totalSize"), document_bytes + index_total);

    let reply = ok(
        &commands,
        doc! {
            "aggregate": "books",
            "pipeline": [
                { "$collStats": { "storageStats": { "scale": 1 }, "count": {}, "latencyStats": { "histograms": true } } },
                { "$project": { "ns": 1, "count": 1, "storageStats": 1, "reads": "$latencyStats.reads" } },
            ],
            "cursor": {},
        },
    );
    let cursor = reply.get_document("cursor").unwrap();
    assert_eq!(cursor.get_str("ns").unwrap(), "shop.books");
    let batch = first_batch(&reply);
    let [Bson::Document(output)] = batch.as_slice() else {
        panic!("$collStats outputs one document: {batch:?}");
    };
    assert_eq!(number(output, "count"), 100);
    let storage = output.get_document("storageStats").unwrap();
    assert_eq!(number(storage, "size"), document_bytes);
    assert_eq!(number(storage, "totalIndexSize"), index_total);
    assert_eq!(
        output.get_document("reads").unwrap(),
        &doc! { "latency": 0_i64, "ops": 0_i64, "histogram": [] }
    );
    let (code, _) = fails(
        &commands,
        doc! { "aggregate": "books", "pipeline": [{ "$collStats": { "storage": {} } }], "cursor": {} },
    );
    assert_ne!(code, 0, "an unknown $collStats field is refused");

    let reply = ok(
        &commands,
        doc! { "aggregate": "books", "pipeline": [{ "$indexStats": {} }, { "$sort": { "name": 1 } }], "cursor": {} },
    );
    let indexes = first_batch(&reply);
    let names: Vec<&str> = indexes
        .iter()
        .map(|index| index.as_document().unwrap().get_str("name").unwrap())
        .collect();
    assert_eq!(names, ["_id_", "title_1"]);
    let title = first_batch(&reply)[1].as_document().unwrap().clone();
    assert_eq!(title.get_document("key").unwrap(), &doc! { "title": 1 });
    assert_eq!(
        title.get_document("accesses").unwrap().get_i64("ops").ok(),
        Some(0)
    );
    let (code, _) = fails(
        &commands,
        doc! { "aggregate": "books", "pipeline": [{ "$indexStats": { "x": 1 } }], "cursor": {} },
    );
    assert_eq!(code, 28803);

    // `compact` rewrites the store's dead bytes; what is stored is unchanged.
    ok(
        &commands,
        doc! { "delete": "books", "deletes": [{ "q": { "pages": { "$gte": 30 } }, "limit": 0 }] },
    );
    let dry = ok(&commands, doc! { "compact": "books", "dryRun": true });
    assert!(number(&dry, "estimatedBytesFreed") >= 0);
    let compacted = ok(&commands, doc! { "compact": "books" });
    assert!(number(&compacted, "bytesFreed") >= 0);
    assert_eq!(number(&ok(&commands, doc! { "count": "books" }), "n"), 10);
    assert_eq!(fails(&commands, doc! { "compact": "missing" }).0, 26);
    assert_eq!(fails(&commands, doc! { "compact": "short_books" }).0, 166);
}

/// `collStats` keeps a collection's figures until the collection is written: every insert,
/// update, delete, index change, drop and re-creation between two calls shows in the second,
/// and a collection written in the meantime is walked again while the others are not.
#[test]
fn coll_stats_follow_every_write_between_two_calls() {
    let commands = commands();
    let figures = |commands: &Commands| {
        let stats = ok(commands, doc! { "collStats": "books" });
        (
            number(&stats, "count"),
            number(&stats, "size"),
            stats.get_document("indexSizes").unwrap().len(),
        )
    };
    ok(
        &commands,
        doc! { "insert": "books", "documents": [{ "_id": 1, "t": "a" }, { "_id": 2, "t": "b" }] },
    );
    ok(
        &commands,
        doc! { "insert": "other", "documents": [{ "_id": 1 }] },
    );
    let (count, size, indexes) = figures(&commands);
    assert_eq!((count, indexes), (2, 1));
    assert_eq!(
        figures(&commands),
        (count, size, indexes),
        "unchanged: the same"
    );
    // A write to another collection leaves these figures as they were.
    ok(
        &commands,
        doc! { "insert": "other", "documents": [{ "_id": 2 }] },
    );
    assert_eq!(figures(&commands), (count, size, indexes));

    ok(
        &commands,
        doc! { "insert": "books", "documents": [{ "_id": 3, "t": "c" }] },
    );
    let (count, grown, _) = figures(&commands);
    assert_eq!(count, 3);
    assert!(grown > size);
    ok(
        &commands,
        doc! { "update": "books", "updates": [{ "q": { "_id": 1 }, "u": { "$set": { "t": "a much longer title" } } }] },
    );
    let (_, updated, _) = figures(&commands);
    assert!(updated > grown);
    ok(
        &commands,
        doc! { "createIndexes": "books", "indexes": [{ "key": { "t": 1 }, "name": "t_1" }] },
    );
    assert_eq!(figures(&commands).2, 2);
    ok(&commands, doc! { "dropIndexes": "books", "index": "t_1" });
    assert_eq!(figures(&commands).2, 1);
    ok(
        &commands,
        doc! { "delete": "books", "deletes": [{ "q": { "_id": 3 }, "limit": 1 }] },
    );
    assert_eq!(figures(&commands).0, 2);
    ok(&commands, doc! { "drop": "books" });
    ok(&commands, doc! { "create": "books" });
    assert_eq!(figures(&commands), (0, 0, 1));
    assert_eq!(number(&ok(&commands, doc! { "dbStats": 1 }), "objects"), 2);
}

/// `top` and `$collStats`' `latencyStats` count the commands each collection has answered
/// since the server started, by kind, with their time: what `db.c.latencyStats()` and
/// monitoring tools read. `top` is an `admin` command (13 elsewhere).
#[test]
fn top_and_latency_stats_count_each_collections_operations() {
    let commands = commands();
    ok(
        &commands,
        doc! { "insert": "books", "documents": [{ "_id": 1 }, { "_id": 2 }] },
    );
    ok(
        &commands,
        doc! { "update": "books", "updates": [{ "q": { "_id": 1 }, "u": { "$set": { "a": 1 } } }] },
    );
    for _ in 0..3 {
        ok(&commands, doc! { "find": "books", "batchSize": 1 });
    }
    ok(&commands, doc! { "count": "books" });
    ok(
        &commands,
        doc! { "insert": "other", "documents": [{ "_id": 1 }] },
    );
    ok(&commands, doc! { "collStats": "books" });

    let reply = ok(
        &commands,
        doc! {
            "aggregate": "books",
            "pipeline": [{ "$collStats": { "latencyStats": { "histograms": true } } }],
            "cursor": {},
        },
    );
    let batch = first_batch(&reply);
    let latency = batch[0]
        .as_document()
        .unwrap()
        .get_document("latencyStats")
        .unwrap();
    let ops = |kind: &str| latency.get_document(kind).unwrap().get_i64("ops").unwrap();
    assert_eq!((ops("reads"), ops("writes"), ops("commands")), (4, 2, 1));
    let reads = latency.get_document("reads").unwrap();
    let histogram_total: i64 = reads
        .get_array("histogram")
        .unwrap()
        .iter()
        .map(|bucket| bucket.as_document().unwrap().get_i64("count").unwrap())
        .sum();
    assert_eq!(histogram_total, 4, "every read is in one bucket: {reads}");
    assert!(reads.get_i64("latency").unwrap() >= 0);

    assert_eq!(fails(&commands, doc! { "top": 1 }).0, 13);
    let top = ok(&commands, doc! { "top": 1, "$db": "admin" });
    let totals = top.get_document("totals").unwrap();
    let books = totals.get_document("shop.books").unwrap();
    let count = |counter: &str| {
        books
            .get_document(counter)
            .unwrap()
            .get_i64("count")
            .unwrap()
    };
    // The $collStats aggregate above is a read of its own.
    assert_eq!(count("queries"), 5);
    assert_eq!(count("insert"), 1);
    assert_eq!(count("update"), 1);
    assert_eq!(count("commands"), 1);
    assert_eq!(count("total"), 8);
    assert_eq!(count("readLock") + count("writeLock"), 8);
    assert!(
        books
            .get_document("total")
            .unwrap()
            .get_i64("time")
            .unwrap()
            >= 0
    );
    let other = totals.get_document("shop.other").unwrap();
    assert_eq!(
        other.get_document("insert").unwrap().get_i64("count").ok(),
        Some(1)
    );
}

/// On a collection with a policy, `collStats`' `count` is the number of logical documents,
/// however many elements went to the side collection.
#[test]
fn coll_stats_counts_the_logical_documents_of_a_patterned_collection() {
    let commands = commands();
    ok(
        &commands,
        doc! { "setPattern": "sales", "outlier": "buyers", "threshold": 2, "bucketCapacity": 3 },
    );
    let documents: Vec<Document> = (0..20)
        .map(|i| doc! { "_id": i, "buyers": (0..i).map(|b| format!("b{b}")).collect::<Vec<_>>() })
        .collect();
    ok(
        &commands,
        doc! { "insert": "sales", "documents": documents },
    );
    let stats = ok(&commands, doc! { "collStats": "sales" });
    assert_eq!(number(&stats, "count"), 20);
    assert!(number(&stats, "size") > 0);
    let database = ok(&commands, doc! { "dbStats": 1 });
    assert!(number(&database, "objects") >= 20);
}

/// `distinct` over many distinct values, unwound from arrays, answers each value once in
/// the order first seen: a set kept by MongoDB's comparison order, not a list searched for
/// each value (which took minutes at 350,000 elements).
#[test]
fn distinct_over_many_values_answers_each_once() {
    let commands = commands();
    let documents: Vec<Document> = (0..2_000_i64)
        .map(|i| {
            // Each document repeats its neighbour's values and adds new ones; numbers of
            // different types that compare equal are one value.
            let values: Vec<Bson> = (0..10)
                .map(|j| {
                    let value = i * 5 + j;
                    if j % 2 == 0 {
                        Bson::Int64(value)
                    } else {
                        Bson::Double(value as f64)
                    }
                })
                .collect();
            doc! { "_id": i, "rdeps": values }
        })
        .collect();
    ok(
        &commands,
        doc! { "insert": "packages", "documents": documents },
    );
    let reply = ok(&commands, doc! { "distinct": "packages", "key": "rdeps" });
    let values = reply.get_array("values").unwrap();
    assert_eq!(values.len(), 1_999 * 5 + 10);
    let as_numbers: Vec<f64> = values
        .iter()
        .map(|value| match value {
            Bson::Int64(n) => *n as f64,
            Bson::Double(n) => *n,
            other => panic!("not a number: {other}"),
        })
        .collect();
    let expected: Vec<f64> = (0..(1_999 * 5 + 10)).map(f64::from).collect();
    assert_eq!(as_numbers, expected);
}

/// The Stable API: `apiVersion: "1"` is the only version, `apiStrict` refuses a command
/// outside API Version 1 and needs a version, with MongoDB's codes.
#[test]
fn the_stable_api_is_checked_before_a_command_runs() {
    let commands = commands();
    ok(
        &commands,
        doc! { "insert": "books", "documents": [{ "_id": 1 }], "apiVersion": "1", "apiStrict": true },
    );
    ok(
        &commands,
        doc! { "find": "books", "apiVersion": "1", "apiStrict": false, "apiDeprecationErrors": true },
    );
    let (code, message) = fails(&commands, doc! { "count": "books", "apiVersion": "2" });
    assert_eq!((code, message.as_str()), (322, "API version must be \"1\""));
    let (code, message) = fails(
        &commands,
        doc! { "dbStats": 1, "apiVersion": "1", "apiStrict": true },
    );
    assert_eq!(code, 323);
    assert!(
        message.contains("command dbStats is not in API Version 1"),
        "{message}"
    );
    ok(&commands, doc! { "dbStats": 1, "apiVersion": "1" });
    // A stage outside API Version 1, at the top or nested, is refused under strict.
    for pipeline in [
        vec![doc! { "$listLocalSessions": {} }],
        vec![doc! { "$facet": { "a": [{ "$indexStats": {} }] } }],
    ] {
        let (code, message) = fails(
            &commands,
            doc! { "aggregate": 1, "pipeline": pipeline.clone(), "cursor": {}, "apiVersion": "1", "apiStrict": true },
        );
        assert_eq!(code, 323, "{message}");
        assert!(
            message.contains("is not allowed with 'apiStrict: true'"),
            "{message}"
        );
    }
    ok(
        &commands,
        doc! { "aggregate": "books", "pipeline": [{ "$match": {} }], "cursor": {}, "apiVersion": "1", "apiStrict": true },
    );
    let (code, _) = fails(&commands, doc! { "find": "books", "apiStrict": true });
    assert_eq!(code, 4_886_600);
    let (code, _) = fails(&commands, doc! { "find": "books", "apiVersion": 1 });
    assert_eq!(code, 14);
    let (code, _) = fails(
        &commands,
        doc! { "insert": "books", "documents": [{ "_id": 2 }], "apiVersion": "2" },
    );
    assert_eq!(code, 322);
    assert_eq!(
        number(&ok(&commands, doc! { "count": "books" }), "n"),
        1,
        "the refused commands changed nothing"
    );
}

#[test]
fn an_unknown_read_concern_level_fails_the_command_and_the_known_ones_read() {
    let commands = commands();
    seed(&commands, 3);
    for level in ["local", "majority", "available", "linearizable"] {
        let reply = ok(
            &commands,
            doc! { "find": "books", "filter": {}, "readConcern": { "level": level } },
        );
        assert_eq!(first_batch(&reply).len(), 3, "{level}");
    }
    let (code, message) = fails(
        &commands,
        doc! { "find": "books", "filter": {}, "readConcern": { "level": "unknown" } },
    );
    assert_eq!(code, 2, "{message}");
    assert!(message.contains("'unknown'"), "{message}");
    let (code, message) = fails(
        &commands,
        doc! { "aggregate": "books", "pipeline": [], "cursor": {}, "readConcern": { "level": 1 } },
    );
    assert_eq!(code, 14, "{message}");
}

#[test]
fn an_update_pipeline_with_an_unknown_stage_fails_the_command_before_any_statement_runs() {
    let commands = commands();
    seed(&commands, 2);
    let (code, message) = fails(
        &commands,
        doc! { "update": "books", "updates": [
            { "q": { "_id": 0 }, "u": { "$set": { "touched": true } } },
            { "q": { "_id": 1 }, "u": [{ "$invalidOperator": true }] },
        ] },
    );
    assert_eq!(code, 40324, "{message}");
    assert!(message.contains("$invalidOperator"), "{message}");
    let touched = ok(
        &commands,
        doc! { "count": "books", "query": { "touched": true } },
    );
    assert_eq!(number(&touched, "n"), 0, "no statement ran");

    // A stage MongoDB knows but an update may not hold is the statement's write error.
    let reply = ok(
        &commands,
        doc! { "update": "books", "updates": [{ "q": {}, "u": [{ "$match": {} }] }] },
    );
    let errors = reply.get_array("writeErrors").expect("a write error");
    assert_eq!(errors.len(), 1, "{reply}");
}
