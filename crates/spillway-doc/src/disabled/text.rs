//! `$text` in a build without the `text` feature: refused when parsed.
//!
//! The `text` feature brings tokens, stems (`rust-stemmers`), diacritic folding (ICU4X's
//! normalizer) and scores.

use std::sync::Arc;

use bson::{Bson, Document, RawDocument};

use crate::disabled::{NotBuilt, needs_feature};
use crate::error::{DocError, Result};

/// A `$text` query, which this build cannot hold: [`TextQuery::parse`] refuses it.
#[derive(Debug, Clone, PartialEq)]
pub struct TextQuery(NotBuilt);

/// A `$text` clause (no value exists in this build).
#[derive(Debug, Clone, PartialEq)]
pub struct TextSearch(NotBuilt);

/// A text index (no value exists in this build).
#[derive(Debug, Clone, PartialEq)]
pub struct TextIndex(NotBuilt);

/// A `$text` query bound to a text index (no value exists in this build).
#[derive(Debug)]
pub struct BoundSearch(NotBuilt);

impl TextQuery {
    /// Refuses `$text`: it needs the `text` feature.
    pub fn parse(_value: &Bson) -> Result<TextQuery> {
        Err(DocError::filter("", needs_feature("$text", "text")))
    }
}

impl TextSearch {
    /// An unbound search for `query` (never called: no query exists).
    #[allow(
        clippy::needless_pass_by_value,
        reason = "the signature of the real `TextSearch::new`"
    )]
    pub fn new(query: TextQuery) -> TextSearch {
        match query.0 {}
    }

    /// Binds the search to a text index (never called: no value exists).
    pub fn bind(&mut self, _index: Arc<TextIndex>) {
        match self.0 {}
    }

    /// The bound search (never called: no value exists).
    pub fn bound(&self) -> Option<&Arc<BoundSearch>> {
        match self.0 {}
    }

    /// Whether `document` matches (never called: no value exists).
    pub fn matches(&self, _document: &RawDocument) -> Result<bool> {
        match self.0 {}
    }
}

impl BoundSearch {
    /// The score of a raw document (never called: no value exists).
    pub fn score(&self, _document: &RawDocument) -> f64 {
        match self.0 {}
    }

    /// The score of a document (never called: no value exists).
    pub fn score_document(&self, _document: &Document) -> f64 {
        match self.0 {}
    }
}
