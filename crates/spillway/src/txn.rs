//! The one write path, and the read views queries run on.
//!
//! - [`Published`]: a store snapshot and the catalog as of that snapshot, swapped atomically
//!   after every commit, so a reader never sees a catalog newer or older than its data.
//! - [`WriteTxn`]: buffers the puts and deletes of one write (a single operation, a whole
//!   `db.transaction`, or a transaction handle) per keyspace over a `Published` base, answers
//!   reads with its own writes applied, and turns everything, catalog changes included, into
//!   one `WriteBatch`. A handle's base may be older than the latest state when it commits:
//!   [`WriteTxn::rebase`] checks for conflicts (first committer wins) reading only the
//!   written keys, and moves the catalog changes onto the latest catalog.
//!
//! Every logical write of the facade goes through `WriteTxn`, the pattern engine's side
//! documents included (`patterned::TxnBackend` stages its batches here), so a logical write
//! commits as one store batch. This module must never commit anything itself, and
//! never let a read see a write of another uncommitted transaction.

use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::iter::Peekable;
use std::ops::Bound;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use spillway_pattern::Policy;
use spillway_store::{KeyspaceId, Snapshot, Store, WriteBatch};

use crate::catalog::{
    CATALOG_KEYSPACE, Catalog, CollectionMeta, META_KEY, policy_key, policy_record,
};
use crate::error::{Error, Result};
use crate::write_history::{KeyOf, WriteHistory};

/// A byte range of one keyspace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct KeyRange {
    pub(crate) low: Bound<Vec<u8>>,
    pub(crate) high: Bound<Vec<u8>>,
}

impl KeyRange {
    pub(crate) fn all() -> KeyRange {
        KeyRange {
            low: Bound::Unbounded,
            high: Bound::Unbounded,
        }
    }

    fn as_slices(&self) -> (Bound<&[u8]>, Bound<&[u8]>) {
        (as_slice(&self.low), as_slice(&self.high))
    }
}

fn as_slice(bound: &Bound<Vec<u8>>) -> Bound<&[u8]> {
    match bound {
        Bound::Included(bytes) => Bound::Included(bytes.as_slice()),
        Bound::Excluded(bytes) => Bound::Excluded(bytes.as_slice()),
        Bound::Unbounded => Bound::Unbounded,
    }
}

/// `(key, value)` pairs, borrowed from a snapshot or a transaction's buffer.
pub(crate) type Entries<'a> = Box<dyn Iterator<Item = Result<(Cow<'a, [u8]>, Cow<'a, [u8]>)>> + 'a>;

/// What queries read from: a snapshot, or a transaction's view of it.
pub(crate) trait Reader {
    /// The catalog as this view sees it.
    fn catalog(&self) -> &Catalog;
    /// One value.
    fn get(&self, keyspace: KeyspaceId, key: &[u8]) -> Result<Option<Cow<'_, [u8]>>>;
    /// Entries in `range`, ascending or (with `reverse`) descending.
    fn scan(&self, keyspace: KeyspaceId, range: &KeyRange, reverse: bool) -> Result<Entries<'_>>;
    /// Number of keys in the keyspace.
    fn count(&self, keyspace: KeyspaceId) -> Result<usize>;
}

/// A committed state: the snapshot and the catalog it contains.
#[derive(Debug)]
pub(crate) struct Published {
    pub(crate) snapshot: Snapshot,
    pub(crate) catalog: Arc<Catalog>,
    /// For every keyspace a commit of this database wrote since it was opened, the store
    /// sequence number of the last such commit: two states with the same version of a
    /// keyspace hold the same entries in it. A keyspace absent here has not been written
    /// since the open.
    pub(crate) versions: Arc<HashMap<KeyspaceId, u64>>,
    /// Hands out catalog ids (keyspace numbers) to every transaction of the database, open
    /// side by side or not, so that two transactions never name a keyspace alike. Shared by
    /// every state of one database.
    pub(crate) ids: Arc<AtomicU64>,
}

