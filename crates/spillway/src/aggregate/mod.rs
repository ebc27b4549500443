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

use bson::{Bson, Document, RawDocumentBuf, doc};
use spillway_doc::DocError;
use spillway_doc::collation::Collation;
use spillway_doc::expr::{Dependencies, Variables};
use spillway_doc::filter::Filter;
use spillway_doc::pipeline::{self, Output, Pipeline, PipelineOptions};
use spillway_doc::sort::SortSpec;
use spillway_doc::timeseries::BucketSpec;
use spillway_store::Store;

use crate::cursor::{Cursor, LogicalRead};
use crate::error::{Error, Result};
use crate::exec::Execution;
use crate::ops;
use crate::patterned;
use crate::planner;
use crate::route::Route;
use crate::storage;
use crate::txn::{Published, Reader, WriteTxn};
use crate::views;

mod logical;
mod write;

use logical::{Chunks, LogicalInput};

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
    /// The stages after the prefix, a final `$out`/`$merge` included.
    rest: Vec<Document>,
    /// `$out` or `$merge`, if the pipeline ends with one.
    output: Option<Output>,
    options: PipelineOptions,
    variables: Variables,
}

/// What a request runs on one view of the database: how input documents are made, and the
/// stages after the prefix (without the write stage), rewritten for that input.
struct Prepared {
    input: LogicalInput,
    pipeline: Arc<Pipeline>,
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
    /// into the planner's prefix and the rest.
    pub(crate) fn parse(
        collection: &str,
        stages: &[Document],
        let_vars: Option<&Document>,
        collation: &Collation,
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
        let pushed_down = bucket_prefilter(stages);
        let stages = pushed_down.as_deref().unwrap_or(stages);
        let options = PipelineOptions {
            let_vars: let_vars.cloned(),
            collation: collation.clone(),
        };
        // The whole pipeline is checked first, so that an error in a stage the planner takes
        // is reported as MongoDB reports it.
        let whole = Pipeline::parse(stages, &options).map_err(Error::aggregation)?;
        let (mut prefix, consumed) = Prefix::peel(stages)?;
        prefix.filter = std::mem::take(&mut prefix.filter).collated(collation);
        prefix.sort = prefix.sort.map(|sort| sort.collated(collation));
        Ok(Request {
            collection: collection.to_string(),
            stored,
            prefix,
            rest: stages[consumed..].to_vec(),
            output: whole.output().cloned(),
            variables: whole.variables().clone(),
            options,
        })
    }

    /// Whether the pipeline ends with `$out` or `$merge`.
    pub(crate) fn writes(&self) -> bool {
        self.output.is_some()
    }

    /// Plans the input on `reader`'s view and parses the stages it runs.
    fn prepare(&self, reader: &dyn Reader) -> Result<Prepared> {
        let mut stages = self.rest.clone();
        let input = if self.stored {
            LogicalInput::default()
        } else {
            let dependencies = |stages: &[Document]| -> Result<Dependencies> {
                Ok(Pipeline::parse(stages, &self.options)
                    .map_err(Error::aggregation)?
                    .dependencies())
            };
            LogicalInput::plan(reader, &self.collection, &mut stages, &dependencies)?
        };
        if self.output.is_some() {
            stages.pop();
        }
        let pipeline = Pipeline::parse(&stages, &self.options).map_err(Error::aggregation)?;
        Ok(Prepared {
            input,
            pipeline: Arc::new(pipeline),
        })
    }

    /// Runs a read-only pipeline on the latest snapshot; the cursor streams.
    pub(crate) fn run_on_snapshot<T>(
        self,
        state: Arc<Published>,
        batch_size: usize,
    ) -> Result<Cursor<T>> {
        let prepared = self.prepare(&*state)?;
        let stored = self.stored_documents(&state, batch_size)?;
        let dependencies = prepared.pipeline.dependencies();
        let fields = (!dependencies.whole_document).then(|| {
            let mut heads: Vec<String> = dependencies
                .paths
                .iter()
                .map(|path| path.split('.').next().unwrap_or(path).to_string())
                .collect();
            heads.sort();
            heads.dedup();
            heads
        });
        let input = LogicalStream {
            fields,
            reader: Arc::clone(&state),
            collection: self.collection.clone(),
            input: prepared.input,
            stored,
            chunks: None,
            failed: false,
        };
        let source: Arc<dyn pipeline::Source + Send + Sync> = Arc::new(SnapshotSource { state });
        let output = pipeline::run(prepared.pipeline, Box::new(input), source, self.variables);
        Ok(Cursor::documents(Box::new(
            output.map(|item| item.map_err(Error::aggregation)),
        )))
    }

