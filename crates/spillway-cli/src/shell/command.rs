//! The statements the shell understands, as data: what the parser produces and the executor
//! runs.
//!
//! Every argument is already evaluated (documents are `bson::Document`s, the options the
//! shell reads itself are typed fields), so the executor never sees syntax. Every other option
//! is *passed*: it goes into the command as given, and the command layer applies or refuses it
//! with the server's own message, so the shell takes exactly the options `spillway serve`
//! takes. A new shell command is a new variant here, a
//! case in the parser that builds it and one in the executor that runs it. This module must
//! never touch a database.

use spillway::Pattern;
use spillway::bson::{Bson, Document};

/// One parsed statement.
#[derive(Debug, Clone, PartialEq)]
#[expect(
    clippy::large_enum_variant,
    reason = "one command per statement, built once and run once: boxing would buy nothing"
)]
pub enum Command {
    /// `help`: what the shell understands.
    Help,
    /// `exit`, `quit`, `exit()`, `quit()`: leave the shell (or stop the script).
    Exit,
    /// `show collections`, `show tables`: one name per line.
    ShowCollections,
    /// `db.getCollectionNames()`: the names as an array, as mongosh prints it.
    GetCollectionNames,
    /// `db.<method>(...)`: an operation on the database itself.
    Database(DatabaseOperation),
    /// `it`: the next batch of the last `find`.
    More,
    /// `show patterns`: the declared policies, one line each.
    ShowPatterns,
    /// `db.getPatterns()`: the declared policies as documents in `setPattern`'s syntax.
    GetPatterns,
    /// `db.verifyPatterns()`: every policy's invariants, one line per violation.
    VerifyPatterns,
    /// `db.<collection>.<method>(...)` or `db.collection('<name>').<method>(...)`.
    Collection {
        /// The collection's name.
        collection: String,
        /// What to do with it.
        operation: Operation,
    },
}

/// What a statement does with the database itself.
#[derive(Debug, Clone, PartialEq)]
pub enum DatabaseOperation {
    /// `createCollection(name, options)`: the `create` command.
    CreateCollection {
        /// The new collection's name.
        name: String,
        /// The `create` command's options (`capped`, `size`, `validator`...), as given.
        options: Document,
    },
    /// `dropDatabase()`: every collection goes.
    DropDatabase,
    /// `stats()`: `dbStats`.
    Stats,
    /// `version()`: the MongoDB version the server reports.
    Version,
    /// `getName()`: the database's name.
    GetName,
}

impl DatabaseOperation {
    /// The mongosh method name, for messages.
    pub fn method_name(&self) -> &'static str {
        match self {
            DatabaseOperation::CreateCollection { .. } => "createCollection",
            DatabaseOperation::DropDatabase => "dropDatabase",
            DatabaseOperation::Stats => "stats",
            DatabaseOperation::Version => "version",
            DatabaseOperation::GetName => "getName",
        }
    }
}

