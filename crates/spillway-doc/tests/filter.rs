//! Table-driven tests of the query language: one line per (filter, document, expected)
//! case, grouped by operator, with the cases MongoDB's reference pages spell out.

// One-line cases read best with `doc!` literals passed by value, and `Option<Option<_>>`
// says "no match" / "match without an index" / "match at an index" exactly.
#![allow(clippy::needless_pass_by_value, clippy::option_option)]

use bson::{Bson, Decimal128, Document, RawDocumentBuf, Regex, doc};
use spillway_doc::filter::{Filter, MatchDetails};

/// Asserts that `filter` matches `document` exactly when `expected`, through both the raw
/// and the decoded entry points.
#[track_caller]
fn check(filter: Document, document: Document, expected: bool) {
    let parsed = Filter::parse(&filter).unwrap_or_else(|error| panic!("{filter}: {error}"));
    let raw = RawDocumentBuf::try_from(&document).unwrap();
    assert_eq!(
        parsed.matches(&raw).unwrap(),
        expected,
        "filter {filter} on {document}"
    );
    assert_eq!(
        parsed.matches_document(&document).unwrap(),
        expected,
        "decoded: {filter} on {document}"
    );
    let details = parsed.match_details(&raw).unwrap();
    assert_eq!(
        details.is_some(),
        expected,
        "match_details agrees with matches: {filter} on {document}"
    );
}

/// Asserts the array index the positional operator would use (`None` inside `Some` for a
/// match without one; the outer `None` for no match).
#[track_caller]
fn check_index(filter: Document, document: Document, expected: Option<Option<usize>>) {
    let parsed = Filter::parse(&filter).unwrap();
    let raw = RawDocumentBuf::try_from(&document).unwrap();
    let details = parsed.match_details(&raw).unwrap();
    assert_eq!(
        details,
        expected.map(|array_index| MatchDetails { array_index }),
        "filter {filter} on {document}"
    );
}

fn regex(pattern: &str, options: &str) -> Bson {
    Bson::RegularExpression(Regex {
        pattern: pattern.try_into().unwrap(),
        options: options.try_into().unwrap(),
    })
}

fn decimal(text: &str) -> Bson {
    Bson::Decimal128(text.parse::<Decimal128>().unwrap())
}

#[test]
fn empty_filter_matches_everything() {
    check(doc! {}, doc! {}, true);
    check(doc! {}, doc! { "a": 1 }, true);
    check(doc! { "$comment": "only a comment" }, doc! { "a": 1 }, true);
    check(
        doc! { "a": 1, "$comment": "ignored" },
        doc! { "a": 1 },
        true,
    );
    check(
        doc! { "a": 1, "$comment": "ignored" },
        doc! { "a": 2 },
        false,
    );
    assert!(Filter::parse(&doc! {}).unwrap().is_match_all());
}

#[test]
fn implicit_equality_on_scalars() {
    check(doc! { "a": 1 }, doc! { "a": 1 }, true);
    check(doc! { "a": 1 }, doc! { "a": 2 }, false);
    check(doc! { "a": 1 }, doc! { "a": 1.0 }, true);
    check(doc! { "a": 1 }, doc! { "a": 1_i64 }, true);
    check(doc! { "a": 1 }, doc! { "a": decimal("1.00") }, true);
    check(doc! { "a": 1 }, doc! { "a": "1" }, false);
    check(
        doc! { "a": "x" },
        doc! { "a": Bson::Symbol("x".into()) },
        true,
    );
    check(doc! { "a": true }, doc! { "a": 1 }, false);
    check(doc! { "a": 1 }, doc! { "b": 1 }, false);
    check(doc! { "a": 1, "b": 2 }, doc! { "a": 1, "b": 2 }, true);
    check(doc! { "a": 1, "b": 2 }, doc! { "a": 1, "b": 3 }, false);
}

#[test]
fn implicit_equality_on_arrays() {
    // Array contains.
    check(
        doc! { "tags": "red" },
        doc! { "tags": ["blue", "red"] },
        true,
    );
    check(doc! { "tags": "red" }, doc! { "tags": ["blue"] }, false);
    check(doc! { "tags": "red" }, doc! { "tags": [] }, false);
    // Whole-array equality, order and length matter.
    check(
        doc! { "tags": ["red", "blank"] },
        doc! { "tags": ["red", "blank"] },
        true,
    );
    check(
        doc! { "tags": ["red", "blank"] },
        doc! { "tags": ["blank", "red"] },
        false,
    );
    check(
        doc! { "tags": ["red"] },
        doc! { "tags": ["red", "blank"] },
        false,
    );
    check(doc! { "tags": [] }, doc! { "tags": [] }, true);
    check(doc! { "tags": [] }, doc! { "tags": [[]] }, true);
    // Arrays of arrays: an element equal to the array, but no flattening.
    check(doc! { "a": [1, 2] }, doc! { "a": [[1, 2], 3] }, true);
    check(doc! { "a": 1 }, doc! { "a": [[1, 2], 3] }, false);
    check(doc! { "a": 3 }, doc! { "a": [[1, 2], 3] }, true);
    check(doc! { "a": [[1, 2]] }, doc! { "a": [[1, 2]] }, true);
    check(doc! { "a": 1 }, doc! { "a": [[1]] }, false);
    check(doc! { "a": [1] }, doc! { "a": [[1]] }, true);
}

#[test]
fn equality_on_embedded_documents() {
    let document = doc! { "size": { "h": 14, "w": 21, "uom": "cm" } };
    check(
        doc! { "size": { "h": 14, "w": 21, "uom": "cm" } },
        document.clone(),
        true,
    );
    check(
        doc! { "size": { "w": 21, "h": 14, "uom": "cm" } },
        document.clone(),
        false,
    );
    check(
        doc! { "size": { "h": 14, "w": 21 } },
        document.clone(),
        false,
    );
    check(
        doc! { "size": { "h": 14.0, "w": 21, "uom": "cm" } },
        document.clone(),
        true,
    );
    check(doc! { "size.uom": "cm" }, document.clone(), true);
    check(doc! { "size.h": { "$lt": 15 } }, document, true);
    check(doc! { "a": {} }, doc! { "a": {} }, true);
    check(doc! { "a": {} }, doc! { "a": { "b": 1 } }, false);
    check(
        doc! { "a": { "b": 1 } },
        doc! { "a": [{ "b": 1 }, 2] },
        true,
    );
    // A DBRef-shaped document is a literal, not an operator document.
    check(
        doc! { "r": { "$ref": "c", "$id": 1 } },
        doc! { "r": { "$ref": "c", "$id": 1 } },
        true,
    );
}

