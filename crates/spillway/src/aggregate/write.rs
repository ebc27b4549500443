//! The writing stages, `$out` and `$merge`: the pipeline's output written into a collection
//! inside the transaction that computed it.
//!
//! `spillway_doc::pipeline` decides what each output document means for the target (insert,
//! replace, keep, or MongoDB's error); this module only reads the target and writes. Writes go
//! through the same operations as `insert_one` and `replace_one`, so a target with indexes or
//! pattern policies stays consistent, and a failure aborts the whole transaction.

use bson::{Bson, Document};
use spillway_doc::DocError;
use spillway_doc::filter::Filter;
use spillway_doc::pipeline::{MergeAction, MergeSpec, Output};
use spillway_store::Store;

use crate::error::{Error, ErrorKind, Result};
use crate::ops;
use crate::storage;
use crate::txn::{Reader, WriteTxn};
use crate::views;

/// Writes `documents` as `output` says.
pub(super) fn write_output(
    txn: &mut WriteTxn,
    store: &Store,
    output: &Output,
    documents: Vec<Document>,
) -> Result<()> {
    let target = match output {
        Output::Out(spec) => spec.collection(),
        Output::Merge(spec) => spec.collection(),
    };
    views::refuse_view(txn.catalog(), target)?;
    match output {
        Output::Out(spec) => out(txn, store, spec.collection(), documents),
        Output::Merge(spec) => {
            for document in documents {
                merge_one(txn, store, spec, document)?;
            }
            Ok(())
        }
    }
}

/// `$out`: the target's documents become `documents`; its indexes stay, as in MongoDB.
fn out(txn: &mut WriteTxn, store: &Store, target: &str, documents: Vec<Document>) -> Result<()> {
    ops::delete(txn, store, target, &Filter::match_all(), true)?;
    storage::ensure_collection(txn, store, target)?;
    for document in documents {
        ops::insert(txn, store, target, document)?;
    }
    Ok(())
}

/// `$merge` of one output document.
fn merge_one(
    txn: &mut WriteTxn,
    store: &Store,
    spec: &MergeSpec,
    document: Document,
) -> Result<()> {
    let target = spec.collection();
    // An output document without `_id` gets a new one, as MongoDB's `$merge` gives it (so
    // merging on `_id` inserts it).
    let document = if document.contains_key("_id") {
        document
    } else {
        let mut with_id = bson::doc! { "_id": bson::oid::ObjectId::new() };
        with_id.extend(document);
        with_id
    };
    let filter_document = spec.match_filter(&document).map_err(Error::aggregation)?;
    let filter = Filter::parse(&filter_document).map_err(Error::filter)?;
    let existing = ops::query(txn, target, &filter, None, 0, Some(2))?.matches;
    if existing.len() > 1 {
        return Err(Error::aggregation(DocError::Pipeline {
            code: 51183,
            message: format!(
                "$merge: more than one document of '{target}' matches the 'on' fields of {filter_document}"
            ),
        }));
    }
    let existing = existing
        .first()
        .map(|found| storage::decode(&found.bytes))
        .transpose()?;
    let decision = match spec.decide(existing.as_ref(), document) {
        Ok(decision) => decision,
        // `whenMatched: "fail"`: MongoDB reports the duplicate key, with its `keyPattern` and
        // `keyValue`, as a unique index would.
        Err(DocError::Pipeline { code: 11000, .. }) => {
            return Err(merge_duplicate(target, &filter_document));
        }
        Err(error) => return Err(Error::aggregation(error)),
    };
    match decision {
        MergeAction::Insert(document) => {
            ops::insert(txn, store, target, document)?;
        }
        MergeAction::Replace(document) => {
            let replacement = ops::parse_update(&document, &[], ops::UpdateKind::Replacement)?;
            ops::update(txn, store, target, &filter, &replacement, false, false)?;
        }
        MergeAction::Keep => {}
    }
    Ok(())
}

/// The duplicate key error of a `$merge` whose output document matched a target document
/// on its `on` fields (`filter_document`, equalities on each).
fn merge_duplicate(target: &str, filter_document: &Document) -> Error {
    let fields: Document = filter_document
        .iter()
        .map(|(field, condition)| {
            let value = match condition {
                Bson::Document(condition) => condition.get("$eq").cloned().unwrap_or(Bson::Null),
                other => other.clone(),
            };
            (field.clone(), value)
        })
        .collect();
    let (index, key) = match fields.get("_id") {
        Some(id) if fields.len() == 1 => ("_id_".to_string(), id.clone()),
        _ => (
            fields
                .keys()
                .map(|field| format!("{field}_1"))
                .collect::<Vec<_>>()
                .join("_"),
            Bson::Document(fields),
        ),
    };
    Error::new(ErrorKind::DuplicateKey {
        collection: target.to_string(),
        index,
        key,
    })
}
