//! Runs a [`Command`] against a [`spillway::Database`] and returns what to show.
//!
//! Results are built as BSON in the shape mongosh prints (`{ acknowledged: true,
//! insertedId: 1 }`), so the printer only has to format values. The executor goes through
//! the facade's public API only, and each command is one facade operation, so a command
//! that fails has changed nothing. It keeps one piece of state between commands: the cursor
//! of the last `find`, which `it` continues.

use spillway::bson::{Bson, Document, doc};
use spillway::{Cursor, Database, IndexModel, IndexOptions, ReturnDocument, UpdateResult};
use spillway_doc::shell::Position;

use super::command::{
    AggregateQuery, Command, FindAndModifyOptions, FindQuery, IndexSelector, Operation,
};
use super::error::ShellError;
use super::parse::{COLLECTION_METHODS, CURSOR_METHODS, DATABASE_METHODS};
use crate::patterns;

/// How many documents `find` and `it` show at a time (mongosh's default).
pub const DEFAULT_BATCH_SIZE: usize = 20;

/// What a command produced.
#[derive(Debug, Clone, PartialEq)]
pub enum Reply {
    /// A value, printed in mongosh's style (a top-level string is printed bare, as mongosh
    /// does for `createIndex`'s index name).
    Value(Bson),
    /// Plain lines of text (`show collections`, `help`).
    Lines(Vec<String>),
    /// One batch of a `find`, and whether `it` would show more.
    Batch {
        /// The documents of this batch.
        documents: Vec<Document>,
        /// True when the cursor has more documents.
        more: bool,
    },
    /// Stop reading statements.
    Exit,
}

/// A reply and the notes that come before it (for example that `insertOne` was given an
/// array and ran as `insertMany`).
#[derive(Debug, Clone, PartialEq)]
pub struct Outcome {
    /// Remarks about how the command was run.
    pub notes: Vec<String>,
    /// What the command produced.
    pub reply: Reply,
}

impl From<Reply> for Outcome {
    fn from(reply: Reply) -> Self {
        Outcome {
            notes: Vec::new(),
            reply,
        }
    }
}

/// Runs commands on one database.
pub struct Executor {
    database: Database,
    batch_size: usize,
    open_cursor: Option<OpenCursor>,
}

impl std::fmt::Debug for Executor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Executor")
            .field("database", &self.database)
            .field("batch_size", &self.batch_size)
            .field("cursor_open", &self.open_cursor.is_some())
            .finish()
    }
}

impl Executor {
    /// An executor over `database`, showing [`DEFAULT_BATCH_SIZE`] documents at a time.
    pub fn new(database: Database) -> Executor {
        Executor {
            database,
            batch_size: DEFAULT_BATCH_SIZE,
            open_cursor: None,
        }
    }

    /// The same executor showing `batch_size` documents at a time (at least 1).
    pub fn with_batch_size(mut self, batch_size: usize) -> Executor {
        self.batch_size = batch_size.max(1);
        self
    }

    /// The database commands run against.
    pub fn database(&self) -> &Database {
        &self.database
    }

    /// Runs `command`; `position` (where the statement starts) is attached to errors.
    pub fn execute(
        &mut self,
        command: &Command,
        position: Position,
    ) -> Result<Outcome, ShellError> {
        let database_error = |error| ShellError::database(position, error);
        match command {
            Command::Help => Ok(Reply::Lines(help_lines()).into()),
            Command::Exit => Ok(Reply::Exit.into()),
            Command::ShowCollections => Ok(Reply::Lines(
                self.database
                    .list_collection_names()
                    .map_err(database_error)?,
            )
            .into()),
            Command::ShowPatterns => {
                let patterns = self.database.patterns();
                if patterns.is_empty() {
                    return Ok(Reply::Lines(vec!["no patterns".to_owned()]).into());
                }
                Ok(Reply::Lines(patterns.iter().map(patterns::describe).collect()).into())
            }
            Command::GetPatterns => Ok(Reply::Value(Bson::Array(
                self.database
                    .patterns()
                    .iter()
                    .map(|pattern| Bson::Document(patterns::pattern_document(pattern)))
                    .collect(),
            ))
            .into()),
            Command::VerifyPatterns => {
                let violations = self.database.verify_patterns().map_err(database_error)?;
                if violations.is_empty() {
                    let checked = self.database.patterns().len();
                    return Ok(Reply::Lines(vec![format!(
                        "no violations ({checked} {} checked)",
                        if checked == 1 { "policy" } else { "policies" }
                    )])
                    .into());
                }
                let mut lines: Vec<String> = violations
                    .iter()
                    .map(|violation| format!("violation: {violation}"))
                    .collect();
                lines.push(format!("{} violation(s)", violations.len()));
                Ok(Reply::Lines(lines).into())
            }
            Command::More => {
                let Some(cursor) = self.open_cursor.take() else {
                    return Err(ShellError::usage(
                        position,
                        "no cursor to continue: 'it' shows the next batch of the last find(...) or aggregate(...)",
                    ));
                };
                self.next_batch(cursor).map_err(database_error)
            }
            Command::Collection {
                collection,
                operation,
            } => self
                .run_operation(collection, operation)
                .map_err(|error| match error {
                    Failure::Database(error) => database_error(error),
                    Failure::Usage(message) => ShellError::usage(position, message),
                }),
        }
    }

