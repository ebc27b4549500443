//! The checkpoint archive's layout, and reading a mapped archive's keys in place.
//!
//! The archived bodies of format versions 1 and 2/3 ([`CheckpointBodyV1`], [`CheckpointBody`]),
//! the key order their keyspaces are sorted in ([`compare_keys`]), [`BaseKeys`]: one archived
//! keyspace's sorted keys and value locations, which the key directory serves as its base, and
//! [`Blocks`]: the per-block CRCs of a version 3 body and which blocks reads found intact.
//! Every `BaseKeys` accessor checks the blocks its bytes lie in before reading them (nothing
//! once every block was found intact), so this module must never return a byte of a block
//! that did not match its CRC. Writing, opening and
//! checking a checkpoint file is `checkpoint`'s work; this module only defines what the archive
//! holds and how a validated one is searched.

use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

use rkyv::{Archive, Serialize};

use crate::error::{Error, Result};
use crate::format::ValueLoc;
use crate::mapped::{MappedArchive, MappedFile};

/// The archived body of a version 1 checkpoint file.
#[derive(Archive, Serialize, Debug)]
pub(crate) struct CheckpointBodyV1 {
    /// Sequence number of the first log frame after the checkpoint.
    pub(crate) next_seq: u64,
    /// Log position the checkpoint covers up to: segment id and offset of the next frame.
    pub(crate) log_segment: u32,
    pub(crate) log_offset: u64,
    pub(crate) next_keyspace_id: u32,
    pub(crate) keyspaces: Vec<CheckpointKeyspaceV1>,
}

/// One keyspace of a version 1 checkpoint.
#[derive(Archive, Serialize, Debug)]
pub(crate) struct CheckpointKeyspaceV1 {
    pub(crate) id: u32,
    pub(crate) name: String,
    pub(crate) key_bytes: Vec<u8>,
    pub(crate) entries: Vec<CheckpointEntry>,
}

/// The archived body of a version 2 checkpoint file: version 1's fields, then the live bytes
/// of every segment the directory points into.
///
/// The definition of the format (the body of versions 2 and 3): the store reads
/// [`ArchivedCheckpointBody`] and writes one by streaming a `checkpoint::CheckpointBodySource`;
/// only the in-memory encoders (the tests' reference, and version 2 for upgrade tests) build
/// this struct itself.
#[derive(Archive, Serialize, Debug)]
pub(crate) struct CheckpointBody {
    pub(crate) next_seq: u64,
    pub(crate) log_segment: u32,
    pub(crate) log_offset: u64,
    pub(crate) next_keyspace_id: u32,
    pub(crate) keyspaces: Vec<CheckpointKeyspace>,
    pub(crate) live: Vec<SegmentLive>,
}

/// One keyspace: its keys concatenated, one entry per key in key order, and a fence per
/// [`FENCE_EVERY`] keys.
#[derive(Archive, Serialize, Debug)]
pub(crate) struct CheckpointKeyspace {
    pub(crate) id: u32,
    pub(crate) name: String,
    pub(crate) key_bytes: Vec<u8>,
    pub(crate) entries: Vec<CheckpointEntry>,
    /// `fences[j]` is [`key_prefix`] of key `j * FENCE_EVERY`: a lookup binary-searches this
    /// small, contiguous array first, then one block of entries, instead of striding over the
    /// whole entry and key arrays (a cache and TLB miss per step).
    pub(crate) fences: Vec<u64>,
}

/// Keys per fence.
pub(crate) const FENCE_EVERY: usize = 64;

/// The first 8 bytes of `key` as a big-endian integer, zero-padded: never decreases as keys
/// increase, so fences order blocks.
pub(crate) fn key_prefix(key: &[u8]) -> u64 {
    let mut bytes = [0u8; 8];
    let len = key.len().min(8);
    bytes[..len].copy_from_slice(&key[..len]);
    u64::from_be_bytes(bytes)
}

/// Byte order, as the slices compare, most often decided by one integer compare of the keys'
/// [`key_prefix`]es. Where two prefixes differ they order the keys as their bytes do: up to
/// the shorter key's end a prefix holds the key's bytes, and past it the shorter key's prefix
/// has zeroes where the longer key, equal so far, is greater as a slice too.
pub(crate) fn compare_keys(left: &[u8], right: &[u8]) -> std::cmp::Ordering {
    key_prefix(left)
        .cmp(&key_prefix(right))
        .then_with(|| left.cmp(right))
}

/// One key: where it ends in `key_bytes`, and where its value is.
#[derive(Archive, Serialize, Debug, Clone, Copy)]
pub(crate) struct CheckpointEntry {
    pub(crate) key_end: u64,
    pub(crate) segment: u32,
    pub(crate) offset: u32,
    pub(crate) len: u32,
    pub(crate) crc: u32,
}

