//! The command layer: MongoDB's database commands as documents, executed into MongoDB's reply
//! documents (`{ ok: 1, ... }`, or `{ ok: 0, errmsg, code, codeName, errorLabels }`).
//!
//! One implementation serves the wire server (`spillway-server`), and is meant for the shell
//! and the conformance runner too. A command names its database in `$db`; a server's
//! databases live in one store ([`Namespaces`]), so a transaction spans databases as one
//! atomic batch.
//!
//! | module | what it holds |
//! |---|---|
//! | `api` | the Stable API's `apiVersion`, `apiStrict`, `apiDeprecationErrors` |
//! | `args` | typed reading of a command's fields, with MongoDB's parse errors |
//! | `error` | [`CommandError`]: codes, codeNames and labels, and the facade's errors translated |
//! | `labels` | the error labels MongoDB's server computes for a reply (`RetryableWriteError`...) |
//! | `namespace` | [`Namespaces`]: database and collection names to stored collections |
//! | `cursors` | open cursors between a command and its `getMore`s |
//! | `sessions` | logical sessions: retryable writes answered once, transactions across requests |
//! | `bulk` | `bulkWrite` (MongoDB 8.0): operations on many namespaces, results in a cursor |
//! | `collectionless` | database-level `aggregate: 1`: `$documents`, `$listLocalSessions`, `$currentOp` |
//! | `operations` | the commands in progress: `currentOp`, `killOp`, which interrupts their scripts |
//! | `let_vars` | `let` of the write commands, bound around the expressions that read it |
//! | `privileges` | what each command needs to be allowed: MongoDB's actions on resources |
//! | `stats` | `collStats`, `dbStats`, database sizes, `$collStats` and `$indexStats` |
//! | `read`, `write`, `ddl`, `patterns` | the commands themselves |
//!
//! This module must never know sockets or message framing: it takes a command document and
//! returns a reply document.

mod api;
mod args;
mod bulk;
mod changes;
mod collectionless;
mod cursors;
mod ddl;
mod error;
mod labels;
mod let_vars;
mod namespace;
mod operations;
mod patterns;
mod privileges;
mod profile;
mod read;
mod sessions;
mod stats;
mod usage;
mod write;

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, LazyLock, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use bson::{Bson, Document, Timestamp, doc};
use spillway_doc::javascript;

pub use args::GENERIC_FIELDS;
pub use error::CommandError;
pub use labels::{
    RESUMABLE_CHANGE_STREAM_ERROR, add_error_labels, error_labels, is_resumable_change_stream_code,
    is_retryable_code,
};
pub use namespace::{
    DEFAULT_EMBEDDED_DATABASE, EMBEDDED_SYSTEM_PREFIX, EmbeddedDatabase, Namespaces,
    STORED_VIEW_PREFIX, directory_database_name, embedded_database_of, is_embedded_stored_name,
    is_valid_database_name,
};
pub use privileges::{ActionType, Privilege, Resource, unauthorized_message};

use self::args::Args;
use self::cursors::CursorTable;
use self::error::CommandResult;
use self::sessions::{SessionTable, TxnState};
use crate::{CollectionOptions, Database, Transaction};

/// Executes MongoDB commands against one [`Database`] that holds every database of a server.
///
/// ```
/// use spillway::{Database, doc};
/// use spillway::command::Commands;
///
/// let commands = Commands::new(Database::open_in_memory()?);
/// let reply = commands.execute(doc! {
///     "insert": "books", "documents": [{ "_id": 1, "title": "Dune" }], "$db": "shop",
/// });
/// assert_eq!(reply.get_i32("n")?, 1);
/// let reply = commands.execute(doc! { "find": "books", "filter": {}, "$db": "shop" });
/// let batch = reply.get_document("cursor")?.get_array("firstBatch")?;
/// assert_eq!(batch.len(), 1);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct Commands {
    database: Database,
    namespaces: Namespaces,
    cursors: Mutex<CursorTable>,
    sessions: Mutex<SessionTable>,
    /// The increment of the last cluster time handed out in the current second.
    clock: Mutex<(u32, u32)>,
    connection_ids: AtomicU32,
    /// The profiler's level of each database (`profile`).
    profiling: Mutex<profile::Levels>,
    /// When [`Commands::reap_expired`] last pruned the durable session records.
    session_records_pruned: Mutex<Instant>,
    /// The commands running now (`currentOp`, `killOp`).
    operations: Mutex<operations::OperationTable>,
    /// Each collection's operations and their latencies (`top`, `$collStats`).
    usage: usage::UsageTable,
}

