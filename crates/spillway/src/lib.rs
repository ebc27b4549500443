//! spillway (being written).
