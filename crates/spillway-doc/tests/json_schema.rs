//! `$jsonSchema`, one line per (schema, document, expected) case, keyword by keyword; then
//! schemas MongoDB refuses with their codes, and the explanations a validator reports.

// One-line cases read best with `doc!` literals passed by value.
#![allow(clippy::needless_pass_by_value)]

use bson::{Bson, Decimal128, Document, RawDocumentBuf, doc, oid::ObjectId};
use spillway_doc::DocError;
use spillway_doc::filter::Filter;

/// Asserts that `{$jsonSchema: schema}` matches `document` exactly when `expected`.
#[track_caller]
fn check(schema: Document, document: Document, expected: bool) {
    let filter = doc! { "$jsonSchema": schema.clone() };
    let parsed = Filter::parse(&filter).unwrap_or_else(|error| panic!("{schema}: {error}"));
    let raw = RawDocumentBuf::try_from(&document).unwrap();
    assert_eq!(
        parsed.matches(&raw).unwrap(),
        expected,
        "schema {schema} on {document}"
    );
    // The explanation exists exactly when the document fails.
    assert_eq!(
        parsed.schema_failure(&raw).unwrap().is_none(),
        expected,
        "explanation of {schema} on {document}"
    );
}

/// Asserts that `{$jsonSchema: schema}` is refused with `code` and a message containing
/// `words`.
#[track_caller]
fn refused(schema: Bson, code: i32, words: &str) {
    let filter = doc! { "$jsonSchema": schema.clone() };
    match Filter::parse(&filter) {
        Err(DocError::InvalidSchema {
            code: actual,
            message,
        }) => {
            assert_eq!(actual, code, "{schema}: {message}");
            assert!(
                message.contains(words),
                "{schema}: {message:?} lacks {words:?}"
            );
            assert!(!message.ends_with('.'), "no trailing period: {message}");
        }
        other => panic!("{schema}: expected code {code}, got {other:?}"),
    }
}

/// The explanation of `schema` refusing `document`.
fn explain(schema: Document, document: Document) -> Document {
    let parsed = Filter::parse(&doc! { "$jsonSchema": schema }).unwrap();
    let raw = RawDocumentBuf::try_from(&document).unwrap();
    parsed
        .schema_failure(&raw)
        .unwrap()
        .expect("the document fails")
}

fn decimal(text: &str) -> Bson {
    Bson::Decimal128(text.parse::<Decimal128>().unwrap())
}

#[test]
fn node_style_schema() {
    let schema = doc! {
        "bsonType": "object",
        "required": ["name", "age"],
        "properties": {
            "name": { "bsonType": "string", "description": "must be a string" },
            "age": { "bsonType": "int", "minimum": 0 },
        },
    };
    check(schema.clone(), doc! { "name": "ann", "age": 3 }, true);
    check(
        schema.clone(),
        doc! { "name": "ann", "age": 0, "extra": [1] },
        true,
    );
    check(schema.clone(), doc! { "name": "ann" }, false);
    check(schema.clone(), doc! { "name": "ann", "age": -1 }, false);
    check(schema.clone(), doc! { "name": "ann", "age": 3.0 }, false);
    check(schema.clone(), doc! { "name": 5, "age": 3 }, false);
    check(schema, doc! { "name": Bson::Null, "age": 3 }, false);
}

#[test]
fn empty_schema_matches_everything() {
    check(doc! {}, doc! {}, true);
    check(doc! {}, doc! { "a": [1, { "b": 2 }] }, true);
    check(
        doc! { "title": "t", "description": "d" },
        doc! { "a": 1 },
        true,
    );
}

