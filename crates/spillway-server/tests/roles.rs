//! Roles under `--auth`, with the official Rust driver: every built-in role against every
//! command family (read, write, index DDL, collection DDL, user admin, cluster monitor,
//! pattern commands), on the role's own database and another one, allowed or refused with 13
//! Unauthorized; user-defined roles; grants that change while a connection is open; SCRAM-SHA-1
//! and the codes of authentication errors.

use crate::common;

use std::sync::atomic::{AtomicUsize, Ordering};

use bson::{Binary, Document, doc, spec::BinarySubtype};
use mongodb::Client;
use mongodb::error::ErrorKind;
use mongodb::options::{AuthMechanism, ClientOptions, Credential};
use spillway::Database;
use spillway::command::Commands;
use spillway_server::ServerOptions;

const ROOT: (&str, &str) = ("root_user", "root-Passw0rd");
const PASSWORD: &str = "role-Passw0rd";

async fn client(
    address: std::net::SocketAddr,
    credentials: Option<(&str, &str)>,
    mechanism: Option<AuthMechanism>,
) -> Client {
    let uri = format!("mongodb://{address}/?serverSelectionTimeoutMS=5000");
    let mut options = ClientOptions::parse(uri).await.unwrap();
    if let Some((user, password)) = credentials {
        options.credential = Some(
            Credential::builder()
                .username(user.to_owned())
                .password(password.to_owned())
                .source("admin".to_owned())
                .mechanism(mechanism)
                .build(),
        );
    }
    Client::with_options(options).unwrap()
}

fn code(error: &mongodb::error::Error) -> Option<i32> {
    match *error.kind {
        ErrorKind::Command(ref command) => Some(command.code),
        _ => None,
    }
}

/// The seed: in `shop` and `other`, `books` with a document and `sales` with an outlier
/// policy spilling into `extra_sales`.
async fn seed(root: &Client) {
    for db in ["shop", "other"] {
        let database = root.database(db);
        database
            .run_command(doc! { "insert": "books", "documents": [{ "_id": 1, "title": "Dune" }] })
            .await
            .unwrap();
        database
            .run_command(
                doc! { "insert": "sales", "documents": [{ "_id": 1, "buyers": ["a", "b", "c"] }] },
            )
            .await
            .unwrap();
        database
            .run_command(doc! {
                "setPattern": "sales", "outlier": "buyers", "threshold": 1,
                "overflowCollection": "extra_sales", "linkField": "sale_id",
            })
            .await
            .unwrap();
    }
}

static UNIQUE: AtomicUsize = AtomicUsize::new(0);

fn unique(prefix: &str) -> String {
    format!("{prefix}{}", UNIQUE.fetch_add(1, Ordering::Relaxed))
}

/// A command family: a command that needs its family's privileges on database `db`.
fn family_command(family: &str) -> (Document, bool) {
    // (command, runs on admin whatever the database)
    match family {
        "read" => (doc! { "find": "books", "filter": {} }, false),
        "write" => (doc! { "insert": "books", "documents": [{ "x": 1 }] }, false),
        "index DDL" => (
            doc! { "createIndexes": "books", "indexes": [{ "key": { unique("f"): 1 }, "name": unique("i") }] },
            false,
        ),
        "collection DDL" => (doc! { "create": unique("c") }, false),
        "user admin" => (
            doc! { "createUser": unique("u"), "pwd": "x-Passw0rd", "roles": [] },
            false,
        ),
        "cluster monitor" => (doc! { "serverStatus": 1 }, true),
        "pattern read" => (
            doc! { "arrayLength": "sales", "_id": 1, "field": "buyers" },
            false,
        ),
        "pattern write" => (
            doc! { "setPattern": unique("p"), "outlier": "items", "threshold": 5, "overflowCollection": unique("extra") },
            false,
        ),
        other => panic!("no family {other}"),
    }
}

const FAMILIES: &[&str] = &[
    "read",
    "write",
    "index DDL",
    "collection DDL",
    "user admin",
    "cluster monitor",
    "pattern read",
    "pattern write",
];

