//! Aggregation expressions, data-driven: each case is an expression, the document it is
//! evaluated on, and the result or MongoDB's error code. The table is snapshotted per family
//! (`cargo insta review` shows any change), and every case that names a code asserts it.
//! Examples follow MongoDB's reference pages, written out here, with the edge cases a user
//! meets: missing fields, null, mixed numeric types, empty arrays, wrong types.

use std::fmt::Write as _;

use bson::{Bson, Document, bson, doc};
use spillway_doc::DocError;
use spillway_doc::expr::{Expression, Variables};

/// One case: the expression, the document, and the MongoDB code expected (0 for success).
type Case = (Bson, Document, i32);

fn render(cases: &[Case]) -> String {
    let mut out = String::new();
    for (expression, document, code) in cases {
        let result = Expression::parse(expression)
            .and_then(|parsed| parsed.evaluate(document, &Variables::default()));
        let shown = match &result {
            Ok(Some(value)) => format!("{value}"),
            Ok(None) => "missing".to_string(),
            Err(DocError::Expression { code, message }) => format!("error {code}: {message}"),
            Err(other) => format!("error: {other}"),
        };
        match (&result, code) {
            (Err(DocError::Expression { code: actual, .. }), expected) if *expected != 0 => {
                assert_eq!(actual, expected, "{expression} on {document}: {shown}");
            }
            (Ok(_), 0) => {}
            _ => panic!("{expression} on {document}: expected code {code}, got {shown}"),
        }
        let _ = writeln!(out, "{expression}  on {document}\n  => {shown}");
    }
    out
}

#[test]
fn arithmetic() {
    let d = doc! { "price": 10, "fee": 2.5, "qty": 3_i64, "big": i32::MAX, "s": "x", "date": bson::DateTime::from_millis(1_000), "n": null };
    let cases: Vec<Case> = vec![
        (bson!({ "$add": ["$price", "$fee"] }), d.clone(), 0),
        (bson!({ "$add": ["$price", "$qty"] }), d.clone(), 0),
        (bson!({ "$add": ["$big", 1] }), d.clone(), 0),
        (bson!({ "$add": ["$date", 1000] }), d.clone(), 0),
        (bson!({ "$add": ["$price", "$missing"] }), d.clone(), 0),
        (bson!({ "$add": ["$price", "$n"] }), d.clone(), 0),
        (bson!({ "$add": ["$price", "$s"] }), d.clone(), 16554),
        (bson!({ "$subtract": ["$date", "$date"] }), d.clone(), 0),
        (bson!({ "$subtract": ["$price", "$fee"] }), d.clone(), 0),
        (bson!({ "$multiply": ["$price", "$qty"] }), d.clone(), 0),
        (bson!({ "$divide": ["$price", 4] }), d.clone(), 0),
        (bson!({ "$divide": ["$price", 0] }), d.clone(), 2),
        (bson!({ "$mod": ["$price", 3] }), d.clone(), 0),
        (bson!({ "$abs": -5 }), d.clone(), 0),
        (bson!({ "$ceil": 2.1 }), d.clone(), 0),
        (bson!({ "$floor": -2.1 }), d.clone(), 0),
        (bson!({ "$round": [2.5, 0] }), d.clone(), 0),
        (bson!({ "$round": [3.5, 0] }), d.clone(), 0),
        (bson!({ "$round": [1234.5678, 2] }), d.clone(), 0),
        (bson!({ "$trunc": [7.89, 1] }), d.clone(), 0),
        (bson!({ "$sqrt": 25 }), d.clone(), 0),
        (bson!({ "$sqrt": -1 }), d.clone(), 28714),
        (bson!({ "$pow": [2, 10] }), d.clone(), 0),
        (bson!({ "$pow": [0, -1] }), d.clone(), 28764),
        (bson!({ "$log": [100, 10] }), d.clone(), 0),
        (bson!({ "$ln": 0 }), d.clone(), 28766),
        (bson!({ "$sum": [[1, 2.5, "x", 3_i64]] }), d.clone(), 0),
        (bson!({ "$avg": [[1, 2, 3, 4]] }), d.clone(), 0),
        (bson!({ "$avg": [[]] }), d.clone(), 0),
        (bson!({ "$max": [1, "$missing", 7, null] }), d.clone(), 0),
        (bson!({ "$min": [[4, 2, 8]] }), d.clone(), 0),
    ];
    insta::assert_snapshot!(render(&cases));
}

