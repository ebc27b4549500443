//! Renaming a collection that has pattern policies (`Collection::rename`): the policies,
//! their side collections, links, indexes and every spilled element come along in one commit
//! that survives a reopen; what cannot be renamed is refused naming the policy, and changes
//! nothing.

use spillway::bson::{Bson, Document, doc};
use spillway::{Database, ErrorKind, IndexModel, Pattern};

fn buyers(range: std::ops::Range<usize>) -> Vec<Bson> {
    range.map(|n| Bson::String(format!("user{n:03}"))).collect()
}

/// `sales` with an outlier policy on `buyers` (threshold 3, buckets of 4, overflow
/// `extra_sales`) and a subset policy on `reviews` (keep 2 by `k` descending, archive
/// `sales_reviews`), an index on `year`, and documents whose arrays spill.
fn seed(db: &Database) -> Vec<Document> {
    db.create_collection("sales").run().unwrap();
    db.set_pattern(
        Pattern::outlier("sales", "buyers")
            .threshold(3)
            .bucket_capacity(4)
            .link_field("book_id"),
    )
    .unwrap();
    db.set_pattern(
        Pattern::subset("sales", "reviews")
            .keep(2)
            .sort_by(doc! { "k": -1 })
            .archive_collection("sales_reviews"),
    )
    .unwrap();
    let sales = db.collection::<Document>("sales");
    sales
        .create_index(IndexModel::builder().keys(doc! { "year": 1 }).build())
        .run()
        .unwrap();
    for id in 1..=4 {
        let reviews: Vec<Bson> = (0..id * 3)
            .map(|k| Bson::Document(doc! { "k": k, "text": format!("review {k}") }))
            .collect();
        sales
            .insert_one(doc! {
                "_id": id, "year": 2000 + id, "buyers": buyers(0..(id as usize) * 7),
                "reviews": reviews,
            })
            .run()
            .unwrap();
    }
    all(db, "sales")
}

fn all(db: &Database, collection: &str) -> Vec<Document> {
    db.collection::<Document>(collection)
        .find(doc! {})
        .sort(doc! { "_id": 1 })
        .run()
        .unwrap()
        .map(Result::unwrap)
        .collect()
}

fn names(db: &Database) -> Vec<String> {
    let mut names = db.list_collection_names().run().unwrap();
    names.sort();
    names
}

fn index_names(db: &Database, collection: &str) -> Vec<String> {
    let mut names = db
        .collection::<Document>(collection)
        .list_index_names()
        .run()
        .unwrap();
    names.sort();
    names
}

fn policy_collections(db: &Database) -> Vec<(String, String, String)> {
    db.patterns()
        .iter()
        .map(|pattern| {
            (
                pattern.collection().to_string(),
                pattern.field().to_string(),
                pattern.side_collection().to_string(),
            )
        })
        .collect()
}

/// What the renamed collection must show, and go on doing, under its new name `orders`.
fn assert_renamed(db: &Database, logical: &[Document]) {
    assert_eq!(
        names(db),
        ["extra_sales", "orders", "sales_reviews"],
        "the main collection has its new name; the side collections keep theirs"
    );
    assert_eq!(
        policy_collections(db),
        [
            ("orders".into(), "buyers".into(), "extra_sales".into()),
            ("orders".into(), "reviews".into(), "sales_reviews".into()),
        ]
    );
    assert_eq!(
        all(db, "orders"),
        logical,
        "every spilled element reachable"
    );
    assert!(all(db, "sales").is_empty());
    assert!(db.verify_patterns().unwrap().is_empty());
    let orders = db.collection::<Document>("orders");
    assert_eq!(orders.array_len(4, "buyers").unwrap(), Some(28));
    assert_eq!(orders.array_len(4, "reviews").unwrap(), Some(12));
    // A query on a spilled element answers on the logical documents (through the
    // overflow's own index on the link field and the main collection's).
    let found: Vec<Bson> = orders
        .find(doc! { "buyers": "user020", "year": { "$gte": 2001 } })
        .run()
        .unwrap()
        .map(|document| document.unwrap().get("_id").cloned().unwrap())
        .collect();
    assert_eq!(found, [Bson::Int32(3), Bson::Int32(4)]);
    assert_eq!(index_names(db, "orders"), ["_id_", "year_1"]);
}

