//! The pattern layer wired into the facade: the [`spillway_pattern`] backend traits over a
//! reader or a write transaction, the write paths of collections with policies and of their
//! side collections, logical queries, and the `Database` methods that declare, remove,
//! migrate and verify policies.
//!
//! Every engine batch goes through `ops::write_documents` per collection, so indexes stay in
//! step, unique indexes are checked against the state the whole batch leaves, and nothing
//! recurses into the pattern layer; a statement over many main documents collects the
//! engine's batches in a [`Statement`] and stages them together. Every logical write happens
//! inside one `WriteTxn`, so it commits as one store batch. A direct write to a side
//! collection is checked against the layout, written whole, then each main document it
//! touched is resynced once. Declaring a policy must never change the user's data: a flag
//! that collides with data, or a side collection whose documents are not in the layout, is
//! refused before anything is written, and removing a policy drops only a side collection it
//! created. Migrations (applying a policy to a non-empty collection,
//! removing one) run in batches of [`MIGRATION_BATCH`] documents, each its own commit, under
//! the write lock; the progress is in the catalog record, so a crash resumes where it
//! stopped (at the next open, or with [`Database::resume_patterns`]).

use std::ops::Bound;

use bson::{Bson, DateTime, Document, RawDocument};
use spillway_doc::filter::{Clause, Filter};
use spillway_doc::key;
use spillway_doc::size::check_nesting;
use spillway_doc::sort::SortSpec;
use spillway_doc::update::{ApplyContext, Update};
use spillway_pattern::{
    Engine, Pattern, PatternError, Policy, Progress, Query, ReadBackend, Violation, Write,
    WriteBackend, check_adoptable, check_side_write, policies_on_side, prepare_side_insert, resync,
};
use spillway_store::Store;

use crate::catalog::{Catalog, ID_INDEX_NAME};
use crate::database::Database;
use crate::error::{Error, ErrorKind, Result};
use crate::exec::{Execution, Match, Matcher, stored_document};
use crate::ops::{self, QueryRun};
use crate::planner;
use crate::txn::{KeyRange, Reader, WriteTxn};

/// Main documents migrated per commit when a policy is applied or removed.
pub(crate) const MIGRATION_BATCH: usize = 256;

/// The pattern engine's reads over any reader (a snapshot or a transaction).
pub(crate) struct ReaderBackend<'r> {
    pub(crate) reader: &'r dyn Reader,
}

/// The pattern engine's reads and writes over a write transaction.
pub(crate) struct TxnBackend<'t> {
    txn: &'t mut WriteTxn,
    store: &'t Store,
}

fn backend_get(reader: &dyn Reader, collection: &str, id: &Bson) -> Result<Option<Document>> {
    ops::stored_by_key(reader, collection, &key::to_key(id))
}

fn backend_find(reader: &dyn Reader, collection: &str, query: &Query) -> Result<Vec<Document>> {
    let filter = Filter::parse(&query.filter).map_err(Error::filter)?;
    let sort = query
        .sort
        .as_ref()
        .map(SortSpec::parse)
        .transpose()
        .map_err(Error::argument)?;
    let limit = query
        .limit
        .map(|limit| usize::try_from(limit).unwrap_or(usize::MAX));
    let run = ops::query_stored(
        reader,
        collection,
        &filter,
        sort.as_ref(),
        query.skip,
        limit,
    )?;
    run.matches
        .iter()
        .map(|found| ops::decode(&found.bytes))
        .collect()
}

fn backend_count(reader: &dyn Reader, collection: &str, filter: &Document) -> Result<u64> {
    let filter = Filter::parse(filter).map_err(Error::filter)?;
    Ok(
        ops::query_stored(reader, collection, &filter, None, 0, None)?
            .matches
            .len() as u64,
    )
}

impl ReadBackend for ReaderBackend<'_> {
    type Error = Error;

    fn get(&self, collection: &str, id: &Bson) -> Result<Option<Document>> {
        backend_get(self.reader, collection, id)
    }

    fn find(&self, collection: &str, query: &Query) -> Result<Vec<Document>> {
        backend_find(self.reader, collection, query)
    }

    fn count(&self, collection: &str, filter: &Document) -> Result<u64> {
        backend_count(self.reader, collection, filter)
    }
}

impl ReadBackend for TxnBackend<'_> {
    type Error = Error;

    fn get(&self, collection: &str, id: &Bson) -> Result<Option<Document>> {
        backend_get(&*self.txn, collection, id)
    }

    fn find(&self, collection: &str, query: &Query) -> Result<Vec<Document>> {
        backend_find(&*self.txn, collection, query)
    }

    fn count(&self, collection: &str, filter: &Document) -> Result<u64> {
        backend_count(&*self.txn, collection, filter)
    }
}

impl WriteBackend for TxnBackend<'_> {
    fn apply(&mut self, batch: Vec<Write>) -> Result<()> {
        // Atomic because the whole transaction is discarded when any operation fails.
        apply_writes(self.txn, self.store, batch)
    }

    fn ensure_index(&mut self, collection: &str, keys: &Document) -> Result<()> {
        ops::create_index(self.txn, self.store, collection, keys, false, None).map(drop)
    }
}

/// The engine's writes of one statement over several main documents (an `update_many`, a
/// `delete_many`, the resyncs after a statement on a side collection), collected while each
/// document is computed and staged together by [`Statement::finish`]: unique indexes are
/// then checked against the state the whole statement leaves, as on every other path
/// (`ops::write_documents`), and the statement's outcome does not depend on its order.
#[derive(Default)]
pub(crate) struct Statement {
    writes: Vec<Write>,
}

impl Statement {
    /// Stages every collected write in the transaction.
    pub(crate) fn finish(self, txn: &mut WriteTxn, store: &Store) -> Result<()> {
        apply_writes(txn, store, self.writes)
    }
}

