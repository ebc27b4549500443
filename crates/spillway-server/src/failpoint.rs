//! Fail points: MongoDB's test facility, on only with `--enable-test-commands`, through which
//! a driver's test suite makes the server fail on purpose (`configureFailPoint` on the admin
//! database). Four of MongoDB's fail points are known:
//!
//! - `failCommand`: the next matching commands (`failCommands` names them, none without it;
//!   `appName` limits them to the connections whose handshake named that application;
//!   `namespace` to one collection) are not run: the connection closes without a reply
//!   (`closeConnection`), or the reply is the error `errorCode`; with `writeConcernError` the
//!   command runs and its reply carries that write concern error. `blockConnection` + `blockTimeMS` delays the
//!   command first; `errorLabels` replace the labels the server would compute.
//!   `configureFailPoint` itself is never failed; there are no internal clients, so
//!   `failInternalCommands` changes nothing.
//! - `maxTimeAlwaysTimeOut`: every command with a `maxTimeMS`, and every `getMore` of a cursor
//!   opened with one, fails with 50 MaxTimeMSExpired.
//! - `onPrimaryTransactionalWrite`: a retryable write (a write command with a `txnNumber`
//!   outside a transaction) runs and then its connection closes without a reply
//!   (`closeConnection`, default true), or with `failBeforeCommitExceptionCode` it fails
//!   without writing. MongoDB counts it per statement; here a command whose statements reach
//!   the firing one fires as a whole (it never writes only a prefix of its statements).
//! - `failGetMoreAfterCursorCheckout`: a `getMore` whose cursor exists fails with `errorCode`
//!   (default 1 InternalError) once the cursor is checked out, which closes the cursor, as
//!   any `getMore` error does; on a change stream's cursor a resumable code carries the
//!   `ResumableChangeStreamError` label, as MongoDB's does. (A `getMore` of a cursor that does
//!   not exist fails with 43 CursorNotFound as usual, but counts in the mode.)
//!
//! `mode` is `"alwaysOn"`, `"off"`, `{ times: n }` (the next n matching commands) or
//! `{ skip: n }` (every matching command after the first n); only matching commands count.
//!
//! This module must never run a command or touch a socket: it decides, the connection acts.
//! Without `--enable-test-commands` nothing here is reachable.

use std::collections::HashSet;
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use bson::{Bson, Document, doc};
use spillway::command::CommandError;

use crate::command_option::truthy;

/// The commands a write fail point (`onPrimaryTransactionalWrite`) applies to, with the field
/// holding their statements (`None`: one statement).
const WRITE_COMMANDS: &[(&str, Option<&str>)] = &[
    ("insert", Some("documents")),
    ("update", Some("updates")),
    ("delete", Some("deletes")),
    ("findAndModify", None),
];

/// At most this many cursors opened with `maxTimeMS` (for `maxTimeAlwaysTimeOut` on their
/// `getMore`s), or by a change stream (for `failGetMoreAfterCursorCheckout`'s label), are
/// remembered; past it the set starts over.
const MAX_TIMED_CURSORS: usize = 10_000;

/// When an armed fail point fires.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    AlwaysOn,
    /// The next this many matching commands.
    Times(i64),
    /// Every matching command after this many.
    Skip(i64),
}

impl Mode {
    /// Whether a matching command fires, counting it.
    fn fire(&mut self) -> bool {
        match self {
            Mode::AlwaysOn => true,
            Mode::Times(left) => {
                if *left > 0 {
                    *left -= 1;
                    true
                } else {
                    false
                }
            }
            Mode::Skip(left) => {
                if *left > 0 {
                    *left -= 1;
                    false
                } else {
                    true
                }
            }
        }
    }

    /// Whether it will never fire again.
    fn spent(self) -> bool {
        self == Mode::Times(0)
    }
}

