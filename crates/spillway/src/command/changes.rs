//! `$changeStream`: an `aggregate` whose first stage opens a change stream of a collection,
//! of a database (`aggregate: 1`), or of every database (`allChangesForCluster` on
//! `admin`), answered with a tailable `awaitData` cursor as MongoDB answers it.
//!
//! The stream itself is the facade's ([`crate::ChangeStream`]); this module reads the
//! stage's options, names collections as `{ db, coll }`, lets `getMore`'s `maxTimeMS`
//! say how long an empty batch waits, and closes the cursor (id 0) with the batch that
//! ends the stream (after its `invalidate`), so that drivers stop.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bson::{Bson, Document};

use super::Context;
use super::args::Args;
use super::cursors::{CursorTable, DocumentStream, ResumeToken};
use super::error::{CommandError, CommandResult};
use crate::changes::Scope;
use crate::{ChangeStream, FullDocument, FullDocumentBeforeChange, Watch};

/// The name of the stage.
pub(crate) const STAGE: &str = "$changeStream";

/// Whether `pipeline` opens a change stream; a `$changeStream` anywhere but first is
/// MongoDB's 40602.
pub(crate) fn opens_stream(pipeline: &[Document]) -> CommandResult<bool> {
    if let Some(position) = pipeline
        .iter()
        .skip(1)
        .position(|stage| stage.contains_key(STAGE))
    {
        return Err(CommandError::new(
            40602,
            format!(
                "$changeStream is only valid as the first stage in a pipeline, found at stage {}",
                position + 1
            ),
        ));
    }
    Ok(pipeline
        .first()
        .is_some_and(|stage| stage.contains_key(STAGE)))
}

