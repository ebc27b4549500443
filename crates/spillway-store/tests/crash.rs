//! Kill -9 loop (the `spillway-crash` harness): a child process (this binary, re-executed with
//! `SPILLWAY_CRASH_CHILD` set) commits batches with fsync-every-commit and prints `ack N` after
//! each acknowledged batch, with checkpoints and compactions mixed in. The parent kills it
//! with SIGKILL at a random moment, reopens the store, and checks that every acknowledged
//! batch is present and that the store holds exactly the effects of batches 0..=L for some L
//! (so every batch is all-or-nothing). A copy of the directory taken before that reopen, with
//! its current checkpoint damaged, must open either from the fallback to exactly the same
//! contents, or (when the open does not read the damaged block) serve no other contents,
//! report the damage in `verify`, and come back to exactly the same contents by `repair`.
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
    try_contents(store).unwrap_or_else(|e| panic!("iteration {iteration}: read failed: {e}"))
}

/// The store's contents, or the first error a read of them met.
fn try_contents(store: &Store) -> Result<BTreeMap<Vec<u8>, Vec<u8>>, spillway_store::Error> {
    let Some(ks) = store.keyspace_id("k") else {
        return Ok(BTreeMap::new());
    };
    store
        .snapshot()
        .iter(ks)?
        .map(|e| e.map(|(k, v)| (k.to_vec(), v.to_vec())))
        .collect()
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

/// What damaging the current checkpoint of a copied store came to.
enum Damaged {
    /// No checkpoint yet: nothing to damage.
    NoCheckpoint,
    /// The open met the damaged block and opened from the fallback.
    OpenFellBack,
    /// The open did not read the damaged block (a version 3 checkpoint checks a block when a
    /// read first touches it): reads of it failed, `verify` reported it and `repair` healed it.
    RepairHealed,
}

/// Damages the current checkpoint of the store copied into `copy` and opens it. Either the
/// open meets the damage and opens from the fallback, to exactly `expected`; or the open
/// succeeds without reading the damaged block, and then no read returns other contents than
/// `expected` (a read of the damaged block fails instead), `verify` reports the damage, and
/// `repair` brings back exactly `expected` with a clean `verify`.
fn check_fallback(copy: &Path, expected: &BTreeMap<Vec<u8>, Vec<u8>>, iteration: u32) -> Damaged {
    let manifest = match std::fs::read(copy.join("MANIFEST")) {
        Ok(manifest) => manifest,
        // Killed before the new store wrote its first manifest (a slow start on a loaded
        // machine): there is nothing to fall back to yet.
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
            return Damaged::NoCheckpoint;
        }
        Err(error) => panic!("iteration {iteration}: read manifest: {error}"),
    };
    let named = spillway_store::fuzzing::manifest_files(&manifest).expect("valid manifest");
    let Some(current) = named.checkpoint else {
        return Damaged::NoCheckpoint;
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
    if store.recovery_report().checkpoint_fallback.is_some() {
        assert!(
            &contents(&store, iteration) == expected,
            "iteration {iteration}: the fallback of {current} gives other contents"
        );
        return Damaged::OpenFellBack;
    }
    match try_contents(&store) {
        Ok(read) => assert!(
            &read == expected,
            "iteration {iteration}: with {current} damaged, a scan returned other contents"
        ),
        Err(error) => assert!(
            matches!(error, spillway_store::Error::Corrupt { .. }),
            "iteration {iteration}: a read of the damaged {current} failed with {error}"
        ),
    }
    let report = store.verify().expect("verify runs");
    assert!(
        !report.is_clean(),
        "iteration {iteration}: the damage of {current} went unnoticed by verify"
    );
    drop(store);
    Store::repair(copy, options())
        .unwrap_or_else(|e| panic!("iteration {iteration}: repair with {current} damaged: {e}"));
    let store = Store::open(copy, options())
        .unwrap_or_else(|e| panic!("iteration {iteration}: open after repair: {e}"));
    assert!(
        &contents(&store, iteration) == expected,
        "iteration {iteration}: repair of the damaged {current} gives other contents"
    );
    let report = store.verify().expect("verify runs");
    assert!(
        report.is_clean(),
        "iteration {iteration}: after repair: {:?}",
        report.damage
    );
    Damaged::RepairHealed
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
    let mut repairs_checked = 0u32;
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
        match check_fallback(copy.path(), &contents, iteration) {
            Damaged::NoCheckpoint => {}
            Damaged::OpenFellBack => fallbacks_checked += 1,
            Damaged::RepairHealed => repairs_checked += 1,
        }
    }
    println!(
        "crash loop: {iterations} kills, {acknowledged_total} acknowledged batches verified ({batches_in_store} batches in the store, {lock_refusals} second opens refused by the lock, with the current checkpoint damaged: {fallbacks_checked} opens from the fallback and {repairs_checked} repairs gave the same contents, {:.1}s)",
        started.elapsed().as_secs_f64()
    );
}
