//! A policy changes cost, never answers: a collection with a pattern policy answers every read
//! as a plain collection holding the logical documents does, through the Rust API and the
//! command layer, unless the read asks for the stored layout (`Find::stored`, the namespace
//! `system.stored.<collection>`). Writing back what a default read returned changes nothing;
//! writing back a stored-layout document is refused, naming the stored layout; a logical
//! document over 16 MiB is refused on a read with MongoDB's code, never cut.

use spillway::bson::{Bson, Document, doc};
use spillway::command::{Commands, Namespaces};
use spillway::{Database, Pattern, ReturnDocument};

/// A database with `sales` under an outlier policy (threshold 3, buckets of 2) and `plain`
/// without one, both holding the issue's three logical documents.
fn sorted_pair() -> Database {
    let db = Database::open_in_memory().unwrap();
    db.create_collection("sales").run().unwrap();
    db.set_pattern(
        Pattern::outlier("sales", "a")
            .threshold(3)
            .bucket_capacity(2)
            .overflow_collection("sales_extra"),
    )
    .unwrap();
    let documents = vec![
        doc! { "_id": 1, "t": "x", "a": ["m", "n", "o", "b"] },
        doc! { "_id": 2, "t": "y", "a": ["c", "d"] },
        doc! { "_id": 3, "t": "z", "a": ["e", "f", "g", "z"] },
    ];
    for name in ["sales", "plain"] {
        db.collection::<Document>(name)
            .insert_many(documents.clone())
            .run()
            .unwrap();
    }
    db
}

fn ids(documents: &[Document]) -> Vec<i32> {
    documents
        .iter()
        .map(|document| document.get_i32("_id").unwrap())
        .collect()
}

fn find_all(
    db: &Database,
    name: &str,
    sort: Document,
    projection: Option<Document>,
) -> Vec<Document> {
    let collection = db.collection::<Document>(name);
    let mut find = collection.find(doc! {}).sort(sort);
    if let Some(projection) = projection {
        find = find.projection(projection);
    }
    find.run().unwrap().map(Result::unwrap).collect()
}

#[test]
fn sorts_on_a_managed_array_use_the_whole_logical_array() {
    let db = sorted_pair();
    // MongoDB's array sort key: the smallest element ascending, the largest descending.
    let ascending = find_all(&db, "sales", doc! { "a": 1 }, None);
    assert_eq!(ids(&ascending), vec![1, 2, 3]);
    let descending = find_all(&db, "sales", doc! { "a": -1 }, None);
    assert_eq!(ids(&descending), vec![3, 1, 2]);
    for sort in [doc! { "a": 1 }, doc! { "a": -1 }, doc! { "t": 1, "a": -1 }] {
        assert_eq!(
            find_all(&db, "sales", sort.clone(), None),
            find_all(&db, "plain", sort.clone(), None),
            "find sort {sort}"
        );
        let pipeline = vec![doc! { "$sort": sort.clone() }, doc! { "$limit": 2 }];
        let aggregated = |name: &str| -> Vec<Document> {
            db.collection::<Document>(name)
                .aggregate(pipeline.clone())
                .run()
                .unwrap()
                .map(Result::unwrap)
                .collect()
        };
        assert_eq!(
            aggregated("sales"),
            aggregated("plain"),
            "aggregate sort {sort}"
        );
    }
    // An index on the managed field does not change the order.
    db.collection::<Document>("sales")
        .create_index(
            spillway::IndexModel::builder()
                .keys(doc! { "a": 1 })
                .build(),
        )
        .run()
        .unwrap();
    assert_eq!(
        ids(&find_all(&db, "sales", doc! { "a": 1 }, None)),
        vec![1, 2, 3]
    );
    // The first match of a single-document write follows the same order.
    let first = db
        .collection::<Document>("sales")
        .find_one_and_update(doc! {}, doc! { "$set": { "picked": true } })
        .sort(doc! { "a": -1 })
        .run()
        .unwrap()
        .unwrap();
    assert_eq!(first.get_i32("_id").unwrap(), 3);
}

