//! MongoDB's aggregation pipelines: stages parsed once into a [`Pipeline`], then run over a
//! stream of documents by [`run`].
//!
//! [`Pipeline::parse`] checks every stage with MongoDB's error codes (40324 for an unknown
//! stage, 40323 for a stage that is not a one-field object, 40601 for `$out` or `$merge`
//! before the end...). [`run`] streams: `$match`, `$project`, `$addFields`, `$unset`,
//! `$replaceRoot`, `$skip`, `$limit`, `$unwind`, `$lookup` and `$unionWith` pass documents on
//! one at a time; `$group`, `$bucket`, `$bucketAuto`, `$sortByCount`, `$count` hold one state
//! per group; `$sort` holds its input (or, followed by a `$limit`, only the top documents);
//! `$facet` and `$sample` hold their input. Other collections (`$lookup`, `$unionWith`) come
//! from a [`Source`] the caller provides; the writing stages `$out` and `$merge` are parsed
//! and validated here ([`Output`]) and executed by the caller, which owns the storage.
//!
//! This module must never touch storage: the caller feeds it documents and performs writes.

mod exec;
mod group;
mod output;
mod shape;

use std::sync::Arc;

use bson::{Bson, Document};

pub use exec::run;
pub use output::{MergeAction, MergeSpec, OutSpec, Output};

use crate::collation::Collation;
use crate::error::{DocError, Result};
use crate::expr::{Dependencies, Expression, Variables};
use crate::filter::Filter;
use crate::sort::SortSpec;
use crate::timeseries::BucketSpec;
use group::Group;
use shape::{AddFields, Project};

/// Where `$lookup`, `$unionWith` and `$graphLookup`-style stages read other collections.
pub trait Source {
    /// The documents of `collection` matching `filter` (a query filter), in natural order.
    fn documents(
        &self,
        collection: &str,
        filter: &Document,
    ) -> Result<Box<dyn Iterator<Item = Result<Document>> + '_>>;
}

/// Options of a pipeline.
#[derive(Debug, Clone, Default)]
pub struct PipelineOptions {
    /// `let`: variables every stage can read as `$$name` (constant expressions).
    pub let_vars: Option<Document>,
    /// How the stages compare strings, sub-pipelines included (MongoDB's `collation`
    /// option): `$match`, `$sort`, `$group` keys and accumulators, `$bucket` boundaries,
    /// `$bucketAuto`'s order and every expression.
    pub collation: Collation,
}

/// A parsed pipeline.
#[derive(Debug, Clone)]
pub struct Pipeline {
    stages: Vec<Stage>,
    output: Option<Output>,
    variables: Variables,
    /// The user variable names in scope, in slot order (the `let` names).
    names: Vec<String>,
}

/// One parsed stage (the writing stages are [`Output`]).
#[derive(Debug, Clone)]
pub(crate) enum Stage {
    Match(Filter),
    Project(Project),
    AddFields(AddFields),
    ReplaceRoot(Expression),
    Group(Group),
    Sort(SortSpec),
    Skip(u64),
    Limit(u64),
    Count(String),
    Unwind {
        path: String,
        index_field: Option<String>,
        preserve: bool,
    },
    Lookup(Box<Lookup>),
    UnionWith {
        collection: String,
        pipeline: Box<Pipeline>,
    },
    Facet(Vec<(String, Pipeline)>),
    Bucket(Box<Bucket>),
    BucketAuto {
        group_by: Expression,
        buckets: usize,
        output: Group,
    },
    SortByCount(Expression),
    Sample(usize),
    Documents(Expression),
    Redact(Expression),
    /// `$_internalUnpackBucket`: each time series bucket becomes its measurements.
    UnpackBucket(BucketSpec),
}

#[derive(Debug, Clone)]
pub(crate) struct Lookup {
    pub(crate) from: String,
    pub(crate) local_field: Option<String>,
    pub(crate) foreign_field: Option<String>,
    pub(crate) let_vars: Vec<(String, Expression)>,
    pub(crate) pipeline: Option<Pipeline>,
    pub(crate) as_field: String,
}

#[derive(Debug, Clone)]
pub(crate) struct Bucket {
    pub(crate) group_by: Expression,
    pub(crate) boundaries: Vec<Bson>,
    pub(crate) default: Option<Bson>,
    pub(crate) output: Group,
}

