//! Log-scale histograms of array lengths, drawn as terminal bars or as a small SVG chart.
//!
//! Array lengths in real collections span several orders of magnitude (most airports have a
//! handful of routes, a few have hundreds), so buckets double in width: `0`, `1`, `2-3`,
//! `4-7`, `8-15`... This module draws; it must never decide anything about patterns, and it
//! writes SVG by hand so that the crate carries no plotting dependency.

use std::fmt::{self, Write as _};

use super::distribution::ValueCounts;

/// The bar width, in characters, of a histogram shown with `{}` (`{:60}` picks another).
pub const DEFAULT_BAR_WIDTH: usize = 40;

/// One bucket of a [`Histogram`]: the documents whose value lies in `low..=high`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HistogramBucket {
    /// The smallest value in the bucket.
    pub low: u64,
    /// The largest value in the bucket.
    pub high: u64,
    /// How many samples fall in the bucket.
    pub count: u64,
}

impl HistogramBucket {
    /// `"0"`, `"1"`, `"2-3"`, `"512-1023"`.
    pub fn label(&self) -> String {
        if self.low == self.high {
            self.low.to_string()
        } else {
            format!("{}-{}", self.low, self.high)
        }
    }

    /// Whether `value` falls in this bucket.
    pub fn contains(&self, value: u64) -> bool {
        (self.low..=self.high).contains(&value)
    }
}

/// Counts per power-of-two bucket, from the bucket of `0` up to the bucket of the largest
/// sample, empty buckets included so that gaps in the tail stay visible.
///
/// `Display` draws one line per bucket: the label, a bar proportional to the count (at least
/// one character for any non-empty bucket, so that a single huge document still shows), and
/// the count. The formatter's width, if any, is the width of the longest bar.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Histogram {
    /// The buckets, in increasing order of value.
    pub buckets: Vec<HistogramBucket>,
}

impl Histogram {
    /// Buckets `0`, `1`, `2-3`, `4-7`, ... over `values`; no buckets when it is empty.
    pub fn log2(values: &ValueCounts) -> Histogram {
        let Some(max) = values.max() else {
            return Histogram {
                buckets: Vec::new(),
            };
        };
        let mut buckets: Vec<HistogramBucket> = (0..=bucket_index(max))
            .map(|bucket_idx| {
                let (low, high) = bucket_bounds(bucket_idx);
                HistogramBucket {
                    low,
                    high,
                    count: 0,
                }
            })
            .collect();
        for (value, count) in values.iter() {
            buckets[bucket_index(value)].count += count;
        }
        Histogram { buckets }
    }

    /// The same histogram without the empty buckets below the first non-empty one (document
    /// sizes never fall in the buckets of a few bytes).
    pub fn without_leading_empty(mut self) -> Histogram {
        let first_used = self
            .buckets
            .iter()
            .position(|bucket| bucket.count > 0)
            .unwrap_or(self.buckets.len());
        self.buckets.drain(..first_used);
        self
    }

    /// The largest bucket count (0 when there are no buckets).
    pub fn max_count(&self) -> u64 {
        self.buckets
            .iter()
            .map(|bucket| bucket.count)
            .max()
            .unwrap_or(0)
    }

    /// The histogram as lines of text with bars at most `bar_width` characters wide.
    pub fn render(&self, bar_width: usize) -> String {
        let label_width = self
            .buckets
            .iter()
            .map(|bucket| bucket.label().len())
            .max()
            .unwrap_or(0);
        let max_count = self.max_count();
        let mut out = String::new();
        for bucket in &self.buckets {
            let bar = "█".repeat(bar_length(bucket.count, max_count, bar_width));
            let count = if bucket.count == 0 {
                String::new()
            } else {
                format!(" {}", group_digits(bucket.count))
            };
            let label = bucket.label();
            writeln!(out, "{label:>label_width$} |{bar}{count}").expect("writing to a String");
        }
        out
    }

    /// A standalone SVG bar chart of the histogram, titled `title`, with `x_label` under the
    /// buckets (`"array length"`, `"bytes"`). With `marker`, a dashed
    /// vertical line marks that value (a proposed threshold), placed on the chart's log scale.
    pub fn to_svg(&self, title: &str, x_label: &str, marker: Option<(u64, &str)>) -> String {
        let mut out = String::new();
        svg_open(&mut out, CHART_WIDTH, CHART_HEIGHT);
        self.write_svg_chart(&mut out, 0.0, title, x_label, marker);
        out.push_str("</svg>\n");
        out
    }

