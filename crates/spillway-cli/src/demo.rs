//! `spillway demo`: the first five minutes.
//!
//! Builds the seeds' two scenarios in an embedded database (the outlier pattern on
//! `sales.customers_purchased`, the subset pattern on `products.reviews`), prints the stored
//! documents the way the seeds print them, makes one book go viral, and times the same
//! operations on a collection with the pattern and one without, there and then. Every figure
//! is measured by this run; nothing is canned.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use anyhow::{Context, Result, bail};
use indicatif::{ProgressBar, ProgressStyle};
use spillway::bson::{Bson, DateTime, Document, doc, oid::ObjectId};
use spillway::{Database, DatabaseOptions, Durability, Pattern};
use spillway_doc::shell::to_shell_string;

/// Pushes the viral book receives by default, in each of the two collections.
pub const DEFAULT_PUSHES: usize = 5_000;
/// Typical books besides the viral one.
const TYPICAL_BOOKS: i32 = 500;
/// Pushes timed at the end of the viral run (the push cost at n ≈ `pushes`).
const TIMED_PUSHES: usize = 200;
/// Rounds of timed reads; the designs alternate and the fastest round counts, so that
/// neither design pays for warming the cache.
const READ_ROUNDS: usize = 5;

/// Runs the demo in `dir` (default: a fresh directory under the current one).
///
/// # Errors
/// When the directory exists and is not empty, or a database operation fails.
pub fn run(dir: Option<PathBuf>, pushes: usize, out: &mut dyn std::io::Write) -> Result<()> {
    if pushes < 2 * TIMED_PUSHES {
        bail!("--pushes must be at least {}", 2 * TIMED_PUSHES);
    }
    let dir = dir.unwrap_or_else(|| {
        let stamp = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |elapsed| elapsed.as_secs());
        PathBuf::from(format!("spillway-demo-{stamp}"))
    });
    check_fresh(&dir)?;
    let started = Instant::now();
    // The demo measures the engine, not the disk's fsync latency: commits are left to the
    // operating system (Durability::OsBuffered). The default is fsync on every commit.
    let options = DatabaseOptions::default().durability(Durability::OsBuffered);
    let db = Database::open_with(&dir, &options)
        .with_context(|| format!("opening a database in {}", dir.display()))?;
    writeln!(
        out,
        "Spillway demo: an embedded database in {}",
        dir.display()
    )?;
    writeln!(
        out,
        "(commits are OS-buffered for this demo; the default fsyncs every commit)\n"
    )?;
    outlier_seed(&db, out)?;
    subset_seed(&db, out)?;
    let figures = viral(&db, pushes, out)?;
    print_table(&figures, out)?;
    let violations = db.verify_patterns()?;
    writeln!(
        out,
        "verify: {} invariant violation(s) across {} policies",
        violations.len(),
        db.patterns().len()
    )?;
    for violation in &violations {
        writeln!(out, "  {violation}")?;
    }
    writeln!(
        out,
        "\nDone in {:.1} s. Explore it: spillway shell {}",
        started.elapsed().as_secs_f64(),
        dir.display()
    )?;
    let name = spillway::command::embedded_database_of(Some(&dir));
    writeln!(
        out,
        "or over the wire: spillway serve {}, then `use {}` in mongosh",
        dir.display(),
        name.name()
    )?;
    if !violations.is_empty() {
        bail!("verify found {} violation(s)", violations.len());
    }
    Ok(())
}

fn check_fresh(dir: &Path) -> Result<()> {
    if dir.exists()
        && std::fs::read_dir(dir)
            .with_context(|| format!("reading {}", dir.display()))?
            .next()
            .is_some()
    {
        bail!(
            "{} exists and is not empty; the demo builds a fresh database (give another directory)",
            dir.display()
        );
    }
    Ok(())
}

