//! Evaluation of parsed filters on raw documents, with MongoDB's array traversal rules.
//!
//! A field path yields a stream of *candidates* (a value, or "missing"), each with the index
//! of the array element it came from, following MongoDB's element iterator:
//!
//! - documents are entered field by field; a missing field, or a scalar where the path goes
//!   on, yields "missing" (so `{"a.b": null}` matches `{a: 4}`);
//! - an array met before the end of the path is traversed: each element that is a document
//!   is entered with the rest of the path (nested arrays and scalars yield nothing). When the
//!   next component is an index (`a.0.b`), the element at that index is also entered
//!   positionally: a document with the rest after the index, an array with its own
//!   traversal, or the element itself when the index ends the path. A document element is
//!   thus searched both for a field named `0` and as element 0;
//! - an array at the end of the path yields each element (nested arrays whole, not
//!   flattened) and then the array itself, except for `$size` and `$elemMatch`, which see
//!   only the array.
//!
//! A positive predicate holds when one candidate satisfies it; the first array element
//! traversed (the outermost array) gives the match's array index, except on the positional
//! branch, where the index comes from arrays further down, as in MongoDB.
//!
//! Evaluation never decodes a document and never allocates on the common paths.

use std::cmp::Ordering;
use std::ops::ControlFlow;

use bson::{RawArray, RawBsonRef, RawDocument};

use super::predicate::{ElemMatch, InList, Operand, Predicate};
use super::{Clause, Filter};
use crate::collation::Collation;
use crate::compare::{CanonicalType, canonical_type_raw, compare_raw, compare_raw_collated};
use crate::error::Result;
use crate::expr::{Variables, is_truthy};
use crate::geospatial::{NearQuery, Shape};
use crate::path::{FieldPath, array_index};

/// What a path reaches: a value or nothing.
#[derive(Debug, Clone, Copy)]
enum Candidate<'a> {
    Missing,
    Value(RawBsonRef<'a>),
}

/// The outcome of a (sub)filter: `None` for no match, `Some(index)` for a match that went
/// through array element `index` (or through no array element at all).
type Outcome = Option<Option<usize>>;

/// Evaluates a whole filter (the implicit AND of its clauses).
pub(super) fn eval_filter(
    filter: &Filter,
    document: &RawDocument,
    variables: Option<&Variables>,
    collation: &Collation,
) -> Result<Outcome> {
    let mut array_index_found = None;
    for clause in &filter.clauses {
        match eval_clause(clause, document, variables, collation)? {
            None => return Ok(None),
            Some(Some(index)) => array_index_found = Some(index),
            Some(None) => {}
        }
    }
    Ok(Some(array_index_found))
}

fn eval_clause(
    clause: &Clause,
    document: &RawDocument,
    variables: Option<&Variables>,
    collation: &Collation,
) -> Result<Outcome> {
    match clause {
        // `$expr` reads the document as expressions do: decoded, with the caller's variables.
        Clause::Expr(expression) => {
            let decoded = crate::decode::document(document)?;
            // The expression compares under the filter's collation, whoever gave the
            // variables.
            let value = match variables {
                Some(variables) if variables.collation == *collation => {
                    expression.evaluate(&decoded, variables)?
                }
                Some(variables) => {
                    let variables = Variables {
                        collation: collation.clone(),
                        ..variables.clone()
                    };
                    expression.evaluate(&decoded, &variables)?
                }
                None => expression.evaluate(
                    &decoded,
                    &Variables {
                        collation: collation.clone(),
                        ..Variables::default()
                    },
                )?,
            };
            Ok(is_truthy(value.as_ref()).then_some(None))
        }
        Clause::Field { path, predicate } => {
            eval_predicate(predicate, document, path.parts(), collation)
        }
        Clause::Text(search) => Ok(search.matches(document)?.then_some(None)),
        Clause::Where(function) => Ok(function.matches(document)?.then_some(None)),
        Clause::JsonSchema(schema) => Ok(schema.matches(document)?.then_some(None)),
        Clause::And(filters) => {
            let mut array_index_found = None;
            for filter in filters {
                match eval_filter(filter, document, variables, collation)? {
                    None => return Ok(None),
                    Some(Some(index)) => array_index_found = Some(index),
                    Some(None) => {}
                }
            }
            Ok(Some(array_index_found))
        }
        // MongoDB records no positional information through $or and $nor.
        Clause::Or(filters) => {
            for filter in filters {
                if eval_filter(filter, document, variables, collation)?.is_some() {
                    return Ok(Some(None));
                }
            }
            Ok(None)
        }
        Clause::Nor(filters) => {
            for filter in filters {
                if eval_filter(filter, document, variables, collation)?.is_some() {
                    return Ok(None);
                }
            }
            Ok(Some(None))
        }
    }
}

