//! Checkpoints: the whole key directory as an `rkyv` archive, one CRC per 64 KiB block.
//!
//! Opening a store maps its checkpoint (format version 3) and serves the checkpointed keys from
//! the archive in place, with an in-memory overlay of the changes since; it then replays only
//! the log written after the checkpoint's log position. The open checks the header, the block
//! table and the blocks the archive's structure lies in, a cost that does not grow with the
//! key count; every other block is checked when a read first touches it
//! (`checkpoint_archive::Blocks`), so damage there is an error for the reads that touch it, not
//! for the open (the decision and its consequences: `docs/file-format.md`, "Damage found after
//! the open"). Version 2 checkpoints (before issue 31: one CRC over the whole body, checked at
//! open) and version 1 (before issue 14: read into memory) still open, and the next checkpoint
//! writes version 3.
//!
//! Writing one ([`write()`]) streams the archive into the file: the bytes `rkyv::to_bytes` would
//! make of a [`CheckpointBody`] (a test holds them equal), serialised from the directory's
//! merged view of base and overlay through one [`WRITE_BUFFER_LEN`] buffer, the CRC computed on
//! the way and the header written last. Its heap is that buffer and the fences (8 bytes per
//! [`FENCE_EVERY`] keys), whatever the key count: the writer must never collect a keyspace's
//! keys or entries, or the archive, in memory.
//!
//! A checkpoint is untrusted input: this module must never read an archive it has not checked
//! (`rkyv` bytecheck, the CRCs of every block it reads, the semantic checks below), never use
//! unchecked `rkyv` access itself (the one place that does, `mapped::MappedArchive::get`, only
//! does so on bytes bytecheck validated), never hand out a byte of a block whose CRC it has
//! not checked, and never build a directory whose locations point outside the segments that
//! exist.
//!
//! [`CheckpointBody`]: crate::checkpoint_archive::CheckpointBody

use std::collections::HashSet;
use std::io;
use std::path::Path;
use std::sync::Arc;

use rkyv::rancor::{self, Fallible};
use rkyv::ser::{Allocator, Positional, Writer, WriterExt};
use rkyv::util::AlignedVec;
use rkyv::vec::{ArchivedVec, VecResolver};
use rkyv::{Archive, Place, Serialize};

use crate::backend::{Backend, BackendFile};
use crate::checkpoint_archive::{
    ArchivedCheckpointBody, ArchivedCheckpointBodyV1, ArchivedCheckpointEntry,
    ArchivedCheckpointKeyspace, ArchivedCheckpointKeyspaceV1, BaseKeys, Blocks, CheckedBody,
    CheckpointArchive, CheckpointBodyV1, CheckpointEntry, CheckpointKeyspace, CheckpointKeyspaceV1,
    FENCE_EVERY, SegmentLive, key_prefix,
};
use crate::directory::{Base, Directory, KeyspaceState, LiveBytes};
use crate::error::{Error, Result};
use crate::format::{ALIGN, FRAME_HEADER_LEN, FormatError, OP_HEADER_LEN, SEGMENT_HEADER_LEN};
use crate::mapped::MappedArchive;

pub(crate) const CHECKPOINT_MAGIC: [u8; 8] = *b"SPWYCKP\0";
pub(crate) const CHECKPOINT_HEADER_LEN: usize = 32;
/// Version 1: the directory only, loaded whole into memory. Read, never written.
const CHECKPOINT_VERSION_1: u32 = 1;
/// Version 2 (issue 14): also the live bytes per segment, so that an open needs no pass over
/// the keys; mapped and read in place, its whole body CRC-checked at open. Read, never written.
const CHECKPOINT_VERSION_2: u32 = 2;
/// Version 3 (issue 31): version 2's body, then a table of one CRC per [`BLOCK_LEN`] bytes of
/// it; the header carries its own CRC and the table's. An open checks the header, the table
/// and the blocks the archive's structure lies in; every other block is checked when a read
/// first touches it.
const CHECKPOINT_VERSION: u32 = 3;
/// Bytes per checksummed block of a version 3 body (the last block may be shorter).
pub(crate) const BLOCK_LEN: usize = 1 << BLOCK_SHIFT;
const BLOCK_SHIFT: u32 = 16;
/// Block lengths a reader accepts: powers of two from 4 KiB to 16 MiB.
const BLOCK_SHIFTS: std::ops::RangeInclusive<u32> = 12..=24;

/// A loaded checkpoint.
#[derive(Debug)]
pub(crate) struct LoadedCheckpoint {
    pub(crate) directory: Directory,
    pub(crate) live: LiveBytes,
    pub(crate) next_seq: u64,
    pub(crate) log_segment: u32,
    pub(crate) log_offset: usize,
}

/// The keyspaces of `directory` in checkpoint form, and the live bytes per segment, all in
/// memory: only for [`encode_v1`] (and, in tests, the in-memory reference encoder that the
/// streamed writer must match byte for byte).
fn keyspaces_of(directory: &Directory) -> (Vec<CheckpointKeyspace>, Vec<SegmentLive>) {
    let mut live = LiveBytes::default();
    let keyspaces = directory
        .keyspaces
        .iter()
        .map(|(&id, keyspace)| {
            let mut key_bytes = Vec::new();
            let mut entries = Vec::with_capacity(keyspace.len());
            for (key, loc) in keyspace.iter_in_memory() {
                live.add(key, &loc);
                key_bytes.extend_from_slice(key);
                entries.push(CheckpointEntry {
                    key_end: key_bytes.len() as u64,
                    segment: loc.segment,
                    offset: loc.offset,
                    len: loc.len,
                    crc: loc.crc,
                });
            }
            let fences = (0..entries.len())
                .step_by(FENCE_EVERY)
                .map(|index| {
                    let start = match index.checked_sub(1) {
                        Some(previous) => entries[previous].key_end as usize,
                        None => 0,
                    };
                    key_prefix(&key_bytes[start..entries[index].key_end as usize])
                })
                .collect();
            CheckpointKeyspace {
                id,
                name: keyspace.name.to_string(),
                key_bytes,
                entries,
                fences,
            }
        })
        .collect();
    (keyspaces, live_table(&live))
}

/// `live` as the archive holds it: sorted by segment id.
fn live_table(live: &LiveBytes) -> Vec<SegmentLive> {
    let mut table: Vec<SegmentLive> = live
        .0
        .iter()
        .map(|(&segment, &bytes)| SegmentLive { segment, bytes })
        .collect();
    table.sort_unstable_by_key(|entry| entry.segment);
    table
}

/// A version 1 or 2 checkpoint header.
fn header(version: u32, body_crc: u32, body_len: u64) -> [u8; CHECKPOINT_HEADER_LEN] {
    let mut header = [0u8; CHECKPOINT_HEADER_LEN];
    header[0..8].copy_from_slice(&CHECKPOINT_MAGIC);
    header[8..12].copy_from_slice(&version.to_le_bytes());
    header[12..16].copy_from_slice(&body_crc.to_le_bytes());
    header[16..24].copy_from_slice(&body_len.to_le_bytes());
    header
}

/// A version 3 checkpoint header: the table's CRC, the body's length, the block length, and
/// the CRC of the header's first 28 bytes.
fn header_v3(table_crc: u32, body_len: u64) -> [u8; CHECKPOINT_HEADER_LEN] {
    let mut header = [0u8; CHECKPOINT_HEADER_LEN];
    header[0..8].copy_from_slice(&CHECKPOINT_MAGIC);
    header[8..12].copy_from_slice(&CHECKPOINT_VERSION.to_le_bytes());
    header[12..16].copy_from_slice(&table_crc.to_le_bytes());
    header[16..24].copy_from_slice(&body_len.to_le_bytes());
    header[24..28].copy_from_slice(&(BLOCK_LEN as u32).to_le_bytes());
    let header_crc = crc32fast::hash(&header[..28]);
    header[28..32].copy_from_slice(&header_crc.to_le_bytes());
    header
}

/// The block table of a version 3 body: one little-endian CRC32 per block.
fn block_table(crcs: &[u32]) -> Vec<u8> {
    crcs.iter().flat_map(|crc| crc.to_le_bytes()).collect()
}

