//! The pattern benchmark's book rows (see `benches/benches/patterns.rs`) run against PoloDB
//! 5.3, which stores the naive design: every buyer in the book's own `customers_purchased`
//! array, however long it grows (PoloDB has no pattern support).
//!
//! This crate lives outside the workspace (root `Cargo.toml`, `exclude`) because PoloDB builds
//! RocksDB from C++ sources for about 15 minutes; CI and `cargo xtask bench` never build it.
//! Run it with `cargo run --release --manifest-path benches/polodb-peer/Cargo.toml`.
//!
//! Harness: a plain timing loop, not criterion (to keep the crate light). Each operation is
//! warmed up for 300 ms, then timed in 10 samples of about 200 ms (at least one iteration
//! each); the figure is the median of the samples' mean time per iteration, the same
//! statistic as criterion's median with `sample_size(10)` in `patterns.rs`.
//!
//! Rows (numbers as in `patterns.rs`): (1) read a typical book by `_id`; (2) the viral book's
//! page: PoloDB 5.3 has neither projection nor `$slice`, so the whole document is read and
//! the first 50 buyers taken in the client; (3) plain `$push` of one buyer into books of 10,
//! 1,000 and 100,000 buyers (PoloDB appends a `$push` value as it is, so a modifier such as
//! `{$each: [...]}` would become one literal element; none are used); (4) bytes written per push, `wchar` of `/proc/self/io` around 50 pushes;
//! (5) full read of the viral book; (7) the ids of the books bought by user `u0`. Row (6)
//! (products and reviews) is not run.
//!
//! Row (7): PoloDB 5.3 does not match an array field against a scalar
//! (`{customers_purchased: "u0"}` compares the whole array with the string and finds
//! nothing), so the filter MongoDB and Spillway use is run and its result count printed, and
//! the timed figure uses `{customers_purchased: {$in: ["u0"]}}`, which PoloDB does match
//! element-wise. Neither filter can use an index (PoloDB 5.3 has no multikey indexes): both
//! scan every book.
//!
//! Writes: PoloDB commits each operation in a RocksDB transaction with `sync = true`, so every
//! push is fsynced, like Spillway's default `SyncEveryCommit`. RocksDB flushes and compacts
//! in background threads of this same process; their writes count towards `wchar` when they
//! happen to fall inside the 50-push window, so row (4) can include some of that work.
//!
//! Environment: the same as `patterns.rs`, with the same defaults: `SPILLWAY_PBENCH_BOOKS`
//! (2,000), `SPILLWAY_PBENCH_VIRAL` (100,000), `SPILLWAY_PBENCH_MILLION=1` (adds the
//! 1,000,000-buyer push target). The workload generator is a copy of `patterns.rs`'s (same
//! seed, same draw order), so the books are identical.

#![deny(unsafe_code)]

use std::fmt::Write as _;
use std::hint::black_box;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use bson::{Bson, Document, doc};
use polodb_core::{Collection, CollectionT, Database};

const USERS: u64 = 50_000;
const PAGE: usize = 50;
const PUSHES_FOR_BYTES: u64 = 50;
const LOAD_CHUNK: usize = 200;
const VIRAL_ID: i64 = 0;
/// Push targets get `_id` `PUSH_ID_BASE + n`.
const PUSH_ID_BASE: i64 = 10_000_000;

const WARM_UP: Duration = Duration::from_millis(300);
const SAMPLES: usize = 10;
const SAMPLE_TIME: Duration = Duration::from_millis(200);

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    /// A user id skewed towards 0 (the cube of a uniform number), so some users buy a lot.
    fn user(&mut self) -> String {
        let uniform = (self.next() % 1_000_000) as f64 / 1_000_000.0;
        format!("u{}", (uniform.powi(3) * USERS as f64) as u64)
    }
}

fn env_usize(name: &str, default: usize) -> usize {
    std::env::var(name).ok().map_or(default, |value| {
        value
            .parse()
            .unwrap_or_else(|_| panic!("{name} must be a whole number, got {value:?}"))
    })
}

/// The books of `patterns.rs`'s workload. Its products are drawn after the books from the
/// same generator, so leaving them out does not change a single book.
struct Workload {
    books: Vec<(i64, Vec<String>)>,
    typical_book: i64,
    push_sizes: Vec<usize>,
}

