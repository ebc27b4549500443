//! Time series buckets: MongoDB's bucket format (version 1), packed and unpacked.
//!
//! A time series collection stores its measurements grouped into *buckets*, one document per
//! group of measurements that share a meta value and fall within one time span (the Bucket
//! pattern, done by the database). A bucket is
//!
//! ```text
//! { _id: ObjectId(<rounded start, in seconds>),
//!   control: { version: 1, min: { <field>: <least value>, ... }, max: { ... } },
//!   meta: <the measurements' meta field value, absent when they have none>,
//!   data: { <field>: { "0": <value of measurement 0>, "1": ... }, ... } }
//! ```
//!
//! `data` holds one column per field, each keyed by the measurement's position in the bucket
//! as a decimal string; a measurement without a field has no entry in that column. The meta
//! field is stored once, in `meta`, never in `data`. `control.min`/`control.max` hold each
//! column's least and greatest value in BSON order, except that `control.min.<timeField>` is
//! the bucket's start: the first measurement's time rounded down to the rounding unit.
//!
//! This module only shapes documents; the facade decides which bucket a measurement joins
//! and writes the buckets. [`BucketSpec::unpack`] is the `$_internalUnpackBucket` stage's
//! work.

use std::cmp::Ordering;

use bson::oid::ObjectId;
use bson::{Bson, DateTime, Document, doc};

use crate::compare::compare;
use crate::error::{DocError, Result};

/// The most measurements a bucket holds (MongoDB's `timeseriesBucketMaxCount`).
pub const MAX_BUCKET_MEASUREMENTS: usize = 1000;

/// The most bytes of measurements a bucket holds (MongoDB's `timeseriesBucketMaxSize`).
pub const MAX_BUCKET_BYTES: usize = 125 * 1024;

/// The version of the bucket format this module writes and reads.
pub const BUCKET_VERSION: i32 = 1;

/// How a time series collection's buckets are laid out: what the unpacking stage and the
/// facade's bucket routing need to know.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BucketSpec {
    /// The field every measurement holds its time in, a BSON date.
    pub time_field: String,
    /// The field that identifies a series (stored once per bucket), if the collection has one.
    pub meta_field: Option<String>,
    /// The longest span of time one bucket covers, in seconds.
    pub max_span_seconds: i64,
}

/// A BadValue (2) of a measurement or bucket, as MongoDB reports those.
fn bad_value(message: String) -> DocError {
    DocError::Pipeline { code: 2, message }
}

impl BucketSpec {
    /// Parses the `$_internalUnpackBucket` stage's argument:
    /// `{ timeField, metaField?, bucketMaxSpanSeconds }`.
    pub fn parse_stage(argument: &Bson) -> Result<BucketSpec> {
        let failed = |message: &str| DocError::Pipeline {
            code: 5346500,
            message: format!("$_internalUnpackBucket {message}"),
        };
        let Bson::Document(spec) = argument else {
            return Err(failed("specification must be an object"));
        };
        let mut time_field = None;
        let mut meta_field = None;
        let mut max_span_seconds = None;
        for (key, value) in spec {
            match (key.as_str(), value) {
                ("timeField", Bson::String(field)) => time_field = Some(field.clone()),
                ("metaField", Bson::String(field)) => meta_field = Some(field.clone()),
                ("bucketMaxSpanSeconds", Bson::Int32(seconds)) if *seconds > 0 => {
                    max_span_seconds = Some(i64::from(*seconds));
                }
                ("bucketMaxSpanSeconds", Bson::Int64(seconds)) if *seconds > 0 => {
                    max_span_seconds = Some(*seconds);
                }
                ("timeField" | "metaField", _) => {
                    return Err(failed(&format!("'{key}' must be a string")));
                }
                ("bucketMaxSpanSeconds", _) => {
                    return Err(failed("'bucketMaxSpanSeconds' must be a positive integer"));
                }
                _ => return Err(failed(&format!("does not take the field '{key}'"))),
            }
        }
        Ok(BucketSpec {
            time_field: time_field.ok_or_else(|| failed("requires 'timeField'"))?,
            meta_field,
            max_span_seconds: max_span_seconds
                .ok_or_else(|| failed("requires 'bucketMaxSpanSeconds'"))?,
        })
    }

