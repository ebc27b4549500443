//! The `spillway` command.
//!
//! Today it knows one subcommand, `demo`, and says plainly that the demo is not built yet
//! and what it will show. The shell, script runner, import/export, advise, verify, compact,
//! stats and repair subcommands arrive with the CLI issue, on top of the `spillway` facade.
//! This crate must never read or write database files except through that facade.

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
    /// Build the seeds' book and product scenarios in an embedded database and compare the
    /// same operations with and without the patterns (not built yet: says what it will do).
    Demo {
        /// Directory for the demo database (default: a fresh directory under the current one).
        dir: Option<std::path::PathBuf>,
    },
}

fn main() {
    let cli = Cli::parse();
    match cli.command {
        Command::Demo { dir } => {
            let target = dir.map_or_else(
                || "a fresh directory under the current one".to_string(),
                |dir| dir.display().to_string(),
            );
            println!(
                "spillway demo is not built yet. When it is, it will:\n\
                 \x20 1. create an embedded database in {target};\n\
                 \x20 2. declare the outlier pattern on sales.customers_purchased (threshold 50)\n\
                 \x20    and the subset pattern on products.reviews (10 newest);\n\
                 \x20 3. insert the seeds' books and products and show the stored documents;\n\
                 \x20 4. make one book go viral with thousands of pushes;\n\
                 \x20 5. time the same reads and pushes with and without the patterns.\n\
                 What exists today is the document language (crate spillway-doc): run\n\
                 `cargo xtask ci` to see its tests and MongoDB's conformance suite."
            );
        }
    }
}
