//! The checkpoint archive's layout, and reading a mapped archive's keys in place.
//!
//! The archived bodies of format versions 1 and 2 ([`CheckpointBodyV1`], [`CheckpointBody`]),
//! the key order their keyspaces are sorted in ([`compare_keys`]), and [`BaseKeys`]: one
//! archived keyspace's sorted keys and value locations, which the key directory serves as its
//! base. Writing, opening and checking a checkpoint file is `checkpoint`'s work; this module
//! only defines what the archive holds and how a validated one is searched.

use rkyv::{Archive, Serialize};

use crate::format::ValueLoc;
use crate::mapped::MappedArchive;

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
/// The definition of the format: the store reads [`ArchivedCheckpointBody`] and writes one by
/// streaming a `checkpoint::CheckpointBodySource`; only the tests' in-memory reference encoder
/// builds this struct itself.
#[derive(Archive, Serialize, Debug)]
#[cfg_attr(
    not(test),
    expect(dead_code, reason = "written by streaming a `CheckpointBodySource`")
)]
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

/// A mapped version 2 checkpoint: the keys of its keyspaces are read in place.
pub(crate) struct CheckpointArchive {
    pub(crate) archive: MappedArchive<ArchivedCheckpointBody>,
}

impl std::fmt::Debug for CheckpointArchive {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CheckpointArchive")
            .field("archive", &self.archive)
            .finish()
    }
}

impl CheckpointArchive {
    /// The keys of the keyspace at `index` of the archive.
    pub(crate) fn keys(&self, index: usize) -> BaseKeys<'_> {
        match self.archive.get().keyspaces.get(index) {
            Some(keyspace) => BaseKeys {
                key_bytes: keyspace.key_bytes.as_slice(),
                entries: keyspace.entries.as_slice(),
                fences: keyspace.fences.as_slice(),
            },
            None => BaseKeys {
                key_bytes: &[],
                entries: &[],
                fences: &[],
            },
        }
    }
}

/// The sorted keys of one archived keyspace and their value locations, read in place.
#[derive(Clone, Copy)]
pub(crate) struct BaseKeys<'a> {
    pub(crate) key_bytes: &'a [u8],
    pub(crate) entries: &'a [ArchivedCheckpointEntry],
    /// Empty when there are none (version 1, read into memory): the search covers all keys.
    pub(crate) fences: &'a [rkyv::rend::u64_le],
}

impl<'a> BaseKeys<'a> {
    pub(crate) fn len(&self) -> usize {
        self.entries.len()
    }

    /// Key `index` (`index < len`). The bounds were validated at open; an out-of-range key
    /// (impossible after validation) reads as empty rather than panicking.
    pub(crate) fn key(&self, index: usize) -> &'a [u8] {
        let start = match index.checked_sub(1) {
            Some(previous) => self.entries[previous].key_end.to_native(),
            None => 0,
        };
        let end = self.entries[index].key_end.to_native();
        usize::try_from(start)
            .ok()
            .zip(usize::try_from(end).ok())
            .and_then(|(start, end)| self.key_bytes.get(start..end))
            .unwrap_or(&[])
    }

    pub(crate) fn loc(&self, index: usize) -> ValueLoc {
        let entry = &self.entries[index];
        ValueLoc {
            segment: entry.segment.to_native(),
            offset: entry.offset.to_native(),
            len: entry.len.to_native(),
            crc: entry.crc.to_native(),
        }
    }

    /// The first index whose key is not less than `key` (`Ok` if equal).
    pub(crate) fn search(&self, key: &[u8]) -> std::result::Result<usize, usize> {
        let (mut low, mut high) = (0, self.len());
        if !self.fences.is_empty() {
            // Fences below the key's prefix: their keys are below it, so the answer is past
            // the last of them; fences above it: the answer is at most the first of them.
            let prefix = key_prefix(key);
            let below = self.fences.partition_point(|f| f.to_native() < prefix);
            let not_above = self.fences.partition_point(|f| f.to_native() <= prefix);
            low = below.saturating_sub(1) * FENCE_EVERY;
            high = (not_above * FENCE_EVERY).min(self.len());
        }
        let prefix = key_prefix(key);
        while low < high {
            let middle = low + (high - low) / 2;
            let found = self.key(middle);
            match key_prefix(found).cmp(&prefix).then_with(|| found.cmp(key)) {
                std::cmp::Ordering::Less => low = middle + 1,
                std::cmp::Ordering::Greater => high = middle,
                std::cmp::Ordering::Equal => return Ok(middle),
            }
        }
        Err(low)
    }

    pub(crate) fn get(&self, key: &[u8]) -> Option<ValueLoc> {
        self.search(key).ok().map(|index| self.loc(index))
    }
}
