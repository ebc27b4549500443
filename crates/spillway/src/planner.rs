//! The query planner: how a filter and a sort are answered from the store.
//!
//! From the filter's top-level ANDed field predicates (`Filter::field_predicates`) the
//! planner picks one access path:
//!
//! 1. `IDHACK`: `_id` equality or `$in` on `_id` (point lookups in the documents keyspace);
//! 2. `IXSCAN`: the best secondary index: the most leading fields pinned by equality or `$in`,
//!    then one range field (`$gt/$gte/$lt/$lte`, bounded within the operand's type bracket),
//!    preferring a unique index fully pinned, then an index that also yields the sort order;
//!    with no usable predicate, an index that yields the requested sort order (full scan);
//! 3. `COLLSCAN`: every document in `_id` order (which yields a sort on `_id` by itself).
//!
//! A `SORT` stage sorts in memory when the access path does not yield the order. Indexes only
//! narrow: the executor re-checks the whole filter on every document it fetches. Predicates
//! whose index bounds would be unsound are not used for bounds: `null` operands (they match
//! missing fields and arrays of documents in ways an index entry cannot show), array operands
//! (they match whole arrays, which are indexed element by element) and regular expressions.
//! A multikey index never intersects two range predicates (two elements may satisfy them
//! separately) and never yields a sort order.
//!
//! Index keys order strings by their index's collation: code point for most, the collation
//! keys of `Collation::key_value` for an index created with a collation. An operand that is
//! or contains a string bounds a scan only when the query's collation (a filter or sort
//! `collated` by MongoDB's `collation` option, or the collection's default) is the index's,
//! and only such an index yields a sort; the `_id` order is code point order. Under a
//! non-simple collation a partial filter is never implied. The executor always filters and
//! sorts under the query's collation, so a scan only narrows.
//!
//! A hashed field bounds a scan by equality and `$in` only (on the hashes of the values);
//! a hashed index never yields a sort order.
//!
//! Index options: a hidden index is never chosen, nor a geospatial one (`2d`, `2dsphere`:
//! its entries are cells, which answer no predicate the planner reads). A sparse index is chosen only for a
//! bounded predicate (which no document lacking the field satisfies), never for a sort alone.
//! A partial index is chosen only when the query filter implies its partial filter
//! ([`implies`]: a conservative check, each predicate of the partial filter must follow from
//! one predicate of the query on the same path; a partial filter with `$or`, `$nor` or
//! `$expr` is never implied), and never for a sort alone. This module must never read
//! documents or the store: it only looks at the catalog.

use std::ops::Bound;
use std::sync::Arc;

use bson::{Bson, Document, doc};
use spillway_doc::collation::Collation;
use spillway_doc::compare::{CanonicalType, canonical_type, compare, values_equal};
use spillway_doc::filter::{Clause, Filter, Operand, Predicate};
use spillway_doc::key;
use spillway_doc::sort::{Direction, SortSpec};
use spillway_store::KeyspaceId;

use crate::catalog::{CollectionMeta, ID_INDEX_NAME, IndexMeta};
use crate::error::{Error, Result};
use crate::index_keys::hashed_value;
use crate::results::Hint;
use crate::txn::KeyRange;

/// The most index ranges one scan may expand into (the product of `$in` lists).
const MAX_INDEX_RANGES: usize = 4096;

/// How documents are found.
#[derive(Debug, Clone)]
pub(crate) enum Access {
    /// The collection does not exist: nothing to read.
    Eof,
    /// Every document, in `_id` order (or reversed); with `bounds`, those whose `_id` key is
    /// in them (`min`/`max` on the `_id` index).
    CollScan {
        reverse: bool,
        bounds: Option<KeyRange>,
    },
    /// Point lookups of these `_id` keys (sorted, deduplicated), ascending or reversed.
    IdHack { keys: Vec<Vec<u8>>, reverse: bool },
    /// Ranges of a secondary index, then a fetch of each document.
    IxScan {
        index: String,
        key_pattern: Document,
        keyspace: KeyspaceId,
        ranges: Vec<KeyRange>,
        reverse: bool,
        multikey: bool,
        /// Whether one document can be reached twice by the scan: through several keys of
        /// a multikey index, unless a single range pins every index field to one value.
        repeats: bool,
        /// Per index field, its intervals as shown by `explain`.
        bounds: Box<Document>,
        /// Whether the index is partial / sparse (shown by `explain`).
        partial: bool,
        sparse: bool,
        /// Whether the ranges are the whole filter: every entry in them is a match, and each
        /// match has one entry ([`answers_filter`]), so that entries can be skipped without
        /// reading their documents.
        exact: bool,
    },
}

/// A chosen plan.
#[derive(Debug, Clone)]
pub(crate) struct Plan {
    pub(crate) access: Arc<Access>,
    pub(crate) docs: Option<KeyspaceId>,
    /// The sort left to do in memory (`SORT` stage), if the access path does not yield it.
    pub(crate) sort: Option<SortSpec>,
}

impl Plan {
    /// The plan as MongoDB's `explain` shows a winning plan.
    pub(crate) fn describe(&self) -> Document {
        let access = match &*self.access {
            Access::Eof => doc! { "stage": "EOF" },
            Access::CollScan { reverse, bounds } => {
                let mut described = doc! {
                    "stage": "COLLSCAN",
                    "direction": direction_name(*reverse),
                };
                if bounds.is_some() {
                    described.insert("indexName", ID_INDEX_NAME);
                    described.insert("keyPattern", doc! { "_id": 1 });
                }
                described
            }
            Access::IdHack { keys, .. } => doc! {
                "stage": "IDHACK",
                "keys": keys.len() as i64,
            },
            Access::IxScan {
                index,
                key_pattern,
                reverse,
                multikey,
                bounds,
                ranges,
                partial,
                sparse,
                ..
            } => doc! {
                "stage": "FETCH",
                "inputStage": {
                    "stage": "IXSCAN",
                    "indexName": index,
                    "keyPattern": key_pattern.clone(),
                    "isMultiKey": *multikey,
                    "isSparse": *sparse,
                    "isPartial": *partial,
                    "direction": direction_name(*reverse),
                    "indexBounds": (**bounds).clone(),
                    "ranges": ranges.len() as i64,
                },
            },
        };
        match &self.sort {
            Some(sort) => doc! {
                "stage": "SORT",
                "sortPattern": sort_pattern(sort),
                "inputStage": access,
            },
            None => access,
        }
    }
}

