//! What a command needs to be allowed: MongoDB's action types on resources (a cluster, a
//! database, a collection), as MongoDB's own commands check them, so that a server enforcing
//! roles (`spillway serve --auth`) asks the command layer rather than reading commands itself.
//!
//! [`Commands::required_privileges`] maps each command of [`super::COMMANDS`] to the privileges
//! it needs: `find` on the collection it reads, `insert` and `update` for an upsert,
//! `createIndex`, `dropCollection`, `listCollections` on the database, and so on. Pipelines are
//! walked for the collections they read (`$lookup`, `$graphLookup`, `$unionWith`, inside
//! `$facet` and sub-pipelines) and write (`$out`, `$merge`); the pattern commands need the
//! privileges of the main collection and of its side collection. A command the map does not
//! know gives `None`, which a server must deny to everyone but a role that may do anything.
//!
//! This module must never decide who holds a privilege (roles are the server's) and never
//! read a document: it reads command documents and the catalog's policies only.

use std::fmt;

use bson::{Bson, Document};

use super::Commands;
use super::namespace::Namespaces;
use crate::Pattern;

macro_rules! action_types {
    ($($variant:ident => $name:literal,)*) => {
        /// One of MongoDB's action types: what a privilege allows on its resource.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
        #[non_exhaustive]
        pub enum ActionType {
            $(
                #[doc = concat!("`", $name, "`")]
                $variant,
            )*
        }

        impl ActionType {
            /// Every action type, in declaration order.
            pub const ALL: &'static [ActionType] = &[$(ActionType::$variant,)*];

            /// MongoDB's name of the action (`"find"`, `"createIndex"`...).
            pub fn as_str(self) -> &'static str {
                match self {
                    $(ActionType::$variant => $name,)*
                }
            }

            /// The action named `name`, as a role's privileges spell it.
            pub fn parse(name: &str) -> Option<ActionType> {
                match name {
                    $($name => Some(ActionType::$variant),)*
                    _ => None,
                }
            }
        }
    };
}

action_types! {
    AnyAction => "anyAction",
    BypassDocumentValidation => "bypassDocumentValidation",
    ChangeCustomData => "changeCustomData",
    ChangeOwnCustomData => "changeOwnCustomData",
    ChangeOwnPassword => "changeOwnPassword",
    ChangePassword => "changePassword",
    ChangeStream => "changeStream",
    CollMod => "collMod",
    CollStats => "collStats",
    Compact => "compact",
    ConnPoolStats => "connPoolStats",
    ConvertToCapped => "convertToCapped",
    CreateCollection => "createCollection",
    CreateIndex => "createIndex",
    CreateRole => "createRole",
    CreateUser => "createUser",
    DbHash => "dbHash",
    DbStats => "dbStats",
    DropCollection => "dropCollection",
    DropDatabase => "dropDatabase",
    DropIndex => "dropIndex",
    DropRole => "dropRole",
    DropUser => "dropUser",
    EnableProfiler => "enableProfiler",
    Find => "find",
    FlushRouterConfig => "flushRouterConfig",
    Fsync => "fsync",
    GetCmdLineOpts => "getCmdLineOpts",
    GetLog => "getLog",
    GetParameter => "getParameter",
    GrantRole => "grantRole",
    HostInfo => "hostInfo",
    IndexStats => "indexStats",
    Inprog => "inprog",
    Insert => "insert",
    InvalidateUserCache => "invalidateUserCache",
    KillAnyCursor => "killAnyCursor",
    KillAnySession => "killAnySession",
    KillCursors => "killCursors",
    Killop => "killop",
    ListCollections => "listCollections",
    ListDatabases => "listDatabases",
    ListIndexes => "listIndexes",
    ListSessions => "listSessions",
    LogRotate => "logRotate",
    Netstat => "netstat",
    PlanCacheRead => "planCacheRead",
    PlanCacheWrite => "planCacheWrite",
    ReIndex => "reIndex",
    Remove => "remove",
    RenameCollectionSameDb => "renameCollectionSameDB",
    ReplSetGetConfig => "replSetGetConfig",
    ReplSetGetStatus => "replSetGetStatus",
    RevokeRole => "revokeRole",
    ServerStatus => "serverStatus",
    SetParameter => "setParameter",
    Shutdown => "shutdown",
    Top => "top",
    Update => "update",
    Validate => "validate",
    ViewRole => "viewRole",
    ViewUser => "viewUser",
}

