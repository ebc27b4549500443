//! Sort specifications (`{ published_date: -1, _id: 1 }`) and the order they put documents in.
//!
//! A [`SortSpec`] is parsed once and then compares whole documents, decoded or raw, with
//! MongoDB's semantics for `find().sort()`:
//!
//! - each key is a dotted path; the value it sorts on is found with the query traversal rules,
//!   so `reviews.score` reaches into every element document of `reviews` (an element without
//!   the field counts as null), while a numeric component (`reviews.0.score`) addresses one
//!   element;
//! - when a path reaches several values (an array field, or a path through an array of
//!   documents) the document sorts by the **smallest** of them ascending and the **largest**
//!   descending; an array's elements are the candidates, not the array itself;
//! - a missing field sorts as `null`, and an empty array sorts before `null` (as `undefined`);
//! - values of different types follow the BSON comparison order of [`crate::compare`];
//! - documents whose keys all tie compare equal: callers use a stable sort, so ties keep their
//!   input order. An empty specification means natural order (everything ties).
//!
//! This module only orders documents; it must never reorder a slice itself, allocate per
//! comparison, or know about projections and limits. `$push`'s `$sort` modifier uses the
//! update module's own exact-path comparison, as MongoDB does (no fan-out, arrays compared
//! whole), not this one.

use std::cmp::Ordering;

use std::sync::Arc;

use bson::{Bson, Document, RawBsonRef, RawDocument};

use crate::collation::Collation;
use crate::compare::{compare_collated, compare_raw_collated};
use crate::error::{DocError, Result};
use crate::path::{FieldPath, array_index};
use crate::text::BoundSearch;

/// The direction of one sort key.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Direction {
    /// Smallest first (`1`).
    Ascending,
    /// Largest first (`-1`).
    Descending,
}

impl Direction {
    /// Reads a direction written as the number `1` or `-1` in any numeric type.
    #[expect(
        clippy::float_cmp,
        reason = "1 and -1 are exact doubles; only they are accepted"
    )]
    pub fn from_bson(value: &Bson) -> Option<Direction> {
        let number = match value {
            Bson::Int32(number) => f64::from(*number),
            Bson::Int64(number) => *number as f64,
            Bson::Double(number) => *number,
            Bson::Decimal128(number) => number.to_string().parse::<f64>().ok()?,
            _ => return None,
        };
        if number == 1.0 {
            Some(Direction::Ascending)
        } else if number == -1.0 {
            Some(Direction::Descending)
        } else {
            None
        }
    }

    /// Applies the direction to an ascending comparison.
    pub fn apply(self, ascending: Ordering) -> Ordering {
        match self {
            Direction::Ascending => ascending,
            Direction::Descending => ascending.reverse(),
        }
    }
}

/// One key of a sort specification: a field path and a direction.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct SortKey {
    /// The field the documents are sorted on.
    pub path: FieldPath,
    /// Ascending or descending.
    pub direction: Direction,
}

/// A parsed sort specification: keys in priority order, and how strings order.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct SortSpec {
    keys: Vec<SortKey>,
    collation: Collation,
    /// A `{ $meta: "textScore" }` key: highest score first.
    text_score: Option<TextScoreKey>,
}

/// Where a `{ $meta: "textScore" }` key sits among the keys (before `keys[position]`), and
/// the bound `$text` search that scores documents ([`SortSpec::with_text_scorer`]).
#[derive(Debug, Clone)]
struct TextScoreKey {
    position: usize,
    scorer: Option<Arc<BoundSearch>>,
}

impl PartialEq for TextScoreKey {
    fn eq(&self, other: &TextScoreKey) -> bool {
        self.position == other.position
    }
}

impl Eq for TextScoreKey {}

impl std::hash::Hash for TextScoreKey {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.position.hash(state);
    }
}

impl SortSpec {
    /// Parses a sort document such as `{ published_date: -1, _id: 1 }`.
    ///
    /// Each value must be `1` or `-1` (any numeric type), or `{ $meta: "textScore" }` (the
    /// text score of a `$text` query, highest first; other `$meta` sorts are not supported).
    /// An empty document is allowed and means natural order.
    pub fn parse(spec: &Document) -> Result<SortSpec> {
        let mut keys = Vec::with_capacity(spec.len());
        let mut text_score = None;
        for (field, value) in spec {
            let path = FieldPath::parse(field).map_err(|error| DocError::InvalidSort {
                message: format!("field '{field}': {error}"),
            })?;
            if let Some(part) = path.parts().iter().find(|part| part.starts_with('$')) {
                return Err(DocError::InvalidSort {
                    message: format!(
                        "field '{field}': a sort path component cannot start with '$' ('{part}')"
                    ),
                });
            }
            let direction = match value {
                Bson::Document(inner)
                    if inner.len() == 1
                        && inner.get("$meta") == Some(&Bson::String("textScore".into())) =>
                {
                    text_score.get_or_insert(TextScoreKey {
                        position: keys.len(),
                        scorer: None,
                    });
                    continue;
                }
                Bson::Document(inner) if inner.contains_key("$meta") => {
                    return Err(DocError::InvalidSort {
                        message: format!(
                            "field '{field}': only {{ $meta: \"textScore\" }} sorts are supported, not {inner}"
                        ),
                    });
                }
                other => Direction::from_bson(other).ok_or_else(|| DocError::InvalidSort {
                    message: format!(
                        "field '{field}': the direction must be 1 (ascending) or -1 (descending), not {other}"
                    ),
                })?,
            };
            keys.push(SortKey { path, direction });
        }
        Ok(SortSpec {
            keys,
            collation: Collation::simple(),
            text_score,
        })
    }

