//! [`PatternedDatabase`] and [`PatternedCollection`]: the API an application adopts, shaped
//! like the driver's (`insert_one(..).run()`, `update_one(..).upsert(true).run()`,
//! `find_one(..).run()`; the stored layout with `.stored(true)`), with spillway-pattern's [`Layer`] doing the work.
//!
//! Each call takes a `Layer` over its own [`MongoBackend`] (its own session) from a small
//! pool, so one `PatternedDatabase` serves many threads; each logical write is one
//! transaction of that backend. Reads run in a snapshot transaction that only reads, so a
//! logical document is never spliced from two states of its side documents. This module
//! must never decide anything about a policy: that is the layer's.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use bson::{Bson, Document, doc};
use mongodb::sync::Client;
use spillway_doc::pipeline::{self, Pipeline, PipelineOptions, Source};
use spillway_doc::projection::Projection;
use spillway_doc::sort::SortSpec;
use spillway_pattern::{
    Layer, Pattern, PatternError, Progress, Transactional, UpdateResult, Violation, WriteBackend,
    writes,
};

use crate::backend::{
    MongoBackend, RetryKey, STAMP_COLLECTION, TRANSACTION_TIME_LIMIT, run_transaction,
};
use crate::error::{Error, Result};
use crate::records::{self, RenameIntent};

type Pooled = Layer<MongoBackend>;

/// A MongoDB database with pattern policies: the application's one line of adoption.
///
/// ```no_run
/// use mongodb::sync::Client;
/// use spillway_mongodb::{PatternedDatabase, Pattern, bson::doc};
///
/// let client = Client::with_uri_str("mongodb://127.0.0.1:27017")?;
/// let shop = PatternedDatabase::new(&client, "shop", [Pattern::outlier("sales", "buyers").threshold(50)])?;
/// let sales = shop.collection("sales");
/// sales.insert_one(doc! { "_id": 2, "title": "The Wooden Amulet", "buyers": [] }).run()?;
/// sales.update_one(doc! { "_id": 2 }, doc! { "$push": { "buyers": "user00" } }).run()?;
/// let whole = sales.find_one(doc! { "_id": 2 }).run()?;
/// assert!(shop.verify()?.is_empty());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone)]
pub struct PatternedDatabase {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    client: Client,
    name: String,
    time_limit: Duration,
    pool: Mutex<Vec<Pooled>>,
    /// For a [`Transaction`](crate::Transaction)'s database: the one layer, whose backend
    /// holds the transaction open, that every operation runs on (inline in the transaction)
    /// instead of the pool's.
    transaction: Option<Mutex<Pooled>>,
}

impl PatternedDatabase {
    /// Database `name` of `client`'s deployment with `patterns` declared: each one not yet
    /// stored in the cluster is declared (its collection created if need be) and migrates
    /// the documents already there (in batches, resumable); one already declared the same way is kept as it is; migrations
    /// a crash left unfinished are resumed first. (The client is needed, not only the
    /// driver's `Database`, because transactions need sessions, which only a client starts.)
    ///
    /// # Errors
    /// A pattern that differs from the one declared on the same field (remove that one
    /// first), one the layer refuses; the deployment's.
    pub fn new<P: Into<Pattern>>(
        client: &Client,
        name: &str,
        patterns: impl IntoIterator<Item = P>,
    ) -> Result<PatternedDatabase> {
        PatternedDatabase::with_time_limit(client, name, TRANSACTION_TIME_LIMIT, patterns)
    }

    /// As [`PatternedDatabase::new`], with transactions run again after transient errors
    /// for at most `time_limit` rather than the driver's 120 seconds (an application that
    /// would rather fail fast when the deployment is unreachable).
    ///
    /// # Errors
    /// As [`PatternedDatabase::new`].
    pub fn with_time_limit<P: Into<Pattern>>(
        client: &Client,
        name: &str,
        time_limit: Duration,
        patterns: impl IntoIterator<Item = P>,
    ) -> Result<PatternedDatabase> {
        let database = PatternedDatabase {
            inner: Arc::new(Inner {
                client: client.clone(),
                name: name.to_string(),
                time_limit,
                pool: Mutex::new(Vec::new()),
                transaction: None,
            }),
        };
        let declared = database.patterns()?;
        for pattern in patterns {
            let pattern = pattern.into();
            match declared.iter().find(|known| {
                known.collection() == pattern.collection() && known.field() == pattern.field()
            }) {
                Some(known) if *known == pattern => {}
                Some(_) => {
                    return Err(Error::InvalidArgument {
                        message: format!(
                            "{}.{} already has another policy in database '{name}': remove it first",
                            pattern.collection(),
                            pattern.field()
                        ),
                    });
                }
                None => {
                    database.create_collection(pattern.collection())?;
                    if let Err(error) = database.set_pattern(pattern.clone()) {
                        // Another process running the same line may have declared it first
                        // (then its migration, or ours, is finished by `resume`).
                        if !database.patterns()?.contains(&pattern) {
                            return Err(error);
                        }
                        database.resume()?;
                    }
                }
            }
        }
        Ok(database)
    }

