//! `cargo xtask ci` and `cargo xtask bench`: run cargo's own tools in CI's order, then the
//! fuzz smoke run, the tasks that need `../shared`, pymongo's tests against
//! `spillway serve` (`cargo xtask pymongo --ci`), mongosh's examples and an interactive
//! mongosh session (`cargo xtask mongosh`), issue 27's checks through pymongo, the Node.js
//! driver and Mongoose, direct and through `serve --upstream` (`cargo xtask clients --ci --proxy`), short kill -9 and load runs of the
//! server (`serve-crash --iterations 5`, `serve-load --seconds 5`), and hostile clients beside
//! a good one (`serve-hostile --bounded`). Between steps it reports the disk the builds take
//! and, when `.ci/run` asks, removes the builds no later step uses.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{Context, Result, bail};

use crate::shared::{repo_root, shared_dir};
use crate::step::{cargo, step};

/// `cargo xtask ci` takes no options.
#[derive(clap::Args)]
pub(crate) struct Options {}

/// `cargo xtask bench [-- CRITERION ARGS]`.
#[derive(clap::Args)]
pub(crate) struct BenchOptions {
    /// Arguments for criterion, passed on unchanged (e.g. `-- --noplot patterns`)
    #[arg(
        trailing_var_arg = true,
        allow_hyphen_values = true,
        value_name = "CRITERION ARGS"
    )]
    pub(crate) criterion: Vec<String>,
}

/// Runs every check CI runs, in order, stopping at the first failure.
pub(crate) fn run(_options: &Options) -> Result<()> {
    let root = repo_root();
    let started = Instant::now();

    step("format", cargo(&root, &["fmt", "--all", "--", "--check"]))?;
    step(
        "clippy",
        cargo(
            &root,
            &[
                "clippy",
                "--workspace",
                "--all-targets",
                "--",
                "-D",
                "warnings",
            ],
        ),
    )?;
    run_tests(&root)?;
    let mut doc = cargo(&root, &["doc", "--workspace", "--no-deps"]);
    doc.env("RUSTDOCFLAGS", "-D warnings");
    step("docs", doc)?;
    // Nothing after this point builds in the debug profile (the tasks below build release).
    throw_away(&root, "target/debug", "the tests and docs")?;

    // A short smoke run of every fuzz target under libFuzzer; `cargo xtask fuzz` runs longer.
    crate::tasks::fuzz(&crate::tasks::FuzzOptions {
        seconds: Some(10),
        runs: None,
        targets: Vec::new(),
    })?;
    throw_away(&root, "fuzz/target", "the fuzz smoke run")?;

    println!("\n== tasks that need ../shared");
    match shared_dir() {
        Some(dir) => {
            println!("shared material found at {}", dir.display());
            crate::conformance::run(&crate::conformance::Options::default())?;
            // In this (debug) build: a release build of xtask would cost more than the run saves.
            crate::realdata::run(&crate::realdata::Options { unoptimised: true })?;
        }
        None => println!(
            "SKIPPED: ../shared is not beside the repository (set SPILLWAY_SHARED to point at it); \
             the conformance and realdata runs did not happen"
        ),
    }
    // pymongo's own tests over the wire: a bounded subset, failing only on the tests that
    // xtask/pymongo-expected.txt lists (it needs python3 and PyPI).
    println!("\n== pymongo's tests against spillway serve (cargo xtask pymongo --ci)");
    crate::pymongo::run(&crate::pymongo::Options {
        ci: true,
        ..crate::pymongo::Options::default()
    })?;
    // The real mongosh: the mongosh examples against their snapshots, and an interactive
    // session typed through tmux (npm and tmux needed; about four minutes with the install).
    println!("\n== mongosh against spillway serve (cargo xtask mongosh)");
    crate::mongosh::run(&crate::mongosh::Options::default())?;
    // Issue 27's transparency checks through pymongo, the official Node.js driver and
    // Mongoose, on spillway serve and through spillway serve --upstream in front of it: a few
    // seconds each once installed (npm ci of two packages, about 20 s, is
    // reused from target/clients/ while the pins are unchanged), 120 s at most per client.
    println!("\n== real clients against spillway serve (cargo xtask clients --ci)");
    crate::clients::run(&crate::clients::Options {
        ci: true,
        proxy: true,
        ..crate::clients::Options::default()
    })?;
    // The server under kill -9 and under load, briefly (about half a minute together; the
    // full runs are `cargo xtask serve-crash` and `cargo xtask serve-load`).
    println!("\n== spillway serve: kill -9 and load, bounded (serve-crash, serve-load)");
    crate::serve_tasks::crash(&crate::serve_tasks::CrashOptions {
        iterations: 5,
        seed: None,
    })?;
    crate::serve_tasks::load(&crate::serve_tasks::LoadOptions {
        seconds: 5,
        ..crate::serve_tasks::LoadOptions::default()
    })?;
    // Hostile clients beside a good one, bounded (about 40 s; the full run is
    // `cargo xtask serve-hostile`).
    println!("\n== spillway serve: hostile clients, bounded (serve-hostile --bounded)");
    crate::hostile::run(&crate::hostile::Options {
        bounded: true,
        ..crate::hostile::Options::default()
    })?;

    report_disk(&root, "the last step");
    println!("\nci: all checks passed in {:.0?}", started.elapsed());
    Ok(())
}