impl fmt::Display for ActionType {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str(self.as_str())
    }
}

/// What a privilege is about, as a command needs it.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Resource {
    /// The whole server (`serverStatus`, `listDatabases`, `fsync`...).
    Cluster,
    /// A database as a whole (`dbStats`, `listCollections`, `createUser`...); also an action on
    /// a collection whose name the command gives malformed (the command layer refuses it).
    Database(String),
    /// One collection of one database.
    Collection {
        /// The database.
        database: String,
        /// The collection, as the client names it.
        collection: String,
    },
}

impl Resource {
    /// Collection `collection` of `database`. The stored layout of a collection
    /// (`system.stored.<collection>`) is the collection's resource: reading it needs what
    /// reading the collection needs (writes to it are refused whatever the privileges).
    pub fn collection(database: &str, collection: &str) -> Resource {
        let collection = super::namespace::stored_view_of(collection).unwrap_or(collection);
        Resource::Collection {
            database: database.to_owned(),
            collection: collection.to_owned(),
        }
    }
}

impl fmt::Display for Resource {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Resource::Cluster => formatter.write_str("the cluster"),
            Resource::Database(database) => write!(formatter, "database {database}"),
            Resource::Collection {
                database,
                collection,
            } => write!(formatter, "{database}.{collection}"),
        }
    }
}

/// Actions needed on one resource.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Privilege {
    /// Where.
    pub resource: Resource,
    /// What, all of them.
    pub actions: Vec<ActionType>,
}

/// The privileges being gathered for one command.
#[derive(Default)]
struct Needs(Vec<Privilege>);

impl Needs {
    fn add(&mut self, resource: Resource, actions: &[ActionType]) {
        if let Some(privilege) = self.0.iter_mut().find(|held| held.resource == resource) {
            for action in actions {
                if !privilege.actions.contains(action) {
                    privilege.actions.push(*action);
                }
            }
        } else {
            self.0.push(Privilege {
                resource,
                actions: actions.to_vec(),
            });
        }
    }

    /// `actions` on the collection `value` names in `database` (the database as a whole when
    /// `value` is not a name: the command layer refuses such a command anyway).
    fn on_named(&mut self, database: &str, value: Option<&Bson>, actions: &[ActionType]) {
        match value {
            Some(Bson::String(collection)) => {
                self.add(Resource::collection(database, collection), actions);
            }
            _ => self.add(Resource::Database(database.to_owned()), actions),
        }
    }
}

/// The message MongoDB gives a command its user may not run (13 Unauthorized):
/// `not authorized on shop to execute command { find: "books", ... }`, the command shortened
/// to a readable length.
pub fn unauthorized_message(database: &str, command: &Document) -> String {
    /// The longest command echoed back, in characters.
    const MAX_ECHO: usize = 512;
    let mut shown = spillway_doc::shell::to_shell_string(&Bson::Document(command.clone()));
    if let Some((cut, _)) = shown.char_indices().nth(MAX_ECHO) {
        shown.truncate(cut);
        shown.push_str("...");
    }
    format!("not authorized on {database} to execute command {shown}")
}

impl Commands {
    /// The privileges `command` needs (its first key names it, `$db` its database), or
    /// `None` for a command this layer does not know, which a server must refuse to every
    /// user whose roles do not allow any action everywhere.
    pub fn required_privileges(&self, command: &Document) -> Option<Vec<Privilege>> {
        let mut needs = Needs::default();
        self.gather(&super::name_first(command.clone()), &mut needs)?;
        Some(needs.0)
    }

