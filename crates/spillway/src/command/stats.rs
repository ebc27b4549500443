//! What a collection and a database hold and cost, as MongoDB reports it: the `collStats` and
//! `dbStats` commands, `listDatabases`' sizes, and the pipeline stages `$collStats` and
//! `$indexStats` that mongosh (`db.c.stats()`, `totalSize()`, `latencyStats()`) and admin
//! tools read.
//!
//! Figures come from one walk of the lengths of the collection's documents and index entries
//! in the key directory, kept until the collection is next written
//! ([`Database::collection_stats`](crate::Database::collection_stats)): sizes are BSON bytes
//! as stored, not compressed, so `storageSize` is `size`; the `_id_` index is the bytes of
//! the `_id` keys the collection is ordered by. Operation latencies (`latencyStats`) are the
//! command layer's counts since the server started (`usage`); index accesses and collection
//! scans are not counted: those figures are zero, never invented.
//!
//! On a collection with policies, `count` is the number of logical documents (one main
//! document each); sizes are those of the stored layout, the main collection's documents
//! and indexes, the side collections having their own figures.
//!
//! This module must never write.

use bson::{Bson, DateTime, Document, doc};

use super::Context;
use super::args::Args;
use super::error::{CommandError, CommandResult};
use crate::CollectionStats;

/// The host name these figures report, as MongoDB's `host` field.
fn host() -> String {
    std::env::var("HOSTNAME").unwrap_or_else(|_| "localhost".to_string())
}

/// The `scale` of a stats command or stage: a positive integer, 1 when absent.
fn scale_of(args: &Args<'_>) -> CommandResult<i64> {
    match args.integer("scale")? {
        None => Ok(1),
        Some(scale) if scale >= 1 => Ok(scale),
        Some(_) => Err(CommandError::bad_value("scale has to be > 0")),
    }
}

/// A figure as MongoDB appends it: an int when it fits in 32 bits, a long otherwise.
fn number(value: i64) -> Bson {
    i32::try_from(value).map_or(Bson::Int64(value), Bson::Int32)
}

/// A byte count divided by the scale, as MongoDB reports it (rounded down).
fn scaled(bytes: u64, scale: i64) -> Bson {
    number(i64::try_from(bytes).unwrap_or(i64::MAX) / scale)
}

/// A count, as [`number`].
fn count(value: u64) -> Bson {
    number(i64::try_from(value).unwrap_or(i64::MAX))
}

/// One collection's `storageStats` (what `collStats` answers besides `ns`).
fn storage_stats(
    context: &Context<'_>,
    stored: &str,
    stats: &CollectionStats,
    scale: i64,
) -> CommandResult<Document> {
    let options = context.commands.database.collection_options(stored)?;
    let capped = options
        .as_ref()
        .is_some_and(|options| options.capped == Some(true));
    let mut index_sizes = doc! { "_id_": scaled(stats.id_key_bytes, scale) };
    let mut index_bytes = stats.id_key_bytes;
    for index in &stats.indexes {
        index_sizes.insert(index.name.clone(), scaled(index.bytes, scale));
        index_bytes += index.bytes;
    }
    let average = stats
        .document_bytes
        .checked_div(stats.documents)
        .unwrap_or(0);
    let mut reply = doc! {
        "size": scaled(stats.document_bytes, scale),
        "count": count(stats.documents),
        "avgObjSize": count(average),
        "numOrphanDocs": 0,
        "storageSize": scaled(stats.document_bytes, scale),
        "freeStorageSize": 0,
        "capped": capped,
        "nindexes": count(stats.indexes.len() as u64 + 1),
        "indexBuilds": [],
        "totalIndexSize": scaled(index_bytes, scale),
        "totalSize": scaled(stats.document_bytes + index_bytes, scale),
        "indexSizes": index_sizes,
        "scaleFactor": number(scale),
    };
    if capped && let Some(options) = options {
        if let Some(max) = options.max {
            reply.insert("max", count(max));
        }
        if let Some(size) = options.size {
            reply.insert("maxSize", scaled(size, scale));
        }
    }
    Ok(reply)
}

