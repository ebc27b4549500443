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
        // Created before recording starts, so that the insert is the one record (creating
        // the collection is a record of its own, a `create` event).
        db.create_collection("books").run().unwrap();
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

// The `$changeStream` aggregate, as a driver sees it over the wire.

mod through_commands {
    use spillway::bson::{Bson, Document, doc};
    use spillway::command::Commands;
    use spillway::{Database, Pattern};

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

    /// The failure's code, name and labels.
    fn fails(commands: &Commands, command: Document) -> (i32, String, Vec<Bson>) {
        let shown = command.to_string();
        let reply = run(commands, command);
        assert_eq!(
            reply.get_f64("ok").ok(),
            Some(0.0),
            "{shown} should fail: {reply}"
        );
        (
            reply.get_i32("code").expect("a failure has a code"),
            reply.get_str("codeName").unwrap_or_default().to_string(),
            reply.get_array("errorLabels").cloned().unwrap_or_default(),
        )
    }

    /// Opens a stream with these `$changeStream` options and further stages on `books`:
    /// (cursor id, first batch).
    fn watch(
        commands: &Commands,
        options: Document,
        stages: Vec<Document>,
    ) -> (i64, Vec<Document>) {
        let mut pipeline = vec![doc! { "$changeStream": options }];
        pipeline.extend(stages);
        let reply = ok(
            commands,
            doc! { "aggregate": "books", "pipeline": pipeline, "cursor": {} },
        );
        batch(&reply, "firstBatch")
    }

    fn batch(reply: &Document, field: &str) -> (i64, Vec<Document>) {
        let cursor = reply.get_document("cursor").unwrap();
        let events = cursor
            .get_array(field)
            .unwrap()
            .iter()
            .map(|event| event.as_document().unwrap().clone())
            .collect();
        (cursor.get_i64("id").unwrap(), events)
    }

    fn get_more(commands: &Commands, id: i64) -> (i64, Vec<Document>) {
        let reply = ok(
            commands,
            doc! { "getMore": id, "collection": "books", "maxTimeMS": 200 },
        );
        batch(&reply, "nextBatch")
    }

    fn kinds(events: &[Document]) -> Vec<&str> {
        events
            .iter()
            .map(|event| event.get_str("operationType").unwrap())
            .collect()
    }

    #[test]
    fn the_batch_with_the_invalidate_closes_the_cursor() {
        let commands = commands();
        ok(&commands, doc! { "create": "books" });
        let (id, _) = watch(&commands, doc! {}, vec![]);
        assert_ne!(id, 0);
        ok(
            &commands,
            doc! { "insert": "books", "documents": [{ "_id": 1 }] },
        );
        ok(&commands, doc! { "drop": "books" });
        let (closed, events) = get_more(&commands, id);
        assert_eq!(kinds(&events), ["insert", "drop", "invalidate"]);
        assert_eq!(closed, 0, "drivers stop at a cursor id of 0");
        let (code, _, _) = fails(&commands, doc! { "getMore": id, "collection": "books" });
        assert_eq!(code, 43, "the cursor is gone");
    }

    #[test]
    fn a_stream_opened_after_its_invalidate_closes_with_its_first_batch() {
        let commands = commands();
        ok(
            &commands,
            doc! { "insert": "books", "documents": [{ "_id": 1 }] },
        );
        let (_, start) = watch(&commands, doc! {}, vec![]);
        assert!(start.is_empty());
        let token = ok(
            &commands,
            doc! { "aggregate": "books", "pipeline": [{ "$changeStream": {} }], "cursor": {} },
        )
        .get_document("cursor")
        .unwrap()
        .get_document("postBatchResumeToken")
        .unwrap()
        .clone();
        ok(&commands, doc! { "drop": "books" });
        let (id, events) = watch(&commands, doc! { "startAfter": token }, vec![]);
        assert_eq!(kinds(&events), ["drop", "invalidate"]);
        assert_eq!(id, 0);
    }

