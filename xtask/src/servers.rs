//! The servers that the real-client tasks (`cargo xtask pymongo`, `cargo xtask mongosh`) run
//! against: `spillway serve` on a fresh temporary directory, or the peer SecantusDB in memory,
//! each on a free loopback port that the server picks itself (`--port 0`) and announces on a
//! `listening on HOST:PORT` line.
//!
//! A [`RunningServer`] is killed when it is dropped, so that no task leaves a server behind,
//! even when it fails half-way. This module must never bind or connect anywhere but 127.0.0.1,
//! and never reuse a data directory between runs.

use std::fs::File;
use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use tempfile::TempDir;

use crate::shared::{repo_root, target_dir};
use crate::step::{cargo, step};

/// The flag that turns authentication on, the same for both servers.
const AUTH_FLAG: &str = "--auth";

/// How long a server has to print its `listening on` line.
const STARTUP_TIMEOUT: Duration = Duration::from_secs(60);

/// Which server a run is against.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ServerKind {
    /// `spillway serve DIR --port 0 --bind 127.0.0.1 --enable-test-commands`, from this
    /// repository's release build (test commands on, as for the peer: the drivers' suites
    /// configure fail points).
    Spillway,
    /// `secantusd-py --host 127.0.0.1 --port 0 --storage-path :memory: --enable-test-commands`,
    /// the peer, from its own virtual environment.
    Secantus,
}

impl ServerKind {
    /// The name used in tables, file names and log lines.
    pub(crate) fn label(self) -> &'static str {
        match self {
            ServerKind::Spillway => "spillway",
            ServerKind::Secantus => "secantusdb",
        }
    }
}

/// A server program ready to start: which kind, the executable, and whether it requires
/// authentication (`--auth`; the first user then comes from the client by the localhost
/// exception).
#[derive(Clone, Debug)]
pub(crate) struct ServerProgram {
    pub(crate) kind: ServerKind,
    pub(crate) executable: PathBuf,
    pub(crate) auth: bool,
    /// Clients reach the server through `spillway serve --upstream` (this `spillway`) in
    /// front of it, rather than directly.
    pub(crate) through_proxy: Option<PathBuf>,
}

impl ServerProgram {
    /// The name in tables, file names and log lines: the kind's, after `proxy-` when clients
    /// reach it through the proxy.
    pub(crate) fn label(&self) -> String {
        match self.through_proxy {
            Some(_) => format!("proxy-{}", self.kind.label()),
            None => self.kind.label().to_owned(),
        }
    }
}

/// Builds `spillway` in release mode and returns its program.
pub(crate) fn build_spillway() -> Result<ServerProgram> {
    step(
        "build spillway (release)",
        cargo(
            &repo_root(),
            &["build", "--release", "--package", "spillway-cli"],
        ),
    )?;
    let executable = target_dir().join("release").join("spillway");
    if !executable.is_file() {
        bail!(
            "the release build did not leave {} behind",
            executable.display()
        );
    }
    Ok(ServerProgram {
        kind: ServerKind::Spillway,
        executable,
        auth: false,
        through_proxy: None,
    })
}

/// A started server, killed when dropped. Its standard output and error go to a log file.
pub(crate) struct RunningServer {
    child: Child,
    port: u16,
    // Held so that spillway's data directory lives exactly as long as its server.
    _data_dir: Option<TempDir>,
}

impl RunningServer {
    /// Starts `program` on a free loopback port and waits for its `listening on` line; every
    /// line it prints goes to `log`.
    pub(crate) fn start(program: &ServerProgram, log: &Path) -> Result<Self> {
        Self::start_with(program, None, &[], log)
    }

    /// Like [`RunningServer::start`], with `extra` arguments after spillway's own (the peer
    /// ignores them).
    pub(crate) fn start_with_args(
        program: &ServerProgram,
        extra: &[String],
        log: &Path,
    ) -> Result<Self> {
        Self::start_with(program, None, extra, log)
    }

    /// Like [`RunningServer::start`], but the server stores its data in `dir` (kept when the
    /// server stops, so that a restart finds the same data).
    pub(crate) fn start_in(program: &ServerProgram, dir: &Path, log: &Path) -> Result<Self> {
        Self::start_with(program, Some(dir), &[], log)
    }

    fn start_with(
        program: &ServerProgram,
        dir: Option<&Path>,
        extra: &[String],
        log: &Path,
    ) -> Result<Self> {
        let mut command = Command::new(&program.executable);
        let data_dir = match program.kind {
            ServerKind::Spillway if dir.is_some() => {
                command.arg("serve").arg(dir.expect("checked")).args([
                    "--port",
                    "0",
                    "--bind",
                    "127.0.0.1",
                    "--enable-test-commands",
                ]);
                None
            }
            ServerKind::Spillway => {
                let dir = tempfile::Builder::new()
                    .prefix("spillway-serve-")
                    .tempdir()
                    .context("creating a data directory for spillway serve")?;
                command.arg("serve").arg(dir.path()).args([
                    "--port",
                    "0",
                    "--bind",
                    "127.0.0.1",
                    "--enable-test-commands",
                ]);
                command.args(extra);
                Some(dir)
            }
            ServerKind::Secantus => {
                // Test commands (configureFailPoint) on: SecantusDB's own driver-conformance
                // runs turn them on, so the peer is measured in its best configuration.
                command.args(["--host", "127.0.0.1", "--port", "0", "--storage-path"]);
                match dir {
                    Some(dir) => command.arg(dir),
                    None => command.arg(":memory:"),
                };
                command.arg("--enable-test-commands");
                None
            }
        };
        if program.auth {
            command.arg(AUTH_FLAG);
        }
        Self::spawn_listening(command, program.kind.label(), data_dir, log)
    }