fn workload() -> Workload {
    let n_books = env_usize("SPILLWAY_PBENCH_BOOKS", 2_000).max(2);
    let viral = env_usize("SPILLWAY_PBENCH_VIRAL", 100_000);
    let mut push_sizes = vec![10, 1_000, 100_000];
    if std::env::var("SPILLWAY_PBENCH_MILLION").is_ok_and(|value| value == "1") {
        push_sizes.push(1_000_000);
    }
    let mut rng = Rng(0x5EED_0BAD_F00D_0001);
    let zipf_scale = 10 * n_books / 2;
    let mut books = Vec::new();
    books.push((VIRAL_ID, (0..viral).map(|_| rng.user()).collect()));
    for rank in 2..=n_books {
        let n = zipf_scale.div_ceil(rank);
        books.push((rank as i64, (0..n).map(|_| rng.user()).collect()));
    }
    let typical_book = (n_books / 2) as i64;
    for &n in &push_sizes {
        books.push((
            PUSH_ID_BASE + n as i64,
            (0..n).map(|_| rng.user()).collect(),
        ));
    }
    Workload {
        books,
        typical_book,
        push_sizes,
    }
}

fn load(books: &Collection<Document>, workload: &Workload) {
    let documents: Vec<Document> = workload
        .books
        .iter()
        .map(|(id, buyers)| {
            doc! { "_id": id, "title": format!("Book {id}"), "customers_purchased": buyers }
        })
        .collect();
    for chunk in documents.chunks(LOAD_CHUNK) {
        books.insert_many(chunk).expect("loading books into PoloDB");
    }
}

/// Median over `SAMPLES` samples of the mean time per call of `operation`, in nanoseconds.
fn measure(mut operation: impl FnMut()) -> f64 {
    let warm_up_start = Instant::now();
    let mut warm_up_calls = 0_u32;
    while warm_up_start.elapsed() < WARM_UP {
        operation();
        warm_up_calls += 1;
    }
    let per_call = warm_up_start.elapsed() / warm_up_calls;
    let calls_per_sample = (SAMPLE_TIME.as_nanos() / per_call.as_nanos().max(1)).max(1) as u32;
    let mut samples: Vec<f64> = (0..SAMPLES)
        .map(|_| {
            let start = Instant::now();
            for _ in 0..calls_per_sample {
                operation();
            }
            start.elapsed().as_nanos() as f64 / f64::from(calls_per_sample)
        })
        .collect();
    samples.sort_by(f64::total_cmp);
    f64::midpoint(samples[SAMPLES / 2 - 1], samples[SAMPLES / 2])
}

/// Bytes this process has passed to `write`-family calls so far (`wchar` of `/proc/self/io`).
fn written_bytes() -> u64 {
    let io = std::fs::read_to_string("/proc/self/io").unwrap_or_default();
    io.lines()
        .find_map(|line| line.strip_prefix("wchar:"))
        .and_then(|value| value.trim().parse().ok())
        .unwrap_or(0)
}

fn bytes_per_push(mut push: impl FnMut()) -> f64 {
    let before = written_bytes();
    for _ in 0..PUSHES_FOR_BYTES {
        push();
    }
    (written_bytes() - before) as f64 / PUSHES_FOR_BYTES as f64
}

fn push(books: &Collection<Document>, id: i64) {
    let result = books
        .update_one(
            doc! { "_id": id },
            doc! { "$push": { "customers_purchased": "u1" } },
        )
        .expect("$push into a PoloDB book");
    assert_eq!(result.modified_count, 1, "$push did not modify book {id}");
}

fn find_book(books: &Collection<Document>, id: i64) -> Document {
    books
        .find_one(doc! { "_id": id })
        .expect("reading a PoloDB book")
        .unwrap_or_else(|| panic!("book {id} is missing"))
}

fn ids_of(books: &Collection<Document>, filter: &Document) -> Vec<Bson> {
    books
        .find(filter.clone())
        .run()
        .expect("querying PoloDB books")
        .map(|book| {
            book.expect("reading a PoloDB book")
                .get("_id")
                .cloned()
                .expect("a book without _id")
        })
        .collect()
}

fn format_duration(ns: f64) -> String {
    if ns >= 1e9 {
        format!("{:.2} s", ns / 1e9)
    } else if ns >= 1e6 {
        format!("{:.2} ms", ns / 1e6)
    } else if ns >= 1e3 {
        format!("{:.2} µs", ns / 1e3)
    } else {
        format!("{ns:.0} ns")
    }
}

