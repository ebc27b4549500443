//! Entry points for fuzzing the framing decoder on untrusted bytes (not a stable API).
//!
//! Used by the cargo-fuzz target `server_frame` in `fuzz/` and by the proptest in this
//! crate's tests. Every function here must return normally for every input: a panic is a bug.

use crate::wire::{self, HEADER_LEN, Header, MAX_MESSAGE_SIZE, Request};

/// Decodes `bytes` as the server does: the header checked against the size limit, then the
/// whole message. A decoded OP_MSG is encoded again, and must decode to the same bytes, and
/// is turned into its command. Returns whether the message was accepted.
pub fn decode_frame(bytes: &[u8]) -> bool {
    if let Some(header) = bytes.first_chunk::<HEADER_LEN>() {
        // The connection refuses a length over the limit before allocating: so must this.
        if let Ok(header) = Header::parse(header, MAX_MESSAGE_SIZE) {
            assert!(header.length <= MAX_MESSAGE_SIZE);
        }
    }
    match wire::decode_message(bytes) {
        Ok(Request::Msg(message)) => {
            // Compared as bytes, not values: a NaN double is not equal to itself.
            let encoded = message
                .encode(7, 0)
                .expect("a decoded message encodes again");
            let Ok(Request::Msg(decoded)) = wire::decode_message(&encoded) else {
                panic!("an encoded message decodes");
            };
            assert_eq!(decoded.encode(7, 0).expect("encodes"), encoded);
            let _ = message.into_command();
            true
        }
        Ok(Request::Query(query)) => {
            let _ = query.command();
            let _ = query.command_database();
            true
        }
        Err(error) => {
            let _ = error.to_string();
            false
        }
    }
}