/// A version 3 checkpoint file in memory: the header, `archived`, the block table.
#[cfg(test)]
fn with_blocks(archived: &[u8]) -> Vec<u8> {
    let crcs: Vec<u32> = archived.chunks(BLOCK_LEN).map(crc32fast::hash).collect();
    let table = block_table(&crcs);
    let mut file = Vec::with_capacity(CHECKPOINT_HEADER_LEN + archived.len() + table.len());
    file.extend_from_slice(&header_v3(crc32fast::hash(&table), archived.len() as u64));
    file.extend_from_slice(archived);
    file.extend_from_slice(&table);
    file
}

/// A version 1 or 2 checkpoint file in memory: the header, then `archived`.
fn with_header(version: u32, archived: &[u8]) -> Vec<u8> {
    let mut file = Vec::with_capacity(CHECKPOINT_HEADER_LEN + archived.len());
    file.extend_from_slice(&header(
        version,
        crc32fast::hash(archived),
        archived.len() as u64,
    ));
    file.extend_from_slice(archived);
    file
}

/// Bytes the streamed writer gathers before each write to the file: its only buffer.
const WRITE_BUFFER_LEN: usize = 2 << 20;

/// Writes a (version 2) checkpoint of `directory` and the log position into `file`, which must
/// be new and empty, as a stream: the heap it needs does not grow with the key count.
///
/// The archive is the one `rkyv::to_bytes` would make of a [`CheckpointBody`] (a test holds the
/// two byte for byte), but the keys and entries of each keyspace are serialised straight from
/// the directory's merged view of base and overlay as they are written ([`KeyBytesOf`],
/// [`EntriesOf`]), never collected: a first pass over the keys computes only the fences (8
/// bytes per [`FENCE_EVERY`] keys) and the live bytes per segment. The writes go through
/// [`WRITE_BUFFER_LEN`] bytes of buffer: 32 zero bytes where the header goes (so that the file
/// never has a hole), the body, computing its CRC on the way, and last the header at offset 0.
/// The caller fsyncs; until a manifest names the file, a crash at any point leaves an orphan.
///
/// [`CheckpointBody`]: crate::checkpoint_archive::CheckpointBody
pub(crate) fn write(
    file: &dyn BackendFile,
    directory: &Directory,
    next_seq: u64,
    log_segment: u32,
    log_offset: usize,
) -> std::result::Result<(), WriteError> {
    let (keyspaces, live, size) = keyspace_sources(directory).map_err(WriteError::Damaged)?;
    if size > MAX_BODY_LEN {
        // rkyv's relative pointers are 32-bit: it could not address such an archive.
        return Err(WriteError::Io(io::Error::other(format!(
            "a checkpoint of {size} bytes would be larger than the format allows ({MAX_BODY_LEN}): not written, the log since the previous checkpoint is kept"
        ))));
    }
    let body = CheckpointBodySource {
        next_seq,
        log_segment,
        log_offset: log_offset as u64,
        next_keyspace_id: directory.next_keyspace_id,
        keyspaces,
        live,
    };
    file.write_all_at(&[0u8; CHECKPOINT_HEADER_LEN], 0)?;
    let mut writer = BodyWriter {
        file,
        buffer: Vec::with_capacity(WRITE_BUFFER_LEN),
        written: 0,
        block_crc: crc32fast::Hasher::new(),
        block_fill: 0,
        block_crcs: Vec::new(),
        error: None,
    };
    if let Err(error) = rkyv::api::high::to_bytes_in::<_, rancor::Error>(&body, &mut writer) {
        return Err(WriteError::Io(writer.error.take().unwrap_or_else(|| {
            io::Error::other(format!("cannot serialise the checkpoint: {error}"))
        })));
    }
    writer.flush()?;
    if writer.block_fill > 0 {
        let last = std::mem::replace(&mut writer.block_crc, crc32fast::Hasher::new());
        writer.block_crcs.push(last.finalize());
    }
    let table = block_table(&writer.block_crcs);
    file.write_all_at(&table, CHECKPOINT_HEADER_LEN as u64 + writer.written)?;
    let header = header_v3(crc32fast::hash(&table), writer.written);
    file.write_all_at(&header, 0)?;
    Ok(())
}

/// Why [`write()`] failed: the file could not be written, or the directory it writes reads a
/// damaged block of the checkpoint it is based on (nothing was written then).
#[derive(Debug)]
pub(crate) enum WriteError {
    Io(io::Error),
    Damaged(Error),
}

impl From<io::Error> for WriteError {
    fn from(error: io::Error) -> WriteError {
        WriteError::Io(error)
    }
}

/// Largest checkpoint body: the archive's relative pointers are 32-bit signed offsets.
const MAX_BODY_LEN: u64 = i32::MAX as u64;

/// The keyspaces of `directory` as the streamed writer serialises them, the live bytes per
/// segment, and about how large the body will be (a little more than it will be): one pass
/// over the keys, which keeps only the fences.
/// This pass checks every base block the second one reads, so that damage fails the write
/// before anything is written.
fn keyspace_sources(
    directory: &Directory,
) -> Result<(Vec<KeyspaceSource<'_>>, Vec<SegmentLive>, u64)> {
    let mut live = LiveBytes::default();
    let mut size = 0u64;
    let keyspaces = directory
        .keyspaces
        .iter()
        .map(|(&id, keyspace)| {
            let mut fences = Vec::with_capacity(keyspace.len().div_ceil(FENCE_EVERY));
            for (index, entry) in keyspace.iter()?.enumerate() {
                let (key, loc) = entry?;
                live.add(key, &loc);
                size += key.len() as u64 + std::mem::size_of::<ArchivedCheckpointEntry>() as u64;
                if index % FENCE_EVERY == 0 {
                    fences.push(key_prefix(key));
                    size += 8;
                }
            }
            size += 64 + keyspace.name.len() as u64;
            Ok(KeyspaceSource {
                id,
                name: keyspace.name.to_string(),
                key_bytes: KeyBytesOf(keyspace),
                entries: EntriesOf(keyspace),
                fences,
            })
        })
        .collect::<Result<_>>()?;
    let live = live_table(&live);
    size += 64 + 16 * live.len() as u64;
    Ok((keyspaces, live, size))
}

/// What the streamed writer serialises: archived as a [`CheckpointBody`] (`rkyv`'s
/// `as = ...` writes it through the same archived type, field by field).
///
/// `omit_bounds` on the fields whose types are this module's: the derived `T: Archive` bound
/// would hide from the compiler which archived type `T` has, which `as = ...` needs to know;
/// what their serialisers need is stated in `serialize_bounds` instead.
///
/// [`CheckpointBody`]: crate::checkpoint_archive::CheckpointBody
#[derive(Archive, Serialize)]
#[rkyv(
    as = ArchivedCheckpointBody,
    serialize_bounds(__S: Allocator + Writer, <__S as Fallible>::Error: rancor::Source)
)]
struct CheckpointBodySource<'a> {
    next_seq: u64,
    log_segment: u32,
    log_offset: u64,
    next_keyspace_id: u32,
    #[rkyv(omit_bounds)]
    keyspaces: Vec<KeyspaceSource<'a>>,
    live: Vec<SegmentLive>,
}

/// One keyspace as the streamed writer serialises it: archived as a [`CheckpointKeyspace`],
/// its keys and entries read from the directory while they are written.
#[derive(Archive, Serialize)]
#[rkyv(
    as = ArchivedCheckpointKeyspace,
    serialize_bounds(__S: Allocator + Writer, <__S as Fallible>::Error: rancor::Source)
)]
struct KeyspaceSource<'a> {
    id: u32,
    name: String,
    #[rkyv(omit_bounds)]
    key_bytes: KeyBytesOf<'a>,
    #[rkyv(omit_bounds)]
    entries: EntriesOf<'a>,
    fences: Vec<u64>,
}

/// The keys of a keyspace, concatenated in key order: archived as a `Vec<u8>`.
struct KeyBytesOf<'a>(&'a KeyspaceState);

/// The entries of a keyspace in key order: archived as a `Vec<CheckpointEntry>`.
struct EntriesOf<'a>(&'a KeyspaceState);

/// Where a vector serialised from an iterator starts, and how many elements it has.
struct StreamedVecResolver {
    vec: VecResolver,
    len: usize,
}

impl Archive for KeyBytesOf<'_> {
    type Archived = ArchivedVec<u8>;
    type Resolver = StreamedVecResolver;

    fn resolve(&self, resolver: StreamedVecResolver, out: Place<ArchivedVec<u8>>) {
        ArchivedVec::resolve_from_len(resolver.len, resolver.vec, out);
    }
}

