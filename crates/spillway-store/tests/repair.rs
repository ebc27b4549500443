//! `Store::repair` salvages around missing, truncated, misnamed and damaged files: it never
//! panics, keeps every value whose bytes survive, trusts segment headers over file names,
//! replays without a checkpoint in the order things were written, and leaves an intact store
//! untouched.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use spillway_store::backend::{Backend, CrashMode, MemoryBackend};
use spillway_store::{LostWriteEffect, Store, StoreOptions, WriteBatch};

const DIR: &str = "/salvage";

fn options() -> StoreOptions {
    StoreOptions {
        segment_size: 4096,
        compaction_live_ratio: 0.9,
        ..StoreOptions::default()
    }
}

type Contents = BTreeMap<String, BTreeMap<Vec<u8>, Vec<u8>>>;

/// A store with keyspace `early` (rewritten, then compacted into compacted segments) and
/// keyspace `late` (written after the compaction, in sealed and active log segments), a
/// checkpoint after everything. Returns the backend (crashed, so only synced bytes remain)
/// and what every keyspace holds.
fn build() -> (MemoryBackend, Contents) {
    let backend = MemoryBackend::new();
    let store = Store::open_with_backend(Arc::new(backend.clone()), DIR, options()).unwrap();
    let early = store.keyspace("early").unwrap();
    let mut contents = Contents::new();
    for round in 0..3 {
        for i in 0..20u32 {
            let key = format!("e{i:02}").into_bytes();
            let value = format!("early {i} round {round} {}", "e".repeat(60)).into_bytes();
            let mut batch = WriteBatch::new();
            batch.put(early, &key, &value);
            store.commit(batch).unwrap();
            contents
                .entry("early".into())
                .or_default()
                .insert(key, value);
        }
    }
    let report = store.compact().unwrap();
    assert!(!report.segments_written.is_empty(), "{report:?}");
    let late = store.keyspace("late").unwrap();
    for i in 0..40u32 {
        let key = format!("l{i:02}").into_bytes();
        let value = format!("late {i} {}", "l".repeat(70)).into_bytes();
        let mut batch = WriteBatch::new();
        batch.put(late, &key, &value);
        store.commit(batch).unwrap();
        contents
            .entry("late".into())
            .or_default()
            .insert(key, value);
    }
    store.checkpoint().unwrap();
    drop(store);
    (backend.crash(CrashMode::LoseUnsynced), contents)
}

/// `(file name, id in its header, kind byte)` of every segment file.
fn segment_files(backend: &MemoryBackend) -> Vec<(String, u64, u8)> {
    let mut files = Vec::new();
    for name in backend.list_dir(Path::new(DIR)).unwrap() {
        if name.starts_with("seg-") {
            let bytes = backend.file_contents(&path(&name)).unwrap();
            let id = u64::from_le_bytes(bytes[16..24].try_into().unwrap());
            files.push((name, id, bytes[10]));
        }
    }
    files.sort();
    files
}

fn path(name: &str) -> PathBuf {
    Path::new(DIR).join(name)
}

const LOG: u8 = 1;
const COMPACTED: u8 = 2;

/// The active log segment (the log segment with the highest id).
fn active_segment(backend: &MemoryBackend) -> String {
    segment_files(backend)
        .into_iter()
        .filter(|(_, _, kind)| *kind == LOG)
        .max_by_key(|(_, id, _)| *id)
        .unwrap()
        .0
}

fn read_all(backend: &MemoryBackend) -> Contents {
    let store = Store::open_with_backend(Arc::new(backend.clone()), DIR, options()).unwrap();
    let report = store.verify().unwrap();
    assert!(report.is_clean(), "{report:?}");
    let snapshot = store.snapshot();
    let mut contents = Contents::new();
    for (name, id) in store.keyspaces() {
        let entries = contents.entry(name).or_default();
        for entry in snapshot.iter(id).unwrap() {
            let (key, value) = entry.unwrap();
            entries.insert(key.to_vec(), value.to_vec());
        }
    }
    contents
}

fn repair(backend: &MemoryBackend) -> spillway_store::RepairReport {
    Store::repair_with_backend(Arc::new(backend.clone()), DIR, options()).unwrap()
}

