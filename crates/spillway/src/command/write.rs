//! The write commands: `insert`, `update`, `delete`, `findAndModify`, with MongoDB's replies
//! (`n`, `nModified`, `upserted`, and `writeErrors` per failed statement, ordered or not).
//!
//! Each statement is one facade operation, so each commits atomically (all of a transaction's
//! commit together). This module must never write around the facade.

use bson::{Bson, Document, doc};
use spillway_doc::projection::Projection;

use super::let_vars::LetBinding;

use super::Context;
use super::args::Args;
use super::count_value;
use super::error::{CommandError, CommandResult};
use super::read::{collation, collection, in_session};
use crate::{Collation, Collection, ReturnDocument, Transaction, UpdateModifications};

/// The most statements one write command may carry (MongoDB's `maxWriteBatchSize`).
const MAX_WRITE_BATCH: usize = 100_000;

/// A write conflict fails the whole command (with its `TransientTransactionError` label), as
/// in MongoDB, instead of being one statement's write error: the driver retries the
/// transaction.
pub(crate) const WRITE_CONFLICT: i32 = 112;

/// What a write command did, as its reply reports it.
#[derive(Default)]
struct WriteOutcome {
    n: i64,
    n_modified: i64,
    upserted: Vec<Document>,
    write_errors: Vec<Document>,
}

impl WriteOutcome {
    fn into_reply(self, with_modified: bool) -> Document {
        let mut reply = doc! { "n": count_value(self.n) };
        if with_modified {
            reply.insert("nModified", count_value(self.n_modified));
        }
        if !self.upserted.is_empty() {
            reply.insert("upserted", self.upserted);
        }
        if !self.write_errors.is_empty() {
            reply.insert("writeErrors", self.write_errors);
        }
        reply.insert("ok", 1.0);
        reply
    }
}

fn statements(args: &Args<'_>, field: &str) -> CommandResult<Vec<Document>> {
    let Some(statements) = args.documents(field)? else {
        return Err(args.missing(field));
    };
    if statements.is_empty() || statements.len() > MAX_WRITE_BATCH {
        return Err(CommandError::new(
            16,
            format!(
                "Write batch sizes must be between 1 and {MAX_WRITE_BATCH}. Got {} operations.",
                statements.len()
            ),
        ));
    }
    Ok(statements)
}

/// `insert`.
pub(crate) fn insert(context: &mut Context<'_>) -> CommandResult {
    let args = &context.args;
    args.only(&["documents", "ordered", "bypassDocumentValidation"])?;
    let documents = statements(args, "documents")?;
    let ordered = args.bool("ordered")?.unwrap_or(true);
    let bypass = args.bool("bypassDocumentValidation")?.unwrap_or(false);
    let (collection, _) = collection(context)?;
    let action = collection
        .insert_many(documents)
        .ordered(ordered)
        .bypass_document_validation(bypass);
    let mut outcome = WriteOutcome::default();
    match in_session!(action, context).run() {
        Ok(result) => outcome.n = result.inserted_ids.len() as i64,
        Err(error) => {
            let Some(position) = error
                .document_index()
                .filter(|_| !error.is_write_conflict())
            else {
                return Err(error.into());
            };
            outcome.n = error.inserted_ids().map_or(0, |ids| ids.len() as i64);
            outcome
                .write_errors
                .push(CommandError::from(&error).to_write_error(position));
            for later in error.later_failures() {
                let position = later.document_index().unwrap_or(position);
                outcome
                    .write_errors
                    .push(CommandError::from(later).to_write_error(position));
            }
        }
    }
    Ok(outcome.into_reply(false))
}

/// One statement of an `update` command (or an update of a `bulkWrite`).
pub(crate) struct UpdateStatement {
    filter: Document,
    update: Bson,
    upsert: bool,
    multi: bool,
    array_filters: Option<Vec<Document>>,
    collation: Option<Collation>,
    /// MongoDB 8.0's `sort`: which match a single-document update changes.
    sort: Option<Document>,
}