/// Set (to `1`) by `.ci/run`: a clean clone keeps no build for later, so [`throw_away`]
/// removes each build once the steps that use it are done. A developer's `cargo xtask ci`
/// keeps them for the next run.
const FREE_DISK_VARIABLE: &str = "XTASK_CI_FREE_DISK";

/// Reports the disk the builds take after `steps`, then removes `build` (a directory under
/// the repository) when [`FREE_DISK_VARIABLE`] asks for it. A CI machine's disk is not ours
/// to size: CI once failed for want of space in its last build.
fn throw_away(root: &Path, build: &str, steps: &str) -> Result<()> {
    report_disk(root, steps);
    if std::env::var_os(FREE_DISK_VARIABLE).is_some_and(|value| value == "1") {
        let dir = root.join(build);
        if dir.exists() {
            std::fs::remove_dir_all(&dir).with_context(|| format!("removing {}", dir.display()))?;
            println!("== removed {build}/: no later step uses it ({FREE_DISK_VARIABLE}=1)");
        }
    }
    Ok(())
}

/// Prints what `target/` and `fuzz/target/` take on disk and what the disk has left.
fn report_disk(root: &Path, steps: &str) {
    let gib = |bytes: u64| format!("{:.1} GiB", bytes as f64 / f64::from(1u32 << 30));
    let free = rustix::fs::statvfs(root).map_or_else(
        |error| format!("unknown ({error})"),
        |stats| gib(stats.f_bavail.saturating_mul(stats.f_frsize)),
    );
    println!(
        "== disk after {steps}: target/ {}, fuzz/target/ {}; {free} free",
        gib(disk_usage(&root.join("target"))),
        gib(disk_usage(&root.join("fuzz/target"))),
    );
}

/// The bytes the files under `path` occupy (allocated blocks, so sparse files count what they
/// use); 0 when it does not exist. Symbolic links are not followed.
fn disk_usage(path: &Path) -> u64 {
    use std::os::unix::fs::MetadataExt;
    let Ok(metadata) = std::fs::symlink_metadata(path) else {
        return 0;
    };
    let own = metadata.blocks().saturating_mul(512);
    if !metadata.is_dir() {
        return own;
    }
    let Ok(entries) = std::fs::read_dir(path) else {
        return own;
    };
    entries
        .flatten()
        .map(|entry| disk_usage(&entry.path()))
        .fold(own, u64::saturating_add)
}

