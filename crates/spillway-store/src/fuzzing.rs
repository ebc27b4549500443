//! Entry points for fuzzing the decoders of untrusted bytes (not a stable API).
//!
//! Used by the cargo-fuzz targets in `fuzz/` and by a proptest in this crate's tests. Every
//! function here must return normally for every input: a panic is a bug.

use crate::backend::{Backend, MemoryBackend};
use crate::checkpoint;
use crate::directory::{Directory, LiveBytes};
use crate::format::{FrameSlot, SEGMENT_HEADER_LEN, SegmentHeader, decode_frame};

/// Decodes `bytes` as a segment: header, then frames until the first empty or invalid one,
/// applying each valid frame to a scratch directory. Returns the number of frames applied.
pub fn decode_segment(bytes: &[u8]) -> usize {
    let _ = SegmentHeader::from_bytes(bytes);
    let mut directory = Directory::default();
    let mut live = LiveBytes::default();
    let mut offset = SEGMENT_HEADER_LEN.min(bytes.len()) & !7;
    let mut frames = 0;
    while let Ok(FrameSlot::Frame(frame)) = decode_frame(bytes, offset) {
        if directory.check_ops(frame.ops()).is_ok() {
            directory
                .apply_ops(frame.ops(), 1, offset + 32, &mut live)
                .expect("a directory held in memory reads no checkpoint block");
        }
        frames += 1;
        offset += frame.len;
    }
    frames
}

/// Decodes `bytes` as a checkpoint file, as if segments 0..16 existed with 1 MiB each.
/// Returns the number of keys loaded, or `None` if the checkpoint was rejected.
///
/// Both ways a store reads a checkpoint run, and must agree: decoded into memory (salvage,
/// version 1), and opened from a (in-memory backend) file, mapped and read in place through
/// the directory's lookups and scans (a normal open of versions 2 and 3). The open's own
/// checks of version 3 leave most blocks to the reads: every read of what it opened must
/// give the decoded entry, or, if the decode found damage, an error; never a panic.
pub fn decode_checkpoint_file(bytes: &[u8]) -> Option<usize> {
    let segment_len = |id: u32| (id < 16).then_some(1 << 20);
    let in_memory = checkpoint::decode(bytes, &segment_len).ok();
    let mapped = open_mapped(bytes, &segment_len);
    match (&in_memory, &mapped) {
        (Some(a), Some(b)) => assert_same_directory(&a.directory, &b.directory),
        (None, None) => {}
        _ => panic!(
            "in-memory decode and mapped open disagree: {} vs {}",
            in_memory.is_some(),
            mapped.is_some()
        ),
    }
    in_memory.map(|loaded| loaded.directory.total_keys())
}

fn open_mapped(
    bytes: &[u8],
    segment_len: &dyn Fn(u32) -> Option<usize>,
) -> Option<checkpoint::LoadedCheckpoint> {
    let backend: std::sync::Arc<dyn Backend> = std::sync::Arc::new(MemoryBackend::new());
    let dir = std::path::Path::new("/fuzz");
    backend.create_dir_all(dir).ok()?;
    let path = dir.join("ckpt-00000001.spw");
    let path = path.as_path();
    let file = backend.create_file(path).ok()?;
    file.write_all_at(bytes, 0).ok()?;
    drop(file);
    let quick = checkpoint::open(&backend, path, segment_len, checkpoint::Checks::Open);
    let thorough = checkpoint::open(&backend, path, segment_len, checkpoint::Checks::Thorough);
    // The open's checks may accept what only the thorough ones refuse (a key order or a value
    // location that only a wrong writer produces, under valid checksums, or a damaged block
    // no structure lies in), never the reverse.
    assert!(thorough.is_err() || quick.is_ok());
    if let (Ok(quick), Ok(thorough)) = (&quick, &thorough) {
        assert_same_directory(&thorough.directory, &quick.directory);
    } else if let Ok(quick) = &quick {
        read_everything(&quick.directory);
    }
    thorough.ok()
}

