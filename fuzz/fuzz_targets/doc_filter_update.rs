//! Filters and updates from arbitrary BSON: parsing must never panic, evaluation must never
//! panic, and a failed update must leave the document exactly as it was.
#![no_main]

use libfuzzer_sys::fuzz_target;
use spillway_doc::bson::{Document, RawDocumentBuf, doc};
use spillway_doc::filter::Filter;
use spillway_doc::update::{ApplyContext, Update};

fuzz_target!(|data: &[u8]| {
    let Ok(spec) = spillway_doc::bson::deserialize_from_slice::<Document>(data) else {
        return;
    };
    let targets = [
        doc! { "_id": 1, "a": [1, { "b": [2, 3] }, "x"], "c": { "d": null }, "e": 2.5 },
        doc! { "_id": "s", "a": { "0": 1 }, "tags": ["x", "y"], "n": -7_i64 },
    ];
    if let Ok(filter) = Filter::parse(&spec) {
        for target in &targets {
            let raw = RawDocumentBuf::try_from(target).expect("encodable");
            let matched = filter.matches(&raw).expect("well-formed input");
            assert_eq!(
                matched,
                filter.matches_document(target).expect("well-formed input")
            );
        }
    }
    if let Ok(update) = Update::parse(&spec, &[]) {
        for target in &targets {
            let mut document = target.clone();
            if update
                .apply(&mut document, &ApplyContext::default())
                .is_err()
            {
                assert_eq!(&document, target, "a failed update changed the document");
            }
        }
    }
});