/// Runs the benchmarks; extra arguments go to criterion. Only `spillway-benches` is built:
/// the PoloDB peer (`benches/polodb-peer`, outside the workspace because it compiles RocksDB for
/// about 15 minutes) is run by hand, see docs/benchmarks.md.
pub(crate) fn bench(options: &BenchOptions) -> Result<()> {
    let root = repo_root();
    let mut command = cargo(&root, &["bench", "--package", "spillway-benches"]);
    if !options.criterion.is_empty() {
        command.arg("--").args(&options.criterion);
    }
    step("benchmarks", command)
}

/// `cargo test --workspace` with insta in check mode (a missing or changed snapshot fails its
/// test), then a check that every `.snap` file on disk was referenced by some test.
fn run_tests(root: &Path) -> Result<()> {
    let references =
        std::env::temp_dir().join(format!("spillway-snapshot-refs-{}", std::process::id()));
    let _ = std::fs::remove_file(&references);
    let mut command = cargo(root, &["test", "--workspace"]);
    command
        .env("INSTA_UPDATE", "no")
        .env("INSTA_SNAPSHOT_REFERENCES_FILE", &references);
    step("tests", command)?;
    // The workspace build turns on every feature of spillway-doc (the facade needs them all);
    // its default build, without QuickJS, ICU, geo or stemmers, is tested on its own.
    step(
        "tests of spillway-doc with its default features",
        cargo(root, &["test", "--package", "spillway-doc"]),
    )?;

    let referenced: BTreeSet<PathBuf> = std::fs::read_to_string(&references)
        .unwrap_or_default()
        .lines()
        .map(|line| std::fs::canonicalize(line).unwrap_or_else(|_| PathBuf::from(line)))
        .collect();
    let _ = std::fs::remove_file(&references);
    let mut on_disk = Vec::new();
    find_snapshots(&root.join("crates"), &mut on_disk)?;
    let unreferenced: Vec<_> = on_disk
        .into_iter()
        .filter(|path| !referenced.contains(&std::fs::canonicalize(path).unwrap_or(path.clone())))
        .collect();
    if !unreferenced.is_empty() {
        let list: Vec<_> = unreferenced
            .iter()
            .map(|path| format!("  {}", path.display()))
            .collect();
        bail!(
            "snapshots that no test references (delete them or restore their test):\n{}",
            list.join("\n")
        );
    }
    println!("== snapshots: every .snap file is referenced by a test");
    Ok(())
}

fn find_snapshots(dir: &Path, found: &mut Vec<PathBuf>) -> Result<()> {
    for entry in std::fs::read_dir(dir).with_context(|| format!("reading {}", dir.display()))? {
        let path = entry?.path();
        if path.is_dir() {
            find_snapshots(&path, found)?;
        } else if path.extension().is_some_and(|ext| ext == "snap") {
            found.push(path);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::{cargo, disk_usage, repo_root};

    /// The disk report counts what files occupy, below every directory, and nothing for a
    /// path that is not there.
    #[test]
    fn disk_usage_counts_files_in_subdirectories() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("a/b")).unwrap();
        std::fs::write(dir.path().join("a/b/data"), vec![7u8; 1 << 20]).unwrap();
        let used = disk_usage(dir.path());
        assert!((1 << 20..4 << 20).contains(&used), "{used} bytes");
        assert_eq!(disk_usage(&dir.path().join("missing")), 0);
    }

    /// `cargo xtask bench` and CI must never build the PoloDB peer: it stays out of the
    /// workspace, and the workspace still resolves without it.
    #[test]
    fn polodb_peer_is_outside_the_workspace() {
        let output = cargo(
            &repo_root(),
            &["metadata", "--format-version", "1", "--no-deps"],
        )
        .output()
        .unwrap();
        assert!(
            output.status.success(),
            "cargo metadata failed: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        let metadata: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
        let names: Vec<&str> = metadata["packages"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|package| package["name"].as_str())
            .collect();
        assert!(names.contains(&"spillway-benches"), "packages: {names:?}");
        assert!(!names.contains(&"polodb-peer"), "packages: {names:?}");
    }
}
