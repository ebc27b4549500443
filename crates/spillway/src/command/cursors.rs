//! Open cursors between `find`/`aggregate`/`list*` and their `getMore`s: a table of
//! document streams by cursor id, each read a batch at a time.
//!
//! A cursor reads the snapshot it started on (the facade's [`Cursor`](crate::Cursor) holds it),
//! so later writes never disturb it; an abandoned cursor would pin that snapshot, so cursors
//! unread for [`CURSOR_TIMEOUT`] are closed by [`CursorTable::reap`]. This module must never
//! run a query: it only pages through streams the commands opened.
//!
//! Reading a batch runs the query (a `$where` script may run for seconds), so it never
//! happens under the table's lock: a first batch is read before the cursor enters the table,
//! and a `getMore` takes its cursor out of the table, reads, and puts it back. One client's
//! slow query never holds up another's.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bson::{Bson, Document, doc};

use super::error::{CommandError, CommandResult};
use super::labels;
use crate::Result;

/// How long a cursor may stay unread before it is closed (MongoDB's default).
pub(crate) const CURSOR_TIMEOUT: Duration = Duration::from_secs(600);

/// Documents in a first batch when the command does not say (MongoDB's default for `find`
/// and `aggregate`).
pub(crate) const DEFAULT_FIRST_BATCH: u64 = 101;

/// The most document bytes one batch carries, so that a reply stays well under the 48 MB
/// message limit (MongoDB's 16 MiB).
const MAX_BATCH_BYTES: usize = 16 * 1024 * 1024;

/// A stream of documents a cursor pages through.
pub(crate) type DocumentStream = Box<dyn Iterator<Item = Result<Document>> + Send>;

/// One open cursor.
struct OpenCursor {
    /// `database.collection` as the client named it.
    namespace: String,
    stream: DocumentStream,
    /// A document read ahead to learn whether the stream was exhausted.
    ahead: Option<Document>,
    /// How many documents the cursor may still return (a `find`'s `limit`): the cursor
    /// closes with the batch that reaches it.
    remaining: Option<u64>,
    last_used: Instant,
    /// `noCursorTimeout`: never reaped.
    immortal: bool,
    /// A tailable cursor stays open when it reaches the end of its stream.
    tailable: bool,
    /// An `awaitData` cursor: where `getMore` puts how long its stream may wait for data.
    waits: Option<Arc<AtomicU64>>,
    /// A change stream's cursor: where its stream keeps the token to resume after the last
    /// batch (`postBatchResumeToken`).
    resume_token: Option<ResumeToken>,
    /// Where a tailable cursor's stream says it has ended for good (a change stream after its
    /// `invalidate`): the cursor then closes at the end of its documents.
    finished: Option<Arc<AtomicBool>>,
}

/// The resume token a change stream's cursor reports with each batch.
pub(crate) type ResumeToken = Arc<Mutex<Document>>;

/// How long an `awaitData` cursor's `getMore` waits for new documents unless its `maxTimeMS`
/// says otherwise (MongoDB's default).
const DEFAULT_AWAIT_MS: u64 = 1000;

/// Open cursors by id.
#[derive(Default)]
pub(crate) struct CursorTable {
    open: HashMap<i64, OpenCursor>,
    next_id: i64,
    /// Cursors taken out of the table while a `getMore` reads them (without the table's
    /// lock), and those of them killed meanwhile.
    out: HashSet<i64>,
    killed_out: HashSet<i64>,
}

/// A cursor taken out of the table for one `getMore` ([`CursorTable::take`]).
pub(crate) struct TakenCursor {
    cursor: OpenCursor,
    batch: CommandResult<Batch>,
}

impl TakenCursor {
    /// Reads the next batch; an `awaitData` cursor waits up to `max_time_ms` (1 s by
    /// default) for documents.
    pub(crate) fn read(&mut self, batch_size: Option<u64>, max_time_ms: Option<u64>) {
        if let Some(waits) = &self.cursor.waits {
            waits.store(max_time_ms.unwrap_or(DEFAULT_AWAIT_MS), Ordering::SeqCst);
        }
        self.batch = read_limited(
            &mut self.cursor.stream,
            &mut self.cursor.ahead,
            batch_size,
            &mut self.cursor.remaining,
        );
    }
}

impl std::fmt::Debug for CursorTable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CursorTable")
            .field("open", &self.open.len())
            .finish_non_exhaustive()
    }
}

/// A batch read from a stream, and whether the stream has more.
pub(crate) struct Batch {
    pub(crate) documents: Vec<Bson>,
    pub(crate) exhausted: bool,
}

