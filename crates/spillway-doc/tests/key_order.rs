//! Property: the memcomparable key encoding orders exactly as MongoDB's comparison, on random
//! BSON values of every type (DBPointer aside: its parts are private in `bson`).

use std::cmp::Ordering;

use bson::{Binary, Bson, Decimal128, Document, RawDocumentBuf, Regex, Timestamp, doc};
use bson::{oid::ObjectId, spec::BinarySubtype};
use proptest::prelude::*;
use spillway_doc::compare::{compare, compare_raw};
use spillway_doc::key::{encode_descending, encode_raw, to_key};

fn number() -> impl Strategy<Value = Bson> {
    prop_oneof![
        any::<i32>().prop_map(Bson::Int32),
        (-3_i32..3).prop_map(Bson::Int32),
        any::<i64>().prop_map(Bson::Int64),
        (9_007_199_254_740_990_i64..9_007_199_254_740_996).prop_map(Bson::Int64),
        any::<f64>().prop_map(Bson::Double),
        (-3_i32..3).prop_map(|n| Bson::Double(f64::from(n) / 2.0)),
        prop_oneof![Just(f64::NAN), Just(f64::INFINITY), Just(-0.0), Just(0.1)]
            .prop_map(Bson::Double),
        (any::<i64>(), -20_i32..20).prop_map(|(coefficient, exponent)| {
            Bson::Decimal128(
                format!("{coefficient}E{exponent}")
                    .parse::<Decimal128>()
                    .unwrap(),
            )
        }),
        prop_oneof![
            Just("0.1"),
            Just("1.0"),
            Just("-0"),
            Just("NaN"),
            Just("-Infinity"),
            Just("1E-6176")
        ]
        .prop_map(|text| Bson::Decimal128(text.parse::<Decimal128>().unwrap())),
    ]
}

fn scalar() -> impl Strategy<Value = Bson> {
    prop_oneof![
        Just(Bson::MinKey),
        Just(Bson::MaxKey),
        Just(Bson::Null),
        Just(Bson::Undefined),
        number(),
        number(),
        "[a-c\0]{0,4}".prop_map(Bson::String),
        "[a-c]{0,3}".prop_map(Bson::Symbol),
        any::<bool>().prop_map(Bson::Boolean),
        any::<i64>().prop_map(|millis| Bson::DateTime(bson::DateTime::from_millis(millis))),
        (any::<u32>(), any::<u32>())
            .prop_map(|(time, increment)| Bson::Timestamp(Timestamp { time, increment })),
        any::<[u8; 12]>().prop_map(|bytes| Bson::ObjectId(ObjectId::from_bytes(bytes))),
        (0_u8..3, proptest::collection::vec(any::<u8>(), 0..4)).prop_map(|(subtype, bytes)| {
            let subtype = [
                BinarySubtype::Generic,
                BinarySubtype::Uuid,
                BinarySubtype::UserDefined(0x80),
            ][usize::from(subtype)];
            Bson::Binary(Binary { subtype, bytes })
        }),
        ("[a-c]{0,3}", "[im]{0,2}").prop_map(|(pattern, options)| {
            Bson::RegularExpression(Regex {
                pattern: pattern.try_into().unwrap(),
                options: options.try_into().unwrap(),
            })
        }),
        "[a-c]{0,3}".prop_map(Bson::JavaScriptCode),
    ]
}

fn value() -> impl Strategy<Value = Bson> {
    scalar().prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..4).prop_map(Bson::Array),
            proptest::collection::vec(("[a-c]{1,2}", inner), 0..4)
                .prop_map(|fields| { Bson::Document(fields.into_iter().collect::<Document>()) }),
        ]
    })
}

fn raw_key(value: &Bson) -> Vec<u8> {
    let holder = RawDocumentBuf::try_from(&doc! { "v": value.clone() }).unwrap();
    let mut out = Vec::new();
    encode_raw(holder.get("v").unwrap().unwrap(), &mut out);
    out
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(4000))]

    #[test]
    fn key_order_equals_compare(a in value(), b in value()) {
        let expected = compare(&a, &b);
        prop_assert_eq!(to_key(&a).cmp(&to_key(&b)), expected);
        prop_assert_eq!(raw_key(&a), to_key(&a));

        let mut a_descending = Vec::new();
        let mut b_descending = Vec::new();
        encode_descending(&a, &mut a_descending);
        encode_descending(&b, &mut b_descending);
        prop_assert_eq!(a_descending.cmp(&b_descending), expected.reverse());
    }

    #[test]
    fn compare_is_a_total_order_and_agrees_on_raw(a in value(), b in value(), c in value()) {
        prop_assert_eq!(compare(&a, &b), compare(&b, &a).reverse());
        prop_assert_eq!(compare(&a, &a), Ordering::Equal);
        if compare(&a, &b) != Ordering::Greater && compare(&b, &c) != Ordering::Greater {
            prop_assert_ne!(compare(&a, &c), Ordering::Greater);
        }
        let holder = RawDocumentBuf::try_from(&doc! { "a": a.clone(), "b": b.clone() }).unwrap();
        let raw_a = holder.get("a").unwrap().unwrap();
        let raw_b = holder.get("b").unwrap().unwrap();
        prop_assert_eq!(compare_raw(raw_a, raw_b), compare(&a, &b));
    }
}
