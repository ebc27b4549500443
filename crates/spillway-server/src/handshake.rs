//! `hello` / `isMaster`: the handshake, presenting the server as the primary of a one-node
//! replica set named `spillway`, so that drivers allow sessions, retryable writes and
//! transactions.
//!
//! This module must never touch the database: the handshake runs on every new connection and
//! every monitoring heartbeat, and must answer without waiting for a writer.

use std::time::{Duration, SystemTime};

use bson::{Bson, DateTime, Document, Timestamp, doc};

use crate::command_option::truthy;
use crate::state::{ConnectionInfo, ServerState};

/// The replica set's name, in `hello` (`setName`).
pub const REPLICA_SET_NAME: &str = "spillway";
/// The newest wire version spoken: MongoDB 8.1's (pymongo 4.x and the Rust driver 3.x need
/// at least 9, the Node driver 6.x behind mongosh 2.x at least 8). 8.1 is what the command
/// layer implements: 8.0's client-level `bulkWrite` command and `sort` on single-document
/// updates, which drivers use only when the server says 8.0, and 8.1's `nsType` on change
/// streams' `create` events. (Not 8.2: it reports `disambiguatedPaths` on every update event.)
pub const MAX_WIRE_VERSION: i32 = 26;
/// The MongoDB version presented in `buildInfo`, matching [`MAX_WIRE_VERSION`].
pub const MONGODB_VERSION: &str = "8.1.0";
/// The same version as numbers, for `versionArray`.
pub(crate) const MONGODB_VERSION_ARRAY: [i32; 4] = [8, 1, 0, 0];
/// The largest document, in `hello` (`maxBsonObjectSize`).
pub(crate) const MAX_BSON_OBJECT_SIZE: i32 = 16 * 1024 * 1024;
/// The most writes in one batch, in `hello` (`maxWriteBatchSize`).
pub(crate) const MAX_WRITE_BATCH_SIZE: i32 = 100_000;
/// Minutes before an idle session expires, in `hello`.
pub(crate) const LOGICAL_SESSION_TIMEOUT_MINUTES: i32 = 30;
/// The longest an awaitable `hello` waits, whatever the client asks.
const MAX_AWAIT: Duration = Duration::from_secs(60);

/// The optime this server reports (`lastWrite`, `rs.status()`): the current second, term 1.
pub(crate) fn op_time() -> Document {
    let seconds = SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |elapsed| elapsed.as_secs()) as u32;
    doc! { "ts": Timestamp { time: seconds, increment: 1 }, "t": 1_i64 }
}

/// The reply to `hello`, `isMaster` or `ismaster` (`legacy`: the reply says `ismaster`
/// instead of `isWritablePrimary`, as MongoDB does for the legacy names).
pub(crate) fn hello(
    command: &Document,
    legacy: bool,
    state: &ServerState,
    connection: &ConnectionInfo,
) -> Document {
    let now_date = DateTime::now();
    let op_time = op_time();
    let host = state.advertised_host.clone();
    let mut reply = Document::new();
    if legacy {
        reply.insert("ismaster", true);
    } else {
        reply.insert("isWritablePrimary", true);
    }
    if command.get("helloOk").is_some_and(truthy) {
        reply.insert("helloOk", true);
    }
    reply.insert(
        "topologyVersion",
        doc! { "processId": state.process_id, "counter": 0_i64 },
    );
    reply.insert("hosts", vec![Bson::String(host.clone())]);
    reply.insert("setName", REPLICA_SET_NAME);
    reply.insert("setVersion", 1);
    reply.insert("secondary", false);
    reply.insert("primary", host.clone());
    reply.insert("me", host);
    reply.insert("electionId", state.election_id);
    reply.insert(
        "lastWrite",
        doc! {
            "opTime": op_time.clone(),
            "lastWriteDate": now_date,
            "majorityOpTime": op_time,
            "majorityWriteDate": now_date,
        },
    );
    reply.insert("maxBsonObjectSize", MAX_BSON_OBJECT_SIZE);
    reply.insert(
        "maxMessageSizeBytes",
        i32::try_from(state.options.limits.max_message_size).unwrap_or(i32::MAX),
    );
    reply.insert("maxWriteBatchSize", MAX_WRITE_BATCH_SIZE);
    reply.insert("localTime", now_date);
    reply.insert(
        "logicalSessionTimeoutMinutes",
        LOGICAL_SESSION_TIMEOUT_MINUTES,
    );
    reply.insert("connectionId", connection.id);
    reply.insert("minWireVersion", 0);
    reply.insert("maxWireVersion", MAX_WIRE_VERSION);
    reply.insert("readOnly", false);
    reply.insert("ok", 1.0);
    reply
}

/// How long an awaitable `hello` (a monitor's `{ hello, topologyVersion, maxAwaitTimeMS }`)
/// waits before it is answered: until the topology changes, which for this one-node set is
/// never, so `maxAwaitTimeMS` when the client's `topologyVersion` is the current one. Answering
/// at once would make a streaming monitor ask again at once, in a busy loop.
pub(crate) fn await_time(command: &Document, state: &ServerState) -> Option<Duration> {
    let max_await_ms = command.get("maxAwaitTimeMS").and_then(as_i64)?;
    let version = command.get_document("topologyVersion").ok()?;
    let same_process = version
        .get("processId")
        .is_some_and(|id| *id == Bson::ObjectId(state.process_id));
    let same_counter = version.get("counter").and_then(as_i64) == Some(0);
    if !(same_process && same_counter) {
        return None;
    }
    let millis = u64::try_from(max_await_ms).ok()?;
    Some(Duration::from_millis(millis).min(MAX_AWAIT))
}

fn as_i64(value: &Bson) -> Option<i64> {
    match value {
        Bson::Int32(number) => Some(i64::from(*number)),
        Bson::Int64(number) => Some(*number),
        Bson::Double(number) if number.fract() == 0.0 => Some(*number as i64),
        _ => None,
    }
}
