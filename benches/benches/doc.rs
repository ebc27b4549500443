//! Benchmarks of the document language (being written).

fn main() {}