/// Each role (granted on `shop`, or on `admin` for the cluster and AnyDatabase roles) with what
/// it allows, family by family in [`FAMILIES`]' order: two letters per family, on `shop` then
/// on `other`, `Y` allowed and `N` refused with 13 (the cluster monitor family runs on `admin`
/// both times).
#[rustfmt::skip]
const TABLE: &[(&str, &str, &str)] = &[
    //                                  read  write index coll  user  clust pat-r pat-w
    ("read",                 "shop",  "YN    NN    NN    NN    NN    NN    YN    NN"),
    ("readWrite",            "shop",  "YN    YN    YN    YN    NN    NN    YN    NN"),
    ("dbAdmin",              "shop",  "NN    NN    YN    YN    NN    NN    NN    NN"),
    ("dbOwner",              "shop",  "YN    YN    YN    YN    YN    NN    YN    YN"),
    ("userAdmin",            "shop",  "NN    NN    NN    NN    YN    NN    NN    NN"),
    ("clusterMonitor",       "admin", "NN    NN    NN    NN    NN    YY    NN    NN"),
    ("clusterAdmin",         "admin", "NN    NN    NN    NN    NN    YY    NN    NN"),
    ("readAnyDatabase",      "admin", "YY    NN    NN    NN    NN    NN    YY    NN"),
    ("readWriteAnyDatabase", "admin", "YY    YY    YY    YY    NN    NN    YY    NN"),
    ("userAdminAnyDatabase", "admin", "NN    NN    NN    NN    YY    NN    NN    NN"),
    ("dbAdminAnyDatabase",   "admin", "NN    NN    YY    YY    NN    NN    NN    NN"),
    ("root",                 "admin", "YY    YY    YY    YY    YY    YY    YY    YY"),
];

/// A row's cells as `(on shop, on other)` pairs.
fn expected_cells(row: &str) -> Vec<(bool, bool)> {
    row.split_whitespace()
        .map(|cell| {
            let mut letters = cell.chars().map(|letter| letter == 'Y');
            (letters.next().unwrap(), letters.next().unwrap())
        })
        .collect()
}