#[test]
fn default_reads_return_logical_documents_and_the_stored_layout_is_asked_for() {
    let db = sorted_pair();
    let sales = db.collection::<Document>("sales");
    let logical = sales.find_one(doc! { "_id": 1 }).run().unwrap().unwrap();
    assert_eq!(
        logical,
        doc! { "_id": 1, "t": "x", "a": ["m", "n", "o", "b"] }
    );
    let stored = sales
        .find_one(doc! { "_id": 1 })
        .stored(true)
        .run()
        .unwrap()
        .unwrap();
    assert_eq!(stored.get_array("a").unwrap().len(), 3);
    assert_eq!(stored.get_bool("has_extras").ok(), Some(true));
    for projection in [
        doc! { "a": { "$slice": 2 } },
        doc! { "a": { "$slice": -1 } },
        doc! { "a": { "$slice": [3, 5] } },
        doc! { "a": { "$slice": [-3, 2] }, "t": 1 },
        doc! { "a": 0 },
        doc! { "t": 1 },
        doc! { "a": { "$elemMatch": { "$gte": "z" } } },
    ] {
        assert_eq!(
            find_all(&db, "sales", doc! { "_id": 1 }, Some(projection.clone())),
            find_all(&db, "plain", doc! { "_id": 1 }, Some(projection.clone())),
            "projection {projection}"
        );
    }
    assert_eq!(
        sales.distinct("a", doc! {}).run().unwrap().len(),
        db.collection::<Document>("plain")
            .distinct("a", doc! {})
            .run()
            .unwrap()
            .len()
    );
}

#[test]
fn find_and_modify_returns_logical_documents_before_and_after() {
    let db = sorted_pair();
    for name in ["sales", "plain"] {
        let collection = db.collection::<Document>(name);
        let before = collection
            .find_one_and_update(doc! { "_id": 3 }, doc! { "$push": { "a": "w" } })
            .run()
            .unwrap()
            .unwrap();
        assert_eq!(before.get_array("a").unwrap().len(), 4, "{name}");
        let after = collection
            .find_one_and_update(doc! { "_id": 3 }, doc! { "$push": { "a": "v" } })
            .return_document(ReturnDocument::After)
            .run()
            .unwrap()
            .unwrap();
        assert_eq!(
            after,
            doc! { "_id": 3, "t": "z", "a": ["e", "f", "g", "z", "w", "v"] },
            "{name}"
        );
        let replaced = collection
            .find_one_and_replace(doc! { "_id": 1 }, doc! { "t": "r", "a": ["q"] })
            .run()
            .unwrap()
            .unwrap();
        assert_eq!(
            replaced,
            doc! { "_id": 1, "t": "x", "a": ["m", "n", "o", "b"] }
        );
        let deleted = collection
            .find_one_and_delete(doc! { "_id": 3 })
            .run()
            .unwrap()
            .unwrap();
        assert_eq!(deleted, after, "{name}");
    }
    assert!(db.verify_patterns().unwrap().is_empty());
}

#[test]
fn writing_back_what_a_read_returned_changes_nothing() {
    let db = Database::open_in_memory().unwrap();
    db.create_collection("books").run().unwrap();
    db.set_pattern(Pattern::outlier("books", "buyers").threshold(50))
        .unwrap();
    db.set_pattern(
        Pattern::subset("books", "reviews")
            .keep(3)
            .sort_by(doc! { "at": -1 })
            .archive_collection("books_reviews"),
    )
    .unwrap();
    let books = db.collection::<Document>("books");
    let buyers: Vec<String> = (0..120).map(|n| format!("user{n:03}")).collect();
    let reviews: Vec<Document> = (0..8)
        .map(|n| doc! { "at": 100 - n, "text": format!("review {n}") })
        .collect();
    books
        .insert_one(doc! { "_id": 1, "title": "Amulet", "buyers": buyers.clone(), "reviews": reviews.clone() })
        .run()
        .unwrap();
    let read = books.find_one(doc! { "_id": 1 }).run().unwrap().unwrap();
    assert_eq!(read.get_array("buyers").unwrap().len(), 120);
    assert_eq!(read.get_array("reviews").unwrap().len(), 8);
    let archive_before: Vec<Document> = db
        .collection::<Document>("books_reviews")
        .find(doc! {})
        .run()
        .unwrap()
        .map(Result::unwrap)
        .collect();
    let result = books
        .replace_one(doc! { "_id": 1 }, read.clone())
        .run()
        .unwrap();
    assert_eq!(result.matched_count, 1);
    let again = books.find_one(doc! { "_id": 1 }).run().unwrap().unwrap();
    assert_eq!(again, read, "the round trip changed the logical document");
    // A filter that is the whole document read matches it, as a GUI's edit-and-save sends.
    let edited = books
        .update_one(
            read.clone(),
            doc! { "$set": { "title": "The Wooden Amulet" } },
        )
        .run()
        .unwrap();
    assert_eq!(edited.modified_count, 1);
    assert!(db.verify_patterns().unwrap().is_empty());
    let archive_after: Vec<Document> = db
        .collection::<Document>("books_reviews")
        .find(doc! {})
        .run()
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert_eq!(archive_after.len(), archive_before.len());

    // A stored-layout document written back is refused, naming the stored layout.
    let stored = books
        .find_one(doc! { "_id": 1 })
        .stored(true)
        .run()
        .unwrap()
        .unwrap();
    let error = books
        .replace_one(doc! { "_id": 1 }, stored)
        .run()
        .unwrap_err();
    assert!(
        error.to_string().contains("stored layout"),
        "the refusal names the stored layout: {error}"
    );
    let unchanged = books.find_one(doc! { "_id": 1 }).run().unwrap().unwrap();
    assert_eq!(unchanged.get_array("buyers").unwrap().len(), 120);
}

