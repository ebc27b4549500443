//! [`MongoBackend`]: spillway-pattern's backend traits over one database of a MongoDB
//! deployment, through the official driver's blocking API.
//!
//! - Reads are `find` (with `{ _id: 1 }` as the natural order), `find` by `_id` and
//!   `countDocuments`; inside a transaction they go through its session, so they see its
//!   writes and its snapshot.
//! - A transaction ([`Transactional::transaction`]) is one MongoDB multi-document transaction
//!   with read concern `snapshot` and write concern `majority`, run again from the start on
//!   `TransientTransactionError` and committed again on `UnknownTransactionCommitResult`,
//!   within [`TRANSACTION_TIME_LIMIT`], as the driver's `withTransaction` does.
//! - A batch ([`WriteBackend::apply`]) becomes `insert` and `delete` commands grouped by
//!   collection and a `replace` per document, all in the transaction.
//! - Two transactions on one logical document must conflict. Snapshot isolation alone does
//!   not make them: two `$push`es that read the same full last bucket both insert bucket
//!   n + 1 (new documents, no common write: write skew), and the main document they both
//!   name in their batches may be replaced by an equal one, which MongoDB does not count as
//!   a write (and `spillway serve` compares values, so even a change undone within the
//!   transaction escapes it). So every transaction that replaces a main document also
//!   gives that document's write stamp in [`STAMP_COLLECTION`] a new value: a real write,
//!   on which the second writer gets 112 WriteConflict and runs again on the new state.
//! - Collections and indexes are made outside transactions (MongoDB 4.2 allows no DDL inside
//!   one, and later versions only some), before the transaction's writes need them; creating
//!   is idempotent, so a transaction that is run again finds them made. Dropping a collection
//!   waits until the transaction that asked for it has committed.
//! - The policies live in one document of [`POLICY_COLLECTION`], read once per transaction.
//!
//! This module decides nothing about policies: it stores and fetches what the pattern layer
//! asks for.

use std::cell::{Cell, RefCell};
use std::collections::HashSet;
use std::time::{Duration, Instant};

use bson::oid::ObjectId;
use bson::{Bson, Document, RawDocumentBuf, doc};
use mongodb::IndexModel;
use mongodb::options::{FindOptions, IndexOptions, ReadConcern, WriteConcern};
use mongodb::sync::{Client, ClientSession, Collection, Database};
use spillway_pattern::{
    PatternError, Policy, Query, ReadBackend, Transactional, Write, WriteBackend,
};

use crate::error::{Error, Result, server_code};
use crate::records::{self, POLICY_COLLECTION, POLICY_DOCUMENT_ID};

/// How long a transaction may keep being run again after transient errors, as in the
/// driver's `withTransaction` (120 seconds).
pub const TRANSACTION_TIME_LIMIT: Duration = Duration::from_secs(120);

/// The collection of write stamps: `{ _id: { c: <collection>, id: <_id> }, at: <ObjectId> }`
/// for each main document, given a new `at` by every transaction that replaces the main
/// document (see the module documentation).
pub const STAMP_COLLECTION: &str = "spillway_stamps";

/// The collection of retryable writes' records, one per statement of a session:
/// `{ _id: { lsid: <lsid.id>, stmt: <index> }, txnNumber, op, result, at }`, written in the
/// statement's own transaction (see [`RetryKey`]).
pub const RETRY_COLLECTION: &str = "spillway_retries";

/// How long a retry record is kept (its TTL index on `at`): MongoDB's default session
/// lifetime, 30 minutes, after which a server forgets a session's retryable writes.
pub const RETRY_RECORD_LIFETIME: Duration = Duration::from_secs(30 * 60);

