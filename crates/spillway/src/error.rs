//! The facade's one error type: [`Error`], with an [`ErrorKind`] a caller can match on.
//!
//! Every message says what was wrong and where (collection, index, key, document position),
//! without a trailing period. Errors from the lower crates are kept whole: a filter error is
//! the `DocError` the filter parser produced, a storage error the store's `Error`, each
//! reachable through [`ErrorKind`]. Their text is part of the message, so
//! [`std::error::Error::source`] does not return them again (it forwards their own source):
//! printing the chain says each cause once. This module must never turn an error into a
//! string and lose its kind.

use std::borrow::Cow;
use std::collections::{BTreeMap, HashMap};
use std::fmt;

use bson::Bson;
use spillway_doc::DocError;
use spillway_doc::error::{MAX_SHOWN_CHARS, abbreviate, echo};

use crate::results::BulkWriteResult;

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
    /// A read would return a logical document (managed arrays whole) over the 16 MiB a
    /// document may have: it is refused, never cut. Reading the managed arrays in pages
    /// (`{field: {$slice: [skip, n]}}`) or without them answers.
    LogicalDocumentTooLarge {
        /// The collection read.
        collection: String,
        /// The document's `_id`.
        id: Bson,
        /// Its logical size in bytes.
        size: usize,
        /// The managed arrays it holds whole.
        fields: Vec<String>,
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
    /// Collection or index options are invalid (a validator or partial filter that does not
    /// parse, a bad `expireAfterSeconds`, an unknown validation level).
    InvalidOptions {
        /// The collection.
        collection: String,
        /// What was wrong.
        message: String,
    },
    /// A written document does not match the collection's validator (MongoDB's
    /// `DocumentValidationFailure`, code 121).
    DocumentValidationFailure {
        /// The collection.
        collection: String,
        /// The `_id` of the refused document.
        id: Bson,
        /// Why, in MongoDB's shape of `errInfo.details`, when the validator can say: a
        /// `$jsonSchema` validator names the keywords that failed
        /// (`{ operatorName: "$jsonSchema", schemaRulesNotSatisfied: [...] }`).
        details: Option<Box<bson::Document>>,
    },
    /// A tailable cursor's last document was removed from its capped collection (MongoDB's
    /// `CappedPositionLost`, code 136): the cursor cannot go on.
    CappedPositionLost {
        /// The collection.
        collection: String,
    },
    /// `create_collection_with` named a collection that exists (MongoDB's `NamespaceExists`).
    CollectionExists {
        /// The collection.
        collection: String,
    },
    /// A rename named a collection that does not exist (MongoDB's `NamespaceNotFound`,
    /// code 26).
    CollectionNotFound {
        /// The collection.
        collection: String,
    },
    /// A write, an index change or a pattern policy named a read-only view (MongoDB's
    /// `CommandNotSupportedOnView`, code 166).
    NotSupportedOnView {
        /// The view.
        collection: String,
    },
    /// A view's definition is refused: a bad `viewOn`, a pipeline stage that writes
    /// (`$out`, `$merge`), a cycle of views, a chain deeper than 20 ([`Error::code`] gives
    /// MongoDB's code: 73, 167, 150 or 149).
    InvalidView {
        /// The view.
        view: String,
        /// What was wrong (MongoDB's wording, which names the view).
        message: String,
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
    /// Operations of a `Database::bulk_write` failed: each one's own error by operation
    /// index, and what the others did. [`Error::code`] is the first failure's.
    BulkWrite(BulkWriteFailure),
    /// A transaction handle's commit found that a commit after the transaction began changed
    /// what it writes (snapshot isolation, first committer wins: see
    /// [`crate::Transaction`]). Nothing of the transaction was committed; running it again
    /// from the start may succeed. MongoDB's code 112, with the label
    /// `TransientTransactionError`.
    WriteConflict {
        /// What changed.
        message: String,
    },
}

/// The facade's error: an [`ErrorKind`], plus the position of the input document it concerns
/// for multi-document writes (`insert_many`), and what such a write did despite the failure.
#[derive(Debug)]
pub struct Error {
    kind: Box<ErrorKind>,
    /// MongoDB's code where the kind alone does not decide it (an index conflict).
    code: Option<i32>,
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
            code: None,
            document_index: None,
            batch: None,
        }
    }

    /// The same error with MongoDB's `code` (which [`Error::code`] then reports).
    pub(crate) fn with_code(mut self, code: i32) -> Error {
        self.code = Some(code);
        self
    }

    pub(crate) fn write_conflict(message: impl Into<String>) -> Error {
        Error::new(ErrorKind::WriteConflict {
            message: message.into(),
        })
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
            DocError::InvalidFilter { .. } | DocError::InvalidSchema { .. } => Error::filter(error),
            DocError::DocumentTooLarge { .. } | DocError::NestingTooDeep { .. } => {
                Error::document(error)
            }
            other => Error::argument(other),
        }
    }

    /// MongoDB's error code for this error, where MongoDB has one that says the same thing
    /// (the code a MongoDB server answers the same request with): 11000 for a duplicate key,
    /// 112 for a write conflict, 10334 for a document over 16 MiB, 2 (BadValue) for an
    /// invalid filter, 9 (FailedToParse) for an update that cannot be parsed, 66
    /// (ImmutableField) for an update that changes `_id`, 73 (InvalidNamespace) for a bad
    /// collection name, the code a pipeline or expression error carries (e.g. 40324 for an
    /// unknown stage, 16554 for `$add` of a string)... `None` only for
    /// [`ErrorKind::Serialization`], a conversion between the caller's Rust types and BSON
    /// that no server would do. [`Error::code_name`] gives MongoDB's name for it.
    ///
    /// ```
    /// use spillway::{Database, doc};
    ///
    /// let db = Database::open_in_memory()?;
    /// let users = db.collection::<spillway::bson::Document>("users");
    /// users.insert_one(doc! { "_id": 1 }).run()?;
    /// let error = users.insert_one(doc! { "_id": 1 }).run().unwrap_err();
    /// assert_eq!(error.code(), Some(11000));
    /// assert_eq!(error.code_name().as_deref(), Some("DuplicateKey"));
    /// # Ok::<(), spillway::Error>(())
    /// ```
    pub fn code(&self) -> Option<i32> {
        if self.code.is_some() {
            return self.code;
        }
        let code = match &*self.kind {
            ErrorKind::DuplicateKey { .. } => 11000,
            ErrorKind::WriteConflict { .. } => 112,
            ErrorKind::DocumentTooLarge { .. } | ErrorKind::LogicalDocumentTooLarge { .. } => 10334,
            ErrorKind::Aggregation(
                DocError::Expression { code, .. } | DocError::Pipeline { code, .. },
            )
            | ErrorKind::InvalidFilter(
                DocError::Expression { code, .. } | DocError::InvalidSchema { code, .. },
            ) => *code,
            ErrorKind::InvalidFilter(_) | ErrorKind::Aggregation(_) => codes::BAD_VALUE,
            ErrorKind::InvalidUpdate(error) => update_code(error),
            ErrorKind::InvalidDocument(error) => match error {
                DocError::MalformedBson { .. } => codes::INVALID_BSON,
                DocError::NestingTooDeep { .. } => codes::OVERFLOW,
                DocError::DocumentTooLarge { .. } => 10334,
                _ => codes::BAD_VALUE,
            },
            ErrorKind::InvalidArgument(error) => match error {
                DocError::Syntax { .. } => codes::FAILED_TO_PARSE,
                DocError::Expression { code, .. } | DocError::Pipeline { code, .. } => *code,
                _ => codes::BAD_VALUE,
            },
            ErrorKind::InvalidCollectionName { .. } => codes::INVALID_NAMESPACE,
            ErrorKind::InvalidIndex { .. } => codes::CANNOT_CREATE_INDEX,
            ErrorKind::ParallelArrays { .. } => codes::CANNOT_INDEX_PARALLEL_ARRAYS,
            ErrorKind::InvalidOptions { .. } => codes::INVALID_OPTIONS,
            ErrorKind::DocumentValidationFailure { .. } => codes::DOCUMENT_VALIDATION_FAILURE,
            ErrorKind::CollectionExists { .. } => codes::NAMESPACE_EXISTS,
            ErrorKind::CollectionNotFound { .. } => codes::NAMESPACE_NOT_FOUND,
            ErrorKind::NotSupportedOnView { .. } => codes::COMMAND_NOT_SUPPORTED_ON_VIEW,
            ErrorKind::InvalidView { .. } => codes::INVALID_OPTIONS,
            ErrorKind::CappedPositionLost { .. } => codes::CAPPED_POSITION_LOST,
            ErrorKind::IndexNotFound { .. } => codes::INDEX_NOT_FOUND,
            ErrorKind::Corruption { .. } => codes::DATA_CORRUPTION_DETECTED,
            ErrorKind::Storage(_) => codes::INTERNAL_ERROR,
            ErrorKind::Serialization { .. } => return None,
            ErrorKind::Pattern(error) => match error {
                spillway_pattern::PatternError::InvalidRecord { .. } => {
                    codes::DATA_CORRUPTION_DETECTED
                }
                _ => codes::BAD_VALUE,
            },
            ErrorKind::TransactionAborted { .. } => codes::NO_SUCH_TRANSACTION,
            ErrorKind::BulkWrite(failure) => {
                return failure.write_errors.values().next().and_then(Error::code);
            }
        };
        Some(code)
    }

    /// MongoDB's name for [`Error::code`] (its `codeName`): `DuplicateKey`, `WriteConflict`,
    /// `BadValue`... and, as a MongoDB server does for codes without a name, `Location` and
    /// the number (`Location16554`).
    pub fn code_name(&self) -> Option<Cow<'static, str>> {
        self.code().map(codes::name)
    }

    /// MongoDB's error labels for this error, which tell a client what it may do about it:
    /// `TransientTransactionError` (the whole transaction may be run again) for a
    /// [`ErrorKind::WriteConflict`] (112) and for the commit of a transaction an earlier
    /// failure doomed (251, NoSuchTransaction), as a MongoDB server labels them.
    pub fn labels(&self) -> Vec<&'static str> {
        match self.code() {
            Some(112 | codes::NO_SUCH_TRANSACTION) => vec!["TransientTransactionError"],
            _ => Vec::new(),
        }
    }

    /// Whether this is a write conflict: a transaction's commit lost to an earlier commit.
    pub fn is_write_conflict(&self) -> bool {
        matches!(*self.kind, ErrorKind::WriteConflict { .. })
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

    pub(crate) fn capped_position_lost(collection: &str) -> Error {
        Error::new(ErrorKind::CappedPositionLost {
            collection: collection.to_string(),
        })
    }

    pub(crate) fn invalid_options(collection: &str, message: impl Into<String>) -> Error {
        Error::new(ErrorKind::InvalidOptions {
            collection: collection.to_string(),
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
                "duplicate key in collection '{}', index '{}': {}",
                echo(collection),
                echo(index),
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
            ErrorKind::LogicalDocumentTooLarge {
                collection,
                id,
                size,
                fields,
            } => {
                let field = fields.first().map_or("field", String::as_str);
                write!(
                    f,
                    "BSONObjectTooLarge: document {} of collection '{collection}' is {size} bytes with its managed arrays ({}) whole, over the {}-byte limit of a document; read them in pages, e.g. projection {{{field}: {{$slice: [skip, n]}}}}, or leave them out",
                    abbreviate(&id.to_string(), MAX_SHOWN_CHARS),
                    fields.join(", "),
                    spillway_doc::size::MAX_DOCUMENT_SIZE,
                )?;
            }
            ErrorKind::InvalidCollectionName { name, reason } => {
                write!(f, "invalid collection name {:?}: {reason}", echo(name))?;
            }
            ErrorKind::InvalidIndex {
                collection,
                message,
            } => write!(
                f,
                "invalid index on collection '{}': {message}",
                echo(collection)
            )?,
            ErrorKind::ParallelArrays { collection, index } => write!(
                f,
                "cannot index parallel arrays: index '{}' of collection '{}' would need entries for two array fields of one document",
                echo(index),
                echo(collection)
            )?,
            ErrorKind::IndexNotFound { collection, index } => {
                write!(
                    f,
                    "index '{}' not found in collection '{}'",
                    echo(index),
                    echo(collection)
                )?;
            }
            ErrorKind::InvalidOptions {
                collection,
                message,
            } => write!(
                f,
                "invalid options on collection '{}': {message}",
                echo(collection)
            )?,
            ErrorKind::DocumentValidationFailure { collection, id, .. } => write!(
                f,
                "Document failed validation: collection '{}', document _id: {}",
                echo(collection),
                abbreviate(&id.to_string(), MAX_SHOWN_CHARS)
            )?,
            ErrorKind::CappedPositionLost { collection } => write!(
                f,
                "CollectionScan died due to position in capped collection '{}' being deleted",
                echo(collection)
            )?,
            ErrorKind::NotSupportedOnView { collection } => {
                write!(
                    f,
                    "Namespace {} is a view, not a collection",
                    echo(collection)
                )?;
            }
            ErrorKind::InvalidView { message, .. } => f.write_str(message)?,
            ErrorKind::CollectionExists { collection } => {
                write!(f, "collection '{}' already exists", echo(collection))?;
            }
            ErrorKind::CollectionNotFound { collection } => {
                write!(f, "collection '{}' does not exist", echo(collection))?;
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
            ErrorKind::BulkWrite(failure) => fmt::Display::fmt(failure, f)?,
            ErrorKind::WriteConflict { message } => {
                write!(
                    f,
                    "write conflict: {message}; nothing of this transaction was committed"
                )?;
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

/// MongoDB's code for an update that cannot be parsed or applied. `DocError` keeps no code
/// of its own for updates, so the variant and its message decide it.
fn update_code(error: &DocError) -> i32 {
    match error {
        DocError::UpdateFailed { field, message, .. }
            if field == "_id" && message.contains("immutable") =>
        {
            codes::IMMUTABLE_FIELD
        }
        DocError::UpdateFailed { operator, .. }
            if matches!(operator.as_str(), "$inc" | "$mul" | "$bit") =>
        {
            codes::TYPE_MISMATCH
        }
        DocError::UpdateFailed { message, .. } if message.contains("cannot create field") => {
            codes::PATH_NOT_VIABLE
        }
        DocError::UpdateFailed { .. } => codes::BAD_VALUE,
        // `{ $inc: { n: "x" } }`: MongoDB's "Cannot increment with non-numeric argument".
        DocError::InvalidUpdate { message }
            if (message.starts_with("$inc") || message.starts_with("$mul"))
                && message.contains("must be a number") =>
        {
            codes::TYPE_MISMATCH
        }
        DocError::InvalidUpdate { message } if message.contains(" conflicts with ") => {
            codes::CONFLICTING_UPDATE_OPERATORS
        }
        DocError::InvalidUpdate { message } if message.contains("starts with '$'") => {
            codes::DOLLAR_PREFIXED_FIELD_NAME
        }
        DocError::DocumentTooLarge { .. } => 10334,
        DocError::Expression { code, .. } | DocError::Pipeline { code, .. } => *code,
        _ => codes::FAILED_TO_PARSE,
    }
}

/// The operations of a bulk write that failed, and what the others did
/// ([`ErrorKind::BulkWrite`], from `Database::bulk_write`).
#[derive(Debug)]
#[non_exhaustive]
pub struct BulkWriteFailure {
    /// Each failed operation's error, by operation index (one at most when ordered).
    pub write_errors: BTreeMap<usize, Error>,
    /// What the operations that succeeded did.
    pub partial_result: BulkWriteResult,
}

impl std::fmt::Display for BulkWriteFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "bulk write: {} operation(s) failed",
            self.write_errors.len()
        )?;
        for (index, error) in self.write_errors.iter().take(3) {
            write!(f, "; operation {index}: {error}")?;
        }
        if self.write_errors.len() > 3 {
            write!(f, "; ...")?;
        }
        Ok(())
    }
}

/// MongoDB's error codes the facade gives, and their names (from MongoDB's
/// `src/mongo/base/error_codes.yml`).
pub(crate) mod codes {
    use std::borrow::Cow;

    pub(crate) const INTERNAL_ERROR: i32 = 1;
    pub(crate) const BAD_VALUE: i32 = 2;
    pub(crate) const FAILED_TO_PARSE: i32 = 9;
    pub(crate) const TYPE_MISMATCH: i32 = 14;
    pub(crate) const OVERFLOW: i32 = 15;
    pub(crate) const ILLEGAL_OPERATION: i32 = 20;
    pub(crate) const INVALID_BSON: i32 = 22;
    pub(crate) const NAMESPACE_NOT_FOUND: i32 = 26;
    pub(crate) const INDEX_NOT_FOUND: i32 = 27;
    pub(crate) const NAMESPACE_EXISTS: i32 = 48;
    pub(crate) const INVALID_OPTIONS: i32 = 72;
    pub(crate) const DOCUMENT_VALIDATION_FAILURE: i32 = 121;
    pub(crate) const CAPPED_POSITION_LOST: i32 = 136;
    pub(crate) const COMMAND_NOT_SUPPORTED: i32 = 115;
    pub(crate) const COMMAND_NOT_SUPPORTED_ON_VIEW: i32 = 166;
    pub(crate) const PATH_NOT_VIABLE: i32 = 28;
    pub(crate) const CONFLICTING_UPDATE_OPERATORS: i32 = 40;
    pub(crate) const DOLLAR_PREFIXED_FIELD_NAME: i32 = 52;
    pub(crate) const IMMUTABLE_FIELD: i32 = 66;
    pub(crate) const CANNOT_CREATE_INDEX: i32 = 67;
    pub(crate) const INVALID_NAMESPACE: i32 = 73;
    pub(crate) const INDEX_OPTIONS_CONFLICT: i32 = 85;
    pub(crate) const INDEX_KEY_SPECS_CONFLICT: i32 = 86;
    pub(crate) const CANNOT_INDEX_PARALLEL_ARRAYS: i32 = 171;
    pub(crate) const NO_SUCH_TRANSACTION: i32 = 251;
    pub(crate) const NO_MATCHING_DOCUMENT: i32 = 47;
    pub(crate) const INVALID_RESUME_TOKEN: i32 = 260;
    pub(crate) const CHANGE_STREAM_FATAL_ERROR: i32 = 280;
    pub(crate) const CHANGE_STREAM_HISTORY_LOST: i32 = 286;
    pub(crate) const DATA_CORRUPTION_DETECTED: i32 = 301;

    /// Codes and names; a code missing here is named `Location<code>`, as MongoDB names the
    /// codes of its assertions.
    const NAMES: &[(i32, &str)] = &[
        (1, "InternalError"),
        (2, "BadValue"),
        (4, "NoSuchKey"),
        (6, "HostUnreachable"),
        (7, "HostNotFound"),
        (9, "FailedToParse"),
        (13, "Unauthorized"),
        (14, "TypeMismatch"),
        (15, "Overflow"),
        (16, "InvalidLength"),
        (17, "ProtocolError"),
        (20, "IllegalOperation"),
        (22, "InvalidBSON"),
        (24, "LockTimeout"),
        (26, "NamespaceNotFound"),
        (27, "IndexNotFound"),
        (28, "PathNotViable"),
        (29, "NonExistentPath"),
        (30, "InvalidPath"),
        (40, "ConflictingUpdateOperators"),
        (43, "CursorNotFound"),
        (47, "NoMatchingDocument"),
        (48, "NamespaceExists"),
        (50, "MaxTimeMSExpired"),
        (52, "DollarPrefixedFieldName"),
        (53, "InvalidIdField"),
        (54, "NotSingleValueField"),
        (55, "InvalidDBRef"),
        (56, "EmptyFieldName"),
        (57, "DottedFieldName"),
        (59, "CommandNotFound"),
        (63, "StaleShardVersion"),
        (64, "WriteConcernFailed"),
        (66, "ImmutableField"),
        (67, "CannotCreateIndex"),
        (68, "IndexAlreadyExists"),
        (72, "InvalidOptions"),
        (73, "InvalidNamespace"),
        (79, "UnknownReplWriteConcern"),
        (85, "IndexOptionsConflict"),
        (86, "IndexKeySpecsConflict"),
        (89, "NetworkTimeout"),
        (91, "ShutdownInProgress"),
        (100, "UnsatisfiableWriteConcern"),
        (112, "WriteConflict"),
        (115, "CommandNotSupported"),
        (117, "ConflictingOperationInProgress"),
        (121, "DocumentValidationFailure"),
        (133, "FailedToSatisfyReadPreference"),
        (134, "ReadConcernMajorityNotAvailableYet"),
        (136, "CappedPositionLost"),
        (139, "JSInterpreterFailure"),
        (146, "ExceededMemoryLimit"),
        (149, "ViewDepthLimitExceeded"),
        (150, "GraphContainsCycle"),
        (157, "FailPointSetFailed"),
        (166, "CommandNotSupportedOnView"),
        (167, "OptionNotSupportedOnView"),
        (168, "InvalidPipelineOperator"),
        (171, "CannotIndexParallelArrays"),
        (189, "PrimarySteppedDown"),
        (197, "InvalidIndexSpecificationOption"),
        (225, "TransactionTooOld"),
        (234, "RetryChangeStream"),
        (241, "ConversionFailure"),
        (251, "NoSuchTransaction"),
        (256, "TransactionCommitted"),
        (260, "InvalidResumeToken"),
        (262, "ExceededTimeLimit"),
        (263, "OperationNotSupportedInTransaction"),
        (267, "PreparedTransactionInProgress"),
        (280, "ChangeStreamFatalError"),
        (286, "ChangeStreamHistoryLost"),
        (291, "NoQueryExecutionPlans"),
        (292, "CursorInUse"),
        (301, "DataCorruptionDetected"),
        (322, "APIVersionError"),
        (323, "APIStrictError"),
        (325, "APIDeprecationError"),
        (9001, "SocketException"),
        (10107, "NotWritablePrimary"),
        (10334, "BSONObjectTooLarge"),
        (11000, "DuplicateKey"),
        (11600, "InterruptedAtShutdown"),
        (11601, "Interrupted"),
        (11602, "InterruptedDueToReplStateChange"),
        (13388, "StaleConfig"),
        (13435, "NotPrimaryNoSecondaryOk"),
        (13436, "NotPrimaryOrSecondary"),
    ];

    /// MongoDB's `codeName` for `code`.
    pub(crate) fn name(code: i32) -> Cow<'static, str> {
        match NAMES.binary_search_by_key(&code, |&(known, _)| known) {
            Ok(position) => Cow::Borrowed(NAMES[position].1),
            Err(_) => Cow::Owned(format!("Location{code}")),
        }
    }

    #[cfg(test)]
    mod tests {
        use super::*;

        #[test]
        fn names_are_sorted_by_code_and_unknown_codes_are_locations() {
            assert!(NAMES.windows(2).all(|pair| pair[0].0 < pair[1].0));
            assert_eq!(name(112), "WriteConflict");
            assert_eq!(name(16554), "Location16554");
        }
    }
}
