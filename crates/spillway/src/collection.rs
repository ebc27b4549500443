//! [`Collection<T>`] and its fluent actions, shaped like the `mongodb` driver's 3.x sync API:
//! `coll.update_one(filter, update).upsert(true).run()?`.
//!
//! Each action parses its arguments (filter, update, sort, projection) before touching
//! anything, then runs on the latest snapshot (reads) or in a write transaction of its own,
//! or in the caller's transaction when given `.session(&mut tx)`. This module must never
//! implement query or update semantics itself: it converts types and delegates to `ops`.

use std::borrow::{Borrow, Cow};
use std::collections::HashMap;
use std::marker::PhantomData;
use std::sync::Arc;
use std::time::Duration;

use bson::{Bson, Document};
use serde::Serialize;
use serde::de::DeserializeOwned;
use spillway_doc::DocError;
use spillway_doc::collation::Collation;
use spillway_doc::filter::Filter;
use spillway_doc::path::FieldPath;
use spillway_doc::projection::Projection;
use spillway_doc::sort::SortSpec;
use spillway_doc::value_set::ValueSet;
use spillway_store::Store;

use crate::aggregate;
use crate::catalog::geo::GeoIndex;
use crate::catalog::{
    Catalog, ID_INDEX_NAME, IndexSettings, ParsedFilter, validate_collection_name,
};
use crate::changes::{Scope, Watch};
use crate::cursor::{Cursor, LogicalRead};
use crate::database::{Database, Transaction};
use crate::error::{Error, Result};
use crate::exec::{Execution, Match};
use crate::index_keys;
use crate::ops::{self, FindAndModify, UpdateKind};
use crate::patterned;
use crate::planner::{self, HintedScan};
use crate::results::{
    CreateIndexResult, DeleteResult, Explain, Hint, IndexModel, IndexOptions, InsertManyResult,
    InsertOneResult, ReturnDocument, UpdateModifications, UpdateResult, WriteModel,
};
use crate::route::Route;
use crate::storage;
use crate::txn::{Reader, WriteTxn};
use crate::views;

/// How many documents a streaming cursor fetches at a time unless told otherwise.
const DEFAULT_BATCH_SIZE: usize = 101;

/// A collection of documents read and written as `T`: any owned (`'static`) serde type.
/// With `T = Document` reads hand each document over as decoded from storage, without a
/// pass through serde.
pub struct Collection<T> {
    database: Database,
    name: String,
    marker: PhantomData<fn() -> T>,
}

/// Collections are handed out here rather than in `database.rs`, so that `database` (below)
/// never imports `collection` (above it).
impl Database {
    /// A handle on collection `name`, whose documents are read and written as `T`
    /// (`bson::Document` for untyped access). The collection is created by its first write;
    /// the name is checked by every operation.
    pub fn collection<T>(&self, name: &str) -> Collection<T>
    where
        T: Serialize + DeserializeOwned + Send + Sync + 'static,
    {
        Collection::new(self.clone(), name)
    }
}

impl<T> Clone for Collection<T> {
    fn clone(&self) -> Self {
        Collection {
            database: self.database.clone(),
            name: self.name.clone(),
            marker: PhantomData,
        }
    }
}

impl<T> std::fmt::Debug for Collection<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Collection")
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

fn to_document<T: Serialize>(value: &T) -> Result<Document> {
    bson::serialize_to_document(value)
        .map_err(|error| Error::serialization(format!("cannot serialize a document: {error}")))
}

fn from_document<T: DeserializeOwned + 'static>(document: Document) -> Result<T> {
    storage::document_as(document, "a document")
}

fn parse_filter(filter: &Document, collation: &Collation) -> Result<Filter> {
    Ok(Filter::parse(filter)
        .map_err(Error::filter)?
        .collated(collation))
}

fn parse_sort(sort: Option<&Document>, collation: &Collation) -> Result<Option<SortSpec>> {
    sort.map(|sort| SortSpec::parse(sort).map(|spec| spec.collated(collation)))
        .transpose()
        .map_err(Error::argument)
}

fn parse_projection(projection: Option<&Document>) -> Result<Option<Projection>> {
    projection
        .map(Projection::parse)
        .transpose()
        .map_err(Error::argument)
}

