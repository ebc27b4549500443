//! Sort specifications: parsing, MongoDB's order of documents (missing and null first, arrays
//! by their smallest element ascending and largest descending, the empty array before null,
//! paths through arrays of documents), raw and decoded agreeing, and a total order.

#![allow(
    clippy::needless_pass_by_value,
    reason = "one-line cases read best with owned `doc!` arguments"
)]

use std::cmp::Ordering;

use bson::{Bson, Document, RawDocumentBuf, bson, doc};
use proptest::prelude::*;
use spillway_doc::sort::SortSpec;

fn spec(sort: Document) -> SortSpec {
    SortSpec::parse(&sort).unwrap()
}

/// Sorts `documents` (stably) by `sort` and returns their `_id`s in order, checking that the
/// raw comparison gives the same order.
fn sorted_ids(sort: Document, documents: &[Document]) -> Vec<i32> {
    let spec = spec(sort);
    let mut decoded: Vec<&Document> = documents.iter().collect();
    decoded.sort_by(|a, b| spec.compare(a, b));
    let raws: Vec<RawDocumentBuf> = documents
        .iter()
        .map(|document| RawDocumentBuf::try_from(document).unwrap())
        .collect();
    let mut raw: Vec<&RawDocumentBuf> = raws.iter().collect();
    raw.sort_by(|a, b| spec.compare_raw(a, b));
    let ids = |documents: Vec<Document>| -> Vec<i32> {
        documents
            .iter()
            .map(|document| document.get_i32("_id").unwrap())
            .collect()
    };
    let decoded_ids = ids(decoded.into_iter().cloned().collect());
    let raw_ids = ids(raw
        .into_iter()
        .map(|raw| Document::try_from(raw.as_ref()).unwrap())
        .collect());
    assert_eq!(decoded_ids, raw_ids, "raw and decoded orders differ");
    decoded_ids
}

/// One document per value of `a`, `_id`s 0, 1, 2...; `None` leaves `a` out.
fn documents_with_a(values: &[Option<Bson>]) -> Vec<Document> {
    values
        .iter()
        .enumerate()
        .map(|(index, value)| {
            let mut document = doc! { "_id": index as i32 };
            if let Some(value) = value {
                document.insert("a", value.clone());
            }
            document
        })
        .collect()
}

#[track_caller]
fn check(sort: Document, values: &[Option<Bson>], expected_ids: &[i32]) {
    assert_eq!(
        sorted_ids(sort.clone(), &documents_with_a(values)),
        expected_ids,
        "sort {sort}"
    );
}

#[test]
fn parse() {
    for valid in [
        doc! {},
        doc! { "a": 1 },
        doc! { "a": -1, "b.c": 1.0 },
        doc! { "a": 1_i64 },
    ] {
        SortSpec::parse(&valid).unwrap();
    }
    assert!(spec(doc! {}).is_empty());
    assert_eq!(spec(doc! { "a": -1, "b": 1 }).keys().len(), 2);
    // A text score key is not a field key.
    let scored = spec(doc! { "score": { "$meta": "textScore" }, "b": 1 });
    assert!(scored.has_text_score() && !scored.is_empty());
    assert_eq!(scored.keys().len(), 1);
    let errors: Vec<String> = [
        doc! { "a": 2 },
        doc! { "a": 0 },
        doc! { "a": "asc" },
        doc! { "a": true },
        doc! { "a": { "$meta": "searchScore" } },
        doc! { "a": { "x": 1 } },
        doc! { "a..b": 1 },
        doc! { "$a": 1 },
        doc! { "a.$b": 1 },
    ]
    .iter()
    .map(|sort| format!("{sort} => {}", SortSpec::parse(sort).unwrap_err()))
    .collect();
    insta::assert_snapshot!(errors.join("\n"));
}

