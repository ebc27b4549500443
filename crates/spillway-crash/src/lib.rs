//! spillway-crash: the kill -9 harness the crash tests share (the store's write batches, the
//! facade's transactions, the pattern layer's pushes and migrations).
//!
//! The method: a crash test is a `harness = false` test binary that re-executes itself as a
//! child process (an environment variable names the child's database directory, so the same
//! `main` knows which side it is on). The child writes with an fsync per commit and prints
//! one line per acknowledged write (`ack N`) on stdout, flushed at once. The parent reads the
//! lines as they come, kills the child with SIGKILL at a random moment ([`Child::kill`]),
//! reopens the database and checks that every acknowledged write survived and nothing else
//! changed; then the next child continues on the same directory. A line the child printed
//! was printed after its commit returned, so "acknowledged" means exactly what an
//! application would have been told.
//!
//! ```no_run
//! use std::time::Duration;
//! use spillway_crash::{Child, Random, child_directory, iterations, last_ack};
//!
//! const CHILD_ENV: &str = "MY_CRASH_CHILD";
//! if let Some(dir) = child_directory(CHILD_ENV) {
//!     // open the database in `dir`, write, and `Acks::ack` after each commit; never return
//! #   return;
//! }
//! let dir = std::env::temp_dir().join("my-crash-test");
//! let mut random = Random::from_clock();
//! for iteration in 0..iterations(10) {
//!     let mut child = Child::spawn(CHILD_ENV, &dir, &[]);
//!     child.sleep_alive(Duration::from_millis(random.below(300)), iteration);
//!     let lines = child.kill();
//!     let acknowledged: Option<u64> = last_ack(&lines);
//!     // reopen `dir` and check that everything up to `acknowledged` is there
//! }
//! ```

use std::ffi::OsStr;
use std::fmt::Display;
use std::io::{BufRead, BufReader, StdoutLock, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::str::FromStr;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{self, Receiver};
use std::thread::JoinHandle;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// The environment variable that sets how many kills a loop does.
pub const ITERATIONS_ENV: &str = "SPILLWAY_CRASH_ITERATIONS";

/// How many kills to do: [`ITERATIONS_ENV`], or `default`.
///
/// # Panics
/// When the variable is set to something that is not a number.
pub fn iterations(default: u32) -> u32 {
    std::env::var(ITERATIONS_ENV).ok().map_or(default, |value| {
        value
            .parse()
            .unwrap_or_else(|_| panic!("{ITERATIONS_ENV} must be a number, not {value:?}"))
    })
}

/// The child's directory when this process is a child (the variable `child_env` is set).
pub fn child_directory(child_env: &str) -> Option<PathBuf> {
    std::env::var_os(child_env).map(PathBuf::from)
}

/// A small xorshift generator seeded from the clock: kill moments differ from run to run.
#[derive(Debug, Clone)]
pub struct Random(u64);

impl Random {
    /// A generator seeded from the system clock.
    pub fn from_clock() -> Random {
        let nanos = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |elapsed| elapsed.as_nanos());
        Random(nanos as u64 | 1)
    }

    /// A number in `0..bound`.
    pub fn below(&mut self, bound: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % bound
    }
}

/// The child's side: lines printed and flushed at once, so that the parent has seen every
/// acknowledgement made before the kill.
pub struct Acks {
    stdout: StdoutLock<'static>,
}

impl Default for Acks {
    fn default() -> Self {
        Acks::new()
    }
}

impl Acks {
    /// Locks stdout for the child's reports.
    pub fn new() -> Acks {
        Acks {
            stdout: std::io::stdout().lock(),
        }
    }

    /// Reports `line` (a phase the parent may wait for, such as `ready`).
    ///
    /// # Panics
    /// When stdout is gone (the parent died).
    pub fn line(&mut self, line: &str) {
        writeln!(self.stdout, "{line}").expect("child: report");
        self.stdout.flush().expect("child: flush");
    }

    /// Reports that write `n` was acknowledged: call it after the commit returned.
    pub fn ack(&mut self, n: impl Display) {
        self.line(&format!("ack {n}"));
    }
}

/// A running child, its stdout read by a thread as it comes.
pub struct Child {
    process: std::process::Child,
    lines: Receiver<String>,
    acks: Arc<AtomicU64>,
    reader: JoinHandle<Vec<String>>,
}

impl Child {
    /// Starts this test binary again as a child with `child_env` set to `dir`, and the other
    /// variables in `env`.
    ///
    /// # Panics
    /// When the child cannot be started.
    pub fn spawn(child_env: &str, dir: &Path, env: &[(&str, &str)]) -> Child {
        let exe = std::env::current_exe().expect("the test binary's path");
        let mut command = Command::new(exe);
        command
            .env(child_env, dir)
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit());
        for (name, value) in env {
            command.env(name, OsStr::new(value));
        }
        let mut process = command.spawn().expect("spawn the child");
        let stdout = process.stdout.take().expect("the child's stdout");
        let acks = Arc::new(AtomicU64::new(0));
        let (sender, lines) = mpsc::channel();
        let reader = {
            let acks = Arc::clone(&acks);
            std::thread::spawn(move || {
                let mut seen = Vec::new();
                for line in BufReader::new(stdout).lines() {
                    let Ok(line) = line else { break };
                    if line.starts_with("ack ") {
                        acks.fetch_add(1, Ordering::SeqCst);
                    }
                    let _ = sender.send(line.clone());
                    seen.push(line);
                }
                seen
            })
        };
        Child {
            process,
            lines,
            acks,
            reader,
        }
    }

    /// Waits until the child prints `line` (a phase such as `ready`).
    ///
    /// # Panics
    /// When it does not within two minutes, or exits first.
    pub fn wait_for(&self, line: &str, context: impl Display) {
        loop {
            let printed = self
                .lines
                .recv_timeout(Duration::from_secs(120))
                .unwrap_or_else(|_| panic!("{context}: the child never printed '{line}'"));
            if printed == line {
                return;
            }
        }
    }

    /// How many `ack` lines the child has printed so far.
    pub fn acks_seen(&self) -> u64 {
        self.acks.load(Ordering::SeqCst)
    }

    /// Sleeps `delay`, then checks that the child is still running (a child must never end
    /// by itself: it would mean it failed).
    ///
    /// # Panics
    /// When the child has exited.
    pub fn sleep_alive(&mut self, delay: Duration, context: impl Display) {
        std::thread::sleep(delay);
        if let Some(status) = self.process.try_wait().expect("poll the child") {
            panic!("{context}: the child exited on its own with {status}");
        }
    }

    /// Kills the child with SIGKILL, reaps it, and returns every line it printed.
    ///
    /// # Panics
    /// When the child cannot be killed or reaped.
    pub fn kill(mut self) -> Vec<String> {
        self.process.kill().expect("kill -9 the child");
        self.process.wait().expect("reap the child");
        self.reader.join().expect("the reader thread")
    }
}

/// The number of the last `ack` line, if any.
///
/// # Panics
/// When an `ack` line does not end in a number of type `N`.
pub fn last_ack<N: FromStr>(lines: &[String]) -> Option<N> {
    lines
        .iter()
        .filter_map(|line| line.strip_prefix("ack "))
        .map(|n| {
            n.parse()
                .unwrap_or_else(|_| panic!("an ack line without a number: 'ack {n}'"))
        })
        .next_back()
}

/// How many `ack` lines there are.
pub fn ack_count(lines: &[String]) -> u64 {
    lines.iter().filter(|line| line.starts_with("ack ")).count() as u64
}
