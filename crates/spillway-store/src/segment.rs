//! One segment file: its header, its map, appends and reads.
//!
//! A segment is created at its full size, with its disk blocks allocated, and never shrinks;
//! its header records that size, so a shortened file is damage, not a torn tail. A log
//! segment's blocks are written with zeroes a step ahead of its frames
//! ([`Segment::write_zeroes`]), which makes each commit's fsync cheaper. This module
//! must never write below the published length (enforced by [`MappedFile`]), never map a
//! segment it may write to before its blocks are allocated (a mapped hole raises SIGBUS on a
//! full tmpfs), and never delete a file that is still mapped: a retired segment deletes its
//! file when its last `Arc` is dropped, which is after every snapshot that could read it is
//! gone.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};

use crate::backend::Backend;
use crate::error::{Error, Result};
use crate::format::{
    ALIGN, OP_HEADER_LEN, SEGMENT_HEADER_LEN, SegmentHeader, SegmentKind, segment_file_name,
    written_limit_for,
};
use crate::mapped::MappedFile;

/// How a segment file is opened.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Access {
    /// For reading and appending: blocks are allocated before the file is mapped.
    ReadWrite,
    /// For reading only (a store opened read-only): nothing is written, not even allocation.
    ReadOnly,
}

/// A mapped segment file.
#[derive(Debug)]
pub(crate) struct Segment {
    pub(crate) id: u32,
    pub(crate) kind: SegmentKind,
    pub(crate) path: PathBuf,
    file: MappedFile,
    retired: AtomicBool,
    backend: Arc<dyn Backend>,
    /// The values whose checksum this process has checked, by offset.
    checked: CheckedValues,
}

impl Segment {
    /// Creates a segment file of `capacity` bytes, allocated, with its header written and
    /// synced, and maps it. Only the header is published. The caller syncs the directory. On
    /// failure (a full disk fails the allocation) the file is deleted again.
    pub(crate) fn create(
        backend: &Arc<dyn Backend>,
        dir: &Path,
        id: u32,
        kind: SegmentKind,
        capacity: usize,
    ) -> Result<Segment> {
        let path = dir.join(segment_file_name(id));
        let io =
            |operation| move |source| Error::io(operation, dir.join(segment_file_name(id)), source);
        let file = backend.create_file(&path).map_err(io("create segment"))?;
        let prepared = (|| {
            file.set_len(capacity as u64)
                .map_err(io("size new segment"))?;
            file.allocate(capacity as u64)
                .map_err(io("allocate new segment"))?;
            file.write_all_at(
                &SegmentHeader {
                    kind,
                    segment_id: id,
                    capacity: u32::try_from(capacity).unwrap_or(0),
                }
                .to_bytes(),
                0,
            )
            .map_err(io("write segment header"))?;
            if kind == SegmentKind::Log {
                // The first step of the log written as zeroes: see `Segment::write_zeroes`.
                let end = written_limit_for(SEGMENT_HEADER_LEN, capacity) as usize;
                for (at, len) in zero_chunks(SEGMENT_HEADER_LEN, end) {
                    file.write_all_at(&ZEROES[..len], at as u64)
                        .map_err(io("write zeroes into new segment"))?;
                }
            }
            file.sync_data().map_err(io("fsync new segment"))
        })();
        if let Err(error) = prepared {
            drop(file);
            // Best effort: a file left behind is an orphan that the next open deletes.
            let _ = backend.remove_file(&path);
            return Err(error);
        }
        let mut file = MappedFile::new(file).map_err(io("map segment"))?;
        file.set_published(SEGMENT_HEADER_LEN);
        Ok(Segment {
            id,
            kind,
            path,
            checked: CheckedValues::new(file.capacity()),
            file,
            retired: AtomicBool::new(false),
            backend: backend.clone(),
        })
    }

    /// Opens and maps an existing segment and checks its header, including that the file is
    /// not shorter than it was created. Every byte counts as published until the caller says
    /// otherwise with [`Segment::set_published`].
    pub(crate) fn open(
        backend: &Arc<dyn Backend>,
        dir: &Path,
        id: u32,
        kind: SegmentKind,
        access: Access,
    ) -> Result<Segment> {
        let segment = Segment::open_ignoring_header(backend, dir, id, kind, access)?;
        // A positional read, not a page fault on the map: on a disk that reads ahead 8 MiB
        // around a fault, reading every segment's header through its map read 8 MiB per
        // segment at a cold open.
        let mut header_bytes = [0u8; SEGMENT_HEADER_LEN];
        let header_len = SEGMENT_HEADER_LEN.min(segment.capacity());
        segment
            .file
            .read_exact_at(&mut header_bytes[..header_len], 0)
            .map_err(|e| Error::io("read segment header", &segment.path, e))?;
        let header = SegmentHeader::from_bytes(&header_bytes[..header_len])
            .map_err(|e| Error::corrupt(&segment.path, e.offset, e.reason))?;
        let created = header.capacity as usize;
        if created != 0 && segment.capacity() < created {
            return Err(Error::corrupt(
                &segment.path,
                segment.capacity() as u64,
                format!(
                    "the file is {} bytes but was created with {created}: it was shortened, and whatever was in the missing bytes is lost (run repair)",
                    segment.capacity()
                ),
            ));
        }
        if header.segment_id != id || header.kind != kind {
            return Err(Error::corrupt(
                &segment.path,
                0,
                format!(
                    "segment header says id {} ({:?}) but the manifest lists id {id} ({kind:?})",
                    header.segment_id, header.kind
                ),
            ));
        }
        Ok(segment)
    }