/// A statement of a retryable write, as MongoDB names it: the session (`lsid.id`), the
/// transaction number (`txnNumber`) and the statement's index in its command (its stmtId).
///
/// A write run with a key (`.retryable(key)` on [`InsertOne`](crate::InsertOne),
/// [`Update`](crate::Update), [`Delete`](crate::Delete)) first reads the statement's record
/// in [`RETRY_COLLECTION`] inside its own transaction:
/// - a record with the same `txn_number`: the statement already ran; its recorded result is
///   returned and nothing is written;
/// - a record with a newer number: refused with 225 TransactionTooOld, as MongoDB refuses a
///   number older than the session's latest (here: the latest that ran this statement index);
/// - otherwise the write runs and its result is recorded in the same transaction, replacing
///   the older record, so there is one record per (session, statement).
///
/// Two clients running the same retry at once both write the record: one commits, the other
/// gets a write conflict, runs again and answers from the record. Records expire
/// [`RETRY_RECORD_LIFETIME`] after they were written (the TTL monitor runs about once a
/// minute): a retry older than that runs again, as on a server whose session expired.
#[derive(Debug, Clone, PartialEq)]
pub struct RetryKey {
    /// The session's id (`lsid.id`).
    pub session: Bson,
    /// The statement's index in its command.
    pub stmt: i32,
    /// The session's transaction number.
    pub txn_number: i64,
}

impl RetryKey {
    fn record_id(&self) -> Document {
        doc! { "lsid": self.session.clone(), "stmt": self.stmt }
    }
}

/// MongoDB's 48 NamespaceExists.
const NAMESPACE_EXISTS: i32 = 48;
/// MongoDB's 26 NamespaceNotFound.
const NAMESPACE_NOT_FOUND: i32 = 26;

/// The pattern layer's storage on one MongoDB database.
///
/// It holds one session for its transactions, so one backend serves one thread at a time
/// (it is `Send`, not `Sync`); [`PatternedDatabase`](crate::PatternedDatabase) keeps a pool.
pub struct MongoBackend {
    client: Client,
    database: Database,
    /// The session of the open transaction, kept between transactions.
    session: RefCell<Option<ClientSession>>,
    /// Whether a transaction is open on the session.
    in_transaction: Cell<bool>,
    /// The policies as the open transaction sees them, once read.
    policies: RefCell<Option<Vec<Policy>>>,
    /// Collections dropped by the open transaction, dropped once it commits.
    pending_drops: Vec<String>,
    /// Collections known to exist, so that a write does not ask to create them again.
    known_collections: RefCell<HashSet<String>>,
    /// The state of the backoff's generator.
    backoff_seed: Cell<u64>,
    /// How long a transaction may keep being run again.
    time_limit: Duration,
}

impl std::fmt::Debug for MongoBackend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MongoBackend")
            .field("database", &self.database.name())
            .field("in_transaction", &self.in_transaction.get())
            .finish_non_exhaustive()
    }
}

impl MongoBackend {
    /// The backend over database `name` of `client`'s deployment (a replica set or a
    /// sharded cluster: transactions need one). It makes sure the policy collection exists.
    ///
    /// # Errors
    /// The deployment's, when it cannot be reached.
    pub fn new(client: &Client, name: &str) -> Result<MongoBackend> {
        let backend = MongoBackend {
            client: client.clone(),
            database: client.database(name),
            session: RefCell::new(None),
            in_transaction: Cell::new(false),
            policies: RefCell::new(None),
            pending_drops: Vec::new(),
            known_collections: RefCell::new(HashSet::new()),
            backoff_seed: Cell::new(seed()),
            time_limit: TRANSACTION_TIME_LIMIT,
        };
        backend.create(POLICY_COLLECTION)?;
        backend.create(STAMP_COLLECTION)?;
        Ok(backend)
    }

    /// Runs transactions again after transient errors for at most `time_limit`
    /// ([`TRANSACTION_TIME_LIMIT`] by default).
    pub fn set_time_limit(&mut self, time_limit: Duration) {
        self.time_limit = time_limit;
    }

    /// The database.
    pub fn database(&self) -> &Database {
        &self.database
    }

    fn collection(&self, name: &str) -> Collection<Document> {
        self.database.collection(name)
    }

    /// Runs `operation` with the open transaction's session, or without a session outside
    /// transactions.
    fn with_session<T>(
        &self,
        operation: impl FnOnce(Option<&mut ClientSession>) -> mongodb::error::Result<T>,
    ) -> Result<T> {
        if !self.in_transaction.get() {
            return Ok(operation(None)?);
        }
        let mut session = self.session.borrow_mut();
        Ok(operation(session.as_mut())?)
    }

