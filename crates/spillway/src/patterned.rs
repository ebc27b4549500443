//! The pattern layer wired into the facade. [`spillway_pattern`] owns the pattern logic
//! (write paths, logical matching, resyncs, migrations, validation); this module is its
//! backend over a reader or a write transaction, and the glue from the facade's operations
//! to it: which planner runs a logical query, which `WriteTxn` a statement stages into, and
//! the `Database` methods that declare, remove, migrate and verify policies.
//!
//! Every engine batch goes through `storage::write_documents` per collection, so indexes stay in
//! step, unique indexes are checked against the state the whole batch leaves, and nothing
//! recurses into the pattern layer. Every logical write happens inside one `WriteTxn`, so it
//! commits as one store batch. Policies are stored in the catalog (the backend's policy
//! store); migrations run in batches of [`migration::MIGRATION_BATCH`] documents, each its
//! own commit under the write lock, so a crash resumes where it stopped (at the next open,
//! or with [`Database::resume_patterns`]).

use std::ops::Bound;
use std::sync::Arc;

use bson::spec::ElementType;
use bson::{Bson, DateTime, Document, RawDocument, RawDocumentBuf};
use spillway_doc::filter::Filter;
use spillway_doc::key;
use spillway_doc::projection::{ArrayRead, Projection, slice_window};
use spillway_doc::raw::{self, Writer as RawWriter};
use spillway_doc::sort::SortSpec;
use spillway_doc::update::Update;
use spillway_pattern::{
    Engine, Policy, Query, ReadBackend, Statement, Write, WriteBackend, matching, migration, writes,
};
use spillway_store::Store;

use crate::catalog::{Catalog, ID_INDEX_NAME};
use crate::error::{Error, ErrorKind, Result};
use crate::exec::{Execution, Match, Matcher, stored_document};
use crate::planner;
use crate::route::Route;
use crate::storage::{self, QueryRun};
use crate::txn::{KeyRange, Reader, WriteTxn};

/// The pattern layer's refusals as the facade's errors: invalid input keeps its kind (filter,
/// update, document), a duplicate `_id` is a duplicate key on the `_id` index, damaged side
/// documents are corruption.
impl From<spillway_pattern::PatternError> for Error {
    fn from(error: spillway_pattern::PatternError) -> Self {
        use spillway_pattern::{Input, PatternError};
        match error {
            PatternError::Corrupt { .. } => Error::corruption(error.to_string()),
            PatternError::Input { input, error } => match input {
                Input::Filter => Error::filter(error),
                Input::Update => Error::update(error),
                Input::Document => Error::document(error),
            },
            PatternError::DuplicateId { collection, id } => Error::new(ErrorKind::DuplicateKey {
                collection,
                index: ID_INDEX_NAME.to_string(),
                key: *id,
            }),
            other => Error::new(ErrorKind::Pattern(other)),
        }
    }
}

/// The pattern engine's reads over any reader (a snapshot or a transaction).
pub(crate) struct ReaderBackend<'r> {
    pub(crate) reader: &'r dyn Reader,
}

/// The pattern engine's reads and writes over a write transaction.
pub(crate) struct TxnBackend<'t> {
    pub(crate) txn: &'t mut WriteTxn,
    pub(crate) store: &'t Store,
}

fn backend_get(reader: &dyn Reader, collection: &str, id: &Bson) -> Result<Option<Document>> {
    storage::stored_by_key(reader, collection, &key::to_key(id))
}

fn backend_find(reader: &dyn Reader, collection: &str, query: &Query) -> Result<Vec<Document>> {
    backend_find_raw(reader, collection, query)?
        .iter()
        .map(|raw| storage::decode(raw.as_bytes()))
        .collect()
}

/// A backend query's filter and sort, parsed.
fn parse_query(query: &Query) -> Result<(Filter, Option<SortSpec>)> {
    let filter = Filter::parse(&query.filter).map_err(Error::filter)?;
    let sort = query
        .sort
        .as_ref()
        .map(SortSpec::parse)
        .transpose()
        .map_err(Error::argument)?;
    Ok((filter, sort))
}

fn backend_find_raw(
    reader: &dyn Reader,
    collection: &str,
    query: &Query,
) -> Result<Vec<RawDocumentBuf>> {
    let (filter, sort) = parse_query(query)?;
    let limit = query
        .limit
        .map(|limit| usize::try_from(limit).unwrap_or(usize::MAX));
    let run = storage::query_stored(
        reader,
        collection,
        &filter,
        sort.as_ref(),
        query.skip,
        limit,
    )?;
    run.matches
        .into_iter()
        .map(|found| {
            RawDocumentBuf::from_bytes(found.bytes).map_err(|error| {
                Error::corruption(format!("a stored document is not valid BSON: {error}"))
            })
        })
        .collect()
}

/// [`backend_find_raw`]'s documents shown to `visit` one by one, each read where it lies
/// in the reader when the query has no skip or limit and its plan streams
/// ([`storage::for_each_stored`]).
fn backend_for_each_raw(
    reader: &dyn Reader,
    collection: &str,
    query: &Query,
    visit: &mut dyn FnMut(&RawDocument) -> Result<()>,
) -> Result<()> {
    if query.skip != 0 || query.limit.is_some() {
        for document in backend_find_raw(reader, collection, query)? {
            visit(&document)?;
        }
        return Ok(());
    }
    let (filter, sort) = parse_query(query)?;
    storage::for_each_stored(reader, collection, &filter, sort.as_ref(), |bytes| {
        visit(stored_document(bytes)?)
    })
}

/// The outlier pattern's last bucket: the first entry of one index range
/// ([`planner::last_in_group`]) and its document, or the query when no index answers it so.
fn backend_find_last_raw(
    reader: &dyn Reader,
    collection: &str,
    field: &str,
    value: &Bson,
    order_by: &str,
) -> Result<Option<RawDocumentBuf>> {
    let Some(meta) = reader.catalog().collections.get(collection) else {
        return Ok(None);
    };
    let Some(last) = planner::last_in_group(meta, field, value, order_by) else {
        let query = Query::last_in_group(field, value, order_by);
        return Ok(backend_find_raw(reader, collection, &query)?.pop());
    };
    let Some(entry) = reader.scan(last.index, &last.range, last.reverse)?.next() else {
        return Ok(None);
    };
    let (_, id_key) = entry?;
    let bytes = reader.get(meta.docs, &id_key)?.ok_or_else(|| {
        Error::corruption(format!(
            "an entry of an index of '{collection}' names a document that is not stored"
        ))
    })?;
    Ok(Some(stored_document(&bytes)?.to_owned()))
}

fn backend_count(reader: &dyn Reader, collection: &str, filter: &Document) -> Result<u64> {
    let filter = Filter::parse(filter).map_err(Error::filter)?;
    Ok(
        storage::query_stored(reader, collection, &filter, None, 0, None)?
            .matches
            .len() as u64,
    )
}

