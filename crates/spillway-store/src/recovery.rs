//! Opening a store directory: reading the manifest, loading the checkpoint (or, if it is
//! damaged, the fallback: the previous checkpoint or the log from its start, with the segments
//! retained for it), replaying the log, telling a torn tail from damage, removing orphans.
//! Repair of a damaged store is not here but in `salvage`.
//!
//! Also the two atomic file writes every protocol uses (manifest and checkpoint). This module
//! must never accept damage outside the active segment's tail, never take a bad frame for a
//! torn tail when an intact later frame follows it, never write anything a manifest refers to
//! before it is durable, and `load` must never change a file: an open that refuses, or that
//! falls back, leaves the directory as it found it (the damaged checkpoint included).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::backend::{Backend, BackendFile};
use crate::checkpoint::{self, LoadedCheckpoint};
use crate::directory::{Directory, LiveBytes};
use crate::error::{Error, Result};
use crate::format::{
    ACTIVE_SEGMENT_END, ALIGN, FRAME_HEADER_LEN, Fallback, FrameSlot, MANIFEST_FILE_NAME,
    MANIFEST_TEMP_FILE_NAME, Manifest, ManifestSegment, SEGMENT_HEADER_LEN, SegmentKind, align_up,
    checkpoint_file_name, decode_frame, segment_file_name, written_limit_for,
};
use crate::segment::{Access, Segment};

pub(crate) struct Loaded {
    pub(crate) manifest: Manifest,
    pub(crate) segments: BTreeMap<u32, Segment>,
    pub(crate) directory: Directory,
    /// Live bytes per segment of `directory`.
    pub(crate) live: LiveBytes,
    pub(crate) next_seq: u64,
    /// Where the log ends in the active segment.
    pub(crate) active_head: usize,
    /// Just past the last non-zero byte of the active segment at or after `active_head`
    /// (`active_head` if the rest is zero): a torn tail to zero.
    pub(crate) active_dirty_end: usize,
    /// What `directory` derives from: the current checkpoint, or the fallback if the current
    /// one was damaged (the log from its start if either is [`Fallback::Log`]). The next
    /// checkpoint names it as its fallback.
    pub(crate) basis: Fallback,
    pub(crate) report: RecoveryReport,
}

pub(crate) fn write_manifest(backend: &dyn Backend, dir: &Path, manifest: &Manifest) -> Result<()> {
    let temp = dir.join(MANIFEST_TEMP_FILE_NAME);
    let io = |operation| move |e| Error::io(operation, dir.join(MANIFEST_TEMP_FILE_NAME), e);
    let file = backend.create_file(&temp).map_err(io("create manifest"))?;
    file.write_all_at(&manifest.to_bytes(), 0)
        .map_err(io("write manifest"))?;
    file.sync_data().map_err(io("fsync manifest"))?;
    drop(file);
    backend
        .rename(&temp, &dir.join(MANIFEST_FILE_NAME))
        .map_err(io("rename manifest"))?;
    backend
        .sync_dir(dir)
        .map_err(|e| Error::io("fsync store directory", dir, e))
}

/// Creates checkpoint file `id`, has `write` fill it (`checkpoint::write`), and makes it
/// durable.
pub(crate) fn write_checkpoint_file(
    backend: &dyn Backend,
    dir: &Path,
    id: u32,
    write: impl FnOnce(&dyn BackendFile) -> std::result::Result<(), checkpoint::WriteError>,
) -> Result<()> {
    let path = dir.join(checkpoint_file_name(id));
    let io = |operation| move |e| Error::io(operation, dir.join(checkpoint_file_name(id)), e);
    let file = backend
        .create_file(&path)
        .map_err(io("create checkpoint"))?;
    write(file.as_ref()).map_err(|error| match error {
        checkpoint::WriteError::Io(e) => io("write checkpoint")(e),
        checkpoint::WriteError::Damaged(damage) => damage,
    })?;
    file.sync_data().map_err(io("fsync checkpoint"))?;
    backend
        .sync_dir(dir)
        .map_err(|e| Error::io("fsync store directory", dir, e))
}

