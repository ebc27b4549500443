//! The driver-shaped API against `spillway serve`: each call on logical documents, MongoDB's
//! codes passed through, policies declared on collections that already hold documents (with
//! `_id`s of several types, across migration batches), and what a `$push` costs in commands
//! and bytes as the array grows (measured with the driver's command monitoring).

use crate::common;

use mongodb::bson::oid::ObjectId;
use spillway_mongodb::bson::{Bson, Document, doc};
use spillway_mongodb::{Error, Pattern, PatternedDatabase};

fn database(patterns: Vec<Pattern>) -> (mongodb::sync::Client, PatternedDatabase) {
    let client = common::client(common::server(), &common::unique("api"));
    let database = PatternedDatabase::new(&client, &common::unique("db"), patterns)
        .expect("the database opens");
    (client, database)
}

fn buyers_policy() -> Pattern {
    Pattern::outlier("sales", "buyers")
        .threshold(3)
        .bucket_capacity(2)
        .link_field("book_id")
        .into()
}

fn strings(values: &[&str]) -> Vec<Bson> {
    values.iter().map(|value| Bson::from(*value)).collect()
}

#[test]
fn the_driver_calls_work_on_logical_documents() {
    let (_client, shop) = database(vec![buyers_policy()]);
    let sales = shop.collection("sales");
    let inserted = sales
        .insert_many([
            doc! { "_id": 1, "title": "Quiet", "buyers": ["a"] },
            doc! { "_id": 2, "title": "Viral", "buyers": ["a", "b", "c", "d", "e", "f"] },
            doc! { "title": "No id", "buyers": [] },
        ])
        .run()
        .expect("insert_many");
    assert_eq!(
        &inserted.inserted_ids[..2],
        &[Bson::Int32(1), Bson::Int32(2)]
    );
    assert!(matches!(inserted.inserted_ids[2], Bson::ObjectId(_)));

    // A filter on an element that lives in a bucket matches the logical document.
    assert_eq!(
        sales
            .count_documents(doc! { "buyers": "f" })
            .run()
            .expect("count"),
        1
    );
    assert_eq!(sales.count_documents(doc! {}).run().expect("count"), 3);
    let updated = sales
        .update_many(doc! { "buyers": "a" }, doc! { "$push": { "buyers": "z" } })
        .run()
        .expect("update_many");
    assert_eq!((updated.matched_count, updated.modified_count), (2, 2));
    let viral = sales
        .find_one(doc! { "_id": 2 })
        .run()
        .expect("find_one")
        .expect("the book");
    assert_eq!(
        viral.get_array("buyers").expect("buyers"),
        &strings(&["a", "b", "c", "d", "e", "f", "z"])
    );
    let stored = sales
        .find_one(doc! { "_id": 2 })
        .stored(true)
        .run()
        .expect("find_one")
        .expect("the book");
    assert_eq!(
        stored,
        doc! { "_id": 2, "title": "Viral", "buyers": ["a", "b", "c"], "has_extras": true }
    );
    assert_eq!(sales.array_len(2, "buyers").expect("array_len"), Some(7));
    assert_eq!(
        sales.array_page(2, "buyers", 4, 2).expect("array_page"),
        Some(strings(&["e", "f"]))
    );
    assert_eq!(sales.array_len(99, "buyers").expect("array_len"), None);

    let replaced = sales
        .replace_one(doc! { "_id": 2 }, doc! { "title": "Calm", "buyers": ["q"] })
        .run()
        .expect("replace_one");
    assert_eq!(replaced.modified_count, 1);
    let overflow = shop.collection("extra_sales");
    assert_eq!(
        overflow.count_documents(doc! {}).run().expect("count"),
        0,
        "the buckets of the replaced array are gone"
    );

    let upserted = sales
        .update_one(
            doc! { "_id": 7 },
            doc! { "$push": { "buyers": { "$each": ["u", "v", "w", "x"] } } },
        )
        .upsert(true)
        .run()
        .expect("upsert");
    assert_eq!(upserted.upserted_id, Some(Bson::Int32(7)));
    assert_eq!(overflow.count_documents(doc! {}).run().expect("count"), 1);
    let deleted = sales
        .delete_many(doc! { "buyers": { "$in": ["x", "q"] } })
        .run()
        .expect("delete_many");
    assert_eq!(deleted.deleted_count, 2);
    assert_eq!(
        overflow.count_documents(doc! {}).run().expect("count"),
        0,
        "a deleted document's buckets go with it"
    );
    let deleted = sales.delete_one(doc! {}).run().expect("delete_one");
    assert_eq!(deleted.deleted_count, 1);
    let left = sales.find(doc! {}).run().expect("find");
    assert_eq!(left.len(), 1, "{left:?}");
    assert_eq!(left[0].get_str("title").ok(), Some("No id"));
    assert_eq!(shop.verify().expect("verify"), Vec::new());
}

