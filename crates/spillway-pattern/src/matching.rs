//! Queries on logical documents: which filters touch a managed field, the clauses an index
//! on the stored documents may still answer, matching a stored main document on its logical
//! form, and the union plan that answers an equality on a managed field from the indexes of
//! both sides (`customers_purchased` in main documents, `customers_purchased_extra` in
//! buckets).
//!
//! The backend runs the queries; this module says which, and decides the matches.

use bson::{Bson, Document, RawDocument};
use spillway_doc::expr::Dependencies;
use spillway_doc::filter::{Clause, Filter, Predicate};
use spillway_doc::path::FieldPath;

use crate::backend::ReadBackend;
use crate::engine::Engine;
use crate::error::PatternError;
use crate::policy::{Pattern, Policy, Shape};

/// Whether a clause of `filter` reads a path for which `managed` holds.
fn touches(filter: &Filter, managed: &dyn Fn(&str) -> bool) -> bool {
    filter.clauses.iter().any(|clause| match clause {
        Clause::Field { path, .. } => managed(path.as_str()),
        Clause::And(filters) | Clause::Or(filters) | Clause::Nor(filters) => {
            filters.iter().any(|inner| touches(inner, managed))
        }
        Clause::Expr(expression) => {
            let mut found = Dependencies::default();
            expression.dependencies(&mut found);
            found.whole_document || found.paths.iter().any(|path| managed(path))
        }
        // The facade refuses `$text` on collections with policies: it reads stored fields.
        Clause::Text(_) => false,
        // JavaScript may read any field: a `$where` is answered on logical documents.
        Clause::Where(_) => true,
        // A schema may read any field (`required`, `additionalProperties`...).
        Clause::JsonSchema(_) => true,
    })
}

/// Whether `filter` must be answered on logical documents of `engine`'s collection: it
/// touches a managed field.
pub fn is_logical_query(engine: &Engine<'_>, filter: &Filter) -> bool {
    !engine.is_empty() && touches(filter, &|path| engine.is_managed_path(path))
}

/// The clauses of `filter` an index on stored documents may answer: those that do not touch
/// a managed field (an index on a managed field covers the main part of the array only).
pub fn planning_filter(engine: &Engine<'_>, filter: &Filter) -> Filter {
    filter.with_clauses(
        filter
            .clauses
            .iter()
            .filter(|clause| {
                let single = filter.with_clauses(vec![(*clause).clone()]);
                !touches(&single, &|path| engine.is_managed_path(path))
            })
            .cloned()
            .collect(),
    )
}

/// Whether the raw stored main document `stored` matches `filter` as a logical document:
/// its logical view (flags kept, so a filter may test them) is spliced from raw BSON only
/// when its stored form may differ from the logical one, and the filter cannot be decided
/// on the stored document (one that only asks for elements and matches the stored prefix
/// of each array matches the whole array too).
///
/// # Errors
/// An invalid filter; the backend's.
pub fn matches_logical<R: ReadBackend>(
    engine: &Engine<'_>,
    backend: &R,
    filter: &Filter,
    stored: &RawDocument,
) -> Result<bool, R::Error> {
    let view = if engine.may_differ_raw(stored) {
        // The stored arrays are prefixes of the logical ones: a filter that only asks for
        // elements is decided by the stored document when it matches there.
        if filter.holds_as_arrays_grow(&|path| engine.is_managed_path(path))
            && filter.matches(stored).map_err(PatternError::filter)?
        {
            return Ok(true);
        }
        engine.expand_raw(backend, stored, true)?
    } else {
        None
    };
    Ok(filter
        .matches(view.as_deref().unwrap_or(stored))
        .map_err(PatternError::filter)?)
}

