//! A pipeline gives the same result on a collection with a pattern policy as on the same
//! logical documents stored plainly: the property the facade's pattern-aware execution
//! (expanding only what a pipeline reads, `$storedDocuments` aside) must keep.
//!
//! Generated: books whose `buyers` arrays straddle the outlier threshold and bucket
//! boundaries, products whose `reviews` straddle the subset's `keep`, then writes through
//! the policies (pushes, pulls, deletes), and one pipeline per case from a generated set.

use bson::{Bson, Document, doc};
use proptest::prelude::*;
use spillway::{Collection, Database, Pattern};

const THRESHOLD: usize = 4;
const BUCKET: usize = 3;
const KEEP: usize = 3;

fn book(id: i64, buyers: &[u8]) -> Document {
    doc! {
        "_id": id,
        "title": format!("book {id}"),
        "author": format!("author {}", id % 3),
        "buyers": buyers.iter().map(|b| Bson::String(format!("u{b}"))).collect::<Vec<_>>(),
    }
}

/// Reviews newest first (the subset's order: `k` descending).
fn product(id: i64, ratings: &[u8]) -> Document {
    let count = ratings.len() as i64;
    doc! {
        "_id": id,
        "name": format!("product {id}"),
        "reviews": ratings
            .iter()
            .enumerate()
            .map(|(position, rating)| Bson::Document(doc! {
                "k": count - position as i64,
                "stars": i32::from(*rating % 5) + 1,
            }))
            .collect::<Vec<_>>(),
    }
}

fn patterned() -> Database {
    let db = Database::open_in_memory().unwrap();
    db.create_collection("books").run().unwrap();
    db.create_collection("products").run().unwrap();
    db.set_pattern(
        Pattern::outlier("books", "buyers")
            .threshold(THRESHOLD)
            .bucket_capacity(BUCKET),
    )
    .unwrap();
    db.set_pattern(
        Pattern::subset("products", "reviews")
            .keep(KEEP)
            .sort_by(doc! { "k": -1 })
            .archive_collection("archived_reviews")
            .link_field("product_id"),
    )
    .unwrap();
    db
}

/// The pipelines, each sorted at the end where its order is not defined.
fn pipelines(user: u8, n: i64) -> Vec<(&'static str, Vec<Document>)> {
    let user = format!("u{user}");
    vec![
        (
            "books",
            vec![
                doc! { "$project": { "n": { "$size": "$buyers" } } },
                doc! { "$sort": { "_id": 1 } },
            ],
        ),
        (
            "books",
            vec![
                doc! { "$unwind": "$buyers" },
                doc! { "$group": { "_id": "$buyers", "times": { "$sum": 1 } } },
                doc! { "$sort": { "_id": 1 } },
            ],
        ),
        (
            "books",
            vec![
                doc! { "$match": { "buyers": &user } },
                doc! { "$project": { "title": 1 } },
                doc! { "$sort": { "_id": 1 } },
            ],
        ),
        (
            "books",
            vec![
                doc! { "$project": { "last": { "$slice": ["$buyers", -2] }, "first": { "$arrayElemAt": ["$buyers", 0] } } },
                doc! { "$sort": { "_id": 1 } },
            ],
        ),
        (
            "books",
            vec![
                doc! { "$unwind": { "path": "$buyers", "includeArrayIndex": "position" } },
                doc! { "$match": { "position": { "$gte": n } } },
                doc! { "$count": "late" },
            ],
        ),
        (
            "books",
            vec![
                doc! { "$group": { "_id": "$author", "buyers": { "$sum": { "$size": "$buyers" } }, "titles": { "$push": "$title" } } },
                doc! { "$sort": { "_id": 1 } },
            ],
        ),
        (
            "books",
            vec![doc! { "$sort": { "_id": -1 } }, doc! { "$limit": n }],
        ),
        ("books", vec![doc! { "$match": { "author": "author 1" } }]),
        (
            "books",
            vec![
                doc! { "$project": { "title": 1, "author": 1 } },
                doc! { "$sort": { "_id": 1 } },
            ],
        ),
        (
            "products",
            vec![
                doc! { "$unwind": "$reviews" },
                doc! { "$group": { "_id": "$_id", "stars": { "$avg": "$reviews.stars" }, "count": { "$sum": 1 } } },
                doc! { "$sort": { "_id": 1 } },
            ],
        ),
        (
            "products",
            vec![
                doc! { "$project": { "top": { "$slice": ["$reviews", 2] }, "n": { "$size": "$reviews" } } },
                doc! { "$sort": { "_id": 1 } },
            ],
        ),
        (
            "products",
            vec![
                doc! { "$match": { "reviews.stars": 5 } },
                doc! { "$lookup": { "from": "books", "localField": "_id", "foreignField": "_id", "as": "book" } },
                doc! { "$sort": { "_id": 1 } },
            ],
        ),
        (
            "books",
            vec![
                doc! { "$unionWith": { "coll": "products", "pipeline": [ { "$project": { "title": "$name", "buyers": "$reviews.stars" } } ] } },
                doc! { "$sort": { "_id": 1, "title": 1 } },
            ],
        ),
    ]
}

