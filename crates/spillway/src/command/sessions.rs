//! Logical sessions (`lsid`): retryable writes and transactions that live across requests.
//!
//! - A write with a `txnNumber` outside a transaction is a retryable write: its reply is kept
//!   with the session, and the same `txnNumber` again (a driver retrying after a network
//!   error) gets that reply without writing twice.
//! - `startTransaction: true` opens a [`Transaction`] handle on the current snapshot; later
//!   commands with `autocommit: false` and the same `txnNumber` run in it, and
//!   `commitTransaction` / `abortTransaction` end it. A command that fails inside it aborts
//!   it, as MongoDB does; a transaction idle for [`TRANSACTION_TIMEOUT`] is aborted by
//!   [`SessionTable::reap`]. While a command runs, its session's handle is taken out of the
//!   table, so no lock is held across the command and other sessions go on.
//!
//! - A read with `readConcern: { level: "snapshot" }` outside a transaction (`find`,
//!   `aggregate`, `distinct`) reads a snapshot taken for it and says when in `atClusterTime`;
//!   the session keeps that snapshot (a read-only [`Transaction`] handle) for
//!   [`SNAPSHOT_WINDOW`], so that its later reads `atClusterTime` that time see the same state.
//!
//! This module must never execute a command itself: the dispatcher hands it a closure.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bson::{Bson, Document, Timestamp, doc};

use super::error::{CommandError, CommandResult};
use super::{Commands, Context, lock};
use crate::Transaction;

/// How long a transaction may stay without an operation before it is aborted (MongoDB's
/// `transactionLifetimeLimitSeconds` is 60).
pub(crate) const TRANSACTION_TIMEOUT: Duration = Duration::from_secs(60);

/// How long a session may stay unused before it is forgotten (MongoDB's 30 minutes).
pub(crate) const SESSION_TIMEOUT: Duration = Duration::from_secs(30 * 60);
/// How often the durable records of committed transactions are pruned.
pub(crate) const RECORD_PRUNE_INTERVAL: Duration = Duration::from_secs(10 * 60);

/// How long a session keeps the snapshot of its snapshot reads after its last use
/// (MongoDB's `minSnapshotHistoryWindowInSeconds` is 300).
pub(crate) const SNAPSHOT_WINDOW: Duration = Duration::from_secs(300);

/// A session's identity: the `lsid` document's bytes.
pub(crate) type SessionKey = Vec<u8>;

/// The session fields of a command.
pub(crate) struct SessionArgs {
    lsid: Option<SessionKey>,
    txn_number: Option<i64>,
    autocommit: Option<bool>,
    start_transaction: bool,
}

/// How a command relates to its session.
pub(crate) enum TxnState {
    /// No session, or a session without a transaction number.
    None,
    /// A retryable write (or a read that carries a transaction number).
    Retryable { lsid: SessionKey, txn_number: i64 },
    /// A command of a multi-document transaction.
    InTransaction {
        lsid: SessionKey,
        txn_number: i64,
        start: bool,
    },
}

impl SessionArgs {
    pub(crate) fn read(command: &Document) -> CommandResult<SessionArgs> {
        let lsid = match command.get("lsid") {
            None => None,
            Some(Bson::Document(lsid)) => Some(
                lsid.to_vec()
                    .map_err(|error| CommandError::bad_value(format!("lsid: {error}")))?,
            ),
            Some(_) => return Err(CommandError::type_mismatch("'lsid' must be a document")),
        };
        let txn_number = match command.get("txnNumber") {
            None => None,
            Some(Bson::Int64(number)) => Some(*number),
            Some(Bson::Int32(number)) => Some(i64::from(*number)),
            Some(_) => return Err(CommandError::type_mismatch("'txnNumber' must be a long")),
        };
        let autocommit = match command.get("autocommit") {
            None => None,
            Some(Bson::Boolean(value)) => Some(*value),
            Some(_) => return Err(CommandError::type_mismatch("'autocommit' must be a bool")),
        };
        let start_transaction = match command.get("startTransaction") {
            None => false,
            Some(Bson::Boolean(value)) => *value,
            Some(_) => {
                return Err(CommandError::type_mismatch(
                    "'startTransaction' must be a bool",
                ));
            }
        };
        Ok(SessionArgs {
            lsid,
            txn_number,
            autocommit,
            start_transaction,
        })
    }

    /// The session id, if the command has one.
    pub(crate) fn lsid(&self) -> Option<&SessionKey> {
        self.lsid.as_ref()
    }