/// Every stage name MongoDB 8.0 knows, whether or not this engine runs it: a name outside
/// this list is unrecognized (40324), which MongoDB decides when it first reads a command, before
/// anything runs; a name in it that a place does not allow (an update pipeline's `$match`) is
/// refused where the stage would run.
pub const MONGODB_STAGE_NAMES: &[&str] = &[
    "$addFields",
    "$bucket",
    "$bucketAuto",
    "$changeStream",
    "$changeStreamSplitLargeEvent",
    "$collStats",
    "$count",
    "$currentOp",
    "$densify",
    "$documents",
    "$facet",
    "$fill",
    "$geoNear",
    "$graphLookup",
    "$group",
    "$indexStats",
    "$limit",
    "$listClusterCatalog",
    "$listLocalSessions",
    "$listSampledQueries",
    "$listSearchIndexes",
    "$listSessions",
    "$lookup",
    "$match",
    "$merge",
    "$out",
    "$planCacheStats",
    "$project",
    "$querySettings",
    "$queryStats",
    "$redact",
    "$replaceRoot",
    "$replaceWith",
    "$sample",
    "$search",
    "$searchMeta",
    "$set",
    "$setWindowFields",
    "$shardedDataDistribution",
    "$skip",
    "$sort",
    "$sortByCount",
    "$unionWith",
    "$unset",
    "$unwind",
    "$vectorSearch",
    "$_internalUnpackBucket",
];

/// A [`DocError::Pipeline`] with MongoDB's `code`.
pub(crate) fn pipeline_error(code: i32, message: impl Into<String>) -> DocError {
    DocError::Pipeline {
        code,
        message: message.into(),
    }
}

impl Pipeline {
    /// Parses `stages` with `options`.
    pub fn parse(stages: &[Document], options: &PipelineOptions) -> Result<Pipeline> {
        let mut names = Vec::new();
        let mut values = Vec::new();
        if let Some(let_vars) = &options.let_vars {
            for (name, value) in let_vars {
                let expression = Expression::parse_in(value, &names)?;
                let value = expression
                    .evaluate(
                        &Document::new(),
                        &Variables {
                            user: names.iter().cloned().zip(values.iter().cloned()).collect(),
                            ..Variables::default()
                        },
                    )?
                    .unwrap_or(Bson::Null);
                names.push(name.clone());
                values.push(value);
            }
        }
        let variables = Variables {
            user: names.iter().cloned().zip(values).collect(),
            collation: options.collation.clone(),
            ..Variables::default()
        };
        let mut pipeline = Pipeline::parse_in(stages, &names, true)?;
        pipeline.variables = variables;
        pipeline.collate(&options.collation)?;
        Ok(pipeline)
    }

    /// Makes every `$match`, `$sort` and accumulator `sortBy`, in sub-pipelines too, compare
    /// strings under `collation`, and checks what a collation decides at parse time: that
    /// `$bucket` boundaries ascend in its order, as MongoDB checks them. (Expressions, group
    /// keys and `$bucket`'s placement read it from [`Variables::collation`] when they run.)
    fn collate(&mut self, collation: &Collation) -> Result<()> {
        for stage in &mut self.stages {
            match stage {
                Stage::Match(filter) => {
                    *filter = std::mem::take(filter).collated(collation);
                }
                Stage::Sort(sort) => *sort = std::mem::take(sort).collated(collation),
                Stage::Group(group) => group.collate(collation),
                Stage::Bucket(bucket) => {
                    bucket.check_order(collation)?;
                    bucket.output.collate(collation);
                }
                Stage::BucketAuto { output, .. } => output.collate(collation),
                Stage::Lookup(lookup) => {
                    if let Some(pipeline) = &mut lookup.pipeline {
                        pipeline.collate(collation)?;
                    }
                }
                Stage::UnionWith { pipeline, .. } => pipeline.collate(collation)?,
                Stage::Facet(facets) => {
                    for (_, pipeline) in facets {
                        pipeline.collate(collation)?;
                    }
                }
                _ => {}
            }
        }
        Ok(())
    }

