//! The storage the pattern layer works on, as two small traits: [`ReadBackend`] (get by
//! `_id`, find by filter in order, count) and [`WriteBackend`] (apply one atomic batch of
//! inserts, replaces and deletes; ensure an index).
//!
//! The embedded database implements them over its transactions; a MongoDB deployment could
//! implement them with the official driver (`find` with sort/skip/limit, a multi-document
//! transaction per batch, `createIndex`). Nothing in this crate may assume more than these
//! methods promise: no peeking at keys, no partial batches.

use bson::{Bson, Document};

use crate::error::PatternError;

/// A query on one collection: MongoDB filter, sort, skip and limit.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Query {
    /// The filter, e.g. `{ book_id: 2, bucket: { $gte: 3 } }`.
    pub filter: Document,
    /// The order of results; `None` is any order.
    pub sort: Option<Document>,
    /// How many results to skip.
    pub skip: u64,
    /// How many results at most; `None` is all.
    pub limit: Option<u64>,
}

/// One write of a batch. Every write names its collection; documents carry their `_id`.
#[derive(Debug, Clone, PartialEq)]
pub enum Write {
    /// Inserts a new document (its `_id` must be free).
    Insert {
        /// The collection.
        collection: String,
        /// The document, with `_id`.
        document: Document,
    },
    /// Replaces the document with the same `_id` (which must exist).
    Replace {
        /// The collection.
        collection: String,
        /// The new document, with `_id`.
        document: Document,
    },
    /// Deletes the document with this `_id`, if any.
    Delete {
        /// The collection.
        collection: String,
        /// Its `_id`.
        id: Bson,
    },
}

/// Reads the pattern layer needs.
pub trait ReadBackend {
    /// The backend's error, which must carry [`PatternError`]s too.
    type Error: From<PatternError>;

    /// The stored document with this `_id`.
    ///
    /// # Errors
    /// The backend's, when it cannot read.
    fn get(&self, collection: &str, id: &Bson) -> Result<Option<Document>, Self::Error>;

    /// The stored documents matching `query`, in its order.
    ///
    /// # Errors
    /// The backend's, when it cannot read.
    fn find(&self, collection: &str, query: &Query) -> Result<Vec<Document>, Self::Error>;

    /// How many stored documents match `filter`.
    ///
    /// # Errors
    /// The backend's, when it cannot read.
    fn count(&self, collection: &str, filter: &Document) -> Result<u64, Self::Error>;
}

/// Writes the pattern layer needs. Reads must see the writes already applied.
pub trait WriteBackend: ReadBackend {
    /// Applies `batch` atomically: all of it becomes visible (and durable, at the backend's
    /// durability) together, or none of it. The embedded database stages it in the current
    /// transaction, which commits once for the whole logical write.
    ///
    /// # Errors
    /// The backend's (a duplicate key, a document too large, I/O); then nothing of the
    /// batch is applied.
    fn apply(&mut self, batch: Vec<Write>) -> Result<(), Self::Error>;

    /// Makes sure `collection` has an index on `keys` (a no-op if it has).
    ///
    /// # Errors
    /// The backend's.
    fn ensure_index(&mut self, collection: &str, keys: &Document) -> Result<(), Self::Error>;
}
