//! `cargo xtask clients`: issue 27's transparency checks through real clients, each pinned and
//! installed from its registry: pymongo, the official Node.js driver and Mongoose.
//!
//! The checks are scripts in `xtask/clients/` (`pymongo_checks.py`, `node_driver_checks.js`,
//! `mongoose_checks.js`). Each runs the same operations against a collection with an outlier
//! policy and against a plain collection with the same writes, on one fresh `spillway serve`,
//! and compares the answers: a collection with a policy must answer as a plain MongoDB
//! collection of the logical documents would. Their `plain:` checks hold the plain half to
//! MongoDB's documented answers, and `--control` runs every comparison with no policy at all,
//! so that the harness itself is checked; `--peer` runs that control against SecantusDB too.
//!
//! pymongo comes from the virtual environment `cargo xtask pymongo` keeps under
//! `target/pymongo/` (the same pin); the npm packages are installed with `npm ci` from
//! `xtask/clients/package.json` and its lock into `target/clients/node/`, reused while the two
//! files are unchanged. Each script prints one line per check and `N passed, N failed`; this
//! task reads those lines, prints a table and fails when any check failed or a script did not
//! finish in time.
//!
//! This task must never reach anything but PyPI and npm (through pip and npm) and the servers
//! it starts on 127.0.0.1.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail, ensure};
use wait_timeout::ChildExt;

use crate::servers::{RunningServer, ServerProgram, build_spillway};
use crate::shared::{repo_root, target_dir};

/// Where the scripts and the npm manifest live, relative to the repository.
const SCRIPT_DIR: &str = "xtask/clients";

/// How long one client's script may take, unless `--timeout` says otherwise.
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(300);
/// The same under `--ci`: every script takes a few seconds, so this only stops a hang.
const CI_TIMEOUT: Duration = Duration::from_secs(120);

/// The Node.js the pinned packages need (`engines` of mongodb 7.8 and mongoose 9.12).
const NODE_MINIMUM: (u32, u32) = (20, 19);

/// A client and the script that drives it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum Client {
    Pymongo,
    NodeDriver,
    Mongoose,
}

impl Client {
    const ALL: [Client; 3] = [Client::Pymongo, Client::NodeDriver, Client::Mongoose];

    fn name(self) -> &'static str {
        match self {
            Client::Pymongo => "pymongo",
            Client::NodeDriver => "node-driver",
            Client::Mongoose => "mongoose",
        }
    }

    fn script(self) -> &'static str {
        match self {
            Client::Pymongo => "pymongo_checks.py",
            Client::NodeDriver => "node_driver_checks.js",
            Client::Mongoose => "mongoose_checks.js",
        }
    }

    /// The pinned version, for the table (the npm pins are read from the manifest).
    fn describe(self, versions: &NodeVersions) -> String {
        match self {
            Client::Pymongo => format!("pymongo {}", crate::pymongo::PYMONGO_VERSION),
            Client::NodeDriver => format!("Node.js driver (mongodb {})", versions.mongodb),
            Client::Mongoose => format!("mongoose {}", versions.mongoose),
        }
    }
}

/// Which checks a script runs: everything, or the control (no policy; checks the harness).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mode {
    Full,
    Control,
}

impl Mode {
    fn label(self) -> &'static str {
        match self {
            Mode::Full => "checks",
            Mode::Control => "control",
        }
    }
}

/// `cargo xtask clients [--only pymongo,node-driver,mongoose] [--peer] [--control] [--ci]
/// [--timeout SECS]`.
#[derive(clap::Args, Default)]
pub(crate) struct Options {
    /// The clients to run (a comma-separated list) [default: all three]
    #[arg(long, value_name = "CLIENTS", value_delimiter = ',')]
    pub(crate) only: Vec<Client>,
    /// Run the control against SecantusDB too
    #[arg(long)]
    pub(crate) peer: bool,
    /// Run the control with no policy too (checks the harness)
    #[arg(long)]
    pub(crate) control: bool,
    /// Run the checks through `spillway serve --upstream` too: in front of spillway serve,
    /// and with --peer in front of SecantusDB
    #[arg(long)]
    pub(crate) proxy: bool,
    /// CI's form: 120 s per client unless --timeout says otherwise
    #[arg(long)]
    pub(crate) ci: bool,
    /// Seconds one client's script may take [default: 300; 120 with --ci]
    #[arg(long, value_name = "SECS")]
    pub(crate) timeout: Option<u64>,
}

