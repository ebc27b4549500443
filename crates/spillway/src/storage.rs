//! Stored documents and their index entries, collections and indexes: what every operation
//! is made of, with no knowledge of pattern policies. Queries over the planner and executor
//! return raw matches ([`QueryRun`]); writes go through [`write_documents`], which keeps
//! every index in step and checks unique indexes against the state a whole statement
//! leaves; DDL creates and drops collections (implicitly, as MongoDB does) and indexes.
//!
//! The pattern layer (`patterned`) and the MongoDB operations (`ops`) are built on this
//! module; it must never call either. Like them, it never commits: everything is buffered in
//! a `WriteTxn`, which the caller discards on error.

use std::any::{Any, TypeId};
use std::borrow::Cow;
use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use bson::{Bson, Document, RawDocument, oid::ObjectId};
use serde::de::DeserializeOwned;
use spillway_doc::DocError;
use spillway_doc::filter::Filter;
use spillway_doc::key;
use spillway_doc::path::FieldPath;
use spillway_doc::size::check_id;
use spillway_doc::sort::{Direction, SortKey, SortSpec};
use spillway_store::{KeyspaceId, Store};

use crate::catalog::timeseries::not_supported_on_timeseries;
use crate::catalog::{
    CappedLimits, Catalog, CollectionMeta, DOCS_KEYSPACE_PREFIX, ID_INDEX_NAME,
    INDEX_KEYSPACE_PREFIX, IndexMeta, IndexSettings, MAX_INDEX_NAME_LEN, Validation,
    ValidationAction, ValidationLevel, default_index_name, hashed_field, parse_index_keys,
    text_key_pattern, validate_collection_name,
};
use crate::error::{Error, ErrorKind, Result, codes};
use crate::exec::{Execution, Match, stored_document};
use crate::index_keys::{index_entries, key_values};
use crate::planner::{self, HintedScan, Plan};
use crate::results::ValidationWarning;
use crate::route::Route;
use crate::txn::{Reader, WriteTxn};

/// What a query returned and how it ran.
pub(crate) struct QueryRun {
    pub(crate) matches: Vec<Match>,
    pub(crate) plan: Plan,
    /// What `explain` shows when the run was not one plan (a pattern query that unions a
    /// main-collection and a side-collection index scan); `None` shows `plan`.
    pub(crate) described: Option<Document>,
    pub(crate) keys_examined: u64,
    pub(crate) docs_examined: u64,
}

/// The sort single-document writes use when none is given: natural (`_id`) order.
pub(crate) fn id_order() -> SortSpec {
    SortSpec::from_keys(vec![SortKey {
        path: FieldPath::parse("_id").expect("a valid path"),
        direction: Direction::Ascending,
    }])
}

/// [`query`] on stored documents, whatever policies the collection has.
pub(crate) fn query_stored(
    reader: &dyn Reader,
    collection: &str,
    filter: &Filter,
    sort: Option<&SortSpec>,
    skip: u64,
    limit: Option<usize>,
) -> Result<QueryRun> {
    query_stored_hinted(reader, collection, filter, sort, skip, limit, None)
}

/// [`query_stored`] on the index `hint` names, if any (within its `min`/`max` bounds).
pub(crate) fn query_stored_hinted(
    reader: &dyn Reader,
    collection: &str,
    filter: &Filter,
    sort: Option<&SortSpec>,
    skip: u64,
    limit: Option<usize>,
    hint: Option<HintedScan<'_>>,
) -> Result<QueryRun> {
    let meta = reader.catalog().collections.get(collection);
    let (bound_filter, bound_sort) = bind_text(meta, filter, sort)?;
    let filter = bound_filter.as_ref().unwrap_or(filter);
    let sort = bound_sort.as_ref().or(sort);
    let plan = match hint {
        Some(hint) => planner::plan_hinted(meta, filter, sort, hint)?,
        None => planner::plan(meta, filter, sort),
    };
    let mut execution = Execution::new(Arc::clone(&plan.access), plan.docs);
    let mut skip = usize::try_from(skip).unwrap_or(usize::MAX);
    let mut matches = Vec::new();
    if let Some(sort) = &plan.sort {
        matches = execution.collect(reader, filter)?;
        sort_matches(&mut matches, sort)?;
    } else {
        // An exact index scan passes over the skipped entries without reading documents.
        skip -= execution.skip_without_reading(reader, skip)?;
        let wanted = limit.map_or(usize::MAX / 2, |limit| skip.saturating_add(limit));
        while !execution.is_finished() && matches.len() < wanted {
            let missing = wanted - matches.len();
            execution.fill(reader, filter, missing, &mut matches)?;
        }
    }
    Ok(QueryRun {
        matches: skip_and_limit(matches, skip, limit),
        keys_examined: execution.keys_examined,
        docs_examined: execution.docs_examined,
        plan,
        described: None,
    })
}

