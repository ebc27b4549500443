//! [`Layer`]: MongoDB's operations on logical documents over any [`Transactional`] backend,
//! each operation one backend transaction. It is how a backend that is only storage and
//! queries (the in-memory reference, a MongoDB deployment) gets the whole pattern layer:
//! the role of the collection is decided once per operation, then the write paths of
//! [`writes`], the matching of [`matching`] and the
//! migrations of [`migration`] do the rest.
//!
//! The embedded database does not use it: it has its own planner and indexes and calls the
//! same modules from its facade. A query with a managed clause is answered on logical
//! documents: from both sides' indexes ([`matching::union_plan`]) when it has an equality on
//! a managed path both sides index, else by reading the main collection in `_id` batches.
//! Transactions may be run again by the backend, so every closure here reads what it
//! decides on inside the transaction.

use bson::oid::ObjectId;
use bson::{Bson, DateTime, Document, RawDocumentBuf, doc};
use spillway_doc::compare::compare;
use spillway_doc::filter::{Clause, Filter, Predicate};
use spillway_doc::size::{check_id, check_storable};
use spillway_doc::update::{ApplyContext, Update};

use crate::backend::{Query, ReadBackend, Write, WriteBackend};
use crate::engine::{Engine, logical_len, page};
use crate::error::PatternError;
use crate::matching::{self, is_logical_query, matches_logical};
use crate::migration::{self, MIGRATION_BATCH};
use crate::policy::{Pattern, Policy};
use crate::role::Role;
use crate::statement::Statement;
use crate::verify::{Violation, verify};
use crate::writes;

/// A backend that can run several batches as one transaction.
pub trait Transactional: WriteBackend + Sized {
    /// Runs `work` as one transaction: everything it applied becomes visible together when
    /// it returns `Ok`, and nothing of it when it fails. A backend may run `work` again from
    /// the start after a transient failure (a write conflict with another client, a failover),
    /// as MongoDB's drivers do in `withTransaction`, so `work` must be repeatable: it reads
    /// what it needs through the backend on every run.
    ///
    /// # Errors
    /// `work`'s, or the commit's.
    fn transaction<T>(
        &mut self,
        work: impl FnMut(&mut Self) -> Result<T, Self::Error>,
    ) -> Result<T, Self::Error>;
}

/// What an update did.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct UpdateResult {
    /// Documents the filter matched.
    pub matched_count: u64,
    /// Documents changed.
    pub modified_count: u64,
    /// The `_id` of the document an upsert inserted.
    pub upserted_id: Option<Bson>,
}

/// The pattern layer over `backend`: declared policies applied to every operation.
#[derive(Debug, Clone)]
pub struct Layer<B> {
    backend: B,
}

fn id_of(document: &Document) -> Bson {
    document.get("_id").cloned().unwrap_or(Bson::Null)
}

/// The document with its `_id` first, an `ObjectId` when it had none.
fn with_id(mut document: Document) -> Result<Document, PatternError> {
    let id = document
        .remove("_id")
        .unwrap_or_else(|| Bson::ObjectId(ObjectId::new()));
    check_id(&id).map_err(PatternError::document)?;
    let mut stored = doc! { "_id": id };
    stored.extend(document);
    Ok(stored)
}

impl<B: Transactional> Layer<B> {
    /// The layer over `backend`; migrations a crash left unfinished are resumed first, as
    /// the embedded database does when it opens.
    ///
    /// # Errors
    /// The migration's.
    pub fn open(backend: B) -> Result<Layer<B>, B::Error> {
        let mut layer = Layer { backend };
        layer.resume()?;
        Ok(layer)
    }

    /// The backend.
    pub fn backend(&self) -> &B {
        &self.backend
    }

    /// The backend, for writes behind the layer's back (tests of `verify`).
    pub fn backend_mut(&mut self) -> &mut B {
        &mut self.backend
    }

    /// The backend, giving the layer up.
    pub fn into_backend(self) -> B {
        self.backend
    }

    /// Creates a collection (a no-op if it exists).
    ///
    /// # Errors
    /// The backend's.
    pub fn create_collection(&mut self, name: &str) -> Result<(), B::Error> {
        self.backend
            .transaction(|backend| backend.create_collection(name))
    }

    /// Creates an index on `collection` (a no-op if it exists) and, on a main collection,
    /// its mirror on each policy's side collection ([`migration::mirror_index`]), so that a
    /// logical equality on the indexed managed path reads both indexes instead of every
    /// main document.
    ///
    /// # Errors
    /// The backend's.
    pub fn create_index(&mut self, collection: &str, keys: &Document) -> Result<(), B::Error> {
        self.backend.transaction(|backend| {
            backend.ensure_index(collection, keys)?;
            migration::mirror_index(backend, collection, keys)
        })
    }