impl<S> Serialize<S> for KeyBytesOf<'_>
where
    S: Fallible + Writer + ?Sized,
    S::Error: rancor::Source,
{
    fn serialize(&self, serializer: &mut S) -> std::result::Result<StreamedVecResolver, S::Error> {
        // As `rkyv` serialises a `Vec<u8>`: aligned for the element, then the bytes.
        let pos = serializer.align_for::<u8>()?;
        let mut len = 0;
        for entry in self.0.iter().map_err(rancor::Source::new)? {
            let (key, _) = entry.map_err(rancor::Source::new)?;
            serializer.write(key)?;
            len += key.len();
        }
        Ok(StreamedVecResolver {
            vec: VecResolver::from_pos(pos),
            len,
        })
    }
}

impl Archive for EntriesOf<'_> {
    type Archived = ArchivedVec<ArchivedCheckpointEntry>;
    type Resolver = StreamedVecResolver;

    fn resolve(
        &self,
        resolver: StreamedVecResolver,
        out: Place<ArchivedVec<ArchivedCheckpointEntry>>,
    ) {
        ArchivedVec::resolve_from_len(resolver.len, resolver.vec, out);
    }
}

impl<S> Serialize<S> for EntriesOf<'_>
where
    S: Fallible + Allocator + Writer + ?Sized,
    S::Error: rancor::Source,
{
    fn serialize(&self, serializer: &mut S) -> std::result::Result<StreamedVecResolver, S::Error> {
        let mut key_end = 0u64;
        let mut len = 0;
        // The first pass (`keyspace_sources`) read every entry, checking its blocks: this one
        // cannot meet damage, but would stop at it rather than write a wrong entry.
        let mut damage = None;
        let mut entries = self
            .0
            .iter()
            .map_err(rancor::Source::new)?
            .map_while(|entry| match entry {
                Ok(entry) => Some(entry),
                Err(error) => {
                    damage = Some(error);
                    None
                }
            })
            .map(|(key, loc)| {
                key_end += key.len() as u64;
                len += 1;
                CheckpointEntry {
                    key_end,
                    segment: loc.segment,
                    offset: loc.offset,
                    len: loc.len,
                    crc: loc.crc,
                }
            });
        let vec = ArchivedVec::serialize_from_unknown_length_iter(&mut entries, serializer)?;
        drop(entries);
        if let Some(error) = damage {
            return Err(rancor::Source::new(error));
        }
        Ok(StreamedVecResolver { vec, len })
    }
}

/// The streamed writer's sink: gathers the body in a buffer, writes it to the file after the
/// header's place a buffer at a time, and computes its blocks' CRCs on the way.
struct BodyWriter<'a> {
    file: &'a dyn BackendFile,
    buffer: Vec<u8>,
    /// Body bytes written to the file so far.
    written: u64,
    /// The CRC of the block being written, and how many of its bytes were written.
    block_crc: crc32fast::Hasher,
    block_fill: usize,
    /// The CRCs of the blocks written whole.
    block_crcs: Vec<u32>,
    /// The error of the write that failed, kept whole: through the serialiser only a copy of
    /// its kind and text comes back.
    error: Option<io::Error>,
}

impl BodyWriter<'_> {
    fn flush(&mut self) -> io::Result<()> {
        self.file
            .write_all_at(&self.buffer, CHECKPOINT_HEADER_LEN as u64 + self.written)?;
        let mut bytes = self.buffer.as_slice();
        while !bytes.is_empty() {
            let (now, later) = bytes.split_at((BLOCK_LEN - self.block_fill).min(bytes.len()));
            self.block_crc.update(now);
            self.block_fill += now.len();
            if self.block_fill == BLOCK_LEN {
                let full = std::mem::replace(&mut self.block_crc, crc32fast::Hasher::new());
                self.block_crcs.push(full.finalize());
                self.block_fill = 0;
            }
            bytes = later;
        }
        self.written += self.buffer.len() as u64;
        self.buffer.clear();
        Ok(())
    }
}

impl Positional for BodyWriter<'_> {
    fn pos(&self) -> usize {
        self.written as usize + self.buffer.len()
    }
}

impl<E: rancor::Source> Writer<E> for BodyWriter<'_> {
    fn write(&mut self, mut bytes: &[u8]) -> std::result::Result<(), E> {
        while !bytes.is_empty() {
            let room = WRITE_BUFFER_LEN - self.buffer.len();
            let (now, later) = bytes.split_at(room.min(bytes.len()));
            self.buffer.extend_from_slice(now);
            bytes = later;
            if self.buffer.len() == WRITE_BUFFER_LEN
                && let Err(error) = self.flush()
            {
                let failed = io::Error::new(error.kind(), error.to_string());
                self.error = Some(error);
                return Err(E::new(failed));
            }
        }
        Ok(())
    }
}

/// The same archive serialised in memory, as checkpoints were written before they were
/// streamed: the reference the streamed writer is tested against.
#[cfg(test)]
pub(crate) fn encode(
    directory: &Directory,
    next_seq: u64,
    log_segment: u32,
    log_offset: usize,
) -> Vec<u8> {
    with_blocks(&archived_body(directory, next_seq, log_segment, log_offset))
}

/// The same checkpoint in version 2 (whole-body CRC), as builds before issue 31 wrote it: only
/// for tests of the upgrade path.
pub(crate) fn encode_v2(
    directory: &Directory,
    next_seq: u64,
    log_segment: u32,
    log_offset: usize,
) -> Vec<u8> {
    with_header(
        CHECKPOINT_VERSION_2,
        &archived_body(directory, next_seq, log_segment, log_offset),
    )
}

/// The body of versions 2 and 3, serialised in memory.
fn archived_body(
    directory: &Directory,
    next_seq: u64,
    log_segment: u32,
    log_offset: usize,
) -> rkyv::util::AlignedVec {
    let (keyspaces, live) = keyspaces_of(directory);
    let body = crate::checkpoint_archive::CheckpointBody {
        next_seq,
        log_segment,
        log_offset: log_offset as u64,
        next_keyspace_id: directory.next_keyspace_id,
        keyspaces,
        live,
    };
    rkyv::to_bytes::<rancor::Error>(&body).expect("serialising into memory cannot fail")
}

/// The same checkpoint in version 1, as builds before issue 14 wrote it: only for tests of
/// the upgrade path (this build never writes version 1 into a store).
pub(crate) fn encode_v1(
    directory: &Directory,
    next_seq: u64,
    log_segment: u32,
    log_offset: usize,
) -> Vec<u8> {
    let (keyspaces, _) = keyspaces_of(directory);
    let keyspaces = keyspaces
        .into_iter()
        .map(|keyspace| CheckpointKeyspaceV1 {
            id: keyspace.id,
            name: keyspace.name,
            key_bytes: keyspace.key_bytes,
            entries: keyspace.entries,
        })
        .collect();
    let body = CheckpointBodyV1 {
        next_seq,
        log_segment,
        log_offset: log_offset as u64,
        next_keyspace_id: directory.next_keyspace_id,
        keyspaces,
    };
    let archived =
        rkyv::to_bytes::<rancor::Error>(&body).expect("serialising into memory cannot fail");
    with_header(CHECKPOINT_VERSION_1, &archived)
}

/// The fields of a checkpoint header.
struct Header {
    version: u32,
    /// Versions 1 and 2: the CRC of the body; version 3: of the block table.
    crc: u32,
    body_len: u64,
    /// Version 3: log2 of the block length.
    block_shift: u32,
}

impl Header {
    /// Version 3: the number of blocks, and so of CRCs in the table.
    fn blocks(&self) -> u64 {
        if self.version == CHECKPOINT_VERSION {
            self.body_len.div_ceil(1 << self.block_shift)
        } else {
            0
        }
    }

    /// The file's expected length: the header, the body and (version 3) the block table.
    fn file_len(&self) -> Option<u64> {
        (CHECKPOINT_HEADER_LEN as u64)
            .checked_add(self.body_len)?
            .checked_add(self.blocks().checked_mul(4)?)
    }
}

