//! Runs a [`Command`] through the command layer ([`spillway::command::Commands`]) and returns
//! what to show.
//!
//! Each statement becomes the MongoDB command a driver would send (`insertOne` an `insert`,
//! `find` a `find` and, for `it`, a `getMore`; `setPattern` the `setPattern` command), so that
//! the shell, the wire server and the conformance runner share one implementation of every
//! operation, its semantics and its errors. Replies are turned into the shapes mongosh prints
//! (`{ acknowledged: true, insertedId: 1 }`), so the printer only has to format values. As in
//! mongosh, `insertOne` and `insertMany` give documents without an `_id` a new ObjectId before
//! sending them, and an ordered `insertMany` keeps the documents before a failure.
//!
//! The executor keeps one piece of state between commands: the cursor of the last `find` or
//! `aggregate`, which `it` continues. Collections are named as they are stored
//! ([`Namespaces::Flat`]): the shell works on one database.

use spillway::bson::oid::ObjectId;
use spillway::bson::{Bson, Document, doc};
use spillway::command::{Commands, Namespaces};
use spillway::{Database, Pattern, Violation};
use spillway_doc::shell::Position;

use super::command::{
    AggregateQuery, Command, DatabaseOperation, FindAndModifyOptions, FindQuery, IndexSelector,
    Operation,
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
    commands: Commands,
    batch_size: usize,
    open_cursor: Option<OpenCursor>,
    database_name: String,
}

/// The name `db.getName()` answers when the database has no usable one (mongosh's default,
/// and the name `spillway serve` gives such a database's collections).
pub const DEFAULT_DATABASE_NAME: &str = spillway::command::DEFAULT_EMBEDDED_DATABASE;

/// What `it` continues: the server-side cursor (id 0 once the server closed it) and the
/// documents already fetched beyond the last batch shown.
///
/// The shell asks for one document more than it shows, so that it knows whether to offer
/// `it`: a server keeps a cursor open after a full batch even when nothing follows.
#[derive(Debug)]
struct OpenCursor {
    id: i64,
    collection: String,
    ahead: Vec<Document>,
}

impl std::fmt::Debug for Executor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Executor")
            .field("database", self.commands.database())
            .field("database_name", &self.database_name)
            .field("batch_size", &self.batch_size)
            .field("cursor_open", &self.open_cursor.is_some())
            .finish()
    }
}

/// Why an operation failed: the database refused it, or the shell cannot express it.
enum Failure {
    Database(Refusal),
    Usage(String),
}

/// A refusal as the command layer reports it: MongoDB's code, codeName and message.
struct Refusal {
    code: i32,
    code_name: String,
    message: String,
}

impl Refusal {
    /// The refusal in a reply with `ok: 0`, or in one of its write errors.
    fn of(error: &Document) -> Refusal {
        Refusal {
            code: error.get_i32("code").unwrap_or(1),
            code_name: error
                .get_str("codeName")
                .unwrap_or("InternalError")
                .to_owned(),
            message: error
                .get_str("errmsg")
                .unwrap_or("the command failed")
                .to_owned(),
        }
    }
}

impl From<spillway::Error> for Failure {
    fn from(error: spillway::Error) -> Self {
        Failure::Database(Refusal {
            code: error.code().unwrap_or(1),
            code_name: error
                .code_name()
                .map_or_else(|| "InternalError".to_owned(), std::borrow::Cow::into_owned),
            message: error.to_string(),
        })
    }
}

impl Failure {
    fn at(self, position: Position) -> ShellError {
        match self {
            Failure::Database(refusal) => {
                ShellError::database(position, refusal.code, refusal.code_name, refusal.message)
            }
            Failure::Usage(message) => ShellError::usage(position, message),
        }
    }
}

impl Executor {
    /// An executor over `database`, showing [`DEFAULT_BATCH_SIZE`] documents at a time.
    pub fn new(database: Database) -> Executor {
        Executor {
            commands: Commands::with_namespaces(database, Namespaces::Flat),
            batch_size: DEFAULT_BATCH_SIZE,
            open_cursor: None,
            database_name: DEFAULT_DATABASE_NAME.to_owned(),
        }
    }

    /// The same executor naming its database `name` (`db.getName()`, `dbStats`'s `db`):
    /// `spillway shell` gives its directory's name. A name MongoDB would refuse (empty, over
    /// 63 bytes, or holding `/\. "$` or NUL) is replaced by [`DEFAULT_DATABASE_NAME`].
    pub fn with_database_name(mut self, name: &str) -> Executor {
        self.database_name = if spillway::command::is_valid_database_name(name) {
            name.to_owned()
        } else {
            DEFAULT_DATABASE_NAME.to_owned()
        };
        self
    }

