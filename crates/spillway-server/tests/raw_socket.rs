//! The wire protocol byte by byte over a real socket: hand-built messages, the replies a
//! driver relies on, and every kind of malformed message closing only its own connection.

use crate::common;

use std::time::{Duration, Instant};

use bson::{Bson, Document, doc};
use common::{
    Echo, assert_closed, assert_serving, command, connect, message, op_msg, op_query, options,
    read_reply, send, start, start_with,
};
use spillway::Database;
use spillway::command::Commands;
use spillway_server::{Executor, ServerOptions};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn op_msg_ping_gets_an_op_msg_reply_to_its_request() {
    let server = start().await;
    let mut stream = connect(server.address).await;
    send(
        &mut stream,
        &op_msg(41, 0, &doc! { "ping": 1, "$db": "admin" }, &[]),
    )
    .await;
    let reply = read_reply(&mut stream).await.expect("a reply");
    assert_eq!(reply.response_to, 41);
    assert_eq!(reply.op_code, 2013);
    assert_eq!(reply.msg_document().get_f64("ok").ok(), Some(1.0));
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn op_query_is_master_gets_an_op_reply_presenting_a_replica_set_primary() {
    let server = start().await;
    let mut stream = connect(server.address).await;
    let query = doc! { "isMaster": 1, "helloOk": true, "client": { "driver": { "name": "raw" } } };
    send(&mut stream, &op_query(7, "admin.$cmd", &query)).await;
    let reply = read_reply(&mut stream).await.expect("a reply");
    assert_eq!(reply.response_to, 7);
    let hello = reply.op_reply_document();
    let host = server.address.to_string();
    assert_eq!(hello.get_bool("ismaster").ok(), Some(true));
    assert_eq!(hello.get_bool("helloOk").ok(), Some(true));
    assert_eq!(hello.get_str("setName").ok(), Some("spillway"));
    assert_eq!(hello.get_str("me").ok(), Some(host.as_str()));
    assert_eq!(hello.get_str("primary").ok(), Some(host.as_str()));
    assert_eq!(hello.get_array("hosts").unwrap(), &vec![Bson::String(host)]);
    assert_eq!(hello.get_i32("maxWireVersion").ok(), Some(26));
    assert_eq!(hello.get_i32("minWireVersion").ok(), Some(0));
    assert_eq!(hello.get_i32("maxBsonObjectSize").ok(), Some(16_777_216));
    assert_eq!(hello.get_i32("maxMessageSizeBytes").ok(), Some(48_000_000));
    assert_eq!(hello.get_i32("maxWriteBatchSize").ok(), Some(100_000));
    assert_eq!(hello.get_i32("logicalSessionTimeoutMinutes").ok(), Some(30));
    assert!(hello.get_document("topologyVersion").is_ok());
    assert!(
        hello
            .get_document("lastWrite")
            .unwrap()
            .get_document("opTime")
            .is_ok()
    );
    assert!(hello.get_object_id("electionId").is_ok());
    assert_eq!(hello.get_f64("ok").ok(), Some(1.0));
    // The same connection then speaks OP_MSG, as drivers do after the handshake.
    let hello = command(&mut stream, 8, &doc! { "hello": 1, "$db": "admin" }).await;
    assert_eq!(hello.get_bool("isWritablePrimary").ok(), Some(true));
    assert!(!hello.contains_key("ismaster"));
    assert!(hello.get_i32("connectionId").unwrap() >= 1);
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn op_query_wrapped_in_dollar_query_and_other_commands() {
    let server = start().await;
    let mut stream = connect(server.address).await;
    let wrapped =
        doc! { "$query": { "ismaster": 1 }, "$readPreference": { "mode": "primaryPreferred" } };
    send(&mut stream, &op_query(1, "admin.$cmd", &wrapped)).await;
    let hello = read_reply(&mut stream).await.unwrap().op_reply_document();
    assert_eq!(hello.get_bool("ismaster").ok(), Some(true));
    // Only the handshake travels by OP_QUERY, as in MongoDB 6.0 and later.
    send(
        &mut stream,
        &op_query(2, "test.$cmd", &doc! { "find": "c" }),
    )
    .await;
    let refused = read_reply(&mut stream).await.unwrap().op_reply_document();
    assert_eq!(refused.get_i32("code").ok(), Some(352));
    send(&mut stream, &op_query(3, "test.c", &doc! {})).await;
    let refused = read_reply(&mut stream).await.unwrap().op_reply_document();
    assert_eq!(refused.get_f64("ok").ok(), Some(0.0));
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn server_commands_answer_what_drivers_and_test_suites_read() {
    let server = start().await;
    let mut stream = connect(server.address).await;
    let admin = |name: &str| doc! { name: 1, "$db": "admin" };
    let build_info = command(&mut stream, 1, &admin("buildInfo")).await;
    assert_eq!(build_info.get_str("version").ok(), Some("8.1.0"));
    assert_eq!(
        build_info.get_array("versionArray").unwrap(),
        &vec![
            Bson::Int32(8),
            Bson::Int32(1),
            Bson::Int32(0),
            Bson::Int32(0)
        ]
    );
    assert!(build_info.get_array("storageEngines").is_ok());
    let lower = command(&mut stream, 2, &admin("buildinfo")).await;
    assert_eq!(lower.get_str("version").ok(), Some("8.1.0"));

    let status = command(&mut stream, 3, &admin("serverStatus")).await;
    assert_eq!(
        status
            .get_document("storageEngine")
            .unwrap()
            .get_str("name")
            .ok(),
        Some("spillway")
    );
    assert!(
        status
            .get_document("connections")
            .unwrap()
            .get_i32("current")
            .unwrap()
            >= 1
    );
    // The counters admin tools chart: operations by kind and the wire's bytes, counted up
    // to this request (buildInfo twice, then serverStatus itself).
    let opcounters = status.get_document("opcounters").unwrap();
    assert_eq!(opcounters.get_i64("command").ok(), Some(3), "{opcounters}");
    assert_eq!(opcounters.get_i64("insert").ok(), Some(0));
    let network = status.get_document("network").unwrap();
    assert_eq!(network.get_i64("numRequests").ok(), Some(3), "{network}");
    assert!(network.get_i64("bytesIn").unwrap() > 0);
    assert!(network.get_i64("bytesOut").unwrap() > 0);
    assert!(status.get_document("globalLock").is_ok());
    let memory = status.get_document("mem").unwrap();
    assert_eq!(memory.get_bool("supported").ok(), Some(true), "{memory}");
    assert!(memory.get_i64("resident").unwrap() > 0);
    let inserted = command(
        &mut stream,
        30,
        &doc! { "insert": "c", "documents": [{ "_id": 1 }, { "_id": 2 }], "$db": "t" },
    )
    .await;
    assert_eq!(inserted.get_i32("n").ok(), Some(2));
    command(&mut stream, 31, &doc! { "find": "c", "$db": "t" }).await;
    let status = command(&mut stream, 32, &admin("serverStatus")).await;
    let opcounters = status.get_document("opcounters").unwrap();
    assert_eq!(
        (
            opcounters.get_i64("insert").ok(),
            opcounters.get_i64("query").ok()
        ),
        (Some(2), Some(1)),
        "{opcounters}"
    );
    // mongosh's rs.status() and rs.conf(): the one-member replica set hello announces.
    let hello = command(&mut stream, 33, &admin("hello")).await;
    let status = command(&mut stream, 34, &admin("replSetGetStatus")).await;
    assert_eq!(status.get_str("set").ok(), hello.get_str("setName").ok());
    let members = status.get_array("members").unwrap();
    let member = members[0].as_document().unwrap();
    assert_eq!(
        (
            members.len(),
            member.get_str("stateStr").ok(),
            member.get_str("name").ok()
        ),
        (1, Some("PRIMARY"), hello.get_str("primary").ok())
    );
    // The Stable API applies to the commands the server answers itself too.
    let refused = command(
        &mut stream,
        36,
        &doc! { "ping": 1, "apiVersion": "server_will_never_support_this_api_version", "$db": "admin" },
    )
    .await;
    assert_eq!(refused.get_i32("code").ok(), Some(322), "{refused}");
    let refused = command(
        &mut stream,
        37,
        &doc! { "ping": 1, "apiStrict": true, "$db": "admin" },
    )
    .await;
    assert_eq!(refused.get_i32("code").ok(), Some(4_886_600), "{refused}");
    let strict = command(
        &mut stream,
        38,
        &doc! { "serverStatus": 1, "apiVersion": "1", "apiStrict": true, "$db": "admin" },
    )
    .await;
    assert_eq!(strict.get_i32("code").ok(), Some(323), "{strict}");
    let config = command(&mut stream, 35, &admin("replSetGetConfig")).await;
    let config = config.get_document("config").unwrap();
    assert_eq!(config.get_str("_id").ok(), hello.get_str("setName").ok());
    assert_eq!(
        config.get_array("members").unwrap()[0]
            .as_document()
            .unwrap()
            .get_str("host")
            .ok(),
        hello.get_str("primary").ok()
    );

    let parameters = command(
        &mut stream,
        4,
        &doc! { "getParameter": "*", "$db": "admin" },
    )
    .await;
    assert_eq!(parameters.get_bool("enableTestCommands").ok(), Some(false));
    assert!(
        parameters
            .get_document("featureCompatibilityVersion")
            .is_ok()
    );
    let one = command(
        &mut stream,
        5,
        &doc! { "getParameter": 1, "featureCompatibilityVersion": 1, "$db": "admin" },
    )
    .await;
    assert_eq!(
        one.get_document("featureCompatibilityVersion")
            .unwrap()
            .get_str("version")
            .ok(),
        Some("8.1")
    );
    assert!(!one.contains_key("enableTestCommands"));
    let unknown = command(
        &mut stream,
        6,
        &doc! { "getParameter": 1, "noSuchThing": 1, "$db": "admin" },
    )
    .await;
    assert_eq!(unknown.get_i32("code").ok(), Some(72));

    let options = command(&mut stream, 7, &admin("getCmdLineOpts")).await;
    assert!(options.get_array("argv").is_ok());
    assert_eq!(
        options
            .get_document("parsed")
            .unwrap()
            .get_document("net")
            .unwrap()
            .get_i32("port")
            .ok(),
        Some(i32::from(server.address.port()))
    );
    let status = command(&mut stream, 8, &admin("connectionStatus")).await;
    assert!(
        status
            .get_document("authInfo")
            .unwrap()
            .get_array("authenticatedUsers")
            .unwrap()
            .is_empty()
    );
    let host = command(&mut stream, 9, &admin("hostInfo")).await;
    assert!(
        host.get_document("system")
            .unwrap()
            .get_str("hostname")
            .is_ok()
    );
    let me = command(&mut stream, 10, &admin("whatsmyuri")).await;
    assert_eq!(
        me.get_str("you").ok(),
        Some(stream.local_addr().unwrap().to_string().as_str())
    );
    let commands = command(&mut stream, 11, &admin("listCommands")).await;
    let names = commands.get_document("commands").unwrap();
    for name in ["hello", "ping", "buildInfo", "listCommands"] {
        assert!(names.contains_key(name), "listCommands lists {name}");
    }
    for name in Commands::command_names() {
        assert!(
            names.contains_key(*name),
            "listCommands lists the layer's {name}"
        );
    }
    let logs = command(
        &mut stream,
        12,
        &doc! { "getLog": "startupWarnings", "$db": "admin" },
    )
    .await;
    assert_eq!(logs.get_array("log").unwrap().len(), 0);
    let ping = command(&mut stream, 13, &doc! { "ping": 1, "$db": "anydb" }).await;
    assert_eq!(ping.get_f64("ok").ok(), Some(1.0));
    // A replica set member gossips the cluster time in its own replies too; drivers send it
    // back with their next command (and in a transaction's first one).
    let hello = command(&mut stream, 14, &admin("hello")).await;
    for reply in [&ping, &hello, &build_info] {
        assert!(
            reply
                .get_document("$clusterTime")
                .is_ok_and(|gossip| gossip.get_timestamp("clusterTime").is_ok()),
            "{reply}"
        );
        assert!(reply.get_timestamp("operationTime").is_ok(), "{reply}");
    }
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn other_commands_go_to_the_command_layer_with_their_database() {
    let server = start_with(Echo, options()).await;
    let mut stream = connect(server.address).await;
    let reply = command(&mut stream, 1, &doc! { "count": "c", "$db": "shop" }).await;
    assert_eq!(
        reply.get_document("command").unwrap(),
        &doc! { "count": "c", "$db": "shop" }
    );
    // An OP_MSG without $db is refused before it reaches the layer, as MongoDB does.
    let reply = command(&mut stream, 2, &doc! { "count": "c" }).await;
    assert_eq!(reply.get_i32("code").ok(), Some(40571));
    let names = command(&mut stream, 3, &doc! { "listCommands": 1, "$db": "admin" }).await;
    assert!(names.get_document("commands").unwrap().contains_key("echo"));
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn document_sequences_are_merged_into_the_command_as_arrays() {
    let server = start_with(Echo, options()).await;
    let mut stream = connect(server.address).await;
    let body = doc! { "insert": "c", "ordered": true, "$db": "test" };
    let documents = vec![doc! { "_id": 1 }, doc! { "_id": 2, "x": "y" }];
    let updates = vec![doc! { "q": {}, "u": { "$set": { "a": 1 } } }];
    send(
        &mut stream,
        &op_msg(
            5,
            0,
            &body,
            &[
                ("documents", documents.clone()),
                ("updates", updates.clone()),
            ],
        ),
    )
    .await;
    let reply = read_reply(&mut stream).await.unwrap().msg_document();
    let merged = reply.get_document("command").unwrap();
    assert_eq!(
        merged,
        &doc! {
            "insert": "c", "ordered": true, "$db": "test",
            "documents": documents.into_iter().map(Bson::Document).collect::<Vec<_>>(),
            "updates": updates.into_iter().map(Bson::Document).collect::<Vec<_>>(),
        }
    );
    // An empty sequence is an empty array.
    send(&mut stream, &op_msg(6, 0, &body, &[("documents", vec![])])).await;
    let reply = read_reply(&mut stream).await.unwrap().msg_document();
    assert_eq!(
        reply
            .get_document("command")
            .unwrap()
            .get_array("documents")
            .unwrap()
            .len(),
        0
    );
    // A sequence that duplicates a field of the body is malformed: the connection closes.
    let body = doc! { "insert": "c", "documents": [], "$db": "test" };
    send(
        &mut stream,
        &op_msg(7, 0, &body, &[("documents", vec![doc! { "_id": 3 }])]),
    )
    .await;
    assert_closed(&mut stream, "a duplicated sequence").await;
    assert_serving(server.address).await;
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_checksum_is_verified_and_a_wrong_one_closes_the_connection() {
    let server = start().await;
    let mut stream = connect(server.address).await;
    let ping = doc! { "ping": 1, "$db": "admin" };
    let good = op_msg(1, 1, &ping, &[]);
    send(&mut stream, &good).await;
    let reply = read_reply(&mut stream)
        .await
        .expect("a checksummed message is answered");
    // Replies never carry a checksum (flags 0), which every client accepts.
    assert_eq!(reply.msg_document().get_f64("ok").ok(), Some(1.0));

    let mut bad = good.clone();
    let last = bad.len() - 1;
    bad[last] ^= 0x40;
    send(&mut stream, &bad).await;
    assert_closed(&mut stream, "a wrong checksum").await;

    // A flipped byte inside the body, with the checksum left as it was, is caught too.
    let mut stream = connect(server.address).await;
    let mut corrupted = good;
    corrupted[30] ^= 0x01;
    send(&mut stream, &corrupted).await;
    assert_closed(&mut stream, "a corrupted body").await;
    assert_serving(server.address).await;
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn more_to_come_executes_without_a_reply() {
    let server = start_with(Echo, options()).await;
    let mut stream = connect(server.address).await;
    send(
        &mut stream,
        &op_msg(
            1,
            2,
            &doc! { "insert": "c", "$db": "test" },
            &[("documents", vec![doc! { "_id": 1 }])],
        ),
    )
    .await;
    send(
        &mut stream,
        &op_msg(2, 0, &doc! { "ping": 1, "$db": "admin" }, &[]),
    )
    .await;
    let reply = read_reply(&mut stream).await.expect("a reply");
    assert_eq!(
        reply.response_to, 2,
        "the first reply answers the second message"
    );
    assert_eq!(reply.msg_document(), doc! { "ok": 1.0 });
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn more_to_come_writes_reach_the_layer() {
    /// Counts the commands it executes.
    struct Counting(std::sync::Arc<std::sync::atomic::AtomicUsize>);
    impl Executor for Counting {
        fn execute(&self, _command: Document) -> Document {
            self.0.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            doc! { "ok": 1.0 }
        }
        fn reap_expired(&self) {}
        fn command_names(&self) -> &'static [&'static str] {
            &[]
        }
    }
    let count = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let server = start_with(Counting(std::sync::Arc::clone(&count)), options()).await;
    let mut stream = connect(server.address).await;
    for id in 0..3 {
        send(
            &mut stream,
            &op_msg(
                id,
                2,
                &doc! { "insert": "c", "documents": [{ "_id": id }], "$db": "test" },
                &[],
            ),
        )
        .await;
    }
    let reply = command(&mut stream, 9, &doc! { "count": "c", "$db": "test" }).await;
    assert_eq!(reply.get_f64("ok").ok(), Some(1.0));
    assert_eq!(count.load(std::sync::atomic::Ordering::SeqCst), 4);
    server.stop().await;
}

/// Each malformed message closes its connection, and the server answers the next one.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_kind_of_malformed_message_closes_only_its_connection() {
    let server = start().await;
    let ping = doc! { "ping": 1, "$db": "admin" };
    let ping_bytes = ping.to_vec().unwrap();
    let mut bad_bson = ping_bytes.clone();
    bad_bson[4] = 0x42; // an element type that does not exist
    let mut wrong_inner_length = ping_bytes.clone();
    wrong_inner_length[0] = wrong_inner_length[0].wrapping_add(9);
    let mut invalid_utf8 = doc! { "ping": "ab" }.to_vec().unwrap();
    let at = invalid_utf8.len() - 3;
    invalid_utf8[at] = 0xff;
    let section = |kind: u8, document: &[u8]| {
        let mut body = 0u32.to_le_bytes().to_vec();
        body.push(kind);
        body.extend_from_slice(document);
        body
    };
    let mut only_a_sequence = 0u32.to_le_bytes().to_vec();
    only_a_sequence.push(1);
    only_a_sequence.extend_from_slice(&(4 + 2 + ping_bytes.len() as i32).to_le_bytes());
    only_a_sequence.extend_from_slice(b"d\0");
    only_a_sequence.extend_from_slice(&ping_bytes);
    let mut two_bodies = section(0, &ping_bytes);
    two_bodies.push(0);
    two_bodies.extend_from_slice(&ping_bytes);
    let mut negative_sequence = section(0, &ping_bytes);
    negative_sequence.push(1);
    negative_sequence.extend_from_slice(&(-8i32).to_le_bytes());
    let mut overlong_sequence = section(0, &ping_bytes);
    overlong_sequence.push(1);
    overlong_sequence.extend_from_slice(&1000i32.to_le_bytes());
    overlong_sequence.extend_from_slice(b"d\0");
    let mut unknown_required_flag = 4u32.to_le_bytes().to_vec();
    unknown_required_flag.push(0);
    unknown_required_flag.extend_from_slice(&ping_bytes);
    let mut truncated_header = message(1, 2013, &section(0, &ping_bytes));
    truncated_header.truncate(10);
    let short_length = {
        let mut bytes = message(1, 2013, &section(0, &ping_bytes));
        bytes[..4].copy_from_slice(&5i32.to_le_bytes());
        bytes
    };
    let negative_length = {
        let mut bytes = message(1, 2013, &section(0, &ping_bytes));
        bytes[..4].copy_from_slice(&(-1i32).to_le_bytes());
        bytes
    };
    let mut truncated_body = message(1, 2013, &section(0, &ping_bytes));
    truncated_body.truncate(truncated_body.len() - 3);
    let cases: Vec<(&str, Vec<u8>, bool)> = vec![
        (
            "OP_COMPRESSED",
            message(1, 2012, &section(0, &ping_bytes)),
            false,
        ),
        (
            "an unknown opcode",
            message(1, 4242, &section(0, &ping_bytes)),
            false,
        ),
        (
            "legacy OP_INSERT",
            message(1, 2002, &section(0, &ping_bytes)),
            false,
        ),
        (
            "a bad section kind",
            message(1, 2013, &section(2, &ping_bytes)),
            false,
        ),
        ("bad BSON", message(1, 2013, &section(0, &bad_bson)), false),
        (
            "a BSON length past the message",
            message(1, 2013, &section(0, &wrong_inner_length)),
            false,
        ),
        (
            "invalid UTF-8 in BSON",
            message(1, 2013, &section(0, &invalid_utf8)),
            false,
        ),
        ("no body section", message(1, 2013, &only_a_sequence), false),
        ("two body sections", message(1, 2013, &two_bodies), false),
        (
            "a negative sequence size",
            message(1, 2013, &negative_sequence),
            false,
        ),
        (
            "a sequence past the message",
            message(1, 2013, &overlong_sequence),
            false,
        ),
        (
            "an unknown required flag",
            message(1, 2013, &unknown_required_flag),
            false,
        ),
        ("flags only", message(1, 2013, &0u32.to_le_bytes()), false),
        ("a header only", message(1, 2013, &[]), false),
        ("a length shorter than a header", short_length, false),
        ("a negative length", negative_length, false),
        (
            "a checksum flag without room for one",
            message(1, 2013, &1u32.to_le_bytes()),
            false,
        ),
        ("a truncated header", truncated_header, true),
        ("a truncated body", truncated_body, true),
        (
            "an OP_QUERY without a query",
            message(1, 2004, b"\0\0\0\0admin.$cmd\0\0\0\0\0\xff\xff\xff\xff"),
            false,
        ),
        (
            "an OP_QUERY namespace without NUL",
            message(1, 2004, b"\0\0\0\0admin.$cmd"),
            false,
        ),
    ];
    for (what, bytes, then_close_writes) in cases {
        let mut stream = connect(server.address).await;
        send(&mut stream, &bytes).await;
        if then_close_writes {
            stream.shutdown().await.expect("half-close");
        }
        assert_closed(&mut stream, what).await;
        assert_serving(server.address).await;
    }
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_oversized_length_is_refused_from_the_header_alone() {
    let server = start().await;
    for length in [48_000_001i32, i32::MAX] {
        let mut stream = connect(server.address).await;
        let mut header = Vec::new();
        header.extend_from_slice(&length.to_le_bytes());
        header.extend_from_slice(&1i32.to_le_bytes());
        header.extend_from_slice(&0i32.to_le_bytes());
        header.extend_from_slice(&2013i32.to_le_bytes());
        // Only the header is sent: the server must refuse it without waiting for (or
        // allocating) the body it announces.
        send(&mut stream, &header).await;
        let started = Instant::now();
        assert_closed(&mut stream, "an oversized length").await;
        assert!(started.elapsed() < Duration::from_secs(5));
    }
    assert_serving(server.address).await;
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_message_of_exactly_the_limit_is_read() {
    let server = start_with(Echo, options()).await;
    let mut stream = connect(server.address).await;
    // A 48,000,000-byte message: a body and a sequence of documents that fill it exactly.
    let body = doc! { "insert": "c", "$db": "test" };
    let filler = "x".repeat(1_000_000);
    let mut documents: Vec<Document> = (0..47)
        .map(|n| doc! { "_id": n, "s": filler.clone() })
        .collect();
    let size_of =
        |documents: &[Document]| op_msg(1, 0, &body, &[("documents", documents.to_vec())]).len();
    let short = 48_000_000 - size_of(&documents);
    let last = doc! { "_id": 47, "s": "" };
    let overhead = last.to_vec().unwrap().len();
    documents.push(doc! { "_id": 47, "s": "y".repeat(short - overhead) });
    let bytes = op_msg(1, 0, &body, &[("documents", documents)]);
    assert_eq!(bytes.len(), 48_000_000);
    send(&mut stream, &bytes).await;
    let reply = read_reply(&mut stream)
        .await
        .expect("a message at the limit is answered");
    assert_eq!(reply.response_to, 1);
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_panic_in_the_command_layer_is_an_internal_error_reply() {
    struct Panicking;
    impl Executor for Panicking {
        fn execute(&self, command: Document) -> Document {
            panic!("the layer broke on {command}");
        }
        fn reap_expired(&self) {}
        fn command_names(&self) -> &'static [&'static str] {
            &[]
        }
    }
    let server = start_with(Panicking, options()).await;
    let mut stream = connect(server.address).await;
    let reply = command(&mut stream, 1, &doc! { "find": "c", "$db": "test" }).await;
    assert_eq!(reply.get_f64("ok").ok(), Some(0.0));
    assert_eq!(reply.get_i32("code").ok(), Some(1));
    assert_eq!(reply.get_str("codeName").ok(), Some("InternalError"));
    assert!(reply.get_str("errmsg").unwrap().contains("the layer broke"));
    // The connection and the server go on.
    let ping = command(&mut stream, 2, &doc! { "ping": 1, "$db": "admin" }).await;
    assert_eq!(ping.get_f64("ok").ok(), Some(1.0));
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_connection_limit_refuses_one_more_and_frees_a_slot_on_close() {
    let server = start_with(
        Echo,
        ServerOptions {
            max_connections: 2,
            ..options()
        },
    )
    .await;
    let mut first = connect(server.address).await;
    let mut second = connect(server.address).await;
    for stream in [&mut first, &mut second] {
        let ping = command(stream, 1, &doc! { "ping": 1, "$db": "admin" }).await;
        assert_eq!(ping.get_f64("ok").ok(), Some(1.0));
    }
    let mut third = connect(server.address).await;
    assert_closed(&mut third, "a connection over the limit").await;
    drop(first);
    // The slot frees once the server sees the close.
    let mut answered = false;
    for _ in 0..100 {
        let mut stream = connect(server.address).await;
        send(
            &mut stream,
            &op_msg(2, 0, &doc! { "ping": 1, "$db": "admin" }, &[]),
        )
        .await;
        if read_reply(&mut stream).await.is_some() {
            answered = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(answered, "a closed connection frees its slot");
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_idle_connection_is_closed_after_the_idle_timeout() {
    let server = start_with(
        Echo,
        ServerOptions {
            idle_timeout: Some(Duration::from_millis(300)),
            ..options()
        },
    )
    .await;
    let mut stream = connect(server.address).await;
    let ping = command(&mut stream, 1, &doc! { "ping": 1, "$db": "admin" }).await;
    assert_eq!(ping.get_f64("ok").ok(), Some(1.0));
    let started = Instant::now();
    assert_closed(&mut stream, "an idle connection").await;
    assert!(started.elapsed() >= Duration::from_millis(250));
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_awaitable_hello_waits_for_max_await_time() {
    let server = start().await;
    let mut stream = connect(server.address).await;
    let hello = command(&mut stream, 1, &doc! { "hello": 1, "$db": "admin" }).await;
    let version = hello.get_document("topologyVersion").unwrap().clone();
    let started = Instant::now();
    let awaited = command(
        &mut stream,
        2,
        &doc! { "hello": 1, "topologyVersion": version, "maxAwaitTimeMS": 400, "$db": "admin" },
    )
    .await;
    assert!(
        started.elapsed() >= Duration::from_millis(350),
        "the monitor is not answered at once"
    );
    assert_eq!(awaited.get_bool("isWritablePrimary").ok(), Some(true));
    // A stale topologyVersion is answered at once.
    let started = Instant::now();
    let stale = doc! { "processId": bson::oid::ObjectId::new(), "counter": 0_i64 };
    command(
        &mut stream,
        3,
        &doc! { "hello": 1, "topologyVersion": stale, "maxAwaitTimeMS": 10_000, "$db": "admin" },
    )
    .await;
    assert!(started.elapsed() < Duration::from_secs(5));
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shutdown_finishes_in_flight_commands_then_closes_the_database() {
    /// Takes a while to answer, to be in flight when the server stops; holds the database, as
    /// the command layer does.
    struct Slow(Database);
    impl Executor for Slow {
        fn execute(&self, _command: Document) -> Document {
            std::thread::sleep(Duration::from_millis(500));
            let collections = self
                .0
                .list_collection_names()
                .run()
                .expect("the database is open");
            doc! { "ok": 1.0, "slow": true, "collections": collections.len() as i32 }
        }
        fn reap_expired(&self) {}
        fn command_names(&self) -> &'static [&'static str] {
            &[]
        }
    }
    let directory = tempfile::tempdir().unwrap();
    let database = Database::open(directory.path()).unwrap();
    let server = start_with(Slow(database), options()).await;
    let mut idle = connect(server.address).await;
    assert_eq!(
        command(&mut idle, 1, &doc! { "ping": 1, "$db": "admin" })
            .await
            .get_f64("ok")
            .ok(),
        Some(1.0)
    );
    let mut busy = connect(server.address).await;
    send(
        &mut busy,
        &op_msg(2, 0, &doc! { "find": "c", "$db": "test" }, &[]),
    )
    .await;
    tokio::time::sleep(Duration::from_millis(100)).await;
    let stopping = tokio::spawn(server.stop());
    let reply = read_reply(&mut busy)
        .await
        .expect("the in-flight command is answered");
    assert_eq!(reply.msg_document().get_bool("slow").ok(), Some(true));
    stopping.await.unwrap();
    assert_closed(&mut idle, "an idle connection at shutdown").await;
    assert_closed(&mut busy, "a connection after its last reply at shutdown").await;
    // The database was dropped: its directory opens again (the lock is free).
    Database::open(directory.path()).expect("the server closed the database");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn many_clients_at_once() {
    let server = start_with(Echo, options()).await;
    let mut clients = Vec::new();
    for client in 0..32 {
        let address = server.address;
        clients.push(tokio::spawn(async move {
            let mut stream = connect(address).await;
            for n in 0..20 {
                let reply = command(
                    &mut stream,
                    n,
                    &doc! { "insert": "c", "n": client * 100 + n, "$db": "test" },
                )
                .await;
                assert_eq!(
                    reply.get_document("command").unwrap().get_i32("n").ok(),
                    Some(client * 100 + n)
                );
            }
        }));
    }
    for client in clients {
        client.await.unwrap();
    }
    server.stop().await;
}

use tokio::io::AsyncWriteExt as _;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_get_more_allowing_exhaust_streams_every_batch_unasked() {
    let server = start().await;
    let mut stream = connect(server.address).await;
    let documents: Vec<Document> = (0..9).map(|i| doc! { "_id": i }).collect();
    command(
        &mut stream,
        1,
        &doc! { "insert": "c", "documents": documents, "$db": "shop" },
    )
    .await;
    let found = command(
        &mut stream,
        2,
        &doc! { "find": "c", "batchSize": 2, "sort": { "_id": 1 }, "$db": "shop" },
    )
    .await;
    let id = found.get_document("cursor").unwrap().get_i64("id").unwrap();
    assert_ne!(id, 0);
    // exhaustAllowed (bit 16): the server answers this getMore, then sends the rest.
    let get_more = doc! { "getMore": id, "collection": "c", "batchSize": 2, "$db": "shop" };
    send(&mut stream, &op_msg(3, 1 << 16, &get_more, &[])).await;
    let mut response_to = 3;
    let mut seen = Vec::new();
    loop {
        let reply = read_reply(&mut stream).await.expect("a streamed reply");
        assert_eq!(
            reply.response_to, response_to,
            "each answers the one before"
        );
        let flags = u32::from_le_bytes(reply.body[..4].try_into().unwrap());
        let body = Document::from_reader(&reply.body[5..]).unwrap();
        let cursor = body.get_document("cursor").unwrap();
        seen.extend(cursor.get_array("nextBatch").unwrap().iter().cloned());
        let open = cursor.get_i64("id").unwrap() != 0;
        assert_eq!(
            flags & 2 != 0,
            open,
            "moreToCome exactly while the cursor is open"
        );
        if !open {
            break;
        }
        response_to = reply.request_id;
    }
    let expected: Vec<Bson> = (2..9).map(|i| Bson::Document(doc! { "_id": i })).collect();
    assert_eq!(seen, expected);
    // The connection is back to request and reply.
    let ping = command(&mut stream, 4, &doc! { "ping": 1, "$db": "admin" }).await;
    assert_eq!(ping.get_f64("ok").ok(), Some(1.0));
    server.stop().await;
}
