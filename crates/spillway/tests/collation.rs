//! MongoDB's `collation` option through the facade: filters, sorts, `distinct`, counts,
//! writes, update operators and pipelines compare strings under the collation, with or
//! without an index on the field (index keys order strings by code point, so the planner
//! must not let them bound a collated query), with or without a pattern policy.

use spillway::bson::{Bson, Document};
use spillway::{Collation, Database, IndexModel, Pattern, doc};

fn collation(spec: &Document) -> Collation {
    Collation::parse(spec).unwrap()
}

fn case_insensitive() -> Collation {
    collation(&doc! { "locale": "en_US", "strength": 2 })
}

/// A collection of pings and pongs in mixed case, with an index on `x` when `indexed`.
fn pings(indexed: bool) -> (Database, spillway::Collection<Document>) {
    let db = Database::open_in_memory().unwrap();
    let coll = db.collection::<Document>("coll");
    coll.insert_many([
        doc! { "_id": 1, "x": 11 },
        doc! { "_id": 2, "x": "ping" },
        doc! { "_id": 3, "x": "pINg" },
        doc! { "_id": 4, "x": "pong" },
        doc! { "_id": 5, "x": "pONg" },
        doc! { "_id": 6, "x": "Éclair" },
    ])
    .run()
    .unwrap();
    if indexed {
        coll.create_index(IndexModel {
            keys: doc! { "x": 1 },
            options: None,
        })
        .run()
        .unwrap();
    }
    (db, coll)
}

fn ids(documents: impl IntoIterator<Item = spillway::Result<Document>>) -> Vec<i32> {
    documents
        .into_iter()
        .map(|document| document.unwrap().get_i32("_id").unwrap())
        .collect()
}

#[test]
fn equality_and_in_ignore_case_at_strength_two_with_or_without_an_index() {
    for indexed in [false, true] {
        let (_db, coll) = pings(indexed);
        let found = coll
            .find(doc! { "x": "PING" })
            .collation(case_insensitive())
            .run()
            .unwrap();
        assert_eq!(ids(found), vec![2, 3], "indexed: {indexed}");
        let found = coll
            .find(doc! { "x": { "$in": ["PONG", 11] } })
            .collation(case_insensitive())
            .run()
            .unwrap();
        assert_eq!(ids(found), vec![1, 4, 5], "indexed: {indexed}");
        // Without a collation, strings compare by code point.
        let found = coll.find(doc! { "x": "PING" }).run().unwrap();
        assert_eq!(ids(found), Vec::<i32>::new(), "indexed: {indexed}");
    }
}

#[test]
fn strength_one_also_ignores_accents_and_ranges_follow_the_language() {
    for indexed in [false, true] {
        let (_db, coll) = pings(indexed);
        let found = coll
            .find(doc! { "x": "eclair" })
            .collation(collation(&doc! { "locale": "fr", "strength": 1 }))
            .run()
            .unwrap();
        assert_eq!(ids(found), vec![6], "indexed: {indexed}");
        // By code point "É" (U+00C9) sorts after every ASCII letter; in English it is an "e".
        let found = coll
            .find(doc! { "x": { "$lt": "f" } })
            .collation(collation(&doc! { "locale": "en" }))
            .run()
            .unwrap();
        assert_eq!(ids(found), vec![6], "indexed: {indexed}");
        let found = coll.find(doc! { "x": { "$lt": "f" } }).run().unwrap();
        assert_eq!(ids(found), Vec::<i32>::new(), "indexed: {indexed}");
    }
}

#[test]
fn sorts_follow_the_collation_even_where_an_index_could_give_the_order() {
    for indexed in [false, true] {
        let (_db, coll) = pings(indexed);
        let sorted = coll
            .find(doc! { "x": { "$type": "string" } })
            .sort(doc! { "x": 1, "_id": 1 })
            .collation(collation(&doc! { "locale": "en", "caseFirst": "upper" }))
            .run()
            .unwrap();
        assert_eq!(ids(sorted), vec![6, 3, 2, 5, 4], "indexed: {indexed}");
        let sorted = coll
            .find(doc! { "x": { "$type": "string" } })
            .sort(doc! { "x": 1 })
            .run()
            .unwrap();
        assert_eq!(ids(sorted), vec![3, 5, 2, 4, 6], "indexed: {indexed}");
    }
}

