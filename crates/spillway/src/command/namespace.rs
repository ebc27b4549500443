//! Where a MongoDB namespace (`database.collection`) lives in the one store.
//!
//! A server keeps every database in one spillway [`Database`](crate::Database): collection `c`
//! of database `d` is the stored collection `d.c`. One store means one write path, one group
//! commit and transactions that span databases as one atomic batch; a database is the set of
//! stored collections that share its prefix, so it exists while it has a collection, as in
//! MongoDB. [`Namespaces::Flat`] is the embedded view: one unnamed database whose collections
//! are stored under their own names (the shell's).
//!
//! A server over a directory the embedded API wrote serves both ([`Namespaces::Embedding`]):
//! the collections stored under their own names are one database, the *embedded database*
//! (named after the directory by default, the name the shell's `db.getName()` gives), and
//! every other database is prefixed. A stored name belongs to the embedded database when it
//! has no `.`, when it starts with `system.` (a time series' `system.buckets.<name>`, the one
//! `system.` name the catalog stores unprefixed) or with [`EMBEDDED_SYSTEM_PREFIX`] (its
//! profiler's and `aggregate: 1`'s collections); otherwise its database is what comes before
//! the first `.`. So the embedded database's collections cannot have a `.` in their names
//! (it would make them another database's), and the database `system` cannot be named.
//!
//! This module must never read or write documents: it only names things.

use std::path::Path;

use bson::{Bson, Document, doc};
use spillway_doc::error::echo;

use super::error::{CommandError, CommandResult};
use crate::catalog::BUCKETS_PREFIX;
use crate::changes::Scope;

/// How database and collection names map to stored collection names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Namespaces {
    /// Collection `c` of database `d` is stored as `d.c` (a server's many databases).
    Prefixed,
    /// As [`Namespaces::Prefixed`], but the embedded database's collection `c` is stored as
    /// `c`, as the embedded API and the shell store it (a server over a database the
    /// embedded API wrote; see the module documentation for which stored names are its).
    Embedding(EmbeddedDatabase),
    /// Collections are stored under their own names; the database name is ignored (one
    /// embedded database, as the shell sees it).
    Flat,
}

/// The name under which a server serves the collections stored without a database prefix
/// ([`Namespaces::Embedding`]): a valid MongoDB database name other than `admin`, `local`,
/// `config` (the server's own) and `system` (see the module documentation).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EmbeddedDatabase(String);

impl EmbeddedDatabase {
    /// Checks `name` (73 InvalidNamespace when MongoDB would refuse it as a database name, or
    /// when it is one of the reserved names above).
    pub fn new(name: &str) -> Result<EmbeddedDatabase, CommandError> {
        check_database_name(name)?;
        if RESERVED_DATABASES.contains(&name) {
            return Err(CommandError::new(
                73,
                format!(
                    "'{name}' cannot be the embedded database: the names {} are reserved",
                    RESERVED_DATABASES.join(", ")
                ),
            ));
        }
        Ok(EmbeddedDatabase(name.to_owned()))
    }

    /// The database name clients use.
    pub fn name(&self) -> &str {
        &self.0
    }
}

/// The database names the embedded database cannot have: the server's own databases, and
/// `system`, whose stored names would be the embedded database's `system.` collections.
const RESERVED_DATABASES: [&str; 4] = ["admin", "config", "local", "system"];

/// Where the embedded database's `system.` collections are stored: `.system.profile` (its
/// profiler's) and `.system.aggregate` (what `aggregate: 1` reads, always empty). It is the
/// empty database prefix: no database name is empty and no client collection name starts
/// with `.`, so no other namespace is stored there, and `system.`-prefixed stored names are
/// refused by the catalog (time series buckets apart).
pub const EMBEDDED_SYSTEM_PREFIX: &str = ".system.";

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

/// The profiler's collection, as clients name it in every database.
const PROFILE: &str = "system.profile";

/// The collection a database-level `aggregate` reads, as the stored names spell it.
const AGGREGATE: &str = "system.aggregate";

