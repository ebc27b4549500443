//! The command line: one clap subcommand per job, each dispatched to its module.
//!
//! Exit codes: 0 success; 1 the job ran but found or hit a problem (a statement failed,
//! lines were rejected, verify found damage); 2 bad command-line usage (clap's own). This
//! module must never hold a subcommand's logic: it parses arguments and delegates.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, Result, bail};
use clap::{Parser, Subcommand};
use spillway::Database;

use crate::database::{Access, open_database};
use crate::shell::{ConsoleTranscript, Executor, RunOptions, Session};
use crate::{export, import, maintenance, repl};

/// Spillway: an embedded document database that applies MongoDB's outlier and subset
/// patterns for you.
#[derive(Debug, Parser)]
#[command(name = "spillway", version, about)]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Interactive shell in mongosh syntax (db.<collection>.find(...), show collections,
    /// help, exit). Without DB, a temporary in-memory database.
    Shell {
        /// Database directory (created if missing).
        db: Option<PathBuf>,
        /// Open the existing database read-only (read-only media, or to be sure nothing
        /// changes): reads work, every write statement fails.
        #[arg(long)]
        read_only: bool,
    },
    /// Run a script of shell statements, one after another; stops at the first error
    /// (exit code 1) unless --keep-going.
    #[command(override_usage = "spillway run [OPTIONS] [DB] <SCRIPT>")]
    Run {
        /// [DB] <SCRIPT>: the database directory (optional: in memory without it) and the
        /// script file ('-' reads standard input).
        #[arg(num_args = 1..=2, required = true, value_name = "PATH")]
        paths: Vec<PathBuf>,
        /// Go on after a failed statement (the exit code is still 1).
        #[arg(long)]
        keep_going: bool,
        /// Open the existing database read-only: reads work, every write statement fails.
        #[arg(long)]
        read_only: bool,
    },
    /// Import documents from JSON (one per line, or an array; Extended JSON, canonical or
    /// relaxed), CSV or TSV into a collection, with mongoimport's flags (--type, --jsonArray,
    /// --fields, --columnsHaveTypes, --mode upsert|merge|delete, --drop...).
    Import(import::ImportArgs),
    /// Export a collection as Extended JSON (one document per line, or an array), CSV or TSV,
    /// with mongoexport's flags (--query, --fields, --sort, --skip, --limit, --pretty...).
    Export(export::ExportArgs),
    /// Check every checksum, every document against its key and every index against its
    /// documents; exit code 1 if anything is wrong.
    Verify {
        /// Database directory.
        db: PathBuf,
        /// Open read-only: change nothing, not even a torn tail (which is then only reported).
        #[arg(long)]
        read_only: bool,
    },
    /// Collections, documents, stored sizes, largest documents, live and dead bytes.
    Stats {
        /// Database directory.
        db: PathBuf,
        /// Open read-only: change nothing.
        #[arg(long)]
        read_only: bool,
    },
    /// The pattern advisor: per collection, array lengths (table and histogram) and the
    /// Outlier or Subset policy it proposes; --svg plots them, --apply declares them.
    Advise(crate::advise::AdviseArgs),
    /// Rewrite mostly-dead log segments to reclaim space.
    Compact {
        /// Database directory.
        db: PathBuf,
    },
    /// Salvage a damaged database: keep every intact commit, drop damaged documents, rebuild
    /// indexes, and report what was dropped. The damaged files are kept in a backup
    /// directory inside DB.
    Repair {
        /// Database directory (must not be open elsewhere).
        db: PathBuf,
        /// Also write the report to this file.
        #[arg(long, value_name = "FILE")]
        report: Option<PathBuf>,
    },
    /// Serve the database over the MongoDB wire protocol, for drivers (pymongo, the Node,
    /// Go, Java and Rust drivers...) and mongosh; stops cleanly on Ctrl-C or SIGTERM.
    Serve(crate::serve::ServeArgs),
    /// Build the seeds' book and product scenarios in an embedded database and compare the
    /// same operations with and without the pattern, measured in the run.
    Demo {
        /// Directory for the demo database (default: a fresh directory under the current one).
        dir: Option<PathBuf>,
        /// Buyers pushed into the viral book, in each of the two collections.
        #[arg(long, default_value_t = crate::demo::DEFAULT_PUSHES)]
        pushes: usize,
    },
}

