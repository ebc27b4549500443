//! The key directory served from the mapped checkpoint (issue 14): after a checkpoint only the
//! keys changed since are held in memory, an open replays only the log after it, a version 1
//! checkpoint (written before issue 14) still opens and the next checkpoint writes the current
//! version (3, issue 31),
//! and a damaged checkpoint without a fallback (see `tests/fallback.rs` for the fallback)
//! refuses the open with an error naming the file.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use spillway_store::backend::{Backend, CrashMode, FaultPlan, MemoryBackend};
use spillway_store::{Error, KeyspaceId, Store, StoreOptions, WriteBatch};

const DIR: &str = "/mapped";

fn options() -> StoreOptions {
    StoreOptions {
        segment_size: 64 * 1024,
        // Only the explicit checkpoints of each test.
        checkpoint_after_log_bytes: 0,
        ..StoreOptions::default()
    }
}

fn open(backend: &MemoryBackend) -> Store {
    Store::open_with_backend(Arc::new(backend.clone()), DIR, options()).unwrap()
}

fn key(i: u32) -> Vec<u8> {
    format!("key-{i:06}").into_bytes()
}

fn put_range(store: &Store, ks: KeyspaceId, keys: std::ops::Range<u32>, tag: &str) {
    let mut batch = WriteBatch::new();
    for i in keys {
        batch.put(ks, &key(i), format!("{tag} {i}").as_bytes());
    }
    store.commit(batch).unwrap();
}

fn contents(store: &Store, ks: KeyspaceId) -> BTreeMap<Vec<u8>, Vec<u8>> {
    store
        .snapshot()
        .iter(ks)
        .unwrap()
        .map(|e| e.map(|(k, v)| (k.to_vec(), v.to_vec())).unwrap())
        .collect()
}

/// The checkpoint file the manifest names as current.
fn current_checkpoint(backend: &MemoryBackend) -> PathBuf {
    let manifest = backend
        .file_contents(&Path::new(DIR).join("MANIFEST"))
        .unwrap();
    let name = spillway_store::fuzzing::manifest_files(&manifest)
        .unwrap()
        .checkpoint
        .unwrap();
    Path::new(DIR).join(name)
}

/// Every checkpoint file in the directory (the current one and the fallback, or a leftover).
fn checkpoint_files(backend: &MemoryBackend) -> Vec<PathBuf> {
    backend
        .list_dir(Path::new(DIR))
        .unwrap()
        .into_iter()
        .filter(|name| name.starts_with("ckpt-"))
        .map(|name| Path::new(DIR).join(name))
        .collect()
}

fn checkpoint_version(backend: &MemoryBackend) -> u32 {
    let bytes = backend.file_contents(&current_checkpoint(backend)).unwrap();
    u32::from_le_bytes(bytes[8..12].try_into().unwrap())
}

/// Rewrites the manifest as a build before manifest version 2 wrote it: no fallback.
fn drop_the_fallback(backend: &MemoryBackend) {
    let path = Path::new(DIR).join("MANIFEST");
    let v1 = spillway_store::fuzzing::manifest_as_version_1(&backend.file_contents(&path).unwrap())
        .unwrap();
    backend.overwrite_file(&path, &v1).unwrap();
}

