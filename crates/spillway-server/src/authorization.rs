//! Who may run what under `--auth`: every command an authenticated connection sends is checked
//! against the grants of its users' roles (`roles.rs`) before it runs, and refused with
//! MongoDB's 13 Unauthorized (`not authorized on <db> to execute command { ... }`) when they
//! do not cover what it needs.
//!
//! What a command needs comes from the command layer for its commands
//! (`Executor::required_privileges`, MongoDB's action types on a cluster, database or
//! collection) and from here for the server's own: the handshake and session commands are
//! open, `serverStatus` and the other process commands need their cluster actions, the user
//! and role commands `createUser`, `grantRole`, `viewUser`... on the databases they touch. A
//! command neither knows is allowed only to a role that may do anything (`root`).
//!
//! This module decides; `connection.rs` asks it and acts. It must never run a command.

use std::sync::Arc;

use bson::{Bson, Document, doc};
use spillway::Database;
use spillway::command::{ActionType, Privilege, Resource, unauthorized_message};

use crate::auth::AuthState;
use crate::executor::Executor;
use crate::roles::{self, Grants};

/// Server commands any authenticated connection may run.
const OPEN_TO_USERS: &[&str] = &[
    "hello",
    "isMaster",
    "ismaster",
    "ping",
    "buildInfo",
    "buildinfo",
    "saslStart",
    "saslContinue",
    "logout",
    "connectionStatus",
    "whatsmyuri",
    "listCommands",
];

/// Whether the connection's grants were resolved before the last change to users or roles.
pub(crate) fn stale(auth: &AuthState) -> bool {
    auth.grants
        .as_ref()
        .is_none_or(|(generation, _)| *generation != roles::generation())
}

/// Resolves the grants of `users` (reads the stored users and roles: call it where blocking is
/// allowed), tagged with the generation they were read at.
pub(crate) fn resolve(database: &Database, users: &[(String, String)]) -> (u64, Arc<Grants>) {
    let generation = roles::generation();
    (generation, Arc::new(roles::resolve_users(database, users)))
}

/// `None` when the connection may run `command`; otherwise MongoDB's refusal.
pub(crate) fn decide(
    executor: &dyn Executor,
    command: &Document,
    auth: &AuthState,
) -> Option<Document> {
    let empty = Grants::default();
    let grants = auth.grants.as_ref().map_or(&empty, |(_, grants)| grants);
    let name = command
        .keys()
        .next()
        .map(String::as_str)
        .unwrap_or_default();
    let needs = match server_needs(name, command, auth) {
        Some(needs) => Some(needs),
        None => executor.required_privileges(command),
    };
    let allowed = match needs {
        Some(needs) => grants.allow(&needs),
        None => grants.allow_everything(),
    };
    if allowed || lists_own_databases(command, grants) {
        return None;
    }
    let database = command.get_str("$db").unwrap_or("admin");
    Some(doc! {
        "ok": 0.0,
        "errmsg": unauthorized_message(database, command),
        "code": 13,
        "codeName": "Unauthorized",
    })
}

/// `listDatabases` without the `listDatabases` action: MongoDB answers it with the databases
/// the user has privileges on (`authorizedDatabases`, true unless said false), which
/// [`filter_databases`] keeps.
fn lists_own_databases(command: &Document, grants: &Grants) -> bool {
    command.keys().next().map(String::as_str) == Some("listDatabases")
        && command.get_bool("authorizedDatabases").unwrap_or(true)
        && !grants.allow(&[Privilege {
            resource: Resource::Cluster,
            actions: vec![ActionType::ListDatabases],
        }])
}

/// Keeps, in a `listDatabases` reply, the databases the connection may see: all with the
/// `listDatabases` action, else those its grants name (MongoDB's `authorizedDatabases`).
pub(crate) fn filter_databases(command: &Document, auth: &AuthState, reply: &mut Document) {
    let empty = Grants::default();
    let grants = auth.grants.as_ref().map_or(&empty, |(_, grants)| grants);
    if !lists_own_databases(command, grants) {
        return;
    }
    if let Ok(databases) = reply.get_array_mut("databases") {
        databases.retain(|entry| {
            entry
                .as_document()
                .and_then(|entry| entry.get_str("name").ok())
                .is_some_and(|name| grants.any_on_database(name))
        });
    }
    // The sizes of databases it may not see are not its to know either.
    reply.remove("totalSize");
    reply.remove("totalSizeMb");
}

