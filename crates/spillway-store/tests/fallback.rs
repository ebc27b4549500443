//! The fallback (issue 14): a damaged current checkpoint is detected at open, and the store
//! opens from the previous checkpoint (or the whole log) and the log after it, with exactly
//! the contents the damaged checkpoint described, deleted keys included, even those whose
//! tombstones a compaction dropped. The damaged file stays until the next checkpoint replaces
//! it; with no usable fallback the open refuses, naming both files, and changes nothing.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use spillway_store::backend::{Backend, CrashMode, FaultPlan, MemoryBackend};
use spillway_store::fuzzing::{ManifestFiles, manifest_files};
use spillway_store::{Error, Store, StoreOptions, WriteBatch};

const DIR: &str = "/fallback";

fn options() -> StoreOptions {
    StoreOptions {
        segment_size: 4096,
        compaction_live_ratio: 0.9,
        // Only the checkpoints each test asks for.
        checkpoint_after_log_bytes: 0,
        ..StoreOptions::default()
    }
}

fn open(backend: &MemoryBackend) -> Result<Store, Error> {
    Store::open_with_backend(Arc::new(backend.clone()), DIR, options())
}

fn path(name: &str) -> PathBuf {
    Path::new(DIR).join(name)
}

type Model = BTreeMap<String, BTreeMap<Vec<u8>, Vec<u8>>>;

/// Commits single writes and keeps the model of what the store must hold.
struct Workload {
    store: Store,
    model: Model,
}

impl Workload {
    fn put(&mut self, keyspace: &str, key: &str, value: &str) {
        let id = self.store.keyspace(keyspace).unwrap();
        let value = format!("{value} {}", "v".repeat(90));
        let mut batch = WriteBatch::new();
        batch.put(id, key.as_bytes(), value.as_bytes());
        self.store.commit(batch).unwrap();
        self.model
            .entry(keyspace.to_string())
            .or_default()
            .insert(key.as_bytes().to_vec(), value.into_bytes());
    }

    fn delete(&mut self, keyspace: &str, key: &str) {
        let id = self.store.keyspace(keyspace).unwrap();
        let mut batch = WriteBatch::new();
        batch.delete(id, key.as_bytes());
        self.store.commit(batch).unwrap();
        self.model
            .entry(keyspace.to_string())
            .or_default()
            .remove(key.as_bytes());
    }
}

fn k(i: u32) -> String {
    format!("k{i:02}")
}

/// Keys written before the first checkpoint and deleted after it: their tombstones are in
/// log segments that the compaction drops.
fn gone(i: u32) -> String {
    format!("gone-{i:02}")
}

fn contents(store: &Store) -> Model {
    let snapshot = store.snapshot();
    let mut found = Model::new();
    for (name, id) in store.keyspaces() {
        let entries = found.entry(name).or_default();
        for entry in snapshot.iter(id).unwrap() {
            let (key, value) = entry.unwrap();
            entries.insert(key.to_vec(), value.to_vec());
        }
    }
    found
}

fn manifest(backend: &MemoryBackend) -> ManifestFiles {
    manifest_files(&backend.file_contents(&path("MANIFEST")).unwrap()).unwrap()
}

/// Every file of the store directory with its bytes.
fn files(backend: &MemoryBackend) -> BTreeMap<String, Vec<u8>> {
    backend
        .list_dir(Path::new(DIR))
        .unwrap()
        .into_iter()
        .filter_map(|name| {
            let bytes = backend.file_contents(&path(&name)).ok()?;
            Some((name, bytes))
        })
        .collect()
}

/// A durable store after: puts, overwrites and deletes; checkpoint A; more of them, with
/// the keys `gone-*` deleted and most early segments made dead; a compaction (which writes
/// checkpoint B, with A as its fallback and its victims retained); more writes; and, if
/// `checkpoint_after`, checkpoint C (fallback B, nothing retained) and more writes.
struct Fixture {
    backend: MemoryBackend,
    model: Model,
    /// Checkpoint file names in order: A, B and (with `checkpoint_after`) C.
    checkpoints: Vec<String>,
}

