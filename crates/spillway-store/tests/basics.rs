//! Behaviour of the public API on real files and in memory: commits, snapshots, keyspaces,
//! durability modes, the lock, checkpoints, compaction, stats and poisoning.

use std::ops::Bound;
use std::sync::Arc;
use std::time::Duration;

use spillway_store::backend::{FaultPlan, MemoryBackend};
use spillway_store::{Durability, Error, Store, StoreOptions, WriteBatch};

fn small_options() -> StoreOptions {
    StoreOptions {
        segment_size: 16 * 1024,
        ..StoreOptions::default()
    }
}

fn collect(
    snapshot: &spillway_store::Snapshot,
    range: spillway_store::Range<'_>,
) -> Vec<(Vec<u8>, Vec<u8>)> {
    let _ = snapshot;
    range
        .map(|entry| entry.map(|(k, v)| (k.to_vec(), v.to_vec())))
        .collect::<Result<_, _>>()
        .unwrap()
}

#[test]
fn commit_snapshot_and_reopen_on_disk() {
    let dir = tempfile::tempdir().unwrap();
    {
        let store = Store::open(dir.path(), small_options()).unwrap();
        let books = store.keyspace("books").unwrap();
        let mut batch = WriteBatch::new();
        batch.put(books, b"b1", b"Dune").put(books, b"b2", b"Emma");
        store.commit(batch).unwrap();
        let snapshot = store.snapshot();
        let mut batch = WriteBatch::new();
        batch.delete(books, b"b1").put(books, b"b3", b"Ulysses");
        store.commit(batch).unwrap();
        // The old snapshot does not see the later commit.
        assert_eq!(snapshot.get(books, b"b1").unwrap(), Some(&b"Dune"[..]));
        assert_eq!(snapshot.get(books, b"b3").unwrap(), None);
        assert_eq!(store.snapshot().get(books, b"b1").unwrap(), None);
    }
    let store = Store::open(dir.path(), small_options()).unwrap();
    let books = store.keyspace_id("books").expect("keyspace persisted");
    let snapshot = store.snapshot();
    assert_eq!(
        collect(&snapshot, snapshot.iter(books).unwrap()),
        vec![
            (b"b2".to_vec(), b"Emma".to_vec()),
            (b"b3".to_vec(), b"Ulysses".to_vec())
        ]
    );
    assert_eq!(store.recovery_report().frames_replayed, 3);
    assert!(store.recovery_report().torn_tail.is_none());
}

#[test]
fn values_are_eight_byte_aligned_in_place() {
    let store = Store::open_in_memory().unwrap();
    let ks = store.keyspace("aligned").unwrap();
    let mut batch = WriteBatch::new();
    for i in 0..50u32 {
        let key = vec![b'k'; (i % 13) as usize + 1];
        batch.put(
            ks,
            &[&key[..], &i.to_be_bytes()].concat(),
            &vec![7u8; (i % 11) as usize],
        );
    }
    store.commit(batch).unwrap();
    let snapshot = store.snapshot();
    for entry in snapshot.iter(ks).unwrap() {
        let (_, value) = entry.unwrap();
        assert_eq!(value.as_ptr() as usize % 8, 0, "value not aligned");
    }
}

fn keys<'a>(
    range: impl Iterator<Item = spillway_store::Result<(&'a [u8], &'a [u8])>>,
) -> Vec<String> {
    range
        .map(|e| String::from_utf8(e.unwrap().0.to_vec()).unwrap())
        .collect()
}

