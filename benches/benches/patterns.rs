//! Pattern benchmarks: Spillway with the outlier and subset policies, side by side in one run
//! with the naive design (unbounded embedded arrays in Spillway itself, no policy) and with
//! SQLite's normalised child tables (rusqlite, bundled SQLite), all with an fsync per commit
//! (Spillway's default `SyncEveryCommit`; SQLite in WAL mode with `synchronous=FULL`).
//!
//! Workload: `books` with Zipf-distributed buyers (`customers_purchased`, the seed's outlier
//! field; book of rank r has about `10 * BOOKS / 2 / r` buyers, so the median book has about
//! 10) and one viral book; books with exactly 10, 1,000 and 100,000 buyers (and 1,000,000 when
//! asked) as `$push` targets; `products` with Zipf-distributed `reviews` and one big product.
//! Buyers are drawn skewed from a pool of 50,000 users, so user `u0` bought many books.
//!
//! Rows: (1) read a typical book; (2) the viral book's page (main document, first 50 buyers);
//! (3) `$push` of one buyer at each size (criterion, then rounds that alternate Spillway's
//! pushes with SQLite's, so that the disk's slow spells fall on both); (4) bytes written per
//! pushed buyer (the process's
//! `wchar` from `/proc/self/io`, the same measure for every engine; printed, not timed);
//! (5) full expanded read of the viral book vs reading the same array from one document, and
//! `$unwind` + `$group` of its buyers;
//! (6) the big product's page with its 10 newest reviews, and page 50 of its reviews (10 per
//! page); (7) the ids of the books bought by user `u0`, without and with a multikey index on
//! the buyers (SQLite: its child table's index on the user).
//!
//! Environment (defaults run in a few minutes on 2 cores):
//! `SPILLWAY_PBENCH_BOOKS` (2,000), `SPILLWAY_PBENCH_VIRAL` (buyers of the viral book,
//! 100,000), `SPILLWAY_PBENCH_PRODUCTS` (1,000), `SPILLWAY_PBENCH_BIG_PRODUCT` (reviews of
//! the big product, 10,000), `SPILLWAY_PBENCH_MILLION=1` (adds the 1,000,000-buyer push
//! target). Full size: `SPILLWAY_PBENCH_BOOKS=100000 SPILLWAY_PBENCH_VIRAL=1000000
//! SPILLWAY_PBENCH_PRODUCTS=100000 SPILLWAY_PBENCH_BIG_PRODUCT=100000
//! SPILLWAY_PBENCH_MILLION=1`.
//!
//! The table (criterion medians, ratios) is printed and written to
//! `$CARGO_TARGET_DIR/patterns-bench.md`, the push-cost plot to
//! `$CARGO_TARGET_DIR/patterns-push.svg`.

use std::fmt::Write as _;
use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::time::Duration;

use bson::{Bson, Document, doc};
use criterion::Criterion;
use rusqlite::{Connection, params};
use spillway::{Collection, Database, ErrorKind, IndexModel, Pattern};

const USERS: u64 = 50_000;
const PAGE: usize = 50;
/// Where the deep page of the viral book starts.
const DEEP_PAGE_SKIP: usize = 5_000;
const REVIEWS_PER_PAGE: usize = 10;
const REVIEW_PAGE: usize = 50;
const PUSHES_FOR_BYTES: u64 = 50;
const LOAD_CHUNK: usize = 200;
const VIRAL_ID: i64 = 0;
const BIG_PRODUCT_ID: i64 = 0;
/// Push targets get `_id` `PUSH_ID_BASE + n`.
const PUSH_ID_BASE: i64 = 10_000_000;

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

/// The generated data set, shared by every engine.
struct Workload {
    books: Vec<(i64, Vec<String>)>,
    typical_book: i64,
    push_sizes: Vec<usize>,
    products: Vec<(i64, Vec<Document>)>,
}

fn workload() -> Workload {
    let n_books = env_usize("SPILLWAY_PBENCH_BOOKS", 2_000).max(2);
    let viral = env_usize("SPILLWAY_PBENCH_VIRAL", 100_000);
    let n_products = env_usize("SPILLWAY_PBENCH_PRODUCTS", 1_000).max(2);
    let big_product =
        env_usize("SPILLWAY_PBENCH_BIG_PRODUCT", 10_000).max(REVIEW_PAGE * REVIEWS_PER_PAGE);
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
    let review_scale = 10 * n_products / 2;
    let mut date = 1_600_000_000_i64;
    let mut review_id = 0_i64;
    let mut products = Vec::new();
    for rank in 1..=n_products {
        let n = if rank == 1 {
            big_product
        } else {
            review_scale.div_ceil(rank)
        };
        let reviews = (0..n)
            .map(|_| {
                date += 1 + (rng.next() % 600) as i64;
                review_id += 1;
                doc! {
                    "review_id": review_id,
                    "review_author": rng.user(),
                    "review_rating": (rng.next() % 5 + 1) as i32,
                    "published_date": date,
                    "review_text": "Arrived on time, works as described, would buy again.",
                }
            })
            .collect();
        products.push(((rank - 1) as i64, reviews));
    }
    Workload {
        books,
        typical_book,
        push_sizes,
        products,
    }
}