/// Runs the parsed command line and returns the process's exit code.
pub fn run(cli: Cli) -> Result<ExitCode> {
    match cli.command {
        Command::Shell { db, read_only } => {
            let database = open_database(db.as_ref(), Access::from_flag(read_only))?;
            if db.is_none() {
                eprintln!("No database directory given: using a temporary in-memory database.");
            }
            repl::run(shell_executor(database, db.as_ref()))
        }
        Command::Run {
            paths,
            keep_going,
            read_only,
        } => {
            let (db, script) = match paths.as_slice() {
                [script] => (None, script),
                [db, script] => (Some(db), script),
                _ => unreachable!("clap allows 1 or 2 paths"),
            };
            let source = read_script(script)?;
            let database = open_database(db, Access::from_flag(read_only))?;
            let mut session = Session::new(shell_executor(database, db));
            let summary = session.run(&source, RunOptions { keep_going }, &mut ConsoleTranscript);
            if summary.failed_lines.is_empty() {
                return Ok(ExitCode::SUCCESS);
            }
            let lines: Vec<String> = summary
                .failed_lines
                .iter()
                .map(ToString::to_string)
                .collect();
            eprintln!(
                "{}: {} statement(s) failed (line {}); {} succeeded{}",
                script.display(),
                summary.failed_lines.len(),
                lines.join(", "),
                summary.statements_succeeded,
                if keep_going {
                    ""
                } else {
                    "; stopped at the first error"
                },
            );
            Ok(ExitCode::FAILURE)
        }
        Command::Import(args) => import::run(&args),
        Command::Export(args) => export::run(&args),
        Command::Verify { db, read_only } => maintenance::verify(&db, read_only),
        Command::Stats { db, read_only } => maintenance::stats(&db, read_only),
        Command::Advise(args) => crate::advise::run(
            &args,
            &mut std::io::stdin().lock(),
            &mut std::io::stdout().lock(),
        ),
        Command::Compact { db } => maintenance::compact(&db),
        Command::Repair { db, report } => maintenance::repair(&db, report.as_deref()),
        Command::Serve(args) => crate::serve::run(&args),
        Command::Demo { dir, pushes } => {
            crate::demo::run(dir, pushes, &mut std::io::stdout().lock())?;
            Ok(ExitCode::SUCCESS)
        }
    }
}

/// The shell's executor, naming the database as `spillway serve` serves it (`db.getName()`:
/// the directory's name, or `test`), as mongosh names the database it is connected to.
fn shell_executor(database: Database, directory: Option<&PathBuf>) -> Executor {
    let name = spillway::command::embedded_database_of(directory.map(PathBuf::as_path));
    Executor::new(database).with_database_name(name.name())
}

fn read_script(path: &PathBuf) -> Result<String> {
    let (bytes, name) = if path.as_os_str() == "-" {
        let mut bytes = Vec::new();
        std::io::Read::read_to_end(&mut std::io::stdin(), &mut bytes)
            .context("cannot read the script from standard input")?;
        (bytes, "standard input".to_owned())
    } else {
        if !path.is_file() {
            bail!("script {} does not exist or is not a file", path.display());
        }
        let bytes = std::fs::read(path)
            .with_context(|| format!("cannot read script {}", path.display()))?;
        (bytes, path.display().to_string())
    };
    script_text(bytes, &name)
}

/// A script's bytes as text; bytes that are not UTF-8 are refused with the script's name,
/// the line, and the byte offset (in the file and in the line) where they start.
fn script_text(bytes: Vec<u8>, name: &str) -> Result<String> {
    String::from_utf8(bytes).map_err(|error| {
        let bytes = error.as_bytes();
        let offset = error.utf8_error().valid_up_to();
        let line_start = bytes[..offset]
            .iter()
            .rposition(|&byte| byte == b'\n')
            .map_or(0, |newline| newline + 1);
        let line = bytes[..offset].split(|&byte| byte == b'\n').count();
        anyhow::anyhow!(
            "script {name} is not valid UTF-8: line {line}, byte {} of the line (byte offset {offset} in the file) starts an invalid sequence (0x{:02X}); save the script as UTF-8",
            offset - line_start + 1,
            bytes[offset]
        )
    })
}
