//! Parsing an operator update (`{ $set: {...}, $push: {...} }`) and its `arrayFilters` into a
//! checked list of field updates, in the order they are applied.
//!
//! Everything that can be checked without a document is checked here, so that applying an
//! update fails only because of what one document holds: unknown operators, operand types,
//! `$push` modifiers, paths (`$`-prefixed components, positional operators in the wrong
//! place), conflicts between paths (`a` and `a.b`, or one path under two operators), and the
//! pairing of `$[<identifier>]` with array filters (each identifier has exactly one filter
//! and each filter is used). This module must never touch a document.

use std::cmp::Ordering;
use std::collections::HashMap;

use bson::{Bson, Document};

use super::array::{self, PullMatcher, PushSpec};
use super::target::{Part, UpdatePath};
use super::{check_storable, describe_value};
use crate::error::{DocError, Result};
use crate::filter::Filter;
use crate::path::{FieldPath, array_index};

/// Shorthand for an [`DocError::InvalidUpdate`].
pub(super) fn invalid(message: impl Into<String>) -> DocError {
    DocError::update(message)
}

/// The kind of date `$currentDate` stores.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum DateKind {
    /// A BSON date (`true` or `{ $type: "date" }`).
    Date,
    /// A BSON timestamp (`{ $type: "timestamp" }`).
    Timestamp,
}

/// What one operator does to one field.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Action {
    Set(Bson),
    SetOnInsert(Bson),
    Unset,
    Inc(Bson),
    Mul(Bson),
    Min(Bson),
    Max(Bson),
    /// Moves the field to `to`; the field update's path is the source.
    Rename {
        to: UpdatePath,
    },
    CurrentDate(DateKind),
    Push(PushSpec),
    AddToSet(Vec<Bson>),
    /// `$pop`: `true` removes the first element (`-1`), `false` the last (`1`).
    Pop {
        first: bool,
    },
    Pull(PullMatcher),
    PullAll(Vec<Bson>),
}

impl Action {
    /// The operator as written in an update document.
    pub(super) fn operator(&self) -> &'static str {
        match self {
            Action::Set(_) => "$set",
            Action::SetOnInsert(_) => "$setOnInsert",
            Action::Unset => "$unset",
            Action::Inc(_) => "$inc",
            Action::Mul(_) => "$mul",
            Action::Min(_) => "$min",
            Action::Max(_) => "$max",
            Action::Rename { .. } => "$rename",
            Action::CurrentDate(_) => "$currentDate",
            Action::Push(_) => "$push",
            Action::AddToSet(_) => "$addToSet",
            Action::Pop { .. } => "$pop",
            Action::Pull(_) => "$pull",
            Action::PullAll(_) => "$pullAll",
        }
    }
}

/// One operator applied to one path.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct FieldUpdate {
    /// The path the operator applies to (the source, for `$rename`).
    pub(super) path: UpdatePath,
    /// What it does there.
    pub(super) action: Action,
}

impl FieldUpdate {
    /// The path whose position decides the order of application (the destination, for
    /// `$rename`: that is where the new field appears).
    fn order_path(&self) -> &UpdatePath {
        match &self.action {
            Action::Rename { to } => to,
            _ => &self.path,
        }
    }
}

/// A parsed operator update.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct OperatorUpdate {
    /// The field updates, in the order they are applied (MongoDB 5.0+: by path, field names
    /// lexicographically and array indexes numerically).
    pub(super) fields: Vec<FieldUpdate>,
    /// The array filters by identifier.
    pub(super) array_filters: HashMap<String, Filter>,
    /// Whether any path has a positional component (then concrete paths are checked for
    /// conflicts while applying).
    pub(super) has_positional: bool,
}

/// The operators an update document may use.
const OPERATORS: [&str; 14] = [
    "$set",
    "$unset",
    "$inc",
    "$mul",
    "$min",
    "$max",
    "$rename",
    "$setOnInsert",
    "$currentDate",
    "$push",
    "$addToSet",
    "$pop",
    "$pull",
    "$pullAll",
];