#[test]
fn only_keys_changed_since_the_checkpoint_are_held_in_memory() {
    let backend = MemoryBackend::new();
    let store = open(&backend);
    let ks = store.keyspace("k").unwrap();
    for chunk in 0..10 {
        put_range(&store, ks, chunk * 100..(chunk + 1) * 100, "v1");
    }
    assert_eq!(store.stats().keys_in_memory, 1000);
    store.checkpoint().unwrap();
    assert_eq!(store.stats().keys_in_memory, 0);
    assert_eq!(checkpoint_version(&backend), 3);

    // Changes after the checkpoint: overwrites, deletes of checkpointed keys (tombstones),
    // new keys, and a key that is added and deleted again (nothing to remember).
    put_range(&store, ks, 10..20, "v2");
    let mut batch = WriteBatch::new();
    for i in 500..505 {
        batch.delete(ks, &key(i));
    }
    batch.put(ks, &key(5000), b"new");
    batch.put(ks, &key(5001), b"gone again");
    store.commit(batch).unwrap();
    let mut batch = WriteBatch::new();
    batch.delete(ks, &key(5001));
    store.commit(batch).unwrap();
    assert_eq!(store.stats().keys_in_memory, 10 + 5 + 1);
    let expected = contents(&store, ks);
    assert_eq!(expected.len(), 1000 - 5 + 1);
    assert_eq!(
        store.snapshot().get(ks, &key(15)).unwrap(),
        Some(&b"v2 15"[..])
    );
    assert_eq!(store.snapshot().get(ks, &key(502)).unwrap(), None);
    let stats_before = store.stats();
    drop(store);

    let store = open(&backend);
    let report = store.recovery_report().clone();
    assert!(report.checkpoint_loaded);
    assert_eq!(
        report.frames_replayed, 3,
        "only the commits after the checkpoint"
    );
    assert_eq!(store.stats().keys_in_memory, 10 + 5 + 1);
    assert_eq!(contents(&store, ks), expected);
    assert_eq!(store.snapshot().len(ks).unwrap(), expected.len());
    // The live bytes per segment came from the checkpoint, not from a pass over the keys,
    // and agree with what the handle that wrote them counted.
    let live = |stats: &spillway_store::StoreStats| -> Vec<(u32, u64)> {
        stats
            .segments
            .iter()
            .map(|s| (s.id, s.live_bytes))
            .collect()
    };
    assert_eq!(live(&store.stats()), live(&stats_before));

    // A snapshot taken before the next checkpoint keeps reading the old archive (whose file
    // the checkpoint deletes) and the old overlay.
    let before = store.snapshot();
    put_range(&store, ks, 0..3, "v3");
    store.checkpoint().unwrap();
    assert_eq!(store.stats().keys_in_memory, 0);
    let old: BTreeMap<Vec<u8>, Vec<u8>> = before
        .iter(ks)
        .unwrap()
        .map(|e| e.map(|(k, v)| (k.to_vec(), v.to_vec())).unwrap())
        .collect();
    assert_eq!(old, expected);
    assert!(store.verify().unwrap().is_clean());
}

#[test]
fn a_version_1_checkpoint_opens_and_the_next_checkpoint_writes_version_3() {
    let backend = MemoryBackend::new();
    let store = open(&backend);
    let ks = store.keyspace("k").unwrap();
    let other = store.keyspace("other").unwrap();
    put_range(&store, ks, 0..300, "v1");
    put_range(&store, other, 0..7, "o");
    store.checkpoint().unwrap();
    put_range(&store, ks, 100..110, "after");
    let expected = (contents(&store, ks), contents(&store, other));
    drop(store);

    // Rewrite the checkpoint and the manifest as a build before issue 14 wrote them.
    drop_the_fallback(&backend);
    let file = current_checkpoint(&backend);
    let v1 =
        spillway_store::fuzzing::checkpoint_as_version_1(&backend.file_contents(&file).unwrap())
            .unwrap();
    backend.overwrite_file(&file, &v1).unwrap();
    let backend = backend.crash(CrashMode::LoseUnsynced);
    assert_eq!(checkpoint_version(&backend), 1);

    let store = open(&backend);
    assert!(store.recovery_report().checkpoint_loaded);
    assert_eq!(store.recovery_report().frames_replayed, 1);
    // Version 1 is loaded whole into memory, as before.
    assert_eq!(store.stats().keys_in_memory, 307);
    assert_eq!((contents(&store, ks), contents(&store, other)), expected);
    store.checkpoint().unwrap();
    assert_eq!(checkpoint_version(&backend), 3);
    assert_eq!(store.stats().keys_in_memory, 0);
    // The manifest is the current version (3) now, with the version 1 checkpoint as its
    // fallback.
    let manifest = backend
        .file_contents(&Path::new(DIR).join("MANIFEST"))
        .unwrap();
    assert_eq!(u32::from_le_bytes(manifest[8..12].try_into().unwrap()), 3);
    let fallback = spillway_store::fuzzing::manifest_files(&manifest)
        .unwrap()
        .fallback;
    assert_eq!(
        fallback.as_deref(),
        file.file_name().and_then(|name| name.to_str())
    );
    drop(store);

    let store = open(&backend);
    assert_eq!(store.stats().keys_in_memory, 0);
    assert_eq!((contents(&store, ks), contents(&store, other)), expected);
    assert!(store.verify().unwrap().is_clean());
}