impl Options {
    /// The clients to run: those named, or all of them.
    fn clients(&self) -> Vec<Client> {
        if self.only.is_empty() {
            Client::ALL.to_vec()
        } else {
            self.only.clone()
        }
    }

    /// How long one client's script may take.
    fn timeout(&self) -> Duration {
        self.timeout.map_or(
            if self.ci { CI_TIMEOUT } else { DEFAULT_TIMEOUT },
            Duration::from_secs,
        )
    }

    /// The options as they would be typed, for the report.
    fn command_line(&self) -> String {
        let mut words = Vec::new();
        if !self.only.is_empty() {
            let names: Vec<&str> = self.only.iter().map(|client| client.name()).collect();
            words.push(format!("--only {}", names.join(",")));
        }
        for (given, flag) in [
            (self.peer, "--peer"),
            (self.control, "--control"),
            (self.proxy, "--proxy"),
            (self.ci, "--ci"),
        ] {
            if given {
                words.push(flag.to_string());
            }
        }
        if let Some(seconds) = self.timeout {
            words.push(format!("--timeout {seconds}"));
        }
        words.join(" ")
    }
}

/// Runs the task; see the module documentation.
pub(crate) fn run(options: &Options) -> Result<()> {
    let clients = options.clients();
    let timeout = options.timeout();
    let work = target_dir().join("clients");
    std::fs::create_dir_all(&work).with_context(|| format!("creating {}", work.display()))?;

    let needs_node = clients.iter().any(|client| *client != Client::Pymongo);
    let versions = NodeVersions::pinned()?;
    let node_modules = if needs_node {
        Some(ensure_node_packages(
            &repo_root().join(SCRIPT_DIR),
            &work.join("node"),
            &["mongodb", "mongoose"],
        )?)
    } else {
        None
    };
    let python = if clients.contains(&Client::Pymongo) {
        Some(crate::pymongo::client_python_for_other_task()?)
    } else {
        None
    };
    let interpreters = Interpreters {
        python,
        node_modules,
    };

    let spillway = build_spillway()?;
    let mut servers = vec![(spillway.clone(), Mode::Full, None)];
    if options.control {
        servers.push((spillway.clone(), Mode::Control, None));
    }
    if options.proxy {
        servers.push((spillway.clone(), Mode::Full, Some(&spillway)));
    }
    if options.peer {
        let peer = crate::pymongo::secantus_for_other_task()?;
        servers.push((peer.clone(), Mode::Control, None));
        if options.proxy {
            servers.push((peer, Mode::Full, Some(&spillway)));
        }
    }

    let mut rows = Vec::new();
    for (program, mode, proxy) in &servers {
        for client in &clients {
            let started = Instant::now();
            let target = Target {
                upstream: program,
                proxy: *proxy,
                mode: *mode,
            };
            let outcome = run_client(*client, &target, &interpreters, &work, timeout);
            let seconds = started.elapsed().as_secs_f64();
            rows.push(Row {
                client: client.describe(&versions),
                server: target.label(),
                outcome,
                seconds,
            });
        }
    }

    let table = render_table(&rows);
    println!("\n{table}");
    let report = target_dir().join("clients-report.md");
    std::fs::write(
        &report,
        format!(
            "# Issue 27's checks through real clients\n\n`cargo xtask clients {}`; each script's whole output is in target/clients/.\n\n{table}",
            options.command_line()
        ),
    )
    .with_context(|| format!("writing {}", report.display()))?;
    println!("report written to {}", report.display());

    let passed: usize = rows.iter().map(|row| row.outcome.passed).sum();
    let failed: usize = rows.iter().map(|row| row.outcome.failed).sum();
    println!("clients: {passed} passed, {failed} failed");
    let broken: Vec<String> = rows
        .iter()
        .filter_map(|row| {
            row.outcome
                .problem
                .as_ref()
                .map(|problem| format!("{} against {}: {problem}", row.client, row.server))
        })
        .collect();
    ensure!(
        failed == 0 && broken.is_empty(),
        "{failed} client checks failed{}",
        if broken.is_empty() {
            String::new()
        } else {
            format!("; {}", broken.join("; "))
        }
    );
    Ok(())
}

