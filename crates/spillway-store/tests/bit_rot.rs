//! Bit rot: single bit flips anywhere in sealed segments (log and compacted) and in the
//! checkpoint. Every flip must be detected — by open (an `Error::Corrupt`), by a read of the
//! damaged value, or by `verify` — never a panic, never a wrong value. Repair then salvages:
//! every value it keeps is one that was written for that key.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use spillway_store::backend::{Backend, CrashMode, MemoryBackend};
use spillway_store::{Error, Store, StoreOptions, WriteBatch};

const DIR: &str = "/rot";

fn options() -> StoreOptions {
    StoreOptions {
        segment_size: 4096,
        compaction_live_ratio: 0.9,
        ..StoreOptions::default()
    }
}

struct Fixture {
    backend: MemoryBackend,
    expected: BTreeMap<Vec<u8>, Vec<u8>>,
    history: BTreeMap<Vec<u8>, BTreeSet<Vec<u8>>>,
    targets: Vec<PathBuf>,
}

fn build() -> Fixture {
    let backend = MemoryBackend::new();
    let store = Store::open_with_backend(Arc::new(backend.clone()), DIR, options()).unwrap();
    let ks = store.keyspace("k").unwrap();
    let mut expected = BTreeMap::new();
    let mut history: BTreeMap<Vec<u8>, BTreeSet<Vec<u8>>> = BTreeMap::new();
    for batch_number in 0u32..150 {
        let mut batch = WriteBatch::new();
        for j in 0..2u32 {
            // After the compaction only keys 0..10 change, so keys 10..30 stay in the
            // compacted segment and reads go there.
            let key_space = if batch_number > 80 { 10 } else { 30 };
            let key = format!("key{:02}", (batch_number * 7 + j) % key_space).into_bytes();
            let value = format!(
                "value {batch_number} {j} {}",
                "x".repeat((batch_number as usize * 13) % 150)
            )
            .into_bytes();
            batch.put(ks, &key, &value);
            history
                .entry(key.clone())
                .or_default()
                .insert(value.clone());
            expected.insert(key, value);
        }
        if batch_number % 9 == 4 {
            let key = format!("key{:02}", batch_number % 30).into_bytes();
            batch.delete(ks, &key);
            expected.remove(&key);
        }
        store.commit(batch).unwrap();
        if batch_number == 25 {
            store.checkpoint().unwrap();
        }
        if batch_number == 80 {
            store.compact().unwrap();
        }
    }
    let stats = store.stats();
    let kinds: Vec<_> = stats.segments.iter().map(|s| (s.kind, s.active)).collect();
    assert!(
        kinds
            .iter()
            .any(|&(kind, _)| kind == spillway_store::SegmentKind::Compacted),
        "{kinds:?}"
    );
    assert!(
        stats
            .segments
            .iter()
            .filter(|s| !s.active && s.kind == spillway_store::SegmentKind::Log)
            .count()
            >= 2,
        "{kinds:?}"
    );
    let mut targets: Vec<PathBuf> = stats
        .segments
        .iter()
        .filter(|s| !s.active)
        .map(|s| Path::new(DIR).join(format!("seg-{:08x}.spw", s.id)))
        .collect();
    drop(store);
    for name in backend.list_dir(Path::new(DIR)).unwrap() {
        if name.starts_with("ckpt-") {
            targets.push(Path::new(DIR).join(name));
        }
    }
    assert!(
        targets
            .iter()
            .any(|p| p.to_string_lossy().contains("ckpt-"))
    );
    Fixture {
        backend,
        expected,
        history,
        targets,
    }
}