/// `expected` without the values whose bytes appear in `lost_bytes`.
fn without_values_in(expected: &Contents, lost_bytes: &[u8]) -> (Contents, u64) {
    let mut kept = Contents::new();
    let mut n_lost = 0;
    for (name, entries) in expected {
        let kept_entries = kept.entry(name.clone()).or_default();
        for (key, value) in entries {
            if lost_bytes
                .windows(value.len())
                .any(|window| window == &value[..])
            {
                n_lost += 1;
            } else {
                kept_entries.insert(key.clone(), value.clone());
            }
        }
    }
    (kept, n_lost)
}

/// Compares two contents without printing thousands of bytes.
fn assert_same(found: &Contents, expected: &Contents, what: &str) {
    for (name, entries) in expected {
        let found_entries = found.get(name);
        assert!(found_entries.is_some(), "{what}: keyspace {name} is gone");
        let found_entries = found_entries.unwrap();
        for (key, value) in entries {
            assert!(
                found_entries.get(key) == Some(value),
                "{what}: keyspace {name}, key {:?}: expected {:?}, found {:?}",
                String::from_utf8_lossy(key),
                String::from_utf8_lossy(value),
                found_entries
                    .get(key)
                    .map(|v| String::from_utf8_lossy(v).into_owned())
            );
        }
        assert_eq!(
            found_entries.len(),
            entries.len(),
            "{what}: keyspace {name}"
        );
    }
    let extra: Vec<&String> = found
        .keys()
        .filter(|k| !expected.contains_key(*k))
        .collect();
    assert!(extra.is_empty(), "{what}: unexpected keyspaces {extra:?}");
}

#[test]
fn a_missing_active_segment_is_replaced_and_only_its_values_are_lost() {
    for (every_log_segment, without_manifest) in
        [(false, false), (false, true), (true, false), (true, true)]
    {
        let what = format!(
            "every log segment deleted: {every_log_segment}, without manifest: {without_manifest}"
        );
        let (backend, contents) = build();
        let deleted: Vec<String> = if every_log_segment {
            segment_files(&backend)
                .into_iter()
                .filter(|(_, _, kind)| *kind == LOG)
                .map(|(name, _, _)| name)
                .collect()
        } else {
            vec![active_segment(&backend)]
        };
        let mut deleted_bytes = Vec::new();
        for name in &deleted {
            deleted_bytes.extend(backend.file_contents(&path(name)).unwrap());
            backend.remove_file(&path(name)).unwrap();
        }
        let (expected, n_lost) = without_values_in(&contents, &deleted_bytes);
        assert!(
            n_lost > 0,
            "{what}: the deleted segments should hold some values"
        );
        if without_manifest {
            backend.remove_file(&path("MANIFEST")).unwrap();
        }
        let report = repair(&backend);
        assert!(report.active_segment_missing, "{what}: {report:?}");
        assert!(
            report
                .damage
                .iter()
                .any(|d| d.reason.contains("active") && d.reason.contains("missing")),
            "{what}: {report:?}"
        );
        assert_eq!(report.values_dropped, n_lost, "{what}: {report:?}");
        assert_same(&read_all(&backend), &expected, &what);
        let again = repair(&backend);
        assert!(
            again.damage.is_empty() && again.backup_dir.is_none(),
            "{what}: {again:?}"
        );
    }
}

#[test]
fn files_are_identified_by_their_headers_not_their_names() {
    let (backend, contents) = build();
    let files = segment_files(&backend);
    let compacted = files.iter().find(|f| f.2 == COMPACTED).unwrap().0.clone();
    let log = files.iter().find(|f| f.2 == LOG).unwrap().0.clone();
    let a = backend.file_contents(&path(&compacted)).unwrap();
    let b = backend.file_contents(&path(&log)).unwrap();
    backend.overwrite_file(&path(&compacted), &b).unwrap();
    backend.overwrite_file(&path(&log), &a).unwrap();
    assert!(Store::open_with_backend(Arc::new(backend.clone()), DIR, options()).is_err());

    let report = repair(&backend);
    assert_eq!(report.values_dropped, 0, "{report:?}");
    assert!(report.checkpoint_used, "{report:?}");
    assert!(
        report
            .damage
            .iter()
            .any(|d| d.reason.contains("header says segment")),
        "{report:?}"
    );
    assert_same(&read_all(&backend), &contents, "");
}