    #[test]
    fn rename_is_a_rename_event_with_to_then_invalidate() {
        let commands = commands();
        ok(
            &commands,
            doc! { "insert": "books", "documents": [{ "_id": 1 }] },
        );
        ok(
            &commands,
            doc! { "insert": "old", "documents": [{ "_id": 2 }] },
        );
        let (id, _) = watch(&commands, doc! {}, vec![]);
        let database = ok(
            &commands,
            doc! { "aggregate": 1, "pipeline": [{ "$changeStream": {} }], "cursor": {} },
        );
        let (database_id, _) = batch(&database, "firstBatch");
        ok(
            &commands,
            doc! { "renameCollection": "shop.books", "to": "shop.novels", "$db": "admin" },
        );
        let (closed, events) = get_more(&commands, id);
        assert_eq!(kinds(&events), ["rename", "invalidate"], "{events:?}");
        assert_eq!(
            events[0].get_document("ns").unwrap(),
            &doc! { "db": "shop", "coll": "books" }
        );
        assert_eq!(
            events[0].get_document("to").unwrap(),
            &doc! { "db": "shop", "coll": "novels" }
        );
        assert_eq!(closed, 0);
        // A database's stream sees the one rename, not the copy's inserts and drop, and
        // goes on.
        let reply = ok(
            &commands,
            doc! { "getMore": database_id, "collection": "$cmd.aggregate", "maxTimeMS": 200 },
        );
        let (still, events) = batch(&reply, "nextBatch");
        assert_eq!(kinds(&events), ["rename"], "{events:?}");
        assert_ne!(still, 0);
        // A rename that drops its target invalidates the target's stream too.
        let novels = ok(
            &commands,
            doc! { "aggregate": "novels", "pipeline": [{ "$changeStream": {} }], "cursor": {} },
        );
        let (novels_id, _) = batch(&novels, "firstBatch");
        ok(
            &commands,
            doc! { "renameCollection": "shop.old", "to": "shop.novels", "dropTarget": true, "$db": "admin" },
        );
        let reply = ok(
            &commands,
            doc! { "getMore": novels_id, "collection": "novels", "maxTimeMS": 200 },
        );
        let (closed, events) = batch(&reply, "nextBatch");
        assert_eq!(kinds(&events), ["rename", "invalidate"], "{events:?}");
        assert_eq!(closed, 0);
    }

    #[test]
    fn resume_after_an_invalidate_is_260_and_start_after_it_works() {
        let commands = commands();
        ok(&commands, doc! { "create": "books" });
        let (id, _) = watch(&commands, doc! {}, vec![]);
        ok(&commands, doc! { "drop": "books" });
        let (_, events) = get_more(&commands, id);
        let invalidate = events.last().unwrap();
        assert_eq!(invalidate.get_str("operationType").unwrap(), "invalidate");
        let token = invalidate.get_document("_id").unwrap().clone();
        assert_ne!(
            &token,
            events[0].get_document("_id").unwrap(),
            "the invalidate has a token of its own"
        );
        let (code, name, _) = fails(
            &commands,
            doc! { "aggregate": "books", "pipeline": [{ "$changeStream": { "resumeAfter": token.clone() } }], "cursor": {} },
        );
        assert_eq!((code, name.as_str()), (260, "InvalidResumeToken"));
        let (id, events) = watch(&commands, doc! { "startAfter": token }, vec![]);
        assert!(events.is_empty(), "{events:?}");
        assert_ne!(id, 0);
        ok(
            &commands,
            doc! { "insert": "books", "documents": [{ "_id": 2 }] },
        );
        let (_, events) = get_more(&commands, id);
        assert_eq!(kinds(&events), ["insert"]);
    }

    #[test]
    fn a_pipeline_that_changes_the_id_fails_with_280_when_the_event_comes() {
        let commands = commands();
        ok(&commands, doc! { "create": "books" });
        for stage in [
            doc! { "$project": { "_id": 0 } },
            doc! { "$set": { "_id": "mine" } },
        ] {
            let (id, _) = watch(&commands, doc! {}, vec![stage]);
            assert_ne!(id, 0, "opening succeeds: no event has come yet");
            ok(&commands, doc! { "insert": "books", "documents": [{}] });
            let (code, name, labels) = fails(
                &commands,
                doc! { "getMore": id, "collection": "books", "maxTimeMS": 200 },
            );
            assert_eq!((code, name.as_str()), (280, "ChangeStreamFatalError"));
            assert!(labels.contains(&Bson::from("NonResumableChangeStreamError")));
        }
        // Keeping the `_id` is allowed.
        let (id, _) = watch(
            &commands,
            doc! {},
            vec![doc! { "$project": { "operationType": 1 } }],
        );
        ok(&commands, doc! { "insert": "books", "documents": [{}] });
        let (_, events) = get_more(&commands, id);
        assert_eq!(events.len(), 1);
    }