    /// Declares a policy and migrates the documents already stored, a batch per transaction
    /// ([`migration::declare`]).
    ///
    /// # Errors
    /// As [`migration::declare`]; a migration's error leaves it to [`Layer::resume`].
    pub fn set_pattern(&mut self, pattern: impl Into<Pattern>) -> Result<(), B::Error> {
        let pattern = pattern.into();
        self.backend
            .transaction(|backend| migration::declare(backend, pattern.clone()))?;
        self.resume()
    }

    /// Removes the policy on `collection.field`, folding its arrays back
    /// ([`migration::remove`]).
    ///
    /// # Errors
    /// As [`migration::remove`].
    pub fn remove_pattern(&mut self, collection: &str, field: &str) -> Result<(), B::Error> {
        self.backend
            .transaction(|backend| migration::remove(backend, collection, field))?;
        self.resume()
    }

    /// The declared policies.
    ///
    /// # Errors
    /// The backend's.
    pub fn patterns(&self) -> Result<Vec<Pattern>, B::Error> {
        Ok(self
            .backend
            .policies()?
            .into_iter()
            .map(|policy| policy.pattern)
            .collect())
    }

    /// Runs every unfinished migration to its end, a batch per transaction.
    ///
    /// # Errors
    /// The migration's; what was committed stays, and a later call goes on from there.
    pub fn resume(&mut self) -> Result<(), B::Error> {
        loop {
            if migration::unfinished(&self.backend.policies()?).is_none() {
                return Ok(());
            }
            // The policy is read again inside the transaction: another client may have
            // moved its progress on, and a transaction run again must see where it stands.
            self.backend.transaction(|backend| {
                let policies = backend.policies()?;
                match migration::unfinished(&policies) {
                    Some(policy) => migration::migration_step(backend, policy, MIGRATION_BATCH),
                    None => Ok(()),
                }
            })?;
        }
    }

    /// Every invariant problem of every policy.
    ///
    /// # Errors
    /// The backend's.
    pub fn verify(&self) -> Result<Vec<Violation>, B::Error> {
        let mut violations = Vec::new();
        for policy in self.backend.policies()? {
            violations.extend(verify(&policy, &self.backend)?);
        }
        Ok(violations)
    }

    /// Inserts a logical document; returns its `_id`.
    ///
    /// # Errors
    /// A duplicate `_id`, a document the policy refuses; the backend's.
    pub fn insert_one(&mut self, collection: &str, document: Document) -> Result<Bson, B::Error> {
        let document = with_id(document)?;
        let id = id_of(&document);
        self.backend
            .transaction(|backend| insert(backend, collection, document.clone()))?;
        Ok(id)
    }

