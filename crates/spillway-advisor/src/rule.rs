//! The rule that turns a field's length distribution into a proposal, or into the reason
//! why none is made.
//!
//! In order:
//!
//! 1. **Small arrays are left alone.** When no document holds more than
//!    [`AdvisorOptions::small_array_max`] elements (50) the field gets no proposal: a pattern
//!    would cost more (a second collection, more complex writes) than it saves.
//! 2. **Subset when the elements carry a time.** When the elements are sub-documents with a
//!    date-like field (see [`super::is_date_like_name`]), reads usually want the newest: the
//!    proposal is the Subset pattern keeping the [`AdvisorOptions::subset_keep`] (10) newest,
//!    sorted by that field descending. It needs no tail: every document longer than the
//!    subset benefits.
//! 3. **Otherwise Outlier, only for a tail.** The distribution must have one: the longest
//!    array must hold at least [`AdvisorOptions::tail_ratio`] (2) times the 90th percentile.
//!    The threshold is the 99th percentile of lengths (the 90th when the 99th is the longest
//!    array itself, as in small collections or fat tails), raised to at least
//!    [`AdvisorOptions::min_threshold`] (10), then rounded *up* to one significant digit
//!    (285 → 300, 181 → 200, 13 → 20), so that typical documents stay whole and the figure
//!    is one a person would choose. When that threshold would move nothing there is no
//!    proposal.
//!
//! The percentiles are nearest-rank ([`super::ValueCounts::percentile`]).

use super::{
    AdvisorOptions, Distribution, Proposal, ProposalKind, SortDirection, SortKey, TimeField,
    ValueCounts, histogram::group_digits,
};

/// Proposes a policy for the array at `field`, or says why none fits.
pub(crate) fn assess(
    collection: &str,
    field: &str,
    lengths: &ValueCounts,
    time_field: Option<&TimeField>,
    options: &AdvisorOptions,
) -> Result<Proposal, String> {
    let Some(distribution) = lengths.distribution() else {
        return Err("no document holds an array here".to_owned());
    };
    if distribution.max <= options.small_array_max {
        return Err(format!(
            "arrays stay small: the longest holds {} elements (arrays of at most {} are left alone)",
            group_digits(distribution.max),
            options.small_array_max
        ));
    }
    let (kind, reason) = if let Some(time_field) = time_field {
        let keep = options.subset_keep;
        let reason = format!(
            "the elements are sub-documents ordered in time by `{}` ({} in {} of elements), \
             so reads that want the newest need only the top {keep}; every element stays in \
             the archive collection",
            time_field.field,
            time_field.evidence.describe(),
            percent(time_field.elements, lengths.sum()),
        );
        let sort_by = SortKey {
            field: time_field.field.clone(),
            direction: SortDirection::Descending,
        };
        (ProposalKind::Subset { keep, sort_by }, reason)
    } else {
        let threshold = outlier_threshold(&distribution, options)?;
        let basis = if distribution.p99 < distribution.max {
            format!("the 99th percentile {}", group_digits(distribution.p99))
        } else {
            format!(
                "the 90th percentile {} (the 99th is the longest array itself)",
                group_digits(distribution.p90)
            )
        };
        let reason = format!(
            "a long tail: half of the documents hold at most {} elements and 90% at most {}, \
             but the longest holds {}; the threshold is {basis}, at least {}, rounded up to \
             one significant digit",
            group_digits(distribution.median),
            group_digits(distribution.p90),
            group_digits(distribution.max),
            options.min_threshold,
        );
        (ProposalKind::Outlier { threshold }, reason)
    };
    let cut = kind.kept_in_main();
    let elements_moved = lengths.excess_above(cut);
    let total_elements = lengths.sum();
    Ok(Proposal {
        collection: collection.to_owned(),
        field: field.to_owned(),
        kind,
        elements_moved,
        total_elements,
        share_moved: share(elements_moved, total_elements),
        documents_affected: lengths.count_above(cut),
        documents_with_field: lengths.len(),
        reason,
    })
}

/// The Outlier threshold for a length distribution, by the rule in this module's docs, or
/// why there is none (no tail, or nothing would move).
pub fn outlier_threshold(
    distribution: &Distribution,
    options: &AdvisorOptions,
) -> Result<u64, String> {
    let tail_start = distribution.p90.max(1).saturating_mul(options.tail_ratio);
    if distribution.max < tail_start {
        return Err(format!(
            "no tail: the longest array ({}) holds less than {}× the 90th percentile ({})",
            group_digits(distribution.max),
            options.tail_ratio,
            group_digits(distribution.p90)
        ));
    }
    let base = if distribution.p99 < distribution.max {
        distribution.p99
    } else {
        distribution.p90
    };
    let threshold = round_up_one_significant_digit(base.max(options.min_threshold));
    if threshold >= distribution.max {
        return Err(format!(
            "no tail beyond a round threshold: {} would already hold the longest array ({})",
            group_digits(threshold),
            group_digits(distribution.max)
        ));
    }
    Ok(threshold)
}

/// The smallest number of the form `d × 10^k` (one significant digit) that is `>= value`:
/// 0 → 0, 7 → 7, 10 → 10, 13 → 20, 285 → 300, 950 → 1000.
pub fn round_up_one_significant_digit(value: u64) -> u64 {
    if value < 10 {
        return value;
    }
    let magnitude = 10u64.pow(value.ilog10());
    value.div_ceil(magnitude).saturating_mul(magnitude)
}

/// `part / whole`, 0 for an empty whole.
pub(crate) fn share(part: u64, whole: u64) -> f64 {
    if whole == 0 {
        0.0
    } else {
        part as f64 / whole as f64
    }
}

/// `"4.9%"`; shares under 0.1% that are not zero print as `"<0.1%"`.
pub(crate) fn percent(part: u64, whole: u64) -> String {
    format_share(share(part, whole))
}

pub(crate) fn format_share(share: f64) -> String {
    if share > 0.0 && share < 0.001 {
        "<0.1%".to_owned()
    } else {
        format!("{:.1}%", share * 100.0)
    }
}
