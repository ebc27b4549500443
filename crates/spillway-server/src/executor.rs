//! `Executor`: what the server runs database commands on. The product runs
//! [`spillway::command::Commands`]; tests run stand-ins (one that echoes the command it got,
//! one that panics) to check the framing and the server's handling of a failing layer.
//!
//! Implementations are called from the blocking pool and may block; they must never know
//! about sockets or framing. One that hands commands on to another server (the proxy) may
//! also answer some without blocking, as a future the connection awaits on the server's own
//! runtime ([`Executor::hand_on`]).

use std::future::Future;
use std::pin::Pin;

use bson::Document;
use spillway::Database;
use spillway::command::{Commands, Privilege};

/// The reply of a command [`Executor::hand_on`] took.
pub type HandedOn = Pin<Box<dyn Future<Output = Document> + Send + 'static>>;

/// Executes command documents into reply documents (see [`Commands::execute`]).
pub trait Executor: Send + Sync + 'static {
    /// One command (first key its name, `$db` its database, document sequences merged in)
    /// to its reply (`ok: 1`, or `ok: 0` with `errmsg`, `code`, `codeName`). Blocking.
    fn execute(&self, command: Document) -> Document;

    /// `command`'s reply to come, when this executor hands the command on to another server
    /// and knows so without blocking (a proxy whose routing needs nothing it has not read
    /// already): the connection awaits it on the server's runtime instead of holding a thread
    /// for the round trip, two thread switches fewer per command. The reply is what
    /// [`Executor::execute`] would give. `Err` gives the command back, for
    /// [`Executor::execute`]; so does the default, for executors that answer everything
    /// themselves.
    ///
    /// # Errors
    /// The command itself, when it must go through [`Executor::execute`].
    fn hand_on(&self, command: Document) -> Result<HandedOn, Document> {
        Err(command)
    }

    /// Ends idle cursors and transactions; called about once a second.
    fn reap_expired(&self);

    /// The names of the commands [`Executor::execute`] knows, for `listCommands`.
    fn command_names(&self) -> &'static [&'static str];

    /// Adds the cluster time (`operationTime`, `$clusterTime`) to a reply the server gives
    /// itself, such as `hello`; a stand-in without a clock adds nothing.
    fn stamp(&self, _reply: &mut Document) {}

    /// The database, where users are stored (`admin.system.users`); `None` for a stand-in
    /// without one, which then has no users and cannot serve `--auth`.
    fn database(&self) -> Option<Database> {
        None
    }

    /// What `command` needs to be allowed under `--auth` (MongoDB's actions on resources), or
    /// `None` for a command this executor does not know, which only a role that may do
    /// anything may run.
    fn required_privileges(&self, _command: &Document) -> Option<Vec<Privilege>> {
        None
    }
}

impl Executor for Commands {
    fn execute(&self, command: Document) -> Document {
        Commands::execute(self, command)
    }

    fn reap_expired(&self) {
        Commands::reap_expired(self);
    }

    fn command_names(&self) -> &'static [&'static str] {
        Commands::command_names()
    }

    fn stamp(&self, reply: &mut Document) {
        Commands::stamp(self, reply);
    }

    fn database(&self) -> Option<Database> {
        Some(Commands::database(self).clone())
    }

    fn required_privileges(&self, command: &Document) -> Option<Vec<Privilege>> {
        Commands::required_privileges(self, command)
    }
}