fn parse_header(file: &[u8]) -> std::result::Result<Header, FormatError> {
    let header = file
        .get(..CHECKPOINT_HEADER_LEN)
        .ok_or_else(|| FormatError::new(0, "checkpoint is shorter than its header"))?;
    if header[0..8] != CHECKPOINT_MAGIC {
        return Err(FormatError::new(0, "bad checkpoint magic"));
    }
    let version = u32::from_le_bytes(header[8..12].try_into().expect("4 bytes"));
    let block_shift = match version {
        CHECKPOINT_VERSION_1 | CHECKPOINT_VERSION_2 => {
            if header[24..32].iter().any(|&b| b != 0) {
                return Err(FormatError::new(
                    24,
                    "reserved checkpoint header bytes are not zero",
                ));
            }
            0
        }
        CHECKPOINT_VERSION => {
            let stored = u32::from_le_bytes(header[28..32].try_into().expect("4 bytes"));
            if crc32fast::hash(&header[..28]) != stored {
                return Err(FormatError::new(28, "checkpoint header checksum mismatch"));
            }
            let block_len = u32::from_le_bytes(header[24..28].try_into().expect("4 bytes"));
            let shift = block_len.trailing_zeros();
            if !block_len.is_power_of_two() || !BLOCK_SHIFTS.contains(&shift) {
                return Err(FormatError::new(
                    24,
                    format!("checkpoint block length {block_len} is invalid"),
                ));
            }
            shift
        }
        _ => {
            return Err(FormatError::new(
                8,
                format!("unsupported checkpoint version {version}"),
            ));
        }
    };
    Ok(Header {
        version,
        crc: u32::from_le_bytes(header[12..16].try_into().expect("4 bytes")),
        body_len: u64::from_le_bytes(header[16..24].try_into().expect("8 bytes")),
        block_shift,
    })
}

/// Checks a version 3 block table against the header's CRC; returns the blocks' CRCs.
fn parse_block_table(
    header: &Header,
    table: &[u8],
) -> std::result::Result<Box<[u32]>, FormatError> {
    let table_offset = CHECKPOINT_HEADER_LEN as u64 + header.body_len;
    if table.len() as u64 != header.blocks() * 4 {
        return Err(FormatError::new(
            table_offset,
            format!(
                "checkpoint block table is {} bytes, {} blocks need {}",
                table.len(),
                header.blocks(),
                header.blocks() * 4
            ),
        ));
    }
    if crc32fast::hash(table) != header.crc {
        return Err(FormatError::new(
            table_offset,
            "checkpoint block table checksum mismatch",
        ));
    }
    Ok(table
        .chunks_exact(4)
        .map(|crc| u32::from_le_bytes(crc.try_into().expect("4 bytes")))
        .collect())
}

/// Checks every block of a version 3 `body` against `crcs` (offsets in the body).
fn check_blocks(
    header: &Header,
    crcs: &[u32],
    body: &[u8],
) -> std::result::Result<(), FormatError> {
    for (block, (bytes, &crc)) in body.chunks(1 << header.block_shift).zip(crcs).enumerate() {
        if crc32fast::hash(bytes) != crc {
            let start = (block as u64) << header.block_shift;
            return Err(FormatError::new(
                start,
                format!(
                    "checkpoint block {block} (body bytes {start}..{}) does not match its checksum",
                    start + (1u64 << header.block_shift)
                ),
            ));
        }
    }
    Ok(())
}

/// Checks a version 1 or 2 body against the header's length and CRC.
fn check_body(header: &Header, body: &[u8]) -> std::result::Result<(), FormatError> {
    if body.len() as u64 != header.body_len {
        return Err(FormatError::new(
            16,
            format!(
                "checkpoint body is {} bytes, header says {}",
                body.len(),
                header.body_len
            ),
        ));
    }
    if crc32fast::hash(body) != header.crc {
        return Err(FormatError::new(12, "checkpoint checksum mismatch"));
    }
    Ok(())
}

/// Checks the header and CRC of a checkpoint file (either version), then decodes its body into
/// a directory held wholly in memory (salvage, the fuzzers, and version 1 files at open).
///
/// `segment_len` gives the length of each existing segment (`None` if there is no such
/// segment); every value location must fall inside one.
pub(crate) fn decode(
    file: &[u8],
    segment_len: &dyn Fn(u32) -> Option<usize>,
) -> std::result::Result<LoadedCheckpoint, FormatError> {
    let header = parse_header(file)?;
    let at_body =
        |e: FormatError| FormatError::new(CHECKPOINT_HEADER_LEN as u64 + e.offset, e.reason);
    let body = if header.version == CHECKPOINT_VERSION {
        if Some(file.len() as u64) != header.file_len() {
            return Err(FormatError::new(
                16,
                format!(
                    "checkpoint file is {} bytes, its header says {:?}",
                    file.len(),
                    header.file_len()
                ),
            ));
        }
        let body_end = CHECKPOINT_HEADER_LEN + header.body_len as usize;
        let crcs = parse_block_table(&header, &file[body_end..])?;
        let body = &file[CHECKPOINT_HEADER_LEN..body_end];
        check_blocks(&header, &crcs, body).map_err(at_body)?;
        body
    } else {
        let body = &file[CHECKPOINT_HEADER_LEN..];
        check_body(&header, body)?;
        body
    };
    let decoded = if header.version == CHECKPOINT_VERSION_1 {
        decode_body_v1(body, segment_len)
    } else {
        decode_body(body, segment_len)
    };
    decoded.map_err(|e| FormatError::new(CHECKPOINT_HEADER_LEN as u64 + e.offset, e.reason))
}

/// Decodes a version 2 checkpoint body into memory (no CRC check: the caller did it, or is a
/// fuzzer).
pub(crate) fn decode_body(
    body: &[u8],
    segment_len: &dyn Fn(u32) -> Option<usize>,
) -> std::result::Result<LoadedCheckpoint, FormatError> {
    let mut aligned = AlignedVec::<16>::with_capacity(body.len());
    aligned.extend_from_slice(body);
    let archived = rkyv::access::<ArchivedCheckpointBody, rancor::Error>(&aligned)
        .map_err(|e| FormatError::new(0, format!("checkpoint archive is invalid: {e}")))?;
    let (log_segment, log_offset) = check_log_position(
        archived.log_segment.to_native(),
        archived.log_offset.to_native(),
        segment_len,
    )?;
    let next_keyspace_id = archived.next_keyspace_id.to_native();
    check_keyspaces(views(&archived.keyspaces), next_keyspace_id, segment_len)?;
    let directory = directory_in_memory(views(&archived.keyspaces), next_keyspace_id)?;
    Ok(LoadedCheckpoint {
        live: LiveBytes::from_directory(&directory)
            .map_err(|e| FormatError::new(0, e.to_string()))?,
        directory,
        next_seq: archived.next_seq.to_native(),
        log_segment,
        log_offset,
    })
}

/// Decodes a version 1 checkpoint body into memory.
pub(crate) fn decode_body_v1(
    body: &[u8],
    segment_len: &dyn Fn(u32) -> Option<usize>,
) -> std::result::Result<LoadedCheckpoint, FormatError> {
    let mut aligned = AlignedVec::<16>::with_capacity(body.len());
    aligned.extend_from_slice(body);
    let archived = rkyv::access::<ArchivedCheckpointBodyV1, rancor::Error>(&aligned)
        .map_err(|e| FormatError::new(0, format!("checkpoint archive is invalid: {e}")))?;
    let (log_segment, log_offset) = check_log_position(
        archived.log_segment.to_native(),
        archived.log_offset.to_native(),
        segment_len,
    )?;
    let next_keyspace_id = archived.next_keyspace_id.to_native();
    check_keyspaces(views_v1(&archived.keyspaces), next_keyspace_id, segment_len)?;
    let directory = directory_in_memory(views_v1(&archived.keyspaces), next_keyspace_id)?;
    Ok(LoadedCheckpoint {
        live: LiveBytes::from_directory(&directory)
            .map_err(|e| FormatError::new(0, e.to_string()))?,
        directory,
        next_seq: archived.next_seq.to_native(),
        log_segment,
        log_offset,
    })
}

/// How much of a mapped checkpoint [`open`] checks before serving it.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Checks {
    /// `rkyv` bytecheck, the CRC of the whole body (version 2) or of the blocks the structure
    /// lies in (version 3: the others are checked as reads reach them), and the checks that
    /// cost nothing per key:
    /// the log position, keyspace ids and names, and that each keyspace's last key ends
    /// exactly at the end of its key bytes. Enough for memory safety (every accessor is
    /// bounds-checked) and, through the CRC, to detect damage; what is left, key order and each
    /// value location, can only be wrong if the writer was, and is checked by `Store::verify`
    /// (and each value location again when its value is read).
    Open,
    /// Everything, per key as well, and every block (`Store::verify`, the in-memory decoders).
    Thorough,
}

