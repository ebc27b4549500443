//! Write batches: the ops of one commit, encoded straight into the frame they will become.
//!
//! A batch is all-or-nothing because it is written as exactly one frame with one checksum.
//! This module must never touch the store: it only encodes.

use std::fmt;

use crate::KeyspaceId;
use crate::format::{FRAME_HEADER_LEN, OpKind, encode_op};

/// Puts, deletes and keyspace clears/drops that commit atomically, in order.
///
/// ```
/// # use spillway_store::{Store, WriteBatch};
/// let store = Store::open_in_memory()?;
/// let books = store.keyspace("books")?;
/// let mut batch = WriteBatch::new();
/// batch.put(books, b"b1", b"Dune").put(books, b"b2", b"Emma").delete(books, b"b0");
/// store.commit(batch)?;
/// assert_eq!(store.snapshot().get(books, b"b2")?, Some(&b"Emma"[..]));
/// # Ok::<(), spillway_store::Error>(())
/// ```
#[derive(Clone)]
pub struct WriteBatch {
    /// Frame bytes: a header placeholder, then the encoded ops.
    pub(crate) frame: Vec<u8>,
    pub(crate) op_count: u32,
    /// Set when a key or value did not fit the format; `commit` reports it.
    pub(crate) oversized: Option<(&'static str, u64)>,
}

impl fmt::Debug for WriteBatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("WriteBatch")
            .field("ops", &self.op_count)
            .field("bytes", &self.frame.len())
            .finish_non_exhaustive()
    }
}

impl Default for WriteBatch {
    fn default() -> Self {
        WriteBatch::new()
    }
}

impl WriteBatch {
    /// An empty batch.
    pub fn new() -> WriteBatch {
        WriteBatch::with_capacity(256)
    }

    /// An empty batch with room for about `bytes` bytes of encoded ops.
    pub fn with_capacity(bytes: usize) -> WriteBatch {
        let mut frame = Vec::with_capacity(FRAME_HEADER_LEN + bytes);
        frame.resize(FRAME_HEADER_LEN, 0);
        WriteBatch {
            frame,
            op_count: 0,
            oversized: None,
        }
    }

    fn push(&mut self, kind: OpKind, keyspace: KeyspaceId, key: &[u8], value: &[u8]) -> &mut Self {
        if u32::try_from(key.len()).is_err() {
            self.oversized = Some(("key", key.len() as u64));
        } else if u32::try_from(value.len()).is_err() {
            self.oversized = Some(("value", value.len() as u64));
        } else {
            encode_op(&mut self.frame, kind, keyspace.as_u32(), key, value);
            self.op_count += 1;
        }
        self
    }

    /// Sets `key` to `value` in `keyspace`.
    pub fn put(&mut self, keyspace: KeyspaceId, key: &[u8], value: &[u8]) -> &mut Self {
        self.push(OpKind::Put, keyspace, key, value)
    }

    /// Removes `key` from `keyspace` (no effect if it is absent).
    pub fn delete(&mut self, keyspace: KeyspaceId, key: &[u8]) -> &mut Self {
        self.push(OpKind::Delete, keyspace, key, &[])
    }

    /// Removes every key of `keyspace` (ops later in the batch apply to the empty keyspace).
    pub fn clear_keyspace(&mut self, keyspace: KeyspaceId) -> &mut Self {
        self.push(OpKind::ClearKeyspace, keyspace, &[], &[])
    }

    /// Removes `keyspace` and its keys; its name becomes free and its id is never reused.
    pub fn drop_keyspace(&mut self, keyspace: KeyspaceId) -> &mut Self {
        self.push(OpKind::DropKeyspace, keyspace, &[], &[])
    }

    /// Number of ops.
    pub fn len(&self) -> usize {
        self.op_count as usize
    }

    /// True if the batch has no ops.
    pub fn is_empty(&self) -> bool {
        self.op_count == 0
    }

    /// Size of the frame this batch will become, in bytes.
    pub fn encoded_len(&self) -> usize {
        self.frame.len()
    }

    /// Removes every op, keeping the allocation.
    pub fn clear(&mut self) {
        self.frame.truncate(FRAME_HEADER_LEN);
        self.op_count = 0;
        self.oversized = None;
    }
}