fn direction_name(reverse: bool) -> &'static str {
    if reverse { "backward" } else { "forward" }
}

fn sort_pattern(sort: &SortSpec) -> Document {
    let mut pattern = Document::new();
    for key in sort.keys() {
        let direction = match key.direction {
            Direction::Ascending => 1,
            Direction::Descending => -1,
        };
        pattern.insert(key.path.as_str(), direction);
    }
    pattern
}

/// A hint, and the `min`/`max` index bounds (MongoDB's `find` options) that only come with one.
#[derive(Debug, Clone, Copy)]
pub(crate) struct HintedScan<'a> {
    pub(crate) hint: &'a Hint,
    /// The inclusive lower bound: a value for each field of the hinted index, in its order.
    pub(crate) min: Option<&'a Document>,
    /// The exclusive upper bound, likewise.
    pub(crate) max: Option<&'a Document>,
}

impl HintedScan<'_> {
    /// Whether `min` or `max` is given.
    pub(crate) fn has_bounds(&self) -> bool {
        self.min.is_some() || self.max.is_some()
    }
}

/// Checks `min` and `max` before any plan: when both are given they name the same fields in
/// the same order (MongoDB's 51176), and either needs a hint (51173).
pub(crate) fn check_min_max(
    collection: &str,
    min: Option<&Document>,
    max: Option<&Document>,
    hint: Option<&Hint>,
) -> Result<()> {
    if let (Some(min), Some(max)) = (min, max)
        && !min.keys().eq(max.keys())
    {
        return Err(Error::invalid_options(
            collection,
            "min and max must have the same field names",
        )
        .with_code(51176));
    }
    if (min.is_some() || max.is_some()) && hint.is_none() {
        return Err(Error::invalid_options(
            collection,
            "When using min()/max() a hint of which index to use must be provided",
        )
        .with_code(51173));
    }
    Ok(())
}

/// Chooses the plan `hint` names: the index it names (by name or key pattern), scanned
/// with the bounds the filter gives it (all of it otherwise), or `$natural`: a collection scan
/// in natural order (`-1`: reversed). A hint that names no usable index (none of that name or
/// keys, a hidden index, a partial index the filter does not imply) is an error, as in
/// MongoDB (code 2).
///
/// With `min`/`max`, the scan's one range is from `min` (inclusive) to `max` (exclusive) in
/// the index's own key order (a descending field's `min` is its highest value), whatever the
/// filter says (the filter is still checked on every document): MongoDB's semantics. Each
/// bound must name the index's fields, all of them and in order (51174), and `min` must come
/// before `max` (51175); a `$natural` hint has no index to bound (51173).
pub(crate) fn plan_hinted(
    collection: Option<&CollectionMeta>,
    filter: &Filter,
    sort: Option<&SortSpec>,
    hinted: HintedScan<'_>,
) -> Result<Plan> {
    let hint = hinted.hint;
    let sort = sort.filter(|sort| !sort.is_empty());
    let Some(collection) = collection else {
        return Ok(plan(None, filter, sort));
    };
    if filter.text_search().is_some() && !hinted.has_bounds() {
        // A `$text` query has one plan: its text index.
        return Ok(plan(Some(collection), filter, sort));
    }
    let docs = Some(collection.docs);
    let wanted = match hint {
        Hint::Keys(keys) => match keys.get("$natural") {
            Some(_) if keys.len() == 1 && hinted.has_bounds() => {
                return Err(Error::invalid_options(
                    &collection.name,
                    "When using min()/max() a hint of which index to use must be provided ($natural names none)",
                )
                .with_code(51173));
            }
            Some(direction) if keys.len() == 1 => {
                let reverse = Direction::from_bson(direction) == Some(Direction::Descending);
                return Ok(Plan {
                    access: Arc::new(Access::CollScan {
                        reverse,
                        bounds: None,
                    }),
                    docs,
                    sort: sort.cloned(),
                });
            }
            _ => HintTarget::Keys(crate::catalog::default_index_name(keys)),
        },
        Hint::Name(name) => HintTarget::Name(name.as_str()),
    };
    if let Some(reverse) = id_index_hint(&wanted) {
        if hinted.has_bounds() {
            // The documents keyspace is the `_id` index: its keys are the `_id` keys.
            let bounds = id_min_max(&collection.name, hinted.min, hinted.max)?;
            return Ok(Plan {
                access: Arc::new(Access::CollScan {
                    reverse,
                    bounds: Some(bounds),
                }),
                docs,
                sort: sort.cloned(),
            });
        }
        return Ok(id_index_plan(collection, filter, sort, reverse));
    }
    let index = collection.indexes.iter().find(|index| match &wanted {
        HintTarget::Keys(keys) => crate::catalog::default_index_name(&index.spec) == *keys,
        HintTarget::Name(name) => index.name == *name,
    });
    let usable = index.filter(|index| {
        !index.settings.hidden
            && index.settings.text.is_none()
            && index.settings.geo.is_none()
            && index
                .settings
                .partial
                .as_ref()
                .is_none_or(|partial| implies(filter, &partial.filter))
    });
    let Some(index) = usable else {
        let hinted = match hint {
            Hint::Keys(keys) => keys.to_string(),
            Hint::Name(name) => format!("'{name}'"),
        };
        return Err(Error::invalid_options(
            &collection.name,
            format!("hint {hinted} does not correspond to an existing, usable index"),
        )
        .with_code(2));
    };
    let candidate = if hinted.has_bounds() {
        Candidate::min_max(&collection.name, index, hinted.min, hinted.max, sort)?
    } else {
        Candidate::build(index, filter, sort)
    };
    Ok(index_plan(index, candidate, docs, filter, sort))
}