    /// Opens and maps an existing segment without checking its header (salvage of a segment
    /// whose header is damaged: its frames may still be intact). With [`Access::ReadWrite`]
    /// the file's blocks are allocated first (a no-op unless an older version left it sparse).
    pub(crate) fn open_ignoring_header(
        backend: &Arc<dyn Backend>,
        dir: &Path,
        id: u32,
        kind: SegmentKind,
        access: Access,
    ) -> Result<Segment> {
        let path = dir.join(segment_file_name(id));
        let file = match access {
            Access::ReadWrite => {
                let file = backend
                    .open_file(&path)
                    .map_err(|e| Error::io("open segment", &path, e))?;
                file.len()
                    .and_then(|len| file.allocate(len))
                    .map_err(|e| Error::io("allocate segment", &path, e))?;
                file
            }
            Access::ReadOnly => backend
                .open_file_read_only(&path)
                .map_err(|e| Error::io("open segment", &path, e))?,
        };
        let file = MappedFile::new(file).map_err(|e| Error::io("map segment", &path, e))?;
        Ok(Segment {
            id,
            kind,
            path,
            checked: CheckedValues::new(file.capacity()),
            file,
            retired: AtomicBool::new(false),
            backend: backend.clone(),
        })
    }

    /// Length of the file (and of its map).
    pub(crate) fn capacity(&self) -> usize {
        self.file.capacity()
    }

    /// All published bytes, from offset 0.
    pub(crate) fn bytes(&self) -> &[u8] {
        self.file.published_bytes()
    }

    /// Runs `f` over the whole file through a temporary map (see [`MappedFile::with_probe`]).
    pub(crate) fn with_probe<R>(&mut self, f: impl FnOnce(&[u8]) -> R) -> Result<R> {
        self.file
            .with_probe(f)
            .map_err(|e| Error::io("map segment", &self.path, e))
    }

    /// Published bytes `[offset, offset + len)`.
    pub(crate) fn read(&self, offset: usize, len: usize) -> Option<&[u8]> {
        self.file.read(offset, len)
    }

    pub(crate) fn set_published(&mut self, len: usize) {
        self.file.set_published(len);
        // What lies past a shortened published length may be written again.
        self.checked = CheckedValues::new(self.file.capacity());
    }

    /// Whether the value at `offset` was read back with its checksum before, by this process.
    pub(crate) fn value_checked(&self, offset: usize) -> bool {
        self.checked.contains(offset)
    }

    /// Records that the value at `offset` read back with its checksum.
    pub(crate) fn mark_value_checked(&self, offset: usize) {
        self.checked.insert(offset);
    }

    pub(crate) fn publish(&self, end: usize) {
        self.file.publish(end);
    }

    /// Positional write at or after the published length.
    pub(crate) fn write_at(&self, offset: usize, bytes: &[u8]) -> Result<()> {
        self.file
            .write_at(offset, bytes)
            .map_err(|e| Error::io("write frame", &self.path, e))
    }

    /// Writes zeroes over `from..to`, which holds nothing yet (it is past the written limit);
    /// the caller syncs them. The blocks were allocated when the file was created, but a file system
    /// keeps a preallocated block *unwritten* until data is written into it, and the fsync
    /// after the first frame written there must then commit that change of the block's state
    /// too: measured on ext4, a 4 KiB frame synced in 145 µs into such blocks and in 89 µs
    /// into blocks that held zeroes. Done ahead of the frames, a step at a time (about 2 ms
    /// per 4 MiB), it leaves each commit's fsync only the frame's own bytes to write.
    pub(crate) fn write_zeroes(&self, from: usize, to: usize) -> Result<()> {
        for (at, len) in zero_chunks(from, to) {
            self.file
                .write_at(at, &ZEROES[..len])
                .map_err(|e| Error::io("write zeroes ahead of the log", &self.path, e))?;
        }
        Ok(())
    }

    pub(crate) fn sync(&self) -> Result<()> {
        self.file
            .sync_data()
            .map_err(|e| Error::io("fsync segment", &self.path, e))
    }