/// The stored documents of `collection` that match `filter`, in `sort` order, shown to
/// `visit` one by one as their stored bytes: borrowed where they lie when the plan streams
/// (no order asked, or its index gives it), collected and sorted in memory otherwise.
pub(crate) fn for_each_stored(
    reader: &dyn Reader,
    collection: &str,
    filter: &Filter,
    sort: Option<&SortSpec>,
    mut visit: impl FnMut(&[u8]) -> Result<()>,
) -> Result<()> {
    let meta = reader.catalog().collections.get(collection);
    let (bound_filter, bound_sort) = bind_text(meta, filter, sort)?;
    let filter = bound_filter.as_ref().unwrap_or(filter);
    let sort = bound_sort.as_ref().or(sort);
    let plan = planner::plan(meta, filter, sort);
    let mut execution = Execution::new(Arc::clone(&plan.access), plan.docs);
    if let Some(sort) = &plan.sort {
        let mut matches = execution.collect(reader, filter)?;
        sort_matches(&mut matches, sort)?;
        return matches.iter().try_for_each(|found| visit(&found.bytes));
    }
    execution.for_each(reader, filter, |_, bytes| visit(bytes))
}

/// A filter whose `$text` clause is not bound yet, bound to the collection's text index, and
/// a sort on `{ $meta: "textScore" }` given the filter's scorer (`None`: as given). A text
/// score sort without a `$text` query is MongoDB's error 40218.
pub(crate) fn bind_text(
    meta: Option<&crate::catalog::CollectionMeta>,
    filter: &Filter,
    sort: Option<&SortSpec>,
) -> Result<(Option<Filter>, Option<SortSpec>)> {
    let mut bound_filter = None;
    if filter
        .text_search()
        .is_some_and(|search| search.bound().is_none())
    {
        let mut filter = filter.clone();
        planner::bind_text(meta, &mut filter)?;
        bound_filter = Some(filter);
    }
    let scorer = bound_filter.as_ref().unwrap_or(filter).text_scorer();
    let bound_sort = match sort {
        Some(sort) if sort.has_text_score() => match scorer {
            Some(scorer) => Some(sort.clone().with_text_scorer(scorer)),
            None => return Err(text_score_unavailable(meta)),
        },
        _ => None,
    };
    Ok((bound_filter, bound_sort))
}

/// MongoDB's 40218: `{ $meta: "textScore" }` in a query without `$text`.
pub(crate) fn text_score_unavailable(meta: Option<&crate::catalog::CollectionMeta>) -> Error {
    Error::invalid_options(
        meta.map_or("", |meta| meta.name.as_str()),
        "query requires text score metadata, but it is not available",
    )
    .with_code(40218)
}

/// The matches left after skipping `skip` and keeping at most `limit`.
pub(crate) fn skip_and_limit(matches: Vec<Match>, skip: usize, limit: Option<usize>) -> Vec<Match> {
    let mut matches: Vec<Match> = matches.into_iter().skip(skip).collect();
    if let Some(limit) = limit {
        matches.truncate(limit);
    }
    matches
}

/// Sorts matches stably by `sort`.
pub(crate) fn sort_matches(matches: &mut [Match], sort: &SortSpec) -> Result<()> {
    for found in matches.iter() {
        stored_document(&found.bytes)?;
    }
    matches.sort_by(|a, b| {
        let a = RawDocument::from_bytes(&a.bytes).expect("checked above");
        let b = RawDocument::from_bytes(&b.bytes).expect("checked above");
        sort.compare_raw(a, b)
    });
    Ok(())
}

/// Decodes stored bytes.
pub(crate) fn decode(bytes: &[u8]) -> Result<Document> {
    spillway_doc::decode::document_from_bytes(bytes).map_err(not_bson)
}

/// Stored bytes as `T`: decoded straight into a `Document` when `T` is one ([`decode`]: the
/// command layer's type, and most applications'), through serde for any other type. `what`
/// names the bytes in an error ("a stored document").
pub(crate) fn decode_as<T: DeserializeOwned + 'static>(bytes: &[u8], what: &str) -> Result<T> {
    if TypeId::of::<T>() == TypeId::of::<Document>() {
        return document_as(decode(bytes)?, what);
    }
    bson::deserialize_from_slice(bytes)
        .map_err(|error| Error::serialization(format!("cannot deserialize {what}: {error}")))
}

/// `document` as `T`: moved as it is when `T` is `Document`, never copied or re-encoded
/// (serde would rebuild it value by value, and read `$`-prefixed fields such as `$oid` as
/// extended JSON); through serde for any other type.
pub(crate) fn document_as<T: DeserializeOwned + 'static>(
    document: Document,
    what: &str,
) -> Result<T> {
    let mut slot = Some(document);
    if let Some(same) = (&mut slot as &mut dyn Any).downcast_mut::<Option<T>>() {
        return Ok(same.take().expect("the slot holds the document"));
    }
    let document = slot.expect("the slot is only taken when T is Document");
    bson::deserialize_from_document(document)
        .map_err(|error| Error::serialization(format!("cannot deserialize {what}: {error}")))
}

fn not_bson(error: impl std::fmt::Display) -> Error {
    Error::corruption(format!("a stored document is not valid BSON: {error}"))
}

