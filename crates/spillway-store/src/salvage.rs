//! Salvage of a damaged store for [`crate::Store::repair`]: finds every segment by its header,
//! starts from whatever the checkpoint still describes, applies every intact frame, and
//! rewrites what survives as a fresh store.
//!
//! The rules (also in `docs/file-format.md`, "Repair"):
//! - A segment file is identified by its header, not its name; a file whose header is damaged
//!   keeps the id of its name. The manifest, when intact, says which segments are live.
//! - The checkpoint is decoded without requiring its value locations to exist: a location in
//!   a missing or truncated segment fails its read and only that value is dropped. If the
//!   manifest's checkpoint is damaged, its fallback checkpoint is used (the manifest lists the
//!   segments retained for it).
//! - Every frame of every segment is checked; damaged regions are skipped by scanning ahead to
//!   the next intact frame, and reported with their file and offset.
//! - A store in which nothing is damaged is left exactly as it is.
//!
//! This module must never panic on any bytes or any set of files, never change a file it
//! reads, and never switch to the new store before it is durable: the old files are moved to
//! `repair-backup-N/` only after the new manifest names the new ones.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::backend::Backend;
use crate::checkpoint::{self, LoadedCheckpoint};
use crate::compaction::CompactionOutput;
use crate::directory::{Directory, KeyspaceState, LiveBytes};
use crate::error::{Error, Result};
use crate::format::{
    ACTIVE_SEGMENT_END, ALIGN, FRAME_HEADER_LEN, FRAME_MAGIC, Fallback, Frame, FrameSlot,
    MANIFEST_FILE_NAME, Manifest, ManifestSegment, OpKind, SEGMENT_HEADER_LEN, SegmentHeader,
    SegmentKind, checkpoint_file_name, decode_frame, encode_op, read_damaged_frame,
    segment_file_name, written_limit_for,
};
use crate::recovery::{dirty_end, write_checkpoint_file, write_manifest};
use crate::segment::{Access, Segment};
use crate::snapshot::{SegmentTable, read_value};

/// Prefix of the name given to a keyspace whose create op was lost.
const SALVAGED_KEYSPACE_PREFIX: &str = "salvaged-";

/// Salvages the store in `dir` into log segments of `segment_size` bytes: see
/// [`crate::Store::repair`].
pub(crate) fn repair(
    backend: &Arc<dyn Backend>,
    dir: &Path,
    segment_size: usize,
) -> Result<RepairReport> {
    let dir = dir.to_path_buf();
    let _lock = backend
        .lock_dir(&dir)
        .map_err(|e| Error::lock_failed(&dir, e))?;
    let names = backend
        .list_dir(&dir)
        .map_err(|e| Error::io("list store directory", &dir, e))?;
    let mut salvage = Salvage {
        dir: dir.clone(),
        damage: Vec::new(),
        active_segment_missing: false,
        log_bytes_missing: false,
    };

    let manifest = salvage.read_manifest(backend, &names)?;
    let segments = salvage.open_segments(backend, &names, manifest.as_ref());
    if segments.is_empty() && !names.iter().any(|name| is_store_file(name)) {
        return Err(Error::corrupt(
            dir.join(MANIFEST_FILE_NAME),
            0,
            "nothing to salvage: the directory holds no segment or checkpoint file",
        ));
    }
    let checkpoint = salvage.read_checkpoint(backend, &names, manifest.as_ref(), &segments);
    let mut state = salvage.replay(&segments, manifest.as_ref(), checkpoint);

    // Every value the directory points to must read back with its checksum.
    let table: SegmentTable = segments
        .into_iter()
        .map(|(id, segment)| (id, Arc::new(segment)))
        .collect();
    let (values_dropped, dropped_keys) =
        salvage.drop_unreadable_values(&mut state.directory, &table);

    let mut report = RepairReport {
        checkpoint_used: state.checkpoint_used,
        frames_salvaged: state.frames_applied,
        keys_recovered: state.directory.total_keys() as u64,
        values_dropped,
        dropped_keys,
        active_segment_missing: salvage.active_segment_missing,
        commits_dropped: state.lost.commits_dropped,
        lost_writes: state.lost.effects(&state.directory),
        lost_writes_complete: state.lost.complete
            && !salvage.log_bytes_missing
            && !salvage.active_segment_missing,
        ..RepairReport::default()
    };
    if salvage.damage.is_empty() && manifest.is_some() {
        // Nothing is damaged: leave every file as it is.
        return Ok(report);
    }
    report.damage = salvage.damage;

    // Rewrite every intact value into fresh compacted segments, after every id in use.
    let mut next_id = first_unused_id(&names, &table, manifest.as_ref());
    let mut allocate = || {
        let id = next_id;
        next_id = next_id.saturating_add(1);
        id
    };
    let directory = state.directory;
    let (written, rebuilt) = rewrite_values(
        backend,
        &dir,
        segment_size,
        &table,
        &directory,
        &mut allocate,
    )?;

    let log_id = allocate();
    drop(Segment::create(
        backend,
        &dir,
        log_id,
        SegmentKind::Log,
        segment_size,
    )?);
    let checkpoint_id = allocate();
    write_checkpoint_file(backend.as_ref(), &dir, checkpoint_id, |file| {
        checkpoint::write(file, &rebuilt, state.next_seq, log_id, SEGMENT_HEADER_LEN)
    })?;

    // Keep a copy of the old manifest, switch to the new one atomically, then move the old
    // files aside. A crash before the switch leaves the old store as it was; a crash after
    // it leaves old files behind as orphans that the next open deletes.
    let backup = back_up_manifest(backend, &dir, &names, &mut report)?;
    let mut new_segments: Vec<ManifestSegment> = written
        .iter()
        .map(|s| ManifestSegment::new(s.id, SegmentKind::Compacted, s.capacity() as u64))
        .collect();
    new_segments.push(ManifestSegment::new(
        log_id,
        SegmentKind::Log,
        ACTIVE_SEGMENT_END,
    ));
    // No fallback: the old files are moved aside, and the state holds only what survived.
    // The next checkpoint makes this one its fallback.
    let new_manifest = Manifest {
        generation: manifest.as_ref().map_or(0, |m| m.generation) + 1,
        next_segment_id: allocate(),
        checkpoint: Some(checkpoint_id),
        fallback: Fallback::None,
        active_written_limit: written_limit_for(SEGMENT_HEADER_LEN, segment_size),
        segments: new_segments,
    };
    write_manifest(backend.as_ref(), &dir, &new_manifest)?;
    drop(table);
    drop(written);
    move_old_files_aside(backend, &dir, &names, &backup, &mut report)?;
    report.backup_dir = Some(backup);
    Ok(report)
}

