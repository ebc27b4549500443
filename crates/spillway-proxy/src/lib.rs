//! spillway-proxy: `spillway serve --upstream <mongodb-uri>`. Clients of any language connect
//! to Spillway's wire server; the collections with a pattern policy are answered through the
//! pattern layer on the upstream deployment (spillway-mongodb), and everything else goes to
//! the upstream unchanged, so that a client sees what a plain MongoDB collection holding the
//! logical documents would show.
//!
//! | module | what it holds |
//! |---|---|
//! | `upstream` | [`Upstream`]: commands forwarded as they came, over a pool of wire connections to the primary, each logged in as the URI's user (TLS when asked) |
//! | `cursors` | the cursors of the reads the proxy answers itself |
//! | `patterned` | the commands on a collection with a policy, and the policy commands |
//! | `rename` | `renameCollection` of a collection with a policy, in steps a stopped proxy leaves finishable |
//! | `transactions` | the clients' transactions the proxy holds, each one upstream transaction with the logical writes inline |
//! | `executor` | [`ProxyExecutor`]: each command routed to one of the above |
//!
//! Modules are layered, each using only those before it: `cursors`, `upstream` →
//! `patterned` → `rename` → `executor`.
//!
//! ```no_run
//! use spillway_proxy::serve_upstream_blocking;
//! use spillway_server::ServerOptions;
//!
//! let options = ServerOptions { port: 27018, ..ServerOptions::default() };
//! serve_upstream_blocking("mongodb://db0:27017/?replicaSet=rs0", None, options, |address| {
//!     println!("proxy listening on {address}");
//! })?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! The deployment picture, failure cases and what is not done yet are in
//! `docs/scale-out.md`.

mod cursors;
mod executor;
mod patterned;
mod rename;
mod transactions;
mod upstream;

use std::net::SocketAddr;

use spillway::Database;

pub use executor::{POLICY_REFRESH, ProxyExecutor};
use spillway_server::{ServerError, ServerOptions};
pub use transactions::TRANSACTION_LIFETIME;
pub use upstream::{Upstream, UpstreamError};

/// Why the proxy could not serve.
#[derive(Debug)]
pub enum ProxyError {
    /// The upstream URI could not be used.
    Upstream(UpstreamError),
    /// The wire server failed (binding, TLS files, the runtime).
    Server(ServerError),
}

impl std::fmt::Display for ProxyError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ProxyError::Upstream(error) => write!(f, "{error}"),
            ProxyError::Server(error) => write!(f, "{error}"),
        }
    }
}

impl std::error::Error for ProxyError {}

/// Serves the deployment `uri` names until Ctrl-C or SIGTERM: binds, calls `on_listening`
/// with the bound address, serves, shuts down cleanly. With `options.auth`, clients log in
/// as the proxy's own users, kept in `users` ([`ProxyExecutor::with_users`]).
///
/// # Errors
/// A URI the proxy cannot use; the server's (`--auth` without `users` among them).
pub fn serve_upstream_blocking(
    uri: &str,
    users: Option<Database>,
    options: ServerOptions,
    on_listening: impl FnOnce(SocketAddr),
) -> Result<(), ProxyError> {
    let mut executor = ProxyExecutor::new(uri).map_err(ProxyError::Upstream)?;
    if let Some(users) = users {
        executor = executor.with_users(users);
    }
    spillway_server::serve_executor_blocking(executor, options, on_listening)
        .map_err(ProxyError::Server)
}