impl Published {
    /// The first state of a database: its snapshot and catalog as opened.
    pub(crate) fn opened(snapshot: Snapshot, catalog: Catalog) -> Published {
        let ids = Arc::new(AtomicU64::new(catalog.next_id));
        Published {
            snapshot,
            catalog: Arc::new(catalog),
            versions: Arc::new(HashMap::new()),
            ids,
        }
    }

    /// The state after commit `seq`, which wrote `written` and left `catalog`.
    pub(crate) fn after_commit(
        &self,
        snapshot: Snapshot,
        catalog: Arc<Catalog>,
        written: &[KeyspaceId],
        seq: u64,
    ) -> Published {
        let mut versions = HashMap::clone(&self.versions);
        for &keyspace in written {
            versions.insert(keyspace, seq);
        }
        Published {
            snapshot,
            catalog,
            versions: Arc::new(versions),
            ids: Arc::clone(&self.ids),
        }
    }

    /// The sequence number of the last commit that wrote `keyspace` since the open; `None`
    /// when none has.
    pub(crate) fn version(&self, keyspace: KeyspaceId) -> Option<u64> {
        self.versions.get(&keyspace).copied()
    }
}

impl Reader for Published {
    fn catalog(&self) -> &Catalog {
        &self.catalog
    }

    fn get(&self, keyspace: KeyspaceId, key: &[u8]) -> Result<Option<Cow<'_, [u8]>>> {
        Ok(self.snapshot.get(keyspace, key)?.map(Cow::Borrowed))
    }

    fn scan(&self, keyspace: KeyspaceId, range: &KeyRange, reverse: bool) -> Result<Entries<'_>> {
        snapshot_scan(&self.snapshot, keyspace, range, reverse)
    }

    fn count(&self, keyspace: KeyspaceId) -> Result<usize> {
        Ok(self.snapshot.len(keyspace)?)
    }
}

fn snapshot_scan<'a>(
    snapshot: &'a Snapshot,
    keyspace: KeyspaceId,
    range: &KeyRange,
    reverse: bool,
) -> Result<Entries<'a>> {
    let entries = snapshot.range(keyspace, range.as_slices())?;
    let mapped = |entry: spillway_store::Result<(&'a [u8], &'a [u8])>| {
        entry
            .map(|(key, value)| (Cow::Borrowed(key), Cow::Borrowed(value)))
            .map_err(crate::Error::from)
    };
    if reverse {
        Ok(Box::new(entries.rev().map(mapped)))
    } else {
        Ok(Box::new(entries.map(mapped)))
    }
}

/// The buffered writes of one keyspace: `None` is a delete.
pub(crate) type Overlay = BTreeMap<Vec<u8>, Option<Vec<u8>>>;

/// The writes of one transaction, over a committed base.
#[derive(Debug)]
pub(crate) struct WriteTxn {
    base: Arc<Published>,
    catalog: Arc<Catalog>,
    catalog_changed: bool,
    changed_collections: HashSet<String>,
    policies_changed: bool,
    overlays: HashMap<KeyspaceId, Overlay>,
    /// Keyspaces created during this transaction: absent from the base snapshot.
    created: HashSet<KeyspaceId>,
    /// Keyspaces left over (empty, never in the catalog) that this transaction reuses: cleared
    /// first in the batch, and read as empty.
    clear_on_commit: Vec<KeyspaceId>,
    /// Keyspaces to drop at commit (their collection or index was dropped).
    dropped: Vec<KeyspaceId>,
    n_ops: usize,
    /// For a transaction handle: the keys written since the last `take_journal`, which the
    /// handle claims against other open handles after each operation.
    journal: Option<Vec<(KeyspaceId, Vec<u8>)>>,
    /// Set for the duration of one operation given `bypass_document_validation(true)`: its
    /// writes skip the collection's validator.
    pub(crate) bypass_validation: bool,
    /// The writes a `validationAction: "warn"` validator let through, logged by the
    /// database when this transaction commits.
    pub(crate) validation_warnings: Vec<crate::results::ValidationWarning>,
    /// Set while a replacement (not an update with operators) writes: the documents it
    /// puts are recorded in `replaced`, for change streams' `replace` events.
    pub(crate) replacing: bool,
    replaced: HashSet<(KeyspaceId, Vec<u8>)>,
    /// Change records the writes themselves do not show (a MongoDB database dropped as a
    /// whole), for the change log.
    notes: Vec<bson::Document>,
}

