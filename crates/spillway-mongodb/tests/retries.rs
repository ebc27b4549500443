//! How the backend runs a transaction again, as the driver's `withTransaction` does, made
//! deterministic with MongoDB's `failCommand` fail point on `spillway serve` (limited to the
//! test's own client by its application name): a transient error (112 WriteConflict inside a
//! transaction) runs the whole transaction again and the write applies once; a commit whose
//! reply is lost is sent again and applies once; an error that is not transient reaches the
//! caller at once with its code, nothing applied; the time limit ends the retries.

use crate::common;

use std::time::{Duration, Instant};

use mongodb::sync::Client;
use spillway_mongodb::bson::{Bson, Document, doc};
use spillway_mongodb::{Pattern, PatternedDatabase};

/// A database with an outlier policy and a book of 5 buyers, its client recording commands.
fn book(app: &str, time_limit: Duration) -> (Client, common::Sent, PatternedDatabase) {
    let (client, sent) = common::monitored_client_named(common::server(), app);
    let policy = Pattern::outlier("books", "buyers")
        .threshold(3)
        .bucket_capacity(2);
    let shop =
        PatternedDatabase::with_time_limit(&client, &common::unique("db"), time_limit, [policy])
            .expect("the database opens");
    shop.collection("books")
        .insert_one(doc! { "_id": 1, "buyers": [0, 1, 2, 3, 4] })
        .run()
        .expect("the book");
    sent.lock().expect("the log").clear();
    (client, sent, shop)
}

fn fail(client: &Client, app: &str, mode: Bson, data: Document) {
    let mut data = data;
    data.insert("appName", app);
    common::configure(
        client,
        doc! { "configureFailPoint": "failCommand", "mode": mode, "data": data },
    );
}

fn off(client: &Client) {
    common::configure(
        client,
        doc! { "configureFailPoint": "failCommand", "mode": "off" },
    );
}

fn buyers(shop: &PatternedDatabase) -> Vec<Bson> {
    shop.collection("books")
        .find_one(doc! { "_id": 1 })
        .run()
        .expect("the book reads")
        .expect("the book")
        .get_array("buyers")
        .expect("buyers")
        .clone()
}

fn count(sent: &common::Sent, entry: &str) -> usize {
    sent.lock()
        .expect("the log")
        .iter()
        .filter(|(name, _)| name == entry)
        .count()
}

fn push(shop: &PatternedDatabase, value: i32) -> spillway_mongodb::Result<()> {
    shop.collection("books")
        .update_one(doc! { "_id": 1 }, doc! { "$push": { "buyers": value } })
        .run()
        .map(drop)
}

fn expected(values: &[i32]) -> Vec<Bson> {
    values.iter().map(|value| Bson::Int32(*value)).collect()
}

// The fail point is one per server: the tests take turns.
static FAIL_POINT: std::sync::Mutex<()> = std::sync::Mutex::new(());

#[test]
fn write_conflicts_run_the_whole_transaction_again_and_it_applies_once() {
    let _turn = FAIL_POINT
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let app = common::unique("conflicts");
    let (client, sent, shop) = book(&app, Duration::from_secs(30));
    fail(
        &client,
        &app,
        Bson::Document(doc! { "times": 2 }),
        doc! { "failCommands": ["update"], "errorCode": 112 },
    );
    push(&shop, 5).expect("the push succeeds on its third run");
    off(&client);
    assert_eq!(count(&sent, "failed update 112"), 2);
    assert_eq!(count(&sent, "commitTransaction"), 1, "committed once");
    assert_eq!(buyers(&shop), expected(&[0, 1, 2, 3, 4, 5]), "applied once");
    assert_eq!(shop.verify().expect("verify"), Vec::new());
}

#[test]
fn a_commit_whose_reply_is_lost_is_sent_again_and_applies_once() {
    let _turn = FAIL_POINT
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let app = common::unique("lost");
    let (client, sent, shop) = book(&app, Duration::from_secs(30));
    fail(
        &client,
        &app,
        Bson::Document(doc! { "times": 1 }),
        doc! { "failCommands": ["commitTransaction"], "closeConnection": true },
    );
    push(&shop, 5).expect("the push succeeds");
    off(&client);
    assert!(
        count(&sent, "commitTransaction") >= 2,
        "the commit was sent again: {:?}",
        sent.lock().expect("the log")
    );
    assert_eq!(buyers(&shop), expected(&[0, 1, 2, 3, 4, 5]), "applied once");
    assert_eq!(shop.verify().expect("verify"), Vec::new());
}

#[test]
fn an_error_that_is_not_transient_reaches_the_caller_with_its_code() {
    let _turn = FAIL_POINT
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let app = common::unique("fatal");
    let (client, sent, shop) = book(&app, Duration::from_secs(30));
    fail(
        &client,
        &app,
        Bson::Document(doc! { "times": 1 }),
        doc! { "failCommands": ["update"], "errorCode": 2 },
    );
    let error = push(&shop, 5).expect_err("BadValue is not transient");
    off(&client);
    assert_eq!(error.code(), Some(2), "{error}");
    assert_eq!(count(&sent, "failed update 2"), 1, "run once");
    assert_eq!(count(&sent, "commitTransaction"), 0);
    assert_eq!(buyers(&shop), expected(&[0, 1, 2, 3, 4]), "nothing applied");
}

#[test]
fn the_time_limit_ends_the_retries() {
    let _turn = FAIL_POINT
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let app = common::unique("limit");
    let (client, sent, shop) = book(&app, Duration::from_millis(300));
    fail(
        &client,
        &app,
        Bson::String("alwaysOn".to_string()),
        doc! { "failCommands": ["update"], "errorCode": 112 },
    );
    let started = Instant::now();
    let error = push(&shop, 5).expect_err("conflicts until the time limit");
    let elapsed = started.elapsed();
    off(&client);
    assert_eq!(error.code(), Some(112), "{error}");
    assert!(
        error.has_label("TransientTransactionError"),
        "the label reaches the caller: {error}"
    );
    assert!(
        elapsed >= Duration::from_millis(300) && elapsed < Duration::from_secs(10),
        "gave up after {elapsed:?}"
    );
    assert!(count(&sent, "failed update 112") > 1, "it was run again");
    assert_eq!(buyers(&shop), expected(&[0, 1, 2, 3, 4]), "nothing applied");
}
