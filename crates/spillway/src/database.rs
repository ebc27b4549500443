//! [`Database`]: opening a database directory, the published state readers share, the
//! write lock, and [`Transaction`]s.
//!
//! Commits are serialised by one mutex: a write (one operation, or a whole
//! `db.transaction`) builds a `WriteTxn` over the latest published state under the lock,
//! commits it as one store batch, and publishes the new snapshot with the catalog it
//! contains. A [`Transaction`] handle (`start_transaction`) builds its `WriteTxn` without the
//! lock over the state published when it started, claims the keys each of its operations
//! writes (a second open handle writing one fails at once: first writer wins), and takes
//! the lock only to commit, after the conflict check that moves it onto the latest state
//! (`WriteTxn::rebase`). Readers clone the published `Arc` and never wait for a writer. This module must never interpret
//! documents: operations live in `ops`.

use std::cell::RefCell;
use std::collections::{HashMap, VecDeque};
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, RwLock};
use std::time::Duration;

use spillway_doc::javascript;
use spillway_pattern::{Pattern, Violation, migration};
use spillway_store::{
    CompactionReport, Durability, KeyspaceId, RecoveryReport, Store, StoreOptions,
};

use crate::catalog::timeseries::not_supported_on_timeseries;
use crate::catalog::{
    CATALOG_KEYSPACE, Catalog, DOCS_KEYSPACE_PREFIX, INDEX_KEYSPACE_PREFIX,
    validate_collection_name,
};
use crate::change_log::ChangeLog;
use crate::error::{Error, ErrorKind, Result, codes};
use crate::maintenance::{self, CollectionStats, DatabaseStats, RepairReport, VerifyReport};
use crate::patterned::{ReaderBackend, TxnBackend};
use crate::results::ValidationWarning;
use crate::route::Route;
use crate::storage;
use crate::txn::{Published, WriteTxn};
use crate::write_history::WriteHistory;

/// How often the TTL reaper runs unless `DatabaseOptions::ttl_interval` says otherwise:
/// every 60 seconds, as MongoDB's TTL monitor (`ttlMonitorSleepSecs`).
pub const DEFAULT_TTL_INTERVAL: Duration = Duration::from_secs(60);

/// Options of [`Database::open_with`].
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct DatabaseOptions {
    /// When commits reach stable storage (default: fsync every commit).
    pub durability: Durability,
    /// Size of each log segment file (default: the store's, 64 MiB).
    pub segment_size: Option<u64>,
    /// How often the TTL reaper deletes expired documents (default: 60 seconds, MongoDB's
    /// `ttlMonitorSleepSecs`). The reaper thread runs only while some index has
    /// `expire_after`.
    pub ttl_interval: Duration,
}

impl Default for DatabaseOptions {
    fn default() -> Self {
        DatabaseOptions {
            durability: Durability::SyncEveryCommit,
            segment_size: None,
            ttl_interval: DEFAULT_TTL_INTERVAL,
        }
    }
}

impl DatabaseOptions {
    /// The same options with another durability mode.
    pub fn durability(self, durability: Durability) -> Self {
        DatabaseOptions { durability, ..self }
    }

    /// The same options with another TTL reaper interval.
    pub fn ttl_interval(self, ttl_interval: Duration) -> Self {
        DatabaseOptions {
            ttl_interval,
            ..self
        }
    }

    /// The same options with another log segment size (small segments make compaction
    /// reclaim space sooner; the store refuses sizes below 4 KiB).
    pub fn segment_size(self, segment_size: u64) -> Self {
        DatabaseOptions {
            segment_size: Some(segment_size),
            ..self
        }
    }
}

static NEXT_DATABASE_ID: AtomicU64 = AtomicU64::new(1);

thread_local! {
    /// Databases whose write lock this thread holds: a second write on the same thread would
    /// deadlock, so it is refused instead.
    static HELD_WRITE_LOCKS: RefCell<Vec<u64>> = const { RefCell::new(Vec::new()) };
}

pub(crate) struct Inner {
    id: u64,
    pub(crate) store: Store,
    published: RwLock<Arc<Published>>,
    write_lock: Mutex<()>,
    /// The keys open transaction handles have written, by keyspace, with the handle that
    /// wrote each first: a second handle writing one fails at once (first writer wins).
    claims: Mutex<HashMap<KeyspaceId, HashMap<Vec<u8>, u64>>>,
    /// The keys written by the commits since the oldest open handle began, for the handles'
    /// conflict checks. New states are published while it is locked.
    history: Mutex<WriteHistory>,
    next_handle: AtomicU64,
    /// Whether the TTL reaper thread was started, and how often it runs.
    pub(crate) ttl_reaper: AtomicBool,
    pub(crate) ttl_interval: Duration,
    /// Where commits record their changes for change streams, once one was opened.
    pub(crate) changes: ChangeLog,
    /// How long, in milliseconds, the server-side JavaScript of one command may run
    /// ([`Database::set_script_time_limit`]).
    script_time_limit_ms: AtomicU64,
    /// The newest [`VALIDATION_WARNINGS_KEPT`] writes a `warn` validator let through.
    validation_warnings: Mutex<VecDeque<ValidationWarning>>,
    /// Each collection's figures as last taken ([`Database::collection_stats`]).
    stats_cache: maintenance::StatsCache,
}

