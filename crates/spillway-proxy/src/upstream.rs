//! [`Upstream`]: the deployment behind the proxy, spoken to over MongoDB's wire protocol with
//! the client's command unchanged (its `lsid`, `txnNumber`, `startTransaction`,
//! `$clusterTime`, read and write concerns), so that sessions, transactions, retryable writes
//! and cursors are the upstream's own: a retry after a proxy restart carries the same session
//! and transaction number, and the upstream answers it once.
//!
//! The official driver cannot forward a command as it came (it adds its own session to every
//! command it runs), so forwarding is done here, on connections to the primary framed by
//! `spillway_server::wire`: a pool of blocking ones for the executor's own steps
//! ([`Upstream::run`]), and a pool of async ones on the server's runtime for the commands the
//! proxy hands on unchanged ([`Upstream::run_async`]), which so hold no thread while the
//! upstream works. The pattern layer's own writes go through the driver
//! (`spillway-mongodb`). This module must never look inside a command.
//!
//! Each connection speaks TLS when the URI asks for it (`tls=true`, `tlsCAFile`,
//! `tlsCertificateKeyFile`) and logs in with the URI's credentials (SCRAM-SHA-256 or
//! SCRAM-SHA-1, negotiated with `saslSupportedMechs` as drivers do, `authSource` or the URI's
//! database or `admin`), before any client's command goes over it: every forwarded command
//! runs as the proxy's own upstream user.

use std::io::{Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use bson::spec::BinarySubtype;
use bson::{Binary, Bson, Document, doc};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName};
use rustls::{ClientConfig, ClientConnection, RootCertStore, StreamOwned};
use spillway_mongodb::mongodb::options::{
    AuthMechanism, ConnectionString, HostInfo, ServerAddress, Tls, TlsOptions,
};
use spillway_server::ScramClient;
use spillway_server::wire::{self, HEADER_LEN, Header, MAX_MESSAGE_SIZE, OpMsg, Request};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio_rustls::TlsConnector;

/// Connections kept open between commands.
const IDLE_CONNECTIONS: usize = 64;

/// How long a connection attempt may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// Why the upstream could not answer a command.
#[derive(Debug)]
pub enum UpstreamError {
    /// The URI could not be used.
    Uri(String),
    /// No member of the deployment could be reached, or the connection failed mid-command.
    Network(String),
    /// The upstream refused the proxy's credentials, or the proxy could not verify the
    /// upstream (its TLS certificate, its SCRAM signature).
    Authentication(String),
}

impl std::fmt::Display for UpstreamError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            UpstreamError::Uri(message) => write!(f, "upstream URI: {message}"),
            UpstreamError::Network(message) => write!(f, "upstream unreachable: {message}"),
            UpstreamError::Authentication(message) => {
                write!(f, "the proxy could not log in to the upstream: {message}")
            }
        }
    }
}

impl std::error::Error for UpstreamError {}

/// The deployment behind the proxy: its members, and open connections to its primary.
pub struct Upstream {
    members: Vec<String>,
    primary: Mutex<Option<String>>,
    idle: Mutex<Vec<Connection>>,
    idle_async: Mutex<Vec<AsyncConnection>>,
    next_request: AtomicI32,
    login: Option<Login>,
    tls: Option<Arc<ClientConfig>>,
}

impl std::fmt::Debug for Upstream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Upstream")
            .field("members", &self.members)
            .field("primary", &self.primary)
            .field("login", &self.login)
            .field("tls", &self.tls.is_some())
            .finish_non_exhaustive()
    }
}

/// The proxy's own credentials toward the upstream.
#[derive(Clone)]
struct Login {
    user: String,
    password: String,
    /// The database the user is defined in (`authSource`).
    source: String,
    /// The mechanism the URI names; negotiated when `None`.
    mechanism: Option<&'static str>,
}

impl std::fmt::Debug for Login {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never the password.
        f.debug_struct("Login")
            .field("user", &self.user)
            .field("source", &self.source)
            .finish_non_exhaustive()
    }
}

/// One async connection to a member, plain or TLS.
type AsyncConnection = Box<dyn AsyncStream>;

/// What an async connection is read and written through.
trait AsyncStream: AsyncRead + AsyncWrite + Unpin + Send {}

impl<T: AsyncRead + AsyncWrite + Unpin + Send> AsyncStream for T {}