    /// The same executor showing `batch_size` documents at a time (at least 1).
    pub fn with_batch_size(mut self, batch_size: usize) -> Executor {
        self.batch_size = batch_size.max(1);
        self
    }

    /// The database commands run against.
    pub fn database(&self) -> &Database {
        self.commands.database()
    }

    /// Runs `command`; `position` (where the statement starts) is attached to errors.
    pub fn execute(
        &mut self,
        command: &Command,
        position: Position,
    ) -> Result<Outcome, ShellError> {
        self.run_statement(command)
            .map_err(|error| error.at(position))
    }

    fn run_statement(&mut self, command: &Command) -> Result<Outcome, Failure> {
        match command {
            Command::Help => Ok(Reply::Lines(help_lines()).into()),
            Command::Exit => Ok(Reply::Exit.into()),
            Command::ShowCollections => Ok(Reply::Lines(self.collection_names()?).into()),
            Command::GetCollectionNames => Ok(Reply::Value(Bson::Array(
                self.collection_names()?
                    .into_iter()
                    .map(Bson::String)
                    .collect(),
            ))
            .into()),
            Command::Database(operation) => self.run_database_operation(operation),
            Command::ShowPatterns => {
                let patterns = self.patterns(Bson::Int32(1))?;
                if patterns.is_empty() {
                    return Ok(Reply::Lines(vec!["no patterns".to_owned()]).into());
                }
                Ok(Reply::Lines(patterns.iter().map(patterns::describe).collect()).into())
            }
            Command::GetPatterns => {
                let reply = self.run(doc! { "getPatterns": 1 })?;
                Ok(Reply::Value(reply.get("patterns").cloned().unwrap_or_default()).into())
            }
            Command::VerifyPatterns => self.verify_patterns(),
            Command::More => {
                let Some(cursor) = self.open_cursor.take() else {
                    return Err(Failure::Usage(
                        "no cursor to continue: 'it' shows the next batch of the last find(...) or aggregate(...)"
                            .to_owned(),
                    ));
                };
                if cursor.id == 0 {
                    return Ok(self.show(&cursor.collection, 0, cursor.ahead));
                }
                let wanted = (self.batch_size + 1)
                    .saturating_sub(cursor.ahead.len())
                    .max(1);
                let reply = self.run(doc! {
                    "getMore": cursor.id,
                    "collection": &cursor.collection,
                    "batchSize": i64::try_from(wanted).unwrap_or(i64::MAX),
                })?;
                self.batch(&cursor.collection, &reply, "nextBatch", cursor.ahead)
            }
            Command::Collection {
                collection,
                operation,
            } => self.run_operation(collection, operation),
        }
    }

    fn run_database_operation(
        &mut self,
        operation: &DatabaseOperation,
    ) -> Result<Outcome, Failure> {
        let value = match operation {
            DatabaseOperation::CreateCollection { name, options } => {
                let mut command = doc! { "create": name };
                command.extend(options.clone());
                self.run(command)?;
                Bson::Document(doc! { "ok": 1 })
            }
            DatabaseOperation::DropDatabase => {
                // Its cursors end with it.
                self.close_cursor();
                self.run(doc! { "dropDatabase": 1, "$db": &self.database_name })?;
                Bson::Document(doc! { "ok": 1, "dropped": &self.database_name })
            }
            DatabaseOperation::Stats => Bson::Document(as_shown(
                self.run(doc! { "dbStats": 1, "$db": &self.database_name })?,
            )),
            DatabaseOperation::Version => Bson::String(spillway_server::MONGODB_VERSION.to_owned()),
            DatabaseOperation::GetName => Bson::String(self.database_name.clone()),
        };
        Ok(Reply::Value(value).into())
    }

    /// Executes `command`, turning `ok: 0` into a failure.
    fn run(&self, command: Document) -> Result<Document, Failure> {
        let reply = self.commands.execute(command);
        if reply.get_f64("ok").is_ok_and(|ok| ok > 0.5) {
            Ok(reply)
        } else {
            Err(Failure::Database(Refusal::of(&reply)))
        }
    }

    /// Executes a write command, turning its first write error into a failure.
    fn run_write(&self, command: Document) -> Result<Document, Failure> {
        let reply = self.run(command)?;
        let first_error = match reply.get_array("writeErrors") {
            Ok(errors) => errors.first().and_then(Bson::as_document),
            Err(_) => None,
        };
        match first_error {
            Some(error) => Err(Failure::Database(Refusal::of(error))),
            None => Ok(reply),
        }
    }

    /// The batch size the shell asks the server for: one more than it shows.
    fn fetch_size_value(&self) -> i64 {
        i64::try_from(self.batch_size.saturating_add(1)).unwrap_or(i64::MAX)
    }

