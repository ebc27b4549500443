//! The store handle: commits with group commit, segment rotation, snapshots, checkpoints,
//! compaction, stats and verification (opening is in `recovery`, repair in `salvage`, compaction
//! output in `compaction`).
//!
//! Concurrency: one writer at a time (the `writer` mutex) appends frames and applies them to
//! the published directory; readers clone the published directory and segment table under a
//! short read lock and never block the writer for longer than that. Durability waits happen
//! outside the writer lock so that concurrent committers share one fsync.
//!
//! Lock order: `maintenance` → `writer` → `manifest` → `published`; `sync_state`, `basis` and
//! `retained` are never held while taking another lock. This module must never write to a
//! segment below its published length, never make a file reachable from the manifest before
//! it is durable, never delete a file the durable manifest still names, and never let a
//! durable manifest name a fallback that cannot reproduce its checkpoint's state (the
//! fallback's checkpoint, the segments it points into and the log after it stay on disk).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, RwLock, RwLockReadGuard, RwLockWriteGuard};
use std::thread::JoinHandle;
use std::time::Duration;

use crate::backend::{Backend, DirLock, FileBackend, MemoryBackend};
use crate::batch::WriteBatch;
use crate::checkpoint;
use crate::compaction::CompactionOutput;
use crate::directory::{Directory, LiveBytes};
use crate::error::{Error, Result};
use crate::format::{
    self, ACTIVE_SEGMENT_END, FRAME_HEADER_LEN, Fallback, FrameSlot, MANIFEST_FILE_NAME,
    MAX_FRAME_LEN, Manifest, ManifestSegment, OpKind, SEGMENT_HEADER_LEN, SegmentKind, align_up,
    checkpoint_file_name, decode_frame, encode_op, seal_frame, segment_file_name,
    written_limit_for,
};
use crate::recovery::{
    RecoveryReport, TornTail, dirty_end, initialise, load, remove_orphans, write_checkpoint_file,
    write_manifest,
};
use crate::salvage::{self, Damage, RepairReport};
use crate::segment::{Access, Segment};
use crate::snapshot::{SegmentTable, Snapshot, read_value};

/// Identifies a keyspace. Ids are never reused, even after the keyspace is dropped.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct KeyspaceId(pub(crate) u32);

impl KeyspaceId {
    /// The id as stored on disk.
    pub fn as_u32(self) -> u32 {
        self.0
    }
}

/// When commits reach stable storage.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Durability {
    /// `commit` returns after an fsync covering the batch; concurrent committers share one
    /// fsync (group commit).
    SyncEveryCommit,
    /// A background thread fsyncs at this interval; a crash loses at most about that much.
    SyncInterval(Duration),
    /// Never fsync commits (segments are still synced when sealed, and on checkpoint, compaction
    /// and close); the operating system decides when data reaches the disk.
    OsBuffered,
}

/// Options of [`Store::open`].
#[derive(Clone, Debug, PartialEq)]
pub struct StoreOptions {
    /// When commits become durable.
    pub durability: Durability,
    /// Size of each log segment file, allocated on creation. On a file system with less than
    /// four times this free, a new segment gets a quarter of the free space instead (at least
    /// [`SMALL_DISK_SEGMENT_SIZE`]), so that a small disk still holds a database, its
    /// checkpoint and the next segment. A batch larger than a segment gets a segment of its
    /// own, as large as needed.
    pub segment_size: u64,
    /// [`Store::compact`] rewrites sealed segments whose live bytes are below this fraction of
    /// their written bytes.
    pub compaction_live_ratio: f64,
    /// Bytes of log after which a checkpoint is written in the background, so that opening
    /// replays at most about this much log; a clean close also writes one when at least
    /// [`CLOSE_CHECKPOINT_MIN_BYTES`] (or this, if smaller) were logged since the last. `0`
    /// turns both off: only [`Store::checkpoint`] and compaction write checkpoints.
    pub checkpoint_after_log_bytes: u64,
}

impl Default for StoreOptions {
    fn default() -> Self {
        StoreOptions {
            durability: Durability::SyncEveryCommit,
            segment_size: 64 << 20,
            compaction_live_ratio: 0.75,
            checkpoint_after_log_bytes: 64 << 20,
        }
    }
}

/// Log bytes since the last checkpoint from which a clean close writes one: below it, the
/// next open replays the log faster than the close would write the whole directory.
pub const CLOSE_CHECKPOINT_MIN_BYTES: u64 = 1 << 20;

/// Smallest accepted segment size.
pub const MIN_SEGMENT_SIZE: u64 = 4096;
/// The smallest size a segment is shrunk to on a nearly full file system.
pub const SMALL_DISK_SEGMENT_SIZE: u64 = 64 << 10;

/// The size of a new segment when the file system has `available` bytes free: the
/// configured size if a quarter of the free space holds it, else that quarter (4 KiB-aligned,
/// at least [`SMALL_DISK_SEGMENT_SIZE`] or the configured size, whichever is smaller).
pub(crate) fn segment_size_for_space(configured: u64, available: Option<u64>) -> usize {
    let size = match available {
        Some(available) if available / 4 < configured => (available / 4 / 4096 * 4096)
            .max(SMALL_DISK_SEGMENT_SIZE.min(configured))
            .max(MIN_SEGMENT_SIZE),
        _ => configured,
    };
    usize::try_from(size).unwrap_or(usize::MAX)
}
/// Largest accepted segment size (offsets inside a segment are 32-bit).
pub const MAX_SEGMENT_SIZE: u64 = 1 << 31;

/// Result of [`Store::verify`].
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct VerifyReport {
    /// Frames whose checksum was verified.
    pub frames_checked: u64,
    /// Live values whose checksum was verified.
    pub values_checked: u64,
    /// Everything found wrong; empty for a healthy store.
    pub damage: Vec<Damage>,
    /// The torn tail the open of this handle dropped, if any (from
    /// [`Store::recovery_report`]): not damage, but bytes that are gone, so a report of a clean
    /// store must still mention it.
    pub torn_tail: Option<TornTail>,
}

impl VerifyReport {
    /// True if nothing is damaged.
    pub fn is_clean(&self) -> bool {
        self.damage.is_empty()
    }
}

/// Result of [`Store::compact`].
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CompactionReport {
    /// Segments rewritten (and deleted once no snapshot reads them).
    pub segments_compacted: Vec<u32>,
    /// New segments holding the records that were still live.
    pub segments_written: Vec<u32>,
    /// Live records copied.
    pub records_moved: u64,
    /// Written bytes of the compacted segments.
    pub bytes_before: u64,
    /// Bytes of the new segments.
    pub bytes_after: u64,
}

/// Per-segment figures.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SegmentStats {
    /// Segment id (file `seg-<id as 8 hex digits>.spw`).
    pub id: u32,
    /// Log or compacted.
    pub kind: SegmentKind,
    /// True for the segment being appended to.
    pub active: bool,
    /// True for a compaction victim kept only for the fallback (see `Store::compact`): no
    /// key points into it; the next checkpoint deletes it. Its bytes count as dead.
    pub retained: bool,
    /// Length of the file (allocated whole, so mostly unwritten for the active segment).
    pub file_bytes: u64,
    /// Bytes of frames written.
    pub written_bytes: u64,
    /// Bytes of records still reachable.
    pub live_bytes: u64,
    /// `written_bytes - live_bytes`: overwritten and deleted records, tombstones, headers.
    pub dead_bytes: u64,
}

/// Per-keyspace figures.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KeyspaceStats {
    /// Keyspace name.
    pub name: String,
    /// Keyspace id.
    pub id: KeyspaceId,
    /// Number of keys.
    pub keys: u64,
}

/// Figures of [`Store::stats`]. Counters count since the store was opened.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StoreStats {
    /// Every segment, by id.
    pub segments: Vec<SegmentStats>,
    /// Every keyspace, by name.
    pub keyspaces: Vec<KeyspaceStats>,
    /// Commit frames written.
    pub frames_written: u64,
    /// fsync calls on segments (commits, rotations, checkpoints).
    pub fsyncs: u64,
    /// Bytes of commit frames written.
    pub bytes_written: u64,
    /// Sequence number of the last commit.
    pub last_seq: u64,
    /// Directory entries held in memory: keys written or deleted since the last checkpoint
    /// (the checkpointed keys are read in place from the mapped checkpoint file). A version 1
    /// checkpoint, loaded whole into memory, counts all its keys until the next checkpoint.
    pub keys_in_memory: u64,
    /// Checksummed blocks of the mapped checkpoint the keys are read from (format version 3;
    /// 0 for none, or an older version checked whole at open).
    pub checkpoint_blocks: u64,
    /// How many of those blocks reads have checked so far: an open checks only the few that
    /// hold the archive's structure, every other one is checked when first read.
    pub checkpoint_blocks_checked: u64,
}

