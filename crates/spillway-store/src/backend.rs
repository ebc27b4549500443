//! The small I/O interface every byte the store reads or writes goes through.
//!
//! Two implementations: [`FileBackend`] (real files, `pwrite`, `fdatasync`, `fallocate`, `mmap`,
//! an `flock` on the store directory itself) and [`MemoryBackend`] (files in memory, with a
//! model of what survives a power loss, of allocated and sparse space, of read-only media, and
//! a [`FaultPlan`] that injects write, fsync and disk-full failures). Tests and upper layers use
//! the latter to simulate crashes deterministically.
//!
//! This module must never interpret file contents: formats live in `format` and `checkpoint`.
//! It must never map a page that has no disk block behind it (on tmpfs, touching such a page
//! of a full file system raises SIGBUS): callers [`BackendFile::allocate`] a file before they
//! map it for writing, and a read-only file that is not fully allocated is read into memory
//! instead of being mapped.

use std::any::Any;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::fs::{File, OpenOptions};
use std::io;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU8, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, RwLock};

use crate::map::Map;

/// An open file of a [`Backend`].
pub trait BackendFile: Send + Sync + fmt::Debug {
    /// Current length in bytes.
    fn len(&self) -> io::Result<u64>;
    /// True if the file is empty.
    fn is_empty(&self) -> io::Result<bool> {
        Ok(self.len()? == 0)
    }
    /// Reads exactly `buf.len()` bytes at `offset`.
    fn read_exact_at(&self, buf: &mut [u8], offset: u64) -> io::Result<()>;
    /// Writes all of `buf` at `offset` (a positional write; extends the file if needed).
    fn write_all_at(&self, buf: &[u8], offset: u64) -> io::Result<()>;
    /// Sets the length (extending with zeros, without reserving disk blocks).
    fn set_len(&self, len: u64) -> io::Result<()>;
    /// Reserves disk blocks for bytes `[0, len)`, extending the file to `len` if it is
    /// shorter, so that no page of it is a hole: a full disk fails here (`StorageFull`), never
    /// later on a write into that range or a touch of a mapped page. Contents are unchanged. A
    /// file system that cannot preallocate (no `fallocate`) leaves the file sparse; such file
    /// systems return zeroes for holes and report a full disk on the write.
    fn allocate(&self, len: u64) -> io::Result<()>;
    /// Makes the file's contents and length durable (`fdatasync`).
    fn sync_data(&self) -> io::Result<()>;
    /// Maps the whole file read-only at its current length.
    fn map(&self) -> io::Result<Map>;
    /// Like [`BackendFile::map`], for a map that is about to be read whole (a checkpoint's or
    /// segment's check at open): the file backend asks the kernel to map every page at once
    /// (`MAP_POPULATE`) instead of one fault at a time.
    fn map_whole(&self) -> io::Result<Map> {
        self.map()
    }
}

/// Opaque guard of a store directory's lock (exclusive or shared); dropping it releases it.
pub struct DirLock {
    _guard: Box<dyn Any + Send + Sync>,
}

impl fmt::Debug for DirLock {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("DirLock")
    }
}

