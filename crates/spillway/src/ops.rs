//! Collection operations on decoded documents, over a [`Reader`] (queries) or a
//! [`WriteTxn`] (writes): the semantics of `spillway_doc::model::MemoryCollection`, with
//! indexes kept in step.
//!
//! Each write operation either completes or returns an error having buffered nothing it
//! would have to take back for the *document* that failed; the caller discards the whole
//! transaction on error (a single operation's transaction, or the user's, which is then
//! aborted), so `update_many` and `delete_many` are all or nothing, while `insert_many` can
//! go on past a refused document and commit the others, as MongoDB does. Natural order is
//! `_id` order:
//! single-document writes without a sort (`update_one`, `delete_one`, `find_one_and_*`)
//! pick the matching document with the smallest `_id`, whichever plan found it. This module
//! must never commit and never touch the store except through `WriteTxn`.

use bson::{Bson, DateTime, Document};
use spillway_doc::DocError;
use spillway_doc::collation::Collation;
use spillway_doc::filter::Filter;
use spillway_doc::path::FieldPath;
use spillway_doc::projection::Projection;
use spillway_doc::sort::SortSpec;
use spillway_doc::update::{ApplyContext, Update};
use spillway_doc::value_set::ValueSet;
use spillway_pattern::Statement;
use spillway_store::Store;

use crate::catalog::timeseries::not_supported_on_timeseries;
use crate::catalog::{IndexSettings, validate_collection_name};
use crate::error::{Error, ErrorKind, Result};
use crate::exec::{Match, stored_document};
use crate::near;
use crate::patterned::{self, LogicalValidation};
use crate::planner::HintedScan;
use crate::results::UpdateModifications;
use crate::route::Route;
use crate::storage::{
    self, DocumentChange, QueryRun, check_storable, decode, encode, id_order, insert_stored,
    query_stored, write_documents,
};
use crate::timeseries;
use crate::txn::{Reader, WriteTxn};
use crate::views;

/// `limit` as MongoDB reads it: 0 is none, a negative value its absolute value.
pub(crate) fn effective_limit(limit: i64) -> Option<usize> {
    match usize::try_from(limit.unsigned_abs()).unwrap_or(usize::MAX) {
        0 => None,
        limit => Some(limit),
    }
}

/// Runs a query to completion: matches in result order, skipped and limited. A filter that
/// touches a field managed by a pattern policy is answered on logical documents.
pub(crate) fn query(
    reader: &dyn Reader,
    collection: &str,
    filter: &Filter,
    sort: Option<&SortSpec>,
    skip: u64,
    limit: Option<usize>,
) -> Result<QueryRun> {
    let route = Route::of(reader.catalog(), collection);
    query_routed(reader, &route, collection, filter, sort, skip, limit)
}

/// [`query`] on the route of `collection`.
fn query_routed(
    reader: &dyn Reader,
    route: &Route<'_>,
    collection: &str,
    filter: &Filter,
    sort: Option<&SortSpec>,
    skip: u64,
    limit: Option<usize>,
) -> Result<QueryRun> {
    if let Some((path, near)) = filter.near() {
        near::check_near_index(reader.catalog(), collection, path, near)?;
        // Without a sort of its own, a `$near` query returns its matches nearest first; a
        // sort replaces that order, as in MongoDB.
        if sort.is_none() {
            let mut run = query_unordered(reader, route, collection, filter, None, 0, None)?;
            near::order_by_distance(&mut run.matches, path, near)?;
            let skip = usize::try_from(skip).unwrap_or(usize::MAX);
            run.matches = storage::skip_and_limit(run.matches, skip, limit);
            return Ok(run);
        }
    }
    query_unordered(reader, route, collection, filter, sort, skip, limit)
}