pub(crate) fn encode(document: &Document) -> Result<Vec<u8>> {
    bson::serialize_to_vec(document).map_err(|error| Error::document(DocError::from(error)))
}

pub(crate) fn check_storable(document: &Document) -> Result<()> {
    spillway_doc::size::check_storable(document).map_err(Error::document)
}

/// The collection's metadata, creating the collection (implicitly, as MongoDB does) if needed.
pub(crate) fn ensure_collection(txn: &mut WriteTxn, store: &Store, name: &str) -> Result<()> {
    validate_collection_name(name)?;
    if txn.catalog().collections.contains_key(name) {
        return Ok(());
    }
    let id = txn.allocate_id();
    let keyspace_name = format!("{DOCS_KEYSPACE_PREFIX}{id}.{name}");
    let docs = txn.create_keyspace(store, &keyspace_name)?;
    txn.catalog_mut().collections.insert(
        name.to_string(),
        CollectionMeta {
            name: name.to_string(),
            id,
            keyspace_name,
            docs,
            indexes: Vec::new(),
            validation: Validation::default(),
            capped: None,
            echoed: Document::new(),
            view: None,
            timeseries: None,
            collation: spillway_doc::collation::Collation::simple(),
        },
    );
    txn.collection_changed(name);
    Ok(())
}

/// One document change of a write: an insert (`old` is `None`), a delete (`new` is `None`)
/// or an update; `new` carries the encoded bytes to store.
pub(crate) struct DocumentChange<'a> {
    pub(crate) id_key: &'a [u8],
    pub(crate) old: Option<&'a Document>,
    pub(crate) new: Option<(&'a Document, Vec<u8>)>,
}

/// Writes one document change with its index entries.
pub(crate) fn write_document(
    txn: &mut WriteTxn,
    collection: &str,
    id_key: &[u8],
    old: Option<&Document>,
    new: Option<(&Document, Vec<u8>)>,
) -> Result<()> {
    write_documents(txn, collection, vec![DocumentChange { id_key, old, new }])
}

/// Writes the document changes of one statement with their index entries, checking every
/// unique index against the state the whole statement leaves, before buffering anything.
///
/// Checking at the end of the statement (not document by document) makes the outcome
/// independent of the order the documents were found in: `update_many` with
/// `{ $inc: { rank: 1 } }` over a unique `rank` succeeds whenever its result has no duplicate,
/// where MongoDB, checking each document as it writes it, fails or not depending on the plan.
pub(crate) fn write_documents(
    txn: &mut WriteTxn,
    collection: &str,
    changes: Vec<DocumentChange<'_>>,
) -> Result<()> {
    write_documents_validated(txn, collection, changes, true)
}

/// [`write_documents`], checking the collection's validator against the stored documents
/// only if `validate_stored`: the main collection of a policy is validated on logical
/// documents by the pattern write path (`patterned::LogicalValidation`), never on the stored
/// layout its engine writes.
pub(crate) fn write_documents_validated(
    txn: &mut WriteTxn,
    collection: &str,
    changes: Vec<DocumentChange<'_>>,
    validate_stored: bool,
) -> Result<()> {
    if changes.is_empty() {
        // Nothing matched (possibly in a collection that does not exist).
        return Ok(());
    }
    let catalog: Arc<Catalog> = txn.catalog_arc();
    let meta = catalog
        .collections
        .get(collection)
        .expect("the caller made sure the collection exists");
    if meta.view.is_some() {
        // Every write action refuses a view first; this keeps its keyspace empty whatever
        // path a write takes.
        return Err(crate::views::not_supported_on_view(collection));
    }
    if meta.timeseries.is_some() {
        // Time series writes are routed to the buckets first (`ops`); the same guard.
        return Err(not_supported_on_timeseries(
            collection,
            "a direct document write",
        ));
    }
    if validate_stored && !txn.bypass_validation {
        let warnings = check_validation(meta, &changes)?;
        txn.validation_warnings.extend(warnings);
    }
    let mut puts = Vec::new();
    let mut deletes = Vec::new();
    let mut became_multikey = Vec::new();
    for index in &meta.indexes {
        let mut index_puts: Vec<(Vec<u8>, &[u8], &Document)> = Vec::new();
        let mut index_deletes: HashSet<Vec<u8>> = HashSet::new();
        for change in &changes {
            let old_entries = match change.old {
                Some(old) => index_entries(collection, index, old, change.id_key)?.0,
                None => Vec::new(),
            };
            let (new_entries, multikey) = match &change.new {
                Some((new, _)) => index_entries(collection, index, new, change.id_key)?,
                None => (Vec::new(), false),
            };
            if multikey && !index.multikey && !became_multikey.contains(&index.name) {
                became_multikey.push(index.name.clone());
            }
            for entry in &old_entries {
                if new_entries.binary_search(entry).is_err() {
                    index_deletes.insert(entry.key.clone());
                }
            }
            for entry in new_entries {
                if old_entries.binary_search(&entry).is_err() {
                    let document = change
                        .new
                        .as_ref()
                        .map(|(new, _)| *new)
                        .expect("entries of new");
                    index_puts.push((entry.key, change.id_key, document));
                }
            }
        }
        if index.unique {
            check_unique(txn, collection, index, &index_puts, &index_deletes)?;
        }
        deletes.extend(index_deletes.into_iter().map(|key| (index.keyspace, key)));
        puts.extend(
            index_puts
                .into_iter()
                .map(|(key, id_key, _)| (index.keyspace, key, id_key)),
        );
    }
    for (keyspace, key) in deletes {
        txn.delete(keyspace, key);
    }
    for (keyspace, key, id_key) in puts {
        txn.put(keyspace, key, id_key.to_vec());
    }
    for change in changes {
        match change.new {
            Some((_, bytes)) => txn.put(meta.docs, change.id_key.to_vec(), bytes),
            None => txn.delete(meta.docs, change.id_key.to_vec()),
        }
    }
    if !became_multikey.is_empty() {
        let meta = txn
            .catalog_mut()
            .collections
            .get_mut(collection)
            .expect("exists");
        for index in &mut meta.indexes {
            if became_multikey.contains(&index.name) {
                index.multikey = true;
            }
        }
        txn.collection_changed(collection);
    }
    Ok(())
}

