//! Index entries of one document: which keys a secondary index holds for it.
//!
//! Follows MongoDB's key generation: a missing field indexes as `null`; an array reached by
//! the path gives one entry per element (an empty array indexes as `undefined`), arrays of
//! documents are traversed for dotted paths, identical keys are kept once; a compound index
//! may fan out over at most one array field per document ("parallel arrays" are refused).
//! A hashed field (`{ a: "hashed" }`) is indexed by [`hashed_value`] of its value, never an
//! array. A geospatial field (`2d`, `2dsphere`) is indexed by the cells of its locations
//! (`geo_index`), and a document without one gets no entry. A sparse index gives no entry to a document that has none of its fields; a partial index
//! none to a document its filter does not match. An index with a collation other than
//! `simple` holds each string's collation key ([`spillway_doc::collation::Collation::key_value`]).
//!
//! A text index (`settings.text`) has one entry per term of the document
//! ([`spillway_doc::text::TextIndex::terms`]): the term's key encoding (a string) then the
//! `_id` key; its scores are computed again from the document when a query needs them.
//!
//! Entry layout, in the index's own keyspace (component keys are `spillway_doc::key`
//! encodings, complemented for descending fields; each is self-delimiting):
//! - unique index: key = components, value = the document's `_id` key;
//! - other indexes: key = components ++ `_id` key, value = the `_id` key.
//!
//! This module must never read or write the store: it only computes bytes.

use bson::{Bson, Document};
use spillway_doc::key;
use spillway_doc::sort::Direction;

use crate::catalog::IndexMeta;
use crate::error::{Error, ErrorKind, Result};
use crate::geo_index;

/// One index entry of a document.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct IndexEntry {
    /// The store key of the entry.
    pub(crate) key: Vec<u8>,
}

/// The entries of `document` (whose `_id` encodes to `id_key`) in `index`, sorted and
/// deduplicated, and whether the document makes the index multikey.
pub(crate) fn index_entries(
    collection: &str,
    index: &IndexMeta,
    document: &Document,
    id_key: &[u8],
) -> Result<(Vec<IndexEntry>, bool)> {
    if let Some(partial) = &index.settings.partial
        && !partial
            .filter
            .matches_document(document)
            .map_err(Error::filter)?
    {
        return Ok((Vec::new(), false));
    }
    if let Some(text) = &index.settings.text {
        let terms = text.terms_document(document).map_err(|error| {
            Error::invalid_index(collection, format!("index '{}': {error}", index.name))
                .with_code(17262)
        })?;
        let mut entries: Vec<IndexEntry> = terms
            .into_keys()
            .map(|term| {
                let mut key = Vec::new();
                key::encode(&Bson::String(term), &mut key);
                key.extend_from_slice(id_key);
                IndexEntry { key }
            })
            .collect();
        entries.sort();
        return Ok((entries, true));
    }
    let mut per_field: Vec<Vec<Vec<u8>>> = Vec::with_capacity(index.fields.len());
    let mut array_fields = 0;
    let mut any_present = false;
    for (position, (path, direction)) in index.fields.iter().enumerate() {
        let mut values = Vec::new();
        let mut through_array = false;
        if let Some(geo) = index
            .settings
            .geo
            .as_ref()
            .filter(|geo| geo.position == position)
        {
            // A document without a location gets no entry, whatever its other fields hold.
            values = geo_index::keys(collection, index, geo, path, document)?;
            if values.is_empty() {
                return Ok((Vec::new(), false));
            }
            through_array = values.len() > 1;
            any_present = true;
        } else {
            collect_document(document, path.parts(), &mut values, &mut through_array);
        }
        if values.is_empty() {
            values.push(Bson::Null);
        } else {
            any_present = true;
        }
        let collation = index.settings.collation();
        if !collation.is_simple() {
            // A collated index holds collation keys: its order is the collation's, and its
            // unique constraint compares strings by it.
            values = values
                .iter()
                .map(|value| collation.key_value(value))
                .collect();
        }
        if index.hashed == Some(position) {
            if through_array {
                return Err(Error::invalid_index(
                    collection,
                    format!(
                        "index '{}': hashed indexes do not support array values (field '{path}')",
                        index.name
                    ),
                )
                .with_code(16766));
            }
            values = values.iter().map(hashed_value).collect();
        }
        if through_array {
            array_fields += 1;
        }
        let mut keys: Vec<Vec<u8>> = values
            .iter()
            .map(|value| {
                let mut out = Vec::new();
                match direction {
                    Direction::Ascending => key::encode(value, &mut out),
                    Direction::Descending => key::encode_descending(value, &mut out),
                }
                out
            })
            .collect();
        keys.sort();
        keys.dedup();
        per_field.push(keys);
    }
    if index.settings.sparse && !any_present {
        return Ok((Vec::new(), false));
    }
    if array_fields > 1 {
        return Err(Error::new(ErrorKind::ParallelArrays {
            collection: collection.to_string(),
            index: index.name.clone(),
        }));
    }
    let mut combinations: Vec<Vec<u8>> = vec![Vec::new()];
    for keys in &per_field {
        let mut next = Vec::with_capacity(combinations.len() * keys.len());
        for prefix in &combinations {
            for component in keys {
                let mut combined = prefix.clone();
                combined.extend_from_slice(component);
                next.push(combined);
            }
        }
        combinations = next;
    }
    let mut entries: Vec<IndexEntry> = combinations
        .into_iter()
        .map(|mut key| {
            if !index.unique {
                key.extend_from_slice(id_key);
            }
            IndexEntry { key }
        })
        .collect();
    entries.sort();
    entries.dedup();
    Ok((entries, array_fields > 0))
}

