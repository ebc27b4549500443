//! MongoDB's update language: replacement documents and update operators, parsed once into
//! an [`Update`] and applied to decoded documents.
//!
//! - [`Update::parse`] checks everything that does not depend on a document (see the
//!   `parse` submodule): unknown operators, operand types, `$push` modifiers, conflicting
//!   paths, `arrayFilters`. Its errors are [`DocError::InvalidUpdate`] and name the operator
//!   and the field.
//! - [`Update::apply`] applies it to one document with an [`ApplyContext`] (upsert insert or
//!   not, the array index the query matched for `$`, the time for `$currentDate`). Failures
//!   that depend on the document (`$inc` on a string, `$push` onto a non-array, a change of
//!   `_id`...) are [`DocError::UpdateFailed`], naming the operator, the field and the
//!   document's `_id`. **A failed update changes nothing**: operators work on a copy that
//!   replaces the document only when every one of them succeeded.
//! - [`Update::parse_pipeline`] takes an update given as an aggregation pipeline
//!   (`[{ $set: { total: { $add: ["$a", "$b"] } } }]`; only `$addFields`/`$set`,
//!   `$project`/`$unset` and `$replaceRoot`/`$replaceWith`, as in MongoDB), evaluated on the
//!   document with `$$NOW` at the statement's time; it may not change `_id`.
//! - [`Update::upsert`] builds the document an upsert inserts, from the query's equality
//!   fields ([`Update::upsert_base`]) and the update.
//! - [`Update::collated`] makes every comparison the update makes order strings under the
//!   operation's collation, as MongoDB's update operators compare under it: `$addToSet`'s
//!   duplicates, `$pull`'s and `$pullAll`'s matches, `$min`/`$max`, `$push`'s `$sort`, the
//!   `arrayFilters` and a pipeline's expressions. The one comparator is
//!   [`crate::compare::compare_collated`], the one filters and sorts use.
//!
//! Field updates are applied in MongoDB 5.0+'s order: by path, field names lexicographically
//! and array indexes numerically, so that new fields appear in that order whatever order the
//! update lists them in. This module must never know about storage or collections, and never
//! generate an `_id` (the database does that when it inserts).
//!
//! Submodules, bottom first: `arith`, `target` (positional paths and exact-path access) →
//! `array` (the array operators' operands) → `parse` → `upsert`; what several of them share
//! (`check_storable`, `describe_value`) is here.

mod arith;
mod array;
mod parse;
mod target;
mod upsert;

use std::collections::BTreeSet;

use std::sync::Arc;

use bson::{Bson, DateTime, Document, Timestamp};

use self::arith::Arithmetic;
use self::parse::{Action, DateKind, FieldUpdate, OperatorUpdate};
use self::target::Failure;
use crate::collation::Collation;
use crate::compare::compare_collated;
use crate::error::{DocError, Result};
use crate::expr::Variables;
use crate::filter::Filter;
use crate::pipeline::{Pipeline, PipelineOptions, Source};
use crate::size::{DOLLAR_NAMES_REFUSED, dollar_prefixed_field};

/// A parsed update: a replacement document or a list of operator updates.
#[derive(Debug, Clone, PartialEq)]
pub struct Update {
    kind: Kind,
    /// How the update compares strings (simple unless [`Update::collated`] says otherwise).
    collation: Collation,
}

#[derive(Debug, Clone)]
enum Kind {
    Replacement(Document),
    Operators(OperatorUpdate),
    /// The stages as given (for equality) and parsed.
    Pipeline(Vec<Document>, Arc<Pipeline>),
}

impl PartialEq for Kind {
    fn eq(&self, other: &Kind) -> bool {
        match (self, other) {
            (Kind::Replacement(a), Kind::Replacement(b)) => a == b,
            (Kind::Operators(a), Kind::Operators(b)) => a == b,
            (Kind::Pipeline(a, _), Kind::Pipeline(b, _)) => a == b,
            _ => false,
        }
    }
}

/// The stages an update pipeline may hold (MongoDB's list).
const UPDATE_STAGES: &[&str] = &[
    "$addFields",
    "$set",
    "$project",
    "$unset",
    "$replaceRoot",
    "$replaceWith",
];