/// Parses an operator update document (every top-level key is an operator).
pub(super) fn parse_operators(
    update: &Document,
    array_filters: &[Document],
) -> Result<OperatorUpdate> {
    let filters = parse_array_filters(array_filters)?;
    let mut fields = Vec::new();
    for (operator, operand) in update {
        if !OPERATORS.contains(&operator.as_str()) {
            return Err(invalid(format!(
                "unknown update operator '{operator}' (expected one of {})",
                OPERATORS.join(", ")
            )));
        }
        let Bson::Document(operand) = operand else {
            return Err(invalid(format!(
                "{operator}: the operand must be a document of fields, not {}",
                describe_value(operand)
            )));
        };
        for (field, value) in operand {
            let path = parse_path(operator, field, &filters)?;
            let action = parse_action(operator, field, &path, value, &filters)?;
            fields.push(FieldUpdate { path, action });
        }
    }
    check_conflicts(&fields)?;
    let used: Vec<&str> = fields
        .iter()
        .flat_map(|field| field.path.parts.iter())
        .filter_map(|part| match part {
            Part::Filtered(identifier) => Some(identifier.as_str()),
            _ => None,
        })
        .collect();
    let mut identifiers: Vec<&String> = filters.keys().collect();
    identifiers.sort();
    if let Some(unused) = identifiers
        .into_iter()
        .find(|identifier| !used.contains(&identifier.as_str()))
    {
        return Err(invalid(format!(
            "arrayFilters: the array filter for identifier '{unused}' is not used by any path of the update"
        )));
    }
    let has_positional = fields.iter().any(|field| !field.path.is_plain());
    fields.sort_by(|a, b| {
        compare_paths(
            &a.order_path().written_parts(),
            &b.order_path().written_parts(),
        )
    });
    Ok(OperatorUpdate {
        fields,
        array_filters: filters,
        has_positional,
    })
}

fn parse_action(
    operator: &str,
    field: &str,
    path: &UpdatePath,
    value: &Bson,
    filters: &HashMap<String, Filter>,
) -> Result<Action> {
    let context = |message: String| invalid(format!("{operator}: field '{field}': {message}"));
    let action = match operator {
        "$set" => {
            check_storable(operator, field, value)?;
            Action::Set(value.clone())
        }
        "$setOnInsert" => {
            check_storable(operator, field, value)?;
            Action::SetOnInsert(value.clone())
        }
        "$unset" => Action::Unset,
        "$inc" | "$mul" => {
            if !super::arith::is_number(value) {
                let verb = if operator == "$inc" {
                    "increment"
                } else {
                    "multiplier"
                };
                return Err(context(format!(
                    "the {verb} must be a number, not {} ({value})",
                    describe_value(value)
                )));
            }
            if operator == "$inc" {
                Action::Inc(value.clone())
            } else {
                Action::Mul(value.clone())
            }
        }
        "$min" | "$max" => {
            check_storable(operator, field, value)?;
            if operator == "$min" {
                Action::Min(value.clone())
            } else {
                Action::Max(value.clone())
            }
        }
        "$rename" => {
            let Bson::String(to) = value else {
                return Err(context(format!(
                    "the new name must be a string, not {} ({value})",
                    describe_value(value)
                )));
            };
            let to_path = parse_path(operator, to, filters)?;
            if !path.is_plain() || !to_path.is_plain() {
                return Err(context(format!(
                    "positional operators cannot be used with $rename (renaming to '{to}')"
                )));
            }
            if to == field {
                return Err(context(
                    "the source and the destination must differ".to_string(),
                ));
            }
            let (from_parts, to_parts) = (path.written_parts(), to_path.written_parts());
            if from_parts.starts_with(&to_parts) || to_parts.starts_with(&from_parts) {
                return Err(context(format!(
                    "the source and the destination '{to}' must not be on the same path"
                )));
            }
            Action::Rename { to: to_path }
        }
        "$currentDate" => Action::CurrentDate(parse_current_date(value).map_err(context)?),
        "$push" => Action::Push(array::parse_push(field, value)?),
        "$addToSet" => Action::AddToSet(array::parse_add_to_set(field, value)?),
        "$pop" => match crate::sort::Direction::from_bson(value) {
            Some(crate::sort::Direction::Ascending) => Action::Pop { first: false },
            Some(crate::sort::Direction::Descending) => Action::Pop { first: true },
            None => {
                return Err(context(format!(
                    "expected 1 (remove the last element) or -1 (remove the first), not {value}"
                )));
            }
        },
        "$pull" => Action::Pull(array::parse_pull(field, value)?),
        "$pullAll" => Action::PullAll(array::parse_pull_all(field, value)?),
        _ => unreachable!("the operator was checked against OPERATORS"),
    };
    Ok(action)
}

