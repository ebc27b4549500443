//! `cargo xtask`: the project's automation, one binary with subcommands.
//!
//! | command | what it does |
//! |---|---|
//! | `ci` | everything CI checks, in order, failing fast: fmt, clippy, tests (snapshots in check mode, unreferenced snapshots rejected), docs, a fuzz smoke run, the tasks that need `../shared`, then `pymongo --ci`, `mongosh`, `clients --ci`, `serve-crash --iterations 5`, `serve-load --seconds 5` and `serve-hostile --bounded` |
//! | `conformance` | MongoDB's CRUD v1 tests (`../shared/conformance/crud-v1`) against the reference model and through the command layer, and the unified-format CRUD and transactions tests through the command layer |
//! | `realdata` | the outlier and subset policies on OpenFlights routes and MovieLens ratings from `../shared/data`: logical equality, `verify_patterns`, stored sizes |
//! | `bench` | the criterion benchmarks in `benches/` |
//! | `crash` | the kill -9 loops of the storage engine, of the database, of the pattern layer and of the TTL reaper, as long as you like |
//! | `fuzz` | the cargo-fuzz targets under libFuzzer |
//! | `pymongo` | pymongo's own test files, unmodified, against `spillway serve` (and SecantusDB with `--peer`), counted from JUnit XML |
//! | `serve-crash` | kill -9 of `spillway serve` under pymongo writers, N times: every acknowledged write survives, no transaction half-applied |
//! | `serve-load` | 32 concurrent pymongo clients, mixed reads and writes, ops/s and p50/p99 (SecantusDB beside with `--peer`) |
//! | `serve-hostile` | malformed messages, thousands of idle connections, slow senders and tricklers against `spillway serve` while a pymongo client keeps working: its p99, the server's peak RSS within a bound |
//! | `serve-bench` | pymongo insert_one, find_one, update_one, insert_many(1000) timings (SecantusDB beside with `--peer`) |
//! | `memory-bench` | product pages of a subset-pattern database against plain documents, with a cold page cache inside cgroup memory limits (issue 14's table) |
//! | `mongosh` | the real mongosh from npm against `spillway serve`: a ping, the mongosh examples against their snapshots, an interactive session through tmux |
//! | `clients` | issue 27's transparency checks through pymongo, the official Node.js driver and Mongoose (pinned, from PyPI and npm): a collection with a policy answers as a plain one |
//! | `backend-peer` | spillway-mongodb's integration tests (the backend suite, concurrency, retryable writes) against SecantusDB, their second upstream beside `spillway serve` |
//! | `gui` | issue 30's GUI check: mongo-express (built from npm) in headless Chromium browses and edits a plain and a patterned collection; screenshots in `target/gui/screenshots/` |
//!
//! Modules are layered, each using only those below it (bottom first): `shared`, `step` →
//! `conformance`, `realdata`, `servers`, `tasks` → `memory_bench`, `pymongo` → `backend_peer`,
//! `clients`, `mongosh`, `serve_tasks` → `gui`, `hostile` → `ci`.
//!
//! xtask only orchestrates: it never contains product logic. Every check it runs is also a
//! plain `#[test]` somewhere, so `cargo test --workspace` alone covers the same ground.

mod backend_peer;
mod ci;
mod clients;
mod conformance;
mod gui;
mod hostile;
mod memory_bench;
mod mongosh;
mod pymongo;
mod realdata;
mod serve_tasks;
mod servers;
mod shared;
mod step;
mod tasks;

use std::process::ExitCode;

use anyhow::Result;
use clap::{Parser, Subcommand};

/// The project's automation: `cargo xtask <command> [options]`.
#[derive(Parser)]
#[command(
    bin_name = "cargo xtask",
    after_help = "environment:\n  SPILLWAY_SHARED  where the shared material is (default: ../shared beside the repository)"
)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
}

