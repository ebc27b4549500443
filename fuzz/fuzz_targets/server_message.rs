//! Whole wire messages through the server's read and decode path
//! (`spillway_server::fuzzing::serve_bytes`: the connection's own reader with its header,
//! opcode, size and budget checks, then the decoder with the nesting limit), as one
//! connection's stream of messages. Three shapes of input:
//!
//! - the bytes as they are, and with the first length field set to the input's length (so
//!   that the fuzzer spends its time past the header);
//! - when the input starts with `D`, a message nested deep at a place and with containers the
//!   input chooses (its next 5 bytes: levels around the limit, the shape), around the rest as
//!   a document: the server must refuse exactly the messages deeper than the limit, never
//!   overflow its stack (each such run costs about 200 levels of decoding, about a
//!   millisecond under the address sanitizer, so it runs for one input in 16 of those that
//!   ask for it, chosen by a hash the fuzzer cannot steer: the raw paths get the executions);
//! - the input as one BSON document: the iterative nesting check must agree with the
//!   recursive decoder.
#![no_main]

use libfuzzer_sys::fuzz_target;
use spillway_server::fuzzing::{check_nesting_agrees, nested_message, serve_bytes};
use spillway_server::wire::MAX_BSON_DEPTH;

fuzz_target!(|data: &[u8]| {
    serve_bytes(data);
    if data.len() >= 16 {
        let mut framed = data.to_vec();
        framed[..4].copy_from_slice(&(data.len() as i32).to_le_bytes());
        serve_bytes(&framed);
    }
    let hash = data.iter().fold(0x811c_9dc5_u32, |hash, &byte| {
        (hash ^ u32::from(byte)).wrapping_mul(0x0100_0193)
    });
    if let Some((&[b'D', depth, a, b, c, d], leaf)) = data.split_first_chunk::<6>()
        && hash % 16 == 0
    {
        // From well below to well above the limit, most often near it.
        let levels = match depth {
            0..=191 => MAX_BSON_DEPTH - 8 + usize::from(depth % 16),
            _ => usize::from(depth) * 4,
        };
        let shape = u32::from_le_bytes([a, b, c, d]);
        let (message, command_levels) = nested_message(levels, shape, leaf);
        let served = serve_bytes(&message);
        if command_levels <= MAX_BSON_DEPTH {
            assert_eq!(served.accepted, 1, "{command_levels} levels: {served:?}");
        } else {
            assert_eq!(served.too_deep, 1, "{command_levels} levels: {served:?}");
        }
    }
    check_nesting_agrees(data, 8);
    check_nesting_agrees(data, MAX_BSON_DEPTH);
});
