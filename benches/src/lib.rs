//! Shared data generators for Spillway's criterion benchmarks (see `benches/`).
