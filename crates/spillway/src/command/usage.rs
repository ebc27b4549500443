//! How much each collection has been used since the server started: operations and the time
//! they took, by kind, as MongoDB's `top` command and the `latencyStats` of `$collStats`
//! (mongosh's `db.c.latencyStats()`) report them.
//!
//! The dispatcher records every command that names a collection once it has answered
//! (failed ones too, as MongoDB counts them). Figures live in memory and start at zero with
//! the server, as MongoDB's do; a dropped collection keeps its figures until the server
//! stops. This module must never touch the database.

use std::collections::BTreeMap;
use std::sync::Mutex;
use std::time::Duration;

use bson::{Bson, Document, doc};

use super::error::{CommandError, CommandResult};
use super::{Context, lock};

/// The kind of operation a command is, as MongoDB's latency statistics split them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Read,
    Write,
    Command,
}

/// The `top` counter a command adds to besides `total` and its lock kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum TopCounter {
    Queries,
    GetMore,
    Insert,
    Update,
    Remove,
    Commands,
}

/// Operations and their summed time, in microseconds.
#[derive(Debug, Clone, Copy, Default)]
struct Timed {
    count: u64,
    micros: u64,
}

impl Timed {
    fn add(&mut self, micros: u64) {
        self.count += 1;
        self.micros = self.micros.saturating_add(micros);
    }

    /// As `top` prints it: `{ time, count }`.
    fn top(self) -> Document {
        doc! { "time": saturating_i64(self.micros), "count": saturating_i64(self.count) }
    }
}

/// How many histogram buckets there are; the last holds every latency from 2^31 µs (36
/// minutes) up.
const BUCKETS: usize = 32;

/// Latencies of one kind: the total and a histogram in power-of-two buckets of
/// microseconds (bucket `i` holds latencies in `[2^i, 2^(i+1))`, bucket 0 also 0 and 1).
#[derive(Debug, Clone, Default)]
struct Latencies {
    timed: Timed,
    buckets: [u64; BUCKETS],
}

impl Latencies {
    fn add(&mut self, micros: u64) {
        self.timed.add(micros);
        let bucket = if micros < 2 {
            0
        } else {
            micros.ilog2() as usize
        };
        let bucket = bucket.min(BUCKETS - 1);
        self.buckets[bucket] += 1;
    }

    /// As `$collStats`' `latencyStats` prints one kind: `{ latency, ops }`, and the
    /// non-empty buckets as `histogram: [{ micros: <lower bound>, count }]` when asked.
    fn to_document(&self, histograms: bool) -> Document {
        let mut figures = doc! {
            "latency": saturating_i64(self.timed.micros),
            "ops": saturating_i64(self.timed.count),
        };
        if histograms {
            let histogram: Vec<Bson> = self
                .buckets
                .iter()
                .enumerate()
                .filter(|(_, count)| **count > 0)
                .map(|(bucket, count)| {
                    let lower = if bucket == 0 { 0 } else { 1_i64 << bucket };
                    Bson::Document(doc! { "micros": lower, "count": saturating_i64(*count) })
                })
                .collect();
            figures.insert("histogram", histogram);
        }
        figures
    }
}

/// The figures of one collection.
#[derive(Debug, Clone, Default)]
struct CollectionUsage {
    reads: Latencies,
    writes: Latencies,
    commands: Latencies,
    transactions: Latencies,
    total: Timed,
    read_lock: Timed,
    write_lock: Timed,
    queries: Timed,
    get_more: Timed,
    insert: Timed,
    update: Timed,
    remove: Timed,
    other_commands: Timed,
}

/// Every collection's figures, by client namespace (`database.collection`).
#[derive(Debug, Default)]
pub(crate) struct UsageTable {
    collections: Mutex<BTreeMap<String, CollectionUsage>>,
}

fn saturating_i64(value: u64) -> i64 {
    i64::try_from(value).unwrap_or(i64::MAX)
}

/// The kind of command `name` is and the `top` counter it adds to.
fn classify(name: &str) -> (Kind, TopCounter) {
    match name {
        "find" | "count" | "distinct" | "aggregate" => (Kind::Read, TopCounter::Queries),
        "getMore" => (Kind::Read, TopCounter::GetMore),
        "insert" => (Kind::Write, TopCounter::Insert),
        "update" | "findAndModify" | "findandmodify" => (Kind::Write, TopCounter::Update),
        "delete" => (Kind::Write, TopCounter::Remove),
        _ => (Kind::Command, TopCounter::Commands),
    }
}

/// The collection `command` (named `name`) works on, as the client names it: the command's
/// string value, or `getMore`'s `collection`; `None` for a command on no collection.
fn collection_of<'a>(name: &str, command: &'a Document) -> Option<&'a str> {
    let collection = if name == "getMore" {
        command.get_str("collection").ok()
    } else {
        command.get(name).and_then(Bson::as_str)
    }?;
    (!collection.is_empty()).then_some(collection)
}

