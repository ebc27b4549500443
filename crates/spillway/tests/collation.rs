//! MongoDB's `collation` option through the facade: filters, sorts, `distinct`, counts,
//! writes and pipelines compare strings under the collation, with or without an index on
//! the field (index keys order strings by code point, so the planner must not let them
//! bound a collated query).

use spillway::bson::{Bson, Document};
use spillway::{Collation, Database, IndexModel, doc};

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
