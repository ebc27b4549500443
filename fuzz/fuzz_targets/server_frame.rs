//! The wire server's framing decoder (header, OP_MSG sections and checksum, OP_QUERY) on
//! arbitrary bytes: must never panic, and an accepted OP_MSG must encode and decode again to
//! the same bytes. The input is tried as it is and with its length field set to its real
//! length, so that the fuzzer spends its time past the header.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    spillway_server::fuzzing::decode_frame(data);
    if data.len() >= 16 {
        let mut framed = data.to_vec();
        framed[..4].copy_from_slice(&(data.len() as i32).to_le_bytes());
        spillway_server::fuzzing::decode_frame(&framed);
    }
});