    /// The batch in a cursor reply (`firstBatch` or `nextBatch`) after the documents fetched
    /// `ahead` before it, keeping the cursor for `it`.
    fn batch(
        &mut self,
        collection: &str,
        reply: &Document,
        key: &str,
        ahead: Vec<Document>,
    ) -> Result<Outcome, Failure> {
        let cursor = reply
            .get_document("cursor")
            .map_err(|_| Failure::Usage("the reply carries no cursor".to_owned()))?;
        let mut documents = ahead;
        documents.extend(cursor_batch(reply, key));
        let id = cursor.get_i64("id").unwrap_or(0);
        Ok(self.show(collection, id, documents))
    }

    /// Shows the first batch-size `documents`, keeping the rest and cursor `id` for `it`.
    fn show(&mut self, collection: &str, id: i64, mut documents: Vec<Document>) -> Outcome {
        let ahead = if documents.len() > self.batch_size {
            documents.split_off(self.batch_size)
        } else {
            Vec::new()
        };
        let more = id != 0 || !ahead.is_empty();
        self.open_cursor = more.then(|| OpenCursor {
            id,
            collection: collection.to_owned(),
            ahead,
        });
        Reply::Batch { documents, more }.into()
    }

    fn collection_names(&self) -> Result<Vec<String>, Failure> {
        let reply = self.run(doc! { "listCollections": 1, "nameOnly": true })?;
        let mut names: Vec<String> = first_batch(&reply)
            .iter()
            .filter_map(|entry| entry.get_str("name").ok().map(str::to_owned))
            .collect();
        names.sort();
        Ok(names)
    }

    /// The policies `getPatterns` lists (of one collection, or all with `1`).
    fn patterns(&self, of: Bson) -> Result<Vec<Pattern>, Failure> {
        let reply = self.run(doc! { "getPatterns": of })?;
        let listed = reply.get_array("patterns").cloned().unwrap_or_default();
        listed
            .iter()
            .filter_map(Bson::as_document)
            .map(|described| {
                let collection = described.get_str("collection").unwrap_or_default();
                Pattern::from_options(collection, described, &["collection"])
                    .map_err(|error| Failure::Usage(error.to_string()))
            })
            .collect()
    }

    fn verify_patterns(&self) -> Result<Outcome, Failure> {
        let reply = self.run(doc! { "verifyPatterns": 1 })?;
        let violations = reply.get_array("violations").cloned().unwrap_or_default();
        if violations.is_empty() {
            let checked = self.patterns(Bson::Int32(1))?.len();
            return Ok(Reply::Lines(vec![format!(
                "no violations ({checked} {} checked)",
                if checked == 1 { "policy" } else { "policies" }
            )])
            .into());
        }
        let mut lines: Vec<String> = violations
            .iter()
            .filter_map(Bson::as_document)
            .map(|violation| {
                let violation = Violation {
                    collection: violation
                        .get_str("collection")
                        .unwrap_or_default()
                        .to_owned(),
                    id: violation.get("_id").cloned().unwrap_or_default(),
                    field: violation.get_str("field").unwrap_or_default().to_owned(),
                    problem: violation.get_str("problem").unwrap_or_default().to_owned(),
                };
                format!("violation: {violation}")
            })
            .collect();
        lines.push(format!("{} violation(s)", violations.len()));
        Ok(Reply::Lines(lines).into())
    }

