//! What the server and all its connections share: the options the server was started with
//! ([`ServerOptions`]), its identity and counters ([`ServerState`]), and one connection's
//! identity ([`ConnectionInfo`]).
//!
//! The server creates the state; connections and the commands the server answers itself
//! (`handshake`, `admin`) read it. This module must never accept, read or answer anything.

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicI32, AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use bson::oid::ObjectId;

use crate::failpoint::FailPoints;
use crate::limits::{
    ConnectionSlots, DEFAULT_IDLE_TIMEOUT, DEFAULT_MAX_CONNECTIONS, Limits, MemoryBudget,
};
use crate::tls::TlsFiles;

/// How the server listens and what it allows.
#[derive(Debug, Clone)]
pub struct ServerOptions {
    /// The address to bind (default `127.0.0.1`: loopback only).
    pub bind: String,
    /// The port (default 27017; 0 picks a free one).
    pub port: u16,
    /// Connections served at once; one more is closed at once, with a log line.
    pub max_connections: usize,
    /// A connection that sends nothing for this long is closed (default: 30 minutes;
    /// `None`: never).
    pub idle_timeout: Option<Duration>,
    /// Message size and nesting, buffered bytes, connections per address, the limits before
    /// authentication (see [`Limits`]).
    pub limits: Limits,
    /// `host:port` announced in `hello` (`hosts`, `me`, `primary`); default `bind:port` (the
    /// port bound when 0 was asked), or `localhost:port` when binding every interface.
    pub advertised_host: Option<String>,
    /// The database directory, for `getCmdLineOpts`; [`serve_blocking`](crate::serve_blocking)
    /// names the embedded database after it (see `embedded_database`).
    pub database_path: Option<String>,
    /// The database that serves the collections stored without a database prefix (those
    /// the embedded API and the shell create): collection `c` of it is the stored collection
    /// `c`. `None`: the shell's `db.getName()` (`spillway::command::embedded_database_of`:
    /// `database_path`'s last component, or `test` when that cannot name a database and such
    /// collections exist) when its prefix holds no collection yet, and none for an in-memory
    /// database. Read by [`crate::naming`], once, at start.
    pub embedded_database: Option<String>,
    /// The process's arguments, for `getCmdLineOpts`.
    pub argv: Vec<String>,
    /// Serve TLS only, with this certificate and key (default: plain TCP).
    pub tls: Option<TlsFiles>,
    /// Require SCRAM-SHA-256 authentication before any command but the handshake's.
    pub auth: bool,
    /// Accept MongoDB's test commands (`configureFailPoint`): for drivers' test suites only,
    /// never in production (any client could make the server fail on purpose).
    pub enable_test_commands: bool,
}

impl Default for ServerOptions {
    fn default() -> ServerOptions {
        ServerOptions {
            bind: "127.0.0.1".to_owned(),
            port: 27017,
            max_connections: DEFAULT_MAX_CONNECTIONS,
            idle_timeout: Some(DEFAULT_IDLE_TIMEOUT),
            limits: Limits::default(),
            advertised_host: None,
            database_path: None,
            embedded_database: None,
            argv: Vec::new(),
            tls: None,
            auth: false,
            enable_test_commands: false,
        }
    }
}

/// What the server has done since it started, as `serverStatus` reports it: operations by
/// kind (MongoDB's `opcounters`: documents inserted, update and delete statements, queries,
/// `getMore`s, every other command) and the bytes and requests of the wire.
#[derive(Debug, Default)]
pub(crate) struct Counters {
    pub(crate) inserts: AtomicU64,
    pub(crate) queries: AtomicU64,
    pub(crate) updates: AtomicU64,
    pub(crate) deletes: AtomicU64,
    pub(crate) get_mores: AtomicU64,
    pub(crate) commands: AtomicU64,
    pub(crate) bytes_in: AtomicU64,
    pub(crate) bytes_out: AtomicU64,
    pub(crate) requests: AtomicU64,
}