fn build(checkpoint_after: bool) -> Fixture {
    let backend = MemoryBackend::new();
    let mut work = Workload {
        store: open(&backend).unwrap(),
        model: Model::new(),
    };
    for i in 0..40 {
        work.put("k", &k(i), "one");
    }
    for i in 0..5 {
        work.put("k", &gone(i), "doomed");
    }
    for i in 0..4 {
        work.delete("k", &k(i));
    }
    for i in 4..10 {
        work.put("k", &k(i), "two");
    }
    let active_at_a = work
        .store
        .stats()
        .segments
        .iter()
        .find(|s| s.active)
        .unwrap()
        .id;
    work.store.checkpoint().unwrap();
    let mut checkpoints = vec![manifest(&backend).checkpoint.unwrap()];

    // After A: the deletes of `gone-*`, a new keyspace, and overwrites that leave every
    // segment written here mostly dead.
    for i in 0..5 {
        work.delete("k", &gone(i));
    }
    for i in 0..6 {
        work.put("late", &format!("l{i}"), "late");
    }
    work.delete("late", "l5");
    for round in 0..4 {
        for i in 10..40 {
            work.put("k", &k(i), &format!("round {round}"));
        }
    }
    let report = work.store.compact().unwrap();
    checkpoints.push(manifest(&backend).checkpoint.unwrap());
    let after_compaction = manifest(&backend);
    assert_eq!(after_compaction.fallback.as_ref(), Some(&checkpoints[0]));
    assert!(
        report.segments_compacted.iter().any(|&id| id > active_at_a),
        "a log segment written after checkpoint A must be a victim: {report:?} (A in {active_at_a})"
    );
    // The tombstone of `gone-00` (a delete op: kind 2, keyspace, key length 7, no value) is
    // only in a retained victim now: B does not need it, A's replay does.
    let ks = work.store.keyspace_id("k").unwrap().as_u32();
    let mut tombstone = vec![2, 0, 0, 0];
    tombstone.extend_from_slice(&ks.to_le_bytes());
    tombstone.extend_from_slice(&7u32.to_le_bytes());
    tombstone.extend_from_slice(&[0; 12]);
    tombstone.extend_from_slice(b"gone-00");
    let holds_tombstone = |name: &String| {
        backend
            .file_contents(&path(name))
            .unwrap()
            .windows(tombstone.len())
            .any(|w| w == tombstone)
    };
    assert!(
        after_compaction.retained.iter().any(holds_tombstone),
        "{after_compaction:?}"
    );
    let current_segments: Vec<String> = work
        .store
        .stats()
        .segments
        .iter()
        .filter(|s| !s.retained)
        .map(|s| format!("seg-{:08x}.spw", s.id))
        .collect();
    assert!(
        !current_segments.iter().any(holds_tombstone),
        "the compaction dropped the tombstone from the current state's segments"
    );

    // After the compaction: new keys, deletes of compacted keys, a deleted key written again.
    for i in 50..55 {
        work.put("k", &k(i), "after");
    }
    for i in 10..13 {
        work.delete("k", &k(i));
    }
    work.put("k", &gone(1), "reborn");
    work.delete("late", "l0");
    if checkpoint_after {
        work.store.checkpoint().unwrap();
        checkpoints.push(manifest(&backend).checkpoint.unwrap());
        for i in 60..63 {
            work.put("k", &k(i), "last");
        }
        work.delete("k", &k(14));
        work.delete("k", &k(50));
    }
    let Workload { store, model } = work;
    drop(store);
    Fixture {
        backend: backend.crash(CrashMode::LoseUnsynced),
        model,
        checkpoints,
    }
}

#[derive(Clone, Copy, Debug)]
enum Damage {
    /// One byte in the middle of the archive flipped: the CRC fails.
    FlipBody,
    /// The second half cut off: the length disagrees with the header.
    Truncate,
    /// The header zeroed: no magic.
    ZeroHeader,
}

const DAMAGE: [Damage; 3] = [Damage::FlipBody, Damage::Truncate, Damage::ZeroHeader];

