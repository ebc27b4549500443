//! Property tests for `spillway_doc::shell`: whatever is printed reads back as the same
//! value, and no input makes the parser panic.

use bson::oid::ObjectId;
use bson::spec::BinarySubtype;
use bson::{
    Binary, Bson, DateTime, Decimal128, Document, JavaScriptCodeWithScope, Regex, Timestamp,
};
use proptest::prelude::*;
use spillway_doc::shell::{
    parse_extjson, parse_value, to_canonical_extjson_string, to_shell_string,
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
        (Bson::Document(x), Bson::Document(y)) => same_document(x, y),
        (Bson::JavaScriptCodeWithScope(x), Bson::JavaScriptCodeWithScope(y)) => {
            x.code == y.code && same_document(&x.scope, &y.scope)
        }
        _ => a == b,
    }
}

fn same_document(x: &Document, y: &Document) -> bool {
    x.len() == y.len()
        && x.iter()
            .zip(y)
            .all(|((kx, vx), (ky, vy))| kx == ky && same(vx, vy))
}

/// Field names: anything without NUL, except names starting with `$`, which Extended JSON
/// (and so the shell parser) reserves for its own objects.
fn key() -> impl Strategy<Value = String> {
    prop_oneof![
        "[a-z_][a-z0-9_]{0,8}",
        "[^\u{0}$][^\u{0}]{0,8}",
        Just(String::new()),
    ]
}

fn double() -> impl Strategy<Value = f64> {
    prop_oneof![
        any::<f64>(),
        Just(-0.0),
        Just(f64::NAN),
        Just(f64::INFINITY),
        Just(f64::NEG_INFINITY),
        Just(5e-324),
        Just(1e21),
        (-1_000_i32..1000).prop_map(f64::from),
    ]
}

fn decimal() -> impl Strategy<Value = Decimal128> {
    prop_oneof![
        ("-?[0-9]{1,34}", -6176_i32..6111)
            .prop_map(|(digits, exponent)| format!("{digits}E{exponent}")),
        "-?[0-9]{1,10}\\.[0-9]{0,10}",
        Just("NaN".to_owned()),
        Just("-Infinity".to_owned()),
    ]
    .prop_map(|text| {
        text.parse::<Decimal128>()
            .expect("generated decimals are valid")
    })
}

fn regex() -> impl Strategy<Value = Regex> {
    let options = proptest::sample::subsequence(vec!['i', 'l', 'm', 's', 'u', 'x'], 0..=6);
    ("[^\u{0}]{0,12}", options).prop_map(|(pattern, options)| Regex {
        pattern: pattern.try_into().expect("no NUL"),
        options: options
            .into_iter()
            .collect::<String>()
            .try_into()
            .expect("letters"),
    })
}

fn binary() -> impl Strategy<Value = Binary> {
    prop_oneof![
        (any::<u8>(), proptest::collection::vec(any::<u8>(), 0..20)).prop_map(
            |(subtype, bytes)| Binary {
                subtype: BinarySubtype::from(subtype),
                bytes
            }
        ),
        any::<[u8; 16]>().prop_map(|bytes| Binary {
            subtype: BinarySubtype::Uuid,
            bytes: bytes.to_vec()
        }),
    ]
}

fn scalar() -> impl Strategy<Value = Bson> {
    prop_oneof![
        double().prop_map(Bson::Double),
        any::<String>().prop_map(Bson::String),
        any::<bool>().prop_map(Bson::Boolean),
        Just(Bson::Null),
        Just(Bson::Undefined),
        Just(Bson::MinKey),
        Just(Bson::MaxKey),
        any::<i32>().prop_map(Bson::Int32),
        any::<i64>().prop_map(Bson::Int64),
        prop_oneof![any::<i64>(), -62_167_219_200_000_i64..253_402_300_800_000]
            .prop_map(|millis| Bson::DateTime(DateTime::from_millis(millis))),
        (any::<u32>(), any::<u32>())
            .prop_map(|(time, increment)| Bson::Timestamp(Timestamp { time, increment })),
        any::<[u8; 12]>().prop_map(|bytes| Bson::ObjectId(ObjectId::from_bytes(bytes))),
        decimal().prop_map(Bson::Decimal128),
        regex().prop_map(Bson::RegularExpression),
        binary().prop_map(Bson::Binary),
        any::<String>().prop_map(Bson::JavaScriptCode),
        any::<String>().prop_map(Bson::Symbol),
    ]
}

fn value() -> impl Strategy<Value = Bson> {
    scalar().prop_recursive(4, 48, 6, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..6).prop_map(Bson::Array),
            proptest::collection::vec((key(), inner.clone()), 0..6)
                .prop_map(|fields| Bson::Document(fields.into_iter().collect())),
            (
                any::<String>(),
                proptest::collection::vec((key(), inner), 0..3)
            )
                .prop_map(|(code, fields)| {
                    Bson::JavaScriptCodeWithScope(JavaScriptCodeWithScope {
                        code,
                        scope: fields.into_iter().collect(),
                    })
                }),
        ]
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn shell_output_reads_back_as_the_same_value(value in value()) {
        let compact = to_shell_string(&value);
        let read_back = parse_value(&compact).map_err(|error| TestCaseError::fail(format!("{compact}: {error}")))?;
        prop_assert!(same(&read_back, &value), "{compact}\nread back as {read_back:?}");

        let pretty = to_shell_string_pretty(&value);
        let read_back = parse_value(&pretty).map_err(|error| TestCaseError::fail(format!("{pretty}: {error}")))?;
        prop_assert!(same(&read_back, &value), "{pretty}\nread back as {read_back:?}");
    }

    #[test]
    fn canonical_extended_json_reads_back_as_the_same_value(value in value()) {
        let json = to_canonical_extjson_string(&value);
        let read_back = parse_extjson(&json).map_err(|error| TestCaseError::fail(format!("{json}: {error}")))?;
        prop_assert!(same(&read_back, &value), "{json}\nread back as {read_back:?}");
        // The shell parser reads Extended JSON too.
        let read_back = parse_value(&json).map_err(|error| TestCaseError::fail(format!("{json}: {error}")))?;
        prop_assert!(same(&read_back, &value), "{json}\nread back as {read_back:?}");
    }

    #[test]
    fn no_input_makes_the_parsers_panic(text in "[-{}\\[\\](),:.'\"/*\\\\a-z0-9$ \n+eEx_]{0,40}|\\PC{0,40}") {
        // Errors are fine; panics are not. The error must point inside the text.
        for result in [parse_value(&text), parse_extjson(&text)] {
            if let Err(spillway_doc::DocError::Syntax { line, column, .. }) = result {
                prop_assert!(line >= 1 && column >= 1);
                prop_assert!(line <= text.lines().count().max(1) + 1, "line {line} in {text:?}");
            }
        }
    }
}
