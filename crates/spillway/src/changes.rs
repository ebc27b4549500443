//! Change streams: the document changes of every commit, recorded durably, read back as
//! MongoDB's change events.
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
//! migrations. On a collection with pattern policies events describe *logical* documents:
//! every write to a main document or to a side document (a bucket, an archived element) is
//! one event of the main document it belongs to, computed from its logical document before
//! and after the commit, and side collections have no events of their own. So a `$push` that
//! spills into a bucket is one update appending `field.N`, and a migration, which changes no
//! logical document, has none. The cost: with recording on, each commit expands the logical
//! documents it touched, twice. An update's `updateDescription` names changed top-level
//! fields, except that an array grown at its end names the appended elements (`tags.3`) and
//! one cut at its end is in `truncatedArrays`, as MongoDB's events do (MongoDB names the
//! dotted paths an operator touched in other cases too); a replacement is a `replace` event.
//!
//! This module must never change a document: it only records and reads.

use std::collections::{BTreeMap, VecDeque};
use std::ops::Bound;
use std::sync::Arc;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use bson::{Bson, DateTime, Document, doc};
use spillway_doc::DocError;
use spillway_doc::expr::Variables;
use spillway_doc::key;
use spillway_doc::pipeline::{self, Pipeline, PipelineOptions, Source};
use spillway_pattern::Role;
use spillway_store::{KeyspaceId, Store};

use crate::database::Database;
use crate::error::{Error, Result, codes};
use crate::patterned;
use crate::storage::decode;
use crate::txn::{KeyRange, Published, Reader, WriteTxn};

/// The keyspace of change records.
pub(crate) const CHANGES_KEYSPACE: &str = "changes";

/// How many change records are kept (older ones are removed as new ones are written).
pub const RETAINED: u64 = 100_000;

