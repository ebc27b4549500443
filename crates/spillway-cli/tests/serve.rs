//! `spillway serve` as a process: it says where it listens, answers a client, and on SIGTERM
//! stops with exit code 0 after closing the database (the directory opens again).

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use spillway::bson::{Document, doc};

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
