//! The read commands: `find`, `getMore`, `killCursors`, `count`, `distinct`, `aggregate`,
//! `explain`. Each becomes one facade action on the command's snapshot (or transaction) and
//! its reply in MongoDB's shape.
//!
//! This module must never write: an `aggregate` ending in `$out`/`$merge` writes through the
//! facade's aggregate action, in one transaction.

use std::collections::VecDeque;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use bson::{Bson, Document, doc};

use super::Context;
use super::args::Args;
use super::changes;
use super::collectionless;
use super::cursors::{CursorTable, DocumentStream};
use super::error::{CommandError, CommandResult};
use super::let_vars::LetBinding;
use super::stats;
use super::{count_value, lock};
use crate::{Collation, Collection, Hint, STORED_DOCUMENTS_STAGE};

/// Applies the context's transaction, if any, to a facade action.
macro_rules! in_session {
    ($action:expr, $context:expr) => {
        match $context.session() {
            Some(transaction) => $action.session(transaction),
            None => $action,
        }
    };
}
pub(crate) use in_session;

/// Options of `find` that change results and that Spillway does not implement: refused, so a
/// client never gets silently different answers. (`showRecordId` is accepted beside
/// `returnKey`, whose results MongoDB gives no record id.)
const UNSUPPORTED_FIND_OPTIONS: &[&str] = &["showRecordId", "oplogReplay"];

/// How often a tailable `awaitData` cursor looks for new documents while its `getMore` waits.
const TAIL_POLL: Duration = Duration::from_millis(10);

/// A tailable cursor's documents (capped collections): those matching its filter in natural
/// (`_id`) order, then, each time it is read past its end, those inserted since, after the
/// last one it returned. When that last document is gone (the collection rolled over), it
/// fails with MongoDB's `CappedPositionLost` (136), which drivers treat as the cursor's end.
struct TailingStream {
    collection: Collection<Document>,
    filter: Document,
    projection: Option<Document>,
    /// Documents to skip, at the first read only.
    skip: u64,
    buffered: VecDeque<Document>,
    last_id: Option<Bson>,
    /// How long the next read past the end may wait for new documents (`awaitData`: the
    /// `getMore`'s `maxTimeMS`), in milliseconds; set by `getMore`, spent by the first empty
    /// read of its batch.
    wait_ms: Arc<AtomicU64>,
}

impl TailingStream {
    fn refill(&mut self) -> crate::Result<()> {
        let mut filter = self.filter.clone();
        if let Some(last) = &self.last_id {
            if self
                .collection
                .find_one(doc! { "_id": last.clone() })
                .run()?
                .is_none()
            {
                return Err(crate::Error::capped_position_lost(self.collection.name()));
            }
            filter = doc! { "$and": [filter, { "_id": { "$gt": last.clone() } }] };
        }
        let mut find = self
            .collection
            .find(filter)
            .sort(doc! { "_id": 1 })
            .skip(std::mem::take(&mut self.skip));
        if let Some(projection) = &self.projection {
            find = find.projection(projection.clone());
        }
        for document in find.run()? {
            self.buffered.push_back(document?);
        }
        Ok(())
    }
}

impl Iterator for TailingStream {
    type Item = crate::Result<Document>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.buffered.is_empty() {
            let wait = Duration::from_millis(self.wait_ms.swap(0, Ordering::SeqCst));
            let deadline = Instant::now() + wait;
            loop {
                if let Err(error) = self.refill() {
                    return Some(Err(error));
                }
                if !self.buffered.is_empty() || Instant::now() >= deadline {
                    break;
                }
                std::thread::sleep(TAIL_POLL);
            }
        }
        let document = self.buffered.pop_front()?;
        // A batch that returns documents does not wait at its end.
        self.wait_ms.store(0, Ordering::SeqCst);
        if let Some(id) = document.get("_id") {
            self.last_id = Some(id.clone());
        }
        Some(Ok(document))
    }
}