impl<T> Collection<T>
where
    T: Serialize + DeserializeOwned + Send + Sync + 'static,
{
    pub(crate) fn new(database: Database, name: &str) -> Collection<T> {
        Collection {
            database,
            name: name.to_string(),
            marker: PhantomData,
        }
    }

    /// The collection's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The same collection, read and written as another type.
    pub fn clone_with_type<U>(&self) -> Collection<U> {
        Collection {
            database: self.database.clone(),
            name: self.name.clone(),
            marker: PhantomData,
        }
    }

    /// Runs a write of documents or indexes; a view refuses it.
    fn write<R>(
        &self,
        session: Option<&mut Transaction>,
        operation: impl FnOnce(&mut WriteTxn, &Store) -> Result<R>,
    ) -> Result<R> {
        let name = self.name.as_str();
        self.write_catalog(session, |txn, store| {
            views::refuse_view(txn.catalog(), name)?;
            operation(txn, store)
        })
    }

    /// Runs a write that may concern a view (`drop`).
    fn write_catalog<R>(
        &self,
        session: Option<&mut Transaction>,
        operation: impl FnOnce(&mut WriteTxn, &Store) -> Result<R>,
    ) -> Result<R> {
        validate_collection_name(&self.name)?;
        let inner = &self.database.inner;
        match session {
            None => inner.write(operation),
            Some(transaction) => {
                transaction.check_database(&self.database)?;
                let result = operation(&mut transaction.txn, &inner.store)
                    .and_then(|value| transaction.claim_writes().map(|()| value));
                if let Err(error) = &result {
                    transaction.fail(error);
                }
                result
            }
        }
    }

    fn read<R>(
        &self,
        session: Option<&Transaction>,
        operation: impl FnOnce(&dyn Reader) -> Result<R>,
    ) -> Result<R> {
        validate_collection_name(&self.name)?;
        match session {
            None => operation(&*self.database.inner.published()),
            Some(transaction) => {
                transaction.check_database(&self.database)?;
                operation(&transaction.txn)
            }
        }
    }

    /// What a read of this collection reads if it is a view: the collection at the end of
    /// its chain and the stages to run first (`views::resolve`).
    fn view(&self, session: Option<&Transaction>) -> Result<Option<(String, Vec<Document>)>> {
        self.read(session, |reader| {
            Ok(views::resolve(reader.catalog(), &self.name))
        })
    }

    /// The logical length of the managed array `field` of the document with `_id` `id`,
    /// without reading every overflow bucket: the main array and the last bucket (outlier),
    /// or a count of archive entries (subset). For a field without a policy, the stored
    /// array's length. `None` when there is no such document, or when the field has no
    /// policy and the document does not hold it: there is no array to measure either way.
    ///
    /// # Errors
    /// [`ErrorKind::InvalidArgument`](crate::ErrorKind::InvalidArgument) when the field
    /// holds something other than an array.
    pub fn array_len(&self, id: impl Into<Bson>, field: &str) -> Result<Option<u64>> {
        let id = id.into();
        self.read(None, |reader| {
            let Some(stored) =
                storage::stored_by_key(reader, &self.name, &spillway_doc::key::to_key(&id))?
            else {
                return Ok(None);
            };
            if patterned::policy_on(reader.catalog(), &self.name, field).is_none() {
                return match stored.get(field) {
                    None => Ok(None),
                    Some(Bson::Array(elements)) => Ok(Some(elements.len() as u64)),
                    Some(other) => Err(Error::argument(spillway_doc::DocError::InvalidValue {
                        message: format!(
                            "field '{field}' of the document with _id {id} is {}, not an array",
                            spillway_doc::path::describe(other)
                        ),
                    })),
                };
            }
            patterned::array_len(reader, &self.name, field, &stored).map(Some)
        })
    }

    /// Elements `skip..skip + limit` of the logical array `field` of the document with `_id`
    /// `id` (`None` if there is no such document), reading only the buckets (outlier) or the
    /// archive range (subset, newest first) that hold them.
    pub fn array_page(
        &self,
        id: impl Into<Bson>,
        field: &str,
        skip: usize,
        limit: usize,
    ) -> Result<Option<Vec<Bson>>> {
        let id = id.into();
        self.read(None, |reader| {
            let Some(stored) =
                storage::stored_by_key(reader, &self.name, &spillway_doc::key::to_key(&id))?
            else {
                return Ok(None);
            };
            patterned::array_page(reader, &self.name, field, &stored, skip, limit).map(Some)
        })
    }

    /// Inserts one document (`_id` generated as an `ObjectId` when missing).
    pub fn insert_one(&self, document: impl Borrow<T>) -> InsertOne<'_, T> {
        InsertOne {
            collection: self,
            document: to_document(document.borrow()),
            bypass: false,
            session: None,
        }
    }

    /// Inserts documents in input order, as MongoDB's `insertMany` does.
    ///
    /// - Ordered (the default): the first failure stops the insert; the documents before it
    ///   stay inserted.
    /// - `.ordered(false)`: every valid document is inserted; each invalid one is reported.
    ///
    /// On failure the error's kind is the first failure's (a duplicate key, an invalid
    /// document...), [`Error::document_index`] is its input position,
    /// [`Error::inserted_ids`] the documents that were inserted all the same and
    /// [`Error::later_failures`] the other refused documents of an unordered insert.
    /// What was inserted is committed as one atomic batch.
    ///
    /// Inside a transaction (`.session(tx)`) the first failure ends the insert and dooms the
    /// transaction: nothing of it is committed.
    pub fn insert_many(
        &self,
        documents: impl IntoIterator<Item = impl Borrow<T>>,
    ) -> InsertMany<'_, T> {
        InsertMany {
            collection: self,
            documents: documents
                .into_iter()
                .map(|document| to_document(document.borrow()))
                .collect(),
            ordered: true,
            bypass: false,
            session: None,
        }
    }

    /// Finds the documents matching `filter`.
    pub fn find(&self, filter: Document) -> Find<'_, T> {
        Find {
            collection: self,
            filter,
            sort: None,
            skip: 0,
            limit: 0,
            projection: None,
            batch_size: None,
            stored: false,
            hint: None,
            min: None,
            max: None,
            collation: None,
            return_key: false,
            session: None,
        }
    }

    /// Finds the first document matching `filter`.
    pub fn find_one(&self, filter: Document) -> FindOne<'_, T> {
        FindOne {
            find: self.find(filter),
        }
    }

    /// Updates the first document matching `filter` (smallest `_id`) with update operators.
    pub fn update_one(
        &self,
        filter: Document,
        update: impl Into<UpdateModifications>,
    ) -> UpdateAction<'_, T> {
        UpdateAction::new(
            self,
            filter,
            Ok(update.into()),
            false,
            UpdateKind::Operators,
        )
    }

    /// Updates every document matching `filter` with update operators, all or nothing.
    ///
    /// Unique indexes are checked against the state the whole update leaves, so the outcome
    /// does not depend on the order documents are found in: `{ $inc: { rank: 1 } }` over a
    /// unique `rank` succeeds when the shifted ranks are still distinct (MongoDB checks each
    /// document as it writes it and may fail there, depending on the plan).
    pub fn update_many(
        &self,
        filter: Document,
        update: impl Into<UpdateModifications>,
    ) -> UpdateAction<'_, T> {
        UpdateAction::new(self, filter, Ok(update.into()), true, UpdateKind::Operators)
    }

    /// Replaces the first document matching `filter` (its `_id` is kept).
    pub fn replace_one(
        &self,
        filter: Document,
        replacement: impl Borrow<T>,
    ) -> UpdateAction<'_, T> {
        UpdateAction::new(
            self,
            filter,
            to_document(replacement.borrow()).map(UpdateModifications::Document),
            false,
            UpdateKind::Replacement,
        )
    }

    /// Deletes the first document matching `filter` (smallest `_id`).
    pub fn delete_one(&self, filter: Document) -> Delete<'_, T> {
        Delete {
            collection: self,
            filter,
            multi: false,
            collation: None,
            session: None,
        }
    }

    /// Deletes every document matching `filter`.
    pub fn delete_many(&self, filter: Document) -> Delete<'_, T> {
        Delete {
            collection: self,
            filter,
            multi: true,
            collation: None,
            session: None,
        }
    }

    /// Updates the first match (in `sort` order, else smallest `_id`) and returns it, before
    /// or after the update.
    pub fn find_one_and_update(
        &self,
        filter: Document,
        update: impl Into<UpdateModifications>,
    ) -> FindOneAndModify<'_, T> {
        FindOneAndModify::new(self, filter, Ok(update.into()), UpdateKind::Operators)
    }

    /// Replaces the first match (in `sort` order, else smallest `_id`) and returns it, before
    /// or after the replacement.
    pub fn find_one_and_replace(
        &self,
        filter: Document,
        replacement: impl Borrow<T>,
    ) -> FindOneAndModify<'_, T> {
        FindOneAndModify::new(
            self,
            filter,
            to_document(replacement.borrow()).map(UpdateModifications::Document),
            UpdateKind::Replacement,
        )
    }

    /// Deletes the first match (in `sort` order, else smallest `_id`) and returns it.
    pub fn find_one_and_delete(&self, filter: Document) -> FindOneAndDelete<'_, T> {
        FindOneAndDelete {
            collection: self,
            filter,
            sort: None,
            projection: None,
            collation: None,
            session: None,
        }
    }

    /// Counts the documents matching `filter`.
    pub fn count_documents(&self, filter: Document) -> CountDocuments<'_, T> {
        CountDocuments {
            collection: self,
            filter,
            skip: 0,
            limit: 0,
            collation: None,
            session: None,
        }
    }

    /// The number of documents, from the store's key count (no filter, no document read);
    /// a view's documents are counted by running it. Run with `.run()`.
    pub fn estimated_document_count(&self) -> EstimatedDocumentCount<'_, T> {
        EstimatedDocumentCount { collection: self }
    }

    /// The distinct values of `field` among documents matching `filter` (arrays unwound one
    /// level), in order of first appearance.
    pub fn distinct(&self, field: &str, filter: Document) -> Distinct<'_, T> {
        Distinct {
            collection: self,
            field: field.to_string(),
            filter,
            collation: None,
            stored: false,
            session: None,
        }
    }

    /// Creates a secondary index, building it from the existing documents in the same atomic
    /// write. An identical index is not created twice.
    pub fn create_index(&self, model: IndexModel) -> CreateIndex<'_, T> {
        CreateIndex {
            collection: self,
            model,
            session: None,
        }
    }

    /// Creates several indexes in one atomic write (all or none), as the driver's
    /// `create_indexes`.
    pub fn create_indexes(
        &self,
        models: impl IntoIterator<Item = IndexModel>,
    ) -> CreateIndexes<'_, T> {
        CreateIndexes {
            collection: self,
            models: models.into_iter().collect(),
            session: None,
        }
    }

    /// Drops every index but `_id_`, in one atomic write.
    pub fn drop_indexes(&self) -> DropIndexes<'_, T> {
        DropIndexes {
            collection: self,
            session: None,
        }
    }

    /// Drops the index called `name`.
    pub fn drop_index(&self, name: &str) -> DropIndex<'_, T> {
        DropIndex {
            collection: self,
            name: name.to_string(),
            session: None,
        }
    }

    /// A [`WriteModel`] inserting `document` into this collection, for
    /// [`Database::bulk_write`].
    pub fn insert_one_model(&self, document: impl Borrow<T>) -> Result<WriteModel> {
        Ok(WriteModel::InsertOne {
            namespace: self.name.clone(),
            document: to_document(document.borrow())?,
        })
    }

    /// A [`WriteModel`] updating the first document matching `filter` (`.upsert(true)` on
    /// the model to insert when nothing matches).
    pub fn update_one_model(
        &self,
        filter: Document,
        update: impl Into<UpdateModifications>,
    ) -> WriteModel {
        WriteModel::UpdateOne {
            namespace: self.name.clone(),
            filter,
            update: update.into(),
            upsert: false,
            array_filters: None,
        }
    }

    /// A [`WriteModel`] updating every document matching `filter`.
    pub fn update_many_model(
        &self,
        filter: Document,
        update: impl Into<UpdateModifications>,
    ) -> WriteModel {
        WriteModel::UpdateMany {
            namespace: self.name.clone(),
            filter,
            update: update.into(),
            upsert: false,
            array_filters: None,
        }
    }

    /// A [`WriteModel`] replacing the first document matching `filter`.
    pub fn replace_one_model(
        &self,
        filter: Document,
        replacement: impl Borrow<T>,
    ) -> Result<WriteModel> {
        Ok(WriteModel::ReplaceOne {
            namespace: self.name.clone(),
            filter,
            replacement: to_document(replacement.borrow())?,
            upsert: false,
        })
    }

    /// A [`WriteModel`] deleting the first document matching `filter`.
    pub fn delete_one_model(&self, filter: Document) -> WriteModel {
        WriteModel::DeleteOne {
            namespace: self.name.clone(),
            filter,
        }
    }

    /// A [`WriteModel`] deleting every document matching `filter`.
    pub fn delete_many_model(&self, filter: Document) -> WriteModel {
        WriteModel::DeleteMany {
            namespace: self.name.clone(),
            filter,
        }
    }

    /// The indexes, `_id_` first, then in creation order (none if the collection does not
    /// exist), as a cursor of [`IndexModel`]s like the driver's. Run with `.run()`.
    pub fn list_indexes(&self) -> ListIndexes<'_, T> {
        ListIndexes { collection: self }
    }

    /// The index names, `_id_` first. Run with `.run()`.
    pub fn list_index_names(&self) -> ListIndexNames<'_, T> {
        ListIndexNames { collection: self }
    }

    /// The indexes, `_id_` first, then in creation order (empty if the collection does not
    /// exist).
    /// The collation an operation that gave `given` runs under: `given`, or the
    /// collection's default collation (`create`'s `collation`), as in MongoDB.
    /// The collation a read of this view runs under when it gives `given`
    /// ([`views::read_collation`]: the view's, a different one refused).
    fn read_collation(
        &self,
        session: Option<&Transaction>,
        given: Option<&Collation>,
    ) -> Result<Option<Collation>> {
        self.read(session, |reader| {
            views::read_collation(reader.catalog(), &self.name, given)
        })
    }

    pub(crate) fn collation_or_default(&self, given: Option<&Collation>) -> Collation {
        if let Some(given) = given {
            return given.clone();
        }
        let state = self.database.inner.published();
        state
            .catalog
            .collections
            .get(&self.name)
            .map(|meta| meta.collation.clone())
            .unwrap_or_default()
    }

    pub(crate) fn index_models(&self) -> Result<Vec<IndexModel>> {
        self.read(None, |reader| {
            let Some(meta) = reader.catalog().collections.get(&self.name) else {
                return Ok(Vec::new());
            };
            if let Some(layout) = &meta.timeseries {
                // A time series' indexes are its buckets', listed in the measurements' terms.
                let buckets = reader.catalog().collections.get(&layout.buckets);
                return Ok(buckets
                    .into_iter()
                    .flat_map(|buckets| &buckets.indexes)
                    .filter_map(|index| {
                        Some(IndexModel {
                            keys: layout.user_index_keys(&index.spec)?,
                            options: Some(IndexOptions {
                                name: Some(index.name.clone()),
                                ..IndexOptions::default()
                            }),
                        })
                    })
                    .collect());
            }
            let mut models = vec![IndexModel {
                keys: bson::doc! { "_id": 1 },
                options: Some(IndexOptions {
                    name: Some(ID_INDEX_NAME.to_string()),
                    // The `_id` index orders by the collection's collation, as in MongoDB.
                    collation: (!meta.collation.is_simple()).then(|| meta.collation.clone()),
                    ..IndexOptions::default()
                }),
            }];
            models.extend(meta.indexes.iter().map(|index| {
                let settings = &index.settings;
                IndexModel {
                    keys: index.spec.clone(),
                    options: Some(IndexOptions {
                        unique: index.unique.then_some(true),
                        name: Some(index.name.clone()),
                        sparse: settings.sparse.then_some(true),
                        partial_filter_expression: settings
                            .partial
                            .as_ref()
                            .map(|partial| partial.spec.clone()),
                        hidden: settings.hidden.then_some(true),
                        expire_after: settings
                            .expire_after_seconds
                            .map(|seconds| Duration::from_secs(seconds.unsigned_abs())),
                        background: settings.echoed.get_bool("background").ok(),
                        weights: settings.text.as_ref().map(|text| {
                            text.weights
                                .iter()
                                .map(|(field, weight)| (field.clone(), Bson::Int32(*weight)))
                                .collect()
                        }),
                        default_language: settings
                            .text
                            .as_ref()
                            .map(|text| text.default_language.name().to_string()),
                        language_override: settings
                            .text
                            .as_ref()
                            .map(|text| text.language_override.clone()),
                        text_index_version: settings
                            .text
                            .as_ref()
                            .map(|_| spillway_doc::text::TEXT_INDEX_VERSION),
                        geo: settings.geo.as_ref().map(GeoIndex::options),
                        collation: (!settings.collation().is_simple())
                            .then(|| settings.collation().clone()),
                    }),
                }
            }));
            Ok(models)
        })
    }

    /// Runs an aggregation pipeline on the collection's documents (logical documents on a
    /// collection with a pattern policy; see the [`Aggregate`] action). The cursor yields
    /// `Document`s; [`Aggregate::with_type`] reads them as another type.
    pub fn aggregate(
        &self,
        pipeline: impl IntoIterator<Item = Document>,
    ) -> Aggregate<'_, Document> {
        Aggregate {
            database: &self.database,
            collection: &self.name,
            pipeline: pipeline.into_iter().collect(),
            let_vars: None,
            batch_size: None,
            bypass: false,
            collation: None,
            session: None,
            marker: PhantomData,
        }
    }

    /// Opens a change stream of this collection: its inserts, updates, replacements and
    /// deletes as MongoDB change events, in commit order, and a `drop`/`rename` followed by
    /// `invalidate`, which ends it. See [`crate::ChangeStream`].
    pub fn watch(&self) -> Watch<'_> {
        Watch::new(&self.database, Scope::Collection(self.name.clone()))
    }

    /// Drops the collection and its indexes (nothing happens if it does not exist).
    pub fn drop(&self) -> DropCollection<'_, T> {
        DropCollection {
            collection: self,
            session: None,
        }
    }

    /// Renames the collection to `to` (MongoDB's `renameCollection`), with its documents,
    /// indexes, options and pattern policies, in one commit. See [`RenameCollection`].
    ///
    /// ```
    /// use spillway::{Database, Pattern, bson::Document, doc};
    ///
    /// let db = Database::open_in_memory()?;
    /// db.set_pattern(Pattern::outlier("sales", "buyers").threshold(2))?;
    /// let sales = db.collection::<Document>("sales");
    /// sales.insert_one(doc! { "_id": 1, "buyers": [1, 2, 3, 4] }).run()?;
    /// sales.rename("orders").run()?;
    /// let orders = db.collection::<Document>("orders");
    /// let book = orders.find_one(doc! { "_id": 1 }).run()?.expect("renamed");
    /// assert_eq!(book.get_array("buyers")?.len(), 4);
    /// assert_eq!(db.patterns()[0].collection(), "orders");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn rename(&self, to: &str) -> RenameCollection<'_, T> {
        RenameCollection {
            collection: self,
            to: to.to_string(),
            drop_target: false,
            sides: Vec::new(),
            session: None,
        }
    }
}

