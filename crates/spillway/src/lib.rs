//! Spillway: an embedded, MongoDB-shaped document database.
//!
//! The API mirrors the official `mongodb` crate (3.x, sync flavour), so code moves between
//! Spillway and a MongoDB cluster with few changes:
//!
//! ```
//! use spillway::{Database, doc, bson::Document};
//!
//! let db = Database::open_in_memory()?;
//! let books = db.collection::<Document>("books");
//! books.insert_one(doc! { "_id": 1, "title": "Dune", "year": 1965 }).run()?;
//! books.update_one(doc! { "_id": 1 }, doc! { "$inc": { "year": 1 } }).run()?;
//! let found = books.find_one(doc! { "title": "Dune" }).run()?.expect("inserted");
//! assert_eq!(found.get_i32("year")?, 1966);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! | module | what it holds |
//! |---|---|
//! | `database` | [`Database`], [`DatabaseOptions`], [`Transaction`]; the write lock and the published snapshot |
//! | `database_actions` | `create_collection(..)`, `list_collection_names()`, `drop()` as actions with `.run()` |
//! | `bulk` | [`Database::bulk_write`]: many writes to any collections, ordered or not, with per-operation errors |
//! | `session` | [`ClientSession`]: `start_session`, `start_transaction`, `commit_transaction`, `abort_transaction` |
//! | `collection` | [`Collection`] and its fluent actions (`insert_one(..).run()`) |
//! | `action_options` | the driver's `*Options` structs ([`FindOptions`]...) and `with_options` on the actions |
//! | `command` | [`command::Commands`]: MongoDB's commands as documents, into MongoDB's replies (the wire server's layer) |
//! | `cursor` | [`Cursor`], streaming from the snapshot it started on |
//! | `aggregate` | pipelines: the planner's prefix, logical input expanded only when read, `$lookup` reads, `$out`/`$merge` in one transaction |
//! | `results` | result and option types with the driver's field names, [`Explain`] |
//! | `error` | [`Error`] and [`ErrorKind`] |
//! | `catalog` | collections and index definitions, persisted in the store |
//! | `txn` | `WriteTxn`: the one write path, one store batch per transaction |
//! | `ops` | MongoDB's operations (insert, update, delete, find-and-modify, count, distinct, DDL), each collection's role decided once per statement |
//! | `patterned` | the pattern layer wired in: spillway-pattern's backend over a transaction, logical queries on the planner |
//! | `storage` | pattern-unaware primitives: stored documents, index entries, collections and indexes |
//! | `index_keys` | the index entries of a document |
//! | `options` | collection options (validators), index modifications (`collMod`), the TTL reaper |
//! | `maintenance` | `verify`, `stats`, `compact`, `repair` of a whole database, and their reports |
//! | `planner`, `exec` | access path choice (`IDHACK`, `IXSCAN`, `COLLSCAN`, `SORT`) and its resumable execution |
//!
//! This crate must never know terminals, nor files other than its database directory.

mod action_options;
mod aggregate;
mod bulk;
mod catalog;
mod catalog_repair;
mod change_log;
mod changes;
mod collection;
pub mod command;
mod cursor;
mod database;
mod database_actions;
mod error;
mod exec;
mod geo_index;
mod index_keys;
mod maintenance;
mod near;
mod ops;
mod options;
mod patterned;
mod planner;
mod results;
mod route;
mod session;
mod session_records;
mod storage;
mod timeseries;
mod txn;
mod views;
mod write_history;

pub use action_options::{
    AggregateOptions, AggregateOptionsBuilder, CountOptions, CountOptionsBuilder, DeleteOptions,
    DeleteOptionsBuilder, DistinctOptions, DistinctOptionsBuilder, FindOneAndDeleteOptions,
    FindOneAndDeleteOptionsBuilder, FindOneAndModifyOptions, FindOneAndReplaceOptions,
    FindOneAndReplaceOptionsBuilder, FindOneAndUpdateOptions, FindOneAndUpdateOptionsBuilder,
    FindOneOptions, FindOneOptionsBuilder, FindOptions, FindOptionsBuilder, InsertManyOptions,
    InsertManyOptionsBuilder, InsertOneOptions, InsertOneOptionsBuilder, ReplaceOptions,
    ReplaceOptionsBuilder, UpdateActionOptions, UpdateOptions, UpdateOptionsBuilder,
};
pub use aggregate::STORED_DOCUMENTS_STAGE;
pub use bson;
pub use bson::doc;
pub use bulk::BulkWrite;
pub use catalog::timeseries::TimeseriesOptions;
pub use catalog::{MAX_COLLECTION_NAME_LEN, MAX_INDEX_NAME_LEN, ValidationAction, ValidationLevel};
pub use catalog_repair::RebuiltCollection;
pub use change_log::RETAINED as CHANGE_LOG_RETAINED;
pub use changes::{
    ChangeStream, ChangeStreamOptions, FullDocument, FullDocumentBeforeChange, Watch,
};
pub use collection::{
    Aggregate, Collection, CountDocuments, CreateIndex, CreateIndexes, Delete, Distinct,
    DropCollection, DropIndex, DropIndexes, EstimatedDocumentCount, Find, FindOne,
    FindOneAndDelete, FindOneAndModify, InsertMany, InsertOne, ListIndexNames, ListIndexes,
    RenameCollection, UpdateAction,
};
pub use cursor::Cursor;
pub use database::{
    DEFAULT_TTL_INTERVAL, Database, DatabaseOptions, Transaction, VALIDATION_WARNINGS_KEPT,
};
pub use database_actions::{CreateCollection, DropDatabase, ListCollectionNames};
pub use error::{BulkWriteFailure, Error, ErrorKind, Result};
pub use maintenance::{
    CollectionStats, DatabaseStats, DocumentSize, IndexStats, LARGEST_DOCUMENTS_LISTED, Problem,
    RepairReport, RolledBackDocument, VerifyReport,
};
pub use options::{CollectionOptions, IndexModification};
pub use results::{
    BulkWriteResult, CreateIndexResult, DeleteResult, Explain, GeoIndexOptions, Hint, IndexModel,
    IndexModelBuilder, IndexOptions, IndexOptionsBuilder, InsertManyResult, InsertOneResult,
    ReturnDocument, UpdateModifications, UpdateResult, ValidationWarning, WriteModel,
};
pub use session::{
    AbortTransaction, ClientSession, CommitTransaction, StartSession, StartTransaction,
};
pub use spillway_doc::DocError;
pub use spillway_doc::collation::Collation;
pub use spillway_pattern::{
    OutlierPattern, Pattern, PatternError, PatternKind, Shape, SubsetPattern, Violation,
};
pub use spillway_store::{
    CheckpointFallback, CompactionReport, Damage, Durability, LostWriteEffect, RecoveryReport,
    Store, TornTail,
};
