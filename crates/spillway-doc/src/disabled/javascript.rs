//! `$where` in a build without the `js` feature: refused when parsed.
//!
//! The `js` feature runs `$where` on QuickJS, which `rquickjs` compiles from C.

use bson::{Bson, RawDocument};

use crate::disabled::{NotBuilt, needs_feature};
use crate::error::{DocError, Result};

/// A `$where` clause, which this build cannot hold: [`WhereFunction::parse`] refuses it.
#[derive(Debug, Clone, PartialEq)]
pub struct WhereFunction(NotBuilt);

impl WhereFunction {
    /// Refuses `$where`: it needs the `js` feature.
    pub fn parse(_value: &Bson) -> Result<WhereFunction> {
        Err(DocError::filter("", needs_feature("$where", "js")))
    }

    /// The JavaScript source (never called: no value exists).
    pub fn source(&self) -> &str {
        match self.0 {}
    }

    /// Whether `document` matches (never called: no value exists).
    pub fn matches(&self, _document: &RawDocument) -> Result<bool> {
        match self.0 {}
    }
}