    fn gather(&self, command: &Document, needs: &mut Needs) -> Option<()> {
        use ActionType as A;
        let (name, value) = command.iter().next()?;
        let database = command.get_str("$db").unwrap_or_default();
        let database_resource = || Resource::Database(database.to_owned());
        match name.as_str() {
            "find" | "count" | "distinct" => needs.on_named(database, Some(value), &[A::Find]),
            "getMore" => needs.on_named(database, command.get("collection"), &[A::Find]),
            "killCursors" => needs.on_named(database, Some(value), &[A::KillCursors]),
            "aggregate" => aggregate(database, command, needs),
            "explain" => {
                let Some(Bson::Document(inner)) = command.get("explain") else {
                    needs.add(database_resource(), &[A::Find]);
                    return Some(());
                };
                let mut inner = inner.clone();
                inner.insert("$db", database);
                self.gather(&inner, needs)?;
            }
            "insert" => {
                needs.on_named(database, Some(value), &[A::Insert]);
                if bypasses_validation(command) {
                    needs.on_named(database, Some(value), &[A::BypassDocumentValidation]);
                }
            }
            "update" => {
                let upsert = command.get_array("updates").is_ok_and(|updates| {
                    updates.iter().any(|update| {
                        matches!(update, Bson::Document(update) if update.get_bool("upsert").unwrap_or(false))
                    })
                });
                let actions: &[A] = if upsert {
                    &[A::Update, A::Insert]
                } else {
                    &[A::Update]
                };
                needs.on_named(database, Some(value), actions);
                if bypasses_validation(command) {
                    needs.on_named(database, Some(value), &[A::BypassDocumentValidation]);
                }
            }
            "delete" => needs.on_named(database, Some(value), &[A::Remove]),
            "findAndModify" | "findandmodify" => {
                let actions: &[A] = if command.get_bool("remove").unwrap_or(false) {
                    &[A::Find, A::Remove]
                } else if command.get_bool("upsert").unwrap_or(false) {
                    &[A::Find, A::Update, A::Insert]
                } else {
                    &[A::Find, A::Update]
                };
                needs.on_named(database, Some(value), actions);
                if bypasses_validation(command) {
                    needs.on_named(database, Some(value), &[A::BypassDocumentValidation]);
                }
            }
            "bulkWrite" => bulk_write(command, needs),
            "create" => {
                needs.on_named(database, Some(value), &[A::CreateCollection]);
                // A view reads its source: creating one needs `find` there, as in MongoDB.
                if let Ok(view_on) = command.get_str("viewOn") {
                    needs.add(Resource::collection(database, view_on), &[A::Find]);
                }
                if let Ok(pipeline) = command.get_array("pipeline") {
                    pipeline_needs(database, pipeline, needs);
                }
            }
            "drop" => needs.on_named(database, Some(value), &[A::DropCollection]),
            "dropDatabase" => needs.add(database_resource(), &[A::DropDatabase]),
            "listDatabases" => needs.add(Resource::Cluster, &[A::ListDatabases]),
            "listCollections" => needs.add(database_resource(), &[A::ListCollections]),
            "renameCollection" => rename_collection(command, needs),
            "createIndexes" => needs.on_named(database, Some(value), &[A::CreateIndex]),
            "listIndexes" => needs.on_named(database, Some(value), &[A::ListIndexes]),
            "dropIndexes" | "deleteIndexes" => {
                needs.on_named(database, Some(value), &[A::DropIndex]);
            }
            "collMod" => needs.on_named(database, Some(value), &[A::CollMod]),
            "dbStats" | "dbstats" => needs.add(database_resource(), &[A::DbStats]),
            "validate" => needs.on_named(database, Some(value), &[A::Validate]),
            "fsync" => needs.add(Resource::Cluster, &[A::Fsync]),
            "compact" => needs.on_named(database, Some(value), &[A::Compact]),
            "currentOp" => needs.add(Resource::Cluster, &[A::Inprog]),
            "killOp" => needs.add(Resource::Cluster, &[A::Killop]),
            "top" => needs.add(Resource::Cluster, &[A::Top]),
            "collStats" => needs.on_named(database, Some(value), &[A::CollStats]),
            "profile" => needs.add(database_resource(), &[A::EnableProfiler]),
            // A session's own transactions and sessions: any authenticated user, as in MongoDB.
            "commitTransaction" | "abortTransaction" | "endSessions" | "killSessions"
            | "refreshSessions" => {}
            "setPattern" | "removePattern" => self.pattern_change(database, command, needs),
            "getPatterns" => match value {
                Bson::String(collection) => {
                    needs.add(
                        Resource::collection(database, collection),
                        &[A::ListIndexes],
                    );
                }
                _ => needs.add(database_resource(), &[A::ListCollections]),
            },
            "verifyPatterns" => {
                for (main, side) in self.policies_of(database, None) {
                    needs.add(Resource::collection(database, &main), &[A::Find]);
                    needs.add(Resource::collection(database, &side), &[A::Find]);
                }
                needs.add(database_resource(), &[A::ListCollections]);
            }
            "arrayLength" | "arrayPage" => {
                needs.on_named(database, Some(value), &[A::Find]);
                if let Bson::String(main) = value {
                    for (_, side) in self.policies_of(database, Some(main)) {
                        needs.add(Resource::collection(database, &side), &[A::Find]);
                    }
                }
            }
            _ => return None,
        }
        Some(())
    }

