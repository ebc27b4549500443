//! The commands on a collection with a policy, answered through the pattern layer
//! ([`spillway_mongodb::PatternedCollection`]) so that a client sees the logical documents,
//! as it would see a plain collection holding them: `find`, `aggregate`, `count`,
//! `distinct`, `insert`, `update`, `delete`, `findAndModify`, `createIndexes`; and the
//! policy commands Spillway's own server has (`setPattern`, `getPatterns`, `removePattern`,
//! `verifyPatterns`, `arrayLength`, `arrayPage`), with the same arguments and replies.
//!
//! Replies are shaped as MongoDB shapes them (`n`, `nModified`, `upserted`, `writeErrors`,
//! `lastErrorObject`...). This module must never decide anything about a policy: the
//! pattern layer does.

use bson::{Bson, Document, doc};
use spillway::command::{CommandError, GENERIC_FIELDS};
use spillway_doc::collation::Collation;
use spillway_doc::path::FieldPath;
use spillway_doc::projection::Projection;
use spillway_doc::value_set::ValueSet;
use spillway_mongodb::{Pattern, PatternedCollection, PatternedDatabase, RetryKey};

use crate::cursors::Cursors;

/// The reply of a command, or the error reply it fails with.
pub(crate) type Reply = Result<Document, CommandError>;

/// The commands a collection with a policy answers through the pattern layer.
pub(crate) const PATTERNED_COMMANDS: &[&str] = &[
    "find",
    "aggregate",
    "count",
    "distinct",
    "insert",
    "update",
    "delete",
    "findAndModify",
    "findandmodify",
    "createIndexes",
];

/// The policy commands, answered for every database.
pub(crate) const POLICY_COMMANDS: &[&str] = &[
    "setPattern",
    "getPatterns",
    "removePattern",
    "verifyPatterns",
    "arrayLength",
    "arrayPage",
];

/// The session (`lsid.id`) and transaction number of a retryable write: a command with
/// `txnNumber` outside a transaction.
pub(crate) fn retryable_write(command: &Document) -> Option<(Bson, i64)> {
    let number = command.get_i64("txnNumber").ok()?;
    if command.contains_key("autocommit") {
        return None;
    }
    let session = command.get_document("lsid").ok()?.get("id")?.clone();
    Some((session, number))
}

/// The key of statement `index` of the retryable write `retry`.
fn statement_key(retry: Option<&(Bson, i64)>, index: usize) -> Option<RetryKey> {
    retry.map(|(session, txn_number)| RetryKey {
        session: session.clone(),
        stmt: i32::try_from(index).unwrap_or(i32::MAX),
        txn_number: *txn_number,
    })
}

/// Runs `command` (named `name`) on `collection`, which has a policy. The statements of a
/// retryable write (`insert`, `update`, `delete`) run once per statement, across proxies
/// and restarts: each records its outcome in its own transaction (`RetryKey`).
pub(crate) fn run(
    name: &str,
    collection: &PatternedCollection,
    namespace: &str,
    command: &Document,
    cursors: &Cursors,
) -> Reply {
    match name {
        "find" => find(collection, namespace, command, cursors),
        "aggregate" => aggregate(collection, namespace, command, cursors),
        "count" => count(collection, command),
        "distinct" => distinct(collection, command),
        "insert" => insert(collection, command),
        "update" => update(collection, command),
        "delete" => delete(collection, command),
        "findAndModify" | "findandmodify" => find_and_modify(collection, command),
        "createIndexes" => create_indexes(collection, command),
        other => Err(CommandError::new(
            59,
            format!("no such command on a collection with a policy: '{other}'"),
        )),
    }
}

/// Whether an upstream reply says `ok`.
pub(crate) fn is_ok(reply: &Document) -> bool {
    match reply.get("ok") {
        Some(Bson::Double(ok)) => *ok > 0.5,
        Some(Bson::Int32(ok)) => *ok == 1,
        Some(Bson::Int64(ok)) => *ok == 1,
        Some(Bson::Boolean(ok)) => *ok,
        _ => false,
    }
}

/// The error reply of a failure of the pattern layer or of the deployment behind it, with
/// the deployment's `TransientTransactionError` label kept (a write conflict in a client's
/// transaction: the driver runs the transaction again).
pub(crate) fn error(error: &spillway_mongodb::Error) -> CommandError {
    let code = match error {
        spillway_mongodb::Error::Driver(_) => error.code().unwrap_or(6),
        _ => error.code().unwrap_or(2),
    };
    let mut reply = CommandError::new(code, error.to_string());
    if error.has_label("TransientTransactionError") {
        reply.labels.push("TransientTransactionError");
    }
    reply
}

