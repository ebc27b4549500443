//! The rest of MongoDB's command surface that drivers' suites reach: `find`'s `returnKey`,
//! and collations declared on a collection (`create`) and on an index (`createIndexes`),
//! answered as MongoDB answers them.

use spillway::Database;
use spillway::bson::{Bson, Document, doc};
use spillway::command::Commands;

fn commands() -> Commands {
    Commands::new(Database::open_in_memory().expect("in-memory database"))
}

/// Runs `command` on database `shop` and returns the reply.
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

/// The documents of a reply's first batch.
fn batch(reply: &Document) -> Vec<Document> {
    reply
        .get_document("cursor")
        .and_then(|cursor| cursor.get_array("firstBatch"))
        .expect("a cursor reply")
        .iter()
        .map(|document| document.as_document().expect("a document").clone())
        .collect()
}

fn find(commands: &Commands, find: Document) -> Vec<Document> {
    batch(&ok(commands, find))
}

#[test]
fn return_key_returns_the_keys_of_the_index_used() {
    let commands = commands();
    ok(
        &commands,
        doc! { "insert": "items", "documents": [
            { "_id": 1, "a": 3, "b": "x", "c": true },
            { "_id": 2, "a": 1, "b": "y", "c": false },
            { "_id": 3, "a": 2, "c": true },
        ] },
    );
    ok(
        &commands,
        doc! { "createIndexes": "items", "indexes": [{ "key": { "a": 1, "b": -1 }, "name": "a_b" }] },
    );
    // Through the compound index: its fields only, a missing one as null.
    let keys = find(
        &commands,
        doc! { "find": "items", "filter": { "a": { "$gte": 2 } }, "sort": { "a": 1 }, "returnKey": true },
    );
    assert_eq!(
        keys,
        vec![doc! { "a": 2, "b": Bson::Null }, doc! { "a": 3, "b": "x" }]
    );
    // Through the _id index.
    let keys = find(
        &commands,
        doc! { "find": "items", "filter": { "_id": 2 }, "returnKey": true, "projection": { "c": 1 } },
    );
    assert_eq!(keys, vec![doc! { "_id": 2 }]);
    // A collection scan has no keys: an empty document per match.
    let keys = find(
        &commands,
        doc! { "find": "items", "filter": { "c": true }, "returnKey": true },
    );
    assert_eq!(keys, vec![Document::new(), Document::new()]);
    // With showRecordId too, the keys alone, as MongoDB answers; showRecordId alone needs
    // record ids, which Spillway does not have.
    let keys = find(
        &commands,
        doc! { "find": "items", "filter": {}, "sort": { "_id": 1 }, "returnKey": true, "showRecordId": true },
    );
    assert_eq!(
        keys,
        vec![doc! { "_id": 1 }, doc! { "_id": 2 }, doc! { "_id": 3 }]
    );
    let (code, _) = fails(&commands, doc! { "find": "items", "showRecordId": true });
    assert_eq!(code, 115);
    // false is an ordinary find.
    let documents = find(
        &commands,
        doc! { "find": "items", "filter": { "_id": 3 }, "returnKey": false },
    );
    assert_eq!(documents, vec![doc! { "_id": 3, "a": 2, "c": true }]);
}

