//! `spillway serve` as a process: it says where it listens, answers a client, and on SIGTERM
//! stops with exit code 0 after closing the database (the directory opens again).

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use spillway::bson::{Bson, Document, doc};

/// An OP_MSG of `command`, built by hand.
fn op_msg(request_id: i32, command: &Document) -> Vec<u8> {
    let body = command.to_vec().unwrap();
    let mut out = Vec::new();
    out.extend_from_slice(&((16 + 4 + 1 + body.len()) as i32).to_le_bytes());
    out.extend_from_slice(&request_id.to_le_bytes());
    out.extend_from_slice(&0i32.to_le_bytes());
    out.extend_from_slice(&2013i32.to_le_bytes());
    out.extend_from_slice(&0u32.to_le_bytes());
    out.push(0);
    out.extend_from_slice(&body);
    out
}

fn read_reply(stream: &mut TcpStream) -> Document {
    let mut header = [0u8; 16];
    stream.read_exact(&mut header).unwrap();
    let length = i32::from_le_bytes(header[..4].try_into().unwrap()) as usize;
    let mut body = vec![0; length - 16];
    stream.read_exact(&mut body).unwrap();
    Document::from_reader(&body[5..]).unwrap()
}

#[cfg(unix)]
#[test]
fn serve_listens_answers_and_stops_cleanly_on_sigterm() {
    let directory = tempfile::tempdir().unwrap();
    let data = directory.path().join("data");
    let mut child = Command::new(env!("CARGO_BIN_EXE_spillway"))
        .args(["serve", data.to_str().unwrap(), "--port", "0"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the binary runs");
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    stdout.read_line(&mut line).unwrap();
    let address = line
        .trim()
        .strip_prefix("listening on ")
        .unwrap_or_else(|| panic!("a 'listening on' line, got {line:?}"))
        .to_owned();
    assert!(address.starts_with("127.0.0.1:"), "{address}");
    assert_ne!(address, "127.0.0.1:0", "the port picked is printed");

    let mut stream = TcpStream::connect(&address).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(20)))
        .unwrap();
    stream
        .write_all(&op_msg(1, &doc! { "ping": 1, "$db": "admin" }))
        .unwrap();
    assert_eq!(read_reply(&mut stream).get_f64("ok").ok(), Some(1.0));
    stream
        .write_all(&op_msg(2, &doc! { "hello": 1, "$db": "admin" }))
        .unwrap();
    let hello = read_reply(&mut stream);
    assert_eq!(hello.get_str("me").ok(), Some(address.as_str()));

    let killed = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "the server stops within 30 s of SIGTERM"
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    let mut stderr = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut stderr)
        .unwrap();
    assert!(
        status.success(),
        "exit code 0 after SIGTERM; stderr: {stderr}"
    );
    assert!(stderr.contains("SIGTERM"), "{stderr}");
    assert!(stderr.contains("is closed"), "{stderr}");
    // The store was closed: the directory opens again (its lock is free).
    spillway::Database::open(&data).expect("the database reopens after a clean stop");
}

#[test]
fn serve_refuses_a_port_in_use_with_a_clear_error() {
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = taken.local_addr().unwrap().port().to_string();
    let output = Command::new(env!("CARGO_BIN_EXE_spillway"))
        .args(["serve", "--in-memory", "--port", &port])
        .output()
        .unwrap();
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("cannot listen on 127.0.0.1:"), "{stderr}");
}