/// One variant a command; its options are defined beside the task, in the module that runs it.
#[derive(Subcommand)]
enum Command {
    /// fmt, clippy, tests, docs, fuzz smoke, the ../shared tasks, then pymongo --ci, mongosh,
    /// clients --ci, serve-crash --iterations 5, serve-load --seconds 5, serve-hostile --bounded
    Ci(ci::Options),
    /// Run MongoDB's CRUD v1 and unified-format conformance tests through the command layer
    /// (needs ../shared)
    Conformance(conformance::Options),
    /// Patterns on the real data sets in ../shared/data: logical equality, verify, stored sizes
    /// (needs ../shared)
    Realdata(realdata::Options),
    /// Run the criterion benchmarks in benches/ (arguments after `--` go to criterion)
    Bench(ci::BenchOptions),
    /// kill -9 loops of the storage engine, of the database, of the pattern layer and of the
    /// TTL reaper
    Crash(tasks::CrashOptions),
    /// Run the fuzz targets under libFuzzer (20 s each, or N executions each with --runs)
    Fuzz(tasks::FuzzOptions),
    /// pymongo's own test files against spillway serve (and SecantusDB with --peer, or only it
    /// with --peer-only)
    ///
    /// The table goes to target/pymongo-report.md.
    Pymongo(pymongo::Options),
    /// Product pages of a subset-pattern database against plain documents, with a cold page
    /// cache inside cgroup memory limits
    ///
    /// Each database is opened by spillway run with a cold page cache inside cgroup memory
    /// limits of none, 1 GiB ... 128 MiB.
    MemoryBench(memory_bench::Options),
    /// mongosh from npm against spillway serve (SecantusDB with --peer): a ping, the examples
    /// against their snapshots, an interactive session through tmux
    ///
    /// The examples are examples/mongosh/*.js, compared with their snapshots in
    /// xtask/mongosh-expected/ (--update rewrites them); the interactive session is typed
    /// through tmux.
    Mongosh(mongosh::Options),
    /// Issue 27's checks through pymongo, the Node.js driver and Mongoose: a collection with a
    /// policy answers as a plain one
    ///
    /// The clients are pinned (npm packages in target/clients/). Each runs the same reads and
    /// writes on a collection with an outlier policy and on a plain one, and compares.
    Clients(clients::Options),
    /// spillway-mongodb's integration tests against SecantusDB (their second upstream)
    BackendPeer(backend_peer::Options),
    /// mongo-express (built from npm) in headless Chromium against spillway serve: browses and
    /// edits a plain and a patterned collection, then checks the writes through a driver
    ///
    /// Screenshots of every page go to target/gui/screenshots/. Needs Node.js and Debian's
    /// /usr/bin/chromium (--install-chromium installs it with apt-get). Not part of ci.
    Gui(gui::Options),
    /// kill -9 of spillway serve under pymongo writers, N times: every acknowledged write must
    /// survive
    ServeCrash(serve_tasks::CrashOptions),
    /// N pymongo clients of mixed work for N seconds; table in target/serve-load-report.md
    ServeLoad(serve_tasks::LoadOptions),
    /// Malformed messages, idle connections, slow senders and tricklers against spillway serve
    /// while a pymongo client works
    ///
    /// Malformed messages (deep nesting at every place, bad lengths, opcodes, checksums,
    /// OP_COMPRESSED), idle connections, slow senders, and tricklers of large messages, for N
    /// seconds while a pymongo client works. Fails if the client stops getting answers, the
    /// server dies or its peak RSS passes the bound.
    ServeHostile(hostile::Options),
    /// pymongo insert_one, find_one, update_one, insert_many(1000) against spillway serve (and
    /// SecantusDB with --peer), best of N
    ServeBench(serve_tasks::BenchOptions),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let Some(command) = cli.command else {
        // Bare `cargo xtask` lists the commands, as it always has, and succeeds.
        let _ = <Cli as clap::CommandFactory>::command().print_help();
        return ExitCode::SUCCESS;
    };
    match run(&command) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("xtask: {error:#}");
            ExitCode::FAILURE
        }
    }
}

