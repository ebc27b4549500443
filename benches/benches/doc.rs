//! Benchmarks of the document language, each against a baseline in the same run.
//!
//! - `filter/raw` evaluates a filter on raw BSON bytes, as the database does straight from
//!   its memory map; `filter/decode_then_match` first decodes the document into a
//!   `bson::Document` (what an evaluator without raw support must do). The ratio is the
//!   cost the raw path saves on every collection-scan document.
//! - `key/encode` builds an index key; `key/serialize` serialises the same value as a BSON
//!   document, the cheapest other way to get comparable-ish bytes.

use bson::{Bson, Document, RawDocumentBuf, doc};
use criterion::{Criterion, criterion_group, criterion_main};
use spillway_doc::filter::Filter;
use std::hint::black_box;

/// A `sales`-like book with `n_buyers` customers, as in the outlier seed.
fn book(n_buyers: usize) -> Document {
    let buyers: Vec<Bson> = (0..n_buyers)
        .map(|i| Bson::String(format!("user{i:05}")))
        .collect();
    doc! {
        "_id": 17,
        "title": "The Wooden Amulet",
        "year": 2023,
        "author": "Lesley Moreno",
        "customers_purchased": buyers,
        "has_extras": false,
    }
}

fn filter_benchmarks(criterion: &mut Criterion) {
    let mut group = criterion.benchmark_group("filter");
    let document = book(50);
    let raw = RawDocumentBuf::try_from(&document).expect("encodable");
    let bytes = raw.as_bytes().to_vec();
    let filter =
        Filter::parse(&doc! { "year": { "$gte": 2000 }, "customers_purchased": "user00049" })
            .expect("valid filter");
    group.bench_function("raw", |b| {
        b.iter(|| {
            let raw = bson::RawDocument::from_bytes(black_box(&bytes)).expect("valid");
            filter.matches(raw).expect("well formed")
        });
    });
    group.bench_function("decode_then_match", |b| {
        b.iter(|| {
            let decoded: Document = bson::deserialize_from_slice(black_box(&bytes)).expect("valid");
            filter.matches_document(&decoded).expect("well formed")
        });
    });
    group.finish();
}

fn key_benchmarks(criterion: &mut Criterion) {
    let mut group = criterion.benchmark_group("key");
    let value = Bson::Document(
        doc! { "published_date": bson::DateTime::from_millis(1_700_000_000_000), "rating": 4.5 },
    );
    group.bench_function("encode", |b| {
        b.iter(|| spillway_doc::key::to_key(black_box(&value)));
    });
    group.bench_function("serialize", |b| {
        b.iter(|| {
            bson::serialize_to_vec(&doc! { "": black_box(&value).clone() }).expect("encodable")
        });
    });
    group.finish();
}

criterion_group!(benches, filter_benchmarks, key_benchmarks);
criterion_main!(benches);
