//! The write paths of a statement, over any backend: inserts and updates of logical
//! documents in a main collection (the append fast path, or expand, apply, split), deletes
//! with their side documents, direct writes to side collections followed by one resync per
//! main document they touched, and what dropping or renaming a collection does to its
//! policies.
//!
//! A backend only stores: everything here decides what to write from what it reads, and
//! ends in [`WriteBackend::apply`] batches, which a caller collecting a [`Statement`] of
//! several documents applies together.
//!
//! [`Statement`]: crate::Statement

use std::collections::HashSet;

use bson::{Bson, DateTime, Document, RawDocument, doc};
use spillway_doc::compare::values_equal;
use spillway_doc::filter::Filter;
use spillway_doc::key;
use spillway_doc::size::check_nesting;
use spillway_doc::update::{Appends, ApplyContext, Update};

use crate::backend::{Query, ReadBackend, Write, WriteBackend};
use crate::engine::{Engine, check_side_write, prepare_side_insert, resync};
use crate::error::PatternError;
use crate::policy::{Policy, Progress};
use crate::statement::Statement;

/// Refuses writes to a collection while one of `policies` that involves it (as main or side
/// collection) is still being applied or removed.
///
/// # Errors
/// [`PatternError::Refused`] naming the policy.
pub fn check_settled<'p>(
    policies: impl IntoIterator<Item = &'p Policy>,
) -> Result<(), PatternError> {
    for policy in policies {
        if policy.progress != Progress::Active {
            return Err(PatternError::Refused {
                collection: policy.pattern.collection.clone(),
                field: policy.pattern.field.clone(),
                message: "the policy is still being applied or removed; resuming the migrations finishes it".to_string(),
            });
        }
    }
    Ok(())
}

/// Inserts a logical document, which has its `_id`, into the main collection of `engine`.
/// Returns the stored main document.
///
/// # Errors
/// [`PatternError::DuplicateId`], [`PatternError::Refused`] (a field the policy owns, a bad
/// subset element, a policy being migrated), a document nested too deep; the backend's.
pub fn insert_main<W: WriteBackend>(
    engine: &Engine<'_>,
    backend: &mut W,
    document: Document,
) -> Result<Document, W::Error> {
    check_settled(engine.policies())?;
    check_nesting(&document).map_err(PatternError::document)?;
    let id = document.get("_id").cloned().unwrap_or(Bson::Null);
    if backend.get(engine.collection(), &id)?.is_some() {
        return Err(PatternError::DuplicateId {
            collection: engine.collection().to_string(),
            id: Box::new(id),
        }
        .into());
    }
    engine.insert(backend, document)
}

/// Applies `update` to the stored main document `stored` (raw) of `engine`'s collection,
/// which `filter` matched: plain appends to full outlier arrays without decoding it, other
/// plain appends by the decoded fast path, everything else by expand, apply, split. Returns
/// whether the document changed.
///
/// Pass a [`Statement`]'s backend when the statement updates several
/// documents.
///
/// # Errors
/// An invalid update ([`PatternError::Input`]), one the policy refuses; the backend's.
pub fn update_main<W: WriteBackend>(
    engine: &Engine<'_>,
    backend: &mut W,
    stored: &RawDocument,
    filter: &Filter,
    update: &Update,
    now: DateTime,
) -> Result<bool, W::Error> {
    check_settled(engine.policies())?;
    engine.check_update(&update.operations())?;
    let appends = update.split_appends(&engine.managed_fields());
    if let Some(appends) = &appends
        && appends.add_to_set.is_empty()
        && appends.rest.operations().is_empty()
        && engine.append_raw(backend, stored, &appends.values)?
    {
        return Ok(true);
    }
    let stored = spillway_doc::decode::document(stored).map_err(|error| PatternError::Corrupt {
        collection: engine.collection().to_string(),
        link: Box::new(spillway_doc::raw::document_id(stored)),
        message: format!("a stored main document is not valid BSON: {error}"),
    })?;
    let context = ApplyContext::new(now);
    let appends = match appends {
        Some(appends) => with_absent_values(engine, &*backend, &stored, appends)?,
        None => None,
    };
    if let Some(appends) = appends {
        let mut main = stored.clone();
        let rest = appends
            .rest
            .apply(&mut main, &context)
            .map_err(PatternError::update)?;
        let pushes = appends.values.iter().any(|(_, values)| !values.is_empty());
        // `$push: { f: { $each: [] } }` changes nothing only when `f` is an array: on a
        // missing field it creates `[]`, on anything else it fails. Those go to the general
        // path below, which has MongoDB's semantics.
        let targets_are_arrays = appends
            .values
            .iter()
            .all(|(field, _)| matches!(main.get(field.as_str()), Some(Bson::Array(_))));
        if !pushes && !rest.modified && targets_are_arrays {
            return Ok(false);
        }
        if engine.append(backend, main, &appends.values)?.is_some() {
            return Ok(true);
        }
    }
    let view = engine.query_view(&*backend, &stored)?;
    let positional = filter
        .match_details_document(&view)
        .map_err(PatternError::filter)?
        .and_then(|details| details.array_index);
    let mut logical = engine.expand(&*backend, &stored)?;
    let outcome = update
        .apply(&mut logical, &context.with_positional_index(positional))
        .map_err(PatternError::update)?;
    if !outcome.modified {
        return Ok(false);
    }
    engine.check_document(&logical)?;
    check_nesting(&logical).map_err(PatternError::document)?;
    engine.rewrite(backend, &stored, logical)?;
    Ok(true)
}