fn run(collection: &Collection<Document>, pipeline: &[Document]) -> Result<Vec<Document>, String> {
    collection
        .aggregate(pipeline.to_vec())
        .run()
        .map_err(|error| error.to_string())?
        .collect::<Result<Vec<_>, _>>()
        .map_err(|error| error.to_string())
}

#[derive(Debug, Clone)]
enum Write {
    Push { book: i64, user: u8 },
    Pull { book: i64, user: u8 },
    Review { product: i64, stars: u8 },
    DeleteBook { book: i64 },
}

fn write_strategy(books: i64, products: i64) -> impl Strategy<Value = Write> {
    prop_oneof![
        (0..books, 0..8u8).prop_map(|(book, user)| Write::Push { book, user }),
        (0..books, 0..8u8).prop_map(|(book, user)| Write::Pull { book, user }),
        (0..products, 0..5u8).prop_map(|(product, stars)| Write::Review { product, stars }),
        (0..books).prop_map(|book| Write::DeleteBook { book }),
    ]
}

fn apply(db: &Database, write: &Write, next_k: i64) {
    let books = db.collection::<Document>("books");
    let products = db.collection::<Document>("products");
    match write {
        Write::Push { book, user } => {
            books
                .update_one(
                    doc! { "_id": book },
                    doc! { "$push": { "buyers": format!("u{user}") } },
                )
                .run()
                .unwrap();
        }
        Write::Pull { book, user } => {
            books
                .update_one(
                    doc! { "_id": book },
                    doc! { "$pull": { "buyers": format!("u{user}") } },
                )
                .run()
                .unwrap();
        }
        Write::Review { product, stars } => {
            // A newer review goes first in the subset's order: `$position: 0`.
            products
                .update_one(
                    doc! { "_id": product },
                    doc! { "$push": { "reviews": { "$each": [{ "k": next_k, "stars": i32::from(*stars) + 1 }], "$position": 0 } } },
                )
                .run()
                .unwrap();
        }
        Write::DeleteBook { book } => {
            books.delete_one(doc! { "_id": book }).run().unwrap();
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn a_pipeline_sees_the_same_logical_documents_with_and_without_a_policy(
        books in prop::collection::vec(prop::collection::vec(0..8u8, 0..12), 1..6),
        products in prop::collection::vec(prop::collection::vec(0..5u8, 0..8), 1..4),
        writes in prop::collection::vec(write_strategy(6, 4), 0..10),
        which in 0..13usize,
        user in 0..8u8,
        n in 1..6i64,
    ) {
        let with_policy = patterned();
        let plain = Database::open_in_memory().unwrap();
        for db in [&with_policy, &plain] {
            let books_collection = db.collection::<Document>("books");
            for (id, buyers) in books.iter().enumerate() {
                books_collection.insert_one(book(id as i64, buyers)).run().unwrap();
            }
            let products_collection = db.collection::<Document>("products");
            for (id, ratings) in products.iter().enumerate() {
                products_collection.insert_one(product(id as i64, ratings)).run().unwrap();
            }
            for (position, write) in writes.iter().enumerate() {
                apply(db, write, 100 + position as i64);
            }
        }
        let (collection, pipeline) = &pipelines(user, n)[which];
        let expected = run(&plain.collection(collection), pipeline);
        let actual = run(&with_policy.collection(collection), pipeline);
        prop_assert!(expected.is_ok(), "{pipeline:?} failed without a policy: {expected:?}");
        prop_assert_eq!(actual, expected, "pipeline {:?}", pipeline);
    }
}

#[test]
fn stored_documents_stage_reads_the_main_documents_as_stored() {
    let db = patterned();
    let books = db.collection::<Document>("books");
    books
        .insert_one(book(1, &[1, 2, 3, 4, 5, 6, 7]))
        .run()
        .unwrap();
    let logical = run(
        &books,
        &[doc! { "$project": { "n": { "$size": "$buyers" } } }],
    )
    .unwrap();
    assert_eq!(logical, vec![doc! { "_id": 1_i64, "n": 7 }]);
    let stored = run(
        &books,
        &[
            doc! { "$storedDocuments": {} },
            doc! { "$project": { "n": { "$size": "$buyers" }, "has_extras": 1 } },
        ],
    )
    .unwrap();
    assert_eq!(
        stored,
        vec![doc! { "_id": 1_i64, "has_extras": true, "n": THRESHOLD as i32 }]
    );
    let misplaced = books
        .aggregate([doc! { "$match": {} }, doc! { "$storedDocuments": {} }])
        .run()
        .unwrap_err();
    assert!(
        misplaced
            .to_string()
            .contains("only valid as the first stage"),
        "{misplaced}"
    );
}