#[test]
fn dotted_paths_traverse_arrays_of_documents() {
    let reviews =
        doc! { "reviews": [ { "author": "ann", "stars": 5 }, { "author": "bob", "stars": 2 } ] };
    check(doc! { "reviews.author": "bob" }, reviews.clone(), true);
    check(doc! { "reviews.author": "cid" }, reviews.clone(), false);
    check(
        doc! { "reviews.stars": { "$gt": 4 } },
        reviews.clone(),
        true,
    );
    // Different elements may satisfy different conditions without $elemMatch.
    check(
        doc! { "reviews.author": "bob", "reviews.stars": 5 },
        reviews.clone(),
        true,
    );
    check(
        doc! { "reviews": { "$elemMatch": { "author": "bob", "stars": 5 } } },
        reviews,
        false,
    );
    check(doc! { "a.b": 1 }, doc! { "a": [{ "b": [0, 1] }] }, true);
    check(
        doc! { "a.b.c": 1 },
        doc! { "a": [{ "b": [{ "c": 1 }] }] },
        true,
    );
    check(
        doc! { "a.b.c": 1 },
        doc! { "a": { "b": [{ "c": [1] }] } },
        true,
    );
    // Nested arrays are not traversed for field names.
    check(doc! { "a.b": 1 }, doc! { "a": [[{ "b": 1 }]] }, false);
    // Scalars in the array are skipped.
    check(doc! { "a.b": 1 }, doc! { "a": [1, { "b": 1 }] }, true);
    check(doc! { "a.b": 1 }, doc! { "a": 1 }, false);
    check(doc! { "a.b": 1 }, doc! { "a": { "c": 1 } }, false);
}

#[test]
fn numeric_path_components_index_arrays_and_name_fields() {
    check(doc! { "a.0": 1 }, doc! { "a": [1, 2] }, true);
    check(doc! { "a.1": 1 }, doc! { "a": [1, 2] }, false);
    check(doc! { "a.1": 2 }, doc! { "a": [1, 2] }, true);
    check(doc! { "a.5": 2 }, doc! { "a": [1, 2] }, false);
    check(doc! { "a.0": 1 }, doc! { "a": { "0": 1 } }, true);
    check(doc! { "a.0": 1 }, doc! { "a": [{ "0": 1 }] }, true);
    check(
        doc! { "a.0.b": 1 },
        doc! { "a": [{ "b": 1 }, { "b": 2 }] },
        true,
    );
    check(
        doc! { "a.1.b": 1 },
        doc! { "a": [{ "b": 1 }, { "b": 2 }] },
        false,
    );
    check(
        doc! { "a.1.b": 2 },
        doc! { "a": [{ "b": 1 }, { "b": 2 }] },
        true,
    );
    check(doc! { "a.0.b": 2 }, doc! { "a": [{ "b": [1, 2] }] }, true);
    // An index into a nested array, then a field.
    check(doc! { "a.0.b": 1 }, doc! { "a": [[{ "b": 1 }]] }, true);
    check(doc! { "a.0.0": 7 }, doc! { "a": [[7, 8]] }, true);
    check(doc! { "a.0.1": 7 }, doc! { "a": [[7, 8]] }, false);
    check(doc! { "a.0": [7, 8] }, doc! { "a": [[7, 8]] }, true);
    // "01" is not an index.
    check(doc! { "a.01": 1 }, doc! { "a": [1] }, false);
    check(doc! { "a.01": 1 }, doc! { "a": { "01": 1 } }, true);
    check(doc! { "a.0": { "$exists": true } }, doc! { "a": [] }, false);
    check(
        doc! { "a.0": { "$exists": true } },
        doc! { "a": [null] },
        true,
    );
}

#[test]
fn null_matches_missing_and_null() {
    check(doc! { "a": null }, doc! {}, true);
    check(doc! { "a": null }, doc! { "a": null }, true);
    check(doc! { "a": null }, doc! { "a": 0 }, false);
    check(doc! { "a": null }, doc! { "a": false }, false);
    check(doc! { "a": null }, doc! { "a": [1, null] }, true);
    check(doc! { "a": null }, doc! { "a": [null, null] }, true);
    check(doc! { "a": null }, doc! { "a": [1, 2] }, false);
    check(doc! { "a": null }, doc! { "a": [] }, false);
    check(doc! { "a": null }, doc! { "a": [[]] }, false);
    // MongoDB 8: null no longer matches the deprecated undefined.
    check(doc! { "a": null }, doc! { "a": Bson::Undefined }, false);
    check(doc! { "a": { "$eq": null } }, doc! {}, true);
    check(doc! { "a.b": null }, doc! { "a": 4 }, true);
    check(doc! { "a.b": null }, doc! { "a": {} }, true);
    check(doc! { "a.b": null }, doc! { "a": null }, true);
    check(doc! { "a.b": null }, doc! { "a": { "b": null } }, true);
    check(doc! { "a.b": null }, doc! { "a": { "b": "hi" } }, false);
    check(doc! { "a.b": null }, doc! { "a": [{ "b": 3 }, {}] }, true);
    check(doc! { "a.b": null }, doc! { "a": [{}, { "c": 1 }] }, true);
    check(
        doc! { "a.b": null },
        doc! { "a": [{ "b": 1 }, { "b": 3 }] },
        false,
    );
    check(doc! { "a.b": null }, doc! { "a": [{ "b": [null] }] }, true);
    check(doc! { "a.b": null }, doc! { "a": [1, "string"] }, false);
    check(doc! { "a.b": null }, doc! { "a": [null, null] }, false);
    check(doc! { "a.b": null }, doc! { "a": [] }, false);
    check(doc! { "a.b": null }, doc! { "a": [[]] }, false);
}

#[test]
fn negations_of_null() {
    check(doc! { "a": { "$ne": null } }, doc! {}, false);
    check(doc! { "a": { "$ne": null } }, doc! { "a": null }, false);
    check(doc! { "a": { "$ne": null } }, doc! { "a": 1 }, true);
    check(
        doc! { "a": { "$ne": null } },
        doc! { "a": [1, null] },
        false,
    );
    check(doc! { "a": { "$ne": null } }, doc! { "a": [] }, true);
    check(
        doc! { "a.b": { "$ne": null } },
        doc! { "a": [{ "b": 1 }, {}] },
        false,
    );
    check(
        doc! { "a.b": { "$ne": null } },
        doc! { "a": [{ "b": 1 }, { "b": 2 }] },
        true,
    );
    check(doc! { "a": { "$nin": [null] } }, doc! {}, false);
    check(doc! { "a": { "$nin": [null] } }, doc! { "a": 5 }, true);
    check(doc! { "a": { "$nin": [null, 5] } }, doc! { "a": 5 }, false);
    check(doc! { "a": { "$in": [null, 5] } }, doc! {}, true);
    check(
        doc! { "a": { "$in": [null] } },
        doc! { "a": [1, null] },
        true,
    );
    check(doc! { "a": { "$gte": null } }, doc! {}, true);
    check(doc! { "a": { "$lte": null } }, doc! { "a": null }, true);
    check(doc! { "a": { "$gt": null } }, doc! {}, false);
    check(doc! { "a": { "$lt": null } }, doc! { "a": null }, false);
    check(doc! { "a": { "$gt": null } }, doc! { "a": 1 }, false);
    check(
        doc! { "a": { "$not": { "$eq": null } } },
        doc! { "a": 1 },
        true,
    );
}