impl UpdateStatement {
    /// Reads a statement's fields. A malformed statement (an unknown field such as 8.0's
    /// `sort`, a missing or mistyped one) fails the whole command before any statement runs,
    /// as MongoDB's command parser fails it; what the statement asks is checked as it runs.
    pub(crate) fn parse(statement: &Document) -> CommandResult<UpdateStatement> {
        let args = Args::new("update.updates", statement);
        args.only(&[
            "q",
            "u",
            "upsert",
            "multi",
            "arrayFilters",
            "collation",
            "hint",
            "upsertSupplied",
            "c",
            "sort",
        ])?;
        if args.get("c").is_some() {
            return Err(CommandError::not_supported(
                "update: per-statement constants ('c') are not supported",
            ));
        }
        let Some(filter) = args.document("q")? else {
            return Err(args.missing("q"));
        };
        let Some(update) = statement.get("u") else {
            return Err(args.missing("u"));
        };
        if let Bson::Array(stages) = update {
            refuse_unrecognized_stages(stages)?;
        }
        Ok(UpdateStatement {
            filter: filter.clone(),
            update: update.clone(),
            upsert: args.bool("upsert")?.unwrap_or(false),
            multi: args.bool("multi")?.unwrap_or(false),
            array_filters: args.documents("arrayFilters")?,
            collation: collation(&args)?,
            sort: args.document("sort")?.cloned(),
        })
    }
}

/// A pipeline-style update naming a stage MongoDB does not know fails the whole command (40324),
/// as MongoDB's first reading of the command fails it; a known stage an update may not hold
/// (`$match`) is the statement's write error, where the pipeline is built.
fn refuse_unrecognized_stages(stages: &[Bson]) -> CommandResult<()> {
    let names = stages.iter().filter_map(|stage| match stage {
        Bson::Document(stage) => stage.keys().next(),
        _ => None,
    });
    for name in names {
        if !spillway_doc::pipeline::MONGODB_STAGE_NAMES.contains(&name.as_str()) {
            return Err(CommandError::new(
                40324,
                format!("Unrecognized pipeline stage name: '{name}'"),
            ));
        }
    }
    Ok(())
}

/// Whether an update document is a replacement (no operator at its top level).
fn is_replacement(update: &Document) -> bool {
    update
        .keys()
        .next()
        .is_none_or(|first| !first.starts_with('$'))
}

/// `update`.
pub(crate) fn update(context: &mut Context<'_>) -> CommandResult {
    let args = &context.args;
    args.only(&["updates", "ordered", "bypassDocumentValidation", "let"])?;
    let binding = LetBinding::parse(args.document("let")?)?;
    let statements = statements(args, "updates")?
        .iter()
        .map(UpdateStatement::parse)
        .collect::<CommandResult<Vec<_>>>()?;
    let ordered = args.bool("ordered")?.unwrap_or(true);
    let bypass = args.bool("bypassDocumentValidation")?.unwrap_or(false);
    let (collection, _) = collection(context)?;
    let mut outcome = WriteOutcome::default();
    for (index, statement) in statements.into_iter().enumerate() {
        match update_statement(context, &collection, statement, binding.as_ref(), bypass) {
            Ok((matched, modified, upserted_id)) => {
                outcome.n += matched;
                outcome.n_modified += modified;
                if let Some(id) = upserted_id {
                    outcome.n += 1;
                    outcome
                        .upserted
                        .push(doc! { "index": index as i32, "_id": id });
                }
            }
            Err(error) if error.code == WRITE_CONFLICT => return Err(error),
            Err(error) => {
                outcome.write_errors.push(error.to_write_error(index));
                if ordered || context.transaction.is_some() {
                    break;
                }
            }
        }
    }
    Ok(outcome.into_reply(true))
}