/// How often a waiting stream looks for new records.
const POLL: Duration = Duration::from_millis(5);

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

    /// The number the next record will get.
    fn next_number(&self) -> u64 {
        self.next.load(Ordering::SeqCst)
    }

    /// The number of the first record committed at or after `seconds` since the epoch (the
    /// next record's, if none was).
    fn first_at_or_after(&self, state: &Published, seconds: u32) -> Result<u64> {
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
        let role = patterned::role(&after, &meta.name);
        for (key, value) in overlay {
            let old = if existed {
                current
                    .get(meta.docs, key)?
                    .map(std::borrow::Cow::into_owned)
            } else {
                None
            };
            match &role {
                Role::Main(_) => {
                    let replaced = txn.was_replaced(meta.docs, key);
                    *logical.entry((meta.name.clone(), key.clone())).or_default() |= replaced;
                }
                Role::Side(policies) => {
                    for stored in [old.as_deref(), value.as_deref()].into_iter().flatten() {
                        let stored = decode(stored)?;
                        for policy in policies {
                            if let Some(link) = stored.get(policy.pattern.link_field()) {
                                let main = policy.pattern.collection().to_string();
                                logical.entry((main, key::to_key(link))).or_default();
                            }
                        }
                    }
                }
                Role::Plain => {
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
fn record_number(key: &[u8]) -> u64 {
    key.try_into().map_or(0, u64::from_be_bytes)
}

/// A resume token: MongoDB's shape, `{ _data: <hex> }`, around a record number.
fn token(number: u64) -> Document {
    doc! { "_data": format!("{number:016X}") }
}

/// The record number a resume token names.
fn token_number(token: &Document) -> Result<u64> {
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

/// Which collections a stream reports.
#[derive(Debug, Clone)]
pub(crate) enum Scope {
    /// One collection (by stored name): its drop or rename ends the stream (`invalidate`).
    Collection(String),
    /// The collections whose stored names start with this prefix (`""`: all).
    Prefix(String),
}

impl Scope {
    fn covers(&self, collection: &str) -> bool {
        match self {
            Scope::Collection(name) => name == collection,
            Scope::Prefix(prefix) => collection.starts_with(prefix.as_str()),
        }
    }

    /// Whether a `dropDatabase` of the collections stored under `prefix` ends this stream.
    fn ended_by_database_drop(&self, prefix: &str) -> bool {
        match self {
            Scope::Collection(name) => name.starts_with(prefix),
            Scope::Prefix(own) => !own.is_empty() && own == prefix,
        }
    }
}

/// What an update event carries as `fullDocument` (MongoDB's `fullDocument` option).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum FullDocument {
    /// None for updates (inserts and replacements always carry the document).
    #[default]
    Default,
    /// The document as it is when the event is read (`"updateLookup"`).
    UpdateLookup,
}

/// A change stream: MongoDB change events of a collection or a database, in commit order,
/// from when it was opened (or from a resume token).
///
/// Read with [`ChangeStream::try_next`] (what has happened so far), or
/// [`ChangeStream::next_timeout`]; as an [`Iterator`] it waits for each event, ending only
/// after an `invalidate` (the collection it watches was dropped or renamed) or an error.
pub struct ChangeStream {
    database: Database,
    scope: Scope,
    /// The number of the next record to read.
    position: u64,
    full_document: FullDocument,
    pipeline: Option<Arc<Pipeline>>,
    /// How a stored collection name shows as the event's `ns`.
    namespace: NamespaceOf,
    ready: VecDeque<Document>,
    /// The token of the last event returned (or of the place the stream started).
    resume_token: Document,
    invalidated: bool,
}

impl std::fmt::Debug for ChangeStream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ChangeStream")
            .field("scope", &self.scope)
            .field("position", &self.position)
            .finish_non_exhaustive()
    }
}

/// The options of a change stream ([`crate::Collection::watch`], [`Database::watch`]).
#[derive(Debug, Clone, Default)]
pub struct ChangeStreamOptions {
    /// Stages applied to the events (`$match`, `$project`, `$addFields`...).
    pub pipeline: Vec<Document>,
    /// `fullDocument`.
    pub full_document: FullDocument,
    /// `resumeAfter` / `startAfter`: continue after the event with this `_id`.
    pub resume_after: Option<Document>,
    /// `startAtOperationTime`: start with the first change committed at or after this
    /// time (the `clusterTime` of events, the `operationTime` of replies), to the second.
    pub start_at: Option<bson::Timestamp>,
}

/// How a stored collection name shows as an event's `ns`.
pub(crate) type NamespaceOf = Arc<dyn Fn(&str) -> Document + Send + Sync>;

/// `watch`, run with `.run()` (a [`ChangeStream`]).
#[must_use = "an action does nothing until .run()"]
pub struct Watch<'a> {
    database: &'a Database,
    scope: Scope,
    options: ChangeStreamOptions,
    namespace: NamespaceOf,
}

impl<'a> Watch<'a> {
    /// A stream over `scope`; events name collections as `{ coll: <name> }`.
    pub(crate) fn new(database: &'a Database, scope: Scope) -> Watch<'a> {
        Watch {
            database,
            scope,
            options: ChangeStreamOptions::default(),
            namespace: Arc::new(|name: &str| doc! { "coll": name }),
        }
    }

    /// Applies these stages to the events (`$match`, `$project`, `$addFields`, `$set`,
    /// `$unset`, `$replaceRoot`...).
    pub fn pipeline(mut self, stages: impl IntoIterator<Item = Document>) -> Self {
        self.options.pipeline = stages.into_iter().collect();
        self
    }

    /// What update events carry as `fullDocument`.
    pub fn full_document(mut self, full_document: FullDocument) -> Self {
        self.options.full_document = full_document;
        self
    }

    /// Starts after the event whose `_id` is `token` (MongoDB's `resumeAfter` and
    /// `startAfter`): after a restart or a crash too, without a gap or a duplicate.
    pub fn resume_after(mut self, token: Document) -> Self {
        self.options.resume_after = Some(token);
        self
    }

    /// Starts with the first change committed at or after `time` (MongoDB's
    /// `startAtOperationTime`; Spillway's change times have a resolution of one second).
    pub fn start_at_operation_time(mut self, time: bson::Timestamp) -> Self {
        self.options.start_at = Some(time);
        self
    }

    /// How events name collections (the command layer's `{ db, coll }`).
    pub(crate) fn namespaces(mut self, namespace: NamespaceOf) -> Self {
        self.namespace = namespace;
        self
    }

    /// Opens the stream: it reports the changes committed from now (or after the token).
    pub fn run(self) -> Result<ChangeStream> {
        ChangeStream::open(self.database, self.scope, &self.options, self.namespace)
    }
}

impl ChangeStream {
    /// Opens a stream over `scope` on `database`, turning recording on if it is off.
    pub(crate) fn open(
        database: &Database,
        scope: Scope,
        options: &ChangeStreamOptions,
        namespace: NamespaceOf,
    ) -> Result<ChangeStream> {
        let inner = &database.inner;
        {
            let _guard = inner.lock_writer()?;
            inner.changes.enable(&inner.store)?;
        }
        let log = &inner.changes;
        let position = match &options.resume_after {
            Some(resume) => {
                let number = token_number(resume)?;
                if number + 1 < log.first.load(Ordering::SeqCst) {
                    return Err(invalid(format!(
                        "cannot resume the change stream after {resume}: that event is no longer in the change log (the newest {RETAINED} are kept)"
                    ))
                    .with_code(codes::CHANGE_STREAM_HISTORY_LOST));
                }
                number + 1
            }
            None => match options.start_at {
                Some(time) => log.first_at_or_after(&inner.published(), time.time)?,
                None => log.next_number(),
            },
        };
        let pipeline = if options.pipeline.is_empty() {
            None
        } else {
            Some(Arc::new(
                Pipeline::parse(&options.pipeline, &PipelineOptions::default())
                    .map_err(Error::aggregation)?,
            ))
        };
        Ok(ChangeStream {
            database: database.clone(),
            scope,
            position,
            full_document: options.full_document,
            pipeline,
            namespace,
            ready: VecDeque::new(),
            resume_token: token(position.saturating_sub(1)),
            invalidated: false,
        })
    }

    /// The token to resume after the last event returned: once every event read so far
    /// was returned, the place after the last record looked at (events a pipeline filtered
    /// out included), so that a resumed stream does not read them again.
    pub fn resume_token(&self) -> Document {
        if self.ready.is_empty() {
            token(self.position.saturating_sub(1))
        } else {
            self.resume_token.clone()
        }
    }

    /// The next event that has already happened, if any.
    pub fn try_next(&mut self) -> Result<Option<Document>> {
        if self.ready.is_empty() {
            self.read_new()?;
        }
        let event = self.ready.pop_front();
        if let Some(event) = &event
            && let Ok(id) = event.get_document("_id")
        {
            self.resume_token = id.clone();
        }
        Ok(event)
    }

    /// The next event, waiting up to `wait` for one.
    pub fn next_timeout(&mut self, wait: Duration) -> Result<Option<Document>> {
        let deadline = Instant::now() + wait;
        loop {
            if let Some(event) = self.try_next()? {
                return Ok(Some(event));
            }
            if self.invalidated || Instant::now() >= deadline {
                return Ok(None);
            }
            std::thread::sleep(POLL);
        }
    }

    /// Whether the stream has ended (after its `invalidate` event).
    pub fn is_invalidated(&self) -> bool {
        self.invalidated
    }

    /// Reads the records written since the last read into ready events.
    fn read_new(&mut self) -> Result<()> {
        if self.invalidated {
            return Ok(());
        }
        let state = self.database.inner.published();
        let Some(keyspace) = self.database.inner.changes.keyspace() else {
            return Ok(());
        };
        if state.snapshot.keyspace(CHANGES_KEYSPACE).is_none() {
            // Recording started after the latest commit: nothing recorded yet.
            return Ok(());
        }
        let range = KeyRange {
            low: Bound::Included(self.position.to_be_bytes().to_vec()),
            high: Bound::Unbounded,
        };
        let mut events = Vec::new();
        for entry in state.scan(keyspace, &range, false)? {
            let (key, value) = entry?;
            let number = record_number(&key);
            self.position = number + 1;
            let record = decode(&value)?;
            let collection = record.get_str("ns").unwrap_or_default().to_string();
            let database_drop = record.get_str("op").ok() == Some("dropDatabase");
            let ends = database_drop && self.scope.ended_by_database_drop(&collection);
            if !ends && !self.scope.covers(&collection) {
                continue;
            }
            events.push(self.event(number, &record, &state)?);
            let op = events
                .last()
                .and_then(|event| event.get_str("operationType").ok());
            let collection_gone =
                matches!(self.scope, Scope::Collection(_)) && matches!(op, Some("drop" | "rename"));
            if collection_gone || ends {
                let mut invalidate = doc! {
                    "_id": token(number),
                    "operationType": "invalidate",
                };
                if let Some(time) = events.last().and_then(|event| event.get("clusterTime")) {
                    invalidate.insert("clusterTime", time.clone());
                }
                events.push(invalidate);
                self.invalidated = true;
                break;
            }
        }
        let events = match &self.pipeline {
            None => events,
            Some(pipeline) => {
                let input = Box::new(events.into_iter().map(Ok));
                pipeline::run(
                    Arc::clone(pipeline),
                    input,
                    Arc::new(NoCollections),
                    Variables::default(),
                )
                .collect::<std::result::Result<Vec<_>, _>>()
                .map_err(Error::aggregation)?
            }
        };
        self.ready.extend(events);
        Ok(())
    }

    /// The MongoDB change event of record `number`.
    fn event(&self, number: u64, record: &Document, state: &Published) -> Result<Document> {
        let op = record.get_str("op").unwrap_or_default().to_string();
        let collection = record.get_str("ns").unwrap_or_default().to_string();
        let wall = record
            .get_datetime("wall")
            .copied()
            .unwrap_or_else(|_| DateTime::now());
        let mut event = doc! {
            "_id": token(number),
            "operationType": &op,
            "clusterTime": bson::Timestamp {
                time: u32::try_from(wall.timestamp_millis() / 1000).unwrap_or(u32::MAX),
                increment: (number & u64::from(u32::MAX)) as u32,
            },
            "wallTime": wall,
            "ns": (self.namespace)(&collection),
        };
        match op.as_str() {
            "rename" => {
                let to = record.get_str("to").unwrap_or_default();
                event.insert("to", (self.namespace)(to));
            }
            "dropDatabase" => {
                // The database alone: `{ db }`.
                let mut ns = (self.namespace)(&collection);
                ns.remove("coll");
                event.insert("ns", ns);
            }
            "drop" => {}
            _ => {
                let key = record.get_document("key").cloned().unwrap_or_default();
                match op.as_str() {
                    "insert" | "replace" => {
                        event.insert("documentKey", key);
                        event.insert(
                            "fullDocument",
                            record.get("doc").cloned().unwrap_or(Bson::Null),
                        );
                    }
                    "update" => {
                        event.insert(
                            "updateDescription",
                            doc! {
                                "updatedFields": record.get_document("updated").cloned().unwrap_or_default(),
                                "removedFields": record.get_array("removed").cloned().unwrap_or_default(),
                                "truncatedArrays": record.get_array("truncated").cloned().unwrap_or_default(),
                            },
                        );
                        if self.full_document == FullDocument::UpdateLookup {
                            let current = lookup(state, &collection, &key)?;
                            event
                                .insert("fullDocument", current.map_or(Bson::Null, Bson::Document));
                        }
                        event.insert("documentKey", key);
                    }
                    _ => {
                        event.insert("documentKey", key);
                    }
                }
            }
        }
        Ok(event)
    }
}

/// The current version of the document `key` names in `collection`, for `updateLookup`.
fn lookup(state: &Published, collection: &str, key: &Document) -> Result<Option<Document>> {
    let Some(meta) = state.catalog.collections.get(collection) else {
        return Ok(None);
    };
    let id = key.get("_id").cloned().unwrap_or(Bson::Null);
    let Some(bytes) = state.get(meta.docs, &spillway_doc::key::to_key(&id))? else {
        return Ok(None);
    };
    patterned::expand(state, collection, &decode(&bytes)?).map(Some)
}

/// A bad change stream argument: BadValue (2) unless the caller says otherwise.
fn invalid(message: String) -> Error {
    Error::argument(DocError::InvalidValue { message })
}

impl Iterator for ChangeStream {
    type Item = Result<Document>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            match self.next_timeout(Duration::from_secs(3600)) {
                Ok(Some(event)) => return Some(Ok(event)),
                Ok(None) if self.invalidated => return None,
                Ok(None) => {}
                Err(error) => return Some(Err(error)),
            }
        }
    }
}

/// Change stream pipelines read no other collection (`$lookup` finds nothing).
struct NoCollections;

impl Source for NoCollections {
    fn documents(
        &self,
        _collection: &str,
        _filter: &Document,
    ) -> spillway_doc::Result<Box<dyn Iterator<Item = spillway_doc::Result<Document>> + '_>> {
        Ok(Box::new(std::iter::empty()))
    }
}