/// One connection to a member, plain or TLS.
enum Connection {
    Plain(TcpStream),
    Tls(Box<StreamOwned<ClientConnection, TcpStream>>),
}

impl std::fmt::Debug for Connection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Connection::Plain(_) => "Connection::Plain",
            Connection::Tls(_) => "Connection::Tls",
        })
    }
}

impl Read for Connection {
    fn read(&mut self, buffer: &mut [u8]) -> std::io::Result<usize> {
        match self {
            Connection::Plain(stream) => stream.read(buffer),
            Connection::Tls(stream) => stream.read(buffer),
        }
    }
}

impl Write for Connection {
    fn write(&mut self, buffer: &[u8]) -> std::io::Result<usize> {
        match self {
            Connection::Plain(stream) => stream.write(buffer),
            Connection::Tls(stream) => stream.write(buffer),
        }
    }

    fn flush(&mut self) -> std::io::Result<()> {
        match self {
            Connection::Plain(stream) => stream.flush(),
            Connection::Tls(stream) => stream.flush(),
        }
    }
}

impl Upstream {
    /// The deployment `uri` names (`mongodb://host[:port][,host...]/...`). Nothing is
    /// connected until the first command.
    ///
    /// # Errors
    /// A URI the driver cannot parse, or one asking for what this forwarder does not speak
    /// (mechanisms other than SCRAM, TLS without certificate checks, `mongodb+srv`, Unix
    /// sockets); a CA or certificate file that cannot be read.
    pub fn new(uri: &str) -> Result<Upstream, UpstreamError> {
        let parsed =
            ConnectionString::parse(uri).map_err(|error| UpstreamError::Uri(error.to_string()))?;
        let login = parsed
            .credential
            .as_ref()
            .map(|credential| login(credential, parsed.default_database.as_deref()))
            .transpose()?;
        let tls = match &parsed.tls {
            Some(Tls::Enabled(options)) => Some(tls_config(options)?),
            Some(Tls::Disabled) | None => None,
        };
        let HostInfo::HostIdentifiers(hosts) = parsed.host_info else {
            return Err(UpstreamError::Uri(
                "mongodb+srv URIs are not supported yet: list the members".to_owned(),
            ));
        };
        let members = hosts
            .into_iter()
            .map(|host| match host {
                ServerAddress::Tcp { host, port } => {
                    Ok(format!("{host}:{}", port.unwrap_or(27017)))
                }
                other => Err(UpstreamError::Uri(format!(
                    "{other}: only TCP members are supported"
                ))),
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Upstream {
            members,
            primary: Mutex::new(None),
            idle: Mutex::new(Vec::new()),
            idle_async: Mutex::new(Vec::new()),
            next_request: AtomicI32::new(1),
            login,
            tls,
        })
    }

    /// Sends `command` (its database in `$db`) and returns the upstream's reply, whatever it
    /// says (an `ok: 0` reply is an answer, not an error).
    ///
    /// # Errors
    /// [`UpstreamError::Network`] when the command may not have reached the upstream or its
    /// reply was lost: the caller cannot know whether it ran; [`UpstreamError::Authentication`]
    /// when a new connection could not log in (the command was not sent).
    pub fn run(&self, command: &Document) -> Result<Document, UpstreamError> {
        let mut connection = self.connection()?;
        let reply = self.round_trip(&mut connection, command);
        self.settle(reply, connection, &self.idle)
    }

    /// [`Upstream::run`] on an async connection, for a caller on a tokio runtime (the
    /// server's, whose reactor the connection then belongs to). Only a new connection with
    /// no primary known yet takes a thread, to find the primary.
    ///
    /// # Errors
    /// As [`Upstream::run`].
    pub async fn run_async(
        self: &Arc<Self>,
        command: &Document,
    ) -> Result<Document, UpstreamError> {
        let mut connection = self.async_connection().await?;
        let reply = self.round_trip_async(&mut connection, command).await;
        self.settle(reply, connection, &self.idle_async)
    }

    /// The outcome of one round trip on `connection`: kept for the next command, or the
    /// primary looked for again when the member is no longer primary or the connection
    /// failed (the caller cannot know whether the command ran).
    fn settle<C>(
        &self,
        reply: std::io::Result<Document>,
        connection: C,
        idle: &Mutex<Vec<C>>,
    ) -> Result<Document, UpstreamError> {
        match reply {
            Ok(reply) => {
                if not_primary(&reply) {
                    self.forget_primary();
                } else {
                    keep(idle, connection);
                }
                Ok(reply)
            }
            Err(error) => {
                self.forget_primary();
                Err(UpstreamError::Network(error.to_string()))
            }
        }
    }

    /// A new connection to `member`: TCP, then TLS and the login when the URI asks for them.
    fn open(&self, member: &str) -> Result<Connection, UpstreamError> {
        let tcp = connect(member).map_err(|error| network(member, &error))?;
        let mut connection = match &self.tls {
            None => Connection::Plain(tcp),
            Some(config) => {
                let mut tls = ClientConnection::new(Arc::clone(config), tls_name(member)?)
                    .map_err(|error| tls_failure(member, &error))?;
                let mut tcp = tcp;
                while tls.is_handshaking() {
                    tls.complete_io(&mut tcp)
                        .map_err(|error| tls_failure(member, &error))?;
                }
                Connection::Tls(Box::new(StreamOwned::new(tls, tcp)))
            }
        };
        if let Some(login) = &self.login {
            let (mut conversation, mut command) = LoginConversation::start(login)?;
            loop {
                let reply = self
                    .round_trip(&mut connection, &command)
                    .map_err(|error| network(member, &error))?;
                match conversation
                    .answer(&reply)
                    .map_err(|error| login_failure(member, login, error))?
                {
                    Some(next) => command = next,
                    None => break,
                }
            }
        }
        Ok(connection)
    }

    /// [`Upstream::open`] as an async connection.
    async fn open_async(&self, member: &str) -> Result<AsyncConnection, UpstreamError> {
        let tcp = tokio::time::timeout(CONNECT_TIMEOUT, tokio::net::TcpStream::connect(member))
            .await
            .map_err(|_| network(member, &"connection timed out"))?
            .map_err(|error| network(member, &error))?;
        tcp.set_nodelay(true)
            .map_err(|error| network(member, &error))?;
        let mut connection: AsyncConnection = match &self.tls {
            None => Box::new(tcp),
            Some(config) => Box::new(
                TlsConnector::from(Arc::clone(config))
                    .connect(tls_name(member)?, tcp)
                    .await
                    .map_err(|error| tls_failure(member, &error))?,
            ),
        };
        if let Some(login) = &self.login {
            let (mut conversation, mut command) = LoginConversation::start(login)?;
            loop {
                let reply = self
                    .round_trip_async(&mut connection, &command)
                    .await
                    .map_err(|error| network(member, &error))?;
                match conversation
                    .answer(&reply)
                    .map_err(|error| login_failure(member, login, error))?
                {
                    Some(next) => command = next,
                    None => break,
                }
            }
        }
        Ok(connection)
    }

    /// An idle async connection to the primary, or a new one (the primary found first, on
    /// the blocking pool, when none is known).
    async fn async_connection(self: &Arc<Self>) -> Result<AsyncConnection, UpstreamError> {
        if let Some(connection) = self
            .idle_async
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .pop()
        {
            return Ok(connection);
        }
        let known = self
            .primary
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone();
        if let Some(primary) = known {
            match self.open_async(&primary).await {
                Ok(connection) => return Ok(connection),
                Err(error @ UpstreamError::Authentication(_)) => return Err(error),
                Err(_) => {}
            }
        }
        let upstream = Arc::clone(self);
        let primary = tokio::task::spawn_blocking(move || {
            let (primary, connection) = upstream.discover()?;
            keep(&upstream.idle, connection);
            Ok::<_, UpstreamError>(primary)
        })
        .await
        .map_err(|error| UpstreamError::Network(format!("finding the primary: {error}")))??;
        self.open_async(&primary).await
    }

    /// An idle connection to the primary, or a new one.
    fn connection(&self) -> Result<Connection, UpstreamError> {
        if let Some(connection) = self
            .idle
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .pop()
        {
            return Ok(connection);
        }
        let known = self
            .primary
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone();
        if let Some(primary) = known {
            match self.open(&primary) {
                Ok(connection) => return Ok(connection),
                // Refused credentials are not cured by asking another member.
                Err(error @ UpstreamError::Authentication(_)) => return Err(error),
                Err(_) => {}
            }
        }
        self.discover().map(|(_, connection)| connection)
    }

    /// Asks each member which is primary and connects to it: the primary, and the
    /// connection.
    fn discover(&self) -> Result<(String, Connection), UpstreamError> {
        let mut failures = Vec::new();
        let hello = doc! { "hello": 1, "$db": "admin" };
        let mut candidates = self.members.clone();
        let mut asked = 0;
        while asked < candidates.len() {
            let member = candidates[asked].clone();
            asked += 1;
            let mut connection = match self.open(&member) {
                Ok(connection) => connection,
                Err(error @ UpstreamError::Authentication(_)) => return Err(error),
                Err(error) => {
                    failures.push(error.to_string());
                    continue;
                }
            };
            match self.round_trip(&mut connection, &hello) {
                Ok(reply) if is_primary(&reply) => {
                    *self.primary.lock().unwrap_or_else(PoisonError::into_inner) =
                        Some(member.clone());
                    return Ok((member, connection));
                }
                Ok(reply) => {
                    // A secondary names the primary it knows; ask it next.
                    if let Ok(primary) = reply.get_str("primary")
                        && !candidates.iter().any(|known| known == primary)
                    {
                        candidates.push(primary.to_owned());
                    }
                    failures.push(format!("{member}: not the primary"));
                }
                Err(error) => failures.push(format!("{member}: {error}")),
            }
        }
        Err(UpstreamError::Network(format!(
            "no primary among {}: {}",
            self.members.join(","),
            failures.join("; ")
        )))
    }

    fn forget_primary(&self) {
        *self.primary.lock().unwrap_or_else(PoisonError::into_inner) = None;
        self.idle
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clear();
        self.idle_async
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clear();
    }

    /// One OP_MSG out, its reply in.
    fn round_trip(
        &self,
        connection: &mut Connection,
        command: &Document,
    ) -> std::io::Result<Document> {
        connection.write_all(&self.request(command)?)?;
        let mut header = [0; HEADER_LEN];
        connection.read_exact(&mut header)?;
        let mut whole = reply_buffer(header)?;
        connection.read_exact(&mut whole[HEADER_LEN..])?;
        decode_reply(&whole)
    }

    /// [`Upstream::round_trip`] on an async connection.
    async fn round_trip_async(
        &self,
        connection: &mut AsyncConnection,
        command: &Document,
    ) -> std::io::Result<Document> {
        connection.write_all(&self.request(command)?).await?;
        let mut header = [0; HEADER_LEN];
        connection.read_exact(&mut header).await?;
        let mut whole = reply_buffer(header)?;
        connection.read_exact(&mut whole[HEADER_LEN..]).await?;
        decode_reply(&whole)
    }

    /// The OP_MSG of `command`, with a request id of its own.
    fn request(&self, command: &Document) -> std::io::Result<Vec<u8>> {
        let request_id = self.next_request.fetch_add(1, Ordering::Relaxed);
        with_sequences(command)
            .encode(request_id, 0)
            .map_err(invalid_data)
    }
}

/// Keeps `connection` for a later command, up to [`IDLE_CONNECTIONS`].
fn keep<C>(idle: &Mutex<Vec<C>>, connection: C) {
    let mut idle = idle.lock().unwrap_or_else(PoisonError::into_inner);
    if idle.len() < IDLE_CONNECTIONS {
        idle.push(connection);
    }
}

/// A buffer for the whole reply whose `header` was read, the header in place.
fn reply_buffer(header: [u8; HEADER_LEN]) -> std::io::Result<Vec<u8>> {
    let parsed = Header::parse(&header, MAX_MESSAGE_SIZE).map_err(invalid_data)?;
    let mut whole = header.to_vec();
    whole.resize(parsed.length, 0);
    Ok(whole)
}

fn decode_reply(whole: &[u8]) -> std::io::Result<Document> {
    match wire::decode_message(whole).map_err(invalid_data)? {
        Request::Msg(reply) => reply.into_command().map_err(invalid_data),
        Request::Query(_) => Err(invalid_data("the upstream answered with an OP_QUERY")),
    }
}

/// A SCRAM login as a conversation, driven over a blocking or an async connection alike:
/// the mechanism the URI names or the strongest the user has (`saslSupportedMechs`), then
/// `saslStart` and `saslContinue` until the upstream is done.
struct LoginConversation<'a> {
    login: &'a Login,
    step: LoginStep,
    scram: Option<ScramClient>,
    conversation: Bson,
}

