//! MongoDB find projections: which fields of a matching document a query returns.
//!
//! A [`Projection`] is parsed once from a projection document and then applied to each
//! result. It follows MongoDB 4.4+ semantics:
//!
//! - **inclusion** (`{a: 1, "b.c": 1}`) keeps only the named paths, plus `_id` unless
//!   `_id: 0`; **exclusion** (`{a: 0}`) keeps everything else. The two cannot be mixed,
//!   except for `_id`. Values are booleans or numbers (non-zero includes); nested documents
//!   (`{b: {c: 1}}`) mean the same as dotted paths;
//! - dotted paths go through embedded documents and through arrays of documents, element by
//!   element: an inclusion drops the scalars of such an array and keeps an empty document for
//!   an element without the field, an exclusion keeps the scalars;
//! - `{a: {$slice: n}}` keeps the first `n` elements (the last `-n` when negative),
//!   `{a: {$slice: [skip, limit]}}` a window (a negative `skip` counts from the end); a
//!   non-array value is returned as it is. On its own `$slice` keeps every other field;
//! - `{a: {$elemMatch: {...}}}` keeps only the first element of `a` that matches (the field
//!   disappears when none does) and is returned after the other fields, as in MongoDB 4.4;
//! - `{"a.$": 1}` keeps the element the query matched, given its [`MatchDetails`];
//! - `{score: {$meta: "textScore"}}` adds the document's `$text` score, which the caller
//!   computes and passes in ([`Projection::apply_scored`]); it is neither an inclusion nor
//!   an exclusion, and the field comes last.
//!
//! This module never evaluates a query on its own account: the positional operator needs
//! the details of the filter's match, which the caller passes in.

use bson::{Bson, Document, RawBson, RawBsonRef, RawDocument};

use crate::compare::compare;
use crate::error::{DocError, Result};
use crate::filter::{Clause, ElemMatch, Filter, MatchDetails, Predicate};
use crate::path::{FieldPath, describe};

/// A parsed projection.
#[derive(Debug, Clone, PartialEq)]
pub struct Projection {
    mode: Mode,
    root: Node,
    elem_matches: Vec<(String, ElemMatch)>,
    positional: Option<FieldPath>,
    /// Top-level fields that receive the text score.
    text_score_fields: Vec<String>,
}

/// Whether the projection lists what to keep or what to drop.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    Inclusion,
    Exclusion,
}

/// The projection of one level of a document: what happens to each named field.
#[derive(Debug, Clone, PartialEq, Default)]
struct Node {
    fields: Vec<(String, Action)>,
}

#[derive(Debug, Clone, PartialEq)]
enum Action {
    Include,
    Exclude,
    Slice {
        skip: i64,
        limit: Option<i64>,
    },
    /// A place holder for the `$elemMatch` and positional fields, applied separately.
    Special,
    Children(Node),
}

impl Node {
    fn get(&self, name: &str) -> Option<&Action> {
        self.fields
            .iter()
            .find(|(field, _)| field == name)
            .map(|(_, action)| action)
    }

    /// Adds `action` at `parts`, refusing a path that is, contains or lies inside one
    /// already there.
    fn insert(&mut self, parts: &[String], action: Action, full_path: &str) -> Result<()> {
        let (first, rest) = parts.split_first().expect("a path has a component");
        let existing = self.fields.iter_mut().find(|(field, _)| field == first);
        match (existing, rest.is_empty()) {
            (None, true) => self.fields.push((first.clone(), action)),
            (None, false) => {
                let mut child = Node::default();
                child.insert(rest, action, full_path)?;
                self.fields.push((first.clone(), Action::Children(child)));
            }
            (Some((_, Action::Children(child))), false) => child.insert(rest, action, full_path)?,
            (Some(_), _) => {
                return Err(invalid(format!(
                    "path collision: '{full_path}' overlaps a path projected before it"
                )));
            }
        }
        Ok(())
    }
}

fn invalid(message: impl Into<String>) -> DocError {
    DocError::InvalidProjection {
        message: message.into(),
    }
}

impl Projection {
    /// Parses a projection document such as `{ title: 1, "reviews": { $slice: -3 } }`.
    pub fn parse(projection: &Document) -> Result<Projection> {
        let mut parser = Parser::default();
        for (key, value) in projection {
            parser.add(key, value)?;
        }
        parser.finish()
    }

