//! Collections, databases and indexes: `create`, `drop`, `dropDatabase`, `listDatabases`,
//! `listCollections`, `renameCollection`, `createIndexes`, `listIndexes`, `dropIndexes`,
//! `collMod`, `dbStats`, `collStats`.
//!
//! Listings are cursors like MongoDB's (`firstBatch`, `getMore`), filtered with the document
//! language's filters. This module must never touch documents except to copy them in
//! `renameCollection`.

use bson::{Bson, Document, RawDocumentBuf, doc};
use spillway_doc::filter::Filter;

use super::Context;
use super::args::Args;
use super::cursors::{CursorTable, DocumentStream};
use super::error::{CommandError, CommandResult};
use super::namespace::check_database_name;
use super::read::{collection, in_session, parse_collation};
use super::stats;
use crate::catalog::BUCKETS_PREFIX;
use crate::{
    CollectionOptions, GeoIndexOptions, IndexModel, IndexModification, IndexOptions,
    TimeseriesOptions, Transaction, ValidationAction, ValidationLevel,
};

/// The stored collections of the command's database, by their client names.
fn collections_of(context: &Context<'_>) -> CommandResult<Vec<(String, String)>> {
    let namespaces = &context.commands.namespaces;
    Ok(context
        .commands
        .database
        .list_collection_names()
        .run()?
        .into_iter()
        .filter_map(|stored| {
            namespaces
                .collection_of(context.database, &stored)
                .map(|name| (name.to_string(), stored.clone()))
        })
        .collect())
}

fn exists(context: &Context<'_>, stored: &str) -> CommandResult<bool> {
    Ok(context
        .commands
        .database
        .list_collection_names()
        .run()?
        .iter()
        .any(|name| name == stored))
}

/// Keeps the documents of `documents` that match `filter` (a listing's `filter` option).
fn filtered(documents: Vec<Document>, filter: Option<&Document>) -> CommandResult<Vec<Document>> {
    let Some(filter) = filter else {
        return Ok(documents);
    };
    let filter =
        Filter::parse(filter).map_err(|error| CommandError::bad_value(error.to_string()))?;
    let mut kept = Vec::new();
    for document in documents {
        let raw = RawDocumentBuf::try_from(&document)
            .map_err(|error| CommandError::bad_value(error.to_string()))?;
        if filter
            .matches(&raw)
            .map_err(|error| CommandError::bad_value(error.to_string()))?
        {
            kept.push(document);
        }
    }
    Ok(kept)
}

/// A listing's first batch (all of it unless `cursor.batchSize` says otherwise).
fn listing(context: &Context<'_>, namespace: &str, documents: Vec<Document>) -> CommandResult {
    let batch_size = match context.args.document("cursor")? {
        Some(cursor) => Args::new("cursor", cursor).count("batchSize")?,
        None => None,
    };
    let stream: DocumentStream = Box::new(documents.into_iter().map(Ok));
    let batch_size = Some(batch_size.unwrap_or(u64::MAX));
    CursorTable::open(
        &context.commands.cursors,
        namespace,
        stream,
        batch_size,
        false,
        false,
    )
}

/// The validator options of `create` and `collMod`.
fn validation_options(args: &Args<'_>) -> CommandResult<CollectionOptions> {
    let mut options = CollectionOptions::default();
    if let Some(validator) = args.document("validator")? {
        options = options.validator(validator.clone());
    }
    if let Some(level) = args.string("validationLevel")? {
        let level = ValidationLevel::parse(level).ok_or_else(|| {
            CommandError::bad_value(format!(
                "validationLevel must be 'strict', 'moderate' or 'off', not '{level}'"
            ))
        })?;
        options = options.validation_level(level);
    }
    if let Some(action) = args.string("validationAction")? {
        let action = ValidationAction::parse(action).ok_or_else(|| {
            CommandError::bad_value(format!(
                "validationAction must be 'error' or 'warn', not '{action}'"
            ))
        })?;
        options = options.validation_action(action);
    }
    Ok(options)
}

