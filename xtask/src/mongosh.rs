//! `cargo xtask mongosh`: the real MongoDB shell, installed from npm, against `spillway serve`
//! (or, with `--peer`, against SecantusDB, to check the harness itself).
//!
//! It installs the pinned `mongosh` package into `target/mongosh/` (reused while the pin is
//! unchanged) and, each on a fresh server:
//! - checks that `db.runCommand({ping: 1})` answers `ok: 1`;
//! - runs each mongosh example (`examples/mongosh/outlier.js`, `examples/mongosh/subset.js`:
//!   the seeds' statements with the policy declared by the `setPattern` command) with
//!   `mongosh --quiet mongodb://127.0.0.1:PORT/test --file ...` and compares what mongosh
//!   printed with its snapshot in `xtask/mongosh-expected/` (`--update` rewrites the snapshots
//!   after a change that is meant);
//! - drives an interactive mongosh through tmux, as a user types: a `let`, a `for` loop, a
//!   query that fills more than one batch, and `it` for the next one.
//!
//! Any difference fails the task. Against the peer the snapshots are not compared (the peer
//! has no pattern commands); the ping and the interactive session are.
//!
//! mongosh runs with its home directory and global configuration under `target/mongosh/`, with
//! telemetry and update checks off: it must never reach anything but the server on 127.0.0.1.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail, ensure};
use wait_timeout::ChildExt;

use crate::servers::{RunningServer, ServerProgram, build_spillway};
use crate::shared::{repo_root, target_dir};

/// The pinned mongosh (npm package `mongosh`, which depends on `@mongosh/cli-repl` of the same
/// version).
const MONGOSH_VERSION: &str = "2.12.0";

/// The mongosh examples, relative to the repository.
const EXAMPLES: &[&str] = &["examples/mongosh/outlier.js", "examples/mongosh/subset.js"];

/// Where each example's expected output lives: `<dir>/<example stem>.out`.
const SNAPSHOT_DIR: &str = "xtask/mongosh-expected";

/// How long one mongosh invocation may take.
const MONGOSH_TIMEOUT: Duration = Duration::from_secs(300);

/// How long the interactive session may wait for one answer.
const TMUX_STEP_TIMEOUT: Duration = Duration::from_secs(60);

/// mongosh's global configuration: telemetry off for good, no update checks.
const GLOBAL_CONFIG: &str = "mongosh:\n  forceDisableTelemetry: true\n  updateURL: \"\"\n";

/// `cargo xtask mongosh [--peer] [--update]`.
#[derive(clap::Args, Default)]
pub(crate) struct Options {
    /// Run against SecantusDB instead (a ping and the interactive session; checks the harness)
    #[arg(long)]
    pub(crate) peer: bool,
    /// Rewrite the examples' snapshots in xtask/mongosh-expected/ (Spillway's, so not with
    /// --peer)
    #[arg(long, conflicts_with = "peer")]
    pub(crate) update: bool,
}