/// Last non-zero byte at or after `from`, plus one (or `from` if all zero).
pub(crate) fn dirty_end(bytes: &[u8], from: usize) -> usize {
    let tail = &bytes[from.min(bytes.len())..];
    match last_non_zero(tail) {
        Some(position) => from + position + 1,
        None => from,
    }
}

/// Bytes per block of the zero scans: a block is OR-folded whole (which vectorises) before
/// its first non-zero byte is looked for, so long runs of zeroes are skipped at memory speed.
const ZERO_SCAN_BLOCK: usize = 256;

fn is_zero(block: &[u8]) -> bool {
    block.iter().fold(0u8, |acc, &b| acc | b) == 0
}

/// Offset of the first non-zero byte of `bytes`.
pub(crate) fn first_non_zero(bytes: &[u8]) -> Option<usize> {
    let mut blocks = bytes.chunks_exact(ZERO_SCAN_BLOCK);
    let mut offset = 0;
    for block in &mut blocks {
        if !is_zero(block) {
            return block.iter().position(|&b| b != 0).map(|at| offset + at);
        }
        offset += ZERO_SCAN_BLOCK;
    }
    blocks
        .remainder()
        .iter()
        .position(|&b| b != 0)
        .map(|at| offset + at)
}

/// Offset of the last non-zero byte of `bytes`.
pub(crate) fn last_non_zero(bytes: &[u8]) -> Option<usize> {
    let mut blocks = bytes.rchunks_exact(ZERO_SCAN_BLOCK);
    let mut end = bytes.len();
    for block in &mut blocks {
        if !is_zero(block) {
            return block
                .iter()
                .rposition(|&b| b != 0)
                .map(|at| end - ZERO_SCAN_BLOCK + at);
        }
        end -= ZERO_SCAN_BLOCK;
    }
    blocks.remainder().iter().rposition(|&b| b != 0)
}

/// Intact frames of this log at or after `from` (a scan at every [`ALIGN`] step, skipping
/// zeroes quickly): how many, and where the last one ends. A frame counts if its sequence
/// number is `next_seq` or later, that is a commit that would have followed the log's end.
fn intact_frames_after(bytes: &[u8], from: usize, next_seq: u64) -> (u64, usize) {
    let mut count = 0;
    let mut last_end = from;
    let mut probe = align_up(from);
    while probe + FRAME_HEADER_LEN <= bytes.len() {
        match first_non_zero(&bytes[probe..]) {
            Some(skip) => probe = (probe + skip) / ALIGN * ALIGN,
            None => break,
        }
        if let Ok(FrameSlot::Frame(frame)) = decode_frame(bytes, probe)
            && frame.seq >= next_seq
        {
            count += 1;
            probe += frame.len;
            last_end = probe;
        } else {
            probe += ALIGN;
        }
    }
    (count, last_end)
}

/// Decides whether the active segment's log, which stops at `offset` (an all-zero header or a
/// bad frame, `what`), has a torn tail there or is damaged: a crash can only tear the frames
/// written last, so an intact later frame after the stop means bytes inside the log were lost.
fn torn_tail_or_damage(
    segment: &SegmentBytes<'_>,
    bytes: &[u8],
    offset: usize,
    what: &str,
    next_seq: u64,
) -> Result<usize> {
    // Only up to the written limit: nothing was ever written past it.
    let bytes = &bytes[..bytes.len().min(segment.scan_end.max(offset))];
    let (n_frames, last_end) = intact_frames_after(bytes, offset, next_seq);
    if n_frames == 0 {
        return Ok(offset);
    }
    Err(Error::corrupt(
        segment.path,
        offset as u64,
        format!(
            "{what}, but {n_frames} intact later frame(s) follow up to offset {last_end}: this is damage inside the log, not a torn tail; nothing was changed (run repair to keep the later commits)"
        ),
    ))
}