/// Prints a value as the seeds do: long arrays cut to their first three elements, `...` and
/// the last one.
fn abbreviated(value: &Bson, indent: usize) -> String {
    let pad = "  ".repeat(indent);
    match value {
        Bson::Document(document) => {
            let mut text = String::from("{\n");
            for (key, value) in document {
                let _ = writeln!(text, "{pad}  {key}: {},", abbreviated(value, indent + 1));
            }
            text.push_str(&pad);
            text.push('}');
            text
        }
        Bson::Array(items) if items.len() > 6 => {
            let shown: Vec<String> = items[..3]
                .iter()
                .map(|item| abbreviated(item, indent + 1))
                .collect();
            format!(
                "[ {}, ... {} ]  ({} elements)",
                shown.join(", "),
                abbreviated(&items[items.len() - 1], indent + 1),
                items.len()
            )
        }
        Bson::Array(items) => {
            let shown: Vec<String> = items
                .iter()
                .map(|item| abbreviated(item, indent + 1))
                .collect();
            format!("[ {} ]", shown.join(", "))
        }
        other => to_shell_string(other),
    }
}

fn buyers(range: std::ops::Range<usize>) -> Vec<Bson> {
    range.map(|n| Bson::String(format!("user{n:02}"))).collect()
}

fn outlier_seed(db: &Database, out: &mut dyn std::io::Write) -> Result<()> {
    writeln!(
        out,
        "== 1. The outlier pattern (seeds/outlier-pattern.txt)\n\n\
         db.set_pattern(Pattern::outlier(\"sales\", \"customers_purchased\")\n\
         \x20   .threshold(50).overflow_collection(\"extra_sales\").link_field(\"book_id\")\n\
         \x20   .flag_field(\"has_extras\").unbounded_buckets())   // the seed's exact layout\n"
    )?;
    db.create_collection("sales").run()?;
    db.set_pattern(
        Pattern::outlier("sales", "customers_purchased")
            .threshold(50)
            .overflow_collection("extra_sales")
            .link_field("book_id")
            .flag_field("has_extras")
            .unbounded_buckets(),
    )?;
    let sales = db.collection::<Document>("sales");
    sales
        .insert_one(doc! {
            "_id": 1, "title": "Invisible Cities", "year": 1972, "author": "Italo Calvino",
            "customers_purchased": ["user00", "user01", "user02"],
        })
        .run()?;
    sales
        .insert_one(doc! {
            "_id": 2, "title": "The Wooden Amulet", "year": 2023, "author": "Lesley Moreno",
            "customers_purchased": buyers(0..1000),
        })
        .run()?;
    writeln!(
        out,
        "Inserted two books with plain insert_one: 3 buyers and 1,000 buyers. Every read returns\n\
         them whole, as a plain collection would; stored (the namespace system.stored.sales):\n"
    )?;
    for id in [1, 2] {
        let stored = sales
            .find_one(doc! { "_id": id })
            .stored(true)
            .run()?
            .context("the book was just inserted")?;
        writeln!(
            out,
            "db['system.stored.sales'].findOne({{_id: {id}}})\n{}\n",
            abbreviated(&Bson::Document(stored), 0)
        )?;
    }
    let extras = db
        .collection::<Document>("extra_sales")
        .find(doc! { "book_id": 2 })
        .projection(doc! { "_id": 0 })
        .run()?;
    for extra in extras {
        writeln!(
            out,
            "db.extra_sales.find({{book_id: 2}})\n{}\n",
            abbreviated(&Bson::Document(extra?), 0)
        )?;
    }
    let length = sales.array_len(2, "customers_purchased")?.unwrap_or(0);
    let found = sales
        .count_documents(doc! { "customers_purchased": "user777" })
        .run()?;
    writeln!(
        out,
        "Logical view: customers_purchased has {length} elements; \
         {{customers_purchased: \"user777\"}} matches {found} book (user777 sits in extra_sales).\n"
    )?;
    Ok(())
}

fn review(id: i32, author: &str, text: &str, date: DateTime) -> Document {
    doc! {
        "review_id": id,
        "review_author": author,
        "review_text": text,
        "published_date": date,
    }
}