    /// The database's name.
    pub fn name(&self) -> &str {
        &self.inner.name
    }

    /// A collection, managed by the policies on it (or plain).
    pub fn collection(&self, name: &str) -> PatternedCollection {
        PatternedCollection {
            database: self.clone(),
            name: name.to_string(),
        }
    }

    /// Creates a collection (an existing one is no error). Writes create the collections
    /// they need too; this is for policies declared before the first document.
    ///
    /// # Errors
    /// The deployment's.
    pub fn create_collection(&self, name: &str) -> Result<()> {
        self.with_layer(|layer| layer.create_collection(name))
    }

    /// Declares a policy and migrates the documents already stored, a batch per
    /// transaction; a crash mid-way is resumed by the next [`PatternedDatabase::new`] or
    /// [`PatternedDatabase::resume`].
    ///
    /// # Errors
    /// A policy the layer refuses; the deployment's.
    pub fn set_pattern(&self, pattern: impl Into<Pattern>) -> Result<()> {
        let pattern = pattern.into();
        self.with_layer(|layer| layer.set_pattern(pattern))
    }

    /// Removes the policy on `collection.field`, folding its arrays back into their main
    /// documents, a batch per transaction.
    ///
    /// # Errors
    /// No such policy, a document too large to fold back; the deployment's.
    pub fn remove_pattern(&self, collection: &str, field: &str) -> Result<()> {
        self.with_layer(|layer| layer.remove_pattern(collection, field))
    }

    /// The declared policies, as stored in the cluster.
    ///
    /// # Errors
    /// The deployment's.
    pub fn patterns(&self) -> Result<Vec<Pattern>> {
        self.with_layer(|layer| layer.patterns())
    }

    /// Runs every unfinished migration to its end.
    ///
    /// # Errors
    /// The deployment's; what was committed stays.
    pub fn resume(&self) -> Result<()> {
        self.with_layer(Layer::resume)
    }

    /// Every invariant problem of every policy, read from one snapshot.
    ///
    /// # Errors
    /// The deployment's.
    pub fn verify(&self) -> Result<Vec<Violation>> {
        self.read(Layer::verify)
    }

    /// Records that main collection `intent.from` is about to be renamed to `intent.to`
    /// (the first step of a rename: MongoDB's `renameCollection` cannot be part of a
    /// transaction, so the policies move in a transaction of their own once the collection
    /// is renamed, [`PatternedDatabase::finish_rename`]). The same intent recorded already
    /// is no error: sending a rename again carries on with it.
    ///
    /// # Errors
    /// [`Error::Conflict`] (117) when another rename is in progress; refused naming the
    /// policy (code 2) as the embedded database refuses: a side collection renamed or taken
    /// as the new name, a policy of either collection still migrating, a `to` that has
    /// policies of its own without `drop_target`; the deployment's.
    pub fn begin_rename(&self, intent: &RenameIntent) -> Result<()> {
        self.with_layer(|layer| {
            layer.backend_mut().transaction(|backend| {
                let stored = backend.policy_document()?;
                if let Some(pending) = records::pending_rename(stored.as_ref())? {
                    if pending == *intent {
                        return Ok(());
                    }
                    return Err(Error::Conflict {
                        message: format!(
                            "a rename of '{}' to '{}' is in progress in database '{}': send it again to finish it before renaming '{}'",
                            pending.from,
                            pending.to,
                            self.name(),
                            intent.from
                        ),
                    });
                }
                let policies = records::from_document(stored.as_ref())?;
                writes::check_rename(&policies, &intent.from, &intent.to)?;
                for policy in &policies {
                    let pattern = &policy.pattern;
                    let refused = |message: String| PatternError::Refused {
                        collection: pattern.collection().to_owned(),
                        field: pattern.field().to_owned(),
                        message,
                    };
                    if pattern.collection() != intent.from && pattern.collection() != intent.to
                    {
                        continue;
                    }
                    if policy.progress != Progress::Active {
                        return Err(refused(format!(
                            "its migration has not finished: let it finish (resume) before renaming '{}'",
                            intent.from
                        ))
                        .into());
                    }
                    if pattern.collection() == intent.to && !intent.drop_target {
                        return Err(refused(format!(
                            "'{}' has this policy of its own: rename '{}' to it with dropTarget (which drops it as a drop would), or remove the policy first",
                            intent.to, intent.from
                        ))
                        .into());
                    }
                }
                backend.update_policy_document(doc! {
                    "$set": { records::RENAME_FIELD: intent.to_document() },
                })
            })
        })
    }

