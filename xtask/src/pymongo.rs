//! `cargo xtask pymongo`: pymongo's own test files, unmodified, against `spillway serve`, and
//! with `--peer` against SecantusDB in the same run, side by side; with `--proxy` each server
//! again through `spillway serve --upstream` in front of it, as a column of its own.
//!
//! Everything it installs lives under `target/pymongo/`: a virtual environment with pinned
//! pymongo, pytest and pytest-asyncio (reused while the pins are unchanged), a second one for
//! the peer, and the `test/` folder and `pyproject.toml` (which holds pytest's configuration) of
//! the pinned pymongo source distribution. Each test file runs under pytest with a fresh server
//! (`DB_IP`/`DB_PORT` point at it), bounded by a timeout; the counts come from pytest's JUnit
//! XML, never from its text. The table goes to the terminal and to `target/pymongo-report.md`,
//! and the ids of the tests that passed to `target/pymongo/passing-<server>.txt` (what the
//! expected list is filled from).
//!
//! `--ci` runs a bounded subset against spillway and fails only when a test listed in
//! `xtask/pymongo-expected.txt` did not pass; an empty list makes it report without failing.
//!
//! This task must never change a test file, and never reach anything but PyPI (through pip)
//! and the servers it starts on 127.0.0.1.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::fs::File;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail, ensure};
use wait_timeout::ChildExt;

use crate::servers::{RunningServer, ServerKind, ServerProgram, build_spillway};
use crate::shared::{repo_root, target_dir};

/// The pinned pymongo: the driver the tests use, and the source distribution they come from.
pub(crate) const PYMONGO_VERSION: &str = "4.20.1";
/// The pinned pytest (pymongo 4.20's `requirements/test.txt` asks for `pytest>=8.2`).
const PYTEST_VERSION: &str = "9.2.0";
/// The pinned pytest-asyncio (pymongo asks for `>=0.24`; its pytest configuration sets
/// `asyncio_default_fixture_loop_scope`, which needs 0.24 or newer).
const PYTEST_ASYNCIO_VERSION: &str = "1.5.0";
/// The pinned peer. Only pre-releases are published; this is the newest at the time of pinning.
pub(crate) const SECANTUSDB_VERSION: &str = "0.7.0b3";

/// Words by which a test file shows that it talks to a server: the suite's connection to the
/// server under test (`client_context`, `async_client_context`), the test classes that need one
/// (`IntegrationTest`, `AsyncIntegrationTest`) and the specification runners built on them
/// (`unified_format`, `utils_spec_runner`). A file naming none of them is a unit test of the
/// driver (BSON, URI parsing, mocked topologies) and is not run by default.
const SERVER_WORDS: &[&str] = &[
    "client_context",
    "IntegrationTest",
    "unified_format",
    "utils_spec_runner",
];

/// Module-wide markers (`pytestmark = pytest.mark.X`) that keep a file out of the default list,
/// each with why: the suite's own `-m "default or default_async"` filter deselects every test of
/// such a file, and each needs something this harness never has.
const LEFT_OUT_MARKERS: &[(&str, &str)] = &[
    (
        "auth",
        "needs servers started with --auth and a provisioned user: `--auth` runs these files",
    ),
    (
        "auth_oidc",
        "needs an OIDC identity provider (Atlas, Azure, GCP, Kubernetes)",
    ),
    (
        "encryption",
        "needs client-side field-level encryption: pymongocrypt, mongocryptd or crypt_shared, and KMS providers",
    ),
    (
        "kms",
        "needs cloud key management services (AWS, Azure, GCP)",
    ),
    (
        "load_balancer",
        "needs a sharded cluster behind a load balancer",
    ),
    (
        "mockupdb",
        "needs the mockupdb package (a scripted fake server, no real one)",
    ),
    (
        "search_index",
        "needs Atlas Search indexes (an Atlas cluster)",
    ),
];

/// What the default list does with one test file of the suite.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Selection {
    /// It talks to a server and runs under the suite's default markers.
    Runs,
    /// It names none of [`SERVER_WORDS`]: a unit test of the driver.
    NoServer,
    /// It is marked, module-wide, with this marker of [`LEFT_OUT_MARKERS`].
    LeftOut(&'static str),
}

/// The selection rule for one test file, from its source text: a file that does not talk to
/// a server is [`Selection::NoServer`] whatever its markers.
fn select(source: &str) -> Selection {
    if !SERVER_WORDS.iter().any(|word| source.contains(word)) {
        return Selection::NoServer;
    }
    for line in source.lines() {
        let Some(value) = line.strip_prefix("pytestmark") else {
            continue;
        };
        for (marker, _) in LEFT_OUT_MARKERS {
            let named = value
                .match_indices(&format!("pytest.mark.{marker}"))
                .any(|(at, found)| {
                    // `pytest.mark.auth` must not match `pytest.mark.auth_oidc`.
                    !value[at + found.len()..]
                        .starts_with(|c: char| c.is_alphanumeric() || c == '_')
                });
            if named {
                return Selection::LeftOut(marker);
            }
        }
    }
    Selection::Runs
}

