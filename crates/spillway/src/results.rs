//! Result and option types with the field names of the official `mongodb` driver.
//!
//! This module must never hold behaviour beyond construction helpers: operations live in
//! `collection` and `ops`.

use std::collections::HashMap;

use bson::{Bson, DateTime, Document};
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

/// An index to create, or one `list_indexes` describes. It deserializes from the document
/// `listIndexes` returns (`{ v: 2, key: {...}, name: "...", unique: true, ... }`), as the
/// driver's does, which is how `list_indexes().run()`'s cursor reads it.
#[derive(Debug, Clone, Default, PartialEq, serde::Deserialize)]
#[serde(try_from = "Document")]
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

impl IndexModel {
    /// The index as MongoDB's `listIndexes` describes it: `{ v: 2, key, name }` and each
    /// option that is set, under MongoDB's names.
    pub fn to_document(&self) -> Document {
        let options = self.options.clone().unwrap_or_default();
        let mut described = bson::doc! {
            "v": 2,
            "key": self.keys.clone(),
            "name": options.name.unwrap_or_default(),
        };
        if options.unique == Some(true) {
            described.insert("unique", true);
        }
        if let Some(background) = options.background {
            described.insert("background", background);
        }
        if options.sparse == Some(true) {
            described.insert("sparse", true);
        }
        if let Some(partial) = options.partial_filter_expression {
            described.insert("partialFilterExpression", partial);
        }
        if options.hidden == Some(true) {
            described.insert("hidden", true);
        }
        if let Some(weights) = options.weights {
            described.insert("weights", weights);
        }
        if let Some(language) = options.default_language {
            described.insert("default_language", language);
        }
        if let Some(field) = options.language_override {
            described.insert("language_override", field);
        }
        if let Some(version) = options.text_index_version {
            described.insert("textIndexVersion", version);
        }
        if let Some(expire_after) = options.expire_after {
            described.insert(
                "expireAfterSeconds",
                i32::try_from(expire_after.as_secs()).unwrap_or(i32::MAX),
            );
        }
        if let Some(collation) = options.collation.filter(|collation| !collation.is_simple()) {
            described.insert("collation", collation.to_document());
        }
        if let Some(geo) = options.geo {
            if let Some(version) = geo.sphere_version {
                described.insert("2dsphereIndexVersion", version);
            }
            if let Some(bits) = geo.bits {
                described.insert("bits", bits as i32);
            }
            if let Some(min) = geo.min {
                described.insert("min", min);
            }
            if let Some(max) = geo.max {
                described.insert("max", max);
            }
        }
        described
    }
}

/// A whole number in any of BSON's number types.
fn whole_number(value: &Bson) -> Option<i64> {
    match value {
        Bson::Int32(n) => Some(i64::from(*n)),
        Bson::Int64(n) => Some(*n),
        Bson::Double(n) if n.fract() == 0.0 && n.abs() < 9.0e15 => Some(*n as i64),
        _ => None,
    }
}

impl TryFrom<Document> for IndexModel {
    type Error = String;