/// A command's `hint`: an index name or key pattern (`{}` or absent: none).
fn hint(args: &Args<'_>) -> CommandResult<Option<Hint>> {
    match args.get("hint") {
        None => Ok(None),
        Some(Bson::String(name)) => Ok(Some(Hint::Name(name.clone()))),
        Some(Bson::Document(keys)) if keys.is_empty() => Ok(None),
        Some(Bson::Document(keys)) => Ok(Some(Hint::Keys(keys.clone()))),
        Some(other) => Err(CommandError::new(
            9,
            format!("hint must be a string or an object, not {other}"),
        )),
    }
}

/// A sort on `$natural` is natural order, which is `_id` order in Spillway.
fn natural_sort(sort: Document) -> CommandResult<Document> {
    let Some(direction) = sort.get("$natural") else {
        return Ok(sort);
    };
    if sort.len() > 1 {
        return Err(CommandError::bad_value(
            "$natural cannot be combined with other sort fields",
        ));
    }
    Ok(doc! { "_id": direction.clone() })
}

const FIND_FIELDS: &[&str] = &[
    "filter",
    "sort",
    "projection",
    "hint",
    "skip",
    "limit",
    "batchSize",
    "singleBatch",
    "let",
    "collation",
    "allowDiskUse",
    "noCursorTimeout",
    "allowPartialResults",
    "readOnce",
    "min",
    "max",
    "returnKey",
    "showRecordId",
    "tailable",
    "awaitData",
    "oplogReplay",
];

/// The collection a command names as its value, opened through the facade, with its stored
/// name.
pub(crate) fn collection(context: &Context<'_>) -> CommandResult<(Collection<Document>, String)> {
    let name = context.args.collection()?;
    let stored = context.stored(name)?;
    Ok((
        context.commands.database.collection::<Document>(&stored),
        name.to_string(),
    ))
}

/// The collection a read names, as [`collection`], and whether the read asks for its stored
/// layout (the namespace `system.stored.<collection>`).
fn read_collection(context: &Context<'_>) -> CommandResult<(Collection<Document>, String, bool)> {
    let name = context.args.collection()?;
    let (stored, layout) = context.stored_for_read(name)?;
    Ok((
        context.commands.database.collection::<Document>(&stored),
        name.to_string(),
        layout,
    ))
}

/// The command's `collation` (`None` when absent: the collection's default collation;
/// `{}`: simple, code point order); a bad one is refused with MongoDB's code
/// ([`parse_collation`]).
pub(crate) fn collation(args: &Args<'_>) -> CommandResult<Option<Collation>> {
    args.document("collation")?.map(parse_collation).transpose()
}

/// A collation document (`{}`: simple): MongoDB's codes for a bad one (an
/// unknown field 40415, no locale 40414, a wrong type 14, a bad value 2).
pub(crate) fn parse_collation(spec: &Document) -> CommandResult<Collation> {
    if spec.is_empty() {
        return Ok(Collation::simple());
    }
    let args = Args::new("collation", spec);
    args.only(&[
        "locale",
        "caseLevel",
        "caseFirst",
        "strength",
        "numericOrdering",
        "alternate",
        "maxVariable",
        "normalization",
        "backwards",
        "version",
    ])?;
    let Some(_) = args.string("locale")? else {
        return Err(args.missing("locale"));
    };
    for flag in ["caseLevel", "numericOrdering", "normalization", "backwards"] {
        args.bool(flag)?;
    }
    for text in ["caseFirst", "alternate", "maxVariable", "version"] {
        args.string(text)?;
    }
    Collation::parse(spec).map_err(|error| CommandError::bad_value(error.to_string()))
}

/// The options of one `find`, read and checked before the collection is touched.
struct FindOptions {
    collation: Option<Collation>,
    filter: Document,
    sort: Option<Document>,
    projection: Option<Document>,
    hint: Option<Hint>,
    /// Index bounds; an empty bound is no bound, as in MongoDB.
    min: Option<Document>,
    max: Option<Document>,
    tailable: bool,
    await_data: bool,
    skip: u64,
    limit: u64,
    batch_size: Option<u64>,
    single_batch: bool,
    no_cursor_timeout: bool,
    let_vars: Option<Document>,
    /// Each result is the keys of the index the query used (`{}` from a collection scan).
    return_key: bool,
}

