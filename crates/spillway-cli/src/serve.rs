//! `spillway serve`: opens the database and hands it to `spillway-server`, which speaks the
//! MongoDB wire protocol until Ctrl-C or SIGTERM, then closes the database cleanly.
//!
//! This module must never hold server logic: it turns the command line into
//! `spillway_server::ServerOptions` and reports what happens.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{Context, Result};
use clap::Args;
use clap::builder::RangedU64ValueParser;
use spillway::{Database, Durability};
use spillway_server::wire::{MAX_BSON_DEPTH, MAX_MESSAGE_SIZE};
use spillway_server::{
    DEFAULT_AUTH_TIMEOUT, DEFAULT_IDLE_TIMEOUT, DEFAULT_MAX_BUFFERED_BYTES,
    DEFAULT_MAX_CONNECTIONS, DEFAULT_MAX_MESSAGE_SIZE_BEFORE_AUTH, DEFAULT_MESSAGE_TIMEOUT, Limits,
    ServerOptions, TlsFiles, default_max_connections_per_address, default_reserved_connections,
};

use crate::database::{Access, DurabilityChoice, open_database};

/// The database directory when none is given.
pub const DEFAULT_DIR: &str = "spillway-data";

/// `spillway serve [DIR] [--port 27017] [--bind 127.0.0.1] ...`
#[derive(Debug, Args)]
pub struct ServeArgs {
    /// Database directory, created if missing; every MongoDB database of the server lives in
    /// it. Default: ./spillway-data. With --upstream --auth it holds only the proxy's own
    /// users and roles (the data lives in the deployment).
    dir: Option<PathBuf>,
    /// Serve the collections stored without a database prefix (those `spillway shell`,
    /// `spillway demo` and the embedded API create) as this database [default: the
    /// directory's name, as the shell's db.getName() gives it, when it is a valid database
    /// name under whose prefix no collection is stored yet].
    #[arg(long, value_name = "NAME")]
    embedded_database: Option<String>,
    /// Serve a temporary in-memory database instead (gone when the server stops).
    #[arg(long, conflicts_with = "dir")]
    in_memory: bool,
    /// Serve a MongoDB deployment instead (`mongodb://[user:password@]host:port,...`, with
    /// `tls=true&tlsCAFile=...` for TLS): collections with a pattern policy are answered
    /// through the pattern layer, stored in the deployment; every other command goes to it
    /// unchanged, as the URI's user (docs/scale-out.md).
    #[arg(long, value_name = "MONGODB_URI",
          conflicts_with_all = ["in_memory", "embedded_database"])]
    upstream: Option<String>,
    /// TCP port; 0 picks a free one (the "listening on" line says which).
    #[arg(long, default_value_t = 27017)]
    port: u16,
    /// Address to listen on. The default accepts local clients only; think twice (--auth,
    /// --tls-cert) before binding a public address.
    #[arg(long, default_value = "127.0.0.1")]
    bind: String,
    /// Connections served at once; one more is closed at once, with a log line.
    #[arg(long, default_value_t = DEFAULT_MAX_CONNECTIONS, value_name = "N",
          value_parser = RangedU64ValueParser::<usize>::new().range(1..=1_000_000))]
    max_connections: usize,
    /// Connections one client address may hold at once [default: half of --max-connections].
    #[arg(long, value_name = "N", value_parser = RangedU64ValueParser::<usize>::new().range(1..))]
    max_connections_per_address: Option<usize>,
    /// The last N slots of --max-connections go only to addresses holding fewer than 10
    /// connections, so that new clients get in while a few addresses hold the rest
    /// [default: a tenth of --max-connections].
    #[arg(long, value_name = "N")]
    reserved_connections: Option<usize>,
    /// Close a connection that sends nothing for this many seconds; 0: never.
    #[arg(long, value_name = "SECONDS", default_value_t = DEFAULT_IDLE_TIMEOUT.as_secs())]
    idle_timeout: u64,
    /// The largest message, header included (announced to drivers as maxMessageSizeBytes); a
    /// larger length closes the connection from the header alone.
    #[arg(long, value_name = "BYTES", default_value_t = MAX_MESSAGE_SIZE,
          value_parser = RangedU64ValueParser::<usize>::new().range(4096..=MAX_MESSAGE_SIZE as u64))]
    max_message_size: usize,
    /// Levels of embedded documents and arrays allowed below a command's top level
    /// (MongoDB's maxBSONDepth, 21 to 200); a deeper message is answered with Overflow (15),
    /// checked before it is decoded.
    #[arg(long, value_name = "N", default_value_t = MAX_BSON_DEPTH,
          value_parser = RangedU64ValueParser::<usize>::new().range(21..=MAX_BSON_DEPTH as u64))]
    max_bson_depth: usize,
    /// Once a message's header has arrived, the rest must arrive within this many seconds,
    /// and a reply must be taken by the client within it.
    #[arg(long, value_name = "SECONDS", default_value_t = DEFAULT_MESSAGE_TIMEOUT.as_secs(),
          value_parser = clap::value_parser!(u64).range(1..))]
    message_timeout: u64,
    /// Bytes of partly received messages held across all connections (beyond each message's
    /// first 64 KiB); a connection that needs more waits, unread, within its message timeout.
    #[arg(long, value_name = "BYTES", default_value_t = DEFAULT_MAX_BUFFERED_BYTES,
          value_parser = RangedU64ValueParser::<usize>::new().range(1_048_576..))]
    max_buffered_bytes: usize,
    /// With --auth: the largest message of a connection that has not logged in.
    #[arg(long, value_name = "BYTES", default_value_t = DEFAULT_MAX_MESSAGE_SIZE_BEFORE_AUTH,
          value_parser = RangedU64ValueParser::<usize>::new().range(4096..=MAX_MESSAGE_SIZE as u64))]
    max_message_size_before_auth: usize,
    /// With --auth: a connection that has not logged in is closed after this many seconds
    /// without a message, and each of its messages must arrive within it.
    #[arg(long, value_name = "SECONDS", default_value_t = DEFAULT_AUTH_TIMEOUT.as_secs(),
          value_parser = clap::value_parser!(u64).range(1..))]
    auth_timeout: u64,
    /// Serve TLS only, with this certificate chain (PEM); needs --tls-key.
    #[arg(long, value_name = "FILE", requires = "tls_key")]
    tls_cert: Option<PathBuf>,
    /// The TLS private key (PEM: PKCS#8, PKCS#1 or SEC1); needs --tls-cert.
    #[arg(long, value_name = "FILE", requires = "tls_cert")]
    tls_key: Option<PathBuf>,
    /// Require SCRAM-SHA-256 authentication: before logging in, a connection may run only the
    /// handshake; while no user exists, a loopback client may create the first one
    /// (`db.createUser` in the admin database).
    #[arg(long)]
    auth: bool,
    /// `sync` fsyncs every commit before it is acknowledged (the default); `buffered` leaves
    /// flushing to the operating system (a crash may lose the last acknowledged writes).
    #[arg(long, value_enum, default_value_t = DurabilityChoice::Sync)]
    durability: DurabilityChoice,
    /// How long the server-side JavaScript (`$where`) of one command may run in all, with or
    /// without `maxTimeMS` (the smaller wins); past it the command fails with
    /// MaxTimeMSExpired (50). Scripts run on the command's own thread, never holding up
    /// other clients, and `killOp` stops them.
    #[arg(long, value_name = "MS", default_value_t = 5000, value_parser = clap::value_parser!(u64).range(1..))]
    script_time_limit_ms: u64,
    /// For drivers' test suites only, never in production: accept MongoDB's test commands
    /// (`configureFailPoint`, with which any client can make the server fail on purpose, and
    /// the Stable API's `testVersion2`, `testDeprecation`...).
    #[arg(long)]
    enable_test_commands: bool,
    /// mongod's spelling of server parameters; only `enableTestCommands=1` (the same as
    /// --enable-test-commands) or `enableTestCommands=0` is known.
    #[arg(long = "setParameter", value_name = "NAME=VALUE")]
    set_parameter: Vec<String>,
}