struct Published {
    directory: Directory,
    segments: Arc<SegmentTable>,
    seq: u64,
}

struct Writer {
    active: Arc<Segment>,
    /// Offset where the next frame goes.
    head: usize,
    /// Frames may be written below this offset of the active segment: the manifest's written
    /// limit (durable), or less. A frame that would end past it raises it first.
    written_limit: usize,
    next_seq: u64,
    live: LiveBytes,
    /// Bytes of log since the store was created, as far as this handle knows: those replayed
    /// at open plus those appended since (a position to compare, not a size on disk).
    log_bytes: u64,
}

/// Where a checkpoint stops covering the log: the next frame's segment, offset and sequence
/// number, and [`Writer::log_bytes`] there.
#[derive(Clone, Copy)]
struct LogPosition {
    segment: u32,
    offset: usize,
    next_seq: u64,
    log_bytes: u64,
}

impl LogPosition {
    fn of(writer: &Writer) -> LogPosition {
        LogPosition {
            segment: writer.active.id,
            offset: writer.head,
            next_seq: writer.next_seq,
            log_bytes: writer.log_bytes,
        }
    }
}

#[derive(Default)]
struct SyncState {
    synced_seq: u64,
    in_progress: bool,
}

struct Shared {
    backend: Arc<dyn Backend>,
    dir: PathBuf,
    options: StoreOptions,
    published: RwLock<Published>,
    writer: Mutex<Writer>,
    sync_state: Mutex<SyncState>,
    sync_done: Condvar,
    maintenance: Mutex<()>,
    manifest: Mutex<Manifest>,
    poisoned: AtomicBool,
    poison_cause: Mutex<Option<String>>,
    frames_written: AtomicU64,
    fsyncs: AtomicU64,
    bytes_written: AtomicU64,
    /// [`Writer::log_bytes`] at the position of the last installed checkpoint.
    checkpointed_log_bytes: AtomicU64,
    /// [`Writer::log_bytes`] from which a commit starts a background checkpoint.
    next_checkpoint_at: AtomicU64,
    /// A background checkpoint is running.
    checkpointing: AtomicBool,
    /// The checkpoint the in-memory state derives from (the current one, or the fallback if
    /// the open found the current one damaged; the log from its start before any): the next
    /// checkpoint names it as its fallback. Changed only under `maintenance`.
    basis: Mutex<Fallback>,
    /// Victims of this handle's compactions, kept (listed as retained) for the fallback;
    /// retired by the next checkpoint. Changed only under `maintenance`.
    retained: Mutex<BTreeMap<u32, Arc<Segment>>>,
    recovery: RecoveryReport,
    /// Opened with [`Store::open_read_only`]: every write is refused, nothing is written.
    read_only: bool,
    _lock: DirLock,
}

struct IntervalSyncer {
    stop: Arc<(Mutex<bool>, Condvar)>,
    handle: Option<JoinHandle<()>>,
}

/// An open store: keyspaces of ordered byte keys to byte values in append-only, memory-mapped
/// segment files. `Send + Sync`; share it with `Arc` (one writer at a time, any number of
/// readers through [`Store::snapshot`]).
pub struct Store {
    shared: Arc<Shared>,
    syncer: Option<IntervalSyncer>,
    /// The last background checkpoint's thread, joined before the next starts and on close.
    checkpointer: Mutex<Option<JoinHandle<()>>>,
}

impl std::fmt::Debug for Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Store")
            .field("dir", &self.shared.dir)
            .field("options", &self.shared.options)
            .finish_non_exhaustive()
    }
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}
fn read<T>(lock: &RwLock<T>) -> RwLockReadGuard<'_, T> {
    lock.read()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}
fn write<T>(lock: &RwLock<T>) -> RwLockWriteGuard<'_, T> {
    lock.write()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Refuses options outside their ranges (segment size, live ratio, a zero sync interval).
fn check_options(options: &StoreOptions) -> Result<()> {
    if !(MIN_SEGMENT_SIZE..=MAX_SEGMENT_SIZE).contains(&options.segment_size) {
        return Err(Error::InvalidOptions(format!(
            "segment_size {} is outside {MIN_SEGMENT_SIZE}..={MAX_SEGMENT_SIZE}",
            options.segment_size
        )));
    }
    if !(0.0..=1.0).contains(&options.compaction_live_ratio) {
        return Err(Error::InvalidOptions(format!(
            "compaction_live_ratio {} is outside 0..=1",
            options.compaction_live_ratio
        )));
    }
    if let Durability::SyncInterval(interval) = options.durability
        && interval.is_zero()
    {
        return Err(Error::InvalidOptions(
            "sync interval must not be zero".into(),
        ));
    }
    Ok(())
}

/// Initialises a store in `dir` if it has no manifest (refused with segment files or read-only).
fn initialise_if_new(
    backend: &Arc<dyn Backend>,
    dir: &Path,
    segment_size: u64,
    read_only: bool,
) -> Result<()> {
    let names = backend
        .list_dir(dir)
        .map_err(|e| Error::io("list store directory", dir, e))?;
    if names.iter().any(|n| n == MANIFEST_FILE_NAME) {
        return Ok(());
    }

    let store_files: Vec<&String> = names
        .iter()
        .filter(|n| n.starts_with("seg-") || n.starts_with("ckpt-"))
        .collect();
    // A crash between creating the first segment and writing the first manifest leaves
    // exactly one segment with no frame (nothing can be committed before the manifest
    // exists): that is an interrupted creation, not a damaged store.
    let interrupted_creation = match store_files.as_slice() {
        [only] if **only == segment_file_name(1) => backend
            .read_file(&dir.join(segment_file_name(1)))
            .is_ok_and(|bytes| bytes.iter().skip(SEGMENT_HEADER_LEN).all(|&b| b == 0)),
        _ => false,
    };
    if !store_files.is_empty() && !interrupted_creation {
        return Err(Error::corrupt(
            dir.join(MANIFEST_FILE_NAME),
            0,
            "segment files exist but the manifest is missing (run repair)",
        ));
    }
    if read_only {
        return Err(Error::io(
            "open read-only",
            dir.join(MANIFEST_FILE_NAME),
            std::io::Error::new(
                std::io::ErrorKind::NotFound,
                "there is no database here (no manifest), and a read-only open creates none",
            ),
        ));
    }
    let available = backend
        .available_space(dir)
        .map_err(|e| Error::io("measure free space", dir, e))?;
    initialise(
        backend,
        dir,
        segment_size_for_space(segment_size, available),
    )?;
    Ok(())
}

/// Zeroes the torn tail between `head` and `dirty` (durably, unless read-only): the tail, if any.
fn drop_torn_tail(
    active: &Segment,
    head: usize,
    dirty: usize,
    read_only: bool,
) -> Result<Option<TornTail>> {
    if dirty <= head {
        return Ok(None);
    }
    if !read_only {
        let zeroes = vec![0u8; align_up(dirty - head).min(active.capacity() - head)];
        active.write_at(head, &zeroes)?;
        active.sync()?;
    }
    Ok(Some(TornTail {
        path: active.path.clone(),
        offset: head as u64,
        bytes_dropped: (dirty - head) as u64,
    }))
}

impl Store {
    /// Opens (or creates) the store in directory `dir` on the real file system.
    pub fn open(dir: impl AsRef<Path>, options: StoreOptions) -> Result<Store> {
        Store::open_with_backend(Arc::new(FileBackend), dir, options)
    }

    /// A fresh store in memory (through [`MemoryBackend`]), with 1 MiB segments. For tests.
    pub fn open_in_memory() -> Result<Store> {
        let options = StoreOptions {
            segment_size: 1 << 20,
            ..StoreOptions::default()
        };
        Store::open_with_backend(Arc::new(MemoryBackend::new()), "/spillway-memory", options)
    }

    /// Opens (or creates) the store in `dir` through `backend`.
    pub fn open_with_backend(
        backend: Arc<dyn Backend>,
        dir: impl AsRef<Path>,
        options: StoreOptions,
    ) -> Result<Store> {
        Store::open_as(backend, dir.as_ref(), options, Access::ReadWrite)
    }

    /// Opens the existing store in `dir` for reading only, as on read-only media: takes a
    /// shared lock (other read-only handles may open it too, a writer may not) and creates,
    /// deletes and changes nothing. Recovery happens in memory only: a torn tail is ignored
    /// (and reported) instead of zeroed, orphans are left alone. Every write, checkpoint and
    /// compaction fails with [`Error::ReadOnly`]. Damage fails the open as it does for
    /// [`Store::open`].
    pub fn open_read_only(dir: impl AsRef<Path>) -> Result<Store> {
        Store::open_read_only_with_backend(Arc::new(FileBackend), dir)
    }

