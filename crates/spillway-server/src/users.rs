//! MongoDB's user and role management commands: `createUser`, `updateUser`, `dropUser`,
//! `dropAllUsersFromDatabase`, `grantRolesToUser`, `revokeRolesFromUser`, `usersInfo`,
//! `createRole`, `updateRole`, `dropRole`, `dropAllRolesFromDatabase`, `rolesInfo`,
//! `grantRolesToRole`, `revokeRolesFromRole`, `grantPrivilegesToRole`,
//! `revokePrivilegesFromRole`.
//!
//! Users are stored in `admin.system.users` (`_id: "db.user"`, salted credentials per
//! mechanism, never a password), roles in `admin.system.roles` (`_id: "db.role"`, privileges
//! and inherited roles). Every change tells `roles.rs`, so that connections resolve their
//! grants again. Who may run these commands is `authorization.rs`'s decision, made before.

use bson::{Binary, Bson, Document, doc};
use spillway::Database;

use crate::auth::{self, Mechanism, USERS_COLLECTION, failure};
use crate::roles::{self, BUILT_IN_ROLES, Grant, ROLES_COLLECTION};

/// The commands this module answers.
pub(crate) const USER_COMMANDS: &[&str] = &[
    "createUser",
    "updateUser",
    "dropUser",
    "dropAllUsersFromDatabase",
    "grantRolesToUser",
    "revokeRolesFromUser",
    "usersInfo",
    "createRole",
    "updateRole",
    "dropRole",
    "dropAllRolesFromDatabase",
    "rolesInfo",
    "grantRolesToRole",
    "revokeRolesFromRole",
    "grantPrivilegesToRole",
    "revokePrivilegesFromRole",
];

/// Answers user or role command `name`.
pub(crate) fn answer(database: &Database, name: &str, command: &Document) -> Document {
    let db = command.get_str("$db").unwrap_or("admin");
    let result = match name {
        "createUser" => create_user(database, db, command),
        "updateUser" => update_user(database, db, command),
        "dropUser" => drop_user(database, db, command),
        "dropAllUsersFromDatabase" => drop_all(database, USERS_COLLECTION, db),
        "grantRolesToUser" => change_roles(database, USERS_COLLECTION, db, command, true),
        "revokeRolesFromUser" => change_roles(database, USERS_COLLECTION, db, command, false),
        "usersInfo" => users_info(database, db, command),
        "createRole" => create_role(database, db, command),
        "updateRole" => update_role(database, db, command),
        "dropRole" => drop_role(database, db, command),
        "dropAllRolesFromDatabase" => drop_all(database, ROLES_COLLECTION, db),
        "rolesInfo" => roles_info(database, db, command),
        "grantRolesToRole" => change_roles(database, ROLES_COLLECTION, db, command, true),
        "revokeRolesFromRole" => change_roles(database, ROLES_COLLECTION, db, command, false),
        "grantPrivilegesToRole" => change_privileges(database, db, command, true),
        "revokePrivilegesFromRole" => change_privileges(database, db, command, false),
        _ => Err(failure(
            59,
            "CommandNotFound",
            format!("no such command: '{name}'"),
        )),
    };
    result.unwrap_or_else(|error| error)
}

type Reply = Result<Document, Document>;

fn bad_value(message: impl Into<String>) -> Document {
    failure(2, "BadValue", message)
}

fn internal(what: &str, error: &spillway::Error) -> Document {
    failure(1, "InternalError", format!("{what}: {error}"))
}

fn role_not_found(role: &str, db: &str) -> Document {
    failure(
        31,
        "RoleNotFound",
        format!("Could not find role: {role}@{db}"),
    )
}

fn user_not_found(user: &str, db: &str) -> Document {
    failure(
        11,
        "UserNotFound",
        format!("Could not find user \"{user}\" for db \"{db}\""),
    )
}

/// The command's own value as a name (`{ createUser: "ann" }`).
fn own_name<'a>(command: &'a Document, name: &str) -> Result<&'a str, Document> {
    match command.get_str(name) {
        Ok(value) if !value.is_empty() => Ok(value),
        Ok(_) => Err(bad_value(format!("{name}: the name must not be empty"))),
        Err(_) => Err(bad_value(format!("{name} needs a name (a string)"))),
    }
}

