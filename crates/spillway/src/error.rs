//! The facade's one error type: [`Error`], with an [`ErrorKind`] a caller can match on.
//!
//! Every message says what was wrong and where (collection, index, key, document position),
//! without a trailing period. Errors from the lower crates are kept whole: a filter error is
//! the `DocError` the filter parser produced, a storage error the store's `Error`, each
//! reachable through [`ErrorKind`]. Their text is part of the message, so
//! [`std::error::Error::source`] does not return them again (it forwards their own source):
//! printing the chain says each cause once. This module must never turn an error into a
//! string and lose its kind.

use std::collections::HashMap;
use std::fmt;

use bson::Bson;
use spillway_doc::DocError;
use spillway_doc::error::{MAX_SHOWN_CHARS, abbreviate};

/// The result type of every fallible facade operation.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// What went wrong, for matching. Obtain it with [`Error::kind`].
#[derive(Debug)]
#[non_exhaustive]
pub enum ErrorKind {
    /// A write would give two documents the same key in a unique index (`_id_` included).
    DuplicateKey {
        /// The collection written to.
        collection: String,
        /// The unique index that refused the key (`_id_` for a duplicate `_id`).
        index: String,
        /// The duplicated key: the `_id` for `_id_`, else a document of the indexed fields.
        key: Bson,
    },
    /// The filter could not be parsed.
    InvalidFilter(DocError),
    /// The update (or replacement) could not be parsed or could not be applied to a document.
    InvalidUpdate(DocError),
    /// A document cannot be stored (bad `_id`, malformed BSON, nesting deeper than 100).
    InvalidDocument(DocError),
    /// A sort, projection or field path argument is invalid.
    InvalidArgument(DocError),
    /// An aggregation pipeline or one of its expressions could not be parsed, or an
    /// expression failed on a document (`$add` of a string...): a `DocError::Pipeline` or
    /// `DocError::Expression`, which carries MongoDB's code (see [`Error::code`]).
    Aggregation(DocError),
    /// A document is larger than the 16 MiB limit.
    DocumentTooLarge {
        /// The document's size in bytes.
        size: usize,
        /// The limit in bytes.
        limit: usize,
    },
    /// A collection name is empty, too long, contains `$` or NUL, or starts with `system.`.
    InvalidCollectionName {
        /// The refused name.
        name: String,
        /// Why it was refused.
        reason: &'static str,
    },
    /// An index specification is invalid (bad key pattern, conflicting options or names).
    InvalidIndex {
        /// The collection.
        collection: String,
        /// What was wrong.
        message: String,
    },
    /// A compound index would need entries for two array fields of one document.
    ParallelArrays {
        /// The collection.
        collection: String,
        /// The index.
        index: String,
    },
    /// `drop_index` named an index that does not exist.
    IndexNotFound {
        /// The collection.
        collection: String,
        /// The index name asked for.
        index: String,
    },
    /// Stored bytes are not what the database wrote (catalog, document or index entry).
    Corruption {
        /// What was found, and where.
        message: String,
    },
    /// The storage engine failed (I/O, lock, poisoned handle); the store's error is the source.
    Storage(spillway_store::Error),
    /// A value could not be converted between a Rust type and BSON.
    Serialization {
        /// The conversion that failed and why.
        message: String,
    },
    /// A pattern policy is invalid, conflicts with the database, or refuses a write (a write
    /// to a field the policy maintains, a `$rename` of a managed field, a collection whose
    /// policy is still being applied or removed).
    Pattern(spillway_pattern::PatternError),
    /// An operation inside the transaction failed earlier, so the transaction can only be
    /// abandoned; or a write was attempted outside a transaction this thread holds open.
    TransactionAborted {
        /// Why.
        message: String,
    },
}

/// The facade's error: an [`ErrorKind`], plus the position of the input document it concerns
/// for multi-document writes (`insert_many`), and what such a write did despite the failure.
#[derive(Debug)]
pub struct Error {
    kind: Box<ErrorKind>,
    document_index: Option<usize>,
    batch: Option<Box<BatchOutcome>>,
}

/// What an `insert_many` that failed did all the same.
#[derive(Debug)]
struct BatchOutcome {
    inserted_ids: HashMap<usize, Bson>,
    later_failures: Vec<Error>,
}

/// How many inserted `_id`s an error message lists before it abbreviates.
const LISTED_IDS: usize = 10;

impl Error {
    pub(crate) fn new(kind: ErrorKind) -> Error {
        Error {
            kind: Box::new(kind),
            document_index: None,
            batch: None,
        }
    }

