//! Every integration test of this crate in one binary (one link instead of one per
//! file, and one test binary's disk space): each file of `tests/` is a module here.
//! The tests that need a process to themselves (kill -9 loops, peak-memory
//! measurements) keep their own binaries; see this crate's `Cargo.toml`.

mod common;

mod cli;
mod examples;
mod fuzz_inputs;
mod import_export;
mod interactive;
mod recovery;
mod repair;
mod serve;
mod shell_sessions;
