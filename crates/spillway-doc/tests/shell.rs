//! Table-driven tests and snapshots for `spillway_doc::shell`: mongosh literals, Extended
//! JSON, error messages and printing.

#![allow(
    clippy::needless_pass_by_value,
    clippy::format_collect,
    reason = "table rows read better with owned values; reports are built once per test"
)]

use bson::oid::ObjectId;
use bson::spec::BinarySubtype;
use bson::{Binary, Bson, DateTime, Decimal128, Regex, Timestamp, bson, doc};
use spillway_doc::DocError;
use spillway_doc::shell::{
    Dialect, ExprKind, Parser, TokenKind, evaluate, parse_document, parse_extjson, parse_value,
    to_canonical_extjson_string, to_relaxed_extjson_string, to_shell_string,
    to_shell_string_pretty,
};

/// Equality that treats every NaN as equal and tells -0.0 from 0.0.
fn same(a: &Bson, b: &Bson) -> bool {
    match (a, b) {
        (Bson::Double(x), Bson::Double(y)) => {
            x.to_bits() == y.to_bits() || (x.is_nan() && y.is_nan())
        }
        (Bson::Array(xs), Bson::Array(ys)) => {
            xs.len() == ys.len() && xs.iter().zip(ys).all(|(x, y)| same(x, y))
        }
        (Bson::Document(x), Bson::Document(y)) => {
            x.len() == y.len()
                && x.iter()
                    .zip(y)
                    .all(|((kx, vx), (ky, vy))| kx == ky && same(vx, vy))
        }
        _ => a == b,
    }
}

#[track_caller]
fn check(input: &str, expected: Bson) {
    let parsed = parse_value(input).unwrap_or_else(|error| panic!("{input:?}: {error}"));
    assert!(
        same(&parsed, &expected),
        "{input:?}\n  parsed:   {parsed:?}\n  expected: {expected:?}"
    );
}

#[track_caller]
fn check_json(input: &str, expected: Bson) {
    let parsed = parse_extjson(input).unwrap_or_else(|error| panic!("{input:?}: {error}"));
    assert!(
        same(&parsed, &expected),
        "{input:?}\n  parsed:   {parsed:?}\n  expected: {expected:?}"
    );
}

fn oid(hex: &str) -> Bson {
    Bson::ObjectId(ObjectId::parse_str(hex).unwrap())
}

fn date(millis: i64) -> Bson {
    Bson::DateTime(DateTime::from_millis(millis))
}

fn decimal(text: &str) -> Bson {
    Bson::Decimal128(text.parse::<Decimal128>().unwrap())
}

fn binary(subtype: u8, bytes: &[u8]) -> Bson {
    Bson::Binary(Binary {
        subtype: BinarySubtype::from(subtype),
        bytes: bytes.to_vec(),
    })
}

fn regex(pattern: &str, options: &str) -> Bson {
    Bson::RegularExpression(Regex {
        pattern: pattern.try_into().unwrap(),
        options: options.try_into().unwrap(),
    })
}

fn timestamp(time: u32, increment: u32) -> Bson {
    Bson::Timestamp(Timestamp { time, increment })
}

const HEX: &str = "65a1f0c2e4b0a1b2c3d4e5f6";
const JAN_2024: i64 = 1_704_067_200_000;
const UUID_BYTES: [u8; 16] = [
    0x12, 0x34, 0x56, 0x78, 0x9a, 0xbc, 0x4d, 0xef, 0x8a, 0xbc, 0xde, 0xf0, 0x12, 0x34, 0x56, 0x78,
];