/// `failCommand`'s `data`.
#[derive(Debug, Clone, Default)]
struct FailCommand {
    commands: Vec<String>,
    app_name: Option<String>,
    namespace: Option<String>,
    close_connection: bool,
    error_code: Option<i32>,
    error_labels: Option<Vec<Bson>>,
    write_concern_error: Option<Document>,
    block: Option<Duration>,
}

/// `onPrimaryTransactionalWrite`'s `data`.
#[derive(Debug, Clone, Copy)]
struct PrimaryWrite {
    close_connection: bool,
    fail_before_commit: Option<i32>,
}

#[derive(Debug, Default)]
struct Table {
    fail_command: Option<(Mode, FailCommand)>,
    max_time_always_time_out: Option<Mode>,
    primary_write: Option<(Mode, PrimaryWrite)>,
    /// `failGetMoreAfterCursorCheckout`, with its `errorCode`.
    get_more_after_checkout: Option<(Mode, i32)>,
    /// Cursors opened by a command with a `maxTimeMS`: their `getMore`s carry its deadline.
    timed_cursors: HashSet<i64>,
    /// Cursors opened by a change stream (`aggregate` with `$changeStream`).
    change_stream_cursors: HashSet<i64>,
    /// The retryable writes (`lsid` bytes, `txnNumber`) that succeeded while
    /// `onPrimaryTransactionalWrite` was armed: their retries are answered from the session
    /// without writing, so the fail point does not see them, as in MongoDB.
    executed_writes: HashSet<(Vec<u8>, i64)>,
}

/// What a fired fail point does to one command.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Action {
    /// Close the connection without running the command and without a reply.
    Close,
    /// Do not run the command; reply with this error.
    Fail(Document),
    /// Run the command, then close the connection without a reply.
    RunThenClose,
    /// Run the command; its reply carries this `writeConcernError`.
    RunWithWriteConcernError(Document),
    /// A `getMore` fails with this error after checking out its cursor: the connection kills
    /// the cursor (the checkout), and replies with the error if there was one to kill, else
    /// runs the `getMore` (which finds no cursor).
    FailAfterCheckout(Document),
    /// Run the command as usual (after the delay).
    Run,
}

/// What the fail points do to one command: wait first, then the action; `labels` (when the
/// fail point gave them) replace the reply's `errorLabels`.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Injection {
    pub(crate) delay: Option<Duration>,
    pub(crate) action: Action,
    pub(crate) labels: Option<Vec<Bson>>,
}

/// The server's fail points (all off at start).
#[derive(Debug, Default)]
pub(crate) struct FailPoints {
    table: Mutex<Table>,
}

impl FailPoints {
    fn table(&self) -> MutexGuard<'_, Table> {
        self.table.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// `configureFailPoint`: arms, re-arms or turns off one fail point.
    pub(crate) fn configure(&self, command: &Document) -> Document {
        match self.try_configure(command) {
            Ok(()) => doc! { "count": 0, "ok": 1.0 },
            Err(error) => error.to_reply(),
        }
    }

    fn try_configure(&self, command: &Document) -> Result<(), CommandError> {
        if command.get_str("$db").ok() != Some("admin") {
            return Err(CommandError::new(
                13,
                "configureFailPoint may only be run against the admin database.",
            ));
        }
        let Ok(name) = command.get_str("configureFailPoint") else {
            return Err(CommandError::new(
                14,
                "configureFailPoint takes the fail point's name as a string",
            ));
        };
        let mode = parse_mode(command.get("mode"))?;
        let data = match command.get("data") {
            None => Document::new(),
            Some(Bson::Document(data)) => data.clone(),
            Some(_) => {
                return Err(CommandError::new(
                    14,
                    "configureFailPoint's 'data' must be a document",
                ));
            }
        };
        let mut table = self.table();
        match name {
            "failCommand" => {
                table.fail_command = match mode {
                    Some(mode) => Some((mode, parse_fail_command(&data)?)),
                    None => None,
                };
            }
            "maxTimeAlwaysTimeOut" => table.max_time_always_time_out = mode,
            "failGetMoreAfterCursorCheckout" => {
                table.get_more_after_checkout = match mode {
                    Some(mode) => Some((mode, parse_error_code(name, &data)?.unwrap_or(1))),
                    None => None,
                };
            }
            "onPrimaryTransactionalWrite" => {
                table.executed_writes.clear();
                table.primary_write = match mode {
                    Some(mode) => Some((mode, parse_primary_write(&data)?)),
                    None => None,
                };
            }
            other => {
                return Err(CommandError::new(
                    157,
                    format!(
                        "{other} not found: spillway knows the fail points failCommand, \
                         maxTimeAlwaysTimeOut, onPrimaryTransactionalWrite and \
                         failGetMoreAfterCursorCheckout"
                    ),
                ));
            }
        }
        Ok(())
    }

