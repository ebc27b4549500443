//! Collection options and index changes after creation: validators
//! ([`Database::create_collection_with`], [`Database::set_collection_options`]), hidden and
//! TTL settings of an existing index ([`Database::modify_index`], MongoDB's `collMod`), and
//! the TTL reaper ([`Database::remove_expired`] and its background thread).
//!
//! Validators are checked by `storage::write_documents`, the one write path; the reaper
//! deletes through `Collection::delete_many`, so pattern policies and every other index stay
//! in step. This module must never write documents or index entries itself.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::thread;
use std::time::Duration;

use bson::{Bson, DateTime, Document, doc};

use spillway_doc::collation::Collation;

use crate::catalog::timeseries::{Timeseries, TimeseriesOptions};
use crate::catalog::view::ViewDefinition;
use crate::catalog::{
    BUCKETS_PREFIX, CappedLimits, ParsedFilter, Validation, ValidationAction, ValidationLevel,
    validate_collection_name,
};
use crate::database::Database;
use crate::error::{Error, ErrorKind, Result};
use crate::results::IndexOptions;
use crate::storage;
use crate::timeseries;
use crate::txn::Reader;
use crate::views;

/// How often the reaper thread checks that its database is still open.
const REAPER_TICK: Duration = Duration::from_millis(100);

/// Options of a collection: its validator and how it applies.
#[derive(Debug, Clone, Default, PartialEq)]
#[non_exhaustive]
pub struct CollectionOptions {
    /// A query-language filter every inserted or updated document must match, query
    /// operators or a `$jsonSchema` (`{ $jsonSchema: { bsonType: "object", required: [...] } }`).
    /// For [`Database::set_collection_options`], an empty document removes the validator.
    pub validator: Option<Document>,
    /// Which writes are checked (default: strict).
    pub validation_level: Option<ValidationLevel>,
    /// What a failed check does (default: error).
    pub validation_action: Option<ValidationAction>,
    /// A capped collection: past `size` bytes or `max` documents, each insert removes the
    /// oldest documents (natural order, which is `_id` order). Set at creation only.
    pub capped: Option<bool>,
    /// A capped collection's most document bytes (required with `capped`).
    pub size: Option<u64>,
    /// A capped collection's most documents.
    pub max: Option<u64>,
    /// MongoDB's clustered collection (`{ key: { _id: 1 }, unique: true, name? }`): what every
    /// Spillway collection is, since documents are stored by `_id`; kept to be listed, its
    /// name shown as the `_id` index's.
    pub clustered_index: Option<Document>,
    /// Accepted and listed without effect: change streams are not supported.
    pub change_stream_pre_and_post_images: Option<Document>,
    /// A read-only view on this collection or view (MongoDB's `viewOn`): reads run
    /// [`CollectionOptions::pipeline`] on its documents, writes are refused
    /// ([`ErrorKind::NotSupportedOnView`]). No other option goes with it. For
    /// [`Database::set_collection_options`] on a view, a new definition.
    pub view_on: Option<String>,
    /// A view's pipeline (default: none, every document as it is); only with `view_on`,
    /// except to redefine a view.
    pub pipeline: Option<Vec<Document>>,
    /// A time series collection (MongoDB's `timeseries`): measurements stored in buckets of
    /// `system.buckets.<name>`, read as documents; see [`TimeseriesOptions`].
    pub timeseries: Option<TimeseriesOptions>,
    /// A time series collection's TTL: a bucket is deleted once its newest measurement is
    /// older than this many seconds (time series only).
    pub expire_after_seconds: Option<i64>,
    /// The stored name of a time series' buckets collection (default
    /// `system.buckets.<name>`; the command layer names it within the client's database).
    pub(crate) buckets_collection: Option<String>,
    /// The collection's default collation (MongoDB's `collation`): operations that give none
    /// compare strings by it, and indexes created without one order by it. Set at creation
    /// only; the simple collation is no default. Not with a time series. On a view, the
    /// collation every read of it runs under (simple if none): a read that gives another is
    /// refused, and views that read each other must have the same one.
    pub collation: Option<Collation>,
}

impl CollectionOptions {
    /// The same options with a validator.
    #[must_use]
    pub fn validator(mut self, validator: Document) -> Self {
        self.validator = Some(validator);
        self
    }

    /// The same options with a validation level.
    #[must_use]
    pub fn validation_level(mut self, level: ValidationLevel) -> Self {
        self.validation_level = Some(level);
        self
    }