    pub(crate) fn transaction_state(self, command: &str) -> CommandResult<TxnState> {
        match (self.lsid, self.txn_number, self.autocommit) {
            (_, None, Some(_)) => Err(CommandError::bad_value(
                "'autocommit' requires a 'txnNumber'",
            )),
            (None, Some(_), _) => Err(CommandError::new(
                50768,
                "a 'txnNumber' requires a session id ('lsid')",
            )),
            (_, _, Some(true)) => Err(CommandError::bad_value(
                "'autocommit' may only be given as false",
            )),
            (Some(lsid), Some(txn_number), Some(false)) => Ok(TxnState::InTransaction {
                lsid,
                txn_number,
                start: self.start_transaction,
            }),
            (_, _, None) if self.start_transaction => Err(CommandError::bad_value(
                "'startTransaction' requires 'autocommit: false'",
            )),
            (Some(_) | None, None, None)
                if matches!(command, "commitTransaction" | "abortTransaction") =>
            {
                Err(CommandError::new(
                    50768,
                    format!("{command} must be run within a transaction"),
                ))
            }
            (Some(lsid), Some(txn_number), None) => Ok(TxnState::Retryable { lsid, txn_number }),
            _ => Ok(TxnState::None),
        }
    }
}

/// How a session's last transaction ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Ended {
    Committed,
    Aborted,
}

#[derive(Default)]
struct Session {
    last_used: Option<Instant>,
    /// The highest `txnNumber` seen.
    txn_number: i64,
    /// The open transaction of `txn_number`: `None` while a command runs in it (taken out),
    /// or when there is none.
    open: Option<Transaction>,
    /// Whether a transaction of `txn_number` was started and has not ended.
    in_progress: bool,
    /// The outcome of the transaction of `txn_number`, once ended.
    ended: Option<Ended>,
    /// The reply of the retryable write of `txn_number`.
    retry_reply: Option<Document>,
    /// Held while a retryable write of this session runs: MongoDB's session checkout, so
    /// that a retry arriving while the first attempt still runs (its client timed out)
    /// waits for it and gets its reply instead of writing a second time.
    retry_checkout: Arc<Mutex<()>>,
    /// When the open transaction last ran a command.
    transaction_used: Option<Instant>,
    /// The snapshot of the session's snapshot reads, with its cluster time; `None` while a
    /// read runs in it (taken out), or when there is none.
    snapshot: Option<(Timestamp, Transaction)>,
    /// When the snapshot was last read.
    snapshot_used: Option<Instant>,
}

/// Sessions by id.
#[derive(Default)]
pub(crate) struct SessionTable {
    sessions: HashMap<SessionKey, Session>,
}

impl std::fmt::Debug for SessionTable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SessionTable")
            .field("sessions", &self.sessions.len())
            .finish()
    }
}

impl SessionTable {
    fn session(&mut self, lsid: &SessionKey) -> &mut Session {
        let session = self.sessions.entry(lsid.clone()).or_default();
        session.last_used = Some(Instant::now());
        session
    }

    /// The sessions this server holds, as `$listLocalSessions` reports them: each `lsid`
    /// document with how long ago it was last used.
    pub(crate) fn local_sessions(&self, now: Instant) -> Vec<(Document, Duration)> {
        self.sessions
            .iter()
            .filter_map(|(key, session)| {
                let lsid = Document::from_reader(key.as_slice()).ok()?;
                let idle = session
                    .last_used
                    .map_or(Duration::ZERO, |used| now.saturating_duration_since(used));
                Some((lsid, idle))
            })
            .collect()
    }

    /// Aborts transactions idle for [`TRANSACTION_TIMEOUT`] and forgets sessions unused for
    /// 30 minutes.
    pub(crate) fn reap(&mut self, now: Instant) {
        for session in self.sessions.values_mut() {
            let snapshot_idle = session
                .snapshot_used
                .is_some_and(|used| now.duration_since(used) >= SNAPSHOT_WINDOW);
            if snapshot_idle && let Some((_, snapshot)) = session.snapshot.take() {
                snapshot.rollback();
            }
            let idle = session
                .transaction_used
                .is_some_and(|used| now.duration_since(used) >= TRANSACTION_TIMEOUT);
            if idle && session.open.is_some() {
                if let Some(transaction) = session.open.take() {
                    transaction.rollback();
                }
                session.in_progress = false;
                session.ended = Some(Ended::Aborted);
            }
        }
        self.sessions.retain(|_, session| {
            session.in_progress
                || session
                    .last_used
                    .is_none_or(|used| now.duration_since(used) < SESSION_TIMEOUT)
        });
    }
}

fn too_old(txn_number: i64, current: i64) -> CommandError {
    CommandError::new(
        225,
        format!(
            "cannot start transaction {txn_number} on session because a newer transaction {current} has already started"
        ),
    )
}

