//! Change streams through the facade: every committed change, as MongoDB's change events,
//! in commit order, resumable after a restart without a gap or a duplicate.

use std::time::Duration;

use spillway::bson::{Bson, Document};
use spillway::{Database, FullDocument, Transaction, doc};

fn next(stream: &mut spillway::ChangeStream) -> Document {
    stream
        .next_timeout(Duration::from_secs(5))
        .unwrap()
        .expect("an event within 5 s")
}

/// The `_id`s of the documents the next `count` events are about.
fn next_ids(stream: &mut spillway::ChangeStream, count: usize) -> Vec<Bson> {
    (0..count)
        .map(|_| {
            next(stream)
                .get_document("documentKey")
                .unwrap()
                .get("_id")
                .unwrap()
                .clone()
        })
        .collect()
}

fn kinds(events: &[Document]) -> Vec<&str> {
    events
        .iter()
        .map(|event| event.get_str("operationType").unwrap())
        .collect()
}

#[test]
fn writes_become_insert_update_replace_and_delete_events_in_commit_order() {
    let db = Database::open_in_memory().unwrap();
    let books = db.collection::<Document>("books");
    books
        .insert_one(doc! { "_id": 0, "before": true })
        .run()
        .unwrap();
    let mut stream = books.watch().run().unwrap();
    assert_eq!(stream.try_next().unwrap(), None, "only changes from now on");
    books
        .insert_one(doc! { "_id": 1, "title": "Dune", "tags": ["sf"] })
        .run()
        .unwrap();
    books
        .update_one(
            doc! { "_id": 1 },
            doc! { "$set": { "year": 1965 }, "$unset": { "tags": "" } },
        )
        .run()
        .unwrap();
    books
        .replace_one(doc! { "_id": 1 }, doc! { "title": "Dune Messiah" })
        .run()
        .unwrap();
    books.delete_one(doc! { "_id": 1 }).run().unwrap();
    db.collection::<Document>("other")
        .insert_one(doc! { "_id": 9 })
        .run()
        .unwrap();

    let events: Vec<Document> = (0..4).map(|_| next(&mut stream)).collect();
    assert_eq!(kinds(&events), ["insert", "update", "replace", "delete"]);
    for event in &events {
        assert_eq!(
            event.get_document("documentKey").unwrap(),
            &doc! { "_id": 1 }
        );
        assert_eq!(event.get_document("ns").unwrap(), &doc! { "coll": "books" });
    }
    assert_eq!(
        events[0].get_document("fullDocument").unwrap(),
        &doc! { "_id": 1, "title": "Dune", "tags": ["sf"] }
    );
    let description = events[1].get_document("updateDescription").unwrap();
    assert_eq!(
        description.get_document("updatedFields").unwrap(),
        &doc! { "year": 1965 }
    );
    assert_eq!(
        description.get_array("removedFields").unwrap(),
        &vec![Bson::from("tags")]
    );
    assert_eq!(
        events[2].get_document("fullDocument").unwrap(),
        &doc! { "_id": 1, "title": "Dune Messiah" }
    );
    assert_eq!(
        stream.try_next().unwrap(),
        None,
        "another collection's insert is not in this collection's stream"
    );
}

#[test]
fn pipelines_filter_events_and_update_lookup_reads_the_current_document() {
    let db = Database::open_in_memory().unwrap();
    let books = db.collection::<Document>("books");
    let mut updates = books
        .watch()
        .pipeline([doc! { "$match": { "operationType": "update" } }])
        .full_document(FullDocument::UpdateLookup)
        .run()
        .unwrap();
    books.insert_one(doc! { "_id": 1, "n": 0 }).run().unwrap();
    books
        .update_one(doc! { "_id": 1 }, doc! { "$inc": { "n": 1 } })
        .run()
        .unwrap();
    let event = next(&mut updates);
    assert_eq!(event.get_str("operationType").unwrap(), "update");
    assert_eq!(
        event.get_document("fullDocument").unwrap(),
        &doc! { "_id": 1, "n": 1 }
    );
    assert_eq!(updates.try_next().unwrap(), None);
}

