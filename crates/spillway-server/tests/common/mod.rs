//! Shared by the server's tests: a server on a free loopback port (over the real command layer
//! or a stand-in executor), raw message builders and a raw client.

#![allow(dead_code, unreachable_pub)]

use std::net::SocketAddr;
use std::time::Duration;

use bson::{Document, doc};
use spillway::Database;
use spillway::command::Commands;
use spillway_server::{Executor, Server, ServerOptions};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

/// A running server; `stop` shuts it down and waits until it has.
pub struct Running {
    pub address: SocketAddr,
    stop: Option<oneshot::Sender<()>>,
    task: JoinHandle<Result<(), spillway_server::ServerError>>,
}

impl Running {
    pub async fn stop(mut self) {
        let _ = self.stop.take().expect("stopped once").send(());
        tokio::time::timeout(Duration::from_secs(20), &mut self.task)
            .await
            .expect("the server stops within 20 s")
            .expect("the server task did not panic")
            .expect("the server ran without error");
    }
}

/// Options for a test server: a free port on loopback.
pub fn options() -> ServerOptions {
    ServerOptions {
        port: 0,
        ..ServerOptions::default()
    }
}

/// A server on the real command layer over an in-memory database.
pub async fn start() -> Running {
    start_with(
        Commands::new(Database::open_in_memory().expect("in-memory database")),
        options(),
    )
    .await
}

/// A server on `executor` with `options`.
pub async fn start_with(executor: impl Executor, options: ServerOptions) -> Running {
    let server = Server::bind(executor, options).await.expect("bind");
    let address = server.local_addr();
    let (stop, stopped) = oneshot::channel();
    let task = tokio::spawn(server.run_until(async {
        let _ = stopped.await;
    }));
    Running {
        address,
        stop: Some(stop),
        task,
    }
}

/// An executor that answers every command with `{ ok: 1, command: <the command it got> }`.
pub struct Echo;

impl Executor for Echo {
    fn execute(&self, command: Document) -> Document {
        doc! { "ok": 1.0, "command": command }
    }
    fn reap_expired(&self) {}
    fn command_names(&self) -> &'static [&'static str] {
        &["echo"]
    }
}

/// Appends a BSON document's bytes.
pub fn bson_bytes(document: &Document) -> Vec<u8> {
    document.to_vec().expect("encodable")
}

/// A whole message: header (length filled in) + `body`.
pub fn message(request_id: i32, op_code: i32, body: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    out.extend_from_slice(&((16 + body.len()) as i32).to_le_bytes());
    out.extend_from_slice(&request_id.to_le_bytes());
    out.extend_from_slice(&0i32.to_le_bytes());
    out.extend_from_slice(&op_code.to_le_bytes());
    out.extend_from_slice(body);
    out
}

/// An OP_MSG built by hand: flags, a kind-0 body, kind-1 sequences, and a CRC-32C when the
/// checksum flag is set.
pub fn op_msg(
    request_id: i32,
    flags: u32,
    body: &Document,
    sequences: &[(&str, Vec<Document>)],
) -> Vec<u8> {
    let mut sections = Vec::new();
    sections.extend_from_slice(&flags.to_le_bytes());
    sections.push(0);
    sections.extend_from_slice(&bson_bytes(body));
    for (identifier, documents) in sequences {
        let mut payload = Vec::new();
        payload.extend_from_slice(identifier.as_bytes());
        payload.push(0);
        for document in documents {
            payload.extend_from_slice(&bson_bytes(document));
        }
        sections.push(1);
        sections.extend_from_slice(&((payload.len() + 4) as i32).to_le_bytes());
        sections.extend_from_slice(&payload);
    }
    if flags & 1 != 0 {
        sections.extend_from_slice(&[0; 4]);
        let mut whole = message(request_id, 2013, &sections);
        let end = whole.len() - 4;
        let crc = crc32c(&whole[..end]);
        whole[end..].copy_from_slice(&crc.to_le_bytes());
        return whole;
    }
    message(request_id, 2013, &sections)
}

/// CRC-32C (Castagnoli), bit by bit: an independent check of the server's crate.
pub fn crc32c(bytes: &[u8]) -> u32 {
    let mut crc = !0u32;
    for &byte in bytes {
        crc ^= u32::from(byte);
        for _ in 0..8 {
            crc = if crc & 1 == 1 {
                (crc >> 1) ^ 0x82F6_3B78
            } else {
                crc >> 1
            };
        }
    }
    !crc
}