#[test]
fn bson_type_aliases() {
    let cases = [
        ("double", Bson::Double(1.5), true),
        ("double", Bson::Int32(1), false),
        ("string", Bson::String("x".into()), true),
        ("object", Bson::Document(doc! {}), true),
        ("array", Bson::Array(vec![]), true),
        ("array", Bson::Document(doc! {}), false),
        (
            "binData",
            Bson::Binary(bson::Binary {
                subtype: bson::spec::BinarySubtype::Generic,
                bytes: vec![1],
            }),
            true,
        ),
        ("objectId", Bson::ObjectId(ObjectId::new()), true),
        ("bool", Bson::Boolean(false), true),
        ("date", Bson::DateTime(bson::DateTime::from_millis(0)), true),
        ("null", Bson::Null, true),
        ("null", Bson::Int32(0), false),
        (
            "regex",
            Bson::RegularExpression(bson::Regex {
                pattern: "a".try_into().unwrap(),
                options: "".try_into().unwrap(),
            }),
            true,
        ),
        ("javascript", Bson::JavaScriptCode("x".into()), true),
        ("int", Bson::Int32(1), true),
        ("int", Bson::Int64(1), false),
        (
            "timestamp",
            Bson::Timestamp(bson::Timestamp {
                time: 1,
                increment: 1,
            }),
            true,
        ),
        ("long", Bson::Int64(1), true),
        ("decimal", decimal("1.5"), true),
        ("minKey", Bson::MinKey, true),
        ("maxKey", Bson::MaxKey, true),
        ("number", Bson::Int32(1), true),
        ("number", Bson::Int64(1), true),
        ("number", Bson::Double(1.0), true),
        ("number", decimal("1"), true),
        ("number", Bson::String("1".into()), false),
    ];
    for (alias, value, expected) in cases {
        check(
            doc! { "properties": { "v": { "bsonType": alias } } },
            doc! { "v": value },
            expected,
        );
    }
    check(
        doc! { "properties": { "v": { "bsonType": ["int", "string"] } } },
        doc! { "v": "x" },
        true,
    );
    check(
        doc! { "properties": { "v": { "bsonType": ["int", "string"] } } },
        doc! { "v": 1.5 },
        false,
    );
    // The top level is a document.
    check(doc! { "bsonType": "object" }, doc! { "a": 1 }, true);
    check(doc! { "bsonType": "array" }, doc! { "a": 1 }, false);
    check(
        doc! { "bsonType": ["array", "object"] },
        doc! { "a": 1 },
        true,
    );
}

#[test]
fn json_types() {
    let schema = |name: &str| doc! { "properties": { "v": { "type": name } } };
    check(schema("object"), doc! { "v": {} }, true);
    check(schema("array"), doc! { "v": [] }, true);
    check(schema("number"), doc! { "v": 1 }, true);
    check(schema("number"), doc! { "v": decimal("2.5") }, true);
    check(schema("boolean"), doc! { "v": true }, true);
    check(schema("boolean"), doc! { "v": 1 }, false);
    check(schema("string"), doc! { "v": "s" }, true);
    check(schema("null"), doc! { "v": Bson::Null }, true);
    check(schema("string"), doc! { "v": ObjectId::new() }, false);
    check(
        doc! { "properties": { "v": { "type": ["string", "null"] } } },
        doc! { "v": Bson::Null },
        true,
    );
    // An absent property is not checked.
    check(schema("string"), doc! { "w": 1 }, true);
    // No array traversal: the array itself is the value.
    check(schema("number"), doc! { "v": [1, 2] }, false);
}

#[test]
fn enumerations() {
    let schema = doc! { "properties": { "v": { "enum": [1, "a", { "x": 1, "y": 2 }, [1, 2], Bson::Null] } } };
    check(schema.clone(), doc! { "v": 1 }, true);
    check(schema.clone(), doc! { "v": 1.0 }, true);
    check(schema.clone(), doc! { "v": decimal("1.00") }, true);
    check(schema.clone(), doc! { "v": "a" }, true);
    check(schema.clone(), doc! { "v": { "y": 2, "x": 1 } }, true);
    check(schema.clone(), doc! { "v": [1, 2] }, true);
    check(schema.clone(), doc! { "v": [2, 1] }, false);
    check(schema.clone(), doc! { "v": Bson::Null }, true);
    check(schema.clone(), doc! { "v": 2 }, false);
    check(schema.clone(), doc! { "v": "b" }, false);
    check(schema, doc! { "w": 2 }, true);
    // At the top level, the whole document is compared, field order aside.
    check(
        doc! { "enum": [{ "a": 1, "b": 2 }, 5] },
        doc! { "b": 2, "a": 1 },
        true,
    );
    check(
        doc! { "enum": [{ "a": 1 }] },
        doc! { "a": 1, "b": 2 },
        false,
    );
}

