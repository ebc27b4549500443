//! What the catalog records of a view: the collection it is defined on and its pipeline
//! ([`ViewDefinition`]). Checking and resolving definitions is the `views` module's.

use bson::{Bson, Document, doc};

/// What a view reads: the collection (or view) it is defined on and the stages it runs on
/// that one's documents. Names are stored collection names.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ViewDefinition {
    pub(crate) view_on: String,
    pub(crate) pipeline: Vec<Document>,
}

impl ViewDefinition {
    /// The catalog record's `view` field.
    pub(crate) fn to_record(&self) -> Document {
        doc! { "viewOn": &self.view_on, "pipeline": self.pipeline.clone() }
    }

    /// Reads a catalog record's `view` field; `None` if it is not one.
    pub(crate) fn from_record(record: &Document) -> Option<ViewDefinition> {
        let view_on = record.get_str("viewOn").ok()?.to_string();
        let pipeline = record
            .get_array("pipeline")
            .ok()?
            .iter()
            .map(|stage| match stage {
                Bson::Document(stage) => Some(stage.clone()),
                _ => None,
            })
            .collect::<Option<Vec<_>>>()?;
        Some(ViewDefinition { view_on, pipeline })
    }
}
