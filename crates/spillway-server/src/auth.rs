//! SCRAM authentication (`saslStart`, `saslContinue`, `logout`) with SCRAM-SHA-1 and
//! SCRAM-SHA-256 as MongoDB offers them, the salted credentials `users.rs` stores, and the
//! rule of `--auth`: a connection that has not authenticated may run only the handshake
//! commands (and, while no user exists, create the first user from a loopback address:
//! MongoDB's localhost exception). What an authenticated user may run is `authorization.rs`'s.
//!
//! Users live in the stored collection `admin.system.users` (through the `spillway` facade,
//! like MongoDB's), each with a salted credential per mechanism (salt, iteration count,
//! stored key, server key). This module must never store or log a password, and never
//! hand-roll a hash: PBKDF2, HMAC, SHA-1, SHA-256 and MD5 come from their crates.

use std::fmt::Write as _;
use std::sync::Arc;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use bson::spec::BinarySubtype;
use bson::{Binary, Bson, Document, doc};
use hmac::{Hmac, KeyInit, Mac};
use md5::Md5;
use rand::RngCore as _;
use sha1::Sha1;
use sha2::{Digest, Sha256};
use spillway::Database;

use crate::roles::Grants;
pub(crate) use crate::roles::USERS_COLLECTION;

/// The commands a connection may run before it authenticates.
const OPEN_COMMANDS: &[&str] = &[
    "hello",
    "isMaster",
    "ismaster",
    "ping",
    "buildInfo",
    "buildinfo",
    "saslStart",
    "saslContinue",
    "logout",
    "connectionStatus",
    "whatsmyuri",
    "endSessions",
];

/// A SCRAM mechanism: its hash decides every step of the conversation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mechanism {
    /// SCRAM-SHA-1, over MongoDB's digest of the password (`MD5("user:mongo:password")` in
    /// hex), as MongoDB derives it.
    Sha1,
    /// SCRAM-SHA-256, over the SASLprep'd password.
    Sha256,
}

impl Mechanism {
    /// Both, in the order MongoDB lists them.
    pub(crate) const ALL: [Mechanism; 2] = [Mechanism::Sha1, Mechanism::Sha256];

    pub(crate) fn name(self) -> &'static str {
        match self {
            Mechanism::Sha1 => "SCRAM-SHA-1",
            Mechanism::Sha256 => "SCRAM-SHA-256",
        }
    }

    pub(crate) fn parse(name: &str) -> Option<Mechanism> {
        Mechanism::ALL
            .into_iter()
            .find(|mechanism| mechanism.name() == name)
    }

    /// MongoDB's default iteration counts (`scramIterationCount`, `scramSHA256IterationCount`).
    fn iterations(self) -> u32 {
        match self {
            Mechanism::Sha1 => 10_000,
            Mechanism::Sha256 => 15_000,
        }
    }

    pub(crate) fn hmac(self, key: &[u8], input: &[u8]) -> Vec<u8> {
        match self {
            Mechanism::Sha1 => {
                let mut mac =
                    <Hmac<Sha1> as KeyInit>::new_from_slice(key).expect("HMAC takes any key");
                mac.update(input);
                mac.finalize().into_bytes().to_vec()
            }
            Mechanism::Sha256 => {
                let mut mac =
                    <Hmac<Sha256> as KeyInit>::new_from_slice(key).expect("HMAC takes any key");
                mac.update(input);
                mac.finalize().into_bytes().to_vec()
            }
        }
    }

    pub(crate) fn hash(self, input: &[u8]) -> Vec<u8> {
        match self {
            Mechanism::Sha1 => Sha1::digest(input).to_vec(),
            Mechanism::Sha256 => Sha256::digest(input).to_vec(),
        }
    }

    /// The salted password: PBKDF2 over what the mechanism takes as the password.
    pub(crate) fn salted_password(
        self,
        user: &str,
        password: &str,
        salt: &[u8],
        iteration_count: u32,
    ) -> Result<Vec<u8>, String> {
        match self {
            Mechanism::Sha1 => {
                let digest = Md5::digest(format!("{user}:mongo:{password}").as_bytes());
                let hex = digest.iter().fold(String::new(), |mut hex, byte| {
                    let _ = write!(hex, "{byte:02x}");
                    hex
                });
                let mut salted = vec![0u8; 20];
                pbkdf2::pbkdf2::<Hmac<Sha1>>(hex.as_bytes(), salt, iteration_count, &mut salted)
                    .map_err(|error| format!("PBKDF2: {error}"))?;
                Ok(salted)
            }
            Mechanism::Sha256 => {
                let prepared = stringprep::saslprep(password)
                    .map_err(|_| "the password is not valid under SASLprep".to_owned())?;
                let mut salted = vec![0u8; 32];
                pbkdf2::pbkdf2::<Hmac<Sha256>>(
                    prepared.as_bytes(),
                    salt,
                    iteration_count,
                    &mut salted,
                )
                .map_err(|error| format!("PBKDF2: {error}"))?;
                Ok(salted)
            }
        }
    }
}

