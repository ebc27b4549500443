//! `Collection::aggregate` through the facade: the driver-shaped API, the planner's prefix,
//! `$lookup` across collections, transactions, and the writing stages, which are atomic and
//! change nothing when they fail.

use bson::{Bson, Document, doc};
use serde::Deserialize;
use spillway::{Database, ErrorKind, IndexModel, Pattern};

fn books() -> Vec<Document> {
    vec![
        doc! { "_id": 1, "title": "Invisible Cities", "author": "Calvino", "year": 1972, "price": 12.5 },
        doc! { "_id": 2, "title": "If on a winter's night", "author": "Calvino", "year": 1979, "price": 15.0 },
        doc! { "_id": 3, "title": "Dune", "author": "Herbert", "year": 1965, "price": 9.5 },
        doc! { "_id": 4, "title": "The Baron in the Trees", "author": "Calvino", "year": 1957 },
        doc! { "_id": 5, "title": "Children of Dune", "author": "Herbert", "year": 1976, "price": 11.5 },
    ]
}

fn database() -> Database {
    let db = Database::open_in_memory().unwrap();
    db.collection::<Document>("books")
        .insert_many(books())
        .run()
        .unwrap();
    db
}

fn collect(cursor: spillway::Cursor<Document>) -> Vec<Document> {
    cursor.collect::<Result<_, _>>().unwrap()
}

fn all(db: &Database, collection: &str) -> Vec<Document> {
    collect(
        db.collection::<Document>(collection)
            .find(doc! {})
            .run()
            .unwrap(),
    )
}

#[test]
fn group_sort_and_project_like_mongodb() {
    let db = database();
    let books = db.collection::<Document>("books");
    let result = collect(
        books
            .aggregate([
                doc! { "$group": { "_id": "$author", "books": { "$sum": 1 }, "first": { "$min": "$year" }, "price": { "$avg": "$price" } } },
                doc! { "$sort": { "_id": 1 } },
            ])
            .run()
            .unwrap(),
    );
    assert_eq!(
        result,
        vec![
            doc! { "_id": "Calvino", "books": 3, "first": 1957, "price": 13.75 },
            doc! { "_id": "Herbert", "books": 2, "first": 1965, "price": 10.5 },
        ]
    );
}

#[test]
fn count_documents_as_the_drivers_send_it() {
    let db = database();
    let books = db.collection::<Document>("books");
    let result = collect(
        books
            .aggregate([
                doc! { "$match": { "author": "Calvino" } },
                doc! { "$group": { "_id": 1, "n": { "$sum": 1 } } },
            ])
            .run()
            .unwrap(),
    );
    assert_eq!(result, vec![doc! { "_id": 1, "n": 3 }]);
}

#[test]
fn typed_results_and_let_variables() {
    #[derive(Debug, Deserialize, PartialEq)]
    struct Title {
        title: String,
    }
    let db = database();
    let books = db.collection::<Document>("books");
    let titles: Vec<Title> = books
        .aggregate([
            doc! { "$match": { "$expr": { "$gt": ["$year", "$$after"] } } },
            doc! { "$sort": { "year": 1 } },
            doc! { "$project": { "_id": 0, "title": 1 } },
        ])
        .let_vars(doc! { "after": 1970 })
        .with_type::<Title>()
        .run()
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(
        titles,
        vec![
            Title {
                title: "Invisible Cities".into()
            },
            Title {
                title: "Children of Dune".into()
            },
            Title {
                title: "If on a winter's night".into()
            },
        ]
    );
}

#[test]
fn leading_match_and_sort_use_the_index() {
    let db = database();
    let books = db.collection::<Document>("books");
    books
        .create_index(IndexModel::builder().keys(doc! { "author": 1 }).build())
        .run()
        .unwrap();
    let explain = books
        .aggregate([
            doc! { "$match": { "author": "Herbert" } },
            doc! { "$limit": 1 },
            doc! { "$project": { "title": 1 } },
        ])
        .explain()
        .unwrap();
    let stages = explain.get_array("stages").unwrap();
    let cursor = stages[0]
        .as_document()
        .unwrap()
        .get_document("$cursor")
        .unwrap();
    let plan = cursor
        .get_document("queryPlanner")
        .unwrap()
        .get_document("winningPlan")
        .unwrap();
    assert!(plan.to_string().contains("IXSCAN"), "{explain}");
    assert_eq!(cursor.get_i64("limit").unwrap(), 1);
    assert_eq!(
        cursor
            .get_document("executionStats")
            .unwrap()
            .get_i64("totalDocsExamined")
            .unwrap(),
        1,
        "{explain}"
    );
    assert!(
        stages[1].as_document().unwrap().contains_key("$project"),
        "{explain}"
    );
}