#[test]
fn return_key_on_a_collection_with_a_policy_is_what_a_plain_collection_returns() {
    let commands = commands();
    // Two elements in the main document, the rest in side buckets of three.
    ok(
        &commands,
        doc! { "setPattern": "sales", "outlier": "buyers", "threshold": 2, "bucketCapacity": 3 },
    );
    let documents = vec![
        doc! { "_id": 1, "shop": "north", "buyers": ["m", "n", "o", "p", "a"] },
        doc! { "_id": 2, "shop": "south", "buyers": ["k"] },
        doc! { "_id": 3, "shop": "east", "buyers": ["z", "y", "x", "b", "c", "d"] },
    ];
    for collection in ["sales", "plain"] {
        ok(
            &commands,
            doc! { "insert": collection, "documents": documents.clone() },
        );
        ok(
            &commands,
            doc! { "createIndexes": collection, "indexes": [
                { "key": { "buyers": 1 }, "name": "buyers" },
                { "key": { "shop": 1, "buyers": 1 }, "name": "shop_buyers" },
            ] },
        );
    }
    let finds = [
        // An element only a side bucket holds.
        doc! { "filter": { "buyers": "a" } },
        doc! { "filter": { "buyers": { "$in": ["d", "k"] } }, "sort": { "_id": 1 } },
        doc! { "filter": { "buyers": { "$gte": "a" } }, "hint": "buyers", "sort": { "_id": 1 } },
        doc! { "filter": {}, "hint": "buyers", "sort": { "_id": 1 } },
        doc! { "filter": { "shop": "north" }, "hint": "shop_buyers" },
        doc! { "filter": { "shop": { "$gt": "a" } }, "sort": { "shop": 1 } },
        doc! { "filter": { "_id": 3 } },
        doc! { "filter": { "buyers.3": "b" } },
    ];
    for find_options in finds {
        let mut keys = Vec::new();
        for collection in ["sales", "plain"] {
            let mut command = doc! { "find": collection, "returnKey": true };
            command.extend(find_options.clone());
            keys.push(find(&commands, command));
        }
        assert_eq!(keys[0], keys[1], "{find_options}");
        assert!(!keys[1].is_empty(), "{find_options}");
    }
    // The first find's keys, in full: the side bucket's element is the index key it matched.
    let keys = find(
        &commands,
        doc! { "find": "sales", "filter": { "buyers": "a" }, "returnKey": true },
    );
    assert_eq!(keys, vec![doc! { "buyers": "a" }]);
    // Of an array, the key the scan reached the document by: the matched element, the
    // lowest one for a scan of the whole index.
    for (find_options, expected) in [
        (doc! { "filter": { "buyers": "p" } }, "p"),
        (
            doc! { "filter": { "buyers": { "$in": ["o", "z"] } }, "sort": { "_id": 1 } },
            "o",
        ),
        (doc! { "filter": { "_id": 1 }, "hint": "buyers" }, "a"),
    ] {
        for collection in ["sales", "plain"] {
            let mut command = doc! { "find": collection, "returnKey": true };
            command.extend(find_options.clone());
            let keys = find(&commands, command);
            assert_eq!(
                keys.first().and_then(|keys| keys.get_str("buyers").ok()),
                Some(expected),
                "{collection} {find_options}: {keys:?}"
            );
        }
    }
    // A hint that names no index is refused as on a plain collection.
    let (code, message) = fails(
        &commands,
        doc! { "find": "sales", "filter": { "buyers": "a" }, "returnKey": true, "hint": "nope" },
    );
    assert_eq!(code, 2, "{message}");
}

#[test]
fn return_key_with_let_reads_the_variables_and_keeps_the_index_keys() {
    let commands = commands();
    ok(
        &commands,
        doc! { "insert": "items", "documents": [
            { "_id": 1, "a": 3 }, { "_id": 2, "a": 1 }, { "_id": 3, "a": 2 },
        ] },
    );
    ok(
        &commands,
        doc! { "createIndexes": "items", "indexes": [{ "key": { "a": 1 }, "name": "a_1" }] },
    );
    let keys = find(
        &commands,
        doc! {
            "find": "items",
            "filter": { "a": { "$gte": 2 }, "$expr": { "$ne": ["$a", "$$skipped"] } },
            "let": { "skipped": 3 },
            "sort": { "a": 1 },
            "returnKey": true,
        },
    );
    assert_eq!(keys, vec![doc! { "a": 2 }]);
}