#[test]
fn ranges_reverse_and_prefixes() {
    let store = Store::open_in_memory().unwrap();
    let ks = store.keyspace("r").unwrap();
    let mut batch = WriteBatch::new();
    for key in ["a", "ab", "abc", "b", "ba", "c"] {
        batch.put(ks, key.as_bytes(), key.to_uppercase().as_bytes());
    }
    store.commit(batch).unwrap();
    let snapshot = store.snapshot();
    assert_eq!(keys(snapshot.prefix(ks, b"ab").unwrap()), ["ab", "abc"]);
    assert_eq!(keys(snapshot.prefix(ks, b"b").unwrap().rev()), ["ba", "b"]);
    assert_eq!(
        keys(
            snapshot
                .range(
                    ks,
                    (Bound::Excluded(&b"ab"[..]), Bound::Included(&b"ba"[..]))
                )
                .unwrap()
        ),
        ["abc", "b", "ba"]
    );
    assert_eq!(
        keys(
            snapshot
                .range(ks, (Bound::Included(&b"z"[..]), Bound::Included(&b"a"[..])))
                .unwrap()
        ),
        Vec::<String>::new()
    );
    assert_eq!(keys(snapshot.iter(ks).unwrap().rev().take(2)), ["c", "ba"]);
}

/// `value_lengths` lists every key with its value's length, from the checkpointed directory
/// and the commits after it alike, without the values.
#[test]
fn value_lengths_match_the_values_before_and_after_a_checkpoint() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path(), small_options()).unwrap();
    let ks = store.keyspace("sizes").unwrap();
    let mut batch = WriteBatch::new();
    for n in 0..200_usize {
        batch.put(ks, format!("k{n:03}").as_bytes(), &vec![7; n]);
    }
    store.commit(batch).unwrap();
    store.checkpoint().unwrap();
    let mut batch = WriteBatch::new();
    batch
        .put(ks, b"k000", &[1; 1000])
        .delete(ks, b"k001")
        .put(ks, b"z", b"");
    store.commit(batch).unwrap();
    let snapshot = store.snapshot();
    let lengths: Vec<(Vec<u8>, usize)> = snapshot
        .value_lengths(ks)
        .unwrap()
        .map(|entry| entry.map(|(key, length)| (key.to_vec(), length)))
        .collect::<Result<_, _>>()
        .unwrap();
    let read: Vec<(Vec<u8>, usize)> = snapshot
        .iter(ks)
        .unwrap()
        .map(|entry| entry.map(|(key, value)| (key.to_vec(), value.len())))
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(lengths, read);
    assert_eq!(lengths.len(), 200);
    assert_eq!(lengths[0], (b"k000".to_vec(), 1000));
    assert_eq!(lengths[1], (b"k002".to_vec(), 2));
    assert_eq!(lengths.last(), Some(&(b"z".to_vec(), 0)));
}

#[test]
fn keyspaces_clear_drop_and_unknown_ids() {
    let store = Store::open_in_memory().unwrap();
    let a = store.keyspace("a").unwrap();
    let b = store.keyspace("b").unwrap();
    assert_eq!(store.keyspace("a").unwrap(), a);
    let mut batch = WriteBatch::new();
    batch
        .put(a, b"1", b"x")
        .put(b, b"1", b"y")
        .put(b, b"2", b"z");
    store.commit(batch).unwrap();

    let mut batch = WriteBatch::new();
    batch.clear_keyspace(b).put(b, b"3", b"w");
    store.commit(batch).unwrap();
    let snapshot = store.snapshot();
    assert_eq!(snapshot.len(b).unwrap(), 1);
    assert_eq!(snapshot.get(b, b"3").unwrap(), Some(&b"w"[..]));

    assert!(store.drop_keyspace("a").unwrap());
    assert!(!store.drop_keyspace("a").unwrap());
    let mut batch = WriteBatch::new();
    batch.put(a, b"2", b"gone");
    assert!(matches!(store.commit(batch), Err(Error::UnknownKeyspace(id)) if id == a));
    // The old snapshot still sees the dropped keyspace.
    assert_eq!(snapshot.get(a, b"1").unwrap(), Some(&b"x"[..]));
    // A new keyspace with the old name gets a new id.
    let a2 = store.keyspace("a").unwrap();
    assert_ne!(a2, a);
    assert_eq!(store.snapshot().len(a2).unwrap(), 0);
    assert_eq!(
        store
            .keyspaces()
            .into_iter()
            .map(|(n, _)| n)
            .collect::<Vec<_>>(),
        ["a", "b"]
    );
    assert!(matches!(
        store.keyspace(""),
        Err(Error::InvalidKeyspaceName(_))
    ));
}