impl WriteTxn {
    pub(crate) fn new(base: Arc<Published>) -> WriteTxn {
        WriteTxn {
            catalog: Arc::clone(&base.catalog),
            base,
            catalog_changed: false,
            changed_collections: HashSet::new(),
            policies_changed: false,
            overlays: HashMap::new(),
            created: HashSet::new(),
            clear_on_commit: Vec::new(),
            dropped: Vec::new(),
            n_ops: 0,
            journal: None,
            bypass_validation: false,
            validation_warnings: Vec::new(),
            replacing: false,
            replaced: HashSet::new(),
            notes: Vec::new(),
        }
    }

    /// Adds a change record for the change log beside those of this transaction's writes.
    pub(crate) fn note_change(&mut self, record: bson::Document) {
        self.notes.push(record);
    }

    /// The change records added with [`WriteTxn::note_change`].
    pub(crate) fn take_notes(&mut self) -> Vec<bson::Document> {
        std::mem::take(&mut self.notes)
    }

    /// Runs `write` with [`WriteTxn::replacing`] set: its puts are replacements.
    pub(crate) fn as_replacement<R>(&mut self, write: impl FnOnce(&mut WriteTxn) -> R) -> R {
        let before = std::mem::replace(&mut self.replacing, true);
        let result = write(self);
        self.replacing = before;
        result
    }

    /// The writes buffered for `keyspace` (`None` values are deletes).
    pub(crate) fn overlay(&self, keyspace: KeyspaceId) -> Option<&Overlay> {
        self.overlays.get(&keyspace)
    }

    /// Whether the last write of `key` was made by a replacement ([`WriteTxn::replacing`]).
    pub(crate) fn was_replaced(&self, keyspace: KeyspaceId, key: &[u8]) -> bool {
        self.replaced.contains(&(keyspace, key.to_vec()))
    }

    /// Starts recording the keys this transaction writes (see [`WriteTxn::take_journal`]).
    pub(crate) fn track_writes(&mut self) {
        self.journal = Some(Vec::new());
    }

    /// The keys written since the last call (none unless [`WriteTxn::track_writes`]).
    pub(crate) fn take_journal(&mut self) -> Vec<(KeyspaceId, Vec<u8>)> {
        self.journal
            .as_mut()
            .map(std::mem::take)
            .unwrap_or_default()
    }

    /// Whether a key this transaction writes may be claimed by other transactions: it is not
    /// in a keyspace only this transaction can see.
    pub(crate) fn is_shared(&self, keyspace: KeyspaceId) -> bool {
        !self.created.contains(&keyspace) && !self.clear_on_commit.contains(&keyspace)
    }

    /// Whether a commit after this transaction's base wrote `key` (or its keyspace is gone),
    /// even when the commit wrote the bytes it had (an append claims a main document that
    /// way) or a later commit deleted the key again.
    ///
    /// A transaction handle asks the write `history`, which records every commit's keys while
    /// handles are open. A transaction the history does not cover (it began before what the
    /// history kept) compares the key's versions in the base and in `current` instead; a value
    /// a compaction moved since has another version too, and then the values are compared,
    /// so that compacting does not abort open transactions. That fallback misses a commit of
    /// the same bytes followed by a compaction that moves them, and a key inserted and deleted
    /// again by commits since the base.
    pub(crate) fn changed_since_base(
        &self,
        current: &Published,
        history: &WriteHistory,
        keyspace: KeyspaceId,
        key: &[u8],
    ) -> Result<bool> {
        if !self.is_shared(keyspace) || self.base.version(keyspace) == current.version(keyspace) {
            return Ok(false);
        }
        let version_in = |published: &Published| match published.snapshot.version(keyspace, key) {
            Ok(version) => Ok(Some(version)),
            Err(spillway_store::Error::UnknownKeyspace(_)) => Ok(None),
            Err(error) => Err(Error::from(error)),
        };
        // A keyspace dropped since the base: every key of it changed.
        match current.snapshot.len(keyspace) {
            Err(spillway_store::Error::UnknownKeyspace(_)) => return Ok(true),
            Err(error) => return Err(error.into()),
            Ok(_) => {}
        }
        if let Some(written) = history.written_after(self.base.snapshot.seq(), keyspace, key) {
            return Ok(written);
        }
        let Some(now) = version_in(current)? else {
            return Ok(true);
        };
        // A keyspace created after the base (the `sessions` keyspace, say) held nothing then.
        let before = version_in(&self.base)?.flatten();
        if before == now {
            return Ok(false);
        }
        if !now.is_some_and(|version| version.is_compacted()) {
            return Ok(true);
        }
        let before = match self.base.snapshot.get(keyspace, key) {
            Ok(before) => before,
            Err(spillway_store::Error::UnknownKeyspace(_)) => None,
            Err(error) => return Err(error.into()),
        };
        Ok(current.snapshot.get(keyspace, key)? != before)
    }

