//! The array operators' operands: `$push` with its modifiers, `$addToSet`, `$pull`'s value or
//! condition, `$pullAll`; how each is parsed and how it transforms an array.
//!
//! `$push` applies its modifiers in MongoDB's fixed order whatever order they are written in:
//! insert the `$each` values at `$position`, then `$sort`, then `$slice`. Its `$sort` by
//! fields reads each element's field at an exact path (numeric components index arrays, a
//! missing field or a non-document element sorts as `null`) and compares whole values, as
//! MongoDB's `$push` does; it is not `find`'s fan-out sort. This module must never store an
//! operand it did not understand: a document of modifiers is never pushed as an element.
//!
//! Every comparison here takes the update's collation and goes through
//! [`compare_collated`]; `$pull`'s condition and query are filters, collated by
//! [`PullMatcher::collate`].

use std::cmp::Ordering;

use bson::{Bson, doc};

use super::check_storable;
use super::target::child;
use crate::collation::Collation;
use crate::compare::compare_collated;
use crate::error::{DocError, Result};
use crate::filter::Filter;
use crate::path::FieldPath;
use crate::sort::Direction;

/// A parsed `$push` operand.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct PushSpec {
    /// The values to insert (one, or `$each`'s).
    pub(super) values: Vec<Bson>,
    /// `$position`: where to insert; negative counts from the end.
    pub(super) position: Option<i64>,
    /// `$sort`: how to order the array after inserting.
    pub(super) sort: Option<PushSort>,
    /// `$slice`: how many elements to keep (from the front if positive, the back if negative).
    pub(super) slice: Option<i64>,
}

/// `$push`'s `$sort` modifier.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum PushSort {
    /// `$sort: 1` or `-1`: whole elements.
    Whole(Direction),
    /// `$sort: { field: 1, ... }`: fields of element documents.
    Fields(Vec<(FieldPath, Direction)>),
}

const PUSH_MODIFIERS: [&str; 4] = ["$each", "$position", "$slice", "$sort"];

/// Parses `$push: { <field>: <operand> }`.
pub(super) fn parse_push(field: &str, operand: &Bson) -> Result<PushSpec> {
    let context = |message: String| DocError::update(format!("$push: field '{field}': {message}"));
    let Bson::Document(modifiers) = operand else {
        check_storable("$push", field, operand)?;
        return Ok(PushSpec {
            values: vec![operand.clone()],
            position: None,
            sort: None,
            slice: None,
        });
    };
    if !modifiers.contains_key("$each") {
        if let Some(modifier) = modifiers
            .keys()
            .find(|key| PUSH_MODIFIERS.contains(&key.as_str()))
        {
            return Err(context(format!(
                "the modifier {modifier} can only be used together with $each"
            )));
        }
        check_storable("$push", field, operand)?;
        return Ok(PushSpec {
            values: vec![operand.clone()],
            position: None,
            sort: None,
            slice: None,
        });
    }
    let mut spec = PushSpec {
        values: Vec::new(),
        position: None,
        sort: None,
        slice: None,
    };
    for (name, value) in modifiers {
        match name.as_str() {
            "$each" => {
                let Bson::Array(values) = value else {
                    return Err(context(format!(
                        "$each must be an array, not {}",
                        super::describe_value(value)
                    )));
                };
                for item in values {
                    check_storable("$push", field, item)?;
                }
                spec.values.clone_from(values);
            }
            "$position" => {
                spec.position = Some(integer(value).ok_or_else(|| {
                    context(format!("$position must be an integer, not {value}"))
                })?);
            }
            "$slice" => {
                spec.slice =
                    Some(integer(value).ok_or_else(|| {
                        context(format!("$slice must be an integer, not {value}"))
                    })?);
            }
            "$sort" => spec.sort = Some(parse_push_sort(field, value)?),
            other => {
                return Err(context(format!(
                    "unknown modifier '{other}' (expected $each, $position, $slice or $sort)"
                )));
            }
        }
    }
    Ok(spec)
}

