//! Every integration test of this crate in one binary (one link instead of one per
//! file, and one test binary's disk space): each file of `tests/` is a module here.
//! The tests that need a process to themselves (kill -9 loops, peak-memory
//! measurements) keep their own binaries; see this crate's `Cargo.toml`.

mod basics;
mod bit_rot;
mod checkpoint_blocks;
mod fallback;
mod faults;
mod fuzz_inputs;
mod log_damage;
mod mapped_checkpoint;
mod media;
mod model;
mod repair;
mod torn_tail;
mod written_limit;