fn damage(backend: &MemoryBackend, name: &str, how: Damage) {
    let mut bytes = backend.file_contents(&path(name)).unwrap();
    match how {
        Damage::FlipBody => {
            let middle = bytes.len() / 2;
            bytes[middle] ^= 0x40;
        }
        Damage::Truncate => bytes.truncate(bytes.len() / 2),
        Damage::ZeroHeader => bytes[..32].fill(0),
    }
    backend.overwrite_file(&path(name), &bytes).unwrap();
}

/// Opens a store whose current checkpoint (`damaged`) was damaged and checks the fallback
/// open: `fallback` used, contents as the model, the deleted keys absent, and the store
/// healed by a new checkpoint that replaced the damaged file and keeps the same fallback (a
/// read-only store: the damaged file left in place and reported by `verify`).
fn check_fallback_open(
    store: &Store,
    backend: &MemoryBackend,
    model: &Model,
    damaged: &str,
    fallback: Option<&str>,
    what: &str,
) {
    let report = store.recovery_report();
    let fell_back = report
        .checkpoint_fallback
        .as_ref()
        .unwrap_or_else(|| panic!("{what}: no fallback reported: {report:?}"));
    assert_eq!(fell_back.damaged, path(damaged), "{what}");
    assert_eq!(fell_back.fallback, fallback.map(path), "{what}");
    assert_eq!(report.checkpoint_loaded, fallback.is_some(), "{what}");
    assert!(report.frames_replayed > 0, "{what}: {report:?}");
    assert!(
        fell_back.to_string().contains(damaged),
        "{what}: {fell_back}"
    );
    assert_eq!(&contents(store), model, "{what}");
    let ks = store.keyspace_id("k").unwrap();
    for i in [0, 2, 3, 4] {
        assert_eq!(store.get(ks, gone(i).as_bytes()).unwrap(), None, "{what}");
    }
    if store.is_read_only() {
        // Nothing written: the damaged file stays, and verify reports it.
        assert!(backend.file_contents(&path(damaged)).is_ok(), "{what}");
        let verified = store.verify().unwrap();
        assert!(!verified.damage.is_empty(), "{what}");
        assert!(
            verified.damage.iter().all(|d| d.path == path(damaged)),
            "{what}: {:?}",
            verified.damage
        );
        return;
    }
    // Healed at once: a new checkpoint replaced the damaged one, with the same fallback.
    let names = manifest(backend);
    assert_ne!(names.checkpoint.as_deref(), Some(damaged), "{what}");
    assert_eq!(
        names.fallback.as_deref(),
        Some(fallback.unwrap_or("")),
        "{what}"
    );
    assert!(backend.file_contents(&path(damaged)).is_err(), "{what}");
    let verified = store.verify().unwrap();
    assert!(verified.is_clean(), "{what}: {:?}", verified.damage);
}

/// Writes, checkpoints and reopens after a fallback open: the damaged file is replaced and
/// the store is clean.
fn write_checkpoint_reopen(store: Store, backend: &MemoryBackend, mut model: Model, what: &str) {
    let mut work = Workload {
        store,
        model: std::mem::take(&mut model),
    };
    work.put("k", "written after the fallback", "new");
    work.delete("k", &k(20));
    work.put("k", &gone(3), "back again");
    work.store.checkpoint().unwrap();
    let Workload { store, model } = work;
    drop(store);
    let store = open(backend).unwrap_or_else(|e| panic!("{what}: reopen failed: {e}"));
    assert_eq!(store.recovery_report().checkpoint_fallback, None, "{what}");
    assert_eq!(contents(&store), model, "{what}");
    let verified = store.verify().unwrap();
    assert!(verified.is_clean(), "{what}: {:?}", verified.damage);
}

#[test]
fn a_damaged_compaction_checkpoint_opens_from_the_one_before_and_the_retained_segments() {
    let fixture = build(false);
    let [a, b] = [&fixture.checkpoints[0], &fixture.checkpoints[1]];
    assert!(!manifest(&fixture.backend).retained.is_empty());
    for how in DAMAGE {
        let what = format!("{how:?} of {b}");
        let backend = fixture.backend.crash(CrashMode::LoseUnsynced);
        damage(&backend, b, how);
        let store = open(&backend).unwrap_or_else(|e| panic!("{what}: {e}"));
        check_fallback_open(&store, &backend, &fixture.model, b, Some(a), &what);
        write_checkpoint_reopen(store, &backend, fixture.model.clone(), &what);
        // The damaged file was replaced and is gone; the retained victims too, once the
        // fallback moved past them.
        let names = files(&backend);
        assert!(!names.contains_key(b.as_str()), "{what}");
        assert!(manifest(&backend).retained.is_empty(), "{what}");
    }
}