#[test]
fn a_damaged_checkpoint_without_a_fallback_refuses_the_open_naming_the_file() {
    let backend = MemoryBackend::new();
    let store = open(&backend);
    let ks = store.keyspace("k").unwrap();
    put_range(&store, ks, 0..500, "v");
    store.checkpoint().unwrap();
    drop(store);
    drop_the_fallback(&backend);
    let file = current_checkpoint(&backend);
    let intact = backend.file_contents(&file).unwrap();
    // Every region: header, archive structure at the end, key bytes and entries in between.
    let offsets = [
        9,
        13,
        40,
        intact.len() / 3,
        intact.len() / 2,
        intact.len() - 20,
        intact.len() - 1,
    ];
    for offset in offsets {
        let mut damaged = intact.clone();
        damaged[offset] ^= 0x10;
        backend.overwrite_file(&file, &damaged).unwrap();
        match Store::open_with_backend(Arc::new(backend.clone()), DIR, options()) {
            Err(Error::Corrupt { path, reason, .. }) => {
                assert_eq!(path, file, "offset {offset}");
                assert!(
                    reason.contains("no fallback") && reason.contains("run repair"),
                    "{reason}"
                );
            }
            Err(other) => panic!("offset {offset}: {other}"),
            Ok(_) => panic!("offset {offset}: a damaged checkpoint was accepted"),
        }
    }
    // A truncated one too.
    backend
        .overwrite_file(&file, &intact[..intact.len() - 8])
        .unwrap();
    assert!(matches!(
        Store::open_with_backend(Arc::new(backend.clone()), DIR, options()),
        Err(Error::Corrupt { path, .. }) if path == file
    ));
    backend.overwrite_file(&file, &intact).unwrap();
    // A fresh backend from the durable contents (the in-memory file counts the bytes that a
    // shortening dropped as unallocated, and would refuse to be mapped).
    let backend = backend.crash(CrashMode::LoseUnsynced);
    let store = open(&backend);
    assert_eq!(contents(&store, ks).len(), 500);
}

/// Compaction rewrites values that the checkpoint points to: the moved locations go to the
/// overlay, and the compaction's own checkpoint folds them into a new archive.
#[test]
fn compaction_moves_checkpointed_values_and_reopen_reads_them() {
    let backend = MemoryBackend::new();
    let store = Store::open_with_backend(
        Arc::new(backend.clone()),
        DIR,
        StoreOptions {
            segment_size: 8 * 1024,
            compaction_live_ratio: 0.9,
            ..options()
        },
    )
    .unwrap();
    let ks = store.keyspace("k").unwrap();
    for round in 0..4 {
        for chunk in 0..10 {
            put_range(
                &store,
                ks,
                chunk * 20..chunk * 20 + 20 - round,
                &format!("r{round}"),
            );
        }
        store.checkpoint().unwrap();
    }
    let expected = contents(&store, ks);
    let report = store.compact().unwrap();
    assert!(report.records_moved > 0, "{report:?}");
    assert_eq!(store.stats().keys_in_memory, 0);
    assert_eq!(contents(&store, ks), expected);
    drop(store);
    let store = open(&backend);
    assert_eq!(contents(&store, ks), expected);
    assert!(store.verify().unwrap().is_clean());
}

/// Recomputes the checksums of a version 3 checkpoint after its body was changed: every
/// block's, the block table's, the header's (what a wrong writer would have written).
fn reseal(bytes: &mut [u8]) {
    assert_eq!(u32::from_le_bytes(bytes[8..12].try_into().unwrap()), 3);
    let body_len = u64::from_le_bytes(bytes[16..24].try_into().unwrap()) as usize;
    let block_len = u32::from_le_bytes(bytes[24..28].try_into().unwrap()) as usize;
    let table: Vec<u8> = bytes[32..32 + body_len]
        .chunks(block_len)
        .flat_map(|block| crc32fast::hash(block).to_le_bytes())
        .collect();
    bytes[32 + body_len..].copy_from_slice(&table);
    bytes[12..16].copy_from_slice(&crc32fast::hash(&table).to_le_bytes());
    let header_crc = crc32fast::hash(&bytes[..28]);
    bytes[28..32].copy_from_slice(&header_crc.to_le_bytes());
}

