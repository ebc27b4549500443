//! Torn tails: the active segment cut at every byte offset inside its last frames (the rest
//! zeroed or overwritten with garbage). The store must open with exactly the frames that were
//! complete, report the dropped bytes, and keep working. A file cut short is not a torn tail (a
//! crash cannot shorten a preallocated segment): the open refuses and changes nothing.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use spillway_store::backend::MemoryBackend;
use spillway_store::{Store, StoreOptions, WriteBatch};

const DIR: &str = "/torn";

fn options() -> StoreOptions {
    StoreOptions {
        segment_size: 64 * 1024,
        ..StoreOptions::default()
    }
}

fn segment_path() -> PathBuf {
    Path::new(DIR).join("seg-00000001.spw")
}

/// A store with `frames` commits of one key each (after the keyspace frame); returns the
/// backend and the end offset of every frame in the segment.
fn build(frames: u32) -> (MemoryBackend, Vec<usize>) {
    let backend = MemoryBackend::new();
    let store = Store::open_with_backend(Arc::new(backend.clone()), DIR, options()).unwrap();
    let ks = store.keyspace("k").unwrap();
    let mut ends = Vec::new();
    for i in 0..frames {
        let mut batch = WriteBatch::new();
        // Two ops per frame: a frame is all-or-nothing, so both keys appear or neither.
        batch
            .put(
                ks,
                format!("a{i:03}").as_bytes(),
                &vec![i as u8; 20 + i as usize * 7],
            )
            .put(ks, format!("b{i:03}").as_bytes(), b"pair");
        store.commit(batch).unwrap();
        ends.push(store.stats().segments[0].written_bytes as usize + 32);
    }
    drop(store);
    (backend, ends)
}

fn open_and_count(backend: &MemoryBackend) -> (Store, usize) {
    let store = Store::open_with_backend(Arc::new(backend.clone()), DIR, options()).unwrap();
    let ks = store.keyspace_id("k").expect("keyspace frame survives");
    let snapshot = store.snapshot();
    let n_keys = snapshot.len(ks).unwrap();
    assert_eq!(n_keys % 2, 0, "a frame was applied halfway");
    for entry in snapshot.iter(ks).unwrap() {
        entry.unwrap();
    }
    drop(snapshot);
    (store, n_keys / 2)
}

#[derive(Clone, Copy, Debug)]
enum Cut {
    Zeroed,
    Truncated,
    Garbage,
}

#[test]
fn torn_tail_at_every_byte_offset_keeps_exactly_the_complete_frames() {
    let frames = 6;
    let (pristine, ends) = build(frames);
    let original = pristine.file_contents(&segment_path()).unwrap();
    let first_checked = ends[ends.len() - 4];
    let last = *ends.last().unwrap();
    let mut checked = 0;
    for cut in first_checked..=last {
        for mode in [Cut::Zeroed, Cut::Truncated, Cut::Garbage] {
            let backend = pristine.crash(spillway_store::backend::CrashMode::LoseUnsynced);
            let mut damaged = original.clone();
            match mode {
                Cut::Zeroed => damaged[cut..].fill(0),
                Cut::Truncated => damaged.truncate(cut),
                Cut::Garbage => {
                    for (i, byte) in damaged[cut..last + 64].iter_mut().enumerate() {
                        *byte = (i as u8).wrapping_mul(31).wrapping_add(7) | 1;
                    }
                }
            }
            backend.overwrite_file(&segment_path(), &damaged).unwrap();
            if matches!(mode, Cut::Truncated) {
                let error = Store::open_with_backend(Arc::new(backend.clone()), DIR, options())
                    .expect_err("a shortened segment must not open");
                assert!(
                    error.is_corruption() && error.to_string().contains("shortened"),
                    "cut at {cut}: {error}"
                );
                assert_eq!(backend.file_contents(&segment_path()).unwrap(), damaged);
                continue;
            }
            // A frame survives if all its bytes survive; zeroing its zero padding changes nothing.
            let expected = ends
                .iter()
                .filter(|&&end| {
                    end <= cut
                        || (matches!(mode, Cut::Zeroed)
                            && original[cut..end].iter().all(|&b| b == 0))
                })
                .count();
            let log_end = ends[expected - 1];
            let (store, complete) = open_and_count(&backend);
            assert_eq!(complete, expected, "cut at {cut} ({mode:?})");
            let torn = store.recovery_report().torn_tail.clone();
            let clean_cut = damaged[log_end.min(damaged.len())..]
                .iter()
                .all(|&b| b == 0);
            assert_eq!(
                torn.is_none(),
                clean_cut,
                "cut at {cut} ({mode:?}): {torn:?}"
            );
            if let Some(torn) = &torn {
                assert_eq!(torn.offset as usize, log_end);
                assert!(torn.bytes_dropped > 0);
            }
            // `verify` finds no damage left, but says what the open dropped.
            let verified = store.verify().unwrap();
            assert!(verified.is_clean());
            assert_eq!(verified.torn_tail, torn);
            // The store keeps working and a stale frame can never come back.
            let ks = store.keyspace_id("k").unwrap();
            let mut batch = WriteBatch::new();
            batch
                .put(ks, b"z-after", b"new")
                .put(ks, b"z-after2", b"new");
            store.commit(batch).unwrap();
            drop(store);
            let (store, complete_after) = open_and_count(&backend);
            assert_eq!(
                complete_after,
                expected + 1,
                "cut at {cut} ({mode:?}), after reopen"
            );
            assert!(store.recovery_report().torn_tail.is_none());
            assert!(store.verify().unwrap().is_clean());
            checked += 1;
        }
    }
    assert!(checked > 300, "checked {checked} cuts");
}
