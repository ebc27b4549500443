//! mongosh literals and Extended JSON text: parsing must never panic, and whatever parses
//! prints back to text that parses to the same value.
#![no_main]

use libfuzzer_sys::fuzz_target;
use spillway_doc::shell::{parse_extjson, parse_value, to_shell_string};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let _ = parse_extjson(text);
    if let Ok(value) = parse_value(text) {
        let printed = to_shell_string(&value);
        let reparsed = parse_value(&printed).expect("printed values parse back");
        // NaN never equals itself; compare the printed forms instead of the values.
        assert_eq!(
            to_shell_string(&reparsed),
            printed,
            "round trip of {text:?}"
        );
    }
});