#[test]
fn eq_and_ne() {
    check(doc! { "a": { "$eq": 5 } }, doc! { "a": 5 }, true);
    check(doc! { "a": { "$eq": 5 } }, doc! { "a": [4, 5] }, true);
    check(doc! { "a": { "$eq": [4, 5] } }, doc! { "a": [4, 5] }, true);
    check(
        doc! { "a": { "$eq": { "b": 1 } } },
        doc! { "a": { "b": 1 } },
        true,
    );
    // An operator-looking document inside $eq is a literal.
    check(
        doc! { "a": { "$eq": { "$gt": 1 } } },
        doc! { "a": 5 },
        false,
    );
    check(doc! { "a": { "$ne": 5 } }, doc! { "a": 6 }, true);
    check(doc! { "a": { "$ne": 5 } }, doc! { "a": 5 }, false);
    check(doc! { "a": { "$ne": 5 } }, doc! {}, true);
    check(doc! { "a": { "$ne": 5 } }, doc! { "a": [5, 6] }, false);
    check(doc! { "a": { "$ne": 5 } }, doc! { "a": [6, 7] }, true);
    check(doc! { "a": { "$ne": 5 } }, doc! { "a": "5" }, true);
    check(doc! { "a": { "$ne": [5] } }, doc! { "a": [[5]] }, false);
    check(
        doc! { "a.b": { "$ne": 5 } },
        doc! { "a": [{ "b": 5 }, { "b": 6 }] },
        false,
    );
    // $eq with a regular expression matches only an equal regular expression.
    check(
        doc! { "a": { "$eq": regex("x", "") } },
        doc! { "a": "x" },
        false,
    );
    check(
        doc! { "a": { "$eq": regex("x", "") } },
        doc! { "a": regex("x", "") },
        true,
    );
    check(
        doc! { "a": { "$eq": regex("x", "") } },
        doc! { "a": regex("x", "i") },
        false,
    );
}

#[test]
fn comparisons_stay_within_the_type_bracket() {
    check(doc! { "a": { "$gt": 5 } }, doc! { "a": 6 }, true);
    check(doc! { "a": { "$gt": 5 } }, doc! { "a": 5 }, false);
    check(doc! { "a": { "$gte": 5 } }, doc! { "a": 5 }, true);
    check(doc! { "a": { "$lt": 5 } }, doc! { "a": 4.5 }, true);
    check(doc! { "a": { "$lte": 5 } }, doc! { "a": 5_i64 }, true);
    check(
        doc! { "a": { "$gt": 5 } },
        doc! { "a": decimal("5.000001") },
        true,
    );
    check(doc! { "a": { "$gt": 5 } }, doc! { "a": "6" }, false);
    check(doc! { "a": { "$lt": 5 } }, doc! { "a": "4" }, false);
    check(doc! { "a": { "$lt": 5 } }, doc! { "a": null }, false);
    check(doc! { "a": { "$lt": 5 } }, doc! {}, false);
    check(doc! { "a": { "$gt": 5 } }, doc! { "a": true }, false);
    check(doc! { "a": { "$lt": "b" } }, doc! { "a": "a" }, true);
    check(doc! { "a": { "$lt": "b" } }, doc! { "a": "B" }, true);
    check(doc! { "a": { "$lt": "b" } }, doc! { "a": 1 }, false);
    check(doc! { "a": { "$lt": true } }, doc! { "a": false }, true);
    check(
        doc! { "a": { "$gte": { "b": 1 } } },
        doc! { "a": { "b": 2 } },
        true,
    );
    check(doc! { "a": { "$gte": { "b": 1 } } }, doc! { "a": 2 }, false);
    let at = |millis| Bson::DateTime(bson::DateTime::from_millis(millis));
    check(doc! { "d": { "$gt": at(5) } }, doc! { "d": at(6) }, true);
    check(doc! { "d": { "$gt": at(5) } }, doc! { "d": 6 }, false);
    // Exact comparison across numeric types beyond 2^53.
    check(
        doc! { "a": { "$gt": 9_007_199_254_740_992.0 } },
        doc! { "a": 9_007_199_254_740_993_i64 },
        true,
    );
    check(
        doc! { "a": { "$gt": 9_007_199_254_740_993_i64 } },
        doc! { "a": 9_007_199_254_740_992.0 },
        false,
    );
}

#[test]
fn comparisons_on_arrays() {
    // Each condition may be satisfied by a different element.
    check(doc! { "a": { "$gt": 5 } }, doc! { "a": [1, 10] }, true);
    check(
        doc! { "a": { "$gt": 5, "$lt": 8 } },
        doc! { "a": [1, 10] },
        true,
    );
    check(
        doc! { "a": { "$elemMatch": { "$gt": 5, "$lt": 8 } } },
        doc! { "a": [1, 10] },
        false,
    );
    check(
        doc! { "a": { "$gt": 5, "$lt": 8 } },
        doc! { "a": [6] },
        true,
    );
    check(doc! { "a": { "$gt": 5 } }, doc! { "a": [] }, false);
    check(doc! { "a": { "$gt": 5 } }, doc! { "a": [[10]] }, false);
    // The whole array is compared too, within the array bracket.
    check(doc! { "a": { "$gt": [1] } }, doc! { "a": [2] }, true);
    check(doc! { "a": { "$lt": [1, 2] } }, doc! { "a": [1] }, true);
    check(doc! { "a": { "$gt": [1] } }, doc! { "a": 2 }, false);
}