/// The engine's backend while a statement is computed: reads see the transaction as it was
/// before the statement, writes go to the [`Statement`]. That is enough because each engine
/// call ends in its one `apply` (it never reads what it wrote itself) and the main documents
/// of one statement have disjoint side documents (a side document links to one main document).
struct StatementBackend<'t> {
    txn: &'t mut WriteTxn,
    store: &'t Store,
    writes: &'t mut Vec<Write>,
}

impl ReadBackend for StatementBackend<'_> {
    type Error = Error;

    fn get(&self, collection: &str, id: &Bson) -> Result<Option<Document>> {
        backend_get(&*self.txn, collection, id)
    }

    fn find(&self, collection: &str, query: &Query) -> Result<Vec<Document>> {
        backend_find(&*self.txn, collection, query)
    }

    fn count(&self, collection: &str, filter: &Document) -> Result<u64> {
        backend_count(&*self.txn, collection, filter)
    }
}

impl WriteBackend for StatementBackend<'_> {
    fn apply(&mut self, batch: Vec<Write>) -> Result<()> {
        self.writes.extend(batch);
        Ok(())
    }

    fn ensure_index(&mut self, collection: &str, keys: &Document) -> Result<()> {
        ops::create_index(self.txn, self.store, collection, keys, false, None).map(drop)
    }
}

/// One document touched by a batch of engine writes: as stored before the batch, and after.
struct Touched {
    collection: String,
    id_key: Vec<u8>,
    before: Option<Document>,
    after: Option<Document>,
}

/// Stages a batch of engine writes in the transaction: the inserts, replacements and deletes
/// of each collection go through `ops::write_documents` together, so unique indexes are
/// checked against the state the whole batch leaves. Nothing is buffered for a collection
/// whose writes are refused; the caller discards the transaction on any error.
fn apply_writes(txn: &mut WriteTxn, store: &Store, batch: Vec<Write>) -> Result<()> {
    let mut touched: Vec<Touched> = Vec::new();
    let mut positions: std::collections::HashMap<(String, Vec<u8>), usize> =
        std::collections::HashMap::new();
    for write in batch {
        let (collection, id, after, inserting) = match write {
            Write::Insert {
                collection,
                document,
            } => {
                let document = ops::prepare_insert(document)?;
                ops::ensure_collection(txn, store, &collection)?;
                let id = document.get("_id").cloned().expect("prepared");
                (collection, id, Some(document), true)
            }
            Write::Replace {
                collection,
                document,
            } => {
                ops::check_storable(&document)?;
                let id = document.get("_id").cloned().unwrap_or(Bson::Null);
                (collection, id, Some(document), false)
            }
            Write::Delete { collection, id } => (collection, id, None, false),
        };
        let id_key = key::to_key(&id);
        let slot = (collection, id_key);
        let position = if let Some(position) = positions.get(&slot) {
            *position
        } else {
            let before = ops::stored_by_key(&*txn, &slot.0, &slot.1)?;
            touched.push(Touched {
                collection: slot.0.clone(),
                id_key: slot.1.clone(),
                after: before.clone(),
                before,
            });
            positions.insert(slot, touched.len() - 1);
            touched.len() - 1
        };
        let document = &mut touched[position];
        let exists = document.after.is_some();
        if inserting && exists {
            return Err(Error::new(ErrorKind::DuplicateKey {
                collection: document.collection.clone(),
                index: ID_INDEX_NAME.to_string(),
                key: id,
            }));
        }
        if !inserting && after.is_some() && !exists {
            return Err(Error::corruption(format!(
                "collection '{}' has no document with _id {id} to replace",
                document.collection
            )));
        }
        document.after = after;
    }
    let mut collections: Vec<&str> = Vec::new();
    for document in &touched {
        if !collections.contains(&document.collection.as_str()) {
            collections.push(&document.collection);
        }
    }
    for collection in collections {
        let mut changes = Vec::new();
        for document in touched.iter().filter(|document| {
            document.collection == collection
                && (document.before.is_some() || document.after.is_some())
        }) {
            let new = match &document.after {
                Some(after) => Some((after, ops::encode(after)?)),
                None => None,
            };
            changes.push(ops::DocumentChange {
                id_key: &document.id_key,
                old: document.before.as_ref(),
                new,
            });
        }
        ops::write_documents(txn, collection, changes)?;
    }
    Ok(())
}

/// Refuses writes to a collection whose policy (as main or side collection) is still being
/// applied or removed.
fn check_settled(catalog: &Catalog, collection: &str) -> Result<()> {
    for policy in &catalog.policies {
        let involved = policy.pattern.collection() == collection
            || policy.pattern.side_collection() == collection;
        if involved && policy.progress != Progress::Active {
            return Err(Error::new(ErrorKind::Pattern(PatternError::Refused {
                collection: policy.pattern.collection().to_string(),
                field: policy.pattern.field().to_string(),
                message: "the policy is still being applied or removed; Database::resume_patterns finishes it".to_string(),
            })));
        }
    }
    Ok(())
}

/// Whether `path` reaches into a field a policy of `collection` manages.
pub(crate) fn is_managed_path(catalog: &Catalog, collection: &str, path: &str) -> bool {
    catalog.has_policies(collection)
        && Engine::new(collection, &catalog.policies).is_managed_path(path)
}

/// Whether `path` reaches into a field a policy of `collection` owns besides its array (the
/// outlier's flag): stored documents have it, logical documents do not.
pub(crate) fn is_reserved_path(catalog: &Catalog, collection: &str, path: &str) -> bool {
    let head = path.split('.').next().unwrap_or(path);
    catalog.policies.iter().any(|policy| {
        policy.pattern.collection() == collection
            && policy.pattern.reserved_main_fields().contains(&head)
    })
}