    /// [`Store::open_read_only`] through `backend`.
    pub fn open_read_only_with_backend(
        backend: Arc<dyn Backend>,
        dir: impl AsRef<Path>,
    ) -> Result<Store> {
        Store::open_as(
            backend,
            dir.as_ref(),
            StoreOptions::default(),
            Access::ReadOnly,
        )
    }

    fn open_as(
        backend: Arc<dyn Backend>,
        dir: &Path,
        options: StoreOptions,
        access: Access,
    ) -> Result<Store> {
        let dir = dir.to_path_buf();
        let read_only = access == Access::ReadOnly;
        check_options(&options)?;
        if !read_only {
            backend
                .create_dir_all(&dir)
                .map_err(|e| Error::io("create store directory", &dir, e))?;
        }
        let locked = if read_only {
            backend.lock_dir_shared(&dir)
        } else {
            backend.lock_dir(&dir)
        };
        let dir_lock = locked.map_err(|e| Error::lock_failed(&dir, e))?;

        initialise_if_new(&backend, &dir, options.segment_size, read_only)?;

        // `load` changes nothing on disk: if it refuses (damage), the directory is untouched.
        let mut loaded = load(&backend, &dir, access)?;
        if !read_only {
            let orphans = remove_orphans(&backend, &dir, &loaded.manifest)?;
            loaded.report.orphans_removed = orphans;
        }

        // Drop a torn tail: zero everything after the end of the log so that a stale frame can
        // never be mistaken for a new one, and make the zeroes durable before appending. A
        // read-only handle appends nothing, so it only ignores the tail.
        let active_id = loaded.manifest.active_segment().id;
        let mut active = loaded
            .segments
            .remove(&active_id)
            .expect("active segment was opened");
        let head = loaded.active_head;
        let dirty = loaded.active_dirty_end;
        active.set_published(head);
        loaded.report.torn_tail = drop_torn_tail(&active, head, dirty, read_only)?;
        let active = Arc::new(active);
        let mut table: SegmentTable = loaded
            .segments
            .into_iter()
            .map(|(id, segment)| (id, Arc::new(segment)))
            .collect();
        table.insert(active_id, active.clone());
        // A manifest before version 3 does not know how far the active segment was written:
        // everything from `head` on is zero now (the whole segment was scanned and the torn
        // tail zeroed), so the first frame raises the limit from there and the manifest says it.
        let written_limit = match loaded.manifest.active_written_limit {
            0 => head,
            limit => usize::try_from(limit).unwrap_or(usize::MAX).max(head),
        };
        let last_seq = loaded.next_seq - 1;
        let live = loaded.live;
        let log_bytes = loaded.report.log_bytes_replayed;
        let shared = Arc::new(Shared {
            backend,
            dir,
            published: RwLock::new(Published {
                directory: loaded.directory,
                segments: Arc::new(table),
                seq: last_seq,
            }),
            writer: Mutex::new(Writer {
                active,
                head,
                written_limit,
                next_seq: loaded.next_seq,
                live,
                log_bytes,
            }),
            sync_state: Mutex::new(SyncState {
                synced_seq: last_seq,
                in_progress: false,
            }),
            sync_done: Condvar::new(),
            maintenance: Mutex::new(()),
            manifest: Mutex::new(loaded.manifest),
            poisoned: AtomicBool::new(false),
            poison_cause: Mutex::new(None),
            frames_written: AtomicU64::new(0),
            fsyncs: AtomicU64::new(0),
            bytes_written: AtomicU64::new(0),
            checkpointed_log_bytes: AtomicU64::new(0),
            next_checkpoint_at: AtomicU64::new(options.checkpoint_after_log_bytes),
            checkpointing: AtomicBool::new(false),
            basis: Mutex::new(loaded.basis),
            retained: Mutex::new(BTreeMap::new()),
            recovery: loaded.report,
            read_only,
            options,
            _lock: dir_lock,
        });
        let syncer = match shared.options.durability {
            Durability::SyncInterval(interval) => Some(spawn_syncer(&shared, interval)),
            _ => None,
        };
        let store = Store {
            shared,
            syncer,
            checkpointer: Mutex::new(None),
        };
        if !read_only && store.shared.recovery.checkpoint_fallback.is_some() {
            // Heals at once: a new checkpoint of the state just recovered replaces the damaged
            // one (deleted with it), and the fallback it names is the one this open used. If
            // that fails (a full disk), the store is open all the same: the damaged file stays
            // named until a later checkpoint succeeds, and `verify` reports it meanwhile.
            let _ = store.checkpoint();
        }
        Ok(store)
    }

    /// Salvages a damaged store in `dir`: finds every segment by its header, starts from the
    /// checkpoint if it is intact, applies every intact frame after it, skips damaged ones,
    /// drops keys whose value is damaged or gone, and rewrites the result as a fresh store
    /// whose old files are moved to a `repair-backup-<n>` directory. A store in which nothing
    /// is damaged is left as it is. The salvage rules are in `docs/file-format.md`.
    pub fn repair(dir: impl AsRef<Path>, options: StoreOptions) -> Result<RepairReport> {
        Store::repair_with_backend(Arc::new(FileBackend), dir, options)
    }