    /// The same options for a capped collection of at most `size` bytes and, if given, `max`
    /// documents.
    #[must_use]
    pub fn capped(mut self, size: u64, max: Option<u64>) -> Self {
        self.capped = Some(true);
        self.size = Some(size);
        self.max = max;
        self
    }

    /// The same options with a validation action.
    #[must_use]
    pub fn validation_action(mut self, action: ValidationAction) -> Self {
        self.validation_action = Some(action);
        self
    }

    /// Options of a read-only view of `view_on` through `pipeline`.
    #[must_use]
    pub fn view(view_on: impl Into<String>, pipeline: Vec<Document>) -> Self {
        CollectionOptions {
            view_on: Some(view_on.into()),
            pipeline: Some(pipeline),
            ..CollectionOptions::default()
        }
    }

    /// Whether options other than a view's definition are set.
    fn has_collection_options(&self) -> bool {
        let CollectionOptions {
            validator,
            validation_level,
            validation_action,
            capped,
            size,
            max,
            clustered_index,
            change_stream_pre_and_post_images,
            view_on: _,
            pipeline: _,
            timeseries,
            expire_after_seconds,
            buckets_collection: _,
            collation,
        } = self;
        collation.is_some()
            || timeseries.is_some()
            || expire_after_seconds.is_some()
            || validator.is_some()
            || validation_level.is_some()
            || validation_action.is_some()
            || capped.is_some()
            || size.is_some()
            || max.is_some()
            || clustered_index.is_some()
            || change_stream_pre_and_post_images.is_some()
    }
}

/// A change to an existing index (MongoDB's `collMod: { index: ... }`); `None` keeps the
/// current value.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct IndexModification {
    /// Hide the index from the planner (`true`) or make it usable again (`false`).
    pub hidden: Option<bool>,
    /// A new TTL for a TTL index (whole seconds).
    pub expire_after: Option<Duration>,
}

impl IndexModification {
    /// The same change, also hiding or unhiding the index.
    #[must_use]
    pub fn hidden(mut self, hidden: bool) -> Self {
        self.hidden = Some(hidden);
        self
    }

    /// The same change, also setting the TTL.
    #[must_use]
    pub fn expire_after(mut self, expire_after: Duration) -> Self {
        self.expire_after = Some(expire_after);
        self
    }
}

/// A `clusteredIndex` option as MongoDB lists it (`v: 2`, `name` defaulting to `_id_`), if
/// it is the one Spillway's storage is: `key: { _id: 1 }`, `unique: true`.
fn clustered_index(collection: &str, given: &Document) -> Result<Document> {
    let bad = |message: &str| {
        Err(Error::invalid_options(
            collection,
            format!("clusteredIndex: {message}"),
        ))
    };
    if let Some(field) = given
        .keys()
        .find(|field| !["key", "unique", "name", "v"].contains(&field.as_str()))
    {
        return bad(&format!("unknown field '{field}'"));
    }
    let key_is_id = given.get_document("key").is_ok_and(|key| {
        let direction = key.get("_id");
        key.len() == 1
            && (matches!(direction, Some(Bson::Int32(1) | Bson::Int64(1)))
                || direction == Some(&Bson::Double(1.0)))
    });
    if !key_is_id {
        return bad("the key must be { _id: 1 }");
    }
    if !given.get_bool("unique").unwrap_or(false) {
        return bad("'unique' must be true");
    }
    let name = given
        .get_str("name")
        .unwrap_or(crate::catalog::ID_INDEX_NAME);
    Ok(doc! { "key": { "_id": 1 }, "unique": true, "name": name, "v": 2 })
}

/// Builds a collection's validation from options; `base` is the current one (`collMod`).
fn validation_from(
    collection: &str,
    options: &CollectionOptions,
    base: &Validation,
) -> Result<Validation> {
    let mut validation = base.clone();
    if let Some(spec) = &options.validator {
        validation.validator = if spec.is_empty() {
            None
        } else {
            Some(ParsedFilter::parse_validator(collection, spec)?)
        };
    }
    if let Some(level) = options.validation_level {
        validation.level = level;
        validation.explicit = true;
    }
    if let Some(action) = options.validation_action {
        validation.action = action;
        validation.explicit = true;
    }
    Ok(validation)
}

