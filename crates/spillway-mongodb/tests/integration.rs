//! Every integration test of this crate in one binary (one link instead of one per
//! file, and one test binary's disk space): each file of `tests/` is a module here.
//! The tests that need a process to themselves (kill -9 loops, peak-memory
//! measurements) keep their own binaries; see this crate's `Cargo.toml`.

mod common;

mod api;
mod backend_suite;
mod concurrency;
mod retries;