#[test]
fn comparison_boolean_and_conditional() {
    let d = doc! { "qty": 250, "name": "abc", "n": null };
    let cases: Vec<Case> = vec![
        (bson!({ "$cmp": ["$qty", 250] }), d.clone(), 0),
        (bson!({ "$gt": ["$qty", 100] }), d.clone(), 0),
        (bson!({ "$eq": ["$missing", null] }), d.clone(), 0),
        (bson!({ "$lt": ["$qty", "abc"] }), d.clone(), 0),
        (bson!({ "$and": [1, "$qty", true] }), d.clone(), 0),
        (
            bson!({ "$or": [0, "$missing", { "$gt": ["$qty", 1] }] }),
            d.clone(),
            0,
        ),
        (bson!({ "$not": [[]] }), d.clone(), 0),
        (
            bson!({ "$cond": { "if": { "$gte": ["$qty", 250] }, "then": 30, "else": 20 } }),
            d.clone(),
            0,
        ),
        (bson!({ "$cond": [false, 1, 2] }), d.clone(), 0),
        (
            bson!({ "$ifNull": ["$missing", "$n", "default"] }),
            d.clone(),
            0,
        ),
        (
            bson!({ "$switch": { "branches": [{ "case": { "$lt": ["$qty", 100] }, "then": "low" }, { "case": { "$lt": ["$qty", 500] }, "then": "mid" }], "default": "high" } }),
            d.clone(),
            0,
        ),
        (
            bson!({ "$switch": { "branches": [{ "case": false, "then": 1 }] } }),
            d.clone(),
            40066,
        ),
        (
            bson!({ "$let": { "vars": { "total": { "$add": ["$qty", 1] } }, "in": { "$multiply": ["$$total", 2] } } }),
            d.clone(),
            0,
        ),
        (bson!({ "$add": ["$$nosuch", 1] }), d.clone(), 17276),
        (bson!({ "$nosuch": 1 }), d.clone(), 168),
        (bson!({ "$add": 1, "$sub": 2 }), d.clone(), 15983),
    ];
    insta::assert_snapshot!(render(&cases));
}

#[test]
fn arrays_and_sets() {
    let d = doc! { "a": [1, 2, 3, 4, 5], "e": [], "docs": [{ "x": 1 }, { "x": 2 }, { "y": 3 }], "s": "x", "n": null };
    let cases: Vec<Case> = vec![
        (bson!({ "$size": "$a" }), d.clone(), 0),
        (bson!({ "$size": "$missing" }), d.clone(), 17124),
        (bson!({ "$arrayElemAt": ["$a", -1] }), d.clone(), 0),
        (bson!({ "$arrayElemAt": ["$a", 10] }), d.clone(), 0),
        (bson!({ "$arrayElemAt": ["$s", 0] }), d.clone(), 28689),
        (bson!({ "$first": "$a" }), d.clone(), 0),
        (bson!({ "$last": "$e" }), d.clone(), 0),
        (bson!({ "$slice": ["$a", 2] }), d.clone(), 0),
        (bson!({ "$slice": ["$a", -2] }), d.clone(), 0),
        (bson!({ "$slice": ["$a", 1, 2] }), d.clone(), 0),
        (bson!({ "$slice": ["$a", -10, 2] }), d.clone(), 0),
        (bson!({ "$slice": ["$a", 1, 0] }), d.clone(), 28729),
        (bson!({ "$concatArrays": ["$a", [6]] }), d.clone(), 0),
        (bson!({ "$in": [3, "$a"] }), d.clone(), 0),
        (bson!({ "$in": [3, "$s"] }), d.clone(), 40081),
        (bson!({ "$indexOfArray": ["$a", 4] }), d.clone(), 0),
        (bson!({ "$range": [0, 10, 3] }), d.clone(), 0),
        (bson!({ "$reverseArray": "$a" }), d.clone(), 0),
        (
            bson!({ "$filter": { "input": "$a", "as": "v", "cond": { "$gt": ["$$v", 2] } } }),
            d.clone(),
            0,
        ),
        (
            bson!({ "$filter": { "input": "$a", "cond": { "$gt": ["$$this", 1] }, "limit": 2 } }),
            d.clone(),
            0,
        ),
        (
            bson!({ "$map": { "input": "$a", "as": "v", "in": { "$multiply": ["$$v", 10] } } }),
            d.clone(),
            0,
        ),
        (
            bson!({ "$reduce": { "input": "$a", "initialValue": 0, "in": { "$add": ["$$value", "$$this"] } } }),
            d.clone(),
            0,
        ),
        (
            bson!({ "$zip": { "inputs": [[1, 2], ["a", "b", "c"]] } }),
            d.clone(),
            0,
        ),
        (
            bson!({ "$zip": { "inputs": [[1, 2], ["a", "b", "c"]], "useLongestLength": true, "defaults": [0, "z"] } }),
            d.clone(),
            0,
        ),
        (Bson::String("$docs.x".into()), d.clone(), 0),
        (bson!({ "$setUnion": [[1, 2], [2, 3]] }), d.clone(), 0),
        (
            bson!({ "$setIntersection": [[1, 2, 3], [2, 3, 4]] }),
            d.clone(),
            0,
        ),
        (bson!({ "$setDifference": [[1, 2, 3], [2]] }), d.clone(), 0),
        (bson!({ "$setEquals": [[1, 2], [2, 1, 1]] }), d.clone(), 0),
        (bson!({ "$isArray": "$n" }), d.clone(), 0),
    ];
    insta::assert_snapshot!(render(&cases));
}