    fn next_batch(&mut self, mut cursor: OpenCursor) -> spillway::Result<Outcome> {
        let mut documents = Vec::with_capacity(self.batch_size);
        while documents.len() < self.batch_size {
            match cursor.next() {
                Some(document) => documents.push(document?),
                None => break,
            }
        }
        let more = cursor.peek().is_some();
        if more {
            self.open_cursor = Some(cursor);
        }
        Ok(Reply::Batch { documents, more }.into())
    }

    fn run_operation(&mut self, name: &str, operation: &Operation) -> Result<Outcome, Failure> {
        let collection = self.database.collection::<Document>(name);
        let reply = match operation {
            Operation::InsertOne { document } => {
                let result = collection.insert_one(document).run()?;
                Bson::Document(doc! { "acknowledged": true, "insertedId": result.inserted_id })
            }
            Operation::InsertMany {
                documents,
                written_as_insert_one,
            } => {
                // The shell promises all or nothing (docs/cli.md); the facade's insert_many,
                // like MongoDB's, keeps the documents before a failure unless it runs in a
                // transaction, which aborts whole.
                let result = self.database.transaction(|transaction| {
                    collection.insert_many(documents).session(transaction).run()
                })?;
                let mut ids: Vec<(usize, Bson)> = result.inserted_ids.into_iter().collect();
                ids.sort_by_key(|(index, _)| *index);
                let inserted_ids: Document = ids
                    .into_iter()
                    .map(|(index, id)| (index.to_string(), id))
                    .collect();
                let reply =
                    Bson::Document(doc! { "acknowledged": true, "insertedIds": inserted_ids });
                if *written_as_insert_one {
                    return Ok(Outcome {
                        notes: vec![format!(
                            "insertOne was given an array: its {} documents were inserted as insertMany would (mongosh refuses this; write insertMany)",
                            documents.len()
                        )],
                        reply: Reply::Value(reply),
                    });
                }
                reply
            }
            Operation::Find(query) => return self.find(&collection, query),
            Operation::Aggregate(query) => return self.aggregate(&collection, query),
            Operation::FindOne {
                filter,
                projection,
                sort,
                skip,
                expand,
            } => {
                let mut action = collection
                    .find_one(filter.clone())
                    .skip(*skip)
                    .expand(*expand);
                if let Some(sort) = sort {
                    action = action.sort(sort.clone());
                }
                if let Some(projection) = projection {
                    action = action.projection(projection.clone());
                }
                action.run()?.map_or(Bson::Null, Bson::Document)
            }
            Operation::Update {
                filter,
                update,
                multi,
                upsert,
                array_filters,
            } => {
                let action = if *multi {
                    collection.update_many(filter.clone(), update.clone())
                } else {
                    collection.update_one(filter.clone(), update.clone())
                };
                update_reply(
                    action
                        .upsert(*upsert)
                        .array_filters(array_filters.iter().cloned())
                        .run()?,
                )
            }
            Operation::Replace {
                filter,
                replacement,
                upsert,
            } => update_reply(
                collection
                    .replace_one(filter.clone(), replacement)
                    .upsert(*upsert)
                    .run()?,
            ),
            Operation::Delete { filter, multi } => {
                let action = if *multi {
                    collection.delete_many(filter.clone())
                } else {
                    collection.delete_one(filter.clone())
                };
                let result = action.run()?;
                Bson::Document(doc! {
                    "acknowledged": true,
                    "deletedCount": count_value(result.deleted_count),
                })
            }
            Operation::FindOneAndUpdate {
                filter,
                update,
                options,
            } => {
                let action = collection.find_one_and_update(filter.clone(), update.clone());
                let action = apply_find_and_modify_options(action, options)
                    .array_filters(options.array_filters.iter().cloned());
                action.run()?.map_or(Bson::Null, Bson::Document)
            }
            Operation::FindOneAndReplace {
                filter,
                replacement,
                options,
            } => {
                let action = collection.find_one_and_replace(filter.clone(), replacement);
                apply_find_and_modify_options(action, options)
                    .run()?
                    .map_or(Bson::Null, Bson::Document)
            }
            Operation::FindOneAndDelete {
                filter,
                sort,
                projection,
            } => {
                let mut action = collection.find_one_and_delete(filter.clone());
                if let Some(sort) = sort {
                    action = action.sort(sort.clone());
                }
                if let Some(projection) = projection {
                    action = action.projection(projection.clone());
                }
                action.run()?.map_or(Bson::Null, Bson::Document)
            }
            Operation::CountDocuments {
                filter,
                skip,
                limit,
            } => count_value(
                collection
                    .count_documents(filter.clone())
                    .skip(*skip)
                    .limit(*limit)
                    .run()?,
            ),
            Operation::EstimatedDocumentCount => {
                count_value(collection.estimated_document_count()?)
            }
            Operation::Distinct { field, filter } => {
                Bson::Array(collection.distinct(field, filter.clone()).run()?)
            }
            Operation::CreateIndex { keys, unique, name } => {
                let mut options = IndexOptions::builder().unique(*unique);
                if let Some(name) = name {
                    options = options.name(name.clone());
                }
                let model = IndexModel::builder()
                    .keys(keys.clone())
                    .options(options.build())
                    .build();
                Bson::String(collection.create_index(model).run()?.index_name)
            }
            Operation::GetIndexes => Bson::Array(
                collection
                    .list_indexes()?
                    .into_iter()
                    .map(|model| {
                        let options = model.options.unwrap_or_default();
                        let mut described = doc! {
                            "v": 2,
                            "key": model.keys,
                            "name": options.name.unwrap_or_default(),
                        };
                        if options.unique == Some(true) {
                            described.insert("unique", true);
                        }
                        Bson::Document(described)
                    })
                    .collect(),
            ),
            Operation::DropIndex(selector) => {
                let indexes = collection.list_indexes()?;
                let name = match selector {
                    IndexSelector::Name(name) => name.clone(),
                    IndexSelector::Keys(keys) => indexes
                        .iter()
                        .find(|model| &model.keys == keys)
                        .and_then(|model| model.options.as_ref()?.name.clone())
                        .ok_or_else(|| {
                            Failure::Usage(format!(
                                "no index of collection '{name}' has the key pattern {}",
                                Bson::Document(keys.clone())
                            ))
                        })?,
                };
                collection.drop_index(&name).run()?;
                Bson::Document(doc! { "nIndexesWas": indexes.len() as i32, "ok": 1 })
            }
            Operation::Drop => {
                let existed = self
                    .database
                    .list_collection_names()?
                    .iter()
                    .any(|known| known == name);
                collection.drop().run()?;
                Bson::Boolean(existed)
            }
            Operation::SetPattern(pattern) => {
                self.database.set_pattern(pattern.clone())?;
                Bson::Document(doc! {
                    "ok": 1,
                    "pattern": patterns::pattern_document(pattern),
                })
            }
            Operation::RemovePattern { field } => {
                let removed = self
                    .database
                    .patterns()
                    .into_iter()
                    .find(|pattern| pattern.collection() == name && pattern.field() == field);
                self.database.remove_pattern(name, field)?;
                let mut reply = doc! { "ok": 1 };
                if let Some(removed) = removed {
                    reply.insert("removed", patterns::pattern_document(&removed));
                }
                Bson::Document(reply)
            }
            Operation::ArrayLength { id, field } => collection
                .array_len(id.clone(), field)?
                .map_or(Bson::Null, count_value),
            Operation::ArrayPage {
                id,
                field,
                skip,
                limit,
            } => collection
                .array_page(id.clone(), field, *skip, *limit)?
                .map_or(Bson::Null, Bson::Array),
            Operation::Advise => {
                let report = crate::advise::report(&collection).map_err(|error| match error {
                    crate::advise::AdviseError::Database(error) => Failure::Database(error),
                    other => Failure::Usage(other.to_string()),
                })?;
                return Ok(
                    Reply::Lines(report.to_string().lines().map(str::to_owned).collect()).into(),
                );
            }
        };
        Ok(Reply::Value(reply).into())
    }

