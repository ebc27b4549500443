//! Time series collections (MongoDB's `create` with `timeseries`): their options, and the
//! writes that route measurements into buckets.
//!
//! A time series collection `c` is a catalog entry with a [`Timeseries`] layout and an empty
//! documents keyspace, like a view's; its measurements live in buckets, documents of the
//! plain collection `system.buckets.c` in MongoDB's bucket format
//! ([`spillway_doc::timeseries`]): one bucket per meta value and span of time, at most
//! [`MAX_BUCKET_MEASUREMENTS`] measurements or [`MAX_BUCKET_BYTES`] each. The Bucket pattern,
//! applied by the database.
//!
//! - **Reads** of `c` are a pipeline on the buckets: `$_internalUnpackBucket` then the read's
//!   own stages (`views::resolve`), so every read a view supports works on measurements. A
//!   leading `$match` is first asked of the buckets (`BucketSpec::bucket_filter`, applied by
//!   the aggregate module), so the routing index also narrows reads by meta value and time.
//! - **Inserts** append each measurement to the newest bucket of its meta value whose span
//!   holds its time and that has room, found through the buckets' `{ meta, control.min.<time>,
//!   control.max.<time> }` index, or open a new bucket. Measurements keep their `_id`s, which
//!   need not be unique (MongoDB's time series have no `_id` index).
//! - **Updates and deletes** unpack the buckets, apply the statement to the matching
//!   measurements and write back the buckets that changed (an empty one is deleted); an
//!   updated measurement whose time or meta value changed is routed again as an insert. All of
//!   it is one statement of the caller's transaction.
//! - **`expireAfterSeconds`** is a TTL index on the buckets' `control.max.<time>`: the TTL
//!   reaper deletes a bucket once its newest measurement has expired, as MongoDB does.
//!
//! This module never commits: its writes go through the [`WriteTxn`] it is given, with the
//! storage primitives every other write uses. It sits beside `storage` in the facade's layers
//! (it imports nothing above it); `ops` routes a statement on a time series here.

use bson::{Bson, DateTime, Document, doc};
use spillway_doc::filter::Filter;
use spillway_doc::timeseries::{MAX_BUCKET_BYTES, MAX_BUCKET_MEASUREMENTS, bucket_id, round_down};
use spillway_doc::update::{ApplyContext, Update};
use spillway_store::Store;

use crate::catalog::timeseries::Timeseries;
use crate::catalog::{IndexSettings, default_index_name};
use crate::error::{Error, Result};
use crate::storage::{self, DocumentChange};
use crate::txn::{Reader, WriteTxn};

/// Creates the secondary index `keys` of the time series `layout` (named `name`, or as
/// MongoDB names it from `keys`) as the index of its buckets that answers it: a path in the
/// meta field indexes the buckets' `meta`, the time field their `control.min` and
/// `control.max` (in the index's direction), as MongoDB does. Other fields, unique indexes
/// and index options are refused (67 CannotCreateIndex).
#[expect(
    clippy::too_many_arguments,
    reason = "ops::create_index's arguments and the layout it resolved"
)]
pub(crate) fn create_index(
    txn: &mut WriteTxn,
    store: &Store,
    collection: &str,
    layout: &Timeseries,
    keys: &Document,
    unique: bool,
    name: Option<&str>,
    settings: &IndexSettings,
) -> Result<String> {
    let refuse = |message: String| {
        Err(Error::invalid_index(collection, message)
            .with_code(crate::error::codes::CANNOT_CREATE_INDEX))
    };
    if unique || *settings != IndexSettings::default() {
        return refuse(format!(
            "an index of the time series '{collection}' takes no unique, sparse, partial, hidden or TTL option (a time series' TTL is its expireAfterSeconds)"
        ));
    }
    let mut bucket_keys = Document::new();
    for (path, direction) in keys {
        let ascending = match direction {
            Bson::Int32(1) | Bson::Int64(1) => true,
            Bson::Int32(-1) | Bson::Int64(-1) => false,
            // mongosh sends numbers as doubles.
            Bson::Double(value) if (value.abs() - 1.0).abs() < f64::EPSILON => *value > 0.0,
            other => {
                return refuse(format!(
                    "an index of the time series '{collection}' is ascending or descending, not {other}"
                ));
            }
        };
        let order = if ascending { 1 } else { -1 };
        let in_meta = layout.spec.meta_field.as_deref().and_then(|meta| {
            path.strip_prefix(meta)
                .filter(|rest| rest.is_empty() || rest.starts_with('.'))
        });
        if let Some(rest) = in_meta {
            bucket_keys.insert(format!("meta{rest}"), order);
        } else if *path == layout.spec.time_field {
            let (first, second) = if ascending {
                ("min", "max")
            } else {
                ("max", "min")
            };
            bucket_keys.insert(format!("control.{first}.{path}"), order);
            bucket_keys.insert(format!("control.{second}.{path}"), order);
        } else {
            return refuse(format!(
                "an index of the time series '{collection}' can name its meta field and time field only, not '{path}'"
            ));
        }
    }
    let name = name.map_or_else(|| default_index_name(keys), str::to_string);
    storage::create_index(
        txn,
        store,
        &layout.buckets,
        &bucket_keys,
        false,
        Some(&name),
        IndexSettings::default(),
    )
}