    /// `setPattern` and `removePattern` reorganise a collection's documents between it and its
    /// side collection: they read and write both, create the side collection and its index,
    /// and change the main collection's definition (`collMod`, as a validator would).
    fn pattern_change(&self, database: &str, command: &Document, needs: &mut Needs) {
        use ActionType as A;
        let Some((name, Bson::String(main))) = command.iter().next() else {
            needs.add(Resource::Database(database.to_owned()), &[A::CollMod]);
            return;
        };
        needs.add(
            Resource::collection(database, main),
            &[A::Find, A::Insert, A::Update, A::Remove, A::CollMod],
        );
        let side_actions = [
            A::Find,
            A::Insert,
            A::Update,
            A::Remove,
            A::CreateCollection,
            A::CreateIndex,
        ];
        let mut sides: Vec<String> = self
            .policies_of(database, Some(main))
            .into_iter()
            .map(|(_, side)| side)
            .collect();
        if name == "setPattern" {
            let mut ignored = vec!["setPattern"];
            ignored.extend_from_slice(super::args::GENERIC_FIELDS);
            if let Ok(pattern) = Pattern::from_options(main, command, &ignored) {
                sides.push(pattern.side_collection().to_owned());
            }
        }
        for side in sides {
            needs.add(Resource::collection(database, &side), &side_actions);
        }
    }

    /// The `(main, side)` client collection names of `database`'s policies (of `main` only,
    /// when given).
    fn policies_of(&self, database: &str, main: Option<&str>) -> Vec<(String, String)> {
        let namespaces: &Namespaces = &self.namespaces;
        self.database
            .patterns()
            .iter()
            .filter_map(|pattern| {
                let collection = namespaces.collection_of(database, pattern.collection())?;
                let side = namespaces.collection_of(database, pattern.side_collection())?;
                main.is_none_or(|main| main == collection)
                    .then(|| (collection.to_owned(), side.to_owned()))
            })
            .collect()
    }
}