#[test]
fn a_transaction_is_seen_whole_at_its_commit_and_an_aborted_one_never() {
    let db = Database::open_in_memory().unwrap();
    let mut stream = db.watch().run().unwrap();
    let result: spillway::Result<()> = db.transaction(|tx| {
        db.collection::<Document>("a")
            .insert_one(doc! { "_id": 1 })
            .session(tx)
            .run()?;
        Err(Transaction::abort("changed my mind"))
    });
    assert!(result.is_err());
    db.transaction(|tx| {
        db.collection::<Document>("a")
            .insert_one(doc! { "_id": 2 })
            .session(tx)
            .run()?;
        db.collection::<Document>("b")
            .insert_one(doc! { "_id": 3 })
            .session(tx)
            .run()?;
        Ok(())
    })
    .unwrap();
    let first = next(&mut stream);
    let second = next(&mut stream);
    assert_eq!(
        first.get_document("documentKey").unwrap(),
        &doc! { "_id": 2 }
    );
    assert_eq!(
        second.get_document("documentKey").unwrap(),
        &doc! { "_id": 3 }
    );
    assert_eq!(stream.try_next().unwrap(), None);
}

#[test]
fn dropping_the_watched_collection_ends_its_stream_with_invalidate() {
    let db = Database::open_in_memory().unwrap();
    let books = db.collection::<Document>("books");
    books.insert_one(doc! { "_id": 1 }).run().unwrap();
    let stream = books.watch().run().unwrap();
    let mut everything = db.watch().run().unwrap();
    books.drop().run().unwrap();
    let events: Vec<Document> = stream.map(Result::unwrap).collect();
    assert_eq!(kinds(&events), ["drop", "invalidate"]);
    let event = next(&mut everything);
    assert_eq!(event.get_str("operationType").unwrap(), "drop");
    assert_eq!(
        everything.try_next().unwrap(),
        None,
        "a database's stream goes on"
    );
}

#[test]
fn a_stream_resumes_after_a_restart_without_a_gap_or_a_duplicate() {
    let dir = tempfile::tempdir().unwrap();
    let token = {
        let db = Database::open(dir.path()).unwrap();
        let books = db.collection::<Document>("books");
        let mut stream = books.watch().run().unwrap();
        for id in 1..=3 {
            books.insert_one(doc! { "_id": id }).run().unwrap();
        }
        let first = next(&mut stream);
        assert_eq!(
            first.get_document("documentKey").unwrap(),
            &doc! { "_id": 1 }
        );
        stream.resume_token()
    };
    let db = Database::open(dir.path()).unwrap();
    let books = db.collection::<Document>("books");
    books.insert_one(doc! { "_id": 4 }).run().unwrap();
    let mut resumed = books.watch().resume_after(token).run().unwrap();
    let ids = next_ids(&mut resumed, 3);
    assert_eq!(ids, vec![Bson::Int32(2), Bson::Int32(3), Bson::Int32(4)]);
    assert_eq!(resumed.try_next().unwrap(), None);
}

/// A restart with exactly one change recorded: the next change gets a new number and the
/// first stays readable (it was once overwritten, losing the first event).
#[test]
fn a_restart_after_a_single_change_keeps_it() {
    let dir = tempfile::tempdir().unwrap();
    {
        let db = Database::open(dir.path()).unwrap();
        drop(db.watch().run().unwrap());
        let books = db.collection::<Document>("books");
        books.insert_one(doc! { "_id": 1 }).run().unwrap();
    }
    let db = Database::open(dir.path()).unwrap();
    let books = db.collection::<Document>("books");
    books.insert_one(doc! { "_id": 2 }).run().unwrap();
    let mut everything = db
        .watch()
        .start_at_operation_time(spillway::bson::Timestamp {
            time: 0,
            increment: 0,
        })
        .run()
        .unwrap();
    let ids = next_ids(&mut everything, 2);
    assert_eq!(ids, vec![Bson::Int32(1), Bson::Int32(2)]);
    assert_eq!(everything.try_next().unwrap(), None);
}