/// Turns the `$addToSet`s of an append-only update into plain appends of the values the
/// logical arrays do not hold yet, each membership answered by the engine without expanding
/// the array; `None` (take the general path) when the engine cannot answer one, or when a
/// target array is missing (`$addToSet` then creates it, which the general path does).
fn with_absent_values<R: ReadBackend>(
    engine: &Engine<'_>,
    backend: &R,
    stored: &Document,
    mut appends: Appends,
) -> Result<Option<Appends>, R::Error> {
    for (field, candidates) in std::mem::take(&mut appends.add_to_set) {
        if !matches!(stored.get(field.as_str()), Some(Bson::Array(_))) {
            return Ok(None);
        }
        let mut absent: Vec<Bson> = Vec::new();
        for value in candidates {
            if absent.iter().any(|known| values_equal(known, &value)) {
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

/// Deletes the stored main document `stored` of `engine`'s collection with its side
/// documents.
///
/// # Errors
/// A policy being migrated; the backend's.
pub fn delete_main<W: WriteBackend>(
    engine: &Engine<'_>,
    backend: &mut W,
    stored: &Document,
) -> Result<(), W::Error> {
    check_settled(engine.policies())?;
    engine.delete(backend, stored)
}

/// Refuses new versions of documents of a side collection (`documents`, written directly
/// by the user) that would not have the layout of `policies`, the policies on that side
/// collection.
///
/// # Errors
/// [`PatternError::Refused`] naming the document and the problem; the backend's.
pub fn check_side_writes<'d, R: ReadBackend>(
    policies: &[&Policy],
    backend: &R,
    documents: impl IntoIterator<Item = &'d Document>,
) -> Result<(), R::Error> {
    check_settled(policies.iter().copied())?;
    for document in documents {
        for policy in policies {
            check_side_write(policy, backend, document)?;
        }
    }
    Ok(())
}

/// The main documents (`_id`s, each once, with their policy) that `documents` of a side
/// collection link to: the main documents a statement on the side collection touched, from
/// the documents' versions before and after it.
pub fn linked_mains<'p, 'd>(
    policies: &[&'p Policy],
    documents: impl IntoIterator<Item = &'d Document>,
) -> Vec<(&'p Policy, Bson)> {
    let mut seen = HashSet::new();
    let mut links = Vec::new();
    for document in documents {
        for (position, policy) in policies.iter().enumerate() {
            if let Some(link) = document.get(policy.pattern.link_field.as_str())
                && seen.insert((position, key::to_key(link)))
            {
                links.push((*policy, link.clone()));
            }
        }
    }
    links
}

/// Brings each of `links` back in step with the side documents a statement left, all in one
/// batch. Resyncing after each side document instead would re-split buckets that later
/// changes of the same statement still address by their old content.
///
/// # Errors
/// The backend's.
pub fn resync_mains<W: WriteBackend>(
    backend: &mut W,
    links: Vec<(&Policy, Bson)>,
) -> Result<(), W::Error> {
    let mut statement = Statement::default();
    for (policy, link) in links {
        resync(policy, &mut statement.over(backend), &link)?;
    }
    statement.finish(backend)
}

/// Inserts a document (with its `_id`) directly into a side collection whose policies are
/// `policies`: refused unless it has the layout's shape, then its main document is brought
/// in step. Returns the stored document.
///
/// # Errors
/// As [`check_side_writes`]; the backend's.
pub fn insert_side<W: WriteBackend>(
    collection: &str,
    policies: &[&Policy],
    backend: &mut W,
    mut document: Document,
) -> Result<Document, W::Error> {
    for policy in policies {
        prepare_side_insert(policy, &*backend, &mut document)?;
    }
    check_side_writes(policies, &*backend, [&document])?;
    backend.apply(vec![Write::Insert {
        collection: collection.to_string(),
        document: document.clone(),
    }])?;
    let links = linked_mains(policies, [&document]);
    resync_mains(backend, links)?;
    Ok(document)
}

/// Whether `from` may be renamed to `to` as far as `policies` go: a side collection cannot
/// be renamed on its own, nor can a collection take a side collection's name, while its
/// policy exists (as a side collection cannot be dropped: its policy names it).
///
/// # Errors
/// [`PatternError::Refused`] naming the policy.
pub fn check_rename(policies: &[Policy], from: &str, to: &str) -> Result<(), PatternError> {
    for policy in policies {
        let side = policy.pattern.side_collection.as_str();
        let message = if side == from {
            format!(
                "'{from}' is the policy's side collection and cannot be renamed while the policy exists; rename '{}', whose policy keeps its side collection",
                policy.pattern.collection
            )
        } else if side == to {
            format!(
                "'{to}' is the policy's side collection: '{from}' cannot be renamed to it while the policy exists"
            )
        } else {
            continue;
        };
        return Err(PatternError::Refused {
            collection: policy.pattern.collection.clone(),
            field: policy.pattern.field.clone(),
            message,
        });
    }
    Ok(())
}

/// Before main collection `from` is renamed to `to` (whose documents keep their `_id`s): its
/// policies are declared on `to` instead, each with its migration progress (kept by `_id`,
/// so an unfinished migration resumes on `to` where it stopped), and each side collection
/// takes the name `side_name` gives it (its own name: it stays where it is; links hold main
/// `_id`s, which do not change). Returns the side collections the caller must rename,
/// `(old, new)`, in the same write. Call it once `to` is free (a dropped target's policies
/// are gone).
///
/// # Errors
/// [`PatternError::Refused`] naming the policy: [`check_rename`]'s refusals, a new side
/// collection name that exists or that another policy uses; the backend's.
pub fn before_rename<W: WriteBackend>(
    backend: &mut W,
    from: &str,
    to: &str,
    side_name: impl Fn(&str) -> String,
) -> Result<Vec<(String, String)>, W::Error> {
    let mut policies = backend.policies()?;
    check_rename(&policies, from, to)?;
    let mut moves = Vec::new();
    for index in 0..policies.len() {
        let pattern = &policies[index].pattern;
        if pattern.collection != from {
            continue;
        }
        let side = pattern.side_collection.clone();
        let new_side = side_name(&side);
        if new_side != side {
            let refused = |message: String| PatternError::Refused {
                collection: pattern.collection.clone(),
                field: pattern.field.clone(),
                message,
            };
            let taken = policies.iter().any(|other| {
                other.pattern.collection == new_side || other.pattern.side_collection == new_side
            });
            if new_side == to || taken || backend.collection_exists(&new_side)? {
                return Err(refused(format!(
                    "its side collection '{side}' cannot be renamed to '{new_side}', which exists"
                ))
                .into());
            }
            moves.push((side, new_side.clone()));
        }
        let renamed = policies[index]
            .pattern
            .clone()
            .on_collections(to, &new_side);
        policies[index].pattern = renamed;
    }
    if !moves.is_empty()
        || policies
            .iter()
            .any(|policy| policy.pattern.collection == to)
    {
        backend.save_policies(policies)?;
    }
    Ok(moves)
}

/// Before `collection` is dropped: a side collection cannot be dropped while its policy
/// exists; dropping a main collection removes its policies and drops the side collections
/// they created (from an adopted one, only the side documents the policies own go).
///
/// # Errors
/// [`PatternError::Refused`] for a side collection; the backend's.
pub fn before_drop<W: WriteBackend>(backend: &mut W, collection: &str) -> Result<(), W::Error> {
    let policies = backend.policies()?;
    if let Some(policy) = policies
        .iter()
        .find(|policy| policy.pattern.side_collection == collection)
    {
        return Err(PatternError::Refused {
            collection: policy.pattern.collection.clone(),
            field: policy.pattern.field.clone(),
            message: format!(
                "'{collection}' is the policy's side collection and cannot be dropped while the policy exists"
            ),
        }
        .into());
    }
    let (dropped, kept): (Vec<Policy>, Vec<Policy>) = policies
        .into_iter()
        .partition(|policy| policy.pattern.collection == collection);
    if dropped.is_empty() {
        return Ok(());
    }
    backend.save_policies(kept)?;
    for policy in dropped {
        let side = &policy.pattern.side_collection;
        if policy.created_side {
            backend.drop_collection(side)?;
            continue;
        }
        // An adopted side collection stays: only the side documents the policy owns (every
        // document linked to a main document, all of which are being dropped) go.
        let owned = backend.find(
            side,
            &Query {
                filter: doc! { policy.pattern.link_field.as_str(): { "$exists": true } },
                ..Query::default()
            },
        )?;
        let deletes = owned
            .into_iter()
            .map(|document| Write::Delete {
                collection: side.clone(),
                id: document.get("_id").cloned().unwrap_or(Bson::Null),
            })
            .collect::<Vec<_>>();
        if !deletes.is_empty() {
            backend.apply(deletes)?;
        }
    }
    Ok(())
}
