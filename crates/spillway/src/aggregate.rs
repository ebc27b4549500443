//! Aggregation pipelines on a collection: the part of `aggregate` that needs the database.
//!
//! The stages themselves are `spillway_doc::pipeline`'s; this module decides where their
//! input comes from and does the I/O they ask for:
//!
//! - **Into the planner**: the leading `$match` stages (merged), then a `$sort`, then `$skip`
//!   and `$limit`, become one `find`, so they use indexes (and a filter on a managed field is
//!   answered on logical documents, as `find` answers it). The rest of the pipeline streams
//!   over that find's cursor.
//! - **Logical documents, expanded only when read**: on a collection with a pattern policy a
//!   pipeline sees logical documents. A document is expanded (its buckets or archive read)
//!   only when the pipeline reads a managed array or passes whole documents on; a pipeline
//!   that reads other fields only runs on the small stored documents, which have the same
//!   values there. The first stage `{$storedDocuments: {}}` asks for the stored documents
//!   instead, as they are.
//! - **Other collections** (`$lookup`, `$unionWith`) are read from the same snapshot (or
//!   transaction) as the input, as logical documents, through the planner, so an equality
//!   `$lookup` on an indexed field uses the index.
//! - **`$out` and `$merge`** run the whole pipeline inside one write transaction: the output
//!   replaces (`$out`) or is merged into (`$merge`) the target collection atomically, and a
//!   failure anywhere changes nothing.
//!
//! This module must never implement a stage's semantics: it only feeds and drains them.

use std::sync::Arc;

use bson::{Bson, Document, doc};
use spillway_doc::DocError;
use spillway_doc::expr::Variables;
use spillway_doc::filter::Filter;
use spillway_doc::pipeline::{self, MergeAction, Output, Pipeline, PipelineOptions};
use spillway_doc::sort::SortSpec;
use spillway_store::Store;

use crate::cursor::Cursor;
use crate::error::{Error, Result};
use crate::exec::Execution;
use crate::ops;
use crate::patterned;
use crate::planner;
use crate::txn::{Published, Reader, WriteTxn};

/// The first stage that asks for the stored (unexpanded) documents of a collection with a
/// pattern policy.
pub const STORED_DOCUMENTS_STAGE: &str = "$storedDocuments";

/// An `aggregate` call, parsed and checked, ready to run.
pub(crate) struct Request {
    collection: String,
    /// Read stored documents as they are (`$storedDocuments`).
    stored: bool,
    /// The stages the planner answers, as a find.
    prefix: Prefix,
    /// The stages after the prefix, without a final `$out`/`$merge`.
    rest: Arc<Pipeline>,
    /// `$out` or `$merge`, if the pipeline ends with one.
    output: Option<Output>,
    variables: Variables,
}

/// The leading `$match`/`$sort`/`$skip`/`$limit` stages, as one find.
#[derive(Debug, Default)]
struct Prefix {
    filter: Filter,
    /// The filter as written, for `explain`.
    filter_document: Document,
    sort: Option<SortSpec>,
    sort_document: Option<Document>,
    skip: u64,
    limit: Option<usize>,
}

impl Request {
    /// Parses `stages` (MongoDB's errors, with their codes, for a bad pipeline) and splits it
    /// into the planner's prefix, the streamed rest and the write stage.
    pub(crate) fn parse(
        collection: &str,
        stages: &[Document],
        let_vars: Option<&Document>,
    ) -> Result<Request> {
        let (stored, stages) = match stages.first() {
            Some(first) if first.contains_key(STORED_DOCUMENTS_STAGE) => {
                check_stored_stage(first)?;
                (true, &stages[1..])
            }
            _ => (false, stages),
        };
        if let Some(position) = stages
            .iter()
            .position(|stage| stage.contains_key(STORED_DOCUMENTS_STAGE))
        {
            return Err(Error::aggregation(DocError::Pipeline {
                code: 40602,
                message: format!(
                    "{STORED_DOCUMENTS_STAGE} is only valid as the first stage of a pipeline, found at stage {}",
                    position + usize::from(stored)
                ),
            }));
        }
        let options = PipelineOptions {
            let_vars: let_vars.cloned(),
            ..PipelineOptions::default()
        };
        // The whole pipeline is checked first, so that an error in a stage the planner takes
        // is reported as MongoDB reports it.
        let whole = Pipeline::parse(stages, &options).map_err(Error::aggregation)?;
        let variables = whole.variables().clone();
        let (prefix, consumed) = Prefix::peel(stages)?;
        let mut rest: Vec<Document> = stages[consumed..].to_vec();
        let output = whole.output().cloned();
        if output.is_some() {
            rest.pop();
        }
        let rest = Pipeline::parse(&rest, &options).map_err(Error::aggregation)?;
        Ok(Request {
            collection: collection.to_string(),
            stored,
            prefix,
            rest: Arc::new(rest),
            output,
            variables,
        })
    }