#[test]
fn errors_carry_mongodb_codes_and_say_what_was_wrong() {
    let (client, shop) = database(vec![buyers_policy()]);
    let sales = shop.collection("sales");
    sales
        .insert_one(doc! { "_id": 1, "buyers": [] })
        .run()
        .expect("insert");
    let duplicate = sales
        .insert_one(doc! { "_id": 1, "buyers": [] })
        .run()
        .expect_err("a duplicate _id");
    assert_eq!(duplicate.code(), Some(11000), "{duplicate}");

    let plain = shop.collection("plain");
    plain
        .insert_one(doc! { "_id": 1 })
        .run()
        .expect("a plain insert");
    let duplicate = plain
        .insert_one(doc! { "_id": 1 })
        .run()
        .expect_err("a duplicate _id");
    assert_eq!(duplicate.code(), Some(11000), "{duplicate}");

    let refused = sales
        .update_one(doc! { "_id": 1 }, doc! { "has_extras": true })
        .run()
        .expect_err("no operators");
    assert!(
        matches!(refused, Error::InvalidArgument { .. }),
        "{refused}"
    );
    let refused = sales
        .update_one(doc! { "_id": 1 }, doc! { "$set": { "has_extras": false } })
        .run()
        .expect_err("the flag is the policy's");
    assert!(matches!(refused, Error::Pattern(_)), "{refused}");
    assert!(refused.to_string().contains("has_extras"), "{refused}");

    let other = Pattern::outlier("sales", "buyers").threshold(9);
    let conflict = PatternedDatabase::new(&client, shop.name(), [other])
        .expect_err("another policy on the same field");
    assert!(
        conflict.to_string().contains("already has another policy"),
        "{conflict}"
    );
    let same = PatternedDatabase::new(&client, shop.name(), [buyers_policy()])
        .expect("the same policy again is accepted");
    assert_eq!(same.patterns().expect("patterns"), vec![buyers_policy()]);
}

#[test]
fn a_policy_on_existing_documents_migrates_ids_of_every_type_in_order() {
    let client = common::client(common::server(), &common::unique("migrate"));
    let name = common::unique("db");
    // 150 numbers, 100 strings and 50 ObjectIds: the first migration batch (256) crosses
    // from numbers to strings to ObjectIds, the second starts inside the ObjectIds.
    let mut inserted: Vec<Document> = Vec::new();
    for n in 0..150 {
        let id = if n % 2 == 0 {
            Bson::Int32(n)
        } else {
            Bson::Double(f64::from(n))
        };
        inserted.push(doc! { "_id": id, "buyers": (0..n % 7).collect::<Vec<i32>>() });
    }
    for n in 0..100 {
        inserted
            .push(doc! { "_id": format!("s{n:03}"), "buyers": (0..n % 5).collect::<Vec<i32>>() });
    }
    for n in 0..50 {
        inserted.push(doc! { "_id": ObjectId::new(), "buyers": (0..n % 9).collect::<Vec<i32>>() });
    }
    client
        .database(&name)
        .collection::<Document>("sales")
        .insert_many(inserted.clone())
        .run()
        .expect("plain documents");
    let shop =
        PatternedDatabase::new(&client, &name, [buyers_policy()]).expect("declared and migrated");
    let sales = shop.collection("sales");
    let stored = sales.find(doc! {}).stored(true).run().expect("stored");
    assert_eq!(stored.len(), inserted.len());
    assert!(
        stored.iter().all(|document| document
            .get_array("buyers")
            .is_ok_and(|buyers| buyers.len() <= 3)),
        "every document is split, whatever its _id's type"
    );
    let expanded = sales.find(doc! {}).run().expect("expanded");
    assert_eq!(expanded, inserted, "the logical documents, in _id order");
    assert_eq!(shop.verify().expect("verify"), Vec::new());
}

