//! Aggregation stages, data-driven: MongoDB's documented examples for each stage (written
//! out here) and edge cases, run by `spillway_doc::pipeline` over in-memory collections and
//! snapshotted; bad pipelines assert MongoDB's codes; streaming stages are shown to stream.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::sync::Arc;

use bson::{Document, doc};
use spillway_doc::DocError;
use spillway_doc::pipeline::{Pipeline, PipelineOptions, Source, run};

/// Collections by name, for `$lookup` and `$unionWith`.
struct Collections(HashMap<&'static str, Vec<Document>>);

impl Source for Collections {
    fn documents(
        &self,
        collection: &str,
        filter: &Document,
    ) -> spillway_doc::Result<Box<dyn Iterator<Item = spillway_doc::Result<Document>> + '_>> {
        let filter = spillway_doc::filter::Filter::parse(filter)?;
        let documents = self.0.get(collection).cloned().unwrap_or_default();
        let mut matching = Vec::new();
        for document in documents {
            if filter.matches_document(&document)? {
                matching.push(document);
            }
        }
        Ok(Box::new(matching.into_iter().map(Ok)))
    }
}

fn sales() -> Vec<Document> {
    vec![
        doc! { "_id": 1, "item": "abc", "price": 10, "quantity": 2, "tags": ["a", "b"] },
        doc! { "_id": 2, "item": "jkl", "price": 20, "quantity": 1, "tags": [] },
        doc! { "_id": 3, "item": "xyz", "price": 5, "quantity": 10, "tags": ["b"] },
        doc! { "_id": 4, "item": "xyz", "price": 5, "quantity": 20 },
        doc! { "_id": 5, "item": "abc", "price": 10, "quantity": 10, "tags": null },
    ]
}

fn source() -> Arc<dyn Source + Send + Sync> {
    Arc::new(Collections(HashMap::from([
        (
            "items",
            vec![
                doc! { "_id": "abc", "description": "product 1" },
                doc! { "_id": "xyz", "description": "product 3" },
            ],
        ),
        (
            "other_sales",
            vec![doc! { "_id": 100, "item": "new", "price": 1, "quantity": 1 }],
        ),
    ])))
}

fn aggregate(input: Vec<Document>, stages: &[Document]) -> Result<Vec<Document>, DocError> {
    let pipeline = Pipeline::parse(stages, &PipelineOptions::default())?;
    let variables = pipeline.variables().clone();
    run(
        Arc::new(pipeline),
        Box::new(input.into_iter().map(Ok)),
        source(),
        variables,
    )
    .collect()
}

fn render(cases: &[(&str, Vec<Document>)]) -> String {
    let mut out = String::new();
    for (name, stages) in cases {
        let _ = writeln!(out, "## {name}");
        match aggregate(sales(), stages) {
            Ok(documents) => {
                for document in documents {
                    let _ = writeln!(out, "{document}");
                }
            }
            Err(error) => {
                let _ = writeln!(out, "error: {error}");
            }
        }
    }
    out
}

