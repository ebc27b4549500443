//! Storage engine benchmarks: `spillway-store` side by side with redb and, for reads, an
//! in-memory `BTreeMap<Vec<u8>, Vec<u8>>` (the in-memory limit), on the same data (24-byte
//! keys, 150-byte values) and the same durability (fsync on every commit).
//!
//! Per-operation rows run under criterion (small sample sizes); whole-store rows (bulk load,
//! reads on 2 threads, open time, file size) are timed once. At the end a Markdown table with
//! ratios is printed and written to `$CARGO_TARGET_DIR/store-bench.md` (or
//! `target/store-bench.md`).
//!
//! `SPILLWAY_BENCH_RECORDS` sets the record count (default 1,000,000).

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::hint::black_box;
use std::ops::Bound;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use criterion::Criterion;
use redb::{ReadableDatabase, TableDefinition};
use spillway_store::{Durability, KeyspaceId, Store, StoreOptions, WriteBatch};

const KEY_LEN: usize = 24;
const VALUE_LEN: usize = 150;
const LOAD_BATCH: usize = 10_000;
const TABLE: TableDefinition<'static, &[u8], &[u8]> = TableDefinition::new("records");

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, bound: usize) -> usize {
        (self.next() % bound as u64) as usize
    }
    fn key(&mut self) -> [u8; KEY_LEN] {
        let mut key = [0u8; KEY_LEN];
        for chunk in key.chunks_mut(8) {
            chunk.copy_from_slice(&self.next().to_le_bytes()[..chunk.len()]);
        }
        key
    }
    fn value(&mut self) -> [u8; VALUE_LEN] {
        let mut value = [0u8; VALUE_LEN];
        for chunk in value.chunks_mut(8) {
            let len = chunk.len();
            chunk.copy_from_slice(&self.next().to_le_bytes()[..len]);
        }
        value
    }
}

fn allocated_bytes(dir: &Path) -> u64 {
    use std::os::unix::fs::MetadataExt;
    std::fs::read_dir(dir)
        .unwrap()
        .map(|entry| {
            let entry = entry.unwrap();
            let metadata = entry.metadata().unwrap();
            if metadata.is_dir() {
                allocated_bytes(&entry.path())
            } else {
                metadata.blocks() * 512
            }
        })
        .sum()
}

fn spillway_options() -> StoreOptions {
    StoreOptions {
        durability: Durability::SyncEveryCommit,
        ..StoreOptions::default()
    }
}

fn spillway_load(store: &Store, ks: KeyspaceId, records: &[([u8; KEY_LEN], [u8; VALUE_LEN])]) {
    for chunk in records.chunks(LOAD_BATCH) {
        let mut batch = WriteBatch::with_capacity(chunk.len() * (KEY_LEN + VALUE_LEN + 40));
        for (key, value) in chunk {
            batch.put(ks, key, value);
        }
        store.commit(batch).unwrap();
    }
}