/// How many validation warnings a database keeps ([`Database::validation_warnings`]), as a
/// server's log keeps its recent lines.
pub const VALIDATION_WARNINGS_KEPT: usize = 1000;

/// The keys one transaction handle claimed; released when it ends (commit, rollback, drop),
/// when it also leaves the write history.
struct Claims {
    inner: Arc<Inner>,
    handle: u64,
    /// The sequence number of the state the handle began on, as registered in the history.
    base_seq: u64,
    keys: Vec<(KeyspaceId, Vec<u8>)>,
}

impl Drop for Claims {
    fn drop(&mut self) {
        self.release();
        self.inner.history().end(self.base_seq);
    }
}

impl Claims {
    fn release(&mut self) {
        if self.keys.is_empty() {
            return;
        }
        let mut claims = self
            .inner
            .claims
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        for (keyspace, key) in &self.keys {
            if let Some(owners) = claims.get_mut(keyspace) {
                if owners.get(key) == Some(&self.handle) {
                    owners.remove(key);
                }
                if owners.is_empty() {
                    claims.remove(keyspace);
                }
            }
        }
        self.keys.clear();
    }
}

/// Holds a database's write lock; releases it (and the thread's note of it) on drop.
pub(crate) struct WriteGuard<'a> {
    _guard: MutexGuard<'a, ()>,
    database_id: u64,
}

impl Drop for WriteGuard<'_> {
    fn drop(&mut self) {
        HELD_WRITE_LOCKS.with(|held| held.borrow_mut().retain(|&id| id != self.database_id));
    }
}

impl Inner {
    pub(crate) fn published(&self) -> Arc<Published> {
        Arc::clone(
            &self
                .published
                .read()
                .unwrap_or_else(std::sync::PoisonError::into_inner),
        )
    }

    pub(crate) fn history(&self) -> MutexGuard<'_, WriteHistory> {
        self.history
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    pub(crate) fn lock_writer(&self) -> Result<WriteGuard<'_>> {
        let held = HELD_WRITE_LOCKS.with(|held| held.borrow().contains(&self.id));
        if held {
            return Err(Error::new(ErrorKind::TransactionAborted {
                message: "this thread is inside a transaction of this database; pass the transaction to the operation with .session(tx)".into(),
            })
            .with_code(codes::ILLEGAL_OPERATION));
        }
        let guard = self
            .write_lock
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        HELD_WRITE_LOCKS.with(|held| held.borrow_mut().push(self.id));
        Ok(WriteGuard {
            _guard: guard,
            database_id: self.id,
        })
    }

    /// Commits a transaction (the caller holds the write lock) and publishes its result.
    /// A transaction whose base is no longer the published state (a [`Transaction`] handle)
    /// is first checked for conflicts and moved onto it (`WriteTxn::rebase`); for every
    /// other write the base is the published state, and the check is a pointer comparison.
    pub(crate) fn commit(&self, mut txn: WriteTxn) -> Result<()> {
        if txn.is_empty() {
            return Ok(());
        }
        let current = self.published();
        txn.rebase(&current, &self.history())?;
        self.changes.record(&mut txn, &current)?;
        if !txn.has_writes() {
            // Only notes for change streams, and no stream has ever been opened.
            return Ok(());
        }
        let warnings = std::mem::take(&mut txn.validation_warnings);
        let committed = txn.into_batch(&self.store)?;
        let seq = self.store.commit(committed.batch)?;
        self.log_validation_warnings(warnings);
        let published = Arc::new(current.after_commit(
            self.store.snapshot(),
            committed.catalog,
            &committed.written,
            seq,
        ));
        // Recorded and published under the history's lock: a handle that begins on this state
        // finds its commit recorded, and one that began before finds it recorded too.
        let mut history = self.history();
        history.record(seq, committed.keys);
        *self
            .published
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = published;
        drop(history);
        Ok(())
    }

    /// Keeps the warnings of a commit, dropping the oldest past [`VALIDATION_WARNINGS_KEPT`].
    fn log_validation_warnings(&self, warnings: Vec<ValidationWarning>) {
        if warnings.is_empty() {
            return;
        }
        let mut log = self
            .validation_warnings
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let at = bson::DateTime::now();
        for mut warning in warnings {
            warning.at = at;
            log.push_back(warning);
        }
        while log.len() > VALIDATION_WARNINGS_KEPT {
            log.pop_front();
        }
    }

    /// Runs `write` in its own transaction and commits it.
    pub(crate) fn write<R>(
        &self,
        write: impl FnOnce(&mut WriteTxn, &Store) -> Result<R>,
    ) -> Result<R> {
        let _guard = self.lock_writer()?;
        let mut txn = WriteTxn::new(self.published());
        let result = write(&mut txn, &self.store)?;
        self.commit(txn)?;
        Ok(result)
    }
}