#[test]
fn a_segment_with_a_zeroed_header_is_still_read() {
    for kind in [LOG, COMPACTED] {
        let (backend, contents) = build();
        let name = segment_files(&backend)
            .into_iter()
            .find(|f| f.2 == kind)
            .unwrap()
            .0;
        let mut bytes = backend.file_contents(&path(&name)).unwrap();
        bytes[..32].fill(0);
        backend.overwrite_file(&path(&name), &bytes).unwrap();
        let report = repair(&backend);
        assert_eq!(report.values_dropped, 0, "kind {kind}: {report:?}");
        assert_same(&read_all(&backend), &contents, &format!("kind {kind}"));
    }
}

#[test]
fn a_truncated_or_deleted_compacted_segment_costs_only_its_values() {
    for cut in [None, Some(0), Some(32), Some(700)] {
        let (backend, contents) = build();
        let name = segment_files(&backend)
            .into_iter()
            .find(|f| f.2 == COMPACTED)
            .unwrap()
            .0;
        let bytes = backend.file_contents(&path(&name)).unwrap();
        match cut {
            None => backend.remove_file(&path(&name)).unwrap(),
            Some(len) => backend.overwrite_file(&path(&name), &bytes[..len]).unwrap(),
        }
        let report = repair(&backend);
        let after = read_all(&backend);
        // Both keyspaces keep their names (from the checkpoint), `late` keeps everything.
        assert_eq!(after.get("late"), contents.get("late"), "cut {cut:?}");
        let early = after
            .get("early")
            .unwrap_or_else(|| panic!("cut {cut:?}: {report:?}"));
        let original = &contents["early"];
        for (key, value) in early {
            assert_eq!(original.get(key), Some(value));
        }
        let lost = (original.len() - early.len()) as u64;
        assert_eq!(report.values_dropped, lost, "cut {cut:?}: {report:?}");
        let mut dropped: Vec<&str> = report
            .dropped_keys
            .iter()
            .map(|(ks, _)| ks.as_str())
            .collect();
        dropped.dedup();
        assert_eq!(
            dropped,
            if lost == 0 { vec![] } else { vec!["early"] },
            "cut {cut:?}"
        );
        // What survived is what the remaining bytes held.
        if let Some(len) = cut {
            let kept = original
                .values()
                .filter(|value| {
                    bytes[..len]
                        .windows(value.len())
                        .any(|window| window == &value[..])
                })
                .count();
            assert_eq!(early.len(), kept, "cut {cut:?}");
        } else {
            assert!(early.is_empty());
        }
    }
}

#[test]
fn without_checkpoint_a_compacted_copy_does_not_hide_a_newer_value_nor_lose_to_an_older_one() {
    let backend = MemoryBackend::new();
    let store = Store::open_with_backend(Arc::new(backend.clone()), DIR, options()).unwrap();
    let ks = store.keyspace("k").unwrap();
    // Segment 1 stays mostly live: "x" = "old" among big values that never change.
    let mut batch = WriteBatch::new();
    batch.put(ks, b"x", b"old");
    store.commit(batch).unwrap();
    for i in 0..5u32 {
        let mut batch = WriteBatch::new();
        batch.put(ks, format!("big{i}").as_bytes(), &vec![b'b'; 600]);
        store.commit(batch).unwrap();
    }
    // Later segments are mostly dead churn, with the newer "x" among them.
    for round in 0..12u32 {
        let mut batch = WriteBatch::new();
        batch.put(ks, b"churn", &vec![round as u8; 900]);
        store.commit(batch).unwrap();
        if round == 0 {
            let mut batch = WriteBatch::new();
            batch.put(ks, b"x", b"new");
            store.commit(batch).unwrap();
        }
    }
    let report = store.compact().unwrap();
    assert!(!report.segments_written.is_empty(), "{report:?}");
    assert!(!report.segments_compacted.contains(&1), "{report:?}");
    assert_eq!(
        report.records_moved, 2,
        "the newer x and the churn: {report:?}"
    );
    drop(store);
    let backend = backend.crash(CrashMode::LoseUnsynced);
    for name in backend.list_dir(Path::new(DIR)).unwrap() {
        if name.starts_with("ckpt-") {
            backend.remove_file(&path(&name)).unwrap();
        }
    }
    let report = repair(&backend);
    assert!(!report.checkpoint_used);
    let after = read_all(&backend);
    assert_eq!(after["k"][&b"x"[..]], b"new");
    assert_eq!(after["k"][&b"churn"[..]], vec![11u8; 900]);
}