#[test]
fn a_find_on_a_view_refuses_return_key_min_and_max_as_an_aggregation_does() {
    let commands = commands();
    ok(
        &commands,
        doc! { "insert": "items", "documents": [{ "_id": 1, "a": 3 }] },
    );
    ok(
        &commands,
        doc! { "create": "shown", "viewOn": "items", "pipeline": [] },
    );
    for (option, value) in [
        ("returnKey", Bson::Boolean(true)),
        ("min", Bson::Document(doc! { "_id": 0 })),
        ("max", Bson::Document(doc! { "_id": 9 })),
    ] {
        let mut command = doc! { "find": "shown", "hint": { "_id": 1 } };
        command.insert(option, value);
        let (code, message) = fails(&commands, command);
        assert_eq!(code, 168, "{option}: {message}");
        assert!(
            message.contains(&format!("Option {option} not supported in aggregation")),
            "{message}"
        );
    }
    let documents = find(&commands, doc! { "find": "shown", "returnKey": false });
    assert_eq!(documents, vec![doc! { "_id": 1, "a": 3 }]);
}

/// Case-insensitive English: `"ann"` equals `"Ann"`.
fn case_insensitive() -> Document {
    doc! { "locale": "en", "strength": 2 }
}

fn names(documents: &[Document]) -> Vec<String> {
    documents
        .iter()
        .map(|document| document.get_str("name").unwrap_or("").to_string())
        .collect()
}

fn index_named(commands: &Commands, collection: &str, name: &str) -> Document {
    let listed = batch(&ok(commands, doc! { "listIndexes": collection }));
    listed
        .into_iter()
        .find(|index| index.get_str("name").ok() == Some(name))
        .unwrap_or_else(|| panic!("no index {name}"))
}

/// The explained plan of a find, as text.
fn explained(commands: &Commands, find: Document) -> String {
    ok(commands, doc! { "explain": find }).to_string()
}

#[test]
fn a_collection_default_collation_is_listed_and_applies_to_operations_that_give_none() {
    let commands = commands();
    ok(
        &commands,
        doc! { "create": "people", "collation": case_insensitive() },
    );
    // Listed resolved, as MongoDB lists it, on the collection and on its _id index.
    let listed = batch(&ok(
        &commands,
        doc! { "listCollections": 1, "filter": { "name": "people" } },
    ));
    let options = listed[0].get_document("options").expect("options");
    let collation = options.get_document("collation").expect("a collation");
    assert_eq!(collation.get_str("locale").ok(), Some("en"));
    assert_eq!(collation.get_i32("strength").ok(), Some(2));
    assert_eq!(collation.get_str("caseFirst").ok(), Some("off"));
    assert!(collation.contains_key("version"), "{collation}");
    let id_index = index_named(&commands, "people", "_id_");
    assert_eq!(id_index.get_document("collation").ok(), Some(collation));

    ok(
        &commands,
        doc! { "insert": "people", "documents": [
            { "_id": 1, "name": "ann" },
            { "_id": 2, "name": "Bob" },
            { "_id": 3, "name": "ANN" },
            { "_id": 4, "name": "carl" },
        ] },
    );
    // find, sort, count, distinct without a collation: the collection's.
    let found = find(
        &commands,
        doc! { "find": "people", "filter": { "name": "Ann" }, "sort": { "_id": 1 } },
    );
    assert_eq!(names(&found), ["ann", "ANN"]);
    let sorted = find(
        &commands,
        doc! { "find": "people", "sort": { "name": 1, "_id": 1 } },
    );
    assert_eq!(names(&sorted), ["ann", "ANN", "Bob", "carl"]);
    let counted = ok(
        &commands,
        doc! { "count": "people", "query": { "name": { "$gt": "b" } } },
    );
    assert_eq!(counted.get_i32("n").ok(), Some(2), "{counted}");
    let distinct = ok(&commands, doc! { "distinct": "people", "key": "name" });
    assert_eq!(
        distinct.get_array("values").map(Vec::len).ok(),
        Some(3),
        "{distinct}"
    );
    // An operation's own collation wins, the simple one included.
    let simple = find(
        &commands,
        doc! { "find": "people", "filter": { "name": "Ann" }, "collation": { "locale": "simple" } },
    );
    assert!(simple.is_empty(), "{simple:?}");
    let simple_sorted = find(
        &commands,
        doc! { "find": "people", "sort": { "name": 1 }, "collation": { "locale": "simple" } },
    );
    assert_eq!(names(&simple_sorted), ["ANN", "Bob", "ann", "carl"]);
    // Updates and deletes filter by it too.
    let updated = ok(
        &commands,
        doc! { "update": "people", "updates": [
            { "q": { "name": "BOB" }, "u": { "$set": { "seen": true } } },
        ] },
    );
    assert_eq!(updated.get_i32("nModified").ok(), Some(1), "{updated}");
    let deleted = ok(
        &commands,
        doc! { "delete": "people", "deletes": [{ "q": { "name": "aNn" }, "limit": 0 }] },
    );
    assert_eq!(deleted.get_i32("n").ok(), Some(2), "{deleted}");
    // An aggregate's $match too.
    let matched = batch(&ok(
        &commands,
        doc! { "aggregate": "people", "pipeline": [{ "$match": { "name": "CARL" } }], "cursor": {} },
    ));
    assert_eq!(names(&matched), ["carl"]);
}

