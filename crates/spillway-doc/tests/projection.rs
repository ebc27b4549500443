//! Table-driven tests of find projections, from MongoDB's "Project Fields to Return from
//! Query", `$slice`, `$elemMatch` and `$` reference pages, plus the error messages of invalid
//! projections as one insta snapshot.

// One-line cases read best with `doc!` literals passed by value.
#![allow(clippy::needless_pass_by_value)]

use std::fmt::Write as _;

use bson::{Document, RawDocumentBuf, doc};
use spillway_doc::filter::Filter;
use spillway_doc::projection::Projection;

#[track_caller]
fn check(projection: Document, document: Document, expected: Document) {
    let parsed =
        Projection::parse(&projection).unwrap_or_else(|error| panic!("{projection}: {error}"));
    let projected = parsed.apply(&document).unwrap();
    assert_eq!(projected, expected, "projection {projection} on {document}");
    let raw = RawDocumentBuf::try_from(&document).unwrap();
    assert_eq!(
        parsed.apply_raw(&raw, None).unwrap(),
        expected,
        "raw: {projection} on {document}"
    );
}

/// Projects `document` as a `find(filter, projection)` would, positional operator included.
#[track_caller]
fn check_positional(
    filter: Document,
    projection: Document,
    document: Document,
    expected: Document,
) {
    let filter = Filter::parse(&filter).unwrap();
    let details = filter
        .match_details_document(&document)
        .unwrap()
        .expect("the filter matches");
    let parsed = Projection::parse(&projection).unwrap();
    assert!(parsed.needs_match_details());
    assert_eq!(
        parsed.apply_matched(&document, Some(details)).unwrap(),
        expected,
        "{projection} on {document}"
    );
}

fn inventory() -> Document {
    doc! {
        "_id": 1,
        "item": "journal",
        "status": "A",
        "size": { "h": 14, "w": 21, "uom": "cm" },
        "instock": [ { "warehouse": "A", "qty": 5 }, { "warehouse": "C", "qty": 15 } ],
    }
}

#[test]
fn inclusion_and_exclusion() {
    check(doc! {}, inventory(), inventory());
    check(
        doc! { "item": 1, "status": 1 },
        inventory(),
        doc! { "_id": 1, "item": "journal", "status": "A" },
    );
    check(
        doc! { "status": 1, "item": 1 },
        inventory(),
        doc! { "_id": 1, "item": "journal", "status": "A" },
    );
    check(
        doc! { "item": true, "status": 1.0 },
        inventory(),
        doc! { "_id": 1, "item": "journal", "status": "A" },
    );
    check(
        doc! { "item": 1, "status": 1, "_id": 0 },
        inventory(),
        doc! { "item": "journal", "status": "A" },
    );
    check(
        doc! { "_id": 0, "item": 5 },
        inventory(),
        doc! { "item": "journal" },
    );
    check(
        doc! { "status": 0, "instock": 0 },
        inventory(),
        doc! { "_id": 1, "item": "journal", "size": { "h": 14, "w": 21, "uom": "cm" } },
    );
    check(
        doc! { "status": false, "instock": 0, "size": 0, "item": 0 },
        inventory(),
        doc! { "_id": 1 },
    );
    check(doc! { "_id": 1 }, inventory(), doc! { "_id": 1 });
    check(
        doc! { "_id": 0 },
        doc! { "_id": 1, "a": 1 },
        doc! { "a": 1 },
    );
    check(
        doc! { "_id": 0, "a": 0 },
        doc! { "_id": 1, "a": 1, "b": 2 },
        doc! { "b": 2 },
    );
    check(doc! { "missing": 1 }, inventory(), doc! { "_id": 1 });
    check(doc! { "missing": 0 }, doc! { "a": 1 }, doc! { "a": 1 });
    check(doc! { "a": 1 }, doc! { "b": 1 }, doc! {});
}