#[test]
fn numbers() {
    let minimum = doc! { "properties": { "v": { "minimum": 5 } } };
    check(minimum.clone(), doc! { "v": 5 }, true);
    check(minimum.clone(), doc! { "v": 5.0 }, true);
    check(minimum.clone(), doc! { "v": 5_i64 }, true);
    check(minimum.clone(), doc! { "v": decimal("5.0") }, true);
    check(minimum.clone(), doc! { "v": 4.999 }, false);
    check(minimum.clone(), doc! { "v": decimal("4.9") }, false);
    check(minimum.clone(), doc! { "v": f64::NAN }, false);
    // Other types are not numbers: the keyword lets them through.
    check(minimum.clone(), doc! { "v": "1" }, true);
    check(minimum.clone(), doc! { "v": [1] }, true);
    check(minimum, doc! { "v": Bson::Null }, true);
    let exclusive = doc! { "properties": { "v": { "minimum": 5, "exclusiveMinimum": true, "maximum": decimal("10.5"), "exclusiveMaximum": false } } };
    check(exclusive.clone(), doc! { "v": 5 }, false);
    check(exclusive.clone(), doc! { "v": 5.0001 }, true);
    check(exclusive.clone(), doc! { "v": 10.5 }, true);
    check(exclusive.clone(), doc! { "v": 11_i64 }, false);
    check(exclusive, doc! { "v": 9_007_199_254_740_993_i64 }, false);
    let strict_maximum =
        doc! { "properties": { "v": { "maximum": 1.5, "exclusiveMaximum": true } } };
    check(strict_maximum.clone(), doc! { "v": 1.5 }, false);
    check(strict_maximum.clone(), doc! { "v": 1 }, true);
    // Int64 above 2^53 compares exactly.
    let big = doc! { "properties": { "v": { "maximum": 9_007_199_254_740_992_i64 } } };
    check(big.clone(), doc! { "v": 9_007_199_254_740_993_i64 }, false);
    check(big, doc! { "v": 9_007_199_254_740_992.0 }, true);
}

#[test]
fn multiple_of() {
    let schema = |divisor: Bson| doc! { "properties": { "v": { "multipleOf": divisor } } };
    check(schema(Bson::Int32(3)), doc! { "v": 9 }, true);
    check(schema(Bson::Int32(3)), doc! { "v": -9_i64 }, true);
    check(schema(Bson::Int32(3)), doc! { "v": 10 }, false);
    check(schema(Bson::Int32(3)), doc! { "v": 9.0 }, true);
    check(schema(Bson::Int32(3)), doc! { "v": 9.5 }, false);
    check(schema(Bson::Int32(3)), doc! { "v": 0 }, true);
    check(schema(Bson::Double(0.1)), doc! { "v": 0.3 }, true);
    check(schema(Bson::Double(0.01)), doc! { "v": 19.99 }, true);
    check(schema(Bson::Double(0.01)), doc! { "v": 19.999 }, false);
    check(schema(decimal("0.25")), doc! { "v": decimal("1.75") }, true);
    check(schema(decimal("0.25")), doc! { "v": 1.8 }, false);
    check(schema(Bson::Int32(10)), doc! { "v": 1e300 }, true);
    check(schema(Bson::Double(1e40)), doc! { "v": 5 }, false);
    check(schema(Bson::Int32(2)), doc! { "v": f64::NAN }, false);
    check(schema(Bson::Int32(2)), doc! { "v": f64::INFINITY }, false);
    check(schema(Bson::Int32(2)), doc! { "v": "4" }, true);
}

