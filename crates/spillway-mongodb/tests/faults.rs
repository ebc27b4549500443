//! Kill -9 of the server under the MongoDB backend: `spillway serve` runs in a child process
//! (this test binary re-executed by the `spillway-crash` harness, serving a database
//! directory that fsyncs every commit, as `spillway serve DIR` does), the parent writes
//! through `PatternedDatabase` and the official driver, kills the server with SIGKILL at a
//! random moment, starts it again on the same directory, and checks what survived.
//!
//! - `push`: `$push`es of 0, 1, 2, ... onto one book of an outlier policy (threshold 5,
//!   buckets of 4). After each restart the logical array is exactly `0..m`, with `m - 1`
//!   the last acknowledged value or the one in flight: nothing acknowledged is lost, nothing
//!   duplicated or reordered; `verify` is clean and the logical length agrees.
//! - `migrate`: 1,000 plain documents get an outlier policy, whose migration (batches of
//!   256, each a transaction) the kill interrupts. After the restart, opening the database
//!   resumes it (or, when the kill came before the declaration committed, declaring again
//!   migrates from the start): every logical document is the one inserted, the stored
//!   layout is split, `verify` is clean.
//!
//! Kills per scenario: `SPILLWAY_CRASH_ITERATIONS` (default 3).

use std::net::{SocketAddr, TcpListener};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use mongodb::sync::Client;
use spillway::{Database, DatabaseOptions, Durability};
use spillway_crash::{Acks, Child, Random, child_directory, iterations};
use spillway_mongodb::bson::{Bson, Document, doc};
use spillway_mongodb::{Pattern, PatternedDatabase};
use spillway_server::ServerOptions;

const CHILD_ENV: &str = "SPILLWAY_MONGODB_FAULT_CHILD";
const PORT_ENV: &str = "SPILLWAY_MONGODB_FAULT_PORT";
const DATABASE: &str = "shop";
const MIGRATED_DOCUMENTS: i32 = 1000;
/// How long a write keeps being retried against a server that is gone.
const GIVE_UP_AFTER: Duration = Duration::from_millis(1500);

/// The child: `spillway serve` on the directory and port the parent chose, until killed.
fn serve(dir: &Path) -> ! {
    let port: u16 = std::env::var(PORT_ENV)
        .expect("child: a port")
        .parse()
        .expect("child: a port number");
    let database = Database::open_with(
        dir,
        &DatabaseOptions::default().durability(Durability::SyncEveryCommit),
    )
    .expect("child: the database opens");
    let options = ServerOptions {
        port,
        ..ServerOptions::default()
    };
    spillway_server::serve_blocking(database, options, |_| Acks::new().line("ready"))
        .expect("child: serve");
    unreachable!("child: the server stopped without being killed")
}

/// A free loopback port (the child binds it a moment later).
fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .map(|address| address.port())
        .expect("a free port")
}

/// The server on `dir`, started and ready, with its address.
fn start_server(dir: &Path, context: &str) -> (Child, SocketAddr) {
    let port = free_port();
    let child = Child::spawn(CHILD_ENV, dir, &[(PORT_ENV, &port.to_string())]);
    child.wait_for("ready", context);
    (child, SocketAddr::from(([127, 0, 0, 1], port)))
}

fn client(address: SocketAddr) -> Client {
    Client::with_uri_str(format!(
        "mongodb://{address}/?serverSelectionTimeoutMS=500&connectTimeoutMS=500&appName=faults"
    ))
    .expect("a client")
}

fn open(client: &Client, patterns: Vec<Pattern>) -> PatternedDatabase {
    PatternedDatabase::with_time_limit(client, DATABASE, GIVE_UP_AFTER, patterns)
        .expect("the database opens")
}

fn push_policy() -> Pattern {
    Pattern::outlier("books", "tags")
        .threshold(5)
        .bucket_capacity(4)
        .into()
}

// ---------------------------------------------------------------------------------------
// push