/// What a hashed index stores for `value`: a 64-bit FNV-1a hash of its key encoding, as an
/// int64. Equal values (`1` and `1.0`) share a key encoding, so they share a hash. The
/// algorithm is part of the file format: changing it would break every hashed index.
pub(crate) fn hashed_value(value: &Bson) -> Bson {
    const OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
    const PRIME: u64 = 0x0000_0100_0000_01b3;
    let mut encoded = Vec::new();
    key::encode(value, &mut encoded);
    let hash = encoded.iter().fold(OFFSET, |hash, byte| {
        (hash ^ u64::from(*byte)).wrapping_mul(PRIME)
    });
    Bson::Int64(i64::from_ne_bytes(hash.to_ne_bytes()))
}

/// The values of the index fields of `document` that make up its entry `entry_key`, as a
/// document, for a duplicate key error: `{ tags: "red" }`, not the whole `tags` array, so that
/// the message names the one duplicated value however long the array is.
pub(crate) fn key_values(index: &IndexMeta, document: &Document, entry_key: &[u8]) -> Bson {
    let mut shown = Document::new();
    let mut rest = entry_key;
    for (path, direction) in &index.fields {
        let mut values = Vec::new();
        let mut through_array = false;
        collect_document(document, path.parts(), &mut values, &mut through_array);
        if values.is_empty() {
            values.push(Bson::Null);
        }
        // Components are self-delimiting, so the one whose encoding starts what is left of
        // the entry is this field's value in it.
        let mut encoded = Vec::new();
        let collation = index.settings.collation();
        let position = values.iter().position(|value| {
            encoded.clear();
            let value = collation.key_value(value);
            match direction {
                Direction::Ascending => key::encode(&value, &mut encoded),
                Direction::Descending => key::encode_descending(&value, &mut encoded),
            }
            rest.starts_with(&encoded)
        });
        let value = match position {
            Some(position) => {
                rest = &rest[encoded.len()..];
                values.swap_remove(position)
            }
            // Not an entry of this document (never expected): show every value.
            None if values.len() == 1 => values.remove(0),
            None => Bson::Array(values),
        };
        shown.insert(path.as_str(), value);
    }
    Bson::Document(shown)
}

/// What `find`'s `returnKey` returns for `document` read through an index with this key
/// pattern: each key field with the value the index holds for it (`null` when the document
/// has none, the hash of a hashed field). Where an array gives the field several keys, the
/// lowest one is shown: the find shows the entry its scan reached the document by
/// ([`key_values`]) where it can, and this where it cannot (a hashed index).
pub(crate) fn return_key(key_pattern: &Document, document: &Document) -> Document {
    let mut shown = Document::new();
    for (field, kind) in key_pattern {
        let mut values = Vec::new();
        let mut through_array = false;
        let parts: Vec<String> = field.split('.').map(str::to_owned).collect();
        collect_document(document, &parts, &mut values, &mut through_array);
        let value = values
            .into_iter()
            .min_by(spillway_doc::compare::compare)
            .unwrap_or(Bson::Null);
        let value = if kind.as_str() == Some(crate::catalog::HASHED) {
            hashed_value(&value)
        } else {
            value
        };
        shown.insert(field.clone(), value);
    }
    shown
}

/// [`collect`] starting at a document, without copying it into a `Bson`.
fn collect_document(
    document: &Document,
    parts: &[String],
    found: &mut Vec<Bson>,
    through_array: &mut bool,
) {
    if let Some((first, rest)) = parts.split_first()
        && let Some(child) = document.get(first)
    {
        collect(child, rest, found, through_array);
    }
}

/// Collects the values `parts` reaches below `value`, expanding arrays MongoDB's way.
fn collect(value: &Bson, parts: &[String], found: &mut Vec<Bson>, through_array: &mut bool) {
    let Some((first, rest)) = parts.split_first() else {
        match value {
            Bson::Array(items) => {
                *through_array = true;
                if items.is_empty() {
                    found.push(Bson::Undefined);
                } else {
                    found.extend(items.iter().cloned());
                }
            }
            other => found.push(other.clone()),
        }
        return;
    };
    match value {
        Bson::Document(document) => {
            if let Some(child) = document.get(first) {
                collect(child, rest, found, through_array);
            }
        }
        Bson::Array(items) => {
            *through_array = true;
            for item in items {
                if matches!(item, Bson::Document(_)) {
                    collect(item, parts, found, through_array);
                }
            }
        }
        _ => {}
    }
}