#[test]
fn a_logical_document_over_16_mib_is_refused_on_read_never_cut() {
    let db = Database::open_in_memory().unwrap();
    db.create_collection("big").run().unwrap();
    db.set_pattern(
        Pattern::outlier("big", "blobs")
            .threshold(2)
            .bucket_capacity(2),
    )
    .unwrap();
    let big = db.collection::<Document>("big");
    big.insert_one(doc! { "_id": 1, "blobs": [] })
        .run()
        .unwrap();
    let blob = "x".repeat(1 << 20);
    for _ in 0..18 {
        big.update_one(doc! { "_id": 1 }, doc! { "$push": { "blobs": &blob } })
            .run()
            .unwrap();
    }
    assert_eq!(big.array_len(1, "blobs").unwrap(), Some(18));
    let error = big.find_one(doc! { "_id": 1 }).run().unwrap_err();
    assert_eq!(error.code(), Some(10334), "{error}");
    assert!(error.to_string().contains("$slice"), "{error}");
    let error = big
        .find_one_and_update(doc! { "_id": 1 }, doc! { "$set": { "seen": true } })
        .run()
        .unwrap_err();
    assert_eq!(error.code(), Some(10334), "{error}");
    // The write itself was taken back with the failed statement: nothing changed.
    let page = big
        .find_one(doc! { "_id": 1 })
        .projection(doc! { "blobs": { "$slice": [16, 2] }, "seen": 1 })
        .run()
        .unwrap()
        .unwrap();
    assert_eq!(page.get_array("blobs").unwrap().len(), 2);
    assert!(!page.contains_key("seen"));
    let without = big
        .find_one(doc! { "_id": 1 })
        .projection(doc! { "blobs": 0 })
        .run()
        .unwrap()
        .unwrap();
    assert_eq!(without, doc! { "_id": 1 });
    // findAndModify follows the same rule: a projection that leaves the arrays out, or
    // pages them, returns what fits.
    for (projection, expected) in [
        (doc! { "blobs": 0 }, doc! { "_id": 1, "n": 1 }),
        (doc! { "n": 1 }, doc! { "_id": 1, "n": 1 }),
        (
            doc! { "n": 1, "blobs": { "$slice": -1 } },
            doc! { "_id": 1, "n": 1, "blobs": [&blob] },
        ),
    ] {
        let returned = big
            .find_one_and_update(doc! { "_id": 1 }, doc! { "$set": { "n": 1 } })
            .projection(projection.clone())
            .return_document(ReturnDocument::After)
            .run()
            .unwrap_or_else(|error| panic!("{projection}: {error}"));
        assert_eq!(returned, Some(expected), "{projection}");
    }
    big.update_one(doc! { "_id": 1 }, doc! { "$unset": { "n": "" } })
        .run()
        .unwrap();

    // Over the wire: the same code, and a reply that was never cut.
    let commands = Commands::with_namespaces(db, Namespaces::Flat);
    let reply = commands.execute(doc! { "find": "big", "filter": {}, "$db": "test" });
    assert_eq!(reply.get_i32("code").ok(), Some(10334), "{reply}");
    let reply = commands.execute(doc! {
        "find": "big", "projection": { "blobs": { "$slice": 1 } }, "$db": "test",
    });
    assert_eq!(first_batch(&reply)[0].get_array("blobs").unwrap().len(), 1);
    let reply = commands.execute(doc! {
        "findAndModify": "big", "query": { "_id": 1 }, "update": { "$set": { "n": 2 } },
        "fields": { "n": 1 }, "new": true, "$db": "test",
    });
    assert_eq!(
        reply.get_document("value").ok(),
        Some(&doc! { "_id": 1, "n": 2 }),
        "{reply}"
    );
}

