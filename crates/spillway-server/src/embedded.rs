//! The embedded database: which database name serves the collections stored without a
//! database prefix (those the embedded API and the shell create), decided once at start.
//!
//! By default it has the name the shell's `db.getName()` gives
//! ([`spillway::command::embedded_database_of`]): the data directory's, or `test` when that
//! cannot name a database (then only when such collections exist, so that a server over a
//! fresh directory keeps MongoDB's names in `test`); [`ServerOptions::embedded_database`]
//! names it. Nothing stored may become
//! unreachable: when the store already holds collections under the chosen name's prefix
//! (`NAME.*`, written by a server before), those stay served and the embedded database is
//! not served, and a line says which collections are left out and how to serve them. The
//! naming itself is `spillway::command::Namespaces`.
//!
//! This module must never run a command: it reads the collection names, nothing else.

use spillway::Database;
use spillway::command::{
    EmbeddedDatabase, Namespaces, directory_database_name, embedded_database_of,
    is_embedded_stored_name,
};

use crate::error::ServerError;
use crate::state::ServerOptions;

/// How a server names its collections, and what to tell its operator about it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Naming {
    /// The naming the server's command layer runs with.
    pub namespaces: Namespaces,
    /// One line for standard error: which database serves the collections stored without a
    /// prefix, or which of them are not served and why; `None` when there is nothing to say
    /// (no such collection, and no embedded database served).
    pub notice: Option<String>,
}

/// How many collection names a notice lists before "and N more".
const LISTED: usize = 5;

/// Decides the naming of a server over `database` with `options` (see the module
/// documentation). A name given in [`ServerOptions::embedded_database`] that is invalid or
/// whose prefix already holds collections is an error; a directory name that cannot serve is
/// a notice.
pub fn naming(database: &Database, options: &ServerOptions) -> Result<Naming, ServerError> {
    let stored = database
        .list_collection_names()
        .run()
        .map_err(ServerError::Store)?;
    let unprefixed: Vec<&str> = stored
        .iter()
        .map(String::as_str)
        .filter(|name| is_embedded_stored_name(name))
        .collect();
    let prefixed_under = |name: &str| -> Vec<&str> {
        stored
            .iter()
            .map(String::as_str)
            .filter(|stored| {
                stored
                    .strip_prefix(name)
                    .is_some_and(|rest| rest.starts_with('.'))
            })
            .collect()
    };
    let served = |embedded: EmbeddedDatabase| {
        let notice = format!(
            "serving the {} stored without a database prefix (the embedded API's and the shell's) as database '{}'",
            counted(&unprefixed),
            embedded.name()
        );
        Naming {
            namespaces: Namespaces::Embedding(embedded),
            notice: Some(notice),
        }
    };
    if let Some(name) = &options.embedded_database {
        let embedded =
            EmbeddedDatabase::new(name).map_err(|error| ServerError::EmbeddedDatabase {
                name: name.clone(),
                reason: error.message,
            })?;
        let taken = prefixed_under(name);
        if !taken.is_empty() {
            return Err(ServerError::EmbeddedDatabase {
                name: name.clone(),
                reason: format!(
                    "the store already holds database '{name}' ({}, stored under its prefix); serving the embedded collections under the same name would hide one or the other: choose another name",
                    listed(&taken)
                ),
            });
        }
        return Ok(served(embedded));
    }
    let Some(path) = &options.database_path else {
        // An in-memory database: no directory to name it after.
        return Ok(Naming {
            namespaces: Namespaces::Prefixed,
            notice: None,
        });
    };
    let not_served = |why: String| {
        Naming {
        namespaces: Namespaces::Prefixed,
        notice: (!unprefixed.is_empty()).then(|| {
            format!(
                "not serving the {} stored without a database prefix ({}): {why}; serve them with --embedded-database NAME",
                counted(&unprefixed),
                listed(&unprefixed)
            )
        }),
    }
    };
    let directory = std::path::Path::new(path);
    // The shell's name for them: the directory's, or `test` when that cannot be one.
    let embedded = embedded_database_of(Some(directory));
    let named_after_directory = directory_database_name(directory) == Some(embedded.name());
    if !named_after_directory && unprefixed.is_empty() {
        // Nothing to serve under `test`: its collections keep MongoDB's names (with `.`).
        return Ok(Naming {
            namespaces: Namespaces::Prefixed,
            notice: None,
        });
    }
    let name = embedded.name().to_owned();
    let taken = prefixed_under(&name);
    if !taken.is_empty() {
        return Ok(not_served(format!(
            "database '{name}' already has collections stored under its prefix ({}), which stay served",
            listed(&taken)
        )));
    }
    let mut naming = served(embedded);
    if !named_after_directory && let Some(notice) = &mut naming.notice {
        use std::fmt::Write as _;
        let _ = write!(
            notice,
            " (the directory name of {} cannot name a database)",
            directory.display()
        );
    }
    Ok(naming)
}

/// `"1 collection"`, `"3 collections"`.
fn counted(names: &[&str]) -> String {
    match names.len() {
        1 => "1 collection".to_owned(),
        count => format!("{count} collections"),
    }
}

/// The first names of `names`, and how many more there are.
fn listed(names: &[&str]) -> String {
    let shown = names
        .iter()
        .take(LISTED)
        .copied()
        .collect::<Vec<_>>()
        .join(", ");
    match names.len().saturating_sub(LISTED) {
        0 => shown,
        more => format!("{shown} and {more} more"),
    }
}
