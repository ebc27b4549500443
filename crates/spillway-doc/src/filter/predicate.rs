//! The typed predicates of a parsed filter and their operands, converted at parse time to
//! the form evaluation needs (raw BSON values, compiled regular expressions).
//!
//! Nothing here walks documents; the evaluator does. Constructors validate what MongoDB
//! validates, so that a predicate built by hand (say, by a query rewriter) is as sound as a
//! parsed one.

use bson::spec::ElementType;
use bson::{Bson, RawArray, RawBson, RawBsonRef};

use super::Filter;
use crate::collation::Collation;
use crate::error::{DocError, Result};
use crate::geospatial::{GeoRegion, NearQuery};

/// A condition on the values one field path reaches.
///
/// Positive predicates are satisfied when *any* value the path reaches satisfies them
/// (array elements, the array itself, or "missing"); the negations `$ne`, `$nin` and `$not`
/// are the negation of the positive predicate over all of them (`{a: {$ne: 5}}` does not
/// match `{a: [5, 6]}`).
#[derive(Debug, Clone, PartialEq)]
pub enum Predicate {
    /// Equality (`{a: v}`, `$eq`): MongoDB's value equality (`1 == 1.0`, embedded documents
    /// field by field in order). `null` also matches a missing field.
    Eq(Operand),
    /// `$ne`: no value the path reaches equals the operand.
    Ne(Operand),
    /// `$gt`, within the operand's canonical type bracket.
    Gt(Operand),
    /// `$gte`, within the operand's canonical type bracket.
    Gte(Operand),
    /// `$lt`, within the operand's canonical type bracket.
    Lt(Operand),
    /// `$lte`, within the operand's canonical type bracket.
    Lte(Operand),
    /// `$in`: equal to one of the values, or matched by one of the regular expressions.
    In(InList),
    /// `$nin`: the negation of `$in`.
    Nin(InList),
    /// `$exists`: whether the path reaches any value (`true`) or none (`false`).
    Exists(bool),
    /// `$type`: a value of one of the types.
    Type(TypeSet),
    /// `$size`: an array with exactly this many elements.
    Size(usize),
    /// `$all`: every predicate (equalities, regular expressions or `$elemMatch`es) holds.
    /// An empty list matches nothing.
    All(Vec<Predicate>),
    /// `$elemMatch`: an array with one element satisfying every condition.
    ElemMatch(ElemMatch),
    /// A regular expression (`{a: /x/}`, `$regex`): a string (or symbol) it matches, or a
    /// stored regular expression with the same pattern and options.
    Regex(RegexMatcher),
    /// `$mod: [divisor, remainder]`: a number whose integer part has that remainder.
    Mod {
        /// The divisor, never zero.
        divisor: i64,
        /// The expected remainder (sign as in C and Rust: it follows the dividend).
        remainder: i64,
    },
    /// `$not`: the conjunction of these predicates does not hold.
    Not(Vec<Predicate>),
    /// `$geoWithin` (and its old name `$within`): a location (GeoJSON object or legacy
    /// pair) within the region ([`crate::geospatial`] says how each shape is tested).
    GeoWithin(GeoRegion),
    /// `$geoIntersects`: a location with a point in common with the GeoJSON region.
    GeoIntersects(GeoRegion),
    /// `$near` and `$nearSphere`: a location within `$minDistance` and `$maxDistance` of the
    /// point. As a filter it only bounds distances; ordering results by distance is the
    /// caller's ([`Filter::near`](super::Filter::near)). Allowed once, at the top level.
    Near(NearQuery),
}

impl Predicate {
    /// The operator as MongoDB spells it (`$eq` for implicit equality, `$regex` for a regular
    /// expression), for messages and explain output.
    pub fn operator(&self) -> &'static str {
        match self {
            Predicate::Eq(_) => "$eq",
            Predicate::Ne(_) => "$ne",
            Predicate::Gt(_) => "$gt",
            Predicate::Gte(_) => "$gte",
            Predicate::Lt(_) => "$lt",
            Predicate::Lte(_) => "$lte",
            Predicate::In(_) => "$in",
            Predicate::Nin(_) => "$nin",
            Predicate::Exists(_) => "$exists",
            Predicate::Type(_) => "$type",
            Predicate::Size(_) => "$size",
            Predicate::All(_) => "$all",
            Predicate::ElemMatch(_) => "$elemMatch",
            Predicate::Regex(_) => "$regex",
            Predicate::Mod { .. } => "$mod",
            Predicate::Not(_) => "$not",
            Predicate::GeoWithin(_) => "$geoWithin",
            Predicate::GeoIntersects(_) => "$geoIntersects",
            Predicate::Near(near) => near.operator,
        }
    }

    /// Whether this predicate evaluates to true on one value, *without* array traversal: the
    /// semantics of a condition inside `{$elemMatch: {...operators...}}` and of `$pull`
    /// conditions. `{$gt: 1}` does not look inside an array value here.
    pub fn matches_value(&self, value: RawBsonRef<'_>) -> Result<bool> {
        super::eval::test_value(self, value, &Collation::simple())
    }

    /// Whether this predicate holds for a field that is absent (the same as MongoDB's
    /// "missing" value: `{$eq: null}`, `{$exists: false}`, `{$ne: 5}`...).
    pub fn matches_missing(&self) -> bool {
        super::eval::test_missing(self)
    }
}