/// What one command runs with: its database, its arguments, and the transaction it belongs
/// to, if any.
pub(crate) struct Context<'a> {
    pub(crate) commands: &'a Commands,
    /// The database the command names in `$db`.
    pub(crate) database: &'a str,
    pub(crate) args: Args<'a>,
    pub(crate) transaction: Option<&'a mut Transaction>,
}

impl Context<'_> {
    /// The stored name of the command's collection `collection`.
    pub(crate) fn stored(&self, collection: &str) -> CommandResult<String> {
        if let Some(base) = namespace::stored_view_of(collection) {
            return Err(namespace::stored_view_is_read_only(
                self.database,
                collection,
                base,
            ));
        }
        self.commands.namespaces.stored(self.database, collection)
    }

    /// The stored name of the collection a read names, and whether it asks for the stored
    /// layout (`system.stored.<collection>`, see [`namespace::STORED_VIEW_PREFIX`]).
    pub(crate) fn stored_for_read(&self, collection: &str) -> CommandResult<(String, bool)> {
        match namespace::stored_view_of(collection) {
            Some(base) => Ok((self.commands.namespaces.stored(self.database, base)?, true)),
            None => Ok((self.stored(collection)?, false)),
        }
    }

    /// `database.collection` as the client names it.
    pub(crate) fn namespace(&self, collection: &str) -> String {
        namespace::client_namespace(self.database, collection)
    }

    /// The view definition of stored collection `stored`, if it is a view.
    pub(crate) fn view_definition(&self, stored: &str) -> CommandResult<Option<CollectionOptions>> {
        Ok(self
            .commands
            .database
            .collection_options(stored)?
            .filter(|options| options.view_on.is_some()))
    }

    /// Refuses a command that needs a collection when `stored` is a view (MongoDB's
    /// `CommandNotSupportedOnView`).
    pub(crate) fn refuse_view(&self, stored: &str, namespace: &str) -> CommandResult<()> {
        if self.view_definition(stored)?.is_some() {
            return Err(CommandError::new(
                166,
                format!("Namespace {namespace} is a view, not a collection"),
            ));
        }
        Ok(())
    }

    /// The open transaction, reborrowed for one operation.
    pub(crate) fn session(&mut self) -> Option<&mut Transaction> {
        self.transaction.as_deref_mut()
    }
}

/// `command` with its name first. pymongo's encoder writes a top-level `_id` before every
/// other field, so `db.command({"arrayPage": "sales", "_id": 2, ...})` arrives as
/// `{_id: 2, arrayPage: "sales", ...}`; no command is named `_id`, so the field after it is
/// the name.
pub fn name_first(command: Document) -> Document {
    if command.keys().next().map(String::as_str) != Some("_id") || command.len() < 2 {
        return command;
    }
    let mut id = None;
    let mut rest = Document::new();
    for (key, value) in command {
        if key == "_id" && id.is_none() {
            id = Some(value);
        } else {
            rest.insert(key, value);
        }
    }
    let mut reordered = Document::new();
    let mut fields = rest.into_iter();
    if let Some((name, value)) = fields.next() {
        reordered.insert(name, value);
    }
    if let Some(id) = id {
        reordered.insert("_id", id);
    }
    reordered.extend(fields);
    reordered
}