/// [`query`] without the order of a `$near`.
fn query_unordered(
    reader: &dyn Reader,
    route: &Route<'_>,
    collection: &str,
    filter: &Filter,
    sort: Option<&SortSpec>,
    skip: u64,
    limit: Option<usize>,
) -> Result<QueryRun> {
    if let (Some(sort), Some(engine)) = (sort, route.engine())
        && route.is_logical_sort(Some(sort))
    {
        // The order needs every match's logical array: sorted whole, then cut.
        let mut run = query_unordered(reader, route, collection, filter, None, 0, None)?;
        patterned::sort_logically(reader, engine, &mut run.matches, sort)?;
        let skip = usize::try_from(skip).unwrap_or(usize::MAX);
        run.matches = storage::skip_and_limit(run.matches, skip, limit);
        return Ok(run);
    }
    if let Some(engine) = route.engine()
        && route.is_logical_query(filter)
    {
        return patterned::query(reader, engine, collection, filter, sort, skip, limit);
    }
    query_stored(reader, collection, filter, sort, skip, limit)
}

/// [`query`] on the index `hint` names; a query answered on logical documents (pattern
/// policies: a filter or a sort on a managed field) plans on its own and ignores the hint,
/// but refuses `min`/`max` bounds (they bound one index scan, which such a query does not
/// have).
pub(crate) fn query_hinted(
    reader: &dyn Reader,
    collection: &str,
    filter: &Filter,
    sort: Option<&SortSpec>,
    skip: u64,
    limit: Option<usize>,
    hint: Option<HintedScan<'_>>,
) -> Result<QueryRun> {
    let route = Route::of(reader.catalog(), collection);
    let logical = route.is_logical_query(filter) || route.is_logical_sort(sort);
    if logical && hint.is_some_and(|hint| hint.has_bounds()) {
        return Err(min_max_on_logical(collection));
    }
    if hint.is_none() || filter.near().is_some() || logical {
        return query_routed(reader, &route, collection, filter, sort, skip, limit);
    }
    storage::query_stored_hinted(reader, collection, filter, sort, skip, limit, hint)
}

/// The refusal of `min`/`max` on a query answered on logical documents.
pub(crate) fn min_max_on_logical(collection: &str) -> Error {
    Error::invalid_options(
        collection,
        "min/max are not supported on a query that reads managed arrays (pattern policies)",
    )
    .with_code(115)
}

/// Applies an optional projection; a positional one uses the array element `filter` matched.
pub(crate) fn project(
    projection: Option<&Projection>,
    filter: &Filter,
    document: Document,
) -> Result<Document> {
    let Some(projection) = projection else {
        return Ok(document);
    };
    let details = if projection.needs_match_details() {
        filter
            .match_details_document(&document)
            .map_err(Error::argument)?
    } else {
        None
    };
    let score = if projection.needs_text_score() {
        filter
            .text_scorer()
            .map(|scorer| scorer.score_document(&document))
    } else {
        None
    };
    projection
        .apply_scored(&document, details, score)
        .map_err(Error::argument)
}

/// Inserts one document; returns its `_id` and the stored document.
pub(crate) fn insert(
    txn: &mut WriteTxn,
    store: &Store,
    collection: &str,
    document: Document,
) -> Result<(Bson, Document)> {
    let catalog = txn.catalog_arc();
    match Route::of(&catalog, collection) {
        Route::TimeSeries(layout) => timeseries::insert(txn, store, layout, document),
        Route::Main(engine) => patterned::insert(txn, store, &engine, document),
        Route::Side(policies) => {
            patterned::insert_side(txn, store, collection, &policies, document)
        }
        Route::View => Err(views::not_supported_on_view(collection)),
        Route::Plain => insert_stored(txn, store, collection, document),
    }
}

/// Whether an operation requires an operator update, a replacement, or either.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum UpdateKind {
    Operators,
    Replacement,
}