/// The files of the default list, and those left out with the marker that left them out.
type Discovered = (Vec<String>, Vec<(String, &'static str)>);

/// The default list: every `test_*.py` of the suite's `test/` and `test/asynchronous/` that
/// [`select`] runs, sorted (sync first), discovered from the unpacked suite so that it follows
/// the pinned version. Also returns the files left out by a marker, with the marker.
fn discover_files(tests: &Path) -> Result<Discovered> {
    let mut runs = Vec::new();
    let mut left_out = Vec::new();
    for folder in ["", "asynchronous/"] {
        let dir = tests.join(folder);
        let mut names = Vec::new();
        for entry in
            std::fs::read_dir(&dir).with_context(|| format!("listing {}", dir.display()))?
        {
            let name = entry
                .with_context(|| format!("listing {}", dir.display()))?
                .file_name()
                .to_string_lossy()
                .into_owned();
            if name.starts_with("test_")
                && Path::new(&name).extension() == Some(std::ffi::OsStr::new("py"))
            {
                names.push(name);
            }
        }
        names.sort();
        for name in names {
            let path = dir.join(&name);
            let source = std::fs::read_to_string(&path)
                .with_context(|| format!("reading {}", path.display()))?;
            let file = format!("{folder}{name}");
            match select(&source) {
                Selection::Runs => runs.push(file),
                Selection::NoServer => {}
                Selection::LeftOut(marker) => left_out.push((file, marker)),
            }
        }
    }
    ensure!(
        !runs.is_empty(),
        "no test file in {} talks to a server (is the suite unpacked?)",
        tests.display()
    );
    Ok((runs, left_out))
}

/// `--ci`'s files: about three minutes against SecantusDB on a 2-core machine (measured per
/// file: test_crud_unified 55 s, test_retryable_writes_unified 40 s, test_collection 31 s,
/// test_session 24 s, test_database 16 s, test_cursor 12 s, test_collection_management 6 s,
/// test_crud_v1 2 s). Left out: test_bulk (its `test_numerous_inserts` alone took 212 s on the
/// peer), test_transactions_unified (176 s), test_client (its handshake-metadata and DNS tests
/// depend on the machine, not the server) and test_index_management (Atlas Search indexes
/// only: every test is deselected by the suite's `-m default` marker filter).
const CI_FILES: &[&str] = &[
    "test_crud_unified.py",
    "test_crud_v1.py",
    "test_collection.py",
    "test_cursor.py",
    "test_database.py",
    "test_session.py",
    "test_retryable_writes_unified.py",
    "test_collection_management.py",
];

/// `--auth`'s files: those whose tests are marked `auth` (pymongo's `pytestmark`).
const AUTH_FILES: &[&str] = &[
    "test_auth.py",
    "test_auth_spec.py",
    "asynchronous/test_auth.py",
    "asynchronous/test_auth_spec.py",
];

/// The user `--auth` runs the suite as (the suite creates it as `root` by the localhost
/// exception when it cannot log in with it).
const AUTH_USER: &str = "user";
/// Its password.
const AUTH_PASSWORD: &str = "password";

/// How long one test file may run, unless `--timeout` says otherwise.
const DEFAULT_FILE_TIMEOUT: Duration = Duration::from_secs(20 * 60);
/// The same under `--ci`, where a hung file must not hold CI for long.
const CI_FILE_TIMEOUT: Duration = Duration::from_secs(5 * 60);

/// The checked-in list of tests that must pass under `--ci`, relative to the repository.
const EXPECTED_LIST: &str = "xtask/pymongo-expected.txt";

/// `cargo xtask pymongo [--peer] [--peer-only] [--auth] [--files a.py,b.py] [--ci]
/// [--timeout SECS]`.
#[derive(clap::Args, Default)]
pub(crate) struct Options {
    /// Run SecantusDB beside spillway serve
    #[arg(long)]
    pub(crate) peer: bool,
    /// Run SecantusDB alone (checks the harness)
    #[arg(long)]
    pub(crate) peer_only: bool,
    /// Servers started with authentication required, and pytest run with `-m auth` (the
    /// suite's tests of authentication) and the user it creates (`DB_USER`, `DB_PASSWORD`)
    #[arg(long)]
    pub(crate) auth: bool,
    /// The test files to run, relative to pymongo's test/ (a comma-separated list) [default:
    /// every test file that talks to a server, sync and asynchronous/, less those whose
    /// module-wide marker needs what this harness never has; the auth files with --auth; CI's
    /// subset with --ci]
    #[arg(long, value_name = "a.py,b.py", value_delimiter = ',')]
    pub(crate) files: Vec<String>,
    /// A bounded subset against spillway, failing only on tests listed in
    /// xtask/pymongo-expected.txt (checks spillway, so not with --peer-only; checks the list
    /// without authentication, so not with --auth)
    #[arg(long, conflicts_with_all = ["peer_only", "auth"])]
    pub(crate) ci: bool,
    /// Run each server through `spillway serve --upstream` too, as a column of its own
    #[arg(long, conflicts_with = "peer_only")]
    pub(crate) proxy: bool,
    /// Seconds one test file may run [default: 1200; 300 with --ci]
    #[arg(long, value_name = "SECS")]
    pub(crate) timeout: Option<u64>,
}

impl Options {
    /// The files to run: those named (blanks dropped), or the default set for the options
    /// (with no option, every file of the suite at `tests` that [`select`] runs, said on the
    /// terminal with the files left out and why).
    fn files(&self, tests: &Path) -> Result<Vec<String>> {
        let named: Vec<String> = self
            .files
            .iter()
            .map(|name| name.trim())
            .filter(|name| !name.is_empty())
            .map(str::to_string)
            .collect();
        if !named.is_empty() {
            return Ok(named);
        }
        let fixed = if self.auth {
            AUTH_FILES
        } else if self.ci {
            CI_FILES
        } else {
            let (runs, left_out) = discover_files(tests)?;
            println!(
                "\n== {} test files talk to a server; left out by their module-wide marker:",
                runs.len()
            );
            for (file, marker) in left_out {
                let why = LEFT_OUT_MARKERS
                    .iter()
                    .find(|(name, _)| *name == marker)
                    .map_or("", |(_, why)| why);
                println!("   {file} ({marker}: {why})");
            }
            return Ok(runs);
        };
        Ok(fixed.iter().map(|name| (*name).to_string()).collect())
    }

    /// The options as they would be typed, for the report.
    fn command_line(&self) -> String {
        let mut words = Vec::new();
        for (given, flag) in [
            (self.peer, "--peer"),
            (self.peer_only, "--peer-only"),
            (self.auth, "--auth"),
            (self.ci, "--ci"),
            (self.proxy, "--proxy"),
        ] {
            if given {
                words.push(flag.to_string());
            }
        }
        if !self.files.is_empty() {
            words.push(format!("--files {}", self.files.join(",")));
        }
        if let Some(seconds) = self.timeout {
            words.push(format!("--timeout {seconds}"));
        }
        words.join(" ")
    }
}

/// Runs the task; see the module documentation.
pub(crate) fn run(options: &Options) -> Result<()> {
    let work = target_dir().join("pymongo");
    std::fs::create_dir_all(&work).with_context(|| format!("creating {}", work.display()))?;

    let timeout = options.timeout.map_or(
        if options.ci {
            CI_FILE_TIMEOUT
        } else {
            DEFAULT_FILE_TIMEOUT
        },
        Duration::from_secs,
    );
    let mut programs = Vec::new();
    if !options.peer_only {
        let spillway = build_spillway()?;
        if options.ci && !spillway_serves(&spillway) {
            // CI runs this task on every branch; until the wire server lands there is nothing
            // to run the tests against, and that is said rather than failed.
            println!(
                "SKIPPED: this build of spillway has no `serve` subcommand, so pymongo's tests did not run"
            );
            return Ok(());
        }
        programs.push(ServerProgram {
            auth: options.auth,
            ..private_copy(&spillway, &work)?
        });
    }
    let python = find_python()?;
    let venv = client_venv(&python, &work)?;
    let suite = ensure_suite(&venv, &work)?;
    let files = options.files(&suite.join("test"))?;
    for file in &files {
        ensure!(
            suite.join("test").join(file).is_file(),
            "{file} is not in test/ of pymongo {PYMONGO_VERSION}'s source distribution ({})",
            suite.join("test").display()
        );
    }

    if options.peer || options.peer_only {
        programs.push(ServerProgram {
            auth: options.auth,
            ..secantus_program(&python, &work)?
        });
    }

    if options.proxy {
        let spillway = programs
            .iter()
            .find(|program| program.kind == ServerKind::Spillway)
            .map(|program| program.executable.clone())
            .context("--proxy needs spillway's build")?;
        let proxied: Vec<ServerProgram> = programs
            .iter()
            .map(|program| ServerProgram {
                through_proxy: Some(spillway.clone()),
                ..program.clone()
            })
            .collect();
        programs.extend(proxied);
    }

    let started = Instant::now();
    let mut rows = Vec::new();
    for file in &files {
        let mut outcomes = Vec::new();
        for program in &programs {
            // The line starts before the file runs, so a long file shows what is running.
            print!("{:<40} {:<16} ", file, program.label());
            let _ = std::io::stdout().flush();
            let outcome = run_file(program, &venv, &suite, &work, file, timeout);
            println!("{}", outcome.summary());
            outcomes.push(outcome);
        }
        rows.push((file.clone(), outcomes));
    }

    let table = render_table(&programs, &rows);
    println!("\n{table}");
    let report = target_dir().join("pymongo-report.md");
    let mut text = format!(
        "# pymongo's tests against the servers\n\npymongo {PYMONGO_VERSION}, pytest {PYTEST_VERSION}, pytest-asyncio {PYTEST_ASYNCIO_VERSION}, SecantusDB {SECANTUSDB_VERSION}; `cargo xtask pymongo {}` ({:.0?}).\nEach cell: passed / failed / skipped / errors (seconds).\n\n",
        options.command_line(),
        started.elapsed()
    );
    text.push_str(&table);
    std::fs::write(&report, text).with_context(|| format!("writing {}", report.display()))?;
    println!("report written to {}", report.display());

    for (index, program) in programs.iter().enumerate() {
        let passing: BTreeSet<&str> = rows
            .iter()
            .flat_map(|(_, outcomes)| outcomes[index].tests.iter())
            .filter(|(_, result)| **result == TestResult::Passed)
            .map(|(id, _)| id.as_str())
            .collect();
        let path = work.join(format!("passing-{}.txt", program.label()));
        let mut list = String::new();
        for id in passing {
            list.push_str(id);
            list.push('\n');
        }
        std::fs::write(&path, list).with_context(|| format!("writing {}", path.display()))?;
    }

    // The plain closing lines: the peer's first, spillway's (the one CI reads) last.
    for (index, program) in programs.iter().enumerate().rev() {
        let total = rows
            .iter()
            .map(|(_, outcomes)| &outcomes[index].counts)
            .fold(Counts::default(), Counts::plus);
        let name = match (program.kind, &program.through_proxy) {
            (ServerKind::Spillway, None) => "pymongo".to_string(),
            _ => format!("pymongo ({})", program.label()),
        };
        println!(
            "{name}: {} passed, {} failed, {} skipped",
            total.passed,
            total.failed + total.errors,
            total.skipped
        );
    }

    if options.ci {
        let spillway = programs
            .iter()
            .position(|program| {
                program.kind == ServerKind::Spillway && program.through_proxy.is_none()
            })
            .expect("--ci always runs spillway");
        check_expected(&files, &rows, spillway)?;
    }
    Ok(())
}

/// The program with its executable copied to `work/bin/`, so that every file of a long run
/// uses the build made at its start, even when another build writes the shared target
/// directory's `release/spillway` meanwhile. Copies left by earlier runs are removed (a running
/// one keeps working: only its name goes).
fn private_copy(program: &ServerProgram, work: &Path) -> Result<ServerProgram> {
    let dir = work.join("bin");
    if dir.exists() {
        std::fs::remove_dir_all(&dir).with_context(|| format!("removing {}", dir.display()))?;
    }
    std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    let copy = dir.join(format!("spillway-{}", std::process::id()));
    std::fs::copy(&program.executable, &copy).with_context(|| {
        format!(
            "copying {} to {}",
            program.executable.display(),
            copy.display()
        )
    })?;
    Ok(ServerProgram {
        executable: copy,
        ..program.clone()
    })
}

/// Whether `spillway serve --help` works (the subcommand exists in this build).
fn spillway_serves(program: &ServerProgram) -> bool {
    Command::new(&program.executable)
        .args(["serve", "--help"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|status| status.success())
}

/// `python3`, checked for the `venv` module; the error says what to install.
fn find_python() -> Result<PathBuf> {
    let python = PathBuf::from("python3");
    let probe = Command::new(&python)
        .args([
            "-c",
            "import venv, ensurepip, sys; print(sys.version_info >= (3, 9))",
        ])
        .output();
    match probe {
        Err(_) => bail!(
            "python3 is not installed: the pymongo task needs Python 3.9 or newer with venv \
             (Debian/Ubuntu: apt-get install python3 python3-venv)"
        ),
        Ok(output) if !output.status.success() => bail!(
            "python3 has no working venv module: install it (Debian/Ubuntu: apt-get install \
             python3-venv)\n{}",
            String::from_utf8_lossy(&output.stderr)
        ),
        Ok(output) if String::from_utf8_lossy(&output.stdout).trim() != "True" => {
            bail!("python3 is older than 3.9: pymongo {PYMONGO_VERSION} needs 3.9 or newer")
        }
        Ok(_) => Ok(python),
    }
}

/// A virtual environment at `dir` holding exactly `requirements` (pinned), created or
/// recreated when its recorded pins differ. Returns its Python interpreter.
fn ensure_venv(python: &Path, dir: &Path, requirements: &[String]) -> Result<PathBuf> {
    let interpreter = dir.join("bin").join("python");
    let stamp = dir.join("spillway-pins.txt");
    let wanted = requirements.join("\n");
    if interpreter.is_file() && std::fs::read_to_string(&stamp).is_ok_and(|pins| pins == wanted) {
        return Ok(interpreter);
    }
    if dir.exists() {
        std::fs::remove_dir_all(dir).with_context(|| format!("removing {}", dir.display()))?;
    }
    println!(
        "\n== virtual environment {}: {}",
        dir.display(),
        requirements.join(" ")
    );
    run_checked(
        Command::new(python).arg("-m").arg("venv").arg(dir),
        "python3 -m venv",
    )?;
    run_checked(
        Command::new(&interpreter)
            .args([
                "-m",
                "pip",
                "install",
                "--quiet",
                "--disable-pip-version-check",
            ])
            .args(requirements),
        "pip install",
    )?;
    std::fs::write(&stamp, wanted).with_context(|| format!("writing {}", stamp.display()))?;
    Ok(interpreter)
}

/// The interpreter of the pymongo virtual environment in `work` (created when missing): the
/// one the test files run in, and the one the load, crash and speed scripts run in.
fn client_venv(python: &Path, work: &Path) -> Result<PathBuf> {
    ensure_venv(
        python,
        &work.join("venv"),
        &[
            format!("pymongo=={PYMONGO_VERSION}"),
            format!("pytest=={PYTEST_VERSION}"),
            format!("pytest-asyncio=={PYTEST_ASYNCIO_VERSION}"),
        ],
    )
}

/// The pymongo interpreter for another task (`serve-load`, `serve-crash`, `serve-bench`):
/// checks Python and builds the environment that `cargo xtask pymongo` uses.
pub(crate) fn client_python_for_other_task() -> Result<PathBuf> {
    let work = target_dir().join("pymongo");
    std::fs::create_dir_all(&work).with_context(|| format!("creating {}", work.display()))?;
    client_venv(&find_python()?, &work)
}

/// The peer's program, from its own virtual environment (so that its dependencies never change
/// what the tests see).
pub(crate) fn secantus_program(python: &Path, work: &Path) -> Result<ServerProgram> {
    let interpreter = ensure_venv(
        python,
        &work.join("peer-venv"),
        &[
            format!("secantusdb=={SECANTUSDB_VERSION}"),
            format!("pymongo=={PYMONGO_VERSION}"),
        ],
    )?;
    let executable = interpreter.with_file_name("secantusd-py");
    ensure!(
        executable.is_file(),
        "secantusdb {SECANTUSDB_VERSION} installed no secantusd-py at {}",
        executable.display()
    );
    Ok(ServerProgram {
        kind: ServerKind::Secantus,
        executable,
        auth: false,
        through_proxy: None,
    })
}

/// The peer's program for another task (mongosh): checks Python and builds the environment.
pub(crate) fn secantus_for_other_task() -> Result<ServerProgram> {
    let work = target_dir().join("pymongo");
    std::fs::create_dir_all(&work).with_context(|| format!("creating {}", work.display()))?;
    secantus_program(&find_python()?, &work)
}

/// `test/` and `pyproject.toml` of the pinned source distribution, unpacked once into
/// `target/pymongo/suite-<version>`.
fn ensure_suite(venv: &Path, work: &Path) -> Result<PathBuf> {
    let suite = work.join(format!("suite-{PYMONGO_VERSION}"));
    if suite.join("test").join("__init__.py").is_file() && suite.join("pyproject.toml").is_file() {
        return Ok(suite);
    }
    let sdist_dir = work.join("sdist");
    let archive = sdist_dir.join(format!("pymongo-{PYMONGO_VERSION}.tar.gz"));
    if !archive.is_file() {
        println!("\n== download the pymongo {PYMONGO_VERSION} source distribution");
        run_checked(
            Command::new(venv)
                .args([
                    "-m",
                    "pip",
                    "download",
                    "--quiet",
                    "--disable-pip-version-check",
                    "--no-deps",
                    "--no-binary",
                    ":all:",
                    &format!("pymongo=={PYMONGO_VERSION}"),
                    "--dest",
                ])
                .arg(&sdist_dir),
            "pip download",
        )?;
        ensure!(
            archive.is_file(),
            "pip download left no {} behind",
            archive.display()
        );
    }
    let unpack = work.join("suite-unpacking");
    if unpack.exists() {
        std::fs::remove_dir_all(&unpack)
            .with_context(|| format!("removing {}", unpack.display()))?;
    }
    std::fs::create_dir_all(&unpack).with_context(|| format!("creating {}", unpack.display()))?;
    let top = format!("pymongo-{PYMONGO_VERSION}");
    run_checked(
        Command::new("tar")
            .arg("-xzf")
            .arg(&archive)
            .arg("-C")
            .arg(&unpack)
            .arg(format!("{top}/test"))
            .arg(format!("{top}/pyproject.toml")),
        "tar",
    )?;
    if suite.exists() {
        std::fs::remove_dir_all(&suite).with_context(|| format!("removing {}", suite.display()))?;
    }
    std::fs::rename(unpack.join(&top), &suite)
        .with_context(|| format!("moving the unpacked suite to {}", suite.display()))?;
    let _ = std::fs::remove_dir_all(&unpack);
    Ok(suite)
}

fn run_checked(command: &mut Command, what: &str) -> Result<()> {
    let status = command
        .status()
        .with_context(|| format!("could not start {what}"))?;
    ensure!(status.success(), "{what} failed ({status})");
    Ok(())
}

/// One test's result, from its JUnit `testcase` element.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum TestResult {
    Passed,
    Failed,
    Skipped,
    Error,
}

impl TestResult {
    fn describe(self) -> &'static str {
        match self {
            TestResult::Passed => "passed",
            TestResult::Failed => "failed",
            TestResult::Skipped => "skipped",
            TestResult::Error => "errored",
        }
    }
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Counts {
    passed: usize,
    failed: usize,
    skipped: usize,
    errors: usize,
}

impl Counts {
    fn plus(self, other: &Counts) -> Counts {
        Counts {
            passed: self.passed + other.passed,
            failed: self.failed + other.failed,
            skipped: self.skipped + other.skipped,
            errors: self.errors + other.errors,
        }
    }
}

/// One test file against one server.
struct FileOutcome {
    counts: Counts,
    /// Test id (`file::Class::test`) to result.
    tests: BTreeMap<String, TestResult>,
    seconds: f64,
    /// What went wrong beyond the tests themselves (server did not start, timeout, no report).
    problem: Option<String>,
}

impl FileOutcome {
    fn summary(&self) -> String {
        let mut line = format!(
            "{} passed, {} failed, {} skipped, {} errors ({:.0} s)",
            self.counts.passed,
            self.counts.failed,
            self.counts.skipped,
            self.counts.errors,
            self.seconds
        );
        if let Some(problem) = &self.problem {
            let _ = write!(line, ": {problem}");
        }
        line
    }

    fn failed_to_run(problem: String, seconds: f64) -> Self {
        FileOutcome {
            // A file that could not run is one error, so that totals never look clean.
            counts: Counts {
                errors: 1,
                ..Counts::default()
            },
            tests: BTreeMap::new(),
            seconds,
            problem: Some(problem),
        }
    }
}

/// Runs one test file with pytest against a fresh server.
fn run_file(
    program: &ServerProgram,
    venv: &Path,
    suite: &Path,
    work: &Path,
    file: &str,
    timeout: Duration,
) -> FileOutcome {
    let started = Instant::now();
    let stem = file.replace('/', "__");
    let label = program.label();
    let logs = work.join("logs").join(&label);
    let server_log = logs.join(format!("{stem}.server.log"));
    let pytest_log = logs.join(format!("{stem}.pytest.log"));
    let junit = work.join("junit").join(label).join(format!("{stem}.xml"));

    let data_dir = match program
        .auth
        .then(provision_suite_user(program, venv, &logs, &stem))
    {
        Some(Ok(dir)) => Some(dir),
        Some(Err(error)) => {
            return FileOutcome::failed_to_run(
                format!("creating the suite's user failed: {error:#}"),
                started.elapsed().as_secs_f64(),
            );
        }
        None => None,
    };
    let started_server = match &data_dir {
        Some(dir) => RunningServer::start_in(program, dir.path(), &server_log),
        None => RunningServer::start(program, &server_log),
    };
    let mut server = match started_server {
        Ok(server) => server,
        Err(error) => {
            return FileOutcome::failed_to_run(
                format!("the server did not start: {error:#}"),
                started.elapsed().as_secs_f64(),
            );
        }
    };
    let mut proxy = match &program.through_proxy {
        Some(spillway) => {
            match RunningServer::start_proxy(
                spillway,
                server.port(),
                &logs.join(format!("{stem}.proxy.log")),
            ) {
                Ok(proxy) => Some(proxy),
                Err(error) => {
                    return FileOutcome::failed_to_run(
                        format!("the proxy did not start: {error:#}"),
                        started.elapsed().as_secs_f64(),
                    );
                }
            }
        }
        None => None,
    };
    let port = proxy.as_ref().map_or(server.port(), RunningServer::port);
    let outcome = run_pytest(
        venv,
        suite,
        file,
        port,
        program.auth,
        &junit,
        &pytest_log,
        timeout,
    );
    let seconds = started.elapsed().as_secs_f64();
    let crashed = !server.is_running() || proxy.as_mut().is_some_and(|proxy| !proxy.is_running());
    drop(proxy);
    drop(server);
    match outcome {
        Ok(tests) => {
            let mut counts = Counts::default();
            for result in tests.values() {
                match result {
                    TestResult::Passed => counts.passed += 1,
                    TestResult::Failed => counts.failed += 1,
                    TestResult::Skipped => counts.skipped += 1,
                    TestResult::Error => counts.errors += 1,
                }
            }
            let problem = crashed.then(|| {
                format!(
                    "the server exited during the run (see {})",
                    server_log.display()
                )
            });
            FileOutcome {
                counts,
                tests,
                seconds,
                problem,
            }
        }
        Err(error) => FileOutcome::failed_to_run(format!("{error:#}"), seconds),
    }
}

/// A data directory holding the user the suite logs in as (`DB_USER`, `root`), created with
/// pymongo on the server started without authentication, the way both servers document
/// provisioning (SecantusDB has no localhost exception); the server under test then restarts
/// on it with `--auth`.
fn provision_suite_user(
    program: &ServerProgram,
    venv: &Path,
    logs: &Path,
    stem: &str,
) -> impl FnOnce() -> Result<tempfile::TempDir> {
    let program = ServerProgram {
        auth: false,
        ..program.clone()
    };
    let venv = venv.to_path_buf();
    let log = logs.join(format!("{stem}.provision.log"));
    move || {
        let dir = tempfile::Builder::new()
            .prefix("pymongo-auth-")
            .tempdir()
            .context("creating a data directory")?;
        let server = RunningServer::start_in(&program, dir.path(), &log)?;
        create_suite_user(&venv, server.port())?;
        server.stop_gracefully()?;
        Ok(dir)
    }
}

/// Creates the user the suite logs in as on a server at `port`, with pymongo itself.
fn create_suite_user(venv: &Path, port: u16) -> Result<()> {
    let script = format!(
        "from pymongo import MongoClient\n\
         client = MongoClient('127.0.0.1', {port}, serverSelectionTimeoutMS=10000, directConnection=True)\n\
         client.admin.command('createUser', '{AUTH_USER}', pwd='{AUTH_PASSWORD}', roles=['root'])\n"
    );
    run_checked(
        Command::new(venv).args(["-c", &script]),
        "createUser through pymongo",
    )
}

/// pytest on one file from the suite's root (the tests import `test.*`, and pytest reads its
/// configuration from `pyproject.toml` there); returns the per-test results from JUnit XML.
#[expect(
    clippy::too_many_arguments,
    reason = "one pytest run's settings, each used once"
)]
fn run_pytest(
    venv: &Path,
    suite: &Path,
    file: &str,
    port: u16,
    auth: bool,
    junit: &Path,
    log: &Path,
    timeout: Duration,
) -> Result<BTreeMap<String, TestResult>> {
    for path in [junit, log] {
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)
                .with_context(|| format!("creating {}", parent.display()))?;
        }
    }
    let _ = std::fs::remove_file(junit);
    let log_file = File::create(log).with_context(|| format!("creating {}", log.display()))?;
    let mut pytest = Command::new(venv);
    if auth {
        // The last `-m` wins over the suite's own `-m default or default_async`.
        pytest
            .args(["-m", "pytest", "-m", "auth"])
            .env("DB_USER", AUTH_USER)
            .env("DB_PASSWORD", AUTH_PASSWORD);
    } else {
        pytest.args(["-m", "pytest"]);
    }
    let mut child = pytest
        .current_dir(suite)
        .arg(format!("test/{file}"))
        .arg(format!("--junitxml={}", junit.display()))
        // The suite's own configuration writes a cache under the suite: keep the tree pristine.
        .args(["-p", "no:cacheprovider", "-q"])
        .env("DB_IP", "127.0.0.1")
        .env("DB_PORT", port.to_string())
        .env_remove("PYTHONPATH")
        .stdin(Stdio::null())
        .stdout(log_file.try_clone().context("sharing the pytest log")?)
        .stderr(log_file)
        .spawn()
        .context("starting pytest")?;
    if child
        .wait_timeout(timeout)
        .context("waiting for pytest")?
        .is_none()
    {
        let _ = child.kill();
        let _ = child.wait();
        bail!(
            "timed out after {} s (pytest's output: {})",
            timeout.as_secs(),
            log.display()
        );
    }
    let xml = std::fs::read_to_string(junit).with_context(|| {
        format!(
            "pytest wrote no JUnit report (its output: {})",
            log.display()
        )
    })?;
    parse_junit(&xml, file)
}