#[test]
fn numbers_follow_the_documented_rule() {
    check("0", Bson::Int32(0));
    check("42", Bson::Int32(42));
    check("-7", Bson::Int32(-7));
    check("+5", Bson::Int32(5));
    check("2147483647", Bson::Int32(i32::MAX));
    check("-2147483648", Bson::Int32(i32::MIN));
    check("2147483648", Bson::Int64(2_147_483_648));
    check("-2147483649", Bson::Int64(-2_147_483_649));
    check("9007199254740993", Bson::Int64(9_007_199_254_740_993));
    check("9223372036854775807", Bson::Int64(i64::MAX));
    check("-9223372036854775808", Bson::Int64(i64::MIN));
    check(
        "9223372036854775808",
        Bson::Double(9_223_372_036_854_775_808.0),
    );
    check(
        "-9223372036854775809",
        Bson::Double(-9_223_372_036_854_775_808.0),
    );
    check(
        "123456789012345678901234567890123456789012",
        Bson::Double(1.234_567_890_123_456_8e41),
    );
    check("1.0", Bson::Double(1.0));
    check("1.5", Bson::Double(1.5));
    check("-1.5", Bson::Double(-1.5));
    check(".5", Bson::Double(0.5));
    check("5.", Bson::Double(5.0));
    check("1e3", Bson::Double(1000.0));
    check("1E-3", Bson::Double(0.001));
    check("2.5e+2", Bson::Double(250.0));
    check("1e400", Bson::Double(f64::INFINITY));
    check("5e-324", Bson::Double(5e-324));
    check("-0", Bson::Double(-0.0));
    check("-0.0", Bson::Double(-0.0));
    check("0.0", Bson::Double(0.0));
    check("- 3", Bson::Int32(-3));
    check("- -3", Bson::Int32(3));
    check("0x1F", Bson::Int32(31));
    check("0XfF", Bson::Int32(255));
    check("-0x10", Bson::Int32(-16));
    check("0x7FFFFFFFFFFFFFFF", Bson::Int64(i64::MAX));
    check("0b101", Bson::Int32(5));
    check("0o17", Bson::Int32(15));
    check("Infinity", Bson::Double(f64::INFINITY));
    check("-Infinity", Bson::Double(f64::NEG_INFINITY));
    check("NaN", Bson::Double(f64::NAN));
    check("(12)", Bson::Int32(12));
}