    fn run_operation(&mut self, name: &str, operation: &Operation) -> Result<Outcome, Failure> {
        let reply = match operation {
            Operation::InsertOne { document, passed } => self.insert_one(name, document, passed)?,
            Operation::InsertMany {
                documents,
                written_as_insert_one,
                passed,
            } => {
                return self.insert_many_operation(name, documents, *written_as_insert_one, passed);
            }
            Operation::Find(query) => return self.find(name, query),
            Operation::Aggregate(query) => return self.aggregate(name, query),
            Operation::FindOne {
                filter,
                projection,
                sort,
                skip,
                passed,
            } => self.find_one(
                name,
                filter,
                projection.as_ref(),
                sort.as_ref(),
                *skip,
                passed,
            )?,
            Operation::Update {
                filter,
                update,
                multi,
                upsert,
                array_filters,
                passed,
            } => {
                let statement = update_statement(filter, update, *multi, *upsert, array_filters);
                self.update(name, statement, passed)?
            }
            Operation::Replace {
                filter,
                replacement,
                upsert,
                passed,
            } => {
                let statement =
                    doc! { "q": filter.clone(), "u": replacement.clone(), "upsert": *upsert };
                self.update(name, statement, passed)?
            }
            Operation::Delete {
                filter,
                multi,
                passed,
            } => self.delete(name, filter, *multi, passed)?,
            Operation::FindOneAndUpdate {
                filter,
                update,
                options,
            } => self.find_one_and_update(name, filter, update, options)?,
            Operation::FindOneAndReplace {
                filter,
                replacement,
                options,
            } => self.find_one_and_replace(name, filter, replacement, options)?,
            Operation::FindOneAndDelete {
                filter,
                sort,
                projection,
                passed,
            } => {
                self.find_one_and_delete(name, filter, sort.as_ref(), projection.as_ref(), passed)?
            }
            Operation::CountDocuments {
                filter,
                skip,
                limit,
                passed,
            } => self.count_documents(name, filter, *skip, *limit, passed)?,
            Operation::EstimatedDocumentCount => self
                .run(doc! { "count": name })?
                .get("n")
                .cloned()
                .unwrap_or(Bson::Int32(0)),
            Operation::Distinct {
                field,
                filter,
                passed,
            } => self.distinct(name, field, filter, passed)?,
            Operation::CreateIndex { keys, options } => self.create_index(name, keys, options)?,
            Operation::GetIndexes => Bson::Array(
                self.indexes(name)?
                    .into_iter()
                    .map(Bson::Document)
                    .collect(),
            ),
            Operation::DropIndex(selector) => self.drop_index(name, selector)?,
            Operation::Drop => self.drop_collection(name)?,
            Operation::Stats => Bson::Document(as_shown(self.run(doc! { "collStats": name })?)),
            Operation::RenameCollection { to, drop_target } => {
                self.rename_collection(name, to, *drop_target)?
            }
            Operation::SetPattern(pattern) => self.set_pattern(name, pattern)?,
            Operation::RemovePattern { field } => self.remove_pattern(name, field)?,
            Operation::ArrayLength { id, field } => self.array_length(name, id, field)?,
            Operation::ArrayPage {
                id,
                field,
                skip,
                limit,
            } => self.array_page(name, id, field, *skip, *limit)?,
            Operation::Advise => return self.advise(name),
        };
        Ok(Reply::Value(reply).into())
    }

    /// `insertOne`: the document (given an `_id` if it has none) inserted; replies its `_id`.
    fn insert_one(
        &self,
        name: &str,
        document: &Document,
        passed: &Document,
    ) -> Result<Bson, Failure> {
        let document = with_id(document);
        let id = document.get("_id").cloned().unwrap_or_default();
        self.run_write(with_passed(
            doc! { "insert": name, "documents": [document] },
            passed,
        )?)?;
        Ok(Bson::Document(
            doc! { "acknowledged": true, "insertedId": id },
        ))
    }

    /// `insertMany`, with a note when it was written as `insertOne` with an array.
    fn insert_many_operation(
        &self,
        name: &str,
        documents: &[Document],
        written_as_insert_one: bool,
        passed: &Document,
    ) -> Result<Outcome, Failure> {
        let reply = self.insert_many(name, documents, passed)?;
        if written_as_insert_one {
            return Ok(Outcome {
                notes: vec![format!(
                    "insertOne was given an array: its {} documents were inserted as insertMany would (mongosh refuses this; write insertMany)",
                    documents.len()
                )],
                reply: Reply::Value(reply),
            });
        }
        Ok(Reply::Value(reply).into())
    }

    /// `findOne`: a `find` of one document in a single batch; null when none matches.
    fn find_one(
        &self,
        name: &str,
        filter: &Document,
        projection: Option<&Document>,
        sort: Option<&Document>,
        skip: u64,
        passed: &Document,
    ) -> Result<Bson, Failure> {
        let mut find = doc! {
            "find": name,
            "filter": filter.clone(),
            "limit": 1_i64,
            "singleBatch": true,
        };
        insert_some(&mut find, "sort", sort);
        insert_some(&mut find, "projection", projection);
        if skip > 0 {
            find.insert("skip", count_value(skip));
        }
        let reply = self.run(with_passed(find, passed)?)?;
        Ok(first_batch(&reply)
            .into_iter()
            .next()
            .map_or(Bson::Null, Bson::Document))
    }

    /// `deleteOne` (`multi` false) and `deleteMany`: replies the count deleted.
    fn delete(
        &self,
        name: &str,
        filter: &Document,
        multi: bool,
        passed: &Document,
    ) -> Result<Bson, Failure> {
        let statement = doc! { "q": filter.clone(), "limit": i32::from(!multi) };
        let command = statement_command("delete", name, "deletes", statement, passed)?;
        let reply = self.run_write(command)?;
        Ok(Bson::Document(doc! {
            "acknowledged": true,
            "deletedCount": count_value(count_of(&reply, "n")),
        }))
    }

