//! Clients' multi-document transactions that the proxy holds: one upstream transaction
//! ([`spillway_mongodb::Transaction`]) per client transaction, so that the logical writes of
//! collections with a policy and the plain commands around them commit, or abort, together.
//!
//! A client's transaction is one session (`lsid`) and transaction number (`txnNumber`) with
//! `autocommit: false`; its first command has `startTransaction: true`. The executor decides
//! which transactions the proxy holds (those that start in a database with policies); the
//! others are the upstream's, forwarded as they come. For a held one this module keeps the
//! state MongoDB keeps per session, and answers as MongoDB answers:
//! - a statement of the open transaction runs in it; a statement that fails (an error reply,
//!   or write errors) aborts it, as MongoDB aborts a transaction whose statement failed;
//! - `commitTransaction` commits it; sent again after the commit, it answers ok again (a
//!   driver retries a commit whose outcome it did not hear); a commit whose outcome is unknown
//!   leaves the transaction open, to be committed again;
//! - `abortTransaction` aborts it;
//! - after an abort, statements and commits get 251 NoSuchTransaction with the
//!   `TransientTransactionError` label (the driver then runs the whole transaction again);
//!   after a commit, statements and aborts get 256 TransactionCommitted;
//! - a number older than the session's latest gets 225 TransactionTooOld;
//! - a transaction left open for [`TRANSACTION_LIFETIME`] is aborted, as MongoDB's
//!   `transactionLifetimeLimitSeconds` (60) aborts it; `endSessions` aborts the sessions'.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use bson::{Bson, Document, doc};
use spillway::command::CommandError;
use spillway_mongodb::Transaction;

use crate::patterned::{self, Reply};

/// How long a held transaction may stay open without a statement before it is aborted:
/// MongoDB's `transactionLifetimeLimitSeconds` default.
pub const TRANSACTION_LIFETIME: Duration = Duration::from_secs(60);

/// How long a session's last transaction number and outcome are kept after its last
/// command: MongoDB's default session lifetime.
const SESSION_LIFETIME: Duration = Duration::from_secs(30 * 60);

/// MongoDB's 251 NoSuchTransaction.
const NO_SUCH_TRANSACTION: i32 = 251;
/// MongoDB's 256 TransactionCommitted.
const TRANSACTION_COMMITTED: i32 = 256;
/// MongoDB's 225 TransactionTooOld.
const TRANSACTION_TOO_OLD: i32 = 225;

/// The fields of a client's command that name its session and transaction: the upstream
/// transaction has its own, which the driver adds.
const SESSION_FIELDS: &[&str] = &[
    "lsid",
    "txnNumber",
    "autocommit",
    "startTransaction",
    "readConcern",
    "$db",
    "$clusterTime",
    "$readPreference",
];

/// A command of a client's transaction: its session, its number, whether it starts it.
#[derive(Debug, Clone)]
pub(crate) struct Statement {
    session: Vec<u8>,
    txn_number: i64,
    starts: bool,
}

impl Statement {
    /// The transaction statement `command` is, if it is one (`lsid`, `txnNumber` and
    /// `autocommit: false`).
    pub(crate) fn of(command: &Document) -> Option<Statement> {
        if !command
            .get_bool("autocommit")
            .is_ok_and(|autocommit| !autocommit)
        {
            return None;
        }
        let txn_number = command.get_i64("txnNumber").ok()?;
        let session = command.get_document("lsid").ok()?.to_vec().ok()?;
        Some(Statement {
            session,
            txn_number,
            starts: command.get_bool("startTransaction").unwrap_or(false),
        })
    }

    /// Whether the command starts its transaction.
    pub(crate) fn starts(&self) -> bool {
        self.starts
    }
}

/// Where a held session's latest transaction stands.
enum State {
    Open(Transaction),
    Committed,
    Aborted,
}

struct Session {
    txn_number: i64,
    state: State,
    used: Instant,
}

/// The sessions whose transactions the proxy holds.
#[derive(Default)]
pub(crate) struct Transactions {
    sessions: Mutex<HashMap<Vec<u8>, Arc<Mutex<Session>>>>,
}