/// Refuses a statement that writes a document the collection's validator rejects (see
/// [`ValidationLevel`] and [`ValidationAction`]); deletes are never checked. Under
/// `validationAction: "warn"` nothing is refused: the documents that fail are returned, for
/// the database's log.
pub(crate) fn check_validation(
    meta: &CollectionMeta,
    changes: &[DocumentChange<'_>],
) -> Result<Vec<ValidationWarning>> {
    let validation = &meta.validation;
    let Some(validator) = &validation.validator else {
        return Ok(Vec::new());
    };
    if validation.level == ValidationLevel::Off {
        return Ok(Vec::new());
    }
    let mut warnings = Vec::new();
    for change in changes {
        let Some((new, _)) = &change.new else {
            continue;
        };
        if validation.level == ValidationLevel::Moderate
            && let Some(old) = change.old
            && !validator
                .filter
                .matches_document(old)
                .map_err(Error::filter)?
        {
            continue;
        }
        if validator
            .filter
            .matches_document(new)
            .map_err(Error::filter)?
        {
            continue;
        }
        let details = validator.explain_failure(new)?;
        let id = new.get("_id").cloned().unwrap_or(Bson::Null);
        if validation.action == ValidationAction::Warn {
            warnings.push(ValidationWarning {
                at: bson::DateTime::now(),
                collection: meta.name.clone(),
                document_id: id,
                details,
            });
            continue;
        }
        return Err(Error::new(ErrorKind::DocumentValidationFailure {
            collection: meta.name.clone(),
            id,
            details: details.map(Box::new),
        }));
    }
    Ok(warnings)
}

/// Refuses `puts` (key, owner's `_id` key, owner) to a unique index when a key would belong
/// to two documents once the statement is done: another new entry of the statement, or an
/// entry already stored that the statement does not delete.
fn check_unique(
    txn: &WriteTxn,
    collection: &str,
    index: &IndexMeta,
    puts: &[(Vec<u8>, &[u8], &Document)],
    deletes: &HashSet<Vec<u8>>,
) -> Result<()> {
    let mut owners: HashMap<&[u8], &[u8]> = HashMap::with_capacity(puts.len());
    for (key, id_key, document) in puts {
        let taken_in_statement = owners
            .insert(key.as_slice(), id_key)
            .is_some_and(|owner| owner != *id_key);
        let taken_before = !deletes.contains(key)
            && txn
                .get(index.keyspace, key)?
                .is_some_and(|owner| owner.as_ref() != *id_key);
        if taken_in_statement || taken_before {
            return Err(duplicate(collection, index, document, key));
        }
    }
    Ok(())
}

fn duplicate(collection: &str, index: &IndexMeta, document: &Document, entry_key: &[u8]) -> Error {
    Error::new(ErrorKind::DuplicateKey {
        collection: collection.to_string(),
        index: index.name.clone(),
        key: key_values(index, document, entry_key),
    })
}

/// Gives a document its `_id` (first, generated when missing) and checks it can be stored.
pub(crate) fn prepare_insert(document: Document) -> Result<Document> {
    let stored = assign_id(document)?;
    check_storable(&stored)?;
    Ok(stored)
}

/// Gives a document its `_id` (first, generated when missing), refusing `_id`s MongoDB
/// refuses (every insert and upsert comes here). Other field names may start with `$`, as
/// MongoDB 5.0+ stores them.
pub(crate) fn assign_id(mut document: Document) -> Result<Document> {
    let id = match document.remove("_id") {
        Some(id) => id,
        None => Bson::ObjectId(ObjectId::new()),
    };
    check_id(&id).map_err(Error::document)?;
    let mut stored = Document::new();
    stored.insert("_id", id);
    stored.extend(document);
    Ok(stored)
}

/// Inserts one document as it is, whatever policies the collection has.
pub(crate) fn insert_stored(
    txn: &mut WriteTxn,
    store: &Store,
    collection: &str,
    document: Document,
) -> Result<(Bson, Document)> {
    // A document that cannot be stored does not create the collection either.
    let document = prepare_insert(document)?;
    ensure_collection(txn, store, collection)?;
    let id = document.get("_id").cloned().expect("prepared");
    let id_key = key::to_key(&id);
    let docs = txn.catalog().collections[collection].docs;
    if txn.get(docs, &id_key)?.is_some() {
        return Err(Error::new(ErrorKind::DuplicateKey {
            collection: collection.to_string(),
            index: ID_INDEX_NAME.to_string(),
            key: id,
        }));
    }
    let bytes = encode(&document)?;
    write_document(txn, collection, &id_key, None, Some((&document, bytes)))?;
    if let Some(limits) = txn.catalog().collections[collection].capped {
        evict_oldest(txn, collection, limits, &id_key)?;
    }
    Ok((id, document))
}

/// Deletes a capped collection's oldest documents (natural order: smallest `_id` first)
/// until it is within `limits`, keeping the document just inserted (`kept`). Reads the whole
/// collection, which its size bounds.
fn evict_oldest(
    txn: &mut WriteTxn,
    collection: &str,
    limits: CappedLimits,
    kept: &[u8],
) -> Result<()> {
    let docs = txn.catalog().collections[collection].docs;
    let mut stored: Vec<(Vec<u8>, Arc<[u8]>)> = Vec::new();
    for entry in txn.scan(docs, &crate::txn::KeyRange::all(), false)? {
        let (id_key, bytes) = entry?;
        stored.push((id_key.to_vec(), Arc::from(&bytes[..])));
    }
    let mut total: u64 = stored.iter().map(|(_, bytes)| bytes.len() as u64).sum();
    let mut count = stored.len() as u64;
    for (id_key, bytes) in stored {
        let over = total > limits.size || limits.max.is_some_and(|max| count > max);
        if !over {
            break;
        }
        if id_key.as_slice() == kept {
            continue;
        }
        let old = decode(&bytes)?;
        write_document(txn, collection, &id_key, Some(&old), None)?;
        total -= bytes.len() as u64;
        count -= 1;
    }
    Ok(())
}

/// The stored bytes of the document of `collection` with `_id` key `id_key`, as the reader
/// holds them (`None` for a missing document or collection).
fn stored<'r>(
    reader: &'r dyn Reader,
    collection: &str,
    id_key: &[u8],
) -> Result<Option<Cow<'r, [u8]>>> {
    match reader.catalog().collections.get(collection) {
        Some(meta) => reader.get(meta.docs, id_key),
        None => Ok(None),
    }
}

