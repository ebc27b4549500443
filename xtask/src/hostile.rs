//! `cargo xtask serve-hostile`: `spillway serve` against hostile and careless clients while a
//! well-behaved pymongo client keeps working: malformed messages of every kind (nesting past
//! the limit at every place of a message, lengths negative, huge and shorter than a header,
//! unknown opcodes, bad checksums, OP_COMPRESSED with lying sizes), thousands of idle
//! connections, slow senders, and connections trickling 40 MB messages.
//!
//! The clients are `xtask/python/serve_hostile.py`, in the pymongo virtual environment of
//! `cargo xtask pymongo`; this module raises the open-file limit, starts the server, runs the
//! script, reads the server's log, and turns the script's JSON into a verdict and a report
//! (`target/serve-hostile-report.md`). It fails when the good client gets an error or waits
//! 10 s for an answer, when the server dies, when its peak RSS (VmHWM) passes the bound, or
//! when a malformed message is not answered or closed as it must be.
//!
//! Every connection goes to the server it starts on 127.0.0.1 (from 127.0.0.1 to 127.0.0.5,
//! all loopback); every loop ends at the script's deadline.

use std::fmt::Write as _;
use std::process::Command;
use std::time::Duration;

use anyhow::{Context, Result, bail, ensure};
use serde_json::Value;

use crate::pymongo::client_python_for_other_task;
use crate::serve_tasks::{logs_dir, run_json, script};
use crate::servers::{RunningServer, build_spillway};
use crate::shared::target_dir;

/// The good client must never wait this long for an answer.
const LONGEST_WAIT_MS: f64 = 10_000.0;
/// `spillway serve`'s default limits that the verdict relies on.
const PER_ADDRESS: u64 = 500;
const MAX_BSON_DEPTH: u64 = 200;
/// The default peak-RSS bound: the shared buffer budget (256 MiB) plus 512 MiB for
/// everything else: the store, each connection's first 64 KiB, the commands being decoded
/// and run (a 20 MB one nested 200 levels among them), the allocator's retained pages.
/// Without the limits, 60 connections sending 40 MB took 2.4 GB, and one 47 MB message
/// nested 199 levels about 9 GB.
const DEFAULT_RSS_BOUND_MIB: u64 = 768;
/// The default slow senders, tricklers and size of a trickled message (MB).
const DEFAULT_SLOW: u64 = 200;
const DEFAULT_TRICKLERS: u64 = 60;
const DEFAULT_TRICKLE_MB: u64 = 40;

/// `cargo xtask serve-hostile [--bounded] [--seconds N] [--idle N] [--slow N] [--tricklers N]
/// [--trickle-mb N] [--rss-bound-mib N]`.
#[derive(clap::Args)]
pub(crate) struct Options {
    /// CI's form: 20 s, 1000 idle connections, and the server's message timeout shortened to
    /// 10 s
    #[arg(long)]
    pub(crate) bounded: bool,
    /// Seconds the hostile clients run [default: 90; 20 with --bounded]
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(5..=1800))]
    pub(crate) seconds: Option<u64>,
    /// Idle connections [default: 5000; 1000 with --bounded]
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(..=20_000))]
    pub(crate) idle: Option<u64>,
    /// Slow senders
    #[arg(long, value_name = "N", default_value_t = DEFAULT_SLOW,
          value_parser = clap::value_parser!(u64).range(..=2_000))]
    pub(crate) slow: u64,
    /// Connections trickling large messages
    #[arg(long, value_name = "N", default_value_t = DEFAULT_TRICKLERS,
          value_parser = clap::value_parser!(u64).range(..=500))]
    pub(crate) tricklers: u64,
    /// The size of each trickled message, in MB
    #[arg(long, value_name = "N", default_value_t = DEFAULT_TRICKLE_MB,
          value_parser = clap::value_parser!(u64).range(1..=48))]
    pub(crate) trickle_mb: u64,
    /// The bound on the server's peak RSS, in MiB
    #[arg(long, value_name = "N", default_value_t = DEFAULT_RSS_BOUND_MIB)]
    pub(crate) rss_bound_mib: u64,
}

impl Default for Options {
    /// The options of a bare `cargo xtask serve-hostile`.
    fn default() -> Self {
        Options {
            bounded: false,
            seconds: None,
            idle: None,
            slow: DEFAULT_SLOW,
            tricklers: DEFAULT_TRICKLERS,
            trickle_mb: DEFAULT_TRICKLE_MB,
            rss_bound_mib: DEFAULT_RSS_BOUND_MIB,
        }
    }
}