impl FindOptions {
    fn parse(args: &Args<'_>) -> CommandResult<FindOptions> {
        if args.get("expand").is_some() {
            return Err(CommandError::bad_value(
                "find's 'expand' option is gone: every read returns logical documents; read the stored layout from the namespace system.stored.<collection>",
            ));
        }
        args.only(FIND_FIELDS)?;
        let return_key = args.bool("returnKey")?.unwrap_or(false);
        for option in UNSUPPORTED_FIND_OPTIONS {
            if *option == "showRecordId" && return_key {
                continue;
            }
            if args
                .get(option)
                .is_some_and(|value| value != &Bson::Boolean(false))
            {
                return Err(CommandError::not_supported(format!(
                    "find option '{option}' is not supported by Spillway (no record ids; with returnKey, whose keys MongoDB returns without one, showRecordId is accepted)"
                )));
            }
        }
        let options = FindOptions {
            collation: collation(args)?,
            filter: args.document("filter")?.cloned().unwrap_or_default(),
            sort: args
                .document("sort")?
                .cloned()
                .map(natural_sort)
                .transpose()?,
            projection: args.document("projection")?.cloned(),
            hint: hint(args)?,
            min: args.document("min")?.filter(|min| !min.is_empty()).cloned(),
            max: args.document("max")?.filter(|max| !max.is_empty()).cloned(),
            tailable: args.bool("tailable")?.unwrap_or(false),
            await_data: args.bool("awaitData")?.unwrap_or(false),
            skip: args.count("skip")?.unwrap_or(0),
            limit: args.count("limit")?.unwrap_or(0),
            batch_size: args.count("batchSize")?,
            single_batch: args.bool("singleBatch")?.unwrap_or(false),
            no_cursor_timeout: args.bool("noCursorTimeout")?.unwrap_or(false),
            let_vars: args.document("let")?.cloned(),
            return_key,
        };
        if options.await_data && !options.tailable {
            return Err(CommandError::bad_value(
                "Cannot set 'awaitData' without also setting 'tailable'",
            ));
        }
        Ok(options)
    }
}

/// `find`.
pub(crate) fn find(context: &mut Context<'_>) -> CommandResult {
    let mut options = FindOptions::parse(&context.args)?;
    let (collection, name, stored_layout) = read_collection(context)?;
    let namespace = context.namespace(&name);
    if options.tailable {
        let capped = context
            .commands
            .database
            .collection_options(collection.name())?
            .is_some_and(|options| options.capped == Some(true));
        if !capped {
            return Err(CommandError::bad_value(format!(
                "error processing query: ns={namespace} tailable cursor requested on non capped collection"
            )));
        }
        // A tailable cursor reads in insertion order.
        options.sort.get_or_insert_with(|| doc! { "_id": 1 });
        // With a limit, a tailable cursor ends once it has returned that many: the plain
        // find's cursor in natural order answers it.
        if options.limit == 0 && !options.single_batch {
            return open_tailing_cursor(context, collection, options, &namespace);
        }
    }
    let (limit, batch_size, no_cursor_timeout) =
        (options.limit, options.batch_size, options.no_cursor_timeout);
    let single_batch =
        options.single_batch || (limit > 0 && batch_size.is_some_and(|size| size >= limit));
    let stream = match options.let_vars.take() {
        // `let` variables are read by `$expr`: run the find as the pipeline it is.
        // The keys are those of the index the find's own plan uses: its filter reads the
        // variables where they are bound, and the find runs as itself.
        Some(let_vars) if options.return_key => {
            if let Some(binding) = LetBinding::parse(Some(&let_vars))? {
                options.filter = binding.filter(&options.filter);
            }
            find_stream(context, &collection, options, stored_layout)?
        }
        Some(let_vars) => find_as_pipeline(context, &collection, options, let_vars, stored_layout)?,
        None => find_stream(context, &collection, options, stored_layout)?,
    };
    CursorTable::open_limited(
        &context.commands.cursors,
        &namespace,
        stream,
        batch_size,
        Some(limit),
        single_batch,
        no_cursor_timeout,
    )
}