/// The first file id after every id in the file names, the segments and the manifest.
fn first_unused_id(names: &[String], table: &SegmentTable, manifest: Option<&Manifest>) -> u32 {
    let highest_id = names
        .iter()
        .filter_map(|name| file_id(name, "seg-").or_else(|| file_id(name, "ckpt-")))
        .chain(table.keys().copied())
        .chain(manifest.map(|m| m.next_segment_id))
        .max()
        .unwrap_or(0);
    highest_id.saturating_add(1)
}

/// Rewrites every value of `directory` into fresh compacted segments, and the directory of them.
fn rewrite_values(
    backend: &Arc<dyn Backend>,
    dir: &Path,
    segment_size: usize,
    table: &SegmentTable,
    directory: &Directory,
    allocate: &mut dyn FnMut() -> u32,
) -> Result<(Vec<Segment>, Directory)> {
    let mut output = CompactionOutput::new(backend, dir, segment_size, allocate);
    for (&keyspace_id, keyspace) in &directory.keyspaces {
        for (key, loc) in keyspace.iter_in_memory() {
            let value = read_value(table, &loc)?;
            output.add(keyspace_id, &keyspace.name, key, value, loc)?;
        }
    }
    let (written, moves) = output.finish()?;
    let mut rebuilt = Directory {
        next_keyspace_id: directory.next_keyspace_id,
        ..Directory::default()
    };
    for (&id, keyspace) in &directory.keyspaces {
        rebuilt.names.insert(keyspace.name.clone(), id);
        rebuilt
            .keyspaces
            .insert(id, KeyspaceState::new(keyspace.name.clone()));
    }
    for moved in moves {
        if let Some(keyspace) = rebuilt.keyspaces.get_mut(&moved.keyspace) {
            keyspace.put(&moved.key, moved.new)?;
        }
    }
    Ok((written, rebuilt))
}

/// Creates the next free `repair-backup-N/` and copies the old manifest into it, synced.
fn back_up_manifest(
    backend: &Arc<dyn Backend>,
    dir: &Path,
    names: &[String],
    report: &mut RepairReport,
) -> Result<PathBuf> {
    let mut backup_index = 1;
    while names.contains(&format!("repair-backup-{backup_index}")) {
        backup_index += 1;
    }
    let backup = dir.join(format!("repair-backup-{backup_index}"));
    backend
        .create_dir_all(&backup)
        .map_err(|e| Error::io("create backup directory", &backup, e))?;
    if let Ok(old_manifest) = backend.read_file(&dir.join(MANIFEST_FILE_NAME)) {
        let copy = backup.join(MANIFEST_FILE_NAME);
        let file = backend
            .create_file(&copy)
            .map_err(|e| Error::io("create manifest backup", &copy, e))?;
        file.write_all_at(&old_manifest, 0)
            .and_then(|()| file.sync_data())
            .map_err(|e| Error::io("write manifest backup", &copy, e))?;
        report.files_moved.push(MANIFEST_FILE_NAME.to_string());
    }
    Ok(backup)
}

/// Moves the old segment and checkpoint files into `backup`, then syncs both directories.
fn move_old_files_aside(
    backend: &Arc<dyn Backend>,
    dir: &Path,
    names: &[String],
    backup: &Path,
    report: &mut RepairReport,
) -> Result<()> {
    for name in names.iter().filter(|name| is_store_file(name)) {
        backend
            .rename(&dir.join(name), &backup.join(name))
            .map_err(|e| Error::io("move file to backup", dir.join(name), e))?;
        report.files_moved.push(name.clone());
    }
    backend
        .sync_dir(backup)
        .and_then(|()| backend.sync_dir(dir))
        .map_err(|e| Error::io("fsync backup directory", backup, e))?;
    Ok(())
}

/// `seg-*.spw` and `ckpt-*.spw`: the files a repair replaces and moves aside.
fn is_store_file(name: &str) -> bool {
    (name.starts_with("seg-") || name.starts_with("ckpt-"))
        && Path::new(name).extension().is_some_and(|ext| ext == "spw")
}