/// What a write concern asks of a one-node replica set: `w: 0`, `1` and `"majority"` are
/// met by the commit itself; a higher count can never be, so the write happens and the reply
/// carries MongoDB's `writeConcernError` (100 UnsatisfiableWriteConcern), as a one-node
/// replica set answers; a malformed write concern refuses the command (9 FailedToParse).
fn write_concern_error(command: &Document) -> CommandResult<Option<Document>> {
    let Some(concern) = command.get("writeConcern") else {
        return Ok(None);
    };
    let Bson::Document(concern) = concern else {
        return Err(CommandError::new(9, "writeConcern must be a document"));
    };
    let unsatisfiable = |message: String| {
        Some(doc! { "code": 100, "codeName": "UnsatisfiableWriteConcern", "errmsg": message })
    };
    Ok(match concern.get("w") {
        None | Some(Bson::Null) => None,
        Some(Bson::Int32(0 | 1) | Bson::Int64(0 | 1)) => None,
        Some(Bson::Double(w)) if w.abs() < f64::EPSILON || (w - 1.0).abs() < f64::EPSILON => None,
        Some(Bson::String(mode)) if mode == "majority" => None,
        Some(Bson::Int32(w)) if *w > 1 => unsatisfiable(format!(
            "Not enough data-bearing nodes: w: {w} asks for more than the one node of this server"
        )),
        Some(Bson::Int64(w)) if *w > 1 => unsatisfiable(format!(
            "Not enough data-bearing nodes: w: {w} asks for more than the one node of this server"
        )),
        Some(Bson::String(tag)) => {
            return Err(CommandError::new(
                79,
                format!("unrecognized write concern mode: {tag}"),
            ));
        }
        Some(other) => {
            return Err(CommandError::new(
                9,
                format!("w must be a non-negative number or a string, not {other}"),
            ));
        }
    })
}

/// The commands that may read at read concern `snapshot` outside a transaction.
const SNAPSHOT_READS: &[&str] = &["find", "aggregate", "distinct"];

/// Which state a snapshot read (read concern `snapshot` outside a transaction) reads.
#[derive(Clone, Copy)]
enum SnapshotRead {
    /// A snapshot taken now.
    Latest,
    /// The session's snapshot of `atClusterTime`.
    At(Timestamp),
}

/// `readConcern: { level: "snapshot" }` outside a transaction; `None` for any other read
/// concern, or inside a transaction (which reads its own snapshot). Refused (72
/// InvalidOptions) on commands other than [`SNAPSHOT_READS`].
fn snapshot_read_concern(command: &Document, name: &str) -> CommandResult<Option<SnapshotRead>> {
    let Some(Bson::Document(read_concern)) = command.get("readConcern") else {
        return Ok(None);
    };
    check_read_concern_level(read_concern)?;
    // A cursor's `getMore` continues the snapshot its first batch read (drivers may repeat
    // the read concern on it).
    if read_concern.get_str("level").ok() != Some("snapshot")
        || command.contains_key("autocommit")
        || matches!(name, "getMore" | "killCursors")
    {
        return Ok(None);
    }
    if !SNAPSHOT_READS.contains(&name) {
        return Err(CommandError::new(
            72,
            format!(
                "read concern level 'snapshot' is not supported by '{name}' outside a multi-document transaction"
            ),
        ));
    }
    match read_concern.get("atClusterTime") {
        None => Ok(Some(SnapshotRead::Latest)),
        Some(Bson::Timestamp(at)) => Ok(Some(SnapshotRead::At(*at))),
        Some(other) => Err(CommandError::type_mismatch(format!(
            "readConcern.atClusterTime must be a timestamp, not {other}"
        ))),
    }
}

/// The read concern levels MongoDB knows; each is served by the one copy of the data.
const READ_CONCERN_LEVELS: &[&str] =
    &["local", "majority", "linearizable", "available", "snapshot"];

/// Refuses a read concern level MongoDB does not know (2 BadValue, in the words of its command
/// parser), and a level that is not a string (14): drivers leave the level to the server.
fn check_read_concern_level(read_concern: &Document) -> CommandResult<()> {
    match Args::new("readConcern", read_concern).string("level")? {
        Some(level) if !READ_CONCERN_LEVELS.contains(&level) => Err(CommandError::new(
            2,
            format!(
                "Enumeration value '{level}' for field 'readConcern.level' is not a valid value."
            ),
        )),
        _ => Ok(()),
    }
}

