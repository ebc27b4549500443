//! Roles: MongoDB's built-in roles (`read`, `readWrite`, `dbAdmin`, `dbOwner`, `userAdmin`,
//! `clusterMonitor`, `clusterManager`, `hostManager`, `clusterAdmin`, `root`, and the
//! `AnyDatabase` forms) and the roles users define (`createRole`, stored in
//! `admin.system.roles`), resolved into the [`Grants`] a connection's users hold, and the rule
//! that decides whether grants cover what a command needs.
//!
//! A role's privileges are resource patterns with actions, as MongoDB spells them: `{ db,
//! collection }` (an empty `db` or `collection` means "any"), `{ cluster: true }`,
//! `{ anyResource: true }`. What a command needs comes from `spillway::command` (the command
//! layer's commands) or `authorization.rs` (the server's own); this module never reads a
//! command.

use std::collections::BTreeSet;
use std::sync::atomic::{AtomicU64, Ordering};

use bson::{Bson, Document, doc};
use spillway::Database;
use spillway::command::{ActionType, Privilege, Resource};

/// The stored collection of users (database `admin`, collection `system.users`), whose
/// `roles` the grants are resolved from.
pub(crate) const USERS_COLLECTION: &str = "admin.system.users";
/// The stored collection of user-defined roles (database `admin`, collection `system.roles`).
pub(crate) const ROLES_COLLECTION: &str = "admin.system.roles";

/// How deep inherited roles may nest before the resolution stops (a cycle cannot be stored,
/// but a stored document may be damaged).
const MAX_ROLE_DEPTH: usize = 32;

/// Bumped by every change to users or roles, so that a connection re-resolves its grants.
static GENERATION: AtomicU64 = AtomicU64::new(1);

/// The current generation of users and roles.
pub(crate) fn generation() -> u64 {
    GENERATION.load(Ordering::Acquire)
}

/// Says that users or roles changed: every connection resolves its grants again.
pub(crate) fn changed() {
    GENERATION.fetch_add(1, Ordering::AcqRel);
}

/// Where a privilege of a role applies.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ResourcePattern {
    /// `{ anyResource: true }`: everything, system collections included.
    AnyResource,
    /// `{ cluster: true }`.
    Cluster,
    /// `{ db: "", collection: "" }`: every database and its ordinary collections.
    AnyNormal,
    /// `{ db: "d", collection: "" }`: database `d` and its ordinary collections.
    Database(String),
    /// `{ db: "", collection: "c" }`: collection `c` in every database.
    CollectionInAnyDatabase(String),
    /// `{ db: "d", collection: "c" }`.
    Collection(String, String),
}

impl ResourcePattern {
    /// Whether this pattern covers `resource` (a `system.` collection only by name, as in
    /// MongoDB).
    fn covers(&self, resource: &Resource) -> bool {
        match (self, resource) {
            (ResourcePattern::AnyResource, _) => true,
            (ResourcePattern::Cluster, Resource::Cluster) => true,
            (ResourcePattern::AnyNormal, Resource::Database(_)) => true,
            (ResourcePattern::AnyNormal, Resource::Collection { collection, .. }) => {
                !collection.starts_with("system.")
            }
            (ResourcePattern::Database(db), Resource::Database(database)) => db == database,
            (
                ResourcePattern::Database(db),
                Resource::Collection {
                    database,
                    collection,
                },
            ) => db == database && !collection.starts_with("system."),
            (
                ResourcePattern::CollectionInAnyDatabase(name),
                Resource::Collection { collection, .. },
            ) => name == collection,
            (
                ResourcePattern::Collection(db, name),
                Resource::Collection {
                    database,
                    collection,
                },
            ) => db == database && name == collection,
            _ => false,
        }
    }

    /// Reads `{ db, collection }`, `{ cluster: true }` or `{ anyResource: true }`.
    pub(crate) fn parse(resource: &Document) -> Result<ResourcePattern, String> {
        if resource.get_bool("anyResource").unwrap_or(false) {
            return Ok(ResourcePattern::AnyResource);
        }
        if resource.get_bool("cluster").unwrap_or(false) {
            return Ok(ResourcePattern::Cluster);
        }
        let (Ok(db), Ok(collection)) = (resource.get_str("db"), resource.get_str("collection"))
        else {
            return Err(format!(
                "a privilege's resource needs db and collection (strings), cluster: true or anyResource: true, not {resource}"
            ));
        };
        Ok(match (db.is_empty(), collection.is_empty()) {
            (true, true) => ResourcePattern::AnyNormal,
            (false, true) => ResourcePattern::Database(db.to_owned()),
            (true, false) => ResourcePattern::CollectionInAnyDatabase(collection.to_owned()),
            (false, false) => ResourcePattern::Collection(db.to_owned(), collection.to_owned()),
        })
    }

