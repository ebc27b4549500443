#![doc = include_str!("../README.md")]
//!
//! ## Modules
//!
//! The engine works through [`Pattern`], the [`ReadBackend`] / [`WriteBackend`] traits and
//! [`Layer`]; [`MemoryBackend`] is the reference backend.
//!
//! | module | what it holds |
//! |---|---|
//! | `policy` | [`Pattern`] and its builders, defaults, validation and catalog record |
//! | `backend` | the storage traits and the [`Write`]s of an atomic batch |
//! | `role` | [`Role`]: plain, main or side collection, decided once per statement |
//! | `engine` | [`Engine`]: expand, insert, rewrite, append, delete; side-collection resync |
//! | [`writes`] | the write paths of a statement: insert, update (append fast path or expand, apply, split), delete, direct side writes and their resync, drop |
//! | `statement` | [`Statement`]: the batches of one statement over many documents, applied together |
//! | [`matching`] | filters on logical documents: what touches a managed field, union plans over both sides' indexes |
//! | [`migration`] | declaring and removing policies; batched, resumable migrations |
//! | [`layer`] | [`Layer`]: MongoDB's operations on logical documents over any transactional backend |
//! | `memory` | [`MemoryBackend`]: the backend over in-memory collections, the reference |
//! | `suite` | the backend test suite every backend's tests run (feature `suite`) |
//! | `raw` | expanded logical documents spliced from raw BSON, nothing decoded or re-encoded |
//! | `outlier` | the outlier layout: main prefix, flag, dense numbered buckets |
//! | `subset` | the subset layout: archive documents, top N in the main document |
//! | `verify` | [`verify`] and its [`Violation`]s |
//! | `error` | [`PatternError`] |
//!
//! The advisor, which proposes policies from a collection's shape, is the `spillway-advisor`
//! crate. This crate must never know the storage format: it reads and writes documents only through
//! the backend traits.

pub use bson;

mod backend;
mod engine;
mod error;
pub mod layer;
pub mod matching;
mod memory;
pub mod migration;
mod outlier;
mod policy;
mod raw;
mod role;
mod statement;
mod subset;
#[cfg(feature = "suite")]
pub mod suite;
mod verify;
pub mod writes;

pub use backend::{Query, ReadBackend, Write, WriteBackend};
pub use engine::{
    Engine, check_adoptable, check_document, check_side_write, logical_len, page, policies_on_side,
    prepare_side_insert, resync, side_documents,
};
pub use error::{Input, PatternError};
pub use layer::{Layer, Transactional, UpdateResult};
pub use memory::{MemoryBackend, MemoryError};
pub use policy::{
    BUCKET_FIELD, DEFAULT_BUCKET_CAPACITY, DEFAULT_KEEP, DEFAULT_THRESHOLD, OUTLIER_OPTIONS,
    OutlierPattern, Pattern, PatternKind, Policy, Progress, SEQUENCE_FIELD, SUBSET_OPTIONS, Shape,
    SubsetPattern,
};
pub use raw::RawState;
pub use role::Role;
pub use statement::{Buffered, Statement};
pub use verify::{Violation, verify};
