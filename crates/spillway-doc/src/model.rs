//! A plain in-memory collection with MongoDB's semantics: the reference model.
//!
//! [`MemoryCollection`] is a `Vec<Document>` in insertion order with the CRUD operations of a
//! MongoDB collection built from this crate's parts (filters, updates, sort, projection). It
//! has no indexes, no persistence and no cleverness, on purpose: it is what the conformance
//! runner executes MongoDB's specification tests against, and what the property tests of the
//! database and pattern layers compare those layers with. A downstream crate can also use it
//! to evaluate MongoDB operations over a handful of documents.
//!
//! Every write is all or nothing: `update_many` that fails on its third document leaves the
//! first two unchanged too, which is what Spillway's database layer guarantees as well (each
//! write is one atomic batch).

use std::fmt;

use bson::{Bson, DateTime, Document, RawDocumentBuf, oid::ObjectId};

use crate::compare::values_equal;
use crate::error::DocError;
use crate::filter::Filter;
use crate::path::FieldPath;
use crate::projection::Projection;
use crate::size::{self, check_id};
use crate::sort::SortSpec;
use crate::update::{ApplyContext, Update};

/// What can go wrong in a [`MemoryCollection`] operation.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum ModelError {
    /// A filter, update, projection, sort or document was invalid.
    Doc(DocError),
    /// A document with this `_id` already exists.
    DuplicateId(Bson),
    /// A document's `_id` cannot be stored (arrays, regexes and undefined are not allowed).
    InvalidId(String),
    /// A replacement was passed where an update with operators is required, or the reverse.
    WrongUpdateKind(String),
}

impl fmt::Display for ModelError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ModelError::Doc(error) => error.fmt(f),
            ModelError::DuplicateId(id) => {
                write!(f, "duplicate key: a document with _id {id} already exists")
            }
            ModelError::InvalidId(message) | ModelError::WrongUpdateKind(message) => {
                f.write_str(message)
            }
        }
    }
}

impl std::error::Error for ModelError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            // The message is the `DocError`'s: give what it does not say.
            ModelError::Doc(error) => error.source(),
            _ => None,
        }
    }
}

impl From<DocError> for ModelError {
    fn from(error: DocError) -> Self {
        ModelError::Doc(error)
    }
}

/// The result type of the model.
pub type ModelResult<T> = Result<T, ModelError>;

/// Options of [`MemoryCollection::find`], as in MongoDB's `find` command.
#[derive(Debug, Clone, Default)]
pub struct FindOptions {
    /// Sort specification; `None` keeps insertion order.
    pub sort: Option<Document>,
    /// Documents to skip after sorting.
    pub skip: u64,
    /// At most this many documents; 0 means no limit, a negative value its absolute value.
    pub limit: i64,
    /// Projection applied to each returned document.
    pub projection: Option<Document>,
}

/// Options of the update operations.
#[derive(Debug, Clone, Default)]
pub struct UpdateOptions {
    /// Insert a document when none matches.
    pub upsert: bool,
    /// Filters for `$[<identifier>]` positional operators.
    pub array_filters: Vec<Document>,
}

/// The outcome of an update or replace, with the driver's field names.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct UpdateResult {
    /// Documents the filter matched.
    pub matched_count: u64,
    /// Documents actually changed.
    pub modified_count: u64,
    /// The `_id` of the inserted document, for an upsert that inserted.
    pub upserted_id: Option<Bson>,
}

/// Which version of the document `find_one_and_*` returns.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum ReturnDocument {
    /// The document as it was before the write (MongoDB's default).
    #[default]
    Before,
    /// The document as the write left it.
    After,
}

/// Options of `find_one_and_update` / `find_one_and_replace` / `find_one_and_delete`.
#[derive(Debug, Clone, Default)]
pub struct FindOneAndOptions {
    /// Which document to pick when several match: the first in this order.
    pub sort: Option<Document>,
    /// Projection applied to the returned document.
    pub projection: Option<Document>,
    /// Insert a document when none matches (update and replace only).
    pub upsert: bool,
    /// Before or after the write (update and replace only).
    pub return_document: ReturnDocument,
    /// Filters for `$[<identifier>]` positional operators (update only).
    pub array_filters: Vec<Document>,
}

