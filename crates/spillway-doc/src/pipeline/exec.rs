//! Running a parsed pipeline: each stage an iterator over the previous one's documents.

use std::sync::Arc;

use bson::{Bson, Document, RawDocumentBuf, doc};

use super::group::Group;
use super::shape::set_path;
use super::{Bucket, Lookup, Pipeline, Source, Stage, pipeline_error};
use crate::compare::{canonical_type, compare, compare_collated};
use crate::error::Result;
use crate::expr::{Expression, Variables};
use crate::filter::Filter;
use crate::path::{FieldPath, get};
use crate::sort::SortSpec;
use crate::timeseries::BucketSpec;

/// A stream of documents between stages.
type Stream<'a> = Box<dyn Iterator<Item = Result<Document>> + Send + 'a>;

// The pipeline, source and variables are handed over: the stages' iterators keep what they
// need of them for as long as the caller pulls documents.
#[allow(clippy::needless_pass_by_value)]
/// Runs `pipeline` (without its writing stage) over `input`, reading other collections from
/// `source`, with `variables` (the pipeline's own, from [`Pipeline::variables`], or the
/// caller's). Documents stream through the stages that allow it.
pub fn run<'a>(
    pipeline: Arc<Pipeline>,
    input: Box<dyn Iterator<Item = Result<Document>> + Send + 'a>,
    source: Arc<dyn Source + Send + Sync + 'a>,
    variables: Variables,
) -> Box<dyn Iterator<Item = Result<Document>> + Send + 'a> {
    let stages = pipeline.stages().to_vec();
    let mut stream: Stream<'a> = input;
    let mut position = 0;
    while position < stages.len() {
        let stage = stages[position].clone();
        // `$sort` then `$limit`: keep only the top documents.
        let limit = match (&stage, stages.get(position + 1)) {
            (Stage::Sort(_), Some(Stage::Limit(limit))) => Some(*limit as usize),
            _ => None,
        };
        stream = apply(stage, stream, &source, &variables, limit, &pipeline);
        position += 1;
    }
    stream
}

/// One stage applied to a stream.
fn apply<'a>(
    stage: Stage,
    input: Stream<'a>,
    source: &Arc<dyn Source + Send + Sync + 'a>,
    variables: &Variables,
    limit: Option<usize>,
    pipeline: &Arc<Pipeline>,
) -> Stream<'a> {
    let variables = variables.clone();
    match stage {
        Stage::Match(filter) => match_stage(filter, input, variables),
        Stage::Project(_) | Stage::AddFields(_) | Stage::ReplaceRoot(_) => Box::new(
            input.map(move |item| item.and_then(|document| reshape(&stage, document, &variables))),
        ),
        Stage::Redact(expression) => redact_stage(expression, input, variables),
        Stage::UnpackBucket(spec) => unpack_bucket_stage(spec, input),
        Stage::Skip(skip) => skip_stage(skip, input),
        Stage::Limit(limit) => limit_stage(limit, input),
        Stage::Sort(sort) => deferred(input, move |input| run_sort(&sort, input, limit)),
        Stage::Count(field) => deferred(input, move |input| run_count(field, input)),
        Stage::Group(group) => deferred(input, move |mut input| group.run(&mut input, &variables)),
        Stage::SortByCount(expression) => deferred(input, move |input| {
            run_sort_by_count(expression, input, &variables)
        }),
        Stage::Bucket(bucket) => {
            deferred(input, move |input| run_bucket(&bucket, input, &variables))
        }
        Stage::BucketAuto {
            group_by,
            buckets,
            output,
        } => deferred(input, move |input| {
            run_bucket_auto(&group_by, buckets, &output, input, &variables)
        }),
        Stage::Sample(size) => deferred(input, move |input| run_sample(size, input)),
        Stage::Facet(facets) => facet_stage(facets, input, source, pipeline, variables),
        Stage::Unwind {
            path,
            index_field,
            preserve,
        } => unwind_stage(&path, index_field, preserve, input),
        Stage::Lookup(lookup) => {
            let source = Arc::clone(source);
            Box::new(input.map(move |item| {
                item.and_then(|document| run_lookup(&lookup, document, &*source, &variables))
            }))
        }
        Stage::UnionWith {
            collection,
            pipeline: inner,
        } => union_with_stage(collection, inner, input, source, variables),
        Stage::Documents(expression) => documents_stage(&expression, input, &variables),
    }
}

