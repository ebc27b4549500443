//! Fault injection: a write or an fsync fails at the Nth call, the disk fills up, or the
//! machine loses power (everything not yet synced is lost, or torn sector by sector). After
//! each, the store is reopened: every acknowledged batch must be there, every batch must be
//! all-or-nothing, and nothing that was never written may appear. After a power loss, the
//! same state with its current checkpoint damaged must open from the fallback to exactly the
//! same contents.

use std::collections::BTreeMap;
use std::sync::Arc;

use spillway_store::backend::{CrashMode, FaultPlan, MemoryBackend};
use spillway_store::{Durability, Store, StoreOptions, WriteBatch};

const DIR: &str = "/faults";
const BATCHES: u32 = 40;

fn options() -> StoreOptions {
    StoreOptions {
        durability: Durability::SyncEveryCommit,
        // Two written-limit steps per segment (a sixteenth, at least 4 KiB): faults land in
        // the manifest writes that raise it as well as in rotations.
        segment_size: 8192,
        compaction_live_ratio: 0.9,
        ..StoreOptions::default()
    }
}

fn value(batch: u32) -> Vec<u8> {
    vec![(batch % 251) as u8; 150 + (batch as usize * 37) % 200]
}

/// Runs the workload until the first error; returns the batches acknowledged.
fn workload(backend: &MemoryBackend, plan: FaultPlan) -> Vec<u32> {
    let store = Store::open_with_backend(Arc::new(backend.clone()), DIR, options()).unwrap();
    let ks = store.keyspace("k").unwrap();
    backend.set_faults(plan);
    let mut acknowledged = Vec::new();
    for batch_number in 0..BATCHES {
        let mut batch = WriteBatch::new();
        batch
            .put(
                ks,
                format!("a{batch_number:03}").as_bytes(),
                &value(batch_number),
            )
            .put(
                ks,
                format!("b{batch_number:03}").as_bytes(),
                &value(batch_number),
            )
            .put(ks, b"last", &batch_number.to_be_bytes());
        if batch_number >= 10 {
            // Overwrites and deletes, so that compaction has dead records to drop.
            batch.delete(ks, format!("a{:03}", batch_number - 10).as_bytes());
        }
        if store.commit(batch).is_err() {
            break;
        }
        acknowledged.push(batch_number);
        let maintenance = match batch_number % 13 {
            5 => store.checkpoint(),
            11 => store.compact().map(|_| ()),
            _ => Ok(()),
        };
        if maintenance.is_err() {
            break;
        }
    }
    backend.set_faults(FaultPlan::default());
    acknowledged
}

/// Expected contents after batches `0..=last` (or nothing if `last` is `None`).
fn expected_after(last: Option<u32>) -> BTreeMap<Vec<u8>, Vec<u8>> {
    let mut expected = BTreeMap::new();
    let Some(last) = last else {
        return expected;
    };
    for batch_number in 0..=last {
        expected.insert(
            format!("a{batch_number:03}").into_bytes(),
            value(batch_number),
        );
        expected.insert(
            format!("b{batch_number:03}").into_bytes(),
            value(batch_number),
        );
        expected.insert(b"last".to_vec(), batch_number.to_be_bytes().to_vec());
        if batch_number >= 10 {
            expected.remove(format!("a{:03}", batch_number - 10).as_bytes());
        }
    }
    expected
}

/// Reopens and checks: the state is exactly "batches 0..=L applied" for some L that includes
/// every acknowledged batch. Returns what the store held.
fn check_recovered(
    backend: &MemoryBackend,
    acknowledged: &[u32],
    what: &str,
) -> BTreeMap<Vec<u8>, Vec<u8>> {
    let store = Store::open_with_backend(Arc::new(backend.clone()), DIR, options())
        .unwrap_or_else(|e| panic!("{what}: reopen failed: {e}"));
    let snapshot = store.snapshot();
    let contents: BTreeMap<Vec<u8>, Vec<u8>> = match store.keyspace_id("k") {
        Some(ks) => snapshot
            .iter(ks)
            .unwrap()
            .map(|e| e.map(|(k, v)| (k.to_vec(), v.to_vec())))
            .collect::<Result<_, _>>()
            .unwrap_or_else(|e| panic!("{what}: read failed: {e}")),
        None => BTreeMap::new(),
    };
    let last = contents
        .get(&b"last"[..])
        .map(|v| u32::from_be_bytes(v[..4].try_into().unwrap()));
    if let Some(&last_acknowledged) = acknowledged.last() {
        assert!(
            last.is_some_and(|last| last >= last_acknowledged),
            "{what}: acknowledged batch {last_acknowledged} lost (store has {last:?})"
        );
    }
    assert!(
        contents == expected_after(last),
        "{what}: contents are not exactly batches 0..={last:?}"
    );
    assert!(
        store.verify().unwrap().is_clean(),
        "{what}: verify found damage"
    );
    // And the store accepts writes again.
    let ks = store.keyspace("k").unwrap();
    let mut batch = WriteBatch::new();
    batch.put(ks, b"after", b"recovery");
    store.commit(batch).unwrap();
    contents
}