#[test]
fn numeric_ordering_sorts_digit_strings_as_numbers() {
    let db = Database::open_in_memory().unwrap();
    let coll = db.collection::<Document>("versions");
    coll.insert_many([
        doc! { "_id": 1, "v": "10" },
        doc! { "_id": 2, "v": "9" },
        doc! { "_id": 3, "v": "100" },
    ])
    .run()
    .unwrap();
    let sorted = coll
        .find(doc! {})
        .sort(doc! { "v": 1 })
        .collation(collation(&doc! { "locale": "en", "numericOrdering": true }))
        .run()
        .unwrap();
    assert_eq!(ids(sorted), vec![2, 1, 3]);
}

#[test]
fn counts_distinct_and_writes_use_the_collation() {
    let (_db, coll) = pings(true);
    let count = coll
        .count_documents(doc! { "x": "PONG" })
        .collation(case_insensitive())
        .run()
        .unwrap();
    assert_eq!(count, 2);
    // Values equal under the collation are one distinct value: the first one found.
    let values = coll
        .distinct("x", doc! { "x": { "$type": "string" } })
        .collation(case_insensitive())
        .run()
        .unwrap();
    assert_eq!(
        values,
        vec![Bson::from("ping"), Bson::from("pong"), Bson::from("Éclair")]
    );
    let updated = coll
        .update_many(doc! { "x": "PING" }, doc! { "$set": { "seen": true } })
        .collation(case_insensitive())
        .run()
        .unwrap();
    assert_eq!(updated.matched_count, 2);
    let deleted = coll
        .delete_one(doc! { "x": "PONG" })
        .collation(case_insensitive())
        .run()
        .unwrap();
    assert_eq!(deleted.deleted_count, 1);
    let found = coll
        .find_one_and_delete(doc! { "x": "PONG" })
        .collation(case_insensitive())
        .run()
        .unwrap();
    assert_eq!(found.unwrap().get_i32("_id").unwrap(), 5);
}

#[test]
fn pipelines_match_and_sort_under_the_collation() {
    let (_db, coll) = pings(true);
    let out = coll
        .aggregate([
            doc! { "$match": { "x": "PING" } },
            doc! { "$sort": { "_id": -1 } },
            doc! { "$unionWith": { "coll": "coll", "pipeline": [{ "$match": { "x": "PONG" } }] } },
        ])
        .collation(case_insensitive())
        .run()
        .unwrap();
    assert_eq!(ids(out), vec![3, 2, 4, 5]);
}

#[test]
fn a_bad_collation_is_an_error_that_names_the_field() {
    for (spec, expected) in [
        (doc! { "locale": "en", "strength": 9 }, "strength"),
        (doc! { "strength": 2 }, "locale"),
        (doc! { "locale": "en", "foo": 1 }, "foo"),
    ] {
        let error = Collation::parse(&spec).unwrap_err();
        assert!(error.to_string().contains(expected), "{spec}: {error}");
    }
}

/// The document `_id: 1` of `coll`.
fn first(coll: &spillway::Collection<Document>) -> Document {
    coll.find_one(doc! { "_id": 1 })
        .run()
        .unwrap()
        .expect("document 1")
}

/// The tags of the document `_id: 1` of `coll`.
fn tags(coll: &spillway::Collection<Document>) -> Vec<String> {
    first(coll)
        .get_array("tags")
        .unwrap()
        .iter()
        .map(|tag| tag.as_str().expect("a string tag").to_string())
        .collect()
}