    /// [`Store::repair`] through `backend`.
    #[expect(
        clippy::needless_pass_by_value,
        reason = "same argument types as `open_with_backend`, so callers pass the same values"
    )]
    pub fn repair_with_backend(
        backend: Arc<dyn Backend>,
        dir: impl AsRef<Path>,
        options: StoreOptions,
    ) -> Result<RepairReport> {
        salvage::repair(&backend, dir.as_ref(), options.segment_size as usize)
    }

    /// The store directory.
    pub fn path(&self) -> &Path {
        &self.shared.dir
    }

    /// What opening the store found (checkpoint use, frames replayed, torn tail dropped).
    pub fn recovery_report(&self) -> &RecoveryReport {
        &self.shared.recovery
    }

    /// True if the store was opened with [`Store::open_read_only`].
    pub fn is_read_only(&self) -> bool {
        self.shared.read_only
    }

    /// True once a failed write or fsync has poisoned this handle.
    pub fn is_poisoned(&self) -> bool {
        self.shared.poisoned.load(Ordering::Acquire)
    }

    /// The id of keyspace `name`, creating it (durably, as one commit) if it does not exist.
    pub fn keyspace(&self, name: &str) -> Result<KeyspaceId> {
        if let Some(id) = self.keyspace_id(name) {
            return Ok(id);
        }
        if name.is_empty() || name.len() > 1024 {
            return Err(Error::InvalidKeyspaceName(name.to_owned()));
        }
        let shared = &self.shared;
        let mut writer = shared.lock_writer("create keyspace")?;
        let (existing, id) = {
            let published = read(&shared.published);
            (
                published.directory.names.get(name).copied(),
                published.directory.next_keyspace_id,
            )
        };
        if let Some(id) = existing {
            return Ok(KeyspaceId(id));
        }
        let mut batch = WriteBatch::new();
        encode_op(
            &mut batch.frame,
            OpKind::CreateKeyspace,
            id,
            name.as_bytes(),
            &[],
        );
        batch.op_count = 1;
        let seq = shared.append(&mut writer, batch)?;
        drop(writer);
        shared.wait_durable(seq)?;
        Ok(KeyspaceId(id))
    }

    /// The id of keyspace `name`, if it exists.
    pub fn keyspace_id(&self, name: &str) -> Option<KeyspaceId> {
        read(&self.shared.published)
            .directory
            .names
            .get(name)
            .map(|&id| KeyspaceId(id))
    }

    /// Every keyspace as (name, id), ordered by name.
    pub fn keyspaces(&self) -> Vec<(String, KeyspaceId)> {
        read(&self.shared.published)
            .directory
            .names
            .iter()
            .map(|(name, &id)| (name.to_string(), KeyspaceId(id)))
            .collect()
    }

    /// Drops keyspace `name` and all its keys in one commit. Returns false if it did not exist.
    pub fn drop_keyspace(&self, name: &str) -> Result<bool> {
        let Some(id) = self.keyspace_id(name) else {
            return Ok(false);
        };
        let mut batch = WriteBatch::new();
        batch.drop_keyspace(id);
        match self.commit(batch) {
            Ok(_) => Ok(true),
            // Dropped concurrently by another thread.
            Err(Error::UnknownKeyspace(_)) => Ok(false),
            Err(error) => Err(error),
        }
    }

    /// Commits `batch` atomically as one frame and returns its sequence number. With
    /// [`Durability::SyncEveryCommit`] the batch is durable when this returns. The batch is
    /// visible to new snapshots as soon as it is written (possibly just before its fsync).
    pub fn commit(&self, batch: WriteBatch) -> Result<u64> {
        if let Some((what, len)) = batch.oversized {
            return Err(Error::TooLarge {
                what,
                len,
                max: u64::from(u32::MAX),
            });
        }
        if batch.is_empty() {
            return Ok(read(&self.shared.published).seq);
        }
        let shared = &self.shared;
        let mut writer = shared.lock_writer("commit")?;
        let seq = shared.append(&mut writer, batch)?;
        let log_bytes = writer.log_bytes;
        drop(writer);
        shared.wait_durable(seq)?;
        if shared.options.checkpoint_after_log_bytes > 0
            && log_bytes >= shared.next_checkpoint_at.load(Ordering::Acquire)
        {
            self.checkpoint_in_background();
        }
        Ok(seq)
    }

    /// Starts a checkpoint on its own thread unless one is running: the commit that crossed
    /// the threshold returns at once, and commits go on while the directory is written (the
    /// checkpoint covers the log up to where it started).
    fn checkpoint_in_background(&self) {
        if self.shared.checkpointing.swap(true, Ordering::AcqRel) {
            return;
        }
        let mut slot = lock(&self.checkpointer);
        if let Some(finished) = slot.take() {
            let _ = finished.join();
        }
        let shared = self.shared.clone();
        let spawned = std::thread::Builder::new()
            .name("spillway-checkpoint".into())
            .spawn(move || {
                // A failure is retried after another interval of log; one that leaves the
                // durable state in doubt has poisoned the handle, which the next write reports.
                let _ = shared.checkpoint();
                shared.checkpointing.store(false, Ordering::Release);
            });
        match spawned {
            Ok(handle) => *slot = Some(handle),
            Err(_) => self.shared.checkpointing.store(false, Ordering::Release),
        }
    }

    /// A consistent read view of everything committed so far.
    pub fn snapshot(&self) -> Snapshot {
        let published = read(&self.shared.published);
        Snapshot {
            directory: published.directory.clone(),
            segments: published.segments.clone(),
            seq: published.seq,
        }
    }

    /// Reads one value into a new vector (a snapshot is better for more than one read).
    pub fn get(&self, keyspace: KeyspaceId, key: &[u8]) -> Result<Option<Vec<u8>>> {
        let published = read(&self.shared.published);
        let state = published
            .directory
            .keyspaces
            .get(&keyspace.as_u32())
            .ok_or(Error::UnknownKeyspace(keyspace))?;
        match state.get(key)? {
            Some(loc) => Ok(Some(read_value(&published.segments, &loc)?.to_vec())),
            None => Ok(None),
        }
    }

    /// Makes every commit so far durable (useful with the buffered durability modes). A no-op
    /// on a read-only handle.
    pub fn sync(&self) -> Result<()> {
        if self.shared.read_only {
            return Ok(());
        }
        let seq = lock(&self.shared.writer).next_seq - 1;
        self.shared.wait_durable_forced(seq)
    }

    /// Writes a checkpoint of the key directory, so that the next open replays only the log
    /// written after it.
    pub fn checkpoint(&self) -> Result<()> {
        self.shared.checkpoint()
    }

    /// Rewrites the live records of mostly-dead segments (sealing the active segment first if it
    /// is mostly dead too) into new segments and installs them with a new checkpoint and
    /// manifest. The old segments are kept for the fallback (the previous checkpoint may point
    /// into them) until the next checkpoint, which deletes them once no snapshot reads them.
    pub fn compact(&self) -> Result<CompactionReport> {
        let shared = &self.shared;
        let _maintenance = lock(&shared.maintenance);
        let mut report = CompactionReport::default();

        // 1. Seal the active segment if it would be a victim itself, and choose victims.
        let ratio = shared.options.compaction_live_ratio;
        let (victims, snapshot) = {
            let mut writer = shared.lock_writer("compact")?;
            let active_written = (writer.head - SEGMENT_HEADER_LEN) as f64;
            let active_live = writer.live.get(writer.active.id) as f64;
            if active_written > 0.0 && active_live < ratio * active_written {
                shared
                    .rotate(&mut writer, 0)
                    .inspect_err(|e| shared.poison(e))?;
            }
            let manifest = lock(&shared.manifest).clone();
            let active = writer.active.id;
            let mut victims = BTreeSet::new();
            // Segments retained for the fallback are not the current state's: nothing to copy,
            // and the next checkpoint deletes them.
            for entry in manifest
                .segments
                .iter()
                .filter(|s| s.id != active && !s.retained)
            {
                let written = entry.end.saturating_sub(SEGMENT_HEADER_LEN as u64);
                let live = writer.live.get(entry.id);
                if written > 0 && (live as f64) < ratio * written as f64 {
                    victims.insert(entry.id);
                    report.bytes_before += written;
                }
            }
            let published = read(&shared.published);
            (
                victims,
                Snapshot {
                    directory: published.directory.clone(),
                    segments: published.segments.clone(),
                    seq: published.seq,
                },
            )
        };
        if victims.is_empty() {
            return Ok(report);
        }

        // 2. Copy live records out of the victims (no lock held: the victims are immutable).
        let mut allocate = || shared.allocate_segment_id();
        let available = shared.backend.available_space(&shared.dir).unwrap_or(None);
        let mut output = CompactionOutput::new(
            &shared.backend,
            &shared.dir,
            segment_size_for_space(shared.options.segment_size, available),
            &mut allocate,
        );
        for (&keyspace_id, keyspace) in &snapshot.directory.keyspaces {
            for entry in keyspace.iter()? {
                let (key, loc) = entry?;
                if victims.contains(&loc.segment) {
                    let value = snapshot.value(&loc)?;
                    output.add(keyspace_id, &keyspace.name, key, value, loc)?;
                }
            }
        }
        let (written, moves) = output.finish()?;
        drop(snapshot);
        report.records_moved = moves.len() as u64;
        report.segments_written = written.iter().map(|s| s.id).collect();
        report.bytes_after = written
            .iter()
            .map(|s| (s.capacity() - SEGMENT_HEADER_LEN) as u64)
            .sum();
        report.segments_compacted = victims.iter().copied().collect();
        let written: Vec<Arc<Segment>> = written.into_iter().map(Arc::new).collect();

        // 3. Swap locations of records that did not change meanwhile, publish the new segments.
        let (directory, position, retired) = {
            let mut writer = shared.lock_writer("compact")?;
            let writer = &mut *writer;
            let mut published = write(&shared.published);
            let mut segments: SegmentTable = (*published.segments).clone();
            for segment in &written {
                segments.insert(segment.id, segment.clone());
            }
            // The copy above read every base block these lookups read; a check first all the
            // same, so that a damaged one fails the compaction before any move is applied.
            for moved in &moves {
                if let Some(keyspace) = published.directory.keyspaces.get(&moved.keyspace) {
                    keyspace.get(&moved.key)?;
                }
            }
            for moved in moves {
                if let Some(keyspace) = published.directory.keyspaces.get_mut(&moved.keyspace)
                    && keyspace.get(&moved.key)? == Some(moved.old)
                {
                    keyspace.put(&moved.key, moved.new)?;
                    writer.live.remove(&moved.key, &moved.old);
                    writer.live.add(&moved.key, &moved.new);
                }
            }
            let retired: Vec<Arc<Segment>> = victims
                .iter()
                .filter_map(|id| segments.remove(id))
                .collect();
            for id in &victims {
                writer.live.0.remove(id);
            }
            published.segments = Arc::new(segments);
            let directory = published.directory.clone();
            drop(published);
            if let Err(error) = shared.sync_segment(&writer.active) {
                shared.poison(&error);
                return Err(error);
            }
            (directory, LogPosition::of(writer), retired)
        };

        // 4. Checkpoint + manifest; only then may the old segments go.
        let written_entries: Vec<ManifestSegment> = written
            .iter()
            .map(|s| ManifestSegment::new(s.id, SegmentKind::Compacted, s.capacity() as u64))
            .collect();
        // The victims stay, retained: the new checkpoint's fallback (the checkpoint before it)
        // may point into them, and its replay may need their log frames. The next checkpoint,
        // whose fallback is this compaction's own, deletes them.
        let result = shared.install_checkpoint(&directory, position, |manifest| {
            for entry in &mut manifest.segments {
                if victims.contains(&entry.id) {
                    entry.retained = true;
                }
            }
            manifest.segments.extend(written_entries.iter().copied());
            manifest.segments.sort_by_key(|s| s.id);
        });
        if let Err(error) = result {
            // The in-memory directory already points into the new segments, which the durable
            // manifest does not list: refuse further writes rather than checkpoint that later.
            shared.poison(&error);
            return Err(error);
        }
        lock(&shared.retained).extend(retired.into_iter().map(|segment| (segment.id, segment)));
        Ok(report)
    }

    /// Reads every frame of every segment and every live value, checking checksums and
    /// structure, including that the unused tail of each segment is zero.
    pub fn verify(&self) -> Result<VerifyReport> {
        let snapshot = self.snapshot();
        let (active_id, head) = {
            let writer = lock(&self.shared.writer);
            (writer.active.id, writer.head)
        };
        let mut report = VerifyReport {
            torn_tail: self.shared.recovery.torn_tail.clone(),
            ..VerifyReport::default()
        };
        // Under the maintenance lock, so that no checkpoint replaces or deletes what is checked
        // meanwhile: the segments retained for the fallback (frames, as below), then the
        // checkpoint and the fallback checkpoint with the per-key checks an open leaves out
        // (key order, every value location), the fallback's over the segments it may point
        // into. A damaged fallback is damage: the store could not survive the loss of its
        // checkpoint.
        let manifest = {
            let _maintenance = lock(&self.shared.maintenance);
            let manifest = lock(&self.shared.manifest).clone();
            let current_segments = read(&self.shared.published).segments.clone();
            let mut segments: SegmentTable = (*current_segments).clone();
            let kept = lock(&self.shared.retained).clone();
            for entry in manifest.segments.iter().filter(|s| s.retained) {
                // Retained by this handle's compaction (mapped), or before its open (not).
                let segment = if let Some(segment) = kept.get(&entry.id) {
                    segment.clone()
                } else {
                    let opened = Segment::open(
                        &self.shared.backend,
                        &self.shared.dir,
                        entry.id,
                        entry.kind,
                        Access::ReadOnly,
                    );
                    match opened {
                        Ok(segment) => Arc::new(segment),
                        Err(error) => {
                            let path = self.shared.dir.join(segment_file_name(entry.id));
                            report.damage.push(Damage::of(error, path));
                            continue;
                        }
                    }
                };
                let end = usize::try_from(entry.end).unwrap_or(usize::MAX);
                verify_frames(&segment, end, segment.bytes().len(), &mut report);
                segments.insert(entry.id, segment);
            }
            // The current checkpoint may point only into the current state's segments, the
            // fallback into the retained ones too.
            let current_len = |id: u32| current_segments.get(&id).map(|s| s.capacity());
            let fallback_len = |id: u32| segments.get(&id).map(|s| s.capacity());
            let checkpoints: [(Option<u32>, &SegmentLen<'_>); 2] = [
                (manifest.checkpoint, &current_len),
                (manifest.fallback.checkpoint(), &fallback_len),
            ];
            for (id, segment_len) in checkpoints {
                let Some(id) = id else {
                    continue;
                };
                let path = self.shared.dir.join(checkpoint_file_name(id));
                let checked = checkpoint::open(
                    &self.shared.backend,
                    &path,
                    segment_len,
                    checkpoint::Checks::Thorough,
                );
                if let Err(error) = checked {
                    report.damage.push(Damage::of(error, path));
                }
            }
            manifest
        };
        for entry in manifest.segments.iter().filter(|s| !s.retained) {
            let Some(segment) = snapshot.segments.get(&entry.id) else {
                continue;
            };
            let bytes_len = segment.bytes().len();
            // Bytes after the end of the log must be zero (a sealed segment's slack, or the
            // not-yet-written part of the active one).
            let (end, tail_end) = if entry.id == active_id {
                (head, bytes_len.min(head))
            } else {
                (entry.end as usize, bytes_len)
            };
            verify_frames(segment, end, tail_end, &mut report);
        }
        // A damaged checkpoint block ends that keyspace's pass: the checkpoint's own check
        // above reported it already (unless it was damaged after that check).
        let report_damage = |error: Error, report: &mut VerifyReport| {
            if let Error::Corrupt {
                path,
                offset,
                reason,
            } = error
                && !report
                    .damage
                    .iter()
                    .any(|damage| damage.path == path && damage.offset == offset)
            {
                report.damage.push(Damage {
                    path,
                    offset,
                    reason,
                });
            }
        };
        for keyspace in snapshot.directory.keyspaces.values() {
            let entries = match keyspace.iter() {
                Ok(entries) => entries,
                Err(error) => {
                    report_damage(error, &mut report);
                    continue;
                }
            };
            for entry in entries {
                let loc = match entry {
                    Ok((_, loc)) => loc,
                    Err(error) => {
                        report_damage(error, &mut report);
                        break;
                    }
                };
                report.values_checked += 1;
                if let Err(Error::Corrupt {
                    path,
                    offset,
                    reason,
                }) = snapshot.value(&loc)
                {
                    report.damage.push(Damage {
                        path,
                        offset,
                        reason,
                    });
                }
            }
        }
        Ok(report)
    }

    /// Live and dead bytes per segment, keys per keyspace, and I/O counters.
    pub fn stats(&self) -> StoreStats {
        let shared = &self.shared;
        let writer = lock(&shared.writer);
        let manifest = lock(&shared.manifest).clone();
        let published = read(&shared.published);
        let kept = lock(&shared.retained).clone();
        let mut segments: Vec<SegmentStats> = manifest
            .segments
            .iter()
            .map(|entry| {
                let active = entry.id == writer.active.id;
                let end = if active {
                    writer.head as u64
                } else {
                    entry.end
                };
                let written_bytes = end.saturating_sub(SEGMENT_HEADER_LEN as u64);
                let live_bytes = writer.live.get(entry.id);
                SegmentStats {
                    id: entry.id,
                    kind: entry.kind,
                    active,
                    retained: entry.retained,
                    file_bytes: published
                        .segments
                        .get(&entry.id)
                        .or_else(|| kept.get(&entry.id))
                        .map_or(0, |s| s.capacity() as u64),
                    written_bytes,
                    live_bytes,
                    dead_bytes: written_bytes.saturating_sub(live_bytes),
                }
            })
            .collect();
        let keyspaces = published
            .directory
            .names
            .iter()
            .map(|(name, &id)| KeyspaceStats {
                name: name.to_string(),
                id: KeyspaceId(id),
                keys: published
                    .directory
                    .keyspaces
                    .get(&id)
                    .map_or(0, |k| k.len() as u64),
            })
            .collect();
        let last_seq = writer.next_seq - 1;
        let keys_in_memory = published.directory.overlay_len() as u64;
        let (checkpoint_blocks, checkpoint_blocks_checked) =
            published.directory.checkpoint_blocks();
        drop((writer, published));
        // Segments retained since before this handle's open are not mapped: ask the file
        // system, outside the locks.
        for segment in segments
            .iter_mut()
            .filter(|s| s.retained && s.file_bytes == 0)
        {
            let path = shared.dir.join(segment_file_name(segment.id));
            segment.file_bytes = shared
                .backend
                .open_file_read_only(&path)
                .and_then(|file| file.len())
                .unwrap_or(0);
        }
        StoreStats {
            segments,
            keyspaces,
            frames_written: shared.frames_written.load(Ordering::Relaxed),
            fsyncs: shared.fsyncs.load(Ordering::Relaxed),
            bytes_written: shared.bytes_written.load(Ordering::Relaxed),
            last_seq,
            keys_in_memory,
            checkpoint_blocks,
            checkpoint_blocks_checked,
        }
    }
}

