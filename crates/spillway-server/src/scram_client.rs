//! [`ScramClient`]: the client's side of a SCRAM-SHA-1 or SCRAM-SHA-256 conversation (RFC 5802,
//! RFC 7677) as MongoDB holds it, for a process of Spillway's that logs in to another server:
//! `spillway serve --upstream` to its deployment. The salted password, the keys and the
//! signatures are computed by the same [`Mechanism`] the server side uses, so the two sides
//! cannot drift apart.
//!
//! The conversation is three messages: [`ScramClient::first_message`] (the `saslStart`
//! payload), [`ScramClient::final_message`] (the `saslContinue` payload, from the server's
//! first message) and [`ScramClient::check_server_final`], which proves that the server
//! knows the credential too. A client that skips the last check has not authenticated the
//! server.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use rand::RngCore as _;

use crate::auth::Mechanism;

/// Why a SCRAM conversation with a server failed on the client's side.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScramError(String);

impl std::fmt::Display for ScramError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "SCRAM: {}", self.0)
    }
}

impl std::error::Error for ScramError {}

/// One client's SCRAM conversation with a server.
#[derive(Clone)]
pub struct ScramClient {
    mechanism: Mechanism,
    user: String,
    password: String,
    client_nonce: String,
    /// The server's signature the final message must carry, once the proof is sent.
    expected_server_signature: Option<Vec<u8>>,
}

impl std::fmt::Debug for ScramClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never the password.
        f.debug_struct("ScramClient")
            .field("mechanism", &self.mechanism.name())
            .field("user", &self.user)
            .finish_non_exhaustive()
    }
}

impl ScramClient {
    /// A conversation of `mechanism` (`SCRAM-SHA-1` or `SCRAM-SHA-256`) for `user` with
    /// `password`.
    ///
    /// # Errors
    /// Another mechanism.
    pub fn new(mechanism: &str, user: &str, password: &str) -> Result<ScramClient, ScramError> {
        let mechanism = Mechanism::parse(mechanism).ok_or_else(|| {
            ScramError(format!(
                "mechanism {mechanism} is not supported (SCRAM-SHA-1 and SCRAM-SHA-256 are)"
            ))
        })?;
        let mut random = [0u8; 24];
        rand::rng().fill_bytes(&mut random);
        Ok(ScramClient {
            mechanism,
            user: user.to_owned(),
            password: password.to_owned(),
            client_nonce: BASE64.encode(random),
            expected_server_signature: None,
        })
    }