/// Runs the hostile clients and the good one against a fresh server; see the module
/// documentation.
pub(crate) fn run(options: &Options) -> Result<()> {
    let bounded = options.bounded;
    let seconds = options.seconds.unwrap_or(if bounded { 20 } else { 90 });
    let idle = options.idle.unwrap_or(if bounded { 1_000 } else { 5_000 });
    let slow = options.slow;
    let tricklers = options.tricklers;
    let trickle_mb = options.trickle_mb;
    let bound_mib = options.rss_bound_mib;
    ensure!((5..=1800).contains(&seconds), "--seconds must be 5 to 1800");
    ensure!(idle <= 20_000, "--idle must be at most 20,000");
    ensure!(slow <= 2_000, "--slow must be at most 2,000");
    ensure!(tricklers <= 500, "--tricklers must be at most 500");
    ensure!(
        (1..=48).contains(&trickle_mb),
        "--trickle-mb must be 1 to 48"
    );
    let nofile = raise_open_file_limit(idle + slow + tricklers + 2_000)?;
    let program = build_spillway()?;
    let python = client_python_for_other_task()?;
    let logs = logs_dir("serve-hostile")?;
    let server_log = logs.join("spillway.log");
    // The bounded form shortens the message timeout, so that slow senders and tricklers are
    // closed (and come back) within its 20 s; every other limit is the default.
    let server_args: Vec<String> = if bounded {
        vec!["--message-timeout".into(), "10".into()]
    } else {
        Vec::new()
    };
    println!(
        "\n== serve-hostile: {seconds} s of {idle} idle connections, {slow} slow senders, \
         {tricklers} connections trickling {trickle_mb} MB, malformed messages; a pymongo client \
         throughout; open-file limit {nofile}; server flags: {}",
        if server_args.is_empty() {
            "the defaults".to_owned()
        } else {
            server_args.join(" ")
        }
    );
    let mut server = RunningServer::start_with_args(&program, &server_args, &server_log)?;
    let mut command = Command::new(&python);
    command.arg(script("serve_hostile.py")).args(
        [
            u64::from(server.port()),
            u64::from(server.pid()),
            seconds,
            idle,
            slow,
            tricklers,
            trickle_mb,
            MAX_BSON_DEPTH,
        ]
        .map(|n| n.to_string()),
    );
    let report = run_json(
        command,
        "the hostile clients",
        Duration::from_secs(seconds + 300),
    );
    let alive = server.is_running();
    drop(server);
    let report = report?;
    let log = std::fs::read_to_string(&server_log).unwrap_or_default();
    let text = render(&report, &log, seconds, bound_mib, bounded);
    println!("\n{text}");
    let path = target_dir().join("serve-hostile-report.md");
    std::fs::write(&path, &text).with_context(|| format!("writing {}", path.display()))?;
    println!("report written to {}", path.display());
    verdict(&report, alive, bound_mib, idle)
}

/// Raises the soft open-file limit to `wanted` (at most the hard limit), for this process
/// and the server and clients it starts; returns the limit in force.
fn raise_open_file_limit(wanted: u64) -> Result<u64> {
    use rustix::process::{Resource, getrlimit, setrlimit};
    let mut limit = getrlimit(Resource::Nofile);
    let current = limit.current.unwrap_or(u64::MAX);
    if current < wanted {
        let raised = limit.maximum.map_or(wanted, |maximum| wanted.min(maximum));
        limit.current = Some(raised);
        setrlimit(Resource::Nofile, limit).context("raising the open-file limit")?;
    }
    let current = getrlimit(Resource::Nofile).current.unwrap_or(u64::MAX);
    ensure!(
        current >= wanted.min(8_000),
        "the open-file limit is {current} and cannot be raised to {wanted}: raise the hard limit"
    );
    Ok(current)
}

fn number(value: &Value) -> f64 {
    value.as_f64().unwrap_or_default()
}