    /// Creates `name` unless it is known to exist (an existing collection is no error).
    fn create(&self, name: &str) -> Result<()> {
        if self.known_collections.borrow().contains(name) {
            return Ok(());
        }
        match self.database.create_collection(name).run() {
            Ok(()) => {}
            Err(error) if server_code(&error) == Some(NAMESPACE_EXISTS) => {}
            Err(error) => return Err(error.into()),
        }
        self.known_collections.borrow_mut().insert(name.to_string());
        Ok(())
    }

    /// Starts a transaction on the backend's session: read concern `snapshot`, write concern
    /// `majority`. The driver sends it with the first command.
    fn begin(&mut self) -> Result<()> {
        self.begin_with(ReadConcern::snapshot())
    }

    /// Starts a transaction with read concern `read_concern` and write concern `majority`:
    /// the layer's own, or the one of an application's [`Transaction`](crate::Transaction),
    /// which the application ends ([`MongoBackend::commit_open`],
    /// [`MongoBackend::abort_open`]); every operation of the layer over this backend is then
    /// part of it.
    pub(crate) fn begin_with(&mut self, read_concern: ReadConcern) -> Result<()> {
        let mut session = self.session.borrow_mut();
        if session.is_none() {
            *session = Some(self.client.start_session().run()?);
        }
        let session = session.as_mut().expect("started above");
        session
            .start_transaction()
            .read_concern(read_concern)
            .write_concern(WriteConcern::majority())
            .run()?;
        self.in_transaction.set(true);
        Ok(())
    }

    /// Whether a transaction is open on the backend's session.
    pub(crate) fn in_transaction(&self) -> bool {
        self.in_transaction.get()
    }

    /// Commits the open transaction. A commit whose outcome is unknown (the error has the
    /// `UnknownTransactionCommitResult` label) leaves the transaction open, to be committed
    /// again; any other outcome ends it, and the collections it dropped are dropped.
    pub(crate) fn commit_open(&mut self) -> Result<()> {
        match self.commit() {
            Ok(()) => {
                let drops = std::mem::take(&mut self.pending_drops);
                self.end();
                for collection in drops {
                    let _ = self.drop_now(&collection);
                }
                Ok(())
            }
            Err(error) if error.has_label(mongodb::error::UNKNOWN_TRANSACTION_COMMIT_RESULT) => {
                Err(error)
            }
            Err(error) => {
                self.end();
                Err(error)
            }
        }
    }

    /// Aborts the open transaction: its writes are undone.
    pub(crate) fn abort_open(&mut self) {
        self.abort();
    }

    /// Runs `command` on database `database` in the open transaction: the driver adds the
    /// session, the transaction number and, on the transaction's first command,
    /// `startTransaction` with the read concern.
    pub(crate) fn run_in_transaction(&self, database: &str, command: Document) -> Result<Document> {
        let mut session = self.session.borrow_mut();
        let Some(session) = session.as_mut().filter(|_| self.in_transaction.get()) else {
            return Err(Error::InvalidArgument {
                message: "no transaction is open to run the command in".to_string(),
            });
        };
        Ok(self
            .client
            .database(database)
            .run_command(command)
            .session(session)
            .run()?)
    }

    /// Forgets the open transaction's state (its policies and its pending drops).
    fn end(&mut self) {
        self.in_transaction.set(false);
        self.policies.borrow_mut().take();
        self.pending_drops.clear();
    }

    /// Aborts the open transaction. Its outcome does not matter: an abort that fails leaves
    /// the server to abort it (a failed command inside a transaction already has).
    fn abort(&mut self) {
        if let Some(session) = self.session.borrow_mut().as_mut() {
            let _ = session.abort_transaction().run();
        }
        self.end();
    }

    /// Sends `commitTransaction` for the open transaction.
    fn commit(&mut self) -> Result<()> {
        let mut session = self.session.borrow_mut();
        let session = session.as_mut().expect("a transaction is open");
        session.commit_transaction().run()?;
        Ok(())
    }

    /// After a commit that failed for good, the server may still hold the transaction open
    /// (a commit refused before it ran), and its writes would conflict with every other
    /// client's until the server times it out. A read under the session's next transaction
    /// number makes the server abort it at once, as MongoDB does when a session starts a
    /// newer transaction.
    fn release_failed_commit(&mut self) {
        if self.begin().is_ok() {
            let _ = self.get(POLICY_COLLECTION, &Bson::from(POLICY_DOCUMENT_ID));
        }
        self.abort();
    }