impl Counters {
    /// Counts one command as MongoDB's `opcounters` do, before it runs (a failed command
    /// counts too).
    pub(crate) fn count_command(&self, command: &bson::Document) {
        let statements = |field: &str| {
            command
                .get_array(field)
                .map_or(0, |statements| statements.len() as u64)
        };
        let (counter, amount) = match command.keys().next().map(String::as_str) {
            Some("insert") => (&self.inserts, statements("documents")),
            Some("update") => (&self.updates, statements("updates")),
            Some("delete") => (&self.deletes, statements("deletes")),
            Some("find") => (&self.queries, 1),
            Some("getMore") => (&self.get_mores, 1),
            _ => (&self.commands, 1),
        };
        counter.fetch_add(amount, Ordering::Relaxed);
    }

    /// Counts one message received of `bytes` bytes.
    pub(crate) fn count_request(&self, bytes: usize) {
        self.requests.fetch_add(1, Ordering::Relaxed);
        self.bytes_in.fetch_add(bytes as u64, Ordering::Relaxed);
    }

    /// Counts one reply sent of `bytes` bytes.
    pub(crate) fn count_reply(&self, bytes: usize) {
        self.bytes_out.fetch_add(bytes as u64, Ordering::Relaxed);
    }
}

/// What every connection shares: the options, the identity presented in `hello`, counters.
#[derive(Debug)]
pub(crate) struct ServerState {
    pub(crate) options: ServerOptions,
    pub(crate) local_address: SocketAddr,
    pub(crate) advertised_host: String,
    pub(crate) started: Instant,
    /// `topologyVersion.processId`: new at every start.
    pub(crate) process_id: ObjectId,
    pub(crate) election_id: ObjectId,
    pub(crate) connections_current: AtomicUsize,
    pub(crate) connections_created: AtomicU64,
    /// The fail points `configureFailPoint` arms (with `enable_test_commands` only).
    pub(crate) fail_points: FailPoints,
    /// The connections held, in all and per client address.
    pub(crate) slots: Arc<ConnectionSlots>,
    /// The bytes of partly received messages, across connections.
    pub(crate) budget: MemoryBudget,
    /// `serverStatus`' `opcounters` and `network` figures since the start.
    pub(crate) counters: Counters,
    next_request_id: AtomicI32,
    next_connection_id: AtomicI32,
}

impl ServerState {
    /// The state of a server bound at `local_address`, presenting itself as
    /// `advertised_host`: no connection yet, no fail point armed.
    pub(crate) fn new(
        options: ServerOptions,
        local_address: SocketAddr,
        advertised_host: String,
    ) -> ServerState {
        ServerState {
            slots: Arc::new(ConnectionSlots::new(
                options.max_connections,
                &options.limits,
            )),
            budget: MemoryBudget::new(options.limits.max_buffered_bytes),
            options,
            local_address,
            advertised_host,
            started: Instant::now(),
            process_id: ObjectId::new(),
            election_id: ObjectId::from_bytes([0x7f, 0xff, 0xff, 0xff, 0, 0, 0, 0, 0, 0, 0, 1]),
            connections_current: AtomicUsize::new(0),
            connections_created: AtomicU64::new(0),
            counters: Counters::default(),
            fail_points: FailPoints::default(),
            next_request_id: AtomicI32::new(1),
            next_connection_id: AtomicI32::new(1),
        }
    }

    /// A fresh id for a reply's header.
    pub(crate) fn next_request_id(&self) -> i32 {
        self.next_request_id.fetch_add(1, Ordering::Relaxed)
    }

    /// A fresh `connectionId`, counted from 1.
    pub(crate) fn next_connection_id(&self) -> i32 {
        self.next_connection_id.fetch_add(1, Ordering::Relaxed)
    }
}

/// One connection's identity.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ConnectionInfo {
    /// `connectionId` in `hello`, counted from 1.
    pub(crate) id: i32,
    /// The client's address.
    pub(crate) peer: SocketAddr,
}