/// Damages the current checkpoint of `backend` (a copy of a crashed store, taken before
/// `check_recovered` opened it) and checks that the open falls back to exactly `expected`.
/// Returns false if the store has no checkpoint yet.
fn check_fallback(
    backend: &MemoryBackend,
    expected: &BTreeMap<Vec<u8>, Vec<u8>>,
    what: &str,
) -> bool {
    let dir = std::path::Path::new(DIR);
    let manifest = backend.file_contents(&dir.join("MANIFEST")).unwrap();
    let named = spillway_store::fuzzing::manifest_files(&manifest).unwrap();
    let Some(current) = named.checkpoint.clone() else {
        return false;
    };
    assert!(named.fallback.is_some(), "{what}: no fallback: {named:?}");
    let path = dir.join(&current);
    let mut bytes = backend.file_contents(&path).unwrap();
    let middle = bytes.len() / 2;
    bytes[middle] ^= 0x20;
    backend.overwrite_file(&path, &bytes).unwrap();
    let store = Store::open_with_backend(Arc::new(backend.clone()), DIR, options())
        .unwrap_or_else(|e| panic!("{what}, {current} damaged: reopen failed: {e}"));
    assert!(
        store.recovery_report().checkpoint_fallback.is_some(),
        "{what}"
    );
    let contents: BTreeMap<Vec<u8>, Vec<u8>> = match store.keyspace_id("k") {
        Some(ks) => store
            .snapshot()
            .iter(ks)
            .unwrap()
            .map(|e| e.map(|(k, v)| (k.to_vec(), v.to_vec())))
            .collect::<Result<_, _>>()
            .unwrap_or_else(|e| panic!("{what}, {current} damaged: read failed: {e}")),
        None => BTreeMap::new(),
    };
    assert!(
        &contents == expected,
        "{what}, {current} damaged: the fallback gives other contents"
    );
    true
}

#[test]
fn failed_write_at_every_call() {
    let calls = {
        let backend = MemoryBackend::new();
        workload(&backend, FaultPlan::default());
        backend.counters().writes
    };
    for n in 1..=calls {
        for tear in [false, true] {
            let backend = MemoryBackend::new();
            let plan = FaultPlan {
                fail_write_at: Some(n),
                tear_failed_write: tear,
                ..FaultPlan::default()
            };
            let acknowledged = workload(&backend, plan);
            let what = format!("write {n} fails (torn: {tear})");
            check_recovered(
                &backend.crash(CrashMode::LoseUnsynced),
                &acknowledged,
                &format!("{what}, power loss"),
            );
            check_recovered(&backend, &acknowledged, &format!("{what}, restart"));
        }
    }
}

#[test]
fn failed_fsync_at_every_call() {
    let calls = {
        let backend = MemoryBackend::new();
        workload(&backend, FaultPlan::default());
        backend.counters().syncs
    };
    for n in 1..=calls {
        let backend = MemoryBackend::new();
        let plan = FaultPlan {
            fail_sync_at: Some(n),
            ..FaultPlan::default()
        };
        let acknowledged = workload(&backend, plan);
        let what = format!("fsync {n} fails");
        check_recovered(
            &backend.crash(CrashMode::LoseUnsynced),
            &acknowledged,
            &format!("{what}, power loss"),
        );
        check_recovered(&backend, &acknowledged, &format!("{what}, restart"));
    }
}

#[test]
fn disk_full_at_many_points() {
    let total = {
        let backend = MemoryBackend::new();
        workload(&backend, FaultPlan::default());
        backend.counters().space_used
    };
    let start = MemoryBackend::new();
    let setup_bytes = {
        let store = Store::open_with_backend(Arc::new(start.clone()), DIR, options()).unwrap();
        store.keyspace("k").unwrap();
        drop(store);
        start.counters().space_used
    };
    for limit in (setup_bytes..total).step_by(97) {
        let backend = MemoryBackend::new();
        let plan = FaultPlan {
            no_space_after_bytes: Some(limit),
            ..FaultPlan::default()
        };
        let acknowledged = workload(&backend, plan);
        let what = format!("disk full after {limit} bytes");
        check_recovered(
            &backend.crash(CrashMode::LoseUnsynced),
            &acknowledged,
            &format!("{what}, power loss"),
        );
        check_recovered(&backend, &acknowledged, &format!("{what}, restart"));
    }
}

#[test]
fn power_loss_at_every_write_and_sync_call() {
    // Stop the workload at the Nth I/O call by failing it, then "crash" with unsynced data
    // lost or torn: covers crashes in the middle of commits, rotations, checkpoints and
    // compactions.
    let calls = {
        let backend = MemoryBackend::new();
        workload(&backend, FaultPlan::default());
        backend.counters().syncs
    };
    let mut fell_back = 0;
    for n in 1..=calls {
        for seed in [1u64, 2, 3] {
            let backend = MemoryBackend::new();
            let plan = FaultPlan {
                fail_sync_at: Some(n),
                ..FaultPlan::default()
            };
            let acknowledged = workload(&backend, plan);
            let crashed = backend.crash(CrashMode::TearUnsynced { seed });
            // The same bytes, for the open from the fallback.
            let copy = crashed.crash(CrashMode::LoseUnsynced);
            let what = format!("power loss at fsync {n}, torn sectors (seed {seed})");
            let contents = check_recovered(&crashed, &acknowledged, &what);
            if check_fallback(&copy, &contents, &what) {
                fell_back += 1;
            }
        }
    }
    // Every crash after the first checkpoint.
    assert!(
        fell_back > calls * 2,
        "{fell_back} of {} crashes",
        calls * 3
    );
}

#[test]
fn without_faults_every_batch_survives_a_power_loss() {
    let backend = MemoryBackend::new();
    let acknowledged = workload(&backend, FaultPlan::default());
    assert_eq!(acknowledged.len(), BATCHES as usize);
    check_recovered(
        &backend.crash(CrashMode::LoseUnsynced),
        &acknowledged,
        "no faults, power loss",
    );
    check_recovered(&backend, &acknowledged, "no faults, restart");
}