#[test]
fn mongods_set_parameter_spelling_turns_test_commands_on() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_spillway"))
        .args(["serve", "--in-memory", "--port", "0"])
        .args(["--setParameter", "enableTestCommands=1"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("the binary runs");
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    stdout.read_line(&mut line).unwrap();
    let address = line.trim().strip_prefix("listening on ").map(str::to_owned);
    let reply = address.map(|address| {
        let mut stream = TcpStream::connect(&address).unwrap();
        stream
            .set_read_timeout(Some(Duration::from_secs(20)))
            .unwrap();
        let parameter = doc! { "getParameter": 1, "enableTestCommands": 1, "$db": "admin" };
        stream.write_all(&op_msg(1, &parameter)).unwrap();
        read_reply(&mut stream)
    });
    child.kill().unwrap();
    child.wait().unwrap();
    let reply = reply.unwrap_or_else(|| panic!("a 'listening on' line, got {line:?}"));
    assert_eq!(
        reply.get_bool("enableTestCommands").ok(),
        Some(true),
        "{reply}"
    );
}

#[test]
fn serve_refuses_an_unknown_set_parameter() {
    let output = Command::new(env!("CARGO_BIN_EXE_spillway"))
        .args(["serve", "--in-memory", "--port", "0"])
        .args(["--setParameter", "notAParameter=1"])
        .output()
        .unwrap();
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("notAParameter=1"), "{stderr}");
}

#[test]
fn serve_help_lists_every_limit_with_its_default() {
    let output = Command::new(env!("CARGO_BIN_EXE_spillway"))
        .args(["serve", "--help"])
        .output()
        .unwrap();
    assert!(output.status.success());
    let help = String::from_utf8_lossy(&output.stdout);
    for (flag, default) in [
        ("--max-connections <N>", "[default: 1000]"),
        (
            "--max-connections-per-address <N>",
            "[default: half of --max-connections]",
        ),
        (
            "--reserved-connections <N>",
            "[default: a tenth of --max-connections]",
        ),
        ("--idle-timeout <SECONDS>", "[default: 1800]"),
        ("--max-message-size <BYTES>", "[default: 48000000]"),
        ("--max-bson-depth <N>", "[default: 200]"),
        ("--message-timeout <SECONDS>", "[default: 60]"),
        ("--max-buffered-bytes <BYTES>", "[default: 268435456]"),
        (
            "--max-message-size-before-auth <BYTES>",
            "[default: 1048576]",
        ),
        ("--auth-timeout <SECONDS>", "[default: 30]"),
    ] {
        let at = help
            .find(flag)
            .unwrap_or_else(|| panic!("{flag} is missing from serve --help:\n{help}"));
        let next_flag = help[at + flag.len()..]
            .find("\n      --")
            .map_or(help.len(), |end| at + flag.len() + end);
        assert!(
            help[at..next_flag].contains(default),
            "{flag} does not show {default}:\n{}",
            &help[at..next_flag]
        );
    }
}

#[test]
fn serve_refuses_a_limit_out_of_range() {
    for args in [
        ["--max-bson-depth", "1000"],
        ["--max-bson-depth", "5"],
        ["--max-message-size", "100"],
        ["--max-buffered-bytes", "0"],
        ["--message-timeout", "0"],
    ] {
        let output = Command::new(env!("CARGO_BIN_EXE_spillway"))
            .args(["serve", "--in-memory", "--port", "0"])
            .args(args)
            .output()
            .unwrap();
        assert!(!output.status.success(), "{args:?} was accepted");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(stderr.contains(args[0]), "{args:?}: {stderr}");
    }
}

