//! Snapshots: consistent, immutable read views of the store.
//!
//! A snapshot owns a clone of the key directory (O(1): the overlays are persistent maps and the
//! checkpointed base is a shared, immutable archive) and an `Arc` of
//! every segment it can reach, so later commits, compaction and even dropping the store leave
//! it untouched. Values are borrowed straight from the segment maps. This module must never
//! return a value whose CRC it has not checked (a value's length, which the key directory
//! holds, it may), and never take a lock.

use std::collections::BTreeMap;
use std::fmt;
use std::ops::{Bound, RangeBounds};
use std::sync::Arc;

use crate::KeyspaceId;
use crate::directory::{Directory, Entries, KeyspaceState};
use crate::error::{Error, Result};
use crate::format::SegmentKind;
use crate::format::ValueLoc;
use crate::segment::Segment;

/// Segments by id.
pub(crate) type SegmentTable = BTreeMap<u32, Arc<Segment>>;

/// Which write of a key a snapshot sees ([`Snapshot::version`]): where its value was written.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ValueVersion {
    segment: u32,
    offset: u32,
    compacted: bool,
}

impl ValueVersion {
    /// Whether a compaction put the value where it is. Commits write only to the log, so a
    /// version that changed between two snapshots and is not compacted was written by a
    /// commit; one that is compacted may only have been moved (compare the values then).
    pub fn is_compacted(&self) -> bool {
        self.compacted
    }
}

/// A consistent read view: sees every commit up to [`Snapshot::seq`] and nothing after.
///
/// Cheap to take and to keep; `Send` and `Sync`. Holding one keeps the segment files it can
/// read from being deleted by compaction.
#[derive(Clone)]
pub struct Snapshot {
    pub(crate) directory: Directory,
    pub(crate) segments: Arc<SegmentTable>,
    pub(crate) seq: u64,
}

impl fmt::Debug for Snapshot {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Snapshot")
            .field("seq", &self.seq)
            .field("keyspaces", &self.directory.keyspaces.len())
            .field("keys", &self.directory.total_keys())
            .finish_non_exhaustive()
    }
}

impl Snapshot {
    /// Sequence number of the last commit this snapshot sees (0 for an empty store).
    pub fn seq(&self) -> u64 {
        self.seq
    }

    fn keyspace_state(&self, keyspace: KeyspaceId) -> Result<&KeyspaceState> {
        self.directory
            .keyspaces
            .get(&keyspace.as_u32())
            .ok_or(Error::UnknownKeyspace(keyspace))
    }

    /// The id of the keyspace called `name`, if it existed when the snapshot was taken.
    pub fn keyspace(&self, name: &str) -> Option<KeyspaceId> {
        self.directory.names.get(name).map(|&id| KeyspaceId(id))
    }

    /// Every keyspace as (name, id), ordered by name.
    pub fn keyspaces(&self) -> Vec<(String, KeyspaceId)> {
        self.directory
            .names
            .iter()
            .map(|(name, &id)| (name.to_string(), KeyspaceId(id)))
            .collect()
    }

    /// Number of keys in `keyspace`.
    pub fn len(&self, keyspace: KeyspaceId) -> Result<usize> {
        Ok(self.keyspace_state(keyspace)?.len())
    }

    /// The value of `key`, read in place from the segment map (8-byte aligned), or `None`.
    ///
    /// Fails with [`Error::Corrupt`] if the stored bytes no longer match their checksum: the
    /// value's, or those of a checkpoint block the lookup reads.
    pub fn get(&self, keyspace: KeyspaceId, key: &[u8]) -> Result<Option<&[u8]>> {
        let state = self.keyspace_state(keyspace)?;
        match state.get(key)? {
            Some(loc) => self.value(&loc).map(Some),
            None => Ok(None),
        }
    }