fn parse_current_date(value: &Bson) -> Result<DateKind, String> {
    match value {
        // MongoDB stores a date for `true` and, surprisingly, for `false` too.
        Bson::Boolean(_) => Ok(DateKind::Date),
        Bson::Document(spec) => {
            if spec.len() != 1 || !spec.contains_key("$type") {
                return Err(format!(
                    "the only valid option is {{ $type: \"date\" }} or {{ $type: \"timestamp\" }}, not {value}"
                ));
            }
            match spec.get("$type") {
                Some(Bson::String(kind)) if kind == "date" => Ok(DateKind::Date),
                Some(Bson::String(kind)) if kind == "timestamp" => Ok(DateKind::Timestamp),
                Some(other) => Err(format!(
                    "$type must be \"date\" or \"timestamp\", not {other}"
                )),
                None => unreachable!("checked above"),
            }
        }
        other => Err(format!(
            "expected true or {{ $type: \"date\" | \"timestamp\" }}, not {} ({other})",
            describe_value(other)
        )),
    }
}

/// Parses and checks an update path; `$[<identifier>]` must have an array filter.
fn parse_path(
    operator: &str,
    dotted: &str,
    filters: &HashMap<String, Filter>,
) -> Result<UpdatePath> {
    let context = |message: String| invalid(format!("{operator}: field '{dotted}': {message}"));
    let checked =
        FieldPath::parse(dotted).map_err(|error| invalid(format!("{operator}: {error}")))?;
    let mut parts = Vec::with_capacity(checked.len());
    let mut n_positional = 0;
    for (depth, part) in checked.parts().iter().enumerate() {
        let parsed = if part == "$" {
            n_positional += 1;
            Part::Positional
        } else if part == "$[]" {
            Part::AllElements
        } else if let Some(identifier) = part
            .strip_prefix("$[")
            .and_then(|rest| rest.strip_suffix(']'))
        {
            if !filters.contains_key(identifier) {
                return Err(context(format!(
                    "no array filter is given for the identifier '{identifier}'"
                )));
            }
            Part::Filtered(identifier.to_string())
        } else if part.starts_with('$') {
            return Err(context(format!(
                "the component '{part}' starts with '$', which field names in updates cannot"
            )));
        } else {
            Part::Field(part.clone())
        };
        if depth == 0 && !matches!(parsed, Part::Field(_)) {
            return Err(context(format!(
                "a positional operator ('{part}') cannot be the first component of a path"
            )));
        }
        parts.push(parsed);
    }
    if n_positional > 1 {
        return Err(context(
            "the positional operator '$' can appear only once in a path".to_string(),
        ));
    }
    Ok(UpdatePath {
        dotted: dotted.to_string(),
        parts,
    })
}

/// Orders path components as MongoDB 5.0+ applies them: field names by bytes, but two array
/// indexes by number (`a.2` before `a.10`).
fn compare_paths(a: &[&str], b: &[&str]) -> Ordering {
    for (x, y) in a.iter().zip(b) {
        let order = match (array_index(x), array_index(y)) {
            (Some(x_index), Some(y_index)) => x_index.cmp(&y_index),
            _ => x.cmp(y),
        };
        if order != Ordering::Equal {
            return order;
        }
    }
    a.len().cmp(&b.len())
}