/// File-system operations used by the store.
pub trait Backend: Send + Sync + fmt::Debug {
    /// Creates a directory and its parents.
    fn create_dir_all(&self, dir: &Path) -> io::Result<()>;
    /// Takes the exclusive lock of `dir`; fails with `ErrorKind::WouldBlock` if it is held
    /// (exclusively or shared). The lock must not depend on a file that can be deleted while
    /// it is held.
    fn lock_dir(&self, dir: &Path) -> io::Result<DirLock>;
    /// Takes a shared lock of `dir` (readers; creates nothing); fails with
    /// `ErrorKind::WouldBlock` if the exclusive lock is held.
    fn lock_dir_shared(&self, dir: &Path) -> io::Result<DirLock>;
    /// Opens an existing file for reading and writing.
    fn open_file(&self, path: &Path) -> io::Result<Arc<dyn BackendFile>>;
    /// Opens an existing file for reading only; its writes fail.
    fn open_file_read_only(&self, path: &Path) -> io::Result<Arc<dyn BackendFile>>;
    /// Creates a file (truncating any existing one) for reading and writing.
    fn create_file(&self, path: &Path) -> io::Result<Arc<dyn BackendFile>>;
    /// Reads a whole file.
    fn read_file(&self, path: &Path) -> io::Result<Vec<u8>> {
        let file = self.open_file(path)?;
        let len = usize::try_from(file.len()?)
            .map_err(|_| io::Error::new(io::ErrorKind::InvalidData, "file too large"))?;
        let mut bytes = vec![0u8; len];
        file.read_exact_at(&mut bytes, 0)?;
        Ok(bytes)
    }
    /// Names of the entries of a directory.
    fn list_dir(&self, dir: &Path) -> io::Result<Vec<String>>;
    /// Atomically renames a file (replacing `to`).
    fn rename(&self, from: &Path, to: &Path) -> io::Result<()>;
    /// Deletes a file.
    fn remove_file(&self, path: &Path) -> io::Result<()>;
    /// Makes the directory's entries (creations, renames, deletions) durable.
    fn sync_dir(&self, dir: &Path) -> io::Result<()>;
    /// Bytes still free for this process on the file system holding `dir` (`statvfs`'s
    /// available blocks), or `None` when unknown; new segments are sized to it.
    fn available_space(&self, _dir: &Path) -> io::Result<Option<u64>> {
        Ok(None)
    }
}

// ---------------------------------------------------------------------------------------------
// Real files

/// The file every writer also locks, for versions that locked only it.
const LOCK_FILE_NAME: &str = "LOCK";

/// How long a lock attempt waits for a holder to let go before it reports the lock as held.
///
/// A lock can look held for a moment after its holder closed it: `flock` belongs to the open
/// file, and a process that another thread of the holder's process is spawning shares that file
/// until its `exec` closes it. Reopening a database right after closing it, in a program that
/// also starts processes, would otherwise fail now and then. A real second holder is still
/// reported, this much later.
const LOCK_PATIENCE: std::time::Duration = std::time::Duration::from_millis(200);

/// `flock`, retried for up to [`LOCK_PATIENCE`]; a lock still held is `ErrorKind::WouldBlock`.
fn try_lock(file: &File, shared: bool) -> io::Result<()> {
    let started = std::time::Instant::now();
    let mut pause = std::time::Duration::from_millis(1);
    loop {
        let result = if shared {
            file.try_lock_shared()
        } else {
            file.try_lock()
        };
        match result {
            Ok(()) => return Ok(()),
            Err(std::fs::TryLockError::WouldBlock) if started.elapsed() < LOCK_PATIENCE => {
                std::thread::sleep(pause);
                pause = (pause * 2).min(std::time::Duration::from_millis(50));
            }
            Err(std::fs::TryLockError::WouldBlock) => {
                return Err(io::Error::new(
                    io::ErrorKind::WouldBlock,
                    "lock held by another process",
                ));
            }
            Err(std::fs::TryLockError::Error(error)) => return Err(error),
        }
    }
}

/// The backend for real files on a local file system.
#[derive(Debug, Default, Clone, Copy)]
pub struct FileBackend;

#[derive(Debug)]
struct RealFile {
    file: File,
    read_only: bool,
}

impl RealFile {
    /// Whether the file system holds a block for every byte of the file (a sparse file has
    /// fewer). Compressing file systems may under-count; the caller then only reads instead
    /// of mapping, which is slower but safe.
    fn fully_allocated(&self) -> io::Result<bool> {
        use std::os::unix::fs::MetadataExt;
        let metadata = self.file.metadata()?;
        Ok(metadata.blocks().saturating_mul(512) >= metadata.len())
    }
}

