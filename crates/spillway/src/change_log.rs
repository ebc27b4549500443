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
//! the logical documents it touched, twice. An update names the dotted paths that changed
//! (`a.1` for `$set: { "a.1": 2 }`, `tags.3` for an element appended), an array cut at its
//! end is a truncated array, and paths with a step that reads as a number are spelled out
//! step by step (`disambiguatedPaths`), as MongoDB's events do. The records of collections
//! (`create`, `createIndexes`, `dropIndexes`, `modify`, `drop`, `rename`) come from comparing
//! the catalog before and after the commit.
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

use crate::catalog::view::ViewDefinition;
use crate::catalog::{Catalog, CollectionMeta};
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
        let notes = txn.take_notes();
        apply_notes(&mut records, notes, &txn.catalog_arc());
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

/// Adds the records the facade noted (`dropDatabase`, `rename`, `modify`) to those computed
/// from the commit's writes (`after`: the catalog the commit leaves). A noted rename stands
/// for everything the rename changed: the catalog's own `rename` record of the source, the
/// target's records (its `drop` with `dropTarget`) and those of the side collections it moved
/// (`sides`, which the record then leaves out) are left out, and the rename says whether it
/// dropped a target (`dropTarget`: that collection's UUID).
fn apply_notes(records: &mut Vec<Document>, notes: Vec<Document>, after: &Catalog) {
    for mut note in notes {
        if !note.contains_key("cid")
            && let Some(meta) = after
                .collections
                .get(note.get_str("ns").unwrap_or_default())
        {
            note.insert("cid", meta.id as i64);
        }
        if note.get_str("op").ok() == Some("rename") {
            let from = note.get_str("ns").unwrap_or_default().to_string();
            let to = note.get_str("to").unwrap_or_default().to_string();
            let dropped_target = records.iter().find_map(|record| {
                (record.get_str("op").ok() == Some("drop")
                    && record.get_str("ns").ok() == Some(to.as_str()))
                .then(|| record.get("cid").cloned())
                .flatten()
            });
            let source = records.iter().find_map(|record| {
                (record.get_str("ns").ok() == Some(from.as_str()))
                    .then(|| record.get("cid").cloned())
                    .flatten()
            });
            let sides: Vec<String> = note
                .remove("sides")
                .and_then(|sides| match sides {
                    Bson::Array(sides) => Some(sides),
                    _ => None,
                })
                .unwrap_or_default()
                .into_iter()
                .filter_map(|side| side.as_str().map(str::to_string))
                .collect();
            records.retain(|record| {
                let ns = record.get_str("ns").unwrap_or_default();
                let op = record.get_str("op").unwrap_or_default();
                ns != to
                    && !(ns == from && matches!(op, "drop" | "rename"))
                    && !sides.iter().any(|side| side == ns)
            });
            if let Some(cid) = source {
                note.insert("cid", cid);
            }
            if let Some(cid) = dropped_target {
                note.insert("dropTarget", cid);
            }
        }
        records.push(note);
    }
}

/// The change records of `txn` against `current`: `{op, ns, cid, key, doc, updated, removed,
/// truncated, paths, to, spec}` (`cid`: the collection's catalog id, its UUID in events).
fn changes_of(txn: &WriteTxn, current: &Published) -> Result<Vec<Document>> {
    let before = &current.catalog;
    let after = txn.catalog_arc();
    let mut records = collection_changes(before, &after);
    let gone: Vec<KeyspaceId> = before
        .collections
        .iter()
        .filter(|(name, meta)| {
            after
                .collections
                .get(name.as_str())
                .is_none_or(|now| now.docs != meta.docs)
        })
        .map(|(_, meta)| meta.docs)
        .collect();
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
                    let images = keeps_images(meta);
                    records.extend(document_change(&meta.name, old, new, replaced, images));
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
        records.extend(document_change(
            &collection,
            old,
            new,
            replaced,
            keeps_images(meta),
        ));
    }
    for record in &mut records {
        if record.contains_key("cid") {
            continue;
        }
        let ns = record.get_str("ns").unwrap_or_default();
        if let Some(meta) = after.collections.get(ns) {
            record.insert("cid", meta.id as i64);
        }
    }
    Ok(records)
}

