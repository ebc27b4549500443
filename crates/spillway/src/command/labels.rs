//! The error labels a MongoDB server (4.4 and later) computes for a reply from the command's
//! session fields and the reply's codes, so that drivers retry what they may:
//!
//! - `RetryableWriteError`: a retryable error code (or write concern error code) answering a
//!   retryable write (`txnNumber` without `autocommit`) or a transaction's
//!   `commitTransaction` / `abortTransaction`;
//! - `TransientTransactionError`: a command of a transaction (`autocommit` present) that
//!   failed with a transient code (a retryable one, 112 WriteConflict, 251 NoSuchTransaction,
//!   the snapshot errors; on commit or abort only 251 without a write concern error);
//! - `UnknownTransactionCommitResult`: a `commitTransaction` whose outcome is unknown (a
//!   retryable error, a write concern error other than 100 and 79, 50 MaxTimeMSExpired);
//! - `NonResumableChangeStreamError`: a change stream error a driver must not resume after
//!   (280 ChangeStreamFatalError, 286 ChangeStreamHistoryLost);
//! - `ResumableChangeStreamError`: an error of a change stream's `getMore` after its cursor
//!   was checked out, with a code a driver resumes after ([`is_resumable_change_stream_code`]).
//!   Only the code that read the cursor knows it is a change stream's, so the cursor table
//!   (and the server's `failGetMoreAfterCursorCheckout` fail point) add it, not this module's
//!   [`error_labels`].
//!
//! This module must never decide whether a command succeeds; it only labels the reply it is
//! given. Labels already in the reply are kept.

use bson::{Bson, Document};

/// MongoDB's `RetriableError` and `ShutdownError` categories: HostUnreachable,
/// HostNotFound, NetworkTimeout, ShutdownInProgress, ReadConcernMajorityNotAvailableYet,
/// PrimarySteppedDown, ExceededTimeLimit, SocketException, NotWritablePrimary,
/// InterruptedAtShutdown, InterruptedDueToReplStateChange, NotPrimaryNoSecondaryOk,
/// NotPrimaryOrSecondary.
const RETRYABLE_CODES: &[i32] = &[
    6, 7, 89, 91, 134, 189, 262, 9001, 10107, 11600, 11602, 13435, 13436,
];

/// Codes after which a transaction may be run again from the start, besides the retryable
/// ones: WriteConflict, LockTimeout, SnapshotUnavailable, SnapshotTooOld, StaleChunkHistory,
/// PreparedTransactionInProgress, MigrationConflict.
const TRANSIENT_CODES: &[i32] = &[112, 24, 246, 239, 249, 267, 300];

/// MongoDB's `NonResumableChangeStreamError` category: ChangeStreamFatalError (280),
/// ChangeStreamHistoryLost (286). A driver never resumes a change stream after these.
const NON_RESUMABLE_CHANGE_STREAM_CODES: &[i32] = &[280, 286];

/// The codes after which MongoDB labels a change stream's `getMore` error
/// `ResumableChangeStreamError` (its retriable, network and stale-routing categories,
/// RetryChangeStream and FailedToSatisfyReadPreference): the change streams specification's
/// list of resumable codes for servers before 4.4, which later servers turned into the label.
const RESUMABLE_CHANGE_STREAM_CODES: &[i32] = &[
    6, 7, 63, 89, 91, 133, 150, 189, 234, 262, 9001, 10107, 11600, 11602, 13388, 13435, 13436,
];

/// The label of a change stream error a driver resumes after.
pub const RESUMABLE_CHANGE_STREAM_ERROR: &str = "ResumableChangeStreamError";

/// Whether a change stream's `getMore` failing with `code` is labelled
/// [`RESUMABLE_CHANGE_STREAM_ERROR`].
pub fn is_resumable_change_stream_code(code: i32) -> bool {
    RESUMABLE_CHANGE_STREAM_CODES.contains(&code)
}

/// 251 NoSuchTransaction.
const NO_SUCH_TRANSACTION: i32 = 251;

/// Whether a code is one a driver may retry a write after.
pub fn is_retryable_code(code: i32) -> bool {
    RETRYABLE_CODES.contains(&code)
}

/// Adds to `reply` (the answer to `command`) the error labels MongoDB's server would give
/// it, keeping those it has. A reply without an error code or write concern error gets none.
pub fn add_error_labels(command: &Document, reply: &mut Document) {
    let computed = error_labels(command, reply);
    if computed.is_empty() {
        return;
    }
    let mut labels = match reply.get("errorLabels") {
        Some(Bson::Array(labels)) => labels.clone(),
        _ => Vec::new(),
    };
    for label in computed {
        let label = Bson::from(label);
        if !labels.contains(&label) {
            labels.push(label);
        }
    }
    reply.insert("errorLabels", labels);
}

/// The labels MongoDB's server computes for `reply`, the answer to `command`.
pub fn error_labels(command: &Document, reply: &Document) -> Vec<&'static str> {
    let name = command.keys().next().map_or("", String::as_str);
    let failed = reply.get("ok").is_some_and(|ok| !is_true(ok));
    let code = if failed {
        reply.get("code").and_then(as_i32)
    } else {
        None
    };
    let write_concern_code = reply
        .get_document("writeConcernError")
        .ok()
        .and_then(|error| error.get("code"))
        .and_then(as_i32);
    let has_txn_number = command.contains_key("txnNumber");
    let in_transaction = has_txn_number && command.contains_key("autocommit");
    let commit_or_abort = matches!(name, "commitTransaction" | "abortTransaction");
    let mut labels = Vec::new();
    let retryable_write = has_txn_number && !in_transaction;
    let retryable_error = (retryable_write || (in_transaction && commit_or_abort))
        && (code.is_some_and(is_retryable_code)
            || write_concern_code.is_some_and(is_retryable_code));
    if retryable_error {
        labels.push("RetryableWriteError");
    }
    if in_transaction && let Some(code) = code {
        let transient = TRANSIENT_CODES.contains(&code)
            || if commit_or_abort {
                code == NO_SUCH_TRANSACTION && write_concern_code.is_none()
            } else {
                is_retryable_code(code) || code == NO_SUCH_TRANSACTION
            };
        if transient {
            labels.push("TransientTransactionError");
        }
    }
    if code.is_some_and(|code| NON_RESUMABLE_CHANGE_STREAM_CODES.contains(&code)) {
        labels.push("NonResumableChangeStreamError");
    }
    if in_transaction && name == "commitTransaction" {
        let unknown = retryable_error
            || code == Some(50)
            || write_concern_code.is_some_and(|code| !matches!(code, 100 | 79));
        if unknown {
            labels.push("UnknownTransactionCommitResult");
        }
    }
    labels
}

fn is_true(value: &Bson) -> bool {
    match value {
        Bson::Double(number) => *number != 0.0,
        Bson::Int32(number) => *number != 0,
        Bson::Int64(number) => *number != 0,
        Bson::Boolean(flag) => *flag,
        _ => false,
    }
}

fn as_i32(value: &Bson) -> Option<i32> {
    match value {
        Bson::Int32(number) => Some(*number),
        Bson::Int64(number) => i32::try_from(*number).ok(),
        Bson::Double(number) if number.fract() == 0.0 => Some(*number as i32),
        _ => None,
    }
}
