//! The shell's statement splitter and parser on arbitrary text: they must never panic, every
//! statement must be a slice of the input at the position reported, and every error must
//! point inside its statement (`spillway_cli::shell::fuzzing::check_statement_parser`).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        spillway_cli::shell::fuzzing::check_statement_parser(text);
    }
});