fn bad_value(message: impl Into<String>) -> CommandError {
    CommandError::new(2, message)
}

fn document_field<'a>(
    command: &'a Document,
    field: &str,
) -> Result<Option<&'a Document>, CommandError> {
    match command.get(field) {
        None | Some(Bson::Null) => Ok(None),
        Some(Bson::Document(document)) => Ok(Some(document)),
        Some(other) => Err(CommandError::new(
            14,
            format!(
                "BSON field '{field}' is the wrong type '{}', expected type 'object'",
                spillway_doc::path::describe(other)
            ),
        )),
    }
}

/// A count or size field (`skip`, `limit`, `batchSize`): any number, refused when negative
/// unless `negative_ok`.
fn number_field(command: &Document, field: &str) -> Result<Option<i64>, CommandError> {
    let value = match command.get(field) {
        None | Some(Bson::Null) => return Ok(None),
        Some(Bson::Int32(value)) => i64::from(*value),
        Some(Bson::Int64(value)) => *value,
        Some(Bson::Double(value)) if value.fract() == 0.0 => *value as i64,
        Some(other) => {
            return Err(CommandError::new(
                14,
                format!(
                    "BSON field '{field}' is the wrong type '{}', expected a number",
                    spillway_doc::path::describe(other)
                ),
            ));
        }
    };
    Ok(Some(value))
}

fn count_field(command: &Document, field: &str) -> Result<Option<u64>, CommandError> {
    match number_field(command, field)? {
        Some(value) if value < 0 => Err(bad_value(format!(
            "BSON field '{field}' value must be >= 0, actual value '{value}'"
        ))),
        other => Ok(other.map(|value| value as u64)),
    }
}

/// A non-simple collation would compare differently than the layer does: refused rather
/// than answered under another order.
fn refuse_collation(command: &Document) -> Result<(), CommandError> {
    match document_field(command, "collation")? {
        Some(collation)
            if !collation.is_empty() && collation.get_str("locale").ok() != Some("simple") =>
        {
            Err(CommandError::new(
                2,
                "a collation on a collection with a policy is not supported through the proxy yet",
            ))
        }
        _ => Ok(()),
    }
}

fn find(
    collection: &PatternedCollection,
    namespace: &str,
    command: &Document,
    cursors: &Cursors,
) -> Reply {
    refuse_collation(command)?;
    let filter = document_field(command, "filter")?
        .cloned()
        .unwrap_or_default();
    let mut find = collection.find(filter);
    if let Some(sort) = document_field(command, "sort")? {
        find = find.sort(sort.clone());
    }
    if let Some(projection) = document_field(command, "projection")? {
        find = find.projection(projection.clone());
    }
    if let Some(skip) = count_field(command, "skip")? {
        find = find.skip(skip);
    }
    let mut single_batch = command.get_bool("singleBatch").unwrap_or(false);
    match number_field(command, "limit")? {
        Some(limit) if limit < 0 => {
            find = find.limit(limit.unsigned_abs());
            single_batch = true;
        }
        Some(limit) if limit > 0 => find = find.limit(limit as u64),
        _ => {}
    }
    let documents = find.run().map_err(|failure| error(&failure))?;
    let batch_size = count_field(command, "batchSize")?.map(|size| size as usize);
    Ok(cursors.first_batch(namespace, documents, batch_size, single_batch))
}

fn aggregate(
    collection: &PatternedCollection,
    namespace: &str,
    command: &Document,
    cursors: &Cursors,
) -> Reply {
    refuse_collation(command)?;
    if command.get_bool("explain").unwrap_or(false) {
        return Err(bad_value(
            "explain of an aggregation on a collection with a policy is not supported through the proxy",
        ));
    }
    let pipeline = match command.get("pipeline") {
        Some(Bson::Array(stages)) => stages
            .iter()
            .map(|stage| match stage {
                Bson::Document(stage) => Ok(stage.clone()),
                _ => Err(CommandError::new(
                    14,
                    "each pipeline stage must be an object",
                )),
            })
            .collect::<Result<Vec<_>, _>>()?,
        _ => {
            return Err(CommandError::new(
                14,
                "'pipeline' must be an array of stages",
            ));
        }
    };
    let documents = collection
        .aggregate(pipeline)
        .run()
        .map_err(|failure| error(&failure))?;
    let batch_size = match document_field(command, "cursor")? {
        Some(cursor) => count_field(cursor, "batchSize")?.map(|size| size as usize),
        None => None,
    };
    Ok(cursors.first_batch(namespace, documents, batch_size, false))
}