    /// What the fail points do to command `name` (`command` its document) from a connection
    /// whose handshake named `app_name`; `None` when none fires. Counts the command in the
    /// modes of the fail points it matches.
    pub(crate) fn before(
        &self,
        name: &str,
        command: &Document,
        app_name: Option<&str>,
    ) -> Option<Injection> {
        if name == "configureFailPoint" {
            return None;
        }
        let mut table = self.table();
        if let Some(injection) = fail_command(&mut table, name, command, app_name) {
            return Some(injection);
        }
        let table = &mut *table;
        if let Some(injection) = get_more_after_checkout(table, name, command) {
            return Some(injection);
        }
        if let Some(mode) = &mut table.max_time_always_time_out {
            let timed_cursors = &table.timed_cursors;
            let timed = match name {
                "getMore" => command
                    .get("getMore")
                    .and_then(as_i64)
                    .is_some_and(|id| timed_cursors.contains(&id)),
                _ => command
                    .get("maxTimeMS")
                    .and_then(as_i64)
                    .is_some_and(|millis| millis > 0),
            };
            if timed && mode.fire() {
                let error = CommandError::new(50, "operation exceeded time limit").to_reply();
                return Some(Injection {
                    delay: None,
                    action: Action::Fail(error),
                    labels: None,
                });
            }
        }
        primary_write(table, name, command)
    }

    /// Notes what a command's reply says that a later fail point needs: the cursor a command
    /// with a `maxTimeMS` or a change stream opened, the retryable write that succeeded.
    pub(crate) fn after(&self, name: &str, command: &Document, reply: &Document) {
        if name == "aggregate"
            && opens_change_stream(command)
            && let Some(id) = opened_cursor(reply)
        {
            let mut table = self.table();
            if table.change_stream_cursors.len() >= MAX_TIMED_CURSORS {
                table.change_stream_cursors.clear();
            }
            table.change_stream_cursors.insert(id);
        }
        let succeeded = reply.get("ok").and_then(as_i64) == Some(1);
        if succeeded && let Some(key) = retryable_write_key(name, command) {
            let mut table = self.table();
            if table.primary_write.is_some() {
                if table.executed_writes.len() >= MAX_TIMED_CURSORS {
                    table.executed_writes.clear();
                }
                table.executed_writes.insert(key);
            }
        }
        let has_deadline = command
            .get("maxTimeMS")
            .and_then(as_i64)
            .is_some_and(|millis| millis > 0);
        if name == "getMore" || !has_deadline {
            return;
        }
        let Some(id) = opened_cursor(reply) else {
            return;
        };
        let mut table = self.table();
        if table.timed_cursors.len() >= MAX_TIMED_CURSORS {
            table.timed_cursors.clear();
        }
        table.timed_cursors.insert(id);
    }
}

/// The id of the cursor a reply opened, if it left one open.
fn opened_cursor(reply: &Document) -> Option<i64> {
    reply
        .get_document("cursor")
        .ok()
        .and_then(|cursor| cursor.get("id"))
        .and_then(as_i64)
        .filter(|id| *id != 0)
}

