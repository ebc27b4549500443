//! Exact BSON sizes and MongoDB's document limits.
//!
//! [`document_size`] computes the encoded size of a decoded document arithmetically (no
//! serialisation), so that the database can refuse an oversized document before it encodes
//! it. The limits are MongoDB's: 16 MiB per document and 100 levels of nesting, what an
//! `_id` may hold ([`check_id`]). Other field names may start with `$` (MongoDB 5.0+); only
//! the values update operators store are refused such names ([`dollar_prefixed_field`]).

use bson::{Bson, Document, spec::BinarySubtype};

use crate::error::{DocError, Result};

/// MongoDB's maximum size of one BSON document, in bytes (16 MiB).
pub const MAX_DOCUMENT_SIZE: usize = 16 * 1024 * 1024;

/// MongoDB's maximum nesting depth of documents and arrays.
pub const MAX_NESTING_DEPTH: usize = 100;

/// The exact size in bytes of `document` encoded as BSON.
pub fn document_size(document: &Document) -> usize {
    elements_size(document.iter().map(|(key, value)| (key.len(), value)))
}

/// The exact size in bytes of `value`'s payload inside a BSON element (without the type
/// byte and the field name).
pub fn value_size(value: &Bson) -> usize {
    match value {
        Bson::Double(_) | Bson::Int64(_) | Bson::DateTime(_) | Bson::Timestamp(_) => 8,
        Bson::Int32(_) => 4,
        Bson::Decimal128(_) => 16,
        Bson::ObjectId(_) => 12,
        Bson::Boolean(_) => 1,
        Bson::Null | Bson::Undefined | Bson::MinKey | Bson::MaxKey => 0,
        Bson::String(text) | Bson::JavaScriptCode(text) | Bson::Symbol(text) => 4 + text.len() + 1,
        Bson::Document(document) => document_size(document),
        Bson::Array(array) => elements_size(
            array
                .iter()
                .enumerate()
                .map(|(index, value)| (decimal_digits(index), value)),
        ),
        Bson::Binary(binary) => {
            // The old binary subtype repeats the length inside the payload.
            let old_length_prefix = if binary.subtype == BinarySubtype::BinaryOld {
                4
            } else {
                0
            };
            4 + 1 + old_length_prefix + binary.bytes.len()
        }
        Bson::RegularExpression(regex) => {
            regex.pattern.as_str().len() + 1 + regex.options.as_str().len() + 1
        }
        Bson::JavaScriptCodeWithScope(code) => {
            4 + (4 + code.code.len() + 1) + document_size(&code.scope)
        }
        Bson::DbPointer(_) => {
            // The namespace is private in `bson`; measure through the encoder.
            bson::serialize_to_vec(&bson::doc! { "": value.clone() })
                .map_or(0, |bytes| bytes.len() - 7)
        }
    }
}

fn elements_size<'a>(elements: impl Iterator<Item = (usize, &'a Bson)>) -> usize {
    // int32 length + (type byte + cstring name + payload) per element + terminating NUL
    4 + elements
        .map(|(name_length, value)| 1 + name_length + 1 + value_size(value))
        .sum::<usize>()
        + 1
}

fn decimal_digits(index: usize) -> usize {
    index.checked_ilog10().map_or(1, |log| log as usize + 1)
}

/// Fails with [`DocError::DocumentTooLarge`] when `document` exceeds `limit` bytes, and
/// returns its size otherwise.
pub fn check_size(document: &Document, limit: usize) -> Result<usize> {
    let size = document_size(document);
    if size > limit {
        return Err(DocError::DocumentTooLarge { size, limit });
    }
    Ok(size)
}

/// The nesting depth of `document`: 1 for a flat document, +1 per embedded document or
/// array level.
pub fn nesting_depth(document: &Document) -> usize {
    fn value_depth(value: &Bson) -> usize {
        match value {
            Bson::Document(document) => nesting_depth(document),
            Bson::Array(array) => 1 + array.iter().map(value_depth).max().unwrap_or(0),
            Bson::JavaScriptCodeWithScope(code) => nesting_depth(&code.scope),
            _ => 0,
        }
    }
    1 + document.values().map(value_depth).max().unwrap_or(0)
}

/// Fails with [`DocError::NestingTooDeep`] when `document` nests deeper than
/// [`MAX_NESTING_DEPTH`].
pub fn check_nesting(document: &Document) -> Result<()> {
    let depth = nesting_depth(document);
    if depth > MAX_NESTING_DEPTH {
        return Err(DocError::NestingTooDeep {
            depth,
            limit: MAX_NESTING_DEPTH,
        });
    }
    Ok(())
}

/// Fails when `document` cannot be stored: over [`MAX_DOCUMENT_SIZE`] or nested too deep.
pub fn check_storable(document: &Document) -> Result<()> {
    check_size(document, MAX_DOCUMENT_SIZE)?;
    check_nesting(document)
}

/// Fails with [`DocError::InvalidValue`] when `id` cannot be a document's `_id`: MongoDB
/// refuses arrays, regular expressions and `undefined`, and documents holding a field name
/// that starts with `$` at any depth.
pub fn check_id(id: &Bson) -> Result<()> {
    let refused = match id {
        Bson::Array(_) | Bson::RegularExpression(_) | Bson::Undefined => {
            Some(format!("_id cannot be {}", crate::path::describe(id)))
        }
        // Not even DBRef's names: MongoDB refuses every `$` name inside an `_id`.
        Bson::Document(document) => first_dollar_field(document, &[]).map(|(_, name)| {
            format!(
                "_id cannot hold a field name starting with '$' ('{name}' is not valid for storage)"
            )
        }),
        _ => None,
    };
    match refused {
        Some(message) => Err(DocError::InvalidValue { message }),
        None => Ok(()),
    }
}

