//! Kill -9 loop (the `spillway-crash` harness): a child process (this binary, re-executed with
//! `SPILLWAY_CRASH_CHILD` set) commits batches with fsync-every-commit and prints `ack N` after
//! each acknowledged batch, with checkpoints and compactions mixed in. The parent kills it
//! with SIGKILL at a random moment, reopens the store, and checks that every acknowledged
//! batch is present and that the store holds exactly the effects of batches 0..=L for some L
//! (so every batch is all-or-nothing). A copy of the directory taken before that reopen, with
//! its current checkpoint damaged, must open from the fallback to exactly the same contents.
//! Then the next child continues on the same store.
//!
//! Iterations: `SPILLWAY_CRASH_ITERATIONS` (default 20). `cargo xtask crash --iterations N`
//! runs `cargo test --release -p spillway-store --test crash` with it set.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::{Duration, Instant};

use spillway_crash::{Acks, Child, Random, ack_count, child_directory, iterations, last_ack};
use spillway_store::{Durability, Store, StoreOptions, WriteBatch};

const CHILD_ENV: &str = "SPILLWAY_CRASH_CHILD";

fn options() -> StoreOptions {
    StoreOptions {
        durability: Durability::SyncEveryCommit,
        segment_size: 64 * 1024,
        compaction_live_ratio: 0.8,
        // Background checkpoints every few dozen commits, so kills land in them too.
        checkpoint_after_log_bytes: 16 * 1024,
    }
}

fn value(batch: u64) -> Vec<u8> {
    vec![(batch % 251) as u8; 100 + (batch as usize * 37) % 300]
}

fn batch_for(ks: spillway_store::KeyspaceId, batch_number: u64) -> WriteBatch {
    let mut batch = WriteBatch::new();
    batch
        .put(
            ks,
            format!("a{batch_number:08}").as_bytes(),
            &value(batch_number),
        )
        .put(
            ks,
            format!("b{batch_number:08}").as_bytes(),
            &value(batch_number),
        )
        .put(ks, b"last", &batch_number.to_be_bytes());
    if batch_number >= 20 {
        batch.delete(ks, format!("a{:08}", batch_number - 20).as_bytes());
    }
    batch
}

fn expected_after(last: Option<u64>) -> BTreeMap<Vec<u8>, Vec<u8>> {
    let mut expected = BTreeMap::new();
    let Some(last) = last else {
        return expected;
    };
    for batch_number in 0..=last {
        expected.insert(
            format!("a{batch_number:08}").into_bytes(),
            value(batch_number),
        );
        expected.insert(
            format!("b{batch_number:08}").into_bytes(),
            value(batch_number),
        );
        if batch_number >= 20 {
            expected.remove(format!("a{:08}", batch_number - 20).as_bytes());
        }
    }
    expected.insert(b"last".to_vec(), last.to_be_bytes().to_vec());
    expected
}

fn last_batch(store: &Store) -> Option<u64> {
    let ks = store.keyspace_id("k")?;
    let value = store.get(ks, b"last").expect("read last")?;
    Some(u64::from_be_bytes(value[..8].try_into().expect("8 bytes")))
}

fn child(dir: &Path) -> ! {
    let store = Store::open(dir, options()).expect("child: open");
    let ks = store.keyspace("k").expect("child: keyspace");
    let mut next = last_batch(&store).map_or(0, |last| last + 1);
    let mut acks = Acks::new();
    loop {
        store.commit(batch_for(ks, next)).expect("child: commit");
        acks.ack(next);
        if next % 40 == 17 {
            store.checkpoint().expect("child: checkpoint");
        }
        if next % 90 == 50 {
            store.compact().expect("child: compact");
        }
        next += 1;
    }
}

/// The store's contents (empty without the keyspace).
fn contents(store: &Store, iteration: u32) -> BTreeMap<Vec<u8>, Vec<u8>> {
    let Some(ks) = store.keyspace_id("k") else {
        return BTreeMap::new();
    };
    store
        .snapshot()
        .iter(ks)
        .unwrap()
        .map(|e| e.map(|(k, v)| (k.to_vec(), v.to_vec())))
        .collect::<Result<_, _>>()
        .unwrap_or_else(|e| panic!("iteration {iteration}: read failed: {e}"))
}

/// Copies the store's files from `dir` into `copy`.
fn copy_store(dir: &Path, copy: &Path) {
    for entry in std::fs::read_dir(dir).expect("list store") {
        let entry = entry.expect("list store");
        if entry.file_type().expect("file type").is_file() {
            std::fs::copy(entry.path(), copy.join(entry.file_name())).expect("copy store file");
        }
    }
}