/// `create`: an empty collection (capped, time series, with a validator or a default
/// collation if given), or a read-only view (`viewOn`, `pipeline`, `collation`); the options
/// listed in `REFUSED` are refused.
pub(crate) fn create(context: &mut Context<'_>) -> CommandResult {
    const SUPPORTED: &[&str] = &[
        "collation",
        "viewOn",
        "pipeline",
        "idIndex",
        "storageEngine",
        "indexOptionDefaults",
        "validator",
        "validationLevel",
        "validationAction",
        "capped",
        "size",
        "max",
        "clusteredIndex",
        "changeStreamPreAndPostImages",
        "timeseries",
        "expireAfterSeconds",
    ];
    const REFUSED: &[&str] = &["autoIndexId", "encryptedFields", "flags"];
    let args = &context.args;
    let mut known = SUPPORTED.to_vec();
    known.extend_from_slice(REFUSED);
    args.only(&known)?;
    if let Some(option) = REFUSED.iter().find(|option| {
        args.get(option)
            .is_some_and(|value| value != &Bson::Boolean(false))
    }) {
        return Err(CommandError::not_supported(format!(
            "create: option '{option}' is not supported by Spillway (plain, capped and time series collections, with validators and collations, and views)"
        )));
    }
    if args.get("viewOn").is_some() || args.get("pipeline").is_some() {
        return create_view(context, SUPPORTED);
    }
    let mut options = validation_options(args)?;
    if args.bool("capped")?.unwrap_or(false) {
        let Some(size) = args.count("size")? else {
            return Err(CommandError::new(
                72,
                "the 'size' field is required when 'capped' is true",
            ));
        };
        options = options.capped(size.max(1), args.count("max")?.filter(|max| *max > 0));
    }
    options.clustered_index = args.document("clusteredIndex")?.cloned();
    options.change_stream_pre_and_post_images =
        args.document("changeStreamPreAndPostImages")?.cloned();
    options.expire_after_seconds = args.integer("expireAfterSeconds")?;
    options.collation = args
        .document("collation")?
        .map(parse_collation)
        .transpose()?
        .filter(|collation| !collation.is_simple());
    let name = args.collection()?;
    let stored = context.stored(name)?;
    if let Some(timeseries) = args.document("timeseries")? {
        options.timeseries = Some(timeseries_options(timeseries)?);
        options.buckets_collection = Some(context.stored(&format!("{BUCKETS_PREFIX}{name}"))?);
    }
    if exists(context, &stored)? {
        return Err(CommandError::new(
            48,
            format!("Collection {} already exists.", context.namespace(name)),
        ));
    }
    let database = context.commands.database.clone();
    match context.session() {
        // Inside a transaction the collection is created by the transaction: invisible to
        // others until the commit, gone at an abort, as MongoDB does since 4.4. A document
        // written and removed again is how a transaction creates a collection. Only a plain
        // one: MongoDB refuses a capped collection in a transaction, and Spillway records
        // options in the catalog outside transactions.
        Some(transaction) => {
            if options != CollectionOptions::default() {
                return Err(CommandError::new(
                    263,
                    "Cannot create a collection with options (capped, validator...) in a multi-document transaction.",
                ));
            }
            let collection = database.collection::<Document>(&stored);
            collection.insert_one(doc! {}).session(transaction).run()?;
            collection.delete_many(doc! {}).session(transaction).run()?;
        }
        None => database.create_collection_with(&stored, &options)?,
    }
    Ok(doc! { "ok": 1.0 })
}

/// `create`'s `timeseries` document: `timeField` (required), `metaField`, `granularity`, or
/// `bucketMaxSpanSeconds` with `bucketRoundingSeconds`.
fn timeseries_options(spec: &Document) -> CommandResult<TimeseriesOptions> {
    let args = Args::new("create.timeseries", spec);
    args.only(&[
        "timeField",
        "metaField",
        "granularity",
        "bucketMaxSpanSeconds",
        "bucketRoundingSeconds",
    ])?;
    let Some(time_field) = args.string("timeField")? else {
        return Err(args.missing("timeField"));
    };
    let mut options = TimeseriesOptions::new(time_field);
    options.meta_field = args.string("metaField")?.map(str::to_string);
    options.granularity = args.string("granularity")?.map(str::to_string);
    options.bucket_max_span_seconds = args.integer("bucketMaxSpanSeconds")?;
    options.bucket_rounding_seconds = args.integer("bucketRoundingSeconds")?;
    Ok(options)
}

/// A time series' options as `listCollections` shows them.
fn timeseries_document(options: &TimeseriesOptions) -> Document {
    let mut listed = doc! { "timeField": &options.time_field };
    if let Some(meta) = &options.meta_field {
        listed.insert("metaField", meta);
    }
    if let Some(granularity) = &options.granularity {
        listed.insert("granularity", granularity);
    }
    if let Some(seconds) = options.bucket_rounding_seconds {
        listed.insert("bucketRoundingSeconds", super::count_value(seconds));
    }
    if let Some(seconds) = options.bucket_max_span_seconds {
        listed.insert("bucketMaxSpanSeconds", super::count_value(seconds));
    }
    listed
}

