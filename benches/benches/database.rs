//! Database benchmarks: the `spillway` facade side by side with SQLite (two designs) and the
//! in-memory limit, on the same `sales`-like books and the same durability.
//!
//! Peers, each answering every operation with decoded `bson::Document`s:
//!
//! - `spillway`: a `Database` on disk with `Durability::SyncEveryCommit` (one `fdatasync` per
//!   commit) and a secondary index on `author`;
//! - `sqlite_json`: SQLite (bundled, through rusqlite), each book as JSON text in one column,
//!   with an index on `json_extract(doc, '$.author')`; results parsed back from JSON;
//! - `sqlite_relational`: SQLite, normalised: a `books` table (index on `author`) and a
//!   `purchases` child table keyed by (book, position); results assembled from a join;
//! - `hashmap`: `HashMap<i64, Document>` plus a `HashMap<author, Vec<id>>`: no storage, no
//!   durability, results cloned. The in-memory limit.
//!
//! Both SQLite designs run with `journal_mode=WAL` and `synchronous=FULL`, under which every
//! commit fsyncs the WAL: one fsync per commit, as for Spillway. Writes run last, so that the
//! documents they add do not change the data set of the reads.
//!
//! `SPILLWAY_BENCH_DOCUMENTS` sets the number of books (default 100,000). At the end a Markdown
//! table with ratios is printed and written to `$CARGO_TARGET_DIR/database-bench.md` (or
//! `target/database-bench.md`).

use std::collections::HashMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::Duration;

use bson::{Bson, Document, doc};
use criterion::Criterion;
use rusqlite::{Connection, params};
use spillway::{Collection, Database, DatabaseOptions, Durability, IndexModel};
use spillway_benches::{criterion_median, format_duration};

const PEERS: [&str; 4] = ["spillway", "sqlite_json", "sqlite_relational", "hashmap"];
const N_AUTHORS: i64 = 1000;
/// `pages` takes this many distinct values: the unindexed scan matches about 1 book in 900.
const N_PAGE_VALUES: i64 = 900;
const INSERT_BATCH: usize = 1000;

struct Rng(u64);

impl Rng {
    fn below(&mut self, bound: i64) -> i64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % bound as u64) as i64
    }
}

fn author(id: i64) -> String {
    format!("Author {:04}", (id * 31) % N_AUTHORS)
}

/// Book `id`, shaped like the outlier seed's `sales` documents (2 to 5 buyers).
fn book(id: i64) -> Document {
    let buyers: Vec<Bson> = (0..2 + id % 4)
        .map(|position| Bson::String(format!("user{:05}", (id * 7 + position * 7919) % 20_000)))
        .collect();
    doc! {
        "_id": id,
        "title": format!("The Book of {id}"),
        "author": author(id),
        "year": 1950 + id % 75,
        "price": 5.0 + (id % 5000) as f64 / 100.0,
        "pages": 100 + (id * 7919) % N_PAGE_VALUES,
        "in_stock": id % 3 != 0,
        "customers_purchased": buyers,
    }
}

// ---------------------------------------------------------------------------------------------
// SQLite, JSON design.

fn sqlite_open(path: &Path) -> Connection {
    let connection = Connection::open(path).unwrap();
    let mode: String = connection
        .query_row("PRAGMA journal_mode=WAL", [], |row| row.get(0))
        .unwrap();
    assert_eq!(mode, "wal");
    // FULL with WAL: every commit fsyncs the WAL. A 256 MiB page cache holds the whole data set,
    // as Spillway's map does.
    connection
        .execute_batch("PRAGMA synchronous=FULL; PRAGMA cache_size=-262144;")
        .unwrap();
    connection
}

const JSON_SCHEMA: &str = "
    CREATE TABLE books (id INTEGER PRIMARY KEY, doc TEXT NOT NULL);
    CREATE INDEX books_author ON books (json_extract(doc, '$.author'));";