#[test]
fn an_index_takes_the_collection_collation_or_its_own_and_unique_compares_by_it() {
    let commands = commands();
    ok(
        &commands,
        doc! { "create": "people", "collation": case_insensitive() },
    );
    ok(
        &commands,
        doc! { "createIndexes": "people", "indexes": [
            { "key": { "name": 1 }, "name": "name_1", "unique": true },
            { "key": { "name": 1 }, "name": "name_simple", "collation": { "locale": "simple" } },
        ] },
    );
    let inherited = index_named(&commands, "people", "name_1");
    assert_eq!(
        inherited
            .get_document("collation")
            .and_then(|collation| collation.get_i32("strength"))
            .ok(),
        Some(2),
        "{inherited}"
    );
    assert!(!index_named(&commands, "people", "name_simple").contains_key("collation"));
    ok(
        &commands,
        doc! { "insert": "people", "documents": [{ "_id": 1, "name": "Ann" }] },
    );
    // The unique index compares under its collation: "ANN" is a duplicate of "Ann".
    let reply = run(
        &commands,
        doc! { "insert": "people", "documents": [{ "_id": 2, "name": "ANN" }] },
    );
    let errors = reply.get_array("writeErrors").expect("a write error");
    let error = errors[0].as_document().expect("a document");
    assert_eq!(error.get_i32("code").ok(), Some(11000), "{reply}");
    ok(
        &commands,
        doc! { "insert": "people", "documents": [{ "_id": 3, "name": "Bea" }] },
    );
}