macro_rules! session_method {
    () => {
        /// Runs the operation inside `transaction` (see `Database::transaction`), or in a
        /// [`crate::ClientSession`] (`.session(&mut session)`): in its transaction, or on
        /// its own when none is in progress.
        pub fn session(mut self, transaction: &'a mut Transaction) -> Self {
            self.session = if transaction.idle {
                None
            } else {
                Some(transaction)
            };
            self
        }
    };
}

macro_rules! collation_method {
    () => {
        /// Compares strings under `collation` (MongoDB's `collation` option) in the filter
        /// and the sort: with `Collation::parse(&doc! { "locale": "en", "strength": 2 })`,
        /// `{ name: "ANN" }` matches `"ann"`. Indexes then only bound non-string values.
        pub fn collation(mut self, collation: Collation) -> Self {
            self.collation = Some(collation);
            self
        }

        /// The collation when one is given; `None`: the collection's default collation.
        #[allow(dead_code, reason = "not every action's command passes it on")]
        pub(crate) fn collation_option(mut self, collation: Option<Collation>) -> Self {
            self.collation = collation;
            self
        }
    };
}

macro_rules! bypass_method {
    () => {
        /// Skips the collection's validator for this operation's writes (MongoDB's
        /// `bypassDocumentValidation`).
        pub fn bypass_document_validation(mut self, bypass: bool) -> Self {
            self.bypass = bypass;
            self
        }
    };
}

/// Runs `operation` with the transaction's validator bypass set to `bypass`, then restores it.
fn bypassing<R>(
    bypass: bool,
    txn: &mut WriteTxn,
    operation: impl FnOnce(&mut WriteTxn) -> Result<R>,
) -> Result<R> {
    let before = txn.bypass_validation;
    txn.bypass_validation = bypass;
    let result = operation(txn);
    txn.bypass_validation = before;
    result
}

/// `insert_one`, run with `.run()`.
#[must_use = "an action does nothing until .run()"]
pub struct InsertOne<'a, T> {
    collection: &'a Collection<T>,
    document: Result<Document>,
    bypass: bool,
    session: Option<&'a mut Transaction>,
}

impl<'a, T: Serialize + DeserializeOwned + Send + Sync + 'static> InsertOne<'a, T> {
    session_method!();
    bypass_method!();

    /// Inserts the document.
    pub fn run(self) -> Result<InsertOneResult> {
        let document = self.document?;
        let name = &self.collection.name;
        let bypass = self.bypass;
        let (inserted_id, _) = self.collection.write(self.session, |txn, store| {
            bypassing(bypass, txn, |txn| ops::insert(txn, store, name, document))
        })?;
        Ok(InsertOneResult { inserted_id })
    }
}

/// `insert_many`, run with `.run()`.
#[must_use = "an action does nothing until .run()"]
pub struct InsertMany<'a, T> {
    collection: &'a Collection<T>,
    documents: Vec<Result<Document>>,
    ordered: bool,
    bypass: bool,
    session: Option<&'a mut Transaction>,
}

impl<'a, T: Serialize + DeserializeOwned + Send + Sync + 'static> InsertMany<'a, T> {
    session_method!();
    bypass_method!();

    /// Whether the first failure stops the insert (`true`, the default) or every valid
    /// document is inserted (`false`).
    pub fn ordered(mut self, ordered: bool) -> Self {
        self.ordered = ordered;
        self
    }

    /// Inserts the documents (see [`Collection::insert_many`] for what a failure leaves).
    pub fn run(self) -> Result<InsertManyResult> {
        let name = &self.collection.name;
        let ordered = self.ordered;
        let in_transaction = self.session.is_some();
        let documents = self.documents;
        let bypass = self.bypass;
        // `ops::insert` buffers nothing for a document it refuses, so the documents before
        // (or around) a failure can be committed on their own. A view refuses each document
        // (`storage::write_documents`), so the refusal is the first document's, as in MongoDB.
        let (inserted_ids, failures) =
            self.collection.write_catalog(self.session, |txn, store| {
                bypassing(bypass, txn, |txn| {
                    let mut inserted_ids = HashMap::with_capacity(documents.len());
                    let mut failures = Vec::new();
                    for (position, document) in documents.into_iter().enumerate() {
                        match document.and_then(|document| ops::insert(txn, store, name, document))
                        {
                            Ok((id, _)) => {
                                inserted_ids.insert(position, id);
                            }
                            Err(error) if in_transaction => return Err(error.at_document(position)),
                            Err(error) => {
                                failures.push(error.at_document(position));
                                if ordered {
                                    break;
                                }
                            }
                        }
                    }
                    Ok((inserted_ids, failures))
                })
            })?;
        if failures.is_empty() {
            return Ok(InsertManyResult { inserted_ids });
        }
        Err(Error::partial_insert(failures, inserted_ids))
    }
}

