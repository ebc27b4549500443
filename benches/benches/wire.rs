//! The wire layer's own cost: `find_one` by `_id` through the embedded API, the same through
//! the official Rust driver against an in-process `spillway serve` (the real command layer over
//! loopback TCP), and a raw loopback TCP round trip of a small message for reference.
//!
//! Issue 16's bar: the wire `find_one` within 3x of (embedded `find_one` + one round trip).
//! At the end the three figures and that ratio are printed and written to
//! `$CARGO_TARGET_DIR/wire-bench.md` (or `target/wire-bench.md`).
//!
//! This bench must never bind or connect anywhere but 127.0.0.1.

use std::fmt::Write as _;
use std::future::IntoFuture;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::time::Duration;

use bson::{Document, doc};
use criterion::Criterion;
use spillway::Database;
use spillway::command::Commands;
use spillway_server::{Server, ServerOptions};

/// Documents in each collection.
const DOCUMENTS: i64 = 10_000;

fn book(id: i64) -> Document {
    doc! { "_id": id, "title": format!("book {id}"), "pages": id % 700, "tags": ["a", "b"] }
}

/// A small deterministic generator, so that every row looks up the same keys.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: i64) -> i64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        i64::try_from(self.0 % u64::try_from(n).expect("positive")).expect("fits")
    }
}

/// A thread that answers every 64-byte message with the same 64 bytes, until the peer closes.
fn echo_server() -> std::net::SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind loopback");
    let address = listener.local_addr().expect("address");
    std::thread::spawn(move || {
        let (mut stream, _) = listener.accept().expect("accept");
        stream.set_nodelay(true).expect("nodelay");
        let mut buffer = [0u8; 64];
        while stream.read_exact(&mut buffer).is_ok() {
            if stream.write_all(&buffer).is_err() {
                break;
            }
        }
    });
    address
}

fn main() {
    let target_dir = std::env::var_os("CARGO_TARGET_DIR").map_or_else(
        || Path::new(env!("CARGO_MANIFEST_DIR")).join("../target"),
        PathBuf::from,
    );
    let mut criterion = Criterion::default()
        .sample_size(20)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(3))
        .output_directory(&target_dir.join("criterion-wire"))
        .configure_from_args();

    let database = Database::open_in_memory().expect("in-memory database");
    let embedded = database.collection::<Document>("embedded_books");
    embedded
        .insert_many((0..DOCUMENTS).map(book).collect::<Vec<_>>())
        .run()
        .expect("load the embedded collection");

    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a tokio runtime");
    let server = runtime
        .block_on(Server::bind(
            Commands::new(database.clone()),
            ServerOptions {
                port: 0,
                ..ServerOptions::default()
            },
        ))
        .expect("bind the server");
    let address = server.local_addr();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let serving = runtime.spawn(server.run_until(async {
        let _ = stopped.await;
    }));
    let client = runtime.block_on(async {
        let uri = format!("mongodb://{address}/?directConnection=true&maxPoolSize=1");
        let client = mongodb::Client::with_uri_str(uri).await.expect("a client");
        let books = client.database("bench").collection::<Document>("books");
        books
            .insert_many((0..DOCUMENTS).map(book).collect::<Vec<_>>())
            .await
            .expect("load over the wire");
        client
    });
    let books = client.database("bench").collection::<Document>("books");

    let mut group = criterion.benchmark_group("wire_find_one_by_id");
    let mut rng = Rng(0x5EED_0000_0000_0001);
    group.bench_function("embedded", |b| {
        b.iter(|| {
            embedded
                .find_one(doc! { "_id": rng.below(DOCUMENTS) })
                .run()
                .expect("find_one")
                .expect("found")
        });
    });
    let mut rng = Rng(0x5EED_0000_0000_0001);
    group.bench_function("wire_rust_driver", |b| {
        b.iter(|| {
            runtime
                .block_on(
                    books
                        .find_one(doc! { "_id": rng.below(DOCUMENTS) })
                        .into_future(),
                )
                .expect("find_one")
                .expect("found")
        });
    });
    let mut echo = TcpStream::connect(echo_server()).expect("connect to the echo thread");
    echo.set_nodelay(true).expect("nodelay");
    let mut buffer = [7u8; 64];
    group.bench_function("loopback_round_trip", |b| {
        b.iter(|| {
            echo.write_all(&buffer).expect("send");
            echo.read_exact(&mut buffer).expect("receive");
        });
    });
    group.finish();
    criterion.final_summary();

    let _ = stop.send(());
    drop(client);
    let _ = runtime.block_on(serving);

    // The ratio, from criterion's own estimates (mean, nanoseconds).
    let mean = |name: &str| -> Option<f64> {
        let path = target_dir
            .join("criterion-wire")
            .join("wire_find_one_by_id")
            .join(name)
            .join("new")
            .join("estimates.json");
        let text = std::fs::read_to_string(path).ok()?;
        let value: serde_json::Value = serde_json::from_str(&text).ok()?;
        value["mean"]["point_estimate"].as_f64()
    };
    if let (Some(embedded), Some(wire), Some(round_trip)) = (
        mean("embedded"),
        mean("wire_rust_driver"),
        mean("loopback_round_trip"),
    ) {
        let ratio = wire / (embedded + round_trip);
        let mut table = String::from("| row | mean µs |\n|---|---:|\n");
        for (name, nanos) in [
            ("embedded `find_one` by `_id`", embedded),
            ("`find_one` by `_id` over the wire (Rust driver)", wire),
            ("loopback TCP round trip (64 bytes)", round_trip),
        ] {
            let _ = writeln!(table, "| {name} | {:.1} |", nanos / 1000.0);
        }
        let _ = writeln!(
            table,
            "\nwire / (embedded + round trip) = {ratio:.2} (issue 16's bar: at most 3)"
        );
        println!("\n{table}");
        let _ = std::fs::write(target_dir.join("wire-bench.md"), table);
    }
}