    /// Runs a read-only pipeline in a transaction (its reads see the transaction's writes):
    /// the result is computed now, as a transaction's `find` computes it.
    pub(crate) fn run_in(&self, reader: &(dyn Reader + Sync)) -> Result<Vec<Document>> {
        let prepared = self.prepare(reader)?;
        let mut input = Vec::new();
        for found in self.query(reader)? {
            let mut chunks = prepared.input.documents(
                reader,
                &self.collection,
                storage::decode(&found.bytes)?,
            )?;
            while let Some(document) = chunks.next(reader, &self.collection)? {
                input.push(document);
            }
        }
        let source: Arc<dyn pipeline::Source + Send + Sync + '_> =
            Arc::new(ReaderSource { reader });
        pipeline::run(
            prepared.pipeline,
            Box::new(input.into_iter().map(Ok)),
            source,
            self.variables.clone(),
        )
        .map(|item| item.map_err(Error::aggregation))
        .collect()
    }

    /// Runs a pipeline that ends with `$out` or `$merge` inside `txn`: the output is computed
    /// from the transaction's view, then written into it; the caller commits once.
    pub(crate) fn run_writing(&self, txn: &mut WriteTxn, store: &Store) -> Result<()> {
        let output = self
            .output
            .clone()
            .expect("run_writing needs $out or $merge");
        let documents = self.run_in(&*txn)?;
        write::write_output(txn, store, &output, documents)
    }

    /// The stored documents the prefix selects, streamed from the snapshot where the plan
    /// allows it.
    fn stored_documents(
        &self,
        state: &Arc<Published>,
        batch_size: usize,
    ) -> Result<Cursor<RawDocumentBuf>> {
        let filter = Arc::new(self.prefix.filter.clone());
        let shape = if self.stored {
            None
        } else {
            Some(patterned::read_shape(
                &state.catalog,
                &Route::of(&state.catalog, &self.collection),
                &filter,
            )?)
        };
        let scan_filter = shape.as_ref().map_or_else(
            || Arc::clone(&filter),
            |shape| Arc::clone(&shape.scan_filter),
        );
        let plan = planner::plan(
            state.catalog.collections.get(&self.collection),
            &scan_filter,
            self.prefix.sort.as_ref(),
        );
        // A sort on a managed array compares whole logical arrays: the input is sorted whole.
        let logical_sort = !self.stored
            && Route::of(&state.catalog, &self.collection)
                .is_logical_sort(self.prefix.sort.as_ref());
        if plan.sort.is_some() || shape.as_ref().is_some_and(|shape| shape.union) || logical_sort {
            return Ok(Cursor::materialised(
                self.query(&**state)?,
                Arc::new(Filter::match_all()),
                None,
            ));
        }
        // A filter on a managed field: the plan scans with the other clauses and the cursor
        // matches each candidate on its logical view; the pipeline gets stored documents.
        let logical = shape
            .filter(|shape| shape.logical_filter)
            .map(|_| LogicalRead::matching_only(&self.collection));
        Ok(Cursor::streaming(
            Arc::clone(state),
            Execution::new(plan.access, plan.docs),
            (filter, scan_filter),
            logical,
            None,
            usize::try_from(self.prefix.skip).unwrap_or(usize::MAX),
            self.prefix.limit,
            batch_size,
        ))
    }

    /// The stored documents the prefix selects, all at once.
    fn query(&self, reader: &dyn Reader) -> Result<Vec<crate::exec::Match>> {
        let query = if self.stored {
            storage::query_stored
        } else {
            ops::query
        };
        Ok(query(
            reader,
            &self.collection,
            &self.prefix.filter,
            self.prefix.sort.as_ref(),
            self.prefix.skip,
            self.prefix.limit,
        )?
        .matches)
    }

    /// `explain` for the pipeline: the find the planner runs (with what it examined), how
    /// input documents are made, then the other stages as they run.
    pub(crate) fn explain(&self, reader: &dyn Reader) -> Result<Document> {
        let prepared = self.prepare(reader)?;
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
            "input": if self.stored { "stored documents".to_string() } else { prepared.input.describe() },
        };
        if let Some(sort) = &self.prefix.sort_document {
            cursor_stage.insert("sort", sort.clone());
        }
        if self.prefix.skip > 0 {
            cursor_stage.insert("skip", self.prefix.skip as i64);
        }
        if let Some(limit) = self.prefix.limit {
            cursor_stage.insert("limit", limit as i64);
        }
        let mut stages = vec![Bson::Document(doc! { "$cursor": cursor_stage })];
        stages.extend(prepared.pipeline.describe().into_iter().map(Bson::Document));
        if let Some(output) = &self.output {
            stages.push(Bson::Document(output.describe()));
        }
        Ok(doc! { "stages": stages })
    }
}

