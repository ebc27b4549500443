//! The operations in progress: every command is registered while it runs, so that
//! `currentOp` (and the `$currentOp` stage) can list it and `killOp` can stop it.
//!
//! `killOp` sets the operation's interrupt flag; the server-side JavaScript the command runs
//! looks at that flag (`javascript::ScriptLimits::interrupt`) and stops with `Interrupted`
//! (11601). Other work is short or bounded by its own limits and finishes. This module must
//! never run a command: the dispatcher registers one around its handler.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::Instant;

use bson::{Bson, DateTime, Document, doc};

use super::Context;
use super::error::{CommandError, CommandResult};

/// Fields a registered command is listed without: bulk payloads (a summary must not copy a
/// large insert) and session plumbing.
const UNLISTED_FIELDS: &[&str] = &[
    "documents",
    "updates",
    "deletes",
    "ops",
    "nsInfo",
    "lsid",
    "txnNumber",
    "$clusterTime",
];

/// The commands running now, by operation id.
#[derive(Debug, Default)]
pub(crate) struct OperationTable {
    next_id: u32,
    running: HashMap<u32, Running>,
}

#[derive(Debug)]
struct Running {
    /// The command without [`UNLISTED_FIELDS`].
    command: Document,
    database: String,
    lsid: Option<Bson>,
    started: Instant,
    interrupt: Arc<AtomicBool>,
}

/// A registered operation; it leaves the table when dropped.
pub(crate) struct Registered<'a> {
    table: &'a Mutex<OperationTable>,
    id: u32,
    /// Set by `killOp`.
    pub(crate) interrupt: Arc<AtomicBool>,
}

impl Drop for Registered<'_> {
    fn drop(&mut self) {
        lock(self.table).running.remove(&self.id);
    }
}

fn lock(table: &Mutex<OperationTable>) -> MutexGuard<'_, OperationTable> {
    table.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Registers `command` on `database` as running until the returned guard drops.
pub(crate) fn register<'a>(
    table: &'a Mutex<OperationTable>,
    database: &str,
    command: &Document,
) -> Registered<'a> {
    let summary: Document = command
        .iter()
        .filter(|(key, _)| !UNLISTED_FIELDS.contains(&key.as_str()))
        .map(|(key, value)| (key.clone(), value.clone()))
        .collect();
    let interrupt = Arc::new(AtomicBool::new(false));
    let mut guard = lock(table);
    guard.next_id = guard.next_id.wrapping_add(1).max(1);
    let id = guard.next_id;
    guard.running.insert(
        id,
        Running {
            command: summary,
            database: database.to_owned(),
            lsid: command.get("lsid").cloned(),
            started: Instant::now(),
            interrupt: Arc::clone(&interrupt),
        },
    );
    Registered {
        table,
        id,
        interrupt,
    }
}

/// Every running operation in MongoDB's `currentOp` shape, oldest first.
pub(crate) fn in_progress(table: &Mutex<OperationTable>) -> Vec<Bson> {
    let guard = lock(table);
    let mut running: Vec<(&u32, &Running)> = guard.running.iter().collect();
    running.sort_by_key(|(_, operation)| operation.started);
    let now = Instant::now();
    running
        .into_iter()
        .map(|(id, operation)| {
            let elapsed = now.duration_since(operation.started);
            let name = operation.command.keys().next().map_or("", String::as_str);
            let collection = operation.command.values().next().and_then(Bson::as_str);
            let namespace = match collection {
                Some(collection) => format!("{}.{collection}", operation.database),
                None => format!("{}.$cmd", operation.database),
            };
            let mut listed = doc! {
                "type": "op",
                "host": "localhost",
                "desc": "conn",
                "active": true,
                "currentOpTime": DateTime::now().try_to_rfc3339_string().unwrap_or_default(),
                "opid": i64::from(*id),
                "secs_running": i64::try_from(elapsed.as_secs()).unwrap_or(i64::MAX),
                "microsecs_running": i64::try_from(elapsed.as_micros()).unwrap_or(i64::MAX),
                "op": if name == "getMore" { "getmore" } else { "command" },
                "ns": namespace,
                "command": operation.command.clone(),
                "numYields": 0,
                "locks": {},
                "waitingForLock": false,
                "lockStats": {},
                "killPending": operation.interrupt.load(Ordering::Relaxed),
            };
            if let Some(lsid) = &operation.lsid {
                listed.insert("lsid", lsid.clone());
            }
            Bson::Document(listed)
        })
        .collect()
}

fn admin_only(context: &Context<'_>, name: &str) -> CommandResult<()> {
    if context.database == "admin" {
        return Ok(());
    }
    Err(CommandError::new(
        13,
        format!("{name} may only be run against the admin database."),
    ))
}

/// `currentOp`: `{ inprog: [...] }`, every command running now (on `admin`).
pub(crate) fn current_op(context: &mut Context<'_>) -> CommandResult {
    admin_only(context, "currentOp")?;
    Ok(doc! { "inprog": in_progress(&context.commands.operations), "ok": 1.0 })
}

/// `killOp: 1, op: <opid>` (on `admin`): marks the operation killed; its running script
/// stops with `Interrupted` (11601). As in MongoDB, an unknown id is not an error.
pub(crate) fn kill_op(context: &mut Context<'_>) -> CommandResult {
    admin_only(context, "killOp")?;
    context.args.only(&["op", "comment"])?;
    let id = match context.args.get("op") {
        Some(Bson::Int32(id)) => i64::from(*id),
        Some(Bson::Int64(id)) => *id,
        Some(Bson::Double(id)) if id.fract() == 0.0 => *id as i64,
        Some(other) => {
            return Err(CommandError::type_mismatch(format!(
                "killOp: 'op' must be an operation id (a number), not {other}"
            )));
        }
        None => {
            return Err(CommandError::new(
                4,
                "killOp: no 'op' field: say which operation to kill",
            ));
        }
    };
    if let Ok(id) = u32::try_from(id)
        && let Some(operation) = lock(&context.commands.operations).running.get(&id)
    {
        operation.interrupt.store(true, Ordering::SeqCst);
    }
    Ok(doc! { "info": "attempting to kill op", "ok": 1.0 })
}