/// Parses an update given as operators, a replacement or a pipeline, comparing strings
/// under `collation` (the operation's, or the collection's default: [`Update::collated`]).
pub(crate) fn parse_modifications(
    update: &UpdateModifications,
    array_filters: &[Document],
    kind: UpdateKind,
    collation: &Collation,
) -> Result<Update> {
    let parsed = match update {
        UpdateModifications::Document(update) => parse_update(update, array_filters, kind),
        UpdateModifications::Pipeline(_) if !array_filters.is_empty() => {
            Err(Error::update(DocError::InvalidUpdate {
                message: "arrayFilters may not be specified for pipeline-style updates".into(),
            }))
        }
        UpdateModifications::Pipeline(stages) => {
            Update::parse_pipeline(stages).map_err(Error::update)
        }
    }?;
    Ok(parsed.collated(collation))
}

pub(crate) fn parse_update(
    update: &Document,
    array_filters: &[Document],
    kind: UpdateKind,
) -> Result<Update> {
    let parsed = Update::parse(update, array_filters).map_err(Error::update)?;
    let message = match (kind, parsed.is_replacement()) {
        (UpdateKind::Operators, true) if !update.is_empty() => {
            "an update needs update operators ($set, $push, ...); use replace for a whole document"
        }
        (UpdateKind::Operators, true) => "an update document cannot be empty",
        (UpdateKind::Replacement, false) => {
            "a replacement document cannot contain update operators"
        }
        _ => return Ok(parsed),
    };
    Err(Error::update(DocError::InvalidUpdate {
        message: message.to_string(),
    }))
}

/// The outcome of an update, with the driver's field names.
pub(crate) struct UpdateCounts {
    pub(crate) matched_count: u64,
    pub(crate) modified_count: u64,
    pub(crate) upserted_id: Option<Bson>,
}

/// `updateOne` / `updateMany` / `replaceOne`.
pub(crate) fn update(
    txn: &mut WriteTxn,
    store: &Store,
    collection: &str,
    filter: &Filter,
    update: &Update,
    multi: bool,
    upsert: bool,
) -> Result<UpdateCounts> {
    update_sorted(txn, store, collection, filter, update, multi, upsert, None)
}

/// [`update`]; a single-document update changes the first match in `sort` order (MongoDB
/// 8.0's `sort` of `updateOne`/`replaceOne`), else the smallest `_id`.
#[expect(
    clippy::too_many_arguments,
    reason = "update's arguments and the one sort only single-document updates take"
)]
pub(crate) fn update_sorted(
    txn: &mut WriteTxn,
    store: &Store,
    collection: &str,
    filter: &Filter,
    update: &Update,
    multi: bool,
    upsert: bool,
    sort: Option<&SortSpec>,
) -> Result<UpdateCounts> {
    let catalog = txn.catalog_arc();
    let route = Route::of(&catalog, collection);
    if let Route::TimeSeries(layout) = route {
        if sort.is_some() {
            return Err(not_supported_on_timeseries(
                collection,
                "an update with a sort",
            ));
        }
        let updated = timeseries::update(txn, store, layout, filter, update, multi, upsert)?;
        return Ok(UpdateCounts {
            matched_count: updated.matched,
            modified_count: updated.modified,
            upserted_id: updated.upserted_id,
        });
    }
    if update.is_replacement() && !txn.replacing {
        return txn.as_replacement(|txn| {
            update_sorted(txn, store, collection, filter, update, multi, upsert, sort)
        });
    }
    let now = DateTime::now();
    let by_id = id_order();
    let sort = sort.unwrap_or(&by_id);
    let matches = if multi {
        query(txn, collection, filter, None, 0, None)?.matches
    } else {
        query(txn, collection, filter, Some(sort), 0, Some(1))?.matches
    };
    if matches.is_empty() {
        let mut counts = UpdateCounts {
            matched_count: 0,
            modified_count: 0,
            upserted_id: None,
        };
        if upsert {
            let document = update
                .upsert(filter, &ApplyContext::new(now).upsert_insert())
                .map_err(Error::update)?;
            counts.upserted_id = Some(insert(txn, store, collection, document)?.0);
        }
        return Ok(counts);
    }
    if let Route::Main(engine) = &route {
        // Each main document is one logical write through the pattern engine; the statement
        // stages them together, so unique indexes see its final state here too.
        let mut statement = Statement::default();
        let mut modified_count = 0;
        let found: Vec<&Match> = matches.iter().collect();
        let validation = LogicalValidation::before(txn, collection, &found)?;
        let mut modified = Vec::new();
        for found in &matches {
            let updated = patterned::apply_update(
                txn,
                store,
                engine,
                filter,
                update,
                found,
                now,
                &mut statement,
            )?;
            if updated {
                modified_count += 1;
                modified.push(found.id_key.as_slice());
            }
        }
        patterned::finish(statement, txn, store)?;
        if let Some(validation) = validation {
            validation.check(txn, |id_key| modified.contains(&id_key))?;
        }
        return Ok(UpdateCounts {
            matched_count: matches.len() as u64,
            modified_count,
            upserted_id: None,
        });
    }
    // Every document is updated before anything is written, so that a failure leaves nothing
    // to take back and unique indexes see the statement's final state.
    let mut updated = Vec::new();
    for found in &matches {
        if let Some(change) = apply_update(filter, update, found, now)? {
            updated.push((found, change));
        }
    }
    let modified_count = updated.len() as u64;
    let changes = updated
        .iter()
        .map(|(found, (before, after, bytes))| DocumentChange {
            id_key: &found.id_key,
            old: Some(before),
            new: Some((after, bytes.clone())),
        })
        .collect();
    write_statement(txn, store, collection, &route, changes)?;
    Ok(UpdateCounts {
        matched_count: matches.len() as u64,
        modified_count,
        upserted_id: None,
    })
}