/// The bytes of a segment as recovery reads them (through a temporary map, see
/// `Segment::with_probe`), with what the error messages and the directory need to know.
struct SegmentBytes<'a> {
    id: u32,
    kind: SegmentKind,
    path: &'a Path,
    bytes: &'a [u8],
    /// Where the search for intact frames after the end of the log stops: the active
    /// segment's written limit (the whole segment if unknown).
    scan_end: usize,
}

/// Scans one log segment from `start`, applying frames. Returns where the log ends.
///
/// Sealed segments (`sealed_end` is `Some`) must hold valid frames exactly up to their end.
/// In the active segment, the log ends at the first all-zero header or invalid frame: a torn
/// tail if no intact later frame follows, damage (an error) if one does.
fn replay_segment(
    segment: &SegmentBytes<'_>,
    start: usize,
    sealed_end: Option<usize>,
    directory: &mut Directory,
    live: &mut LiveBytes,
    next_seq: &mut u64,
    frames: &mut u64,
) -> Result<usize> {
    let bytes = segment.bytes;
    let limit = sealed_end.unwrap_or(bytes.len()).min(bytes.len());
    let bytes = &bytes[..limit];
    let corrupt =
        |offset: usize, reason: String| Error::corrupt(segment.path, offset as u64, reason);
    let mut offset = start;
    while offset < limit {
        let (at, reason) = match decode_frame(bytes, offset) {
            Ok(FrameSlot::Empty) => {
                if let Some(end) = sealed_end {
                    return Err(corrupt(
                        offset,
                        format!("log ends here but the manifest says the segment ends at {end}"),
                    ));
                }
                return torn_tail_or_damage(
                    segment,
                    bytes,
                    offset,
                    "the log ends with an all-zero frame header here",
                    *next_seq,
                );
            }
            Ok(FrameSlot::Frame(frame)) => {
                if segment.kind == SegmentKind::Log && frame.seq != *next_seq {
                    (
                        offset,
                        format!(
                            "frame has sequence number {} where {} was expected",
                            frame.seq, *next_seq
                        ),
                    )
                } else if let Err(keyspace) = directory.check_ops(frame.ops()) {
                    (
                        offset,
                        format!("frame refers to unknown keyspace {keyspace}"),
                    )
                } else {
                    directory.apply_ops(
                        frame.ops(),
                        segment.id,
                        offset + FRAME_HEADER_LEN,
                        live,
                    )?;
                    *next_seq += 1;
                    *frames += 1;
                    offset += frame.len;
                    continue;
                }
            }
            Err(error) => (error.offset as usize, error.reason),
        };
        if sealed_end.is_some() {
            return Err(corrupt(at, reason));
        }
        // A torn tail of the active segment, unless intact frames follow: the log ends at the
        // start of this frame.
        let what = if at == offset {
            format!("the frame here is damaged ({reason})")
        } else {
            format!("the frame here is damaged ({reason} at offset {at})")
        };
        return torn_tail_or_damage(segment, bytes, offset, &what, *next_seq);
    }
    if let Some(end) = sealed_end
        && offset != end
    {
        return Err(corrupt(
            offset,
            format!("last frame runs past the sealed end {end}"),
        ));
    }
    Ok(offset.min(limit))
}