/// The length of each segment that exists, by id (what checkpoint checks need).
type SegmentLen<'a> = dyn Fn(u32) -> Option<usize> + 'a;

/// Checks the frames of `segment` up to `end` (the end of its log) and that its bytes from
/// there to `tail_end` are zero, for [`Store::verify`].
fn verify_frames(segment: &Segment, end: usize, tail_end: usize, report: &mut VerifyReport) {
    let bytes = segment.bytes();
    let end = end.min(bytes.len());
    let mut offset = SEGMENT_HEADER_LEN;
    while offset < end {
        match decode_frame(&bytes[..end], offset) {
            Ok(FrameSlot::Frame(frame)) => {
                report.frames_checked += 1;
                offset += frame.len;
            }
            Ok(FrameSlot::Empty) => {
                report.damage.push(Damage {
                    path: segment.path.clone(),
                    offset: offset as u64,
                    reason: format!("zero frame header before the end of the log at {end}"),
                });
                break;
            }
            Err(error) => {
                report.damage.push(Damage {
                    path: segment.path.clone(),
                    offset: error.offset,
                    reason: error.reason,
                });
                break;
            }
        }
    }
    let dirty = dirty_end(&bytes[..tail_end.min(bytes.len())], end);
    if dirty > end {
        report.damage.push(Damage {
            path: segment.path.clone(),
            offset: end as u64,
            reason: format!("{} non-zero bytes after the end of the log", dirty - end),
        });
    }
}