/// A program that closes a store and opens it again while another of its threads starts
/// processes: each child shares the lock's open file from `fork` until its `exec`, so the lock
/// can look held for a moment after the close. The reopen must wait that moment out.
#[test]
fn reopening_while_another_thread_spawns_processes_is_not_refused() {
    let dir = tempfile::tempdir().unwrap();
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let spawner = {
        let stop = Arc::clone(&stop);
        std::thread::spawn(move || {
            let mut children = 0u32;
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                std::process::Command::new("true").status().unwrap();
                children += 1;
            }
            children
        })
    };
    for round in 0..300 {
        let store = Store::open(dir.path(), small_options())
            .unwrap_or_else(|error| panic!("reopen {round}: {error}"));
        drop(store);
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    assert!(spawner.join().unwrap() > 0);
}

#[test]
fn second_open_is_refused_with_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path(), small_options()).unwrap();
    let error = Store::open(dir.path(), small_options()).unwrap_err();
    assert!(matches!(error, Error::Locked { .. }));
    assert!(
        error
            .to_string()
            .starts_with("database is locked by another process")
    );
    drop(store);
    Store::open(dir.path(), small_options()).unwrap();
}

#[test]
fn rotation_checkpoint_and_reopen_replay_only_the_tail() {
    let dir = tempfile::tempdir().unwrap();
    let value = vec![5u8; 1000];
    {
        let store = Store::open(dir.path(), small_options()).unwrap();
        let ks = store.keyspace("k").unwrap();
        for i in 0..100u32 {
            let mut batch = WriteBatch::new();
            batch.put(ks, &i.to_be_bytes(), &value);
            store.commit(batch).unwrap();
        }
        assert!(store.stats().segments.len() > 5, "segments rotated");
        store.checkpoint().unwrap();
        for i in 100..110u32 {
            let mut batch = WriteBatch::new();
            batch.put(ks, &i.to_be_bytes(), &value);
            store.commit(batch).unwrap();
        }
    }
    let store = Store::open(dir.path(), small_options()).unwrap();
    let report = store.recovery_report();
    assert!(report.checkpoint_loaded);
    assert_eq!(report.frames_replayed, 10);
    let ks = store.keyspace_id("k").unwrap();
    let snapshot = store.snapshot();
    assert_eq!(snapshot.len(ks).unwrap(), 110);
    for i in 0..110u32 {
        assert_eq!(
            snapshot.get(ks, &i.to_be_bytes()).unwrap(),
            Some(&value[..])
        );
    }
    assert!(store.verify().unwrap().is_clean());
}