/// The top-level fields the policies of `collection` manage.
pub(crate) fn managed_fields(catalog: &Catalog, collection: &str) -> Vec<String> {
    catalog
        .policies
        .iter()
        .filter(|policy| policy.pattern.collection() == collection)
        .map(|policy| policy.pattern.field().to_string())
        .collect()
}

/// Removes from a stored document of `collection` the fields its policies own besides their
/// arrays (the outlier's flag), which logical documents do not have.
pub(crate) fn remove_reserved_fields(catalog: &Catalog, collection: &str, document: &mut Document) {
    for policy in &catalog.policies {
        if policy.pattern.collection() == collection {
            for reserved in policy.pattern.reserved_main_fields() {
                document.remove(reserved);
            }
        }
    }
}

fn touches(filter: &Filter, managed: &dyn Fn(&str) -> bool) -> bool {
    filter.clauses.iter().any(|clause| match clause {
        Clause::Field { path, .. } => managed(path.as_str()),
        Clause::And(filters) | Clause::Or(filters) | Clause::Nor(filters) => {
            filters.iter().any(|inner| touches(inner, managed))
        }
        Clause::Expr(expression) => {
            let mut found = spillway_doc::expr::Dependencies::default();
            expression.dependencies(&mut found);
            found.whole_document || found.paths.iter().any(|path| managed(path))
        }
    })
}

/// Whether `filter` must be answered on logical documents: it touches a managed field.
pub(crate) fn is_logical_query(catalog: &Catalog, collection: &str, filter: &Filter) -> bool {
    if !catalog.has_policies(collection) {
        return false;
    }
    let engine = Engine::new(collection, &catalog.policies);
    touches(filter, &|path| engine.is_managed_path(path))
}

/// The clauses of `filter` an index may answer: those that do not touch a managed field
/// (an index on a managed field covers the main part of the array only).
fn planning_filter(filter: &Filter, engine: &Engine<'_>) -> Filter {
    Filter {
        clauses: filter
            .clauses
            .iter()
            .filter(|clause| {
                let single = Filter {
                    clauses: vec![(*clause).clone()],
                };
                !touches(&single, &|path| engine.is_managed_path(path))
            })
            .cloned()
            .collect(),
    }
}

/// Evaluates a filter on the logical document of every main document whose stored form may
/// differ from it, and on the stored document otherwise.
struct LogicalMatcher<'a> {
    reader: &'a dyn Reader,
    engine: Engine<'a>,
    filter: &'a Filter,
}

impl Matcher for LogicalMatcher<'_> {
    fn matches(&self, document: &RawDocument) -> Result<bool> {
        let stored = ops::decode(document.as_bytes())?;
        if !self.engine.may_differ(&stored) {
            return Matcher::matches(self.filter, document);
        }
        let view = self.engine.query_view(
            &ReaderBackend {
                reader: self.reader,
            },
            &stored,
        )?;
        self.filter.matches_document(&view).map_err(Error::filter)
    }
}

/// A query whose filter touches managed fields: planned on its other clauses, matched on
/// logical documents.
pub(crate) fn query(
    reader: &dyn Reader,
    collection: &str,
    filter: &Filter,
    sort: Option<&SortSpec>,
    skip: u64,
    limit: Option<usize>,
) -> Result<QueryRun> {
    let catalog = reader.catalog();
    let engine = Engine::new(collection, &catalog.policies);
    let planning = planning_filter(filter, &engine);
    let plan = planner::plan(catalog.collections.get(collection), &planning, sort);
    let mut execution = Execution::new(plan.access.clone(), plan.docs);
    let matcher = LogicalMatcher {
        reader,
        engine,
        filter,
    };
    if let Some(run) = index_union(reader, collection, filter, &matcher, sort, skip, limit)? {
        return Ok(run);
    }
    let mut matches = execution.collect(reader, &matcher)?;
    if let Some(sort) = &plan.sort {
        ops::sort_matches(&mut matches, sort)?;
    }
    let skip = usize::try_from(skip).unwrap_or(usize::MAX);
    Ok(QueryRun {
        matches: ops::skip_and_limit(matches, skip, limit),
        keys_examined: execution.keys_examined,
        docs_examined: execution.docs_examined,
        plan,
        described: None,
    })
}

/// Where a managed path's values live in side documents: `customers_purchased` →
/// `customers_purchased_extra` (outlier buckets), `reviews.review_author` → `review_author`
/// (subset archive). `None` for a path the side collection cannot index element-wise (a
/// subset's whole elements).
fn side_path(pattern: &Pattern, path: &str) -> Option<String> {
    let rest = path
        .strip_prefix(pattern.field())
        .filter(|rest| rest.is_empty() || rest.starts_with('.'))?;
    match pattern.shape() {
        spillway_pattern::Shape::Outlier { overflow_field, .. } => {
            Some(format!("{overflow_field}{rest}"))
        }
        spillway_pattern::Shape::Subset { .. } => rest.strip_prefix('.').map(str::to_string),
    }
}

/// Whether `collection` has an index whose first field is `path`.
fn leads_an_index(catalog: &Catalog, collection: &str, path: &str) -> bool {
    catalog.collections.get(collection).is_some_and(|meta| {
        meta.indexes.iter().any(|index| {
            index
                .fields
                .first()
                .is_some_and(|(field, _)| field.as_str() == path)
        })
    })
}