/// Writes the document changes of one statement: on a side collection with the pattern
/// layer's shape checks and main-document resyncs, elsewhere as they are.
fn write_statement(
    txn: &mut WriteTxn,
    store: &Store,
    collection: &str,
    route: &Route<'_>,
    changes: Vec<DocumentChange<'_>>,
) -> Result<()> {
    match route {
        Route::Side(policies) => {
            patterned::write_side_documents(txn, store, collection, policies, changes)
        }
        Route::View => Err(views::not_supported_on_view(collection)),
        Route::Plain | Route::Main(_) | Route::TimeSeries(_) => {
            write_documents(txn, collection, changes)
        }
    }
}

/// Applies `update` to one matched document; returns the document before and after, and the
/// encoded new document, if it changed.
fn apply_update(
    filter: &Filter,
    update: &Update,
    found: &Match,
    now: DateTime,
) -> Result<Option<(Document, Document, Vec<u8>)>> {
    let raw = stored_document(&found.bytes)?;
    let positional = filter
        .match_details(raw)
        .map_err(Error::filter)?
        .and_then(|details| details.array_index);
    let before = decode(&found.bytes)?;
    let mut after = before.clone();
    let outcome = update
        .apply(
            &mut after,
            &ApplyContext::new(now).with_positional_index(positional),
        )
        .map_err(Error::update)?;
    if !outcome.modified {
        return Ok(None);
    }
    check_storable(&after)?;
    let bytes = encode(&after)?;
    Ok(Some((before, after, bytes)))
}