/// Whether an `aggregate` opens a change stream (its first stage is `$changeStream`).
fn opens_change_stream(command: &Document) -> bool {
    command
        .get_array("pipeline")
        .ok()
        .and_then(|pipeline| pipeline.first())
        .and_then(Bson::as_document)
        .is_some_and(|stage| stage.contains_key("$changeStream"))
}

/// `failGetMoreAfterCursorCheckout` for one command: any `getMore` fires it.
fn get_more_after_checkout(table: &mut Table, name: &str, command: &Document) -> Option<Injection> {
    if name != "getMore" {
        return None;
    }
    let (mode, code) = table.get_more_after_checkout.as_mut()?;
    if !mode.fire() {
        return None;
    }
    let code = *code;
    if mode.spent() {
        table.get_more_after_checkout = None;
    }
    let change_stream = command
        .get("getMore")
        .and_then(as_i64)
        .is_some_and(|id| table.change_stream_cursors.contains(&id));
    let labels = (change_stream && spillway::command::is_resumable_change_stream_code(code))
        .then(|| vec![Bson::from(spillway::command::RESUMABLE_CHANGE_STREAM_ERROR)]);
    let error =
        CommandError::new(code, "Hit failpoint 'failGetMoreAfterCursorCheckout'").to_reply();
    Some(Injection {
        delay: None,
        action: Action::FailAfterCheckout(error),
        labels,
    })
}

/// `failCommand` for one command: whether it matches, then whether it fires.
fn fail_command(
    table: &mut Table,
    name: &str,
    command: &Document,
    app_name: Option<&str>,
) -> Option<Injection> {
    let (mode, data) = table.fail_command.as_mut()?;
    let canonical = canonical_name(name);
    if !data.commands.iter().any(|listed| listed == canonical) {
        return None;
    }
    if let Some(wanted) = &data.app_name
        && app_name != Some(wanted.as_str())
    {
        return None;
    }
    if let Some(namespace) = &data.namespace {
        let target = format!(
            "{}.{}",
            command.get_str("$db").unwrap_or_default(),
            command.get_str(name).unwrap_or_default()
        );
        if &target != namespace {
            return None;
        }
    }
    if !mode.fire() {
        return None;
    }
    let data = data.clone();
    if mode.spent() {
        table.fail_command = None;
    }
    let action = if data.close_connection {
        Action::Close
    } else if let Some(code) = data.error_code {
        Action::Fail(
            CommandError::new(code, "Failing command via 'failCommand' failpoint").to_reply(),
        )
    } else if let Some(error) = data.write_concern_error {
        Action::RunWithWriteConcernError(error)
    } else {
        Action::Run
    };
    Some(Injection {
        delay: data.block,
        action,
        labels: data.error_labels,
    })
}

/// `onPrimaryTransactionalWrite` for one command: a retryable write's statements, counted
/// one by one until one fires.
fn primary_write(table: &mut Table, name: &str, command: &Document) -> Option<Injection> {
    let key = retryable_write_key(name, command)?;
    if table.executed_writes.contains(&key) {
        return None;
    }
    let (mode, data) = table.primary_write.as_mut()?;
    let &(_, statements_field) = WRITE_COMMANDS
        .iter()
        .find(|(write, _)| *write == canonical_name(name))?;
    let statements = match statements_field {
        Some(field) => command.get_array(field).map_or(1, Vec::len),
        None => 1,
    };
    let fired = (0..statements).any(|_| mode.fire());
    if !fired {
        return None;
    }
    let data = *data;
    if mode.spent() {
        table.primary_write = None;
    }
    let action = match (data.fail_before_commit, data.close_connection) {
        (Some(_), true) => Action::Close,
        (Some(code), false) => Action::Fail(
            CommandError::new(
                code,
                "Failing write due to the onPrimaryTransactionalWrite failpoint. The write must not be reflected.",
            )
            .to_reply(),
        ),
        (None, true) => Action::RunThenClose,
        (None, false) => return None,
    };
    Some(Injection {
        delay: None,
        action,
        labels: None,
    })
}