fn no_such_transaction(txn_number: i64) -> CommandError {
    CommandError::new(
        251,
        format!(
            "Given transaction number {txn_number} does not match any in-progress transactions"
        ),
    )
    .label("TransientTransactionError")
}

/// Runs a retryable write once per `txn_number`: a retry gets the first reply.
pub(crate) fn retryable(
    commands: &Commands,
    lsid: &SessionKey,
    txn_number: i64,
    run: impl FnOnce() -> CommandResult,
) -> CommandResult {
    let checkout = Arc::clone(&lock(&commands.sessions).session(lsid).retry_checkout);
    let _checked_out = lock(&checkout);
    {
        let mut sessions = lock(&commands.sessions);
        let session = sessions.session(lsid);
        if txn_number < session.txn_number {
            return Err(too_old(txn_number, session.txn_number));
        }
        if txn_number == session.txn_number {
            if let Some(reply) = &session.retry_reply {
                return Ok(reply.clone());
            }
            if session.in_progress || session.ended.is_some() {
                return Err(CommandError::new(
                    50911,
                    format!(
                        "transaction number {txn_number} was used by a transaction, not a retryable write"
                    ),
                ));
            }
        }
    }
    let reply = run()?;
    let mut sessions = lock(&commands.sessions);
    let session = sessions.session(lsid);
    if txn_number >= session.txn_number {
        abandon(session);
        session.txn_number = txn_number;
        session.retry_reply = Some(reply.clone());
    }
    Ok(reply)
}

/// A `find`, `aggregate` or `distinct` with read concern `snapshot` outside a transaction:
/// without `atClusterTime`, on a snapshot taken now (kept by the session, if any, for its
/// later reads); with it, on the session's snapshot of that time, or 239 SnapshotTooOld when
/// the session has none (Spillway keeps no history of older states). The reply says which
/// snapshot it read in `atClusterTime` (in `cursor` for a cursor reply, as MongoDB does).
pub(crate) fn snapshot_read(
    commands: &Commands,
    lsid: Option<&SessionKey>,
    at_cluster_time: Option<Timestamp>,
    run: impl FnOnce(Option<&mut Transaction>) -> CommandResult,
) -> CommandResult {
    let (time, mut snapshot) = match (at_cluster_time, lsid) {
        (None, _) => (
            commands.cluster_time(),
            commands.database.start_transaction()?,
        ),
        (Some(at), Some(lsid)) => {
            let mut sessions = lock(&commands.sessions);
            let session = sessions.session(lsid);
            match session.snapshot.take() {
                Some((time, snapshot)) if time == at => (time, snapshot),
                kept => {
                    session.snapshot = kept;
                    return Err(snapshot_too_old(at));
                }
            }
        }
        (Some(at), None) => return Err(snapshot_too_old(at)),
    };
    let outcome = run(Some(&mut snapshot));
    match lsid {
        Some(lsid) => {
            let mut sessions = lock(&commands.sessions);
            let session = sessions.session(lsid);
            if let Some((_, replaced)) = session.snapshot.replace((time, snapshot)) {
                replaced.rollback();
            }
            session.snapshot_used = Some(Instant::now());
        }
        None => snapshot.rollback(),
    }
    let mut reply = outcome?;
    match reply.get_mut("cursor") {
        Some(Bson::Document(cursor)) => {
            cursor.insert("atClusterTime", time);
        }
        _ => {
            reply.insert("atClusterTime", time);
        }
    }
    Ok(reply)
}

fn snapshot_too_old(at: Timestamp) -> CommandError {
    CommandError::new(
        239,
        format!(
            "Read timestamp {at} is older than the oldest available timestamp: this session holds no snapshot of that time"
        ),
    )
}

/// Forgets the session's state for its current transaction number, aborting an open
/// transaction.
fn abandon(session: &mut Session) {
    if let Some(transaction) = session.open.take() {
        transaction.rollback();
    }
    session.in_progress = false;
    session.ended = None;
    session.retry_reply = None;
    session.transaction_used = None;
}

