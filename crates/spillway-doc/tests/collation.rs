//! The update operators, expressions and stages that compare values, under a collation: each
//! case runs twice, under `{ locale: "en", strength: 2 }` (case-insensitive) and under the
//! simple collation (code points: `"B" < "a"`), and both answers are asserted, so a case
//! fails when the collation does not reach the comparison.

#![cfg(feature = "collation")]
#![allow(
    clippy::needless_pass_by_value,
    reason = "one-line cases read best with owned `doc!` arguments"
)]

use std::sync::Arc;

use bson::{Bson, DateTime, Document, bson, doc};
use spillway_doc::collation::Collation;
use spillway_doc::expr::{Expression, Variables};
use spillway_doc::pipeline::{Pipeline, PipelineOptions, Source, run};
use spillway_doc::update::{ApplyContext, Update};

fn case_insensitive() -> Collation {
    Collation::parse(&doc! { "locale": "en", "strength": 2 }).expect("a valid collation")
}

/// `update` (with `array_filters`) applied to `document` under `collation`.
fn updated(
    document: Document,
    update: &Document,
    array_filters: &[Document],
    collation: &Collation,
) -> Document {
    let mut document = document;
    Update::parse(update, array_filters)
        .expect("a valid update")
        .collated(collation)
        .apply(&mut document, &ApplyContext::new(DateTime::from_millis(0)))
        .unwrap_or_else(|error| panic!("{update} failed: {error}"));
    document
}

/// Checks `update` on `document`: `folded` under the case-insensitive collation, `simple`
/// under the simple one.
#[track_caller]
fn check_update(document: Document, update: Document, folded: Document, simple: Document) {
    check_update_filtered(document, update, &[], folded, simple);
}

#[track_caller]
fn check_update_filtered(
    document: Document,
    update: Document,
    array_filters: &[Document],
    folded: Document,
    simple: Document,
) {
    let under_collation = updated(
        document.clone(),
        &update,
        array_filters,
        &case_insensitive(),
    );
    assert_eq!(under_collation, folded, "{update} under the collation");
    let by_code_point = updated(document, &update, array_filters, &Collation::simple());
    assert_eq!(by_code_point, simple, "{update} by code point");
}

#[test]
fn update_operators_compare_strings_under_the_collation() {
    // $addToSet adds nothing equal under the collation, $each's values included.
    check_update(
        doc! { "tags": ["a"] },
        doc! { "$addToSet": { "tags": "A" } },
        doc! { "tags": ["a"] },
        doc! { "tags": ["a", "A"] },
    );
    check_update(
        doc! { "tags": ["a"] },
        doc! { "$addToSet": { "tags": { "$each": ["B", "b", "A"] } } },
        doc! { "tags": ["a", "B"] },
        doc! { "tags": ["a", "B", "b", "A"] },
    );
    // Inside documents and arrays too.
    check_update(
        doc! { "pairs": [{ "k": "x" }] },
        doc! { "$addToSet": { "pairs": { "k": "X" } } },
        doc! { "pairs": [{ "k": "x" }] },
        doc! { "pairs": [{ "k": "x" }, { "k": "X" }] },
    );
    // $pull: a value, a condition, a query on element documents.
    check_update(
        doc! { "tags": ["a", "b", "A"] },
        doc! { "$pull": { "tags": "A" } },
        doc! { "tags": ["b"] },
        doc! { "tags": ["a", "b"] },
    );
    check_update(
        doc! { "tags": ["a", "B", "c"] },
        doc! { "$pull": { "tags": { "$lt": "b" } } },
        doc! { "tags": ["B", "c"] },
        doc! { "tags": ["c"] },
    );
    check_update(
        doc! { "items": [{ "name": "Pen" }, { "name": "ink" }] },
        doc! { "$pull": { "items": { "name": "pen" } } },
        doc! { "items": [{ "name": "ink" }] },
        doc! { "items": [{ "name": "Pen" }, { "name": "ink" }] },
    );
    check_update(
        doc! { "tags": ["a", "b", "C"] },
        doc! { "$pullAll": { "tags": ["A", "c"] } },
        doc! { "tags": ["b"] },
        doc! { "tags": ["a", "b", "C"] },
    );
    // $max/$min: "B" is above "a" in English, below it by code point; equal is no change.
    check_update(
        doc! { "name": "a" },
        doc! { "$max": { "name": "B" } },
        doc! { "name": "B" },
        doc! { "name": "a" },
    );
    check_update(
        doc! { "name": "a" },
        doc! { "$min": { "name": "B" } },
        doc! { "name": "a" },
        doc! { "name": "B" },
    );
    check_update(
        doc! { "name": "a" },
        doc! { "$max": { "name": "A" } },
        doc! { "name": "a" },
        doc! { "name": "a" },
    );
    // $push's $sort, whole elements and by fields.
    check_update(
        doc! { "tags": ["b", "C", "a"] },
        doc! { "$push": { "tags": { "$each": [], "$sort": 1 } } },
        doc! { "tags": ["a", "b", "C"] },
        doc! { "tags": ["C", "a", "b"] },
    );
    check_update(
        doc! { "items": [{ "n": "b" }, { "n": "C" }, { "n": "a" }] },
        doc! { "$push": { "items": { "$each": [], "$sort": { "n": -1 } } } },
        doc! { "items": [{ "n": "C" }, { "n": "b" }, { "n": "a" }] },
        doc! { "items": [{ "n": "b" }, { "n": "a" }, { "n": "C" }] },
    );
}