/// `create` of a read-only view: `viewOn` (a collection or view of the same database) and
/// `pipeline`, stored with their stored names; the definition is checked by the facade
/// (pipeline, no `$out`/`$merge`, no cycle).
fn create_view(context: &mut Context<'_>, options: &[&str]) -> CommandResult {
    let args = &context.args;
    let view_on = args.string("viewOn")?;
    let pipeline = args.documents("pipeline")?.unwrap_or_default();
    let Some(view_on) = view_on else {
        return Err(CommandError::new(
            72,
            "'pipeline' requires 'viewOn' to also be specified",
        ));
    };
    if view_on.is_empty() {
        return Err(CommandError::bad_value("'viewOn' cannot be empty"));
    }
    let collation = args
        .document("collation")?
        .map(parse_collation)
        .transpose()?
        .filter(|collation| !collation.is_simple());
    if let Some(option) = options
        .iter()
        .filter(|option| !matches!(**option, "viewOn" | "pipeline" | "collation"))
        .find(|option| args.get(option).is_some())
    {
        return Err(CommandError::new(
            72,
            format!(
                "option '{option}' is not supported for views (only 'viewOn', 'pipeline' and 'collation' are)"
            ),
        ));
    }
    let name = args.collection()?;
    let stored = context.stored(name)?;
    let source = context.stored(view_on)?;
    let pipeline = context
        .commands
        .namespaces
        .pipeline(context.database, &pipeline)?;
    if exists(context, &stored)? {
        return Err(CommandError::new(
            48,
            format!("Collection {} already exists.", context.namespace(name)),
        ));
    }
    if context.session().is_some() {
        return Err(CommandError::new(
            263,
            "Cannot create a view in a multi-document transaction.",
        ));
    }
    context.commands.database.create_collection_with(
        &stored,
        &CollectionOptions {
            collation,
            ..CollectionOptions::view(source, pipeline)
        },
    )?;
    Ok(doc! { "ok": 1.0 })
}

/// `collMod`: a collection's validator, validation level and action,
/// `changeStreamPreAndPostImages`, and an index's `hidden` and `expireAfterSeconds` (by
/// `name` or `keyPattern`); a view's `viewOn` and `pipeline`.
pub(crate) fn coll_mod(context: &mut Context<'_>) -> CommandResult {
    let args = &context.args;
    args.only(&[
        "validator",
        "validationLevel",
        "validationAction",
        "index",
        "dryRun",
        "viewOn",
        "pipeline",
        "changeStreamPreAndPostImages",
    ])?;
    let mut options = validation_options(args)?;
    if let Some(images) = args.document("changeStreamPreAndPostImages")? {
        if !matches!(images.get("enabled"), Some(Bson::Boolean(_))) || images.len() != 1 {
            return Err(CommandError::bad_value(format!(
                "collMod: changeStreamPreAndPostImages must be {{ enabled: <bool> }}, not {images}"
            )));
        }
        options.change_stream_pre_and_post_images = Some(images.clone());
    }
    if let Some(view_on) = args.string("viewOn")? {
        if view_on.is_empty() {
            return Err(CommandError::bad_value("'viewOn' cannot be empty"));
        }
        options.view_on = Some(context.stored(view_on)?);
    }
    if let Some(pipeline) = context.args.documents("pipeline")? {
        options.pipeline = Some(
            context
                .commands
                .namespaces
                .pipeline(context.database, &pipeline)?,
        );
    }
    let args = &context.args;
    let index = args.document("index")?.cloned();
    let (collection, name) = collection(context)?;
    let namespace = context.namespace(&name);
    if !exists(context, collection.name())? {
        return Err(CommandError::namespace_not_found(&namespace));
    }
    let is_view = context.view_definition(collection.name())?.is_some();
    if is_view && (index.is_some() || options.view_on.is_none() && options.pipeline.is_none()) {
        return Err(CommandError::new(
            72,
            format!("collMod on the view {namespace}: only 'viewOn' and 'pipeline' can change"),
        ));
    }
    if !is_view && (options.view_on.is_some() || options.pipeline.is_some()) {
        return Err(CommandError::new(
            72,
            format!(
                "collMod: 'viewOn' and 'pipeline' apply to views, and {namespace} is a collection"
            ),
        ));
    }
    let database = context.commands.database.clone();
    let mut reply = Document::new();
    if options != CollectionOptions::default() {
        database.set_collection_options(collection.name(), &options)?;
    } else if index.is_none() {
        // Nothing to change: still a `modify` event for change streams, as in MongoDB.
        let stored = collection.name().to_string();
        database.transaction(|transaction| {
            transaction.note_modify(&stored);
            Ok(())
        })?;
    }
    if let Some(index) = index {
        let index_args = Args::new("collMod.index", &index);
        index_args.only(&["name", "keyPattern", "hidden", "expireAfterSeconds"])?;
        let models = collection.index_models()?;
        let found = match (
            index_args.string("name")?,
            index_args.document("keyPattern")?,
        ) {
            (Some(wanted), None) => models.iter().find(|model| {
                model
                    .options
                    .as_ref()
                    .and_then(|options| options.name.as_deref())
                    == Some(wanted)
            }),
            (None, Some(keys)) => models.iter().find(|model| &model.keys == keys),
            _ => {
                return Err(CommandError::bad_value(
                    "collMod: 'index' must name the index by either 'name' or 'keyPattern'",
                ));
            }
        };
        let Some(found) = found else {
            return Err(CommandError::new(27, format!("cannot find index {index}")));
        };
        let index_name = found
            .options
            .as_ref()
            .and_then(|options| options.name.clone())
            .unwrap_or_default();
        if index_name == "_id_" {
            return Err(CommandError::bad_value("cannot modify the _id index"));
        }
        let mut change = IndexModification::default();
        if let Some(hidden) = index_args.bool("hidden")? {
            change = change.hidden(hidden);
        }
        if let Some(seconds) = index_args.integer("expireAfterSeconds")? {
            let seconds = u64::try_from(seconds).map_err(|_| {
                CommandError::bad_value("expireAfterSeconds must be a non-negative number")
            })?;
            change = change.expire_after(std::time::Duration::from_secs(seconds));
        }
        let before = database.modify_index(collection.name(), &index_name, &change)?;
        if let Some(hidden) = change.hidden {
            reply.insert("hidden_old", before.hidden.unwrap_or(false));
            reply.insert("hidden_new", hidden);
        }
        if let Some(expire_after) = change.expire_after {
            let old = before
                .expire_after
                .map_or(0, |duration| duration.as_secs() as i64);
            reply.insert("expireAfterSeconds_old", old);
            reply.insert("expireAfterSeconds_new", expire_after.as_secs() as i64);
        }
    }
    reply.insert("ok", 1.0);
    Ok(reply)
}