fn parse_push_sort(field: &str, value: &Bson) -> Result<PushSort> {
    let context = |message: String| DocError::update(format!("$push: field '{field}': {message}"));
    if let Some(direction) = Direction::from_bson(value) {
        return Ok(PushSort::Whole(direction));
    }
    let Bson::Document(fields) = value else {
        return Err(context(format!(
            "$sort must be 1, -1 or a document of fields with 1 or -1, not {value}"
        )));
    };
    if fields.is_empty() {
        return Err(context(
            "$sort by fields needs at least one field".to_string(),
        ));
    }
    let mut keys = Vec::with_capacity(fields.len());
    for (sort_field, direction) in fields {
        let path =
            FieldPath::parse(sort_field).map_err(|error| context(format!("$sort: {error}")))?;
        if path.parts().iter().any(|part| part.starts_with('$')) {
            return Err(context(format!(
                "$sort: the field '{sort_field}' cannot start with '$'"
            )));
        }
        let direction = Direction::from_bson(direction).ok_or_else(|| {
            context(format!(
                "$sort: the direction of '{sort_field}' must be 1 or -1, not {direction}"
            ))
        })?;
        keys.push((path, direction));
    }
    Ok(PushSort::Fields(keys))
}

/// An integer operand: int32, int64, or a double or decimal with an integral value.
fn integer(value: &Bson) -> Option<i64> {
    match value {
        Bson::Int32(number) => Some(i64::from(*number)),
        Bson::Int64(number) => Some(*number),
        Bson::Double(number)
            if number.fract() == 0.0 && number.abs() < 9.223_372_036_854_775e18 =>
        {
            Some(*number as i64)
        }
        Bson::Decimal128(number) => {
            let text = number.to_string();
            text.parse::<i64>().ok()
        }
        _ => None,
    }
}

impl PushSpec {
    /// Inserts, sorts (strings under `collation`) and slices `items`, in that order.
    pub(super) fn apply(&self, items: &mut Vec<Bson>, collation: &Collation) {
        let length = items.len();
        let at = match self.position {
            None => length,
            Some(position) if position >= 0 => (position as u64).min(length as u64) as usize,
            Some(position) => {
                length.saturating_sub(position.unsigned_abs().min(length as u64) as usize)
            }
        };
        items.splice(at..at, self.values.iter().cloned());
        match &self.sort {
            None => {}
            Some(PushSort::Whole(direction)) => {
                items.sort_by(|a, b| direction.apply(compare_collated(a, b, collation)));
            }
            Some(PushSort::Fields(keys)) => {
                items.sort_by(|a, b| compare_by_fields(keys, a, b, collation));
            }
        }
        match self.slice {
            None => {}
            Some(slice) if slice >= 0 => {
                items.truncate(slice.unsigned_abs().min(usize::MAX as u64) as usize);
            }
            Some(slice) => {
                let keep = slice.unsigned_abs().min(items.len() as u64) as usize;
                items.drain(..items.len() - keep);
            }
        }
    }
}

static NULL: Bson = Bson::Null;

fn compare_by_fields(
    keys: &[(FieldPath, Direction)],
    a: &Bson,
    b: &Bson,
    collation: &Collation,
) -> Ordering {
    for (path, direction) in keys {
        let order = direction.apply(compare_collated(
            field_of(a, path),
            field_of(b, path),
            collation,
        ));
        if order != Ordering::Equal {
            return order;
        }
    }
    Ordering::Equal
}

/// The value of an element's field for `$push`'s `$sort`: exact path, `null` when missing.
fn field_of<'a>(element: &'a Bson, path: &FieldPath) -> &'a Bson {
    let Bson::Document(_) = element else {
        return &NULL;
    };
    let mut current = element;
    for part in path.parts() {
        match child(current, part) {
            Some(next) => current = next,
            None => return &NULL,
        }
    }
    current
}

/// Parses `$addToSet: { <field>: <value or { $each: [...] }> }` into the values to add.
pub(super) fn parse_add_to_set(field: &str, operand: &Bson) -> Result<Vec<Bson>> {
    let values = match operand {
        Bson::Document(modifiers) if modifiers.contains_key("$each") => {
            if modifiers.len() > 1 {
                let extra: Vec<&str> = modifiers
                    .keys()
                    .filter(|key| *key != "$each")
                    .map(String::as_str)
                    .collect();
                return Err(DocError::update(format!(
                    "$addToSet: field '{field}': $each cannot be combined with {} ($addToSet takes no other modifier)",
                    extra.join(", ")
                )));
            }
            match &modifiers["$each"] {
                Bson::Array(values) => values.clone(),
                other => {
                    return Err(DocError::update(format!(
                        "$addToSet: field '{field}': $each must be an array, not {}",
                        super::describe_value(other)
                    )));
                }
            }
        }
        other => vec![other.clone()],
    };
    for value in &values {
        check_storable("$addToSet", field, value)?;
    }
    Ok(values)
}

/// Adds each value that is not already in `items` (MongoDB equality: `1 == 1.0`, field
/// order matters in documents, strings equal under `collation` are one value). Returns
/// whether anything was added.
pub(super) fn add_to_set(items: &mut Vec<Bson>, values: &[Bson], collation: &Collation) -> bool {
    let mut added = false;
    for value in values {
        if !items
            .iter()
            .any(|item| compare_collated(item, value, collation).is_eq())
        {
            items.push(value.clone());
            added = true;
        }
    }
    added
}

