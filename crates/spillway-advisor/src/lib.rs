//! spillway-advisor: reads a collection's documents once and says which arrays deserve a
//! pattern. Its own crate, so that the pattern engine does not ship histograms and SVG
//! drawing; the CLI's `spillway advise` uses it.
//!
//! For every array field (top-level, or inside sub-documents as a dotted path; arrays nested
//! inside arrays are not fields of their own) it measures the distribution of lengths, and
//! for the collection the distribution of document sizes in BSON bytes; it remembers the
//! documents with the longest arrays and the largest documents; and it proposes, per field,
//! the Outlier pattern with a threshold or the Subset pattern with a sort key, together with
//! the share of elements the policy would move out of the main documents. The rule is in
//! the `rule` module's docs (summarised on [`Advisor`]).
//!
//! ```
//! use spillway_advisor::{Advisor, ProposalKind};
//! use spillway_doc::bson::doc;
//!
//! let mut advisor = Advisor::new("sales");
//! for book in 0..200u32 {
//!     let buyers = if book == 7 { 5_000 } else { book % 12 };
//!     let customers: Vec<String> = (0..buyers).map(|i| format!("user{i}")).collect();
//!     advisor.observe(&doc! { "_id": book, "customers_purchased": customers })?;
//! }
//! let report = advisor.finish();
//! let proposal = report.proposals().next().expect("book 7 is an outlier");
//! assert_eq!(proposal.kind, ProposalKind::Outlier { threshold: 20 });
//! println!("{report}");
//! # Ok::<(), spillway_advisor::AdviceError>(())
//! ```
//!
//! Memory: the advisor never keeps documents. Per field it keeps array lengths as
//! value → count (so memory grows with the number of distinct lengths), a bounded tally of
//! candidate time fields, and the `top_k` longest arrays with their `_id`; per collection the
//! sizes, likewise counted, and the `top_k` largest documents. At most `max_fields`
//! distinct paths are analysed, so that documents with dynamic keys cannot exhaust memory.
//!
//! The advisor only reads: it must never change documents, and it knows nothing about
//! storage. Applying a proposal is the policy engine's job.

mod distribution;
mod histogram;
mod report;
mod rule;
mod sort_key;
mod top;

use std::collections::BTreeMap;
use std::fmt;

use spillway_doc::bson::{self, Bson, Document, RawArray, RawBsonRef, RawDocument, RawDocumentBuf};
use spillway_doc::size::MAX_NESTING_DEPTH;

pub use distribution::{Distribution, ValueCounts};
pub use histogram::{DEFAULT_BAR_WIDTH, Histogram, HistogramBucket};
pub use report::{
    AdviceReport, ArrayOutlier, DocumentRef, FieldReport, Moved, Proposal, ProposalKind,
    SortDirection, SortKey, TimeField,
};
pub use rule::{outlier_threshold, round_up_one_significant_digit};
pub use sort_key::{SortKeyEvidence, is_date_like_name};

use sort_key::{SortKeyTally, classify};
use top::TopK;

/// The knobs of the advisor's rule. The defaults are the documented rule; the CLI may expose
/// some of them.
#[derive(Debug, Clone, PartialEq)]
pub struct AdvisorOptions {
    /// No Outlier threshold below this (10).
    pub min_threshold: u64,
    /// Fields whose arrays never exceed this length get no proposal (50).
    pub small_array_max: u64,
    /// A tail exists when the longest array holds at least this many times the 90th
    /// percentile (2).
    pub tail_ratio: u64,
    /// How many elements a proposed Subset keeps in the main document (10).
    pub subset_keep: u64,
    /// The share of a field's elements that must carry the same time field for a Subset
    /// proposal (0.9).
    pub sort_key_coverage: f64,
    /// How many of the longest arrays per field, and of the largest documents, are
    /// remembered with their `_id` (10).
    pub top_k: usize,
    /// The most distinct array paths analysed (1,000); arrays at further paths are counted
    /// in [`AdviceReport::untracked_arrays`].
    pub max_fields: usize,
}

impl Default for AdvisorOptions {
    fn default() -> AdvisorOptions {
        AdvisorOptions {
            min_threshold: 10,
            small_array_max: 50,
            tail_ratio: 2,
            subset_keep: 10,
            sort_key_coverage: 0.9,
            top_k: 10,
            max_fields: 1_000,
        }
    }
}