#[test]
fn a_damaged_checkpoint_after_a_compaction_opens_from_the_compaction_checkpoint() {
    let fixture = build(true);
    let [b, c] = [&fixture.checkpoints[1], &fixture.checkpoints[2]];
    let names = manifest(&fixture.backend);
    assert_eq!(names.fallback.as_ref(), Some(b));
    assert!(names.retained.is_empty(), "{names:?}");
    assert!(
        !files(&fixture.backend).contains_key(fixture.checkpoints[0].as_str()),
        "checkpoint A was deleted when C made B the fallback"
    );
    for how in DAMAGE {
        let what = format!("{how:?} of {c}");
        let backend = fixture.backend.crash(CrashMode::LoseUnsynced);
        damage(&backend, c, how);
        let store = open(&backend).unwrap_or_else(|e| panic!("{what}: {e}"));
        check_fallback_open(&store, &backend, &fixture.model, c, Some(b), &what);
        write_checkpoint_reopen(store, &backend, fixture.model.clone(), &what);
    }
}

/// After a fallback open the state derives from the fallback: the next checkpoint keeps it
/// as the fallback (and deletes the damaged one), and the segments retained for it are the
/// current state's again, so a compaction may rewrite them and a later damaged checkpoint
/// still falls back correctly.
#[test]
fn after_a_fallback_open_compaction_and_a_second_damage_still_fall_back() {
    let fixture = build(false);
    let [a, b] = [&fixture.checkpoints[0], &fixture.checkpoints[1]];
    let backend = fixture.backend.crash(CrashMode::LoseUnsynced);
    damage(&backend, b, Damage::FlipBody);
    let store = open(&backend).unwrap();
    let healed = manifest(&backend).checkpoint.unwrap();
    let mut work = Workload {
        store,
        model: fixture.model.clone(),
    };
    for i in 30..40 {
        work.put("k", &k(i), "after the fallback");
    }
    let report = work.store.compact().unwrap();
    assert!(!report.segments_compacted.is_empty(), "{report:?}");
    let names = manifest(&backend);
    assert_eq!(names.fallback.as_ref(), Some(&healed), "{names:?}");
    assert!(!files(&backend).contains_key(a.as_str()), "A deleted");
    let current = names.checkpoint.clone().unwrap();
    assert!(
        !files(&backend).contains_key(b.as_str()),
        "damaged B deleted"
    );
    work.delete("k", &k(31));
    work.put("late", "l9", "late again");
    let Workload { store, model } = work;
    drop(store);
    let backend = backend.crash(CrashMode::LoseUnsynced);
    for how in DAMAGE {
        let what = format!("{how:?} of {current} after a fallback open and a compaction");
        let backend = backend.crash(CrashMode::LoseUnsynced);
        damage(&backend, &current, how);
        let store = open(&backend).unwrap_or_else(|e| panic!("{what}: {e}"));
        check_fallback_open(&store, &backend, &model, &current, Some(&healed), &what);
        write_checkpoint_reopen(store, &backend, model.clone(), &what);
    }
}

