//! The database profiler: `profile` sets a database's level, and the commands run on a
//! profiled database are recorded in its `system.profile` collection, as MongoDB records
//! them (`op`, `ns`, `command`, `millis`, `ts`, `nreturned`...).
//!
//! Level 0 records nothing, level 2 every command, level 1 those that took `slowms` or
//! more. `system.profile` is a capped collection of 1 MiB, created with the first record;
//! clients may read it and drop it. Recording is a write of its own after the command
//! (never part of the command's transaction) and a failed record never fails the command.
//! Levels are the server's, not the store's: they start at 0 when the server starts, as in
//! MongoDB.

use std::collections::HashMap;
use std::time::Duration;

use bson::{Bson, DateTime, Document, doc};

use super::error::{CommandError, CommandResult};
use super::namespace::client_namespace;
use super::{Commands, Context, lock};
use crate::CollectionOptions;

/// The profiler's collection in each database.
pub(crate) const PROFILE_COLLECTION: &str = "system.profile";

/// How large `system.profile` grows before its oldest records go (MongoDB's default).
const PROFILE_BYTES: u64 = 1024 * 1024;

/// The default threshold of level 1, in milliseconds.
const DEFAULT_SLOW_MS: i64 = 100;

/// The profiler settings of one database.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Level {
    level: i32,
    slow_ms: i64,
}

impl Default for Level {
    fn default() -> Level {
        Level {
            level: 0,
            slow_ms: DEFAULT_SLOW_MS,
        }
    }
}

/// The profiler settings of every database of a server.
pub(crate) type Levels = HashMap<String, Level>;

/// `profile`: sets the level of the command's database (`-1` only reads it) and answers
/// the settings it replaced.
pub(crate) fn profile(context: &mut Context<'_>) -> CommandResult {
    let args = &context.args;
    args.only(&["slowms", "sampleRate", "filter"])?;
    let level = match args.document.get("profile") {
        Some(value) => value
            .as_i32()
            .or_else(|| value.as_i64().and_then(|level| i32::try_from(level).ok()))
            .or_else(|| value.as_f64().map(|level| level as i32))
            .filter(|level| (-1..=2).contains(level))
            .ok_or_else(|| {
                CommandError::bad_value(format!(
                    "profile: the level must be -1, 0, 1 or 2, not {value}"
                ))
            })?,
        None => return Err(args.missing("profile")),
    };
    if args.get("filter").is_some() {
        return Err(CommandError::not_supported(
            "profile: 'filter' is not supported; level 1 records what takes slowms or more",
        ));
    }
    let slow_ms = args.integer("slowms")?;
    let mut levels = lock(&context.commands.profiling);
    let settings = levels.entry(context.database.to_string()).or_default();
    let was = *settings;
    if level >= 0 {
        settings.level = level;
    }
    if let Some(slow_ms) = slow_ms {
        settings.slow_ms = slow_ms;
    }
    Ok(doc! {
        "was": was.level,
        "slowms": was.slow_ms,
        "sampleRate": 1.0,
        "ok": 1.0,
    })
}

/// Records `command` (named `name`, run on `database` for `elapsed`, answered with
/// `reply`) in the database's `system.profile`, if its level asks for it.
pub(crate) fn record(
    commands: &Commands,
    database: &str,
    command: &Document,
    reply: &Document,
    elapsed: Duration,
) {
    let Some(name) = command.keys().next().map(String::as_str) else {
        return;
    };
    let settings = lock(&commands.profiling)
        .get(database)
        .copied()
        .unwrap_or_default();
    let millis = i64::try_from(elapsed.as_millis()).unwrap_or(i64::MAX);
    let wanted = match settings.level {
        2 => true,
        1 => millis >= settings.slow_ms,
        _ => false,
    };
    if !wanted || name == "profile" {
        return;
    }
    let collection = command
        .get(name)
        .and_then(Bson::as_str)
        .unwrap_or("$cmd")
        .to_string();
    let reads_profile = collection == PROFILE_COLLECTION
        || (name == "getMore" && command.get_str("collection").ok() == Some(PROFILE_COLLECTION));
    if reads_profile {
        return;
    }
    let Ok(stored) = commands.namespaces.profile_collection(database) else {
        return;
    };
    let mut shown = command.clone();
    for internal in [
        "$db",
        "lsid",
        "$clusterTime",
        "txnNumber",
        "$readPreference",
    ] {
        shown.remove(internal);
    }
    let mut entry = doc! {
        "op": operation(name),
        "ns": client_namespace(database, &collection),
        "command": shown,
        "millis": millis,
        "ts": DateTime::now(),
        "client": "127.0.0.1",
        "user": "",
    };
    if let Some(n) = returned(reply) {
        entry.insert("nreturned", n);
    }
    if let Some(ok) = reply.get("ok") {
        entry.insert("ok", ok.clone());
    }
    let database = &commands.database;
    let exists = database
        .list_collection_names()
        .run()
        .is_ok_and(|names| names.contains(&stored));
    if !exists {
        let options = CollectionOptions::default().capped(PROFILE_BYTES, None);
        // Another thread may have created it meanwhile: the insert below still works.
        let _ = database.create_collection_with(&stored, &options);
    }
    // A profile record that cannot be written is lost; the command's reply stands.
    let _ = database
        .collection::<Document>(&stored)
        .insert_one(entry)
        .run();
}

/// MongoDB's `op` for a command.
fn operation(name: &str) -> &'static str {
    match name {
        "find" => "query",
        "getMore" => "getmore",
        "insert" => "insert",
        "update" => "update",
        "delete" => "remove",
        _ => "command",
    }
}

/// How many documents a reply carried (a cursor's batch, or `n` of a write).
fn returned(reply: &Document) -> Option<i32> {
    let cursor = reply.get_document("cursor").ok()?;
    let batch = cursor
        .get_array("firstBatch")
        .or_else(|_| cursor.get_array("nextBatch"))
        .ok()?;
    i32::try_from(batch.len()).ok()
}
