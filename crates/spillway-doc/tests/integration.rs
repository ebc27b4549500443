//! Every integration test of this crate in one binary (one link instead of one per
//! file, and one test binary's disk space): each file of `tests/` is a module here.
//! The tests that need a process to themselves (kill -9 loops, peak-memory
//! measurements) keep their own binaries; see this crate's `Cargo.toml`.

mod collation;
mod date_zones;
mod expressions;
mod filter;
mod filter_errors;
mod filter_props;
mod geospatial;
mod json_schema;
mod key_order;
mod model;
mod pipeline;
mod projection;
mod shell;
mod shell_roundtrip;
mod sort;
mod update;
mod update_errors;
mod update_props;