#[test]
fn embedded_documents_and_dotted_paths() {
    check(
        doc! { "item": 1, "status": 1, "size.uom": 1 },
        inventory(),
        doc! { "_id": 1, "item": "journal", "status": "A", "size": { "uom": "cm" } },
    );
    check(
        doc! { "item": 1, "status": 1, "size": { "uom": 1 } },
        inventory(),
        doc! { "_id": 1, "item": "journal", "status": "A", "size": { "uom": "cm" } },
    );
    check(
        doc! { "size.uom": 0 },
        inventory(),
        doc! {
            "_id": 1, "item": "journal", "status": "A", "size": { "h": 14, "w": 21 },
            "instock": [ { "warehouse": "A", "qty": 5 }, { "warehouse": "C", "qty": 15 } ],
        },
    );
    check(
        doc! { "a.b": 1 },
        doc! { "a": { "c": 1 } },
        doc! { "a": {} },
    );
    check(doc! { "a.b": 1 }, doc! { "a": 5 }, doc! {});
    check(
        doc! { "a.b.c": 1 },
        doc! { "a": { "b": { "c": 1, "d": 2 }, "e": 3 } },
        doc! { "a": { "b": { "c": 1 } } },
    );
    check(doc! { "a.b": 0 }, doc! { "a": 5 }, doc! { "a": 5 });
    check(
        doc! { "a.b": 1, "a.c": 1 },
        doc! { "a": { "c": 3, "b": 2, "d": 4 } },
        doc! { "a": { "c": 3, "b": 2 } },
    );
}

#[test]
fn dotted_paths_through_arrays() {
    check(
        doc! { "item": 1, "status": 1, "instock.qty": 1 },
        inventory(),
        doc! { "_id": 1, "item": "journal", "status": "A", "instock": [ { "qty": 5 }, { "qty": 15 } ] },
    );
    let mixed = doc! { "a": [ { "b": 1, "c": 2 }, { "c": 3 }, 5, [ { "b": 2, "c": 1 } ] ] };
    // Inclusion drops scalars, keeps empty documents, recurses into nested arrays.
    check(
        doc! { "a.b": 1 },
        mixed.clone(),
        doc! { "a": [ { "b": 1 }, {}, [ { "b": 2 } ] ] },
    );
    // Exclusion keeps scalars.
    check(
        doc! { "a.b": 0 },
        mixed,
        doc! { "a": [ { "c": 2 }, { "c": 3 }, 5, [ { "c": 1 } ] ] },
    );
    check(doc! { "a.b": 1 }, doc! { "a": [] }, doc! { "a": [] });
    check(doc! { "a.b": 1 }, doc! { "a": [1, 2] }, doc! { "a": [] });
}

#[test]
fn slice() {
    let numbers = doc! { "x": 1, "a": [1, 2, 3, 4, 5] };
    check(
        doc! { "a": { "$slice": 2 } },
        numbers.clone(),
        doc! { "x": 1, "a": [1, 2] },
    );
    check(
        doc! { "a": { "$slice": -2 } },
        numbers.clone(),
        doc! { "x": 1, "a": [4, 5] },
    );
    check(
        doc! { "a": { "$slice": 0 } },
        numbers.clone(),
        doc! { "x": 1, "a": [] },
    );
    check(
        doc! { "a": { "$slice": 10 } },
        numbers.clone(),
        numbers.clone(),
    );
    check(
        doc! { "a": { "$slice": -10 } },
        numbers.clone(),
        numbers.clone(),
    );
    check(
        doc! { "a": { "$slice": 2.0 } },
        numbers.clone(),
        doc! { "x": 1, "a": [1, 2] },
    );
    check(
        doc! { "a": { "$slice": [1, 2] } },
        numbers.clone(),
        doc! { "x": 1, "a": [2, 3] },
    );
    check(
        doc! { "a": { "$slice": [-2, 1] } },
        numbers.clone(),
        doc! { "x": 1, "a": [4] },
    );
    check(
        doc! { "a": { "$slice": [-10, 2] } },
        numbers.clone(),
        doc! { "x": 1, "a": [1, 2] },
    );
    check(
        doc! { "a": { "$slice": [10, 2] } },
        numbers.clone(),
        doc! { "x": 1, "a": [] },
    );
    check(
        doc! { "a": { "$slice": [3, 10] } },
        numbers.clone(),
        doc! { "x": 1, "a": [4, 5] },
    );
    check(
        doc! { "a": { "$slice": i64::MIN } },
        numbers.clone(),
        numbers.clone(),
    );
    // With an inclusion, the sliced field is included.
    check(
        doc! { "_id": 0, "a": { "$slice": 1 }, "x": 1 },
        numbers.clone(),
        doc! { "x": 1, "a": [1] },
    );
    // With an exclusion, other fields stay.
    check(
        doc! { "x": 0, "a": { "$slice": 1 } },
        numbers,
        doc! { "a": [1] },
    );
    check(
        doc! { "a": { "$slice": 1 } },
        doc! { "a": "text" },
        doc! { "a": "text" },
    );
    check(
        doc! { "a": { "$slice": 1 } },
        doc! { "b": 1 },
        doc! { "b": 1 },
    );
    check(
        doc! { "b.a": { "$slice": 1 } },
        doc! { "b": { "a": [1, 2], "c": 1 }, "y": 2 },
        doc! { "b": { "a": [1], "c": 1 }, "y": 2 },
    );
    check(
        doc! { "x": 1, "b.a": { "$slice": 1 } },
        doc! { "x": 1, "b": { "a": [1, 2], "c": 1 }, "y": 2 },
        doc! { "x": 1, "b": { "a": [1] } },
    );
    check(
        doc! { "a.b": { "$slice": 1 } },
        doc! { "a": [ { "b": [1, 2] }, { "b": [3, 4] } ] },
        doc! { "a": [ { "b": [1] }, { "b": [3] } ] },
    );
}