    /// The mechanism's name, as `saslStart` takes it.
    pub fn mechanism(&self) -> &'static str {
        self.mechanism.name()
    }

    /// The client-first message: no channel binding, the user name escaped (`,` and `=`).
    pub fn first_message(&self) -> Vec<u8> {
        format!("n,,{}", self.first_message_bare()).into_bytes()
    }

    fn first_message_bare(&self) -> String {
        let user = self.user.replace('=', "=3D").replace(',', "=2C");
        format!("n={user},r={}", self.client_nonce)
    }

    /// The client-final message, with the proof, from the server-first message.
    ///
    /// # Errors
    /// A server-first message that is malformed, whose nonce does not extend the client's,
    /// or whose iteration count is below 4096 (RFC 7677's floor, which drivers enforce); a
    /// password SASLprep refuses.
    pub fn final_message(&mut self, server_first: &[u8]) -> Result<Vec<u8>, ScramError> {
        let server_first = std::str::from_utf8(server_first)
            .map_err(|_| ScramError("the server's first message is not UTF-8".to_owned()))?;
        let (mut nonce, mut salt, mut iterations) = (None, None, None);
        for attribute in server_first.split(',') {
            if let Some(value) = attribute.strip_prefix("r=") {
                nonce = Some(value);
            } else if let Some(value) = attribute.strip_prefix("s=") {
                salt = Some(value);
            } else if let Some(value) = attribute.strip_prefix("i=") {
                iterations = Some(value);
            }
        }
        let (Some(nonce), Some(salt), Some(iterations)) = (nonce, salt, iterations) else {
            return Err(ScramError(format!(
                "the server's first message needs r=, s= and i=: '{server_first}'"
            )));
        };
        if !nonce.starts_with(&self.client_nonce) || nonce.len() == self.client_nonce.len() {
            return Err(ScramError(
                "the server's nonce does not extend the client's".to_owned(),
            ));
        }
        let salt = BASE64
            .decode(salt)
            .map_err(|_| ScramError("the server's salt is not base64".to_owned()))?;
        let iterations: u32 = iterations
            .parse()
            .map_err(|_| ScramError(format!("iteration count '{iterations}' is not a number")))?;
        if iterations < 4096 {
            return Err(ScramError(format!(
                "the server asks for {iterations} iterations, fewer than the 4096 required"
            )));
        }
        let salted = self
            .mechanism
            .salted_password(&self.user, &self.password, &salt, iterations)
            .map_err(ScramError)?;
        let client_key = self.mechanism.hmac(&salted, b"Client Key");
        let stored_key = self.mechanism.hash(&client_key);
        let without_proof = format!("c={},r={nonce}", BASE64.encode(b"n,,"));
        let auth_message = format!(
            "{},{server_first},{without_proof}",
            self.first_message_bare()
        );
        let client_signature = self.mechanism.hmac(&stored_key, auth_message.as_bytes());
        let proof: Vec<u8> = client_key
            .iter()
            .zip(&client_signature)
            .map(|(key, signature)| key ^ signature)
            .collect();
        let server_key = self.mechanism.hmac(&salted, b"Server Key");
        self.expected_server_signature =
            Some(self.mechanism.hmac(&server_key, auth_message.as_bytes()));
        Ok(format!("{without_proof},p={}", BASE64.encode(proof)).into_bytes())
    }

    /// Checks the server-final message: the server's signature over the conversation.
    ///
    /// # Errors
    /// A message with an error (`e=`), without a signature, or with one that does not hold:
    /// the server does not know the credential.
    pub fn check_server_final(&self, server_final: &[u8]) -> Result<(), ScramError> {
        let server_final = std::str::from_utf8(server_final)
            .map_err(|_| ScramError("the server's final message is not UTF-8".to_owned()))?;
        if let Some(error) = server_final.strip_prefix("e=") {
            return Err(ScramError(format!("the server refused: {error}")));
        }
        let expected = self.expected_server_signature.as_ref().ok_or_else(|| {
            ScramError("the server's final message came before the proof".to_owned())
        })?;
        let signature = server_final
            .strip_prefix("v=")
            .and_then(|signature| BASE64.decode(signature).ok())
            .ok_or_else(|| {
                ScramError(format!(
                    "the server's final message has no signature: '{server_final}'"
                ))
            })?;
        if &signature != expected {
            return Err(ScramError(
                "the server's signature does not match: it does not know this user's credential"
                    .to_owned(),
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use bson::spec::BinarySubtype;
    use bson::{Binary, Bson, Document, doc};
    use spillway::Database;

    use super::*;
    use crate::auth::{self, AuthState, USERS_COLLECTION};

    const USER: &str = "ann,=x";

    fn binary(bytes: Vec<u8>) -> Bson {
        Bson::Binary(Binary {
            subtype: BinarySubtype::Generic,
            bytes,
        })
    }

    /// The whole conversation of a client with `client_password` and the server's own side
    /// (`sasl_start`, `sasl_continue`) over a user stored with `stored_password`.
    fn converse(
        mechanism: Mechanism,
        stored_password: &str,
        client_password: &str,
    ) -> Result<(), String> {
        let database = Database::open_in_memory().expect("an in-memory database");
        let credentials =
            auth::credentials(USER, stored_password, &[mechanism]).expect("credentials");
        database
            .collection::<Document>(USERS_COLLECTION)
            .insert_one(doc! {
                "_id": format!("admin.{USER}"), "user": USER, "db": "admin",
                "credentials": credentials, "roles": [],
            })
            .run()
            .expect("the user is stored");
        let mut client =
            ScramClient::new(mechanism.name(), USER, client_password).expect("a client");
        let mut state = AuthState::default();
        let start = doc! {
            "saslStart": 1, "mechanism": mechanism.name(),
            "payload": binary(client.first_message()), "$db": "admin",
        };
        let server_first = payload(&auth::sasl_start(&database, &start, &mut state))?;
        let client_final = client
            .final_message(&server_first)
            .map_err(|error| error.to_string())?;
        let next = doc! {
            "saslContinue": 1, "conversationId": 1, "payload": binary(client_final), "$db": "admin",
        };
        let server_final = payload(&auth::sasl_continue(&next, &mut state))?;
        client
            .check_server_final(&server_final)
            .map_err(|error| error.to_string())
    }

    fn payload(reply: &Document) -> Result<Vec<u8>, String> {
        match reply.get("payload") {
            Some(Bson::Binary(binary)) => Ok(binary.bytes.clone()),
            _ => Err(reply.get_str("errmsg").unwrap_or("no payload").to_owned()),
        }
    }

    #[test]
    fn the_client_and_the_server_agree_on_both_mechanisms() {
        for mechanism in Mechanism::ALL {
            assert_eq!(
                converse(mechanism, "sécret", "sécret"),
                Ok(()),
                "{mechanism:?}"
            );
        }
    }

    #[test]
    fn a_wrong_password_is_refused_by_the_server() {
        for mechanism in Mechanism::ALL {
            let refused = converse(mechanism, "right", "wrong").expect_err("refused");
            assert!(refused.contains("Authentication failed"), "{refused}");
        }
    }

    #[test]
    fn a_server_that_does_not_know_the_credential_is_caught() {
        let mut client = ScramClient::new("SCRAM-SHA-256", "ann", "pw").expect("a client");
        let nonce = String::from_utf8(client.first_message()).expect("utf-8");
        let nonce = nonce.split("r=").nth(1).expect("a nonce").to_owned();
        let server_first = format!("r={nonce}xyz,s={},i=4096", BASE64.encode(b"salt"));
        client
            .final_message(server_first.as_bytes())
            .expect("a proof");
        let forged = format!("v={}", BASE64.encode([0u8; 32]));
        assert!(client.check_server_final(forged.as_bytes()).is_err());
        assert!(client.check_server_final(b"e=other-error").is_err());
    }

    #[test]
    fn malformed_server_messages_are_refused_with_a_reason() {
        let mut client = ScramClient::new("SCRAM-SHA-1", "ann", "pw").expect("a client");
        for (message, reason) in [
            ("s=abc,i=4096", "needs r="),
            ("r=other,s=YWJj,i=4096", "does not extend"),
        ] {
            let error = client.final_message(message.as_bytes()).expect_err(message);
            assert!(error.to_string().contains(reason), "{error}");
        }
        let first = String::from_utf8(client.first_message()).expect("utf-8");
        let nonce = first.split("r=").nth(1).expect("a nonce").to_owned();
        let few = format!("r={nonce}x,s=YWJj,i=100");
        let error = client.final_message(few.as_bytes()).expect_err("too few");
        assert!(error.to_string().contains("fewer than"), "{error}");
        assert!(ScramClient::new("PLAIN", "ann", "pw").is_err());
    }
}