/// A stored document decoded whole, or only its top-level `fields` (a pipeline that reads
/// `author` and `price` never decodes a book's arrays).
fn decode_fields(stored: &RawDocumentBuf, fields: Option<&[String]>) -> Result<Document> {
    let decoded = match fields {
        None => spillway_doc::decode::document(stored),
        Some(fields) => spillway_doc::decode::fields(stored, |name| {
            fields
                .binary_search_by(|field| field.as_bytes().cmp(name))
                .is_ok()
        }),
    };
    decoded
        .map_err(|error| Error::corruption(format!("a stored document cannot be decoded: {error}")))
}

/// The input documents of a pipeline on the latest snapshot: the stored documents the prefix
/// selects, each made into the documents [`LogicalInput`] says, one at a time.
struct LogicalStream {
    reader: Arc<Published>,
    collection: String,
    input: LogicalInput,
    stored: Cursor<RawDocumentBuf>,
    /// The top-level fields the pipeline reads, when it does not read whole documents: only
    /// those are decoded from a stored document that is used as it is.
    fields: Option<Vec<String>>,
    chunks: Option<Chunks>,
    failed: bool,
}

impl LogicalStream {
    fn next_document(&mut self) -> Result<Option<Document>> {
        loop {
            if let Some(chunks) = &mut self.chunks {
                if let Some(document) = chunks.next(&*self.reader, &self.collection)? {
                    return Ok(Some(document));
                }
                self.chunks = None;
            }
            let Some(stored) = self.stored.next().transpose()? else {
                return Ok(None);
            };
            if !self.input.transforms() {
                return Ok(Some(decode_fields(&stored, self.fields.as_deref())?));
            }
            let stored = decode_fields(&stored, None)?;
            self.chunks = Some(
                self.input
                    .documents(&*self.reader, &self.collection, stored)?,
            );
        }
    }
}

impl Iterator for LogicalStream {
    type Item = spillway_doc::Result<Document>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.failed {
            return None;
        }
        match self.next_document() {
            Ok(document) => document.map(Ok),
            Err(error) => {
                self.failed = true;
                Some(Err(to_doc_error(error)))
            }
        }
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
        // A `$match` that reads variables (`$expr` with `$$name`) stays in the pipeline, which
        // evaluates it with their values.
        while let Some(("$match", Bson::Document(filter))) = stage(consumed)
            && !filter.to_string().contains("$$")
        {
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

/// A time series read (`$_internalUnpackBucket` then `$match`) with a `$match` on the
/// buckets first, of what the measurements' filter says about meta values and times
/// (`BucketSpec::bucket_filter`), so that the buckets' index narrows what is unpacked.
/// `None` when the pipeline is not such a read or the filter says nothing of buckets.
fn bucket_prefilter(stages: &[Document]) -> Option<Vec<Document>> {
    let unpack = stages.first()?.get("$_internalUnpackBucket")?;
    let Bson::Document(filter) = stages.get(1)?.get("$match")? else {
        return None;
    };
    let spec = BucketSpec::parse_stage(unpack).ok()?;
    let buckets = spec.bucket_filter(filter)?;
    let mut rewritten = Vec::with_capacity(stages.len() + 1);
    rewritten.push(doc! { "$match": buckets });
    rewritten.extend(stages.iter().cloned());
    Some(rewritten)
}

/// A facade error met while feeding a pipeline, carried through the pipeline's error type.
#[allow(clippy::needless_pass_by_value)] // used as `map_err(to_doc_error)`
fn to_doc_error(error: Error) -> DocError {
    DocError::Pipeline {
        code: error.code().unwrap_or(1),
        message: error.to_string(),
    }
}

/// The documents of another collection a stage reads (`$lookup`, `$unionWith`): logical
/// documents matching `filter`, in natural order.
fn read_collection(
    reader: &(dyn Reader + Sync),
    collection: &str,
    filter: &Document,
) -> Result<Vec<Document>> {
    // A view is its pipeline on its source, then the filter (views hold no cycle, so this
    // recursion ends).
    if let Some((source, mut stages)) = views::resolve(reader.catalog(), collection) {
        stages.push(doc! { "$match": filter.clone() });
        return Request::parse(&source, &stages, None, &Collation::simple())?.run_in(reader);
    }
    let filter = Filter::parse(filter).map_err(Error::filter)?;
    let mut run = ops::query(reader, collection, &filter, None, 0, None)?;
    patterned::expand_matches(reader, collection, &mut run.matches)?;
    run.matches
        .iter()
        .map(|found| storage::decode(&found.bytes))
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