#[test]
fn elem_match() {
    let school = doc! {
        "_id": 1,
        "zipcode": "63109",
        "students": [
            { "name": "john", "school": 102, "age": 10 },
            { "name": "jess", "school": 102, "age": 11 },
            { "name": "jeff", "school": 108, "age": 15 },
        ],
    };
    check(
        doc! { "students": { "$elemMatch": { "school": 102 } } },
        school.clone(),
        doc! { "_id": 1, "students": [ { "name": "john", "school": 102, "age": 10 } ] },
    );
    check(
        doc! { "_id": 0, "students": { "$elemMatch": { "school": 102, "age": { "$gt": 10 } } } },
        school.clone(),
        doc! { "students": [ { "name": "jess", "school": 102, "age": 11 } ] },
    );
    check(
        doc! { "students": { "$elemMatch": { "school": 999 } } },
        school.clone(),
        doc! { "_id": 1 },
    );
    // The $elemMatch field comes after the other inclusions, whatever the order.
    check(
        doc! { "students": { "$elemMatch": { "name": "jeff" } }, "zipcode": 1 },
        school.clone(),
        doc! { "_id": 1, "zipcode": "63109", "students": [ { "name": "jeff", "school": 108, "age": 15 } ] },
    );
    check(
        doc! { "zipcode": 0, "students": { "$elemMatch": { "name": "jeff" } } },
        school,
        doc! { "_id": 1, "students": [ { "name": "jeff", "school": 108, "age": 15 } ] },
    );
    check(
        doc! { "grades": { "$elemMatch": { "$gte": 85 } } },
        doc! { "grades": [80, 85, 90] },
        doc! { "grades": [85] },
    );
    check(
        doc! { "grades": { "$elemMatch": { "$gte": 85 } } },
        doc! { "grades": 90 },
        doc! {},
    );
}

#[test]
fn positional() {
    check_positional(
        doc! { "semester": 1, "grades": { "$gte": 85 } },
        doc! { "grades.$": 1 },
        doc! { "_id": 1, "semester": 1, "grades": [70, 87, 90] },
        doc! { "_id": 1, "grades": [87] },
    );
    check_positional(
        doc! { "grades.grade": { "$gt": 85 } },
        doc! { "grades.$": 1, "name": 1 },
        doc! { "name": "x", "grades": [ { "grade": 80 }, { "grade": 90, "mean": 88 } ] },
        doc! { "name": "x", "grades": [ { "grade": 90, "mean": 88 } ] },
    );
    check_positional(
        doc! { "a.b": 5 },
        doc! { "a.b.$": 1 },
        doc! { "a": { "b": [4, 5], "c": 1 } },
        doc! { "a": { "b": [5] } },
    );
    // Without the details of a match on that array, the positional projection fails.
    let projection = Projection::parse(&doc! { "grades.$": 1 }).unwrap();
    let error = projection.apply(&doc! { "grades": [1, 2] }).unwrap_err();
    assert_eq!(
        error.to_string(),
        "invalid projection: positional projection 'grades.$': the query matched no element of that array"
    );
    assert!(
        !Projection::parse(&doc! { "a": 1 })
            .unwrap()
            .needs_match_details()
    );
}