/// The npm pins, read from `xtask/clients/package.json` (the one place they are written).
struct NodeVersions {
    mongodb: String,
    mongoose: String,
}

impl NodeVersions {
    fn pinned() -> Result<NodeVersions> {
        let path = repo_root().join(SCRIPT_DIR).join("package.json");
        let text = std::fs::read_to_string(&path)
            .with_context(|| format!("reading {}", path.display()))?;
        let manifest: serde_json::Value =
            serde_json::from_str(&text).with_context(|| format!("parsing {}", path.display()))?;
        let pin = |name: &str| -> Result<String> {
            let version = manifest["dependencies"][name]
                .as_str()
                .with_context(|| format!("{} has no dependency '{name}'", path.display()))?;
            ensure!(
                version.chars().all(|c| c.is_ascii_digit() || c == '.'),
                "{} must pin '{name}' to an exact version, not '{version}'",
                path.display()
            );
            Ok(version.to_string())
        };
        Ok(NodeVersions {
            mongodb: pin("mongodb")?,
            mongoose: pin("mongoose")?,
        })
    }
}

/// What the scripts run with.
struct Interpreters {
    /// The Python of the pymongo virtual environment.
    python: Option<PathBuf>,
    /// `target/clients/node/node_modules`, given to node as `NODE_PATH`.
    node_modules: Option<PathBuf>,
}

/// `npm ci` of `source`'s `package.json` and `package-lock.json` into `dir`, skipped while the
/// two files are byte for byte those of the last install and each of `packages` is installed;
/// returns `dir/node_modules`, for node's `NODE_PATH`. The client tasks (`clients`, `gui`) keep
/// their npm packages this way.
pub(crate) fn ensure_node_packages(
    source: &Path,
    dir: &Path,
    packages: &[&str],
) -> Result<PathBuf> {
    check_node()?;
    let node_modules = dir.join("node_modules");
    let mut wanted = String::new();
    for file in ["package.json", "package-lock.json"] {
        let path = source.join(file);
        wanted.push_str(
            &std::fs::read_to_string(&path)
                .with_context(|| format!("reading {}", path.display()))?,
        );
    }
    let stamp = dir.join("spillway-pins.txt");
    let installed = packages
        .iter()
        .all(|name| node_modules.join(name).join("package.json").is_file());
    if installed && std::fs::read_to_string(&stamp).is_ok_and(|pins| pins == wanted) {
        return Ok(node_modules);
    }
    if dir.exists() {
        std::fs::remove_dir_all(dir).with_context(|| format!("removing {}", dir.display()))?;
    }
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    for file in ["package.json", "package-lock.json"] {
        std::fs::copy(source.join(file), dir.join(file))
            .with_context(|| format!("copying {file} to {}", dir.display()))?;
    }
    println!(
        "\n== npm ci ({}, pinned in {}) into {}",
        packages.join(", "),
        source.display(),
        dir.display()
    );
    let status = Command::new("npm")
        .arg("ci")
        .args(["--no-audit", "--no-fund", "--loglevel=error"])
        .current_dir(dir)
        .status()
        .context("could not start npm")?;
    ensure!(status.success(), "npm ci failed ({status})");
    std::fs::write(&stamp, wanted).with_context(|| format!("writing {}", stamp.display()))?;
    Ok(node_modules)
}

/// Node.js and npm are there, and Node is new enough for the pinned packages.
pub(crate) fn check_node() -> Result<()> {
    let missing = "this task needs Node.js 20.19 or newer with npm \
                   (Debian/Ubuntu: apt-get install nodejs npm)";
    let node = Command::new("node")
        .arg("--version")
        .output()
        .ok()
        .filter(|output| output.status.success())
        .with_context(|| format!("node is not installed: {missing}"))?;
    let version = String::from_utf8_lossy(&node.stdout).trim().to_string();
    let parsed = node_version(&version)
        .with_context(|| format!("could not read node's version '{version}'"))?;
    ensure!(
        parsed >= NODE_MINIMUM,
        "node {version} is too old: {missing}"
    );
    let npm_works = Command::new("npm")
        .arg("--version")
        .output()
        .is_ok_and(|output| output.status.success());
    ensure!(npm_works, "npm is not installed: {missing}");
    Ok(())
}