/// Whether a hint names the `_id` index (`{_id: 1}`, `{_id: -1}` or `"_id_"`), and if so
/// whether it is read backwards.
fn id_index_hint(wanted: &HintTarget<'_>) -> Option<bool> {
    match wanted {
        HintTarget::Name(name) => (*name == ID_INDEX_NAME).then_some(false),
        HintTarget::Keys(keys) => match keys.as_str() {
            "_id_1" => Some(false),
            "_id_-1" => Some(true),
            _ => None,
        },
    }
}

/// The plan of a query hinted to the `_id` index: the collection is stored in `_id` order,
/// so its point lookups when the filter pins `_id`, else a scan of every document in that
/// order (backwards for `{_id: -1}`).
fn id_index_plan(
    collection: &CollectionMeta,
    filter: &Filter,
    sort: Option<&SortSpec>,
    reverse: bool,
) -> Plan {
    let id_sort = sort
        .filter(|sort| sort.collation().is_simple() && !sort.has_text_score())
        .and_then(id_sort_direction);
    let access = match id_lookup(filter) {
        Some(keys) => Access::IdHack {
            keys,
            reverse: id_sort.map_or(reverse, |direction| direction == Direction::Descending),
        },
        None => Access::CollScan {
            reverse: id_sort.map_or(reverse, |direction| direction == Direction::Descending),
            bounds: None,
        },
    };
    Plan {
        access: Arc::new(access),
        docs: Some(collection.docs),
        sort: if id_sort.is_some() {
            None
        } else {
            sort.cloned()
        },
    }
}

/// Which index a hint names.
enum HintTarget<'a> {
    /// By key pattern, as its default name (`a_1_b_-1`, whatever number types it uses).
    Keys(String),
    Name(&'a str),
}

/// The plan scanning `index` as `candidate` says.
fn index_plan(
    index: &IndexMeta,
    candidate: Candidate,
    docs: Option<KeyspaceId>,
    filter: &Filter,
    sort: Option<&SortSpec>,
) -> Plan {
    let provides_sort = candidate.sort_reverse.is_some();
    let exact = answers_filter(index, &candidate, filter);
    Plan {
        access: Arc::new(Access::IxScan {
            index: index.name.clone(),
            key_pattern: index.spec.clone(),
            keyspace: index.keyspace,
            reverse: candidate.sort_reverse.unwrap_or(false),
            multikey: index.multikey,
            repeats: index.multikey
                && !(candidate.ranges.len() == 1 && candidate.n_points == index.fields.len()),
            bounds: Box::new(
                candidate
                    .shown_bounds
                    .clone()
                    .unwrap_or_else(|| candidate.explain_bounds(index)),
            ),
            ranges: candidate.ranges,
            partial: index.settings.partial.is_some(),
            sparse: index.settings.sparse,
            exact,
        }),
        docs,
        sort: if provides_sort { None } else { sort.cloned() },
    }
}

/// Whether scanning `index` as `candidate` says yields exactly the documents matching
/// `filter`, one entry each: the filter is only equalities (`{a: 5}`, `{a: {$eq: 5}}`), one
/// per field, on the leading fields of the index, each pinned to its point by a single range;
/// every operand is a number (not NaN), a string, an ObjectId, a boolean or a date, whose key
/// equality is the filter's equality (a string only under the simple collation, which the
/// pinning already requires); and the index has one entry per document and holds every
/// document (not multikey, sparse, partial, hashed, text or geospatial). Anything else is
/// not exact, and every entry's document is read and checked.
fn answers_filter(index: &IndexMeta, candidate: &Candidate, filter: &Filter) -> bool {
    let plain_index = !index.multikey
        && !index.settings.sparse
        && index.settings.partial.is_none()
        && index.hashed.is_none()
        && index.settings.text.is_none()
        && index.settings.geo.is_none()
        && index.settings.collation().is_simple();
    if !plain_index || candidate.shown_bounds.is_some() || candidate.ranges.len() != 1 {
        return false;
    }
    let mut pinned: Vec<&str> = Vec::new();
    for clause in &filter.clauses {
        let Clause::Field {
            path,
            predicate: Predicate::Eq(operand),
        } = clause
        else {
            return false;
        };
        let key_equality = match operand.value() {
            Bson::Double(number) => !number.is_nan(),
            Bson::Int32(_)
            | Bson::Int64(_)
            | Bson::String(_)
            | Bson::ObjectId(_)
            | Bson::Boolean(_)
            | Bson::DateTime(_) => true,
            _ => false,
        };
        if !key_equality || pinned.contains(&path.as_str()) {
            return false;
        }
        pinned.push(path.as_str());
    }
    pinned.len() <= candidate.n_points
        && index.fields[..pinned.len()]
            .iter()
            .all(|(field, _)| pinned.contains(&field.as_str()))
}

/// Where the document with the greatest `order_by` among those whose `field` equals `value`
/// sits: the first entry of this index range, scanned in this direction (`true`: reversed).
/// The pattern engine's last overflow bucket, read without a plan.
#[derive(Debug)]
pub(crate) struct LastInGroup {
    pub(crate) index: KeyspaceId,
    pub(crate) range: KeyRange,
    pub(crate) reverse: bool,
}