/// One Spillway database, with or without the policies.
struct SpillwayEngine {
    db: Database,
    books: Collection<Document>,
    products: Collection<Document>,
    /// Push sizes whose book could not be stored (a document over 16 MiB).
    refused: Vec<usize>,
    _dir: tempfile::TempDir,
}

fn spillway_engine(patterned: bool, workload: &Workload) -> SpillwayEngine {
    let dir = tempfile::tempdir().unwrap();
    let db = Database::open(dir.path()).unwrap();
    db.create_collection("books").run().unwrap();
    db.create_collection("products").run().unwrap();
    if patterned {
        db.set_pattern(
            Pattern::outlier("books", "customers_purchased")
                .threshold(PAGE)
                .link_field("book_id"),
        )
        .unwrap();
        db.set_pattern(
            Pattern::subset("products", "reviews")
                .keep(REVIEWS_PER_PAGE)
                .sort_by(doc! { "published_date": -1 })
                .archive_collection("reviews")
                .link_field("product_id"),
        )
        .unwrap();
    }
    let books = db.collection::<Document>("books");
    let mut refused = Vec::new();
    let documents: Vec<(i64, Document)> = workload
        .books
        .iter()
        .map(|(id, buyers)| {
            (
                *id,
                doc! { "_id": id, "title": format!("Book {id}"), "customers_purchased": buyers },
            )
        })
        .collect();
    for chunk in documents.chunks(LOAD_CHUNK) {
        let batch: Vec<&Document> = chunk.iter().map(|(_, document)| document).collect();
        if books.insert_many(batch).run().is_ok() {
            continue;
        }
        for (id, document) in chunk {
            match books.insert_one(document).run() {
                Ok(_) => {}
                // Stored already by the ordered insert_many before it stopped.
                Err(error) if error.is_duplicate_key() => {}
                Err(error) if matches!(error.kind(), ErrorKind::DocumentTooLarge { .. }) => {
                    refused.push((id - PUSH_ID_BASE) as usize);
                }
                Err(error) => panic!("loading book {id}: {error}"),
            }
        }
    }
    let products = db.collection::<Document>("products");
    let documents: Vec<Document> = workload
        .products
        .iter()
        .map(
            |(id, reviews)| doc! { "_id": id, "name": format!("Product {id}"), "reviews": reviews },
        )
        .collect();
    for chunk in documents.chunks(LOAD_CHUNK) {
        products.insert_many(chunk).run().unwrap();
    }
    SpillwayEngine {
        db,
        books,
        products,
        refused,
        _dir: dir,
    }
}

fn sqlite_engine(workload: &Workload) -> (Connection, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let conn = Connection::open(dir.path().join("bench.sqlite")).unwrap();
    conn.execute_batch(
        "PRAGMA journal_mode=WAL;
         PRAGMA synchronous=FULL;
         CREATE TABLE books (id INTEGER PRIMARY KEY, title TEXT NOT NULL);
         CREATE TABLE buyers (id INTEGER PRIMARY KEY, book_id INTEGER NOT NULL, user TEXT NOT NULL);
         CREATE INDEX buyers_by_book ON buyers (book_id, id);
         CREATE INDEX buyers_by_user ON buyers (user);
         CREATE TABLE products (id INTEGER PRIMARY KEY, name TEXT NOT NULL);
         CREATE TABLE reviews (id INTEGER PRIMARY KEY, product_id INTEGER NOT NULL,
             review_id INTEGER NOT NULL, review_author TEXT NOT NULL, review_rating INTEGER NOT NULL,
             published_date INTEGER NOT NULL, review_text TEXT NOT NULL);
         CREATE INDEX reviews_by_date ON reviews (product_id, published_date DESC);",
    )
    .unwrap();
    let tx = conn.unchecked_transaction().unwrap();
    {
        let mut book = tx.prepare("INSERT INTO books VALUES (?1, ?2)").unwrap();
        let mut buyer = tx
            .prepare("INSERT INTO buyers (book_id, user) VALUES (?1, ?2)")
            .unwrap();
        for (id, buyers) in &workload.books {
            book.execute(params![id, format!("Book {id}")]).unwrap();
            for user in buyers {
                buyer.execute(params![id, user]).unwrap();
            }
        }
        let mut product = tx.prepare("INSERT INTO products VALUES (?1, ?2)").unwrap();
        let mut review = tx
            .prepare("INSERT INTO reviews (product_id, review_id, review_author, review_rating, published_date, review_text) VALUES (?1, ?2, ?3, ?4, ?5, ?6)")
            .unwrap();
        for (id, reviews) in &workload.products {
            product
                .execute(params![id, format!("Product {id}")])
                .unwrap();
            for r in reviews {
                review
                    .execute(params![
                        id,
                        r.get_i64("review_id").unwrap(),
                        r.get_str("review_author").unwrap(),
                        r.get_i32("review_rating").unwrap(),
                        r.get_i64("published_date").unwrap(),
                        r.get_str("review_text").unwrap(),
                    ])
                    .unwrap();
            }
        }
    }
    tx.commit().unwrap();
    (conn, dir)
}