    /// `updateOne`, `updateMany` and `replaceOne`: an `update` command of one `statement`.
    fn update(&self, name: &str, statement: Document, passed: &Document) -> Result<Bson, Failure> {
        let command = statement_command("update", name, "updates", statement, passed)?;
        Ok(update_reply(&self.run_write(command)?))
    }

    /// `findOneAndUpdate`: replies the document before or after the update.
    fn find_one_and_update(
        &self,
        name: &str,
        filter: &Document,
        update: &Document,
        options: &FindAndModifyOptions,
    ) -> Result<Bson, Failure> {
        let mut command = find_and_modify(name, filter, options);
        command.insert("update", update.clone());
        if !options.array_filters.is_empty() {
            command.insert("arrayFilters", options.array_filters.clone());
        }
        self.find_and_modify_value(command, &options.passed)
    }

    /// `findOneAndReplace`: replies the document before or after the replacement.
    fn find_one_and_replace(
        &self,
        name: &str,
        filter: &Document,
        replacement: &Document,
        options: &FindAndModifyOptions,
    ) -> Result<Bson, Failure> {
        let mut command = find_and_modify(name, filter, options);
        command.insert("update", replacement.clone());
        self.find_and_modify_value(command, &options.passed)
    }

    /// `findOneAndDelete`: replies the document deleted.
    fn find_one_and_delete(
        &self,
        name: &str,
        filter: &Document,
        sort: Option<&Document>,
        projection: Option<&Document>,
        passed: &Document,
    ) -> Result<Bson, Failure> {
        let mut command = doc! { "findAndModify": name, "query": filter.clone(), "remove": true };
        insert_some(&mut command, "sort", sort);
        insert_some(&mut command, "fields", projection);
        self.find_and_modify_value(command, passed)
    }

    /// Runs a `findAndModify` command with the options passed through: its `value`.
    fn find_and_modify_value(&self, command: Document, passed: &Document) -> Result<Bson, Failure> {
        Ok(self
            .run(with_passed(command, passed)?)?
            .get("value")
            .cloned()
            .unwrap_or_default())
    }

    /// `countDocuments`: a `$match`, `$skip`, `$limit` and `$group` counting what is left.
    fn count_documents(
        &self,
        name: &str,
        filter: &Document,
        skip: u64,
        limit: u64,
        passed: &Document,
    ) -> Result<Bson, Failure> {
        let mut pipeline = vec![doc! { "$match": filter.clone() }];
        if skip > 0 {
            pipeline.push(doc! { "$skip": count_value(skip) });
        }
        if limit > 0 {
            pipeline.push(doc! { "$limit": count_value(limit) });
        }
        pipeline.push(doc! { "$group": { "_id": 1, "n": { "$sum": 1 } } });
        let reply = self.run(with_passed(
            doc! { "aggregate": name, "pipeline": pipeline, "cursor": {} },
            passed,
        )?)?;
        Ok(first_batch(&reply)
            .first()
            .and_then(|group| group.get("n").cloned())
            .unwrap_or(Bson::Int32(0)))
    }

    /// `distinct`: the distinct values of `field` in the documents `filter` matches.
    fn distinct(
        &self,
        name: &str,
        field: &str,
        filter: &Document,
        passed: &Document,
    ) -> Result<Bson, Failure> {
        Ok(self
            .run(with_passed(
                doc! { "distinct": name, "key": field, "query": filter.clone() },
                passed,
            )?)?
            .get("values")
            .cloned()
            .unwrap_or_else(|| Bson::Array(Vec::new())))
    }

    /// `createIndex`: replies the name of the index created (or found identical).
    fn create_index(
        &self,
        name: &str,
        keys: &Document,
        options: &Document,
    ) -> Result<Bson, Failure> {
        let index_name = options.get_str("name").ok();
        let (index, passed) = split_options(
            doc! { "key": keys.clone() },
            options,
            &["commitQuorum", "comment"],
        );
        let command = doc! { "createIndexes": name, "indexes": [index] };
        self.run(with_passed(command, &passed)?)?;
        let created = self
            .indexes(name)?
            .into_iter()
            .find(|listed| match index_name {
                Some(index_name) => listed.get_str("name").ok() == Some(index_name),
                None => listed.get_document("key").ok() == Some(keys),
            });
        Ok(created
            .and_then(|listed| listed.get("name").cloned())
            .unwrap_or_default())
    }

    /// `dropIndex`, by name or by key pattern.
    fn drop_index(&self, name: &str, selector: &IndexSelector) -> Result<Bson, Failure> {
        let index = match selector {
            IndexSelector::Name(index_name) => Bson::String(index_name.clone()),
            IndexSelector::Keys(keys) => Bson::Document(keys.clone()),
        };
        Ok(Bson::Document(as_shown(
            self.run(doc! { "dropIndexes": name, "index": index })?,
        )))
    }