/// Creates the time series collection `name` with `layout`: its catalog entry, its buckets
/// collection and the buckets' routing (and TTL) indexes, in `txn`.
pub(crate) fn create(
    txn: &mut WriteTxn,
    store: &Store,
    name: &str,
    layout: Timeseries,
) -> Result<()> {
    for taken in [name, layout.buckets.as_str()] {
        if txn.catalog().collections.contains_key(taken) {
            return Err(Error::new(crate::error::ErrorKind::CollectionExists {
                collection: taken.to_string(),
            }));
        }
    }
    storage::ensure_collection(txn, store, &layout.buckets)?;
    // Named as MongoDB names the `{ <meta>: 1, <time>: 1 }` index it creates.
    let routing_name = layout
        .spec
        .meta_field
        .as_ref()
        .map(|meta| format!("{meta}_1_{}_1", layout.spec.time_field));
    storage::create_index(
        txn,
        store,
        &layout.buckets,
        &layout.routing_index(),
        false,
        routing_name.as_deref(),
        IndexSettings::default(),
    )?;
    if let Some(seconds) = layout.expire_after_seconds {
        storage::create_index(
            txn,
            store,
            &layout.buckets,
            &doc! { format!("control.max.{}", layout.spec.time_field): 1 },
            false,
            None,
            IndexSettings {
                expire_after_seconds: Some(seconds),
                ..IndexSettings::default()
            },
        )?;
    }
    storage::ensure_collection(txn, store, name)?;
    txn.catalog_mut()
        .collections
        .get_mut(name)
        .expect("just created")
        .timeseries = Some(layout);
    txn.collection_changed(name);
    Ok(())
}

/// Inserts one measurement into the time series `layout`: appended to the newest bucket of
/// its series whose span holds its time and that has room, or into a new bucket. Returns
/// the measurement's `_id` (generated when missing) and the measurement as stored.
pub(crate) fn insert(
    txn: &mut WriteTxn,
    store: &Store,
    layout: &Timeseries,
    measurement: Document,
) -> Result<(Bson, Document)> {
    let measurement = storage::prepare_insert(measurement)?;
    let time = layout.spec.time_of(&measurement).map_err(Error::document)?;
    let id = measurement.get("_id").cloned().expect("prepared");
    let meta = layout.spec.meta_of(&measurement).cloned();
    let bytes = spillway_doc::size::document_size(&measurement);
    if let Some((id_key, old)) = open_bucket(txn, layout, meta.as_ref(), time, bytes)? {
        let mut bucket = old.clone();
        layout
            .spec
            .append(&mut bucket, &measurement)
            .map_err(Error::document)?;
        write_bucket(txn, &layout.buckets, &id_key, Some(&old), Some(&bucket))?;
    } else {
        let start = round_down(time, layout.rounding_seconds);
        let bucket = layout.spec.pack(
            bucket_id(start),
            start,
            meta.as_ref(),
            std::slice::from_ref(&measurement),
        );
        storage::insert_stored(txn, store, &layout.buckets, bucket)?;
    }
    Ok((id, measurement))
}

/// The newest bucket (its `_id` key and document) of the series `meta` whose span holds
/// `time` and that has room for one more measurement of `bytes` bytes.
fn open_bucket(
    txn: &WriteTxn,
    layout: &Timeseries,
    meta: Option<&Bson>,
    time: DateTime,
    bytes: usize,
) -> Result<Option<(Vec<u8>, Document)>> {
    let start_field = format!("control.min.{}", layout.spec.time_field);
    let earliest = DateTime::from_millis(
        time.timestamp_millis()
            .saturating_sub(layout.spec.max_span_seconds.saturating_mul(1000)),
    );
    let mut filter = Document::new();
    if layout.spec.meta_field.is_some() {
        filter.insert(
            "meta",
            meta.map_or_else(
                || doc! { "$exists": false },
                |meta| doc! { "$eq": meta.clone() },
            ),
        );
    }
    filter.insert(start_field.clone(), doc! { "$lte": time, "$gt": earliest });
    let filter = Filter::parse(&filter).map_err(Error::filter)?;
    let newest_first =
        spillway_doc::sort::SortSpec::parse(&doc! { start_field: -1 }).map_err(Error::argument)?;
    let run = storage::query_stored(txn, &layout.buckets, &filter, Some(&newest_first), 0, None)?;
    for found in run.matches {
        let bucket = storage::decode(&found.bytes)?;
        let has_room = layout.spec.count(&bucket) < MAX_BUCKET_MEASUREMENTS
            && found.bytes.len() + bytes <= MAX_BUCKET_BYTES;
        let spans = layout
            .spec
            .start_of(&bucket)
            .is_some_and(|start| layout.spec.spans(start, time));
        if has_room && spans {
            return Ok(Some((found.id_key, bucket)));
        }
    }
    Ok(None)
}

