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
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use crate::backend::Backend;
use crate::error::{Error, Result};
use crate::format::{
    SEGMENT_HEADER_LEN, SegmentHeader, SegmentKind, segment_file_name, written_limit_for,
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
