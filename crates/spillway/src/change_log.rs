//! The change log: the document changes of every commit, recorded durably as numbered
//! records that the `changes` module reads back as MongoDB's change events.
//!
//! Recording starts the first time a change stream is opened on a database: from then on
//! every commit also writes one record per changed document (and per dropped or renamed
//! collection) to the `changes` keyspace, in the same store batch as the change itself. A
//! change is therefore recorded if and only if it committed, and a resume token (the
//! record's number) still names the same place after a crash or a restart: a stream resumed
//! after `kill -9` continues without a gap or a duplicate. The newest [`RETAINED`] records
//! are kept; resuming from an older one is MongoDB's ChangeStreamHistoryLost (286).
//!
//! A record is made at commit from what the commit writes, so every write path produces
//! events: the facade's operations, the command layer, transactions, TTL deletions,
//! migrations. On a collection with pattern policies records describe *logical* documents:
//! every write to a main document or to a side document (a bucket, an archived element) is
//! one record of the main document it belongs to, computed from its logical document before
//! and after the commit, and side collections have no records of their own. So a `$push`
//! that spills into a bucket is one update appending `field.N`, and a migration, which
//! changes no logical document, has none. The cost: with recording on, each commit expands
//! the logical documents it touched, twice. An update names changed top-level fields, except
//! that an array grown at its end names the appended elements (`tags.3`) and one cut at its
//! end is a truncated array, as MongoDB's events do (MongoDB names the dotted paths an
//! operator touched in other cases too).
//!
//! The log sits below the `database` module, which records each commit through it; this module
//! must never change a document: it only records.

use std::collections::BTreeMap;
use std::ops::Bound;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use bson::{Bson, DateTime, Document, doc};
use spillway_doc::DocError;
use spillway_doc::key;
use spillway_store::{KeyspaceId, Store};

use crate::error::{Error, Result};
use crate::patterned;
use crate::route::Route;
use crate::storage::decode;
use crate::txn::{KeyRange, Published, Reader, WriteTxn};

/// The keyspace of change records.
pub(crate) const CHANGES_KEYSPACE: &str = "changes";

/// How many change records are kept (older ones are removed as new ones are written).
pub const RETAINED: u64 = 100_000;

/// Where a database records changes: nowhere until the first stream opens.
#[derive(Debug, Default)]
pub(crate) struct ChangeLog {
    /// The keyspace, once recording is on.
    keyspace: Mutex<Option<KeyspaceId>>,
    /// The number of the next record.
    next: AtomicU64,
    /// The number of the oldest record kept.
    first: AtomicU64,
}

impl ChangeLog {
    /// The log of a database as opened: recording if an earlier run turned it on.
    pub(crate) fn opened(store: &Store) -> Result<ChangeLog> {
        let log = ChangeLog::default();
        if let Some(keyspace) = store.keyspace_id(CHANGES_KEYSPACE) {
            log.start(keyspace, store)?;
        }
        Ok(log)
    }

