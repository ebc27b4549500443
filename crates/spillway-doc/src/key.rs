//! A memcomparable byte encoding of BSON values: comparing two encodings byte-wise gives the
//! same answer as [`crate::compare`] on the values they encode.
//!
//! Indexes (in the database layer) store these bytes as keys in an ordered key-value store,
//! so that equality, ranges and sorts on a field become range scans. Two properties make that
//! work, and the property tests in this module and in `tests/key_order.rs` guard them:
//!
//! - **Order**: `encode(a) < encode(b)` exactly when `compare(a, b) == Less`; values that
//!   compare equal (`1`, `1.0`, `NumberDecimal("1.00")`) encode to the *same* bytes.
//! - **Prefix-free**: no encoding is a proper prefix of another, so encodings concatenate
//!   into compound keys that order field by field, and a descending component is the
//!   byte-wise complement of the ascending one.
//!
//! Layout (all integers big-endian): a canonical-type tag byte (1..=17, see
//! [`crate::compare::CanonicalType`]), then:
//!
//! | type | payload |
//! |---|---|
//! | number | `0x00` for NaN; otherwise `0x01`, the largest double not above the value (8 bytes, sign-flipped IEEE bits), and a tiebreak: `0x00` when that double is the exact value, else `0x01` and the exact decimal value (sign, exponent, digits) |
//! | string, symbol, code | bytes with `0x00` escaped as `0x00 0xFF`, ended by `0x00 0x00` |
//! | object | per field: the value's tag, the escaped name, the value's payload; ended by `0x00` |
//! | array | per element: its full encoding; ended by `0x00` |
//! | binary | length (u32), subtype, bytes |
//! | ObjectId | 12 bytes |
//! | bool | `0x00` or `0x01` |
//! | date | millis as i64 with the sign bit flipped |
//! | timestamp | (time, increment) as u64 |
//! | regex | escaped pattern, escaped options |
//! | code with scope | escaped code, then the scope as an object |
//! | MinKey, undefined, null, DBPointer, MaxKey | nothing |
//!
//! Decoding is deliberately not offered: indexes keep the document id beside the key, and
//! nothing ever needs the value back from its key.

use bson::{Bson, RawBsonRef};

use crate::compare::{Node, View};
use crate::number::Number;

/// Appends the ascending key encoding of `value` to `out`.
pub fn encode(value: &Bson, out: &mut Vec<u8>) {
    encode_node(value, out);
}

/// Appends the ascending key encoding of a raw value to `out`.
pub fn encode_raw(value: RawBsonRef<'_>, out: &mut Vec<u8>) {
    encode_node(value, out);
}

/// The ascending key encoding of `value`, as a new vector.
pub fn to_key(value: &Bson) -> Vec<u8> {
    let mut out = Vec::new();
    encode(value, &mut out);
    out
}

/// Appends the descending key encoding of `value` (the complement of the ascending one) to
/// `out`.
pub fn encode_descending(value: &Bson, out: &mut Vec<u8>) {
    let start = out.len();
    encode(value, out);
    complement(&mut out[start..]);
}

/// Appends the descending key encoding of a raw value to `out`.
pub fn encode_raw_descending(value: RawBsonRef<'_>, out: &mut Vec<u8>) {
    let start = out.len();
    encode_raw(value, out);
    complement(&mut out[start..]);
}

fn complement(bytes: &mut [u8]) {
    for byte in bytes {
        *byte = !*byte;
    }
}

fn encode_node<'a, N: Node<'a>>(value: N, out: &mut Vec<u8>) {
    let view = value.view();
    out.push(view.canonical_type() as u8);
    encode_payload(view, out);
}

fn encode_payload<'a, N: Node<'a>>(view: View<'a, N>, out: &mut Vec<u8>) {
    match view {
        View::MinKey | View::Undefined | View::Null | View::DbPointer | View::MaxKey => {}
        View::Number(number) => encode_number(number, out),
        View::String(text) | View::Code(text) => encode_bytes(text.as_bytes(), out),
        View::Object(object) => encode_object::<N>(object, out),
        View::Array(array) => {
            for item in N::array_items(array) {
                encode_node(item, out);
            }
            out.push(0);
        }
        View::Binary { subtype, bytes } => {
            out.extend((bytes.len() as u32).to_be_bytes());
            out.push(subtype);
            out.extend(bytes);
        }
        View::ObjectId(bytes) => out.extend(bytes),
        View::Boolean(value) => out.push(u8::from(value)),
        View::Date(millis) => out.extend(((millis as u64) ^ (1 << 63)).to_be_bytes()),
        View::Timestamp(value) => out.extend(value.to_be_bytes()),
        View::Regex { pattern, options } => {
            encode_bytes(pattern.as_bytes(), out);
            encode_bytes(options.as_bytes(), out);
        }
        View::CodeWithScope { code, scope } => {
            encode_bytes(code.as_bytes(), out);
            encode_object::<N>(scope, out);
        }
    }
}