/// The limits given as flags reach the server: `hello` announces the message size, and a
/// command deeper than `--max-bson-depth` is answered with Overflow (15) on a connection that
/// goes on.
#[test]
fn serve_applies_the_limits_given_as_flags() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_spillway"))
        .args(["serve", "--in-memory", "--port", "0"])
        .args(["--max-message-size", "100000", "--max-bson-depth", "30"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("the binary runs");
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    stdout.read_line(&mut line).unwrap();
    let address = line.trim().strip_prefix("listening on ").map(str::to_owned);
    let replies = address.map(|address| {
        let mut stream = TcpStream::connect(&address).unwrap();
        stream
            .set_read_timeout(Some(Duration::from_secs(20)))
            .unwrap();
        stream
            .write_all(&op_msg(1, &doc! { "hello": 1, "$db": "admin" }))
            .unwrap();
        let hello = read_reply(&mut stream);
        let mut filter = doc! { "x": 1 };
        for _ in 0..30 {
            filter = doc! { "n": filter };
        }
        let find = doc! { "find": "c", "filter": filter, "$db": "test" };
        stream.write_all(&op_msg(2, &find)).unwrap();
        let deep = read_reply(&mut stream);
        stream
            .write_all(&op_msg(3, &doc! { "ping": 1, "$db": "admin" }))
            .unwrap();
        (hello, deep, read_reply(&mut stream))
    });
    child.kill().unwrap();
    child.wait().unwrap();
    let (hello, deep, ping) =
        replies.unwrap_or_else(|| panic!("a 'listening on' line, got {line:?}"));
    assert_eq!(hello.get_i32("maxMessageSizeBytes").ok(), Some(100_000));
    assert_eq!(deep.get_i32("code").ok(), Some(15), "{deep}");
    assert_eq!(ping.get_f64("ok").ok(), Some(1.0));
}

/// Runs `spillway serve` with `args`, sends it `command`, stops it; its reply and stderr.
#[cfg(unix)]
fn serve_and_ask(args: &[&str], command: &Document) -> (Document, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_spillway"))
        .arg("serve")
        .args(args)
        .args(["--port", "0"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the binary runs");
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    stdout.read_line(&mut line).unwrap();
    let Some(address) = line.trim().strip_prefix("listening on ") else {
        let _ = child.kill();
        let mut stderr = String::new();
        child
            .stderr
            .take()
            .unwrap()
            .read_to_string(&mut stderr)
            .unwrap();
        panic!("a 'listening on' line, got {line:?}; stderr: {stderr}");
    };
    let mut stream = TcpStream::connect(address).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(20)))
        .unwrap();
    stream.write_all(&op_msg(1, command)).unwrap();
    let reply = read_reply(&mut stream);
    let killed = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    let status = child.wait().unwrap();
    let mut stderr = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut stderr)
        .unwrap();
    assert!(status.success(), "{stderr}");
    (reply, stderr)
}

fn database_names(reply: &Document) -> Vec<String> {
    reply
        .get_array("databases")
        .unwrap_or_else(|_| panic!("a listDatabases reply: {reply}"))
        .iter()
        .map(|database| {
            database
                .as_document()
                .unwrap()
                .get_str("name")
                .unwrap()
                .to_owned()
        })
        .collect()
}

#[cfg(unix)]
#[test]
fn serve_names_the_embedded_database_after_the_directory_and_never_hides_stored_data() {
    let directory = tempfile::tempdir().unwrap();
    let data = directory.path().join("shelf");
    {
        let db = spillway::Database::open(&data).unwrap();
        db.collection::<Document>("books")
            .insert_one(doc! { "_id": 1 })
            .run()
            .unwrap();
    }
    let list = doc! { "listDatabases": 1, "nameOnly": true, "$db": "admin" };
    let (reply, stderr) = serve_and_ask(&[data.to_str().unwrap()], &list);
    assert_eq!(database_names(&reply), ["admin", "shelf"], "{stderr}");
    assert!(
        stderr.contains("spillway serve: serving the 1 collection stored without a database prefix (the embedded API's and the shell's) as database 'shelf'"),
        "{stderr}"
    );

    // A server of old stored database `shelf` under its prefix: it stays what `shelf` is.
    {
        let commands = spillway::command::Commands::new(spillway::Database::open(&data).unwrap());
        let reply = commands.execute(doc! {
            "insert": "old", "documents": [{ "_id": 1 }], "$db": "shelf",
        });
        assert_eq!(reply.get_i32("n").ok(), Some(1), "{reply}");
    }
    let (reply, stderr) = serve_and_ask(
        &[data.to_str().unwrap()],
        &doc! { "listCollections": 1, "nameOnly": true, "$db": "shelf" },
    );
    let listed = reply
        .get_document("cursor")
        .unwrap()
        .get_array("firstBatch")
        .unwrap();
    assert_eq!(listed.len(), 1, "{reply}");
    assert_eq!(
        listed[0].as_document().unwrap().get_str("name").ok(),
        Some("old")
    );
    let notice: Vec<&str> = stderr
        .lines()
        .filter(|line| line.contains("not serving"))
        .collect();
    assert_eq!(
        notice,
        [
            "spillway serve: not serving the 1 collection stored without a database prefix (books): database 'shelf' already has collections stored under its prefix (shelf.old), which stay served; serve them with --embedded-database NAME"
        ],
        "{stderr}"
    );

    let (reply, stderr) = serve_and_ask(
        &[data.to_str().unwrap(), "--embedded-database", "library"],
        &list,
    );
    assert_eq!(
        database_names(&reply),
        ["admin", "library", "shelf"],
        "{stderr}"
    );
    let output = Command::new(env!("CARGO_BIN_EXE_spillway"))
        .args(["serve", data.to_str().unwrap(), "--port", "0"])
        .args(["--embedded-database", "shelf"])
        .output()
        .unwrap();
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains(
            "--embedded-database shelf: the store already holds database 'shelf' (shelf.old"
        ),
        "{stderr}"
    );
}