    /// The pattern as a role document spells it.
    pub(crate) fn to_document(&self) -> Document {
        match self {
            ResourcePattern::AnyResource => doc! { "anyResource": true },
            ResourcePattern::Cluster => doc! { "cluster": true },
            ResourcePattern::AnyNormal => doc! { "db": "", "collection": "" },
            ResourcePattern::Database(db) => doc! { "db": db, "collection": "" },
            ResourcePattern::CollectionInAnyDatabase(name) => {
                doc! { "db": "", "collection": name }
            }
            ResourcePattern::Collection(db, name) => doc! { "db": db, "collection": name },
        }
    }
}

/// Actions on a resource pattern.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Grant {
    pub(crate) resource: ResourcePattern,
    pub(crate) actions: BTreeSet<ActionType>,
}

impl Grant {
    fn new(resource: ResourcePattern, actions: &[ActionType]) -> Grant {
        Grant {
            resource,
            actions: actions.iter().copied().collect(),
        }
    }

    /// Reads a privilege document (`{ resource, actions }`) of `createRole`.
    pub(crate) fn parse(privilege: &Bson) -> Result<Grant, String> {
        let Bson::Document(privilege) = privilege else {
            return Err(format!(
                "a privilege must be a document {{ resource, actions }}, not {privilege}"
            ));
        };
        let resource = privilege
            .get_document("resource")
            .map_err(|_| format!("a privilege needs a resource document: {privilege}"))?;
        let actions = privilege
            .get_array("actions")
            .map_err(|_| format!("a privilege needs an array of actions: {privilege}"))?;
        let actions = actions
            .iter()
            .map(|action| {
                action
                    .as_str()
                    .and_then(ActionType::parse)
                    .ok_or_else(|| format!("Unrecognized action privilege string: {action}"))
            })
            .collect::<Result<BTreeSet<_>, String>>()?;
        Ok(Grant {
            resource: ResourcePattern::parse(resource)?,
            actions,
        })
    }

    pub(crate) fn to_document(&self) -> Document {
        let actions: Vec<Bson> = self
            .actions
            .iter()
            .map(|action| Bson::String(action.as_str().to_owned()))
            .collect();
        doc! { "resource": self.resource.to_document(), "actions": actions }
    }

    fn allows(&self, resource: &Resource, action: ActionType) -> bool {
        self.resource.covers(resource)
            && (self.actions.contains(&action) || self.actions.contains(&ActionType::AnyAction))
    }
}

/// Everything a connection's users may do, resolved from their roles.
#[derive(Debug, Default)]
pub(crate) struct Grants {
    grants: Vec<Grant>,
    /// The roles held, directly and inherited, as `(role, db)`.
    pub(crate) roles: Vec<(String, String)>,
}

impl Grants {
    /// Whether these grants cover every action of every privilege in `needed`.
    pub(crate) fn allow(&self, needed: &[Privilege]) -> bool {
        needed.iter().all(|privilege| {
            privilege.actions.iter().all(|action| {
                self.grants
                    .iter()
                    .any(|grant| grant.allows(&privilege.resource, *action))
            })
        })
    }

    /// Whether these grants allow any action anywhere (`root`): what a command the map does not
    /// know needs.
    pub(crate) fn allow_everything(&self) -> bool {
        self.grants.iter().any(|grant| {
            grant.resource == ResourcePattern::AnyResource
                && grant.actions.contains(&ActionType::AnyAction)
        })
    }

    /// Whether any grant names database `database` (or all of them), as `listDatabases`
    /// without its action shows it.
    pub(crate) fn any_on_database(&self, database: &str) -> bool {
        self.grants.iter().any(|grant| match &grant.resource {
            ResourcePattern::AnyResource | ResourcePattern::AnyNormal => true,
            ResourcePattern::Database(db) | ResourcePattern::Collection(db, _) => db == database,
            ResourcePattern::Cluster | ResourcePattern::CollectionInAnyDatabase(_) => false,
        })
    }

    /// The privileges, merged by resource, as `connectionStatus` and `usersInfo` show them.
    pub(crate) fn to_documents(&self) -> Vec<Bson> {
        let mut merged: Vec<Grant> = Vec::new();
        for grant in &self.grants {
            match merged
                .iter_mut()
                .find(|held| held.resource == grant.resource)
            {
                Some(held) => held.actions.extend(grant.actions.iter().copied()),
                None => merged.push(grant.clone()),
            }
        }
        merged
            .iter()
            .map(|grant| Bson::Document(grant.to_document()))
            .collect()
    }
}

