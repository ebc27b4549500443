//! Every integration test of this crate in one binary (one link instead of one per
//! file, and one test binary's disk space): each file of `tests/` is a module here.
//! The tests that need a process to themselves (kill -9 loops, peak-memory
//! measurements) keep their own binaries; see this crate's `Cargo.toml`.

mod common;

mod auth;
mod driver;
mod embedded;
mod failpoint;
mod frame_proptest;
mod limits;
mod raw_socket;
mod roles;
mod scripts;
mod tls;