/// What the next reply of a [`LoginConversation`] answers.
enum LoginStep {
    /// The `hello` that lists the user's mechanisms.
    Mechanisms,
    /// `saslStart`: the server's first message.
    Started,
    /// The proof: the server's signature.
    Proved,
    /// An empty `saslContinue`, for a server that ignores `skipEmptyExchange`.
    Emptied,
}

impl<'a> LoginConversation<'a> {
    /// The conversation, and its first command.
    fn start(login: &'a Login) -> Result<(LoginConversation<'a>, Document), UpstreamError> {
        let mut conversation = LoginConversation {
            login,
            step: LoginStep::Mechanisms,
            scram: None,
            conversation: Bson::Int32(1),
        };
        let first = if let Some(mechanism) = login.mechanism {
            conversation.sasl_start(mechanism)?
        } else {
            doc! {
                "hello": 1,
                "saslSupportedMechs": format!("{}.{}", login.source, login.user),
                "$db": "admin",
            }
        };
        Ok((conversation, first))
    }

    /// The command that answers `reply`, or `None` when the login is done.
    fn answer(&mut self, reply: &Document) -> Result<Option<Document>, UpstreamError> {
        let refused = || {
            UpstreamError::Authentication(
                reply
                    .get_str("errmsg")
                    .unwrap_or("the upstream refused the login")
                    .to_owned(),
            )
        };
        let scram_failure =
            |error: spillway_server::ScramError| UpstreamError::Authentication(error.to_string());
        match self.step {
            LoginStep::Mechanisms => {
                let offered = reply.get_array("saslSupportedMechs").ok();
                let sha1_only = offered.is_some_and(|mechanisms| {
                    !mechanisms.contains(&Bson::from("SCRAM-SHA-256"))
                        && mechanisms.contains(&Bson::from("SCRAM-SHA-1"))
                });
                let mechanism = if sha1_only {
                    "SCRAM-SHA-1"
                } else {
                    "SCRAM-SHA-256"
                };
                self.sasl_start(mechanism).map(Some)
            }
            LoginStep::Started => {
                let server_first = sasl_payload(reply).ok_or_else(refused)?;
                self.conversation = reply
                    .get("conversationId")
                    .cloned()
                    .unwrap_or(Bson::Int32(1));
                let scram = self.scram.as_mut().ok_or_else(refused)?;
                let proof = scram.final_message(&server_first).map_err(scram_failure)?;
                self.step = LoginStep::Proved;
                Ok(Some(self.sasl_continue(proof)))
            }
            LoginStep::Proved => {
                let server_final = sasl_payload(reply).ok_or_else(refused)?;
                let scram = self.scram.as_ref().ok_or_else(refused)?;
                scram
                    .check_server_final(&server_final)
                    .map_err(scram_failure)?;
                self.step = LoginStep::Emptied;
                Ok(self.unless_done(reply))
            }
            LoginStep::Emptied => {
                sasl_payload(reply).ok_or_else(refused)?;
                Ok(self.unless_done(reply))
            }
        }
    }