/// Runs one update statement: `(matched, modified, upserted _id)`.
pub(crate) fn update_statement(
    context: &mut Context<'_>,
    collection: &Collection<Document>,
    mut statement: UpdateStatement,
    binding: Option<&LetBinding>,
    bypass: bool,
) -> CommandResult<(i64, i64, Option<Bson>)> {
    if let Some(binding) = binding {
        statement.filter = binding.filter(&statement.filter);
    }
    if statement.sort.is_some() && statement.multi {
        return Err(CommandError::new(72, "Cannot specify sort with multi=true"));
    }
    let update = match statement.update {
        Bson::Document(update) => update,
        Bson::Array(stages) => {
            if statement.array_filters.is_some() {
                return Err(CommandError::new(
                    9,
                    "arrayFilters may not be specified for pipeline-style updates",
                ));
            }
            let mut stages = pipeline_stages(&stages)?;
            if let Some(binding) = binding {
                stages = binding.pipeline(&stages);
            }
            let mut action = if statement.multi {
                collection.update_many(statement.filter, stages)
            } else {
                collection.update_one(statement.filter, stages)
            }
            .upsert(statement.upsert)
            .bypass_document_validation(bypass)
            .collation_option(statement.collation);
            if let Some(sort) = statement.sort {
                action = action.sort(sort);
            }
            let result = in_session!(action, context).run()?;
            return Ok((
                result.matched_count as i64,
                result.modified_count as i64,
                result.upserted_id,
            ));
        }
        other => {
            return Err(CommandError::new(
                9,
                format!("Update argument must be either an object or an array, not {other}"),
            ));
        }
    };
    let mut action = if is_replacement(&update) {
        if statement.multi {
            return Err(CommandError::new(
                9,
                "multi update is not supported for replacement-style update",
            ));
        }
        if statement.array_filters.is_some() {
            return Err(CommandError::new(
                9,
                "arrayFilters may not be specified for replacement-style updates",
            ));
        }
        collection.replace_one(statement.filter, update)
    } else if statement.multi {
        collection.update_many(statement.filter, update)
    } else {
        collection.update_one(statement.filter, update)
    };
    action = action
        .upsert(statement.upsert)
        .bypass_document_validation(bypass)
        .collation_option(statement.collation);
    if let Some(sort) = statement.sort {
        action = action.sort(sort);
    }
    if let Some(array_filters) = statement.array_filters {
        action = action.array_filters(array_filters);
    }
    let result = in_session!(action, context).run()?;
    Ok((
        result.matched_count as i64,
        result.modified_count as i64,
        result.upserted_id,
    ))
}

/// The stages of a pipeline-style update, each a document.
fn pipeline_stages(stages: &[Bson]) -> CommandResult<Vec<Document>> {
    stages
        .iter()
        .map(|stage| match stage {
            Bson::Document(stage) => Ok(stage.clone()),
            other => Err(CommandError::type_mismatch(format!(
                "each stage of an update pipeline must be a document, not {other}"
            ))),
        })
        .collect()
}

/// `delete`.
pub(crate) fn delete(context: &mut Context<'_>) -> CommandResult {
    let args = &context.args;
    args.only(&["deletes", "ordered", "let"])?;
    let binding = LetBinding::parse(args.document("let")?)?;
    let statements = statements(args, "deletes")?;
    for statement in &statements {
        delete_fields(statement)?;
    }
    let ordered = args.bool("ordered")?.unwrap_or(true);
    let (collection, _) = collection(context)?;
    let mut outcome = WriteOutcome::default();
    for (index, statement) in statements.iter().enumerate() {
        match delete_statement(context, &collection, statement, binding.as_ref()) {
            Ok(deleted) => outcome.n += deleted,
            Err(error) if error.code == WRITE_CONFLICT => return Err(error),
            Err(error) => {
                outcome.write_errors.push(error.to_write_error(index));
                if ordered || context.transaction.is_some() {
                    break;
                }
            }
        }
    }
    Ok(outcome.into_reply(false))
}