    #[test]
    fn read_concern_must_be_majority_or_none() {
        let commands = commands();
        for level in ["local", "available", "linearizable"] {
            let (code, _, _) = fails(
                &commands,
                doc! { "aggregate": "books", "pipeline": [{ "$changeStream": {} }], "cursor": {}, "readConcern": { "level": level } },
            );
            assert_eq!(code, 72, "{level}");
        }
        ok(
            &commands,
            doc! { "aggregate": "books", "pipeline": [{ "$changeStream": {} }], "cursor": {}, "readConcern": { "level": "majority" } },
        );
    }

    #[test]
    fn expanded_events_report_collections_and_indexes_only_when_asked() {
        let commands = commands();
        let (plain, _) = watch(&commands, doc! {}, vec![]);
        let (expanded, _) = watch(&commands, doc! { "showExpandedEvents": true }, vec![]);
        ok(&commands, doc! { "create": "books" });
        ok(
            &commands,
            doc! { "insert": "books", "documents": [{ "_id": 1, "x": 1 }] },
        );
        ok(
            &commands,
            doc! { "createIndexes": "books", "indexes": [{ "key": { "x": 1 }, "name": "x_1" }] },
        );
        ok(
            &commands,
            doc! { "collMod": "books", "validator": { "x": { "$gte": 0 } } },
        );
        ok(&commands, doc! { "dropIndexes": "books", "index": "x_1" });
        ok(&commands, doc! { "collMod": "books" });
        let (_, events) = get_more(&commands, plain);
        assert_eq!(kinds(&events), ["insert"]);
        assert!(!events[0].contains_key("collectionUUID"));
        let (_, events) = get_more(&commands, expanded);
        assert_eq!(
            kinds(&events),
            [
                "create",
                "insert",
                "createIndexes",
                "modify",
                "dropIndexes",
                "modify"
            ],
            "{events:?}"
        );
        let uuid = events[0].get("collectionUUID").expect("collectionUUID");
        assert!(
            events
                .iter()
                .all(|event| event.get("collectionUUID") == Some(uuid))
        );
        let created = events[2].get_document("operationDescription").unwrap();
        let index = created.get_array("indexes").unwrap()[0]
            .as_document()
            .unwrap();
        assert_eq!(index.get_str("name").unwrap(), "x_1");
        assert_eq!(index.get_document("key").unwrap(), &doc! { "x": 1 });
        assert!(
            events[3]
                .get_document("operationDescription")
                .unwrap()
                .contains_key("validator"),
            "{}",
            events[3]
        );
    }

    #[test]
    fn a_create_event_names_the_kind_of_namespace_created() {
        let commands = commands();
        let reply = ok(
            &commands,
            doc! { "aggregate": 1, "pipeline": [{ "$changeStream": { "showExpandedEvents": true } }], "cursor": {} },
        );
        let (expanded, _) = batch(&reply, "firstBatch");
        ok(&commands, doc! { "create": "books" });
        ok(
            &commands,
            doc! { "create": "recent", "viewOn": "books", "pipeline": [] },
        );
        ok(
            &commands,
            doc! { "create": "readings", "timeseries": { "timeField": "at" } },
        );
        let reply = ok(
            &commands,
            doc! { "getMore": expanded, "collection": "$cmd.aggregate", "maxTimeMS": 200 },
        );
        let (_, events) = batch(&reply, "nextBatch");
        let created: Vec<(&str, &str)> = events
            .iter()
            .filter(|event| event.get_str("operationType").ok() == Some("create"))
            .map(|event| {
                (
                    event.get_document("ns").unwrap().get_str("coll").unwrap(),
                    event.get_str("nsType").unwrap(),
                )
            })
            .collect();
        assert_eq!(
            created[..3],
            [
                ("books", "collection"),
                ("recent", "view"),
                ("readings", "timeseries")
            ],
            "{events:?}"
        );
    }