/// `drop`: the collection and its indexes (a missing collection is not an error, as in
/// MongoDB 7).
pub(crate) fn drop(context: &mut Context<'_>) -> CommandResult {
    context.args.only(&[])?;
    let (collection, name) = collection(context)?;
    let is_view = context.view_definition(collection.name())?.is_some();
    let indexes = collection.index_models()?.len();
    let action = collection.drop();
    in_session!(action, context).run()?;
    if is_view {
        // A view has no indexes to report, as in MongoDB's reply.
        return Ok(doc! { "ns": context.namespace(&name), "ok": 1.0 });
    }
    Ok(doc! {
        "ns": context.namespace(&name),
        "nIndexesWas": indexes as i32,
        "ok": 1.0,
    })
}

/// `dropDatabase`: every collection of the database, in one transaction; main collections
/// of pattern policies first (they take their side collections with them).
pub(crate) fn drop_database(context: &mut Context<'_>) -> CommandResult {
    context.args.only(&[])?;
    let mut collections: Vec<String> = collections_of(context)?
        .into_iter()
        .map(|(_, stored)| stored)
        .collect();
    let mains: Vec<String> = context
        .commands
        .database
        .patterns()
        .iter()
        .map(|pattern| pattern.collection().to_string())
        .collect();
    collections.sort_by_key(|stored| !mains.contains(stored));
    let database = context.commands.database.clone();
    let marker = context
        .commands
        .namespaces
        .database_marker(context.database)?;
    let drop_all = |transaction: &mut Transaction| {
        for stored in &collections {
            database
                .collection::<Document>(stored)
                .drop()
                .session(transaction)
                .run()?;
        }
        transaction.note_database_drop(&marker);
        Ok(())
    };
    match context.session() {
        Some(transaction) => drop_all(transaction)?,
        None => database.transaction(drop_all)?,
    }
    Ok(doc! { "dropped": context.database, "ok": 1.0 })
}

/// `listDatabases` (on `admin`): the databases that have collections, and `admin`, which a
/// MongoDB server always has (it holds the server's users and version).
pub(crate) fn list_databases(context: &mut Context<'_>) -> CommandResult {
    let args = &context.args;
    args.only(&["filter", "nameOnly", "authorizedDatabases"])?;
    let name_only = args.bool("nameOnly")?.unwrap_or(false);
    let filter = args.document("filter")?;
    let namespaces = &context.commands.namespaces;
    let mut databases: Vec<String> = context
        .commands
        .database
        .list_collection_names()
        .run()?
        .iter()
        .filter_map(|stored| namespaces.database_of(stored).map(str::to_string))
        .chain(std::iter::once("admin".to_string()))
        .collect();
    databases.sort();
    databases.dedup();
    // Sizes walk every collection's documents and indexes: only when asked for.
    let sizes = if name_only {
        std::collections::BTreeMap::default()
    } else {
        stats::database_sizes(context)?
    };
    let size_of =
        |name: &str| i64::try_from(sizes.get(name).copied().unwrap_or(0)).unwrap_or(i64::MAX);
    let total: i64 = databases.iter().map(|name| size_of(name)).sum();
    let listed: Vec<Document> = databases
        .into_iter()
        .map(|name| {
            if name_only {
                doc! { "name": name }
            } else {
                let size = size_of(&name);
                doc! { "name": name, "sizeOnDisk": size, "empty": size == 0 }
            }
        })
        .collect();
    let listed = filtered(listed, filter)?;
    let mut reply = doc! { "databases": listed };
    if !name_only {
        reply.insert("totalSize", total);
        reply.insert("totalSizeMb", total / (1024 * 1024));
    }
    reply.insert("ok", 1.0);
    Ok(reply)
}

