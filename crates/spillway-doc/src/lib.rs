//! MongoDB's document language on top of the [`bson`] crate.
//!
//! `spillway-doc` knows nothing about storage, collections or patterns: it evaluates
//! MongoDB filters, updates, projections and sorts over `bson` documents (raw or decoded),
//! orders BSON values the way MongoDB does (and encodes them as byte keys with the same
//! order, for indexes), and reads Extended JSON and mongosh-style literals.
//!
//! | module | what it does |
//! |---|---|
//! | [`path`] | dotted field paths: parse, get, set, unset, array traversal for queries |
//! | [`collation`] | language-aware string order (MongoDB's `collation` option) |
//! | [`compare`] | BSON comparison order across types, numbers by value |
//! | [`decode`] | raw BSON to `Document` straight from the bytes, whole or some top-level fields |
//! | [`raw`] | raw BSON walked and written element by element: splices without decoding |
//! | [`key`] | a memcomparable byte encoding of BSON values with the same order |
//! | [`filter`] | the query language, parsed once and evaluated on `RawDocument` |
//! | [`geospatial`] | GeoJSON and legacy locations, geospatial regions and distances |
//! | [`javascript`] | `$where`: JavaScript on QuickJS, per-thread engines, deadlines |
//! | [`update`] | update operators and replacement documents |
//! | [`expr`] | aggregation expressions, parsed once and evaluated on documents |
//! | [`pipeline`] | aggregation pipelines: stages parsed once, run as a stream |
//! | [`projection`] | inclusion, exclusion, `$slice`, `$elemMatch` projections |
//! | [`sort`] | sort specifications |
//! | [`shell`] | mongosh literals and Extended JSON |
//! | [`size`] | exact BSON sizes and the document limits |
//! | [`text`] | text search: tokens, stems, `$text` matching and scores |
//! | [`timeseries`] | time series buckets: MongoDB's bucket format, packed and unpacked |
//! | [`model`] | a plain in-memory collection with MongoDB semantics: the reference model |
//!
//! Modules are layered, each using only those below it (bottom first): `error`, `number`,
//! `decode`, `geospatial` → `path`, `collation`, `size`, `regex_matcher`, `javascript`,
//! `shell`, `text` → `compare` → `expr`, `key`, `sort`, `timeseries` → `filter` →
//! `pipeline`, `projection` → `update` → `model`.

// MongoDB's error codes (5439014...) are written as MongoDB's documentation writes them.
#![allow(clippy::unreadable_literal)]

pub mod collation;
pub mod compare;
pub mod decode;
pub mod error;
pub mod expr;
pub mod filter;
pub mod geospatial;
pub mod javascript;
pub mod key;
pub mod model;
mod number;
pub mod path;
pub mod pipeline;
pub mod projection;
pub mod raw;
mod regex_matcher;
pub mod shell;
pub mod size;
pub mod sort;
pub mod text;
pub mod timeseries;
pub mod update;

pub use bson;
pub use error::{DocError, Result};