/// The `roles` field: names of `db`'s roles or `{ role, db }`, each of which must exist.
fn roles_argument(
    database: &Database,
    db: &str,
    command: &Document,
    field: &str,
) -> Result<Option<Vec<(String, String)>>, Document> {
    let Some(value) = command.get(field) else {
        return Ok(None);
    };
    let Bson::Array(values) = value else {
        return Err(bad_value(format!("'{field}' must be an array of roles")));
    };
    let mut roles = Vec::new();
    for value in values {
        let (role, role_db) = roles::role_name(value, db).map_err(bad_value)?;
        if !roles::role_exists(database, &role, &role_db) {
            return Err(role_not_found(&role, &role_db));
        }
        if !roles.contains(&(role.clone(), role_db.clone())) {
            roles.push((role, role_db));
        }
    }
    Ok(Some(roles))
}

fn roles_value(roles: &[(String, String)]) -> Bson {
    Bson::Array(
        roles
            .iter()
            .map(|(role, db)| Bson::Document(doc! { "role": role, "db": db }))
            .collect(),
    )
}

/// The `mechanisms` field: both SCRAM mechanisms unless it names fewer.
fn mechanisms_argument(command: &Document) -> Result<Vec<Mechanism>, Document> {
    let Some(value) = command.get("mechanisms") else {
        return Ok(Mechanism::ALL.to_vec());
    };
    let Bson::Array(names) = value else {
        return Err(bad_value(
            "'mechanisms' must be an array of mechanism names",
        ));
    };
    if names.is_empty() {
        return Err(bad_value("mechanisms field must not be empty"));
    }
    names
        .iter()
        .map(|name| {
            name.as_str().and_then(Mechanism::parse).ok_or_else(|| {
                bad_value(format!(
                    "Unknown auth mechanism '{name}' (SCRAM-SHA-1 and SCRAM-SHA-256 are supported)"
                ))
            })
        })
        .collect()
}

fn password_argument(command: &Document) -> Result<Option<&str>, Document> {
    match command.get("pwd") {
        None => Ok(None),
        Some(Bson::String(password)) if password.is_empty() => {
            Err(bad_value("Password must not be empty"))
        }
        Some(Bson::String(password)) => Ok(Some(password)),
        Some(_) => Err(bad_value("'pwd' must be a string")),
    }
}

fn check_digest_password(command: &Document) -> Result<(), Document> {
    // A driver's own digest would be MD5 of the password: the server always digests itself.
    if command
        .get_bool("digestPassword")
        .is_ok_and(|digest| !digest)
    {
        return Err(bad_value(
            "digestPassword: false is not supported: the server digests the password itself",
        ));
    }
    Ok(())
}

fn create_user(database: &Database, db: &str, command: &Document) -> Reply {
    let user = own_name(command, "createUser")?;
    check_digest_password(command)?;
    let Some(password) = password_argument(command)? else {
        return Err(bad_value(
            "Must provide a 'pwd' field for all user documents, except those with '$external' as the user's source db",
        ));
    };
    let mechanisms = mechanisms_argument(command)?;
    let roles = roles_argument(database, db, command, "roles")?
        .ok_or_else(|| bad_value("\"createUser\" command requires a \"roles\" array"))?;
    let credentials = auth::credentials(user, password, &mechanisms).map_err(bad_value)?;
    let mut record = doc! {
        "_id": format!("{db}.{user}"),
        "userId": Bson::Binary(Binary::from_uuid(bson::Uuid::new())),
        "user": user,
        "db": db,
        "credentials": credentials,
        "roles": roles_value(&roles),
    };
    if let Some(custom) = command.get("customData") {
        let Bson::Document(custom) = custom else {
            return Err(bad_value("'customData' must be a document"));
        };
        record.insert("customData", custom.clone());
    }
    match database
        .collection::<Document>(USERS_COLLECTION)
        .insert_one(record)
        .run()
    {
        Ok(_) => {
            roles::changed();
            Ok(doc! { "ok": 1.0 })
        }
        Err(error) if error.is_duplicate_key() => Err(failure(
            51003,
            "Location51003",
            format!("User \"{user}@{db}\" already exists"),
        )),
        Err(error) => Err(internal("cannot store the user", &error)),
    }
}