/// `listCollections`.
pub(crate) fn list_collections(context: &mut Context<'_>) -> CommandResult {
    let args = &context.args;
    args.only(&["filter", "nameOnly", "authorizedCollections", "cursor"])?;
    if let Some(Bson::String(_)) = args.document.get("listCollections") {
        // MongoDB takes `listCollections: 1`; a name is allowed and ignored.
    }
    check_database_name(context.database).or_else(|error| match context.commands.namespaces {
        super::Namespaces::Flat => Ok(()),
        super::Namespaces::Prefixed | super::Namespaces::Embedding(_) => Err(error),
    })?;
    let name_only = args.bool("nameOnly")?.unwrap_or(false);
    let filter = args.document("filter")?;
    let database = context.commands.database.clone();
    let namespaces = &context.commands.namespaces;
    let listed: Vec<Document> = collections_of(context)?
        .into_iter()
        .map(|(name, stored)| {
            let given = database.collection_options(&stored)?;
            if let Some(CollectionOptions {
                view_on: Some(view_on),
                pipeline,
                ..
            }) = &given
            {
                if name_only {
                    return Ok(doc! { "name": name, "type": "view" });
                }
                let view_on = namespaces
                    .collection_of(context.database, view_on)
                    .unwrap_or(view_on);
                let pipeline = namespaces
                    .client_pipeline(context.database, pipeline.as_deref().unwrap_or_default());
                let mut options = doc! { "viewOn": view_on, "pipeline": pipeline };
                if let Some(CollectionOptions {
                    collation: Some(collation),
                    ..
                }) = &given
                {
                    // Resolved, as MongoDB lists a view's collation.
                    options.insert("collation", collation.to_document());
                }
                return Ok(doc! {
                    "name": name,
                    "type": "view",
                    "options": options,
                    "info": { "readOnly": true },
                });
            }
            if let Some(CollectionOptions {
                timeseries: Some(timeseries),
                expire_after_seconds,
                ..
            }) = &given
            {
                if name_only {
                    return Ok(doc! { "name": name, "type": "timeseries" });
                }
                let mut options = doc! { "timeseries": timeseries_document(timeseries) };
                if let Some(seconds) = expire_after_seconds {
                    options.insert("expireAfterSeconds", *seconds);
                }
                return Ok(doc! {
                    "name": name,
                    "type": "timeseries",
                    "options": options,
                    "info": { "readOnly": false },
                });
            }
            if name_only {
                return Ok(doc! { "name": name, "type": "collection" });
            }
            let mut options = Document::new();
            let mut id_index = doc! { "v": 2, "key": { "_id": 1 }, "name": "_id_" };
            if let Some(given) = given {
                if let Some(collation) = given.collation {
                    // MongoDB lists the resolved collation, which the `_id` index has too.
                    options.insert("collation", collation.to_document());
                    id_index.insert("collation", collation.to_document());
                }
                // With a validator MongoDB lists its level and action, the defaults too.
                let validated = given.validator.is_some();
                if let Some(validator) = given.validator {
                    options.insert("validator", validator);
                }
                let level = given
                    .validation_level
                    .or(validated.then_some(ValidationLevel::Strict));
                if let Some(level) = level {
                    options.insert("validationLevel", level.as_str());
                }
                let action = given
                    .validation_action
                    .or(validated.then_some(ValidationAction::Error));
                if let Some(action) = action {
                    options.insert("validationAction", action.as_str());
                }
                if let Some(clustered) = given.clustered_index {
                    options.insert("clusteredIndex", clustered);
                }
                if let Some(images) = given.change_stream_pre_and_post_images {
                    options.insert("changeStreamPreAndPostImages", images);
                }
                if given.capped == Some(true) {
                    options.insert("capped", true);
                    if let Some(size) = given.size {
                        options.insert(
                            "size",
                            i64::try_from(size).map_or(Bson::Int64(i64::MAX), super::count_value),
                        );
                    }
                    if let Some(max) = given.max {
                        options.insert(
                            "max",
                            i64::try_from(max).map_or(Bson::Int64(i64::MAX), super::count_value),
                        );
                    }
                }
            }
            Ok(doc! {
                "name": name,
                "type": "collection",
                "options": options,
                "info": { "readOnly": false },
                "idIndex": id_index,
            })
        })
        .collect::<CommandResult<_>>()?;
    let listed = filtered(listed, filter)?;
    let namespace = format!("{}.$cmd.listCollections", context.database);
    listing(context, &namespace, listed)
}