    /// The last step of a rename begun by [`PatternedDatabase::begin_rename`], once the
    /// deployment has renamed the collection: in one transaction the policies of `from`
    /// are declared on `to` (options, side collections and migration progress kept; the
    /// side documents link `_id`s, which a rename keeps, so none is rewritten), those a
    /// dropped target had are removed, and the intent is cleared. Then, outside it, what the
    /// dropped target's policies kept is removed as a drop removes it (a side collection they
    /// created is dropped; from an adopted one, the documents they linked), and so are the
    /// write stamps of the old name (stale ones would be harmless: a stamp only has to
    /// change; they are removed so that they do not pile up). Returns whether this call
    /// finished it (`false`: no such rename is in progress, another process finished it).
    ///
    /// # Errors
    /// The deployment's. A failure of the clean-up after the commit is not reported: what it
    /// leaves is an unused collection or stale stamps, and the rename is done.
    pub fn finish_rename(&self, intent: &RenameIntent) -> Result<bool> {
        let dropped = self.with_layer(|layer| {
            layer.backend_mut().transaction(|backend| {
                let stored = backend.policy_document()?;
                if records::pending_rename(stored.as_ref())?.as_ref() != Some(intent) {
                    return Ok(None);
                }
                let (kept, dropped) = intent.renamed(records::from_document(stored.as_ref())?);
                backend.update_policy_document(doc! {
                    "$set": { "policies": records::entries(&kept) },
                    "$unset": { records::RENAME_FIELD: "" },
                })?;
                Ok(Some(dropped))
            })
        })?;
        let Some(dropped) = dropped else {
            return Ok(false);
        };
        let _ = self.with_layer(|layer| {
            let backend = layer.backend_mut();
            for policy in dropped {
                let side = policy.pattern.side_collection();
                if policy.created_side {
                    backend.drop_collection(side)?;
                } else {
                    backend.delete_outside_transaction(
                        side,
                        doc! { policy.pattern.link_field(): { "$exists": true } },
                    )?;
                }
            }
            backend.delete_outside_transaction(STAMP_COLLECTION, doc! { "_id.c": &intent.from })
        });
        Ok(true)
    }

    /// Clears a rename begun by [`PatternedDatabase::begin_rename`] that the deployment
    /// refused: nothing was renamed, the policies stay as they were.
    ///
    /// # Errors
    /// The deployment's.
    pub fn abandon_rename(&self, intent: &RenameIntent) -> Result<()> {
        self.with_layer(|layer| {
            layer.backend_mut().transaction(|backend| {
                let stored = backend.policy_document()?;
                if records::pending_rename(stored.as_ref())?.as_ref() != Some(intent) {
                    return Ok(());
                }
                backend.update_policy_document(doc! { "$unset": { records::RENAME_FIELD: "" } })
            })
        })
    }

    /// Deletes the write stamps of collection `collection` (before a rename with
    /// `drop_target` replaces it: the stamps of the documents it drops).
    ///
    /// # Errors
    /// The deployment's.
    pub fn forget_stamps(&self, collection: &str) -> Result<()> {
        self.with_layer(|layer| {
            layer
                .backend()
                .delete_outside_transaction(STAMP_COLLECTION, doc! { "_id.c": collection })
        })
    }

    /// A layer of its own over this database, on a new backend (with this database's time
    /// limit), outside the pool.
    pub(crate) fn new_layer(&self) -> Result<Pooled> {
        let mut backend = MongoBackend::new(&self.inner.client, &self.inner.name)?;
        backend.set_time_limit(self.inner.time_limit);
        Layer::open(backend)
    }