fn sqlite_book(conn: &Connection, id: i64, limit: i64) -> (String, Vec<String>) {
    let title: String = conn
        .prepare_cached("SELECT title FROM books WHERE id = ?1")
        .unwrap()
        .query_row(params![id], |row| row.get(0))
        .unwrap();
    let buyers = conn
        .prepare_cached("SELECT user FROM buyers WHERE book_id = ?1 ORDER BY id LIMIT ?2")
        .unwrap()
        .query_map(params![id, limit], |row| row.get::<_, String>(0))
        .unwrap()
        .collect::<Result<Vec<_>, _>>()
        .unwrap();
    (title, buyers)
}

/// Buyers `skip..skip + limit` of book `id`, in order.
fn sqlite_book_page(conn: &Connection, id: i64, skip: usize, limit: usize) -> Vec<String> {
    conn.prepare_cached("SELECT user FROM buyers WHERE book_id = ?1 ORDER BY id LIMIT ?2 OFFSET ?3")
        .unwrap()
        .query_map(params![id, limit as i64, skip as i64], |row| {
            row.get::<_, String>(0)
        })
        .unwrap()
        .collect::<Result<Vec<_>, _>>()
        .unwrap()
}

/// The ids of the books `user` bought, from the child table's index on `user`.
fn sqlite_books_of_user(conn: &Connection, user: &str) -> Vec<i64> {
    conn.prepare_cached("SELECT DISTINCT book_id FROM buyers WHERE user = ?1")
        .unwrap()
        .query_map(params![user], |row| row.get::<_, i64>(0))
        .unwrap()
        .collect::<Result<Vec<_>, _>>()
        .unwrap()
}

fn sqlite_reviews(conn: &Connection, product: i64, skip: usize, limit: usize) -> Vec<Document> {
    conn.prepare_cached(
        "SELECT review_id, review_author, review_rating, published_date, review_text FROM reviews
         WHERE product_id = ?1 ORDER BY published_date DESC LIMIT ?2 OFFSET ?3",
    )
    .unwrap()
    .query_map(params![product, limit as i64, skip as i64], |row| {
        Ok(doc! {
            "review_id": row.get::<_, i64>(0)?,
            "review_author": row.get::<_, String>(1)?,
            "review_rating": row.get::<_, i32>(2)?,
            "published_date": row.get::<_, i64>(3)?,
            "review_text": row.get::<_, String>(4)?,
        })
    })
    .unwrap()
    .collect::<Result<Vec<_>, _>>()
    .unwrap()
}

