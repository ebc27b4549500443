//! Conditions on single array elements, as `$pull` uses them: the same operators as filters,
//! applied to one element at a time with no array traversal.
//!
//! This module only decides whether an element matches; removing it is the update module's
//! business.

use bson::{Bson, RawBson, RawBsonRef};

use super::parse::{is_operator_document, parse_filter_nested, parse_operators};
use super::predicate::{Operand, Predicate};
use super::{Filter, eval};
use crate::collation::Collation;
use crate::compare::values_equal_raw;
use crate::error::{DocError, Result};
use crate::path::FieldPath;
use crate::regex_matcher::RegexMatcher;

/// A parsed condition on one array element, with MongoDB's `$pull` semantics:
///
/// - an operator document (`{$gte: 6}`, `{$in: [1, 2]}`) applies its operators to the
///   element itself, like `{$elemMatch: {...}}` does;
/// - any other document (`{score: 8, item: "B"}`) is a filter that document elements must
///   match (other elements never match);
/// - a regular expression matches strings;
/// - any other value matches elements equal to it (`1 == 1.0`; arrays and documents
///   exactly, field order included).
#[derive(Debug, Clone, PartialEq)]
pub struct ElementMatcher {
    condition: Condition,
}

#[derive(Debug, Clone, PartialEq)]
enum Condition {
    Operators(Vec<Predicate>),
    Document(Filter),
    Regex(RegexMatcher),
    Equals(Operand),
}

impl ElementMatcher {
    /// Parses the condition given for the array at `field` (used in error messages).
    pub fn parse(field: &str, condition: &Bson) -> Result<ElementMatcher> {
        let path = FieldPath::parse(field).map_err(|error| match error {
            DocError::InvalidPath { reason, .. } => DocError::filter(field, reason),
            other => other,
        })?;
        let condition = match condition {
            Bson::Document(operators) if is_operator_document(operators) => {
                Condition::Operators(parse_operators(&path, operators)?)
            }
            Bson::Document(filter) => Condition::Document(parse_filter_nested(filter, &[])?),
            Bson::RegularExpression(regex) => {
                let matcher = RegexMatcher::new(regex.pattern.as_str(), regex.options.as_str())
                    .map_err(|error| match error {
                        DocError::InvalidFilter { message, .. } => DocError::filter(field, message),
                        other => other,
                    })?;
                Condition::Regex(matcher)
            }
            Bson::Undefined => return Err(DocError::filter(field, "cannot compare to undefined")),
            other => Condition::Equals(Operand::new(other.clone())?),
        };
        Ok(ElementMatcher { condition })
    }

    /// Whether a raw element matches. Fails only on malformed BSON.
    pub fn matches(&self, element: RawBsonRef<'_>) -> Result<bool> {
        match &self.condition {
            Condition::Operators(predicates) => {
                for predicate in predicates {
                    if !eval::test_value(predicate, element, &Collation::simple())? {
                        return Ok(false);
                    }
                }
                Ok(true)
            }
            Condition::Document(filter) => match element {
                RawBsonRef::Document(document) => filter.matches(document),
                _ => Ok(false),
            },
            Condition::Regex(regex) => Ok(regex.matches_value(element)),
            Condition::Equals(operand) => Ok(values_equal_raw(element, operand.raw())),
        }
    }

    /// Whether a decoded element matches (it is encoded once, then matched as raw).
    pub fn matches_bson(&self, element: &Bson) -> Result<bool> {
        if let (Condition::Document(filter), Bson::Document(document)) = (&self.condition, element)
        {
            return filter.matches_document(document);
        }
        let raw = RawBson::try_from(element.clone())?;
        self.matches(raw.as_raw_bson_ref())
    }
}