    /// Parses `stages` with the user variables `names` in scope; `top_level` allows `$out`
    /// and `$merge` at the end.
    fn parse_in(stages: &[Document], names: &[String], top_level: bool) -> Result<Pipeline> {
        let mut parsed = Vec::with_capacity(stages.len());
        let mut output = None;
        for (position, stage) in stages.iter().enumerate() {
            if stage.len() != 1 {
                return Err(pipeline_error(
                    40323,
                    format!(
                        "A pipeline stage specification object must contain exactly one field, found {}",
                        stage.len()
                    ),
                ));
            }
            let (name, argument) = stage.iter().next().expect("one field");
            let last = position + 1 == stages.len();
            match name.as_str() {
                "$out" | "$merge" => {
                    if !last {
                        return Err(pipeline_error(
                            if name == "$out" { 40601 } else { 40602 },
                            format!("{name} can only be the final stage in the pipeline"),
                        ));
                    }
                    if !top_level {
                        return Err(pipeline_error(
                            51047,
                            format!(
                                "{name} is not allowed within a $lookup, $facet or $unionWith pipeline"
                            ),
                        ));
                    }
                    output = Some(Output::parse(name, argument, names)?);
                }
                "$documents" if position != 0 => {
                    return Err(pipeline_error(
                        40602,
                        "$documents is only valid as the first stage in a pipeline",
                    ));
                }
                _ => parsed.push(Stage::parse(name, argument, names)?),
            }
        }
        Ok(Pipeline {
            stages: parsed,
            output,
            variables: Variables::default(),
            names: names.to_vec(),
        })
    }

    /// `$out` or `$merge`, if the pipeline ends with one.
    pub fn output(&self) -> Option<&Output> {
        self.output.as_ref()
    }

    /// The values of the pipeline's `let` variables (and `$$NOW`).
    pub fn variables(&self) -> &Variables {
        &self.variables
    }

    /// The fields of the input documents the pipeline reads, or `whole_document` when it
    /// passes whole documents on (or reads `$$ROOT`).
    pub fn dependencies(&self) -> Dependencies {
        let mut found = Dependencies::default();
        for stage in &self.stages {
            if stage.dependencies(&mut found) {
                return found;
            }
        }
        // Without a stage that replaces the document, the documents flow out whole.
        found.whole_document = true;
        found
    }

    /// The stages as they run, for `explain`.
    pub fn describe(&self) -> Vec<Document> {
        self.stages.iter().map(Stage::describe).collect()
    }

    /// Whether the pipeline has no stage (its output is its input).
    pub fn is_empty(&self) -> bool {
        self.stages.is_empty() && self.output.is_none()
    }

    pub(crate) fn stages(&self) -> &[Stage] {
        &self.stages
    }

    pub(crate) fn with_stages(&self, stages: Vec<Stage>) -> Pipeline {
        Pipeline {
            stages,
            output: None,
            variables: self.variables.clone(),
            names: self.names.clone(),
        }
    }
}

fn string_argument(stage: &str, field: &str, value: Option<&Bson>, code: i32) -> Result<String> {
    match value {
        Some(Bson::String(text)) => Ok(text.clone()),
        _ => Err(pipeline_error(
            code,
            format!("{stage} requires '{field}' to be a string"),
        )),
    }
}

/// A non-negative whole number argument.
fn count_argument(stage: &str, value: &Bson, code: i32) -> Result<u64> {
    crate::expr::num::Num::of(value)
        .and_then(crate::expr::num::Num::as_i64)
        .and_then(|n| u64::try_from(n).ok())
        .ok_or_else(|| pipeline_error(code, format!("invalid argument to {stage} stage: Expected a non-negative number in: {stage}: {value}")))
}

/// A field path argument such as `"$tags"`, without its `$`.
fn field_path_argument(stage: &str, value: &str, code: i32) -> Result<String> {
    match value.strip_prefix('$') {
        Some(path) if !path.is_empty() && !path.starts_with('$') => Ok(path.to_string()),
        _ => Err(pipeline_error(
            code,
            format!("{stage} path must be prefixed by '$', found '{value}'"),
        )),
    }
}