/// `deleteOne` / `deleteMany`: the number deleted.
pub(crate) fn delete(
    txn: &mut WriteTxn,
    store: &Store,
    collection: &str,
    filter: &Filter,
    multi: bool,
) -> Result<u64> {
    let catalog = txn.catalog_arc();
    let route = Route::of(&catalog, collection);
    if let Route::TimeSeries(layout) = route {
        return timeseries::delete(txn, store, layout, filter, multi);
    }
    let sort = id_order();
    let matches = if multi {
        query(txn, collection, filter, None, 0, None)?.matches
    } else {
        query(txn, collection, filter, Some(&sort), 0, Some(1))?.matches
    };
    if let Route::Main(engine) = &route {
        let mut statement = Statement::default();
        for found in &matches {
            let before = decode(&found.bytes)?;
            patterned::delete(txn, store, engine, &before, &mut statement)?;
        }
        patterned::finish(statement, txn, store)?;
        return Ok(matches.len() as u64);
    }
    let mut removed = Vec::with_capacity(matches.len());
    for found in &matches {
        removed.push(decode(&found.bytes)?);
    }
    let changes = matches
        .iter()
        .zip(&removed)
        .map(|(found, before)| DocumentChange {
            id_key: &found.id_key,
            old: Some(before),
            new: None,
        })
        .collect();
    write_statement(txn, store, collection, &route, changes)?;
    Ok(matches.len() as u64)
}

/// Options of `find_one_and_*`.
pub(crate) struct FindAndModify<'a> {
    pub(crate) sort: Option<&'a SortSpec>,
    pub(crate) projection: Option<&'a Projection>,
    pub(crate) upsert: bool,
    pub(crate) return_after: bool,
}

/// `findOneAndUpdate` / `findOneAndReplace`.
pub(crate) fn find_one_and_modify(
    txn: &mut WriteTxn,
    store: &Store,
    collection: &str,
    filter: &Filter,
    update: &Update,
    options: &FindAndModify<'_>,
) -> Result<Option<Document>> {
    let catalog = txn.catalog_arc();
    let route = Route::of(&catalog, collection);
    if let Route::TimeSeries(_) = route {
        return Err(not_supported_on_timeseries(collection, "findAndModify"));
    }
    if update.is_replacement() && !txn.replacing {
        return txn.as_replacement(|txn| {
            find_one_and_modify(txn, store, collection, filter, update, options)
        });
    }
    let now = DateTime::now();
    let id_sort = id_order();
    let sort = options.sort.unwrap_or(&id_sort);
    let found = query(txn, collection, filter, Some(sort), 0, Some(1))?
        .matches
        .pop();
    let Some(found) = found else {
        if !options.upsert {
            return Ok(None);
        }
        let document = update
            .upsert(filter, &ApplyContext::new(now).upsert_insert())
            .map_err(Error::update)?;
        let (_, inserted) = insert(txn, store, collection, document)?;
        if !options.return_after {
            return Ok(None);
        }
        return project(options.projection, filter, inserted).map(Some);
    };
    if let Route::Main(engine) = &route {
        // The logical document is returned, before or after: read before the update changes
        // the side documents, or after it.
        let before = if options.return_after {
            None
        } else {
            Some(returned_document(
                &*txn,
                collection,
                &found,
                options.projection,
                filter,
            )?)
        };
        let mut statement = Statement::default();
        let validation = LogicalValidation::before(txn, collection, &[&found])?;
        let changed = patterned::apply_update(
            txn,
            store,
            engine,
            filter,
            update,
            &found,
            now,
            &mut statement,
        )?;
        patterned::finish(statement, txn, store)?;
        if let Some(validation) = validation {
            validation.check(txn, |_| changed)?;
        }
        if let Some(before) = before {
            return Ok(Some(before));
        }
        let after = if changed {
            match storage::stored_bytes(&*txn, collection, &found.id_key)? {
                Some(bytes) => Match {
                    id_key: found.id_key.clone(),
                    bytes,
                },
                None => found,
            }
        } else {
            found
        };
        return returned_document(&*txn, collection, &after, options.projection, filter).map(Some);
    }
    let returned = match apply_update(filter, update, &found, now)? {
        Some((before, after, bytes)) => {
            let change = DocumentChange {
                id_key: &found.id_key,
                old: Some(&before),
                new: Some((&after, bytes)),
            };
            write_statement(txn, store, collection, &route, vec![change])?;
            if options.return_after { after } else { before }
        }
        None => decode(&found.bytes)?,
    };
    project(options.projection, filter, returned).map(Some)
}