/// Answers a filter with an equality or `$in` on a managed path from two index scans when
/// both sides have an index on it: the main documents whose main array matches, and the main
/// documents linked from side documents that match. Their union holds every logical match
/// (each element is in the main array or in a side document); each candidate is then checked
/// on its logical document. `None` when the filter or the indexes do not allow it.
fn index_union(
    reader: &dyn Reader,
    collection: &str,
    filter: &Filter,
    matcher: &LogicalMatcher<'_>,
    sort: Option<&SortSpec>,
    skip: u64,
    limit: Option<usize>,
) -> Result<Option<QueryRun>> {
    use spillway_doc::filter::Predicate;
    let catalog = reader.catalog();
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
        let policy = catalog.policies.iter().find(|policy| {
            policy.pattern.collection() == collection
                && Engine::new(collection, std::slice::from_ref(*policy))
                    .is_managed_path(path.as_str())
        })?;
        let side = side_path(&policy.pattern, path.as_str())?;
        let both_indexed = leads_an_index(catalog, collection, path.as_str())
            && leads_an_index(catalog, policy.pattern.side_collection(), &side);
        both_indexed.then_some((path, predicate, policy, side))
    });
    let Some((path, predicate, policy, side)) = found else {
        return Ok(None);
    };
    let main_filter = Filter {
        clauses: vec![Clause::Field {
            path: path.clone(),
            predicate: predicate.clone(),
        }],
    };
    let side_filter = Filter {
        clauses: vec![Clause::Field {
            path: spillway_doc::path::FieldPath::parse(&side).map_err(Error::argument)?,
            predicate: predicate.clone(),
        }],
    };
    let main_run = ops::query_stored(reader, collection, &main_filter, None, 0, None)?;
    let side_run = ops::query_stored(
        reader,
        policy.pattern.side_collection(),
        &side_filter,
        None,
        0,
        None,
    )?;
    let mut candidates: Vec<Vec<u8>> = main_run
        .matches
        .iter()
        .map(|found| found.id_key.clone())
        .collect();
    for found in &side_run.matches {
        let side_document = ops::decode(&found.bytes)?;
        if let Some(link) = side_document.get(policy.pattern.link_field()) {
            candidates.push(key::to_key(link));
        }
    }
    candidates.sort();
    candidates.dedup();
    let docs = catalog.collections.get(collection).map(|meta| meta.docs);
    let mut matches = Vec::new();
    let mut docs_examined = main_run.docs_examined + side_run.docs_examined;
    if let Some(docs) = docs {
        for id_key in candidates {
            let Some(bytes) = reader.get(docs, &id_key)? else {
                continue;
            };
            docs_examined += 1;
            if matcher.matches(stored_document(&bytes)?)? {
                matches.push(Match {
                    id_key,
                    bytes: bytes.into_owned(),
                });
            }
        }
    }
    if let Some(sort) = sort {
        ops::sort_matches(&mut matches, sort)?;
    }
    let skip = usize::try_from(skip).unwrap_or(usize::MAX);
    let matches = ops::skip_and_limit(matches, skip, limit);
    let described = bson::doc! {
        "stage": "PATTERN_UNION",
        "policy": format!("{} {}.{}", policy.pattern.kind(), collection, policy.pattern.field()),
        "inputStages": [
            main_run.plan.describe(),
            { "collection": policy.pattern.side_collection(), "plan": side_run.plan.describe() },
        ],
    };
    Ok(Some(QueryRun {
        matches,
        keys_examined: main_run.keys_examined + side_run.keys_examined,
        docs_examined,
        plan: main_run.plan,
        described: Some(described),
    }))
}

/// After an index is created on a main collection: a policy's side collection gets the
/// mirrored index (`customers_purchased` → `customers_purchased_extra`, `reviews.author` →
/// `author`), so that logical equality queries can use both.
pub(crate) fn mirror_index(
    txn: &mut WriteTxn,
    store: &Store,
    collection: &str,
    keys: &Document,
) -> Result<()> {
    let catalog = txn.catalog_arc();
    let Some((first, direction)) = keys.iter().next() else {
        return Ok(());
    };
    for policy in catalog
        .policies
        .iter()
        .filter(|policy| policy.pattern.collection() == collection)
    {
        if let Some(side) = side_path(&policy.pattern, first)
            && !leads_an_index(&catalog, policy.pattern.side_collection(), &side)
        {
            let mut mirrored = Document::new();
            mirrored.insert(side, direction.clone());
            ops::create_index(
                txn,
                store,
                policy.pattern.side_collection(),
                &mirrored,
                false,
                None,
            )?;
        }
    }
    Ok(())
}

/// The logical document of a stored document of `collection`.
pub(crate) fn expand(reader: &dyn Reader, collection: &str, stored: &Document) -> Result<Document> {
    let catalog = reader.catalog();
    Engine::new(collection, &catalog.policies).expand(&ReaderBackend { reader }, stored)
}

fn policy_on<'c>(catalog: &'c Catalog, collection: &str, field: &str) -> Option<&'c Policy> {
    catalog
        .policies
        .iter()
        .find(|policy| policy.pattern.collection() == collection && policy.pattern.field() == field)
}

/// The logical length of array `field` of a stored document.
pub(crate) fn array_len(
    reader: &dyn Reader,
    collection: &str,
    field: &str,
    stored: &Document,
) -> Result<u64> {
    match policy_on(reader.catalog(), collection, field) {
        Some(policy) => spillway_pattern::logical_len(policy, &ReaderBackend { reader }, stored),
        None => Ok(match stored.get(field) {
            Some(Bson::Array(items)) => items.len() as u64,
            _ => 0,
        }),
    }
}

/// A page of the logical array `field` of a stored document.
pub(crate) fn array_page(
    reader: &dyn Reader,
    collection: &str,
    field: &str,
    stored: &Document,
    skip: usize,
    limit: usize,
) -> Result<Vec<Bson>> {
    match policy_on(reader.catalog(), collection, field) {
        Some(policy) => {
            spillway_pattern::page(policy, &ReaderBackend { reader }, stored, skip, limit)
        }
        None => Ok(match stored.get(field) {
            Some(Bson::Array(items)) => items.iter().skip(skip).take(limit).cloned().collect(),
            _ => Vec::new(),
        }),
    }
}