/// An open database: one directory (or memory), many collections.
///
/// Cheap to clone (handles share one store); `Send` and `Sync`. Only one process may open a
/// directory at a time ([`ErrorKind::Storage`] with the store's `Locked` error otherwise).
#[derive(Clone)]
pub struct Database {
    pub(crate) inner: Arc<Inner>,
}

impl std::fmt::Debug for Database {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Database")
            .field("path", &self.inner.store.path())
            .finish_non_exhaustive()
    }
}

impl Database {
    /// Opens (or creates) the database in directory `path`, fsyncing every commit.
    pub fn open(path: impl AsRef<Path>) -> Result<Database> {
        Database::open_with(path, &DatabaseOptions::default())
    }

    /// Opens (or creates) the database in directory `path` with `options`.
    pub fn open_with(path: impl AsRef<Path>, options: &DatabaseOptions) -> Result<Database> {
        let mut store_options = StoreOptions {
            durability: options.durability,
            ..StoreOptions::default()
        };
        if let Some(segment_size) = options.segment_size {
            store_options.segment_size = segment_size;
        }
        Database::from_store_with(Store::open(path, store_options)?, options.ttl_interval)
    }

    /// Opens the existing database in directory `path` for reading only, for example on
    /// read-only media or while it must not change: nothing is created, deleted or written
    /// (recovery happens in memory: a torn tail is ignored, not zeroed; an interrupted
    /// policy migration is not resumed). Other read-only handles may open it at the same
    /// time, a writer may not. Every write fails with [`ErrorKind::Storage`] holding the
    /// store's `ReadOnly` error ("... refused: the database in ... was opened read-only").
    pub fn open_read_only(path: impl AsRef<Path>) -> Result<Database> {
        let store = Store::open_read_only(path)?;
        let snapshot = store.snapshot();
        let catalog = Catalog::load(&store, &snapshot)?;
        Database::with_catalog(store, catalog, DEFAULT_TTL_INTERVAL)
    }

    /// A fresh database in memory, for tests: nothing is persisted.
    pub fn open_in_memory() -> Result<Database> {
        Database::from_store(Store::open_in_memory()?)
    }

    /// A database over an already open store (for example one opened on a fault-injecting
    /// backend). Keyspaces the catalog does not name but that look like collection or index
    /// keyspaces (left by a crash between creating a keyspace and committing the catalog)
    /// are dropped.
    pub fn from_store(store: Store) -> Result<Database> {
        Database::from_store_with(store, DEFAULT_TTL_INTERVAL)
    }

    fn from_store_with(store: Store, ttl_interval: Duration) -> Result<Database> {
        let snapshot = store.snapshot();
        let catalog = Catalog::load(&store, &snapshot)?;
        let referenced = catalog.referenced_keyspaces();
        for (name, _) in store.keyspaces() {
            let ours =
                name.starts_with(DOCS_KEYSPACE_PREFIX) || name.starts_with(INDEX_KEYSPACE_PREFIX);
            if ours && !referenced.contains(&name.as_str()) {
                store.drop_keyspace(&name)?;
            }
        }
        store.keyspace(CATALOG_KEYSPACE)?;
        let database = Database::with_catalog(store, catalog, ttl_interval)?;
        let unfinished = database
            .inner
            .published()
            .catalog
            .policies
            .iter()
            .any(|policy| policy.progress != spillway_pattern::Progress::Active);
        if unfinished {
            // A crash interrupted a policy's migration: finish it. If it fails again, the
            // database still opens; writes to the collection are refused with an error that
            // names `resume_patterns`, and reads see consistent logical documents.
            let guard = database.inner.lock_writer()?;
            let _unfinished = database.run_migrations();
            drop(guard);
        }
        if database.has_ttl_indexes() {
            database.start_ttl_reaper();
        }
        Ok(database)
    }

    fn with_catalog(store: Store, catalog: Catalog, ttl_interval: Duration) -> Result<Database> {
        let published = Arc::new(Published::opened(store.snapshot(), catalog));
        let changes = ChangeLog::opened(&store)?;
        Ok(Database {
            inner: Arc::new(Inner {
                id: NEXT_DATABASE_ID.fetch_add(1, Ordering::Relaxed),
                store,
                published: RwLock::new(published),
                write_lock: Mutex::new(()),
                claims: Mutex::new(HashMap::new()),
                history: Mutex::new(WriteHistory::default()),
                next_handle: AtomicU64::new(1),
                ttl_reaper: AtomicBool::new(false),
                ttl_interval,
                changes,
                script_time_limit_ms: AtomicU64::new(
                    u64::try_from(javascript::DEFAULT_SCRIPT_TIME_LIMIT.as_millis())
                        .unwrap_or(u64::MAX),
                ),
                validation_warnings: Mutex::new(VecDeque::new()),
                stats_cache: maintenance::StatsCache::default(),
            }),
        })
    }

