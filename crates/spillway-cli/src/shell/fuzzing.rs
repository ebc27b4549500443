//! The statement parser's fuzzing entry point, shared by the cargo-fuzz target
//! `cli_statement` and the stable test `tests/fuzz_inputs.rs`, so that plain `cargo test`
//! checks the same properties on random and mutated inputs.

use super::parse::parse_statement;
use super::split::{is_complete, split_statements};

/// Splits and parses `text`, panicking if a property fails: the splitter and parser never
/// panic, every statement is a slice of the input at the position it reports, and every
/// error points at a line of its statement.
pub fn check_statement_parser(text: &str) {
    let split = split_statements(text);
    assert_eq!(split.complete, is_complete(text));
    let n_lines = text.split('\n').count();
    for statement in &split.statements {
        assert!(
            text[statement.start.offset..].starts_with(statement.text),
            "statement {:?} is not at offset {}",
            statement.text,
            statement.start.offset
        );
        assert!(!statement.text.is_empty());
        if let Err(error) = parse_statement(statement) {
            let position = error.position();
            let last_line = statement.start.line + statement.text.matches('\n').count();
            assert!(
                position.line >= statement.start.line
                    && position.line <= last_line
                    && position.line <= n_lines,
                "error {error} outside statement {:?} at line {}",
                statement.text,
                statement.start.line
            );
            let _ = error.render(text);
        }
    }
}