/// Reads the store in `dir` into memory for a normal open: any damage outside the active
/// segment's torn tail is an error (repair is `salvage::repair`). Changes no file (with
/// [`Access::ReadWrite`], segment blocks are allocated, which changes no byte).
pub(crate) fn load(backend: &Arc<dyn Backend>, dir: &Path, access: Access) -> Result<Loaded> {
    let manifest = read_manifest(backend, dir)?;

    // Open every segment of the current state (checks headers). Segments retained only for
    // the fallback are opened only if the open falls back to it: damage in them must not stop
    // an open that does not need them.
    let mut segments = BTreeMap::new();
    for entry in manifest.segments.iter().filter(|s| !s.retained) {
        segments.insert(entry.id, open_listed_segment(backend, dir, entry, access)?);
    }

    // Checkpoint: the current one, or if it is damaged the fallback.
    let mut report = RecoveryReport::default();
    let (loaded_checkpoint, mut basis) =
        load_checkpoint(backend, dir, &manifest, access, &mut segments, &mut report)?;
    let (mut directory, mut live, mut next_seq, mut start) =
        starting_state(loaded_checkpoint, &mut report);
    let mut replayed = replay_log(
        &manifest,
        &mut segments,
        start,
        report.checkpoint_fallback.as_ref(),
        &mut directory,
        &mut live,
        &mut next_seq,
    );
    // The replay reads the current checkpoint's blocks that hold the keys it writes: one that
    // is damaged (which an open of a version 3 checkpoint does not check) makes the open fall
    // back exactly as damage found by the open's own checks does.
    if let (Err(error), None, Some(current)) =
        (&replayed, &report.checkpoint_fallback, manifest.checkpoint)
        && let Error::Corrupt { path, .. } = error
        && *path == dir.join(checkpoint_file_name(current))
    {
        let damaged = describe(error, path);
        let loaded = load_fallback(backend, dir, &manifest, access, &mut segments, &damaged)?;
        report.checkpoint_fallback = Some(fallback_report(dir, &manifest, &damaged));
        report.checkpoint_loaded = false;
        basis = manifest.fallback;
        (directory, live, next_seq, start) = starting_state(loaded, &mut report);
        replayed = replay_log(
            &manifest,
            &mut segments,
            start,
            report.checkpoint_fallback.as_ref(),
            &mut directory,
            &mut live,
            &mut next_seq,
        );
    }
    let replayed = replayed?;
    if let Some((log_segment, _)) = start
        && !manifest
            .segments
            .iter()
            .any(|s| s.id == log_segment && s.kind == SegmentKind::Log)
    {
        return Err(Error::corrupt(
            dir.join(checkpoint_file_name(basis.checkpoint().unwrap_or(0))),
            0,
            format!("checkpoint log segment {log_segment} is not a log segment of the manifest"),
        ));
    }
    let mut manifest = manifest;
    if report.checkpoint_fallback.is_some() {
        // The state now derives from the fallback, which may point into the retained segments
        // and whose replay read their frames: they are segments of the current state again
        // (mapped, compactable), and never deleted as retained ones. Only the memory copy
        // changes; a manifest written later lists them as ordinary segments, which is safe
        // whichever checkpoint the next open loads (a listed segment is never deleted).
        for entry in &mut manifest.segments {
            entry.retained = false;
        }
    }
    report.frames_replayed = replayed.frames;
    report.log_bytes_replayed = replayed.log_bytes;
    Ok(Loaded {
        manifest,
        segments,
        directory,
        live,
        next_seq,
        active_head: replayed.active_head,
        active_dirty_end: replayed.active_dirty_end,
        basis,
        report,
    })
}

/// Reads and decodes the manifest of `dir`, which must exist and list a segment.
fn read_manifest(backend: &Arc<dyn Backend>, dir: &Path) -> Result<Manifest> {
    let names = backend
        .list_dir(dir)
        .map_err(|e| Error::io("list store directory", dir, e))?;
    let manifest_path = dir.join(MANIFEST_FILE_NAME);
    let parsed = if names.iter().any(|n| n == MANIFEST_FILE_NAME) {
        let bytes = backend
            .read_file(&manifest_path)
            .map_err(|e| Error::io("read manifest", &manifest_path, e))?;
        Manifest::from_bytes(&bytes).map_err(|e| Error::corrupt(&manifest_path, e.offset, e.reason))
    } else {
        Err(Error::corrupt(&manifest_path, 0, "manifest is missing"))
    };
    let manifest = parsed?;
    if manifest.segments.is_empty() {
        return Err(Error::corrupt(
            &manifest_path,
            0,
            "no segment could be found",
        ));
    }
    Ok(manifest)
}