const JSON_INSERT: &str = "INSERT INTO books (id, doc) VALUES (?1, ?2)";
const JSON_BY_ID: &str = "SELECT doc FROM books WHERE id = ?1";
const JSON_BY_AUTHOR: &str = "SELECT doc FROM books WHERE json_extract(doc, '$.author') = ?1";
const JSON_BY_PAGES: &str = "SELECT doc FROM books WHERE json_extract(doc, '$.pages') = ?1";
const JSON_GROUP_BY_AUTHOR: &str = "SELECT json_extract(doc, '$.author'), count(*), avg(json_extract(doc, '$.price')) FROM books GROUP BY 1";
const JSON_DISTINCT_BUYERS: &str = "SELECT DISTINCT buyer.value FROM books, json_each(books.doc, '$.customers_purchased') AS buyer";
const RELATIONAL_DISTINCT_BUYERS: &str = "SELECT DISTINCT customer FROM purchases";
const JSON_SET_PRICE: &str = "UPDATE books SET doc = json_set(doc, '$.price', ?1) WHERE id = ?2";

fn json_insert(connection: &Connection, document: &Document) {
    connection
        .prepare_cached(JSON_INSERT)
        .unwrap()
        .execute(params![
            document.get_i64("_id").unwrap(),
            serde_json::to_string(document).unwrap()
        ])
        .unwrap();
}

fn json_query(
    connection: &Connection,
    sql: &str,
    parameter: impl rusqlite::ToSql,
) -> Vec<Document> {
    let mut statement = connection.prepare_cached(sql).unwrap();
    let rows = statement
        .query_map([parameter], |row| row.get::<_, String>(0))
        .unwrap();
    rows.map(|text| serde_json::from_str::<Document>(&text.unwrap()).unwrap())
        .collect()
}

// ---------------------------------------------------------------------------------------------
// SQLite, relational design.

const RELATIONAL_SCHEMA: &str = "
    CREATE TABLE books (
        id INTEGER PRIMARY KEY, title TEXT NOT NULL, author TEXT NOT NULL, year INTEGER NOT NULL,
        price REAL NOT NULL, pages INTEGER NOT NULL, in_stock INTEGER NOT NULL);
    CREATE INDEX books_author ON books (author);
    CREATE TABLE purchases (
        book_id INTEGER NOT NULL REFERENCES books (id), position INTEGER NOT NULL,
        customer TEXT NOT NULL, PRIMARY KEY (book_id, position)) WITHOUT ROWID;";
const RELATIONAL_INSERT_BOOK: &str = "INSERT INTO books (id, title, author, year, price, pages, in_stock) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)";
const RELATIONAL_INSERT_PURCHASE: &str =
    "INSERT INTO purchases (book_id, position, customer) VALUES (?1, ?2, ?3)";
const RELATIONAL_SELECT: &str = "SELECT b.id, b.title, b.author, b.year, b.price, b.pages, b.in_stock, p.customer FROM books b LEFT JOIN purchases p ON p.book_id = b.id";
const RELATIONAL_GROUP_BY_AUTHOR: &str =
    "SELECT author, count(*), avg(price) FROM books GROUP BY author";
const RELATIONAL_SET_PRICE: &str = "UPDATE books SET price = ?1 WHERE id = ?2";

fn relational_insert(connection: &Connection, document: &Document) {
    let id = document.get_i64("_id").unwrap();
    connection
        .prepare_cached(RELATIONAL_INSERT_BOOK)
        .unwrap()
        .execute(params![
            id,
            document.get_str("title").unwrap(),
            document.get_str("author").unwrap(),
            document.get_i64("year").unwrap(),
            document.get_f64("price").unwrap(),
            document.get_i64("pages").unwrap(),
            document.get_bool("in_stock").unwrap(),
        ])
        .unwrap();
    let mut purchase = connection
        .prepare_cached(RELATIONAL_INSERT_PURCHASE)
        .unwrap();
    for (position, customer) in document
        .get_array("customers_purchased")
        .unwrap()
        .iter()
        .enumerate()
    {
        purchase
            .execute(params![id, position as i64, customer.as_str().unwrap()])
            .unwrap();
    }
}