    /// The same database with every operation run on `layer`, whose backend holds a
    /// transaction open: the database of a [`Transaction`](crate::Transaction).
    pub(crate) fn pinned_to(&self, layer: Pooled) -> PatternedDatabase {
        PatternedDatabase {
            inner: Arc::new(Inner {
                client: self.inner.client.clone(),
                name: self.inner.name.clone(),
                time_limit: self.inner.time_limit,
                pool: Mutex::new(Vec::new()),
                transaction: Some(Mutex::new(layer)),
            }),
        }
    }

    /// Runs `work` on a layer from the pool (a new one when all are busy), or on the
    /// transaction's layer of a [`Transaction`](crate::Transaction)'s database.
    pub(crate) fn with_layer<T>(&self, work: impl FnOnce(&mut Pooled) -> Result<T>) -> Result<T> {
        if let Some(pinned) = &self.inner.transaction {
            return work(&mut pinned.lock().unwrap_or_else(PoisonError::into_inner));
        }
        let pooled = self
            .inner
            .pool
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .pop();
        let mut layer = match pooled {
            Some(layer) => layer,
            None => self.new_layer()?,
        };
        let outcome = work(&mut layer);
        self.inner
            .pool
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(layer);
        outcome
    }

    /// Runs the reads of `work` in one snapshot, again after a transient error; in the open
    /// transaction of a [`Transaction`](crate::Transaction), once, as part of it.
    fn read<T>(&self, mut work: impl FnMut(&Pooled) -> Result<T>) -> Result<T> {
        self.with_layer(|layer| {
            if layer.backend().in_transaction() {
                return work(layer);
            }
            let started = std::time::Instant::now();
            let mut attempt = 0;
            loop {
                attempt += 1;
                layer.backend_mut().begin_read()?;
                let outcome = work(layer);
                layer.backend_mut().end_read();
                match outcome {
                    Err(error)
                        if error.is_transient() && started.elapsed() < self.inner.time_limit =>
                    {
                        layer.backend().back_off_read(attempt);
                    }
                    outcome => return outcome,
                }
            }
        })
    }
}

impl PatternedDatabase {
    /// Runs the write `work` on a layer from the pool; with a `retry` key, as a statement of
    /// a retryable write (see [`RetryKey`]): the statement's record is read, and written
    /// with `work`'s result, in the same transaction as `work`'s writes.
    fn write<T: Recorded>(
        &self,
        retry: Option<&RetryKey>,
        mut work: impl FnMut(&mut Pooled) -> Result<T>,
    ) -> Result<T> {
        let Some(key) = retry else {
            return self.with_layer(work);
        };
        self.with_layer(|layer| {
            layer.backend_mut().prepare_retries()?;
            run_transaction(layer, Layer::backend_mut, |layer| {
                if let Some(result) = layer.backend().recorded_outcome(key, T::OPERATION)? {
                    return T::from_fields(&result).ok_or_else(|| {
                        PatternError::InvalidRecord {
                            message: format!(
                                "the retry record result {result} does not answer a retried {}",
                                T::OPERATION
                            ),
                        }
                        .into()
                    });
                }
                let outcome = work(layer)?;
                layer
                    .backend()
                    .record_retry(key, T::OPERATION, outcome.to_record())?;
                Ok(outcome)
            })
        })
    }
}

/// A write's result as a retry record keeps it (`result` of a record in
/// [`RETRY_COLLECTION`](crate::RETRY_COLLECTION)).
trait Recorded: Sized {
    /// The operation the record is of, so that a retry of another operation under the same
    /// key is refused rather than answered with the wrong shape.
    const OPERATION: &'static str;

    fn to_record(&self) -> Document;

    fn from_fields(result: &Document) -> Option<Self>;
}

impl Recorded for InsertOneResult {
    const OPERATION: &'static str = "insert";

    fn to_record(&self) -> Document {
        doc! { "insertedId": self.inserted_id.clone() }
    }

    fn from_fields(result: &Document) -> Option<Self> {
        Some(InsertOneResult {
            inserted_id: result.get("insertedId")?.clone(),
        })
    }
}

impl Recorded for UpdateResult {
    const OPERATION: &'static str = "update";

    fn to_record(&self) -> Document {
        let mut record = doc! {
            "n": self.matched_count as i64,
            "nModified": self.modified_count as i64,
        };
        if let Some(id) = &self.upserted_id {
            record.insert("upserted", id.clone());
        }
        record
    }

    fn from_fields(result: &Document) -> Option<Self> {
        Some(UpdateResult {
            matched_count: result.get_i64("n").ok()? as u64,
            modified_count: result.get_i64("nModified").ok()? as u64,
            upserted_id: result.get("upserted").cloned(),
        })
    }
}