/// What `$pull` removes.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum PullMatcher {
    /// Elements equal to a value (whole-value equality, arrays included).
    Equal(Bson),
    /// Elements that satisfy an operator condition (`{ $gte: 6 }`) or a regular expression,
    /// evaluated on each element as the value of the field [`PULL_FIELD`].
    Condition(Filter),
    /// Element documents that match a query (`{ score: 8, item: "B" }`); elements that are
    /// not documents never match.
    Query(Filter),
}

/// The field name each element is wrapped under to evaluate a `$pull` condition.
const PULL_FIELD: &str = "element";

/// Logical and other operators that do not apply to a path: a `$pull` operand that starts
/// with one of them is a query on element documents, as in MongoDB.
const NON_PATH_OPERATORS: [&str; 9] = [
    "$and",
    "$or",
    "$nor",
    "$where",
    "$expr",
    "$text",
    "$comment",
    "$jsonSchema",
    "$alwaysTrue",
];

/// Parses `$pull: { <field>: <value or condition> }`.
pub(super) fn parse_pull(field: &str, operand: &Bson) -> Result<PullMatcher> {
    let context = |error: crate::DocError| match error {
        // The wrapper field is ours, not the user's: do not name it.
        crate::DocError::InvalidFilter { path, message } if path == PULL_FIELD => DocError::update(
            format!("$pull: field '{field}': invalid condition: {message}"),
        ),
        other => DocError::update(format!("$pull: field '{field}': {other}")),
    };
    match operand {
        Bson::Document(condition) => {
            let first = condition.keys().next().map(String::as_str);
            match first {
                Some(first) if first.starts_with('$') && !NON_PATH_OPERATORS.contains(&first) => {
                    let wrapped = doc! { PULL_FIELD: operand.clone() };
                    Filter::parse(&wrapped)
                        .map(PullMatcher::Condition)
                        .map_err(context)
                }
                _ => Filter::parse(condition)
                    .map(PullMatcher::Query)
                    .map_err(context),
            }
        }
        Bson::RegularExpression(_) => {
            let wrapped = doc! { PULL_FIELD: operand.clone() };
            Filter::parse(&wrapped)
                .map(PullMatcher::Condition)
                .map_err(context)
        }
        other => Ok(PullMatcher::Equal(other.clone())),
    }
}

impl PullMatcher {
    /// Makes the condition or query match strings under `collation` (an equality takes it
    /// in [`PullMatcher::matches`]).
    pub(super) fn collate(&mut self, collation: &Collation) {
        match self {
            PullMatcher::Equal(_) => {}
            PullMatcher::Condition(filter) | PullMatcher::Query(filter) => {
                *filter = std::mem::take(filter).collated(collation);
            }
        }
    }

    /// Whether `$pull` removes `item`; an equality compares strings under `collation`, a
    /// condition or query under the collation [`PullMatcher::collate`] gave it.
    pub(super) fn matches(&self, item: &Bson, collation: &Collation) -> Result<bool> {
        match self {
            PullMatcher::Equal(value) => Ok(compare_collated(item, value, collation).is_eq()),
            PullMatcher::Condition(filter) => {
                filter.matches_document(&doc! { PULL_FIELD: item.clone() })
            }
            PullMatcher::Query(filter) => match item {
                Bson::Document(element) => filter.matches_document(element),
                _ => Ok(false),
            },
        }
    }
}

/// Parses `$pullAll: { <field>: [values] }`.
pub(super) fn parse_pull_all(field: &str, operand: &Bson) -> Result<Vec<Bson>> {
    match operand {
        Bson::Array(values) => Ok(values.clone()),
        other => Err(DocError::update(format!(
            "$pullAll: field '{field}': the operand must be an array of values, not {}",
            super::describe_value(other)
        ))),
    }
}

/// Removes the elements for which `remove` says true; returns whether any was removed. On
/// an error nothing is removed.
pub(super) fn remove_where(
    items: &mut Vec<Bson>,
    mut remove: impl FnMut(&Bson) -> Result<bool>,
) -> Result<bool> {
    let mut verdicts = Vec::with_capacity(items.len());
    for item in items.iter() {
        verdicts.push(remove(item)?);
    }
    let mut verdict = verdicts.into_iter();
    let before = items.len();
    items.retain(|_| !verdict.next().unwrap_or(false));
    Ok(items.len() != before)
}
