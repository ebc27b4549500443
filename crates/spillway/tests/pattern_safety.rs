//! Policies never change or lose the user's data, and writes straight to side collections
//! stay correct or are refused:
//!
//! - declaring a policy whose flag field collides with data, or whose side collection holds
//!   unrelated documents, is refused before anything is written; removing a policy never
//!   drops a collection it did not create;
//! - a statement on a side collection (`updateMany`, `deleteMany`) writes every side
//!   document first, then brings each main document it touched back in step once; side
//!   documents that break the layout are refused at write time;
//! - unique indexes of a collection with policies are checked against the state the whole
//!   statement leaves, as on every other path.

use spillway::bson::{Bson, Document, doc};
use spillway::{Database, ErrorKind, IndexModel, IndexOptions, Pattern};

fn buyers(range: std::ops::Range<usize>) -> Vec<Bson> {
    range.map(|n| Bson::String(format!("user{n:02}"))).collect()
}

fn strings(values: &[&str]) -> Vec<Bson> {
    values
        .iter()
        .map(|value| Bson::String(value.to_string()))
        .collect()
}

fn all(db: &Database, collection: &str) -> Vec<Document> {
    db.collection::<Document>(collection)
        .find(doc! {})
        .run()
        .unwrap()
        .map(Result::unwrap)
        .collect()
}

fn expanded_array(db: &Database, collection: &str, id: i32, field: &str) -> Vec<Bson> {
    db.collection::<Document>(collection)
        .find_one(doc! { "_id": id })
        .run()
        .unwrap()
        .expect("the document exists")
        .get_array(field)
        .unwrap()
        .clone()
}

fn collection_names(db: &Database) -> Vec<String> {
    db.list_collection_names().run().unwrap()
}

fn assert_consistent(db: &Database) {
    assert_eq!(db.verify_patterns().unwrap(), Vec::new());
    let report = db.verify().unwrap();
    assert!(report.is_clean(), "{report:?}");
}

fn assert_refused_by_policy(error: &spillway::Error, policy: &str, mentions: &[&str]) {
    assert!(matches!(error.kind(), ErrorKind::Pattern(_)), "{error}");
    let message = error.to_string();
    assert!(message.contains(policy), "{message}");
    for mention in mentions {
        assert!(
            message.contains(mention),
            "'{mention}' missing from: {message}"
        );
    }
}

// ---------------------------------------------------------------------------------------
// Section 2: declaring and removing a policy.

#[test]
fn a_flag_field_that_documents_already_hold_is_refused_before_anything_is_written() {
    let db = Database::open_in_memory().unwrap();
    let sales = db.collection::<Document>("sales");
    let books = vec![
        doc! { "_id": 1, "title": "Invisible Cities", "customers_purchased": buyers(0..3) },
        doc! { "_id": 2, "title": "The Wooden Amulet", "customers_purchased": buyers(0..80) },
    ];
    sales.insert_many(books.clone()).run().unwrap();
    let refused = db
        .set_pattern(
            Pattern::outlier("sales", "customers_purchased")
                .threshold(50)
                .flag_field("title"),
        )
        .unwrap_err();
    assert_refused_by_policy(&refused, "sales.customers_purchased", &["'title'", "_id 1"]);
    assert_eq!(all(&db, "sales"), books);
    assert!(db.patterns().is_empty());
    assert_eq!(collection_names(&db), vec!["sales".to_string()]);
}

#[test]
fn the_flags_of_a_hand_made_layout_are_adopted_and_other_values_are_refused() {
    let db = Database::open_in_memory().unwrap();
    let sales = db.collection::<Document>("sales");
    sales
        .insert_many([
            doc! { "_id": 1, "customers_purchased": buyers(0..3), "has_extras": false },
            doc! { "_id": 2, "customers_purchased": buyers(0..50), "has_extras": true },
        ])
        .run()
        .unwrap();
    db.collection::<Document>("extra_sales")
        .insert_one(doc! { "sales_id": 2, "customers_purchased_extra": buyers(50..120) })
        .run()
        .unwrap();
    // `has_extras: true` without any overflow document is not the layout's flag.
    sales
        .insert_one(doc! { "_id": 3, "customers_purchased": buyers(0..4), "has_extras": true })
        .run()
        .unwrap();
    let refused = db
        .set_pattern(Pattern::outlier("sales", "customers_purchased"))
        .unwrap_err();
    assert_refused_by_policy(
        &refused,
        "sales.customers_purchased",
        &["'has_extras'", "_id 3"],
    );
    assert!(db.patterns().is_empty());
    sales.delete_one(doc! { "_id": 3 }).run().unwrap();
    db.set_pattern(Pattern::outlier("sales", "customers_purchased"))
        .unwrap();
    assert_eq!(
        expanded_array(&db, "sales", 2, "customers_purchased"),
        buyers(0..120)
    );
    assert_eq!(
        expanded_array(&db, "sales", 1, "customers_purchased"),
        buyers(0..3)
    );
    assert_consistent(&db);
}