/// Opens the change stream `pipeline` asks for (its first stage is `$changeStream`, and
/// only its first: see [`opens_stream`]) and
/// answers with the cursor's first batch. `collection` is `None` for `aggregate: 1`.
pub(crate) fn open(
    context: &mut Context<'_>,
    collection: Option<&str>,
    pipeline: &[Document],
    batch_size: Option<u64>,
) -> CommandResult {
    if context.transaction.is_some() {
        return Err(CommandError::new(
            263,
            "Operation not permitted in transaction: $changeStream",
        ));
    }
    let (stage, rest) = pipeline.split_first().expect("opens_stream checked it");
    let Some(Bson::Document(options)) = stage.get(STAGE) else {
        return Err(CommandError::type_mismatch(
            "the $changeStream stage takes a document of options",
        ));
    };
    let args = Args::new("$changeStream", options);
    args.only(&[
        "fullDocument",
        "fullDocumentBeforeChange",
        "resumeAfter",
        "startAfter",
        "startAtOperationTime",
        "allChangesForCluster",
        "showExpandedEvents",
    ])?;
    let full_document = match args.string("fullDocument")? {
        None | Some("default") => FullDocument::Default,
        Some("updateLookup") => FullDocument::UpdateLookup,
        Some("whenAvailable") => FullDocument::WhenAvailable,
        Some("required") => FullDocument::Required,
        Some(other) => {
            return Err(CommandError::bad_value(format!(
                "unknown full document mode: {other} (default, updateLookup, whenAvailable and required are)"
            )));
        }
    };
    let full_document_before_change = match args.string("fullDocumentBeforeChange")? {
        None | Some("off") => FullDocumentBeforeChange::Off,
        Some("whenAvailable") => FullDocumentBeforeChange::WhenAvailable,
        Some("required") => FullDocumentBeforeChange::Required,
        Some(other) => {
            return Err(CommandError::bad_value(format!(
                "unknown full document before change mode: {other} (off, whenAvailable and required are)"
            )));
        }
    };
    let start_at = match args.get("startAtOperationTime") {
        None => None,
        Some(Bson::Timestamp(time)) => Some(*time),
        Some(other) => {
            return Err(CommandError::type_mismatch(format!(
                "$changeStream: startAtOperationTime must be a timestamp, not {other}"
            )));
        }
    };
    let (resume_after, start_after) =
        match (args.document("resumeAfter")?, args.document("startAfter")?) {
            (Some(_), Some(_)) => {
                return Err(CommandError::new(
                    50865,
                    "Do not specify both 'resumeAfter' and 'startAfter' in a $changeStream stage",
                ));
            }
            (Some(_), None) | (None, Some(_)) if start_at.is_some() => {
                return Err(CommandError::new(
                    40674,
                    "Only one type of resume option is allowed, but multiple were found",
                ));
            }
            (resume, start) => (resume.cloned(), start.cloned()),
        };
    let show_expanded_events = args.bool("showExpandedEvents")?.unwrap_or(false);
    let whole_cluster = args.bool("allChangesForCluster")?.unwrap_or(false);
    let database = context.database.to_string();
    let namespaces = context.commands.namespaces.clone();
    let (scope, cursor_namespace) = match (collection, whole_cluster) {
        (Some(_), true) => {
            return Err(CommandError::bad_value(
                "allChangesForCluster is only valid with aggregate: 1 on the admin database",
            ));
        }
        (Some(name), false) => (
            Scope::Collection(context.stored(name)?),
            context.namespace(name),
        ),
        (None, true) if database == "admin" => (Scope::All, "admin.$cmd.aggregate".into()),
        (None, true) => {
            return Err(CommandError::bad_value(
                "allChangesForCluster is only valid on the admin database",
            ));
        }
        (None, false) => (
            namespaces.stream_scope(&database)?,
            format!("{database}.$cmd.aggregate"),
        ),
    };
    let mut watch = Watch::new(&context.commands.database, scope)
        .pipeline(rest.iter().cloned())
        .full_document(full_document)
        .full_document_before_change(full_document_before_change)
        .show_expanded_events(show_expanded_events)
        .namespaces(Arc::new(move |stored: &str| {
            namespaces.event_namespace(&database, stored)
        }));
    if let Some(token) = resume_after {
        watch = watch.resume_after(token);
    }
    if let Some(token) = start_after {
        watch = watch.start_after(token);
    }
    if let Some(time) = start_at {
        watch = watch.start_at_operation_time(time);
    }
    let stream = watch.run()?;
    let wait_ms = Arc::new(AtomicU64::new(0));
    let token = Arc::new(Mutex::new(stream.resume_token()));
    let finished = Arc::new(AtomicBool::new(false));
    let events: DocumentStream = Box::new(Events {
        stream,
        wait_ms: Arc::clone(&wait_ms),
        token: Arc::clone(&token),
        finished: Arc::clone(&finished),
    });
    CursorTable::open_tailable(
        &context.commands.cursors,
        &cursor_namespace,
        events,
        batch_size,
        Some(wait_ms),
        Some(token),
        Some(finished),
    )
}

/// MongoDB's rule for a change stream's read concern: `majority`, or none (which means
/// `majority`); any other level is 72 InvalidOptions.
pub(crate) fn check_read_concern(command: &Document) -> CommandResult<()> {
    let Some(Bson::Document(read_concern)) = command.get("readConcern") else {
        return Ok(());
    };
    match read_concern.get("level") {
        None => Ok(()),
        Some(Bson::String(level)) if level == "majority" => Ok(()),
        Some(level) => Err(CommandError::new(
            72,
            format!(
                "Aggregation stage {STAGE} cannot run with a readConcern other than 'majority'. Current readConcern: {level}"
            ),
        )),
    }
}

/// A change stream as a cursor's document stream: an empty read waits as long as the
/// `getMore` that asks allows (`awaitData`).
struct Events {
    stream: ChangeStream,
    wait_ms: Arc<AtomicU64>,
    /// The stream's resume token after the last read, for the cursor's replies.
    token: ResumeToken,
    /// Set once the stream has ended (its `invalidate` returned): the cursor then closes.
    finished: Arc<AtomicBool>,
}

impl Iterator for Events {
    type Item = crate::Result<Document>;

    fn next(&mut self) -> Option<Self::Item> {
        let wait = Duration::from_millis(self.wait_ms.swap(0, Ordering::SeqCst));
        let event = self.stream.next_timeout(wait).transpose();
        *self
            .token
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = self.stream.resume_token();
        self.finished
            .store(self.stream.is_finished(), Ordering::SeqCst);
        event
    }
}
