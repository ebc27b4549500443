//! `cargo xtask mongosh`: the real MongoDB shell, installed from npm, against `spillway serve`
//! (or, with `--peer`, against SecantusDB, to check the harness itself).
//!
//! It installs the pinned `mongosh` package into `target/mongosh/` (reused while the pin is
//! unchanged), starts a fresh server, checks that `db.runCommand({ping: 1})` answers `ok: 1`,
//! then runs each example script (`examples/outlier.js`, `examples/subset.js`) with
//! `mongosh --quiet mongodb://127.0.0.1:PORT/test --file ...` on a fresh server of its own and
//! prints what mongosh printed, with its exit status. The ping decides the task's exit status;
//! the scripts' results are reported only, since they use Spillway's shell statements
//! (`setPattern`, `show patterns`...) that plain mongosh does not know.
//!
//! mongosh runs with its home directory and global configuration under `target/mongosh/`, with
//! telemetry and update checks off: it must never reach anything but the server on 127.0.0.1.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use anyhow::{Context, Result, bail, ensure};
use wait_timeout::ChildExt;

use crate::servers::{RunningServer, build_spillway};
use crate::shared::{repo_root, target_dir};

/// The pinned mongosh (npm package `mongosh`, which depends on `@mongosh/cli-repl` of the same
/// version).
const MONGOSH_VERSION: &str = "2.12.0";

/// The example scripts, relative to the repository.
const EXAMPLES: &[&str] = &["examples/outlier.js", "examples/subset.js"];

/// How long one mongosh invocation may take.
const MONGOSH_TIMEOUT: Duration = Duration::from_secs(300);

/// mongosh's global configuration: telemetry off for good, no update checks.
const GLOBAL_CONFIG: &str = "mongosh:\n  forceDisableTelemetry: true\n  updateURL: \"\"\n";

/// Runs the task; see the module documentation.
pub(crate) fn run(args: &[String]) -> Result<()> {
    let peer = match args {
        [] => false,
        [flag] if flag == "--peer" => true,
        other => bail!("mongosh takes only --peer, got {other:?}"),
    };
    let work = target_dir().join("mongosh");
    let mongosh = ensure_mongosh(&work)?;
    let program = if peer {
        crate::pymongo::secantus_for_other_task()?
    } else {
        build_spillway()?
    };
    let label = program.kind.label();
    let logs = work.join("logs");

    let server = RunningServer::start(&program, &logs.join(format!("{label}-ping.server.log")))?;
    let ping = run_mongosh(
        &mongosh,
        &work,
        server.port(),
        &["--eval", "db.runCommand({ping: 1})"],
    )?;
    drop(server);
    println!("\n== mongosh --eval 'db.runCommand({{ping: 1}})' against {label}");
    print!("{}", ping.output);
    ensure!(
        ping.success && ping.output.contains("ok: 1"),
        "mongosh's ping against {label} did not answer ok: 1 ({})",
        ping.status
    );

    let mut statuses = Vec::new();
    for example in EXAMPLES {
        let name = Path::new(example)
            .file_stem()
            .and_then(|stem| stem.to_str())
            .unwrap_or("example");
        let server =
            RunningServer::start(&program, &logs.join(format!("{label}-{name}.server.log")))?;
        let script = repo_root().join(example);
        let script = script.to_string_lossy();
        let run = run_mongosh(&mongosh, &work, server.port(), &["--file", &script])?;
        drop(server);
        println!(
            "\n== mongosh --file {example} against {label}: {}",
            run.status
        );
        print!("{}", run.output);
        let saved = work.join(format!("{label}-{name}.out"));
        std::fs::write(&saved, &run.output)
            .with_context(|| format!("writing {}", saved.display()))?;
        statuses.push(format!("{example} {}", run.status));
    }
    println!(
        "\nmongosh {MONGOSH_VERSION} against {label}: ping ok; {}",
        statuses.join("; ")
    );
    Ok(())
}

/// The mongosh executable of the pinned version, installed with npm when missing.
fn ensure_mongosh(work: &Path) -> Result<PathBuf> {
    let executable = work.join("node_modules").join(".bin").join("mongosh");
    let manifest = work
        .join("node_modules")
        .join("mongosh")
        .join("package.json");
    let installed = std::fs::read_to_string(&manifest)
        .ok()
        .and_then(|text| serde_json::from_str::<serde_json::Value>(&text).ok())
        .and_then(|json| json["version"].as_str().map(str::to_string));
    if executable.is_file() && installed.as_deref() == Some(MONGOSH_VERSION) {
        return Ok(executable);
    }
    let npm_works = Command::new("npm")
        .arg("--version")
        .output()
        .is_ok_and(|output| output.status.success());
    ensure!(
        npm_works,
        "npm is not installed: the mongosh task needs Node.js 20 or newer with npm \
         (Debian/Ubuntu: apt-get install nodejs npm)"
    );
    std::fs::create_dir_all(work).with_context(|| format!("creating {}", work.display()))?;
    println!(
        "\n== npm install mongosh@{MONGOSH_VERSION} into {}",
        work.display()
    );
    let status = Command::new("npm")
        .arg("install")
        .arg("--prefix")
        .arg(work)
        .args(["--no-audit", "--no-fund", "--loglevel=error"])
        .arg(format!("mongosh@{MONGOSH_VERSION}"))
        .status()
        .context("could not start npm")?;
    ensure!(status.success(), "npm install mongosh failed ({status})");
    ensure!(
        executable.is_file(),
        "npm installed no {}",
        executable.display()
    );
    Ok(executable)
}

struct MongoshRun {
    success: bool,
    status: String,
    output: String,
}

/// `mongosh --quiet mongodb://127.0.0.1:PORT/test ARGS`, standard output then standard error.
fn run_mongosh(mongosh: &Path, work: &Path, port: u16, args: &[&str]) -> Result<MongoshRun> {
    let home = work.join("home");
    std::fs::create_dir_all(&home).with_context(|| format!("creating {}", home.display()))?;
    let config = work.join("mongosh.conf");
    std::fs::write(&config, GLOBAL_CONFIG)
        .with_context(|| format!("writing {}", config.display()))?;
    let stdout_path = work.join("last.stdout");
    let stderr_path = work.join("last.stderr");
    let mut child = Command::new(mongosh)
        .arg("--quiet")
        .arg(format!("mongodb://127.0.0.1:{port}/test"))
        .args(args)
        .current_dir(repo_root())
        .env("HOME", &home)
        .env("MONGOSH_GLOBAL_CONFIG_FILE_FOR_TESTING", &config)
        .env("MONGOSH_FORCE_DISABLE_TELEMETRY_FOR_TESTING", "1")
        .env("NO_COLOR", "1")
        .env("FORCE_COLOR", "0")
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(&stdout_path).context("creating mongosh's output file")?)
        .stderr(std::fs::File::create(&stderr_path).context("creating mongosh's error file")?)
        .spawn()
        .with_context(|| format!("starting {}", mongosh.display()))?;
    let Some(status) = child
        .wait_timeout(MONGOSH_TIMEOUT)
        .context("waiting for mongosh")?
    else {
        let _ = child.kill();
        let _ = child.wait();
        bail!("mongosh {args:?} timed out after {MONGOSH_TIMEOUT:?}");
    };
    let mut output = std::fs::read_to_string(&stdout_path).unwrap_or_default();
    output.push_str(&std::fs::read_to_string(&stderr_path).unwrap_or_default());
    if !output.is_empty() && !output.ends_with('\n') {
        output.push('\n');
    }
    Ok(MongoshRun {
        success: status.success(),
        status: status.to_string(),
        output,
    })
}
