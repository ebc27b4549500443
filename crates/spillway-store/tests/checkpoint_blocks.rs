//! Checkpoint format version 3 (issue 31): one CRC per 64 KiB block of the body. An open checks
//! the header, the block table and the few blocks the archive's structure lies in; every other
//! block is checked the first time a read touches it. A damaged block fails exactly the reads,
//! writes and checkpoints that touch it with `Error::Corrupt` naming the file and the block's
//! offset (never wrong data), `verify` reports it, and repair heals it. Damage an open does
//! read (the header, the table, the structure) makes it fall back as before, and version 2
//! checkpoints (one CRC over the whole body) still open.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use spillway_store::backend::MemoryBackend;
use spillway_store::{Error, KeyspaceId, Store, StoreOptions, WriteBatch};

const DIR: &str = "/blocks";
const KEYS: u32 = 50_000;
const BLOCK_LEN: u64 = 64 * 1024;

fn options() -> StoreOptions {
    StoreOptions {
        segment_size: 8 << 20,
        // Only the explicit checkpoints of each test.
        checkpoint_after_log_bytes: 0,
        ..StoreOptions::default()
    }
}

fn open(backend: &MemoryBackend) -> Store {
    Store::open_with_backend(Arc::new(backend.clone()), DIR, options()).unwrap()
}

/// Keys whose first 8 bytes differ, as the fences need to narrow a search to 64 keys (keys
/// sharing them widen the search, and a damaged block then fails more lookups).
fn key(i: u32) -> Vec<u8> {
    format!("{i:07}-key").into_bytes()
}

fn value(i: u32) -> Vec<u8> {
    format!("value {i}").into_bytes()
}

