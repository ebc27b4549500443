//! What a build without some of the crate's features has in their place.
//!
//! `js`, `geo` and `text` (and `collation`) are off by default, so that the document model,
//! filters, updates, projections and the expression language build alone, without a C
//! compiler. Each submodule here stands in for one module left out and keeps its name and
//! the types the rest of the crate mentions (the filter's `Clause::Where` holds a
//! `javascript::WhereFunction` either way), so that no code outside
//! this module needs a `#[cfg]`. Those types wrap [`NotBuilt`]: no value of them can exist,
//! so their methods are never called. Only the parsers can run, and they refuse the operator
//! with an error that names it and the missing feature, where the operator's other parse
//! errors come from: a [`DocError::InvalidFilter`](crate::error::DocError::InvalidFilter) for
//! `$where`, `$text`, `$geoWithin`, `$geoIntersects`, `$near` and `$nearSphere` (a filter
//! error, answered with MongoDB's BadValue (2) by the facade and the wire server, as an
//! unknown operator is). Collations are refused in the `collation` module itself, whose
//! simple (code point) comparison is always there.

#[cfg(not(feature = "geo"))]
pub mod geospatial;
#[cfg(not(feature = "js"))]
pub mod javascript;
#[cfg(not(feature = "text"))]
pub mod text;

/// A type with no value: what the stand-in types hold, so that none of them can be made.
/// It stays behind a private field, so that code elsewhere, written for the real types,
/// does not read as unreachable.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum NotBuilt {}

/// The message for `what` (an operator, a collation) used in a build without `feature`:
/// `$where needs spillway-doc's `js` feature`.
pub(crate) fn needs_feature(what: &str, feature: &str) -> String {
    format!("{what} needs spillway-doc's `{feature}` feature")
}