/// Whether `--enable-test-commands` or `--setParameter enableTestCommands=1` asks for test
/// commands; an unknown parameter is an error.
fn test_commands_enabled(args: &ServeArgs) -> Result<bool> {
    let mut enabled = args.enable_test_commands;
    for parameter in &args.set_parameter {
        match parameter.split_once('=') {
            Some(("enableTestCommands", "1" | "true")) => enabled = true,
            Some(("enableTestCommands", "0" | "false")) => {}
            _ => anyhow::bail!(
                "--setParameter {parameter}: spillway serve knows only enableTestCommands=1 or enableTestCommands=0"
            ),
        }
    }
    Ok(enabled)
}

/// The limits the flags ask for; the per-address cap and the reserve follow
/// `--max-connections` unless given.
fn limits(args: &ServeArgs) -> Limits {
    Limits {
        max_message_size: args.max_message_size,
        max_bson_depth: args.max_bson_depth,
        message_timeout: Duration::from_secs(args.message_timeout),
        max_buffered_bytes: args.max_buffered_bytes,
        max_connections_per_address: args
            .max_connections_per_address
            .unwrap_or_else(|| default_max_connections_per_address(args.max_connections)),
        reserved_connections: args
            .reserved_connections
            .unwrap_or_else(|| default_reserved_connections(args.max_connections)),
        max_message_size_before_auth: args.max_message_size_before_auth,
        auth_timeout: Duration::from_secs(args.auth_timeout),
    }
}

/// The server options the flags ask for; `database_path` is the directory served, if any.
fn server_options(
    args: &ServeArgs,
    database_path: Option<&PathBuf>,
    enable_test_commands: bool,
) -> ServerOptions {
    ServerOptions {
        bind: args.bind.clone(),
        port: args.port,
        max_connections: args.max_connections,
        idle_timeout: (args.idle_timeout > 0).then(|| Duration::from_secs(args.idle_timeout)),
        limits: limits(args),
        advertised_host: None,
        database_path: database_path.map(|path| path.display().to_string()),
        embedded_database: args.embedded_database.clone(),
        argv: std::env::args().collect(),
        tls: args
            .tls_cert
            .clone()
            .zip(args.tls_key.clone())
            .map(|(certificate, private_key)| TlsFiles {
                certificate,
                private_key,
            }),
        auth: args.auth,
        enable_test_commands,
    }
}

