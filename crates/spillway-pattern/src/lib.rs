//! spillway-pattern (being written).