/// An update pipeline reads nothing but its document.
struct NoCollections;

impl Source for NoCollections {
    fn documents(
        &self,
        collection: &str,
        _filter: &Document,
    ) -> Result<Box<dyn Iterator<Item = Result<Document>> + '_>> {
        Err(DocError::update(format!(
            "an update pipeline cannot read collection '{collection}'"
        )))
    }
}

/// What an update needs to know besides the document it changes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ApplyContext {
    /// Whether the document is being inserted by an upsert (`$setOnInsert` applies only then).
    pub is_upsert_insert: bool,
    /// The index of the array element the query matched, for the positional `$` operator
    /// (from the filter's `MatchDetails::array_index`).
    pub positional_index: Option<usize>,
    /// The time `$currentDate` stores.
    pub now: DateTime,
}

impl ApplyContext {
    /// A context for an ordinary update (not an upsert insert, no matched array element).
    pub fn new(now: DateTime) -> ApplyContext {
        ApplyContext {
            is_upsert_insert: false,
            positional_index: None,
            now,
        }
    }

    /// The same context with the array index the query matched.
    pub fn with_positional_index(self, index: Option<usize>) -> ApplyContext {
        ApplyContext {
            positional_index: index,
            ..self
        }
    }

    /// The same context, for the insert of an upsert.
    pub fn upsert_insert(self) -> ApplyContext {
        ApplyContext {
            is_upsert_insert: true,
            ..self
        }
    }
}

impl Default for ApplyContext {
    /// An ordinary update at the current time.
    fn default() -> Self {
        ApplyContext::new(DateTime::now())
    }
}

/// An update split by [`Update::split_appends`].
#[derive(Debug, Clone, PartialEq)]
pub struct Appends {
    /// The values appended to each array field (`$push`), in the update's order of
    /// application.
    pub values: Vec<(String, Vec<Bson>)>,
    /// The values appended to each array field that does not hold them yet (`$addToSet`).
    pub add_to_set: Vec<(String, Vec<Bson>)>,
    /// Every other operation of the update (possibly none).
    pub rest: Update,
}

/// What applying an update did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UpdateOutcome {
    /// Whether the document actually changed (MongoDB's `modifiedCount` counts these).
    pub modified: bool,
}

impl Update {
    /// Parses an update document: operators (`{ $set: { a: 1 } }`, every top-level field an
    /// operator) or a replacement (no top-level field starts with `$`). `array_filters` are
    /// the `arrayFilters` of the operation, one per `$[<identifier>]` of the update.
    pub fn parse(update: &Document, array_filters: &[Document]) -> Result<Update> {
        let n_operators = update.keys().filter(|key| key.starts_with('$')).count();
        if n_operators == 0 {
            if !array_filters.is_empty() {
                return Err(DocError::update(
                    "arrayFilters can only be used with update operators, not with a replacement document",
                ));
            }
            // Names starting with `$` below the top level are data, as MongoDB 5.0+ stores
            // them (at the top level they would be operators).
            return Ok(Update {
                kind: Kind::Replacement(update.clone()),
                collation: Collation::simple(),
            });
        }
        if n_operators < update.len() {
            let plain = update
                .keys()
                .find(|key| !key.starts_with('$'))
                .expect("counted");
            let operator = update
                .keys()
                .find(|key| key.starts_with('$'))
                .expect("counted");
            return Err(DocError::update(format!(
                "the update mixes operators ('{operator}') and plain fields ('{plain}'); use either operators only or a replacement document"
            )));
        }
        Ok(Update {
            kind: Kind::Operators(parse::parse_operators(update, array_filters)?),
            collation: Collation::simple(),
        })
    }

    /// Parses an update given as an aggregation pipeline. Only `$addFields`/`$set`,
    /// `$project`/`$unset` and `$replaceRoot`/`$replaceWith` stages are allowed.
    pub fn parse_pipeline(stages: &[Document]) -> Result<Update> {
        for stage in stages {
            let name = stage.keys().next().map_or("", String::as_str);
            if !UPDATE_STAGES.contains(&name) {
                return Err(DocError::update(format!(
                    "{name} is not allowed to be used within an update (allowed: {})",
                    UPDATE_STAGES.join(", ")
                )));
            }
        }
        let pipeline = Pipeline::parse(stages, &PipelineOptions::default())?;
        Ok(Update {
            kind: Kind::Pipeline(stages.to_vec(), Arc::new(pipeline)),
            collation: Collation::simple(),
        })
    }