#[test]
fn minkey_maxkey_and_nan() {
    check(doc! { "a": { "$gt": Bson::MinKey } }, doc! { "a": 1 }, true);
    check(
        doc! { "a": { "$gt": Bson::MinKey } },
        doc! { "a": "x" },
        true,
    );
    check(
        doc! { "a": { "$gt": Bson::MinKey } },
        doc! { "a": null },
        true,
    );
    check(
        doc! { "a": { "$gt": Bson::MinKey } },
        doc! { "a": Bson::MinKey },
        false,
    );
    check(
        doc! { "a": { "$gte": Bson::MinKey } },
        doc! { "a": Bson::MinKey },
        true,
    );
    check(
        doc! { "a": { "$lt": Bson::MaxKey } },
        doc! { "a": { "b": 1 } },
        true,
    );
    check(doc! { "a": { "$lt": Bson::MaxKey } }, doc! {}, true);
    check(
        doc! { "a": { "$lte": Bson::MinKey } },
        doc! { "a": 1 },
        false,
    );
    check(
        doc! { "a": { "$gt": Bson::MaxKey } },
        doc! { "a": 1 },
        false,
    );
    check(doc! { "a": { "$gt": f64::NAN } }, doc! { "a": 1 }, false);
    check(doc! { "a": { "$lt": f64::NAN } }, doc! { "a": 1 }, false);
    check(doc! { "a": { "$lt": 1 } }, doc! { "a": f64::NAN }, false);
    check(doc! { "a": { "$gt": 1 } }, doc! { "a": f64::NAN }, false);
    check(
        doc! { "a": { "$gte": f64::NAN } },
        doc! { "a": f64::NAN },
        true,
    );
    check(
        doc! { "a": { "$gte": f64::NAN } },
        doc! { "a": decimal("NaN") },
        true,
    );
    check(
        doc! { "a": { "$gt": f64::NAN } },
        doc! { "a": f64::NAN },
        false,
    );
    check(doc! { "a": f64::NAN }, doc! { "a": f64::NAN }, true);
    check(
        doc! { "a": { "$lt": f64::INFINITY } },
        doc! { "a": 1e300 },
        true,
    );
}

#[test]
fn in_and_nin() {
    check(doc! { "a": { "$in": [1, 2] } }, doc! { "a": 2 }, true);
    check(doc! { "a": { "$in": [1, 2] } }, doc! { "a": 2.0 }, true);
    check(doc! { "a": { "$in": [1, 2] } }, doc! { "a": 3 }, false);
    check(doc! { "a": { "$in": [1, 2] } }, doc! { "a": [3, 2] }, true);
    check(doc! { "a": { "$in": [1, 2] } }, doc! { "a": [] }, false);
    check(doc! { "a": { "$in": [1, 2] } }, doc! {}, false);
    check(doc! { "a": { "$in": [] } }, doc! { "a": 1 }, false);
    check(
        doc! { "a": { "$in": [[1, 2]] } },
        doc! { "a": [1, 2] },
        true,
    );
    check(
        doc! { "a": { "$in": [[1, 2]] } },
        doc! { "a": [[1, 2], 3] },
        true,
    );
    check(doc! { "a": { "$in": [[1, 2]] } }, doc! { "a": [1] }, false);
    check(
        doc! { "a": { "$in": [{ "b": 1 }] } },
        doc! { "a": { "b": 1 } },
        true,
    );
    check(
        doc! { "a": { "$in": [regex("^ab", ""), 5] } },
        doc! { "a": "abc" },
        true,
    );
    check(
        doc! { "a": { "$in": [regex("^ab", ""), 5] } },
        doc! { "a": "xab" },
        false,
    );
    check(
        doc! { "a": { "$in": [regex("^ab", ""), 5] } },
        doc! { "a": 5 },
        true,
    );
    check(
        doc! { "a": { "$in": [regex("^AB", "i")] } },
        doc! { "a": ["x", "abc"] },
        true,
    );
    check(
        doc! { "a.b": { "$in": [3] } },
        doc! { "a": [{ "b": 1 }, { "b": 3 }] },
        true,
    );
    check(doc! { "a": { "$nin": [1, 2] } }, doc! { "a": 3 }, true);
    check(
        doc! { "a": { "$nin": [1, 2] } },
        doc! { "a": [3, 1] },
        false,
    );
    check(doc! { "a": { "$nin": [1, 2] } }, doc! { "a": [3, 4] }, true);
    check(doc! { "a": { "$nin": [1, 2] } }, doc! {}, true);
    check(doc! { "a": { "$nin": [] } }, doc! { "a": 1 }, true);
    check(
        doc! { "a": { "$nin": [regex("x", "")] } },
        doc! { "a": "y" },
        true,
    );
    check(
        doc! { "a": { "$nin": [regex("x", "")] } },
        doc! { "a": "xy" },
        false,
    );
}

#[test]
fn exists() {
    check(doc! { "a": { "$exists": true } }, doc! { "a": null }, true);
    check(doc! { "a": { "$exists": true } }, doc! {}, false);
    check(doc! { "a": { "$exists": true } }, doc! { "a": [] }, true);
    check(doc! { "a": { "$exists": false } }, doc! {}, true);
    check(
        doc! { "a": { "$exists": false } },
        doc! { "a": null },
        false,
    );
    check(doc! { "a": { "$exists": 1 } }, doc! { "a": 0 }, true);
    check(doc! { "a": { "$exists": 0 } }, doc! {}, true);
    check(doc! { "a": { "$exists": 0 } }, doc! { "a": 1 }, false);
    check(
        doc! { "a.b": { "$exists": true } },
        doc! { "a": [{ "b": 1 }] },
        true,
    );
    check(
        doc! { "a.b": { "$exists": true } },
        doc! { "a": [{ "c": 1 }] },
        false,
    );
    check(
        doc! { "a.b": { "$exists": true } },
        doc! { "a": [1, 2] },
        false,
    );
    check(doc! { "a.b": { "$exists": true } }, doc! { "a": [] }, false);
    check(doc! { "a.b": { "$exists": true } }, doc! { "a": 5 }, false);
    check(
        doc! { "a.b": { "$exists": false } },
        doc! { "a": [{ "c": 1 }] },
        true,
    );
    check(
        doc! { "a.b": { "$exists": false } },
        doc! { "a": [{ "b": 1 }, { "c": 1 }] },
        false,
    );
    check(doc! { "a.b": { "$exists": false } }, doc! { "a": [] }, true);
    check(
        doc! { "a.1": { "$exists": true } },
        doc! { "a": [5] },
        false,
    );
    check(
        doc! { "a.1": { "$exists": true } },
        doc! { "a": [5, 6] },
        true,
    );
}