impl BackendFile for RealFile {
    fn len(&self) -> io::Result<u64> {
        Ok(self.file.metadata()?.len())
    }
    fn read_exact_at(&self, buf: &mut [u8], offset: u64) -> io::Result<()> {
        FileExt::read_exact_at(&self.file, buf, offset)
    }
    fn write_all_at(&self, buf: &[u8], offset: u64) -> io::Result<()> {
        FileExt::write_all_at(&self.file, buf, offset)
    }
    fn set_len(&self, len: u64) -> io::Result<()> {
        self.file.set_len(len)
    }
    fn allocate(&self, len: u64) -> io::Result<()> {
        allocate_file(&self.file, len)
    }
    fn sync_data(&self) -> io::Result<()> {
        self.file.sync_data()
    }
    fn map(&self) -> io::Result<Map> {
        if self.read_only && !self.fully_allocated()? {
            // A store opened read-only cannot allocate the holes of a sparse file (written
            // by an older version, or on read-only media): read it instead of mapping it.
            // `read` returns zeroes for holes without allocating, where a mapped page of a
            // hole on a full tmpfs would raise SIGBUS.
            let len = usize::try_from(self.file.metadata()?.len())
                .map_err(|_| io::Error::new(io::ErrorKind::InvalidData, "file too large"))?;
            let mut bytes = vec![0u8; len];
            FileExt::read_exact_at(&self.file, &mut bytes, 0)?;
            return Ok(Map::of_memory(atomic_buffer(bytes.into_iter())));
        }
        Map::of_file(&self.file, false)
    }
    fn map_whole(&self) -> io::Result<Map> {
        if self.read_only && !self.fully_allocated()? {
            return self.map();
        }
        Map::of_file(&self.file, true)
    }
}

#[cfg(any(target_os = "linux", target_os = "android"))]
fn allocate_file(file: &File, len: u64) -> io::Result<()> {
    use rustix::fs::{FallocateFlags, fallocate};
    use rustix::io::Errno;
    if len == 0 {
        return Ok(());
    }
    match fallocate(file, FallocateFlags::empty(), 0, len) {
        Ok(()) => Ok(()),
        // No preallocation on this file system: it stays sparse (see `BackendFile::allocate`).
        Err(errno) if errno == Errno::OPNOTSUPP || errno == Errno::NOSYS => Ok(()),
        Err(errno) => Err(errno.into()),
    }
}

#[cfg(not(any(target_os = "linux", target_os = "android")))]
fn allocate_file(file: &File, len: u64) -> io::Result<()> {
    // No `fallocate`: extend only (sparse); see `BackendFile::allocate`.
    if file.metadata()?.len() < len {
        file.set_len(len)?;
    }
    Ok(())
}

impl Backend for FileBackend {
    fn create_dir_all(&self, dir: &Path) -> io::Result<()> {
        std::fs::create_dir_all(dir)
    }

    fn lock_dir(&self, dir: &Path) -> io::Result<DirLock> {
        // The lock is on the directory itself, which cannot be deleted from under the holder
        // while it holds the store's files. `LOCK` is still created and locked too, so that
        // versions that only lock `LOCK` keep out while this handle is open.
        let directory = File::open(dir)?;
        try_lock(&directory, false)?;
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(dir.join(LOCK_FILE_NAME))?;
        try_lock(&file, false)?;
        Ok(DirLock {
            _guard: Box::new((directory, file)),
        })
    }

    fn lock_dir_shared(&self, dir: &Path) -> io::Result<DirLock> {
        let directory = File::open(dir)?;
        try_lock(&directory, true)?;
        Ok(DirLock {
            _guard: Box::new(directory),
        })
    }

    fn open_file(&self, path: &Path) -> io::Result<Arc<dyn BackendFile>> {
        let file = OpenOptions::new().read(true).write(true).open(path)?;
        Ok(Arc::new(RealFile {
            file,
            read_only: false,
        }))
    }

    fn open_file_read_only(&self, path: &Path) -> io::Result<Arc<dyn BackendFile>> {
        let file = File::open(path)?;
        Ok(Arc::new(RealFile {
            file,
            read_only: true,
        }))
    }

    fn create_file(&self, path: &Path) -> io::Result<Arc<dyn BackendFile>> {
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(true)
            .open(path)?;
        Ok(Arc::new(RealFile {
            file,
            read_only: false,
        }))
    }

    fn read_file(&self, path: &Path) -> io::Result<Vec<u8>> {
        std::fs::read(path)
    }

    fn list_dir(&self, dir: &Path) -> io::Result<Vec<String>> {
        let mut names = Vec::new();
        for entry in std::fs::read_dir(dir)? {
            let entry = entry?;
            if let Ok(name) = entry.file_name().into_string() {
                names.push(name);
            }
        }
        names.sort();
        Ok(names)
    }

    fn rename(&self, from: &Path, to: &Path) -> io::Result<()> {
        std::fs::rename(from, to)
    }

    fn remove_file(&self, path: &Path) -> io::Result<()> {
        std::fs::remove_file(path)
    }

