//! Declaring and removing policies, and the migrations that bring stored documents into a
//! policy's layout or back out of it, over any backend.
//!
//! Declaring a policy must never change the user's data: a flag that collides with data, or
//! a side collection whose documents are not in the layout, is refused before anything is
//! written ([`declare`]). Migrations run in batches of `_id` order ([`migration_step`]), each
//! batch meant to be its own atomic commit together with the progress it records in the
//! policy store, so that a crash or a failover resumes where it stopped.

use bson::{Bson, Document};

use crate::backend::{ReadBackend, WriteBackend};
use crate::engine::{Engine, check_adoptable};
use crate::error::PatternError;
use crate::matching::mirrored_index;
use crate::policy::{Pattern, Policy, Progress};

/// Main documents migrated per batch when a policy is applied or removed.
pub const MIGRATION_BATCH: usize = 256;

fn same_policy(a: &Pattern, b: &Pattern) -> bool {
    a.collection == b.collection && a.field == b.field
}

fn refuse(pattern: &Pattern, message: String) -> PatternError {
    PatternError::InvalidPolicy {
        collection: pattern.collection.clone(),
        field: pattern.field.clone(),
        message,
    }
}

/// The main document fields a policy writes: its array and its flag.
fn main_fields(pattern: &Pattern) -> Vec<&str> {
    let mut fields = vec![pattern.field.as_str()];
    fields.extend(pattern.reserved_main_field());
    fields
}

/// Checks a new policy against the declared ones and the collections that exist.
fn check_new_policy<R: ReadBackend>(
    backend: &R,
    policies: &[Policy],
    pattern: &Pattern,
) -> Result<(), R::Error> {
    if !backend.collection_exists(&pattern.collection)? {
        return Err(refuse(
            pattern,
            format!(
                "collection '{}' does not exist; create it (or insert into it) first",
                pattern.collection
            ),
        )
        .into());
    }
    for policy in policies {
        let known = &policy.pattern;
        if same_policy(known, pattern) {
            return Err(refuse(pattern, "the field already has a policy".to_string()).into());
        }
        let owner = format!("the policy on {}.{}", known.collection, known.field);
        let clash = if known.side_collection == pattern.side_collection {
            Some(format!(
                "side collection '{}' already belongs to {owner}",
                pattern.side_collection
            ))
        } else if known.side_collection == pattern.collection {
            Some(format!(
                "'{}' is the side collection of {owner}",
                pattern.collection
            ))
        } else if known.collection == pattern.side_collection {
            Some(format!(
                "side collection '{}' is the main collection of {owner}",
                pattern.side_collection
            ))
        } else {
            None
        };
        if let Some(clash) = clash {
            return Err(refuse(pattern, clash).into());
        }
        if known.collection == pattern.collection {
            // Two policies of one collection must not write the same main field.
            let ours = main_fields(pattern);
            if let Some(shared) = main_fields(known)
                .into_iter()
                .find(|field| ours.contains(field))
            {
                return Err(refuse(
                    pattern,
                    format!(
                        "the field '{shared}' is already maintained by {owner}; choose another flag field"
                    ),
                )
                .into());
            }
        }
    }
    Ok(())
}

/// Calls `check` on every stored document of `collection`, a batch at a time.
fn each_document<R: ReadBackend>(
    backend: &R,
    collection: &str,
    mut check: impl FnMut(&Document) -> Result<(), R::Error>,
) -> Result<(), R::Error> {
    let mut through: Option<Bson> = None;
    loop {
        let batch = backend.documents_after(collection, through.as_ref(), MIGRATION_BATCH)?;
        for document in &batch {
            check(document)?;
        }
        match batch.last() {
            Some(last) if batch.len() == MIGRATION_BATCH => through = last.get("_id").cloned(),
            _ => return Ok(()),
        }
    }
}

/// Declares a policy: validates it against the backend, adopts an existing side collection
/// only when each of its documents already has the layout's shape, checks that every stored
/// main document can take the layout, creates the side collection, its index and the
/// mirrors of the main collection's indexes, and stores the policy, `Applying` when the
/// collection has documents (then [`migration_step`] until [`unfinished`] is `None`).
///
/// Everything is checked before anything is written: a refused policy leaves the backend
/// as it was, provided the caller discards the transaction on error.
///
/// # Errors
/// [`PatternError::InvalidPolicy`] or [`PatternError::Refused`] naming the field and one
/// `_id`; the backend's.
pub fn declare<W: WriteBackend>(backend: &mut W, pattern: Pattern) -> Result<(), W::Error> {
    pattern.validate()?;
    let mut policies = backend.policies()?;
    check_new_policy(&*backend, &policies, &pattern)?;
    let only = [Policy::active(pattern.clone())];
    let engine = Engine::new(&pattern.collection, &only);
    let side = &pattern.side_collection;
    let side_existed = backend.collection_exists(side)?;
    each_document(&*backend, side, |document| {
        check_adoptable(&only[0], &*backend, document)
    })?;
    backend.create_collection(side)?;
    backend.ensure_index(side, &pattern.side_index())?;
    each_document(&*backend, &pattern.collection, |document| {
        engine.check_migratable(&*backend, document)
    })?;
    let has_documents = !backend
        .documents_after(&pattern.collection, None, 1)?
        .is_empty();
    let existing = backend.index_keys(&pattern.collection)?;
    for keys in &existing {
        if let Some(mirrored) = mirrored_index(&pattern, keys) {
            backend.ensure_index(side, &mirrored)?;
        }
    }
    policies.push(Policy {
        progress: if has_documents {
            Progress::Applying { through: None }
        } else {
            Progress::Active
        },
        created_side: !side_existed,
        pattern,
    });
    backend.save_policies(policies)
}