/// Checks a delete statement's fields: a malformed one fails the whole command before any
/// statement runs, as MongoDB's command parser fails it.
pub(crate) fn delete_fields(statement: &Document) -> CommandResult<()> {
    let args = Args::new("delete.deletes", statement);
    args.only(&["q", "limit", "collation", "hint"])?;
    if args.document("q")?.is_none() {
        return Err(args.missing("q"));
    }
    if args.integer("limit")?.is_none() {
        return Err(args.missing("limit"));
    }
    collation(&args)?;
    Ok(())
}

/// Runs one delete statement: how many documents it deleted.
pub(crate) fn delete_statement(
    context: &mut Context<'_>,
    collection: &Collection<Document>,
    statement: &Document,
    binding: Option<&LetBinding>,
) -> CommandResult<i64> {
    let args = Args::new("delete.deletes", statement);
    let collation = collation(&args)?;
    let Some(filter) = args.document("q")? else {
        return Err(args.missing("q"));
    };
    let filter = match binding {
        Some(binding) => binding.filter(filter),
        None => filter.clone(),
    };
    let action = match args.integer("limit")? {
        None => return Err(args.missing("limit")),
        Some(0) => collection.delete_many(filter),
        Some(1) => collection.delete_one(filter),
        Some(other) => {
            return Err(CommandError::new(
                9,
                format!("The limit field in delete objects must be 0 or 1. Got {other}"),
            ));
        }
    };
    let action = action.collation_option(collation);
    let result = in_session!(action, context).run()?;
    Ok(result.deleted_count as i64)
}

/// `findAndModify`: `lastErrorObject` says whether a document matched and what an upsert
/// inserted, so the statement runs in a transaction that first looks for the match.
pub(crate) fn find_and_modify(context: &mut Context<'_>) -> CommandResult {
    let args = &context.args;
    args.only(&[
        "query",
        "sort",
        "remove",
        "update",
        "new",
        "fields",
        "upsert",
        "arrayFilters",
        "bypassDocumentValidation",
        "collation",
        "hint",
        "let",
    ])?;
    let collation = collation(args)?;
    let binding = LetBinding::parse(args.document("let")?)?;
    let mut filter = args.document("query")?.cloned().unwrap_or_default();
    if let Some(binding) = &binding {
        filter = binding.filter(&filter);
    }
    let sort = args.document("sort")?.cloned();
    let remove = args.bool("remove")?.unwrap_or(false);
    let return_new = args.bool("new")?.unwrap_or(false);
    let upsert = args.bool("upsert")?.unwrap_or(false);
    let fields = args.document("fields")?.cloned();
    let array_filters = args.documents("arrayFilters")?;
    let bypass = args.bool("bypassDocumentValidation")?.unwrap_or(false);
    let update = args.get("update").cloned();
    let (collection, _) = collection(context)?;
    match (remove, update) {
        (true, Some(_)) => Err(CommandError::new(
            9,
            "Cannot specify both an update and remove=true",
        )),
        (true, None) if upsert || return_new => Err(CommandError::new(
            9,
            "Cannot specify both upsert=true and remove=true, or new=true and remove=true",
        )),
        (true, None) => {
            let mut action = collection
                .find_one_and_delete(filter)
                .collation_option(collation);
            if let Some(sort) = sort {
                action = action.sort(sort);
            }
            if let Some(fields) = fields {
                action = action.projection(fields);
            }
            let value = in_session!(action, context).run()?;
            let n = i32::from(value.is_some());
            Ok(doc! {
                "lastErrorObject": { "n": n },
                "value": value.map_or(Bson::Null, Bson::Document),
                "ok": 1.0,
            })
        }
        (false, None) => Err(CommandError::new(
            9,
            "Either an update or remove=true must be specified",
        )),
        (false, Some(update @ (Bson::Document(_) | Bson::Array(_)))) => {
            let update = match update {
                Bson::Array(stages) => {
                    let stages = pipeline_stages(&stages)?;
                    UpdateModifications::Pipeline(match &binding {
                        Some(binding) => binding.pipeline(&stages),
                        None => stages,
                    })
                }
                other => {
                    UpdateModifications::Document(other.as_document().cloned().unwrap_or_default())
                }
            };
            let modify = Modify {
                filter,
                update,
                sort,
                return_new,
                upsert,
                fields,
                array_filters,
                bypass,
                collation,
            };
            modify.run_statement(context, &collection)
        }
        (false, Some(other)) => Err(CommandError::new(
            9,
            format!("findAndModify's update must be a document or a pipeline, not {other}"),
        )),
    }
}

