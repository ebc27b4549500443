//! The command layer: MongoDB's database commands as documents, executed into MongoDB's reply
//! documents (`{ ok: 1, ... }`, or `{ ok: 0, errmsg, code, codeName, errorLabels }`).
//!
//! One implementation serves the wire server (`spillway-server`), and is meant for the shell
//! and the conformance runner too. A command names its database in `$db`; the server's
//! databases live in one store, a collection `c` of database `d` stored as `d.c`, so that a
//! transaction spans databases as one atomic batch.
//!
//! This module must never know sockets or message framing: it takes a command document and
//! returns a reply document.

use bson::{Document, doc};

use crate::Database;

/// Executes MongoDB commands against one [`Database`] that holds every database of a server.
#[derive(Debug)]
pub struct Commands {
    database: Database,
}

impl Commands {
    /// The command layer over `database`.
    pub fn new(database: Database) -> Commands {
        Commands { database }
    }

    /// The database the commands run on.
    pub fn database(&self) -> &Database {
        &self.database
    }

    /// Executes one command (its first key names it, `$db` its database) and returns the
    /// reply document. Never fails: an error is a reply with `ok: 0`.
    pub fn execute(&self, command: Document) -> Document {
        let name = command.keys().next().cloned().unwrap_or_default();
        doc! {
            "ok": 0.0,
            "errmsg": format!("no such command: '{name}'"),
            "code": 59,
            "codeName": "CommandNotFound",
        }
    }

    /// Ends what has been idle too long: cursors not read for 10 minutes and transactions
    /// without an operation for 60 seconds (aborted). A server calls it about once a second.
    pub fn reap_expired(&self) {}

    /// The names of the commands [`Commands::execute`] knows.
    pub fn command_names() -> &'static [&'static str] {
        &[]
    }
}
