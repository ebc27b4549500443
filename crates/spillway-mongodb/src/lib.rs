//! spillway-mongodb: Spillway's pattern policies on a MongoDB replica set or sharded cluster,
//! through the official `mongodb` driver (its blocking API, bson 3).
//!
//! An application that outgrows one machine keeps the policies it declared: wrap the
//! deployment's database with them and keep making the driver's calls.
//!
//! ```no_run
//! use mongodb::sync::Client;
//! use spillway_mongodb::{PatternedDatabase, Pattern, bson::doc};
//!
//! let client = Client::with_uri_str("mongodb://db0,db1,db2/?replicaSet=rs0")?;
//! let shop = PatternedDatabase::new(&client, "shop", [
//!     Pattern::outlier("sales", "customers_purchased").threshold(50).link_field("book_id"),
//! ])?;
//! let sales = shop.collection("sales");
//! sales.update_one(doc! { "_id": 2 }, doc! { "$push": { "customers_purchased": "user777" } }).run()?;
//! let book = sales.find_one(doc! { "_id": 2 }).run()?;                // every buyer
//! let page = sales.array_page(2, "customers_purchased", 500, 20)?;     // reads one bucket
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! | module | what it holds |
//! |---|---|
//! | `database` | [`PatternedDatabase`], [`PatternedCollection`] and their driver-shaped actions |
//! | `backend` | [`MongoBackend`]: spillway-pattern's backend traits over the driver; one transaction per logical write, retried as `withTransaction` does; retryable writes' records ([`RetryKey`]) |
//! | `records` | the policy document in [`POLICY_COLLECTION`], and a rename in progress ([`RenameIntent`]) |
//! | `transaction` | [`Transaction`]: a multi-document transaction the application drives, every operation of its collections inline in it |
//! | `error` | [`Error`], with MongoDB's codes and labels passed through |
//!
//! Every decision about policies is spillway-pattern's ([`Layer`](spillway_pattern::Layer)):
//! this crate is storage, transactions and an API. How to run it on a replica set or a sharded
//! cluster (shard keys, round trips, failover) is in `docs/scale-out.md`.

pub use bson;
pub use mongodb;
pub use spillway_pattern::{Pattern, UpdateResult, Violation};

mod backend;
mod database;
mod error;
mod records;
mod transaction;

pub use backend::{
    MongoBackend, RETRY_COLLECTION, RETRY_RECORD_LIFETIME, RetryKey, STAMP_COLLECTION,
    TRANSACTION_TIME_LIMIT,
};
pub use database::{
    Aggregate, CountDocuments, Delete, DeleteResult, Find, FindOne, InsertMany, InsertManyResult,
    InsertOne, InsertOneResult, PatternedCollection, PatternedDatabase, Update,
};
pub use error::{Error, Result};
pub use records::{
    POLICY_COLLECTION, POLICY_DOCUMENT_ID, RenameIntent, declared_patterns, pending_rename,
};
pub use transaction::Transaction;