impl std::fmt::Debug for Transactions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Transactions").finish_non_exhaustive()
    }
}

impl Transactions {
    fn session(&self, key: &[u8]) -> Option<Arc<Mutex<Session>>> {
        self.sessions
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(key)
            .cloned()
    }

    /// Whether `statement` belongs to a transaction the proxy holds or held (same session,
    /// same number), or is older than its latest: then it is answered here.
    pub(crate) fn holds(&self, statement: &Statement) -> bool {
        self.session(&statement.session).is_some_and(|session| {
            statement.txn_number
                <= session
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .txn_number
        })
    }

    /// Takes `transaction` as the one `statement` (which starts it) opens. An older one
    /// still open on the session is aborted, as MongoDB aborts it when the session starts a
    /// newer one.
    ///
    /// # Errors
    /// 225 when the session has run a newer number; 251 when this number ran already.
    pub(crate) fn begin(
        &self,
        statement: &Statement,
        transaction: Transaction,
    ) -> Result<(), CommandError> {
        let mut sessions = self.sessions.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(known) = sessions.get(&statement.session) {
            let mut known = known.lock().unwrap_or_else(PoisonError::into_inner);
            if statement.txn_number < known.txn_number {
                return Err(too_old(statement.txn_number, known.txn_number));
            }
            if statement.txn_number == known.txn_number {
                return Err(CommandError::new(
                    NO_SUCH_TRANSACTION,
                    format!(
                        "transaction {} has already been started on this session: a new \
                         transaction needs a new txnNumber",
                        statement.txn_number
                    ),
                ));
            }
            if let State::Open(older) = &known.state {
                older.abort();
            }
            known.txn_number = statement.txn_number;
            known.state = State::Open(transaction);
            known.used = Instant::now();
            return Ok(());
        }
        sessions.insert(
            statement.session.clone(),
            Arc::new(Mutex::new(Session {
                txn_number: statement.txn_number,
                state: State::Open(transaction),
                used: Instant::now(),
            })),
        );
        Ok(())
    }

    /// Runs command `name` of `statement`, a statement of a transaction the proxy holds
    /// ([`Transactions::holds`]): `commitTransaction` and `abortTransaction` here, any other
    /// command by `run` in the open transaction. The session's statements run one at a time.
    pub(crate) fn run(
        &self,
        statement: &Statement,
        name: &str,
        run: impl FnOnce(&Transaction) -> Reply,
    ) -> Reply {
        let Some(session) = self.session(&statement.session) else {
            return Err(no_such_transaction(statement.txn_number));
        };
        let mut session = session.lock().unwrap_or_else(PoisonError::into_inner);
        session.used = Instant::now();
        if statement.txn_number < session.txn_number {
            return Err(too_old(statement.txn_number, session.txn_number));
        }
        match (&session.state, name) {
            (State::Committed, "commitTransaction") => Ok(doc! { "ok": 1.0 }),
            (State::Committed, _) => Err(CommandError::new(
                TRANSACTION_COMMITTED,
                format!(
                    "transaction {} has been committed: a new transaction needs a new txnNumber",
                    statement.txn_number
                ),
            )),
            (State::Aborted, _) => Err(no_such_transaction(statement.txn_number)),
            (State::Open(transaction), "commitTransaction") => match transaction.commit() {
                Ok(()) => {
                    session.state = State::Committed;
                    Ok(doc! { "ok": 1.0 })
                }
                Err(failure) => {
                    if !transaction.is_open() {
                        session.state = State::Aborted;
                    }
                    Ok(upstream_error(&failure))
                }
            },
            (State::Open(transaction), "abortTransaction") => {
                transaction.abort();
                session.state = State::Aborted;
                Ok(doc! { "ok": 1.0 })
            }
            (State::Open(transaction), _) => {
                let reply = run(transaction);
                let failed = match &reply {
                    Ok(reply) => !patterned::is_ok(reply) || has_write_errors(reply),
                    Err(_) => true,
                };
                if failed {
                    // MongoDB aborts a transaction whose statement failed.
                    transaction.abort();
                    session.state = State::Aborted;
                }
                reply
            }
        }
    }