    /// Deletes the file once the last reference to this segment is dropped.
    pub(crate) fn retire(&self) {
        self.retired.store(true, Ordering::Release);
    }
}

impl Drop for Segment {
    fn drop(&mut self) {
        if self.retired.load(Ordering::Acquire) {
            // Best effort: a file left behind is an orphan that the next open deletes.
            let _ = self.backend.remove_file(&self.path);
        }
    }
}

/// A buffer of zeroes for [`Segment::write_zeroes`].
static ZEROES: [u8; ZERO_CHUNK] = [0; ZERO_CHUNK];
const ZERO_CHUNK: usize = 256 << 10;

/// `from..to` in pieces of at most [`ZERO_CHUNK`] bytes: (offset, length).
fn zero_chunks(from: usize, to: usize) -> impl Iterator<Item = (usize, usize)> {
    (from..to)
        .step_by(ZERO_CHUNK)
        .map(move |at| (at, ZERO_CHUNK.min(to - at)))
}

/// One bit per [`CHECKED_GRAIN`] bytes of a segment: set when the value starting there has
/// been read back with its checksum.
///
/// Published bytes never change while a segment is mapped (appends go past the published
/// length, which only a `&mut` holder shortens, and that resets the bits), so a value's
/// checksum is computed once per process instead of once per read: a scan that reads every
/// document spent an eighth of its time on them. Values start at a multiple of 8 and at least
/// [`OP_HEADER_LEN`] apart, so no two share a bit. The bits live in chunks allocated when
/// first set: a segment nobody reads costs a pointer per 64 KiB.
#[derive(Debug)]
struct CheckedValues {
    chunks: Box<[OnceLock<Box<[AtomicU64]>>]>,
}

/// Bytes of a segment per bit of [`CheckedValues`].
const CHECKED_GRAIN: usize = 16;
/// Bits per chunk of [`CheckedValues`]: 4,096, which cover 64 KiB of a segment.
const CHECKED_CHUNK_BITS: usize = 4096;
const _: () = assert!(CHECKED_GRAIN <= OP_HEADER_LEN && CHECKED_GRAIN.is_multiple_of(ALIGN));

impl CheckedValues {
    fn new(segment_len: usize) -> CheckedValues {
        let chunks = segment_len.div_ceil(CHECKED_GRAIN * CHECKED_CHUNK_BITS);
        CheckedValues {
            chunks: (0..chunks).map(|_| OnceLock::new()).collect(),
        }
    }

    /// The chunk, word and bit mask of `offset`.
    fn place(offset: usize) -> (usize, usize, u64) {
        let bit = offset / CHECKED_GRAIN;
        let in_chunk = bit % CHECKED_CHUNK_BITS;
        (
            bit / CHECKED_CHUNK_BITS,
            in_chunk / 64,
            1 << (in_chunk % 64),
        )
    }

    fn contains(&self, offset: usize) -> bool {
        let (chunk, word, mask) = Self::place(offset);
        self.chunks
            .get(chunk)
            .and_then(OnceLock::get)
            .is_some_and(|words| words[word].load(Ordering::Relaxed) & mask != 0)
    }

    fn insert(&self, offset: usize) {
        let (chunk, word, mask) = Self::place(offset);
        if let Some(chunk) = self.chunks.get(chunk) {
            let words = chunk.get_or_init(|| {
                (0..CHECKED_CHUNK_BITS / 64)
                    .map(|_| AtomicU64::new(0))
                    .collect()
            });
            words[word].fetch_or(mask, Ordering::Relaxed);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{CHECKED_CHUNK_BITS, CHECKED_GRAIN, CheckedValues};
    use crate::format::{ALIGN, OP_HEADER_LEN};

    /// Offsets as close as two values can be (an op header apart, aligned) never share a
    /// bit, across chunk boundaries and up to the segment's end; past the end nothing is kept.
    #[test]
    fn checked_values_keep_each_offset_apart() {
        let segment_len = 3 * CHECKED_GRAIN * CHECKED_CHUNK_BITS + 100;
        let checked = CheckedValues::new(segment_len);
        let step = OP_HEADER_LEN.next_multiple_of(ALIGN);
        let offsets: Vec<usize> = (32..segment_len).step_by(step).collect();
        for (n, &offset) in offsets.iter().enumerate() {
            assert!(!checked.contains(offset), "{offset} before insertion");
            checked.insert(offset);
            assert!(checked.contains(offset));
            if let Some(&next) = offsets.get(n + 1) {
                assert!(!checked.contains(next), "{next} set by {offset}");
            }
        }
        let past_the_end = 4 * CHECKED_GRAIN * CHECKED_CHUNK_BITS;
        checked.insert(past_the_end);
        assert!(!checked.contains(past_the_end));
    }
}