    /// The stage that unpacks buckets of this layout, as a pipeline stage document.
    pub fn to_stage(&self) -> Document {
        let mut spec = doc! { "timeField": &self.time_field };
        if let Some(meta) = &self.meta_field {
            spec.insert("metaField", meta);
        }
        spec.insert("bucketMaxSpanSeconds", self.max_span_seconds);
        doc! { "$_internalUnpackBucket": spec }
    }

    /// A measurement's time; [`DocError::InvalidValue`] naming the field when it has none or
    /// it is not a date, as MongoDB refuses such an insert (BadValue, 2).
    pub fn time_of(&self, measurement: &Document) -> Result<DateTime> {
        match measurement.get(&self.time_field) {
            Some(Bson::DateTime(time)) => Ok(*time),
            _ => Err(DocError::InvalidValue {
                message: format!(
                    "'{}' must be present and contain a valid BSON UTC datetime value",
                    self.time_field
                ),
            }),
        }
    }

    /// A measurement's meta value (`None` when the collection has no meta field or the
    /// measurement has no value for it).
    pub fn meta_of<'a>(&self, measurement: &'a Document) -> Option<&'a Bson> {
        self.meta_field
            .as_ref()
            .and_then(|field| measurement.get(field))
    }

    /// The measurements of `bucket`, in the order they were added, each with the bucket's
    /// meta value under the meta field.
    pub fn unpack(&self, bucket: &Document) -> Result<Vec<Document>> {
        let broken = |what: &str| {
            bad_value(format!(
                "time series bucket {}: {what}",
                bucket
                    .get("_id")
                    .map_or_else(|| "?".to_string(), ToString::to_string)
            ))
        };
        let data = match bucket.get("data") {
            Some(Bson::Document(data)) => data,
            None => return Ok(Vec::new()),
            Some(_) => return Err(broken("'data' is not an object")),
        };
        let count = match data.get(&self.time_field) {
            Some(Bson::Document(times)) => times.len(),
            None => 0,
            Some(_) => return Err(broken("the time column is not an object")),
        };
        let meta = self
            .meta_field
            .as_ref()
            .and_then(|field| bucket.get("meta").map(|meta| (field, meta)));
        let mut measurements = Vec::with_capacity(count);
        for position in 0..count {
            let key = position.to_string();
            let mut measurement = Document::new();
            for (field, column) in data {
                let Bson::Document(column) = column else {
                    return Err(broken(&format!("the column '{field}' is not an object")));
                };
                if let Some(value) = column.get(&key) {
                    measurement.insert(field.clone(), value.clone());
                }
            }
            if let Some((field, meta)) = meta {
                measurement.insert(field.clone(), meta.clone());
            }
            measurements.push(measurement);
        }
        Ok(measurements)
    }

    /// A bucket holding `measurements` (in that order, at least one), all of which share
    /// `meta`, starting at `start` (the first measurement's time rounded down, see
    /// [`round_down`]). The meta field is left out of `data`.
    pub fn pack(
        &self,
        id: ObjectId,
        start: DateTime,
        meta: Option<&Bson>,
        measurements: &[Document],
    ) -> Document {
        let mut data = Document::new();
        let mut min = Document::new();
        let mut max = Document::new();
        for (position, measurement) in measurements.iter().enumerate() {
            let key = position.to_string();
            for (field, value) in measurement {
                if self.meta_field.as_deref() == Some(field.as_str()) {
                    continue;
                }
                if !data.contains_key(field) {
                    data.insert(field.clone(), Document::new());
                }
                if let Some(Bson::Document(column)) = data.get_mut(field) {
                    column.insert(key.clone(), value.clone());
                }
                widen(&mut min, field, value, Ordering::Less);
                widen(&mut max, field, value, Ordering::Greater);
            }
        }
        min.insert(self.time_field.clone(), start);
        let mut bucket = doc! {
            "_id": id,
            "control": { "version": BUCKET_VERSION, "min": min, "max": max },
        };
        if let Some(meta) = meta {
            bucket.insert("meta", meta.clone());
        }
        bucket.insert("data", data);
        bucket
    }

    /// How many measurements `bucket` holds.
    pub fn count(&self, bucket: &Document) -> usize {
        bucket
            .get_document("data")
            .and_then(|data| data.get_document(&self.time_field))
            .map_or(0, Document::len)
    }

    /// Adds `measurement` to `bucket` as its last measurement, widening `control.min` and
    /// `control.max`; the caller has checked that it shares the bucket's meta value and falls
    /// within its span.
    pub fn append(&self, bucket: &mut Document, measurement: &Document) -> Result<()> {
        let key = self.count(bucket).to_string();
        let broken = || bad_value("a time series bucket has no 'control' or 'data' object".into());
        {
            let Some(Bson::Document(control)) = bucket.get_mut("control") else {
                return Err(broken());
            };
            for (bound, keep) in [("min", Ordering::Less), ("max", Ordering::Greater)] {
                if !control.contains_key(bound) {
                    control.insert(bound, Document::new());
                }
                let Some(Bson::Document(bound)) = control.get_mut(bound) else {
                    return Err(broken());
                };
                for (field, value) in measurement {
                    if self.meta_field.as_deref() != Some(field.as_str()) {
                        widen(bound, field, value, keep);
                    }
                }
            }
        }
        let Some(Bson::Document(data)) = bucket.get_mut("data") else {
            return Err(broken());
        };
        for (field, value) in measurement {
            if self.meta_field.as_deref() == Some(field.as_str()) {
                continue;
            }
            if !data.contains_key(field) {
                data.insert(field.clone(), Document::new());
            }
            let Some(Bson::Document(column)) = data.get_mut(field) else {
                return Err(broken());
            };
            column.insert(key.clone(), value.clone());
        }
        Ok(())
    }

    /// The start of the bucket `bucket`: `control.min.<timeField>`.
    pub fn start_of(&self, bucket: &Document) -> Option<DateTime> {
        bucket
            .get_document("control")
            .ok()?
            .get_document("min")
            .ok()?
            .get_datetime(&self.time_field)
            .ok()
            .copied()
    }

    /// Whether a measurement at `time` falls within the span of a bucket starting at `start`.
    pub fn spans(&self, start: DateTime, time: DateTime) -> bool {
        let offset = time.timestamp_millis() - start.timestamp_millis();
        (0..self.max_span_seconds.saturating_mul(1000)).contains(&offset)
    }
}