/// A document the advisor could not read. The advisor is unchanged by a failed
/// observation.
#[derive(Debug)]
#[non_exhaustive]
pub enum AdviceError {
    /// Raw bytes that are not a valid BSON document.
    Malformed {
        /// The collection being advised on.
        collection: String,
        /// The 0-based position of the document in the order of observation.
        position: u64,
        /// What the BSON reader found.
        source: bson::error::Error,
    },
    /// A decoded document that cannot be encoded as BSON (e.g. a key containing NUL).
    Unencodable {
        /// The collection being advised on.
        collection: String,
        /// The 0-based position of the document in the order of observation.
        position: u64,
        /// What the BSON writer found.
        source: bson::error::Error,
    },
}

impl fmt::Display for AdviceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AdviceError::Malformed {
                collection,
                position,
                source,
            } => write!(
                f,
                "advisor: document #{position} of collection '{collection}' is not valid BSON: {source}"
            ),
            AdviceError::Unencodable {
                collection,
                position,
                source,
            } => write!(
                f,
                "advisor: document #{position} of collection '{collection}' cannot be encoded as BSON: {source}"
            ),
        }
    }
}

impl std::error::Error for AdviceError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            // The message already says `source`; give what it does not say.
            AdviceError::Malformed { source, .. } | AdviceError::Unencodable { source, .. } => {
                source.source()
            }
        }
    }
}

/// Streams over a collection's documents and then proposes policies.
///
/// Feed every document to [`Advisor::observe`] (decoded) or [`Advisor::observe_raw`] (raw
/// BSON, as stored), then call [`Advisor::finish`]. Per array field, the rule is:
///
/// 1. arrays that never exceed 50 elements get no proposal;
/// 2. arrays of sub-documents that carry a time (a BSON date, or a number or ISO string under
///    a date-like name such as `created_at`) in at least 90% of elements get the **Subset**
///    pattern: keep the 10 newest, sorted by that field descending;
/// 3. other arrays get the **Outlier** pattern only when their lengths have a tail (the
///    longest is at least twice the 90th percentile), with the threshold at the 99th
///    percentile of lengths (the 90th when the 99th is the longest itself), at least 10,
///    rounded up to one significant digit (285 → 300); no proposal when that would move
///    nothing.
#[derive(Debug, Clone)]
pub struct Advisor {
    collection: String,
    options: AdvisorOptions,
    documents: u64,
    sizes: ValueCounts,
    largest_documents: TopK<DocumentRef>,
    fields: BTreeMap<String, FieldTally>,
    untracked_arrays: u64,
}

#[derive(Debug, Clone)]
struct FieldTally {
    lengths: ValueCounts,
    sort_keys: SortKeyTally,
    largest: TopK<ArrayOutlier>,
}

/// One array of the document being observed, before it is committed to the tallies.
struct ArrayObservation {
    path: String,
    length: u64,
    sort_keys: SortKeyTally,
}

impl Advisor {
    /// An advisor for `collection` with the default rule.
    pub fn new(collection: impl Into<String>) -> Advisor {
        Advisor::with_options(collection, AdvisorOptions::default())
    }

    /// An advisor for `collection` with other knobs.
    pub fn with_options(collection: impl Into<String>, options: AdvisorOptions) -> Advisor {
        Advisor {
            collection: collection.into(),
            largest_documents: TopK::new(options.top_k),
            options,
            documents: 0,
            sizes: ValueCounts::new(),
            fields: BTreeMap::new(),
            untracked_arrays: 0,
        }
    }

    /// The collection's name.
    pub fn collection(&self) -> &str {
        &self.collection
    }

    /// How many documents were observed so far.
    pub fn documents(&self) -> u64 {
        self.documents
    }

    /// Observes one decoded document (encoded once to measure its size).
    pub fn observe(&mut self, document: &Document) -> Result<(), AdviceError> {
        let raw =
            RawDocumentBuf::try_from(document).map_err(|source| AdviceError::Unencodable {
                collection: self.collection.clone(),
                position: self.documents,
                source,
            })?;
        self.observe_raw(&raw)
    }