    fn sync_dir(&self, dir: &Path) -> io::Result<()> {
        File::open(dir)?.sync_all()
    }
    fn available_space(&self, dir: &Path) -> io::Result<Option<u64>> {
        let stats = rustix::fs::statvfs(dir)?;
        Ok(Some(stats.f_bavail.saturating_mul(stats.f_frsize)))
    }
}

// ---------------------------------------------------------------------------------------------
// In-memory files with crash simulation and fault injection

/// Failures a [`MemoryBackend`] injects. Call numbers count from 1 over the whole backend.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FaultPlan {
    /// The Nth call of `write_all_at` fails (later calls succeed again).
    pub fail_write_at: Option<u64>,
    /// The failing write first writes the first half of its bytes (a torn write).
    pub tear_failed_write: bool,
    /// The Nth call of `sync_data` or `sync_dir` fails and makes nothing durable.
    pub fail_sync_at: Option<u64>,
    /// Once this many bytes of space have been used in total, writes that need more fail
    /// with "no space left on device" (`ErrorKind::StorageFull`) after writing what still
    /// fits, and so does `allocate` (allocating nothing). Space is used by `allocate` and by
    /// writes past a file's allocated part; writes inside it need none, as on a real disk.
    pub no_space_after_bytes: Option<u64>,
}

/// Counters of a [`MemoryBackend`]'s calls so far.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FaultCounters {
    /// Calls of `write_all_at`.
    pub writes: u64,
    /// Calls of `sync_data` and `sync_dir`.
    pub syncs: u64,
    /// Bytes written.
    pub bytes_written: u64,
    /// Bytes of space used (see [`FaultPlan::no_space_after_bytes`]).
    pub space_used: u64,
}

/// What a simulated power loss keeps of the data written since the last fsync.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CrashMode {
    /// Nothing: every file reverts to its last synced contents, the directory to its last
    /// synced entries.
    LoseUnsynced,
    /// Each 512-byte sector written since the last sync survives or not at random (seeded),
    /// as when the page cache writes pages back in any order before the power goes.
    TearUnsynced {
        /// Seed of the sector choice.
        seed: u64,
    },
}

#[derive(Debug, Default)]
struct Faults {
    plan: Mutex<FaultPlan>,
    writes: AtomicU64,
    syncs: AtomicU64,
    bytes_written: AtomicU64,
    space_used: AtomicU64,
}

fn simulated(kind: io::ErrorKind, message: &str) -> io::Error {
    io::Error::new(kind, format!("simulated fault: {message}"))
}

fn no_space() -> io::Error {
    simulated(io::ErrorKind::StorageFull, "no space left on device")
}

fn read_only_media() -> io::Error {
    simulated(io::ErrorKind::ReadOnlyFilesystem, "read-only file system")
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl Faults {
    fn plan(&self) -> FaultPlan {
        lock(&self.plan).clone()
    }

    /// How many bytes of a write of `len` bytes may go through, and the error to return after.
    /// The first `already_allocated` bytes of the write need no new space.
    fn admit_write(&self, len: usize, already_allocated: usize) -> (usize, Option<io::Error>) {
        let call = self.writes.fetch_add(1, Ordering::SeqCst) + 1;
        let plan = self.plan();
        if plan.fail_write_at == Some(call) {
            let torn = if plan.tear_failed_write { len / 2 } else { 0 };
            return (torn, Some(simulated(io::ErrorKind::Other, "write failed")));
        }
        let already_allocated = already_allocated.min(len);
        let needed = (len - already_allocated) as u64;
        if let Some(limit) = plan.no_space_after_bytes {
            let room = limit.saturating_sub(self.space_used.load(Ordering::SeqCst));
            if needed > room {
                self.space_used.fetch_add(room, Ordering::SeqCst);
                return (already_allocated + room as usize, Some(no_space()));
            }
        }
        self.space_used.fetch_add(needed, Ordering::SeqCst);
        (len, None)
    }

    /// Takes `needed` bytes of space, or none if they do not fit.
    fn admit_allocation(&self, needed: u64) -> io::Result<()> {
        if let Some(limit) = self.plan().no_space_after_bytes {
            let room = limit.saturating_sub(self.space_used.load(Ordering::SeqCst));
            if needed > room {
                return Err(no_space());
            }
        }
        self.space_used.fetch_add(needed, Ordering::SeqCst);
        Ok(())
    }

    fn admit_sync(&self) -> io::Result<()> {
        let call = self.syncs.fetch_add(1, Ordering::SeqCst) + 1;
        if self.plan().fail_sync_at == Some(call) {
            return Err(simulated(io::ErrorKind::Other, "fsync failed"));
        }
        Ok(())
    }
}

struct MemoryFile {
    /// Current contents. Replaced (never resized in place) when the length changes, which is
    /// refused while a map holds the buffer.
    bytes: RwLock<Arc<[AtomicU8]>>,
    /// Contents as of the last successful `sync_data`.
    durable: Mutex<Vec<u8>>,
    /// Length of the prefix that has disk blocks (written or allocated); the rest is a hole.
    allocated: AtomicUsize,
    faults: Arc<Faults>,
}

impl fmt::Debug for MemoryFile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MemoryFile")
            .field("len", &self.current().len())
            .finish_non_exhaustive()
    }
}