    /// Sleeps a little before a transaction is run again, longer after each attempt and
    /// never the same for two clients, so that writers conflicting on one document take
    /// turns instead of colliding again.
    fn back_off(&self, attempt: u32) {
        let mut state = self.backoff_seed.get();
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        self.backoff_seed.set(state);
        let ceiling_micros = 500u64 << attempt.min(7);
        std::thread::sleep(Duration::from_micros(state % ceiling_micros));
    }

    /// Starts a snapshot transaction that only reads: the reads of a logical document
    /// then see one state of its main and side documents even while other clients write
    /// them. [`MongoBackend::end_read`] ends it.
    ///
    /// # Errors
    /// The driver's.
    pub(crate) fn begin_read(&mut self) -> Result<()> {
        self.begin()
    }

    /// Ends the read transaction by an abort (it has nothing to commit).
    pub(crate) fn end_read(&mut self) {
        self.abort();
    }

    /// Sleeps before a read is run again after a transient error.
    pub(crate) fn back_off_read(&self, attempt: u32) {
        self.back_off(attempt);
    }

    /// The policy document as the open transaction sees it.
    ///
    /// # Errors
    /// The driver's.
    pub(crate) fn policy_document(&self) -> Result<Option<Document>> {
        self.get(POLICY_COLLECTION, &Bson::from(POLICY_DOCUMENT_ID))
    }

    /// Applies `update` to the policy document (created if need be) in the open transaction;
    /// the policies are read again by the transaction's next `policies()`.
    ///
    /// # Errors
    /// The driver's.
    pub(crate) fn update_policy_document(&self, update: Document) -> Result<()> {
        let target = self.collection(POLICY_COLLECTION);
        self.with_session(|session| {
            let session = session.expect("in a transaction");
            target
                .update_one(doc! { "_id": POLICY_DOCUMENT_ID }, update)
                .upsert(true)
                .session(session)
                .run()
        })?;
        self.policies.borrow_mut().take();
        Ok(())
    }

    /// Deletes, outside any transaction, the documents of `collection` that `filter`
    /// matches (what a rename leaves behind: the write stamps of the old name, the side
    /// documents of a dropped target's adopted side collection).
    ///
    /// # Errors
    /// The driver's.
    pub(crate) fn delete_outside_transaction(
        &self,
        collection: &str,
        filter: Document,
    ) -> Result<()> {
        self.collection(collection).delete_many(filter).run()?;
        Ok(())
    }

    /// Rewrites the write stamp of main document `id` of `collection` with a new value.
    fn stamp(&self, collection: &str, id: &Bson) -> Result<()> {
        let stamps = self.collection(STAMP_COLLECTION);
        self.with_session(|session| {
            let session = session.expect("in a transaction");
            stamps
                .update_one(
                    doc! { "_id": stamp_id(collection, id) },
                    doc! { "$set": { "at": ObjectId::new() } },
                )
                .upsert(true)
                .session(session)
                .run()
        })?;
        Ok(())
    }

    /// Makes sure [`RETRY_COLLECTION`] and its TTL index exist (outside any transaction:
    /// DDL cannot be part of one), once per backend.
    pub(crate) fn prepare_retries(&mut self) -> Result<()> {
        if self.known_collections.borrow().contains(RETRY_COLLECTION) {
            return Ok(());
        }
        self.create(RETRY_COLLECTION)?;
        self.collection(RETRY_COLLECTION)
            .create_index(
                IndexModel::builder()
                    .keys(doc! { "at": 1 })
                    .options(
                        IndexOptions::builder()
                            .expire_after(RETRY_RECORD_LIFETIME)
                            .build(),
                    )
                    .build(),
            )
            .run()?;
        Ok(())
    }

    /// The record of the statement `key` names, read in the open transaction.
    fn retry_record(&self, key: &RetryKey) -> Result<Option<Document>> {
        self.get(RETRY_COLLECTION, &Bson::Document(key.record_id()))
    }