/// `renameCollection` (on `admin`, with full namespaces): the facade's
/// [`Collection::rename`](crate::Collection::rename), in one commit, with the collection's
/// documents, indexes, options and pattern policies; across databases the policies' side
/// collections move to the target database under their own collection names.
pub(crate) fn rename_collection(context: &mut Context<'_>) -> CommandResult {
    let args = &context.args;
    args.only(&["to", "dropTarget", "stayTemp"])?;
    let Some(Bson::String(from)) = args.document.get("renameCollection") else {
        return Err(CommandError::type_mismatch(
            "renameCollection must name the source namespace as a string",
        ));
    };
    let Some(to) = args.string("to")? else {
        return Err(args.missing("to"));
    };
    let drop_target = args.bool("dropTarget")?.unwrap_or(false);
    let split = |namespace: &str| -> CommandResult<(String, String)> {
        namespace
            .split_once('.')
            .map(|(database, collection)| (database.to_string(), collection.to_string()))
            .ok_or_else(|| {
                CommandError::new(73, format!("Invalid namespace specified '{namespace}'"))
            })
    };
    let (from_database, from_collection) = split(from)?;
    let (to_database, to_collection) = split(to)?;
    let namespaces = &context.commands.namespaces;
    let source = namespaces.stored(&from_database, &from_collection)?;
    let target = namespaces.stored(&to_database, &to_collection)?;
    if source == target {
        return Err(CommandError::new(20, "Can't rename a collection to itself"));
    }
    if !exists(context, &source)? {
        return Err(CommandError::namespace_not_found(from));
    }
    if context.view_definition(&source)?.is_some() {
        return Err(CommandError::new(
            166,
            format!("cannot rename view: {from}"),
        ));
    }
    let database = context.commands.database.clone();
    if database
        .collection_options(&source)?
        .is_some_and(|options| options.timeseries.is_some())
    {
        return Err(CommandError::new(
            72,
            format!("cannot rename the time series collection {from}"),
        ));
    }
    if context.view_definition(&target)?.is_some() {
        return Err(CommandError::new(
            48,
            format!("a view already exists with that name: {to}"),
        ));
    }
    if exists(context, &target)? && !drop_target {
        return Err(CommandError::new(48, "target namespace exists"));
    }
    // Across databases a policy's side collection goes along, keeping its collection name,
    // so that the target database holds the policy whole (its `getPatterns`, `dropDatabase`).
    let sides: Vec<(String, String)> = if from_database == to_database {
        Vec::new()
    } else {
        database
            .patterns()
            .iter()
            .filter(|pattern| pattern.collection() == source)
            .filter_map(|pattern| {
                let side = pattern.side_collection();
                let name = namespaces.collection_of(&from_database, side)?;
                Some(
                    namespaces
                        .stored(&to_database, name)
                        .map(|to| (side.to_string(), to)),
                )
            })
            .collect::<CommandResult<_>>()?
    };
    let collection = database.collection::<Document>(&source);
    let mut rename = collection.rename(&target).drop_target(drop_target);
    for (side, to) in &sides {
        rename = rename.side_collection(side, to);
    }
    match context.session() {
        Some(transaction) => rename.session(transaction).run()?,
        None => rename.run()?,
    }
    Ok(doc! { "ok": 1.0 })
}

/// Index options Spillway implements (`background` and `dropDups` are accepted without
/// effect, as MongoDB 4.2+ does; `background` is echoed by `listIndexes`); the others are
/// refused by name.
const INDEX_FIELDS: &[&str] = &[
    "key",
    "name",
    "unique",
    "v",
    "background",
    "dropDups",
    "ns",
    "sparse",
    "partialFilterExpression",
    "hidden",
    "expireAfterSeconds",
    "weights",
    "default_language",
    "language_override",
    "textIndexVersion",
    "min",
    "max",
    "bits",
    "2dsphereIndexVersion",
    "collation",
];

/// `createIndexes`.
pub(crate) fn create_indexes(context: &mut Context<'_>) -> CommandResult {
    let args = &context.args;
    args.only(&["indexes", "commitQuorum", "ignoreUnknownIndexOptions"])?;
    let Some(specs) = args.documents("indexes")? else {
        return Err(args.missing("indexes"));
    };
    if specs.is_empty() {
        return Err(CommandError::bad_value(
            "Must specify at least one index to create",
        ));
    }
    let mut models = Vec::with_capacity(specs.len());
    for spec in &specs {
        let spec_args = Args::new("createIndexes.indexes", spec);
        if let Some(option) = spec
            .keys()
            .find(|key| !INDEX_FIELDS.contains(&key.as_str()))
        {
            return Err(CommandError::not_supported(format!(
                "index option '{option}' is not supported by Spillway (key, name, unique, sparse, partialFilterExpression, hidden, expireAfterSeconds, collation, the text options weights, default_language, language_override and textIndexVersion, and min, max, bits and 2dsphereIndexVersion for geospatial indexes are)"
            )));
        }
        let Some(keys) = spec_args.document("key")? else {
            return Err(spec_args.missing("key"));
        };
        let expire_after = match spec_args.get("expireAfterSeconds") {
            None => None,
            Some(Bson::Double(seconds)) if seconds.is_finite() && *seconds >= 0.0 => {
                Some(std::time::Duration::from_secs(*seconds as u64))
            }
            Some(_) => {
                let seconds = spec_args.integer("expireAfterSeconds")?.unwrap_or(0);
                let seconds = u64::try_from(seconds).map_err(|_| {
                    CommandError::new(
                        67,
                        format!("expireAfterSeconds must be a non-negative number, not {seconds}"),
                    )
                })?;
                Some(std::time::Duration::from_secs(seconds))
            }
        };
        let options = IndexOptions {
            unique: spec_args.bool("unique")?,
            name: spec_args.string("name")?.map(str::to_string),
            sparse: spec_args.bool("sparse")?,
            partial_filter_expression: spec_args.document("partialFilterExpression")?.cloned(),
            hidden: spec_args.bool("hidden")?,
            expire_after,
            background: spec_args.bool("background")?,
            weights: spec_args.document("weights")?.cloned(),
            default_language: spec_args.string("default_language")?.map(str::to_string),
            language_override: spec_args.string("language_override")?.map(str::to_string),
            text_index_version: spec_args
                .integer("textIndexVersion")?
                .map(|version| i32::try_from(version).unwrap_or(i32::MAX)),
            geo: geo_options(&spec_args)?,
            collation: spec_args
                .document("collation")?
                .map(parse_collation)
                .transpose()?,
        };
        models.push(IndexModel {
            keys: keys.clone(),
            options: Some(options),
        });
    }
    let (collection, name) = collection(context)?;
    let stored = collection.name().to_string();
    if context.view_definition(&stored)?.is_some() {
        return Err(CommandError::new(
            166,
            format!(
                "Cannot create indexes on a view: {}",
                context.namespace(&name)
            ),
        ));
    }
    let existed = exists(context, &stored)?;
    let before = collection.index_models()?.len();
    let database = context.commands.database.clone();
    let create_all = |transaction: &mut Transaction| {
        for model in models {
            collection.create_index(model).session(transaction).run()?;
        }
        Ok(())
    };
    match context.session() {
        Some(transaction) => create_all(transaction)?,
        None => database.transaction(create_all)?,
    }
    let after = database
        .collection::<Document>(&stored)
        .index_models()?
        .len();
    let mut reply = doc! {
        "numIndexesBefore": before as i32,
        "numIndexesAfter": after as i32,
        "createdCollectionAutomatically": !existed,
    };
    if before == after {
        reply.insert("note", "all indexes already exist");
    }
    reply.insert("ok", 1.0);
    Ok(reply)
}