fn atomic_buffer(bytes: impl ExactSizeIterator<Item = u8>) -> Arc<[AtomicU8]> {
    bytes.map(AtomicU8::new).collect()
}

impl MemoryFile {
    fn new(contents: &[u8], faults: Arc<Faults>) -> MemoryFile {
        MemoryFile {
            bytes: RwLock::new(atomic_buffer(contents.iter().copied())),
            durable: Mutex::new(contents.to_vec()),
            allocated: AtomicUsize::new(contents.len()),
            faults,
        }
    }

    fn current(&self) -> Arc<[AtomicU8]> {
        self.bytes
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }

    fn snapshot(&self) -> Vec<u8> {
        self.current()
            .iter()
            .map(|b| b.load(Ordering::Relaxed))
            .collect()
    }

    fn resize(&self, new_len: usize) -> io::Result<()> {
        let mut guard = self
            .bytes
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if guard.len() == new_len {
            return Ok(());
        }
        if Arc::strong_count(&guard) > 1 {
            return Err(io::Error::new(
                io::ErrorKind::Unsupported,
                "cannot resize an in-memory file while it is mapped",
            ));
        }
        let old = guard.clone();
        *guard = atomic_buffer(
            (0..new_len).map(|i| old.get(i).map_or(0, |b| b.load(Ordering::Relaxed))),
        );
        self.allocated.fetch_min(new_len, Ordering::SeqCst);
        Ok(())
    }
}

impl BackendFile for MemoryFile {
    fn len(&self) -> io::Result<u64> {
        Ok(self.current().len() as u64)
    }

    fn read_exact_at(&self, buf: &mut [u8], offset: u64) -> io::Result<()> {
        let bytes = self.current();
        let start = usize::try_from(offset).unwrap_or(usize::MAX);
        let source = start
            .checked_add(buf.len())
            .and_then(|end| bytes.get(start..end))
            .ok_or_else(|| io::Error::from(io::ErrorKind::UnexpectedEof))?;
        for (out, byte) in buf.iter_mut().zip(source) {
            *out = byte.load(Ordering::Relaxed);
        }
        Ok(())
    }