fn update_user(database: &Database, db: &str, command: &Document) -> Reply {
    let user = own_name(command, "updateUser")?;
    check_digest_password(command)?;
    let stored = auth::find_user(database, db, user).ok_or_else(|| user_not_found(user, db))?;
    let mut set = Document::new();
    let password = password_argument(command)?;
    if command.contains_key("mechanisms") && password.is_none() {
        return Err(bad_value(
            "mechanisms field can only be specified with a new password",
        ));
    }
    if let Some(password) = password {
        let mechanisms = mechanisms_argument(command)?;
        set.insert(
            "credentials",
            auth::credentials(user, password, &mechanisms).map_err(bad_value)?,
        );
    }
    if let Some(custom) = command.get("customData") {
        let Bson::Document(custom) = custom else {
            return Err(bad_value("'customData' must be a document"));
        };
        set.insert("customData", custom.clone());
    }
    if let Some(roles) = roles_argument(database, db, command, "roles")? {
        set.insert("roles", roles_value(&roles));
    }
    if set.is_empty() {
        return Err(bad_value(
            "Must specify at least one field to update in updateUser",
        ));
    }
    database
        .collection::<Document>(USERS_COLLECTION)
        .update_one(
            doc! { "_id": stored.get("_id").cloned().unwrap_or(Bson::Null) },
            doc! { "$set": set },
        )
        .run()
        .map_err(|error| internal("cannot update the user", &error))?;
    roles::changed();
    Ok(doc! { "ok": 1.0 })
}

fn drop_user(database: &Database, db: &str, command: &Document) -> Reply {
    let user = own_name(command, "dropUser")?;
    let result = database
        .collection::<Document>(USERS_COLLECTION)
        .delete_one(doc! { "_id": format!("{db}.{user}") })
        .run()
        .map_err(|error| internal("cannot drop the user", &error))?;
    if result.deleted_count == 0 {
        return Err(failure(
            11,
            "UserNotFound",
            format!("User '{user}@{db}' not found"),
        ));
    }
    roles::changed();
    Ok(doc! { "ok": 1.0 })
}

/// `dropAllUsersFromDatabase` and `dropAllRolesFromDatabase`: `n`, how many went.
fn drop_all(database: &Database, collection: &str, db: &str) -> Reply {
    let result = database
        .collection::<Document>(collection)
        .delete_many(doc! { "db": db })
        .run()
        .map_err(|error| internal("cannot drop them", &error))?;
    roles::changed();
    Ok(doc! { "n": result.deleted_count as i64, "ok": 1.0 })
}

/// `grantRolesTo*` (`grant`) and `revokeRolesFrom*` on a user or a role.
fn change_roles(
    database: &Database,
    collection: &str,
    db: &str,
    command: &Document,
    grant: bool,
) -> Reply {
    let (name, _) = command.iter().next().expect("a command has a name");
    let target = own_name(command, name)?;
    let id = format!("{db}.{target}");
    let stored = database
        .collection::<Document>(collection)
        .find_one(doc! { "_id": &id })
        .run()
        .map_err(|error| internal("cannot read it", &error))?;
    let Some(stored) = stored else {
        return Err(if collection == USERS_COLLECTION {
            user_not_found(target, db)
        } else {
            role_not_found(target, db)
        });
    };
    let changed = roles_argument(database, db, command, "roles")?
        .ok_or_else(|| bad_value(format!("{name} needs a roles array")))?;
    let mut held = roles::listed_roles(&stored);
    if grant {
        if collection == ROLES_COLLECTION {
            check_no_cycle(database, (target, db), &changed)?;
        }
        for role in changed {
            if !held.contains(&role) {
                held.push(role);
            }
        }
    } else {
        held.retain(|role| !changed.contains(role));
    }
    database
        .collection::<Document>(collection)
        .update_one(
            doc! { "_id": &id },
            doc! { "$set": { "roles": roles_value(&held) } },
        )
        .run()
        .map_err(|error| internal("cannot store the roles", &error))?;
    roles::changed();
    Ok(doc! { "ok": 1.0 })
}