/// An OP_QUERY of `query` on `namespace`.
pub fn op_query(request_id: i32, namespace: &str, query: &Document) -> Vec<u8> {
    let mut body = Vec::new();
    body.extend_from_slice(&0i32.to_le_bytes());
    body.extend_from_slice(namespace.as_bytes());
    body.push(0);
    body.extend_from_slice(&0i32.to_le_bytes());
    body.extend_from_slice(&(-1i32).to_le_bytes());
    body.extend_from_slice(&bson_bytes(query));
    message(request_id, 2004, &body)
}

/// A reply read back: header fields and the raw rest.
#[derive(Debug)]
pub struct Reply {
    pub request_id: i32,
    pub response_to: i32,
    pub op_code: i32,
    pub body: Vec<u8>,
}

impl Reply {
    /// The body document of an OP_MSG reply (flags 0, one kind-0 section).
    pub fn msg_document(&self) -> Document {
        assert_eq!(self.op_code, 2013, "an OP_MSG reply");
        assert_eq!(&self.body[..4], &[0, 0, 0, 0], "reply flags are 0");
        assert_eq!(self.body[4], 0, "a kind-0 section");
        Document::from_reader(&self.body[5..]).expect("a BSON body")
    }

    /// The one document of an OP_REPLY.
    pub fn op_reply_document(&self) -> Document {
        assert_eq!(self.op_code, 1, "an OP_REPLY");
        let number_returned = i32::from_le_bytes(self.body[16..20].try_into().unwrap());
        assert_eq!(number_returned, 1);
        Document::from_reader(&self.body[20..]).expect("a BSON document")
    }
}

/// Connects a raw client.
pub async fn connect(address: SocketAddr) -> TcpStream {
    TcpStream::connect(address).await.expect("connect")
}

/// Sends bytes.
pub async fn send(stream: &mut TcpStream, bytes: &[u8]) {
    stream.write_all(bytes).await.expect("send");
}

/// Reads one reply, or `None` when the server closed the connection (EOF or reset).
pub async fn read_reply(stream: &mut TcpStream) -> Option<Reply> {
    let mut header = [0u8; 16];
    let read = tokio::time::timeout(Duration::from_secs(20), stream.read_exact(&mut header))
        .await
        .expect("the server answers or closes within 20 s");
    if read.is_err() {
        return None;
    }
    let length = i32::from_le_bytes(header[..4].try_into().unwrap()) as usize;
    let mut body = vec![0u8; length - 16];
    stream.read_exact(&mut body).await.ok()?;
    Some(Reply {
        request_id: i32::from_le_bytes(header[4..8].try_into().unwrap()),
        response_to: i32::from_le_bytes(header[8..12].try_into().unwrap()),
        op_code: i32::from_le_bytes(header[12..16].try_into().unwrap()),
        body,
    })
}

/// Sends an OP_MSG of `command` and returns the reply document.
pub async fn command(stream: &mut TcpStream, request_id: i32, command: &Document) -> Document {
    send(stream, &op_msg(request_id, 0, command, &[])).await;
    let reply = read_reply(stream).await.expect("a reply");
    assert_eq!(reply.response_to, request_id);
    reply.msg_document()
}

/// Asserts that the server closes `stream` (after reading whatever it was sent).
pub async fn assert_closed(stream: &mut TcpStream, what: &str) {
    let mut buffer = [0u8; 64];
    let read = tokio::time::timeout(Duration::from_secs(20), stream.read(&mut buffer))
        .await
        .unwrap_or_else(|_| panic!("{what}: the server closes the connection within 20 s"));
    match read {
        Ok(0) | Err(_) => {}
        Ok(n) => panic!("{what}: expected the connection closed, got {n} bytes"),
    }
}

/// Asserts that a new connection still gets an answer to `ping`.
pub async fn assert_serving(address: SocketAddr) {
    let mut stream = connect(address).await;
    let reply = command(&mut stream, 99, &doc! { "ping": 1, "$db": "admin" }).await;
    assert_eq!(reply.get_f64("ok").ok(), Some(1.0));
}