/// Checks an opened store: every key reads as its expected value or as a corruption error.
/// Returns true if some read detected damage.
fn check_reads(store: &Store, fixture: &Fixture) -> bool {
    let ks = store.keyspace_id("k").unwrap();
    let snapshot = store.snapshot();
    let mut detected = false;
    let keys: BTreeSet<Vec<u8>> = snapshot
        .iter(ks)
        .unwrap()
        .map(|e| match e {
            Ok((k, _)) => k.to_vec(),
            Err(_) => Vec::new(),
        })
        .filter(|k| !k.is_empty())
        .collect();
    for (key, value) in &fixture.expected {
        match snapshot.get(ks, key) {
            Ok(Some(found)) => assert_eq!(found, &value[..], "wrong value for {key:?}"),
            Ok(None) => panic!("key {key:?} missing although the store opened"),
            Err(error) => {
                assert!(error.is_corruption(), "{error}");
                detected = true;
            }
        }
    }
    assert!(
        keys.iter().all(|k| fixture.expected.contains_key(k)),
        "unexpected key appeared"
    );
    detected
}

#[test]
fn every_bit_flip_in_sealed_segments_and_checkpoints_is_detected() {
    let fixture = build();
    let mut rng = 0x9E37_79B9_7F4A_7C15u64;
    let mut next = move || {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        rng
    };
    let (mut by_open, mut by_fallback, mut by_read, mut by_verify, mut repaired) = (0, 0, 0, 0, 0);
    let trials = 400;
    for trial in 0..trials {
        let backend = fixture.backend.crash(CrashMode::LoseUnsynced);
        let target = &fixture.targets[(next() as usize) % fixture.targets.len()];
        let mut bytes = backend.file_contents(target).unwrap();
        let offset = (next() as usize) % bytes.len();
        let bit = next() % 8;
        bytes[offset] ^= 1 << bit;
        backend.overwrite_file(target, &bytes).unwrap();
        let what = format!(
            "trial {trial}: bit {bit} of byte {offset} in {}",
            target.display()
        );

        match Store::open_with_backend(Arc::new(backend.clone()), DIR, options()) {
            Err(error) => {
                assert!(matches!(error, Error::Corrupt { .. }), "{what}: {error}");
                by_open += 1;
                let report = Store::repair_with_backend(Arc::new(backend.clone()), DIR, options())
                    .unwrap_or_else(|e| panic!("{what}: repair failed: {e}"));
                assert!(!report.damage.is_empty(), "{what}: repair found nothing");
                let store = Store::open_with_backend(Arc::new(backend.clone()), DIR, options())
                    .unwrap_or_else(|e| panic!("{what}: open after repair failed: {e}"));
                assert!(store.verify().unwrap().is_clean(), "{what}");
                let ks = store.keyspace_id("k").unwrap_or_else(|| {
                    panic!(
                        "{what}: keyspace lost by repair: {:?} {report:?}",
                        store.keyspaces()
                    )
                });
                for entry in store.snapshot().iter(ks).unwrap() {
                    let (key, value) = entry.unwrap();
                    let known = fixture
                        .history
                        .get(key)
                        .is_some_and(|values| values.contains(value));
                    assert!(
                        known,
                        "{what}: repair produced a value never written for {key:?}"
                    );
                }
                repaired += 1;
            }
            Ok(store) if store.recovery_report().checkpoint_fallback.is_some() => {
                // Detected at open: the store opened from the fallback checkpoint and healed
                // itself with a new checkpoint, losing nothing.
                let read_detected = check_reads(&store, &fixture);
                assert!(!read_detected, "{what}: a fallback open read damage");
                assert!(store.verify().unwrap().is_clean(), "{what}: not healed");
                by_fallback += 1;
            }
            Ok(store) => {
                let read_detected = check_reads(&store, &fixture);
                let report = store.verify().unwrap();
                assert!(!report.is_clean(), "{what}: flip went undetected");
                if read_detected {
                    by_read += 1;
                } else {
                    by_verify += 1;
                }
            }
        }
    }
    eprintln!(
        "bit rot: {trials} flips: {by_open} failed the open (all repaired: {repaired}), {by_fallback} opened from the fallback checkpoint, {by_read} caught by a read, {by_verify} only by verify"
    );
    assert_eq!(by_open + by_fallback + by_read + by_verify, trials);
    assert!(by_open > 0 && by_fallback > 0 && by_read > 0 && by_verify > 0);
}
