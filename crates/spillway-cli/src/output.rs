//! Standard output that ends quietly when its reader goes away: `spillway run s.js | head`
//! closes the pipe after ten lines, and the command then exits at its next write with
//! status 0 and no message, as Unix tools do (Rust ignores SIGPIPE, so a write fails with
//! `BrokenPipe` where `println!` would panic).
//!
//! Every line the CLI prints to stdout goes through [`outln!`](crate::outln) (or [`write()`]);
//! writers that return errors instead (`export`, `advise`, `demo`) let them reach `main`,
//! which treats a broken pipe the same way ([`is_broken_pipe`]). Stderr is not routed here.

use std::fmt;
use std::io::{self, Write};

/// Writes `text` to stdout; a closed pipe ends the process quietly (status 0), any other
/// failure ends it with a message on stderr (status 1).
pub fn write(text: fmt::Arguments<'_>) {
    let mut stdout = io::stdout().lock();
    if let Err(error) = stdout.write_fmt(text).and_then(|()| stdout.flush()) {
        if error.kind() == io::ErrorKind::BrokenPipe {
            std::process::exit(0);
        }
        eprintln!("error: cannot write to standard output: {error}");
        std::process::exit(1);
    }
}

/// Whether `error`, or any error in its chain, is a write to a closed pipe.
pub fn is_broken_pipe(error: &anyhow::Error) -> bool {
    error.chain().any(|cause| {
        cause
            .downcast_ref::<io::Error>()
            .is_some_and(|io| io.kind() == io::ErrorKind::BrokenPipe)
    })
}

/// `println!` through [`write()`]: a closed pipe ends the process quietly.
#[macro_export]
macro_rules! outln {
    () => {
        $crate::output::write(format_args!("\n"))
    };
    ($($arg:tt)*) => {
        $crate::output::write(format_args!("{}\n", format_args!($($arg)*)))
    };
}

/// `print!` through [`write()`].
#[macro_export]
macro_rules! out {
    ($($arg:tt)*) => {
        $crate::output::write(format_args!($($arg)*))
    };
}
