//! `cargo xtask crash` and `cargo xtask fuzz`: the long-running robustness loops.
//!
//! Both wrap tests that also run, briefly, inside `cargo test`: the kill -9 loop with its
//! default iteration count, and the fuzz entry points on random inputs. These commands run
//! them longer, and the fuzz command under libFuzzer (cargo-fuzz) for coverage guidance.

use std::process::Command;

use anyhow::{Context, Result, bail};

use crate::ci::{cargo, step};
use crate::shared::repo_root;

/// `crash [--iterations N]`: the storage engine's kill -9 loop, then the pattern layer's, in
/// release mode.
pub(crate) fn crash(args: &[String]) -> Result<()> {
    let iterations = match args {
        [] => 200,
        [flag, count] if flag == "--iterations" => count
            .parse::<u64>()
            .with_context(|| format!("--iterations takes a whole number, got '{count}'"))?,
        other => bail!("crash takes only --iterations N, got {other:?}"),
    };
    let mut command = cargo(&repo_root(), &[]);
    command
        .args([
            "test",
            "--release",
            "-p",
            "spillway-store",
            "--test",
            "crash",
            "--",
            "--nocapture",
        ])
        .env("SPILLWAY_CRASH_ITERATIONS", iterations.to_string());
    step("crash loop", command)?;
    pattern_crash(iterations)
}

/// The pattern layer's kill -9 loops (outlier pushes, subset writes, an interrupted
/// migration), `crates/spillway/tests/pattern_crash.rs`, with the same iteration count.
fn pattern_crash(iterations: u64) -> Result<()> {
    let mut command = cargo(&repo_root(), &[]);
    command
        .args([
            "test",
            "--release",
            "-p",
            "spillway",
            "--test",
            "pattern_crash",
            "--",
            "--nocapture",
        ])
        .env("SPILLWAY_CRASH_ITERATIONS", iterations.to_string());
    step("pattern crash loop", command)
}

/// The fuzz targets, in `fuzz/`.
const FUZZ_TARGETS: &[&str] = &[
    "store_frame",
    "store_checkpoint",
    "doc_shell",
    "doc_filter_update",
];

/// `fuzz [--seconds N] [TARGET...]`: each target under libFuzzer for N seconds (default 20).
/// Installs cargo-fuzz when it is missing. cargo-fuzz passes nightly-only flags to rustc;
/// `RUSTC_BOOTSTRAP=1` lets this project's stable toolchain accept them.
pub(crate) fn fuzz(args: &[String]) -> Result<()> {
    let mut seconds = 20_u64;
    let mut targets = Vec::new();
    let mut rest = args.iter();
    while let Some(arg) = rest.next() {
        if arg == "--seconds" {
            let value = rest.next().context("--seconds needs a number")?;
            seconds = value
                .parse()
                .with_context(|| format!("--seconds takes a whole number, got '{value}'"))?;
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
            .arg(format!("-max_total_time={seconds}"))
            .env("RUSTC_BOOTSTRAP", "1");
        step(&format!("fuzz {target} for {seconds}s"), command)?;
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