/// A checkpoint with valid checksums but keys out of order (only a wrong writer could produce
/// one) is accepted by the open, whose checks are what a memory-safe, damage-detecting open
/// needs, and reported by `verify`, which checks every key.
#[test]
fn verify_checks_the_key_order_an_open_does_not() {
    let backend = MemoryBackend::new();
    let store = open(&backend);
    let ks = store.keyspace("k").unwrap();
    put_range(&store, ks, 0..50, "v");
    store.checkpoint().unwrap();
    assert!(store.verify().unwrap().is_clean());
    drop(store);
    let file = current_checkpoint(&backend);
    let mut bytes = backend.file_contents(&file).unwrap();
    let pair = b"key-000010key-000011";
    let at = bytes
        .windows(pair.len())
        .position(|w| w == pair)
        .expect("consecutive keys in the key bytes");
    bytes[at..at + pair.len()].copy_from_slice(b"key-000011key-000010");
    reseal(&mut bytes);
    backend.overwrite_file(&file, &bytes).unwrap();

    let store = open(&backend);
    let report = store.verify().unwrap();
    assert!(
        report
            .damage
            .iter()
            .any(|d| d.path == file && d.reason.contains("out of order")),
        "{report:?}"
    );
    // Repair starts from an in-memory decode, which checks every key: it does not use this
    // checkpoint, and rebuilds the store from the log.
    drop(store);
    let repaired = Store::repair_with_backend(Arc::new(backend.clone()), DIR, options()).unwrap();
    assert!(!repaired.checkpoint_used);
    let store = open(&backend);
    assert_eq!(contents(&store, ks).len(), 50);
    assert!(store.verify().unwrap().is_clean());
}

/// Lookups in the archive go through fences (the 8-byte prefix of every 64th key) first:
/// keys that share their first 8 bytes across many blocks, keys shorter than 8 bytes and the
/// empty key must all be found, absent keys between them not, and scans must start right.
#[test]
fn fenced_lookups_find_every_key_whatever_its_prefix() {
    let backend = MemoryBackend::new();
    let store = open(&backend);
    let ks = store.keyspace("k").unwrap();
    let mut expected: BTreeMap<Vec<u8>, Vec<u8>> = BTreeMap::new();
    let mut keys: Vec<Vec<u8>> = vec![
        Vec::new(),
        b"\x00".to_vec(),
        b"a".to_vec(),
        b"ab".to_vec(),
        b"abcdefg".to_vec(),
        b"abcdefgh".to_vec(),
        b"abcdefgh\x00".to_vec(),
        vec![0xff; 12],
    ];
    // 1,000 keys in 4 runs that each share an 8-byte prefix over several blocks of 64.
    keys.extend((0..1000).map(|i| format!("{:08}-{i:05}", i / 300).into_bytes()));
    for chunk in keys.chunks(100) {
        let mut batch = WriteBatch::new();
        for key in chunk {
            batch.put(ks, key, key);
            expected.insert(key.clone(), key.clone());
        }
        store.commit(batch).unwrap();
    }
    store.checkpoint().unwrap();
    drop(store);
    let store = open(&backend);
    assert_eq!(store.stats().keys_in_memory, 0);
    let snapshot = store.snapshot();
    for key in &keys {
        assert_eq!(snapshot.get(ks, key).unwrap(), Some(&key[..]), "{key:?}");
        let mut absent = key.clone();
        absent.push(0x01);
        if !expected.contains_key(&absent) {
            assert_eq!(snapshot.get(ks, &absent).unwrap(), None, "{absent:?}");
        }
        let from: Vec<Vec<u8>> = snapshot
            .range(
                ks,
                (
                    std::ops::Bound::Excluded(&key[..]),
                    std::ops::Bound::Unbounded,
                ),
            )
            .unwrap()
            .take(3)
            .map(|e| e.unwrap().0.to_vec())
            .collect();
        let want: Vec<Vec<u8>> = expected
            .range::<Vec<u8>, _>((std::ops::Bound::Excluded(key), std::ops::Bound::Unbounded))
            .take(3)
            .map(|(k, _)| k.clone())
            .collect();
        assert_eq!(from, want, "{key:?}");
    }
    assert_eq!(contents(&store, ks), expected);
    assert!(store.verify().unwrap().is_clean());
}

/// A store whose checkpoint is version 1 (written before issue 14), durable.
fn upgrade_base() -> MemoryBackend {
    let backend = MemoryBackend::new();
    let store = open(&backend);
    let ks = store.keyspace("k").unwrap();
    put_range(&store, ks, 0..200, "base");
    store.checkpoint().unwrap();
    put_range(&store, ks, 0..20, "after");
    drop(store);
    drop_the_fallback(&backend);
    let file = current_checkpoint(&backend);
    let v1 =
        spillway_store::fuzzing::checkpoint_as_version_1(&backend.file_contents(&file).unwrap())
            .unwrap();
    backend.overwrite_file(&file, &v1).unwrap();
    let backend = backend.crash(CrashMode::LoseUnsynced);
    assert_eq!(checkpoint_version(&backend), 1);
    backend
}