    /// Whether the projection lists the fields to keep (rather than the fields to drop).
    pub fn is_inclusion(&self) -> bool {
        self.mode == Mode::Inclusion
    }

    /// Whether the top-level `field` (not `_id`) can appear, whole or in part, in a document
    /// this projection shapes: named by an inclusion, or not excluded whole by an exclusion.
    pub fn may_output(&self, field: &str) -> bool {
        match (self.root.get(field), self.mode) {
            (Some(Action::Exclude), _) => false,
            (Some(_), _) => true,
            (None, Mode::Inclusion) => false,
            (None, Mode::Exclusion) => true,
        }
    }

    /// Whether applying this projection needs the [`MatchDetails`] of the query's match (it
    /// has a positional `field.$`).
    pub fn needs_match_details(&self) -> bool {
        self.positional.is_some()
    }

    /// Whether the projection shows the text score (`{ $meta: "textScore" }`).
    pub fn needs_text_score(&self) -> bool {
        !self.text_score_fields.is_empty()
    }

    /// [`Projection::apply_matched`], then the text score in the fields that show it (an
    /// error when the projection shows it and `score` is `None`).
    pub fn apply_scored(
        &self,
        document: &Document,
        details: Option<MatchDetails>,
        score: Option<f64>,
    ) -> Result<Document> {
        let mut projected = self.apply_matched(document, details)?;
        if self.text_score_fields.is_empty() {
            return Ok(projected);
        }
        let Some(score) = score else {
            return Err(invalid(
                "query requires text score metadata, but it is not available",
            ));
        };
        for field in &self.text_score_fields {
            projected.insert(field.clone(), score);
        }
        Ok(projected)
    }

    /// What the projection reads of each top-level field for which `wanted` holds: a
    /// `$slice` window, or the elements (`$elemMatch`, positional `field.$`). Fields it only
    /// includes or excludes are not listed.
    pub fn array_reads(&self, wanted: impl Fn(&str) -> bool) -> Vec<(String, ArrayRead)> {
        let mut reads = Vec::new();
        for (field, action) in &self.root.fields {
            if let Action::Slice { skip, limit } = action
                && wanted(field)
            {
                reads.push((
                    field.clone(),
                    ArrayRead::Slice {
                        skip: *skip,
                        limit: *limit,
                    },
                ));
            }
        }
        let positional = self
            .positional
            .as_ref()
            .and_then(|path| path.parts().first().cloned());
        let element_fields = self
            .elem_matches
            .iter()
            .map(|(field, _)| field.clone())
            .chain(positional);
        for field in element_fields {
            if wanted(&field) && !reads.iter().any(|(known, _)| *known == field) {
                reads.push((field, ArrayRead::Elements));
            }
        }
        reads
    }

    /// Takes the `$slice` of top-level `field` as done by the caller (who read only that
    /// window): the field is then kept whole, by leaving it out of an exclusion or including
    /// it in an inclusion.
    pub fn slice_done(&mut self, field: &str) {
        let projection = self;
        let sliced = |(name, action): &(String, Action)| {
            name == field && matches!(action, Action::Slice { .. })
        };
        match projection.mode {
            Mode::Exclusion => projection.root.fields.retain(|entry| !sliced(entry)),
            Mode::Inclusion => {
                for entry in &mut projection.root.fields {
                    if sliced(entry) {
                        entry.1 = Action::Include;
                    }
                }
            }
        }
    }

    /// Whether the projection is nothing but `$slice`s of fields that `done` says the read
    /// has already cut: what [`is_identity`](Self::is_identity) would answer after
    /// [`slice_done`](Self::slice_done) on each, without a copy to change.
    pub fn is_only_slices(&self, done: impl Fn(&str) -> bool) -> bool {
        self.mode == Mode::Exclusion
            && self
                .root
                .fields
                .iter()
                .all(|(name, action)| matches!(action, Action::Slice { .. }) && done(name))
            && self.elem_matches.is_empty()
            && self.positional.is_none()
            && self.text_score_fields.is_empty()
    }