impl Database {
    /// Creates an empty collection with options, or a read-only view
    /// ([`CollectionOptions::view`]); fails with [`ErrorKind::CollectionExists`] if the name
    /// exists. A view's definition is checked as MongoDB checks it: the pipeline parses and
    /// writes nothing, and no cycle of views or chain deeper than 20 results
    /// ([`ErrorKind::InvalidView`]).
    pub fn create_collection_with(&self, name: &str, options: &CollectionOptions) -> Result<()> {
        if let Some(view_on) = &options.view_on {
            return self.create_view(name, view_on, options);
        }
        if options.pipeline.is_some() {
            return Err(Error::invalid_options(
                name,
                "'pipeline' requires 'viewOn' to also be specified",
            ));
        }
        if let Some(timeseries) = &options.timeseries {
            return self.create_timeseries(name, timeseries, options);
        }
        if options.expire_after_seconds.is_some() {
            return Err(Error::invalid_options(
                name,
                "'expireAfterSeconds' applies to time series collections (give 'timeseries' too); a TTL on a collection is an index option",
            ));
        }
        let validation = validation_from(name, options, &Validation::default())?;
        let capped = match (options.capped, options.size) {
            (Some(true), Some(size)) if size > 0 => Some(CappedLimits {
                size,
                max: options.max.filter(|max| *max > 0),
            }),
            (Some(true), _) => {
                return Err(Error::invalid_options(
                    name,
                    "a capped collection needs a size (in bytes) greater than 0",
                ));
            }
            _ => None,
        };
        let mut echoed = Document::new();
        if let Some(clustered) = &options.clustered_index {
            echoed.insert("clusteredIndex", clustered_index(name, clustered)?);
        }
        if let Some(images) = &options.change_stream_pre_and_post_images {
            echoed.insert("changeStreamPreAndPostImages", images.clone());
        }
        self.inner.write(|txn, store| {
            if txn.catalog().collections.contains_key(name) {
                return Err(Error::new(ErrorKind::CollectionExists {
                    collection: name.to_string(),
                }));
            }
            storage::ensure_collection(txn, store, name)?;
            let meta = txn
                .catalog_mut()
                .collections
                .get_mut(name)
                .expect("just created");
            meta.validation = validation;
            meta.capped = capped;
            meta.echoed = echoed;
            meta.collation = options.collation.clone().unwrap_or_default();
            txn.collection_changed(name);
            Ok(())
        })
    }

    /// Creates the time series collection `name` and its buckets collection.
    fn create_timeseries(
        &self,
        name: &str,
        timeseries: &TimeseriesOptions,
        options: &CollectionOptions,
    ) -> Result<()> {
        validate_collection_name(name)?;
        let only_timeseries = CollectionOptions {
            timeseries: None,
            expire_after_seconds: None,
            buckets_collection: None,
            ..options.clone()
        };
        if only_timeseries.has_collection_options() {
            return Err(Error::invalid_options(
                name,
                "a time series collection takes only 'timeseries' and 'expireAfterSeconds' (no validator, capped or clustered options)",
            ));
        }
        let buckets = options
            .buckets_collection
            .clone()
            .unwrap_or_else(|| format!("{BUCKETS_PREFIX}{name}"));
        validate_collection_name(&buckets)?;
        let layout = Timeseries::new(name, timeseries, options.expire_after_seconds, buckets)?;
        let ttl = layout.expire_after_seconds.is_some();
        self.inner
            .write(|txn, store| timeseries::create(txn, store, name, layout))?;
        if ttl {
            self.start_ttl_reaper();
        }
        Ok(())
    }

    fn create_view(&self, name: &str, view_on: &str, options: &CollectionOptions) -> Result<()> {
        validate_collection_name(name)?;
        let without_collation = CollectionOptions {
            collation: None,
            ..options.clone()
        };
        if without_collation.has_collection_options() {
            return Err(Error::invalid_options(
                name,
                "a view takes only 'viewOn', 'pipeline' and 'collation' (no validator, capped or clustered options)",
            ));
        }
        let collation = options.collation.clone().unwrap_or_default();
        let definition = ViewDefinition {
            view_on: view_on.to_string(),
            pipeline: options.pipeline.clone().unwrap_or_default(),
        };
        self.inner.write(|txn, store| {
            if txn.catalog().collections.contains_key(name) {
                return Err(Error::new(ErrorKind::CollectionExists {
                    collection: name.to_string(),
                }));
            }
            views::check(txn.catalog(), name, &definition)?;
            views::check_collation(txn.catalog(), name, &definition, &collation)?;
            storage::ensure_collection(txn, store, name)?;
            let meta = txn
                .catalog_mut()
                .collections
                .get_mut(name)
                .expect("just created");
            meta.view = Some(definition);
            // A view's collation is its default as a collection's is (the catalog keeps it
            // the same way), but reads of it cannot override it (`views::read_collation`).
            meta.collation = collation;
            txn.collection_changed(name);
            Ok(())
        })
    }