fn subset_seed(db: &Database, out: &mut dyn std::io::Write) -> Result<()> {
    writeln!(
        out,
        "== 2. The subset pattern (seeds/subset-pattern.txt)\n\n\
         db.set_pattern(Pattern::subset(\"products\", \"reviews\").keep(10)\n\
         \x20   .sort_by(doc! {{ \"published_date\": -1 }}).archive_collection(\"reviews\")\n\
         \x20   .link_field(\"product_id\"))\n"
    )?;
    db.create_collection("products").run()?;
    db.set_pattern(
        Pattern::subset("products", "reviews")
            .keep(10)
            .sort_by(doc! { "published_date": -1 })
            .archive_collection("reviews")
            .link_field("product_id"),
    )?;
    let newest = DateTime::builder()
        .year(2019)
        .month(2)
        .day(18)
        .build()
        .context("a valid date")?;
    let day = 86_400_000_i64;
    let mut reviews = Vec::new();
    for id in (1..=786).rev() {
        let (author, text) = match id {
            786 => ("Kristina", "This is indeed an amazing widget."),
            785 => ("Trina", "Very nice product, slow shipping."),
            776 => ("Pablo", "Amazing!"),
            1 => ("Hans", "Meh, it's ok."),
            _ => ("Reviewer", "Does what it says."),
        };
        let date = DateTime::from_millis(newest.timestamp_millis() - i64::from(786 - id) * day);
        reviews.push(review(id, author, text, date));
    }
    let product_id = ObjectId::parse_str("507f1f77bcf86cd799439011").context("a valid id")?;
    let products = db.collection::<Document>("products");
    products
        .insert_one(doc! {
            "_id": product_id,
            "name": "Super Widget",
            "description": "This is the most useful item in your toolbox.",
            "price": { "value": Bson::Decimal128("119.99".parse().context("a decimal")?), "currency": "USD" },
            "reviews": reviews,
        })
        .run()?;
    let stored = products
        .find_one(doc! { "_id": product_id })
        .stored(true)
        .run()?
        .context("the product was just inserted")?;
    writeln!(
        out,
        "Inserted one product with 786 reviews. Stored:\n\ndb['system.stored.products'].findOne()\n{}\n",
        abbreviated(&Bson::Document(stored), 0)
    )?;
    let archive = db.collection::<Document>("reviews");
    let hans = archive
        .find_one(doc! { "review_id": 1 })
        .projection(doc! { "_id": 0 })
        .run()?
        .context("review 1 is archived")?;
    writeln!(
        out,
        "db.reviews.countDocuments({{}}) = {}\ndb.reviews.findOne({{review_id: 1}})\n{}\n",
        archive.count_documents(doc! {}).run()?,
        abbreviated(&Bson::Document(hans), 0)
    )?;
    archive.delete_one(doc! { "review_id": 786 }).run()?;
    let stored = products
        .find_one(doc! { "_id": product_id })
        .stored(true)
        .run()?
        .context("the product exists")?;
    let embedded = stored.get_array("reviews").map_or(0, Vec::len);
    let first = stored
        .get_array("reviews")
        .ok()
        .and_then(|reviews| reviews.first())
        .and_then(Bson::as_document)
        .and_then(|review| review.get_i32("review_id").ok());
    writeln!(
        out,
        "Deleted review 786 from the reviews collection directly: the product still embeds {embedded} \
         reviews, now starting with review {}; the subset was refilled from the archive.\n",
        first.map_or_else(|| "none".to_string(), |id| id.to_string())
    )?;
    let page = products
        .array_page(product_id, "reviews", 490, 10)?
        .unwrap_or_default();
    writeln!(
        out,
        "Page 50 of the reviews (10 per page, newest first) reads {} reviews from the archive, \
         review_id {} to {}.\n",
        page.len(),
        page.first()
            .and_then(Bson::as_document)
            .and_then(|review| review.get_i32("review_id").ok())
            .unwrap_or(0),
        page.last()
            .and_then(Bson::as_document)
            .and_then(|review| review.get_i32("review_id").ok())
            .unwrap_or(0)
    )?;
    Ok(())
}