use ActionType as A;

/// The `read` role's actions.
const READ: &[ActionType] = &[
    A::ChangeStream,
    A::CollStats,
    A::DbHash,
    A::DbStats,
    A::Find,
    A::KillCursors,
    A::ListCollections,
    A::ListIndexes,
];

/// What `readWrite` adds to `read`.
const WRITE: &[ActionType] = &[
    A::ConvertToCapped,
    A::CreateCollection,
    A::CreateIndex,
    A::DropCollection,
    A::DropIndex,
    A::Insert,
    A::Remove,
    A::RenameCollectionSameDb,
    A::Update,
];

/// `dbAdmin`'s actions on the database's ordinary collections.
const DB_ADMIN: &[ActionType] = &[
    A::BypassDocumentValidation,
    A::CollMod,
    A::CollStats,
    A::Compact,
    A::ConvertToCapped,
    A::CreateCollection,
    A::CreateIndex,
    A::DbStats,
    A::DropCollection,
    A::DropDatabase,
    A::DropIndex,
    A::EnableProfiler,
    A::ListCollections,
    A::ListIndexes,
    A::PlanCacheRead,
    A::PlanCacheWrite,
    A::ReIndex,
    A::RenameCollectionSameDb,
    A::Validate,
];

/// `dbAdmin`'s actions on `system.profile`.
const DB_ADMIN_PROFILE: &[ActionType] = &[
    A::ChangeStream,
    A::CollStats,
    A::ConvertToCapped,
    A::CreateCollection,
    A::DbHash,
    A::DbStats,
    A::DropCollection,
    A::Find,
    A::KillCursors,
    A::ListCollections,
    A::ListIndexes,
];

/// `userAdmin`'s actions.
const USER_ADMIN: &[ActionType] = &[
    A::ChangeCustomData,
    A::ChangePassword,
    A::CreateRole,
    A::CreateUser,
    A::DropRole,
    A::DropUser,
    A::GrantRole,
    A::RevokeRole,
    A::ViewRole,
    A::ViewUser,
];

/// `clusterMonitor`'s actions on the cluster.
const CLUSTER_MONITOR: &[ActionType] = &[
    A::ConnPoolStats,
    A::GetCmdLineOpts,
    A::GetLog,
    A::GetParameter,
    A::HostInfo,
    A::Inprog,
    A::ListDatabases,
    A::ListSessions,
    A::Netstat,
    A::ReplSetGetConfig,
    A::ReplSetGetStatus,
    A::ServerStatus,
    A::Top,
];

/// `clusterMonitor`'s actions on every database's collections.
const CLUSTER_MONITOR_ANY: &[ActionType] = &[A::CollStats, A::DbStats, A::IndexStats];

/// `hostManager`'s actions on the cluster.
const HOST_MANAGER: &[ActionType] = &[
    A::Fsync,
    A::InvalidateUserCache,
    A::KillAnyCursor,
    A::KillAnySession,
    A::Killop,
    A::LogRotate,
    A::SetParameter,
    A::Shutdown,
];

/// `clusterManager`'s actions on the cluster (those a one-node server has).
const CLUSTER_MANAGER: &[ActionType] = &[
    A::FlushRouterConfig,
    A::ListSessions,
    A::ReplSetGetConfig,
    A::ReplSetGetStatus,
];

/// The names of the built-in roles, for `rolesInfo` with `showBuiltinRoles`.
pub(crate) const BUILT_IN_ROLES: &[&str] = &[
    "read",
    "readWrite",
    "dbAdmin",
    "dbOwner",
    "userAdmin",
    "clusterMonitor",
    "clusterManager",
    "hostManager",
    "clusterAdmin",
    "readAnyDatabase",
    "readWriteAnyDatabase",
    "userAdminAnyDatabase",
    "dbAdminAnyDatabase",
    "root",
];

/// Roles defined only on `admin`: MongoDB has no `clusterMonitor@shop`.
fn admin_only(role: &str) -> bool {
    matches!(
        role,
        "clusterMonitor"
            | "clusterManager"
            | "hostManager"
            | "clusterAdmin"
            | "readAnyDatabase"
            | "readWriteAnyDatabase"
            | "userAdminAnyDatabase"
            | "dbAdminAnyDatabase"
            | "root"
    )
}

/// Whether `role@db` is a built-in role.
pub(crate) fn is_built_in(role: &str, db: &str) -> bool {
    BUILT_IN_ROLES.contains(&role) && (db == "admin" || !admin_only(role))
}

