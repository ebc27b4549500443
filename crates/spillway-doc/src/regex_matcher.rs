//! MongoDB's regular expressions (`$regex` and the aggregation operators that match one):
//! a pattern compiled once with MongoDB's options, then matched against strings and values.
//!
//! The filter language re-exports [`RegexMatcher`] and [`RegexMatch`] as its own
//! (`filter::RegexMatcher`); aggregation expressions use them too, so they live below both.

use bson::RawBsonRef;

use crate::error::{DocError, Result};

/// A compiled regular expression with its MongoDB pattern and options.
///
/// Options `i`, `m`, `s` and `x` translate to the flags of the same meaning; `u` is accepted
/// and ignored (matching is always Unicode-aware). Patterns compile with the `regex` crate,
/// whose matching time is linear in the text. MongoDB's patterns are PCRE, whose look-around
/// (`^(?!system\.)`) and back-references that crate refuses: those compile with
/// `fancy-regex`, a backtracking engine, bounded by [`BACKTRACK_LIMIT`] steps per match (a
/// text that needs more does not match). `$` without `m` matches only at the very end of the
/// string.
#[derive(Debug, Clone)]
pub struct RegexMatcher {
    pattern: String,
    options: String,
    engine: Engine,
}

/// The backtracking steps a look-around or back-reference pattern may take on one text.
pub const BACKTRACK_LIMIT: usize = 1_000_000;

impl RegexMatch {
    /// A match from its groups (group 0 the whole match), each `(start, text)` or `None`.
    fn from_groups<'t>(mut groups: impl Iterator<Item = Option<(usize, &'t str)>>) -> RegexMatch {
        let (start, whole) = groups.next().flatten().unwrap_or((0, ""));
        RegexMatch {
            start,
            text: whole.to_string(),
            captures: groups
                .map(|group| group.map(|(_, text)| text.to_string()))
                .collect(),
        }
    }
}

/// The engine a pattern compiled with.
#[derive(Debug, Clone)]
enum Engine {
    /// The `regex` crate: every pattern it accepts.
    Linear(regex::Regex),
    /// `fancy-regex`, for the patterns only a backtracking engine accepts.
    Backtracking(fancy_regex::Regex),
}

/// One match of a regular expression in a text: where it starts (a byte offset), what it
/// matched, and its capture groups (`None` for a group that took no part).
#[derive(Debug, Clone, PartialEq)]
pub struct RegexMatch {
    /// The byte offset of the match in the text.
    pub start: usize,
    /// The matched text.
    pub text: String,
    /// Groups 1 and up.
    pub captures: Vec<Option<String>>,
}

impl PartialEq for RegexMatcher {
    fn eq(&self, other: &Self) -> bool {
        self.pattern == other.pattern && self.options == other.options
    }
}

impl RegexMatcher {
    /// Compiles `pattern` with MongoDB `options` (any of `imsxu`, in any order).
    pub fn new(pattern: &str, options: &str) -> Result<RegexMatcher> {
        let invalid = |message: String| DocError::filter("", message);
        let mut builder = regex::RegexBuilder::new(pattern);
        let mut sorted_options: Vec<char> = Vec::new();
        for option in options.chars() {
            match option {
                'i' => builder.case_insensitive(true),
                'm' => builder.multi_line(true),
                's' => builder.dot_matches_new_line(true),
                'x' => builder.ignore_whitespace(true),
                'u' => &mut builder,
                other => {
                    return Err(invalid(format!(
                        "$regex: invalid option '{other}' (valid options: i m s x u)"
                    )));
                }
            };
            if !sorted_options.contains(&option) {
                sorted_options.push(option);
            }
        }
        if pattern.contains('\0') {
            return Err(invalid(
                "$regex: a pattern cannot contain a NUL byte".to_string(),
            ));
        }
        // BSON stores regex options sorted; equality with stored regexes depends on it.
        sorted_options.sort_unstable();
        let engine = match builder.build() {
            Ok(compiled) => Engine::Linear(compiled),
            Err(error) => {
                let reason = match error {
                    regex::Error::Syntax(text) => {
                        let last_line = text.lines().last().unwrap_or_default().trim();
                        last_line.trim_start_matches("error: ").to_string()
                    }
                    other => other.to_string(),
                };
                let needs_backtracking =
                    reason.contains("look-around") || reason.contains("backreferences");
                let flags: String = sorted_options.iter().filter(|flag| **flag != 'u').collect();
                let with_flags = if flags.is_empty() {
                    pattern.to_string()
                } else {
                    format!("(?{flags}){pattern}")
                };
                match fancy_regex::RegexBuilder::new(&with_flags)
                    .backtrack_limit(BACKTRACK_LIMIT)
                    .build()
                {
                    Ok(compiled) if needs_backtracking => Engine::Backtracking(compiled),
                    Ok(_) => {
                        return Err(invalid(format!(
                            "$regex: cannot compile /{pattern}/: {reason}"
                        )));
                    }
                    Err(fancy) => {
                        let reason = if needs_backtracking {
                            fancy.to_string()
                        } else {
                            reason
                        };
                        return Err(invalid(format!(
                            "$regex: cannot compile /{pattern}/: {reason}"
                        )));
                    }
                }
            }
        };
        Ok(RegexMatcher {
            pattern: pattern.to_string(),
            options: sorted_options.into_iter().collect(),
            engine,
        })
    }

    /// The matches in `text`, from the start: the first only, or every one when `all` (for
    /// the aggregation operators that report matches).
    pub fn find(&self, text: &str, all: bool) -> Vec<RegexMatch> {
        let limit = if all { usize::MAX } else { 1 };
        match &self.engine {
            Engine::Linear(regex) => regex
                .captures_iter(text)
                .take(limit)
                .map(|found| {
                    RegexMatch::from_groups(
                        found
                            .iter()
                            .map(|group| group.map(|m| (m.start(), m.as_str()))),
                    )
                })
                .collect(),
            Engine::Backtracking(regex) => regex
                .captures_iter(text)
                .take(limit)
                .map_while(Result::ok)
                .map(|found| {
                    RegexMatch::from_groups(
                        found
                            .iter()
                            .map(|group| group.map(|m| (m.start(), m.as_str()))),
                    )
                })
                .collect(),
        }
    }

    /// The pattern as written.
    pub fn pattern(&self) -> &str {
        &self.pattern
    }

    /// The options, sorted as BSON stores them.
    pub fn options(&self) -> &str {
        &self.options
    }

    /// Whether the expression matches a string (a backtracking pattern that exceeds
    /// [`BACKTRACK_LIMIT`] on it does not).
    pub fn is_match(&self, text: &str) -> bool {
        match &self.engine {
            Engine::Linear(regex) => regex.is_match(text),
            Engine::Backtracking(regex) => regex.is_match(text).unwrap_or(false),
        }
    }

    /// Whether it matches a value: a string or symbol it matches, or a regular expression
    /// value with the same pattern and options.
    pub fn matches_value(&self, value: RawBsonRef<'_>) -> bool {
        match value {
            RawBsonRef::String(text) | RawBsonRef::Symbol(text) => self.is_match(text),
            RawBsonRef::RegularExpression(regex) => {
                regex.pattern.as_str() == self.pattern && regex.options.as_str() == self.options
            }
            _ => false,
        }
    }
}