/// Evaluates one predicate on the values `parts` reaches in `document`.
fn eval_predicate(
    predicate: &Predicate,
    document: &RawDocument,
    parts: &[String],
    collation: &Collation,
) -> Result<Outcome> {
    match predicate {
        Predicate::Ne(operand) => {
            let equal = first_candidate(document, parts, true, |candidate| {
                Ok(match candidate {
                    Candidate::Missing => operand.is_null(),
                    Candidate::Value(value) => equal(value, operand.raw(), collation),
                })
            })?;
            Ok(negate(equal))
        }
        Predicate::Nin(list) => {
            let found = first_candidate(document, parts, true, |candidate| {
                Ok(in_list(list, candidate, collation))
            })?;
            Ok(negate(found))
        }
        Predicate::Not(predicates) => Ok(negate(eval_conjunction(
            predicates, document, parts, collation,
        )?)),
        Predicate::All(predicates) => {
            if predicates.is_empty() {
                return Ok(None);
            }
            eval_conjunction(predicates, document, parts, collation)
        }
        Predicate::Exists(false) => {
            // `{$exists: false}` is the negation of `{$exists: true}`: no value anywhere.
            let found = first_candidate(document, parts, true, |candidate| {
                Ok(matches!(candidate, Candidate::Value(_)))
            })?;
            Ok(negate(found))
        }
        Predicate::ElemMatch(elem_match) => {
            // The element that matched gives the index, unless an outer array already did.
            first_candidate_with_index(document, parts, false, |candidate| match candidate {
                Candidate::Value(RawBsonRef::Array(array)) => {
                    Ok(first_matching_element(elem_match, array, collation)?.map(Some))
                }
                _ => Ok(None),
            })
        }
        Predicate::Size(_) => first_candidate(document, parts, false, |candidate| {
            test_candidate(predicate, candidate, collation)
        }),
        _ => first_candidate(document, parts, true, |candidate| {
            test_candidate(predicate, candidate, collation)
        }),
    }
}

fn eval_conjunction(
    predicates: &[Predicate],
    document: &RawDocument,
    parts: &[String],
    collation: &Collation,
) -> Result<Outcome> {
    let mut array_index_found = None;
    for predicate in predicates {
        match eval_predicate(predicate, document, parts, collation)? {
            None => return Ok(None),
            Some(Some(index)) => array_index_found = Some(index),
            Some(None) => {}
        }
    }
    Ok(Some(array_index_found))
}

fn negate(outcome: Outcome) -> Outcome {
    match outcome {
        Some(_) => None,
        None => Some(None),
    }
}

fn test_candidate(
    predicate: &Predicate,
    candidate: Candidate<'_>,
    collation: &Collation,
) -> Result<bool> {
    match candidate {
        Candidate::Missing => Ok(test_missing(predicate)),
        Candidate::Value(value) => test_value(predicate, value, collation),
    }
}

fn in_list(list: &InList, candidate: Candidate<'_>, collation: &Collation) -> bool {
    match candidate {
        Candidate::Missing => list.contains_null(),
        Candidate::Value(value) => value_in_list(list, value, collation),
    }
}

fn value_in_list(list: &InList, value: RawBsonRef<'_>, collation: &Collation) -> bool {
    list.values
        .iter()
        .any(|operand| equal(value, operand.raw(), collation))
        || list.regexes.iter().any(|regex| regex.matches_value(value))
}

/// Whether `predicate` holds for "missing" (an absent field, or a path through a scalar).
pub(super) fn test_missing(predicate: &Predicate) -> bool {
    match predicate {
        Predicate::Eq(operand) => operand.is_null(),
        Predicate::Ne(operand) => !operand.is_null(),
        Predicate::Gt(operand) => compare_missing(operand).is_some_and(Ordering::is_gt),
        Predicate::Gte(operand) => compare_missing(operand).is_some_and(Ordering::is_ge),
        Predicate::Lt(operand) => compare_missing(operand).is_some_and(Ordering::is_lt),
        Predicate::Lte(operand) => compare_missing(operand).is_some_and(Ordering::is_le),
        Predicate::In(list) => list.contains_null(),
        Predicate::Nin(list) => !list.contains_null(),
        Predicate::Exists(should_exist) => !should_exist,
        Predicate::All(predicates) => !predicates.is_empty() && predicates.iter().all(test_missing),
        Predicate::Not(predicates) => !predicates.iter().all(test_missing),
        Predicate::Type(_)
        | Predicate::Size(_)
        | Predicate::ElemMatch(_)
        | Predicate::Regex(_)
        | Predicate::Mod { .. }
        | Predicate::GeoWithin(_)
        | Predicate::GeoIntersects(_)
        | Predicate::Near(_) => false,
    }
}