/// Opens the version 1 store, commits batches with the first (version 3) checkpoint among
/// them, until the first error; returns the batches acknowledged.
fn upgrade_workload(backend: &MemoryBackend, plan: FaultPlan) -> Vec<u32> {
    let store = open(backend);
    let ks = store.keyspace_id("k").unwrap();
    backend.set_faults(plan);
    let mut acknowledged = Vec::new();
    for n in 0..6u32 {
        let mut batch = WriteBatch::new();
        batch.put(ks, format!("u{n}").as_bytes(), b"upgrade");
        batch.delete(ks, &key(100 + n));
        if store.commit(batch).is_err() {
            break;
        }
        acknowledged.push(n);
        if n == 2 && store.checkpoint().is_err() {
            break;
        }
    }
    acknowledged
}

/// Power loss at every fsync of the first checkpoint after an upgrade (and of the commits
/// around it), with unsynced sectors torn: the store reopens, from the version 1 or the
/// version 3 checkpoint, with every acknowledged commit and nothing half applied.
#[test]
fn power_loss_during_the_upgrading_checkpoint_loses_nothing() {
    let base = upgrade_base();
    let calls = {
        let backend = base.crash(CrashMode::LoseUnsynced);
        assert_eq!(upgrade_workload(&backend, FaultPlan::default()).len(), 6);
        assert_eq!(checkpoint_version(&backend), 3);
        backend.counters().syncs
    };
    assert!(calls >= 8, "{calls} syncs");
    let mut reopened_from = [0u32; 4];
    for n in 1..=calls {
        for seed in [1u64, 2] {
            let backend = base.crash(CrashMode::LoseUnsynced);
            let plan = FaultPlan {
                fail_sync_at: Some(n),
                ..FaultPlan::default()
            };
            let acknowledged = upgrade_workload(&backend, plan);
            let crashed = backend.crash(CrashMode::TearUnsynced { seed });
            let what = format!("power loss at fsync {n} (seed {seed})");
            let store = Store::open_with_backend(Arc::new(crashed.clone()), DIR, options())
                .unwrap_or_else(|e| panic!("{what}: reopen failed: {e}"));
            let ks = store.keyspace_id("k").unwrap();
            let found = contents(&store, ks);
            // Batches are all or nothing, in order: some prefix 0..last survived, and it
            // includes every acknowledged one.
            let last = (0..6u32)
                .take_while(|n| found.contains_key(format!("u{n}").as_bytes()))
                .count();
            assert!(
                last >= acknowledged.len(),
                "{what}: acknowledged batch lost"
            );
            let mut expected: BTreeMap<Vec<u8>, Vec<u8>> = (0..200)
                .map(|i| {
                    (
                        key(i),
                        format!("{} {i}", if i < 20 { "after" } else { "base" }).into_bytes(),
                    )
                })
                .collect();
            for n in 0..last as u32 {
                expected.insert(format!("u{n}").into_bytes(), b"upgrade".to_vec());
                expected.remove(&key(100 + n));
            }
            assert_eq!(found, expected, "{what}");
            assert!(store.verify().unwrap().is_clean(), "{what}");
            reopened_from[checkpoint_version(&crashed) as usize] += 1;
        }
    }
    // Power failed both before and after the manifest named the new checkpoint.
    assert!(
        reopened_from[1] > 0 && reopened_from[3] > 0,
        "{reopened_from:?}"
    );
}

/// Keys of [`streamed_base`]: 40,000 of 40 bytes make a checkpoint body of 2.6 MB (40 bytes of
/// key and 24 of entry each), more than the writer's 2 MiB buffer.
const STREAMED_KEYS: u32 = 40_000;

fn streamed_key(i: u32) -> Vec<u8> {
    format!("streamed-{i:031}").into_bytes()
}

fn streamed_options() -> StoreOptions {
    StoreOptions {
        segment_size: 4 << 20,
        ..options()
    }
}

fn open_streamed(backend: &MemoryBackend) -> Store {
    Store::open_with_backend(Arc::new(backend.clone()), DIR, streamed_options()).unwrap()
}

