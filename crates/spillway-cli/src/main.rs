//! The `spillway` command (being written).

fn main() {}
