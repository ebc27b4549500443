//! The official Rust driver (`mongodb` 3.x with bson 3) against the server: it discovers the
//! one-node replica set, pings, opens sessions; and, over the command layer, does CRUD, a
//! transaction and a pattern command (each as soon as the layer knows its commands).

use crate::common;

use bson::{Document, doc};
use mongodb::Client;
use mongodb::options::ClientOptions;
use spillway::command::Commands;

async fn client(address: std::net::SocketAddr, direct: bool) -> Client {
    let uri = format!(
        "mongodb://{address}/?serverSelectionTimeoutMS=10000&directConnection={direct}&appName=spillway-tests"
    );
    let options = ClientOptions::parse(uri).await.expect("a valid URI");
    Client::with_options(options).expect("a client")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_driver_discovers_a_replica_set_primary_pings_and_opens_sessions() {
    let server = common::start().await;
    for direct in [false, true] {
        let client = client(server.address, direct).await;
        let ping = client
            .database("admin")
            .run_command(doc! { "ping": 1 })
            .await
            .expect("ping");
        assert_eq!(ping.get_f64("ok").ok(), Some(1.0));
        let hello = client
            .database("admin")
            .run_command(doc! { "hello": 1 })
            .await
            .expect("hello");
        assert_eq!(hello.get_str("setName").ok(), Some("spillway"));
        let build_info = client
            .database("admin")
            .run_command(doc! { "buildInfo": 1 })
            .await
            .expect("buildInfo");
        assert_eq!(build_info.get_str("version").ok(), Some("8.1.0"));
        // Sessions need logicalSessionTimeoutMinutes and a replica set or direct server.
        let mut session = client.start_session().await.expect("a session");
        let ping = client
            .database("admin")
            .run_command(doc! { "ping": 1 })
            .session(&mut session)
            .await
            .expect("ping in a session");
        assert_eq!(ping.get_f64("ok").ok(), Some(1.0));
        drop(session);
        // A command the server does not answer itself reaches the command layer, and its
        // error comes back to the driver as a command error.
        let error = client
            .database("test")
            .run_command(doc! { "noSuchCommand": 1 })
            .await
            .expect_err("an unknown command fails");
        match *error.kind {
            mongodb::error::ErrorKind::Command(ref command) => assert_eq!(command.code, 59),
            ref other => panic!("expected a command error, got {other:?}"),
        }
        client.shutdown().await;
    }
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_bound_by_host_name_announces_that_name() {
    let options = spillway_server::ServerOptions {
        bind: "localhost".to_owned(),
        ..common::options()
    };
    let server = common::start_with(common::Echo, options).await;
    let port = server.address.port();
    let uri = format!("mongodb://localhost:{port}/?serverSelectionTimeoutMS=10000");
    let client = Client::with_options(ClientOptions::parse(uri).await.unwrap()).unwrap();
    let hello = client
        .database("admin")
        .run_command(doc! { "hello": 1 })
        .await
        .expect("the driver reaches the announced localhost:PORT");
    assert_eq!(
        hello.get_str("me").ok(),
        Some(format!("localhost:{port}").as_str())
    );
    client.shutdown().await;
    server.stop().await;
}

/// Whether the command layer knows `name` (it grows as the project does).
fn knows(name: &str) -> bool {
    Commands::command_names().contains(&name)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_driver_does_crud_through_the_command_layer() {
    if !knows("insert") {
        // The command layer is still the stub that answers CommandNotFound (asserted above).
        return;
    }
    let server = common::start().await;
    let client = client(server.address, false).await;
    let sales = client.database("shop").collection::<Document>("sales");
    sales
        .insert_one(doc! { "_id": 1, "title": "A", "n": 1 })
        .await
        .expect("insert_one");
    sales
        .insert_many([
            doc! { "_id": 2, "title": "B", "n": 2 },
            doc! { "_id": 3, "title": "C", "n": 3 },
        ])
        .await
        .expect("insert_many");
    let found = sales
        .find_one(doc! { "_id": 2 })
        .await
        .expect("find_one")
        .expect("found");
    assert_eq!(found.get_str("title").ok(), Some("B"));
    let updated = sales
        .update_one(doc! { "_id": 3 }, doc! { "$inc": { "n": 10 } })
        .await
        .expect("update_one");
    assert_eq!(updated.modified_count, 1);
    let mut cursor = sales
        .find(doc! { "n": { "$gt": 1 } })
        .sort(doc! { "_id": 1 })
        .batch_size(1)
        .await
        .expect("find");
    let mut ids = Vec::new();
    while cursor.advance().await.expect("getMore") {
        let document = cursor.deserialize_current().expect("a document");
        ids.push(document.get_i32("_id").unwrap());
    }
    assert_eq!(ids, vec![2, 3]);
    // Client::shutdown waits for every cursor and session to be dropped.
    drop(cursor);
    let deleted = sales
        .delete_one(doc! { "_id": 1 })
        .await
        .expect("delete_one");
    assert_eq!(deleted.deleted_count, 1);
    assert_eq!(sales.count_documents(doc! {}).await.expect("count"), 2);
    let names = client.list_database_names().await.expect("listDatabases");
    assert!(names.contains(&"shop".to_owned()), "{names:?}");
    let duplicate = sales
        .insert_one(doc! { "_id": 2 })
        .await
        .expect_err("a duplicate _id");
    assert!(duplicate.to_string().contains("11000"), "{duplicate}");
    client.shutdown().await;
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_driver_creates_a_collection_with_a_json_schema_validator() {
    let server = common::start().await;
    let client = client(server.address, false).await;
    let shop = client.database("shop");
    shop.create_collection("people")
        .validator(doc! {
            "$jsonSchema": {
                "bsonType": "object",
                "required": ["name", "age"],
                "properties": {
                    "name": { "bsonType": "string" },
                    "age": { "bsonType": "int", "minimum": 0 },
                },
            },
        })
        .await
        .expect("create with a $jsonSchema validator");
    let people = shop.collection::<Document>("people");
    people
        .insert_one(doc! { "_id": 1, "name": "ann", "age": 31 })
        .await
        .expect("a valid insert");
    let refused = people
        .insert_one(doc! { "_id": 2, "name": "bob", "age": -1 })
        .await
        .expect_err("an invalid insert");
    match *refused.kind {
        mongodb::error::ErrorKind::Write(mongodb::error::WriteFailure::WriteError(ref error)) => {
            assert_eq!(error.code, 121, "{error:?}");
            let details = error
                .details
                .as_ref()
                .and_then(|info| info.get_document("details").ok())
                .expect("errInfo.details");
            assert_eq!(details.get_str("operatorName").ok(), Some("$jsonSchema"));
        }
        ref other => panic!("expected a write error, got {other:?}"),
    }
    assert_eq!(people.count_documents(doc! {}).await.expect("count"), 1);
    client.shutdown().await;
    server.stop().await;
}

/// The code of a driver error that is a single write error.
fn write_error_code(error: &mongodb::error::Error) -> Option<i32> {
    match *error.kind {
        mongodb::error::ErrorKind::Write(mongodb::error::WriteFailure::WriteError(ref error)) => {
            Some(error.code)
        }
        _ => None,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_driver_validates_logical_documents_changes_validators_and_bypasses_them() {
    let server = common::start().await;
    let client = client(server.address, false).await;
    let shop = client.database("shop");
    // At most 8 buyers, no other field: the stored main document (3 buyers and the outlier's
    // flag) would fail the schema, the logical document passes it.
    shop.create_collection("books")
        .validator(doc! {
            "$jsonSchema": {
                "additionalProperties": false,
                "properties": {
                    "_id": {},
                    "customers_purchased": { "bsonType": "array", "maxItems": 8 },
                },
            },
        })
        .await
        .expect("create with a validator");
    shop.run_command(doc! {
        "setPattern": "books", "outlier": "customers_purchased", "threshold": 3,
    })
    .await
    .expect("setPattern");
    let books = shop.collection::<Document>("books");
    books
        .insert_one(doc! { "_id": 1, "customers_purchased": ["a", "b", "c", "d", "e", "f"] })
        .await
        .expect("a spilled, valid book");
    let refused = books
        .update_one(
            doc! { "_id": 1 },
            doc! { "$push": { "customers_purchased": { "$each": ["g", "h", "i"] } } },
        )
        .await
        .expect_err("nine buyers");
    assert_eq!(write_error_code(&refused), Some(121), "{refused}");
    books
        .update_one(
            doc! { "_id": 1 },
            doc! { "$push": { "customers_purchased": { "$each": ["g", "h", "i"] } } },
        )
        .bypass_document_validation(true)
        .await
        .expect("bypassed");
    // collMod: a query-operator validator, moderate, listed by listCollections.
    shop.run_command(doc! {
        "collMod": "books",
        "validator": { "customers_purchased": { "$size": 9 } },
        "validationLevel": "moderate",
    })
    .await
    .expect("collMod");
    let listed = shop
        .run_command(doc! { "listCollections": 1, "filter": { "name": "books" } })
        .await
        .expect("listCollections");
    let options = listed
        .get_document("cursor")
        .and_then(|cursor| cursor.get_array("firstBatch"))
        .expect("firstBatch")[0]
        .as_document()
        .and_then(|info| info.get_document("options").ok())
        .expect("options")
        .clone();
    assert_eq!(
        options.get_document("validator").ok(),
        Some(&doc! { "customers_purchased": { "$size": 9 } })
    );
    assert_eq!(options.get_str("validationLevel").ok(), Some("moderate"));
    assert_eq!(options.get_str("validationAction").ok(), Some("error"));
    let refused = books
        .insert_one(doc! { "_id": 2, "customers_purchased": ["a"] })
        .await
        .expect_err("one buyer");
    assert_eq!(write_error_code(&refused), Some(121), "{refused}");
    assert_eq!(books.count_documents(doc! {}).await.expect("count"), 1);
    // A refused operator: BadValue, and nothing created.
    let refused = shop
        .run_command(doc! { "create": "scripts", "validator": { "$where": "true" } })
        .await
        .expect_err("$where");
    match *refused.kind {
        mongodb::error::ErrorKind::Command(ref error) => assert_eq!(error.code, 2, "{error:?}"),
        ref other => panic!("expected a command error, got {other:?}"),
    }
    let names = shop.list_collection_names().await.expect("names");
    assert!(!names.contains(&"scripts".to_string()), "{names:?}");
    client.shutdown().await;
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_driver_runs_a_transaction_across_databases() {
    if !knows("commitTransaction") {
        return;
    }
    let server = common::start().await;
    let client = client(server.address, false).await;
    let sales = client.database("shop").collection::<Document>("sales");
    let orders = client.database("orders").collection::<Document>("log");
    let mut session = client.start_session().await.expect("a session");
    session.start_transaction().await.expect("start");
    sales
        .insert_one(doc! { "_id": 10, "title": "T" })
        .session(&mut session)
        .await
        .expect("insert in the transaction");
    orders
        .insert_one(doc! { "_id": 10, "sale": 10 })
        .session(&mut session)
        .await
        .expect("insert in the transaction");
    assert_eq!(
        sales.count_documents(doc! { "_id": 10 }).await.unwrap(),
        0,
        "not visible before commit"
    );
    session.commit_transaction().await.expect("commit");
    assert_eq!(sales.count_documents(doc! { "_id": 10 }).await.unwrap(), 1);
    assert_eq!(orders.count_documents(doc! { "_id": 10 }).await.unwrap(), 1);
    // An aborted one leaves nothing.
    session.start_transaction().await.expect("start");
    sales
        .insert_one(doc! { "_id": 11 })
        .session(&mut session)
        .await
        .expect("insert in the transaction");
    session.abort_transaction().await.expect("abort");
    assert_eq!(sales.count_documents(doc! { "_id": 11 }).await.unwrap(), 0);
    drop(session);
    client.shutdown().await;
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_driver_declares_a_pattern_and_pushes_past_it() {
    if !knows("setPattern") {
        return;
    }
    let server = common::start().await;
    let client = client(server.address, false).await;
    let shop = client.database("shop");
    let books = shop.collection::<Document>("books");
    books
        .insert_one(doc! { "_id": 2, "title": "The Wooden Amulet", "customers_purchased": [] })
        .await
        .expect("insert the book");
    let declared = shop
        .run_command(doc! {
            "setPattern": "books", "outlier": "customers_purchased", "threshold": 50,
            "overflowCollection": "extra_books", "linkField": "book_id",
        })
        .await
        .expect("setPattern");
    assert_eq!(declared.get_f64("ok").ok(), Some(1.0));
    for n in 0..60 {
        books
            .update_one(
                doc! { "_id": 2 },
                doc! { "$push": { "customers_purchased": format!("user{n:02}") } },
            )
            .await
            .expect("$push");
    }
    // Queries are logical: a buyer past the threshold is found; the rest spilled.
    let buyers = books
        .count_documents(doc! { "customers_purchased": "user55" })
        .await
        .unwrap();
    assert_eq!(buyers, 1);
    let extras = shop.collection::<Document>("extra_books");
    let spilled = extras.count_documents(doc! { "book_id": 2 }).await.unwrap();
    assert!(spilled >= 1, "the buyers past 50 spilled into extra_books");
    client.shutdown().await;
    server.stop().await;
}
