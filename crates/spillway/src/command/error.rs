//! [`CommandError`]: a failed command as MongoDB reports it (`code`, `codeName`, `errmsg`,
//! `errorLabels`), and the translation of the facade's [`Error`] into it.
//!
//! Codes and names are MongoDB's (`src/mongo/base/error_codes.yml`), so that drivers react as
//! they do against MongoDB: retry on `TransientTransactionError`, raise `DuplicateKeyError` on
//! 11000, treat 26 as a missing namespace. This module must never decide whether a command
//! succeeds; it only says how a failure reads.

use std::fmt;

use bson::{Bson, Document, doc};

use crate::error::{Error, ErrorKind, KindMessage};

/// MongoDB's codeName for the codes the command layer gives.
pub(crate) fn code_name(code: i32) -> &'static str {
    match code {
        1 => "InternalError",
        2 => "BadValue",
        4 => "NoSuchKey",
        9 => "FailedToParse",
        13 => "Unauthorized",
        14 => "TypeMismatch",
        16 => "InvalidLength",
        20 => "IllegalOperation",
        26 => "NamespaceNotFound",
        27 => "IndexNotFound",
        28 => "PathNotViable",
        40 => "ConflictingUpdateOperators",
        43 => "CursorNotFound",
        48 => "NamespaceExists",
        50 => "MaxTimeMSExpired",
        52 => "DollarPrefixedFieldName",
        59 => "CommandNotFound",
        66 => "ImmutableField",
        67 => "CannotCreateIndex",
        72 => "InvalidOptions",
        73 => "InvalidNamespace",
        85 => "IndexOptionsConflict",
        86 => "IndexKeySpecsConflict",
        112 => "WriteConflict",
        115 => "CommandNotSupported",
        166 => "CommandNotSupportedOnView",
        197 => "InvalidIndexSpecificationOption",
        225 => "TransactionTooOld",
        244 => "TransactionTooLarge",
        251 => "NoSuchTransaction",
        256 => "TransactionCommitted",
        263 => "OperationNotSupportedInTransaction",
        10334 => "BSONObjectTooLarge",
        11000 => "DuplicateKey",
        50768 => "Location50768",
        50911 => "Location50911",
        171 => "CannotIndexParallelArrays",
        13297 => "DatabaseDifferCase",
        40414 => "Location40414",
        40415 => "Location40415",
        _ => "",
    }
}

/// A command's failure, ready to become an `ok: 0` reply or an entry of `writeErrors`.
#[derive(Debug, Clone, PartialEq)]
pub struct CommandError {
    /// MongoDB's error code.
    pub code: i32,
    /// What went wrong, for a person.
    pub message: String,
    /// Labels such as `TransientTransactionError` that tell a driver to retry.
    pub labels: Vec<&'static str>,
    /// Fields MongoDB adds for this code (`keyPattern`, `keyValue` for 11000).
    pub details: Option<Box<Document>>,
}

impl CommandError {
    /// An error with `code` and `message`.
    pub fn new(code: i32, message: impl Into<String>) -> CommandError {
        CommandError {
            code,
            message: message.into(),
            labels: Vec::new(),
            details: None,
        }
    }

    /// 2 BadValue.
    pub(crate) fn bad_value(message: impl Into<String>) -> CommandError {
        CommandError::new(2, message)
    }

    /// 14 TypeMismatch.
    pub(crate) fn type_mismatch(message: impl Into<String>) -> CommandError {
        CommandError::new(14, message)
    }

    /// 26 NamespaceNotFound.
    pub(crate) fn namespace_not_found(namespace: &str) -> CommandError {
        CommandError::new(26, format!("ns does not exist: {namespace}"))
    }

    /// 115 CommandNotSupported: something Spillway deliberately does not do.
    pub(crate) fn not_supported(message: impl Into<String>) -> CommandError {
        CommandError::new(115, message)
    }

    /// Adds an error label.
    #[must_use]
    pub(crate) fn label(mut self, label: &'static str) -> CommandError {
        if !self.labels.contains(&label) {
            self.labels.push(label);
        }
        self
    }

    /// MongoDB's name for the code (empty for a code this layer does not know).
    pub fn code_name(&self) -> &'static str {
        code_name(self.code)
    }

    /// The `ok: 0` reply of a command that failed.
    pub fn to_reply(&self) -> Document {
        let mut reply = doc! {
            "ok": 0.0,
            "errmsg": &self.message,
            "code": self.code,
            "codeName": self.code_name(),
        };
        if let Some(details) = &self.details {
            reply.extend(details.as_ref().clone());
        }
        if !self.labels.is_empty() {
            reply.insert(
                "errorLabels",
                self.labels
                    .iter()
                    .map(|label| Bson::from(*label))
                    .collect::<Vec<_>>(),
            );
        }
        reply
    }

    /// An entry of `writeErrors`: the failed statement's position, code and message.
    pub(crate) fn to_write_error(&self, index: usize) -> Document {
        let mut entry = doc! {
            "index": index as i32,
            "code": self.code,
            "codeName": self.code_name(),
            "errmsg": &self.message,
        };
        if let Some(details) = &self.details {
            entry.extend(details.as_ref().clone());
        }
        entry
    }
}

impl fmt::Display for CommandError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({}): {}", self.code_name(), self.code, self.message)
    }
}

impl std::error::Error for CommandError {}

impl From<&Error> for CommandError {
    fn from(error: &Error) -> CommandError {
        let message = KindMessage(error).to_string();
        let code = match error.kind() {
            ErrorKind::DuplicateKey { .. } => 11000,
            ErrorKind::DocumentTooLarge { .. } => 10334,
            ErrorKind::InvalidFilter(_) | ErrorKind::InvalidArgument(_) => {
                error.code().unwrap_or(2)
            }
            ErrorKind::InvalidUpdate(_) => error.code().unwrap_or(9),
            ErrorKind::InvalidDocument(_) => 2,
            ErrorKind::Aggregation(_) => error.code().unwrap_or(2),
            ErrorKind::InvalidCollectionName { .. } => 73,
            ErrorKind::InvalidIndex { .. } => 67,
            ErrorKind::ParallelArrays { .. } => 171,
            ErrorKind::IndexNotFound { .. } => 27,
            ErrorKind::Pattern(_) => 2,
            ErrorKind::TransactionAborted { .. } => 251,
            _ => error.code().unwrap_or(1),
        };
        let mut converted = CommandError::new(code, message);
        if let ErrorKind::DuplicateKey { key, .. } = error.kind() {
            converted.details = Some(Box::new(duplicate_key_details(key)));
        }
        if code == 251 {
            converted = converted.label("TransientTransactionError");
        }
        converted
    }
}

impl From<Error> for CommandError {
    fn from(error: Error) -> CommandError {
        CommandError::from(&error)
    }
}

/// `keyPattern` and `keyValue` of a duplicate key: the facade reports the `_id` itself for
/// `_id_`, else a document of the indexed fields.
fn duplicate_key_details(key: &Bson) -> Document {
    match key {
        Bson::Document(fields) => {
            let pattern: Document = fields
                .keys()
                .map(|name| (name.clone(), Bson::Int32(1)))
                .collect();
            doc! { "keyPattern": pattern, "keyValue": fields.clone() }
        }
        id => doc! { "keyPattern": { "_id": 1 }, "keyValue": { "_id": id.clone() } },
    }
}

/// A command's outcome.
pub(crate) type CommandResult<T = Document> = Result<T, CommandError>;