    /// Bounds the server-side JavaScript (`$where`) of each command run through the command
    /// layer (`spillway serve`, the shell) to `limit` in all, with or without `maxTimeMS`
    /// (the smaller wins); past it the command fails with `MaxTimeMSExpired` (50). The
    /// default is [`javascript::DEFAULT_SCRIPT_TIME_LIMIT`] (5 s), which also bounds each
    /// `$where` call made through this API directly.
    pub fn set_script_time_limit(&self, limit: Duration) {
        let milliseconds = u64::try_from(limit.as_millis()).unwrap_or(u64::MAX).max(1);
        self.inner
            .script_time_limit_ms
            .store(milliseconds, Ordering::Relaxed);
    }

    /// The writes committed since the database was opened that a validator with
    /// `validationAction: "warn"` did not accept (MongoDB logs them), oldest first: the newest
    /// [`VALIDATION_WARNINGS_KEPT`], kept in memory only.
    pub fn validation_warnings(&self) -> Vec<ValidationWarning> {
        self.inner
            .validation_warnings
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .iter()
            .cloned()
            .collect()
    }

    /// The limit [`Database::set_script_time_limit`] set.
    pub fn script_time_limit(&self) -> Duration {
        Duration::from_millis(self.inner.script_time_limit_ms.load(Ordering::Relaxed))
    }

    /// What opening the database found and fixed: whether a checkpoint was used, how many
    /// log frames were replayed, the torn tail dropped after a crash (the unacknowledged end
    /// of the log: which file, where, how many bytes), a damaged checkpoint replaced by the
    /// fallback (the previous checkpoint and the log after it; healed at once by a new
    /// checkpoint unless the database is read-only), orphan files deleted. Other damage fails
    /// the open instead.
    pub fn recovery_report(&self) -> &RecoveryReport {
        self.inner.store.recovery_report()
    }

    /// True if the database was opened with [`Database::open_read_only`].
    pub fn is_read_only(&self) -> bool {
        self.inner.store.is_read_only()
    }

    /// Creates collection `name` if it does not exist (no options).
    pub(crate) fn ensure_collection(&self, name: &str) -> Result<()> {
        validate_collection_name(name)?;
        self.inner
            .write(|txn, store| storage::ensure_collection(txn, store, name))
    }

    /// The names and types (`"collection"` or `"view"`) of the collections, sorted.
    pub(crate) fn collection_kinds(&self) -> Vec<(String, &'static str)> {
        self.inner
            .published()
            .catalog
            .collections
            .iter()
            .map(|(name, meta)| {
                let kind = if meta.view.is_some() {
                    "view"
                } else {
                    "collection"
                };
                (name.clone(), kind)
            })
            .collect()
    }

    /// Runs `body` as one transaction: its writes (through operations given `.session(tx)`)
    /// commit together as one atomic batch when it returns `Ok`, and leave nothing when it
    /// returns `Err` or when one of its operations failed. Reads inside it see its own writes.
    /// Other writers wait while it runs; readers do not.
    ///
    /// This form is pessimistic: it holds the database's write lock from start to end, so it
    /// never fails with [`ErrorKind::WriteConflict`] and needs no retry loop, and `body` may
    /// have effects outside the database that must not run twice. The price is that every
    /// other write (a [`Transaction`] handle's commit included) waits while `body` runs: keep
    /// it short, and use [`Database::start_transaction`] for transactions that live across
    /// requests or wait for anything. A handle whose keys this transaction changed gets
    /// `WriteConflict` when it commits afterwards, as with any other commit.
    pub fn transaction<R>(&self, body: impl FnOnce(&mut Transaction) -> Result<R>) -> Result<R> {
        let guard = self.inner.lock_writer()?;
        let mut transaction = Transaction {
            database: self.clone(),
            txn: WriteTxn::new(self.inner.published()),
            failure: None,
            claims: None,
            idle: false,
        };
        let result = body(&mut transaction)?;
        if let Some(failure) = transaction.failure {
            return Err(Error::new(ErrorKind::TransactionAborted {
                message: format!(
                    "an operation failed inside the transaction ({failure}), so nothing was committed"
                ),
            }));
        }
        self.inner.commit(transaction.txn)?;
        drop(guard);
        Ok(result)
    }

    /// Starts a transaction on the state committed now, as an owned handle that holds no
    /// lock: operations given `.session(&mut tx)` read that state with the transaction's own
    /// writes applied, and buffer their writes in it; [`Transaction::commit`] commits them
    /// all as one atomic batch, unless a commit since the start conflicts with them (see
    /// [`Transaction`] for the rule). Other writers, other handles and readers go on
    /// meanwhile. The handle is `Send` and `'static`: a server may keep it between requests
    /// and finish it on another thread.
    ///
    /// # Errors
    /// None today; the `Result` leaves room for a refusal (a database closing).
    pub fn start_transaction(&self) -> Result<Transaction> {
        // Registered while the history is locked: no commit can publish in between.
        let (base, base_seq) = {
            let mut history = self.inner.history();
            let base = self.inner.published();
            let base_seq = base.snapshot.seq();
            history.begin(base_seq);
            (base, base_seq)
        };
        let mut txn = WriteTxn::new(base);
        txn.track_writes();
        Ok(Transaction {
            database: self.clone(),
            txn,
            failure: None,
            claims: Some(Claims {
                inner: Arc::clone(&self.inner),
                handle: self.inner.next_handle.fetch_add(1, Ordering::Relaxed),
                base_seq,
                keys: Vec::new(),
            }),
            idle: false,
        })
    }