    /// The options of collection `name` (`None` if it does not exist); level and action are
    /// `Some` only when given. A view's are its `view_on` and `pipeline`.
    pub fn collection_options(&self, name: &str) -> Result<Option<CollectionOptions>> {
        let state = self.inner.published();
        Ok(state.catalog.collections.get(name).map(|meta| {
            let validation = &meta.validation;
            CollectionOptions {
                validator: validation
                    .validator
                    .as_ref()
                    .map(|validator| validator.spec.clone()),
                validation_level: validation.explicit.then_some(validation.level),
                validation_action: validation.explicit.then_some(validation.action),
                capped: meta.capped.map(|_| true),
                size: meta.capped.map(|limits| limits.size),
                max: meta.capped.and_then(|limits| limits.max),
                clustered_index: meta.echoed.get_document("clusteredIndex").ok().cloned(),
                change_stream_pre_and_post_images: meta
                    .echoed
                    .get_document("changeStreamPreAndPostImages")
                    .ok()
                    .cloned(),
                view_on: meta.view.as_ref().map(|view| view.view_on.clone()),
                pipeline: meta.view.as_ref().map(|view| view.pipeline.clone()),
                timeseries: meta.timeseries.as_ref().map(Timeseries::options),
                expire_after_seconds: meta
                    .timeseries
                    .as_ref()
                    .and_then(|layout| layout.expire_after_seconds),
                buckets_collection: meta
                    .timeseries
                    .as_ref()
                    .map(|layout| layout.buckets.clone()),
                collation: (!meta.collation.is_simple()).then(|| meta.collation.clone()),
            }
        }))
    }

    /// Changes the options of an existing collection (the fields given; an empty validator
    /// removes it). Existing documents are not checked, as in MongoDB. On a view, only
    /// `view_on` and `pipeline` (either: the other is kept), checked as at creation.
    pub fn set_collection_options(&self, name: &str, options: &CollectionOptions) -> Result<()> {
        self.inner.write(|txn, _| {
            let Some(meta) = txn.catalog().collections.get(name) else {
                return Err(Error::invalid_options(
                    name,
                    "the collection does not exist",
                ));
            };
            if let Some(current) = &meta.view {
                if options.has_collection_options() {
                    return Err(Error::invalid_options(
                        name,
                        "a view's options are only 'viewOn' and 'pipeline'",
                    ));
                }
                let definition = ViewDefinition {
                    view_on: options
                        .view_on
                        .clone()
                        .unwrap_or_else(|| current.view_on.clone()),
                    pipeline: options
                        .pipeline
                        .clone()
                        .unwrap_or_else(|| current.pipeline.clone()),
                };
                views::check(txn.catalog(), name, &definition)?;
                views::check_collation(txn.catalog(), name, &definition, &meta.collation)?;
                txn.catalog_mut()
                    .collections
                    .get_mut(name)
                    .expect("exists")
                    .view = Some(definition);
                txn.collection_changed(name);
                return Ok(());
            }
            if options.view_on.is_some() || options.pipeline.is_some() {
                return Err(Error::invalid_options(
                    name,
                    "'viewOn' and 'pipeline' can only change a view",
                ));
            }
            if options.capped.is_some()
                || options.size.is_some()
                || options.max.is_some()
                || options.clustered_index.is_some()
                || options.collation.is_some()
            {
                return Err(Error::invalid_options(
                    name,
                    "capped, size, max, clusteredIndex and collation are set when the collection is created",
                ));
            }
            let validation = validation_from(name, options, &meta.validation)?;
            let meta = txn.catalog_mut().collections.get_mut(name).expect("exists");
            meta.validation = validation;
            if let Some(images) = &options.change_stream_pre_and_post_images {
                meta.echoed
                    .insert("changeStreamPreAndPostImages", images.clone());
            }
            txn.collection_changed(name);
            Ok(())
        })
    }