/// The index scan that answers `find({ field: value }).sort({ order_by: -1 }).limit(1)` on
/// `collection` with its first entry: an index that starts with `field` then `order_by`,
/// with an entry for every document and one per document (not sparse, partial, hashed,
/// text, geospatial or multikey). `None` when there is none, or when `value` is not a plain
/// equality operand (`null`, `undefined`, an array, a regular expression or a document
/// that reads as operators): the query then runs through [`plan`].
pub(crate) fn last_in_group(
    collection: &CollectionMeta,
    field: &str,
    value: &Bson,
    order_by: &str,
) -> Option<LastInGroup> {
    let plain_operand = match value {
        Bson::Null | Bson::Undefined | Bson::Array(_) | Bson::RegularExpression(_) => false,
        Bson::Document(document) => !document.keys().any(|key| key.starts_with('$')),
        _ => true,
    };
    if !plain_operand {
        return None;
    }
    let index = collection.indexes.iter().find(|index| {
        let settings = &index.settings;
        index.fields.len() >= 2
            && index.fields[0].0.as_str() == field
            && index.fields[1].0.as_str() == order_by
            && !index.multikey
            && index.hashed.is_none()
            && !settings.sparse
            && settings.partial.is_none()
            && settings.text.is_none()
            && settings.geo.is_none()
            && settings.collation().is_simple()
    })?;
    let prefix = encode_component(value, index.fields[0].1);
    let high = successor(&prefix).map_or(Bound::Unbounded, Bound::Excluded);
    Some(LastInGroup {
        index: index.keyspace,
        range: KeyRange {
            low: Bound::Included(prefix),
            high,
        },
        reverse: index.fields[1].1 == Direction::Ascending,
    })
}

/// Chooses the plan for `filter` and `sort` on `collection` (`None`: it does not exist).
pub(crate) fn plan(
    collection: Option<&CollectionMeta>,
    filter: &Filter,
    sort: Option<&SortSpec>,
) -> Plan {
    let sort = sort.filter(|sort| !sort.is_empty());
    let Some(collection) = collection else {
        return Plan {
            access: Arc::new(Access::Eof),
            docs: None,
            sort: None,
        };
    };
    let docs = Some(collection.docs);
    let id_sort = sort
        .filter(|sort| sort.collation().is_simple() && !sort.has_text_score())
        .and_then(id_sort_direction);
    if let Some(keys) = id_lookup(filter) {
        return Plan {
            access: Arc::new(Access::IdHack {
                keys,
                reverse: id_sort == Some(Direction::Descending),
            }),
            docs,
            sort: if id_sort.is_some() {
                None
            } else {
                sort.cloned()
            },
        };
    }
    if let Some(search) = filter.text_search()
        && let Some(index) = collection
            .indexes
            .iter()
            .find(|index| index.settings.text.is_some())
    {
        let terms: Vec<&str> = search
            .bound()
            .map(|bound| bound.lookup_terms().collect())
            .unwrap_or_default();
        return index_plan(index, Candidate::text(&terms), docs, filter, sort);
    }
    let mut best: Option<(Candidate, &IndexMeta)> = None;
    let usable = |index: &&IndexMeta| {
        !index.settings.hidden
            && index.settings.text.is_none()
            && index.settings.geo.is_none()
            && index
                .settings
                .partial
                .as_ref()
                .is_none_or(|partial| implies(filter, &partial.filter))
    };
    for index in collection.indexes.iter().filter(usable) {
        let candidate = Candidate::build(index, filter, sort);
        if candidate.n_bounded == 0 {
            continue;
        }
        if best
            .as_ref()
            .is_none_or(|(known, _)| candidate.score() > known.score())
        {
            best = Some((candidate, index));
        }
    }
    let store_order_sorts =
        sort.is_some_and(|sort| sort.collation().is_simple() && !sort.has_text_score());
    if best.is_none() && store_order_sorts && id_sort.is_none() {
        best = collection
            .indexes
            .iter()
            .filter(|index| {
                !index.settings.hidden
                    && !index.settings.sparse
                    && index.settings.partial.is_none()
                    && index.settings.text.is_none()
                    && index.settings.geo.is_none()
            })
            .map(|index| (Candidate::build(index, filter, sort), index))
            .find(|(candidate, _)| candidate.sort_reverse.is_some());
    }
    if let Some((candidate, index)) = best {
        return index_plan(index, candidate, docs, filter, sort);
    }
    Plan {
        access: Arc::new(Access::CollScan {
            reverse: id_sort == Some(Direction::Descending),
            bounds: None,
        }),
        docs,
        sort: if id_sort.is_some() {
            None
        } else {
            sort.cloned()
        },
    }
}

/// Binds the `$text` clause of `filter`, if any, to the collection's text index: MongoDB's
/// `IndexNotFound` (27) when there is none.
pub(crate) fn bind_text(collection: Option<&CollectionMeta>, filter: &mut Filter) -> Result<()> {
    if filter.text_search().is_none() {
        return Ok(());
    }
    let index = collection.and_then(|collection| {
        collection
            .indexes
            .iter()
            .find_map(|index| index.settings.text.as_ref())
    });
    match index {
        Some(index) => {
            filter.bind_text(index);
            Ok(())
        }
        None => Err(Error::invalid_options(
            collection.map_or("", |collection| collection.name.as_str()),
            "text index required for $text query",
        )
        .with_code(27)),
    }
}

/// Whether every document matching `query` matches `partial` (conservatively: `false` when
/// unsure). Each field predicate of `partial` (top level and inside `$and`) must follow from
/// one predicate of `query` on the same path ([`predicate_implies`]).
pub(crate) fn implies(query: &Filter, partial: &Filter) -> bool {
    fn only_fields(filter: &Filter) -> bool {
        filter.clauses.iter().all(|clause| match clause {
            Clause::Field { .. } => true,
            Clause::And(filters) => filters.iter().all(only_fields),
            Clause::Or(_)
            | Clause::Nor(_)
            | Clause::Expr(_)
            | Clause::Text(_)
            | Clause::Where(_)
            | Clause::JsonSchema(_) => false,
        })
    }
    // The partial filter compares strings by code point; a collated query says nothing of that.
    if !only_fields(partial) || !query.collation().is_simple() {
        return false;
    }
    partial.field_predicates().all(|(path, wanted)| {
        query.field_predicates().any(|(field, given)| {
            field.as_str() == path.as_str() && predicate_implies(given, wanted)
        })
    })
}

