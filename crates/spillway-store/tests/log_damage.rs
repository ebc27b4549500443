//! Damage inside the active log segment is not a torn tail: a byte flipped in an early frame,
//! a zeroed 4 KiB block, or a shortened file, with intact commits after the damage. The open
//! must refuse with the file and offset, change no byte on disk, and leave `repair` able to
//! keep the later commits. (Genuine torn tails are in `torn_tail.rs`.)

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use spillway_store::backend::{Backend, CrashMode, MemoryBackend};
use spillway_store::{Error, Store, StoreOptions, WriteBatch};

const DIR: &str = "/damage";

fn options() -> StoreOptions {
    StoreOptions {
        segment_size: 64 * 1024,
        ..StoreOptions::default()
    }
}

fn segment_path() -> PathBuf {
    Path::new(DIR).join("seg-00000001.spw")
}

/// A store with the keyspace frame and `frames` commits of a few hundred bytes each, all in
/// the active segment; returns the backend and the end offset of every commit's frame.
fn build(frames: u32) -> (MemoryBackend, Vec<usize>) {
    let backend = MemoryBackend::new();
    let store = Store::open_with_backend(Arc::new(backend.clone()), DIR, options()).unwrap();
    let ks = store.keyspace("k").unwrap();
    let mut ends = Vec::new();
    for i in 0..frames {
        let mut batch = WriteBatch::new();
        batch.put(
            ks,
            format!("key{i:03}").as_bytes(),
            &[b'a' + (i % 26) as u8; 200],
        );
        store.commit(batch).unwrap();
        ends.push(store.stats().segments[0].written_bytes as usize + 32);
    }
    assert_eq!(
        store.stats().segments.len(),
        1,
        "everything in the active segment"
    );
    drop(store);
    (backend, ends)
}

/// Every file of the store directory and its bytes.
fn files(backend: &MemoryBackend) -> BTreeMap<String, Vec<u8>> {
    backend
        .list_dir(Path::new(DIR))
        .unwrap()
        .into_iter()
        .map(|name| {
            let bytes = backend.file_contents(&Path::new(DIR).join(&name)).unwrap();
            (name, bytes)
        })
        .collect()
}

/// Opens `backend` (read-write, then read-only), expecting a refusal that names the segment;
/// checks that no file changed. Returns the read-write error's message.
fn open_refuses(backend: &MemoryBackend, what: &str) -> String {
    let before = files(backend);
    let error = Store::open_with_backend(Arc::new(backend.clone()), DIR, options())
        .map(|_| ())
        .expect_err(what);
    let Error::Corrupt { path, .. } = &error else {
        panic!("{what}: not a corruption error: {error}");
    };
    assert_eq!(path, &segment_path(), "{what}");
    assert!(
        files(backend) == before,
        "{what}: a refused open changed files"
    );
    let read_only = Store::open_read_only_with_backend(Arc::new(backend.clone()), DIR)
        .map(|_| ())
        .expect_err(what);
    assert!(read_only.is_corruption(), "{what}: {read_only}");
    assert!(
        files(backend) == before,
        "{what}: a refused read-only open changed files"
    );
    error.to_string()
}

fn damaged_copy(pristine: &MemoryBackend, damage: impl FnOnce(&mut Vec<u8>)) -> MemoryBackend {
    let backend = pristine.crash(CrashMode::LoseUnsynced);
    let mut bytes = backend.file_contents(&segment_path()).unwrap();
    damage(&mut bytes);
    backend.overwrite_file(&segment_path(), &bytes).unwrap();
    backend
}

/// Keys present after a repair.
fn keys_after_repair(backend: &MemoryBackend) -> Vec<String> {
    Store::repair_with_backend(Arc::new(backend.clone()), DIR, options()).unwrap();
    let store = Store::open_with_backend(Arc::new(backend.clone()), DIR, options()).unwrap();
    let ks = store.keyspace_id("k").unwrap();
    store
        .snapshot()
        .iter(ks)
        .unwrap()
        .map(|entry| String::from_utf8(entry.unwrap().0.to_vec()).unwrap())
        .collect()
}