    /// This update with strings compared under `collation` (the operation's `collation`
    /// option, or the collection's default collation), as MongoDB compares them: `$addToSet`
    /// adds no value equal under it to one the array holds (nor one of `$each` twice), `$pull`
    /// (its value, condition or query) and `$pullAll` remove the elements equal or matching
    /// under it, `$min`/`$max` keep the smaller or larger value in its order (a value equal
    /// under it changes nothing), `$push`'s `$sort` orders by it, the `arrayFilters` match
    /// under it, and a pipeline's expressions compare under it. Field names still compare by
    /// code point. A replacement compares nothing.
    pub fn collated(mut self, collation: &Collation) -> Update {
        if let Kind::Operators(operators) = &mut self.kind {
            for field in &mut operators.fields {
                if let Action::Pull(matcher) = &mut field.action {
                    matcher.collate(collation);
                }
            }
            for filter in operators.array_filters.values_mut() {
                *filter = std::mem::take(filter).collated(collation);
            }
        }
        self.collation = collation.clone();
        self
    }

    /// How this update compares strings.
    pub fn collation(&self) -> &Collation {
        &self.collation
    }

    /// Whether this is a replacement document rather than operators.
    pub fn is_replacement(&self) -> bool {
        matches!(self.kind, Kind::Replacement(_))
    }

    /// The replacement document, if this is one.
    pub fn replacement(&self) -> Option<&Document> {
        match &self.kind {
            Kind::Replacement(replacement) => Some(replacement),
            Kind::Operators(_) | Kind::Pipeline(..) => None,
        }
    }

    /// The `(operator, path)` pairs of an operator update, in the order they are applied
    /// (`$rename` lists its source). Empty for a replacement.
    pub fn operations(&self) -> Vec<(&'static str, &str)> {
        match &self.kind {
            Kind::Replacement(_) | Kind::Pipeline(..) => Vec::new(),
            Kind::Operators(operators) => operators
                .fields
                .iter()
                .map(|field| (field.action.operator(), field.path.dotted.as_str()))
                .collect(),
        }
    }

    /// Every top-level field this update may change (both ends of a `$rename`); `None` for
    /// a replacement, which may change all of them.
    pub fn touched_top_level_fields(&self) -> Option<BTreeSet<String>> {
        let Kind::Operators(operators) = &self.kind else {
            return None;
        };
        let mut touched = BTreeSet::new();
        for field in &operators.fields {
            touched.insert(head(&field.path.dotted).to_string());
            if let Action::Rename { to } = &field.action {
                touched.insert(head(&to.dotted).to_string());
            }
        }
        Some(touched)
    }

