//! The limits that hold before any command runs, byte by byte over real sockets: nesting
//! depth answered with Overflow (15) and the connection going on, lengths refused from the
//! header, the shared buffer budget, the message and idle timeouts, the limits before
//! authentication, and the connections per address with room left for other addresses.

use crate::common;

use std::net::{IpAddr, SocketAddr};
use std::time::{Duration, Instant};

use bson::{Bson, Document, doc};
use common::{
    Echo, assert_closed, assert_serving, command, connect, message, op_msg, op_query, options,
    read_reply, send, start, start_with,
};
use spillway::Database;
use spillway::command::Commands;
use spillway_server::fuzzing::nested_message;
use spillway_server::wire::MAX_BSON_DEPTH;
use spillway_server::{Limits, ServerOptions};
use tokio::io::AsyncWriteExt;
use tokio::net::{TcpSocket, TcpStream};

/// A value that, as a field of a top-level document, makes it nest `levels` levels
/// (`levels` >= 1): `{n: {n: ... {x: 1}}}`.
fn nest(levels: usize) -> Bson {
    let mut value = Bson::Document(doc! { "x": 1 });
    for _ in 1..levels {
        value = Bson::Document(doc! { "n": value });
    }
    value
}

/// `$add` nested until the expression nests `levels` levels (two per `$add`).
fn nested_add(levels: usize) -> Bson {
    let mut expression = Bson::Int32(1);
    for _ in 0..levels / 2 {
        expression = Bson::Document(doc! { "$add": [expression, 1] });
    }
    expression
}

/// `$and` nested until the filter nests `levels` levels (two per `$and`: its array and the
/// document in it), for the command layer's recursive filter parser.
fn nested_and(levels: usize) -> Document {
    let mut filter = doc! { "x": 1 };
    for _ in 0..levels / 2 {
        filter = doc! { "$and": [filter] };
    }
    filter
}

fn limits(change: impl FnOnce(&mut Limits)) -> ServerOptions {
    let mut options = options();
    change(&mut options.limits);
    options
}

/// Connects from `source` (any 127.x address is loopback on Linux).
async fn connect_from(source: &str, address: SocketAddr) -> TcpStream {
    let socket = TcpSocket::new_v4().unwrap();
    socket
        .bind(SocketAddr::new(source.parse::<IpAddr>().unwrap(), 0))
        .unwrap();
    socket.connect(address).await.expect("connect")
}

async fn ping_from(source: &str, address: SocketAddr) -> Option<f64> {
    let mut stream = connect_from(source, address).await;
    send(
        &mut stream,
        &op_msg(1, 0, &doc! { "ping": 1, "$db": "admin" }, &[]),
    )
    .await;
    let reply = read_reply(&mut stream).await?;
    reply.msg_document().get_f64("ok").ok()
}

fn assert_overflow(reply: &Document) {
    assert_eq!(reply.get_f64("ok").ok(), Some(0.0), "{reply}");
    assert_eq!(reply.get_i32("code").ok(), Some(15), "{reply}");
    assert_eq!(reply.get_str("codeName").ok(), Some("Overflow"));
    assert!(
        reply
            .get_str("errmsg")
            .unwrap()
            .contains("maximum nested object depth"),
        "{reply}"
    );
}

/// Sends a message and returns the document of its reply (OP_MSG or OP_REPLY).
async fn answer(stream: &mut TcpStream, bytes: &[u8]) -> Option<Document> {
    send(stream, bytes).await;
    let reply = read_reply(stream).await?;
    Some(if reply.op_code == 1 {
        reply.op_reply_document()
    } else {
        reply.msg_document()
    })
}