    /// Whether the pipeline ends with `$out` or `$merge`.
    pub(crate) fn writes(&self) -> bool {
        self.output.is_some()
    }

    /// Whether the input must be logical documents: the collection has a policy and the
    /// pipeline reads a field the policy manages or owns (or passes whole documents on).
    fn needs_logical(&self, reader: &dyn Reader) -> bool {
        let catalog = reader.catalog();
        if self.stored || !catalog.has_policies(&self.collection) {
            return false;
        }
        let dependencies = self.rest.dependencies();
        dependencies.whole_document
            || dependencies.paths.iter().any(|path| {
                patterned::is_managed_path(catalog, &self.collection, path)
                    || patterned::is_reserved_path(catalog, &self.collection, path)
            })
            || self.output.is_some()
    }

    /// Runs a read-only pipeline on the latest snapshot; the cursor streams.
    pub(crate) fn run_on_snapshot<T>(
        self,
        state: Arc<Published>,
        batch_size: usize,
    ) -> Result<Cursor<T>> {
        let input = self.stream_input(&state, batch_size)?;
        let source: Arc<dyn pipeline::Source + Send + Sync> = Arc::new(SnapshotSource { state });
        let output = pipeline::run(self.rest, input, source, self.variables);
        Ok(Cursor::documents(Box::new(
            output.map(|item| item.map_err(Error::aggregation)),
        )))
    }

    /// Runs a read-only pipeline in a transaction (its reads see the transaction's writes):
    /// the result is computed now, as a transaction's `find` computes it.
    pub(crate) fn run_in(self, reader: &(dyn Reader + Sync)) -> Result<Vec<Document>> {
        let input = self.materialised_input(reader)?;
        let source: Arc<dyn pipeline::Source + Send + Sync + '_> =
            Arc::new(ReaderSource { reader });
        pipeline::run(
            Arc::clone(&self.rest),
            Box::new(input.into_iter().map(Ok)),
            source,
            self.variables.clone(),
        )
        .map(|item| item.map_err(Error::aggregation))
        .collect()
    }

    /// Runs a pipeline that ends with `$out` or `$merge` inside `txn`: the output is computed
    /// from the transaction's view, then written into it; the caller commits once.
    pub(crate) fn run_writing(self, txn: &mut WriteTxn, store: &Store) -> Result<()> {
        let output = self
            .output
            .clone()
            .expect("run_writing needs $out or $merge");
        let documents = self.run_in(&*txn)?;
        match output {
            Output::Out { collection, .. } => out(txn, store, &collection, documents),
            Output::Merge(spec) => {
                let target = spec.collection().to_string();
                for document in documents {
                    merge_one(txn, store, &target, &spec, document)?;
                }
                Ok(())
            }
        }
    }

    /// The input documents, streamed from a find on the snapshot.
    fn stream_input(
        &self,
        state: &Arc<Published>,
        batch_size: usize,
    ) -> Result<Box<dyn Iterator<Item = spillway_doc::Result<Document>> + Send>> {
        let logical = self.needs_logical(&**state);
        let filtered_logically =
            patterned::is_logical_query(&state.catalog, &self.collection, &self.prefix.filter);
        let plan = planner::plan(
            state.catalog.collections.get(&self.collection),
            &self.prefix.filter,
            self.prefix.sort.as_ref(),
        );
        let cursor: Cursor<Document> = if plan.sort.is_some() || filtered_logically || logical {
            Cursor::materialised(
                self.query(&**state, logical)?,
                Arc::new(Filter::match_all()),
                None,
            )
        } else {
            Cursor::streaming(
                Arc::clone(state),
                Execution::new(plan.access, plan.docs),
                Arc::new(self.prefix.filter.clone()),
                None,
                usize::try_from(self.prefix.skip).unwrap_or(usize::MAX),
                self.prefix.limit,
                batch_size,
            )
        };
        Ok(Box::new(cursor.map(|item| item.map_err(to_doc_error))))
    }

