//! The exact error messages for invalid filters, reviewed as one insta snapshot: each line is
//! a filter and what the parser says about it.

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
        doc! { "$where": 5 },
        doc! { "$text": { "$search": 1 } },
        doc! { "$jsonSchema": {} },
        doc! { "loc": { "$near": [1, 2], "$gt": 0 } },
        doc! { "$or": [{ "loc": { "$near": [1, 2] } }] },
        doc! { "loc": { "$geoWithin": { "$box": [[0, 0]] } } },
        doc! { "loc": { "$geoWithin": { "$geometry": { "type": "Polygon", "coordinates": [[[0, 0], [1, 0], [1, 1]]] } } } },
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

#[test]
fn invalid_filter_messages() {
    let mut report = String::new();
    for filter in invalid_filters() {
        let error = Filter::parse(&filter).expect_err(&format!("{filter} should be refused"));
        assert!(
            matches!(error, DocError::InvalidFilter { .. }),
            "{filter}: {error:?}"
        );
        let message = error.to_string();
        assert!(!message.ends_with('.'), "no trailing period: {message}");
        writeln!(report, "{filter}\n    => {message}").unwrap();
    }
    insta::assert_snapshot!(report);
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