/// `$match`: keeps the documents `filter` matches.
fn match_stage(filter: Filter, input: Stream<'_>, variables: Variables) -> Stream<'_> {
    Box::new(input.filter_map(move |item| {
        match item {
            Ok(document) => match RawDocumentBuf::try_from(&document)
                .map_err(Into::into)
                .and_then(|raw| filter.matches_with(&raw, &variables))
            {
                Ok(true) => Some(Ok(document)),
                Ok(false) => None,
                Err(error) => Some(Err(error)),
            },
            Err(error) => Some(Err(error)),
        }
    }))
}

/// `$redact`: each document as [`redact`] leaves it, or dropped when pruned whole.
fn redact_stage(expression: Expression, input: Stream<'_>, variables: Variables) -> Stream<'_> {
    Box::new(input.filter_map(move |item| match item {
        Ok(document) => match redact(&expression, document, &variables) {
            Ok(Some(document)) => Some(Ok(document)),
            Ok(None) => None,
            Err(error) => Some(Err(error)),
        },
        Err(error) => Some(Err(error)),
    }))
}

/// `$_internalUnpackBucket`: each time series bucket becomes its measurements.
fn unpack_bucket_stage(spec: BucketSpec, input: Stream<'_>) -> Stream<'_> {
    Box::new(input.flat_map(
        move |item| -> Box<dyn Iterator<Item = Result<Document>> + Send> {
            match item.and_then(|bucket| spec.unpack(&bucket)) {
                Ok(measurements) => Box::new(measurements.into_iter().map(Ok)),
                Err(error) => Box::new(std::iter::once(Err(error))),
            }
        },
    ))
}

/// `$skip`: drops the first `skip` documents (errors pass and are not counted).
fn skip_stage(skip: u64, input: Stream<'_>) -> Stream<'_> {
    let mut remaining = skip;
    Box::new(input.filter(move |item| {
        if item.is_ok() && remaining > 0 {
            remaining -= 1;
            return false;
        }
        true
    }))
}

/// `$limit`: stops pulling after `limit` documents (errors pass and are not counted).
fn limit_stage(limit: u64, input: Stream<'_>) -> Stream<'_> {
    let mut remaining = limit;
    Box::new(std::iter::from_fn({
        let mut input = input;
        move || {
            if remaining == 0 {
                return None;
            }
            let item = input.next()?;
            if item.is_ok() {
                remaining -= 1;
            }
            Some(item)
        }
    }))
}

/// `$sort`, keeping only the top `limit` documents when a `$limit` follows.
fn run_sort(sort: &SortSpec, input: Stream<'_>, limit: Option<usize>) -> Result<Vec<Document>> {
    let mut documents: Vec<Document> = Vec::new();
    for document in input {
        documents.push(document?);
        if let Some(limit) = limit
            && documents.len() >= limit.saturating_mul(2).max(64)
        {
            documents.sort_by(|a, b| sort.compare(a, b));
            documents.truncate(limit);
        }
    }
    documents.sort_by(|a, b| sort.compare(a, b));
    if let Some(limit) = limit {
        documents.truncate(limit);
    }
    Ok(documents)
}

/// `$count`: one document with the number of inputs in `field`, or none for no input.
fn run_count(field: String, input: Stream<'_>) -> Result<Vec<Document>> {
    let mut count: i64 = 0;
    for document in input {
        document?;
        count += 1;
    }
    if count == 0 {
        return Ok(Vec::new());
    }
    let mut out = Document::new();
    out.insert(field, crate::expr::num::Num::from_i64(count).to_bson());
    Ok(vec![out])
}

/// `$sortByCount`: a `$group` by `expression` counting each group, largest count first.
fn run_sort_by_count(
    expression: Expression,
    mut input: Stream<'_>,
    variables: &Variables,
) -> Result<Vec<Document>> {
    let group = Group::parse(
        &Bson::Document(doc! { "_id": Bson::Null, "count": { "$sum": 1 } }),
        &[],
    )?;
    let group = Group {
        id: expression,
        fields: group.fields,
    };
    let mut groups = group.run(&mut input, variables)?;
    groups.sort_by(|a, b| {
        compare(
            b.get("count").unwrap_or(&Bson::Null),
            a.get("count").unwrap_or(&Bson::Null),
        )
    });
    Ok(groups)
}

/// `$bucketAuto`: about `buckets` buckets of equal size by `group_by`, equal keys never split.
fn run_bucket_auto(
    group_by: &Expression,
    buckets: usize,
    output: &Group,
    input: Stream<'_>,
    variables: &Variables,
) -> Result<Vec<Document>> {
    let mut keyed = Vec::new();
    for document in input {
        let document = document?;
        let key = group_by
            .evaluate(&document, variables)?
            .unwrap_or(Bson::Null);
        keyed.push((key, document));
    }
    // Keys in the collation's order, keys equal under it never split.
    let collation = &variables.collation;
    keyed.sort_by(|a, b| compare_collated(&a.0, &b.0, collation));
    let total = keyed.len();
    let per_bucket = total.div_ceil(buckets.max(1)).max(1);
    let mut out = Vec::new();
    let mut start = 0;
    while start < total {
        let mut end = (start + per_bucket).min(total);
        while end < total && compare_collated(&keyed[end].0, &keyed[end - 1].0, collation).is_eq() {
            end += 1;
        }
        let mut states = Vec::new();
        for (_, document) in &keyed[start..end] {
            output.fold_into(&mut states, 0, document, variables)?;
        }
        let max = if end < total {
            keyed[end].0.clone()
        } else {
            keyed[end - 1].0.clone()
        };
        let mut result = doc! { "_id": { "min": keyed[start].0.clone(), "max": max } };
        output.finish_into(states.pop().unwrap_or_default(), &mut result);
        out.push(result);
        start = end;
    }
    Ok(out)
}

/// `$sample`: `size` documents by reservoir sampling, in random order.
fn run_sample(size: usize, input: Stream<'_>) -> Result<Vec<Document>> {
    let mut rng = seed();
    let mut kept: Vec<Document> = Vec::new();
    for (seen, document) in input.enumerate() {
        let document = document?;
        if kept.len() < size {
            kept.push(document);
        } else {
            let slot = (next_random(&mut rng) % (seen as u64 + 1)) as usize;
            if slot < size {
                kept[slot] = document;
            }
        }
    }
    // Shuffle what was kept: $sample's order is random too.
    for position in (1..kept.len()).rev() {
        let other = (next_random(&mut rng) % (position as u64 + 1)) as usize;
        kept.swap(position, other);
    }
    Ok(kept)
}

/// `$facet`: one document with each facet's sub-pipeline run over the whole input.
fn facet_stage<'a>(
    facets: Vec<(String, Pipeline)>,
    input: Stream<'a>,
    source: &Arc<dyn Source + Send + Sync + 'a>,
    pipeline: &Arc<Pipeline>,
    variables: Variables,
) -> Stream<'a> {
    let source = Arc::clone(source);
    let pipeline = Arc::clone(pipeline);
    deferred(input, move |input| {
        let documents = input.collect::<Result<Vec<_>>>()?;
        let mut out = Document::new();
        for (field, facet) in &facets {
            let inner = Arc::new(pipeline.with_stages(facet.stages().to_vec()));
            let results = run(
                inner,
                Box::new(documents.clone().into_iter().map(Ok)),
                Arc::clone(&source),
                variables.clone(),
            )
            .collect::<Result<Vec<_>>>()?;
            out.insert(
                field.clone(),
                results.into_iter().map(Bson::Document).collect::<Vec<_>>(),
            );
        }
        Ok(vec![out])
    })
}

/// `$unwind`: each document once per element of the array at `path`, as [`unwind`] makes them.
fn unwind_stage<'a>(
    path: &str,
    index_field: Option<String>,
    preserve: bool,
    input: Stream<'a>,
) -> Stream<'a> {
    let parts = FieldPath::parse(path).expect("checked when parsed");
    Box::new(input.flat_map(
        move |item| -> Box<dyn Iterator<Item = Result<Document>> + Send> {
            match item {
                Err(error) => Box::new(std::iter::once(Err(error))),
                Ok(document) => Box::new(
                    unwind(document, &parts, index_field.as_deref(), preserve)
                        .into_iter()
                        .map(Ok),
                ),
            }
        },
    ))
}

/// `$unionWith`: the input, then `inner` run over `collection` once the input is exhausted.
fn union_with_stage<'a>(
    collection: String,
    inner: Box<Pipeline>,
    input: Stream<'a>,
    source: &Arc<dyn Source + Send + Sync + 'a>,
    variables: Variables,
) -> Stream<'a> {
    let source = Arc::clone(source);
    let mut union: Option<std::vec::IntoIter<Result<Document>>> = None;
    let mut input = input;
    Box::new(std::iter::from_fn(move || {
        if union.is_none() {
            if let Some(item) = input.next() {
                return Some(item);
            }
            let results: Vec<Result<Document>> =
                match source.documents(&collection, &Document::new()) {
                    Ok(documents) => match documents.collect::<Result<Vec<_>>>() {
                        Ok(documents) => run(
                            Arc::new((*inner).clone()),
                            Box::new(documents.into_iter().map(Ok)),
                            Arc::clone(&source),
                            variables.clone(),
                        )
                        .collect(),
                        Err(error) => vec![Err(error)],
                    },
                    Err(error) => vec![Err(error)],
                };
            union = Some(results.into_iter());
        }
        union.as_mut().and_then(Iterator::next)
    }))
}