#[test]
fn the_planner_uses_a_collated_index_for_strings_only_under_its_collation() {
    let commands = commands();
    ok(
        &commands,
        doc! { "insert": "words", "documents": [
            { "_id": 1, "w": "apple", "n": 1 },
            { "_id": 2, "w": "Apple", "n": 2 },
            { "_id": 3, "w": "banana", "n": 3 },
            { "_id": 4, "w": "Cherry", "n": 4 },
        ] },
    );
    ok(
        &commands,
        doc! { "createIndexes": "words", "indexes": [
            { "key": { "w": 1 }, "name": "w_ci", "collation": case_insensitive() },
            { "key": { "n": 1, "w": 1 }, "name": "n_w_ci", "collation": case_insensitive() },
        ] },
    );
    let listed = index_named(&commands, "words", "w_ci");
    assert_eq!(
        listed
            .get_document("collation")
            .and_then(|collation| collation.get_str("locale"))
            .ok(),
        Some("en"),
        "{listed}"
    );
    // Under the index's collation: bounded by the index, and the answers are collated.
    let query =
        doc! { "find": "words", "filter": { "w": "APPLE" }, "collation": case_insensitive() };
    let plan = explained(&commands, query.clone());
    assert!(
        plan.contains("IXSCAN") && plan.contains("w_ci"),
        "the collated index bounds a query of its collation: {plan}"
    );
    let found = find(&commands, query);
    assert_eq!(found.len(), 2, "{found:?}");
    let range = find(
        &commands,
        doc! { "find": "words", "filter": { "w": { "$gte": "B" } }, "sort": { "w": 1 }, "collation": case_insensitive() },
    );
    let words: Vec<&str> = range.iter().map(|d| d.get_str("w").unwrap()).collect();
    assert_eq!(words, ["banana", "Cherry"]);
    // A query without the collation cannot bound strings with it: no scan of w_ci, and
    // code point answers.
    let simple = doc! { "find": "words", "filter": { "w": "APPLE" } };
    let plan = explained(&commands, simple.clone());
    assert!(
        !plan.contains("w_ci"),
        "a simple query does not bound strings with a collated index: {plan}"
    );
    assert!(find(&commands, simple).is_empty());
    // Non-string bounds are the same under every collation: the index serves them.
    let numbers = doc! { "find": "words", "filter": { "n": { "$gte": 3 } } };
    let plan = explained(&commands, numbers.clone());
    assert!(plan.contains("n_w_ci"), "{plan}");
    assert_eq!(find(&commands, numbers).len(), 2);
    // The index yields the sort of its own collation.
    let sorted = find(
        &commands,
        doc! { "find": "words", "filter": {}, "sort": { "w": -1 }, "collation": case_insensitive(), "hint": "w_ci" },
    );
    let words: Vec<&str> = sorted.iter().map(|d| d.get_str("w").unwrap()).collect();
    assert_eq!(&words[..2], ["Cherry", "banana"]);
}

#[test]
fn indexes_with_the_same_keys_and_different_collations_are_different_indexes() {
    let commands = commands();
    ok(
        &commands,
        doc! { "createIndexes": "c", "indexes": [
            { "key": { "fieldname": 1 }, "name": "fieldname_1", "collation": { "locale": "en_US" } },
            { "key": { "fieldname": 1 }, "name": "japanese_version", "collation": { "locale": "ja" } },
        ] },
    );
    let locale = |name: &str| {
        index_named(&commands, "c", name)
            .get_document("collation")
            .and_then(|collation| collation.get_str("locale"))
            .map(str::to_string)
            .ok()
    };
    assert_eq!(locale("fieldname_1").as_deref(), Some("en_US"));
    assert_eq!(locale("japanese_version").as_deref(), Some("ja"));
    // The same name with the same keys under another collation conflicts.
    let (code, message) = fails(
        &commands,
        doc! { "createIndexes": "c", "indexes": [
            { "key": { "fieldname": 1 }, "name": "fieldname_1", "collation": { "locale": "fr" } },
        ] },
    );
    assert_eq!(code, 86, "{message}");
}

#[test]
fn a_simple_collation_is_no_default_and_bad_collations_are_refused_with_mongodb_codes() {
    let commands = commands();
    ok(
        &commands,
        doc! { "create": "plain", "collation": { "locale": "simple" } },
    );
    let listed = batch(&ok(
        &commands,
        doc! { "listCollections": 1, "filter": { "name": "plain" } },
    ));
    let options = listed[0].get_document("options").expect("options");
    assert!(!options.contains_key("collation"), "{options}");
    for (collation, expected) in [
        (doc! { "locale": "en", "strength": 9 }, 2),
        (doc! { "strength": 2 }, 40414),
        (doc! { "locale": "en", "colour": "blue" }, 40415),
        (doc! { "locale": 7 }, 14),
        (doc! { "locale": "en", "caseFirst": "sideways" }, 2),
    ] {
        let (code, message) = fails(
            &commands,
            doc! { "create": "bad", "collation": collation.clone() },
        );
        assert_eq!(code, expected, "{collation}: {message}");
        let (code, message) = fails(
            &commands,
            doc! { "createIndexes": "bad", "indexes": [{ "key": { "a": 1 }, "name": "a", "collation": collation.clone() }] },
        );
        assert_eq!(code, expected, "{collation} on an index: {message}");
        let (code, message) = fails(
            &commands,
            doc! { "find": "plain", "collation": collation.clone() },
        );
        assert_eq!(code, expected, "{collation} on a find: {message}");
    }
}

