//! Storage engine benchmarks: `spillway-store` side by side with redb, LMDB (through heed) and,
//! for reads, an in-memory `BTreeMap<Vec<u8>, Vec<u8>>` (the in-memory limit), on the same data
//! (24-byte keys, 150-byte values) and the same durability (fsync on every commit).
//!
//! Per-operation rows run under criterion (small sample sizes); whole-store rows (bulk load,
//! reads on 2 threads, open time, file size) are timed once. At the end a Markdown table with
//! ratios is printed and written to `$CARGO_TARGET_DIR/store-bench.md` (or
//! `target/store-bench.md`).
//!
//! `SPILLWAY_BENCH_RECORDS` sets the record count (default 1,000,000).
//!
//! Open times are the median of 5 opens. Open time and resident memory after the (first) open
//! are also measured in a fresh process (this binary
//! run again with `SPILLWAY_BENCH_OPEN_CHILD=<store dir>`), so that memory the parent freed
//! earlier cannot hide what an open allocates.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::hint::black_box;
use std::ops::Bound;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use criterion::Criterion;
use heed::types::Bytes;
use redb::{ReadableDatabase, TableDefinition};
use spillway_benches::{criterion_median, format_duration};
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
        // Checkpoints only where the bench writes them, so that "no checkpoint" and "with
        // checkpoint" rows mean what they say (the default would also checkpoint every 64 MiB
        // of log and on close).
        checkpoint_after_log_bytes: 0,
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

type Lmdb = heed::Database<Bytes, Bytes>;

fn lmdb_open(dir: &Path) -> heed::Env {
    #[expect(
        unsafe_code,
        reason = "heed's open is unsafe: the same LMDB environment must not be opened twice in one process"
    )]
    // SAFETY: the benchmark opens its private temporary directory once at a time: the previous
    // handle is closed (`prepare_for_closing().wait()`) before it is opened again.
    unsafe {
        heed::EnvOpenOptions::new()
            .map_size(32 << 30)
            .max_dbs(1)
            .open(dir)
            .unwrap()
    }
}

fn lmdb_load(env: &heed::Env, db: Lmdb, records: &[([u8; KEY_LEN], [u8; VALUE_LEN])]) {
    for chunk in records.chunks(LOAD_BATCH) {
        let mut txn = env.write_txn().unwrap();
        for (key, value) in chunk {
            db.put(&mut txn, key, value).unwrap();
        }
        txn.commit().unwrap();
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

struct Row {
    name: String,
    /// spillway, redb, LMDB; NaN when not measured.
    values: [f64; 3],
    bytes: bool,
}

fn format_value(value: f64, bytes: bool) -> String {
    if value.is_nan() {
        "-".into()
    } else if bytes && value.abs() < 100.0 * f64::from(1u32 << 20) {
        format!("{:.1} MiB", value / f64::from(1u32 << 20))
    } else if bytes {
        format!("{:.0} MiB", value / f64::from(1u32 << 20))
    } else {
        format_duration(value)
    }
}

/// Resident set size of this process in bytes (`VmRSS`: anonymous and file pages mapped).
fn resident_bytes() -> f64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|line| line.strip_prefix("VmRSS:"))
        .and_then(|rest| {
            rest.trim()
                .trim_end_matches("kB")
                .trim()
                .parse::<f64>()
                .ok()
        })
        .map_or(f64::NAN, |kib| kib * 1024.0)
}

/// The child side of [`open_in_child`]: opens the store, prints open time, resident memory
/// before and after, and the directory entries held in memory, then exits without closing
/// (nothing to flush: the parent left the store synced).
fn open_child(dir: &Path) -> ! {
    let options = StoreOptions {
        checkpoint_after_log_bytes: 0,
        ..spillway_options()
    };
    let before = resident_bytes();
    let started = Instant::now();
    let store = Store::open(dir, options.clone()).unwrap();
    let mut open_ns = vec![elapsed_ns(started)];
    // Resident memory after the first open: later opens could reuse memory the first freed.
    let after = resident_bytes();
    let keys_in_memory = store.stats().keys_in_memory;
    drop(store);
    // The time is the median of 5 opens (the machine is shared; one open can be descheduled).
    for _ in 0..4 {
        let started = Instant::now();
        let store = Store::open(dir, options.clone()).unwrap();
        open_ns.push(elapsed_ns(started));
        drop(store);
    }
    open_ns.sort_by(f64::total_cmp);
    println!("{} {before} {after} {keys_in_memory}", open_ns[2]);
    std::process::exit(0);
}

