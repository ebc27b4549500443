//! Snapshots of `explain` output: they guard which plan the planner chooses and what it
//! examines. Update with `INSTA_UPDATE=always cargo test -p spillway --test integration
//! explain::`, then review the `.snap` files.

use spillway::bson::Document;
use spillway::{Database, IndexModel, IndexOptions, doc};

fn database() -> Database {
    let db = Database::open_in_memory().unwrap();
    let sales = db.collection::<Document>("sales");
    let stores = ["north", "south", "east", "west"];
    let documents = (0..40).map(|i| {
        let store = stores[i as usize % 4];
        doc! {
            "_id": i,
            "store": store,
            "qty": i % 10,
            "price": f64::from(i) * 1.5,
            "tags": [format!("t{}", i % 3), format!("t{}", i % 5)],
            "item": { "sku": format!("sku-{:02}", i % 8) },
        }
    });
    sales.insert_many(documents).run().unwrap();
    for (keys, unique) in [
        (doc! { "qty": 1 }, false),
        (doc! { "store": 1, "qty": -1 }, false),
        (doc! { "tags": 1 }, false),
        (doc! { "item.sku": 1, "_id": 1 }, true),
    ] {
        sales
            .create_index(IndexModel {
                keys,
                options: Some(IndexOptions {
                    unique: Some(unique),
                    name: None,
                    ..Default::default()
                }),
            })
            .run()
            .unwrap();
    }
    db
}

fn explain(filter: Document, sort: Option<Document>, limit: i64) -> spillway::Explain {
    let db = database();
    let sales = db.collection::<Document>("sales");
    let mut find = sales.find(filter.clone()).limit(limit);
    if let Some(sort) = sort.clone() {
        find = find.sort(sort);
    }
    let explained = find.explain().unwrap();
    // The explained query returns what the query returns.
    let mut find = sales.find(filter).limit(limit);
    if let Some(sort) = sort {
        find = find.sort(sort);
    }
    assert_eq!(explained.n_returned, find.run().unwrap().count() as u64);
    explained
}

#[test]
fn id_point_lookups_use_idhack() {
    insta::assert_json_snapshot!("idhack_eq", explain(doc! { "_id": 7 }, None, 0));
    insta::assert_json_snapshot!(
        "idhack_in_sorted_descending",
        explain(
            doc! { "_id": { "$in": [3, 1, 99] } },
            Some(doc! { "_id": -1 }),
            0
        )
    );
}

#[test]
fn equality_range_and_in_use_an_index_scan() {
    insta::assert_json_snapshot!("ixscan_eq", explain(doc! { "qty": 3 }, None, 0));
    insta::assert_json_snapshot!(
        "ixscan_range",
        explain(doc! { "qty": { "$gt": 2, "$lte": 4 } }, None, 0)
    );
    insta::assert_json_snapshot!(
        "ixscan_in",
        explain(doc! { "qty": { "$in": [9, 1] } }, None, 0)
    );
}

#[test]
fn compound_indexes_take_equality_prefixes_and_ranges() {
    insta::assert_json_snapshot!(
        "ixscan_compound_prefix",
        explain(doc! { "store": "east" }, None, 0)
    );
    insta::assert_json_snapshot!(
        "ixscan_compound_eq_and_range",
        explain(doc! { "store": "east", "qty": { "$lt": 5 } }, None, 0)
    );
}

#[test]
fn an_index_provides_the_sort_order() {
    insta::assert_json_snapshot!(
        "sort_by_index_backward",
        explain(doc! {}, Some(doc! { "qty": -1 }), 5)
    );
    insta::assert_json_snapshot!(
        "sort_by_compound_after_equality",
        explain(doc! { "store": "north" }, Some(doc! { "qty": 1 }), 0)
    );
    insta::assert_json_snapshot!(
        "sort_in_memory",
        explain(doc! { "qty": 3 }, Some(doc! { "price": -1 }), 0)
    );
}