    /// What statement `key` of a retryable write `operation` (`insert`, `update`,
    /// `findAndModify`...) already did, read in the open transaction: its recorded result
    /// when it ran with this transaction number, `None` when it did not run with it.
    ///
    /// # Errors
    /// 225 TransactionTooOld when a newer number ran the statement; a record of another
    /// operation under the same key; the driver's.
    pub(crate) fn recorded_outcome(
        &self,
        key: &RetryKey,
        operation: &str,
    ) -> Result<Option<Document>> {
        let Some(record) = self.retry_record(key)? else {
            return Ok(None);
        };
        let recorded = record.get_i64("txnNumber").unwrap_or(i64::MIN);
        if recorded > key.txn_number {
            return Err(Error::TransactionTooOld {
                txn_number: key.txn_number,
                recorded,
            });
        }
        if recorded < key.txn_number {
            return Ok(None);
        }
        match record.get_document("result") {
            Ok(result) if record.get_str("op").ok() == Some(operation) => Ok(Some(result.clone())),
            _ => Err(PatternError::InvalidRecord {
                message: format!("the retry record {record} does not answer a retried {operation}"),
            }
            .into()),
        }
    }

    /// Records `result` as the outcome of the statement `key` names, in the open
    /// transaction, replacing the record of an older transaction number.
    pub(crate) fn record_retry(
        &self,
        key: &RetryKey,
        operation: &str,
        result: Document,
    ) -> Result<()> {
        let records = self.collection(RETRY_COLLECTION);
        let id = key.record_id();
        let record = doc! {
            "_id": id.clone(),
            "txnNumber": key.txn_number,
            "op": operation,
            "result": result,
            "at": bson::DateTime::now(),
        };
        self.with_session(|session| {
            let session = session.expect("in a transaction");
            records
                .replace_one(doc! { "_id": id }, record)
                .upsert(true)
                .session(session)
                .run()
        })?;
        Ok(())
    }

    fn drop_now(&self, name: &str) -> Result<()> {
        self.known_collections.borrow_mut().remove(name);
        match self.collection(name).drop().run() {
            Ok(()) => Ok(()),
            Err(error) if server_code(&error) == Some(NAMESPACE_NOT_FOUND) => Ok(()),
            Err(error) => Err(error.into()),
        }
    }

    fn apply_in_transaction(&mut self, batch: Vec<Write>) -> Result<()> {
        for write in &batch {
            self.create(write.collection())?;
        }
        let mains: HashSet<String> = self
            .policies()?
            .into_iter()
            .map(|policy| policy.pattern.collection().to_string())
            .collect();
        let mut writes = batch.into_iter().peekable();
        while let Some(write) = writes.next() {
            match write {
                Write::Insert {
                    collection,
                    document,
                } => {
                    let mut documents = vec![document];
                    while let Some(Write::Insert {
                        collection: next, ..
                    }) = writes.peek()
                    {
                        if *next != collection {
                            break;
                        }
                        let Some(Write::Insert { document, .. }) = writes.next() else {
                            unreachable!("peeked an insert")
                        };
                        documents.push(document);
                    }
                    let target = self.collection(&collection);
                    self.with_session(|session| {
                        let session = session.expect("in a transaction");
                        target.insert_many(documents).session(session).run()
                    })?;
                }
                Write::Replace {
                    collection,
                    document,
                } => {
                    let id = document.get("_id").cloned().unwrap_or(Bson::Null);
                    let target = self.collection(&collection);
                    let filter = doc! { "_id": { "$eq": id.clone() } };
                    let replaced = self.with_session(|session| {
                        let session = session.expect("in a transaction");
                        target.replace_one(filter, document).session(session).run()
                    })?;
                    if mains.contains(&collection) {
                        self.stamp(&collection, &id)?;
                    }
                    if replaced.matched_count == 0 {
                        return Err(PatternError::InvalidRecord {
                            message: format!(
                                "collection '{collection}' has no document with _id {id} to replace"
                            ),
                        }
                        .into());
                    }
                }
                Write::Push {
                    collection,
                    id,
                    field,
                    values,
                } => {
                    let target = self.collection(&collection);
                    let filter =
                        doc! { "_id": { "$eq": id.clone() }, field.as_str(): { "$type": "array" } };
                    let push = doc! { "$push": { field.as_str(): { "$each": values } } };
                    let pushed = self.with_session(|session| {
                        let session = session.expect("in a transaction");
                        target.update_one(filter, push).session(session).run()
                    })?;
                    if mains.contains(&collection) {
                        self.stamp(&collection, &id)?;
                    }
                    if pushed.matched_count == 0 {
                        return Err(PatternError::InvalidRecord {
                            message: format!(
                                "collection '{collection}' has no document with _id {id} holding an array '{field}'"
                            ),
                        }
                        .into());
                    }
                }
                Write::Claim { collection, id } => {
                    // The stamp is the write that makes concurrent writers of the document
                    // conflict; the document itself stays as it is.
                    self.stamp(&collection, &id)?;
                }
                Write::Delete { collection, id } => {
                    let mut ids = vec![id];
                    while let Some(Write::Delete {
                        collection: next, ..
                    }) = writes.peek()
                    {
                        if *next != collection {
                            break;
                        }
                        let Some(Write::Delete { id, .. }) = writes.next() else {
                            unreachable!("peeked a delete")
                        };
                        ids.push(id);
                    }
                    let target = self.collection(&collection);
                    let stamps = self.collection(STAMP_COLLECTION);
                    let is_main = mains.contains(&collection);
                    self.with_session(|session| {
                        let session = session.expect("in a transaction");
                        if is_main {
                            let stamp_ids = ids
                                .iter()
                                .map(|id| Bson::Document(stamp_id(&collection, id)))
                                .collect::<Vec<_>>();
                            stamps
                                .delete_many(doc! { "_id": { "$in": stamp_ids } })
                                .session(&mut *session)
                                .run()?;
                        }
                        target
                            .delete_many(doc! { "_id": { "$in": ids } })
                            .session(session)
                            .run()
                    })?;
                }
            }
        }
        Ok(())
    }
}

