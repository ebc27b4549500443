//! `renameCollection` of a collection with policies (or onto one), through the proxy, in
//! the steps the embedded database does in one commit: the main collection renamed by the
//! upstream, its policies declared on the new name (the side collections keep their names,
//! their documents and indexes: links hold `_id`s, which a rename keeps), a dropped
//! target's policies removed as a drop removes them.
//!
//! MongoDB renames a collection with a DDL command, which no transaction can hold, so the
//! steps are ordered so that a proxy stopped between any two leaves a state that is either
//! the old one or finished by the next attempt:
//!
//! 1. the intent ([`RenameIntent`]) is written into the policy document, in a transaction
//!    that also checks what the embedded database refuses; from then on every proxy refuses
//!    commands on both names (117), once its policy cache has expired: the proxy that
//!    renames waits [`POLICY_REFRESH`](crate::POLICY_REFRESH) before going on, so that no
//!    other proxy still routes `to` as a plain collection when it is renamed;
//! 2. the upstream renames the collection (the client's command, forwarded);
//! 3. the policies move to the new name and the intent is cleared, in one transaction
//!    ([`PatternedDatabase::finish_rename`]), then the leftovers of the old name go.
//!
//! Stopped after 1, the two names stay refused until the rename is sent again, which goes
//! on from step 2; stopped after 2, any proxy that reads the policies finishes step 3 (the
//! old name is gone and the new one exists). An upstream that refuses step 2 clears the
//! intent: nothing was renamed. This module decides nothing about policies
//! (spillway-mongodb's `begin_rename` refuses what the pattern layer refuses) and must never
//! rename anything across databases: the policy document is per database, and a rename
//! across them is refused before anything is written.

use bson::{Bson, Document, doc};
use spillway::command::CommandError;
use spillway_mongodb::{PatternedDatabase, RenameIntent};

use crate::patterned::{self, Reply};

/// MongoDB's 26 NamespaceNotFound.
const NAMESPACE_NOT_FOUND: i32 = 26;

/// What a `renameCollection` names.
#[derive(Debug)]
pub(crate) struct Namespaces {
    pub(crate) from_database: String,
    pub(crate) from: String,
    pub(crate) to_database: String,
    pub(crate) to: String,
    pub(crate) drop_target: bool,
}

impl Namespaces {
    /// The namespaces of a `renameCollection` and its `dropTarget`; `None` when they cannot
    /// be read (then the upstream answers, with its own message).
    pub(crate) fn of(command: &Document) -> Option<Namespaces> {
        let split = |field: &str| {
            command
                .get_str(field)
                .ok()?
                .split_once('.')
                .map(|(database, collection)| (database.to_owned(), collection.to_owned()))
        };
        let drop_target = match command.get("dropTarget") {
            None | Some(Bson::Null) => false,
            Some(Bson::Boolean(drop_target)) => *drop_target,
            Some(_) => return None,
        };
        let (from_database, from) = split("renameCollection")?;
        let (to_database, to) = split("to")?;
        Some(Namespaces {
            from_database,
            from,
            to_database,
            to,
            drop_target,
        })
    }
}

/// Whether collection `name` of `database` exists upstream.
pub(crate) fn exists(
    forward: &impl Fn(&Document) -> Reply,
    database: &str,
    name: &str,
) -> Result<bool, CommandError> {
    let reply = forward(&doc! {
        "listCollections": 1,
        "filter": { "name": name },
        "nameOnly": true,
        "$db": database,
    })?;
    if !patterned::is_ok(&reply) {
        return Err(CommandError::new(
            reply.get_i32("code").unwrap_or(8000),
            format!(
                "listing the collections of database '{database}' upstream: {}",
                reply.get_str("errmsg").unwrap_or("failed")
            ),
        ));
    }
    Ok(reply
        .get_document("cursor")
        .ok()
        .and_then(|cursor| cursor.get_array("firstBatch").ok())
        .is_some_and(|batch| !batch.is_empty()))
}

/// The checks MongoDB makes before a rename, made before the intent is written so that a
/// refused rename writes nothing: the same name (20), no source (26), an existing target
/// without `dropTarget` (48).
pub(crate) fn check(
    forward: &impl Fn(&Document) -> Reply,
    database: &str,
    intent: &RenameIntent,
) -> Result<(), CommandError> {
    if intent.from == intent.to {
        return Err(CommandError::new(20, "Can't rename a collection to itself"));
    }
    if !exists(forward, database, &intent.from)? {
        return Err(CommandError::new(
            NAMESPACE_NOT_FOUND,
            format!(
                "Source collection {database}.{} does not exist",
                intent.from
            ),
        ));
    }
    if !intent.drop_target && exists(forward, database, &intent.to)? {
        return Err(CommandError::new(48, "target namespace exists"));
    }
    Ok(())
}

/// Steps 2 and 3 (the intent is written): the upstream renames the collection, then the
/// policies follow. `command` is the client's `renameCollection`, forwarded as it came but
/// for `dropTarget`, which is the intent's.
pub(crate) fn carry_out(
    patterned: &PatternedDatabase,
    forward: &impl Fn(&Document) -> Reply,
    database: &str,
    intent: &RenameIntent,
    command: &Document,
) -> Reply {
    if intent.drop_target {
        // The stamps of the documents the rename drops; `to` is refused to every client
        // while the intent stands, so none of them is being written.
        patterned
            .forget_stamps(&intent.to)
            .map_err(|failure| patterned::error(&failure))?;
    }
    let mut forwarded = command.clone();
    forwarded.insert("dropTarget", intent.drop_target);
    let reply = forward(&forwarded)?;
    if !patterned::is_ok(&reply) {
        let code = reply.get_i32("code").ok();
        let renamed_before = code == Some(NAMESPACE_NOT_FOUND)
            && !exists(forward, database, &intent.from)?
            && exists(forward, database, &intent.to)?;
        if !renamed_before {
            // 6 (the proxy's HostUnreachable) and the network errors: the rename may have
            // run; the intent stays, and the next attempt (or the next read of the
            // policies, once `from` is gone) finishes it.
            if !matches!(code, Some(6 | 89 | 9001 | 11600 | 11602 | 91 | 189)) {
                patterned
                    .abandon_rename(intent)
                    .map_err(|failure| patterned::error(&failure))?;
            }
            return Ok(reply);
        }
    }
    patterned
        .finish_rename(intent)
        .map_err(|failure| patterned::error(&failure))?;
    Ok(doc! { "ok": 1.0 })
}
