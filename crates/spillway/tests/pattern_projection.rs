//! Projections of a managed array in a plain `find` answer on the logical array: `$slice`
//! (both forms, negative too), `$elemMatch` and the positional `field.$`, on an outlier and
//! a subset policy, compared with the same projection applied by `MemoryCollection` (no
//! policy) to the logical documents. A window that is exactly the stored main array
//! (`$slice: 50`, the threshold, on the split book) is copied from it whole.

use spillway::bson::{Bson, Document, doc};
use spillway::{Database, Pattern};
use spillway_doc::model::{FindOptions, MemoryCollection};

/// A book of 300 buyers (threshold 50, buckets of 20), one of 30 (not split), and a product
/// of 40 reviews (keep 5, newest `k` first); and the model holding the logical documents.
fn setup() -> (Database, MemoryCollection, MemoryCollection) {
    let db = Database::open_in_memory().unwrap();
    db.create_collection("books").run().unwrap();
    db.create_collection("products").run().unwrap();
    db.set_pattern(
        Pattern::outlier("books", "buyers")
            .threshold(50)
            .bucket_capacity(20)
            .link_field("book_id"),
    )
    .unwrap();
    db.set_pattern(
        Pattern::subset("products", "reviews")
            .keep(5)
            .sort_by(doc! { "k": -1 })
            .link_field("product_id"),
    )
    .unwrap();
    let mut books = MemoryCollection::new();
    for (id, count) in [(1, 300), (2, 30)] {
        let buyers: Vec<Bson> = (0..count)
            .map(|n| Bson::String(format!("b{n:03}")))
            .collect();
        let book = doc! { "_id": id, "title": format!("book {id}"), "buyers": buyers };
        db.collection::<Document>("books")
            .insert_one(book.clone())
            .run()
            .unwrap();
        books.insert_one(book).unwrap();
    }
    let reviews: Vec<Bson> = (0..40)
        .rev()
        .map(|k| Bson::Document(doc! { "k": k, "stars": k % 5 }))
        .collect();
    let product = doc! { "_id": 1, "name": "widget", "reviews": reviews };
    db.collection::<Document>("products")
        .insert_one(product.clone())
        .run()
        .unwrap();
    let mut products = MemoryCollection::new();
    products.insert_one(product).unwrap();
    (db, books, products)
}

fn ours(
    db: &Database,
    collection: &str,
    filter: &Document,
    projection: &Document,
) -> Vec<Document> {
    db.collection::<Document>(collection)
        .find(filter.clone())
        .projection(projection.clone())
        .run()
        .unwrap()
        .map(|document| {
            let mut document = document.unwrap();
            document.remove("has_extras");
            document
        })
        .collect()
}

fn model(model: &MemoryCollection, filter: &Document, projection: &Document) -> Vec<Document> {
    let options = FindOptions {
        sort: Some(doc! { "_id": 1 }),
        projection: Some(projection.clone()),
        ..FindOptions::default()
    };
    model.find(filter, &options).unwrap()
}

#[test]
fn slice_in_both_forms_reads_the_logical_array() {
    let (db, books, products) = setup();
    let mut slices: Vec<Bson> = (-330..=330).step_by(29).map(Bson::Int32).collect();
    for skip in (-320..=320).step_by(37) {
        for limit in [1, 5, 60, 400] {
            slices.push(Bson::Array(vec![Bson::Int32(skip), Bson::Int32(limit)]));
        }
    }
    slices.extend([Bson::Int32(-2), Bson::Int32(2), Bson::Int32(0)]);
    // The threshold and the subset's `keep`: the whole stored array, and one more.
    for count in [5, 6, 49, 50, 51] {
        slices.push(Bson::Int32(count));
        slices.push(Bson::Array(vec![Bson::Int32(0), Bson::Int32(count)]));
    }
    for slice in slices {
        for projection in [
            doc! { "buyers": { "$slice": slice.clone() } },
            doc! { "title": 1, "buyers": { "$slice": slice.clone() } },
        ] {
            assert_eq!(
                ours(&db, "books", &doc! {}, &projection),
                model(&books, &doc! {}, &projection),
                "{projection}"
            );
        }
        let projection = doc! { "reviews": { "$slice": slice.clone() } };
        assert_eq!(
            ours(&db, "products", &doc! {}, &projection),
            model(&products, &doc! {}, &projection),
            "{projection}"
        );
    }
}