/// What `findAndModify` returns for the stored main document `found` of `collection`: its
/// logical document, read only as far as `projection` needs ([`patterned::logical_output`]).
fn returned_document(
    reader: &dyn Reader,
    collection: &str,
    found: &Match,
    projection: Option<&Projection>,
    filter: &Filter,
) -> Result<Document> {
    let output = patterned::logical_output(
        &Route::of(reader.catalog(), collection),
        projection.cloned().map(std::sync::Arc::new),
    );
    let mut returned = [found.clone()];
    patterned::logical_matches(reader, collection, &output, &mut returned)?;
    project(
        output.projection.as_deref(),
        filter,
        decode(&returned[0].bytes)?,
    )
}

/// `findOneAndDelete`.
pub(crate) fn find_one_and_delete(
    txn: &mut WriteTxn,
    store: &Store,
    collection: &str,
    filter: &Filter,
    sort: Option<&SortSpec>,
    projection: Option<&Projection>,
) -> Result<Option<Document>> {
    let catalog = txn.catalog_arc();
    let route = Route::of(&catalog, collection);
    if let Route::TimeSeries(_) = route {
        return Err(not_supported_on_timeseries(collection, "findAndModify"));
    }
    let id_sort = id_order();
    let sort = sort.unwrap_or(&id_sort);
    let Some(found) = query(txn, collection, filter, Some(sort), 0, Some(1))?
        .matches
        .pop()
    else {
        return Ok(None);
    };
    let before = decode(&found.bytes)?;
    if let Route::Main(engine) = &route {
        // The logical document, read before its side documents go.
        let returned = returned_document(&*txn, collection, &found, projection, filter)?;
        let mut statement = Statement::default();
        patterned::delete(txn, store, engine, &before, &mut statement)?;
        patterned::finish(statement, txn, store)?;
        return Ok(Some(returned));
    }
    let change = DocumentChange {
        id_key: &found.id_key,
        old: Some(&before),
        new: None,
    };
    write_statement(txn, store, collection, &route, vec![change])?;
    project(projection, filter, before).map(Some)
}

/// `countDocuments` with skip and limit (0: none).
pub(crate) fn count(
    reader: &dyn Reader,
    collection: &str,
    filter: &Filter,
    skip: u64,
    limit: u64,
) -> Result<u64> {
    let limit = usize::try_from(limit).unwrap_or(usize::MAX);
    let limit = if limit == 0 { None } else { Some(limit) };
    Ok(query(reader, collection, filter, None, skip, limit)?
        .matches
        .len() as u64)
}

/// `distinct`: values of `field` in matching documents, arrays unwound one level, in order of
/// first appearance; of the logical documents, or of the stored ones as they are when
/// `stored`.
pub(crate) fn distinct(
    reader: &dyn Reader,
    collection: &str,
    field: &str,
    filter: &Filter,
    stored: bool,
) -> Result<Vec<Bson>> {
    let path = FieldPath::parse(field).map_err(Error::argument)?;
    let mut values = ValueSet::new(filter.collation());
    let logical = !stored && Route::of(reader.catalog(), collection).is_managed_path(path.as_str());
    let query = if stored { query_stored } else { query };
    for found in query(reader, collection, filter, None, 0, None)?.matches {
        let mut document = decode(&found.bytes)?;
        if logical {
            document = patterned::expand(reader, collection, &document)?;
        }
        values.add_distinct_values(&document, &path);
    }
    Ok(values.into_vec())
}