/// `find`, run with `.run()` (a [`Cursor`]) or `.explain()`.
#[must_use = "an action does nothing until .run()"]
pub struct Find<'a, T> {
    collection: &'a Collection<T>,
    filter: Document,
    sort: Option<Document>,
    skip: u64,
    limit: i64,
    projection: Option<Document>,
    batch_size: Option<u32>,
    stored: bool,
    hint: Option<Hint>,
    min: Option<Document>,
    max: Option<Document>,
    collation: Option<Collation>,
    return_key: bool,
    session: Option<&'a mut Transaction>,
}

impl<'a, T: Serialize + DeserializeOwned + Send + Sync + 'static> Find<'a, T> {
    session_method!();
    collation_method!();

    /// Orders the results (`{ field: 1 | -1, ... }`).
    pub fn sort(mut self, sort: Document) -> Self {
        self.sort = Some(sort);
        self
    }

    /// Skips this many results.
    pub fn skip(mut self, skip: u64) -> Self {
        self.skip = skip;
        self
    }

    /// Returns at most this many results (0: no limit; a negative value: its absolute value).
    pub fn limit(mut self, limit: i64) -> Self {
        self.limit = limit;
        self
    }

    /// Shapes each returned document.
    pub fn projection(mut self, projection: Document) -> Self {
        self.projection = Some(projection);
        self
    }

    /// How many documents the cursor fetches from the store at a time.
    pub fn batch_size(mut self, batch_size: u32) -> Self {
        self.batch_size = Some(batch_size);
        self
    }

    /// Reads the stored layout instead of the logical documents: on a collection with pattern
    /// policies, the main documents as stored (an outlier's first elements and its flag, a
    /// subset's top elements), the filter, sort and projection applied to them as they are.
    /// Seed-style applications and repair tools want it; every other read is logical (the
    /// managed arrays whole, read from the side collections only as far as the projection
    /// needs, and no flags), as a plain collection holding the logical documents answers.
    /// Over the wire the same view is the namespace `system.stored.<collection>`.
    pub fn stored(mut self, stored: bool) -> Self {
        self.stored = stored;
        self
    }

    /// Makes the query use this index (or `{ $natural: 1 | -1 }`: a collection scan); an
    /// index that does not exist, is hidden, or is partial with a filter the query does not
    /// imply, is an error. Ignored on a query answered on logical documents.
    pub fn hint(mut self, hint: Hint) -> Self {
        self.hint = Some(hint);
        self
    }

    /// Starts the scan of the hinted index at this key, inclusive (MongoDB's `min` option): a
    /// value for each field of the index, in its key pattern's order (`{ a: 3, b: "x" }` for
    /// an index `{ a: 1, b: -1 }`), compared in the index's order, so a descending field
    /// starts at its highest value. Needs [`Find::hint`]; the filter still applies.
    pub fn min(mut self, min: Document) -> Self {
        self.min = Some(min);
        self
    }

    /// Ends the scan of the hinted index before this key, exclusive (MongoDB's `max`), with
    /// the same shape as [`Find::min`].
    pub fn max(mut self, max: Document) -> Self {
        self.max = Some(max);
        self
    }

    /// Returns, instead of each document, the keys of the index the query used (MongoDB's
    /// `returnKey`): `{ a: 3 }` for a query answered through an index `{ a: 1 }`, `{ _id: 7 }`
    /// through the `_id` index, `{}` from a collection scan. The projection is ignored.
    pub fn return_key(mut self, return_key: bool) -> Self {
        self.return_key = return_key;
        self
    }

    /// Starts the query; the cursor reads the snapshot taken now. On a view, the query runs
    /// as the view's pipeline followed by `$match`, `$sort`, `$skip`, `$limit` and `$project`
    /// (`hint` and `expand` do not apply; `return_key`, `min` and `max` are refused, 168, as
    /// MongoDB refuses them on a view).
    pub fn run(self) -> Result<Cursor<T>> {
        if let Some((source, mut stages)) = self.collection.view(self.session.as_deref())? {
            // MongoDB runs a find on a view as an aggregation, which refuses the options
            // that need one index scan (168 InvalidPipelineOperator).
            let scan_options = [
                ("returnKey", self.return_key),
                ("min", self.min.is_some()),
                ("max", self.max.is_some()),
            ];
            if let Some((option, _)) = scan_options.iter().find(|(_, given)| *given) {
                return Err(Error::invalid_options(
                    &self.collection.name,
                    format!(
                        "Option {option} not supported in aggregation: {} is a view, and a find on a view runs as an aggregation of its pipeline",
                        self.collection.name
                    ),
                )
                .with_code(168));
            }
            stages.push(bson::doc! { "$match": self.filter });
            if let Some(sort) = self.sort.filter(|sort| !sort.is_empty()) {
                stages.push(bson::doc! { "$sort": sort });
            }
            if self.skip > 0 {
                stages.push(bson::doc! { "$skip": i64::try_from(self.skip).unwrap_or(i64::MAX) });
            }
            if let Some(limit) = ops::effective_limit(self.limit) {
                stages.push(bson::doc! { "$limit": i64::try_from(limit).unwrap_or(i64::MAX) });
            }
            if let Some(projection) = self.projection.filter(|projection| !projection.is_empty()) {
                stages.push(bson::doc! { "$project": projection });
            }
            let collation = self
                .collection
                .read_collation(self.session.as_deref(), self.collation.as_ref())?;
            let source = self.collection.database.collection::<Document>(&source);
            let mut action = source.aggregate(stages).collation_option(collation);
            if let Some(batch_size) = self.batch_size {
                action = action.batch_size(batch_size);
            }
            if let Some(transaction) = self.session {
                action = action.session(transaction);
            }
            return action.with_type::<T>().run();
        }
        let hinted = hinted_scan(
            &self.collection.name,
            self.hint.as_ref(),
            self.min.as_ref(),
            self.max.as_ref(),
        )?;
        let collation = self
            .collection
            .collation_or_default(self.collation.as_ref());
        let filter = parse_filter(&self.filter, &collation)?;
        let sort = parse_sort(self.sort.as_ref(), &collation)?;
        let projection = parse_projection(self.projection.as_ref())?.map(Arc::new);
        let limit = ops::effective_limit(self.limit);
        validate_collection_name(&self.collection.name)?;
        if self.return_key {
            let name = &self.collection.name;
            let matches = self.collection.read(self.session.as_deref(), |reader| {
                let mut run = ops::query_hinted(
                    reader,
                    name,
                    &filter,
                    sort.as_ref(),
                    self.skip,
                    limit,
                    hinted,
                )?;
                let by_id = sort.as_ref().is_some_and(|sort| {
                    sort.keys()
                        .first()
                        .is_some_and(|key| key.path.as_str() == "_id")
                });
                let route = Route::of(reader.catalog(), name);
                let plain_plan = if route.engine().is_some() {
                    // A policy changes the plan (a union of the main and side collections,
                    // the hint ignored), never the keys: they are those of the plan a plain
                    // collection with these indexes would run, taken from the logical
                    // documents.
                    patterned::logical_matches(
                        reader,
                        name,
                        &patterned::logical_output(&route, None),
                        &mut run.matches,
                    )?;
                    Some(plain_plan(reader, name, &filter, sort.as_ref(), hinted)?)
                } else {
                    None
                };
                let plan = plain_plan.as_ref().unwrap_or(&run.plan);
                returned_keys(reader, name, plan, by_id, run.matches)
            })?;
            return Ok(Cursor::materialised(matches, Arc::new(filter), None));
        }
        let stored = self.stored;
        let name = &self.collection.name;
        let text_score_wanted = projection
            .as_ref()
            .is_some_and(|projection| projection.needs_text_score())
            || sort.as_ref().is_some_and(SortSpec::has_text_score);
        if text_score_wanted && filter.text_search().is_none() {
            return Err(storage::text_score_unavailable(None));
        }
        // The whole result at once, logical where the collection has policies.
        let materialise = |reader: &dyn Reader,
                           filter: &Filter,
                           output: &patterned::LogicalOutput,
                           hinted: Option<HintedScan<'_>>|
         -> Result<Vec<Match>> {
            let query = if stored {
                storage::query_stored_hinted
            } else {
                ops::query_hinted
            };
            let mut run = query(
                reader,
                name,
                filter,
                sort.as_ref(),
                self.skip,
                limit,
                hinted,
            )?;
            if !stored {
                patterned::logical_matches(reader, name, output, &mut run.matches)?;
            }
            Ok(run.matches)
        };
        if let Some(transaction) = self.session {
            let (matches, projection, filter) =
                self.collection.read(Some(transaction), |reader| {
                    // The cursor's projection scores with the filter bound to the text index.
                    let meta = reader.catalog().collections.get(name.as_str());
                    let (bound, _) = storage::bind_text(meta, &filter, None)?;
                    let filter = Arc::new(bound.unwrap_or_else(|| filter.clone()));
                    let route = Route::of(reader.catalog(), name);
                    let output = read_output(&route, projection, stored);
                    let matches = materialise(reader, &filter, &output, hinted)?;
                    Ok((matches, output.projection, filter))
                })?;
            return Ok(Cursor::materialised(matches, filter, projection));
        }
        let state = self.collection.database.inner.published();
        let meta = state.catalog.collections.get(name.as_str());
        let (bound, _) = storage::bind_text(meta, &filter, None)?;
        let filter = Arc::new(bound.unwrap_or(filter));
        // The statement's one routing decision.
        let route = Route::of(&state.catalog, name);
        let output = read_output(&route, projection, stored);
        // On a main collection with policies, the plan scans with the clauses on unmanaged
        // fields and the cursor matches and expands each candidate on its logical view.
        let shape = if stored {
            patterned::ReadShape::plain(&filter)
        } else {
            patterned::read_shape(&state.catalog, &route, &filter)?
        };
        let logical_sort = !stored && route.is_logical_sort(sort.as_ref());
        let plan = match hinted {
            Some(hinted) if shape.has_policies && hinted.has_bounds() => {
                return Err(ops::min_max_on_logical(name));
            }
            Some(hinted) if !shape.has_policies => {
                planner::plan_hinted(meta, &shape.scan_filter, sort.as_ref(), hinted)?
            }
            _ => planner::plan(meta, &shape.scan_filter, sort.as_ref()),
        };
        // `$near` orders by distance: every match is measured before the first is returned;
        // a sort on a managed array compares whole logical arrays.
        if plan.sort.is_some() || shape.union || filter.near().is_some() || logical_sort {
            let matches = materialise(&*state, &filter, &output, hinted)?;
            return Ok(Cursor::materialised(matches, filter, output.projection));
        }
        let batch_size = self
            .batch_size
            .map_or(DEFAULT_BATCH_SIZE, |size| size as usize);
        let execution = Execution::new(plan.access, plan.docs);
        let logical = shape
            .has_policies
            .then(|| LogicalRead::new(name, shape.logical_filter, &output));
        Ok(Cursor::streaming(
            state,
            execution,
            (filter, shape.scan_filter),
            logical,
            output.projection,
            usize::try_from(self.skip).unwrap_or(usize::MAX),
            limit,
            batch_size,
        ))
    }

    /// Runs the query and reports the plan chosen and what it examined. A view has no plan of
    /// its own: [`Aggregate::explain`] on it describes the pipeline it runs.
    pub fn explain(self) -> Result<Explain> {
        if self.collection.view(self.session.as_deref())?.is_some() {
            return Err(views::not_supported_on_view(&self.collection.name));
        }
        let hint = hinted_scan(
            &self.collection.name,
            self.hint.as_ref(),
            self.min.as_ref(),
            self.max.as_ref(),
        )?;
        let collation = self
            .collection
            .collation_or_default(self.collation.as_ref());
        let filter = parse_filter(&self.filter, &collation)?;
        let sort = parse_sort(self.sort.as_ref(), &collation)?;
        parse_projection(self.projection.as_ref())?;
        let limit = ops::effective_limit(self.limit);
        let name = &self.collection.name;
        let run = self.collection.read(self.session.as_deref(), |reader| {
            ops::query_hinted(reader, name, &filter, sort.as_ref(), self.skip, limit, hint)
        })?;
        Ok(Explain {
            winning_plan: run.described.unwrap_or_else(|| run.plan.describe()),
            keys_examined: run.keys_examined,
            docs_examined: run.docs_examined,
            n_returned: run.matches.len() as u64,
        })
    }
}