/// What a server-level command needs, or `None` when it is the command layer's (or unknown).
fn server_needs(name: &str, command: &Document, auth: &AuthState) -> Option<Vec<Privilege>> {
    use ActionType as A;
    let db = command.get_str("$db").unwrap_or("admin").to_owned();
    let on_cluster = |action: ActionType| {
        Some(vec![Privilege {
            resource: Resource::Cluster,
            actions: vec![action],
        }])
    };
    let on_db = |database: &str, actions: &[ActionType]| Privilege {
        resource: Resource::Database(database.to_owned()),
        actions: actions.to_vec(),
    };
    // The databases of the roles a user or role command names (`grantRole` is needed there).
    let role_dbs = |field: &str| -> Vec<String> {
        let mut dbs: Vec<String> = command
            .get_array(field)
            .map(|roles| {
                roles
                    .iter()
                    .filter_map(|role| roles::role_name(role, &db).ok())
                    .map(|(_, role_db)| role_db)
                    .collect()
            })
            .unwrap_or_default();
        dbs.sort();
        dbs.dedup();
        dbs
    };
    let with_roles = |own: ActionType, role_action: ActionType| {
        let mut needs = vec![on_db(&db, &[own])];
        needs.extend(
            role_dbs("roles")
                .iter()
                .map(|role_db| on_db(role_db, &[role_action])),
        );
        Some(needs)
    };
    match name {
        _ if OPEN_TO_USERS.contains(&name) => Some(Vec::new()),
        "serverStatus" => on_cluster(A::ServerStatus),
        "hostInfo" => on_cluster(A::HostInfo),
        "getCmdLineOpts" => on_cluster(A::GetCmdLineOpts),
        "getLog" => on_cluster(A::GetLog),
        "getParameter" => on_cluster(A::GetParameter),
        "replSetGetStatus" => on_cluster(A::ReplSetGetStatus),
        "replSetGetConfig" => on_cluster(A::ReplSetGetConfig),
        // A test facility: only a role that may do anything.
        "configureFailPoint" => on_cluster(A::AnyAction),
        "createUser" => with_roles(A::CreateUser, A::GrantRole),
        "createRole" => with_roles(A::CreateRole, A::GrantRole),
        "updateUser" => {
            let mut actions = Vec::new();
            if command.contains_key("pwd") {
                actions.push(A::ChangePassword);
            }
            if command.contains_key("customData") {
                actions.push(A::ChangeCustomData);
            }
            let mut needs = vec![on_db(&db, &actions)];
            needs.extend(
                role_dbs("roles")
                    .iter()
                    .map(|role_db| on_db(role_db, &[A::GrantRole, A::RevokeRole])),
            );
            if command.contains_key("roles") {
                needs.push(on_db(&db, &[A::RevokeRole]));
            }
            Some(needs)
        }
        "updateRole" | "grantPrivilegesToRole" | "revokePrivilegesFromRole" => Some(vec![on_db(
            &db,
            &[A::CreateRole, A::DropRole, A::GrantRole, A::RevokeRole],
        )]),
        "dropUser" | "dropAllUsersFromDatabase" => Some(vec![on_db(&db, &[A::DropUser])]),
        "dropRole" | "dropAllRolesFromDatabase" => Some(vec![on_db(&db, &[A::DropRole])]),
        "grantRolesToUser" | "grantRolesToRole" => Some(
            role_dbs("roles")
                .iter()
                .map(|role_db| on_db(role_db, &[A::GrantRole]))
                .collect(),
        ),
        "revokeRolesFromUser" | "revokeRolesFromRole" => Some(
            role_dbs("roles")
                .iter()
                .map(|role_db| on_db(role_db, &[A::RevokeRole]))
                .collect(),
        ),
        "usersInfo" => Some(users_info_needs(command, &db, auth)),
        "rolesInfo" => Some(roles_info_needs(command, &db, auth)),
        _ => None,
    }
}

/// `usersInfo` needs `viewUser` on the database of each user it names, except a user asking
/// about itself; `forAllDBs` needs it on the cluster.
fn users_info_needs(command: &Document, db: &str, auth: &AuthState) -> Vec<Privilege> {
    let value = command.get("usersInfo");
    let for_all = command.get_bool("forAllDBs").unwrap_or(false)
        || matches!(value, Some(Bson::Document(spec)) if spec.get_bool("forAllDBs").unwrap_or(false));
    if for_all {
        return vec![Privilege {
            resource: Resource::Cluster,
            actions: vec![ActionType::ViewUser],
        }];
    }
    let named = |value: &Bson| -> Option<(String, String)> {
        match value {
            Bson::String(user) => Some((user.clone(), db.to_owned())),
            Bson::Document(spec) => Some((
                spec.get_str("user").ok()?.to_owned(),
                spec.get_str("db").ok()?.to_owned(),
            )),
            _ => None,
        }
    };
    let users: Vec<Option<(String, String)>> = match value {
        Some(Bson::Array(values)) => values.iter().map(named).collect(),
        Some(value @ (Bson::String(_) | Bson::Document(_))) => vec![named(value)],
        _ => vec![None],
    };
    let mut needs = Vec::new();
    for user in users {
        match user {
            Some(user) if auth.users.contains(&user) => {}
            Some((_, user_db)) => needs.push(Privilege {
                resource: Resource::Database(user_db),
                actions: vec![ActionType::ViewUser],
            }),
            None => needs.push(Privilege {
                resource: Resource::Database(db.to_owned()),
                actions: vec![ActionType::ViewUser],
            }),
        }
    }
    needs
}

/// `rolesInfo` needs `viewRole` on the database of each role it names, except a role the
/// connection's users hold.
fn roles_info_needs(command: &Document, db: &str, auth: &AuthState) -> Vec<Privilege> {
    let held = auth
        .grants
        .as_ref()
        .map(|(_, grants)| grants.roles.clone())
        .unwrap_or_default();
    let named = |value: &Bson| roles::role_name(value, db).ok();
    let requested: Vec<Option<(String, String)>> = match command.get("rolesInfo") {
        Some(Bson::Array(values)) => values.iter().map(named).collect(),
        Some(value @ (Bson::String(_) | Bson::Document(_))) => vec![named(value)],
        _ => vec![None],
    };
    let mut needs = Vec::new();
    for role in requested {
        match role {
            Some(role) if held.contains(&role) => {}
            Some((_, role_db)) => needs.push(Privilege {
                resource: Resource::Database(role_db),
                actions: vec![ActionType::ViewRole],
            }),
            None => needs.push(Privilege {
                resource: Resource::Database(db.to_owned()),
                actions: vec![ActionType::ViewRole],
            }),
        }
    }
    needs
}
