//! MongoDB's BSON comparison order, on decoded ([`Bson`]) and raw ([`RawBsonRef`]) values.
//!
//! Values of different types compare by their *canonical type* first:
//!
//! MinKey < undefined < null < numbers < strings (and symbols) < objects < arrays < binary <
//! ObjectId < bool < date < timestamp < regex < DBPointer < code < code with scope < MaxKey
//!
//! Within a type: numbers by exact value across int32, int64, double and decimal128 (NaN below
//! every other number); strings byte-wise, or under a [`Collation`] with the `_collated` functions; objects element by element (each
//! element by canonical type, then field name, then value; a prefix sorts first); arrays
//! element by element; binary by length, then subtype, then bytes; dates as signed
//! milliseconds; timestamps as unsigned (time, increment); regexes by pattern, then options.
//!
//! Both representations go through one algorithm (the private `Node` trait), so that a
//! filter evaluated on raw bytes straight from storage and a sort over decoded documents can
//! never disagree. This module only orders values; it must never allocate on the common
//! paths (it sits under every sort and every range predicate).
//!
//! Raw values are assumed well formed (storage validates every document it accepts); a
//! malformed element inside a raw document or array ends that container's iteration rather
//! than panicking.

use std::cmp::Ordering;

use bson::{Bson, Document, RawArray, RawBsonRef, RawDocument};

use crate::collation::Collation;
use crate::number::Number;

/// The canonical type rank of a value: values of different ranks compare by rank alone, and
/// comparison operators in filters only match values of the same rank (type bracketing).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[repr(u8)]
pub enum CanonicalType {
    /// `MinKey`.
    MinKey = 1,
    /// The deprecated `undefined`.
    Undefined = 2,
    /// `null`.
    Null = 3,
    /// int32, int64, double, decimal128.
    Number = 4,
    /// string and symbol.
    String = 5,
    /// embedded document.
    Object = 6,
    /// array.
    Array = 7,
    /// binary data.
    Binary = 8,
    /// ObjectId.
    ObjectId = 9,
    /// boolean.
    Boolean = 10,
    /// UTC datetime.
    Date = 11,
    /// internal timestamp.
    Timestamp = 12,
    /// regular expression.
    Regex = 13,
    /// the deprecated DBPointer.
    DbPointer = 14,
    /// JavaScript code.
    Code = 15,
    /// JavaScript code with scope.
    CodeWithScope = 16,
    /// `MaxKey`.
    MaxKey = 17,
}

/// The canonical type of a decoded value.
pub fn canonical_type(value: &Bson) -> CanonicalType {
    value.view().canonical_type()
}

/// The canonical type of a raw value.
pub fn canonical_type_raw(value: RawBsonRef<'_>) -> CanonicalType {
    value.view().canonical_type()
}

/// Compares two decoded values in MongoDB's order.
pub fn compare(a: &Bson, b: &Bson) -> Ordering {
    compare_nodes(a, b, &SIMPLE)
}

/// Compares two raw values in MongoDB's order.
pub fn compare_raw(a: RawBsonRef<'_>, b: RawBsonRef<'_>) -> Ordering {
    compare_raw_collated(a, b, &SIMPLE)
}

/// [`compare`] with strings (and symbols, inside documents and arrays too) ordered by
/// `collation`; field names and JavaScript code still compare by code point, as in MongoDB.
pub fn compare_collated(a: &Bson, b: &Bson, collation: &Collation) -> Ordering {
    compare_nodes(a, b, collation)
}

/// [`compare_raw`] under `collation` (see [`compare_collated`]).
pub fn compare_raw_collated(
    a: RawBsonRef<'_>,
    b: RawBsonRef<'_>,
    collation: &Collation,
) -> Ordering {
    // Values of one fixed-width type, the common case of a filter's equality on a scan,
    // compared without the general comparison's canonical types and number views.
    match (a, b) {
        (RawBsonRef::Int32(a), RawBsonRef::Int32(b)) => a.cmp(&b),
        (RawBsonRef::Int64(a), RawBsonRef::Int64(b)) => a.cmp(&b),
        (RawBsonRef::ObjectId(a), RawBsonRef::ObjectId(b)) => a.cmp(&b),
        (RawBsonRef::Boolean(a), RawBsonRef::Boolean(b)) => a.cmp(&b),
        (RawBsonRef::DateTime(a), RawBsonRef::DateTime(b)) => {
            a.timestamp_millis().cmp(&b.timestamp_millis())
        }
        _ => compare_nodes(a, b, collation),
    }
}

