//! [`Upstream`]: the deployment behind the proxy, spoken to over MongoDB's wire protocol with
//! the client's command unchanged (its `lsid`, `txnNumber`, `startTransaction`,
//! `$clusterTime`, read and write concerns), so that sessions, transactions, retryable writes
//! and cursors are the upstream's own: a retry after a proxy restart carries the same session
//! and transaction number, and the upstream answers it once.
//!
//! The official driver cannot forward a command as it came (it adds its own session to every
//! command it runs), so forwarding is done here, on a small pool of blocking connections to
//! the primary, framed by `spillway_server::wire`. The pattern layer's own writes go through
//! the driver (`spillway-mongodb`). This module must never look inside a command.

use std::io::{Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use bson::{Bson, Document, doc};
use spillway_mongodb::mongodb::options::{ConnectionString, HostInfo, ServerAddress};
use spillway_server::wire::{self, HEADER_LEN, Header, MAX_MESSAGE_SIZE, OpMsg, Request};

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
}

impl std::fmt::Display for UpstreamError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            UpstreamError::Uri(message) => write!(f, "upstream URI: {message}"),
            UpstreamError::Network(message) => write!(f, "upstream unreachable: {message}"),
        }
    }
}

impl std::error::Error for UpstreamError {}

/// The deployment behind the proxy: its members, and open connections to its primary.
#[derive(Debug)]
pub struct Upstream {
    members: Vec<String>,
    primary: Mutex<Option<String>>,
    idle: Mutex<Vec<TcpStream>>,
    next_request: AtomicI32,
}

impl Upstream {
    /// The deployment `uri` names (`mongodb://host[:port][,host...]/...`). Nothing is
    /// connected until the first command.
    ///
    /// # Errors
    /// A URI the driver cannot parse, or one asking for what this forwarder does not speak
    /// yet (TLS, authentication, `mongodb+srv`, Unix sockets).
    pub fn new(uri: &str) -> Result<Upstream, UpstreamError> {
        let parsed =
            ConnectionString::parse(uri).map_err(|error| UpstreamError::Uri(error.to_string()))?;
        if parsed.credential.is_some() {
            return Err(UpstreamError::Uri(
                "credentials in the upstream URI are not supported yet: serve an upstream that \
                 accepts the proxy's connections without authentication"
                    .to_owned(),
            ));
        }
        if parsed.tls.is_some() {
            return Err(UpstreamError::Uri(
                "TLS to the upstream is not supported yet".to_owned(),
            ));
        }
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
            next_request: AtomicI32::new(1),
        })
    }

    /// Sends `command` (its database in `$db`) and returns the upstream's reply, whatever it
    /// says (an `ok: 0` reply is an answer, not an error).
    ///
    /// # Errors
    /// [`UpstreamError::Network`] when the command may not have reached the upstream or its
    /// reply was lost: the caller cannot know whether it ran.
    pub fn run(&self, command: &Document) -> Result<Document, UpstreamError> {
        let mut connection = self.connection()?;
        match self.round_trip(&mut connection, command) {
            Ok(reply) => {
                if not_primary(&reply) {
                    self.forget_primary();
                } else {
                    self.give_back(connection);
                }
                Ok(reply)
            }
            Err(error) => {
                self.forget_primary();
                Err(UpstreamError::Network(error.to_string()))
            }
        }
    }

    /// An idle connection to the primary, or a new one.
    fn connection(&self) -> Result<TcpStream, UpstreamError> {
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
        if let Some(primary) = known
            && let Ok(connection) = connect(&primary)
        {
            return Ok(connection);
        }
        self.discover()
    }

    /// Asks each member which is primary and connects to it.
    fn discover(&self) -> Result<TcpStream, UpstreamError> {
        let mut failures = Vec::new();
        let hello = doc! { "hello": 1, "$db": "admin" };
        let mut candidates = self.members.clone();
        let mut asked = 0;
        while asked < candidates.len() {
            let member = candidates[asked].clone();
            asked += 1;
            let mut connection = match connect(&member) {
                Ok(connection) => connection,
                Err(error) => {
                    failures.push(format!("{member}: {error}"));
                    continue;
                }
            };
            match self.round_trip(&mut connection, &hello) {
                Ok(reply) if is_primary(&reply) => {
                    *self.primary.lock().unwrap_or_else(PoisonError::into_inner) = Some(member);
                    return Ok(connection);
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
    }

    fn give_back(&self, connection: TcpStream) {
        let mut idle = self.idle.lock().unwrap_or_else(PoisonError::into_inner);
        if idle.len() < IDLE_CONNECTIONS {
            idle.push(connection);
        }
    }

    /// One OP_MSG out, its reply in.
    fn round_trip(
        &self,
        connection: &mut TcpStream,
        command: &Document,
    ) -> std::io::Result<Document> {
        let request_id = self.next_request.fetch_add(1, Ordering::Relaxed);
        let message = with_sequences(command)
            .encode(request_id, 0)
            .map_err(invalid_data)?;
        connection.write_all(&message)?;
        let mut header = [0; HEADER_LEN];
        connection.read_exact(&mut header)?;
        let parsed = Header::parse(&header, MAX_MESSAGE_SIZE).map_err(invalid_data)?;
        let mut whole = header.to_vec();
        whole.resize(parsed.length, 0);
        connection.read_exact(&mut whole[HEADER_LEN..])?;
        match wire::decode_message(&whole).map_err(invalid_data)? {
            Request::Msg(reply) => reply.into_command().map_err(invalid_data),
            Request::Query(_) => Err(invalid_data("the upstream answered with an OP_QUERY")),
        }
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
