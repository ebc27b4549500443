//! The document an upsert starts from: the equality conditions of its query.
//!
//! As in MongoDB, `{ _id: 7, "author.name": "ann", qty: { $eq: 3 }, tags: { $in: ["x"] } }`
//! starts the upserted document as `{ _id: 7, author: { name: "ann" }, qty: 3, tags: "x" }`:
//! plain equalities, `$eq` and single-value `$in`, at the top level and inside `$and`, are
//! copied; ranges, regular expressions, `$or` branches and other operators are not. Two
//! equalities on overlapping paths (`a` and `a.b`) are an error. A replacement upsert takes
//! only the query's `_id`. This module must never apply update operators; the caller applies
//! the update on the returned document.

use bson::{Bson, Document};

use super::parse::invalid;
use super::target;
use crate::error::Result;
use crate::filter::{Filter, Predicate};

/// The equality fields of `filter` as a document, `_id` first (only `_id` when
/// `only_id` is set, for replacement upserts).
pub(super) fn equality_fields(filter: &Filter, only_id: bool) -> Result<Document> {
    let mut equalities: Vec<(&[String], &Bson)> = filter
        .field_predicates()
        .filter(|(path, _)| !only_id || path.as_str() == "_id")
        .filter_map(|(path, predicate)| Some((path.parts(), equality_value(predicate)?)))
        .collect();
    let mut sorted: Vec<&[String]> = equalities.iter().map(|(parts, _)| *parts).collect();
    sorted.sort();
    for pair in sorted.windows(2) {
        if pair[1].starts_with(pair[0]) {
            return Err(invalid(format!(
                "upsert: the query has equality conditions on both '{}' and '{}', so the document to insert cannot be inferred",
                pair[0].join("."),
                pair[1].join(".")
            )));
        }
    }
    let mut base = Document::new();
    if let Some(position) = equalities.iter().position(|(parts, _)| *parts == ["_id"]) {
        let (_, id) = equalities.remove(position);
        base.insert("_id", id.clone());
    }
    for (parts, value) in equalities {
        target::write(&mut base, parts, value.clone()).map_err(|failure| {
            invalid(format!(
                "upsert: the query field '{}' {}",
                failure.field, failure.message
            ))
        })?;
    }
    Ok(base)
}

/// The value a predicate pins its field to, if it is an equality.
fn equality_value(predicate: &Predicate) -> Option<&Bson> {
    match predicate {
        Predicate::Eq(operand) => Some(operand.value()),
        Predicate::In(list) if list.values.len() == 1 && list.regexes.is_empty() => {
            Some(list.values[0].value())
        }
        _ => None,
    }
}