    fn write_all_at(&self, buf: &[u8], offset: u64) -> io::Result<()> {
        let start = usize::try_from(offset)
            .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "offset too large"))?;
        let allocated = self.allocated.load(Ordering::SeqCst);
        let (admitted, error) = self
            .faults
            .admit_write(buf.len(), allocated.saturating_sub(start));
        let buf = &buf[..admitted];
        let end = start + buf.len();
        if end > self.current().len() {
            self.resize(end)?;
        }
        let bytes = self.current();
        for (target, &byte) in bytes[start..end].iter().zip(buf) {
            target.store(byte, Ordering::Relaxed);
        }
        if start <= allocated {
            // Contiguous with the allocated prefix; a write past a hole leaves the hole (and
            // counts the file as sparse from there, which is conservative).
            self.allocated.fetch_max(end, Ordering::SeqCst);
        }
        self.faults
            .bytes_written
            .fetch_add(buf.len() as u64, Ordering::SeqCst);
        error.map_or(Ok(()), Err)
    }

    fn set_len(&self, len: u64) -> io::Result<()> {
        let len = usize::try_from(len)
            .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "length too large"))?;
        self.resize(len)
    }

    fn allocate(&self, len: u64) -> io::Result<()> {
        let len = usize::try_from(len)
            .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "length too large"))?;
        let allocated = self.allocated.load(Ordering::SeqCst);
        self.faults
            .admit_allocation(len.saturating_sub(allocated) as u64)?;
        if len > self.current().len() {
            self.resize(len)?;
        }
        self.allocated.fetch_max(len, Ordering::SeqCst);
        Ok(())
    }

    fn sync_data(&self) -> io::Result<()> {
        self.faults.admit_sync()?;
        let snapshot = self.snapshot();
        *lock(&self.durable) = snapshot;
        Ok(())
    }

    fn map(&self) -> io::Result<Map> {
        // A real map of a hole can raise SIGBUS on a full tmpfs: refuse, so that every test on
        // this backend proves no code path maps a file before allocating it.
        let bytes = self.current();
        let allocated = self.allocated.load(Ordering::SeqCst);
        if allocated < bytes.len() {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!(
                    "in-memory file has no blocks past offset {allocated} of {}: mapping it could raise SIGBUS on a full file system",
                    bytes.len()
                ),
            ));
        }
        Ok(Map::of_memory(bytes))
    }
}

/// A [`MemoryFile`] opened read-only: every change is refused.
#[derive(Debug)]
struct ReadOnlyMemoryFile(Arc<MemoryFile>);

fn opened_read_only() -> io::Error {
    io::Error::new(io::ErrorKind::PermissionDenied, "file was opened read-only")
}

impl BackendFile for ReadOnlyMemoryFile {
    fn len(&self) -> io::Result<u64> {
        self.0.len()
    }
    fn read_exact_at(&self, buf: &mut [u8], offset: u64) -> io::Result<()> {
        self.0.read_exact_at(buf, offset)
    }
    fn write_all_at(&self, _buf: &[u8], _offset: u64) -> io::Result<()> {
        Err(opened_read_only())
    }
    fn set_len(&self, _len: u64) -> io::Result<()> {
        Err(opened_read_only())
    }
    fn allocate(&self, _len: u64) -> io::Result<()> {
        Err(opened_read_only())
    }
    fn sync_data(&self) -> io::Result<()> {
        Ok(())
    }
    fn map(&self) -> io::Result<Map> {
        self.0.map()
    }
}

#[derive(Debug, Default)]
struct Namespace {
    files: BTreeMap<PathBuf, Arc<MemoryFile>>,
    durable_files: BTreeMap<PathBuf, Arc<MemoryFile>>,
    dirs: BTreeSet<PathBuf>,
    /// Locked directories: `None` for the exclusive lock, `Some(n)` for `n` shared holders.
    locked: BTreeMap<PathBuf, Option<usize>>,
}

#[derive(Debug, Default)]
struct MemoryState {
    namespace: Mutex<Namespace>,
    faults: Arc<Faults>,
    /// Every change to the namespace or a file opened for writing fails, as on read-only media.
    read_only: AtomicBool,
}

/// Files in memory, for tests: crash simulation ([`MemoryBackend::crash`]) and fault injection
/// ([`FaultPlan`]). Clones share the same files.
#[derive(Clone, Debug, Default)]
pub struct MemoryBackend {
    state: Arc<MemoryState>,
}

fn not_found(path: &Path) -> io::Error {
    io::Error::new(
        io::ErrorKind::NotFound,
        format!("{} does not exist", path.display()),
    )
}

impl MemoryBackend {
    /// An empty backend with no faults planned.
    pub fn new() -> MemoryBackend {
        MemoryBackend::default()
    }

    /// Replaces the fault plan (call counters keep counting).
    pub fn set_faults(&self, plan: FaultPlan) {
        *lock(&self.state.faults.plan) = plan;
    }

    /// Calls made so far.
    pub fn counters(&self) -> FaultCounters {
        let faults = &self.state.faults;
        FaultCounters {
            writes: faults.writes.load(Ordering::SeqCst),
            syncs: faults.syncs.load(Ordering::SeqCst),
            bytes_written: faults.bytes_written.load(Ordering::SeqCst),
            space_used: faults.space_used.load(Ordering::SeqCst),
        }
    }