/// Compares two decoded documents in MongoDB's order (field order matters).
pub fn compare_documents(a: &Document, b: &Document) -> Ordering {
    compare_elements(
        a.iter().map(|(k, v)| (k.as_str(), v)),
        b.iter().map(|(k, v)| (k.as_str(), v)),
        &SIMPLE,
    )
}

/// Whether two decoded values are equal in MongoDB's sense (`1 == 1.0`, field order matters).
pub fn values_equal(a: &Bson, b: &Bson) -> bool {
    compare(a, b) == Ordering::Equal
}

/// Whether two raw values are equal in MongoDB's sense.
pub fn values_equal_raw(a: RawBsonRef<'_>, b: RawBsonRef<'_>) -> bool {
    compare_raw(a, b) == Ordering::Equal
}

/// The simple collation, for the comparisons that take none.
static SIMPLE: Collation = Collation::simple();

/// A value seen through the lens of comparison: what it is, without the representation.
#[derive(Clone, Copy)]
pub(crate) enum View<'a, N: Node<'a>> {
    MinKey,
    Undefined,
    Null,
    Number(Number),
    String(&'a str),
    Object(N::Object),
    Array(N::Array),
    Binary {
        subtype: u8,
        bytes: &'a [u8],
    },
    ObjectId([u8; 12]),
    Boolean(bool),
    Date(i64),
    Timestamp(u64),
    Regex {
        pattern: &'a str,
        options: &'a str,
    },
    /// DBPointer's parts are private in the `bson` crate, so all DBPointers compare equal.
    DbPointer,
    Code(&'a str),
    CodeWithScope {
        code: &'a str,
        scope: N::Object,
    },
    MaxKey,
}

impl<'a, N: Node<'a>> View<'a, N> {
    pub(crate) fn canonical_type(&self) -> CanonicalType {
        match self {
            View::MinKey => CanonicalType::MinKey,
            View::Undefined => CanonicalType::Undefined,
            View::Null => CanonicalType::Null,
            View::Number(_) => CanonicalType::Number,
            View::String(_) => CanonicalType::String,
            View::Object(_) => CanonicalType::Object,
            View::Array(_) => CanonicalType::Array,
            View::Binary { .. } => CanonicalType::Binary,
            View::ObjectId(_) => CanonicalType::ObjectId,
            View::Boolean(_) => CanonicalType::Boolean,
            View::Date(_) => CanonicalType::Date,
            View::Timestamp(_) => CanonicalType::Timestamp,
            View::Regex { .. } => CanonicalType::Regex,
            View::DbPointer => CanonicalType::DbPointer,
            View::Code(_) => CanonicalType::Code,
            View::CodeWithScope { .. } => CanonicalType::CodeWithScope,
            View::MaxKey => CanonicalType::MaxKey,
        }
    }
}

/// One representation of BSON values (decoded or raw), as the comparison and key encoding
/// need to see it.
pub(crate) trait Node<'a>: Copy + 'a {
    /// An embedded document of this representation.
    type Object: Copy;
    /// An array of this representation.
    type Array: Copy;
    fn view(self) -> View<'a, Self>;
    fn object_fields(object: Self::Object) -> impl Iterator<Item = (&'a str, Self)>;
    fn array_items(array: Self::Array) -> impl Iterator<Item = Self>;
}

impl<'a> Node<'a> for &'a Bson {
    type Object = &'a Document;
    type Array = &'a [Bson];