impl Stage {
    fn parse(name: &str, argument: &Bson, names: &[String]) -> Result<Stage> {
        Ok(match name {
            "$match" => parse_match(argument, names)?,
            "$project" => Stage::Project(Project::parse(argument, names)?),
            "$addFields" | "$set" => Stage::AddFields(AddFields::parse(name, argument, names)?),
            "$unset" => Stage::Project(Project::unset(argument)?),
            "$replaceRoot" => parse_replace_root(argument, names)?,
            "$replaceWith" => Stage::ReplaceRoot(Expression::parse_in(argument, names)?),
            "$group" => Stage::Group(Group::parse(argument, names)?),
            "$sort" => parse_sort(argument)?,
            "$skip" => Stage::Skip(count_argument("$skip", argument, 15956)?),
            "$limit" => parse_limit(argument)?,
            "$count" => parse_count(argument)?,
            "$unwind" => parse_unwind(argument)?,
            "$lookup" => Stage::Lookup(Box::new(parse_lookup(argument, names)?)),
            "$unionWith" => parse_union_with(argument, names)?,
            "$facet" => parse_facet(argument, names)?,
            "$bucket" => Stage::Bucket(Box::new(parse_bucket(argument, names)?)),
            "$bucketAuto" => parse_bucket_auto(argument, names)?,
            "$sortByCount" => Stage::SortByCount(Expression::parse_in(argument, names)?),
            "$sample" => parse_sample(argument)?,
            "$documents" => Stage::Documents(Expression::parse_in(argument, names)?),
            "$redact" => Stage::Redact(Expression::parse_in(argument, names)?),
            "$_internalUnpackBucket" => Stage::UnpackBucket(BucketSpec::parse_stage(argument)?),
            other => {
                return Err(pipeline_error(
                    40324,
                    format!("Unrecognized pipeline stage name: '{other}'"),
                ));
            }
        })
    }

    /// Adds what the stage reads to `found`; `true` when later stages no longer see the input
    /// documents' fields (the stage builds new documents from what it read).
    fn dependencies(&self, found: &mut Dependencies) -> bool {
        match self {
            Stage::Match(filter) => {
                filter.dependencies(found);
                false
            }
            Stage::Project(project) => {
                project.dependencies(found);
                !found.whole_document
            }
            Stage::AddFields(add) => {
                add.dependencies(found);
                false
            }
            Stage::ReplaceRoot(expression) | Stage::SortByCount(expression) => {
                expression.dependencies(found);
                true
            }
            Stage::Group(group) => {
                group.dependencies(found);
                true
            }
            Stage::Bucket(bucket) => {
                bucket.group_by.dependencies(found);
                bucket.output.dependencies(found);
                true
            }
            Stage::BucketAuto {
                group_by, output, ..
            } => {
                group_by.dependencies(found);
                output.dependencies(found);
                true
            }
            Stage::Count(_) => true,
            Stage::Sort(sort) => {
                found
                    .paths
                    .extend(sort.keys().iter().map(|key| key.path.as_str().to_string()));
                false
            }
            Stage::Unwind { path, .. } => {
                found.paths.push(path.clone());
                false
            }
            Stage::Lookup(lookup) => {
                if let Some(local) = &lookup.local_field {
                    found.paths.push(local.clone());
                }
                for (_, expression) in &lookup.let_vars {
                    expression.dependencies(found);
                }
                false
            }
            Stage::Facet(facets) => {
                for (_, pipeline) in facets {
                    let inner = pipeline.dependencies();
                    found.whole_document |= inner.whole_document;
                    found.paths.extend(inner.paths);
                }
                true
            }
            Stage::Documents(_) => true,
            Stage::Redact(_) | Stage::UnpackBucket(_) => {
                found.whole_document = true;
                true
            }
            Stage::Skip(_) | Stage::Limit(_) | Stage::UnionWith { .. } | Stage::Sample(_) => false,
        }
    }