#[test]
fn two_policies_of_one_collection_cannot_share_a_main_field() {
    let db = Database::open_in_memory().unwrap();
    db.create_collection("sales").run().unwrap();
    db.set_pattern(Pattern::outlier("sales", "customers_purchased"))
        .unwrap();
    let refused = db
        .set_pattern(Pattern::outlier("sales", "reviewers").overflow_collection("extra_reviewers"))
        .unwrap_err();
    assert_refused_by_policy(&refused, "sales.reviewers", &["'has_extras'"]);
    let refused = db
        .set_pattern(
            Pattern::outlier("sales", "reviewers")
                .overflow_collection("extra_reviewers")
                .flag_field("customers_purchased"),
        )
        .unwrap_err();
    assert_refused_by_policy(&refused, "sales.reviewers", &["'customers_purchased'"]);
    assert_eq!(db.patterns().len(), 1);
}

#[test]
fn an_overflow_collection_holding_unrelated_documents_is_refused() {
    let db = Database::open_in_memory().unwrap();
    db.collection::<Document>("sales")
        .insert_one(doc! { "_id": 1, "customers_purchased": buyers(0..80) })
        .run()
        .unwrap();
    let notes = vec![doc! { "_id": 7, "text": "call the printer" }];
    db.collection::<Document>("notes")
        .insert_many(notes.clone())
        .run()
        .unwrap();
    let refused = db
        .set_pattern(Pattern::outlier("sales", "customers_purchased").overflow_collection("notes"))
        .unwrap_err();
    assert_refused_by_policy(&refused, "sales.customers_purchased", &["'notes'", "_id 7"]);
    assert_eq!(all(&db, "notes"), notes);
    assert!(db.patterns().is_empty());
}

#[test]
fn an_archive_collection_holding_unrelated_documents_is_refused() {
    let db = Database::open_in_memory().unwrap();
    db.collection::<Document>("products")
        .insert_one(doc! { "_id": 1, "reviews": [{ "text": "fine" }] })
        .run()
        .unwrap();
    // Linked to a product that does not exist: not a layout made by hand.
    let notes = vec![
        doc! { "_id": 7, "products_id": 1, "text": "kept" },
        doc! { "_id": 8, "products_id": 99, "text": "unrelated" },
    ];
    db.collection::<Document>("notes")
        .insert_many(notes.clone())
        .run()
        .unwrap();
    let refused = db
        .set_pattern(Pattern::subset("products", "reviews").archive_collection("notes"))
        .unwrap_err();
    assert_refused_by_policy(&refused, "products.reviews", &["'notes'", "_id 8"]);
    assert_eq!(all(&db, "notes"), notes);
    assert!(db.patterns().is_empty());
}

#[test]
fn removing_a_policy_never_drops_a_collection_it_did_not_create() {
    let db = Database::open_in_memory().unwrap();
    let sales = db.collection::<Document>("sales");
    sales
        .insert_one(doc! { "_id": 2, "customers_purchased": buyers(0..50), "has_extras": true })
        .run()
        .unwrap();
    db.collection::<Document>("extra_sales")
        .insert_one(doc! { "book_id": 2, "customers_purchased_extra": buyers(50..70) })
        .run()
        .unwrap();
    db.create_collection("reviews").run().unwrap();
    db.collection::<Document>("products")
        .insert_one(doc! { "_id": 1, "reviews": [{ "text": "fine" }] })
        .run()
        .unwrap();
    db.set_pattern(Pattern::outlier("sales", "customers_purchased").link_field("book_id"))
        .unwrap();
    db.set_pattern(Pattern::subset("products", "reviews"))
        .unwrap();
    db.remove_pattern("sales", "customers_purchased").unwrap();
    db.remove_pattern("products", "reviews").unwrap();
    let names = collection_names(&db);
    assert!(names.contains(&"extra_sales".to_string()), "{names:?}");
    assert!(names.contains(&"reviews".to_string()), "{names:?}");
    assert_eq!(all(&db, "extra_sales"), Vec::<Document>::new());
    assert_eq!(
        all(&db, "sales")[0]
            .get_array("customers_purchased")
            .unwrap(),
        &buyers(0..70)
    );
    // A side collection the policy created is dropped with it.
    db.set_pattern(Pattern::outlier("sales", "customers_purchased").overflow_collection("fresh"))
        .unwrap();
    db.remove_pattern("sales", "customers_purchased").unwrap();
    assert!(!collection_names(&db).contains(&"fresh".to_string()));
}