#[test]
fn compaction_reclaims_space_and_keeps_snapshots_readable() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path(), small_options()).unwrap();
    let ks = store.keyspace("k").unwrap();
    for round in 0..10u8 {
        for i in 0..20u32 {
            let mut batch = WriteBatch::new();
            batch.put(ks, &i.to_be_bytes(), &vec![round; 500]);
            store.commit(batch).unwrap();
        }
    }
    let old_snapshot = store.snapshot();
    let before = store.stats();
    let written_before: u64 = before.segments.iter().map(|s| s.written_bytes).sum();
    let report = store.compact().unwrap();
    assert!(!report.segments_compacted.is_empty());
    let after = store.stats();
    // The victims are still listed, retained for the fallback (the checkpoint before the
    // compaction points into them); the segments of the current state are what is left.
    let retained: Vec<u32> = after
        .segments
        .iter()
        .filter(|s| s.retained)
        .map(|s| s.id)
        .collect();
    assert_eq!(retained, report.segments_compacted);
    let current = || after.segments.iter().filter(|s| !s.retained);
    let written_after: u64 = current().map(|s| s.written_bytes).sum();
    let live_after: u64 = current().map(|s| s.live_bytes).sum();
    assert!(
        written_after < written_before / 3,
        "{written_after} vs {written_before}"
    );
    assert!(
        written_after <= live_after + live_after / 4 + 4096,
        "{written_after} vs live {live_after}"
    );
    // The old snapshot still reads the compacted-away segments.
    for i in 0..20u32 {
        assert_eq!(
            old_snapshot.get(ks, &i.to_be_bytes()).unwrap(),
            Some(&vec![9u8; 500][..])
        );
    }
    let compacted_path = dir
        .path()
        .join(format!("seg-{:08x}.spw", report.segments_compacted[0]));
    let another_snapshot = store.snapshot();
    drop(another_snapshot);
    assert!(compacted_path.exists(), "file kept for the fallback");
    // The next checkpoint's fallback is the compaction's own checkpoint, which needs none of
    // the victims: they go, each once no snapshot maps it.
    store.checkpoint().unwrap();
    assert!(store.stats().segments.iter().all(|s| !s.retained));
    assert!(
        compacted_path.exists(),
        "file kept while a snapshot maps it"
    );
    drop(old_snapshot);
    assert!(
        !compacted_path.exists(),
        "file deleted after the last snapshot"
    );
    drop(store);
    let store = Store::open(dir.path(), small_options()).unwrap();
    assert_eq!(store.recovery_report().frames_replayed, 0);
    let snapshot = store.snapshot();
    for i in 0..20u32 {
        assert_eq!(
            snapshot.get(ks, &i.to_be_bytes()).unwrap(),
            Some(&vec![9u8; 500][..])
        );
    }
    assert!(store.verify().unwrap().is_clean());
}

#[test]
fn group_commit_shares_fsyncs_between_threads() {
    let dir = tempfile::tempdir().unwrap();
    let store = Arc::new(Store::open(dir.path(), StoreOptions::default()).unwrap());
    let ks = store.keyspace("k").unwrap();
    let fsyncs_before = store.stats().fsyncs;
    let threads: Vec<_> = (0..8u32)
        .map(|t| {
            let store = store.clone();
            std::thread::spawn(move || {
                for i in 0..25u32 {
                    let mut batch = WriteBatch::new();
                    batch.put(ks, &[t.to_be_bytes(), i.to_be_bytes()].concat(), b"v");
                    store.commit(batch).unwrap();
                }
            })
        })
        .collect();
    for thread in threads {
        thread.join().unwrap();
    }
    let stats = store.stats();
    assert_eq!(stats.keyspaces[0].keys, 200);
    let fsyncs = stats.fsyncs - fsyncs_before;
    // Eight threads committing at once on a real disk always overlap somewhere, so some
    // commits must have shared an fsync.
    assert!(
        fsyncs < 200,
        "no fsync was shared: {fsyncs} fsyncs for 200 commits"
    );
    eprintln!("group commit: 200 commits from 8 threads took {fsyncs} fsyncs");
}

#[test]
fn readers_on_other_threads_see_consistent_snapshots() {
    let store = Arc::new(Store::open_in_memory().unwrap());
    let ks = store.keyspace("k").unwrap();
    let writer = {
        let store = store.clone();
        std::thread::spawn(move || {
            for round in 0..200u32 {
                // Every batch writes the same value under both keys: a reader must never see them differ.
                let mut batch = WriteBatch::new();
                batch.put(ks, b"left", &round.to_be_bytes()).put(
                    ks,
                    b"right",
                    &round.to_be_bytes(),
                );
                store.commit(batch).unwrap();
            }
        })
    };
    let readers: Vec<_> = (0..2)
        .map(|_| {
            let store = store.clone();
            std::thread::spawn(move || {
                for _ in 0..2000 {
                    let snapshot = store.snapshot();
                    let left = snapshot.get(ks, b"left").unwrap().map(<[u8]>::to_vec);
                    let right = snapshot.get(ks, b"right").unwrap().map(<[u8]>::to_vec);
                    assert_eq!(left, right);
                }
            })
        })
        .collect();
    writer.join().unwrap();
    for reader in readers {
        reader.join().unwrap();
    }
}