fn backend_index_keys(reader: &dyn Reader, collection: &str) -> Vec<Document> {
    reader
        .catalog()
        .collections
        .get(collection)
        .map(|meta| {
            meta.indexes
                .iter()
                .map(|index| index.spec.clone())
                .collect()
        })
        .unwrap_or_default()
}

/// The stored documents of `collection` after `through` in `_id` order (the order of the
/// documents keyspace), at most `limit`.
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
        documents.push(storage::decode(&bytes)?);
        if documents.len() >= limit {
            break;
        }
    }
    Ok(documents)
}

/// The reads of both backends, over the reader each one has.
macro_rules! reads_over {
    ($backend:ty, $self:ident => $reader:expr) => {
        impl ReadBackend for $backend {
            type Error = Error;

            fn get(&$self, collection: &str, id: &Bson) -> Result<Option<Document>> {
                backend_get($reader, collection, id)
            }

            fn find(&$self, collection: &str, query: &Query) -> Result<Vec<Document>> {
                backend_find($reader, collection, query)
            }

            fn find_raw(&$self, collection: &str, query: &Query) -> Result<Vec<RawDocumentBuf>> {
                backend_find_raw($reader, collection, query)
            }

            fn for_each_raw(
                &$self,
                collection: &str,
                query: &Query,
                visit: &mut dyn FnMut(&RawDocument) -> Result<()>,
            ) -> Result<()> {
                backend_for_each_raw($reader, collection, query, visit)
            }

            fn find_last_raw(
                &$self,
                collection: &str,
                field: &str,
                value: &Bson,
                order_by: &str,
            ) -> Result<Option<RawDocumentBuf>> {
                backend_find_last_raw($reader, collection, field, value, order_by)
            }

            fn count(&$self, collection: &str, filter: &Document) -> Result<u64> {
                backend_count($reader, collection, filter)
            }

            fn policies(&$self) -> Result<Vec<Policy>> {
                Ok($reader.catalog().policies.clone())
            }

            fn collection_exists(&$self, collection: &str) -> Result<bool> {
                Ok($reader.catalog().collections.contains_key(collection))
            }

            fn index_keys(&$self, collection: &str) -> Result<Vec<Document>> {
                Ok(backend_index_keys($reader, collection))
            }

            fn documents_after(
                &$self,
                collection: &str,
                through: Option<&Bson>,
                limit: usize,
            ) -> Result<Vec<Document>> {
                documents_after($reader, collection, through, limit)
            }
        }
    };
}