#[test]
fn strings() {
    let lengths = doc! { "properties": { "v": { "minLength": 2, "maxLength": 3 } } };
    check(lengths.clone(), doc! { "v": "ab" }, true);
    check(lengths.clone(), doc! { "v": "abc" }, true);
    check(lengths.clone(), doc! { "v": "a" }, false);
    check(lengths.clone(), doc! { "v": "abcd" }, false);
    // Code points, not bytes: three characters, six bytes.
    check(lengths.clone(), doc! { "v": "éàü" }, true);
    check(lengths.clone(), doc! { "v": "😀😀" }, true);
    check(lengths, doc! { "v": 12345 }, true);
    let pattern = doc! { "properties": { "v": { "pattern": "^[a-z]+@[a-z]+$" } } };
    check(pattern.clone(), doc! { "v": "ann@example" }, true);
    check(pattern.clone(), doc! { "v": "Ann@example" }, false);
    check(pattern.clone(), doc! { "v": 5 }, true);
    // A search, not an anchored match.
    check(
        doc! { "properties": { "v": { "pattern": "b" } } },
        doc! { "v": "abc" },
        true,
    );
}

#[test]
fn arrays() {
    let lengths = doc! { "properties": { "v": { "minItems": 1, "maxItems": 2 } } };
    check(lengths.clone(), doc! { "v": [1] }, true);
    check(lengths.clone(), doc! { "v": [] }, false);
    check(lengths.clone(), doc! { "v": [1, 2, 3] }, false);
    check(lengths, doc! { "v": "not an array" }, true);
    let unique = doc! { "properties": { "v": { "uniqueItems": true } } };
    check(unique.clone(), doc! { "v": [1, 2, 3] }, true);
    check(unique.clone(), doc! { "v": [1, 2, 1.0] }, false);
    check(
        unique.clone(),
        doc! { "v": [{ "a": 1, "b": 2 }, { "b": 2, "a": 1 }] },
        false,
    );
    check(unique.clone(), doc! { "v": [[1, 2], [2, 1]] }, true);
    check(unique, doc! { "v": [] }, true);
    check(
        doc! { "properties": { "v": { "uniqueItems": false } } },
        doc! { "v": [1, 1] },
        true,
    );
    let every = doc! { "properties": { "v": { "items": { "bsonType": "int", "minimum": 0 } } } };
    check(every.clone(), doc! { "v": [1, 2] }, true);
    check(every.clone(), doc! { "v": [] }, true);
    check(every.clone(), doc! { "v": [1, -2] }, false);
    check(every.clone(), doc! { "v": [1, "x"] }, false);
    check(every.clone(), doc! { "v": 7 }, true);
    // `additionalItems` is ignored beside a single `items` schema.
    check(
        doc! { "properties": { "v": { "items": { "bsonType": "int" }, "additionalItems": false } } },
        doc! { "v": [1, 2, 3] },
        true,
    );
    let tuple = doc! { "properties": { "v": { "items": [{ "bsonType": "string" }, { "bsonType": "int" }] } } };
    check(tuple.clone(), doc! { "v": ["a", 1] }, true);
    check(tuple.clone(), doc! { "v": ["a"] }, true);
    check(
        tuple.clone(),
        doc! { "v": ["a", 1, { "any": "thing" }] },
        true,
    );
    check(tuple.clone(), doc! { "v": [1, "a"] }, false);
    let closed = doc! { "properties": { "v": { "items": [{ "bsonType": "string" }], "additionalItems": false } } };
    check(closed.clone(), doc! { "v": ["a"] }, true);
    check(closed.clone(), doc! { "v": ["a", "b"] }, false);
    let typed_rest = doc! { "properties": { "v": { "items": [{ "bsonType": "string" }], "additionalItems": { "bsonType": "int" } } } };
    check(typed_rest.clone(), doc! { "v": ["a", 1, 2] }, true);
    check(typed_rest, doc! { "v": ["a", 1, "b"] }, false);
    // Nested: an array of objects.
    let nested = doc! { "properties": { "lines": { "bsonType": "array", "items": { "bsonType": "object", "required": ["sku"], "properties": { "qty": { "bsonType": "int", "minimum": 1 } } } } } };
    check(
        nested.clone(),
        doc! { "lines": [{ "sku": "a", "qty": 1 }, { "sku": "b" }] },
        true,
    );
    check(
        nested.clone(),
        doc! { "lines": [{ "sku": "a", "qty": 0 }] },
        false,
    );
    check(nested, doc! { "lines": [{ "qty": 2 }] }, false);
}