#[test]
fn array_filters_match_under_the_update_collation() {
    check_update_filtered(
        doc! { "grades": [{ "who": "Ann", "n": 1 }, { "who": "bob", "n": 2 }] },
        doc! { "$set": { "grades.$[g].n": 0 } },
        &[doc! { "g.who": "ann" }],
        doc! { "grades": [{ "who": "Ann", "n": 0 }, { "who": "bob", "n": 2 }] },
        doc! { "grades": [{ "who": "Ann", "n": 1 }, { "who": "bob", "n": 2 }] },
    );
}

#[test]
fn pipeline_updates_compare_under_the_collation() {
    let stages = [doc! { "$set": { "same": { "$eq": ["$name", "ANN"] } } }];
    let update = Update::parse_pipeline(&stages).expect("a valid pipeline");
    let context = ApplyContext::new(DateTime::from_millis(0));
    let mut document = doc! { "name": "ann" };
    update
        .clone()
        .collated(&case_insensitive())
        .apply(&mut document, &context)
        .expect("applies");
    assert_eq!(document, doc! { "name": "ann", "same": true });
    let mut document = doc! { "name": "ann" };
    update.apply(&mut document, &context).expect("applies");
    assert_eq!(document, doc! { "name": "ann", "same": false });
}

/// `expression` evaluated on an empty document under `collation`.
fn evaluated(expression: &Bson, collation: &Collation) -> Bson {
    let variables = Variables {
        collation: collation.clone(),
        ..Variables::default()
    };
    Expression::parse(expression)
        .and_then(|parsed| parsed.evaluate(&Document::new(), &variables))
        .unwrap_or_else(|error| panic!("{expression}: {error}"))
        .unwrap_or(Bson::Null)
}

#[track_caller]
fn check_expression(expression: Bson, folded: Bson, simple: Bson) {
    assert_eq!(
        evaluated(&expression, &case_insensitive()),
        folded,
        "{expression} under the collation"
    );
    assert_eq!(
        evaluated(&expression, &Collation::simple()),
        simple,
        "{expression} by code point"
    );
}

#[test]
fn array_and_set_expressions_compare_under_the_collation() {
    check_expression(
        bson!({ "$indexOfArray": [["a", "b"], "B"] }),
        bson!(1),
        bson!(-1),
    );
    check_expression(
        bson!({ "$in": ["A", ["a", "b"]] }),
        bson!(true),
        bson!(false),
    );
    check_expression(
        bson!({ "$setUnion": [["a", "b"], ["B", "c"]] }),
        bson!(["a", "b", "c"]),
        bson!(["a", "b", "B", "c"]),
    );
    check_expression(
        bson!({ "$setIntersection": [["a", "b"], ["B", "c"]] }),
        bson!(["b"]),
        bson!([]),
    );
    check_expression(
        bson!({ "$setDifference": [["a", "b", "A"], ["B"]] }),
        bson!(["a"]),
        bson!(["a", "b", "A"]),
    );
    check_expression(
        bson!({ "$setEquals": [["a", "b"], ["B", "A", "a"]] }),
        bson!(true),
        bson!(false),
    );
    check_expression(
        bson!({ "$setIsSubset": [["A"], ["a", "b"]] }),
        bson!(true),
        bson!(false),
    );
    check_expression(bson!({ "$max": ["a", "B"] }), bson!("B"), bson!("a"));
    check_expression(bson!({ "$min": [["a", "B"]] }), bson!("a"), bson!("B"));
}

