//! MongoDB find projections: inclusion, exclusion, `$slice`, `$elemMatch` and positional
//! `field.$`, parsed once and applied to documents.
//!
//! Being written; the parser refuses every projection until it lands.

use bson::Document;

use crate::error::{DocError, Result};

/// A parsed projection.
#[derive(Debug, Clone, PartialEq)]
pub struct Projection {
    _private: (),
}

impl Projection {
    /// Parses a projection document.
    pub fn parse(_projection: &Document) -> Result<Projection> {
        Err(DocError::InvalidProjection {
            message: "projections are not implemented yet".to_string(),
        })
    }

    /// Applies the projection to a document.
    pub fn apply(&self, document: &Document) -> Result<Document> {
        Ok(document.clone())
    }
}