#[test]
fn collations_survive_a_reopen() {
    let directory = tempfile::tempdir().expect("a temporary directory");
    let path = directory.path().join("db");
    {
        let commands = Commands::new(Database::open(&path).expect("open"));
        ok(
            &commands,
            doc! { "create": "people", "collation": case_insensitive() },
        );
        ok(
            &commands,
            doc! { "createIndexes": "people", "indexes": [{ "key": { "name": 1 }, "name": "name_1", "unique": true }] },
        );
        ok(
            &commands,
            doc! { "insert": "people", "documents": [{ "_id": 1, "name": "Ann" }] },
        );
    }
    let commands = Commands::new(Database::open(&path).expect("reopen"));
    let found = find(
        &commands,
        doc! { "find": "people", "filter": { "name": "ANN" } },
    );
    assert_eq!(found.len(), 1);
    let reply = run(
        &commands,
        doc! { "insert": "people", "documents": [{ "_id": 2, "name": "ann" }] },
    );
    assert!(reply.get_array("writeErrors").is_ok(), "{reply}");
    assert!(
        index_named(&commands, "people", "name_1").contains_key("collation"),
        "the index keeps its collation"
    );
}

#[test]
fn aggregation_expressions_and_group_keys_compare_under_the_collation() {
    let commands = commands();
    ok(
        &commands,
        doc! { "insert": "people", "documents": [
            { "_id": 1, "name": "ann", "city": "Oslo" },
            { "_id": 2, "name": "ANN", "city": "oslo" },
            { "_id": 3, "name": "Bob", "city": "Rome" },
        ] },
    );
    let aggregate = |pipeline: Vec<Document>, collation: Option<Document>| {
        let mut command = doc! { "aggregate": "people", "pipeline": pipeline, "cursor": {} };
        if let Some(collation) = collation {
            command.insert("collation", collation);
        }
        batch(&ok(&commands, command))
    };
    let compared = vec![
        doc! { "$sort": { "_id": 1 } },
        doc! { "$project": {
            "_id": 0,
            "eq": { "$eq": ["$name", "Ann"] },
            "cmp": { "$cmp": ["$name", "BOB"] },
            "in": { "$in": ["$city", ["OSLO"]] },
        } },
    ];
    assert_eq!(
        aggregate(compared.clone(), Some(case_insensitive())),
        vec![
            doc! { "eq": true, "cmp": -1, "in": true },
            doc! { "eq": true, "cmp": -1, "in": true },
            doc! { "eq": false, "cmp": 0, "in": false },
        ]
    );
    // The simple collation compares by code point: "ANN" < "BOB" < "Bob" < "ann".
    assert_eq!(
        aggregate(compared, None),
        vec![
            doc! { "eq": false, "cmp": 1, "in": false },
            doc! { "eq": false, "cmp": -1, "in": false },
            doc! { "eq": false, "cmp": 1, "in": false },
        ]
    );
    // Keys equal under the collation are one group, named by the first one seen.
    let grouped = vec![
        doc! { "$sort": { "_id": 1 } },
        doc! { "$group": { "_id": "$city", "n": { "$sum": 1 } } },
        doc! { "$sort": { "_id": 1 } },
    ];
    assert_eq!(
        aggregate(grouped.clone(), Some(case_insensitive())),
        vec![
            doc! { "_id": "Oslo", "n": 2 },
            doc! { "_id": "Rome", "n": 1 }
        ]
    );
    assert_eq!(aggregate(grouped, None).len(), 3);
    // $expr in a find, under the collection's default collation and under the find's own.
    ok(
        &commands,
        doc! { "create": "folded", "collation": case_insensitive() },
    );
    ok(
        &commands,
        doc! { "insert": "folded", "documents": [{ "_id": 1, "name": "ann" }, { "_id": 2, "name": "Bob" }] },
    );
    let by_expr = doc! { "$expr": { "$eq": ["$name", "ANN"] } };
    let found = find(
        &commands,
        doc! { "find": "folded", "filter": by_expr.clone() },
    );
    assert_eq!(names(&found), ["ann"]);
    let found = find(
        &commands,
        doc! { "find": "folded", "filter": by_expr.clone(), "collation": { "locale": "simple" } },
    );
    assert!(found.is_empty(), "{found:?}");
    let found = find(
        &commands,
        doc! { "find": "people", "filter": by_expr, "collation": case_insensitive(), "sort": { "_id": 1 } },
    );
    assert_eq!(names(&found), ["ann", "ANN"]);
}

