//! One step of a task: a command (usually `cargo ...`) echoed with its step's name, timed,
//! and turned into an error when it fails. Every task that runs cargo's tools goes through
//! here, so CI's log reads the same whatever task printed it.

use std::path::Path;
use std::process::Command;
use std::time::Instant;

use anyhow::{Context, Result, bail};

/// `cargo ARGS` run in `root` (the cargo that runs xtask, when known).
pub(crate) fn cargo(root: &Path, args: &[&str]) -> Command {
    let mut command = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()));
    command.current_dir(root).args(args);
    command
}

/// Runs `command` as the step `name`: echoed before, timed, an error if it fails.
pub(crate) fn step(name: &str, mut command: Command) -> Result<()> {
    println!("\n== {name}: {}", describe(&command));
    let started = Instant::now();
    let status = command
        .status()
        .with_context(|| format!("could not start {name}"))?;
    if !status.success() {
        bail!("{name} failed ({status})");
    }
    println!("== {name}: ok in {:.0?}", started.elapsed());
    Ok(())
}

/// Like [`step`], but captures the command's standard output (echoed once it ends, standard
/// error streams through) and returns it.
pub(crate) fn step_capturing(name: &str, mut command: Command) -> Result<String> {
    println!("\n== {name}: {}", describe(&command));
    let started = Instant::now();
    let output = command
        .stderr(std::process::Stdio::inherit())
        .output()
        .with_context(|| format!("could not start {name}"))?;
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    print!("{stdout}");
    if !output.status.success() {
        bail!("{name} failed ({})", output.status);
    }
    println!("== {name}: ok in {:.0?}", started.elapsed());
    Ok(stdout)
}

/// The command as typed: its program's file name (`cargo`, `npm`, `node`), then its arguments.
fn describe(command: &Command) -> String {
    let program = Path::new(command.get_program())
        .file_name()
        .map(|name| name.to_string_lossy().into_owned())
        .unwrap_or_default();
    let args: Vec<_> = command
        .get_args()
        .map(|arg| arg.to_string_lossy().into_owned())
        .collect();
    format!("{program} {}", args.join(" "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_step_is_described_by_its_own_program() {
        let mut npm = Command::new("npm");
        npm.args(["ci", "--ignore-scripts"]);
        assert_eq!(describe(&npm), "npm ci --ignore-scripts");
        let mut cargo = Command::new("/root/.cargo/bin/cargo");
        cargo.args(["build", "--release"]);
        assert_eq!(describe(&cargo), "cargo build --release");
    }
}