impl Recorded for DeleteResult {
    const OPERATION: &'static str = "delete";

    fn to_record(&self) -> Document {
        doc! { "n": self.deleted_count as i64 }
    }

    fn from_fields(result: &Document) -> Option<Self> {
        Some(DeleteResult {
            deleted_count: result.get_i64("n").ok()? as u64,
        })
    }
}

/// A collection of a [`PatternedDatabase`]: the driver's CRUD calls on logical documents.
#[derive(Debug, Clone)]
pub struct PatternedCollection {
    database: PatternedDatabase,
    name: String,
}

/// What [`PatternedCollection::insert_one`] did.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct InsertOneResult {
    /// The `_id` of the inserted document (an `ObjectId` made for it when it had none).
    pub inserted_id: Bson,
}

/// What [`PatternedCollection::insert_many`] did.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct InsertManyResult {
    /// The `_id`s of the inserted documents, in input order.
    pub inserted_ids: Vec<Bson>,
}

/// What a delete did.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct DeleteResult {
    /// How many documents were deleted (with their side documents).
    pub deleted_count: u64,
}

impl PatternedCollection {
    /// The collection's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Inserts one logical document (one transaction).
    pub fn insert_one(&self, document: Document) -> InsertOne<'_> {
        InsertOne {
            collection: self,
            document,
            retry: None,
        }
    }

    /// Inserts documents in order, each its own transaction, stopping at the first failure
    /// (the driver's ordered `insert_many`: those before it stay).
    pub fn insert_many(&self, documents: impl IntoIterator<Item = Document>) -> InsertMany<'_> {
        InsertMany {
            collection: self,
            documents: documents.into_iter().collect(),
        }
    }

    /// Updates the first logical document matching `filter` with the update operators of
    /// `update`.
    pub fn update_one(&self, filter: Document, update: Document) -> Update<'_> {
        Update::new(self, filter, update, Shape::One)
    }

    /// Updates every logical document matching `filter` (one transaction).
    pub fn update_many(&self, filter: Document, update: Document) -> Update<'_> {
        Update::new(self, filter, update, Shape::Many)
    }

    /// Replaces the first logical document matching `filter` by `replacement` (which must
    /// hold no update operator).
    pub fn replace_one(&self, filter: Document, replacement: Document) -> Update<'_> {
        Update::new(self, filter, replacement, Shape::Replacement)
    }

    /// Deletes the first logical document matching `filter`, with its side documents.
    pub fn delete_one(&self, filter: Document) -> Delete<'_> {
        Delete {
            collection: self,
            filter,
            multi: false,
            retry: None,
        }
    }

    /// Deletes every logical document matching `filter`, with their side documents (one
    /// transaction).
    pub fn delete_many(&self, filter: Document) -> Delete<'_> {
        Delete {
            collection: self,
            filter,
            multi: true,
            retry: None,
        }
    }

    /// The documents matching `filter` (decided on logical documents) in `_id` order: logical
    /// documents (every managed array whole), or the stored main documents with
    /// [`Find::stored`].
    pub fn find(&self, filter: Document) -> Find<'_> {
        Find {
            collection: self,
            filter,
            stored: false,
            shape: Shaping::default(),
        }
    }

    /// The results of `pipeline` on the collection's logical documents (see
    /// [`Aggregate::run`]).
    pub fn aggregate(&self, pipeline: impl IntoIterator<Item = Document>) -> Aggregate<'_> {
        Aggregate {
            collection: self,
            pipeline: pipeline.into_iter().collect(),
        }
    }

    /// The first document matching `filter` in `_id` order: the logical document, or the
    /// stored main document with [`FindOne::stored`].
    pub fn find_one(&self, filter: Document) -> FindOne<'_> {
        FindOne {
            collection: self,
            filter,
            stored: false,
            shape: Shaping::default(),
        }
    }

    /// Creates an index on `keys` (a no-op if it exists) and, on a collection with
    /// policies, its mirror on each side collection (`customers_purchased` →
    /// `customers_purchased_extra`), so that a logical equality on the path reads the two
    /// indexes instead of every main document.
    ///
    /// # Errors
    /// The deployment's.
    pub fn create_index(&self, keys: &Document) -> Result<()> {
        self.database
            .with_layer(|layer| layer.create_index(&self.name, keys))
    }

    /// How many documents match `filter`, decided on logical documents.
    pub fn count_documents(&self, filter: Document) -> CountDocuments<'_> {
        CountDocuments {
            collection: self,
            filter,
        }
    }

    /// The logical length of array `field` of the document `id` (`None` without such a
    /// document), from the layout: the main document and at most one side document.
    ///
    /// # Errors
    /// The deployment's.
    pub fn array_len(&self, id: impl Into<Bson>, field: &str) -> Result<Option<u64>> {
        let id = id.into();
        self.database
            .read(|layer| layer.array_len(&self.name, &id, field))
    }

    /// Elements `skip..skip + limit` of the logical array `field` of the document `id`,
    /// reading only the side documents that hold them (`None` without such a document).
    ///
    /// # Errors
    /// The deployment's.
    pub fn array_page(
        &self,
        id: impl Into<Bson>,
        field: &str,
        skip: usize,
        limit: usize,
    ) -> Result<Option<Vec<Bson>>> {
        let id = id.into();
        self.database
            .read(|layer| layer.array_page(&self.name, &id, field, skip, limit))
    }
}

