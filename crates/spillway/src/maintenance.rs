//! Whole-database maintenance: [`Database::verify`](crate::Database::verify),
//! [`Database::stats`](crate::Database::stats), [`Database::compact`](crate::Database::compact)
//! and [`Database::repair`](crate::Database::repair), and the reports they return.
//!
//! The store checks its own bytes (frame and value checksums); this module adds what only
//! the facade knows: that every stored document is BSON whose `_id` matches its key, and that
//! every index holds exactly the entries its documents produce. Repair salvages the store
//! first, then rebuilds every index that no longer agrees with the documents that survived.
//! This module must never change a healthy database: `verify` and `stats` only read.

use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard, PoisonError};

use bson::Bson;
use spillway_doc::key;
use spillway_pattern::Violation;
use spillway_store::{
    CheckpointFallback, Damage, KeyspaceId, LostWriteEffect, Store, StoreOptions, TornTail,
};

use crate::catalog::{CATALOG_KEYSPACE, CollectionMeta};
use crate::catalog_repair::{self, RebuiltCollection};
use crate::error::Result;
use crate::index_keys::index_entries;
use crate::ops;
use crate::patterned;
use crate::storage;
use crate::txn::{KeyRange, Published, Reader};

/// How many of the largest documents [`CollectionStats`] lists.
pub const LARGEST_DOCUMENTS_LISTED: usize = 5;

/// What [`Database::verify`](crate::Database::verify) found.
#[derive(Debug, Clone, Default, PartialEq)]
#[non_exhaustive]
pub struct VerifyReport {
    /// Log frames whose checksum the store verified.
    pub frames_checked: u64,
    /// Stored values (documents, index entries, catalog records) whose checksum was verified.
    pub values_checked: u64,
    /// Damaged bytes the store found (checksum failures, garbage after the log).
    pub storage_damage: Vec<Damage>,
    /// Collections checked.
    pub collections_checked: u64,
    /// Documents decoded and checked against their key.
    pub documents_checked: u64,
    /// Index entries compared with the entries their documents produce.
    pub index_entries_checked: u64,
    /// Logical problems: undecodable documents, `_id`s that do not match their key, index
    /// entries missing or left over.
    pub problems: Vec<Problem>,
    /// The torn tail this handle's open dropped (see
    /// [`Database::recovery_report`](crate::Database::recovery_report)): not damage, since
    /// the commits in it were never acknowledged, but lost bytes a report must mention.
    pub torn_tail: Option<TornTail>,
    /// The damaged checkpoint this handle's open replaced by the fallback (see
    /// [`Database::recovery_report`](crate::Database::recovery_report)): nothing was lost, but
    /// a report must mention it.
    pub checkpoint_fallback: Option<CheckpointFallback>,
}

impl VerifyReport {
    /// True when neither the bytes nor the documents and indexes have a problem.
    pub fn is_clean(&self) -> bool {
        self.storage_damage.is_empty() && self.problems.is_empty()
    }
}

/// One logical inconsistency found by [`Database::verify`](crate::Database::verify).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    /// The collection concerned.
    pub collection: String,
    /// The index concerned, if any.
    pub index: Option<String>,
    /// What is wrong.
    pub description: String,
}

impl std::fmt::Display for Problem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.index {
            Some(index) => write!(
                f,
                "collection '{}', index '{index}': {}",
                self.collection, self.description
            ),
            None => write!(f, "collection '{}': {}", self.collection, self.description),
        }
    }
}

/// What [`Database::stats`](crate::Database::stats) reports.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct DatabaseStats {
    /// Every collection, by name.
    pub collections: Vec<CollectionStats>,
    /// Log segments (files) of the store.
    pub segments: u64,
    /// Bytes of the segment files (preallocated, so partly sparse).
    pub file_bytes: u64,
    /// Bytes of frames written to the segments.
    pub written_bytes: u64,
    /// Bytes of records still reachable.
    pub live_bytes: u64,
    /// Bytes of overwritten or deleted records, tombstones and headers: what compaction frees.
    pub dead_bytes: u64,
}