/// A retryable write's identity (its session's `lsid` bytes and its `txnNumber`); `None` for
/// any other command.
fn retryable_write_key(name: &str, command: &Document) -> Option<(Vec<u8>, i64)> {
    let name = canonical_name(name);
    if !WRITE_COMMANDS.iter().any(|(write, _)| *write == name) || command.contains_key("autocommit")
    {
        return None;
    }
    let txn_number = command.get("txnNumber").and_then(as_i64)?;
    let lsid = command.get_document("lsid").ok()?.to_vec().ok()?;
    Some((lsid, txn_number))
}

/// A command's name as MongoDB registers it (the lower-case aliases resolve to it).
fn canonical_name(name: &str) -> &str {
    match name {
        "findandmodify" => "findAndModify",
        "ismaster" => "isMaster",
        "buildinfo" => "buildInfo",
        other => other,
    }
}

/// `mode`: `None` for `"off"`.
fn parse_mode(mode: Option<&Bson>) -> Result<Option<Mode>, CommandError> {
    let bad = |what: String| CommandError::new(2, format!("configureFailPoint's mode: {what}"));
    match mode {
        Some(Bson::String(mode)) if mode == "alwaysOn" => Ok(Some(Mode::AlwaysOn)),
        Some(Bson::String(mode)) if mode == "off" => Ok(None),
        Some(Bson::Document(mode)) => {
            let count = |value: &Bson| {
                as_i64(value)
                    .filter(|count| *count >= 0)
                    .ok_or_else(|| bad(format!("{value} is not a non-negative integer")))
            };
            if let Some(times) = mode.get("times") {
                let times = count(times)?;
                Ok((times > 0).then_some(Mode::Times(times)))
            } else if let Some(skip) = mode.get("skip") {
                Ok(Some(Mode::Skip(count(skip)?)))
            } else {
                Err(bad(format!(
                    "{mode} is not one of {{ times: n }} or {{ skip: n }} (activationProbability is not supported)"
                )))
            }
        }
        Some(other) => Err(bad(format!(
            "{other} is not \"alwaysOn\", \"off\", {{ times: n }} or {{ skip: n }}"
        ))),
        None => Err(bad("missing".to_owned())),
    }
}

fn parse_fail_command(data: &Document) -> Result<FailCommand, CommandError> {
    let bad = |what: &str| CommandError::new(2, format!("failCommand's data: {what}"));
    // Without `failCommands` the fail point matches no command, as MongoDB's does.
    let commands = match data.get("failCommands") {
        None => &Vec::new(),
        Some(Bson::Array(commands)) => commands,
        Some(_) => return Err(bad("'failCommands' must be an array of command names")),
    };
    let commands = commands
        .iter()
        .map(|name| match name {
            Bson::String(name) => Ok(canonical_name(name).to_owned()),
            _ => Err(bad("'failCommands' must be an array of command names")),
        })
        .collect::<Result<Vec<_>, _>>()?;
    let flag = |field: &str| data.get(field).is_some_and(truthy);
    let error_code = parse_error_code("failCommand", data)?;
    let error_labels = match data.get("errorLabels") {
        None => None,
        Some(Bson::Array(labels)) => Some(labels.clone()),
        Some(_) => return Err(bad("'errorLabels' must be an array")),
    };
    let write_concern_error = match data.get("writeConcernError") {
        None => None,
        Some(Bson::Document(error)) => Some(error.clone()),
        Some(_) => return Err(bad("'writeConcernError' must be a document")),
    };
    let block = if flag("blockConnection") {
        let millis = data
            .get("blockTimeMS")
            .and_then(as_i64)
            .and_then(|millis| u64::try_from(millis).ok())
            .ok_or_else(|| bad("'blockConnection' needs 'blockTimeMS', a non-negative integer"))?;
        Some(Duration::from_millis(millis))
    } else {
        None
    };
    let text = |field: &str| match data.get(field) {
        None => Ok(None),
        Some(Bson::String(text)) => Ok(Some(text.clone())),
        Some(_) => Err(bad(&format!("'{field}' must be a string"))),
    };
    Ok(FailCommand {
        commands,
        app_name: text("appName")?,
        namespace: text("namespace")?,
        close_connection: flag("closeConnection"),
        error_code,
        error_labels,
        write_concern_error,
        block,
    })
}