/// An `insert_one`, sent by [`InsertOne::run`].
#[derive(Debug)]
#[must_use = "nothing is sent until `run`"]
pub struct InsertOne<'c> {
    collection: &'c PatternedCollection,
    document: Document,
    retry: Option<RetryKey>,
}

impl InsertOne<'_> {
    /// Runs the insert as the statement `key` of a retryable write: once per key, whoever
    /// sends it and however often (see [`RetryKey`]).
    pub fn retryable(mut self, key: RetryKey) -> Self {
        self.retry = Some(key);
        self
    }

    /// Inserts the document.
    ///
    /// # Errors
    /// A duplicate `_id` (11000), a document the policy refuses; the deployment's.
    pub fn run(self) -> Result<InsertOneResult> {
        let InsertOne {
            collection,
            document,
            retry,
        } = self;
        collection.database.write(retry.as_ref(), |layer| {
            let inserted_id = layer.insert_one(&collection.name, document.clone())?;
            Ok(InsertOneResult { inserted_id })
        })
    }
}

/// An `insert_many`, sent by [`InsertMany::run`].
#[derive(Debug)]
#[must_use = "nothing is sent until `run`"]
pub struct InsertMany<'c> {
    collection: &'c PatternedCollection,
    documents: Vec<Document>,
}

impl InsertMany<'_> {
    /// Inserts the documents in order.
    ///
    /// # Errors
    /// The first insert's error; the documents before it stay inserted.
    pub fn run(self) -> Result<InsertManyResult> {
        let InsertMany {
            collection,
            documents,
        } = self;
        collection.database.with_layer(|layer| {
            let inserted_ids = documents
                .into_iter()
                .map(|document| layer.insert_one(&collection.name, document))
                .collect::<Result<Vec<_>>>()?;
            Ok(InsertManyResult { inserted_ids })
        })
    }
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Shape {
    One,
    Many,
    Replacement,
}

/// An `update_one`, `update_many` or `replace_one`, sent by [`Update::run`].
#[derive(Debug)]
#[must_use = "nothing is sent until `run`"]
pub struct Update<'c> {
    collection: &'c PatternedCollection,
    filter: Document,
    modifications: Document,
    shape: Shape,
    upsert: bool,
    retry: Option<RetryKey>,
}

impl<'c> Update<'c> {
    fn new(
        collection: &'c PatternedCollection,
        filter: Document,
        update: Document,
        shape: Shape,
    ) -> Update<'c> {
        Update {
            collection,
            filter,
            modifications: update,
            shape,
            upsert: false,
            retry: None,
        }
    }

    /// Runs the update as the statement `key` of a retryable write (see [`RetryKey`]).
    pub fn retryable(mut self, key: RetryKey) -> Self {
        self.retry = Some(key);
        self
    }

    /// Inserts a document made from the filter and the update when nothing matches.
    pub fn upsert(mut self, upsert: bool) -> Self {
        self.upsert = upsert;
        self
    }

    /// Runs the update as one transaction.
    ///
    /// # Errors
    /// An update without operators (or a replacement with some), an invalid filter or
    /// update, one the policy refuses; the deployment's.
    pub fn run(self) -> Result<UpdateResult> {
        let has_operators = self
            .modifications
            .keys()
            .next()
            .is_some_and(|key| key.starts_with('$'));
        match (self.shape, has_operators) {
            (Shape::Replacement, true) => {
                return Err(Error::InvalidArgument {
                    message: "replace_one: the replacement document must not hold update operators"
                        .to_string(),
                });
            }
            (Shape::One | Shape::Many, false) => {
                return Err(Error::InvalidArgument {
                    message:
                        "update: the update document must hold update operators ($set, $push...)"
                            .to_string(),
                });
            }
            _ => {}
        }
        let multi = self.shape == Shape::Many;
        self.collection
            .database
            .write(self.retry.as_ref(), |layer| {
                layer.update(
                    &self.collection.name,
                    &self.filter,
                    &self.modifications,
                    multi,
                    self.upsert,
                )
            })
    }
}