#[test]
fn failed_fsync_poisons_the_handle_until_reopen() {
    let backend = MemoryBackend::new();
    let store =
        Store::open_with_backend(Arc::new(backend.clone()), "/db", small_options()).unwrap();
    let ks = store.keyspace("k").unwrap();
    let next_sync = backend.counters().syncs + 1;
    backend.set_faults(FaultPlan {
        fail_sync_at: Some(next_sync),
        ..FaultPlan::default()
    });
    let mut batch = WriteBatch::new();
    batch.put(ks, b"a", b"1");
    let error = store.commit(batch.clone()).unwrap_err();
    assert!(matches!(error, Error::Io { .. }), "{error}");
    assert!(store.is_poisoned());
    let error = store.commit(batch.clone()).unwrap_err();
    assert!(matches!(error, Error::Poisoned { .. }));
    assert!(error.to_string().contains("reopen the store"), "{error}");
    // Reads still work.
    assert!(store.snapshot().len(ks).is_ok());
    drop(store);
    let store = Store::open_with_backend(Arc::new(backend), "/db", small_options()).unwrap();
    store.commit(batch).unwrap();
}

#[test]
fn interval_and_buffered_modes_persist_on_close() {
    for durability in [
        Durability::SyncInterval(Duration::from_millis(5)),
        Durability::OsBuffered,
    ] {
        let dir = tempfile::tempdir().unwrap();
        let options = StoreOptions {
            durability,
            ..small_options()
        };
        {
            let store = Store::open(dir.path(), options.clone()).unwrap();
            let ks = store.keyspace("k").unwrap();
            for i in 0..50u32 {
                let mut batch = WriteBatch::new();
                batch.put(ks, &i.to_be_bytes(), b"value");
                store.commit(batch).unwrap();
            }
            if durability != Durability::OsBuffered {
                // The interval thread syncs every 5 ms; on a loaded machine it may be
                // scheduled late, so wait for it (up to a generous bound) rather than a
                // fixed sleep.
                let deadline = std::time::Instant::now() + Duration::from_secs(30);
                while store.stats().fsyncs == 0 && std::time::Instant::now() < deadline {
                    std::thread::sleep(Duration::from_millis(5));
                }
                assert!(store.stats().fsyncs > 0, "interval thread synced");
            }
        }
        let store = Store::open(dir.path(), options).unwrap();
        let ks = store.keyspace_id("k").unwrap();
        assert_eq!(store.snapshot().len(ks).unwrap(), 50);
    }
}

#[test]
fn large_batch_gets_its_own_segment() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path(), small_options()).unwrap();
    let ks = store.keyspace("k").unwrap();
    let big = vec![3u8; 100_000];
    let mut batch = WriteBatch::new();
    batch.put(ks, b"big", &big);
    store.commit(batch).unwrap();
    drop(store);
    let store = Store::open(dir.path(), small_options()).unwrap();
    assert_eq!(store.get(ks, b"big").unwrap(), Some(big));
}

#[test]
fn invalid_options_are_rejected() {
    let dir = tempfile::tempdir().unwrap();
    let options = StoreOptions {
        segment_size: 100,
        ..StoreOptions::default()
    };
    assert!(matches!(
        Store::open(dir.path(), options),
        Err(Error::InvalidOptions(_))
    ));
}

#[test]
fn stats_count_live_and_dead_bytes() {
    let store = Store::open_in_memory().unwrap();
    let ks = store.keyspace("k").unwrap();
    let mut batch = WriteBatch::new();
    batch.put(ks, b"a", &[1u8; 100]);
    store.commit(batch).unwrap();
    let first = store.stats();
    let mut batch = WriteBatch::new();
    batch.put(ks, b"a", &[2u8; 100]);
    store.commit(batch).unwrap();
    let second = store.stats();
    let live =
        |s: &spillway_store::StoreStats| s.segments.iter().map(|s| s.live_bytes).sum::<u64>();
    let dead =
        |s: &spillway_store::StoreStats| s.segments.iter().map(|s| s.dead_bytes).sum::<u64>();
    assert_eq!(live(&first), live(&second));
    assert!(dead(&second) > dead(&first) + 100);
    assert_eq!(second.keyspaces[0].keys, 1);
    assert_eq!(second.frames_written, 3);
    assert!(second.fsyncs >= 3);
}