/// A closed store with [`STREAMED_KEYS`] keys checkpointed, then one commit on top (400
/// overwrites and 400 deletes of checkpointed keys): its next checkpoint merges a mapped base
/// and an overlay.
fn streamed_base() -> MemoryBackend {
    let backend = MemoryBackend::new();
    let store = open_streamed(&backend);
    let ks = store.keyspace("big").unwrap();
    for chunk in (0..STREAMED_KEYS).step_by(10_000) {
        let mut batch = WriteBatch::new();
        for i in chunk..chunk + 10_000 {
            batch.put(ks, &streamed_key(i), &i.to_le_bytes());
        }
        store.commit(batch).unwrap();
    }
    store.checkpoint().unwrap();
    let mut batch = WriteBatch::new();
    for i in (0..STREAMED_KEYS).step_by(100) {
        batch.put(ks, &streamed_key(i), b"changed");
        batch.delete(ks, &streamed_key(i + 1));
    }
    store.commit(batch).unwrap();
    backend
}

/// A write failing anywhere in a streamed checkpoint file (the header's place, each buffer of
/// the body, the header; whole or torn), or the disk filling up in the middle of the body: the
/// checkpoint fails without poisoning the handle, the previous checkpoint stays in force (a
/// reopen after a power loss loads it and replays the one commit after it), and the next
/// checkpoint succeeds.
#[test]
fn a_fault_in_the_middle_of_a_streamed_checkpoint_keeps_the_previous_one() {
    let base = streamed_base();
    // The write calls and the space a checkpoint takes, from a run without faults.
    let (first_write, writes, space_before, space_after) = {
        let backend = base.crash(CrashMode::LoseUnsynced);
        let store = open_streamed(&backend);
        let before = backend.counters();
        store.checkpoint().unwrap();
        let after = backend.counters();
        (
            before.writes + 1,
            after.writes - before.writes,
            before.space_used,
            after.space_used,
        )
    };
    // The header's place, at least two buffers of body, the header, then the manifest.
    assert!(writes >= 5, "the checkpoint took {writes} writes");
    let failed_writes = (first_write..first_write + writes - 1).map(|n| FaultPlan {
        fail_write_at: Some(n),
        tear_failed_write: n % 2 == 0,
        ..FaultPlan::default()
    });
    let disk_full = FaultPlan {
        no_space_after_bytes: Some(space_before + (space_after - space_before) / 2),
        ..FaultPlan::default()
    };
    for plan in failed_writes.chain([disk_full]) {
        let what = format!("{plan:?}");
        let backend = base.crash(CrashMode::LoseUnsynced);
        let store = open_streamed(&backend);
        let ks = store.keyspace_id("big").unwrap();
        let previous = checkpoint_files(&backend);
        let expected = contents(&store, ks);
        let keys_in_memory = store.stats().keys_in_memory;
        assert_eq!(keys_in_memory, 2 * u64::from(STREAMED_KEYS / 100));

        backend.set_faults(plan.clone());
        let error = store.checkpoint().unwrap_err();
        backend.set_faults(FaultPlan::default());
        assert!(!store.is_poisoned(), "{what}: {error}");
        if plan.no_space_after_bytes.is_some() {
            assert!(error.is_disk_full(), "{what}: {error}");
        }
        assert_eq!(checkpoint_files(&backend), previous, "{what}: {error}");
        assert_eq!(store.stats().keys_in_memory, keys_in_memory, "{what}");
        assert_eq!(contents(&store, ks), expected, "{what}");

        let reopened = open_streamed(&backend.crash(CrashMode::LoseUnsynced));
        let report = reopened.recovery_report();
        assert!(report.checkpoint_loaded, "{what}");
        assert_eq!(report.frames_replayed, 1, "{what}: the previous checkpoint");
        assert_eq!(reopened.stats().keys_in_memory, keys_in_memory, "{what}");
        assert_eq!(contents(&reopened, ks), expected, "{what}");
        drop(reopened);

        let current = current_checkpoint(&backend);
        store.checkpoint().unwrap();
        assert_ne!(current_checkpoint(&backend), current, "{what}");
        assert_eq!(
            checkpoint_files(&backend).len(),
            2,
            "{what}: current and fallback"
        );
        assert_eq!(store.stats().keys_in_memory, 0, "{what}");
        drop(store);
        let reopened = open_streamed(&backend.crash(CrashMode::LoseUnsynced));
        assert_eq!(reopened.recovery_report().frames_replayed, 0, "{what}");
        assert_eq!(reopened.stats().keys_in_memory, 0, "{what}");
        assert_eq!(contents(&reopened, ks), expected, "{what}");
        assert!(reopened.verify().unwrap().is_clean(), "{what}");
    }
}