    /// `drop`: whether the collection existed (and was dropped).
    fn drop_collection(&self, name: &str) -> Result<Bson, Failure> {
        let existed = self.collection_names()?.iter().any(|known| known == name);
        if existed {
            self.run(doc! { "drop": name })?;
        }
        Ok(Bson::Boolean(existed))
    }

    /// `renameCollection` within the current database.
    fn rename_collection(&self, name: &str, to: &str, drop_target: bool) -> Result<Bson, Failure> {
        let database = &self.database_name;
        self.run(doc! {
            "renameCollection": format!("{database}.{name}"),
            "to": format!("{database}.{to}"),
            "dropTarget": drop_target,
            "$db": "admin",
        })?;
        Ok(Bson::Document(doc! { "ok": 1 }))
    }

    /// `setPattern`: replies the pattern as declared.
    fn set_pattern(&self, name: &str, pattern: &Pattern) -> Result<Bson, Failure> {
        let mut command = doc! { "setPattern": name };
        command.extend(patterns::options_document(pattern));
        self.run(command)?;
        let declared = self
            .patterns(Bson::String(name.to_owned()))?
            .into_iter()
            .find(|declared| declared.field() == pattern.field());
        let mut reply = doc! { "ok": 1 };
        if let Some(declared) = declared {
            reply.insert("pattern", patterns::pattern_document(&declared));
        }
        Ok(Bson::Document(reply))
    }

    /// `removePattern`: replies the pattern removed, if there was one.
    fn remove_pattern(&self, name: &str, field: &str) -> Result<Bson, Failure> {
        let removed = self
            .patterns(Bson::String(name.to_owned()))?
            .into_iter()
            .find(|pattern| pattern.field() == field);
        self.run(doc! { "removePattern": name, "field": field })?;
        let mut reply = doc! { "ok": 1 };
        if let Some(removed) = removed {
            reply.insert("removed", patterns::pattern_document(&removed));
        }
        Ok(Bson::Document(reply))
    }

    /// `arrayLength`: the logical length of an array, null when the document has none.
    fn array_length(&self, name: &str, id: &Bson, field: &str) -> Result<Bson, Failure> {
        let reply = self.run(doc! { "arrayLength": name, "_id": id.clone(), "field": field })?;
        Ok(match reply.get("length") {
            Some(Bson::Null) | None => Bson::Null,
            Some(_) => count_value(count_of(&reply, "length")),
        })
    }

    /// `arrayPage`: `limit` elements of an array after `skip`.
    fn array_page(
        &self,
        name: &str,
        id: &Bson,
        field: &str,
        skip: usize,
        limit: usize,
    ) -> Result<Bson, Failure> {
        Ok(self
            .run(doc! {
                "arrayPage": name,
                "_id": id.clone(),
                "field": field,
                "skip": count_value(skip as u64),
                "limit": count_value(limit as u64),
            })?
            .get("elements")
            .cloned()
            .unwrap_or_default())
    }

    /// `advise`: the advisor's report on the collection, as lines.
    fn advise(&self, name: &str) -> Result<Outcome, Failure> {
        let collection = self.database().collection::<Document>(name);
        let report = crate::advise::report(&collection).map_err(|error| match error {
            crate::advise::AdviseError::Database(error) => Failure::from(error),
            other => Failure::Usage(other.to_string()),
        })?;
        Ok(Reply::Lines(report.to_string().lines().map(str::to_owned).collect()).into())
    }

    /// `insertMany`: ordered, as mongosh sends it; the documents before a failure stay, and
    /// the error says how many.
    fn insert_many(
        &self,
        name: &str,
        documents: &[Document],
        passed: &Document,
    ) -> Result<Bson, Failure> {
        let documents: Vec<Document> = documents.iter().map(with_id).collect();
        let command = doc! { "insert": name, "documents": documents.clone() };
        let reply = self.run(with_passed(command, passed)?)?;
        if let Ok(errors) = reply.get_array("writeErrors")
            && let Some(error) = errors.first().and_then(Bson::as_document)
        {
            let mut refusal = Refusal::of(error);
            refusal.message = format!(
                "{} (insertMany stopped there: {} of its {} documents were inserted)",
                refusal.message,
                count_of(&reply, "n"),
                documents.len()
            );
            return Err(Failure::Database(refusal));
        }
        let inserted_ids: Document = documents
            .iter()
            .enumerate()
            .map(|(index, document)| {
                (
                    index.to_string(),
                    document.get("_id").cloned().unwrap_or_default(),
                )
            })
            .collect();
        Ok(Bson::Document(
            doc! { "acknowledged": true, "insertedIds": inserted_ids },
        ))
    }

    fn indexes(&self, name: &str) -> Result<Vec<Document>, Failure> {
        let reply = self.run(doc! { "listIndexes": name })?;
        Ok(first_batch(&reply))
    }