/// The current checkpoint, or the fallback when it is damaged (noted in `report`), and its basis.
fn load_checkpoint(
    backend: &Arc<dyn Backend>,
    dir: &Path,
    manifest: &Manifest,
    access: Access,
    segments: &mut BTreeMap<u32, Segment>,
    report: &mut RecoveryReport,
) -> Result<(Option<LoadedCheckpoint>, Fallback)> {
    let current = match manifest.checkpoint {
        None => Ok(None),
        Some(id) => {
            let segment_len = |id: u32| segments.get(&id).map(Segment::capacity);
            checkpoint::open(
                backend,
                &dir.join(checkpoint_file_name(id)),
                &segment_len,
                checkpoint::Checks::Open,
            )
            .map(Some)
        }
    };
    Ok(match current {
        Ok(loaded) => {
            let basis = manifest
                .checkpoint
                .map_or(Fallback::Log, Fallback::Checkpoint);
            (loaded, basis)
        }
        Err(error) => {
            let damaged_id = manifest.checkpoint.expect("only a named checkpoint fails");
            let damaged = describe(&error, &dir.join(checkpoint_file_name(damaged_id)));
            let loaded = load_fallback(backend, dir, manifest, access, segments, &damaged)?;
            report.checkpoint_fallback = Some(fallback_report(dir, manifest, &damaged));
            (loaded, manifest.fallback)
        }
    })
}

/// The report of an open that falls back from the `damaged` current checkpoint.
fn fallback_report(dir: &Path, manifest: &Manifest, damaged: &Described) -> CheckpointFallback {
    CheckpointFallback {
        damaged: damaged.path.clone(),
        offset: damaged.offset,
        reason: damaged.reason.clone(),
        fallback: manifest
            .fallback
            .checkpoint()
            .map(|id| dir.join(checkpoint_file_name(id))),
    }
}

/// The state a replay starts from: the loaded checkpoint's, or an empty store's.
fn starting_state(
    loaded: Option<LoadedCheckpoint>,
    report: &mut RecoveryReport,
) -> (Directory, LiveBytes, u64, Option<(u32, usize)>) {
    match loaded {
        Some(loaded) => {
            report.checkpoint_loaded = true;
            (
                loaded.directory,
                loaded.live,
                loaded.next_seq,
                Some((loaded.log_segment, loaded.log_offset)),
            )
        }
        None => (Directory::default(), LiveBytes::default(), 1, None),
    }
}

/// What [`replay_log`] read besides the state it rebuilt.
struct ReplayedLog {
    frames: u64,
    log_bytes: u64,
    /// Where the log ends in the active segment.
    active_head: usize,
    /// Just past the last non-zero byte of the active segment at or after `active_head`.
    active_dirty_end: usize,
}