    fn sasl_start(&mut self, mechanism: &str) -> Result<Document, UpstreamError> {
        let scram = ScramClient::new(mechanism, &self.login.user, &self.login.password)
            .map_err(|error| UpstreamError::Authentication(error.to_string()))?;
        let command = doc! {
            "saslStart": 1,
            "mechanism": mechanism,
            "payload": binary(scram.first_message()),
            "options": { "skipEmptyExchange": true },
            "$db": self.login.source.as_str(),
        };
        self.scram = Some(scram);
        self.step = LoginStep::Started;
        Ok(command)
    }

    fn sasl_continue(&self, payload: Vec<u8>) -> Document {
        doc! {
            "saslContinue": 1,
            "conversationId": self.conversation.clone(),
            "payload": binary(payload),
            "$db": self.login.source.as_str(),
        }
    }

    /// `None` when `reply` says the conversation is done; else the empty message a server
    /// that ignores `skipEmptyExchange` waits for.
    fn unless_done(&self, reply: &Document) -> Option<Document> {
        (!reply.get_bool("done").unwrap_or(true)).then(|| self.sasl_continue(Vec::new()))
    }
}

/// The TLS name of `member` (`host:port`, IPv6 hosts in brackets).
fn tls_name(member: &str) -> Result<ServerName<'static>, UpstreamError> {
    let host = member.rsplit_once(':').map_or(member, |(host, _)| host);
    let host = host.trim_start_matches('[').trim_end_matches(']');
    ServerName::try_from(host.to_owned())
        .map_err(|error| UpstreamError::Uri(format!("{host} is no TLS server name: {error}")))
}