    fn find(&mut self, name: &str, query: &FindQuery) -> Result<Outcome, Failure> {
        let mut find = doc! { "find": name, "filter": query.filter.clone() };
        insert_some(&mut find, "sort", query.sort.as_ref());
        insert_some(&mut find, "projection", query.projection.as_ref());
        if query.skip > 0 {
            find.insert("skip", count_value(query.skip));
        }
        if query.limit != 0 {
            find.insert("limit", query.limit);
        }
        let mut find = with_passed(find, &query.passed)?;
        if query.explain {
            return self.explain(find);
        }
        find.insert("batchSize", self.fetch_size_value());
        // A new find replaces the cursor `it` would have continued.
        self.close_cursor();
        let reply = self.run(find)?;
        self.batch(name, &reply, "firstBatch", Vec::new())
    }

    fn aggregate(&mut self, name: &str, query: &AggregateQuery) -> Result<Outcome, Failure> {
        let mut aggregate = doc! {
            "aggregate": name,
            "pipeline": query.pipeline.clone(),
            "cursor": { "batchSize": self.fetch_size_value() },
        };
        insert_some(&mut aggregate, "let", query.let_vars.as_ref());
        let mut aggregate = with_passed(aggregate, &query.passed)?;
        if query.explain {
            aggregate.remove("cursor");
            return self.explain(aggregate);
        }
        // A new aggregate replaces the cursor `it` would have continued.
        self.close_cursor();
        let reply = self.run(aggregate)?;
        self.batch(name, &reply, "firstBatch", Vec::new())
    }

    fn explain(&self, command: Document) -> Result<Outcome, Failure> {
        let reply = self.run(doc! { "explain": command, "verbosity": "executionStats" })?;
        Ok(Reply::Value(Bson::Document(as_shown(reply))).into())
    }

    /// Ends the cursor `it` would have continued, so that it does not wait for its timeout.
    fn close_cursor(&mut self) {
        if let Some(cursor) = self.open_cursor.take().filter(|cursor| cursor.id != 0) {
            // A cursor already gone is no error worth showing.
            let _ = self.run(doc! { "killCursors": cursor.collection, "cursors": [cursor.id] });
        }
    }
}

/// A whole command reply as mongosh shows it: without the cluster's clock, `ok: 1`.
fn as_shown(mut reply: Document) -> Document {
    reply.remove("operationTime");
    reply.remove("$clusterTime");
    if reply.contains_key("ok") {
        reply.insert("ok", 1);
    }
    reply
}

/// `document` with an `_id` first, a new ObjectId when it had none, as mongosh sends it.
fn with_id(document: &Document) -> Document {
    if document.contains_key("_id") {
        return document.clone();
    }
    let mut with_id = doc! { "_id": ObjectId::new() };
    with_id.extend(document.clone());
    with_id
}

/// `command` with the options the shell passed on as given, for the command layer to apply
/// or refuse. An option naming a field the shell set itself is refused here: one of the two
/// would otherwise be lost.
fn with_passed(mut command: Document, passed: &Document) -> Result<Document, Failure> {
    for (option, value) in passed {
        if command.contains_key(option) {
            return Err(Failure::Usage(format!(
                "option '{option}' cannot be given here: the shell sets it from the statement"
            )));
        }
        command.insert(option.clone(), value.clone());
    }
    Ok(command)
}

/// Splits the options of one statement of a write command (or one index of
/// `createIndexes`): those in `command_level` are the command's, every other goes into
/// `statement` as given. Returns the statement and the command's options.
fn split_options(
    mut statement: Document,
    options: &Document,
    command_level: &[&str],
) -> (Document, Document) {
    let mut command = Document::new();
    for (option, value) in options {
        let target = if command_level.contains(&option.as_str()) {
            &mut command
        } else {
            &mut statement
        };
        target.insert(option.clone(), value.clone());
    }
    (statement, command)
}

/// The statement of an `update` command, with the array filters when there are some.
fn update_statement(
    filter: &Document,
    update: &Document,
    multi: bool,
    upsert: bool,
    array_filters: &[Document],
) -> Document {
    let mut statement = doc! {
        "q": filter.clone(),
        "u": update.clone(),
        "multi": multi,
        "upsert": upsert,
    };
    if !array_filters.is_empty() {
        statement.insert("arrayFilters", array_filters.to_vec());
    }
    statement
}