/// Opens the checkpoint file at `path` for a normal open: a version 3 or 2 file is mapped and
/// served in place (the directory's keyspaces refer to it), a version 1 file is loaded into
/// memory (always with every check). Any damage found is an [`Error::Corrupt`] naming the
/// file; in a version 3 file opened with [`Checks::Open`], damage outside the blocks of the
/// archive's structure is found by the reads that touch it instead.
pub(crate) fn open(
    backend: &Arc<dyn Backend>,
    path: &Path,
    segment_len: &dyn Fn(u32) -> Option<usize>,
    checks: Checks,
) -> Result<LoadedCheckpoint> {
    let corrupt = |e: FormatError| Error::corrupt(path, e.offset, e.reason);
    let file = backend
        .open_file_read_only(path)
        .map_err(|e| Error::io("open checkpoint", path, e))?;
    let file_len = file
        .len()
        .map_err(|e| Error::io("read checkpoint", path, e))?;
    let mut header_bytes = [0u8; CHECKPOINT_HEADER_LEN];
    if file_len < CHECKPOINT_HEADER_LEN as u64 {
        return Err(corrupt(FormatError::new(
            0,
            "checkpoint is shorter than its header",
        )));
    }
    file.read_exact_at(&mut header_bytes, 0)
        .map_err(|e| Error::io("read checkpoint", path, e))?;
    let header = parse_header(&header_bytes).map_err(corrupt)?;
    if header.version == CHECKPOINT_VERSION_1 {
        let bytes = backend
            .read_file(path)
            .map_err(|e| Error::io("read checkpoint", path, e))?;
        return decode(&bytes, segment_len).map_err(corrupt);
    }
    if Some(file_len) != header.file_len() {
        return Err(corrupt(FormatError::new(
            16,
            format!(
                "checkpoint file is {file_len} bytes, its header says {}",
                header
                    .file_len()
                    .map_or_else(|| "more than can be".to_string(), |len| len.to_string())
            ),
        )));
    }
    let body_len = usize::try_from(header.body_len)
        .map_err(|_| corrupt(FormatError::new(16, "checkpoint too large to map")))?;
    let at_body =
        |e: FormatError| FormatError::new(CHECKPOINT_HEADER_LEN as u64 + e.offset, e.reason);
    let semantic = |archived: &ArchivedCheckpointBody| {
        check_log_position(
            archived.log_segment.to_native(),
            archived.log_offset.to_native(),
            segment_len,
        )
        .map_err(at_body)?;
        let next_keyspace_id = archived.next_keyspace_id.to_native();
        match checks {
            Checks::Open => check_keyspace_table(views(&archived.keyspaces), next_keyspace_id),
            Checks::Thorough => {
                check_keyspaces(views(&archived.keyspaces), next_keyspace_id, segment_len)
            }
        }
        .map_err(at_body)
    };
    let invalid =
        |reason| FormatError::new(CHECKPOINT_HEADER_LEN as u64, format!("checkpoint {reason}"));
    let (archive, blocks) = if header.version == CHECKPOINT_VERSION_2 {
        let archive = MappedArchive::<ArchivedCheckpointBody>::open(
            file,
            CHECKPOINT_HEADER_LEN,
            body_len,
            |bytes, archived| {
                check_body(&header, bytes)?;
                semantic(archived)
            },
            invalid,
        )
        .map_err(corrupt)?;
        (archive, None)
    } else {
        // Version 3: the header and the block table (4 bytes per block, read, not mapped),
        // then the archive's structure on the map, and the blocks that structure lies in; the
        // keys' blocks are checked as reads reach them (`BaseKeys`), or all of them for
        // `Checks::Thorough`.
        let mut table = vec![0u8; header.blocks() as usize * 4];
        file.read_exact_at(&mut table, CHECKPOINT_HEADER_LEN as u64 + header.body_len)
            .map_err(|e| Error::io("read checkpoint", path, e))?;
        let crcs = parse_block_table(&header, &table).map_err(corrupt)?;
        let blocks = Blocks::new(
            path.to_path_buf(),
            CHECKPOINT_HEADER_LEN as u64,
            header.block_shift,
            crcs,
        );
        let damaged = |e: Error| match e {
            Error::Corrupt { offset, reason, .. } => FormatError::new(offset, reason),
            other => FormatError::new(0, other.to_string()),
        };
        let archive = match checks {
            Checks::Open => MappedArchive::<ArchivedCheckpointBody>::open_in_place(
                file,
                CHECKPOINT_HEADER_LEN,
                body_len,
                |mapped, bytes, archived| {
                    let checked = CheckedBody {
                        blocks: &blocks,
                        body: bytes,
                        file: mapped,
                        body_start: CHECKPOINT_HEADER_LEN,
                    };
                    check_structure_blocks(checked, archived).map_err(damaged)?;
                    semantic(archived)
                },
                invalid,
            ),
            // Every block, through the probe map as for version 2, so that reading them all
            // leaves no page of this process resident; the kept archive then knows them all
            // checked (the file's bytes never change).
            Checks::Thorough => MappedArchive::<ArchivedCheckpointBody>::open(
                file,
                CHECKPOINT_HEADER_LEN,
                body_len,
                |bytes, archived| {
                    check_blocks(&header, &blocks.crcs, bytes).map_err(at_body)?;
                    semantic(archived)
                },
                invalid,
            ),
        }
        .map_err(corrupt)?;
        if checks == Checks::Thorough {
            blocks.mark_all_checked();
        }
        (archive, Some(blocks))
    };
    let archive = Arc::new(CheckpointArchive { archive, blocks });
    let body = archive.archive.get();
    let next_keyspace_id = body.next_keyspace_id.to_native();
    let mut directory = Directory {
        next_keyspace_id,
        ..Directory::default()
    };
    for (index, keyspace) in body.keyspaces.iter().enumerate() {
        let id = keyspace.id.to_native();
        let name: Arc<str> = Arc::from(keyspace.name.as_str());
        directory.names.insert(name.clone(), id);
        directory.keyspaces.insert(
            id,
            KeyspaceState::with_base(
                name,
                Base {
                    archive: archive.clone(),
                    index,
                },
            ),
        );
    }
    let mut live = LiveBytes::default();
    for entry in body.live.iter() {
        live.0
            .insert(entry.segment.to_native(), entry.bytes.to_native());
    }
    Ok(LoadedCheckpoint {
        directory,
        live,
        next_seq: body.next_seq.to_native(),
        log_segment: body.log_segment.to_native(),
        log_offset: usize::try_from(body.log_offset.to_native()).unwrap_or(usize::MAX),
    })
}

/// Checks the blocks holding every byte an open reads of a version 3 archive: the root, the
/// keyspace table and each keyspace's name and last entry (what bytecheck and
/// [`check_keyspace_table`] read), and the live table. None of them grows with the key count.
fn check_structure_blocks(
    checked: CheckedBody<'_>,
    archived: &ArchivedCheckpointBody,
) -> Result<()> {
    checked.check(std::slice::from_ref(archived))?;
    checked.check(archived.keyspaces.as_slice())?;
    for keyspace in archived.keyspaces.iter() {
        checked.check(keyspace.name.as_str().as_bytes())?;
        let entries = keyspace.entries.as_slice();
        checked.check(&entries[entries.len().saturating_sub(1)..])?;
    }
    checked.check(archived.live.as_slice())
}

fn check_log_position(
    log_segment: u32,
    log_offset: u64,
    segment_len: &dyn Fn(u32) -> Option<usize>,
) -> std::result::Result<(u32, usize), FormatError> {
    let log_offset = usize::try_from(log_offset).unwrap_or(usize::MAX);
    let log_segment_len = segment_len(log_segment).ok_or_else(|| {
        FormatError::new(
            0,
            format!("checkpoint log segment {log_segment} does not exist"),
        )
    })?;
    if log_offset < SEGMENT_HEADER_LEN || log_offset > log_segment_len || log_offset % ALIGN != 0 {
        return Err(FormatError::new(
            0,
            format!("checkpoint log offset {log_offset} is invalid"),
        ));
    }
    Ok((log_segment, log_offset))
}