#[test]
fn a_flipped_byte_in_any_early_frame_fails_the_open_and_changes_nothing() {
    let (pristine, ends) = build(12);
    // Every byte of the keyspace frame and of the first three commits; nine commits follow.
    let mut checked = 0;
    for offset in 32..ends[2] {
        let backend = damaged_copy(&pristine, |bytes| bytes[offset] ^= 0x10);
        let message = open_refuses(&backend, &format!("flip at {offset}"));
        assert!(
            message.contains("intact later frame(s) follow") && message.contains("run repair"),
            "flip at {offset}: {message}"
        );
        checked += 1;
    }
    assert!(checked > 500, "checked {checked} offsets");

    // The message names the damaged frame's offset and what follows it.
    let backend = damaged_copy(&pristine, |bytes| bytes[ends[1] + 40] ^= 1);
    let message = open_refuses(&backend, "flip in the third commit");
    let last = ends.last().unwrap();
    assert!(
        message.contains(&format!("at offset {}:", ends[1]))
            && message.contains(&format!(
                "9 intact later frame(s) follow up to offset {last}"
            )),
        "{message}"
    );
    // Repair (salvage) keeps every commit but the damaged one.
    let keys = keys_after_repair(&backend);
    assert_eq!(keys.len(), 11, "{keys:?}");
    assert!(!keys.contains(&"key002".to_string()) && keys.contains(&"key011".to_string()));
}

#[test]
fn a_zeroed_block_inside_the_log_fails_the_open_and_changes_nothing() {
    let (pristine, ends) = build(60);
    assert!(*ends.last().unwrap() > 3 * 4096);
    for block_start in [4096, 8192] {
        let backend = damaged_copy(&pristine, |bytes| {
            bytes[block_start..block_start + 4096].fill(0);
        });
        let message = open_refuses(&backend, &format!("zeroed block at {block_start}"));
        assert!(
            message.contains("intact later frame(s) follow"),
            "{message}"
        );
    }
    // A zeroed block that starts exactly at a frame: the log seems to end with an all-zero
    // header, but frames follow.
    let frame_start = ends[9];
    let backend = damaged_copy(&pristine, |bytes| {
        bytes[frame_start..frame_start + 4096].fill(0);
    });
    let message = open_refuses(&backend, "zeroed block at a frame start");
    assert!(
        message.contains(&format!(
            "at offset {frame_start}: the log ends with an all-zero frame header here, but"
        )),
        "{message}"
    );
}

#[test]
fn a_shortened_segment_fails_the_open_and_changes_nothing() {
    let (pristine, ends) = build(12);
    let log_end = *ends.last().unwrap();
    // Cut inside the frames, exactly after a frame (no partial frame left to see), and in the
    // zeroes after the log: each is a file shorter than it was created.
    for cut in [ends[3] + 17, ends[5], log_end + 4096, 64 * 1024 - 8] {
        let backend = damaged_copy(&pristine, |bytes| bytes.truncate(cut));
        let message = open_refuses(&backend, &format!("cut at {cut}"));
        assert!(
            message.contains(&format!(
                "the file is {cut} bytes but was created with 65536: it was shortened"
            )),
            "{message}"
        );
    }
}

#[test]
fn a_torn_last_frame_still_opens_and_is_reported() {
    let (pristine, ends) = build(12);
    let last_start = ends[ends.len() - 2];
    let last_end = *ends.last().unwrap();
    let backend = damaged_copy(&pristine, |bytes| {
        bytes[last_start + 100..last_end].fill(0);
    });
    let store = Store::open_with_backend(Arc::new(backend.clone()), DIR, options()).unwrap();
    let torn = store.recovery_report().torn_tail.clone().unwrap();
    assert_eq!(torn.path, segment_path());
    assert_eq!(torn.offset as usize, last_start);
    assert_eq!(torn.bytes_dropped as usize, 100);
    assert_eq!(
        torn.to_string(),
        format!(
            "dropped a torn tail of 100 bytes at offset {last_start} in {}",
            segment_path().display()
        )
    );
    let ks = store.keyspace_id("k").unwrap();
    assert_eq!(store.snapshot().len(ks).unwrap(), 11);
    assert_eq!(store.verify().unwrap().torn_tail, Some(torn));
}