/// Refuses to make `role` inherit `granted` when one of them already inherits `role`.
fn check_no_cycle(
    database: &Database,
    (role, db): (&str, &str),
    granted: &[(String, String)],
) -> Result<(), Document> {
    let inherited = roles::resolve_roles(database, granted);
    if inherited
        .roles
        .iter()
        .any(|(name, name_db)| name == role && name_db == db)
    {
        return Err(failure(
            17,
            "InvalidRoleModification",
            format!("Granting roles to {role}@{db} would introduce a cycle in the role graph"),
        ));
    }
    Ok(())
}

/// The `privileges` field of a role of `db`: a role outside `admin` may only hold privileges
/// on its own database, as MongoDB requires.
fn privileges_argument(db: &str, command: &Document) -> Result<Option<Vec<Grant>>, Document> {
    let Some(value) = command.get("privileges") else {
        return Ok(None);
    };
    let Bson::Array(values) = value else {
        return Err(bad_value("'privileges' must be an array"));
    };
    let grants = values
        .iter()
        .map(Grant::parse)
        .collect::<Result<Vec<_>, String>>()
        .map_err(bad_value)?;
    if db != "admin" {
        for grant in &grants {
            let own = match &grant.resource {
                roles::ResourcePattern::Database(grant_db)
                | roles::ResourcePattern::Collection(grant_db, _) => grant_db == db,
                _ => false,
            };
            if !own {
                return Err(bad_value(format!(
                    "Roles on the '{db}' database cannot be granted privileges that target other databases or the cluster: {}",
                    grant.to_document()
                )));
            }
        }
    }
    Ok(Some(grants))
}

fn grants_value(grants: &[Grant]) -> Bson {
    Bson::Array(
        grants
            .iter()
            .map(|grant| Bson::Document(grant.to_document()))
            .collect(),
    )
}

fn create_role(database: &Database, db: &str, command: &Document) -> Reply {
    let role = own_name(command, "createRole")?;
    if BUILT_IN_ROLES.contains(&role) || role.starts_with("__") {
        return Err(bad_value(format!(
            "Cannot create roles with the same name as a built-in role: {role}"
        )));
    }
    let privileges = privileges_argument(db, command)?
        .ok_or_else(|| bad_value("\"createRole\" command requires a \"privileges\" array"))?;
    let inherited = roles_argument(database, db, command, "roles")?
        .ok_or_else(|| bad_value("\"createRole\" command requires a \"roles\" array"))?;
    if db != "admin" && inherited.iter().any(|(_, role_db)| role_db != db) {
        return Err(bad_value(format!(
            "Roles on the '{db}' database cannot inherit from roles on other databases"
        )));
    }
    let record = doc! {
        "_id": format!("{db}.{role}"),
        "role": role,
        "db": db,
        "privileges": grants_value(&privileges),
        "roles": roles_value(&inherited),
    };
    match database
        .collection::<Document>(ROLES_COLLECTION)
        .insert_one(record)
        .run()
    {
        Ok(_) => {
            roles::changed();
            Ok(doc! { "ok": 1.0 })
        }
        Err(error) if error.is_duplicate_key() => Err(failure(
            51002,
            "Location51002",
            format!("Role \"{role}@{db}\" already exists"),
        )),
        Err(error) => Err(internal("cannot store the role", &error)),
    }
}

fn update_role(database: &Database, db: &str, command: &Document) -> Reply {
    let role = own_name(command, "updateRole")?;
    if roles::find_role(database, role, db).is_none() {
        return Err(role_not_found(role, db));
    }
    let mut set = Document::new();
    if let Some(privileges) = privileges_argument(db, command)? {
        set.insert("privileges", grants_value(&privileges));
    }
    if let Some(inherited) = roles_argument(database, db, command, "roles")? {
        check_no_cycle(database, (role, db), &inherited)?;
        set.insert("roles", roles_value(&inherited));
    }
    if set.is_empty() {
        return Err(bad_value(
            "Must specify at least one field to update in updateRole",
        ));
    }
    database
        .collection::<Document>(ROLES_COLLECTION)
        .update_one(doc! { "_id": format!("{db}.{role}") }, doc! { "$set": set })
        .run()
        .map_err(|error| internal("cannot update the role", &error))?;
    roles::changed();
    Ok(doc! { "ok": 1.0 })
}