/// Bytes of live records in one segment.
#[derive(Archive, Serialize, Debug, Clone, Copy)]
pub(crate) struct SegmentLive {
    pub(crate) segment: u32,
    pub(crate) bytes: u64,
}

/// A mapped checkpoint (version 2 or 3): the keys of its keyspaces are read in place.
pub(crate) struct CheckpointArchive {
    pub(crate) archive: MappedArchive<ArchivedCheckpointBody>,
    /// Version 3: the body's blocks, each checked against its CRC the first time a read
    /// touches it. `None` for version 2, whose whole body was checked at open.
    pub(crate) blocks: Option<Blocks>,
}

impl std::fmt::Debug for CheckpointArchive {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CheckpointArchive")
            .field("archive", &self.archive)
            .field("blocks", &self.blocks)
            .finish()
    }
}

impl CheckpointArchive {
    /// The keys of the keyspace at `index` of the archive. Once every block was found intact
    /// ([`CheckpointArchive::may_fail`] is false) its reads check nothing: a lookup then costs
    /// what it cost on a body checked whole at open, not an atomic load and a block range per
    /// fence, entry and key it reads.
    pub(crate) fn keys(&self, index: usize) -> BaseKeys<'_> {
        let body = self.archive.bytes();
        let (file, body_start) = self.archive.file();
        let unchecked = self.blocks.as_ref().filter(|blocks| !blocks.all_checked());
        let checked = unchecked.map(|blocks| CheckedBody {
            blocks,
            body,
            file,
            body_start,
        });
        match self.archive.get().keyspaces.get(index) {
            Some(keyspace) => BaseKeys {
                key_bytes: keyspace.key_bytes.as_slice(),
                entries: keyspace.entries.as_slice(),
                fences: keyspace.fences.as_slice(),
                checked,
            },
            None => BaseKeys::EMPTY,
        }
    }

    /// Whether a read of this body can still fail: some block of a version 3 body is not
    /// checked yet (a version 2 body was checked whole at open).
    pub(crate) fn may_fail(&self) -> bool {
        self.blocks
            .as_ref()
            .is_some_and(|blocks| !blocks.all_checked())
    }

    /// Checks every block of the body not checked yet (`Store::verify`, and before a clear or
    /// drop of a keyspace reads all its keys).
    pub(crate) fn check_all(&self) -> Result<()> {
        let (file, body_start) = self.archive.file();
        match &self.blocks {
            Some(blocks) => CheckedBody {
                blocks,
                body: self.archive.bytes(),
                file,
                body_start,
            }
            .check_all(),
            None => Ok(()),
        }
    }
}

/// The per-block checksums of a version 3 checkpoint body, and which blocks a read has already
/// found intact.
///
/// Block `i` is the body's bytes `[i << shift, (i + 1) << shift)` (the last one shorter). A
/// block is checked (CRC32 of its bytes against the table's) the first time a read touches
/// it; a match sets its bit in `checked`, lock-free, and later reads of the block cost one
/// atomic load. A mismatch sets nothing: every read of a damaged block fails with
/// [`Error::Corrupt`] naming the file and the block's offset, never returning its bytes.
pub(crate) struct Blocks {
    /// The checkpoint file, for errors.
    pub(crate) path: PathBuf,
    /// Offset of the body in the file.
    pub(crate) body_offset: u64,
    pub(crate) shift: u32,
    pub(crate) crcs: Box<[u32]>,
    checked: Box<[AtomicU64]>,
    /// How many bits of `checked` are set: when it reaches the number of blocks, no read can
    /// fail any more, and a writer need not read ahead of a commit
    /// ([`Blocks::all_checked`]).
    intact_count: AtomicUsize,
}

impl std::fmt::Debug for Blocks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Blocks")
            .field("path", &self.path)
            .field("block_len", &(1usize << self.shift))
            .field("blocks", &self.crcs.len())
            .finish_non_exhaustive()
    }
}

impl Blocks {
    pub(crate) fn new(path: PathBuf, body_offset: u64, shift: u32, crcs: Box<[u32]>) -> Blocks {
        let checked = (0..crcs.len().div_ceil(64))
            .map(|_| AtomicU64::new(0))
            .collect();
        Blocks {
            path,
            body_offset,
            shift,
            crcs,
            checked,
            intact_count: AtomicUsize::new(0),
        }
    }