fn encode_object<'a, N: Node<'a>>(object: N::Object, out: &mut Vec<u8>) {
    // Objects compare per element by type, then name, then value: lay them out in that order.
    for (name, value) in N::object_fields(object) {
        let view = value.view();
        out.push(view.canonical_type() as u8);
        encode_bytes(name.as_bytes(), out);
        encode_payload(view, out);
    }
    out.push(0);
}

fn encode_bytes(bytes: &[u8], out: &mut Vec<u8>) {
    for &byte in bytes {
        out.push(byte);
        if byte == 0 {
            out.push(0xff);
        }
    }
    out.extend([0, 0]);
}

fn encode_number(number: Number, out: &mut Vec<u8>) {
    let (floor, exact) = number.floor_double();
    if floor.is_nan() {
        out.push(0);
        return;
    }
    out.push(1);
    // -0.0 and 0.0 are the same number and must share a key.
    let floor = if floor == 0.0 { 0.0 } else { floor };
    let bits = floor.to_bits();
    let ordered = if bits >> 63 == 1 {
        !bits
    } else {
        bits | (1 << 63)
    };
    out.extend(ordered.to_be_bytes());
    if exact {
        out.push(0);
    } else {
        out.push(1);
        number.to_exact().encode_memcomparable(out);
    }
}

#[cfg(test)]
mod tests {
    use std::cmp::Ordering;

    use bson::{Decimal128, doc};

    use super::*;
    use crate::compare::compare;

    fn check_order(a: &Bson, b: &Bson) {
        let expected = compare(a, b);
        let actual = to_key(a).cmp(&to_key(b));
        assert_eq!(actual, expected, "{a:?} vs {b:?}");
        let mut a_descending = Vec::new();
        let mut b_descending = Vec::new();
        encode_descending(a, &mut a_descending);
        encode_descending(b, &mut b_descending);
        assert_eq!(
            a_descending.cmp(&b_descending),
            expected.reverse(),
            "descending {a:?} vs {b:?}"
        );
    }

    fn decimal(text: &str) -> Bson {
        Bson::Decimal128(text.parse::<Decimal128>().unwrap())
    }

    #[test]
    fn numbers_encode_in_value_order_and_equal_values_share_keys() {
        let values = [
            Bson::Double(f64::NAN),
            decimal("-Infinity"),
            Bson::Int64(i64::MIN),
            decimal("-0.1"),
            Bson::Double(-0.1),
            Bson::Int32(0),
            Bson::Double(-0.0),
            decimal("0E+10"),
            decimal("1E-6176"),
            Bson::Double(0.1),
            decimal("0.1"),
            Bson::Int32(1),
            decimal("1.0"),
            Bson::Int64(9_007_199_254_740_992),
            Bson::Int64(9_007_199_254_740_993),
            Bson::Double(9_007_199_254_740_994.0),
            Bson::Int64(i64::MAX),
            Bson::Double(f64::INFINITY),
        ];
        for a in &values {
            for b in &values {
                check_order(a, b);
            }
        }
        assert_eq!(to_key(&Bson::Int32(1)), to_key(&Bson::Double(1.0)));
        assert_eq!(to_key(&Bson::Int32(0)), to_key(&Bson::Double(-0.0)));
    }

    #[test]
    fn strings_with_nul_and_prefixes_keep_order() {
        let values =
            ["", "\0", "\0\0", "\0a", "a", "a\0", "ab", "b"].map(|s| Bson::String(s.into()));
        for a in &values {
            for b in &values {
                check_order(a, b);
            }
        }
    }

    #[test]
    fn compound_keys_order_field_by_field() {
        let key = |a: &Bson, b: &Bson| {
            let mut out = Vec::new();
            encode(a, &mut out);
            encode_descending(b, &mut out);
            out
        };
        let low = key(&Bson::String("a".into()), &Bson::Int32(9));
        let mid = key(&Bson::String("a".into()), &Bson::Int32(1));
        let high = key(&Bson::String("ab".into()), &Bson::Int32(100));
        assert_eq!(low.cmp(&mid), Ordering::Less);
        assert_eq!(mid.cmp(&high), Ordering::Less);
        check_order(
            &Bson::Document(doc! { "a": 1 }),
            &Bson::Document(doc! { "a": 1, "b": null }),
        );
    }
}