/// The results in a pytest JUnit report, by test id `file::Class::test` (or `file::test`).
fn parse_junit(xml: &str, file: &str) -> Result<BTreeMap<String, TestResult>> {
    let document = roxmltree::Document::parse(xml).context("parsing pytest's JUnit XML")?;
    let module = format!("test.{}", file.trim_end_matches(".py").replace('/', "."));
    let mut tests = BTreeMap::new();
    for case in document
        .descendants()
        .filter(|node| node.has_tag_name("testcase"))
    {
        let classname = case.attribute("classname").unwrap_or_default();
        let name = case.attribute("name").unwrap_or_default();
        if name.is_empty() {
            // pytest 9 reports some `subTest` blocks as a bare `<testcase time="0.000"/>`; its
            // own summary counts them apart ("N subtests passed"), and so does this.
            continue;
        }
        let mut id = file.to_string();
        if let Some(class) = classname
            .strip_prefix(&module)
            .and_then(|rest| rest.strip_prefix('.'))
        {
            id.push_str("::");
            id.push_str(&class.replace('.', "::"));
        }
        id.push_str("::");
        id.push_str(name);
        let children: Vec<&str> = case
            .children()
            .filter(roxmltree::Node::is_element)
            .map(|child| child.tag_name().name())
            .collect();
        let result = if children.contains(&"failure") {
            TestResult::Failed
        } else if children.contains(&"error") {
            TestResult::Error
        } else if children.contains(&"skipped") {
            TestResult::Skipped
        } else {
            TestResult::Passed
        };
        // A test reported twice (a teardown error after its call) keeps its worse result.
        tests
            .entry(id)
            .and_modify(|previous: &mut TestResult| {
                if *previous == TestResult::Passed {
                    *previous = result;
                }
            })
            .or_insert(result);
    }
    Ok(tests)
}