/// Scans and looks up every key of `directory`, in both directions, stopping at the first
/// error: a directory on a damaged checkpoint must give errors, not panics.
fn read_everything(directory: &Directory) {
    for keyspace in directory.keyspaces.values() {
        let Ok(entries) = keyspace.iter() else {
            continue;
        };
        for entry in entries {
            let Ok((key, _)) = entry else {
                break;
            };
            let _found = keyspace.get(key);
        }
        if let Ok(entries) = keyspace.iter() {
            for entry in entries.rev() {
                if entry.is_err() {
                    break;
                }
            }
        }
    }
}

/// Every entry of a scan that must not fail.
fn all(
    entries: crate::Result<crate::directory::Entries<'_>>,
) -> impl DoubleEndedIterator<Item = (&[u8], crate::format::ValueLoc)> {
    entries
        .expect("the range starts")
        .map(|entry| entry.expect("every block is intact"))
}

/// Panics unless both directories hold the same keyspaces, keys and locations, by forward
/// and backward scans and by point lookups (every read of the mapped one succeeding: a
/// checkpoint that passed the thorough checks has no damaged block).
fn assert_same_directory(a: &Directory, b: &Directory) {
    assert_eq!(a.names, b.names);
    assert_eq!(a.next_keyspace_id, b.next_keyspace_id);
    for (id, left) in &a.keyspaces {
        let right = &b.keyspaces[id];
        assert_eq!(left.len(), right.len());
        let forward: Vec<_> = all(right.iter()).collect();
        assert!(all(left.iter()).eq(forward.iter().copied()));
        assert!(all(left.iter()).rev().eq(all(right.iter()).rev()));
        for (key, loc) in forward {
            assert_eq!(right.get(key).expect("every block is intact"), Some(loc));
        }
    }
}

/// Decodes `bytes` as a checkpoint body, skipping the CRC check so that the fuzzer reaches
/// the `rkyv` validation. Returns the number of keys loaded, or `None` if rejected.
pub fn decode_checkpoint_body(bytes: &[u8]) -> Option<usize> {
    let segment_len = |id: u32| (id < 16).then_some(1 << 20);
    checkpoint::decode_body(bytes, &segment_len)
        .ok()
        .map(|loaded| loaded.directory.total_keys())
}

/// Rewrites checkpoint file `bytes` (any version) in format version 2 (one CRC over the whole
/// body, as written before issue 31), for tests of the upgrade path; `None` if `bytes` is not a
/// valid checkpoint.
pub fn checkpoint_as_version_2(bytes: &[u8]) -> Option<Vec<u8>> {
    let any_segment = |_: u32| Some(u32::MAX as usize);
    let loaded = checkpoint::decode(bytes, &any_segment).ok()?;
    Some(checkpoint::encode_v2(
        &loaded.directory,
        loaded.next_seq,
        loaded.log_segment,
        loaded.log_offset,
    ))
}

/// Rewrites checkpoint file `bytes` (any version) in format version 1, as written before issue
/// 14, for tests of the upgrade path; `None` if `bytes` is not a valid checkpoint.
pub fn checkpoint_as_version_1(bytes: &[u8]) -> Option<Vec<u8>> {
    let any_segment = |_: u32| Some(usize::MAX);
    let loaded = checkpoint::decode(bytes, &any_segment).ok()?;
    Some(checkpoint::encode_v1(
        &loaded.directory,
        loaded.next_seq,
        loaded.log_segment,
        loaded.log_offset,
    ))
}

/// Rewrites manifest `bytes` in version 1, as written before the fallback (no fallback), for
/// tests of the upgrade path; `None` if `bytes` is not a valid manifest or retains segments.
pub fn manifest_as_version_1(bytes: &[u8]) -> Option<Vec<u8>> {
    crate::format::Manifest::from_bytes(bytes)
        .ok()?
        .to_bytes_version_1()
}

/// Rewrites manifest `bytes` in version 2, as written before the written limit, for tests of
/// the upgrade path; `None` if `bytes` is not a valid manifest.
pub fn manifest_as_version_2(bytes: &[u8]) -> Option<Vec<u8>> {
    Some(
        crate::format::Manifest::from_bytes(bytes)
            .ok()?
            .to_bytes_version_2(),
    )
}

