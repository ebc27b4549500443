//! Memory maps of files: the read-only view of a file's bytes that a backend creates.
//!
//! [`Map`] is either a real `memmap2` map of a file on disk or a shared buffer of the
//! in-memory backend. It is the bottom of the store's layers: backends create maps, and
//! `mapped` (its `MappedFile`) decides which of its bytes may be borrowed. See
//! `UNSAFE.md` at the repository root for the whole argument.
//!
//! This module must never write through a map and never create a map longer than its file.

use std::fmt;
use std::io;
use std::sync::Arc;
use std::sync::atomic::AtomicU8;

enum MapSource {
    /// Nothing to map (a zero-length file).
    Empty,
    /// A shared, read-only `mmap` of a file on disk.
    File(memmap2::Mmap),
    /// The buffer of an in-memory file; it is never reallocated while mapped.
    Memory(Arc<[AtomicU8]>),
}

/// A read-only view of the bytes of a backend file, created by the backend's `map`.
///
/// Only this crate's backends can create one; it is opaque on purpose.
pub struct Map {
    source: MapSource,
}

impl fmt::Debug for Map {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let kind = match self.source {
            MapSource::Empty => "empty",
            MapSource::File(_) => "file",
            MapSource::Memory(_) => "memory",
        };
        f.debug_struct("Map")
            .field("kind", &kind)
            .field("len", &self.len())
            .finish()
    }
}

impl Map {
    /// Maps the whole of `file` read-only, at its current length; with `populate`, every page
    /// is mapped at once (`MAP_POPULATE`: for a map that is about to be read whole).
    pub(crate) fn of_file(file: &std::fs::File, populate: bool) -> io::Result<Map> {
        let len = file.metadata()?.len();
        if len == 0 {
            return Ok(Map {
                source: MapSource::Empty,
            });
        }
        let len = usize::try_from(len)
            .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "file too large to map"))?;
        #[expect(
            unsafe_code,
            reason = "memmap2 cannot prove that nobody else modifies or truncates the file"
        )]
        // SAFETY: the map is read-only and exactly as long as the file is now. Spillway never
        // shrinks a segment file (recovery zeroes a torn tail instead of truncating, and
        // compaction deletes whole files only after their last map is dropped), other processes
        // are kept out by the store's exclusive lock, and bytes are only ever borrowed from the
        // published, immutable prefix (see `MappedFile`). Modification by a foreign program is
        // outside the contract documented in UNSAFE.md, as for every mmap-based database.
        let mmap = unsafe {
            let mut options = memmap2::MmapOptions::new();
            options.len(len);
            if populate {
                options.populate();
            }
            options.map(file)?
        };
        Ok(Map {
            source: MapSource::File(mmap),
        })
    }

    /// Wraps the buffer of an in-memory file.
    pub(crate) fn of_memory(bytes: Arc<[AtomicU8]>) -> Map {
        Map {
            source: MapSource::Memory(bytes),
        }
    }

    /// Tells the kernel that the map is read at random (`MADV_RANDOM`): a page fault reads that
    /// page, not a readahead window around it (8 MiB on some disks), so that touching a few
    /// blocks of a large checkpoint reads a few blocks. Advice only: errors are ignored.
    pub(crate) fn advise_random(&self) {
        if let MapSource::File(mmap) = &self.source {
            let _advice_only = mmap.advise(memmap2::Advice::Random);
        }
    }

    /// Asks the kernel to read `[offset, offset + len)` now (`MADV_WILLNEED`), in one request
    /// rather than a fault per page. Advice only: errors and out-of-range requests are ignored.
    pub(crate) fn will_need(&self, offset: usize, len: usize) {
        if let MapSource::File(mmap) = &self.source
            && offset.checked_add(len).is_some_and(|end| end <= mmap.len())
        {
            let _advice_only = mmap.advise_range(memmap2::Advice::WillNeed, offset, len);
        }
    }

    /// Length of the mapped region in bytes.
    pub(crate) fn len(&self) -> usize {
        match &self.source {
            MapSource::Empty => 0,
            MapSource::File(mmap) => mmap.len(),
            MapSource::Memory(bytes) => bytes.len(),
        }
    }

    /// Address of the first mapped byte (valid for `len` bytes while `self` lives).
    pub(crate) fn base(&self) -> *const u8 {
        match &self.source {
            // Dangling but non-null and 8-aligned: only zero-length slices are ever made from it.
            MapSource::Empty => std::ptr::NonNull::<u64>::dangling().as_ptr().cast::<u8>(),
            MapSource::File(mmap) => mmap.as_ptr(),
            // `AtomicU8` has the same size, alignment and bit validity as `u8`.
            MapSource::Memory(bytes) => bytes.as_ptr().cast::<u8>(),
        }
    }
}