    /// The input documents, all at once.
    fn materialised_input(&self, reader: &dyn Reader) -> Result<Vec<Document>> {
        let logical = self.needs_logical(reader);
        self.query(reader, logical)?
            .iter()
            .map(|found| ops::decode(&found.bytes))
            .collect()
    }

    fn query(&self, reader: &dyn Reader, logical: bool) -> Result<Vec<crate::exec::Match>> {
        let query = if self.stored {
            ops::query_stored
        } else {
            ops::query
        };
        let mut run = query(
            reader,
            &self.collection,
            &self.prefix.filter,
            self.prefix.sort.as_ref(),
            self.prefix.skip,
            self.prefix.limit,
        )?;
        if logical {
            patterned::expand_matches(reader, &self.collection, &mut run.matches)?;
        }
        Ok(run.matches)
    }

    /// `explain` for the pipeline: the find the planner runs, then the other stages.
    pub(crate) fn explain(&self, reader: &dyn Reader) -> Result<Document> {
        let run = ops::query(
            reader,
            &self.collection,
            &self.prefix.filter,
            self.prefix.sort.as_ref(),
            self.prefix.skip,
            self.prefix.limit,
        )?;
        let mut cursor_stage = doc! {
            "queryPlanner": {
                "namespace": &self.collection,
                "parsedQuery": &self.prefix.filter_document,
                "winningPlan": run.described.clone().unwrap_or_else(|| run.plan.describe()),
            },
            "executionStats": {
                "nReturned": run.matches.len() as i64,
                "totalKeysExamined": run.keys_examined as i64,
                "totalDocsExamined": run.docs_examined as i64,
            },
            "logicalDocuments": !self.stored && self.needs_logical(reader),
        };
        if let Some(sort) = &self.prefix.sort_document {
            cursor_stage.insert("sort", sort.clone());
        }
        let mut stages = vec![Bson::Document(doc! { "$cursor": cursor_stage })];
        stages.extend(self.rest.describe().into_iter().map(Bson::Document));
        if let Some(output) = &self.output {
            stages.push(Bson::Document(output.describe()));
        }
        Ok(doc! { "stages": stages })
    }
}

fn check_stored_stage(stage: &Document) -> Result<()> {
    match stage.get(STORED_DOCUMENTS_STAGE) {
        Some(Bson::Document(options)) if options.is_empty() && stage.len() == 1 => Ok(()),
        _ => Err(Error::aggregation(DocError::Pipeline {
            code: 40323,
            message: format!(
                "{STORED_DOCUMENTS_STAGE} takes an empty document: {{{STORED_DOCUMENTS_STAGE}: {{}}}}"
            ),
        })),
    }
}

impl Prefix {
    /// Takes the leading `$match` stages, then one `$sort`, then `$skip` and `$limit` in the
    /// order find applies them; returns the prefix and how many stages it took.
    fn peel(stages: &[Document]) -> Result<(Prefix, usize)> {
        let mut prefix = Prefix::default();
        let mut filters = Vec::new();
        let mut consumed = 0;
        let stage = |index: usize| stages.get(index).and_then(single_stage);
        while let Some(("$match", Bson::Document(filter))) = stage(consumed) {
            filters.push(Bson::Document(filter.clone()));
            consumed += 1;
        }
        if let Some(("$sort", Bson::Document(sort))) = stage(consumed) {
            prefix.sort = Some(SortSpec::parse(sort).map_err(Error::argument)?);
            prefix.sort_document = Some(sort.clone());
            consumed += 1;
        }
        if let Some(("$skip", skip)) = stage(consumed) {
            prefix.skip = count(skip).unwrap_or(0);
            consumed += 1;
        }
        if let Some(("$limit", limit)) = stage(consumed) {
            prefix.limit = count(limit).and_then(|limit| usize::try_from(limit).ok());
            consumed += 1;
        }
        prefix.filter_document = match filters.len() {
            0 => Document::new(),
            1 => match filters.pop() {
                Some(Bson::Document(filter)) => filter,
                _ => unreachable!("filters holds documents"),
            },
            _ => doc! { "$and": filters },
        };
        prefix.filter = Filter::parse(&prefix.filter_document).map_err(Error::filter)?;
        Ok((prefix, consumed))
    }
}

