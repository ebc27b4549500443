//! spillway-pattern: MongoDB's Outlier and Subset schema patterns, applied automatically.
//!
//! The application declares a [`Pattern`] once; the engine then keeps every main document
//! small while the *logical* document (what the application would have stored without the
//! pattern) stays whole and reachable. It works over any storage that implements the small
//! [`ReadBackend`] / [`WriteBackend`] traits: the embedded `spillway` database today, a MongoDB
//! deployment through the official driver later.
//!
//! | module | what it holds |
//! |---|---|
//! | `policy` | [`Pattern`] and its builders, defaults, validation and catalog record |
//! | `backend` | the storage traits and the [`Write`]s of an atomic batch |
//! | `engine` | [`Engine`]: expand, insert, rewrite, append, delete; side-collection resync |
//! | `outlier` | the outlier layout: main prefix, flag, dense numbered buckets |
//! | `subset` | the subset layout: archive documents, top N in the main document |
//! | `verify` | [`verify`] and its [`Violation`]s |
//! | `error` | [`PatternError`] |
//! | [`advisor`] | the advisor: array-length and size distributions, outliers, a proposed policy |
//!
//! This crate must never know the storage format: it reads and writes documents only through
//! the backend traits.

pub mod advisor;
mod backend;
mod engine;
mod error;
mod outlier;
mod policy;
mod subset;
mod verify;

pub use backend::{Query, ReadBackend, Write, WriteBackend};
pub use engine::{
    Engine, Policy, Progress, check_adoptable, check_document, check_side_write, logical_len, page,
    policies_on_side, prepare_side_insert, resync, side_documents,
};
pub use error::PatternError;
pub use policy::{
    BUCKET_FIELD, DEFAULT_BUCKET_CAPACITY, DEFAULT_KEEP, DEFAULT_THRESHOLD, OutlierPattern,
    Pattern, PatternKind, SEQUENCE_FIELD, Shape, SubsetPattern,
};
pub use verify::{Violation, verify};
