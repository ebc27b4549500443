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

/// `crash [--iterations N]`: the kill -9 loops of the storage engine, of the database facade
/// and of the pattern layer, in release mode, N kills each (a quarter of that for interrupted
/// migrations); then the counts each loop reported.
pub(crate) fn crash(args: &[String]) -> Result<()> {
    let iterations = match args {
        [] => 200,
        [flag, count] if flag == "--iterations" => count
            .parse::<u64>()
            .with_context(|| format!("--iterations takes a whole number, got '{count}'"))?,
        other => bail!("crash takes only --iterations N, got {other:?}"),
    };
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

/// `fuzz [--seconds N] [--runs N] [TARGET...]`: each target under libFuzzer for N seconds
/// (default 20), or for N executions with `--runs` (libFuzzer's `-runs`; then no time limit
/// unless `--seconds` is given too). libFuzzer's closing line ("Done N runs in S second(s)")
/// is the execution count. Installs cargo-fuzz when it is missing. cargo-fuzz passes nightly-only flags to rustc;
/// `RUSTC_BOOTSTRAP=1` lets this project's stable toolchain accept them.
pub(crate) fn fuzz(args: &[String]) -> Result<()> {
    let mut seconds = None;
    let mut runs = None;
    let mut targets = Vec::new();
    let mut rest = args.iter();
    while let Some(arg) = rest.next() {
        if arg == "--seconds" {
            let value = rest.next().context("--seconds needs a number")?;
            seconds = Some(
                value
                    .parse::<u64>()
                    .with_context(|| format!("--seconds takes a whole number, got '{value}'"))?,
            );
        } else if arg == "--runs" {
            let value = rest.next().context("--runs needs a number")?;
            runs = Some(
                value
                    .parse::<u64>()
                    .with_context(|| format!("--runs takes a whole number, got '{value}'"))?,
            );
        } else if FUZZ_TARGETS.contains(&arg.as_str()) {
            targets.push(arg.as_str());
        } else {
            bail!(
                "unknown fuzz target '{arg}' (targets: {})",
                FUZZ_TARGETS.join(", ")
            );
        }
    }
    if targets.is_empty() {
        targets = FUZZ_TARGETS.to_vec();
    }
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