#[test]
fn update_commands_compare_under_the_statement_or_the_collection_collation() {
    let commands = commands();
    ok(
        &commands,
        doc! { "create": "folded", "collation": case_insensitive() },
    );
    ok(
        &commands,
        doc! { "insert": "folded", "documents": [{ "_id": 1, "tags": ["a", "b"] }] },
    );
    let tags = || {
        find(&commands, doc! { "find": "folded" })[0]
            .get_array("tags")
            .expect("tags")
            .clone()
    };
    // The collection's collation: "A" is already there.
    let reply = ok(
        &commands,
        doc! { "update": "folded", "updates": [
            { "q": { "_id": 1 }, "u": { "$addToSet": { "tags": "A" } } },
        ] },
    );
    assert_eq!(reply.get_i32("nModified").ok(), Some(0), "{reply}");
    // The statement's simple collation overrides it.
    let reply = ok(
        &commands,
        doc! { "update": "folded", "updates": [
            { "q": { "_id": 1 }, "u": { "$addToSet": { "tags": "A" } }, "collation": { "locale": "simple" } },
        ] },
    );
    assert_eq!(reply.get_i32("nModified").ok(), Some(1), "{reply}");
    assert_eq!(
        tags(),
        vec![Bson::from("a"), Bson::from("b"), Bson::from("A")]
    );
    // findAndModify's $pull removes both cases under the collection's collation.
    ok(
        &commands,
        doc! { "findAndModify": "folded", "query": { "_id": 1 }, "update": { "$pull": { "tags": "a" } } },
    );
    assert_eq!(tags(), vec![Bson::from("b")]);
    // An aggregate's set operators and $indexOfArray, under the collection's collation.
    let out = batch(&ok(
        &commands,
        doc! { "aggregate": "folded", "cursor": {}, "pipeline": [{ "$project": {
            "_id": 0,
            "union": { "$setUnion": ["$tags", ["B", "c"]] },
            "at": { "$indexOfArray": [["x", "b"], "B"] },
            "max": { "$max": ["a", "B"] },
        } }] },
    ));
    assert_eq!(out, vec![doc! { "union": ["b", "c"], "at": 1, "max": "B" }]);
}

