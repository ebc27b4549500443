//! What the catalog records of a time series collection: its options as `create` takes
//! them ([`TimeseriesOptions`]) and the layout they resolve to ([`Timeseries`]), checked as
//! MongoDB checks them. The writes that route measurements into buckets are
//! the `timeseries` module's, above the storage layer.

use bson::{Document, doc};
use spillway_doc::timeseries::BucketSpec;

use crate::error::{Error, Result};

/// The longest `bucketMaxSpanSeconds` and `bucketRoundingSeconds` MongoDB accepts (a year).
const MAX_BUCKETING_SECONDS: i64 = 31_536_000;

/// A time series collection's options, as `create` takes them (MongoDB's `timeseries`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct TimeseriesOptions {
    /// The field every measurement holds its time in (a BSON date), required.
    pub time_field: String,
    /// The field that identifies a series (a sensor, a host...), stored once per bucket.
    pub meta_field: Option<String>,
    /// `seconds` (the default), `minutes` or `hours`: how far apart a series' measurements
    /// usually are, which sets how long a span one bucket covers.
    pub granularity: Option<String>,
    /// The span one bucket covers, in seconds (with `bucket_rounding_seconds`, instead of a
    /// granularity).
    pub bucket_max_span_seconds: Option<i64>,
    /// What a bucket's start is rounded down to, in seconds (equal to the span).
    pub bucket_rounding_seconds: Option<i64>,
}

impl TimeseriesOptions {
    /// Options of a time series whose measurements hold their time in `time_field`.
    pub fn new(time_field: impl Into<String>) -> TimeseriesOptions {
        TimeseriesOptions {
            time_field: time_field.into(),
            ..TimeseriesOptions::default()
        }
    }

    /// The same options with a meta field.
    #[must_use]
    pub fn meta_field(mut self, field: impl Into<String>) -> Self {
        self.meta_field = Some(field.into());
        self
    }

    /// The same options with a granularity (`seconds`, `minutes` or `hours`).
    #[must_use]
    pub fn granularity(mut self, granularity: impl Into<String>) -> Self {
        self.granularity = Some(granularity.into());
        self
    }

    /// The same options with custom bucketing: a bucket spans `seconds` and starts at a
    /// multiple of `seconds`.
    #[must_use]
    pub fn bucketing(mut self, seconds: i64) -> Self {
        self.bucket_max_span_seconds = Some(seconds);
        self.bucket_rounding_seconds = Some(seconds);
        self
    }
}

/// A time series collection's layout, as the catalog keeps it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Timeseries {
    /// The fields and span the buckets are laid out by.
    pub(crate) spec: BucketSpec,
    /// The granularity named at creation (`None` with custom bucketing).
    pub(crate) granularity: Option<String>,
    /// What a bucket's start is rounded down to, in seconds.
    pub(crate) rounding_seconds: i64,
    /// The stored name of the collection holding the buckets.
    pub(crate) buckets: String,
    /// The TTL of measurements, if any.
    pub(crate) expire_after_seconds: Option<i64>,
}

impl Timeseries {
    /// Checks `options` as MongoDB does (InvalidOptions, 72, naming the problem) and lays
    /// out the collection `name` whose buckets are stored as `buckets`.
    pub(crate) fn new(
        name: &str,
        options: &TimeseriesOptions,
        expire_after_seconds: Option<i64>,
        buckets: String,
    ) -> Result<Timeseries> {
        let refuse = |message: String| Err(Error::invalid_options(name, message));
        let top_level =
            |field: &str| !field.is_empty() && !field.contains('.') && !field.starts_with('$');
        if !top_level(&options.time_field) {
            return refuse(format!(
                "the time series 'timeField' must be a non-empty top-level field name without '.' or a leading '$', not '{}'",
                options.time_field
            ));
        }
        if let Some(meta) = &options.meta_field {
            if !top_level(meta) || meta == "_id" {
                return refuse(format!(
                    "the time series 'metaField' must be a top-level field name other than '_id', without '.' or a leading '$', not '{meta}'"
                ));
            }
            if *meta == options.time_field {
                return refuse("the time series 'timeField' and 'metaField' must differ".into());
            }
        }
        if let Some(seconds) = expire_after_seconds
            && seconds < 0
        {
            return refuse(format!(
                "'expireAfterSeconds' must be at least 0, not {seconds}"
            ));
        }
        let (granularity, span, rounding) = match (
            options.granularity.as_deref(),
            options.bucket_max_span_seconds,
            options.bucket_rounding_seconds,
        ) {
            (Some(_), Some(_), _) | (Some(_), _, Some(_)) => {
                return refuse(
                    "a time series takes either 'granularity' or 'bucketMaxSpanSeconds' with 'bucketRoundingSeconds', not both".into(),
                );
            }
            (granularity, None, None) => {
                let granularity = granularity.unwrap_or("seconds");
                let (span, rounding) = match granularity {
                    "seconds" => (3_600, 60),
                    "minutes" => (86_400, 3_600),
                    "hours" => (2_592_000, 86_400),
                    other => {
                        return refuse(format!(
                            "the time series 'granularity' must be 'seconds', 'minutes' or 'hours', not '{other}'"
                        ));
                    }
                };
                (Some(granularity.to_string()), span, rounding)
            }
            (None, Some(span), Some(rounding)) => {
                if span != rounding {
                    return refuse(
                        "the time series 'bucketMaxSpanSeconds' and 'bucketRoundingSeconds' must be equal".into(),
                    );
                }
                if !(1..=MAX_BUCKETING_SECONDS).contains(&span) {
                    return refuse(format!(
                        "the time series 'bucketMaxSpanSeconds' must be between 1 and {MAX_BUCKETING_SECONDS}, not {span}"
                    ));
                }
                (None, span, rounding)
            }
            (None, _, _) => {
                return refuse(
                    "the time series 'bucketMaxSpanSeconds' and 'bucketRoundingSeconds' must be given together".into(),
                );
            }
        };
        Ok(Timeseries {
            spec: BucketSpec {
                time_field: options.time_field.clone(),
                meta_field: options.meta_field.clone(),
                max_span_seconds: span,
            },
            granularity,
            rounding_seconds: rounding,
            buckets,
            expire_after_seconds,
        })
    }