fn tls_failure(member: &str, error: &dyn std::fmt::Display) -> UpstreamError {
    UpstreamError::Authentication(format!("TLS to {member}: {error}"))
}

/// A login failure on `member`, naming the user (never the password).
fn login_failure(member: &str, login: &Login, error: UpstreamError) -> UpstreamError {
    match error {
        UpstreamError::Network(message) => network(member, &message),
        UpstreamError::Authentication(message) => UpstreamError::Authentication(format!(
            "as {}@{} on {member}: {message}",
            login.user, login.source
        )),
        other @ UpstreamError::Uri(_) => other,
    }
}

/// The message of `command`, its statements in document sequences as drivers send them
/// (`documents` of `insert`, `updates`, `deletes`, `ops` and `nsInfo` of `bulkWrite`): a
/// batch the client sent in sequences can pass the 16 MiB a single document may hold.
fn with_sequences(command: &Document) -> OpMsg {
    let sequence_fields: &[&str] = match command.keys().next().map(String::as_str) {
        Some("insert") => &["documents"],
        Some("update") => &["updates"],
        Some("delete") => &["deletes"],
        Some("bulkWrite") => &["ops", "nsInfo"],
        _ => &[],
    };
    let mut message = OpMsg::new(Document::new());
    for (key, value) in command {
        let documents = match value {
            Bson::Array(items) if sequence_fields.contains(&key.as_str()) => items
                .iter()
                .map(|item| item.as_document().cloned())
                .collect::<Option<Vec<Document>>>(),
            _ => None,
        };
        match documents {
            Some(documents) => message.sequences.push((key.clone(), documents)),
            None => {
                message.body.insert(key.clone(), value.clone());
            }
        }
    }
    message
}