    /// Whether applying the projection returns every document as it is (an exclusion of
    /// nothing, as `slice_done` leaves `{field: {$slice: n}}`).
    pub fn is_identity(&self) -> bool {
        self.mode == Mode::Exclusion
            && self.root.fields.is_empty()
            && self.elem_matches.is_empty()
            && self.positional.is_none()
            && self.text_score_fields.is_empty()
    }

    /// Applies the projection to a document. Fails if the projection is positional (use
    /// [`Projection::apply_matched`]).
    pub fn apply(&self, document: &Document) -> Result<Document> {
        self.apply_matched(document, None)
    }

    /// Applies the projection to a document that the query matched with `details`.
    pub fn apply_matched(
        &self,
        document: &Document,
        details: Option<MatchDetails>,
    ) -> Result<Document> {
        let mut projected = match self.mode {
            Mode::Inclusion => include_document(&self.root, document, true),
            Mode::Exclusion => exclude_document(&self.root, document),
        };
        if let Some(path) = &self.positional {
            let index = details.and_then(|details| details.array_index);
            apply_positional(&mut projected, document, path, index)?;
        }
        for (field, elem_match) in &self.elem_matches {
            projected.remove(field);
            if let Some(Bson::Array(elements)) = document.get(field)
                && let Some(element) = first_elem_match(elem_match, elements)?
            {
                projected.insert(field.clone(), Bson::Array(vec![element]));
            }
        }
        Ok(projected)
    }

    /// Applies the projection to a raw document. An inclusion of top-level fields only
    /// (`{_id: 1, title: 1}`) decodes just those fields; anything else decodes the document
    /// once and applies [`Projection::apply_matched`].
    pub fn apply_raw(
        &self,
        document: &RawDocument,
        details: Option<MatchDetails>,
    ) -> Result<Document> {
        if self.needs_text_score() {
            return Err(invalid(
                "query requires text score metadata, but it is not available",
            ));
        }
        let top_level_inclusion = self.mode == Mode::Inclusion
            && self.positional.is_none()
            && self.elem_matches.is_empty()
            && self
                .root
                .fields
                .iter()
                .all(|(_, action)| matches!(action, Action::Include | Action::Exclude));
        if !top_level_inclusion {
            let decoded = crate::decode::document(document)?;
            return self.apply_matched(&decoded, details);
        }
        let mut projected = Document::new();
        for element in document {
            let (name, value) = element?;
            let name = name.as_str();
            let keep = match self.root.get(name) {
                Some(Action::Include) => true,
                Some(_) => false,
                None => name == "_id",
            };
            if keep {
                projected.insert(name, Bson::try_from(value)?);
            }
        }
        Ok(projected)
    }
}

fn first_elem_match(elem_match: &ElemMatch, elements: &[Bson]) -> Result<Option<Bson>> {
    let raw = RawBson::try_from(Bson::Array(elements.to_vec()))?;
    let RawBsonRef::Array(array) = raw.as_raw_bson_ref() else {
        unreachable!("an array encodes as an array")
    };
    Ok(elem_match
        .first_match(array)?
        .map(|index| elements[index].clone()))
}

/// Keeps the fields `node` names (and `_id` at the top unless excluded).
fn include_document(node: &Node, document: &Document, is_root: bool) -> Document {
    let mut projected = Document::new();
    for (name, value) in document {
        let action = node.get(name);
        if is_root && name == "_id" && action.is_none() {
            projected.insert(name.clone(), value.clone());
            continue;
        }
        match action {
            Some(Action::Include) => {
                projected.insert(name.clone(), value.clone());
            }
            Some(Action::Slice { skip, limit }) => {
                projected.insert(name.clone(), slice(value, *skip, *limit));
            }
            Some(Action::Children(child)) => match value {
                Bson::Document(inner) => {
                    projected.insert(
                        name.clone(),
                        Bson::Document(include_document(child, inner, false)),
                    );
                }
                Bson::Array(elements) => {
                    projected.insert(name.clone(), Bson::Array(include_array(child, elements)));
                }
                // A scalar has none of the sub-fields asked for.
                _ => {}
            },
            // The positional field is filled in afterwards, in document order: keep its place.
            Some(Action::Special) => {
                projected.insert(name.clone(), value.clone());
            }
            Some(Action::Exclude) | None => {}
        }
    }
    projected
}