    fn find(
        &mut self,
        collection: &spillway::Collection<Document>,
        query: &FindQuery,
    ) -> Result<Outcome, Failure> {
        let mut action = collection
            .find(query.filter.clone())
            .skip(query.skip)
            .limit(query.limit)
            .expand(query.expand);
        if let Some(sort) = &query.sort {
            action = action.sort(sort.clone());
        }
        if let Some(projection) = &query.projection {
            action = action.projection(projection.clone());
        }
        if query.explain {
            let explain = action.explain()?;
            return Ok(Reply::Value(Bson::Document(doc! {
                "queryPlanner": {
                    "namespace": collection.name(),
                    "winningPlan": explain.winning_plan,
                },
                "executionStats": {
                    "nReturned": count_value(explain.n_returned),
                    "totalKeysExamined": count_value(explain.keys_examined),
                    "totalDocsExamined": count_value(explain.docs_examined),
                },
            }))
            .into());
        }
        // A new find replaces the cursor `it` would have continued.
        self.open_cursor = None;
        Ok(self.next_batch(action.run()?.peekable())?)
    }

    fn aggregate(
        &mut self,
        collection: &spillway::Collection<Document>,
        query: &AggregateQuery,
    ) -> Result<Outcome, Failure> {
        let mut action = collection.aggregate(query.pipeline.clone());
        if let Some(let_vars) = &query.let_vars {
            action = action.let_vars(let_vars.clone());
        }
        if query.explain {
            return Ok(Reply::Value(Bson::Document(action.explain()?)).into());
        }
        // A new aggregate replaces the cursor `it` would have continued.
        self.open_cursor = None;
        Ok(self.next_batch(action.run()?.peekable())?)
    }
}