/// Replays the opened log segments from `start` into `directory`, `live` and `next_seq`.
fn replay_log(
    manifest: &Manifest,
    segments: &mut BTreeMap<u32, Segment>,
    start: Option<(u32, usize)>,
    fallback: Option<&CheckpointFallback>,
    directory: &mut Directory,
    live: &mut LiveBytes,
    next_seq: &mut u64,
) -> Result<ReplayedLog> {
    let mut frames = 0;
    let mut log_bytes = 0;

    let active_id = manifest.active_segment().id;
    let mut active_head = SEGMENT_HEADER_LEN;
    let mut active_dirty_end = SEGMENT_HEADER_LEN;
    // Replay the log segments that were opened: from the current checkpoint, the segments of
    // the current state (retained log segments all lie before its position); from the
    // fallback, every log segment, retained ones included.
    let log_entries: Vec<ManifestSegment> = manifest
        .segments
        .iter()
        .filter(|s| s.kind == SegmentKind::Log && segments.contains_key(&s.id))
        .copied()
        .collect();
    for entry in log_entries {
        let from = match start {
            Some((log_segment, _)) if entry.id < log_segment => continue,
            Some((log_segment, log_offset)) if entry.id == log_segment => log_offset,
            _ => SEGMENT_HEADER_LEN,
        };
        let is_active = entry.id == active_id;
        let sealed_end = if is_active {
            None
        } else {
            Some(entry.end as usize)
        };
        let segment = segments
            .get_mut(&entry.id)
            .expect("only opened segments are replayed");
        let (id, kind, path) = (segment.id, segment.kind, segment.path.clone());
        // In the active segment, nothing was ever written at or after the manifest's written
        // limit: the search for intact frames and non-zero bytes after the end of the log
        // stops there (at most `WRITTEN_LIMIT_STEP` past the log, where it used to read the
        // whole unused segment). A manifest before version 3 does not know it: all of it.
        // Replay itself is not bounded by it: a frame is never dropped for lying past it.
        let written = match manifest.active_written_limit {
            0 => usize::MAX,
            limit if is_active => usize::try_from(limit).unwrap_or(usize::MAX),
            _ => usize::MAX,
        };
        // Through a temporary map: the frames replayed and, in the active segment, the unused
        // tail scanned below stay out of this process's resident memory once the open is done.
        let replayed = segment.with_probe(|bytes| {
            let view = SegmentBytes {
                id,
                kind,
                path: &path,
                bytes,
                scan_end: written,
            };
            let end = replay_segment(
                &view,
                from,
                sealed_end,
                directory,
                live,
                next_seq,
                &mut frames,
            )?;
            let dirty = if is_active {
                // The frames replayed are read whole even if they went past the limit (which
                // the store never lets them do): the limit bounds only the search after them.
                dirty_end(&bytes[..bytes.len().min(written.max(end))], end)
            } else {
                end
            };
            Ok::<_, Error>((end, dirty))
        });
        let (end, dirty) = match replayed {
            Ok(Ok(replayed)) => replayed,
            Ok(Err(error)) | Err(error) => {
                return Err(match fallback {
                    Some(fallback) => after_fallback(error, fallback),
                    None => error,
                });
            }
        };
        log_bytes += end.saturating_sub(from) as u64;
        if is_active {
            active_head = end;
            active_dirty_end = dirty;
        }
    }
    Ok(ReplayedLog {
        frames,
        log_bytes,
        active_head,
        active_dirty_end,
    })
}

/// Opens a segment the manifest lists and checks that its sealed end fits it.
fn open_listed_segment(
    backend: &Arc<dyn Backend>,
    dir: &Path,
    entry: &ManifestSegment,
    access: Access,
) -> Result<Segment> {
    let segment = Segment::open(backend, dir, entry.id, entry.kind, access)?;
    if entry.end != ACTIVE_SEGMENT_END {
        let fits = usize::try_from(entry.end).is_ok_and(|end| {
            end >= SEGMENT_HEADER_LEN && end <= segment.capacity() && end % ALIGN == 0
        });
        if !fits {
            return Err(Error::corrupt(
                &segment.path,
                0,
                format!("manifest end {} does not fit the segment", entry.end),
            ));
        }
    }
    Ok(segment)
}

/// Where and why a checkpoint could not be used.
struct Described {
    path: PathBuf,
    offset: u64,
    reason: String,
}

/// An error that stopped the use of the checkpoint at `path`, as file, offset and reason.
fn describe(error: &Error, path: &Path) -> Described {
    match error {
        Error::Corrupt {
            path,
            offset,
            reason,
        } => Described {
            path: path.clone(),
            offset: *offset,
            reason: reason.clone(),
        },
        other => Described {
            path: path.to_path_buf(),
            offset: 0,
            reason: other.to_string(),
        },
    }
}