#[test]
fn serve_upstream_keeps_only_its_users_in_the_directory_and_never_prints_the_password() {
    let directory = tempfile::tempdir().unwrap();
    let users = directory.path().join("proxy-users");
    let users = users.to_str().unwrap();
    // Nothing listens on port 1: the proxy starts all the same and connects on demand.
    let uri = "mongodb://proxy:s3cret-pw@127.0.0.1:1/?authSource=admin";

    let output = Command::new(env!("CARGO_BIN_EXE_spillway"))
        .args(["serve", users, "--upstream", uri, "--port", "0"])
        .output()
        .unwrap();
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("with --auth"), "{stderr}");

    let (reply, stderr) = serve_and_ask(
        &[users, "--upstream", uri, "--auth"],
        &doc! { "find": "books", "$db": "shop" },
    );
    assert_eq!(reply.get_i32("code").ok(), Some(13), "{reply}");
    assert!(stderr.contains("proxy:***@127.0.0.1:1"), "{stderr}");
    assert!(stderr.contains("users in"), "{stderr}");
    assert!(!stderr.contains("s3cret-pw"), "{stderr}");
    // The directory is a database of its own, for the proxy's users only.
    let database = spillway::Database::open(users).expect("the users' database opens");
    assert!(database.list_collection_names().run().unwrap().is_empty());
}

#[cfg(unix)]
#[test]
fn a_directory_name_that_cannot_name_a_database_is_test_for_the_shell_and_for_serve() {
    let directory = tempfile::tempdir().unwrap();
    let data = directory.path().join("v1.2");
    let mut shell = Command::new(env!("CARGO_BIN_EXE_spillway"))
        .args(["shell", data.to_str().unwrap()])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    shell
        .stdin
        .as_mut()
        .unwrap()
        .write_all(b"db.books.insertOne({ _id: 1 })\ndb.getName()\n")
        .unwrap();
    let output = shell.wait_with_output().unwrap();
    assert!(output.status.success(), "{output:?}");
    assert_eq!(
        String::from_utf8_lossy(&output.stdout).lines().last(),
        Some("test"),
        "{output:?}"
    );
    let (reply, stderr) = serve_and_ask(
        &[data.to_str().unwrap()],
        &doc! { "find": "books", "$db": "test" },
    );
    let found = reply
        .get_document("cursor")
        .and_then(|cursor| cursor.get_array("firstBatch"))
        .unwrap_or_else(|_| panic!("a find reply: {reply}"));
    assert_eq!(found, &vec![Bson::Document(doc! { "_id": 1 })], "{stderr}");
    assert!(
        stderr.contains("as database 'test' (the directory name of"),
        "{stderr}"
    );
}