    /// `updateOne` (`multi` false) or `updateMany` with an update document or a replacement,
    /// on logical documents.
    ///
    /// # Errors
    /// An invalid filter or update, one the policy refuses; the backend's.
    pub fn update(
        &mut self,
        collection: &str,
        filter: &Document,
        update: &Document,
        multi: bool,
        upsert: bool,
    ) -> Result<UpdateResult, B::Error> {
        let filter_document = filter;
        let filter = Filter::parse(filter).map_err(PatternError::filter)?;
        let update = Update::parse(update, &[]).map_err(PatternError::update)?;
        let now = DateTime::now();
        self.backend.transaction(|backend| {
            let policies = backend.policies()?;
            let role = Role::of(collection, &policies);
            let matched = matching(
                &*backend,
                collection,
                &role,
                (filter_document, &filter),
                multi,
            )?;
            let mut result = UpdateResult {
                matched_count: matched.len() as u64,
                ..UpdateResult::default()
            };
            if matched.is_empty() {
                if upsert {
                    let document = update
                        .upsert(&filter, &ApplyContext::new(now).upsert_insert())
                        .map_err(PatternError::update)?;
                    let document = with_id(document)?;
                    result.upserted_id = Some(id_of(&document));
                    insert(backend, collection, document)?;
                }
                return Ok(result);
            }
            if let Role::Main(engine) = &role {
                let mut statement = Statement::default();
                for stored in &matched {
                    let stored = RawDocumentBuf::try_from(stored).map_err(|error| {
                        PatternError::InvalidRecord {
                            message: format!(
                                "a document of '{collection}' cannot be encoded: {error}"
                            ),
                        }
                    })?;
                    let updated = writes::update_main(
                        engine,
                        &mut statement.over(backend),
                        &stored,
                        &filter,
                        &update,
                        now,
                    )?;
                    result.modified_count += u64::from(updated);
                }
                statement.finish(backend)?;
                return Ok(result);
            }
            let mut changed = Vec::new();
            for stored in &matched {
                let positional = filter
                    .match_details_document(stored)
                    .map_err(PatternError::filter)?
                    .and_then(|details| details.array_index);
                let mut after = stored.clone();
                let outcome = update
                    .apply(
                        &mut after,
                        &ApplyContext::new(now).with_positional_index(positional),
                    )
                    .map_err(PatternError::update)?;
                if outcome.modified {
                    check_storable(&after).map_err(PatternError::document)?;
                    changed.push((stored, after));
                }
            }
            result.modified_count = changed.len() as u64;
            let links = match &role {
                Role::Side(side) => {
                    writes::check_side_writes(side, &*backend, changed.iter().map(|(_, a)| a))?;
                    writes::linked_mains(
                        side,
                        changed.iter().flat_map(|(before, after)| [*before, after]),
                    )
                }
                _ => Vec::new(),
            };
            let batch = changed
                .into_iter()
                .map(|(_, document)| Write::Replace {
                    collection: collection.to_string(),
                    document,
                })
                .collect::<Vec<_>>();
            if !batch.is_empty() {
                backend.apply(batch)?;
            }
            writes::resync_mains(backend, links)?;
            Ok(result)
        })
    }

    /// `deleteOne` (`multi` false) or `deleteMany` on logical documents; the number deleted.
    ///
    /// # Errors
    /// An invalid filter; the backend's.
    pub fn delete(
        &mut self,
        collection: &str,
        filter: &Document,
        multi: bool,
    ) -> Result<u64, B::Error> {
        let filter_document = filter;
        let filter = Filter::parse(filter).map_err(PatternError::filter)?;
        self.backend.transaction(|backend| {
            let policies = backend.policies()?;
            let role = Role::of(collection, &policies);
            let matched = matching(
                &*backend,
                collection,
                &role,
                (filter_document, &filter),
                multi,
            )?;
            match &role {
                Role::Main(engine) => {
                    let mut statement = Statement::default();
                    for stored in &matched {
                        writes::delete_main(engine, &mut statement.over(backend), stored)?;
                    }
                    statement.finish(backend)?;
                }
                Role::Side(side) => {
                    writes::check_side_writes(side, &*backend, [])?;
                    let links = writes::linked_mains(side, &matched);
                    delete_all(backend, collection, &matched)?;
                    writes::resync_mains(backend, links)?;
                }
                Role::Plain => delete_all(backend, collection, &matched)?,
            }
            Ok(matched.len() as u64)
        })
    }

    /// The documents matching `filter` in `_id` order: logical documents when `expand`, the
    /// stored main documents otherwise (filters on managed fields are decided on the logical
    /// documents either way).
    ///
    /// # Errors
    /// An invalid filter; the backend's.
    pub fn find(
        &self,
        collection: &str,
        filter: &Document,
        expand: bool,
    ) -> Result<Vec<Document>, B::Error> {
        let filter_document = filter;
        let filter = Filter::parse(filter).map_err(PatternError::filter)?;
        let policies = self.backend.policies()?;
        let role = Role::of(collection, &policies);
        let matched = matching(
            &self.backend,
            collection,
            &role,
            (filter_document, &filter),
            true,
        )?;
        match role.engine() {
            Some(engine) if expand => matched
                .iter()
                .map(|stored| engine.expand(&self.backend, stored))
                .collect(),
            _ => Ok(matched),
        }
    }

    /// The first document matching `filter` in `_id` order, logical when `expand`: as
    /// [`Layer::find`], but it stops at the first match.
    ///
    /// # Errors
    /// An invalid filter; the backend's.
    pub fn find_one(
        &self,
        collection: &str,
        filter: &Document,
        expand: bool,
    ) -> Result<Option<Document>, B::Error> {
        let filter_document = filter;
        let filter = Filter::parse(filter).map_err(PatternError::filter)?;
        let policies = self.backend.policies()?;
        let role = Role::of(collection, &policies);
        let Some(stored) = matching(
            &self.backend,
            collection,
            &role,
            (filter_document, &filter),
            false,
        )?
        .into_iter()
        .next() else {
            return Ok(None);
        };
        match role.engine() {
            Some(engine) if expand => engine.expand(&self.backend, &stored).map(Some),
            _ => Ok(Some(stored)),
        }
    }