    /// Makes the backend behave like read-only media (`true`) or writable again: creating,
    /// renaming, deleting and opening files for writing fail with
    /// `ErrorKind::ReadOnlyFilesystem`, and so does the exclusive lock (its `LOCK` file cannot
    /// be created). Files opened earlier are not affected.
    pub fn set_read_only(&self, read_only: bool) {
        self.state.read_only.store(read_only, Ordering::SeqCst);
    }

    fn check_writable(&self) -> io::Result<()> {
        if self.state.read_only.load(Ordering::SeqCst) {
            return Err(read_only_media());
        }
        Ok(())
    }

    /// Simulates a power loss: returns a new backend holding what would be on the disk after a
    /// reboot (no locks, no faults planned). `self` is left untouched and can keep running.
    pub fn crash(&self, mode: CrashMode) -> MemoryBackend {
        let namespace = lock(&self.state.namespace);
        let faults = Arc::new(Faults::default());
        let mut rng = match mode {
            CrashMode::LoseUnsynced => 0,
            CrashMode::TearUnsynced { seed } => seed | 1,
        };
        let mut files = BTreeMap::new();
        for (path, file) in &namespace.durable_files {
            let mut contents = lock(&file.durable).clone();
            if let CrashMode::TearUnsynced { .. } = mode {
                let current = file.snapshot();
                let shared = contents.len().min(current.len());
                for sector_start in (0..shared).step_by(512) {
                    let sector_end = (sector_start + 512).min(shared);
                    if contents[sector_start..sector_end] != current[sector_start..sector_end] {
                        // xorshift64: deterministic per seed.
                        rng ^= rng << 13;
                        rng ^= rng >> 7;
                        rng ^= rng << 17;
                        if rng & 1 == 1 {
                            contents[sector_start..sector_end]
                                .copy_from_slice(&current[sector_start..sector_end]);
                        }
                    }
                }
            }
            files.insert(
                path.clone(),
                Arc::new(MemoryFile::new(&contents, faults.clone())),
            );
        }
        let state = MemoryState {
            namespace: Mutex::new(Namespace {
                durable_files: files.clone(),
                files,
                dirs: namespace.dirs.clone(),
                locked: BTreeMap::new(),
            }),
            faults,
            read_only: AtomicBool::new(false),
        };
        MemoryBackend {
            state: Arc::new(state),
        }
    }

    /// The current contents of a file (for tests that damage files on purpose).
    pub fn file_contents(&self, path: &Path) -> io::Result<Vec<u8>> {
        let namespace = lock(&self.state.namespace);
        let file = namespace.files.get(path).ok_or_else(|| not_found(path))?;
        Ok(file.snapshot())
    }

    /// Replaces a file's contents, current and durable (for tests that damage files on purpose).
    /// Fails if the file is mapped and the length changes.
    pub fn overwrite_file(&self, path: &Path, contents: &[u8]) -> io::Result<()> {
        let namespace = lock(&self.state.namespace);
        let file = namespace.files.get(path).ok_or_else(|| not_found(path))?;
        file.resize(contents.len())?;
        for (target, &byte) in file.current().iter().zip(contents) {
            target.store(byte, Ordering::Relaxed);
        }
        *lock(&file.durable) = contents.to_vec();
        Ok(())
    }

    fn lookup(&self, path: &Path) -> io::Result<Arc<MemoryFile>> {
        lock(&self.state.namespace)
            .files
            .get(path)
            .cloned()
            .ok_or_else(|| not_found(path))
    }
}

struct MemoryLock {
    state: Arc<MemoryState>,
    dir: PathBuf,
}

impl Drop for MemoryLock {
    fn drop(&mut self) {
        let mut namespace = lock(&self.state.namespace);
        match namespace.locked.get(&self.dir).copied() {
            Some(Some(holders)) if holders > 1 => {
                namespace.locked.insert(self.dir.clone(), Some(holders - 1));
            }
            _ => {
                namespace.locked.remove(&self.dir);
            }
        }
    }
}