/// What `insert_many` did: the `_id`s inserted and the failures, each by input position.
pub type InsertManyOutcome = (Vec<(usize, Bson)>, Vec<(usize, ModelError)>);

/// A collection held in memory, in insertion order, with MongoDB's semantics.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct MemoryCollection {
    documents: Vec<Document>,
}

impl MemoryCollection {
    /// An empty collection.
    pub fn new() -> Self {
        MemoryCollection::default()
    }

    /// The documents, in insertion order.
    pub fn documents(&self) -> &[Document] {
        &self.documents
    }

    /// Inserts one document, giving it an `ObjectId` `_id` first when it has none, and
    /// returns its `_id`.
    pub fn insert_one(&mut self, document: Document) -> ModelResult<Bson> {
        let document = self.prepare_insert(document)?;
        let id = document.get("_id").cloned().unwrap_or(Bson::Null);
        self.documents.push(document);
        Ok(id)
    }

    /// Inserts documents in order. With `ordered`, the first failure stops the insert; without,
    /// every valid document is inserted. Returns the ids inserted (by input position) and the
    /// failures (by input position).
    pub fn insert_many(&mut self, documents: Vec<Document>, ordered: bool) -> InsertManyOutcome {
        let mut inserted = Vec::new();
        let mut failures = Vec::new();
        for (position, document) in documents.into_iter().enumerate() {
            match self.insert_one(document) {
                Ok(id) => inserted.push((position, id)),
                Err(error) => {
                    failures.push((position, error));
                    if ordered {
                        break;
                    }
                }
            }
        }
        (inserted, failures)
    }

    /// The documents matching `filter`, sorted, skipped, limited and projected.
    pub fn find(&self, filter: &Document, options: &FindOptions) -> ModelResult<Vec<Document>> {
        let filter = Filter::parse(filter)?;
        let projection = options
            .projection
            .as_ref()
            .map(Projection::parse)
            .transpose()?;
        let matched = self.sorted_matches(&filter, options.sort.as_ref())?;
        let limit = usize::try_from(options.limit.unsigned_abs()).unwrap_or(usize::MAX);
        let limit = if limit == 0 { usize::MAX } else { limit };
        matched
            .into_iter()
            .skip(usize::try_from(options.skip).unwrap_or(usize::MAX))
            .take(limit)
            .map(|index| project(projection.as_ref(), &filter, self.documents[index].clone()))
            .collect()
    }

    /// Runs an aggregation pipeline over the documents in insertion order, reading other
    /// collections from `source`. A final `$out` or `$merge` is not executed (a model holds
    /// one collection): the documents it would write are returned.
    pub fn aggregate(
        &self,
        pipeline: &[Document],
        options: &crate::pipeline::PipelineOptions,
        source: std::sync::Arc<dyn crate::pipeline::Source + Send + Sync>,
    ) -> ModelResult<Vec<Document>> {
        let pipeline = crate::pipeline::Pipeline::parse(pipeline, options)?;
        let variables = pipeline.variables().clone();
        let input = self.documents.clone().into_iter().map(Ok);
        Ok(crate::pipeline::run(
            std::sync::Arc::new(pipeline),
            Box::new(input),
            source,
            variables,
        )
        .collect::<Result<Vec<_>, DocError>>()?)
    }

    /// How many documents match `filter`, after `skip` and within `limit` (0 = no limit).
    pub fn count_documents(&self, filter: &Document, skip: u64, limit: u64) -> ModelResult<u64> {
        let filter = Filter::parse(filter)?;
        let matched = self.matching(&filter)?.len() as u64;
        let after_skip = matched.saturating_sub(skip);
        Ok(if limit == 0 {
            after_skip
        } else {
            after_skip.min(limit)
        })
    }

    /// The distinct values of `field` among the documents matching `filter`, arrays unwound
    /// one level, in order of first appearance.
    pub fn distinct(&self, field: &str, filter: &Document) -> ModelResult<Vec<Bson>> {
        let path = FieldPath::parse(field)?;
        let filter = Filter::parse(filter)?;
        let mut values: Vec<Bson> = Vec::new();
        for index in self.matching(&filter)? {
            let mut found = Vec::new();
            crate::path::distinct_values(
                &Bson::Document(self.documents[index].clone()),
                path.parts(),
                &mut found,
            );
            for value in found {
                let unwound = match value {
                    Bson::Array(items) => items,
                    other => vec![other],
                };
                for item in unwound {
                    if !values.iter().any(|known| values_equal(known, &item)) {
                        values.push(item);
                    }
                }
            }
        }
        Ok(values)
    }