#[test]
fn a_token_that_is_not_spillways_is_bad_value() {
    let db = Database::open_in_memory().unwrap();
    let error = db
        .watch()
        .resume_after(doc! { "_data": "not hex" })
        .run()
        .unwrap_err();
    assert_eq!(error.code(), Some(2));
    assert!(error.to_string().contains("resume token"), "{error}");
}

#[test]
fn a_stream_can_start_at_an_operation_time() {
    let db = Database::open_in_memory().unwrap();
    let books = db.collection::<Document>("books");
    let mut live = books.watch().run().unwrap();
    books.insert_one(doc! { "_id": 1 }).run().unwrap();
    let time = next(&mut live)
        .get_timestamp("clusterTime")
        .expect("events carry their clusterTime");
    books.insert_one(doc! { "_id": 2 }).run().unwrap();
    let mut from_then = books.watch().start_at_operation_time(time).run().unwrap();
    assert_eq!(
        next(&mut from_then).get_document("documentKey").unwrap(),
        &doc! { "_id": 1 },
        "the change committed at that time is included"
    );
    let future = spillway::bson::Timestamp {
        time: time.time + 3600,
        increment: 0,
    };
    let mut later = books.watch().start_at_operation_time(future).run().unwrap();
    assert_eq!(later.try_next().unwrap(), None);
}

/// A database with the seeds' outlier policy, small enough that a few pushes spill into
/// overflow buckets: 3 buyers in the book, buckets of 2.
fn outlier_database() -> Database {
    let db = Database::open_in_memory().unwrap();
    db.create_collection("sales").run().unwrap();
    db.set_pattern(
        spillway::Pattern::outlier("sales", "customers_purchased")
            .threshold(3)
            .bucket_capacity(2)
            .overflow_collection("extra_sales")
            .link_field("book_id"),
    )
    .unwrap();
    db
}

#[test]
fn on_a_collection_with_a_policy_events_describe_logical_documents() {
    let db = outlier_database();
    let sales = db.collection::<Document>("sales");
    let mut stream = db.watch().run().unwrap();
    let buyers: Vec<Bson> = (0..5).map(|n| Bson::String(format!("u{n}"))).collect();
    sales
        .insert_one(doc! { "_id": 1, "title": "Viral", "customers_purchased": buyers.clone() })
        .run()
        .unwrap();
    for n in 5..9 {
        sales
            .update_one(
                doc! { "_id": 1 },
                doc! { "$push": { "customers_purchased": format!("u{n}") } },
            )
            .run()
            .unwrap();
    }
    sales
        .update_one(
            doc! { "_id": 1 },
            doc! { "$pop": { "customers_purchased": 1 } },
        )
        .run()
        .unwrap();
    sales.delete_one(doc! { "_id": 1 }).run().unwrap();

    let events: Vec<Document> = (0..7).map(|_| next(&mut stream)).collect();
    assert_eq!(
        kinds(&events),
        [
            "insert", "update", "update", "update", "update", "update", "delete"
        ],
        "one event per logical write, none of the buckets: {events:#?}"
    );
    assert!(
        events
            .iter()
            .all(|event| event.get_document("ns").unwrap().get_str("coll").ok() == Some("sales")),
        "{events:#?}"
    );
    // The insert carries the logical document: every buyer, not the 3 the book keeps.
    let inserted = events[0].get_document("fullDocument").unwrap();
    assert_eq!(inserted.get_array("customers_purchased").unwrap(), &buyers);
    assert!(!inserted.contains_key("has_extras"), "{inserted}");
    // Each push names the element it appended at its logical position, as MongoDB does.
    for (offset, event) in events[1..5].iter().enumerate() {
        let position = 5 + offset;
        assert_eq!(
            event
                .get_document("updateDescription")
                .unwrap()
                .get_document("updatedFields")
                .unwrap(),
            &doc! { format!("customers_purchased.{position}"): format!("u{position}") },
            "{event}"
        );
    }
    assert_eq!(
        events[5]
            .get_document("updateDescription")
            .unwrap()
            .get_array("truncatedArrays")
            .unwrap(),
        &vec![Bson::Document(
            doc! { "field": "customers_purchased", "newSize": 8 }
        )]
    );
    assert_eq!(
        stream.try_next().unwrap(),
        None,
        "nothing of the buckets follows"
    );
}