#[test]
fn crash_during_creation_is_not_corruption_but_a_lost_manifest_is() {
    use spillway_store::backend::{Backend, CrashMode};
    use std::path::Path;
    // Creation interrupted after the first segment but before the manifest.
    let backend = MemoryBackend::new();
    let store = Store::open_with_backend(Arc::new(backend.clone()), "/c", small_options()).unwrap();
    let ks = store.keyspace("k").unwrap();
    drop(store);
    let crashed = backend.crash(CrashMode::LoseUnsynced);
    crashed.remove_file(Path::new("/c/MANIFEST")).unwrap();
    // The segment holds a frame (the keyspace), so this is a damaged store, not a fresh one.
    let error =
        Store::open_with_backend(Arc::new(crashed.clone()), "/c", small_options()).unwrap_err();
    assert!(error.is_corruption(), "{error}");
    // Repair rebuilds it from the segments.
    let report =
        Store::repair_with_backend(Arc::new(crashed.clone()), "/c", small_options()).unwrap();
    assert!(!report.checkpoint_used);
    let store = Store::open_with_backend(Arc::new(crashed), "/c", small_options()).unwrap();
    assert_eq!(store.keyspace_id("k"), Some(ks));

    let fresh = MemoryBackend::new();
    fresh.create_dir_all(Path::new("/d")).unwrap();
    let file = fresh.create_file(Path::new("/d/seg-00000001.spw")).unwrap();
    file.write_all_at(&[1u8; 32], 0).unwrap();
    file.set_len(4096).unwrap();
    drop(file);
    let store = Store::open_with_backend(Arc::new(fresh), "/d", small_options()).unwrap();
    assert!(store.keyspaces().is_empty());
}

#[test]
fn handles_and_snapshots_can_cross_threads() {
    fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<Store>();
    assert_send_sync::<spillway_store::Snapshot>();
    assert_send_sync::<WriteBatch>();
    // A snapshot outlives the store that produced it.
    let store = Store::open_in_memory().unwrap();
    let ks = store.keyspace("k").unwrap();
    let mut batch = WriteBatch::new();
    batch.put(ks, b"key", b"value");
    store.commit(batch).unwrap();
    let snapshot = store.snapshot();
    drop(store);
    let reader = std::thread::spawn(move || snapshot.get(ks, b"key").unwrap().map(<[u8]>::to_vec));
    assert_eq!(reader.join().unwrap(), Some(b"value".to_vec()));
}

/// Commits `count` batches of one 1 KiB value each under distinct keys.
fn write_kib(store: &Store, count: u32) {
    let keyspace = store.keyspace("values").unwrap();
    for n in 0..count {
        let mut batch = WriteBatch::new();
        batch.put(keyspace, &n.to_be_bytes(), &[(n % 251) as u8; 1024]);
        store.commit(batch).unwrap();
    }
}

fn values_after_reopen(dir: &std::path::Path, options: StoreOptions) -> (Store, usize) {
    let store = Store::open(dir, options).unwrap();
    let keyspace = store.keyspace("values").unwrap();
    let snapshot = store.snapshot();
    let count = collect(&snapshot, snapshot.iter(keyspace).unwrap()).len();
    drop(snapshot);
    (store, count)
}