/// The id in a file name `<prefix>XXXXXXXX.spw`.
fn file_id(name: &str, prefix: &str) -> Option<u32> {
    let hex = name.strip_prefix(prefix)?.strip_suffix(".spw")?;
    if hex.len() != 8 {
        return None;
    }
    u32::from_str_radix(hex, 16).ok()
}

/// The reason of an error without its path and offset (the damage entry carries those).
fn error_reason(error: &Error) -> String {
    match error {
        Error::Corrupt { reason, .. } => reason.clone(),
        other => other.to_string(),
    }
}

struct Salvage {
    dir: PathBuf,
    damage: Vec<Damage>,
    active_segment_missing: bool,
    /// Log bytes are gone (a log segment missing or shortened): commits may have been
    /// dropped that nothing names.
    log_bytes_missing: bool,
}

/// The directory rebuilt from the checkpoint and the frames.
struct Replayed {
    directory: Directory,
    next_seq: u64,
    frames_applied: u64,
    checkpoint_used: bool,
    /// The writes of the commits the replay had to drop.
    lost: LostWrites,
}

/// The kind of a lost op (put or delete) and a put's value when its bytes are intact.
type LostOp = (OpKind, Option<Vec<u8>>);

/// The writes of dropped commits, read from the damaged bytes of the replayed part of the
/// log, until a later intact frame overwrites them.
struct LostWrites {
    /// `(keyspace id, key)` to the kind (put or delete) of the last lost op on it, and the
    /// value of a put when its bytes are intact.
    pending: BTreeMap<(u32, Vec<u8>), LostOp>,
    /// Names given by create-keyspace ops of dropped commits.
    names: BTreeMap<u32, String>,
    /// Commits known to be dropped, up to the last intact log frame.
    commits_dropped: u64,
    /// Damaged log frames with a readable header since the last intact log frame.
    trailing: u64,
    /// Damaged log frames read whole since the last intact log frame.
    whole_since_intact: u64,
    /// False once some dropped commit could not be read op by op.
    complete: bool,
}

impl LostWrites {
    fn new() -> LostWrites {
        LostWrites {
            pending: BTreeMap::new(),
            names: BTreeMap::new(),
            commits_dropped: 0,
            trailing: 0,
            whole_since_intact: 0,
            complete: true,
        }
    }

    /// Reads the frames of a damaged region (`bytes`, up to the next intact frame or the end
    /// of the log) of a segment whose frames are replayed.
    fn read_region(&mut self, bytes: &[u8], is_log: bool) {
        let mut at = 0;
        while at < bytes.len() && !bytes[at..].iter().all(|&byte| byte == 0) {
            let frame = read_damaged_frame(&bytes[at..]);
            if is_log && frame.seq.is_some() {
                self.trailing += 1;
            }
            if frame.whole {
                self.whole_since_intact += 1;
            } else {
                self.complete = false;
            }
            for op in frame.ops {
                match op.kind {
                    OpKind::Put | OpKind::Delete => {
                        self.pending.insert(
                            (op.keyspace, op.key.to_vec()),
                            (op.kind, op.value.map(<[u8]>::to_vec)),
                        );
                    }
                    OpKind::CreateKeyspace => {
                        self.names
                            .insert(op.keyspace, String::from_utf8_lossy(op.key).into_owned());
                    }
                    // Every key of the keyspace came back, or was lost: not listed one by one.
                    OpKind::DropKeyspace | OpKind::ClearKeyspace => self.complete = false,
                }
            }
            at = match frame.len {
                Some(len) => at + len.max(ALIGN),
                None => next_frame_magic(bytes, at + ALIGN),
            };
        }
    }

    /// An intact log frame is applied; `gap` is how many commits are missing before it, when
    /// that can be known (a log frame was applied before it, or the checkpoint gave the
    /// position).
    fn intact_log_frame(&mut self, gap: Option<u64>) {
        match gap {
            Some(gap) => {
                self.commits_dropped += gap;
                if gap > self.whole_since_intact {
                    self.complete = false;
                }
            }
            None => self.commits_dropped += self.trailing,
        }
        self.trailing = 0;
        self.whole_since_intact = 0;
    }

    /// A later intact frame wrote these keys: their lost writes are no longer visible.
    fn overwritten_by(&mut self, frame: &Frame<'_>) {
        if self.pending.is_empty() {
            return;
        }
        for op in frame.ops() {
            match op.kind {
                OpKind::Put | OpKind::Delete => {
                    self.pending.remove(&(op.keyspace, op.key.to_vec()));
                }
                OpKind::DropKeyspace | OpKind::ClearKeyspace => {
                    self.pending
                        .retain(|(keyspace, _), _| *keyspace != op.keyspace);
                }
                OpKind::CreateKeyspace => {}
            }
        }
    }

    /// What each lost write left visible in `directory` (the repaired state).
    fn effects(&self, directory: &Directory) -> Vec<LostWrite> {
        let mut lost = Vec::new();
        for ((keyspace_id, key), (kind, value)) in &self.pending {
            let keyspace = directory.keyspaces.get(keyspace_id);
            // Salvage's directory is held in memory: no lookup reads a checkpoint block.
            let present =
                keyspace.is_some_and(|keyspace| matches!(keyspace.contains_key(key), Ok(true)));
            let effect = match (kind, present) {
                (OpKind::Put, true) => LostWriteEffect::RolledBack,
                (OpKind::Put, false) => LostWriteEffect::Vanished,
                (OpKind::Delete, true) => LostWriteEffect::Undeleted,
                _ => continue,
            };
            let keyspace = match keyspace {
                Some(keyspace) => keyspace.name.to_string(),
                None => self
                    .names
                    .get(keyspace_id)
                    .cloned()
                    .unwrap_or_else(|| format!("{SALVAGED_KEYSPACE_PREFIX}{keyspace_id}")),
            };
            lost.push(LostWrite {
                keyspace,
                key: key.clone(),
                effect,
                lost_value: value.clone(),
            });
        }
        lost
    }
}