    /// Checks the blocks that hold `body[start..end]` (those not checked yet).
    fn check_range(&self, body: CheckedBody<'_>, start: usize, end: usize) -> Result<()> {
        if start >= end {
            return Ok(());
        }
        let first = start >> self.shift;
        let last = (end - 1) >> self.shift;
        for block in first..=last {
            self.check_block(body, block)?;
        }
        Ok(())
    }

    #[inline]
    fn check_block(&self, body: CheckedBody<'_>, block: usize) -> Result<()> {
        let (word, bit) = (block / 64, 1u64 << (block % 64));
        let Some(flags) = self.checked.get(word) else {
            return Err(self.damaged(block, "lies past the block table"));
        };
        // Relaxed is enough: the bit only caches the result of a pure function of immutable
        // bytes, so a reader that misses a concurrent set merely checks the block again.
        if flags.load(Ordering::Relaxed) & bit != 0 {
            return Ok(());
        }
        self.check_block_slow(body, block, flags, bit)
    }

    #[cold]
    fn check_block_slow(
        &self,
        body: CheckedBody<'_>,
        block: usize,
        flags: &AtomicU64,
        bit: u64,
    ) -> Result<()> {
        let start = block << self.shift;
        let end = (start + (1 << self.shift)).min(body.body.len());
        let (Some(bytes), Some(&expected)) = (body.body.get(start..end), self.crcs.get(block))
        else {
            return Err(self.damaged(block, "lies past the end of the body"));
        };
        // One read request for the block, not a page fault per page of a map read at random.
        body.file.will_need(body.body_start + start, end - start);
        if crc32fast::hash(bytes) != expected {
            return Err(self.damaged(block, "does not match its checksum"));
        }
        if flags.fetch_or(bit, Ordering::Relaxed) & bit == 0 {
            self.intact_count.fetch_add(1, Ordering::Relaxed);
        }
        Ok(())
    }

    fn damaged(&self, block: usize, what: &str) -> Error {
        let start = (block as u64) << self.shift;
        Error::corrupt(
            &self.path,
            self.body_offset + start,
            format!(
                "checkpoint block {block} (body bytes {start}..{}) {what} (run repair)",
                start + (1u64 << self.shift)
            ),
        )
    }

    /// Records every block as checked (after a pass that checked them all).
    pub(crate) fn mark_all_checked(&self) {
        for (word, flags) in self.checked.iter().enumerate() {
            let blocks_here = self.crcs.len().saturating_sub(word * 64).min(64);
            let bits = if blocks_here == 64 {
                u64::MAX
            } else {
                (1u64 << blocks_here) - 1
            };
            let before = flags.fetch_or(bits, Ordering::Relaxed);
            let newly = (bits & !before).count_ones() as usize;
            self.intact_count.fetch_add(newly, Ordering::Relaxed);
        }
    }

    /// Whether every block was found intact: reads of this body cannot fail any more.
    pub(crate) fn all_checked(&self) -> bool {
        self.checked_count() >= self.crcs.len()
    }

    /// Number of blocks checked so far (for tests and stats).
    pub(crate) fn checked_count(&self) -> usize {
        self.intact_count.load(Ordering::Relaxed)
    }
}

/// A version 3 body and its blocks: what an accessor needs to check the bytes it reads.
#[derive(Clone, Copy)]
pub(crate) struct CheckedBody<'a> {
    pub(crate) blocks: &'a Blocks,
    pub(crate) body: &'a [u8],
    /// The mapped file the body lies in, at `body_start`.
    pub(crate) file: &'a MappedFile,
    pub(crate) body_start: usize,
}

impl CheckedBody<'_> {
    /// Checks every block not checked yet.
    pub(crate) fn check_all(self) -> Result<()> {
        self.blocks.check_range(self, 0, self.body.len())
    }

    /// Checks the blocks holding `slice`, which must lie inside the body (bytes elsewhere,
    /// which no accessor reads, are refused as damage rather than trusted).
    #[inline]
    pub(crate) fn check<T>(&self, slice: &[T]) -> Result<()> {
        let len = std::mem::size_of_val(slice);
        if len == 0 {
            return Ok(());
        }
        let base = self.body.as_ptr() as usize;
        let start = (slice.as_ptr() as usize).wrapping_sub(base);
        if start > self.body.len() || len > self.body.len() - start {
            return Err(Error::corrupt(
                &self.blocks.path,
                self.blocks.body_offset,
                "checkpoint structure points outside its body",
            ));
        }
        self.blocks.check_range(*self, start, start + len)
    }
}