/// What a statement does with one collection.
#[derive(Debug, Clone, PartialEq)]
pub enum Operation {
    /// `insertOne(document)`.
    InsertOne {
        /// The document.
        document: Document,
        /// The options as given, for the command layer to apply or refuse.
        passed: Document,
    },
    /// `insertMany([documents])`, or `insertOne([documents])` (see `written_as_insert_one`).
    InsertMany {
        /// The documents, in order.
        documents: Vec<Document>,
        /// The statement was `insertOne` with an array, which mongosh refuses and the seeds
        /// use: it runs as `insertMany` and says so.
        written_as_insert_one: bool,
        /// The other options as given, for the command layer to apply or refuse.
        passed: Document,
    },
    /// `find(filter, projection)` with its cursor methods.
    Find(FindQuery),
    /// `aggregate(pipeline, options)` with its cursor methods.
    Aggregate(AggregateQuery),
    /// `findOne(filter, projection, options)`.
    FindOne {
        /// The filter.
        filter: Document,
        /// Which fields to return.
        projection: Option<Document>,
        /// Which matching document comes first.
        sort: Option<Document>,
        /// How many matching documents to pass over.
        skip: u64,
        /// The other options as given, for the command layer to apply or refuse.
        passed: Document,
    },
    /// `updateOne` / `updateMany(filter, update, options)`.
    Update {
        /// The filter.
        filter: Document,
        /// The update operators.
        update: Document,
        /// `updateMany` (every match) rather than `updateOne` (the first).
        multi: bool,
        /// `{upsert: true}`.
        upsert: bool,
        /// `{arrayFilters: [...]}`.
        array_filters: Vec<Document>,
        /// The other options as given, for the command layer to apply or refuse.
        passed: Document,
    },
    /// `replaceOne(filter, replacement, options)`.
    Replace {
        /// The filter.
        filter: Document,
        /// The new document (no operators).
        replacement: Document,
        /// `{upsert: true}`.
        upsert: bool,
        /// The other options as given, for the command layer to apply or refuse.
        passed: Document,
    },
    /// `deleteOne` / `deleteMany(filter, options)`.
    Delete {
        /// The filter.
        filter: Document,
        /// `deleteMany` rather than `deleteOne`.
        multi: bool,
        /// The other options as given, for the command layer to apply or refuse.
        passed: Document,
    },
    /// `findOneAndUpdate(filter, update, options)`.
    FindOneAndUpdate {
        /// The filter.
        filter: Document,
        /// The update operators.
        update: Document,
        /// Sort, projection, upsert, which version to return, array filters.
        options: FindAndModifyOptions,
    },
    /// `findOneAndReplace(filter, replacement, options)`.
    FindOneAndReplace {
        /// The filter.
        filter: Document,
        /// The new document.
        replacement: Document,
        /// Sort, projection, upsert, which version to return.
        options: FindAndModifyOptions,
    },
    /// `findOneAndDelete(filter, options)`.
    FindOneAndDelete {
        /// The filter.
        filter: Document,
        /// Which matching document is deleted first.
        sort: Option<Document>,
        /// Which fields of the deleted document to return.
        projection: Option<Document>,
        /// The other options as given, for the command layer to apply or refuse.
        passed: Document,
    },
    /// `countDocuments(filter, options)`.
    CountDocuments {
        /// The filter.
        filter: Document,
        /// `{skip: n}`.
        skip: u64,
        /// `{limit: n}`; 0 means no limit.
        limit: u64,
        /// The other options as given, for the command layer to apply or refuse.
        passed: Document,
    },
    /// `estimatedDocumentCount()`.
    EstimatedDocumentCount,
    /// `distinct(field, filter, options)`.
    Distinct {
        /// The dotted field path.
        field: String,
        /// The filter.
        filter: Document,
        /// The other options as given, for the command layer to apply or refuse.
        passed: Document,
    },
    /// `createIndex(keys, options)`.
    CreateIndex {
        /// The key pattern.
        keys: Document,
        /// The options as given (`unique`, `name`, `expireAfterSeconds`, `sparse`,
        /// `partialFilterExpression`, `collation`...): each goes into the index specification
        /// (`commitQuorum` and `comment` into the command), where the command layer applies or
        /// refuses it.
        options: Document,
    },
    /// `getIndexes()`.
    GetIndexes,
    /// `dropIndex(name)` or `dropIndex(keys)`.
    DropIndex(IndexSelector),
    /// `drop()`.
    Drop,
    /// `stats()`: `collStats`.
    Stats,
    /// `renameCollection(newName, dropTarget)`.
    RenameCollection {
        /// The new name.
        to: String,
        /// Replace a collection that already has the new name.
        drop_target: bool,
    },
    /// `setPattern({outlier: field, ...})` or `setPattern({subset: field, ...})`.
    SetPattern(Pattern),
    /// `removePattern(field)`.
    RemovePattern {
        /// The managed field whose policy goes.
        field: String,
    },
    /// `arrayLength(id, field)`: the logical length of a managed (or plain) array.
    ArrayLength {
        /// The main document's `_id`.
        id: Bson,
        /// The array field.
        field: String,
    },
    /// `arrayPage(id, field, {skip, limit})`: a page of a logical array.
    ArrayPage {
        /// The main document's `_id`.
        id: Bson,
        /// The array field.
        field: String,
        /// Elements passed over.
        skip: usize,
        /// Elements returned at most.
        limit: usize,
    },
    /// `advise()`: the advisor's report on the collection's stored documents.
    Advise,
}

