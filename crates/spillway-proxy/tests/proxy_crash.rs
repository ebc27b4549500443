//! kill -9 of `spillway serve --upstream` (this test binary, re-executed as the proxy) while
//! clients push to one book through it, and in the middle of a migration it was running.
//!
//! The upstream (`spillway serve` over an in-memory database) runs in this process for the
//! whole test; proxies come and go. Afterwards, read through the pattern layer directly:
//! every acknowledged push is present exactly once, no push is present twice, the migration
//! finishes from the next proxy, and `verify` finds nothing wrong.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use spillway::Database;
use spillway::command::Commands;
use spillway_crash::{Child, Random, child_directory, iterations};
use spillway_mongodb::mongodb::bson::{Bson, Document, doc};
use spillway_mongodb::mongodb::sync::Client;
use spillway_mongodb::{Pattern, PatternedDatabase};
use spillway_proxy::ProxyExecutor;
use spillway_server::{Executor, Server, ServerOptions};

/// Set in a child: the upstream's address; the child serves a proxy in front of it.
const CHILD_ENV: &str = "SPILLWAY_PROXY_CRASH_UPSTREAM";
/// Set in a child: the port the proxy binds.
const PORT_ENV: &str = "SPILLWAY_PROXY_CRASH_PORT";

/// Writers pushing at once, each through its own client.
const WRITERS: usize = 8;

fn serve_on(runtime: &tokio::runtime::Runtime, executor: impl Executor, port: u16) -> SocketAddr {
    let server = runtime
        .block_on(Server::bind(
            executor,
            ServerOptions {
                port,
                ..ServerOptions::default()
            },
        ))
        .expect("binds");
    let address = server.local_addr();
    runtime.spawn(server.run_until(std::future::pending::<()>()));
    address
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a runtime")
}

/// The child: a proxy in front of the upstream, until it is killed.
fn run_proxy(upstream: &Path) -> ! {
    let upstream = upstream.to_str().expect("an address");
    let port: u16 = std::env::var(PORT_ENV)
        .expect("the port")
        .parse()
        .expect("a port number");
    let executor = ProxyExecutor::new(&format!("mongodb://{upstream}/")).expect("a proxy");
    let runtime = runtime();
    serve_on(&runtime, executor, port);
    println!("ready");
    loop {
        std::thread::sleep(Duration::from_secs(60));
    }
}

/// A loopback port nothing listens on now.
fn free_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("a port");
    listener.local_addr().expect("its address").port()
}

/// Starts a proxy child in front of `upstream` and waits until it listens.
fn proxy(upstream: SocketAddr, context: &str) -> (Child, SocketAddr) {
    let port = free_port();
    let child = Child::spawn(
        CHILD_ENV,
        Path::new(&upstream.to_string()),
        &[(PORT_ENV, &port.to_string())],
    );
    child.wait_for("ready", context);
    (child, SocketAddr::from(([127, 0, 0, 1], port)))
}

fn client(address: SocketAddr) -> Client {
    // No retries: a write is acknowledged by the reply the proxy sent, or it is not.
    Client::with_uri_str(format!(
        "mongodb://{address}/?directConnection=true&retryWrites=false&retryReads=false\
         &serverSelectionTimeoutMS=3000&connectTimeoutMS=3000"
    ))
    .expect("a client")
}

/// Pushes through proxies killed at random moments: every acknowledged push stays, once.
fn pushes_survive_kills(upstream: SocketAddr, random: &mut Random) {
    let direct = client(upstream);
    let shop = PatternedDatabase::new(
        &direct,
        "crash_push",
        [Pattern::outlier("books", "buyers").threshold(20)],
    )
    .expect("the policy");
    let books = shop.collection("books");
    books
        .insert_one(doc! { "_id": 1, "buyers": [] })
        .run()
        .expect("the book");
    let acknowledged = Arc::new(Mutex::new(Vec::<String>::new()));
    for iteration in 0..iterations(3) {
        let (mut child, address) = proxy(upstream, &format!("push iteration {iteration}"));
        let stop = Arc::new(AtomicBool::new(false));
        let writers: Vec<_> = (0..WRITERS)
            .map(|writer| {
                let acknowledged = Arc::clone(&acknowledged);
                let stop = Arc::clone(&stop);
                std::thread::spawn(move || {
                    let books = client(address)
                        .database("crash_push")
                        .collection::<Document>("books");
                    for push in 0.. {
                        if stop.load(Ordering::SeqCst) {
                            break;
                        }
                        let value = format!("i{iteration}-w{writer}-{push}");
                        let pushed = books
                            .update_one(
                                doc! { "_id": 1 },
                                doc! { "$push": { "buyers": value.clone() } },
                            )
                            .run();
                        match pushed {
                            Ok(result) if result.modified_count == 1 => {
                                acknowledged.lock().expect("the list").push(value);
                            }
                            Ok(result) => panic!("a push modified nothing: {result:?}"),
                            // The proxy was killed: this push is not acknowledged.
                            Err(_) => break,
                        }
                    }
                })
            })
            .collect();
        child.sleep_alive(
            Duration::from_millis(300 + random.below(900)),
            format!("push iteration {iteration}"),
        );
        child.kill();
        stop.store(true, Ordering::SeqCst);
        for writer in writers {
            writer.join().expect("a writer");
        }
    }
    let book = books
        .find_one(doc! { "_id": 1 })
        .run()
        .expect("read the book")
        .expect("the book");
    let mut present: HashMap<String, usize> = HashMap::new();
    for buyer in book.get_array("buyers").expect("buyers") {
        *present
            .entry(buyer.as_str().expect("a string").to_owned())
            .or_default() += 1;
    }
    let acknowledged = acknowledged.lock().expect("the list");
    assert!(
        !acknowledged.is_empty(),
        "no push was acknowledged before the kills"
    );
    for value in acknowledged.iter() {
        assert_eq!(
            present.get(value),
            Some(&1),
            "acknowledged push {value} is not present exactly once"
        );
    }
    let twice: Vec<_> = present.iter().filter(|(_, count)| **count > 1).collect();
    assert!(twice.is_empty(), "pushes present twice: {twice:?}");
    assert!(shop.verify().expect("verify").is_empty());
    println!(
        "pushes: {} acknowledged through {} killed proxies, each present once ({} present)",
        acknowledged.len(),
        iterations(3),
        present.len()
    );
}