/// Marks the policy on `collection.field` for removal: [`migration_step`] then folds every
/// logical array back into its main document and deletes its side documents, and drops the
/// side collection if declaring the policy created it and nothing is left in it.
///
/// # Errors
/// [`PatternError::InvalidPolicy`] when there is no such policy; the backend's.
pub fn remove<W: WriteBackend>(
    backend: &mut W,
    collection: &str,
    field: &str,
) -> Result<(), W::Error> {
    let mut policies = backend.policies()?;
    let Some(policy) = policies
        .iter_mut()
        .find(|policy| policy.pattern.collection == collection && policy.pattern.field == field)
    else {
        return Err(PatternError::InvalidPolicy {
            collection: collection.to_string(),
            field: field.to_string(),
            message: "there is no policy on this field".to_string(),
        }
        .into());
    };
    policy.progress = Progress::Removing { through: None };
    backend.save_policies(policies)
}

/// The first policy whose migration is unfinished, if any.
pub fn unfinished(policies: &[Policy]) -> Option<&Policy> {
    policies
        .iter()
        .find(|policy| policy.progress != Progress::Active)
}

/// One migration step of `policy`: the next `batch` main documents split (or folded back),
/// and the progress stored. Commit after each step.
///
/// # Errors
/// A document that cannot be folded back (over 16 MiB); the backend's.
pub fn migration_step<W: WriteBackend>(
    backend: &mut W,
    policy: &Policy,
    batch: usize,
) -> Result<(), W::Error> {
    let (through, removing) = match &policy.progress {
        Progress::Active => return Ok(()),
        Progress::Applying { through } => (through.clone(), false),
        Progress::Removing { through } => (through.clone(), true),
    };
    let pattern = &policy.pattern;
    let documents = backend.documents_after(&pattern.collection, through.as_ref(), batch)?;
    let only = [Policy::active(pattern.clone())];
    let engine = Engine::new(&pattern.collection, &only);
    for document in &documents {
        if removing {
            engine.fold(backend, document)?;
        } else {
            engine.migrate(backend, document)?;
        }
    }
    let finished = documents.len() < batch;
    let last = documents
        .last()
        .and_then(|document| document.get("_id").cloned());
    let mut policies = backend.policies()?;
    let position = policies
        .iter()
        .position(|known| same_policy(&known.pattern, pattern))
        .ok_or_else(|| PatternError::InvalidRecord {
            message: format!(
                "the policy on {}.{} being migrated is no longer declared",
                pattern.collection, pattern.field
            ),
        })?;
    let mut drop_side = false;
    match (finished, removing) {
        (true, false) => policies[position].progress = Progress::Active,
        (true, true) => {
            policies.remove(position);
            // Only a side collection the policy created goes, and only once nothing is left
            // in it: an adopted collection, or documents the policy does not own, stay.
            let side = &pattern.side_collection;
            drop_side = policy.created_side
                && backend.documents_after(side, None, 1)?.is_empty()
                && !policies.iter().any(|other| {
                    other.pattern.collection == *side || other.pattern.side_collection == *side
                });
        }
        (false, false) => policies[position].progress = Progress::Applying { through: last },
        (false, true) => policies[position].progress = Progress::Removing { through: last },
    }
    backend.save_policies(policies)?;
    if drop_side {
        backend.drop_collection(&pattern.side_collection)?;
    }
    Ok(())
}

/// After the index `keys` is created on `collection`: each of its policies' side collections
/// gets the mirrored index (`customers_purchased` → `customers_purchased_extra`,
/// `reviews.author` → `author`), so that logical equality queries can use both.
///
/// # Errors
/// The backend's.
pub fn mirror_index<W: WriteBackend>(
    backend: &mut W,
    collection: &str,
    keys: &Document,
) -> Result<(), W::Error> {
    for policy in backend.policies()? {
        if policy.pattern.collection != collection {
            continue;
        }
        if let Some(mirrored) = mirrored_index(&policy.pattern, keys) {
            backend.ensure_index(&policy.pattern.side_collection, &mirrored)?;
        }
    }
    Ok(())
}