#[test]
fn a_renamed_collection_keeps_its_policies_side_collections_and_every_element() {
    let dir = tempfile::tempdir().unwrap();
    let logical;
    let side_indexes;
    {
        let db = Database::open(dir.path()).unwrap();
        logical = seed(&db);
        side_indexes = index_names(&db, "extra_sales");
        let stored_before = all(&db, "extra_sales");
        db.collection::<Document>("sales")
            .rename("orders")
            .run()
            .unwrap();
        assert_renamed(&db, &logical);
        assert_eq!(
            all(&db, "extra_sales"),
            stored_before,
            "the overflow buckets are not rewritten: their links are the same _ids"
        );
        assert_eq!(index_names(&db, "extra_sales"), side_indexes);
    }
    // One commit, durable: a reopen reads the renamed collection whole.
    let db = Database::open(dir.path()).unwrap();
    assert_renamed(&db, &logical);
    assert_eq!(index_names(&db, "extra_sales"), side_indexes);
    // Writes go on through the policies under the new name.
    let orders = db.collection::<Document>("orders");
    orders
        .update_one(
            doc! { "_id": 1 },
            doc! { "$push": { "buyers": { "$each": ["late1", "late2", "late3", "late4", "late5"] },
            "reviews": { "k": 100, "text": "newest" } } },
        )
        .run()
        .unwrap();
    let one = orders.find_one(doc! { "_id": 1 }).run().unwrap().unwrap();
    assert_eq!(one.get_array("buyers").unwrap().len(), 12);
    assert_eq!(one.get_array("reviews").unwrap().len(), 4);
    let stored = orders
        .find_one(doc! { "_id": 1 })
        .stored(true)
        .run()
        .unwrap()
        .unwrap();
    assert_eq!(stored.get_array("buyers").unwrap().len(), 3);
    assert_eq!(
        stored.get_array("reviews").unwrap()[0]
            .as_document()
            .unwrap()
            .get_i32("k")
            .ok(),
        Some(100)
    );
    orders.delete_one(doc! { "_id": 4 }).run().unwrap();
    assert_eq!(
        db.collection::<Document>("extra_sales")
            .count_documents(doc! { "book_id": 4 })
            .run()
            .unwrap(),
        0,
        "a delete still takes the buckets"
    );
    assert!(db.verify_patterns().unwrap().is_empty());
}

#[test]
fn a_side_collection_can_move_with_its_collection() {
    let db = Database::open_in_memory().unwrap();
    let logical = seed(&db);
    db.collection::<Document>("sales")
        .rename("orders")
        .side_collection("extra_sales", "extra_orders")
        .run()
        .unwrap();
    assert_eq!(
        names(&db),
        ["extra_orders", "orders", "sales_reviews"],
        "the overflow moved, the archive kept its name"
    );
    assert_eq!(
        policy_collections(&db)[0],
        ("orders".into(), "buyers".into(), "extra_orders".into())
    );
    assert_eq!(all(&db, "orders"), logical);
    assert!(db.verify_patterns().unwrap().is_empty());
    // Only a side collection of the renamed collection's policies can be named.
    let error = db
        .collection::<Document>("orders")
        .rename("books")
        .side_collection("sales_reviews_typo", "x")
        .run()
        .unwrap_err();
    assert!(
        matches!(error.kind(), ErrorKind::InvalidOptions { .. })
            && error
                .to_string()
                .contains("'sales_reviews_typo' is not the side collection"),
        "{error}"
    );
    // A new side name that exists is refused.
    db.create_collection("taken").run().unwrap();
    let error = db
        .collection::<Document>("orders")
        .rename("books")
        .side_collection("extra_orders", "taken")
        .run()
        .unwrap_err();
    assert!(
        error.to_string().contains("policy on orders.buyers")
            && error.to_string().contains("'taken', which exists"),
        "{error}"
    );
    assert_eq!(all(&db, "orders"), logical, "nothing changed");
}

#[test]
fn side_collections_cannot_be_renamed_nor_taken_as_names_and_nothing_changes() {
    let db = Database::open_in_memory().unwrap();
    let logical = seed(&db);
    let before = policy_collections(&db);
    let error = db
        .collection::<Document>("extra_sales")
        .rename("overflow")
        .run()
        .unwrap_err();
    assert_eq!(
        error.to_string(),
        "write refused by the policy on sales.buyers: 'extra_sales' is the policy's side collection and cannot be renamed while the policy exists; rename 'sales', whose policy keeps its side collection"
    );
    assert_eq!(error.code(), Some(2), "as a drop of a side collection is");
    let dropped = db
        .collection::<Document>("extra_sales")
        .drop()
        .run()
        .unwrap_err();
    assert!(
        dropped.to_string().contains("cannot be dropped"),
        "{dropped}"
    );
    for drop_target in [false, true] {
        let error = db
            .collection::<Document>("sales")
            .rename("sales_reviews")
            .drop_target(drop_target)
            .run()
            .unwrap_err();
        assert_eq!(
            error.to_string(),
            "write refused by the policy on sales.reviews: 'sales_reviews' is the policy's side collection: 'sales' cannot be renamed to it while the policy exists"
        );
    }
    db.create_collection("plain").run().unwrap();
    let error = db
        .collection::<Document>("plain")
        .rename("extra_sales")
        .drop_target(true)
        .run()
        .unwrap_err();
    assert!(
        error.to_string().contains("policy on sales.buyers"),
        "{error}"
    );
    let error = db
        .collection::<Document>("sales")
        .rename("plain")
        .run()
        .unwrap_err();
    assert!(
        matches!(error.kind(), ErrorKind::CollectionExists { .. }) && error.code() == Some(48),
        "{error}"
    );
    let error = db
        .collection::<Document>("nothing")
        .rename("other")
        .run()
        .unwrap_err();
    assert!(
        matches!(error.kind(), ErrorKind::CollectionNotFound { .. }) && error.code() == Some(26),
        "{error}"
    );
    assert_eq!(policy_collections(&db), before);
    assert_eq!(all(&db, "sales"), logical);
    assert_eq!(
        names(&db),
        ["extra_sales", "plain", "sales", "sales_reviews"]
    );
    assert!(db.verify_patterns().unwrap().is_empty());
}

