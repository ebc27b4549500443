//! The `spillway` command.
//!
//! `demo` builds the seeds' scenarios and measures the patterns (module `demo`).
//! This crate must never read or write database files except through that facade.

mod demo;

use clap::{Parser, Subcommand};

/// Spillway: an embedded document database that applies MongoDB's outlier and subset
/// patterns for you.
#[derive(Debug, Parser)]
#[command(name = "spillway", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Build the seeds' book and product scenarios in an embedded database, make one book go
    /// viral, and compare the same operations with and without the pattern.
    Demo {
        /// Directory for the demo database (default: a fresh directory under the current one).
        dir: Option<std::path::PathBuf>,
        /// Buyers pushed into the viral book, in each of the two collections.
        #[arg(long, default_value_t = demo::DEFAULT_PUSHES)]
        pushes: usize,
    },
}

fn main() -> std::process::ExitCode {
    let cli = Cli::parse();
    let outcome = match cli.command {
        Command::Demo { dir, pushes } => demo::run(dir, pushes, &mut std::io::stdout().lock()),
    };
    match outcome {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("error: {error:#}");
            std::process::ExitCode::FAILURE
        }
    }
}
