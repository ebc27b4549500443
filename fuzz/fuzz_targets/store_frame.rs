//! Segment and frame decoding (and the manifest) on arbitrary bytes: must never panic.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    spillway_store::fuzzing::decode_segment(data);
    spillway_store::fuzzing::decode_manifest(data);
});