/// Fails when two paths of the update touch the same data: equal, or one inside the other.
/// `$rename` claims both its source and its destination. Distinct `$[i]`/`$[j]` and `$` are
/// told apart only per document, when applying.
fn check_conflicts(fields: &[FieldUpdate]) -> Result<()> {
    let mut claims: Vec<(Vec<&str>, &str, &str)> = Vec::with_capacity(fields.len());
    for field in fields {
        let operator = field.action.operator();
        claims.push((
            field.path.written_parts(),
            operator,
            field.path.dotted.as_str(),
        ));
        if let Action::Rename { to } = &field.action {
            claims.push((to.written_parts(), operator, to.dotted.as_str()));
        }
    }
    // `a.$[]` (or `a.$[i]`) and `a.0` (or `a.b`, `a.$`) go through the same array in two
    // incompatible ways: MongoDB refuses them whatever the document.
    let is_array_update = |part: &str| part.starts_with("$[") && part.ends_with(']');
    for (array_parts, array_operator, array_path) in &claims {
        for (depth, _) in array_parts
            .iter()
            .enumerate()
            .filter(|(_, part)| is_array_update(part))
        {
            let prefix = &array_parts[..depth];
            let clash = claims.iter().find(|(other_parts, _, _)| {
                other_parts.len() > depth
                    && other_parts.starts_with(prefix)
                    && !is_array_update(other_parts[depth])
            });
            if let Some((_, other_operator, other_path)) = clash {
                return Err(invalid(format!(
                    "{other_operator}: field '{other_path}' conflicts with {array_operator} on '{array_path}' (both go through the array '{}')",
                    prefix.join(".")
                )));
            }
        }
    }
    claims.sort_by(|a, b| a.0.cmp(&b.0));
    for pair in claims.windows(2) {
        let (
            (first_parts, first_operator, first_path),
            (second_parts, second_operator, second_path),
        ) = (&pair[0], &pair[1]);
        if second_parts.starts_with(first_parts) {
            return Err(invalid(format!(
                "{second_operator}: field '{second_path}' conflicts with {first_operator} on '{first_path}' (one update cannot change a path twice, or a path and a field inside it)"
            )));
        }
    }
    Ok(())
}

/// Parses `arrayFilters`: one filter per identifier, each on a single identifier.
fn parse_array_filters(array_filters: &[Document]) -> Result<HashMap<String, Filter>> {
    let mut filters = HashMap::with_capacity(array_filters.len());
    for array_filter in array_filters {
        let mut identifiers = Vec::new();
        collect_identifiers(array_filter, &mut identifiers);
        identifiers.dedup();
        identifiers.sort();
        identifiers.dedup();
        let identifier = match identifiers.as_slice() {
            [] => {
                return Err(invalid(format!(
                    "arrayFilters: the filter {array_filter} names no identifier (its top-level fields must be '<identifier>' or '<identifier>.<path>')"
                )));
            }
            [identifier] => identifier.clone(),
            [first, second, ..] => {
                return Err(invalid(format!(
                    "arrayFilters: the filter {array_filter} uses several identifiers ('{first}' and '{second}'); each array filter must use exactly one"
                )));
            }
        };
        let well_formed = identifier.starts_with(|c: char| c.is_ascii_lowercase())
            && identifier.chars().all(|c| c.is_ascii_alphanumeric());
        if !well_formed {
            return Err(invalid(format!(
                "arrayFilters: the identifier '{identifier}' must be alphanumeric and begin with a lowercase letter"
            )));
        }
        if filters.contains_key(&identifier) {
            return Err(invalid(format!(
                "arrayFilters: two array filters use the identifier '{identifier}'; give each identifier one filter"
            )));
        }
        let filter = Filter::parse(array_filter).map_err(|error| {
            invalid(format!("arrayFilters: identifier '{identifier}': {error}"))
        })?;
        filters.insert(identifier, filter);
    }
    Ok(filters)
}

fn collect_identifiers(filter: &Document, identifiers: &mut Vec<String>) {
    for (key, value) in filter {
        if matches!(key.as_str(), "$and" | "$or" | "$nor") {
            if let Bson::Array(branches) = value {
                for branch in branches {
                    if let Bson::Document(branch) = branch {
                        collect_identifiers(branch, identifiers);
                    }
                }
            }
        } else if !key.starts_with('$') {
            let identifier = key.split('.').next().unwrap_or(key);
            identifiers.push(identifier.to_string());
        }
    }
}