/// `v20.19.2` as `(20, 19)`.
fn node_version(text: &str) -> Option<(u32, u32)> {
    let mut parts = text.trim().trim_start_matches('v').split('.');
    let major = parts.next()?.parse().ok()?;
    let minor = parts.next()?.parse().ok()?;
    Some((major, minor))
}

/// One client's script against one server.
struct Row {
    client: String,
    server: String,
    outcome: Outcome,
    seconds: f64,
}

/// What a script reported, read from its output.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct Outcome {
    pub(crate) passed: usize,
    pub(crate) failed: usize,
    /// The names and reasons of the failed checks.
    pub(crate) failures: Vec<String>,
    /// What went wrong beyond the checks themselves (no summary, a timeout, a server that
    /// did not start, an exit status that disagrees with the counts).
    pub(crate) problem: Option<String>,
}

impl Outcome {
    fn broken(problem: String) -> Outcome {
        Outcome {
            problem: Some(problem),
            ..Outcome::default()
        }
    }
}

/// What a script runs against: a server, maybe through `spillway serve --upstream`, and
/// which checks.
struct Target<'a> {
    upstream: &'a ServerProgram,
    proxy: Option<&'a ServerProgram>,
    mode: Mode,
}

impl Target<'_> {
    /// The server column of the table (`spillway --upstream secantusdb (checks)`).
    fn label(&self) -> String {
        match self.proxy {
            Some(_) => format!(
                "spillway --upstream {} ({})",
                self.upstream.kind.label(),
                self.mode.label()
            ),
            None => format!("{} ({})", self.upstream.kind.label(), self.mode.label()),
        }
    }

    /// The label in file names.
    fn file_label(&self) -> String {
        let proxy = if self.proxy.is_some() { "proxy-" } else { "" };
        format!(
            "{proxy}{}-{}",
            self.upstream.kind.label(),
            self.mode.label()
        )
    }
}

/// Runs one client's script on a fresh server (behind a fresh proxy when the target has one)
/// and reads what it reported.
fn run_client(
    client: Client,
    target: &Target<'_>,
    interpreters: &Interpreters,
    work: &Path,
    timeout: Duration,
) -> Outcome {
    let label = format!("{}-{}", target.file_label(), client.name());
    let server = match RunningServer::start(
        target.upstream,
        &work.join("logs").join(format!("{label}.server.log")),
    ) {
        Ok(server) => server,
        Err(error) => return Outcome::broken(format!("the server did not start: {error:#}")),
    };
    let proxy = match target.proxy {
        Some(spillway) => match RunningServer::start_proxy(
            &spillway.executable,
            server.port(),
            &work.join("logs").join(format!("{label}.proxy.log")),
        ) {
            Ok(proxy) => Some(proxy),
            Err(error) => return Outcome::broken(format!("the proxy did not start: {error:#}")),
        },
        None => None,
    };
    let port = proxy.as_ref().unwrap_or(&server).port();
    let script = repo_root().join(SCRIPT_DIR).join(client.script());
    let mut command = match client {
        Client::Pymongo => {
            let python = interpreters.python.as_ref().expect("set up for pymongo");
            let mut command = Command::new(python);
            command.arg(&script).env_remove("PYTHONPATH");
            command
        }
        Client::NodeDriver | Client::Mongoose => {
            let node_modules = interpreters.node_modules.as_ref().expect("set up for node");
            let mut command = Command::new("node");
            command.arg(&script).env("NODE_PATH", node_modules);
            command
        }
    };
    command
        .arg("--uri")
        .arg(format!("mongodb://127.0.0.1:{port}"));
    if target.mode == Mode::Control {
        command.arg("--control");
    }
    println!("\n== {} against {}", client.name(), target.label());
    let output_path = work.join(format!("{label}.out"));
    let outcome = run_script(&mut command, &output_path, timeout);
    drop(proxy);
    drop(server);
    match outcome {
        Ok((text, success)) => {
            print!("{text}");
            let mut outcome = read_outcome(&text);
            if outcome.problem.is_none() && success != (outcome.failed == 0) {
                outcome.problem = Some(format!(
                    "the script's exit status ({}) disagrees with its summary",
                    if success { "success" } else { "failure" }
                ));
            }
            outcome
        }
        Err(error) => Outcome::broken(format!("{error:#}")),
    }
}