fn run(command: &Command) -> Result<()> {
    match command {
        Command::Ci(options) => ci::run(options),
        Command::Conformance(options) => conformance::run(options),
        Command::Realdata(options) => realdata::run(options),
        Command::Bench(options) => ci::bench(options),
        Command::Crash(options) => tasks::crash(options),
        Command::Fuzz(options) => tasks::fuzz(options),
        Command::Pymongo(options) => pymongo::run(options),
        Command::Mongosh(options) => mongosh::run(options),
        Command::Clients(options) => clients::run(options),
        Command::BackendPeer(options) => backend_peer::run(options),
        Command::Gui(options) => gui::run(options),
        Command::MemoryBench(options) => memory_bench::run(options),
        Command::ServeCrash(options) => serve_tasks::crash(options),
        Command::ServeLoad(options) => serve_tasks::load(options),
        Command::ServeBench(options) => serve_tasks::bench(options),
        Command::ServeHostile(options) => hostile::run(options),
    }
}

#[cfg(test)]
mod tests {
    use clap::{CommandFactory, Parser};

    use super::{Cli, Command};

    /// Parses `cargo xtask ARGS` as the binary does.
    pub(crate) fn parse(args: &[&str]) -> Result<Command, clap::Error> {
        let cli = Cli::try_parse_from(std::iter::once("xtask").chain(args.iter().copied()))?;
        Ok(cli.command.expect("a command was given"))
    }

    #[test]
    fn the_command_line_is_well_formed() {
        Cli::command().debug_assert();
    }

    #[test]
    fn every_command_of_the_documentation_parses() {
        for line in [
            "ci",
            "conformance --verbose --update-known-failures",
            "realdata",
            "bench",
            "crash --iterations 5",
            "fuzz --seconds 20 store_frame doc_shell",
            "fuzz --runs 100",
            "pymongo --peer --peer-only --auth --timeout 600",
            "pymongo --ci --files test_bulk.py,asynchronous/test_bulk.py",
            "memory-bench --products 10 --reviews 3 --pages 5 --timeout 60",
            "mongosh --peer",
            "mongosh --update",
            "clients --only pymongo,node-driver,mongoose --peer --control --ci --timeout 9",
            "gui --install-chromium --relock --timeout 600",
            "serve-crash --iterations 100 --seed 7",
            "serve-load --seconds 60 --clients 32 --threads --peer",
            "serve-hostile --bounded --seconds 20 --idle 10 --slow 1 --tricklers 1 --trickle-mb 1 --rss-bound-mib 512",
            "serve-bench --peer --repetitions 3",
        ] {
            let args: Vec<&str> = line.split(' ').collect();
            if let Err(error) = parse(&args) {
                panic!("{line}: {error}");
            }
        }
    }

    #[test]
    fn bench_passes_what_follows_to_criterion() {
        let Command::Bench(options) = parse(&["bench", "--", "--noplot", "patterns"]).unwrap()
        else {
            panic!("bench parses as bench");
        };
        assert_eq!(options.criterion, ["--noplot", "patterns"]);
        let Command::Bench(options) =
            parse(&["bench", "patterns", "--save-baseline", "x"]).unwrap()
        else {
            panic!("bench parses as bench");
        };
        assert_eq!(options.criterion, ["patterns", "--save-baseline", "x"]);
        // A first argument with hyphens goes to criterion too (only `-h`/`--help` is xtask's).
        let Command::Bench(options) = parse(&["bench", "--noplot", "patterns"]).unwrap() else {
            panic!("bench parses as bench");
        };
        assert_eq!(options.criterion, ["--noplot", "patterns"]);
    }

    #[test]
    fn fuzz_takes_known_targets_only() {
        let Command::Fuzz(options) = parse(&["fuzz", "--seconds", "1", "store_frame"]).unwrap()
        else {
            panic!("fuzz parses as fuzz");
        };
        assert_eq!((options.seconds, options.runs), (Some(1), None));
        assert_eq!(options.targets, ["store_frame"]);
        let error = parse(&["fuzz", "--seconds", "1", "--runs", "10", "nosuchtarget"])
            .err()
            .expect("an unknown target is refused");
        assert_eq!(error.kind(), clap::error::ErrorKind::InvalidValue);
    }