/// How "missing" compares to a comparison operand: like null against null, MinKey and
/// MaxKey (so `{$gte: null}` and `{$lt: MaxKey}` match a missing field), not at all against
/// anything else.
fn compare_missing(operand: &Operand) -> Option<Ordering> {
    match canonical_type_raw(operand.raw()) {
        CanonicalType::Null => Some(Ordering::Equal),
        CanonicalType::MinKey => Some(Ordering::Greater),
        CanonicalType::MaxKey => Some(Ordering::Less),
        _ => None,
    }
}

/// Whether `predicate` holds for one value, without traversing it if it is an array.
pub(super) fn test_value(
    predicate: &Predicate,
    value: RawBsonRef<'_>,
    collation: &Collation,
) -> Result<bool> {
    let compare = |operand| compare_bracketed(value, operand, collation);
    Ok(match predicate {
        Predicate::Eq(operand) => equal(value, operand.raw(), collation),
        Predicate::Ne(operand) => !equal(value, operand.raw(), collation),
        Predicate::Gt(operand) => compare(operand).is_some_and(Ordering::is_gt),
        Predicate::Gte(operand) => compare(operand).is_some_and(Ordering::is_ge),
        Predicate::Lt(operand) => compare(operand).is_some_and(Ordering::is_lt),
        Predicate::Lte(operand) => compare(operand).is_some_and(Ordering::is_le),
        Predicate::In(list) => value_in_list(list, value, collation),
        Predicate::Nin(list) => !value_in_list(list, value, collation),
        Predicate::Exists(should_exist) => *should_exist,
        Predicate::Type(types) => types.contains(value.element_type()),
        Predicate::Size(size) => match value {
            RawBsonRef::Array(array) => count_elements(array)? == *size,
            _ => false,
        },
        Predicate::All(predicates) => {
            if predicates.is_empty() {
                return Ok(false);
            }
            for inner in predicates {
                if !test_value(inner, value, collation)? {
                    return Ok(false);
                }
            }
            true
        }
        Predicate::ElemMatch(elem_match) => match value {
            RawBsonRef::Array(array) => {
                first_matching_element(elem_match, array, collation)?.is_some()
            }
            _ => false,
        },
        Predicate::Regex(regex) => regex.matches_value(value),
        Predicate::Mod { divisor, remainder } => integer_part(value)
            .is_some_and(|dividend| dividend.wrapping_rem(*divisor) == *remainder),
        Predicate::Not(predicates) => {
            for inner in predicates {
                if !test_value(inner, value, collation)? {
                    return Ok(true);
                }
            }
            false
        }
        Predicate::GeoWithin(region) => {
            Shape::from_raw(value).is_some_and(|shape| region.contains(&shape))
        }
        Predicate::GeoIntersects(region) => {
            Shape::from_raw(value).is_some_and(|shape| region.intersects(&shape))
        }
        Predicate::Near(near) => Shape::from_raw(value).is_some_and(|shape| near.matches(&shape)),
    })
}

/// Compares a value with a comparison operand under type bracketing: `None` when the two are
/// not comparable (different canonical types, except against MinKey and MaxKey, which every
/// value is above and below; NaN, which is only equal to NaN).
fn compare_bracketed(
    value: RawBsonRef<'_>,
    operand: &Operand,
    collation: &Collation,
) -> Option<Ordering> {
    let operand = operand.raw();
    let operand_type = canonical_type_raw(operand);
    let value_type = canonical_type_raw(value);
    if value_type != operand_type {
        return match operand_type {
            CanonicalType::MinKey | CanonicalType::MaxKey => Some(value_type.cmp(&operand_type)),
            _ => None,
        };
    }
    if value_type == CanonicalType::Number {
        match (is_nan(value), is_nan(operand)) {
            (true, true) => return Some(Ordering::Equal),
            (true, false) | (false, true) => return None,
            (false, false) => {}
        }
    }
    Some(compare_raw_collated(value, operand, collation))
}

/// Whether two values are equal, strings under `collation`.
fn equal(value: RawBsonRef<'_>, operand: RawBsonRef<'_>, collation: &Collation) -> bool {
    compare_raw_collated(value, operand, collation) == Ordering::Equal
}