/// Whether a path satisfying `given` satisfies `wanted`: the same predicate; `$exists: true`
/// from any predicate that needs a value; a comparison, `$eq`, `$in` or `$type` from an
/// equality (or every value of an `$in`) that satisfies it; a comparison from a tighter one
/// of the same direction and type bracket. Array and `null` operands imply nothing but
/// themselves (they match whole arrays and missing fields).
fn predicate_implies(given: &Predicate, wanted: &Predicate) -> bool {
    if given == wanted {
        return true;
    }
    let scalar = |value: &Bson| usable_operand(value);
    let values: Option<Vec<&Bson>> = match given {
        Predicate::Eq(operand) if scalar(operand.value()) => Some(vec![operand.value()]),
        Predicate::In(list)
            if list.regexes.is_empty()
                && !list.values.is_empty()
                && list.values.iter().all(|value| scalar(value.value())) =>
        {
            Some(list.values.iter().map(Operand::value).collect())
        }
        _ => None,
    };
    if let Some(values) = values {
        return values.into_iter().all(|value| match wanted {
            Predicate::Exists(true) => true,
            Predicate::Eq(operand) => values_equal(operand.value(), value),
            Predicate::In(list) => list
                .values
                .iter()
                .any(|known| values_equal(known.value(), value)),
            Predicate::Gt(_)
            | Predicate::Gte(_)
            | Predicate::Lt(_)
            | Predicate::Lte(_)
            | Predicate::Type(_) => {
                let raw = bson::RawBson::try_from(value.clone()).ok();
                raw.is_some_and(|raw| wanted.matches_value(raw.as_raw_bson_ref()).unwrap_or(false))
            }
            _ => false,
        });
    }
    let range = |predicate: &Predicate| match predicate {
        Predicate::Gt(operand) => Some((operand.value().clone(), true, false)),
        Predicate::Gte(operand) => Some((operand.value().clone(), true, true)),
        Predicate::Lt(operand) => Some((operand.value().clone(), false, false)),
        Predicate::Lte(operand) => Some((operand.value().clone(), false, true)),
        _ => None,
    };
    let Some((given_value, given_low, given_inclusive)) = range(given) else {
        return false;
    };
    if !scalar(&given_value) {
        return false;
    }
    if matches!(wanted, Predicate::Exists(true)) {
        return true;
    }
    let Some((wanted_value, wanted_low, wanted_inclusive)) = range(wanted) else {
        return false;
    };
    if given_low != wanted_low
        || !scalar(&wanted_value)
        || canonical_type(&given_value) != canonical_type(&wanted_value)
    {
        return false;
    }
    let order = compare(&given_value, &wanted_value);
    // For a low bound, `given` must be at least as high; for a high bound, at most as low.
    let order = if given_low { order } else { order.reverse() };
    order.is_gt() || (order.is_eq() && (wanted_inclusive || !given_inclusive))
}

/// The direction of a sort that `_id` order yields: its first key is `_id` (unique, so later
/// keys never break a tie).
fn id_sort_direction(sort: &SortSpec) -> Option<Direction> {
    sort.keys()
        .first()
        .filter(|key| key.path.as_str() == "_id")
        .map(|key| key.direction)
}

/// The `_id` keys an `_id` equality or `$in` pins, sorted and deduplicated.
fn id_lookup(filter: &Filter) -> Option<Vec<Vec<u8>>> {
    for (path, predicate) in filter.field_predicates() {
        if path.as_str() != "_id" {
            continue;
        }
        let mut keys: Vec<Vec<u8>> = match predicate {
            Predicate::Eq(operand)
                if filter.collation().is_simple() || !contains_string(operand.value()) =>
            {
                vec![key::to_key(operand.value())]
            }
            Predicate::In(list)
                if list.regexes.is_empty()
                    && (filter.collation().is_simple()
                        || !list.values.iter().any(|v| contains_string(v.value()))) =>
            {
                list.values
                    .iter()
                    .map(|operand| key::to_key(operand.value()))
                    .collect()
            }
            _ => continue,
        };
        keys.sort();
        keys.dedup();
        return Some(keys);
    }
    None
}

/// The values one index field is restricted to, in value order.
#[derive(Debug, Clone)]
enum FieldBounds {
    /// Exactly these values (sorted by value, deduplicated).
    Points(Vec<Bson>),
    /// A range within one canonical type.
    Range {
        low: Option<Box<(Bson, bool)>>,
        high: Option<Box<(Bson, bool)>>,
        bracket: CanonicalType,
    },
    /// Unrestricted.
    All,
}

/// An index considered for a query.
struct Candidate {
    /// Bounds of the leading fields that the ranges apply.
    applied: Vec<FieldBounds>,
    /// Leading fields pinned by points.
    n_points: usize,
    /// Leading fields bounded (points, then at most one range).
    n_bounded: usize,
    unique_point: bool,
    /// Whether the scan yields the requested sort, and in which direction.
    sort_reverse: Option<bool>,
    ranges: Vec<KeyRange>,
    /// What `explain` shows instead of [`Candidate::explain_bounds`] (`min`/`max` scans).
    shown_bounds: Option<Document>,
}