fn connect(member: &str) -> std::io::Result<TcpStream> {
    let mut last = None;
    for address in member.to_socket_addrs()? {
        match TcpStream::connect_timeout(&address, CONNECT_TIMEOUT) {
            Ok(connection) => {
                connection.set_nodelay(true)?;
                return Ok(connection);
            }
            Err(error) => last = Some(error),
        }
    }
    Err(last.unwrap_or_else(|| std::io::Error::other(format!("{member} has no address"))))
}

fn network(member: &str, error: &dyn std::fmt::Display) -> UpstreamError {
    UpstreamError::Network(format!("{member}: {error}"))
}

/// The proxy's login from the URI's credential: SCRAM only, the source defaulting to the
/// URI's database and then `admin`, as drivers default it.
fn login(
    credential: &spillway_mongodb::mongodb::options::Credential,
    default_database: Option<&str>,
) -> Result<Login, UpstreamError> {
    let mechanism = match &credential.mechanism {
        None => None,
        Some(AuthMechanism::ScramSha256) => Some("SCRAM-SHA-256"),
        Some(AuthMechanism::ScramSha1) => Some("SCRAM-SHA-1"),
        Some(other) => {
            return Err(UpstreamError::Uri(format!(
                "authMechanism={}: the proxy logs in to the upstream with SCRAM-SHA-256 or \
                 SCRAM-SHA-1 only",
                other.as_str()
            )));
        }
    };
    let (Some(user), Some(password)) = (&credential.username, &credential.password) else {
        return Err(UpstreamError::Uri(
            "the upstream URI's credentials need a user name and a password".to_owned(),
        ));
    };
    Ok(Login {
        user: user.clone(),
        password: password.clone(),
        source: credential
            .source
            .clone()
            .or_else(|| default_database.map(str::to_owned))
            .unwrap_or_else(|| "admin".to_owned()),
        mechanism,
    })
}

