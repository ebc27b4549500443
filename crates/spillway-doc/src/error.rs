//! The one error type of `spillway-doc`.
//!
//! Every message says what was wrong and where (the path, the operator, the document's
//! `_id`, the line and column), with no trailing period, so that callers can show it to a
//! user as it is. Callers that need to react programmatically match on the variant.

use std::borrow::Cow;
use std::fmt;

use bson::Bson;

/// How many characters of a value (or of a third party's message quoting one) an error
/// message shows before [`abbreviate`] cuts it.
pub const MAX_SHOWN_CHARS: usize = 120;

/// `text` whole if it has at most `max_chars` characters, else its beginning and end around
/// `...`: error messages quote values, and a value may be 16 MiB long.
pub fn abbreviate(text: &str, max_chars: usize) -> Cow<'_, str> {
    let total = text.chars().count();
    if total <= max_chars {
        return Cow::Borrowed(text);
    }
    let head = max_chars * 2 / 3;
    let tail = max_chars - head;
    let mut short: String = text.chars().take(head).collect();
    short.push_str("...");
    short.extend(text.chars().skip(total - tail));
    Cow::Owned(short)
}

/// User input (a collection, index or field name...) as an error message repeats it:
/// [`abbreviate`]d to [`MAX_SHOWN_CHARS`], so that a 100,000-character name gives a readable
/// message. Every message that echoes a name goes through this one helper.
pub fn echo(text: &str) -> Cow<'_, str> {
    abbreviate(text, MAX_SHOWN_CHARS)
}

/// Everything that can go wrong while parsing or evaluating MongoDB's document language.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum DocError {
    /// A dotted field path that is not well formed (empty, empty component, `$` misuse...).
    InvalidPath {
        /// The path as written.
        path: String,
        /// Why it is not a valid path.
        reason: String,
    },
    /// A filter (query) that cannot be parsed: unknown operator, wrong operand type...
    InvalidFilter {
        /// Where in the filter the problem is (a field path, or the top level operator).
        path: String,
        /// What is wrong, starting with the operator where there is one.
        message: String,
    },
    /// A `$jsonSchema` that cannot be parsed (unknown or unsupported keyword, a keyword's
    /// value of the wrong type), with MongoDB's code for the same refusal: 9 (FailedToParse),
    /// 14 (TypeMismatch) or 2 (BadValue).
    InvalidSchema {
        /// MongoDB's error code.
        code: i32,
        /// What is wrong, naming the keyword and where it is in the schema.
        message: String,
    },
    /// An update specification that cannot be applied to any document: unknown operator,
    /// conflicting paths, invalid `$push` modifiers, empty update...
    InvalidUpdate {
        /// What is wrong, naming the operator and the field.
        message: String,
    },
    /// A valid update that cannot be applied to one particular document (`$inc` on a
    /// string, `$push` onto a non-array, changing `_id`...). The document is unchanged.
    UpdateFailed {
        /// The operator that failed, e.g. `$push`.
        operator: String,
        /// The field path the operator was applied to.
        field: String,
        /// The `_id` of the document, when it has one (boxed to keep `DocError` small: it is
        /// returned on every fallible path of the crate).
        id: Option<Box<Bson>>,
        /// What is wrong with the field's current value.
        message: String,
    },
    /// A projection specification that cannot be parsed.
    InvalidProjection {
        /// What is wrong, naming the field.
        message: String,
    },
    /// A sort specification that cannot be parsed.
    InvalidSort {
        /// What is wrong, naming the field.
        message: String,
    },
    /// A collation specification that cannot be parsed or built (unknown field, bad
    /// locale, value out of range).
    InvalidCollation {
        /// What is wrong, naming the field.
        message: String,
    },
    /// Shell (mongosh literal) or Extended JSON text that cannot be parsed.
    Syntax {
        /// 1-based line of the problem.
        line: usize,
        /// 1-based column (in characters) of the problem.
        column: usize,
        /// What was expected or found.
        message: String,
    },
    /// A value that Extended JSON or a shell constructor cannot represent as BSON.
    InvalidValue {
        /// What is wrong with it.
        message: String,
    },
    /// A document larger than the BSON document limit.
    DocumentTooLarge {
        /// Its size in bytes.
        size: usize,
        /// The limit it exceeds.
        limit: usize,
    },
    /// A document nested deeper than the nesting limit.
    NestingTooDeep {
        /// The depth found.
        depth: usize,
        /// The limit it exceeds.
        limit: usize,
    },
    /// An aggregation expression that cannot be parsed, or that fails on a document
    /// (`$add` of a string...), with MongoDB's error code for the same failure.
    Expression {
        /// MongoDB's error code (e.g. 168 for an unrecognized expression, 16554 for `$add`
        /// of a non-number).
        code: i32,
        /// What is wrong, naming the operator.
        message: String,
    },
    /// An aggregation pipeline or stage that cannot be parsed or run, with MongoDB's error
    /// code (e.g. 40324 for an unrecognized stage).
    Pipeline {
        /// MongoDB's error code.
        code: i32,
        /// What is wrong, naming the stage.
        message: String,
    },
    /// Bytes that are not a well-formed BSON document.
    MalformedBson {
        /// What the BSON decoder reported.
        message: String,
    },
}

