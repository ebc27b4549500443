//! The storage the pattern layer works on, as two small traits: [`ReadBackend`] (get by
//! `_id`, find by filter in order, count, the declared policies, which collections and
//! indexes exist) and [`WriteBackend`] (apply one atomic batch of inserts, replaces,
//! deletes, appends to an array and claims; create and drop collections and indexes; store the policies).
//!
//! The embedded database implements them over its transactions; a MongoDB deployment
//! implements them with the official driver (`find` with sort/skip/limit, a multi-document
//! transaction per batch, `createIndex`, a collection of policies); [`MemoryBackend`] over
//! plain in-memory collections is the reference. Nothing in this crate may assume more than
//! these methods promise: no peeking at keys, no partial batches.
//!
//! [`MemoryBackend`]: crate::MemoryBackend

use bson::{Bson, Document, RawDocument, RawDocumentBuf, doc};

use crate::error::PatternError;
use crate::policy::Policy;

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

impl Query {
    /// `find({ field: value }).sort({ order_by: -1 }).limit(1)`: what
    /// [`ReadBackend::find_last_raw`] answers.
    #[must_use]
    pub fn last_in_group(field: &str, value: &Bson, order_by: &str) -> Query {
        Query {
            filter: doc! { field: value.clone() },
            sort: Some(doc! { order_by: -1 }),
            limit: Some(1),
            ..Query::default()
        }
    }
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
    /// Appends `values` to the top-level array `field` of the document with this `_id`
    /// (which must exist and hold an array there): MongoDB's `$push` with `$each`. The
    /// outlier's last bucket grows this way, so that a backend writes the new elements
    /// without reading and rewriting the ones already stored.
    Push {
        /// The collection.
        collection: String,
        /// The document's `_id`.
        id: Bson,
        /// The array field, at the top level.
        field: String,
        /// The values to append, in order.
        values: Vec<Bson>,
    },
    /// Claims the document with this `_id` (which must exist) for the batch without changing
    /// it: a concurrent write of it conflicts with the batch as if the batch had rewritten
    /// it. An append that leaves a full main document as it is claims it, so that two
    /// appends to one logical array never both commit (each would start its own bucket).
    Claim {
        /// The collection.
        collection: String,
        /// The document's `_id`.
        id: Bson,
    },
}

impl Write {
    /// The collection the write goes to.
    pub fn collection(&self) -> &str {
        match self {
            Write::Insert { collection, .. }
            | Write::Replace { collection, .. }
            | Write::Delete { collection, .. }
            | Write::Push { collection, .. }
            | Write::Claim { collection, .. } => collection,
        }
    }
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

    /// The stored documents matching `query`, in its order, as raw BSON (what expanded
    /// reads splice without decoding). The default encodes what [`find`](Self::find)
    /// returns; a backend that holds raw bytes returns them as they are.
    ///
    /// # Errors
    /// The backend's, when it cannot read.
    fn find_raw(
        &self,
        collection: &str,
        query: &Query,
    ) -> Result<Vec<RawDocumentBuf>, Self::Error> {
        self.find(collection, query)?
            .iter()
            .map(|document| {
                RawDocumentBuf::try_from(document).map_err(|error| {
                    PatternError::InvalidRecord {
                        message: format!("a document of '{collection}' cannot be encoded: {error}"),
                    }
                    .into()
                })
            })
            .collect()
    }

    /// Shows the stored documents matching `query`, in its order, to `visit` as raw BSON,
    /// stopping at its first error: what an expanded read splices, each document read where
    /// it lies when the backend holds raw bytes (no copy of each into a buffer of its own).
    /// The default visits what [`find_raw`](Self::find_raw) returns.
    ///
    /// # Errors
    /// The backend's, when it cannot read, or the first of `visit`'s.
    fn for_each_raw(
        &self,
        collection: &str,
        query: &Query,
        visit: &mut dyn FnMut(&RawDocument) -> Result<(), Self::Error>,
    ) -> Result<(), Self::Error> {
        for document in self.find_raw(collection, query)? {
            visit(&document)?;
        }
        Ok(())
    }

    /// Of the stored documents of `collection` whose `field` equals `value`, the one with the
    /// greatest `order_by`, raw: the outlier pattern's last overflow bucket of a document.
    /// The default runs that query through [`find_raw`](Self::find_raw); a backend with an
    /// index on `{ field: 1, order_by: 1 }` may read the index's last entry instead.
    ///
    /// # Errors
    /// The backend's, when it cannot read.
    fn find_last_raw(
        &self,
        collection: &str,
        field: &str,
        value: &Bson,
        order_by: &str,
    ) -> Result<Option<RawDocumentBuf>, Self::Error> {
        let query = Query::last_in_group(field, value, order_by);
        Ok(self.find_raw(collection, &query)?.pop())
    }

    /// How many stored documents match `filter`.
    ///
    /// # Errors
    /// The backend's, when it cannot read.
    fn count(&self, collection: &str, filter: &Document) -> Result<u64, Self::Error>;

    /// The declared policies with their migration progress, in declaration order (the
    /// policy store).
    ///
    /// # Errors
    /// The backend's, when it cannot read them.
    fn policies(&self) -> Result<Vec<Policy>, Self::Error>;

    /// Whether `collection` exists.
    ///
    /// # Errors
    /// The backend's.
    fn collection_exists(&self, collection: &str) -> Result<bool, Self::Error>;

    /// The key patterns of `collection`'s indexes, `{_id: 1}` included or not.
    ///
    /// # Errors
    /// The backend's.
    fn index_keys(&self, collection: &str) -> Result<Vec<Document>, Self::Error>;

    /// At most `limit` stored documents of `collection` whose `_id` comes after `through`
    /// (all of them from the start when `None`), in `_id` order: the batches of a migration.
    /// The default asks [`find`](Self::find) with an `$expr` comparison, which orders `_id`s
    /// of different types as BSON does (a plain `$gt` would stay within one type).
    ///
    /// # Errors
    /// The backend's.
    fn documents_after(
        &self,
        collection: &str,
        through: Option<&Bson>,
        limit: usize,
    ) -> Result<Vec<Document>, Self::Error> {
        let filter = match through {
            Some(through) => doc! { "$expr": { "$gt": ["$_id", { "$literal": through.clone() }] } },
            None => Document::new(),
        };
        self.find(
            collection,
            &Query {
                filter,
                sort: Some(doc! { "_id": 1 }),
                skip: 0,
                limit: Some(limit as u64),
            },
        )
    }
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

    /// Creates `collection` (a no-op if it exists).
    ///
    /// # Errors
    /// The backend's.
    fn create_collection(&mut self, collection: &str) -> Result<(), Self::Error>;

    /// Drops `collection` with its documents and indexes (a no-op if it does not exist).
    ///
    /// # Errors
    /// The backend's.
    fn drop_collection(&mut self, collection: &str) -> Result<(), Self::Error>;

    /// Stores the policies (all of them, replacing what was stored), atomically with the
    /// batches applied in the same backend transaction.
    ///
    /// # Errors
    /// The backend's.
    fn save_policies(&mut self, policies: Vec<Policy>) -> Result<(), Self::Error>;
}
