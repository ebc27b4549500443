//! `spillway_doc::raw::append_to_array` on arbitrary bytes as a stored document: it must never
//! panic, and when the bytes are a valid document holding an array `a`, the result must decode
//! to that document with the values pushed onto `a`, and be exactly its encoding when the
//! input is canonical (as every stored document is).
#![no_main]

use libfuzzer_sys::fuzz_target;
use spillway_doc::bson::{Bson, Document, RawArrayBuf, RawBson, RawDocument, doc};
use spillway_doc::raw::append_to_array;

fuzz_target!(|data: &[u8]| {
    let Ok(stored) = RawDocument::from_bytes(data) else {
        return;
    };
    let pushed = [Bson::Int32(7), Bson::String("x".into()), Bson::Document(doc! { "n": [1] })];
    let values: RawArrayBuf = pushed
        .iter()
        .map(|value| RawBson::try_from(value.clone()).expect("encodable"))
        .collect();
    let Ok(appended) = append_to_array(stored, "a", &values) else {
        return;
    };
    let decoded = spillway_doc::bson::deserialize_from_slice::<Document>(data);
    match (appended, decoded) {
        (Some(bytes), Ok(mut document)) => {
            // Stored documents are canonical (array keys 0, 1, 2...): on those the splice is
            // the canonical encoding; on other bytes it keeps their keys and decodes the same.
            let canonical =
                spillway_doc::bson::serialize_to_vec(&document).expect("encodable") == data;
            let Some(Bson::Array(items)) = document.get_mut("a") else {
                panic!("appended to a document whose 'a' is no array");
            };
            items.extend(pushed.iter().cloned());
            if canonical {
                assert_eq!(
                    bytes,
                    spillway_doc::bson::serialize_to_vec(&document).expect("encodable"),
                    "the splice differs from the decoded push"
                );
            } else {
                let spliced = spillway_doc::bson::deserialize_from_slice::<Document>(&bytes)
                    .expect("the splice of a decodable document decodes");
                assert_eq!(spliced, document, "the splice decodes to another document");
            }
        }
        (None, Ok(document)) => {
            assert!(!matches!(document.get("a"), Some(Bson::Array(_))));
        }
        // Bytes the walk accepts but `bson` does not decode (a key or a string that is not
        // UTF-8, which stored documents never hold): only the absence of a panic is checked.
        (_, Err(_)) => {}
    }
});