/// A comparison operand, kept both decoded (for planners and messages) and raw (for
/// evaluation on raw documents).
#[derive(Debug, Clone, PartialEq)]
pub struct Operand {
    value: Bson,
    raw: RawBson,
}

impl Operand {
    /// Wraps a value. Fails for `undefined`, which MongoDB refuses to compare to.
    pub fn new(value: Bson) -> Result<Operand> {
        if matches!(value, Bson::Undefined) {
            return Err(DocError::filter("", "cannot compare to undefined"));
        }
        let raw = RawBson::try_from(value.clone())?;
        Ok(Operand { value, raw })
    }

    /// The operand as a decoded value.
    pub fn value(&self) -> &Bson {
        &self.value
    }

    /// The operand as a raw value.
    pub fn raw(&self) -> RawBsonRef<'_> {
        self.raw.as_raw_bson_ref()
    }

    /// Whether the operand is `null` (which also matches missing fields).
    pub fn is_null(&self) -> bool {
        matches!(self.value, Bson::Null)
    }
}

/// The operand of `$in` and `$nin`: values compared for equality and regular expressions.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct InList {
    /// The values, in the order written.
    pub values: Vec<Operand>,
    /// The regular expressions, in the order written.
    pub regexes: Vec<RegexMatcher>,
}

impl InList {
    /// Whether the list contains `null` (so that it matches a missing field).
    pub fn contains_null(&self) -> bool {
        self.values.iter().any(Operand::is_null)
    }
}

/// The operand of `$type`: a set of BSON types, `"number"` standing for all four numeric
/// types.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct TypeSet {
    /// Whether every numeric type (double, int, long, decimal) is in the set.
    pub all_numbers: bool,
    /// The individual types in the set.
    pub types: Vec<ElementType>,
}

impl TypeSet {
    /// Whether a value of type `element_type` is in the set.
    pub fn contains(&self, element_type: ElementType) -> bool {
        let is_number = matches!(
            element_type,
            ElementType::Double | ElementType::Int32 | ElementType::Int64 | ElementType::Decimal128
        );
        (self.all_numbers && is_number) || self.types.contains(&element_type)
    }
}

/// The operand of `$elemMatch`.
#[derive(Debug, Clone, PartialEq)]
pub enum ElemMatch {
    /// `{$elemMatch: {$gte: 80, $lt: 85}}`: an element satisfies every predicate, each
    /// applied to the element itself (no further array traversal).
    Value(Vec<Predicate>),
    /// `{$elemMatch: {author: "ann", stars: 5}}`: an element that is a document (or an
    /// array, seen as a document with keys `0`, `1`...) matches the filter.
    Document(Box<Filter>),
}

impl ElemMatch {
    /// The index of the first element of `array` that satisfies this `$elemMatch`. Fails
    /// only on malformed BSON.
    pub fn first_match(&self, array: &RawArray) -> Result<Option<usize>> {
        super::eval::first_matching_element(self, array, &Collation::simple())
    }
}

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

/// Whether `predicate` stays true of an array when elements are added to it
/// ([`Filter::holds_as_arrays_grow`](super::Filter::holds_as_arrays_grow)).
pub(crate) fn holds_as_arrays_grow(predicate: &Predicate) -> bool {
    let scalar = |value: &Bson| !matches!(value, Bson::Array(_));
    match predicate {
        Predicate::Eq(operand)
        | Predicate::Gt(operand)
        | Predicate::Gte(operand)
        | Predicate::Lt(operand)
        | Predicate::Lte(operand) => scalar(operand.value()),
        Predicate::In(list) => list.values.iter().all(|value| scalar(value.value())),
        Predicate::Exists(exists) => *exists,
        Predicate::Type(_)
        | Predicate::ElemMatch(_)
        | Predicate::Regex(_)
        | Predicate::Mod { .. }
        | Predicate::GeoWithin(_)
        | Predicate::GeoIntersects(_)
        | Predicate::Near(_) => true,
        Predicate::All(predicates) => predicates.iter().all(holds_as_arrays_grow),
        Predicate::Ne(_) | Predicate::Nin(_) | Predicate::Size(_) | Predicate::Not(_) => false,
    }
}
