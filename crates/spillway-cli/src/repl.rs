//! The interactive shell: rustyline line editing and history over a shell [`Session`].
//!
//! An entry is complete when its brackets balance: until then Enter starts a new line of the
//! same entry (rustyline's validator asks [`is_complete`]), so a multi-line statement is
//! edited, stored in the history and recalled (up arrow) as one entry. Ctrl-C abandons the
//! entry being typed, Ctrl-D or `exit` leaves.
//!
//! History lives in `$SPILLWAY_HISTORY` if set, else `$HOME/.spillway_history`, never in
//! the database directory (which belongs to the store). This module must never interpret
//! statements: that is the session's job.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Result;
use rustyline::completion::Completer;
use rustyline::error::ReadlineError;
use rustyline::highlight::Highlighter;
use rustyline::hint::Hinter;
use rustyline::history::DefaultHistory;
use rustyline::validate::{ValidationContext, ValidationResult, Validator};
use rustyline::{Editor, Helper};

use crate::shell::{ConsoleTranscript, Executor, RunOptions, Session, is_complete};

/// Where the history is kept: `$SPILLWAY_HISTORY`, else `$HOME/.spillway_history`.
pub fn history_path() -> Option<PathBuf> {
    if let Some(path) = std::env::var_os("SPILLWAY_HISTORY") {
        return Some(PathBuf::from(path));
    }
    std::env::var_os("HOME").map(|home| PathBuf::from(home).join(".spillway_history"))
}

/// Keeps Enter from submitting an entry whose brackets are still open.
struct StatementValidator;

impl Validator for StatementValidator {
    fn validate(&self, context: &mut ValidationContext<'_>) -> rustyline::Result<ValidationResult> {
        if is_complete(context.input()) {
            Ok(ValidationResult::Valid(None))
        } else {
            Ok(ValidationResult::Incomplete)
        }
    }
}

impl Completer for StatementValidator {
    type Candidate = String;
}

impl Hinter for StatementValidator {
    type Hint = String;
}

impl Highlighter for StatementValidator {}

impl Helper for StatementValidator {}

/// Reads, runs and prints entries until `exit` or end of input.
///
/// When standard input is not a terminal (`spillway shell db < script`), it is read whole
/// and run like a script that goes on after errors; the exit code is then 1 if any
/// statement failed.
pub fn run(executor: Executor) -> Result<ExitCode> {
    if !std::io::stdin().is_terminal() {
        let mut source = String::new();
        std::io::Read::read_to_string(&mut std::io::stdin(), &mut source)?;
        let mut session = Session::new(executor);
        let summary = session.run(
            &source,
            RunOptions { keep_going: true },
            &mut ConsoleTranscript,
        );
        return Ok(if summary.failed_lines.is_empty() {
            ExitCode::SUCCESS
        } else {
            ExitCode::FAILURE
        });
    }
    let mut editor: Editor<StatementValidator, DefaultHistory> = Editor::new()?;
    editor.set_helper(Some(StatementValidator));
    let history = history_path();
    if let Some(path) = &history {
        // A missing history file is normal on first use.
        let _ = editor.load_history(path);
    }
    crate::outln!("Spillway shell. Type help for the statements, exit to leave.");
    let mut session = Session::new(executor);
    loop {
        let entry = match editor.readline("spillway> ") {
            Ok(entry) => entry,
            Err(ReadlineError::Interrupted) => continue,
            Err(ReadlineError::Eof) => break,
            Err(error) => return Err(error.into()),
        };
        if entry.trim().is_empty() {
            continue;
        }
        editor.add_history_entry(entry.as_str())?;
        let summary = session.run(
            &entry,
            RunOptions { keep_going: true },
            &mut ConsoleTranscript,
        );
        if summary.exited {
            break;
        }
    }
    if let Some(path) = &history
        && let Err(error) = editor.save_history(path)
    {
        eprintln!("could not save the history to {}: {error}", path.display());
    }
    Ok(ExitCode::SUCCESS)
}