    /// Splits off plain appends to the top-level array fields `fields`, for a storage layer
    /// that keeps those arrays elsewhere (spillway-pattern's fast path).
    ///
    /// Returns `None` unless every operation on those fields is a `$push` without
    /// `$position`, `$sort` or `$slice` (`$each` is fine) or an `$addToSet` on the field
    /// itself, no other operation touches them (a `$rename` to or from them included), and the
    /// rest of the update has no positional operator (whose element the query would have to
    /// find in the whole array). Then applying [`Appends::rest`] to the document, appending
    /// [`Appends::values`], and appending those of [`Appends::add_to_set`] that the array does
    /// not hold yet (each once), to arrays that must exist, gives the same result as applying
    /// the whole update. A replacement is never split, nor an `$addToSet` on those fields
    /// under a non-simple collation: whether the array holds a value is then a question of
    /// the collation, which a storage layer that looks values up by their bytes cannot answer
    /// (the whole update, applied to the whole document, can).
    pub fn split_appends(&self, fields: &[&str]) -> Option<Appends> {
        let Kind::Operators(operators) = &self.kind else {
            return None;
        };
        let managed = |dotted: &str| fields.contains(&head(dotted));
        let mut values: Vec<(String, Vec<Bson>)> = Vec::new();
        let mut add_to_set: Vec<(String, Vec<Bson>)> = Vec::new();
        let mut rest = Vec::new();
        let on_the_field =
            |field: &FieldUpdate| field.path.parts.len() == 1 && field.path.is_plain();
        for field in &operators.fields {
            match &field.action {
                Action::AddToSet(candidates) if managed(&field.path.dotted) => {
                    if !on_the_field(field) || !self.collation.is_simple() {
                        return None;
                    }
                    add_to_set.push((field.path.dotted.clone(), candidates.clone()));
                }
                Action::Push(push) if managed(&field.path.dotted) => {
                    let plain = push.position.is_none()
                        && push.sort.is_none()
                        && push.slice.is_none()
                        && field.path.parts.len() == 1
                        && field.path.is_plain();
                    if !plain || values.iter().any(|(known, _)| *known == field.path.dotted) {
                        return None;
                    }
                    values.push((field.path.dotted.clone(), push.values.clone()));
                }
                Action::Rename { to } if managed(&to.dotted) => return None,
                _ if managed(&field.path.dotted) => return None,
                _ if !field.path.is_plain() => return None,
                _ => rest.push(field.clone()),
            }
        }
        if values.is_empty() && add_to_set.is_empty() {
            return None;
        }
        Some(Appends {
            values,
            add_to_set,
            rest: Update {
                kind: Kind::Operators(OperatorUpdate {
                    fields: rest,
                    array_filters: operators.array_filters.clone(),
                    has_positional: false,
                }),
                collation: self.collation.clone(),
            },
        })
    }

    /// Applies the update to `document`. On error the document is unchanged.
    pub fn apply(&self, document: &mut Document, context: &ApplyContext) -> Result<UpdateOutcome> {
        match &self.kind {
            Kind::Replacement(replacement) => apply_replacement(replacement, document),
            Kind::Operators(operators) => {
                apply_operators(operators, document, context, &self.collation)
            }
            Kind::Pipeline(_, pipeline) => {
                apply_pipeline(pipeline, document, context, &self.collation)
            }
        }
    }

    /// The document an upsert starts from when its query `filter` matched nothing: the
    /// query's equality fields for an operator update (`{ _id: 7, "a.b": 1, c: { $eq: 2 } }`
    /// gives `{ _id: 7, a: { b: 1 }, c: 2 }`), only its `_id` for a replacement. Apply the
    /// update to it with [`ApplyContext::is_upsert_insert`] set, or call [`Update::upsert`].
    pub fn upsert_base(&self, filter: &Filter) -> Result<Document> {
        upsert::equality_fields(filter, self.is_replacement())
    }

    /// The document an upsert inserts when its query `filter` matched nothing:
    /// [`Update::upsert_base`] with the update applied as an upsert insert, `_id` first when
    /// there is one. The caller generates `_id` when there is none.
    pub fn upsert(&self, filter: &Filter, context: &ApplyContext) -> Result<Document> {
        let mut document = self.upsert_base(filter)?;
        let context = ApplyContext {
            is_upsert_insert: true,
            positional_index: None,
            ..*context
        };
        self.apply(&mut document, &context)?;
        move_id_first(&mut document);
        Ok(document)
    }
}

/// Runs an update pipeline on `document`, its expressions comparing under `collation`;
/// `_id` may not change (one the pipeline drops is kept, as MongoDB keeps it).
fn apply_pipeline(
    pipeline: &Arc<Pipeline>,
    document: &mut Document,
    context: &ApplyContext,
    collation: &Collation,
) -> Result<UpdateOutcome> {
    let variables = Variables {
        now: context.now,
        collation: collation.clone(),
        ..pipeline.variables().clone()
    };
    let input = Box::new(std::iter::once(Ok(document.clone())));
    let mut output = crate::pipeline::run(
        Arc::clone(pipeline),
        input,
        Arc::new(NoCollections),
        variables,
    );
    let mut updated = output
        .next()
        .transpose()?
        .ok_or_else(|| DocError::update("the update pipeline produced no document"))?;
    match (document.get("_id"), updated.get("_id")) {
        (Some(id), None) => {
            let rest = std::mem::take(&mut updated);
            updated.insert("_id", id.clone());
            updated.extend(rest);
        }
        (Some(before), Some(after)) if before != after => {
            return Err(DocError::update(format!(
                "the update pipeline changed the immutable field '_id' from {before} to {after}"
            )));
        }
        _ => {}
    }
    // A pipeline may store names starting with `$` (`$setField`, `$literal`), as in MongoDB
    // 5.0+.
    let modified = updated != *document;
    *document = updated;
    Ok(UpdateOutcome { modified })
}