/// The first offset from `from` (aligned up) where a frame's magic is, or the end of `bytes`.
fn next_frame_magic(bytes: &[u8], from: usize) -> usize {
    let magic = FRAME_MAGIC.to_le_bytes();
    let mut probe = from.next_multiple_of(ALIGN);
    while probe + magic.len() <= bytes.len() {
        if bytes[probe..probe + magic.len()] == magic {
            return probe;
        }
        probe += ALIGN;
    }
    bytes.len()
}

impl Salvage {
    /// Drops and reports every value that does not read back with its checksum: count and keys.
    fn drop_unreadable_values(
        &mut self,
        directory: &mut Directory,
        table: &SegmentTable,
    ) -> (u64, Vec<(String, Vec<u8>)>) {
        let mut values_dropped = 0;
        let mut dropped_keys = Vec::new();
        let mut lost = Vec::new();
        // Dropped values by file, keyspace and reason: (first offset, count).
        let mut dropped: BTreeMap<(PathBuf, String, String), (u64, u64)> = BTreeMap::new();
        for (&keyspace_id, keyspace) in &directory.keyspaces {
            for (key, loc) in keyspace.iter_in_memory() {
                if let Err(error) = read_value(table, &loc) {
                    let path = match table.get(&loc.segment) {
                        Some(segment) => segment.path.clone(),
                        None => self.dir.join(segment_file_name(loc.segment)),
                    };
                    let entry = dropped
                        .entry((path, keyspace.name.to_string(), error_reason(&error)))
                        .or_insert((u64::from(loc.offset), 0));
                    entry.0 = entry.0.min(u64::from(loc.offset));
                    entry.1 += 1;
                    lost.push((keyspace_id, key.to_vec()));
                    values_dropped += 1;
                    dropped_keys.push((keyspace.name.to_string(), key.to_vec()));
                }
            }
        }
        for ((path, keyspace, reason), (offset, count)) in dropped {
            let reason = if count == 1 {
                format!("the value of a key in keyspace {keyspace:?} is dropped: {reason}")
            } else {
                format!(
                    "{count} values of keys in keyspace {keyspace:?} are dropped, the first at this offset: {reason}"
                )
            };
            self.damaged(path, offset, reason);
        }
        for (keyspace_id, key) in lost {
            if let Some(keyspace) = directory.keyspaces.get_mut(&keyspace_id) {
                // Held in memory: a delete reads no checkpoint block and cannot fail.
                let _deleted = keyspace.delete(&key);
            }
        }
        (values_dropped, dropped_keys)
    }

    fn damaged(&mut self, path: impl Into<PathBuf>, offset: u64, reason: impl Into<String>) {
        self.damage.push(Damage {
            path: path.into(),
            offset,
            reason: reason.into(),
        });
    }

    /// The manifest, if it is present and intact.
    fn read_manifest(
        &mut self,
        backend: &Arc<dyn Backend>,
        names: &[String],
    ) -> Result<Option<Manifest>> {
        let path = self.dir.join(MANIFEST_FILE_NAME);
        if !names.iter().any(|n| n == MANIFEST_FILE_NAME) {
            self.damaged(
                &path,
                0,
                "the manifest is missing; segments are found by listing the directory",
            );
            return Ok(None);
        }
        let bytes = backend
            .read_file(&path)
            .map_err(|e| Error::io("read manifest", &path, e))?;
        match Manifest::from_bytes(&bytes) {
            Ok(manifest) => Ok(Some(manifest)),
            Err(error) => {
                self.damaged(
                    &path,
                    error.offset,
                    format!(
                        "{}; segments are found by listing the directory",
                        error.reason
                    ),
                );
                Ok(None)
            }
        }
    }