fn count(collection: &PatternedCollection, command: &Document) -> Reply {
    refuse_collation(command)?;
    let filter = document_field(command, "query")?
        .cloned()
        .unwrap_or_default();
    let total = collection
        .count_documents(filter)
        .run()
        .map_err(|failure| error(&failure))?;
    let skip = count_field(command, "skip")?.unwrap_or(0);
    let mut n = total.saturating_sub(skip);
    if let Some(limit) = number_field(command, "limit")?
        && limit != 0
    {
        n = n.min(limit.unsigned_abs());
    }
    Ok(doc! { "n": count_value(n), "ok": 1.0 })
}

fn distinct(collection: &PatternedCollection, command: &Document) -> Reply {
    refuse_collation(command)?;
    let Some(Bson::String(key)) = command.get("key") else {
        return Err(CommandError::new(14, "'key' must be a string"));
    };
    let path = FieldPath::parse(key).map_err(|failure| bad_value(failure.to_string()))?;
    let filter = document_field(command, "query")?
        .cloned()
        .unwrap_or_default();
    let documents = collection
        .find(filter)
        .run()
        .map_err(|failure| error(&failure))?;
    let mut values = ValueSet::new(&Collation::default());
    for document in &documents {
        values.add_distinct_values(document, &path);
    }
    Ok(doc! { "values": values.into_vec(), "ok": 1.0 })
}

/// The statements of a write command (`documents`, `updates`, `deletes`).
fn statements<'a>(command: &'a Document, field: &str) -> Result<Vec<&'a Document>, CommandError> {
    let Some(Bson::Array(items)) = command.get(field) else {
        return Err(CommandError::new(14, format!("'{field}' must be an array")));
    };
    items
        .iter()
        .map(|item| match item {
            Bson::Document(document) => Ok(document),
            _ => Err(CommandError::new(
                14,
                format!("each of '{field}' must be an object"),
            )),
        })
        .collect()
}

/// The reply of a write command: `n`, and the statements that failed.
struct WriteOutcome {
    n: u64,
    modified: Option<u64>,
    upserted: Vec<Bson>,
    errors: Vec<Bson>,
}

impl WriteOutcome {
    fn new(modified: bool) -> WriteOutcome {
        WriteOutcome {
            n: 0,
            modified: modified.then_some(0),
            upserted: Vec::new(),
            errors: Vec::new(),
        }
    }

    fn fail(&mut self, index: usize, failure: &CommandError) {
        let mut entry = doc! { "index": index as i32 };
        let reply = failure.to_reply();
        entry.insert("code", reply.get("code").cloned().unwrap_or(Bson::Int32(2)));
        entry.insert("errmsg", reply.get("errmsg").cloned().unwrap_or(Bson::Null));
        self.errors.push(Bson::Document(entry));
    }

    fn reply(self) -> Document {
        let mut reply = doc! { "n": count_value(self.n) };
        if let Some(modified) = self.modified {
            reply.insert("nModified", count_value(modified));
        }
        if !self.upserted.is_empty() {
            reply.insert("upserted", self.upserted);
        }
        if !self.errors.is_empty() {
            reply.insert("writeErrors", self.errors);
        }
        reply.insert("ok", 1.0);
        reply
    }
}

/// Runs each statement of a write command, stopping at the first failure when `ordered`.
fn each_statement(
    command: &Document,
    field: &str,
    outcome: &mut WriteOutcome,
    mut run: impl FnMut(&Document, &mut WriteOutcome, usize) -> Result<(), CommandError>,
) -> Result<(), CommandError> {
    let ordered = command.get_bool("ordered").unwrap_or(true);
    for (index, statement) in statements(command, field)?.into_iter().enumerate() {
        if let Err(failure) = run(statement, outcome, index) {
            if failure.code == 225 || failure.labels.contains(&"TransientTransactionError") {
                // TransactionTooOld answers the command, as MongoDB's does; so does a write
                // conflict in a client's transaction, which the driver runs again whole.
                return Err(failure);
            }
            outcome.fail(index, &failure);
            if ordered {
                break;
            }
        }
    }
    Ok(())
}