    fn record(&mut self, keyspace: KeyspaceId, key: &[u8]) {
        if let Some(journal) = &mut self.journal {
            journal.push((keyspace, key.to_vec()));
        }
    }

    /// Notes whether the write of `key` being made is part of a replacement.
    fn note_replacing(&mut self, keyspace: KeyspaceId, key: &[u8]) {
        if self.replacing {
            self.replaced.insert((keyspace, key.to_vec()));
        } else if !self.replaced.is_empty() {
            self.replaced.remove(&(keyspace, key.to_vec()));
        }
    }

    pub(crate) fn put(&mut self, keyspace: KeyspaceId, key: Vec<u8>, value: Vec<u8>) {
        self.n_ops += 1;
        self.record(keyspace, &key);
        self.note_replacing(keyspace, &key);
        self.overlays
            .entry(keyspace)
            .or_default()
            .insert(key, Some(value));
    }

    pub(crate) fn delete(&mut self, keyspace: KeyspaceId, key: Vec<u8>) {
        self.n_ops += 1;
        self.record(keyspace, &key);
        // A replacement of a patterned document may only delete its side documents.
        self.note_replacing(keyspace, &key);
        self.overlays.entry(keyspace).or_default().insert(key, None);
    }

    /// The catalog as this transaction sees it, to read while buffering writes.
    pub(crate) fn catalog_arc(&self) -> Arc<Catalog> {
        Arc::clone(&self.catalog)
    }

    /// The catalog for modification; the change is written at commit.
    pub(crate) fn catalog_mut(&mut self) -> &mut Catalog {
        self.catalog_changed = true;
        Arc::make_mut(&mut self.catalog)
    }

    /// Records that `collection`'s catalog record must be rewritten (or deleted) at commit.
    pub(crate) fn collection_changed(&mut self, collection: &str) {
        self.catalog_changed = true;
        self.changed_collections.insert(collection.to_string());
    }

    /// The pattern policies for modification; all their records are rewritten at commit.
    pub(crate) fn policies_mut(&mut self) -> &mut Vec<spillway_pattern::Policy> {
        self.catalog_changed = true;
        self.policies_changed = true;
        &mut Arc::make_mut(&mut self.catalog).policies
    }

    /// Takes the next catalog id (keyspace number). Ids come from a counter the whole
    /// database shares, so that transactions open side by side never create keyspaces of the
    /// same name; the catalog's `next_id` stays above every id handed out.
    pub(crate) fn allocate_id(&mut self) -> u64 {
        let floor = self.catalog.next_id;
        self.base.ids.fetch_max(floor, Ordering::Relaxed);
        let id = self.base.ids.fetch_add(1, Ordering::Relaxed);
        let catalog = self.catalog_mut();
        catalog.next_id = catalog.next_id.max(id + 1);
        id
    }

