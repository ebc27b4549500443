//! The shell language: mongosh statements over a Spillway database.
//!
//! The pipeline has one module per step, so that a new command is a new [`Command`]
//! variant, a case in [`parse`] and one in [`execute`]:
//!
//! | step | module | from → to |
//! |---|---|---|
//! | split | [`split`] | input text → statement texts with their positions (and "is the input complete?") |
//! | parse | [`parse`] | statement text → [`Command`], arguments evaluated to BSON |
//! | execute | [`execute`] | [`Command`] → [`Outcome`] through the `spillway` facade |
//! | print | [`mod@print`] | [`Outcome`] → text in mongosh's style |
//! | session | [`session`] | the loop over statements, shared by the interactive shell, `spillway run` and the tests |
//!
//! Literals and the expression grammar come from `spillway_doc::shell`. Nothing here reads
//! or writes database files except through the facade, and nothing evaluates code: a
//! statement is data (a method chain with literal arguments).

pub mod command;
pub mod error;
pub mod execute;
pub mod fuzzing;
pub mod parse;
pub mod print;
pub mod session;
pub mod split;

pub use command::{Command, FindAndModifyOptions, FindQuery, IndexSelector, Operation};
pub use error::{ShellError, ShellErrorKind};
pub use execute::{DEFAULT_BATCH_SIZE, Executor, Outcome, Reply};
pub use parse::parse_statement;
pub use print::render_outcome;
pub use session::{
    ConsoleTranscript, RunOptions, RunSummary, Session, StringTranscript, Transcript,
};
pub use split::{Split, StatementSource, is_complete, split_statements};
