//! `cargo xtask serve-crash`, `serve-load` and `serve-bench`: `spillway serve` under real
//! pymongo clients, killed with SIGKILL mid-load, loaded by many clients, and timed op by op
//! beside the peer SecantusDB.
//!
//! The client side is Python in `xtask/python/` (`serve_crash.py`, `serve_load.py`,
//! `serve_bench.py`), run in the pymongo virtual environment that `cargo xtask pymongo` builds;
//! this module starts and kills the servers, runs the scripts, and turns their one-line JSON
//! into verdicts and tables. It must never connect anywhere but the servers it starts on
//! 127.0.0.1, and never run an unbounded loop: every iteration count and duration has a limit.

use std::fmt::Write as _;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use anyhow::{Context, Result, bail, ensure};
use serde_json::Value;
use wait_timeout::ChildExt;

use crate::pymongo::{client_python_for_other_task, secantus_for_other_task};
use crate::servers::{RunningServer, ServerProgram, build_spillway};
use crate::shared::{repo_root, target_dir};

/// How long a writer may outlive the server it wrote to (its own timeouts are about 1 s).
const WRITER_GRACE: Duration = Duration::from_secs(30);
/// How long a script may run beyond what it was asked to run.
const SCRIPT_GRACE: Duration = Duration::from_secs(120);

pub(crate) fn script(name: &str) -> PathBuf {
    repo_root().join("xtask").join("python").join(name)
}

/// A small xorshift generator for the kill moments; seeded from the clock (printed, and
/// settable with `--seed`) so that a failing run can be repeated.
struct Moments(u64);

impl Moments {
    fn next_millis(&mut self, low: u64, high: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        low + self.0 % (high - low)
    }
}

pub(crate) fn run_json(mut command: Command, what: &str, limit: Duration) -> Result<Value> {
    let mut child = command
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .with_context(|| format!("starting {what}"))?;
    let Some(status) = child.wait_timeout(limit)? else {
        let _ = child.kill();
        let _ = child.wait();
        bail!("{what} did not finish within {limit:?}");
    };
    let mut stdout = String::new();
    std::io::Read::read_to_string(
        &mut child.stdout.take().expect("stdout is piped"),
        &mut stdout,
    )?;
    let line = stdout.lines().last().unwrap_or_default();
    let value: Value = serde_json::from_str(line)
        .with_context(|| format!("{what} ({status}) printed no JSON line: {stdout}"))?;
    if !status.success() {
        return Err(anyhow::anyhow!("{what} failed ({status}): {line}"));
    }
    Ok(value)
}

pub(crate) fn logs_dir(task: &str) -> Result<PathBuf> {
    let dir = target_dir().join(task);
    std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    Ok(dir)
}

/// `cargo xtask serve-crash [--iterations N] [--seed S]`.
#[derive(clap::Args)]
pub(crate) struct CrashOptions {
    /// Kills of the server
    #[arg(long, value_name = "N", default_value_t = 100,
          value_parser = clap::value_parser!(u64).range(1..))]
    pub(crate) iterations: u64,
    /// The seed of the kill moments, to repeat a run (printed by every run) [default: from the
    /// clock]
    #[arg(long, value_name = "S")]
    pub(crate) seed: Option<u64>,
}

/// Kills `spillway serve` under pymongo writers, N times; every acknowledged write must
/// survive.
pub(crate) fn crash(options: &CrashOptions) -> Result<()> {
    let iterations = options.iterations;
    ensure!(iterations > 0, "--iterations must be at least 1");
    let seed = options.seed.unwrap_or_else(|| {
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(1, |elapsed| elapsed.as_nanos() as u64)
            | 1
    });
    let program = build_spillway()?;
    let python = client_python_for_other_task()?;
    let logs = logs_dir("serve-crash")?;
    let data = tempfile::Builder::new()
        .prefix("spillway-serve-crash-")
        .tempdir()
        .context("creating the data directory")?;
    let writes = tempfile::Builder::new()
        .prefix("spillway-serve-crash-log-")
        .tempdir()
        .context("creating the acknowledged-writes directory")?;
    println!(
        "\n== serve-crash: {iterations} kills of spillway serve {} (seed {seed})",
        data.path().display()
    );
    let mut moments = Moments(seed);
    let started = Instant::now();
    let server_log = logs.join("server.log");
    let mut server = RunningServer::start_in(&program, data.path(), &server_log)?;
    let mut write_logs = Vec::new();
    let mut verified = 0;
    for iteration in 0..iterations {
        let write_log = writes.path().join(format!("writes-{iteration}.log"));
        let mut writer = Command::new(&python)
            .arg(script("serve_crash.py"))
            .args(["write", &server.port().to_string()])
            .arg(&write_log)
            .args([&format!("i{iteration}"), "20", "4"])
            .stdin(Stdio::null())
            .spawn()
            .context("starting the writers")?;
        // Python and pymongo take about 0.3 s to start: kill between 0.5 s and 1.5 s.
        std::thread::sleep(Duration::from_millis(moments.next_millis(500, 1500)));
        server.kill_hard()?;
        wait_writer(&mut writer)?;
        write_logs.push(write_log);
        server = RunningServer::start_in(&program, data.path(), &server_log)
            .with_context(|| format!("restarting after kill {}", iteration + 1))?;
        let mut verify = Command::new(&python);
        verify
            .arg(script("serve_crash.py"))
            .args(["verify", &server.port().to_string()])
            .args(&write_logs);
        let report = run_json(verify, "the verifier", SCRIPT_GRACE)
            .with_context(|| format!("after kill {} (seed {seed})", iteration + 1))?;
        verified = report["acknowledged"].as_u64().unwrap_or_default();
        if (iteration + 1) % 10 == 0 || iteration + 1 == iterations {
            println!(
                "kill {:>4}: {} acknowledged writes verified ({} inserts, {} increments, {} of {} transactions committed), {:.0?}",
                iteration + 1,
                verified,
                report["inserts"],
                report["increments"],
                report["transactions"],
                report["transactions_tried"],
                started.elapsed()
            );
        }
    }
    drop(server);
    ensure!(
        verified > 0,
        "no write was acknowledged: the kills came before any client wrote"
    );
    println!("serve-crash: {iterations} kills, {verified} acknowledged writes verified, 0 lost");
    Ok(())
}