/// Figures of one collection.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct CollectionStats {
    /// The collection's name.
    pub name: String,
    /// Number of documents.
    pub documents: u64,
    /// Sum of the documents' stored (BSON) sizes.
    pub document_bytes: u64,
    /// The largest documents, largest first (at most [`LARGEST_DOCUMENTS_LISTED`]).
    pub largest_documents: Vec<DocumentSize>,
    /// Bytes of the documents' `_id` keys: what the collection's own `_id` order costs (MongoDB
    /// reports it as the size of the `_id_` index).
    pub id_key_bytes: u64,
    /// Secondary indexes and their entry counts, in creation order.
    pub indexes: Vec<IndexStats>,
}

/// A document's `_id` and stored size.
#[derive(Debug, Clone, PartialEq)]
pub struct DocumentSize {
    /// The document's `_id`.
    pub id: Bson,
    /// Its BSON size in bytes.
    pub bytes: u64,
}

/// Figures of one secondary index.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IndexStats {
    /// The index name.
    pub name: String,
    /// Entries in the index (more than documents for a multikey index).
    pub entries: u64,
    /// Bytes of its entries (keys and the document references they hold).
    pub bytes: u64,
}

/// What [`Database::repair`](crate::Database::repair) did.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct RepairReport {
    /// True if the store's checkpoint was intact and used as the starting point; false means
    /// every segment was scanned, so documents deleted long ago may reappear.
    pub checkpoint_used: bool,
    /// Intact log frames applied.
    pub frames_salvaged: u64,
    /// What the store found wrong (damaged regions skipped, missing or misnamed files, values
    /// dropped), with the file and offset of each. Empty when the files were intact.
    pub damage: Vec<Damage>,
    /// True if the active log segment was missing (a fresh one was started).
    pub active_segment_missing: bool,
    /// Stored values (documents, index entries, catalog records) kept.
    pub values_recovered: u64,
    /// Stored values dropped because their bytes were damaged or gone.
    pub values_dropped: u64,
    /// Documents dropped because their bytes were damaged or gone, per collection.
    pub documents_lost: Vec<(String, u64)>,
    /// Commits known to be dropped (damaged log frames, or commits missing between intact
    /// ones): their writes are lost, so what they changed shows an older state.
    pub commits_dropped: u64,
    /// Writes of dropped commits whose loss is visible (documents, index entries, catalog
    /// records), as far as the damaged bytes still show them.
    pub lost_writes: u64,
    /// True when every dropped commit could be read op by op, so that
    /// `documents_rolled_back` names every document they changed; false when log bytes are
    /// gone or unreadable (documents may then show an older version, or be missing, unnamed).
    pub lost_writes_complete: bool,
    /// Documents whose newest write was lost with a dropped commit, with what is visible
    /// instead, by collection and `_id`.
    pub documents_rolled_back: Vec<RolledBackDocument>,
    /// Catalog records whose newest write was lost with a dropped commit (a collection,
    /// index or policy as it was before that commit, or gone).
    pub catalog_records_rolled_back: Vec<(String, LostWriteEffect)>,
    /// Main documents of pattern policies brought back in step with the side documents that
    /// survived (an outlier's array re-split over its surviving buckets, a subset's main
    /// array recomputed from its archive), as `(collection, _id)`.
    pub pattern_documents_resynced: Vec<(String, Bson)>,
    /// Side documents deleted because their main document is gone (no logical read reached
    /// them), as `(collection, _id)`.
    pub pattern_orphans_removed: Vec<(String, Bson)>,
    /// Pattern invariants still violated after the repair: the database is not whole, and a
    /// caller must not report success.
    pub pattern_violations_left: Vec<Violation>,
    /// Collections whose catalog record was lost, rebuilt from the keyspace that holds their
    /// documents.
    pub collections_rebuilt: Vec<RebuiltCollection>,
    /// Collections whose documents keyspace was gone: kept, empty.
    pub collections_emptied: Vec<String>,
    /// Catalog records that were unreadable or damaged and are gone (pattern policies among
    /// them are no longer applied; their side collections remain ordinary collections).
    pub catalog_records_lost: Vec<String>,
    /// Keyspaces dropped because nothing names them and they hold no documents, with the
    /// number of values each held.
    pub orphaned_keyspaces: Vec<(String, u64)>,
    /// Indexes rebuilt from the surviving documents, as `collection.index` (including indexes
    /// whose definition was recovered from the name of their keyspace).
    pub indexes_rebuilt: Vec<String>,
    /// Indexes whose definition was lost with a damaged catalog record and could not be
    /// recovered, with the reason.
    pub indexes_lost: Vec<(String, String)>,
    /// Indexes that could not be rebuilt (a unique index whose surviving documents now
    /// collide), with the reason; they were dropped.
    pub indexes_dropped: Vec<(String, String)>,
    /// Files moved to `backup_dir` (the manifest is copied there, then replaced).
    pub files_moved: Vec<String>,
    /// Where the damaged files were moved (inside the database directory); `None` when the
    /// files were intact and left as they were.
    pub backup_dir: Option<PathBuf>,
}