/// The plan a plain collection holding the logical documents of `collection` would run for
/// this query: the planner's choice (or the hinted index) over the same indexes, which the
/// main collection of a policy has.
fn plain_plan(
    reader: &dyn Reader,
    collection: &str,
    filter: &Filter,
    sort: Option<&SortSpec>,
    hint: Option<HintedScan<'_>>,
) -> Result<planner::Plan> {
    let meta = reader.catalog().collections.get(collection);
    let (bound_filter, bound_sort) = storage::bind_text(meta, filter, sort)?;
    let filter = bound_filter.as_ref().unwrap_or(filter);
    let sort = bound_sort.as_ref().or(sort);
    match hint {
        Some(hint) => planner::plan_hinted(meta, filter, sort, hint),
        None => Ok(planner::plan(meta, filter, sort)),
    }
}

/// The matches of a `returnKey` find: each document replaced by the keys of the index `plan`
/// reads it through (none when it scans the collection). A scan of the documents in `_id`
/// order for a sort on `_id` (`by_id`), or bounded by `_id`, is MongoDB's scan of the `_id`
/// index.
fn returned_keys(
    reader: &dyn Reader,
    collection: &str,
    plan: &planner::Plan,
    by_id: bool,
    matches: Vec<Match>,
) -> Result<Vec<Match>> {
    let key_pattern = match &*plan.access {
        planner::Access::IdHack { .. } => bson::doc! { "_id": 1 },
        planner::Access::CollScan { bounds, .. }
            if bounds.is_some() || (by_id && plan.sort.is_none()) =>
        {
            bson::doc! { "_id": 1 }
        }
        planner::Access::IxScan { key_pattern, .. } => key_pattern.clone(),
        planner::Access::Eof | planner::Access::CollScan { .. } => Document::new(),
    };
    let scanned = match &*plan.access {
        planner::Access::IxScan {
            index,
            ranges,
            reverse,
            ..
        } => reader
            .catalog()
            .collections
            .get(collection)
            .and_then(|meta| meta.indexes.iter().find(|meta| &meta.name == index))
            // A hashed entry holds a hash, a text or geo entry a term or a cell: not values
            // an entry can be matched back to.
            .filter(|meta| {
                meta.hashed.is_none() && meta.settings.text.is_none() && meta.settings.geo.is_none()
            })
            .map(|meta| (meta, ranges.as_slice(), *reverse)),
        _ => None,
    };
    matches
        .into_iter()
        .map(|found| {
            let document = Document::from_reader(found.bytes.as_slice())
                .map_err(|error| Error::corruption(format!("a stored document: {error}")))?;
            let reached = match scanned {
                Some((index, ranges, reverse)) => {
                    reached_key(collection, index, ranges, reverse, &document, &found.id_key)?
                }
                None => None,
            };
            let keys = reached.unwrap_or_else(|| index_keys::return_key(&key_pattern, &document));
            let bytes = keys
                .to_vec()
                .map_err(|error| Error::corruption(format!("an index key document: {error}")))?;
            Ok(Match {
                id_key: found.id_key,
                bytes,
            })
        })
        .collect()
}

/// The key of `index` an index scan over `ranges` first reaches `document` by, as a document
/// of the index fields' values (of an array field, the element that entry holds, as MongoDB's
/// `returnKey` shows it); `None` when no entry of the document lies in the ranges.
fn reached_key(
    collection: &str,
    index: &crate::catalog::IndexMeta,
    ranges: &[crate::txn::KeyRange],
    reverse: bool,
    document: &Document,
    id_key: &[u8],
) -> Result<Option<Document>> {
    let (entries, _) = index_keys::index_entries(collection, index, document, id_key)?;
    let in_range = |range: &crate::txn::KeyRange, key: &[u8]| {
        use std::ops::{Bound, RangeBounds as _};
        let bounds: (Bound<&[u8]>, Bound<&[u8]>) = (
            range.low.as_ref().map(Vec::as_slice),
            range.high.as_ref().map(Vec::as_slice),
        );
        bounds.contains(&key)
    };
    let reached = if reverse {
        ranges.iter().rev().find_map(|range| {
            entries
                .iter()
                .rev()
                .find(|entry| in_range(range, &entry.key))
        })
    } else {
        ranges
            .iter()
            .find_map(|range| entries.iter().find(|entry| in_range(range, &entry.key)))
    };
    Ok(reached.and_then(
        |entry| match index_keys::key_values(index, document, &entry.key) {
            Bson::Document(keys) => Some(keys),
            _ => None,
        },
    ))
}

/// How a find returns documents: as stored when it asked for the stored layout, else as
/// the collection's logical read with `projection` ([`patterned::logical_output`]).
fn read_output(
    route: &Route<'_>,
    projection: Option<Arc<Projection>>,
    stored: bool,
) -> patterned::LogicalOutput {
    if stored {
        return patterned::LogicalOutput {
            projection,
            array_reads: Vec::new(),
            expand: false,
        };
    }
    patterned::logical_output(route, projection)
}

/// A find's hint with its `min`/`max` bounds, after checking they go together.
fn hinted_scan<'a>(
    collection: &str,
    hint: Option<&'a Hint>,
    min: Option<&'a Document>,
    max: Option<&'a Document>,
) -> Result<Option<HintedScan<'a>>> {
    planner::check_min_max(collection, min, max, hint)?;
    Ok(hint.map(|hint| HintedScan { hint, min, max }))
}

/// `aggregate`, run with `.run()` (a [`Cursor`] of `R`, `Document` unless
/// [`Aggregate::with_type`] says otherwise) or `.explain()`.
///
/// The leading `$match`, `$sort`, `$skip` and `$limit` stages run as a `find` and use
/// indexes; the rest streams, except the stages that must hold documents (`$group` holds its
/// groups, `$sort` its input or, before a `$limit`, the top documents). On a collection with
/// a pattern policy the pipeline reads logical documents, and expands a stored document only
/// when it reads a managed array or passes whole documents on; a first stage
/// `{$storedDocuments: {}}` reads the stored documents as they are. A pipeline ending with
/// `$out` or `$merge` runs in one write transaction: its output is written whole or not at
/// all. Errors carry MongoDB's codes ([`Error::code`]).
#[must_use = "an action does nothing until .run()"]
pub struct Aggregate<'a, R> {
    database: &'a Database,
    collection: &'a str,
    pipeline: Vec<Document>,
    let_vars: Option<Document>,
    batch_size: Option<u32>,
    bypass: bool,
    collation: Option<Collation>,
    session: Option<&'a mut Transaction>,
    marker: PhantomData<fn() -> R>,
}