    /// Starts recording in `keyspace`, after the records it holds.
    fn start(&self, keyspace: KeyspaceId, store: &Store) -> Result<()> {
        let snapshot = store.snapshot();
        let everything: (Bound<&[u8]>, Bound<&[u8]>) = (Bound::Unbounded, Bound::Unbounded);
        let mut records = snapshot.range(keyspace, everything)?;
        let first = records
            .next()
            .transpose()?
            .map(|(key, _)| record_number(key));
        // With a single record, `next` has taken it and `next_back` finds nothing: the
        // last record is then the first.
        let last = records
            .next_back()
            .transpose()?
            .map(|(key, _)| record_number(key))
            .or(first);
        let first = first.unwrap_or(1);
        self.first.store(first, Ordering::SeqCst);
        self.next.store(
            last.unwrap_or(first.saturating_sub(1)) + 1,
            Ordering::SeqCst,
        );
        *self.lock() = Some(keyspace);
        Ok(())
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Option<KeyspaceId>> {
        self.keyspace
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The keyspace, if recording is on.
    pub(crate) fn keyspace(&self) -> Option<KeyspaceId> {
        *self.lock()
    }

    /// Turns recording on (durably: the keyspace's existence says so at the next open).
    /// The caller holds the database's write lock, so no commit runs meanwhile.
    pub(crate) fn enable(&self, store: &Store) -> Result<()> {
        if self.keyspace().is_some() {
            return Ok(());
        }
        let keyspace = store.keyspace(CHANGES_KEYSPACE)?;
        self.start(keyspace, store)
    }

    /// The number of the oldest record kept.
    pub(crate) fn first_number(&self) -> u64 {
        self.first.load(Ordering::SeqCst)
    }

    /// The number the next record will get.
    pub(crate) fn next_number(&self) -> u64 {
        self.next.load(Ordering::SeqCst)
    }

    /// The number of the first record committed at or after `seconds` since the epoch (the
    /// next record's, if none was).
    pub(crate) fn first_at_or_after(&self, state: &Published, seconds: u32) -> Result<u64> {
        let Some(keyspace) = self.keyspace() else {
            return Ok(self.next_number());
        };
        if state.snapshot.keyspace(CHANGES_KEYSPACE).is_none() {
            return Ok(self.next_number());
        }
        for entry in state.scan(keyspace, &KeyRange::all(), false)? {
            let (key, value) = entry?;
            let wall = decode(&value)?
                .get_datetime("wall")
                .map_or(0, |wall| wall.timestamp_millis() / 1000);
            if wall >= i64::from(seconds) {
                return Ok(record_number(&key));
            }
        }
        Ok(self.next_number())
    }

    /// Adds to `txn` (which the caller commits next, holding the write lock) the records of
    /// its changes to documents and collections, seen against `current`, the state it
    /// commits onto; and removes the records past [`RETAINED`].
    pub(crate) fn record(&self, txn: &mut WriteTxn, current: &Published) -> Result<()> {
        let Some(keyspace) = self.keyspace() else {
            return Ok(());
        };
        let mut records = changes_of(txn, current)?;
        records.extend(txn.take_notes());
        if records.is_empty() {
            return Ok(());
        }
        let time = DateTime::now();
        for mut record in records {
            record.insert("wall", time);
            let number = self.next.fetch_add(1, Ordering::SeqCst);
            let bytes = bson::serialize_to_vec(&record)
                .map_err(|error| Error::serialization(error.to_string()))?;
            txn.put(keyspace, number.to_be_bytes().to_vec(), bytes);
        }
        let next = self.next_number();
        let mut first = self.first.load(Ordering::SeqCst);
        while next.saturating_sub(first) > RETAINED {
            txn.delete(keyspace, first.to_be_bytes().to_vec());
            first += 1;
        }
        self.first.store(first, Ordering::SeqCst);
        Ok(())
    }
}

/// The change records of `txn` against `current`: `{op, ns, key, doc, updated, removed, to}`.
fn changes_of(txn: &WriteTxn, current: &Published) -> Result<Vec<Document>> {
    let mut records = Vec::new();
    let before = &current.catalog;
    let after = txn.catalog_arc();
    // Collections dropped or renamed: MongoDB reports the collection, not its documents.
    let mut gone = Vec::new();
    for (name, meta) in &before.collections {
        match after.collections.get(name) {
            Some(now) if now.docs == meta.docs => continue,
            _ => {}
        }
        gone.push(meta.docs);
        let renamed = after
            .collections
            .values()
            .find(|other| other.docs == meta.docs && &other.name != name);
        records.push(if let Some(other) = renamed {
            doc! { "op": "rename", "ns": name, "to": &other.name }
        } else {
            doc! { "op": "drop", "ns": name }
        });
    }
    let mut collections: Vec<_> = after.collections.values().collect();
    collections.sort_by(|a, b| a.name.cmp(&b.name));
    // The main documents (collection, `_id` key) whose logical document a write to a
    // collection with pattern policies may have changed, with whether the main document was
    // replaced: one event each, of the logical document, never of the bucket bookkeeping.
    let mut logical: BTreeMap<(String, Vec<u8>), bool> = BTreeMap::new();
    for meta in collections {
        if gone.contains(&meta.docs) && !before.collections.contains_key(&meta.name) {
            // The new name of a renamed collection: its documents did not change.
            continue;
        }
        let Some(overlay) = txn.overlay(meta.docs) else {
            continue;
        };
        let existed = txn.is_shared(meta.docs)
            && before
                .collections
                .values()
                .any(|other| other.docs == meta.docs);
        let route = Route::of(&after, &meta.name);
        for (key, value) in overlay {
            let old = if existed {
                current
                    .get(meta.docs, key)?
                    .map(std::borrow::Cow::into_owned)
            } else {
                None
            };
            match &route {
                Route::Main(_) => {
                    let replaced = txn.was_replaced(meta.docs, key);
                    *logical.entry((meta.name.clone(), key.clone())).or_default() |= replaced;
                }
                Route::Side(policies) => {
                    // A side document written by a replacement of its main document (which
                    // itself may not change) makes that main document's event a `replace`.
                    let replaced = txn.was_replaced(meta.docs, key);
                    for stored in [old.as_deref(), value.as_deref()].into_iter().flatten() {
                        let stored = decode(stored)?;
                        for policy in policies {
                            if let Some(link) = stored.get(policy.pattern.link_field()) {
                                let main = policy.pattern.collection().to_string();
                                *logical.entry((main, key::to_key(link))).or_default() |= replaced;
                            }
                        }
                    }
                }
                Route::Plain | Route::View | Route::TimeSeries(_) => {
                    let old = old.as_deref().map(decode).transpose()?;
                    let new = value.as_deref().map(decode).transpose()?;
                    let replaced = txn.was_replaced(meta.docs, key);
                    records.extend(document_change(&meta.name, old, new, replaced));
                }
            }
        }
    }
    for ((collection, key), replaced) in logical {
        let Some(meta) = after.collections.get(&collection) else {
            continue;
        };
        let old = match before.collections.get(&collection) {
            Some(previous) if previous.docs == meta.docs => current
                .get(previous.docs, &key)?
                .map(|stored| patterned::expand(current, &collection, &decode(&stored)?))
                .transpose()?,
            _ => None,
        };
        let new = txn
            .get(meta.docs, &key)?
            .map(|stored| patterned::expand(txn, &collection, &decode(&stored)?))
            .transpose()?;
        records.extend(document_change(&collection, old, new, replaced));
    }
    Ok(records)
}

/// The record of one document's change from `old` to `new` (`None`: absent). An update
/// names each changed top-level field, except that an array grown at its end names the new
/// elements (`tags.3`) and one cut at its end is a truncated array, as MongoDB's events do.
fn document_change(
    collection: &str,
    old: Option<Document>,
    new: Option<Document>,
    replaced: bool,
) -> Option<Document> {
    let key =
        |document: &Document| doc! { "_id": document.get("_id").cloned().unwrap_or(Bson::Null) };
    match (old, new) {
        (None, None) => None,
        (None, Some(new)) => {
            Some(doc! { "op": "insert", "ns": collection, "key": key(&new), "doc": new })
        }
        (Some(old), None) => Some(doc! { "op": "delete", "ns": collection, "key": key(&old) }),
        (Some(old), Some(new)) if old == new => None,
        (Some(_), Some(new)) if replaced => {
            Some(doc! { "op": "replace", "ns": collection, "key": key(&new), "doc": new })
        }
        (Some(old), Some(new)) => {
            let mut updated = Document::new();
            let mut truncated = Vec::new();
            for (field, value) in &new {
                match (old.get(field), value) {
                    (Some(before), _) if before == value => {}
                    (Some(Bson::Array(before)), Bson::Array(after))
                        if after.len() > before.len() && after.starts_with(before) =>
                    {
                        for (position, element) in after.iter().enumerate().skip(before.len()) {
                            updated.insert(format!("{field}.{position}"), element.clone());
                        }
                    }
                    (Some(Bson::Array(before)), Bson::Array(after))
                        if after.len() < before.len() && before.starts_with(after) =>
                    {
                        let size = i32::try_from(after.len()).unwrap_or(i32::MAX);
                        truncated.push(Bson::Document(doc! { "field": field, "newSize": size }));
                    }
                    _ => {
                        updated.insert(field.clone(), value.clone());
                    }
                }
            }
            let removed: Vec<Bson> = old
                .keys()
                .filter(|field| !new.contains_key(field.as_str()))
                .map(|field| Bson::String(field.clone()))
                .collect();
            Some(doc! {
                "op": "update",
                "ns": collection,
                "key": key(&new),
                "updated": updated,
                "removed": removed,
                "truncated": truncated,
            })
        }
    }
}

/// The number of the record stored under `key` (its big-endian bytes).
pub(crate) fn record_number(key: &[u8]) -> u64 {
    key.try_into().map_or(0, u64::from_be_bytes)
}

/// A resume token: MongoDB's shape, `{ _data: <hex> }`, around a record number.
pub(crate) fn token(number: u64) -> Document {
    doc! { "_data": format!("{number:016X}") }
}

/// The record number a resume token names.
pub(crate) fn token_number(token: &Document) -> Result<u64> {
    token
        .get_str("_data")
        .ok()
        .and_then(|data| u64::from_str_radix(data, 16).ok())
        .ok_or_else(|| {
            invalid(format!(
                "invalid resume token {token}: Spillway's tokens are {{ _data: <16 hex digits> }}"
            ))
        })
}

/// A bad change stream argument (a resume token, an operation time...): BadValue (2) unless the caller says otherwise.
pub(crate) fn invalid(message: String) -> Error {
    Error::argument(DocError::InvalidValue { message })
}