    /// Moves the transaction from its base onto `current`, the latest committed state (the
    /// caller holds the write lock), or refuses with [`crate::ErrorKind::WriteConflict`]: snapshot
    /// isolation, first committer wins.
    ///
    /// The transaction conflicts when a commit after its base
    /// - wrote a key it writes, even with the bytes it had (a document, an index entry, a side
    ///   document of the pattern layer: every key of its overlays; unique index entries are
    ///   keyed by the indexed values alone, so two transactions that give one unique key to
    ///   different documents both write that key);
    /// - created, dropped or re-indexed a collection it writes (its layout in the catalog
    ///   differs), or declared, removed or migrated a pattern policy of such a collection;
    /// - wrote anything to a collection on which this transaction runs DDL (an index build
    ///   or a drop read the whole collection as of the base), or changed any policy when this
    ///   transaction changes policies.
    ///
    /// Only the written keys are read, and only in keyspaces some commit wrote since the
    /// base. On success the catalog to commit is the current one with this transaction's
    /// collection records and policies applied (multikey flags merged).
    pub(crate) fn rebase(
        &mut self,
        current: &Arc<Published>,
        history: &WriteHistory,
    ) -> Result<()> {
        if Arc::ptr_eq(&self.base, current) {
            return Ok(());
        }
        let base = Arc::clone(&self.base);
        let mut owners: HashMap<KeyspaceId, &str> = HashMap::new();
        for (name, meta) in &base.catalog.collections {
            owners.insert(meta.docs, name);
            for index in &meta.indexes {
                owners.insert(index.keyspace, name);
            }
        }
        let mut touched: BTreeSet<&str> = self
            .changed_collections
            .iter()
            .map(String::as_str)
            .collect();
        for keyspace in self.overlays.keys().chain(&self.dropped) {
            if let Some(name) = owners.get(keyspace) {
                touched.insert(name);
            }
        }
        for &name in &touched {
            let before = base.catalog.collections.get(name);
            if !same_layout(before, current.catalog.collections.get(name)) {
                return Err(Error::write_conflict(format!(
                    "collection '{name}' was created, dropped or had its indexes changed by a commit after this transaction began"
                )));
            }
            if let Some(before) = before
                && !same_layout(Some(before), self.catalog.collections.get(name))
                && base.version(before.docs) != current.version(before.docs)
            {
                return Err(Error::write_conflict(format!(
                    "collection '{name}', whose indexes this transaction changes or which it drops, was written by a commit after this transaction began"
                )));
            }
        }
        let concerns = |policy: &&Policy| {
            touched.contains(policy.pattern.collection())
                || touched.contains(policy.pattern.side_collection())
        };
        let policies_conflict = if self.policies_changed {
            base.catalog.policies != current.catalog.policies
        } else {
            !base.catalog.policies.iter().filter(concerns).eq(current
                .catalog
                .policies
                .iter()
                .filter(concerns))
        };
        if policies_conflict {
            return Err(Error::write_conflict(
                "a pattern policy of a collection this transaction writes was declared, removed or migrated by a commit after this transaction began",
            ));
        }
        for (&keyspace, overlay) in &self.overlays {
            if self.created.contains(&keyspace)
                || self.clear_on_commit.contains(&keyspace)
                || base.version(keyspace) == current.version(keyspace)
            {
                continue;
            }
            for key in overlay.keys() {
                if self.changed_since_base(current, history, keyspace, key)? {
                    let collection = owners.get(&keyspace).copied().unwrap_or("?");
                    return Err(Error::write_conflict(format!(
                        "a document or index entry of collection '{collection}' that this transaction writes was changed by a commit after this transaction began"
                    )));
                }
            }
        }
        let mut catalog = Catalog::clone(&current.catalog);
        for name in &self.changed_collections {
            let Some(meta) = self.catalog.collections.get(name) else {
                catalog.collections.remove(name);
                continue;
            };
            let mut meta = meta.clone();
            if let Some(now) = current.catalog.collections.get(name) {
                for index in &mut meta.indexes {
                    index.multikey |= now
                        .indexes
                        .iter()
                        .any(|other| other.keyspace == index.keyspace && other.multikey);
                }
            }
            catalog.collections.insert(name.clone(), meta);
        }
        catalog.next_id = catalog.next_id.max(self.catalog.next_id);
        if self.policies_changed {
            catalog.policies.clone_from(&self.catalog.policies);
        }
        self.catalog = Arc::new(catalog);
        self.base = Arc::clone(current);
        Ok(())
    }