#[test]
fn objects() {
    let required = doc! { "required": ["a", "b"] };
    check(required.clone(), doc! { "a": 1, "b": Bson::Null }, true);
    check(required.clone(), doc! { "a": 1 }, false);
    check(required, doc! { "b": 1, "c": { "a": 1 } }, false);
    let nested = doc! { "properties": { "address": { "bsonType": "object", "required": ["city"], "properties": { "zip": { "bsonType": "string", "pattern": "^[0-9]{5}$" } } } } };
    check(
        nested.clone(),
        doc! { "address": { "city": "Lyon", "zip": "69001" } },
        true,
    );
    check(
        nested.clone(),
        doc! { "address": { "city": "Lyon", "zip": "6900" } },
        false,
    );
    check(
        nested.clone(),
        doc! { "address": { "zip": "69001" } },
        false,
    );
    check(nested.clone(), doc! { "address": "Lyon" }, false);
    check(nested, doc! {}, true);
    // `required` and `properties` let non-objects through when no type is asked for.
    check(
        doc! { "properties": { "a": { "required": ["x"], "properties": { "x": { "bsonType": "int" } } } } },
        doc! { "a": 5 },
        true,
    );
    let counts = doc! { "properties": { "o": { "minProperties": 1, "maxProperties": 2 } } };
    check(counts.clone(), doc! { "o": { "x": 1 } }, true);
    check(counts.clone(), doc! { "o": {} }, false);
    check(
        counts.clone(),
        doc! { "o": { "x": 1, "y": 2, "z": 3 } },
        false,
    );
    check(counts, doc! { "o": [1, 2, 3] }, true);
    check(
        doc! { "maxProperties": 1 },
        doc! { "_id": 1, "a": 2 },
        false,
    );
    let closed = doc! { "properties": { "_id": {}, "name": {} }, "additionalProperties": false };
    check(closed.clone(), doc! { "_id": 1, "name": "x" }, true);
    check(closed.clone(), doc! { "_id": 1 }, true);
    check(closed, doc! { "_id": 1, "name": "x", "other": 1 }, false);
    let patterns = doc! {
        "properties": { "_id": {} },
        "patternProperties": { "^s_": { "bsonType": "string" }, "^n_": { "bsonType": "number" } },
        "additionalProperties": { "bsonType": "bool" },
    };
    check(
        patterns.clone(),
        doc! { "_id": 1, "s_a": "x", "n_b": 2.5, "flag": true },
        true,
    );
    check(patterns.clone(), doc! { "_id": 1, "s_a": 1 }, false);
    check(patterns.clone(), doc! { "_id": 1, "n_b": "2" }, false);
    check(patterns, doc! { "_id": 1, "flag": "yes" }, false);
    let dependencies = doc! {
        "dependencies": {
            "card": ["billing"],
            "shipping": { "required": ["address"], "properties": { "address": { "bsonType": "string" } } },
        },
    };
    check(dependencies.clone(), doc! { "a": 1 }, true);
    check(dependencies.clone(), doc! { "card": 1, "billing": 2 }, true);
    check(dependencies.clone(), doc! { "card": 1 }, false);
    check(
        dependencies.clone(),
        doc! { "shipping": 1, "address": "here" },
        true,
    );
    check(dependencies.clone(), doc! { "shipping": 1 }, false);
    check(dependencies, doc! { "shipping": 1, "address": 5 }, false);
}

