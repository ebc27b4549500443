//! [`Cursors`]: the cursors of reads the proxy answers itself (logical documents of a
//! collection with a policy), between the first batch and the `getMore`s. Cursors of every
//! other read are the upstream's, and their `getMore`s go there.
//!
//! An id is drawn at random among the positive 63-bit numbers, as the upstream's are, so a
//! `getMore` for an id this table does not hold is the upstream's.

use std::collections::{HashMap, VecDeque};
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

use bson::{Bson, Document, doc};

/// A cursor idle this long is closed, as MongoDB's `cursorTimeoutMillis` default does.
const IDLE_TIMEOUT: Duration = Duration::from_secs(10 * 60);

/// The documents of a first batch when the command names no `batchSize`.
const DEFAULT_FIRST_BATCH: usize = 101;

/// A batch stops growing past this many bytes (MongoDB's 16 MiB reply limit, with room for
/// the reply's other fields).
const MAX_BATCH_BYTES: usize = 16 * 1024 * 1024 - 64 * 1024;

/// The proxy's own cursors.
#[derive(Debug, Default)]
pub(crate) struct Cursors {
    open: Mutex<HashMap<i64, Cursor>>,
}

#[derive(Debug)]
struct Cursor {
    namespace: String,
    remaining: VecDeque<Document>,
    used: Instant,
}

impl Cursors {
    /// The reply of a read whose results are `documents`: the first batch (`batch_size`
    /// documents, 101 when `None`), and a cursor for the rest unless `single_batch`.
    pub(crate) fn first_batch(
        &self,
        namespace: &str,
        documents: Vec<Document>,
        batch_size: Option<usize>,
        single_batch: bool,
    ) -> Document {
        let mut remaining = VecDeque::from(documents);
        let batch = take_batch(&mut remaining, batch_size.unwrap_or(DEFAULT_FIRST_BATCH));
        let id = if single_batch || remaining.is_empty() {
            0
        } else {
            let id = self.new_id();
            let cursor = Cursor {
                namespace: namespace.to_owned(),
                remaining,
                used: Instant::now(),
            };
            self.lock().insert(id, cursor);
            id
        };
        doc! {
            "cursor": { "firstBatch": batch, "id": id, "ns": namespace },
            "ok": 1.0,
        }
    }

    /// The reply to `getMore` of cursor `id`, or `None` when the proxy holds no such cursor
    /// (then it is the upstream's).
    pub(crate) fn get_more(&self, id: i64, batch_size: Option<usize>) -> Option<Document> {
        let mut open = self.lock();
        let cursor = open.get_mut(&id)?;
        let batch = take_batch(&mut cursor.remaining, batch_size.unwrap_or(usize::MAX));
        cursor.used = Instant::now();
        let namespace = cursor.namespace.clone();
        let next_id = if cursor.remaining.is_empty() {
            open.remove(&id);
            0
        } else {
            id
        };
        Some(doc! {
            "cursor": { "nextBatch": batch, "id": next_id, "ns": namespace },
            "ok": 1.0,
        })
    }

    /// Closes those of `ids` the proxy holds; returns the others (the upstream's).
    pub(crate) fn kill(&self, ids: Vec<i64>) -> (Vec<i64>, Vec<i64>) {
        let mut open = self.lock();
        ids.into_iter().partition(|id| open.remove(id).is_some())
    }

    /// Whether the proxy holds cursor `id`.
    #[cfg(test)]
    fn holds(&self, id: i64) -> bool {
        self.lock().contains_key(&id)
    }

    /// Closes the cursors idle for longer than MongoDB keeps them.
    pub(crate) fn reap_expired(&self) {
        self.lock()
            .retain(|_, cursor| cursor.used.elapsed() < IDLE_TIMEOUT);
    }

    fn new_id(&self) -> i64 {
        loop {
            let id = rand::random::<i64>() & i64::MAX;
            if id != 0 && !self.lock().contains_key(&id) {
                return id;
            }
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<i64, Cursor>> {
        self.open.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// Up to `count` documents from the front of `remaining`, fewer when they would pass the
/// batch byte limit (never none while any remain).
fn take_batch(remaining: &mut VecDeque<Document>, count: usize) -> Vec<Bson> {
    let mut batch = Vec::new();
    let mut bytes = 0;
    while batch.len() < count.max(1) {
        let Some(next) = remaining.front() else { break };
        let size = next.to_vec().map_or(0, |encoded| encoded.len());
        if !batch.is_empty() && bytes + size > MAX_BATCH_BYTES {
            break;
        }
        bytes += size;
        batch.push(Bson::Document(
            remaining.pop_front().expect("front was checked"),
        ));
    }
    batch
}

#[cfg(test)]
mod tests {
    use super::*;

    fn documents(count: i32) -> Vec<Document> {
        (0..count).map(|i| doc! { "_id": i }).collect()
    }

    #[test]
    fn a_cursor_hands_out_every_document_once_in_batches() {
        let cursors = Cursors::default();
        let first = cursors.first_batch("d.c", documents(250), Some(100), false);
        let cursor = first.get_document("cursor").unwrap();
        assert_eq!(cursor.get_array("firstBatch").unwrap().len(), 100);
        let id = cursor.get_i64("id").unwrap();
        assert!(id > 0 && cursors.holds(id));
        let second = cursors.get_more(id, Some(100)).unwrap();
        assert_eq!(
            second
                .get_document("cursor")
                .unwrap()
                .get_array("nextBatch")
                .unwrap()
                .len(),
            100
        );
        let last = cursors.get_more(id, None).unwrap();
        let last = last.get_document("cursor").unwrap();
        assert_eq!(last.get_array("nextBatch").unwrap().len(), 50);
        assert_eq!(last.get_i64("id").unwrap(), 0);
        assert!(
            cursors.get_more(id, None).is_none(),
            "exhausted cursors are closed"
        );
    }

    #[test]
    fn single_batch_and_small_results_open_no_cursor() {
        let cursors = Cursors::default();
        let reply = cursors.first_batch("d.c", documents(5), None, false);
        assert_eq!(
            reply.get_document("cursor").unwrap().get_i64("id").unwrap(),
            0
        );
        let reply = cursors.first_batch("d.c", documents(500), Some(10), true);
        assert_eq!(
            reply.get_document("cursor").unwrap().get_i64("id").unwrap(),
            0
        );
    }

    #[test]
    fn kill_closes_the_proxys_cursors_and_returns_the_others() {
        let cursors = Cursors::default();
        let reply = cursors.first_batch("d.c", documents(500), Some(10), false);
        let id = reply.get_document("cursor").unwrap().get_i64("id").unwrap();
        let (killed, others) = cursors.kill(vec![id, 42]);
        assert_eq!((killed, others), (vec![id], vec![42]));
        assert!(!cursors.holds(id));
    }
}
