//! [`PatternError`]: what the pattern layer itself refuses. Errors of the storage behind a
//! backend stay the backend's own type (`WriteBackend::Error`), which converts from this one,
//! so that a duplicate key or an I/O error reaches the caller with its kind intact.

use std::fmt;

use bson::Bson;
use spillway_doc::DocError;

/// A policy or a write the pattern layer refuses, or stored data that breaks a policy.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum PatternError {
    /// A policy option is invalid on its own (a threshold of 0, a bad field name...).
    InvalidPolicy {
        /// The main collection.
        collection: String,
        /// The managed field.
        field: String,
        /// What is wrong.
        message: String,
    },
    /// A stored policy record cannot be read.
    InvalidRecord {
        /// What is wrong.
        message: String,
    },
    /// A write would break a policy (it sets the flag field, stores a non-document in a
    /// subset, renames a managed field...).
    Refused {
        /// The main collection.
        collection: String,
        /// The managed field.
        field: String,
        /// What was refused and why.
        message: String,
    },
    /// The caller's filter, update or document is invalid (MongoDB's semantics refuse it),
    /// found while the pattern layer applied it.
    Input {
        /// What was invalid.
        input: Input,
        /// Why.
        error: DocError,
    },
    /// An insert names an `_id` the collection already holds.
    DuplicateId {
        /// The collection.
        collection: String,
        /// The `_id`.
        id: Box<Bson>,
    },
    /// Stored side documents do not have the shape the policy writes.
    Corrupt {
        /// The collection holding the bad document.
        collection: String,
        /// The main document's `_id` the side documents belong to.
        link: Box<Bson>,
        /// What is wrong.
        message: String,
    },
}

/// Which input of a statement a [`PatternError::Input`] is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Input {
    /// The filter.
    Filter,
    /// The update or replacement.
    Update,
    /// A document to store.
    Document,
}

impl PatternError {
    /// An invalid filter.
    pub fn filter(error: DocError) -> PatternError {
        PatternError::Input {
            input: Input::Filter,
            error,
        }
    }

    /// An invalid update.
    pub fn update(error: DocError) -> PatternError {
        PatternError::Input {
            input: Input::Update,
            error,
        }
    }

    /// An invalid document.
    pub fn document(error: DocError) -> PatternError {
        PatternError::Input {
            input: Input::Document,
            error,
        }
    }
}

impl fmt::Display for PatternError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PatternError::InvalidPolicy {
                collection,
                field,
                message,
            } => write!(f, "invalid policy on {collection}.{field}: {message}"),
            PatternError::InvalidRecord { message } => {
                write!(f, "unreadable pattern policy record: {message}")
            }
            PatternError::Refused {
                collection,
                field,
                message,
            } => write!(
                f,
                "write refused by the policy on {collection}.{field}: {message}"
            ),
            PatternError::Input { error, .. } => error.fmt(f),
            PatternError::DuplicateId { collection, id } => write!(
                f,
                "E11000 duplicate key error collection: {collection} index: _id_ dup key: {{ _id: {id} }}"
            ),
            PatternError::Corrupt {
                collection,
                link,
                message,
            } => write!(
                f,
                "side documents in {collection} for _id {link} are damaged: {message}"
            ),
        }
    }
}

impl std::error::Error for PatternError {}