    /// The options as `create` took them, with the span MongoDB lists beside a granularity.
    pub(crate) fn options(&self) -> TimeseriesOptions {
        TimeseriesOptions {
            time_field: self.spec.time_field.clone(),
            meta_field: self.spec.meta_field.clone(),
            granularity: self.granularity.clone(),
            bucket_max_span_seconds: Some(self.spec.max_span_seconds),
            bucket_rounding_seconds: self.granularity.is_none().then_some(self.rounding_seconds),
        }
    }

    /// The catalog record's `timeseries` field.
    pub(crate) fn to_record(&self) -> Document {
        let mut record = doc! {
            "timeField": &self.spec.time_field,
            "bucketMaxSpanSeconds": self.spec.max_span_seconds,
            "bucketRoundingSeconds": self.rounding_seconds,
            "buckets": &self.buckets,
        };
        if let Some(meta) = &self.spec.meta_field {
            record.insert("metaField", meta);
        }
        if let Some(granularity) = &self.granularity {
            record.insert("granularity", granularity);
        }
        if let Some(seconds) = self.expire_after_seconds {
            record.insert("expireAfterSeconds", seconds);
        }
        record
    }

    /// Reads a catalog record's `timeseries` field; `None` if it is not one.
    pub(crate) fn from_record(record: &Document) -> Option<Timeseries> {
        Some(Timeseries {
            spec: BucketSpec {
                time_field: record.get_str("timeField").ok()?.to_string(),
                meta_field: record.get_str("metaField").ok().map(str::to_string),
                max_span_seconds: record.get_i64("bucketMaxSpanSeconds").ok()?,
            },
            granularity: record.get_str("granularity").ok().map(str::to_string),
            rounding_seconds: record.get_i64("bucketRoundingSeconds").ok()?,
            buckets: record.get_str("buckets").ok()?.to_string(),
            expire_after_seconds: record.get_i64("expireAfterSeconds").ok(),
        })
    }

    /// The key pattern, in the measurements' terms, of the buckets' index `bucket_keys`
    /// (what `timeseries::create_index` made of it); `None` for the buckets'
    /// internal indexes (the TTL index on `control.max`) and anything else.
    pub(crate) fn user_index_keys(&self, bucket_keys: &Document) -> Option<Document> {
        let min = format!("control.min.{}", self.spec.time_field);
        let max = format!("control.max.{}", self.spec.time_field);
        let mut keys = Document::new();
        let mut fields = bucket_keys.iter().peekable();
        while let Some((path, direction)) = fields.next() {
            if let Some(rest) = path.strip_prefix("meta")
                && (rest.is_empty() || rest.starts_with('.'))
            {
                keys.insert(
                    format!("{}{rest}", self.spec.meta_field.as_ref()?),
                    direction.clone(),
                );
                continue;
            }
            let pair = fields.next().map(|(next, _)| next.as_str());
            match (path.as_str(), pair) {
                (first, Some(second)) if first == min && second == max => {}
                (first, Some(second)) if first == max && second == min => {}
                _ => return None,
            }
            keys.insert(self.spec.time_field.clone(), direction.clone());
        }
        Some(keys)
    }

    /// The buckets' index that finds the bucket a measurement joins:
    /// `{ meta: 1, control.min.<time>: 1, control.max.<time>: 1 }` (without `meta` when the
    /// collection has no meta field).
    pub(crate) fn routing_index(&self) -> Document {
        let mut keys = Document::new();
        if self.spec.meta_field.is_some() {
            keys.insert("meta", 1);
        }
        keys.insert(format!("control.min.{}", self.spec.time_field), 1);
        keys.insert(format!("control.max.{}", self.spec.time_field), 1);
        keys
    }
}

/// MongoDB's error for what a time series collection does not take.
pub(crate) fn not_supported_on_timeseries(collection: &str, what: &str) -> Error {
    Error::invalid_options(
        collection,
        format!("{what} is not supported on the time series collection '{collection}'"),
    )
    .with_code(crate::error::codes::COMMAND_NOT_SUPPORTED)
}
