//! [`ClientSession`]: the driver's explicit transactions, beside the closure form
//! ([`Database::transaction`]).
//!
//! ```
//! use spillway::{Database, doc, bson::Document};
//!
//! let db = Database::open_in_memory()?;
//! let accounts = db.collection::<Document>("accounts");
//! accounts.insert_one(doc! { "_id": 1, "balance": 100 }).run()?;
//!
//! let mut session = db.start_session().run()?;
//! session.start_transaction().run()?;
//! accounts.update_one(doc! { "_id": 1 }, doc! { "$inc": { "balance": -25 } })
//!     .session(&mut session).run()?;
//! // Outside the session, the change is not visible until the commit.
//! assert_eq!(accounts.find_one(doc! { "_id": 1 }).run()?.unwrap().get_i32("balance")?, 100);
//! session.commit_transaction().run()?;
//! assert_eq!(accounts.find_one(doc! { "_id": 1 }).run()?.unwrap().get_i32("balance")?, 75);
//!
//! // Between transactions an operation given the session runs on its own.
//! accounts.insert_one(doc! { "_id": 2 }).session(&mut session).run()?;
//! session.start_transaction().run()?;
//! accounts.delete_one(doc! { "_id": 2 }).session(&mut session).run()?;
//! session.abort_transaction().run()?;
//! assert_eq!(accounts.count_documents(doc! {}).run()?, 2);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! A transaction started here is a [`Database::start_transaction`] handle: snapshot
//! isolation, first committer wins (its commit fails with `WriteConflict`, 112, when a
//! commit since it began changed what it writes), nothing held while it is open. Operations
//! take the session where they take a transaction (`.session(&mut session)`): the session
//! dereferences to its transaction, and between transactions to an idle stand-in that makes
//! the operation run on its own. Like an open cursor, a session holds the snapshot it last
//! used (its transaction's, or its stand-in's) until it is used again or dropped: drop the
//! sessions you are done with. This module must never write to the store itself.

use std::ops::{Deref, DerefMut};

use crate::database::{Database, Transaction};
use crate::error::{Error, ErrorKind, Result, codes};

/// A session: a sequence of operations, some of them in transactions it starts, commits and
/// aborts.
pub struct ClientSession {
    database: Database,
    /// The transaction in progress, or the idle stand-in.
    transaction: Transaction,
}

impl std::fmt::Debug for ClientSession {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClientSession")
            .field("in_transaction", &self.in_transaction())
            .finish_non_exhaustive()
    }
}

impl Deref for ClientSession {
    type Target = Transaction;

    fn deref(&self) -> &Transaction {
        &self.transaction
    }
}

impl DerefMut for ClientSession {
    fn deref_mut(&mut self) -> &mut Transaction {
        if self.transaction.idle {
            // The stand-in is never read nor written; a fresh one holds the newest snapshot,
            // not the one of the session's previous use.
            self.transaction = Transaction::idle(&self.database);
        }
        &mut self.transaction
    }
}

/// A misuse of a session's transaction calls (the driver refuses them before sending
/// anything): MongoDB's `IllegalOperation` (20).
fn refused(message: &str) -> Error {
    Error::new(ErrorKind::TransactionAborted {
        message: message.to_string(),
    })
    .with_code(codes::ILLEGAL_OPERATION)
}

impl ClientSession {
    /// Whether a transaction is in progress.
    pub fn in_transaction(&self) -> bool {
        !self.transaction.idle
    }

    /// Starts a transaction: the operations given the session until
    /// [`ClientSession::commit_transaction`] or [`ClientSession::abort_transaction`] commit
    /// or vanish together. Run with `.run()`.
    pub fn start_transaction(&mut self) -> StartTransaction<'_> {
        StartTransaction { session: self }
    }

    /// Commits the transaction in progress. Run with `.run()`.
    pub fn commit_transaction(&mut self) -> CommitTransaction<'_> {
        CommitTransaction { session: self }
    }

    /// Abandons the transaction in progress: nothing it wrote stays. Run with `.run()`.
    pub fn abort_transaction(&mut self) -> AbortTransaction<'_> {
        AbortTransaction { session: self }
    }

    /// The transaction in progress, leaving the idle stand-in in its place.
    fn take_transaction(&mut self, call: &str) -> Result<Transaction> {
        if !self.in_transaction() {
            return Err(refused(&format!(
                "{call}: no transaction started in this session"
            )));
        }
        let idle = Transaction::idle(&self.database);
        Ok(std::mem::replace(&mut self.transaction, idle))
    }
}

impl Database {
    /// Starts a session, in which [`crate::ClientSession::start_transaction`] and
    /// [`crate::ClientSession::commit_transaction`] delimit transactions, as the driver's
    /// `start_session` does. Run with `.run()`.
    pub fn start_session(&self) -> StartSession<'_> {
        StartSession::new(self)
    }
}

/// `start_session`, run with `.run()`.
#[must_use = "an action does nothing until .run()"]
pub struct StartSession<'a> {
    database: &'a Database,
}

impl<'a> StartSession<'a> {
    pub(crate) fn new(database: &'a Database) -> StartSession<'a> {
        StartSession { database }
    }

    /// The session.
    pub fn run(self) -> Result<ClientSession> {
        Ok(ClientSession {
            database: self.database.clone(),
            transaction: Transaction::idle(self.database),
        })
    }
}

/// `start_transaction`, run with `.run()`.
#[must_use = "an action does nothing until .run()"]
pub struct StartTransaction<'a> {
    session: &'a mut ClientSession,
}

impl StartTransaction<'_> {
    /// Starts it; a transaction already in progress is refused (20).
    pub fn run(self) -> Result<()> {
        let session = self.session;
        if session.in_transaction() {
            return Err(refused(
                "start_transaction: a transaction is already in progress in this session",
            ));
        }
        session.transaction = session.database.start_transaction()?;
        Ok(())
    }
}

/// `commit_transaction`, run with `.run()`.
#[must_use = "an action does nothing until .run()"]
pub struct CommitTransaction<'a> {
    session: &'a mut ClientSession,
}

impl CommitTransaction<'_> {
    /// Commits; the transaction ends whether the commit succeeds or not (a `WriteConflict`
    /// means running it again from `start_transaction`). Without a transaction in progress,
    /// refused (20).
    pub fn run(self) -> Result<()> {
        self.session
            .take_transaction("commit_transaction")?
            .commit()
    }
}

/// `abort_transaction`, run with `.run()`.
#[must_use = "an action does nothing until .run()"]
pub struct AbortTransaction<'a> {
    session: &'a mut ClientSession,
}

impl AbortTransaction<'_> {
    /// Discards the transaction's writes. Without a transaction in progress, refused (20).
    pub fn run(self) -> Result<()> {
        self.session
            .take_transaction("abort_transaction")?
            .rollback();
        Ok(())
    }
}
