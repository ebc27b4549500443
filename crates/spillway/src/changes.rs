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

use crate::change_log::{
    CHANGES_KEYSPACE, RETAINED, TokenPlace, fragment_token, invalid, invalidate_token,
    record_number, token, token_place,
};
use crate::database::Database;
use crate::error::{Error, Result, codes};
use crate::patterned;
use crate::storage::decode;
use crate::txn::{KeyRange, Published, Reader};

/// The operations only streams opened with `showExpandedEvents` report.
const EXPANDED_EVENTS: &[&str] = &["create", "createIndexes", "dropIndexes", "modify"];

/// The stage that splits events larger than [`MAX_EVENT_BYTES`] into fragments; only last.
const SPLIT_STAGE: &str = "$changeStreamSplitLargeEvent";

/// The largest event a stream returns whole (MongoDB's 16 MiB document limit): a larger one
/// is split by [`SPLIT_STAGE`], or fails the stream with BSONObjectTooLarge (10334).
const MAX_EVENT_BYTES: usize = 16 * 1024 * 1024;

/// How many bytes of a fragment are kept for its `_id` and `splitEvent`.
const FRAGMENT_RESERVE: usize = 1024;

/// How often a waiting stream looks for new records.
const POLL: Duration = Duration::from_millis(5);
/// Which collections a stream reports.
#[derive(Debug, Clone)]
pub(crate) enum Scope {
    /// One collection (by stored name): its drop or rename ends the stream (`invalidate`).
    Collection(String),
    /// Every collection.
    All,
    /// The collections of one client database: those the stream's naming of collections
    /// ([`NamespaceOf`], the command layer's `{ db, coll }`) puts in it.
    Database(String),
}

/// The `db` that `namespace` gives stored collection `stored` (`None` without one, as the
/// embedded API's streams name collections).
fn database_of(namespace: &NamespaceOf, stored: &str) -> Option<String> {
    namespace(stored).get_str("db").ok().map(str::to_owned)
}

impl Scope {
    fn covers(&self, collection: &str, namespace: &NamespaceOf) -> bool {
        match self {
            Scope::Collection(name) => name == collection,
            Scope::All => true,
            Scope::Database(database) => {
                database_of(namespace, collection).as_deref() == Some(database.as_str())
            }
        }
    }

    /// Whether `record` is about this scope: a change to a collection it covers, or (for a
    /// collection's stream) a rename that dropped the watched collection as its target.
    fn covers_record(&self, record: &Document, namespace: &NamespaceOf) -> bool {
        let collection = record.get_str("ns").unwrap_or_default();
        self.covers(collection, namespace)
            || matches!(self, Scope::Collection(name)
                if record.get_str("op").ok() == Some("rename")
                    && record.contains_key("dropTarget")
                    && record.get_str("to").ok() == Some(name.as_str()))
    }

