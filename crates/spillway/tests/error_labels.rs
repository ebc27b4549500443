//! The error labels the command layer computes for a reply, as a MongoDB server does since 4.4:
//! drivers retry a write, a transaction or a commit only on these labels, so a missing one
//! loses a retry and a spurious one retries what must not be.

use spillway::bson::Document;
use spillway::command::error_labels;
use spillway::doc;

fn check(command: &Document, reply: &Document, expected: &[&str]) {
    assert_eq!(
        error_labels(command, reply),
        expected,
        "command {command}, reply {reply}"
    );
}

fn error(code: i32) -> Document {
    doc! { "ok": 0.0, "code": code, "errmsg": "failed" }
}

fn write_concern_error(code: i32) -> Document {
    doc! { "ok": 1.0, "n": 1, "writeConcernError": { "code": code, "errmsg": "failed" } }
}

#[test]
fn retryable_writes_get_retryable_write_error_on_retryable_codes_only() {
    let retryable = doc! { "insert": "c", "lsid": { "id": 1 }, "txnNumber": 1_i64 };
    for code in [
        6, 7, 89, 91, 189, 262, 9001, 10107, 11600, 11602, 13435, 13436,
    ] {
        check(&retryable, &error(code), &["RetryableWriteError"]);
    }
    check(&retryable, &error(11000), &[]);
    check(&retryable, &error(11601), &[]);
    check(
        &retryable,
        &write_concern_error(91),
        &["RetryableWriteError"],
    );
    check(&retryable, &write_concern_error(64), &[]);
    check(&retryable, &doc! { "ok": 1.0, "n": 1 }, &[]);
    // Without a transaction number a write is not retried: no label.
    check(&doc! { "insert": "c" }, &error(91), &[]);
}

#[test]
fn transaction_commands_get_transient_transaction_error() {
    let in_transaction =
        doc! { "insert": "c", "lsid": { "id": 1 }, "txnNumber": 1_i64, "autocommit": false };
    for code in [10107, 112, 251, 91] {
        check(
            &in_transaction,
            &error(code),
            &["TransientTransactionError"],
        );
    }
    check(&in_transaction, &error(50), &[]);
    check(&in_transaction, &error(11000), &[]);
    // A write concern error inside a transaction is not transient.
    check(&in_transaction, &write_concern_error(91), &[]);
}

#[test]
fn commit_gets_unknown_transaction_commit_result_when_its_outcome_is_unknown() {
    let commit = doc! {
        "commitTransaction": 1, "lsid": { "id": 1 }, "txnNumber": 1_i64, "autocommit": false,
    };
    check(
        &commit,
        &error(91),
        &["RetryableWriteError", "UnknownTransactionCommitResult"],
    );
    check(&commit, &error(251), &["TransientTransactionError"]);
    check(&commit, &error(267), &["TransientTransactionError"]);
    check(&commit, &error(50), &["UnknownTransactionCommitResult"]);
    check(
        &commit,
        &write_concern_error(64),
        &["UnknownTransactionCommitResult"],
    );
    check(&commit, &write_concern_error(100), &[]);
    check(&commit, &write_concern_error(79), &[]);
    let abort = doc! {
        "abortTransaction": 1, "lsid": { "id": 1 }, "txnNumber": 1_i64, "autocommit": false,
    };
    check(&abort, &error(91), &["RetryableWriteError"]);
}