impl<'a, R: DeserializeOwned + 'static> Aggregate<'a, R> {
    session_method!();
    bypass_method!();
    collation_method!();

    /// Variables the pipeline reads as `$$name` (MongoDB's `let` option).
    pub fn let_vars(mut self, let_vars: Document) -> Self {
        self.let_vars = Some(let_vars);
        self
    }

    /// How many documents the cursor fetches from the store at a time.
    pub fn batch_size(mut self, batch_size: u32) -> Self {
        self.batch_size = Some(batch_size);
        self
    }

    /// Accepted for compatibility: stages that hold documents hold them in memory.
    pub fn allow_disk_use(self, _allow: bool) -> Self {
        self
    }

    /// Reads the results as `U` instead.
    pub fn with_type<U: DeserializeOwned>(self) -> Aggregate<'a, U> {
        Aggregate {
            database: self.database,
            collection: self.collection,
            pipeline: self.pipeline,
            let_vars: self.let_vars,
            batch_size: self.batch_size,
            bypass: self.bypass,
            collation: self.collation,
            session: self.session,
            marker: PhantomData,
        }
    }

    /// The request, on the collection a view reads if this is one (its pipeline first).
    fn request(&self, catalog: &Catalog) -> Result<aggregate::Request> {
        validate_collection_name(self.collection)?;
        let resolved = views::resolve(catalog, self.collection);
        let (collection, pipeline) = match &resolved {
            Some((source, stages)) => {
                let mut stages = stages.clone();
                stages.extend(self.pipeline.iter().cloned());
                (source.as_str(), Cow::Owned(stages))
            }
            None => (self.collection, Cow::Borrowed(&self.pipeline)),
        };
        // A view's reads run under its collation; an aggregate that gives no collation runs
        // under the collection's default.
        let collation = views::read_collation(catalog, self.collection, self.collation.as_ref())?;
        let collation = collation.unwrap_or_else(|| {
            catalog
                .collections
                .get(collection)
                .map(|meta| meta.collation.clone())
                .unwrap_or_default()
        });
        aggregate::Request::parse(collection, &pipeline, self.let_vars.as_ref(), &collation)
    }

    /// The request, with views resolved in the catalog the pipeline reads.
    fn resolved_request(&self) -> Result<aggregate::Request> {
        match &self.session {
            Some(transaction) => self.request(transaction.txn.catalog()),
            None => self.request(&self.database.inner.published().catalog),
        }
    }

    /// Runs the pipeline. A pipeline ending with `$out` or `$merge` has written its output
    /// when this returns (the cursor is then empty).
    pub fn run(self) -> Result<Cursor<R>> {
        let request = self.resolved_request()?;
        let inner = &self.database.inner;
        if request.writes() {
            let bypass = self.bypass;
            match self.session {
                None => inner.write(|txn, store| {
                    bypassing(bypass, txn, |txn| request.run_writing(txn, store))
                })?,
                Some(transaction) => {
                    transaction.check_database(self.database)?;
                    let result = bypassing(bypass, &mut transaction.txn, |txn| {
                        request.run_writing(txn, &inner.store)
                    })
                    .and_then(|()| transaction.claim_writes());
                    if let Err(error) = &result {
                        transaction.fail(error);
                    }
                    result?;
                }
            }
            return Ok(Cursor::documents(Box::new(std::iter::empty())));
        }
        if let Some(transaction) = self.session {
            transaction.check_database(self.database)?;
            let documents = request.run_in(&transaction.txn)?;
            return Ok(Cursor::documents(Box::new(documents.into_iter().map(Ok))));
        }
        let batch_size = self
            .batch_size
            .map_or(DEFAULT_BATCH_SIZE, |size| size as usize);
        request.run_on_snapshot(inner.published(), batch_size)
    }

    /// The plan: the `find` the planner runs for the leading stages (with what it
    /// examined), then the other stages as parsed.
    pub fn explain(self) -> Result<Document> {
        let request = self.resolved_request()?;
        match self.session {
            None => request.explain(&*self.database.inner.published()),
            Some(transaction) => request.explain(&transaction.txn),
        }
    }
}

/// `find_one`, run with `.run()`.
#[must_use = "an action does nothing until .run()"]
pub struct FindOne<'a, T> {
    find: Find<'a, T>,
}

impl<'a, T: Serialize + DeserializeOwned + Send + Sync + 'static> FindOne<'a, T> {
    /// Runs the operation inside `transaction` (see `Database::transaction`).
    pub fn session(mut self, transaction: &'a mut Transaction) -> Self {
        self.find = self.find.session(transaction);
        self
    }

    /// Picks the first document in this order.
    pub fn sort(mut self, sort: Document) -> Self {
        self.find = self.find.sort(sort);
        self
    }

    /// Compares strings under `collation` (see [`Find::collation`]).
    pub fn collation(mut self, collation: Collation) -> Self {
        self.find = self.find.collation(collation);
        self
    }

    /// The collation when one is given; `None`: the collection's default collation.
    pub(crate) fn collation_option(mut self, collation: Option<Collation>) -> Self {
        self.find = self.find.collation_option(collation);
        self
    }

    /// Skips this many matches first.
    pub fn skip(mut self, skip: u64) -> Self {
        self.find = self.find.skip(skip);
        self
    }

    /// Shapes the returned document.
    pub fn projection(mut self, projection: Document) -> Self {
        self.find = self.find.projection(projection);
        self
    }

    /// Reads the stored layout (see [`Find::stored`]).
    pub fn stored(mut self, stored: bool) -> Self {
        self.find = self.find.stored(stored);
        self
    }

    /// The first match, if any.
    pub fn run(self) -> Result<Option<T>> {
        self.find.limit(1).batch_size(1).run()?.next().transpose()
    }
}

/// `update_one`, `update_many` and `replace_one`, run with `.run()`.
#[must_use = "an action does nothing until .run()"]
pub struct UpdateAction<'a, T> {
    collection: &'a Collection<T>,
    filter: Document,
    update: Result<UpdateModifications>,
    multi: bool,
    kind: UpdateKind,
    upsert: bool,
    array_filters: Vec<Document>,
    sort: Option<Document>,
    bypass: bool,
    collation: Option<Collation>,
    session: Option<&'a mut Transaction>,
}

impl<'a, T: Serialize + DeserializeOwned + Send + Sync + 'static> UpdateAction<'a, T> {
    fn new(
        collection: &'a Collection<T>,
        filter: Document,
        update: Result<UpdateModifications>,
        multi: bool,
        kind: UpdateKind,
    ) -> Self {
        UpdateAction {
            collection,
            filter,
            update,
            multi,
            kind,
            upsert: false,
            array_filters: Vec::new(),
            sort: None,
            bypass: false,
            collation: None,
            session: None,
        }
    }

    session_method!();
    collation_method!();
    bypass_method!();

    /// Which match `update_one` and `replace_one` change: the first in this order (MongoDB
    /// 8.0's `sort`); without it, the smallest `_id`. `update_many` refuses it.
    pub fn sort(mut self, sort: Document) -> Self {
        self.sort = Some(sort);
        self
    }

    /// Inserts a document built from the filter and the update when nothing matches.
    pub fn upsert(mut self, upsert: bool) -> Self {
        self.upsert = upsert;
        self
    }

    /// The filters of the update's `$[<identifier>]` operators.
    pub fn array_filters(mut self, array_filters: impl IntoIterator<Item = Document>) -> Self {
        self.array_filters = array_filters.into_iter().collect();
        self
    }

    /// Runs the update.
    pub fn run(self) -> Result<UpdateResult> {
        let collation = self
            .collection
            .collation_or_default(self.collation.as_ref());
        let filter = parse_filter(&self.filter, &collation)?;
        let update =
            ops::parse_modifications(&self.update?, &self.array_filters, self.kind, &collation)?;
        let sort = parse_sort(self.sort.as_ref(), &collation)?;
        if sort.is_some() && self.multi {
            return Err(Error::argument(DocError::InvalidSort {
                message: "update_many takes no sort: it changes every match".to_string(),
            }));
        }
        let name = &self.collection.name;
        let (multi, upsert, bypass) = (self.multi, self.upsert, self.bypass);
        let counts = self.collection.write(self.session, |txn, store| {
            bypassing(bypass, txn, |txn| {
                ops::update_sorted(
                    txn,
                    store,
                    name,
                    &filter,
                    &update,
                    multi,
                    upsert,
                    sort.as_ref(),
                )
            })
        })?;
        Ok(UpdateResult {
            matched_count: counts.matched_count,
            modified_count: counts.modified_count,
            upserted_id: counts.upserted_id,
        })
    }
}

/// `delete_one` and `delete_many`, run with `.run()`.
#[must_use = "an action does nothing until .run()"]
pub struct Delete<'a, T> {
    collection: &'a Collection<T>,
    filter: Document,
    multi: bool,
    collation: Option<Collation>,
    session: Option<&'a mut Transaction>,
}

impl<'a, T: Serialize + DeserializeOwned + Send + Sync + 'static> Delete<'a, T> {
    session_method!();
    collation_method!();

    /// Runs the delete.
    pub fn run(self) -> Result<DeleteResult> {
        let filter = parse_filter(
            &self.filter,
            &self
                .collection
                .collation_or_default(self.collation.as_ref()),
        )?;
        let name = &self.collection.name;
        let multi = self.multi;
        let deleted_count = self.collection.write(self.session, |txn, store| {
            ops::delete(txn, store, name, &filter, multi)
        })?;
        Ok(DeleteResult { deleted_count })
    }
}

/// `find_one_and_update` and `find_one_and_replace`, run with `.run()`.
#[must_use = "an action does nothing until .run()"]
pub struct FindOneAndModify<'a, T> {
    collection: &'a Collection<T>,
    filter: Document,
    update: Result<UpdateModifications>,
    kind: UpdateKind,
    sort: Option<Document>,
    projection: Option<Document>,
    upsert: bool,
    return_document: ReturnDocument,
    array_filters: Vec<Document>,
    bypass: bool,
    collation: Option<Collation>,
    session: Option<&'a mut Transaction>,
}

