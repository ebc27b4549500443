//! Mapped backend files, and the rule that makes reading them sound.
//!
//! Together with `map` this is the only code of the crate that contains `unsafe` (see
//! `UNSAFE.md` at the repository root for the whole argument). It owns two things:
//!
//! - [`MappedFile`]: a backend file plus its [`Map`] plus a *published length*. Bytes below
//!   the published length are immutable: [`MappedFile::write_at`] refuses to write there and
//!   the length only ever grows while the file is shared (lowering it needs `&mut self`). Only
//!   published bytes can be borrowed, so no `&[u8]` handed out by this module ever observes a
//!   write.
//! - [`MappedArchive`]: a validated `rkyv` archive inside a mapped, immutable file.
//!
//! This module must never write through a map, never shrink a mapped file, and never hand out
//! a slice that reaches past the published length.

use std::fmt;
use std::io;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use crate::backend::BackendFile;
use crate::map::Map;

/// A backend file, its map, and the published length below which its bytes never change.
#[derive(Debug)]
pub(crate) struct MappedFile {
    file: Arc<dyn BackendFile>,
    map: Map,
    published: AtomicUsize,
}

impl MappedFile {
    /// Maps `file`. Every byte of the file counts as published: the caller owns the new value
    /// exclusively and lowers the published length with [`MappedFile::set_published`] before
    /// anything writes to the file.
    pub(crate) fn new(file: Arc<dyn BackendFile>) -> io::Result<MappedFile> {
        let map = file.map()?;
        Ok(MappedFile::with_map(file, map))
    }

    /// [`MappedFile::new`] for a map about to be read whole ([`BackendFile::map_whole`]).
    fn new_whole(file: Arc<dyn BackendFile>) -> io::Result<MappedFile> {
        let map = file.map_whole()?;
        Ok(MappedFile::with_map(file, map))
    }

    fn with_map(file: Arc<dyn BackendFile>, map: Map) -> MappedFile {
        let published = AtomicUsize::new(map.len());
        MappedFile {
            file,
            map,
            published,
        }
    }

    /// Length of the map (the file's length when it was mapped).
    pub(crate) fn capacity(&self) -> usize {
        self.map.len()
    }

    /// Length of the immutable prefix.
    pub(crate) fn published(&self) -> usize {
        self.published.load(Ordering::Acquire)
    }

    /// Sets the published length to any value up to the capacity. Needs `&mut self`, so no
    /// slice borrowed from this file can be alive when the length goes down.
    pub(crate) fn set_published(&mut self, len: usize) {
        *self.published.get_mut() = len.min(self.map.len());
    }

    /// Declares `[0, end)` immutable. The length never goes down through `&self`.
    pub(crate) fn publish(&self, end: usize) {
        self.published
            .fetch_max(end.min(self.map.len()), Ordering::AcqRel);
    }