fn wait_writer(writer: &mut Child) -> Result<()> {
    if writer.wait_timeout(WRITER_GRACE)?.is_none() {
        let _ = writer.kill();
        let _ = writer.wait();
        bail!("the writers did not stop within {WRITER_GRACE:?} of the kill");
    }
    Ok(())
}

/// Both servers of a comparison: spillway, and the peer when asked for.
fn programs(peer: bool) -> Result<Vec<ServerProgram>> {
    let mut programs = vec![build_spillway()?];
    if peer {
        programs.push(secantus_for_other_task()?);
    }
    Ok(programs)
}

/// `serve-load`'s default duration and number of clients.
const DEFAULT_LOAD_SECONDS: u64 = 60;
const DEFAULT_LOAD_CLIENTS: u64 = 32;

/// `cargo xtask serve-load [--seconds N] [--clients N] [--threads] [--peer]`.
#[derive(clap::Args)]
pub(crate) struct LoadOptions {
    /// Seconds of load against each server
    #[arg(long, value_name = "N", default_value_t = DEFAULT_LOAD_SECONDS,
          value_parser = clap::value_parser!(u64).range(1..=3600))]
    pub(crate) seconds: u64,
    /// Concurrent pymongo clients
    #[arg(long, value_name = "N", default_value_t = DEFAULT_LOAD_CLIENTS,
          value_parser = clap::value_parser!(u64).range(1..=256))]
    pub(crate) clients: u64,
    /// Clients as threads of one process, not as processes
    #[arg(long)]
    pub(crate) threads: bool,
    /// Load SecantusDB too, beside spillway serve
    #[arg(long)]
    pub(crate) peer: bool,
}

impl Default for LoadOptions {
    /// The options of a bare `cargo xtask serve-load`.
    fn default() -> Self {
        LoadOptions {
            seconds: DEFAULT_LOAD_SECONDS,
            clients: DEFAULT_LOAD_CLIENTS,
            threads: false,
            peer: false,
        }
    }
}

impl LoadOptions {
    /// The options as they would be typed, for the report (the defaults left out).
    fn command_line(&self) -> String {
        let defaults = LoadOptions::default();
        let mut words = Vec::new();
        if self.seconds != defaults.seconds {
            words.push(format!("--seconds {}", self.seconds));
        }
        if self.clients != defaults.clients {
            words.push(format!("--clients {}", self.clients));
        }
        if self.threads {
            words.push("--threads".to_string());
        }
        if self.peer {
            words.push("--peer".to_string());
        }
        words.join(" ")
    }
}

