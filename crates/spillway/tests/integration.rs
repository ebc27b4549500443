//! Every integration test of this crate in one binary (one link instead of one per
//! file, and one test binary's disk space): each file of `tests/` is a module here.
//! The tests that need a process to themselves (kill -9 loops, peak-memory
//! measurements) keep their own binaries; see this crate's `Cargo.toml`.

mod aggregate;
mod aggregate_patterns;
mod backend_suite;
mod bad_input;
mod change_streams;
mod collation;
mod collection_options;
mod command_surface;
mod commands;
mod crud;
mod driver_shapes;
mod error_labels;
mod explain;
mod format_image;
mod geospatial;
mod insert_many;
mod maintenance;
mod min_max;
mod model;
mod pattern_model;
mod pattern_projection;
mod pattern_rename;
mod pattern_safety;
mod pattern_verify;
mod patterns;
mod recovery;
mod repair;
mod text_search;
mod timeseries;
mod transactions;
mod transparency;
mod validation;
mod views;