    /// Opens every segment file and files it under the id its header gives (the id of its
    /// name if the header is damaged). With an intact manifest, only the segments it lists
    /// are kept; a listed segment without a file is reported.
    fn open_segments(
        &mut self,
        backend: &Arc<dyn Backend>,
        names: &[String],
        manifest: Option<&Manifest>,
    ) -> BTreeMap<u32, Segment> {
        let listed_kind =
            |id: u32| manifest.and_then(|m| m.segments.iter().find(|s| s.id == id).map(|s| s.kind));
        let mut with_header = Vec::new();
        let mut without_header = Vec::new();
        for name in names {
            let Some(name_id) = file_id(name, "seg-") else {
                continue;
            };
            let path = self.dir.join(name);
            let segment = match Segment::open_ignoring_header(
                backend,
                &self.dir,
                name_id,
                SegmentKind::Log,
                Access::ReadWrite,
            ) {
                Ok(segment) => segment,
                Err(error) => {
                    self.damaged(&path, 0, format!("cannot be read: {error}"));
                    continue;
                }
            };
            match SegmentHeader::from_bytes(segment.bytes()) {
                Ok(header) => {
                    // A shortened file is damage even when only zeroes were cut: the normal
                    // open refuses it, so the store must be rewritten.
                    let created = header.capacity as usize;
                    if created != 0 && segment.capacity() < created {
                        self.log_bytes_missing |= header.kind == SegmentKind::Log;
                        self.damaged(
                            &path,
                            segment.capacity() as u64,
                            format!(
                                "the file is {} bytes but was created with {created}: it was shortened, and whatever was in the missing bytes is lost",
                                segment.capacity()
                            ),
                        );
                    }
                    with_header.push((segment, name_id, header));
                }
                Err(error) => {
                    self.damaged(
                        &path,
                        error.offset,
                        format!(
                            "{}; the file is scanned as segment {name_id}, the id of its name",
                            error.reason
                        ),
                    );
                    without_header.push((segment, name_id));
                }
            }
        }
        // A file whose name matches its header claims its id first.
        with_header.sort_by_key(|(_, name_id, header)| header.segment_id != *name_id);
        let mut segments: BTreeMap<u32, Segment> = BTreeMap::new();
        for (mut segment, name_id, header) in with_header {
            if segments.contains_key(&header.segment_id) {
                self.damaged(
                    &segment.path,
                    0,
                    format!(
                        "its header says segment {}, which another file holds; ignored",
                        header.segment_id
                    ),
                );
                continue;
            }
            if header.segment_id != name_id {
                self.damaged(
                    &segment.path,
                    16,
                    format!(
                        "the file is named for segment {name_id} but its header says segment {}; used as segment {}",
                        header.segment_id, header.segment_id
                    ),
                );
            }
            segment.id = header.segment_id;
            segment.kind = header.kind;
            segments.insert(header.segment_id, segment);
        }
        for (mut segment, name_id) in without_header {
            if segments.contains_key(&name_id) {
                self.damaged(
                    &segment.path,
                    0,
                    format!("another file holds segment {name_id}; ignored"),
                );
                continue;
            }
            segment.kind = listed_kind(name_id).unwrap_or_else(|| guess_kind(&segment));
            segments.insert(name_id, segment);
        }

        let Some(manifest) = manifest else {
            if !segments.values().any(|s| s.kind == SegmentKind::Log) {
                self.active_segment_missing = true;
                self.damaged(
                    self.dir.clone(),
                    0,
                    "no log segment was found: the active segment is missing, and any commit only it held is lost; a fresh active segment is started",
                );
            }
            return segments;
        };
        segments.retain(|id, _| manifest.segments.iter().any(|s| s.id == *id));
        for entry in &manifest.segments {
            if segments.contains_key(&entry.id) {
                continue;
            }
            let path = self.dir.join(segment_file_name(entry.id));
            if entry.end == ACTIVE_SEGMENT_END {
                self.active_segment_missing = true;
                self.damaged(
                    path,
                    0,
                    "the active log segment is missing: commits only it held are lost; a fresh active segment is started",
                );
            } else {
                self.log_bytes_missing |= entry.kind == SegmentKind::Log;
                self.damaged(
                    path,
                    0,
                    format!(
                        "the {} segment listed in the manifest is missing: the values only it held are lost",
                        if entry.kind == SegmentKind::Log {
                            "sealed log"
                        } else {
                            "compacted"
                        }
                    ),
                );
            }
        }
        segments
    }

    /// The checkpoint the manifest names, or if it is damaged its fallback checkpoint; without
    /// a manifest the newest intact one.
    fn read_checkpoint(
        &mut self,
        backend: &Arc<dyn Backend>,
        names: &[String],
        manifest: Option<&Manifest>,
        segments: &BTreeMap<u32, Segment>,
    ) -> Option<LoadedCheckpoint> {
        let candidates: Vec<u32> = if let Some(manifest) = manifest {
            // The fallback checkpoint (with the segments retained for it, which the manifest
            // lists) describes the same state as the current one once the log after it is
            // replayed. A fallback that is the log from its start needs no candidate: without
            // a checkpoint every frame is replayed.
            [manifest.checkpoint, manifest.fallback.checkpoint()]
                .into_iter()
                .flatten()
                .collect()
        } else {
            let mut ids: Vec<u32> = names
                .iter()
                .filter_map(|name| file_id(name, "ckpt-"))
                .collect();
            ids.sort_unstable_by(|a, b| b.cmp(a));
            ids
        };
        // Locations are checked when each value is read, so a location in a missing or
        // truncated segment costs that value only, not the whole checkpoint.
        let any_segment = |_: u32| Some(usize::MAX);
        let decode = |path: &Path| match backend.read_file(path) {
            Ok(bytes) => checkpoint::decode(&bytes, &any_segment)
                .map_err(|e| (e.offset, format!("{}; not used", e.reason))),
            Err(e) => Err((0, format!("cannot be read ({e}); not used"))),
        };
        for (index, &id) in candidates.iter().enumerate() {
            let path = self.dir.join(checkpoint_file_name(id));
            let decoded = decode(&path);
            if decoded.is_ok()
                && let Some(&fallback) = candidates.get(index + 1)
                && manifest.is_some()
            {
                // A damaged fallback is damage too: the store could not survive the loss of
                // its checkpoint. The rewritten store starts without one, until its next
                // checkpoint.
                let fallback_path = self.dir.join(checkpoint_file_name(fallback));
                if let Err((offset, reason)) = decode(&fallback_path) {
                    self.damaged(fallback_path, offset, reason);
                }
            }
            match decoded {
                Ok(loaded) => {
                    let log_segment = loaded.log_segment;
                    if !segments.contains_key(&log_segment) && !self.active_segment_missing {
                        let segment_path = self.dir.join(segment_file_name(log_segment));
                        let later_log = segments
                            .range(log_segment..)
                            .any(|(_, s)| s.kind == SegmentKind::Log);
                        if later_log {
                            self.log_bytes_missing = true;
                            self.damaged(
                                segment_path,
                                0,
                                format!(
                                    "log segment {log_segment}, where the checkpoint's log position is, is missing: the commits only it held are lost"
                                ),
                            );
                        } else {
                            self.active_segment_missing = true;
                            self.damaged(
                                segment_path,
                                0,
                                "the active log segment (where the checkpoint's log position is) is missing: commits only it held are lost; a fresh active segment is started",
                            );
                        }
                    }
                    return Some(loaded);
                }
                Err((offset, reason)) => self.damaged(path, offset, reason),
            }
        }
        None
    }