/// One connection's authentication: who it is, what it may do, and a SCRAM conversation in
/// progress.
#[derive(Debug, Default)]
pub(crate) struct AuthState {
    /// `(user, database)` pairs authenticated on this connection.
    pub(crate) users: Vec<(String, String)>,
    /// What those users may do, resolved from their roles, with the generation of the users
    /// and roles it was resolved from (`roles::generation`).
    pub(crate) grants: Option<(u64, Arc<Grants>)>,
    conversation: Option<Conversation>,
}

impl AuthState {
    /// Forgets who logged in (`logout`).
    pub(crate) fn log_out(&mut self) {
        self.users.clear();
        self.grants = None;
    }

    fn log_in(&mut self, user: String, database: String) {
        if !self
            .users
            .iter()
            .any(|(known, db)| *known == user && *db == database)
        {
            self.users.push((user, database));
        }
        self.grants = None;
    }
}

/// A SCRAM conversation between `saslStart` and its last `saslContinue`.
#[derive(Debug)]
struct Conversation {
    mechanism: Mechanism,
    user: String,
    database: String,
    gs2_header: String,
    client_first_bare: String,
    server_first: String,
    nonce: String,
    credential: Credential,
    skip_empty_exchange: bool,
    /// The proof was verified; only the client's empty last message is left.
    verified: bool,
}

/// A salted SCRAM credential, as stored.
#[derive(Debug, Clone)]
pub(crate) struct Credential {
    iteration_count: u32,
    salt: Vec<u8>,
    stored_key: Vec<u8>,
    server_key: Vec<u8>,
}

impl Credential {
    /// A new credential of `mechanism` for `user`'s `password`, with a fresh salt.
    pub(crate) fn new(
        mechanism: Mechanism,
        user: &str,
        password: &str,
    ) -> Result<Credential, String> {
        let mut salt = vec![0u8; if mechanism == Mechanism::Sha1 { 16 } else { 28 }];
        rand::rng().fill_bytes(&mut salt);
        let iteration_count = mechanism.iterations();
        let salted = mechanism.salted_password(user, password, &salt, iteration_count)?;
        let client_key = mechanism.hmac(&salted, b"Client Key");
        Ok(Credential {
            iteration_count,
            salt,
            stored_key: mechanism.hash(&client_key),
            server_key: mechanism.hmac(&salted, b"Server Key"),
        })
    }

    pub(crate) fn to_document(&self) -> Document {
        doc! {
            "iterationCount": self.iteration_count as i32,
            "salt": BASE64.encode(&self.salt),
            "storedKey": BASE64.encode(&self.stored_key),
            "serverKey": BASE64.encode(&self.server_key),
        }
    }

    fn from_document(document: &Document) -> Option<Credential> {
        let decode = |field: &str| BASE64.decode(document.get_str(field).ok()?).ok();
        Some(Credential {
            iteration_count: u32::try_from(document.get_i32("iterationCount").ok()?).ok()?,
            salt: decode("salt")?,
            stored_key: decode("storedKey")?,
            server_key: decode("serverKey")?,
        })
    }
}

/// The `credentials` document of a user with `password` for each of `mechanisms`.
pub(crate) fn credentials(
    user: &str,
    password: &str,
    mechanisms: &[Mechanism],
) -> Result<Document, String> {
    let mut credentials = Document::new();
    for mechanism in mechanisms {
        credentials.insert(
            mechanism.name(),
            Credential::new(*mechanism, user, password)?.to_document(),
        );
    }
    Ok(credentials)
}

/// The mechanisms a stored user has credentials for.
pub(crate) fn mechanisms_of(stored: &Document) -> Vec<Bson> {
    let credentials = stored.get_document("credentials").ok();
    Mechanism::ALL
        .into_iter()
        .filter(|mechanism| credentials.is_some_and(|c| c.contains_key(mechanism.name())))
        .map(|mechanism| Bson::String(mechanism.name().to_owned()))
        .collect()
}

/// Compares without an early exit, so that timing says nothing about where keys differ.
fn constant_time_eq(left: &[u8], right: &[u8]) -> bool {
    left.len() == right.len()
        && left
            .iter()
            .zip(right)
            .fold(0u8, |difference, (a, b)| difference | (a ^ b))
            == 0
}