    #[test]
    fn updates_name_the_dotted_paths_that_changed() {
        let commands = commands();
        ok(
            &commands,
            doc! { "insert": "books", "documents": [{ "_id": 1, "a": { "1": 1, "b": 1 }, "list": [{ "1": 1 }, 5, 6], "tags": ["x"] }] },
        );
        let (plain, _) = watch(&commands, doc! {}, vec![]);
        let (expanded, _) = watch(&commands, doc! { "showExpandedEvents": true }, vec![]);
        ok(
            &commands,
            doc! { "update": "books", "updates": [{ "q": { "_id": 1 }, "u": {
                "$set": { "a.1": 2, "list.0.1": 2 },
                "$unset": { "a.b": "" },
                "$push": { "tags": "y" },
            } }] },
        );
        ok(
            &commands,
            doc! { "update": "books", "updates": [{ "q": { "_id": 1 }, "u": { "$pop": { "list": 1 } } }] },
        );
        let (_, events) = get_more(&commands, plain);
        let description = events[0].get_document("updateDescription").unwrap();
        assert_eq!(
            description.get_document("updatedFields").unwrap(),
            &doc! { "a.1": 2, "list.0.1": 2, "tags.1": "y" }
        );
        assert_eq!(
            description.get_array("removedFields").unwrap(),
            &vec![Bson::from("a.b")]
        );
        assert!(!description.contains_key("disambiguatedPaths"));
        let truncated = events[1].get_document("updateDescription").unwrap();
        assert_eq!(
            truncated.get_array("truncatedArrays").unwrap(),
            &vec![Bson::Document(doc! { "field": "list", "newSize": 2 })]
        );
        let (_, events) = get_more(&commands, expanded);
        let description = events[0].get_document("updateDescription").unwrap();
        assert_eq!(
            description.get_document("disambiguatedPaths").unwrap(),
            &doc! { "a.1": ["a", "1"], "list.0.1": ["list", 0, "1"] }
        );
    }

    #[test]
    fn pre_and_post_images_come_from_the_collection_option() {
        let commands = commands();
        ok(
            &commands,
            doc! { "insert": "books", "documents": [{ "_id": 1 }, { "_id": 2 }] },
        );
        let options =
            doc! { "fullDocument": "whenAvailable", "fullDocumentBeforeChange": "whenAvailable" };
        let (available, _) = watch(&commands, options.clone(), vec![]);
        let (required, _) = watch(
            &commands,
            doc! { "fullDocumentBeforeChange": "required" },
            vec![],
        );
        ok(
            &commands,
            doc! { "update": "books", "updates": [{ "q": { "_id": 1 }, "u": { "$set": { "x": 1 } } }] },
        );
        let (_, events) = get_more(&commands, available);
        assert_eq!(
            events[0].get("fullDocument"),
            Some(&Bson::Null),
            "images are off"
        );
        assert_eq!(events[0].get("fullDocumentBeforeChange"), Some(&Bson::Null));
        let (code, name, _) = fails(
            &commands,
            doc! { "getMore": required, "collection": "books", "maxTimeMS": 200 },
        );
        assert_eq!((code, name.as_str()), (47, "NoMatchingDocument"));

        ok(
            &commands,
            doc! { "collMod": "books", "changeStreamPreAndPostImages": { "enabled": true } },
        );
        let (required, _) = watch(
            &commands,
            doc! { "fullDocument": "required", "fullDocumentBeforeChange": "required" },
            vec![],
        );
        let (off, _) = watch(&commands, doc! {}, vec![]);
        ok(
            &commands,
            doc! { "update": "books", "updates": [{ "q": { "_id": 1 }, "u": { "$inc": { "x": 1 } } }] },
        );
        ok(
            &commands,
            doc! { "delete": "books", "deletes": [{ "q": { "_id": 2 }, "limit": 1 }] },
        );
        let (_, events) = get_more(&commands, required);
        assert_eq!(kinds(&events), ["update", "delete"]);
        assert_eq!(
            events[0].get_document("fullDocument").unwrap(),
            &doc! { "_id": 1, "x": 2 }
        );
        assert_eq!(
            events[0].get_document("fullDocumentBeforeChange").unwrap(),
            &doc! { "_id": 1, "x": 1 }
        );
        assert_eq!(
            events[1].get_document("fullDocumentBeforeChange").unwrap(),
            &doc! { "_id": 2 }
        );
        let (_, events) = get_more(&commands, off);
        assert!(!events[0].contains_key("fullDocument"));
        assert!(!events[0].contains_key("fullDocumentBeforeChange"));
    }