#[test]
fn modes() {
    assert!(Projection::parse(&doc! { "a": 1 }).unwrap().is_inclusion());
    assert!(
        Projection::parse(&doc! { "_id": 1 })
            .unwrap()
            .is_inclusion()
    );
    assert!(
        Projection::parse(&doc! { "a": { "$elemMatch": {} } })
            .unwrap()
            .is_inclusion()
    );
    assert!(!Projection::parse(&doc! {}).unwrap().is_inclusion());
    assert!(
        !Projection::parse(&doc! { "_id": 0 })
            .unwrap()
            .is_inclusion()
    );
    assert!(
        !Projection::parse(&doc! { "a": { "$slice": 1 } })
            .unwrap()
            .is_inclusion()
    );
    assert!(
        !Projection::parse(&doc! { "a": 0, "_id": 1 })
            .unwrap()
            .is_inclusion()
    );
}

#[test]
fn invalid_projection_messages() {
    let invalid = [
        doc! { "a": 1, "b": 0 },
        doc! { "a": 0, "b": 1 },
        doc! { "a": 1, "a.b": 1 },
        doc! { "a.b": 1, "a": 0 },
        doc! { "a": { "b": 1 }, "a.b": 0 },
        doc! { "a": "x" },
        doc! { "a": null },
        doc! { "a": { "$meta": "searchScore" } },
        doc! { "a": { "$add": [1, 2] } },
        doc! { "a": {} },
        doc! { "a": { "$slice": "x" } },
        doc! { "a": { "$slice": [1] } },
        doc! { "a": { "$slice": [1, 0] } },
        doc! { "a": { "$slice": 1.5 } },
        doc! { "a": { "$slice": 1, "b": 1 } },
        doc! { "a.b": { "$elemMatch": { "c": 1 } } },
        doc! { "a": { "$elemMatch": 1 } },
        doc! { "a": { "$elemMatch": { "$foo": 1 } } },
        doc! { "a.$": 1, "b.$": 1 },
        doc! { "a.$": 0 },
        doc! { "a.$": 1, "c": 0 },
        doc! { "a.$.b": 1 },
        doc! { "a.$": 1, "b": { "$elemMatch": { "c": 1 } } },
        doc! { "$foo": 1 },
        doc! { "a..b": 1 },
    ];
    let mut report = String::new();
    for projection in invalid {
        let error =
            Projection::parse(&projection).expect_err(&format!("{projection} should be refused"));
        let message = error.to_string();
        assert!(!message.ends_with('.'), "no trailing period: {message}");
        writeln!(report, "{projection}\n    => {message}").unwrap();
    }
    insta::assert_snapshot!(report);
}

/// A `$slice` its caller already did keeps the field whole, and `{field: {$slice: k}}` then
/// has nothing left to do; other fields keep their meaning in both modes.
#[test]
fn a_slice_done_by_the_caller_keeps_the_window_whole() {
    let window = doc! { "_id": 1, "a": [1, 2], "b": 3, "c": 4 };
    let alone = Projection::parse(&doc! { "a": { "$slice": 1 } }).unwrap();
    let mut done = alone.clone();
    done.slice_done("a");
    assert!(done.is_identity());
    assert_eq!(done.apply(&window).unwrap(), window);
    assert!(!alone.is_identity());

    let with_exclusion = Projection::parse(&doc! { "a": { "$slice": 1 }, "c": 0 }).unwrap();
    let mut done = with_exclusion.clone();
    done.slice_done("a");
    assert!(!done.is_identity());
    assert_eq!(
        done.apply(&window).unwrap(),
        doc! { "_id": 1, "a": [1, 2], "b": 3 }
    );

    let with_inclusion = Projection::parse(&doc! { "a": { "$slice": 1 }, "b": 1 }).unwrap();
    let mut done = with_inclusion.clone();
    done.slice_done("a");
    assert!(!done.is_identity());
    assert_eq!(
        done.apply(&window).unwrap(),
        doc! { "_id": 1, "a": [1, 2], "b": 3 }
    );
}