/// The figures of the collection stored as `stored` (client namespace `namespace`):
/// NamespaceNotFound (26) when it does not exist, CommandNotSupportedOnView (166) for a view.
fn collection_figures(
    context: &Context<'_>,
    stored: &str,
    namespace: &str,
) -> CommandResult<CollectionStats> {
    context.refuse_view(stored, namespace)?;
    context
        .commands
        .database
        .collection_stats(stored)?
        .ok_or_else(|| CommandError::namespace_not_found(namespace))
}

/// `collStats`: the collection's counts and sizes.
pub(crate) fn coll_stats(context: &mut Context<'_>) -> CommandResult {
    context.args.only(&["scale", "verbose"])?;
    let scale = scale_of(&context.args)?;
    let name = context.args.collection()?;
    let stored = context.stored(name)?;
    let namespace = context.namespace(name);
    let stats = collection_figures(context, &stored, &namespace)?;
    let mut reply = doc! { "ns": namespace };
    reply.extend(storage_stats(context, &stored, &stats, scale)?);
    reply.insert("ok", 1.0);
    Ok(reply)
}

/// The figures of every collection of the command's database, views apart; and how many
/// views it has.
fn database_figures(context: &Context<'_>) -> CommandResult<(Vec<CollectionStats>, i64)> {
    let namespaces = &context.commands.namespaces;
    let mut collections = Vec::new();
    let mut views = 0;
    for stats in context.commands.database.stats()?.collections {
        if namespaces
            .collection_of(context.database, &stats.name)
            .is_none()
        {
            continue;
        }
        if context.view_definition(&stats.name)?.is_some() {
            views += 1;
        } else {
            collections.push(stats);
        }
    }
    Ok((collections, views))
}

/// Bytes of a collection's documents and of its indexes (the `_id` keys included).
fn data_and_index_bytes(stats: &CollectionStats) -> (u64, u64) {
    let index_bytes = stats.id_key_bytes + stats.indexes.iter().map(|i| i.bytes).sum::<u64>();
    (stats.document_bytes, index_bytes)
}

/// `dbStats`: counts and sizes of the database's collections.
pub(crate) fn db_stats(context: &mut Context<'_>) -> CommandResult {
    context.args.only(&["scale", "freeStorage"])?;
    let scale = scale_of(&context.args)?;
    let (collections, views) = database_figures(context)?;
    let objects: u64 = collections.iter().map(|stats| stats.documents).sum();
    let (data_bytes, index_bytes) = collections
        .iter()
        .map(data_and_index_bytes)
        .fold((0, 0), |(data, index), (d, i)| (data + d, index + i));
    let indexes: usize = collections
        .iter()
        .map(|stats| stats.indexes.len() + 1)
        .sum();
    Ok(doc! {
        "db": context.database,
        "collections": collections.len() as i64,
        "views": views,
        "objects": objects as i64,
        "avgObjSize": data_bytes.checked_div(objects).map_or(0.0, |average| average as f64),
        "dataSize": (data_bytes / scale.unsigned_abs()) as f64,
        "storageSize": (data_bytes / scale.unsigned_abs()) as f64,
        "indexes": indexes as i64,
        "indexSize": (index_bytes / scale.unsigned_abs()) as f64,
        "totalSize": ((data_bytes + index_bytes) / scale.unsigned_abs()) as f64,
        "scaleFactor": number(scale),
        "ok": 1.0,
    })
}

/// Bytes of every database's documents and indexes, by database name, for `listDatabases`.
pub(crate) fn database_sizes(
    context: &Context<'_>,
) -> CommandResult<std::collections::BTreeMap<String, u64>> {
    let namespaces = &context.commands.namespaces;
    let mut sizes = std::collections::BTreeMap::new();
    for stats in context.commands.database.stats()?.collections {
        if let Some(database) = namespaces.database_of(&stats.name) {
            let (data, index) = data_and_index_bytes(&stats);
            *sizes.entry(database.to_string()).or_insert(0) += data + index;
        }
    }
    Ok(sizes)
}