impl UsageTable {
    /// Records that `command` (its first key names it) ran on database `database` and took
    /// `elapsed`; commands that name no collection are not recorded.
    pub(crate) fn record(&self, database: &str, command: &Document, elapsed: Duration) {
        let Some(name) = command.keys().next() else {
            return;
        };
        let Some(collection) = collection_of(name, command) else {
            return;
        };
        let micros = u64::try_from(elapsed.as_micros()).unwrap_or(u64::MAX);
        let (kind, counter) = classify(name);
        let in_transaction = command.get("autocommit") == Some(&Bson::Boolean(false));
        let mut collections = lock(&self.collections);
        let usage = collections
            .entry(format!("{database}.{collection}"))
            .or_default();
        match kind {
            Kind::Read => usage.reads.add(micros),
            Kind::Write => usage.writes.add(micros),
            Kind::Command => usage.commands.add(micros),
        }
        if in_transaction {
            usage.transactions.add(micros);
        }
        usage.total.add(micros);
        if kind == Kind::Write {
            usage.write_lock.add(micros);
        } else {
            usage.read_lock.add(micros);
        }
        let timed = match counter {
            TopCounter::Queries => &mut usage.queries,
            TopCounter::GetMore => &mut usage.get_more,
            TopCounter::Insert => &mut usage.insert,
            TopCounter::Update => &mut usage.update,
            TopCounter::Remove => &mut usage.remove,
            TopCounter::Commands => &mut usage.other_commands,
        };
        timed.add(micros);
    }

    /// `$collStats`' `latencyStats` of `namespace`: `reads`, `writes`, `commands` and
    /// `transactions`, each `{ latency, ops }` (microseconds), with histograms when asked.
    pub(crate) fn latency_stats(&self, namespace: &str, histograms: bool) -> Document {
        let collections = lock(&self.collections);
        let usage = collections.get(namespace).cloned().unwrap_or_default();
        doc! {
            "reads": usage.reads.to_document(histograms),
            "writes": usage.writes.to_document(histograms),
            "commands": usage.commands.to_document(histograms),
            "transactions": usage.transactions.to_document(histograms),
        }
    }

    /// `top`'s `totals`: one entry per namespace used, in MongoDB's shape.
    pub(crate) fn totals(&self) -> Document {
        let mut totals = doc! { "note": "all times in microseconds" };
        for (namespace, usage) in lock(&self.collections).iter() {
            totals.insert(
                namespace.clone(),
                doc! {
                    "total": usage.total.top(),
                    "readLock": usage.read_lock.top(),
                    "writeLock": usage.write_lock.top(),
                    "queries": usage.queries.top(),
                    "getmore": usage.get_more.top(),
                    "insert": usage.insert.top(),
                    "update": usage.update.top(),
                    "remove": usage.remove.top(),
                    "commands": usage.other_commands.top(),
                },
            );
        }
        totals
    }
}

/// `top` (on `admin`): every used collection's operations and their time by kind.
pub(crate) fn top(context: &mut Context<'_>) -> CommandResult {
    if context.database != "admin" {
        return Err(CommandError::new(
            13,
            "top may only be run against the admin database.",
        ));
    }
    context.args.only(&["comment"])?;
    Ok(doc! { "totals": context.commands.usage.totals(), "ok": 1.0 })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands_count_by_kind_and_latency_buckets_by_power_of_two() {
        let table = UsageTable::default();
        let find = doc! { "find": "books", "filter": {} };
        table.record("shop", &find, Duration::from_micros(5));
        table.record("shop", &find, Duration::from_micros(6));
        table.record(
            "shop",
            &doc! { "getMore": 7_i64, "collection": "books" },
            Duration::from_micros(100),
        );
        table.record(
            "shop",
            &doc! { "insert": "books", "autocommit": false },
            Duration::from_micros(1),
        );
        table.record("shop", &doc! { "ping": 1 }, Duration::from_micros(1));
        let latency = table.latency_stats("shop.books", true);
        assert_eq!(
            latency.get_document("reads").unwrap(),
            &doc! {
                "latency": 111_i64,
                "ops": 3_i64,
                "histogram": [{ "micros": 4_i64, "count": 2_i64 }, { "micros": 64_i64, "count": 1_i64 }],
            }
        );
        assert_eq!(
            latency.get_document("transactions").unwrap(),
            &doc! { "latency": 1_i64, "ops": 1_i64, "histogram": [{ "micros": 0_i64, "count": 1_i64 }] }
        );
        let totals = table.totals();
        let books = totals.get_document("shop.books").unwrap();
        assert_eq!(
            books.get_document("total").unwrap(),
            &doc! { "time": 112_i64, "count": 4_i64 }
        );
        assert_eq!(
            books.get_document("getmore").unwrap(),
            &doc! { "time": 100_i64, "count": 1_i64 }
        );
        assert_eq!(
            books.get_document("writeLock").unwrap(),
            &doc! { "time": 1_i64, "count": 1_i64 }
        );
        assert_eq!(totals.len(), 2, "the note and shop.books: {totals}");
    }
}