    fn view(self) -> View<'a, Self> {
        match self {
            Bson::MinKey => View::MinKey,
            Bson::Undefined => View::Undefined,
            Bson::Null => View::Null,
            Bson::Int32(value) => View::Number(Number::Int(i64::from(*value))),
            Bson::Int64(value) => View::Number(Number::Int(*value)),
            Bson::Double(value) => View::Number(Number::Double(*value)),
            Bson::Decimal128(value) => View::Number(Number::Decimal(*value)),
            Bson::String(value) | Bson::Symbol(value) => View::String(value),
            Bson::Document(document) => View::Object(document),
            Bson::Array(array) => View::Array(array.as_slice()),
            Bson::Binary(binary) => View::Binary {
                subtype: u8::from(binary.subtype),
                bytes: &binary.bytes,
            },
            Bson::ObjectId(id) => View::ObjectId(id.bytes()),
            Bson::Boolean(value) => View::Boolean(*value),
            Bson::DateTime(value) => View::Date(value.timestamp_millis()),
            Bson::Timestamp(value) => {
                View::Timestamp(u64::from(value.time) << 32 | u64::from(value.increment))
            }
            Bson::RegularExpression(regex) => View::Regex {
                pattern: regex.pattern.as_str(),
                options: regex.options.as_str(),
            },
            Bson::DbPointer(_) => View::DbPointer,
            Bson::JavaScriptCode(code) => View::Code(code),
            Bson::JavaScriptCodeWithScope(code) => View::CodeWithScope {
                code: &code.code,
                scope: &code.scope,
            },
            Bson::MaxKey => View::MaxKey,
        }
    }

    fn object_fields(object: &'a Document) -> impl Iterator<Item = (&'a str, Self)> {
        object.iter().map(|(key, value)| (key.as_str(), value))
    }

    fn array_items(array: &'a [Bson]) -> impl Iterator<Item = Self> {
        array.iter()
    }
}

impl<'a> Node<'a> for RawBsonRef<'a> {
    type Object = &'a RawDocument;
    type Array = &'a RawArray;

    fn view(self) -> View<'a, Self> {
        match self {
            RawBsonRef::MinKey => View::MinKey,
            RawBsonRef::Undefined => View::Undefined,
            RawBsonRef::Null => View::Null,
            RawBsonRef::Int32(value) => View::Number(Number::Int(i64::from(value))),
            RawBsonRef::Int64(value) => View::Number(Number::Int(value)),
            RawBsonRef::Double(value) => View::Number(Number::Double(value)),
            RawBsonRef::Decimal128(value) => View::Number(Number::Decimal(value)),
            RawBsonRef::String(value) | RawBsonRef::Symbol(value) => View::String(value),
            RawBsonRef::Document(document) => View::Object(document),
            RawBsonRef::Array(array) => View::Array(array),
            RawBsonRef::Binary(binary) => View::Binary {
                subtype: u8::from(binary.subtype),
                bytes: binary.bytes,
            },
            RawBsonRef::ObjectId(id) => View::ObjectId(id.bytes()),
            RawBsonRef::Boolean(value) => View::Boolean(value),
            RawBsonRef::DateTime(value) => View::Date(value.timestamp_millis()),
            RawBsonRef::Timestamp(value) => {
                View::Timestamp(u64::from(value.time) << 32 | u64::from(value.increment))
            }
            RawBsonRef::RegularExpression(regex) => View::Regex {
                pattern: regex.pattern.as_str(),
                options: regex.options.as_str(),
            },
            RawBsonRef::DbPointer(_) => View::DbPointer,
            RawBsonRef::JavaScriptCode(code) => View::Code(code),
            RawBsonRef::JavaScriptCodeWithScope(code) => View::CodeWithScope {
                code: code.code,
                scope: code.scope,
            },
            RawBsonRef::MaxKey => View::MaxKey,
        }
    }

    fn object_fields(object: &'a RawDocument) -> impl Iterator<Item = (&'a str, Self)> {
        object
            .iter()
            .map_while(Result::ok)
            .map(|(key, value)| (key.as_str(), value))
    }

    fn array_items(array: &'a RawArray) -> impl Iterator<Item = Self> {
        array.into_iter().map_while(Result::ok)
    }
}