/// The current checkpoint is damaged (`damaged`): opens the segments retained for the
/// fallback and loads the fallback checkpoint (`None` for the log from its start). Refuses,
/// naming both files, if there is no fallback or it fails too. Changes no file.
fn load_fallback(
    backend: &Arc<dyn Backend>,
    dir: &Path,
    manifest: &Manifest,
    access: Access,
    segments: &mut BTreeMap<u32, Segment>,
    damaged: &Described,
) -> Result<Option<LoadedCheckpoint>> {
    let refuse = |what: String| {
        Error::corrupt(
            &damaged.path,
            damaged.offset,
            format!(
                "{}; {what}: nothing was changed (run repair)",
                damaged.reason
            ),
        )
    };
    let fallback_path = match manifest.fallback {
        Fallback::None => {
            return Err(refuse(
                "the store keeps no fallback for this checkpoint (a store made by repair, or by a build before manifest version 2, gets one at its next checkpoint)".into(),
            ));
        }
        Fallback::Log => None,
        Fallback::Checkpoint(id) => Some(dir.join(checkpoint_file_name(id))),
    };
    let fallback_name = match &fallback_path {
        Some(path) => format!("the fallback checkpoint {}", path.display()),
        None => "the fallback (the log from its start)".to_string(),
    };
    for entry in manifest.segments.iter().filter(|s| s.retained) {
        let segment = open_listed_segment(backend, dir, entry, access).map_err(|error| {
            let failed = describe(&error, &dir.join(segment_file_name(entry.id)));
            refuse(format!(
                "{fallback_name} cannot be used either: the segment {} it needs is damaged at offset {} ({})",
                failed.path.display(),
                failed.offset,
                failed.reason
            ))
        })?;
        segments.insert(entry.id, segment);
    }
    let Some(path) = fallback_path else {
        return Ok(None);
    };
    let segment_len = |id: u32| segments.get(&id).map(Segment::capacity);
    checkpoint::open(backend, &path, &segment_len, checkpoint::Checks::Open)
        .map(Some)
        .map_err(|error| {
            let failed = describe(&error, &path);
            refuse(format!(
                "the fallback checkpoint {} is damaged too, at offset {} ({})",
                failed.path.display(),
                failed.offset,
                failed.reason
            ))
        })
}

/// An error of the replay after the open fell back, with what it fell back from.
fn after_fallback(error: Error, fallback: &CheckpointFallback) -> Error {
    let context = format!(
        "the open replayed the log from {} because the current checkpoint {} is damaged at offset {} ({}); nothing was changed (run repair)",
        fallback.fallback.as_ref().map_or_else(
            || "its start".to_string(),
            |path| format!("the fallback checkpoint {}", path.display())
        ),
        fallback.damaged.display(),
        fallback.offset,
        fallback.reason
    );
    match error {
        Error::Corrupt {
            path,
            offset,
            reason,
        } => Error::Corrupt {
            path,
            offset,
            reason: format!("{reason}; {context}"),
        },
        other => {
            let path = fallback.damaged.clone();
            Error::corrupt(path, fallback.offset, format!("{other}; {context}"))
        }
    }
}

pub(crate) fn initialise(
    backend: &Arc<dyn Backend>,
    dir: &Path,
    segment_size: usize,
) -> Result<()> {
    let segment = Segment::create(backend, dir, 1, SegmentKind::Log, segment_size)?;
    drop(segment);
    backend
        .sync_dir(dir)
        .map_err(|e| Error::io("fsync store directory", dir, e))?;
    write_manifest(
        backend.as_ref(),
        dir,
        &Manifest {
            generation: 1,
            next_segment_id: 2,
            checkpoint: None,
            fallback: Fallback::None,
            active_written_limit: written_limit_for(SEGMENT_HEADER_LEN, segment_size),
            segments: vec![ManifestSegment::new(
                1,
                SegmentKind::Log,
                ACTIVE_SEGMENT_END,
            )],
        },
    )
}

/// Deletes segment and checkpoint files the manifest does not name (the fallback checkpoint
/// and retained segments are named), and a leftover temporary manifest. Other files are left
/// alone.
pub(crate) fn remove_orphans(
    backend: &Arc<dyn Backend>,
    dir: &Path,
    manifest: &Manifest,
) -> Result<Vec<String>> {
    let mut referenced: BTreeSet<String> = manifest
        .segments
        .iter()
        .map(|s| segment_file_name(s.id))
        .collect();
    for id in [manifest.checkpoint, manifest.fallback.checkpoint()]
        .into_iter()
        .flatten()
    {
        referenced.insert(checkpoint_file_name(id));
    }
    let names = backend
        .list_dir(dir)
        .map_err(|e| Error::io("list store directory", dir, e))?;
    let mut removed = Vec::new();
    for name in names {
        let ours = (name.starts_with("seg-") || name.starts_with("ckpt-"))
            && Path::new(&name).extension().is_some_and(|ext| ext == "spw");
        if (ours && !referenced.contains(&name)) || name == MANIFEST_TEMP_FILE_NAME {
            let path = dir.join(&name);
            backend
                .remove_file(&path)
                .map_err(|e| Error::io("remove orphan file", &path, e))?;
            removed.push(name);
        }
    }
    if !removed.is_empty() {
        backend
            .sync_dir(dir)
            .map_err(|e| Error::io("fsync store directory", dir, e))?;
    }
    Ok(removed)
}