    /// Which write of `key` this snapshot sees (`None` when the key is absent): two snapshots
    /// give the same version when no commit between them wrote the key, and different ones
    /// when a commit did, even one that wrote the bytes the key had. Compaction moves values,
    /// which changes their version too: see [`ValueVersion::is_compacted`]. Does not read the
    /// value.
    pub fn version(&self, keyspace: KeyspaceId, key: &[u8]) -> Result<Option<ValueVersion>> {
        Ok(self
            .keyspace_state(keyspace)?
            .get(key)?
            .map(|loc| ValueVersion {
                segment: loc.segment,
                offset: loc.offset,
                compacted: self
                    .segments
                    .get(&loc.segment)
                    .is_some_and(|segment| segment.kind == SegmentKind::Compacted),
            }))
    }

    /// True if `key` is present (does not read the value).
    pub fn contains_key(&self, keyspace: KeyspaceId, key: &[u8]) -> Result<bool> {
        self.keyspace_state(keyspace)?.contains_key(key)
    }

    pub(crate) fn value(&self, loc: &ValueLoc) -> Result<&[u8]> {
        read_value(&self.segments, loc)
    }

    /// Entries of `keyspace` whose keys fall in `range`, in key order (use `.rev()` for
    /// descending order). Bounds are byte slices: `(Bound::Included(&b"a"[..]), Bound::Unbounded)`.
    pub fn range<R: RangeBounds<[u8]>>(&self, keyspace: KeyspaceId, range: R) -> Result<Range<'_>> {
        let state = self.keyspace_state(keyspace)?;
        let bounds: (Bound<&[u8]>, Bound<&[u8]>) = (range.start_bound(), range.end_bound());
        if range_is_empty(&bounds) {
            return Ok(Range {
                inner: None,
                snapshot: self,
                last_segment: None,
            });
        }
        Ok(Range {
            inner: Some(state.range(bounds)?),
            snapshot: self,
            last_segment: None,
        })
    }

    /// Every entry of `keyspace`, in key order.
    #[expect(
        clippy::iter_not_returning_iterator,
        reason = "fails only for an unknown keyspace; the Ok value is the iterator"
    )]
    pub fn iter(&self, keyspace: KeyspaceId) -> Result<Range<'_>> {
        self.range(keyspace, ..)
    }

    /// Every key of `keyspace` with the length in bytes of its value, in key order, from the
    /// key directory alone: no value is read (nor, so, checked), which is what a size report
    /// needs. Items are `Err` when a checkpoint block the walk reads fails its checksum.
    pub fn value_lengths(&self, keyspace: KeyspaceId) -> Result<ValueLengths<'_>> {
        let state = self.keyspace_state(keyspace)?;
        Ok(ValueLengths {
            inner: state.range((Bound::Unbounded, Bound::Unbounded))?,
        })
    }

    /// Entries of `keyspace` whose keys start with `prefix`, in key order.
    pub fn prefix(&self, keyspace: KeyspaceId, prefix: &[u8]) -> Result<Range<'_>> {
        match prefix_successor(prefix) {
            Some(end) => self.range(
                keyspace,
                (Bound::Included(prefix), Bound::Excluded(end.as_slice())),
            ),
            None => self.range(keyspace, (Bound::Included(prefix), Bound::Unbounded)),
        }
    }
}

/// Reads one value, checked against its checksum the first time this process reads it (see
/// `segment::CheckedValues`).
pub(crate) fn read_value<'a>(segments: &'a SegmentTable, loc: &ValueLoc) -> Result<&'a [u8]> {
    read_in(segment_of(segments, loc)?, loc)
}

/// The segment `loc` points into.
fn segment_of<'a>(segments: &'a SegmentTable, loc: &ValueLoc) -> Result<&'a Segment> {
    segments
        .get(&loc.segment)
        .map(|segment| &**segment)
        .ok_or_else(|| {
            Error::corrupt(
                format!("segment {}", loc.segment),
                u64::from(loc.offset),
                "value points into a segment that does not exist",
            )
        })
}

