//! Where a MongoDB namespace (`database.collection`) lives in the one store.
//!
//! A server keeps every database in one spillway [`Database`](crate::Database): collection `c`
//! of database `d` is the stored collection `d.c`. One store means one write path, one group
//! commit and transactions that span databases as one atomic batch; a database is the set of
//! stored collections that share its prefix, so it exists while it has a collection, as in
//! MongoDB. [`Namespaces::Flat`] is the embedded view: one unnamed database whose collections
//! are stored under their own names (the shell's).
//!
//! This module must never read or write documents: it only names things.

use bson::{Bson, Document};
use spillway_doc::error::echo;

use super::error::{CommandError, CommandResult};

/// How database and collection names map to stored collection names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Namespaces {
    /// Collection `c` of database `d` is stored as `d.c` (a server's many databases).
    Prefixed,
    /// Collections are stored under their own names; the database name is ignored (one
    /// embedded database, as the shell sees it).
    Flat,
}

/// The namespace prefix of a collection's stored layout: in any database,
/// `system.stored.<collection>` reads the main documents of `<collection>` as stored (an
/// outlier's first elements and its flag, a subset's top elements), read-only. Every other
/// namespace reads logical documents.
pub const STORED_VIEW_PREFIX: &str = "system.stored.";

/// The collection whose stored layout `collection` names (`system.stored.<name>`), if it
/// names one.
pub(crate) fn stored_view_of(collection: &str) -> Option<&str> {
    collection
        .strip_prefix(STORED_VIEW_PREFIX)
        .filter(|base| !base.is_empty())
}

/// The refusal of a command other than a read on a stored-layout namespace: 166
/// CommandNotSupportedOnView, as MongoDB refuses writes to a view.
pub(crate) fn stored_view_is_read_only(database: &str, view: &str, base: &str) -> CommandError {
    CommandError::new(
        166,
        format!(
            "Namespace {} is the stored layout of {}, a read-only view: only find, aggregate, count and distinct read it; write the logical documents to {} instead",
            client_namespace(database, view),
            client_namespace(database, base),
            client_namespace(database, base),
        ),
    )
}

/// Longest database name MongoDB accepts, in bytes.
const MAX_DATABASE_NAME_LEN: usize = 63;

impl Namespaces {
    /// The stored name of `collection` in `database`, after checking both names as MongoDB
    /// does (73 InvalidNamespace).
    pub(crate) fn stored(self, database: &str, collection: &str) -> CommandResult<String> {
        check_collection_name(database, collection)?;
        match self {
            Namespaces::Prefixed => {
                check_database_name(database)?;
                Ok(format!("{database}.{collection}"))
            }
            Namespaces::Flat => Ok(collection.to_string()),
        }
    }

    /// The stored name a database-level `aggregate` reads: `system.aggregate` of the
    /// database, in the `system.` space no client can create a collection in, so it is always
    /// empty. The flat view has no such space (the catalog refuses `system.` names there).
    pub(crate) fn collectionless(self, database: &str) -> CommandResult<String> {
        match self {
            Namespaces::Prefixed => {
                check_database_name(database)?;
                Ok(format!("{database}.system.aggregate"))
            }
            Namespaces::Flat => Err(CommandError::not_supported(
                "aggregate: 1 needs a server's databases (the embedded view has none)",
            )),
        }
    }

    /// What the stored names of `database`'s collections start with (`""` in the flat view,
    /// whose one database holds every collection).
    pub(crate) fn prefix(self, database: &str) -> CommandResult<String> {
        match self {
            Namespaces::Prefixed => {
                check_database_name(database)?;
                Ok(format!("{database}."))
            }
            Namespaces::Flat => Ok(String::new()),
        }
    }

    /// The stored name of `database`'s profiler collection, `system.profile`, which the
    /// server writes in the `system.` space clients cannot create collections in.
    pub(crate) fn profile_collection(self, database: &str) -> CommandResult<String> {
        match self {
            Namespaces::Prefixed => {
                check_database_name(database)?;
                Ok(format!("{database}.system.profile"))
            }
            Namespaces::Flat => Err(CommandError::not_supported(
                "the profiler needs a server's databases (the embedded view has no system.profile)",
            )),
        }
    }