fn render_table(programs: &[ServerProgram], rows: &[(String, Vec<FileOutcome>)]) -> String {
    let mut table = String::from("| file |");
    for program in programs {
        let _ = write!(
            table,
            " {}: passed / failed / skipped / errors |",
            program.label()
        );
    }
    table.push_str("\n|---|");
    for _ in programs {
        table.push_str("---|");
    }
    table.push('\n');
    let mut totals = vec![Counts::default(); programs.len()];
    let mut seconds = vec![0.0; programs.len()];
    for (file, outcomes) in rows {
        let _ = write!(table, "| {file} |");
        for (index, outcome) in outcomes.iter().enumerate() {
            totals[index] = totals[index].plus(&outcome.counts);
            seconds[index] += outcome.seconds;
            let _ = write!(
                table,
                " {} ({:.0} s){} |",
                cell(&outcome.counts),
                outcome.seconds,
                outcome
                    .problem
                    .as_ref()
                    .map(|problem| format!(": {}", problem.lines().next().unwrap_or_default()))
                    .unwrap_or_default()
            );
        }
        table.push('\n');
    }
    table.push_str("| **total** |");
    for (counts, seconds) in totals.iter().zip(&seconds) {
        let _ = write!(table, " **{}** ({seconds:.0} s) |", cell(counts));
    }
    table.push('\n');
    table
}

