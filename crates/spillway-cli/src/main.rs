//! The `spillway` command: parses the command line and hands it to
//! [`spillway_cli::app::run`]. Everything else lives in the `spillway_cli` library so that
//! tests run the same code.

use std::process::ExitCode;

use clap::Parser;
use spillway_cli::app::{Cli, run};
use spillway_cli::output::is_broken_pipe;

fn main() -> ExitCode {
    match run(Cli::parse()) {
        Ok(code) => code,
        // The reader of stdout went away (`| head`): stop quietly, as Unix tools do.
        Err(error) if is_broken_pipe(&error) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("error: {error:#}");
            ExitCode::FAILURE
        }
    }
}