#[test]
fn scalars_and_types() {
    let values = [
        Some(bson!("b")),
        Some(bson!(2)),
        Some(bson!(1.5)),
        Some(bson!("a")),
        Some(bson!(true)),
        Some(bson!({ "x": 1 })),
    ];
    check(doc! { "a": 1 }, &values, &[2, 1, 3, 0, 5, 4]);
    check(doc! { "a": -1 }, &values, &[4, 5, 0, 3, 1, 2]);
}

#[test]
fn missing_and_null_sort_first_and_tie() {
    let values = [Some(bson!(1)), None, Some(Bson::Null), Some(bson!(0))];
    check(doc! { "a": 1 }, &values, &[1, 2, 3, 0]);
    check(doc! { "a": -1 }, &values, &[0, 3, 1, 2]);
}

#[test]
fn arrays_sort_by_smallest_ascending_and_largest_descending() {
    let values = [
        Some(bson!([1, 9])),
        Some(bson!([5])),
        Some(bson!(3)),
        Some(bson!([2, 4])),
    ];
    check(doc! { "a": 1 }, &values, &[0, 3, 2, 1]);
    check(doc! { "a": -1 }, &values, &[0, 1, 3, 2]);
}

#[test]
fn empty_array_sorts_before_null() {
    let values = [Some(bson!(1)), Some(Bson::Null), Some(bson!([])), None];
    check(doc! { "a": 1 }, &values, &[2, 1, 3, 0]);
    check(doc! { "a": -1 }, &values, &[0, 1, 3, 2]);
}

#[test]
fn nested_arrays_are_compared_as_arrays() {
    // [[0]]'s only candidate is the array [0], which sorts after every number.
    let values = [Some(bson!([[0]])), Some(bson!([7])), Some(bson!(["s"]))];
    check(doc! { "a": 1 }, &values, &[1, 2, 0]);
}

#[test]
fn dotted_paths_through_arrays_of_documents() {
    let documents = [
        doc! { "_id": 0, "r": [{ "s": 5 }, { "s": 1 }] },
        doc! { "_id": 1, "r": [{ "s": 3 }] },
        doc! { "_id": 2, "r": { "s": 2 } },
        doc! { "_id": 3, "r": [{ "t": 1 }, { "s": 4 }] },
        doc! { "_id": 4, "r": [7, 8] },
        doc! { "_id": 5 },
    ];
    // Ascending: smallest reached value (missing counts as null).
    assert_eq!(
        sorted_ids(doc! { "r.s": 1 }, &documents),
        [3, 4, 5, 0, 2, 1]
    );
    // Descending: largest reached value.
    assert_eq!(
        sorted_ids(doc! { "r.s": -1 }, &documents),
        [0, 3, 1, 2, 4, 5]
    );
    // A numeric component indexes the array.
    assert_eq!(
        sorted_ids(doc! { "r.0.s": 1 }, &documents),
        [2, 3, 4, 5, 1, 0]
    );
}

#[test]
fn several_keys_and_stable_ties() {
    let documents = [
        doc! { "_id": 0, "a": 1, "b": 2 },
        doc! { "_id": 1, "a": 1, "b": 1 },
        doc! { "_id": 2, "a": 0, "b": 5 },
        doc! { "_id": 3, "a": 1, "b": 1 },
    ];
    assert_eq!(
        sorted_ids(doc! { "a": -1, "b": 1 }, &documents),
        [1, 3, 0, 2]
    );
    assert_eq!(
        sorted_ids(doc! { "b": 1, "a": 1 }, &documents),
        [1, 3, 0, 2]
    );
    assert_eq!(sorted_ids(doc! {}, &documents), [0, 1, 2, 3]);
    assert_eq!(sorted_ids(doc! { "missing": 1 }, &documents), [0, 1, 2, 3]);
}

#[test]
fn numbers_compare_by_value_across_types() {
    let values = [
        Some(bson!(2.5)),
        Some(Bson::Int64(2)),
        Some(bson!(3)),
        Some(bson!(2.0)),
    ];
    // 2 (int64) and 2.0 tie and keep their input order.
    check(doc! { "a": 1 }, &values, &[1, 3, 0, 2]);
}