impl RepairReport {
    /// True when repair found nothing wrong and changed nothing.
    pub fn is_clean(&self) -> bool {
        self.damage.is_empty()
            && self.backup_dir.is_none()
            && self.documents_lost.is_empty()
            && self.documents_rolled_back.is_empty()
            && self.catalog_records_rolled_back.is_empty()
            && self.pattern_documents_resynced.is_empty()
            && self.pattern_orphans_removed.is_empty()
            && self.pattern_violations_left.is_empty()
            && self.collections_rebuilt.is_empty()
            && self.collections_emptied.is_empty()
            && self.catalog_records_lost.is_empty()
            && self.orphaned_keyspaces.is_empty()
            && self.indexes_rebuilt.is_empty()
            && self.indexes_lost.is_empty()
            && self.indexes_dropped.is_empty()
    }
}

/// A document whose newest write a dropped commit took with it.
#[derive(Debug, Clone, PartialEq)]
pub struct RolledBackDocument {
    /// The collection.
    pub collection: String,
    /// The document's `_id`: from the version now visible, or from the lost version when its
    /// bytes survived; `None` when neither can be read (then `key` identifies it).
    pub id: Option<Bson>,
    /// The document's key (the key encoding of its `_id`).
    pub key: Vec<u8>,
    /// What is visible instead of the lost write.
    pub effect: LostWriteEffect,
}

/// Checks every collection of `state`: documents against their keys, indexes against their
/// documents. Appends to `report`.
pub(crate) fn verify_collections(state: &Published, report: &mut VerifyReport) -> Result<()> {
    for meta in state.catalog.collections.values() {
        report.collections_checked += 1;
        let expected = expected_index_entries(state, meta, report)?;
        for (index, expected) in meta.indexes.iter().zip(expected) {
            let mut missing = expected;
            let mut extra = 0_u64;
            for entry in state.scan(index.keyspace, &KeyRange::all(), false)? {
                let (entry_key, _) = entry?;
                report.index_entries_checked += 1;
                if !missing.remove(entry_key.as_ref()) {
                    extra += 1;
                }
            }
            let problem = |description: String| Problem {
                collection: meta.name.clone(),
                index: Some(index.name.clone()),
                description,
            };
            if !missing.is_empty() {
                report.problems.push(problem(format!(
                    "{} entries missing (documents the index does not find)",
                    missing.len()
                )));
            }
            if extra > 0 {
                report.problems.push(problem(format!(
                    "{extra} entries left over (they point at documents that are gone or changed)"
                )));
            }
        }
    }
    Ok(())
}

/// The entries each index of `meta` should hold, from its documents; records undecodable
/// documents and mismatched keys in `report`.
fn expected_index_entries(
    state: &Published,
    meta: &CollectionMeta,
    report: &mut VerifyReport,
) -> Result<Vec<BTreeSet<Vec<u8>>>> {
    let mut expected = vec![BTreeSet::new(); meta.indexes.len()];
    let problem = |description: String| Problem {
        collection: meta.name.clone(),
        index: None,
        description,
    };
    for entry in state.scan(meta.docs, &KeyRange::all(), false)? {
        let (id_key, bytes) = entry?;
        report.documents_checked += 1;
        let document = match storage::decode(&bytes) {
            Ok(document) => document,
            Err(error) => {
                report.problems.push(problem(format!(
                    "the document stored under key {} is not valid BSON: {error}",
                    hex(&id_key)
                )));
                continue;
            }
        };
        match document.get("_id") {
            Some(id) if key::to_key(id) == id_key.as_ref() => {}
            Some(id) => report.problems.push(problem(format!(
                "the document with _id {id} is stored under the key of another _id"
            ))),
            None => report.problems.push(problem(format!(
                "the document stored under key {} has no _id",
                hex(&id_key)
            ))),
        }
        for (index, expected) in meta.indexes.iter().zip(&mut expected) {
            match index_entries(&meta.name, index, &document, &id_key) {
                Ok((entries, _)) => expected.extend(entries.into_iter().map(|entry| entry.key)),
                Err(error) => report.problems.push(Problem {
                    collection: meta.name.clone(),
                    index: Some(index.name.clone()),
                    description: format!("a document cannot be indexed: {error}"),
                }),
            }
        }
    }
    Ok(expected)
}

fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write as _;
    let mut out = String::with_capacity(bytes.len() * 2);
    for byte in bytes {
        write!(out, "{byte:02x}").expect("writing to a String cannot fail");
    }
    out
}

/// Per-collection figures of `state`, each from `cache` when its collection has not been
/// written since the figures were taken.
pub(crate) fn collection_stats(
    state: &Published,
    cache: &StatsCache,
) -> Result<Vec<CollectionStats>> {
    state
        .catalog
        .collections
        .values()
        .map(|meta| cache.stats_of(state, meta))
        .collect()
}

/// What a collection's figures were taken from: the keyspaces of its documents and indexes,
/// each with its version (the sequence number of the last commit that wrote it since the
/// open; `None`: not written since). Two states with the same key hold the same entries in
/// those keyspaces, so they have the same figures.
#[derive(Debug, Clone, PartialEq, Eq)]
struct StatsKey {
    documents: (KeyspaceId, Option<u64>),
    indexes: Vec<(String, KeyspaceId, Option<u64>)>,
}

impl StatsKey {
    fn of(state: &Published, meta: &CollectionMeta) -> StatsKey {
        StatsKey {
            documents: (meta.docs, state.version(meta.docs)),
            indexes: meta
                .indexes
                .iter()
                .map(|index| {
                    (
                        index.name.clone(),
                        index.keyspace,
                        state.version(index.keyspace),
                    )
                })
                .collect(),
        }
    }
}

/// The figures last taken of each collection, by name, with what they were taken from, so
/// that `collStats`, `dbStats` and `listDatabases` on a collection not written since answer
/// without walking it again (a GUI asks for them on every page). A written collection is
/// walked again: its figures are always those of the state asked about.
#[derive(Debug, Default)]
pub(crate) struct StatsCache {
    taken: Mutex<HashMap<String, (StatsKey, CollectionStats)>>,
}

impl StatsCache {
    /// The figures of `meta`'s collection in `state` ([`stats_of`]), from the cache when
    /// they were taken from the same entries.
    pub(crate) fn stats_of(
        &self,
        state: &Published,
        meta: &CollectionMeta,
    ) -> Result<CollectionStats> {
        let key = StatsKey::of(state, meta);
        if let Some((taken_from, stats)) = self.lock().get(&meta.name)
            && *taken_from == key
        {
            return Ok(stats.clone());
        }
        let stats = stats_of(state, meta)?;
        let mut taken = self.lock();
        // Figures of collections that are gone go, so that the cache holds at most one
        // entry per collection of the catalog.
        taken.retain(|name, _| state.catalog.collections.contains_key(name));
        taken.insert(meta.name.clone(), (key, stats.clone()));
        Ok(stats)
    }

