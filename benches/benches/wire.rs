//! The wire layer's own cost: `find_one` by `_id` through the embedded API; the same `find`
//! command sent as one OP_MSG over a plain blocking socket to an in-process `spillway serve`
//! (the real command layer over loopback TCP, with no client library in the way); the same
//! through the official Rust driver (which adds its own session, pool and async machinery);
//! and a raw loopback TCP round trip of a small message for reference.
//!
//! Issue 16's bar: the wire `find_one` within 3x of (embedded `find_one` + one round trip).
//! The bare OP_MSG row is the wire layer's own cost; the driver row is what a Rust
//! application sees.
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
use spillway_server::wire::{HEADER_LEN, Header, MAX_MESSAGE_SIZE, OpMsg, Request, decode_message};
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

/// Sends `message` and reads the reply to it: one OP_MSG each way, as a driver would.
fn round_trip(socket: &mut TcpStream, message: &OpMsg, request_id: i32) -> Document {
    let bytes = message.encode(request_id, 0).expect("encode the request");
    socket.write_all(&bytes).expect("send");
    let mut header = [0u8; HEADER_LEN];
    socket.read_exact(&mut header).expect("receive a header");
    let parsed = Header::parse(&header, MAX_MESSAGE_SIZE).expect("a valid reply header");
    assert_eq!(
        parsed.response_to, request_id,
        "the reply answers this request"
    );
    let mut whole = header.to_vec();
    whole.resize(parsed.length, 0);
    socket
        .read_exact(&mut whole[HEADER_LEN..])
        .expect("receive the body");
    match decode_message(&whole).expect("a valid reply") {
        Request::Msg(reply) => reply.body,
        Request::Query(_) => panic!("the server answered an OP_MSG with an OP_QUERY"),
    }
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
    let commands = Commands::new(database.clone());
    let mut rng = Rng(0x5EED_0000_0000_0001);
    group.bench_function("command_layer", |b| {
        b.iter(|| {
            let reply = commands.execute(doc! {
                "find": "books",
                "filter": { "_id": rng.below(DOCUMENTS) },
                "limit": 1_i64,
                "singleBatch": true,
                "$db": "bench",
            });
            assert_eq!(reply.get_f64("ok").ok(), Some(1.0), "{reply}");
        });
    });
    let mut socket = TcpStream::connect(address).expect("connect to the server");
    socket.set_nodelay(true).expect("nodelay");
    let mut rng = Rng(0x5EED_0000_0000_0001);
    let mut request_id = 0;
    group.bench_function("wire_op_msg", |b| {
        b.iter(|| {
            request_id += 1;
            let find = doc! {
                "find": "books",
                "filter": { "_id": rng.below(DOCUMENTS) },
                "limit": 1_i64,
                "singleBatch": true,
                "$db": "bench",
            };
            let reply = round_trip(&mut socket, &OpMsg::new(find), request_id);
            assert_eq!(reply.get_f64("ok").ok(), Some(1.0), "{reply}");
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
    if let (Some(embedded), Some(layer), Some(wire), Some(driver), Some(round_trip)) = (
        mean("embedded"),
        mean("command_layer"),
        mean("wire_op_msg"),
        mean("wire_rust_driver"),
        mean("loopback_round_trip"),
    ) {
        let ratio = wire / (embedded + round_trip);
        let driver_ratio = driver / (embedded + round_trip);
        let mut table = String::from("| row | mean µs |\n|---|---:|\n");
        for (name, nanos) in [
            ("embedded `find_one` by `_id`", embedded),
            (
                "the same `find` command through the command layer, no socket",
                layer,
            ),
            ("`find` by `_id` as one OP_MSG over a blocking socket", wire),
            ("`find_one` by `_id` through the Rust driver", driver),
            ("loopback TCP round trip (64 bytes)", round_trip),
        ] {
            let _ = writeln!(table, "| {name} | {:.1} |", nanos / 1000.0);
        }
        let _ = writeln!(
            table,
            "\nOP_MSG / (embedded + round trip) = {ratio:.2} (issue 16's bar: at most 3); \
             through the Rust driver: {driver_ratio:.2}"
        );
        println!("\n{table}");
        let _ = std::fs::write(target_dir.join("wire-bench.md"), table);
    }
}