fn redb_load(db: &redb::Database, records: &[([u8; KEY_LEN], [u8; VALUE_LEN])]) {
    for chunk in records.chunks(LOAD_BATCH) {
        let txn = db.begin_write().unwrap();
        {
            let mut table = txn.open_table(TABLE).unwrap();
            for (key, value) in chunk {
                table.insert(&key[..], &value[..]).unwrap();
            }
        }
        txn.commit().unwrap();
    }
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

fn read_two_threads<F: Fn(usize) + Sync>(reads_per_thread: usize, read: F) -> f64 {
    let started = Instant::now();
    std::thread::scope(|scope| {
        for thread in 0..2 {
            let read = &read;
            scope.spawn(move || {
                for i in 0..reads_per_thread {
                    read(i * 2 + thread);
                }
            });
        }
    });
    started.elapsed().as_nanos() as f64 / (2 * reads_per_thread) as f64
}

#[allow(clippy::too_many_lines)]
fn main() {
    let n_records: usize = std::env::var("SPILLWAY_BENCH_RECORDS")
        .ok()
        .map_or(1_000_000, |v| {
            v.parse().expect("SPILLWAY_BENCH_RECORDS must be a number")
        });
    let target_dir = std::env::var_os("CARGO_TARGET_DIR").map_or_else(
        || Path::new(env!("CARGO_MANIFEST_DIR")).join("../target"),
        PathBuf::from,
    );
    let criterion_output = target_dir.join("criterion-store");
    let mut criterion = Criterion::default()
        .sample_size(10)
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_secs(2))
        .output_directory(&criterion_output)
        .configure_from_args();

    let mut rng = Rng(0x5EED_1234_ABCD_0001);
    let records: Vec<([u8; KEY_LEN], [u8; VALUE_LEN])> =
        (0..n_records).map(|_| (rng.key(), rng.value())).collect();
    let lookup_order: Vec<usize> = (0..1 << 20).map(|_| rng.below(n_records)).collect();
    let scratch =
        tempfile::tempdir_in(&target_dir).unwrap_or_else(|_| tempfile::tempdir().unwrap());
    let spillway_dir = scratch.path().join("spillway");
    let redb_path = scratch.path().join("redb").join("db.redb");
    std::fs::create_dir_all(redb_path.parent().unwrap()).unwrap();
    let mut rows: Vec<(String, String, String, String)> = Vec::new();
    let ratio = |ours: f64, theirs: f64| format!("{:.2}x", theirs / ours);

    // Bulk load, synced per batch of 10,000.
    let store = Store::open(&spillway_dir, spillway_options()).unwrap();
    let ks = store.keyspace("records").unwrap();
    let started = Instant::now();
    spillway_load(&store, ks, &records);
    let spillway_bulk = started.elapsed().as_nanos() as f64;
    let mut redb_db = redb::Database::create(&redb_path).unwrap();
    let started = Instant::now();
    redb_load(&redb_db, &records);
    let redb_bulk = started.elapsed().as_nanos() as f64;
    rows.push((
        format!("bulk load {n_records} records (batches of {LOAD_BATCH}, synced)"),
        format_duration(spillway_bulk),
        format_duration(redb_bulk),
        ratio(spillway_bulk, redb_bulk),
    ));
    let btree: BTreeMap<Vec<u8>, Vec<u8>> = records
        .iter()
        .map(|(k, v)| (k.to_vec(), v.to_vec()))
        .collect();

    // Point reads, one thread.
    {
        let mut group = criterion.benchmark_group("point_read");
        let snapshot = store.snapshot();
        let mut i = 0usize;
        group.bench_function("spillway", |b| {
            b.iter(|| {
                i = (i + 1) & ((1 << 20) - 1);
                let key = &records[lookup_order[i]].0;
                black_box(snapshot.get(ks, key).unwrap().map(<[u8]>::len))
            });
        });
        let txn = redb_db.begin_read().unwrap();
        let table = txn.open_table(TABLE).unwrap();
        group.bench_function("redb", |b| {
            b.iter(|| {
                i = (i + 1) & ((1 << 20) - 1);
                let key = &records[lookup_order[i]].0;
                black_box(table.get(&key[..]).unwrap().map(|v| v.value().len()))
            });
        });
        group.bench_function("btreemap", |b| {
            b.iter(|| {
                i = (i + 1) & ((1 << 20) - 1);
                let key = &records[lookup_order[i]].0;
                black_box(btree.get(&key[..]).map(Vec::len))
            });
        });
        group.finish();
    }

    // Range scans of 10 from a random key.
    {
        let mut group = criterion.benchmark_group("range_scan_10");
        let snapshot = store.snapshot();
        let mut i = 0usize;
        group.bench_function("spillway", |b| {
            b.iter(|| {
                i = (i + 1) & ((1 << 20) - 1);
                let start = &records[lookup_order[i]].0[..];
                let mut total = 0;
                for entry in snapshot
                    .range(ks, (Bound::Included(start), Bound::Unbounded))
                    .unwrap()
                    .take(10)
                {
                    total += entry.unwrap().1.len();
                }
                black_box(total)
            });
        });
        let txn = redb_db.begin_read().unwrap();
        let table = txn.open_table(TABLE).unwrap();
        group.bench_function("redb", |b| {
            b.iter(|| {
                i = (i + 1) & ((1 << 20) - 1);
                let start = &records[lookup_order[i]].0[..];
                let mut total = 0;
                for entry in table.range(start..).unwrap().take(10) {
                    total += entry.unwrap().1.value().len();
                }
                black_box(total)
            });
        });
        group.bench_function("btreemap", |b| {
            b.iter(|| {
                i = (i + 1) & ((1 << 20) - 1);
                let start = records[lookup_order[i]].0.to_vec();
                black_box(
                    btree
                        .range(start..)
                        .take(10)
                        .map(|(_, v)| v.len())
                        .sum::<usize>(),
                )
            });
        });
        group.finish();
    }

    // Open time: spillway without checkpoint (full log replay), with checkpoint, and with a
    // checkpoint after the log has doubled; redb.
    drop(store);
    let time_open = || {
        let started = Instant::now();
        let store = Store::open(&spillway_dir, spillway_options()).unwrap();
        let elapsed = started.elapsed().as_nanos() as f64;
        (store, elapsed)
    };
    let (store, spillway_open_log) = time_open();
    assert!(!store.recovery_report().checkpoint_loaded);
    store.checkpoint().unwrap();
    drop(store);
    let (store, spillway_open_checkpoint) = time_open();
    assert!(store.recovery_report().checkpoint_loaded);
    // Overwrite every record once (the log doubles, half of it dead), then checkpoint.
    let overwrites: Vec<([u8; KEY_LEN], [u8; VALUE_LEN])> =
        records.iter().map(|(k, _)| (*k, rng.value())).collect();
    spillway_load(&store, ks, &overwrites);
    store.checkpoint().unwrap();
    drop(store);
    let (store, spillway_open_checkpoint_2x) = time_open();
    drop(redb_db);
    let started = Instant::now();
    redb_db = redb::Database::create(&redb_path).unwrap();
    let redb_open = started.elapsed().as_nanos() as f64;
    rows.push((
        "open, no checkpoint (spillway replays the whole log)".into(),
        format_duration(spillway_open_log),
        format_duration(redb_open),
        ratio(spillway_open_log, redb_open),
    ));
    rows.push((
        "open with checkpoint (log as loaded)".into(),
        format_duration(spillway_open_checkpoint),
        format_duration(redb_open),
        ratio(spillway_open_checkpoint, redb_open),
    ));
    rows.push((
        "open with checkpoint, log twice as long".into(),
        format_duration(spillway_open_checkpoint_2x),
        "-".into(),
        "-".into(),
    ));

    // File size after the overwrite, before and after compaction.
    redb_load(&redb_db, &overwrites);
    let spillway_before = allocated_bytes(&spillway_dir);
    let redb_before = allocated_bytes(redb_path.parent().unwrap());
    let started = Instant::now();
    store.compact().unwrap();
    let spillway_compact_time = started.elapsed();
    let live: u64 = store.stats().segments.iter().map(|s| s.live_bytes).sum();
    let spillway_after = allocated_bytes(&spillway_dir);
    let started = Instant::now();
    while redb_db.compact().unwrap() {}
    let redb_compact_time = started.elapsed();
    let redb_after = allocated_bytes(redb_path.parent().unwrap());
    let mib = |bytes: u64| format!("{:.0} MiB", bytes as f64 / f64::from(1u32 << 20));
    rows.push((
        "disk use after overwriting every record once".into(),
        mib(spillway_before),
        mib(redb_before),
        ratio(spillway_before as f64, redb_before as f64),
    ));
    rows.push((
        format!(
            "disk use after compaction (took {:.1} s vs {:.1} s; live records {})",
            spillway_compact_time.as_secs_f64(),
            redb_compact_time.as_secs_f64(),
            mib(live)
        ),
        mib(spillway_after),
        mib(redb_after),
        ratio(spillway_after as f64, redb_after as f64),
    ));
    // Synced writes: one record per commit, and batches of 1,000.
    {
        let mut write_rng = Rng(0xFEED_0000_0000_0001);
        let mut group = criterion.benchmark_group("synced_write");
        group.bench_function("spillway", |b| {
            b.iter(|| {
                let mut batch = WriteBatch::new();
                batch.put(ks, &write_rng.key(), &write_rng.value());
                store.commit(batch).unwrap()
            });
        });
        group.bench_function("redb", |b| {
            b.iter(|| {
                let txn = redb_db.begin_write().unwrap();
                {
                    let mut table = txn.open_table(TABLE).unwrap();
                    table
                        .insert(&write_rng.key()[..], &write_rng.value()[..])
                        .unwrap();
                }
                txn.commit().unwrap();
            });
        });
        group.finish();
        let mut group = criterion.benchmark_group("batch_1000");
        group.bench_function("spillway", |b| {
            b.iter(|| {
                let mut batch = WriteBatch::with_capacity(1000 * 220);
                for _ in 0..1000 {
                    batch.put(ks, &write_rng.key(), &write_rng.value());
                }
                store.commit(batch).unwrap()
            });
        });
        group.bench_function("redb", |b| {
            b.iter(|| {
                let txn = redb_db.begin_write().unwrap();
                {
                    let mut table = txn.open_table(TABLE).unwrap();
                    for _ in 0..1000 {
                        table
                            .insert(&write_rng.key()[..], &write_rng.value()[..])
                            .unwrap();
                    }
                }
                txn.commit().unwrap();
            });
        });
        group.finish();
    }
    criterion.final_summary();
    let median = |group: &str, function: &str| {
        criterion_median(&criterion_output, group, function).unwrap_or(f64::NAN)
    };
    let (spillway_read, redb_read, btree_read) = (
        median("point_read", "spillway"),
        median("point_read", "redb"),
        median("point_read", "btreemap"),
    );
    rows.push((
        "random point read, 1 thread".into(),
        format_duration(spillway_read),
        format_duration(redb_read),
        ratio(spillway_read, redb_read),
    ));

    // Point reads, two threads (time per read, aggregate).
    let reads_per_thread = 500_000;
    let spillway_read2 = {
        let snapshots = [store.snapshot(), store.snapshot()];
        read_two_threads(reads_per_thread, |i| {
            let snapshot = &snapshots[i % 2];
            black_box(
                snapshot
                    .get(ks, &records[lookup_order[i & ((1 << 20) - 1)]].0)
                    .unwrap()
                    .map(<[u8]>::len),
            );
        })
    };
    let redb_read2 = {
        let txn = redb_db.begin_read().unwrap();
        let table = txn.open_table(TABLE).unwrap();
        read_two_threads(reads_per_thread, |i| {
            black_box(
                table
                    .get(&records[lookup_order[i & ((1 << 20) - 1)]].0[..])
                    .unwrap()
                    .map(|v| v.value().len()),
            );
        })
    };
    let btree_read2 = read_two_threads(reads_per_thread, |i| {
        black_box(
            btree
                .get(&records[lookup_order[i & ((1 << 20) - 1)]].0[..])
                .map(Vec::len),
        );
    });
    rows.push((
        "random point read, 2 threads (wall time per read)".into(),
        format_duration(spillway_read2),
        format_duration(redb_read2),
        ratio(spillway_read2, redb_read2),
    ));
    let (spillway_scan, redb_scan) = (
        median("range_scan_10", "spillway"),
        median("range_scan_10", "redb"),
    );
    rows.push((
        "range scan of 10 from a random key".into(),
        format_duration(spillway_scan),
        format_duration(redb_scan),
        ratio(spillway_scan, redb_scan),
    ));
    let (spillway_write, redb_write) = (
        median("synced_write", "spillway"),
        median("synced_write", "redb"),
    );
    rows.push((
        "individual synced write (1 record per commit)".into(),
        format_duration(spillway_write),
        format_duration(redb_write),
        ratio(spillway_write, redb_write),
    ));
    let (spillway_batch, redb_batch) = (
        median("batch_1000", "spillway"),
        median("batch_1000", "redb"),
    );
    rows.push((
        "synced batch of 1,000 records".into(),
        format_duration(spillway_batch),
        format_duration(redb_batch),
        ratio(spillway_batch, redb_batch),
    ));

    drop(store);

    // Rows were measured in an order that keeps the write rows from changing the data set the
    // other rows use; print them in a reading order.
    let order = [
        "bulk load",
        "individual synced write",
        "synced batch",
        "random point read, 1",
        "random point read, 2",
        "range scan",
        "open, no checkpoint",
        "open with checkpoint (",
        "open with checkpoint, log",
        "disk use after overwriting",
        "disk use after compaction",
    ];
    rows.sort_by_key(|row| order.iter().position(|prefix| row.0.starts_with(prefix)));
    let mut table = String::new();
    writeln!(table, "| {n_records} records, 24-byte keys, 150-byte values | spillway-store | redb | redb / spillway |").unwrap();
    writeln!(table, "|---|---|---|---|").unwrap();
    for (name, ours, theirs, ratio) in &rows {
        writeln!(table, "| {name} | {ours} | {theirs} | {ratio} |").unwrap();
    }
    writeln!(table).unwrap();
    writeln!(
        table,
        "In-memory limit: `BTreeMap<Vec<u8>, Vec<u8>>` point read {} (1 thread, spillway/BTreeMap = {:.2}x), {} (2 threads, {:.2}x); range scan of 10 {}.",
        format_duration(btree_read),
        spillway_read / btree_read,
        format_duration(btree_read2),
        spillway_read2 / btree_read2,
        format_duration(median("range_scan_10", "btreemap")),
    )
    .unwrap();
    println!("\n{table}");
    let report = target_dir.join("store-bench.md");
    std::fs::write(&report, &table).unwrap();
    println!("table written to {}", report.display());
}