fn include_array(node: &Node, elements: &[Bson]) -> Vec<Bson> {
    elements
        .iter()
        .filter_map(|element| match element {
            Bson::Document(inner) => Some(Bson::Document(include_document(node, inner, false))),
            Bson::Array(nested) => Some(Bson::Array(include_array(node, nested))),
            _ => None,
        })
        .collect()
}

/// Drops the fields `node` excludes and slices those it slices.
fn exclude_document(node: &Node, document: &Document) -> Document {
    let mut projected = Document::new();
    for (name, value) in document {
        match node.get(name) {
            Some(Action::Exclude) => {}
            Some(Action::Slice { skip, limit }) => {
                projected.insert(name.clone(), slice(value, *skip, *limit));
            }
            Some(Action::Children(child)) => {
                let value = match value {
                    Bson::Document(inner) => Bson::Document(exclude_document(child, inner)),
                    Bson::Array(elements) => Bson::Array(exclude_array(child, elements)),
                    other => other.clone(),
                };
                projected.insert(name.clone(), value);
            }
            Some(Action::Include | Action::Special) | None => {
                projected.insert(name.clone(), value.clone());
            }
        }
    }
    projected
}

fn exclude_array(node: &Node, elements: &[Bson]) -> Vec<Bson> {
    elements
        .iter()
        .map(|element| match element {
            Bson::Document(inner) => Bson::Document(exclude_document(node, inner)),
            Bson::Array(nested) => Bson::Array(exclude_array(node, nested)),
            other => other.clone(),
        })
        .collect()
}

/// MongoDB's `$slice` on one value: arrays are cut, anything else is returned as it is.
fn slice(value: &Bson, skip: i64, limit: Option<i64>) -> Bson {
    let Bson::Array(elements) = value else {
        return value.clone();
    };
    let (start, end) = slice_window(elements.len(), skip, limit);
    Bson::Array(elements[start..end].to_vec())
}

/// The elements `start..end` that `$slice` keeps of an array of `length` elements:
/// `$slice: n` (`limit` `None`) the first `n` or the last `-n`, `$slice: [skip, limit]` a
/// window whose negative `skip` counts from the end.
pub fn slice_window(length: usize, skip: i64, limit: Option<i64>) -> (usize, usize) {
    let length = i64::try_from(length).unwrap_or(i64::MAX);
    let (start, count) = match limit {
        None if skip >= 0 => (0, skip),
        None => (length.saturating_add(skip).max(0), skip.saturating_neg()),
        Some(limit) if skip >= 0 => (skip.min(length), limit),
        Some(limit) => (length.saturating_add(skip).max(0), limit),
    };
    let end = start.saturating_add(count).min(length).max(start);
    (start as usize, end as usize)
}

/// What a projection reads of one top-level array field ([`Projection::array_reads`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ArrayRead {
    /// `$slice`: the window [`slice_window`] gives for these arguments.
    Slice {
        /// The first argument (the count of `$slice: n`, or the skip).
        skip: i64,
        /// The second argument of `$slice: [skip, limit]`.
        limit: Option<i64>,
    },
    /// `$elemMatch` or a positional `field.$`: the elements, to find one.
    Elements,
}

/// Replaces the array at `path` (through embedded documents) by the one element the query
/// matched.
fn apply_positional(
    projected: &mut Document,
    original: &Document,
    path: &FieldPath,
    index: Option<usize>,
) -> Result<()> {
    let no_match = || {
        invalid(format!(
            "positional projection '{}.$': the query matched no element of that array",
            path.as_str()
        ))
    };
    // Follow the path through embedded documents only: the matched index belongs to the
    // first array on the path, which must be the one at its end.
    let (last, parents) = path.parts().split_last().expect("a path has a component");
    let mut original_level = original;
    let mut projected_level = projected;
    for part in parents {
        match (original_level.get(part), projected_level.get_mut(part)) {
            (Some(Bson::Document(original_inner)), Some(Bson::Document(projected_inner))) => {
                original_level = original_inner;
                projected_level = projected_inner;
            }
            (None, _) => return Ok(()),
            (Some(other), _) => {
                return Err(invalid(format!(
                    "positional projection '{}.$': the path goes through {}, not an embedded document",
                    path.as_str(),
                    describe(other)
                )));
            }
        }
    }
    match original_level.get(last) {
        None => Ok(()),
        Some(Bson::Array(elements)) => {
            let element = index
                .and_then(|index| elements.get(index))
                .ok_or_else(no_match)?;
            projected_level.insert(last.clone(), Bson::Array(vec![element.clone()]));
            Ok(())
        }
        Some(other) => Err(invalid(format!(
            "positional projection '{}.$': the field is {}, not an array",
            path.as_str(),
            describe(other)
        ))),
    }
}

