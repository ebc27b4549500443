//! Compaction output: packs live records into new compacted segments.
//!
//! Each output segment is written whole, fsynced and only then mapped; frames hold one keyspace
//! each and start with a create-keyspace op naming it, so that a salvage without checkpoint can
//! rebuild names. This module must never touch an existing segment: it only writes new files.

use std::path::Path;
use std::sync::Arc;

use crate::backend::Backend;
use crate::directory::Key;
use crate::error::{Error, Result};
use crate::format::ValueLoc;
use crate::format::{
    self, FRAME_HEADER_LEN, OpKind, SEGMENT_HEADER_LEN, SegmentKind, align_up, encode_op,
    seal_frame,
};
use crate::segment::Segment;

pub(crate) struct Move {
    pub(crate) keyspace: u32,
    pub(crate) key: Key,
    pub(crate) old: ValueLoc,
    pub(crate) new: ValueLoc,
}

/// Packs records into new compacted segments.
pub(crate) struct CompactionOutput<'a> {
    backend: &'a Arc<dyn Backend>,
    dir: &'a Path,
    segment_size: usize,
    allocate_id: &'a mut dyn FnMut() -> u32,
    /// Bytes of the segment being filled (header placeholder included) and its id.
    current: Vec<u8>,
    current_id: Option<u32>,
    frame: Vec<u8>,
    frame_ops: u32,
    frame_keyspace: Option<u32>,
    /// Moves of the frame being built: value offsets are relative to the frame.
    frame_moves: Vec<Move>,
    moves: Vec<Move>,
    written: Vec<Segment>,
}

const COMPACTION_FRAME_TARGET: usize = 1 << 20;

impl<'a> CompactionOutput<'a> {
    pub(crate) fn new(
        backend: &'a Arc<dyn Backend>,
        dir: &'a Path,
        segment_size: usize,
        allocate_id: &'a mut dyn FnMut() -> u32,
    ) -> Self {
        CompactionOutput {
            backend,
            dir,
            segment_size,
            allocate_id,
            current: Vec::new(),
            current_id: None,
            frame: Vec::new(),
            frame_ops: 0,
            frame_keyspace: None,
            frame_moves: Vec::new(),
            moves: Vec::new(),
            written: Vec::new(),
        }
    }

    pub(crate) fn add(
        &mut self,
        keyspace: u32,
        name: &str,
        key: &[u8],
        value: &[u8],
        old: ValueLoc,
    ) -> Result<()> {
        let record = format::op_len(key.len(), value.len());
        if self.frame_ops > 0
            && (self.frame_keyspace != Some(keyspace)
                || self.frame.len() + record > COMPACTION_FRAME_TARGET)
        {
            self.finish_frame()?;
        }
        if self.frame_ops == 0 {
            self.frame.clear();
            self.frame.resize(FRAME_HEADER_LEN, 0);
            // Each frame names its keyspace so that a salvage without checkpoint can rebuild it.
            encode_op(
                &mut self.frame,
                OpKind::CreateKeyspace,
                keyspace,
                name.as_bytes(),
                &[],
            );
            self.frame_ops = 1;
            self.frame_keyspace = Some(keyspace);
        }
        let value_offset = self.frame.len() + format::OP_HEADER_LEN + align_up(key.len());
        encode_op(&mut self.frame, OpKind::Put, keyspace, key, value);
        self.frame_ops += 1;
        self.frame_moves.push(Move {
            keyspace,
            key: Key::new(key),
            old,
            new: ValueLoc {
                segment: 0,
                offset: value_offset as u32,
                len: old.len,
                crc: old.crc,
            },
        });
        Ok(())
    }

    fn finish_frame(&mut self) -> Result<()> {
        if self.frame_ops == 0 {
            return Ok(());
        }
        let mut hasher = crc32fast::Hasher::new();
        hasher.update(&self.frame[FRAME_HEADER_LEN..]);
        seal_frame(&mut self.frame, 0, self.frame_ops, &hasher);
        if self.current_id.is_some() && self.current.len() + self.frame.len() > self.segment_size {
            self.finish_segment()?;
        }
        if self.current_id.is_none() {
            self.current_id = Some((self.allocate_id)());
            self.current.clear();
            self.current.resize(SEGMENT_HEADER_LEN, 0);
        }
        let base = self.current.len();
        let segment = self.current_id.expect("set above");
        for mut moved in self.frame_moves.drain(..) {
            moved.new.segment = segment;
            moved.new.offset += base as u32;
            self.moves.push(moved);
        }
        self.current.extend_from_slice(&self.frame);
        self.frame_ops = 0;
        self.frame_keyspace = None;
        Ok(())
    }

    fn finish_segment(&mut self) -> Result<()> {
        let Some(id) = self.current_id.take() else {
            return Ok(());
        };
        let segment = Segment::create(
            self.backend,
            self.dir,
            id,
            SegmentKind::Compacted,
            self.current.len(),
        )?;
        segment.write_at(SEGMENT_HEADER_LEN, &self.current[SEGMENT_HEADER_LEN..])?;
        segment.sync()?;
        segment.publish(self.current.len());
        self.written.push(segment);
        Ok(())
    }

    pub(crate) fn finish(mut self) -> Result<(Vec<Segment>, Vec<Move>)> {
        self.finish_frame()?;
        self.finish_segment()?;
        if !self.written.is_empty() {
            self.backend
                .sync_dir(self.dir)
                .map_err(|e| Error::io("fsync store directory", self.dir, e))?;
        }
        Ok((self.written, self.moves))
    }
}