/// One archived keyspace of either version, as the checks and the in-memory decoder see it.
#[derive(Clone, Copy)]
struct KeyspaceView<'a> {
    id: u32,
    name: &'a str,
    keys: BaseKeys<'a>,
    /// Version 2: `keys.fences` must hold one fence per [`FENCE_EVERY`] keys.
    fenced: bool,
}

fn views(
    keyspaces: &ArchivedVec<ArchivedCheckpointKeyspace>,
) -> impl Iterator<Item = KeyspaceView<'_>> + Clone {
    keyspaces.iter().map(|keyspace| KeyspaceView {
        id: keyspace.id.to_native(),
        name: keyspace.name.as_str(),
        keys: BaseKeys {
            key_bytes: keyspace.key_bytes.as_slice(),
            entries: keyspace.entries.as_slice(),
            fences: keyspace.fences.as_slice(),
            checked: None,
        },
        fenced: true,
    })
}

fn views_v1(
    keyspaces: &ArchivedVec<ArchivedCheckpointKeyspaceV1>,
) -> impl Iterator<Item = KeyspaceView<'_>> + Clone {
    keyspaces.iter().map(|keyspace| KeyspaceView {
        id: keyspace.id.to_native(),
        name: keyspace.name.as_str(),
        keys: BaseKeys {
            key_bytes: keyspace.key_bytes.as_slice(),
            entries: keyspace.entries.as_slice(),
            fences: &[],
            checked: None,
        },
        fenced: false,
    })
}

/// The checks of [`Checks::Open`] on the keyspace table: ids below `next_keyspace_id`, ids and
/// names unique and non-empty, the last key of each keyspace ending exactly at the end of its
/// key bytes, one fence per [`FENCE_EVERY`] keys.
fn check_keyspace_table<'a>(
    keyspaces: impl Iterator<Item = KeyspaceView<'a>>,
    next_keyspace_id: u32,
) -> std::result::Result<(), FormatError> {
    let mut ids = HashSet::new();
    let mut names = HashSet::new();
    for KeyspaceView {
        id,
        name,
        keys,
        fenced,
    } in keyspaces
    {
        if id >= next_keyspace_id || name.is_empty() || !ids.insert(id) || !names.insert(name) {
            return Err(FormatError::new(
                0,
                format!("checkpoint keyspace {id} ({name:?}) is invalid"),
            ));
        }
        let last_end = keys
            .entries
            .last()
            .map_or(0, |entry| entry.key_end.to_native());
        if last_end != keys.key_bytes.len() as u64 {
            return Err(FormatError::new(
                0,
                format!("checkpoint key bounds invalid in keyspace {id}"),
            ));
        }
        if fenced && keys.fences.len() != keys.entries.len().div_ceil(FENCE_EVERY) {
            return Err(FormatError::new(
                0,
                format!(
                    "checkpoint keyspace {id} has {} fences for {} keys",
                    keys.fences.len(),
                    keys.entries.len()
                ),
            ));
        }
    }
    Ok(())
}

/// Every check of every keyspace: those of [`check_keyspace_table`], then per key: keys
/// strictly increasing with in-range bounds covering `key_bytes` exactly, every fence the
/// prefix of its key, every value location inside an existing segment and aligned.
fn check_keyspaces<'a>(
    keyspaces: impl Iterator<Item = KeyspaceView<'a>> + Clone,
    next_keyspace_id: u32,
    segment_len: &dyn Fn(u32) -> Option<usize>,
) -> std::result::Result<(), FormatError> {
    check_keyspace_table(keyspaces.clone(), next_keyspace_id)?;
    let min_value_offset = SEGMENT_HEADER_LEN + FRAME_HEADER_LEN + OP_HEADER_LEN;
    // Most entries point into few segments: remember the last one looked up.
    let mut last_segment: Option<(u32, Option<usize>)> = None;
    for KeyspaceView { id, keys, .. } in keyspaces {
        let key_bytes = keys.key_bytes;
        let mut key_start = 0usize;
        let mut previous: Option<&[u8]> = None;
        for (index, entry) in keys.entries.iter().enumerate() {
            let key_end = usize::try_from(entry.key_end.to_native()).unwrap_or(usize::MAX);
            let key = key_bytes.get(key_start..key_end).ok_or_else(|| {
                FormatError::new(0, format!("checkpoint key bounds invalid in keyspace {id}"))
            })?;
            if previous.is_some_and(|p| p >= key) {
                return Err(FormatError::new(
                    0,
                    format!("checkpoint keys out of order in keyspace {id}"),
                ));
            }
            if index % FENCE_EVERY == 0
                && let Some(fence) = keys.fences.get(index / FENCE_EVERY)
                && fence.to_native() != key_prefix(key)
            {
                return Err(FormatError::new(
                    0,
                    format!(
                        "checkpoint fence {} is wrong in keyspace {id}",
                        index / FENCE_EVERY
                    ),
                ));
            }
            let segment = entry.segment.to_native();
            let offset = entry.offset.to_native() as usize;
            let len = entry.len.to_native() as usize;
            let segment_bytes = match last_segment {
                Some((cached, bytes)) if cached == segment => bytes,
                _ => {
                    let bytes = segment_len(segment);
                    last_segment = Some((segment, bytes));
                    bytes
                }
            };
            let fits = segment_bytes.is_some_and(|segment_bytes| {
                offset >= min_value_offset
                    && offset.is_multiple_of(ALIGN)
                    && offset + len <= segment_bytes
            });
            if !fits {
                return Err(FormatError::new(
                    0,
                    format!(
                        "checkpoint value location (segment {segment}, offset {offset}, {len} bytes) is invalid"
                    ),
                ));
            }
            previous = Some(key);
            key_start = key_end;
        }
    }
    Ok(())
}

