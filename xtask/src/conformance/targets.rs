//! The conformance runner's two targets: the reference model and the command layer.
//!
//! Each maps the runner's operations onto its API and nothing else: no result shaping, no
//! comparison (those live once, in the runner). Errors become their messages.

use std::rc::Rc;
use std::sync::Arc;

use anyhow::{Context, Result};
use bson::{Bson, Document, doc};
use spillway::Database;
use spillway::command::Commands;
use spillway_doc::model::{
    FindOneAndOptions, FindOptions, MemoryCollection, UpdateOptions, UpdateResult,
};
use spillway_doc::pipeline::{PipelineOptions, Source};

use super::driver::{Driver, Namespace};
use super::{ChangeKind, Outcome, Produced, Target};

fn message(error: impl std::fmt::Display) -> String {
    error.to_string()
}

/// The model holds one collection: a stage that reads another finds it empty.
struct NoOtherCollections;

impl Source for NoOtherCollections {
    fn documents(
        &self,
        _collection: &str,
        _filter: &Document,
    ) -> spillway_doc::Result<Box<dyn Iterator<Item = spillway_doc::Result<Document>> + '_>> {
        Ok(Box::new(std::iter::empty()))
    }
}

/// [`MemoryCollection`], the reference model.
pub(crate) struct ModelTarget {
    collection: MemoryCollection,
}

impl ModelTarget {
    pub(super) fn find(&self, filter: &Document, options: &FindOptions) -> Outcome<Vec<Document>> {
        self.collection.find(filter, options).map_err(message)
    }

    pub(super) fn count_documents(&self, filter: &Document, skip: u64, limit: u64) -> Outcome<u64> {
        self.collection
            .count_documents(filter, skip, limit)
            .map_err(message)
    }

    pub(super) fn aggregate(
        &self,
        pipeline: &[Document],
        let_vars: Option<&Document>,
    ) -> Outcome<Vec<Document>> {
        let options = PipelineOptions {
            let_vars: let_vars.cloned(),
            ..PipelineOptions::default()
        };
        self.collection
            .aggregate(pipeline, &options, Arc::new(NoOtherCollections))
            .map_err(message)
    }

    pub(super) fn estimated_document_count(&self) -> u64 {
        self.collection.documents().len() as u64
    }

    pub(super) fn distinct(&self, field: &str, filter: &Document) -> Outcome<Vec<Bson>> {
        self.collection.distinct(field, filter).map_err(message)
    }

    pub(super) fn insert_one(&mut self, document: Document) -> Outcome<Bson> {
        self.collection.insert_one(document).map_err(message)
    }

    pub(super) fn insert_many(
        &mut self,
        documents: Vec<Document>,
        ordered: bool,
    ) -> (Vec<(usize, Bson)>, Option<String>) {
        let (inserted, failures) = self.collection.insert_many(documents, ordered);
        let first_failure = failures
            .first()
            .map(|(position, error)| format!("write {position}: {error}"));
        (inserted, first_failure)
    }

    pub(super) fn update(
        &mut self,
        filter: &Document,
        update: &Document,
        multi: bool,
        options: &UpdateOptions,
    ) -> Outcome<UpdateResult> {
        self.collection
            .update(filter, update, multi, options)
            .map_err(message)
    }

    pub(super) fn replace_one(
        &mut self,
        filter: &Document,
        replacement: &Document,
        upsert: bool,
    ) -> Outcome<UpdateResult> {
        self.collection
            .replace_one(filter, replacement, upsert)
            .map_err(message)
    }

    pub(super) fn delete(&mut self, filter: &Document, multi: bool) -> Outcome<u64> {
        self.collection.delete(filter, multi).map_err(message)
    }

    pub(super) fn find_one_and_delete(
        &mut self,
        filter: &Document,
        options: &FindOneAndOptions,
    ) -> Outcome<Option<Document>> {
        self.collection
            .find_one_and_delete(filter, options)
            .map_err(message)
    }

    pub(super) fn find_one_and_modify(
        &mut self,
        filter: &Document,
        change: &Document,
        _kind: ChangeKind,
        options: &FindOneAndOptions,
    ) -> Outcome<Option<Document>> {
        // The model tells an update from a replacement by the change's keys.
        self.collection
            .find_one_and_modify(filter, change, options)
            .map_err(message)
    }
}
impl Target for ModelTarget {
    const NAME: &'static str = "model";

    fn load(data: &[Document]) -> Result<Self> {
        let mut collection = MemoryCollection::new();
        for document in data {
            collection
                .insert_one(document.clone())
                .map_err(|error| anyhow::anyhow!("{error}"))?;
        }
        Ok(ModelTarget { collection })
    }

    fn documents(&self) -> Result<Vec<Document>> {
        Ok(self.collection.documents().to_vec())
    }

    fn run(&mut self, name: &str, arguments: &Document) -> Result<Produced> {
        super::model_operation(self, name, arguments)
    }
}

/// The command layer (`spillway::command::Commands` over an in-memory database), driven as
/// a driver drives a server: each operation becomes the command a driver sends
/// ([`Driver`]), and results and errors are read from the replies.
pub(crate) struct CommandTarget {
    driver: Driver,
}

/// The database and collection the CRUD v1 tests run in.
const NAMESPACE: Namespace<'static> = Namespace {
    database: "crud",
    collection: "test",
};

impl Target for CommandTarget {
    const NAME: &'static str = "command layer";

    fn load(data: &[Document]) -> Result<Self> {
        let database = Database::open_in_memory().context("opening an in-memory database")?;
        let driver = Driver::new(Rc::new(Commands::new(database)));
        driver
            .command(
                NAMESPACE.database,
                doc! { "create": NAMESPACE.collection },
                None,
                false,
            )
            .map_err(|error| anyhow::anyhow!("create: {error}"))?;
        if !data.is_empty() {
            let documents: Vec<Bson> = data.iter().cloned().map(Bson::Document).collect();
            driver
                .command(
                    NAMESPACE.database,
                    doc! { "insert": NAMESPACE.collection, "documents": documents },
                    None,
                    false,
                )
                .map_err(|error| anyhow::anyhow!("loading data: {error}"))?;
        }
        Ok(CommandTarget { driver })
    }

    fn documents(&self) -> Result<Vec<Document>> {
        let found = self
            .driver
            .collection_operation(NAMESPACE, "find", &doc! { "filter": {} }, None)
            .map_err(|error| anyhow::anyhow!("reading the collection: {error}"))?;
        Ok(match found {
            Bson::Array(items) => items
                .into_iter()
                .filter_map(|item| match item {
                    Bson::Document(document) => Some(document),
                    _ => None,
                })
                .collect(),
            _ => Vec::new(),
        })
    }

    fn run(&mut self, name: &str, arguments: &Document) -> Result<Produced> {
        Ok(
            match self
                .driver
                .collection_operation(NAMESPACE, name, arguments, None)
            {
                Ok(result) => Produced {
                    result,
                    error: None,
                },
                Err(error) => Produced {
                    result: error.partial.clone().map_or(Bson::Null, |partial| *partial),
                    error: Some(error.to_string()),
                },
            },
        )
    }
}