fn insert(collection: &PatternedCollection, command: &Document) -> Reply {
    let retry = retryable_write(command);
    let mut outcome = WriteOutcome::new(false);
    each_statement(
        command,
        "documents",
        &mut outcome,
        |document, outcome, index| {
            let mut action = collection.insert_one(document.clone());
            if let Some(key) = statement_key(retry.as_ref(), index) {
                action = action.retryable(key);
            }
            action.run().map_err(|failure| error(&failure))?;
            outcome.n += 1;
            Ok(())
        },
    )?;
    Ok(outcome.reply())
}

fn update(collection: &PatternedCollection, command: &Document) -> Reply {
    let retry = retryable_write(command);
    let mut outcome = WriteOutcome::new(true);
    each_statement(
        command,
        "updates",
        &mut outcome,
        |statement, outcome, index| {
            refuse_collation(statement)?;
            if statement
                .get_array("arrayFilters")
                .is_ok_and(|filters| !filters.is_empty())
            {
                return Err(bad_value(
                    "arrayFilters on a collection with a policy are not supported through the proxy yet",
                ));
            }
            let filter = document_field(statement, "q")?.cloned().unwrap_or_default();
            let modifications = match statement.get("u") {
                Some(Bson::Document(update)) => update.clone(),
                Some(Bson::Array(_)) => {
                    return Err(bad_value(
                        "update pipelines on a collection with a policy are not supported through the proxy yet",
                    ));
                }
                _ => return Err(CommandError::new(14, "'u' must be an object")),
            };
            let multi = statement.get_bool("multi").unwrap_or(false);
            let upsert = statement.get_bool("upsert").unwrap_or(false);
            let has_operators = modifications
                .keys()
                .next()
                .is_some_and(|key| key.starts_with('$'));
            let action = match (has_operators, multi) {
                (true, false) => collection.update_one(filter, modifications),
                (true, true) => collection.update_many(filter, modifications),
                (false, false) => collection.replace_one(filter, modifications),
                (false, true) => {
                    return Err(CommandError::new(
                        9,
                        "multi update is not supported for replacement-style update",
                    ));
                }
            };
            let mut action = action.upsert(upsert);
            if let Some(key) = statement_key(retry.as_ref(), index) {
                action = action.retryable(key);
            }
            let result = action.run().map_err(|failure| error(&failure))?;
            outcome.n += result.matched_count;
            if let Some(modified) = outcome.modified.as_mut() {
                *modified += result.modified_count;
            }
            if let Some(id) = result.upserted_id {
                outcome.n += 1;
                outcome
                    .upserted
                    .push(Bson::Document(doc! { "index": index as i32, "_id": id }));
            }
            Ok(())
        },
    )?;
    Ok(outcome.reply())
}

fn delete(collection: &PatternedCollection, command: &Document) -> Reply {
    let retry = retryable_write(command);
    let mut outcome = WriteOutcome::new(false);
    each_statement(
        command,
        "deletes",
        &mut outcome,
        |statement, outcome, index| {
            refuse_collation(statement)?;
            let filter = document_field(statement, "q")?.cloned().unwrap_or_default();
            let action = match number_field(statement, "limit")? {
                Some(1) => collection.delete_one(filter),
                Some(0) | None => collection.delete_many(filter),
                Some(other) => {
                    return Err(bad_value(format!(
                        "The limit field in delete objects must be 0 or 1. Got {other}"
                    )));
                }
            };
            let action = match statement_key(retry.as_ref(), index) {
                Some(key) => action.retryable(key),
                None => action,
            };
            outcome.n += action
                .run()
                .map_err(|failure| error(&failure))?
                .deleted_count;
            Ok(())
        },
    )?;
    Ok(outcome.reply())
}