/// A fail point's `data.errorCode`, if given.
fn parse_error_code(fail_point: &str, data: &Document) -> Result<Option<i32>, CommandError> {
    match data.get("errorCode") {
        None => Ok(None),
        Some(code) => as_i64(code)
            .and_then(|code| i32::try_from(code).ok())
            .map(Some)
            .ok_or_else(|| {
                CommandError::new(
                    2,
                    format!("{fail_point}'s data: 'errorCode' must be an integer"),
                )
            }),
    }
}

fn parse_primary_write(data: &Document) -> Result<PrimaryWrite, CommandError> {
    let fail_before_commit = match data.get("failBeforeCommitExceptionCode") {
        None => None,
        Some(code) => Some(
            as_i64(code)
                .and_then(|code| i32::try_from(code).ok())
                .ok_or_else(|| {
                    CommandError::new(
                        2,
                        "onPrimaryTransactionalWrite's data: 'failBeforeCommitExceptionCode' must be an integer",
                    )
                })?,
        ),
    };
    Ok(PrimaryWrite {
        close_connection: data.get("closeConnection").is_none_or(truthy),
        fail_before_commit,
    })
}

fn as_i64(value: &Bson) -> Option<i64> {
    match value {
        Bson::Int32(number) => Some(i64::from(*number)),
        Bson::Int64(number) => Some(*number),
        Bson::Double(number) if number.fract() == 0.0 => Some(*number as i64),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn configure(points: &FailPoints, command: Document) -> Document {
        let mut command = command;
        command.insert("$db", "admin");
        points.configure(&command)
    }

    #[test]
    fn times_fires_for_matching_commands_only_then_turns_off() {
        let points = FailPoints::default();
        let reply = configure(
            &points,
            doc! { "configureFailPoint": "failCommand", "mode": { "times": 2 },
            "data": { "failCommands": ["insert"], "errorCode": 91 } },
        );
        assert_eq!(reply.get_f64("ok").ok(), Some(1.0), "{reply}");
        let insert = doc! { "insert": "c", "$db": "d" };
        assert!(points.before("find", &doc! { "find": "c" }, None).is_none());
        for _ in 0..2 {
            let injection = points.before("insert", &insert, None).expect("fires");
            let Action::Fail(error) = injection.action else {
                panic!("an error reply, got {injection:?}")
            };
            assert_eq!(error.get_i32("code").ok(), Some(91));
            assert_eq!(error.get_str("codeName").ok(), Some("ShutdownInProgress"));
        }
        assert!(points.before("insert", &insert, None).is_none());
    }

    #[test]
    fn skip_lets_the_first_commands_through_then_fires_every_time() {
        let points = FailPoints::default();
        configure(
            &points,
            doc! { "configureFailPoint": "failCommand", "mode": { "skip": 1 },
            "data": { "failCommands": ["ping"], "closeConnection": true } },
        );
        let ping = doc! { "ping": 1 };
        assert!(points.before("ping", &ping, None).is_none());
        for _ in 0..3 {
            assert_eq!(
                points.before("ping", &ping, None).map(|i| i.action),
                Some(Action::Close)
            );
        }
    }

    #[test]
    fn fail_command_without_fail_commands_matches_no_command() {
        let points = FailPoints::default();
        let reply = configure(
            &points,
            doc! { "configureFailPoint": "failCommand", "mode": { "times": 1 },
            "data": { "closeConnection": true } },
        );
        assert_eq!(reply.get_f64("ok").ok(), Some(1.0), "{reply}");
        assert!(points.before("find", &doc! { "find": "c" }, None).is_none());
        let reply = configure(
            &points,
            doc! { "configureFailPoint": "failCommand", "mode": "alwaysOn",
            "data": { "failCommands": "find" } },
        );
        assert_eq!(reply.get_i32("code").ok(), Some(2), "{reply}");
    }

    #[test]
    fn app_name_limits_the_fail_point_to_one_application() {
        let points = FailPoints::default();
        configure(
            &points,
            doc! { "configureFailPoint": "failCommand", "mode": "alwaysOn",
            "data": { "failCommands": ["find"], "errorCode": 2, "appName": "mine" } },
        );
        let find = doc! { "find": "c" };
        assert!(points.before("find", &find, None).is_none());
        assert!(points.before("find", &find, Some("other")).is_none());
        assert!(points.before("find", &find, Some("mine")).is_some());
        configure(
            &points,
            doc! { "configureFailPoint": "failCommand", "mode": "off" },
        );
        assert!(points.before("find", &find, Some("mine")).is_none());
    }

    #[test]
    fn configure_fail_point_is_never_failed_and_unknown_fail_points_are_refused() {
        let points = FailPoints::default();
        configure(
            &points,
            doc! { "configureFailPoint": "failCommand", "mode": "alwaysOn",
            "data": { "failCommands": ["configureFailPoint"], "closeConnection": true } },
        );
        assert!(
            points
                .before("configureFailPoint", &doc! {}, None)
                .is_none()
        );
        let reply = configure(
            &points,
            doc! { "configureFailPoint": "stopReplProducer", "mode": "alwaysOn" },
        );
        assert_eq!(reply.get_i32("code").ok(), Some(157), "{reply}");
        let reply = points
            .configure(&doc! { "configureFailPoint": "failCommand", "mode": "off", "$db": "test" });
        assert_eq!(reply.get_i32("code").ok(), Some(13), "{reply}");
    }

    #[test]
    fn primary_write_counts_statements_of_retryable_writes_only() {
        let points = FailPoints::default();
        configure(
            &points,
            doc! { "configureFailPoint": "onPrimaryTransactionalWrite", "mode": { "skip": 2 } },
        );
        let plain = doc! { "insert": "c", "documents": [{}, {}, {}] };
        assert!(points.before("insert", &plain, None).is_none());
        let retryable =
            doc! { "insert": "c", "documents": [{}, {}], "txnNumber": 1_i64, "lsid": {} };
        assert!(points.before("insert", &retryable, None).is_none());
        let one = doc! { "update": "c", "updates": [{}], "txnNumber": 2_i64, "lsid": {} };
        assert_eq!(
            points.before("update", &one, None).map(|i| i.action),
            Some(Action::RunThenClose)
        );
        // The write ran; its retry is answered from the session and is not counted.
        points.after("update", &one, &doc! { "n": 1, "ok": 1.0 });
        assert!(points.before("update", &one, None).is_none());
    }

    #[test]
    fn max_time_always_time_out_fails_commands_with_a_deadline() {
        let points = FailPoints::default();
        let find = doc! { "find": "c", "maxTimeMS": 100 };
        points.after(
            "find",
            &find,
            &doc! { "cursor": { "id": 42_i64, "firstBatch": [] }, "ok": 1.0 },
        );
        configure(
            &points,
            doc! { "configureFailPoint": "maxTimeAlwaysTimeOut", "mode": "alwaysOn" },
        );
        assert!(
            points
                .before("count", &doc! { "count": "c" }, None)
                .is_none()
        );
        assert!(points.before("find", &find, None).is_some());
        assert!(
            points
                .before("getMore", &doc! { "getMore": 42_i64 }, None)
                .is_some()
        );
        assert!(
            points
                .before("getMore", &doc! { "getMore": 43_i64 }, None)
                .is_none()
        );
    }
}