    /// Writes a checkpoint of the store's key directory, so that the next open replays less.
    pub fn checkpoint(&self) -> Result<()> {
        Ok(self.inner.store.checkpoint()?)
    }

    /// Makes every commit so far durable (useful with the buffered durability modes).
    pub fn sync(&self) -> Result<()> {
        Ok(self.inner.store.sync()?)
    }

    /// Checks the whole database without changing it: every log frame and stored value
    /// against its checksum (the store's own check), every document against the key it is
    /// stored under, and every index against the entries its documents produce. Reads one
    /// consistent snapshot; writers are not blocked. Memory grows with the largest index.
    pub fn verify(&self) -> Result<VerifyReport> {
        let storage = self.inner.store.verify()?;
        let mut report = VerifyReport {
            frames_checked: storage.frames_checked,
            values_checked: storage.values_checked,
            storage_damage: storage.damage,
            torn_tail: storage.torn_tail,
            checkpoint_fallback: self
                .inner
                .store
                .recovery_report()
                .checkpoint_fallback
                .clone(),
            ..VerifyReport::default()
        };
        maintenance::verify_collections(&self.inner.published(), &mut report)?;
        Ok(report)
    }

    /// Per-collection figures (documents, stored bytes, the largest documents, index entry
    /// counts) from one snapshot, and the store's live and dead bytes. Reads every document's
    /// size, not its contents, of each collection written since its figures were last taken;
    /// the figures of the others are kept from then.
    pub fn stats(&self) -> Result<DatabaseStats> {
        let collections =
            maintenance::collection_stats(&self.inner.published(), &self.inner.stats_cache)?;
        let store = self.inner.store.stats();
        let sum = |figure: fn(&spillway_store::SegmentStats) -> u64| {
            store.segments.iter().map(figure).sum::<u64>()
        };
        Ok(DatabaseStats {
            collections,
            segments: store.segments.len() as u64,
            file_bytes: sum(|segment| segment.file_bytes),
            written_bytes: sum(|segment| segment.written_bytes),
            live_bytes: sum(|segment| segment.live_bytes),
            dead_bytes: sum(|segment| segment.dead_bytes),
        })
    }

    /// The figures of one collection (as [`Database::stats`] gives them for every collection),
    /// reading that collection only, and only when it was written since its figures were last
    /// taken (else they are answered as kept); `None` when it does not exist.
    pub fn collection_stats(&self, name: &str) -> Result<Option<CollectionStats>> {
        let state = self.inner.published();
        match state.catalog.collections.get(name) {
            Some(meta) => self.inner.stats_cache.stats_of(&state, meta).map(Some),
            None => Ok(None),
        }
    }

    /// Rewrites the live records of mostly-dead log segments into new ones and deletes the
    /// old segments once no reader uses them (the store's compaction). Readers and writers
    /// go on meanwhile; what is stored does not change, and a crash at any point leaves
    /// either the old segments or the new ones in force, never a mixture.
    ///
    /// The store keeps the old segments for its fallback checkpoint (the one before the
    /// compaction's) until the next checkpoint; this writes that checkpoint at once, so the
    /// space is free when `compact` returns. If that checkpoint fails, the compaction stands
    /// and the old segments go at the next checkpoint.
    pub fn compact(&self) -> Result<CompactionReport> {
        let report = self.inner.store.compact()?;
        if !report.segments_compacted.is_empty() {
            let _ = self.inner.store.checkpoint();
        }
        Ok(report)
    }

    /// Salvages a damaged database in directory `path`, which must not be open: keeps every
    /// intact commit, skips damaged bytes, drops documents whose bytes are damaged or gone,
    /// moves the old files to a backup directory inside `path`, rebuilds catalog records that
    /// were lost from the keyspaces that survive, then rebuilds every index that no longer
    /// agrees with the surviving documents, and brings every pattern policy's layout back
    /// (main documents resynced with their surviving side documents, orphaned side documents
    /// deleted). The report says what was lost (documents a dropped commit rolled back named
    /// by `_id`), rebuilt and still violated; an intact database is left unchanged.
    pub fn repair(path: impl AsRef<Path>, options: &DatabaseOptions) -> Result<RepairReport> {
        let mut store_options = StoreOptions {
            durability: options.durability,
            ..StoreOptions::default()
        };
        if let Some(segment_size) = options.segment_size {
            store_options.segment_size = segment_size;
        }
        maintenance::repair(path.as_ref(), store_options)
    }
}