#[test]
fn the_last_two_buyers_are_the_last_two_of_three_hundred() {
    let (db, _, _) = setup();
    let last = ours(
        &db,
        "books",
        &doc! { "_id": 1 },
        &doc! { "buyers": { "$slice": -2 } },
    );
    assert_eq!(
        last[0].get_array("buyers").unwrap(),
        &vec![Bson::String("b298".into()), Bson::String("b299".into())]
    );
}

#[test]
fn elem_match_finds_the_element_in_the_main_part_a_bucket_or_nowhere() {
    let (db, books, products) = setup();
    for projection in [
        doc! { "buyers": { "$elemMatch": { "$eq": "b010" } } },
        doc! { "buyers": { "$elemMatch": { "$eq": "b250" } } },
        doc! { "buyers": { "$elemMatch": { "$gte": "b120" } } },
        doc! { "buyers": { "$elemMatch": { "$eq": "nobody" } } },
        doc! { "title": 1, "buyers": { "$elemMatch": { "$eq": "b299" } } },
    ] {
        assert_eq!(
            ours(&db, "books", &doc! {}, &projection),
            model(&books, &doc! {}, &projection),
            "{projection}"
        );
    }
    for projection in [
        doc! { "reviews": { "$elemMatch": { "k": 38 } } },
        doc! { "reviews": { "$elemMatch": { "k": 3 } } },
        doc! { "reviews": { "$elemMatch": { "stars": 4, "k": { "$lt": 20 } } } },
        doc! { "reviews": { "$elemMatch": { "k": 99 } } },
    ] {
        assert_eq!(
            ours(&db, "products", &doc! {}, &projection),
            model(&products, &doc! {}, &projection),
            "{projection}"
        );
    }
}

#[test]
fn positional_projection_returns_the_element_the_query_matched_in_a_bucket() {
    let (db, books, products) = setup();
    for buyer in ["b007", "b120", "b299"] {
        let filter = doc! { "buyers": buyer };
        let projection = doc! { "buyers.$": 1 };
        let found = ours(&db, "books", &filter, &projection);
        assert_eq!(found, model(&books, &filter, &projection), "{filter}");
        assert_eq!(
            found[0].get_array("buyers").unwrap(),
            &vec![Bson::String(buyer.into())]
        );
    }
    let filter = doc! { "reviews.k": 2 };
    let projection = doc! { "reviews.$": 1 };
    assert_eq!(
        ours(&db, "products", &filter, &projection),
        model(&products, &filter, &projection)
    );
}

#[test]
fn other_projections_answer_on_the_logical_document_and_the_stored_layout_on_request() {
    let (db, _, _) = setup();
    let books = db.collection::<Document>("books");
    let first = |find: spillway::Find<'_, Document>| -> Document {
        find.run().unwrap().next().unwrap().unwrap()
    };
    let logical_len = books.array_len(1, "buyers").unwrap().unwrap() as usize;
    assert!(logical_len > 50, "book 1 overflows");
    let whole = first(
        books
            .find(doc! { "_id": 1 })
            .projection(doc! { "buyers": 1 }),
    );
    assert_eq!(
        whole.get_array("buyers").unwrap().len(),
        logical_len,
        "including the managed field gives the whole logical array"
    );
    let stored = first(
        books
            .find(doc! { "_id": 1 })
            .projection(doc! { "buyers": 1 })
            .stored(true),
    );
    assert_eq!(
        stored.get_array("buyers").unwrap().len(),
        50,
        "the stored layout holds the main part"
    );
    let sliced = first(
        books
            .find(doc! { "_id": 1 })
            .projection(doc! { "buyers": { "$slice": 1 } }),
    );
    assert_eq!(sliced.get("has_extras"), None, "no flag in a logical read");
    assert_eq!(sliced.get("title"), Some(&Bson::String("book 1".into())));
    let without = first(
        books
            .find(doc! { "_id": 1 })
            .projection(doc! { "buyers": 0 }),
    );
    assert_eq!(without.get("has_extras"), None, "{without}");
    assert_eq!(without.get("buyers"), None, "{without}");
}