impl Namespaces {
    /// The stored name of `collection` in `database`, after checking both names as MongoDB
    /// does (73 InvalidNamespace).
    pub(crate) fn stored(&self, database: &str, collection: &str) -> CommandResult<String> {
        check_collection_name(database, collection)?;
        match self {
            Namespaces::Flat => Ok(collection.to_string()),
            Namespaces::Embedding(embedded) if embedded.name() == database => {
                if collection == PROFILE {
                    return Ok(format!(".{PROFILE}"));
                }
                let own_name = collection
                    .strip_prefix(BUCKETS_PREFIX)
                    .unwrap_or(collection);
                if own_name.contains('.') {
                    return Err(CommandError::new(
                        73,
                        format!(
                            "Invalid collection name: {}: the embedded database {database} stores its collections under their own names, where a '.' would make '{}' a database of its own; choose a name without '.'",
                            echo(&client_namespace(database, collection)),
                            echo(own_name.split('.').next().unwrap_or_default()),
                        ),
                    ));
                }
                Ok(collection.to_string())
            }
            Namespaces::Prefixed | Namespaces::Embedding(_) => {
                self.check_prefixed_database(database)?;
                Ok(format!("{database}.{collection}"))
            }
        }
    }

    /// Checks the name of a database stored under its prefix: MongoDB's rules, and with an
    /// embedded database, not `system` (whose stored names are the embedded database's).
    fn check_prefixed_database(&self, database: &str) -> CommandResult<()> {
        check_database_name(database)?;
        if let Namespaces::Embedding(embedded) = self
            && database == "system"
        {
            return Err(CommandError::new(
                73,
                format!(
                    "the database name 'system' is reserved while the server serves the embedded database {}: its 'system.' collections are stored under that prefix",
                    embedded.name()
                ),
            ));
        }
        Ok(())
    }

    /// The stored name of `database`'s `system.` collection `name` (`system.profile`,
    /// `system.aggregate`), which the server writes in the `system.` space clients cannot
    /// create collections in; `what` says which command needs it, for the flat view's refusal.
    fn system_collection(&self, database: &str, name: &str, what: &str) -> CommandResult<String> {
        match self {
            Namespaces::Embedding(embedded) if embedded.name() == database => {
                Ok(format!(".{name}"))
            }
            Namespaces::Prefixed | Namespaces::Embedding(_) => {
                self.check_prefixed_database(database)?;
                Ok(format!("{database}.{name}"))
            }
            Namespaces::Flat => Err(CommandError::not_supported(format!(
                "{what} needs a server's databases (the embedded view has no {name})"
            ))),
        }
    }

    /// The stored name a database-level `aggregate` reads: `system.aggregate` of the
    /// database, in the `system.` space no client can create a collection in, so it is always
    /// empty. The flat view has no such space (the catalog refuses `system.` names there).
    pub(crate) fn collectionless(&self, database: &str) -> CommandResult<String> {
        self.system_collection(database, AGGREGATE, "aggregate: 1")
    }

    /// The stored name of `database`'s profiler collection, `system.profile`, which the
    /// server writes in the `system.` space clients cannot create collections in.
    pub(crate) fn profile_collection(&self, database: &str) -> CommandResult<String> {
        self.system_collection(database, PROFILE, "the profiler")
    }

    /// The `ns` a `dropDatabase` of `database` records for change streams: a stored name in
    /// the database's space that names no collection (`d.`; `""`, the space of the names
    /// without a `.`, for the embedded database and the flat view), which
    /// [`Namespaces::event_namespace`] turns back into the database.
    pub(crate) fn database_marker(&self, database: &str) -> CommandResult<String> {
        match self {
            Namespaces::Flat => Ok(String::new()),
            Namespaces::Embedding(embedded) if embedded.name() == database => Ok(String::new()),
            Namespaces::Prefixed | Namespaces::Embedding(_) => {
                self.check_prefixed_database(database)?;
                Ok(format!("{database}."))
            }
        }
    }

