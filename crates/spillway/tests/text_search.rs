//! Text indexes and `$text` queries, through the facade and the command layer: terms, phrases
//! and negations, MongoDB's scores in projections and sorts, the index kept in step with
//! writes, and MongoDB's shapes and codes.

use spillway::bson::{Bson, Document, doc};
use spillway::command::Commands;
use spillway::{Collection, Database, IndexModel, IndexOptions};

fn text_collection(db: &Database, options: Option<IndexOptions>) -> Collection<Document> {
    let coll = db.collection::<Document>("coll");
    coll.insert_many([
        doc! { "_id": 1, "t": "spam eggs and spam" },
        doc! { "_id": 2, "t": "spam" },
        doc! { "_id": 3, "t": "egg sausage and bacon" },
        doc! { "_id": 4, "t": "Running shoes", "u": "the spam aisle" },
        doc! { "_id": 5, "n": 7 },
    ])
    .run()
    .unwrap();
    coll.create_index(IndexModel {
        keys: doc! { "t": "text" },
        options,
    })
    .run()
    .unwrap();
    coll
}

fn ids(coll: &Collection<Document>, search: &str) -> Vec<i32> {
    let mut found: Vec<i32> = coll
        .find(doc! { "$text": { "$search": search } })
        .run()
        .unwrap()
        .map(|document| document.unwrap().get_i32("_id").unwrap())
        .collect();
    found.sort_unstable();
    found
}

#[test]
fn searches_find_terms_phrases_and_negations() {
    let db = Database::open_in_memory().unwrap();
    let coll = text_collection(&db, None);
    assert_eq!(ids(&coll, "spam"), [1, 2]);
    assert_eq!(ids(&coll, "eggs"), [1, 3]);
    assert_eq!(ids(&coll, "run bacon"), [3, 4]);
    assert_eq!(ids(&coll, "spam -eggs"), [2]);
    assert_eq!(ids(&coll, "\"sausage and bacon\""), [3]);
    assert_eq!(ids(&coll, "\"bacon and sausage\""), Vec::<i32>::new());
    assert_eq!(ids(&coll, "the and"), Vec::<i32>::new());
    // Other filters combine with $text.
    let found: Vec<Document> = coll
        .find(doc! { "$text": { "$search": "spam" }, "_id": { "$gt": 1 } })
        .run()
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert_eq!(found, [doc! { "_id": 2, "t": "spam" }]);
}

#[test]
fn scores_are_projected_and_sorted_highest_first() {
    let db = Database::open_in_memory().unwrap();
    let coll = text_collection(&db, None);
    let found: Vec<Document> = coll
        .find(doc! { "$text": { "$search": "spam" } })
        .projection(doc! { "score": { "$meta": "textScore" } })
        .sort(doc! { "score": { "$meta": "textScore" } })
        .run()
        .unwrap()
        .map(Result::unwrap)
        .collect();
    let scores: Vec<(i32, f64)> = found
        .iter()
        .map(|document| {
            (
                document.get_i32("_id").unwrap(),
                document.get_f64("score").unwrap(),
            )
        })
        .collect();
    // MongoDB's formula: "spam eggs and spam" 1.5 × (0.5 × 2/3 + 0.5) = 1.25; "spam" 1.1.
    assert_eq!(scores.len(), 2);
    assert_eq!(scores[0].0, 1);
    assert!((scores[0].1 - 1.25).abs() < 1e-9, "{scores:?}");
    assert_eq!(scores[1].0, 2);
    assert!((scores[1].1 - 1.1).abs() < 1e-9, "{scores:?}");
    assert_eq!(found[1].get_str("t").unwrap(), "spam");
}