/// Runs command `name` of the transaction `txn_number` of session `lsid` (starting it when
/// `start`), or ends it (`commitTransaction`, `abortTransaction`).
pub(crate) fn in_transaction(
    commands: &Commands,
    lsid: &SessionKey,
    txn_number: i64,
    start: bool,
    name: &str,
    run: impl FnOnce(Option<&mut Transaction>) -> CommandResult,
) -> CommandResult {
    let mut transaction = {
        let mut sessions = lock(&commands.sessions);
        let session = sessions.session(lsid);
        if txn_number < session.txn_number {
            return Err(too_old(txn_number, session.txn_number));
        }
        if start {
            if txn_number == session.txn_number
                && (session.in_progress || session.ended.is_some() || session.retry_reply.is_some())
            {
                return Err(CommandError::new(
                    251,
                    format!("transaction {txn_number} has already been started on this session"),
                ));
            }
            abandon(session);
            session.txn_number = txn_number;
            session.open = Some(commands.database.start_transaction()?);
            session.in_progress = true;
        } else if txn_number > session.txn_number {
            // A commit or abort retried after a restart: the session is gone from memory, but
            // its committed transaction left a durable record.
            let committed = matches!(name, "commitTransaction" | "abortTransaction")
                && commands
                    .database
                    .session_record(lsid)?
                    .is_some_and(|record| record.get_i64("txnNumber").ok() == Some(txn_number));
            if !committed {
                return Err(no_such_transaction(txn_number));
            }
            abandon(session);
            session.txn_number = txn_number;
            session.ended = Some(Ended::Committed);
        }
        match (name, session.ended) {
            ("commitTransaction", Some(Ended::Committed)) => return Ok(doc! { "ok": 1.0 }),
            ("abortTransaction", Some(Ended::Committed)) => {
                return Err(CommandError::new(
                    256,
                    "Cannot abort a transaction that has been committed",
                ));
            }
            ("abortTransaction", Some(Ended::Aborted)) => {
                return Err(no_such_transaction(txn_number));
            }
            _ => {}
        }
        if !session.in_progress {
            return Err(no_such_transaction(txn_number));
        }
        let Some(transaction) = session.open.take() else {
            return Err(
                CommandError::new(112, "another command of this transaction is running")
                    .label("TransientTransactionError"),
            );
        };
        session.transaction_used = Some(Instant::now());
        transaction
    };
    let end = |ended: Ended| {
        let mut sessions = lock(&commands.sessions);
        let session = sessions.session(lsid);
        if session.txn_number == txn_number {
            session.in_progress = false;
            session.ended = Some(ended);
        }
    };
    match name {
        "commitTransaction" => match transaction
            .record_session(lsid, txn_number)
            .and_then(|()| transaction.commit())
        {
            Ok(()) => {
                end(Ended::Committed);
                Ok(doc! { "ok": 1.0 })
            }
            Err(error) => {
                end(Ended::Aborted);
                Err(CommandError::from(error))
            }
        },
        "abortTransaction" => {
            transaction.rollback();
            end(Ended::Aborted);
            Ok(doc! { "ok": 1.0 })
        }
        _ => {
            let outcome = run(Some(&mut transaction));
            let failed = match &outcome {
                Err(_) => true,
                Ok(reply) => {
                    reply.contains_key("writeErrors")
                        || reply.get_i32("nErrors").is_ok_and(|errors| errors > 0)
                }
            };
            if failed {
                transaction.rollback();
                end(Ended::Aborted);
                return outcome;
            }
            let mut sessions = lock(&commands.sessions);
            let session = sessions.session(lsid);
            if session.txn_number == txn_number && session.in_progress {
                session.open = Some(transaction);
            } else {
                transaction.rollback();
            }
            outcome
        }
    }
}

/// `commitTransaction` / `abortTransaction` without transaction fields (the dispatcher sends
/// those with them to [`in_transaction`]).
pub(crate) fn commit_transaction(context: &mut Context<'_>) -> CommandResult {
    Err(CommandError::new(
        50768,
        format!("{} must be run within a transaction", context.args.name),
    ))
}

/// See [`commit_transaction`].
pub(crate) fn abort_transaction(context: &mut Context<'_>) -> CommandResult {
    commit_transaction(context)
}

/// `endSessions` / `killSessions`: aborts their open transactions and forgets them.
pub(crate) fn end_sessions(context: &mut Context<'_>) -> CommandResult {
    let ids = match context.args.document.get(context.args.name) {
        Some(Bson::Array(ids)) => ids.clone(),
        _ => {
            return Err(CommandError::type_mismatch(format!(
                "{} takes an array of session ids",
                context.args.name
            )));
        }
    };
    let mut sessions = lock(&context.commands.sessions);
    for id in ids {
        let Bson::Document(lsid) = id else { continue };
        let Ok(key) = lsid.to_vec() else { continue };
        if let Some(mut session) = sessions.sessions.remove(&key) {
            abandon(&mut session);
        }
    }
    Ok(doc! { "ok": 1.0 })
}

/// `refreshSessions`: sessions are kept while used; nothing to do.
pub(crate) fn refresh_sessions(context: &mut Context<'_>) -> CommandResult {
    context.args.only(&[])?;
    Ok(doc! { "ok": 1.0 })
}
