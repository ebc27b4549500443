//! Read-only views (MongoDB's `create` with `viewOn` and `pipeline`): their definitions,
//! checked when a view is defined or redefined, and resolved when a view is read.
//!
//! A view is a catalog entry like a collection's, with a [`ViewDefinition`] and an empty
//! documents keyspace that nothing ever writes: writes, index changes and pattern policies on
//! it are refused with MongoDB's `CommandNotSupportedOnView` (166). A read of a view is a
//! pipeline on the collection at the end of its chain of views: the views' pipelines,
//! innermost first, then the read's own stages ([`resolve`]), under the view's collation
//! ([`read_collation`]; views that read each other share one, [`check_collation`]). Definitions are checked against
//! the catalog in the transaction that writes them, so the catalog never holds a cycle (through
//! `viewOn` or through a `$lookup`, `$graphLookup` or `$unionWith` that reads a view) or a
//! chain deeper than MongoDB's 20.
//!
//! This module must never read or write documents: it decides what a read of a view runs;
//! the aggregate module runs it.

use std::collections::HashMap;

use bson::{Bson, Document};
use spillway_doc::collation::Collation;
use spillway_doc::pipeline::{Pipeline, PipelineOptions};

use crate::catalog::view::ViewDefinition;
use crate::catalog::{Catalog, validate_collection_name};
use crate::error::{Error, ErrorKind, Result};

/// The longest chain of views MongoDB allows (`ViewGraph::kMaxViewDepth`).
pub(crate) const MAX_VIEW_DEPTH: usize = 20;

/// MongoDB's `GraphContainsCycle`.
const GRAPH_CONTAINS_CYCLE: i32 = 150;
/// MongoDB's `ViewDepthLimitExceeded`.
const VIEW_DEPTH_LIMIT_EXCEEDED: i32 = 149;
/// MongoDB's `OptionNotSupportedOnView`.
const OPTION_NOT_SUPPORTED_ON_VIEW: i32 = 167;
/// MongoDB's `InvalidNamespace`.
const INVALID_NAMESPACE: i32 = 73;

/// A refused view definition, with MongoDB's code.
fn invalid(view: &str, code: i32, message: String) -> Error {
    Error::new(ErrorKind::InvalidView {
        view: view.to_string(),
        message,
    })
    .with_code(code)
}

/// The error of a write, index change or policy on view `name`.
pub(crate) fn not_supported_on_view(name: &str) -> Error {
    Error::new(ErrorKind::NotSupportedOnView {
        collection: name.to_string(),
    })
}

/// Refuses an operation that changes documents or indexes when `name` is a view.
pub(crate) fn refuse_view(catalog: &Catalog, name: &str) -> Result<()> {
    match catalog.collections.get(name) {
        Some(meta) if meta.view.is_some() => Err(not_supported_on_view(name)),
        _ => Ok(()),
    }
}

/// Checks the definition of view `name` against `catalog` (which may hold `name`'s current
/// definition, replaced by this one): `viewOn` is a valid collection name, the pipeline parses
/// (MongoDB's code for a bad stage), writes nothing (`$out`, `$merge`: 167), and the views it
/// reads form no cycle (150) and no chain deeper than [`MAX_VIEW_DEPTH`] (149).
pub(crate) fn check(catalog: &Catalog, name: &str, definition: &ViewDefinition) -> Result<()> {
    if validate_collection_name(&definition.view_on).is_err() {
        return Err(invalid(
            name,
            INVALID_NAMESPACE,
            format!("invalid name for 'viewOn': {}", definition.view_on),
        ));
    }
    for (position, stage) in definition.pipeline.iter().enumerate() {
        if let Some(stage_name) = stage
            .keys()
            .find(|key| matches!(key.as_str(), "$out" | "$merge"))
        {
            return Err(invalid(
                name,
                OPTION_NOT_SUPPORTED_ON_VIEW,
                format!(
                    "The aggregation stage {stage_name} in location {position} of the pipeline cannot be used in the view definition of {name} because it writes to disk"
                ),
            ));
        }
    }
    Pipeline::parse(&definition.pipeline, &PipelineOptions::default())
        .map_err(Error::aggregation)?;
    let edges = |view: &str| -> Vec<String> {
        if view == name {
            return references(definition);
        }
        match catalog
            .collections
            .get(view)
            .and_then(|meta| meta.view.as_ref())
        {
            Some(other) => references(other),
            None => Vec::new(),
        }
    };
    let is_view = |candidate: &str| {
        candidate == name
            || catalog
                .collections
                .get(candidate)
                .is_some_and(|meta| meta.view.is_some())
    };
    let mut heights = HashMap::new();
    height(name, name, &edges, &is_view, &mut Vec::new(), &mut heights).map(drop)
}

/// Checks that the views `definition` reads (`viewOn` and its stages' collections) have the
/// collation `collation` of view `name`, as MongoDB requires of views that read each other
/// (167): a read of a view runs every pipeline of its chain under one collation.
pub(crate) fn check_collation(
    catalog: &Catalog,
    name: &str,
    definition: &ViewDefinition,
    collation: &Collation,
) -> Result<()> {
    for read in references(definition) {
        let Some(meta) = catalog
            .collections
            .get(&read)
            .filter(|meta| meta.view.is_some() && read != name)
        else {
            continue;
        };
        if meta.collation != *collation {
            return Err(invalid(
                name,
                OPTION_NOT_SUPPORTED_ON_VIEW,
                format!(
                    "View {name} has conflicting collation with view {read}: views that read each other must have the same collation ({} here, {} there)",
                    collation.to_document(),
                    meta.collation.to_document()
                ),
            ));
        }
    }
    Ok(())
}