/// Shapes of [`nested_message`]: where the deep value is (top 3 bits), and which levels are
/// arrays (low 29 bits).
const BODY: u32 = 0;
const SEQUENCE: u32 = 2 << 29;
const QUERY: u32 = 4 << 29;
const SELECTOR: u32 = 6 << 29;
const ARRAYS: u32 = 0x1fff_ffff;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn nesting_past_the_limit_is_answered_with_overflow_and_the_connection_goes_on() {
    let server = start().await;
    let mut stream = connect(server.address).await;
    // 2,000 levels used to overflow the stack and kill the process.
    for levels in [MAX_BSON_DEPTH + 1, 2_000, 100_000] {
        for containers in [0, ARRAYS] {
            let (bytes, _) = nested_message(levels - 1, BODY | containers, &[]);
            let reply = answer(&mut stream, &bytes).await.expect("an answer");
            assert_overflow(&reply);
        }
    }
    // The same connection is served at once.
    let ping = command(&mut stream, 3, &doc! { "ping": 1, "$db": "admin" }).await;
    assert_eq!(ping.get_f64("ok").ok(), Some(1.0));
    assert_serving(server.address).await;
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn nesting_is_refused_at_every_place_of_a_message_and_accepted_at_the_limit() {
    let server = start_with(Echo, options()).await;
    let mut stream = connect(server.address).await;
    // Places: the OP_MSG body, a kind-1 document, an OP_QUERY query, its field selector;
    // containers: documents, arrays, or both in turn.
    for place in [BODY, SEQUENCE, QUERY, SELECTOR] {
        for containers in [0u32, ARRAYS, 0x0aaa_aaaa] {
            let shape = place | containers;
            for levels in [
                MAX_BSON_DEPTH - 3,
                MAX_BSON_DEPTH - 1,
                MAX_BSON_DEPTH,
                MAX_BSON_DEPTH + 1,
                5_000,
            ] {
                let (bytes, command_levels) = nested_message(levels, shape, &[]);
                let document = answer(&mut stream, &bytes)
                    .await
                    .unwrap_or_else(|| panic!("{place}/{levels}: the connection stays open"));
                if command_levels > MAX_BSON_DEPTH {
                    assert_overflow(&document);
                } else {
                    assert_eq!(
                        document.get_i32("code").ok(),
                        None,
                        "{place}/{levels}: {document}"
                    );
                }
            }
        }
    }
    let ping = command(&mut stream, 3, &doc! { "ping": 1, "$db": "admin" }).await;
    assert_eq!(ping.get_f64("ok").ok(), Some(1.0));
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_deep_message_with_more_to_come_gets_no_reply_and_the_next_is_answered() {
    let server = start_with(Echo, options()).await;
    let mut stream = connect(server.address).await;
    let (mut deep, _) = nested_message(5_000, BODY, &[]);
    deep[16..20].copy_from_slice(&2u32.to_le_bytes());
    send(&mut stream, &deep).await;
    let reply = command(&mut stream, 2, &doc! { "ping": 1, "$db": "admin" }).await;
    assert_eq!(reply.get_f64("ok").ok(), Some(1.0));
    server.stop().await;
}

/// The real command layer at the limit: the deepest commands the wire accepts run without
/// exhausting the stack of a worker thread of `spillway serve`'s runtime (the same size
/// here), even in a debug build.
#[test]
fn the_command_layer_runs_the_deepest_commands_the_wire_accepts() {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .thread_stack_size(spillway_server::WORKER_STACK_SIZE)
        .enable_all()
        .build()
        .unwrap()
        .block_on(deepest_commands());
}

async fn deepest_commands() {
    let server = start().await;
    let mut stream = connect(server.address).await;
    let ok = |reply: &Document| reply.get_f64("ok").ok() == Some(1.0);
    // A stored document may be 100 levels deep, itself included (spillway-doc's limit);
    // more is refused by the layer.
    let deepest_stored = doc! { "_id": 1, "d": nest(99) };
    let reply = command(
        &mut stream,
        1,
        &doc! { "insert": "c", "documents": [deepest_stored.clone()], "$db": "test" },
    )
    .await;
    assert!(ok(&reply) && reply.get_i32("n").ok() == Some(1), "{reply}");
    let reply = command(
        &mut stream,
        2,
        &doc! { "insert": "c", "documents": [{ "_id": 2, "d": nest(100) }], "$db": "test" },
    )
    .await;
    assert!(reply.get_array("writeErrors").is_ok(), "{reply}");
    // Filters, updates and pipelines as deep as the wire allows.
    let deepest = MAX_BSON_DEPTH - 1;
    let commands = [
        doc! { "find": "c", "filter": nest(deepest), "$db": "test" },
        doc! { "find": "c", "filter": nested_and(deepest), "$db": "test" },
        doc! { "find": "c", "filter": { "d": { "$elemMatch": nested_and(deepest - 2) } }, "$db": "test" },
        doc! { "count": "c", "query": nested_and(deepest), "$db": "test" },
        doc! {
            "update": "c",
            "updates": [{ "q": nested_and(MAX_BSON_DEPTH - 3), "u": { "$set": { "e": 1 } } }],
            "$db": "test",
        },
        doc! {
            "update": "c",
            "updates": [{ "q": { "_id": 1 }, "u": { "$set": { "e": nest(MAX_BSON_DEPTH - 4) } } }],
            "$db": "test",
        },
        doc! {
            "aggregate": "c",
            "pipeline": [{ "$match": nested_and(MAX_BSON_DEPTH - 3) }],
            "cursor": {},
            "$db": "test",
        },
        doc! { "find": "c", "filter": { "$expr": nested_add(deepest - 1) }, "$db": "test" },
        doc! {
            "aggregate": "c",
            "pipeline": [{ "$project": { "v": nested_add(MAX_BSON_DEPTH - 3) } }],
            "cursor": {},
            "$db": "test",
        },
        doc! {
            "aggregate": "c",
            "pipeline": [{ "$project": { "v": { "$literal": nest(MAX_BSON_DEPTH - 4) } } }],
            "cursor": {},
            "$db": "test",
        },
    ];
    for (n, deep) in commands.into_iter().enumerate() {
        let reply = command(&mut stream, 10 + n as i32, &deep).await;
        // Answered (a refusal by the layer is an answer too): the server did not die.
        assert!(reply.contains_key("ok"), "{reply}");
    }
    let found = command(
        &mut stream,
        30,
        &doc! { "find": "c", "filter": { "_id": 1 }, "$db": "test" },
    )
    .await;
    assert_eq!(
        found
            .get_document("cursor")
            .unwrap()
            .get_array("firstBatch")
            .unwrap()[0]
            .as_document()
            .unwrap()
            .get("d"),
        deepest_stored.get("d")
    );
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_deep_handshake_under_auth_is_refused_before_login() {
    let server = start_with(
        Commands::new(Database::open_in_memory().unwrap()),
        ServerOptions {
            auth: true,
            ..options()
        },
    )
    .await;
    let mut stream = connect(server.address).await;
    for shape in [QUERY, SELECTOR, BODY, SEQUENCE | ARRAYS] {
        let (bytes, _) = nested_message(3_000, shape, &[]);
        let reply = answer(&mut stream, &bytes).await.expect("an answer");
        assert_overflow(&reply);
    }
    // The connection goes on: the handshake, then a refusal for want of a login.
    send(
        &mut stream,
        &op_query(5, "admin.$cmd", &doc! { "isMaster": 1 }),
    )
    .await;
    let hello = read_reply(&mut stream).await.unwrap().op_reply_document();
    assert_eq!(hello.get_bool("ismaster").ok(), Some(true));
    let refused = command(&mut stream, 6, &doc! { "find": "c", "$db": "test" }).await;
    assert_eq!(refused.get_i32("code").ok(), Some(13));
    assert_serving(server.address).await;
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lengths_negative_short_or_over_the_limit_close_from_the_header() {
    let server = start_with(Echo, limits(|limits| limits.max_message_size = 100_000)).await;
    let header = |length: i32, op_code: i32| {
        let mut bytes = length.to_le_bytes().to_vec();
        bytes.extend_from_slice(&1i32.to_le_bytes());
        bytes.extend_from_slice(&0i32.to_le_bytes());
        bytes.extend_from_slice(&op_code.to_le_bytes());
        bytes
    };
    for (what, bytes) in [
        ("a negative length", header(-1, 2013)),
        ("i32::MIN", header(i32::MIN, 2013)),
        ("zero", header(0, 2013)),
        ("shorter than a header", header(15, 2013)),
        ("over --max-message-size", header(100_001, 2013)),
        ("i32::MAX", header(i32::MAX, 2013)),
        // Never decompressed: the opcode alone closes it, whatever sizes follow.
        ("OP_COMPRESSED", header(40_000, 2012)),
        ("an unknown opcode", header(40_000, 9999)),
    ] {
        let mut stream = connect(server.address).await;
        send(&mut stream, &bytes).await;
        let started = Instant::now();
        assert_closed(&mut stream, what).await;
        assert!(started.elapsed() < Duration::from_secs(5), "{what}");
    }
    // The limit is what `hello` announces, and a message of exactly that size is read.
    let mut stream = connect(server.address).await;
    let hello = command(&mut stream, 1, &doc! { "hello": 1, "$db": "admin" }).await;
    assert_eq!(hello.get_i32("maxMessageSizeBytes").ok(), Some(100_000));
    let body = doc! { "echo": "", "$db": "test" };
    let overhead = op_msg(2, 0, &body, &[]).len();
    let body = doc! { "echo": "x".repeat(100_000 - overhead), "$db": "test" };
    let reply = command(&mut stream, 2, &body).await;
    assert_eq!(reply.get_f64("ok").ok(), Some(1.0));
    assert_serving(server.address).await;
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_compressed_message_with_lying_sizes_is_never_decompressed() {
    let server = start_with(Echo, options()).await;
    // OP_COMPRESSED: original opcode, an uncompressed size of 2 GB, compressor zlib, and
    // 16 bytes of "compressed" data.
    let mut body = 2013i32.to_le_bytes().to_vec();
    body.extend_from_slice(&i32::MAX.to_le_bytes());
    body.push(2);
    body.extend_from_slice(&[0x78; 16]);
    for uncompressed in [i32::MAX, -1, 0, 16] {
        body[4..8].copy_from_slice(&uncompressed.to_le_bytes());
        let mut stream = connect(server.address).await;
        send(&mut stream, &message(1, 2012, &body)).await;
        assert_closed(&mut stream, "OP_COMPRESSED").await;
    }
    assert_serving(server.address).await;
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_message_that_stops_arriving_is_closed_after_the_message_timeout() {
    let server = start_with(
        Echo,
        limits(|limits| limits.message_timeout = Duration::from_millis(400)),
    )
    .await;
    let bytes = op_msg(1, 0, &doc! { "ping": 1, "$db": "admin" }, &[]);
    let mut slow = connect(server.address).await;
    // A slow sender: one byte at a time, each in time for an idle timeout, never finishing
    // within the message timeout.
    send(&mut slow, &bytes[..17]).await;
    let started = Instant::now();
    let mut closed = false;
    for &byte in &bytes[17..] {
        tokio::time::sleep(Duration::from_millis(100)).await;
        if slow.write_all(&[byte]).await.is_err() {
            closed = true;
            break;
        }
        if started.elapsed() > Duration::from_secs(3) {
            break;
        }
    }
    if !closed {
        assert_closed(&mut slow, "a slow sender").await;
    }
    assert!(started.elapsed() < Duration::from_secs(3));
    assert_serving(server.address).await;
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn idle_connections_are_closed_by_default_settings() {
    let defaults = ServerOptions::default();
    assert_eq!(defaults.idle_timeout, Some(Duration::from_secs(1800)));
    let server = start_with(
        Echo,
        ServerOptions {
            idle_timeout: Some(Duration::from_millis(300)),
            ..options()
        },
    )
    .await;
    let mut idle = connect(server.address).await;
    let started = Instant::now();
    assert_closed(&mut idle, "a connection that never sent anything").await;
    assert!(started.elapsed() >= Duration::from_millis(250));
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_shared_budget_makes_large_messages_wait_while_small_ones_go_through() {
    // 1 MiB shared beyond each message's first 64 KiB.
    let server = start_with(
        Echo,
        limits(|limits| {
            limits.max_buffered_bytes = 1 << 20;
            limits.message_timeout = Duration::from_secs(2);
        }),
    )
    .await;
    let big = op_msg(
        1,
        0,
        &doc! { "echo": "x".repeat(900_000), "$db": "test" },
        &[],
    );
    // Two tricklers each send most of a 900 KB message and stop: the first holds the budget,
    // the second waits for it, unread.
    let mut first = connect(server.address).await;
    send(&mut first, &big[..800_000]).await;
    tokio::time::sleep(Duration::from_millis(200)).await;
    let mut second = connect(server.address).await;
    // The second's bytes beyond what the kernel buffers are not read: send in the background.
    let tail = big.clone();
    let sender = tokio::spawn(async move {
        let _ = second.write_all(&tail[..800_000]).await;
        second
    });
    tokio::time::sleep(Duration::from_millis(200)).await;
    // A small command from another client goes through at once.
    let started = Instant::now();
    assert_serving(server.address).await;
    assert!(started.elapsed() < Duration::from_secs(1));
    // A message that can never fit the budget is refused from its header.
    let mut huge = connect(server.address).await;
    let mut header = (3i32 << 20).to_le_bytes().to_vec();
    header.extend_from_slice(&[1, 0, 0, 0, 0, 0, 0, 0, 0xdd, 7, 0, 0]);
    send(&mut huge, &header).await;
    assert_closed(&mut huge, "a message larger than the whole budget").await;
    // Both tricklers are closed by the message timeout, and the budget is free again: a
    // whole 900 KB message is answered.
    assert_closed(&mut first, "the first trickler").await;
    let mut second = sender.await.unwrap();
    assert_closed(&mut second, "the second trickler").await;
    let mut stream = connect(server.address).await;
    send(&mut stream, &big).await;
    let reply = read_reply(&mut stream).await.expect("a whole message fits");
    assert_eq!(reply.msg_document().get_f64("ok").ok(), Some(1.0));
    let status = command(&mut stream, 2, &doc! { "serverStatus": 1, "$db": "admin" }).await;
    let network = status.get_document("network").unwrap();
    assert_eq!(network.get_i64("maxBufferedBytes").ok(), Some(1 << 20));
    server.stop().await;
}

/// A server with `--auth` and one user, `alice`, made by the localhost exception.
async fn auth_server(change: impl FnOnce(&mut Limits)) -> common::Running {
    let mut options = ServerOptions {
        auth: true,
        ..options()
    };
    change(&mut options.limits);
    let server = start_with(Commands::new(Database::open_in_memory().unwrap()), options).await;
    let mut stream = connect(server.address).await;
    let created = command(
        &mut stream,
        1,
        &doc! { "createUser": "alice", "pwd": "s3cret-Passw0rd", "roles": ["root"], "$db": "admin" },
    )
    .await;
    assert_eq!(created.get_f64("ok").ok(), Some(1.0), "{created}");
    server
}

async fn alice(address: SocketAddr) -> mongodb::Client {
    let uri = format!(
        "mongodb://alice:s3cret-Passw0rd@{address}/?serverSelectionTimeoutMS=5000&authSource=admin"
    );
    mongodb::Client::with_uri_str(uri).await.unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn before_login_messages_are_small_and_after_login_they_are_not() {
    let server = auth_server(|limits| limits.max_message_size_before_auth = 64 * 1024).await;
    // Unauthenticated: a message under the limit is answered (Unauthorized), one over it
    // closes the connection from its header.
    let mut stream = connect(server.address).await;
    let small = doc! { "insert": "c", "s": "x".repeat(60_000), "$db": "test" };
    let refused = command(&mut stream, 1, &small).await;
    assert_eq!(refused.get_i32("code").ok(), Some(13));
    let large = op_msg(
        2,
        0,
        &doc! { "insert": "c", "s": "x".repeat(70_000), "$db": "test" },
        &[],
    );
    send(&mut stream, &large[..16]).await;
    assert_closed(&mut stream, "a large message before login").await;
    // Logged in, the driver sends a 2 MB document.
    let client = alice(server.address).await;
    let collection = client.database("test").collection::<Document>("c");
    collection
        .insert_one(doc! { "_id": 1, "s": "y".repeat(2_000_000) })
        .await
        .expect("a large insert after login");
    assert_eq!(collection.count_documents(doc! {}).await.unwrap(), 1);
    client.shutdown().await;
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unauthenticated_connection_is_closed_after_the_auth_timeout() {
    // Long enough for the driver's own login (PBKDF2 in a debug build on a loaded machine
    // takes a good part of a second between two SASL messages).
    let timeout = Duration::from_secs(3);
    let server = auth_server(|limits| limits.auth_timeout = timeout).await;
    let client = alice(server.address).await;
    let admin = client.database("admin");
    admin.run_command(doc! { "ping": 1 }).await.unwrap();
    let mut lingering = connect(server.address).await;
    let hello = command(&mut lingering, 1, &doc! { "hello": 1, "$db": "admin" }).await;
    assert_eq!(hello.get_f64("ok").ok(), Some(1.0));
    let started = Instant::now();
    assert_closed(&mut lingering, "an unauthenticated connection").await;
    assert!(started.elapsed() >= timeout.saturating_sub(Duration::from_millis(100)));
    assert!(started.elapsed() < timeout + Duration::from_secs(5));
    // The logged-in client stayed connected past it and keeps working.
    let names = client.list_database_names().await.expect("still logged in");
    assert!(names.iter().all(|name| !name.is_empty()));
    client.shutdown().await;
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_address_cannot_take_every_connection() {
    let server = start_with(
        Echo,
        ServerOptions {
            max_connections: 12,
            limits: Limits {
                max_connections_per_address: 6,
                reserved_connections: 2,
                ..Limits::default()
            },
            ..options()
        },
    )
    .await;
    // 127.0.0.2 takes its 6; a 7th is closed at once.
    let mut hostile = Vec::new();
    for _ in 0..6 {
        let mut stream = connect_from("127.0.0.2", server.address).await;
        let ping = command(&mut stream, 1, &doc! { "ping": 1, "$db": "admin" }).await;
        assert_eq!(ping.get_f64("ok").ok(), Some(1.0));
        hostile.push(stream);
    }
    let mut refused = connect_from("127.0.0.2", server.address).await;
    assert_closed(&mut refused, "a 7th connection from one address").await;
    // Another address gets in, and the reserved slots keep room for a third.
    let mut second = Vec::new();
    for _ in 0..4 {
        let mut stream = connect_from("127.0.0.3", server.address).await;
        let ping = command(&mut stream, 1, &doc! { "ping": 1, "$db": "admin" }).await;
        assert_eq!(ping.get_f64("ok").ok(), Some(1.0));
        second.push(stream);
    }
    assert_eq!(ping_from("127.0.0.1", server.address).await, Some(1.0));
    assert_eq!(ping_from("127.0.0.4", server.address).await, Some(1.0));
    // Closing frees the address's slots.
    drop(hostile);
    let mut answered = false;
    for _ in 0..100 {
        if ping_from("127.0.0.2", server.address).await == Some(1.0) {
            answered = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(answered);
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_thousand_idle_connections_from_one_address_leave_room_for_others() {
    let server = start_with(Echo, options()).await;
    let mut idle = Vec::new();
    let mut refused = 0;
    for _ in 0..1_000 {
        let stream = connect_from("127.0.0.2", server.address).await;
        idle.push(stream);
    }
    // Half the default 1,000 are kept; the rest are closed at once.
    for stream in &mut idle[500..] {
        assert_closed(stream, "a connection over the per-address limit").await;
        refused += 1;
    }
    assert_eq!(refused, 500);
    assert_eq!(ping_from("127.0.0.1", server.address).await, Some(1.0));
    assert_eq!(ping_from("127.0.0.3", server.address).await, Some(1.0));
    drop(idle);
    server.stop().await;
}

#[test]
fn the_defaults_are_the_documented_ones() {
    let limits = Limits::default();
    assert_eq!(limits.max_message_size, 48_000_000);
    assert_eq!(limits.max_bson_depth, 200);
    assert_eq!(limits.message_timeout, Duration::from_secs(60));
    assert_eq!(limits.max_buffered_bytes, 256 << 20);
    assert_eq!(limits.max_connections_per_address, 500);
    assert_eq!(limits.reserved_connections, 100);
    assert_eq!(limits.max_message_size_before_auth, 1 << 20);
    assert_eq!(limits.auth_timeout, Duration::from_secs(30));
}