/// What the viral run measured, per design.
struct Figures {
    viral_length: usize,
    typical_read: [Duration; 2],
    viral_read: [Duration; 2],
    push: [Duration; 2],
    bytes_per_push: [u64; 2],
    expanded_read: [Duration; 2],
    stored_size: [usize; 2],
}

/// The time per call of `operation` on each collection: rounds of `calls` calls, alternating
/// between the collections, the fastest round of each.
fn fastest_round(
    collections: &[spillway::Collection<Document>; 2],
    calls: u32,
    mut operation: impl FnMut(&spillway::Collection<Document>) -> Result<()>,
) -> Result<[Duration; 2]> {
    let mut fastest = [Duration::MAX; 2];
    for _ in 0..READ_ROUNDS {
        for (design, collection) in collections.iter().enumerate() {
            let started = Instant::now();
            for _ in 0..calls {
                operation(collection)?;
            }
            let per_call = started.elapsed() / calls;
            fastest[design] = fastest[design].min(per_call);
        }
    }
    Ok(fastest)
}

fn viral(db: &Database, pushes: usize, out: &mut dyn std::io::Write) -> Result<Figures> {
    writeln!(
        out,
        "== 3. One book goes viral\n\n\
         Two collections hold the same {TYPICAL_BOOKS} typical books (1 to 20 buyers each) and one \
         book that receives {pushes} buyers, one $push at a time:\n\
         \x20 books        with Pattern::outlier(\"books\", \"customers_purchased\") (threshold 50, buckets of 100)\n\
         \x20 books_naive  without a pattern: one unbounded array, as before the seed's advice\n"
    )?;
    db.create_collection("books").run()?;
    db.set_pattern(Pattern::outlier("books", "customers_purchased").link_field("book_id"))?;
    let names = ["books", "books_naive"];
    let collections = names.map(|name| db.collection::<Document>(name));
    let typical: Vec<Document> = (1..=TYPICAL_BOOKS)
        .map(|id| {
            let count = usize::try_from(1 + (id * 7919) % 20).unwrap_or(1);
            doc! {
                "_id": id,
                "title": format!("Book {id}"),
                "customers_purchased": buyers(0..count),
            }
        })
        .collect();
    for collection in &collections {
        collection.insert_many(typical.clone()).run()?;
        collection
            .insert_one(doc! { "_id": 0, "title": "The Viral Book", "customers_purchased": [] })
            .run()?;
    }
    let mut figures = Figures {
        viral_length: pushes,
        typical_read: [Duration::ZERO; 2],
        viral_read: [Duration::ZERO; 2],
        push: [Duration::ZERO; 2],
        bytes_per_push: [0; 2],
        expanded_read: [Duration::ZERO; 2],
        stored_size: [0; 2],
    };
    for (design, collection) in collections.iter().enumerate() {
        let bar = ProgressBar::new(pushes as u64);
        bar.set_style(
            ProgressStyle::with_template("{prefix:>12} [{bar:40}] {pos}/{len} pushes {elapsed}")
                .context("a valid progress template")?
                .progress_chars("=> "),
        );
        bar.set_prefix(names[design]);
        let push = |n: usize| -> Result<()> {
            collection
                .update_one(
                    doc! { "_id": 0 },
                    doc! { "$push": { "customers_purchased": format!("buyer{n:05}") } },
                )
                .run()?;
            Ok(())
        };
        for n in 0..pushes - TIMED_PUSHES {
            push(n)?;
            bar.inc(1);
        }
        let written_before = db.stats()?.written_bytes;
        let started = Instant::now();
        for n in pushes - TIMED_PUSHES..pushes {
            push(n)?;
            bar.inc(1);
        }
        figures.push[design] = started.elapsed() / TIMED_PUSHES as u32;
        figures.bytes_per_push[design] =
            (db.stats()?.written_bytes - written_before) / TIMED_PUSHES as u64;
        bar.finish();
    }
    figures.typical_read = fastest_round(&collections, 500, |collection| {
        collection.find_one(doc! { "_id": 17 }).run()?;
        Ok(())
    })?;
    // The hot path in MongoDB's own syntax: the page with the first 50 buyers.
    figures.viral_read = fastest_round(&collections, 50, |collection| {
        collection
            .find_one(doc! { "_id": 0 })
            .projection(doc! { "customers_purchased": { "$slice": 50 } })
            .run()?;
        Ok(())
    })?;
    figures.expanded_read = fastest_round(&collections, 10, |collection| {
        collection.find_one(doc! { "_id": 0 }).run()?;
        Ok(())
    })?;
    for (design, collection) in collections.iter().enumerate() {
        let stored = collection
            .find_one(doc! { "_id": 0 })
            .stored(true)
            .run()?
            .context("the viral book exists")?;
        figures.stored_size[design] = spillway::bson::serialize_to_vec(&stored)?.len();
        let logical = collection
            .find_one(doc! { "_id": 0 })
            .run()?
            .context("the viral book exists")?;
        let length = logical.get_array("customers_purchased").map_or(0, Vec::len);
        if length != pushes {
            bail!(
                "{}: the viral book's logical array has {length} elements, expected {pushes}",
                names[design]
            );
        }
    }
    writeln!(out)?;
    Ok(figures)
}

