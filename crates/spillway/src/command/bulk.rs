//! `bulkWrite` (MongoDB 8.0, on `admin`): inserts, updates and deletes on any namespaces of
//! the server in one command, with one result per operation in a cursor
//! (`{ ok, idx, n, nModified, upserted }`, or the error of the operation) and the totals
//! (`nInserted`, `nMatched`, `nModified`, `nUpserted`, `nDeleted`, `nErrors`).
//!
//! Each operation runs as the same statement of `insert`, `update` or `delete` would (the
//! same parsing, the same facade action), so the two paths cannot drift apart. Ordered, the
//! first failed operation stops the batch; unordered, every operation runs. This module must
//! never write around those statements.

use bson::{Bson, Document, doc};

use super::Context;
use super::args::Args;
use super::count_value;
use super::cursors::{CursorTable, DocumentStream};
use super::error::{CommandError, CommandResult};
use super::let_vars::LetBinding;
use super::read::in_session;
use super::write::{
    UpdateStatement, WRITE_CONFLICT, delete_fields, delete_statement, update_statement,
};
use crate::Collection;

/// The most operations one `bulkWrite` may carry (MongoDB's `maxWriteBatchSize`).
const MAX_OPERATIONS: usize = 100_000;

/// What one operation asks, read before any runs.
enum Operation {
    Insert(Document),
    Update(Box<UpdateStatement>),
    Delete(Document),
}

/// Totals of the reply.
#[derive(Default)]
struct Totals {
    inserted: i64,
    matched: i64,
    modified: i64,
    upserted: i64,
    deleted: i64,
    errors: i64,
}

/// `bulkWrite`.
pub(crate) fn bulk_write(context: &mut Context<'_>) -> CommandResult {
    let args = &context.args;
    args.only(&[
        "ops",
        "nsInfo",
        "ordered",
        "errorsOnly",
        "bypassDocumentValidation",
        "let",
        "cursor",
    ])?;
    if context.database != "admin" {
        return Err(CommandError::new(
            13,
            "bulkWrite may only be run against the admin database.",
        ));
    }
    let Some(ops) = args.documents("ops")? else {
        return Err(args.missing("ops"));
    };
    let Some(namespaces) = args.documents("nsInfo")? else {
        return Err(args.missing("nsInfo"));
    };
    if ops.is_empty() || ops.len() > MAX_OPERATIONS {
        return Err(CommandError::new(
            16,
            format!(
                "Write batch sizes must be between 1 and {MAX_OPERATIONS}. Got {} operations.",
                ops.len()
            ),
        ));
    }
    let ordered = args.bool("ordered")?.unwrap_or(true);
    let errors_only = args.bool("errorsOnly")?.unwrap_or(false);
    let batch_size = match args.document("cursor")? {
        Some(cursor) => Args::new("bulkWrite.cursor", cursor).count("batchSize")?,
        None => None,
    };
    let binding = LetBinding::parse(args.document("let")?)?;
    let bypass = args.bool("bypassDocumentValidation")?.unwrap_or(false);
    let collections = namespaces
        .iter()
        .map(|info| collection_of(context, info))
        .collect::<CommandResult<Vec<_>>>()?;
    let operations = ops
        .iter()
        .map(|op| parse_operation(op, collections.len()))
        .collect::<CommandResult<Vec<_>>>()?;
    let mut totals = Totals::default();
    let mut results = Vec::new();
    for (index, (target, operation)) in operations.into_iter().enumerate() {
        let collection = &collections[target];
        let outcome = run_operation(context, collection, operation, binding.as_ref(), bypass);
        let entry = match outcome {
            Ok(entry) => {
                totals.add(&entry);
                entry
            }
            Err(error) if error.code == WRITE_CONFLICT => return Err(error),
            Err(error) => {
                totals.errors += 1;
                let mut entry = doc! { "ok": 0.0, "idx": index as i32 };
                let described = error.to_write_error(index);
                entry.extend(described.into_iter().filter(|(key, _)| key != "index"));
                entry
            }
        };
        let failed = entry.get_f64("ok").is_ok_and(|ok| ok < 0.5);
        if !errors_only || failed {
            let mut shown = entry;
            shown.remove("kind");
            shown.insert("idx", index as i32);
            results.push(shown);
        }
        if failed && (ordered || context.transaction.is_some()) {
            break;
        }
    }
    let stream: DocumentStream = Box::new(results.into_iter().map(Ok));
    let mut reply = CursorTable::open(
        &context.commands.cursors,
        "admin.$cmd.bulkWrite",
        stream,
        batch_size,
        false,
        false,
    )?;
    let ok = reply.remove("ok");
    reply.insert("nErrors", count_value(totals.errors));
    reply.insert("nInserted", count_value(totals.inserted));
    reply.insert("nUpserted", count_value(totals.upserted));
    reply.insert("nMatched", count_value(totals.matched));
    reply.insert("nModified", count_value(totals.modified));
    reply.insert("nDeleted", count_value(totals.deleted));
    reply.insert("ok", ok.unwrap_or(Bson::Double(1.0)));
    Ok(reply)
}