    /// How many documents match `filter`, decided on logical documents. A filter without a
    /// clause on a managed array is counted by the backend, without reading the documents.
    ///
    /// # Errors
    /// As [`Layer::find`].
    pub fn count(&self, collection: &str, filter: &Document) -> Result<u64, B::Error> {
        let parsed = Filter::parse(filter).map_err(PatternError::filter)?;
        let policies = self.backend.policies()?;
        let role = Role::of(collection, &policies);
        if role
            .engine()
            .is_some_and(|engine| is_logical_query(engine, &parsed))
        {
            return Ok(self.find(collection, filter, false)?.len() as u64);
        }
        self.backend.count(collection, filter)
    }

    /// The logical length of array `field` of the document `id`; `None` without such a
    /// document.
    ///
    /// # Errors
    /// The backend's.
    pub fn array_len(
        &self,
        collection: &str,
        id: &Bson,
        field: &str,
    ) -> Result<Option<u64>, B::Error> {
        let Some(stored) = self.backend.get(collection, id)? else {
            return Ok(None);
        };
        match self.policy_on(collection, field)? {
            Some(policy) => logical_len(&policy, &self.backend, &stored).map(Some),
            None => Ok(Some(match stored.get(field) {
                Some(Bson::Array(items)) => items.len() as u64,
                _ => 0,
            })),
        }
    }

    /// Elements `skip..skip + limit` of the logical array `field` of the document `id`,
    /// reading only the side documents that hold them; `None` without such a document.
    ///
    /// # Errors
    /// The backend's.
    pub fn array_page(
        &self,
        collection: &str,
        id: &Bson,
        field: &str,
        skip: usize,
        limit: usize,
    ) -> Result<Option<Vec<Bson>>, B::Error> {
        let Some(stored) = self.backend.get(collection, id)? else {
            return Ok(None);
        };
        match self.policy_on(collection, field)? {
            Some(policy) => page(&policy, &self.backend, &stored, skip, limit).map(Some),
            None => Ok(Some(match stored.get(field) {
                Some(Bson::Array(items)) => items.iter().skip(skip).take(limit).cloned().collect(),
                _ => Vec::new(),
            })),
        }
    }

    fn policy_on(&self, collection: &str, field: &str) -> Result<Option<Policy>, B::Error> {
        Ok(self.backend.policies()?.into_iter().find(|policy| {
            policy.pattern.collection == collection && policy.pattern.field == field
        }))
    }
}

/// Inserts a document that has its `_id` into `collection`, whatever its role.
fn insert<W: WriteBackend>(
    backend: &mut W,
    collection: &str,
    document: Document,
) -> Result<(), W::Error> {
    let policies = backend.policies()?;
    match Role::of(collection, &policies) {
        Role::Main(engine) => writes::insert_main(&engine, backend, document).map(drop),
        Role::Side(side) => writes::insert_side(collection, &side, backend, document).map(drop),
        Role::Plain => {
            check_storable(&document).map_err(PatternError::document)?;
            backend.create_collection(collection)?;
            if backend.get(collection, &id_of(&document))?.is_some() {
                return Err(PatternError::DuplicateId {
                    collection: collection.to_string(),
                    id: Box::new(id_of(&document)),
                }
                .into());
            }
            backend.apply(vec![Write::Insert {
                collection: collection.to_string(),
                document,
            }])
        }
    }
}

fn delete_all<W: WriteBackend>(
    backend: &mut W,
    collection: &str,
    documents: &[Document],
) -> Result<(), W::Error> {
    if documents.is_empty() {
        return Ok(());
    }
    backend.apply(
        documents
            .iter()
            .map(|document| Write::Delete {
                collection: collection.to_string(),
                id: id_of(document),
            })
            .collect(),
    )
}