reads_over!(ReaderBackend<'_>, self => self.reader);
reads_over!(TxnBackend<'_>, self => &*self.txn);

impl WriteBackend for TxnBackend<'_> {
    fn apply(&mut self, batch: Vec<Write>) -> Result<()> {
        // Atomic because the whole transaction is discarded when any operation fails.
        apply_writes(self.txn, self.store, batch)
    }

    fn ensure_index(&mut self, collection: &str, keys: &Document) -> Result<()> {
        storage::create_index(
            self.txn,
            self.store,
            collection,
            keys,
            false,
            None,
            crate::catalog::IndexSettings::default(),
        )
        .map(drop)
    }

    fn create_collection(&mut self, collection: &str) -> Result<()> {
        storage::ensure_collection(self.txn, self.store, collection)
    }

    fn drop_collection(&mut self, collection: &str) -> Result<()> {
        storage::drop_collection(self.txn, collection).map(drop)
    }

    fn save_policies(&mut self, policies: Vec<Policy>) -> Result<()> {
        *self.txn.policies_mut() = policies;
        Ok(())
    }
}
/// One document touched by a batch of engine writes, as the batch's writes so far leave it.
/// The version before the batch is read when the changes are staged: nothing is staged until
/// every write of the batch is computed, so the transaction still holds it then.
struct Touched {
    collection: String,
    id_key: Vec<u8>,
    existed: bool,
    after: Version,
}

/// A document as the writes of a batch so far leave it.
enum Version {
    /// As stored: no write of the batch changed it yet.
    Stored,
    /// Not there: never stored, or deleted by the batch.
    Absent,
    /// Inserted or replaced by the batch.
    Decoded(Document),
    /// Stored bytes with values appended to the arrays `fields`, never decoded.
    Spliced { bytes: Vec<u8>, fields: Vec<String> },
    /// As stored, and claimed: written back as it is, so that a concurrent write of it
    /// conflicts with this batch.
    Claimed,
}

/// Stages a batch of engine writes in the transaction: the inserts, replacements, deletes
/// and appends of each collection go through `storage::write_documents` together, so unique
/// indexes are checked against the state the whole batch leaves. Appends to arrays no index
/// or validator reads, and claims, change no index entry: their bytes are put as they are.
/// Nothing is buffered for a collection whose writes are refused; the caller discards the
/// transaction on any error.
fn apply_writes(txn: &mut WriteTxn, store: &Store, batch: Vec<Write>) -> Result<()> {
    let mut touched: Vec<Touched> = Vec::new();
    let mut positions: std::collections::HashMap<(String, Vec<u8>), usize> =
        std::collections::HashMap::new();
    for write in batch {
        // An insert gets its `_id` (if it lacks one) before its slot is keyed by it.
        let write = match write {
            Write::Insert {
                collection,
                document,
            } => Write::Insert {
                collection,
                document: storage::prepare_insert(document)?,
            },
            other => other,
        };
        let id = match &write {
            Write::Insert { document, .. } | Write::Replace { document, .. } => {
                document.get("_id").cloned().unwrap_or(Bson::Null)
            }
            Write::Delete { id, .. } | Write::Push { id, .. } | Write::Claim { id, .. } => {
                id.clone()
            }
        };
        if let Write::Insert { collection, .. } = &write {
            storage::ensure_collection(txn, store, collection)?;
        }
        let slot = (write.collection().to_string(), key::to_key(&id));
        let position = if let Some(position) = positions.get(&slot) {
            *position
        } else {
            let existed = storage::is_stored(&*txn, &slot.0, &slot.1)?;
            touched.push(Touched {
                collection: slot.0.clone(),
                id_key: slot.1.clone(),
                existed,
                after: if existed {
                    Version::Stored
                } else {
                    Version::Absent
                },
            });
            positions.insert(slot, touched.len() - 1);
            touched.len() - 1
        };
        let document = &mut touched[position];
        let before = std::mem::replace(&mut document.after, Version::Absent);
        document.after = next_version(&*txn, document, before, write, id)?;
    }
    let mut collections: Vec<String> = Vec::new();
    for document in &touched {
        if !collections.contains(&document.collection) {
            collections.push(document.collection.clone());
        }
    }
    for collection in collections {
        stage_versions(txn, &mut touched, &collection)?;
    }
    Ok(())
}

/// The version of `document` (`_id` `id`) after `write`, from its version `before` it.
fn next_version(
    txn: &WriteTxn,
    document: &Touched,
    before: Version,
    write: Write,
    id: Bson,
) -> Result<Version> {
    let missing = |what: &str| {
        Error::corruption(format!(
            "collection '{}' has no document with _id {id} to {what}",
            document.collection
        ))
    };
    let no_array = |field: &str| {
        Error::corruption(format!(
            "the document with _id {id} of collection '{}' has no array '{field}' to append to",
            document.collection
        ))
    };
    Ok(match (write, before) {
        (Write::Insert { document: new, .. }, Version::Absent) => Version::Decoded(new),
        (Write::Insert { .. }, _) => {
            return Err(Error::new(ErrorKind::DuplicateKey {
                collection: document.collection.clone(),
                index: ID_INDEX_NAME.to_string(),
                key: id,
            }));
        }
        (Write::Replace { .. }, Version::Absent) => return Err(missing("replace")),
        (Write::Replace { document: new, .. }, _) => {
            storage::check_storable(&new)?;
            Version::Decoded(new)
        }
        (Write::Delete { .. }, _) => Version::Absent,
        (Write::Claim { .. }, Version::Absent) => return Err(missing("claim")),
        (Write::Claim { .. }, Version::Stored | Version::Claimed) => Version::Claimed,
        (Write::Claim { .. }, changed) => changed,
        (Write::Push { .. }, Version::Absent) => return Err(missing("append to")),
        (Write::Push { field, values, .. }, Version::Decoded(mut current)) => {
            let Some(Bson::Array(items)) = current.get_mut(field.as_str()) else {
                return Err(no_array(&field));
            };
            items.extend(values);
            storage::check_storable(&current)?;
            Version::Decoded(current)
        }
        (Write::Push { field, values, .. }, version) => {
            let (appended, mut fields) = if let Version::Spliced { bytes, fields } = version {
                (storage::append_to_array(&bytes, &field, values)?, fields)
            } else {
                let stored = storage::stored_bytes(txn, &document.collection, &document.id_key)?
                    .ok_or_else(|| missing("append to"))?;
                (
                    storage::append_to_array(&stored, &field, values)?,
                    Vec::new(),
                )
            };
            let bytes = appended.ok_or_else(|| no_array(&field))?;
            fields.push(field);
            Version::Spliced { bytes, fields }
        }
    })
}

/// Stages the final versions of the documents of `collection` among `touched`: the changes
/// through `storage::write_documents` together, the appends no index reads and the claims
/// put as they are.
fn stage_versions(txn: &mut WriteTxn, touched: &mut [Touched], collection: &str) -> Result<()> {
    let catalog = txn.catalog_arc();
    let meta = catalog.collections.get(collection);
    let mut versions = Vec::new();
    let mut unindexed = Vec::new();
    for document in touched
        .iter_mut()
        .filter(|document| document.collection == collection)
    {
        let new = match std::mem::replace(&mut document.after, Version::Absent) {
            Version::Stored => continue,
            Version::Claimed => {
                let bytes = storage::stored_bytes(&*txn, collection, &document.id_key)?
                    .expect("a claimed document exists");
                unindexed.push((&document.id_key, bytes));
                continue;
            }
            Version::Absent if !document.existed => continue,
            Version::Absent => None,
            Version::Decoded(after) => {
                let bytes = storage::encode(&after)?;
                Some((after, bytes))
            }
            Version::Spliced { bytes, fields } => {
                let meta = meta.expect("a spliced document was stored");
                if !storage::change_reads(meta, &fields) {
                    unindexed.push((&document.id_key, bytes));
                    continue;
                }
                Some((storage::decode_for_change(meta, &bytes)?, bytes))
            }
        };
        let before = if document.existed {
            storage::stored_for_change(&*txn, collection, &document.id_key)?
        } else {
            None
        };
        versions.push((&document.id_key, before, new));
    }
    let changes = versions
        .iter_mut()
        .map(|(id_key, old, new)| storage::DocumentChange {
            id_key,
            old: old.as_ref(),
            new: new
                .as_mut()
                .map(|(document, bytes)| (&*document, std::mem::take(bytes))),
        })
        .collect();
    // A main collection's validator is checked on the logical documents of the statement
    // (`LogicalValidation`), not on the main documents the engine stores.
    let validate_stored = !is_main_collection(&catalog, collection);
    storage::write_documents_validated(txn, collection, changes, validate_stored)?;
    if let Some(meta) = meta {
        for (id_key, bytes) in unindexed {
            txn.put(meta.docs, id_key.clone(), bytes);
        }
    }
    Ok(())
}

/// Whether `collection` is the main collection of a policy.
fn is_main_collection(catalog: &Catalog, collection: &str) -> bool {
    catalog
        .policies
        .iter()
        .any(|policy| policy.pattern.collection() == collection)
}

/// A statement's check of a main collection's validator against logical documents, the
/// whole arrays as the application sees them: a policy changes cost, never answers, so a
/// document is valid or not whatever part of its arrays sits in side documents, and the
/// outlier's flag (which a logical document has not) never fails a schema.
///
/// Made before the statement changes anything (under `validationLevel: "moderate"` it keeps
/// the logical documents as they were, since a document that did not match then is not
/// checked), checked once the statement is staged: the caller discards the transaction on
/// the error, so nothing of the refused statement is written.
pub(crate) struct LogicalValidation {
    collection: String,
    /// Each document the statement may change, by key, with its logical version before it
    /// (kept only when the level needs it).
    before: Vec<(Vec<u8>, Option<Document>)>,
}

impl LogicalValidation {
    /// `None` when the statement checks nothing: no validator, level `off`, or bypassed.
    fn needed<'c>(txn: &'c WriteTxn, collection: &str) -> Option<&'c crate::catalog::Validation> {
        let validation = &txn.catalog().collections.get(collection)?.validation;
        let checks = validation.validator.is_some()
            && validation.level != crate::ValidationLevel::Off
            && !txn.bypass_validation;
        checks.then_some(validation)
    }

    /// Before a statement on main collection `collection` changes the documents `found`.
    pub(crate) fn before(
        txn: &WriteTxn,
        collection: &str,
        found: &[&Match],
    ) -> Result<Option<LogicalValidation>> {
        let Some(validation) = LogicalValidation::needed(txn, collection) else {
            return Ok(None);
        };
        let keeps_before = validation.level == crate::ValidationLevel::Moderate;
        let mut before = Vec::with_capacity(found.len());
        for found in found {
            let logical = if keeps_before {
                let stored = storage::decode(&found.bytes)?;
                Some(expand(txn, collection, &stored)?)
            } else {
                None
            };
            before.push((found.id_key.clone(), logical));
        }
        Ok(Some(LogicalValidation {
            collection: collection.to_string(),
            before,
        }))
    }

    /// After the statement is staged: every document it changed (`changed` says which) is
    /// checked as it now is.
    pub(crate) fn check(self, txn: &mut WriteTxn, changed: impl Fn(&[u8]) -> bool) -> Result<()> {
        let catalog = txn.catalog_arc();
        let Some(meta) = catalog.collections.get(&self.collection) else {
            return Ok(());
        };
        let mut after = Vec::new();
        for (id_key, _) in self.before.iter().filter(|(id_key, _)| changed(id_key)) {
            if let Some(stored) = storage::stored_by_key(&*txn, &self.collection, id_key)? {
                after.push((id_key, expand(&*txn, &self.collection, &stored)?));
            }
        }
        let changes: Vec<storage::DocumentChange<'_>> = after
            .iter()
            .map(|(id_key, new)| storage::DocumentChange {
                id_key,
                old: self
                    .before
                    .iter()
                    .find(|(key, _)| key == *id_key)
                    .and_then(|(_, old)| old.as_ref()),
                new: Some((new, Vec::new())),
            })
            .collect();
        let warnings = storage::check_validation(meta, &changes)?;
        txn.validation_warnings.extend(warnings);
        Ok(())
    }

    /// Checks a logical document about to be inserted into main collection `collection`.
    fn check_insert(txn: &mut WriteTxn, collection: &str, document: &Document) -> Result<()> {
        if LogicalValidation::needed(txn, collection).is_none() {
            return Ok(());
        }
        let catalog = txn.catalog_arc();
        let change = storage::DocumentChange {
            id_key: &[],
            old: None,
            new: Some((document, Vec::new())),
        };
        let warnings = storage::check_validation(&catalog.collections[collection], &[change])?;
        txn.validation_warnings.extend(warnings);
        Ok(())
    }
}