/// Replaces each match's bytes by its logical document (for expanded reads).
pub(crate) fn expand_matches(
    reader: &dyn Reader,
    collection: &str,
    matches: &mut [Match],
) -> Result<()> {
    if !reader.catalog().has_policies(collection) {
        return Ok(());
    }
    for found in matches {
        let stored = ops::decode(&found.bytes)?;
        let logical = expand(reader, collection, &stored)?;
        found.bytes = ops::encode(&logical)?;
    }
    Ok(())
}

/// Inserts a logical document into a collection with policies.
pub(crate) fn insert(
    txn: &mut WriteTxn,
    store: &Store,
    collection: &str,
    document: Document,
) -> Result<(Bson, Document)> {
    let catalog = txn.catalog_arc();
    check_settled(&catalog, collection)?;
    let document = ops::assign_id(document)?;
    check_nesting(&document).map_err(Error::document)?;
    let id = document
        .get("_id")
        .cloned()
        .expect("assign_id gives an _id");
    if ops::stored_by_key(txn, collection, &key::to_key(&id))?.is_some() {
        return Err(Error::new(ErrorKind::DuplicateKey {
            collection: collection.to_string(),
            index: ID_INDEX_NAME.to_string(),
            key: id,
        }));
    }
    let engine = Engine::new(collection, &catalog.policies);
    let stored = engine.insert(&mut TxnBackend { txn, store }, document)?;
    Ok((id, stored))
}

/// Inserts a document directly into a side collection, refused unless it has the layout's
/// shape, then brings its main document in step.
pub(crate) fn insert_side(
    txn: &mut WriteTxn,
    store: &Store,
    collection: &str,
    document: Document,
) -> Result<(Bson, Document)> {
    let catalog = txn.catalog_arc();
    check_settled(&catalog, collection)?;
    let policies = policies_on_side(&catalog.policies, collection);
    let mut document = ops::assign_id(document)?;
    for policy in &policies {
        prepare_side_insert(policy, &ReaderBackend { reader: &*txn }, &mut document)?;
        check_side_write(policy, &ReaderBackend { reader: &*txn }, &document)?;
    }
    let (id, stored) = ops::insert_stored(txn, store, collection, document)?;
    let links = linked_mains(&policies, [&stored]);
    resync_mains(txn, store, links).map(|()| (id, stored))
}

/// Writes the document changes of one statement on side collection `collection` (updates,
/// replacements, deletes): every new version is checked against the layout of the policy,
/// then all are written together (`ops::write_documents`: unique indexes see the statement's
/// final state), then every main document a changed side document belonged to, before or
/// after, is brought back in step once, from the side documents the whole statement left.
/// Resyncing after each side document instead would re-split buckets that later changes of
/// the same statement still address by their old content.
pub(crate) fn write_side_documents(
    txn: &mut WriteTxn,
    store: &Store,
    collection: &str,
    changes: Vec<ops::DocumentChange<'_>>,
) -> Result<()> {
    let catalog = txn.catalog_arc();
    check_settled(&catalog, collection)?;
    let policies = policies_on_side(&catalog.policies, collection);
    for change in &changes {
        if let Some((after, _)) = &change.new {
            for policy in &policies {
                check_side_write(policy, &ReaderBackend { reader: &*txn }, after)?;
            }
        }
    }
    let links = linked_mains(
        &policies,
        changes
            .iter()
            .flat_map(|change| [change.old, change.new.as_ref().map(|(new, _)| *new)])
            .flatten(),
    );
    ops::write_documents(txn, collection, changes)?;
    resync_mains(txn, store, links)
}

/// The main documents (`_id`s, each once, with their policy) that `documents` of a side
/// collection link to.
fn linked_mains<'p, 'd>(
    policies: &[&'p Policy],
    documents: impl IntoIterator<Item = &'d Document>,
) -> Vec<(&'p Policy, Bson)> {
    let mut seen = std::collections::HashSet::new();
    let mut links = Vec::new();
    for document in documents {
        for (position, policy) in policies.iter().enumerate() {
            if let Some(link) = document.get(policy.pattern.link_field())
                && seen.insert((position, key::to_key(link)))
            {
                links.push((*policy, link.clone()));
            }
        }
    }
    links
}

/// Brings each of `links` back in step with its side documents, as one statement.
fn resync_mains(txn: &mut WriteTxn, store: &Store, links: Vec<(&Policy, Bson)>) -> Result<()> {
    let mut statement = Statement::default();
    for (policy, link) in links {
        let mut backend = StatementBackend {
            txn,
            store,
            writes: &mut statement.writes,
        };
        resync(policy, &mut backend, &link)?;
    }
    statement.finish(txn, store)
}

/// Applies an update to one main document of a collection with policies: plain appends by
/// the fast path, everything else by expand, apply, split.
///
/// The writes go to `statement`, staged when the whole statement is computed.
#[expect(
    clippy::too_many_arguments,
    reason = "one update of one matched document, with its statement"
)]
pub(crate) fn apply_update(
    txn: &mut WriteTxn,
    store: &Store,
    collection: &str,
    filter: &Filter,
    update: &Update,
    found: &Match,
    now: DateTime,
    statement: &mut Statement,
) -> Result<Option<Document>> {
    let catalog = txn.catalog_arc();
    check_settled(&catalog, collection)?;
    let engine = Engine::new(collection, &catalog.policies);
    engine.check_update(&update.operations())?;
    let stored = ops::decode(&found.bytes)?;
    let context = ApplyContext::new(now);
    let appends = match update.split_appends(&engine.managed_fields()) {
        Some(appends) => {
            with_absent_values(&engine, &ReaderBackend { reader: &*txn }, &stored, appends)?
        }
        None => None,
    };
    if let Some(appends) = appends {
        let mut main = stored.clone();
        let rest = appends
            .rest
            .apply(&mut main, &context)
            .map_err(Error::update)?;
        let pushes = appends.values.iter().any(|(_, values)| !values.is_empty());
        // `$push: { f: { $each: [] } }` changes nothing only when `f` is an array: on a
        // missing field it creates `[]`, on anything else it fails. Those go to the general
        // path below, which has MongoDB's semantics.
        let targets_are_arrays = appends
            .values
            .iter()
            .all(|(field, _)| matches!(main.get(field.as_str()), Some(Bson::Array(_))));
        if !pushes && !rest.modified && targets_are_arrays {
            return Ok(None);
        }
        let mut backend = StatementBackend {
            txn,
            store,
            writes: &mut statement.writes,
        };
        if let Some(after) = engine.append(&mut backend, main, &appends.values)? {
            return Ok(Some(after));
        }
    }
    let backend = ReaderBackend { reader: &*txn };
    let view = engine.query_view(&backend, &stored)?;
    let positional = filter
        .match_details_document(&view)
        .map_err(Error::filter)?
        .and_then(|details| details.array_index);
    let mut logical = engine.expand(&backend, &stored)?;
    let outcome = update
        .apply(&mut logical, &context.with_positional_index(positional))
        .map_err(Error::update)?;
    if !outcome.modified {
        return Ok(None);
    }
    engine.check_document(&logical)?;
    check_nesting(&logical).map_err(Error::document)?;
    let mut backend = StatementBackend {
        txn,
        store,
        writes: &mut statement.writes,
    };
    let after = engine.rewrite(&mut backend, &stored, logical)?;
    Ok(Some(after))
}