fn render(report: &Value, log: &str, seconds: u64, bound_mib: u64, bounded: bool) -> String {
    let good = &report["good_client"];
    let memory = &report["memory"];
    let attacks = &report["attacks"];
    let count = |needle: &str| log.lines().filter(|line| line.contains(needle)).count();
    let mut text = format!(
        "# spillway serve against hostile clients\n\n`cargo xtask serve-hostile{}`: {seconds} s of \
         attacks, all at once, beside one well-behaved pymongo client (insert_one and find_one \
         every 10 ms, in its own process).\n\n",
        if bounded { " --bounded" } else { "" }
    );
    text.push_str("| measure | value |\n|---|---:|\n");
    let mut row = |name: &str, value: String| {
        let _ = writeln!(text, "| {name} | {value} |");
    };
    row(
        "good client: operations",
        format!("{}", good["ops"].as_u64().unwrap_or_default()),
    );
    row(
        "good client: errors",
        format!("{}", good["errors"].as_u64().unwrap_or_default()),
    );
    row(
        "good client: p50 / p99 / max ms",
        format!(
            "{:.2} / {:.2} / {:.2}",
            number(&good["p50_ms"]),
            number(&good["p99_ms"]),
            number(&good["max_ms"])
        ),
    );
    row(
        "server RSS: before the attack / peak (VmHWM) MiB",
        format!(
            "{:.0} / {:.0} (bound {bound_mib})",
            number(&memory["baseline_rss_mib"]),
            number(&memory["hwm_mib"])
        ),
    );
    let malformed = &attacks["malformed"];
    row(
        "malformed: rounds; answered Overflow / answered at the limit / closed",
        format!(
            "{}; {} / {} / {}",
            malformed["rounds"], malformed["overflow"], malformed["answered"], malformed["closed"]
        ),
    );
    let idle = &attacks["idle"];
    row(
        "idle connections: opened / closed by the server at once",
        format!("{} / {}", idle["opened"], idle["closed_by_server"]),
    );
    let slow = &attacks["slow"];
    row(
        "slow senders: connections / closed by the server / bytes sent",
        format!(
            "{} / {} / {}",
            slow["connections"], slow["closed_by_server"], slow["bytes_sent"]
        ),
    );
    let trickle = &attacks["tricklers"];
    row(
        "tricklers: connections / closed by the server / MB sent",
        format!(
            "{} / {} / {:.0}",
            trickle["connections"],
            trickle["closed_by_server"],
            number(&trickle["bytes_sent"]) / 1e6
        ),
    );
    row(
        "server log: connections refused (per address / reserve / total)",
        format!(
            "{} / {} / {}",
            count("--max-connections-per-address"),
            count("--reserved-connections"),
            count("(--max-connections)")
        ),
    );
    row(
        "server log: closed for a message not whole in time / waiting for the budget",
        format!(
            "{} / {}",
            count("did not arrive whole"),
            count("room in the buffer budget")
        ),
    );
    text
}

fn verdict(report: &Value, alive: bool, bound_mib: u64, idle: u64) -> Result<()> {
    let good = &report["good_client"];
    let memory = &report["memory"];
    let malformed = &report["attacks"]["malformed"];
    ensure!(
        alive && !memory["server_gone"].as_bool().unwrap_or(true),
        "the server died under the hostile clients"
    );
    let errors = good["errors"].as_u64().unwrap_or(u64::MAX);
    if errors > 0 {
        bail!(
            "the good client failed {errors} operations: {}",
            good["error_texts"]
        );
    }
    ensure!(
        good["ops"].as_u64().unwrap_or_default() > 0,
        "the good client got no answer at all"
    );
    ensure!(
        number(&good["max_ms"]) < LONGEST_WAIT_MS,
        "the good client waited {:.0} ms for an answer",
        number(&good["max_ms"])
    );
    let hwm = number(&memory["hwm_mib"]);
    ensure!(
        hwm <= bound_mib as f64,
        "the server's peak RSS was {hwm:.0} MiB, over the bound of {bound_mib} MiB"
    );
    let failures = malformed["failures"].as_array().map_or(0, Vec::len);
    ensure!(
        failures == 0,
        "malformed messages were not answered or closed as they must be: {}",
        malformed["failures"]
    );
    ensure!(
        malformed["overflow"].as_u64().unwrap_or_default() > 0
            && malformed["closed"].as_u64().unwrap_or_default() > 0,
        "no round of malformed messages finished"
    );
    let idle_stats = &report["attacks"]["idle"];
    let opened = idle_stats["opened"].as_u64().unwrap_or_default();
    let closed = idle_stats["closed_by_server"].as_u64().unwrap_or_default();
    if idle > PER_ADDRESS {
        ensure!(
            opened.saturating_sub(closed) <= PER_ADDRESS,
            "one address kept {} idle connections, over the per-address limit of {PER_ADDRESS}",
            opened - closed
        );
    }
    println!(
        "serve-hostile: the good client got every answer (p99 {:.2} ms), peak RSS {hwm:.0} MiB \
         within {bound_mib} MiB, the server served throughout",
        number(&good["p99_ms"])
    );
    Ok(())
}
