//! The one way an error shows the input it is about: the line, or a window of it around the
//! column, with a caret under that column.
//!
//! A statement or an import line may be megabytes long (a 16 MiB document on one line); an
//! error shows at most [`RADIUS`] characters either side of its column, with `…` where the
//! line is cut. Shell statements (`spillway run`, the shell) and NDJSON import lines both go
//! through [`pointer`]. This module must never change the characters it shows (tabs stay tabs,
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
    let start = index.saturating_sub(RADIUS);
    let mut shown = String::new();
    let mut padding = String::new();
    if start > 0 {
        shown.push('…');
        padding.push(' ');
    }
    let mut chars = line.chars().enumerate().skip(start);
    for (position, c) in chars.by_ref() {
        if position < index {
            padding.push(if c == '\t' { '\t' } else { ' ' });
        }
        shown.push(c);
        if position == index + RADIUS {
            break;
        }
    }
    if chars.next().is_some() {
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
        // Near the start only the end is cut.
        let shown = pointer(1, &line, 3);
        assert_eq!(
            shown,
            format!("  1 | {}…\n    |   ^", "a".repeat(3 + RADIUS))
        );
    }
}