/// The options of a `2d` or `2dsphere` index in an index specification, if any is given.
fn geo_options(spec: &Args<'_>) -> CommandResult<Option<GeoIndexOptions>> {
    let number = |field: &str| match spec.get(field) {
        None => Ok(None),
        Some(Bson::Double(value)) => Ok(Some(*value)),
        Some(Bson::Int32(value)) => Ok(Some(f64::from(*value))),
        Some(Bson::Int64(value)) => Ok(Some(*value as f64)),
        Some(other) => Err(CommandError::type_mismatch(format!(
            "createIndexes.indexes.{field} must be a number, not {other}"
        ))),
    };
    let whole = |field: &str| -> CommandResult<Option<i64>> {
        Ok(number(field)?.map(|value| value as i64))
    };
    let options = GeoIndexOptions {
        min: number("min")?,
        max: number("max")?,
        bits: whole("bits")?.map(|bits| u32::try_from(bits).unwrap_or(u32::MAX)),
        sphere_version: whole("2dsphereIndexVersion")?
            .map(|version| i32::try_from(version).unwrap_or(i32::MAX)),
    };
    Ok((options != GeoIndexOptions::default()).then_some(options))
}

/// `listIndexes`.
pub(crate) fn list_indexes(context: &mut Context<'_>) -> CommandResult {
    context.args.only(&["cursor"])?;
    let (collection, name) = collection(context)?;
    let namespace = context.namespace(&name);
    if !exists(context, collection.name())? {
        return Err(CommandError::namespace_not_found(&namespace));
    }
    context.refuse_view(collection.name(), &namespace)?;
    let clustered = context
        .commands
        .database
        .collection_options(collection.name())?
        .and_then(|options| options.clustered_index);
    let listed = collection
        .index_models()?
        .into_iter()
        .enumerate()
        .map(|(position, model)| {
            if position == 0
                && let Some(clustered) = &clustered
            {
                // A clustered collection lists its `_id` index as MongoDB does.
                let mut described = clustered.clone();
                described.insert("clustered", true);
                return described;
            }
            model.to_document()
        })
        .collect();
    listing(context, &namespace, listed)
}