    fn describe(&self) -> Document {
        let (name, detail): (&str, Bson) = match self {
            Stage::Match(_) => ("$match", Bson::Document(Document::new())),
            Stage::Project(_) => ("$project", Bson::Document(Document::new())),
            Stage::AddFields(_) => ("$addFields", Bson::Document(Document::new())),
            Stage::ReplaceRoot(_) => ("$replaceRoot", Bson::Document(Document::new())),
            Stage::Group(group) => (
                "$group",
                Bson::Document(
                    bson::doc! { "fields": group.fields.iter().map(|(f, _)| Bson::String(f.clone())).collect::<Vec<_>>() },
                ),
            ),
            Stage::Sort(_) => ("$sort", Bson::Document(Document::new())),
            Stage::Skip(n) => ("$skip", Bson::Int64(*n as i64)),
            Stage::Limit(n) => ("$limit", Bson::Int64(*n as i64)),
            Stage::Count(field) => ("$count", Bson::String(field.clone())),
            Stage::Unwind { path, .. } => ("$unwind", Bson::String(format!("${path}"))),
            Stage::Lookup(lookup) => (
                "$lookup",
                Bson::Document(bson::doc! { "from": &lookup.from, "as": &lookup.as_field }),
            ),
            Stage::UnionWith { collection, .. } => ("$unionWith", Bson::String(collection.clone())),
            Stage::Facet(facets) => (
                "$facet",
                Bson::Array(
                    facets
                        .iter()
                        .map(|(f, _)| Bson::String(f.clone()))
                        .collect(),
                ),
            ),
            Stage::Bucket(_) => ("$bucket", Bson::Document(Document::new())),
            Stage::BucketAuto { buckets, .. } => ("$bucketAuto", Bson::Int64(*buckets as i64)),
            Stage::SortByCount(_) => ("$sortByCount", Bson::Document(Document::new())),
            Stage::Sample(n) => ("$sample", Bson::Int64(*n as i64)),
            Stage::Documents(_) => ("$documents", Bson::Document(Document::new())),
            Stage::Redact(_) => ("$redact", Bson::Document(Document::new())),
            Stage::UnpackBucket(spec) => return spec.to_stage(),
        };
        let mut document = Document::new();
        document.insert(name, detail);
        document
    }
}

struct ErrorCode;

impl ErrorCode {
    const FAILED_TO_PARSE: i32 = 9;
}

fn documents_of(stages: &[Bson], stage: &str) -> Result<Vec<Document>> {
    stages
        .iter()
        .map(|item| match item {
            Bson::Document(document) => Ok(document.clone()),
            _ => Err(pipeline_error(
                40323,
                format!("each stage of a {stage} pipeline must be an object"),
            )),
        })
        .collect()
}

/// `$match`: a filter in an object, without `$near` (a stage cannot sort by distance).
fn parse_match(argument: &Bson, names: &[String]) -> Result<Stage> {
    match argument {
        Bson::Document(filter) => {
            let filter = Filter::parse_in(filter, names)?;
            if filter.near().is_some() {
                // A stage sees documents in the order they come; `$near` would
                // promise an order by distance that nothing gives it.
                return Err(pipeline_error(
                    5626500,
                    "$geoNear, $near, and $nearSphere are not allowed in this context, as these operators require sorting geospatial data; use $geoWithin if no sort is needed",
                ));
            }
            Ok(Stage::Match(filter))
        }
        _ => Err(pipeline_error(
            15959,
            "the match filter must be an expression in an object",
        )),
    }
}

/// `$replaceRoot`: an object with only `newRoot`, an expression.
fn parse_replace_root(argument: &Bson, names: &[String]) -> Result<Stage> {
    match argument {
        Bson::Document(spec) if spec.len() == 1 && spec.contains_key("newRoot") => Ok(
            Stage::ReplaceRoot(Expression::parse_in(&spec["newRoot"], names)?),
        ),
        _ => Err(pipeline_error(
            40231,
            "no newRoot specified for the $replaceRoot stage",
        )),
    }
}

/// `$sort`: a non-empty sort specification.
fn parse_sort(argument: &Bson) -> Result<Stage> {
    match argument {
        Bson::Document(spec) if !spec.is_empty() => {
            Ok(Stage::Sort(SortSpec::parse(spec).map_err(|error| {
                pipeline_error(15974, format!("$sort: {error}"))
            })?))
        }
        _ => Err(pipeline_error(
            15973,
            "the $sort key specification must be an object",
        )),
    }
}

/// `$limit`: a positive whole number.
fn parse_limit(argument: &Bson) -> Result<Stage> {
    let limit = count_argument("$limit", argument, 15958)?;
    if limit == 0 {
        return Err(pipeline_error(15958, "the limit must be positive"));
    }
    Ok(Stage::Limit(limit))
}