/// The types an `_id` can have, with their rank in MongoDB's comparison order (types of one
/// rank compare by value with each other: one bracket), by their `$type` names.
const ID_TYPES: &[(u8, &str)] = &[
    (0, "minKey"),
    (1, "null"),
    (2, "int"),
    (2, "long"),
    (2, "double"),
    (2, "decimal"),
    (3, "symbol"),
    (3, "string"),
    (4, "object"),
    (6, "binData"),
    (7, "objectId"),
    (8, "bool"),
    (9, "date"),
    (10, "timestamp"),
    (12, "dbPointer"),
    (13, "javascript"),
    (14, "javascriptWithScope"),
    (15, "maxKey"),
];

/// The rank of a value's type in MongoDB's comparison order (see [`ID_TYPES`]).
fn type_rank(value: &Bson) -> u8 {
    match value {
        Bson::MinKey => 0,
        Bson::Null | Bson::Undefined => 1,
        Bson::Int32(_) | Bson::Int64(_) | Bson::Double(_) | Bson::Decimal128(_) => 2,
        Bson::Symbol(_) | Bson::String(_) => 3,
        Bson::Document(_) => 4,
        Bson::Array(_) => 5,
        Bson::Binary(_) => 6,
        Bson::ObjectId(_) => 7,
        Bson::Boolean(_) => 8,
        Bson::DateTime(_) => 9,
        Bson::Timestamp(_) => 10,
        Bson::RegularExpression(_) => 11,
        Bson::DbPointer(_) => 12,
        Bson::JavaScriptCode(_) => 13,
        Bson::JavaScriptCodeWithScope(_) => 14,
        Bson::MaxKey => 15,
    }
}

/// The `_id` of the write stamp of main document `id` of `collection`.
fn stamp_id(collection: &str, id: &Bson) -> Document {
    doc! { "c": collection, "id": id.clone() }
}

/// A seed for the backoff that differs between threads and processes.
fn seed() -> u64 {
    use std::hash::{BuildHasher, RandomState};
    RandomState::new().hash_one(std::thread::current().id()) | 1
}

impl ReadBackend for MongoBackend {
    type Error = Error;

    fn get(&self, collection: &str, id: &Bson) -> Result<Option<Document>> {
        let target = self.collection(collection);
        let filter = doc! { "_id": { "$eq": id.clone() } };
        self.with_session(|session| match session {
            Some(session) => target.find_one(filter).session(session).run(),
            None => target.find_one(filter).run(),
        })
    }

