//! Checkpoint loading on arbitrary bytes: must never panic. The first byte chooses between the
//! whole file (header and CRC first) and the body alone (skips the CRC so that the fuzzer
//! reaches rkyv's bytecheck validation and the semantic checks after it).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    match data.split_first() {
        Some((selector, rest)) if selector % 2 == 0 => {
            spillway_store::fuzzing::decode_checkpoint_body(rest);
        }
        _ => {
            spillway_store::fuzzing::decode_checkpoint_file(data);
        }
    }
});
