//! Users and SCRAM-SHA-256 authentication (`saslStart`, `saslContinue`, `logout`,
//! `createUser`, `dropUser`, `usersInfo`), and the rule of `--auth`: a connection that has not
//! authenticated may run only the handshake commands (and, while no user exists, create the
//! first user from a loopback address: MongoDB's localhost exception).
//!
//! Users live in the stored collection `admin.system.users` (through the `spillway` facade,
//! like MongoDB's), each with its salted SCRAM credential (salt, iteration count, stored key,
//! server key). This module must never store or log a password, and never hand-roll a hash:
//! PBKDF2, HMAC and SHA-256 come from their crates. Roles are stored and shown, not enforced:
//! an authenticated user may run every command.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use bson::spec::BinarySubtype;
use bson::{Binary, Bson, Document, doc};
use hmac::{Hmac, KeyInit, Mac};
use rand::RngCore as _;
use sha2::{Digest, Sha256};
use spillway::Database;

/// The stored collection of users (database `admin`, collection `system.users`).
pub(crate) const USERS_COLLECTION: &str = "admin.system.users";
/// The one mechanism offered.
pub(crate) const MECHANISM: &str = "SCRAM-SHA-256";
/// PBKDF2 iterations of a new credential (MongoDB's default for SCRAM-SHA-256).
const ITERATIONS: u32 = 15_000;
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

/// One connection's authentication: who it is, and a SCRAM conversation in progress.
#[derive(Debug, Default)]
pub(crate) struct AuthState {
    /// `(user, database)` pairs authenticated on this connection.
    pub(crate) users: Vec<(String, String)>,
    conversation: Option<Conversation>,
}

/// A SCRAM conversation between `saslStart` and its last `saslContinue`.
#[derive(Debug)]
struct Conversation {
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

/// A salted SCRAM-SHA-256 credential, as stored.
#[derive(Debug, Clone)]
struct Credential {
    iteration_count: u32,
    salt: Vec<u8>,
    stored_key: Vec<u8>,
    server_key: Vec<u8>,
}

impl Credential {
    fn derive(password: &str, salt: Vec<u8>, iteration_count: u32) -> Result<Credential, String> {
        let prepared = stringprep::saslprep(password)
            .map_err(|_| "the password is not valid under SASLprep".to_owned())?;
        let mut salted = [0u8; 32];
        pbkdf2::pbkdf2::<Hmac<Sha256>>(prepared.as_bytes(), &salt, iteration_count, &mut salted)
            .map_err(|error| format!("PBKDF2: {error}"))?;
        let client_key = hmac(&salted, b"Client Key");
        Ok(Credential {
            iteration_count,
            salt,
            stored_key: Sha256::digest(&client_key).to_vec(),
            server_key: hmac(&salted, b"Server Key"),
        })
    }