/// A `delete_one` or `delete_many`, sent by [`Delete::run`].
#[derive(Debug)]
#[must_use = "nothing is sent until `run`"]
pub struct Delete<'c> {
    collection: &'c PatternedCollection,
    filter: Document,
    multi: bool,
    retry: Option<RetryKey>,
}

impl Delete<'_> {
    /// Runs the delete as the statement `key` of a retryable write (see [`RetryKey`]).
    pub fn retryable(mut self, key: RetryKey) -> Self {
        self.retry = Some(key);
        self
    }

    /// Runs the delete as one transaction.
    ///
    /// # Errors
    /// An invalid filter; the deployment's.
    pub fn run(self) -> Result<DeleteResult> {
        self.collection
            .database
            .write(self.retry.as_ref(), |layer| {
                let deleted_count =
                    layer.delete(&self.collection.name, &self.filter, self.multi)?;
                Ok(DeleteResult { deleted_count })
            })
    }
}

/// A `find`, sent by [`Find::run`].
#[derive(Debug)]
#[must_use = "nothing is sent until `run`"]
pub struct Find<'c> {
    collection: &'c PatternedCollection,
    filter: Document,
    stored: bool,
    shape: Shaping,
}

/// What a read does with its matches after the pattern layer found them: sort, skip, limit
/// and projection, applied to the documents returned (logical ones unless stored), with the
/// document language's own sort and projection.
#[derive(Debug, Clone, Default)]
struct Shaping {
    sort: Option<Document>,
    skip: u64,
    limit: Option<u64>,
    projection: Option<Document>,
}

impl Shaping {
    fn apply(&self, mut documents: Vec<Document>) -> Result<Vec<Document>> {
        let invalid = |error: spillway_doc::DocError| Error::InvalidArgument {
            message: error.to_string(),
        };
        if let Some(sort) = &self.sort {
            let sort = SortSpec::parse(sort).map_err(invalid)?;
            documents.sort_by(|a, b| sort.compare(a, b));
        }
        let skip = usize::try_from(self.skip).unwrap_or(usize::MAX);
        let limit = self.limit.map_or(usize::MAX, |limit| {
            usize::try_from(limit).unwrap_or(usize::MAX)
        });
        let kept = documents.into_iter().skip(skip).take(limit);
        match &self.projection {
            None => Ok(kept.collect()),
            Some(projection) => {
                let projection = Projection::parse(projection).map_err(invalid)?;
                kept.map(|document| projection.apply(&document).map_err(invalid))
                    .collect()
            }
        }
    }
}

impl Find<'_> {
    /// Returns the stored main documents (an outlier's first elements and its flag, a
    /// subset's top elements) rather than the logical documents; sort and projection then
    /// apply to them as stored.
    pub fn stored(mut self, stored: bool) -> Self {
        self.stored = stored;
        self
    }

    /// The order of the results (MongoDB's sort document).
    pub fn sort(mut self, sort: Document) -> Self {
        self.shape.sort = Some(sort);
        self
    }

    /// How many results to skip.
    pub fn skip(mut self, skip: u64) -> Self {
        self.shape.skip = skip;
        self
    }

    /// How many results at most (0: no limit, as the driver's).
    pub fn limit(mut self, limit: u64) -> Self {
        self.shape.limit = (limit > 0).then_some(limit);
        self
    }

    /// The fields to return (MongoDB's projection document, on the logical document unless
    /// stored).
    pub fn projection(mut self, projection: Document) -> Self {
        self.shape.projection = Some(projection);
        self
    }

    /// The matching documents, read from one snapshot. A sort, skip, limit or projection is
    /// applied here to what the pattern layer matched, not by the deployment.
    ///
    /// # Errors
    /// An invalid filter, sort or projection; the deployment's.
    pub fn run(self) -> Result<Vec<Document>> {
        let matched = self
            .collection
            .database
            .read(|layer| layer.find(&self.collection.name, &self.filter, !self.stored))?;
        self.shape.apply(matched)
    }
}