#[test]
fn logic() {
    let all_of =
        doc! { "properties": { "v": { "allOf": [{ "bsonType": "int" }, { "minimum": 3 }] } } };
    check(all_of.clone(), doc! { "v": 4 }, true);
    check(all_of.clone(), doc! { "v": 2 }, false);
    check(all_of, doc! { "v": 4.0 }, false);
    let any_of = doc! { "properties": { "v": { "anyOf": [{ "bsonType": "string" }, { "bsonType": "int", "minimum": 0 }] } } };
    check(any_of.clone(), doc! { "v": "x" }, true);
    check(any_of.clone(), doc! { "v": 3 }, true);
    check(any_of.clone(), doc! { "v": -3 }, false);
    check(any_of, doc! { "v": true }, false);
    let one_of = doc! { "properties": { "v": { "oneOf": [{ "minimum": 0 }, { "maximum": 10 }] } } };
    check(one_of.clone(), doc! { "v": -5 }, true);
    check(one_of.clone(), doc! { "v": 15 }, true);
    check(one_of.clone(), doc! { "v": 5 }, false);
    // A string satisfies both (the keywords do not apply to it).
    check(one_of, doc! { "v": "s" }, false);
    let not = doc! { "properties": { "v": { "not": { "bsonType": "string" } } } };
    check(not.clone(), doc! { "v": 1 }, true);
    check(not, doc! { "v": "x" }, false);
    check(doc! { "not": {} }, doc! { "a": 1 }, false);
    check(
        doc! { "anyOf": [{ "required": ["a"] }, { "required": ["b"] }] },
        doc! { "b": 1 },
        true,
    );
    check(
        doc! { "anyOf": [{ "required": ["a"] }, { "required": ["b"] }] },
        doc! { "c": 1 },
        false,
    );
}

#[test]
fn beside_other_operators() {
    let schema = doc! { "required": ["a"] };
    let cases = [
        (
            doc! { "$jsonSchema": schema.clone(), "b": 2 },
            doc! { "a": 1, "b": 2 },
            true,
        ),
        (
            doc! { "$jsonSchema": schema.clone(), "b": 2 },
            doc! { "a": 1, "b": 3 },
            false,
        ),
        (
            doc! { "$and": [{ "$jsonSchema": schema.clone() }] },
            doc! { "a": 1 },
            true,
        ),
        (
            doc! { "$or": [{ "$jsonSchema": schema.clone() }, { "c": 1 }] },
            doc! { "c": 1 },
            true,
        ),
        (
            doc! { "$or": [{ "$jsonSchema": schema.clone() }, { "c": 1 }] },
            doc! { "c": 2 },
            false,
        ),
        (
            doc! { "$nor": [{ "$jsonSchema": schema.clone() }] },
            doc! { "c": 2 },
            true,
        ),
        (
            doc! { "$nor": [{ "$jsonSchema": schema }] },
            doc! { "a": 2 },
            false,
        ),
    ];
    for (filter, document, expected) in cases {
        let parsed = Filter::parse(&filter).unwrap();
        assert_eq!(
            parsed.matches_document(&document).unwrap(),
            expected,
            "{filter} on {document}"
        );
    }
    // Only on the whole document: refused inside $elemMatch.
    let error = Filter::parse(&doc! { "a": { "$elemMatch": { "$jsonSchema": {} } } }).unwrap_err();
    assert!(
        error
            .to_string()
            .contains("$jsonSchema can only be applied to the top-level document"),
        "{error}"
    );
    let error = Filter::parse(&doc! { "a": { "$elemMatch": { "$or": [{ "$jsonSchema": {} }] } } })
        .unwrap_err();
    assert!(error.to_string().contains("top-level document"), "{error}");
}