/// Whether a connection with `state` may run `name` (always, without `--auth`).
pub(crate) fn allowed(name: &str, state: &AuthState, auth_required: bool) -> bool {
    !auth_required || !state.users.is_empty() || OPEN_COMMANDS.contains(&name)
}

/// The error for a command refused before authentication.
pub(crate) fn unauthorized(name: &str) -> Document {
    doc! {
        "ok": 0.0,
        "errmsg": format!("command {name} requires authentication"),
        "code": 13,
        "codeName": "Unauthorized",
    }
}

/// Whether any user exists (the localhost exception applies while none does).
pub(crate) fn any_user(database: &Database) -> bool {
    database
        .collection::<Document>(USERS_COLLECTION)
        .find_one(doc! {})
        .run()
        .ok()
        .flatten()
        .is_some()
}

/// `saslSupportedMechs` in `hello`: the mechanisms of user `db.user`, if it exists.
pub(crate) fn supported_mechanisms(database: &Database, qualified: &str) -> Option<Vec<Bson>> {
    let (db, user) = qualified.split_once('.')?;
    find_user(database, db, user).map(|stored| mechanisms_of(&stored))
}

pub(crate) fn find_user(database: &Database, db: &str, user: &str) -> Option<Document> {
    database
        .collection::<Document>(USERS_COLLECTION)
        .find_one(doc! { "_id": format!("{db}.{user}") })
        .run()
        .ok()
        .flatten()
}

pub(crate) fn failure(code: i32, code_name: &str, message: impl Into<String>) -> Document {
    doc! { "ok": 0.0, "errmsg": message.into(), "code": code, "codeName": code_name }
}

fn authentication_failed() -> Document {
    failure(18, "AuthenticationFailed", "Authentication failed.")
}

fn payload_bytes(command: &Document) -> Option<Vec<u8>> {
    match command.get("payload")? {
        Bson::Binary(binary) => Some(binary.bytes.clone()),
        Bson::String(text) => Some(text.clone().into_bytes()),
        _ => None,
    }
}

fn payload(bytes: &str) -> Bson {
    Bson::Binary(Binary {
        subtype: BinarySubtype::Generic,
        bytes: bytes.as_bytes().to_vec(),
    })
}

/// `saslStart`: the client's first message in, the server's first message out.
pub(crate) fn sasl_start(
    database: &Database,
    command: &Document,
    state: &mut AuthState,
) -> Document {
    state.conversation = None;
    let requested = command.get_str("mechanism").unwrap_or_default();
    let Some(mechanism) = Mechanism::parse(requested) else {
        return failure(
            334,
            "MechanismUnavailable",
            format!(
                "Received authentication for mechanism {requested} which is not enabled (SCRAM-SHA-1 and SCRAM-SHA-256 are)"
            ),
        );
    };
    let Some(message) = payload_bytes(command).and_then(|bytes| String::from_utf8(bytes).ok())
    else {
        return failure(17, "ProtocolError", "saslStart needs a payload");
    };
    // gs2 header: no channel binding ("n") or "client supports it, server does not" ("y").
    let Some((gs2_header, client_first_bare)) = split_gs2(&message) else {
        return failure(17, "ProtocolError", "SCRAM: bad client-first message");
    };
    let mut user = None;
    let mut client_nonce = None;
    for attribute in client_first_bare.split(',') {
        if let Some(name) = attribute.strip_prefix("n=") {
            user = Some(name.replace("=2C", ",").replace("=3D", "="));
        } else if let Some(nonce) = attribute.strip_prefix("r=") {
            client_nonce = Some(nonce.to_owned());
        }
    }
    let (Some(user), Some(client_nonce)) = (user, client_nonce) else {
        return failure(
            17,
            "ProtocolError",
            "SCRAM: the client-first message needs n= and r=",
        );
    };
    let db = command.get_str("$db").unwrap_or("admin").to_owned();
    // An unknown user and a wrong password get the same answer, so that the reply never says
    // which users exist.
    let Some(stored) = find_user(database, &db, &user) else {
        return authentication_failed();
    };
    let Some(stored_credential) = stored
        .get_document("credentials")
        .ok()
        .and_then(|credentials| credentials.get_document(mechanism.name()).ok())
    else {
        let name = mechanism.name();
        return failure(
            334,
            "MechanismUnavailable",
            format!(
                "Unable to use {name} based authentication for user without any {name} credentials registered"
            ),
        );
    };
    let Some(credential) = Credential::from_document(stored_credential) else {
        return failure(
            18,
            "AuthenticationFailed",
            format!(
                "Unable to validate {} authentication due to corrupted stored credentials",
                mechanism.name()
            ),
        );
    };
    let mut random = [0u8; 24];
    rand::rng().fill_bytes(&mut random);
    let nonce = format!("{client_nonce}{}", BASE64.encode(random));
    let server_first = format!(
        "r={nonce},s={},i={}",
        BASE64.encode(&credential.salt),
        credential.iteration_count
    );
    let skip_empty_exchange = command
        .get_document("options")
        .ok()
        .and_then(|options| options.get_bool("skipEmptyExchange").ok())
        .unwrap_or(false);
    let reply = doc! {
        "conversationId": 1,
        "done": false,
        "payload": payload(&server_first),
        "ok": 1.0,
    };
    state.conversation = Some(Conversation {
        mechanism,
        user,
        database: db,
        gs2_header: gs2_header.to_owned(),
        client_first_bare: client_first_bare.to_owned(),
        server_first,
        nonce,
        credential,
        skip_empty_exchange,
        verified: false,
    });
    reply
}

