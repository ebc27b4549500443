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
//!
//! Modules are layered, each using only those below it (bottom first): `shared`, `step` →
//! `conformance`, `realdata`, `servers`, `tasks` → `memory_bench`, `pymongo` → `clients`,
//! `mongosh`, `serve_tasks` → `hostile` → `ci`.
//!
//! xtask only orchestrates: it never contains product logic. Every check it runs is also a
//! plain `#[test]` somewhere, so `cargo test --workspace` alone covers the same ground.

mod ci;
mod clients;
mod conformance;
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

use anyhow::{Result, bail};

const USAGE: &str = "usage: cargo xtask <command> [options]

commands:
  ci                     fmt, clippy, tests, docs, fuzz smoke, the ../shared tasks,
                         then pymongo --ci, mongosh, clients --ci,
                         serve-crash --iterations 5, serve-load --seconds 5,
                         serve-hostile --bounded
  conformance [--verbose] [--update-known-failures]
                         run MongoDB's CRUD v1 and unified-format conformance tests
                         through the command layer (needs ../shared)
  realdata               patterns on the real data sets in ../shared/data: logical
                         equality, verify, stored sizes (needs ../shared)
  bench [criterion args] run the criterion benchmarks in benches/
  crash [--iterations N] kill -9 loops of the storage engine and of the database
                         (default 200 kills each)
  fuzz [--seconds N] [--runs N] [TARGET...]
                         run the fuzz targets under libFuzzer (default 20 s each, or
                         N executions each with --runs)
  pymongo [--peer] [--peer-only] [--files a.py,b.py] [--ci] [--timeout SECS]
                         pymongo's own test files against spillway serve (and SecantusDB
                         with --peer, or only it with --peer-only); table in
                         target/pymongo-report.md; --ci: a bounded subset, failing only
                         on tests listed in xtask/pymongo-expected.txt
  memory-bench [--products N] [--reviews N] [--pages N] [--timeout SECS]
                         product pages of a subset-pattern database against plain
                         documents (default 10,000 x 150 reviews, 2,000 pages), each
                         opened by spillway run with a cold page cache inside cgroup
                         memory limits of none, 1 GiB ... 128 MiB
  mongosh [--peer] [--update]
                         mongosh from npm against spillway serve (SecantusDB with --peer):
                         a ping, examples/mongosh/*.js compared with their snapshots in
                         xtask/mongosh-expected/ (--update rewrites them), and an
                         interactive session typed through tmux
  clients [--only pymongo,node-driver,mongoose] [--peer] [--control] [--ci]
          [--timeout SECS]
                         issue 27's checks through pymongo, the Node.js driver and
                         Mongoose (pinned; npm packages in target/clients/): each runs
                         the same reads and writes on a collection with an outlier
                         policy and on a plain one, and compares; --control runs them
                         with no policy (checks the harness), --peer runs the control
                         against SecantusDB too; --ci: 120 s per client
  serve-crash [--iterations N] [--seed S]
                         kill -9 of spillway serve under pymongo writers, N times
                         (default 100): every acknowledged write must survive
  serve-load [--seconds N] [--clients N] [--threads] [--peer]
                         N pymongo clients (default 32, processes) of mixed work for
                         N seconds (default 60); table in target/serve-load-report.md
  serve-hostile [--bounded] [--seconds N] [--idle N] [--slow N] [--tricklers N]
                [--trickle-mb N] [--rss-bound-mib N]
                         malformed messages (deep nesting at every place, bad lengths,
                         opcodes, checksums, OP_COMPRESSED), N idle connections
                         (default 5000), slow senders (200), tricklers of 40 MB
                         messages (60) for N seconds (default 90) while a pymongo
                         client works; fails if it stops getting answers, the server
                         dies or its peak RSS passes the bound (default 768 MiB);
                         --bounded: CI's 20 s form with 1000 idle connections
  serve-bench [--repetitions N] [--peer]
                         pymongo insert_one, find_one, update_one, insert_many(1000)
                         against spillway serve (and SecantusDB), best of N (default 5)

environment:
  SPILLWAY_SHARED        where the shared material is (default: ../shared beside the repository)";

fn main() -> ExitCode {
    match run(&std::env::args().skip(1).collect::<Vec<_>>()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("xtask: {error:#}");
            ExitCode::FAILURE
        }
    }
}

fn run(args: &[String]) -> Result<()> {
    let Some((command, rest)) = args.split_first() else {
        println!("{USAGE}");
        return Ok(());
    };
    match command.as_str() {
        "ci" => ci::run(rest),
        "conformance" => conformance::run(rest),
        "realdata" => realdata::run(rest),
        "bench" => ci::bench(rest),
        "crash" => tasks::crash(rest),
        "fuzz" => tasks::fuzz(rest),
        "pymongo" => pymongo::run(rest),
        "mongosh" => mongosh::run(rest),
        "clients" => clients::run(rest),
        "memory-bench" => memory_bench::run(rest),
        "serve-crash" => serve_tasks::crash(rest),
        "serve-load" => serve_tasks::load(rest),
        "serve-bench" => serve_tasks::bench(rest),
        "serve-hostile" => hostile::run(rest),
        "help" | "--help" | "-h" => {
            println!("{USAGE}");
            Ok(())
        }
        other => bail!("unknown command '{other}'\n\n{USAGE}"),
    }
}