/// `$count`: the output field, a non-empty string that is neither `$`-prefixed nor dotted.
fn parse_count(argument: &Bson) -> Result<Stage> {
    let field = match argument {
        Bson::String(field) => field.clone(),
        _ => {
            return Err(pipeline_error(
                40156,
                "the count field must be a non-empty string",
            ));
        }
    };
    if field.is_empty() {
        return Err(pipeline_error(
            40157,
            "the count field must be a non-empty string",
        ));
    }
    if field.starts_with('$') {
        return Err(pipeline_error(
            40158,
            "the count field cannot be a $-prefixed path",
        ));
    }
    if field.contains('.') {
        return Err(pipeline_error(40160, "the count field cannot contain '.'"));
    }
    Ok(Stage::Count(field))
}

/// `$unionWith`: a collection name, or `{coll, pipeline}`.
fn parse_union_with(argument: &Bson, names: &[String]) -> Result<Stage> {
    let (collection, pipeline) = match argument {
        Bson::String(collection) => (collection.clone(), Vec::new()),
        Bson::Document(spec) => {
            let collection = string_argument("$unionWith", "coll", spec.get("coll"), 40415)?;
            let pipeline = match spec.get("pipeline") {
                None => Vec::new(),
                Some(Bson::Array(stages)) => documents_of(stages, "$unionWith")?,
                Some(_) => {
                    return Err(pipeline_error(
                        40415,
                        "$unionWith's 'pipeline' must be an array",
                    ));
                }
            };
            (collection, pipeline)
        }
        _ => {
            return Err(pipeline_error(
                ErrorCode::FAILED_TO_PARSE,
                "$unionWith requires a string or an object argument",
            ));
        }
    };
    Ok(Stage::UnionWith {
        collection,
        pipeline: Box::new(Pipeline::parse_in(&pipeline, names, false)?),
    })
}

/// `$facet`: a non-empty object of named sub-pipelines.
fn parse_facet(argument: &Bson, names: &[String]) -> Result<Stage> {
    let Bson::Document(spec) = argument else {
        return Err(pipeline_error(15947, "$facet requires an object"));
    };
    if spec.is_empty() {
        return Err(pipeline_error(
            40169,
            "the $facet specification must be a non-empty object",
        ));
    }
    let mut facets = Vec::new();
    for (field, stages) in spec {
        let Bson::Array(stages) = stages else {
            return Err(pipeline_error(
                40170,
                format!("arguments to $facet must be arrays, {field} is not"),
            ));
        };
        facets.push((
            field.clone(),
            Pipeline::parse_in(&documents_of(stages, "$facet")?, names, false)?,
        ));
    }
    Ok(Stage::Facet(facets))
}

/// `$bucketAuto`: `groupBy`, a positive number of `buckets` and an optional `output`.
fn parse_bucket_auto(argument: &Bson, names: &[String]) -> Result<Stage> {
    let Bson::Document(spec) = argument else {
        return Err(pipeline_error(
            40240,
            "the argument to $bucketAuto must be an object",
        ));
    };
    let group_by = Expression::parse_in(
        spec.get("groupBy").ok_or_else(|| {
            pipeline_error(
                40246,
                "$bucketAuto requires 'groupBy' and 'buckets' to be specified",
            )
        })?,
        names,
    )?;
    let buckets = match spec
        .get("buckets")
        .map(|b| count_argument("$bucketAuto", b, 40243))
    {
        Some(Ok(n)) if n > 0 => n as usize,
        _ => {
            return Err(pipeline_error(
                40243,
                "$bucketAuto 'buckets' field must be greater than 0",
            ));
        }
    };
    let output = parse_output(spec.get("output"), names, true)?;
    Ok(Stage::BucketAuto {
        group_by,
        buckets,
        output,
    })
}

/// `$sample`: an object with a whole number `size`.
fn parse_sample(argument: &Bson) -> Result<Stage> {
    match argument {
        Bson::Document(spec) if spec.contains_key("size") => {
            Ok(Stage::Sample(
                count_argument("$sample", &spec["size"], 28747)? as usize,
            ))
        }
        _ => Err(pipeline_error(28749, "$sample stage must specify a size")),
    }
}