    /// Writes one chart as an SVG group whose top edge is at `top`.
    pub(crate) fn write_svg_chart(
        &self,
        out: &mut String,
        top: f64,
        title: &str,
        x_label: &str,
        marker: Option<(u64, &str)>,
    ) {
        let plot_left = 60.0;
        let plot_right = f64::from(CHART_WIDTH) - 20.0;
        let plot_top = 40.0;
        let plot_bottom = f64::from(CHART_HEIGHT) - 60.0;
        let plot_height = plot_bottom - plot_top;
        let n_buckets = self.buckets.len().max(1) as f64;
        let slot_width = (plot_right - plot_left) / n_buckets;
        let max_count = self.max_count().max(1) as f64;

        let _ = writeln!(out, r#"<g transform="translate(0,{top})">"#);
        let _ = writeln!(
            out,
            r#"<text x="{}" y="22" font-size="15" font-weight="bold" text-anchor="middle">{}</text>"#,
            f64::from(CHART_WIDTH) / 2.0,
            xml_escape(title)
        );
        let _ = writeln!(
            out,
            r##"<line x1="{plot_left}" y1="{plot_bottom}" x2="{plot_right}" y2="{plot_bottom}" stroke="#333"/>"##
        );
        let _ = writeln!(
            out,
            r##"<line x1="{plot_left}" y1="{plot_top}" x2="{plot_left}" y2="{plot_bottom}" stroke="#333"/>"##
        );
        let _ = writeln!(
            out,
            r#"<text x="{}" y="{}" font-size="11" text-anchor="end">{}</text>"#,
            plot_left - 6.0,
            plot_top + 4.0,
            group_digits(self.max_count())
        );
        let _ = writeln!(
            out,
            r#"<text x="{}" y="{}" font-size="11" text-anchor="end">0</text>"#,
            plot_left - 6.0,
            plot_bottom + 4.0
        );
        let _ = writeln!(
            out,
            r#"<text x="16" y="{}" font-size="11" text-anchor="middle" transform="rotate(-90 16 {})">documents</text>"#,
            plot_top + plot_height / 2.0,
            plot_top + plot_height / 2.0
        );
        let _ = writeln!(
            out,
            r#"<text x="{}" y="{}" font-size="11" text-anchor="middle">{} (log-scale buckets)</text>"#,
            plot_left + (plot_right - plot_left) / 2.0,
            f64::from(CHART_HEIGHT) - 8.0,
            xml_escape(x_label)
        );
        for (bucket_idx, bucket) in self.buckets.iter().enumerate() {
            let slot_left = plot_left + slot_width * bucket_idx as f64;
            let center = slot_left + slot_width / 2.0;
            let mut height = plot_height * bucket.count as f64 / max_count;
            if bucket.count > 0 {
                // A lone document in the tail must stay visible.
                height = height.max(1.5);
            }
            let _ = writeln!(
                out,
                r##"<rect x="{:.1}" y="{:.1}" width="{:.1}" height="{:.1}" fill="#4a7ab8"><title>{}: {}</title></rect>"##,
                slot_left + slot_width * 0.1,
                plot_bottom - height,
                slot_width * 0.8,
                height,
                bucket.label(),
                bucket.count
            );
            if bucket.count > 0 {
                let _ = writeln!(
                    out,
                    r#"<text x="{center:.1}" y="{:.1}" font-size="10" text-anchor="middle">{}</text>"#,
                    plot_bottom - height - 3.0,
                    group_digits(bucket.count)
                );
            }
            let label_y = plot_bottom + 14.0;
            let _ = writeln!(
                out,
                r#"<text x="{center:.1}" y="{label_y:.1}" font-size="10" text-anchor="end" transform="rotate(-35 {center:.1} {label_y:.1})">{}</text>"#,
                bucket.label()
            );
        }
        if let Some((value, text)) = marker
            && let Some(bucket_idx) = self.buckets.iter().position(|b| b.contains(value))
        {
            let bucket = self.buckets[bucket_idx];
            // Position inside the bucket on the same log scale as the buckets themselves.
            let fraction = if bucket.low == bucket.high {
                0.5
            } else {
                let low = (bucket.low as f64).log2();
                let high = ((bucket.high + 1) as f64).log2();
                ((value as f64).log2() - low) / (high - low)
            };
            let x = plot_left + slot_width * (bucket_idx as f64 + fraction);
            let _ = writeln!(
                out,
                r##"<line x1="{x:.1}" y1="{plot_top}" x2="{x:.1}" y2="{plot_bottom}" stroke="#c0392b" stroke-dasharray="5,4"/>"##
            );
            let _ = writeln!(
                out,
                r##"<text x="{:.1}" y="{:.1}" font-size="11" fill="#c0392b">{}</text>"##,
                x + 4.0,
                plot_top + 12.0,
                xml_escape(text)
            );
        }
        out.push_str("</g>\n");
    }
}

impl fmt::Display for Histogram {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.render(f.width().unwrap_or(DEFAULT_BAR_WIDTH)))
    }
}

/// The size of one chart written by [`Histogram::to_svg`].
pub(crate) const CHART_WIDTH: u32 = 720;
pub(crate) const CHART_HEIGHT: u32 = 320;

pub(crate) fn svg_open(out: &mut String, width: u32, height: u32) {
    let _ = writeln!(
        out,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" viewBox="0 0 {width} {height}" font-family="sans-serif">"#
    );
    let _ = writeln!(
        out,
        r#"<rect width="{width}" height="{height}" fill="white"/>"#
    );
}

pub(crate) fn xml_escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for character in text.chars() {
        match character {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            other => out.push(other),
        }
    }
    out
}

/// `1234567` → `"1,234,567"`.
pub(crate) fn group_digits(value: u64) -> String {
    let digits = value.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (digit_idx, digit) in digits.chars().enumerate() {
        if digit_idx > 0 && (digits.len() - digit_idx).is_multiple_of(3) {
            out.push(',');
        }
        out.push(digit);
    }
    out
}

/// Bucket 0 holds 0; bucket `i >= 1` holds `2^(i-1) ..= 2^i - 1`.
fn bucket_index(value: u64) -> usize {
    (u64::BITS - value.leading_zeros()) as usize
}

fn bucket_bounds(bucket_idx: usize) -> (u64, u64) {
    match bucket_idx {
        0 => (0, 0),
        64 => (1 << 63, u64::MAX),
        _ => (1 << (bucket_idx - 1), (1 << bucket_idx) - 1),
    }
}

/// Proportional to `count`, rounded, but at least 1 for a non-empty bucket.
fn bar_length(count: u64, max_count: u64, bar_width: usize) -> usize {
    if count == 0 || max_count == 0 {
        return 0;
    }
    let width = bar_width as u128;
    let scaled = (u128::from(count) * width + u128::from(max_count) / 2) / u128::from(max_count);
    (scaled as usize).max(1)
}