fn head(dotted: &str) -> &str {
    dotted.split('.').next().unwrap_or(dotted)
}

/// Puts `_id` first, where MongoDB keeps it.
fn move_id_first(document: &mut Document) {
    if document.keys().next().is_some_and(|first| first != "_id")
        && let Some(id) = document.remove("_id")
    {
        let rest = std::mem::take(document);
        document.insert("_id", id);
        document.extend(rest);
    }
}

fn apply_replacement(replacement: &Document, document: &mut Document) -> Result<UpdateOutcome> {
    let mut replaced = Document::new();
    match (document.get("_id"), replacement.get("_id")) {
        (Some(old_id), Some(new_id)) if !identical(old_id, new_id) => {
            return Err(DocError::UpdateFailed {
                operator: "replacement".to_string(),
                field: "_id".to_string(),
                id: Some(Box::new(old_id.clone())),
                message: format!("is immutable and cannot change from {old_id} to {new_id}"),
            });
        }
        (Some(id), _) | (None, Some(id)) => {
            replaced.insert("_id", id.clone());
        }
        (None, None) => {}
    }
    for (field, value) in replacement {
        if field != "_id" {
            replaced.insert(field.clone(), value.clone());
        }
    }
    let modified = !identical_documents(document, &replaced);
    if modified {
        *document = replaced;
    }
    Ok(UpdateOutcome { modified })
}

fn apply_operators(
    update: &OperatorUpdate,
    document: &mut Document,
    context: &ApplyContext,
    collation: &Collation,
) -> Result<UpdateOutcome> {
    let original_id = document.get("_id").cloned();
    let failed = |field_update: &FieldUpdate, failure: Failure| DocError::UpdateFailed {
        operator: field_update.action.operator().to_string(),
        field: failure.field,
        id: original_id.clone().map(Box::new),
        message: failure.message,
    };
    if update.fields.is_empty() {
        // What is left of an update whose appends the pattern layer took (`$push` alone).
        return Ok(UpdateOutcome { modified: false });
    }
    // Work on a copy so that a failure half-way leaves the document untouched.
    let mut working = document.clone();
    let mut modified = false;
    let mut written: BTreeSet<Vec<String>> = BTreeSet::new();
    for field_update in &update.fields {
        if matches!(field_update.action, Action::SetOnInsert(_)) && !context.is_upsert_insert {
            continue;
        }
        let targets = target::expand(&working, &field_update.path, context, &update.array_filters)
            .map_err(|failure| failed(field_update, failure))?;
        for parts in targets {
            if update.has_positional {
                check_not_written(&written, &parts)
                    .map_err(|failure| failed(field_update, failure))?;
                written.insert(parts.clone());
            }
            let changed = apply_field(
                &mut working,
                &field_update.action,
                &parts,
                context,
                collation,
            )
            .map_err(|failure| failed(field_update, failure))?;
            modified |= changed;
            let touches_id = parts[0] == "_id"
                || matches!(&field_update.action, Action::Rename { to } if head(&to.dotted) == "_id");
            if changed && touches_id {
                check_id_unchanged(original_id.as_ref(), &working)
                    .map_err(|failure| failed(field_update, failure))?;
            }
        }
    }
    if modified {
        *document = working;
    }
    Ok(UpdateOutcome { modified })
}

