//! Database-level `aggregate: 1`: pipelines whose first stage makes its own documents
//! instead of reading a collection: `$documents`, `$listLocalSessions` (the sessions this
//! server holds) and `$currentOp` (on `admin`: the commands in progress, from the table
//! `killOp` reads).
//!
//! The generated documents become a `$documents` stage, and the pipeline runs through the
//! facade on an empty collection no client can create (`system.aggregate`), so that
//! `$out`/`$merge` and every later stage behave as on a collection; the cursor reports
//! MongoDB's namespace, `database.$cmd.aggregate`.
//!
//! This module must never read or write a collection itself.

use std::time::{Duration, Instant};

use bson::{Binary, Bson, DateTime, Document, doc, spec::BinarySubtype};

use super::Context;
use super::args::Args;
use super::error::{CommandError, CommandResult};
use super::lock;
use crate::Collection;

/// The first stages a database-level pipeline may start with.
const COLLECTIONLESS_STAGES: &[&str] = &["$documents", "$listLocalSessions", "$currentOp"];

/// SHA-256 of the empty user name: the `uid` MongoDB gives a session when no user is
/// authenticated (Spillway's sessions are not tied to users).
const ANONYMOUS_UID: [u8; 32] = [
    0xe3, 0xb0, 0xc4, 0x42, 0x98, 0xfc, 0x1c, 0x14, 0x9a, 0xfb, 0xf4, 0xc8, 0x99, 0x6f, 0xb9, 0x24,
    0x27, 0xae, 0x41, 0xe4, 0x64, 0x9b, 0x93, 0x4c, 0xa4, 0x95, 0x99, 0x1b, 0x78, 0x52, 0xb8, 0x55,
];

/// The pipeline with its first stage turned into `$documents`; refuses a pipeline that needs
/// a collection (73 InvalidNamespace, as MongoDB).
pub(crate) fn first_stage(
    context: &Context<'_>,
    mut pipeline: Vec<Document>,
) -> CommandResult<Vec<Document>> {
    let name = pipeline
        .first()
        .and_then(|stage| stage.keys().next())
        .cloned()
        .unwrap_or_default();
    if !COLLECTIONLESS_STAGES.contains(&name.as_str()) {
        let shown = if name.is_empty() {
            "an empty pipeline"
        } else {
            &name
        };
        return Err(CommandError::new(
            73,
            format!("{{aggregate: 1}} is not valid for '{shown}'; a collection is required."),
        ));
    }
    let spec = pipeline[0].get(&name).cloned().unwrap_or(Bson::Null);
    let documents = match name.as_str() {
        "$listLocalSessions" => list_local_sessions(context, &spec)?,
        "$currentOp" => current_op(context, &spec)?,
        _ => return Ok(pipeline),
    };
    pipeline[0] = doc! { "$documents": { "$literal": documents } };
    Ok(pipeline)
}

/// The collection a database-level pipeline reads (always empty), and the name its cursor
/// reports (`$cmd.aggregate`).
pub(crate) fn placeholder(context: &Context<'_>) -> CommandResult<(Collection<Document>, String)> {
    let stored = context
        .commands
        .namespaces
        .collectionless(context.database)?;
    Ok((
        context.commands.database.collection::<Document>(&stored),
        "$cmd.aggregate".to_string(),
    ))
}

/// `$listLocalSessions`: `{ _id: { id, uid }, lastUse }` for every session the server holds,
/// the calling command's own included.
fn list_local_sessions(context: &Context<'_>, spec: &Bson) -> CommandResult<Vec<Bson>> {
    let Bson::Document(spec) = spec else {
        return Err(CommandError::new(
            40,
            "$listLocalSessions must take an object as its argument",
        ));
    };
    let args = Args::new("$listLocalSessions", spec);
    args.only(&["allUsers", "users"])?;
    args.bool("allUsers")?;
    args.array("users")?;
    let now = Instant::now();
    let mut sessions = lock(&context.commands.sessions).local_sessions(now);
    if let Some(Bson::Document(own)) = context.args.document.get("lsid")
        && !sessions.iter().any(|(lsid, _)| lsid == own)
    {
        sessions.push((own.clone(), Duration::ZERO));
    }
    let wall_clock = DateTime::now().timestamp_millis();
    Ok(sessions
        .into_iter()
        .map(|(lsid, idle)| {
            let mut id = lsid;
            id.insert(
                "uid",
                Binary {
                    subtype: BinarySubtype::Generic,
                    bytes: ANONYMOUS_UID.to_vec(),
                },
            );
            let idle_ms = i64::try_from(idle.as_millis()).unwrap_or(i64::MAX);
            Bson::Document(doc! {
                "_id": id,
                "lastUse": DateTime::from_millis(wall_clock.saturating_sub(idle_ms)),
            })
        })
        .collect())
}

/// `$currentOp`: only on `admin`; the commands in progress (this one among them), in
/// MongoDB's shape.
fn current_op(context: &Context<'_>, spec: &Bson) -> CommandResult<Vec<Bson>> {
    if context.database != "admin" {
        return Err(CommandError::new(
            73,
            "$currentOp must be run against the 'admin' database with {aggregate: 1}",
        ));
    }
    let Bson::Document(spec) = spec else {
        return Err(CommandError::new(
            40,
            "$currentOp options must be specified in an object",
        ));
    };
    let args = Args::new("$currentOp", spec);
    args.only(&[
        "allUsers",
        "idleConnections",
        "idleCursors",
        "idleSessions",
        "localOps",
        "backtrace",
        "truncateOps",
        "targetAllNodes",
    ])?;
    Ok(super::operations::in_progress(&context.commands.operations))
}