fn cell(counts: &Counts) -> String {
    format!(
        "{} / {} / {} / {}",
        counts.passed, counts.failed, counts.skipped, counts.errors
    )
}

/// `--ci`: every listed test of the files that ran must have passed against spillway.
fn check_expected(
    files: &[String],
    rows: &[(String, Vec<FileOutcome>)],
    index: usize,
) -> Result<()> {
    let path = repo_root().join(EXPECTED_LIST);
    let text = match std::fs::read_to_string(&path) {
        Ok(text) => text,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(error) => return Err(error).with_context(|| format!("reading {}", path.display())),
    };
    let expected = expected_ids(&text);
    if expected.is_empty() {
        println!(
            "pymongo --ci: {EXPECTED_LIST} lists no tests yet, so nothing is required to pass \
             (fill it from target/pymongo/passing-spillway.txt)"
        );
        return Ok(());
    }
    let results: BTreeMap<&str, TestResult> = rows
        .iter()
        .flat_map(|(_, outcomes)| outcomes[index].tests.iter())
        .map(|(id, result)| (id.as_str(), *result))
        .collect();
    let mut checked = 0;
    let mut not_passing = Vec::new();
    for id in &expected {
        let file = id.split("::").next().unwrap_or_default();
        if !files.iter().any(|run| run == file) {
            continue;
        }
        checked += 1;
        match results.get(id.as_str()) {
            Some(TestResult::Passed) => {}
            Some(result) => not_passing.push(format!("  {id}: {}", result.describe())),
            None => not_passing.push(format!("  {id}: did not run")),
        }
    }
    if !not_passing.is_empty() {
        bail!(
            "{} of the {checked} tests {EXPECTED_LIST} expects to pass (in the files run) did not:\n{}",
            not_passing.len(),
            not_passing.join("\n")
        );
    }
    println!(
        "pymongo --ci: all {checked} tests that {EXPECTED_LIST} expects to pass (in the files run) passed"
    );
    Ok(())
}