/// With positional paths, two paths of the update may land on the same element of one
/// document (`a.$[i]` and `a.$[j]`): MongoDB refuses that, and so do we.
fn check_not_written(written: &BTreeSet<Vec<String>>, parts: &[String]) -> Result<(), Failure> {
    let conflict = (1..=parts.len()).any(|length| written.contains(&parts[..length]))
        || written
            .range(parts.to_vec()..)
            .next()
            .is_some_and(|next| next.starts_with(parts));
    if conflict {
        return Err(Failure::new(
            parts.join("."),
            "is reached by two paths of the update (through positional operators); an update cannot change a field twice",
        ));
    }
    Ok(())
}

fn check_id_unchanged(original: Option<&Bson>, working: &Document) -> Result<(), Failure> {
    let Some(original) = original else {
        return Ok(());
    };
    match working.get("_id") {
        Some(current) if identical(original, current) => Ok(()),
        Some(current) => Err(Failure::new(
            "_id",
            format!("is immutable and cannot change from {original} to {current}"),
        )),
        None => Err(Failure::new("_id", "is immutable and cannot be removed")),
    }
}

/// Applies one operator at one exact path, comparing strings under `collation`; returns
/// whether the document changed.
fn apply_field(
    document: &mut Document,
    action: &Action,
    parts: &[String],
    context: &ApplyContext,
    collation: &Collation,
) -> Result<bool, Failure> {
    let dotted = || parts.join(".");
    let current = target::lookup(document, parts);
    match action {
        Action::Set(value) | Action::SetOnInsert(value) => store(document, parts, value.clone()),
        Action::Unset => Ok(match target::lookup(document, parts) {
            None => false,
            Some(_) => target::remove(document, parts).is_some_and(|removed| {
                // Unsetting an array element stores null; it changes nothing if it was null.
                !(matches!(removed, Bson::Null) && target::lookup(document, parts).is_some())
            }),
        }),
        Action::Inc(operand) | Action::Mul(operand) => {
            let (arithmetic, verb) = match action {
                Action::Inc(_) => (Arithmetic::Add, "incremented"),
                _ => (Arithmetic::Multiply, "multiplied"),
            };
            let result = match current {
                None if arithmetic == Arithmetic::Add => operand.clone(),
                None => arith::zero_like(operand),
                Some(value) if arith::is_number(value) => {
                    arith::combine(arithmetic, value, operand).map_err(|reason| {
                        Failure::new(dotted(), format!("cannot be {verb}: {reason}"))
                    })?
                }
                Some(value) => {
                    return Err(Failure::new(
                        dotted(),
                        format!("is {}, not a number", describe_value(value)),
                    ));
                }
            };
            store(document, parts, result)
        }
        Action::Min(operand) | Action::Max(operand) => {
            let wanted = if matches!(action, Action::Min(_)) {
                std::cmp::Ordering::Less
            } else {
                std::cmp::Ordering::Greater
            };
            match current {
                Some(value) if compare_collated(operand, value, collation) != wanted => Ok(false),
                _ => store(document, parts, operand.clone()),
            }
        }
        Action::Rename { to } => rename(document, parts, &to.dotted),
        Action::CurrentDate(kind) => {
            let value = match kind {
                DateKind::Date => Bson::DateTime(context.now),
                DateKind::Timestamp => Bson::Timestamp(Timestamp {
                    time: (context.now.timestamp_millis() / 1000).clamp(0, i64::from(u32::MAX))
                        as u32,
                    increment: 1,
                }),
            };
            store(document, parts, value)
        }
        Action::Push(spec) => {
            let mut items = existing_array(current, parts)?.unwrap_or_default();
            spec.apply(&mut items, collation);
            store(document, parts, Bson::Array(items))
        }
        Action::AddToSet(values) => {
            let mut items = existing_array(current, parts)?.unwrap_or_default();
            let created = current.is_none();
            let added = array::add_to_set(&mut items, values, collation);
            if added || created {
                store(document, parts, Bson::Array(items))
            } else {
                Ok(false)
            }
        }
        Action::Pop { first } => {
            let Some(mut items) = existing_array(current, parts)? else {
                return Ok(false);
            };
            if items.is_empty() {
                return Ok(false);
            }
            if *first {
                items.remove(0);
            } else {
                items.pop();
            }
            store(document, parts, Bson::Array(items))
        }
        Action::Pull(matcher) => {
            let Some(mut items) = existing_array(current, parts)? else {
                return Ok(false);
            };
            let removed = array::remove_where(&mut items, |item| matcher.matches(item, collation))
                .map_err(|error| {
                    Failure::new(dotted(), format!("cannot be filtered by $pull: {error}"))
                })?;
            if removed {
                store(document, parts, Bson::Array(items))
            } else {
                Ok(false)
            }
        }
        Action::PullAll(values) => {
            let Some(mut items) = existing_array(current, parts)? else {
                return Ok(false);
            };
            let removed = array::remove_where(&mut items, |item| {
                Ok(values
                    .iter()
                    .any(|value| compare_collated(item, value, collation).is_eq()))
            })
            .map_err(|error| Failure::new(dotted(), error.to_string()))?;
            if removed {
                store(document, parts, Bson::Array(items))
            } else {
                Ok(false)
            }
        }
    }
}