pub(crate) fn compare_nodes<'a, 'b, A: Node<'a>, B: Node<'b>>(
    a: A,
    b: B,
    collation: &Collation,
) -> Ordering {
    let (a, b) = (a.view(), b.view());
    let by_type = a.canonical_type().cmp(&b.canonical_type());
    if by_type != Ordering::Equal {
        return by_type;
    }
    match (a, b) {
        (View::Number(x), View::Number(y)) => x.compare(y),
        (View::String(x), View::String(y)) => collation.compare_strings(x, y),
        (View::Code(x), View::Code(y)) => x.cmp(y),
        (View::Object(x), View::Object(y)) => {
            compare_elements(A::object_fields(x), B::object_fields(y), collation)
        }
        (View::Array(x), View::Array(y)) => {
            compare_sequences(A::array_items(x), B::array_items(y), collation)
        }
        (
            View::Binary {
                subtype: x_subtype,
                bytes: x_bytes,
            },
            View::Binary {
                subtype: y_subtype,
                bytes: y_bytes,
            },
        ) => x_bytes
            .len()
            .cmp(&y_bytes.len())
            .then(x_subtype.cmp(&y_subtype))
            .then_with(|| x_bytes.cmp(y_bytes)),
        (View::ObjectId(x), View::ObjectId(y)) => x.cmp(&y),
        (View::Boolean(x), View::Boolean(y)) => x.cmp(&y),
        (View::Date(x), View::Date(y)) => x.cmp(&y),
        (View::Timestamp(x), View::Timestamp(y)) => x.cmp(&y),
        (
            View::Regex {
                pattern: x_pattern,
                options: x_options,
            },
            View::Regex {
                pattern: y_pattern,
                options: y_options,
            },
        ) => x_pattern
            .cmp(y_pattern)
            .then_with(|| x_options.cmp(y_options)),
        (
            View::CodeWithScope {
                code: x_code,
                scope: x_scope,
            },
            View::CodeWithScope {
                code: y_code,
                scope: y_scope,
            },
        ) => x_code.cmp(y_code).then_with(|| {
            compare_elements(
                A::object_fields(x_scope),
                B::object_fields(y_scope),
                &SIMPLE,
            )
        }),
        // Same canonical type and no payload to compare (MinKey, null, DBPointer, ...).
        _ => Ordering::Equal,
    }
}