    /// Whether a `dropDatabase` recorded with `marker` (a stored name of the dropped
    /// database's space that names no collection) ends this stream.
    fn ended_by_database_drop(&self, marker: &str, namespace: &NamespaceOf) -> bool {
        let dropped = database_of(namespace, marker);
        match self {
            Scope::Collection(name) => database_of(namespace, name) == dropped,
            Scope::All => false,
            Scope::Database(database) => dropped.as_deref() == Some(database.as_str()),
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
    /// The document just after the update, if the collection keeps post-images
    /// (`changeStreamPreAndPostImages`), else null (`"whenAvailable"`).
    WhenAvailable,
    /// The document just after the update; an event without it fails the stream with
    /// NoMatchingDocument (47) (`"required"`).
    Required,
}

/// What update, replace and delete events carry as `fullDocumentBeforeChange` (MongoDB's
/// option of that name): the document before the change, kept when the collection has
/// `changeStreamPreAndPostImages` enabled.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum FullDocumentBeforeChange {
    /// No `fullDocumentBeforeChange` field (`"off"`).
    #[default]
    Off,
    /// The document before the change, or null when it was not kept (`"whenAvailable"`).
    WhenAvailable,
    /// The document before the change; an event without it fails the stream with
    /// NoMatchingDocument (47) (`"required"`).
    Required,
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
    full_document_before_change: FullDocumentBeforeChange,
    pipeline: Option<Arc<Pipeline>>,
    /// How a stored collection name shows as the event's `ns`.
    namespace: NamespaceOf,
    ready: VecDeque<Document>,
    /// The token of the last event returned (or of the place the stream started).
    resume_token: Document,
    invalidated: bool,
    /// `showExpandedEvents`: `create`, `createIndexes`, `dropIndexes` and `modify` events,
    /// `collectionUUID` and `disambiguatedPaths`.
    show_expanded_events: bool,
    /// `$changeStreamSplitLargeEvent`: events over 16 MiB come as fragments.
    split_large_events: bool,
    /// Resumed after a fragment: the record and the last fragment already returned.
    skip_fragments: Option<(u64, u32)>,
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
    /// `fullDocumentBeforeChange`.
    pub full_document_before_change: FullDocumentBeforeChange,
    /// `resumeAfter`: continue after the event with this `_id` (not an `invalidate`).
    pub resume_after: Option<Document>,
    /// `startAfter`: continue after the event with this `_id`, an `invalidate` too (a new
    /// stream on a collection dropped and created again).
    pub start_after: Option<Document>,
    /// `showExpandedEvents`: report `create`, `createIndexes`, `dropIndexes` and `modify`,
    /// with `collectionUUID` on events and `disambiguatedPaths` on updates (MongoDB 6.0+).
    pub show_expanded_events: bool,
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
        Watch::new(self, Scope::All)
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

    /// What update, replace and delete events carry as `fullDocumentBeforeChange`.
    pub fn full_document_before_change(mut self, before: FullDocumentBeforeChange) -> Self {
        self.options.full_document_before_change = before;
        self
    }

    /// Starts after the event whose `_id` is `token` (MongoDB's `resumeAfter`): after a
    /// restart or a crash too, without a gap or a duplicate. The token of an `invalidate`
    /// event is refused (InvalidResumeToken, 260): use [`Watch::start_after`].
    pub fn resume_after(mut self, token: Document) -> Self {
        self.options.resume_after = Some(token);
        self
    }

    /// Starts after the event whose `_id` is `token`, which may be an `invalidate` event's
    /// (MongoDB's `startAfter`).
    pub fn start_after(mut self, token: Document) -> Self {
        self.options.start_after = Some(token);
        self
    }

    /// Reports `create`, `createIndexes`, `dropIndexes` and `modify` events too, with
    /// `collectionUUID` on events and `disambiguatedPaths` on updates (MongoDB's
    /// `showExpandedEvents`).
    pub fn show_expanded_events(mut self, show: bool) -> Self {
        self.options.show_expanded_events = show;
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
        let resume = match (&options.resume_after, &options.start_after) {
            (Some(resume), _) => {
                let place = token_place(resume)?;
                if place.invalidate {
                    return Err(invalid(
                        "Attempting to resume a change stream using 'resumeAfter' is not allowed from an invalidate notification: use 'startAfter'".to_string(),
                    )
                    .with_code(codes::INVALID_RESUME_TOKEN));
                }
                Some((resume, place))
            }
            (None, Some(start)) => Some((start, token_place(start)?)),
            (None, None) => None,
        };
        let (stages, split_large_events) = split_stage(&options.pipeline)?;
        let skip_fragments = match resume {
            Some((
                _,
                TokenPlace {
                    number,
                    fragment: Some(fragment),
                    ..
                },
            )) => {
                if !split_large_events {
                    return Err(invalid(format!(
                        "cannot resume after a fragment of a split event without {SPLIT_STAGE} in the pipeline"
                    ))
                    .with_code(codes::CHANGE_STREAM_FATAL_ERROR));
                }
                Some((number, fragment))
            }
            _ => None,
        };
        let position = match resume {
            // After a fragment: read its record again, for the fragments after it.
            Some((
                _,
                TokenPlace {
                    number,
                    fragment: Some(_),
                    ..
                },
            )) => number,
            Some((resume, TokenPlace { number, .. })) => {
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
        let pipeline = if stages.is_empty() {
            None
        } else {
            Some(Arc::new(
                Pipeline::parse(stages, &PipelineOptions::default()).map_err(Error::aggregation)?,
            ))
        };
        Ok(ChangeStream {
            database: database.clone(),
            scope,
            position,
            full_document: options.full_document,
            full_document_before_change: options.full_document_before_change,
            pipeline,
            namespace,
            ready: VecDeque::new(),
            resume_token: match resume {
                Some((token, _)) => token.clone(),
                None => token(position.saturating_sub(1)),
            },
            invalidated: false,
            show_expanded_events: options.show_expanded_events,
            split_large_events,
            skip_fragments,
        })
    }

    /// The token to resume after the last event returned: once every event read so far
    /// was returned, the place after the last record looked at (events a pipeline filtered
    /// out included), so that a resumed stream does not read them again.
    pub fn resume_token(&self) -> Document {
        if self.ready.is_empty() && !self.invalidated {
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

    /// Whether the stream has ended and every event it read was returned: nothing more
    /// will ever come (a cursor over it closes).
    pub fn is_finished(&self) -> bool {
        self.invalidated && self.ready.is_empty()
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
            let op = record.get_str("op").unwrap_or_default();
            let database_drop = op == "dropDatabase";
            let ends = database_drop
                && self
                    .scope
                    .ended_by_database_drop(&collection, &self.namespace);
            if !ends && !self.scope.covers_record(&record, &self.namespace) {
                continue;
            }
            if !self.show_expanded_events && EXPANDED_EVENTS.contains(&op) {
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
                    "_id": invalidate_token(number),
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
                let tokens: Vec<Bson> = events
                    .iter()
                    .filter_map(|event| event.get("_id").cloned())
                    .collect();
                let input = Box::new(events.into_iter().map(Ok));
                let output = pipeline::run(
                    Arc::clone(pipeline),
                    input,
                    Arc::new(NoCollections),
                    Variables::default(),
                )
                .collect::<std::result::Result<Vec<_>, _>>()
                .map_err(Error::aggregation)?;
                if output
                    .iter()
                    .any(|event| event.get("_id").is_none_or(|id| !tokens.contains(id)))
                {
                    return Err(invalid(
                        "Encountered an event whose _id field, which contains the resume token, was modified by the pipeline. Modifying the _id field of an event makes it impossible to resume the stream from that point. Only transformations that retain the unmodified _id field are allowed".to_string(),
                    )
                    .with_code(codes::CHANGE_STREAM_FATAL_ERROR));
                }
                output
            }
        };
        for event in events {
            self.push_ready(event)?;
        }
        if self
            .skip_fragments
            .is_some_and(|(number, _)| self.position > number)
        {
            self.skip_fragments = None;
        }
        Ok(())
    }

    /// Queues `event`, split into fragments if it is over [`MAX_EVENT_BYTES`] and the stream
    /// has [`SPLIT_STAGE`] (else BSONObjectTooLarge, 10334); after a resume from a fragment,
    /// the fragments up to it are not queued again.
    fn push_ready(&mut self, event: Document) -> Result<()> {
        let size = bson_size(&event);
        if size <= MAX_EVENT_BYTES {
            self.ready.push_back(event);
            return Ok(());
        }
        if !self.split_large_events {
            return Err(too_large(size));
        }
        let number = event
            .get_document("_id")
            .ok()
            .and_then(|id| token_place(id).ok())
            .map_or(0, |place| place.number);
        let fragments = split_event(&event, number)?;
        for (position, fragment) in fragments.into_iter().enumerate() {
            let fragment_number = u32::try_from(position + 1).unwrap_or(u32::MAX);
            let done = self.skip_fragments.is_some_and(|(skip_number, skip)| {
                skip_number == number && fragment_number <= skip
            });
            if !done {
                self.ready.push_back(fragment);
            }
        }
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
        if self.show_expanded_events
            && let Ok(cid) = record.get_i64("cid")
        {
            event.insert("collectionUUID", collection_uuid(cid));
        }
        match op.as_str() {
            "rename" => {
                let to = (self.namespace)(record.get_str("to").unwrap_or_default());
                event.insert("to", to.clone());
                if self.show_expanded_events {
                    let mut description = doc! { "to": to };
                    if let Ok(target) = record.get_i64("dropTarget") {
                        description.insert("dropTarget", collection_uuid(target));
                    }
                    event.insert("operationDescription", description);
                }
            }
            "create" | "createIndexes" | "dropIndexes" | "modify" => {
                let mut description = record.get_document("spec").cloned().unwrap_or_default();
                if let Ok(view_on) = description.get_str("viewOn") {
                    let view_on = (self.namespace)(view_on)
                        .get("coll")
                        .cloned()
                        .unwrap_or_else(|| Bson::String(view_on.to_string()));
                    description.insert("viewOn", view_on);
                }
                if op == "create" {
                    // MongoDB 8.1's `nsType`; a record made before it knew only views by
                    // their `viewOn`.
                    let ns_type =
                        record
                            .get_str("nsType")
                            .unwrap_or(if description.contains_key("viewOn") {
                                "view"
                            } else {
                                "collection"
                            });
                    event.insert("nsType", ns_type);
                }
                event.insert("operationDescription", description);
                if let Ok(state) = record.get_document("state") {
                    event.insert(
                        "stateBeforeChange",
                        doc! { "collectionOptions": state.clone() },
                    );
                }
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
                        let mut description = doc! {
                            "updatedFields": record.get_document("updated").cloned().unwrap_or_default(),
                            "removedFields": record.get_array("removed").cloned().unwrap_or_default(),
                            "truncatedArrays": record.get_array("truncated").cloned().unwrap_or_default(),
                        };
                        if self.show_expanded_events {
                            description.insert(
                                "disambiguatedPaths",
                                record.get_document("paths").cloned().unwrap_or_default(),
                            );
                        }
                        event.insert("updateDescription", description);
                        let full = match self.full_document {
                            FullDocument::Default => None,
                            FullDocument::UpdateLookup => Some(
                                lookup(state, &collection, &key)?
                                    .map_or(Bson::Null, Bson::Document),
                            ),
                            FullDocument::WhenAvailable => {
                                Some(record.get("post").cloned().unwrap_or(Bson::Null))
                            }
                            FullDocument::Required => Some(
                                record
                                    .get("post")
                                    .cloned()
                                    .ok_or_else(|| missing_image("post", &event))?,
                            ),
                        };
                        if let Some(full) = full {
                            event.insert("fullDocument", full);
                        }
                        event.insert("documentKey", key);
                    }
                    _ => {
                        event.insert("documentKey", key);
                    }
                }
                if matches!(op.as_str(), "update" | "replace" | "delete") {
                    let before = match self.full_document_before_change {
                        FullDocumentBeforeChange::Off => None,
                        FullDocumentBeforeChange::WhenAvailable => {
                            Some(record.get("pre").cloned().unwrap_or(Bson::Null))
                        }
                        FullDocumentBeforeChange::Required => Some(
                            record
                                .get("pre")
                                .cloned()
                                .ok_or_else(|| missing_image("pre", &event))?,
                        ),
                    };
                    if let Some(before) = before {
                        event.insert("fullDocumentBeforeChange", before);
                    }
                }
            }
        }
        Ok(event)
    }
}

/// The stages before `$changeStreamSplitLargeEvent`, and whether it ends the pipeline
/// (anywhere else it is refused, as MongoDB refuses it).
fn split_stage(stages: &[Document]) -> Result<(&[Document], bool)> {
    match stages
        .iter()
        .position(|stage| stage.contains_key(SPLIT_STAGE))
    {
        None => Ok((stages, false)),
        Some(position) if position + 1 == stages.len() => Ok((&stages[..position], true)),
        Some(_) => Err(invalid(format!(
            "{SPLIT_STAGE} must be the last stage in the pipeline"
        ))
        .with_code(7_182_802)),
    }
}

/// The fragments of an event over [`MAX_EVENT_BYTES`]: its fields in order, as many in each
/// fragment as fit, each fragment with its own `_id` and `splitEvent: { fragment, of }`.
fn split_event(event: &Document, number: u64) -> Result<Vec<Document>> {
    let limit = MAX_EVENT_BYTES - FRAGMENT_RESERVE;
    let mut parts: Vec<Document> = Vec::new();
    let mut current = Document::new();
    let mut current_size = 0;
    for (field, value) in event.iter().filter(|(field, _)| field.as_str() != "_id") {
        let mut single = Document::new();
        single.insert(field.clone(), value.clone());
        let field_size = bson_size(&single);
        if !current.is_empty() && current_size + field_size > limit {
            parts.push(std::mem::take(&mut current));
            current_size = 0;
        }
        current.insert(field.clone(), value.clone());
        current_size += field_size;
    }
    if !current.is_empty() {
        parts.push(current);
    }
    let of = i32::try_from(parts.len()).unwrap_or(i32::MAX);
    let mut fragments = Vec::with_capacity(parts.len());
    for (position, part) in parts.into_iter().enumerate() {
        let fragment = i32::try_from(position + 1).unwrap_or(i32::MAX);
        let mut out = doc! {
            "_id": fragment_token(number, fragment.unsigned_abs()),
            "splitEvent": { "fragment": fragment, "of": of },
        };
        for (field, value) in part {
            out.insert(field, value);
        }
        let size = bson_size(&out);
        if size > MAX_EVENT_BYTES {
            return Err(too_large(size));
        }
        fragments.push(out);
    }
    Ok(fragments)
}

/// A document's BSON size in bytes.
fn bson_size(document: &Document) -> usize {
    document.to_vec().map_or(usize::MAX, |bytes| bytes.len())
}

/// MongoDB's BSONObjectTooLarge (10334) for an event that cannot be returned.
fn too_large(size: usize) -> Error {
    invalid(format!(
        "BSONObj size: {size} is invalid. Size must be between 0 and 16793600(16MB): a change event over 16 MiB needs {SPLIT_STAGE} as the pipeline's last stage"
    ))
    .with_code(10_334)
}

/// MongoDB's NoMatchingDocument (47) for a `"required"` pre- or post-image the event lacks.
fn missing_image(which: &str, event: &Document) -> Error {
    invalid(format!(
        "Change stream was configured to require a {which}-image for all update, delete and replace events, but the {which}-image was not found for event: {event} (enable changeStreamPreAndPostImages on the collection)"
    ))
    .with_code(codes::NO_MATCHING_DOCUMENT)
}

/// The UUID events give a collection (`collectionUUID`, a rename's `dropTarget`): made from
/// its catalog id, which is never reused, so a collection dropped and created again has a
/// new one.
fn collection_uuid(id: i64) -> Bson {
    let mut bytes = *b"SPLW\0\0\0\0\0\0\0\0\0\0\0\0";
    bytes[8..].copy_from_slice(&id.to_be_bytes());
    Bson::Binary(bson::Binary {
        subtype: bson::spec::BinarySubtype::Uuid,
        bytes: bytes.to_vec(),
    })
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