    /// Writes `bytes` at `offset` through the backend (a positional write, never through the
    /// map). Refuses to touch the published prefix or to write past the map.
    pub(crate) fn write_at(&self, offset: usize, bytes: &[u8]) -> io::Result<()> {
        let end = offset.checked_add(bytes.len());
        if offset < self.published() || end.is_none_or(|end| end > self.map.len()) {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!(
                    "write of {} bytes at offset {offset} would touch published bytes or pass the end of the map ({} published, {} mapped)",
                    bytes.len(),
                    self.published(),
                    self.map.len()
                ),
            ));
        }
        self.file.write_all_at(bytes, offset as u64)
    }

    /// Makes everything written so far durable.
    pub(crate) fn sync_data(&self) -> io::Result<()> {
        self.file.sync_data()
    }

    /// The published bytes `[offset, offset + len)`, or `None` if any of them is not published.
    pub(crate) fn read(&self, offset: usize, len: usize) -> Option<&[u8]> {
        let end = offset.checked_add(len)?;
        if end > self.published() {
            return None;
        }
        #[expect(
            unsafe_code,
            reason = "borrowing bytes of a memory map (or shared buffer) as a slice"
        )]
        // SAFETY: `end <= published <= map.len()`, so the range lies inside the live mapping
        // (or buffer; for an empty map only zero-length slices at a non-null, aligned pointer), which `self.map` keeps alive for as long as the returned borrow of
        // `self`. The bytes are initialised (file contents or zero-filled buffer). Bytes below
        // `published` are never written again: `write_at` refuses offsets below it, the
        // published length cannot decrease while `&self` borrows exist, and the in-memory
        // backend never reallocates a buffer that is mapped. Acquire on `published` pairs with
        // the Release in `publish`, so the writes that produced these bytes happen-before this
        // read.
        let bytes = unsafe { std::slice::from_raw_parts(self.map.base().add(offset), len) };
        Some(bytes)
    }

    /// Runs `f` over every byte of the file (published or not) through a second, temporary
    /// map that is dropped when `f` returns, so that pages `f` touches do not stay resident in
    /// this process (recovery reads the log after the checkpoint and scans the unused tail of
    /// the active segment this way: tens of MiB that the open would otherwise keep mapped).
    ///
    /// Sound for the same reason as [`MappedFile::new`]: `&mut self` excludes every write
    /// through this handle (the only writer of the file) while the probe lives, so none of the
    /// bytes lent to `f` can change.
    pub(crate) fn with_probe<R>(&mut self, f: impl FnOnce(&[u8]) -> R) -> io::Result<R> {
        let probe = MappedFile::new(self.file.clone())?;
        let len = probe.capacity().min(self.capacity());
        Ok(f(probe.read(0, len).unwrap_or(&[])))
    }

    /// Reads `buf.len()` bytes at `offset` through the backend (a positional read, not the
    /// map), published or not.
    pub(crate) fn read_exact_at(&self, buf: &mut [u8], offset: usize) -> io::Result<()> {
        self.file.read_exact_at(buf, offset as u64)
    }

    /// See [`Map::advise_random`].
    pub(crate) fn advise_random(&self) {
        self.map.advise_random();
    }

    /// See [`Map::will_need`].
    pub(crate) fn will_need(&self, offset: usize, len: usize) {
        self.map.will_need(offset, len);
    }

    /// All published bytes.
    pub(crate) fn published_bytes(&self) -> &[u8] {
        self.read(0, self.published()).unwrap_or(&[])
    }
}

/// An `rkyv` archive of type `T` inside a mapped, immutable file (a checkpoint), validated
/// once when it is opened and then read in place for as long as it lives.
///
/// The only ways to build one are [`MappedArchive::open`] and [`MappedArchive::open_in_place`],
/// which run `rkyv::access::<T>` (bytecheck) over exactly the bytes that
/// [`MappedArchive::get`] later reinterprets, and the caller's own checks (a CRC of the whole
/// body or of the blocks the structure lies in, semantics). Memory safety rests on bytecheck
/// alone; the checksums are about damage. Those bytes never change afterwards: the
/// whole file is published, so [`MappedFile::write_at`] refuses every offset, and checkpoint
/// files are written whole and fsynced before they are opened, never modified, and only ever
/// deleted (see `UNSAFE.md`).
pub(crate) struct MappedArchive<T> {
    file: MappedFile,
    start: usize,
    len: usize,
    archived: std::marker::PhantomData<fn() -> T>,
}

impl<T> fmt::Debug for MappedArchive<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MappedArchive")
            .field("start", &self.start)
            .field("len", &self.len)
            .finish_non_exhaustive()
    }
}