fn command_ok(commands: &Commands, command: Document) -> Document {
    let shown = command.to_string();
    let reply = commands.execute(command);
    assert_eq!(reply.get_f64("ok").ok(), Some(1.0), "{shown} -> {reply}");
    reply
}

fn first_batch(reply: &Document) -> Vec<Document> {
    reply
        .get_document("cursor")
        .unwrap()
        .get_array("firstBatch")
        .unwrap()
        .iter()
        .map(|value| value.as_document().unwrap().clone())
        .collect()
}

#[test]
fn over_the_wire_the_stored_layout_is_a_read_only_namespace() {
    let commands = Commands::new(Database::open_in_memory().unwrap());
    command_ok(
        &commands,
        doc! { "insert": "sales", "documents": [{ "_id": 1, "a": ["m", "n", "o", "b"] }, { "_id": 2, "a": ["c"] }], "$db": "shop" },
    );
    command_ok(
        &commands,
        doc! { "setPattern": "sales", "outlier": "a", "threshold": 3, "bucketCapacity": 2, "$db": "shop" },
    );
    let logical = first_batch(&command_ok(
        &commands,
        doc! { "find": "sales", "sort": { "a": -1 }, "$db": "shop" },
    ));
    assert_eq!(logical[0], doc! { "_id": 1, "a": ["m", "n", "o", "b"] });
    let stored = first_batch(&command_ok(
        &commands,
        doc! { "find": "system.stored.sales", "filter": { "has_extras": true }, "$db": "shop" },
    ));
    assert_eq!(
        stored,
        vec![doc! { "_id": 1, "a": ["m", "n", "o"], "has_extras": true }]
    );
    let counted = command_ok(
        &commands,
        doc! { "count": "system.stored.sales", "query": { "a": "b" }, "$db": "shop" },
    );
    assert_eq!(
        counted.get_i32("n").ok(),
        Some(0),
        "the stored prefix has no 'b'"
    );
    let counted = command_ok(
        &commands,
        doc! { "count": "sales", "query": { "a": "b" }, "$db": "shop" },
    );
    assert_eq!(counted.get_i32("n").ok(), Some(1));
    let aggregated = first_batch(&command_ok(
        &commands,
        doc! { "aggregate": "system.stored.sales", "pipeline": [{ "$match": { "_id": 1 } }], "cursor": {}, "$db": "shop" },
    ));
    assert_eq!(aggregated[0].get_array("a").unwrap().len(), 3);
    let distinct = command_ok(
        &commands,
        doc! { "distinct": "system.stored.sales", "key": "a", "$db": "shop" },
    );
    assert_eq!(distinct.get_array("values").unwrap().len(), 4);
    for write in [
        doc! { "insert": "system.stored.sales", "documents": [{ "_id": 3 }], "$db": "shop" },
        doc! { "update": "system.stored.sales", "updates": [{ "q": {}, "u": { "$set": { "x": 1 } } }], "$db": "shop" },
        doc! { "delete": "system.stored.sales", "deletes": [{ "q": {}, "limit": 0 }], "$db": "shop" },
        doc! { "findAndModify": "system.stored.sales", "query": {}, "remove": true, "$db": "shop" },
        doc! { "drop": "system.stored.sales", "$db": "shop" },
    ] {
        let reply = commands.execute(write.clone());
        assert_eq!(reply.get_i32("code").ok(), Some(166), "{write} -> {reply}");
        assert!(
            reply.get_str("errmsg").unwrap().contains("shop.sales"),
            "{reply}"
        );
    }
    let replaced = commands.execute(doc! {
        "update": "sales",
        "updates": [{ "q": { "_id": 1 }, "u": stored[0].clone() }],
        "$db": "shop",
    });
    let errors = replaced.get_array("writeErrors").unwrap();
    assert!(
        format!("{errors:?}").contains("stored layout"),
        "a stored document written back is refused: {replaced}"
    );
    let still = first_batch(&command_ok(
        &commands,
        doc! { "find": "sales", "filter": { "_id": 1 }, "$db": "shop" },
    ));
    assert_eq!(
        still[0].get_array("a").unwrap(),
        &vec![Bson::from("m"), "n".into(), "o".into(), "b".into()]
    );
}

