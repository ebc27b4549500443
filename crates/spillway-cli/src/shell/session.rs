//! Runs shell input (a typed entry or a whole script) statement by statement: split, parse,
//! execute, print.
//!
//! This is the one path every front end uses: the interactive shell, `spillway run`, and
//! the snapshot tests, so what the tests see is what a user sees. Where the text goes is a
//! [`Transcript`]'s business: the console sends results to stdout and errors to stderr, the
//! tests interleave both with the statements into one string.

use super::error::ShellError;
use super::execute::{Executor, Reply};
use super::parse::parse_statement;
use super::print::render_outcome;
use super::split::split_statements;

/// Where a session's statements, results and errors go.
pub trait Transcript {
    /// A statement is about to run (its text as written).
    fn statement(&mut self, text: &str);
    /// A result to show (never empty).
    fn output(&mut self, text: &str);
    /// An error to show, already rendered with its line and caret.
    fn error(&mut self, text: &str);
}

/// Results to stdout, errors to stderr; statements are not echoed.
#[derive(Debug, Default, Clone, Copy)]
pub struct ConsoleTranscript;

impl Transcript for ConsoleTranscript {
    fn statement(&mut self, _text: &str) {}

    fn output(&mut self, text: &str) {
        crate::outln!("{text}");
    }

    fn error(&mut self, text: &str) {
        eprintln!("{text}");
    }
}

/// Everything in one string, each statement echoed after a `> ` prompt (continuation lines
/// after `... `), as a terminal session would look.
#[derive(Debug, Default, Clone)]
pub struct StringTranscript {
    /// The transcript so far.
    pub text: String,
}

impl Transcript for StringTranscript {
    fn statement(&mut self, text: &str) {
        for (index, line) in text.lines().enumerate() {
            self.text.push_str(if index == 0 { "> " } else { "... " });
            self.text.push_str(line);
            self.text.push('\n');
        }
    }

    fn output(&mut self, text: &str) {
        self.text.push_str(text);
        self.text.push('\n');
    }

    fn error(&mut self, text: &str) {
        self.text.push_str(text);
        self.text.push('\n');
    }
}

/// How [`Session::run`] treats errors.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RunOptions {
    /// Go on with the next statement after an error (the interactive shell does; a script
    /// stops unless `--keep-going`).
    pub keep_going: bool,
}

/// What [`Session::run`] did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RunSummary {
    /// Statements that ran successfully.
    pub statements_succeeded: usize,
    /// Lines (1-based, in the input) of the statements that failed, in order.
    pub failed_lines: Vec<usize>,
    /// True if an `exit` statement was reached.
    pub exited: bool,
}

/// A shell session on one database: the executor, and its state between inputs.
#[derive(Debug)]
pub struct Session {
    executor: Executor,
}

impl Session {
    /// A session running commands with `executor`.
    pub fn new(executor: Executor) -> Session {
        Session { executor }
    }

    /// The executor (and through it the database).
    pub fn executor(&self) -> &Executor {
        &self.executor
    }

    /// Runs every statement of `source` in order, writing to `transcript`. Stops at the first
    /// error unless `options.keep_going`, and at `exit`.
    pub fn run(
        &mut self,
        source: &str,
        options: RunOptions,
        transcript: &mut dyn Transcript,
    ) -> RunSummary {
        let mut summary = RunSummary::default();
        for statement in split_statements(source).statements {
            transcript.statement(statement.text);
            let result = parse_statement(&statement)
                .and_then(|command| self.executor.execute(&command, statement.start));
            match result {
                Ok(outcome) => {
                    summary.statements_succeeded += 1;
                    let text = render_outcome(&outcome);
                    if !text.is_empty() {
                        transcript.output(&text);
                    }
                    if outcome.reply == Reply::Exit {
                        summary.exited = true;
                        break;
                    }
                }
                Err(error) => {
                    summary
                        .failed_lines
                        .push(error_line(&error, statement.start.line));
                    transcript.error(&error.render(source));
                    if !options.keep_going {
                        break;
                    }
                }
            }
        }
        summary
    }
}

/// The line an error is reported on (its own position, which is never before the statement).
fn error_line(error: &ShellError, statement_line: usize) -> usize {
    error.position().line.max(statement_line)
}
