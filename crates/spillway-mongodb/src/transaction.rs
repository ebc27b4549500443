//! [`Transaction`]: a multi-document transaction the application drives, across collections
//! with and without policies, as a driver's `startTransaction` … `commitTransaction` is.
//!
//! The pattern layer's own writes run in transactions it starts and commits itself, one per
//! logical write. An application (or a client of `spillway serve --upstream`) that wants
//! several writes to commit together needs one transaction around them all: a
//! [`Transaction`] holds a backend of its own whose session keeps one MongoDB transaction
//! open, and every operation of [`Transaction::collection`] runs inline in it, the logical
//! writes of a collection with a policy as well as a plain collection's. Nothing is retried
//! inside: a transient error (a write conflict) reaches the caller with MongoDB's
//! `TransientTransactionError` label, and the whole transaction is the caller's to run again,
//! as with a driver's own transactions.

use bson::Document;
use mongodb::options::ReadConcern;

use crate::backend::RetryKey;
use crate::database::{PatternedCollection, PatternedDatabase};
use crate::error::Result;

/// A multi-document transaction on one database of the deployment, with policies applied.
///
/// ```no_run
/// use mongodb::options::ReadConcern;
/// use mongodb::sync::Client;
/// use spillway_mongodb::{Pattern, PatternedDatabase, Transaction, bson::doc};
///
/// let client = Client::with_uri_str("mongodb://127.0.0.1:27017")?;
/// let shop = PatternedDatabase::new(&client, "shop", [Pattern::outlier("sales", "buyers").threshold(50)])?;
/// let order = Transaction::start(&shop, ReadConcern::snapshot())?;
/// order.collection("sales").update_one(doc! { "_id": 2 }, doc! { "$push": { "buyers": "u7" } }).run()?;
/// order.collection("orders").insert_one(doc! { "book": 2, "buyer": "u7" }).run()?;
/// order.commit()?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
///
/// Dropped without [`Transaction::commit`], the transaction is aborted.
#[derive(Debug)]
pub struct Transaction {
    database: PatternedDatabase,
}

impl Transaction {
    /// Starts a transaction on `database` with read concern `read_concern` (MongoDB's
    /// transactions take `local`, `majority` or `snapshot`) and write concern `majority`.
    /// The driver sends `startTransaction` with the first operation.
    ///
    /// # Errors
    /// The deployment's, when it cannot be reached.
    pub fn start(database: &PatternedDatabase, read_concern: ReadConcern) -> Result<Transaction> {
        Transaction::begin(database, read_concern, false)
    }

    /// As [`Transaction::start`], for a statement of a retryable write whose outcome the
    /// transaction records ([`Transaction::recorded_outcome`], [`Transaction::record_outcome`]):
    /// the collection of the records is made first, outside the transaction.
    ///
    /// # Errors
    /// As [`Transaction::start`].
    pub fn start_for_retryable_write(
        database: &PatternedDatabase,
        read_concern: ReadConcern,
    ) -> Result<Transaction> {
        Transaction::begin(database, read_concern, true)
    }

    /// A new layer over `database` with a transaction begun on its backend, the records'
    /// collection made first when `records_retries`.
    fn begin(
        database: &PatternedDatabase,
        read_concern: ReadConcern,
        records_retries: bool,
    ) -> Result<Transaction> {
        let mut layer = database.new_layer()?;
        if records_retries {
            layer.backend_mut().prepare_retries()?;
        }
        layer.backend_mut().begin_with(read_concern)?;
        Ok(Transaction {
            database: database.pinned_to(layer),
        })
    }

    /// What the retryable write statement `key` of `operation` (MongoDB's command name, such
    /// as `findAndModify`) already answered, as the transaction reads its record: the result
    /// recorded by [`Transaction::record_outcome`] with the same transaction number, or
    /// `None` when it has not run with this number (see [`RetryKey`]).
    ///
    /// # Errors
    /// 225 TransactionTooOld when a newer number ran the statement; a record of another
    /// operation; the deployment's.
    pub fn recorded_outcome(&self, key: &RetryKey, operation: &str) -> Result<Option<Document>> {
        self.database
            .with_layer(|layer| layer.backend().recorded_outcome(key, operation))
    }

    /// Records `result` as the outcome of statement `key` of `operation`, in the
    /// transaction: committed with the statement's writes, it answers every retry.
    ///
    /// # Errors
    /// The deployment's.
    pub fn record_outcome(&self, key: &RetryKey, operation: &str, result: Document) -> Result<()> {
        self.database
            .with_layer(|layer| layer.backend().record_retry(key, operation, result))
    }

    /// A collection of the transaction's database, each of whose operations is part of
    /// the transaction.
    pub fn collection(&self, name: &str) -> PatternedCollection {
        self.database.collection(name)
    }

    /// The transaction's database.
    pub fn database(&self) -> &PatternedDatabase {
        &self.database
    }

    /// Runs `command` (a document without `lsid`, `txnNumber`, `autocommit` or
    /// `startTransaction`: the transaction's own are added) on database `database` of the
    /// deployment, in the transaction: the commands on collections without a policy, as a
    /// client sent them. A failed command has the server's reply in its error
    /// (`mongodb::error::Error::server_response`).
    ///
    /// # Errors
    /// The deployment's; a transaction that has ended.
    pub fn run_command(&self, database: &str, command: Document) -> Result<Document> {
        self.database
            .with_layer(|layer| layer.backend().run_in_transaction(database, command))
    }

    /// Commits the transaction. On an error with the `UnknownTransactionCommitResult` label
    /// the transaction may have committed: committing again is allowed and answers the
    /// outcome; after any other error it has not.
    ///
    /// # Errors
    /// The deployment's (`NoSuchTransaction` after a statement failed: the server aborted it).
    pub fn commit(&self) -> Result<()> {
        self.database
            .with_layer(|layer| layer.backend_mut().commit_open())
    }

    /// Aborts the transaction: none of its writes are kept.
    pub fn abort(&self) {
        let _ = self.database.with_layer(|layer| {
            layer.backend_mut().abort_open();
            Ok(())
        });
    }

    /// Whether the transaction is still open (not committed, not aborted).
    pub fn is_open(&self) -> bool {
        self.database
            .with_layer(|layer| Ok(layer.backend().in_transaction()))
            .unwrap_or(false)
    }
}

impl Drop for Transaction {
    fn drop(&mut self) {
        if self.is_open() {
            self.abort();
        }
    }
}
