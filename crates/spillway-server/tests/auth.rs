//! `--auth`: SCRAM with the official Rust driver. Before authenticating, only the
//! handshake runs; the first user comes from loopback (the localhost exception); users are
//! stored salted in `admin.system.users`, never with their password.

use crate::common;

use bson::{Bson, Document, doc};
use mongodb::Client;
use mongodb::error::ErrorKind;
use mongodb::options::ClientOptions;
use spillway::Database;
use spillway::command::Commands;
use spillway_server::ServerOptions;

async fn client(address: std::net::SocketAddr, credentials: Option<(&str, &str)>) -> Client {
    let login = credentials.map_or(String::new(), |(user, password)| {
        format!("{user}:{password}@")
    });
    let uri = format!("mongodb://{login}{address}/?serverSelectionTimeoutMS=5000&authSource=admin");
    Client::with_options(ClientOptions::parse(uri).await.unwrap()).unwrap()
}

fn code(error: &mongodb::error::Error) -> Option<i32> {
    match *error.kind {
        ErrorKind::Command(ref command) => Some(command.code),
        ErrorKind::Authentication { .. } => Some(18),
        _ => None,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn scram_sha_256_users_and_the_gate_of_auth() {
    let database = Database::open_in_memory().unwrap();
    let options = ServerOptions {
        auth: true,
        ..common::options()
    };
    let server = common::start_with(Commands::new(database.clone()), options).await;

    // Unauthenticated: the handshake and ping work, the rest is refused with Unauthorized.
    let anonymous = client(server.address, None).await;
    let admin = anonymous.database("admin");
    admin
        .run_command(doc! { "ping": 1 })
        .await
        .expect("ping needs no login");
    let refused = admin
        .run_command(doc! { "getCmdLineOpts": 1 })
        .await
        .expect_err("getCmdLineOpts needs a login");
    assert_eq!(code(&refused), Some(13));
    let refused = anonymous
        .database("shop")
        .run_command(doc! { "find": "sales" })
        .await
        .expect_err("find needs a login");
    assert_eq!(code(&refused), Some(13));

    // The localhost exception: the first user, from loopback, without a login.
    admin
        .run_command(doc! { "createUser": "alice", "pwd": "s3cret-Passw0rd", "roles": ["root"] })
        .await
        .expect("the first user");
    let refused = admin
        .run_command(doc! { "createUser": "mallory", "pwd": "x", "roles": [] })
        .await
        .expect_err("only the first user comes without a login");
    assert_eq!(code(&refused), Some(13));
    anonymous.shutdown().await;

    // Stored salted, never the password.
    let stored = database
        .collection::<Document>("admin.system.users")
        .find_one(doc! { "_id": "admin.alice" })
        .run()
        .unwrap()
        .expect("alice is stored in admin.system.users");
    let credential = stored
        .get_document("credentials")
        .unwrap()
        .get_document("SCRAM-SHA-256")
        .unwrap();
    for field in ["salt", "storedKey", "serverKey"] {
        assert!(!credential.get_str(field).unwrap().is_empty(), "{field}");
    }
    assert_eq!(credential.get_i32("iterationCount").ok(), Some(15_000));
    assert!(
        !format!("{stored:?}").contains("s3cret"),
        "no password in {stored}"
    );

    // The right password: every command; connectionStatus and usersInfo say who.
    let alice = client(server.address, Some(("alice", "s3cret-Passw0rd"))).await;
    let admin = alice.database("admin");
    let options = admin
        .run_command(doc! { "getCmdLineOpts": 1 })
        .await
        .expect("logged in");
    assert_eq!(
        options
            .get_document("parsed")
            .unwrap()
            .get_document("security")
            .unwrap()
            .get_str("authorization")
            .ok(),
        Some("enabled")
    );
    let status = admin
        .run_command(doc! { "connectionStatus": 1 })
        .await
        .unwrap();
    let users = status
        .get_document("authInfo")
        .unwrap()
        .get_array("authenticatedUsers")
        .unwrap();
    assert_eq!(
        users,
        &vec![Bson::Document(doc! { "user": "alice", "db": "admin" })]
    );
    admin
        .run_command(doc! { "createUser": "bob", "pwd": "hunter2hunter2", "roles": [] })
        .await
        .expect("a logged-in user creates users");
    let duplicate = admin
        .run_command(doc! { "createUser": "bob", "pwd": "other", "roles": [] })
        .await
        .expect_err("a user exists once");
    assert_eq!(code(&duplicate), Some(51003));
    let info = admin.run_command(doc! { "usersInfo": 1 }).await.unwrap();
    let users = info.get_array("users").unwrap();
    assert_eq!(users.len(), 2);
    for user in users {
        let user = user.as_document().unwrap();
        assert!(
            !user.contains_key("credentials"),
            "usersInfo never shows credentials"
        );
        assert_eq!(
            user.get_array("mechanisms").unwrap(),
            &vec![
                Bson::String("SCRAM-SHA-1".into()),
                Bson::String("SCRAM-SHA-256".into())
            ],
            "both mechanisms by default, as MongoDB creates users"
        );
    }
    let one = admin
        .run_command(doc! { "usersInfo": "alice" })
        .await
        .unwrap();
    let alice_info = one.get_array("users").unwrap()[0].as_document().unwrap();
    assert_eq!(
        alice_info.get_array("roles").unwrap(),
        &vec![Bson::Document(doc! { "role": "root", "db": "admin" })],
        "a role named by a string is stored as MongoDB stores it"
    );

    // A wrong password fails authentication.
    let intruder = client(server.address, Some(("alice", "wrong"))).await;
    let failed = intruder
        .database("admin")
        .run_command(doc! { "ping": 1 })
        .await
        .expect_err("a wrong password");
    assert!(
        matches!(*failed.kind, ErrorKind::Authentication { .. }) || code(&failed) == Some(18),
        "{failed}"
    );
    intruder.shutdown().await;

    // bob logs in; after dropUser he no longer can.
    let bob = client(server.address, Some(("bob", "hunter2hunter2"))).await;
    bob.database("admin")
        .run_command(doc! { "ping": 1 })
        .await
        .expect("bob logs in");
    bob.shutdown().await;
    admin
        .run_command(doc! { "dropUser": "bob" })
        .await
        .expect("dropUser");
    let missing = admin
        .run_command(doc! { "dropUser": "bob" })
        .await
        .expect_err("bob is gone");
    assert_eq!(code(&missing), Some(11));
    let bob = client(server.address, Some(("bob", "hunter2hunter2"))).await;
    assert!(
        bob.database("admin")
            .run_command(doc! { "ping": 1 })
            .await
            .is_err()
    );
    bob.shutdown().await;
    alice.shutdown().await;
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_auth_users_can_still_be_created_and_used() {
    let server = common::start().await;
    let anonymous = client(server.address, None).await;
    anonymous
        .database("admin")
        .run_command(doc! { "createUser": "carol", "pwd": "pässwörd", "roles": [] })
        .await
        .expect("createUser without --auth");
    anonymous.shutdown().await;
    let carol = client(server.address, Some(("carol", "p%C3%A4ssw%C3%B6rd"))).await;
    let status = carol
        .database("admin")
        .run_command(doc! { "connectionStatus": 1 })
        .await
        .expect("carol logs in (a non-ASCII password, SASLprep'd)");
    assert_eq!(
        status
            .get_document("authInfo")
            .unwrap()
            .get_array("authenticatedUsers")
            .unwrap()
            .len(),
        1
    );
    carol.shutdown().await;
    server.stop().await;
}
