//! One segment file: its header, its map, appends and reads.
//!
//! A segment is created at its full (preallocated) size and never shrinks. This module must
//! never write below the published length (enforced by [`MappedFile`]) and never delete a file
//! that is still mapped: a retired segment deletes its file when its last `Arc` is dropped,
//! which is after every snapshot that could read it is gone.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use crate::backend::Backend;
use crate::error::{Error, Result};
use crate::format::{SEGMENT_HEADER_LEN, SegmentHeader, SegmentKind, segment_file_name};
use crate::map::MappedFile;

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
    /// Creates a segment file of `capacity` bytes with its header written and synced, and maps
    /// it. Only the header is published. The caller syncs the directory.
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
        file.set_len(capacity as u64)
            .map_err(io("preallocate segment"))?;
        file.write_all_at(
            &SegmentHeader {
                kind,
                segment_id: id,
            }
            .to_bytes(),
            0,
        )
        .map_err(io("write segment header"))?;
        file.sync_data().map_err(io("fsync new segment"))?;
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

    /// Opens and maps an existing segment and checks its header. Every byte counts as published
    /// until the caller says otherwise with [`Segment::set_published`].
    pub(crate) fn open(
        backend: &Arc<dyn Backend>,
        dir: &Path,
        id: u32,
        kind: SegmentKind,
    ) -> Result<Segment> {
        let segment = Segment::open_ignoring_header(backend, dir, id, kind)?;
        let header = SegmentHeader::from_bytes(segment.file.published_bytes())
            .map_err(|e| Error::corrupt(&segment.path, e.offset, e.reason))?;
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
    /// whose header is damaged: its frames may still be intact).
    pub(crate) fn open_ignoring_header(
        backend: &Arc<dyn Backend>,
        dir: &Path,
        id: u32,
        kind: SegmentKind,
    ) -> Result<Segment> {
        let path = dir.join(segment_file_name(id));
        let file = backend
            .open_file(&path)
            .map_err(|e| Error::io("open segment", &path, e))?;
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
