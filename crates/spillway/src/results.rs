//! Result and option types with the field names of the official `mongodb` driver.
//!
//! This module must never hold behaviour beyond construction helpers: operations live in
//! `collection` and `ops`.

use std::collections::HashMap;

use bson::{Bson, Document};
use serde::Serialize;

/// What `insert_one` did.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct InsertOneResult {
    /// The `_id` of the inserted document (generated when it had none).
    pub inserted_id: Bson,
}

/// What `insert_many` did.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct InsertManyResult {
    /// The `_id` of each inserted document, by its position in the input.
    pub inserted_ids: HashMap<usize, Bson>,
}

/// What an update or replace did.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct UpdateResult {
    /// Documents the filter matched.
    pub matched_count: u64,
    /// Documents actually changed.
    pub modified_count: u64,
    /// The `_id` of the inserted document, when an upsert inserted one.
    pub upserted_id: Option<Bson>,
}

/// What a delete did.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct DeleteResult {
    /// Documents deleted.
    pub deleted_count: u64,
}

/// What `create_index` did.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct CreateIndexResult {
    /// The index's name (given, or MongoDB's default such as `a_1_b_-1`).
    pub index_name: String,
}

/// What an update changes: update operators (or, for a replace, a whole document), or an
/// aggregation pipeline of `$set`/`$unset`/`$project`/`$replaceWith`-like stages, as in the
/// driver (`update_one(filter, doc! { "$set": ... })` or `update_one(filter, vec![...])`).
#[derive(Debug, Clone, PartialEq)]
pub enum UpdateModifications {
    /// Operators such as `{ $set: { a: 1 } }`.
    Document(Document),
    /// Pipeline stages such as `[{ $set: { total: { $add: ["$a", "$b"] } } }]`.
    Pipeline(Vec<Document>),
}

impl From<Document> for UpdateModifications {
    fn from(document: Document) -> Self {
        UpdateModifications::Document(document)
    }
}

impl From<Vec<Document>> for UpdateModifications {
    fn from(stages: Vec<Document>) -> Self {
        UpdateModifications::Pipeline(stages)
    }
}

/// Which version of the document `find_one_and_update` / `_replace` return.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum ReturnDocument {
    /// The document as it was before the write (MongoDB's default).
    #[default]
    Before,
    /// The document as the write left it.
    After,
}

/// An index to create, or one `list_indexes` describes.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct IndexModel {
    /// The key pattern: field paths to 1 (ascending) or -1 (descending).
    pub keys: Document,
    /// Options; `None` means the defaults.
    pub options: Option<IndexOptions>,
}

impl IndexModel {
    /// A builder, as in the driver: `IndexModel::builder().keys(doc! {..}).build()`.
    pub fn builder() -> IndexModelBuilder {
        IndexModelBuilder::default()
    }
}

/// Builds an [`IndexModel`].
#[derive(Debug, Clone, Default)]
pub struct IndexModelBuilder {
    model: IndexModel,
}

impl IndexModelBuilder {
    /// Sets the key pattern.
    pub fn keys(mut self, keys: Document) -> Self {
        self.model.keys = keys;
        self
    }

    /// Sets the options.
    pub fn options(mut self, options: impl Into<Option<IndexOptions>>) -> Self {
        self.model.options = options.into();
        self
    }

    /// The model.
    pub fn build(self) -> IndexModel {
        self.model
    }
}