/// Collects the entries of a projection document and decides its mode.
#[derive(Default)]
struct Parser {
    root: Node,
    /// The first inclusion and the first exclusion of a field other than `_id`.
    first_inclusion: Option<String>,
    first_exclusion: Option<String>,
    id_included: Option<bool>,
    elem_matches: Vec<(String, ElemMatch)>,
    positional: Option<FieldPath>,
    text_score_fields: Vec<String>,
}

impl Parser {
    fn add(&mut self, key: &str, value: &Bson) -> Result<()> {
        if key.starts_with('$') {
            return Err(invalid(format!(
                "unknown top-level projection operator {key}"
            )));
        }
        if let Some(prefix) = key.strip_suffix(".$") {
            return self.add_positional(key, prefix, value);
        }
        let path = FieldPath::parse(key).map_err(|error| invalid(error.to_string()))?;
        if path.parts().iter().any(|part| part.starts_with('$')) {
            return Err(invalid(format!(
                "'{key}': a projected field name cannot start with '$' (the positional operator '.$' can only end a path)"
            )));
        }
        match value {
            Bson::Boolean(_)
            | Bson::Int32(_)
            | Bson::Int64(_)
            | Bson::Double(_)
            | Bson::Decimal128(_) => {
                let include = !matches!(value, Bson::Boolean(false))
                    && compare(value, &Bson::Int32(0)) != std::cmp::Ordering::Equal;
                if key == "_id" {
                    self.id_included = Some(include);
                } else if include {
                    self.first_inclusion.get_or_insert_with(|| key.to_string());
                } else {
                    self.first_exclusion.get_or_insert_with(|| key.to_string());
                }
                let action = if include {
                    Action::Include
                } else {
                    Action::Exclude
                };
                self.root.insert(path.parts(), action, key)
            }
            Bson::Document(spec) => match spec.keys().next().map(String::as_str) {
                None => Err(invalid(format!(
                    "'{key}': an empty sub-projection is not valid"
                ))),
                Some("$slice") => self.add_slice(key, &path, spec),
                Some("$meta") => {
                    if spec.len() != 1 || spec.get_str("$meta").ok() != Some("textScore") {
                        return Err(invalid(format!(
                            "'{key}': only {{ $meta: \"textScore\" }} is supported, not {spec}"
                        )));
                    }
                    if path.parts().len() > 1 {
                        return Err(invalid(format!(
                            "'{key}': Spillway puts the text score in a top-level field only"
                        )));
                    }
                    self.text_score_fields.push(key.to_string());
                    Ok(())
                }
                Some("$elemMatch") => self.add_elem_match(key, &path, spec),
                Some(operator) if operator.starts_with('$') => Err(invalid(format!(
                    "'{key}': {operator} is not supported in projections (only $slice and $elemMatch)"
                ))),
                // A nested projection: the same as dotted paths.
                Some(_) => {
                    for (inner_key, inner_value) in spec {
                        self.add(&format!("{key}.{inner_key}"), inner_value)?;
                    }
                    Ok(())
                }
            },
            other => Err(invalid(format!(
                "'{key}': a projection value must be a boolean, a number, $slice or $elemMatch, found {} (aggregation expressions are not supported)",
                describe(other)
            ))),
        }
    }

