//! Server-side JavaScript must never hold up other clients: `$where` busy loops in eight
//! connections while another client's plain `find`s stay fast, each loop ends at the
//! script time budget without `maxTimeMS`, and `killOp` stops a running script.

use crate::common;

use std::time::{Duration, Instant};

use bson::{Document, doc};
use mongodb::Client;
use mongodb::options::ClientOptions;
use spillway::Database;
use spillway::command::Commands;

const BUSY_CONNECTIONS: usize = 8;
const MEASURED_FINDS: usize = 100;

async fn client(address: std::net::SocketAddr) -> Client {
    let uri = format!(
        "mongodb://{address}/?serverSelectionTimeoutMS=10000&directConnection=true&maxPoolSize=2"
    );
    Client::with_options(ClientOptions::parse(uri).await.expect("a valid URI")).expect("a client")
}

fn command_code(error: &mongodb::error::Error) -> Option<i32> {
    match *error.kind {
        mongodb::error::ErrorKind::Command(ref command) => Some(command.code),
        _ => None,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn where_busy_loops_in_eight_connections_leave_other_finds_fast() {
    let database = Database::open_in_memory().expect("in-memory database");
    // A short budget, so that every loop is cut off and started again several times while
    // the finds are measured: the starts and ends are part of the load.
    database.set_script_time_limit(Duration::from_millis(1500));
    let server = common::start_with(Commands::new(database), common::options()).await;
    let setup = client(server.address).await;
    let shop = setup.database("shop");
    shop.collection::<Document>("busy")
        .insert_many((0..10).map(|n| doc! { "_id": n }))
        .await
        .expect("insert busy");
    shop.collection::<Document>("plain")
        .insert_many((0..50).map(|n| doc! { "_id": n, "n": n }))
        .await
        .expect("insert plain");

    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let mut loops = Vec::new();
    for _ in 0..BUSY_CONNECTIONS {
        let busy_client = client(server.address).await;
        let stop = std::sync::Arc::clone(&stop);
        loops.push(tokio::spawn(async move {
            let busy = busy_client.database("shop").collection::<Document>("busy");
            let mut cut_off = 0;
            while !stop.load(std::sync::atomic::Ordering::SeqCst) {
                let started = Instant::now();
                let error = busy
                    .find_one(doc! { "$where": "function() { while (true) {} }" })
                    .await
                    .expect_err("an endless script fails at the time budget");
                assert_eq!(command_code(&error), Some(50), "{error}");
                assert!(
                    started.elapsed() < Duration::from_secs(10),
                    "a script ran {:?}, far past its 1.5 s budget",
                    started.elapsed()
                );
                cut_off += 1;
            }
            busy_client.shutdown().await;
            cut_off
        }));
    }
    // Let every loop start before measuring.
    tokio::time::sleep(Duration::from_millis(300)).await;

    let reader = client(server.address).await;
    let plain = reader.database("shop").collection::<Document>("plain");
    plain.find_one(doc! {}).await.expect("warm-up find");
    let mut latencies = Vec::with_capacity(MEASURED_FINDS);
    let measured = tokio::time::timeout(Duration::from_secs(120), async {
        for n in 0..MEASURED_FINDS {
            let started = Instant::now();
            let found = plain
                .find_one(doc! { "_id": (n % 50) as i32 })
                .await
                .expect("a plain find")
                .expect("the document");
            latencies.push(started.elapsed());
            assert_eq!(found.get_i32("n").ok(), Some((n % 50) as i32));
            // Spread the finds over several budgets of the loops.
            tokio::time::sleep(Duration::from_millis(30)).await;
        }
    })
    .await;
    stop.store(true, std::sync::atomic::Ordering::SeqCst);
    measured.expect("100 finds done within 120 s: scripts held up the reads");
    let mut cut_off = 0;
    for busy in loops {
        cut_off += busy.await.expect("a busy loop ran");
    }
    latencies.sort();
    let p50 = latencies[MEASURED_FINDS / 2];
    let p99 = latencies[MEASURED_FINDS * 99 / 100 - 1];
    eprintln!(
        "find latency under {BUSY_CONNECTIONS} $where loops ({cut_off} cut off): p50 {p50:?}, p99 {p99:?}, max {:?}",
        latencies[MEASURED_FINDS - 1]
    );
    assert!(
        cut_off >= BUSY_CONNECTIONS,
        "every loop was cut off at least once"
    );
    assert!(
        p99 < Duration::from_millis(50),
        "p99 of plain finds {p99:?} under $where loops (p50 {p50:?})"
    );
    reader.shutdown().await;
    setup.shutdown().await;
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kill_op_stops_a_running_script() {
    let database = Database::open_in_memory().expect("in-memory database");
    database.set_script_time_limit(Duration::from_secs(60));
    let server = common::start_with(Commands::new(database), common::options()).await;
    let setup = client(server.address).await;
    setup
        .database("shop")
        .collection::<Document>("busy")
        .insert_one(doc! { "_id": 1 })
        .await
        .expect("insert");
    let busy_client = client(server.address).await;
    let started = Instant::now();
    let busy = tokio::spawn(async move {
        let outcome = busy_client
            .database("shop")
            .collection::<Document>("busy")
            .find_one(doc! { "$where": "function() { while (true) {} }" })
            .await;
        busy_client.shutdown().await;
        outcome
    });
    // Find the script's operation in currentOp, then kill it.
    let admin = setup.database("admin");
    let opid = tokio::time::timeout(Duration::from_secs(20), async {
        loop {
            let reply = admin
                .run_command(doc! { "currentOp": 1 })
                .await
                .expect("currentOp");
            let found = reply
                .get_array("inprog")
                .expect("inprog")
                .iter()
                .filter_map(|operation| operation.as_document())
                .find(|operation| {
                    operation
                        .get_document("command")
                        .is_ok_and(|command| command.get_str("find").ok() == Some("busy"))
                })
                .map(|operation| operation.get("opid").cloned().expect("an opid"));
            if let Some(opid) = found {
                return opid;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await
    .expect("the running find shows in currentOp");
    let killed = admin
        .run_command(doc! { "killOp": 1, "op": opid })
        .await
        .expect("killOp");
    assert_eq!(killed.get_f64("ok").ok(), Some(1.0), "{killed}");
    let error = tokio::time::timeout(Duration::from_secs(20), busy)
        .await
        .expect("the killed find ends")
        .expect("the task ran")
        .expect_err("a killed script fails");
    assert_eq!(command_code(&error), Some(11601), "{error}");
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "killOp ended a 60 s script early"
    );
    setup.shutdown().await;
    server.stop().await;
}