/// An open transaction: pass it to operations with `.session(&mut tx)`.
///
/// Either the body of [`Database::transaction`] (which holds the write lock while it runs
/// and commits when the body returns `Ok`), or a handle from [`Database::start_transaction`],
/// finished with [`Transaction::commit`] or [`Transaction::rollback`] (dropping it rolls back
/// too).
///
/// # Isolation and conflicts
///
/// A transaction reads the snapshot committed when it started, plus its own writes: commits
/// made after it started are invisible to it (snapshot isolation). Its writes are buffered;
/// nothing is visible to anyone else before the commit, which writes everything as one store
/// batch (one frame: all or nothing, after a crash as before it).
///
/// Conflicts are between writes, first come first served, as in MongoDB. A conflict fails
/// with [`ErrorKind::WriteConflict`] (code 112, label `TransientTransactionError`) and
/// leaves nothing of the transaction: the application may run it again from the start. One
/// that an operation finds fails that operation and dooms the transaction (its commit then
/// fails with [`ErrorKind::TransactionAborted`], code 251 NoSuchTransaction, with the same
/// label); one that the commit finds fails the commit.
/// - An operation of a handle fails at once when it writes a key that another open handle
///   wrote first (first writer wins), or one that a commit changed since the handle started.
/// - The commit takes the write lock for a moment and refuses the transaction (first
///   committer wins) when a commit after its start — a write outside any transaction, the
///   closure form, another handle — wrote a key it writes (even with the value it had, or
///   deleting a document inserted since), or
///   created, dropped or re-indexed a collection it writes, or declared, removed or migrated
///   a pattern policy of such a collection, or wrote to a collection this transaction
///   creates an index on, drops an index of, or drops.
///
/// The keys are everything the transaction writes: documents (inserted, updated, replaced or
/// deleted), index entries (a unique index's entries are keyed by the indexed values alone,
/// so two transactions that give one unique value to different documents conflict; the
/// second would have been a duplicate key) and the side documents of pattern policies.
/// Reads are not checked: two transactions that each read what the other writes may both
/// commit (write skew), as in MongoDB. Writes outside a transaction and the closure form run
/// on the latest state under the write lock: they never wait for a handle and never
/// conflict themselves.
///
/// ```
/// use spillway::{Database, ErrorKind, doc, bson::Document};
///
/// let db = Database::open_in_memory()?;
/// let accounts = db.collection::<Document>("accounts");
/// accounts.insert_one(doc! { "_id": 1, "balance": 100 }).run()?;
///
/// let mut first = db.start_transaction()?;
/// let mut second = db.start_transaction()?;
/// accounts.update_one(doc! { "_id": 1 }, doc! { "$inc": { "balance": -30 } })
///     .session(&mut first).run()?;
/// let error = accounts.update_one(doc! { "_id": 1 }, doc! { "$inc": { "balance": -50 } })
///     .session(&mut second).run().unwrap_err();        // the first writer wins
/// assert!(matches!(error.kind(), ErrorKind::WriteConflict { .. }));
/// assert_eq!(error.code(), Some(112));
/// assert_eq!(error.labels(), ["TransientTransactionError"]);
/// first.commit()?;
/// assert_eq!(second.commit().unwrap_err().code(), Some(251));
///
/// // A write outside any transaction is never refused: the handle's commit is.
/// let mut late = db.start_transaction()?;
/// accounts.update_one(doc! { "_id": 1 }, doc! { "$inc": { "balance": -1 } })
///     .session(&mut late).run()?;
/// accounts.update_one(doc! { "_id": 1 }, doc! { "$inc": { "balance": 5 } }).run()?;
/// assert_eq!(late.commit().unwrap_err().code(), Some(112));
/// let account = accounts.find_one(doc! { "_id": 1 }).run()?.unwrap();
/// assert_eq!(account.get_i32("balance")?, 75);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct Transaction {
    pub(crate) database: Database,
    pub(crate) txn: WriteTxn,
    /// The first failed operation, which dooms the transaction.
    pub(crate) failure: Option<String>,
    /// A handle's claims on the keys it wrote (`None` in the closure form, which holds the
    /// write lock instead).
    claims: Option<Claims>,
    /// The stand-in a [`crate::ClientSession`] holds between transactions: an operation given it
    /// runs on its own, as an operation in a driver's session outside a transaction does.
    pub(crate) idle: bool,
}

impl Transaction {
    /// Records, for change streams, that this transaction drops the MongoDB database whose
    /// collections are stored under `prefix` (the command layer's `dropDatabase`): a
    /// `dropDatabase` event follows the collections' `drop` events.
    pub(crate) fn note_database_drop(&mut self, prefix: &str) {
        self.txn
            .note_change(bson::doc! { "op": "dropDatabase", "ns": prefix });
    }

    /// Records, for change streams, a `collMod` of `collection` that changed nothing: MongoDB
    /// reports a `modify` event for it all the same (one that changes options is seen in the
    /// catalog).
    pub(crate) fn note_modify(&mut self, collection: &str) {
        self.txn
            .note_change(bson::doc! { "op": "modify", "ns": collection, "spec": {}, "state": {} });
    }
}