#[test]
fn a_view_has_its_own_collation_which_reads_cannot_override() {
    let directory = tempfile::tempdir().expect("a temporary directory");
    let path = directory.path().join("db");
    {
        let commands = Commands::new(Database::open(&path).expect("open"));
        ok(
            &commands,
            doc! { "insert": "people", "documents": [
                { "_id": 1, "name": "ann" }, { "_id": 2, "name": "Bob" }, { "_id": 3, "name": "ANN" },
            ] },
        );
        ok(
            &commands,
            doc! { "create": "folded", "viewOn": "people", "pipeline": [], "collation": case_insensitive() },
        );
    }
    // Kept in the catalog across a reopen.
    let commands = Commands::new(Database::open(&path).expect("reopen"));
    let listed = batch(&ok(
        &commands,
        doc! { "listCollections": 1, "filter": { "name": "folded" } },
    ));
    let options = listed[0].get_document("options").expect("options");
    let collation = options.get_document("collation").expect("a collation");
    assert_eq!(collation.get_str("locale").ok(), Some("en"), "{options}");
    assert_eq!(collation.get_i32("strength").ok(), Some(2), "{options}");
    assert_eq!(options.get_str("viewOn").ok(), Some("people"));

    // Every read of the view runs under it.
    let found = find(
        &commands,
        doc! { "find": "folded", "filter": { "name": "Ann" }, "sort": { "_id": 1 } },
    );
    assert_eq!(names(&found), ["ann", "ANN"]);
    let counted = ok(
        &commands,
        doc! { "count": "folded", "query": { "name": "aNN" } },
    );
    assert_eq!(counted.get_i32("n").ok(), Some(2), "{counted}");
    let distinct = ok(&commands, doc! { "distinct": "folded", "key": "name" });
    assert_eq!(
        distinct.get_array("values").map(Vec::len).ok(),
        Some(2),
        "{distinct}"
    );
    let grouped = batch(&ok(
        &commands,
        doc! { "aggregate": "folded", "pipeline": [{ "$group": { "_id": "$name" } }], "cursor": {} },
    ));
    assert_eq!(grouped.len(), 2, "{grouped:?}");
    // The same collation given is accepted; another is refused, the simple one included.
    let found = find(
        &commands,
        doc! { "find": "folded", "filter": { "name": "ANN" }, "collation": case_insensitive() },
    );
    assert_eq!(found.len(), 2);
    for collation in [doc! { "locale": "simple" }, doc! { "locale": "fr" }] {
        for command in [
            doc! { "find": "folded", "collation": collation.clone() },
            doc! { "count": "folded", "collation": collation.clone() },
            doc! { "aggregate": "folded", "pipeline": [], "cursor": {}, "collation": collation.clone() },
        ] {
            let (code, message) = fails(&commands, command);
            assert_eq!(code, 167, "{message}");
            assert!(
                message.contains("Cannot override a view's default collation"),
                "{message}"
            );
        }
    }

    // A view without one is simple, whatever the default of the collection it reads.
    ok(
        &commands,
        doc! { "create": "ci", "collation": case_insensitive() },
    );
    ok(
        &commands,
        doc! { "insert": "ci", "documents": [{ "_id": 1, "name": "ann" }] },
    );
    ok(
        &commands,
        doc! { "create": "plain_view", "viewOn": "ci", "pipeline": [] },
    );
    let found = find(
        &commands,
        doc! { "find": "plain_view", "filter": { "name": "ANN" } },
    );
    assert!(found.is_empty(), "{found:?}");
    let found = find(
        &commands,
        doc! { "find": "ci", "filter": { "name": "ANN" } },
    );
    assert_eq!(found.len(), 1);

    // Views that read each other have one collation.
    let (code, message) = fails(
        &commands,
        doc! { "create": "mixed", "viewOn": "folded", "pipeline": [] },
    );
    assert_eq!(code, 167, "{message}");
    let (code, message) = fails(
        &commands,
        doc! { "create": "mixed", "viewOn": "plain_view", "pipeline": [
            { "$lookup": { "from": "folded", "localField": "_id", "foreignField": "_id", "as": "f" } },
        ] },
    );
    assert_eq!(code, 167, "{message}");
    ok(
        &commands,
        doc! { "create": "refolded", "viewOn": "folded", "pipeline": [], "collation": case_insensitive() },
    );
    let found = find(
        &commands,
        doc! { "find": "refolded", "filter": { "name": "ANN" } },
    );
    assert_eq!(found.len(), 2);
    let (code, message) = fails(
        &commands,
        doc! { "collMod": "plain_view", "viewOn": "folded", "pipeline": [] },
    );
    assert_eq!(code, 167, "{message}");
}