impl BucketSpec {
    /// A filter on buckets that every bucket holding a measurement matching `filter` matches
    /// (`None` when `filter` says nothing a bucket can answer): what a read can run on the
    /// buckets before unpacking them, so that the buckets' index serves it. Predicates on the
    /// meta field (or a path inside it) apply to `meta` as they are, since a bucket's
    /// measurements share their meta value; bounds on the time field become bounds on the
    /// bucket's `control.min`/`control.max`; everything else is left to the filter on the
    /// unpacked measurements, which still runs.
    pub fn bucket_filter(&self, filter: &Document) -> Option<Document> {
        let mut clauses = Vec::new();
        self.push_down(filter, &mut clauses);
        match clauses.len() {
            0 => None,
            1 => clauses.pop(),
            _ => Some(doc! { "$and": clauses.into_iter().map(Bson::Document).collect::<Vec<_>>() }),
        }
    }

    fn push_down(&self, filter: &Document, clauses: &mut Vec<Document>) {
        let min = format!("control.min.{}", self.time_field);
        let max = format!("control.max.{}", self.time_field);
        for (key, value) in filter {
            if key == "$and" {
                if let Bson::Array(branches) = value {
                    for branch in branches {
                        if let Bson::Document(branch) = branch {
                            self.push_down(branch, clauses);
                        }
                    }
                }
                continue;
            }
            if let Some(meta) = &self.meta_field {
                let inside = key
                    .strip_prefix(meta.as_str())
                    .filter(|rest| rest.is_empty() || rest.starts_with('.'));
                if let Some(rest) = inside {
                    clauses.push(doc! { format!("meta{rest}"): value.clone() });
                    continue;
                }
            }
            if *key != self.time_field {
                continue;
            }
            let operators = match value {
                Bson::Document(spec)
                    if spec.keys().next().is_some_and(|op| op.starts_with('$')) =>
                {
                    spec.clone()
                }
                other => doc! { "$eq": other.clone() },
            };
            for (operator, bound) in &operators {
                match operator.as_str() {
                    "$gt" | "$gte" => clauses.push(doc! { &max: { "$gte": bound.clone() } }),
                    "$lt" | "$lte" => clauses.push(doc! { &min: { "$lte": bound.clone() } }),
                    "$eq" => {
                        clauses.push(doc! { &max: { "$gte": bound.clone() } });
                        clauses.push(doc! { &min: { "$lte": bound.clone() } });
                    }
                    _ => {}
                }
            }
        }
    }
}