/// A tailable cursor on a capped collection: it waits for documents inserted later (with
/// `awaitData`, each `getMore` waits up to its `maxTimeMS`).
fn open_tailing_cursor(
    context: &Context<'_>,
    collection: Collection<Document>,
    options: FindOptions,
    namespace: &str,
) -> CommandResult {
    let wait_ms = Arc::new(AtomicU64::new(0));
    let stream: DocumentStream = Box::new(TailingStream {
        collection,
        filter: options.filter,
        projection: options.projection,
        skip: options.skip,
        buffered: VecDeque::new(),
        last_id: None,
        wait_ms: Arc::clone(&wait_ms),
    });
    let waits = options.await_data.then_some(wait_ms);
    CursorTable::open_tailable(
        &context.commands.cursors,
        namespace,
        stream,
        options.batch_size,
        waits,
        None,
        None,
    )
}

/// A find with `let` variables, run as the pipeline `$match`, `$sort`, `$skip`, `$limit`,
/// `$project` it is.
fn find_as_pipeline(
    context: &mut Context<'_>,
    collection: &Collection<Document>,
    options: FindOptions,
    let_vars: Document,
    stored_layout: bool,
) -> CommandResult<DocumentStream> {
    if options.min.is_some() || options.max.is_some() {
        return Err(CommandError::not_supported(
            "find with both 'let' and 'min'/'max' is not supported by Spillway",
        ));
    }
    let mut pipeline = vec![doc! { "$match": options.filter }];
    if stored_layout {
        pipeline.insert(0, doc! { STORED_DOCUMENTS_STAGE: {} });
    }
    if let Some(sort) = options.sort {
        pipeline.push(doc! { "$sort": sort });
    }
    if options.skip > 0 {
        pipeline.push(doc! { "$skip": options.skip as i64 });
    }
    if options.limit > 0 {
        pipeline.push(doc! { "$limit": options.limit as i64 });
    }
    if let Some(projection) = options.projection {
        pipeline.push(doc! { "$project": projection });
    }
    let action = collection
        .aggregate(pipeline)
        .let_vars(let_vars)
        .collation_option(options.collation);
    Ok(Box::new(in_session!(action, context).run()?))
}

/// A find through the facade's find action.
fn find_stream(
    context: &mut Context<'_>,
    collection: &Collection<Document>,
    options: FindOptions,
    stored_layout: bool,
) -> CommandResult<DocumentStream> {
    let mut action = collection
        .find(options.filter)
        .skip(options.skip)
        .stored(stored_layout)
        .return_key(options.return_key)
        .collation_option(options.collation);
    if let Some(hint) = options.hint {
        action = action.hint(hint);
    }
    if let Some(min) = options.min {
        action = action.min(min);
    }
    if let Some(max) = options.max {
        action = action.max(max);
    }
    if options.limit > 0 {
        action = action.limit(i64::try_from(options.limit).unwrap_or(i64::MAX));
    }
    if let Some(sort) = options.sort {
        action = action.sort(sort);
    }
    if let Some(projection) = options.projection {
        action = action.projection(projection);
    }
    Ok(Box::new(in_session!(action, context).run()?))
}

/// `getMore`.
pub(crate) fn get_more(context: &mut Context<'_>) -> CommandResult {
    let args = &context.args;
    args.only(&[
        "collection",
        "batchSize",
        "term",
        "lastKnownCommittedOpTime",
    ])?;
    let id = match args.document.get("getMore") {
        Some(Bson::Int64(id)) => *id,
        Some(other) => {
            return Err(CommandError::type_mismatch(format!(
                "getMore's cursor id must be a long, not {other}"
            )));
        }
        None => return Err(args.missing("getMore")),
    };
    let Some(collection) = args.string("collection")? else {
        return Err(args.missing("collection"));
    };
    let batch_size = args.count("batchSize")?.filter(|size| *size > 0);
    let max_time_ms = args.count("maxTimeMS")?;
    let namespace = context.namespace(collection);
    let cursors = &context.commands.cursors;
    // The cursor leaves the table while its batch is read: the query (a `$where` script...)
    // never runs under the table's lock.
    let mut taken = lock(cursors).take(id, &namespace)?;
    taken.read(batch_size, max_time_ms);
    lock(cursors).put_back(id, taken)
}