/// The records of collections dropped, renamed, created or changed (indexes, options) from
/// catalog `before` to `after`: MongoDB reports a drop or rename for the collection, not its
/// documents; `create`, `createIndexes`, `dropIndexes` and `modify` are the events streams
/// show with `showExpandedEvents`.
fn collection_changes(before: &Catalog, after: &Catalog) -> Vec<Document> {
    let mut records = Vec::new();
    if std::ptr::eq(before, after) {
        return records;
    }
    for (name, meta) in &before.collections {
        match after.collections.get(name) {
            Some(now) if now.docs == meta.docs => continue,
            _ => {}
        }
        let renamed = after
            .collections
            .values()
            .find(|other| other.docs == meta.docs && &other.name != name);
        let cid = meta.id as i64;
        records.push(if let Some(other) = renamed {
            doc! { "op": "rename", "ns": name, "to": &other.name, "cid": cid }
        } else {
            doc! { "op": "drop", "ns": name, "cid": cid }
        });
    }
    for (name, meta) in &after.collections {
        let cid = meta.id as i64;
        let previous = before
            .collections
            .get(name)
            .filter(|old| old.docs == meta.docs);
        let Some(previous) = previous else {
            let renamed = before.collections.values().any(|old| old.docs == meta.docs);
            if !renamed {
                let spec = meta.view.as_ref().map_or_else(
                    || doc! { "idIndex": { "v": 2, "key": { "_id": 1 }, "name": "_id_" } },
                    ViewDefinition::to_record,
                );
                let ns_type = if meta.view.is_some() {
                    "view"
                } else if meta.timeseries.is_some() {
                    "timeseries"
                } else {
                    "collection"
                };
                records.push(
                    doc! { "op": "create", "ns": name, "cid": cid, "spec": spec, "nsType": ns_type },
                );
            }
            continue;
        };
        let old_record = comparable_record(previous);
        let new_record = comparable_record(meta);
        if old_record == new_record {
            continue;
        }
        let index_specs = |record: &Document, names: &[String]| -> Vec<Bson> {
            index_records(record)
                .filter(|index| {
                    names
                        .iter()
                        .any(|name| index.get_str("name").ok() == Some(name.as_str()))
                })
                .map(|index| Bson::Document(index_spec(index)))
                .collect()
        };
        let names = |record: &Document| -> Vec<String> {
            index_records(record)
                .filter_map(|index| index.get_str("name").ok().map(str::to_string))
                .collect()
        };
        let (old_names, new_names) = (names(&old_record), names(&new_record));
        let created: Vec<String> = new_names
            .iter()
            .filter(|name| !old_names.contains(name))
            .cloned()
            .collect();
        let dropped: Vec<String> = old_names
            .iter()
            .filter(|name| !new_names.contains(name))
            .cloned()
            .collect();
        if !created.is_empty() {
            let indexes = index_specs(&new_record, &created);
            records.push(doc! { "op": "createIndexes", "ns": name, "cid": cid, "spec": { "indexes": indexes } });
        }
        if !dropped.is_empty() {
            let indexes = index_specs(&old_record, &dropped);
            records.push(doc! { "op": "dropIndexes", "ns": name, "cid": cid, "spec": { "indexes": indexes } });
        }
        let without_indexes = |record: &Document| {
            let mut record = record.clone();
            record.remove("indexes");
            record
        };
        let kept = |record: &Document| -> Vec<Document> {
            index_records(record)
                .filter(|index| {
                    let name = index.get_str("name").unwrap_or_default();
                    old_names.iter().any(|old| old == name)
                        && new_names.iter().any(|new| new == name)
                })
                .cloned()
                .collect()
        };
        if without_indexes(&old_record) != without_indexes(&new_record)
            || kept(&old_record) != kept(&new_record)
        {
            let mut options = without_indexes(&new_record);
            let mut state = without_indexes(&old_record);
            for field in ["name", "id", "keyspace"] {
                options.remove(field);
                state.remove(field);
            }
            records.push(doc! {
                "op": "modify",
                "ns": name,
                "cid": cid,
                "spec": options,
                "state": state,
            });
        }
    }
    records
}

/// A collection's catalog record without what changes with its documents (an index's
/// `multikey`).
fn comparable_record(meta: &CollectionMeta) -> Document {
    let mut record = meta.to_record();
    if let Ok(indexes) = record.get_array_mut("indexes") {
        for index in indexes {
            if let Bson::Document(index) = index {
                index.remove("multikey");
                index.remove("keyspace");
            }
        }
    }
    record
}

/// The index records of a collection's catalog record.
fn index_records(record: &Document) -> impl Iterator<Item = &Document> {
    record
        .get_array("indexes")
        .map(Vec::as_slice)
        .unwrap_or_default()
        .iter()
        .filter_map(Bson::as_document)
}

