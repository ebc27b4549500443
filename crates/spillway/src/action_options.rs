//! The driver's `*Options` structs and `with_options` on the collection's actions, for code
//! written as `coll.find(filter).with_options(FindOptions::builder().limit(5).build())`.
//!
//! Each struct holds the options Spillway implements, under the driver's field names, all
//! `Option`s; `with_options` applies the ones that are set through the action's own builder
//! methods, so the two spellings mean the same. An option the driver has and Spillway does
//! not (`write_concern`, `max_time`...) is not a field: code that sets it does not compile,
//! rather than running without it. This module must never hold behaviour of its own.

use bson::Document;
use serde::Serialize;
use serde::de::DeserializeOwned;
use spillway_doc::collation::Collation;

use crate::collection::{
    Aggregate, CountDocuments, Delete, Distinct, Find, FindOne, FindOneAndDelete, FindOneAndModify,
    InsertMany, InsertOne, UpdateAction,
};
use crate::results::{Hint, ReturnDocument};

/// An options struct with its builder (`FindOptions::builder().limit(5).build()`).
macro_rules! options {
    (
        $(#[$meta:meta])*
        $name:ident, $builder:ident {
            $( $(#[$field_meta:meta])* $field:ident : $ty:ty ),* $(,)?
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Default, PartialEq)]
        #[non_exhaustive]
        pub struct $name {
            $( $(#[$field_meta])* pub $field: Option<$ty>, )*
        }

        impl $name {
            /// A builder, as in the driver.
            pub fn builder() -> $builder {
                $builder::default()
            }
        }

        #[doc = concat!("Builds [`", stringify!($name), "`].")]
        #[derive(Debug, Clone, Default)]
        pub struct $builder {
            options: $name,
        }

        impl $builder {
            $(
                #[doc = concat!("Sets `", stringify!($field), "`.")]
                pub fn $field(mut self, $field: impl Into<$ty>) -> Self {
                    self.options.$field = Some($field.into());
                    self
                }
            )*

            /// The options.
            pub fn build(self) -> $name {
                self.options
            }
        }
    };
}

options! {
    /// Options of `find`.
    FindOptions, FindOptionsBuilder {
        /// The order of the results.
        sort: Document,
        /// Documents passed over first.
        skip: u64,
        /// At most this many documents (0: no limit; negative: one batch of `|n|`).
        limit: i64,
        /// Which fields to return.
        projection: Document,
        /// Documents fetched at a time.
        batch_size: u32,
        /// The index to use.
        hint: Hint,
        /// The hinted index's lower bound (inclusive).
        min: Document,
        /// The hinted index's upper bound (exclusive).
        max: Document,
        /// How strings compare.
        collation: Collation,
    }
}

options! {
    /// Options of `find_one`.
    FindOneOptions, FindOneOptionsBuilder {
        /// Which matching document comes first.
        sort: Document,
        /// Matching documents passed over first.
        skip: u64,
        /// Which fields to return.
        projection: Document,
        /// How strings compare.
        collation: Collation,
    }
}

options! {
    /// Options of `update_one` and `update_many`.
    UpdateOptions, UpdateOptionsBuilder {
        /// Insert when nothing matches.
        upsert: bool,
        /// `arrayFilters` for `$[<identifier>]`.
        array_filters: Vec<Document>,
        /// `update_one`: which matching document is updated (MongoDB 8.0).
        sort: Document,
        /// How strings compare.
        collation: Collation,
        /// Skip the collection's validator.
        bypass_document_validation: bool,
    }
}

options! {
    /// Options of `replace_one`.
    ReplaceOptions, ReplaceOptionsBuilder {
        /// Insert when nothing matches.
        upsert: bool,
        /// Which matching document is replaced (MongoDB 8.0).
        sort: Document,
        /// How strings compare.
        collation: Collation,
        /// Skip the collection's validator.
        bypass_document_validation: bool,
    }
}

options! {
    /// Options of `delete_one` and `delete_many`.
    DeleteOptions, DeleteOptionsBuilder {
        /// How strings compare.
        collation: Collation,
    }
}

options! {
    /// Options of `count_documents`.
    CountOptions, CountOptionsBuilder {
        /// Matching documents passed over first.
        skip: u64,
        /// Count at most this many.
        limit: u64,
        /// How strings compare.
        collation: Collation,
    }
}

options! {
    /// Options of `distinct`.
    DistinctOptions, DistinctOptionsBuilder {
        /// How strings compare.
        collation: Collation,
    }
}

options! {
    /// Options of `insert_one`.
    InsertOneOptions, InsertOneOptionsBuilder {
        /// Skip the collection's validator.
        bypass_document_validation: bool,
    }
}

options! {
    /// Options of `insert_many`.
    InsertManyOptions, InsertManyOptionsBuilder {
        /// Stop at the first failure (the default) or insert every valid document.
        ordered: bool,
        /// Skip the collection's validator.
        bypass_document_validation: bool,
    }
}

options! {
    /// Options of `aggregate`.
    AggregateOptions, AggregateOptionsBuilder {
        /// Variables the pipeline reads as `$$name`.
        let_vars: Document,
        /// Documents fetched at a time.
        batch_size: u32,
        /// Accepted without effect: pipelines never spill to disk.
        allow_disk_use: bool,
        /// How strings compare.
        collation: Collation,
        /// Skip the validator of `$out`/`$merge`'s target.
        bypass_document_validation: bool,
    }
}

options! {
    /// Options of `find_one_and_update`.
    FindOneAndUpdateOptions, FindOneAndUpdateOptionsBuilder {
        /// Which matching document is updated.
        sort: Document,
        /// Which fields of the returned document to return.
        projection: Document,
        /// Insert when nothing matches.
        upsert: bool,
        /// The document before (default) or after the update.
        return_document: ReturnDocument,
        /// `arrayFilters` for `$[<identifier>]`.
        array_filters: Vec<Document>,
        /// How strings compare.
        collation: Collation,
        /// Skip the collection's validator.
        bypass_document_validation: bool,
    }
}

options! {
    /// Options of `find_one_and_replace`.
    FindOneAndReplaceOptions, FindOneAndReplaceOptionsBuilder {
        /// Which matching document is replaced.
        sort: Document,
        /// Which fields of the returned document to return.
        projection: Document,
        /// Insert when nothing matches.
        upsert: bool,
        /// The document before (default) or after the replacement.
        return_document: ReturnDocument,
        /// How strings compare.
        collation: Collation,
        /// Skip the collection's validator.
        bypass_document_validation: bool,
    }
}

options! {
    /// Options of `find_one_and_delete`.
    FindOneAndDeleteOptions, FindOneAndDeleteOptionsBuilder {
        /// Which matching document is deleted.
        sort: Document,
        /// Which fields of the deleted document to return.
        projection: Document,
        /// How strings compare.
        collation: Collation,
    }
}

/// Applies each option that is set with the action's builder method of the same name.
macro_rules! apply {
    ($action:ident, $options:expr, [$($field:ident),* $(,)?]) => {{
        let options = $options;
        $(
            if let Some(value) = options.$field {
                $action = $action.$field(value);
            }
        )*
        $action
    }};
}

impl<T: Serialize + DeserializeOwned + Send + Sync + 'static> Find<'_, T> {
    /// Sets every option of `options` that is set (the driver's `with_options`).
    pub fn with_options(self, options: impl Into<Option<FindOptions>>) -> Self {
        let mut action = self;
        let options = options.into().unwrap_or_default();
        apply!(
            action,
            options,
            [
                sort, skip, limit, projection, batch_size, hint, min, max, collation
            ]
        )
    }
}

impl<T: Serialize + DeserializeOwned + Send + Sync + 'static> FindOne<'_, T> {
    /// Sets every option of `options` that is set (the driver's `with_options`).
    pub fn with_options(self, options: impl Into<Option<FindOneOptions>>) -> Self {
        let mut action = self;
        let options = options.into().unwrap_or_default();
        apply!(action, options, [sort, skip, projection, collation])
    }
}

impl<T: Serialize + DeserializeOwned + Send + Sync + 'static> UpdateAction<'_, T> {
    /// Sets every option of `options` that is set (the driver's `with_options`): an
    /// [`UpdateOptions`] for `update_one`/`update_many`, a [`ReplaceOptions`] for
    /// `replace_one`.
    pub fn with_options(self, options: impl Into<UpdateActionOptions>) -> Self {
        let mut action = self;
        match options.into() {
            UpdateActionOptions::Update(options) => apply!(
                action,
                options,
                [
                    upsert,
                    array_filters,
                    sort,
                    collation,
                    bypass_document_validation
                ]
            ),
            UpdateActionOptions::Replace(options) => apply!(
                action,
                options,
                [upsert, sort, collation, bypass_document_validation]
            ),
        }
    }
}

/// What [`UpdateAction::with_options`] takes: the options of an update or of a replacement.
#[derive(Debug, Clone, PartialEq)]
pub enum UpdateActionOptions {
    /// `update_one` / `update_many`.
    Update(UpdateOptions),
    /// `replace_one`.
    Replace(ReplaceOptions),
}

impl From<UpdateOptions> for UpdateActionOptions {
    fn from(options: UpdateOptions) -> Self {
        UpdateActionOptions::Update(options)
    }
}

impl From<ReplaceOptions> for UpdateActionOptions {
    fn from(options: ReplaceOptions) -> Self {
        UpdateActionOptions::Replace(options)
    }
}

impl From<Option<UpdateOptions>> for UpdateActionOptions {
    fn from(options: Option<UpdateOptions>) -> Self {
        UpdateActionOptions::Update(options.unwrap_or_default())
    }
}

impl From<Option<ReplaceOptions>> for UpdateActionOptions {
    fn from(options: Option<ReplaceOptions>) -> Self {
        UpdateActionOptions::Replace(options.unwrap_or_default())
    }
}

impl<T: Serialize + DeserializeOwned + Send + Sync + 'static> Delete<'_, T> {
    /// Sets every option of `options` that is set (the driver's `with_options`).
    pub fn with_options(self, options: impl Into<Option<DeleteOptions>>) -> Self {
        let mut action = self;
        let options = options.into().unwrap_or_default();
        apply!(action, options, [collation])
    }
}

impl<T: Serialize + DeserializeOwned + Send + Sync + 'static> CountDocuments<'_, T> {
    /// Sets every option of `options` that is set (the driver's `with_options`).
    pub fn with_options(self, options: impl Into<Option<CountOptions>>) -> Self {
        let mut action = self;
        let options = options.into().unwrap_or_default();
        apply!(action, options, [skip, limit, collation])
    }
}

impl<T: Serialize + DeserializeOwned + Send + Sync + 'static> Distinct<'_, T> {
    /// Sets every option of `options` that is set (the driver's `with_options`).
    pub fn with_options(self, options: impl Into<Option<DistinctOptions>>) -> Self {
        let mut action = self;
        let options = options.into().unwrap_or_default();
        apply!(action, options, [collation])
    }
}

impl<T: Serialize + DeserializeOwned + Send + Sync + 'static> InsertOne<'_, T> {
    /// Sets every option of `options` that is set (the driver's `with_options`).
    pub fn with_options(self, options: impl Into<Option<InsertOneOptions>>) -> Self {
        let mut action = self;
        let options = options.into().unwrap_or_default();
        apply!(action, options, [bypass_document_validation])
    }
}

impl<T: Serialize + DeserializeOwned + Send + Sync + 'static> InsertMany<'_, T> {
    /// Sets every option of `options` that is set (the driver's `with_options`).
    pub fn with_options(self, options: impl Into<Option<InsertManyOptions>>) -> Self {
        let mut action = self;
        let options = options.into().unwrap_or_default();
        apply!(action, options, [ordered, bypass_document_validation])
    }
}

impl<R: DeserializeOwned + 'static> Aggregate<'_, R> {
    /// Sets every option of `options` that is set (the driver's `with_options`).
    pub fn with_options(self, options: impl Into<Option<AggregateOptions>>) -> Self {
        let mut action = self;
        let options = options.into().unwrap_or_default();
        apply!(
            action,
            options,
            [
                let_vars,
                batch_size,
                allow_disk_use,
                collation,
                bypass_document_validation
            ]
        )
    }
}

impl<T: Serialize + DeserializeOwned + Send + Sync + 'static> FindOneAndModify<'_, T> {
    /// Sets every option of `options` that is set (the driver's `with_options`): a
    /// [`FindOneAndUpdateOptions`] or a [`FindOneAndReplaceOptions`].
    pub fn with_options(self, options: impl Into<FindOneAndModifyOptions>) -> Self {
        let mut action = self;
        match options.into() {
            FindOneAndModifyOptions::Update(options) => apply!(
                action,
                options,
                [
                    sort,
                    projection,
                    upsert,
                    return_document,
                    array_filters,
                    collation,
                    bypass_document_validation
                ]
            ),
            FindOneAndModifyOptions::Replace(options) => apply!(
                action,
                options,
                [
                    sort,
                    projection,
                    upsert,
                    return_document,
                    collation,
                    bypass_document_validation
                ]
            ),
        }
    }
}

/// What [`FindOneAndModify::with_options`] takes.
#[derive(Debug, Clone, PartialEq)]
pub enum FindOneAndModifyOptions {
    /// `find_one_and_update`.
    Update(FindOneAndUpdateOptions),
    /// `find_one_and_replace`.
    Replace(FindOneAndReplaceOptions),
}

impl From<FindOneAndUpdateOptions> for FindOneAndModifyOptions {
    fn from(options: FindOneAndUpdateOptions) -> Self {
        FindOneAndModifyOptions::Update(options)
    }
}

impl From<FindOneAndReplaceOptions> for FindOneAndModifyOptions {
    fn from(options: FindOneAndReplaceOptions) -> Self {
        FindOneAndModifyOptions::Replace(options)
    }
}

impl<T: Serialize + DeserializeOwned + Send + Sync + 'static> FindOneAndDelete<'_, T> {
    /// Sets every option of `options` that is set (the driver's `with_options`).
    pub fn with_options(self, options: impl Into<Option<FindOneAndDeleteOptions>>) -> Self {
        let mut action = self;
        let options = options.into().unwrap_or_default();
        apply!(action, options, [sort, projection, collation])
    }
}