/// Runs `RELATIONAL_SELECT` with `condition` and assembles one document per book.
fn relational_query(
    connection: &Connection,
    condition: &str,
    parameter: impl rusqlite::ToSql,
) -> Vec<Document> {
    let sql = format!("{RELATIONAL_SELECT} WHERE {condition} ORDER BY b.id, p.position");
    let mut statement = connection.prepare_cached(&sql).unwrap();
    let mut rows = statement.query([parameter]).unwrap();
    let mut documents: Vec<Document> = Vec::new();
    while let Some(row) = rows.next().unwrap() {
        let id: i64 = row.get(0).unwrap();
        let customer: Option<String> = row.get(7).unwrap();
        if documents
            .last()
            .is_none_or(|last| last.get_i64("_id").unwrap() != id)
        {
            documents.push(doc! {
                "_id": id,
                "title": row.get::<_, String>(1).unwrap(),
                "author": row.get::<_, String>(2).unwrap(),
                "year": row.get::<_, i64>(3).unwrap(),
                "price": row.get::<_, f64>(4).unwrap(),
                "pages": row.get::<_, i64>(5).unwrap(),
                "in_stock": row.get::<_, bool>(6).unwrap(),
                "customers_purchased": [],
            });
        }
        if let Some(customer) = customer {
            documents
                .last_mut()
                .unwrap()
                .get_array_mut("customers_purchased")
                .unwrap()
                .push(Bson::String(customer));
        }
    }
    documents
}

// ---------------------------------------------------------------------------------------------
// The in-memory limit.

#[derive(Default)]
struct Memory {
    documents: HashMap<i64, Document>,
    by_author: HashMap<String, Vec<i64>>,
}

impl Memory {
    fn insert(&mut self, document: Document) {
        let id = document.get_i64("_id").unwrap();
        self.by_author
            .entry(document.get_str("author").unwrap().to_string())
            .or_default()
            .push(id);
        self.documents.insert(id, document);
    }
}

// ---------------------------------------------------------------------------------------------

/// Every peer, loaded with the same books.
struct Peers {
    database: Database,
    spillway: Collection<Document>,
    json: Connection,
    relational: Connection,
    memory: Memory,
}

fn load(dir: &Path, n_documents: i64) -> Peers {
    let database = Database::open_with(
        dir.join("spillway"),
        &DatabaseOptions::default().durability(Durability::SyncEveryCommit),
    )
    .unwrap();
    let spillway = database.collection::<Document>("sales");
    spillway
        .create_index(IndexModel::builder().keys(doc! { "author": 1 }).build())
        .run()
        .unwrap();
    let mut json = sqlite_open(&dir.join("json.sqlite"));
    json.execute_batch(JSON_SCHEMA).unwrap();
    let mut relational = sqlite_open(&dir.join("relational.sqlite"));
    relational.execute_batch(RELATIONAL_SCHEMA).unwrap();
    let mut memory = Memory::default();
    let mut first = 0;
    while first < n_documents {
        let batch: Vec<Document> = (first..n_documents.min(first + INSERT_BATCH as i64))
            .map(book)
            .collect();
        spillway.insert_many(&batch).run().unwrap();
        let transaction = json.transaction().unwrap();
        for document in &batch {
            json_insert(&transaction, document);
        }
        transaction.commit().unwrap();
        let transaction = relational.transaction().unwrap();
        for document in &batch {
            relational_insert(&transaction, document);
        }
        transaction.commit().unwrap();
        for document in batch {
            memory.insert(document);
        }
        first += INSERT_BATCH as i64;
    }
    Peers {
        database,
        spillway,
        json,
        relational,
        memory,
    }
}

fn spillway_find(collection: &Collection<Document>, filter: Document) -> Vec<Document> {
    collection
        .find(filter)
        .run()
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap()
}

const GROUP_BY_AUTHOR: &str = "group by author";