fn spawn_syncer(shared: &Arc<Shared>, interval: Duration) -> IntervalSyncer {
    let stop = Arc::new((Mutex::new(false), Condvar::new()));
    let weak = Arc::downgrade(shared);
    let thread_stop = stop.clone();
    let handle = std::thread::Builder::new()
        .name("spillway-sync".into())
        .spawn(move || {
            let (flag, wake) = &*thread_stop;
            let mut stopped = lock(flag);
            loop {
                stopped = wake
                    .wait_timeout(stopped, interval)
                    .unwrap_or_else(std::sync::PoisonError::into_inner)
                    .0;
                if *stopped {
                    return;
                }
                let Some(shared) = weak.upgrade() else {
                    return;
                };
                let seq = lock(&shared.writer).next_seq - 1;
                // Errors poison the handle; the next commit reports them.
                let _ = shared.wait_durable_forced(seq);
            }
        })
        .expect("spawning the sync thread");
    IntervalSyncer {
        stop,
        handle: Some(handle),
    }
}

impl Drop for Store {
    fn drop(&mut self) {
        if let Some(syncer) = &mut self.syncer {
            *lock(&syncer.stop.0) = true;
            syncer.stop.1.notify_all();
            if let Some(handle) = syncer.handle.take() {
                let _ = handle.join();
            }
        }
        if let Some(checkpointer) = lock(&self.checkpointer).take() {
            let _ = checkpointer.join();
        }
        // Best effort: make buffered commits durable on a clean close, and spare the next
        // open the replay of a long log.
        if !self.is_poisoned() {
            let _ = self.sync();
            if self.shared.wants_close_checkpoint() {
                let _ = self.shared.checkpoint();
            }
        }
    }
}

impl Shared {
    fn check_poisoned(&self) -> Result<()> {
        if self.poisoned.load(Ordering::Acquire) {
            let cause = lock(&self.poison_cause).clone().unwrap_or_default();
            return Err(Error::Poisoned { cause });
        }
        Ok(())
    }

    fn poison(&self, error: &Error) {
        let mut cause = lock(&self.poison_cause);
        if cause.is_none() {
            *cause = Some(error.to_string());
        }
        self.poisoned.store(true, Ordering::Release);
        drop(cause);
        self.sync_done.notify_all();
    }