fn change_privileges(database: &Database, db: &str, command: &Document, grant: bool) -> Reply {
    let (name, _) = command.iter().next().expect("a command has a name");
    let role = own_name(command, name)?;
    let stored = roles::find_role(database, role, db).ok_or_else(|| role_not_found(role, db))?;
    let changed = privileges_argument(db, command)?
        .ok_or_else(|| bad_value(format!("{name} needs a privileges array")))?;
    let mut held: Vec<Grant> = stored
        .get_array("privileges")
        .map(|privileges| {
            privileges
                .iter()
                .filter_map(|p| Grant::parse(p).ok())
                .collect()
        })
        .unwrap_or_default();
    for change in changed {
        match held
            .iter_mut()
            .find(|held| held.resource == change.resource)
        {
            Some(held) if grant => held.actions.extend(change.actions),
            Some(held) => held
                .actions
                .retain(|action| !change.actions.contains(action)),
            None if grant => held.push(change),
            None => {}
        }
    }
    held.retain(|grant| !grant.actions.is_empty());
    database
        .collection::<Document>(ROLES_COLLECTION)
        .update_one(
            doc! { "_id": format!("{db}.{role}") },
            doc! { "$set": { "privileges": grants_value(&held) } },
        )
        .run()
        .map_err(|error| internal("cannot store the privileges", &error))?;
    roles::changed();
    Ok(doc! { "ok": 1.0 })
}

fn drop_role(database: &Database, db: &str, command: &Document) -> Reply {
    let role = own_name(command, "dropRole")?;
    let result = database
        .collection::<Document>(ROLES_COLLECTION)
        .delete_one(doc! { "_id": format!("{db}.{role}") })
        .run()
        .map_err(|error| internal("cannot drop the role", &error))?;
    if result.deleted_count == 0 {
        return Err(role_not_found(role, db));
    }
    // Users and roles that held it hold it no more, as in MongoDB.
    let held = doc! { "roles": { "role": role, "db": db } };
    for collection in [USERS_COLLECTION, ROLES_COLLECTION] {
        database
            .collection::<Document>(collection)
            .update_many(doc! {}, doc! { "$pull": held.clone() })
            .run()
            .map_err(|error| internal("cannot revoke the dropped role", &error))?;
    }
    roles::changed();
    Ok(doc! { "ok": 1.0 })
}

/// The user or role names a `usersInfo` / `rolesInfo` value asks for, as `_id`s, or `None`
/// for every one of the database (`1`).
fn requested_ids(
    value: &Bson,
    db: &str,
    name_field: &str,
) -> Result<Option<Vec<String>>, Document> {
    let one = |value: &Bson| -> Result<String, Document> {
        match value {
            Bson::String(name) => Ok(format!("{db}.{name}")),
            Bson::Document(spec) => match (spec.get_str(name_field), spec.get_str("db")) {
                (Ok(name), Ok(name_db)) => Ok(format!("{name_db}.{name}")),
                _ => Err(bad_value(format!(
                    "a {name_field} document needs {name_field} and db: {spec}"
                ))),
            },
            other => Err(bad_value(format!(
                "expected a name or {{ {name_field}, db }}, not {other}"
            ))),
        }
    };
    match value {
        Bson::Int32(_) | Bson::Int64(_) | Bson::Double(_) => Ok(None),
        Bson::Array(values) => values.iter().map(one).collect::<Result<_, _>>().map(Some),
        other => one(other).map(|id| Some(vec![id])),
    }
}