async fn start() -> (common::Running, Database) {
    let database = Database::open_in_memory().unwrap();
    let options = ServerOptions {
        auth: true,
        ..common::options()
    };
    let server = common::start_with(Commands::new(database.clone()), options).await;
    let anonymous = client(server.address, None, None).await;
    anonymous
        .database("admin")
        .run_command(doc! { "createUser": ROOT.0, "pwd": ROOT.1, "roles": ["root"] })
        .await
        .expect("the first user, by the localhost exception");
    anonymous.shutdown().await;
    (server, database)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_built_in_role_against_every_command_family() {
    let (server, _database) = start().await;
    let root = client(server.address, Some(ROOT), None).await;
    seed(&root).await;
    let mut mismatches = Vec::new();
    for (role, role_db, expected) in TABLE {
        let user = format!("user_{role}");
        root.database("admin")
            .run_command(doc! {
                "createUser": &user, "pwd": PASSWORD, "roles": [{ "role": *role, "db": *role_db }],
            })
            .await
            .unwrap_or_else(|error| panic!("creating {user}: {error}"));
        let connection = client(server.address, Some((&user, PASSWORD)), None).await;
        let cells = expected_cells(expected);
        assert_eq!(cells.len(), FAMILIES.len(), "{role}: one cell per family");
        for (family, (on_shop, on_other)) in FAMILIES.iter().zip(&cells) {
            for (db, allowed) in [("shop", *on_shop), ("other", *on_other)] {
                let (command, on_admin) = family_command(family);
                let target = if on_admin { "admin" } else { db };
                let outcome = connection
                    .database(target)
                    .run_command(command.clone())
                    .await;
                let got = match &outcome {
                    Ok(_) => true,
                    Err(error) if code(error) == Some(13) => {
                        let message = error.to_string();
                        assert!(
                            message.contains(&format!(
                                "not authorized on {target} to execute command {{"
                            )),
                            "{role} {family}: {message}"
                        );
                        false
                    }
                    Err(error) => {
                        panic!("{role} {family} on {db}: neither allowed nor 13: {error}")
                    }
                };
                if got != allowed {
                    mismatches.push(format!(
                        "{role}@{role_db} {family} on {db}: expected {}, got {}",
                        if allowed { "allowed" } else { "13" },
                        if got { "allowed" } else { "13" },
                    ));
                }
            }
        }
        connection.shutdown().await;
    }
    assert!(mismatches.is_empty(), "{}", mismatches.join("\n"));
    root.shutdown().await;
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn read_write_on_one_database_stays_there_and_cannot_make_a_root_user() {
    let (server, _database) = start().await;
    let root = client(server.address, Some(ROOT), None).await;
    seed(&root).await;
    root.database("admin")
        .run_command(doc! { "createUser": "clerk", "pwd": PASSWORD, "roles": [{ "role": "readWrite", "db": "shop" }] })
        .await
        .unwrap();
    let clerk = client(server.address, Some(("clerk", PASSWORD)), None).await;
    clerk
        .database("shop")
        .run_command(doc! { "insert": "books", "documents": [{ "_id": 2 }] })
        .await
        .expect("readWrite writes its own database");
    for (db, command) in [
        ("other", doc! { "find": "books" }),
        (
            "other",
            doc! { "insert": "books", "documents": [{ "_id": 3 }] },
        ),
        (
            "admin",
            doc! { "createUser": "evil", "pwd": PASSWORD, "roles": ["root"] },
        ),
        (
            "shop",
            doc! { "createUser": "evil", "pwd": PASSWORD, "roles": [] },
        ),
        (
            "admin",
            doc! { "listDatabases": 1, "authorizedDatabases": false },
        ),
        (
            "shop",
            doc! { "aggregate": "books", "pipeline": [{ "$out": { "db": "other", "coll": "stolen" } }], "cursor": {} },
        ),
        ("admin", doc! { "shutdownTheServer": 1 }),
        // readWrite has no bypassDocumentValidation action (dbAdmin and restore do).
        (
            "shop",
            doc! { "insert": "books", "documents": [{ "_id": 4 }], "bypassDocumentValidation": true },
        ),
        (
            "shop",
            doc! { "update": "books", "updates": [{ "q": { "_id": 2 }, "u": { "$set": { "a": 1 } } }], "bypassDocumentValidation": true },
        ),
    ] {
        let error = clerk
            .database(db)
            .run_command(command.clone())
            .await
            .expect_err(&format!("{command} must be refused"));
        assert_eq!(code(&error), Some(13), "{command}: {error}");
    }
    clerk
        .database("shop")
        .run_command(doc! { "aggregate": "books", "pipeline": [{ "$lookup": { "from": "sales", "localField": "_id", "foreignField": "_id", "as": "s" } }], "cursor": {} })
        .await
        .expect("a $lookup inside its own database");

    // Without the listDatabases action, listDatabases lists the databases its roles name.
    let listed = clerk
        .database("admin")
        .run_command(doc! { "listDatabases": 1, "nameOnly": true })
        .await
        .expect("listDatabases of the user's own databases");
    let names: Vec<&str> = listed
        .get_array("databases")
        .unwrap()
        .iter()
        .filter_map(|entry| entry.as_document()?.get_str("name").ok())
        .collect();
    assert_eq!(names, vec!["shop"], "{listed}");

    // Granted while connected: the next command sees it; revoked: refused again.
    root.database("admin")
        .run_command(
            doc! { "grantRolesToUser": "clerk", "roles": [{ "role": "read", "db": "other" }] },
        )
        .await
        .unwrap();
    clerk
        .database("other")
        .run_command(doc! { "find": "books" })
        .await
        .expect("a granted role applies at once");
    root.database("admin")
        .run_command(
            doc! { "revokeRolesFromUser": "clerk", "roles": [{ "role": "read", "db": "other" }] },
        )
        .await
        .unwrap();
    let error = clerk
        .database("other")
        .run_command(doc! { "find": "books" })
        .await
        .expect_err("a revoked role no longer applies");
    assert_eq!(code(&error), Some(13));
    clerk.shutdown().await;
    root.shutdown().await;
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn user_defined_roles_are_enforced_like_built_in_ones() {
    let (server, _database) = start().await;
    let root = client(server.address, Some(ROOT), None).await;
    seed(&root).await;
    let shop = root.database("shop");
    shop.run_command(doc! {
        "createRole": "bookReader",
        "privileges": [{ "resource": { "db": "shop", "collection": "books" }, "actions": ["find"] }],
        "roles": [],
    })
    .await
    .expect("createRole");
    shop.run_command(doc! {
        "createRole": "salesClerk",
        "privileges": [{ "resource": { "db": "shop", "collection": "sales" }, "actions": ["insert"] }],
        "roles": ["bookReader"],
    })
    .await
    .expect("createRole inheriting a role");
    let refused = shop
        .run_command(doc! {
            "createRole": "wide", "roles": [],
            "privileges": [{ "resource": { "db": "other", "collection": "" }, "actions": ["find"] }],
        })
        .await
        .expect_err("a role of shop cannot reach other");
    assert_eq!(code(&refused), Some(2));
    let refused = shop
        .run_command(doc! { "createRole": "odd", "roles": [], "privileges": [{ "resource": { "db": "shop", "collection": "" }, "actions": ["fly"] }] })
        .await
        .expect_err("an unknown action");
    assert_eq!(code(&refused), Some(2));
    let missing = shop
        .run_command(doc! { "createUser": "x", "pwd": PASSWORD, "roles": ["noSuchRole"] })
        .await
        .expect_err("an unknown role");
    assert_eq!(code(&missing), Some(31));
    shop.run_command(doc! { "createUser": "clerk", "pwd": PASSWORD, "roles": ["salesClerk"] })
        .await
        .unwrap();

    let info = shop
        .run_command(doc! { "rolesInfo": "salesClerk", "showPrivileges": true })
        .await
        .unwrap();
    let described = info.get_array("roles").unwrap()[0].as_document().unwrap();
    assert_eq!(
        described.get_array("inheritedRoles").unwrap().len(),
        1,
        "{described}"
    );
    assert_eq!(
        described.get_array("inheritedPrivileges").unwrap().len(),
        2,
        "{described}"
    );

    let uri = format!(
        "mongodb://clerk:{PASSWORD}@{}/?authSource=shop&serverSelectionTimeoutMS=5000",
        server.address
    );
    let clerk = Client::with_options(ClientOptions::parse(uri).await.unwrap()).unwrap();
    let clerk_shop = clerk.database("shop");
    clerk_shop
        .run_command(doc! { "find": "books" })
        .await
        .expect("inherited find");
    clerk_shop
        .run_command(doc! { "aggregate": "books", "pipeline": [{ "$lookup": { "from": "books", "as": "b", "pipeline": [] } }], "cursor": {} })
        .await
        .expect("a $lookup into a collection it may read");
    clerk_shop
        .run_command(doc! { "insert": "sales", "documents": [{ "_id": 9 }] })
        .await
        .expect("own insert");
    for command in [
        doc! { "find": "sales" },
        doc! { "insert": "books", "documents": [{}] },
        doc! { "usersInfo": 1 },
        // A pipeline needs `find` on every collection it reads, nested ones too.
        doc! { "aggregate": "books", "pipeline": [{ "$lookup": { "from": "sales", "as": "s", "pipeline": [] } }], "cursor": {} },
        doc! { "aggregate": "books", "pipeline": [{ "$facet": { "f": [{ "$unionWith": "sales" }] } }], "cursor": {} },
    ] {
        let error = clerk_shop
            .run_command(command.clone())
            .await
            .expect_err("not granted");
        assert_eq!(code(&error), Some(13), "{command}");
    }
    let own = clerk_shop
        .run_command(doc! { "usersInfo": "clerk" })
        .await
        .expect("a user may see itself");
    assert_eq!(own.get_array("users").unwrap().len(), 1);

    // Dropping the role takes it from its holders.
    shop.run_command(doc! { "dropRole": "bookReader" })
        .await
        .unwrap();
    let error = clerk_shop
        .run_command(doc! { "find": "books" })
        .await
        .expect_err("the inherited role is gone");
    assert_eq!(code(&error), Some(13));
    let roles = shop.run_command(doc! { "rolesInfo": 1 }).await.unwrap();
    assert_eq!(roles.get_array("roles").unwrap().len(), 1, "{roles}");
    let dropped = shop
        .run_command(doc! { "dropAllUsersFromDatabase": 1 })
        .await
        .unwrap();
    assert_eq!(dropped.get_i64("n").ok(), Some(1));
    clerk.shutdown().await;
    root.shutdown().await;
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn scram_sha_1_and_the_codes_of_authentication_errors() {
    let (server, database) = start().await;
    let root = client(server.address, Some(ROOT), None).await;
    let admin = root.database("admin");
    admin
        .run_command(doc! { "createUser": "old", "pwd": PASSWORD, "roles": [], "mechanisms": ["SCRAM-SHA-1"] })
        .await
        .unwrap();
    admin
        .run_command(doc! { "createUser": "new", "pwd": PASSWORD, "roles": [], "mechanisms": ["SCRAM-SHA-256"] })
        .await
        .unwrap();
    let stored = database
        .collection::<Document>("admin.system.users")
        .find_one(doc! { "_id": "admin.old" })
        .run()
        .unwrap()
        .unwrap();
    assert_eq!(
        stored
            .get_document("credentials")
            .unwrap()
            .keys()
            .collect::<Vec<_>>(),
        vec!["SCRAM-SHA-1"]
    );

    // SCRAM-SHA-1 and SCRAM-SHA-256 both log in; a user with only one is offered only that one.
    for (user, mechanism) in [
        ("old", AuthMechanism::ScramSha1),
        (ROOT.0, AuthMechanism::ScramSha1),
        (ROOT.0, AuthMechanism::ScramSha256),
        ("new", AuthMechanism::ScramSha256),
    ] {
        let password = if user == ROOT.0 { ROOT.1 } else { PASSWORD };
        let connection = client(
            server.address,
            Some((user, password)),
            Some(mechanism.clone()),
        )
        .await;
        connection
            .database("admin")
            .run_command(doc! { "connectionStatus": 1 })
            .await
            .unwrap_or_else(|error| panic!("{user} with {mechanism:?}: {error}"));
        connection.shutdown().await;
    }
    let negotiated = client(server.address, Some(("old", PASSWORD)), None).await;
    negotiated
        .database("admin")
        .run_command(doc! { "ping": 1 })
        .await
        .expect("the driver picks SCRAM-SHA-1 from saslSupportedMechs");
    negotiated.shutdown().await;
    let hello = admin
        .run_command(doc! { "hello": 1, "saslSupportedMechs": "admin.old" })
        .await
        .unwrap();
    assert_eq!(
        hello.get_array("saslSupportedMechs").unwrap(),
        &vec![bson::Bson::String("SCRAM-SHA-1".into())]
    );

    // The codes, on a connection that has not logged in: an unknown user and a wrong password
    // get the same 18 and the same message; a mechanism the user lacks 334; an unknown one 334.
    let anonymous = client(server.address, None, None).await;
    let anonymous_admin = anonymous.database("admin");
    let start = |user: &str, mechanism: &str| {
        doc! {
            "saslStart": 1,
            "mechanism": mechanism,
            "payload": Binary { subtype: BinarySubtype::Generic, bytes: format!("n,,n={user},r=abcdefghijklmnop").into_bytes() },
        }
    };
    let unknown = anonymous_admin
        .run_command(start("nobody", "SCRAM-SHA-256"))
        .await
        .expect_err("an unknown user");
    assert_eq!(code(&unknown), Some(18), "{unknown}");
    let lacking = anonymous_admin
        .run_command(start("old", "SCRAM-SHA-256"))
        .await
        .expect_err("old has no SCRAM-SHA-256 credential");
    assert_eq!(code(&lacking), Some(334), "{lacking}");
    let unknown_mechanism = anonymous_admin
        .run_command(start("old", "PLAIN"))
        .await
        .expect_err("PLAIN is not offered");
    assert_eq!(code(&unknown_mechanism), Some(334), "{unknown_mechanism}");
    anonymous.shutdown().await;
    let wrong = client(
        server.address,
        Some(("old", "wrong-password")),
        Some(AuthMechanism::ScramSha1),
    )
    .await;
    let failed = wrong
        .database("admin")
        .run_command(doc! { "ping": 1 })
        .await
        .expect_err("a wrong password");
    let unknown_message = unknown.to_string();
    assert!(
        failed.to_string().contains("Authentication failed.")
            && unknown_message.contains("Authentication failed."),
        "the same message for both: {failed} / {unknown_message}"
    );
    wrong.shutdown().await;
    root.shutdown().await;
    server.stop().await;
}