    fn add_slice(&mut self, key: &str, path: &FieldPath, spec: &Document) -> Result<()> {
        if spec.len() != 1 {
            return Err(invalid(format!(
                "'{key}': $slice must be the only key of its document"
            )));
        }
        let whole = |value: &Bson| crate::filter::whole_number(value);
        let usage = || {
            invalid(format!(
                "'{key}': $slice needs a whole number or an array [skip, limit]"
            ))
        };
        let action = match spec.get("$slice").expect("checked: the key is $slice") {
            Bson::Array(window) => {
                let [skip, limit] = window.as_slice() else {
                    return Err(usage());
                };
                let (Some(skip), Some(limit)) = (whole(skip), whole(limit)) else {
                    return Err(usage());
                };
                if limit <= 0 {
                    return Err(invalid(format!(
                        "'{key}': $slice limit must be positive, found {limit}"
                    )));
                }
                Action::Slice {
                    skip,
                    limit: Some(limit),
                }
            }
            count => Action::Slice {
                skip: whole(count).ok_or_else(usage)?,
                limit: None,
            },
        };
        self.root.insert(path.parts(), action, key)
    }

    fn add_elem_match(&mut self, key: &str, path: &FieldPath, spec: &Document) -> Result<()> {
        if path.len() > 1 {
            return Err(invalid(format!(
                "'{key}': $elemMatch cannot be used on a nested field"
            )));
        }
        if spec.len() != 1 {
            return Err(invalid(format!(
                "'{key}': $elemMatch must be the only key of its document"
            )));
        }
        if self.positional.is_some() {
            return Err(invalid(
                "$elemMatch and the positional operator '.$' cannot be used together",
            ));
        }
        let as_filter = Document::from_iter([(key.to_string(), Bson::Document(spec.clone()))]);
        let filter = Filter::parse(&as_filter).map_err(|error| match error {
            DocError::InvalidFilter { message, .. } => invalid(format!("'{key}': {message}")),
            other => other,
        })?;
        let Some(Clause::Field {
            predicate: Predicate::ElemMatch(elem_match),
            ..
        }) = filter.clauses.into_iter().next()
        else {
            unreachable!("{{field: {{$elemMatch: ...}}}} parses to one $elemMatch clause")
        };
        self.elem_matches.push((key.to_string(), elem_match));
        self.root.insert(path.parts(), Action::Special, key)
    }

    fn add_positional(&mut self, key: &str, prefix: &str, value: &Bson) -> Result<()> {
        let path = FieldPath::parse(prefix).map_err(|error| invalid(error.to_string()))?;
        if path.parts().iter().any(|part| part.starts_with('$')) {
            return Err(invalid(format!(
                "'{key}': the positional operator '.$' can only appear once, at the end"
            )));
        }
        if self.positional.is_some() {
            return Err(invalid(
                "a projection can have only one positional operator '.$'",
            ));
        }
        if !self.elem_matches.is_empty() {
            return Err(invalid(
                "$elemMatch and the positional operator '.$' cannot be used together",
            ));
        }
        let include = match value {
            Bson::Boolean(_)
            | Bson::Int32(_)
            | Bson::Int64(_)
            | Bson::Double(_)
            | Bson::Decimal128(_) => {
                !matches!(value, Bson::Boolean(false))
                    && compare(value, &Bson::Int32(0)) != std::cmp::Ordering::Equal
            }
            _ => false,
        };
        if !include {
            return Err(invalid(format!(
                "'{key}': the positional operator '.$' needs an inclusion (1 or true)"
            )));
        }
        self.root.insert(path.parts(), Action::Special, key)?;
        self.positional = Some(path);
        Ok(())
    }

    fn finish(self) -> Result<Projection> {
        if let (Some(included), Some(excluded)) = (&self.first_inclusion, &self.first_exclusion) {
            return Err(invalid(format!(
                "cannot exclude '{excluded}' in an inclusion projection (it includes '{included}'); only _id can be excluded there"
            )));
        }
        let mode = if self.first_inclusion.is_some()
            || self.positional.is_some()
            || (self.first_exclusion.is_none() && !self.elem_matches.is_empty())
            || (self.first_exclusion.is_none() && self.id_included == Some(true))
        {
            Mode::Inclusion
        } else {
            Mode::Exclusion
        };
        if mode == Mode::Inclusion
            && let Some(excluded) = &self.first_exclusion
        {
            return Err(invalid(format!(
                "cannot exclude '{excluded}' in a projection that uses the positional operator '.$'"
            )));
        }
        Ok(Projection {
            mode,
            root: self.root,
            elem_matches: self.elem_matches,
            positional: self.positional,
            text_score_fields: self.text_score_fields,
        })
    }
}
