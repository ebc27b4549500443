//! The backend test suite (`spillway_pattern::suite`) on the MongoDB backend, through the
//! public API (`PatternedDatabase`) and the official driver, against `spillway serve` on
//! loopback: the central property, the seeds' layouts, verify cases, interrupted migrations.
//!
//! Each target is a fresh database with its own client, whose application name limits the
//! commit fail point (`failCommand` on `commitTransaction`) to it: tests run in parallel on
//! one server. Writes behind the layer's back go through the backend alone, which decides
//! nothing about policies.
//!
//! Cases of the central property: 16 by default (each step is several round trips to a
//! debug build of the server); `PROPTEST_CASES` overrides.

use crate::common;

use mongodb::sync::Client;
use spillway_mongodb::bson::Document;
use spillway_mongodb::{Error, MongoBackend, Pattern, PatternedDatabase, Violation};
use spillway_pattern::suite::Target;
use spillway_pattern::{Write, WriteBackend};

/// A database of the test server, as the suite drives it.
struct Mongo {
    client: Client,
    app: String,
    name: String,
    database: Option<PatternedDatabase>,
}

impl Mongo {
    fn new() -> Mongo {
        let app = common::unique("suite");
        let client = common::client(common::server(), &app);
        let name = common::unique("db");
        let database = PatternedDatabase::new(&client, &name, Vec::<Pattern>::new())
            .expect("an empty database opens");
        Mongo {
            client,
            app,
            name,
            database: Some(database),
        }
    }

    fn database(&self) -> &PatternedDatabase {
        self.database.as_ref().expect("open")
    }
}

impl Drop for Mongo {
    fn drop(&mut self) {
        drop(self.database.take());
        let _ = self.client.database(&self.name).drop().run();
        self.client.clone().shutdown().immediate(true).run();
    }
}

impl Target for Mongo {
    type Error = Error;

    fn create_collection(&mut self, name: &str) -> Result<(), Error> {
        self.database().create_collection(name)
    }

    fn set_pattern(&mut self, pattern: Pattern) -> Result<(), Error> {
        self.database().set_pattern(pattern)
    }

    fn remove_pattern(&mut self, collection: &str, field: &str) -> Result<(), Error> {
        self.database().remove_pattern(collection, field)
    }

    fn insert_one(&mut self, collection: &str, document: Document) -> Result<(), Error> {
        self.database()
            .collection(collection)
            .insert_one(document)
            .run()
            .map(drop)
    }

    fn update(
        &mut self,
        collection: &str,
        filter: &Document,
        update: &Document,
        multi: bool,
    ) -> Result<u64, Error> {
        let collection = self.database().collection(collection);
        let is_replacement = update.keys().all(|key| !key.starts_with('$'));
        let action = if is_replacement {
            collection.replace_one(filter.clone(), update.clone())
        } else if multi {
            collection.update_many(filter.clone(), update.clone())
        } else {
            collection.update_one(filter.clone(), update.clone())
        };
        Ok(action.run()?.modified_count)
    }

    fn delete(&mut self, collection: &str, filter: &Document, multi: bool) -> Result<u64, Error> {
        let collection = self.database().collection(collection);
        let action = if multi {
            collection.delete_many(filter.clone())
        } else {
            collection.delete_one(filter.clone())
        };
        Ok(action.run()?.deleted_count)
    }

    fn find(
        &mut self,
        collection: &str,
        filter: &Document,
        expand: bool,
    ) -> Result<Vec<Document>, Error> {
        self.database()
            .collection(collection)
            .find(filter.clone())
            .stored(!expand)
            .run()
    }

    fn verify(&mut self) -> Result<Vec<Violation>, Error> {
        self.database().verify()
    }

    fn write_behind(&mut self, writes: Vec<Write>) -> Result<(), Error> {
        MongoBackend::new(&self.client, &self.name)?.apply(writes)
    }

    fn fail_commits_after(&mut self, commits: u64) {
        common::fail_commits_after(&self.client, &self.app, commits);
    }

    fn restart(&mut self) -> Result<(), Error> {
        common::clear_commit_failures(&self.client);
        drop(self.database.take());
        self.database = Some(PatternedDatabase::new(
            &self.client,
            &self.name,
            Vec::<Pattern>::new(),
        )?);
        Ok(())
    }
}

spillway_pattern::suite_tests!(Mongo::new, 16);