/// An index as MongoDB's events describe it: `{ v: 2, key, name, unique?, ... }`.
fn index_spec(index: &Document) -> Document {
    let mut spec = doc! {
        "v": 2,
        "key": index.get("key").cloned().unwrap_or(Bson::Document(Document::new())),
        "name": index.get("name").cloned().unwrap_or(Bson::Null),
    };
    if index.get_bool("unique").unwrap_or(false) {
        spec.insert("unique", true);
    }
    for field in [
        "sparse",
        "partialFilterExpression",
        "hidden",
        "expireAfterSeconds",
    ] {
        if let Some(value) = index.get(field) {
            spec.insert(field, value.clone());
        }
    }
    spec
}

/// The record of one document's change from `old` to `new` (`None`: absent). An update
/// names the dotted paths that changed, comparing documents and arrays inside (see [`Diff`]):
/// `$set: { "a.1": 2 }` is `a.1`, an array grown at its end names the new elements
/// (`tags.3`) and one cut at its end is a truncated array, as MongoDB's events do.
///
/// With `images` (the collection's `changeStreamPreAndPostImages`), an update, replacement
/// or deletion keeps the document before it (`pre`) and an update the document after it
/// (`post`), for `fullDocumentBeforeChange` and `fullDocument: "whenAvailable"` or
/// `"required"`; they are kept as long as the record.
fn document_change(
    collection: &str,
    old: Option<Document>,
    new: Option<Document>,
    replaced: bool,
    images: bool,
) -> Option<Document> {
    let key =
        |document: &Document| doc! { "_id": document.get("_id").cloned().unwrap_or(Bson::Null) };
    let mut record = match (&old, new) {
        (None, None) => return None,
        (None, Some(new)) => {
            return Some(doc! { "op": "insert", "ns": collection, "key": key(&new), "doc": new });
        }
        (Some(old), None) => doc! { "op": "delete", "ns": collection, "key": key(old) },
        (Some(old), Some(new)) if *old == new => return None,
        (Some(_), Some(new)) if replaced => {
            doc! { "op": "replace", "ns": collection, "key": key(&new), "doc": new }
        }
        (Some(old), Some(new)) => {
            let mut diff = Diff::default();
            diff.documents(&mut Vec::new(), old, &new);
            let mut record = doc! {
                "op": "update",
                "ns": collection,
                "key": key(&new),
                "updated": diff.updated,
                "removed": diff.removed,
                "truncated": diff.truncated,
                "paths": diff.ambiguous,
            };
            if images {
                record.insert("post", new);
            }
            record
        }
    };
    if images && let Some(old) = old {
        record.insert("pre", old);
    }
    Some(record)
}

/// Whether a collection keeps pre- and post-images (`changeStreamPreAndPostImages: {
/// enabled: true }`).
fn keeps_images(meta: &CollectionMeta) -> bool {
    meta.echoed
        .get_document("changeStreamPreAndPostImages")
        .and_then(|images| images.get_bool("enabled"))
        .unwrap_or(false)
}

/// One step of a path into a document: a field name or an array position.
#[derive(Debug, Clone)]
enum Step {
    Field(String),
    Position(usize),
}

/// An update's description, built by comparing the document before and after.
#[derive(Debug, Default)]
struct Diff {
    /// Dotted paths that were set, with their new values.
    updated: Document,
    /// Dotted paths that were removed.
    removed: Vec<Bson>,
    /// `{ field, newSize }` of arrays cut at their end.
    truncated: Vec<Bson>,
    /// The paths above with a step that reads as a number, as their steps (field names as
    /// strings, array positions as integers): MongoDB's `disambiguatedPaths`.
    ambiguous: Document,
}

impl Diff {
    /// Compares two documents at `path`: a field whose value is a document or an array on
    /// both sides is compared inside, so `$set: { "a.1": 2 }` is `a.1`, not the whole `a`.
    fn documents(&mut self, path: &mut Vec<Step>, old: &Document, new: &Document) {
        for (field, value) in new {
            path.push(Step::Field(field.clone()));
            match old.get(field) {
                Some(before) => self.values(path, before, value),
                None => self.set(path, value),
            }
            path.pop();
        }
        for field in old.keys().filter(|field| !new.contains_key(field.as_str())) {
            path.push(Step::Field(field.clone()));
            let dotted = self.dotted(path);
            self.removed.push(Bson::String(dotted));
            path.pop();
        }
    }

    /// Compares two values at `path`.
    fn values(&mut self, path: &mut Vec<Step>, old: &Bson, new: &Bson) {
        match (old, new) {
            (old, new) if old == new => {}
            (Bson::Document(old), Bson::Document(new)) => self.documents(path, old, new),
            (Bson::Array(old), Bson::Array(new)) => self.arrays(path, old, new),
            _ => self.set(path, new),
        }
    }

