//! Shared by this crate's tests: `spillway serve` on a free loopback port, and clients of it.
//!
//! No `mongod` can be installed on the build machines, so the backend is tested against
//! Spillway's own server (a one-node replica set with sessions and transactions, its
//! conformance measured with pymongo's test suite). In-process here: the same server code
//! `spillway serve` runs (`spillway_server::Server` over the command layer), on a thread with
//! its own runtime, for the whole test binary; the fault tests run it in a child process.

#![allow(dead_code, unreachable_pub)]

use std::net::SocketAddr;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use mongodb::bson::{Document, doc};
use mongodb::sync::Client;
use spillway::Database;
use spillway::command::Commands;
use spillway_server::{Server, ServerOptions};

/// The options of a test server: a free loopback port, fail points on.
pub fn options() -> ServerOptions {
    ServerOptions {
        port: 0,
        enable_test_commands: true,
        ..ServerOptions::default()
    }
}

/// Points the tests at a server already running (`host:port`) instead of their own:
/// `cargo xtask backend-peer` sets it to SecantusDB's address.
pub const SERVER_ENV: &str = "SPILLWAY_MONGODB_TEST_SERVER";

/// The address of this test binary's server over an in-memory database, started once; or
/// the server [`SERVER_ENV`] names.
pub fn server() -> SocketAddr {
    static ADDRESS: OnceLock<SocketAddr> = OnceLock::new();
    *ADDRESS.get_or_init(|| {
        if let Ok(address) = std::env::var(SERVER_ENV) {
            return address
                .parse()
                .unwrap_or_else(|_| panic!("{SERVER_ENV} must be host:port, not {address:?}"));
        }
        let (sender, receiver) = std::sync::mpsc::channel();
        std::thread::Builder::new()
            .name("spillway-serve".to_owned())
            .spawn(move || {
                let runtime = tokio::runtime::Builder::new_multi_thread()
                    .worker_threads(2)
                    .enable_all()
                    .build()
                    .expect("a runtime for the server");
                runtime.block_on(async move {
                    let database = Database::open_in_memory().expect("an in-memory database");
                    let server = Server::bind(Commands::new(database), options())
                        .await
                        .expect("the server binds");
                    sender.send(server.local_addr()).expect("the test waits");
                    // Serves until the test binary exits.
                    server
                        .run_until(std::future::pending::<()>())
                        .await
                        .expect("the server runs");
                });
            })
            .expect("the server thread starts");
        receiver
            .recv_timeout(Duration::from_secs(30))
            .expect("the server listens within 30 s")
    })
}

/// A name no other test of this binary uses (a database, an application name).
pub fn unique(prefix: &str) -> String {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    format!(
        "{prefix}{}_{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::SeqCst)
    )
}

/// A client of the server at `address` that names itself `app` in its handshake (fail points
/// can be limited to it).
pub fn client(address: SocketAddr, app: &str) -> Client {
    Client::with_uri_str(format!(
        "mongodb://{address}/?appName={app}&serverSelectionTimeoutMS=20000"
    ))
    .expect("a client")
}

/// Makes the commits of `app`'s clients fail after the next `commits` (MongoDB's `failCommand`
/// fail point: error 8, which no driver retries), until [`clear_commit_failures`].
pub fn fail_commits_after(client: &Client, app: &str, commits: u64) {
    configure(
        client,
        doc! {
            "configureFailPoint": "failCommand",
            "mode": { "skip": commits as i64 },
            "data": { "failCommands": ["commitTransaction"], "errorCode": 8, "appName": app },
        },
    );
}

/// Turns the commit fail point off.
pub fn clear_commit_failures(client: &Client) {
    configure(
        client,
        doc! { "configureFailPoint": "failCommand", "mode": "off" },
    );
}

/// Sends `configureFailPoint` (the server's test commands are on).
pub fn configure(client: &Client, command: Document) {
    client
        .database("admin")
        .run_command(command)
        .run()
        .expect("configureFailPoint");
}

/// What a client sent: each command's name and its size in bytes, in order; a command that
/// failed adds an entry `failed <name> <code>` (size 0).
pub type Sent = std::sync::Arc<std::sync::Mutex<Vec<(String, usize)>>>;

/// A client of the server at `address` that records every command it sends.
pub fn monitored_client(address: SocketAddr) -> (Client, Sent) {
    monitored_client_named(address, &unique("monitored"))
}

/// As [`monitored_client`], naming itself `app` in its handshake.
pub fn monitored_client_named(address: SocketAddr, app: &str) -> (Client, Sent) {
    use mongodb::event::EventHandler;
    use mongodb::event::command::CommandEvent;
    use mongodb::options::ClientOptions;

    let sent = Sent::default();
    let mut options = ClientOptions::parse(format!(
        "mongodb://{address}/?appName={app}&serverSelectionTimeoutMS=20000"
    ))
    .run()
    .expect("a valid URI");
    let log = std::sync::Arc::clone(&sent);
    options.command_event_handler = Some(EventHandler::callback(move |event| {
        let entry = match event {
            CommandEvent::Started(started) => {
                let size = started.command.to_vec().map_or(0, |bytes| bytes.len());
                (started.command_name, size)
            }
            CommandEvent::Failed(failed) => {
                let code = match failed.failure.kind.as_ref() {
                    mongodb::error::ErrorKind::Command(error) => error.code,
                    _ => -1,
                };
                (format!("failed {} {code}", failed.command_name), 0)
            }
            _ => return,
        };
        log.lock().expect("the command log").push(entry);
    }));
    (Client::with_options(options).expect("a client"), sent)
}