impl DocError {
    /// Shorthand for [`DocError::InvalidFilter`].
    pub(crate) fn filter(path: impl Into<String>, message: impl Into<String>) -> Self {
        DocError::InvalidFilter {
            path: path.into(),
            message: message.into(),
        }
    }

    /// Shorthand for [`DocError::InvalidUpdate`].
    pub(crate) fn update(message: impl Into<String>) -> Self {
        DocError::InvalidUpdate {
            message: message.into(),
        }
    }
}

impl fmt::Display for DocError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DocError::InvalidPath { path, reason } => {
                write!(f, "invalid field path '{path}': {reason}")
            }
            DocError::InvalidFilter { path, message } if path.is_empty() => {
                write!(f, "invalid filter: {message}")
            }
            DocError::InvalidFilter { path, message } => {
                write!(f, "invalid filter at '{path}': {message}")
            }
            DocError::InvalidSchema { message, .. } => write!(f, "invalid filter: {message}"),
            DocError::InvalidUpdate { message } => write!(f, "invalid update: {message}"),
            DocError::UpdateFailed {
                operator,
                field,
                id,
                message,
            } => {
                write!(f, "{operator}: field '{field}' {message}")?;
                match id {
                    Some(id) => write!(
                        f,
                        " (document _id: {})",
                        abbreviate(&id.to_string(), MAX_SHOWN_CHARS)
                    ),
                    None => write!(f, " (document without _id)"),
                }
            }
            DocError::InvalidProjection { message } => write!(f, "invalid projection: {message}"),
            DocError::InvalidSort { message } => write!(f, "invalid sort: {message}"),
            DocError::InvalidCollation { message } => write!(f, "invalid collation: {message}"),
            DocError::Syntax {
                line,
                column,
                message,
            } => {
                write!(f, "syntax error at line {line}, column {column}: {message}")
            }
            DocError::InvalidValue { message } => write!(f, "invalid value: {message}"),
            DocError::DocumentTooLarge { size, limit } => {
                write!(f, "document is {size} bytes, over the {limit}-byte limit")
            }
            DocError::NestingTooDeep { depth, limit } => {
                write!(
                    f,
                    "document is nested {depth} levels deep, over the limit of {limit}"
                )
            }
            DocError::Expression { code, message } => {
                write!(f, "invalid expression: {message} (code {code})")
            }
            DocError::Pipeline { code, message } => {
                write!(f, "invalid pipeline: {message} (code {code})")
            }
            DocError::MalformedBson { message } => write!(f, "malformed BSON: {message}"),
        }
    }
}

impl std::error::Error for DocError {}

impl From<bson::error::Error> for DocError {
    fn from(error: bson::error::Error) -> Self {
        DocError::MalformedBson {
            message: error.to_string(),
        }
    }
}

/// The result type of this crate.
pub type Result<T, E = DocError> = std::result::Result<T, E>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn abbreviate_keeps_both_ends_of_long_text() {
        assert_eq!(abbreviate("short", 10), "short");
        assert_eq!(abbreviate("0123456789", 10), "0123456789");
        assert_eq!(abbreviate("0123456789abcdef", 9), "012345...def");
        assert_eq!(abbreviate(&"é".repeat(1000), 3), "éé...é");
    }
}