/// Opens the store in `dir` in a fresh process: (open time in ns, resident bytes after the
/// open, resident bytes the open added, directory entries in memory).
fn open_in_child(dir: &Path) -> (f64, f64, f64, f64) {
    let output = std::process::Command::new(std::env::current_exe().unwrap())
        .env("SPILLWAY_BENCH_OPEN_CHILD", dir)
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    let text = String::from_utf8(output.stdout).unwrap();
    let figures: Vec<f64> = text
        .split_whitespace()
        .map(|f| f.parse().unwrap())
        .collect();
    (figures[0], figures[2], figures[2] - figures[1], figures[3])
}

fn elapsed_ns(started: Instant) -> f64 {
    started.elapsed().as_nanos() as f64
}

#[allow(clippy::too_many_lines)]
fn main() {
    if let Some(dir) = std::env::var_os("SPILLWAY_BENCH_OPEN_CHILD") {
        open_child(Path::new(&dir));
    }
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
    let key_at = |i: usize| &records[lookup_order[i & ((1 << 20) - 1)]].0;
    let scratch =
        tempfile::tempdir_in(&target_dir).unwrap_or_else(|_| tempfile::tempdir().unwrap());
    let spillway_dir = scratch.path().join("spillway");
    let redb_path = scratch.path().join("redb").join("db.redb");
    let lmdb_dir = scratch.path().join("lmdb");
    std::fs::create_dir_all(redb_path.parent().unwrap()).unwrap();
    std::fs::create_dir_all(&lmdb_dir).unwrap();
    let mut rows: Vec<Row> = Vec::new();
    let mut row = |name: &str, values: [f64; 3], bytes: bool| {
        rows.push(Row {
            name: name.to_owned(),
            values,
            bytes,
        });
    };

    // Bulk load, synced per batch of 10,000.
    let store = Store::open(&spillway_dir, spillway_options()).unwrap();
    let ks = store.keyspace("records").unwrap();
    let started = Instant::now();
    spillway_load(&store, ks, &records);
    let spillway_bulk = elapsed_ns(started);
    let mut redb_db = redb::Database::create(&redb_path).unwrap();
    let started = Instant::now();
    redb_load(&redb_db, &records);
    let redb_bulk = elapsed_ns(started);
    let mut env = lmdb_open(&lmdb_dir);
    let lmdb: Lmdb = {
        let mut txn = env.write_txn().unwrap();
        let db = env.create_database(&mut txn, None).unwrap();
        txn.commit().unwrap();
        db
    };
    let started = Instant::now();
    lmdb_load(&env, lmdb, &records);
    let lmdb_bulk = elapsed_ns(started);
    row(
        &format!("bulk load (batches of {LOAD_BATCH}, each synced)"),
        [spillway_bulk, redb_bulk, lmdb_bulk],
        false,
    );
    let btree: BTreeMap<Vec<u8>, Vec<u8>> = records
        .iter()
        .map(|(k, v)| (k.to_vec(), v.to_vec()))
        .collect();

    // Point reads and range scans of 10, one thread (criterion).
    {
        let snapshot = store.snapshot();
        let redb_txn = redb_db.begin_read().unwrap();
        let redb_table = redb_txn.open_table(TABLE).unwrap();
        let lmdb_txn = env.read_txn().unwrap();
        let mut i = 0usize;
        let mut group = criterion.benchmark_group("point_read");
        group.bench_function("spillway", |b| {
            b.iter(|| {
                i += 1;
                black_box(snapshot.get(ks, key_at(i)).unwrap().map(<[u8]>::len))
            });
        });
        group.bench_function("redb", |b| {
            b.iter(|| {
                i += 1;
                black_box(
                    redb_table
                        .get(&key_at(i)[..])
                        .unwrap()
                        .map(|v| v.value().len()),
                )
            });
        });
        group.bench_function("lmdb", |b| {
            b.iter(|| {
                i += 1;
                black_box(lmdb.get(&lmdb_txn, key_at(i)).unwrap().map(<[u8]>::len))
            });
        });
        group.bench_function("btreemap", |b| {
            b.iter(|| {
                i += 1;
                black_box(btree.get(&key_at(i)[..]).map(Vec::len))
            });
        });
        group.finish();
        let mut group = criterion.benchmark_group("range_scan_10");
        group.bench_function("spillway", |b| {
            b.iter(|| {
                i += 1;
                let start = &key_at(i)[..];
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
        group.bench_function("redb", |b| {
            b.iter(|| {
                i += 1;
                let mut total = 0;
                for entry in redb_table.range(&key_at(i)[..]..).unwrap().take(10) {
                    total += entry.unwrap().1.value().len();
                }
                black_box(total)
            });
        });
        group.bench_function("lmdb", |b| {
            b.iter(|| {
                i += 1;
                let start = &key_at(i)[..];
                let mut total = 0;
                let range = (Bound::Included(start), Bound::Unbounded);
                for entry in lmdb.range(&lmdb_txn, &range).unwrap().take(10) {
                    total += entry.unwrap().1.len();
                }
                black_box(total)
            });
        });
        group.bench_function("btreemap", |b| {
            b.iter(|| {
                i += 1;
                let start = key_at(i).to_vec();
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

    // Point reads, two threads: wall time per read over 1,000,000 reads.
    let reads_per_thread = 500_000;
    let spillway_read2 = {
        let snapshots = [store.snapshot(), store.snapshot()];
        read_two_threads(reads_per_thread, |i| {
            black_box(
                snapshots[i % 2]
                    .get(ks, key_at(i))
                    .unwrap()
                    .map(<[u8]>::len),
            );
        })
    };
    let redb_read2 = {
        let txn = redb_db.begin_read().unwrap();
        let table = txn.open_table(TABLE).unwrap();
        read_two_threads(reads_per_thread, |i| {
            black_box(table.get(&key_at(i)[..]).unwrap().map(|v| v.value().len()));
        })
    };
    let lmdb_read2 = {
        let started = Instant::now();
        std::thread::scope(|scope| {
            for thread in 0..2 {
                let env = &env;
                scope.spawn(move || {
                    let txn = env.read_txn().unwrap();
                    for i in 0..reads_per_thread {
                        black_box(
                            lmdb.get(&txn, key_at(i * 2 + thread))
                                .unwrap()
                                .map(<[u8]>::len),
                        );
                    }
                });
            }
        });
        elapsed_ns(started) / (2 * reads_per_thread) as f64
    };
    let btree_read2 = read_two_threads(reads_per_thread, |i| {
        black_box(btree.get(&key_at(i)[..]).map(Vec::len));
    });

    // Open time: spillway without checkpoint (full log replay), with checkpoint, and with a
    // checkpoint after the log has doubled; redb and LMDB.
    drop(store);
    // The median of 5 opens (the machine is shared; one open can be descheduled); the store
    // of the last one is returned.
    let time_open = || {
        let mut times = Vec::new();
        let mut store = None;
        for _ in 0..5 {
            drop(store.take());
            let started = Instant::now();
            store = Some(Store::open(&spillway_dir, spillway_options()).unwrap());
            times.push(elapsed_ns(started));
        }
        times.sort_by(f64::total_cmp);
        (store.unwrap(), times[2])
    };
    let (store, spillway_open_log) = time_open();
    assert!(!store.recovery_report().checkpoint_loaded);
    store.checkpoint().unwrap();
    drop(store);
    let (child_open, child_resident, child_added, child_keys_in_memory) =
        open_in_child(&spillway_dir);
    // The same open from the same checkpoint rewritten in format version 1, which is loaded
    // whole into memory as every checkpoint was before issue 14: the old open path, side by
    // side. The version 2 file is put back afterwards.
    let checkpoint_path = std::fs::read_dir(&spillway_dir)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .find(|path| {
            path.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("ckpt-")
        })
        .unwrap();
    let version_2 = std::fs::read(&checkpoint_path).unwrap();
    let version_1 = spillway_store::fuzzing::checkpoint_as_version_1(&version_2).unwrap();
    std::fs::write(&checkpoint_path, &version_1).unwrap();
    let (v1_open, v1_resident, v1_added, v1_keys_in_memory) = open_in_child(&spillway_dir);
    std::fs::write(&checkpoint_path, &version_2).unwrap();
    let (store, spillway_open_checkpoint) = time_open();
    assert!(store.recovery_report().checkpoint_loaded);
    assert_eq!(store.stats().keys_in_memory, 0);

    // The rows above read a store whose keys were all written since it was opened (in the
    // in-memory overlay); the same reads after an open from a checkpoint, where every key is
    // read in place from the mapped checkpoint file (criterion, spillway only: the peers'
    // figures do not change).
    {
        let snapshot = store.snapshot();
        let mut i = 0usize;
        let mut group = criterion.benchmark_group("from_checkpoint");
        group.bench_function("point_read", |b| {
            b.iter(|| {
                i += 1;
                black_box(snapshot.get(ks, key_at(i)).unwrap().map(<[u8]>::len))
            });
        });
        group.bench_function("range_scan_10", |b| {
            b.iter(|| {
                i += 1;
                let start = &key_at(i)[..];
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
        group.finish();
    }
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
    let redb_open = elapsed_ns(started);
    env.prepare_for_closing().wait();
    let started = Instant::now();
    env = lmdb_open(&lmdb_dir);
    let lmdb_open_time = elapsed_ns(started);
    let lmdb: Lmdb = {
        let txn = env.read_txn().unwrap();
        let db = env.open_database(&txn, None).unwrap().unwrap();
        txn.commit().unwrap();
        db
    };

    // Disk use after the overwrite, before and after compaction (LMDB: a compacting copy).
    redb_load(&redb_db, &overwrites);
    lmdb_load(&env, lmdb, &overwrites);
    let spillway_before = allocated_bytes(&spillway_dir) as f64;
    let redb_before = allocated_bytes(redb_path.parent().unwrap()) as f64;
    let lmdb_before = allocated_bytes(&lmdb_dir) as f64;
    let started = Instant::now();
    store.compact().unwrap();
    // The victims stay for the fallback checkpoint until the next checkpoint, which
    // `Database::compact` writes at once: the same here, timed with the compaction.
    store.checkpoint().unwrap();
    let spillway_compact_time = started.elapsed();
    let live: u64 = store.stats().segments.iter().map(|s| s.live_bytes).sum();
    let spillway_after = allocated_bytes(&spillway_dir) as f64;
    let started = Instant::now();
    while redb_db.compact().unwrap() {}
    let redb_compact_time = started.elapsed();
    let redb_after = allocated_bytes(redb_path.parent().unwrap()) as f64;
    let lmdb_copy = scratch.path().join("lmdb-compacted");
    std::fs::create_dir_all(&lmdb_copy).unwrap();
    let started = Instant::now();
    env.copy_to_path(lmdb_copy.join("data.mdb"), heed::CompactionOption::Enabled)
        .unwrap();
    let lmdb_compact_time = started.elapsed();
    let lmdb_after = allocated_bytes(&lmdb_copy) as f64;

    // Range scans of 10 on compacted data (criterion): spillway with every sealed segment
    // rewritten (live ratio 1.0 makes each one a victim; compaction writes the live records
    // of a keyspace in key order), redb after its compaction, LMDB as it is (its B-tree keeps
    // leaf order by itself).
    drop(store);
    let store = Store::open(
        &spillway_dir,
        StoreOptions {
            compaction_live_ratio: 1.0,
            ..spillway_options()
        },
    )
    .unwrap();
    let full_compaction = store.compact().unwrap();
    drop(store);
    let store = Store::open(&spillway_dir, spillway_options()).unwrap();
    {
        let snapshot = store.snapshot();
        let redb_txn = redb_db.begin_read().unwrap();
        let redb_table = redb_txn.open_table(TABLE).unwrap();
        let lmdb_txn = env.read_txn().unwrap();
        let mut i = 0usize;
        let mut group = criterion.benchmark_group("range_scan_10_compacted");
        group.bench_function("spillway", |b| {
            b.iter(|| {
                i += 1;
                let start = &key_at(i)[..];
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
        group.bench_function("redb", |b| {
            b.iter(|| {
                i += 1;
                let mut total = 0;
                for entry in redb_table.range(&key_at(i)[..]..).unwrap().take(10) {
                    total += entry.unwrap().1.value().len();
                }
                black_box(total)
            });
        });
        group.bench_function("lmdb", |b| {
            b.iter(|| {
                i += 1;
                let start = &key_at(i)[..];
                let mut total = 0;
                let range = (Bound::Included(start), Bound::Unbounded);
                for entry in lmdb.range(&lmdb_txn, &range).unwrap().take(10) {
                    total += entry.unwrap().1.len();
                }
                black_box(total)
            });
        });
        group.finish();
    }

    // Synced writes: one record per commit, and batches of 1,000 (criterion). Last, so that
    // the records they add do not change the data set of the rows above.
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
        group.bench_function("lmdb", |b| {
            b.iter(|| {
                let mut txn = env.write_txn().unwrap();
                lmdb.put(&mut txn, &write_rng.key(), &write_rng.value())
                    .unwrap();
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
        group.bench_function("lmdb", |b| {
            b.iter(|| {
                let mut txn = env.write_txn().unwrap();
                for _ in 0..1000 {
                    lmdb.put(&mut txn, &write_rng.key(), &write_rng.value())
                        .unwrap();
                }
                txn.commit().unwrap();
            });
        });
        group.finish();
    }
    criterion.final_summary();
    drop(store);

    let median = |group: &str, function: &str| {
        criterion_median(&criterion_output, group, function).unwrap_or(f64::NAN)
    };
    let engines = |group: &str| {
        [
            median(group, "spillway"),
            median(group, "redb"),
            median(group, "lmdb"),
        ]
    };
    row(
        "individual synced write (1 record per commit)",
        engines("synced_write"),
        false,
    );
    row(
        "synced batch of 1,000 records",
        engines("batch_1000"),
        false,
    );
    row("random point read, 1 thread", engines("point_read"), false);
    row(
        "random point read, 2 threads (wall time per read)",
        [spillway_read2, redb_read2, lmdb_read2],
        false,
    );
    row(
        "range scan of 10 from a random key",
        engines("range_scan_10"),
        false,
    );
    row(
        &format!(
            "range scan of 10 on compacted data (spillway: {} segments rewritten in key order)",
            full_compaction.segments_compacted.len()
        ),
        engines("range_scan_10_compacted"),
        false,
    );
    row(
        "random point read, 1 thread, every key in the mapped checkpoint",
        [
            median("from_checkpoint", "point_read"),
            median("point_read", "redb"),
            median("point_read", "lmdb"),
        ],
        false,
    );
    row(
        "range scan of 10, every key in the mapped checkpoint",
        [
            median("from_checkpoint", "range_scan_10"),
            median("range_scan_10", "redb"),
            median("range_scan_10", "lmdb"),
        ],
        false,
    );
    row(
        "open, no checkpoint (spillway replays the whole log)",
        [spillway_open_log, redb_open, lmdb_open_time],
        false,
    );
    row(
        "open with checkpoint",
        [spillway_open_checkpoint, redb_open, lmdb_open_time],
        false,
    );
    row(
        "open with checkpoint, in a fresh process",
        [child_open, redb_open, lmdb_open_time],
        false,
    );
    row(
        &format!(
            "resident memory after that open (directory entries in memory: {child_keys_in_memory:.0})"
        ),
        [child_resident, f64::NAN, f64::NAN],
        true,
    );
    row(
        "resident memory added by that open",
        [child_added, f64::NAN, f64::NAN],
        true,
    );
    row(
        "open with a version 1 checkpoint (loaded whole into memory, as before issue 14), fresh process",
        [v1_open, redb_open, lmdb_open_time],
        false,
    );
    row(
        &format!(
            "resident memory after that open (directory entries in memory: {v1_keys_in_memory:.0})"
        ),
        [v1_resident, f64::NAN, f64::NAN],
        true,
    );
    row(
        "resident memory added by that open",
        [v1_added, f64::NAN, f64::NAN],
        true,
    );
    row(
        "open with checkpoint, log twice as long",
        [spillway_open_checkpoint_2x, f64::NAN, f64::NAN],
        false,
    );
    row(
        "disk use after overwriting every record once",
        [spillway_before, redb_before, lmdb_before],
        true,
    );
    row(
        &format!(
            "disk use after compaction ({:.1} s, {:.1} s, {:.1} s; live records {:.0} MiB)",
            spillway_compact_time.as_secs_f64(),
            redb_compact_time.as_secs_f64(),
            lmdb_compact_time.as_secs_f64(),
            live as f64 / f64::from(1u32 << 20)
        ),
        [spillway_after, redb_after, lmdb_after],
        true,
    );

    let mut table = String::new();
    writeln!(
        table,
        "| {n_records} records, 24-byte keys, 150-byte values | spillway-store | redb | LMDB (heed) | redb / spillway | LMDB / spillway |"
    )
    .unwrap();
    writeln!(table, "|---|---|---|---|---|---|").unwrap();
    for Row {
        name,
        values,
        bytes,
    } in &rows
    {
        let ratio = |theirs: f64| {
            if theirs.is_nan() {
                "-".to_owned()
            } else {
                format!("{:.2}x", theirs / values[0])
            }
        };
        writeln!(
            table,
            "| {name} | {} | {} | {} | {} | {} |",
            format_value(values[0], *bytes),
            format_value(values[1], *bytes),
            format_value(values[2], *bytes),
            ratio(values[1]),
            ratio(values[2]),
        )
        .unwrap();
    }
    writeln!(table).unwrap();
    let (spillway_read, btree_read) = (
        median("point_read", "spillway"),
        median("point_read", "btreemap"),
    );
    writeln!(
        table,
        "In-memory limit: `BTreeMap<Vec<u8>, Vec<u8>>` point read {} (1 thread, spillway / BTreeMap = {:.2}x), {} per read on 2 threads ({:.2}x); range scan of 10 {}.",
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