#[test]
fn a_damaged_first_checkpoint_falls_back_to_the_whole_log() {
    let backend = MemoryBackend::new();
    let mut work = Workload {
        store: open(&backend).unwrap(),
        model: Model::new(),
    };
    for i in 0..30 {
        work.put("k", &k(i), "one");
    }
    for i in 0..5 {
        work.put("k", &gone(i), "doomed");
    }
    for i in 0..5 {
        work.delete("k", &gone(i));
    }
    work.store.checkpoint().unwrap();
    let first = manifest(&backend);
    assert_eq!(first.fallback.as_deref(), Some(""), "{first:?}");
    for i in 5..15 {
        work.put("k", &k(i), "two");
    }
    work.delete("k", &k(6));
    let Workload { store, model } = work;
    drop(store);
    let durable = backend.crash(CrashMode::LoseUnsynced);
    let damaged = first.checkpoint.unwrap();
    for how in DAMAGE {
        let what = format!("{how:?} of the first checkpoint {damaged}");
        let backend = durable.crash(CrashMode::LoseUnsynced);
        damage(&backend, &damaged, how);
        let store = open(&backend).unwrap_or_else(|e| panic!("{what}: {e}"));
        check_fallback_open(&store, &backend, &model, &damaged, None, &what);
        // Every commit was replayed: the keyspace's creation and 30 + 5 + 5 + 10 + 1 writes.
        assert_eq!(store.recovery_report().frames_replayed, 52, "{what}");
        // The healing checkpoint kept the whole log as its fallback; the next one has it.
        let healed = manifest(&backend).checkpoint;
        write_checkpoint_reopen(store, &backend, model.clone(), &what);
        assert_eq!(manifest(&backend).fallback, healed, "{what}");
    }
}

#[test]
fn both_checkpoints_damaged_refuse_the_open_naming_both_and_change_nothing() {
    for checkpoint_after in [false, true] {
        let fixture = build(checkpoint_after);
        let n = fixture.checkpoints.len();
        let [fallback, current] = [&fixture.checkpoints[n - 2], &fixture.checkpoints[n - 1]];
        for how in DAMAGE {
            let what = format!("{how:?} of {current} and {fallback}");
            let backend = fixture.backend.crash(CrashMode::LoseUnsynced);
            damage(&backend, current, how);
            damage(&backend, fallback, Damage::FlipBody);
            let before = files(&backend);
            for read_only in [false, true] {
                let opened = if read_only {
                    Store::open_read_only_with_backend(Arc::new(backend.clone()), DIR)
                } else {
                    open(&backend)
                };
                let Err(Error::Corrupt {
                    path: at, reason, ..
                }) = opened
                else {
                    panic!("{what}: expected a refusal, got {opened:?}");
                };
                assert_eq!(at, path(current), "{what}");
                assert!(
                    reason.contains(fallback.as_str())
                        && reason.contains("damaged too")
                        && reason.contains("run repair"),
                    "{what}: {reason}"
                );
                assert_eq!(files(&backend), before, "{what}: a file changed");
            }
        }
    }
}

#[test]
fn a_missing_retained_segment_makes_the_fallback_unusable_and_is_named() {
    let fixture = build(false);
    let current = &fixture.checkpoints[1];
    let backend = fixture.backend.crash(CrashMode::LoseUnsynced);
    let retained = manifest(&backend).retained;
    // The current state does not need it: the open and reads are fine, verify says so.
    backend.remove_file(&path(&retained[0])).unwrap();
    let store = open(&backend).unwrap();
    assert_eq!(contents(&store), fixture.model);
    let verified = store.verify().unwrap();
    assert!(
        verified.damage.iter().any(|d| d.path == path(&retained[0])),
        "{:?}",
        verified.damage
    );
    drop(store);
    // With the current checkpoint damaged too, the open refuses, naming both.
    damage(&backend, current, Damage::FlipBody);
    let before = files(&backend);
    let Err(Error::Corrupt {
        path: at, reason, ..
    }) = open(&backend)
    else {
        panic!("expected a refusal");
    };
    assert_eq!(at, path(current));
    assert!(
        reason.contains(retained[0].as_str()) && reason.contains("run repair"),
        "{reason}"
    );
    assert_eq!(files(&backend), before);
}

#[test]
fn a_read_only_open_falls_back_without_writing() {
    let fixture = build(false);
    let [a, b] = [&fixture.checkpoints[0], &fixture.checkpoints[1]];
    let backend = fixture.backend.crash(CrashMode::LoseUnsynced);
    damage(&backend, b, Damage::Truncate);
    let before = files(&backend);
    let store = Store::open_read_only_with_backend(Arc::new(backend.clone()), DIR).unwrap();
    check_fallback_open(&store, &backend, &fixture.model, b, Some(a), "read-only");
    assert!(store.checkpoint().is_err());
    drop(store);
    assert_eq!(files(&backend), before);
}