/// What mongo-express 1.0.2 sends when a user saves or deletes a document from its document
/// page (`cargo xtask gui`): `update` with the whole document it read as the filter and the
/// edited text as the replacement, and `delete` with the whole document read as the filter. On
/// a collection with a policy, that filter holds the whole logical array, spilled elements
/// included: it must match, the save must keep every spilled element once, and the delete must
/// take the overflow buckets with the document.
#[test]
fn a_gui_saving_or_deleting_by_the_whole_document_read_matches_the_logical_document() {
    let commands = Commands::new(Database::open_in_memory().unwrap());
    command_ok(
        &commands,
        doc! { "setPattern": "books", "outlier": "buyers", "threshold": 3, "bucketCapacity": 2, "$db": "gui" },
    );
    let buyers: Vec<String> = (0..10).map(|n| format!("u{n:02}")).collect();
    command_ok(
        &commands,
        doc! { "insert": "books", "documents": [
            { "_id": 1, "title": "Viral", "buyers": buyers.clone() },
            { "_id": 2, "title": "Out of Print", "buyers": ["a", "b", "c", "d", "e"] },
        ], "$db": "gui" },
    );
    let read = first_batch(&command_ok(
        &commands,
        doc! { "find": "books", "filter": { "_id": 1 }, "$db": "gui" },
    ))
    .remove(0);
    let mut edited = read.clone();
    edited.insert("title", "Viral (edited)");
    let saved = command_ok(
        &commands,
        doc! { "update": "books", "updates": [{ "q": read.clone(), "u": edited.clone() }], "$db": "gui" },
    );
    assert_eq!(
        (saved.get_i32("n").ok(), saved.get_i32("nModified").ok()),
        (Some(1), Some(1)),
        "the save matched nothing: {saved}"
    );
    let after = first_batch(&command_ok(
        &commands,
        doc! { "find": "books", "filter": { "_id": 1 }, "$db": "gui" },
    ));
    assert_eq!(after, vec![edited]);
    let buckets = first_batch(&command_ok(
        &commands,
        doc! { "find": "extra_books", "filter": { "books_id": 1 }, "$db": "gui" },
    ));
    let mut spilled: Vec<String> = buckets
        .iter()
        .flat_map(|bucket| bucket.get_array("buyers_extra").unwrap().clone())
        .map(|element| element.as_str().unwrap().to_string())
        .collect();
    spilled.sort();
    assert_eq!(spilled, buyers[3..], "each spilled element once");

    let doomed = first_batch(&command_ok(
        &commands,
        doc! { "find": "books", "filter": { "_id": 2 }, "$db": "gui" },
    ))
    .remove(0);
    let deleted = command_ok(
        &commands,
        doc! { "delete": "books", "deletes": [{ "q": doomed, "limit": 1 }], "$db": "gui" },
    );
    assert_eq!(deleted.get_i32("n").ok(), Some(1), "{deleted}");
    let left = first_batch(&command_ok(
        &commands,
        doc! { "find": "extra_books", "filter": { "books_id": 2 }, "$db": "gui" },
    ));
    assert!(
        left.is_empty(),
        "buckets left of the deleted document: {left:?}"
    );
    let verified = command_ok(&commands, doc! { "verifyPatterns": 1, "$db": "gui" });
    assert!(
        verified.get_array("violations").unwrap().is_empty(),
        "{verified}"
    );
}