    /// Reads a `listIndexes` document (what [`IndexModel::to_document`] writes); fields it
    /// does not know (`v`, `ns`...) are ignored, as the driver ignores them.
    fn try_from(described: Document) -> Result<IndexModel, String> {
        let wrong =
            |field: &str, expected: &str| format!("the index field '{field}' must be {expected}");
        let keys = described
            .get_document("key")
            .map_err(|_| wrong("key", "a document"))?
            .clone();
        let text = |field: &str| -> Result<Option<String>, String> {
            match described.get(field) {
                None => Ok(None),
                Some(Bson::String(text)) => Ok(Some(text.clone())),
                Some(_) => Err(wrong(field, "a string")),
            }
        };
        let flag = |field: &str| -> Result<Option<bool>, String> {
            match described.get(field) {
                None => Ok(None),
                Some(Bson::Boolean(flag)) => Ok(Some(*flag)),
                Some(_) => Err(wrong(field, "true or false")),
            }
        };
        let document = |field: &str| -> Result<Option<Document>, String> {
            match described.get(field) {
                None => Ok(None),
                Some(Bson::Document(document)) => Ok(Some(document.clone())),
                Some(_) => Err(wrong(field, "a document")),
            }
        };
        let number = |field: &str| -> Result<Option<i64>, String> {
            described
                .get(field)
                .map(|value| whole_number(value).ok_or_else(|| wrong(field, "a whole number")))
                .transpose()
        };
        let real = |field: &str| -> Result<Option<f64>, String> {
            match described.get(field) {
                None => Ok(None),
                Some(Bson::Double(n)) => Ok(Some(*n)),
                Some(value) => whole_number(value)
                    .map(|n| Some(n as f64))
                    .ok_or_else(|| wrong(field, "a number")),
            }
        };
        let small = |field: &str| -> Result<Option<i32>, String> {
            number(field)?
                .map(|n| i32::try_from(n).map_err(|_| wrong(field, "a 32-bit number")))
                .transpose()
        };
        let expire_after = number("expireAfterSeconds")?
            .map(|seconds| {
                u64::try_from(seconds)
                    .map(std::time::Duration::from_secs)
                    .map_err(|_| wrong("expireAfterSeconds", "0 or more"))
            })
            .transpose()?;
        let geo = GeoIndexOptions {
            min: real("min")?,
            max: real("max")?,
            bits: small("bits")?
                .map(|bits| u32::try_from(bits).map_err(|_| wrong("bits", "positive")))
                .transpose()?,
            sphere_version: small("2dsphereIndexVersion")?,
        };
        let options = IndexOptions {
            unique: flag("unique")?.filter(|unique| *unique),
            name: text("name")?,
            sparse: flag("sparse")?.filter(|sparse| *sparse),
            partial_filter_expression: document("partialFilterExpression")?,
            hidden: flag("hidden")?.filter(|hidden| *hidden),
            expire_after,
            background: flag("background")?,
            weights: document("weights")?,
            default_language: text("default_language")?,
            language_override: text("language_override")?,
            text_index_version: small("textIndexVersion")?,
            geo: (geo != GeoIndexOptions::default()).then_some(geo),
            collation: document("collation")?
                .map(|spec| crate::Collation::parse(&spec).map_err(|error| error.to_string()))
                .transpose()?,
        };
        Ok(IndexModel {
            keys,
            options: (options != IndexOptions::default()).then_some(options),
        })
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
    /// How the index orders and compares strings (default: the collection's collation); a
    /// query uses a collated index for its strings only under the same collation.
    pub collation: Option<crate::Collation>,
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

    /// Sets the collation.
    pub fn collation(mut self, collation: crate::Collation) -> Self {
        self.options.collation = Some(collation);
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

/// One write of a bulk write, naming its collection.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum WriteModel {
    /// Insert a document.
    InsertOne {
        /// The collection.
        namespace: String,
        /// The document (an `_id` is generated if it has none).
        document: Document,
    },
    /// Update the first document matching `filter`.
    UpdateOne {
        /// The collection.
        namespace: String,
        /// Which document.
        filter: Document,
        /// Update operators or a pipeline.
        update: UpdateModifications,
        /// Insert when nothing matches.
        upsert: bool,
        /// `arrayFilters` for `$[<identifier>]`.
        array_filters: Option<Vec<Document>>,
    },
    /// Update every document matching `filter`.
    UpdateMany {
        /// The collection.
        namespace: String,
        /// Which documents.
        filter: Document,
        /// Update operators or a pipeline.
        update: UpdateModifications,
        /// Insert when nothing matches.
        upsert: bool,
        /// `arrayFilters` for `$[<identifier>]`.
        array_filters: Option<Vec<Document>>,
    },
    /// Replace the first document matching `filter` (its `_id` is kept).
    ReplaceOne {
        /// The collection.
        namespace: String,
        /// Which document.
        filter: Document,
        /// The new document.
        replacement: Document,
        /// Insert when nothing matches.
        upsert: bool,
    },
    /// Delete the first document matching `filter`.
    DeleteOne {
        /// The collection.
        namespace: String,
        /// Which document.
        filter: Document,
    },
    /// Delete every document matching `filter`.
    DeleteMany {
        /// The collection.
        namespace: String,
        /// Which documents.
        filter: Document,
    },
}

impl WriteModel {
    /// The same update or replacement, inserting when nothing matches. Insert and delete
    /// models have no such option: they are returned unchanged.
    #[must_use]
    pub fn upsert(mut self, upsert: bool) -> WriteModel {
        match &mut self {
            WriteModel::UpdateOne { upsert: set, .. }
            | WriteModel::UpdateMany { upsert: set, .. }
            | WriteModel::ReplaceOne { upsert: set, .. } => *set = upsert,
            WriteModel::InsertOne { .. }
            | WriteModel::DeleteOne { .. }
            | WriteModel::DeleteMany { .. } => {}
        }
        self
    }

    /// The collection the model writes to.
    pub fn namespace(&self) -> &str {
        match self {
            WriteModel::InsertOne { namespace, .. }
            | WriteModel::UpdateOne { namespace, .. }
            | WriteModel::UpdateMany { namespace, .. }
            | WriteModel::ReplaceOne { namespace, .. }
            | WriteModel::DeleteOne { namespace, .. }
            | WriteModel::DeleteMany { namespace, .. } => namespace,
        }
    }
}

/// What a bulk write did (the driver's summary result, with the `_id`s inserted and
/// upserted by operation index).
#[derive(Debug, Clone, Default, PartialEq)]
#[non_exhaustive]
pub struct BulkWriteResult {
    /// Documents inserted by `InsertOne` models.
    pub inserted_count: u64,
    /// Documents the update and replace models matched.
    pub matched_count: u64,
    /// Documents they changed.
    pub modified_count: u64,
    /// Documents they inserted (upserts).
    pub upserted_count: u64,
    /// Documents deleted.
    pub deleted_count: u64,
    /// The `_id` each `InsertOne` model inserted, by operation index.
    pub inserted_ids: HashMap<usize, Bson>,
    /// The `_id` each upsert inserted, by operation index.
    pub upserted_ids: HashMap<usize, Bson>,
}

/// A written document its collection's validator did not accept, let through because the
/// collection's `validationAction` is `warn`: what MongoDB logs as "Document would fail
/// validation" (log id 20294), kept by the database (`Database::validation_warnings`).
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct ValidationWarning {
    /// When the write was committed.
    pub at: DateTime,
    /// The collection written (its stored name).
    pub collection: String,
    /// The `_id` of the document written.
    pub document_id: Bson,
    /// Why it fails, as an error's `errInfo.details` would say (`operatorName`,
    /// `schemaRulesNotSatisfied`...).
    pub details: Option<Document>,
}