/// The sorted keys of one archived keyspace and their value locations, read in place.
///
/// Every accessor checks the blocks its bytes lie in first (version 3), so that a damaged
/// block is an [`Error::Corrupt`] for the read that touches it and wrong bytes are never
/// returned; indexes are bounds-checked, so a structure that passed bytecheck but lies
/// (impossible under intact checksums) gives wrong order, never a panic.
#[derive(Clone, Copy)]
pub(crate) struct BaseKeys<'a> {
    pub(crate) key_bytes: &'a [u8],
    pub(crate) entries: &'a [ArchivedCheckpointEntry],
    /// Empty when there are none (version 1, read into memory): the search covers all keys.
    pub(crate) fences: &'a [rkyv::rend::u64_le],
    /// `None` when the bytes were all checked before (version 2, a version 3 body whose
    /// blocks were all found intact, or decoded in memory).
    pub(crate) checked: Option<CheckedBody<'a>>,
}

impl<'a> BaseKeys<'a> {
    pub(crate) const EMPTY: BaseKeys<'static> = BaseKeys {
        key_bytes: &[],
        entries: &[],
        fences: &[],
        checked: None,
    };

    pub(crate) fn len(&self) -> usize {
        self.entries.len()
    }

    #[inline]
    fn check<T>(&self, slice: &[T]) -> Result<()> {
        match &self.checked {
            Some(checked) => checked.check(slice),
            None => Ok(()),
        }
    }

    /// Entry `index`, its blocks checked; out of range reads as damage.
    #[inline]
    fn entry(&self, index: usize) -> Result<&'a ArchivedCheckpointEntry> {
        let entry = self
            .entries
            .get(index..=index)
            .ok_or_else(|| out_of_range("entry", index))?;
        self.check(entry)?;
        Ok(&entry[0])
    }

    /// Key `index` (`index < len`). The bounds were validated at open; an out-of-range key
    /// (impossible after validation) reads as empty rather than panicking.
    pub(crate) fn key(&self, index: usize) -> Result<&'a [u8]> {
        let start = match index.checked_sub(1) {
            Some(previous) => self.entry(previous)?.key_end.to_native(),
            None => 0,
        };
        let end = self.entry(index)?.key_end.to_native();
        let key = usize::try_from(start)
            .ok()
            .zip(usize::try_from(end).ok())
            .and_then(|(start, end)| self.key_bytes.get(start..end))
            .unwrap_or(&[]);
        self.check(key)?;
        Ok(key)
    }

    pub(crate) fn loc(&self, index: usize) -> Result<ValueLoc> {
        let entry = self.entry(index)?;
        Ok(ValueLoc {
            segment: entry.segment.to_native(),
            offset: entry.offset.to_native(),
            len: entry.len.to_native(),
            crc: entry.crc.to_native(),
        })
    }

    /// The number of fences below `prefix` (`less`) or not above it (`!less`): a binary
    /// search like `partition_point` that checks each fence it reads.
    fn fences_before(&self, prefix: u64, less: bool) -> Result<usize> {
        let (mut low, mut high) = (0, self.fences.len());
        while low < high {
            let middle = low + (high - low) / 2;
            let fence = &self.fences[middle..=middle];
            self.check(fence)?;
            let fence = fence[0].to_native();
            if fence < prefix || (!less && fence == prefix) {
                low = middle + 1;
            } else {
                high = middle;
            }
        }
        Ok(low)
    }

    /// The first index whose key is not less than `key` (`Ok` if equal).
    pub(crate) fn search(&self, key: &[u8]) -> Result<std::result::Result<usize, usize>> {
        let (mut low, mut high) = (0, self.len());
        let prefix = key_prefix(key);
        if !self.fences.is_empty() {
            // Fences below the key's prefix: their keys are below it, so the answer is past
            // the last of them; fences above it: the answer is at most the first of them.
            let below = self.fences_before(prefix, true)?;
            let not_above = self.fences_before(prefix, false)?;
            low = below.saturating_sub(1) * FENCE_EVERY;
            high = (not_above * FENCE_EVERY).min(self.len());
        }
        while low < high {
            let middle = low + (high - low) / 2;
            let found = self.key(middle)?;
            match key_prefix(found).cmp(&prefix).then_with(|| found.cmp(key)) {
                std::cmp::Ordering::Less => low = middle + 1,
                std::cmp::Ordering::Greater => high = middle,
                std::cmp::Ordering::Equal => return Ok(Ok(middle)),
            }
        }
        Ok(Err(low))
    }

    pub(crate) fn get(&self, key: &[u8]) -> Result<Option<ValueLoc>> {
        match self.search(key)? {
            Ok(index) => self.loc(index).map(Some),
            Err(_) => Ok(None),
        }
    }
}

fn out_of_range(what: &str, index: usize) -> Error {
    Error::corrupt(
        "checkpoint",
        0,
        format!("checkpoint {what} {index} is out of range"),
    )
}