fn parse_unwind(argument: &Bson) -> Result<Stage> {
    match argument {
        Bson::String(path) => Ok(Stage::Unwind {
            path: field_path_argument("$unwind", path, 28818)?,
            index_field: None,
            preserve: false,
        }),
        Bson::Document(spec) => {
            let mut path = None;
            let mut index_field = None;
            let mut preserve = false;
            for (key, value) in spec {
                match (key.as_str(), value) {
                    ("path", Bson::String(text)) => {
                        path = Some(field_path_argument("$unwind", text, 28818)?);
                    }
                    ("path", _) => {
                        return Err(pipeline_error(
                            28808,
                            "expected a string as the path for $unwind stage",
                        ));
                    }
                    ("includeArrayIndex", Bson::String(field))
                        if !field.is_empty() && !field.starts_with('$') =>
                    {
                        index_field = Some(field.clone());
                    }
                    ("includeArrayIndex", _) => {
                        return Err(pipeline_error(
                            28810,
                            "expected a non-empty string for the includeArrayIndex option to $unwind stage",
                        ));
                    }
                    ("preserveNullAndEmptyArrays", Bson::Boolean(b)) => preserve = *b,
                    ("preserveNullAndEmptyArrays", _) => {
                        return Err(pipeline_error(
                            28809,
                            "expected a boolean for the preserveNullAndEmptyArrays option to $unwind stage",
                        ));
                    }
                    (other, _) => {
                        return Err(pipeline_error(
                            28811,
                            format!("unrecognized option to $unwind stage: {other}"),
                        ));
                    }
                }
            }
            Ok(Stage::Unwind {
                path: path
                    .ok_or_else(|| pipeline_error(28812, "no path specified to $unwind stage"))?,
                index_field,
                preserve,
            })
        }
        _ => Err(pipeline_error(
            15981,
            "expected either a string or an object as specification for $unwind stage",
        )),
    }
}

fn parse_lookup(argument: &Bson, names: &[String]) -> Result<Lookup> {
    let Bson::Document(spec) = argument else {
        return Err(pipeline_error(
            ErrorCode::FAILED_TO_PARSE,
            "the $lookup stage specification must be an object",
        ));
    };
    let mut lookup = Lookup {
        from: String::new(),
        local_field: None,
        foreign_field: None,
        let_vars: Vec::new(),
        pipeline: None,
        as_field: String::new(),
    };
    let mut pipeline_stages = None;
    let mut let_spec = None;
    for (key, value) in spec {
        match key.as_str() {
            "from" => {
                lookup.from =
                    string_argument("$lookup", "from", Some(value), ErrorCode::FAILED_TO_PARSE)?;
            }
            "localField" => {
                lookup.local_field = Some(string_argument(
                    "$lookup",
                    "localField",
                    Some(value),
                    ErrorCode::FAILED_TO_PARSE,
                )?);
            }
            "foreignField" => {
                lookup.foreign_field = Some(string_argument(
                    "$lookup",
                    "foreignField",
                    Some(value),
                    ErrorCode::FAILED_TO_PARSE,
                )?);
            }
            "as" => {
                lookup.as_field =
                    string_argument("$lookup", "as", Some(value), ErrorCode::FAILED_TO_PARSE)?;
            }
            "let" => match value {
                Bson::Document(vars) => let_spec = Some(vars.clone()),
                _ => {
                    return Err(pipeline_error(
                        ErrorCode::FAILED_TO_PARSE,
                        "$lookup's 'let' must be an object",
                    ));
                }
            },
            "pipeline" => match value {
                Bson::Array(stages) => pipeline_stages = Some(documents_of(stages, "$lookup")?),
                _ => {
                    return Err(pipeline_error(
                        ErrorCode::FAILED_TO_PARSE,
                        "$lookup's 'pipeline' must be an array",
                    ));
                }
            },
            other => {
                return Err(pipeline_error(
                    ErrorCode::FAILED_TO_PARSE,
                    format!("unknown argument to $lookup: {other}"),
                ));
            }
        }
    }
    if lookup.from.is_empty() {
        return Err(pipeline_error(
            ErrorCode::FAILED_TO_PARSE,
            "missing 'from' option to $lookup stage specification",
        ));
    }
    if lookup.as_field.is_empty() {
        return Err(pipeline_error(
            ErrorCode::FAILED_TO_PARSE,
            "must specify 'as' field for a $lookup",
        ));
    }
    if lookup.local_field.is_some() != lookup.foreign_field.is_some() {
        return Err(pipeline_error(
            ErrorCode::FAILED_TO_PARSE,
            "$lookup requires both or neither of 'localField' and 'foreignField' to be specified",
        ));
    }
    if lookup.local_field.is_none() && pipeline_stages.is_none() {
        return Err(pipeline_error(
            ErrorCode::FAILED_TO_PARSE,
            "$lookup requires either 'pipeline' or both 'localField' and 'foreignField' to be specified",
        ));
    }
    let mut inner_names = names.to_vec();
    if let Some(vars) = let_spec {
        for (name, value) in &vars {
            lookup
                .let_vars
                .push((name.clone(), Expression::parse_in(value, names)?));
            inner_names.push(name.clone());
        }
    }
    if let Some(stages) = pipeline_stages {
        lookup.pipeline = Some(Pipeline::parse_in(&stages, &inner_names, false)?);
    }
    Ok(lookup)
}