/// `clients` pymongo clients of mixed work for `seconds` against each server; fails when
/// spillway fails an operation.
pub(crate) fn load(options: &LoadOptions) -> Result<()> {
    let LoadOptions {
        seconds, clients, ..
    } = *options;
    ensure!((1..=3600).contains(&seconds), "--seconds must be 1 to 3600");
    ensure!((1..=256).contains(&clients), "--clients must be 1 to 256");
    let mode = if options.threads { "thread" } else { "process" };
    let programs = programs(options.peer)?;
    let python = client_python_for_other_task()?;
    let logs = logs_dir("serve-load")?;
    let mut results = Vec::new();
    for program in &programs {
        let label = program.kind.label();
        println!(
            "\n== serve-load: {clients} pymongo clients ({mode}es) for {seconds} s against {label}"
        );
        let server = RunningServer::start(program, &logs.join(format!("{label}.log")))?;
        let mut command = Command::new(&python);
        command.arg(script("serve_load.py")).args([
            server.port().to_string(),
            seconds.to_string(),
            clients.to_string(),
            mode.to_string(),
        ]);
        let report = run_json(
            command,
            "the load driver",
            Duration::from_secs(seconds) + SCRIPT_GRACE,
        )?;
        drop(server);
        results.push((label, report));
    }
    let mut table = String::from(
        "| server | kind | ops/s | p50 ms | p99 ms | errors |\n|---|---|---:|---:|---:|---:|\n",
    );
    for (label, report) in &results {
        let kinds = ["find_one", "update_one", "insert_one", "transaction"];
        for kind in kinds {
            row(&mut table, label, kind, &report["kinds"][kind]);
        }
        row(&mut table, label, "**total**", &report["total"]);
    }
    println!("\n{table}");
    let text = format!(
        "# spillway serve under load\n\n`cargo xtask serve-load {}`: {clients} pymongo clients ({mode}es), {seconds} s each, 50% find_one by _id, 20% update_one, 20% insert_one, 10% two-collection transaction.\n\n{table}",
        options.command_line()
    );
    let report = target_dir().join("serve-load-report.md");
    std::fs::write(&report, text).with_context(|| format!("writing {}", report.display()))?;
    println!("report written to {}", report.display());
    let errors = results
        .iter()
        .find(|(label, _)| *label == "spillway")
        .and_then(|(_, report)| report["total"]["errors"].as_u64())
        .unwrap_or_default();
    ensure!(
        errors == 0,
        "spillway failed {errors} operations under load"
    );
    Ok(())
}

fn row(table: &mut String, label: &str, kind: &str, numbers: &Value) {
    let _ = writeln!(
        table,
        "| {label} | {kind} | {:.0} | {:.2} | {:.2} | {} |",
        numbers["ops_per_s"].as_f64().unwrap_or_default(),
        numbers["p50_ms"].as_f64().unwrap_or_default(),
        numbers["p99_ms"].as_f64().unwrap_or_default(),
        numbers["errors"].as_u64().unwrap_or_default(),
    );
}

/// `cargo xtask serve-bench [--repetitions N] [--peer]`.
#[derive(clap::Args)]
pub(crate) struct BenchOptions {
    /// Repetitions of each timing; the best counts
    #[arg(long, value_name = "N", default_value_t = 5,
          value_parser = clap::value_parser!(u64).range(1..=100))]
    pub(crate) repetitions: u64,
    /// Time SecantusDB too, beside spillway serve
    #[arg(long)]
    pub(crate) peer: bool,
}

/// pymongo's single operations timed against each server, best of `repetitions`.
pub(crate) fn bench(options: &BenchOptions) -> Result<()> {
    let repetitions = options.repetitions;
    ensure!(
        (1..=100).contains(&repetitions),
        "--repetitions must be 1 to 100"
    );
    let programs = programs(options.peer)?;
    let python = client_python_for_other_task()?;
    let logs = logs_dir("serve-bench")?;
    let mut results = Vec::new();
    for program in &programs {
        let label = program.kind.label();
        println!("\n== serve-bench: pymongo against {label}, best of {repetitions}");
        let server = RunningServer::start(program, &logs.join(format!("{label}.log")))?;
        let mut command = Command::new(&python);
        command
            .arg(script("serve_bench.py"))
            .args([server.port().to_string(), repetitions.to_string()]);
        let report = run_json(command, "the benchmark script", SCRIPT_GRACE * 5)?;
        drop(server);
        results.push((label, report));
    }
    println!("\n{}", bench_table(&results));
    Ok(())
}

fn bench_table(results: &[(&str, Value)]) -> String {
    let rows = [
        "insert_one",
        "find_one by _id",
        "update_one $inc",
        "insert_many(1000)",
    ];
    let mut table = String::from("| operation (µs per call, best of the repetitions) |");
    for (label, _) in results {
        let _ = write!(table, " {label} |");
    }
    if results.len() == 2 {
        table.push_str(" spillway / peer |");
    }
    table.push_str("\n|---|");
    for _ in 0..results.len() + usize::from(results.len() == 2) {
        table.push_str("---:|");
    }
    table.push('\n');
    for name in rows {
        let _ = write!(table, "| {name} |");
        let values: Vec<f64> = results
            .iter()
            .map(|(_, report)| report["per_op_us"][name].as_f64().unwrap_or_default())
            .collect();
        for value in &values {
            let _ = write!(table, " {value:.0} |");
        }
        if let [ours, peer] = values[..] {
            let _ = write!(table, " {:.2} |", ours / peer);
        }
        table.push('\n');
    }
    table
}

#[cfg(test)]
mod tests {
    use super::{Moments, script};

    #[test]
    fn the_client_scripts_are_checked_in() {
        for name in [
            "serve_crash.py",
            "serve_load.py",
            "serve_bench.py",
            "serve_hostile.py",
        ] {
            assert!(script(name).is_file(), "{name} is missing");
        }
    }

    #[test]
    fn kill_moments_stay_in_their_window() {
        let mut moments = Moments(12345);
        for _ in 0..1000 {
            let moment = moments.next_millis(500, 1500);
            assert!((500..1500).contains(&moment));
        }
    }
}