/// `usersInfo`: `1` (every user of the database), a name, `{ user, db }`, a list of those, or
/// `{ forAllDBs: true }`; `showPrivileges` adds the inherited roles and privileges. Credentials
/// are never shown.
fn users_info(database: &Database, db: &str, command: &Document) -> Reply {
    let value = command
        .get("usersInfo")
        .ok_or_else(|| bad_value("usersInfo needs a value"))?;
    let for_all = command.get_bool("forAllDBs").unwrap_or(false)
        || matches!(value, Bson::Document(spec) if spec.get_bool("forAllDBs").unwrap_or(false));
    let filter = if for_all {
        doc! {}
    } else {
        match requested_ids(value, db, "user")? {
            None => doc! { "db": db },
            Some(ids) => doc! { "_id": { "$in": ids } },
        }
    };
    let show_privileges = command.get_bool("showPrivileges").unwrap_or(false);
    let cursor = database
        .collection::<Document>(USERS_COLLECTION)
        .find(filter)
        .sort(doc! { "_id": 1 })
        .run()
        .map_err(|error| internal("cannot read users", &error))?;
    let mut users = Vec::new();
    for stored in cursor {
        let Ok(mut stored) = stored else { continue };
        let mechanisms = auth::mechanisms_of(&stored);
        stored.remove("credentials");
        stored.insert("mechanisms", mechanisms);
        if show_privileges {
            let grants = roles::resolve_roles(database, &roles::listed_roles(&stored));
            let inherited: Vec<(String, String)> = grants.roles.clone();
            stored.insert("inheritedRoles", roles_value(&inherited));
            stored.insert("inheritedPrivileges", grants.to_documents());
        }
        users.push(Bson::Document(stored));
    }
    Ok(doc! { "users": users, "ok": 1.0 })
}

/// `rolesInfo`: `1` (the database's defined roles, and its built-in ones with
/// `showBuiltinRoles`), a name, `{ role, db }` or a list; `showPrivileges` adds privileges.
fn roles_info(database: &Database, db: &str, command: &Document) -> Reply {
    let value = command
        .get("rolesInfo")
        .ok_or_else(|| bad_value("rolesInfo needs a value"))?;
    let show_privileges = command.get_bool("showPrivileges").unwrap_or(false);
    let show_built_in = command.get_bool("showBuiltinRoles").unwrap_or(false);
    let names: Vec<(String, String)> = match requested_ids(value, db, "role")? {
        None => {
            let mut names: Vec<(String, String)> = Vec::new();
            if show_built_in {
                names.extend(
                    BUILT_IN_ROLES
                        .iter()
                        .filter(|role| roles::is_built_in(role, db))
                        .map(|role| ((*role).to_owned(), db.to_owned())),
                );
            }
            let cursor = database
                .collection::<Document>(ROLES_COLLECTION)
                .find(doc! { "db": db })
                .sort(doc! { "_id": 1 })
                .run()
                .map_err(|error| internal("cannot read roles", &error))?;
            names.extend(cursor.filter_map(Result::ok).filter_map(|stored| {
                Some((stored.get_str("role").ok()?.to_owned(), db.to_owned()))
            }));
            names
        }
        Some(ids) => ids
            .iter()
            .filter_map(|id| id.split_once('.'))
            .map(|(role_db, role)| (role.to_owned(), role_db.to_owned()))
            .collect(),
    };
    let mut described = Vec::new();
    for (role, role_db) in names {
        let built_in = roles::is_built_in(&role, &role_db);
        let stored = if built_in {
            None
        } else {
            match roles::find_role(database, &role, &role_db) {
                Some(stored) => Some(stored),
                // An unknown role is left out of the answer, as MongoDB leaves it out.
                None => continue,
            }
        };
        let direct = stored.as_ref().map(roles::listed_roles).unwrap_or_default();
        let grants = roles::resolve_roles(database, &[(role.clone(), role_db.clone())]);
        let inherited: Vec<(String, String)> = grants
            .roles
            .iter()
            .filter(|(name, name_db)| !(*name == role && *name_db == role_db))
            .cloned()
            .collect();
        let mut entry = doc! {
            "_id": format!("{role_db}.{role}"),
            "role": &role,
            "db": &role_db,
            "isBuiltin": built_in,
            "roles": roles_value(&direct),
            "inheritedRoles": roles_value(&inherited),
        };
        if show_privileges {
            let own = match &stored {
                Some(stored) => stored
                    .get("privileges")
                    .cloned()
                    .unwrap_or(Bson::Array(Vec::new())),
                None => Bson::Array(grants.to_documents()),
            };
            entry.insert("privileges", own);
            entry.insert("inheritedPrivileges", grants.to_documents());
        }
        described.push(Bson::Document(entry));
    }
    Ok(doc! { "roles": described, "ok": 1.0 })
}