fn parse_output(spec: Option<&Bson>, names: &[String], count_default: bool) -> Result<Group> {
    let mut group_spec = Document::new();
    group_spec.insert("_id", Bson::Null);
    match spec {
        None if count_default => {
            group_spec.insert("count", bson::doc! { "$sum": 1 });
        }
        None => {}
        Some(Bson::Document(fields)) => group_spec.extend(fields.clone()),
        Some(_) => {
            return Err(pipeline_error(
                40196,
                "the 'output' of a bucket stage must be an object",
            ));
        }
    }
    Group::parse(&Bson::Document(group_spec), names)
}

fn parse_bucket(argument: &Bson, names: &[String]) -> Result<Bucket> {
    let Bson::Document(spec) = argument else {
        return Err(pipeline_error(
            40201,
            "argument to $bucket stage must be an object",
        ));
    };
    for key in spec.keys() {
        if !["groupBy", "boundaries", "default", "output"].contains(&key.as_str()) {
            return Err(pipeline_error(
                40197,
                format!("unrecognized option to $bucket: {key}"),
            ));
        }
    }
    let group_by = Expression::parse_in(
        spec.get("groupBy").ok_or_else(|| {
            pipeline_error(
                40198,
                "$bucket requires 'groupBy' and 'boundaries' to be specified",
            )
        })?,
        names,
    )?;
    let boundaries = match spec.get("boundaries") {
        Some(Bson::Array(items)) if items.len() >= 2 => items.clone(),
        Some(Bson::Array(_)) => {
            return Err(pipeline_error(
                40192,
                "the $bucket 'boundaries' field must have at least 2 values",
            ));
        }
        _ => {
            return Err(pipeline_error(
                40200,
                "the $bucket 'boundaries' field must be an array",
            ));
        }
    };
    for pair in boundaries.windows(2) {
        if crate::compare::canonical_type(&pair[0]) != crate::compare::canonical_type(&pair[1]) {
            return Err(pipeline_error(
                40193,
                "all values in the 'boundaries' option to $bucket must have the same type",
            ));
        }
    }
    // The order of the boundaries and the default is the pipeline's collation's:
    // `Bucket::check_order`, once the collation is known.
    let default = spec.get("default").cloned();
    let output = parse_output(spec.get("output"), names, true)?;
    Ok(Bucket {
        group_by,
        boundaries,
        default,
        output,
    })
}

impl Bucket {
    /// Checks that the boundaries ascend, and that the default is outside them, with strings
    /// in `collation`'s order (MongoDB's 40194 and 40199).
    fn check_order(&self, collation: &Collation) -> Result<()> {
        let compare = |a: &Bson, b: &Bson| crate::compare::compare_collated(a, b, collation);
        if self
            .boundaries
            .windows(2)
            .any(|pair| compare(&pair[0], &pair[1]).is_ge())
        {
            return Err(pipeline_error(
                40194,
                "the 'boundaries' option to $bucket must be sorted in ascending order",
            ));
        }
        if let Some(default) = &self.default {
            let lowest = &self.boundaries[0];
            let highest = self.boundaries.last().expect("two boundaries");
            let inside = crate::compare::canonical_type(default)
                == crate::compare::canonical_type(lowest)
                && compare(default, lowest).is_ge()
                && compare(default, highest).is_lt();
            if inside {
                return Err(pipeline_error(
                    40199,
                    "the $bucket 'default' field must be less than the lowest boundary or greater than or equal to the highest boundary",
                ));
            }
        }
        Ok(())
    }
}

/// A shared pipeline, as [`run`] takes it.
pub type SharedPipeline = Arc<Pipeline>;