/// `$documents`: replaces the input with the documents `expression` evaluates to.
fn documents_stage<'a>(
    expression: &Expression,
    input: Stream<'a>,
    variables: &Variables,
) -> Stream<'a> {
    // `$documents` replaces the input.
    drop(input);
    match expression.evaluate(&Document::new(), variables) {
        Ok(Some(Bson::Array(items))) => Box::new(items.into_iter().map(|item| match item {
            Bson::Document(document) => Ok(document),
            other => Err(pipeline_error(
                40228,
                format!(
                    "$documents requires an array of objects, found {}",
                    crate::path::describe(&other)
                ),
            )),
        })),
        Ok(other) => Box::new(std::iter::once(Err(pipeline_error(
            5858203,
            format!(
                "$documents requires an array of objects, found {}",
                other.as_ref().map_or("missing", crate::path::describe)
            ),
        )))),
        Err(error) => Box::new(std::iter::once(Err(error))),
    }
}

/// The stages that turn one document into one document.
pub(super) fn reshape(
    stage: &Stage,
    document: Document,
    variables: &Variables,
) -> Result<Document> {
    match stage {
        Stage::Project(project) => project.apply(&document, variables),
        Stage::AddFields(add) => add.apply(&document, variables),
        Stage::ReplaceRoot(expression) => match expression.evaluate(&document, variables)? {
            Some(Bson::Document(root)) => Ok(root),
            other => Err(pipeline_error(
                40228,
                format!(
                    "'newRoot' expression must evaluate to an object, but resulting value was: {}. Type of resulting value: '{}'",
                    other
                        .as_ref()
                        .map_or("MISSING".to_string(), ToString::to_string),
                    crate::expr::num::type_name(other.as_ref())
                ),
            )),
        },
        _ => Ok(document),
    }
}