/// `killCursors`.
pub(crate) fn kill_cursors(context: &mut Context<'_>) -> CommandResult {
    let args = &context.args;
    args.only(&["cursors"])?;
    args.collection()?;
    let Some(ids) = args.array("cursors")? else {
        return Err(args.missing("cursors"));
    };
    let ids = ids
        .iter()
        .map(|id| match id {
            Bson::Int64(id) => Ok(*id),
            other => Err(CommandError::type_mismatch(format!(
                "killCursors: cursor ids must be longs, not {other}"
            ))),
        })
        .collect::<CommandResult<Vec<i64>>>()?;
    let (killed, not_found) = lock(&context.commands.cursors).kill(&ids);
    Ok(doc! {
        "cursorsKilled": killed,
        "cursorsNotFound": not_found,
        "cursorsAlive": [],
        "cursorsUnknown": [],
        "ok": 1.0,
    })
}

/// `count`.
pub(crate) fn count(context: &mut Context<'_>) -> CommandResult {
    let args = &context.args;
    args.only(&["query", "skip", "limit", "hint", "collation", "fields"])?;
    let collation = collation(args)?;
    let filter = args.document("query")?.cloned().unwrap_or_default();
    let skip = args.count("skip")?.unwrap_or(0);
    // A negative limit counts like its absolute value, as in MongoDB.
    let limit = args.integer("limit")?.unwrap_or(0).unsigned_abs();
    let (collection, _, stored_layout) = read_collection(context)?;
    let n = if stored_layout {
        // The stored layout counts the stored documents the filter matches as they are.
        let action = collection
            .find(filter)
            .stored(true)
            .skip(skip)
            .limit(i64::try_from(limit).unwrap_or(i64::MAX))
            .projection(doc! { "_id": 1 })
            .collation_option(collation);
        let mut n = 0_u64;
        for document in in_session!(action, context).run()? {
            document?;
            n += 1;
        }
        n
    } else {
        let action = collection
            .count_documents(filter)
            .skip(skip)
            .limit(limit)
            .collation_option(collation);
        in_session!(action, context).run()?
    };
    Ok(doc! { "n": count_value(i64::try_from(n).unwrap_or(i64::MAX)), "ok": 1.0 })
}

/// `distinct`.
pub(crate) fn distinct(context: &mut Context<'_>) -> CommandResult {
    let args = &context.args;
    args.only(&["key", "query", "collation", "hint"])?;
    let collation = collation(args)?;
    let Some(key) = args.string("key")? else {
        return Err(args.missing("key"));
    };
    let filter = args.document("query")?.cloned().unwrap_or_default();
    let (collection, _, stored_layout) = read_collection(context)?;
    let values = if stored_layout {
        let action = collection
            .distinct(key, filter)
            .stored(true)
            .collation_option(collation);
        in_session!(action, context).run()?
    } else {
        let action = collection.distinct(key, filter).collation_option(collation);
        in_session!(action, context).run()?
    };
    Ok(doc! { "values": values, "ok": 1.0 })
}