/// The stored document with `_id` key `id_key`.
pub(crate) fn stored_by_key(
    reader: &dyn Reader,
    collection: &str,
    id_key: &[u8],
) -> Result<Option<Document>> {
    stored(reader, collection, id_key)?
        .map(|bytes| decode(&bytes))
        .transpose()
}

/// As much of the stored document with `_id` key `id_key` as [`write_documents`] reads of
/// the old side of a change ([`decode_for_change`]).
pub(crate) fn stored_for_change(
    reader: &dyn Reader,
    collection: &str,
    id_key: &[u8],
) -> Result<Option<Document>> {
    let Some(meta) = reader.catalog().collections.get(collection) else {
        return Ok(None);
    };
    let Some(bytes) = reader.get(meta.docs, id_key)? else {
        return Ok(None);
    };
    decode_for_change(meta, &bytes).map(Some)
}

/// As much of a document of `meta`'s collection as [`write_documents`] reads of either side
/// of a change: its validator's and every index's fields. Only the top-level fields the
/// indexes' key patterns start with are decoded, the whole document when a validator, a
/// partial filter, a text or a geospatial index may read any field. A write that replaces a
/// big document (an outlier's bucket) then decodes its link, not its array.
pub(crate) fn decode_for_change(meta: &CollectionMeta, bytes: &[u8]) -> Result<Document> {
    let decoded = if reads_any_field(meta) {
        spillway_doc::decode::document_from_bytes(bytes)
    } else {
        spillway_doc::decode::fields(stored_document(bytes)?, |name| {
            meta.indexes.iter().any(|index| {
                index
                    .fields
                    .iter()
                    .any(|(path, _)| path.head().as_bytes() == name)
            })
        })
    };
    decoded.map_err(not_bson)
}

/// Whether a validator, a partial filter, a text or a geospatial index of `meta`'s collection
/// may read any field of a changed document.
fn reads_any_field(meta: &CollectionMeta) -> bool {
    meta.validation.validator.is_some()
        || meta.indexes.iter().any(|index| {
            index.settings.partial.is_some()
                || index.settings.text.is_some()
                || index.settings.geo.is_some()
        })
}

/// Whether [`write_documents`] reads any of the top-level `fields` of a changed document of
/// `meta`'s collection: a change to other fields alone leaves its index entries as they are
/// and needs no validation.
pub(crate) fn change_reads(meta: &CollectionMeta, fields: &[String]) -> bool {
    reads_any_field(meta)
        || meta.indexes.iter().any(|index| {
            index
                .fields
                .iter()
                .any(|(path, _)| fields.iter().any(|field| path.head() == field))
        })
}