/// Compares the fields of two objects: per element, canonical type, then name, then value.
fn compare_elements<'a, 'b, A: Node<'a>, B: Node<'b>>(
    mut a: impl Iterator<Item = (&'a str, A)>,
    mut b: impl Iterator<Item = (&'b str, B)>,
    collation: &Collation,
) -> Ordering {
    loop {
        match (a.next(), b.next()) {
            (None, None) => return Ordering::Equal,
            (None, Some(_)) => return Ordering::Less,
            (Some(_), None) => return Ordering::Greater,
            (Some((a_name, a_value)), Some((b_name, b_value))) => {
                let order = a_value
                    .view()
                    .canonical_type()
                    .cmp(&b_value.view().canonical_type())
                    .then_with(|| a_name.cmp(b_name))
                    .then_with(|| compare_nodes(a_value, b_value, collation));
                if order != Ordering::Equal {
                    return order;
                }
            }
        }
    }
}

/// Compares two arrays element by element; a prefix sorts first.
fn compare_sequences<'a, 'b, A: Node<'a>, B: Node<'b>>(
    mut a: impl Iterator<Item = A>,
    mut b: impl Iterator<Item = B>,
    collation: &Collation,
) -> Ordering {
    loop {
        match (a.next(), b.next()) {
            (None, None) => return Ordering::Equal,
            (None, Some(_)) => return Ordering::Less,
            (Some(_), None) => return Ordering::Greater,
            (Some(x), Some(y)) => {
                let order = compare_nodes(x, y, collation);
                if order != Ordering::Equal {
                    return order;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use bson::{
        Binary, Decimal128, RawDocumentBuf, Regex, Timestamp, doc, oid::ObjectId,
        spec::BinarySubtype,
    };

    use super::*;

    /// Values in strictly ascending MongoDB order, one per line of the canonical table.
    fn ascending() -> Vec<Bson> {
        vec![
            Bson::MinKey,
            Bson::Undefined,
            Bson::Null,
            Bson::Double(f64::NAN),
            Bson::Double(f64::NEG_INFINITY),
            Bson::Int64(i64::MIN),
            Bson::Int32(-1),
            Bson::Decimal128("-0.5".parse::<Decimal128>().unwrap()),
            Bson::Int32(0),
            Bson::Double(0.5),
            Bson::Int64(9_007_199_254_740_992),
            Bson::Int64(9_007_199_254_740_993),
            Bson::Double(f64::INFINITY),
            Bson::String(String::new()),
            Bson::String("a".into()),
            Bson::Symbol("ab".into()),
            Bson::String("b".into()),
            Bson::Document(doc! {}),
            Bson::Document(doc! { "a": 1 }),
            Bson::Document(doc! { "a": 1, "b": 1 }),
            // Per element the value's type comes before the field name.
            Bson::Document(doc! { "b": 0 }),
            Bson::Document(doc! { "a": "x" }),
            Bson::Array(vec![]),
            Bson::Array(vec![Bson::Int32(1)]),
            Bson::Array(vec![Bson::Int32(1), Bson::Int32(0)]),
            Bson::Array(vec![Bson::String("a".into())]),
            Bson::Binary(Binary {
                subtype: BinarySubtype::UserDefined(0x80),
                bytes: vec![9],
            }),
            Bson::Binary(Binary {
                subtype: BinarySubtype::Generic,
                bytes: vec![1, 2],
            }),
            Bson::Binary(Binary {
                subtype: BinarySubtype::Uuid,
                bytes: vec![0, 0],
            }),
            Bson::ObjectId(ObjectId::from_bytes([0; 12])),
            Bson::ObjectId(ObjectId::from_bytes([1; 12])),
            Bson::Boolean(false),
            Bson::Boolean(true),
            Bson::DateTime(bson::DateTime::from_millis(-1)),
            Bson::DateTime(bson::DateTime::from_millis(0)),
            Bson::Timestamp(Timestamp {
                time: 1,
                increment: 9,
            }),
            Bson::Timestamp(Timestamp {
                time: 2,
                increment: 0,
            }),
            Bson::RegularExpression(Regex {
                pattern: "a".try_into().unwrap(),
                options: "".try_into().unwrap(),
            }),
            Bson::RegularExpression(Regex {
                pattern: "a".try_into().unwrap(),
                options: "i".try_into().unwrap(),
            }),
            Bson::JavaScriptCode("x".into()),
            Bson::MaxKey,
        ]
    }

    fn raw_value(value: &Bson) -> RawDocumentBuf {
        RawDocumentBuf::try_from(&doc! { "v": value.clone() }).unwrap()
    }

    #[test]
    fn canonical_order_holds_on_decoded_and_raw_values() {
        let values = ascending();
        let raws: Vec<RawDocumentBuf> = values.iter().map(raw_value).collect();
        for (i, a) in values.iter().enumerate() {
            for (j, b) in values.iter().enumerate() {
                let expected = i.cmp(&j);
                assert_eq!(compare(a, b), expected, "{a:?} vs {b:?}");
                let raw_a = raws[i].get("v").unwrap().unwrap();
                let raw_b = raws[j].get("v").unwrap().unwrap();
                assert_eq!(compare_raw(raw_a, raw_b), expected, "raw {a:?} vs {b:?}");
            }
        }
    }

    #[test]
    fn equal_values_of_different_representations() {
        let equal_pairs = [
            (Bson::Int32(1), Bson::Double(1.0)),
            (Bson::Int64(1), Bson::Decimal128("1.000".parse().unwrap())),
            (Bson::Double(-0.0), Bson::Int32(0)),
            (
                Bson::Double(f64::NAN),
                Bson::Decimal128("NaN".parse().unwrap()),
            ),
            (Bson::String("s".into()), Bson::Symbol("s".into())),
            (
                Bson::Document(doc! { "a": 1 }),
                Bson::Document(doc! { "a": 1.0 }),
            ),
        ];
        for (a, b) in equal_pairs {
            assert!(values_equal(&a, &b), "{a:?} == {b:?}");
        }
        assert!(!values_equal(
            &Bson::Document(doc! { "a": 1, "b": 2 }),
            &Bson::Document(doc! { "b": 2, "a": 1 })
        ));
    }
}
