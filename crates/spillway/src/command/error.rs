//! [`CommandError`]: a failed command as MongoDB reports it (`code`, `codeName`, `errmsg`,
//! `errorLabels`), and the translation of the facade's [`Error`] into it.
//!
//! Codes and names are MongoDB's (`src/mongo/base/error_codes.yml`), so that drivers react as
//! they do against MongoDB: retry on `TransientTransactionError`, raise `DuplicateKeyError` on
//! 11000, treat 26 as a missing namespace. This module must never decide whether a command
//! succeeds; it only says how a failure reads.

use std::borrow::Cow;
use std::fmt;

use bson::{Bson, Document, doc};
use spillway_doc::shell::to_shell_string;

use crate::error::{Error, ErrorKind, KindMessage, codes};

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

    /// MongoDB's name for the code (`Location<code>` for a code without a name, as MongoDB
    /// names its assertions).
    pub fn code_name(&self) -> Cow<'static, str> {
        codes::name(self.code)
    }

    /// The `ok: 0` reply of a command that failed.
    pub fn to_reply(&self) -> Document {
        let mut reply = doc! {
            "ok": 0.0,
            "errmsg": &self.message,
            "code": self.code,
            "codeName": self.code_name().into_owned(),
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
            "codeName": self.code_name().into_owned(),
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
        let mut converted = CommandError::new(
            error.code().unwrap_or(codes::BAD_VALUE),
            KindMessage(error).to_string(),
        );
        if let ErrorKind::DuplicateKey {
            collection,
            index,
            key,
        } = error.kind()
        {
            let details = duplicate_key_details(key);
            // MongoDB's wording, which drivers and applications match on ("E11000").
            converted.message = format!(
                "E11000 duplicate key error collection: {collection} index: {index} dup key: {}",
                to_shell_string(&details.get("keyValue").cloned().unwrap_or(Bson::Null))
            );
            converted.details = Some(Box::new(details));
        }
        if let ErrorKind::DocumentValidationFailure { id, details, .. } = error.kind() {
            // MongoDB's wording and `errInfo` shape: `details` explain which clauses failed
            // (`ParsedFilter::explain_failure`).
            converted.message = "Document failed validation".to_string();
            let details = details.as_deref().cloned().unwrap_or_else(
                || doc! { "reason": "the document does not match the collection's validator" },
            );
            converted.details = Some(Box::new(doc! {
                "errInfo": {
                    "failingDocumentId": id.clone(),
                    "details": details,
                },
            }));
        }
        for label in error.labels() {
            converted = converted.label(label);
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
