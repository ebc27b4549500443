//! Memory of a `$group` over a million documents with 1,000 groups: the pipeline streams its
//! input and holds only the groups, so the heap it adds stays small whatever the collection's
//! size.
//!
//! Not a criterion benchmark: it loads `SPILLWAY_MEMORY_DOCUMENTS` books (default 1,000,000)
//! into an on-disk database, reopens it, and runs the `$group` while a thread samples the
//! process's anonymous resident memory (`RssAnon` in `/proc/self/status`) every millisecond.
//! It reports the heap before the pipeline (the store's key directory, which issue 14 is
//! about), the peak while it runs, and the difference: the pipeline's own memory. The
//! documents' bytes come from the memory-mapped segments (file pages, not counted as heap).
//! The table is printed and written to `$CARGO_TARGET_DIR/aggregate-memory.md`.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use bson::{Document, doc};
use spillway::{Database, DatabaseOptions, Durability};

const GROUPS: i64 = 1000;
const LOAD_BATCH: i64 = 10_000;

/// The process's anonymous resident memory in bytes (Linux).
fn rss_anon() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|line| line.strip_prefix("RssAnon:"))
        .and_then(|value| {
            value
                .trim()
                .trim_end_matches("kB")
                .trim()
                .parse::<u64>()
                .ok()
        })
        .map_or(0, |kib| kib * 1024)
}

fn book(id: i64) -> Document {
    doc! {
        "_id": id,
        "title": format!("The Book of {id}"),
        "author": format!("Author {:04}", (id * 31) % GROUPS),
        "price": 5.0 + (id % 5000) as f64 / 100.0,
        "pages": 100 + (id * 7919) % 900,
    }
}

fn main() {
    // `cargo bench` passes `--bench`; nothing to parse.
    let documents: i64 = std::env::var("SPILLWAY_MEMORY_DOCUMENTS")
        .ok()
        .map_or(1_000_000, |v| {
            v.parse()
                .expect("SPILLWAY_MEMORY_DOCUMENTS must be a number")
        });
    let target_dir = std::env::var_os("CARGO_TARGET_DIR").map_or_else(
        || Path::new(env!("CARGO_MANIFEST_DIR")).join("../target"),
        PathBuf::from,
    );
    let scratch =
        tempfile::tempdir_in(&target_dir).unwrap_or_else(|_| tempfile::tempdir().unwrap());
    let path = scratch.path().join("books");
    {
        let database = Database::open_with(
            &path,
            &DatabaseOptions::default().durability(Durability::SyncEveryCommit),
        )
        .unwrap();
        let books = database.collection::<Document>("books");
        let mut first = 0;
        while first < documents {
            let batch: Vec<Document> = (first..documents.min(first + LOAD_BATCH))
                .map(book)
                .collect();
            books.insert_many(&batch).run().unwrap();
            first += LOAD_BATCH;
        }
        database.checkpoint().unwrap();
    }
    let database = Database::open(&path).unwrap();
    let books = database.collection::<Document>("books");
    let before = rss_anon();
    let peak = Arc::new(AtomicU64::new(before));
    let done = Arc::new(AtomicBool::new(false));
    let sampler = {
        let peak = Arc::clone(&peak);
        let done = Arc::clone(&done);
        std::thread::spawn(move || {
            while !done.load(Ordering::Relaxed) {
                peak.fetch_max(rss_anon(), Ordering::Relaxed);
                std::thread::sleep(Duration::from_millis(1));
            }
        })
    };
    let started = Instant::now();
    let groups: Vec<Document> = books
        .aggregate([doc! { "$group": {
            "_id": "$author",
            "books": { "$sum": 1 },
            "average_price": { "$avg": "$price" },
            "pages": { "$max": "$pages" },
        } }])
        .run()
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    let elapsed = started.elapsed();
    peak.fetch_max(rss_anon(), Ordering::Relaxed);
    done.store(true, Ordering::Relaxed);
    sampler.join().unwrap();
    assert_eq!(groups.len(), GROUPS as usize);
    let total: i64 = groups
        .iter()
        .map(|group| match group.get("books") {
            Some(bson::Bson::Int32(n)) => i64::from(*n),
            Some(bson::Bson::Int64(n)) => *n,
            other => panic!("unexpected count {other:?}"),
        })
        .sum();
    assert_eq!(total, documents);
    let peak = peak.load(Ordering::Relaxed);
    let mib = |bytes: u64| bytes as f64 / (1024.0 * 1024.0);
    let table = format!(
        "| documents | groups | heap before (key directory) | peak during `$group` | added by the pipeline | time |\n|---|---|---|---|---|---|\n| {documents} | {GROUPS} | {:.1} MiB | {:.1} MiB | {:.1} MiB | {:.2} s |\n",
        mib(before),
        mib(peak),
        mib(peak.saturating_sub(before)),
        elapsed.as_secs_f64(),
    );
    println!("\n{table}");
    std::fs::write(target_dir.join("aggregate-memory.md"), &table).unwrap();
}