    /// `updateOne` (`multi = false`) or `updateMany` (`multi = true`) with operators.
    pub fn update(
        &mut self,
        filter: &Document,
        update: &Document,
        multi: bool,
        options: &UpdateOptions,
    ) -> ModelResult<UpdateResult> {
        if !is_operator_update(update) {
            return Err(ModelError::WrongUpdateKind(
                "an update needs update operators ($set, $push, ...); use replace for a whole document"
                    .into(),
            ));
        }
        self.update_or_replace(filter, update, multi, options)
    }

    /// `replaceOne`: replaces the first matching document with `replacement` (its `_id` kept).
    pub fn replace_one(
        &mut self,
        filter: &Document,
        replacement: &Document,
        upsert: bool,
    ) -> ModelResult<UpdateResult> {
        if is_operator_update(replacement) {
            return Err(ModelError::WrongUpdateKind(
                "a replacement document cannot contain update operators".into(),
            ));
        }
        let options = UpdateOptions {
            upsert,
            array_filters: Vec::new(),
        };
        self.update_or_replace(filter, replacement, false, &options)
    }

    fn update_or_replace(
        &mut self,
        filter: &Document,
        update: &Document,
        multi: bool,
        options: &UpdateOptions,
    ) -> ModelResult<UpdateResult> {
        let parsed_filter = Filter::parse(filter)?;
        let parsed_update = Update::parse(update, &options.array_filters)?;
        let mut matched = self.matching(&parsed_filter)?;
        if !multi {
            matched.truncate(1);
        }
        if matched.is_empty() {
            let mut result = UpdateResult::default();
            if options.upsert {
                let document = upsert_document(&parsed_filter, &parsed_update)?;
                result.upserted_id = Some(self.insert_one(document)?);
            }
            return Ok(result);
        }
        // Apply every change to copies first: the collection changes only if all succeed.
        let mut changes = Vec::new();
        for &index in &matched {
            let original = &self.documents[index];
            let context = ApplyContext::new(DateTime::now())
                .with_positional_index(positional_index(&parsed_filter, original)?);
            let mut updated = original.clone();
            let outcome = parsed_update.apply(&mut updated, &context)?;
            if outcome.modified {
                check_storable(&updated)?;
                changes.push((index, updated));
            }
        }
        let result = UpdateResult {
            matched_count: matched.len() as u64,
            modified_count: changes.len() as u64,
            upserted_id: None,
        };
        for (index, updated) in changes {
            self.documents[index] = updated;
        }
        Ok(result)
    }

    /// `deleteOne` (`multi = false`) or `deleteMany`; returns the number deleted.
    pub fn delete(&mut self, filter: &Document, multi: bool) -> ModelResult<u64> {
        let filter = Filter::parse(filter)?;
        let mut matched = self.matching(&filter)?;
        if !multi {
            matched.truncate(1);
        }
        for &index in matched.iter().rev() {
            self.documents.remove(index);
        }
        Ok(matched.len() as u64)
    }

    /// `findOneAndUpdate` / `findOneAndReplace` (`update` decides which by its keys).
    pub fn find_one_and_modify(
        &mut self,
        filter: &Document,
        update: &Document,
        options: &FindOneAndOptions,
    ) -> ModelResult<Option<Document>> {
        let parsed_filter = Filter::parse(filter)?;
        let parsed_update = Update::parse(update, &options.array_filters)?;
        let projection = options
            .projection
            .as_ref()
            .map(Projection::parse)
            .transpose()?;
        let project = |document: Document| project(projection.as_ref(), &parsed_filter, document);
        let Some(index) = self.first_match(&parsed_filter, options.sort.as_ref())? else {
            if !options.upsert {
                return Ok(None);
            }
            let document = upsert_document(&parsed_filter, &parsed_update)?;
            let id = self.insert_one(document)?;
            if options.return_document == ReturnDocument::Before {
                return Ok(None);
            }
            let inserted = self
                .documents
                .iter()
                .rev()
                .find(|d| d.get("_id") == Some(&id));
            return inserted.cloned().map(project).transpose();
        };
        let before = self.documents[index].clone();
        let context = ApplyContext::new(DateTime::now())
            .with_positional_index(positional_index(&parsed_filter, &before)?);
        let mut after = before.clone();
        parsed_update.apply(&mut after, &context)?;
        check_storable(&after)?;
        self.documents[index] = after.clone();
        project(match options.return_document {
            ReturnDocument::Before => before,
            ReturnDocument::After => after,
        })
        .map(Some)
    }