    /// Creates (or reuses, if a crash or an abandoned transaction left it) a keyspace.
    pub(crate) fn create_keyspace(&mut self, store: &Store, name: &str) -> Result<KeyspaceId> {
        let keyspace = store.keyspace(name)?;
        if self.base.snapshot.keyspace(name).is_some() {
            // Left empty by an abandoned transaction or a crash: the catalog never named it,
            // so nothing but this transaction's writes may appear in it.
            self.n_ops += 1;
            self.overlays.insert(keyspace, Overlay::new());
            self.clear_on_commit.push(keyspace);
        } else {
            self.created.insert(keyspace);
        }
        Ok(keyspace)
    }

    /// Drops a keyspace at commit; this transaction no longer reads it.
    pub(crate) fn drop_keyspace(&mut self, keyspace: KeyspaceId) {
        self.n_ops += 1;
        self.overlays.remove(&keyspace);
        self.dropped.push(keyspace);
    }

    /// Whether the transaction has nothing to commit.
    pub(crate) fn is_empty(&self) -> bool {
        !self.has_writes() && self.notes.is_empty()
    }

    /// Whether the transaction writes anything (change records it noted aside).
    pub(crate) fn has_writes(&self) -> bool {
        self.n_ops > 0 || self.catalog_changed
    }

    /// The batch to commit, the catalog it leaves and the keyspaces it writes.
    pub(crate) fn into_batch(mut self, store: &Store) -> Result<Committed> {
        let mut written: Vec<KeyspaceId> = self.overlays.keys().copied().collect();
        written.extend(&self.clear_on_commit);
        written.extend(&self.dropped);
        let mut batch = WriteBatch::new();
        for &keyspace in &self.clear_on_commit {
            batch.clear_keyspace(keyspace);
        }
        let mut keys = Vec::with_capacity(self.n_ops);
        for (keyspace, overlay) in std::mem::take(&mut self.overlays) {
            for (key, value) in overlay {
                match value {
                    Some(value) => batch.put(keyspace, &key, &value),
                    None => batch.delete(keyspace, &key),
                };
                keys.push((keyspace, key));
            }
        }
        if self.catalog_changed {
            let catalog_keyspace = store.keyspace(CATALOG_KEYSPACE)?;
            batch.put(
                catalog_keyspace,
                META_KEY,
                &bson::serialize_to_vec(&self.catalog.meta_record())
                    .map_err(|error| crate::Error::serialization(error.to_string()))?,
            );
            let mut changed: Vec<&String> = self.changed_collections.iter().collect();
            changed.sort();
            for name in changed {
                let key = CollectionMeta::catalog_key(name);
                match self.catalog.collections.get(name) {
                    Some(meta) => batch.put(
                        catalog_keyspace,
                        &key,
                        &bson::serialize_to_vec(&meta.to_record())
                            .map_err(|error| crate::Error::serialization(error.to_string()))?,
                    ),
                    None => batch.delete(catalog_keyspace, &key),
                };
            }
            if self.policies_changed {
                for policy in &self.base.catalog.policies {
                    batch.delete(catalog_keyspace, &policy_key(&policy.pattern));
                }
                for policy in &self.catalog.policies {
                    batch.put(
                        catalog_keyspace,
                        &policy_key(&policy.pattern),
                        &bson::serialize_to_vec(&policy_record(policy))
                            .map_err(|error| crate::Error::serialization(error.to_string()))?,
                    );
                }
            }
        }
        for &keyspace in &self.dropped {
            batch.drop_keyspace(keyspace);
        }
        Ok(Committed {
            batch,
            catalog: self.catalog,
            written,
            keys,
        })
    }
}

/// What committing a [`WriteTxn`] writes.
pub(crate) struct Committed {
    /// The store batch.
    pub(crate) batch: WriteBatch,
    /// The catalog the batch leaves.
    pub(crate) catalog: Arc<Catalog>,
    /// The keyspaces the batch writes, clears or drops.
    pub(crate) written: Vec<KeyspaceId>,
    /// The keys the batch puts or deletes (catalog records aside), for the write history.
    pub(crate) keys: Vec<KeyOf>,
}

