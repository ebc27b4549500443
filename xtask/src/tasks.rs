//! `cargo xtask crash` and `cargo xtask fuzz`: the long-running robustness loops.
//!
//! Both wrap tests that also run, briefly, inside `cargo test`: the kill -9 loops (the store's
//! and the database facade's) with their default iteration counts, and the fuzz entry points on random inputs. These commands run
//! them longer, and the fuzz command under libFuzzer (cargo-fuzz) for coverage guidance.

use std::process::Command;

use anyhow::{Context, Result, bail};

use crate::shared::repo_root;
use crate::step::{cargo, step, step_capturing};

/// The kill -9 loops `crash` runs: (package, test target, what it checks).
const CRASH_LOOPS: &[(&str, &str, &str)] = &[
    ("spillway-store", "crash", "storage engine: write batches"),
    ("spillway", "crash", "database: transactions and indexes"),
    (
        "spillway",
        "pattern_crash",
        "patterns: outlier pushes (and their change events), subset writes, interrupted migrations",
    ),
    (
        "spillway",
        "ttl_crash",
        "the TTL reaper: nothing deleted early, no index entry left",
    ),
];

/// `crash [--iterations N]`.
#[derive(clap::Args)]
pub(crate) struct CrashOptions {
    /// Kills each loop runs (a quarter of that for interrupted migrations)
    #[arg(long, value_name = "N", default_value_t = 200)]
    pub(crate) iterations: u64,
}

/// The kill -9 loops of the storage engine, of the database facade and of the pattern layer,
/// in release mode, N kills each (a quarter of that for interrupted migrations); then the
/// counts each loop reported.
pub(crate) fn crash(options: &CrashOptions) -> Result<()> {
    let iterations = options.iterations;
    let mut summaries = Vec::new();
    for &(package, test, what) in CRASH_LOOPS {
        let mut command = cargo(&repo_root(), &[]);
        command
            .args([
                "test",
                "--release",
                "-p",
                package,
                "--test",
                test,
                "--",
                "--nocapture",
            ])
            .env("SPILLWAY_CRASH_ITERATIONS", iterations.to_string());
        let output = step_capturing(&format!("crash loop, {what}"), command)?;
        // Each loop prints its counts on lines like "... N kills, M acknowledged ...".
        let counts: Vec<&str> = output
            .lines()
            .filter(|line| line.contains(" kills, "))
            .collect();
        if counts.is_empty() {
            bail!("the {package} {test} crash loop printed no counts");
        }
        for line in counts {
            summaries.push(format!("{package} {test}: {line}"));
        }
    }
    println!("\n== crash loops passed, {iterations} kills each");
    for summary in summaries {
        println!("{summary}");
    }
    Ok(())
}

/// The fuzz targets, in `fuzz/`.
const FUZZ_TARGETS: &[&str] = &[
    "store_frame",
    "store_checkpoint",
    "store_recovery",
    "doc_shell",
    "doc_filter_update",
    "doc_raw_append",
    "cli_statement",
    "server_frame",
    "server_message",
];

/// `fuzz [--seconds N] [--runs N] [TARGET...]`.
#[derive(clap::Args)]
pub(crate) struct FuzzOptions {
    /// Seconds each target runs [default: 20, or no time limit with --runs]
    #[arg(long, value_name = "N")]
    pub(crate) seconds: Option<u64>,
    /// Executions each target runs (libFuzzer's -runs)
    #[arg(long, value_name = "N")]
    pub(crate) runs: Option<u64>,
    /// The targets to run [default: all of them]
    #[arg(value_name = "TARGET", value_parser = clap::builder::PossibleValuesParser::new(FUZZ_TARGETS))]
    pub(crate) targets: Vec<String>,
}

/// Each target under libFuzzer for N seconds (default 20), or for N executions with `--runs`
/// (libFuzzer's `-runs`; then no time limit unless `--seconds` is given too). libFuzzer's
/// closing line ("Done N runs in S second(s)") is the execution count. Installs cargo-fuzz
/// when it is missing. cargo-fuzz passes nightly-only flags to rustc; `RUSTC_BOOTSTRAP=1` lets
/// this project's stable toolchain accept them.
pub(crate) fn fuzz(options: &FuzzOptions) -> Result<()> {
    let FuzzOptions {
        seconds,
        runs,
        targets,
    } = options;
    let (seconds, runs) = (*seconds, *runs);
    let targets: Vec<&str> = if targets.is_empty() {
        FUZZ_TARGETS.to_vec()
    } else {
        targets.iter().map(String::as_str).collect()
    };
    ensure_cargo_fuzz()?;
    let fuzz_dir = repo_root().join("fuzz");
    for target in targets {
        let corpus = fuzz_dir.join("corpus").join(target);
        std::fs::create_dir_all(&corpus)
            .with_context(|| format!("creating {}", corpus.display()))?;
        let mut command = cargo(&fuzz_dir, &[]);
        command
            .args(["fuzz", "run", target, "--"])
            .env("RUSTC_BOOTSTRAP", "1");
        let budget = match (seconds, runs) {
            (_, Some(runs)) => {
                command.arg(format!("-runs={runs}"));
                if let Some(seconds) = seconds {
                    command.arg(format!("-max_total_time={seconds}"));
                }
                format!("{runs} runs")
            }
            (seconds, None) => {
                let seconds = seconds.unwrap_or(20);
                command.arg(format!("-max_total_time={seconds}"));
                format!("{seconds}s")
            }
        };
        step(&format!("fuzz {target} for {budget}"), command)?;
    }
    Ok(())
}

fn ensure_cargo_fuzz() -> Result<()> {
    let installed = Command::new("cargo")
        .args(["fuzz", "--version"])
        .output()
        .is_ok_and(|output| output.status.success());
    if installed {
        return Ok(());
    }
    let mut install = Command::new("cargo");
    install.args(["install", "cargo-fuzz", "--locked"]);
    step("install cargo-fuzz", install)
}