fn format_bytes(bytes: f64) -> String {
    if bytes >= 1e6 {
        format!("{:.2} MB", bytes / 1e6)
    } else if bytes >= 1e3 {
        format!("{:.1} kB", bytes / 1e3)
    } else {
        format!("{bytes:.0} B")
    }
}

fn main() {
    let target_dir = std::env::var_os("CARGO_TARGET_DIR").map_or_else(
        || PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target"),
        PathBuf::from,
    );
    let dir = std::env::temp_dir().join(format!("polodb-peer-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let workload = workload();
    let db = Database::open_path(&dir).expect("opening the PoloDB database");
    let books = db.collection::<Document>("books");
    let load_start = Instant::now();
    load(&books, &workload);
    eprintln!(
        "loaded {} books into PoloDB {} in {:.1?}",
        workload.books.len(),
        Database::get_version(),
        load_start.elapsed()
    );

    let mut rows: Vec<(String, String)> = Vec::new();
    let typical = workload.typical_book;
    let typical_read = measure(|| {
        black_box(find_book(&books, typical));
    });
    rows.push((
        "(1) read a typical book".into(),
        format_duration(typical_read),
    ));

    let viral_page = measure(|| {
        let book = find_book(&books, VIRAL_ID);
        let first: Vec<Bson> = book
            .get_array("customers_purchased")
            .expect("customers_purchased is an array")
            .iter()
            .take(PAGE)
            .cloned()
            .collect();
        black_box(first);
    });
    rows.push((
        "(2) viral book's page (whole document read, first 50 buyers taken in the client)".into(),
        format_duration(viral_page),
    ));

    let viral_full = measure(|| {
        black_box(find_book(&books, VIRAL_ID));
    });

    let scalar_filter = doc! { "customers_purchased": "u0" };
    let in_filter = doc! { "customers_purchased": { "$in": ["u0"] } };
    let expected = workload
        .books
        .iter()
        .filter(|(_, buyers)| buyers.iter().any(|user| user == "u0"))
        .count();
    let scalar_matches = ids_of(&books, &scalar_filter).len();
    let in_matches = ids_of(&books, &in_filter).len();
    eprintln!(
        "books bought by u0: {expected} in the workload; PoloDB finds {scalar_matches} with \
         {{customers_purchased: \"u0\"}}, {in_matches} with {{customers_purchased: {{$in: [\"u0\"]}}}}"
    );
    let books_of_user = measure(|| {
        black_box(ids_of(&books, &in_filter));
    });

    // Pushes last: they grow the push targets, not the books the reads use.
    let mut push_bytes = Vec::new();
    for &n in &workload.push_sizes {
        let id = PUSH_ID_BASE + n as i64;
        let time = measure(|| push(&books, id));
        rows.push((
            format!("(3) $push one buyer, book of {n}"),
            format_duration(time),
        ));
        push_bytes.push((n, bytes_per_push(|| push(&books, id))));
    }
    for (n, bytes) in push_bytes {
        rows.push((
            format!("(4) bytes written per pushed buyer, book of {n}"),
            format_bytes(bytes),
        ));
    }
    rows.push((
        "(5) full read of the viral book (one document)".into(),
        format_duration(viral_full),
    ));
    rows.push((
        "(7) books bought by user u0 ($in filter, full scan)".into(),
        format_duration(books_of_user),
    ));

    let mut table = String::from("| operation | PoloDB 5.3 naive |\n|---|---|\n");
    for (name, value) in &rows {
        let _ = writeln!(table, "| {name} | {value} |");
    }
    let _ = writeln!(
        table,
        "\n{} books (viral: {} buyers); books bought by u0: {expected}, PoloDB matches {scalar_matches} \
         with {{customers_purchased: \"u0\"}} and {in_matches} with $in",
        workload.books.len(),
        workload.books[0].1.len(),
    );
    println!("\n{table}");
    std::fs::create_dir_all(&target_dir).expect("creating the target directory");
    std::fs::write(target_dir.join("polodb-bench.md"), &table).expect("writing polodb-bench.md");
    drop(books);
    drop(db);
    let _ = std::fs::remove_dir_all(&dir);
}