#[test]
fn refused_schemas() {
    refused(Bson::Int32(1), 14, "$jsonSchema must be an object");
    refused(
        doc! { "foo": 1 }.into(),
        9,
        "Unknown $jsonSchema keyword: foo",
    );
    refused(
        doc! { "properties": { "a": { "bsonTyp": "int" } } }.into(),
        9,
        "Unknown $jsonSchema keyword: bsonTyp (in properties.a)",
    );
    for unsupported in ["$ref", "$schema", "default", "definitions", "format", "id"] {
        refused(
            doc! { unsupported: "x" }.into(),
            9,
            "is not currently supported",
        );
    }
    refused(doc! { "encrypt": {} }.into(), 9, "encrypt");
    refused(
        doc! { "title": 1 }.into(),
        14,
        "'title' must be of type string",
    );
    refused(
        doc! { "description": false }.into(),
        14,
        "'description' must be of type string",
    );
    refused(
        doc! { "type": "object", "bsonType": "object" }.into(),
        9,
        "Cannot specify both",
    );
    refused(
        doc! { "type": "integer" }.into(),
        9,
        "type 'integer' is not currently supported",
    );
    refused(
        doc! { "type": "int" }.into(),
        2,
        "Unknown type name alias: int",
    );
    refused(
        doc! { "bsonType": "integer" }.into(),
        9,
        "not currently supported",
    );
    refused(
        doc! { "bsonType": "text" }.into(),
        2,
        "Unknown type name alias: text",
    );
    refused(
        doc! { "bsonType": 16 }.into(),
        14,
        "must be either a string or an array of strings",
    );
    refused(
        doc! { "bsonType": [] }.into(),
        9,
        "must name at least one type",
    );
    refused(
        doc! { "bsonType": ["int", "int"] }.into(),
        9,
        "duplicate value: int",
    );
    refused(
        doc! { "bsonType": ["int", 1] }.into(),
        14,
        "array elements must be strings",
    );
    refused(doc! { "enum": 1 }.into(), 14, "'enum' must be an array");
    refused(doc! { "enum": [] }.into(), 9, "cannot be an empty array");
    refused(doc! { "enum": [1, 1.0] }.into(), 9, "duplicate values");
    refused(
        doc! { "required": "a" }.into(),
        14,
        "'required' must be an array",
    );
    refused(
        doc! { "required": [] }.into(),
        9,
        "cannot be an empty array",
    );
    refused(doc! { "required": ["a", 1] }.into(), 14, "array of strings");
    refused(doc! { "required": ["a", "a"] }.into(), 9, "duplicate");
    refused(
        doc! { "properties": 1 }.into(),
        14,
        "'properties' must be an object",
    );
    refused(
        doc! { "properties": { "a": 1 } }.into(),
        14,
        "property 'a' must be an object",
    );
    refused(
        doc! { "patternProperties": { "^a": 1 } }.into(),
        14,
        "which is not an object",
    );
    refused(
        doc! { "patternProperties": { "(": {} } }.into(),
        2,
        "patternProperties",
    );
    refused(
        doc! { "additionalProperties": 1 }.into(),
        14,
        "an object or a boolean",
    );
    refused(
        doc! { "additionalItems": "no" }.into(),
        14,
        "an object or a boolean",
    );
    refused(
        doc! { "minProperties": -1 }.into(),
        9,
        "non-negative whole number",
    );
    refused(
        doc! { "maxItems": 1.5 }.into(),
        9,
        "non-negative whole number",
    );
    refused(
        doc! { "minLength": "2" }.into(),
        14,
        "'minLength' must be a number",
    );
    refused(
        doc! { "dependencies": 1 }.into(),
        14,
        "'dependencies' must be an object",
    );
    refused(
        doc! { "dependencies": { "a": 1 } }.into(),
        14,
        "either an object or an array",
    );
    refused(
        doc! { "dependencies": { "a": [] } }.into(),
        9,
        "cannot be an empty array",
    );
    refused(doc! { "items": 1 }.into(), 14, "an array or an object");
    refused(
        doc! { "items": [{}, 1] }.into(),
        14,
        "each element of the array is an object",
    );
    refused(
        doc! { "uniqueItems": 1 }.into(),
        14,
        "'uniqueItems' must be a boolean",
    );
    refused(
        doc! { "minimum": "1" }.into(),
        14,
        "'minimum' must be a number",
    );
    refused(
        doc! { "exclusiveMinimum": true }.into(),
        9,
        "'minimum' must be present",
    );
    refused(
        doc! { "maximum": 1, "exclusiveMaximum": 1 }.into(),
        14,
        "must be a boolean",
    );
    refused(
        doc! { "multipleOf": 0 }.into(),
        9,
        "must have a positive value",
    );
    refused(
        doc! { "multipleOf": -2 }.into(),
        9,
        "must have a positive value",
    );
    refused(doc! { "multipleOf": "2" }.into(), 14, "must be a number");
    refused(
        doc! { "pattern": 1 }.into(),
        14,
        "'pattern' must be a string",
    );
    refused(doc! { "pattern": "(" }.into(), 2, "pattern");
    refused(doc! { "allOf": {} }.into(), 14, "'allOf' must be an array");
    refused(doc! { "anyOf": [] }.into(), 2, "must be a non-empty array");
    refused(doc! { "oneOf": [1] }.into(), 14, "array of objects");
    refused(doc! { "not": [] }.into(), 14, "'not' must be an object");
    refused(
        doc! { "items": { "allOf": [{ "nope": 1 }] } }.into(),
        9,
        "Unknown $jsonSchema keyword: nope (in items.allOf.0)",
    );
}