#[test]
fn repairing_an_intact_store_changes_nothing() {
    let (backend, contents) = build();
    let files = |backend: &MemoryBackend| {
        let mut all = BTreeMap::new();
        for name in backend.list_dir(Path::new(DIR)).unwrap() {
            if let Ok(bytes) = backend.file_contents(&path(&name)) {
                all.insert(name, bytes);
            }
        }
        all
    };
    let before = files(&backend);
    let report = repair(&backend);
    assert!(report.damage.is_empty(), "{report:?}");
    assert_eq!(report.backup_dir, None);
    assert!(report.files_moved.is_empty());
    assert_eq!(report.values_dropped, 0);
    assert_eq!(files(&backend), before);
    assert_same(&read_all(&backend), &contents, "");
}

#[test]
fn an_empty_directory_is_refused_with_a_clear_error() {
    let backend = MemoryBackend::new();
    backend.create_dir_all(Path::new(DIR)).unwrap();
    let error = Store::repair_with_backend(Arc::new(backend), DIR, options()).unwrap_err();
    assert!(error.to_string().contains("nothing to salvage"), "{error}");
}

#[test]
fn a_log_segment_shortened_only_of_its_zeroes_is_rewritten_and_then_opens() {
    let (backend, contents) = build();
    let name = active_segment(&backend);
    let bytes = backend.file_contents(&path(&name)).unwrap();
    let used = bytes.iter().rposition(|&b| b != 0).unwrap() + 1;
    assert!(
        used < bytes.len(),
        "the active segment must have zero room left"
    );
    backend
        .overwrite_file(&path(&name), &bytes[..used])
        .unwrap();
    // The normal open refuses a shortened file...
    let refused = Store::open_with_backend(Arc::new(backend.clone()), DIR, options());
    assert!(
        refused
            .as_ref()
            .is_err_and(|e| e.to_string().contains("shortened")),
        "{:?}",
        refused.map(|_| ())
    );
    // ...so repair must not take the store for intact: it reports the cut and rewrites it,
    // losing nothing, since only zeroes were cut.
    let report = repair(&backend);
    assert!(
        report.damage.iter().any(|d| d.reason.contains("shortened")),
        "{report:?}"
    );
    assert_eq!(report.values_dropped, 0, "{report:?}");
    assert_same(&read_all(&backend), &contents, "");
    assert!(repair(&backend).damage.is_empty());
}

/// A store whose keyspace `docs` holds `k00`..`k09` (version 1) at a checkpoint, then two
/// commits the checkpoint does not cover: the first writes version 2 of `k00`..`k04`, a new
/// key `n1` and deletes `k09`; the second writes version 3 of `k00` and version 2 of `k05`.
/// Returns the backend and the active segment's name.
fn build_with_two_later_commits() -> (MemoryBackend, String) {
    let backend = MemoryBackend::new();
    let store = Store::open_with_backend(Arc::new(backend.clone()), DIR, options()).unwrap();
    let docs = store.keyspace("docs").unwrap();
    let mut batch = WriteBatch::new();
    for i in 0..10 {
        batch.put(
            docs,
            format!("k{i:02}").as_bytes(),
            format!("k{i:02} v1").as_bytes(),
        );
    }
    store.commit(batch).unwrap();
    store.checkpoint().unwrap();
    let mut first = WriteBatch::new();
    for i in 0..5 {
        first.put(
            docs,
            format!("k{i:02}").as_bytes(),
            format!("k{i:02} v2").as_bytes(),
        );
    }
    first.put(docs, b"n1", b"n1 v1");
    first.delete(docs, b"k09");
    store.commit(first).unwrap();
    let mut second = WriteBatch::new();
    second.put(docs, b"k00", b"k00 v3");
    second.put(docs, b"k05", b"k05 v2");
    store.commit(second).unwrap();
    drop(store);
    let backend = backend.crash(CrashMode::LoseUnsynced);
    let active = active_segment(&backend);
    (backend, active)
}

