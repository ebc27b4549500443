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

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use bson::{Bson, DateTime, Document, RawDocument, oid::ObjectId};
use spillway_doc::DocError;
use spillway_doc::compare::values_equal;
use spillway_doc::filter::Filter;
use spillway_doc::key;
use spillway_doc::path::FieldPath;
use spillway_doc::projection::Projection;
use spillway_doc::size::{check_field_names, check_id};
use spillway_doc::sort::{Direction, SortKey, SortSpec};
use spillway_doc::update::{ApplyContext, Update};
use spillway_pattern::{Role, Statement};
use spillway_store::Store;

use crate::catalog::{
    Catalog, CollectionMeta, DOCS_KEYSPACE_PREFIX, ID_INDEX_NAME, INDEX_KEYSPACE_PREFIX, IndexMeta,
    MAX_INDEX_NAME_LEN, default_index_name, parse_index_keys, validate_collection_name,
};
use crate::error::{Error, ErrorKind, Result};
use crate::exec::{Execution, Match, stored_document};
use crate::index_keys::{index_entries, key_values};
use crate::patterned;
use crate::planner::{self, Plan};
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

/// `limit` as MongoDB reads it: 0 is none, a negative value its absolute value.
pub(crate) fn effective_limit(limit: i64) -> Option<usize> {
    match usize::try_from(limit.unsigned_abs()).unwrap_or(usize::MAX) {
        0 => None,
        limit => Some(limit),
    }
}