/// A stage's name and argument, if it is a one-field document.
fn single_stage(stage: &Document) -> Option<(&str, &Bson)> {
    let mut fields = stage.iter();
    let (name, argument) = fields.next()?;
    fields.next().is_none().then_some((name.as_str(), argument))
}

/// A non-negative whole number given as any numeric type (the pipeline parser has checked it).
fn count(value: &Bson) -> Option<u64> {
    match value {
        Bson::Int32(n) => u64::try_from(*n).ok(),
        Bson::Int64(n) => u64::try_from(*n).ok(),
        Bson::Double(n) if n.fract() == 0.0 && *n >= 0.0 => Some(*n as u64),
        _ => None,
    }
}

/// A facade error met while feeding a pipeline, carried through the pipeline's error type.
fn to_doc_error(error: Error) -> DocError {
    DocError::Pipeline {
        code: error.code().unwrap_or(1),
        message: error.to_string(),
    }
}

/// The documents of another collection a stage reads (`$lookup`, `$unionWith`): logical
/// documents matching `filter`, in natural order.
fn read_collection(
    reader: &dyn Reader,
    collection: &str,
    filter: &Document,
) -> Result<Vec<Document>> {
    let filter = Filter::parse(filter).map_err(Error::filter)?;
    let mut run = ops::query(reader, collection, &filter, None, 0, None)?;
    patterned::expand_matches(reader, collection, &mut run.matches)?;
    run.matches
        .iter()
        .map(|found| ops::decode(&found.bytes))
        .collect()
}

/// Other collections, read from a committed snapshot.
struct SnapshotSource {
    state: Arc<Published>,
}

impl pipeline::Source for SnapshotSource {
    fn documents(
        &self,
        collection: &str,
        filter: &Document,
    ) -> spillway_doc::Result<Box<dyn Iterator<Item = spillway_doc::Result<Document>> + '_>> {
        let documents = read_collection(&*self.state, collection, filter).map_err(to_doc_error)?;
        Ok(Box::new(documents.into_iter().map(Ok)))
    }
}

/// Other collections, read through a transaction.
struct ReaderSource<'r> {
    reader: &'r (dyn Reader + Sync),
}

impl pipeline::Source for ReaderSource<'_> {
    fn documents(
        &self,
        collection: &str,
        filter: &Document,
    ) -> spillway_doc::Result<Box<dyn Iterator<Item = spillway_doc::Result<Document>> + '_>> {
        let documents = read_collection(self.reader, collection, filter).map_err(to_doc_error)?;
        Ok(Box::new(documents.into_iter().map(Ok)))
    }
}

/// `$out`: the target's documents become `documents` (its indexes stay, as in MongoDB).
fn out(txn: &mut WriteTxn, store: &Store, target: &str, documents: Vec<Document>) -> Result<()> {
    ops::delete(txn, store, target, &Filter::match_all(), true)?;
    ops::ensure_collection(txn, store, target)?;
    for document in documents {
        ops::insert(txn, store, target, document)?;
    }
    Ok(())
}

/// `$merge` of one output document into `target`.
fn merge_one(
    txn: &mut WriteTxn,
    store: &Store,
    target: &str,
    spec: &pipeline::MergeSpec,
    document: Document,
) -> Result<()> {
    let filter_document = spec.match_filter(&document).map_err(Error::aggregation)?;
    let filter = Filter::parse(&filter_document).map_err(Error::filter)?;
    let existing = ops::query(txn, target, &filter, None, 0, Some(2))?;
    if existing.matches.len() > 1 {
        return Err(Error::aggregation(DocError::Pipeline {
            code: 51183,
            message: format!(
                "$merge: more than one document of '{target}' matches the 'on' fields of {filter_document}"
            ),
        }));
    }
    let existing = existing
        .matches
        .first()
        .map(|found| ops::decode(&found.bytes))
        .transpose()?;
    match spec
        .decide(existing.as_ref(), document)
        .map_err(Error::aggregation)?
    {
        MergeAction::Insert(document) => {
            ops::insert(txn, store, target, document)?;
        }
        MergeAction::Replace(document) => {
            let replacement = ops::parse_update(&document, &[], ops::UpdateKind::Replacement)?;
            ops::update(txn, store, target, &filter, &replacement, false, false)?;
        }
        MergeAction::Keep | MergeAction::Discard => {}
    }
    Ok(())
}