/// No other collection: these pipelines read only their input.
struct NoCollections;

impl Source for NoCollections {
    fn documents(
        &self,
        collection: &str,
        _filter: &Document,
    ) -> spillway_doc::Result<Box<dyn Iterator<Item = spillway_doc::Result<Document>> + '_>> {
        panic!("no collection '{collection}' here")
    }
}

/// `stages` run on `input` under `collation`.
fn aggregated(
    stages: &[Document],
    input: &[Document],
    collation: &Collation,
) -> spillway_doc::Result<Vec<Document>> {
    let options = PipelineOptions {
        collation: collation.clone(),
        ..PipelineOptions::default()
    };
    let pipeline = Arc::new(Pipeline::parse(stages, &options)?);
    let variables = pipeline.variables().clone();
    let documents = input.iter().cloned().map(Ok);
    run(
        pipeline,
        Box::new(documents),
        Arc::new(NoCollections),
        variables,
    )
    .collect()
}

#[track_caller]
fn check_pipeline(
    stages: Vec<Document>,
    input: &[Document],
    folded: Vec<Document>,
    simple: Vec<Document>,
) {
    let under_collation = aggregated(&stages, input, &case_insensitive()).expect("runs");
    assert_eq!(under_collation, folded, "{stages:?} under the collation");
    let by_code_point = aggregated(&stages, input, &Collation::simple()).expect("runs");
    assert_eq!(by_code_point, simple, "{stages:?} by code point");
}

fn names() -> Vec<Document> {
    vec![
        doc! { "_id": 1, "name": "b" },
        doc! { "_id": 2, "name": "A" },
        doc! { "_id": 3, "name": "a" },
        doc! { "_id": 4, "name": "C" },
    ]
}

#[test]
fn accumulators_compare_under_the_collation() {
    check_pipeline(
        vec![doc! { "$group": {
            "_id": null,
            "max": { "$max": "$name" },
            "min": { "$min": "$name" },
            "set": { "$addToSet": "$name" },
            "top": { "$top": { "sortBy": { "name": -1 }, "output": "$_id" } },
            "maxN": { "$maxN": { "input": "$name", "n": 2 } },
        } }],
        &names(),
        vec![doc! {
            "_id": null, "max": "C", "min": "A", "set": ["b", "A", "C"], "top": 4,
            "maxN": ["C", "b"],
        }],
        vec![doc! {
            "_id": null, "max": "b", "min": "A", "set": ["b", "A", "a", "C"], "top": 1,
            "maxN": ["b", "a"],
        }],
    );
}

#[test]
fn bucket_boundaries_are_in_the_collation_order() {
    let bucket = vec![doc! { "$bucket": {
        "groupBy": "$name", "boundaries": ["a", "B", "d"], "default": "other",
    } }];
    assert_eq!(
        aggregated(&bucket, &names(), &case_insensitive()).expect("runs"),
        vec![
            doc! { "_id": "a", "count": 2 },
            doc! { "_id": "B", "count": 2 },
        ]
    );
    // By code point "B" < "a": the boundaries do not ascend.
    match aggregated(&bucket, &names(), &Collation::simple()) {
        Err(spillway_doc::DocError::Pipeline { code, .. }) => assert_eq!(code, 40194),
        other => panic!("expected 40194, got {other:?}"),
    }
    // $bucketAuto orders the keys by the collation, and never splits keys equal under it.
    check_pipeline(
        vec![doc! { "$bucketAuto": { "groupBy": "$name", "buckets": 2 } }],
        &names(),
        vec![
            doc! { "_id": { "min": "A", "max": "b" }, "count": 2 },
            doc! { "_id": { "min": "b", "max": "C" }, "count": 2 },
        ],
        vec![
            doc! { "_id": { "min": "A", "max": "a" }, "count": 2 },
            doc! { "_id": { "min": "a", "max": "b" }, "count": 2 },
        ],
    );
}