#[test]
fn lookup_reads_the_other_collection() {
    let db = database();
    db.collection::<Document>("authors")
        .insert_many([
            doc! { "_id": "Calvino", "country": "Italy" },
            doc! { "_id": "Herbert", "country": "USA" },
        ])
        .run()
        .unwrap();
    let result = collect(
        db.collection::<Document>("books")
            .aggregate([
                doc! { "$match": { "_id": 3 } },
                doc! { "$lookup": { "from": "authors", "localField": "author", "foreignField": "_id", "as": "by" } },
                doc! { "$project": { "country": { "$first": "$by.country" } } },
            ])
            .run()
            .unwrap(),
    );
    assert_eq!(result, vec![doc! { "_id": 3, "country": "USA" }]);
}

#[test]
fn out_replaces_the_target_in_one_transaction() {
    let db = database();
    let summary = db.collection::<Document>("summary");
    summary.insert_one(doc! { "_id": "stale" }).run().unwrap();
    summary
        .create_index(IndexModel::builder().keys(doc! { "books": 1 }).build())
        .run()
        .unwrap();
    let cursor = db
        .collection::<Document>("books")
        .aggregate([
            doc! { "$group": { "_id": "$author", "books": { "$sum": 1 } } },
            doc! { "$sort": { "_id": 1 } },
            doc! { "$out": "summary" },
        ])
        .run()
        .unwrap();
    assert_eq!(collect(cursor), Vec::<Document>::new());
    assert_eq!(
        all(&db, "summary"),
        vec![
            doc! { "_id": "Calvino", "books": 3 },
            doc! { "_id": "Herbert", "books": 2 }
        ]
    );
    // The target's indexes stay.
    assert!(
        summary
            .list_index_names()
            .run()
            .unwrap()
            .contains(&"books_1".to_string())
    );
}

#[test]
fn a_failing_out_changes_nothing() {
    let db = database();
    let summary = db.collection::<Document>("summary");
    summary
        .insert_one(doc! { "_id": "kept", "n": 1 })
        .run()
        .unwrap();
    summary
        .create_index(
            IndexModel::builder()
                .keys(doc! { "n": 1 })
                .options(spillway::IndexOptions::builder().unique(true).build())
                .build(),
        )
        .run()
        .unwrap();
    // Every output document has n: 1: the unique index refuses the second one.
    let error = db
        .collection::<Document>("books")
        .aggregate([
            doc! { "$project": { "n": { "$literal": 1 } } },
            doc! { "$out": "summary" },
        ])
        .run()
        .unwrap_err();
    assert!(error.is_duplicate_key(), "{error}");
    assert_eq!(all(&db, "summary"), vec![doc! { "_id": "kept", "n": 1 }]);
}

#[test]
fn merge_updates_matching_documents_and_inserts_the_others() {
    let db = database();
    let totals = db.collection::<Document>("totals");
    totals
        .insert_many([doc! { "_id": "Calvino", "books": 0, "note": "kept" }])
        .run()
        .unwrap();
    db.collection::<Document>("books")
        .aggregate([
            doc! { "$group": { "_id": "$author", "books": { "$sum": 1 } } },
            doc! { "$merge": { "into": "totals", "whenMatched": "merge", "whenNotMatched": "insert" } },
        ])
        .run()
        .unwrap();
    assert_eq!(
        all(&db, "totals"),
        vec![
            doc! { "_id": "Calvino", "books": 3, "note": "kept" },
            doc! { "_id": "Herbert", "books": 2 },
        ]
    );
    // whenMatched: fail refuses the whole statement: nothing changes.
    let error = db
        .collection::<Document>("books")
        .aggregate([
            doc! { "$group": { "_id": "$author", "books": { "$sum": 10 } } },
            doc! { "$merge": { "into": "totals", "whenMatched": "fail" } },
        ])
        .run()
        .unwrap_err();
    assert!(error.code().is_some(), "{error}");
    assert_eq!(
        all(&db, "totals")[0],
        doc! { "_id": "Calvino", "books": 3, "note": "kept" }
    );
}