/// The sort single-document writes use when none is given: natural (`_id`) order.
fn id_order() -> SortSpec {
    SortSpec::from_keys(vec![SortKey {
        path: FieldPath::parse("_id").expect("a valid path"),
        direction: Direction::Ascending,
    }])
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
    if patterned::is_logical_query(reader.catalog(), collection, filter) {
        return patterned::query(reader, collection, filter, sort, skip, limit);
    }
    query_stored(reader, collection, filter, sort, skip, limit)
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
    let plan = planner::plan(reader.catalog().collections.get(collection), filter, sort);
    let mut execution = Execution::new(plan.access.clone(), plan.docs);
    let skip = usize::try_from(skip).unwrap_or(usize::MAX);
    let mut matches = Vec::new();
    if let Some(sort) = &plan.sort {
        matches = execution.collect(reader, filter)?;
        sort_matches(&mut matches, sort)?;
    } else {
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
    Document::from_reader(bytes)
        .map_err(|error| Error::corruption(format!("a stored document is not valid BSON: {error}")))
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
    projection
        .apply_matched(&document, details)
        .map_err(Error::argument)
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
    let id = txn.catalog_mut().allocate_id();
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
    if changes.is_empty() {
        // Nothing matched (possibly in a collection that does not exist).
        return Ok(());
    }
    let catalog: Arc<Catalog> = txn.catalog_arc();
    let meta = catalog
        .collections
        .get(collection)
        .expect("the caller made sure the collection exists");
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
/// refuses and field names no document may store (every insert and upsert comes here).
pub(crate) fn assign_id(mut document: Document) -> Result<Document> {
    let id = match document.remove("_id") {
        Some(id) => id,
        None => Bson::ObjectId(ObjectId::new()),
    };
    check_id(&id).map_err(Error::document)?;
    check_field_names(&document).map_err(Error::document)?;
    let mut stored = Document::new();
    stored.insert("_id", id);
    stored.extend(document);
    Ok(stored)
}

/// Inserts one document; returns its `_id` and the stored document.
pub(crate) fn insert(
    txn: &mut WriteTxn,
    store: &Store,
    collection: &str,
    document: Document,
) -> Result<(Bson, Document)> {
    let catalog = txn.catalog_arc();
    match patterned::role(&catalog, collection) {
        Role::Main(engine) => patterned::insert(txn, store, &engine, document),
        Role::Side(policies) => patterned::insert_side(txn, store, collection, &policies, document),
        Role::Plain => insert_stored(txn, store, collection, document),
    }
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
    Ok((id, document))
}

/// The stored document with `_id` key `id_key`.
pub(crate) fn stored_by_key(
    reader: &dyn Reader,
    collection: &str,
    id_key: &[u8],
) -> Result<Option<Document>> {
    let Some(meta) = reader.catalog().collections.get(collection) else {
        return Ok(None);
    };
    reader
        .get(meta.docs, id_key)?
        .map(|bytes| decode(&bytes))
        .transpose()
}

/// Whether an operation requires an operator update, a replacement, or either.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum UpdateKind {
    Operators,
    Replacement,
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
    let now = DateTime::now();
    let sort = id_order();
    let matches = if multi {
        query(txn, collection, filter, None, 0, None)?.matches
    } else {
        query(txn, collection, filter, Some(&sort), 0, Some(1))?.matches
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
    let catalog = txn.catalog_arc();
    let role = patterned::role(&catalog, collection);
    if let Role::Main(engine) = &role {
        // Each main document is one logical write through the pattern engine; the statement
        // stages them together, so unique indexes see its final state here too.
        let mut statement = Statement::default();
        let mut modified_count = 0;
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
            if updated.is_some() {
                modified_count += 1;
            }
        }
        patterned::finish(statement, txn, store)?;
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
    write_statement(txn, store, collection, &role, changes)?;
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
    role: &Role<'_>,
    changes: Vec<DocumentChange<'_>>,
) -> Result<()> {
    if let Role::Side(policies) = role {
        return patterned::write_side_documents(txn, store, collection, policies, changes);
    }
    write_documents(txn, collection, changes)
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
    let sort = id_order();
    let matches = if multi {
        query(txn, collection, filter, None, 0, None)?.matches
    } else {
        query(txn, collection, filter, Some(&sort), 0, Some(1))?.matches
    };
    let catalog = txn.catalog_arc();
    let role = patterned::role(&catalog, collection);
    if let Role::Main(engine) = &role {
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
    write_statement(txn, store, collection, &role, changes)?;
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
    let catalog = txn.catalog_arc();
    let role = patterned::role(&catalog, collection);
    if let Role::Main(engine) = &role {
        let before = decode(&found.bytes)?;
        let mut statement = Statement::default();
        let after = patterned::apply_update(
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
        let returned = if options.return_after {
            after.unwrap_or(before)
        } else {
            before
        };
        return project(options.projection, filter, returned).map(Some);
    }
    let returned = match apply_update(filter, update, &found, now)? {
        Some((before, after, bytes)) => {
            let change = DocumentChange {
                id_key: &found.id_key,
                old: Some(&before),
                new: Some((&after, bytes)),
            };
            write_statement(txn, store, collection, &role, vec![change])?;
            if options.return_after { after } else { before }
        }
        None => decode(&found.bytes)?,
    };
    project(options.projection, filter, returned).map(Some)
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
    let id_sort = id_order();
    let sort = sort.unwrap_or(&id_sort);
    let Some(found) = query(txn, collection, filter, Some(sort), 0, Some(1))?
        .matches
        .pop()
    else {
        return Ok(None);
    };
    let before = decode(&found.bytes)?;
    let catalog = txn.catalog_arc();
    let role = patterned::role(&catalog, collection);
    if let Role::Main(engine) = &role {
        let mut statement = Statement::default();
        patterned::delete(txn, store, engine, &before, &mut statement)?;
        patterned::finish(statement, txn, store)?;
    } else {
        let change = DocumentChange {
            id_key: &found.id_key,
            old: Some(&before),
            new: None,
        };
        write_statement(txn, store, collection, &role, vec![change])?;
    }
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
/// first appearance.
pub(crate) fn distinct(
    reader: &dyn Reader,
    collection: &str,
    field: &str,
    filter: &Filter,
) -> Result<Vec<Bson>> {
    let path = FieldPath::parse(field).map_err(Error::argument)?;
    let mut values: Vec<Bson> = Vec::new();
    let logical = patterned::is_managed_path(reader.catalog(), collection, path.as_str());
    for found in query(reader, collection, filter, None, 0, None)?.matches {
        let mut document = decode(&found.bytes)?;
        if logical {
            document = patterned::expand(reader, collection, &document)?;
        }
        let mut reached = Vec::new();
        if let Some((first, rest)) = path.parts().split_first()
            && let Some(child) = document.get(first)
        {
            spillway_doc::path::distinct_values(child, rest, &mut reached);
        }
        for value in reached {
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

/// Creates an index (building its entries from the existing documents in the same batch);
/// returns its name. Creating an identical index again does nothing.
pub(crate) fn create_index(
    txn: &mut WriteTxn,
    store: &Store,
    collection: &str,
    keys: &Document,
    unique: bool,
    name: Option<&str>,
) -> Result<String> {
    validate_collection_name(collection)?;
    let fields = parse_index_keys(collection, keys)?;
    let name = name.map_or_else(|| default_index_name(keys), str::to_string);
    if name.is_empty() || name.len() > MAX_INDEX_NAME_LEN || name.contains('\0') {
        return Err(Error::invalid_index(
            collection,
            format!("index name {name:?} must be 1 to {MAX_INDEX_NAME_LEN} bytes without NUL"),
        ));
    }
    let same_keys = |spec: &Document| {
        parse_index_keys(collection, spec).is_ok_and(|known| {
            known.len() == fields.len()
                && known
                    .iter()
                    .zip(&fields)
                    .all(|(a, b)| a.0.as_str() == b.0.as_str() && a.1 == b.1)
        })
    };
    if same_keys(&bson::doc! { "_id": 1 }) {
        if name != ID_INDEX_NAME && name != "_id_1" || unique {
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
    for index in &meta.indexes {
        let keys_match = same_keys(&index.spec);
        if index.name == name || keys_match {
            if index.name == name && keys_match && index.unique == unique {
                return Ok(name);
            }
            return Err(Error::invalid_index(
                collection,
                format!(
                    "an index named '{}' with keys {} and unique: {} exists already; it conflicts with '{name}' {keys} unique: {unique}",
                    index.name, index.spec, index.unique
                ),
            ));
        }
    }
    let docs = meta.docs;
    let id = txn.catalog_mut().allocate_id();
    let keyspace_name = format!("{INDEX_KEYSPACE_PREFIX}{id}.{collection}.{name}");
    let keyspace = txn.create_keyspace(store, &keyspace_name)?;
    let mut index = IndexMeta {
        name: name.clone(),
        spec: keys.clone(),
        fields,
        unique,
        keyspace_name,
        keyspace,
        multikey: false,
    };
    // Entries hold their key and their document's `_id` key, never the document: one copy of
    // a document per entry made a 20,000-element array take tens of gigabytes.
    let mut entries: Vec<(Vec<u8>, Arc<[u8]>)> = Vec::new();
    for entry in txn.scan(docs, &crate::txn::KeyRange::all(), false)? {
        let (id_key, bytes) = entry?;
        let document = decode(&bytes)?;
        let (document_entries, multikey) = index_entries(collection, &index, &document, &id_key)?;
        index.multikey |= multikey;
        let id_key: Arc<[u8]> = Arc::from(&id_key[..]);
        entries.extend(
            document_entries
                .into_iter()
                .map(|entry| (entry.key, Arc::clone(&id_key))),
        );
    }
    entries.sort_by(|a, b| a.0.cmp(&b.0));
    if unique {
        for pair in entries.windows(2) {
            if pair[0].0 == pair[1].0 && pair[0].1 != pair[1].1 {
                let document = stored_by_key(txn, collection, &pair[1].1)?.ok_or_else(|| {
                    Error::corruption(format!(
                        "collection '{collection}': a document the index build just read is gone"
                    ))
                })?;
                return Err(duplicate(collection, &index, &document, &pair[1].0));
            }
        }
    }
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
    patterned::mirror_index(txn, store, collection, keys)?;
    Ok(name)
}

/// Drops an index by name.
pub(crate) fn drop_index(txn: &mut WriteTxn, collection: &str, name: &str) -> Result<()> {
    validate_collection_name(collection)?;
    if name == ID_INDEX_NAME {
        return Err(Error::invalid_index(
            collection,
            "the _id index cannot be dropped",
        ));
    }
    let not_found = || {
        Error::new(ErrorKind::IndexNotFound {
            collection: collection.to_string(),
            index: name.to_string(),
        })
    };
    let meta = txn
        .catalog()
        .collections
        .get(collection)
        .ok_or_else(not_found)?;
    let position = meta
        .indexes
        .iter()
        .position(|index| index.name == name)
        .ok_or_else(not_found)?;
    let keyspace = meta.indexes[position].keyspace;
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

/// Drops a collection and its indexes; `false` if it did not exist.
pub(crate) fn drop_collection(txn: &mut WriteTxn, store: &Store, collection: &str) -> Result<bool> {
    validate_collection_name(collection)?;
    patterned::before_drop(txn, store, collection)?;
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