    /// Compares two arrays at `path`: changed positions, positions added at the end, and a
    /// cut at the end (`truncatedArrays`).
    fn arrays(&mut self, path: &mut Vec<Step>, old: &[Bson], new: &[Bson]) {
        for (position, (before, after)) in old.iter().zip(new).enumerate() {
            path.push(Step::Position(position));
            self.values(path, before, after);
            path.pop();
        }
        for (position, element) in new.iter().enumerate().skip(old.len()) {
            path.push(Step::Position(position));
            self.set(path, element);
            path.pop();
        }
        if new.len() < old.len() {
            let field = self.dotted(path);
            let size = i32::try_from(new.len()).unwrap_or(i32::MAX);
            self.truncated
                .push(Bson::Document(doc! { "field": field, "newSize": size }));
        }
    }

    fn set(&mut self, path: &[Step], value: &Bson) {
        let dotted = self.dotted(path);
        self.updated.insert(dotted, value.clone());
    }

    /// `path` dotted, noting it in `ambiguous` if a step reads as a number.
    fn dotted(&mut self, path: &[Step]) -> String {
        let mut dotted = String::new();
        let mut ambiguous = false;
        for step in path {
            if !dotted.is_empty() {
                dotted.push('.');
            }
            match step {
                Step::Field(name) => {
                    // A field named like a position, or with a dot in its name.
                    ambiguous |= name.contains('.')
                        || (!name.is_empty() && name.bytes().all(|byte| byte.is_ascii_digit()));
                    dotted.push_str(name);
                }
                Step::Position(position) => dotted.push_str(&position.to_string()),
            }
        }
        if ambiguous && !self.ambiguous.contains_key(&dotted) {
            let steps: Vec<Bson> = path
                .iter()
                .map(|step| match step {
                    Step::Field(name) => Bson::String(name.clone()),
                    Step::Position(position) => {
                        Bson::Int32(i32::try_from(*position).unwrap_or(i32::MAX))
                    }
                })
                .collect();
            self.ambiguous.insert(dotted.clone(), steps);
        }
        dotted
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

/// The token of the `invalidate` event that follows record `number` (the drop, rename or
/// `dropDatabase` that ended a stream): the record's token with a last byte `01`, so that
/// `resumeAfter` can refuse it and `startAfter` start after it.
pub(crate) fn invalidate_token(number: u64) -> Document {
    doc! { "_data": format!("{number:016X}01") }
}

/// The token of fragment `fragment` (from 1) of the event of record `number`, split by
/// `$changeStreamSplitLargeEvent`: the record's token, `02`, and the fragment in 4 hex digits.
pub(crate) fn fragment_token(number: u64, fragment: u32) -> Document {
    doc! { "_data": format!("{number:016X}02{fragment:04X}") }
}

/// Where a resume token points: after a record, after the `invalidate` that followed it, or
/// after one fragment of its event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct TokenPlace {
    pub(crate) number: u64,
    pub(crate) invalidate: bool,
    pub(crate) fragment: Option<u32>,
}

/// The place a resume token names.
pub(crate) fn token_place(token: &Document) -> Result<TokenPlace> {
    let data = token.get_str("_data").ok();
    let place = match data {
        Some(data) if data.len() == 16 => {
            u64::from_str_radix(data, 16).ok().map(|number| TokenPlace {
                number,
                invalidate: false,
                fragment: None,
            })
        }
        Some(data) if data.len() == 18 && data.ends_with("01") => data
            .get(..16)
            .and_then(|number| u64::from_str_radix(number, 16).ok())
            .map(|number| TokenPlace {
                number,
                invalidate: true,
                fragment: None,
            }),
        Some(data) if data.len() == 22 && data.get(16..18) == Some("02") => {
            let number = data
                .get(..16)
                .and_then(|hex| u64::from_str_radix(hex, 16).ok());
            let fragment = data
                .get(18..)
                .and_then(|hex| u32::from_str_radix(hex, 16).ok());
            number.zip(fragment).map(|(number, fragment)| TokenPlace {
                number,
                invalidate: false,
                fragment: Some(fragment),
            })
        }
        _ => None,
    };
    place.ok_or_else(|| {
        invalid(format!(
            "invalid resume token {token}: Spillway's tokens are {{ _data: <16 hex digits> }}, 18 for an invalidate event, 22 for a fragment of a split event"
        ))
    })
}

/// A bad change stream argument (a resume token, an operation time...): BadValue (2) unless the caller says otherwise.
pub(crate) fn invalid(message: String) -> Error {
    Error::argument(DocError::InvalidValue { message })
}