/// `aggregate` on a collection, or `aggregate: 1` on the database (its first stage says
/// what it reads).
fn aggregate(database: &str, command: &Document, needs: &mut Needs) {
    use ActionType as A;
    let pipeline = command.get_array("pipeline").ok();
    let first_stage = pipeline
        .and_then(|stages| stages.first())
        .and_then(|stage| stage.as_document())
        .and_then(|stage| stage.keys().next().cloned());
    let is_change_stream = first_stage.as_deref() == Some("$changeStream");
    match command.get("aggregate") {
        Some(Bson::String(collection)) => {
            let resource = Resource::collection(database, collection);
            match first_stage.as_deref() {
                Some("$collStats") => needs.add(resource, &[A::CollStats]),
                Some("$indexStats") => needs.add(resource, &[A::IndexStats]),
                Some("$planCacheStats") => needs.add(resource, &[A::PlanCacheRead]),
                _ if is_change_stream => needs.add(resource, &[A::ChangeStream, A::Find]),
                _ => needs.add(resource, &[A::Find]),
            }
        }
        _ => match first_stage.as_deref() {
            Some("$currentOp") => needs.add(Resource::Cluster, &[A::Inprog]),
            Some("$listLocalSessions" | "$listSessions") => {
                let all_users = pipeline
                    .and_then(|stages| stages.first())
                    .and_then(|stage| stage.as_document())
                    .and_then(|stage| stage.iter().next())
                    .and_then(|(_, spec)| spec.as_document())
                    .is_some_and(|spec| spec.get_bool("allUsers").unwrap_or(false));
                if all_users {
                    needs.add(Resource::Cluster, &[A::ListSessions]);
                }
            }
            // Literal documents read no collection.
            Some("$documents") => {}
            _ if is_change_stream => {
                let whole_cluster = pipeline
                    .and_then(|stages| stages.first())
                    .and_then(|stage| stage.as_document())
                    .and_then(|stage| stage.get_document("$changeStream").ok())
                    .is_some_and(|spec| spec.get_bool("allChangesForCluster").unwrap_or(false));
                if whole_cluster {
                    needs.add(Resource::Cluster, &[A::ChangeStream, A::Find]);
                } else {
                    needs.add(
                        Resource::Database(database.to_owned()),
                        &[A::ChangeStream, A::Find],
                    );
                }
            }
            _ => needs.add(Resource::Database(database.to_owned()), &[A::Find]),
        },
    }
    if let Some(pipeline) = pipeline {
        pipeline_needs(database, pipeline, needs);
    }
    if bypasses_validation(command) {
        needs.add(
            Resource::Database(database.to_owned()),
            &[A::BypassDocumentValidation],
        );
    }
}

fn bypasses_validation(command: &Document) -> bool {
    command
        .get_bool("bypassDocumentValidation")
        .unwrap_or(false)
}

/// The collections a pipeline's stages read (`find`) and write (`$out`: `insert` and
/// `remove`; `$merge`: `insert` and `update`), inside `$facet` and sub-pipelines too.
fn pipeline_needs(database: &str, stages: &[Bson], needs: &mut Needs) {
    use ActionType as A;
    for stage in stages {
        let Bson::Document(stage) = stage else {
            continue;
        };
        for (name, spec) in stage {
            match (name.as_str(), spec) {
                ("$lookup" | "$graphLookup", Bson::Document(spec)) => {
                    if let Ok(from) = spec.get_str("from") {
                        needs.add(Resource::collection(database, from), &[A::Find]);
                    }
                    if let Ok(inner) = spec.get_array("pipeline") {
                        pipeline_needs(database, inner, needs);
                    }
                }
                ("$unionWith", Bson::String(collection)) => {
                    needs.add(Resource::collection(database, collection), &[A::Find]);
                }
                ("$unionWith", Bson::Document(spec)) => {
                    if let Ok(collection) = spec.get_str("coll") {
                        needs.add(Resource::collection(database, collection), &[A::Find]);
                    }
                    if let Ok(inner) = spec.get_array("pipeline") {
                        pipeline_needs(database, inner, needs);
                    }
                }
                ("$facet", Bson::Document(facets)) => {
                    for (_, branch) in facets {
                        if let Bson::Array(inner) = branch {
                            pipeline_needs(database, inner, needs);
                        }
                    }
                }
                ("$out", target) => {
                    if let Some(resource) = output_target(database, target) {
                        needs.add(resource, &[A::Insert, A::Remove]);
                    }
                }
                ("$merge", Bson::Document(spec)) => {
                    if let Some(resource) = spec
                        .get("into")
                        .and_then(|into| output_target(database, into))
                    {
                        needs.add(resource, &[A::Insert, A::Update]);
                    }
                }
                ("$merge", target @ Bson::String(_)) => {
                    if let Some(resource) = output_target(database, target) {
                        needs.add(resource, &[A::Insert, A::Update]);
                    }
                }
                _ => {}
            }
        }
    }
}