fn spillway_group_by_author(collection: &Collection<Document>) -> Vec<Document> {
    collection
        .aggregate([doc! { "$group": {
            "_id": "$author",
            "books": { "$sum": 1 },
            "average_price": { "$avg": "$price" },
        } }])
        .run()
        .expect(GROUP_BY_AUTHOR)
        .collect::<Result<_, _>>()
        .expect(GROUP_BY_AUTHOR)
}

/// The SQLite `GROUP BY` answer, as the documents `$group` returns.
fn sqlite_group_by_author(connection: &Connection, sql: &str) -> Vec<Document> {
    let mut statement = connection.prepare_cached(sql).unwrap();
    let rows = statement
        .query_map([], |row| {
            Ok(doc! {
                "_id": row.get::<_, String>(0)?,
                "books": row.get::<_, i64>(1)?,
                "average_price": row.get::<_, f64>(2)?,
            })
        })
        .unwrap();
    rows.collect::<Result<_, _>>().unwrap()
}

/// The hand-written loop over the decoded documents: the in-memory limit.
/// The distinct buyers, as each SQLite design lists them (strings, in no particular order).
fn sqlite_distinct_buyers(connection: &Connection, sql: &str) -> Vec<String> {
    let mut statement = connection.prepare_cached(sql).unwrap();
    statement
        .query_map([], |row| row.get::<_, String>(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap()
}

fn memory_distinct_buyers(memory: &Memory) -> Vec<String> {
    let mut seen = std::collections::HashSet::new();
    let mut buyers = Vec::new();
    for document in memory.documents.values() {
        for buyer in document.get_array("customers_purchased").unwrap() {
            let buyer = buyer.as_str().unwrap();
            if seen.insert(buyer) {
                buyers.push(buyer.to_string());
            }
        }
    }
    buyers
}

fn memory_group_by_author(memory: &Memory) -> Vec<Document> {
    let mut groups: HashMap<&str, (i64, f64)> = HashMap::new();
    for document in memory.documents.values() {
        let entry = groups
            .entry(document.get_str("author").unwrap())
            .or_default();
        entry.0 += 1;
        entry.1 += document.get_f64("price").unwrap();
    }
    groups
        .into_iter()
        .map(|(author, (books, total))| {
            doc! { "_id": author, "books": books, "average_price": total / books as f64 }
        })
        .collect()
}

/// The same answers from every peer (up to field types and order), and the plans intended:
/// an index for the author query, a full scan for the pages query.
fn check_peers(peers: &Peers) {
    let ids = |documents: &[Document]| {
        // JSON numbers come back as int32 when they fit.
        let mut ids: Vec<i64> = documents
            .iter()
            .map(|document| match document.get("_id") {
                Some(Bson::Int32(id)) => i64::from(*id),
                Some(Bson::Int64(id)) => *id,
                other => panic!("unexpected _id {other:?}"),
            })
            .collect();
        ids.sort_unstable();
        ids
    };
    let author = author(7);
    let spillway = spillway_find(&peers.spillway, doc! { "author": &author });
    let json = json_query(&peers.json, JSON_BY_AUTHOR, &author);
    let relational = relational_query(&peers.relational, "b.author = ?1", &author);
    assert!(!spillway.is_empty());
    assert_eq!(ids(&spillway), ids(&json));
    assert_eq!(ids(&spillway), ids(&relational));
    assert_eq!(spillway.len(), peers.memory.by_author[&author].len());
    assert_eq!(
        spillway[0].get_array("customers_purchased").unwrap(),
        relational[0].get_array("customers_purchased").unwrap()
    );
    let spillway = spillway_find(&peers.spillway, doc! { "pages": 777 });
    let json = json_query(&peers.json, JSON_BY_PAGES, 777);
    let relational = relational_query(&peers.relational, "b.pages = ?1", 777);
    assert_eq!(ids(&spillway), ids(&json));
    assert_eq!(ids(&spillway), ids(&relational));
    let by_author = |groups: Vec<Document>| {
        let mut counts: Vec<(String, i64)> = groups
            .iter()
            .map(|group| {
                let books = match group.get("books") {
                    Some(Bson::Int32(n)) => i64::from(*n),
                    Some(Bson::Int64(n)) => *n,
                    other => panic!("unexpected count {other:?}"),
                };
                (group.get_str("_id").unwrap().to_string(), books)
            })
            .collect();
        counts.sort();
        counts
    };
    let groups = spillway_group_by_author(&peers.spillway);
    assert_eq!(groups.len(), N_AUTHORS as usize);
    assert_eq!(
        by_author(groups.clone()),
        by_author(sqlite_group_by_author(&peers.json, JSON_GROUP_BY_AUTHOR))
    );
    assert_eq!(
        by_author(groups),
        by_author(sqlite_group_by_author(
            &peers.relational,
            RELATIONAL_GROUP_BY_AUTHOR
        ))
    );
    assert_eq!(
        by_author(memory_group_by_author(&peers.memory)).len(),
        N_AUTHORS as usize
    );
    let explain = peers
        .spillway
        .find(doc! { "author": &author })
        .explain()
        .unwrap();
    let stage = explain
        .winning_plan
        .get_document("inputStage")
        .and_then(|input| input.get_str("stage"))
        .ok();
    assert_eq!(stage, Some("IXSCAN"), "{explain:?}");
    let plan: String = peers
        .json
        .query_row(
            &format!("EXPLAIN QUERY PLAN {JSON_BY_AUTHOR}"),
            [&author],
            |row| row.get(3),
        )
        .unwrap();
    assert!(plan.contains("USING INDEX books_author"), "{plan}");
    // Every peer lists the same distinct buyers.
    let sorted = |mut buyers: Vec<String>| {
        buyers.sort_unstable();
        buyers
    };
    let spillway_buyers: Vec<String> = peers
        .spillway
        .distinct("customers_purchased", doc! {})
        .run()
        .unwrap()
        .into_iter()
        .map(|buyer| buyer.as_str().unwrap().to_string())
        .collect();
    let spillway_buyers = sorted(spillway_buyers);
    assert_eq!(
        spillway_buyers,
        sorted(sqlite_distinct_buyers(&peers.json, JSON_DISTINCT_BUYERS))
    );
    assert_eq!(
        spillway_buyers,
        sorted(sqlite_distinct_buyers(
            &peers.relational,
            RELATIONAL_DISTINCT_BUYERS
        ))
    );
    assert_eq!(
        spillway_buyers,
        sorted(memory_distinct_buyers(&peers.memory))
    );
}

#[allow(clippy::too_many_lines)]
fn main() {
    let n_documents: i64 = std::env::var("SPILLWAY_BENCH_DOCUMENTS")
        .ok()
        .map_or(100_000, |v| {
            v.parse()
                .expect("SPILLWAY_BENCH_DOCUMENTS must be a number")
        });
    let target_dir = std::env::var_os("CARGO_TARGET_DIR").map_or_else(
        || Path::new(env!("CARGO_MANIFEST_DIR")).join("../target"),
        PathBuf::from,
    );
    let criterion_output = target_dir.join("criterion-database");
    let mut criterion = Criterion::default()
        .sample_size(10)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2))
        .output_directory(&criterion_output)
        .configure_from_args();
    let scratch =
        tempfile::tempdir_in(&target_dir).unwrap_or_else(|_| tempfile::tempdir().unwrap());
    let mut peers = load(scratch.path(), n_documents);
    check_peers(&peers);
    let Peers {
        database,
        spillway,
        json,
        relational,
        memory,
    } = &mut peers;

    // Reads: each peer draws the same sequence of keys.
    {
        let mut group = criterion.benchmark_group("find_one_by_id");
        let mut rng = Rng(0x5EED_0000_0000_0001);
        group.bench_function("spillway", |b| {
            b.iter(|| {
                spillway
                    .find_one(doc! { "_id": rng.below(n_documents) })
                    .run()
                    .unwrap()
                    .unwrap()
            });
        });
        let mut rng = Rng(0x5EED_0000_0000_0001);
        group.bench_function("sqlite_json", |b| {
            b.iter(|| {
                json_query(json, JSON_BY_ID, rng.below(n_documents))
                    .pop()
                    .unwrap()
            });
        });
        let mut rng = Rng(0x5EED_0000_0000_0001);
        group.bench_function("sqlite_relational", |b| {
            b.iter(|| {
                relational_query(relational, "b.id = ?1", rng.below(n_documents))
                    .pop()
                    .unwrap()
            });
        });
        let mut rng = Rng(0x5EED_0000_0000_0001);
        group.bench_function("hashmap", |b| {
            b.iter(|| memory.documents[&rng.below(n_documents)].clone());
        });
        group.finish();
    }
    {
        let mut group = criterion.benchmark_group("find_by_author_indexed");
        let mut rng = Rng(0x5EED_0000_0000_0002);
        group.bench_function("spillway", |b| {
            b.iter(|| spillway_find(spillway, doc! { "author": author(rng.below(N_AUTHORS)) }));
        });
        let mut rng = Rng(0x5EED_0000_0000_0002);
        group.bench_function("sqlite_json", |b| {
            b.iter(|| json_query(json, JSON_BY_AUTHOR, author(rng.below(N_AUTHORS))));
        });
        let mut rng = Rng(0x5EED_0000_0000_0002);
        group.bench_function("sqlite_relational", |b| {
            b.iter(|| relational_query(relational, "b.author = ?1", author(rng.below(N_AUTHORS))));
        });
        let mut rng = Rng(0x5EED_0000_0000_0002);
        group.bench_function("hashmap", |b| {
            b.iter(|| {
                memory.by_author[&author(rng.below(N_AUTHORS))]
                    .iter()
                    .map(|id| memory.documents[id].clone())
                    .collect::<Vec<_>>()
            });
        });
        group.finish();
    }
    {
        let mut group = criterion.benchmark_group("scan_unindexed_filter");
        let mut rng = Rng(0x5EED_0000_0000_0003);
        group.bench_function("spillway", |b| {
            b.iter(|| spillway_find(spillway, doc! { "pages": 100 + rng.below(N_PAGE_VALUES) }));
        });
        let mut rng = Rng(0x5EED_0000_0000_0003);
        group.bench_function("sqlite_json", |b| {
            b.iter(|| json_query(json, JSON_BY_PAGES, 100 + rng.below(N_PAGE_VALUES)));
        });
        let mut rng = Rng(0x5EED_0000_0000_0003);
        group.bench_function("sqlite_relational", |b| {
            b.iter(|| relational_query(relational, "b.pages = ?1", 100 + rng.below(N_PAGE_VALUES)));
        });
        let mut rng = Rng(0x5EED_0000_0000_0003);
        group.bench_function("hashmap", |b| {
            b.iter(|| {
                let pages = 100 + rng.below(N_PAGE_VALUES);
                memory
                    .documents
                    .values()
                    .filter(|document| document.get_i64("pages").ok() == Some(pages))
                    .cloned()
                    .collect::<Vec<_>>()
            });
        });
        group.finish();
    }

    {
        // `$group` by author with `$sum` and `$avg` over every book; each peer returns one
        // document per author.
        let mut group = criterion.benchmark_group("group_by_author");
        group.bench_function("spillway", |b| {
            b.iter(|| spillway_group_by_author(spillway));
        });
        group.bench_function("sqlite_json", |b| {
            b.iter(|| sqlite_group_by_author(json, JSON_GROUP_BY_AUTHOR));
        });
        group.bench_function("sqlite_relational", |b| {
            b.iter(|| sqlite_group_by_author(relational, RELATIONAL_GROUP_BY_AUTHOR));
        });
        group.bench_function("hashmap", |b| b.iter(|| memory_group_by_author(memory)));
        group.finish();
    }

    {
        // `distinct` over the buyers' arrays: every element of every book, about 20,000
        // distinct values at 100,000 books (it was quadratic in the distinct values).
        let mut group = criterion.benchmark_group("distinct_buyers");
        group.bench_function("spillway", |b| {
            b.iter(|| {
                spillway
                    .distinct("customers_purchased", doc! {})
                    .run()
                    .unwrap()
            });
        });
        group.bench_function("sqlite_json", |b| {
            b.iter(|| sqlite_distinct_buyers(json, JSON_DISTINCT_BUYERS));
        });
        group.bench_function("sqlite_relational", |b| {
            b.iter(|| sqlite_distinct_buyers(relational, RELATIONAL_DISTINCT_BUYERS));
        });
        group.bench_function("hashmap", |b| b.iter(|| memory_distinct_buyers(memory)));
        group.finish();
    }

    // Writes, one commit (and so one fsync) per operation, except for the hashmap. They
    // start from checkpointed engines (Spillway's key directory, SQLite's WALs) and a
    // `sync()`: the load's hundreds of megabytes otherwise reach the disk during the first
    // writes measured (update_one: 127 us for Spillway, measured first, against 92-93 us
    // in runs where the load had settled).
    database.checkpoint().unwrap();
    for connection in [&*json, &*relational] {
        connection
            .execute_batch("PRAGMA wal_checkpoint(TRUNCATE);")
            .unwrap();
    }
    rustix::fs::sync();
    {
        let mut group = criterion.benchmark_group("update_one_set");
        let mut rng = Rng(0x5EED_0000_0000_0004);
        group.bench_function("spillway", |b| {
            b.iter(|| {
                let id = rng.below(n_documents);
                spillway
                    .update_one(doc! { "_id": id }, doc! { "$set": { "price": id as f64 } })
                    .run()
                    .unwrap()
            });
        });
        let mut rng = Rng(0x5EED_0000_0000_0004);
        group.bench_function("sqlite_json", |b| {
            b.iter(|| {
                let id = rng.below(n_documents);
                json.prepare_cached(JSON_SET_PRICE)
                    .unwrap()
                    .execute(params![id as f64, id])
                    .unwrap()
            });
        });
        let mut rng = Rng(0x5EED_0000_0000_0004);
        group.bench_function("sqlite_relational", |b| {
            b.iter(|| {
                let id = rng.below(n_documents);
                relational
                    .prepare_cached(RELATIONAL_SET_PRICE)
                    .unwrap()
                    .execute(params![id as f64, id])
                    .unwrap()
            });
        });
        let mut rng = Rng(0x5EED_0000_0000_0004);
        group.bench_function("hashmap", |b| {
            b.iter(|| {
                let id = rng.below(n_documents);
                memory
                    .documents
                    .get_mut(&id)
                    .unwrap()
                    .insert("price", id as f64)
            });
        });
        group.finish();
    }
    {
        // New `_id`s above the loaded ones; every peer inserts the same books.
        let mut group = criterion.benchmark_group("insert_one_synced");
        let mut next_id = n_documents;
        group.bench_function("spillway", |b| {
            b.iter(|| {
                next_id += 1;
                spillway.insert_one(book(next_id)).run().unwrap()
            });
        });
        let mut next_id = n_documents;
        group.bench_function("sqlite_json", |b| {
            b.iter(|| {
                next_id += 1;
                json_insert(json, &book(next_id));
            });
        });
        let mut next_id = n_documents;
        group.bench_function("sqlite_relational", |b| {
            b.iter(|| {
                next_id += 1;
                let transaction = relational.transaction().unwrap();
                relational_insert(&transaction, &book(next_id));
                transaction.commit().unwrap();
            });
        });
        let mut next_id = n_documents;
        group.bench_function("hashmap", |b| {
            b.iter(|| {
                next_id += 1;
                memory.insert(book(next_id));
            });
        });
        group.finish();
    }
    {
        // Far above the single inserts' `_id`s.
        let first_id = n_documents * 100;
        let mut group = criterion.benchmark_group("insert_many_1000");
        let mut next_id = first_id;
        let mut next_batch = || {
            let batch: Vec<Document> = (next_id..next_id + INSERT_BATCH as i64).map(book).collect();
            next_id += INSERT_BATCH as i64;
            batch
        };
        group.bench_function("spillway", |b| {
            b.iter(|| spillway.insert_many(next_batch()).run().unwrap());
        });
        let mut next_id = first_id;
        let mut next_batch = || {
            let batch: Vec<Document> = (next_id..next_id + INSERT_BATCH as i64).map(book).collect();
            next_id += INSERT_BATCH as i64;
            batch
        };
        group.bench_function("sqlite_json", |b| {
            b.iter(|| {
                let transaction = json.transaction().unwrap();
                for document in next_batch() {
                    json_insert(&transaction, &document);
                }
                transaction.commit().unwrap();
            });
        });
        let mut next_id = first_id;
        let mut next_batch = || {
            let batch: Vec<Document> = (next_id..next_id + INSERT_BATCH as i64).map(book).collect();
            next_id += INSERT_BATCH as i64;
            batch
        };
        group.bench_function("sqlite_relational", |b| {
            b.iter(|| {
                let transaction = relational.transaction().unwrap();
                for document in next_batch() {
                    relational_insert(&transaction, &document);
                }
                transaction.commit().unwrap();
            });
        });
        let mut next_id = first_id;
        let mut next_batch = || {
            let batch: Vec<Document> = (next_id..next_id + INSERT_BATCH as i64).map(book).collect();
            next_id += INSERT_BATCH as i64;
            batch
        };
        group.bench_function("hashmap", |b| {
            b.iter(|| {
                for document in next_batch() {
                    memory.insert(document);
                }
            });
        });
        group.finish();
    }
    criterion.final_summary();
    drop(peers);

    let rows = [
        (
            "find_one_by_id",
            "`find_one` by `_id` (returns a decoded document)",
        ),
        (
            "find_by_author_indexed",
            "indexed equality, `author` (about 100 documents returned)",
        ),
        (
            "scan_unindexed_filter",
            "collection scan, filter on unindexed `pages` (about 110 returned)",
        ),
        (
            "update_one_set",
            "`update_one` by `_id` with `$set`, one commit",
        ),
        (
            "group_by_author",
            "`$group` by `author` with `$sum` and `$avg` over every book (1,000 groups)",
        ),
        (
            "distinct_buyers",
            "`distinct` of the buyers' array elements (about 20,000 values)",
        ),
        ("insert_one_synced", "`insert_one`, one commit"),
        ("insert_many_1000", "`insert_many` of 1,000, one commit"),
    ];
    let mut table = String::new();
    writeln!(
        table,
        "| {n_documents} books | spillway | SQLite JSON | SQLite relational | HashMap | SQLite JSON / spillway | SQLite relational / spillway | HashMap / spillway |"
    )
    .unwrap();
    writeln!(table, "|---|---|---|---|---|---|---|---|").unwrap();
    for (group, description) in rows {
        let medians: Vec<f64> = PEERS
            .iter()
            .map(|peer| criterion_median(&criterion_output, group, peer).unwrap_or(f64::NAN))
            .collect();
        let cell = |ns: f64| {
            if ns.is_nan() {
                "-".to_string()
            } else {
                format_duration(ns)
            }
        };
        let ratio = |theirs: f64| {
            if theirs.is_nan() || medians[0].is_nan() {
                "-".to_string()
            } else {
                format!("{:.2}x", theirs / medians[0])
            }
        };
        writeln!(
            table,
            "| {description} | {} | {} | {} | {} | {} | {} | {} |",
            cell(medians[0]),
            cell(medians[1]),
            cell(medians[2]),
            cell(medians[3]),
            ratio(medians[1]),
            ratio(medians[2]),
            ratio(medians[3]),
        )
        .unwrap();
    }
    println!("\n{table}");
    let report = target_dir.join("database-bench.md");
    std::fs::write(&report, &table).unwrap();
    println!("table written to {}", report.display());
}