/// The stored documents of `collection` matching `filter` (on logical documents for a main
/// collection), in `_id` order; only the first unless `multi`.
fn matching<R: ReadBackend>(
    backend: &R,
    collection: &str,
    role: &Role<'_>,
    (document, filter): (&Document, &Filter),
    multi: bool,
) -> Result<Vec<Document>, R::Error> {
    let engine = role
        .engine()
        .filter(|engine| is_logical_query(engine, filter));
    let Some(engine) = engine else {
        let mut query = Query {
            filter: document.clone(),
            ..Query::default()
        };
        if !multi {
            query.limit = Some(1);
        }
        return backend.find(collection, &query);
    };
    let mut matched = Vec::new();
    if let Some(candidates) = union_candidates(backend, collection, engine, filter)? {
        for stored in candidates {
            if matches_raw(engine, backend, collection, filter, &stored)? {
                matched.push(stored);
                if !multi {
                    break;
                }
            }
        }
        return Ok(matched);
    }
    let mut through: Option<Bson> = None;
    loop {
        let batch = backend.documents_after(collection, through.as_ref(), MIGRATION_BATCH)?;
        for stored in &batch {
            if matches_raw(engine, backend, collection, filter, stored)? {
                matched.push(stored.clone());
                if !multi {
                    return Ok(matched);
                }
            }
        }
        match batch.last() {
            Some(last) if batch.len() == MIGRATION_BATCH => through = Some(id_of(last)),
            _ => return Ok(matched),
        }
    }
}

/// Whether the stored main document `stored` matches `filter` as a logical document.
fn matches_raw<R: ReadBackend>(
    engine: &Engine<'_>,
    backend: &R,
    collection: &str,
    filter: &Filter,
    stored: &Document,
) -> Result<bool, R::Error> {
    let raw =
        bson::RawDocumentBuf::try_from(stored).map_err(|error| PatternError::InvalidRecord {
            message: format!("a document of '{collection}' cannot be encoded: {error}"),
        })?;
    matches_logical(engine, backend, filter, &raw)
}

/// The candidates of [`matching::union_plan`] in `_id` order, when `filter` has an equality
/// (or `$in`) on a managed path and both sides have an index leading with it: the main
/// documents whose stored array matches, and those the matching side documents link to.
/// Every logical match is among them; each must still be matched on its logical document.
/// `None` when no such plan applies (the caller scans the main collection).
fn union_candidates<R: ReadBackend>(
    backend: &R,
    collection: &str,
    engine: &Engine<'_>,
    filter: &Filter,
) -> Result<Option<Vec<Document>>, R::Error> {
    // Only a filter with an equality on a managed path can use the plan: ask for the
    // indexes only then.
    let may_apply = filter.field_predicates().any(|(path, predicate)| {
        matches!(predicate, Predicate::Eq(_) | Predicate::In(_))
            && engine.is_managed_path(path.as_str())
    });
    if !may_apply {
        return Ok(None);
    }
    let mut indexes = vec![(collection.to_string(), backend.index_keys(collection)?)];
    for policy in engine.policies() {
        let side = &policy.pattern.side_collection;
        indexes.push((side.clone(), backend.index_keys(side)?));
    }
    let leads_an_index = |name: &str, path: &str| {
        indexes.iter().any(|(indexed, keys)| {
            indexed == name
                && keys
                    .iter()
                    .any(|keys| keys.keys().next().is_some_and(|first| first == path))
        })
    };
    let Some(plan) = matching::union_plan(engine, filter, leads_an_index)? else {
        return Ok(None);
    };
    let (Some(main), Some(side)) = (predicate_query(&plan.main), predicate_query(&plan.side))
    else {
        return Ok(None);
    };
    let pattern = &plan.policy.pattern;
    let query = |filter: Document| Query {
        filter,
        sort: Some(doc! { "_id": 1 }),
        ..Query::default()
    };
    let mut candidates = backend.find(collection, &query(main))?;
    let mut links: Vec<Bson> = backend
        .find(&pattern.side_collection, &query(side))?
        .into_iter()
        .filter_map(|side| side.get(&pattern.link_field).cloned())
        .filter(|link| {
            !candidates
                .iter()
                .any(|found| found.get("_id") == Some(link))
        })
        .collect();
    links.sort_by(compare);
    links.dedup();
    if !links.is_empty() {
        candidates.extend(backend.find(collection, &query(doc! { "_id": { "$in": links } }))?);
        candidates.sort_by(|a, b| compare(&id_of(a), &id_of(b)));
    }
    Ok(Some(candidates))
}

/// The one equality or `$in` clause of a union plan's query, as a filter document.
fn predicate_query(filter: &Filter) -> Option<Document> {
    let [Clause::Field { path, predicate }] = filter.clauses.as_slice() else {
        return None;
    };
    let condition = match predicate {
        Predicate::Eq(operand) => doc! { "$eq": operand.value().clone() },
        Predicate::In(list) => doc! {
            "$in": list.values.iter().map(|value| value.value().clone()).collect::<Vec<_>>()
        },
        _ => return None,
    };
    Some(doc! { path.as_str(): condition })
}