/// The `saslStart` a handshake's `speculativeAuthenticate` carries (`{ saslStart: 1,
/// mechanism, payload, db }`), as a command on its database; `None` for anything else (x.509's
/// `authenticate`), which the handshake then answers without.
pub(crate) fn speculative_start(speculative: &Document) -> Option<Document> {
    if !speculative.contains_key("saslStart") {
        return None;
    }
    let mut start = speculative.clone();
    let db = start.get_str("db").unwrap_or("admin").to_owned();
    start.remove("db");
    start.insert("$db", db);
    Some(start)
}

fn split_gs2(message: &str) -> Option<(&str, &str)> {
    let rest = message
        .strip_prefix("n,")
        .or_else(|| message.strip_prefix("y,"))?;
    let comma = rest.find(',')?;
    let header_len = 2 + comma + 1;
    Some((&message[..header_len], &message[header_len..]))
}

/// `saslContinue`: the client's proof in, the server's signature out; the connection is
/// authenticated when the proof holds.
pub(crate) fn sasl_continue(command: &Document, state: &mut AuthState) -> Document {
    let Some(mut conversation) = state.conversation.take() else {
        return failure(17, "ProtocolError", "No SASL session state found");
    };
    if conversation.verified {
        // The client's empty last message, when it did not ask to skip it.
        state.log_in(conversation.user, conversation.database);
        return doc! { "conversationId": 1, "done": true, "payload": payload(""), "ok": 1.0 };
    }
    let Some(message) = payload_bytes(command).and_then(|bytes| String::from_utf8(bytes).ok())
    else {
        return authentication_failed();
    };
    let Some((without_proof, proof)) = message.rsplit_once(",p=") else {
        return authentication_failed();
    };
    let mut channel_binding = None;
    let mut nonce = None;
    for attribute in without_proof.split(',') {
        if let Some(value) = attribute.strip_prefix("c=") {
            channel_binding = Some(value);
        } else if let Some(value) = attribute.strip_prefix("r=") {
            nonce = Some(value);
        }
    }
    let expected_binding = BASE64.encode(conversation.gs2_header.as_bytes());
    if channel_binding != Some(expected_binding.as_str())
        || nonce != Some(conversation.nonce.as_str())
    {
        return authentication_failed();
    }
    let Ok(proof) = BASE64.decode(proof) else {
        return authentication_failed();
    };
    let auth_message = format!(
        "{},{},{without_proof}",
        conversation.client_first_bare, conversation.server_first
    );
    let credential = &conversation.credential;
    let mechanism = conversation.mechanism;
    let client_signature = mechanism.hmac(&credential.stored_key, auth_message.as_bytes());
    if proof.len() != client_signature.len() {
        return authentication_failed();
    }
    let client_key: Vec<u8> = proof
        .iter()
        .zip(&client_signature)
        .map(|(a, b)| a ^ b)
        .collect();
    if !constant_time_eq(&mechanism.hash(&client_key), &credential.stored_key) {
        return authentication_failed();
    }
    let server_signature = mechanism.hmac(&credential.server_key, auth_message.as_bytes());
    let server_final = format!("v={}", BASE64.encode(server_signature));
    if conversation.skip_empty_exchange {
        state.log_in(conversation.user, conversation.database);
        return doc! { "conversationId": 1, "done": true, "payload": payload(&server_final), "ok": 1.0 };
    }
    conversation.verified = true;
    state.conversation = Some(conversation);
    doc! { "conversationId": 1, "done": false, "payload": payload(&server_final), "ok": 1.0 }
}