/// `findAndModify`: the document is chosen by a read, then written by `_id` with the
/// original filter still required, so a document changed in between so that it no longer
/// matches is not written (the command then chooses again).
fn find_and_modify(collection: &PatternedCollection, command: &Document) -> Reply {
    refuse_collation(command)?;
    let query = document_field(command, "query")?
        .cloned()
        .unwrap_or_default();
    let remove = command.get_bool("remove").unwrap_or(false);
    let return_new = command.get_bool("new").unwrap_or(false);
    let upsert = command.get_bool("upsert").unwrap_or(false);
    let update = match command.get("update") {
        None | Some(Bson::Null) => None,
        Some(Bson::Document(update)) => Some(update.clone()),
        Some(Bson::Array(_)) => {
            return Err(bad_value(
                "update pipelines on a collection with a policy are not supported through the proxy yet",
            ));
        }
        Some(_) => return Err(CommandError::new(14, "'update' must be an object")),
    };
    if remove == update.is_some() {
        return Err(CommandError::new(
            9,
            "Either an update or remove=true must be specified",
        ));
    }
    if remove && (return_new || upsert) {
        return Err(CommandError::new(
            9,
            "Cannot specify both new=true/upsert=true and remove=true",
        ));
    }
    let projection = document_field(command, "fields")?
        .map(|fields| Projection::parse(fields).map_err(|failure| bad_value(failure.to_string())))
        .transpose()?;
    let shaped = |document: Option<Document>| -> Result<Bson, CommandError> {
        match (document, &projection) {
            (None, _) => Ok(Bson::Null),
            (Some(document), None) => Ok(Bson::Document(document)),
            (Some(document), Some(projection)) => projection
                .apply(&document)
                .map(Bson::Document)
                .map_err(|failure| bad_value(failure.to_string())),
        }
    };
    for _attempt in 0..16 {
        let mut find = collection.find(query.clone()).limit(1);
        if let Some(sort) = document_field(command, "sort")? {
            find = find.sort(sort.clone());
        }
        let found = find.run().map_err(|failure| error(&failure))?.pop();
        let Some(found) = found else {
            let Some(update) = update.clone().filter(|_| upsert) else {
                return Ok(doc! {
                    "lastErrorObject": { "n": 0, "updatedExisting": false },
                    "value": Bson::Null,
                    "ok": 1.0,
                });
            };
            let result = write_one(collection, query.clone(), update, true)?;
            let id = result.upserted_id.unwrap_or(Bson::Null);
            let value = if return_new {
                collection
                    .find_one(doc! { "_id": id.clone() })
                    .run()
                    .map_err(|failure| error(&failure))?
            } else {
                None
            };
            return Ok(doc! {
                "lastErrorObject": { "n": 1, "updatedExisting": false, "upserted": id },
                "value": shaped(value)?,
                "ok": 1.0,
            });
        };
        let id = found.get("_id").cloned().unwrap_or(Bson::Null);
        let mut chosen = query.clone();
        chosen.insert("_id", id.clone());
        if remove {
            let deleted = collection
                .delete_one(chosen)
                .run()
                .map_err(|failure| error(&failure))?
                .deleted_count;
            if deleted == 0 {
                continue;
            }
            return Ok(doc! {
                "lastErrorObject": { "n": 1 },
                "value": shaped(Some(found))?,
                "ok": 1.0,
            });
        }
        let update = update.clone().expect("an update when not removing");
        let result = write_one(collection, chosen, update, false)?;
        if result.matched_count == 0 {
            continue;
        }
        let value = if return_new {
            collection
                .find_one(doc! { "_id": id })
                .run()
                .map_err(|failure| error(&failure))?
        } else {
            Some(found)
        };
        return Ok(doc! {
            "lastErrorObject": { "n": 1, "updatedExisting": true },
            "value": shaped(value)?,
            "ok": 1.0,
        });
    }
    Err(CommandError::new(
        112,
        "findAndModify: the chosen document kept changing under concurrent writes; try again",
    ))
}

/// One update or replacement of the first document matching `filter`.
fn write_one(
    collection: &PatternedCollection,
    filter: Document,
    modifications: Document,
    upsert: bool,
) -> Result<spillway_mongodb::UpdateResult, CommandError> {
    let has_operators = modifications
        .keys()
        .next()
        .is_some_and(|key| key.starts_with('$'));
    let action = if has_operators {
        collection.update_one(filter, modifications)
    } else {
        collection.replace_one(filter, modifications)
    };
    action
        .upsert(upsert)
        .run()
        .map_err(|failure| error(&failure))
}