    /// The collection of `database` stored as `stored`, if it belongs to that database.
    pub(crate) fn collection_of<'a>(self, database: &str, stored: &'a str) -> Option<&'a str> {
        match self {
            Namespaces::Prefixed => stored
                .strip_prefix(database)
                .and_then(|rest| rest.strip_prefix('.')),
            Namespaces::Flat => Some(stored),
        }
    }

    /// The database a stored collection belongs to (`None` in the flat view).
    pub(crate) fn database_of(self, stored: &str) -> Option<&str> {
        match self {
            Namespaces::Prefixed => stored.split_once('.').map(|(database, _)| database),
            Namespaces::Flat => None,
        }
    }
}

impl Namespaces {
    /// `pipeline` (stored, as a view's) with the collections its stages read (`$lookup`,
    /// `$graphLookup`, `$unionWith`, inside `$facet` and sub-pipelines too) named as clients
    /// of `database` name them: the reverse of [`Namespaces::pipeline`] for pipelines that
    /// write nothing.
    pub(crate) fn client_pipeline(self, database: &str, pipeline: &[Document]) -> Vec<Document> {
        pipeline
            .iter()
            .map(|stage| self.client_stage(database, stage))
            .collect()
    }

    fn client_stage(self, database: &str, stage: &Document) -> Document {
        let client_name = |stored: &str| {
            self.collection_of(database, stored)
                .unwrap_or(stored)
                .to_string()
        };
        let sub_pipeline = |spec: &mut Document| {
            if let Some(Bson::Array(stages)) = spec.get_mut("pipeline") {
                for stage in stages.iter_mut() {
                    if let Bson::Document(inner) = stage {
                        *inner = self.client_stage(database, inner);
                    }
                }
            }
        };
        let mut rewritten = stage.clone();
        for (name, spec) in rewritten.iter_mut() {
            match (name.as_str(), spec) {
                ("$lookup" | "$graphLookup", Bson::Document(spec)) => {
                    if let Ok(from) = spec.get_str("from") {
                        let from = client_name(from);
                        spec.insert("from", from);
                    }
                    sub_pipeline(spec);
                }
                ("$unionWith", Bson::Document(spec)) => {
                    if let Ok(collection) = spec.get_str("coll") {
                        let collection = client_name(collection);
                        spec.insert("coll", collection);
                    }
                    sub_pipeline(spec);
                }
                ("$unionWith", Bson::String(collection)) => {
                    *collection = client_name(collection);
                }
                ("$facet", Bson::Document(facets)) => {
                    for (_, branch) in facets.iter_mut() {
                        if let Bson::Array(stages) = branch {
                            for stage in stages.iter_mut() {
                                if let Bson::Document(inner) = stage {
                                    *inner = self.client_stage(database, inner);
                                }
                            }
                        }
                    }
                }
                _ => {}
            }
        }
        rewritten
    }

    /// `pipeline` with the collections its stages name (`$lookup`, `$graphLookup`,
    /// `$unionWith`, `$out`, `$merge`, inside `$facet` and sub-pipelines too) turned into
    /// stored names; `{ db, coll }` targets may name another database.
    pub(crate) fn pipeline(
        self,
        database: &str,
        pipeline: &[Document],
    ) -> CommandResult<Vec<Document>> {
        pipeline
            .iter()
            .map(|stage| self.stage(database, stage))
            .collect()
    }

    fn stage(self, database: &str, stage: &Document) -> CommandResult<Document> {
        let mut rewritten = stage.clone();
        for (name, spec) in rewritten.iter_mut() {
            match (name.as_str(), spec) {
                ("$lookup" | "$graphLookup", Bson::Document(spec)) => {
                    self.rename_field(database, spec, "from")?;
                    self.sub_pipeline(database, spec)?;
                }
                ("$unionWith", Bson::Document(spec)) => {
                    self.rename_field(database, spec, "coll")?;
                    self.sub_pipeline(database, spec)?;
                }
                ("$unionWith" | "$out", target @ Bson::String(_))
                | ("$out", target @ Bson::Document(_)) => {
                    *target = self.target(database, target)?;
                }
                ("$merge", Bson::Document(spec)) => {
                    if let Some(into) = spec.get_mut("into") {
                        *into = self.target(database, into)?;
                    }
                }
                ("$merge", target @ Bson::String(_)) => {
                    *target = self.target(database, target)?;
                }
                ("$facet", Bson::Document(facets)) => {
                    for (_, branch) in facets.iter_mut() {
                        if let Bson::Array(stages) = branch {
                            for stage in stages.iter_mut() {
                                if let Bson::Document(inner) = stage {
                                    *inner = self.stage(database, inner)?;
                                }
                            }
                        }
                    }
                }
                _ => {}
            }
        }
        Ok(rewritten)
    }