    fn lock_writer(&self, operation: &'static str) -> Result<MutexGuard<'_, Writer>> {
        if self.read_only {
            return Err(Error::ReadOnly {
                operation,
                path: self.dir.clone(),
            });
        }
        self.check_poisoned()?;
        let writer = lock(&self.writer);
        self.check_poisoned()?;
        Ok(writer)
    }

    fn allocate_segment_id(&self) -> u32 {
        let mut manifest = lock(&self.manifest);
        let id = manifest.next_segment_id;
        manifest.next_segment_id += 1;
        id
    }

    /// fsyncs a segment; a failure poisons the handle (the page cache can no longer be trusted).
    fn sync_segment(&self, segment: &Segment) -> Result<()> {
        self.fsyncs.fetch_add(1, Ordering::Relaxed);
        segment.sync().inspect_err(|error| self.poison(error))
    }

    /// Writes one frame and applies it. Any I/O failure poisons the handle.
    fn append(&self, writer: &mut Writer, mut batch: WriteBatch) -> Result<u64> {
        let frame_len = batch.frame.len();
        if frame_len as u64 > MAX_FRAME_LEN {
            return Err(Error::TooLarge {
                what: "batch",
                len: frame_len as u64,
                max: MAX_FRAME_LEN,
            });
        }
        let base_reads = {
            let published = read(&self.published);
            let ops = format::Frame {
                seq: 0,
                payload: &batch.frame[FRAME_HEADER_LEN..],
                len: frame_len,
            };
            published
                .directory
                .check_ops(ops.ops())
                .map_err(|id| Error::UnknownKeyspace(KeyspaceId(id)))?;
            // A damaged checkpoint block the apply would read fails the commit here, before
            // its frame is written; the locations read are handed to the apply, which then
            // does not search for them again.
            published.directory.check_base_reads(ops.ops())?
        };
        let seq = writer.next_seq;
        let mut hasher = crc32fast::Hasher::new();
        hasher.update(&batch.frame[FRAME_HEADER_LEN..]);
        seal_frame(&mut batch.frame, seq, batch.op_count, &hasher);
        if writer.head + frame_len > writer.active.capacity() {
            // Poisons the handle itself when the durable state is in doubt; a new segment that
            // could not be created (a full disk) changes nothing, so the handle stays usable.
            self.rotate(writer, frame_len)?;
        }
        if writer.head + frame_len > writer.written_limit {
            self.raise_written_limit(writer, writer.head + frame_len)?;
        }
        if let Err(error) = writer.active.write_at(writer.head, &batch.frame) {
            self.poison(&error);
            return Err(error);
        }
        let frame_offset = writer.head;
        writer.head += frame_len;
        writer.active.publish(writer.head);
        {
            let mut published = write(&self.published);
            let frame = format::Frame {
                seq,
                payload: &batch.frame[FRAME_HEADER_LEN..],
                len: frame_len,
            };
            let applied = published.directory.apply_ops_read(
                frame.ops(),
                &base_reads,
                writer.active.id,
                frame_offset + FRAME_HEADER_LEN,
                &mut writer.live,
            );
            if let Err(error) = applied {
                // Unreachable: `check_base_reads` read the same blocks under the writer lock.
                // The frame is written but not applied: the handle must not go on.
                self.poison(&error);
                return Err(error);
            }
            published.seq = seq;
        }
        writer.next_seq += 1;
        writer.log_bytes += frame_len as u64;
        self.frames_written.fetch_add(1, Ordering::Relaxed);
        self.bytes_written
            .fetch_add(frame_len as u64, Ordering::Relaxed);
        Ok(seq)
    }

    /// Makes the manifest's written limit of the active segment cover `end` before a frame
    /// is written up to there (see [`Manifest::active_written_limit`]): once per
    /// [`crate::format::WRITTEN_LIMIT_STEP`] of log. The new range is first written with
    /// zeroes and synced ([`Segment::write_zeroes`]: cheaper fsyncs for the frames that go
    /// there); no frame goes there before the new manifest is durable, so a failed manifest
    /// write or write of zeroes leaves the handle usable (whichever manifest a crash keeps,
    /// its limit covers every frame written), while a failed fsync poisons it.
    fn raise_written_limit(&self, writer: &mut Writer, end: usize) -> Result<()> {
        let limit = written_limit_for(end, writer.active.capacity());
        // Zeroes first, so that the frames' fsyncs find written blocks. Zeroes where zeroes
        // were change nothing, so a failed write of them (a full disk, on a file system that
        // could not preallocate) only fails this commit; a failed fsync poisons the handle,
        // as for a frame.
        writer
            .active
            .write_zeroes(writer.written_limit, limit as usize)?;
        self.sync_segment(&writer.active)?;
        let mut manifest = lock(&self.manifest);
        let mut next = manifest.clone();
        next.generation += 1;
        next.active_written_limit = limit;
        write_manifest(self.backend.as_ref(), &self.dir, &next)?;
        *manifest = next;
        writer.written_limit = limit as usize;
        Ok(())
    }

    /// Seals the active segment (fsync, end recorded in the manifest) and starts a new one
    /// big enough for a frame of `frame_len` bytes. A failed fsync or manifest write poisons
    /// the handle; a new segment that cannot be created (full disk) is deleted and leaves the
    /// active segment as it was.
    fn rotate(&self, writer: &mut Writer, frame_len: usize) -> Result<()> {
        self.sync_segment(&writer.active)?;
        // An unknown free space (the measure failed) leaves the configured size.
        let available = self.backend.available_space(&self.dir).unwrap_or(None);
        let capacity = segment_size_for_space(self.options.segment_size, available)
            .max(align_up(SEGMENT_HEADER_LEN + frame_len).next_multiple_of(4096));
        let id = self.allocate_segment_id();
        let segment = Arc::new(Segment::create(
            &self.backend,
            &self.dir,
            id,
            SegmentKind::Log,
            capacity,
        )?);
        self.backend
            .sync_dir(&self.dir)
            .map_err(|e| Error::io("fsync store directory", &self.dir, e))?;
        {
            let mut manifest = lock(&self.manifest);
            let mut next = manifest.clone();
            next.generation += 1;
            for entry in &mut next.segments {
                if entry.id == writer.active.id {
                    entry.end = writer.head as u64;
                }
            }
            next.segments.push(ManifestSegment::new(
                id,
                SegmentKind::Log,
                ACTIVE_SEGMENT_END,
            ));
            next.segments.sort_by_key(|s| s.id);
            // The new segment's limit already covers the frame that does not fit the old one.
            next.active_written_limit = written_limit_for(SEGMENT_HEADER_LEN + frame_len, capacity);
            if let Err(error) = write_manifest(self.backend.as_ref(), &self.dir, &next) {
                // The rename may or may not have happened: the durable state is unknown.
                self.poison(&error);
                return Err(error);
            }
            writer.written_limit = next.active_written_limit as usize;
            *manifest = next;
        }
        {
            let mut published = write(&self.published);
            let mut segments = (*published.segments).clone();
            segments.insert(id, segment.clone());
            published.segments = Arc::new(segments);
        }
        writer.active = segment;
        writer.head = SEGMENT_HEADER_LEN;
        Ok(())
    }

    /// Writes a checkpoint of the key directory at the end of the log (see
    /// [`Store::checkpoint`]).
    fn checkpoint(&self) -> Result<()> {
        let _maintenance = lock(&self.maintenance);
        let (directory, position) = {
            let writer = self.lock_writer("checkpoint")?;
            // The checkpoint refers to log bytes up to `head`: they must be durable first.
            self.sync_segment(&writer.active)?;
            let directory = read(&self.published).directory.clone();
            (directory, LogPosition::of(&writer))
        };
        let result = self.install_checkpoint(&directory, position, |_| {});
        if result.is_err() {
            let now = lock(&self.writer).log_bytes;
            self.next_checkpoint_at.store(
                now.saturating_add(self.options.checkpoint_after_log_bytes),
                Ordering::Release,
            );
        }
        result
    }

    /// Writes a checkpoint file for `directory` at `position`, then a manifest naming it and,
    /// as its fallback, the checkpoint the in-memory state derives from (after `edit` has
    /// adjusted the segment list), then deletes the old fallback checkpoint file and the
    /// segments retained for it. Callers hold `maintenance`.
    fn install_checkpoint(
        &self,
        directory: &Directory,
        position: LogPosition,
        edit: impl FnOnce(&mut Manifest),
    ) -> Result<()> {
        let serialise = |file: &dyn crate::backend::BackendFile| {
            checkpoint::write(
                file,
                directory,
                position.next_seq,
                position.segment,
                position.offset,
            )
        };
        let id = self.allocate_segment_id();
        let path = self.dir.join(checkpoint_file_name(id));
        // Written, fsynced, then opened and checked exactly as an open would (CRC, bytecheck,
        // semantics) before anything refers to it: the archive the directory will read in
        // place is the durable file, validated.
        let installed = write_checkpoint_file(self.backend.as_ref(), &self.dir, id, serialise)
            .and_then(|()| {
                let segments = read(&self.published).segments.clone();
                let segment_len = |id: u32| segments.get(&id).map(|s| s.capacity());
                checkpoint::open(
                    &self.backend,
                    &path,
                    &segment_len,
                    checkpoint::Checks::Thorough,
                )
            });
        let installed = match installed {
            Ok(installed) => installed,
            Err(error) => {
                let _ = self.backend.remove_file(&path);
                return Err(error);
            }
        };
        // The new checkpoint's fallback is the checkpoint the in-memory state derives from
        // (`basis`, normally the current one). Segments retained for the old fallback are
        // needed by neither: the new fallback was written after their compaction had moved
        // every key out of them, at a log position past them (see docs/file-format.md,
        // Checkpoints). So they, and the checkpoint files no longer named, go once the new
        // manifest is durable; `edit` (compaction) retains its own victims.
        let basis = *lock(&self.basis);
        let (stale_checkpoints, released) = {
            let mut manifest = lock(&self.manifest);
            let mut next = manifest.clone();
            next.generation += 1;
            next.checkpoint = Some(id);
            next.fallback = basis;
            let released: Vec<u32> = next
                .segments
                .iter()
                .filter(|s| s.retained)
                .map(|s| s.id)
                .collect();
            next.segments.retain(|s| !s.retained);
            edit(&mut next);
            if let Err(error) = write_manifest(self.backend.as_ref(), &self.dir, &next) {
                // The rename may or may not have happened: the durable state is unknown.
                self.poison(&error);
                return Err(error);
            }
            let previous = std::mem::replace(&mut *manifest, next);
            let mut stale: Vec<u32> = [previous.checkpoint, previous.fallback.checkpoint()]
                .into_iter()
                .flatten()
                .filter(|&old| basis.checkpoint() != Some(old))
                .collect();
            stale.dedup();
            (stale, released)
        };
        *lock(&self.basis) = Fallback::Checkpoint(id);
        // Serve the checkpointed keys from the new archive: the overlay keeps only what was
        // committed after the checkpoint's position (the same logical directory, so readers
        // see no change; snapshots taken before keep their own bases).
        {
            let mut published = write(&self.published);
            published.directory = published.directory.rebase(directory, &installed.directory);
        }
        // Best effort: a file left behind is an orphan that the next open deletes. Maps of a
        // deleted checkpoint stay valid for the snapshots that still read it.
        let deleted_any = !stale_checkpoints.is_empty() || !released.is_empty();
        for old in stale_checkpoints {
            let _ = self
                .backend
                .remove_file(&self.dir.join(checkpoint_file_name(old)));
        }
        let mut retained = lock(&self.retained);
        for id in released {
            match retained.remove(&id) {
                // Deleted when the last snapshot that maps it is dropped (now, if none does).
                Some(segment) => segment.retire(),
                // Retained before this handle's open, which did not map it.
                None => {
                    let _ = self
                        .backend
                        .remove_file(&self.dir.join(segment_file_name(id)));
                }
            }
        }
        drop(retained);
        if deleted_any {
            // Makes the space free for good, so that a crash does not bring the files back
            // as orphans for the next open to delete. Best effort, as the deletions.
            let _ = self.backend.sync_dir(&self.dir);
        }
        self.checkpointed_log_bytes
            .store(position.log_bytes, Ordering::Release);
        self.next_checkpoint_at.store(
            position
                .log_bytes
                .saturating_add(self.options.checkpoint_after_log_bytes),
            Ordering::Release,
        );
        Ok(())
    }

    /// Whether a clean close should write a checkpoint (see
    /// [`StoreOptions::checkpoint_after_log_bytes`]).
    fn wants_close_checkpoint(&self) -> bool {
        let interval = self.options.checkpoint_after_log_bytes;
        if interval == 0 || self.read_only || self.poisoned.load(Ordering::Acquire) {
            return false;
        }
        let since = lock(&self.writer)
            .log_bytes
            .saturating_sub(self.checkpointed_log_bytes.load(Ordering::Acquire));
        since >= interval.min(CLOSE_CHECKPOINT_MIN_BYTES)
    }

    fn wait_durable(&self, seq: u64) -> Result<()> {
        if self.options.durability == Durability::SyncEveryCommit {
            self.wait_durable_forced(seq)
        } else {
            Ok(())
        }
    }

    /// Group commit: waits until an fsync covering `seq` has completed, doing the fsync itself
    /// if nobody else is. One fsync covers every frame written before it started.
    fn wait_durable_forced(&self, seq: u64) -> Result<()> {
        let mut state = lock(&self.sync_state);
        loop {
            self.check_poisoned()?;
            if state.synced_seq >= seq {
                return Ok(());
            }
            if !state.in_progress {
                break;
            }
            state = self
                .sync_done
                .wait(state)
                .unwrap_or_else(std::sync::PoisonError::into_inner);
        }
        state.in_progress = true;
        drop(state);
        // Everything up to `target` is in `segment` or in sealed (already synced) segments.
        let (target, segment) = {
            let writer = lock(&self.writer);
            (writer.next_seq - 1, writer.active.clone())
        };
        let result = self.sync_segment(&segment);
        let mut state = lock(&self.sync_state);
        state.in_progress = false;
        match result {
            Ok(()) => state.synced_seq = state.synced_seq.max(target),
            Err(ref error) => self.poison(error),
        }
        drop(state);
        self.sync_done.notify_all();
        result?;
        self.check_poisoned()
    }
}

#[cfg(test)]
mod tests {
    //! A commit whose pre-read a checkpoint install overtakes, provoked on purpose: a backend
    //! holds the checkpoint at creating its file and the commit at writing its frame.

    use std::io;

    use super::*;
    use crate::backend::BackendFile;
    use crate::map::Map;

    /// An operation the [`Gate`] can hold.
    #[derive(Clone, Copy, Debug)]
    enum Hold {
        /// The creation of a checkpoint file (before the checkpoint reads the old base).
        CheckpointCreate = 0,
        /// A write to a segment (a commit's frame, after its pre-read).
        SegmentWrite = 1,
    }

    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    enum Stage {
        Armed,
        Waiting,
        Released,
    }