/// Damages the current checkpoint of the store copied into `copy` and opens it: from the
/// fallback, it must hold exactly `expected`. Returns false if there is no checkpoint yet.
fn check_fallback(copy: &Path, expected: &BTreeMap<Vec<u8>, Vec<u8>>, iteration: u32) -> bool {
    let manifest = match std::fs::read(copy.join("MANIFEST")) {
        Ok(manifest) => manifest,
        // Killed before the new store wrote its first manifest (a slow start on a loaded
        // machine): there is nothing to fall back to yet.
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => return false,
        Err(error) => panic!("iteration {iteration}: read manifest: {error}"),
    };
    let named = spillway_store::fuzzing::manifest_files(&manifest).expect("valid manifest");
    let Some(current) = named.checkpoint else {
        return false;
    };
    assert!(
        named.fallback.is_some(),
        "iteration {iteration}: no fallback"
    );
    let path = copy.join(&current);
    let mut bytes = std::fs::read(&path).expect("read checkpoint");
    let middle = bytes.len() / 2;
    bytes[middle] ^= 0x04;
    std::fs::write(&path, bytes).expect("damage checkpoint");
    let store = Store::open(copy, options()).unwrap_or_else(|e| {
        panic!("iteration {iteration}: open with {current} damaged failed: {e}")
    });
    assert!(
        store.recovery_report().checkpoint_fallback.is_some(),
        "iteration {iteration}: the damage of {current} went unnoticed"
    );
    assert!(
        &contents(&store, iteration) == expected,
        "iteration {iteration}: the fallback of {current} gives other contents"
    );
    true
}

fn verify(
    dir: &Path,
    last_acknowledged: Option<u64>,
    iteration: u32,
) -> (u64, BTreeMap<Vec<u8>, Vec<u8>>) {
    let store = Store::open(dir, options())
        .unwrap_or_else(|e| panic!("iteration {iteration}: reopen failed: {e}"));
    let last = last_batch(&store);
    if let Some(acknowledged) = last_acknowledged {
        assert!(
            last.is_some_and(|last| last >= acknowledged),
            "iteration {iteration}: acknowledged batch {acknowledged} lost (store ends at {last:?})"
        );
    }
    let contents = contents(&store, iteration);
    if store.keyspace_id("k").is_some() {
        assert!(
            contents == expected_after(last),
            "iteration {iteration}: store is not exactly batches 0..={last:?}"
        );
    }
    let report = store.verify().unwrap();
    assert!(
        report.is_clean(),
        "iteration {iteration}: {:?}",
        report.damage
    );
    (last.map_or(0, |last| last + 1), contents)
}

fn main() {
    if let Some(dir) = child_directory(CHILD_ENV) {
        child(&dir);
    }
    let iterations = iterations(20);
    let dir = tempfile::tempdir().expect("temp dir");
    let mut random = Random::from_clock();
    let started = Instant::now();
    let mut acknowledged_total = 0u64;
    let mut batches_in_store = 0u64;
    let mut lock_refusals = 0u32;
    let mut fallbacks_checked = 0u32;
    for iteration in 0..iterations {
        let mut child = Child::spawn(CHILD_ENV, dir.path(), &[]);
        // Kill at a random moment: during open/recovery, mid-commit, mid-checkpoint or
        // mid-compaction.
        child.sleep_alive(
            Duration::from_millis(5 + random.below(250)),
            format_args!("iteration {iteration}"),
        );
        // The child holds the store open: a second process must be refused.
        if child.acks_seen() > 0 {
            let error = Store::open(dir.path(), options()).expect_err("second writer admitted");
            assert!(
                matches!(error, spillway_store::Error::Locked { .. }),
                "iteration {iteration}: expected the lock error, got {error}"
            );
            lock_refusals += 1;
        }
        let lines = child.kill();
        acknowledged_total += ack_count(&lines);
        // The same files, before the reopen below changes any (orphans, a torn tail).
        let copy = tempfile::tempdir().expect("temp dir");
        copy_store(dir.path(), copy.path());
        let contents;
        (batches_in_store, contents) = verify(dir.path(), last_ack(&lines), iteration);
        if check_fallback(copy.path(), &contents, iteration) {
            fallbacks_checked += 1;
        }
    }
    println!(
        "crash loop: {iterations} kills, {acknowledged_total} acknowledged batches verified ({batches_in_store} batches in the store, {lock_refusals} second opens refused by the lock, {fallbacks_checked} opens from the fallback with the current checkpoint damaged gave the same contents, {:.1}s)",
        started.elapsed().as_secs_f64()
    );
}