impl Totals {
    /// Adds a successful operation's counts (its entry tells which kind it was).
    fn add(&mut self, entry: &Document) {
        let n = number(entry, "n");
        match entry.get_str("kind") {
            Ok("insert") => self.inserted += n,
            Ok("delete") => self.deleted += n,
            _ => {
                let upserted = i64::from(entry.contains_key("upserted"));
                self.upserted += upserted;
                self.matched += n - upserted;
                self.modified += number(entry, "nModified");
            }
        }
    }
}

fn number(entry: &Document, field: &str) -> i64 {
    match entry.get(field) {
        Some(Bson::Int32(n)) => i64::from(*n),
        Some(Bson::Int64(n)) => *n,
        _ => 0,
    }
}

/// The collection an `nsInfo` entry names (`{ ns: "database.collection" }`).
fn collection_of(context: &Context<'_>, info: &Document) -> CommandResult<Collection<Document>> {
    let args = Args::new("bulkWrite.nsInfo", info);
    args.only(&["ns", "collectionUUID", "encryptionInformation"])?;
    if args.get("encryptionInformation").is_some() {
        return Err(CommandError::not_supported(
            "bulkWrite: queryable encryption is not supported",
        ));
    }
    let Some(namespace) = args.string("ns")? else {
        return Err(args.missing("ns"));
    };
    let Some((database, collection)) = namespace.split_once('.') else {
        return Err(CommandError::new(
            73,
            format!("Invalid namespace specified '{namespace}'"),
        ));
    };
    let stored = context.commands.namespaces.stored(database, collection)?;
    Ok(context.commands.database.collection::<Document>(&stored))
}

/// Reads one operation: its `nsInfo` index and what it asks. A malformed operation fails
/// the whole command before any runs, as MongoDB's command parser fails it.
fn parse_operation(op: &Document, n_namespaces: usize) -> CommandResult<(usize, Operation)> {
    let Some((kind, target)) = op.iter().next() else {
        return Err(CommandError::new(40414, "bulkWrite: an operation is empty"));
    };
    let target = match target {
        Bson::Int32(index) => usize::try_from(*index).ok(),
        Bson::Int64(index) => usize::try_from(*index).ok(),
        _ => None,
    }
    .filter(|index| *index < n_namespaces)
    .ok_or_else(|| {
        CommandError::bad_value(format!(
            "bulkWrite: operation '{kind}' names nsInfo entry {target}, and there are {n_namespaces}"
        ))
    })?;
    let args = Args::new("bulkWrite.ops", op);
    let operation = match kind.as_str() {
        "insert" => {
            args.only(&["insert", "document"])?;
            let Some(document) = args.document("document")? else {
                return Err(args.missing("document"));
            };
            Operation::Insert(document.clone())
        }
        "update" => {
            args.only(&[
                "update",
                "filter",
                "updateMods",
                "arrayFilters",
                "multi",
                "upsert",
                "hint",
                "collation",
                "sort",
                "constants",
            ])?;
            let mut statement = Document::new();
            for (from, to) in [
                ("filter", "q"),
                ("updateMods", "u"),
                ("arrayFilters", "arrayFilters"),
                ("multi", "multi"),
                ("upsert", "upsert"),
                ("hint", "hint"),
                ("collation", "collation"),
                ("sort", "sort"),
                ("constants", "c"),
            ] {
                if let Some(value) = op.get(from) {
                    statement.insert(to, value.clone());
                }
            }
            Operation::Update(Box::new(UpdateStatement::parse(&statement)?))
        }
        "delete" => {
            args.only(&["delete", "filter", "multi", "hint", "collation"])?;
            let multi = args.bool("multi")?.unwrap_or(false);
            let mut statement = doc! { "limit": i32::from(!multi) };
            if let Some(filter) = op.get("filter") {
                statement.insert("q", filter.clone());
            }
            for field in ["hint", "collation"] {
                if let Some(value) = op.get(field) {
                    statement.insert(field, value.clone());
                }
            }
            delete_fields(&statement)?;
            Operation::Delete(statement)
        }
        other => {
            return Err(CommandError::new(
                40415,
                format!("BSON field 'bulkWrite.ops.{other}' is an unknown field."),
            ));
        }
    };
    Ok((target, operation))
}

/// Runs one operation into its result entry (`kind` says which counts it adds; the caller
/// removes it before the entry is shown).
fn run_operation(
    context: &mut Context<'_>,
    collection: &Collection<Document>,
    operation: Operation,
    binding: Option<&LetBinding>,
    bypass: bool,
) -> CommandResult<Document> {
    let entry = match operation {
        Operation::Insert(document) => {
            let action = collection
                .insert_one(document)
                .bypass_document_validation(bypass);
            in_session!(action, context).run()?;
            doc! { "ok": 1.0, "n": 1, "kind": "insert" }
        }
        Operation::Update(statement) => {
            let (matched, modified, upserted) =
                update_statement(context, collection, *statement, binding, bypass)?;
            let mut entry = doc! {
                "ok": 1.0,
                "n": count_value(matched + i64::from(upserted.is_some())),
                "nModified": count_value(modified),
                "kind": "update",
            };
            if let Some(id) = upserted {
                entry.insert("upserted", doc! { "_id": id });
            }
            entry
        }
        Operation::Delete(statement) => {
            let deleted = delete_statement(context, collection, &statement, binding)?;
            doc! { "ok": 1.0, "n": count_value(deleted), "kind": "delete" }
        }
    };
    Ok(entry)
}
