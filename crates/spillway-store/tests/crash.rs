//! Kill -9 loop: a child process (this binary, re-executed with `SPILLWAY_CRASH_CHILD` set)
//! commits batches with fsync-every-commit and prints `ack N` after each acknowledged batch,
//! with checkpoints and compactions mixed in. The parent kills it with SIGKILL at a random
//! moment, reopens the store, and checks that every acknowledged batch is present and that the
//! store holds exactly the effects of batches 0..=L for some L (so every batch is
//! all-or-nothing). Then the next child continues on the same store.
//!
//! Iterations: `SPILLWAY_CRASH_ITERATIONS` (default 20). `cargo xtask crash --iterations N`
//! runs `cargo test --release -p spillway-store --test crash` with it set.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use spillway_store::{Durability, Store, StoreOptions, WriteBatch};

const CHILD_ENV: &str = "SPILLWAY_CRASH_CHILD";

fn options() -> StoreOptions {
    StoreOptions {
        durability: Durability::SyncEveryCommit,
        segment_size: 64 * 1024,
        compaction_live_ratio: 0.8,
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
    let mut stdout = std::io::stdout().lock();
    loop {
        store.commit(batch_for(ks, next)).expect("child: commit");
        writeln!(stdout, "ack {next}").expect("child: report");
        stdout.flush().expect("child: flush");
        if next % 40 == 17 {
            store.checkpoint().expect("child: checkpoint");
        }
        if next % 90 == 50 {
            store.compact().expect("child: compact");
        }
        next += 1;
    }
}

fn verify(dir: &Path, last_acknowledged: Option<u64>, iteration: u32) -> u64 {
    let store = Store::open(dir, options())
        .unwrap_or_else(|e| panic!("iteration {iteration}: reopen failed: {e}"));
    let last = last_batch(&store);
    if let Some(acknowledged) = last_acknowledged {
        assert!(
            last.is_some_and(|last| last >= acknowledged),
            "iteration {iteration}: acknowledged batch {acknowledged} lost (store ends at {last:?})"
        );
    }
    if let Some(ks) = store.keyspace_id("k") {
        let snapshot = store.snapshot();
        let contents: BTreeMap<Vec<u8>, Vec<u8>> = snapshot
            .iter(ks)
            .unwrap()
            .map(|e| e.map(|(k, v)| (k.to_vec(), v.to_vec())))
            .collect::<Result<_, _>>()
            .unwrap_or_else(|e| panic!("iteration {iteration}: read failed: {e}"));
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
    last.map_or(0, |last| last + 1)
}

fn main() {
    if let Some(dir) = std::env::var_os(CHILD_ENV) {
        child(Path::new(&dir));
    }
    let iterations: u32 = std::env::var("SPILLWAY_CRASH_ITERATIONS")
        .ok()
        .map_or(20, |v| {
            v.parse()
                .expect("SPILLWAY_CRASH_ITERATIONS must be a number")
        });
    let dir = tempfile::tempdir().expect("temp dir");
    let exe = std::env::current_exe().expect("current exe");
    let mut rng = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_nanos() as u64
        | 1;
    let mut random = move |bound: u64| {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        rng % bound
    };
    let started = Instant::now();
    let mut acknowledged_total = 0u64;
    let mut batches_in_store = 0u64;
    let mut lock_refusals = 0u32;
    for iteration in 0..iterations {
        let mut child = Command::new(&exe)
            .env(CHILD_ENV, dir.path())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("spawn child");
        let stdout = child.stdout.take().expect("child stdout");
        let acks_seen = Arc::new(AtomicU64::new(0));
        let reader = {
            let acks_seen = acks_seen.clone();
            std::thread::spawn(move || {
                let mut last = None;
                let mut count = 0u64;
                for line in BufReader::new(stdout).lines() {
                    let Ok(line) = line else { break };
                    if let Some(n) = line.strip_prefix("ack ") {
                        last = Some(n.parse::<u64>().expect("ack number"));
                        count += 1;
                        acks_seen.store(count, Ordering::SeqCst);
                    }
                }
                (last, count)
            })
        };
        // Kill at a random moment: during open/recovery, mid-commit, mid-checkpoint or
        // mid-compaction.
        std::thread::sleep(Duration::from_millis(5 + random(250)));
        if let Some(status) = child.try_wait().expect("poll child") {
            panic!("iteration {iteration}: child exited on its own with {status}");
        }
        // The child holds the store open: a second process must be refused.
        if acks_seen.load(Ordering::SeqCst) > 0 {
            let error = Store::open(dir.path(), options()).expect_err("second writer admitted");
            assert!(
                matches!(error, spillway_store::Error::Locked { .. }),
                "iteration {iteration}: expected the lock error, got {error}"
            );
            lock_refusals += 1;
        }
        child.kill().expect("kill -9 the child");
        child.wait().expect("reap child");
        let (last_acknowledged, count) = reader.join().expect("reader thread");
        acknowledged_total += count;
        batches_in_store = verify(dir.path(), last_acknowledged, iteration);
    }
    println!(
        "crash loop: {iterations} kills, {acknowledged_total} acknowledged batches verified ({batches_in_store} batches in the store, {lock_refusals} second opens refused by the lock, {:.1}s)",
        started.elapsed().as_secs_f64()
    );
}