    #[test]
    fn events_over_16_mib_are_split_into_fragments_or_fail() {
        let commands = commands();
        ok(
            &commands,
            doc! { "create": "books", "changeStreamPreAndPostImages": { "enabled": true } },
        );
        let big = |letter: &str| letter.repeat(10 * 1024 * 1024);
        ok(
            &commands,
            doc! { "insert": "books", "documents": [{ "_id": 1, "value": big("q") }] },
        );
        let options = doc! { "fullDocumentBeforeChange": "required" };
        let (split, _) = watch(
            &commands,
            options.clone(),
            vec![doc! { "$changeStreamSplitLargeEvent": {} }],
        );
        let (whole, _) = watch(&commands, options.clone(), vec![]);
        ok(
            &commands,
            doc! { "update": "books", "updates": [{ "q": { "_id": 1 }, "u": { "$set": { "value": big("z") } } }] },
        );
        let mut fragments = Vec::new();
        while fragments.len() < 2 {
            let (_, events) = get_more(&commands, split);
            fragments.extend(events);
        }
        let parts: Vec<&Document> = fragments
            .iter()
            .map(|fragment| fragment.get_document("splitEvent").unwrap())
            .collect();
        assert_eq!(
            parts,
            [
                &doc! { "fragment": 1, "of": 2 },
                &doc! { "fragment": 2, "of": 2 }
            ]
        );
        assert_eq!(fragments[0].get_str("operationType").unwrap(), "update");
        assert!(fragments[1].contains_key("fullDocumentBeforeChange"));
        let (code, _, _) = fails(
            &commands,
            doc! { "getMore": whole, "collection": "books", "maxTimeMS": 200 },
        );
        assert_eq!(code, 10334, "too large without the split stage");
        // Resuming after the first fragment gives the second.
        let after_first = fragments[0].get_document("_id").unwrap().clone();
        let (_, events) = watch(
            &commands,
            doc! { "fullDocumentBeforeChange": "required", "resumeAfter": after_first },
            vec![doc! { "$changeStreamSplitLargeEvent": {} }],
        );
        assert_eq!(
            events[0].get_document("splitEvent").unwrap(),
            &doc! { "fragment": 2, "of": 2 }
        );
        let (code, _, _) = fails(
            &commands,
            doc! { "aggregate": "books", "pipeline": [
                { "$changeStream": {} },
                { "$changeStreamSplitLargeEvent": {} },
                { "$match": {} },
            ], "cursor": {} },
        );
        assert_eq!(code, 7_182_802);
    }

    #[test]
    fn a_collection_with_a_policy_still_shows_logical_paths() {
        let commands = commands();
        let database = commands.database().clone();
        database.create_collection("books").run().unwrap();
        database
            .set_pattern(
                Pattern::outlier("books", "buyers")
                    .threshold(2)
                    .overflow_collection("extra_buyers")
                    .link_field("book_id"),
            )
            .unwrap();
        ok(
            &commands,
            doc! { "insert": "books", "documents": [{ "_id": 1, "buyers": ["a", "b"] }] },
        );
        let (id, _) = watch(&commands, doc! {}, vec![]);
        ok(
            &commands,
            doc! { "update": "books", "updates": [{ "q": { "_id": 1 }, "u": { "$push": { "buyers": "c" } } }] },
        );
        let (_, events) = get_more(&commands, id);
        assert_eq!(kinds(&events), ["update"], "{events:?}");
        assert_eq!(
            events[0]
                .get_document("updateDescription")
                .unwrap()
                .get_document("updatedFields")
                .unwrap(),
            &doc! { "buyers.2": "c" }
        );
    }
}