impl Candidate {
    fn build(index: &IndexMeta, filter: &Filter, sort: Option<&SortSpec>) -> Candidate {
        let mut applied = Vec::new();
        let mut n_points = 0;
        let mut n_combinations = 1usize;
        for (position, (path, _)) in index.fields.iter().enumerate() {
            let mut bounds = field_bounds(filter, path.as_str(), index);
            if index.hashed == Some(position) {
                // A hashed field answers equality only, on the hashes of the values.
                bounds = match bounds {
                    FieldBounds::Points(values) => {
                        let mut hashes: Vec<Bson> = values.iter().map(hashed_value).collect();
                        hashes.sort_by(compare);
                        hashes.dedup_by(|a, b| compare(a, b).is_eq());
                        FieldBounds::Points(hashes)
                    }
                    _ => FieldBounds::All,
                };
            }
            match bounds {
                FieldBounds::Points(ref values) => {
                    let next = n_combinations.saturating_mul(values.len().max(1));
                    if next > MAX_INDEX_RANGES {
                        break;
                    }
                    n_combinations = next;
                    n_points += 1;
                    applied.push(bounds);
                }
                FieldBounds::Range { .. } => {
                    applied.push(bounds);
                    break;
                }
                FieldBounds::All => break,
            }
        }
        let n_bounded = applied.len();
        let unique_point = index.unique && n_points == index.fields.len();
        let sort_reverse = match sort {
            Some(sort)
                if !index.multikey
                    && index.hashed.is_none()
                    && sort.collation() == index.settings.collation()
                    && !sort.has_text_score() =>
            {
                sort_direction(index, &applied, sort)
            }
            _ => None,
        };
        let ranges = build_ranges(index, &applied);
        Candidate {
            applied,
            n_points,
            n_bounded,
            unique_point,
            sort_reverse,
            ranges,
            shown_bounds: None,
        }
    }

    /// The scan of a text index for `terms` (each term's entries; a document may be reached
    /// through several terms, which the executor deduplicates).
    fn text(terms: &[&str]) -> Candidate {
        let ranges = terms
            .iter()
            .map(|term| {
                let prefix =
                    encode_component(&Bson::String((*term).to_string()), Direction::Ascending);
                KeyRange {
                    high: successor(&prefix).map_or(Bound::Unbounded, Bound::Excluded),
                    low: Bound::Included(prefix),
                }
            })
            .collect();
        let shown: Vec<Bson> = terms
            .iter()
            .map(|term| Bson::String((*term).to_string()))
            .collect();
        Candidate {
            applied: Vec::new(),
            n_points: 0,
            n_bounded: terms.len(),
            unique_point: false,
            sort_reverse: None,
            ranges,
            shown_bounds: Some(doc! { "_fts": shown }),
        }
    }

    /// The scan of `index` from `min` (inclusive) to `max` (exclusive), each a value per index
    /// field in key pattern order (see [`plan_hinted`]).
    fn min_max(
        collection: &str,
        index: &IndexMeta,
        min: Option<&Document>,
        max: Option<&Document>,
        sort: Option<&SortSpec>,
    ) -> Result<Candidate> {
        let key_of = |bound: &Document| -> Result<Vec<u8>> {
            let fields_match = bound.len() == index.fields.len()
                && bound
                    .keys()
                    .zip(&index.fields)
                    .all(|(field, (path, _))| field == path.as_str());
            if !fields_match {
                return Err(Error::invalid_options(
                    collection,
                    format!(
                        "The index chosen is not compatible with min/max: {bound} does not name the fields of index '{}' ({}) in order",
                        index.name, index.spec
                    ),
                )
                .with_code(51174));
            }
            let mut bytes = Vec::new();
            let collation = index.settings.collation();
            for (value, (_, direction)) in bound.values().zip(&index.fields) {
                bytes.extend(encode_component(&collation.key_value(value), *direction));
            }
            Ok(bytes)
        };
        let low = min.map(key_of).transpose()?;
        let high = max.map(key_of).transpose()?;
        if let (Some(low), Some(high)) = (&low, &high)
            && low >= high
        {
            return Err(Error::invalid_options(
                collection,
                "The value provided for min() does not come before the value provided for max() in the hinted index",
            )
            .with_code(51175));
        }
        // Components are self-delimiting and entries are components then (unless unique) the
        // `_id` key, so an entry is at least `low` exactly when its components are, and below
        // `high` exactly when its components are.
        let range = KeyRange {
            low: low.map_or(Bound::Unbounded, Bound::Included),
            high: high.map_or(Bound::Unbounded, Bound::Excluded),
        };
        let sort_reverse = match sort {
            Some(sort)
                if !index.multikey
                    && index.hashed.is_none()
                    && sort.collation() == index.settings.collation()
                    && !sort.has_text_score() =>
            {
                sort_direction(index, &[], sort)
            }
            _ => None,
        };
        let mut shown = Document::new();
        for (position, (path, _)) in index.fields.iter().enumerate() {
            let edge = |bound: Option<&Document>, open: &str| {
                bound
                    .and_then(|bound| bound.values().nth(position))
                    .map_or_else(|| open.to_string(), ToString::to_string)
            };
            let low = edge(min, "MinKey");
            let high = edge(max, "MaxKey");
            shown.insert(
                path.as_str(),
                vec![Bson::String(format!("[{low}, {high})"))],
            );
        }
        Ok(Candidate {
            applied: Vec::new(),
            n_points: 0,
            n_bounded: 0,
            unique_point: false,
            sort_reverse,
            ranges: vec![range],
            shown_bounds: Some(shown),
        })
    }

    fn score(&self) -> (bool, usize, usize, bool) {
        (
            self.unique_point,
            self.n_points,
            self.n_bounded,
            self.sort_reverse.is_some(),
        )
    }

    fn explain_bounds(&self, index: &IndexMeta) -> Document {
        let mut shown = Document::new();
        for (position, (path, _)) in index.fields.iter().enumerate() {
            let intervals: Vec<Bson> = match self.applied.get(position) {
                Some(FieldBounds::Points(values)) => values
                    .iter()
                    .map(|value| Bson::String(format!("[{value}, {value}]")))
                    .collect(),
                Some(FieldBounds::Range { low, high, bracket }) => {
                    let low = match low.as_deref() {
                        Some((value, true)) => format!("[{value}"),
                        Some((value, false)) => format!("({value}"),
                        None => format!("[{}", bracket_edge(*bracket, false)),
                    };
                    let high = match high.as_deref() {
                        Some((value, true)) => format!("{value}]"),
                        Some((value, false)) => format!("{value})"),
                        None => format!("{}]", bracket_edge(*bracket, true)),
                    };
                    vec![Bson::String(format!("{low}, {high}"))]
                }
                Some(FieldBounds::All) | None => vec![Bson::String("[MinKey, MaxKey]".into())],
            };
            shown.insert(path.as_str(), intervals);
        }
        shown
    }
}