/// A replacement is a `replace` event whatever the policy stores: also when it only appends
/// to a split array or only cuts it (the main document unchanged, a bucket written or
/// deleted), as a plain collection reports it.
#[test]
fn replacing_a_document_with_a_policy_is_a_replace_event() {
    let db = outlier_database();
    let sales = db.collection::<Document>("sales");
    let buyers =
        |count: usize| -> Vec<Bson> { (0..count).map(|n| Bson::String(format!("u{n}"))).collect() };
    sales
        .insert_one(doc! { "_id": 1, "title": "Viral", "customers_purchased": buyers(7) })
        .run()
        .unwrap();
    let mut stream = db.watch().run().unwrap();
    for count in [8, 9, 7, 3, 2, 6] {
        sales
            .replace_one(
                doc! { "_id": 1 },
                doc! { "title": "Viral", "customers_purchased": buyers(count) },
            )
            .run()
            .unwrap();
        let event = next(&mut stream);
        assert_eq!(
            event.get_str("operationType").ok(),
            Some("replace"),
            "{count}: {event}"
        );
        assert_eq!(
            event
                .get_document("fullDocument")
                .unwrap()
                .get_array("customers_purchased")
                .unwrap(),
            &buyers(count)
        );
    }
    assert_eq!(stream.try_next().unwrap(), None);
    assert!(db.verify_patterns().unwrap().is_empty());
}

#[test]
fn update_lookup_on_a_collection_with_a_policy_reads_the_logical_document() {
    let db = outlier_database();
    let sales = db.collection::<Document>("sales");
    sales
        .insert_one(doc! { "_id": 2, "customers_purchased": ["a", "b", "c"] })
        .run()
        .unwrap();
    let mut stream = sales
        .watch()
        .full_document(FullDocument::UpdateLookup)
        .run()
        .unwrap();
    sales
        .update_one(
            doc! { "_id": 2 },
            doc! { "$push": { "customers_purchased": { "$each": ["d", "e"] } } },
        )
        .run()
        .unwrap();
    let event = next(&mut stream);
    assert_eq!(
        event.get_document("fullDocument").unwrap(),
        &doc! { "_id": 2, "customers_purchased": ["a", "b", "c", "d", "e"] }
    );
    assert_eq!(
        event
            .get_document("updateDescription")
            .unwrap()
            .get_document("updatedFields")
            .unwrap(),
        &doc! { "customers_purchased.3": "d", "customers_purchased.4": "e" }
    );
}

#[test]
fn ttl_deletions_and_migrations_give_the_events_of_logical_documents() {
    let db = Database::open_in_memory().unwrap();
    let sessions = db.collection::<Document>("sessions");
    sessions
        .create_index(
            spillway::IndexModel::builder()
                .keys(doc! { "expires": 1 })
                .options(
                    spillway::IndexOptions::builder()
                        .expire_after(Duration::ZERO)
                        .build(),
                )
                .build(),
        )
        .run()
        .unwrap();
    let sales = db.collection::<Document>("sales");
    let buyers: Vec<Bson> = (0..10).map(Bson::Int32).collect();
    sales
        .insert_one(doc! { "_id": 1, "customers_purchased": buyers })
        .run()
        .unwrap();
    let mut stream = db.watch().run().unwrap();
    // A migration moves 7 buyers into buckets and changes no logical document: no event.
    db.set_pattern(
        spillway::Pattern::outlier("sales", "customers_purchased")
            .threshold(3)
            .bucket_capacity(2),
    )
    .unwrap();
    let expired = spillway::bson::DateTime::from_millis(0);
    sessions
        .insert_one(doc! { "_id": "s", "expires": expired })
        .run()
        .unwrap();
    assert_eq!(db.remove_expired().unwrap(), 1);
    let events: Vec<Document> = (0..2).map(|_| next(&mut stream)).collect();
    assert_eq!(kinds(&events), ["insert", "delete"], "{events:#?}");
    assert_eq!(
        events[1].get_document("documentKey").unwrap(),
        &doc! { "_id": "s" }
    );
    assert_eq!(
        stream.try_next().unwrap(),
        None,
        "the migration made no event"
    );
}