    /// Observes one raw BSON document, as stored. Its size is its byte length.
    pub fn observe_raw(&mut self, document: &RawDocument) -> Result<(), AdviceError> {
        let position = self.documents;
        let malformed = |source| AdviceError::Malformed {
            collection: self.collection.clone(),
            position,
            source,
        };
        // Read everything first so that a malformed document leaves the tallies untouched.
        let mut arrays = Vec::new();
        collect_arrays(document, &mut String::new(), 0, &mut arrays).map_err(malformed)?;
        let raw_id = document.get("_id").map_err(malformed)?;
        let id = match raw_id {
            Some(raw_id) => Some(Bson::try_from(raw_id).map_err(malformed)?),
            None => None,
        };
        let size = document.as_bytes().len() as u64;
        let this_document = DocumentRef { id, position, size };

        self.documents += 1;
        self.sizes.add(size);
        if self.largest_documents.would_keep(size) {
            self.largest_documents
                .offer(size, position, this_document.clone());
        }
        for array in arrays {
            let tally = if let Some(tally) = self.fields.get_mut(&array.path) {
                tally
            } else if self.fields.len() < self.options.max_fields {
                self.fields.entry(array.path).or_insert_with(|| FieldTally {
                    lengths: ValueCounts::new(),
                    sort_keys: SortKeyTally::default(),
                    largest: TopK::new(self.options.top_k),
                })
            } else {
                self.untracked_arrays += 1;
                continue;
            };
            tally.lengths.add(array.length);
            tally.sort_keys.merge(&array.sort_keys);
            if tally.largest.would_keep(array.length) {
                tally.largest.offer(
                    array.length,
                    position,
                    ArrayOutlier {
                        document: this_document.clone(),
                        length: array.length,
                    },
                );
            }
        }
        Ok(())
    }

    /// The report: distributions, outliers and proposals.
    pub fn finish(self) -> AdviceReport {
        let Advisor {
            collection,
            options,
            documents,
            sizes,
            largest_documents,
            fields,
            untracked_arrays,
        } = self;
        let fields = fields
            .into_iter()
            .filter_map(|(path, tally)| {
                let distribution = tally.lengths.distribution()?;
                let time_field = tally
                    .sort_keys
                    .best(tally.lengths.sum(), options.sort_key_coverage)
                    .map(|candidate| TimeField {
                        field: candidate.field,
                        evidence: candidate.evidence,
                        elements: candidate.elements,
                    });
                let (proposal, no_proposal) = match rule::assess(
                    &collection,
                    &path,
                    &tally.lengths,
                    time_field.as_ref(),
                    &options,
                ) {
                    Ok(proposal) => (Some(proposal), None),
                    Err(why) => (None, Some(why)),
                };
                Some(FieldReport {
                    path,
                    distribution,
                    document_elements: tally.sort_keys.document_elements,
                    time_field,
                    largest: tally.largest.into_sorted(),
                    lengths: tally.lengths,
                    proposal,
                    no_proposal,
                })
            })
            .collect();
        AdviceReport {
            collection,
            documents,
            document_sizes: sizes,
            largest_documents: largest_documents.into_sorted(),
            fields,
            untracked_arrays,
        }
    }
}

/// Finds the arrays of `document` at `prefix` and below, through sub-documents only.
fn collect_arrays(
    document: &RawDocument,
    prefix: &mut String,
    depth: usize,
    arrays: &mut Vec<ArrayObservation>,
) -> bson::error::Result<()> {
    for element in document {
        let (key, value) = element?;
        let prefix_len = prefix.len();
        match value {
            RawBsonRef::Document(sub_document) if depth + 1 < MAX_NESTING_DEPTH => {
                prefix.push_str(key.as_str());
                prefix.push('.');
                let walked = collect_arrays(sub_document, prefix, depth + 1, arrays);
                prefix.truncate(prefix_len);
                walked?;
            }
            RawBsonRef::Array(array) => {
                prefix.push_str(key.as_str());
                let observation = observe_array(prefix.clone(), array);
                prefix.truncate(prefix_len);
                arrays.push(observation?);
            }
            _ => {}
        }
    }
    Ok(())
}

/// Counts the elements of one array and the time-like fields of its sub-document elements.
fn observe_array(path: String, array: &RawArray) -> bson::error::Result<ArrayObservation> {
    let mut length = 0;
    let mut sort_keys = SortKeyTally::default();
    for element in array {
        length += 1;
        if let RawBsonRef::Document(element) = element? {
            sort_keys.document_elements += 1;
            for field in element {
                let (name, value) = field?;
                let name = name.as_str();
                if let Some(evidence) = classify(name, value) {
                    sort_keys.record(name, evidence, 1);
                }
            }
        }
    }
    Ok(ArrayObservation {
        path,
        length,
        sort_keys,
    })
}