/// Whether `collection` holds a document with `_id` key `id_key`.
pub(crate) fn is_stored(reader: &dyn Reader, collection: &str, id_key: &[u8]) -> Result<bool> {
    Ok(stored(reader, collection, id_key)?.is_some())
}

/// The stored bytes of the document of `collection` with `_id` key `id_key`, copied.
pub(crate) fn stored_bytes(
    reader: &dyn Reader,
    collection: &str,
    id_key: &[u8],
) -> Result<Option<Vec<u8>>> {
    Ok(stored(reader, collection, id_key)?.map(Cow::into_owned))
}

/// The stored document `bytes` with `values` appended to its top-level array `field`,
/// spliced without decoding the elements already there (an outlier's bucket growing);
/// `None` when `field` is missing or not an array.
///
/// # Errors
/// A value that cannot be stored (nested too deep, not encodable), a result over the
/// document size limit; corruption when `bytes` are not valid BSON.
pub(crate) fn append_to_array(
    bytes: &[u8],
    field: &str,
    values: Vec<Bson>,
) -> Result<Option<Vec<u8>>> {
    // The values sit at the depth they have in `{ field: [values] }`, whatever else the
    // document holds.
    let mut probe = bson::doc! { field: values };
    spillway_doc::size::check_nesting(&probe).map_err(Error::document)?;
    let Some(Bson::Array(values)) = probe.remove(field) else {
        unreachable!("the array was just inserted")
    };
    let encoded = values
        .into_iter()
        .map(bson::RawBson::try_from)
        .collect::<std::result::Result<bson::RawArrayBuf, _>>()
        .map_err(|error| Error::document(DocError::from(error)))?;
    let appended = spillway_doc::raw::append_to_array(stored_document(bytes)?, field, &encoded)
        .map_err(not_bson)?;
    if let Some(appended) = &appended
        && appended.len() > spillway_doc::size::MAX_DOCUMENT_SIZE
    {
        return Err(Error::document(DocError::DocumentTooLarge {
            size: appended.len(),
            limit: spillway_doc::size::MAX_DOCUMENT_SIZE,
        }));
    }
    Ok(appended)
}

/// Checks index options against each other and the key pattern, as MongoDB does.
fn check_settings(collection: &str, fields: usize, settings: &IndexSettings) -> Result<()> {
    if settings.sparse && settings.partial.is_some() {
        return Err(Error::invalid_index(
            collection,
            "cannot mix 'partialFilterExpression' and 'sparse' options",
        ));
    }
    if let Some(seconds) = settings.expire_after_seconds {
        if fields != 1 {
            return Err(Error::invalid_index(
                collection,
                "expireAfterSeconds (TTL) needs a single-field index",
            ));
        }
        if !(0..=i64::from(i32::MAX)).contains(&seconds) {
            return Err(Error::invalid_options(
                collection,
                format!(
                    "expireAfterSeconds must be between 0 and {}, not {seconds}",
                    i32::MAX
                ),
            ));
        }
    }
    Ok(())
}

/// The geospatial fields of a key pattern with their kinds (`2d`, `2dsphere`), which make an
/// index other than one with the same fields ascending.
fn geo_kinds(keys: &Document) -> Vec<(&str, &Bson)> {
    keys.iter()
        .filter(|(_, value)| crate::catalog::geo::is_geo_kind(value))
        .map(|(field, value)| (field.as_str(), value))
        .collect()
}