/// The privileges of built-in role `role@db`, or `None` when it is not one.
pub(crate) fn built_in(role: &str, db: &str) -> Option<Vec<Grant>> {
    if !is_built_in(role, db) {
        return None;
    }
    let database = || ResourcePattern::Database(db.to_owned());
    let with = |first: &[ActionType], second: &[ActionType]| -> Vec<ActionType> {
        first.iter().chain(second).copied().collect()
    };
    let cluster_monitor = || {
        vec![
            Grant::new(ResourcePattern::Cluster, CLUSTER_MONITOR),
            Grant::new(ResourcePattern::AnyNormal, CLUSTER_MONITOR_ANY),
        ]
    };
    let list_databases = || Grant::new(ResourcePattern::Cluster, &[A::ListDatabases]);
    let grants = match role {
        "read" => vec![Grant::new(database(), READ)],
        "readWrite" => vec![Grant::new(database(), &with(READ, WRITE))],
        "dbAdmin" => vec![
            Grant::new(database(), DB_ADMIN),
            Grant::new(
                ResourcePattern::Collection(db.to_owned(), "system.profile".to_owned()),
                DB_ADMIN_PROFILE,
            ),
        ],
        "userAdmin" => vec![Grant::new(database(), USER_ADMIN)],
        "dbOwner" => ["readWrite", "dbAdmin", "userAdmin"]
            .iter()
            .flat_map(|inner| built_in(inner, db).unwrap_or_default())
            .collect(),
        "clusterMonitor" => cluster_monitor(),
        "hostManager" => vec![Grant::new(ResourcePattern::Cluster, HOST_MANAGER)],
        "clusterManager" => vec![Grant::new(ResourcePattern::Cluster, CLUSTER_MANAGER)],
        "clusterAdmin" => {
            let mut grants = cluster_monitor();
            grants.push(Grant::new(ResourcePattern::Cluster, HOST_MANAGER));
            grants.push(Grant::new(ResourcePattern::Cluster, CLUSTER_MANAGER));
            grants.push(Grant::new(ResourcePattern::AnyNormal, &[A::DropDatabase]));
            grants
        }
        "readAnyDatabase" => vec![
            Grant::new(ResourcePattern::AnyNormal, READ),
            list_databases(),
        ],
        "readWriteAnyDatabase" => vec![
            Grant::new(ResourcePattern::AnyNormal, &with(READ, WRITE)),
            list_databases(),
        ],
        "userAdminAnyDatabase" => vec![
            Grant::new(ResourcePattern::AnyNormal, USER_ADMIN),
            Grant::new(
                ResourcePattern::Cluster,
                &[
                    A::InvalidateUserCache,
                    A::ListDatabases,
                    A::ViewUser,
                    A::ViewRole,
                ],
            ),
        ],
        "dbAdminAnyDatabase" => vec![
            Grant::new(ResourcePattern::AnyNormal, DB_ADMIN),
            Grant::new(
                ResourcePattern::CollectionInAnyDatabase("system.profile".to_owned()),
                DB_ADMIN_PROFILE,
            ),
            list_databases(),
        ],
        // MongoDB's root is every other built-in role together; here it may do anything,
        // which is also what a command the privilege map does not know needs.
        "root" => vec![Grant::new(ResourcePattern::AnyResource, &[A::AnyAction])],
        _ => return None,
    };
    Some(grants)
}

/// A role name `{ role, db }`, or a bare name of `default_db`'s role.
pub(crate) fn role_name(value: &Bson, default_db: &str) -> Result<(String, String), String> {
    match value {
        Bson::String(role) => Ok((role.clone(), default_db.to_owned())),
        Bson::Document(spec) => match (spec.get_str("role"), spec.get_str("db")) {
            (Ok(role), Ok(db)) => Ok((role.to_owned(), db.to_owned())),
            _ => Err(format!(
                "a role must be a name or {{ role, db }}, not {spec}"
            )),
        },
        other => Err(format!(
            "a role must be a name or {{ role, db }}, not {other}"
        )),
    }
}

/// The stored user-defined role `role@db`.
pub(crate) fn find_role(database: &Database, role: &str, db: &str) -> Option<Document> {
    database
        .collection::<Document>(ROLES_COLLECTION)
        .find_one(doc! { "_id": format!("{db}.{role}") })
        .run()
        .ok()
        .flatten()
}

/// Whether `role@db` exists, built in or defined.
pub(crate) fn role_exists(database: &Database, role: &str, db: &str) -> bool {
    is_built_in(role, db) || find_role(database, role, db).is_some()
}