    /// Builds a specification from keys that are already parsed.
    pub fn from_keys(keys: Vec<SortKey>) -> SortSpec {
        SortSpec {
            keys,
            collation: Collation::simple(),
            text_score: None,
        }
    }

    /// Whether the specification sorts on `{ $meta: "textScore" }`.
    pub fn has_text_score(&self) -> bool {
        self.text_score.is_some()
    }

    /// This specification with its text score key computed by `scorer` (the bound `$text`
    /// search of the query). Without one, every document's score ties.
    #[must_use]
    pub fn with_text_scorer(mut self, scorer: Arc<BoundSearch>) -> SortSpec {
        if let Some(key) = &mut self.text_score {
            key.scorer = Some(scorer);
        }
        self
    }

    /// Compares the text scores of two documents (highest first), if the key sits at
    /// `position`.
    fn compare_scores<D: ?Sized>(
        &self,
        position: usize,
        a: &D,
        b: &D,
        score: fn(&BoundSearch, &D) -> f64,
    ) -> Ordering {
        match &self.text_score {
            Some(TextScoreKey {
                position: at,
                scorer: Some(scorer),
            }) if *at == position => score(scorer, b).total_cmp(&score(scorer, a)),
            _ => Ordering::Equal,
        }
    }

    /// This specification with strings ordered by `collation` (MongoDB's `collation`
    /// option) instead of by code point.
    #[must_use]
    pub fn collated(mut self, collation: &Collation) -> SortSpec {
        self.collation = collation.clone();
        self
    }

    /// How this specification orders strings.
    pub fn collation(&self) -> &Collation {
        &self.collation
    }

    /// The keys, highest priority first.
    pub fn keys(&self) -> &[SortKey] {
        &self.keys
    }

    /// Whether the specification has no keys (natural order).
    pub fn is_empty(&self) -> bool {
        self.keys.is_empty() && self.text_score.is_none()
    }

    /// Compares two decoded documents; `Equal` when every key ties.
    pub fn compare(&self, a: &Document, b: &Document) -> Ordering {
        for (position, key) in self.keys.iter().enumerate() {
            let order = self.compare_scores(position, a, b, BoundSearch::score_document);
            if order != Ordering::Equal {
                return order;
            }
            let a_value = sort_value(a, key, &self.collation);
            let b_value = sort_value(b, key, &self.collation);
            let order = key
                .direction
                .apply(compare_collated(a_value, b_value, &self.collation));
            if order != Ordering::Equal {
                return order;
            }
        }
        self.compare_scores(self.keys.len(), a, b, BoundSearch::score_document)
    }

    /// Compares two raw documents; same order as [`SortSpec::compare`] on their decoded forms.
    pub fn compare_raw(&self, a: &RawDocument, b: &RawDocument) -> Ordering {
        for (position, key) in self.keys.iter().enumerate() {
            let order = self.compare_scores(position, a, b, BoundSearch::score);
            if order != Ordering::Equal {
                return order;
            }
            let a_value = sort_value_raw(a, key, &self.collation);
            let b_value = sort_value_raw(b, key, &self.collation);
            let order =
                key.direction
                    .apply(compare_raw_collated(a_value, b_value, &self.collation));
            if order != Ordering::Equal {
                return order;
            }
        }
        self.compare_scores(self.keys.len(), a, b, BoundSearch::score)
    }

    /// The value each key sorts `document` on (`null` for a missing field, `undefined` for an
    /// empty array), so that callers sorting many documents can extract keys once and compare
    /// them with [`SortSpec::compare_values`].
    pub fn sort_values(&self, document: &Document) -> Vec<Bson> {
        self.keys
            .iter()
            .map(|key| sort_value(document, key, &self.collation).clone())
            .collect()
    }

    /// Compares two outputs of [`SortSpec::sort_values`].
    pub fn compare_values(&self, a: &[Bson], b: &[Bson]) -> Ordering {
        for ((key, a_value), b_value) in self.keys.iter().zip(a).zip(b) {
            let order = key
                .direction
                .apply(compare_collated(a_value, b_value, &self.collation));
            if order != Ordering::Equal {
                return order;
            }
        }
        Ordering::Equal
    }
}