#[test]
fn type_by_number_and_alias() {
    check(doc! { "a": { "$type": 2 } }, doc! { "a": "x" }, true);
    check(doc! { "a": { "$type": "string" } }, doc! { "a": "x" }, true);
    check(doc! { "a": { "$type": "string" } }, doc! { "a": 1 }, false);
    check(doc! { "a": { "$type": "number" } }, doc! { "a": 1 }, true);
    check(
        doc! { "a": { "$type": "number" } },
        doc! { "a": 1_i64 },
        true,
    );
    check(doc! { "a": { "$type": "number" } }, doc! { "a": 1.5 }, true);
    check(
        doc! { "a": { "$type": "number" } },
        doc! { "a": decimal("1") },
        true,
    );
    check(
        doc! { "a": { "$type": "number" } },
        doc! { "a": "1" },
        false,
    );
    check(doc! { "a": { "$type": "int" } }, doc! { "a": 1_i64 }, false);
    check(doc! { "a": { "$type": "long" } }, doc! { "a": 1_i64 }, true);
    check(doc! { "a": { "$type": 16.0 } }, doc! { "a": 1 }, true);
    check(doc! { "a": { "$type": 18_i64 } }, doc! { "a": 1_i64 }, true);
    check(doc! { "a": { "$type": "double" } }, doc! { "a": 1.0 }, true);
    check(
        doc! { "a": { "$type": "decimal" } },
        doc! { "a": decimal("1") },
        true,
    );
    check(
        doc! { "a": { "$type": "object" } },
        doc! { "a": { "b": 1 } },
        true,
    );
    check(doc! { "a": { "$type": "bool" } }, doc! { "a": false }, true);
    check(doc! { "a": { "$type": "null" } }, doc! { "a": null }, true);
    check(doc! { "a": { "$type": "null" } }, doc! {}, false);
    check(
        doc! { "a": { "$type": "regex" } },
        doc! { "a": regex("x", "") },
        true,
    );
    check(
        doc! { "a": { "$type": -1 } },
        doc! { "a": Bson::MinKey },
        true,
    );
    check(
        doc! { "a": { "$type": "maxKey" } },
        doc! { "a": Bson::MaxKey },
        true,
    );
    check(
        doc! { "a": { "$type": 127 } },
        doc! { "a": Bson::MaxKey },
        true,
    );
    check(
        doc! { "a": { "$type": "date" } },
        doc! { "a": bson::DateTime::from_millis(0) },
        true,
    );
    check(
        doc! { "a": { "$type": "objectId" } },
        doc! { "a": bson::oid::ObjectId::new() },
        true,
    );
    // Arrays: the array itself and its elements.
    check(doc! { "a": { "$type": "array" } }, doc! { "a": [] }, true);
    check(doc! { "a": { "$type": "array" } }, doc! { "a": [1] }, true);
    check(doc! { "a": { "$type": "array" } }, doc! { "a": 1 }, false);
    check(doc! { "a": { "$type": 4 } }, doc! { "a": [[1]] }, true);
    check(
        doc! { "a": { "$type": "int" } },
        doc! { "a": [1, "x"] },
        true,
    );
    check(
        doc! { "a": { "$type": "string" } },
        doc! { "a": [1, 2] },
        false,
    );
    check(
        doc! { "a.b": { "$type": "string" } },
        doc! { "a": [{ "b": 1 }, { "b": "x" }] },
        true,
    );
    // Several types.
    check(
        doc! { "a": { "$type": ["string", "int"] } },
        doc! { "a": 1 },
        true,
    );
    check(
        doc! { "a": { "$type": ["string", 16] } },
        doc! { "a": "x" },
        true,
    );
    check(
        doc! { "a": { "$type": ["string", "int"] } },
        doc! { "a": 1.5 },
        false,
    );
    check(doc! { "a": { "$type": [] } }, doc! { "a": 1 }, false);
}

#[test]
fn size() {
    check(doc! { "a": { "$size": 2 } }, doc! { "a": [1, 2] }, true);
    check(doc! { "a": { "$size": 2 } }, doc! { "a": [1] }, false);
    check(doc! { "a": { "$size": 2 } }, doc! { "a": 2 }, false);
    check(doc! { "a": { "$size": 0 } }, doc! {}, false);
    check(doc! { "a": { "$size": 0 } }, doc! { "a": [] }, true);
    check(doc! { "a": { "$size": 2.0 } }, doc! { "a": [1, 2] }, true);
    check(doc! { "a": { "$size": 2_i64 } }, doc! { "a": [1, 2] }, true);
    // The outer array counts; nested arrays are not traversed.
    check(doc! { "a": { "$size": 1 } }, doc! { "a": [[1, 2]] }, true);
    check(doc! { "a": { "$size": 2 } }, doc! { "a": [[1, 2]] }, false);
    check(
        doc! { "a.b": { "$size": 2 } },
        doc! { "a": [{ "b": [1] }, { "b": [1, 2] }] },
        true,
    );
    check(
        doc! { "a.b": { "$size": 3 } },
        doc! { "a": [{ "b": [1] }, { "b": [1, 2] }] },
        false,
    );
    check(
        doc! { "a": { "$not": { "$size": 2 } } },
        doc! { "a": [1] },
        true,
    );
    check(doc! { "a": { "$not": { "$size": 2 } } }, doc! {}, true);
}

#[test]
fn all() {
    check(
        doc! { "a": { "$all": [1, 2] } },
        doc! { "a": [1, 2, 3] },
        true,
    );
    check(
        doc! { "a": { "$all": [2, 1] } },
        doc! { "a": [1, 2, 3] },
        true,
    );
    check(
        doc! { "a": { "$all": [1, 2] } },
        doc! { "a": [1, 3] },
        false,
    );
    check(doc! { "a": { "$all": [1] } }, doc! { "a": 1 }, true);
    check(doc! { "a": { "$all": [1, 1] } }, doc! { "a": [1] }, true);
    check(doc! { "a": { "$all": [] } }, doc! { "a": [] }, false);
    check(doc! { "a": { "$all": [] } }, doc! { "a": [1] }, false);
    check(doc! { "a": { "$all": [] } }, doc! {}, false);
    check(doc! { "a": { "$all": [null] } }, doc! {}, true);
    check(
        doc! { "a": { "$all": [[1, 2]] } },
        doc! { "a": [[1, 2], 3] },
        true,
    );
    check(
        doc! { "a": { "$all": [[1, 2]] } },
        doc! { "a": [1, 2] },
        true,
    );
    check(
        doc! { "a": { "$all": [[1, 2]] } },
        doc! { "a": [2, 1] },
        false,
    );
    check(
        doc! { "a": { "$all": [regex("^x", ""), "y"] } },
        doc! { "a": ["xa", "y"] },
        true,
    );
    check(
        doc! { "a": { "$all": [regex("^x", ""), "y"] } },
        doc! { "a": ["a", "y"] },
        false,
    );
    check(
        doc! { "a.b": { "$all": [1, 2] } },
        doc! { "a": [{ "b": 1 }, { "b": 2 }] },
        true,
    );
    let items = doc! { "qty": [ { "size": "S", "num": 10, "color": "blue" }, { "size": "M", "num": 45, "color": "blue" } ] };
    let both = doc! { "qty": { "$all": [
        { "$elemMatch": { "size": "M", "num": { "$gt": 40 } } },
        { "$elemMatch": { "num": 10, "color": "blue" } },
    ] } };
    check(both, items.clone(), true);
    let impossible = doc! { "qty": { "$all": [
        { "$elemMatch": { "size": "M", "num": { "$gt": 50 } } },
        { "$elemMatch": { "num": 10 } },
    ] } };
    check(impossible, items, false);
}

