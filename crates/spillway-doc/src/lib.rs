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
//! | [`model`] | a plain in-memory collection with MongoDB semantics: the reference model |
//!
//! ## Features
//!
//! None is on by default, so that the rest builds alone and without a C compiler:
//!
//! | feature | brings | dependencies |
//! |---|---|---|
//! | `js` | `$where` | `rquickjs` (QuickJS, compiled from C) |
//! | `collation` | collations other than `simple` | `icu_collator`, `icu_locale_core` |
//! | `geo` | `$geoWithin`, `$geoIntersects`, `$near`, `$nearSphere` | `geo` |
//! | `text` | `$text` | `rust-stemmers`, `icu_normalizer` |
//!
//! Without a feature, its module keeps its name and the types the rest of the crate
//! mentions, and a filter or collation that needs it is refused when parsed, with an error
//! naming the operator and the feature (`$where needs spillway-doc's `js` feature`): a
//! [`DocError::InvalidFilter`] or [`DocError::InvalidCollation`], which the facade answers
//! with MongoDB's BadValue (2). The `spillway` facade turns all four on.
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

pub use bson;
pub use error::{DocError, Result};
