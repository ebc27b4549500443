//! Fail points over a real socket, as drivers' test suites use them: off unless the server was
//! started with test commands, then each `failCommand` option (error code, closed connection,
//! write concern error, blocking, application name, modes) and the error labels a retryable
//! write or a transaction gets.

use crate::common;

use std::time::{Duration, Instant};

use bson::{Bson, Document, doc};
use common::{Running, assert_closed, command, connect, op_msg, options, read_reply, send, start};
use spillway::Database;
use spillway::command::Commands;
use spillway_server::ServerOptions;
use tokio::net::TcpStream;

async fn start_with_test_commands() -> Running {
    common::start_with(
        Commands::new(Database::open_in_memory().expect("in-memory database")),
        ServerOptions {
            enable_test_commands: true,
            ..options()
        },
    )
    .await
}

async fn fail_point(stream: &mut TcpStream, mode: Bson, data: Document) {
    let reply = command(
        stream,
        1,
        &doc! { "configureFailPoint": "failCommand", "mode": mode, "data": data, "$db": "admin" },
    )
    .await;
    assert_eq!(reply.get_f64("ok").ok(), Some(1.0), "{reply}");
}

fn labels(reply: &Document) -> Vec<String> {
    reply
        .get_array("errorLabels")
        .map(|labels| {
            labels
                .iter()
                .filter_map(|label| label.as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}

fn insert(txn_number: Option<i64>) -> Document {
    let mut insert = doc! { "insert": "c", "documents": [{ "x": 1 }], "$db": "d" };
    if let Some(txn_number) = txn_number {
        insert.insert("lsid", doc! { "id": 7 });
        insert.insert("txnNumber", txn_number);
    }
    insert
}

async fn count(stream: &mut TcpStream) -> i32 {
    let reply = command(stream, 9, &doc! { "count": "c", "$db": "d" }).await;
    reply.get_i32("n").expect("a count")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_test_commands_configure_fail_point_is_an_unknown_command() {
    let server = start().await;
    let mut stream = connect(server.address).await;
    let reply = command(
        &mut stream,
        1,
        &doc! { "configureFailPoint": "failCommand", "mode": "alwaysOn", "$db": "admin" },
    )
    .await;
    assert_eq!(reply.get_i32("code").ok(), Some(59), "{reply}");
    let parameter = command(
        &mut stream,
        2,
        &doc! { "getParameter": 1, "enableTestCommands": 1, "$db": "admin" },
    )
    .await;
    assert_eq!(parameter.get_bool("enableTestCommands").ok(), Some(false));
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn test_commands_show_in_get_parameter_and_get_cmd_line_opts() {
    let server = start_with_test_commands().await;
    let mut stream = connect(server.address).await;
    let all = command(
        &mut stream,
        1,
        &doc! { "getParameter": "*", "$db": "admin" },
    )
    .await;
    assert_eq!(all.get_bool("enableTestCommands").ok(), Some(true));
    let options = command(
        &mut stream,
        2,
        &doc! { "getCmdLineOpts": 1, "$db": "admin" },
    )
    .await;
    let set_parameter = options
        .get_document("parsed")
        .and_then(|parsed| parsed.get_document("setParameter"))
        .expect("parsed.setParameter");
    assert_eq!(set_parameter.get_str("enableTestCommands").ok(), Some("1"));
    let listed = command(&mut stream, 3, &doc! { "listCommands": 1, "$db": "admin" }).await;
    let names = listed.get_document("commands").expect("commands");
    assert!(names.contains_key("configureFailPoint"), "{names}");
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn error_code_fails_the_listed_command_instead_of_running_it_the_given_times() {
    let server = start_with_test_commands().await;
    let mut stream = connect(server.address).await;
    fail_point(
        &mut stream,
        doc! { "times": 2 }.into(),
        doc! { "failCommands": ["insert"], "errorCode": 91 },
    )
    .await;
    for id in 10..12 {
        let reply = command(&mut stream, id, &insert(None)).await;
        assert_eq!(reply.get_i32("code").ok(), Some(91), "{reply}");
        assert_eq!(
            reply.get_str("codeName").ok(),
            Some("ShutdownInProgress"),
            "{reply}"
        );
    }
    // Nothing was written, other commands were not failed, and the third insert runs.
    assert_eq!(count(&mut stream).await, 0);
    let reply = command(&mut stream, 12, &insert(None)).await;
    assert_eq!(reply.get_i32("n").ok(), Some(1), "{reply}");
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_retryable_write_gets_the_retryable_write_error_label_unless_labels_are_given() {
    let server = start_with_test_commands().await;
    let mut stream = connect(server.address).await;
    fail_point(
        &mut stream,
        doc! { "times": 1 }.into(),
        doc! { "failCommands": ["insert"], "errorCode": 189 },
    )
    .await;
    let reply = command(&mut stream, 10, &insert(Some(1))).await;
    assert_eq!(labels(&reply), ["RetryableWriteError"], "{reply}");
    // A write without a transaction number is not a retryable write: no label.
    fail_point(
        &mut stream,
        doc! { "times": 1 }.into(),
        doc! { "failCommands": ["insert"], "errorCode": 189 },
    )
    .await;
    let reply = command(&mut stream, 11, &insert(None)).await;
    assert!(labels(&reply).is_empty(), "{reply}");
    // Labels given to the fail point replace the computed ones.
    fail_point(
        &mut stream,
        doc! { "times": 1 }.into(),
        doc! { "failCommands": ["insert"], "errorCode": 189, "errorLabels": ["Custom"] },
    )
    .await;
    let reply = command(&mut stream, 12, &insert(Some(2))).await;
    assert_eq!(labels(&reply), ["Custom"], "{reply}");
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_transaction_command_gets_the_transient_transaction_error_label() {
    let server = start_with_test_commands().await;
    let mut stream = connect(server.address).await;
    fail_point(
        &mut stream,
        doc! { "times": 1 }.into(),
        doc! { "failCommands": ["insert"], "errorCode": 10107 },
    )
    .await;
    let mut in_transaction = insert(Some(1));
    in_transaction.insert("autocommit", false);
    in_transaction.insert("startTransaction", true);
    let reply = command(&mut stream, 10, &in_transaction).await;
    assert_eq!(labels(&reply), ["TransientTransactionError"], "{reply}");
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn close_connection_closes_without_a_reply_and_without_running_the_command() {
    let server = start_with_test_commands().await;
    let mut stream = connect(server.address).await;
    fail_point(
        &mut stream,
        doc! { "times": 1 }.into(),
        doc! { "failCommands": ["insert"], "closeConnection": true },
    )
    .await;
    send(&mut stream, &op_msg(10, 0, &insert(None), &[])).await;
    assert_closed(&mut stream, "closeConnection").await;
    let mut stream = connect(server.address).await;
    assert_eq!(count(&mut stream).await, 0);
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn write_concern_error_runs_the_write_and_reports_the_error() {
    let server = start_with_test_commands().await;
    let mut stream = connect(server.address).await;
    fail_point(
        &mut stream,
        doc! { "times": 1 }.into(),
        doc! { "failCommands": ["insert"], "writeConcernError": { "code": 91, "errmsg": "Replication is being shut down" } },
    )
    .await;
    let reply = command(&mut stream, 10, &insert(Some(1))).await;
    assert_eq!(reply.get_i32("n").ok(), Some(1), "{reply}");
    let error = reply
        .get_document("writeConcernError")
        .expect("a writeConcernError");
    assert_eq!(error.get_i32("code").ok(), Some(91));
    assert_eq!(labels(&reply), ["RetryableWriteError"], "{reply}");
    // The retry is answered from the session: the write happened once.
    let reply = command(&mut stream, 11, &insert(Some(1))).await;
    assert_eq!(reply.get_i32("n").ok(), Some(1), "{reply}");
    assert!(!reply.contains_key("writeConcernError"), "{reply}");
    assert_eq!(count(&mut stream).await, 1);
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn block_connection_delays_the_command() {
    let server = start_with_test_commands().await;
    let mut stream = connect(server.address).await;
    fail_point(
        &mut stream,
        doc! { "times": 1 }.into(),
        doc! { "failCommands": ["ping"], "blockConnection": true, "blockTimeMS": 300 },
    )
    .await;
    let started = Instant::now();
    let reply = command(&mut stream, 10, &doc! { "ping": 1, "$db": "admin" }).await;
    assert_eq!(reply.get_f64("ok").ok(), Some(1.0), "{reply}");
    assert!(started.elapsed() >= Duration::from_millis(300));
    let started = Instant::now();
    command(&mut stream, 11, &doc! { "ping": 1, "$db": "admin" }).await;
    assert!(started.elapsed() < Duration::from_millis(300));
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn app_name_fails_only_the_connections_of_that_application() {
    let server = start_with_test_commands().await;
    let mut admin = connect(server.address).await;
    fail_point(
        &mut admin,
        Bson::from("alwaysOn"),
        doc! { "failCommands": ["ping"], "errorCode": 2, "appName": "failing" },
    )
    .await;
    let ping = doc! { "ping": 1, "$db": "admin" };
    assert_eq!(
        command(&mut admin, 10, &ping).await.get_f64("ok").ok(),
        Some(1.0)
    );
    let mut named = connect(server.address).await;
    let hello =
        doc! { "hello": 1, "client": { "application": { "name": "failing" } }, "$db": "admin" };
    command(&mut named, 1, &hello).await;
    let reply = command(&mut named, 2, &ping).await;
    assert_eq!(reply.get_i32("code").ok(), Some(2), "{reply}");
    // Turned off, the application's commands run again.
    let reply = command(
        &mut admin,
        11,
        &doc! { "configureFailPoint": "failCommand", "mode": "off", "$db": "admin" },
    )
    .await;
    assert_eq!(reply.get_f64("ok").ok(), Some(1.0), "{reply}");
    assert_eq!(
        command(&mut named, 3, &ping).await.get_f64("ok").ok(),
        Some(1.0)
    );
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_primary_transactional_write_commits_then_closes_and_the_retry_gets_the_result() {
    let server = start_with_test_commands().await;
    let mut stream = connect(server.address).await;
    let reply = command(
        &mut stream,
        1,
        &doc! { "configureFailPoint": "onPrimaryTransactionalWrite", "mode": { "times": 1 }, "$db": "admin" },
    )
    .await;
    assert_eq!(reply.get_f64("ok").ok(), Some(1.0), "{reply}");
    send(&mut stream, &op_msg(10, 0, &insert(Some(1)), &[])).await;
    assert!(read_reply(&mut stream).await.is_none(), "closed, no reply");
    let mut stream = connect(server.address).await;
    let reply = command(&mut stream, 11, &insert(Some(1))).await;
    assert_eq!(reply.get_i32("n").ok(), Some(1), "{reply}");
    assert_eq!(count(&mut stream).await, 1, "written once");
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn max_time_always_time_out_fails_commands_with_max_time_ms() {
    let server = start_with_test_commands().await;
    let mut stream = connect(server.address).await;
    let reply = command(
        &mut stream,
        1,
        &doc! { "configureFailPoint": "maxTimeAlwaysTimeOut", "mode": "alwaysOn", "$db": "admin" },
    )
    .await;
    assert_eq!(reply.get_f64("ok").ok(), Some(1.0), "{reply}");
    assert_eq!(count(&mut stream).await, 0);
    let reply = command(
        &mut stream,
        2,
        &doc! { "count": "c", "maxTimeMS": 1, "$db": "d" },
    )
    .await;
    assert_eq!(reply.get_i32("code").ok(), Some(50), "{reply}");
    server.stop().await;
}

/// Opens a cursor with `aggregate` on `d.c` and returns its id.
async fn open_cursor(stream: &mut TcpStream, request: i32, pipeline: Vec<Document>) -> i64 {
    let reply = command(
        stream,
        request,
        &doc! { "aggregate": "c", "pipeline": pipeline, "cursor": { "batchSize": 0 }, "$db": "d" },
    )
    .await;
    let id = reply
        .get_document("cursor")
        .and_then(|cursor| cursor.get_i64("id"))
        .unwrap_or(0);
    assert_ne!(id, 0, "an open cursor: {reply}");
    id
}

fn get_more(id: i64) -> Document {
    doc! { "getMore": id, "collection": "c", "$db": "d" }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fail_get_more_after_cursor_checkout_fails_and_closes_the_cursor_labelled_on_a_change_stream()
 {
    let server = start_with_test_commands().await;
    let mut stream = connect(server.address).await;
    command(&mut stream, 2, &insert(None)).await;
    command(&mut stream, 3, &insert(None)).await;
    let configure = |mode: Bson, data: Document| {
        doc! { "configureFailPoint": "failGetMoreAfterCursorCheckout", "mode": mode, "data": data, "$db": "admin" }
    };
    let reply = command(
        &mut stream,
        4,
        &configure(doc! { "times": 2 }.into(), doc! { "errorCode": 6 }),
    )
    .await;
    assert_eq!(reply.get_f64("ok").ok(), Some(1.0), "{reply}");

    // A change stream's getMore: the error, labelled resumable, and the cursor is gone.
    let stream_id = open_cursor(&mut stream, 5, vec![doc! { "$changeStream": {} }]).await;
    let reply = command(&mut stream, 6, &get_more(stream_id)).await;
    assert_eq!(reply.get_i32("code").ok(), Some(6), "{reply}");
    assert_eq!(labels(&reply), ["ResumableChangeStreamError"], "{reply}");
    // A plain cursor's getMore: the same error, no label.
    let plain_id = open_cursor(&mut stream, 7, vec![doc! { "$match": {} }]).await;
    let reply = command(&mut stream, 8, &get_more(plain_id)).await;
    assert_eq!(reply.get_i32("code").ok(), Some(6), "{reply}");
    assert!(labels(&reply).is_empty(), "{reply}");
    // The fail point fired twice and is off; the failed cursors were closed.
    for id in [stream_id, plain_id] {
        let reply = command(&mut stream, 9, &get_more(id)).await;
        assert_eq!(reply.get_i32("code").ok(), Some(43), "{reply}");
    }

    // A code MongoDB does not resume after is not labelled, even on a change stream.
    command(
        &mut stream,
        10,
        &configure(doc! { "times": 1 }.into(), doc! { "errorCode": 50 }),
    )
    .await;
    let stream_id = open_cursor(&mut stream, 11, vec![doc! { "$changeStream": {} }]).await;
    let reply = command(&mut stream, 12, &get_more(stream_id)).await;
    assert_eq!(reply.get_i32("code").ok(), Some(50), "{reply}");
    assert!(labels(&reply).is_empty(), "{reply}");
    // failCommand on a change stream's getMore fails before the checkout: never labelled.
    fail_point(
        &mut stream,
        doc! { "times": 1 }.into(),
        doc! { "failCommands": ["getMore"], "errorCode": 6 },
    )
    .await;
    let stream_id = open_cursor(&mut stream, 13, vec![doc! { "$changeStream": {} }]).await;
    let reply = command(&mut stream, 14, &get_more(stream_id)).await;
    assert_eq!(reply.get_i32("code").ok(), Some(6), "{reply}");
    assert!(labels(&reply).is_empty(), "{reply}");
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stable_api_test_commands_sit_in_their_api_versions() {
    let server = start_with_test_commands().await;
    let mut stream = connect(server.address).await;
    let run = |name: &str, strict: bool, deprecation_errors: bool| {
        let mut test = doc! { name: 1, "apiVersion": "1", "$db": "d" };
        if strict {
            test.insert("apiStrict", true);
        }
        if deprecation_errors {
            test.insert("apiDeprecationErrors", true);
        }
        test
    };
    // testVersion2 is in Version 2 only: refused under strict Version 1, run without strict.
    let reply = command(&mut stream, 1, &run("testVersion2", true, false)).await;
    assert_eq!(
        reply.get_str("codeName").ok(),
        Some("APIStrictError"),
        "{reply}"
    );
    assert!(
        reply
            .get_str("errmsg")
            .is_ok_and(|message| message.contains("command testVersion2 is not in API Version 1")),
        "{reply}"
    );
    let reply = command(&mut stream, 2, &run("testVersion2", false, false)).await;
    assert_eq!(reply.get_f64("ok").ok(), Some(1.0), "{reply}");
    // testDeprecation is deprecated in Version 1: refused only with apiDeprecationErrors.
    let reply = command(&mut stream, 3, &run("testDeprecation", true, true)).await;
    assert_eq!(reply.get_i32("code").ok(), Some(325), "{reply}");
    assert_eq!(
        reply.get_str("codeName").ok(),
        Some("APIDeprecationError"),
        "{reply}"
    );
    let reply = command(&mut stream, 4, &run("testDeprecation", true, false)).await;
    assert_eq!(reply.get_f64("ok").ok(), Some(1.0), "{reply}");
    // The others are in Version 1 and not deprecated there.
    for (request, name) in [
        (5, "testVersions1And2"),
        (6, "testRemoval"),
        (7, "testDeprecationInVersion2"),
    ] {
        let reply = command(&mut stream, request, &run(name, true, true)).await;
        assert_eq!(reply.get_f64("ok").ok(), Some(1.0), "{name}: {reply}");
    }
    server.stop().await;

    // Without test commands they do not exist.
    let server = start().await;
    let mut stream = connect(server.address).await;
    let reply = command(&mut stream, 8, &run("testVersions1And2", false, false)).await;
    assert_eq!(reply.get_i32("code").ok(), Some(59), "{reply}");
    server.stop().await;
}

/// What pymongo's and the Rust driver's change stream tests rely on: a change stream whose
/// getMore fails after checkout with a code the server labels resumable (6) resumes by itself
/// (the driver reopens it after its last token) and loses no event; a code it must not resume
/// after (50) reaches the application.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_driver_change_stream_resumes_after_the_fail_point_and_loses_no_event() {
    let server = start_with_test_commands().await;
    let uri = format!(
        "mongodb://{}/?serverSelectionTimeoutMS=10000&directConnection=true",
        server.address
    );
    let client = mongodb::Client::with_uri_str(uri).await.expect("a client");
    let collection = client.database("d").collection::<Document>("c");
    collection.insert_one(doc! { "_id": 0 }).await.unwrap();
    let admin = client.database("admin");
    let mut stream = collection.watch().await.expect("a change stream");
    collection.insert_one(doc! { "_id": 1 }).await.unwrap();
    let mut keys = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(20);
    while keys.is_empty() && Instant::now() < deadline {
        if let Some(event) = stream.next_if_any().await.expect("an event") {
            keys.push(event.document_key.expect("a document key"));
        }
    }
    assert_eq!(keys, [doc! { "_id": 1 }]);
    admin
        .run_command(doc! {
            "configureFailPoint": "failGetMoreAfterCursorCheckout",
            "mode": { "times": 1 },
            "data": { "errorCode": 6 },
        })
        .await
        .expect("the fail point");
    collection.insert_one(doc! { "_id": 2 }).await.unwrap();
    collection.insert_one(doc! { "_id": 3 }).await.unwrap();
    keys.clear();
    let deadline = Instant::now() + Duration::from_secs(20);
    while keys.len() < 2 && Instant::now() < deadline {
        if let Some(event) = stream.next_if_any().await.expect("resumed by the driver") {
            keys.push(event.document_key.expect("a document key"));
        }
    }
    assert_eq!(keys, [doc! { "_id": 2 }, doc! { "_id": 3 }]);

    // A code that is not resumable reaches the application.
    admin
        .run_command(doc! {
            "configureFailPoint": "failGetMoreAfterCursorCheckout",
            "mode": { "times": 1 },
            "data": { "errorCode": 50 },
        })
        .await
        .expect("the fail point");
    let error = stream
        .next_if_any()
        .await
        .expect_err("MaxTimeMSExpired is not resumed");
    match *error.kind {
        mongodb::error::ErrorKind::Command(ref failure) => assert_eq!(failure.code, 50),
        ref other => panic!("expected the command error, got {other:?}"),
    }
    drop(stream);
    client.shutdown().await;
    server.stop().await;
}
