//! What the end-to-end tests of the `spillway` binary share: running it in a directory, and
//! its output as text.

#![allow(dead_code, reason = "each test file uses its own subset of these")]

use std::path::Path;
use std::process::{Command, Output};

/// Runs the `spillway` binary with `args` in `directory` (shell history kept there too).
pub(crate) fn spillway(args: &[&str], directory: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_spillway"))
        .args(args)
        .current_dir(directory)
        .env("SPILLWAY_HISTORY", directory.join("history"))
        .output()
        .expect("the binary runs")
}

pub(crate) fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

pub(crate) fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}
