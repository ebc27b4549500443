//! The outlier and subset schema patterns, applied automatically (being written).
//!
//! | module | what it does |
//! |---|---|
//! | [`advisor`] | reads a collection's array-length and document-size distributions and proposes an Outlier or Subset policy with its threshold |

pub mod advisor;