/// An output stage's target: `"coll"` in the command's database, or `{ db, coll }`.
fn output_target(database: &str, target: &Bson) -> Option<Resource> {
    match target {
        Bson::String(collection) => Some(Resource::collection(database, collection)),
        Bson::Document(spec) => Some(Resource::collection(
            spec.get_str("db").unwrap_or(database),
            spec.get_str("coll").ok()?,
        )),
        _ => None,
    }
}

/// `bulkWrite`: each operation's action on the namespace its `nsInfo` entry names.
fn bulk_write(command: &Document, needs: &mut Needs) {
    use ActionType as A;
    let namespaces: Vec<Option<(String, String)>> = command
        .get_array("nsInfo")
        .map(|entries| {
            entries
                .iter()
                .map(|entry| {
                    let namespace = entry.as_document()?.get_str("ns").ok()?;
                    let (database, collection) = namespace.split_once('.')?;
                    Some((database.to_owned(), collection.to_owned()))
                })
                .collect()
        })
        .unwrap_or_default();
    let Ok(operations) = command.get_array("ops") else {
        return;
    };
    for operation in operations {
        let Some((kind, target)) = operation.as_document().and_then(|op| op.iter().next()) else {
            continue;
        };
        let index = match target {
            Bson::Int32(index) => usize::try_from(*index).ok(),
            Bson::Int64(index) => usize::try_from(*index).ok(),
            _ => None,
        };
        let Some((database, collection)) = index
            .and_then(|index| namespaces.get(index))
            .and_then(Option::as_ref)
        else {
            continue;
        };
        let upsert = operation
            .as_document()
            .is_some_and(|op| op.get_bool("upsert").unwrap_or(false));
        let actions: &[A] = match kind.as_str() {
            "insert" => &[A::Insert],
            "update" if upsert => &[A::Update, A::Insert],
            "update" => &[A::Update],
            "delete" => &[A::Remove],
            _ => continue,
        };
        needs.add(Resource::collection(database, collection), actions);
    }
}

/// `renameCollection` (run on `admin`, both names `database.collection`): within a database
/// `renameCollectionSameDB` there; across databases reading and dropping the source and
/// writing and indexing the target; `dropTarget` drops the target first.
fn rename_collection(command: &Document, needs: &mut Needs) {
    use ActionType as A;
    let split = |field: &str| -> Option<(String, String)> {
        let namespace = command.get_str(field).ok()?;
        let (database, collection) = namespace.split_once('.')?;
        Some((database.to_owned(), collection.to_owned()))
    };
    let admin = Resource::Database("admin".to_owned());
    let (Some((from_db, from)), Some((to_db, to))) = (split("renameCollection"), split("to"))
    else {
        needs.add(admin, &[A::RenameCollectionSameDb]);
        return;
    };
    if from_db == to_db {
        needs.add(
            Resource::Database(from_db.clone()),
            &[A::RenameCollectionSameDb],
        );
    } else {
        needs.add(
            Resource::collection(&from_db, &from),
            &[A::Find, A::DropCollection],
        );
        needs.add(
            Resource::collection(&to_db, &to),
            &[A::Insert, A::CreateIndex],
        );
    }
    if command.get_bool("dropTarget").unwrap_or(false) {
        needs.add(Resource::collection(&to_db, &to), &[A::DropCollection]);
    }
}

#[cfg(test)]
mod tests {
    use bson::doc;

    use super::*;
    use crate::Database;

    fn needs(command: &Document) -> Vec<Privilege> {
        let commands = Commands::new(Database::open_in_memory().expect("in-memory database"));
        commands
            .required_privileges(command)
            .unwrap_or_else(|| panic!("{command} is not in the map"))
    }