/// Creates an index ([`storage::create_index`]); on a main collection with policies, the
/// side collections get the mirrored index too.
pub(crate) fn create_index(
    txn: &mut WriteTxn,
    store: &Store,
    collection: &str,
    keys: &Document,
    unique: bool,
    name: Option<&str>,
    settings: IndexSettings,
) -> Result<String> {
    let catalog = txn.catalog_arc();
    if let Route::TimeSeries(layout) = Route::of(&catalog, collection) {
        return timeseries::create_index(
            txn, store, collection, layout, keys, unique, name, &settings,
        );
    }
    let name = storage::create_index(txn, store, collection, keys, unique, name, settings)?;
    patterned::mirror_index(txn, store, collection, keys)?;
    Ok(name)
}

/// Drops a collection and its indexes; `false` if it did not exist. A side collection
/// cannot be dropped while its policy exists; a main collection's policies go with it.
pub(crate) fn drop_collection(txn: &mut WriteTxn, store: &Store, collection: &str) -> Result<bool> {
    validate_collection_name(collection)?;
    let catalog = txn.catalog_arc();
    if let Route::TimeSeries(layout) = Route::of(&catalog, collection) {
        let buckets = layout.buckets.clone();
        storage::drop_collection(txn, &buckets)?;
    }
    patterned::before_drop(txn, store, collection)?;
    storage::drop_collection(txn, collection)
}

/// Renames collection `from` to `to` in `txn`, as MongoDB's `renameCollection` does: the
/// collection keeps its documents, indexes, options and id ([`storage::rename_collection`]:
/// only the catalog changes). An existing `to` is dropped first with `drop_target` (as
/// [`drop_collection`] drops it: its policies and the side collections they created go
/// too), else refused. The policies of `from` move to `to` with their migration progress,
/// each side collection keeping its name unless `sides` gives it another (`(old, new)`
/// pairs: the command layer moves side collections to the target's database); see
/// [`spillway_pattern::writes::before_rename`]. A side collection cannot be renamed, nor a
/// collection take its name, while its policy exists, as it cannot be dropped. One `rename`
/// change event stands for all of it.
pub(crate) fn rename_collection(
    txn: &mut WriteTxn,
    store: &Store,
    from: &str,
    to: &str,
    drop_target: bool,
    sides: &[(String, String)],
) -> Result<()> {
    validate_collection_name(from)?;
    validate_collection_name(to)?;
    let catalog = txn.catalog_arc();
    match Route::of(&catalog, from) {
        Route::View => {
            return Err(Error::new(ErrorKind::NotSupportedOnView {
                collection: from.to_string(),
            }));
        }
        Route::TimeSeries(_) => return Err(not_supported_on_timeseries(from, "renameCollection")),
        Route::Plain | Route::Main(_) | Route::Side(_) => {}
    }
    if !catalog.collections.contains_key(from) {
        return Err(Error::new(ErrorKind::CollectionNotFound {
            collection: from.to_string(),
        }));
    }
    for (side, _) in sides {
        let owned = catalog.policies.iter().any(|policy| {
            policy.pattern.collection() == from && policy.pattern.side_collection() == side
        });
        if !owned {
            return Err(Error::invalid_options(
                from,
                format!("'{side}' is not the side collection of a policy of '{from}'"),
            ));
        }
    }
    spillway_pattern::writes::check_rename(&catalog.policies, from, to)?;
    if let Some(target) = catalog.collections.get(to) {
        if from == to || !drop_target || target.view.is_some() {
            return Err(Error::new(ErrorKind::CollectionExists {
                collection: to.to_string(),
            }));
        }
        drop_collection(txn, store, to)?;
    }
    storage::rename_collection(txn, from, to)?;
    let moves = patterned::before_rename(txn, store, from, to, |side| {
        sides
            .iter()
            .find(|(old, _)| old == side)
            .map_or_else(|| side.to_string(), |(_, new)| new.clone())
    })?;
    for (old, new) in &moves {
        storage::rename_collection(txn, old, new)?;
    }
    let moved: Vec<Bson> = moves
        .into_iter()
        .map(|(old, _)| Bson::String(old))
        .collect();
    txn.note_change(bson::doc! { "op": "rename", "ns": from, "to": to, "sides": moved });
    Ok(())
}