/// What opening the store found and fixed.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RecoveryReport {
    /// True if a checkpoint was loaded (only the log after it was replayed).
    pub checkpoint_loaded: bool,
    /// Log frames replayed.
    pub frames_replayed: u64,
    /// Bytes of log replayed (the frames after the checkpoint, or every frame without one).
    pub log_bytes_replayed: u64,
    /// A torn tail of the active segment (a partly written or checksum-failing last frame,
    /// with no intact frame after it) that was dropped: zeroed, or, on a read-only open,
    /// ignored in memory. Damage followed by intact frames is not a torn tail: it fails the open.
    pub torn_tail: Option<TornTail>,
    /// The current checkpoint was damaged, and the open used the fallback instead (the
    /// previous checkpoint and the log after it, or the whole log): the same contents, a
    /// longer replay. The damaged file is left in place until the next checkpoint replaces
    /// it, and `verify` reports it meanwhile.
    pub checkpoint_fallback: Option<CheckpointFallback>,
    /// Files no manifest refers to (left by a crash mid-rotation or mid-compaction), deleted.
    pub orphans_removed: Vec<String>,
}

/// A damaged current checkpoint that the open replaced with the fallback.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CheckpointFallback {
    /// The damaged checkpoint file.
    pub damaged: PathBuf,
    /// Offset of the damage inside it (0 if the file could not be read at all).
    pub offset: u64,
    /// What was wrong with it.
    pub reason: String,
    /// The previous checkpoint that was loaded instead, or `None` if the log was replayed
    /// from its start.
    pub fallback: Option<PathBuf>,
}

impl std::fmt::Display for CheckpointFallback {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "checkpoint {} is damaged at offset {} ({}); opened from ",
            self.damaged.display(),
            self.offset,
            self.reason
        )?;
        match &self.fallback {
            Some(path) => write!(
                f,
                "the previous checkpoint {} and the log after it",
                path.display()
            ),
            None => f.write_str("the whole log"),
        }?;
        f.write_str("; a writable open replaces it with a new checkpoint at once")
    }
}

/// The dropped tail of the active segment.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TornTail {
    /// The segment file.
    pub path: PathBuf,
    /// Offset of the first dropped byte: the log ends here now.
    pub offset: u64,
    /// Bytes from `offset` to the last non-zero byte, zeroed (ignored on a read-only open).
    pub bytes_dropped: u64,
}

impl std::fmt::Display for TornTail {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "dropped a torn tail of {} bytes at offset {} in {}",
            self.bytes_dropped,
            self.offset,
            self.path.display()
        )
    }
}

#[cfg(test)]
mod tests {
    use super::{first_non_zero, last_non_zero};

    #[test]
    fn zero_scans_agree_with_the_plain_search() {
        for len in [0, 1, 255, 256, 257, 700, 1024] {
            let mut positions = vec![0, 1, 254, 255, 256, 257, 511, 512, 699, 1023];
            positions.retain(|&p| p < len);
            for &at in &positions {
                for &also in &positions {
                    let mut bytes = vec![0u8; len];
                    bytes[at] = 0x80;
                    bytes[also] = 1;
                    assert_eq!(
                        first_non_zero(&bytes),
                        bytes.iter().position(|&b| b != 0),
                        "{len} {at} {also}"
                    );
                    assert_eq!(
                        last_non_zero(&bytes),
                        bytes.iter().rposition(|&b| b != 0),
                        "{len} {at} {also}"
                    );
                }
            }
            assert_eq!(first_non_zero(&vec![0u8; len]), None);
            assert_eq!(last_non_zero(&vec![0u8; len]), None);
        }
    }
}