/// Writes one bucket change (an update, or a delete when `new` is `None`).
fn write_bucket(
    txn: &mut WriteTxn,
    buckets: &str,
    id_key: &[u8],
    old: Option<&Document>,
    new: Option<&Document>,
) -> Result<()> {
    let new = match new {
        Some(bucket) => {
            storage::check_storable(bucket)?;
            Some((bucket, storage::encode(bucket)?))
        }
        None => None,
    };
    storage::write_documents(txn, buckets, vec![DocumentChange { id_key, old, new }])
}

/// What a statement does to one matching measurement.
enum Outcome {
    /// Kept as it was.
    Kept,
    /// Removed from its bucket.
    Removed,
    /// Replaced by this measurement.
    Changed(Document),
}

/// Runs a statement over the measurements matching `filter` (the first one only unless
/// `multi`): `decide` says what becomes of each. Buckets that changed are written back (or
/// deleted when empty); a changed measurement whose time or meta value no longer fits its
/// bucket is inserted again. Returns how many measurements matched and how many changed.
fn rewrite(
    txn: &mut WriteTxn,
    store: &Store,
    layout: &Timeseries,
    filter: &Filter,
    multi: bool,
    mut decide: impl FnMut(&Document) -> Result<Outcome>,
) -> Result<(u64, u64)> {
    let run = storage::query_stored(txn, &layout.buckets, &Filter::default(), None, 0, None)?;
    let (mut matched, mut changed) = (0_u64, 0_u64);
    let mut moved = Vec::new();
    for found in run.matches {
        if matched > 0 && !multi {
            break;
        }
        let bucket = storage::decode(&found.bytes)?;
        let start = layout.spec.start_of(&bucket).ok_or_else(|| {
            Error::corruption(format!("a bucket of {} has no start", layout.buckets))
        })?;
        let meta = bucket.get("meta").cloned();
        let mut kept = Vec::new();
        let mut bucket_changed = false;
        for measurement in layout.spec.unpack(&bucket).map_err(Error::document)? {
            let raw = bson::RawDocumentBuf::try_from(&measurement)
                .map_err(|error| Error::serialization(error.to_string()))?;
            let selected =
                (multi || matched == 0) && filter.matches(&raw).map_err(Error::filter)?;
            if !selected {
                kept.push(measurement);
                continue;
            }
            matched += 1;
            match decide(&measurement)? {
                Outcome::Kept => kept.push(measurement),
                Outcome::Removed => {
                    changed += 1;
                    bucket_changed = true;
                }
                Outcome::Changed(after) => {
                    changed += 1;
                    bucket_changed = true;
                    let time = layout.spec.time_of(&after).map_err(Error::document)?;
                    let same_series = layout.spec.meta_of(&after) == meta.as_ref();
                    if same_series && layout.spec.spans(start, time) {
                        kept.push(after);
                    } else {
                        moved.push(after);
                    }
                }
            }
        }
        if !bucket_changed {
            continue;
        }
        let id = bucket.get_object_id("_id").map_err(|_| {
            Error::corruption(format!(
                "a bucket of {} has no ObjectId _id",
                layout.buckets
            ))
        })?;
        let rebuilt = (!kept.is_empty()).then(|| layout.spec.pack(id, start, meta.as_ref(), &kept));
        write_bucket(
            txn,
            &layout.buckets,
            &found.id_key,
            Some(&bucket),
            rebuilt.as_ref(),
        )?;
    }
    for measurement in moved {
        insert(txn, store, layout, measurement)?;
    }
    Ok((matched, changed))
}

/// `deleteOne` / `deleteMany` on a time series collection: the number of measurements
/// deleted.
pub(crate) fn delete(
    txn: &mut WriteTxn,
    store: &Store,
    layout: &Timeseries,
    filter: &Filter,
    multi: bool,
) -> Result<u64> {
    rewrite(txn, store, layout, filter, multi, |_| Ok(Outcome::Removed)).map(|(matched, _)| matched)
}

/// What an update of a time series collection did.
pub(crate) struct Updated {
    pub(crate) matched: u64,
    pub(crate) modified: u64,
    /// The `_id` of the measurement an upsert inserted.
    pub(crate) upserted_id: Option<Bson>,
}

/// `updateOne` / `updateMany` / `replaceOne` on a time series collection.
pub(crate) fn update(
    txn: &mut WriteTxn,
    store: &Store,
    layout: &Timeseries,
    filter: &Filter,
    update: &Update,
    multi: bool,
    upsert: bool,
) -> Result<Updated> {
    let now = DateTime::now();
    let (matched, modified) = rewrite(txn, store, layout, filter, multi, |measurement| {
        let mut after = measurement.clone();
        let outcome = update
            .apply(&mut after, &ApplyContext::new(now))
            .map_err(Error::update)?;
        Ok(if outcome.modified {
            Outcome::Changed(after)
        } else {
            Outcome::Kept
        })
    })?;
    let mut counts = Updated {
        matched,
        modified,
        upserted_id: None,
    };
    if matched == 0 && upsert {
        let document = update
            .upsert(filter, &ApplyContext::new(now).upsert_insert())
            .map_err(Error::update)?;
        counts.upserted_id = Some(insert(txn, store, layout, document)?.0);
    }
    Ok(counts)
}