    /// Checks every frame of every segment and applies the intact ones the checkpoint does not
    /// cover: after the checkpoint's log position, or without a checkpoint all of them, in
    /// the order they were written.
    fn replay(
        &mut self,
        segments: &BTreeMap<u32, Segment>,
        manifest: Option<&Manifest>,
        checkpoint: Option<LoadedCheckpoint>,
    ) -> Replayed {
        let sealed_end = |id: u32| {
            manifest
                .and_then(|m| m.segments.iter().find(|s| s.id == id))
                .map(|s| s.end)
                .filter(|&end| end != ACTIVE_SEGMENT_END)
        };
        let mut live = LiveBytes::default();
        let position = checkpoint
            .as_ref()
            .map(|loaded| (loaded.log_segment, loaded.log_offset));
        let mut replayed = match checkpoint {
            Some(loaded) => Replayed {
                directory: loaded.directory,
                next_seq: loaded.next_seq,
                frames_applied: 0,
                checkpoint_used: true,
                lost: LostWrites::new(),
            },
            None => Replayed {
                directory: Directory::default(),
                next_seq: 1,
                frames_applied: 0,
                checkpoint_used: false,
                lost: LostWrites::new(),
            },
        };
        let order = replay_order(segments);
        let mut applied_log_frame = position.is_some();
        for id in order {
            let segment = &segments[&id];
            // Which frames of this segment are applied (`None`: only checked).
            let apply_from = match (position, segment.kind) {
                (None, _) => Some(SEGMENT_HEADER_LEN),
                (Some(_), SegmentKind::Compacted) => None,
                (Some((log_segment, log_offset)), SegmentKind::Log) => match id.cmp(&log_segment) {
                    std::cmp::Ordering::Less => None,
                    std::cmp::Ordering::Equal => Some(log_offset),
                    std::cmp::Ordering::Greater => Some(SEGMENT_HEADER_LEN),
                },
            };
            let mut found = Vec::new();
            let mut regions = Vec::new();
            let log_end = scan_segment(segment, &mut self.damage, &mut regions, |offset, frame| {
                found.push((offset, frame));
            });
            let is_log = segment.kind == SegmentKind::Log;
            let replayed_from = |start: usize| apply_from.is_some_and(|from| start >= from);
            let mut regions = regions.into_iter().peekable();
            if let Some(end) = sealed_end(id)
                && end != log_end as u64
            {
                self.log_bytes_missing |= segment.kind == SegmentKind::Log;
                self.damaged(
                    &segment.path,
                    log_end as u64,
                    format!(
                        "the intact frames end here but the manifest says the segment ends at {end}: the bytes between are lost"
                    ),
                );
            }
            for (offset, frame) in found {
                while let Some(&(start, end)) = regions.peek()
                    && start < offset
                {
                    regions.next();
                    if replayed_from(start) {
                        replayed
                            .lost
                            .read_region(&segment.bytes()[start..end], is_log);
                    }
                }
                if apply_from.is_none_or(|from| offset < from) {
                    continue;
                }
                if segment.kind == SegmentKind::Log {
                    if frame.seq < replayed.next_seq {
                        self.damaged(
                            &segment.path,
                            offset as u64,
                            format!(
                                "frame {} comes after frame {} in the log; skipped as stale",
                                frame.seq,
                                replayed.next_seq - 1
                            ),
                        );
                        continue;
                    }
                    replayed
                        .lost
                        .intact_log_frame(applied_log_frame.then(|| frame.seq - replayed.next_seq));
                    if frame.seq > replayed.next_seq && applied_log_frame {
                        self.damaged(
                            &segment.path,
                            offset as u64,
                            format!(
                                "commits {} to {} are missing from the log before this frame",
                                replayed.next_seq,
                                frame.seq - 1
                            ),
                        );
                    }
                    applied_log_frame = true;
                    replayed.next_seq = frame.seq + 1;
                }
                replayed.lost.overwritten_by(&frame);
                apply_salvaged_frame(
                    &mut replayed.directory,
                    &frame,
                    segment.id,
                    offset + FRAME_HEADER_LEN,
                    &mut live,
                );
                replayed.frames_applied += 1;
            }
            for (start, end) in regions {
                if replayed_from(start) {
                    replayed
                        .lost
                        .read_region(&segment.bytes()[start..end], is_log);
                }
            }
        }
        replayed.lost.commits_dropped += replayed.lost.trailing;
        replayed.lost.trailing = 0;
        replayed
    }
}