/// Runs `command` with its output (standard output, then standard error) in `output_path`;
/// returns that output and whether the command succeeded.
pub(crate) fn run_script(
    command: &mut Command,
    output_path: &Path,
    timeout: Duration,
) -> Result<(String, bool)> {
    let stderr_path = output_path.with_extension("stderr");
    let mut child = command
        .current_dir(repo_root())
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(output_path).context("creating the script's output file")?)
        .stderr(std::fs::File::create(&stderr_path).context("creating the script's error file")?)
        .spawn()
        .with_context(|| format!("starting {command:?}"))?;
    let Some(status) = child
        .wait_timeout(timeout)
        .context("waiting for the script")?
    else {
        let _ = child.kill();
        let _ = child.wait();
        bail!(
            "timed out after {} s (its output so far: {})",
            timeout.as_secs(),
            output_path.display()
        );
    };
    let mut text = std::fs::read_to_string(output_path).unwrap_or_default();
    text.push_str(&std::fs::read_to_string(&stderr_path).unwrap_or_default());
    if !text.is_empty() && !text.ends_with('\n') {
        text.push('\n');
    }
    Ok((text, status.success()))
}

/// Reads a script's `PASS name` / `FAIL name: why` lines and its closing `N passed, N failed`
/// line; the two must agree, and the closing line must be the last line.
pub(crate) fn read_outcome(text: &str) -> Outcome {
    let mut outcome = Outcome::default();
    let mut pass_lines = 0;
    for line in text.lines() {
        if line.starts_with("PASS ") {
            pass_lines += 1;
        } else if let Some(failure) = line.strip_prefix("FAIL ") {
            outcome.failures.push(failure.to_string());
        }
    }
    let summary = text
        .lines()
        .rev()
        .find(|line| !line.trim().is_empty())
        .and_then(summary_counts);
    match summary {
        None => {
            outcome.passed = pass_lines;
            // A script that stopped before its summary has at least one failure.
            outcome.failed = outcome.failures.len().max(1);
            outcome.problem = Some("the output does not end with 'N passed, N failed'".into());
        }
        Some((passed, failed)) => {
            outcome.passed = passed;
            outcome.failed = failed;
            if passed != pass_lines || failed != outcome.failures.len() {
                outcome.problem = Some(format!(
                    "the summary says {passed} passed, {failed} failed, but the output has {pass_lines} PASS and {} FAIL lines",
                    outcome.failures.len()
                ));
            }
        }
    }
    outcome
}

/// `(passed, failed)` of a `N passed, N failed` line.
fn summary_counts(line: &str) -> Option<(usize, usize)> {
    let (passed, failed) = line.trim().split_once(", ")?;
    let passed = passed.strip_suffix(" passed")?.parse().ok()?;
    let failed = failed.strip_suffix(" failed")?.parse().ok()?;
    Some((passed, failed))
}

/// How much of a failed check's reason the table repeats (the script's output has it whole).
const FAILURE_WIDTH: usize = 240;

/// `text` cut to at most `width` characters, with `...` when cut.
fn shortened(text: &str, width: usize) -> String {
    match text.char_indices().nth(width) {
        Some((end, _)) => format!("{}...", &text[..end]),
        None => text.to_string(),
    }
}