static NULL: Bson = Bson::Null;
static UNDEFINED: Bson = Bson::Undefined;

/// Keeps the smallest (ascending) or largest (descending) candidate seen so far.
struct Extreme<'c, T> {
    direction: Direction,
    best: Option<T>,
    collation: &'c Collation,
}

impl<T: Copy> Extreme<'_, T> {
    fn offer(&mut self, candidate: T, compare: fn(T, T, &Collation) -> Ordering) {
        let better = match self.best {
            None => true,
            Some(best) => {
                let order = compare(candidate, best, self.collation);
                match self.direction {
                    Direction::Ascending => order == Ordering::Less,
                    Direction::Descending => order == Ordering::Greater,
                }
            }
        };
        if better {
            self.best = Some(candidate);
        }
    }
}

/// The value `document` sorts on for `key`.
fn sort_value<'a>(document: &'a Document, key: &SortKey, collation: &Collation) -> &'a Bson {
    let mut extreme = Extreme {
        direction: key.direction,
        best: None,
        collation,
    };
    let parts = key.path.parts();
    match document.get(&parts[0]) {
        Some(value) => collect(value, &parts[1..], &mut extreme),
        None => extreme.offer(&NULL, compare_collated),
    }
    extreme.best.unwrap_or(&NULL)
}

fn collect<'a>(value: &'a Bson, rest: &[String], extreme: &mut Extreme<'_, &'a Bson>) {
    let offer = |extreme: &mut Extreme<'_, &'a Bson>, candidate: &'a Bson| {
        extreme.offer(candidate, compare_collated);
    };
    let Some((part, tail)) = rest.split_first() else {
        match value {
            Bson::Array(items) if items.is_empty() => offer(extreme, &UNDEFINED),
            Bson::Array(items) => items.iter().for_each(|item| offer(extreme, item)),
            other => offer(extreme, other),
        }
        return;
    };
    match value {
        Bson::Document(inner) => match inner.get(part) {
            Some(next) => collect(next, tail, extreme),
            None => offer(extreme, &NULL),
        },
        Bson::Array(items) => {
            // A numeric component addresses one element (positionally), not every element's
            // field of that name.
            if let Some(index) = array_index(part) {
                match items.get(index) {
                    Some(item) => collect(item, tail, extreme),
                    None => offer(extreme, &NULL),
                }
                return;
            }
            let mut reached = false;
            for item in items {
                if let Bson::Document(_) = item {
                    collect(item, rest, extreme);
                    reached = true;
                }
            }
            if !reached {
                offer(extreme, &NULL);
            }
        }
        _ => offer(extreme, &NULL),
    }
}

/// The value `document` sorts on for `key`, on raw bytes.
fn sort_value_raw<'a>(
    document: &'a RawDocument,
    key: &SortKey,
    collation: &Collation,
) -> RawBsonRef<'a> {
    let mut extreme = Extreme {
        direction: key.direction,
        best: None,
        collation,
    };
    let parts = key.path.parts();
    match document.get(&parts[0]).ok().flatten() {
        Some(value) => collect_raw(value, &parts[1..], &mut extreme),
        None => extreme.offer(RawBsonRef::Null, compare_raw_collated),
    }
    extreme.best.unwrap_or(RawBsonRef::Null)
}

fn collect_raw<'a>(
    value: RawBsonRef<'a>,
    rest: &[String],
    extreme: &mut Extreme<'_, RawBsonRef<'a>>,
) {
    let Some((part, tail)) = rest.split_first() else {
        match value {
            RawBsonRef::Array(items) => {
                let mut any = false;
                for item in items.into_iter().map_while(Result::ok) {
                    extreme.offer(item, compare_raw_collated);
                    any = true;
                }
                if !any {
                    extreme.offer(RawBsonRef::Undefined, compare_raw_collated);
                }
            }
            other => extreme.offer(other, compare_raw_collated),
        }
        return;
    };
    match value {
        RawBsonRef::Document(inner) => match inner.get(part).ok().flatten() {
            Some(next) => collect_raw(next, tail, extreme),
            None => extreme.offer(RawBsonRef::Null, compare_raw_collated),
        },
        RawBsonRef::Array(items) => {
            if let Some(index) = array_index(part) {
                match items.into_iter().map_while(Result::ok).nth(index) {
                    Some(item) => collect_raw(item, tail, extreme),
                    None => extreme.offer(RawBsonRef::Null, compare_raw_collated),
                }
                return;
            }
            let mut reached = false;
            for item in items.into_iter().map_while(Result::ok) {
                if let RawBsonRef::Document(_) = item {
                    collect_raw(item, rest, extreme);
                    reached = true;
                }
            }
            if !reached {
                extreme.offer(RawBsonRef::Null, compare_raw_collated);
            }
        }
        _ => extreme.offer(RawBsonRef::Null, compare_raw_collated),
    }
}