    fn lock(&self) -> MutexGuard<'_, HashMap<String, (StatsKey, CollectionStats)>> {
        self.taken.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// The figures of one collection: a walk of its documents' and its indexes' keys with their
/// values' lengths, from the key directory (no value read but the largest documents' to
/// decode their `_id`s).
pub(crate) fn stats_of(state: &Published, meta: &CollectionMeta) -> Result<CollectionStats> {
    let mut documents = 0_u64;
    let mut document_bytes = 0_u64;
    let mut id_key_bytes = 0_u64;
    // (size, _id key) of the largest documents so far, smallest first.
    let mut largest: Vec<(u64, Vec<u8>)> = Vec::new();
    for entry in state.snapshot.value_lengths(meta.docs)? {
        let (id_key, length) = entry?;
        documents += 1;
        let size = length as u64;
        document_bytes += size;
        id_key_bytes += id_key.len() as u64;
        if largest.len() < LARGEST_DOCUMENTS_LISTED || size > largest[0].0 {
            if largest.len() == LARGEST_DOCUMENTS_LISTED {
                largest.remove(0);
            }
            let position = largest.partition_point(|(known, _)| *known <= size);
            largest.insert(position, (size, id_key.to_vec()));
        }
    }
    let mut largest_documents = Vec::with_capacity(largest.len());
    for (size, id_key) in largest.into_iter().rev() {
        let Some(bytes) = state.get(meta.docs, &id_key)? else {
            continue;
        };
        let id = storage::decode(&bytes)
            .ok()
            .and_then(|mut document| document.remove("_id"))
            .unwrap_or(Bson::Null);
        largest_documents.push(DocumentSize { id, bytes: size });
    }
    let mut indexes = Vec::with_capacity(meta.indexes.len());
    for index in &meta.indexes {
        let (mut entries, mut bytes) = (0_u64, 0_u64);
        for entry in state.snapshot.value_lengths(index.keyspace)? {
            let (key, length) = entry?;
            entries += 1;
            bytes += (key.len() + length) as u64;
        }
        indexes.push(IndexStats {
            name: index.name.clone(),
            entries,
            bytes,
        });
    }
    Ok(CollectionStats {
        name: meta.name.clone(),
        documents,
        document_bytes,
        largest_documents,
        id_key_bytes,
        indexes,
    })
}

/// Salvages the store in `path`, then makes the catalog, documents and indexes agree again.
pub(crate) fn repair(path: &Path, options: StoreOptions) -> Result<RepairReport> {
    let salvaged = Store::repair(path, options.clone())?;
    let store = Store::open(path, options)?;
    let rebuilt = catalog_repair::rebuild(&store)?;
    let mut report = RepairReport {
        checkpoint_used: salvaged.checkpoint_used,
        frames_salvaged: salvaged.frames_salvaged,
        damage: salvaged.damage,
        active_segment_missing: salvaged.active_segment_missing,
        values_recovered: salvaged.keys_recovered,
        values_dropped: salvaged.values_dropped,
        documents_lost: Vec::new(),
        commits_dropped: salvaged.commits_dropped,
        lost_writes: salvaged.lost_writes.len() as u64,
        lost_writes_complete: salvaged.lost_writes_complete,
        documents_rolled_back: Vec::new(),
        catalog_records_rolled_back: Vec::new(),
        pattern_documents_resynced: Vec::new(),
        pattern_orphans_removed: Vec::new(),
        pattern_violations_left: Vec::new(),
        collections_rebuilt: rebuilt.collections_rebuilt,
        collections_emptied: rebuilt.collections_emptied,
        catalog_records_lost: rebuilt.records_lost,
        orphaned_keyspaces: rebuilt.keyspaces_dropped,
        indexes_rebuilt: Vec::new(),
        indexes_lost: rebuilt.indexes_lost,
        indexes_dropped: Vec::new(),
        files_moved: salvaged.files_moved,
        backup_dir: salvaged.backup_dir,
    };
    let mut changed = rebuilt.changed;
    let database = crate::Database::from_store(store)?;
    attribute_salvage_losses(
        &database,
        &salvaged.dropped_keys,
        &salvaged.lost_writes,
        &mut report,
    )?;
    if recreate_recovered_indexes(&database, rebuilt.indexes_to_create, &mut report) {
        changed = true;
    }
    if rebuild_damaged_indexes(&database, &mut report)? {
        changed = true;
    }
    // The pattern layer's invariants: side documents lost (or main documents rolled back)
    // leave main documents out of step with their side documents.
    if !database.verify_patterns()?.is_empty() {
        let (resynced, orphans) = database
            .inner
            .write(patterned::restore_pattern_invariants)?;
        changed |= !resynced.is_empty() || !orphans.is_empty();
        report.pattern_documents_resynced = resynced;
        report.pattern_orphans_removed = orphans;
        report.pattern_violations_left = database.verify_patterns()?;
    }
    if changed {
        database.checkpoint()?;
    }
    Ok(report)
}

/// Names in `report` the documents and catalog records the salvage dropped or rolled back.
fn attribute_salvage_losses(
    database: &crate::Database,
    dropped_keys: &[(String, Vec<u8>)],
    lost_writes: &[spillway_store::LostWrite],
    report: &mut RepairReport,
) -> Result<()> {
    let published = database.inner.published();
    for (keyspace, key) in dropped_keys {
        if keyspace == CATALOG_KEYSPACE {
            report
                .catalog_records_lost
                .push(String::from_utf8_lossy(key).replace('\0', "/"));
        } else if let Some(meta) = published
            .catalog
            .collections
            .values()
            .find(|meta| &meta.keyspace_name == keyspace)
        {
            match report.documents_lost.last_mut() {
                Some((name, count)) if *name == meta.name => *count += 1,
                _ => report.documents_lost.push((meta.name.clone(), 1)),
            }
        }
    }
    report.catalog_records_lost.sort();
    report.catalog_records_lost.dedup();
    for write in lost_writes {
        if write.keyspace == CATALOG_KEYSPACE {
            report.catalog_records_rolled_back.push((
                String::from_utf8_lossy(&write.key).replace('\0', "/"),
                write.effect,
            ));
        } else if let Some(meta) = published
            .catalog
            .collections
            .values()
            .find(|meta| meta.keyspace_name == write.keyspace)
        {
            let visible = published.get(meta.docs, &write.key)?;
            let id = [visible.as_deref(), write.lost_value.as_deref()]
                .into_iter()
                .flatten()
                .find_map(|bytes| storage::decode(bytes).ok()?.remove("_id"));
            report.documents_rolled_back.push(RolledBackDocument {
                collection: meta.name.clone(),
                id,
                key: write.key.clone(),
                effect: write.effect,
            });
        }
    }
    Ok(())
}

/// Creates the indexes the catalog repair recovered: whether there were any.
fn recreate_recovered_indexes(
    database: &crate::Database,
    indexes: Vec<catalog_repair::RecoveredIndex>,
    report: &mut RepairReport,
) -> bool {
    let mut changed = false;
    for index in indexes {
        changed = true;
        let qualified = format!("{}.{}", index.collection, index.name);
        let created = database.inner.write(|txn, store| {
            ops::create_index(
                txn,
                store,
                &index.collection,
                &index.spec,
                index.unique,
                Some(&index.name),
                crate::catalog::IndexSettings::default(),
            )
        });
        match created {
            Ok(_) => report.indexes_rebuilt.push(qualified),
            Err(error) => report.indexes_dropped.push((qualified, error.to_string())),
        }
    }
    changed
}

/// Rebuilds (or drops) every index verify finds damaged: whether there were any.
fn rebuild_damaged_indexes(database: &crate::Database, report: &mut RepairReport) -> Result<bool> {
    let mut changed = false;
    let mut check = VerifyReport::default();
    verify_collections(&database.inner.published(), &mut check)?;
    let mut damaged_indexes: Vec<(String, String)> = check
        .problems
        .into_iter()
        .filter_map(|problem| Some((problem.collection, problem.index?)))
        .collect();
    damaged_indexes.dedup();
    for (collection, index_name) in damaged_indexes {
        changed = true;
        let qualified = format!("{collection}.{index_name}");
        let rebuilt = database.inner.write(|txn, store| {
            let meta = &txn.catalog().collections[&collection];
            let index = meta
                .indexes
                .iter()
                .find(|index| index.name == index_name)
                .expect("verify named an existing index")
                .clone();
            storage::drop_index(txn, &collection, &index_name)?;
            ops::create_index(
                txn,
                store,
                &collection,
                &index.spec,
                index.unique,
                Some(&index_name),
                index.settings,
            )
        });
        match rebuilt {
            Ok(_) => report.indexes_rebuilt.push(qualified),
            Err(error) => {
                database
                    .inner
                    .write(|txn, _| storage::drop_index(txn, &collection, &index_name))?;
                report.indexes_dropped.push((qualified, error.to_string()));
            }
        }
    }
    Ok(changed)
}
