//! Change streams: the records of the change log ([`crate::change_log`]) read back as
//! MongoDB's change events, for a collection or a whole database, resumable by token or
//! operation time.
//!
//! An update's `updateDescription` names changed top-level fields, except that an array
//! grown at its end names the appended elements (`tags.3`) and one cut at its end is in
//! `truncatedArrays`; a replacement is a `replace` event. On a collection with pattern
//! policies events describe logical documents (see [`crate::change_log`]).
//!
//! This module sits above [`crate::database`] (a stream holds its database) and must never
//! change a document: it only reads.

use std::collections::VecDeque;
use std::ops::Bound;
use std::sync::Arc;
use std::time::{Duration, Instant};

use bson::{Bson, DateTime, Document, doc};
use spillway_doc::expr::Variables;
use spillway_doc::pipeline::{self, Pipeline, PipelineOptions, Source};

use crate::change_log::{CHANGES_KEYSPACE, RETAINED, invalid, record_number, token, token_number};
use crate::database::Database;
use crate::error::{Error, Result, codes};
use crate::patterned;
use crate::storage::decode;
use crate::txn::{KeyRange, Published, Reader};

/// How often a waiting stream looks for new records.
const POLL: Duration = Duration::from_millis(5);
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

impl Database {
    /// Opens a change stream of every collection of the database (see
    /// [`crate::Collection::watch`]); dropping a collection does not end it.
    pub fn watch(&self) -> Watch<'_> {
        Watch::new(self, Scope::Prefix(String::new()))
    }
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
                if number + 1 < log.first_number() {
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