/// What one `$push` sends to a book of `length` buyers and one pushed before (threshold 50,
/// buckets of 100): the commands, and their bytes.
fn push_cost(length: usize) -> (Vec<String>, usize) {
    let (client, sent) = common::monitored_client(common::server());
    let policy = Pattern::outlier("sales", "buyers")
        .threshold(50)
        .bucket_capacity(100);
    let shop = PatternedDatabase::new(&client, &common::unique("db"), [policy])
        .expect("the database opens");
    let sales = shop.collection("sales");
    let buyers: Vec<i64> = (0..length as i64).collect();
    sales
        .insert_one(doc! { "_id": 1, "buyers": buyers })
        .run()
        .expect("insert");
    // One push first, so that the pooled backend has made its collections and its session.
    sales
        .update_one(doc! { "_id": 1 }, doc! { "$push": { "buyers": -1 } })
        .run()
        .expect("push");
    sent.lock().expect("the log").clear();
    sales
        .update_one(doc! { "_id": 1 }, doc! { "$push": { "buyers": -2 } })
        .run()
        .expect("push");
    let sent = sent.lock().expect("the log").clone();
    let names = sent.iter().map(|(name, _)| name.clone()).collect();
    let bytes = sent.iter().map(|(_, bytes)| bytes).sum();
    (names, bytes)
}

#[test]
fn a_push_costs_the_same_commands_and_bytes_at_any_length() {
    let (short_commands, short_bytes) = push_cost(1_000);
    let (long_commands, long_bytes) = push_cost(20_000);
    assert_eq!(
        short_commands, long_commands,
        "the same commands at 1,000 and 20,000 elements"
    );
    assert_eq!(
        short_commands,
        [
            "find",   // the policies
            "find",   // the main document
            "find",   // the last bucket
            "update", // the main document's write stamp (its claim: it is not rewritten)
            "update", // the last bucket, with `$push`
            "commitTransaction",
        ],
        "one round trip each"
    );
    // 1,049 + 1 elements fill the last bucket: the next push starts a bucket.
    let (starting_commands, _) = push_cost(1_049);
    assert_eq!(
        starting_commands,
        [
            "find",   // the policies
            "find",   // the main document
            "find",   // the last bucket, full
            "update", // the main document's write stamp
            "insert", // the new bucket
            "commitTransaction",
        ],
        "a push that starts a bucket"
    );
    assert!(
        long_bytes <= short_bytes + 64,
        "bytes sent per push: {short_bytes} at 1,000 elements, {long_bytes} at 20,000"
    );
    eprintln!(
        "a $push: {} commands, {short_bytes} bytes at 1,000 elements, {long_bytes} at 20,000",
        short_commands.len()
    );
}

/// 200 books with 0 to 12 buyers each (threshold 3, buckets of 2), in a fresh database.
fn books(client: &mongodb::sync::Client) -> PatternedDatabase {
    let shop = PatternedDatabase::new(client, &common::unique("db"), [buyers_policy()])
        .expect("the database opens");
    let sales = shop.collection("sales");
    sales
        .insert_many((0..200).map(|id| {
            let buyers: Vec<i32> = (0..id % 13).map(|n| (id * 7 + n * 11) % 50).collect();
            doc! { "_id": id, "buyers": buyers }
        }))
        .run()
        .expect("the books");
    shop
}