/// Options of an index, with the driver's names.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct IndexOptions {
    /// Refuse two documents with the same key (a missing field counts as `null`, unless the
    /// index is sparse or partial and the document gets no entry).
    pub unique: Option<bool>,
    /// The index name; MongoDB's default (`a_1_b_-1`) when `None`.
    pub name: Option<String>,
    /// Index only documents that have at least one of the indexed fields.
    pub sparse: Option<bool>,
    /// Index only documents matching this filter; the planner uses the index only for
    /// queries whose filter implies it.
    pub partial_filter_expression: Option<Document>,
    /// Keep the index up to date but never use it to answer queries.
    pub hidden: Option<bool>,
    /// TTL (single-field indexes on dates): documents whose indexed date (the earliest, for
    /// an array) is older than this are deleted by the background reaper
    /// (`Database::remove_expired`). Whole seconds.
    pub expire_after: Option<std::time::Duration>,
    /// Accepted and echoed by `list_indexes`, without effect (MongoDB 4.2+ ignores it too).
    pub background: Option<bool>,
    /// A text index's field weights (`{ title: 10, body: 1 }`; 1 for a field not listed).
    pub weights: Option<Document>,
    /// A text index's language for documents that name none (`english`, `none`).
    pub default_language: Option<String>,
    /// The field a document names its own language in (`language` by default).
    pub language_override: Option<String>,
    /// A text index's version: 3, the only one Spillway builds.
    pub text_index_version: Option<i32>,
    /// The options of a `2d` or `2dsphere` index (`list_indexes` gives `2dsphere` indexes
    /// their `2dsphereIndexVersion`).
    pub geo: Option<GeoIndexOptions>,
}

/// The options of a geospatial index, with MongoDB's meanings.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct GeoIndexOptions {
    /// `2d`: the lowest coordinate accepted on both axes (default -180).
    pub min: Option<f64>,
    /// `2d`: the highest coordinate accepted on both axes (default 180).
    pub max: Option<f64>,
    /// `2d`: the precision of the index's cells, 1 to 32 bits per coordinate (default 26).
    pub bits: Option<u32>,
    /// `2dsphere`: `2dsphereIndexVersion`; Spillway implements version 3 only.
    pub sphere_version: Option<i32>,
}

impl IndexOptions {
    /// A builder, as in the driver.
    pub fn builder() -> IndexOptionsBuilder {
        IndexOptionsBuilder::default()
    }
}

/// Builds [`IndexOptions`].
#[derive(Debug, Clone, Default)]
pub struct IndexOptionsBuilder {
    options: IndexOptions,
}

impl IndexOptionsBuilder {
    /// Sets `unique`.
    pub fn unique(mut self, unique: bool) -> Self {
        self.options.unique = Some(unique);
        self
    }

    /// Sets the name.
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.options.name = Some(name.into());
        self
    }

    /// Sets `sparse`.
    pub fn sparse(mut self, sparse: bool) -> Self {
        self.options.sparse = Some(sparse);
        self
    }

    /// Sets the partial filter expression.
    pub fn partial_filter_expression(mut self, filter: Document) -> Self {
        self.options.partial_filter_expression = Some(filter);
        self
    }

    /// Sets `hidden`.
    pub fn hidden(mut self, hidden: bool) -> Self {
        self.options.hidden = Some(hidden);
        self
    }

    /// Sets the TTL.
    pub fn expire_after(mut self, expire_after: std::time::Duration) -> Self {
        self.options.expire_after = Some(expire_after);
        self
    }

    /// Sets the options of a `2d` or `2dsphere` index.
    pub fn geo(mut self, geo: GeoIndexOptions) -> Self {
        self.options.geo = Some(geo);
        self
    }

    /// The options.
    pub fn build(self) -> IndexOptions {
        self.options
    }
}

/// Which index a query must use (the driver's `Hint`): `Keys(doc! { "a": 1 })`,
/// `Name("a_1".into())`, or `Keys(doc! { "$natural": 1 })` for a collection scan.
#[derive(Debug, Clone, PartialEq)]
pub enum Hint {
    /// The index with this key pattern (or `{ $natural: 1 | -1 }`).
    Keys(Document),
    /// The index with this name.
    Name(String),
}

/// What `explain` reports: the chosen plan, in MongoDB's shape, and what running it cost.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct Explain {
    /// The plan: nested stages (`SORT`, `FETCH`, `IXSCAN`, `IDHACK`, `COLLSCAN`, `EOF`) with
    /// the index name, key pattern, direction and bounds of an index scan.
    pub winning_plan: Document,
    /// Index entries (or `_id` lookups) examined.
    pub keys_examined: u64,
    /// Documents fetched and checked against the filter.
    pub docs_examined: u64,
    /// Documents returned (after skip and limit).
    pub n_returned: u64,
}