/// `uri` without its password, to be printed.
fn redacted(uri: &str) -> String {
    let Some((scheme, rest)) = uri.split_once("://") else {
        return uri.to_owned();
    };
    let authority_end = rest.find('/').unwrap_or(rest.len());
    match rest[..authority_end].rsplit_once('@') {
        Some((credentials, hosts)) => {
            let user = credentials.split(':').next().unwrap_or_default();
            format!("{scheme}://{user}:***@{hosts}{}", &rest[authority_end..])
        }
        None => uri.to_owned(),
    }
}

/// What the server prints once clients can connect: where it serves from on standard error,
/// `listening on ADDRESS` on standard output (test harnesses wait for that line).
fn announce(described: &str, enable_test_commands: bool, address: std::net::SocketAddr) {
    eprintln!("spillway serve: serving {described} (Ctrl-C or SIGTERM stops it)");
    if enable_test_commands {
        eprintln!(
            "spillway serve: test commands are enabled (configureFailPoint): for test suites only"
        );
    }
    let mut stdout = std::io::stdout().lock();
    let _ = writeln!(stdout, "listening on {address}");
    let _ = stdout.flush();
}

/// `spillway serve --upstream`: the pattern layer in front of the deployment at `uri`.
#[cfg(feature = "upstream")]
fn serve_upstream(
    uri: &str,
    users: Option<Database>,
    options: ServerOptions,
    announce: impl FnOnce(std::net::SocketAddr),
) -> Result<()> {
    Ok(spillway_proxy::serve_upstream_blocking(
        uri, users, options, announce,
    )?)
}

/// Without the `upstream` feature there is no proxy to run: say so rather than serve a local
/// database the user did not ask for.
#[cfg(not(feature = "upstream"))]
fn serve_upstream(
    _uri: &str,
    _users: Option<Database>,
    _options: ServerOptions,
    _announce: impl FnOnce(std::net::SocketAddr),
) -> Result<()> {
    anyhow::bail!("this spillway was built without the `upstream` feature, which --upstream needs")
}

/// Runs the server until Ctrl-C or SIGTERM. Prints `listening on ADDRESS` on standard output
/// once clients can connect, and returns after the database is closed.
pub fn run(args: &ServeArgs) -> Result<ExitCode> {
    let enable_test_commands = test_commands_enabled(args)?;
    if let Some(uri) = &args.upstream {
        let users = match (args.auth, &args.dir) {
            (false, Some(dir)) => anyhow::bail!(
                "spillway serve --upstream keeps no data of its own: {} would hold only the \
                 proxy's users, with --auth",
                dir.display()
            ),
            (false, None) => None,
            (true, dir) => {
                let dir = dir.clone().unwrap_or_else(|| PathBuf::from(DEFAULT_DIR));
                let durability = Access::ReadWrite(Durability::SyncEveryCommit);
                Some((open_database(Some(&dir), durability)?, dir))
            }
        };
        let options = server_options(args, None, enable_test_commands);
        let deployment = format!("the MongoDB deployment at {}", redacted(uri));
        let described = match &users {
            Some((_, dir)) => format!("{deployment}, its clients' users in {}", dir.display()),
            None => deployment,
        };
        let users = users.map(|(database, _)| database);
        serve_upstream(uri, users, options, |address| {
            announce(&described, enable_test_commands, address);
        })
        .context("spillway serve --upstream")?;
        eprintln!("spillway serve: stopped");
        return Ok(ExitCode::SUCCESS);
    }
    let durability = match args.durability {
        DurabilityChoice::Sync => Durability::SyncEveryCommit,
        DurabilityChoice::Buffered => Durability::OsBuffered,
    };
    let (database, database_path) = if args.in_memory {
        (open_database(None, Access::ReadWrite(durability))?, None)
    } else {
        let dir = args
            .dir
            .clone()
            .unwrap_or_else(|| PathBuf::from(DEFAULT_DIR));
        let database = open_database(Some(&dir), Access::ReadWrite(durability))?;
        (database, Some(dir))
    };
    database.set_script_time_limit(Duration::from_millis(args.script_time_limit_ms));
    let options = server_options(args, database_path.as_ref(), enable_test_commands);
    let described = database_path.as_ref().map_or_else(
        || "a temporary in-memory database".to_owned(),
        |path| format!("the database in {}", path.display()),
    );
    spillway_server::serve_blocking(database, options, |address| {
        announce(&described, enable_test_commands, address);
    })
    .context("spillway serve")?;
    eprintln!("spillway serve: stopped; {described} is closed");
    Ok(ExitCode::SUCCESS)
}