#[test]
fn stages() {
    let cases = vec![
        ("$match", vec![doc! { "$match": { "item": "xyz" } }]),
        (
            "$match with $expr",
            vec![
                doc! { "$match": { "$expr": { "$gt": [{ "$multiply": ["$price", "$quantity"] }, 40] } } },
            ],
        ),
        (
            "$project inclusion, computed, _id excluded",
            vec![
                doc! { "$project": { "_id": 0, "item": 1, "total": { "$multiply": ["$price", "$quantity"] } } },
            ],
        ),
        (
            "$project exclusion",
            vec![doc! { "$project": { "tags": 0, "price": 0 } }],
        ),
        (
            "$addFields and $set nested",
            vec![
                doc! { "$addFields": { "total": { "$multiply": ["$price", "$quantity"] } } },
                doc! { "$set": { "meta.seen": true } },
                doc! { "$limit": 2 },
            ],
        ),
        ("$unset", vec![doc! { "$unset": ["tags", "quantity"] }]),
        (
            "$replaceRoot",
            vec![
                doc! { "$replaceRoot": { "newRoot": { "item": "$item", "n": "$quantity" } } },
                doc! { "$limit": 1 },
            ],
        ),
        (
            "$group with accumulators",
            vec![
                doc! { "$group": { "_id": "$item", "total": { "$sum": { "$multiply": ["$price", "$quantity"] } }, "avg": { "$avg": "$quantity" }, "count": { "$count": {} }, "max": { "$max": "$quantity" }, "first": { "$first": "$_id" }, "last": { "$last": "$_id" }, "ids": { "$push": "$_id" }, "prices": { "$addToSet": "$price" } } },
                doc! { "$sort": { "_id": 1 } },
            ],
        ),
        (
            "$group by null with $top/$bottomN/$firstN",
            vec![
                doc! { "$group": { "_id": null, "top": { "$top": { "sortBy": { "quantity": -1 }, "output": "$_id" } }, "bottom2": { "$bottomN": { "sortBy": { "quantity": -1 }, "output": "$_id", "n": 2 } }, "first2": { "$firstN": { "input": "$item", "n": 2 } }, "max2": { "$maxN": { "input": "$quantity", "n": 2 } } } },
            ],
        ),
        (
            "$group of missing keys",
            vec![doc! { "$group": { "_id": "$nosuch", "n": { "$sum": 1 } } }],
        ),
        (
            "$sort, $skip, $limit",
            vec![
                doc! { "$sort": { "quantity": -1, "_id": 1 } },
                doc! { "$skip": 1 },
                doc! { "$limit": 2 },
            ],
        ),
        (
            "$count",
            vec![
                doc! { "$match": { "price": { "$gt": 5 } } },
                doc! { "$count": "expensive" },
            ],
        ),
        (
            "$count of nothing",
            vec![doc! { "$match": { "price": 0 } }, doc! { "$count": "n" }],
        ),
        ("$unwind", vec![doc! { "$unwind": "$tags" }]),
        (
            "$unwind with index, preserving",
            vec![
                doc! { "$unwind": { "path": "$tags", "includeArrayIndex": "i", "preserveNullAndEmptyArrays": true } },
            ],
        ),
        (
            "$lookup equality",
            vec![
                doc! { "$lookup": { "from": "items", "localField": "item", "foreignField": "_id", "as": "info" } },
                doc! { "$project": { "info": 1 } },
            ],
        ),
        (
            "$lookup pipeline with let",
            vec![
                doc! { "$lookup": { "from": "items", "let": { "name": "$item" }, "pipeline": [{ "$match": { "$expr": { "$eq": ["$_id", "$$name"] } } }, { "$project": { "_id": 0, "description": 1 } }], "as": "info" } },
                doc! { "$project": { "info": 1 } },
            ],
        ),
        (
            "$unionWith",
            vec![
                doc! { "$project": { "item": 1 } },
                doc! { "$unionWith": { "coll": "other_sales", "pipeline": [{ "$project": { "item": 1 } }] } },
            ],
        ),
        (
            "$facet",
            vec![
                doc! { "$facet": { "count": [{ "$count": "n" }], "cheap": [{ "$match": { "price": 5 } }, { "$project": { "_id": 1 } }] } },
            ],
        ),
        (
            "$bucket",
            vec![
                doc! { "$bucket": { "groupBy": "$quantity", "boundaries": [0, 5, 15], "default": "many", "output": { "n": { "$sum": 1 }, "ids": { "$push": "$_id" } } } },
            ],
        ),
        (
            "$bucketAuto",
            vec![doc! { "$bucketAuto": { "groupBy": "$quantity", "buckets": 2 } }],
        ),
        (
            "$sortByCount",
            vec![doc! { "$sortByCount": "$item" }, doc! { "$limit": 1 }],
        ),
        (
            "$documents",
            vec![
                doc! { "$documents": [{ "x": 1 }, { "x": 2 }] },
                doc! { "$match": { "x": 2 } },
            ],
        ),
        (
            "$sample of everything",
            vec![doc! { "$sample": { "size": 10 } }, doc! { "$count": "n" }],
        ),
        (
            "$redact",
            vec![
                doc! { "$redact": { "$cond": [{ "$eq": ["$item", "abc"] }, "$$KEEP", "$$PRUNE"] } },
            ],
        ),
        (
            "$out is the caller's, what it writes",
            vec![doc! { "$match": { "_id": 1 } }, doc! { "$out": "target" }],
        ),
    ];
    insta::assert_snapshot!(render(&cases));
}