#[test]
fn unusable_predicates_fall_back_to_a_collection_scan() {
    insta::assert_json_snapshot!(
        "collscan_unindexed",
        explain(doc! { "price": { "$gt": 30 } }, None, 0)
    );
    insta::assert_json_snapshot!(
        "collscan_or_and_null",
        explain(doc! { "$or": [{ "qty": 1 }, { "qty": null }] }, None, 0)
    );
    insta::assert_json_snapshot!(
        "collscan_sorted_by_id",
        explain(doc! { "price": { "$lt": 6 } }, Some(doc! { "_id": -1 }), 0)
    );
    insta::assert_json_snapshot!(
        "eof_missing_collection",
        Database::open_in_memory()
            .unwrap()
            .collection::<Document>("nothing")
            .find(doc! { "a": 1 })
            .explain()
            .unwrap()
    );
}

#[test]
fn multikey_indexes_dedupe_and_do_not_intersect_ranges() {
    insta::assert_json_snapshot!(
        "multikey_in",
        explain(doc! { "tags": { "$in": ["t0", "t1"] } }, None, 0)
    );
    insta::assert_json_snapshot!(
        "multikey_range_one_bound",
        explain(doc! { "tags": { "$gte": "t1", "$lt": "t2" } }, None, 0)
    );
    insta::assert_json_snapshot!(
        "unique_compound_dotted_prefix",
        explain(doc! { "item.sku": "sku-03" }, None, 0)
    );
    insta::assert_json_snapshot!(
        "dotted_prefix_sorted",
        explain(
            doc! { "item.sku": { "$gte": "sku-06" } },
            Some(doc! { "item.sku": 1 }),
            0
        )
    );
}

/// A skip over an index scan whose entries are exactly the matches (equalities on the
/// index's leading fields, an index with one entry per document) passes over the skipped
/// entries without reading their documents, through `find` (the cursor) and `explain` (a
/// query run to completion) alike; any other filter still reads each skipped document. Both
/// return what a collection scan returns.
#[test]
fn a_skip_over_an_exact_index_scan_reads_no_skipped_document() {
    use spillway::bson::Bson;

    let db = Database::open_in_memory().unwrap();
    let reviews = db.collection::<Document>("reviews");
    let documents =
        (0..600).map(|i| doc! { "_id": i, "product": i % 3, "at": 600 - i, "stars": i % 5 });
    reviews.insert_many(documents).run().unwrap();
    reviews
        .create_index(IndexModel {
            keys: doc! { "product": 1, "at": -1 },
            options: None,
        })
        .run()
        .unwrap();
    let page = |filter: Document, skip: u64, hint: Option<Document>| -> Vec<Bson> {
        let mut find = reviews
            .find(filter)
            .sort(doc! { "product": 1, "at": -1 })
            .skip(skip)
            .limit(10);
        if let Some(hint) = hint {
            find = find.hint(spillway::Hint::Keys(hint));
        }
        find.run()
            .unwrap()
            .map(|review| review.unwrap().get("_id").cloned().unwrap())
            .collect()
    };
    let explained = |filter: Document, skip: u64| {
        reviews
            .find(filter)
            .sort(doc! { "product": 1, "at": -1 })
            .skip(skip)
            .limit(10)
            .explain()
            .unwrap()
    };
    for (filter, exact) in [
        (doc! { "product": 1 }, true),
        (doc! { "product": 1_i64, "at": { "$lte": 1000 } }, false),
        (doc! { "product": 1.0, "stars": { "$gte": 0 } }, false),
        (doc! { "product": { "$in": [1] } }, false),
    ] {
        for skip in [0, 1, 9, 10, 190, 199, 200, 250] {
            let expected = page(filter.clone(), skip, Some(doc! { "$natural": 1 }));
            assert_eq!(
                page(filter.clone(), skip, None),
                expected,
                "{filter} skip {skip}"
            );
            let explain = explained(filter.clone(), skip);
            assert_eq!(explain.n_returned, expected.len() as u64);
            let skipped = skip.min(200);
            let read = if exact {
                expected.len() as u64
            } else {
                skipped + expected.len() as u64
            };
            assert_eq!(explain.docs_examined, read, "{filter} skip {skip}");
        }
    }
}