    /// `findOneAndDelete`: removes and returns the first match in `sort` order.
    pub fn find_one_and_delete(
        &mut self,
        filter: &Document,
        options: &FindOneAndOptions,
    ) -> ModelResult<Option<Document>> {
        let filter = Filter::parse(filter)?;
        let projection = options
            .projection
            .as_ref()
            .map(Projection::parse)
            .transpose()?;
        let Some(index) = self.first_match(&filter, options.sort.as_ref())? else {
            return Ok(None);
        };
        let removed = self.documents.remove(index);
        project(projection.as_ref(), &filter, removed).map(Some)
    }

    fn first_match(&self, filter: &Filter, sort: Option<&Document>) -> ModelResult<Option<usize>> {
        Ok(self.sorted_matches(filter, sort)?.first().copied())
    }

    /// Positions of the matching documents, in `sort` order (stable) or insertion order.
    fn sorted_matches(&self, filter: &Filter, sort: Option<&Document>) -> ModelResult<Vec<usize>> {
        let mut matched = self.matching(filter)?;
        if let Some(sort) = sort {
            let sort = SortSpec::parse(sort)?;
            matched.sort_by(|&a, &b| sort.compare(&self.documents[a], &self.documents[b]));
        }
        Ok(matched)
    }

    fn matching(&self, filter: &Filter) -> ModelResult<Vec<usize>> {
        let mut matched = Vec::new();
        for (index, document) in self.documents.iter().enumerate() {
            if filter.matches_document(document)? {
                matched.push(index);
            }
        }
        Ok(matched)
    }

    fn prepare_insert(&self, mut document: Document) -> ModelResult<Document> {
        let id = match document.remove("_id") {
            Some(id) => id,
            None => Bson::ObjectId(ObjectId::new()),
        };
        check_id(&id).map_err(|error| match error {
            DocError::InvalidValue { message } => ModelError::InvalidId(message),
            other => ModelError::Doc(other),
        })?;
        if self.documents.iter().any(|existing| {
            existing
                .get("_id")
                .is_some_and(|known| values_equal(known, &id))
        }) {
            return Err(ModelError::DuplicateId(id));
        }
        // MongoDB stores _id as the first field whatever the input order.
        let mut stored = Document::new();
        stored.insert("_id", id);
        stored.extend(document);
        check_storable(&stored)?;
        Ok(stored)
    }
}

/// Applies an optional projection; a positional projection (`field.$`) uses the array index
/// the filter matched in this document.
fn project(
    projection: Option<&Projection>,
    filter: &Filter,
    document: Document,
) -> ModelResult<Document> {
    let Some(projection) = projection else {
        return Ok(document);
    };
    let details = if projection.needs_match_details() {
        filter.match_details_document(&document)?
    } else {
        None
    };
    Ok(projection.apply_matched(&document, details)?)
}

fn is_operator_update(update: &Document) -> bool {
    update.keys().next().is_some_and(|key| key.starts_with('$'))
}

fn check_storable(document: &Document) -> ModelResult<()> {
    Ok(size::check_storable(document)?)
}

fn positional_index(filter: &Filter, document: &Document) -> ModelResult<Option<usize>> {
    let raw = RawDocumentBuf::try_from(document).map_err(DocError::from)?;
    Ok(filter
        .match_details(&raw)?
        .and_then(|details| details.array_index))
}

fn upsert_document(filter: &Filter, update: &Update) -> ModelResult<Document> {
    Ok(update.upsert(filter, &ApplyContext::new(DateTime::now()).upsert_insert())?)
}
