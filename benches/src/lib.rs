//! Helpers shared by Spillway's criterion benchmarks (see `benches/`): reading criterion's
//! medians back and formatting them for the Markdown reports. Nothing here is measured.

use std::path::Path;

/// Median time per iteration (ns) that criterion recorded for `group/function`.
pub fn criterion_median(output: &Path, group: &str, function: &str) -> Option<f64> {
    let path = output
        .join(group)
        .join(function)
        .join("new")
        .join("estimates.json");
    let text = std::fs::read_to_string(path).ok()?;
    let median = &text[text.find("\"median\"")?..];
    let estimate = &median[median.find("\"point_estimate\":")? + "\"point_estimate\":".len()..];
    let end = estimate.find([',', '}'])?;
    estimate[..end].trim().parse().ok()
}

/// A duration in nanoseconds, in the unit that suits it.
pub fn format_duration(ns: f64) -> String {
    if ns >= 1e9 {
        format!("{:.2} s", ns / 1e9)
    } else if ns >= 1e6 {
        format!("{:.2} ms", ns / 1e6)
    } else if ns >= 1e3 {
        format!("{:.2} µs", ns / 1e3)
    } else {
        format!("{ns:.0} ns")
    }
}
