//! The conformance runner's two targets: the reference model and the facade.
//!
//! Each maps the runner's operations onto its API and nothing else: no result shaping, no
//! comparison (those live once, in the runner). Errors become their messages.

use std::sync::Arc;

use anyhow::{Context, Result};
use bson::{Bson, Document, doc};
use spillway::{Collection, Database};
use spillway_doc::model::{
    FindOneAndOptions, FindOptions, MemoryCollection, ReturnDocument, UpdateOptions, UpdateResult,
};
use spillway_doc::pipeline::{PipelineOptions, Source};

use super::{ChangeKind, Outcome, Target};

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

    fn find(&self, filter: &Document, options: &FindOptions) -> Outcome<Vec<Document>> {
        self.collection.find(filter, options).map_err(message)
    }

    fn count_documents(&self, filter: &Document, skip: u64, limit: u64) -> Outcome<u64> {
        self.collection
            .count_documents(filter, skip, limit)
            .map_err(message)
    }

    fn aggregate(
        &self,
        pipeline: &[Document],
        let_vars: Option<&Document>,
    ) -> Outcome<Vec<Document>> {
        let options = PipelineOptions {
            let_vars: let_vars.cloned(),
        };
        self.collection
            .aggregate(pipeline, &options, Arc::new(NoOtherCollections))
            .map_err(message)
    }

    fn estimated_document_count(&self) -> Outcome<u64> {
        Ok(self.collection.documents().len() as u64)
    }

    fn distinct(&self, field: &str, filter: &Document) -> Outcome<Vec<Bson>> {
        self.collection.distinct(field, filter).map_err(message)
    }

    fn insert_one(&mut self, document: Document) -> Outcome<Bson> {
        self.collection.insert_one(document).map_err(message)
    }

    fn insert_many(
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

    fn update(
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

    fn replace_one(
        &mut self,
        filter: &Document,
        replacement: &Document,
        upsert: bool,
    ) -> Outcome<UpdateResult> {
        self.collection
            .replace_one(filter, replacement, upsert)
            .map_err(message)
    }

    fn delete(&mut self, filter: &Document, multi: bool) -> Outcome<u64> {
        self.collection.delete(filter, multi).map_err(message)
    }

    fn find_one_and_delete(
        &mut self,
        filter: &Document,
        options: &FindOneAndOptions,
    ) -> Outcome<Option<Document>> {
        self.collection
            .find_one_and_delete(filter, options)
            .map_err(message)
    }

    fn find_one_and_modify(
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

/// A `Collection<Document>` of an in-memory `spillway::Database`, driven through the fluent
/// API as an application would.
pub(crate) struct FacadeTarget {
    collection: Collection<Document>,
}

/// The collection every test runs in (the suite's tests use one collection each).
const COLLECTION_NAME: &str = "conformance";

fn update_result(result: &spillway::UpdateResult) -> UpdateResult {
    UpdateResult {
        matched_count: result.matched_count,
        modified_count: result.modified_count,
        upserted_id: result.upserted_id.clone(),
    }
}

impl Target for FacadeTarget {
    const NAME: &'static str = "facade";

    fn load(data: &[Document]) -> Result<Self> {
        let database = Database::open_in_memory()?;
        let collection = database.collection::<Document>(COLLECTION_NAME);
        database.create_collection(COLLECTION_NAME)?;
        if !data.is_empty() {
            collection
                .insert_many(data)
                .run()
                .context("inserting the test's data")?;
        }
        Ok(FacadeTarget { collection })
    }

    fn documents(&self) -> Result<Vec<Document>> {
        Ok(self
            .collection
            .find(doc! {})
            .run()?
            .collect::<spillway::Result<_>>()?)
    }

    fn find(&self, filter: &Document, options: &FindOptions) -> Outcome<Vec<Document>> {
        let mut find = self
            .collection
            .find(filter.clone())
            .skip(options.skip)
            .limit(options.limit);
        if let Some(sort) = &options.sort {
            find = find.sort(sort.clone());
        }
        if let Some(projection) = &options.projection {
            find = find.projection(projection.clone());
        }
        find.run().and_then(Iterator::collect).map_err(message)
    }

    fn aggregate(
        &self,
        pipeline: &[Document],
        let_vars: Option<&Document>,
    ) -> Outcome<Vec<Document>> {
        let mut action = self.collection.aggregate(pipeline.to_vec());
        if let Some(let_vars) = let_vars {
            action = action.let_vars(let_vars.clone());
        }
        action.run().and_then(Iterator::collect).map_err(message)
    }

    fn count_documents(&self, filter: &Document, skip: u64, limit: u64) -> Outcome<u64> {
        self.collection
            .count_documents(filter.clone())
            .skip(skip)
            .limit(limit)
            .run()
            .map_err(message)
    }

    fn estimated_document_count(&self) -> Outcome<u64> {
        self.collection.estimated_document_count().map_err(message)
    }

    fn distinct(&self, field: &str, filter: &Document) -> Outcome<Vec<Bson>> {
        self.collection
            .distinct(field, filter.clone())
            .run()
            .map_err(message)
    }

    fn insert_one(&mut self, document: Document) -> Outcome<Bson> {
        self.collection
            .insert_one(document)
            .run()
            .map(|result| result.inserted_id)
            .map_err(message)
    }

    fn insert_many(
        &mut self,
        documents: Vec<Document>,
        ordered: bool,
    ) -> (Vec<(usize, Bson)>, Option<String>) {
        let (inserted, error) = match self
            .collection
            .insert_many(documents)
            .ordered(ordered)
            .run()
        {
            Ok(result) => (result.inserted_ids, None),
            Err(error) => (
                error.inserted_ids().cloned().unwrap_or_default(),
                Some(error.to_string()),
            ),
        };
        let mut inserted: Vec<(usize, Bson)> = inserted.into_iter().collect();
        inserted.sort_by_key(|(position, _)| *position);
        (inserted, error)
    }

    fn update(
        &mut self,
        filter: &Document,
        update: &Document,
        multi: bool,
        options: &UpdateOptions,
    ) -> Outcome<UpdateResult> {
        let action = if multi {
            self.collection.update_many(filter.clone(), update.clone())
        } else {
            self.collection.update_one(filter.clone(), update.clone())
        };
        action
            .upsert(options.upsert)
            .array_filters(options.array_filters.clone())
            .run()
            .map(|result| update_result(&result))
            .map_err(message)
    }

    fn replace_one(
        &mut self,
        filter: &Document,
        replacement: &Document,
        upsert: bool,
    ) -> Outcome<UpdateResult> {
        self.collection
            .replace_one(filter.clone(), replacement)
            .upsert(upsert)
            .run()
            .map(|result| update_result(&result))
            .map_err(message)
    }

    fn delete(&mut self, filter: &Document, multi: bool) -> Outcome<u64> {
        let action = if multi {
            self.collection.delete_many(filter.clone())
        } else {
            self.collection.delete_one(filter.clone())
        };
        action
            .run()
            .map(|result| result.deleted_count)
            .map_err(message)
    }

    fn find_one_and_delete(
        &mut self,
        filter: &Document,
        options: &FindOneAndOptions,
    ) -> Outcome<Option<Document>> {
        let mut action = self.collection.find_one_and_delete(filter.clone());
        if let Some(sort) = &options.sort {
            action = action.sort(sort.clone());
        }
        if let Some(projection) = &options.projection {
            action = action.projection(projection.clone());
        }
        action.run().map_err(message)
    }

    fn find_one_and_modify(
        &mut self,
        filter: &Document,
        change: &Document,
        kind: ChangeKind,
        options: &FindOneAndOptions,
    ) -> Outcome<Option<Document>> {
        let mut action = match kind {
            ChangeKind::Update => self
                .collection
                .find_one_and_update(filter.clone(), change.clone())
                .array_filters(options.array_filters.clone()),
            ChangeKind::Replace => self.collection.find_one_and_replace(filter.clone(), change),
        };
        if let Some(sort) = &options.sort {
            action = action.sort(sort.clone());
        }
        if let Some(projection) = &options.projection {
            action = action.projection(projection.clone());
        }
        action
            .upsert(options.upsert)
            .return_document(match options.return_document {
                ReturnDocument::Before => spillway::ReturnDocument::Before,
                ReturnDocument::After => spillway::ReturnDocument::After,
            })
            .run()
            .map_err(message)
    }
}