fn bracket_edge(bracket: CanonicalType, high: bool) -> String {
    match (bracket, high) {
        (CanonicalType::Number, false) => "-inf".into(),
        (CanonicalType::Number, true) => "+inf".into(),
        (other, false) => format!("min {other:?}").to_lowercase(),
        (other, true) => format!("max {other:?}").to_lowercase(),
    }
}

/// The range of `_id` keys from `min` (inclusive) to `max` (exclusive), each `{ _id: value }`
/// (MongoDB's `min`/`max` with a hint of the `_id` index), with MongoDB's codes.
fn id_min_max(
    collection: &str,
    min: Option<&Document>,
    max: Option<&Document>,
) -> Result<KeyRange> {
    let key_of = |bound: &Document| -> Result<Vec<u8>> {
        match bound.get("_id") {
            Some(value) if bound.len() == 1 => Ok(key::to_key(value)),
            _ => Err(Error::invalid_options(
                collection,
                format!(
                    "The index chosen is not compatible with min/max: {bound} does not name the fields of index '_id_' ({{ _id: 1 }}) in order"
                ),
            )
            .with_code(51174)),
        }
    };
    let low = min.map(key_of).transpose()?;
    let high = max.map(key_of).transpose()?;
    if let (Some(low), Some(high)) = (&low, &high)
        && low >= high
    {
        return Err(Error::invalid_options(
            collection,
            "The value provided for min() does not come before the value provided for max() in the hinted index",
        )
        .with_code(51175));
    }
    Ok(KeyRange {
        low: low.map_or(Bound::Unbounded, Bound::Included),
        high: high.map_or(Bound::Unbounded, Bound::Excluded),
    })
}

/// Whether a value can bound an index scan (see the module docs).
fn usable_operand(value: &Bson) -> bool {
    !matches!(
        value,
        Bson::Array(_) | Bson::Null | Bson::Undefined | Bson::MinKey | Bson::MaxKey
    )
}

/// Whether an operand of `filter` can bound a scan of an index whose strings order by
/// `index_collation`: it is usable, and no string in it is compared under another collation
/// than the index's (MongoDB's rule: a collated index serves string bounds only to a query
/// of the same collation, and a simple index only to a simple query).
fn bounds_scan(value: &Bson, filter: &Filter, index_collation: &Collation) -> bool {
    usable_operand(value) && (filter.collation() == index_collation || !contains_string(value))
}

/// Whether a value is, or holds at any depth, a string (or symbol).
fn contains_string(value: &Bson) -> bool {
    match value {
        Bson::String(_) | Bson::Symbol(_) => true,
        Bson::Document(document) => document.values().any(contains_string),
        Bson::Array(items) => items.iter().any(contains_string),
        Bson::JavaScriptCodeWithScope(code) => code.scope.values().any(contains_string),
        _ => false,
    }
}

/// A range being built: low end, high end (each a value and whether it is included), and
/// the type bracket both ends share.
type RangeBounds = (
    Option<Box<(Bson, bool)>>,
    Option<Box<(Bson, bool)>>,
    CanonicalType,
);

/// The bounds `filter` puts on index field `path`, as values of `index`'s keys (collation
/// keys for strings, on a collated index).
fn field_bounds(filter: &Filter, path: &str, index: &IndexMeta) -> FieldBounds {
    let collation = index.settings.collation();
    let bounds = value_bounds(filter, path, index.multikey, collation);
    if collation.is_simple() {
        return bounds;
    }
    match bounds {
        FieldBounds::Points(values) => {
            let mut keys: Vec<Bson> = values
                .iter()
                .map(|value| collation.key_value(value))
                .collect();
            keys.sort_by(compare);
            keys.dedup_by(|a, b| compare(a, b).is_eq());
            FieldBounds::Points(keys)
        }
        FieldBounds::Range { low, high, bracket } => {
            let key = |bound: Box<(Bson, bool)>| Box::new((collation.key_value(&bound.0), bound.1));
            FieldBounds::Range {
                low: low.map(key),
                high: high.map(key),
                bracket,
            }
        }
        FieldBounds::All => FieldBounds::All,
    }
}

/// The values bounding index field `path` under `filter`, for an index whose strings
/// compare by `collation`.
fn value_bounds(filter: &Filter, path: &str, multikey: bool, collation: &Collation) -> FieldBounds {
    let predicates: Vec<&Predicate> = filter
        .field_predicates()
        .filter(|(field, _)| field.as_str() == path)
        .map(|(_, predicate)| predicate)
        .collect();
    for predicate in &predicates {
        if let Predicate::Eq(operand) = predicate
            && bounds_scan(operand.value(), filter, collation)
        {
            return FieldBounds::Points(vec![operand.value().clone()]);
        }
    }
    for predicate in &predicates {
        if let Predicate::In(list) = predicate
            && list.regexes.is_empty()
            && list
                .values
                .iter()
                .all(|value| bounds_scan(value.value(), filter, collation))
        {
            let mut values: Vec<Bson> = list.values.iter().map(|v| v.value().clone()).collect();
            values.sort_by(compare);
            values.dedup_by(|a, b| compare(a, b).is_eq());
            return FieldBounds::Points(values);
        }
    }
    let mut bounds: Option<RangeBounds> = None;
    for predicate in &predicates {
        let (value, is_low, inclusive) = match predicate {
            Predicate::Gt(operand) => (operand.value(), true, false),
            Predicate::Gte(operand) => (operand.value(), true, true),
            Predicate::Lt(operand) => (operand.value(), false, false),
            Predicate::Lte(operand) => (operand.value(), false, true),
            _ => continue,
        };
        if !bounds_scan(value, filter, collation) {
            continue;
        }
        let bracket = canonical_type(value);
        let (low, high, known_bracket) = bounds.get_or_insert((None, None, bracket));
        if *known_bracket != bracket {
            continue;
        }
        if multikey && (low.is_some() || high.is_some()) {
            // Two elements of one array may satisfy two bounds separately: keep the first.
            continue;
        }
        let slot = if is_low { low } else { high };
        let tighter = match slot {
            None => true,
            Some(known) => {
                let (known, known_inclusive) = &**known;
                let order = compare(value, known);
                let order = if is_low { order } else { order.reverse() };
                order.is_gt() || (order.is_eq() && *known_inclusive && !inclusive)
            }
        };
        if tighter {
            *slot = Some(Box::new((value.clone(), inclusive)));
        }
    }
    match bounds {
        Some((low, high, bracket)) => FieldBounds::Range { low, high, bracket },
        None => FieldBounds::All,
    }
}