#[test]
fn verify_reports_a_damaged_fallback_checkpoint_and_retained_segment() {
    let fixture = build(false);
    let a = &fixture.checkpoints[0];
    let backend = fixture.backend.crash(CrashMode::LoseUnsynced);
    let store = open(&backend).unwrap();
    assert!(store.verify().unwrap().is_clean());
    drop(store);
    damage(&backend, a, Damage::FlipBody);
    let retained = manifest(&backend).retained;
    let mut bytes = backend.file_contents(&path(&retained[0])).unwrap();
    bytes[100] ^= 0x01;
    backend.overwrite_file(&path(&retained[0]), &bytes).unwrap();
    // The open does not read them.
    let store = open(&backend).unwrap();
    assert_eq!(store.recovery_report().checkpoint_fallback, None);
    assert_eq!(contents(&store), fixture.model);
    let verified = store.verify().unwrap();
    for damaged in [a, &retained[0]] {
        assert!(
            verified.damage.iter().any(|d| d.path == path(damaged)),
            "{damaged}: {:?}",
            verified.damage
        );
    }
    // The next checkpoint makes the compaction's checkpoint the fallback and deletes both.
    store.checkpoint().unwrap();
    assert!(store.verify().unwrap().is_clean());
}

/// Repair reads the fallback when the current checkpoint is damaged, and the store it writes
/// has no fallback until its next checkpoint: a damaged checkpoint of it refuses the open.
#[test]
fn repair_uses_the_fallback_and_its_store_gets_one_at_the_next_checkpoint() {
    let fixture = build(true);
    let current = &fixture.checkpoints[2];
    let backend = fixture.backend.crash(CrashMode::LoseUnsynced);
    damage(&backend, current, Damage::ZeroHeader);
    let report = Store::repair_with_backend(Arc::new(backend.clone()), DIR, options()).unwrap();
    assert!(report.checkpoint_used, "{report:?}");
    assert_eq!(report.values_dropped, 0, "{report:?}");
    assert!(
        report.damage.iter().any(|d| d.path == path(current)),
        "{report:?}"
    );
    let repaired = manifest(&backend);
    assert_eq!(repaired.fallback, None, "{repaired:?}");
    let store = open(&backend).unwrap();
    assert_eq!(contents(&store), fixture.model);
    drop(store);

    let checkpoint = repaired.checkpoint.unwrap();
    let intact = backend.file_contents(&path(&checkpoint)).unwrap();
    damage(&backend, &checkpoint, Damage::FlipBody);
    let Err(Error::Corrupt { reason, .. }) = open(&backend) else {
        panic!("a damaged checkpoint without a fallback must refuse the open");
    };
    assert!(
        reason.contains("no fallback") && reason.contains("run repair"),
        "{reason}"
    );
    backend.overwrite_file(&path(&checkpoint), &intact).unwrap();
    let store = open(&backend).unwrap();
    store.checkpoint().unwrap();
    drop(store);
    let names = manifest(&backend);
    assert_eq!(names.fallback.as_ref(), Some(&checkpoint));
    damage(&backend, &names.checkpoint.unwrap(), Damage::FlipBody);
    let store = open(&backend).unwrap();
    assert!(store.recovery_report().checkpoint_fallback.is_some());
    assert_eq!(contents(&store), fixture.model);
}

#[test]
fn repair_rewrites_a_store_whose_fallback_checkpoint_is_damaged() {
    let fixture = build(true);
    let backend = fixture.backend.crash(CrashMode::LoseUnsynced);
    let fallback = manifest(&backend).fallback.unwrap();
    damage(&backend, &fallback, Damage::FlipBody);
    let report = Store::repair_with_backend(Arc::new(backend.clone()), DIR, options()).unwrap();
    assert!(
        report.damage.iter().any(|d| d.path == path(&fallback)),
        "{report:?}"
    );
    assert_eq!(report.values_dropped, 0, "{report:?}");
    let store = open(&backend).unwrap();
    assert_eq!(contents(&store), fixture.model);
    assert!(store.verify().unwrap().is_clean());
}