#[test]
fn strings_objects_and_types() {
    let d = doc! { "name": "  Hello World  ", "csv": "a,b,c", "item": "café", "obj": { "a": 1, "b": 2 }, "n": null, "num": 42, "text": "17" };
    let cases: Vec<Case> = vec![
        (bson!({ "$concat": ["a", "-", "b"] }), d.clone(), 0),
        (bson!({ "$concat": ["a", "$missing"] }), d.clone(), 0),
        (bson!({ "$concat": ["a", 1] }), d.clone(), 16702),
        (bson!({ "$toUpper": "$csv" }), d.clone(), 0),
        (bson!({ "$toLower": "$n" }), d.clone(), 0),
        (bson!({ "$trim": { "input": "$name" } }), d.clone(), 0),
        (
            bson!({ "$ltrim": { "input": "xxhixx", "chars": "x" } }),
            d.clone(),
            0,
        ),
        (bson!({ "$split": ["$csv", ","] }), d.clone(), 0),
        (bson!({ "$split": ["$csv", ""] }), d.clone(), 40087),
        (bson!({ "$strLenCP": "$item" }), d.clone(), 0),
        (bson!({ "$strLenBytes": "$item" }), d.clone(), 0),
        (bson!({ "$substrCP": ["$item", 1, 3] }), d.clone(), 0),
        (bson!({ "$indexOfCP": ["$item", "é"] }), d.clone(), 0),
        (bson!({ "$strcasecmp": ["ABC", "abc"] }), d.clone(), 0),
        (
            bson!({ "$regexMatch": { "input": "$csv", "regex": "^a," } }),
            d.clone(),
            0,
        ),
        (
            bson!({ "$regexFind": { "input": "$csv", "regex": "(b)" } }),
            d.clone(),
            0,
        ),
        (
            bson!({ "$regexFindAll": { "input": "$csv", "regex": "[a-c]" } }),
            d.clone(),
            0,
        ),
        (
            bson!({ "$regexFindAll": { "input": "$csv", "regex": "([a-c])(?=,)" } }),
            d.clone(),
            0,
        ),
        (
            bson!({ "$replaceAll": { "input": "$csv", "find": ",", "replacement": ";" } }),
            d.clone(),
            0,
        ),
        (
            bson!({ "$mergeObjects": ["$obj", { "b": 3, "c": 4 }, "$missing"] }),
            d.clone(),
            0,
        ),
        (bson!({ "$objectToArray": "$obj" }), d.clone(), 0),
        (
            bson!({ "$arrayToObject": [[["k", 1], ["l", 2]]] }),
            d.clone(),
            0,
        ),
        (
            bson!({ "$arrayToObject": [[{ "k": "x", "v": true }]] }),
            d.clone(),
            0,
        ),
        (bson!({ "$getField": "num" }), d.clone(), 0),
        (bson!({ "$type": "$missing" }), d.clone(), 0),
        (bson!({ "$type": "$obj" }), d.clone(), 0),
        (bson!({ "$isNumber": "$num" }), d.clone(), 0),
        (bson!({ "$toInt": "$text" }), d.clone(), 0),
        (bson!({ "$toInt": "abc" }), d.clone(), 241),
        (bson!({ "$toString": "$num" }), d.clone(), 0),
        (bson!({ "$toDouble": true }), d.clone(), 0),
        (bson!({ "$toBool": 0 }), d.clone(), 0),
        (bson!({ "$toLong": 2.9 }), d.clone(), 0),
        (
            bson!({ "$convert": { "input": "x", "to": "int", "onError": -1 } }),
            d.clone(),
            0,
        ),
        (
            bson!({ "$convert": { "input": "$missing", "to": "int", "onNull": 0 } }),
            d.clone(),
            0,
        ),
        (
            bson!({ "$toObjectId": "5ab9cbfa31c2ab715d42129e" }),
            d.clone(),
            0,
        ),
    ];
    insta::assert_snapshot!(render(&cases));
}