/// Where a managed path's values live in side documents: `customers_purchased` →
/// `customers_purchased_extra` (outlier buckets), `reviews.review_author` → `review_author`
/// (subset archive). `None` for a path the side collection cannot index element-wise (a
/// subset's whole elements).
pub fn side_path(pattern: &Pattern, path: &str) -> Option<String> {
    let rest = path
        .strip_prefix(pattern.field.as_str())
        .filter(|rest| rest.is_empty() || rest.starts_with('.'))?;
    match &pattern.shape {
        Shape::Outlier { overflow_field, .. } => Some(format!("{overflow_field}{rest}")),
        Shape::Subset { .. } => rest.strip_prefix('.').map(str::to_string),
    }
}

/// The index a policy's side collection needs beside the main collection's index `keys`, so
/// that logical equality queries can use both; `None` when `keys` does not lead with a
/// managed path the side collection can index.
pub fn mirrored_index(pattern: &Pattern, keys: &Document) -> Option<Document> {
    let (first, direction) = keys.iter().next()?;
    let side = side_path(pattern, first)?;
    let mut mirrored = Document::new();
    mirrored.insert(side, direction.clone());
    Some(mirrored)
}

/// How to answer a filter with an equality or `$in` on a managed path from two indexed
/// queries: the main documents whose main array matches (`main`), and the side documents
/// that match (`side`, on the policy's side collection), whose links name the other main
/// documents. Their union holds every logical match (each element is in the main array or
/// in a side document); each candidate must still be matched on its logical document.
#[derive(Debug, Clone)]
pub struct UnionPlan<'p> {
    /// The policy whose array the equality reads.
    pub policy: &'p Policy,
    /// The query on the main collection.
    pub main: Filter,
    /// The query on the side collection.
    pub side: Filter,
    /// The filter's other clauses, which each candidate must still match on its logical
    /// view (when empty, every candidate is a match: the equality holds on the main array
    /// or on a side document, so on the logical array).
    pub rest: Filter,
}

/// The [`UnionPlan`] for `filter` on `engine`'s collection, when a clause allows it and
/// `leads_an_index(collection, path)` says both sides have an index on the path.
///
/// # Errors
/// A side path that is not a valid field path.
pub fn union_plan<'p>(
    engine: &Engine<'p>,
    filter: &Filter,
    leads_an_index: impl Fn(&str, &str) -> bool,
) -> Result<Option<UnionPlan<'p>>, PatternError> {
    let whole_value = |value: &Bson| matches!(value, Bson::Array(_));
    let found = filter.field_predicates().find_map(|(path, predicate)| {
        let usable = match predicate {
            Predicate::Eq(operand) => !operand.is_null() && !whole_value(operand.value()),
            Predicate::In(list) => {
                !list.contains_null() && list.values.iter().all(|value| !whole_value(value.value()))
            }
            _ => false,
        };
        if !usable {
            return None;
        }
        let policy = engine.policies().find(|policy| {
            let head = path.as_str().split('.').next().unwrap_or_default();
            policy.pattern.field == head
        })?;
        let side = side_path(&policy.pattern, path.as_str())?;
        let both_indexed = leads_an_index(engine.collection(), path.as_str())
            && leads_an_index(&policy.pattern.side_collection, &side);
        both_indexed.then_some((path, predicate, policy, side))
    });
    let Some((path, predicate, policy, side)) = found else {
        return Ok(None);
    };
    let side = FieldPath::parse(&side).map_err(PatternError::filter)?;
    let mut rest = filter.clone();
    let position = rest
        .clauses
        .iter()
        .position(|clause| matches!(clause, Clause::Field { path: p, predicate: q } if p == path && q == predicate));
    if let Some(position) = position {
        rest.clauses.remove(position);
    }
    Ok(Some(UnionPlan {
        policy,
        main: filter.with_clauses(vec![Clause::Field {
            path: path.clone(),
            predicate: predicate.clone(),
        }]),
        side: filter.with_clauses(vec![Clause::Field {
            path: side,
            predicate: predicate.clone(),
        }]),
        rest,
    }))
}