/// Pushes 0, 1, 2, ... (from `first`) until the server is gone; each value is recorded in
/// `acknowledged` once its `update_one` returned.
fn pusher(
    address: SocketAddr,
    first: i64,
    acknowledged: Arc<Mutex<Vec<i64>>>,
    killed: Arc<AtomicBool>,
) -> std::thread::JoinHandle<()> {
    std::thread::spawn(move || {
        let client = client(address);
        let shop = open(&client, vec![push_policy()]);
        let books = shop.collection("books");
        let mut next = first;
        loop {
            let pushed = books
                .update_one(doc! { "_id": 1 }, doc! { "$push": { "tags": next } })
                .run();
            match pushed {
                Ok(_) => acknowledged.lock().expect("the log").push(next),
                Err(error) if killed.load(Ordering::SeqCst) => {
                    eprintln!("push {next} failed after the kill: {error}");
                    break;
                }
                Err(error) => panic!("push {next} failed with the server up: {error}"),
            }
            next += 1;
        }
        drop(shop);
        client.shutdown().immediate(true).run();
    })
}

fn check_book(shop: &PatternedDatabase, acknowledged: &[i64], iteration: u32) -> i64 {
    let books = shop.collection("books");
    let book = books
        .find_one(doc! { "_id": 1 })
        .run()
        .expect("the book reads")
        .expect("the book exists");
    let tags = book.get_array("tags").expect("tags");
    let length = tags.len() as i64;
    let expected: Vec<Bson> = (0..length).map(Bson::Int64).collect();
    assert_eq!(
        tags, &expected,
        "kill {iteration}: the logical array is 0..{length}, in order"
    );
    let last = acknowledged.last().copied().unwrap_or(-1);
    assert!(
        length == last + 1 || length == last + 2,
        "kill {iteration}: {length} elements, the last acknowledged push was {last}"
    );
    assert_eq!(
        books.array_len(1, "tags").expect("array_len"),
        Some(length as u64)
    );
    assert_eq!(
        shop.verify().expect("verify"),
        Vec::new(),
        "kill {iteration}"
    );
    length
}

fn push_scenario(random: &mut Random) {
    let dir = tempfile::tempdir().expect("a directory");
    let (mut server, address) = start_server(dir.path(), "first start");
    {
        let client = client(address);
        let shop = open(&client, vec![push_policy()]);
        shop.collection("books")
            .insert_one(doc! { "_id": 1, "tags": [] })
            .run()
            .expect("the book");
        drop(shop);
        client.shutdown().immediate(true).run();
    }
    let mut address = address;
    let mut length = 0;
    let kills = iterations(3);
    for iteration in 1..=kills {
        let acknowledged = Arc::new(Mutex::new(Vec::new()));
        let killed = Arc::new(AtomicBool::new(false));
        let writer = pusher(
            address,
            length,
            Arc::clone(&acknowledged),
            Arc::clone(&killed),
        );
        server.sleep_alive(
            Duration::from_millis(300 + random.below(900)),
            format!("push, kill {iteration}"),
        );
        killed.store(true, Ordering::SeqCst);
        server.kill();
        writer.join().expect("the pusher");
        let acknowledged = acknowledged.lock().expect("the log").clone();
        let (restarted, new_address) = start_server(dir.path(), "restart");
        server = restarted;
        address = new_address;
        let client = client(address);
        let shop = open(&client, vec![push_policy()]);
        let before = length;
        length = check_book(&shop, &acknowledged, iteration);
        println!(
            "push, kill {iteration}: {} pushes acknowledged, the book has {length} elements (was {before})",
            acknowledged.len()
        );
        assert!(
            acknowledged.is_empty() || acknowledged[0] == before,
            "the pusher started from the length"
        );
        drop(shop);
        client.shutdown().immediate(true).run();
    }
    assert!(length > 0, "no push was acknowledged before any kill");
    server.kill();
}

// ---------------------------------------------------------------------------------------
// migrate

fn documents() -> Vec<Document> {
    (0..MIGRATED_DOCUMENTS)
        .map(|id| {
            let tags: Vec<i32> = (0..id % 13).map(|tag| id * 100 + tag).collect();
            doc! { "_id": id, "title": format!("book {id}"), "tags": tags }
        })
        .collect()
}