/// Reads up to `limit` documents (all, bounded by bytes, when `None`) from `stream`, with the
/// document read ahead last time first.
///
/// As in MongoDB, a batch filled to `limit` does not look further: the cursor stays open
/// even if the stream has nothing more, and the next `getMore` finds out (drivers count on
/// that: an exhaust cursor of 3 documents in batches of 1 takes 3 `getMore`s). Only a batch
/// that ends short, or a cursor's own `limit` reached, closes the cursor.
fn read_batch(
    stream: &mut DocumentStream,
    ahead: &mut Option<Document>,
    limit: Option<u64>,
) -> CommandResult<Batch> {
    let mut documents = Vec::new();
    let mut bytes = 0usize;
    loop {
        if limit.is_some_and(|limit| limit > 0 && documents.len() as u64 >= limit) {
            return Ok(Batch {
                documents,
                exhausted: false,
            });
        }
        let next = match ahead.take() {
            Some(document) => Some(document),
            None => stream.next().transpose().map_err(CommandError::from)?,
        };
        let Some(document) = next else {
            return Ok(Batch {
                documents,
                exhausted: true,
            });
        };
        let full = limit == Some(0);
        let size = document.to_vec().map_or(0, |bytes| bytes.len());
        if full || (!documents.is_empty() && bytes + size > MAX_BATCH_BYTES) {
            *ahead = Some(document);
            return Ok(Batch {
                documents,
                exhausted: false,
            });
        }
        bytes += size;
        documents.push(Bson::Document(document));
    }
}

/// [`read_batch`] within a cursor's `remaining` documents, counting them down: the batch
/// that reaches the limit says the cursor is exhausted.
fn read_limited(
    stream: &mut DocumentStream,
    ahead: &mut Option<Document>,
    batch_size: Option<u64>,
    remaining: &mut Option<u64>,
) -> CommandResult<Batch> {
    let Some(left) = *remaining else {
        return read_batch(stream, ahead, batch_size);
    };
    let size = batch_size
        .filter(|size| *size > 0)
        .map_or(left, |size| size.min(left));
    let mut batch = read_batch(stream, ahead, Some(size))?;
    let left = left.saturating_sub(batch.documents.len() as u64);
    *remaining = Some(left);
    batch.exhausted |= left == 0;
    Ok(batch)
}