#[test]
fn a_hand_made_archive_missing_the_embedded_elements_keeps_them() {
    // The subset seed's layout made by hand: the newest review embedded, only the older ones
    // in `reviews`. Adopting it must not lose the embedded one.
    let db = Database::open_in_memory().unwrap();
    db.collection::<Document>("products")
        .insert_one(doc! { "_id": 1, "reviews": [{ "review_id": 3, "day": 3 }] })
        .run()
        .unwrap();
    db.collection::<Document>("reviews")
        .insert_many([
            doc! { "review_id": 2, "day": 2, "product_id": 1 },
            doc! { "review_id": 1, "day": 1, "product_id": 1 },
        ])
        .run()
        .unwrap();
    db.set_pattern(
        Pattern::subset("products", "reviews")
            .keep(1)
            .sort_by(doc! { "day": -1 })
            .link_field("product_id"),
    )
    .unwrap();
    let ids: Vec<i32> = expanded_array(&db, "products", 1, "reviews")
        .iter()
        .map(|review| review.as_document().unwrap().get_i32("review_id").unwrap())
        .collect();
    assert_eq!(ids, vec![3, 2, 1]);
    assert_consistent(&db);
}

// ---------------------------------------------------------------------------------------
// Section 3: writes straight to a side collection.

/// Book 1: main [a, b], buckets [c, d] and [e]; book 2: main [p, q], bucket [r].
fn two_books(db: &Database) {
    db.create_collection("sales").run().unwrap();
    db.set_pattern(
        Pattern::outlier("sales", "customers_purchased")
            .threshold(2)
            .bucket_capacity(2)
            .link_field("book_id"),
    )
    .unwrap();
    db.collection::<Document>("sales")
        .insert_many([
            doc! { "_id": 1, "customers_purchased": strings(&["a", "b", "c", "d", "e"]) },
            doc! { "_id": 2, "customers_purchased": strings(&["p", "q", "r"]) },
        ])
        .run()
        .unwrap();
    assert_eq!(all(db, "extra_sales").len(), 3);
}

#[test]
fn update_many_pushing_into_every_bucket_appends_to_each_bucket_then_resplits() {
    let db = Database::open_in_memory().unwrap();
    two_books(&db);
    let result = db
        .collection::<Document>("extra_sales")
        .update_many(
            doc! {},
            doc! { "$push": { "customers_purchased_extra": "X" } },
        )
        .run()
        .unwrap();
    assert_eq!(result.matched_count, 3);
    assert_eq!(result.modified_count, 3);
    assert_eq!(
        expanded_array(&db, "sales", 1, "customers_purchased"),
        strings(&["a", "b", "c", "d", "X", "e", "X"])
    );
    assert_eq!(
        expanded_array(&db, "sales", 2, "customers_purchased"),
        strings(&["p", "q", "r", "X"])
    );
    assert_consistent(&db);
}

#[test]
fn update_many_unsetting_the_bucket_arrays_is_refused_and_changes_nothing() {
    let db = Database::open_in_memory().unwrap();
    two_books(&db);
    let before = all(&db, "extra_sales");
    let refused = db
        .collection::<Document>("extra_sales")
        .update_many(
            doc! {},
            doc! { "$unset": { "customers_purchased_extra": "" } },
        )
        .run()
        .unwrap_err();
    assert_refused_by_policy(
        &refused,
        "sales.customers_purchased",
        &["'customers_purchased_extra'"],
    );
    assert_eq!(all(&db, "extra_sales"), before);
    assert_eq!(
        expanded_array(&db, "sales", 1, "customers_purchased"),
        strings(&["a", "b", "c", "d", "e"])
    );
    assert_consistent(&db);
}

#[test]
fn delete_many_of_two_buckets_of_one_book_removes_their_elements() {
    let db = Database::open_in_memory().unwrap();
    two_books(&db);
    let result = db
        .collection::<Document>("extra_sales")
        .delete_many(doc! { "book_id": 1 })
        .run()
        .unwrap();
    assert_eq!(result.deleted_count, 2);
    assert_eq!(
        expanded_array(&db, "sales", 1, "customers_purchased"),
        strings(&["a", "b"])
    );
    let stored = db
        .collection::<Document>("sales")
        .find_one(doc! { "_id": 1 })
        .stored(true)
        .run()
        .unwrap()
        .unwrap();
    assert!(!stored.contains_key("has_extras"), "{stored}");
    assert_consistent(&db);
}