/// `dropIndexes`: by name, by key pattern, a list of names, or `"*"` (all but `_id_`).
pub(crate) fn drop_indexes(context: &mut Context<'_>) -> CommandResult {
    let args = &context.args;
    args.only(&["index"])?;
    let Some(target) = args.get("index").cloned() else {
        return Err(args.missing("index"));
    };
    let (collection, name) = collection(context)?;
    let namespace = context.namespace(&name);
    if !exists(context, collection.name())? {
        return Err(CommandError::namespace_not_found(&namespace));
    }
    context.refuse_view(collection.name(), &namespace)?;
    let models = collection.index_models()?;
    let name_of = |model: &IndexModel| {
        model
            .options
            .as_ref()
            .and_then(|options| options.name.clone())
            .unwrap_or_default()
    };
    let names: Vec<String> = match &target {
        Bson::String(all) if all == "*" => models.iter().skip(1).map(name_of).collect(),
        Bson::String(one) => vec![one.clone()],
        Bson::Array(many) => many
            .iter()
            .map(|name| match name {
                Bson::String(name) => Ok(name.clone()),
                other => Err(CommandError::type_mismatch(format!(
                    "dropIndexes: index names must be strings, not {other}"
                ))),
            })
            .collect::<CommandResult<_>>()?,
        Bson::Document(keys) => match models.iter().find(|model| &model.keys == keys) {
            Some(model) => vec![name_of(model)],
            None => {
                return Err(CommandError::new(
                    27,
                    format!("can't find index with key: {keys}"),
                ));
            }
        },
        other => {
            return Err(CommandError::type_mismatch(format!(
                "dropIndexes: 'index' must be a name, names, a key pattern or '*', not {other}"
            )));
        }
    };
    if names.iter().any(|name| name == "_id_") {
        return Err(CommandError::new(72, "cannot drop _id index"));
    }
    let database = context.commands.database.clone();
    let drop_all = |transaction: &mut Transaction| {
        for name in &names {
            collection.drop_index(name).session(transaction).run()?;
        }
        Ok(())
    };
    match context.session() {
        Some(transaction) => drop_all(transaction)?,
        None => database.transaction(drop_all)?,
    }
    Ok(doc! { "nIndexesWas": models.len() as i32, "ok": 1.0 })
}

/// `compact`: rewrites the store's mostly-dead log segments (the whole store: collections
/// share its files), answering the bytes freed. `dryRun` answers what is reclaimable without
/// rewriting anything. Readers and writers go on meanwhile, as in MongoDB 8.
pub(crate) fn compact(context: &mut Context<'_>) -> CommandResult {
    context
        .args
        .only(&["force", "freeSpaceTargetMB", "dryRun", "comment"])?;
    let (collection, name) = collection(context)?;
    let namespace = context.namespace(&name);
    if !exists(context, collection.name())? {
        return Err(CommandError::namespace_not_found(&namespace));
    }
    context.refuse_view(collection.name(), &namespace)?;
    let database = &context.commands.database;
    if context.args.bool("dryRun")?.unwrap_or(false) {
        let dead: u64 = database.stats()?.dead_bytes;
        return Ok(
            doc! { "estimatedBytesFreed": i64::try_from(dead).unwrap_or(i64::MAX), "ok": 1.0 },
        );
    }
    let report = database.compact()?;
    let freed = report.bytes_before.saturating_sub(report.bytes_after);
    Ok(doc! { "bytesFreed": i64::try_from(freed).unwrap_or(i64::MAX), "ok": 1.0 })
}

/// `validate`: the store's checksums and the collection's documents and indexes
/// (`Database::verify`, which checks the whole database; the problems of this collection and
/// any storage damage are reported).
pub(crate) fn validate(context: &mut Context<'_>) -> CommandResult {
    context.args.only(&[
        "full",
        "background",
        "repair",
        "metadata",
        "checkBSONConformance",
        "scandata",
        "enforceFastCount",
        "fixMultikey",
    ])?;
    if context.args.bool("full")?.unwrap_or(false)
        && context.args.bool("background")?.unwrap_or(false)
    {
        return Err(CommandError::new(
            72,
            "Running the validate command with both { background: true } and { full: true } is not supported.",
        ));
    }
    let (collection, name) = collection(context)?;
    let namespace = context.namespace(&name);
    if !exists(context, collection.name())? {
        return Err(CommandError::namespace_not_found(&namespace));
    }
    context.refuse_view(collection.name(), &namespace)?;
    let report = context.commands.database.verify()?;
    let mut errors: Vec<String> = report
        .problems
        .iter()
        .filter(|problem| problem.collection == collection.name())
        .map(ToString::to_string)
        .collect();
    errors.extend(
        report
            .storage_damage
            .iter()
            .map(|damage| format!("{damage:?}")),
    );
    let indexes = collection.index_models()?.len();
    let records = collection.estimated_document_count().run()?;
    Ok(doc! {
        "ns": namespace,
        "nrecords": i64::try_from(records).unwrap_or(i64::MAX),
        "nIndexes": indexes as i32,
        "valid": errors.is_empty(),
        "errors": errors,
        "warnings": [],
        "ok": 1.0,
    })
}

/// `fsync`: makes every commit so far durable (on the `admin` database, as MongoDB). Every
/// acknowledged write already is under the default durability; under the buffered modes this
/// is the sync. `lock: true` (blocking writers until `fsyncUnlock`, for a file-level backup)
/// is refused.
pub(crate) fn fsync(context: &mut Context<'_>) -> CommandResult {
    context.args.only(&["lock", "async"])?;
    if context.database != "admin" {
        return Err(CommandError::new(
            13,
            "fsync may only be run against the admin database.",
        ));
    }
    if context.args.bool("lock")?.unwrap_or(false) {
        return Err(CommandError::not_supported(
            "fsync with lock: true is not supported: Spillway does not block writers",
        ));
    }
    context.commands.database.sync()?;
    Ok(doc! { "numFiles": 1, "ok": 1.0 })
}