/// Whether scanning `index` with `applied` bounds yields `sort`, and in which direction.
fn sort_direction(index: &IndexMeta, applied: &[FieldBounds], sort: &SortSpec) -> Option<bool> {
    let single_point = |position: usize| matches!(applied.get(position), Some(FieldBounds::Points(values)) if values.len() <= 1);
    let mut position = 0;
    let mut reverse: Option<bool> = None;
    for sort_key in sort.keys() {
        loop {
            let (path, direction) = index.fields.get(position)?;
            if path.as_str() == sort_key.path.as_str() {
                if !single_point(position) {
                    let this_reverse = *direction != sort_key.direction;
                    if *reverse.get_or_insert(this_reverse) != this_reverse {
                        return None;
                    }
                }
                position += 1;
                break;
            }
            if !single_point(position) {
                return None;
            }
            position += 1;
        }
    }
    Some(reverse.unwrap_or(false))
}

/// One component's bound in key bytes: inclusive or not, and whether the bytes are a whole
/// (self-delimiting) component or a type-bracket prefix.
#[derive(Clone)]
struct ComponentBound {
    bytes: Vec<u8>,
    inclusive: bool,
}

fn encode_component(value: &Bson, direction: Direction) -> Vec<u8> {
    let mut out = Vec::new();
    match direction {
        Direction::Ascending => key::encode(value, &mut out),
        Direction::Descending => key::encode_descending(value, &mut out),
    }
    out
}

/// The byte bounds of one field's range, in scan order of the index.
fn component_range(
    low: Option<&(Bson, bool)>,
    high: Option<&(Bson, bool)>,
    bracket: CanonicalType,
    direction: Direction,
) -> (ComponentBound, ComponentBound) {
    let type_byte = bracket as u8;
    let value_bound = |bound: &(Bson, bool)| ComponentBound {
        bytes: encode_component(&bound.0, direction),
        inclusive: bound.1,
    };
    match direction {
        Direction::Ascending => (
            low.map_or(
                ComponentBound {
                    bytes: vec![type_byte],
                    inclusive: true,
                },
                value_bound,
            ),
            high.map_or(
                ComponentBound {
                    bytes: vec![type_byte + 1],
                    inclusive: false,
                },
                value_bound,
            ),
        ),
        Direction::Descending => (
            high.map_or(
                ComponentBound {
                    bytes: vec![!type_byte],
                    inclusive: true,
                },
                value_bound,
            ),
            low.map_or(
                ComponentBound {
                    bytes: vec![!type_byte + 1],
                    inclusive: false,
                },
                value_bound,
            ),
        ),
    }
}

/// The smallest byte string greater than every string starting with `prefix` (`None`: no
/// such string, the range is unbounded above).
fn successor(prefix: &[u8]) -> Option<Vec<u8>> {
    let mut end = prefix.to_vec();
    while let Some(last) = end.pop() {
        if last < u8::MAX {
            end.push(last + 1);
            return Some(end);
        }
    }
    None
}

fn build_ranges(index: &IndexMeta, applied: &[FieldBounds]) -> Vec<KeyRange> {
    let mut prefixes: Vec<Vec<u8>> = vec![Vec::new()];
    let mut range: Option<(ComponentBound, ComponentBound)> = None;
    for ((_, direction), bounds) in index.fields.iter().zip(applied) {
        match bounds {
            FieldBounds::Points(values) => {
                let mut components: Vec<Vec<u8>> = values
                    .iter()
                    .map(|value| encode_component(value, *direction))
                    .collect();
                components.sort();
                components.dedup();
                let mut next = Vec::with_capacity(prefixes.len() * components.len());
                for prefix in &prefixes {
                    for component in &components {
                        let mut combined = prefix.clone();
                        combined.extend_from_slice(component);
                        next.push(combined);
                    }
                }
                prefixes = next;
            }
            FieldBounds::Range { low, high, bracket } => {
                range = Some(component_range(
                    low.as_deref(),
                    high.as_deref(),
                    *bracket,
                    *direction,
                ));
            }
            FieldBounds::All => {}
        }
    }
    prefixes
        .into_iter()
        .map(|prefix| match &range {
            None if prefix.is_empty() => KeyRange::all(),
            None => KeyRange {
                low: Bound::Included(prefix.clone()),
                high: successor(&prefix).map_or(Bound::Unbounded, Bound::Excluded),
            },
            Some((low, high)) => {
                let mut low_key = prefix.clone();
                low_key.extend_from_slice(&low.bytes);
                let mut high_key = prefix;
                high_key.extend_from_slice(&high.bytes);
                KeyRange {
                    low: if low.inclusive {
                        Bound::Included(low_key)
                    } else {
                        successor(&low_key).map_or(Bound::Excluded(low_key), Bound::Included)
                    },
                    high: if high.inclusive {
                        successor(&high_key).map_or(Bound::Unbounded, Bound::Excluded)
                    } else {
                        Bound::Excluded(high_key)
                    },
                }
            }
        })
        .collect()
}