/// Turns the `$addToSet`s of an append-only update into plain appends of the values the
/// logical arrays do not hold yet, each membership answered by the engine without expanding
/// the array; `None` (take the general path) when the engine cannot answer one, or when a
/// target array is missing (`$addToSet` then creates it, which the general path does).
fn with_absent_values(
    engine: &Engine<'_>,
    backend: &ReaderBackend<'_>,
    stored: &Document,
    mut appends: spillway_doc::update::Appends,
) -> Result<Option<spillway_doc::update::Appends>> {
    for (field, candidates) in std::mem::take(&mut appends.add_to_set) {
        if !matches!(stored.get(field.as_str()), Some(Bson::Array(_))) {
            return Ok(None);
        }
        let mut absent: Vec<Bson> = Vec::new();
        for value in candidates {
            if absent
                .iter()
                .any(|known| spillway_doc::compare::values_equal(known, &value))
            {
                continue;
            }
            match engine.contains(backend, stored, &field, &value)? {
                Some(true) => {}
                Some(false) => absent.push(value),
                None => return Ok(None),
            }
        }
        appends.values.push((field, absent));
    }
    Ok(Some(appends))
}

/// Deletes a main document of a collection with policies, with its side documents; the
/// writes go to `statement`.
pub(crate) fn delete(
    txn: &mut WriteTxn,
    store: &Store,
    collection: &str,
    stored: &Document,
    statement: &mut Statement,
) -> Result<()> {
    let catalog = txn.catalog_arc();
    check_settled(&catalog, collection)?;
    let mut backend = StatementBackend {
        txn,
        store,
        writes: &mut statement.writes,
    };
    Engine::new(collection, &catalog.policies).delete(&mut backend, stored)
}

/// Before dropping `collection`: a side collection cannot be dropped while its policy
/// exists; dropping a main collection removes its policies and drops their side collections.
pub(crate) fn before_drop(txn: &mut WriteTxn, collection: &str) -> Result<()> {
    let catalog = txn.catalog_arc();
    if let Some(policy) = catalog
        .policies
        .iter()
        .find(|policy| policy.pattern.side_collection() == collection)
    {
        return Err(Error::new(ErrorKind::Pattern(PatternError::Refused {
            collection: policy.pattern.collection().to_string(),
            field: policy.pattern.field().to_string(),
            message: format!(
                "'{collection}' is the policy's side collection and cannot be dropped while the policy exists"
            ),
        })));
    }
    if !catalog.has_policies(collection) {
        return Ok(());
    }
    txn.policies_mut()
        .retain(|policy| policy.pattern.collection() != collection);
    for policy in catalog
        .policies
        .iter()
        .filter(|policy| policy.pattern.collection() == collection)
    {
        let side = policy.pattern.side_collection();
        if policy.created_side {
            ops::drop_collection(txn, side)?;
            continue;
        }
        // An adopted side collection stays: only the side documents the policy owns (every
        // document linked to a main document, all of which are being dropped) go.
        let owned = Filter::parse(&bson::doc! { policy.pattern.link_field(): { "$exists": true } })
            .map_err(Error::filter)?;
        let run = ops::query_stored(&*txn, side, &owned, None, 0, None)?;
        let documents = run
            .matches
            .iter()
            .map(|found| ops::decode(&found.bytes))
            .collect::<Result<Vec<_>>>()?;
        let changes = run
            .matches
            .iter()
            .zip(&documents)
            .map(|(found, document)| ops::DocumentChange {
                id_key: &found.id_key,
                old: Some(document),
                new: None,
            })
            .collect();
        ops::write_documents(txn, side, changes)?;
    }
    Ok(())
}

