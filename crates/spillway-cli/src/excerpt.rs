//! The one way an error shows the input it is about: the line, or a window of it around the
//! column, with a caret under that column.
//!
//! A statement or an import line may be megabytes long (a 16 MiB document on one line); an
//! error shows a window of `2 * RADIUS + 1` characters around its column ([`RADIUS`] either
//! side where the line allows), with `…` where the line is cut. Shell statements (`spillway run`, the shell) and NDJSON import lines both go
//! through [`pointer()`]. This module must never change the characters it shows (tabs stay tabs,
//! so that the caret lines up in a terminal that expands them).

use std::fmt::Write as _;

/// Characters shown on each side of the column before the line is cut.
pub const RADIUS: usize = 80;

/// `line` (numbered `line_number`), cut to a window around `column` (1-based, in
/// characters), and a caret under that column:
///
/// ```text
///   4 | price: { value: 1 }
///     | ^
/// ```
pub fn pointer(line_number: usize, line: &str, column: usize) -> String {
    let line = line.trim_end_matches(['\r', '\n']);
    let index = column.saturating_sub(1);
    // A window of `2 * RADIUS + 1` characters centred on the column, slid back inside the
    // line near either end, so that any line that short is shown whole.
    let width = 2 * RADIUS + 1;
    let len = line.chars().count();
    let end = (index.saturating_sub(RADIUS) + width).min(len.max(index + 1));
    let start = end
        .min(len)
        .saturating_sub(width)
        .min(index.saturating_sub(RADIUS));
    let mut shown = String::new();
    let mut padding = String::new();
    if start > 0 {
        shown.push('…');
        padding.push(' ');
    }
    for (position, c) in line.chars().enumerate().skip(start).take(end - start) {
        if position < index {
            padding.push(if c == '\t' { '\t' } else { ' ' });
        }
        shown.push(c);
    }
    if end < len {
        shown.push('…');
    }
    let number = line_number.to_string();
    let gutter = " ".repeat(number.len());
    let mut out = String::new();
    write!(out, "  {number} | {shown}\n  {gutter} | {padding}^")
        .expect("writing to a String cannot fail");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_lines_are_shown_whole() {
        assert_eq!(
            pointer(4, "price: { value: 1 }\n", 8),
            "  4 | price: { value: 1 }\n    |        ^"
        );
        assert_eq!(pointer(12, "\tx", 2), "  12 | \tx\n     | \t^");
        // A column past the end (end of input) points just after the line.
        assert_eq!(pointer(1, "ab", 3), "  1 | ab\n    |   ^");
    }

    #[test]
    fn long_lines_are_cut_around_the_column() {
        let line = format!("{}é{}", "a".repeat(1_000_000), "b".repeat(1_000_000));
        let shown = pointer(2, &line, 1_000_001);
        let expected_line = format!("…{}é{}…", "a".repeat(RADIUS), "b".repeat(RADIUS));
        let expected_caret = format!("{}^", " ".repeat(RADIUS + 1));
        assert_eq!(
            shown,
            format!("  2 | {expected_line}\n    | {expected_caret}")
        );
        // Near the start only the end is cut, and the window keeps its width.
        let shown = pointer(1, &line, 3);
        assert_eq!(
            shown,
            format!("  1 | {}…\n    |   ^", "a".repeat(2 * RADIUS + 1))
        );
        // Near the end only the start is cut.
        let tail = format!("{}xyz", "a".repeat(1_000));
        let shown = pointer(1, &tail, 1_003);
        let expected_line = format!("…{}xyz", "a".repeat(2 * RADIUS - 2));
        let expected_caret = format!("{}^", " ".repeat(2 * RADIUS + 1));
        assert_eq!(
            shown,
            format!("  1 | {expected_line}\n    | {expected_caret}")
        );
    }

    #[test]
    fn lines_as_short_as_the_window_are_shown_whole_wherever_the_column_is() {
        let line = "x".repeat(2 * RADIUS + 1);
        for column in [1, RADIUS, 2 * RADIUS + 1, 2 * RADIUS + 2] {
            let shown = pointer(1, &line, column);
            assert!(!shown.contains('…'), "column {column}: {shown}");
        }
    }
}