type OpenCursor = std::iter::Peekable<Cursor<Document>>;

/// Why an operation failed: the database refused it, or the shell cannot express it.
enum Failure {
    Database(spillway::Error),
    Usage(String),
}

impl From<spillway::Error> for Failure {
    fn from(error: spillway::Error) -> Self {
        Failure::Database(error)
    }
}

fn apply_find_and_modify_options<'a>(
    mut action: spillway::FindOneAndModify<'a, Document>,
    options: &FindAndModifyOptions,
) -> spillway::FindOneAndModify<'a, Document> {
    if let Some(sort) = &options.sort {
        action = action.sort(sort.clone());
    }
    if let Some(projection) = &options.projection {
        action = action.projection(projection.clone());
    }
    action
        .upsert(options.upsert)
        .return_document(if options.return_after {
            ReturnDocument::After
        } else {
            ReturnDocument::Before
        })
}

/// An update or replace result as mongosh prints it.
fn update_reply(result: UpdateResult) -> Bson {
    let upserted = result.upserted_id.is_some();
    Bson::Document(doc! {
        "acknowledged": true,
        "insertedId": result.upserted_id.unwrap_or(Bson::Null),
        "matchedCount": count_value(result.matched_count),
        "modifiedCount": count_value(result.modified_count),
        "upsertedCount": i32::from(upserted),
    })
}

/// A count as mongosh shows it: a plain number (Int32 when it fits).
fn count_value(count: u64) -> Bson {
    match i32::try_from(count) {
        Ok(small) => Bson::Int32(small),
        Err(_) => Bson::Int64(count as i64),
    }
}

fn help_lines() -> Vec<String> {
    vec![
        "Statements (mongosh syntax; end one with ';' or a new line, brackets may span lines):".to_owned(),
        "  db.<collection>.<method>(...)        also db.collection('<name>').<method>(...) and db['<name>']".to_owned(),
        format!("  collection methods: {}", COLLECTION_METHODS.join(", ")),
        format!("  after find(...): {}", CURSOR_METHODS.join(", ")),
        "  options as in mongosh: {upsert: true}, {arrayFilters: [...]}, {returnDocument: 'after'}, {unique: true}".to_owned(),
        format!("  db.<method>(): {}", DATABASE_METHODS.join(", ")),
        "  patterns: db.<coll>.setPattern({outlier: '<field>', threshold: 50, ...}) or ({subset: '<field>', keep: 10, sortBy: {...}, ...}),".to_owned(),
        "            removePattern('<field>'), arrayLength(id, '<field>'), arrayPage(id, '<field>', {skip, limit}), advise(),".to_owned(),
        "            findOne(filter, projection, {expand: true}), find(...).expand(): managed arrays whole".to_owned(),
        "  show collections                     list the collections".to_owned(),
        "  show patterns                        list the pattern policies".to_owned(),
        "  it                                   the next batch of the last find".to_owned(),
        "  help                                 this text".to_owned(),
        "  exit, quit                           leave the shell".to_owned(),
        "Values: mongosh literals and Extended JSON, e.g. ObjectId('...'), ISODate('2024-01-01'), NumberLong(5), Decimal128('1.5'), /regex/i".to_owned(),
    ]
}