/// `time` rounded down to a multiple of `rounding_seconds` since the epoch (a bucket's start).
pub fn round_down(time: DateTime, rounding_seconds: i64) -> DateTime {
    let unit = rounding_seconds.max(1).saturating_mul(1000);
    let millis = time.timestamp_millis();
    DateTime::from_millis(millis - millis.rem_euclid(unit))
}

/// A new bucket `_id`: an ObjectId whose timestamp is the bucket's start, as MongoDB makes
/// them (so that `_id` order is start order within a second's resolution).
pub fn bucket_id(start: DateTime) -> ObjectId {
    let mut bytes = ObjectId::new().bytes();
    let seconds = start.timestamp_millis().div_euclid(1000);
    let seconds = u32::try_from(seconds.clamp(0, i64::from(u32::MAX))).unwrap_or(u32::MAX);
    bytes[..4].copy_from_slice(&seconds.to_be_bytes());
    ObjectId::from_bytes(bytes)
}

/// Keeps in `bound` the least (`Less`) or greatest (`Greater`) of its `field` and `value`.
fn widen(bound: &mut Document, field: &str, value: &Bson, keep: Ordering) {
    match bound.get(field) {
        Some(current) if compare(value, current) != keep => {}
        _ => {
            bound.insert(field.to_string(), value.clone());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(meta: bool) -> BucketSpec {
        BucketSpec {
            time_field: "t".into(),
            meta_field: meta.then(|| "m".to_string()),
            max_span_seconds: 3600,
        }
    }

    #[test]
    fn pack_then_unpack_gives_the_measurements_back() {
        let spec = spec(true);
        let measurements = vec![
            doc! { "_id": 1, "t": DateTime::from_millis(1_000), "m": "a", "x": 3 },
            doc! { "_id": 2, "t": DateTime::from_millis(2_000), "m": "a", "y": "z" },
            doc! { "_id": 1, "t": DateTime::from_millis(1_500), "m": "a", "x": 1 },
        ];
        let meta = Bson::from("a");
        let start = round_down(DateTime::from_millis(1_000), 60);
        let bucket = spec.pack(bucket_id(start), start, Some(&meta), &measurements);
        assert_eq!(bucket.get("meta"), Some(&meta));
        let data = bucket.get_document("data").unwrap();
        assert!(!data.contains_key("m"), "meta is stored once, outside data");
        assert_eq!(data.get_document("x").unwrap(), &doc! { "0": 3, "2": 1 });
        let control = bucket.get_document("control").unwrap();
        assert_eq!(
            control.get_document("min").unwrap().get("x"),
            Some(&Bson::Int32(1))
        );
        assert_eq!(
            control.get_document("max").unwrap().get("x"),
            Some(&Bson::Int32(3))
        );
        assert_eq!(spec.start_of(&bucket), Some(DateTime::from_millis(0)));
        let unpacked = spec.unpack(&bucket).unwrap();
        assert_eq!(unpacked.len(), 3);
        for (before, after) in measurements.iter().zip(&unpacked) {
            let mut before: Vec<_> = before.iter().collect();
            let mut after: Vec<_> = after.iter().collect();
            before.sort_by(|a, b| a.0.cmp(b.0));
            after.sort_by(|a, b| a.0.cmp(b.0));
            assert_eq!(before, after);
        }
    }

    #[test]
    fn append_is_pack_of_one_more() {
        let spec = spec(true);
        let first = doc! { "_id": 1, "t": DateTime::from_millis(61_000), "m": 7, "x": 5 };
        let second = doc! { "_id": 2, "t": DateTime::from_millis(62_000), "m": 7, "x": -1, "y": 1 };
        let start = round_down(DateTime::from_millis(61_000), 60);
        let id = bucket_id(start);
        let meta = Bson::Int32(7);
        let mut appended = spec.pack(id, start, Some(&meta), std::slice::from_ref(&first));
        spec.append(&mut appended, &second).unwrap();
        let packed = spec.pack(id, start, Some(&meta), &[first, second]);
        assert_eq!(appended, packed);
        assert_eq!(spec.count(&appended), 2);
    }

    #[test]
    fn a_measurement_needs_a_date_in_the_time_field() {
        let spec = spec(false);
        for measurement in [doc! {}, doc! { "t": 5 }, doc! { "t": "2024-01-01" }] {
            let error = spec.time_of(&measurement).unwrap_err();
            assert!(error.to_string().contains("'t' must be present"), "{error}");
        }
        assert!(
            spec.time_of(&doc! { "t": DateTime::from_millis(7) })
                .is_ok()
        );
    }

    #[test]
    fn filters_on_meta_and_time_are_pushed_down_to_buckets() {
        let spec = spec(true);
        let t = DateTime::from_millis(5_000);
        assert_eq!(
            spec.bucket_filter(
                &doc! { "m.site": { "$in": ["a", "b"] }, "t": { "$gte": t, "$lt": t }, "x": 3 }
            ),
            Some(doc! { "$and": [
                { "meta.site": { "$in": ["a", "b"] } },
                { "control.max.t": { "$gte": t } },
                { "control.min.t": { "$lte": t } },
            ] })
        );
        assert_eq!(
            spec.bucket_filter(&doc! { "$and": [{ "m": "a" }, { "t": t }] }),
            Some(doc! { "$and": [
                { "meta": "a" },
                { "control.max.t": { "$gte": t } },
                { "control.min.t": { "$lte": t } },
            ] })
        );
        assert_eq!(
            spec.bucket_filter(&doc! { "mx": 1, "x": { "$gt": 1 } }),
            None
        );
        assert_eq!(
            spec.bucket_filter(&doc! { "$or": [{ "m": "a" }, { "x": 1 }] }),
            None
        );
    }

    #[test]
    fn spans_and_rounding() {
        let spec = spec(false);
        let start = round_down(DateTime::from_millis(3_599_999), 3600);
        assert_eq!(start, DateTime::from_millis(0));
        assert!(spec.spans(start, DateTime::from_millis(3_599_999)));
        assert!(!spec.spans(start, DateTime::from_millis(3_600_000)));
        assert!(!spec.spans(start, DateTime::from_millis(-1)));
        assert_eq!(
            round_down(DateTime::from_millis(-1), 60),
            DateTime::from_millis(-60_000)
        );
        assert_eq!(
            bucket_id(DateTime::from_millis(90_000))
                .timestamp()
                .timestamp_millis(),
            90_000
        );
    }

    #[test]
    fn the_stage_round_trips_and_refuses_what_it_does_not_take() {
        let spec = spec(true);
        let stage = spec.to_stage();
        assert_eq!(
            BucketSpec::parse_stage(&stage["$_internalUnpackBucket"]).unwrap(),
            spec
        );
        for bad in [
            Bson::Int32(1),
            Bson::Document(doc! { "metaField": "m", "bucketMaxSpanSeconds": 60 }),
            Bson::Document(doc! { "timeField": "t" }),
            Bson::Document(doc! { "timeField": "t", "bucketMaxSpanSeconds": 0 }),
            Bson::Document(doc! { "timeField": "t", "bucketMaxSpanSeconds": 60, "include": ["a"] }),
        ] {
            assert!(BucketSpec::parse_stage(&bad).is_err(), "{bad}");
        }
    }
}