#[test]
fn elem_match_value_form() {
    check(
        doc! { "a": { "$elemMatch": { "$gte": 80, "$lt": 85 } } },
        doc! { "a": [82] },
        true,
    );
    check(
        doc! { "a": { "$elemMatch": { "$gte": 80, "$lt": 85 } } },
        doc! { "a": [80, 90] },
        true,
    );
    check(
        doc! { "a": { "$elemMatch": { "$gte": 80, "$lt": 85 } } },
        doc! { "a": [79, 90] },
        false,
    );
    check(
        doc! { "a": { "$elemMatch": { "$gt": 1 } } },
        doc! { "a": 5 },
        false,
    );
    check(
        doc! { "a": { "$elemMatch": { "$gt": 1 } } },
        doc! { "a": [[5]] },
        false,
    );
    check(doc! { "a": { "$elemMatch": { "$gt": 1 } } }, doc! {}, false);
    check(
        doc! { "a": { "$elemMatch": { "$ne": 1 } } },
        doc! { "a": [1, 2] },
        true,
    );
    check(
        doc! { "a": { "$elemMatch": { "$ne": 1 } } },
        doc! { "a": [1, 1] },
        false,
    );
    check(
        doc! { "a": { "$elemMatch": { "$type": "string" } } },
        doc! { "a": [1, "x"] },
        true,
    );
    check(
        doc! { "a": { "$elemMatch": { "$in": [3, 4] } } },
        doc! { "a": [1, 4] },
        true,
    );
    check(
        doc! { "a": { "$elemMatch": { "$regex": "^b" } } },
        doc! { "a": ["a", "b"] },
        true,
    );
    check(
        doc! { "a": { "$elemMatch": { "$not": { "$gt": 5 } } } },
        doc! { "a": [6, 7] },
        false,
    );
    check(
        doc! { "a": { "$elemMatch": { "$not": { "$gt": 5 } } } },
        doc! { "a": [6, 1] },
        true,
    );
    check(
        doc! { "a": { "$elemMatch": { "$size": 1 } } },
        doc! { "a": [[1], 2] },
        true,
    );
    check(
        doc! { "a": { "$elemMatch": { "$elemMatch": { "$gt": 2 } } } },
        doc! { "a": [[1, 3]] },
        true,
    );
    check(
        doc! { "a.b": { "$elemMatch": { "$eq": 1 } } },
        doc! { "a": [{ "b": [1] }] },
        true,
    );
    check(
        doc! { "a": { "$elemMatch": { "$exists": true } } },
        doc! { "a": [] },
        false,
    );
    check(
        doc! { "a": { "$elemMatch": { "$exists": true } } },
        doc! { "a": [null] },
        true,
    );
}

#[test]
fn elem_match_document_form() {
    let results =
        doc! { "results": [ { "product": "abc", "score": 10 }, { "product": "xyz", "score": 5 } ] };
    check(
        doc! { "results": { "$elemMatch": { "product": "xyz", "score": { "$gte": 8 } } } },
        results.clone(),
        false,
    );
    check(
        doc! { "results": { "$elemMatch": { "product": "abc", "score": { "$gte": 8 } } } },
        results.clone(),
        true,
    );
    check(
        doc! { "results.product": "xyz", "results.score": { "$gte": 8 } },
        results.clone(),
        true,
    );
    check(
        doc! { "results": { "$elemMatch": { "product": { "$ne": "xyz" } } } },
        results,
        true,
    );
    check(doc! { "a": { "$elemMatch": {} } }, doc! { "a": [1] }, false);
    check(doc! { "a": { "$elemMatch": {} } }, doc! { "a": [{}] }, true);
    check(
        doc! { "a": { "$elemMatch": { "b": 1 } } },
        doc! { "a": { "b": 1 } },
        false,
    );
    // An array element is seen as a document with keys "0", "1"...
    check(
        doc! { "a": { "$elemMatch": { "0": 1 } } },
        doc! { "a": [[1]] },
        true,
    );
    check(
        doc! { "a": { "$elemMatch": { "b": { "$elemMatch": { "c": 1 } } } } },
        doc! { "a": [{ "b": [{ "c": 1 }] }] },
        true,
    );
    check(
        doc! { "a": { "$elemMatch": { "$or": [{ "b": 1 }, { "c": 1 }] } } },
        doc! { "a": [{ "c": 1 }] },
        true,
    );
    check(
        doc! { "a": { "$elemMatch": { "$or": [{ "b": 1 }, { "c": 1 }] } } },
        doc! { "a": [{ "d": 1 }] },
        false,
    );
    check(
        doc! { "a": { "$elemMatch": { "b": null } } },
        doc! { "a": [{ "c": 1 }] },
        true,
    );
    check(
        doc! { "a.b": { "$elemMatch": { "c": 1 } } },
        doc! { "a": [{ "b": [{ "c": 1 }] }] },
        true,
    );
}

#[test]
fn regex_look_around_and_back_references_match_as_pcre_does() {
    // pymongo's list_collection_names filter: every name not starting with "system.".
    let not_system = doc! { "name": { "$regex": "^(?!system\\.)" } };
    check(not_system.clone(), doc! { "name": "books" }, true);
    check(not_system, doc! { "name": "system.views" }, false);
    check(
        doc! { "a": { "$regex": "(?<=\\$)\\d+" } },
        doc! { "a": "price $42" },
        true,
    );
    check(
        doc! { "a": { "$regex": "(?<=\\$)\\d+" } },
        doc! { "a": "42 euros" },
        false,
    );
    check(
        doc! { "a": { "$regex": "^(\\w)\\w*\\1$" } },
        doc! { "a": "abca" },
        true,
    );
    check(
        doc! { "a": { "$regex": "^(\\w)\\w*\\1$" } },
        doc! { "a": "abcd" },
        false,
    );
    // Options apply to the backtracking engine too.
    check(
        doc! { "a": { "$regex": "^(?=AB)", "$options": "i" } },
        doc! { "a": "abc" },
        true,
    );
    check(
        doc! { "a": { "$regex": "^(?=b)", "$options": "m" } },
        doc! { "a": "a\nb" },
        true,
    );
}