/// A stage that must see its whole input before it outputs: runs on the first `next()`.
fn deferred<'a>(
    input: Stream<'a>,
    compute: impl FnOnce(Stream<'a>) -> Result<Vec<Document>> + Send + 'a,
) -> Stream<'a> {
    let mut pending = Some((input, compute));
    let mut output: Option<std::vec::IntoIter<Document>> = None;
    let mut failed = false;
    Box::new(std::iter::from_fn(move || {
        if failed {
            return None;
        }
        if let Some((input, compute)) = pending.take() {
            match compute(input) {
                Ok(documents) => output = Some(documents.into_iter()),
                Err(error) => {
                    failed = true;
                    return Some(Err(error));
                }
            }
        }
        output.as_mut().and_then(Iterator::next).map(Ok)
    }))
}

fn unwind(
    document: Document,
    path: &FieldPath,
    index_field: Option<&str>,
    preserve: bool,
) -> Vec<Document> {
    let with_index = |mut document: Document, index: Option<i64>| {
        if let Some(field) = index_field {
            let parts: Vec<String> = field.split('.').map(str::to_string).collect();
            set_path(
                &mut document,
                &parts,
                Some(index.map_or(Bson::Null, Bson::Int64)),
            );
        }
        document
    };
    match get(&document, path) {
        Some(Bson::Array(items)) if !items.is_empty() => {
            let items = items.clone();
            // Each output copies the document without the array (a placeholder keeps the
            // field's position): copying the array into every output would be quadratic.
            let mut base = document;
            set_path(&mut base, path.parts(), Some(Bson::Null));
            items
                .into_iter()
                .enumerate()
                .map(|(index, item)| {
                    let mut out = base.clone();
                    set_path(&mut out, path.parts(), Some(item));
                    with_index(out, Some(index as i64))
                })
                .collect()
        }
        Some(Bson::Array(_)) => {
            if preserve {
                let mut out = document.clone();
                set_path(&mut out, path.parts(), None);
                vec![with_index(out, None)]
            } else {
                Vec::new()
            }
        }
        None | Some(Bson::Null) => {
            if preserve {
                vec![with_index(document, None)]
            } else {
                Vec::new()
            }
        }
        Some(_) => vec![with_index(document, None)],
    }
}