#[test]
fn precomputed_sort_values_give_the_same_order() {
    let spec = spec(doc! { "a": -1, "b": 1 });
    let documents = [
        doc! { "a": [1, 3], "b": 1 },
        doc! { "a": 3, "b": 0 },
        doc! { "b": 1 },
        doc! { "a": [] },
    ];
    for x in &documents {
        for y in &documents {
            assert_eq!(
                spec.compare_values(&spec.sort_values(x), &spec.sort_values(y)),
                spec.compare(x, y),
                "{x} {y}"
            );
        }
    }
}

fn value() -> impl Strategy<Value = Option<Bson>> {
    let scalar = prop_oneof![
        Just(Bson::Null),
        (-3_i32..3).prop_map(Bson::Int32),
        (-3_i64..3).prop_map(Bson::Int64),
        (-3.0_f64..3.0).prop_map(Bson::Double),
        "[ab]{0,2}".prop_map(Bson::String),
        any::<bool>().prop_map(Bson::Boolean),
    ];
    let element = prop_oneof![
        scalar.clone(),
        scalar
            .clone()
            .prop_map(|value| Bson::Document(doc! { "b": value })),
        Just(Bson::Document(doc! {})),
    ];
    prop_oneof![
        Just(None),
        scalar.prop_map(Some),
        prop::collection::vec(element, 0..4).prop_map(|items| Some(Bson::Array(items))),
    ]
}

proptest! {
    /// The comparison is a total preorder (antisymmetric, transitive) and raw agrees with
    /// decoded, for both directions and for paths that fan out through arrays.
    #[test]
    fn comparison_is_a_total_order(values in prop::collection::vec(value(), 3), path in prop_oneof![Just("a"), Just("a.b")], descending in any::<bool>()) {
        let spec = spec(doc! { path: if descending { -1 } else { 1 } });
        let documents = documents_with_a(&values);
        let raws: Vec<RawDocumentBuf> = documents.iter().map(|document| RawDocumentBuf::try_from(document).unwrap()).collect();
        for (x, x_raw) in documents.iter().zip(&raws) {
            for (y, y_raw) in documents.iter().zip(&raws) {
                let order = spec.compare(x, y);
                prop_assert_eq!(order, spec.compare(y, x).reverse());
                prop_assert_eq!(order, spec.compare_raw(x_raw, y_raw));
                for z in &documents {
                    if order != Ordering::Greater && spec.compare(y, z) != Ordering::Greater {
                        prop_assert_ne!(spec.compare(x, z), Ordering::Greater, "{} {} {}", x, y, z);
                    }
                }
            }
        }
    }

    /// A top-level field sorts by the reference key: the smallest (ascending) or largest
    /// (descending) element of an array, undefined for an empty array, null when missing.
    #[test]
    fn top_level_key_matches_the_reference(values in prop::collection::vec(value(), 2), descending in any::<bool>()) {
        let direction = if descending { -1 } else { 1 };
        let spec = spec(doc! { "a": direction });
        let key = |value: &Option<Bson>| -> Bson {
            match value {
                None => Bson::Null,
                Some(Bson::Array(items)) if items.is_empty() => Bson::Undefined,
                Some(Bson::Array(items)) => {
                    let mut sorted = items.clone();
                    sorted.sort_by(spillway_doc::compare::compare);
                    if descending { sorted.last().unwrap().clone() } else { sorted[0].clone() }
                }
                Some(other) => other.clone(),
            }
        };
        let mut expected = spillway_doc::compare::compare(&key(&values[0]), &key(&values[1]));
        if descending {
            expected = expected.reverse();
        }
        let documents = documents_with_a(&values);
        prop_assert_eq!(spec.compare(&documents[0], &documents[1]), expected);
    }
}