/// Whether a numeric value is NaN (double or decimal): NaN is the only number equal to NaN.
fn is_nan(value: RawBsonRef<'_>) -> bool {
    match value {
        RawBsonRef::Double(double) => double.is_nan(),
        RawBsonRef::Decimal128(_) => {
            compare_raw(value, RawBsonRef::Double(f64::NAN)) == Ordering::Equal
        }
        _ => false,
    }
}

/// The integer part of a number, for `$mod` (MongoDB truncates doubles toward zero); `None`
/// for non-numbers, NaN, infinities and decimals.
fn integer_part(value: RawBsonRef<'_>) -> Option<i64> {
    match value {
        RawBsonRef::Int32(int) => Some(i64::from(int)),
        RawBsonRef::Int64(long) => Some(long),
        RawBsonRef::Double(double) if double.is_finite() => Some(double.trunc() as i64),
        _ => None,
    }
}

fn count_elements(array: &RawArray) -> Result<usize> {
    let mut count = 0;
    for element in array {
        element?;
        count += 1;
    }
    Ok(count)
}

/// The index of the first element of `array` satisfying an `$elemMatch`.
pub(super) fn first_matching_element(
    elem_match: &ElemMatch,
    array: &RawArray,
    collation: &Collation,
) -> Result<Option<usize>> {
    for (index, element) in array.into_iter().enumerate() {
        let element = element?;
        let matched = match elem_match {
            ElemMatch::Value(predicates) => {
                let mut all = true;
                for predicate in predicates {
                    if !test_value(predicate, element, collation)? {
                        all = false;
                        break;
                    }
                }
                all
            }
            ElemMatch::Document(filter) => match element {
                RawBsonRef::Document(document) => {
                    eval_filter(filter, document, None, collation)?.is_some()
                }
                RawBsonRef::Array(nested) => {
                    // MongoDB sees an array element as a document with keys "0", "1"...
                    let as_document = RawDocument::from_bytes(nested.as_bytes())?;
                    eval_filter(filter, as_document, None, collation)?.is_some()
                }
                _ => false,
            },
        };
        if matched {
            return Ok(Some(index));
        }
    }
    Ok(None)
}

impl Predicate {
    /// Whether this predicate evaluates to true on one value, *without* array traversal: the
    /// semantics of a condition inside `{$elemMatch: {...operators...}}` and of `$pull`
    /// conditions. `{$gt: 1}` does not look inside an array value here.
    pub fn matches_value(&self, value: RawBsonRef<'_>) -> Result<bool> {
        test_value(self, value, &Collation::simple())
    }

    /// Whether this predicate holds for a field that is absent (the same as MongoDB's
    /// "missing" value: `{$eq: null}`, `{$exists: false}`, `{$ne: 5}`...).
    pub fn matches_missing(&self) -> bool {
        test_missing(self)
    }
}

impl ElemMatch {
    /// The index of the first element of `array` that satisfies this `$elemMatch`. Fails
    /// only on malformed BSON.
    pub fn first_match(&self, array: &RawArray) -> Result<Option<usize>> {
        first_matching_element(self, array, &Collation::simple())
    }
}

impl NearQuery {
    /// The distance to the nearest location at `path` in `document` within the bounds, if
    /// there is one: what a `$near` query sorts by.
    pub fn distance_in(&self, path: &FieldPath, document: &RawDocument) -> Result<Option<f64>> {
        let mut nearest: Option<f64> = None;
        for_each_value(document, path.parts(), |value| {
            if let Some(distance) = Shape::from_raw(value).and_then(|shape| self.distance(&shape))
                && self.in_range(distance)
                && nearest.is_none_or(|known| distance < known)
            {
                nearest = Some(distance);
            }
        })?;
        Ok(nearest)
    }
}

/// Calls `visit` with every value `parts` reaches in `document` (array elements, then the
/// array itself), as a positive predicate sees them.
fn for_each_value<'a>(
    document: &'a RawDocument,
    parts: &[String],
    mut visit: impl FnMut(RawBsonRef<'a>),
) -> Result<()> {
    first_candidate(document, parts, true, |candidate| {
        if let Candidate::Value(value) = candidate {
            visit(value);
        }
        Ok(false)
    })?;
    Ok(())
}

/// Runs `test` on each candidate `parts` reaches until one passes; returns the match with
/// its array index.
fn first_candidate<'a>(
    document: &'a RawDocument,
    parts: &[String],
    expand_leaf_arrays: bool,
    mut test: impl FnMut(Candidate<'a>) -> Result<bool>,
) -> Result<Outcome> {
    first_candidate_with_index(document, parts, expand_leaf_arrays, |candidate| {
        Ok(test(candidate)?.then_some(None))
    })
}