    /// The error of an `insert_many` that inserted `inserted_ids` (by input position) and
    /// refused the documents of `failures` (in input order, each `at_document`, at least one).
    pub(crate) fn partial_insert(
        mut failures: Vec<Error>,
        inserted_ids: HashMap<usize, Bson>,
    ) -> Error {
        let later_failures = failures.split_off(1);
        let mut first = failures
            .pop()
            .expect("a failed insert_many has one failure at least");
        first.batch = Some(Box::new(BatchOutcome {
            inserted_ids,
            later_failures,
        }));
        first
    }

    /// What went wrong.
    pub fn kind(&self) -> &ErrorKind {
        &self.kind
    }

    /// For `insert_many`: the position of the input document that failed (the first one, for
    /// an unordered insert that refused several).
    pub fn document_index(&self) -> Option<usize> {
        self.document_index
    }

    /// For `insert_many` outside a transaction: the `_id`s of the documents that were
    /// inserted (and stay) although the write failed, by input position; `None` for other
    /// errors. An ordered insert keeps the documents before the failing one, an unordered
    /// insert every valid document.
    pub fn inserted_ids(&self) -> Option<&HashMap<usize, Bson>> {
        self.batch.as_ref().map(|batch| &batch.inserted_ids)
    }

    /// For an unordered `insert_many`: the failures after the first (which is this error),
    /// each with its [`Error::document_index`]; empty otherwise.
    pub fn later_failures(&self) -> &[Error] {
        self.batch
            .as_ref()
            .map_or(&[], |batch| batch.later_failures.as_slice())
    }

    /// Whether this is a duplicate key error (a unique index or `_id`).
    pub fn is_duplicate_key(&self) -> bool {
        matches!(*self.kind, ErrorKind::DuplicateKey { .. })
    }

    pub(crate) fn at_document(mut self, index: usize) -> Error {
        self.document_index = Some(index);
        self
    }

    pub(crate) fn filter(error: DocError) -> Error {
        Error::new(ErrorKind::InvalidFilter(error))
    }

    pub(crate) fn update(error: DocError) -> Error {
        Error::new(ErrorKind::InvalidUpdate(error))
    }

    /// An error of a pipeline or of an expression: `Aggregation`, except for what is not
    /// about the pipeline itself (a document too large to store keeps its own kind).
    pub(crate) fn aggregation(error: DocError) -> Error {
        match error {
            DocError::Expression { .. } | DocError::Pipeline { .. } => {
                Error::new(ErrorKind::Aggregation(error))
            }
            DocError::InvalidFilter { .. } => Error::filter(error),
            DocError::DocumentTooLarge { .. } | DocError::NestingTooDeep { .. } => {
                Error::document(error)
            }
            other => Error::argument(other),
        }
    }

    /// MongoDB's error code for this error, where MongoDB has one that says the same thing:
    /// 11000 for a duplicate key, 10334 for a document over 16 MiB, and the code a pipeline or
    /// expression error carries (e.g. 40324 for an unknown stage, 16554 for `$add` of a
    /// string).
    pub fn code(&self) -> Option<i32> {
        match &*self.kind {
            ErrorKind::DuplicateKey { .. } => Some(11000),
            ErrorKind::DocumentTooLarge { .. } => Some(10334),
            ErrorKind::Aggregation(
                DocError::Expression { code, .. } | DocError::Pipeline { code, .. },
            )
            | ErrorKind::InvalidFilter(DocError::Expression { code, .. }) => Some(*code),
            _ => None,
        }
    }

    pub(crate) fn argument(error: DocError) -> Error {
        Error::new(ErrorKind::InvalidArgument(error))
    }

    /// A document-level failure: sizes get their own kind, everything else is
    /// `InvalidDocument`.
    pub(crate) fn document(error: DocError) -> Error {
        match error {
            DocError::DocumentTooLarge { size, limit } => {
                Error::new(ErrorKind::DocumentTooLarge { size, limit })
            }
            other => Error::new(ErrorKind::InvalidDocument(other)),
        }
    }

    pub(crate) fn corruption(message: impl Into<String>) -> Error {
        Error::new(ErrorKind::Corruption {
            message: message.into(),
        })
    }

    pub(crate) fn serialization(message: impl Into<String>) -> Error {
        Error::new(ErrorKind::Serialization {
            message: message.into(),
        })
    }

    pub(crate) fn invalid_index(collection: &str, message: impl Into<String>) -> Error {
        Error::new(ErrorKind::InvalidIndex {
            collection: collection.to_string(),
            message: message.into(),
        })
    }
}

