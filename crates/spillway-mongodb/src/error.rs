//! [`Error`]: what the pattern layer refuses, what the deployment answers (with MongoDB's code
//! and labels intact), and what this crate finds wrong in the records it keeps.

use std::fmt;

use mongodb::error::{ErrorKind, WriteFailure};
use spillway_pattern::PatternError;

/// An error of the MongoDB backend.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum Error {
    /// The pattern layer refused a policy, a write or an input, or found side documents that
    /// break a policy.
    Pattern(PatternError),
    /// The driver or the deployment failed: the server's error (its code and labels are in
    /// [`Error::code`] and [`Error::has_label`]), a network or server-selection failure.
    Driver(mongodb::error::Error),
    /// A replacement that holds update operators, or an update without them (the driver's
    /// own refusal, made before anything is sent).
    InvalidArgument {
        /// What was wrong.
        message: String,
    },
    /// Another operation on the same collections is in progress (a rename recorded in the
    /// policy document): MongoDB's 117 ConflictingOperationInProgress.
    Conflict {
        /// What is in progress, and how to finish it.
        message: String,
    },
    /// A retryable write's statement whose record holds a newer transaction number than
    /// the retry's (MongoDB's 225 TransactionTooOld).
    TransactionTooOld {
        /// The retry's transaction number.
        txn_number: i64,
        /// The number recorded for the statement.
        recorded: i64,
    },
}

impl Error {
    /// MongoDB's error code: the server's (11000 for a duplicate key, 112 for a write
    /// conflict...), or 11000 for a duplicate `_id` the pattern layer found first; `None` for
    /// errors that have none (network failures, the pattern layer's refusals).
    pub fn code(&self) -> Option<i32> {
        match self {
            Error::Driver(error) => server_code(error),
            Error::Pattern(PatternError::DuplicateId { .. }) => Some(11000),
            Error::Conflict { .. } => Some(CONFLICTING_OPERATION_IN_PROGRESS),
            Error::TransactionTooOld { .. } => Some(225),
            _ => None,
        }
    }

    /// Whether the server or the driver labelled the error `label`
    /// (`TransientTransactionError`, `UnknownTransactionCommitResult`...).
    pub fn has_label(&self, label: &str) -> bool {
        matches!(self, Error::Driver(error) if error.contains_label(label))
    }

    /// Whether a transaction that failed with this error may be run again from the start.
    pub(crate) fn is_transient(&self) -> bool {
        self.has_label(mongodb::error::TRANSIENT_TRANSACTION_ERROR)
    }

    /// Whether a commit that failed with this error may be sent again: its outcome is unknown
    /// (a network error, a failover), and it did not fail by running out of time.
    pub(crate) fn is_unknown_commit(&self) -> bool {
        self.has_label(mongodb::error::UNKNOWN_TRANSACTION_COMMIT_RESULT) && self.code() != Some(50)
    }
}

/// MongoDB's 117 ConflictingOperationInProgress.
pub(crate) const CONFLICTING_OPERATION_IN_PROGRESS: i32 = 117;

/// The code of the server's answer inside a driver error, wherever the driver put it.
pub(crate) fn server_code(error: &mongodb::error::Error) -> Option<i32> {
    match error.kind.as_ref() {
        ErrorKind::Command(command) => Some(command.code),
        ErrorKind::Write(WriteFailure::WriteError(write)) => Some(write.code),
        ErrorKind::Write(WriteFailure::WriteConcernError(concern)) => Some(concern.code),
        ErrorKind::InsertMany(insert_many) => insert_many
            .write_errors
            .as_ref()
            .and_then(|errors| errors.first())
            .map(|error| error.code)
            .or_else(|| {
                insert_many
                    .write_concern_error
                    .as_ref()
                    .map(|concern| concern.code)
            }),
        _ => None,
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Pattern(error) => error.fmt(f),
            Error::Driver(error) => write!(f, "MongoDB: {error}"),
            Error::InvalidArgument { message } | Error::Conflict { message } => {
                f.write_str(message)
            }
            Error::TransactionTooOld {
                txn_number,
                recorded,
            } => write!(
                f,
                "Retryable write with txnNumber {txn_number} is prohibited on this statement: \
                 a newer txnNumber {recorded} has already run it"
            ),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        // Both messages include their cause's text: forward the cause's own source, so the
        // chain says each cause once.
        match self {
            Error::Pattern(error) => error.source(),
            Error::Driver(error) => error.source(),
            Error::InvalidArgument { .. }
            | Error::Conflict { .. }
            | Error::TransactionTooOld { .. } => None,
        }
    }
}

impl From<PatternError> for Error {
    fn from(error: PatternError) -> Self {
        Error::Pattern(error)
    }
}

impl From<mongodb::error::Error> for Error {
    fn from(error: mongodb::error::Error) -> Self {
        Error::Driver(error)
    }
}

/// The crate's result.
pub type Result<T, E = Error> = std::result::Result<T, E>;