/// The active segment's written limit a manifest records (0: unknown), for tests; `None` if
/// `bytes` is not a valid manifest.
pub fn manifest_written_limit(bytes: &[u8]) -> Option<u64> {
    Some(
        crate::format::Manifest::from_bytes(bytes)
            .ok()?
            .active_written_limit,
    )
}

/// Manifest `bytes` with another written limit (a damaged or wrong one), for tests; `None` if
/// `bytes` is not a valid manifest.
pub fn manifest_with_written_limit(bytes: &[u8], limit: u64) -> Option<Vec<u8>> {
    let mut manifest = crate::format::Manifest::from_bytes(bytes).ok()?;
    manifest.active_written_limit = limit;
    Some(manifest.to_bytes())
}

/// The files a manifest names besides the segments of the current state, for tests.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ManifestFiles {
    /// The current checkpoint's file name.
    pub checkpoint: Option<String>,
    /// The fallback: `Some(file name)` of the previous checkpoint, `Some("")` for the log from
    /// its start, `None` for no fallback.
    pub fallback: Option<String>,
    /// File names of the segments retained for the fallback.
    pub retained: Vec<String>,
}

/// What manifest `bytes` names (see [`ManifestFiles`]); `None` if it is not a valid manifest.
pub fn manifest_files(bytes: &[u8]) -> Option<ManifestFiles> {
    use crate::format::{Fallback, checkpoint_file_name, segment_file_name};
    let manifest = crate::format::Manifest::from_bytes(bytes).ok()?;
    Some(ManifestFiles {
        checkpoint: manifest.checkpoint.map(checkpoint_file_name),
        fallback: match manifest.fallback {
            Fallback::None => None,
            Fallback::Log => Some(String::new()),
            Fallback::Checkpoint(id) => Some(checkpoint_file_name(id)),
        },
        retained: manifest
            .segments
            .iter()
            .filter(|s| s.retained)
            .map(|s| segment_file_name(s.id))
            .collect(),
    })
}

/// Decodes `bytes` as a manifest. Returns whether it was accepted.
pub fn decode_manifest(bytes: &[u8]) -> bool {
    crate::format::Manifest::from_bytes(bytes).is_ok()
}

/// Opens, then repairs, then opens again an in-memory store whose active log segment holds
/// `bytes` (after a real store created it, so the manifest and the file names are intact):
/// recovery's torn-tail-or-damage decision and the salvage of `repair` on arbitrary bytes.
/// None of them may panic, and a store that `repair` accepted must open afterwards (a panic
/// here says it does not). Returns whether the first open succeeded.
pub fn open_and_repair_active_segment(bytes: &[u8]) -> bool {
    use std::path::Path;
    use std::sync::Arc;

    use crate::backend::{Backend, MemoryBackend};
    use crate::{Store, StoreOptions};

    let dir = Path::new("/fuzz");
    let options = || StoreOptions {
        segment_size: 4096,
        ..StoreOptions::default()
    };
    let memory = MemoryBackend::new();
    let backend: Arc<dyn Backend> = Arc::new(memory.clone());
    let store = Store::open_with_backend(backend.clone(), dir, options())
        .expect("creating an empty in-memory store");
    drop(store);
    let segment = memory
        .list_dir(dir)
        .expect("listing the in-memory store")
        .into_iter()
        .find(|name| name.starts_with("seg-"))
        .expect("a new store has an active segment");
    memory
        .overwrite_file(&dir.join(segment), bytes)
        .expect("the segment is not mapped once the store is closed");
    let opened = Store::open_with_backend(backend.clone(), dir, options()).is_ok();
    if Store::repair_with_backend(backend.clone(), dir, options()).is_ok()
        && let Err(error) = Store::open_with_backend(backend, dir, options())
    {
        panic!("repair succeeded but the store does not open: {error}");
    }
    opened
}