    /// The collection of `database` stored as `stored`, if it belongs to that database.
    pub(crate) fn collection_of<'a>(&self, database: &str, stored: &'a str) -> Option<&'a str> {
        match self {
            Namespaces::Flat => Some(stored),
            Namespaces::Prefixed => stored
                .strip_prefix(database)
                .and_then(|rest| rest.strip_prefix('.')),
            Namespaces::Embedding(embedded) => {
                if self.database_of(stored) != Some(database) {
                    None
                } else if database == embedded.name() {
                    // `.system.profile` is its `system.profile`.
                    Some(stored.strip_prefix('.').unwrap_or(stored))
                } else {
                    stored.get(database.len() + 1..)
                }
            }
        }
    }

    /// The database a stored collection belongs to (`None` in the flat view, and for a name
    /// without a `.` when no embedded database is served).
    pub(crate) fn database_of<'a>(&'a self, stored: &'a str) -> Option<&'a str> {
        match self {
            Namespaces::Prefixed => stored.split_once('.').map(|(database, _)| database),
            Namespaces::Embedding(embedded) => {
                if is_embedded_stored_name(stored) {
                    Some(embedded.name())
                } else {
                    stored.split_once('.').map(|(database, _)| database)
                }
            }
            Namespaces::Flat => None,
        }
    }

    /// Which stored collections a change stream opened on `database` (`aggregate: 1`)
    /// reports: those [`Namespaces::event_namespace`] puts in `database`, or every collection
    /// in the flat view's one database.
    pub(crate) fn stream_scope(&self, database: &str) -> CommandResult<Scope> {
        self.database_marker(database)?;
        Ok(match self {
            Namespaces::Flat => Scope::All,
            Namespaces::Prefixed | Namespaces::Embedding(_) => Scope::Database(database.to_owned()),
        })
    }

    /// The `{ db, coll }` a change event of a stream opened on `database` names stored
    /// collection `stored` with (`db: ""` for a collection in no database a client can name;
    /// the flat view's one database is `database`). A `dropDatabase` record's
    /// [`Namespaces::database_marker`] names the database, with an empty `coll`.
    pub(crate) fn event_namespace(&self, database: &str, stored: &str) -> Document {
        let database = match self {
            Namespaces::Flat => database,
            _ => self.database_of(stored).unwrap_or_default(),
        };
        let collection = self.collection_of(database, stored).unwrap_or(stored);
        doc! { "db": database, "coll": collection }
    }
}
impl Namespaces {
    /// `pipeline` (stored, as a view's) with the collections its stages read (`$lookup`,
    /// `$graphLookup`, `$unionWith`, inside `$facet` and sub-pipelines too) named as clients
    /// of `database` name them: the reverse of [`Namespaces::pipeline`] for pipelines that
    /// write nothing.
    pub(crate) fn client_pipeline(&self, database: &str, pipeline: &[Document]) -> Vec<Document> {
        pipeline
            .iter()
            .map(|stage| self.client_stage(database, stage))
            .collect()
    }

    fn client_stage(&self, database: &str, stage: &Document) -> Document {
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
        &self,
        database: &str,
        pipeline: &[Document],
    ) -> CommandResult<Vec<Document>> {
        pipeline
            .iter()
            .map(|stage| self.stage(database, stage))
            .collect()
    }