/// The roles a stored user or role document lists in `roles`.
pub(crate) fn listed_roles(stored: &Document) -> Vec<(String, String)> {
    stored
        .get_array("roles")
        .map(|roles| {
            roles
                .iter()
                .filter_map(|role| role_name(role, "admin").ok())
                .collect()
        })
        .unwrap_or_default()
}

/// The grants of roles `roles` (built in or defined, with everything they inherit).
pub(crate) fn resolve_roles(database: &Database, roles: &[(String, String)]) -> Grants {
    let mut grants = Grants::default();
    let mut pending: Vec<((String, String), usize)> =
        roles.iter().cloned().map(|role| (role, 0)).collect();
    while let Some(((role, db), depth)) = pending.pop() {
        if depth > MAX_ROLE_DEPTH
            || grants
                .roles
                .iter()
                .any(|(known, known_db)| *known == role && *known_db == db)
        {
            continue;
        }
        if let Some(built_in) = built_in(&role, &db) {
            grants.grants.extend(built_in);
        } else if let Some(stored) = find_role(database, &role, &db) {
            if let Ok(privileges) = stored.get_array("privileges") {
                grants.grants.extend(
                    privileges
                        .iter()
                        .filter_map(|privilege| Grant::parse(privilege).ok()),
                );
            }
            pending.extend(
                listed_roles(&stored)
                    .into_iter()
                    .map(|inherited| (inherited, depth + 1)),
            );
        } else {
            // A role dropped since it was granted grants nothing.
            continue;
        }
        grants.roles.push((role, db));
    }
    grants
}

/// The grants of the authenticated `users` (`(user, db)` pairs), from their stored roles.
pub(crate) fn resolve_users(database: &Database, users: &[(String, String)]) -> Grants {
    let mut roles = Vec::new();
    for (user, db) in users {
        let stored = database
            .collection::<Document>(USERS_COLLECTION)
            .find_one(doc! { "_id": format!("{db}.{user}") })
            .run()
            .ok()
            .flatten();
        if let Some(stored) = stored {
            roles.extend(listed_roles(&stored));
        }
    }
    resolve_roles(database, &roles)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn needs(resource: Resource, actions: &[ActionType]) -> Vec<Privilege> {
        vec![Privilege {
            resource,
            actions: actions.to_vec(),
        }]
    }

    fn grants_of(role: &str, db: &str) -> Grants {
        Grants {
            grants: built_in(role, db).expect("a built-in role"),
            roles: vec![(role.to_owned(), db.to_owned())],
        }
    }

    #[test]
    fn database_roles_stay_in_their_database() {
        let read_write = grants_of("readWrite", "shop");
        assert!(read_write.allow(&needs(Resource::collection("shop", "books"), &[A::Insert])));
        assert!(!read_write.allow(&needs(Resource::collection("other", "books"), &[A::Find])));
        assert!(!read_write.allow(&needs(
            Resource::collection("shop", "system.profile"),
            &[A::Find]
        )));
        assert!(!read_write.allow(&needs(Resource::Database("shop".into()), &[A::CreateUser])));
        let read = grants_of("read", "shop");
        assert!(!read.allow(&needs(Resource::collection("shop", "books"), &[A::Insert])));
        let owner = grants_of("dbOwner", "shop");
        assert!(owner.allow(&needs(
            Resource::Database("shop".into()),
            &[A::CreateUser, A::DropDatabase]
        )));
        assert!(!owner.allow_everything());
        assert!(grants_of("root", "admin").allow_everything());
    }

    #[test]
    fn cluster_roles_exist_only_on_admin() {
        assert!(built_in("clusterMonitor", "shop").is_none());
        let any = grants_of("readAnyDatabase", "admin");
        assert!(any.allow(&needs(Resource::collection("other", "x"), &[A::Find])));
        assert!(any.allow(&needs(Resource::Cluster, &[A::ListDatabases])));
        assert!(!any.allow(&needs(Resource::Cluster, &[A::ServerStatus])));
    }

    #[test]
    fn privilege_documents_round_trip() {
        let privilege = Bson::Document(doc! {
            "resource": { "db": "shop", "collection": "" }, "actions": ["find", "insert"],
        });
        let grant = Grant::parse(&privilege).expect("a valid privilege");
        assert_eq!(Bson::Document(grant.to_document()), privilege);
        let bad = Bson::Document(
            doc! { "resource": { "db": "shop", "collection": "" }, "actions": ["fly"] },
        );
        assert!(
            Grant::parse(&bad)
                .unwrap_err()
                .contains("Unrecognized action")
        );
    }
}