    /// Hides or unhides an index, or changes the TTL of a TTL index; returns the index's
    /// options as they were before.
    pub fn modify_index(
        &self,
        collection: &str,
        index: &str,
        change: &IndexModification,
    ) -> Result<IndexOptions> {
        let before = self.inner.write(|txn, _| {
            views::refuse_view(txn.catalog(), collection)?;
            let position = storage::index_position(txn, collection, index)?;
            let settings = &txn.catalog().collections[collection].indexes[position].settings;
            let before = IndexOptions {
                name: Some(index.to_string()),
                hidden: Some(settings.hidden),
                expire_after: settings
                    .expire_after_seconds
                    .map(|seconds| Duration::from_secs(seconds.unsigned_abs())),
                ..IndexOptions::default()
            };
            if change.expire_after.is_some() && settings.expire_after_seconds.is_none() {
                return Err(Error::invalid_options(
                    collection,
                    format!("index '{index}' is not a TTL index: expireAfterSeconds cannot be set"),
                ));
            }
            let meta = txn
                .catalog_mut()
                .collections
                .get_mut(collection)
                .expect("exists");
            let settings = &mut meta.indexes[position].settings;
            if let Some(hidden) = change.hidden {
                settings.hidden = hidden;
            }
            if let Some(expire_after) = change.expire_after {
                settings.expire_after_seconds =
                    Some(i64::try_from(expire_after.as_secs()).unwrap_or(i64::MAX));
            }
            txn.collection_changed(collection);
            Ok(before)
        })?;
        if change.expire_after.is_some() {
            self.start_ttl_reaper();
        }
        Ok(before)
    }

    /// Deletes the documents whose TTL has passed, now, in every collection with a TTL index:
    /// those whose indexed field holds a date (or an array with a date) older than the
    /// index's `expire_after` (and that match its partial filter, if any). Returns how many
    /// were deleted. The background reaper calls this every `DatabaseOptions::ttl_interval`.
    pub fn remove_expired(&self) -> Result<u64> {
        let state = self.inner.published();
        let now = DateTime::now().timestamp_millis();
        let mut deleted = 0;
        let mut first_error = None;
        for (name, meta) in &state.catalog.collections {
            for index in &meta.indexes {
                let Some(seconds) = index.settings.expire_after_seconds else {
                    continue;
                };
                let (path, _) = &index.fields[0];
                let cutoff =
                    DateTime::from_millis(now.saturating_sub(seconds.saturating_mul(1000)));
                let mut filter = doc! { path.as_str(): { "$lt": cutoff } };
                if let Some(partial) = &index.settings.partial {
                    filter = doc! { "$and": [filter, partial.spec.clone()] };
                }
                match self.collection::<Document>(name).delete_many(filter).run() {
                    Ok(result) => deleted += result.deleted_count,
                    Err(error) => {
                        first_error.get_or_insert(error);
                    }
                }
            }
        }
        match first_error {
            Some(error) => Err(error),
            None => Ok(deleted),
        }
    }

    pub(crate) fn has_ttl_indexes(&self) -> bool {
        self.inner
            .published()
            .catalog
            .collections
            .values()
            .flat_map(|meta| &meta.indexes)
            .any(|index| index.settings.expire_after_seconds.is_some())
    }

    /// Starts the TTL reaper thread once per open database (never for a read-only one). It
    /// holds only a weak reference: it ends within [`REAPER_TICK`] of the last handle's drop.
    pub(crate) fn start_ttl_reaper(&self) {
        if self.is_read_only() || self.inner.ttl_reaper.swap(true, Ordering::SeqCst) {
            return;
        }
        let weak = Arc::downgrade(&self.inner);
        let interval = self.inner.ttl_interval;
        let spawned = thread::Builder::new()
            .name("spillway-ttl".into())
            .spawn(move || {
                let tick = REAPER_TICK.min(interval).max(Duration::from_millis(1));
                let mut waited = Duration::ZERO;
                loop {
                    thread::sleep(tick);
                    if weak.strong_count() == 0 {
                        return;
                    }
                    waited += tick;
                    if waited < interval {
                        continue;
                    }
                    waited = Duration::ZERO;
                    let Some(inner) = weak.upgrade() else {
                        return;
                    };
                    // A failed pass (a write conflict, a refused side collection) is tried
                    // again at the next interval.
                    let _expired = Database { inner }.remove_expired();
                }
            });
        if spawned.is_err() {
            self.inner.ttl_reaper.store(false, Ordering::SeqCst);
        }
    }
}
