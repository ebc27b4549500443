//! Project automation (being written).

fn main() {}