/// Commands MongoDB refuses inside a multi-document transaction (263).
const NOT_IN_TRANSACTION: &[&str] = &[
    "count",
    "fsync",
    "collMod",
    "drop",
    "dropDatabase",
    "dropIndexes",
    "deleteIndexes",
    "renameCollection",
    "listDatabases",
    "setPattern",
    "removePattern",
];

/// A command's handler.
type Handler = fn(&mut Context<'_>) -> CommandResult;

/// Every command the layer knows, with whether it writes (a retryable write is answered once
/// per `txnNumber`) and its handler.
const COMMANDS: &[(&str, bool, Handler)] = &[
    ("find", false, read::find),
    ("getMore", false, read::get_more),
    ("killCursors", false, read::kill_cursors),
    ("count", false, read::count),
    ("distinct", false, read::distinct),
    ("aggregate", false, read::aggregate),
    ("explain", false, read::explain),
    ("insert", true, write::insert),
    ("update", true, write::update),
    ("delete", true, write::delete),
    ("findAndModify", true, write::find_and_modify),
    ("findandmodify", true, write::find_and_modify),
    ("bulkWrite", true, bulk::bulk_write),
    ("create", false, ddl::create),
    ("drop", false, ddl::drop),
    ("dropDatabase", false, ddl::drop_database),
    ("listDatabases", false, ddl::list_databases),
    ("listCollections", false, ddl::list_collections),
    ("renameCollection", false, ddl::rename_collection),
    ("createIndexes", false, ddl::create_indexes),
    ("listIndexes", false, ddl::list_indexes),
    ("dropIndexes", false, ddl::drop_indexes),
    ("collMod", false, ddl::coll_mod),
    ("deleteIndexes", false, ddl::drop_indexes),
    ("dbStats", false, stats::db_stats),
    // MongoDB's alias, which pymongo's tests send.
    ("dbstats", false, stats::db_stats),
    ("validate", false, ddl::validate),
    ("fsync", false, ddl::fsync),
    ("compact", false, ddl::compact),
    ("collStats", false, stats::coll_stats),
    ("profile", false, profile::profile),
    ("commitTransaction", false, sessions::commit_transaction),
    ("abortTransaction", false, sessions::abort_transaction),
    ("endSessions", false, sessions::end_sessions),
    ("killSessions", false, sessions::end_sessions),
    ("refreshSessions", false, sessions::refresh_sessions),
    ("setPattern", false, patterns::set_pattern),
    ("getPatterns", false, patterns::get_patterns),
    ("removePattern", false, patterns::remove_pattern),
    ("verifyPatterns", false, patterns::verify_patterns),
    ("arrayLength", false, patterns::array_length),
    ("arrayPage", false, patterns::array_page),
    ("currentOp", false, operations::current_op),
    ("killOp", false, operations::kill_op),
    ("top", false, usage::top),
];

/// The command names, in [`COMMANDS`]' order.
static COMMAND_NAMES: LazyLock<Vec<&'static str>> =
    LazyLock::new(|| COMMANDS.iter().map(|(name, ..)| *name).collect());

/// A count as MongoDB replies with it: an int32 when it fits.
pub(crate) fn count_value(count: i64) -> Bson {
    i32::try_from(count).map_or(Bson::Int64(count), Bson::Int32)
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Commands {
    /// The command layer over `database`, which holds a server's databases
    /// ([`Namespaces::Prefixed`]).
    pub fn new(database: Database) -> Commands {
        Commands::with_namespaces(database, Namespaces::Prefixed)
    }

    /// The command layer over `database` with the given naming of collections.
    pub fn with_namespaces(database: Database, namespaces: Namespaces) -> Commands {
        Commands {
            database,
            namespaces,
            cursors: Mutex::new(CursorTable::default()),
            sessions: Mutex::new(SessionTable::default()),
            clock: Mutex::new((0, 0)),
            connection_ids: AtomicU32::new(0),
            profiling: Mutex::new(profile::Levels::new()),
            session_records_pruned: Mutex::new(Instant::now()),
            operations: Mutex::new(operations::OperationTable::default()),
            usage: usage::UsageTable::default(),
        }
    }

    /// The database the commands run on.
    pub fn database(&self) -> &Database {
        &self.database
    }

    /// A fresh connection number, for a server's `hello` replies.
    pub fn next_connection_id(&self) -> u32 {
        self.connection_ids.fetch_add(1, Ordering::Relaxed) + 1
    }

    /// Executes one command (its first key names it, `$db` its database) and returns the
    /// reply document. Never fails: an error is a reply with `ok: 0`.
    pub fn execute(&self, command: Document) -> Document {
        let command = name_first(command);
        let checked = api::check(&command).and_then(|()| write_concern_error(&command));
        let mut reply = match checked {
            // Refused before it runs, as MongoDB refuses an invalid write concern.
            Err(error) => error.to_reply(),
            Ok(unsatisfiable) => {
                let started = Instant::now();
                let mut reply = match self.dispatch(&command) {
                    Ok(reply) => reply,
                    Err(error) => error.to_reply(),
                };
                if let Some(Bson::String(database)) = command.get("$db") {
                    let elapsed = started.elapsed();
                    self.usage.record(database, &command, elapsed);
                    profile::record(self, database, &command, &reply, elapsed);
                }
                if let Some(error) = unsatisfiable
                    && reply.get_f64("ok").is_ok_and(|ok| ok > 0.5)
                {
                    reply.insert("writeConcernError", error);
                }
                reply
            }
        };
        add_error_labels(&command, &mut reply);
        self.stamp(&mut reply);
        reply
    }

    /// The refusal of a command whose Stable API parameters (`apiVersion`, `apiStrict`,
    /// `apiDeprecationErrors`) are invalid or exclude it, for the commands a server answers
    /// itself; [`Commands::execute`] checks its own.
    pub fn api_refusal(command: &Document) -> Option<Document> {
        api::check(command).err().map(|error| error.to_reply())
    }

    /// Adds `operationTime` and the `$clusterTime` a replica set member gossips to `reply`:
    /// every command's, and those a server answers itself (`hello`, `ping`...), from which
    /// drivers learn the cluster time they send with their next command.
    pub fn stamp(&self, reply: &mut Document) {
        let now = self.cluster_time();
        reply.insert("operationTime", now);
        reply.insert(
            "$clusterTime",
            doc! {
                "clusterTime": now,
                "signature": {
                    "hash": Bson::Binary(bson::Binary { subtype: bson::spec::BinarySubtype::Generic, bytes: vec![0; 20] }),
                    "keyId": 0_i64,
                },
            },
        );
    }

    fn dispatch(&self, command: &Document) -> CommandResult {
        let Some(name) = command.keys().next() else {
            return Err(CommandError::new(
                59,
                "no command: the command document is empty",
            ));
        };
        let Some(&(name, writes, handler)) = COMMANDS.iter().find(|(known, ..)| known == name)
        else {
            return Err(CommandError::new(59, format!("no such command: '{name}'")));
        };
        let database = match command.get("$db") {
            Some(Bson::String(database)) => database.as_str(),
            Some(_) => return Err(CommandError::type_mismatch("'$db' must be a string")),
            None if matches!(self.namespaces, Namespaces::Flat) => "",
            None => return Err(CommandError::new(40414, "the command has no '$db' field")),
        };
        let snapshot = snapshot_read_concern(command, name)?;
        let session = sessions::SessionArgs::read(command)?;
        // `maxTimeMS` and the database's script time limit bound the command's server-side
        // JavaScript (`$where`), and `killOp` interrupts it.
        let registered = operations::register(&self.operations, database, command);
        let started = Instant::now();
        let budget = self.database.script_time_limit();
        let deadline = match command.get("maxTimeMS") {
            Some(Bson::Int32(ms)) if *ms > 0 => Some(u64::from(ms.unsigned_abs())),
            Some(Bson::Int64(ms)) if *ms > 0 => Some(ms.unsigned_abs()),
            Some(Bson::Double(ms)) if *ms >= 1.0 => Some(*ms as u64),
            _ => None,
        }
        .map(|ms| started + Duration::from_millis(ms));
        let run = |transaction: Option<&mut Transaction>| {
            let mut context = Context {
                commands: self,
                database,
                args: Args::new(name, command),
                transaction,
            };
            let limits = javascript::ScriptLimits {
                deadline,
                budget: Some((budget, started + budget)),
                interrupt: Some(Arc::clone(&registered.interrupt)),
            };
            javascript::with_limits(limits, || handler(&mut context))
        };
        let lsid = session.lsid().cloned();
        match session.transaction_state(name)? {
            TxnState::None | TxnState::Retryable { .. } if snapshot.is_some() => {
                let at_cluster_time = match snapshot {
                    Some(SnapshotRead::At(at)) => Some(at),
                    _ => None,
                };
                sessions::snapshot_read(self, lsid.as_ref(), at_cluster_time, run)
            }
            TxnState::None => run(None),
            TxnState::Retryable { lsid, txn_number } if writes => {
                sessions::retryable(self, &lsid, txn_number, || run(None))
            }
            TxnState::Retryable { .. } => run(None),
            TxnState::InTransaction { .. } if NOT_IN_TRANSACTION.contains(&name) => {
                Err(CommandError::new(
                    263,
                    format!("Cannot run '{name}' in a multi-document transaction."),
                ))
            }
            TxnState::InTransaction {
                lsid,
                txn_number,
                start,
            } => sessions::in_transaction(self, &lsid, txn_number, start, name, run),
        }
    }

    /// Ends what has been idle too long: cursors not read for 10 minutes and transactions
    /// without an operation for 60 seconds (aborted); every 10 minutes, forgets the durable
    /// records of transactions committed more than 30 minutes ago (as MongoDB forgets
    /// sessions). A server calls it about once a second.
    pub fn reap_expired(&self) {
        let now = Instant::now();
        lock(&self.cursors).reap(now);
        lock(&self.sessions).reap(now);
        let mut pruned = lock(&self.session_records_pruned);
        if now.duration_since(*pruned) >= sessions::RECORD_PRUNE_INTERVAL {
            *pruned = now;
            drop(pruned);
            let cutoff = bson::DateTime::from_millis(
                bson::DateTime::now().timestamp_millis()
                    - i64::try_from(sessions::SESSION_TIMEOUT.as_millis()).unwrap_or(i64::MAX),
            );
            // A failed pass (a full disk...) is tried again at the next interval.
            let _pruned = self.database.prune_session_records(cutoff);
        }
    }

    /// The names of the commands [`Commands::execute`] knows.
    pub fn command_names() -> &'static [&'static str] {
        &COMMAND_NAMES
    }

    /// A cluster time later than every one handed out before: seconds since the epoch and an
    /// increment within the second.
    pub(crate) fn cluster_time(&self) -> Timestamp {
        let seconds = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |elapsed| {
                u32::try_from(elapsed.as_secs()).unwrap_or(u32::MAX)
            });
        let mut clock = lock(&self.clock);
        if seconds > clock.0 {
            *clock = (seconds, 1);
        } else {
            clock.1 += 1;
        }
        Timestamp {
            time: clock.0,
            increment: clock.1,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_idle_transaction_is_aborted_by_the_reaper() {
        let commands = Commands::new(Database::open_in_memory().expect("in-memory database"));
        let lsid = doc! { "id": 1 };
        let insert = doc! {
            "insert": "c", "documents": [{ "_id": 1 }], "$db": "d",
            "lsid": lsid.clone(), "txnNumber": 1_i64, "autocommit": false, "startTransaction": true,
        };
        assert_eq!(commands.execute(insert).get_f64("ok").ok(), Some(1.0));
        lock(&commands.sessions).reap(Instant::now() + sessions::TRANSACTION_TIMEOUT);
        let commit = commands.execute(doc! {
            "commitTransaction": 1, "$db": "admin", "lsid": lsid, "txnNumber": 1_i64, "autocommit": false,
        });
        assert_eq!(commit.get_i32("code").ok(), Some(251), "{commit}");
        let count = commands.execute(doc! { "count": "c", "$db": "d" });
        assert_eq!(count.get_i32("n").ok(), Some(0));
    }
}
