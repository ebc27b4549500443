//! How a subcommand opens its database: read-write with a durability, or read-only
//! ([`Access`]), a fresh in-memory one when no directory is given, and a directory that must
//! already exist for the commands that only inspect or repair one.
//!
//! When recovery dropped something at the open (the torn tail a crash left, a damaged
//! checkpoint replaced by its fallback), this module says so in one line on stderr.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use clap::ValueEnum;
use spillway::{Database, DatabaseOptions, Durability};

/// How durable the command's writes are: interactive and script writes fsync each commit
/// (the default); imports batch many documents per commit anyway.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum DurabilityChoice {
    /// fsync every commit.
    Sync,
    /// Leave flushing to the operating system, fsync once at the end.
    Buffered,
}

/// How a command opens its database.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Access {
    /// Reads and writes, commits as durable as this.
    ReadWrite(Durability),
    /// `--read-only`: `Database::open_read_only`, nothing on disk changes.
    ReadOnly,
}

impl Access {
    /// Read-only if `read_only`, else writable with fsync on every commit.
    pub(crate) fn from_flag(read_only: bool) -> Access {
        if read_only {
            Access::ReadOnly
        } else {
            Access::ReadWrite(Durability::SyncEveryCommit)
        }
    }
}

/// Opens the database in `path`, or a fresh in-memory one. When recovery dropped something
/// (the torn tail a crash left), says so in one line on stderr.
pub(crate) fn open_database(path: Option<&PathBuf>, access: Access) -> Result<Database> {
    let Some(path) = path else {
        if access == Access::ReadOnly {
            bail!("--read-only needs a database directory");
        }
        return Ok(Database::open_in_memory()?);
    };
    let database = match access {
        Access::ReadWrite(durability) => {
            Database::open_with(path, &DatabaseOptions::default().durability(durability))
        }
        Access::ReadOnly => Database::open_read_only(path),
    }
    .with_context(|| format!("cannot open the database in {}", path.display()))?;
    let recovery = database.recovery_report();
    if let Some(torn) = &recovery.torn_tail {
        let ignored = if database.is_read_only() {
            " (ignored: opened read-only)"
        } else {
            ""
        };
        eprintln!("recovery: {torn}{ignored}");
    }
    if let Some(fell_back) = &recovery.checkpoint_fallback {
        let healed = if database.is_read_only() {
            " (opened read-only: the damaged file stays until a writable open)"
        } else {
            ""
        };
        eprintln!("recovery: {fell_back}{healed}");
    }
    Ok(database)
}

/// `db` if it is a directory: commands that read a database refuse to create an empty one.
pub(crate) fn existing(db: &Path) -> Result<PathBuf> {
    if !db.is_dir() {
        bail!(
            "no database in {}: the directory does not exist",
            db.display()
        );
    }
    Ok(db.to_path_buf())
}

/// Opens the database in `db` (read-only with `read_only`), refusing a directory that does
/// not exist.
pub(crate) fn open_existing(db: &Path, read_only: bool) -> Result<Database> {
    open_database(Some(&existing(db)?), Access::from_flag(read_only))
}