fn lock(table: &Mutex<CursorTable>) -> std::sync::MutexGuard<'_, CursorTable> {
    table
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl CursorTable {
    /// The first batch of a new cursor over `stream`, read without `table`'s lock; the
    /// cursor then enters the table (and its id is returned) only if documents remain and
    /// `single_batch` is false.
    pub(crate) fn open(
        table: &Mutex<CursorTable>,
        namespace: &str,
        stream: DocumentStream,
        batch_size: Option<u64>,
        single_batch: bool,
        immortal: bool,
    ) -> CommandResult<Document> {
        CursorTable::open_limited(
            table,
            namespace,
            stream,
            batch_size,
            None,
            single_batch,
            immortal,
        )
    }

    /// [`CursorTable::open`] for a stream of at most `limit` documents (a `find`'s limit),
    /// which closes the cursor with the batch that reaches it.
    pub(crate) fn open_limited(
        table: &Mutex<CursorTable>,
        namespace: &str,
        mut stream: DocumentStream,
        batch_size: Option<u64>,
        limit: Option<u64>,
        single_batch: bool,
        immortal: bool,
    ) -> CommandResult<Document> {
        let mut ahead = None;
        let mut remaining = limit.filter(|limit| *limit > 0);
        let batch = read_limited(
            &mut stream,
            &mut ahead,
            Some(batch_size.unwrap_or(DEFAULT_FIRST_BATCH)),
            &mut remaining,
        )?;
        let id = if batch.exhausted || single_batch {
            0
        } else {
            lock(table).insert(OpenCursor {
                namespace: namespace.to_string(),
                stream,
                ahead,
                remaining,
                last_used: Instant::now(),
                immortal,
                tailable: false,
                waits: None,
                resume_token: None,
                finished: None,
            })
        };
        Ok(cursor_reply(id, namespace, "firstBatch", batch.documents))
    }

    /// The first batch of a tailable cursor over `stream` (read without `table`'s lock),
    /// which stays open at the end of its documents (until killed, reaped, its stream
    /// fails, or `finished` says it has ended); `waits` is set for an `awaitData` cursor.
    pub(crate) fn open_tailable(
        table: &Mutex<CursorTable>,
        namespace: &str,
        mut stream: DocumentStream,
        batch_size: Option<u64>,
        waits: Option<Arc<AtomicU64>>,
        resume_token: Option<ResumeToken>,
        finished: Option<Arc<AtomicBool>>,
    ) -> CommandResult<Document> {
        let mut ahead = None;
        let batch = read_batch(
            &mut stream,
            &mut ahead,
            Some(batch_size.unwrap_or(DEFAULT_FIRST_BATCH)),
        )?;
        let reply_token = resume_token.clone();
        let id = if batch.exhausted && has_finished(finished.as_ref()) {
            0
        } else {
            lock(table).insert(OpenCursor {
                namespace: namespace.to_string(),
                stream,
                ahead,
                remaining: None,
                last_used: Instant::now(),
                immortal: false,
                tailable: true,
                waits,
                resume_token,
                finished,
            })
        };
        let mut reply = cursor_reply(id, namespace, "firstBatch", batch.documents);
        add_resume_token(&mut reply, reply_token.as_ref());
        Ok(reply)
    }

    /// Adds `cursor` under a fresh id.
    fn insert(&mut self, cursor: OpenCursor) -> i64 {
        self.next_id = self.next_id.wrapping_add(1).max(1);
        let id = self.next_id;
        self.open.insert(id, cursor);
        id
    }

    /// Closes the cursors `ids`: `(killed, not found)`. A cursor a `getMore` is waiting on
    /// is closed when that `getMore` ends (which then fails with 237 CursorKilled).
    pub(crate) fn kill(&mut self, ids: &[i64]) -> (Vec<i64>, Vec<i64>) {
        ids.iter().partition(|id| {
            if self.out.contains(id) {
                self.killed_out.insert(**id);
                return true;
            }
            self.open.remove(id).is_some()
        })
    }

    /// Takes cursor `id`, which must belong to `namespace`, out of the table, so that its
    /// `getMore` reads without holding the table's lock. Give it back with
    /// [`CursorTable::put_back`]. A cursor another `getMore` is reading is in use (292).
    pub(crate) fn take(&mut self, id: i64, namespace: &str) -> CommandResult<TakenCursor> {
        if self.out.contains(&id) {
            return Err(CommandError::new(
                292,
                format!("cursor id {id} is already in use by another getMore"),
            ));
        }
        let Some(cursor) = self.open.get(&id) else {
            return Err(CommandError::new(43, format!("cursor id {id} not found")));
        };
        if cursor.namespace != namespace {
            return Err(CommandError::new(
                13,
                format!(
                    "Requested getMore on namespace '{namespace}', but cursor belongs to a different namespace {}",
                    cursor.namespace
                ),
            ));
        }
        let mut cursor = self.open.remove(&id).expect("checked");
        cursor.last_used = Instant::now();
        self.out.insert(id);
        Ok(TakenCursor {
            cursor,
            batch: Ok(Batch {
                documents: Vec::new(),
                exhausted: false,
            }),
        })
    }

    /// Puts back a cursor [`CursorTable::take`] took, and replies with the batch it read.
    /// Its error closes it, as does a kill while it was out (237 CursorKilled), or the end
    /// of its documents (unless it is tailable).
    pub(crate) fn put_back(&mut self, id: i64, taken: TakenCursor) -> CommandResult<Document> {
        self.out.remove(&id);
        let TakenCursor { cursor, batch } = taken;
        if self.killed_out.remove(&id) {
            return Err(CommandError::new(237, format!("cursor id {id} was killed")));
        }
        let batch = batch.map_err(|error| {
            // A change stream's error after its cursor was checked out: MongoDB labels the
            // resumable ones, and drivers resume on the label alone.
            if cursor.resume_token.is_some() && labels::is_resumable_change_stream_code(error.code)
            {
                error.label(labels::RESUMABLE_CHANGE_STREAM_ERROR)
            } else {
                error
            }
        })?;
        let namespace = cursor.namespace.clone();
        let resume_token = cursor.resume_token.clone();
        let id = if batch.exhausted && (!cursor.tailable || has_finished(cursor.finished.as_ref()))
        {
            0
        } else {
            self.open.insert(id, cursor);
            id
        };
        let mut reply = cursor_reply(id, &namespace, "nextBatch", batch.documents);
        add_resume_token(&mut reply, resume_token.as_ref());
        Ok(reply)
    }

    /// Closes cursors unread for longer than [`CURSOR_TIMEOUT`].
    pub(crate) fn reap(&mut self, now: Instant) {
        self.open.retain(|_, cursor| {
            cursor.immortal || now.duration_since(cursor.last_used) < CURSOR_TIMEOUT
        });
    }
}

/// Whether a tailable cursor's stream has ended for good.
fn has_finished(finished: Option<&Arc<AtomicBool>>) -> bool {
    finished.is_some_and(|finished| finished.load(Ordering::SeqCst))
}

/// Adds a change stream's `postBatchResumeToken` to a cursor reply.
fn add_resume_token(reply: &mut Document, token: Option<&ResumeToken>) {
    if let (Some(token), Ok(cursor)) = (token, reply.get_document_mut("cursor")) {
        let token = token
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone();
        cursor.insert("postBatchResumeToken", token);
    }
}

/// `{ cursor: { <batch_field>: [...], id, ns }, ok: 1 }`.
pub(crate) fn cursor_reply(
    id: i64,
    namespace: &str,
    batch_field: &str,
    documents: Vec<Bson>,
) -> Document {
    let mut cursor = Document::new();
    cursor.insert(batch_field, documents);
    cursor.insert("id", id);
    cursor.insert("ns", namespace);
    doc! { "cursor": cursor, "ok": 1.0 }
}