/// An update or replacement by `findAndModify`.
struct Modify {
    filter: Document,
    update: UpdateModifications,
    sort: Option<Document>,
    return_new: bool,
    upsert: bool,
    fields: Option<Document>,
    array_filters: Option<Vec<Document>>,
    bypass: bool,
    collation: Option<Collation>,
}

impl Modify {
    /// Runs in the command's transaction, or in one of its own.
    fn run_statement(
        self,
        context: &mut Context<'_>,
        collection: &Collection<Document>,
    ) -> CommandResult {
        if let Some(transaction) = context.session() {
            return self.run(collection, transaction);
        }
        // The facade's error would only say that the transaction was abandoned: keep the
        // statement's own.
        let mut failure = None;
        let outcome = context.commands.database.transaction(|transaction| {
            self.run(collection, transaction).map_err(|error| {
                failure = Some(error);
                Transaction::abort("findAndModify failed")
            })
        });
        outcome.map_err(|error| failure.unwrap_or_else(|| error.into()))
    }

    fn run(
        self,
        collection: &Collection<Document>,
        transaction: &mut Transaction,
    ) -> CommandResult {
        // Only whether it exists: `_id` alone, so that a patterned document's arrays are not
        // read (nor refused over 16 MiB) for the question.
        let mut probe = collection
            .find_one(self.filter.clone())
            .projection(doc! { "_id": 1 })
            .collation_option(self.collation.clone())
            .session(transaction);
        if let Some(sort) = &self.sort {
            probe = probe.sort(sort.clone());
        }
        let existed = probe.run()?.is_some();
        // An upsert that inserts is run returning the new document, for its `_id`.
        let returns_new = self.return_new || !existed;
        let mut action = match self.update {
            UpdateModifications::Document(update) if is_replacement(&update) => {
                collection.find_one_and_replace(self.filter, update)
            }
            update => collection.find_one_and_update(self.filter, update),
        };
        if let Some(sort) = self.sort {
            action = action.sort(sort);
        }
        if let Some(array_filters) = self.array_filters {
            action = action.array_filters(array_filters);
        }
        // The projection is applied by the read itself (a patterned document is read only as
        // far as it needs), except for an upsert that inserts: its `_id` is reported whole.
        let fields = match self.fields {
            Some(fields) if existed => {
                action = action.projection(fields);
                None
            }
            fields => fields,
        };
        let value = action
            .upsert(self.upsert)
            .bypass_document_validation(self.bypass)
            .collation_option(self.collation)
            .return_document(if returns_new {
                ReturnDocument::After
            } else {
                ReturnDocument::Before
            })
            .session(transaction)
            .run()?;
        let mut last_error = doc! { "n": i32::from(value.is_some()), "updatedExisting": existed };
        if !existed && let Some(inserted) = &value {
            last_error.insert(
                "upserted",
                inserted.get("_id").cloned().unwrap_or(Bson::Null),
            );
        }
        let shown = match value {
            Some(_) if !self.return_new && !existed => None,
            other => other,
        };
        let shown = match (shown, &fields) {
            (Some(document), Some(fields)) => Some(
                Projection::parse(fields)
                    .and_then(|projection| projection.apply(&document))
                    .map_err(|error| CommandError::bad_value(error.to_string()))?,
            ),
            (shown, _) => shown,
        };
        Ok(doc! {
            "lastErrorObject": last_error,
            "value": shown.map_or(Bson::Null, Bson::Document),
            "ok": 1.0,
        })
    }
}