    fn privilege(database: &str, collection: &str, actions: &[ActionType]) -> Privilege {
        Privilege {
            resource: Resource::collection(database, collection),
            actions: actions.to_vec(),
        }
    }

    #[test]
    fn reads_writes_and_pipelines_name_every_collection_they_touch() {
        use ActionType as A;
        assert_eq!(
            needs(&doc! { "find": "books", "$db": "shop" }),
            vec![privilege("shop", "books", &[A::Find])]
        );
        assert_eq!(
            needs(
                &doc! { "update": "books", "updates": [{ "q": {}, "u": {}, "upsert": true }], "$db": "shop" }
            ),
            vec![privilege("shop", "books", &[A::Update, A::Insert])]
        );
        assert_eq!(
            needs(&doc! {
                "aggregate": "books",
                "pipeline": [
                    { "$lookup": { "from": "authors", "as": "a", "pipeline": [{ "$unionWith": "old" }] } },
                    { "$merge": { "into": { "db": "archive", "coll": "books" } } },
                ],
                "$db": "shop",
            }),
            vec![
                privilege("shop", "books", &[A::Find]),
                privilege("shop", "authors", &[A::Find]),
                privilege("shop", "old", &[A::Find]),
                privilege("archive", "books", &[A::Insert, A::Update]),
            ]
        );
        assert_eq!(
            needs(&doc! { "explain": { "delete": "books", "deletes": [] }, "$db": "shop" }),
            vec![privilege("shop", "books", &[A::Remove])]
        );
        assert_eq!(
            needs(&doc! {
                "bulkWrite": 1,
                "ops": [{ "insert": 0, "document": {} }, { "delete": 1, "filter": {} }],
                "nsInfo": [{ "ns": "shop.books" }, { "ns": "other.logs" }],
                "$db": "admin",
            }),
            vec![
                privilege("shop", "books", &[A::Insert]),
                privilege("other", "logs", &[A::Remove]),
            ]
        );
    }

    #[test]
    fn the_stored_layout_is_read_with_the_collections_privileges() {
        use ActionType as A;
        assert_eq!(
            needs(&doc! { "find": "system.stored.sales", "$db": "shop" }),
            vec![privilege("shop", "sales", &[A::Find])]
        );
    }

    #[test]
    fn pattern_commands_need_the_side_collection_too() {
        use ActionType as A;
        let commands = Commands::new(Database::open_in_memory().expect("in-memory database"));
        let set = doc! {
            "setPattern": "sales", "outlier": "buyers", "threshold": 2,
            "overflowCollection": "extra_sales", "linkField": "book_id", "$db": "shop",
        };
        let required = commands.required_privileges(&set).expect("known");
        assert!(
            required.iter().any(|privilege| privilege.resource
                == Resource::collection("shop", "extra_sales")
                && privilege.actions.contains(&A::Insert)),
            "{required:?}"
        );
        assert_eq!(commands.execute(set).get_f64("ok").ok(), Some(1.0));
        let page = doc! { "arrayPage": "sales", "_id": 1, "field": "buyers", "$db": "shop" };
        assert_eq!(
            commands.required_privileges(&page).expect("known"),
            vec![
                privilege("shop", "sales", &[A::Find]),
                privilege("shop", "extra_sales", &[A::Find]),
            ]
        );
    }

    #[test]
    fn every_command_of_the_layer_is_in_the_map_and_unknown_ones_are_not() {
        let commands = Commands::new(Database::open_in_memory().expect("in-memory database"));
        for name in Commands::command_names() {
            let command = doc! { *name: "c", "$db": "d" };
            assert!(
                commands.required_privileges(&command).is_some(),
                "{name} has no privileges in the map"
            );
        }
        assert_eq!(
            commands.required_privileges(&doc! { "shutdown": 1, "$db": "admin" }),
            None
        );
    }

    #[test]
    fn action_names_round_trip() {
        for action in ActionType::ALL {
            assert_eq!(ActionType::parse(action.as_str()), Some(*action));
        }
        assert_eq!(ActionType::parse("fly"), None);
    }
}