/// The lost writes of a report as `(keyspace, key, effect)`, sorted.
fn lost_writes(report: &spillway_store::RepairReport) -> Vec<(String, String, LostWriteEffect)> {
    let mut lost: Vec<_> = report
        .lost_writes
        .iter()
        .map(|write| {
            (
                write.keyspace.clone(),
                String::from_utf8_lossy(&write.key).into_owned(),
                write.effect,
            )
        })
        .collect();
    lost.sort();
    lost
}

#[test]
fn a_dropped_commit_in_the_middle_of_the_log_names_every_key_it_rolled_back() {
    let (backend, active) = build_with_two_later_commits();
    let mut bytes = backend.file_contents(&path(&active)).unwrap();
    // Damage one value of the first later commit: its frame fails its checksum, the second
    // later commit is intact and kept.
    let at = bytes.windows(6).position(|w| w == b"k02 v2").unwrap();
    bytes[at + 5] = b'9';
    backend.overwrite_file(&path(&active), &bytes).unwrap();

    let report = repair(&backend);
    assert_eq!(report.commits_dropped, 1, "{report:?}");
    assert!(report.lost_writes_complete, "{report:?}");
    let docs = |key: &str, effect| ("docs".to_string(), key.to_string(), effect);
    assert_eq!(
        lost_writes(&report),
        vec![
            docs("k01", LostWriteEffect::RolledBack),
            docs("k02", LostWriteEffect::RolledBack),
            docs("k03", LostWriteEffect::RolledBack),
            docs("k04", LostWriteEffect::RolledBack),
            docs("k09", LostWriteEffect::Undeleted),
            docs("n1", LostWriteEffect::Vanished),
        ],
        "{report:?}"
    );
    // A lost value whose own checksum holds is handed back; the damaged one is not.
    let lost_value = |key: &[u8]| {
        report
            .lost_writes
            .iter()
            .find(|write| write.key == key)
            .and_then(|write| write.lost_value.clone())
    };
    assert_eq!(lost_value(b"k01").as_deref(), Some(&b"k01 v2"[..]));
    assert_eq!(lost_value(b"k02"), None);
    assert_eq!(lost_value(b"n1").as_deref(), Some(&b"n1 v1"[..]));
    // The report says what the store now holds.
    let after = read_all(&backend);
    let value = |key: &str| {
        after["docs"]
            .get(key.as_bytes())
            .map(|v| String::from_utf8_lossy(v).into_owned())
    };
    assert_eq!(value("k00").as_deref(), Some("k00 v3"));
    assert_eq!(value("k01").as_deref(), Some("k01 v1"));
    assert_eq!(value("k05").as_deref(), Some("k05 v2"));
    assert_eq!(value("k09").as_deref(), Some("k09 v1"));
    assert_eq!(value("n1"), None);
}

#[test]
fn a_log_cut_short_says_its_lost_commits_cannot_be_named() {
    let (backend, active) = build_with_two_later_commits();
    let bytes = backend.file_contents(&path(&active)).unwrap();
    // Cut the log inside the first later commit's frame, after its first value.
    let at = bytes.windows(6).position(|w| w == b"k01 v2").unwrap();
    backend
        .overwrite_file(&path(&active), &bytes[..at])
        .unwrap();

    let report = repair(&backend);
    assert!(!report.lost_writes_complete, "{report:?}");
    // What the surviving bytes of the torn frame still show is named: `k01`'s op header and
    // key survive, its value does not.
    assert_eq!(
        lost_writes(&report),
        vec![
            (
                "docs".to_string(),
                "k00".to_string(),
                LostWriteEffect::RolledBack
            ),
            (
                "docs".to_string(),
                "k01".to_string(),
                LostWriteEffect::RolledBack
            ),
        ],
        "{report:?}"
    );
    let after = read_all(&backend);
    assert_eq!(after["docs"][&b"k00"[..]], b"k00 v1");
}