    fn find(&self, collection: &str, query: &Query) -> Result<Vec<Document>> {
        self.find_raw(collection, query)?
            .iter()
            .map(|raw| {
                Document::try_from(raw.as_ref()).map_err(|error| {
                    PatternError::InvalidRecord {
                        message: format!("a document of '{collection}' cannot be decoded: {error}"),
                    }
                    .into()
                })
            })
            .collect()
    }

    fn find_raw(&self, collection: &str, query: &Query) -> Result<Vec<RawDocumentBuf>> {
        if query.limit == Some(0) {
            // For the driver, a limit of 0 is no limit at all.
            return Ok(Vec::new());
        }
        let target = self.database.collection::<RawDocumentBuf>(collection);
        let options = FindOptions::builder()
            // Natural order is `_id` order, as in the embedded database and the reference.
            .sort(query.sort.clone().unwrap_or_else(|| doc! { "_id": 1 }))
            .skip((query.skip > 0).then_some(query.skip))
            .limit(
                query
                    .limit
                    .map(|limit| i64::try_from(limit).unwrap_or(i64::MAX)),
            )
            .build();
        let filter = query.filter.clone();
        self.with_session(|session| match session {
            Some(session) => {
                let mut cursor = target
                    .find(filter)
                    .with_options(options)
                    .session(&mut *session)
                    .run()?;
                cursor.iter(session).collect()
            }
            None => target.find(filter).with_options(options).run()?.collect(),
        })
    }

    fn count(&self, collection: &str, filter: &Document) -> Result<u64> {
        let target = self.collection(collection);
        let filter = filter.clone();
        self.with_session(|session| match session {
            Some(session) => target.count_documents(filter).session(session).run(),
            None => target.count_documents(filter).run(),
        })
    }

    fn policies(&self) -> Result<Vec<Policy>> {
        if let Some(policies) = self.policies.borrow().as_ref() {
            return Ok(policies.clone());
        }
        let stored = self.get(POLICY_COLLECTION, &Bson::from(POLICY_DOCUMENT_ID))?;
        let policies = records::from_document(stored.as_ref())?;
        if self.in_transaction.get() {
            *self.policies.borrow_mut() = Some(policies.clone());
        }
        Ok(policies)
    }

    /// A migration's next batch through the `_id` index: `{ _id: { $gt: through } }` finds
    /// the `_id`s after `through` of its own type bracket (MongoDB compares within one
    /// bracket: numbers, strings, documents...), then, if the batch is not full, `$type`
    /// finds those of the brackets after it. The trait's default, an `$expr` comparison,
    /// gives the same documents but no index serves it: every batch would read the whole
    /// collection.
    fn documents_after(
        &self,
        collection: &str,
        through: Option<&Bson>,
        limit: usize,
    ) -> Result<Vec<Document>> {
        let batch = |filter: Document, limit: usize| {
            self.find(
                collection,
                &Query {
                    filter,
                    sort: Some(doc! { "_id": 1 }),
                    skip: 0,
                    limit: Some(limit as u64),
                },
            )
        };
        let Some(through) = through else {
            return batch(Document::new(), limit);
        };
        let mut documents = batch(doc! { "_id": { "$gt": through.clone() } }, limit)?;
        let later: Vec<&str> = ID_TYPES
            .iter()
            .filter(|(rank, _)| *rank > type_rank(through))
            .map(|(_, name)| *name)
            .collect();
        if documents.len() < limit && !later.is_empty() {
            documents.extend(batch(
                doc! { "_id": { "$type": later } },
                limit - documents.len(),
            )?);
        }
        Ok(documents)
    }

    fn collection_exists(&self, collection: &str) -> Result<bool> {
        if self.known_collections.borrow().contains(collection) {
            return Ok(true);
        }
        // listCollections is not allowed in a transaction: the catalog is read outside it.
        let names = self
            .database
            .list_collection_names()
            .filter(doc! { "name": collection })
            .run()?;
        let exists = names.iter().any(|name| name == collection);
        if exists {
            self.known_collections
                .borrow_mut()
                .insert(collection.to_string());
        }
        Ok(exists)
    }

