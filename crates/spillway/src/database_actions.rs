//! The database-level actions with the driver's shapes: `create_collection(..)`,
//! `list_collection_names()` and `drop()`, each run with `.run()` like the official
//! `mongodb` crate's (`db.create_collection("logs").capped(true).size(4096).run()?`).
//!
//! Each action only gathers its options; `run` does the work through the same paths as the
//! rest of the facade (`Database::create_collection_with`, collection drops in one
//! transaction). This module must never write to the store itself.

use bson::{Document, RawDocumentBuf};
use spillway_doc::filter::Filter;

use crate::catalog::{ValidationAction, ValidationLevel};
use crate::database::Database;
use crate::error::{Error, Result};
use crate::options::CollectionOptions;

impl Database {
    /// Creates a collection explicitly, with options set on the action (`.capped(true)
    /// .size(4096)`, `.validator(..)`, `.view_on(..)`...); without options, a no-op if it
    /// exists. Run with `.run()`.
    pub fn create_collection(&self, name: &str) -> CreateCollection<'_> {
        CreateCollection::new(self, name)
    }

    /// The names of the collections (and views), sorted; `.filter(doc! {..})` keeps those
    /// whose `{ name, type }` (`type` `"collection"` or `"view"`) matches. Run with `.run()`.
    pub fn list_collection_names(&self) -> ListCollectionNames<'_> {
        ListCollectionNames::new(self)
    }

    /// Drops every collection and view, with their indexes and pattern policies, in one
    /// transaction (main collections before side collections). Run with `.run()`.
    pub fn drop(&self) -> DropDatabase<'_> {
        DropDatabase::new(self)
    }
}

/// `create_collection`, run with `.run()`.
#[must_use = "an action does nothing until .run()"]
pub struct CreateCollection<'a> {
    database: &'a Database,
    name: String,
    options: CollectionOptions,
}

impl<'a> CreateCollection<'a> {
    pub(crate) fn new(database: &'a Database, name: &str) -> CreateCollection<'a> {
        CreateCollection {
            database,
            name: name.to_string(),
            options: CollectionOptions::default(),
        }
    }

    /// Every option at once, as the driver's `with_options`.
    pub fn with_options(mut self, options: impl Into<Option<CollectionOptions>>) -> Self {
        self.options = options.into().unwrap_or_default();
        self
    }

    /// A capped collection (with [`CreateCollection::size`]).
    pub fn capped(mut self, capped: bool) -> Self {
        self.options.capped = Some(capped);
        self
    }

    /// A capped collection's most document bytes.
    pub fn size(mut self, size: u64) -> Self {
        self.options.size = Some(size);
        self
    }

    /// A capped collection's most documents.
    pub fn max(mut self, max: u64) -> Self {
        self.options.max = Some(max);
        self
    }

    /// A filter every inserted or updated document must match.
    pub fn validator(mut self, validator: Document) -> Self {
        self.options.validator = Some(validator);
        self
    }

    /// Which writes the validator checks.
    pub fn validation_level(mut self, level: ValidationLevel) -> Self {
        self.options.validation_level = Some(level);
        self
    }

    /// What a failed validation does.
    pub fn validation_action(mut self, action: ValidationAction) -> Self {
        self.options.validation_action = Some(action);
        self
    }

    /// The collection's default collation: how its operations that give none, and its
    /// indexes created without one, compare strings.
    pub fn collation(mut self, collation: crate::Collation) -> Self {
        self.options.collation = Some(collation);
        self
    }

    /// A read-only view on this collection or view.
    pub fn view_on(mut self, source: impl Into<String>) -> Self {
        self.options.view_on = Some(source.into());
        self
    }

    /// A view's pipeline.
    pub fn pipeline(mut self, pipeline: impl IntoIterator<Item = Document>) -> Self {
        self.options.pipeline = Some(pipeline.into_iter().collect());
        self
    }

    /// Creates the collection. Without options an existing collection is left as it is;
    /// with options, an existing one is [`crate::ErrorKind::CollectionExists`] (48).
    pub fn run(self) -> Result<()> {
        if self.options == CollectionOptions::default() {
            return self.database.ensure_collection(&self.name);
        }
        self.database
            .create_collection_with(&self.name, &self.options)
    }
}

/// `list_collection_names`, run with `.run()`.
#[must_use = "an action does nothing until .run()"]
pub struct ListCollectionNames<'a> {
    database: &'a Database,
    filter: Option<Document>,
}

impl<'a> ListCollectionNames<'a> {
    pub(crate) fn new(database: &'a Database) -> ListCollectionNames<'a> {
        ListCollectionNames {
            database,
            filter: None,
        }
    }

    /// Keeps the collections whose `{ name, type }` matches `filter`
    /// (`doc! { "type": "view" }`, `doc! { "name": { "$regex": "^log" } }`).
    pub fn filter(mut self, filter: Document) -> Self {
        self.filter = Some(filter);
        self
    }

    /// The names, sorted.
    pub fn run(self) -> Result<Vec<String>> {
        let listed = self.database.collection_kinds();
        let Some(filter) = &self.filter else {
            return Ok(listed.into_iter().map(|(name, _)| name).collect());
        };
        let filter = Filter::parse(filter).map_err(Error::filter)?;
        let mut names = Vec::new();
        for (name, kind) in listed {
            let described = RawDocumentBuf::try_from(&bson::doc! { "name": &name, "type": kind })
                .map_err(|error| Error::serialization(error.to_string()))?;
            if filter.matches(&described).map_err(Error::filter)? {
                names.push(name);
            }
        }
        Ok(names)
    }
}

/// `drop` (the database), run with `.run()`.
#[must_use = "an action does nothing until .run()"]
pub struct DropDatabase<'a> {
    database: &'a Database,
}

impl<'a> DropDatabase<'a> {
    pub(crate) fn new(database: &'a Database) -> DropDatabase<'a> {
        DropDatabase { database }
    }

    /// Drops every collection in one transaction: all of them go, or none.
    pub fn run(self) -> Result<()> {
        let database = self.database;
        let mains: Vec<String> = database
            .patterns()
            .iter()
            .map(|pattern| pattern.collection().to_string())
            .collect();
        database.transaction(|transaction| {
            // Read under the transaction's write lock: no collection appears meanwhile.
            let mut names = database.list_collection_names().run()?;
            // A policy's side collection cannot be dropped while its main one holds the
            // policy: the main collections go first, and their policies with them.
            names.sort_by_key(|name| !mains.contains(name));
            for name in &names {
                database
                    .collection::<Document>(name)
                    .drop()
                    .session(transaction)
                    .run()?;
            }
            Ok(())
        })
    }
}