/// The stages that describe a collection instead of reading it; each must come first.
const STATS_STAGES: &[&str] = &["$collStats", "$indexStats"];

/// When `pipeline` starts with `$collStats` or `$indexStats`, replaces that stage by the
/// documents it outputs (a `$documents` stage, for the caller to run on a collection that
/// holds nothing) and answers `true`; otherwise leaves the pipeline as it is.
pub(crate) fn first_stage(context: &Context<'_>, pipeline: &mut [Document]) -> CommandResult<bool> {
    let Some((name, spec)) = pipeline.first().and_then(|stage| stage.iter().next()) else {
        return Ok(false);
    };
    if !STATS_STAGES.contains(&name.as_str()) {
        return Ok(false);
    }
    let Bson::Document(spec) = spec else {
        return Err(CommandError::new(
            5_447_000,
            format!("{name} must be specified as an object"),
        ));
    };
    let collection = context.args.collection()?;
    let stored = context.stored(collection)?;
    let namespace = context.namespace(collection);
    let documents = if name == "$collStats" {
        vec![Bson::Document(coll_stats_stage(
            context, &stored, &namespace, spec,
        )?)]
    } else {
        if !spec.is_empty() {
            return Err(CommandError::new(
                28803,
                "The $indexStats stage specification must be an empty object",
            ));
        }
        index_stats_stage(context, &stored, &namespace)?
    };
    pipeline[0] = doc! { "$documents": { "$literal": documents } };
    Ok(true)
}

/// `$collStats`: one document with the parts `spec` asks for (`storageStats`, `count`,
/// `latencyStats`, `queryExecStats`).
fn coll_stats_stage(
    context: &Context<'_>,
    stored: &str,
    namespace: &str,
    spec: &Document,
) -> CommandResult<Document> {
    let spec = Args::new("$collStats", spec);
    spec.only(&["storageStats", "count", "latencyStats", "queryExecStats"])?;
    let mut output = doc! {
        "ns": namespace,
        "host": host(),
        "localTime": DateTime::now(),
    };
    if let Some(latency) = spec.document("latencyStats")? {
        let latency = Args::new("$collStats.latencyStats", latency);
        latency.only(&["histograms"])?;
        let histograms = latency.bool("histograms")?.unwrap_or(false);
        output.insert(
            "latencyStats",
            context.commands.usage.latency_stats(namespace, histograms),
        );
    }
    let wants_storage = spec.document("storageStats")?;
    let wants_count = spec.document("count")?.is_some();
    if wants_storage.is_some() || wants_count {
        let stats = collection_figures(context, stored, namespace)?;
        if let Some(storage) = wants_storage {
            let storage = Args::new("$collStats.storageStats", storage);
            storage.only(&["scale", "verbose", "waitForLock", "numericOnly"])?;
            let scale = scale_of(&storage)?;
            output.insert(
                "storageStats",
                storage_stats(context, stored, &stats, scale)?,
            );
        }
        if wants_count {
            output.insert("count", count(stats.documents));
        }
    }
    if spec.document("queryExecStats")?.is_some() {
        output.insert(
            "queryExecStats",
            doc! { "collectionScans": { "total": 0_i64, "nonTailable": 0_i64 } },
        );
    }
    Ok(output)
}

/// `$indexStats`: one document per index, with its specification; accesses are not counted.
fn index_stats_stage(
    context: &Context<'_>,
    stored: &str,
    namespace: &str,
) -> CommandResult<Vec<Bson>> {
    context.refuse_view(stored, namespace)?;
    let collection = context.commands.database.collection::<Document>(stored);
    let since = DateTime::now();
    let host = host();
    Ok(collection
        .index_models()?
        .into_iter()
        .map(|model| {
            let spec = model.to_document();
            Bson::Document(doc! {
                "name": spec.get_str("name").unwrap_or_default(),
                "key": model.keys.clone(),
                "host": host.clone(),
                "accesses": { "ops": 0_i64, "since": since },
                "spec": spec,
            })
        })
        .collect())
}