/// The array at a path (a copy), `None` when the path is missing; fails on a non-array.
fn existing_array(current: Option<&Bson>, parts: &[String]) -> Result<Option<Vec<Bson>>, Failure> {
    match current {
        None => Ok(None),
        Some(Bson::Array(items)) => Ok(Some(items.clone())),
        Some(other) => Err(Failure::new(
            parts.join("."),
            format!("is {}, not an array", describe_value(other)),
        )),
    }
}

/// Writes `value` unless the path already holds an identical value; returns whether it wrote.
fn store(document: &mut Document, parts: &[String], value: Bson) -> Result<bool, Failure> {
    if target::lookup(document, parts).is_some_and(|current| identical(current, &value)) {
        return Ok(false);
    }
    target::write(document, parts, value)?;
    Ok(true)
}

fn rename(document: &mut Document, from: &[String], to_dotted: &str) -> Result<bool, Failure> {
    let to: Vec<String> = to_dotted.split('.').map(str::to_string).collect();
    if let Some(array) = target::array_on_the_way(document, from) {
        return Err(Failure::new(
            from.join("."),
            format!(
                "cannot be renamed: '{array}' is an array ($rename does not go through arrays)"
            ),
        ));
    }
    if target::lookup(document, from).is_none() {
        return Ok(false);
    }
    if let Some(array) = target::array_on_the_way(document, &to) {
        return Err(Failure::new(
            to_dotted,
            format!(
                "cannot be the destination of $rename: '{array}' is an array ($rename does not go through arrays)"
            ),
        ));
    }
    target::check_writable(document, &to)?;
    let value = target::remove(document, from).expect("looked up above");
    target::write(document, &to, value)?;
    Ok(true)
}

/// Strict equality: same types, same field order, bitwise-equal doubles. A write of an
/// identical value is not a modification (`$set: { a: 1 }` on `a: 1.0` is one: the type
/// changes).
pub(crate) fn identical(a: &Bson, b: &Bson) -> bool {
    match (a, b) {
        (Bson::Double(x), Bson::Double(y)) => x.to_bits() == y.to_bits(),
        (Bson::Document(x), Bson::Document(y)) => identical_documents(x, y),
        (Bson::Array(x), Bson::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(x, y)| identical(x, y))
        }
        _ => a == b,
    }
}

fn identical_documents(a: &Document, b: &Document) -> bool {
    a.len() == b.len()
        && a.iter().zip(b).all(|((a_key, a_value), (b_key, b_value))| {
            a_key == b_key && identical(a_value, b_value)
        })
}

/// Fails when a value an operator would store contains a field name starting with `$`
/// ([`crate::size::dollar_prefixed_field`]): in an operator's value it is far more likely a
/// misplaced operator or modifier than data. Inserts, replacements and pipeline updates may
/// store such names (MongoDB 5.0+); update operators may not.
fn check_storable(operator: &str, field: &str, value: &Bson) -> Result<()> {
    match dollar_prefixed_field(value) {
        Some((_, key)) => Err(DocError::update(format!(
            "{operator}: field '{field}': the value contains the field name '{key}'; {DOLLAR_NAMES_REFUSED}"
        ))),
        None => Ok(()),
    }
}

/// A value's type for messages: `a string`, `an array`, `null`...
pub(crate) fn describe_value(value: &Bson) -> &'static str {
    crate::path::describe(value)
}