#[test]
fn weights_and_languages_shape_matches_and_scores() {
    let db = Database::open_in_memory().unwrap();
    let coll = db.collection::<Document>("coll");
    coll.insert_many([
        doc! { "_id": 1, "title": "running", "body": "x" },
        doc! { "_id": 2, "title": "x", "body": "running" },
        doc! { "_id": 3, "title": "running", "lang": "none" },
    ])
    .run()
    .unwrap();
    coll.create_index(IndexModel {
        keys: doc! { "title": "text", "body": "text" },
        options: Some(IndexOptions {
            weights: Some(doc! { "title": 10 }),
            language_override: Some("lang".into()),
            ..IndexOptions::default()
        }),
    })
    .run()
    .unwrap();
    let found: Vec<(i32, f64)> = coll
        .find(doc! { "$text": { "$search": "runs" } })
        .projection(doc! { "s": { "$meta": "textScore" } })
        .sort(doc! { "s": { "$meta": "textScore" } })
        .run()
        .unwrap()
        .map(|document| {
            let document = document.unwrap();
            (
                document.get_i32("_id").unwrap(),
                document.get_f64("s").unwrap(),
            )
        })
        .collect();
    // Document 3 is in language "none": "running" is not stemmed to "run".
    assert_eq!(found.len(), 2, "{found:?}");
    assert_eq!(found[0].0, 1);
    assert!((found[0].1 - 10.0).abs() < 1e-9, "{found:?}");
    assert_eq!(found[1].0, 2);
    assert!((found[1].1 - 1.0).abs() < 1e-9, "{found:?}");
}

#[test]
fn the_index_follows_writes() {
    let db = Database::open_in_memory().unwrap();
    let coll = text_collection(&db, None);
    coll.update_one(doc! { "_id": 2 }, doc! { "$set": { "t": "ham" } })
        .run()
        .unwrap();
    coll.insert_one(doc! { "_id": 6, "t": ["more spam", "toast"] })
        .run()
        .unwrap();
    coll.delete_one(doc! { "_id": 1 }).run().unwrap();
    assert_eq!(ids(&coll, "spam"), [6]);
    assert_eq!(ids(&coll, "ham toast"), [2, 6]);
    assert_eq!(
        coll.count_documents(doc! { "$text": { "$search": "toast" } })
            .run()
            .unwrap(),
        1
    );
    let deleted = coll
        .delete_many(doc! { "$text": { "$search": "ham" } })
        .run()
        .unwrap();
    assert_eq!(deleted.deleted_count, 1);
    let report = db.verify().unwrap();
    assert!(report.is_clean(), "{report:?}");
    // An unsupported language named by a document is refused, as in MongoDB.
    let error = coll
        .insert_one(doc! { "t": "hola", "language": "klingon" })
        .run()
        .unwrap_err();
    assert_eq!(error.code(), Some(17262), "{error}");
}

#[test]
fn explain_shows_the_text_index_scan() {
    let db = Database::open_in_memory().unwrap();
    let coll = text_collection(&db, None);
    let explained = coll
        .find(doc! { "$text": { "$search": "spam bacon" } })
        .explain()
        .unwrap();
    let scan = explained.winning_plan.get_document("inputStage").unwrap();
    assert_eq!(scan.get_str("indexName").unwrap(), "t_text");
    assert_eq!(
        scan.get_document("indexBounds").unwrap(),
        &doc! { "_fts": ["bacon", "spam"] }
    );
    assert_eq!(explained.n_returned, 3);
    assert_eq!(explained.docs_examined, 3);
}

#[test]
fn misuse_fails_with_mongodbs_codes() {
    let db = Database::open_in_memory().unwrap();
    let plain = db.collection::<Document>("plain");
    plain.insert_one(doc! { "t": "spam" }).run().unwrap();
    let code = |result: spillway::Result<spillway::Cursor<Document>>| match result {
        Ok(_) => panic!("expected an error"),
        Err(error) => error.code(),
    };
    assert_eq!(
        code(plain.find(doc! { "$text": { "$search": "spam" } }).run()),
        Some(27)
    );
    assert_eq!(
        code(
            plain
                .find(doc! {})
                .projection(doc! { "s": { "$meta": "textScore" } })
                .run()
        ),
        Some(40218)
    );
    assert_eq!(
        code(
            plain
                .find(doc! {})
                .sort(doc! { "s": { "$meta": "textScore" } })
                .run()
        ),
        Some(40218)
    );
    let coll = text_collection(&db, None);
    for filter in [
        doc! { "$or": [{ "$text": { "$search": "spam" } }, { "n": 7 }] },
        doc! { "$text": { "$search": 3 } },
        doc! { "$text": { "$search": "spam", "$language": "klingon" } },
    ] {
        assert!(coll.find(filter.clone()).run().is_err(), "{filter}");
    }
    // One text index per collection.
    let second = coll
        .create_index(IndexModel {
            keys: doc! { "u": "text" },
            options: None,
        })
        .run();
    assert!(second.is_err());
    // Compound text indexes are refused clearly.
    let compound = db
        .collection::<Document>("other")
        .create_index(IndexModel {
            keys: doc! { "a": 1, "t": "text" },
            options: None,
        })
        .run()
        .unwrap_err();
    assert!(
        compound.to_string().contains("compound text indexes"),
        "{compound}"
    );
}