#[test]
fn regex_operator_and_options() {
    check(doc! { "a": { "$regex": "^ab" } }, doc! { "a": "abc" }, true);
    check(
        doc! { "a": { "$regex": "^ab" } },
        doc! { "a": "cab" },
        false,
    );
    check(doc! { "a": { "$regex": "^ab" } }, doc! { "a": 5 }, false);
    check(doc! { "a": { "$regex": "^ab" } }, doc! {}, false);
    check(
        doc! { "a": { "$regex": "^ab" } },
        doc! { "a": ["x", "abz"] },
        true,
    );
    check(
        doc! { "a": { "$regex": "^AB", "$options": "i" } },
        doc! { "a": "abc" },
        true,
    );
    check(
        doc! { "a": { "$options": "i", "$regex": "^AB" } },
        doc! { "a": "abc" },
        true,
    );
    check(
        doc! { "a": { "$regex": "^AB" } },
        doc! { "a": "abc" },
        false,
    );
    check(
        doc! { "a": { "$regex": regex("^AB", "i") } },
        doc! { "a": "abc" },
        true,
    );
    check(
        doc! { "a": { "$regex": regex("^AB", "") , "$options": "i" } },
        doc! { "a": "abc" },
        true,
    );
    check(
        doc! { "a": { "$regex": "^b", "$options": "m" } },
        doc! { "a": "a\nb" },
        true,
    );
    check(
        doc! { "a": { "$regex": "^b" } },
        doc! { "a": "a\nb" },
        false,
    );
    check(
        doc! { "a": { "$regex": "a.b", "$options": "s" } },
        doc! { "a": "a\nb" },
        true,
    );
    check(
        doc! { "a": { "$regex": "a.b" } },
        doc! { "a": "a\nb" },
        false,
    );
    check(
        doc! { "a": { "$regex": "a b # spaced out", "$options": "x" } },
        doc! { "a": "ab" },
        true,
    );
    check(
        doc! { "a": { "$regex": "é", "$options": "iu" } },
        doc! { "a": "CAFÉ" },
        true,
    );
    check(doc! { "a": regex("^x", "") }, doc! { "a": "xy" }, true);
    check(
        doc! { "a": regex("^x", "") },
        doc! { "a": Bson::Symbol("xy".into()) },
        true,
    );
    check(doc! { "a": regex("^x", "") }, doc! { "a": "yx" }, false);
    // A regular expression also matches an identical stored regular expression.
    check(
        doc! { "a": regex("x", "") },
        doc! { "a": regex("x", "") },
        true,
    );
    check(
        doc! { "a": { "$regex": "x" } },
        doc! { "a": regex("x", "") },
        true,
    );
    check(
        doc! { "a": { "$regex": "x", "$options": "i" } },
        doc! { "a": regex("x", "") },
        false,
    );
    check(
        doc! { "a": { "$regex": "^a", "$ne": "abc" } },
        doc! { "a": "abd" },
        true,
    );
    check(
        doc! { "a": { "$regex": "^a", "$ne": "abc" } },
        doc! { "a": "abc" },
        false,
    );
}

#[test]
fn not() {
    check(
        doc! { "a": { "$not": { "$gt": 5 } } },
        doc! { "a": 3 },
        true,
    );
    check(
        doc! { "a": { "$not": { "$gt": 5 } } },
        doc! { "a": 6 },
        false,
    );
    check(doc! { "a": { "$not": { "$gt": 5 } } }, doc! {}, true);
    check(
        doc! { "a": { "$not": { "$gt": 5 } } },
        doc! { "a": "x" },
        true,
    );
    check(
        doc! { "a": { "$not": { "$gt": 5 } } },
        doc! { "a": [1, 6] },
        false,
    );
    check(
        doc! { "a": { "$not": { "$gt": 1, "$lt": 5 } } },
        doc! { "a": 3 },
        false,
    );
    check(
        doc! { "a": { "$not": { "$gt": 1, "$lt": 5 } } },
        doc! { "a": 7 },
        true,
    );
    check(
        doc! { "a": { "$not": { "$eq": 5 } } },
        doc! { "a": [5, 6] },
        false,
    );
    check(
        doc! { "a": { "$not": regex("^a", "") } },
        doc! { "a": "abc" },
        false,
    );
    check(
        doc! { "a": { "$not": regex("^a", "") } },
        doc! { "a": "b" },
        true,
    );
    check(doc! { "a": { "$not": regex("^a", "") } }, doc! {}, true);
    check(
        doc! { "a": { "$not": regex("^a", "") } },
        doc! { "a": 5 },
        true,
    );
    check(
        doc! { "a": { "$not": { "$regex": "^a" } } },
        doc! { "a": "b" },
        true,
    );
    check(
        doc! { "a": { "$not": { "$regex": "^A", "$options": "i" } } },
        doc! { "a": "abc" },
        false,
    );
    check(
        doc! { "a": { "$not": { "$in": [1, 2] } } },
        doc! { "a": 3 },
        true,
    );
    check(
        doc! { "a": { "$not": { "$not": { "$eq": 1 } } } },
        doc! { "a": 1 },
        true,
    );
    check(
        doc! { "a": { "$not": { "$elemMatch": { "$gt": 1 } } } },
        doc! { "a": [0, 1] },
        true,
    );
    check(doc! { "a": { "$not": { "$exists": true } } }, doc! {}, true);
}

#[test]
fn logical_operators() {
    check(
        doc! { "$and": [{ "a": 1 }, { "b": 2 }] },
        doc! { "a": 1, "b": 2 },
        true,
    );
    check(
        doc! { "$and": [{ "a": 1 }, { "b": 2 }] },
        doc! { "a": 1 },
        false,
    );
    check(
        doc! { "$and": [{ "a": { "$gt": 1 } }, { "a": { "$lt": 5 } }] },
        doc! { "a": [0, 10] },
        true,
    );
    check(
        doc! { "$or": [{ "a": 1 }, { "b": 2 }] },
        doc! { "b": 2 },
        true,
    );
    check(
        doc! { "$or": [{ "a": 1 }, { "b": 2 }] },
        doc! { "c": 1 },
        false,
    );
    check(doc! { "$or": [{}] }, doc! { "c": 1 }, true);
    check(
        doc! { "$nor": [{ "a": 1 }, { "b": 2 }] },
        doc! { "c": 1 },
        true,
    );
    check(
        doc! { "$nor": [{ "a": 1 }, { "b": 2 }] },
        doc! { "a": 1 },
        false,
    );
    check(
        doc! { "$nor": [{ "price": 1.99 }, { "sale": true }] },
        doc! {},
        true,
    );
    check(
        doc! { "$or": [{ "$and": [{ "a": 1 }, { "b": 1 }] }, { "c": 1 }] },
        doc! { "a": 1, "b": 1 },
        true,
    );
    check(
        doc! { "$or": [{ "$and": [{ "a": 1 }, { "b": 1 }] }, { "c": 1 }] },
        doc! { "a": 1 },
        false,
    );
    check(
        doc! { "a": 1, "$or": [{ "b": 1 }, { "c": 1 }] },
        doc! { "a": 1, "c": 1 },
        true,
    );
    check(
        doc! { "a": 1, "$or": [{ "b": 1 }, { "c": 1 }] },
        doc! { "a": 2, "c": 1 },
        false,
    );
}