    fn stage(&self, database: &str, stage: &Document) -> CommandResult<Document> {
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

    fn rename_field(&self, database: &str, spec: &mut Document, field: &str) -> CommandResult<()> {
        if let Some(Bson::String(collection)) = spec.get(field) {
            let stored = self.stored(database, collection)?;
            spec.insert(field, stored);
        }
        Ok(())
    }

    fn sub_pipeline(&self, database: &str, spec: &mut Document) -> CommandResult<()> {
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
    fn target(&self, database: &str, target: &Bson) -> CommandResult<Bson> {
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

/// Whether stored collection `stored` belongs to the embedded database when a server serves
/// one ([`Namespaces::Embedding`]): a name without a `.`, a time series' `system.buckets.`
/// collection, or one of [`EMBEDDED_SYSTEM_PREFIX`]. Every other stored name is prefixed by
/// its database.
pub fn is_embedded_stored_name(stored: &str) -> bool {
    !stored.contains('.')
        || stored.starts_with("system.")
        || stored.starts_with(EMBEDDED_SYSTEM_PREFIX)
}

/// Whether MongoDB accepts `name` as a database name: non-empty, at most 63 bytes, none of
/// `/\. "$` or NUL.
pub fn is_valid_database_name(name: &str) -> bool {
    check_database_name(name).is_ok()
}

/// The database name of the data directory `directory`: its last component, when that is a
/// valid database name (`None` otherwise, and for a path that ends in `.` or `..`). The
/// shell's `db.getName()` answers it, and `spillway serve` names the embedded database
/// after it.
pub fn directory_database_name(directory: &Path) -> Option<&str> {
    directory
        .file_name()
        .and_then(|name| name.to_str())
        .filter(|name| is_valid_database_name(name))
}

/// The database name of the collections stored without a database prefix when no valid one
/// comes from the data directory: `test`, mongosh's default database.
pub const DEFAULT_EMBEDDED_DATABASE: &str = "test";

/// The one name both front ends give the collections stored without a database prefix in
/// the data directory `directory` (`None`: an in-memory database): the directory's name
/// ([`directory_database_name`]) when it can be the embedded database
/// ([`EmbeddedDatabase::new`]: valid, and not `admin`, `config`, `local` or `system`),
/// otherwise [`DEFAULT_EMBEDDED_DATABASE`]. The shell's `db.getName()` answers it, and
/// `spillway serve` serves those collections as that database.
pub fn embedded_database_of(directory: Option<&Path>) -> EmbeddedDatabase {
    directory
        .and_then(directory_database_name)
        .and_then(|name| EmbeddedDatabase::new(name).ok())
        .unwrap_or_else(|| EmbeddedDatabase(DEFAULT_EMBEDDED_DATABASE.to_owned()))
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

    #[test]
    fn the_embedded_database_is_stored_unprefixed_beside_prefixed_databases() {
        let namespaces = Namespaces::Embedding(EmbeddedDatabase::new("shelf").unwrap());
        for (database, collection, stored) in [
            ("shelf", "books", "books"),
            ("shelf", "system.buckets.weather", "system.buckets.weather"),
            ("shelf", "system.profile", ".system.profile"),
            ("other", "books", "other.books"),
            ("other", "books.old", "other.books.old"),
            ("other", "system.profile", "other.system.profile"),
        ] {
            assert_eq!(namespaces.stored(database, collection).unwrap(), stored);
            assert_eq!(namespaces.database_of(stored), Some(database), "{stored}");
            assert_eq!(
                namespaces.collection_of(database, stored),
                Some(collection),
                "{stored}"
            );
        }
        assert_eq!(namespaces.collection_of("shelf", "other.books"), None);
        assert_eq!(namespaces.collection_of("other", "books"), None);
        assert_eq!(
            namespaces.collectionless("shelf").unwrap(),
            ".system.aggregate"
        );
        assert_eq!(
            namespaces.profile_collection("shelf").unwrap(),
            ".system.profile"
        );
        assert_eq!(namespaces.database_marker("shelf").unwrap(), "");
        assert_eq!(namespaces.database_marker("other").unwrap(), "other.");
        assert_eq!(
            namespaces.event_namespace("other", ""),
            doc! { "db": "shelf", "coll": "" }
        );
        assert_eq!(
            namespaces.event_namespace("shelf", "other.c"),
            doc! { "db": "other", "coll": "c" }
        );
        // A '.' would make the name another database's; `system` holds its system names.
        for (database, collection) in [
            ("shelf", "books.old"),
            ("shelf", "system.buckets.a.b"),
            ("system", "c"),
        ] {
            let error = namespaces.stored(database, collection).unwrap_err();
            assert_eq!(error.code, 73, "{database}.{collection}: {error}");
        }
        for reserved in ["admin", "config", "local", "system", "a.b", ""] {
            assert_eq!(
                EmbeddedDatabase::new(reserved).unwrap_err().code,
                73,
                "{reserved}"
            );
        }
    }

    #[test]
    fn a_directory_names_its_database_when_mongodb_accepts_the_name() {
        assert_eq!(
            directory_database_name(Path::new("/data/shelf")),
            Some("shelf")
        );
        assert_eq!(
            directory_database_name(Path::new("data/shelf/")),
            Some("shelf")
        );
        assert_eq!(directory_database_name(Path::new("/data/my shelf")), None);
        assert_eq!(directory_database_name(Path::new("/data/v1.2")), None);
        assert_eq!(directory_database_name(Path::new(".")), None);
    }

    #[test]
    fn the_embedded_database_is_the_directory_name_or_test() {
        for (directory, name) in [
            (Some("/data/shelf"), "shelf"),
            (Some("/data/my shelf"), "test"),
            (Some("/data/v1.2"), "test"),
            (Some("/data/admin"), "test"),
            (Some("/data/system"), "test"),
            (None, "test"),
        ] {
            let embedded = embedded_database_of(directory.map(Path::new));
            assert_eq!(embedded.name(), name, "{directory:?}");
            assert_eq!(EmbeddedDatabase::new(embedded.name()), Ok(embedded));
        }
    }
}
