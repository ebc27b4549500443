//! `let` of the write commands (`update`, `delete`, `findAndModify`): constants the
//! statements' `$expr` filters and pipeline updates read as `$$name`.
//!
//! The facade's write actions take no variables; a `let` is bound where it is read instead:
//! its values are evaluated once (as MongoDB evaluates them, with no document), and every
//! expression that may read them (an `$expr` clause, at any depth of `$and`/`$or`/`$nor`, and
//! the expressions of an update pipeline's stages) is wrapped in the expression language's
//! own scope, `{ $let: { vars: { name: { $literal: value } }, in: <expression> } }`. An
//! expression's own `$let` or `$$name` shadows as it would under MongoDB's `let`.
//!
//! This module must never rewrite anything but expressions: a filter's field predicates, an
//! update's operators and a replacement are left as they are (they cannot read variables).

use bson::{Bson, Document, doc};
use spillway_doc::expr::{Expression, Variables};

use super::error::{CommandError, CommandResult};
use crate::Error;

/// A command's `let`, evaluated.
pub(crate) struct LetBinding {
    /// `{ name: { $literal: value } }`, in the order the command gave them.
    vars: Document,
}

impl LetBinding {
    /// Evaluates `let` (each value is an expression without a document; a later one may read
    /// an earlier one, as in MongoDB). `None` when there is no `let`.
    pub(crate) fn parse(let_vars: Option<&Document>) -> CommandResult<Option<LetBinding>> {
        let Some(let_vars) = let_vars else {
            return Ok(None);
        };
        let mut names: Vec<String> = Vec::new();
        let mut values: Vec<Bson> = Vec::new();
        for (name, spec) in let_vars {
            check_name(name)?;
            let expression = Expression::parse_in(spec, &names).map_err(doc_error)?;
            let variables = Variables {
                user: names.iter().cloned().zip(values.iter().cloned()).collect(),
                ..Variables::default()
            };
            let value = expression
                .evaluate(&Document::new(), &variables)
                .map_err(doc_error)?
                .unwrap_or(Bson::Null);
            names.push(name.clone());
            values.push(value);
        }
        let vars = names
            .into_iter()
            .zip(values)
            .map(|(name, value)| (name, Bson::Document(doc! { "$literal": value })))
            .collect();
        Ok(Some(LetBinding { vars }))
    }

    /// `expression` with the variables in scope.
    fn wrap(&self, expression: &Bson) -> Bson {
        Bson::Document(doc! { "$let": { "vars": self.vars.clone(), "in": expression.clone() } })
    }

    /// `filter` with every `$expr` clause reading the variables.
    pub(crate) fn filter(&self, filter: &Document) -> Document {
        filter
            .iter()
            .map(|(key, value)| {
                let value = match (key.as_str(), value) {
                    ("$expr", expression) => self.wrap(expression),
                    ("$and" | "$or" | "$nor", Bson::Array(branches)) => Bson::Array(
                        branches
                            .iter()
                            .map(|branch| match branch {
                                Bson::Document(branch) => Bson::Document(self.filter(branch)),
                                other => other.clone(),
                            })
                            .collect(),
                    ),
                    _ => value.clone(),
                };
                (key.clone(), value)
            })
            .collect()
    }

    /// An update pipeline's stages with their expressions reading the variables.
    pub(crate) fn pipeline(&self, stages: &[Document]) -> Vec<Document> {
        stages.iter().map(|stage| self.stage(stage)).collect()
    }

    fn stage(&self, stage: &Document) -> Document {
        stage
            .iter()
            .map(|(name, spec)| {
                let spec = match (name.as_str(), spec) {
                    ("$set" | "$addFields", Bson::Document(fields)) => Bson::Document(
                        fields
                            .iter()
                            .map(|(field, value)| (field.clone(), self.wrap(value)))
                            .collect(),
                    ),
                    ("$project", Bson::Document(fields)) => Bson::Document(self.projection(fields)),
                    ("$replaceWith", expression) => self.wrap(expression),
                    ("$replaceRoot", Bson::Document(spec)) => Bson::Document(
                        spec.iter()
                            .map(|(key, value)| {
                                let value = if key == "newRoot" {
                                    self.wrap(value)
                                } else {
                                    value.clone()
                                };
                                (key.clone(), value)
                            })
                            .collect(),
                    ),
                    // `$unset` (names only) and anything else the update refuses anyway.
                    _ => spec.clone(),
                };
                (name.clone(), spec)
            })
            .collect()
    }

    /// A `$project` specification: inclusions and exclusions stay, computed fields read the
    /// variables, nested specifications are walked.
    fn projection(&self, fields: &Document) -> Document {
        fields
            .iter()
            .map(|(field, value)| {
                let value = match value {
                    Bson::Boolean(_) | Bson::Int32(_) | Bson::Int64(_) | Bson::Double(_) => {
                        value.clone()
                    }
                    Bson::Document(nested)
                        if nested
                            .keys()
                            .next()
                            .is_some_and(|key| !key.starts_with('$')) =>
                    {
                        Bson::Document(self.projection(nested))
                    }
                    expression => self.wrap(expression),
                };
                (field.clone(), value)
            })
            .collect()
    }
}

/// MongoDB's rule for user variable names: a lowercase letter or a non-ASCII character
/// first, then letters, digits and `_` (2 FailedToParse otherwise).
fn check_name(name: &str) -> CommandResult<()> {
    let mut chars = name.chars();
    let valid_first = chars
        .next()
        .is_some_and(|first| first.is_ascii_lowercase() || !first.is_ascii());
    if valid_first && chars.all(|c| c.is_alphanumeric() || c == '_') {
        Ok(())
    } else {
        Err(CommandError::new(
            2,
            format!("'{name}' starts with an invalid character for a user variable name"),
        ))
    }
}

fn doc_error(error: spillway_doc::DocError) -> CommandError {
    CommandError::from(Error::aggregation(error))
}
