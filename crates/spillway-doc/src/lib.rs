#![doc = include_str!("../README.md")]
//!
//! ## Modules
//!
//! | module | what it does |
//! |---|---|
//! | [`path`] | dotted field paths: parse, get, set, unset, array traversal for queries |
//! | [`collation`] | language-aware string order (MongoDB's `collation` option; `collation` feature) |
//! | [`compare`] | BSON comparison order across types, numbers by value |
//! | [`decode`] | raw BSON to `Document` straight from the bytes, whole or some top-level fields |
//! | [`raw`] | raw BSON walked and written element by element: splices without decoding |
//! | [`key`] | a memcomparable byte encoding of BSON values with the same order |
//! | [`filter`] | the query language, parsed once and evaluated on `RawDocument` |
//! | [`geospatial`] | GeoJSON and legacy locations, geospatial regions and distances (`geo` feature) |
//! | [`javascript`] | `$where`: JavaScript on QuickJS, per-thread engines, deadlines (`js` feature) |
//! | [`update`] | update operators and replacement documents |
//! | [`expr`] | aggregation expressions, parsed once and evaluated on documents |
//! | [`pipeline`] | aggregation pipelines: stages parsed once, run as a stream |
//! | [`projection`] | inclusion, exclusion, `$slice`, `$elemMatch` projections |
//! | [`sort`] | sort specifications |
//! | [`shell`] | mongosh literals and Extended JSON |
//! | [`size`] | exact BSON sizes and the document limits |
//! | [`text`] | text search: tokens, stems, `$text` matching and scores (`text` feature) |
//! | [`timeseries`] | time series buckets: MongoDB's bucket format, packed and unpacked |
//! | [`value_set`] | values kept once each under MongoDB's equality and a collation: `distinct`, `$addToSet`, the set expressions |
//! | [`model`] | a plain in-memory collection with MongoDB semantics: the reference model |
//!
//! Without a feature, its module keeps its name and the types the rest of the crate
//! mentions, from the private `disabled` module, which holds every stand-in (a collation's is
//! in `collation`, whose simple comparison is always there).
//!
//! Modules are layered, each using only those below it (bottom first): `error`, `number`,
//! `decode`, `geospatial` → `path`, `disabled`, `size`, `regex_matcher`, `javascript`, `text`
//! → `collation`, `shell` → `compare` → `key`, `sort`, `timeseries`, `value_set` → `expr` →
//! `filter` → `pipeline`, `projection` → `update` → `model`.

// MongoDB's error codes (5439014...) are written as MongoDB's documentation writes them.
#![allow(clippy::unreadable_literal)]

pub mod collation;
pub mod compare;
pub mod decode;
#[cfg(not(all(
    feature = "js",
    feature = "collation",
    feature = "geo",
    feature = "text"
)))]
mod disabled;
pub mod error;
pub mod expr;
pub mod filter;
#[cfg(feature = "geo")]
pub mod geospatial;
#[cfg(not(feature = "geo"))]
pub use disabled::geospatial;
#[cfg(feature = "js")]
pub mod javascript;
#[cfg(not(feature = "js"))]
pub use disabled::javascript;
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
#[cfg(feature = "text")]
pub mod text;
#[cfg(not(feature = "text"))]
pub use disabled::text;
pub mod timeseries;
pub mod update;
pub mod value_set;

pub use bson;
pub use error::{DocError, Result};