    fn rename_field(self, database: &str, spec: &mut Document, field: &str) -> CommandResult<()> {
        if let Some(Bson::String(collection)) = spec.get(field) {
            let stored = self.stored(database, collection)?;
            spec.insert(field, stored);
        }
        Ok(())
    }

    fn sub_pipeline(self, database: &str, spec: &mut Document) -> CommandResult<()> {
        if let Some(Bson::Array(stages)) = spec.get_mut("pipeline") {
            for stage in stages.iter_mut() {
                if let Bson::Document(inner) = stage {
                    *inner = self.stage(database, inner)?;
                }
            }
        }
        Ok(())
    }

    /// An output target: `"coll"` in the command's database, or `{ db, coll }`.
    fn target(self, database: &str, target: &Bson) -> CommandResult<Bson> {
        match target {
            Bson::String(collection) => Ok(Bson::String(self.stored(database, collection)?)),
            Bson::Document(spec) => {
                let database = spec.get_str("db").unwrap_or(database);
                let collection = spec.get_str("coll").map_err(|_| {
                    CommandError::new(9, format!("an output target needs 'coll': {spec}"))
                })?;
                Ok(Bson::String(self.stored(database, collection)?))
            }
            other => Err(CommandError::type_mismatch(format!(
                "an output target must be a collection name or {{ db, coll }}, not {other}"
            ))),
        }
    }
}

/// MongoDB's rules for database names: non-empty, at most 63 bytes, none of `/\. "$` or NUL.
pub(crate) fn check_database_name(database: &str) -> CommandResult<()> {
    if database.is_empty() {
        return Err(CommandError::new(73, "database name cannot be empty"));
    }
    if database.len() > MAX_DATABASE_NAME_LEN {
        return Err(CommandError::new(
            73,
            format!(
                "database name is too long (over {MAX_DATABASE_NAME_LEN} bytes): {}",
                echo(database)
            ),
        ));
    }
    if let Some(bad) = database
        .chars()
        .find(|c| matches!(c, '/' | '\\' | '.' | ' ' | '"' | '$' | '\0'))
    {
        return Err(CommandError::new(
            73,
            format!(
                "invalid database name '{}': it contains {bad:?}",
                echo(database)
            ),
        ));
    }
    Ok(())
}

/// `database.collection` as the client names it; the collection alone in a flat store (the
/// shell's one database), whose commands name no database.
pub(crate) fn client_namespace(database: &str, collection: &str) -> String {
    if database.is_empty() {
        collection.to_owned()
    } else {
        format!("{database}.{collection}")
    }
}

/// MongoDB's rules for collection names as a client gives them: non-empty, no `$` or NUL,
/// not in the reserved `system.` space.
pub(crate) fn check_collection_name(database: &str, collection: &str) -> CommandResult<()> {
    let reason = if collection.is_empty() {
        Some("collection names cannot be empty")
    } else if collection.contains('$') {
        Some("collection names cannot contain '$'")
    } else if collection.contains('\0') {
        Some("collection names cannot contain the null character")
    } else if collection.starts_with('.') {
        Some("collection names cannot start with '.'")
    } else if collection.starts_with("system.")
        && collection != "system.profile"
        && !collection.starts_with(crate::catalog::BUCKETS_PREFIX)
    {
        // The profiler's collection is the server's to write, and the client's to read; a
        // time series' buckets are the client's to read.
        Some("the 'system.' prefix is reserved")
    } else {
        None
    };
    let Some(reason) = reason else {
        return Ok(());
    };
    Err(CommandError::new(
        73,
        format!(
            "Invalid collection name: {}: {reason}",
            echo(&client_namespace(database, collection))
        ),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefixed_names_round_trip_and_bad_names_are_refused() {
        let namespaces = Namespaces::Prefixed;
        assert_eq!(
            namespaces.stored("shop", "books.old").unwrap(),
            "shop.books.old"
        );
        assert_eq!(
            namespaces.collection_of("shop", "shop.books.old"),
            Some("books.old")
        );
        assert_eq!(namespaces.collection_of("sho", "shop.books"), None);
        assert_eq!(namespaces.database_of("shop.books.old"), Some("shop"));
        for (database, collection) in [
            ("", "a"),
            ("a.b", "c"),
            ("a b", "c"),
            ("a", ""),
            ("a", "x$y"),
            ("a", "system.users"),
        ] {
            let error = namespaces.stored(database, collection).unwrap_err();
            assert_eq!(error.code, 73, "{database}.{collection}: {error}");
        }
        assert_eq!(
            Namespaces::Flat.stored("ignored", "books").unwrap(),
            "books"
        );
    }
}