/// Whether `path` reaches into a field a policy of `collection` owns besides its array (the
/// outlier's flag): stored documents have it, logical documents do not.
pub(crate) fn is_reserved_path(catalog: &Catalog, collection: &str, path: &str) -> bool {
    let head = path.split('.').next().unwrap_or(path);
    catalog.policies.iter().any(|policy| {
        policy.pattern.collection() == collection
            && policy.pattern.reserved_main_field() == Some(head)
    })
}

/// The top-level fields the policies of `collection` manage.
pub(crate) fn managed_fields(catalog: &Catalog, collection: &str) -> Vec<String> {
    Route::of(catalog, collection)
        .engine()
        .map(|engine| {
            engine
                .managed_fields()
                .into_iter()
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default()
}

/// Removes from a stored document of `collection` the fields its policies own besides their
/// arrays (the outlier's flag), which logical documents do not have.
pub(crate) fn remove_reserved_fields(catalog: &Catalog, collection: &str, document: &mut Document) {
    for policy in &catalog.policies {
        if policy.pattern.collection() == collection
            && let Some(reserved) = policy.pattern.reserved_main_field()
        {
            document.remove(reserved);
        }
    }
}

/// Sorts stored main documents of `engine`'s collection by `sort` on their logical views:
/// each document whose stored form may differ from its logical one is expanded once, for the
/// comparison only; the matches keep their stored bytes.
pub(crate) fn sort_logically(
    reader: &dyn Reader,
    engine: &Engine<'_>,
    matches: &mut Vec<Match>,
    sort: &SortSpec,
) -> Result<()> {
    let mut keyed = Vec::with_capacity(matches.len());
    for found in matches.drain(..) {
        let stored = stored_document(&found.bytes)?;
        let view = if engine.may_differ_raw(stored) {
            expand_raw(reader, engine, stored, false)?
        } else {
            None
        };
        keyed.push((view, found));
    }
    keyed.sort_by(|(a_view, a), (b_view, b)| {
        let a = a_view
            .as_deref()
            .unwrap_or_else(|| RawDocument::from_bytes(&a.bytes).expect("checked above"));
        let b = b_view
            .as_deref()
            .unwrap_or_else(|| RawDocument::from_bytes(&b.bytes).expect("checked above"));
        sort.compare_raw(a, b)
    });
    matches.extend(keyed.into_iter().map(|(_, found)| found));
    Ok(())
}

/// Evaluates a filter on the logical document of every main document whose stored form may
/// differ from it, and on the stored document otherwise.
struct LogicalMatcher<'a> {
    reader: &'a dyn Reader,
    engine: &'a Engine<'a>,
    filter: &'a Filter,
}

impl Matcher for LogicalMatcher<'_> {
    fn matches(&self, document: &RawDocument) -> Result<bool> {
        matches_logical(self.reader, self.engine, self.filter, document)
    }
}

/// Whether the raw stored main document `stored` matches `filter` as a logical document
/// ([`matching::matches_logical`]).
pub(crate) fn matches_logical(
    reader: &dyn Reader,
    engine: &Engine<'_>,
    filter: &Filter,
    stored: &RawDocument,
) -> Result<bool> {
    matching::matches_logical(engine, &ReaderBackend { reader }, filter, stored)
}

/// A query whose filter touches managed fields: planned on its other clauses, matched on
/// logical documents.
pub(crate) fn query(
    reader: &dyn Reader,
    engine: &Engine<'_>,
    collection: &str,
    filter: &Filter,
    sort: Option<&SortSpec>,
    skip: u64,
    limit: Option<usize>,
) -> Result<QueryRun> {
    let catalog = reader.catalog();
    let planning = matching::planning_filter(engine, filter);
    let plan = planner::plan(catalog.collections.get(collection), &planning, sort);
    let mut execution = Execution::new(Arc::clone(&plan.access), plan.docs);
    let matcher = LogicalMatcher {
        reader,
        engine,
        filter,
    };
    if let Some(run) = index_union(reader, engine, filter, &matcher, sort, skip, limit)? {
        return Ok(run);
    }
    let mut matches = execution.collect(reader, &matcher)?;
    if let Some(sort) = &plan.sort {
        storage::sort_matches(&mut matches, sort)?;
    }
    let skip = usize::try_from(skip).unwrap_or(usize::MAX);
    Ok(QueryRun {
        matches: storage::skip_and_limit(matches, skip, limit),
        keys_examined: execution.keys_examined,
        docs_examined: execution.docs_examined,
        plan,
        described: None,
    })
}

/// How a streaming read of `collection` with `filter` meets the policies.
pub(crate) struct ReadShape {
    /// What the plan scans with: the filter, or its clauses on unmanaged fields when
    /// candidates are matched on their logical views.
    pub(crate) scan_filter: Arc<Filter>,
    /// Whether the filter touches a managed field.
    pub(crate) logical_filter: bool,
    /// Whether the collection is the main collection of a policy.
    pub(crate) has_policies: bool,
    /// Whether the read runs as a union of both sides' index scans
    /// ([`matching::union_plan`]), which is computed whole.
    pub(crate) union: bool,
}

