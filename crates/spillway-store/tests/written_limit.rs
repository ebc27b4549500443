//! The active segment's written limit (manifest version 3): frames are written only below a
//! limit the manifest records first, so an open looks for intact frames and non-zero bytes
//! after the end of the log only up to there, instead of reading the whole unused segment.
//! Power loss at every manifest write that raises it is in `faults.rs`, kills in `crash.rs`.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use spillway_store::backend::{CrashMode, MemoryBackend};
use spillway_store::{Durability, Store, StoreOptions, WriteBatch, fuzzing};

const DIR: &str = "/written-limit";
/// A 1 MiB segment raises its limit 64 KiB at a time (a sixteenth).
const SEGMENT: u64 = 1 << 20;
const STEP: u64 = SEGMENT / 16;

fn options() -> StoreOptions {
    StoreOptions {
        durability: Durability::SyncEveryCommit,
        segment_size: SEGMENT,
        ..StoreOptions::default()
    }
}

fn open(backend: &MemoryBackend) -> Store {
    Store::open_with_backend(Arc::new(backend.clone()), DIR, options()).unwrap()
}

fn written_limit(backend: &MemoryBackend) -> u64 {
    let manifest = backend
        .file_contents(&Path::new(DIR).join("MANIFEST"))
        .unwrap();
    fuzzing::manifest_written_limit(&manifest).unwrap()
}

fn segment(id: u32) -> PathBuf {
    Path::new(DIR).join(format!("seg-{id:08x}.spw"))
}

/// The active segment's end of log: its header and the bytes written into it.
fn active_end(store: &Store) -> u64 {
    let active = store
        .stats()
        .segments
        .into_iter()
        .find(|segment| segment.active)
        .unwrap();
    32 + active.written_bytes
}

fn put(store: &Store, key: &str, len: usize) {
    let ks = store.keyspace("k").unwrap();
    let mut batch = WriteBatch::new();
    batch.put(ks, key.as_bytes(), &vec![key.len() as u8; len]);
    store.commit(batch).unwrap();
}

#[test]
fn the_limit_covers_every_frame_and_is_raised_a_step_at_a_time() {
    let backend = MemoryBackend::new();
    let store = open(&backend);
    assert_eq!(written_limit(&backend), STEP, "a new store's first step");
    let mut raises = 0;
    let mut last = written_limit(&backend);
    for n in 0..200 {
        // Mostly small frames, some larger than a step, some rotating the segment.
        let len = match n % 17 {
            3 => 150_000,
            9 => 70_000,
            _ => 300 + n * 13,
        };
        put(&store, &format!("key{n:03}"), len);
        let limit = written_limit(&backend);
        let end = active_end(&store);
        assert!(
            end <= limit && limit <= SEGMENT,
            "commit {n}: log ends at {end}, limit {limit}"
        );
        assert!(
            limit - end < STEP || limit == SEGMENT,
            "commit {n}: limit {limit} more than a step past {end}"
        );
        if limit != last {
            raises += 1;
            last = limit;
        }
    }
    // About one manifest write per step of log (and per rotation), not one per commit.
    let log: u64 = store.stats().segments.iter().map(|s| s.written_bytes).sum();
    assert!(
        raises > 0 && raises <= log / STEP + 16,
        "{raises} raises for {log} bytes"
    );
}

#[test]
fn an_open_reads_the_unused_tail_of_the_active_segment_only_up_to_the_limit() {
    let backend = MemoryBackend::new();
    let store = open(&backend);
    for n in 0..10 {
        put(&store, &format!("key{n}"), 500);
    }
    let end = active_end(&store);
    drop(store);
    let limit = written_limit(&backend);
    assert_eq!(limit, STEP);
    let intact = backend.file_contents(&segment(1)).unwrap();
    let with_bytes_at = |at: usize| {
        let mut bytes = intact.clone();
        bytes[at..at + 8].copy_from_slice(b"FOREIGN!");
        let copy = backend.crash(CrashMode::LoseUnsynced);
        copy.overwrite_file(&segment(1), &bytes).unwrap();
        copy
    };

    // Below the limit, after the log: read by the open, dropped as a torn tail (they are no
    // intact frame), zeroed.
    let store = open(&with_bytes_at(end as usize + 4096));
    let torn_tail = store.recovery_report().torn_tail.clone().unwrap();
    assert_eq!(torn_tail.offset, end);
    assert_eq!(torn_tail.bytes_dropped, 4096 + 8);
    assert!(store.verify().unwrap().is_clean());
    drop(store);

    // Past the limit, where the store never writes: not read. (Only something other than the
    // store can put bytes there; a later frame overwrites them, or the open that reaches them
    // drops them as a torn tail.)
    let copy = with_bytes_at(limit as usize + 4096);
    let store = open(&copy);
    assert_eq!(store.recovery_report().torn_tail, None);
    assert_eq!(
        store.get(store.keyspace_id("k").unwrap(), b"key9").unwrap(),
        Some(vec![4; 500])
    );
    for n in 10..200 {
        put(&store, &format!("key{n}"), 500);
    }
    assert!(written_limit(&copy) > limit + 4096);
    drop(store);
    let store = open(&copy);
    assert_eq!(store.stats().keyspaces[0].keys, 200);
    assert!(store.verify().unwrap().is_clean());
}

#[test]
fn a_version_2_manifest_opens_and_its_first_commit_records_a_limit() {
    let backend = MemoryBackend::new();
    let store = open(&backend);
    for n in 0..5 {
        put(&store, &format!("key{n}"), 1000);
    }
    drop(store);
    let path = Path::new(DIR).join("MANIFEST");
    let v2 = fuzzing::manifest_as_version_2(&backend.file_contents(&path).unwrap()).unwrap();
    backend.overwrite_file(&path, &v2).unwrap();
    assert_eq!(written_limit(&backend), 0, "version 2: unknown");

    let store = open(&backend);
    assert_eq!(store.recovery_report().torn_tail, None);
    put(&store, "after the upgrade", 1000);
    let limit = written_limit(&backend);
    assert!(limit >= active_end(&store) && limit <= STEP, "{limit}");
    drop(store);
    let store = open(&backend);
    for n in 0..5 {
        assert!(
            store
                .get(
                    store.keyspace_id("k").unwrap(),
                    format!("key{n}").as_bytes()
                )
                .unwrap()
                .is_some()
        );
    }
    assert!(store.verify().unwrap().is_clean());
}

#[test]
fn frames_past_a_wrong_limit_are_replayed_all_the_same() {
    // The store never writes past the limit; if a manifest said less than was written (a bug,
    // a hand-edited file), the open must still replay every frame, only its search after the
    // log is bounded.
    let backend = MemoryBackend::new();
    let store = open(&backend);
    for n in 0..100 {
        put(&store, &format!("key{n:03}"), 1500);
    }
    let end = active_end(&store);
    drop(store);
    assert!(end > STEP, "{end}");
    let path = Path::new(DIR).join("MANIFEST");
    let lowered =
        fuzzing::manifest_with_written_limit(&backend.file_contents(&path).unwrap(), 4096).unwrap();
    backend.overwrite_file(&path, &lowered).unwrap();
    let store = open(&backend);
    assert_eq!(store.recovery_report().torn_tail, None);
    assert_eq!(store.stats().keyspaces[0].keys, 100);
    assert_eq!(active_end(&store), end);
    put(&store, "after", 1500);
    assert!(written_limit(&backend) >= active_end(&store));
    drop(store);
    assert_eq!(open(&backend).stats().keyspaces[0].keys, 101);
}