#[test]
fn dates() {
    // 2014-01-01T08:15:39.736Z, a Wednesday.
    let d = doc! { "date": bson::DateTime::from_millis(1_388_564_139_736), "end": bson::DateTime::from_millis(1_420_070_400_000) };
    let cases: Vec<Case> = vec![
        (bson!({ "$year": "$date" }), d.clone(), 0),
        (bson!({ "$month": "$date" }), d.clone(), 0),
        (bson!({ "$dayOfMonth": "$date" }), d.clone(), 0),
        (bson!({ "$hour": "$date" }), d.clone(), 0),
        (bson!({ "$minute": "$date" }), d.clone(), 0),
        (bson!({ "$second": "$date" }), d.clone(), 0),
        (bson!({ "$millisecond": "$date" }), d.clone(), 0),
        (bson!({ "$dayOfYear": "$date" }), d.clone(), 0),
        (bson!({ "$dayOfWeek": "$date" }), d.clone(), 0),
        (bson!({ "$week": "$date" }), d.clone(), 0),
        (bson!({ "$isoWeek": "$date" }), d.clone(), 0),
        (bson!({ "$isoWeekYear": "$date" }), d.clone(), 0),
        (
            bson!({ "$hour": { "date": "$date", "timezone": "+05:30" } }),
            d.clone(),
            0,
        ),
        (
            bson!({ "$hour": { "date": "$date", "timezone": "Europe/Paris" } }),
            d.clone(),
            0,
        ),
        (
            bson!({ "$hour": { "date": "$date", "timezone": "Mars/Olympus" } }),
            d.clone(),
            40485,
        ),
        (bson!({ "$year": "$missing" }), d.clone(), 0),
        (bson!({ "$year": "not a date" }), d.clone(), 16006),
        (
            bson!({ "$dateToString": { "format": "%Y-%m-%d %H:%M:%S.%L %j %U %V", "date": "$date" } }),
            d.clone(),
            0,
        ),
        (
            bson!({ "$dateToString": { "date": "$date" } }),
            d.clone(),
            0,
        ),
        (
            bson!({ "$dateToString": { "date": "$missing", "onNull": "none" } }),
            d.clone(),
            0,
        ),
        (
            bson!({ "$dateTrunc": { "date": "$date", "unit": "month" } }),
            d.clone(),
            0,
        ),
        (
            bson!({ "$dateTrunc": { "date": "$date", "unit": "hour", "binSize": 6 } }),
            d.clone(),
            0,
        ),
        (
            bson!({ "$dateTrunc": { "date": "$date", "unit": "week", "startOfWeek": "monday" } }),
            d.clone(),
            0,
        ),
        (
            bson!({ "$dateAdd": { "startDate": "$date", "unit": "month", "amount": 1 } }),
            d.clone(),
            0,
        ),
        (
            bson!({ "$dateAdd": { "startDate": bson::DateTime::from_millis(1_391_126_400_000_i64), "unit": "month", "amount": 1 } }),
            d.clone(),
            0,
        ),
        (
            bson!({ "$dateSubtract": { "startDate": "$date", "unit": "day", "amount": 2 } }),
            d.clone(),
            0,
        ),
        (
            bson!({ "$dateDiff": { "startDate": "$date", "endDate": "$end", "unit": "year" } }),
            d.clone(),
            0,
        ),
        (
            bson!({ "$dateDiff": { "startDate": "$date", "endDate": "$end", "unit": "day" } }),
            d.clone(),
            0,
        ),
        (
            bson!({ "$dateDiff": { "startDate": "$date", "endDate": "$end", "unit": "fortnight" } }),
            d.clone(),
            5_439_014,
        ),
    ];
    insta::assert_snapshot!(render(&cases));
}

#[test]
fn expr_in_filters() {
    let filter =
        spillway_doc::filter::Filter::parse(&doc! { "$expr": { "$gt": ["$spent", "$budget"] } })
            .unwrap();
    assert!(
        filter
            .matches_document(&doc! { "spent": 400, "budget": 320 })
            .unwrap()
    );
    assert!(
        !filter
            .matches_document(&doc! { "spent": 200, "budget": 320 })
            .unwrap()
    );
    let error =
        spillway_doc::filter::Filter::parse(&doc! { "$expr": { "$bogus": 1 } }).unwrap_err();
    assert!(
        matches!(error, DocError::Expression { code: 168, .. }),
        "{error}"
    );
}