impl ReadShape {
    /// The shape of a read that meets no policy: the filter scanned as it is.
    pub(crate) fn plain(filter: &Arc<Filter>) -> ReadShape {
        ReadShape {
            scan_filter: Arc::clone(filter),
            logical_filter: false,
            has_policies: false,
            union: false,
        }
    }
}

/// The [`ReadShape`] of a read of `collection` with `filter`.
pub(crate) fn read_shape(
    catalog: &Catalog,
    route: &Route<'_>,
    filter: &Arc<Filter>,
) -> Result<ReadShape> {
    let Some(engine) = route.engine() else {
        return Ok(ReadShape::plain(filter));
    };
    let logical_filter = matching::is_logical_query(engine, filter);
    if !logical_filter {
        return Ok(ReadShape {
            scan_filter: Arc::clone(filter),
            logical_filter,
            has_policies: true,
            union: false,
        });
    }
    let union = matching::union_plan(engine, filter, |collection, path| {
        leads_an_index(catalog, collection, path)
    })?
    .is_some();
    Ok(ReadShape {
        scan_filter: Arc::new(matching::planning_filter(engine, filter)),
        logical_filter,
        has_policies: true,
        union,
    })
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

/// Runs the engine's union plan ([`matching::union_plan`]) when the filter and both sides'
/// indexes allow it: two index scans, the candidates' union, each candidate matched on its
/// logical document. `None` otherwise.
fn index_union(
    reader: &dyn Reader,
    engine: &Engine<'_>,
    filter: &Filter,
    matcher: &LogicalMatcher<'_>,
    sort: Option<&SortSpec>,
    skip: u64,
    limit: Option<usize>,
) -> Result<Option<QueryRun>> {
    let catalog = reader.catalog();
    let collection = engine.collection();
    let Some(union) = matching::union_plan(engine, filter, |collection, path| {
        leads_an_index(catalog, collection, path)
    })?
    else {
        return Ok(None);
    };
    let pattern = &union.policy.pattern;
    let main_run = union_main_scan(reader, collection, &union.main)?;
    let side_run = side_links_scan(
        reader,
        pattern.side_collection(),
        pattern.link_field(),
        &union.side,
    )?;
    // The main documents found through the main index are fetched already; those found
    // through side documents are fetched by their link.
    let fetched: std::collections::HashSet<Vec<u8>> = main_run
        .matches
        .iter()
        .map(|found| found.id_key.clone())
        .collect();
    let mut docs_examined = main_run.docs_examined + side_run.docs_examined;
    let mut candidates: Vec<Match> = main_run.matches;
    if let Some(docs) = catalog.collections.get(collection).map(|meta| meta.docs) {
        for id_key in side_run.links {
            if fetched.contains(&id_key) {
                continue;
            }
            if let Some(bytes) = reader.get(docs, &id_key)? {
                docs_examined += 1;
                candidates.push(Match {
                    id_key,
                    bytes: bytes.into_owned(),
                });
            }
        }
    }
    candidates.sort_by(|a, b| a.id_key.cmp(&b.id_key));
    // Every candidate holds the equality in its main array or a side document, so in its
    // logical array; only the filter's other clauses are left to check.
    let mut matches = Vec::with_capacity(candidates.len());
    let rest = LogicalMatcher {
        reader,
        engine: matcher.engine,
        filter: &union.rest,
    };
    for found in candidates {
        if union.rest.clauses.is_empty() || rest.matches(stored_document(&found.bytes)?)? {
            matches.push(found);
        }
    }
    if let Some(sort) = sort {
        storage::sort_matches(&mut matches, sort)?;
    }
    let skip = usize::try_from(skip).unwrap_or(usize::MAX);
    let matches = storage::skip_and_limit(matches, skip, limit);
    let described = bson::doc! {
        "stage": "PATTERN_UNION",
        "policy": format!("{} {}.{}", pattern.kind(), collection, pattern.field()),
        "inputStages": [
            main_run.plan.describe(),
            { "collection": pattern.side_collection(), "plan": side_run.plan.describe() },
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

/// What a scan for one of the union's clauses must still check on each document it
/// fetches. Each clause is an equality or `$in` of scalars on one field: an index scan on it
/// has exact bounds, and each entry changes with its document in the same snapshot, so every
/// document it finds holds the value and its array (fifty elements in a main document, a
/// hundred per bucket) is not walked again. Any other plan checks the clause.
fn union_clause_check<'f>(
    plan: &planner::Plan,
    clause: &'f Filter,
    match_all: &'f Filter,
) -> &'f Filter {
    if matches!(*plan.access, planner::Access::IxScan { .. }) {
        match_all
    } else {
        clause
    }
}

/// The main documents that match the union's clause on the main collection.
fn union_main_scan(reader: &dyn Reader, collection: &str, clause: &Filter) -> Result<QueryRun> {
    let plan = planner::plan(reader.catalog().collections.get(collection), clause, None);
    let match_all = Filter::match_all();
    let mut execution = Execution::new(Arc::clone(&plan.access), plan.docs);
    let matches = execution.collect(reader, union_clause_check(&plan, clause, &match_all))?;
    Ok(QueryRun {
        matches,
        keys_examined: execution.keys_examined,
        docs_examined: execution.docs_examined,
        plan,
        described: None,
    })
}

/// What [`side_links_scan`] found: the key encodings of the links, sorted and distinct.
struct SideLinks {
    links: Vec<Vec<u8>>,
    plan: planner::Plan,
    keys_examined: u64,
    docs_examined: u64,
}

/// The links of the side documents that match the union's clause on the side collection,
/// read in place from each document (nothing is copied).
fn side_links_scan(
    reader: &dyn Reader,
    side: &str,
    link_field: &str,
    filter: &Filter,
) -> Result<SideLinks> {
    let plan = planner::plan(reader.catalog().collections.get(side), filter, None);
    let match_all = Filter::match_all();
    let check = union_clause_check(&plan, filter, &match_all);
    let mut execution = Execution::new(Arc::clone(&plan.access), plan.docs);
    let mut links: Vec<Vec<u8>> = Vec::new();
    let mut link_key = Vec::new();
    execution.for_each(reader, check, |_, bytes| {
        let link = stored_document(bytes)?.get(link_field).map_err(|error| {
            Error::corruption(format!("a side document is not valid BSON: {error}"))
        })?;
        if let Some(link) = link {
            link_key.clear();
            key::encode_raw(link, &mut link_key);
            // A document's buckets sit together in most scans: skip the repeats cheaply.
            if links.last() != Some(&link_key) {
                links.push(link_key.clone());
            }
        }
        Ok(())
    })?;
    links.sort_unstable();
    links.dedup();
    Ok(SideLinks {
        links,
        plan,
        keys_examined: execution.keys_examined,
        docs_examined: execution.docs_examined,
    })
}

/// After an index is created on a main collection: the policies' side collections get the
/// mirrored index ([`migration::mirror_index`]).
pub(crate) fn mirror_index(
    txn: &mut WriteTxn,
    store: &Store,
    collection: &str,
    keys: &Document,
) -> Result<()> {
    migration::mirror_index(&mut TxnBackend { txn, store }, collection, keys)
}

/// The logical document of a stored document of `collection`.
pub(crate) fn expand(reader: &dyn Reader, collection: &str, stored: &Document) -> Result<Document> {
    let catalog = reader.catalog();
    Engine::new(collection, &catalog.policies).expand(&ReaderBackend { reader }, stored)
}

pub(crate) fn policy_on<'c>(
    catalog: &'c Catalog,
    collection: &str,
    field: &str,
) -> Option<&'c Policy> {
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

/// The logical document of the raw stored document `stored` of `collection`, spliced from
/// raw BSON (flags kept when `keep_flags`); `None` when it is the stored document itself.
pub(crate) fn expand_raw(
    reader: &dyn Reader,
    engine: &Engine<'_>,
    stored: &RawDocument,
    keep_flags: bool,
) -> Result<Option<RawDocumentBuf>> {
    engine.expand_raw(&ReaderBackend { reader }, stored, keep_flags)
}

/// `logical`, an expanded document of `engine`'s collection that a read is about to return,
/// if it fits in the 16 MiB a document may have; MongoDB's BSONObjectTooLarge (10334)
/// otherwise, naming the `$slice` form that pages through its arrays.
pub(crate) fn check_returnable(
    engine: &Engine<'_>,
    logical: RawDocumentBuf,
) -> Result<RawDocumentBuf> {
    let size = logical.as_bytes().len();
    if size <= spillway_doc::size::MAX_DOCUMENT_SIZE {
        return Ok(logical);
    }
    let id = logical
        .get("_id")
        .ok()
        .flatten()
        .and_then(|id| Bson::try_from(id).ok())
        .unwrap_or(Bson::Null);
    Err(Error::new(ErrorKind::LogicalDocumentTooLarge {
        collection: engine.collection().to_string(),
        id,
        size,
        fields: engine
            .managed_fields()
            .into_iter()
            .map(str::to_string)
            .collect(),
    }))
}

/// Replaces each match's bytes by its logical document (managed arrays whole, no flags),
/// spliced from raw BSON: nothing decoded, nothing re-encoded.
pub(crate) fn expand_matches(
    reader: &dyn Reader,
    collection: &str,
    matches: &mut [Match],
) -> Result<()> {
    let Route::Main(engine) = Route::of(reader.catalog(), collection) else {
        return Ok(());
    };
    for found in matches {
        let stored = stored_document(&found.bytes)?;
        let raw_state = engine.raw_state(stored);
        let expanded = if raw_state.may_differ {
            expand_raw(reader, &engine, stored, false)?
        } else {
            None
        };
        let logical = match expanded {
            Some(logical) => Some(check_returnable(&engine, logical)?),
            None if raw_state.has_flags => engine.remove_flags_raw(stored)?,
            None => None,
        };
        if let Some(logical) = logical {
            found.bytes = logical.into_bytes();
        }
    }
    Ok(())
}

/// How a logical read returns the documents of a main collection: each expanded whole, or
/// (when the projection leaves every managed array out or reads it with `$slice`,
/// `$elemMatch` or a positional `field.$`) the stored document with only those windows read
/// from the layout ([`projection_input`]), the policies' flags removed either way.
pub(crate) struct LogicalOutput {
    /// The projection to apply to what the read returns (a `$slice` already done by the read
    /// keeps its window whole); `None` when nothing is left to do.
    pub(crate) projection: Option<Arc<Projection>>,
    /// The managed arrays read partly, when the documents are not expanded.
    pub(crate) array_reads: Vec<(String, ArrayRead)>,
    /// Whether each document is expanded whole.
    pub(crate) expand: bool,
}

/// The [`LogicalOutput`] of a read with `projection` of the collection `route` leads to. On a
/// collection that is no policy's main collection the documents are returned as stored.
pub(crate) fn logical_output(
    route: &Route<'_>,
    projection: Option<Arc<Projection>>,
) -> LogicalOutput {
    let Some(engine) = route.engine() else {
        return LogicalOutput {
            projection,
            array_reads: Vec::new(),
            expand: false,
        };
    };
    let Some(projection) = projection else {
        return LogicalOutput {
            projection: None,
            array_reads: Vec::new(),
            expand: true,
        };
    };
    let managed = engine.managed_fields();
    let reads = projection.array_reads(|field| managed.contains(&field));
    let whole = managed
        .iter()
        .any(|field| !reads.iter().any(|(read, _)| read == field) && projection.may_output(field));
    if whole {
        return LogicalOutput {
            projection: Some(projection),
            array_reads: Vec::new(),
            expand: true,
        };
    }
    let sliced = |field: &str| {
        reads
            .iter()
            .any(|(read, kind)| read == field && matches!(kind, ArrayRead::Slice { .. }))
    };
    // `{field: {$slice: k}}` alone has nothing left to do once the read did the window.
    if projection.is_only_slices(sliced) {
        return LogicalOutput {
            projection: None,
            array_reads: reads,
            expand: false,
        };
    }
    let mut adjusted = (*projection).clone();
    for (field, read) in &reads {
        if matches!(read, ArrayRead::Slice { .. }) {
            adjusted.slice_done(field);
        }
    }
    LogicalOutput {
        projection: (!adjusted.is_identity()).then(|| Arc::new(adjusted)),
        array_reads: reads,
        expand: false,
    }
}

/// Makes each of `matches` (stored main documents of `collection`) what a logical read with
/// `output` returns: expanded whole, or with the projection's windows read and the flags
/// removed.
pub(crate) fn logical_matches(
    reader: &dyn Reader,
    collection: &str,
    output: &LogicalOutput,
    matches: &mut [Match],
) -> Result<()> {
    if output.expand {
        return expand_matches(reader, collection, matches);
    }
    let Route::Main(engine) = Route::of(reader.catalog(), collection) else {
        return Ok(());
    };
    for found in matches {
        if !output.array_reads.is_empty() {
            found.bytes = projection_input(reader, &engine, &output.array_reads, &found.bytes)?;
        } else if let Some(logical) = engine.remove_flags_raw(stored_document(&found.bytes)?)? {
            found.bytes = logical.into_bytes();
        }
    }
    Ok(())
}

/// The stored main document `bytes` of `engine`'s collection with each array of `reads`
/// replaced by what the projection reads of the logical array, and without the policies'
/// flags: the `$slice` window, read from the buckets or archive documents that hold it, or
/// every element for `$elemMatch` and `field.$`.
///
/// Written from raw BSON: the other fields' bytes are copied as they are. A window the stored
/// array holds (the typical `$slice: k`, or any window of a document that is its own logical
/// document) is written from it; the stored document is decoded only for a window that needs
/// the side documents.
pub(crate) fn projection_input(
    reader: &dyn Reader,
    engine: &Engine<'_>,
    reads: &[(String, ArrayRead)],
    bytes: &[u8],
) -> Result<Vec<u8>> {
    let collection = engine.collection();
    let corrupt = |message: String| {
        Error::corruption(format!(
            "a stored document of '{collection}' is malformed: {message}"
        ))
    };
    let is_flag = |key: &[u8]| {
        engine.policies().any(|policy| {
            policy
                .pattern
                .reserved_main_field()
                .is_some_and(|flag| flag.as_bytes() == key)
        })
    };
    // Not flagged and no subset array full: every stored array is its whole logical array.
    // Asked only when a window from the front does not settle it (the typical `$slice: k`
    // fits in the stored array, whatever the document's state).
    let raw_stored = stored_document(bytes)?;
    let mut stored_is_logical: Option<bool> = None;
    let mut is_logical =
        || *stored_is_logical.get_or_insert_with(|| !engine.raw_state(raw_stored).may_differ);
    let mut decoded: Option<Document> = None;
    let mut output = RawWriter::with_capacity(bytes.len());
    for element in raw::elements(bytes) {
        let (key, kind, value) = element.map_err(corrupt)?;
        if is_flag(key) {
            continue;
        }
        let read = reads.iter().find(|(field, _)| field.as_bytes() == key);
        let (Some((field, read)), ElementType::Array) = (read, kind) else {
            output.field(key, kind, value);
            continue;
        };
        // The stored main array is a prefix of the logical array (an outlier's first
        // elements, a subset's top ones): a window from the front that it holds reads
        // nothing else; one that is all of it (`$slice: threshold`) is copied whole.
        if let Some((start, end)) = window_from_front(read) {
            if start == 0 && engine.known_stored_len(raw_stored, field) == Some(end) {
                output.field(key, kind, value);
                continue;
            }
            if output
                .array_window(key, value, start, end, false)
                .map_err(corrupt)?
            {
                continue;
            }
        }
        if is_logical() {
            match read {
                ArrayRead::Elements => output.field(key, kind, value),
                ArrayRead::Slice { skip, limit } => {
                    let length = raw::elements(value).count();
                    let (start, end) = slice_window(length, *skip, *limit);
                    output
                        .array_window(key, value, start, end, true)
                        .map_err(corrupt)?;
                }
            }
            continue;
        }
        let stored = match &mut decoded {
            Some(stored) => stored,
            None => decoded.insert(storage::decode(bytes)?),
        };
        let length =
            usize::try_from(array_len(reader, collection, field, stored)?).unwrap_or(usize::MAX);
        let (start, end) = match read {
            ArrayRead::Slice { skip, limit } => slice_window(length, *skip, *limit),
            ArrayRead::Elements => (0, length),
        };
        let elements = array_page(reader, collection, field, stored, start, end - start)?;
        let window = elements
            .into_iter()
            .map(bson::RawBson::try_from)
            .collect::<std::result::Result<bson::RawArrayBuf, _>>()
            .map_err(|error| corrupt(error.to_string()))?;
        output.field(key, ElementType::Array, window.as_bytes());
    }
    Ok(output.finish())
}

/// The window `start..end` of a `$slice` read counted from the front (`$slice: k` or
/// `[skip, n]` with `skip >= 0`), which needs no logical length; `None` for the other reads.
fn window_from_front(read: &ArrayRead) -> Option<(usize, usize)> {
    let ArrayRead::Slice { skip, limit } = *read else {
        return None;
    };
    let (start, count) = match limit {
        None if skip >= 0 => (0, skip),
        Some(limit) if skip >= 0 => (skip, limit),
        _ => return None,
    };
    let start = usize::try_from(start).ok()?;
    let end = start.checked_add(usize::try_from(count).ok()?)?;
    Some((start, end))
}

/// Inserts a logical document into a main collection ([`writes::insert_main`]).
pub(crate) fn insert(
    txn: &mut WriteTxn,
    store: &Store,
    engine: &Engine<'_>,
    document: Document,
) -> Result<(Bson, Document)> {
    let document = storage::assign_id(document)?;
    let id = document
        .get("_id")
        .cloned()
        .expect("assign_id gives an _id");
    LogicalValidation::check_insert(txn, engine.collection(), &document)?;
    let stored = writes::insert_main(engine, &mut TxnBackend { txn, store }, document)?;
    Ok((id, stored))
}

/// Inserts a document directly into a side collection ([`writes::insert_side`]).
pub(crate) fn insert_side(
    txn: &mut WriteTxn,
    store: &Store,
    collection: &str,
    policies: &[&Policy],
    document: Document,
) -> Result<(Bson, Document)> {
    let document = storage::assign_id(document)?;
    let id = document
        .get("_id")
        .cloned()
        .expect("assign_id gives an _id");
    let stored = writes::insert_side(
        collection,
        policies,
        &mut TxnBackend { txn, store },
        document,
    )?;
    Ok((id, stored))
}

/// Writes the document changes of one statement on a side collection (updates,
/// replacements, deletes): every new version is checked against the layout, then all are
/// written together (`storage::write_documents`: unique indexes see the statement's final
/// state), then every main document a changed side document belonged to, before or after,
/// is brought back in step once.
pub(crate) fn write_side_documents(
    txn: &mut WriteTxn,
    store: &Store,
    collection: &str,
    policies: &[&Policy],
    changes: Vec<storage::DocumentChange<'_>>,
) -> Result<()> {
    writes::check_side_writes(
        policies,
        &ReaderBackend { reader: &*txn },
        changes
            .iter()
            .filter_map(|change| change.new.as_ref().map(|(new, _)| *new)),
    )?;
    let links = writes::linked_mains(
        policies,
        changes
            .iter()
            .flat_map(|change| [change.old, change.new.as_ref().map(|(new, _)| *new)])
            .flatten(),
    );
    storage::write_documents(txn, collection, changes)?;
    writes::resync_mains(&mut TxnBackend { txn, store }, links)
}

/// A document by `(collection, _id)`.
pub(crate) type NamedDocument = (String, Bson);

/// After a repair: every policy's invariants checked again; each main document at fault
/// brought back in step with the side documents that survived (the resync of a direct side
/// write), and side documents whose main document is gone deleted (no logical read reaches
/// them). Returns the main documents resynced and the side documents deleted, as
/// `(collection, _id)`; what still fails is for the caller to check again.
pub(crate) fn restore_pattern_invariants(
    txn: &mut WriteTxn,
    store: &Store,
) -> Result<(Vec<NamedDocument>, Vec<NamedDocument>)> {
    let policies = txn.catalog().policies.clone();
    let mut links = Vec::new();
    let mut orphans = Vec::new();
    {
        let backend = ReaderBackend { reader: &*txn };
        for policy in &policies {
            let pattern = &policy.pattern;
            for violation in spillway_pattern::verify(policy, &backend)? {
                let link = if violation.collection == pattern.collection() {
                    violation.id
                } else {
                    // A side document at fault names itself when it exists; the side index's
                    // problems name the main document.
                    match backend.get(pattern.side_collection(), &violation.id)? {
                        Some(side) => {
                            let link = side
                                .get(pattern.link_field())
                                .cloned()
                                .unwrap_or(Bson::Null);
                            if backend.get(pattern.collection(), &link)?.is_none() {
                                orphans.push((pattern.side_collection().to_string(), violation.id));
                                continue;
                            }
                            link
                        }
                        None => violation.id,
                    }
                };
                if backend.get(pattern.collection(), &link)?.is_some()
                    && !links.iter().any(|(known, known_link): &(&Policy, Bson)| {
                        std::ptr::eq(*known, policy)
                            && key::to_key(known_link) == key::to_key(&link)
                    })
                {
                    links.push((policy, link));
                }
            }
        }
    }
    orphans.sort_by(|a, b| {
        a.0.cmp(&b.0)
            .then(key::to_key(&a.1).cmp(&key::to_key(&b.1)))
    });
    orphans.dedup_by(|a, b| a.0 == b.0 && key::to_key(&a.1) == key::to_key(&b.1));
    let resynced: Vec<NamedDocument> = links
        .iter()
        .map(|(policy, link)| (policy.pattern.collection().to_string(), link.clone()))
        .collect();
    let mut backend = TxnBackend { txn, store };
    if !orphans.is_empty() {
        backend.apply(
            orphans
                .iter()
                .map(|(collection, id)| Write::Delete {
                    collection: collection.clone(),
                    id: id.clone(),
                })
                .collect(),
        )?;
    }
    writes::resync_mains(&mut backend, links)?;
    Ok((resynced, orphans))
}

/// Applies an update to one main document ([`writes::update_main`]); the writes go to
/// `statement`, applied by [`finish`] once the whole statement is computed.
#[expect(
    clippy::too_many_arguments,
    reason = "one update of one matched document, with its statement"
)]
pub(crate) fn apply_update(
    txn: &mut WriteTxn,
    store: &Store,
    engine: &Engine<'_>,
    filter: &Filter,
    update: &Update,
    found: &Match,
    now: DateTime,
    statement: &mut Statement,
) -> Result<bool> {
    let stored = stored_document(&found.bytes)?;
    let mut backend = TxnBackend { txn, store };
    writes::update_main(
        engine,
        &mut statement.over(&mut backend),
        stored,
        filter,
        update,
        now,
    )
}

