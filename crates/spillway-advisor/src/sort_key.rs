//! Recognising a "newest first" sort key among the fields of array elements.
//!
//! The Subset pattern fits an array whose elements carry an order that reads care about,
//! typically a date (the seed's `published_date`). This module looks at each sub-document
//! element's top-level fields and counts the values that look like points in time:
//!
//! - a BSON date or a BSON timestamp, under any name;
//! - a number (int32, int64, double) under a date-like name (`timestamp`, `ts`, `created`,
//!   `*_date`, `*_at`, `*_time`, `createdAt`, `publishedDate`...), such as Unix seconds;
//! - a string under a date-like name that starts like an ISO 8601 date (`2019-02-18...`).
//!
//! A field qualifies as the sort key when at least [`super::AdvisorOptions::sort_key_coverage`]
//! of the array's elements are sub-documents and that share of them hold such a value there.
//! Only a bounded number of candidate names is tracked per array so that documents with
//! dynamic keys cannot grow the advisor's memory.

use std::collections::BTreeMap;

use spillway_doc::bson::RawBsonRef;

/// The most candidate sort-key names tracked per array field; later names are ignored.
pub(crate) const MAX_CANDIDATES: usize = 64;

/// Why a field was taken for a point in time, strongest first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum SortKeyEvidence {
    /// BSON dates (or BSON timestamps).
    DateValues,
    /// Numbers under a date-like name, such as Unix timestamps.
    NumbersWithDateName,
    /// ISO 8601 strings under a date-like name.
    IsoStringsWithDateName,
}

impl SortKeyEvidence {
    /// A short description for reports: `"BSON dates"`, `"numbers named like a time"`, ...
    pub fn describe(self) -> &'static str {
        match self {
            SortKeyEvidence::DateValues => "BSON dates",
            SortKeyEvidence::NumbersWithDateName => "numbers named like a time",
            SortKeyEvidence::IsoStringsWithDateName => "ISO date strings",
        }
    }

    fn index(self) -> usize {
        match self {
            SortKeyEvidence::DateValues => 0,
            SortKeyEvidence::NumbersWithDateName => 1,
            SortKeyEvidence::IsoStringsWithDateName => 2,
        }
    }

    const ALL: [SortKeyEvidence; 3] = [
        SortKeyEvidence::DateValues,
        SortKeyEvidence::NumbersWithDateName,
        SortKeyEvidence::IsoStringsWithDateName,
    ];
}

/// Classifies one element field: `Some` when `value` looks like a point in time.
pub(crate) fn classify(name: &str, value: RawBsonRef<'_>) -> Option<SortKeyEvidence> {
    match value {
        RawBsonRef::DateTime(_) | RawBsonRef::Timestamp(_) => Some(SortKeyEvidence::DateValues),
        RawBsonRef::Int32(_) | RawBsonRef::Int64(_) | RawBsonRef::Double(_)
            if is_date_like_name(name) =>
        {
            Some(SortKeyEvidence::NumbersWithDateName)
        }
        RawBsonRef::String(text) if is_date_like_name(name) && starts_like_iso_date(text) => {
            Some(SortKeyEvidence::IsoStringsWithDateName)
        }
        _ => None,
    }
}

/// Whether a field name reads like a point in time: `date`, `time`, `timestamp`, `ts`,
/// `created`, `updated`, `modified`, `published`, `posted`, anything ending in `_date`,
/// `_at`, `_time`, `_ts`, `_on`, `_timestamp`, and camelCase `…Date`, `…At`, `…Time`,
/// `…Timestamp`.
pub fn is_date_like_name(name: &str) -> bool {
    const EXACT: [&str; 9] = [
        "date",
        "time",
        "timestamp",
        "ts",
        "created",
        "updated",
        "modified",
        "published",
        "posted",
    ];
    const SNAKE_SUFFIXES: [&str; 6] = ["_date", "_at", "_time", "_ts", "_on", "_timestamp"];
    const CAMEL_SUFFIXES: [&str; 4] = ["Date", "At", "Time", "Timestamp"];
    let lower = name.to_ascii_lowercase();
    if EXACT.contains(&lower.as_str()) {
        return true;
    }
    if SNAKE_SUFFIXES
        .iter()
        .any(|suffix| lower.len() > suffix.len() && lower.ends_with(suffix))
    {
        return true;
    }
    CAMEL_SUFFIXES.iter().any(|suffix| {
        name.strip_suffix(suffix)
            .and_then(|stem| stem.chars().next_back())
            .is_some_and(|last| last.is_ascii_lowercase() || last.is_ascii_digit())
    })
}

/// `YYYY-MM-DD` at the start.
fn starts_like_iso_date(text: &str) -> bool {
    let bytes = text.as_bytes();
    bytes.len() >= 10
        && bytes[..4].iter().all(u8::is_ascii_digit)
        && bytes[4] == b'-'
        && bytes[5..7].iter().all(u8::is_ascii_digit)
        && bytes[7] == b'-'
        && bytes[8..10].iter().all(u8::is_ascii_digit)
}

/// Per array field: how many elements are sub-documents, and per candidate name how many of
/// them hold a point in time there, by kind of evidence.
#[derive(Debug, Clone, Default)]
pub(crate) struct SortKeyTally {
    pub(crate) document_elements: u64,
    candidates: BTreeMap<String, [u64; 3]>,
}

impl SortKeyTally {
    pub(crate) fn record(&mut self, name: &str, evidence: SortKeyEvidence, times: u64) {
        if let Some(counts) = self.candidates.get_mut(name) {
            counts[evidence.index()] += times;
        } else if self.candidates.len() < MAX_CANDIDATES {
            let mut counts = [0; 3];
            counts[evidence.index()] = times;
            self.candidates.insert(name.to_owned(), counts);
        }
    }

    pub(crate) fn merge(&mut self, other: &SortKeyTally) {
        self.document_elements += other.document_elements;
        for (name, counts) in &other.candidates {
            for evidence in SortKeyEvidence::ALL {
                let times = counts[evidence.index()];
                if times > 0 {
                    self.record(name, evidence, times);
                }
            }
        }
    }

    /// The best candidate: present as a point in time in at least `coverage` of all
    /// `total_elements`; stronger evidence first, then higher coverage, then name order.
    pub(crate) fn best(&self, total_elements: u64, coverage: f64) -> Option<SortKeyCandidate> {
        if total_elements == 0 {
            return None;
        }
        let needed = (coverage * total_elements as f64).ceil() as u64;
        self.candidates
            .iter()
            .filter_map(|(name, counts)| {
                let present: u64 = counts.iter().sum();
                if present < needed.max(1) {
                    return None;
                }
                // The kind seen most often describes the field; ties go to the stronger kind.
                let evidence = SortKeyEvidence::ALL
                    .into_iter()
                    .max_by_key(|evidence| {
                        (
                            counts[evidence.index()],
                            std::cmp::Reverse(evidence.index()),
                        )
                    })
                    .expect("three kinds");
                Some(SortKeyCandidate {
                    field: name.clone(),
                    evidence,
                    elements: present,
                })
            })
            .min_by(|a, b| {
                a.evidence
                    .cmp(&b.evidence)
                    .then(b.elements.cmp(&a.elements))
                    .then(a.field.cmp(&b.field))
            })
    }
}

/// A field of the elements that can order them in time.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SortKeyCandidate {
    pub(crate) field: String,
    pub(crate) evidence: SortKeyEvidence,
    /// How many elements hold a point in time in that field.
    pub(crate) elements: u64,
}
