//! `Database::bulk_write`: many writes, to any collections, in one call, as the driver's
//! `Client::bulk_write` (MongoDB 8.0's `bulkWrite`).
//!
//! ```
//! use spillway::{Database, WriteModel, doc, bson::Document};
//!
//! let db = Database::open_in_memory()?;
//! let books = db.collection::<Document>("books");
//! let models = vec![
//!     books.insert_one_model(doc! { "_id": 1, "title": "Dune" })?,
//!     books.insert_one_model(doc! { "_id": 1, "title": "a duplicate" })?,
//!     books.update_one_model(doc! { "_id": 1 }, doc! { "$set": { "year": 1965 } }),
//!     db.collection::<Document>("log").insert_one_model(doc! { "_id": "x" })?,
//! ];
//! // Unordered: every operation runs; the duplicate fails alone.
//! let error = db.bulk_write(models).ordered(false).run().unwrap_err();
//! let spillway::ErrorKind::BulkWrite(failure) = error.kind() else { unreachable!() };
//! assert_eq!(failure.write_errors.keys().copied().collect::<Vec<_>>(), [1]);
//! assert_eq!(failure.write_errors[&1].code(), Some(11000));
//! assert_eq!(failure.partial_result.inserted_count, 2);
//! assert_eq!(failure.partial_result.modified_count, 1);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! As in MongoDB, a bulk write is not atomic: each operation commits on its own (ordered,
//! the first failure stops the rest; unordered, every operation runs), unless the bulk write
//! runs in a transaction (`.session(..)`), whose first failure dooms it whole. Every
//! operation goes through the collection's ordinary action, so policies, validators and
//! indexes apply as they do to a single write. This module must never write to the store
//! itself.

use std::collections::BTreeMap;

use bson::{Bson, Document};

use crate::database::{Database, Transaction};
use crate::error::{BulkWriteFailure, Error, ErrorKind, Result};
use crate::results::{BulkWriteResult, WriteModel};

impl Database {
    /// Runs many writes, to any collections, in one call (the driver's `bulk_write`):
    /// ordered by default, `.ordered(false)` to run every operation whatever fails. Build
    /// the models with the collections' `insert_one_model`, `update_one_model`... Run with
    /// `.run()`; see [`crate::BulkWrite`].
    pub fn bulk_write(&self, models: impl IntoIterator<Item = WriteModel>) -> BulkWrite<'_> {
        BulkWrite::new(self, models.into_iter().collect())
    }
}

/// `bulk_write`, run with `.run()`.
#[must_use = "an action does nothing until .run()"]
pub struct BulkWrite<'a> {
    database: &'a Database,
    models: Vec<WriteModel>,
    ordered: bool,
    session: Option<&'a mut Transaction>,
}

impl<'a> BulkWrite<'a> {
    pub(crate) fn new(database: &'a Database, models: Vec<WriteModel>) -> BulkWrite<'a> {
        BulkWrite {
            database,
            models,
            ordered: true,
            session: None,
        }
    }

    /// Ordered (the default): stop at the first failure. Unordered: run every operation.
    pub fn ordered(mut self, ordered: bool) -> Self {
        self.ordered = ordered;
        self
    }

    /// Runs every operation inside `transaction` (or a session's transaction): the first
    /// failure dooms the transaction, so the bulk write stops there.
    pub fn session(mut self, transaction: &'a mut Transaction) -> Self {
        self.session = if transaction.idle {
            None
        } else {
            Some(transaction)
        };
        self
    }

    /// Runs the operations; any failure is an [`ErrorKind::BulkWrite`] error carrying each
    /// failed operation's own error and what the others did.
    pub fn run(mut self) -> Result<BulkWriteResult> {
        if self.models.is_empty() {
            return Err(Error::argument(spillway_doc::DocError::InvalidValue {
                message: "bulk_write needs at least one operation".to_string(),
            }));
        }
        let mut result = BulkWriteResult::default();
        let mut write_errors = BTreeMap::new();
        let models = std::mem::take(&mut self.models);
        for (index, model) in models.into_iter().enumerate() {
            let outcome = run_one(self.database, model, self.session.as_deref_mut());
            match outcome {
                Ok(done) => done.add_to(index, &mut result),
                Err(error) => {
                    write_errors.insert(index, error);
                    if self.ordered || self.session.is_some() {
                        break;
                    }
                }
            }
        }
        if write_errors.is_empty() {
            return Ok(result);
        }
        Err(Error::new(ErrorKind::BulkWrite(BulkWriteFailure {
            write_errors,
            partial_result: result,
        })))
    }
}

/// What one operation did.
enum Done {
    Inserted(Bson),
    Updated {
        matched: u64,
        modified: u64,
        upserted: Option<Bson>,
    },
    Deleted(u64),
}

impl Done {
    fn add_to(self, index: usize, result: &mut BulkWriteResult) {
        match self {
            Done::Inserted(id) => {
                result.inserted_count += 1;
                result.inserted_ids.insert(index, id);
            }
            Done::Updated {
                matched,
                modified,
                upserted,
            } => {
                result.matched_count += matched;
                result.modified_count += modified;
                if let Some(id) = upserted {
                    result.upserted_count += 1;
                    result.upserted_ids.insert(index, id);
                }
            }
            Done::Deleted(count) => result.deleted_count += count,
        }
    }
}

fn run_one(
    database: &Database,
    model: WriteModel,
    session: Option<&mut Transaction>,
) -> Result<Done> {
    let collection = database.collection::<Document>(model.namespace());
    macro_rules! with_session {
        ($action:expr) => {
            match session {
                Some(transaction) => $action.session(transaction).run(),
                None => $action.run(),
            }
        };
    }
    let updated = |result: crate::UpdateResult| Done::Updated {
        matched: result.matched_count,
        modified: result.modified_count,
        upserted: result.upserted_id,
    };
    Ok(match model {
        WriteModel::InsertOne { document, .. } => {
            Done::Inserted(with_session!(collection.insert_one(&document))?.inserted_id)
        }
        WriteModel::UpdateOne {
            filter,
            update,
            upsert,
            array_filters,
            ..
        } => {
            let action = collection
                .update_one(filter, update)
                .upsert(upsert)
                .array_filters(array_filters.unwrap_or_default());
            updated(with_session!(action)?)
        }
        WriteModel::UpdateMany {
            filter,
            update,
            upsert,
            array_filters,
            ..
        } => {
            let action = collection
                .update_many(filter, update)
                .upsert(upsert)
                .array_filters(array_filters.unwrap_or_default());
            updated(with_session!(action)?)
        }
        WriteModel::ReplaceOne {
            filter,
            replacement,
            upsert,
            ..
        } => {
            let action = collection.replace_one(filter, replacement).upsert(upsert);
            updated(with_session!(action)?)
        }
        WriteModel::DeleteOne { filter, .. } => {
            Done::Deleted(with_session!(collection.delete_one(filter))?.deleted_count)
        }
        WriteModel::DeleteMany { filter, .. } => {
            Done::Deleted(with_session!(collection.delete_many(filter))?.deleted_count)
        }
    })
}