fn run_lookup(
    lookup: &Lookup,
    mut document: Document,
    source: &(dyn Source + Send + Sync),
    variables: &Variables,
) -> Result<Document> {
    let mut filter = Document::new();
    if let (Some(local), Some(foreign)) = (&lookup.local_field, &lookup.foreign_field) {
        let mut values = Vec::new();
        crate::path::distinct_values(
            &Bson::Document(document.clone()),
            FieldPath::parse(local)?.parts(),
            &mut values,
        );
        let mut flattened = Vec::new();
        for value in values {
            match value {
                Bson::Array(items) if !items.is_empty() => flattened.extend(items),
                Bson::Array(_) => {}
                other => flattened.push(other),
            }
        }
        if flattened.is_empty() {
            flattened.push(Bson::Null);
        }
        filter.insert(foreign.clone(), doc! { "$in": flattened });
    }
    let mut matched = source
        .documents(&lookup.from, &filter)?
        .collect::<Result<Vec<_>>>()?;
    if let Some(pipeline) = &lookup.pipeline {
        let mut inner = variables.clone();
        for (name, expression) in &lookup.let_vars {
            let value = expression
                .evaluate(&document, variables)?
                .unwrap_or(Bson::Null);
            inner.user.push((name.clone(), value));
        }
        // The sub-pipeline reads its other collections from the same source, synchronously.
        let stages = pipeline.stages().to_vec();
        let mut stream: Vec<Document> = matched;
        for (position, stage) in stages.iter().enumerate() {
            let limit = match (stage, stages.get(position + 1)) {
                (Stage::Sort(_), Some(Stage::Limit(limit))) => Some(*limit as usize),
                _ => None,
            };
            stream = run_stage_sync(stage.clone(), stream, source, &inner, limit, pipeline)?;
        }
        matched = stream;
    }
    let parts: Vec<String> = lookup.as_field.split('.').map(str::to_string).collect();
    set_path(
        &mut document,
        &parts,
        Some(Bson::Array(
            matched.into_iter().map(Bson::Document).collect(),
        )),
    );
    Ok(document)
}