#[test]
fn drop_target_onto_a_collection_with_a_policy_drops_it_as_a_drop_would() {
    let db = Database::open_in_memory().unwrap();
    let logical = seed(&db);
    db.set_pattern(Pattern::outlier("orders", "items").threshold(2))
        .unwrap();
    db.collection::<Document>("orders")
        .insert_one(doc! { "_id": 9, "items": [1, 2, 3, 4, 5] })
        .run()
        .unwrap();
    assert!(names(&db).contains(&"extra_orders".to_string()));
    let refused = db
        .collection::<Document>("sales")
        .rename("orders")
        .run()
        .unwrap_err();
    assert!(
        matches!(refused.kind(), ErrorKind::CollectionExists { .. }),
        "{refused}"
    );
    db.collection::<Document>("sales")
        .rename("orders")
        .drop_target(true)
        .run()
        .unwrap();
    assert_eq!(
        names(&db),
        ["extra_sales", "orders", "sales_reviews"],
        "the target's policy created extra_orders, which went with it"
    );
    assert_eq!(policy_collections(&db).len(), 2);
    assert!(
        db.patterns()
            .iter()
            .all(|pattern| pattern.collection() == "orders" && pattern.field() != "items")
    );
    assert_eq!(all(&db, "orders"), logical);
    assert!(db.verify_patterns().unwrap().is_empty());
}

#[test]
fn a_rename_in_a_transaction_commits_with_it_or_not_at_all() {
    let db = Database::open_in_memory().unwrap();
    let logical = seed(&db);
    let failed: spillway::Result<()> = db.transaction(|transaction| {
        db.collection::<Document>("sales")
            .rename("orders")
            .session(transaction)
            .run()?;
        let orders = db.collection::<Document>("orders");
        let read = orders
            .find_one(doc! { "_id": 4 })
            .session(transaction)
            .run()?
            .unwrap();
        assert_eq!(read, logical[3], "the transaction reads its own rename");
        Err(spillway::Transaction::abort("changed my mind"))
    });
    assert!(failed.is_err());
    assert_eq!(all(&db, "sales"), logical);
    assert_eq!(policy_collections(&db)[0].0, "sales");
    db.transaction(|transaction| {
        db.collection::<Document>("sales")
            .rename("orders")
            .session(transaction)
            .run()?;
        db.collection::<Document>("orders")
            .update_one(
                doc! { "_id": 1 },
                doc! { "$push": { "buyers": "in the same commit" } },
            )
            .session(transaction)
            .run()?;
        Ok(())
    })
    .unwrap();
    let one = db
        .collection::<Document>("orders")
        .find_one(doc! { "_id": 1 })
        .run()
        .unwrap()
        .unwrap();
    assert_eq!(one.get_array("buyers").unwrap().len(), 8);
    assert!(db.verify_patterns().unwrap().is_empty());
}

#[test]
fn a_stream_sees_one_rename_event_and_nothing_of_the_side_collections() {
    let db = Database::open_in_memory().unwrap();
    seed(&db);
    let mut stream = db.watch().run().unwrap();
    db.collection::<Document>("sales")
        .rename("orders")
        .side_collection("extra_sales", "extra_orders")
        .run()
        .unwrap();
    db.collection::<Document>("orders")
        .insert_one(doc! { "_id": 50, "buyers": buyers(0..6) })
        .run()
        .unwrap();
    let mut events = Vec::new();
    while events.len() < 2 {
        let event = stream
            .next_timeout(std::time::Duration::from_secs(5))
            .unwrap()
            .expect("an event");
        events.push(event);
    }
    assert_eq!(events[0].get_str("operationType").ok(), Some("rename"));
    assert_eq!(
        events[0].get_document("ns").unwrap().get_str("coll").ok(),
        Some("sales")
    );
    assert_eq!(
        events[0].get_document("to").unwrap().get_str("coll").ok(),
        Some("orders")
    );
    assert_eq!(events[1].get_str("operationType").ok(), Some("insert"));
    assert_eq!(
        events[1]
            .get_document("fullDocument")
            .unwrap()
            .get_array("buyers")
            .unwrap()
            .len(),
        6,
        "the logical document, spilled into extra_orders"
    );
    assert!(stream.try_next().unwrap().is_none(), "nothing else");
}