    /// Starts `spillway serve --upstream` (the executable `spillway`) in front of the server
    /// listening on loopback port `upstream`, on a free loopback port.
    pub(crate) fn start_proxy(spillway: &Path, upstream: u16, log: &Path) -> Result<Self> {
        let mut command = Command::new(spillway);
        command.args([
            "serve",
            "--upstream",
            &format!("mongodb://127.0.0.1:{upstream}/"),
            "--port",
            "0",
            "--bind",
            "127.0.0.1",
            "--enable-test-commands",
        ]);
        Self::spawn_listening(command, "spillway serve --upstream", None, log)
    }

    /// Spawns `command`, its output lines into `log`, and waits for its `listening on` line.
    fn spawn_listening(
        mut command: Command,
        label: &str,
        data_dir: Option<TempDir>,
        log: &Path,
    ) -> Result<Self> {
        if let Some(parent) = log.parent() {
            std::fs::create_dir_all(parent)
                .with_context(|| format!("creating {}", parent.display()))?;
        }
        let log_file = Arc::new(Mutex::new(
            File::create(log).with_context(|| format!("creating {}", log.display()))?,
        ));
        let mut child = command
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .with_context(|| format!("starting {label}"))?;

        let (lines_tx, lines_rx) = mpsc::channel::<String>();
        let stdout = child.stdout.take().expect("stdout is piped");
        let stderr = child.stderr.take().expect("stderr is piped");
        forward_lines(stdout, Arc::clone(&log_file), lines_tx.clone());
        forward_lines(stderr, log_file, lines_tx);

        let started = Instant::now();
        let mut seen = Vec::new();
        let port = loop {
            let left = STARTUP_TIMEOUT.saturating_sub(started.elapsed());
            match lines_rx.recv_timeout(left) {
                Ok(line) => {
                    if let Some(port) = listening_port(&line) {
                        break port;
                    }
                    seen.push(line);
                }
                Err(RecvTimeoutError::Timeout) => {
                    let _ = child.kill();
                    let _ = child.wait();
                    bail!(
                        "{label} printed no 'listening on' line within {STARTUP_TIMEOUT:?}; its output:\n{}",
                        seen.join("\n")
                    );
                }
                Err(RecvTimeoutError::Disconnected) => {
                    let status = child.wait().context("waiting for a server that stopped")?;
                    bail!(
                        "{label} exited ({status}) before it was listening; its output:\n{}",
                        seen.join("\n")
                    );
                }
            }
        };
        Ok(RunningServer {
            child,
            port,
            _data_dir: data_dir,
        })
    }

    /// The loopback port the server listens on.
    pub(crate) fn port(&self) -> u16 {
        self.port
    }

    /// The server's process id.
    pub(crate) fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Whether the server is still running (a test file that crashed it shows up here).
    pub(crate) fn is_running(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(None))
    }
}

impl RunningServer {
    /// Kills the server with SIGKILL (no shutdown, no flush) and reaps it.
    pub(crate) fn kill_hard(mut self) -> Result<()> {
        self.child.kill().context("sending SIGKILL to the server")?;
        self.child.wait().context("reaping the killed server")?;
        Ok(())
    }
}

impl RunningServer {
    /// Stops the server as an operator would (SIGTERM, through `kill`), so that what it
    /// acknowledged is on disk when it restarts on the same directory; SIGKILL after 30 s.
    pub(crate) fn stop_gracefully(mut self) -> Result<()> {
        use wait_timeout::ChildExt;
        let status = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status()
            .context("running kill -TERM")?;
        if status.success()
            && self
                .child
                .wait_timeout(Duration::from_secs(30))
                .context("waiting for the server to stop")?
                .is_some()
        {
            return Ok(());
        }
        bail!("the server did not stop within 30 s of SIGTERM")
    }
}

impl Drop for RunningServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Copies every line of `stream` to `log`, and to `lines` for as long as someone listens (the
/// start-up wait); keeps draining afterwards so that the server never blocks on a full pipe.
fn forward_lines(
    stream: impl Read + Send + 'static,
    log: Arc<Mutex<File>>,
    lines: mpsc::Sender<String>,
) {
    thread::spawn(move || {
        let mut reader = BufReader::new(stream);
        let mut buffer = Vec::new();
        loop {
            buffer.clear();
            match reader.read_until(b'\n', &mut buffer) {
                Ok(0) | Err(_) => break,
                Ok(_) => {
                    if let Ok(mut file) = log.lock() {
                        let _ = file.write_all(&buffer);
                    }
                    let line = String::from_utf8_lossy(&buffer).trim_end().to_string();
                    let _ = lines.send(line);
                }
            }
        }
    });
}

/// The port of a `... listening on 127.0.0.1:PORT ...` line (spillway's and SecantusDB's
/// start-up lines both have this shape).
pub(crate) fn listening_port(line: &str) -> Option<u16> {
    let (_, rest) = line.split_once("listening on ")?;
    let address = rest.split_whitespace().next()?;
    let (_, port) = address.rsplit_once(':')?;
    port.trim_end_matches(|c: char| !c.is_ascii_digit())
        .parse()
        .ok()
}

#[cfg(test)]
mod tests {
    use super::listening_port;

    #[test]
    fn finds_the_port_in_both_servers_startup_lines() {
        assert_eq!(listening_port("listening on 127.0.0.1:27017"), Some(27017));
        assert_eq!(
            listening_port(
                "2026-11-25 02:36:45,668 INFO secantus.server: secantus listening on 127.0.0.1:37373"
            ),
            Some(37373)
        );
        assert_eq!(listening_port("listening on [::1]:5000."), Some(5000));
        assert_eq!(listening_port("opening the store"), None);
        assert_eq!(listening_port("listening on 127.0.0.1"), None);
    }
}