/// A `find_one`, sent by [`FindOne::run`].
#[derive(Debug)]
#[must_use = "nothing is sent until `run`"]
pub struct FindOne<'c> {
    collection: &'c PatternedCollection,
    filter: Document,
    stored: bool,
    shape: Shaping,
}

impl FindOne<'_> {
    /// Returns the stored main document rather than the logical document (see
    /// [`Find::stored`]).
    pub fn stored(mut self, stored: bool) -> Self {
        self.stored = stored;
        self
    }

    /// Which match is the first (MongoDB's sort document).
    pub fn sort(mut self, sort: Document) -> Self {
        self.shape.sort = Some(sort);
        self
    }

    /// How many matches to skip.
    pub fn skip(mut self, skip: u64) -> Self {
        self.shape.skip = skip;
        self
    }

    /// The fields to return.
    pub fn projection(mut self, projection: Document) -> Self {
        self.shape.projection = Some(projection);
        self
    }

    /// The first matching document, read from one snapshot.
    ///
    /// # Errors
    /// An invalid filter, sort or projection; the deployment's.
    pub fn run(self) -> Result<Option<Document>> {
        if self.shape.sort.is_none() && self.shape.skip == 0 {
            let found = self
                .collection
                .database
                .read(|layer| layer.find_one(&self.collection.name, &self.filter, !self.stored))?;
            return Ok(self.shape.apply(found.into_iter().collect())?.pop());
        }
        let matched = self
            .collection
            .database
            .read(|layer| layer.find(&self.collection.name, &self.filter, !self.stored))?;
        let shape = Shaping {
            limit: Some(1),
            ..self.shape
        };
        Ok(shape.apply(matched)?.pop())
    }
}

/// An `aggregate`, sent by [`Aggregate::run`].
#[derive(Debug)]
#[must_use = "nothing is sent until `run`"]
pub struct Aggregate<'c> {
    collection: &'c PatternedCollection,
    pipeline: Vec<Document>,
}

impl Aggregate<'_> {
    /// The pipeline's results. The pipeline runs here, on the collection's logical
    /// documents read from one snapshot (every element of every managed array), with the
    /// document language's stages: the pattern layer has no server-side pipelines, so every
    /// document is read and expanded first. Stages that read other collections (`$lookup`,
    /// `$unionWith`) and writing stages (`$out`, `$merge`) are refused.
    ///
    /// # Errors
    /// An invalid pipeline or a stage that fails; the deployment's.
    pub fn run(self) -> Result<Vec<Document>> {
        let invalid = |error: spillway_doc::DocError| Error::InvalidArgument {
            message: error.to_string(),
        };
        let pipeline =
            Pipeline::parse(&self.pipeline, &PipelineOptions::default()).map_err(invalid)?;
        if pipeline.output().is_some() {
            return Err(Error::InvalidArgument {
                message:
                    "aggregate through spillway-mongodb does not write: $out and $merge are refused"
                        .into(),
            });
        }
        let documents = self
            .collection
            .database
            .read(|layer| layer.find(&self.collection.name, &Document::new(), true))?;
        let variables = pipeline.variables().clone();
        pipeline::run(
            Arc::new(pipeline),
            Box::new(documents.into_iter().map(Ok)),
            Arc::new(NoOtherCollections),
            variables,
        )
        .collect::<spillway_doc::Result<Vec<_>>>()
        .map_err(invalid)
    }
}

/// What `$lookup` and `$unionWith` read in a pipeline of [`Aggregate`]: nothing, refused.
struct NoOtherCollections;

impl Source for NoOtherCollections {
    fn documents(
        &self,
        collection: &str,
        _filter: &Document,
    ) -> spillway_doc::Result<Box<dyn Iterator<Item = spillway_doc::Result<Document>> + '_>> {
        Err(spillway_doc::DocError::Pipeline {
            code: 115,
            message: format!(
                "aggregate through spillway-mongodb reads one collection: '{collection}' cannot be read by $lookup or $unionWith"
            ),
        })
    }
}

/// A `count_documents`, sent by [`CountDocuments::run`].
#[derive(Debug)]
#[must_use = "nothing is sent until `run`"]
pub struct CountDocuments<'c> {
    collection: &'c PatternedCollection,
    filter: Document,
}

impl CountDocuments<'_> {
    /// The number of matching documents.
    ///
    /// # Errors
    /// An invalid filter; the deployment's.
    pub fn run(self) -> Result<u64> {
        self.collection
            .database
            .read(|layer| layer.count(&self.collection.name, &self.filter))
    }
}