/// A migration a killed proxy was running is finished by the next proxy.
fn migration_resumes_from_another_proxy(upstream: SocketAddr, random: &mut Random) {
    const DOCUMENTS: i32 = 2_000;
    const LENGTH: i32 = 30;
    let direct = client(upstream);
    let plain = direct
        .database("crash_migration")
        .collection::<Document>("books");
    let buyers = |id: i32| -> Vec<Bson> {
        (0..LENGTH)
            .map(|n| Bson::String(format!("b{id}-{n}")))
            .collect()
    };
    plain
        .insert_many((0..DOCUMENTS).map(|id| doc! { "_id": id, "buyers": buyers(id) }))
        .run()
        .expect("the books");
    let (mut child, address) = proxy(upstream, "migration");
    let declaring = std::thread::spawn(move || {
        // Killed mid-way, most likely: the outcome does not matter, only what stays.
        let _ = client(address)
            .database("crash_migration")
            .run_command(doc! { "setPattern": "books", "outlier": "buyers", "threshold": 5 })
            .run();
    });
    // Kill once the declaration is stored (the migration's batches follow it), at a random
    // moment of the migration.
    let record_collection = direct
        .database("crash_migration")
        .collection::<Document>(spillway_mongodb::POLICY_COLLECTION);
    for _ in 0..3_000 {
        let declared = record_collection
            .count_documents(doc! { "policies.0": { "$exists": true } })
            .run()
            .expect("read the policy record");
        if declared > 0 {
            break;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    child.sleep_alive(Duration::from_millis(random.below(150)), "migration");
    child.kill();
    declaring.join().expect("the declaring thread");
    // Where the kill landed, read from the policy record the proxy keeps upstream.
    let record = direct
        .database("crash_migration")
        .collection::<Document>(spillway_mongodb::POLICY_COLLECTION)
        .find_one(doc! {})
        .run()
        .expect("the policy record");
    let killed_at = match record
        .as_ref()
        .and_then(|record| record.get_array("policies").ok())
    {
        Some(policies) if !policies.is_empty() => policies[0]
            .as_document()
            .and_then(|policy| policy.get_document("progress").ok())
            .and_then(|progress| progress.get_str("state").ok())
            .unwrap_or("unknown")
            .to_owned(),
        _ => "before the declaration".to_owned(),
    };

    let (child, address) = proxy(upstream, "after the migration's kill");
    let database = client(address).database("crash_migration");
    let declared = database
        .run_command(doc! { "getPatterns": "books" })
        .run()
        .expect("getPatterns");
    if declared.get_array("patterns").expect("patterns").is_empty() {
        // Killed before the declaration committed: declare it through this proxy.
        database
            .run_command(doc! { "setPattern": "books", "outlier": "buyers", "threshold": 5 })
            .run()
            .expect("setPattern");
    }
    let books = database.collection::<Document>("books");
    for id in [0, DOCUMENTS / 2, DOCUMENTS - 1] {
        let book = books
            .find_one(doc! { "_id": id })
            .run()
            .expect("find")
            .expect("the book");
        assert_eq!(book.get_array("buyers").expect("buyers"), &buyers(id));
    }
    assert_eq!(
        books.count_documents(doc! {}).run().expect("count"),
        DOCUMENTS as u64
    );
    let stored = database
        .collection::<Document>("system.stored.books")
        .find_one(doc! { "_id": DOCUMENTS - 1 })
        .run()
        .expect("find")
        .expect("the stored book");
    assert_eq!(
        stored.get_array("buyers").expect("buyers").len(),
        5,
        "the last document was migrated"
    );
    let violations = database
        .run_command(doc! { "verifyPatterns": 1 })
        .run()
        .expect("verify");
    assert_eq!(
        violations
            .get_array("violations")
            .expect("violations")
            .len(),
        0,
        "{violations}"
    );
    child.kill();
    println!(
        "migration: proxy killed with the policy {killed_at}; finished by the next proxy, verify clean"
    );
}

fn main() {
    if let Some(upstream) = child_directory(CHILD_ENV) {
        run_proxy(&upstream);
    }
    let runtime = runtime();
    let upstream = serve_on(
        &runtime,
        Commands::new(Database::open_in_memory().expect("an in-memory database")),
        0,
    );
    let mut random = Random::from_clock();
    pushes_survive_kills(upstream, &mut random);
    migration_resumes_from_another_proxy(upstream, &mut random);
}