/// A store of [`KEYS`] keys in keyspace `k` and a few in `small`, checkpointed (a body of
/// about 30 blocks), closed. Returns the backend, the current checkpoint file and what `k`
/// holds.
fn build() -> (MemoryBackend, PathBuf, BTreeMap<Vec<u8>, Vec<u8>>) {
    let backend = MemoryBackend::new();
    let store = open(&backend);
    let ks = store.keyspace("k").unwrap();
    let small = store.keyspace("small").unwrap();
    let mut expected = BTreeMap::new();
    for chunk in 0..KEYS / 1000 {
        let mut batch = WriteBatch::new();
        for i in chunk * 1000..(chunk + 1) * 1000 {
            batch.put(ks, &key(i), &value(i));
            expected.insert(key(i), value(i));
        }
        store.commit(batch).unwrap();
    }
    let mut batch = WriteBatch::new();
    batch.put(small, b"one", b"1");
    store.commit(batch).unwrap();
    store.checkpoint().unwrap();
    drop(store);
    (backend.clone(), current_checkpoint(&backend), expected)
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

fn body_len(bytes: &[u8]) -> u64 {
    u64::from_le_bytes(bytes[16..24].try_into().unwrap())
}

/// Flips one bit of byte `offset` of `file`.
fn flip(backend: &MemoryBackend, file: &Path, offset: u64) {
    let mut bytes = backend.file_contents(file).unwrap();
    bytes[offset as usize] ^= 0x10;
    backend.overwrite_file(file, &bytes).unwrap();
}

/// True if `error` is the damage of the block holding file offset `damaged` of `file`.
fn names_the_block(error: &Error, file: &Path, damaged: u64) -> bool {
    match error {
        Error::Corrupt { path, offset, .. } => {
            path == file && *offset <= damaged && damaged < *offset + BLOCK_LEN
        }
        _ => false,
    }
}

#[test]
fn an_open_checks_only_the_blocks_of_the_structure() {
    let (backend, file, expected) = build();
    let bytes = backend.file_contents(&file).unwrap();
    assert_eq!(u32::from_le_bytes(bytes[8..12].try_into().unwrap()), 3);
    let blocks = body_len(&bytes).div_ceil(BLOCK_LEN);
    assert!(blocks >= 20, "{blocks} blocks");

    let store = open(&backend);
    let stats = store.stats();
    assert_eq!(stats.checkpoint_blocks, blocks);
    assert!(
        stats.checkpoint_blocks_checked <= 3,
        "the open checked {} of {blocks} blocks",
        stats.checkpoint_blocks_checked
    );
    // One lookup checks the few blocks its search reads.
    let ks = store.keyspace_id("k").unwrap();
    assert_eq!(store.get(ks, &key(34_321)).unwrap(), Some(value(34_321)));
    let after_one = store.stats().checkpoint_blocks_checked;
    assert!(
        after_one <= stats.checkpoint_blocks_checked + 4,
        "one lookup checked {} blocks",
        after_one - stats.checkpoint_blocks_checked
    );
    // A scan reads the keys and entries: most blocks.
    let scanned: BTreeMap<Vec<u8>, Vec<u8>> = store
        .snapshot()
        .iter(ks)
        .unwrap()
        .map(|entry| entry.map(|(k, v)| (k.to_vec(), v.to_vec())).unwrap())
        .collect();
    assert_eq!(scanned, expected);
    assert!(store.stats().checkpoint_blocks_checked >= blocks * 9 / 10);
    assert!(store.verify().unwrap().is_clean());
}

#[test]
fn a_damaged_block_fails_only_the_reads_that_touch_it_and_repair_heals_it() {
    let (backend, file, expected) = build();
    let bytes = backend.file_contents(&file).unwrap();
    // The middle of the body: the keyspace's entries, far from the structure at the end.
    let damaged = 32 + body_len(&bytes) / 2;
    flip(&backend, &file, damaged);

    let store = open(&backend);
    assert!(store.recovery_report().checkpoint_fallback.is_none());
    let ks = store.keyspace_id("k").unwrap();
    let small = store.keyspace_id("small").unwrap();
    assert_eq!(store.get(small, b"one").unwrap(), Some(b"1".to_vec()));

    // Every lookup returns the value written, or the damage: never another value.
    let mut failed = Vec::new();
    for i in 0..KEYS {
        match store.get(ks, &key(i)) {
            Ok(found) => assert_eq!(found, Some(value(i)), "key {i}"),
            Err(error) => {
                assert!(names_the_block(&error, &file, damaged), "key {i}: {error}");
                failed.push(i);
            }
        }
    }
    assert!(!failed.is_empty(), "no read touched the damaged block");
    assert!(
        failed.len() < KEYS as usize / 10,
        "{} of {KEYS} lookups failed",
        failed.len()
    );

    // A scan returns intact entries up to the damage, then the error, then ends.
    let snapshot = store.snapshot();
    let mut scan = snapshot.iter(ks).unwrap();
    let mut before_damage = 0;
    let error = loop {
        match scan.next().expect("the scan ends only after the damage") {
            Ok((k, v)) => {
                assert_eq!(expected.get(k).map(Vec::as_slice), Some(v));
                before_damage += 1;
            }
            Err(error) => break error,
        }
    };
    assert!(names_the_block(&error, &file, damaged), "{error}");
    assert!(scan.next().is_none());
    assert!(before_damage > 0 && before_damage < KEYS as usize);
    drop(snapshot);

    // A write that would read the block fails and changes nothing; others go through.
    let victim = failed[0];
    let mut batch = WriteBatch::new();
    batch.put(ks, &key(victim), b"new");
    let error = store.commit(batch).unwrap_err();
    assert!(names_the_block(&error, &file, damaged), "{error}");
    assert!(store.get(ks, &key(victim)).is_err());
    let mut batch = WriteBatch::new();
    batch.put(ks, b"zzz-after", b"after");
    store.commit(batch).unwrap();
    // A checkpoint reads every key: it fails, and writes nothing.
    let error = store.checkpoint().unwrap_err();
    assert!(names_the_block(&error, &file, damaged), "{error}");

    let report = store.verify().unwrap();
    assert!(
        report
            .damage
            .iter()
            .any(|d| d.path == file && d.offset <= damaged && damaged < d.offset + BLOCK_LEN),
        "{report:?}"
    );
    drop(store);

    let report = Store::repair_with_backend(Arc::new(backend.clone()), DIR, options()).unwrap();
    assert!(report.damage.iter().any(|d| d.path == file), "{report:?}");
    let store = open(&backend);
    assert!(store.verify().unwrap().is_clean());
    let ks = store.keyspace_id("k").unwrap();
    let mut healed = expected;
    healed.insert(b"zzz-after".to_vec(), b"after".to_vec());
    let contents: BTreeMap<Vec<u8>, Vec<u8>> = store
        .snapshot()
        .iter(ks)
        .unwrap()
        .map(|entry| entry.map(|(k, v)| (k.to_vec(), v.to_vec())).unwrap())
        .collect();
    assert_eq!(contents, healed);
}

/// Damage in what an open reads (the header, the block table, the blocks of the root and the
/// keyspace table) makes it fall back to the log, as a damaged checkpoint always did.
#[test]
fn damage_an_open_reads_makes_it_fall_back() {
    let (backend, file, expected) = build();
    let bytes = backend.file_contents(&file).unwrap();
    let len = bytes.len() as u64;
    let body_end = 32 + body_len(&bytes);
    let table_start = body_end;
    for (what, offset) in [
        ("header", 17),
        ("block table", table_start + 5),
        ("root", body_end - 8),
    ] {
        let backend = backend.crash(spillway_store::backend::CrashMode::LoseUnsynced);
        assert!(offset < len, "{what}");
        flip(&backend, &file, offset);
        let store = open(&backend);
        let fallback = store
            .recovery_report()
            .checkpoint_fallback
            .clone()
            .unwrap_or_else(|| panic!("{what}: no fallback"));
        assert_eq!(fallback.damaged, file, "{what}");
        let ks = store.keyspace_id("k").unwrap();
        assert_eq!(contents(&store, ks), expected, "{what}");
        assert!(store.verify().unwrap().is_clean(), "{what}: not healed");
    }
}

fn contents(store: &Store, ks: KeyspaceId) -> BTreeMap<Vec<u8>, Vec<u8>> {
    store
        .snapshot()
        .iter(ks)
        .unwrap()
        .map(|e| e.map(|(k, v)| (k.to_vec(), v.to_vec())).unwrap())
        .collect()
}

/// A version 2 checkpoint (one CRC over the whole body, written before issue 31) opens, is
/// checked whole, and the next checkpoint writes version 3.
#[test]
fn a_version_2_checkpoint_opens_and_the_next_checkpoint_writes_version_3() {
    let (backend, file, expected) = build();
    let v2 =
        spillway_store::fuzzing::checkpoint_as_version_2(&backend.file_contents(&file).unwrap())
            .unwrap();
    assert_eq!(u32::from_le_bytes(v2[8..12].try_into().unwrap()), 2);
    backend.overwrite_file(&file, &v2).unwrap();

    let store = open(&backend);
    assert!(store.recovery_report().checkpoint_fallback.is_none());
    assert_eq!(store.stats().checkpoint_blocks, 0);
    assert_eq!(store.stats().keys_in_memory, 0);
    let ks = store.keyspace_id("k").unwrap();
    assert_eq!(contents(&store, ks), expected);
    assert!(store.verify().unwrap().is_clean());
    store.checkpoint().unwrap();
    let bytes = backend
        .file_contents(&current_checkpoint(&backend))
        .unwrap();
    assert_eq!(u32::from_le_bytes(bytes[8..12].try_into().unwrap()), 3);
    drop(store);
    let store = open(&backend);
    assert_eq!(contents(&store, ks), expected);
    assert!(store.verify().unwrap().is_clean());

    // A damaged version 2 body is still found by the open, which falls back.
    let backend = {
        let (backend, file, _) = build();
        let v2 = spillway_store::fuzzing::checkpoint_as_version_2(
            &backend.file_contents(&file).unwrap(),
        )
        .unwrap();
        backend.overwrite_file(&file, &v2).unwrap();
        flip(&backend, &file, 32 + body_len(&v2) / 2);
        backend
    };
    let store = open(&backend);
    assert!(store.recovery_report().checkpoint_fallback.is_some());
    assert_eq!(contents(&store, ks), expected);
}

/// The replay at open reads the current checkpoint's blocks holding the keys the log after it
/// writes: a damaged one makes the open fall back (here to the whole log), as damage the open
/// checks itself does, and the store heals with a new checkpoint.
#[test]
fn a_damaged_block_the_replay_reads_makes_the_open_fall_back() {
    let (backend, file, mut expected) = build();
    let store = open(&backend);
    let ks = store.keyspace_id("k").unwrap();
    // Overwrites after the checkpoint, in every block of the keys.
    for i in (0..KEYS).step_by(97) {
        let mut batch = WriteBatch::new();
        batch.put(ks, &key(i), b"overwritten");
        store.commit(batch).unwrap();
        expected.insert(key(i), b"overwritten".to_vec());
    }
    drop(store);
    let bytes = backend.file_contents(&file).unwrap();
    let damaged = 32 + body_len(&bytes) / 2;
    flip(&backend, &file, damaged);

    let store = open(&backend);
    let fallback = store
        .recovery_report()
        .checkpoint_fallback
        .clone()
        .expect("the open fell back");
    assert_eq!(fallback.damaged, file);
    assert!(
        fallback.offset <= damaged && damaged < fallback.offset + BLOCK_LEN,
        "{fallback:?}"
    );
    assert_eq!(contents(&store, ks), expected);
    assert!(store.verify().unwrap().is_clean());
}
