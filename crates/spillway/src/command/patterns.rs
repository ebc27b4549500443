//! Pattern policies from any driver: commands named like the shell's statements, the
//! collection as the command's value and the shell's options beside it.
//!
//! ```text
//! { setPattern: "sales", outlier: "customers_purchased", threshold: 50,
//!   overflowCollection: "extra_sales", linkField: "book_id" }
//! { getPatterns: "sales" }            { getPatterns: 1 }   (every policy of the database)
//! { removePattern: "sales", field: "customers_purchased" }
//! { verifyPatterns: 1 }
//! { arrayLength: "sales", _id: 2, field: "customers_purchased" }
//! { arrayPage: "sales", _id: 2, field: "customers_purchased", skip: 50, limit: 20 }
//! ```
//!
//! Collection names are the client's; a server stores them under its database's prefix,
//! side collections too. This module must never apply a policy itself: the facade does.

use bson::{Bson, Document, doc};

use super::Context;
use super::args::GENERIC_FIELDS;
use super::error::{CommandError, CommandResult};
use super::read::collection;
use crate::Pattern;

/// The policies of the command's database, by their client collection names.
fn policies(context: &Context<'_>) -> Vec<Pattern> {
    let namespaces = &context.commands.namespaces;
    context
        .commands
        .database
        .patterns()
        .into_iter()
        .filter_map(|pattern| {
            let collection = namespaces.collection_of(context.database, pattern.collection())?;
            let side = namespaces.collection_of(context.database, pattern.side_collection())?;
            Some(pattern.clone().on_collections(collection, side))
        })
        .collect()
}

fn described(pattern: &Pattern) -> Document {
    let mut described = doc! { "collection": pattern.collection() };
    described.extend(pattern.options());
    described
}

/// `setPattern`: declares a policy and migrates the collection's documents to it.
pub(crate) fn set_pattern(context: &mut Context<'_>) -> CommandResult {
    let name = context.args.collection()?;
    let mut ignored = vec!["setPattern"];
    ignored.extend_from_slice(GENERIC_FIELDS);
    let pattern = Pattern::from_options(name, context.args.document, &ignored)
        .map_err(|error| CommandError::bad_value(error.to_string()))?;
    let stored = context.stored(name)?;
    let side = context.stored(pattern.side_collection())?;
    context
        .commands
        .database
        .set_pattern(pattern.on_collections(&stored, &side))?;
    Ok(doc! { "ok": 1.0 })
}

/// `getPatterns`: the policies of one collection, or of the database (`getPatterns: 1`).
pub(crate) fn get_patterns(context: &mut Context<'_>) -> CommandResult {
    context.args.only(&[])?;
    let only = match context.args.document.get("getPatterns") {
        Some(Bson::String(name)) => Some(name.clone()),
        _ => None,
    };
    let listed: Vec<Document> = policies(context)
        .iter()
        .filter(|pattern| {
            only.as_deref()
                .is_none_or(|name| pattern.collection() == name)
        })
        .map(described)
        .collect();
    Ok(doc! { "patterns": listed, "ok": 1.0 })
}

/// `removePattern`: folds the side documents back and forgets the policy.
pub(crate) fn remove_pattern(context: &mut Context<'_>) -> CommandResult {
    context.args.only(&["field"])?;
    let name = context.args.collection()?;
    let Some(field) = context.args.string("field")? else {
        return Err(context.args.missing("field"));
    };
    let stored = context.stored(name)?;
    context.commands.database.remove_pattern(&stored, field)?;
    Ok(doc! { "ok": 1.0 })
}

/// `verifyPatterns`: every violation of the database's policies.
pub(crate) fn verify_patterns(context: &mut Context<'_>) -> CommandResult {
    context.args.only(&[])?;
    let namespaces = &context.commands.namespaces;
    let violations: Vec<Document> = context
        .commands
        .database
        .verify_patterns()?
        .into_iter()
        .filter_map(|violation| {
            let collection = namespaces.collection_of(context.database, &violation.collection)?;
            Some(doc! {
                "collection": collection,
                "_id": violation.id,
                "field": violation.field,
                "problem": violation.problem,
            })
        })
        .collect();
    Ok(doc! { "ok": 1.0, "violations": violations })
}

/// The `_id` and `field` arguments of `arrayLength` and `arrayPage`.
fn array_arguments(context: &Context<'_>) -> CommandResult<(Bson, String)> {
    let Some(id) = context.args.document.get("_id") else {
        return Err(context.args.missing("_id"));
    };
    let Some(field) = context.args.string("field")? else {
        return Err(context.args.missing("field"));
    };
    Ok((id.clone(), field.to_string()))
}

/// `arrayLength`: the logical length of a managed array (`null` for a missing document).
pub(crate) fn array_length(context: &mut Context<'_>) -> CommandResult {
    context.args.only(&["_id", "field"])?;
    let (id, field) = array_arguments(context)?;
    let (collection, _) = collection(context)?;
    let length = collection.array_len(id, &field)?;
    Ok(doc! {
        // An int32 when it fits, as MongoDB's counts are.
        "length": length.map_or(Bson::Null, |length| super::count_value(length as i64)),
        "ok": 1.0,
    })
}

/// `arrayPage`: elements `skip..skip + limit` of a managed array, reading only the side
/// documents that hold them (`null` for a missing document).
pub(crate) fn array_page(context: &mut Context<'_>) -> CommandResult {
    context.args.only(&["_id", "field", "skip", "limit"])?;
    let (id, field) = array_arguments(context)?;
    let skip = context.args.count("skip")?.unwrap_or(0);
    let limit = context.args.count("limit")?.unwrap_or(20);
    let (collection, _) = collection(context)?;
    let to_usize = |value: u64| usize::try_from(value).unwrap_or(usize::MAX);
    let page = collection.array_page(id, &field, to_usize(skip), to_usize(limit))?;
    Ok(doc! {
        "elements": page.map_or(Bson::Null, Bson::Array),
        "ok": 1.0,
    })
}