/// Field names that may start with `$` in a stored document (outside `_id`): DBRef's.
pub const DBREF_FIELDS: [&str; 3] = ["$ref", "$id", "$db"];

/// How every refusal of a `$` field name in an update operator's value ends.
pub(crate) const DOLLAR_NAMES_REFUSED: &str = "update operators cannot store names starting with '$' (DBRef's $ref, $id and $db aside); use a pipeline update with $setField or $replaceWith";

/// The first field name in `value` (a document or an array, at any depth) that starts with
/// `$` and is not one of [`DBREF_FIELDS`], with its dotted path relative to `value`
/// (`("a.0.$x", "$x")`); `None` for other values.
pub fn dollar_prefixed_field(value: &Bson) -> Option<(String, &str)> {
    first_dollar_below(value, &DBREF_FIELDS)
}

/// The path and name of the first field name starting with `$` and not in `allowed`.
fn first_dollar_field<'a>(document: &'a Document, allowed: &[&str]) -> Option<(String, &'a str)> {
    document.iter().find_map(|(key, value)| {
        if key.starts_with('$') && !allowed.contains(&key.as_str()) {
            return Some((key.clone(), key.as_str()));
        }
        let (below, name) = first_dollar_below(value, allowed)?;
        Some((format!("{key}.{below}"), name))
    })
}

fn first_dollar_in_array<'a>(items: &'a [Bson], allowed: &[&str]) -> Option<(String, &'a str)> {
    items.iter().enumerate().find_map(|(index, item)| {
        let (below, name) = first_dollar_below(item, allowed)?;
        Some((format!("{index}.{below}"), name))
    })
}

fn first_dollar_below<'a>(value: &'a Bson, allowed: &[&str]) -> Option<(String, &'a str)> {
    match value {
        Bson::Document(document) => first_dollar_field(document, allowed),
        Bson::Array(items) => first_dollar_in_array(items, allowed),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use bson::{Binary, Regex, Timestamp, doc, oid::ObjectId};

    use super::*;

    #[test]
    fn computed_size_equals_encoded_size() {
        let long_array: Vec<Bson> = (0..1234).map(Bson::Int32).collect();
        let documents = [
            doc! {},
            doc! { "a": 1 },
            doc! {
                "_id": ObjectId::from_bytes([7; 12]),
                "s": "héllo",
                "d": 1.5,
                "l": 5_i64,
                "n": null,
                "b": true,
                "arr": long_array,
                "nested": { "x": [ { "y": "z" } ] },
                "bin": Binary { subtype: BinarySubtype::Generic, bytes: vec![1, 2, 3] },
                "old": Binary { subtype: BinarySubtype::BinaryOld, bytes: vec![1, 2, 3] },
                "re": Regex { pattern: "a.*b".try_into().unwrap(), options: "i".try_into().unwrap() },
                "ts": Timestamp { time: 1, increment: 2 },
                "date": bson::DateTime::from_millis(5),
                "dec": Bson::Decimal128("1.5".parse().unwrap()),
                "code": Bson::JavaScriptCode("f()".into()),
                "scope": Bson::JavaScriptCodeWithScope(bson::JavaScriptCodeWithScope {
                    code: "g()".into(),
                    scope: doc! { "k": 1 },
                }),
                "min": Bson::MinKey,
                "max": Bson::MaxKey,
                "undef": Bson::Undefined,
                "sym": Bson::Symbol("s".into()),
            },
        ];
        for document in &documents {
            let encoded = bson::serialize_to_vec(document).unwrap();
            assert_eq!(document_size(document), encoded.len(), "{document:?}");
        }
    }

    #[test]
    fn limits_are_typed_errors() {
        let big = doc! { "blob": "x".repeat(MAX_DOCUMENT_SIZE) };
        let error = check_size(&big, MAX_DOCUMENT_SIZE).unwrap_err();
        assert_eq!(
            error,
            DocError::DocumentTooLarge {
                size: MAX_DOCUMENT_SIZE + 16,
                limit: MAX_DOCUMENT_SIZE
            }
        );
        assert_eq!(
            error.to_string(),
            "document is 16777232 bytes, over the 16777216-byte limit"
        );

        let mut deep = doc! { "leaf": 1 };
        for _ in 0..MAX_NESTING_DEPTH {
            deep = doc! { "d": deep };
        }
        assert_eq!(nesting_depth(&deep), MAX_NESTING_DEPTH + 1);
        assert_eq!(
            check_nesting(&deep).unwrap_err().to_string(),
            "document is nested 101 levels deep, over the limit of 100"
        );
        assert!(check_nesting(&doc! { "a": [[1]] }).is_ok());
        assert_eq!(nesting_depth(&doc! { "a": [[1]] }), 3);
    }

    #[test]
    fn ids_mongodb_refuses() {
        let refused = |id: Bson| check_id(&id).unwrap_err().to_string();
        assert!(refused(Bson::Array(vec![])).contains("_id cannot be an array"));
        assert!(refused(Bson::Undefined).contains("_id cannot be"));
        assert!(refused(bson::bson!({ "$k": 1 })).contains("'$k'"));
        assert!(refused(bson::bson!({ "a": [{ "$ref": 1 }] })).contains("'$ref'"));
        assert!(check_id(&bson::bson!({ "a": { "b$": 1 } })).is_ok());
        assert!(check_id(&Bson::Int32(1)).is_ok());
    }
}