impl Transaction {
    /// The stand-in a session holds while no transaction is in progress (see `idle`).
    pub(crate) fn idle(database: &Database) -> Transaction {
        Transaction {
            database: database.clone(),
            txn: WriteTxn::new(database.inner.published()),
            failure: None,
            claims: None,
            idle: true,
        }
    }
}

impl std::fmt::Debug for Transaction {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Transaction")
            .field("failed", &self.failure.is_some())
            .finish_non_exhaustive()
    }
}

impl Transaction {
    /// The error to return from the body of [`Database::transaction`] to stop it on purpose:
    /// nothing it wrote is committed.
    pub fn abort(message: impl Into<String>) -> Error {
        Error::new(ErrorKind::TransactionAborted {
            message: message.into(),
        })
    }

    /// Commits the handle's writes as one atomic batch, or refuses them all.
    ///
    /// # Errors
    /// [`ErrorKind::WriteConflict`] when a commit since the transaction started changed what
    /// it writes (see [`Transaction`]); [`ErrorKind::TransactionAborted`] when one of its
    /// operations failed (the first failure dooms the transaction, as in MongoDB), or when
    /// called inside the body of [`Database::transaction`] on the same thread; a storage
    /// error. Nothing is committed in every case.
    pub fn commit(self) -> Result<()> {
        let Transaction {
            database,
            txn,
            failure,
            claims,
            idle: _,
        } = self;
        if let Some(failure) = failure {
            return Err(Error::new(ErrorKind::TransactionAborted {
                message: format!(
                    "an operation failed inside the transaction ({failure}), so nothing was committed"
                ),
            }));
        }
        let inner = &database.inner;
        let guard = inner.lock_writer()?;
        let committed = inner.commit(txn);
        drop(guard);
        // Released after the new state is published: a handle that then writes one of these
        // keys sees the commit (and conflicts) instead.
        drop(claims);
        committed
    }

    /// Dooms the transaction after its operation failed with `error`: it can only be
    /// abandoned now, so a handle gives up its claims at once (as MongoDB aborts a
    /// transaction whose operation failed).
    pub(crate) fn fail(&mut self, error: &Error) {
        self.failure = Some(error.to_string());
        if let Some(claims) = &mut self.claims {
            claims.release();
        }
    }

    /// Runs after each operation of a handle: claims the keys the operation wrote, failing
    /// with [`ErrorKind::WriteConflict`] (and dooming the transaction) when another open
    /// handle wrote one first, or when a commit since this transaction started changed one.
    /// MongoDB reports these conflicts on the write too; the commit would refuse them anyway.
    pub(crate) fn claim_writes(&mut self) -> Result<()> {
        let written = self.txn.take_journal();
        let Some(claims) = &mut self.claims else {
            return Ok(());
        };
        if written.is_empty() {
            return Ok(());
        }
        let current = self.database.inner.published();
        let history = self.database.inner.history();
        let mut owners = self
            .database
            .inner
            .claims
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        for (keyspace, key) in written {
            if !self.txn.is_shared(keyspace) {
                continue;
            }
            let keyspace_owners = owners.entry(keyspace).or_default();
            let owned = match keyspace_owners.get(&key) {
                Some(&owner) if owner == claims.handle => true,
                Some(_) => {
                    return Err(Error::write_conflict(
                        "another open transaction wrote a document or index entry this operation writes",
                    ));
                }
                None => false,
            };
            // Also for a key this handle claimed before: a write outside any transaction may
            // have changed it since.
            if self
                .txn
                .changed_since_base(&current, &history, keyspace, &key)?
            {
                return Err(Error::write_conflict(
                    "a commit after this transaction began changed a document or index entry this operation writes",
                ));
            }
            if !owned {
                keyspace_owners.insert(key.clone(), claims.handle);
                claims.keys.push((keyspace, key));
            }
        }
        Ok(())
    }

    /// Discards the handle's writes (as dropping it does).
    pub fn rollback(self) {
        drop(self);
    }

    pub(crate) fn check_database(&self, database: &Database) -> Result<()> {
        if !Arc::ptr_eq(&self.database.inner, &database.inner) {
            return Err(Transaction::abort(
                "the collection belongs to another database than the transaction",
            )
            .with_code(codes::ILLEGAL_OPERATION));
        }
        if let Some(failure) = &self.failure {
            return Err(Transaction::abort(format!(
                "an earlier operation of this transaction failed ({failure})"
            )));
        }
        Ok(())
    }
}