impl<'a, T: Serialize + DeserializeOwned + Send + Sync + 'static> FindOneAndModify<'a, T> {
    fn new(
        collection: &'a Collection<T>,
        filter: Document,
        update: Result<UpdateModifications>,
        kind: UpdateKind,
    ) -> Self {
        FindOneAndModify {
            collection,
            filter,
            update,
            kind,
            sort: None,
            projection: None,
            upsert: false,
            return_document: ReturnDocument::Before,
            array_filters: Vec::new(),
            bypass: false,
            collation: None,
            session: None,
        }
    }

    session_method!();
    collation_method!();
    bypass_method!();

    /// Picks the first match in this order.
    pub fn sort(mut self, sort: Document) -> Self {
        self.sort = Some(sort);
        self
    }

    /// Shapes the returned document.
    pub fn projection(mut self, projection: Document) -> Self {
        self.projection = Some(projection);
        self
    }

    /// Inserts a document when nothing matches.
    pub fn upsert(mut self, upsert: bool) -> Self {
        self.upsert = upsert;
        self
    }

    /// Returns the document before (default) or after the write.
    pub fn return_document(mut self, return_document: ReturnDocument) -> Self {
        self.return_document = return_document;
        self
    }

    /// The filters of the update's `$[<identifier>]` operators.
    pub fn array_filters(mut self, array_filters: impl IntoIterator<Item = Document>) -> Self {
        self.array_filters = array_filters.into_iter().collect();
        self
    }

    /// Runs the operation.
    pub fn run(self) -> Result<Option<T>> {
        let collation = self
            .collection
            .collation_or_default(self.collation.as_ref());
        let filter = parse_filter(&self.filter, &collation)?;
        let update =
            ops::parse_modifications(&self.update?, &self.array_filters, self.kind, &collation)?;
        let sort = parse_sort(self.sort.as_ref(), &collation)?;
        let projection = parse_projection(self.projection.as_ref())?;
        let options = FindAndModify {
            sort: sort.as_ref(),
            projection: projection.as_ref(),
            upsert: self.upsert,
            return_after: self.return_document == ReturnDocument::After,
        };
        let name = &self.collection.name;
        let bypass = self.bypass;
        let document = self.collection.write(self.session, |txn, store| {
            bypassing(bypass, txn, |txn| {
                ops::find_one_and_modify(txn, store, name, &filter, &update, &options)
            })
        })?;
        document.map(from_document).transpose()
    }
}

/// `find_one_and_delete`, run with `.run()`.
#[must_use = "an action does nothing until .run()"]
pub struct FindOneAndDelete<'a, T> {
    collection: &'a Collection<T>,
    filter: Document,
    sort: Option<Document>,
    projection: Option<Document>,
    collation: Option<Collation>,
    session: Option<&'a mut Transaction>,
}

impl<'a, T: Serialize + DeserializeOwned + Send + Sync + 'static> FindOneAndDelete<'a, T> {
    session_method!();
    collation_method!();

    /// Picks the first match in this order.
    pub fn sort(mut self, sort: Document) -> Self {
        self.sort = Some(sort);
        self
    }

    /// Shapes the returned document.
    pub fn projection(mut self, projection: Document) -> Self {
        self.projection = Some(projection);
        self
    }

    /// Runs the operation.
    pub fn run(self) -> Result<Option<T>> {
        let collation = self
            .collection
            .collation_or_default(self.collation.as_ref());
        let filter = parse_filter(&self.filter, &collation)?;
        let sort = parse_sort(self.sort.as_ref(), &collation)?;
        let projection = parse_projection(self.projection.as_ref())?;
        let name = &self.collection.name;
        let document = self.collection.write(self.session, |txn, store| {
            ops::find_one_and_delete(
                txn,
                store,
                name,
                &filter,
                sort.as_ref(),
                projection.as_ref(),
            )
        })?;
        document.map(from_document).transpose()
    }
}

/// `count_documents`, run with `.run()`.
#[must_use = "an action does nothing until .run()"]
pub struct CountDocuments<'a, T> {
    collection: &'a Collection<T>,
    filter: Document,
    skip: u64,
    limit: u64,
    collation: Option<Collation>,
    session: Option<&'a mut Transaction>,
}

impl<'a, T: Serialize + DeserializeOwned + Send + Sync + 'static> CountDocuments<'a, T> {
    session_method!();
    collation_method!();

    /// Skips this many matches.
    pub fn skip(mut self, skip: u64) -> Self {
        self.skip = skip;
        self
    }

    /// Counts at most this many (0: no limit).
    pub fn limit(mut self, limit: u64) -> Self {
        self.limit = limit;
        self
    }

    /// Counts (on a view, by running its pipeline and the filter).
    pub fn run(self) -> Result<u64> {
        let filter = parse_filter(
            &self.filter,
            &self
                .collection
                .collation_or_default(self.collation.as_ref()),
        )?;
        if let Some((source, mut stages)) = self.collection.view(self.session.as_deref())? {
            stages.push(bson::doc! { "$match": self.filter });
            if self.skip > 0 {
                stages.push(bson::doc! { "$skip": i64::try_from(self.skip).unwrap_or(i64::MAX) });
            }
            if self.limit > 0 {
                stages.push(bson::doc! { "$limit": i64::try_from(self.limit).unwrap_or(i64::MAX) });
            }
            stages.push(bson::doc! { "$count": "n" });
            let collation = self
                .collection
                .read_collation(self.session.as_deref(), self.collation.as_ref())?;
            let source = self.collection.database.collection::<Document>(&source);
            let mut action = source.aggregate(stages).collation_option(collation);
            if let Some(transaction) = self.session {
                action = action.session(transaction);
            }
            let counted = action.run()?.next().transpose()?;
            return Ok(counted.map_or(0, |counted| match counted.get("n") {
                Some(Bson::Int32(n)) => u64::try_from(*n).unwrap_or(0),
                Some(Bson::Int64(n)) => u64::try_from(*n).unwrap_or(0),
                _ => 0,
            }));
        }
        let name = &self.collection.name;
        self.collection.read(self.session.as_deref(), |reader| {
            ops::count(reader, name, &filter, self.skip, self.limit)
        })
    }
}

/// `distinct`, run with `.run()`.
#[must_use = "an action does nothing until .run()"]
pub struct Distinct<'a, T> {
    collection: &'a Collection<T>,
    field: String,
    filter: Document,
    collation: Option<Collation>,
    stored: bool,
    session: Option<&'a mut Transaction>,
}

impl<'a, T: Serialize + DeserializeOwned + Send + Sync + 'static> Distinct<'a, T> {
    session_method!();
    collation_method!();

    /// Reads the values of the stored layout (see [`Find::stored`]): the stored documents
    /// matched and read as they are.
    pub fn stored(mut self, stored: bool) -> Self {
        self.stored = stored;
        self
    }

    /// The distinct values (on a view, of the documents its pipeline gives).
    pub fn run(self) -> Result<Vec<Bson>> {
        let filter = parse_filter(
            &self.filter,
            &self
                .collection
                .collation_or_default(self.collation.as_ref()),
        )?;
        if let Some((source, mut stages)) = self.collection.view(self.session.as_deref())? {
            let path = FieldPath::parse(&self.field).map_err(Error::argument)?;
            stages.push(bson::doc! { "$match": self.filter });
            let collation = self
                .collection
                .read_collation(self.session.as_deref(), self.collation.as_ref())?;
            let source = self.collection.database.collection::<Document>(&source);
            let mut action = source.aggregate(stages).collation_option(collation);
            if let Some(transaction) = self.session {
                action = action.session(transaction);
            }
            let mut values = ValueSet::new(
                &self
                    .collection
                    .collation_or_default(self.collation.as_ref()),
            );
            for document in action.run()? {
                values.add_distinct_values(&document?, &path);
            }
            return Ok(values.into_vec());
        }
        let name = &self.collection.name;
        self.collection.read(self.session.as_deref(), |reader| {
            ops::distinct(reader, name, &self.field, &filter, self.stored)
        })
    }
}

/// `create_index`, run with `.run()`.
#[must_use = "an action does nothing until .run()"]
pub struct CreateIndex<'a, T> {
    collection: &'a Collection<T>,
    model: IndexModel,
    session: Option<&'a mut Transaction>,
}

impl<'a, T: Serialize + DeserializeOwned + Send + Sync + 'static> CreateIndex<'a, T> {
    session_method!();

    /// Creates the index.
    pub fn run(self) -> Result<CreateIndexResult> {
        let options = self.model.options.clone().unwrap_or_default();
        let name = &self.collection.name;
        let keys = &self.model.keys;
        let settings = index_settings(name, keys, &options)?;
        let ttl = settings.expire_after_seconds.is_some();
        let index_name = self.collection.write(self.session, |txn, store| {
            ops::create_index(
                txn,
                store,
                name,
                keys,
                options.unique.unwrap_or(false),
                options.name.as_deref(),
                settings,
            )
        })?;
        if ttl {
            self.collection.database.start_ttl_reaper();
        }
        Ok(CreateIndexResult { index_name })
    }
}

/// `create_indexes`, run with `.run()`.
#[must_use = "an action does nothing until .run()"]
pub struct CreateIndexes<'a, T> {
    collection: &'a Collection<T>,
    models: Vec<IndexModel>,
    session: Option<&'a mut Transaction>,
}