/// A segment whose header is damaged: compacted if its first intact frame has sequence
/// number 0 (compaction writes no others), otherwise log.
fn guess_kind(segment: &Segment) -> SegmentKind {
    let mut kind = SegmentKind::Log;
    let mut ignored = Vec::new();
    let mut first = true;
    scan_segment(segment, &mut ignored, &mut Vec::new(), |_, frame| {
        if first && frame.seq == 0 {
            kind = SegmentKind::Compacted;
        }
        first = false;
    });
    kind
}

/// The order in which segments were written, for a replay without checkpoint: by id, except
/// that a compacted segment goes before the newest log segment below it (the segment the
/// compaction's rotation started, which took commits newer than the copies).
fn replay_order(segments: &BTreeMap<u32, Segment>) -> Vec<u32> {
    let mut keyed: Vec<((u32, u8), u32)> = segments
        .values()
        .map(|segment| {
            let key = match segment.kind {
                SegmentKind::Log => (segment.id, 1),
                SegmentKind::Compacted => {
                    let newest_log_below = segments
                        .range(..segment.id)
                        .rev()
                        .find(|(_, s)| s.kind == SegmentKind::Log)
                        .map(|(&id, _)| id);
                    (newest_log_below.unwrap_or(segment.id), 0)
                }
            };
            (key, segment.id)
        })
        .collect();
    keyed.sort_unstable();
    keyed.into_iter().map(|(_, id)| id).collect()
}

/// Calls `frame` with the offset of every intact frame of `segment`, in order, and records
/// every damaged region: bytes that are neither a frame nor the zeroes after the log, in
/// `damage` with a reason and in `regions` as `(start, end)`. Returns where the last intact
/// frame ends.
fn scan_segment<'a>(
    segment: &'a Segment,
    damage: &mut Vec<Damage>,
    regions: &mut Vec<(usize, usize)>,
    mut frame: impl FnMut(usize, Frame<'a>),
) -> usize {
    let bytes = segment.bytes();
    let mut log_end = SEGMENT_HEADER_LEN;
    let mut report = |offset: usize, reason: String| {
        damage.push(Damage {
            path: segment.path.clone(),
            offset: offset as u64,
            reason,
        });
    };
    let mut offset = SEGMENT_HEADER_LEN;
    while offset < bytes.len() {
        let problem = match decode_frame(bytes, offset) {
            Ok(FrameSlot::Frame(found)) => {
                frame(offset, found);
                offset += found.len;
                log_end = offset;
                continue;
            }
            Ok(FrameSlot::Empty) => None,
            Err(error) => Some(error.reason),
        };
        let dirty = dirty_end(bytes, offset);
        if dirty == offset {
            // Zeroes to the end of the file: the end of the log.
            return log_end;
        }
        let what = problem.as_deref().unwrap_or("zeroed frame header");
        let Some(next) = next_frame(bytes, offset + ALIGN, dirty) else {
            regions.push((offset, dirty));
            report(
                offset,
                format!(
                    "{what}: {} bytes after it hold no intact frame (a torn or damaged end of the log)",
                    dirty - offset
                ),
            );
            return log_end;
        };
        regions.push((offset, next));
        report(
            offset,
            format!(
                "{what}: {} bytes skipped up to the next intact frame",
                next - offset
            ),
        );
        offset = next;
    }
    log_end
}

/// The first offset in `[from, before)` where an intact frame starts.
fn next_frame(bytes: &[u8], from: usize, before: usize) -> Option<usize> {
    let mut probe = from.next_multiple_of(ALIGN);
    while probe < before && probe + FRAME_HEADER_LEN <= bytes.len() {
        if let Ok(FrameSlot::Frame(_)) = decode_frame(bytes, probe) {
            return Some(probe);
        }
        probe += ALIGN;
    }
    None
}

/// Applies a frame found by a salvage. A create-keyspace op creates the keyspace whenever its
/// id and name are free, whatever order the segments are replayed in, and gives its name back
/// to a keyspace that puts had to create as `salvaged-<id>`; the other ops follow
/// [`apply_leniently`].
fn apply_salvaged_frame(
    directory: &mut Directory,
    frame: &Frame<'_>,
    segment: u32,
    payload_offset: usize,
    live: &mut LiveBytes,
) {
    for op in frame.ops() {
        if op.kind != OpKind::CreateKeyspace {
            continue;
        }
        let Ok(name) = std::str::from_utf8(op.key) else {
            continue;
        };
        let placeholder = format!("{SALVAGED_KEYSPACE_PREFIX}{}", op.keyspace);
        let name_taken = directory.names.contains_key(name);
        match directory.keyspaces.get_mut(&op.keyspace) {
            Some(keyspace) if *keyspace.name == *placeholder && !name_taken => {
                let name: Arc<str> = Arc::from(name);
                directory.names.remove(placeholder.as_str());
                directory.names.insert(name.clone(), op.keyspace);
                keyspace.name = name;
            }
            Some(_) => {}
            None if !name_taken => {
                let name: Arc<str> = Arc::from(name);
                directory.names.insert(name.clone(), op.keyspace);
                directory
                    .keyspaces
                    .insert(op.keyspace, KeyspaceState::new(name));
                directory.next_keyspace_id = directory
                    .next_keyspace_id
                    .max(op.keyspace.saturating_add(1));
            }
            None => {}
        }
    }
    apply_leniently(directory, frame, segment, payload_offset, live);
}