/// `aggregate` on a collection, or on a database (`aggregate: 1`, whose pipeline starts with
/// a stage that makes its own documents: see [`collectionless`]).
pub(crate) fn aggregate(context: &mut Context<'_>) -> CommandResult {
    let args = &context.args;
    args.only(&[
        "pipeline",
        "cursor",
        "explain",
        "allowDiskUse",
        "let",
        "collation",
        "hint",
        "bypassDocumentValidation",
    ])?;
    let collation = collation(args)?;
    let database_level = match args.document.get("aggregate") {
        Some(Bson::String(_)) => false,
        Some(Bson::Int32(1) | Bson::Int64(1)) => true,
        Some(Bson::Double(one)) if (one - 1.0).abs() < f64::EPSILON => true,
        _ => {
            return Err(CommandError::new(
                73,
                "Invalid command format: the 'aggregate' field must specify a collection name or 1",
            ));
        }
    };
    let Some(mut pipeline) = args.documents("pipeline")? else {
        return Err(args.missing("pipeline"));
    };
    check_read_concern(args, &pipeline)?;
    if changes::opens_stream(&pipeline)? {
        changes::check_read_concern(args.document)?;
        let batch_size = match args.document("cursor")? {
            Some(cursor) => Args::new("aggregate.cursor", cursor).count("batchSize")?,
            None => return Err(args.missing("cursor")),
        };
        let name = if database_level {
            None
        } else {
            Some(args.collection()?.to_string())
        };
        return changes::open(context, name.as_deref(), &pipeline, batch_size);
    }
    if database_level {
        pipeline = collectionless::first_stage(context, pipeline)?;
    }
    let args = &context.args;
    let explain = args.bool("explain")?.unwrap_or(false);
    let cursor = args.document("cursor")?;
    if cursor.is_none() && !explain {
        return Err(CommandError::new(
            9,
            "The 'cursor' option is required, except for aggregate with the explain argument",
        ));
    }
    let batch_size = match cursor {
        Some(cursor) => Args::new("aggregate.cursor", cursor).count("batchSize")?,
        None => None,
    };
    let let_vars = args.document("let")?.cloned();
    let bypass = args.bool("bypassDocumentValidation")?.unwrap_or(false);
    let mut pipeline = context
        .commands
        .namespaces
        .pipeline(context.database, &pipeline)?;
    let (collection, name) = if database_level {
        collectionless::placeholder(context)?
    } else if stats::first_stage(context, &mut pipeline)? {
        // `$collStats` / `$indexStats`: their documents, run on a collection holding none.
        let (placeholder, _) = collectionless::placeholder(context)?;
        (placeholder, context.args.collection()?.to_string())
    } else {
        let (collection, name, stored_layout) = read_collection(context)?;
        if stored_layout
            && !pipeline
                .first()
                .is_some_and(|stage| stage.contains_key(STORED_DOCUMENTS_STAGE))
        {
            pipeline.insert(0, doc! { STORED_DOCUMENTS_STAGE: {} });
        }
        (collection, name)
    };
    let mut action = collection
        .aggregate(pipeline)
        .bypass_document_validation(bypass)
        .collation_option(collation);
    if let Some(let_vars) = let_vars {
        action = action.let_vars(let_vars);
    }
    if explain {
        let plan = in_session!(action, context).explain()?;
        return Ok(doc! { "stages": plan, "ok": 1.0 });
    }
    let stream: DocumentStream = Box::new(in_session!(action, context).run()?);
    let namespace = context.namespace(&name);
    CursorTable::open(
        &context.commands.cursors,
        &namespace,
        stream,
        batch_size,
        false,
        false,
    )
}

