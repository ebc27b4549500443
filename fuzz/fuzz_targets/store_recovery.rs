//! Recovery and repair of an active log segment holding arbitrary bytes: opening must decide
//! torn tail or damage without panicking, repair must salvage without panicking, and a
//! repaired store must open.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    spillway_store::fuzzing::open_and_repair_active_segment(data);
});