/// The collation a read of `name` runs under when it gives `given`: on a view, the view's
/// (its `create`'s collation, simple if it gave none: a view never takes the default of the
/// collection it reads), and a different one given is refused, as MongoDB refuses it (167);
/// on anything else, `given`.
pub(crate) fn read_collation(
    catalog: &Catalog,
    name: &str,
    given: Option<&Collation>,
) -> Result<Option<Collation>> {
    let Some(meta) = catalog
        .collections
        .get(name)
        .filter(|meta| meta.view.is_some())
    else {
        return Ok(given.cloned());
    };
    match given {
        Some(given) if *given != meta.collation => Err(Error::invalid_options(
            name,
            format!(
                "Cannot override a view's default collation: view {name} reads under {}, the operation gave {}",
                meta.collation.to_document(),
                given.to_document()
            ),
        )
        .with_code(OPTION_NOT_SUPPORTED_ON_VIEW)),
        _ => Ok(Some(meta.collation.clone())),
    }
}

/// How many views the longest chain from `node` goes through (`node` included, 0 for a
/// collection), each node's height computed once; a node met again on the current path is a
/// cycle, a height over [`MAX_VIEW_DEPTH`] too deep.
fn height(
    view: &str,
    node: &str,
    edges: &dyn Fn(&str) -> Vec<String>,
    is_view: &dyn Fn(&str) -> bool,
    path: &mut Vec<String>,
    heights: &mut HashMap<String, usize>,
) -> Result<usize> {
    if !is_view(node) {
        return Ok(0);
    }
    if path.iter().any(|on_path| on_path == node) {
        let mut cycle = path.clone();
        cycle.push(node.to_string());
        return Err(invalid(
            view,
            GRAPH_CONTAINS_CYCLE,
            format!("View cycle detected: {}", cycle.join(" => ")),
        ));
    }
    if let Some(known) = heights.get(node) {
        return Ok(*known);
    }
    path.push(node.to_string());
    let mut deepest = 0;
    for next in edges(node) {
        deepest = deepest.max(height(view, &next, edges, is_view, path, heights)?);
    }
    path.pop();
    let node_height = deepest + 1;
    if node_height > MAX_VIEW_DEPTH {
        return Err(invalid(
            view,
            VIEW_DEPTH_LIMIT_EXCEEDED,
            format!(
                "View depth too deep or view cycle detected; maximum depth is {MAX_VIEW_DEPTH}"
            ),
        ));
    }
    heights.insert(node.to_string(), node_height);
    Ok(node_height)
}

/// The namespaces a view reads: `viewOn`, and those its stages read (`$lookup`,
/// `$graphLookup`, `$unionWith`, inside `$facet` and sub-pipelines too).
fn references(definition: &ViewDefinition) -> Vec<String> {
    let mut names = vec![definition.view_on.clone()];
    stage_references(&definition.pipeline, &mut names);
    names
}

fn stage_references(stages: &[Document], names: &mut Vec<String>) {
    let sub_pipeline = |spec: &Document, names: &mut Vec<String>| {
        if let Ok(stages) = spec.get_array("pipeline") {
            let stages: Vec<Document> = stages
                .iter()
                .filter_map(|stage| stage.as_document().cloned())
                .collect();
            stage_references(&stages, names);
        }
    };
    for stage in stages {
        for (stage_name, spec) in stage {
            match (stage_name.as_str(), spec) {
                ("$lookup" | "$graphLookup", Bson::Document(spec)) => {
                    if let Ok(from) = spec.get_str("from") {
                        names.push(from.to_string());
                    }
                    sub_pipeline(spec, names);
                }
                ("$unionWith", Bson::String(collection)) => names.push(collection.clone()),
                ("$unionWith", Bson::Document(spec)) => {
                    if let Ok(collection) = spec.get_str("coll") {
                        names.push(collection.to_string());
                    }
                    sub_pipeline(spec, names);
                }
                ("$facet", Bson::Document(facets)) => {
                    for (_, branch) in facets {
                        if let Bson::Array(branch) = branch {
                            let branch: Vec<Document> = branch
                                .iter()
                                .filter_map(|stage| stage.as_document().cloned())
                                .collect();
                            stage_references(&branch, names);
                        }
                    }
                }
                _ => {}
            }
        }
    }
}

/// What a read of `name` reads if it is a view: the collection at the end of its chain and
/// the stages to run first (the views' pipelines, innermost first). `None` for a collection.
pub(crate) fn resolve(catalog: &Catalog, name: &str) -> Option<(String, Vec<Document>)> {
    let meta = catalog.collections.get(name)?;
    if let Some(layout) = &meta.timeseries {
        // A time series reads as its buckets, unpacked.
        return Some((layout.buckets.clone(), vec![layout.spec.to_stage()]));
    }
    let view = meta.view.as_ref()?;
    let mut source = view.view_on.clone();
    let mut stages = view.pipeline.clone();
    // `check` keeps chains within the limit; the bound only guards the loop.
    for _ in 0..MAX_VIEW_DEPTH {
        let Some(inner) = catalog
            .collections
            .get(&source)
            .and_then(|meta| meta.view.as_ref())
        else {
            break;
        };
        stages.splice(0..0, inner.pipeline.iter().cloned());
        source.clone_from(&inner.view_on);
    }
    if let Some(layout) = catalog
        .collections
        .get(&source)
        .and_then(|meta| meta.timeseries.as_ref())
    {
        stages.insert(0, layout.spec.to_stage());
        source.clone_from(&layout.buckets);
    }
    Some((source, stages))
}
