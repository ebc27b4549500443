//! `find`'s `min`/`max` options: index bounds on the hinted index (min inclusive, max
//! exclusive, in the index's key order), through the facade and the command layer, with
//! MongoDB's error codes when the hint is missing or does not fit the bounds.

use spillway::bson::{Bson, Document, doc};
use spillway::command::Commands;
use spillway::{Database, Hint, IndexModel};

fn seeded() -> Database {
    let db = Database::open_in_memory().unwrap();
    let coll = db.collection::<Document>("coll");
    coll.insert_many((0..10).map(|j| doc! { "_id": j, "j": j, "k": 9 - j }))
        .run()
        .unwrap();
    for keys in [doc! { "j": 1 }, doc! { "j": 1, "k": 1 }, doc! { "k": -1 }] {
        coll.create_index(IndexModel {
            keys,
            options: None,
        })
        .run()
        .unwrap();
    }
    db
}

fn js(documents: &[Document]) -> Vec<i32> {
    documents
        .iter()
        .map(|document| document.get_i32("j").unwrap())
        .collect()
}

/// The `j` of each document `find` returns with this hint and bounds.
fn check(
    hint: Hint,
    min: Option<Document>,
    max: Option<Document>,
    filter: Document,
    expected: &[i32],
) {
    let db = seeded();
    let coll = db.collection::<Document>("coll");
    let mut find = coll.find(filter).hint(hint);
    if let Some(min) = min {
        find = find.min(min);
    }
    if let Some(max) = max {
        find = find.max(max);
    }
    let found: Vec<Document> = find.run().unwrap().map(Result::unwrap).collect();
    assert_eq!(js(&found), expected);
}

fn name(name: &str) -> Hint {
    Hint::Name(name.into())
}

#[test]
fn min_is_inclusive_and_max_exclusive() {
    let all = doc! {};
    check(
        name("j_1"),
        Some(doc! { "j": 3 }),
        None,
        all.clone(),
        &[3, 4, 5, 6, 7, 8, 9],
    );
    check(
        name("j_1"),
        None,
        Some(doc! { "j": 3 }),
        all.clone(),
        &[0, 1, 2],
    );
    check(
        name("j_1"),
        Some(doc! { "j": 3 }),
        Some(doc! { "j": 6 }),
        all.clone(),
        &[3, 4, 5],
    );
    // Bounds on a compound index compare whole keys: (3, 6) ≤ key < (5, 0).
    check(
        Hint::Keys(doc! { "j": 1, "k": 1 }),
        Some(doc! { "j": 3, "k": 6 }),
        Some(doc! { "j": 5, "k": 0 }),
        all.clone(),
        &[3, 4],
    );
    check(
        Hint::Keys(doc! { "j": 1, "k": 1 }),
        Some(doc! { "j": 3, "k": 7 }),
        None,
        all.clone(),
        &[4, 5, 6, 7, 8, 9],
    );
    // A descending field is bounded in index order: min is its high end.
    check(
        name("k_-1"),
        Some(doc! { "k": 6 }),
        Some(doc! { "k": 3 }),
        all,
        &[3, 4, 5],
    );
}

#[test]
fn the_filter_still_applies_and_an_index_sort_is_kept() {
    check(
        name("j_1"),
        Some(doc! { "j": 2 }),
        Some(doc! { "j": 8 }),
        doc! { "k": { "$lt": 5 } },
        &[5, 6, 7],
    );
    let db = seeded();
    let coll = db.collection::<Document>("coll");
    let found: Vec<Document> = coll
        .find(doc! {})
        .hint(name("j_1"))
        .min(doc! { "j": 2 })
        .max(doc! { "j": 5 })
        .sort(doc! { "j": -1 })
        .run()
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert_eq!(js(&found), [4, 3, 2]);
}

#[test]
fn explain_shows_the_bounds_as_one_index_range() {
    let db = seeded();
    let coll = db.collection::<Document>("coll");
    let explained = coll
        .find(doc! {})
        .hint(name("j_1_k_1"))
        .min(doc! { "j": 3, "k": 6 })
        .explain()
        .unwrap();
    let scan = explained.winning_plan.get_document("inputStage").unwrap();
    assert_eq!(scan.get_str("stage").unwrap(), "IXSCAN");
    assert_eq!(
        scan.get_document("indexBounds").unwrap(),
        &doc! { "j": ["[3, MaxKey)"], "k": ["[6, MaxKey)"] }
    );
    // The scan reads the range only: 7 keys, not 10.
    assert_eq!(explained.keys_examined, 7);
    assert_eq!(explained.n_returned, 7);
}

/// The code of the error `find` with these options fails with.
fn error_code(hint: Option<Hint>, min: Option<Document>, max: Option<Document>) -> Option<i32> {
    let db = seeded();
    let coll = db.collection::<Document>("coll");
    let mut find = coll.find(doc! {});
    if let Some(hint) = hint {
        find = find.hint(hint);
    }
    if let Some(min) = min {
        find = find.min(min);
    }
    if let Some(max) = max {
        find = find.max(max);
    }
    match find.run() {
        Ok(_) => panic!("expected an error"),
        Err(error) => error.code(),
    }
}