/// Creates an index (building its entries from the existing documents in the same batch);
/// returns its name. Creating an identical index again does nothing.
pub(crate) fn create_index(
    txn: &mut WriteTxn,
    store: &Store,
    collection: &str,
    keys: &Document,
    unique: bool,
    name: Option<&str>,
    mut settings: IndexSettings,
) -> Result<String> {
    validate_collection_name(collection)?;
    let text = settings.text.is_some();
    let (fields, hashed) = index_fields(collection, keys, unique, &settings)?;
    let name = index_name(collection, keys, name)?;
    let same_keys = |spec: &Document| {
        // A collection has at most one text index: any other is "the same keys".
        if text || *spec == text_key_pattern() {
            return text && *spec == text_key_pattern();
        }
        parse_index_keys(collection, spec).is_ok_and(|known| {
            hashed_field(spec) == hashed
                && geo_kinds(spec) == geo_kinds(keys)
                && known.len() == fields.len()
                && known
                    .iter()
                    .zip(&fields)
                    .all(|(a, b)| a.0.as_str() == b.0.as_str() && a.1 == b.1)
        })
    };
    if same_keys(&bson::doc! { "_id": 1 }) {
        // The `_id` index has the collection's collation: an index on `_id` naming another
        // is a different index, which Spillway does not build.
        let plain = IndexSettings {
            echoed: settings.echoed.clone(),
            collation: settings.collation.clone(),
            ..IndexSettings::default()
        };
        let default_collation = txn
            .catalog()
            .collections
            .get(collection)
            .map(|meta| meta.collation.clone())
            .unwrap_or_default();
        if settings
            .collation
            .as_ref()
            .is_some_and(|collation| *collation != default_collation)
        {
            return Err(Error::invalid_index(
                collection,
                "an index on _id with a collation other than the collection's is not supported by Spillway",
            ));
        }
        if name != ID_INDEX_NAME && name != "_id_1" || unique || settings != plain {
            return Err(Error::invalid_index(
                collection,
                "the _id index exists already and cannot be redefined",
            ));
        }
        ensure_collection(txn, store, collection)?;
        return Ok(ID_INDEX_NAME.to_string());
    }
    if name == ID_INDEX_NAME {
        return Err(Error::invalid_index(
            collection,
            "the name _id_ is reserved for the _id index",
        ));
    }
    ensure_collection(txn, store, collection)?;
    let meta = &txn.catalog().collections[collection];
    // An index given no collation takes the collection's default, as in MongoDB.
    if settings.collation.is_none() {
        settings.collation = Some(meta.collation.clone());
    }
    if !settings.collation().is_simple()
        && (settings.text.is_some() || settings.geo.is_some() || hashed.is_some())
    {
        return Err(Error::invalid_index(
            collection,
            "a collation applies to ascending and descending index fields only in Spillway (not text, geospatial or hashed indexes)",
        ));
    }
    if existing_index(
        collection,
        &meta.indexes,
        &same_keys,
        &name,
        keys,
        unique,
        &settings,
    )? {
        return Ok(name);
    }
    let docs = meta.docs;
    let id = txn.allocate_id();
    let keyspace_name = format!("{INDEX_KEYSPACE_PREFIX}{id}.{collection}.{name}");
    let keyspace = txn.create_keyspace(store, &keyspace_name)?;
    let mut index = IndexMeta {
        name: name.clone(),
        spec: if text {
            text_key_pattern()
        } else {
            keys.clone()
        },
        fields,
        unique,
        keyspace_name,
        keyspace,
        // A document has an entry per term: the scan dedups documents.
        multikey: text,
        hashed,
        settings,
    };
    let entries = build_index_entries(txn, collection, &mut index, docs)?;
    for (key, id_key) in entries {
        txn.put(keyspace, key, id_key.to_vec());
    }
    txn.catalog_mut()
        .collections
        .get_mut(collection)
        .expect("exists")
        .indexes
        .push(index);
    txn.collection_changed(collection);
    Ok(name)
}

/// An index's key fields, as [`IndexMeta::fields`] holds them.
type IndexFields = Vec<(FieldPath, Direction)>;

/// Entries of an index being built: each key with its document's `_id` key.
type BuiltEntries = Vec<(Vec<u8>, Arc<[u8]>)>;

/// The key fields and hashed field of a new index, refusing kinds that cannot be unique.
fn index_fields(
    collection: &str,
    keys: &Document,
    unique: bool,
    settings: &IndexSettings,
) -> Result<(IndexFields, Option<usize>)> {
    let (fields, hashed) = if settings.text.is_some() {
        if unique {
            return Err(Error::invalid_index(
                collection,
                "a text index cannot be unique",
            ));
        }
        (Vec::new(), None)
    } else {
        (parse_index_keys(collection, keys)?, hashed_field(keys))
    };
    check_settings(collection, fields.len(), settings)?;
    if settings.geo.is_some() && unique {
        return Err(Error::invalid_index(
            collection,
            "a 2d or 2dsphere index cannot be unique in Spillway",
        ));
    }
    if hashed.is_some() && unique {
        return Err(Error::invalid_index(
            collection,
            "a hashed index cannot be unique (hashes of different values may collide)",
        ));
    }
    Ok((fields, hashed))
}

/// The name of a new index: `name`, or the default name of `keys`, checked.
fn index_name(collection: &str, keys: &Document, name: Option<&str>) -> Result<String> {
    let name = name.map_or_else(|| default_index_name(keys), str::to_string);
    if name.is_empty() || name.len() > MAX_INDEX_NAME_LEN || name.contains('\0') {
        return Err(Error::invalid_index(
            collection,
            format!("index name {name:?} must be 1 to {MAX_INDEX_NAME_LEN} bytes without NUL"),
        ));
    }
    Ok(name)
}

/// Whether the index exists already; an error when one shares its name or keys but differs.
fn existing_index(
    collection: &str,
    indexes: &[IndexMeta],
    same_keys: &dyn Fn(&Document) -> bool,
    name: &str,
    keys: &Document,
    unique: bool,
    settings: &IndexSettings,
) -> Result<bool> {
    for index in indexes {
        // The same keys under another collation are another index, as in MongoDB.
        let keys_match =
            same_keys(&index.spec) && index.settings.collation() == settings.collation();
        if index.name == name || keys_match {
            let same_options = index.unique == unique
                && IndexSettings {
                    echoed: Document::new(),
                    ..index.settings.clone()
                } == IndexSettings {
                    echoed: Document::new(),
                    ..settings.clone()
                };
            if index.name == name && keys_match && same_options {
                return Ok(true);
            }
            // MongoDB's codes: the same name with other keys, or the same keys with another
            // name or other options.
            let code = if keys_match {
                codes::INDEX_OPTIONS_CONFLICT
            } else {
                codes::INDEX_KEY_SPECS_CONFLICT
            };
            return Err(Error::invalid_index(
                collection,
                format!(
                    "an index named '{}' with keys {} and other options exists already; it conflicts with '{name}' {keys} unique: {unique}",
                    index.name, index.spec
                ),
            )
            .with_code(code));
        }
    }
    Ok(false)
}

