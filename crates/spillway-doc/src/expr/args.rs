//! The shapes operator arguments take: positional (`{$add: [a, b]}`, or `{$abs: a}` for one
//! argument) and named (`{$dateToString: {date: ..., format: ...}}`), checked with MongoDB's
//! error codes so that every family reports a wrong argument count the same way.

use bson::{Bson, Document};

use super::{Expr, Scope, expression_error};
use crate::error::Result;

/// Parses a positional argument list of `min..=max` expressions (`max` `None` for any
/// number). A non-array argument is one argument, as in MongoDB.
pub(crate) fn expect_args(
    scope: &mut Scope,
    name: &str,
    argument: &Bson,
    min: usize,
    max: Option<usize>,
) -> Result<Vec<Expr>> {
    let items: Vec<&Bson> = match argument {
        Bson::Array(items) => items.iter().collect(),
        single => vec![single],
    };
    let count = items.len();
    let too_few = count < min;
    let too_many = max.is_some_and(|max| count > max);
    if too_few || too_many {
        let expected = match max {
            Some(max) if max == min => format!("exactly {min}"),
            Some(max) => format!("between {min} and {max}"),
            None => format!("at least {min}"),
        };
        return Err(expression_error(
            16020,
            format!("Expression {name} takes {expected} arguments. {count} were passed in."),
        ));
    }
    items.into_iter().map(|item| scope.parse(item)).collect()
}

/// The named arguments of an operator such as `$dateToString`.
#[derive(Debug)]
pub(crate) struct Named {
    fields: Vec<(String, Expr)>,
}

impl Named {
    /// Parses `argument`, which must be a document whose fields are among `required` and
    /// `optional`, with every `required` one present.
    pub(crate) fn parse(
        scope: &mut Scope,
        name: &str,
        argument: &Bson,
        required: &[&str],
        optional: &[&str],
    ) -> Result<Named> {
        let Bson::Document(document) = argument else {
            return Err(expression_error(
                40517,
                format!(
                    "{name} expects an object of named arguments but found {}",
                    crate::path::describe(argument)
                ),
            ));
        };
        Named::parse_document(scope, name, document, required, optional)
    }

    fn parse_document(
        scope: &mut Scope,
        name: &str,
        document: &Document,
        required: &[&str],
        optional: &[&str],
    ) -> Result<Named> {
        let mut fields = Vec::with_capacity(document.len());
        for (field, value) in document {
            if !required.contains(&field.as_str()) && !optional.contains(&field.as_str()) {
                return Err(expression_error(
                    40518,
                    format!("Unrecognized argument to {name}: {field}"),
                ));
            }
            fields.push((field.clone(), scope.parse(value)?));
        }
        for field in required {
            if !document.contains_key(field) {
                return Err(expression_error(
                    40519,
                    format!("Missing '{field}' parameter to {name}"),
                ));
            }
        }
        Ok(Named { fields })
    }

    /// Takes the argument `field` out, if it was given.
    pub(crate) fn take(&mut self, field: &str) -> Option<Expr> {
        let index = self.fields.iter().position(|(name, _)| name == field)?;
        Some(self.fields.remove(index).1)
    }
}
