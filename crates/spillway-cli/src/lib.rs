//! The `spillway` command, as a library: the binary's `main.rs` only parses the command line
//! and calls [`app::run`].
//!
//! | module | what it holds |
//! |---|---|
//! | `app` | the command line (clap) and the dispatch to each subcommand |
//! | `shell` | the mongosh-syntax statement language: split, parse, execute, print |
//! | `repl` | the interactive shell (rustyline line editing, history, multi-line input) |
//! | `import`, `export`, `csv` | documents in and out: JSON streams and arrays, Extended JSON, CSV, TSV |
//! | `columns`, `date_layout` | CSV/TSV columns: names, mongoimport's types (`n.int32()`, `d.date(2006-01-02)`), `auto()` per column |
//! | `database` | how a subcommand opens its database (read-only or not, durability, recovery notes) |
//! | `maintenance` | `verify`, `stats`, `compact`, `repair` reports as text |
//! | `advise` | `spillway advise`: the pattern advisor's report, its plot, applying its proposals |
//! | `serve` | `spillway serve`: the command line of `spillway-server`'s wire-protocol server |
//! | `patterns` | pattern policies as the shell writes them (`setPattern`'s options) |
//! | `output` | stdout that ends quietly on a closed pipe (`outln!`) |
//! | `excerpt` | the input line an error is about, cut to a window around its column |
//!
//! Modules are layered, each using only those below it (bottom first): `csv`, `database`,
//! `date_layout`, `demo`, `excerpt`, `output`, `patterns` → `advise`, `columns`, `maintenance`,
//! `serve` → `export`, `import`, `shell` → `repl` → `app`.
//!
//! This crate must never read or write database files except through the `spillway` facade.

pub mod advise;
pub mod app;
mod columns;
pub mod csv;
mod database;
mod date_layout;
pub mod demo;
pub mod excerpt;
pub mod export;
pub mod import;
pub mod maintenance;
pub mod output;
pub mod patterns;
pub mod repl;
pub mod serve;
pub mod shell;