/// The TLS configuration the URI's options ask for: the CA of `tlsCAFile` (the bundled
/// Mozilla roots without it), the client certificate and key of `tlsCertificateKeyFile`.
/// Turning certificate checks off is refused: the proxy forwards every
/// client's data over these connections.
fn tls_config(options: &TlsOptions) -> Result<Arc<ClientConfig>, UpstreamError> {
    if options.allow_invalid_certificates == Some(true) {
        return Err(UpstreamError::Uri(
            "tlsAllowInvalidCertificates is not supported toward the upstream: give its CA \
             with tlsCAFile"
                .to_owned(),
        ));
    }
    let mut roots = RootCertStore::empty();
    match &options.ca_file_path {
        Some(path) => {
            for certificate in pem_certificates(path)? {
                roots
                    .add(certificate)
                    .map_err(|error| file_error(path, &error))?;
            }
        }
        None => roots.extend(webpki_roots::TLS_SERVER_ROOTS.iter().cloned()),
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let builder = ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|error| UpstreamError::Uri(format!("TLS: {error}")))?
        .with_root_certificates(roots);
    let config = match &options.cert_key_file_path {
        None => builder.with_no_client_auth(),
        Some(path) => {
            let key =
                PrivateKeyDer::from_pem_file(path).map_err(|error| file_error(path, &error))?;
            builder
                .with_client_auth_cert(pem_certificates(path)?, key)
                .map_err(|error| file_error(path, &error))?
        }
    };
    Ok(Arc::new(config))
}

fn pem_certificates(path: &Path) -> Result<Vec<CertificateDer<'static>>, UpstreamError> {
    let certificates = CertificateDer::pem_file_iter(path)
        .and_then(Iterator::collect::<Result<Vec<_>, _>>)
        .map_err(|error| file_error(path, &error))?;
    if certificates.is_empty() {
        return Err(file_error(path, &"no certificate in the file"));
    }
    Ok(certificates)
}

fn file_error(path: &Path, error: &dyn std::fmt::Display) -> UpstreamError {
    UpstreamError::Uri(format!("{}: {error}", path.display()))
}

fn binary(bytes: Vec<u8>) -> Bson {
    Bson::Binary(Binary {
        subtype: BinarySubtype::Generic,
        bytes,
    })
}

/// The payload of a successful `saslStart` or `saslContinue` reply.
fn sasl_payload(reply: &Document) -> Option<Vec<u8>> {
    let ok =
        reply.get_f64("ok").is_ok_and(|ok| ok > 0.5) || reply.get_i32("ok").is_ok_and(|ok| ok == 1);
    match reply.get("payload") {
        Some(Bson::Binary(payload)) if ok => Some(payload.bytes.clone()),
        _ => None,
    }
}

fn invalid_data(error: impl std::fmt::Display) -> std::io::Error {
    std::io::Error::new(std::io::ErrorKind::InvalidData, error.to_string())
}

/// Whether a `hello` reply comes from a primary (or a standalone, or a `mongos`).
fn is_primary(reply: &Document) -> bool {
    reply.get_bool("isWritablePrimary").unwrap_or(false)
        || reply.get_bool("ismaster").unwrap_or(false)
}

/// Whether a reply says the member is no longer primary (then the primary is found again).
fn not_primary(reply: &Document) -> bool {
    // NotWritablePrimary, NotPrimaryNoSecondaryOk, NotPrimaryOrSecondary,
    // PrimarySteppedDown, InterruptedDueToReplStateChange.
    matches!(
        reply.get_i32("code"),
        Ok(10107 | 13435 | 13436 | 189 | 11602)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statements_of_writes_travel_in_sequences_and_the_rest_in_the_body() {
        let insert = with_sequences(&doc! {
            "insert": "c", "documents": [{ "_id": 1 }, { "_id": 2 }], "ordered": true, "$db": "d",
        });
        assert_eq!(
            insert.body,
            doc! { "insert": "c", "ordered": true, "$db": "d" }
        );
        assert_eq!(
            insert.sequences,
            vec![(
                "documents".to_owned(),
                vec![doc! { "_id": 1 }, doc! { "_id": 2 }]
            )]
        );
        // Not a write's statements: left where they are.
        let find = doc! { "find": "c", "filter": {}, "documents": [{ "_id": 1 }], "$db": "d" };
        assert_eq!(with_sequences(&find).body, find);
        let odd = doc! { "insert": "c", "documents": [1, 2], "$db": "d" };
        assert_eq!(with_sequences(&odd).body, odd);
    }
}