/// A long log is checkpointed on the way (in the background) and on close: the next open
/// replays only what came after the last checkpoint, and every value is there.
#[test]
fn automatic_checkpoints_bound_the_log_an_open_replays() {
    let dir = tempfile::tempdir().unwrap();
    let options = StoreOptions {
        segment_size: 256 * 1024,
        checkpoint_after_log_bytes: 64 * 1024,
        ..StoreOptions::default()
    };
    {
        let store = Store::open(dir.path(), options.clone()).unwrap();
        write_kib(&store, 1000);
    }
    let (store, count) = values_after_reopen(dir.path(), options.clone());
    assert_eq!(count, 1000);
    let report = store.recovery_report();
    assert!(report.checkpoint_loaded);
    assert!(
        report.log_bytes_replayed < 64 * 1024,
        "replayed {} bytes of log",
        report.log_bytes_replayed
    );
    drop(store);
    // A few commits more, with a larger interval (options are not stored: each open has its
    // own), so that neither a background nor a closing checkpoint can run whatever the log
    // left since the last one: the next open replays what this one did and those commits.
    let roomy = StoreOptions {
        checkpoint_after_log_bytes: 1 << 20,
        ..options
    };
    let (store, _) = values_after_reopen(dir.path(), roomy.clone());
    let report = store.recovery_report();
    let replayed = (report.frames_replayed, report.log_bytes_replayed);
    write_kib(&store, 3);
    drop(store);
    let (store, count) = values_after_reopen(dir.path(), roomy);
    assert_eq!(count, 1000);
    let report = store.recovery_report();
    assert_eq!(report.frames_replayed, replayed.0 + 3);
    assert!(report.log_bytes_replayed >= replayed.1 + 3 * 1024);
}

/// With automatic checkpoints off, nothing but an explicit call writes one.
#[test]
fn automatic_checkpoints_can_be_turned_off() {
    let dir = tempfile::tempdir().unwrap();
    let options = StoreOptions {
        segment_size: 256 * 1024,
        checkpoint_after_log_bytes: 0,
        ..StoreOptions::default()
    };
    {
        let store = Store::open(dir.path(), options.clone()).unwrap();
        write_kib(&store, 300);
    }
    let (store, count) = values_after_reopen(dir.path(), options.clone());
    assert_eq!(count, 300);
    let report = store.recovery_report();
    assert!(!report.checkpoint_loaded);
    assert_eq!(
        report.frames_replayed, 301,
        "the keyspace's creation and 300 commits"
    );
    assert!(report.log_bytes_replayed >= 300 * 1024);
    store.checkpoint().unwrap();
    drop(store);
    let (store, _) = values_after_reopen(dir.path(), options);
    assert!(store.recovery_report().checkpoint_loaded);
    assert_eq!(store.recovery_report().frames_replayed, 0);
}

#[test]
fn a_value_version_changes_with_every_write_of_the_key_and_marks_compaction_moves() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path(), small_options()).unwrap();
    let ks = store.keyspace("k").unwrap();
    let put = |key: &[u8], value: &[u8]| {
        let mut batch = WriteBatch::new();
        batch.put(ks, key, value);
        store.commit(batch).unwrap();
    };
    let version = |key: &[u8]| store.snapshot().version(ks, key).unwrap();
    assert_eq!(version(b"a"), None);
    put(b"a", b"same");
    let first = version(b"a").unwrap();
    assert!(!first.is_compacted());
    put(b"b", b"other");
    assert_eq!(version(b"a"), Some(first), "a write of another key");
    put(b"a", b"same");
    let second = version(b"a").unwrap();
    assert_ne!(
        second, first,
        "the same bytes written again are another version"
    );
    // Values overwritten until the segment of `a` is mostly garbage.
    for round in 0..4u8 {
        for key in 0..20u32 {
            put(&key.to_be_bytes(), &[round; 600]);
        }
    }
    store.compact().unwrap();
    let moved = version(b"a").unwrap();
    assert_ne!(moved, second);
    assert!(moved.is_compacted(), "compaction moved it");
    assert_eq!(store.get(ks, b"a").unwrap().as_deref(), Some(&b"same"[..]));
    put(b"a", b"same");
    assert!(!version(b"a").unwrap().is_compacted(), "a commit wrote it");
}