fn migrate_scenario(random: &mut Random) {
    let mut interrupted = 0;
    let kills = iterations(3);
    for iteration in 1..=kills {
        let dir = tempfile::tempdir().expect("a directory");
        let (server, address) = start_server(dir.path(), "migrate start");
        let inserted = documents();
        {
            let client = client(address);
            // Plain documents, written by the plain driver before any policy exists.
            client
                .database(DATABASE)
                .collection::<Document>("books")
                .insert_many(inserted.clone())
                .run()
                .expect("the plain documents");
            client.shutdown().immediate(true).run();
        }
        let killed = Arc::new(AtomicBool::new(false));
        let declarer = {
            let killed = Arc::clone(&killed);
            std::thread::spawn(move || {
                let client = client(address);
                let outcome = PatternedDatabase::with_time_limit(
                    &client,
                    DATABASE,
                    GIVE_UP_AFTER,
                    [push_policy()],
                );
                match outcome {
                    Ok(_) => {}
                    Err(error) if killed.load(Ordering::SeqCst) => {
                        eprintln!("the migration failed after the kill: {error}");
                    }
                    Err(error) => panic!("the migration failed with the server up: {error}"),
                }
                client.shutdown().immediate(true).run();
            })
        };
        let mut server = server;
        server.sleep_alive(
            Duration::from_millis(200 + random.below(1000)),
            format!("migrate, kill {iteration}"),
        );
        killed.store(true, Ordering::SeqCst);
        server.kill();
        declarer.join().expect("the declaring thread");

        let (server, address) = start_server(dir.path(), "migrate restart");
        let client = client(address);
        let started = Instant::now();
        // What was committed: the policy (applying, with its progress) or nothing.
        let plain = client
            .database(DATABASE)
            .collection::<Document>("spillway_policies")
            .find_one(doc! {})
            .run()
            .expect("the policy store reads");
        let progress = plain.as_ref().map_or_else(
            || "no policy".to_string(),
            |record| {
                record
                    .get_array("policies")
                    .ok()
                    .and_then(|policies| policies.first())
                    .and_then(Bson::as_document)
                    .and_then(|policy| policy.get_document("progress").ok())
                    .map_or_else(String::new, ToString::to_string)
            },
        );
        let split_before = client
            .database(DATABASE)
            .collection::<Document>("extra_books")
            .count_documents(doc! {})
            .run()
            .unwrap_or(0);
        // Opening with the policy resumes an unfinished migration, or declares it again.
        let shop = open(&client, vec![push_policy()]);
        if progress.contains("applying") {
            interrupted += 1;
        }
        println!(
            "migrate, kill {iteration}: found {progress} and {split_before} overflow documents; finished in {:.1?}",
            started.elapsed()
        );
        let expanded = shop
            .collection("books")
            .find(doc! {})
            .run()
            .expect("the expanded books");
        assert!(
            expanded == inserted,
            "kill {iteration}: the logical documents are the inserted ones"
        );
        let stored = shop
            .collection("books")
            .find(doc! {})
            .stored(true)
            .run()
            .expect("the stored books");
        assert!(
            stored
                .iter()
                .all(|book| book.get_array("tags").is_ok_and(|tags| tags.len() <= 5)),
            "kill {iteration}: every stored book is split"
        );
        assert_eq!(
            shop.verify().expect("verify"),
            Vec::new(),
            "kill {iteration}"
        );
        drop(shop);
        client.shutdown().immediate(true).run();
        server.kill();
    }
    println!("migrate: {interrupted} of {kills} kills interrupted a declared migration");
}

fn main() {
    if let Some(dir) = child_directory(CHILD_ENV) {
        serve(&dir);
    }
    let mut random = Random::from_clock();
    let started = Instant::now();
    push_scenario(&mut random);
    println!("push: done in {:.1?}", started.elapsed());
    let started = Instant::now();
    migrate_scenario(&mut random);
    println!("migrate: done in {:.1?}", started.elapsed());
}