#[test]
fn logical_queries_on_an_indexed_path_read_both_indexes_and_agree_with_a_scan() {
    let (client, sent) = common::monitored_client(common::server());
    let scanned = books(&client);
    let indexed = books(&client);
    indexed
        .collection("sales")
        .create_index(&doc! { "buyers": 1 })
        .expect("create_index");
    let side_indexes: Vec<Document> = client
        .database(indexed.name())
        .collection::<Document>("extra_sales")
        .list_indexes()
        .run()
        .expect("listIndexes")
        .map(|index| index.expect("an index").keys)
        .collect();
    assert!(
        side_indexes.contains(&doc! { "buyers_extra": 1 }),
        "the mirrored index: {side_indexes:?}"
    );
    for filter in [
        doc! { "buyers": 7 },
        doc! { "buyers": 49 },
        doc! { "buyers": 99 },
        doc! { "buyers": { "$in": [3, 40] } },
        doc! { "buyers": 12, "_id": { "$gt": 100 } },
    ] {
        sent.lock().expect("the log").clear();
        let expected = scanned
            .collection("sales")
            .find(filter.clone())
            .run()
            .expect("a scan");
        let scan_commands = sent.lock().expect("the log").len();
        sent.lock().expect("the log").clear();
        let found = indexed
            .collection("sales")
            .find(filter.clone())
            .run()
            .expect("the union of both indexes");
        let commands = sent.lock().expect("the log").len();
        assert_eq!(found, expected, "{filter}");
        assert!(
            commands * 2 < scan_commands,
            "{filter}: {commands} commands through the indexes, {scan_commands} for a scan"
        );
        eprintln!(
            "{filter}: {} matches, {commands} commands through the indexes, {scan_commands} for a scan",
            expected.len()
        );
        assert_eq!(
            indexed
                .collection("sales")
                .count_documents(filter.clone())
                .run()
                .expect("count"),
            expected.len() as u64
        );
    }
}

#[test]
fn reads_sort_page_project_and_aggregate_logical_documents() {
    let (_client, shop) = database(vec![buyers_policy()]);
    let sales = shop.collection("sales");
    sales
        .insert_many([
            doc! { "_id": 1, "title": "Quiet", "buyers": ["a"] },
            doc! { "_id": 2, "title": "Viral", "buyers": ["a", "b", "c", "d", "e", "f"] },
            doc! { "_id": 3, "title": "Middling", "buyers": ["b", "c", "d"] },
        ])
        .run()
        .expect("insert_many");
    let titles = sales
        .find(doc! {})
        .sort(doc! { "title": -1 })
        .skip(1)
        .limit(1)
        .projection(doc! { "title": 1, "_id": 0 })
        .run()
        .expect("find");
    assert_eq!(titles, [doc! { "title": "Quiet" }]);
    // A projection of the logical document: the last buyer lives in a bucket.
    let last = sales
        .find_one(doc! { "_id": 2 })
        .projection(doc! { "buyers": { "$slice": -1 } })
        .run()
        .expect("find_one")
        .expect("the book");
    assert_eq!(last.get_array("buyers").unwrap(), &strings(&["f"]));
    let first_by_title = sales
        .find_one(doc! { "buyers": "b" })
        .sort(doc! { "title": 1 })
        .run()
        .expect("find_one sorted")
        .expect("a book");
    assert_eq!(first_by_title.get_i32("_id").ok(), Some(3));

    // Every element of every logical array, buckets included, reaches the pipeline.
    let per_buyer = sales
        .aggregate([
            doc! { "$unwind": "$buyers" },
            doc! { "$group": { "_id": "$buyers", "books": { "$sum": 1 } } },
            doc! { "$sort": { "books": -1, "_id": 1 } },
            doc! { "$limit": 3 },
        ])
        .run()
        .expect("aggregate");
    assert_eq!(
        per_buyer,
        [
            doc! { "_id": "a", "books": 2 },
            doc! { "_id": "b", "books": 2 },
            doc! { "_id": "c", "books": 2 },
        ]
    );
    for refused in [
        doc! { "$lookup": { "from": "other", "localField": "_id", "foreignField": "x", "as": "y" } },
        doc! { "$out": "copy" },
    ] {
        let error = sales.aggregate([refused.clone()]).run().unwrap_err();
        assert!(
            matches!(error, Error::InvalidArgument { .. }),
            "{refused}: {error}"
        );
    }
}