/// Pattern policies: declared, removed, migrated and verified through spillway-pattern over
/// the write transaction (`patterned::TxnBackend`).
impl Database {
    /// Declares a pattern policy: from now on the engine keeps `collection.field` in the
    /// policy's layout through every write, and migrates the documents already stored (in
    /// batches, each its own commit; a crash resumes at the next open). Creates the side
    /// collection and the index it needs.
    ///
    /// ```
    /// use spillway::{Database, Pattern, doc};
    ///
    /// let db = Database::open_in_memory()?;
    /// db.create_collection("sales").run()?;
    /// db.set_pattern(Pattern::outlier("sales", "customers_purchased")
    ///     .threshold(50)
    ///     .link_field("book_id"))?;
    /// # Ok::<(), spillway::Error>(())
    /// ```
    ///
    /// Declaring a policy never changes the user's data. A side collection that already
    /// holds documents is adopted only when every one of them is in the layout's shape (a
    /// layout made by hand, as the seeds describe: `has_extras` and an `extra_sales` document
    /// per book, or a `reviews` collection beside embedded reviews): its elements join the
    /// logical arrays and are rewritten into the policy's layout. Everything is checked
    /// before anything is written.
    ///
    /// # Errors
    /// [`ErrorKind::Pattern`] when the policy is invalid on its own (a threshold of 0...),
    /// names a field already managed or written by another
    /// policy, or a side collection that belongs to another policy; when a stored document
    /// cannot take the layout (a subset element that is not a document) or holds the flag
    /// field with a value the policy would not write; when the side collection exists with a
    /// document not in the layout's shape. The message names the field and one `_id`.
    pub fn set_pattern(&self, pattern: impl Into<Pattern>) -> Result<()> {
        let pattern: Pattern = pattern.into();
        pattern.validate()?;
        let state = self.inner.published();
        for name in [pattern.collection(), pattern.side_collection()] {
            if let Route::TimeSeries(_) = Route::of(&state.catalog, name) {
                return Err(not_supported_on_timeseries(name, "a pattern policy"));
            }
        }
        drop(state);
        let guard = self.inner.lock_writer()?;
        let mut txn = WriteTxn::new(self.inner.published());
        // As MongoDB creates a collection the first time a write names it, declaring a policy
        // creates its collection: a policy can come before the first import. In the same
        // transaction, so a refused policy leaves no empty collection behind.
        storage::ensure_collection(&mut txn, &self.inner.store, pattern.collection())?;
        migration::declare(
            &mut TxnBackend {
                txn: &mut txn,
                store: &self.inner.store,
            },
            pattern,
        )?;
        self.inner.commit(txn)?;
        self.run_migrations()?;
        drop(guard);
        Ok(())
    }

    /// Removes the policy on `collection.field`: every logical array is folded back into its
    /// main document and its side documents are deleted (in batches, resumable like a
    /// migration), then the side collection is dropped if declaring the policy created it and
    /// nothing is left in it; an adopted side collection stays.
    ///
    /// # Errors
    /// [`ErrorKind::Pattern`] when there is no such policy; a logical document over 16 MiB
    /// cannot be folded back ([`ErrorKind::DocumentTooLarge`]; the policy then stays in
    /// removal, and writes to the collection are refused until it is resumed or re-applied).
    pub fn remove_pattern(&self, collection: &str, field: &str) -> Result<()> {
        let guard = self.inner.lock_writer()?;
        let mut txn = WriteTxn::new(self.inner.published());
        migration::remove(
            &mut TxnBackend {
                txn: &mut txn,
                store: &self.inner.store,
            },
            collection,
            field,
        )?;
        self.inner.commit(txn)?;
        self.run_migrations()?;
        drop(guard);
        Ok(())
    }

    /// The declared policies, in declaration order.
    pub fn patterns(&self) -> Vec<Pattern> {
        self.inner
            .published()
            .catalog
            .policies
            .iter()
            .map(|policy| policy.pattern.clone())
            .collect()
    }

    /// Finishes migrations that a crash or an error interrupted (opening a database does
    /// this too, and leaves the policy unfinished if it fails).
    ///
    /// # Errors
    /// The migration's error.
    pub fn resume_patterns(&self) -> Result<()> {
        let guard = self.inner.lock_writer()?;
        self.run_migrations()?;
        drop(guard);
        Ok(())
    }

    /// Runs every unfinished migration to its end; the caller holds the write lock.
    pub(crate) fn run_migrations(&self) -> Result<()> {
        loop {
            let state = self.inner.published();
            let Some(policy) = migration::unfinished(&state.catalog.policies).cloned() else {
                return Ok(());
            };
            let mut txn = WriteTxn::new(state);
            migration::migration_step(
                &mut TxnBackend {
                    txn: &mut txn,
                    store: &self.inner.store,
                },
                &policy,
                migration::MIGRATION_BATCH,
            )?;
            self.inner.commit(txn)?;
        }
    }

    /// Checks every invariant of every policy; one [`Violation`] per problem.
    ///
    /// # Errors
    /// A read error.
    pub fn verify_patterns(&self) -> Result<Vec<Violation>> {
        let state = self.inner.published();
        let backend = ReaderBackend { reader: &*state };
        let mut violations = Vec::new();
        for policy in &state.catalog.policies {
            violations.extend(spillway_pattern::verify(policy, &backend)?);
        }
        Ok(violations)
    }
}