/// The stored main documents of `collection` after `through` in `_id` order, at most
/// `limit`.
fn documents_after(
    reader: &dyn Reader,
    collection: &str,
    through: Option<&Bson>,
    limit: usize,
) -> Result<Vec<Document>> {
    let Some(meta) = reader.catalog().collections.get(collection) else {
        return Ok(Vec::new());
    };
    let range = KeyRange {
        low: through.map_or(Bound::Unbounded, |id| Bound::Excluded(key::to_key(id))),
        high: Bound::Unbounded,
    };
    let mut documents = Vec::new();
    for entry in reader.scan(meta.docs, &range, false)? {
        let (_, bytes) = entry?;
        stored_document(&bytes)?;
        documents.push(ops::decode(&bytes)?);
        if documents.len() >= limit {
            break;
        }
    }
    Ok(documents)
}

fn same_policy(a: &Pattern, b: &Pattern) -> bool {
    a.collection() == b.collection() && a.field() == b.field()
}

/// One migration step of `policy`: the next batch of main documents, and the progress.
fn migration_step(txn: &mut WriteTxn, store: &Store, policy: &Policy) -> Result<()> {
    let (through, removing) = match &policy.progress {
        Progress::Active => return Ok(()),
        Progress::Applying { through } => (through.clone(), false),
        Progress::Removing { through } => (through.clone(), true),
    };
    let collection = policy.pattern.collection();
    let documents = documents_after(&*txn, collection, through.as_ref(), MIGRATION_BATCH)?;
    let only = [Policy::active(policy.pattern.clone())];
    let engine = Engine::new(collection, &only);
    for document in &documents {
        let mut backend = TxnBackend { txn, store };
        if removing {
            engine.fold(&mut backend, document)?;
        } else {
            engine.migrate(&mut backend, document)?;
        }
    }
    let finished = documents.len() < MIGRATION_BATCH;
    let last = documents
        .last()
        .and_then(|document| document.get("_id").cloned());
    let policies = txn.policies_mut();
    let position = policies
        .iter()
        .position(|known| same_policy(&known.pattern, &policy.pattern))
        .expect("the policy being migrated is in the catalog");
    match (finished, removing) {
        (true, false) => policies[position].progress = Progress::Active,
        (true, true) => {
            policies.remove(position);
            // Only a side collection the policy created goes, and only once nothing is left
            // in it: an adopted collection, or documents the policy does not own, stay.
            let side = policy.pattern.side_collection();
            if policy.created_side
                && documents_after(&*txn, side, None, 1)?.is_empty()
                && !txn.catalog().has_policies(side)
                && !txn.catalog().is_side_collection(side)
            {
                ops::drop_collection(txn, side)?;
            }
        }
        (false, false) => policies[position].progress = Progress::Applying { through: last },
        (false, true) => policies[position].progress = Progress::Removing { through: last },
    }
    Ok(())
}

impl Database {
    /// Declares a pattern policy: from now on the engine keeps `collection.field` in the
    /// policy's layout through every write, and migrates the documents already stored (in
    /// batches, each its own commit; a crash resumes at the next open). Creates the side
    /// collection and the index it needs.
    ///
    /// ```
    /// use spillway::{Database, Pattern, doc};
    ///
    /// let db = Database::open_in_memory()?;
    /// db.create_collection("sales")?;
    /// db.set_pattern(Pattern::outlier("sales", "customers_purchased")
    ///     .threshold(50)
    ///     .link_field("book_id"))?;
    /// # Ok::<(), spillway::Error>(())
    /// ```
    ///
    /// Declaring a policy never changes the user's data. A side collection that already
    /// holds documents is adopted only when every one of them is in the layout's shape (a
    /// layout made by hand, as the seeds describe: `has_extras` and an `extra_sales` document
    /// per book, or a `reviews` collection beside embedded reviews): its elements join the
    /// logical arrays and are rewritten into the policy's layout. Everything is checked
    /// before anything is written.
    ///
    /// # Errors
    /// [`ErrorKind::Pattern`] when the policy is invalid on its own (a threshold of 0...),
    /// names a collection that does not exist, a field already managed or written by another
    /// policy, or a side collection that belongs to another policy; when a stored document
    /// cannot take the layout (a subset element that is not a document) or holds the flag
    /// field with a value the policy would not write; when the side collection exists with a
    /// document not in the layout's shape. The message names the field and one `_id`.
    pub fn set_pattern(&self, pattern: impl Into<Pattern>) -> Result<()> {
        let pattern: Pattern = pattern.into();
        pattern.validate()?;
        let guard = self.inner.lock_writer()?;
        let mut txn = WriteTxn::new(self.inner.published());
        check_new_policy(&txn, &pattern)?;
        let collection = pattern.collection();
        let side = pattern.side_collection();
        let only = [Policy::active(pattern.clone())];
        let engine = Engine::new(collection, &only);
        // Everything is checked before anything is committed: a refused policy leaves the
        // database as it was. An existing side collection is adopted only when each of its
        // documents already has the layout's shape (a layout made by hand, as the seeds
        // describe); then no main document may hold data where the policy writes.
        let side_existed = txn.catalog().collections.contains_key(side);
        let mut through = None;
        loop {
            let batch = documents_after(&txn, side, through.as_ref(), MIGRATION_BATCH)?;
            for document in &batch {
                check_adoptable(&only[0], &ReaderBackend { reader: &txn }, document)?;
            }
            match batch.last() {
                Some(last) if batch.len() == MIGRATION_BATCH => through = last.get("_id").cloned(),
                _ => break,
            }
        }
        ops::ensure_collection(&mut txn, &self.inner.store, side)?;
        ops::create_index(
            &mut txn,
            &self.inner.store,
            side,
            &pattern.side_index(),
            false,
            None,
        )?;
        let mut through = None;
        loop {
            let batch = documents_after(&txn, collection, through.as_ref(), MIGRATION_BATCH)?;
            for document in &batch {
                engine.check_migratable(&ReaderBackend { reader: &txn }, document)?;
            }
            match batch.last() {
                Some(last) if batch.len() == MIGRATION_BATCH => through = last.get("_id").cloned(),
                _ => break,
            }
        }
        let has_documents = !documents_after(&txn, collection, None, 1)?.is_empty();
        let progress = if has_documents {
            Progress::Applying { through: None }
        } else {
            Progress::Active
        };
        let existing: Vec<Document> = txn
            .catalog()
            .collections
            .get(collection)
            .map(|meta| {
                meta.indexes
                    .iter()
                    .map(|index| index.spec.clone())
                    .collect()
            })
            .unwrap_or_default();
        let collection = collection.to_string();
        txn.policies_mut().push(Policy {
            pattern,
            progress,
            created_side: !side_existed,
        });
        for keys in &existing {
            mirror_index(&mut txn, &self.inner.store, &collection, keys)?;
        }
        self.inner.commit(txn)?;
        self.run_migrations()?;
        drop(guard);
        Ok(())
    }