/// Opens the fixture's store, overwrites keys so that segments die, then compacts and
/// checkpoints, with the `fail_sync`th fsync from there on failing, and stops at the first
/// error. Returns the store, still open (its close would fsync), its contents after the
/// writes (neither maintenance step changes them) and the number of fsyncs the maintenance
/// made.
fn compact_then_checkpoint(backend: &MemoryBackend, fail_sync: Option<u64>) -> (Store, Model, u64) {
    let store = open(backend).unwrap();
    let ks = store.keyspace("k").unwrap();
    for round in 0..4u32 {
        for i in 30..45u32 {
            let mut batch = WriteBatch::new();
            let value = format!("{round} {}", "w".repeat(120));
            batch.put(ks, k(i).as_bytes(), value.as_bytes());
            store.commit(batch).unwrap();
        }
    }
    let mut batch = WriteBatch::new();
    batch.delete(ks, k(31).as_bytes());
    store.commit(batch).unwrap();
    let expected = contents(&store);
    let start = backend.counters().syncs;
    backend.set_faults(FaultPlan {
        fail_sync_at: fail_sync.map(|n| start + n),
        ..FaultPlan::default()
    });
    if store.compact().is_ok() {
        let _ = store.checkpoint();
    }
    let syncs = backend.counters().syncs - start;
    backend.set_faults(FaultPlan::default());
    (store, expected, syncs)
}

/// Power loss at every fsync of a compaction (whose manifest names the previous checkpoint
/// as the fallback and retains the victims, and which releases the victims an earlier
/// compaction retained) and of the checkpoint after it (which deletes the old fallback and
/// the retained victims): every durable state opens to the same contents, with its current
/// checkpoint and, once that is damaged, with its fallback.
#[test]
fn power_loss_at_every_fsync_of_the_fallback_write_points() {
    let fixture = build(false);
    let (expected, syncs) = {
        let backend = fixture.backend.crash(CrashMode::LoseUnsynced);
        let before = manifest(&backend);
        let (store, expected, syncs) = compact_then_checkpoint(&backend, None);
        drop(store);
        let after = manifest(&backend);
        // The compaction released the retained victims of the fixture's and retained its
        // own; the checkpoint released those.
        assert!(!before.retained.is_empty() && after.retained.is_empty());
        assert!(!after.checkpoint.iter().chain(&after.fallback).any(|c| {
            before
                .checkpoint
                .iter()
                .chain(&before.fallback)
                .any(|old| old == c)
        }));
        (expected, syncs)
    };
    assert!(syncs >= 12, "{syncs} fsyncs");
    let (mut fell_back, mut orphans) = (0, 0);
    for n in 1..=syncs {
        for mode in [
            CrashMode::LoseUnsynced,
            CrashMode::TearUnsynced { seed: 1 },
            CrashMode::TearUnsynced { seed: 2 },
        ] {
            let what = format!("power loss at maintenance fsync {n} ({mode:?})");
            let running = fixture.backend.crash(CrashMode::LoseUnsynced);
            let (store, _, _) = compact_then_checkpoint(&running, Some(n));
            let crashed = running.crash(mode);
            drop(store);
            let copy = crashed.crash(CrashMode::LoseUnsynced);

            let store = open(&crashed).unwrap_or_else(|e| panic!("{what}: {e}"));
            assert_eq!(store.recovery_report().checkpoint_fallback, None, "{what}");
            assert_eq!(contents(&store), expected, "{what}");
            let verified = store.verify().unwrap();
            assert!(verified.is_clean(), "{what}: {:?}", verified.damage);
            if !store.recovery_report().orphans_removed.is_empty() {
                orphans += 1;
            }
            drop(store);

            let names = manifest(&copy);
            assert!(names.fallback.is_some(), "{what}: {names:?}");
            let current = names.checkpoint.unwrap();
            damage(&copy, &current, Damage::FlipBody);
            let store = open(&copy).unwrap_or_else(|e| panic!("{what}, {current} damaged: {e}"));
            assert!(
                store.recovery_report().checkpoint_fallback.is_some(),
                "{what}"
            );
            assert_eq!(contents(&store), expected, "{what}, {current} damaged");
            fell_back += 1;
        }
    }
    // Crashes left new files unnamed (before a manifest) and old ones undeleted (after).
    assert!(orphans > 0, "{orphans}");
    assert_eq!(fell_back, syncs * 3);
}
