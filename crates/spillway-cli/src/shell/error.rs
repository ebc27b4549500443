//! [`ShellError`]: why a statement was refused, and where.
//!
//! Every error carries the position in the whole input (script file or typed lines) that it
//! concerns, so that [`ShellError::render`] can show the line with a caret under the column.
//! A statement that fails changes nothing: parse and argument errors happen before anything
//! runs, and each database operation is atomic.

use std::fmt;

use spillway_doc::shell::Position;

use crate::excerpt::pointer;

/// What kind of failure.
#[derive(Debug)]
#[non_exhaustive]
pub enum ShellErrorKind {
    /// The text is not a statement: a bracket, a comma, a quote is wrong.
    Syntax,
    /// The statement parses but asks for something the shell does not offer or gives an
    /// argument of the wrong shape: an unknown method, a string where a document goes, an
    /// unknown option.
    Usage,
    /// The database refused the operation (duplicate key, bad filter or update...), with
    /// MongoDB's code and codeName as the command layer reports them.
    Database {
        /// MongoDB's error code (11000 for a duplicate key).
        code: i32,
        /// MongoDB's name for the code (`DuplicateKey`).
        code_name: String,
    },
}

/// A statement that could not run.
#[derive(Debug)]
pub struct ShellError {
    kind: ShellErrorKind,
    message: String,
    position: Position,
}

impl ShellError {
    /// A syntax error at `position`.
    pub fn syntax(position: Position, message: impl Into<String>) -> ShellError {
        ShellError {
            kind: ShellErrorKind::Syntax,
            message: message.into(),
            position,
        }
    }

    /// A usage error at `position`.
    pub fn usage(position: Position, message: impl Into<String>) -> ShellError {
        ShellError {
            kind: ShellErrorKind::Usage,
            message: message.into(),
            position,
        }
    }

    /// The database's refusal of the statement starting at `position`.
    pub fn database(
        position: Position,
        code: i32,
        code_name: impl Into<String>,
        message: impl Into<String>,
    ) -> ShellError {
        ShellError {
            kind: ShellErrorKind::Database {
                code,
                code_name: code_name.into(),
            },
            message: message.into(),
            position,
        }
    }

    /// What kind of failure.
    pub fn kind(&self) -> &ShellErrorKind {
        &self.kind
    }

    /// What was wrong, without the position.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// Where in the input.
    pub fn position(&self) -> Position {
        self.position
    }

    /// The error with the offending line of `source` (the whole input the positions refer
    /// to), cut to a window around the column when it is long, and a caret under the column:
    ///
    /// ```text
    /// SyntaxError: expected ',' or '}' after a field, found identifier 'price' (line 4, column 1)
    ///   4 | price: { value: 1 }
    ///     | ^
    /// ```
    pub fn render(&self, source: &str) -> String {
        let mut out = self.to_string();
        if let Some(line) = source.lines().nth(self.position.line.saturating_sub(1)) {
            out.push('\n');
            out.push_str(&pointer(self.position.line, line, self.position.column));
        }
        out
    }
}

impl fmt::Display for ShellError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let label = match self.kind {
            ShellErrorKind::Syntax => "SyntaxError",
            ShellErrorKind::Usage => "UsageError",
            ShellErrorKind::Database { .. } => "DatabaseError",
        };
        write!(f, "{label}: {} ({})", self.message, self.position)
    }
}

impl std::error::Error for ShellError {}