    #[test]
    fn pymongo_files_are_a_comma_list() {
        let Command::Pymongo(options) = parse(&["pymongo", "--files", "a.py,b.py"]).unwrap() else {
            panic!("pymongo parses as pymongo");
        };
        assert_eq!(options.files, ["a.py", "b.py"]);
        assert!(parse(&["pymongo", "--ci", "--peer-only"]).is_err());
        assert!(parse(&["pymongo", "--ci", "--auth"]).is_err());
    }

    #[test]
    fn mongosh_update_cannot_be_combined_with_the_peer() {
        assert!(parse(&["mongosh", "--peer", "--update"]).is_err());
        assert!(parse(&["mongosh", "--bogus"]).is_err());
        let Command::Mongosh(options) = parse(&["mongosh", "--update"]).unwrap() else {
            panic!("mongosh parses as mongosh");
        };
        assert!(options.update && !options.peer);
    }

    #[test]
    fn defaults_are_those_of_the_hand_written_parsers() {
        let Command::Crash(crash) = parse(&["crash"]).unwrap() else {
            panic!("crash");
        };
        assert_eq!(crash.iterations, 200);
        let Command::ServeCrash(serve_crash) = parse(&["serve-crash"]).unwrap() else {
            panic!("serve-crash");
        };
        assert_eq!((serve_crash.iterations, serve_crash.seed), (100, None));
        assert!(parse(&["serve-crash", "--iterations", "0"]).is_err());
        let Command::ServeBench(serve_bench) = parse(&["serve-bench"]).unwrap() else {
            panic!("serve-bench");
        };
        assert_eq!((serve_bench.repetitions, serve_bench.peer), (5, false));
        let Command::MemoryBench(memory) = parse(&["memory-bench"]).unwrap() else {
            panic!("memory-bench");
        };
        assert_eq!(
            (
                memory.products,
                memory.reviews,
                memory.pages,
                memory.timeout_seconds
            ),
            (10_000, 150, 2_000, 600)
        );
        assert!(parse(&["memory-bench", "--pages", "0"]).is_err());
        // A bare command parses to the same options as the tasks' `Default`, which CI builds
        // its calls from.
        let Command::ServeLoad(load) = parse(&["serve-load"]).unwrap() else {
            panic!("serve-load");
        };
        let default = crate::serve_tasks::LoadOptions::default();
        assert_eq!(
            (load.seconds, load.clients, load.threads, load.peer),
            (
                default.seconds,
                default.clients,
                default.threads,
                default.peer
            )
        );
        assert!(parse(&["serve-load", "--seconds", "0"]).is_err());
        let Command::ServeHostile(hostile) = parse(&["serve-hostile"]).unwrap() else {
            panic!("serve-hostile");
        };
        let default = crate::hostile::Options::default();
        assert_eq!(
            (hostile.bounded, hostile.seconds, hostile.idle, hostile.slow),
            (default.bounded, default.seconds, default.idle, default.slow)
        );
        assert_eq!(
            (hostile.tricklers, hostile.trickle_mb, hostile.rss_bound_mib),
            (default.tricklers, default.trickle_mb, default.rss_bound_mib)
        );
        assert!(parse(&["serve-hostile", "--seconds", "4"]).is_err());
        for (command, parsed) in [
            ("pymongo", parse(&["pymongo"])),
            ("clients", parse(&["clients"])),
            ("mongosh", parse(&["mongosh"])),
            ("conformance", parse(&["conformance"])),
        ] {
            assert!(parsed.is_ok(), "{command}");
        }
    }

    #[test]
    fn a_bare_command_line_asks_for_the_help() {
        let cli = Cli::try_parse_from(["xtask"]).unwrap();
        assert!(cli.command.is_none());
        assert!(parse(&["nosuchcommand"]).is_err());
    }
}