fn render_table(rows: &[Row]) -> String {
    let mut table =
        String::from("| client | server | passed | failed | seconds |\n|---|---|---|---|---|\n");
    for row in rows {
        let _ = writeln!(
            table,
            "| {} | {} | {} | {} | {:.0}{} |",
            row.client,
            row.server,
            row.outcome.passed,
            row.outcome.failed,
            row.seconds,
            row.outcome
                .problem
                .as_ref()
                .map(|problem| format!(" ({})", problem.lines().next().unwrap_or_default()))
                .unwrap_or_default()
        );
    }
    let failures: Vec<String> = rows
        .iter()
        .flat_map(|row| {
            row.outcome.failures.iter().map(move |failure| {
                let reason = shortened(failure, FAILURE_WIDTH);
                format!("- {} against {}: {reason}", row.client, row.server)
            })
        })
        .collect();
    if !failures.is_empty() {
        table.push_str("\nFailed checks:\n\n");
        for failure in failures {
            table.push_str(&failure);
            table.push('\n');
        }
    }
    table
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_clean_run_is_read_from_its_lines() {
        let outcome = read_outcome(
            "PASS a\nPASS b\nFAIL c: policy gave 1, plain gave 2\n2 passed, 1 failed\n",
        );
        assert_eq!(
            outcome,
            Outcome {
                passed: 2,
                failed: 1,
                failures: vec!["c: policy gave 1, plain gave 2".into()],
                problem: None,
            }
        );
    }

    #[test]
    fn a_run_without_its_summary_is_a_failure() {
        let outcome = read_outcome("PASS a\nTraceback (most recent call last):\n");
        assert_eq!((outcome.passed, outcome.failed), (1, 1));
        assert!(outcome.problem.is_some());
    }

    #[test]
    fn a_summary_that_disagrees_with_the_lines_is_a_problem() {
        let outcome = read_outcome("PASS a\nFAIL b: why\n2 passed, 0 failed\n");
        assert_eq!((outcome.passed, outcome.failed), (2, 0));
        assert!(outcome.problem.unwrap().contains("1 PASS and 1 FAIL"));
    }

    #[test]
    fn summary_lines_are_exactly_n_passed_n_failed() {
        assert_eq!(summary_counts("12 passed, 3 failed"), Some((12, 3)));
        assert_eq!(summary_counts("  0 passed, 0 failed  "), Some((0, 0)));
        assert_eq!(summary_counts("12 passed"), None);
        assert_eq!(summary_counts("x passed, 1 failed"), None);
    }

    #[test]
    fn long_reasons_are_cut_on_a_character_boundary() {
        assert_eq!(shortened("abcdef", 3), "abc...");
        assert_eq!(shortened("abc", 3), "abc");
        assert_eq!(shortened("ééé", 2), "éé...");
    }

    #[test]
    fn node_versions_are_compared_by_major_and_minor() {
        assert_eq!(node_version("v20.20.2\n"), Some((20, 20)));
        assert!(node_version("v20.9.0").unwrap() < NODE_MINIMUM);
        assert!(node_version("v22.1.0").unwrap() >= NODE_MINIMUM);
        assert_eq!(node_version("twenty"), None);
    }

    /// `cargo xtask clients ARGS`'s options, parsed as the binary parses them.
    fn parsed(args: &[&str]) -> Result<Options, clap::Error> {
        match crate::tests::parse(&[&["clients"], args].concat())? {
            crate::Command::Clients(options) => Ok(options),
            _ => unreachable!("clients parses as clients"),
        }
    }

    #[test]
    fn options_select_clients_and_the_ci_timeout() {
        let options = parsed(&["--only", "mongoose,pymongo", "--ci"]).unwrap();
        assert_eq!(options.clients(), [Client::Mongoose, Client::Pymongo]);
        assert_eq!(options.timeout(), CI_TIMEOUT);
        assert_eq!(options.command_line(), "--only mongoose,pymongo --ci");
        assert!(parsed(&["--only", "java"]).is_err());
        let options = parsed(&["--ci", "--timeout", "9"]).unwrap();
        assert_eq!(options.timeout(), Duration::from_secs(9));
        assert_eq!(
            parsed(&["--only", "node-driver"]).unwrap().clients(),
            [Client::NodeDriver]
        );
        assert_eq!(parsed(&[]).unwrap().clients(), Client::ALL);
        assert_eq!(parsed(&[]).unwrap().timeout(), DEFAULT_TIMEOUT);
    }

    #[test]
    fn the_npm_manifest_pins_exact_versions() {
        let versions = NodeVersions::pinned().unwrap();
        assert!(versions.mongodb.starts_with("7."), "{}", versions.mongodb);
        assert!(versions.mongoose.starts_with("9."), "{}", versions.mongoose);
    }
}