impl<T> MappedArchive<T>
where
    T: rkyv::Portable
        + for<'a> rkyv::bytecheck::CheckBytes<rkyv::api::high::HighValidator<'a, rkyv::rancor::Error>>,
{
    /// Maps `file` and validates the archive in `[start, start + len)`.
    ///
    /// `check` first sees the raw bytes and the validated archive through a *separate*
    /// probe map that is dropped afterwards, so that a check reading every byte (a CRC, the
    /// key order) leaves no page of this process resident: the archive that is kept is paged
    /// in only as lookups touch it, and stays page cache the kernel can evict. The kept map is
    /// then validated again with `rkyv::access` (bytecheck reads only the archive's structure,
    /// not its bulk data), so `get` relies on a check of its own bytes.
    pub(crate) fn open<E>(
        file: Arc<dyn BackendFile>,
        start: usize,
        len: usize,
        check: impl FnOnce(&[u8], &T) -> Result<(), E>,
        invalid: impl Fn(String) -> E,
    ) -> Result<MappedArchive<T>, E> {
        let io = |e: io::Error| invalid(format!("cannot map: {e}"));
        {
            let probe = MappedFile::new_whole(file.clone()).map_err(io)?;
            let bytes = probe
                .read(start, len)
                .ok_or_else(|| invalid("archive runs past the end of the file".into()))?;
            let archived = rkyv::access::<T, rkyv::rancor::Error>(bytes)
                .map_err(|e| invalid(format!("archive is invalid: {e}")))?;
            check(bytes, archived)?;
        }
        let kept = MappedFile::new(file).map_err(io)?;
        let bytes = kept
            .read(start, len)
            .ok_or_else(|| invalid("archive runs past the end of the file".into()))?;
        rkyv::access::<T, rkyv::rancor::Error>(bytes)
            .map_err(|e| invalid(format!("archive is invalid: {e}")))?;
        Ok(MappedArchive {
            file: kept,
            start,
            len,
            archived: std::marker::PhantomData,
        })
    }

    /// Maps `file` once and validates the archive in `[start, start + len)` on that map,
    /// reading only what bytecheck and `check` read (a version 3 checkpoint: its bulk data is
    /// checked block by block when first read, not here). `check` sees the kept map's bytes and
    /// the validated archive.
    ///
    /// The map is read at random ([`MappedFile::advise_random`]): what is read of it is what
    /// is touched, and `check` (and later readers, through [`MappedArchive::file`]) ask for
    /// whole ranges with [`MappedFile::will_need`].
    pub(crate) fn open_in_place<E>(
        file: Arc<dyn BackendFile>,
        start: usize,
        len: usize,
        check: impl FnOnce(&MappedFile, &[u8], &T) -> Result<(), E>,
        invalid: impl Fn(String) -> E,
    ) -> Result<MappedArchive<T>, E> {
        let kept = MappedFile::new(file).map_err(|e| invalid(format!("cannot map: {e}")))?;
        kept.advise_random();
        let bytes = kept
            .read(start, len)
            .ok_or_else(|| invalid("archive runs past the end of the file".into()))?;
        let archived = rkyv::access::<T, rkyv::rancor::Error>(bytes)
            .map_err(|e| invalid(format!("archive is invalid: {e}")))?;
        check(&kept, bytes, archived)?;
        Ok(MappedArchive {
            file: kept,
            start,
            len,
            archived: std::marker::PhantomData,
        })
    }

    /// The mapped file, and the offset of the archive in it.
    pub(crate) fn file(&self) -> (&MappedFile, usize) {
        (&self.file, self.start)
    }

    /// The archive's bytes, in place.
    pub(crate) fn bytes(&self) -> &[u8] {
        self.file
            .read(self.start, self.len)
            .expect("checked in `open`; the published length never goes down through `&self`")
    }

    /// The archive, read in place.
    pub(crate) fn get(&self) -> &T {
        let bytes = self
            .file
            .read(self.start, self.len)
            .expect("checked in `open`; the published length never goes down through `&self`");
        #[expect(
            unsafe_code,
            reason = "reading a validated rkyv archive in place without validating it again"
        )]
        // SAFETY: `open` ran `rkyv::access::<T>` (bytecheck) on these very bytes — the same
        // map, offset and length — and succeeded; `T` is `Portable`, so validity depends on the
        // bytes only. The bytes cannot have changed since: the whole file is published, so
        // `MappedFile::write_at` refuses every write, the published length never decreases
        // through `&self`, and no code writes a checkpoint file after it was fsynced and
        // opened (other processes are kept out by the store lock; see UNSAFE.md). The map
        // lives as long as `self`, and the returned reference borrows `self`.
        unsafe {
            rkyv::access_unchecked::<T>(bytes)
        }
    }
}