    /// Where an armed operation waits, once, until the test releases it.
    #[derive(Debug, Default)]
    struct Gate {
        stages: Mutex<[Option<Stage>; 2]>,
        changed: Condvar,
    }

    impl Gate {
        fn arm(&self, hold: Hold) {
            lock(&self.stages)[hold as usize] = Some(Stage::Armed);
        }

        /// Called by the operation: waits here if `hold` is armed, until it is released.
        fn pass(&self, hold: Hold) {
            let mut stages = lock(&self.stages);
            if stages[hold as usize] != Some(Stage::Armed) {
                return;
            }
            stages[hold as usize] = Some(Stage::Waiting);
            self.changed.notify_all();
            while stages[hold as usize] != Some(Stage::Released) {
                stages = self.changed.wait(stages).unwrap();
            }
            stages[hold as usize] = None;
        }

        fn wait_until_held(&self, hold: Hold) {
            let mut stages = lock(&self.stages);
            while stages[hold as usize] != Some(Stage::Waiting) {
                stages = self.changed.wait(stages).unwrap();
            }
        }

        fn release(&self, hold: Hold) {
            lock(&self.stages)[hold as usize] = Some(Stage::Released);
            self.changed.notify_all();
        }
    }

    /// A [`MemoryBackend`] whose files pass the [`Gate`].
    #[derive(Debug)]
    struct GatedBackend {
        inner: MemoryBackend,
        gate: Arc<Gate>,
    }

    #[derive(Debug)]
    struct GatedFile {
        inner: Arc<dyn BackendFile>,
        is_segment: bool,
        gate: Arc<Gate>,
    }

    impl GatedBackend {
        fn wrap(&self, path: &Path, file: Arc<dyn BackendFile>) -> Arc<dyn BackendFile> {
            let name = path.file_name().unwrap_or_default().to_string_lossy();
            Arc::new(GatedFile {
                inner: file,
                is_segment: name.starts_with("seg-"),
                gate: self.gate.clone(),
            })
        }
    }

    impl BackendFile for GatedFile {
        fn len(&self) -> io::Result<u64> {
            self.inner.len()
        }
        fn read_exact_at(&self, buf: &mut [u8], offset: u64) -> io::Result<()> {
            self.inner.read_exact_at(buf, offset)
        }
        fn write_all_at(&self, buf: &[u8], offset: u64) -> io::Result<()> {
            if self.is_segment {
                self.gate.pass(Hold::SegmentWrite);
            }
            self.inner.write_all_at(buf, offset)
        }
        fn set_len(&self, len: u64) -> io::Result<()> {
            self.inner.set_len(len)
        }
        fn allocate(&self, len: u64) -> io::Result<()> {
            self.inner.allocate(len)
        }
        fn sync_data(&self) -> io::Result<()> {
            self.inner.sync_data()
        }
        fn map(&self) -> io::Result<Map> {
            self.inner.map()
        }
        fn map_whole(&self) -> io::Result<Map> {
            self.inner.map_whole()
        }
    }

    impl Backend for GatedBackend {
        fn create_dir_all(&self, dir: &Path) -> io::Result<()> {
            self.inner.create_dir_all(dir)
        }
        fn lock_dir(&self, dir: &Path) -> io::Result<DirLock> {
            self.inner.lock_dir(dir)
        }
        fn lock_dir_shared(&self, dir: &Path) -> io::Result<DirLock> {
            self.inner.lock_dir_shared(dir)
        }
        fn open_file(&self, path: &Path) -> io::Result<Arc<dyn BackendFile>> {
            Ok(self.wrap(path, self.inner.open_file(path)?))
        }
        fn open_file_read_only(&self, path: &Path) -> io::Result<Arc<dyn BackendFile>> {
            Ok(self.wrap(path, self.inner.open_file_read_only(path)?))
        }
        fn create_file(&self, path: &Path) -> io::Result<Arc<dyn BackendFile>> {
            let name = path.file_name().unwrap_or_default().to_string_lossy();
            if name.starts_with("ckpt-") {
                self.gate.pass(Hold::CheckpointCreate);
            }
            Ok(self.wrap(path, self.inner.create_file(path)?))
        }
        fn read_file(&self, path: &Path) -> io::Result<Vec<u8>> {
            self.inner.read_file(path)
        }
        fn list_dir(&self, dir: &Path) -> io::Result<Vec<String>> {
            self.inner.list_dir(dir)
        }
        fn rename(&self, from: &Path, to: &Path) -> io::Result<()> {
            self.inner.rename(from, to)
        }
        fn remove_file(&self, path: &Path) -> io::Result<()> {
            self.inner.remove_file(path)
        }
        fn sync_dir(&self, dir: &Path) -> io::Result<()> {
            self.inner.sync_dir(dir)
        }
    }

    fn key(i: u32) -> Vec<u8> {
        format!("{i:07}-key").into_bytes()
    }

    /// The key count and every segment's live bytes, which a stale base location would throw
    /// off (the value's presence decides the count, its length the live bytes).
    fn figures(store: &Store) -> (u64, Vec<(u32, u64)>) {
        let stats = store.stats();
        let segments = stats
            .segments
            .iter()
            .map(|segment| (segment.id, segment.live_bytes))
            .collect();
        (stats.keyspaces[0].keys, segments)
    }

    /// The commit reads key locations in the old base while the checkpoint waits; the
    /// checkpoint is then installed (a new base, where the keys changed since the old one sit
    /// elsewhere or are absent) before the commit applies. The apply must search the new base
    /// instead of using what it read: the contents, the key count and the live bytes end as a
    /// reopen (which searches every key afresh) computes them.
    #[test]
    fn a_checkpoint_installed_between_a_commits_pre_read_and_its_apply() {
        const KEYS: u32 = 20_000;
        let dir = Path::new("/race");
        let inner = MemoryBackend::new();
        let options = StoreOptions {
            segment_size: 8 << 20,
            checkpoint_after_log_bytes: 0,
            ..StoreOptions::default()
        };
        {
            let store =
                Store::open_with_backend(Arc::new(inner.clone()), dir, options.clone()).unwrap();
            let ks = store.keyspace("k").unwrap();
            for chunk in 0..KEYS / 1000 {
                let mut batch = WriteBatch::new();
                for i in chunk * 1000..(chunk + 1) * 1000 {
                    batch.put(ks, &key(i), b"base");
                }
                store.commit(batch).unwrap();
            }
            store.checkpoint().unwrap();
        }
        let gate = Arc::new(Gate::default());
        let backend = GatedBackend {
            inner: inner.clone(),
            gate: gate.clone(),
        };
        let store =
            Arc::new(Store::open_with_backend(Arc::new(backend), dir, options.clone()).unwrap());
        let ks = store.keyspace_id("k").unwrap();
        // After the old base, before the checkpoint: the new base lacks key 1 and holds key
        // 2 at another location, with a longer value.
        let changed = [7u8; 100];
        let mut batch = WriteBatch::new();
        batch.delete(ks, &key(1)).put(ks, &key(2), &changed);
        store.commit(batch).unwrap();
        let stats = store.stats();
        assert!(
            stats.checkpoint_blocks_checked + 2 < stats.checkpoint_blocks,
            "the base must be read lazily, so that commits read ahead: {stats:?}"
        );

        gate.arm(Hold::CheckpointCreate);
        let checkpointer = {
            let store = store.clone();
            std::thread::spawn(move || store.checkpoint())
        };
        // It has taken its directory and released the writer; it has not read the old base.
        gate.wait_until_held(Hold::CheckpointCreate);
        gate.arm(Hold::SegmentWrite);
        let committer = {
            let store = store.clone();
            std::thread::spawn(move || {
                let mut batch = WriteBatch::new();
                batch
                    .put(ks, &key(1), b"back")
                    .delete(ks, &key(2))
                    .put(ks, &key(3), b"three");
                store.commit(batch)
            })
        };
        // The commit has read ahead in the old base and waits to write its frame.
        gate.wait_until_held(Hold::SegmentWrite);
        gate.release(Hold::CheckpointCreate);
        checkpointer.join().unwrap().unwrap();
        gate.release(Hold::SegmentWrite);
        committer.join().unwrap().unwrap();

        assert_eq!(
            store.get(ks, &key(1)).unwrap().as_deref(),
            Some(&b"back"[..])
        );
        assert_eq!(store.get(ks, &key(2)).unwrap(), None);
        assert_eq!(
            store.get(ks, &key(3)).unwrap().as_deref(),
            Some(&b"three"[..])
        );
        let raced = figures(&store);
        assert_eq!(raced.0, u64::from(KEYS) - 1);
        drop(store);
        let reopened = Store::open_with_backend(Arc::new(inner), dir, options).unwrap();
        assert_eq!(figures(&reopened), raced);
        assert!(reopened.verify().unwrap().is_clean());
    }
}