/// Builds an in-memory directory of checked keyspaces (their bytes all checked, so no read
/// fails; one that did would be reported as the damage it is).
fn directory_in_memory<'a>(
    keyspaces: impl Iterator<Item = KeyspaceView<'a>>,
    next_keyspace_id: u32,
) -> std::result::Result<Directory, FormatError> {
    let as_format = |e: Error| FormatError::new(0, e.to_string());
    let mut directory = Directory {
        next_keyspace_id,
        ..Directory::default()
    };
    for KeyspaceView { id, name, keys, .. } in keyspaces {
        let name: Arc<str> = Arc::from(name);
        let mut state = KeyspaceState::new(name.clone());
        for index in 0..keys.len() {
            let (key, loc) = (keys.key(index), keys.loc(index));
            state
                .put(key.map_err(as_format)?, loc.map_err(as_format)?)
                .map_err(as_format)?;
        }
        directory.names.insert(name, id);
        directory.keyspaces.insert(id, state);
    }
    Ok(directory)
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;
    use std::path::{Path, PathBuf};

    use proptest::prelude::*;

    use super::*;
    use crate::backend::MemoryBackend;
    use crate::directory::BaseReads;
    use crate::format::OpKind;
    use crate::format::ValueLoc;
    use std::collections::HashMap;

    const DIR: &str = "/checkpoint";

    /// The tests' value locations are made up: segments 0 to 15 exist and are large.
    fn any_segment(id: u32) -> Option<usize> {
        (id < 16).then_some(u32::MAX as usize)
    }

    fn loc(n: u32) -> ValueLoc {
        let first_value = (SEGMENT_HEADER_LEN + FRAME_HEADER_LEN + OP_HEADER_LEN) as u32;
        ValueLoc {
            segment: 1 + n % 3,
            offset: first_value + 8 * (n % 100_000),
            len: n % 300,
            crc: n.wrapping_mul(0x9E37_79B9),
        }
    }

    /// A directory held wholly in memory: keyspace `i` (id `2 i`, so that ids have gaps) is
    /// named and holds the keys given; the values' locations are made up.
    fn in_memory(keyspaces: &[(&str, Vec<Vec<u8>>)]) -> Directory {
        let mut directory = Directory::default();
        let mut n = 0;
        for (index, (name, keys)) in keyspaces.iter().enumerate() {
            let id = 2 * index as u32;
            let name: Arc<str> = Arc::from(*name);
            let mut state = KeyspaceState::new(name.clone());
            for key in keys {
                n += 1;
                state.put(key, loc(n)).unwrap();
            }
            directory.names.insert(name, id);
            directory.keyspaces.insert(id, state);
            directory.next_keyspace_id = id + 1;
        }
        directory
    }

    /// Streams a checkpoint of `directory` into file `name` of `backend`; returns its path.
    fn write_file(backend: &MemoryBackend, name: &str, directory: &Directory) -> PathBuf {
        let dir = Path::new(DIR);
        backend.create_dir_all(dir).unwrap();
        let path = dir.join(name);
        let file = backend.create_file(&path).unwrap();
        write(file.as_ref(), directory, 7, 1, 4096).unwrap();
        path
    }

    /// Every keyspace's id, name and entries, in order.
    type KeyspaceEntries = Vec<(u32, String, Vec<(Vec<u8>, ValueLoc)>)>;

    fn entries(directory: &Directory) -> KeyspaceEntries {
        directory
            .keyspaces
            .iter()
            .map(|(&id, keyspace)| {
                let keys = keyspace
                    .iter()
                    .unwrap()
                    .map(|entry| entry.unwrap())
                    .map(|(k, loc)| (k.to_vec(), loc))
                    .collect();
                (id, keyspace.name.to_string(), keys)
            })
            .collect()
    }

    /// Streams `directory` into a file and checks that the file is, byte for byte, what the
    /// in-memory encoder makes of it, and that it opens with every check to the same
    /// directory and live bytes. Returns the file's bytes.
    fn check_streamed(directory: &Directory) -> Vec<u8> {
        let backend = MemoryBackend::new();
        let path = write_file(&backend, "ckpt", directory);
        let streamed = backend.read_file(&path).unwrap();
        let reference = encode(directory, 7, 1, 4096);
        // The size checked against the format's limit before writing is never below the
        // real one (so a checkpoint the format cannot hold is refused, not written).
        let (_, _, estimate) = keyspace_sources(directory).unwrap();
        let body_len = u64::from_le_bytes(reference[16..24].try_into().unwrap());
        assert!(
            estimate >= body_len,
            "estimated {estimate} bytes, the body has {body_len}"
        );
        let first_difference = streamed.iter().zip(&reference).position(|(a, b)| a != b);
        assert!(
            streamed == reference,
            "the streamed checkpoint ({} bytes) differs from the in-memory encoding ({} bytes), first at byte {first_difference:?}",
            streamed.len(),
            reference.len()
        );
        let backend: Arc<dyn Backend> = Arc::new(backend);
        let loaded = open(&backend, &path, &any_segment, Checks::Thorough).unwrap();
        assert_eq!(entries(&loaded.directory), entries(directory));
        assert_eq!(
            loaded.directory.next_keyspace_id,
            directory.next_keyspace_id
        );
        let sorted = |live: &LiveBytes| {
            live.0
                .iter()
                .map(|(&s, &b)| (s, b))
                .collect::<BTreeMap<_, _>>()
        };
        assert_eq!(
            sorted(&loaded.live),
            sorted(&LiveBytes::from_directory(directory).unwrap())
        );
        assert_eq!(
            (loaded.next_seq, loaded.log_segment, loaded.log_offset),
            (7, 1, 4096)
        );
        streamed
    }

    fn keys(range: std::ops::Range<u32>) -> Vec<Vec<u8>> {
        range.map(|i| format!("key-{i:06}").into_bytes()).collect()
    }

    #[test]
    fn an_empty_directory_streams_as_it_encodes() {
        check_streamed(&Directory::default());
        check_streamed(&Directory {
            next_keyspace_id: 9,
            ..Directory::default()
        });
    }

    #[test]
    fn empty_keyspaces_stream_as_they_encode() {
        // Names of 1 to 8 bytes are stored inline in the archived string, longer ones apart.
        check_streamed(&in_memory(&[
            ("a", vec![]),
            ("eight_ch", vec![]),
            ("nine_char", vec![]),
            ("a much longer keyspace name, out of line", vec![]),
        ]));
        check_streamed(&in_memory(&[
            ("empty", vec![]),
            ("full", keys(0..100)),
            ("empty again", vec![]),
        ]));
    }

    #[test]
    fn many_keyspaces_stream_as_they_encode() {
        let names: Vec<String> = (0..300).map(|i| format!("keyspace-{i}")).collect();
        let keyspaces: Vec<(&str, Vec<Vec<u8>>)> = names
            .iter()
            .enumerate()
            .map(|(i, name)| (name.as_str(), keys(0..(i as u32 % 7) * 11)))
            .collect();
        check_streamed(&in_memory(&keyspaces));
    }

    #[test]
    fn keys_of_every_length_stream_as_they_encode() {
        // The empty key, keys that share their first 8 bytes (equal fences), and lengths that
        // leave the entries unaligned after the key bytes.
        let mut varied: Vec<Vec<u8>> = (0..=200usize)
            .map(|len| (0..len).map(|i| (i * 7 % 251) as u8).collect())
            .collect();
        varied.extend((0..500u32).map(|i| format!("prefix00{i}").into_bytes()));
        varied.extend((0..300u32).map(|i| vec![b'z'; 1 + i as usize % 97]));
        varied.sort();
        varied.dedup();
        check_streamed(&in_memory(&[("varied", varied), ("one", vec![vec![0xff]])]));
    }

    #[test]
    fn a_body_larger_than_the_buffer_streams_as_it_encodes() {
        // 40-byte keys: the buffer fills in the middle of a key and of an entry, several times.
        let long_keys: Vec<Vec<u8>> = (0..80_000u32)
            .map(|i| format!("a-long-key-{i:029}").into_bytes())
            .collect();
        let bytes = check_streamed(&in_memory(&[("long", long_keys), ("short", keys(0..10))]));
        assert!(bytes.len() > 2 * WRITE_BUFFER_LEN, "{} bytes", bytes.len());
    }

    #[test]
    fn a_body_larger_than_the_buffer_is_written_a_buffer_at_a_time() {
        let long_keys: Vec<Vec<u8>> = (0..80_000u32)
            .map(|i| format!("a-long-key-{i:029}").into_bytes())
            .collect();
        let directory = in_memory(&[("long", long_keys)]);
        let backend = MemoryBackend::new();
        let before = backend.counters();
        let path = write_file(&backend, "ckpt", &directory);
        let after = backend.counters();
        let file_len = backend.read_file(&path).unwrap().len();
        // The header's place, the body a buffer at a time, the block table, the header.
        let file = backend.read_file(&path).unwrap();
        let body_len = u64::from_le_bytes(file[16..24].try_into().unwrap());
        let body_writes = body_len.div_ceil(WRITE_BUFFER_LEN as u64);
        assert!(body_writes >= 3, "{file_len} bytes");
        assert_eq!(after.writes - before.writes, 1 + body_writes + 1 + 1);
    }

    /// Writes `directory`, opens the file as a store would (mapped, keyspaces based on the
    /// archive), and returns the opened directory with the backend that holds its file.
    fn mapped(directory: &Directory) -> (Directory, Arc<dyn Backend>) {
        let backend = MemoryBackend::new();
        let path = write_file(&backend, "base", directory);
        let backend: Arc<dyn Backend> = Arc::new(backend);
        let loaded = open(&backend, &path, &any_segment, Checks::Open).unwrap();
        (loaded.directory, backend)
    }

    fn keyspace<'a>(directory: &'a mut Directory, name: &str) -> &'a mut KeyspaceState {
        let id = directory.names[name];
        directory.keyspaces.get_mut(&id).unwrap()
    }

    /// A frame's payload of `ops` (kind, keyspace, key), as a batch encodes it; a put's value
    /// is its key.
    fn frame_payload(ops: &[(OpKind, u32, &[u8])]) -> Vec<u8> {
        let mut payload = Vec::new();
        for &(kind, keyspace, key) in ops {
            let value = if kind == OpKind::Put { key } else { &[] };
            crate::format::encode_op(&mut payload, kind, keyspace, key, value);
        }
        assert_eq!(
            crate::format::Frame {
                seq: 1,
                payload: &payload,
                len: 0
            }
            .ops()
            .count(),
            ops.len()
        );
        payload
    }

    /// What applying `payload` to `directory` gives (entries, key count, live bytes), with
    /// the base locations `reads` found before, or with none (every one searched).
    fn applied(
        directory: &Directory,
        payload: &[u8],
        reads: Option<&BaseReads>,
    ) -> (KeyspaceEntries, usize, HashMap<u32, u64>) {
        let mut directory = directory.clone();
        let mut live = LiveBytes::from_directory(&directory).unwrap();
        let ops = || crate::format::Frame {
            seq: 1,
            payload,
            len: FRAME_HEADER_LEN + payload.len(),
        };
        match reads {
            Some(reads) => directory.apply_ops_read(ops().ops(), reads, 9, 0, &mut live),
            None => directory.apply_ops(ops().ops(), 9, 0, &mut live),
        }
        .unwrap();
        (entries(&directory), directory.total_keys(), live.0)
    }

    /// A commit's pre-read hands the base locations it found to the apply, which uses them
    /// only while the keyspace still has the base they were read from: after a checkpoint
    /// installed in between (a rebase onto another archive) or a clear earlier in the frame it
    /// searches again, and the directory ends as a plain apply (searching every key) leaves it.
    #[test]
    fn base_reads_are_used_only_on_the_base_they_were_read_from() {
        // Enough keys for several blocks, most of them not checked by the open.
        let base_keys = keys(0..50_000);
        let (directory, _backend) = mapped(&in_memory(&[("ks", base_keys.clone())]));
        let ks = directory.names["ks"];
        let (in_base, deleted, new) = (&base_keys[10][..], &base_keys[11][..], &b"key-new"[..]);
        let payload = frame_payload(&[
            (OpKind::Put, ks, in_base),
            (OpKind::Delete, ks, deleted),
            (OpKind::Put, ks, new),
        ]);
        let frame = crate::format::Frame {
            seq: 1,
            payload: &payload,
            len: FRAME_HEADER_LEN + payload.len(),
        };
        let reads = directory.check_base_reads(frame.ops()).unwrap();
        assert_eq!(
            reads.len(),
            3,
            "every put and delete is read ahead on a lazy base"
        );
        // On the base read from, the reads stand for the searches.
        assert_eq!(
            applied(&directory, &payload, Some(&reads)),
            applied(&directory, &payload, None)
        );

        // A checkpoint installed between pre-read and apply: the same keys at other
        // locations (seven keys ahead shift every made-up location), now the base.
        let mut shifted = keys(90_000..90_007);
        shifted.extend(base_keys.iter().cloned());
        let (installed, _installed_backend) = mapped(&in_memory(&[("ks", shifted)]));
        let rebased = directory.rebase(&directory, &installed);
        let (old, now) = (
            directory.keyspaces[&ks].get(in_base).unwrap(),
            rebased.keyspaces[&ks].get(in_base).unwrap(),
        );
        assert_ne!(old, now, "the stale read differs from the new base");
        let expected = applied(&rebased, &payload, None);
        assert_eq!(applied(&rebased, &payload, Some(&reads)), expected);

        // A clear takes the base away (reading it all first, so nothing after it is read
        // ahead): the put before it uses its read, the put after it adds the key again.
        let payload = frame_payload(&[
            (OpKind::Put, ks, in_base),
            (OpKind::ClearKeyspace, ks, b""),
            (OpKind::Put, ks, in_base),
        ]);
        let frame = crate::format::Frame {
            seq: 1,
            payload: &payload,
            len: FRAME_HEADER_LEN + payload.len(),
        };
        // (A base not read yet: the applies above read every block of the first.)
        let (directory, _backend) = mapped(&in_memory(&[("ks", base_keys.clone())]));
        let reads = directory.check_base_reads(frame.ops()).unwrap();
        assert_eq!(reads.len(), 1);
        let expected = applied(&directory, &payload, None);
        assert_eq!(expected.1, 1);
        assert_eq!(applied(&directory, &payload, Some(&reads)), expected);

        // Once every block was found intact nothing is read ahead.
        directory.keyspaces[&ks].check_base().unwrap();
        assert_eq!(directory.check_base_reads(frame.ops()).unwrap().len(), 0);
    }

    #[test]
    fn an_overlay_over_a_mapped_base_streams_as_it_encodes() {
        let base = in_memory(&[
            ("puts", keys(0..1000)),
            ("deletes", keys(0..1000)),
            ("cleared", keys(0..300)),
            ("dropped", keys(0..10)),
            ("untouched", keys(0..200)),
        ]);
        let (mut directory, _backend) = mapped(&base);
        assert_eq!(directory.overlay_len(), 0);
        // New keys before, between and after the base's, and new locations for base keys.
        let puts = keyspace(&mut directory, "puts");
        for (n, key) in (5000..).zip(["", "a", "key-000000", "key-0000005", "key-000999", "zz"]) {
            puts.put(key.as_bytes(), loc(n)).unwrap();
        }
        for i in (0..1000).step_by(3) {
            puts.put(format!("key-{i:06}x").as_bytes(), loc(6000 + i))
                .unwrap();
            puts.put(format!("key-{i:06}").as_bytes(), loc(7000 + i))
                .unwrap();
        }
        // Deleted: the first, the last, runs longer than a fence block, scattered ones.
        let deletes = keyspace(&mut directory, "deletes");
        for i in [0, 999]
            .into_iter()
            .chain(100..300)
            .chain((400..1000).step_by(7))
        {
            deletes.delete(format!("key-{i:06}").as_bytes()).unwrap();
        }
        let cleared = keyspace(&mut directory, "cleared");
        cleared.clear();
        cleared.put(b"after the clear", loc(8000)).unwrap();
        let dropped = directory.names.remove("dropped").unwrap();
        directory.keyspaces.remove(&dropped);
        let created: Arc<str> = Arc::from("created");
        let mut state = KeyspaceState::new(created.clone());
        state.put(b"new", loc(9000)).unwrap();
        directory.names.insert(created, directory.next_keyspace_id);
        directory
            .keyspaces
            .insert(directory.next_keyspace_id, state);
        directory.next_keyspace_id += 1;
        assert!(directory.overlay_len() > 0 && directory.overlay_len() < directory.total_keys());
        check_streamed(&directory);
    }

    /// A keyspace's keys (from a small alphabet, so that prefixes repeat) and the overlay ops
    /// applied after it is checkpointed and mapped.
    #[derive(Debug, Clone)]
    enum OverlayOp {
        Put(Vec<u8>),
        Delete(Vec<u8>),
        DeleteBaseKey(usize),
        Clear,
    }

    fn key_strategy() -> impl Strategy<Value = Vec<u8>> {
        prop::collection::vec(prop::sample::select(vec![0u8, b'a', b'b', 0xff]), 0..12)
    }

    fn op_strategy() -> impl Strategy<Value = OverlayOp> {
        prop_oneof![
            6 => key_strategy().prop_map(OverlayOp::Put),
            2 => key_strategy().prop_map(OverlayOp::Delete),
            4 => any::<usize>().prop_map(OverlayOp::DeleteBaseKey),
            1 => Just(OverlayOp::Clear),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]

        #[test]
        fn random_directories_stream_as_they_encode(
            keyspaces in prop::collection::vec(
                (
                    prop::collection::btree_set(key_strategy(), 0..300),
                    prop::collection::vec(op_strategy(), 0..60),
                ),
                0..5,
            )
        ) {
            let names: Vec<String> = (0..keyspaces.len()).map(|i| format!("ks{i}")).collect();
            let base: Vec<(&str, Vec<Vec<u8>>)> = names
                .iter()
                .zip(&keyspaces)
                .map(|(name, (keys, _))| (name.as_str(), keys.iter().cloned().collect()))
                .collect();
            let base = in_memory(&base);
            check_streamed(&base);
            let (mut directory, _backend) = mapped(&base);
            let mut n = 10_000;
            for (name, (keys, ops)) in names.iter().zip(&keyspaces) {
                let id = directory.names[name.as_str()];
                let keyspace = directory.keyspaces.get_mut(&id).unwrap();
                for op in ops {
                    n += 1;
                    match op {
                        OverlayOp::Put(key) => {
                            keyspace.put(key, loc(n)).unwrap();
                        }
                        OverlayOp::Delete(key) => {
                            keyspace.delete(key).unwrap();
                        }
                        OverlayOp::DeleteBaseKey(index) => {
                            if let Some(key) = keys.iter().nth(index % keys.len().max(1)) {
                                keyspace.delete(key).unwrap();
                            }
                        }
                        OverlayOp::Clear => keyspace.clear(),
                    }
                }
            }
            check_streamed(&directory);
        }
    }
}