/// Whether two catalog records describe the same collection layout: the same keyspaces and
/// the same indexes (whatever their multikey flags, which writes set).
fn same_layout(a: Option<&CollectionMeta>, b: Option<&CollectionMeta>) -> bool {
    match (a, b) {
        (None, None) => true,
        (Some(a), Some(b)) => {
            a.id == b.id
                && a.docs == b.docs
                && a.indexes.len() == b.indexes.len()
                && a.indexes.iter().zip(&b.indexes).all(|(a, b)| {
                    a.name == b.name
                        && a.keyspace == b.keyspace
                        && a.unique == b.unique
                        && a.spec == b.spec
                })
        }
        _ => false,
    }
}

impl Reader for WriteTxn {
    fn catalog(&self) -> &Catalog {
        &self.catalog
    }

    fn get(&self, keyspace: KeyspaceId, key: &[u8]) -> Result<Option<Cow<'_, [u8]>>> {
        if let Some(overlay) = self.overlays.get(&keyspace)
            && let Some(value) = overlay.get(key)
        {
            return Ok(value.as_deref().map(Cow::Borrowed));
        }
        if self.created.contains(&keyspace) || self.clear_on_commit.contains(&keyspace) {
            return Ok(None);
        }
        self.base.get(keyspace, key)
    }

    fn scan(&self, keyspace: KeyspaceId, range: &KeyRange, reverse: bool) -> Result<Entries<'_>> {
        let base: Entries<'_> =
            if self.created.contains(&keyspace) || self.clear_on_commit.contains(&keyspace) {
                Box::new(std::iter::empty())
            } else {
                self.base.scan(keyspace, range, reverse)?
            };
        let Some(overlay) = self.overlays.get(&keyspace) else {
            return Ok(base);
        };
        let buffered = overlay.range::<[u8], _>(range.as_slices());
        let buffered: BufferedEntries<'_> = if reverse {
            Box::new(buffered.rev())
        } else {
            Box::new(buffered)
        };
        Ok(Box::new(Merge {
            base: base.peekable(),
            buffered: buffered.peekable(),
            reverse,
        }))
    }

    fn count(&self, keyspace: KeyspaceId) -> Result<usize> {
        let mut count = 0;
        for entry in self.scan(keyspace, &KeyRange::all(), false)? {
            entry?;
            count += 1;
        }
        Ok(count)
    }
}

/// A transaction's buffered writes in a range: `None` values are deletes.
type BufferedEntries<'a> = Box<dyn Iterator<Item = (&'a Vec<u8>, &'a Option<Vec<u8>>)> + 'a>;

/// Merges a snapshot scan with a transaction's buffered writes (which win on equal keys).
struct Merge<'a> {
    base: Peekable<Entries<'a>>,
    buffered: Peekable<BufferedEntries<'a>>,
    reverse: bool,
}

impl<'a> Iterator for Merge<'a> {
    type Item = Result<(Cow<'a, [u8]>, Cow<'a, [u8]>)>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            let take_buffered = match (self.base.peek(), self.buffered.peek()) {
                (None, None) => return None,
                (Some(Err(_)), _) | (Some(_), None) => false,
                (None, Some(_)) => true,
                (Some(Ok((base_key, _))), Some((buffered_key, _))) => {
                    let order = base_key.as_ref().cmp(buffered_key.as_slice());
                    let order = if self.reverse { order.reverse() } else { order };
                    match order {
                        std::cmp::Ordering::Less => false,
                        std::cmp::Ordering::Equal => {
                            self.base.next();
                            true
                        }
                        std::cmp::Ordering::Greater => true,
                    }
                }
            };
            if !take_buffered {
                return self.base.next();
            }
            let (key, value) = self.buffered.next()?;
            if let Some(value) = value {
                return Some(Ok((Cow::Borrowed(key.as_slice()), Cow::Borrowed(value))));
            }
        }
    }
}