    /// Aborts the open transactions of the sessions `endSessions` ends, and forgets them.
    pub(crate) fn end_sessions(&self, command: &Document) {
        let Ok(ended) = command.get_array("endSessions") else {
            return;
        };
        let mut sessions = self.sessions.lock().unwrap_or_else(PoisonError::into_inner);
        for lsid in ended.iter().filter_map(Bson::as_document) {
            let Ok(key) = lsid.to_vec() else { continue };
            if let Some(session) = sessions.remove(&key)
                && let State::Open(transaction) =
                    &session.lock().unwrap_or_else(PoisonError::into_inner).state
            {
                transaction.abort();
            }
        }
    }

    /// Aborts the transactions left open for [`TRANSACTION_LIFETIME`], and forgets the
    /// sessions unused for MongoDB's session lifetime.
    pub(crate) fn reap_expired(&self) {
        let mut sessions = self.sessions.lock().unwrap_or_else(PoisonError::into_inner);
        sessions.retain(|_, session| {
            let Ok(mut session) = session.try_lock() else {
                // A statement is running: the session is in use.
                return true;
            };
            let idle = session.used.elapsed();
            if idle >= TRANSACTION_LIFETIME
                && let State::Open(transaction) = &session.state
            {
                transaction.abort();
                session.state = State::Aborted;
            }
            idle < SESSION_LIFETIME
        });
    }
}

/// `command` without the fields that name the client's session and transaction, to be sent
/// in the upstream transaction, which has its own.
pub(crate) fn without_session_fields(mut command: Document) -> Document {
    for field in SESSION_FIELDS {
        command.remove(*field);
    }
    command
}

/// The read concern a transaction's first command asks for (`local`, `majority`,
/// `snapshot`), or `snapshot` when it names none: every read of the transaction then sees
/// one state, which is what the logical documents need.
pub(crate) fn read_concern(
    command: &Document,
) -> Result<spillway_mongodb::mongodb::options::ReadConcern, CommandError> {
    use spillway_mongodb::mongodb::options::ReadConcern;
    let level = command
        .get_document("readConcern")
        .ok()
        .and_then(|concern| concern.get_str("level").ok());
    match level {
        None | Some("snapshot") => Ok(ReadConcern::snapshot()),
        Some("local") => Ok(ReadConcern::local()),
        Some("majority") => Ok(ReadConcern::majority()),
        Some(other) => Err(CommandError::new(
            72,
            format!(
                "read concern level '{other}' is not allowed in a transaction (local, majority \
                 or snapshot)"
            ),
        )),
    }
}

/// The upstream's error reply inside a driver error, or, when the command got no reply (a
/// network error), error 6 with the `TransientTransactionError` label, so that the driver
/// runs the transaction again.
pub(crate) fn upstream_error(failure: &spillway_mongodb::Error) -> Document {
    if let spillway_mongodb::Error::Driver(error) = failure
        && let Some(reply) = error
            .server_response()
            .and_then(|raw| Document::try_from(raw.as_ref()).ok())
    {
        return reply;
    }
    let mut error = CommandError::new(failure.code().unwrap_or(6), failure.to_string());
    for label in [
        "TransientTransactionError",
        "UnknownTransactionCommitResult",
    ] {
        if failure.has_label(label) {
            error.labels.push(label);
        }
    }
    if failure.code().is_none() && error.labels.is_empty() {
        error.labels.push("TransientTransactionError");
    }
    error.to_reply()
}

fn has_write_errors(reply: &Document) -> bool {
    reply
        .get_array("writeErrors")
        .is_ok_and(|errors| !errors.is_empty())
}

fn no_such_transaction(txn_number: i64) -> CommandError {
    let mut error = CommandError::new(
        NO_SUCH_TRANSACTION,
        format!(
            "Transaction with txnNumber {txn_number} has been aborted (a statement failed, it \
             was aborted, or it was left open too long): run the transaction again"
        ),
    );
    error.labels.push("TransientTransactionError");
    error
}

fn too_old(txn_number: i64, latest: i64) -> CommandError {
    CommandError::new(
        TRANSACTION_TOO_OLD,
        format!(
            "Cannot run transaction {txn_number}: a newer transaction {latest} has started on \
             this session"
        ),
    )
}