    /// Removes the policy on `collection.field`: every logical array is folded back into its
    /// main document and its side documents are deleted (in batches, resumable like a
    /// migration), then the side collection is dropped if declaring the policy created it and
    /// nothing is left in it; an adopted side collection stays.
    ///
    /// # Errors
    /// [`ErrorKind::Pattern`] when there is no such policy; a logical document over 16 MiB
    /// cannot be folded back ([`ErrorKind::DocumentTooLarge`]; the policy then stays in
    /// removal, and writes to the collection are refused until it is resumed or re-applied).
    pub fn remove_pattern(&self, collection: &str, field: &str) -> Result<()> {
        let guard = self.inner.lock_writer()?;
        let mut txn = WriteTxn::new(self.inner.published());
        let position = txn
            .catalog()
            .policies
            .iter()
            .position(|policy| {
                policy.pattern.collection() == collection && policy.pattern.field() == field
            })
            .ok_or_else(|| Error::pattern(collection, field, "there is no policy on this field"))?;
        txn.policies_mut()[position].progress = Progress::Removing { through: None };
        self.inner.commit(txn)?;
        self.run_migrations()?;
        drop(guard);
        Ok(())
    }

    /// The declared policies, in declaration order.
    pub fn patterns(&self) -> Vec<Pattern> {
        self.inner
            .published()
            .catalog
            .policies
            .iter()
            .map(|policy| policy.pattern.clone())
            .collect()
    }

    /// Finishes migrations that a crash or an error interrupted (opening a database does
    /// this too, and leaves the policy unfinished if it fails).
    ///
    /// # Errors
    /// The migration's error.
    pub fn resume_patterns(&self) -> Result<()> {
        let guard = self.inner.lock_writer()?;
        self.run_migrations()?;
        drop(guard);
        Ok(())
    }

    /// Runs every unfinished migration to its end; the caller holds the write lock.
    pub(crate) fn run_migrations(&self) -> Result<()> {
        loop {
            let state = self.inner.published();
            let Some(policy) = state
                .catalog
                .policies
                .iter()
                .find(|policy| policy.progress != Progress::Active)
                .cloned()
            else {
                return Ok(());
            };
            let mut txn = WriteTxn::new(state);
            migration_step(&mut txn, &self.inner.store, &policy)?;
            self.inner.commit(txn)?;
        }
    }

    /// Checks every invariant of every policy; one [`Violation`] per problem.
    ///
    /// # Errors
    /// A read error.
    pub fn verify_patterns(&self) -> Result<Vec<Violation>> {
        let state = self.inner.published();
        let backend = ReaderBackend { reader: &*state };
        let mut violations = Vec::new();
        for policy in &state.catalog.policies {
            violations.extend(spillway_pattern::verify(policy, &backend)?);
        }
        Ok(violations)
    }
}

/// The main document fields a policy writes: its array and its flag.
fn main_fields(pattern: &Pattern) -> Vec<&str> {
    let mut fields = pattern.reserved_main_fields();
    fields.push(pattern.field());
    fields
}

/// Checks a new policy against the database.
fn check_new_policy(txn: &WriteTxn, pattern: &Pattern) -> Result<()> {
    let catalog = txn.catalog();
    let refuse = |message: String| {
        Err(Error::pattern(
            pattern.collection(),
            pattern.field(),
            message,
        ))
    };
    crate::catalog::validate_collection_name(pattern.collection())?;
    crate::catalog::validate_collection_name(pattern.side_collection())?;
    if !catalog.collections.contains_key(pattern.collection()) {
        return refuse(format!(
            "collection '{}' does not exist; create it (or insert into it) first",
            pattern.collection()
        ));
    }
    for policy in &catalog.policies {
        let known = &policy.pattern;
        if same_policy(known, pattern) {
            return refuse("the field already has a policy".to_string());
        }
        let owner = format!("the policy on {}.{}", known.collection(), known.field());
        let clash = if known.side_collection() == pattern.side_collection() {
            Some(format!(
                "side collection '{}' already belongs to {owner}",
                pattern.side_collection()
            ))
        } else if known.side_collection() == pattern.collection() {
            Some(format!(
                "'{}' is the side collection of {owner}",
                pattern.collection()
            ))
        } else if known.collection() == pattern.side_collection() {
            Some(format!(
                "side collection '{}' is the main collection of {owner}",
                pattern.side_collection()
            ))
        } else {
            None
        };
        if let Some(clash) = clash {
            return refuse(clash);
        }
        if known.collection() == pattern.collection() {
            // Two policies of one collection must not write the same main field.
            let ours = main_fields(pattern);
            if let Some(shared) = main_fields(known)
                .into_iter()
                .find(|field| ours.contains(field))
            {
                return refuse(format!(
                    "the field '{shared}' is already maintained by {owner}; choose another flag field"
                ));
            }
        }
    }
    Ok(())
}