/// Like [`first_candidate`], for tests that find an index of their own inside the candidate
/// (`$elemMatch`): `Some(inner_index)` on a match. The outer array's index wins over it.
fn first_candidate_with_index<'a>(
    document: &'a RawDocument,
    parts: &[String],
    expand_leaf_arrays: bool,
    mut test: impl FnMut(Candidate<'a>) -> Result<Option<Option<usize>>>,
) -> Result<Outcome> {
    let mut visit = |candidate, outer_index: Option<usize>| -> Result<Flow> {
        Ok(match test(candidate)? {
            Some(inner_index) => Flow::Break(outer_index.or(inner_index)),
            None => Flow::Continue(()),
        })
    };
    match walk_document(document, parts, expand_leaf_arrays, None, &mut visit)? {
        ControlFlow::Break(array_index) => Ok(Some(array_index)),
        ControlFlow::Continue(()) => Ok(None),
    }
}

type Flow = ControlFlow<Option<usize>>;

/// Returns early from a walk when the visitor has found what it looks for.
macro_rules! return_on_break {
    ($flow:expr) => {
        if let Flow::Break(found) = $flow? {
            return Ok(Flow::Break(found));
        }
    };
}

/// Walks `parts` from `document`, following MongoDB's `getFieldDottedOrArray`: through
/// embedded documents until the path ends, is missing, or meets an array.
fn walk_document<'a, F>(
    document: &'a RawDocument,
    parts: &[String],
    expand_leaf_arrays: bool,
    outer_index: Option<usize>,
    visit: &mut F,
) -> Result<Flow>
where
    F: FnMut(Candidate<'a>, Option<usize>) -> Result<Flow>,
{
    let mut current = document;
    for (depth, part) in parts.iter().enumerate() {
        let is_last = depth + 1 == parts.len();
        match crate::raw::get(current, part)? {
            None => return visit(Candidate::Missing, outer_index),
            Some(RawBsonRef::Array(array)) => {
                return walk_array(
                    array,
                    &parts[depth + 1..],
                    expand_leaf_arrays,
                    outer_index,
                    visit,
                );
            }
            Some(RawBsonRef::Document(inner)) if !is_last => current = inner,
            Some(value) if is_last => return visit(Candidate::Value(value), outer_index),
            // A scalar where the path goes on: nothing there.
            Some(_) => return visit(Candidate::Missing, outer_index),
        }
    }
    Ok(Flow::Continue(()))
}

/// Walks the rest of a path from an array (see the module documentation for the rules).
fn walk_array<'a, F>(
    array: &'a RawArray,
    rest: &[String],
    expand_leaf_arrays: bool,
    outer_index: Option<usize>,
    visit: &mut F,
) -> Result<Flow>
where
    F: FnMut(Candidate<'a>, Option<usize>) -> Result<Flow>,
{
    let Some(next_part) = rest.first() else {
        if expand_leaf_arrays {
            for (index, element) in array.into_iter().enumerate() {
                return_on_break!(visit(
                    Candidate::Value(element?),
                    outer_index.or(Some(index))
                ));
            }
        }
        return visit(Candidate::Value(RawBsonRef::Array(array)), outer_index);
    };
    let positional_index = array_index(next_part);
    for (index, element) in array.into_iter().enumerate() {
        let element = element?;
        let at_position = positional_index == Some(index);
        if let RawBsonRef::Document(inner) = element {
            return_on_break!(walk_document(
                inner,
                rest,
                expand_leaf_arrays,
                outer_index.or(Some(index)),
                visit
            ));
        }
        if !at_position {
            continue;
        }
        let after_index = &rest[1..];
        if after_index.is_empty() {
            return_on_break!(visit(
                Candidate::Value(element),
                outer_index.or(Some(index))
            ));
            continue;
        }
        // Positional descent: the index recorded is the one found further down.
        match element {
            RawBsonRef::Document(inner) => {
                return_on_break!(walk_document(
                    inner,
                    after_index,
                    expand_leaf_arrays,
                    outer_index,
                    visit
                ));
            }
            RawBsonRef::Array(nested) => {
                return_on_break!(walk_array(
                    nested,
                    after_index,
                    expand_leaf_arrays,
                    outer_index,
                    visit
                ));
            }
            _ => {}
        }
    }
    Ok(Flow::Continue(()))
}