impl MemoryBackend {
    fn lock_dir_as(&self, dir: &Path, shared: bool) -> io::Result<DirLock> {
        let mut namespace = lock(&self.state.namespace);
        if !namespace.dirs.contains(dir) {
            return Err(not_found(dir));
        }
        let next = match (namespace.locked.get(dir).copied(), shared) {
            (None, false) => None,
            (None, true) => Some(1),
            (Some(Some(holders)), true) => Some(holders + 1),
            _ => {
                return Err(io::Error::new(
                    io::ErrorKind::WouldBlock,
                    "lock held by another handle",
                ));
            }
        };
        namespace.locked.insert(dir.to_path_buf(), next);
        Ok(DirLock {
            _guard: Box::new(MemoryLock {
                state: self.state.clone(),
                dir: dir.to_path_buf(),
            }),
        })
    }
}

impl Backend for MemoryBackend {
    fn create_dir_all(&self, dir: &Path) -> io::Result<()> {
        let mut namespace = lock(&self.state.namespace);
        if !namespace.dirs.contains(dir) {
            self.check_writable()?;
            namespace.dirs.insert(dir.to_path_buf());
        }
        Ok(())
    }

    fn lock_dir(&self, dir: &Path) -> io::Result<DirLock> {
        self.check_writable()?;
        self.lock_dir_as(dir, false)
    }

    fn lock_dir_shared(&self, dir: &Path) -> io::Result<DirLock> {
        self.lock_dir_as(dir, true)
    }

    fn open_file(&self, path: &Path) -> io::Result<Arc<dyn BackendFile>> {
        self.check_writable()?;
        Ok(self.lookup(path)?)
    }

    fn open_file_read_only(&self, path: &Path) -> io::Result<Arc<dyn BackendFile>> {
        Ok(Arc::new(ReadOnlyMemoryFile(self.lookup(path)?)))
    }

    fn read_file(&self, path: &Path) -> io::Result<Vec<u8>> {
        Ok(self.lookup(path)?.snapshot())
    }

    fn create_file(&self, path: &Path) -> io::Result<Arc<dyn BackendFile>> {
        self.check_writable()?;
        let mut namespace = lock(&self.state.namespace);
        let parent = path.parent().unwrap_or(Path::new(""));
        if !namespace.dirs.contains(parent) {
            return Err(not_found(parent));
        }
        let file = Arc::new(MemoryFile::new(&[], self.state.faults.clone()));
        namespace.files.insert(path.to_path_buf(), file.clone());
        Ok(file)
    }

    fn list_dir(&self, dir: &Path) -> io::Result<Vec<String>> {
        let namespace = lock(&self.state.namespace);
        if !namespace.dirs.contains(dir) {
            return Err(not_found(dir));
        }
        let mut names: Vec<String> = namespace
            .files
            .keys()
            .filter(|path| path.parent() == Some(dir))
            .filter_map(|path| path.file_name()?.to_str().map(str::to_owned))
            .collect();
        names.extend(
            namespace
                .dirs
                .iter()
                .filter(|path| path.parent() == Some(dir))
                .filter_map(|path| path.file_name()?.to_str().map(str::to_owned)),
        );
        names.sort();
        Ok(names)
    }

    fn rename(&self, from: &Path, to: &Path) -> io::Result<()> {
        self.check_writable()?;
        let mut namespace = lock(&self.state.namespace);
        let file = namespace
            .files
            .remove(from)
            .ok_or_else(|| not_found(from))?;
        namespace.files.insert(to.to_path_buf(), file);
        Ok(())
    }

    fn remove_file(&self, path: &Path) -> io::Result<()> {
        self.check_writable()?;
        lock(&self.state.namespace)
            .files
            .remove(path)
            .map(|_| ())
            .ok_or_else(|| not_found(path))
    }

    fn sync_dir(&self, dir: &Path) -> io::Result<()> {
        self.state.faults.admit_sync()?;
        let mut namespace = lock(&self.state.namespace);
        let namespace = &mut *namespace;
        namespace
            .durable_files
            .retain(|path, _| path.parent() != Some(dir));
        for (path, file) in &namespace.files {
            if path.parent() == Some(dir) {
                namespace.durable_files.insert(path.clone(), file.clone());
            }
        }
        Ok(())
    }
    fn available_space(&self, _dir: &Path) -> io::Result<Option<u64>> {
        // The allocated-space model: what `no_space_after_bytes` leaves, if it is set.
        let faults = &self.state.faults;
        Ok(faults
            .plan()
            .no_space_after_bytes
            .map(|limit| limit.saturating_sub(faults.space_used.load(Ordering::SeqCst))))
    }
}