#[test]
fn side_documents_that_break_the_overflow_layout_are_refused_at_write_time() {
    let db = Database::open_in_memory().unwrap();
    two_books(&db);
    let before = all(&db, "extra_sales");
    let extra = db.collection::<Document>("extra_sales");
    let cases = [
        (
            doc! { "book_id": 1, "bucket": 2, "customers_purchased_extra": "X" },
            "not an array",
        ),
        (
            doc! { "bucket": 2, "customers_purchased_extra": ["X"] },
            "no link field 'book_id'",
        ),
        (
            doc! { "book_id": 404, "bucket": 0, "customers_purchased_extra": ["X"] },
            "_id 404",
        ),
        (
            doc! { "book_id": 1, "bucket": 2, "customers_purchased_extra": ["X"], "note": 1 },
            "'note'",
        ),
    ];
    for (document, mention) in cases {
        let refused = extra.insert_one(document).run().unwrap_err();
        assert_refused_by_policy(&refused, "sales.customers_purchased", &[mention]);
    }
    assert_eq!(all(&db, "extra_sales"), before);
    assert_consistent(&db);
    // A well-formed one is accepted and lands at the end of the logical array.
    extra
        .insert_one(doc! { "book_id": 2, "bucket": 1, "customers_purchased_extra": ["s"] })
        .run()
        .unwrap();
    assert_eq!(
        expanded_array(&db, "sales", 2, "customers_purchased"),
        strings(&["p", "q", "r", "s"])
    );
    assert_consistent(&db);
}

#[test]
fn archive_documents_without_a_live_link_are_refused_at_write_time() {
    let db = Database::open_in_memory().unwrap();
    db.create_collection("products").run().unwrap();
    db.set_pattern(Pattern::subset("products", "reviews").link_field("product_id"))
        .unwrap();
    db.collection::<Document>("products")
        .insert_one(doc! { "_id": 1, "reviews": [{ "text": "fine" }] })
        .run()
        .unwrap();
    let reviews = db.collection::<Document>("reviews");
    let refused = reviews
        .insert_one(doc! { "text": "lost" })
        .run()
        .unwrap_err();
    assert_refused_by_policy(
        &refused,
        "products.reviews",
        &["no link field 'product_id'"],
    );
    let refused = reviews
        .insert_one(doc! { "text": "lost", "product_id": 404 })
        .run()
        .unwrap_err();
    assert_refused_by_policy(&refused, "products.reviews", &["_id 404"]);
    let refused = reviews
        .update_many(doc! {}, doc! { "$unset": { "product_id": "" } })
        .run()
        .unwrap_err();
    assert_refused_by_policy(
        &refused,
        "products.reviews",
        &["no link field 'product_id'"],
    );
    assert_eq!(all(&db, "reviews").len(), 1);
    reviews
        .insert_one(doc! { "text": "great", "product_id": 1 })
        .run()
        .unwrap();
    assert_eq!(expanded_array(&db, "products", 1, "reviews").len(), 2);
    assert_consistent(&db);
}

// ---------------------------------------------------------------------------------------
// Section 4: unique indexes on the pattern path.

#[test]
fn unique_indexes_of_a_collection_with_policies_see_the_statement_s_final_state() {
    let db = Database::open_in_memory().unwrap();
    let sales = db.collection::<Document>("sales");
    sales
        .insert_many((1..=5).map(
            |n| doc! { "_id": n, "rank": n, "customers_purchased": buyers(0..(n as usize * 2)) },
        ))
        .run()
        .unwrap();
    sales
        .create_index(IndexModel {
            keys: doc! { "rank": 1 },
            options: Some(
                IndexOptions::builder()
                    .unique(true)
                    .name("rank_unique")
                    .build(),
            ),
        })
        .run()
        .unwrap();
    db.set_pattern(
        Pattern::outlier("sales", "customers_purchased")
            .threshold(3)
            .bucket_capacity(2),
    )
    .unwrap();
    let result = sales
        .update_many(doc! {}, doc! { "$inc": { "rank": 1 } })
        .run()
        .unwrap();
    assert_eq!(result.modified_count, 5);
    let ranks: Vec<i32> = all(&db, "sales")
        .iter()
        .map(|book| book.get_i32("rank").unwrap())
        .collect();
    assert_eq!(ranks, vec![2, 3, 4, 5, 6]);
    // A statement whose final state does have a duplicate is refused whole.
    let before = all(&db, "sales");
    let refused = sales
        .update_many(
            doc! { "_id": { "$gte": 4 } },
            doc! { "$set": { "rank": 9 }, "$push": { "customers_purchased": "late" } },
        )
        .run()
        .unwrap_err();
    assert!(refused.is_duplicate_key(), "{refused}");
    assert_eq!(all(&db, "sales"), before);
    assert_consistent(&db);
}
