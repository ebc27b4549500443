//! The exact error messages for invalid filters, reviewed as one insta snapshot: each line is
//! a filter and what the parser says about it. The operators of the crate's optional
//! features (`$where`, `$text`, geospatial) have a snapshot of their own with the features
//! on, and without them one test each that they are refused, naming the missing feature.

use std::fmt::Write as _;

use bson::{Bson, Document, Regex, doc};
use spillway_doc::DocError;
use spillway_doc::filter::{ElementMatcher, Filter};

fn regex(pattern: &str, options: &str) -> Bson {
    Bson::RegularExpression(Regex {
        pattern: pattern.try_into().unwrap(),
        options: options.try_into().unwrap(),
    })
}

fn invalid_filters() -> Vec<Document> {
    vec![
        doc! { "$foo": 1 },
        doc! { "a": { "$foo": 1 } },
        doc! { "a": { "$gt": 1, "b": 2 } },
        doc! { "flags": { "$bitsAllSet": 3 } },
        doc! { "$and": [] },
        doc! { "$or": {} },
        doc! { "$nor": [{ "a": 1 }, 5] },
        doc! { "$and": [{ "a": { "$in": 5 } }] },
        doc! { "a": { "$in": 5 } },
        doc! { "a": { "$nin": "x" } },
        doc! { "a": { "$in": [{ "$gt": 1 }] } },
        doc! { "a": { "$all": 1 } },
        doc! { "a": { "$all": [{ "$elemMatch": { "b": 1 } }, 5] } },
        doc! { "a": { "$all": [{ "$gt": 1 }] } },
        doc! { "a": { "$size": 1.5 } },
        doc! { "a": { "$size": -1 } },
        doc! { "a": { "$size": "2" } },
        doc! { "a": { "$type": "text" } },
        doc! { "a": { "$type": 99 } },
        doc! { "a": { "$type": 2.5 } },
        doc! { "a": { "$type": true } },
        doc! { "a": { "$elemMatch": 1 } },
        doc! { "a": { "$elemMatch": { "$gt": 1, "b": 1 } } },
        doc! { "a": { "$regex": 5 } },
        doc! { "a": { "$options": "i" } },
        doc! { "a": { "$regex": "x", "$options": 1 } },
        doc! { "a": { "$regex": regex("x", "i"), "$options": "m" } },
        doc! { "a": { "$regex": "x", "$options": "z" } },
        doc! { "a": { "$regex": "(?<=a+)b" } },
        doc! { "a": { "$regex": "(unclosed" } },
        doc! { "a": regex("[", "") },
        doc! { "a": { "$in": [regex("(", "")] } },
        doc! { "a": { "$not": 5 } },
        doc! { "a": { "$not": {} } },
        doc! { "a": { "$not": { "b": 1 } } },
        doc! { "a": { "$ne": regex("x", "") } },
        doc! { "a": Bson::Undefined },
        doc! { "a": { "$gt": Bson::Undefined } },
        doc! { "a": { "$mod": [0, 1] } },
        doc! { "a": { "$mod": [1] } },
        doc! { "a": { "$mod": "x" } },
        doc! { "a..b": 1 },
        doc! { ".a": 1 },
        doc! { "a": { "$elemMatch": { "b": { "$bad": 1 } } } },
    ]
}

/// Invalid uses of the operators that the `js`, `text` and `geo` features bring.
#[cfg(all(feature = "js", feature = "text", feature = "geo"))]
fn invalid_filters_of_optional_operators() -> Vec<Document> {
    vec![
        doc! { "$where": 5 },
        doc! { "$text": { "$search": 1 } },
        doc! { "loc": { "$near": [1, 2], "$gt": 0 } },
        doc! { "$or": [{ "loc": { "$near": [1, 2] } }] },
        doc! { "loc": { "$geoWithin": { "$box": [[0, 0]] } } },
        doc! { "loc": { "$geoWithin": { "$geometry": { "type": "Polygon", "coordinates": [[[0, 0], [1, 0], [1, 1]]] } } } },
    ]
}