/// The value at `loc` in `segment` (its segment), checked as [`read_value`] says.
#[inline]
fn read_in<'a>(segment: &'a Segment, loc: &ValueLoc) -> Result<&'a [u8]> {
    let bytes = segment
        .read(loc.offset as usize, loc.len as usize)
        .ok_or_else(|| {
            Error::corrupt(
                &segment.path,
                u64::from(loc.offset),
                "value runs past the written part of its segment",
            )
        })?;
    if !segment.value_checked(loc.offset as usize) {
        if crc32fast::hash(bytes) != loc.crc {
            return Err(Error::corrupt(
                &segment.path,
                u64::from(loc.offset),
                "value checksum mismatch",
            ));
        }
        segment.mark_value_checked(loc.offset as usize);
    }
    Ok(bytes)
}

/// An inverted range is simply empty (imbl would panic on one).
fn range_is_empty(bounds: &(Bound<&[u8]>, Bound<&[u8]>)) -> bool {
    match bounds {
        (Bound::Included(start), Bound::Included(end)) => start > end,
        (Bound::Included(start) | Bound::Excluded(start), Bound::Excluded(end))
        | (Bound::Excluded(start), Bound::Included(end)) => start >= end,
        _ => false,
    }
}

/// The smallest byte string greater than every string starting with `prefix`, if any.
fn prefix_successor(prefix: &[u8]) -> Option<Vec<u8>> {
    let mut end = prefix.to_vec();
    while let Some(last) = end.pop() {
        if last < u8::MAX {
            end.push(last + 1);
            return Some(end);
        }
    }
    None
}

/// Iterator over the `(key, value length)` pairs of a keyspace ([`Snapshot::value_lengths`]).
pub struct ValueLengths<'a> {
    inner: Entries<'a>,
}

impl fmt::Debug for ValueLengths<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ValueLengths").finish_non_exhaustive()
    }
}

impl<'a> Iterator for ValueLengths<'a> {
    type Item = Result<(&'a [u8], usize)>;
    fn next(&mut self) -> Option<Self::Item> {
        Some(self.inner.next()?.map(|(key, loc)| (key, loc.len as usize)))
    }
}

/// Iterator over `(key, value)` pairs of a snapshot, both borrowed from it. Items are `Err`
/// when a value fails its checksum, or a checkpoint block the scan reads fails its own (the
/// iteration ends after that error).
pub struct Range<'a> {
    inner: Option<Entries<'a>>,
    snapshot: &'a Snapshot,
    /// The segment the last value came from: a scan reads runs of values from one segment,
    /// and finds each one's without a lookup.
    last_segment: Option<(u32, &'a Segment)>,
}

impl<'a> Range<'a> {
    /// The value at `loc`.
    #[inline]
    fn value(&mut self, loc: &ValueLoc) -> Result<&'a [u8]> {
        let segment = match self.last_segment {
            Some((number, segment)) if number == loc.segment => segment,
            _ => {
                let segment = segment_of(&self.snapshot.segments, loc)?;
                self.last_segment = Some((loc.segment, segment));
                segment
            }
        };
        read_in(segment, loc)
    }
}

impl fmt::Debug for Range<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Range").finish_non_exhaustive()
    }
}

impl<'a> Iterator for Range<'a> {
    type Item = Result<(&'a [u8], &'a [u8])>;
    fn next(&mut self) -> Option<Self::Item> {
        let (key, loc) = match self.inner.as_mut()?.next()? {
            Ok(entry) => entry,
            Err(error) => return Some(Err(error)),
        };
        Some(self.value(&loc).map(|value| (key, value)))
    }
}

impl DoubleEndedIterator for Range<'_> {
    fn next_back(&mut self) -> Option<Self::Item> {
        let (key, loc) = match self.inner.as_mut()?.next_back()? {
            Ok(entry) => entry,
            Err(error) => return Some(Err(error)),
        };
        Some(self.value(&loc).map(|value| (key, value)))
    }
}

#[cfg(test)]
mod tests {
    use super::prefix_successor;

    #[test]
    fn prefix_successor_cases() {
        assert_eq!(prefix_successor(b"ab"), Some(b"ac".to_vec()));
        assert_eq!(prefix_successor(b"a\xff"), Some(b"b".to_vec()));
        assert_eq!(prefix_successor(b"\xff\xff"), None);
        assert_eq!(prefix_successor(b""), None);
    }
}