impl<'a, T: Serialize + DeserializeOwned + Send + Sync + 'static> CreateIndexes<'a, T> {
    session_method!();

    /// Creates the indexes; returns their names in the order given.
    pub fn run(self) -> Result<Vec<String>> {
        let name = &self.collection.name;
        let mut prepared = Vec::with_capacity(self.models.len());
        for model in &self.models {
            let options = model.options.clone().unwrap_or_default();
            let settings = index_settings(name, &model.keys, &options)?;
            prepared.push((model.keys.clone(), options, settings));
        }
        let ttl = prepared
            .iter()
            .any(|(_, _, settings)| settings.expire_after_seconds.is_some());
        let names = self.collection.write(self.session, |txn, store| {
            prepared
                .into_iter()
                .map(|(keys, options, settings)| {
                    ops::create_index(
                        txn,
                        store,
                        name,
                        &keys,
                        options.unique.unwrap_or(false),
                        options.name.as_deref(),
                        settings,
                    )
                })
                .collect::<Result<Vec<String>>>()
        })?;
        if ttl {
            self.collection.database.start_ttl_reaper();
        }
        Ok(names)
    }
}

/// `drop_indexes`, run with `.run()`.
#[must_use = "an action does nothing until .run()"]
pub struct DropIndexes<'a, T> {
    collection: &'a Collection<T>,
    session: Option<&'a mut Transaction>,
}

impl<'a, T: Serialize + DeserializeOwned + Send + Sync + 'static> DropIndexes<'a, T> {
    session_method!();

    /// Drops the indexes (nothing happens if the collection does not exist).
    pub fn run(self) -> Result<()> {
        let collection = &self.collection.name;
        self.collection.write(self.session, |txn, _| {
            let names: Vec<String> = txn
                .catalog_arc()
                .collections
                .get(collection.as_str())
                .map(|meta| {
                    meta.indexes
                        .iter()
                        .map(|index| index.name.clone())
                        .collect()
                })
                .unwrap_or_default();
            for index in names {
                storage::drop_index(txn, collection, &index)?;
            }
            Ok(())
        })
    }
}

/// The catalog's form of index options (the partial filter parsed, a text index's weights
/// and languages read, a geospatial index's options checked).
fn index_settings(
    collection: &str,
    keys: &Document,
    options: &IndexOptions,
) -> Result<IndexSettings> {
    let text = if crate::catalog::is_text_keys(keys) {
        Some(Arc::new(crate::catalog::text_index(
            collection,
            keys,
            options.weights.as_ref(),
            options.default_language.as_deref(),
            options.language_override.as_deref(),
            options.text_index_version,
        )?))
    } else {
        let text_option = [
            ("weights", options.weights.is_some()),
            ("default_language", options.default_language.is_some()),
            ("language_override", options.language_override.is_some()),
            ("textIndexVersion", options.text_index_version.is_some()),
        ]
        .into_iter()
        .find(|(_, given)| *given);
        if let Some((option, _)) = text_option {
            return Err(Error::invalid_index(
                collection,
                format!("'{option}' only applies to text indexes"),
            ));
        }
        None
    };
    let partial = options
        .partial_filter_expression
        .as_ref()
        .map(|spec| ParsedFilter::parse(collection, "partialFilterExpression", spec))
        .transpose()?;
    let expire_after_seconds = options
        .expire_after
        .map(|duration| i64::try_from(duration.as_secs()).unwrap_or(i64::MAX));
    let mut echoed = Document::new();
    if let Some(background) = options.background {
        echoed.insert("background", background);
    }
    Ok(IndexSettings {
        sparse: options.sparse.unwrap_or(false),
        partial,
        hidden: options.hidden.unwrap_or(false),
        expire_after_seconds,
        echoed,
        text,
        geo: GeoIndex::from_spec(collection, keys, options.geo.as_ref())?,
        collation: options.collation.clone(),
    })
}

/// `drop_index`, run with `.run()`.
#[must_use = "an action does nothing until .run()"]
pub struct DropIndex<'a, T> {
    collection: &'a Collection<T>,
    name: String,
    session: Option<&'a mut Transaction>,
}

impl<'a, T: Serialize + DeserializeOwned + Send + Sync + 'static> DropIndex<'a, T> {
    session_method!();

    /// Drops the index.
    pub fn run(self) -> Result<()> {
        let collection = &self.collection.name;
        let index = &self.name;
        self.collection.write(self.session, |txn, _| {
            storage::drop_index(txn, collection, index)
        })
    }
}

/// `drop` (the collection), run with `.run()`.
#[must_use = "an action does nothing until .run()"]
pub struct DropCollection<'a, T> {
    collection: &'a Collection<T>,
    session: Option<&'a mut Transaction>,
}

impl<'a, T: Serialize + DeserializeOwned + Send + Sync + 'static> DropCollection<'a, T> {
    session_method!();

    /// Drops the collection (or the view, and only the view).
    pub fn run(self) -> Result<()> {
        let name = &self.collection.name;
        self.collection.write_catalog(self.session, |txn, store| {
            ops::drop_collection(txn, store, name).map(drop)
        })
    }
}

/// `rename`, run with `.run()`.
///
/// Only the catalog changes: the documents and index entries stay where they are and keep
/// the collection's id (a change stream's `collectionUUID`), so a rename costs the same at
/// any size, and a crash leaves the collection under its old name or its new one, never
/// between. Streams see one `rename` event, nothing for the side collections.
///
/// A collection with pattern policies keeps them: each is declared on the new name, with
/// its options, its link field and its migration progress (an unfinished migration, which
/// only a crash or an error leaves, resumes on the new name: progress is kept by `_id`,
/// which a rename does not change). Its side collection keeps its own name, since the
/// policy names it explicitly and it is a collection clients can read, and its documents
/// keep their links (main `_id`s) and indexes, so nothing in it is rewritten;
/// [`RenameCollection::side_collection`] gives it another name in the same commit.
#[must_use = "an action does nothing until .run()"]
pub struct RenameCollection<'a, T> {
    collection: &'a Collection<T>,
    to: String,
    drop_target: bool,
    sides: Vec<(String, String)>,
    session: Option<&'a mut Transaction>,
}

impl<'a, T: Serialize + DeserializeOwned + Send + Sync + 'static> RenameCollection<'a, T> {
    session_method!();

    /// Drops an existing target first (MongoDB's `dropTarget`), as [`Collection::drop`]
    /// drops it: its policies, and the side collections they created, go with it. Without
    /// it an existing target is refused.
    pub fn drop_target(mut self, drop_target: bool) -> Self {
        self.drop_target = drop_target;
        self
    }

    /// Renames `side`, the side collection of one of the collection's policies, to `to` in
    /// the same commit (the policy then names it so).
    pub fn side_collection(mut self, side: &str, to: &str) -> Self {
        self.sides.push((side.to_string(), to.to_string()));
        self
    }

    /// Renames the collection.
    ///
    /// # Errors
    /// [`ErrorKind::CollectionNotFound`](crate::ErrorKind::CollectionNotFound) (26) when it
    /// does not exist; [`ErrorKind::CollectionExists`](crate::ErrorKind::CollectionExists)
    /// (48) when the target exists (or is a view) and `drop_target` is not set, or is the
    /// collection itself; [`ErrorKind::NotSupportedOnView`](crate::ErrorKind::NotSupportedOnView)
    /// for a view; 115 for a time series collection;
    /// [`ErrorKind::Pattern`](crate::ErrorKind::Pattern), naming the policy, for a side
    /// collection, a target that is a side collection, or a new side collection name that
    /// exists; [`ErrorKind::InvalidOptions`](crate::ErrorKind::InvalidOptions) for a
    /// [`RenameCollection::side_collection`] that names no side collection of the collection.
    pub fn run(self) -> Result<()> {
        let from = &self.collection.name;
        let (to, drop_target, sides) = (&self.to, self.drop_target, &self.sides);
        self.collection.write_catalog(self.session, |txn, store| {
            ops::rename_collection(txn, store, from, to, drop_target, sides)
        })
    }
}

/// `estimated_document_count`, run with `.run()`.
#[must_use = "an action does nothing until .run()"]
pub struct EstimatedDocumentCount<'a, T> {
    collection: &'a Collection<T>,
}

impl<T: Serialize + DeserializeOwned + Send + Sync + 'static> EstimatedDocumentCount<'_, T> {
    /// The count.
    pub fn run(self) -> Result<u64> {
        let collection = self.collection;
        if collection.view(None)?.is_some() {
            return collection.count_documents(Document::new()).run();
        }
        collection.read(None, |reader| {
            match reader.catalog().collections.get(&collection.name) {
                Some(meta) => Ok(reader.count(meta.docs)? as u64),
                None => Ok(0),
            }
        })
    }
}

/// `list_indexes`, run with `.run()`.
#[must_use = "an action does nothing until .run()"]
pub struct ListIndexes<'a, T> {
    collection: &'a Collection<T>,
}

impl<T: Serialize + DeserializeOwned + Send + Sync + 'static> ListIndexes<'_, T> {
    /// A cursor over the indexes, read from one snapshot.
    pub fn run(self) -> Result<Cursor<IndexModel>> {
        let described: Vec<Result<Document>> = self
            .collection
            .index_models()?
            .iter()
            .map(|model| Ok(model.to_document()))
            .collect();
        Ok(Cursor::documents(Box::new(described.into_iter())))
    }
}

/// `list_index_names`, run with `.run()`.
#[must_use = "an action does nothing until .run()"]
pub struct ListIndexNames<'a, T> {
    collection: &'a Collection<T>,
}

impl<T: Serialize + DeserializeOwned + Send + Sync + 'static> ListIndexNames<'_, T> {
    /// The names, `_id_` first.
    pub fn run(self) -> Result<Vec<String>> {
        Ok(self
            .collection
            .index_models()?
            .into_iter()
            .filter_map(|model| model.options.and_then(|options| options.name))
            .collect())
    }
}