/// Deletes a main document with its side documents ([`writes::delete_main`]); the writes go
/// to `statement`.
pub(crate) fn delete(
    txn: &mut WriteTxn,
    store: &Store,
    engine: &Engine<'_>,
    stored: &Document,
    statement: &mut Statement,
) -> Result<()> {
    let mut backend = TxnBackend { txn, store };
    writes::delete_main(engine, &mut statement.over(&mut backend), stored)
}

/// Applies the writes a statement collected.
pub(crate) fn finish(statement: Statement, txn: &mut WriteTxn, store: &Store) -> Result<()> {
    statement.finish(&mut TxnBackend { txn, store })
}

/// Before dropping `collection` ([`writes::before_drop`]).
pub(crate) fn before_drop(txn: &mut WriteTxn, store: &Store, collection: &str) -> Result<()> {
    writes::before_drop(&mut TxnBackend { txn, store }, collection)
}

/// Before renaming main collection `from` to `to` ([`writes::before_rename`]): the side
/// collections to rename with it.
pub(crate) fn before_rename(
    txn: &mut WriteTxn,
    store: &Store,
    from: &str,
    to: &str,
    side_name: impl Fn(&str) -> String,
) -> Result<Vec<(String, String)>> {
    writes::before_rename(&mut TxnBackend { txn, store }, from, to, side_name)
}