/// `explain` of a `find`, `count`, `distinct` or `aggregate`.
pub(crate) fn explain(context: &mut Context<'_>) -> CommandResult {
    let args = &context.args;
    args.only(&["verbosity"])?;
    let Some(inner) = args.document("explain")? else {
        return Err(args.missing("explain"));
    };
    let Some(inner_name) = inner.keys().next().cloned() else {
        return Err(CommandError::bad_value(
            "explain: the explained command is empty",
        ));
    };
    let inner_args = Args::new(&inner_name, inner);
    let name = inner_args.collection()?;
    let stored = context.stored(name)?;
    let collection = context.commands.database.collection::<Document>(&stored);
    let namespace = context.namespace(name);
    let is_view = context
        .commands
        .database
        .collection_options(&stored)?
        .is_some_and(|options| options.view_on.is_some());
    // The filter of an explained find (`filter`), count or distinct (`query`).
    let filter_field = if inner_name == "find" {
        "filter"
    } else {
        "query"
    };
    match inner_name.as_str() {
        // A view has no plan of its own: the read runs as the pipeline that explains it.
        "find" | "count" | "distinct" if is_view => {
            let filter = inner_args
                .document(filter_field)?
                .cloned()
                .unwrap_or_default();
            let mut pipeline = vec![doc! { "$match": filter }];
            if let Some(sort) = inner_args.document("sort")?.filter(|sort| !sort.is_empty()) {
                pipeline.push(doc! { "$sort": sort.clone() });
            }
            if let Some(skip) = inner_args.count("skip")?.filter(|skip| *skip > 0) {
                pipeline.push(doc! { "$skip": i64::try_from(skip).unwrap_or(i64::MAX) });
            }
            if let Some(limit) = inner_args.count("limit")?.filter(|limit| *limit > 0) {
                pipeline.push(doc! { "$limit": i64::try_from(limit).unwrap_or(i64::MAX) });
            }
            let action = collection.aggregate(pipeline);
            let plan = in_session!(action, context).explain()?;
            Ok(doc! { "stages": plan, "ok": 1.0 })
        }
        "find" | "count" | "distinct" => {
            let filter = inner_args
                .document(filter_field)?
                .cloned()
                .unwrap_or_default();
            let mut action = collection
                .find(filter.clone())
                .collation_option(collation(&inner_args)?);
            if let Some(hint) = hint(&inner_args)? {
                action = action.hint(hint);
            }
            for (field, bound) in [("min", true), ("max", false)] {
                if let Some(value) = inner_args
                    .document(field)?
                    .filter(|value| !value.is_empty())
                {
                    action = if bound {
                        action.min(value.clone())
                    } else {
                        action.max(value.clone())
                    };
                }
            }
            if let Some(sort) = inner_args.document("sort")? {
                action = action.sort(sort.clone());
            }
            if let Some(skip) = inner_args.count("skip")? {
                action = action.skip(skip);
            }
            if let Some(limit) = inner_args.count("limit")?.filter(|limit| *limit > 0) {
                action = action.limit(i64::try_from(limit).unwrap_or(i64::MAX));
            }
            let plan = in_session!(action, context).explain()?;
            Ok(doc! {
                "queryPlanner": {
                    "namespace": namespace,
                    "parsedQuery": filter,
                    "winningPlan": plan.winning_plan,
                    "rejectedPlans": [],
                },
                "executionStats": {
                    "executionSuccess": true,
                    "nReturned": plan.n_returned as i64,
                    "totalKeysExamined": plan.keys_examined as i64,
                    "totalDocsExamined": plan.docs_examined as i64,
                },
                "ok": 1.0,
            })
        }
        "aggregate" => {
            let Some(pipeline) = inner_args.documents("pipeline")? else {
                return Err(inner_args.missing("pipeline"));
            };
            let pipeline = context
                .commands
                .namespaces
                .pipeline(context.database, &pipeline)?;
            let action = collection.aggregate(pipeline);
            let plan = in_session!(action, context).explain()?;
            Ok(doc! { "stages": plan, "ok": 1.0 })
        }
        other => Err(CommandError::not_supported(format!(
            "explain of '{other}' is not supported (find, count, distinct and aggregate are)"
        ))),
    }
}

/// Refuses what MongoDB refuses of a read concern: `linearizable` or `snapshot` with a
/// pipeline that writes (`$out`/`$merge`), 72 InvalidOptions (a snapshot read's writes would
/// go to a snapshot that is never committed).
fn check_read_concern(args: &Args<'_>, pipeline: &[Document]) -> CommandResult<()> {
    let Some(Bson::Document(read_concern)) = args.get("readConcern") else {
        return Ok(());
    };
    let writes = pipeline
        .last()
        .is_some_and(|stage| stage.contains_key("$out") || stage.contains_key("$merge"));
    match read_concern.get_str("level") {
        Ok(level @ ("linearizable" | "snapshot")) if writes => Err(CommandError::new(
            72,
            format!("cannot run $out or $merge with readConcern level '{level}'"),
        )),
        _ => Ok(()),
    }
}