/// `createIndexes`: each index on the collection and mirrored on its side collections.
fn create_indexes(collection: &PatternedCollection, command: &Document) -> Reply {
    let Some(Bson::Array(indexes)) = command.get("indexes") else {
        return Err(CommandError::new(14, "'indexes' must be an array"));
    };
    for index in indexes {
        let Some(keys) = index
            .as_document()
            .and_then(|index| index.get_document("key").ok())
        else {
            return Err(CommandError::new(
                9,
                "each index must be an object with a 'key'",
            ));
        };
        if index
            .as_document()
            .is_some_and(|index| index.len() > 2 || !index.contains_key("name"))
        {
            let options: Vec<&String> = index
                .as_document()
                .map(|index| {
                    index
                        .keys()
                        .filter(|key| *key != "key" && *key != "name")
                        .collect()
                })
                .unwrap_or_default();
            if !options.is_empty() {
                return Err(bad_value(format!(
                    "index options {options:?} on a collection with a policy are not supported through the proxy yet"
                )));
            }
        }
        collection
            .create_index(keys)
            .map_err(|failure| error(&failure))?;
    }
    Ok(doc! { "ok": 1.0 })
}

/// A policy command (`setPattern`...) on database `database`.
pub(crate) fn policy_command(
    name: &str,
    database: &PatternedDatabase,
    command: &Document,
) -> Reply {
    let collection_name = || match command.get(name) {
        Some(Bson::String(collection)) => Ok(collection.clone()),
        _ => Err(CommandError::new(
            14,
            format!("'{name}' must name a collection"),
        )),
    };
    let failed = |failure: spillway_mongodb::Error| error(&failure);
    match name {
        "setPattern" => {
            let collection = collection_name()?;
            let mut ignored = vec!["setPattern"];
            ignored.extend_from_slice(GENERIC_FIELDS);
            let pattern = Pattern::from_options(&collection, command, &ignored)
                .map_err(|failure| bad_value(failure.to_string()))?;
            database.create_collection(&collection).map_err(failed)?;
            database.set_pattern(pattern).map_err(failed)?;
            Ok(doc! { "ok": 1.0 })
        }
        "getPatterns" => {
            let only = command.get_str("getPatterns").ok();
            let listed: Vec<Document> = database
                .patterns()
                .map_err(failed)?
                .iter()
                .filter(|pattern| only.is_none_or(|name| pattern.collection() == name))
                .map(|pattern| {
                    let mut described = doc! { "collection": pattern.collection() };
                    described.extend(pattern.options());
                    described
                })
                .collect();
            Ok(doc! { "patterns": listed, "ok": 1.0 })
        }
        "removePattern" => {
            let collection = collection_name()?;
            let Ok(field) = command.get_str("field") else {
                return Err(CommandError::new(
                    40414,
                    "BSON field 'removePattern.field' is missing but a required field",
                ));
            };
            database
                .remove_pattern(&collection, field)
                .map_err(failed)?;
            Ok(doc! { "ok": 1.0 })
        }
        "verifyPatterns" => {
            let violations: Vec<Document> = database
                .verify()
                .map_err(failed)?
                .into_iter()
                .map(|violation| {
                    doc! {
                        "collection": violation.collection,
                        "_id": violation.id,
                        "field": violation.field,
                        "problem": violation.problem,
                    }
                })
                .collect();
            Ok(doc! { "ok": 1.0, "violations": violations })
        }
        "arrayLength" | "arrayPage" => {
            let collection = database.collection(&collection_name()?);
            let Some(id) = command.get("_id").cloned() else {
                return Err(CommandError::new(
                    40414,
                    format!("BSON field '{name}._id' is missing but a required field"),
                ));
            };
            let Ok(field) = command.get_str("field") else {
                return Err(CommandError::new(
                    40414,
                    format!("BSON field '{name}.field' is missing but a required field"),
                ));
            };
            if name == "arrayLength" {
                let length = collection.array_len(id, field).map_err(failed)?;
                return Ok(doc! {
                    "length": length.map_or(Bson::Null, count_value),
                    "ok": 1.0,
                });
            }
            let to_usize = |value: u64| usize::try_from(value).unwrap_or(usize::MAX);
            let skip = count_field(command, "skip")?.unwrap_or(0);
            let limit = count_field(command, "limit")?.unwrap_or(20);
            let page = collection
                .array_page(id, field, to_usize(skip), to_usize(limit))
                .map_err(failed)?;
            Ok(doc! { "elements": page.map_or(Bson::Null, Bson::Array), "ok": 1.0 })
        }
        other => Err(CommandError::new(59, format!("no such command: '{other}'"))),
    }
}

/// A count as MongoDB writes it: an int32 when it fits.
fn count_value(count: u64) -> Bson {
    i32::try_from(count).map_or(Bson::Int64(count as i64), Bson::Int32)
}