#[test]
fn modulo() {
    check(doc! { "a": { "$mod": [4, 0] } }, doc! { "a": 8 }, true);
    check(doc! { "a": { "$mod": [4, 0] } }, doc! { "a": 9 }, false);
    check(doc! { "a": { "$mod": [4, 0] } }, doc! { "a": 8.7 }, true);
    check(doc! { "a": { "$mod": [4, 0] } }, doc! { "a": -8_i64 }, true);
    check(doc! { "a": { "$mod": [4, 1] } }, doc! { "a": -7 }, false);
    check(doc! { "a": { "$mod": [4, -3] } }, doc! { "a": -7 }, true);
    check(doc! { "a": { "$mod": [4, 0] } }, doc! { "a": "8" }, false);
    check(doc! { "a": { "$mod": [4, 0] } }, doc! { "a": [1, 8] }, true);
    check(doc! { "a": { "$mod": [4.5, 0] } }, doc! { "a": 8 }, true);
}

#[test]
fn positional_match_details() {
    check_index(doc! { "a": 5 }, doc! { "a": [4, 5] }, Some(Some(1)));
    check_index(doc! { "a": [4, 5] }, doc! { "a": [4, 5] }, Some(None));
    check_index(doc! { "a": 6 }, doc! { "a": [4, 5] }, None);
    check_index(doc! { "a": 5 }, doc! { "a": 5 }, Some(None));
    check_index(
        doc! { "grades": { "$gte": 85 } },
        doc! { "grades": [80, 85, 90] },
        Some(Some(1)),
    );
    check_index(
        doc! { "a.b": 2 },
        doc! { "a": [{ "b": 1 }, { "b": 2 }] },
        Some(Some(1)),
    );
    // The outermost array gives the index.
    check_index(
        doc! { "a.b": 2 },
        doc! { "a": [{ "b": [1, 2] }] },
        Some(Some(0)),
    );
    check_index(
        doc! { "a.b": [1, 2] },
        doc! { "a": [{ "b": 0 }, { "b": [1, 2] }] },
        Some(Some(1)),
    );
    // On the positional branch of an index component, the index comes from further down.
    check_index(
        doc! { "a.0.b": 2 },
        doc! { "a": [{ "b": [1, 2] }] },
        Some(Some(1)),
    );
    check_index(
        doc! { "a": { "$elemMatch": { "$gt": 3 } } },
        doc! { "a": [1, 5] },
        Some(Some(1)),
    );
    check_index(
        doc! { "a": { "$elemMatch": { "b": 2 } } },
        doc! { "a": [{ "b": 1 }, { "b": 2 }] },
        Some(Some(1)),
    );
    check_index(
        doc! { "x": 1, "a": 5 },
        doc! { "x": 1, "a": [5] },
        Some(Some(0)),
    );
    // ANDed predicates: the last one that went through an array wins, as in MongoDB.
    check_index(
        doc! { "a": 5, "b": 7 },
        doc! { "a": [5], "b": [6, 7] },
        Some(Some(1)),
    );
    check_index(
        doc! { "b": 7, "a": 5 },
        doc! { "a": [5], "b": [6, 7] },
        Some(Some(0)),
    );
    check_index(
        doc! { "a": 5, "b": 1 },
        doc! { "a": [0, 5], "b": 1 },
        Some(Some(1)),
    );
    check_index(
        doc! { "$and": [{ "a": 5 }] },
        doc! { "a": [0, 5] },
        Some(Some(1)),
    );
    check_index(
        doc! { "a": { "$all": [4, 5] } },
        doc! { "a": [4, 5] },
        Some(Some(1)),
    );
    // $or, $nor and negations record nothing.
    check_index(doc! { "$or": [{ "a": 5 }] }, doc! { "a": [5] }, Some(None));
    check_index(doc! { "a": { "$ne": 1 } }, doc! { "a": [2] }, Some(None));
    check_index(
        doc! { "a": { "$size": 2 } },
        doc! { "a": [1, 2] },
        Some(None),
    );
    check_index(
        doc! { "a.b": { "$size": 1 } },
        doc! { "a": [{ "b": [] }, { "b": [1] }] },
        Some(Some(1)),
    );
}

#[test]
fn planner_view_of_field_predicates() {
    let filter = Filter::parse(&doc! {
        "a": 5,
        "b": { "$gt": 1, "$lt": 9 },
        "$and": [{ "c": { "$in": [1, 2] } }],
        "$or": [{ "d": 1 }, { "e": 2 }],
    })
    .unwrap();
    let seen: Vec<(String, &str)> = filter
        .field_predicates()
        .map(|(path, predicate)| (path.as_str().to_string(), predicate.operator()))
        .collect();
    assert_eq!(
        seen,
        [
            ("a".to_string(), "$eq"),
            ("b".into(), "$gt"),
            ("b".into(), "$lt"),
            ("c".into(), "$in")
        ]
    );
    assert_eq!(filter.equality_on("a"), Some(&Bson::Int32(5)));
    assert_eq!(filter.equality_on("b"), None);
    assert_eq!(filter.equality_on("d"), None);
}

#[test]
fn element_matcher_has_pull_semantics() {
    use spillway_doc::filter::ElementMatcher;
    let check_element = |condition: Bson, element: Bson, expected: bool| {
        let matcher = ElementMatcher::parse("arr", &condition).unwrap();
        assert_eq!(
            matcher.matches_bson(&element).unwrap(),
            expected,
            "{condition} on {element}"
        );
    };
    check_element(Bson::Int32(5), Bson::Double(5.0), true);
    check_element(Bson::Int32(5), Bson::Array(vec![Bson::Int32(5)]), false);
    check_element(bson::bson!({ "$gte": 6 }), Bson::Int32(6), true);
    check_element(bson::bson!({ "$gte": 6 }), Bson::Int32(5), false);
    check_element(bson::bson!({ "$gte": 6 }), bson::bson!([7]), false);
    check_element(
        bson::bson!({ "$in": ["a", "b"] }),
        Bson::String("b".into()),
        true,
    );
    check_element(
        bson::bson!({ "score": 8, "item": "B" }),
        bson::bson!({ "item": "B", "score": 8, "x": 1 }),
        true,
    );
    check_element(bson::bson!({ "score": 8 }), Bson::Int32(8), false);
    check_element(
        bson::bson!({ "answers": { "$elemMatch": { "q": 2, "a": { "$gte": 8 } } } }),
        bson::bson!({ "answers": [{ "q": 1, "a": 9 }, { "q": 2, "a": 8 }] }),
        true,
    );
    check_element(regex("^x", ""), Bson::String("xy".into()), true);
    check_element(regex("^x", ""), Bson::String("yx".into()), false);
    check_element(bson::bson!([1, 2]), bson::bson!([1, 2]), true);
    check_element(bson::bson!([1, 2]), bson::bson!([2, 1]), false);
}