impl From<spillway_store::Error> for Error {
    fn from(error: spillway_store::Error) -> Self {
        if error.is_corruption() {
            return Error::new(ErrorKind::Corruption {
                message: error.to_string(),
            });
        }
        Error::new(ErrorKind::Storage(error))
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.describe_kind(f)?;
        if let Some(index) = self.document_index {
            write!(f, " (document {index} of the batch")?;
            if let Some(batch) = &self.batch {
                batch.describe(f)?;
            }
            f.write_str(")")?;
        }
        Ok(())
    }
}

/// The message of an error's kind alone, without the batch position and outcome that
/// `Display` adds (the command layer reports those as fields of `writeErrors`).
pub(crate) struct KindMessage<'a>(pub(crate) &'a Error);

impl fmt::Display for KindMessage<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.describe_kind(f)
    }
}

impl Error {
    fn describe_kind(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &*self.kind {
            ErrorKind::DuplicateKey {
                collection,
                index,
                key,
            } => write!(
                f,
                "duplicate key in collection '{collection}', index '{index}': {}",
                abbreviate(&key.to_string(), MAX_SHOWN_CHARS)
            )?,
            ErrorKind::InvalidFilter(error)
            | ErrorKind::InvalidUpdate(error)
            | ErrorKind::InvalidDocument(error)
            | ErrorKind::InvalidArgument(error)
            | ErrorKind::Aggregation(error) => fmt::Display::fmt(error, f)?,
            ErrorKind::DocumentTooLarge { size, limit } => {
                write!(f, "document is {size} bytes, over the {limit}-byte limit")?;
            }
            ErrorKind::InvalidCollectionName { name, reason } => {
                write!(f, "invalid collection name {name:?}: {reason}")?;
            }
            ErrorKind::InvalidIndex {
                collection,
                message,
            } => write!(f, "invalid index on collection '{collection}': {message}")?,
            ErrorKind::ParallelArrays { collection, index } => write!(
                f,
                "cannot index parallel arrays: index '{index}' of collection '{collection}' would need entries for two array fields of one document"
            )?,
            ErrorKind::IndexNotFound { collection, index } => {
                write!(f, "index '{index}' not found in collection '{collection}'")?;
            }
            // The store's and the pattern layer's messages already say "corruption in ...".
            ErrorKind::Corruption { message } if message.starts_with("corruption") => {
                f.write_str(message)?;
            }
            ErrorKind::Corruption { message } => write!(f, "corruption: {message}")?,
            ErrorKind::Storage(error) => write!(f, "storage error: {error}")?,
            ErrorKind::Serialization { message } => write!(f, "serialization: {message}")?,
            ErrorKind::Pattern(error) => fmt::Display::fmt(error, f)?,
            ErrorKind::TransactionAborted { message } => {
                write!(f, "transaction aborted: {message}")?;
            }
        }
        Ok(())
    }
}

impl BatchOutcome {
    /// `; 2 more failed (documents 3, 5); inserted _id 1 (document 0), ...`
    fn describe(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if !self.later_failures.is_empty() {
            let positions: Vec<String> = self
                .later_failures
                .iter()
                .filter_map(|failure| failure.document_index.map(|index| index.to_string()))
                .collect();
            let noun = if positions.len() == 1 {
                "document"
            } else {
                "documents"
            };
            write!(
                f,
                "; {} more failed ({noun} {})",
                self.later_failures.len(),
                positions.join(", ")
            )?;
        }
        if self.inserted_ids.is_empty() {
            return f.write_str("; nothing was inserted");
        }
        let mut inserted: Vec<(&usize, &Bson)> = self.inserted_ids.iter().collect();
        inserted.sort_by_key(|(position, _)| **position);
        write!(f, "; {} inserted:", inserted.len())?;
        for (listed, (position, id)) in inserted.iter().enumerate() {
            if listed == LISTED_IDS {
                return write!(f, " ...");
            }
            let separator = if listed == 0 { "" } else { "," };
            write!(f, "{separator} _id {id} (document {position})")?;
        }
        Ok(())
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match &*self.kind {
            ErrorKind::InvalidFilter(error)
            | ErrorKind::InvalidUpdate(error)
            | ErrorKind::InvalidDocument(error)
            | ErrorKind::InvalidArgument(error)
            | ErrorKind::Aggregation(error) => error.source(),
            ErrorKind::Storage(error) => error.source(),
            ErrorKind::Pattern(error) => error.source(),
            _ => None,
        }
    }
}