/// A write command (`update`, `delete`) of one `statement`: MongoDB's per-statement options
/// (`collation`, `hint`, `sort`) go into the statement, every other option to the command,
/// for the command layer to apply or refuse.
fn statement_command(
    verb: &str,
    collection: &str,
    statements: &str,
    statement: Document,
    passed: &Document,
) -> Result<Document, Failure> {
    let per_statement = ["collation", "hint", "sort"];
    let command_level: Vec<&str> = passed
        .keys()
        .map(String::as_str)
        .filter(|option| !per_statement.contains(option))
        .collect();
    let (statement, command_options) = split_options(statement, passed, &command_level);
    with_passed(
        doc! { verb: collection, statements: [statement] },
        &command_options,
    )
}

fn insert_some(command: &mut Document, key: &str, value: Option<&Document>) {
    if let Some(value) = value {
        command.insert(key, value.clone());
    }
}

/// The documents of a cursor reply's first batch.
fn first_batch(reply: &Document) -> Vec<Document> {
    cursor_batch(reply, "firstBatch")
}

/// The documents of a cursor reply's batch `key` (`firstBatch` or `nextBatch`).
fn cursor_batch(reply: &Document, key: &str) -> Vec<Document> {
    reply
        .get_document("cursor")
        .and_then(|cursor| cursor.get_array(key))
        .map(|batch| {
            batch
                .iter()
                .filter_map(Bson::as_document)
                .cloned()
                .collect()
        })
        .unwrap_or_default()
}

/// A `findAndModify` command of `findOneAndUpdate`/`findOneAndReplace`.
fn find_and_modify(name: &str, filter: &Document, options: &FindAndModifyOptions) -> Document {
    let mut command = doc! {
        "findAndModify": name,
        "query": filter.clone(),
        "upsert": options.upsert,
        "new": options.return_after,
    };
    insert_some(&mut command, "sort", options.sort.as_ref());
    insert_some(&mut command, "fields", options.projection.as_ref());
    command
}

/// An `update` command's reply as mongosh prints an update or replace result.
fn update_reply(reply: &Document) -> Bson {
    let upserted_id = reply
        .get_array("upserted")
        .ok()
        .and_then(|upserted| upserted.first())
        .and_then(Bson::as_document)
        .and_then(|upserted| upserted.get("_id").cloned());
    let matched = count_of(reply, "n");
    let upserted = upserted_id.is_some();
    Bson::Document(doc! {
        "acknowledged": true,
        "insertedId": upserted_id.unwrap_or(Bson::Null),
        "matchedCount": count_value(matched.saturating_sub(u64::from(upserted))),
        "modifiedCount": count_value(count_of(reply, "nModified")),
        "upsertedCount": i32::from(upserted),
    })
}

/// A count field of a reply (MongoDB sends int32 or int64); 0 when absent.
fn count_of(reply: &Document, key: &str) -> u64 {
    match reply.get(key) {
        Some(Bson::Int32(count)) => u64::try_from(*count).unwrap_or(0),
        Some(Bson::Int64(count)) => u64::try_from(*count).unwrap_or(0),
        _ => 0,
    }
}

/// A count as mongosh shows it: a plain number (Int32 when it fits).
fn count_value(count: u64) -> Bson {
    match i32::try_from(count) {
        Ok(small) => Bson::Int32(small),
        Err(_) => Bson::Int64(i64::try_from(count).unwrap_or(i64::MAX)),
    }
}

fn help_lines() -> Vec<String> {
    vec![
        "Statements (mongosh syntax; end one with ';' or a new line, brackets may span lines):".to_owned(),
        "  db.<collection>.<method>(...)        also db.collection('<name>').<method>(...) and db['<name>']".to_owned(),
        format!("  collection methods: {}", COLLECTION_METHODS.join(", ")),
        format!("  after find(...): {}", CURSOR_METHODS.join(", ")),
        "  options as in mongosh, every one the server takes: {upsert: true}, {collation: {...}}, {returnDocument: 'after'}, {expireAfterSeconds: 3600}...".to_owned(),
        format!("  db.<method>(): {}", DATABASE_METHODS.join(", ")),
        "  patterns: db.<coll>.setPattern({outlier: '<field>', threshold: 50, ...}) or ({subset: '<field>', keep: 10, sortBy: {...}, ...}),".to_owned(),
        "            removePattern('<field>'), arrayLength(id, '<field>'), arrayPage(id, '<field>', {skip, limit}), advise(),".to_owned(),
        "            reads return logical documents; db['system.stored.<coll>'].find(...) reads the stored layout".to_owned(),
        "  show collections                     list the collections".to_owned(),
        "  show patterns                        list the pattern policies".to_owned(),
        "  it                                   the next batch of the last find".to_owned(),
        "  help                                 this text".to_owned(),
        "  exit, quit                           leave the shell".to_owned(),
        "Values: mongosh literals and Extended JSON, e.g. ObjectId('...'), ISODate('2024-01-01'), NumberLong(5), Decimal128('1.5'), /regex/i".to_owned(),
    ]
}