#[test]
fn the_index_survives_a_reopen() {
    let directory = tempfile::tempdir().unwrap();
    {
        let db = Database::open(directory.path()).unwrap();
        text_collection(
            &db,
            Some(IndexOptions {
                default_language: Some("none".into()),
                ..IndexOptions::default()
            }),
        );
    }
    let db = Database::open(directory.path()).unwrap();
    let coll = db.collection::<Document>("coll");
    // Language "none": "eggs" is not stemmed, so "egg" finds document 3 only.
    assert_eq!(ids(&coll, "egg"), [3]);
    let listed = coll
        .list_indexes()
        .run()
        .unwrap()
        .collect::<spillway::Result<Vec<_>>>()
        .unwrap();
    let options = listed[1].options.clone().unwrap();
    assert_eq!(listed[1].keys, doc! { "_fts": "text", "_ftsx": 1 });
    assert_eq!(options.default_language.as_deref(), Some("none"));
    assert_eq!(options.weights, Some(doc! { "t": 1 }));
}

fn run(commands: &Commands, mut command: Document) -> Document {
    command.insert("$db", "test");
    let reply = commands.execute(command.clone());
    assert_eq!(
        reply.get("ok"),
        Some(&Bson::Double(1.0)),
        "{command}: {reply}"
    );
    reply
}

#[test]
fn commands_create_list_and_query_text_indexes() {
    let commands = Commands::new(Database::open_in_memory().unwrap());
    run(
        &commands,
        doc! { "insert": "coll", "documents": [
            { "_id": 1, "t": "spam eggs and spam" }, { "_id": 2, "t": "spam" },
        ] },
    );
    run(
        &commands,
        doc! { "createIndexes": "coll", "indexes": [{
            "key": { "t": "text" }, "name": "t_text", "weights": { "t": 5 },
            "default_language": "english", "textIndexVersion": 3,
        }] },
    );
    let listed = run(&commands, doc! { "listIndexes": "coll" });
    let batch = listed
        .get_document("cursor")
        .unwrap()
        .get_array("firstBatch")
        .unwrap();
    let index = batch[1].as_document().unwrap();
    assert_eq!(
        index,
        &doc! {
            "v": 2, "key": { "_fts": "text", "_ftsx": 1 }, "name": "t_text",
            "weights": { "t": 5 }, "default_language": "english",
            "language_override": "language", "textIndexVersion": 3,
        }
    );
    let found = run(
        &commands,
        doc! {
            "find": "coll", "filter": { "$text": { "$search": "spam" } },
            "projection": { "score": { "$meta": "textScore" }, "_id": 1 },
            "sort": { "score": { "$meta": "textScore" } },
        },
    );
    let batch = found
        .get_document("cursor")
        .unwrap()
        .get_array("firstBatch")
        .unwrap();
    let scores: Vec<f64> = batch
        .iter()
        .map(|document| document.as_document().unwrap().get_f64("score").unwrap())
        .collect();
    assert_eq!(scores.len(), 2);
    assert!(
        (scores[0] - 6.25).abs() < 1e-9 && (scores[1] - 5.5).abs() < 1e-9,
        "{scores:?}"
    );
    let mut command =
        doc! { "find": "other", "filter": { "$text": { "$search": "spam" } }, "$db": "test" };
    let reply = commands.execute(command.clone());
    assert_eq!(reply.get_i32("code").ok(), Some(27), "{reply}");
    command.insert("find", "coll");
    command.insert(
        "filter",
        doc! { "$nor": [{ "$text": { "$search": "spam" } }] },
    );
    let reply = commands.execute(command);
    assert_eq!(reply.get("ok"), Some(&Bson::Double(0.0)), "{reply}");
}