/// Runs the task; see the module documentation.
pub(crate) fn run(options: &Options) -> Result<()> {
    let work = target_dir().join("mongosh");
    let mongosh = ensure_mongosh(&work)?;
    let program = if options.peer {
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

    let mut problems = Vec::new();
    if !options.peer {
        for example in EXAMPLES {
            if let Err(problem) = run_example(&mongosh, &work, &program, example, options.update) {
                problems.push(format!("{example}: {problem:#}"));
            }
        }
    }
    let server = RunningServer::start(&program, &logs.join(format!("{label}-tmux.server.log")))?;
    let session = interactive_session(&mongosh, &work, server.port());
    drop(server);
    match session {
        Ok(()) => println!("\n== interactive mongosh through tmux against {label}: as expected"),
        Err(problem) => problems.push(format!("the interactive session: {problem:#}")),
    }
    if !problems.is_empty() {
        bail!(
            "mongosh {MONGOSH_VERSION} against {label}:\n  {}",
            problems.join("\n  ")
        );
    }
    println!(
        "\nmongosh {MONGOSH_VERSION} against {label}: ping, {} examples and the interactive session as expected",
        if options.peer { 0 } else { EXAMPLES.len() }
    );
    Ok(())
}

/// Runs one example on a fresh server and compares (or, with `update`, saves) its output.
fn run_example(
    mongosh: &Path,
    work: &Path,
    program: &ServerProgram,
    example: &str,
    update: bool,
) -> Result<()> {
    let name = Path::new(example)
        .file_stem()
        .and_then(|stem| stem.to_str())
        .unwrap_or("example");
    let label = program.kind.label();
    let server = RunningServer::start(
        program,
        &work.join("logs").join(format!("{label}-{name}.server.log")),
    )?;
    let script = repo_root().join(example);
    let run = run_mongosh(
        mongosh,
        work,
        server.port(),
        &["--file", &script.to_string_lossy()],
    )?;
    drop(server);
    println!(
        "\n== mongosh --file {example} against {label}: {}",
        run.status
    );
    print!("{}", run.output);
    let saved = work.join(format!("{label}-{name}.out"));
    std::fs::write(&saved, &run.output).with_context(|| format!("writing {}", saved.display()))?;
    ensure!(run.success, "mongosh exited with {}", run.status);
    let snapshot = repo_root().join(SNAPSHOT_DIR).join(format!("{name}.out"));
    if update {
        std::fs::create_dir_all(snapshot.parent().expect("a directory"))?;
        std::fs::write(&snapshot, &run.output)
            .with_context(|| format!("writing {}", snapshot.display()))?;
        println!("updated {}", snapshot.display());
        return Ok(());
    }
    let expected = std::fs::read_to_string(&snapshot).with_context(|| {
        format!(
            "reading {} (write it with `cargo xtask mongosh --update`)",
            snapshot.display()
        )
    })?;
    if let Some(difference) = first_difference(&expected, &run.output) {
        bail!(
            "the output differs from {} ({difference}); the whole output is in {}; \
             `cargo xtask mongosh --update` accepts it if the change is meant",
            snapshot.display(),
            saved.display()
        );
    }
    Ok(())
}

/// The first line where `actual` departs from `expected`, described for a person.
fn first_difference(expected: &str, actual: &str) -> Option<String> {
    let mut expected_lines = expected.lines();
    let mut actual_lines = actual.lines();
    for number in 1.. {
        match (expected_lines.next(), actual_lines.next()) {
            (None, None) => return None,
            (Some(want), Some(got)) if want == got => {}
            (want, got) => {
                return Some(format!(
                    "line {number}: expected {:?}, got {:?}",
                    want.unwrap_or("<end of output>"),
                    got.unwrap_or("<end of output>")
                ));
            }
        }
    }
    None
}

/// One step of the interactive session: what the user types, and what must appear after it.
struct Step {
    input: &'static str,
    expect: &'static str,
}

/// What the interactive session types. mongosh prints 20 documents a batch and says
/// `Type "it" for more`; `it` prints the rest.
const SESSION: &[Step] = &[
    Step {
        input: "let total = 0",
        expect: "",
    },
    Step {
        input: "for (let i = 0; i < 25; i++) { db.typed.insertOne({ i: i, square: i * i }); total += i }",
        expect: "",
    },
    Step {
        input: "total",
        expect: "300",
    },
    Step {
        input: "db.typed.find({}, { _id: 0 }).sort({ i: 1 })",
        expect: "Type \"it\" for more",
    },
    Step {
        input: "it",
        expect: "square: 576",
    },
    Step {
        input: "db.typed.countDocuments({ square: { $gt: 100 } })",
        expect: "14",
    },
];

/// Runs [`SESSION`] in an interactive mongosh inside a detached tmux session, reading the
/// screen after each step.
fn interactive_session(mongosh: &Path, work: &Path, port: u16) -> Result<()> {
    let tmux_works = Command::new("tmux")
        .arg("-V")
        .output()
        .is_ok_and(|output| output.status.success());
    ensure!(
        tmux_works,
        "tmux is not installed: the interactive mongosh session needs it (Debian/Ubuntu: apt-get install tmux)"
    );
    let session = format!("spillway-mongosh-{}", std::process::id());
    let home = prepare_home(work)?;
    let shell_command = format!(
        "env HOME='{}' MONGOSH_GLOBAL_CONFIG_FILE_FOR_TESTING='{}' MONGOSH_FORCE_DISABLE_TELEMETRY_FOR_TESTING=1 \
         NO_COLOR=1 '{}' --quiet mongodb://127.0.0.1:{port}/test",
        home.display(),
        work.join("mongosh.conf").display(),
        mongosh.display()
    );
    let status = Command::new("tmux")
        .args(["new-session", "-d", "-s", &session, "-x", "200", "-y", "50"])
        .arg(&shell_command)
        .status()
        .context("starting tmux")?;
    ensure!(status.success(), "tmux new-session failed ({status})");
    let result = drive_session(&session);
    let transcript = capture(&session).unwrap_or_default();
    let _ = Command::new("tmux")
        .args(["kill-session", "-t", &session])
        .status();
    let saved = work.join("tmux-session.txt");
    let _ = std::fs::write(&saved, &transcript);
    println!(
        "\n== interactive mongosh through tmux (screen saved to {})",
        saved.display()
    );
    print!("{transcript}");
    result
}

fn drive_session(session: &str) -> Result<()> {
    // The first prompt: mongosh is connected and waiting.
    wait_for_screen(session, 0, "test>")?;
    for step in SESSION {
        let before = prompt_count(&capture(session)?);
        Command::new("tmux")
            .args(["send-keys", "-t", session, "-l", step.input])
            .status()
            .context("tmux send-keys")?;
        Command::new("tmux")
            .args(["send-keys", "-t", session, "Enter"])
            .status()
            .context("tmux send-keys")?;
        // Done when a new prompt follows the answer.
        let screen = wait_for_screen(session, before, "test>")?;
        let answer = screen
            .rsplit_once(step.input)
            .map_or(screen.as_str(), |(_, after)| after);
        ensure!(
            !answer.contains("Error"),
            "`{}` failed: {}",
            step.input,
            answer.trim()
        );
        ensure!(
            answer.contains(step.expect),
            "`{}` did not print {:?}; it printed: {}",
            step.input,
            step.expect,
            answer.trim()
        );
    }
    Ok(())
}

/// The visible screen and its scroll-back.
fn capture(session: &str) -> Result<String> {
    let output = Command::new("tmux")
        .args(["capture-pane", "-p", "-J", "-S", "-", "-t", session])
        .output()
        .context("tmux capture-pane")?;
    ensure!(output.status.success(), "tmux capture-pane failed");
    Ok(String::from_utf8_lossy(&output.stdout).into_owned())
}

fn prompt_count(screen: &str) -> usize {
    screen
        .lines()
        .filter(|line| line.trim_start().contains("test>"))
        .count()
}

/// Polls the screen until it shows more than `prompts` prompts.
fn wait_for_screen(session: &str, prompts: usize, prompt: &str) -> Result<String> {
    let started = Instant::now();
    loop {
        let screen = capture(session)?;
        if prompt_count(&screen) > prompts {
            return Ok(screen);
        }
        if started.elapsed() > TMUX_STEP_TIMEOUT {
            bail!(
                "no `{prompt}` prompt after {TMUX_STEP_TIMEOUT:?}; the screen: {}",
                screen.trim()
            );
        }
        std::thread::sleep(Duration::from_millis(100));
    }
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

/// mongosh's home directory and global configuration under `work`; returns the home.
fn prepare_home(work: &Path) -> Result<PathBuf> {
    let home = work.join("home");
    std::fs::create_dir_all(&home).with_context(|| format!("creating {}", home.display()))?;
    let config = work.join("mongosh.conf");
    std::fs::write(&config, GLOBAL_CONFIG)
        .with_context(|| format!("writing {}", config.display()))?;
    Ok(home)
}

/// `mongosh --quiet mongodb://127.0.0.1:PORT/test ARGS`, standard output then standard error.
fn run_mongosh(mongosh: &Path, work: &Path, port: u16, args: &[&str]) -> Result<MongoshRun> {
    let home = prepare_home(work)?;
    let config = work.join("mongosh.conf");
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equal_outputs_have_no_difference() {
        assert_eq!(first_difference("a\nb\n", "a\nb\n"), None);
    }

    #[test]
    fn the_first_differing_line_is_named() {
        assert_eq!(
            first_difference("a\nb\nc\n", "a\nB\nc\n").as_deref(),
            Some("line 2: expected \"b\", got \"B\"")
        );
        assert_eq!(
            first_difference("a\nb\n", "a\n").as_deref(),
            Some("line 2: expected \"b\", got \"<end of output>\"")
        );
    }

    #[test]
    fn only_prompt_lines_count_as_prompts() {
        let screen = "test> let total = 0\n\ntest> total\n300\ntest> ";
        assert_eq!(prompt_count(screen), 3);
        assert_eq!(prompt_count("Current Mongosh Log ID: 1\n"), 0);
    }
}