#[test]
fn bad_pipelines_give_mongodb_codes_and_change_nothing() {
    let db = database();
    let books = db.collection::<Document>("books");
    let before = all(&db, "books");
    let cases: Vec<(Vec<Document>, i32)> = vec![
        (vec![doc! { "$frobnicate": {} }], 40324),
        (vec![doc! { "$out": "x" }, doc! { "$match": {} }], 40601),
        (vec![doc! { "$project": { "n": { "$nosuch": 1 } } }], 168),
        (vec![doc! { "$group": { "n": { "$sum": 1 } } }], 15955),
        (vec![doc! { "$match": {}, "$limit": 1 }], 40323),
    ];
    for (pipeline, code) in cases {
        let error = books.aggregate(pipeline.clone()).run().unwrap_err();
        assert_eq!(error.code(), Some(code), "{pipeline:?}: {error}");
    }
    // A runtime error: $add of a string, with its code, and $out did not write.
    let error = books
        .aggregate([
            doc! { "$project": { "x": { "$add": ["$title", 1] } } },
            doc! { "$out": "never" },
        ])
        .run()
        .unwrap_err();
    assert_eq!(error.code(), Some(16554), "{error}");
    assert!(
        matches!(error.kind(), ErrorKind::Aggregation(_)),
        "{error:?}"
    );
    assert_eq!(all(&db, "books"), before);
    assert!(
        !db.list_collection_names()
            .run()
            .unwrap()
            .contains(&"never".to_string())
    );
}

#[test]
fn inside_a_transaction_a_pipeline_sees_its_writes_and_out_commits_with_it() {
    let db = database();
    let books = db.collection::<Document>("books");
    db.transaction(|transaction| {
        books
            .insert_one(
                doc! { "_id": 6, "title": "Mr. Palomar", "author": "Calvino", "year": 1983 },
            )
            .session(transaction)
            .run()?;
        let counted = books
            .aggregate([
                doc! { "$match": { "author": "Calvino" } },
                doc! { "$count": "n" },
            ])
            .session(transaction)
            .run()?
            .collect::<Result<Vec<_>, _>>()?;
        assert_eq!(counted, vec![doc! { "n": 4 }]);
        books
            .aggregate([
                doc! { "$match": { "year": { "$gt": 1980 } } },
                doc! { "$out": "recent" },
            ])
            .session(transaction)
            .run()?;
        Ok(())
    })
    .unwrap();
    assert_eq!(all(&db, "recent").len(), 1);
}

#[test]
fn unwind_of_a_managed_array_gives_every_logical_element() {
    let db = Database::open_in_memory().unwrap();
    db.create_collection("sales").run().unwrap();
    db.set_pattern(
        Pattern::outlier("sales", "buyers")
            .threshold(3)
            .bucket_capacity(2),
    )
    .unwrap();
    let sales = db.collection::<Document>("sales");
    let buyers: Vec<Bson> = (0..2500).map(|i| Bson::String(format!("u{i}"))).collect();
    sales
        .insert_one(doc! { "_id": 1, "title": "viral", "buyers": buyers })
        .run()
        .unwrap();
    let explain = sales
        .aggregate([doc! { "$unwind": { "path": "$buyers", "includeArrayIndex": "i" } }])
        .explain()
        .unwrap();
    assert!(
        explain.to_string().contains("unwound from chunks"),
        "{explain}"
    );
    let unwound = collect(
        sales
            .aggregate([
                doc! { "$unwind": { "path": "$buyers", "includeArrayIndex": "i" } },
                doc! { "$match": { "i": { "$in": [0_i64, 999_i64, 1000_i64, 2499_i64] } } },
            ])
            .run()
            .unwrap(),
    );
    assert_eq!(
        unwound,
        vec![
            doc! { "_id": 1, "title": "viral", "buyers": "u0", "i": 0_i64 },
            doc! { "_id": 1, "title": "viral", "buyers": "u999", "i": 999_i64 },
            doc! { "_id": 1, "title": "viral", "buyers": "u1000", "i": 1000_i64 },
            doc! { "_id": 1, "title": "viral", "buyers": "u2499", "i": 2499_i64 },
        ]
    );
    let size = collect(
        sales
            .aggregate([doc! { "$project": { "n": { "$size": "$buyers" }, "last": { "$last": "$buyers" } } }])
            .run()
            .unwrap(),
    );
    assert_eq!(size, vec![doc! { "_id": 1, "n": 2500, "last": "u2499" }]);
}