/// The test ids of the expected list: one per line; `#` at the start of a line or after a
/// space starts a comment (test ids may contain `#` themselves).
fn expected_ids(text: &str) -> Vec<String> {
    text.lines()
        .map(|line| {
            let line = line.trim();
            if line.starts_with('#') {
                ""
            } else {
                line.split(" #").next().unwrap_or_default().trim()
            }
        })
        .filter(|line| !line.is_empty())
        .map(str::to_string)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::{Selection, TestResult, discover_files, expected_ids, parse_junit, select};

    #[test]
    fn files_that_use_the_suites_server_run_and_unit_tests_do_not() {
        let integration = "from test import IntegrationTest, client_context\n\nclass TestBulk(IntegrationTest):\n    pass\n";
        let unified = "from test.asynchronous.unified_format import generate_test_classes\n";
        let spec = "from test.utils_spec_runner import SpecRunner\n";
        let unit =
            "from bson import ObjectId\n\nclass TestObjectId(unittest.TestCase):\n    pass\n";
        // A marker for what the harness lacks does not make a unit test a server test.
        let marked_unit = "import pytest\npytestmark = pytest.mark.ocsp\n";
        assert_eq!(select(integration), Selection::Runs);
        assert_eq!(select(unified), Selection::Runs);
        assert_eq!(select(spec), Selection::Runs);
        assert_eq!(select(unit), Selection::NoServer);
        assert_eq!(select(marked_unit), Selection::NoServer);
    }

    #[test]
    fn a_module_wide_marker_for_what_the_harness_lacks_leaves_a_file_out() {
        let encryption = "from test import client_context\n\npytestmark = [pytest.mark.encryption, pytest.mark.asyncio]\n";
        let oidc = "from test import client_context\npytestmark = pytest.mark.auth_oidc\n";
        let auth = "from test import IntegrationTest\npytestmark = pytest.mark.auth\n";
        // The asyncio marker alone changes nothing, and a marker on one test is not the module's.
        let asyncio = "from test import client_context\npytestmark = pytest.mark.asyncio\n\n@pytest.mark.auth\ndef test_x(): pass\n";
        assert_eq!(select(encryption), Selection::LeftOut("encryption"));
        assert_eq!(select(oidc), Selection::LeftOut("auth_oidc"));
        assert_eq!(select(auth), Selection::LeftOut("auth"));
        assert_eq!(select(asyncio), Selection::Runs);
    }

    #[test]
    fn discovery_lists_sync_then_asynchronous_files_and_the_ones_left_out() {
        let dir = tempfile::tempdir().unwrap();
        let tests = dir.path();
        std::fs::create_dir(tests.join("asynchronous")).unwrap();
        for (name, source) in [
            ("test_cursor.py", "from test import client_context\n"),
            ("test_bson.py", "import bson\n"),
            ("test_bulk.py", "from test import IntegrationTest\n"),
            ("helpers.py", "from test import client_context\n"),
            (
                "test_load_balancer.py",
                "from test import client_context\npytestmark = pytest.mark.load_balancer\n",
            ),
            (
                "asynchronous/test_bulk.py",
                "from test.asynchronous import AsyncIntegrationTest\n",
            ),
        ] {
            std::fs::write(tests.join(name), source).unwrap();
        }
        let (runs, left_out) = discover_files(tests).unwrap();
        assert_eq!(
            runs,
            [
                "test_bulk.py",
                "test_cursor.py",
                "asynchronous/test_bulk.py"
            ]
        );
        assert_eq!(
            left_out,
            [("test_load_balancer.py".to_string(), "load_balancer")]
        );
    }

    #[test]
    fn discovery_in_a_folder_without_server_tests_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("asynchronous")).unwrap();
        std::fs::write(dir.path().join("test_bson.py"), "import bson\n").unwrap();
        assert!(discover_files(dir.path()).is_err());
    }

    const REPORT: &str = r#"<?xml version="1.0" encoding="utf-8"?><testsuites name="pytest tests"><testsuite name="pytest" errors="1" failures="1" skipped="1" tests="5"><testcase classname="test.test_crud_unified.TestUnifiedInsertOne" name="test_InsertOne" time="0.2" /><testcase classname="test.test_crud_unified.TestUnifiedFind" name="test_Find_with_hint" time="0.1"><skipped type="pytest.skip" message="runOnRequirements not satisfied">skipped</skipped></testcase><testcase classname="test.test_crud_unified.TestUnifiedUpdate" name="test_update" time="0.1"><failure message="AssertionError">trace</failure></testcase><testcase classname="test.test_crud_unified" name="test_module_level" time="0.1" /><testcase classname="test.test_crud_unified.TestUnifiedInsertOne" name="test_InsertOne" time="0.0"><error message="teardown">trace</error></testcase></testsuite></testsuites>"#;

    #[test]
    fn junit_results_become_ids_with_their_outcome() {
        let results = parse_junit(REPORT, "test_crud_unified.py").unwrap();
        let listed: Vec<(&str, TestResult)> = results
            .iter()
            .map(|(id, result)| (id.as_str(), *result))
            .collect();
        assert_eq!(
            listed,
            [
                (
                    "test_crud_unified.py::TestUnifiedFind::test_Find_with_hint",
                    TestResult::Skipped
                ),
                (
                    "test_crud_unified.py::TestUnifiedInsertOne::test_InsertOne",
                    // Its call passed, its teardown errored: the worse result counts.
                    TestResult::Error
                ),
                (
                    "test_crud_unified.py::TestUnifiedUpdate::test_update",
                    TestResult::Failed
                ),
                (
                    "test_crud_unified.py::test_module_level",
                    TestResult::Passed
                ),
            ]
        );
    }

    #[test]
    fn nameless_subtest_entries_are_not_tests() {
        let report = r#"<testsuites><testsuite><testcase classname="test.test_client.TestClient" name="test_compression" /><testcase time="0.000" /></testsuite></testsuites>"#;
        let results = parse_junit(report, "test_client.py").unwrap();
        assert_eq!(
            results.keys().collect::<Vec<_>>(),
            ["test_client.py::TestClient::test_compression"]
        );
    }

    #[test]
    fn async_files_keep_their_folder_in_the_id() {
        let report = r#"<testsuites><testsuite><testcase classname="test.asynchronous.test_bulk.AsyncTestBulk" name="test_empty" /></testsuite></testsuites>"#;
        let results = parse_junit(report, "asynchronous/test_bulk.py").unwrap();
        assert_eq!(
            results.keys().collect::<Vec<_>>(),
            ["asynchronous/test_bulk.py::AsyncTestBulk::test_empty"]
        );
    }

    #[test]
    fn a_report_that_is_not_xml_is_an_error() {
        assert!(parse_junit("<testsuites>", "test_bulk.py").is_err());
    }

    #[test]
    fn the_expected_list_skips_comments_and_blank_lines() {
        let text = "# tests that must pass\n\ntest_bulk.py::TestBulk::test_empty  # since issue 16\n  \ntest_crud_v1.py::test_x\n";
        assert_eq!(
            expected_ids(text),
            [
                "test_bulk.py::TestBulk::test_empty",
                "test_crud_v1.py::test_x"
            ]
        );
    }
}