#[test]
fn bad_pipelines_give_mongodb_codes() {
    let cases: Vec<(Vec<Document>, i32)> = vec![
        (vec![doc! { "$bogus": 1 }], 40324),
        (vec![doc! { "$match": {}, "$limit": 1 }], 40323),
        (vec![doc! { "$out": "a" }, doc! { "$limit": 1 }], 40601),
        (vec![doc! { "$merge": "a" }, doc! { "$limit": 1 }], 40602),
        (vec![doc! { "$group": { "n": { "$sum": 1 } } }], 15955),
        (
            vec![doc! { "$group": { "_id": null, "n": { "$frob": 1 } } }],
            15952,
        ),
        (vec![doc! { "$project": { "a": 1, "b": 0 } }], 31254),
        (vec![doc! { "$limit": 0 }], 15958),
        (vec![doc! { "$skip": -1 }], 15956),
        (vec![doc! { "$unwind": "tags" }], 28818),
        (vec![doc! { "$count": "a.b" }], 40160),
        (vec![doc! { "$lookup": { "from": "x", "as": "y" } }], 9),
        (
            vec![doc! { "$bucket": { "groupBy": "$a", "boundaries": [5, 1] } }],
            40194,
        ),
        (vec![doc! { "$project": { "x": { "$bogus": 1 } } }], 168),
    ];
    for (stages, code) in cases {
        match Pipeline::parse(&stages, &PipelineOptions::default()) {
            Err(
                DocError::Pipeline { code: actual, .. } | DocError::Expression { code: actual, .. },
            ) => {
                assert_eq!(actual, code, "{stages:?}");
            }
            other => panic!("{stages:?}: expected code {code}, got {other:?}"),
        }
    }
    // A runtime failure carries its code too: $replaceRoot of a non-document.
    let error = aggregate(sales(), &[doc! { "$replaceRoot": { "newRoot": "$item" } }]).unwrap_err();
    assert!(
        matches!(error, DocError::Pipeline { code: 40228, .. }),
        "{error}"
    );
}

#[test]
fn streaming_stages_do_not_read_their_whole_input() {
    // An endless input: $match, $project and $limit stream, so the pipeline ends.
    let endless = (0_i64..).map(|n| Ok(doc! { "n": n }));
    let pipeline = Pipeline::parse(
        &[
            doc! { "$match": { "n": { "$mod": [2, 0] } } },
            doc! { "$project": { "n": 1 } },
            doc! { "$limit": 3 },
        ],
        &PipelineOptions::default(),
    )
    .unwrap();
    let out: Vec<Document> = run(
        Arc::new(pipeline),
        Box::new(endless),
        source(),
        spillway_doc::expr::Variables::default(),
    )
    .collect::<Result<_, _>>()
    .unwrap();
    assert_eq!(
        out,
        vec![
            doc! { "n": 0_i64 },
            doc! { "n": 2_i64 },
            doc! { "n": 4_i64 }
        ]
    );
}

#[test]
fn let_variables_reach_every_stage() {
    let options = PipelineOptions {
        let_vars: Some(doc! { "min": 10, "label": { "$concat": ["big", "!"] } }),
        ..PipelineOptions::default()
    };
    let pipeline = Pipeline::parse(
        &[
            doc! { "$match": { "$expr": { "$gte": ["$quantity", "$$min"] } } },
            doc! { "$project": { "_id": 1, "label": "$$label" } },
        ],
        &options,
    )
    .unwrap();
    let variables = pipeline.variables().clone();
    let out: Vec<Document> = run(
        Arc::new(pipeline),
        Box::new(sales().into_iter().map(Ok)),
        source(),
        variables,
    )
    .collect::<Result<_, _>>()
    .unwrap();
    assert_eq!(
        out,
        vec![
            doc! { "_id": 3, "label": "big!" },
            doc! { "_id": 4, "label": "big!" },
            doc! { "_id": 5, "label": "big!" }
        ]
    );
}

#[test]
fn merge_decides_per_document() {
    use spillway_doc::pipeline::{MergeAction, Output};
    let pipeline = Pipeline::parse(&[doc! { "$merge": { "into": "t", "on": "k", "whenMatched": [{ "$set": { "n": { "$add": ["$n", "$$new.n"] } } }], "whenNotMatched": "insert" } }], &PipelineOptions::default()).unwrap();
    let Some(Output::Merge(spec)) = pipeline.output() else {
        panic!("a $merge")
    };
    assert_eq!(
        spec.match_filter(&doc! { "k": 1, "n": 2 }).unwrap(),
        doc! { "k": { "$eq": 1 } }
    );
    assert_eq!(
        spec.decide(
            Some(&doc! { "_id": 9, "k": 1, "n": 5 }),
            doc! { "k": 1, "n": 2 }
        )
        .unwrap(),
        MergeAction::Replace(doc! { "_id": 9, "k": 1, "n": 7 })
    );
    assert_eq!(
        spec.decide(None, doc! { "k": 2 }).unwrap(),
        MergeAction::Insert(doc! { "k": 2 })
    );
    assert!(spec.match_filter(&doc! { "n": 1 }).is_err());
}