    fn index_keys(&self, collection: &str) -> Result<Vec<Document>> {
        match self.collection(collection).list_indexes().run() {
            Ok(indexes) => indexes
                .map(|index| Ok(index?.keys))
                .collect::<Result<Vec<_>>>(),
            Err(error) if server_code(&error) == Some(NAMESPACE_NOT_FOUND) => Ok(Vec::new()),
            Err(error) => Err(error.into()),
        }
    }
}

impl WriteBackend for MongoBackend {
    fn apply(&mut self, batch: Vec<Write>) -> Result<()> {
        if batch.is_empty() {
            return Ok(());
        }
        if self.in_transaction.get() {
            return self.apply_in_transaction(batch);
        }
        self.transaction(|backend| backend.apply_in_transaction(batch.clone()))
    }

    fn ensure_index(&mut self, collection: &str, keys: &Document) -> Result<()> {
        self.create(collection)?;
        // createIndexes on an index that exists with the same keys is a no-op.
        self.collection(collection)
            .create_index(IndexModel::builder().keys(keys.clone()).build())
            .run()?;
        Ok(())
    }

    fn create_collection(&mut self, collection: &str) -> Result<()> {
        self.create(collection)
    }

    fn drop_collection(&mut self, collection: &str) -> Result<()> {
        if self.in_transaction.get() {
            // A drop cannot be part of a transaction: it happens once the transaction that
            // asked for it (which removed what used the collection) has committed.
            self.known_collections.borrow_mut().remove(collection);
            self.pending_drops.push(collection.to_string());
            return Ok(());
        }
        self.drop_now(collection)
    }

    fn save_policies(&mut self, policies: Vec<Policy>) -> Result<()> {
        if !self.in_transaction.get() {
            return self.transaction(|backend| backend.save_policies(policies.clone()));
        }
        // `$set` rather than a replacement: a rename in progress recorded beside the
        // policies (`records::RenameIntent`) outlives a migration step of another policy.
        self.update_policy_document(doc! {
            "$set": { "policies": records::entries(&policies) },
        })?;
        *self.policies.borrow_mut() = Some(policies);
        Ok(())
    }
}

impl Transactional for MongoBackend {
    fn transaction<T>(&mut self, work: impl FnMut(&mut Self) -> Result<T>) -> Result<T> {
        run_transaction(self, |backend| backend, work)
    }
}

/// The transaction loop of [`Transactional::transaction`], for `work` on anything that holds
/// a backend (the backend itself, or a `Layer` over it, whose operations then run inline in
/// the transaction): one MongoDB transaction, run again from the start on
/// `TransientTransactionError`, committed again on `UnknownTransactionCommitResult`, within
/// the backend's time limit. When a transaction is already open, `work` is part of it.
pub(crate) fn run_transaction<H, T>(
    holder: &mut H,
    backend_of: impl Fn(&mut H) -> &mut MongoBackend,
    mut work: impl FnMut(&mut H) -> Result<T>,
) -> Result<T> {
    if backend_of(holder).in_transaction.get() {
        // Part of the transaction already open.
        return work(holder);
    }
    let started = Instant::now();
    let mut attempt = 0;
    'attempts: loop {
        attempt += 1;
        backend_of(holder).begin()?;
        let value = match work(holder) {
            Ok(value) => value,
            Err(error) => {
                let backend = backend_of(holder);
                backend.abort();
                if error.is_transient() && started.elapsed() < backend.time_limit {
                    backend.back_off(attempt);
                    continue 'attempts;
                }
                return Err(error);
            }
        };
        let backend = backend_of(holder);
        loop {
            match backend.commit() {
                Ok(()) => {
                    let drops = std::mem::take(&mut backend.pending_drops);
                    backend.end();
                    // The transaction is committed: a drop that fails now must not make
                    // the caller believe otherwise (and run it again). What it leaves is
                    // an empty side collection no policy names.
                    for collection in drops {
                        let _ = backend.drop_now(&collection);
                    }
                    return Ok(value);
                }
                Err(error)
                    if error.is_unknown_commit() && started.elapsed() < backend.time_limit => {}
                Err(error) if error.is_transient() && started.elapsed() < backend.time_limit => {
                    backend.end();
                    backend.back_off(attempt);
                    continue 'attempts;
                }
                Err(error) => {
                    backend.end();
                    backend.release_failed_commit();
                    return Err(error);
                }
            }
        }
    }
}