/// A source that borrows another for the lifetime of one synchronous sub-pipeline.
struct Borrowed<'s>(&'s (dyn Source + Send + Sync));

impl Source for Borrowed<'_> {
    fn documents(
        &self,
        collection: &str,
        filter: &Document,
    ) -> Result<Box<dyn Iterator<Item = Result<Document>> + '_>> {
        self.0.documents(collection, filter)
    }
}

/// One stage over a vector (sub-pipelines of `$lookup`).
fn run_stage_sync(
    stage: Stage,
    documents: Vec<Document>,
    source: &(dyn Source + Send + Sync),
    variables: &Variables,
    limit: Option<usize>,
    pipeline: &Pipeline,
) -> Result<Vec<Document>> {
    let source: Arc<dyn Source + Send + Sync + '_> = Arc::new(Borrowed(source));
    apply(
        stage,
        Box::new(documents.into_iter().map(Ok)),
        &source,
        variables,
        limit,
        &Arc::new(pipeline.clone()),
    )
    .collect()
}

fn run_bucket(bucket: &Bucket, input: Stream<'_>, variables: &Variables) -> Result<Vec<Document>> {
    let count = bucket.boundaries.len() - 1;
    let mut states = Vec::new();
    let mut used = vec![false; count + 1];
    for document in input {
        let document = document?;
        let value = bucket
            .group_by
            .evaluate(&document, variables)?
            .unwrap_or(Bson::Null);
        let collation = &variables.collation;
        let position = (0..count).find(|&i| {
            canonical_type(&value) == canonical_type(&bucket.boundaries[i])
                && compare_collated(&value, &bucket.boundaries[i], collation).is_ge()
                && compare_collated(&value, &bucket.boundaries[i + 1], collation).is_lt()
        });
        let position = match position {
            Some(position) => position,
            None if bucket.default.is_some() => count,
            None => {
                return Err(pipeline_error(
                    40066,
                    format!(
                        "$switch could not find a matching branch for an input, and no default was specified: $bucket groupBy value {value} is outside the boundaries"
                    ),
                ));
            }
        };
        used[position] = true;
        bucket
            .output
            .fold_into(&mut states, position, &document, variables)?;
    }
    let mut out = Vec::new();
    for (position, state) in states.into_iter().enumerate() {
        if !used[position] {
            continue;
        }
        let id = if position == count {
            bucket.default.clone().unwrap_or(Bson::Null)
        } else {
            bucket.boundaries[position].clone()
        };
        let mut result = doc! { "_id": id };
        bucket.output.finish_into(state, &mut result);
        out.push(result);
    }
    Ok(out)
}

/// `$redact`: `$$DESCEND` keeps the level and recurses, `$$PRUNE` drops it, `$$KEEP` keeps it
/// whole. The expression sees the variables as strings, as MongoDB's system variables.
fn redact(
    expression: &crate::expr::Expression,
    document: Document,
    variables: &Variables,
) -> Result<Option<Document>> {
    match expression.evaluate(&document, variables)? {
        Some(Bson::String(action)) if action == "descend" => Ok(Some(document)),
        Some(Bson::String(action)) if action == "prune" => Ok(None),
        Some(Bson::String(action)) if action == "keep" => Ok(Some(document)),
        _ => Err(pipeline_error(
            17053,
            "$redact's expression should not return anything aside from the variables $$KEEP, $$DESCEND, and $$PRUNE",
        )),
    }
}

fn seed() -> u64 {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0x9E37_79B9, |elapsed| elapsed.as_nanos() as u64);
    nanos | 1
}

fn next_random(state: &mut u64) -> u64 {
    *state ^= *state << 13;
    *state ^= *state >> 7;
    *state ^= *state << 17;
    *state
}