/// A new index's entries for the documents in `docs`, sorted; refuses duplicates if unique.
fn build_index_entries(
    txn: &WriteTxn,
    collection: &str,
    index: &mut IndexMeta,
    docs: KeyspaceId,
) -> Result<BuiltEntries> {
    // Entries hold their key and their document's `_id` key, never the document: one copy of
    // a document per entry made a 20,000-element array take tens of gigabytes.
    let mut entries: BuiltEntries = Vec::new();
    for entry in txn.scan(docs, &crate::txn::KeyRange::all(), false)? {
        let (id_key, bytes) = entry?;
        let document = decode(&bytes)?;
        let (document_entries, multikey) = index_entries(collection, index, &document, &id_key)?;
        index.multikey |= multikey;
        let id_key: Arc<[u8]> = Arc::from(&id_key[..]);
        entries.extend(
            document_entries
                .into_iter()
                .map(|entry| (entry.key, Arc::clone(&id_key))),
        );
    }
    entries.sort_by(|a, b| a.0.cmp(&b.0));
    if index.unique {
        for pair in entries.windows(2) {
            if pair[0].0 == pair[1].0 && pair[0].1 != pair[1].1 {
                let document = stored_by_key(txn, collection, &pair[1].1)?.ok_or_else(|| {
                    Error::corruption(format!(
                        "collection '{collection}': a document the index build just read is gone"
                    ))
                })?;
                return Err(duplicate(collection, index, &document, &pair[1].0));
            }
        }
    }
    Ok(entries)
}

/// Where index `name` of `collection` sits in the catalog's list of its indexes
/// (`IndexNotFound` when the collection or the index does not exist).
pub(crate) fn index_position(txn: &WriteTxn, collection: &str, name: &str) -> Result<usize> {
    let not_found = || {
        Error::new(ErrorKind::IndexNotFound {
            collection: collection.to_string(),
            index: name.to_string(),
        })
    };
    txn.catalog()
        .collections
        .get(collection)
        .ok_or_else(not_found)?
        .indexes
        .iter()
        .position(|index| index.name == name)
        .ok_or_else(not_found)
}

/// Drops an index by name.
pub(crate) fn drop_index(txn: &mut WriteTxn, collection: &str, name: &str) -> Result<()> {
    validate_collection_name(collection)?;
    // A time series' indexes are its buckets' (`timeseries::create_index`).
    if let Route::TimeSeries(layout) = Route::of(txn.catalog(), collection) {
        let buckets = layout.buckets.clone();
        return drop_index(txn, &buckets, name);
    }
    if name == ID_INDEX_NAME {
        return Err(Error::invalid_index(
            collection,
            "the _id index cannot be dropped",
        ));
    }
    let position = index_position(txn, collection, name)?;
    let keyspace = txn.catalog().collections[collection].indexes[position].keyspace;
    txn.catalog_mut()
        .collections
        .get_mut(collection)
        .expect("exists")
        .indexes
        .remove(position);
    txn.collection_changed(collection);
    txn.drop_keyspace(keyspace);
    Ok(())
}

/// Gives collection `from` the name `to`, which must be free: its catalog record moves, with
/// its id (a change stream's `collectionUUID`), options and indexes; its documents and index
/// entries stay in their keyspaces, so nothing but the catalog is written. Keyspace names keep
/// the collection name they were created with (`docs.<id>.<from>`): they are only unique
/// names, and the catalog record says which collection each belongs to.
pub(crate) fn rename_collection(txn: &mut WriteTxn, from: &str, to: &str) -> Result<()> {
    validate_collection_name(to)?;
    if txn.catalog().collections.contains_key(to) {
        return Err(Error::new(ErrorKind::CollectionExists {
            collection: to.to_string(),
        }));
    }
    let Some(mut meta) = txn.catalog_mut().collections.remove(from) else {
        return Err(Error::new(ErrorKind::CollectionNotFound {
            collection: from.to_string(),
        }));
    };
    meta.name = to.to_string();
    txn.catalog_mut().collections.insert(to.to_string(), meta);
    txn.collection_changed(from);
    txn.collection_changed(to);
    Ok(())
}

/// Drops a collection and its indexes; `false` if it did not exist.
pub(crate) fn drop_collection(txn: &mut WriteTxn, collection: &str) -> Result<bool> {
    validate_collection_name(collection)?;
    let Some(meta) = txn.catalog_mut().collections.remove(collection) else {
        return Ok(false);
    };
    txn.collection_changed(collection);
    txn.drop_keyspace(meta.docs);
    for index in &meta.indexes {
        txn.drop_keyspace(index.keyspace);
    }
    Ok(true)
}