fn micros(duration: Duration) -> String {
    format!("{:.1} µs", duration.as_secs_f64() * 1e6)
}

fn ratio(naive: f64, pattern: f64) -> String {
    if pattern <= 0.0 {
        return "-".to_string();
    }
    format!("{:.1}x", naive / pattern)
}

fn print_table(figures: &Figures, out: &mut dyn std::io::Write) -> Result<()> {
    let rows = [
        (
            "typical book, find_one by _id".to_string(),
            micros(figures.typical_read[0]),
            micros(figures.typical_read[1]),
            ratio(
                figures.typical_read[1].as_secs_f64(),
                figures.typical_read[0].as_secs_f64(),
            ),
        ),
        (
            "viral book, first 50 buyers ($slice: 50)".to_string(),
            micros(figures.viral_read[0]),
            micros(figures.viral_read[1]),
            ratio(
                figures.viral_read[1].as_secs_f64(),
                figures.viral_read[0].as_secs_f64(),
            ),
        ),
        (
            format!("$push one buyer at n = {}", figures.viral_length),
            micros(figures.push[0]),
            micros(figures.push[1]),
            ratio(figures.push[1].as_secs_f64(), figures.push[0].as_secs_f64()),
        ),
        (
            "bytes written per push".to_string(),
            format!("{} B", figures.bytes_per_push[0]),
            format!("{} B", figures.bytes_per_push[1]),
            #[allow(clippy::cast_precision_loss)]
            ratio(
                figures.bytes_per_push[1] as f64,
                figures.bytes_per_push[0] as f64,
            ),
        ),
        (
            "viral book, stored main document".to_string(),
            format!("{} B", figures.stored_size[0]),
            format!("{} B", figures.stored_size[1]),
            #[allow(clippy::cast_precision_loss)]
            ratio(figures.stored_size[1] as f64, figures.stored_size[0] as f64),
        ),
        (
            "viral book, find_one (every buyer)".to_string(),
            micros(figures.expanded_read[0]),
            micros(figures.expanded_read[1]),
            ratio(
                figures.expanded_read[1].as_secs_f64(),
                figures.expanded_read[0].as_secs_f64(),
            ),
        ),
    ];
    writeln!(
        out,
        "{:<42} {:>14} {:>14} {:>10}",
        "operation", "with pattern", "without", "advantage"
    )?;
    writeln!(out, "{}", "-".repeat(83))?;
    for (operation, pattern, naive, advantage) in rows {
        writeln!(
            out,
            "{operation:<42} {pattern:>14} {naive:>14} {advantage:>10}"
        )?;
    }
    writeln!(
        out,
        "\nMeasured just now on this machine, in one process; numbers vary by machine and load.\n\
         \"advantage\" is without / with: above 1.0x the pattern is faster or smaller. A read of\n\
         the whole viral book is the pattern's cost: it gathers the buckets. Criterion figures:\n\
         `cargo xtask bench` (docs/benchmarks.md).\n"
    )?;
    Ok(())
}