#[cfg(test)]
mod tests {
    use bson::{Bson, Document, doc};
    use proptest::prelude::*;
    use spillway_pattern::Query;

    use super::{backend_find_last_raw, backend_find_raw};
    use crate::{Database, IndexModel, IndexOptions};

    /// Link values that are equal in MongoDB's comparison across types, and others.
    fn link(choice: u8) -> Bson {
        match choice % 8 {
            0 => Bson::Int32(7),
            1 => Bson::Int64(7),
            2 => Bson::Double(7.0),
            3 => Bson::String("7".into()),
            4 => Bson::Document(doc! { "a": 1 }),
            5 => Bson::Int32(8),
            6 => Bson::Null,
            _ => Bson::Array(vec![Bson::Int32(7)]),
        }
    }

    /// Both answers of "the last bucket of `link`", on a side collection holding `buckets`
    /// (link choice, bucket number) and the index `options` describes.
    fn both_answers(buckets: &[(u8, i64)], sparse: bool, probe: u8) -> (Document, Document) {
        let db = Database::open_in_memory().unwrap();
        let side = db.collection::<Document>("side");
        side.create_index(
            IndexModel::builder()
                .keys(doc! { "link": 1, "bucket": 1 })
                .options(IndexOptions::builder().sparse(sparse).build())
                .build(),
        )
        .run()
        .unwrap();
        for (n, &(choice, bucket)) in buckets.iter().enumerate() {
            let link = link(choice);
            if matches!(link, Bson::Array(_)) {
                continue;
            }
            // Distinct numbers: the greatest of a group is one document.
            let bucket = bucket * 16 + n as i64;
            side.insert_one(doc! { "_id": n as i64, "link": link, "bucket": bucket })
                .run()
                .unwrap();
        }
        let reader = db.inner.published();
        let value = link(probe);
        let fast = backend_find_last_raw(&*reader, "side", "link", &value, "bucket").unwrap();
        let query = Query::last_in_group("link", &value, "bucket");
        let slow = backend_find_raw(&*reader, "side", &query).unwrap().pop();
        let decode = |raw: Option<bson::RawDocumentBuf>| {
            raw.map(|raw| Document::try_from(raw.as_ref()).unwrap())
                .unwrap_or_default()
        };
        (decode(fast), decode(slow))
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]

        /// The index read answers as the query does, whatever the link's type, for every
        /// probe (those it does not answer fall back), with and without a usable index.
        #[test]
        fn the_last_in_group_read_answers_as_the_query(
            buckets in proptest::collection::vec((0u8..8, 0i64..6), 0..12),
            sparse in any::<bool>(),
            probe in 0u8..8,
        ) {
            let (fast, slow) = both_answers(&buckets, sparse, probe);
            prop_assert_eq!(fast, slow);
        }
    }

    #[test]
    fn numbers_of_every_type_share_a_group() {
        let (fast, slow) = both_answers(&[(0, 1), (1, 3), (2, 2), (5, 9)], false, 0);
        assert_eq!(fast, slow);
        assert_eq!(fast.get_i64("bucket").unwrap(), 3 * 16 + 1);
    }
}
