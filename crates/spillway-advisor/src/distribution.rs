//! Counted samples of non-negative integers (array lengths, document sizes) and their
//! nearest-rank percentiles.
//!
//! Samples are kept as value → number of occurrences, so memory grows with the number of
//! *distinct* values, never with the number of documents observed. This module only counts:
//! it must never decide anything about patterns.

use std::collections::BTreeMap;

/// A multiset of non-negative integers, kept as value → count.
///
/// Every question the advisor asks of a field's lengths is answered from here: the
/// percentiles of [`Distribution`], how many documents exceed a threshold
/// ([`ValueCounts::count_above`]) and how many elements a threshold would move
/// ([`ValueCounts::excess_above`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ValueCounts {
    counts: BTreeMap<u64, u64>,
    len: u64,
    sum: u64,
}

impl ValueCounts {
    /// An empty multiset.
    pub fn new() -> ValueCounts {
        ValueCounts::default()
    }

    /// Adds one occurrence of `value`.
    pub fn add(&mut self, value: u64) {
        self.add_times(value, 1);
    }

    /// Adds `times` occurrences of `value`.
    pub fn add_times(&mut self, value: u64, times: u64) {
        if times == 0 {
            return;
        }
        *self.counts.entry(value).or_insert(0) += times;
        self.len += times;
        self.sum += value * times;
    }

    /// The number of samples (with repetitions).
    pub fn len(&self) -> u64 {
        self.len
    }

    /// Whether no sample was added.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The sum of all samples (for array lengths: the number of elements).
    pub fn sum(&self) -> u64 {
        self.sum
    }

    /// The smallest sample.
    pub fn min(&self) -> Option<u64> {
        self.counts.keys().next().copied()
    }

    /// The largest sample.
    pub fn max(&self) -> Option<u64> {
        self.counts.keys().next_back().copied()
    }

    /// The nearest-rank `percent`-th percentile: the smallest sample `v` such that at least
    /// `percent`% of the samples are `<= v`. With the samples sorted ascending and numbered
    /// from 1, it is the sample at rank `ceil(percent / 100 * n)` (rank 1 for `percent == 0`).
    /// Always one of the samples, never an interpolation; the median is the lower median.
    /// `None` when there are no samples. `percent` above 100 counts as 100.
    pub fn percentile(&self, percent: u8) -> Option<u64> {
        if self.len == 0 {
            return None;
        }
        let percent = u128::from(percent.min(100));
        // ceil(percent * n / 100) in integers, so that p99 of 100 samples is rank 99, not 100
        // through a rounding error.
        let rank = (percent * u128::from(self.len)).div_ceil(100).max(1);
        let mut seen = 0u128;
        for (&value, &count) in &self.counts {
            seen += u128::from(count);
            if seen >= rank {
                return Some(value);
            }
        }
        unreachable!("rank {rank} is at most the number of samples {}", self.len)
    }

    /// The number of samples strictly greater than `threshold`.
    pub fn count_above(&self, threshold: u64) -> u64 {
        self.above(threshold).map(|(_, count)| count).sum()
    }

    /// The sum over the samples greater than `threshold` of `sample - threshold`: for array
    /// lengths, the number of elements that keeping only `threshold` per document moves out.
    pub fn excess_above(&self, threshold: u64) -> u64 {
        self.above(threshold)
            .map(|(value, count)| (value - threshold) * count)
            .sum()
    }

    /// The distinct samples with their counts, ascending.
    pub fn iter(&self) -> impl Iterator<Item = (u64, u64)> + '_ {
        self.counts.iter().map(|(&value, &count)| (value, count))
    }

    /// The summary of the samples, `None` when there are none.
    pub fn distribution(&self) -> Option<Distribution> {
        Some(Distribution {
            count: self.len,
            min: self.min()?,
            median: self.percentile(50)?,
            p90: self.percentile(90)?,
            p99: self.percentile(99)?,
            max: self.max()?,
            sum: self.sum,
        })
    }

    fn above(&self, threshold: u64) -> impl Iterator<Item = (u64, u64)> + '_ {
        self.counts
            .range(threshold.saturating_add(1)..)
            .map(|(&value, &count)| (value, count))
            .filter(move |&(value, _)| value > threshold)
    }
}

impl FromIterator<u64> for ValueCounts {
    fn from_iter<I: IntoIterator<Item = u64>>(values: I) -> ValueCounts {
        let mut counts = ValueCounts::new();
        for value in values {
            counts.add(value);
        }
        counts
    }
}

/// A five-number summary (plus count and sum) of a set of samples. Percentiles are
/// nearest-rank (see [`ValueCounts::percentile`]): each is one of the samples.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Distribution {
    /// The number of samples.
    pub count: u64,
    /// The smallest sample.
    pub min: u64,
    /// The nearest-rank 50th percentile (the lower median for an even count).
    pub median: u64,
    /// The nearest-rank 90th percentile.
    pub p90: u64,
    /// The nearest-rank 99th percentile.
    pub p99: u64,
    /// The largest sample.
    pub max: u64,
    /// The sum of the samples.
    pub sum: u64,
}