#[test]
fn keywords_and_strings() {
    check("true", Bson::Boolean(true));
    check("false", Bson::Boolean(false));
    check("null", Bson::Null);
    check("undefined", Bson::Undefined);
    check("'single'", bson!("single"));
    check("\"double\"", bson!("double"));
    check("''", bson!(""));
    check(r"'a\nb\tc\rd'", bson!("a\nb\tc\rd"));
    check(r"'\b\f\v\0'", bson!("\u{8}\u{c}\u{b}\0"));
    check(r"'it\'s'", bson!("it's"));
    check(r#""say \"hi\"""#, bson!("say \"hi\""));
    check(r#"'mixed "quotes"'"#, bson!("mixed \"quotes\""));
    check(r"'back\\slash'", bson!("back\\slash"));
    check(r"'\/'", bson!("/"));
    check(r"'\x41\x7e'", bson!("A~"));
    check(r#""\u00e9""#, bson!("é"));
    check(r"'\u{1F600}'", bson!("😀"));
    check(r#""\uD83D\uDE00""#, bson!("😀"));
    check("'日本語 ü 😀'", bson!("日本語 ü 😀"));
    check("'a\\\nb'", bson!("ab"));
    check("'a\\\r\nb'", bson!("ab"));
    check(r"'\q'", bson!("q"));
    check("'tab\there'", bson!("tab\there"));
}

#[test]
fn objects_and_arrays() {
    check("{}", bson!({}));
    check("{ }", bson!({}));
    check("[]", bson!([]));
    check("{a: 1}", bson!({"a": 1}));
    check("{a: 1,}", bson!({"a": 1}));
    check("{'a b': 1, \"c\": 2}", bson!({"a b": 1, "c": 2}));
    check("{'a.b': 1}", bson!({"a.b": 1}));
    check("{$set: {a: 1}}", bson!({"$set": {"a": 1}}));
    check(
        "{_id: 1, $inc: {n: -1}}",
        bson!({"_id": 1, "$inc": {"n": -1}}),
    );
    check("{é: 1, _x1: 2, $: 3}", bson!({"é": 1, "_x1": 2, "$": 3}));
    check("{1: 'x', 20: 'y'}", bson!({"1": "x", "20": "y"}));
    check(
        "{true: 1, null: 2, new: 3, ObjectId: 4}",
        bson!({"true": 1, "null": 2, "new": 3, "ObjectId": 4}),
    );
    check("{a: 1, a: 2}", bson!({"a": 2}));
    check(
        "{a: {b: {c: [1, {d: 2}]}}}",
        bson!({"a": {"b": {"c": [1, {"d": 2}]}}}),
    );
    check("[1, 'a', null, [], {}]", bson!([1, "a", null, [], {}]));
    check("[1,]", bson!([1]));
    check("[[[]]]", bson!([[[]]]));
    check("{a: [1, 2, 3,], b: {},}", bson!({"a": [1, 2, 3], "b": {}}));
    check("{ a: 1, /* c */ b: 2 // x\n }", bson!({"a": 1, "b": 2}));
    check("/*x*/{/*y*/a/*z*/:/*w*/1/*v*/,/**/}/*u*/", bson!({"a": 1}));
    check("{a: 1} // trailing comment", bson!({"a": 1}));
    check("// leading\n/* block\n over lines */ [1]", bson!([1]));
    check("\u{feff}{a: 1}", bson!({"a": 1}));
    check("{a:[{b:[{c:1}]}]}", bson!({"a": [{"b": [{"c": 1}]}]}));
}

#[test]
fn constructors_with_and_without_new() {
    check(&format!("ObjectId('{HEX}')"), oid(HEX));
    check(&format!("new ObjectId(\"{HEX}\")"), oid(HEX));
    check(&format!("ObjectId('{}')", HEX.to_uppercase()), oid(HEX));
    check(&format!("ObjectId.createFromHexString('{HEX}')"), oid(HEX));
    check("ISODate('2024-01-01T00:00:00Z')", date(JAN_2024));
    check("ISODate('2024-01-01T00:00:00.000Z')", date(JAN_2024));
    check("ISODate('2024-01-01')", date(JAN_2024));
    check("ISODate('2024-01-01T01:00:00+01:00')", date(JAN_2024));
    check(
        "new ISODate('2024-01-01T00:00:00.5Z')",
        date(JAN_2024 + 500),
    );
    check("new Date('2024-01-01T00:00:00.000Z')", date(JAN_2024));
    check("new Date(0)", date(0));
    check("new Date(-1)", date(-1));
    check("new Date(1704067200000)", date(JAN_2024));
    check("new Date(1.9)", date(1));
    check("Date(1704067200000)", date(JAN_2024));
    check("new Date(ISODate('2024-01-01'))", date(JAN_2024));
    check("NumberInt(5)", Bson::Int32(5));
    check("NumberInt('-5')", Bson::Int32(-5));
    check("NumberInt(3.0)", Bson::Int32(3));
    check("Int32(7)", Bson::Int32(7));
    check("NumberLong(5)", Bson::Int64(5));
    check("NumberLong('9223372036854775807')", Bson::Int64(i64::MAX));
    check(
        "NumberLong(9007199254740993)",
        Bson::Int64(9_007_199_254_740_993),
    );
    check("new NumberLong(-1)", Bson::Int64(-1));
    check("Long('123')", Bson::Int64(123));
    check("NumberDecimal('1.5')", decimal("1.5"));
    check("NumberDecimal('0.10')", decimal("0.10"));
    check("Decimal128('-1E+10')", decimal("-1E+10"));
    check("Decimal128('NaN')", decimal("NaN"));
    check("NumberDecimal(2)", decimal("2"));
    check("NumberDecimal(0.1)", decimal("0.1"));
    check("Double(1)", Bson::Double(1.0));
    check("Double('2.5')", Bson::Double(2.5));
    check("Double('-Infinity')", Bson::Double(f64::NEG_INFINITY));
    check(
        "UUID('12345678-9abc-4def-8abc-def012345678')",
        binary(4, &UUID_BYTES),
    );
    check(
        "UUID('123456789ABC4DEF8ABCDEF012345678')",
        binary(4, &UUID_BYTES),
    );
    check("BinData(0, 'AQID')", binary(0, &[1, 2, 3]));
    check("new BinData(5, '')", binary(5, &[]));
    check("BinData(128, 'AQID')", binary(128, &[1, 2, 3]));
    check("Binary.createFromBase64('AQID', 2)", binary(2, &[1, 2, 3]));
    check("Binary.createFromBase64('AQID')", binary(0, &[1, 2, 3]));
    check("Binary.createFromHexString('0a0B')", binary(0, &[10, 11]));
    check("HexData(3, '0102')", binary(3, &[1, 2]));
    check(
        "MD5('000102030405060708090a0b0c0d0e0f')",
        binary(5, &(0..16).collect::<Vec<u8>>()),
    );
    check("Timestamp(1, 2)", timestamp(1, 2));
    check("Timestamp({t: 1, i: 2})", timestamp(1, 2));
    check("Timestamp({ i: 2, t: 1 })", timestamp(1, 2));
    check("new Timestamp(4294967295, 0)", timestamp(u32::MAX, 0));
    check("Timestamp()", timestamp(0, 0));
    check("MinKey()", Bson::MinKey);
    check("MaxKey()", Bson::MaxKey);
    check("new MinKey()", Bson::MinKey);
    check("MaxKey", Bson::MaxKey);
    check("/ab+c/i", regex("ab+c", "i"));
    check("/a\\/b/", regex("a\\/b", ""));
    check("/[/]x/", regex("[/]x", ""));
    check("/^a.*$/mi", regex("^a.*$", "im"));
    check("/a/xsu", regex("a", "sux"));
    check("RegExp('a+b', 'i')", regex("a+b", "i"));
    check("new RegExp('x')", regex("x", ""));
    check("RegExp(/x/i)", regex("x", "i"));
    check("BSONRegExp('a', 'x')", regex("a", "x"));
    check(
        "Code('function() {}')",
        Bson::JavaScriptCode("function() {}".into()),
    );
    check(
        "Code('x', {a: 1})",
        Bson::JavaScriptCodeWithScope(bson::JavaScriptCodeWithScope {
            code: "x".into(),
            scope: doc! {"a": 1},
        }),
    );
    check("BSONSymbol('s')", Bson::Symbol("s".into()));
    check("DBRef('books', 7)", bson!({"$ref": "books", "$id": 7}));
    check(
        "DBRef('books', 7, 'shop')",
        bson!({"$ref": "books", "$id": 7, "$db": "shop"}),
    );
    check(
        &format!("DBPointer('db.books', ObjectId('{HEX}'))"),
        parse_extjson(&format!(
            r#"{{"$dbPointer": {{"$ref": "db.books", "$id": {{"$oid": "{HEX}"}}}}}}"#
        ))
        .unwrap(),
    );
    check(
        &format!("{{_id: ObjectId('{HEX}'), at: new Date(0), tags: [NumberInt(1), /x/]}}"),
        bson!({"_id": oid(HEX), "at": date(0), "tags": [1, regex("x", "")]}),
    );
}

#[test]
fn constructors_for_fresh_values_make_fresh_values() {
    let before = DateTime::now().timestamp_millis();
    for text in ["new Date()", "ISODate()", "Date()", "new Date"] {
        let Bson::DateTime(now) = parse_value(text).unwrap() else {
            panic!("{text} is not a date")
        };
        let after = DateTime::now().timestamp_millis();
        assert!((before..=after).contains(&now.timestamp_millis()), "{text}");
    }
    let (Bson::ObjectId(first), Bson::ObjectId(second)) = (
        parse_value("ObjectId()").unwrap(),
        parse_value("new ObjectId()").unwrap(),
    ) else {
        panic!("ObjectId() is not an ObjectId")
    };
    assert_ne!(first, second);
    let Bson::Binary(uuid) = parse_value("UUID()").unwrap() else {
        panic!("UUID() is not binary")
    };
    assert_eq!((uuid.subtype, uuid.bytes.len()), (BinarySubtype::Uuid, 16));
}

#[test]
fn extended_json_inside_shell_literals() {
    check(&format!(r#"{{"$oid": "{HEX}"}}"#), oid(HEX));
    check(&format!("{{$oid: '{HEX}'}}"), oid(HEX));
    check(r#"{"$date": "2024-01-01T00:00:00Z"}"#, date(JAN_2024));
    check(r#"{"$date": {"$numberLong": "-1"}}"#, date(-1));
    check(r#"{"$date": 1704067200000}"#, date(JAN_2024));
    check(r#"{"$numberLong": "5"}"#, Bson::Int64(5));
    check(r#"{"$numberInt": "5"}"#, Bson::Int32(5));
    check(r#"{"$numberDouble": "1.5"}"#, Bson::Double(1.5));
    check(
        r#"{"$numberDouble": "-Infinity"}"#,
        Bson::Double(f64::NEG_INFINITY),
    );
    check(r#"{"$numberDouble": "-0.0"}"#, Bson::Double(-0.0));
    check(r#"{"$numberDecimal": "1.5"}"#, decimal("1.5"));
    check(
        r#"{"$binary": {"base64": "AQID", "subType": "00"}}"#,
        binary(0, &[1, 2, 3]),
    );
    check(
        r#"{"$binary": {"base64": "AQID", "subType": "80"}}"#,
        binary(0x80, &[1, 2, 3]),
    );
    check(
        r#"{"$uuid": "12345678-9abc-4def-8abc-def012345678"}"#,
        binary(4, &UUID_BYTES),
    );
    check(r#"{"$timestamp": {"t": 1, "i": 2}}"#, timestamp(1, 2));
    check(r#"{"$minKey": 1}"#, Bson::MinKey);
    check(r#"{"$maxKey": 1}"#, Bson::MaxKey);
    check(
        r#"{"$regularExpression": {"pattern": "a", "options": "mi"}}"#,
        regex("a", "im"),
    );
    check(r#"{"$symbol": "s"}"#, Bson::Symbol("s".into()));
    check(r#"{"$code": "x"}"#, Bson::JavaScriptCode("x".into()));
    check(r#"{"$undefined": true}"#, Bson::Undefined);
    check(
        r#"{a: {"$numberLong": "5"}, b: [{"$oid": "65a1f0c2e4b0a1b2c3d4e5f6"}]}"#,
        bson!({"a": 5_i64, "b": [oid(HEX)]}),
    );
    // Query operators that look like legacy Extended JSON stay documents.
    check(
        "{a: {$regex: 'x', $options: 'i'}}",
        bson!({"a": {"$regex": "x", "$options": "i"}}),
    );
    check("{a: {$type: 'string'}}", bson!({"a": {"$type": "string"}}));
    check("{$ref: 'c', $id: 1}", bson!({"$ref": "c", "$id": 1}));
}

#[test]
fn strict_extended_json() {
    check_json("{}", bson!({}));
    check_json(" [ 1 , 2.0 , -3 ] ", bson!([1, 2.0, -3]));
    check_json(
        r#"{"a": 1, "b": 2147483648, "c": 1.0, "d": -0, "e": 1e2}"#,
        bson!({"a": 1, "b": 2_147_483_648_i64, "c": 1.0, "d": -0.0, "e": 100.0}),
    );
    check_json(r#""\u00e9\n\/""#, bson!("é\n/"));
    check_json("true", bson!(true));
    check_json("null", Bson::Null);
    check_json(
        r#"{"_id": {"$oid": "65a1f0c2e4b0a1b2c3d4e5f6"}, "n": {"$numberInt": "1"}, "l": {"$numberLong": "2"}, "d": {"$numberDouble": "3.0"}}"#,
        bson!({"_id": oid(HEX), "n": 1, "l": 2_i64, "d": 3.0}),
    );
    check_json(
        r#"{"t": {"$date": {"$numberLong": "1704067200000"}}}"#,
        bson!({"t": date(JAN_2024)}),
    );
    check_json(
        r#"{"t": {"$date": "2024-01-01T00:00:00Z"}}"#,
        bson!({"t": date(JAN_2024)}),
    );
    check_json("\t\r\n1\n", bson!(1));
}

#[test]
fn parse_document_wants_an_object() {
    assert_eq!(
        parse_document("{a: 1, b: 'x'}").unwrap(),
        doc! {"a": 1, "b": "x"}
    );
    assert_eq!(
        parse_document("  [1]").unwrap_err(),
        DocError::Syntax {
            line: 1,
            column: 3,
            message: "expected a document ('{...}'), found an array".into()
        }
    );
    assert!(matches!(
        parse_document(&format!("{{$oid: '{HEX}'}}")),
        Err(DocError::Syntax { .. })
    ));
}

#[test]
fn errors_carry_one_based_line_and_character_column() {
    let cases = [
        ("{a: 1: 2}", 1, 6),
        ("{\n  a: 1,\n  b: [1, 2,, 3]\n}", 3, 12),
        ("{é: 'ü' x}", 1, 9),
        ("\r\n\r\n  }", 3, 3),
        ("'😀😀' x", 1, 6),
    ];
    for (input, line, column) in cases {
        match parse_value(input) {
            Err(DocError::Syntax {
                line: found_line,
                column: found_column,
                ..
            }) => {
                assert_eq!((found_line, found_column), (line, column), "{input:?}");
            }
            other => panic!("{input:?}: expected a syntax error, got {other:?}"),
        }
    }
}

#[test]
fn the_parser_reads_statements_and_reports_where_it_stopped() {
    let text = "db.sales.find({a: 1}).sort({b: -1}); next";
    let mut parser = Parser::new(text, Dialect::Shell);
    let statement = parser.parse_expression().unwrap();
    assert_eq!(parser.consumed_up_to().offset, text.find(';').unwrap());
    assert_eq!(parser.next_token().unwrap().kind, TokenKind::Semicolon);
    let ExprKind::Call { callee, arguments } = &statement.kind else {
        panic!("not a call: {statement:?}")
    };
    assert_eq!(callee.dotted_name(), None);
    assert_eq!(evaluate(&arguments[0]).unwrap(), bson!({"b": -1}));
    let ExprKind::Member { object, property } = &callee.kind else {
        panic!("not a member: {callee:?}")
    };
    assert_eq!(property, "sort");
    let ExprKind::Call {
        callee: find,
        arguments,
    } = &object.kind
    else {
        panic!("not a call: {object:?}")
    };
    assert_eq!(find.dotted_name().as_deref(), Some("db.sales.find"));
    assert_eq!(evaluate(&arguments[0]).unwrap(), bson!({"a": 1}));
    assert_eq!(
        (arguments[0].span.start.column, arguments[0].span.end.column),
        (15, 21)
    );
    assert_eq!(
        parser.parse_expression().unwrap().kind,
        ExprKind::Identifier("next".into())
    );
    parser.expect_end().unwrap();
    let mut indexed = Parser::new("db['my books'].find()", Dialect::Shell);
    assert!(matches!(
        indexed.parse_expression().unwrap().kind,
        ExprKind::Call { .. }
    ));
}

#[test]
fn nesting_is_bounded() {
    // Unoptimized test builds need more stack per level than the default test thread has.
    let checks = || {
        let deep_but_fine = format!("{}1{}", "[{a:".repeat(64), "}]".repeat(64));
        assert!(parse_value(&deep_but_fine).is_ok());
        let hostile_inputs = [
            "[".repeat(100_000),
            "-".repeat(100_000),
            "{a:".repeat(100_000),
            "f(".repeat(100_000),
        ];
        for hostile in hostile_inputs {
            let error = parse_value(&hostile).unwrap_err().to_string();
            assert!(error.contains("nesting deeper than 128 levels"), "{error}");
        }
        let error = parse_extjson(&"[".repeat(100_000)).unwrap_err().to_string();
        assert!(error.contains("nesting deeper than 128 levels"), "{error}");
    };
    std::thread::Builder::new()
        .stack_size(16 << 20)
        .spawn(checks)
        .unwrap()
        .join()
        .unwrap();
}

/// Inputs that must fail, rendered as `input => message`.
fn error_report(dialect: Dialect, inputs: &[&str]) -> String {
    inputs
        .iter()
        .map(|input| {
            let result = match dialect {
                Dialect::Shell => parse_value(input),
                Dialect::Json => parse_extjson(input),
            };
            match result {
                Ok(value) => panic!("{input:?} parsed as {value:?}"),
                Err(error) => format!("{input}\n    => {error}\n"),
            }
        })
        .collect()
}

#[test]
fn shell_syntax_error_messages() {
    let inputs = [
        "",
        "{a: 1: 2}",
        "{a: 1 b: 2}",
        "{a.b: 1}",
        "{a.b.c: 1}",
        "{a 1}",
        "{,}",
        "{a: }",
        "{'a': 1",
        "{-1: 2}",
        "[1 2]",
        "[1,,2]",
        "[,]",
        "(1",
        "{a: 1}}",
        "1 2",
        "'abc",
        "'abc\ndef'",
        r"'\x4'",
        r"'\u12'",
        r"'\u{110000}'",
        r#""\uD800""#,
        r#""\uD800\u0041""#,
        "/* unterminated",
        "/abc",
        "/abc\n/",
        "01",
        "1e",
        "1.e",
        "0x",
        "0b2",
        "3in",
        "#",
        "`template`",
        "-'a'",
        "-{}",
        "a.",
        "a.1",
        "foo",
        "{a: b}",
        "Foo(1)",
        "db.books.find({})",
        "new",
        "ObjectId(1,)x",
        "{\n  title: 'Invisible Cities',\n  year: 1972\n  author: 'Calvino'\n}",
    ];
    insta::assert_snapshot!("shell_syntax_errors", error_report(Dialect::Shell, &inputs));
}

#[test]
fn shell_invalid_value_messages() {
    let inputs = [
        "ObjectId('xyz')",
        "ObjectId('65a1f0c2e4b0a1b2c3d4e5fg')",
        "ObjectId(1)",
        "ObjectId('65a1f0c2e4b0a1b2c3d4e5f6', 1)",
        "ISODate('yesterday')",
        "ISODate('2023-02-29')",
        "new Date(2024, 0, 1)",
        "new Date('2024-01-01', 'x')",
        "new Date(Infinity)",
        "new Date(true)",
        "NumberInt(2147483648)",
        "NumberInt(1.5)",
        "NumberInt()",
        "NumberLong('abc')",
        "NumberLong('9223372036854775808')",
        "NumberDecimal('abc')",
        "NumberDecimal(NaN)",
        "Double('x')",
        "UUID('123')",
        "UUID(1)",
        "BinData(0, '!!!')",
        "BinData(256, 'AA==')",
        "BinData('x', 'AA==')",
        "HexData(0, 'abc')",
        "Timestamp(-1, 0)",
        "Timestamp({t: 1})",
        "Timestamp(1)",
        "MinKey(1)",
        "/a/g",
        "/a/ii",
        r"RegExp('a\0b')",
        "RegExp(1)",
        "Code('x', 1)",
        "DBPointer('ns', 1)",
        r#"{"$oid": "xyz"}"#,
        r#"{"$numberLong": 5}"#,
        r#"{"$numberInt": "2147483648"}"#,
        r#"{"$date": "yesterday"}"#,
        r#"{"$oid": "65a1f0c2e4b0a1b2c3d4e5f6", "extra": 1}"#,
        "{$date: ISODate('2024-01-01')}",
        "{$numberDouble: NaN}",
        "{a: [1, {b: NumberInt('x')}]}",
    ];
    insta::assert_snapshot!(
        "shell_invalid_values",
        error_report(Dialect::Shell, &inputs)
    );
}

#[test]
fn strict_json_error_messages() {
    let inputs = [
        "",
        "{a: 1}",
        "{'a': 1}",
        r#"{"a": 1,}"#,
        "[1,]",
        "// c\n1",
        "/* c */ 1",
        "NaN",
        "Infinity",
        "-Infinity",
        "undefined",
        "01",
        ".5",
        "1.",
        "0x1F",
        "+1",
        "- 1",
        r#""\x41""#,
        r#""\'""#,
        "\"tab\there\"",
        "'single'",
        r#"ObjectId("65a1f0c2e4b0a1b2c3d4e5f6")"#,
        r#"{"a": undefined}"#,
        r#""a" "b""#,
        r#"{"a" 1}"#,
        r#"{"a": 1 "b": 2}"#,
        "[1 2]",
        "\u{a0}1",
        r#"{"$oid": 1}"#,
    ];
    insta::assert_snapshot!("json_syntax_errors", error_report(Dialect::Json, &inputs));
}

/// Literals as mongosh users write them, each printed back with `to_shell_string`.
#[test]
fn parsed_literals_snapshot() {
    let inputs = [
        "{ _id: ObjectId('65a1f0c2e4b0a1b2c3d4e5f6'), title: 'Invisible Cities', year: 1972 }",
        "{ d: ISODate('2024-01-01'), n: NumberLong('9007199254740993'), x: NumberDecimal('1.5') }",
        "{ $set: { 'a.b': 1, price: 12.50, qty: NumberInt(3) }, $inc: { n: -1 } }",
        "[1, 1.0, -0, 2147483648, 1e21, 1e-7, 0.1, Infinity, -Infinity, NaN, 0xFF]",
        "{ s: 'it\\'s', t: \"say \\\"hi\\\"\", u: 'tab\\tnew\\nline\\u0001', e: '' }",
        "{ 'with space': 1, '$op': 2, _ok: 3, 'é': 4, '1': 5, '': 6 }",
        "{ r: /ab+c/i, r2: RegExp('a/b', 'm'), r3: RegExp('*x'), r4: RegExp('', '') }",
        "{ u: UUID('12345678-9abc-4def-8abc-def012345678'), b: BinData(0, 'AQID'), o: BinData(4, 'AQ==') }",
        "{ t: Timestamp(1, 2), min: MinKey(), max: MaxKey(), nil: null, undef: undefined, yes: true }",
        "{ early: new Date(-62167219200001), late: new Date(253402300800000), epoch: new Date(0) }",
        "{ c: Code('function () { return 1 }'), cs: Code('x', { y: 1 }), sym: BSONSymbol('s') }",
        "{ p: DBPointer('db.books', ObjectId('65a1f0c2e4b0a1b2c3d4e5f6')), ref: DBRef('books', 1) }",
        "{ l: Long('-9223372036854775808'), d: Decimal128('-1.00E+10'), dn: Decimal128('-Infinity') }",
        "{ ej: { \"$numberLong\": \"5\" }, ed: { \"$date\": { \"$numberLong\": \"0\" } } }",
        "{ nested: { a: [ { b: [ { c: 1 } ] } ] }, empty: {}, list: [] }",
    ];
    let report: String = inputs
        .iter()
        .map(|input| {
            let value = parse_value(input).unwrap_or_else(|error| panic!("{input}: {error}"));
            format!("{input}\n    => {}\n", to_shell_string(&value))
        })
        .collect();
    insta::assert_snapshot!("parsed_literals", report);
}

#[test]
fn pretty_printing_breaks_long_and_deep_values_like_mongosh() {
    let values = [
        "{ acknowledged: true, insertedId: ObjectId('65a1f0c2e4b0a1b2c3d4e5f6') }",
        "{ _id: ObjectId('65a1f0c2e4b0a1b2c3d4e5f6'), title: 'Invisible Cities', author: 'Italo Calvino', year: 1972 }",
        "[{ _id: 1, customers_purchased: ['user00', 'user01', 'user02'], has_extras: false }, { _id: 2, has_extras: true }]",
        "{ a: { b: { c: { d: 1 } } } }",
        "{ a: { b: { c: 1 } } }",
        "{ reviews: [{ review_id: 786, review_author: 'Kristina', review_text: 'This is indeed an amazing widget.', published_date: ISODate('2019-02-18') }] }",
        "{}",
        "[]",
        "'scalar'",
    ];
    let report: String = values
        .iter()
        .map(|input| {
            let value = parse_value(input).unwrap_or_else(|error| panic!("{input}: {error}"));
            let pretty = to_shell_string_pretty(&value);
            let read_back =
                parse_value(&pretty).unwrap_or_else(|error| panic!("{pretty}: {error}"));
            assert!(same(&read_back, &value), "{pretty}");
            format!("{pretty}\n\n")
        })
        .collect();
    insta::assert_snapshot!("pretty_printed", report);
}

#[test]
fn extended_json_output_uses_bsons_conversions() {
    let value = parse_value(
        "{ _id: ObjectId('65a1f0c2e4b0a1b2c3d4e5f6'), n: 1, l: NumberLong(2), d: 1.5, t: ISODate('2024-01-01'), x: NumberDecimal('1.5') }",
    )
    .unwrap();
    insta::assert_snapshot!(
        "extjson_output",
        format!(
            "relaxed:   {}\ncanonical: {}\n",
            to_relaxed_extjson_string(&value),
            to_canonical_extjson_string(&value)
        )
    );
    assert!(same(
        &parse_extjson(&to_canonical_extjson_string(&value)).unwrap(),
        &value
    ));
    assert!(same(
        &parse_value(&to_canonical_extjson_string(&value)).unwrap(),
        &value
    ));
}

#[test]
fn a_parser_started_inside_a_larger_text_reports_positions_in_that_text() {
    use spillway_doc::shell::{Dialect, Parser, Position, evaluate};
    let start = Position {
        offset: 0,
        line: 7,
        column: 5,
    };
    let mut parser = Parser::starting_at("{ a: 1,\n  b: ObjectId('12') }", Dialect::Shell, start);
    let expr = parser.parse_expression().unwrap();
    assert_eq!((expr.span.start.line, expr.span.start.column), (7, 5));
    assert_eq!((expr.span.end.line, expr.span.end.column), (8, 22));
    let error = evaluate(&expr).unwrap_err().to_string();
    assert!(error.contains("line 8, column 6"), "{error}");
    let mut parser = Parser::starting_at("{ a: 1 b: 2 }", Dialect::Shell, start);
    let error = parser.parse_expression().unwrap_err().to_string();
    assert!(error.contains("line 7, column 12"), "{error}");
}
