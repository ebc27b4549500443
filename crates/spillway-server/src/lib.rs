//! `spillway serve`: the MongoDB wire protocol over Spillway's command layer, so that
//! MongoDB's drivers, mongosh and the tools users already have can use a Spillway database.
//!
//! - `wire`: the framing (message header, OP_MSG with both section kinds and the CRC-32C
//!   checksum, the legacy OP_QUERY handshake and its OP_REPLY), pure bytes to values.
//! - `handshake` and `admin`: the commands the server answers itself (`hello`, `ping`,
//!   `buildInfo`, `serverStatus`...), describing a one-node replica set so that drivers allow
//!   sessions and transactions.
//! - `connection`: one client's loop, commands run on the blocking pool through
//!   [`spillway::command::Commands`].
//! - `limits` and `read`: what holds before any command runs (message size and nesting,
//!   buffered bytes, connections per address, the limits before authentication) and the
//!   reading of one message within them.
//! - `state`: what the server and every connection share (the options, the identity
//!   presented in `hello`, counters, fail points, connection slots and buffer budget).
//! - `server`: the accept loop, the limits, the reaper ticker and the clean shutdown;
//!   `tls`: TLS with rustls when a certificate and key are given.
//! - `embedded`: which database serves the collections stored without a database prefix
//!   (those the embedded API and the shell create), decided once at start ([`naming`]).
//! - `--auth`: `auth` (SCRAM-SHA-1 and SCRAM-SHA-256 conversations, the gate before login),
//!   `scram_client` (the client's side of the same conversation, for `serve --upstream`),
//!   `users` (the user and role commands), `roles` (MongoDB's built-in roles and user-defined
//!   ones, resolved to grants) and `authorization` (each command checked against the grants,
//!   with what it needs from the command layer: `spillway::command::Privilege`).
//! - `failpoint`: MongoDB's fail points (`configureFailPoint`), a test facility that exists
//!   only with `--enable-test-commands`, for drivers' test suites.
//!
//! Modules are layered, each using only those below it (bottom first): `command_option`,
//! `error`, `executor`, `roles` → `auth`, `failpoint`, `tls`, `wire` → `authorization`,
//! `limits`, `scram_client`, `users` → `read`, `state` → `embedded`, `handshake` → `admin` →
//! `connection` → `server`.
//!
//! This crate must never interpret a database command: everything but the server-level
//! commands goes to the command layer, which knows no sockets.
//!
//! ```no_run
//! use spillway::Database;
//! use spillway_server::{ServerOptions, serve_blocking};
//!
//! let database = Database::open("data")?;
//! let options = ServerOptions { port: 0, ..ServerOptions::default() };
//! serve_blocking(database, options, |address| println!("listening on {address}"))?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod admin;
mod auth;
mod authorization;
mod command_option;
mod connection;
mod embedded;
mod error;
mod executor;
mod failpoint;
pub mod fuzzing;
mod handshake;
mod limits;
mod read;
mod roles;
mod scram_client;
mod server;
mod state;
mod tls;
mod users;
pub mod wire;

pub use admin::SERVER_COMMANDS;
pub use embedded::{Naming, naming};
pub use error::{ServerError, WireError};
pub use executor::{Executor, HandedOn};
pub use handshake::{MAX_WIRE_VERSION, MONGODB_VERSION, REPLICA_SET_NAME};
pub use limits::{
    DEFAULT_AUTH_TIMEOUT, DEFAULT_IDLE_TIMEOUT, DEFAULT_MAX_BUFFERED_BYTES,
    DEFAULT_MAX_CONNECTIONS, DEFAULT_MAX_MESSAGE_SIZE_BEFORE_AUTH, DEFAULT_MESSAGE_TIMEOUT, Limits,
    RESERVED_SLOTS_FOR_ADDRESSES_UNDER, UNCOUNTED_BYTES, WORKER_STACK_SIZE,
    default_max_connections_per_address, default_reserved_connections,
};
pub use scram_client::{ScramClient, ScramError};
pub use server::{Server, serve_blocking, serve_executor_blocking};
pub use state::ServerOptions;
pub use tls::TlsFiles;