#[test]
fn update_operators_compare_under_the_operation_collation() {
    let db = Database::open_in_memory().unwrap();
    let coll = db.collection::<Document>("people");
    coll.insert_one(doc! {
        "_id": 1, "name": "a", "tags": ["a", "b"], "grades": [{ "who": "Ann", "n": 1 }],
    })
    .run()
    .unwrap();
    let update = |update: Document| {
        coll.update_one(doc! { "_id": 1 }, update)
            .collation(case_insensitive())
            .run()
            .unwrap()
    };
    // "A" is "a" at strength 2: nothing to add.
    let added = update(doc! { "$addToSet": { "tags": { "$each": ["A", "B", "c", "C"] } } });
    assert_eq!(added.modified_count, 1);
    assert_eq!(tags(&coll), ["a", "b", "c"]);
    update(doc! { "$pull": { "tags": "B" } });
    assert_eq!(tags(&coll), ["a", "c"]);
    // In English "B" is above "a" (by code point it is below).
    update(doc! { "$max": { "name": "B" } });
    assert_eq!(first(&coll).get_str("name").unwrap(), "B");
    update(doc! { "$push": { "tags": { "$each": ["B"], "$sort": 1 } } });
    assert_eq!(tags(&coll), ["a", "B", "c"]);
    let changed = coll
        .update_one(doc! { "_id": 1 }, doc! { "$set": { "grades.$[g].n": 2 } })
        .array_filters([doc! { "g.who": "ann" }])
        .collation(case_insensitive())
        .run()
        .unwrap();
    assert_eq!(changed.modified_count, 1);
    assert_eq!(
        first(&coll).get_array("grades").unwrap(),
        &[Bson::from(doc! { "who": "Ann", "n": 2 })]
    );
    // Without a collation, by code point.
    coll.update_one(doc! { "_id": 1 }, doc! { "$addToSet": { "tags": "A" } })
        .run()
        .unwrap();
    assert_eq!(tags(&coll), ["a", "B", "c", "A"]);
}

#[test]
fn updates_take_the_collection_default_collation_unless_simple_is_given() {
    let db = Database::open_in_memory().unwrap();
    db.create_collection("folded")
        .collation(case_insensitive())
        .run()
        .unwrap();
    let coll = db.collection::<Document>("folded");
    coll.insert_one(doc! { "_id": 1, "tags": ["a"], "name": "a" })
        .run()
        .unwrap();
    let unchanged = coll
        .update_one(doc! { "_id": 1 }, doc! { "$addToSet": { "tags": "A" } })
        .run()
        .unwrap();
    assert_eq!(unchanged.modified_count, 0);
    let after = coll
        .find_one_and_update(doc! { "_id": 1 }, doc! { "$max": { "name": "B" } })
        .return_document(spillway::ReturnDocument::After)
        .run()
        .unwrap()
        .expect("a match");
    assert_eq!(after.get_str("name").unwrap(), "B");
    // The operation's simple collation overrides the collection's.
    let added = coll
        .update_one(doc! { "_id": 1 }, doc! { "$addToSet": { "tags": "A" } })
        .collation(collation(&doc! { "locale": "simple" }))
        .run()
        .unwrap();
    assert_eq!(added.modified_count, 1);
    assert_eq!(tags(&coll), ["a", "A"]);
}

#[test]
fn a_policy_changes_no_answer_of_a_collated_add_to_set_or_pull() {
    let db = Database::open_in_memory().unwrap();
    db.create_collection("plain").run().unwrap();
    db.create_collection("spilled").run().unwrap();
    // Two elements stay in the main document, the rest go to buckets of two.
    db.set_pattern(
        Pattern::outlier("spilled", "tags")
            .threshold(2)
            .bucket_capacity(2),
    )
    .unwrap();
    let steps = [
        (doc! { "$addToSet": { "tags": "A" } }, true),
        (
            doc! { "$addToSet": { "tags": { "$each": ["Y", "e", "E"] } } },
            true,
        ),
        (doc! { "$addToSet": { "tags": "B" } }, false),
        (doc! { "$pull": { "tags": "C" } }, true),
        (doc! { "$pullAll": { "tags": ["D", "x"] } }, true),
    ];
    let mut answers = Vec::new();
    for name in ["plain", "spilled"] {
        let coll = db.collection::<Document>(name);
        coll.insert_one(doc! { "_id": 1, "tags": ["x", "y", "a", "b", "c", "d"] })
            .run()
            .unwrap();
        for (update, collated) in &steps {
            let mut action = coll.update_one(doc! { "_id": 1 }, update.clone());
            if *collated {
                action = action.collation(case_insensitive());
            }
            action.run().unwrap();
        }
        answers.push(first(&coll));
    }
    assert_eq!(
        answers[0],
        doc! { "_id": 1, "tags": ["y", "a", "b", "e", "B"] },
        "the plain collection"
    );
    assert_eq!(answers[1], answers[0], "the collection with a policy");
}