/// Applies a frame leniently: creates keyspaces that puts refer to but that are missing (as
/// `salvaged-<id>`), and skips ops that cannot apply.
fn apply_leniently(
    directory: &mut Directory,
    frame: &Frame<'_>,
    segment: u32,
    payload_offset: usize,
    live: &mut LiveBytes,
) {
    for op in frame.ops() {
        let exists = directory.keyspaces.contains_key(&op.keyspace);
        let single = std::iter::once(op);
        match op.kind {
            OpKind::CreateKeyspace => {
                if directory.check_ops(std::iter::once(op)).is_ok() {
                    // Held in memory: applying reads no checkpoint block and cannot fail.
                    let _in_memory = directory.apply_ops(single, segment, payload_offset, live);
                }
            }
            OpKind::Put => {
                if !exists {
                    let name = format!("{SALVAGED_KEYSPACE_PREFIX}{}", op.keyspace);
                    let mut create = Vec::new();
                    encode_op(
                        &mut create,
                        OpKind::CreateKeyspace,
                        op.keyspace,
                        name.as_bytes(),
                        &[],
                    );
                    let ops = Frame {
                        seq: 0,
                        payload: &create,
                        len: 0,
                    };
                    if directory.names.contains_key(name.as_str()) {
                        continue;
                    }
                    // Held in memory: applying reads no checkpoint block and cannot fail.
                    let _in_memory = directory.apply_ops(ops.ops(), segment, 0, live);
                }
                // Held in memory: applying reads no checkpoint block and cannot fail.
                let _in_memory = directory.apply_ops(single, segment, payload_offset, live);
            }
            OpKind::Delete | OpKind::ClearKeyspace | OpKind::DropKeyspace => {
                if exists {
                    // Held in memory: applying reads no checkpoint block and cannot fail.
                    let _in_memory = directory.apply_ops(single, segment, payload_offset, live);
                }
            }
        }
    }
}

/// One problem found by [`Store::verify`](crate::Store::verify) or skipped by
/// [`Store::repair`](crate::Store::repair).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Damage {
    /// The damaged file.
    pub path: PathBuf,
    /// Offset of the damage inside it.
    pub offset: u64,
    /// What is wrong.
    pub reason: String,
}

impl Damage {
    /// `error` as damage: its file and offset if it is [`Error::Corrupt`], else `path` and
    /// its text.
    pub(crate) fn of(error: Error, path: PathBuf) -> Damage {
        match error {
            Error::Corrupt {
                path,
                offset,
                reason,
            } => Damage {
                path,
                offset,
                reason,
            },
            other => Damage {
                path,
                offset: 0,
                reason: other.to_string(),
            },
        }
    }
}

/// Result of [`Store::repair`](crate::Store::repair).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RepairReport {
    /// True if a valid checkpoint was the starting point; false means every segment was
    /// scanned, and keys deleted long ago may reappear if their tombstones were compacted away.
    pub checkpoint_used: bool,
    /// Intact frames applied.
    pub frames_salvaged: u64,
    /// Everything found wrong (damaged regions skipped, missing or misnamed files, keys
    /// dropped because their value was damaged), with the file and offset of each. Empty when
    /// the store was intact.
    pub damage: Vec<Damage>,
    /// Keys in the repaired store.
    pub keys_recovered: u64,
    /// Keys dropped because their value was damaged or gone.
    pub values_dropped: u64,
    /// The keys dropped, as (keyspace name, key).
    pub dropped_keys: Vec<(String, Vec<u8>)>,
    /// True if the active log segment was missing (a fresh one was started).
    pub active_segment_missing: bool,
    /// Commits known to be dropped: missing from the sequence between intact log frames, or
    /// damaged frames whose header still reads after the last intact one.
    pub commits_dropped: u64,
    /// The writes of dropped commits that the repaired store does not hold, as far as the
    /// damaged bytes still show their ops, with what each loss left visible. A write a later
    /// intact commit overwrote is not listed (nothing of it is visible either way).
    pub lost_writes: Vec<LostWrite>,
    /// True when `lost_writes` names every write of every dropped commit: every damaged byte
    /// range of the replayed log was read op by op and no log bytes are missing. False when
    /// log bytes are gone (a shortened or missing log segment) or unreadable, so commits may
    /// have been dropped whose keys cannot be known.
    pub lost_writes_complete: bool,
    /// Files moved to `backup_dir` (the manifest is copied there, then replaced).
    pub files_moved: Vec<String>,
    /// Where the old files were moved (inside the store directory); `None` when nothing was
    /// damaged and no file was changed.
    pub backup_dir: Option<PathBuf>,
}

/// A write of a commit that [`Store::repair`](crate::Store::repair) dropped, read from the
/// damaged bytes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LostWrite {
    /// The keyspace's name in the repaired store.
    pub keyspace: String,
    /// The key written.
    pub key: Vec<u8>,
    /// What the repaired store shows instead.
    pub effect: LostWriteEffect,
    /// The value a lost put wrote, when its bytes survive and match their own checksum (the
    /// frame around it failed its checks).
    pub lost_value: Option<Vec<u8>>,
}

/// What the loss of a write left visible.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[non_exhaustive]
pub enum LostWriteEffect {
    /// A put was lost and an older value of the key is visible.
    RolledBack,
    /// A put was lost and the key has no value (it was new, or its older value was deleted).
    Vanished,
    /// A delete was lost: the key's older value is visible again.
    Undeleted,
}