#[test]
fn mismatched_bounds_and_hints_fail_with_mongodbs_codes() {
    // No hint.
    assert_eq!(error_code(None, Some(doc! { "j": 3 }), None), Some(51173));
    assert_eq!(
        error_code(
            Some(Hint::Keys(doc! { "$natural": 1 })),
            None,
            Some(doc! { "j": 3 })
        ),
        Some(51173)
    );
    // min and max name different fields.
    assert_eq!(
        error_code(
            Some(name("j_1")),
            Some(doc! { "j": 3 }),
            Some(doc! { "k": 3 })
        ),
        Some(51176)
    );
    // Fields out of the index's order, missing, or another index's.
    let compound = || Some(Hint::Keys(doc! { "j": 1, "k": 1 }));
    assert_eq!(
        error_code(compound(), Some(doc! { "k": 3, "j": 3 }), None),
        Some(51174)
    );
    assert_eq!(
        error_code(compound(), Some(doc! { "j": 3 }), None),
        Some(51174)
    );
    assert_eq!(
        error_code(Some(name("j_1")), None, Some(doc! { "k": 3 })),
        Some(51174)
    );
    // min not before max.
    assert_eq!(
        error_code(
            Some(name("j_1")),
            Some(doc! { "j": 5 }),
            Some(doc! { "j": 5 })
        ),
        Some(51175)
    );
    // A hint naming no index.
    assert_eq!(
        error_code(Some(name("k")), Some(doc! { "k": 3 }), None),
        Some(2)
    );
}

fn run(commands: &Commands, mut command: Document) -> Document {
    command.insert("$db", "test");
    commands.execute(command)
}

#[test]
fn the_find_command_takes_min_and_max() {
    let commands = Commands::new(Database::open_in_memory().unwrap());
    let reply = run(
        &commands,
        doc! { "insert": "coll", "documents": (0..10).map(|j| Bson::Document(doc! { "j": j })).collect::<Vec<_>>() },
    );
    assert_eq!(reply.get("ok"), Some(&Bson::Double(1.0)), "{reply}");
    let reply = run(
        &commands,
        doc! { "createIndexes": "coll", "indexes": [{ "key": { "j": 1 }, "name": "j_1" }] },
    );
    assert_eq!(reply.get("ok"), Some(&Bson::Double(1.0)), "{reply}");
    let reply = run(
        &commands,
        doc! { "find": "coll", "min": { "j": 3 }, "max": { "j": 7 }, "hint": "j_1" },
    );
    let batch = reply
        .get_document("cursor")
        .and_then(|cursor| cursor.get_array("firstBatch"))
        .unwrap_or_else(|_| panic!("{reply}"));
    let found: Vec<i32> = batch
        .iter()
        .map(|document| document.as_document().unwrap().get_i32("j").unwrap())
        .collect();
    assert_eq!(found, [3, 4, 5, 6]);
    // An empty bound is no bound.
    let reply = run(
        &commands,
        doc! { "find": "coll", "min": {}, "max": { "j": 2 }, "hint": { "j": 1 } },
    );
    let batch = reply
        .get_document("cursor")
        .and_then(|cursor| cursor.get_array("firstBatch"))
        .unwrap_or_else(|_| panic!("{reply}"));
    assert_eq!(batch.len(), 2);
    for (command, code) in [
        (doc! { "find": "coll", "min": { "j": 3 } }, 51173),
        (
            doc! { "find": "coll", "min": { "k": 3 }, "hint": "j_1" },
            51174,
        ),
        (
            doc! { "find": "coll", "min": { "j": 3 }, "max": { "j": 1 }, "hint": "j_1" },
            51175,
        ),
        (
            doc! { "find": "coll", "min": { "j": 3 }, "max": { "k": 1 }, "hint": "j_1" },
            51176,
        ),
        (doc! { "find": "coll", "min": 3, "hint": "j_1" }, 14),
    ] {
        let reply = run(&commands, command.clone());
        assert_eq!(
            reply.get("ok"),
            Some(&Bson::Double(0.0)),
            "{command}: {reply}"
        );
        assert_eq!(reply.get_i32("code").unwrap(), code, "{command}: {reply}");
    }
    let explained = run(
        &commands,
        doc! { "explain": { "find": "coll", "min": { "j": 8 }, "hint": "j_1" } },
    );
    let n_returned = explained
        .get_document("executionStats")
        .and_then(|stats| stats.get_i64("nReturned"))
        .unwrap_or_else(|_| panic!("{explained}"));
    assert_eq!(n_returned, 2);
}

/// The `_id` index bounds too (the documents keyspace is ordered by `_id`): MongoDB's
/// command monitoring test hints `{ _id: 1 }` with `min`/`max` on `_id`.
#[test]
fn min_and_max_bound_the_id_index() {
    let ids = doc! { "_id": 1 };
    check(
        Hint::Keys(ids.clone()),
        Some(doc! { "_id": 2 }),
        Some(doc! { "_id": 6 }),
        doc! {},
        &[2, 3, 4, 5],
    );
    check(
        name("_id_"),
        None,
        Some(doc! { "_id": 3 }),
        doc! { "j": { "$gt": 0 } },
        &[1, 2],
    );
    // Sorted by another field, skipped: the sort applies to the bounded documents.
    let db = seeded();
    let found: Vec<Document> = db
        .collection::<Document>("coll")
        .find(doc! { "_id": { "$gt": 1 } })
        .hint(Hint::Keys(ids.clone()))
        .min(doc! { "_id": 0 })
        .max(doc! { "_id": 6 })
        .sort(doc! { "k": 1 })
        .skip(2)
        .run()
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert_eq!(js(&found), [3, 2]);
    assert_eq!(
        error_code(Some(Hint::Keys(ids.clone())), Some(doc! { "j": 1 }), None),
        Some(51174)
    );
    assert_eq!(
        error_code(
            Some(Hint::Keys(ids)),
            Some(doc! { "_id": 5 }),
            Some(doc! { "_id": 5 })
        ),
        Some(51175)
    );
}