#[test]
fn explanations_name_the_failed_keywords() {
    let schema = doc! {
        "bsonType": "object",
        "required": ["name", "age"],
        "properties": {
            "name": { "bsonType": "string" },
            "age": { "bsonType": "int", "minimum": 0 },
        },
    };
    assert_eq!(
        explain(schema.clone(), doc! { "_id": 1, "age": -1 }),
        doc! {
            "operatorName": "$jsonSchema",
            "schemaRulesNotSatisfied": [
                { "operatorName": "required", "specifiedAs": { "required": ["name", "age"] }, "missingProperties": ["name"] },
                { "operatorName": "properties", "propertiesNotSatisfied": [
                    { "propertyName": "age", "details": [
                        { "operatorName": "minimum", "specifiedAs": { "minimum": 0 }, "reason": "comparison failed", "consideredValue": -1 },
                    ] },
                ] },
            ],
        }
    );
    assert_eq!(
        explain(schema, doc! { "name": "x", "age": "old" }),
        doc! {
            "operatorName": "$jsonSchema",
            "schemaRulesNotSatisfied": [
                { "operatorName": "properties", "propertiesNotSatisfied": [
                    { "propertyName": "age", "details": [
                        { "operatorName": "bsonType", "specifiedAs": { "bsonType": "int" }, "reason": "type did not match", "consideredValue": "old", "consideredType": "string" },
                    ] },
                ] },
            ],
        }
    );
    assert_eq!(
        explain(
            doc! { "additionalProperties": false, "properties": { "a": {} } },
            doc! { "a": 1, "b": 2, "c": 3 }
        ),
        doc! {
            "operatorName": "$jsonSchema",
            "schemaRulesNotSatisfied": [
                { "operatorName": "additionalProperties", "specifiedAs": { "additionalProperties": false }, "additionalProperties": ["b", "c"] },
            ],
        }
    );
    let items = explain(
        doc! { "properties": { "v": { "items": { "enum": [1, 2] } } } },
        doc! { "v": [1, 3] },
    );
    let rule = items.get_array("schemaRulesNotSatisfied").unwrap()[0]
        .as_document()
        .unwrap()
        .clone();
    let item = rule.get_array("propertiesNotSatisfied").unwrap()[0]
        .as_document()
        .unwrap()
        .get_array("details")
        .unwrap()[0]
        .as_document()
        .unwrap()
        .clone();
    assert_eq!(item.get_str("operatorName").unwrap(), "items");
    assert_eq!(item.get_i64("itemIndex").unwrap(), 1);
    // A filter with the schema inside a top-level $and explains it too; others explain nothing.
    let filter =
        Filter::parse(&doc! { "$and": [{ "a": 1 }, { "$jsonSchema": { "required": ["b"] } }] })
            .unwrap();
    let raw = RawDocumentBuf::try_from(&doc! { "a": 1 }).unwrap();
    assert!(filter.schema_failure(&raw).unwrap().is_some());
    let plain = Filter::parse(&doc! { "a": 2 }).unwrap();
    assert!(plain.schema_failure(&raw).unwrap().is_none());
}