    fn to_document(&self) -> Document {
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

fn hmac(key: &[u8], input: &[u8]) -> Vec<u8> {
    let mut mac = <Hmac<Sha256> as KeyInit>::new_from_slice(key).expect("HMAC takes any key");
    mac.update(input);
    mac.finalize().into_bytes().to_vec()
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
    find_user(database, db, user).map(|_| vec![Bson::String(MECHANISM.to_owned())])
}

fn find_user(database: &Database, db: &str, user: &str) -> Option<Document> {
    database
        .collection::<Document>(USERS_COLLECTION)
        .find_one(doc! { "_id": format!("{db}.{user}") })
        .run()
        .ok()
        .flatten()
}

fn failure(code: i32, code_name: &str, message: impl Into<String>) -> Document {
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
    let mechanism = command.get_str("mechanism").unwrap_or_default();
    if mechanism != MECHANISM {
        return failure(
            2,
            "BadValue",
            format!(
                "Received authentication for mechanism {mechanism} which is not enabled (only {MECHANISM})"
            ),
        );
    }
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
    let Some(credential) = find_user(database, &db, &user).and_then(|stored| {
        Credential::from_document(
            stored
                .get_document("credentials")
                .ok()?
                .get_document(MECHANISM)
                .ok()?,
        )
    }) else {
        return authentication_failed();
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
        state.users.push((conversation.user, conversation.database));
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
    let client_signature = hmac(&credential.stored_key, auth_message.as_bytes());
    if proof.len() != client_signature.len() {
        return authentication_failed();
    }
    let client_key: Vec<u8> = proof
        .iter()
        .zip(&client_signature)
        .map(|(a, b)| a ^ b)
        .collect();
    if !constant_time_eq(&Sha256::digest(&client_key), &credential.stored_key) {
        return authentication_failed();
    }
    let server_signature = hmac(&credential.server_key, auth_message.as_bytes());
    let server_final = format!("v={}", BASE64.encode(server_signature));
    if conversation.skip_empty_exchange {
        state.users.push((conversation.user, conversation.database));
        return doc! { "conversationId": 1, "done": true, "payload": payload(&server_final), "ok": 1.0 };
    }
    conversation.verified = true;
    state.conversation = Some(conversation);
    doc! { "conversationId": 1, "done": false, "payload": payload(&server_final), "ok": 1.0 }
}

/// `createUser`: a salted credential for `pwd`, stored; never the password.
pub(crate) fn create_user(database: &Database, command: &Document) -> Document {
    let Ok(user) = command.get_str("createUser") else {
        return failure(2, "BadValue", "createUser needs a user name (a string)");
    };
    if user.is_empty() {
        return failure(2, "BadValue", "User name must be non-empty");
    }
    let Ok(password) = command.get_str("pwd") else {
        return failure(
            2,
            "BadValue",
            "createUser needs a password (pwd): only SCRAM-SHA-256 users are supported",
        );
    };
    if password.is_empty() {
        return failure(2, "BadValue", "Password must be non-empty");
    }
    let offers_sha256 = command.get_array("mechanisms").map_or(true, |mechanisms| {
        mechanisms
            .iter()
            .any(|mechanism| mechanism.as_str() == Some(MECHANISM))
    });
    if !offers_sha256 {
        return failure(2, "BadValue", format!("only {MECHANISM} is supported"));
    }
    let db = command.get_str("$db").unwrap_or("admin");
    let mut salt = vec![0u8; 28];
    rand::rng().fill_bytes(&mut salt);
    let credential = match Credential::derive(password, salt, ITERATIONS) {
        Ok(credential) => credential,
        Err(message) => return failure(2, "BadValue", message),
    };
    // A role named by a string is a role of the user's database, as MongoDB stores it.
    let roles: Vec<Bson> = command
        .get_array("roles")
        .map(|roles| {
            roles
                .iter()
                .map(|role| match role {
                    Bson::String(name) => Bson::Document(doc! { "role": name.clone(), "db": db }),
                    other => other.clone(),
                })
                .collect()
        })
        .unwrap_or_default();
    let mut record = doc! {
        "_id": format!("{db}.{user}"),
        "userId": Bson::Binary(Binary::from_uuid(bson::Uuid::new())),
        "user": user,
        "db": db,
        "credentials": { MECHANISM: credential.to_document() },
        "roles": roles,
    };
    if let Ok(custom) = command.get_document("customData") {
        record.insert("customData", custom.clone());
    }
    match database
        .collection::<Document>(USERS_COLLECTION)
        .insert_one(record)
        .run()
    {
        Ok(_) => doc! { "ok": 1.0 },
        Err(error) if error.is_duplicate_key() => failure(
            51003,
            "Location51003",
            format!("User \"{user}@{db}\" already exists"),
        ),
        Err(error) => failure(
            1,
            "InternalError",
            format!("cannot store the user: {error}"),
        ),
    }
}

/// `dropUser`.
pub(crate) fn drop_user(database: &Database, command: &Document) -> Document {
    let Ok(user) = command.get_str("dropUser") else {
        return failure(2, "BadValue", "dropUser needs a user name (a string)");
    };
    let db = command.get_str("$db").unwrap_or("admin");
    match database
        .collection::<Document>(USERS_COLLECTION)
        .delete_one(doc! { "_id": format!("{db}.{user}") })
        .run()
    {
        Ok(result) if result.deleted_count == 1 => doc! { "ok": 1.0 },
        Ok(_) => failure(11, "UserNotFound", format!("User '{user}@{db}' not found")),
        Err(error) => failure(1, "InternalError", format!("cannot drop the user: {error}")),
    }
}

/// `usersInfo`: `1` (every user of the database), a name, `{ user, db }`, a list of those, or
/// `forAllDBs: true`. Credentials are never shown.
pub(crate) fn users_info(database: &Database, command: &Document) -> Document {
    let db = command.get_str("$db").unwrap_or("admin");
    let filter = match command.get("usersInfo") {
        Some(Bson::Document(spec)) if spec.contains_key("forAllDBs") => doc! {},
        Some(Bson::Int32(_) | Bson::Int64(_) | Bson::Double(_)) => doc! { "db": db },
        Some(Bson::String(user)) => doc! { "_id": format!("{db}.{user}") },
        Some(Bson::Document(spec)) => match (spec.get_str("user"), spec.get_str("db")) {
            (Ok(user), Ok(user_db)) => doc! { "_id": format!("{user_db}.{user}") },
            _ => {
                return failure(
                    2,
                    "BadValue",
                    "usersInfo: a user document needs user and db",
                );
            }
        },
        Some(Bson::Array(users)) => {
            let ids: Vec<Bson> = users
                .iter()
                .filter_map(|user| match user {
                    Bson::String(name) => Some(Bson::String(format!("{db}.{name}"))),
                    Bson::Document(spec) => Some(Bson::String(format!(
                        "{}.{}",
                        spec.get_str("db").unwrap_or(db),
                        spec.get_str("user").ok()?
                    ))),
                    _ => None,
                })
                .collect();
            doc! { "_id": { "$in": ids } }
        }
        _ => {
            return failure(
                2,
                "BadValue",
                "usersInfo takes 1, a user name, { user, db } or a list",
            );
        }
    };
    let filter = if command.get_bool("forAllDBs").unwrap_or(false) {
        doc! {}
    } else {
        filter
    };
    let cursor = match database
        .collection::<Document>(USERS_COLLECTION)
        .find(filter)
        .sort(doc! { "_id": 1 })
        .run()
    {
        Ok(cursor) => cursor,
        Err(error) => return failure(1, "InternalError", format!("cannot read users: {error}")),
    };
    let mut users = Vec::new();
    for stored in cursor {
        let Ok(mut stored) = stored else { continue };
        stored.remove("credentials");
        stored.insert("mechanisms", vec![Bson::String(MECHANISM.to_owned())]);
        users.push(Bson::Document(stored));
    }
    doc! { "users": users, "ok": 1.0 }
}