impl Operation {
    /// The mongosh method name, for messages.
    pub fn method_name(&self) -> &'static str {
        match self {
            Operation::InsertOne { .. } => "insertOne",
            Operation::InsertMany {
                written_as_insert_one: true,
                ..
            } => "insertOne",
            Operation::InsertMany { .. } => "insertMany",
            Operation::Find(_) => "find",
            Operation::FindOne { .. } => "findOne",
            Operation::Aggregate(_) => "aggregate",
            Operation::Update { multi: false, .. } => "updateOne",
            Operation::Update { multi: true, .. } => "updateMany",
            Operation::Replace { .. } => "replaceOne",
            Operation::Delete { multi: false, .. } => "deleteOne",
            Operation::Delete { multi: true, .. } => "deleteMany",
            Operation::FindOneAndUpdate { .. } => "findOneAndUpdate",
            Operation::FindOneAndReplace { .. } => "findOneAndReplace",
            Operation::FindOneAndDelete { .. } => "findOneAndDelete",
            Operation::CountDocuments { .. } => "countDocuments",
            Operation::EstimatedDocumentCount => "estimatedDocumentCount",
            Operation::Distinct { .. } => "distinct",
            Operation::CreateIndex { .. } => "createIndex",
            Operation::GetIndexes => "getIndexes",
            Operation::DropIndex(_) => "dropIndex",
            Operation::Drop => "drop",
            Operation::Stats => "stats",
            Operation::RenameCollection { .. } => "renameCollection",
            Operation::SetPattern(_) => "setPattern",
            Operation::RemovePattern { .. } => "removePattern",
            Operation::ArrayLength { .. } => "arrayLength",
            Operation::ArrayPage { .. } => "arrayPage",
            Operation::Advise => "advise",
        }
    }
}

/// A `find` with the cursor methods chained after it.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct FindQuery {
    /// The filter.
    pub filter: Document,
    /// `find(filter, projection)` or `.projection(...)`.
    pub projection: Option<Document>,
    /// `.sort(...)`.
    pub sort: Option<Document>,
    /// `.skip(n)`.
    pub skip: u64,
    /// `.limit(n)`; 0 means no limit, a negative limit returns one batch of `|n|`.
    pub limit: i64,
    /// `.explain()`: show the plan instead of the documents.
    pub explain: bool,
    /// The other options as given (`collation`, `hint`, `maxTimeMS`...), for the command
    /// layer to apply or refuse.
    pub passed: Document,
}

/// An `aggregate` with the cursor methods chained after it.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct AggregateQuery {
    /// The stages, in order.
    pub pipeline: Vec<Document>,
    /// `{let: {...}}`: variables the pipeline reads as `$$name`.
    pub let_vars: Option<Document>,
    /// `.explain()` or `{explain: true}`: show the plan instead of the documents.
    pub explain: bool,
    /// The other options as given, for the command layer to apply or refuse.
    pub passed: Document,
}

/// Options of `findOneAndUpdate` and `findOneAndReplace`.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct FindAndModifyOptions {
    /// Which matching document is modified first.
    pub sort: Option<Document>,
    /// Which fields of the returned document to return.
    pub projection: Option<Document>,
    /// Insert when nothing matches.
    pub upsert: bool,
    /// Return the document as the write left it (`returnDocument: 'after'`) rather than as
    /// it was.
    pub return_after: bool,
    /// `{arrayFilters: [...]}` (updates only).
    pub array_filters: Vec<Document>,
    /// The other options as given (`collation`, `hint`, `let`...), for the command layer to
    /// apply or refuse.
    pub passed: Document,
}

/// Which index `dropIndex` drops.
#[derive(Debug, Clone, PartialEq)]
pub enum IndexSelector {
    /// By name: `dropIndex('year_1')`.
    Name(String),
    /// By key pattern: `dropIndex({year: 1})`.
    Keys(Document),
}