/// Each filter's error, one per line, for a snapshot (each must be an invalid filter error).
fn error_report(filters: Vec<Document>) -> String {
    let mut report = String::new();
    for filter in filters {
        let error = Filter::parse(&filter).expect_err(&format!("{filter} should be refused"));
        assert!(
            matches!(error, DocError::InvalidFilter { .. }),
            "{filter}: {error:?}"
        );
        let message = error.to_string();
        assert!(!message.ends_with('.'), "no trailing period: {message}");
        writeln!(report, "{filter}\n    => {message}").unwrap();
    }
    report
}

#[test]
fn invalid_filter_messages() {
    insta::assert_snapshot!(error_report(invalid_filters()));
}

#[test]
#[cfg(all(feature = "js", feature = "text", feature = "geo"))]
fn invalid_filter_messages_of_optional_operators() {
    insta::assert_snapshot!(error_report(invalid_filters_of_optional_operators()));
}

/// Asserts that each filter is refused with an invalid filter error whose message is
/// `expected`: an operator of a feature this build left out.
#[cfg(not(all(feature = "js", feature = "text", feature = "geo")))]
fn assert_refused(filters: &[Document], expected: &str) {
    for filter in filters {
        let error = Filter::parse(filter).expect_err(&format!("{filter} should be refused"));
        assert!(
            matches!(error, DocError::InvalidFilter { .. }),
            "{filter}: {error:?}"
        );
        assert!(
            error.to_string().ends_with(expected),
            "{filter}: {error} should end with {expected:?}"
        );
    }
}

#[test]
#[cfg(not(feature = "js"))]
fn where_needs_the_js_feature() {
    assert_refused(
        &[
            doc! { "$where": "this.a == 1" },
            doc! { "$where": Bson::JavaScriptCode("function() { return true }".into()) },
            doc! { "$and": [{ "a": 1 }, { "$where": "true" }] },
        ],
        "$where needs spillway-doc's `js` feature",
    );
}

#[test]
#[cfg(not(feature = "text"))]
fn text_needs_the_text_feature() {
    assert_refused(
        &[
            doc! { "$text": { "$search": "coffee" } },
            doc! { "$and": [{ "a": 1 }, { "$text": { "$search": "tea -milk" } }] },
        ],
        "$text needs spillway-doc's `text` feature",
    );
}

#[test]
#[cfg(not(feature = "geo"))]
fn geospatial_operators_need_the_geo_feature() {
    let point = doc! { "type": "Point", "coordinates": [1.0, 2.0] };
    let polygon = doc! {
        "type": "Polygon",
        "coordinates": [[[0.0, 0.0], [3.0, 0.0], [3.0, 3.0], [0.0, 0.0]]],
    };
    for (filter, operator) in [
        (
            doc! { "loc": { "$geoWithin": { "$geometry": polygon.clone() } } },
            "$geoWithin",
        ),
        (
            doc! { "loc": { "$within": { "$box": [[0, 0], [1, 1]] } } },
            "$geoWithin",
        ),
        (
            doc! { "loc": { "$geoIntersects": { "$geometry": polygon } } },
            "$geoIntersects",
        ),
        (
            doc! { "loc": { "$near": [1, 2], "$maxDistance": 5 } },
            "$near",
        ),
        (
            doc! { "loc": { "$nearSphere": { "$geometry": point } } },
            "$nearSphere",
        ),
    ] {
        assert_refused(
            std::slice::from_ref(&filter),
            &format!("invalid filter at 'loc': {operator} needs spillway-doc's `geo` feature"),
        );
    }
}

#[test]
fn invalid_element_conditions() {
    let mut report = String::new();
    for condition in [
        Bson::Document(doc! { "$gte": 1, "$foo": 2 }),
        Bson::Document(doc! { "a": { "$in": 1 } }),
        regex("(", ""),
        Bson::Undefined,
    ] {
        let error = ElementMatcher::parse("scores", &condition).unwrap_err();
        writeln!(report, "{condition}\n    => {error}").unwrap();
    }
    insta::assert_snapshot!(report);
}