fn sqlite_push(conn: &Connection, book: i64, user: &str) {
    conn.prepare_cached("INSERT INTO buyers (book_id, user) VALUES (?1, ?2)")
        .unwrap()
        .execute(params![book, user])
        .unwrap();
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

/// Rounds of the alternating push measurement, and pushes per engine in each.
const ALTERNATING_ROUNDS: usize = 25;
const ALTERNATING_PUSHES: usize = 200;

/// The median over [`ALTERNATING_ROUNDS`] rounds of the time of one push (ns), per engine,
/// where each round runs [`ALTERNATING_PUSHES`] pushes of `pattern` then as many of `sqlite`.
/// A slow spell of the disk (this machine's fsync varies by 10-20% over seconds) then falls
/// on both engines, so their ratio is steadier than that of two criterion runs seconds apart.
fn alternating_pushes(mut pattern: impl FnMut(), mut sqlite: impl FnMut()) -> (f64, f64) {
    let timed = |push: &mut dyn FnMut()| {
        let start = std::time::Instant::now();
        for _ in 0..ALTERNATING_PUSHES {
            push();
        }
        start.elapsed().as_nanos() as f64 / ALTERNATING_PUSHES as f64
    };
    let (mut patterns, mut sqlites): (Vec<f64>, Vec<f64>) = (0..ALTERNATING_ROUNDS)
        .map(|_| (timed(&mut pattern), timed(&mut sqlite)))
        .unzip();
    let median = |values: &mut Vec<f64>| {
        values.sort_by(f64::total_cmp);
        values[values.len() / 2]
    };
    (median(&mut patterns), median(&mut sqlites))
}

fn spillway_push(books: &Collection<Document>, id: i64) {
    books
        .update_one(
            doc! { "_id": id },
            doc! { "$push": { "customers_purchased": "u1" } },
        )
        .run()
        .unwrap();
}

/// Median time per iteration (ns) that criterion recorded for `group/function`.
fn criterion_median(output: &Path, group: &str, function: &str) -> Option<f64> {
    let path = output
        .join(group)
        .join(function)
        .join("new")
        .join("estimates.json");
    let text = std::fs::read_to_string(path).ok()?;
    let median = &text[text.find("\"median\"")?..];
    let estimate = &median[median.find("\"point_estimate\":")? + "\"point_estimate\":".len()..];
    let end = estimate.find([',', '}'])?;
    estimate[..end].trim().parse().ok()
}

fn format_duration(ns: f64) -> String {
    if ns.is_nan() {
        "-".into()
    } else if ns >= 1e9 {
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
    if bytes.is_nan() {
        "-".into()
    } else if bytes >= 1e6 {
        format!("{:.2} MB", bytes / 1e6)
    } else if bytes >= 1e3 {
        format!("{:.1} kB", bytes / 1e3)
    } else {
        format!("{bytes:.0} B")
    }
}

fn ratio(other: f64, pattern: f64) -> String {
    if other.is_nan() || pattern.is_nan() {
        "-".into()
    } else {
        format!("{:.2}x", other / pattern)
    }
}

/// A log-log plot of push cost against the array length, one line per engine.
fn push_plot(sizes: &[usize], series: &[(&str, &str, Vec<f64>)]) -> String {
    let (width, height, margin) = (640.0, 400.0, 60.0);
    let values: Vec<f64> = series
        .iter()
        .flat_map(|(_, _, values)| values.iter().copied())
        .filter(|value| value.is_finite() && *value > 0.0)
        .collect();
    let low = values
        .iter()
        .copied()
        .fold(f64::MAX, f64::min)
        .log10()
        .floor();
    let high = values.iter().copied().fold(0.0, f64::max).log10().ceil();
    let x_low = (*sizes.first().unwrap() as f64).log10();
    let x_high = (*sizes.last().unwrap() as f64).log10();
    let x =
        |n: f64| margin + (n.log10() - x_low) / (x_high - x_low).max(1.0) * (width - 2.0 * margin);
    let y = |ns: f64| {
        height - margin - (ns.log10() - low) / (high - low).max(1.0) * (height - 2.0 * margin)
    };
    let mut svg = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{width}\" height=\"{height}\" font-family=\"sans-serif\" font-size=\"12\">\n\
         <rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n\
         <text x=\"{}\" y=\"20\" text-anchor=\"middle\">$push of one buyer: median time against the array's length (log-log)</text>\n",
        width / 2.0
    );
    for exponent in (low as i64)..=(high as i64) {
        let ns = 10f64.powi(exponent as i32);
        let _ = writeln!(
            svg,
            "<line x1=\"{margin}\" x2=\"{right}\" y1=\"{line:.1}\" y2=\"{line:.1}\" stroke=\"#ddd\"/><text x=\"{label_x}\" y=\"{label_y:.1}\" text-anchor=\"end\">{label}</text>",
            right = width - margin,
            line = y(ns),
            label_x = margin - 5.0,
            label_y = y(ns) + 4.0,
            label = format_duration(ns)
        );
    }
    for &n in sizes {
        let _ = writeln!(
            svg,
            "<text x=\"{:.1}\" y=\"{}\" text-anchor=\"middle\">{n}</text>",
            x(n as f64),
            height - margin + 18.0
        );
    }
    for (index, (name, colour, values)) in series.iter().enumerate() {
        let points: Vec<String> = sizes
            .iter()
            .zip(values)
            .filter(|(_, value)| value.is_finite() && **value > 0.0)
            .map(|(&n, &value)| format!("{:.1},{:.1}", x(n as f64), y(value)))
            .collect();
        let _ = writeln!(
            svg,
            "<polyline fill=\"none\" stroke=\"{colour}\" stroke-width=\"2\" points=\"{}\"/>",
            points.join(" ")
        );
        for point in &points {
            let (px, py) = point.split_once(',').unwrap();
            let _ = writeln!(
                svg,
                "<circle cx=\"{px}\" cy=\"{py}\" r=\"3\" fill=\"{colour}\"/>"
            );
        }
        let _ = writeln!(
            svg,
            "<text x=\"{}\" y=\"{}\" fill=\"{colour}\">{name}</text>",
            margin + 10.0,
            margin + 15.0 * index as f64
        );
    }
    let _ = writeln!(
        svg,
        "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">buyers already in the book</text>\n</svg>",
        width / 2.0,
        height - 15.0
    );
    svg
}

#[allow(clippy::too_many_lines)]
fn main() {
    let target_dir = std::env::var_os("CARGO_TARGET_DIR").map_or_else(
        || Path::new(env!("CARGO_MANIFEST_DIR")).join("../target"),
        PathBuf::from,
    );
    let criterion_output = target_dir.join("criterion-patterns");
    let mut criterion = Criterion::default()
        .sample_size(10)
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_secs(2))
        .output_directory(&criterion_output)
        .configure_from_args();

    let workload = workload();
    let pattern = spillway_engine(true, &workload);
    let naive = spillway_engine(false, &workload);
    let (sqlite, _sqlite_dir) = sqlite_engine(&workload);
    let typical = workload.typical_book;

    let mut group = criterion.benchmark_group("typical_book");
    group.bench_function("pattern", |b| {
        b.iter(|| {
            black_box(
                pattern
                    .books
                    .find_one(doc! { "_id": typical })
                    .run()
                    .unwrap(),
            )
        });
    });
    group.bench_function("naive", |b| {
        b.iter(|| black_box(naive.books.find_one(doc! { "_id": typical }).run().unwrap()));
    });
    group.bench_function("sqlite", |b| {
        b.iter(|| black_box(sqlite_book(&sqlite, typical, i64::MAX)));
    });
    group.finish();

    // The hot path in MongoDB's own syntax: the first 50 buyers with `$slice`, answered from
    // the main document; `pattern_stored` is the stored layout read whole (the main document,
    // what a default read returned before reads became logical).
    let first_page = doc! { "customers_purchased": { "$slice": PAGE as i64 } };
    let mut group = criterion.benchmark_group("viral_page");
    group.bench_function("pattern", |b| {
        b.iter(|| {
            black_box(
                pattern
                    .books
                    .find_one(doc! { "_id": VIRAL_ID })
                    .projection(first_page.clone())
                    .run()
                    .unwrap(),
            )
        });
    });
    group.bench_function("pattern_stored", |b| {
        b.iter(|| {
            black_box(
                pattern
                    .books
                    .find_one(doc! { "_id": VIRAL_ID })
                    .stored(true)
                    .run()
                    .unwrap(),
            )
        });
    });
    group.bench_function("naive", |b| {
        b.iter(|| {
            black_box(
                naive
                    .books
                    .find_one(doc! { "_id": VIRAL_ID })
                    .projection(first_page.clone())
                    .run()
                    .unwrap(),
            )
        });
    });
    group.bench_function("sqlite", |b| {
        b.iter(|| black_box(sqlite_book(&sqlite, VIRAL_ID, PAGE as i64)));
    });
    group.finish();

    // A page deep in the viral book: `{$slice: [5000, 50]}`, one or two buckets read.
    let deep_page =
        doc! { "customers_purchased": { "$slice": [DEEP_PAGE_SKIP as i64, PAGE as i64] } };
    let mut group = criterion.benchmark_group("viral_page_deep");
    group.bench_function("pattern", |b| {
        b.iter(|| {
            black_box(
                pattern
                    .books
                    .find_one(doc! { "_id": VIRAL_ID })
                    .projection(deep_page.clone())
                    .run()
                    .unwrap(),
            )
        });
    });
    group.bench_function("naive", |b| {
        b.iter(|| {
            black_box(
                naive
                    .books
                    .find_one(doc! { "_id": VIRAL_ID })
                    .projection(deep_page.clone())
                    .run()
                    .unwrap(),
            )
        });
    });
    group.bench_function("sqlite", |b| {
        b.iter(|| black_box(sqlite_book_page(&sqlite, VIRAL_ID, DEEP_PAGE_SKIP, PAGE)));
    });
    group.finish();

    // A sort on the managed array over every book (MongoDB's array sort key: the smallest
    // buyer), the top 20 titles.
    let sorted_titles = |books: &Collection<Document>| -> Vec<Document> {
        books
            .find(doc! {})
            .sort(doc! { "customers_purchased": 1, "_id": 1 })
            .projection(doc! { "title": 1 })
            .limit(20)
            .run()
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap()
    };
    assert_eq!(sorted_titles(&pattern.books), sorted_titles(&naive.books));
    let mut group = criterion.benchmark_group("sort_by_buyers");
    group.bench_function("pattern", |b| {
        b.iter(|| black_box(sorted_titles(&pattern.books)));
    });
    group.bench_function("naive", |b| {
        b.iter(|| black_box(sorted_titles(&naive.books)));
    });
    group.finish();

    let mut group = criterion.benchmark_group("viral_full");
    group.bench_function("pattern", |b| {
        b.iter(|| {
            black_box(
                pattern
                    .books
                    .find_one(doc! { "_id": VIRAL_ID })
                    .run()
                    .unwrap(),
            )
        });
    });
    group.bench_function("naive", |b| {
        b.iter(|| {
            black_box(
                naive
                    .books
                    .find_one(doc! { "_id": VIRAL_ID })
                    .run()
                    .unwrap(),
            )
        });
    });
    group.bench_function("sqlite", |b| {
        b.iter(|| black_box(sqlite_book(&sqlite, VIRAL_ID, i64::MAX)));
    });
    group.finish();

    // `$unwind` + `$group` over the viral book: how many times each user bought it.
    let buyer_counts = |books: &Collection<Document>| -> Vec<Document> {
        books
            .aggregate([
                doc! { "$match": { "_id": VIRAL_ID } },
                doc! { "$unwind": "$customers_purchased" },
                doc! { "$group": { "_id": "$customers_purchased", "times": { "$sum": 1 } } },
            ])
            .run()
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap()
    };
    let sqlite_buyer_counts = |conn: &Connection| -> Vec<(String, i64)> {
        conn.prepare_cached("SELECT user, count(*) FROM buyers WHERE book_id = ?1 GROUP BY user")
            .unwrap()
            .query_map(params![VIRAL_ID], |row| Ok((row.get(0)?, row.get(1)?)))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap()
    };
    assert_eq!(
        buyer_counts(&pattern.books).len(),
        buyer_counts(&naive.books).len()
    );
    assert_eq!(
        buyer_counts(&pattern.books).len(),
        sqlite_buyer_counts(&sqlite).len()
    );
    let mut group = criterion.benchmark_group("viral_unwind_group");
    group.bench_function("pattern", |b| {
        b.iter(|| black_box(buyer_counts(&pattern.books)));
    });
    group.bench_function("naive", |b| {
        b.iter(|| black_box(buyer_counts(&naive.books)));
    });
    group.bench_function("sqlite", |b| {
        b.iter(|| black_box(sqlite_buyer_counts(&sqlite)));
    });
    group.finish();

    let newest_first = |product: &Document, skip: usize| -> Vec<Bson> {
        let reviews = product.get_array("reviews").unwrap();
        reviews
            .iter()
            .rev()
            .skip(skip)
            .take(REVIEWS_PER_PAGE)
            .cloned()
            .collect()
    };
    // The subset's hot path in MongoDB's syntax: the logical array is newest first, and its
    // first page is the one the product embeds.
    let first_reviews = doc! { "reviews": { "$slice": REVIEWS_PER_PAGE as i64 } };
    let page = pattern
        .products
        .find_one(doc! { "_id": BIG_PRODUCT_ID })
        .projection(first_reviews.clone())
        .run()
        .unwrap()
        .unwrap();
    let whole = naive
        .products
        .find_one(doc! { "_id": BIG_PRODUCT_ID })
        .run()
        .unwrap()
        .unwrap();
    assert_eq!(
        page.get_array("reviews").unwrap(),
        &newest_first(&whole, 0),
        "the first page is the newest reviews"
    );
    let mut group = criterion.benchmark_group("product_page");
    group.bench_function("pattern", |b| {
        b.iter(|| {
            black_box(
                pattern
                    .products
                    .find_one(doc! { "_id": BIG_PRODUCT_ID })
                    .projection(first_reviews.clone())
                    .run()
                    .unwrap(),
            )
        });
    });
    group.bench_function("naive", |b| {
        b.iter(|| {
            let product = naive
                .products
                .find_one(doc! { "_id": BIG_PRODUCT_ID })
                .run()
                .unwrap()
                .unwrap();
            black_box(newest_first(&product, 0))
        });
    });
    group.bench_function("sqlite", |b| {
        b.iter(|| black_box(sqlite_reviews(&sqlite, BIG_PRODUCT_ID, 0, REVIEWS_PER_PAGE)));
    });
    group.finish();

    let page_skip = (REVIEW_PAGE - 1) * REVIEWS_PER_PAGE;
    let mut group = criterion.benchmark_group("review_page_50");
    group.bench_function("pattern", |b| {
        b.iter(|| {
            black_box(
                pattern
                    .products
                    .array_page(BIG_PRODUCT_ID, "reviews", page_skip, REVIEWS_PER_PAGE)
                    .unwrap(),
            )
        });
    });
    group.bench_function("naive", |b| {
        b.iter(|| {
            let product = naive
                .products
                .find_one(doc! { "_id": BIG_PRODUCT_ID })
                .run()
                .unwrap()
                .unwrap();
            black_box(newest_first(&product, page_skip))
        });
    });
    group.bench_function("sqlite", |b| {
        b.iter(|| {
            black_box(sqlite_reviews(
                &sqlite,
                BIG_PRODUCT_ID,
                page_skip,
                REVIEWS_PER_PAGE,
            ))
        });
    });
    group.finish();

    let ids_of = |books: &Collection<Document>| -> Vec<Bson> {
        books
            .find(doc! { "customers_purchased": "u0" })
            .projection(doc! { "_id": 1 })
            .run()
            .unwrap()
            .map(|book| book.unwrap().get("_id").cloned().unwrap())
            .collect()
    };
    let mut group = criterion.benchmark_group("books_of_user");
    group.bench_function("pattern", |b| b.iter(|| black_box(ids_of(&pattern.books))));
    group.bench_function("naive", |b| b.iter(|| black_box(ids_of(&naive.books))));
    group.bench_function("sqlite", |b| {
        b.iter(|| black_box(sqlite_books_of_user(&sqlite, "u0")));
    });
    group.finish();

    // The same query with a multikey index on the buyers: the pattern database answers it
    // from its index and the mirrored index of the overflow buckets (PATTERN_UNION). The
    // indexes are dropped again before the pushes, which the other rows measure without.
    for engine in [&pattern, &naive] {
        engine
            .books
            .create_index(
                IndexModel::builder()
                    .keys(doc! { "customers_purchased": 1 })
                    .build(),
            )
            .run()
            .unwrap();
    }
    let mut group = criterion.benchmark_group("books_of_user_indexed");
    group.bench_function("pattern", |b| b.iter(|| black_box(ids_of(&pattern.books))));
    group.bench_function("naive", |b| b.iter(|| black_box(ids_of(&naive.books))));
    group.bench_function("sqlite", |b| {
        b.iter(|| black_box(sqlite_books_of_user(&sqlite, "u0")));
    });
    group.finish();
    for engine in [&pattern, &naive] {
        engine
            .books
            .drop_index("customers_purchased_1")
            .run()
            .unwrap();
    }
    pattern
        .db
        .collection::<Document>("extra_books")
        .drop_index("customers_purchased_extra_1")
        .run()
        .unwrap();

    // Pushes last: they grow the push targets, not the books the reads use. Each group starts
    // from checkpointed databases and a `sync()`. The index builds above, and each group's
    // naive pushes (megabytes of log: the whole growing document per push), write enough log
    // to start a checkpoint in the background, and leave dirty pages for the kernel to write
    // back, which competed with the next pushes for the disk (push_10 measured 122-141 us
    // against 105-114 us for the other groups after the index builds; push_1000 123 us
    // against 102-107 us after push_10's naive pushes): the checkpoints and the sync are
    // taken here, outside the measurements, so that the pushes measure pushes.
    let mut push_bytes: Vec<[f64; 3]> = Vec::new();
    let mut alternating: Vec<[f64; 3]> = Vec::new();
    for &n in &workload.push_sizes {
        for engine in [&pattern, &naive] {
            engine.db.checkpoint().unwrap();
        }
        rustix::fs::sync();
        let id = PUSH_ID_BASE + n as i64;
        let naive_ok = !naive.refused.contains(&n);
        let mut group = criterion.benchmark_group(format!("push_{n}"));
        // The two engines compared run back to back; the naive pushes, which write the whole
        // growing document each time, run last.
        group.bench_function("pattern", |b| b.iter(|| spillway_push(&pattern.books, id)));
        group.bench_function("sqlite", |b| b.iter(|| sqlite_push(&sqlite, id, "u1")));
        if naive_ok {
            group.bench_function("naive", |b| b.iter(|| spillway_push(&naive.books, id)));
        }
        group.finish();
        let (pattern_time, sqlite_time) = alternating_pushes(
            || spillway_push(&pattern.books, id),
            || sqlite_push(&sqlite, id, "u1"),
        );
        alternating.push([pattern_time, f64::NAN, sqlite_time]);
        push_bytes.push([
            bytes_per_push(|| spillway_push(&pattern.books, id)),
            if naive_ok {
                bytes_per_push(|| spillway_push(&naive.books, id))
            } else {
                f64::NAN
            },
            bytes_per_push(|| sqlite_push(&sqlite, id, "u1")),
        ]);
    }
    criterion.final_summary();

    let median = |group: &str, function: &str| {
        criterion_median(&criterion_output, group, function).unwrap_or(f64::NAN)
    };
    let engines = |group: &str| {
        [
            median(group, "pattern"),
            median(group, "naive"),
            median(group, "sqlite"),
        ]
    };
    let mut table = String::new();
    let _ = writeln!(
        table,
        "| operation | Spillway + pattern | Spillway naive | SQLite | naive / pattern | SQLite / pattern |\n|---|---|---|---|---|---|"
    );
    let mut row = |name: &str, values: [f64; 3], bytes: bool| {
        let format = |value: f64| {
            if bytes {
                format_bytes(value)
            } else {
                format_duration(value)
            }
        };
        let _ = writeln!(
            table,
            "| {name} | {} | {} | {} | {} | {} |",
            format(values[0]),
            format(values[1]),
            format(values[2]),
            ratio(values[1], values[0]),
            ratio(values[2], values[0]),
        );
    };
    row("(1) read a typical book", engines("typical_book"), false);
    row(
        "(2) viral book's first 50 buyers (`$slice: 50` / the same / LIMIT 50)",
        engines("viral_page"),
        false,
    );
    row(
        "(2) viral book's buyers 5,000..5,050 (`$slice: [5000, 50]` / the same / OFFSET)",
        engines("viral_page_deep"),
        false,
    );
    row(
        "(2) viral book's stored layout, read whole (`stored(true)`)",
        [median("viral_page", "pattern_stored"), f64::NAN, f64::NAN],
        false,
    );
    let mut push_times = Vec::new();
    for &n in &workload.push_sizes {
        let values = engines(&format!("push_{n}"));
        push_times.push(values);
        row(&format!("(3) $push one buyer, book of {n}"), values, false);
    }
    for (index, &n) in workload.push_sizes.iter().enumerate() {
        row(
            &format!(
                "(3) the same, {ALTERNATING_ROUNDS} rounds of {ALTERNATING_PUSHES} pushes alternating with SQLite's (median round), book of {n}"
            ),
            alternating[index],
            false,
        );
    }
    for (index, &n) in workload.push_sizes.iter().enumerate() {
        row(
            &format!("(4) bytes written per pushed buyer, book of {n}"),
            push_bytes[index],
            true,
        );
    }
    row(
        "(5) full read of the viral book (default read / one document / all rows)",
        engines("viral_full"),
        false,
    );
    row(
        "(5) `$unwind` + `$group` over the viral book's buyers",
        engines("viral_unwind_group"),
        false,
    );
    row(
        "(6) big product's page, 10 newest reviews",
        engines("product_page"),
        false,
    );
    row(
        "(6) page 50 of its reviews",
        engines("review_page_50"),
        false,
    );
    row(
        "(7) books bought by user u0",
        engines("books_of_user"),
        false,
    );
    row(
        "(7) the same with a multikey index on the buyers",
        engines("books_of_user_indexed"),
        false,
    );
    row(
        "(8) sort every book by its buyers, top 20 titles",
        [
            median("sort_by_buyers", "pattern"),
            median("sort_by_buyers", "naive"),
            f64::NAN,
        ],
        false,
    );
    let books = workload.books.len();
    let viral = workload.books[0].1.len();
    let big_product = workload.products[0].1.len();
    let _ = writeln!(
        table,
        "\n{books} books (viral: {viral} buyers), {} products (big: {big_product} reviews); naive push targets refused (over 16 MiB): {:?}",
        workload.products.len(),
        naive.refused
    );
    let first = 0;
    let last = workload.push_sizes.len() - 1;
    let _ = writeln!(
        table,
        "\nGoals: typical read pattern/naive = {:.2} (goal <= 1.10); push at {} / push at 10 = {:.2} (goal <= 2), naive {:.1}; bytes per push at {} / at 10 = {:.2} (goal <= 2), naive {:.1}; full read / one-document read = {:.2} (goal <= 1.25); `$slice: 50` / stored read = {:.2} (goal <= 1.11); SQLite first 50 / `$slice: 50` = {:.2} (goal >= 2); SQLite deep page / `$slice: [5000, 50]` = {:.2} (goal >= 1); SQLite all rows / full read = {:.2} (goal > 1); sort pattern / naive = {:.2} (goal <= 1.5)",
        median("typical_book", "pattern") / median("typical_book", "naive"),
        workload.push_sizes[last],
        push_times[last][0] / push_times[first][0],
        push_times[last][1] / push_times[first][1],
        workload.push_sizes[last],
        push_bytes[last][0] / push_bytes[first][0],
        push_bytes[last][1] / push_bytes[first][1],
        median("viral_full", "pattern") / median("viral_full", "naive"),
        median("viral_page", "pattern") / median("viral_page", "pattern_stored"),
        median("viral_page", "sqlite") / median("viral_page", "pattern"),
        median("viral_page_deep", "sqlite") / median("viral_page_deep", "pattern"),
        median("viral_full", "sqlite") / median("viral_full", "pattern"),
        median("sort_by_buyers", "pattern") / median("sort_by_buyers", "naive"),
    );
    println!("\n{table}");
    std::fs::write(target_dir.join("patterns-bench.md"), &table).unwrap();
    let svg = push_plot(
        &workload.push_sizes,
        &[
            (
                "Spillway + outlier pattern",
                "#1f77b4",
                push_times.iter().map(|values| values[0]).collect(),
            ),
            (
                "Spillway naive (one growing document)",
                "#d62728",
                push_times.iter().map(|values| values[1]).collect(),
            ),
            (
                "SQLite child table",
                "#2ca02c",
                push_times.iter().map(|values| values[2]).collect(),
            ),
        ],
    );
    std::fs::write(target_dir.join("patterns-push.svg"), svg).unwrap();
}
