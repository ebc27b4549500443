//! The key directory: for every keyspace, an ordered map from key to the location of its value.
//!
//! Each keyspace has two layers. The *base* is the keyspace as of the last checkpoint, read in
//! place from the mapped checkpoint archive (sorted keys, binary search), so it costs no heap
//! and no time at open. The *overlay* is a persistent (structurally shared) map of what
//! changed since: new locations, and tombstones for deleted keys the base still has. Lookups
//! consult the overlay, then the base; ordered iteration merges both. Cloning the whole
//! directory for a snapshot is O(1) (the overlay maps are persistent, the base is an `Arc`),
//! and a writer only copies the few tree nodes it touches while a snapshot shares them. After a
//! checkpoint is installed, [`Directory::rebase`] swaps in the new archive as the base and keeps
//! in the overlay only what changed after the checkpoint's log position.
//!
//! This module must never read a segment: it only records where values are; and it must never
//! change the logical contents of a keyspace when it moves entries between base and overlay.

use std::borrow::Borrow;
use std::collections::HashMap;
use std::ops::Bound;
use std::sync::Arc;

use imbl::OrdMap;
use imbl::ordmap::DiffItem;
use imbl::shared_ptr::DefaultSharedPtr;

use crate::checkpoint_archive::{BaseKeys, CheckpointArchive, compare_keys};
use crate::error::Result;
use crate::format::{Op, OpKind, ValueLoc, op_len};

/// Longest key stored inline in a directory node.
const INLINE_KEY_LEN: usize = 30;

/// A key of the directory. Short keys (the common case: ids, index entries) live inline in
/// the tree node, so a lookup compares bytes that are already in cache instead of chasing a
/// pointer per comparison; longer keys are shared between directory versions through an `Arc`.
#[derive(Clone)]
pub(crate) enum Key {
    Inline {
        len: u8,
        bytes: [u8; INLINE_KEY_LEN],
    },
    Shared(Arc<[u8]>),
}

impl Key {
    pub(crate) fn new(key: &[u8]) -> Key {
        if key.len() <= INLINE_KEY_LEN {
            let mut bytes = [0u8; INLINE_KEY_LEN];
            bytes[..key.len()].copy_from_slice(key);
            Key::Inline {
                len: key.len() as u8,
                bytes,
            }
        } else {
            Key::Shared(Arc::from(key))
        }
    }

    fn as_slice(&self) -> &[u8] {
        match self {
            Key::Inline { len, bytes } => &bytes[..*len as usize],
            Key::Shared(bytes) => bytes,
        }
    }
}

impl PartialEq for Key {
    fn eq(&self, other: &Key) -> bool {
        self.as_slice() == other.as_slice()
    }
}

impl Eq for Key {}

impl PartialOrd for Key {
    fn partial_cmp(&self, other: &Key) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Key {
    /// Byte order ([`compare_keys`]: mostly one integer compare). Inline keys are padded
    /// with zeroes, which is what their prefixes are: their first eight bytes are read as
    /// they lie, without a copy.
    fn cmp(&self, other: &Key) -> std::cmp::Ordering {
        if let (Key::Inline { bytes: mine, .. }, Key::Inline { bytes: theirs, .. }) = (self, other)
        {
            let prefix = |bytes: &[u8; INLINE_KEY_LEN]| {
                u64::from_be_bytes([
                    bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7],
                ])
            };
            return prefix(mine)
                .cmp(&prefix(theirs))
                .then_with(|| self.as_slice().cmp(other.as_slice()));
        }
        compare_keys(self.as_slice(), other.as_slice())
    }
}

impl std::hash::Hash for Key {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.as_slice().hash(state);
    }
}

impl std::fmt::Debug for Key {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Key({:?})", self.as_slice())
    }
}

impl Borrow<[u8]> for Key {
    fn borrow(&self) -> &[u8] {
        self.as_slice()
    }
}

impl std::ops::Deref for Key {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        self.as_slice()
    }
}

/// An overlay entry: a location written since the base, or a tombstone hiding a base key.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Slot {
    Put(ValueLoc),
    Deleted,
}

/// The checkpointed part of a keyspace: keyspace `index` of a mapped checkpoint archive.
#[derive(Clone, Debug)]
pub(crate) struct Base {
    pub(crate) archive: Arc<CheckpointArchive>,
    pub(crate) index: usize,
}

impl Base {
    fn keys(&self) -> BaseKeys<'_> {
        self.archive.keys(self.index)
    }
}

/// One keyspace: its name, its checkpointed base and the overlay of changes since.
#[derive(Clone, Debug)]
pub(crate) struct KeyspaceState {
    pub(crate) name: Arc<str>,
    base: Option<Base>,
    overlay: OrdMap<Key, Slot>,
    /// Number of live keys (base keys not hidden, plus overlay puts of keys the base lacks).
    len: usize,
    /// How many times the keyspace was cleared: a rebase must not put back a base that a clear
    /// after the checkpoint's position discarded.
    clears: u64,
}

impl KeyspaceState {
    /// An empty keyspace.
    pub(crate) fn new(name: Arc<str>) -> KeyspaceState {
        KeyspaceState {
            name,
            base: None,
            overlay: OrdMap::new(),
            len: 0,
            clears: 0,
        }
    }

    /// A keyspace that is exactly its checkpointed base.
    pub(crate) fn with_base(name: Arc<str>, base: Base) -> KeyspaceState {
        let len = base.keys().len();
        KeyspaceState {
            name,
            base: Some(base),
            overlay: OrdMap::new(),
            len,
            clears: 0,
        }
    }

    /// Number of keys.
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// Entries held in memory (overlay puts and tombstones), for tests and stats.
    pub(crate) fn overlay_len(&self) -> usize {
        self.overlay.len()
    }

    fn base_get(&self, key: &[u8]) -> Result<Option<ValueLoc>> {
        match &self.base {
            Some(base) => base.keys().get(key),
            None => Ok(None),
        }
    }

    /// `key`'s location in the base: `read`'s, when it was read from this very base (see
    /// [`BaseReads`]), else searched.
    fn base_get_known(&self, key: &[u8], read: Option<&BaseRead>) -> Result<Option<ValueLoc>> {
        match (read, &self.base) {
            (Some(read), Some(base)) if read.is_of(base) => Ok(read.loc),
            _ => self.base_get(key),
        }
    }

    /// The overlay's slot of `key`. A short key is looked up as a [`Key`], whose comparisons
    /// are mostly one integer compare, a long one as bytes.
    fn overlay_slot(&self, key: &[u8]) -> Option<&Slot> {
        if key.len() <= INLINE_KEY_LEN {
            self.overlay.get(&Key::new(key))
        } else {
            self.overlay.get(key)
        }
    }

    /// The location of `key`'s value. Fails only when the base's bytes it reads are damaged
    /// ([`crate::Error::Corrupt`]).
    pub(crate) fn get(&self, key: &[u8]) -> Result<Option<ValueLoc>> {
        match self.overlay_slot(key) {
            Some(Slot::Put(loc)) => Ok(Some(*loc)),
            Some(Slot::Deleted) => Ok(None),
            None => self.base_get(key),
        }
    }

    pub(crate) fn contains_key(&self, key: &[u8]) -> Result<bool> {
        Ok(self.get(key)?.is_some())
    }

    /// Points `key` at `loc`; returns the previous location. On a damaged base it fails
    /// before changing anything.
    pub(crate) fn put(&mut self, key: &[u8], loc: ValueLoc) -> Result<Option<ValueLoc>> {
        self.put_known(key, loc, None)
    }

    /// [`KeyspaceState::put`], with `key`'s base location read before (`read`, used if it
    /// was read from this keyspace's current base).
    fn put_known(
        &mut self,
        key: &[u8],
        loc: ValueLoc,
        read: Option<&BaseRead>,
    ) -> Result<Option<ValueLoc>> {
        let slot = if key.len() <= INLINE_KEY_LEN {
            self.overlay.get_mut(&Key::new(key))
        } else {
            self.overlay.get_mut(key)
        };
        let old = if let Some(slot) = slot {
            let old = match *slot {
                Slot::Put(old) => Some(old),
                Slot::Deleted => None,
            };
            *slot = Slot::Put(loc);
            old
        } else {
            let old = self.base_get_known(key, read)?;
            self.overlay.insert(Key::new(key), Slot::Put(loc));
            old
        };
        if old.is_none() {
            self.len += 1;
        }
        Ok(old)
    }

    /// Removes `key`; returns its location if it was present. On a damaged base it fails
    /// before changing anything.
    pub(crate) fn delete(&mut self, key: &[u8]) -> Result<Option<ValueLoc>> {
        self.delete_known(key, None)
    }

    /// [`KeyspaceState::delete`], with `key`'s base location read before (`read`, used if it
    /// was read from this keyspace's current base).
    fn delete_known(&mut self, key: &[u8], read: Option<&BaseRead>) -> Result<Option<ValueLoc>> {
        let old = match self.overlay_slot(key) {
            Some(Slot::Deleted) => return Ok(None),
            Some(Slot::Put(old)) => {
                let old = *old;
                if self.base_get_known(key, read)?.is_some() {
                    self.overlay.insert(Key::new(key), Slot::Deleted);
                } else {
                    self.overlay.remove(key);
                }
                old
            }
            None => {
                let Some(old) = self.base_get_known(key, read)? else {
                    return Ok(None);
                };
                self.overlay.insert(Key::new(key), Slot::Deleted);
                old
            }
        };
        self.len -= 1;
        Ok(Some(old))
    }

    /// Checks every block of the base not checked yet (before an operation that reads all of
    /// it, so that it fails before changing anything).
    pub(crate) fn check_base(&self) -> Result<()> {
        match &self.base {
            Some(base) => base.archive.check_all(),
            None => Ok(()),
        }
    }

    /// Removes every key.
    pub(crate) fn clear(&mut self) {
        self.base = None;
        self.overlay = OrdMap::new();
        self.len = 0;
        self.clears += 1;
    }

    /// Every entry of a keyspace without a checkpoint base (held wholly in memory, as salvage's
    /// and the in-memory decoders' directories are), in key order: no read can fail. On a
    /// keyspace with a base it stops at the first damaged block.
    pub(crate) fn iter_in_memory(&self) -> impl Iterator<Item = (&[u8], ValueLoc)> {
        self.iter().into_iter().flatten().map_while(Result::ok)
    }

    /// Every entry in key order.
    #[expect(
        clippy::iter_not_returning_iterator,
        reason = "fails only at a damaged checkpoint block; the Ok value is the iterator"
    )]
    pub(crate) fn iter(&self) -> Result<Entries<'_>> {
        self.range((Bound::Unbounded, Bound::Unbounded))
    }

    /// Entries whose keys fall in `bounds`, in key order (double-ended). An inverted range is
    /// empty. Fails, and the iterator yields one error and then ends, where the base's bytes
    /// read are damaged.
    pub(crate) fn range(&self, bounds: (Bound<&[u8]>, Bound<&[u8]>)) -> Result<Entries<'_>> {
        let inverted = match bounds {
            (Bound::Included(start), Bound::Included(end)) => start > end,
            (Bound::Included(start) | Bound::Excluded(start), Bound::Excluded(end))
            | (Bound::Excluded(start), Bound::Included(end)) => start >= end,
            _ => false,
        };
        if inverted {
            return Ok(Entries {
                overlay: None,
                overlay_front: None,
                overlay_back: None,
                base: None,
                low: 0,
                high: 0,
                failed: false,
            });
        }
        let base = self.base.as_ref().map(Base::keys);
        let (low, high) = match &base {
            Some(keys) => {
                let low = match bounds.0 {
                    Bound::Unbounded => 0,
                    Bound::Included(start) => keys.search(start)?.unwrap_or_else(|at| at),
                    Bound::Excluded(start) => match keys.search(start)? {
                        Ok(at) => at + 1,
                        Err(at) => at,
                    },
                };
                let high = match bounds.1 {
                    Bound::Unbounded => keys.len(),
                    Bound::Included(end) => match keys.search(end)? {
                        Ok(at) => at + 1,
                        Err(at) => at,
                    },
                    Bound::Excluded(end) => keys.search(end)?.unwrap_or_else(|at| at),
                };
                (low, high.max(low))
            }
            None => (0, 0),
        };
        Ok(Entries {
            overlay: Some(self.overlay.range::<_, [u8]>(bounds)),
            overlay_front: None,
            overlay_back: None,
            base,
            low,
            high,
            failed: false,
        })
    }
}

/// Entries of a keyspace in key order: the overlay merged with the base, tombstones applied.
pub(crate) struct Entries<'a> {
    overlay: Option<imbl::ordmap::RangedIter<'a, Key, Slot, DefaultSharedPtr>>,
    /// An overlay entry taken from the front (or back) but not yet returned.
    overlay_front: Option<(&'a Key, &'a Slot)>,
    overlay_back: Option<(&'a Key, &'a Slot)>,
    base: Option<BaseKeys<'a>>,
    /// Base entries `low..high` are still to be returned.
    low: usize,
    high: usize,
    /// A read of the base failed: the error was returned, and the iteration is over.
    failed: bool,
}

impl<'a> Entries<'a> {
    fn peek_overlay_front(&mut self) -> Option<(&'a Key, &'a Slot)> {
        if self.overlay_front.is_none() {
            self.overlay_front = self
                .overlay
                .as_mut()
                .and_then(Iterator::next)
                .or_else(|| self.overlay_back.take());
        }
        self.overlay_front
    }

    fn peek_overlay_back(&mut self) -> Option<(&'a Key, &'a Slot)> {
        if self.overlay_back.is_none() {
            self.overlay_back = self
                .overlay
                .as_mut()
                .and_then(DoubleEndedIterator::next_back)
                .or_else(|| self.overlay_front.take());
        }
        self.overlay_back
    }
}

impl<'a> Entries<'a> {
    /// Base key `index`, or the end of the iteration at a damaged block.
    fn base_key(
        &mut self,
        index: usize,
    ) -> std::result::Result<Option<(&'a [u8], BaseKeys<'a>)>, crate::Error> {
        match self.base.filter(|_| self.low < self.high) {
            Some(keys) => keys.key(index).map(|key| Some((key, keys))),
            None => Ok(None),
        }
    }

    /// Ends the iteration at `error`, which the caller returns as the last item.
    fn fail(&mut self, error: crate::Error) -> crate::Error {
        self.failed = true;
        error
    }
}

impl<'a> Iterator for Entries<'a> {
    type Item = Result<(&'a [u8], ValueLoc)>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.failed {
            return None;
        }
        loop {
            let overlay = self.peek_overlay_front();
            let base = match self.base_key(self.low) {
                Ok(base) => base,
                Err(error) => return Some(Err(self.fail(error))),
            };
            let overlay_first = match (overlay, base) {
                (None, None) => return None,
                (Some(_), None) => true,
                (None, Some(_)) => false,
                (Some((key, _)), Some((base_key, _))) => &**key <= base_key,
            };
            if let (true, Some((key, slot))) = (overlay_first, overlay) {
                self.overlay_front = None;
                if base.is_some_and(|(base_key, _)| &**key == base_key) {
                    self.low += 1;
                }
                if let Slot::Put(loc) = slot {
                    return Some(Ok((&**key, *loc)));
                }
            } else if let Some((base_key, keys)) = base {
                let loc = match keys.loc(self.low) {
                    Ok(loc) => loc,
                    Err(error) => return Some(Err(self.fail(error))),
                };
                self.low += 1;
                return Some(Ok((base_key, loc)));
            }
        }
    }
}

impl DoubleEndedIterator for Entries<'_> {
    fn next_back(&mut self) -> Option<Self::Item> {
        if self.failed {
            return None;
        }
        loop {
            let overlay = self.peek_overlay_back();
            let base = match self.base_key(self.high.wrapping_sub(1)) {
                Ok(base) => base,
                Err(error) => return Some(Err(self.fail(error))),
            };
            let overlay_first = match (overlay, base) {
                (None, None) => return None,
                (Some(_), None) => true,
                (None, Some(_)) => false,
                (Some((key, _)), Some((base_key, _))) => &**key >= base_key,
            };
            if let (true, Some((key, slot))) = (overlay_first, overlay) {
                self.overlay_back = None;
                if base.is_some_and(|(base_key, _)| &**key == base_key) {
                    self.high -= 1;
                }
                if let Slot::Put(loc) = slot {
                    return Some(Ok((&**key, *loc)));
                }
            } else if let Some((base_key, keys)) = base {
                let loc = match keys.loc(self.high - 1) {
                    Ok(loc) => loc,
                    Err(error) => return Some(Err(self.fail(error))),
                };
                self.high -= 1;
                return Some(Ok((base_key, loc)));
            }
        }
    }
}

/// What [`Directory::check_base_reads`] found in the keyspaces' bases, for
/// [`Directory::apply_ops_read`] to use instead of searching them again: the base location of
/// each key put or deleted whose base could still fail a read, tagged with that base.
///
/// A checkpoint installed between the two (which rebases the directory under the `published`
/// lock, not the writer's) gives keyspaces a new base, and a clear earlier in the frame takes
/// a keyspace's base away: a read is used only while its keyspace still has the very base it
/// was read from, and the apply searches again otherwise (the new base of an install was
/// checked whole when it was opened, so that search cannot fail either).
#[derive(Debug, Default)]
pub(crate) struct BaseReads {
    /// In op order; ops without a read (no base, or one whose blocks were all found intact,
    /// which the apply searches itself) have no entry.
    reads: Vec<BaseRead>,
    /// The archives read, held so that none is freed and another mapped at its address while
    /// the reads point at it.
    archives: Vec<Arc<CheckpointArchive>>,
}

/// One key's location in one base, as [`Directory::check_base_reads`] read it.
#[derive(Debug)]
struct BaseRead {
    /// Index of the op in its frame.
    op: usize,
    /// The base read: its archive (kept alive by [`BaseReads::archives`]) and keyspace index.
    archive: *const CheckpointArchive,
    index: usize,
    loc: Option<ValueLoc>,
}

impl BaseRead {
    fn is_of(&self, base: &Base) -> bool {
        std::ptr::eq(Arc::as_ptr(&base.archive), self.archive) && base.index == self.index
    }
}

impl BaseReads {
    /// Number of locations read (for tests).
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.reads.len()
    }

    /// The read of op `op`, if there is one: `next` is the position of the first read not
    /// passed yet, advanced past it.
    fn take(&self, next: &mut usize, op: usize) -> Option<&BaseRead> {
        let read = self.reads.get(*next).filter(|read| read.op == op)?;
        *next += 1;
        Some(read)
    }
}

/// All keyspaces.
#[derive(Clone, Debug, Default)]
pub(crate) struct Directory {
    pub(crate) keyspaces: OrdMap<u32, KeyspaceState>,
    pub(crate) names: OrdMap<Arc<str>, u32>,
    /// Smallest keyspace id never used.
    pub(crate) next_keyspace_id: u32,
}

/// Bytes of live records per segment.
#[derive(Clone, Debug, Default)]
pub(crate) struct LiveBytes(pub(crate) HashMap<u32, u64>);

impl LiveBytes {
    pub(crate) fn from_directory(directory: &Directory) -> Result<LiveBytes> {
        let mut live = LiveBytes::default();
        for keyspace in directory.keyspaces.values() {
            for entry in keyspace.iter()? {
                let (key, loc) = entry?;
                live.add(key, &loc);
            }
        }
        Ok(live)
    }

    pub(crate) fn add(&mut self, key: &[u8], loc: &ValueLoc) {
        *self.0.entry(loc.segment).or_default() += record_len(key, loc);
    }

    pub(crate) fn remove(&mut self, key: &[u8], loc: &ValueLoc) {
        let entry = self.0.entry(loc.segment).or_default();
        *entry = entry.saturating_sub(record_len(key, loc));
    }

    pub(crate) fn get(&self, segment: u32) -> u64 {
        self.0.get(&segment).copied().unwrap_or(0)
    }
}

/// Bytes a live record occupies in its segment (op header, key, value, padding).
pub(crate) fn record_len(key: &[u8], loc: &ValueLoc) -> u64 {
    op_len(key.len(), loc.len as usize) as u64
}

impl Directory {
    /// Checks that every op of a frame refers to keyspaces that exist at that point of the
    /// frame, so that applying it cannot fail halfway. Returns the offending keyspace id.
    pub(crate) fn check_ops<'a>(&self, ops: impl Iterator<Item = Op<'a>>) -> Result<(), u32> {
        let mut created: Vec<u32> = Vec::new();
        let mut dropped: Vec<u32> = Vec::new();
        for op in ops {
            let exists = (self.keyspaces.contains_key(&op.keyspace)
                || created.contains(&op.keyspace))
                && !dropped.contains(&op.keyspace);
            match op.kind {
                OpKind::CreateKeyspace => {
                    let name = std::str::from_utf8(op.key).map_err(|_| op.keyspace)?;
                    let name_taken = self.names.get(name).is_some_and(|id| !dropped.contains(id));
                    if exists || name_taken || op.keyspace < self.next_keyspace_id {
                        return Err(op.keyspace);
                    }
                    created.push(op.keyspace);
                }
                OpKind::DropKeyspace => {
                    if !exists {
                        return Err(op.keyspace);
                    }
                    dropped.push(op.keyspace);
                }
                OpKind::Put | OpKind::Delete | OpKind::ClearKeyspace => {
                    if !exists {
                        return Err(op.keyspace);
                    }
                }
            }
        }
        Ok(())
    }

    /// Reads what [`Directory::apply_ops`] will read of the keyspaces' bases (the old location
    /// of every key put or deleted, every key of a keyspace cleared or dropped), so that a
    /// damaged checkpoint block fails a commit before its frame is written, and the apply after
    /// it, reading blocks already checked, cannot fail. The locations read are returned for
    /// [`Directory::apply_ops_read`], which then does not search for them again.
    pub(crate) fn check_base_reads<'a>(
        &self,
        ops: impl Iterator<Item = Op<'a>>,
    ) -> Result<BaseReads> {
        let mut found = BaseReads::default();
        for (position, op) in ops.enumerate() {
            let Some(keyspace) = self.keyspaces.get(&op.keyspace) else {
                continue;
            };
            // Once every block of the base was found intact, the apply's reads cannot fail:
            // nothing is read ahead, and the apply searches the base itself, once.
            let Some(base) = keyspace
                .base
                .as_ref()
                .filter(|base| base.archive.may_fail())
            else {
                continue;
            };
            match op.kind {
                OpKind::Put | OpKind::Delete => {
                    let loc = keyspace.base_get(op.key)?;
                    if !found
                        .archives
                        .iter()
                        .any(|archive| Arc::ptr_eq(archive, &base.archive))
                    {
                        found.archives.push(base.archive.clone());
                    }
                    found.reads.push(BaseRead {
                        op: position,
                        archive: Arc::as_ptr(&base.archive),
                        index: base.index,
                        loc,
                    });
                }
                OpKind::ClearKeyspace | OpKind::DropKeyspace => keyspace.check_base()?,
                OpKind::CreateKeyspace => {}
            }
        }
        Ok(found)
    }

    /// Applies ops already checked by [`Directory::check_ops`]. `payload_offset` is the offset of
    /// the frame payload inside `segment`, so that value offsets become segment offsets. Fails
    /// only on a damaged block of a keyspace's base (which [`Directory::check_base_reads`]
    /// finds first), leaving the ops before it applied.
    pub(crate) fn apply_ops<'a>(
        &mut self,
        ops: impl Iterator<Item = Op<'a>>,
        segment: u32,
        payload_offset: usize,
        live: &mut LiveBytes,
    ) -> Result<()> {
        self.apply_ops_read(ops, &BaseReads::default(), segment, payload_offset, live)
    }

    /// [`Directory::apply_ops`] for the ops `reads` was read for by
    /// [`Directory::check_base_reads`]: the base locations it holds are not searched again
    /// (where a keyspace's base is still the one read; see [`BaseReads`]).
    pub(crate) fn apply_ops_read<'a>(
        &mut self,
        ops: impl Iterator<Item = Op<'a>>,
        reads: &BaseReads,
        segment: u32,
        payload_offset: usize,
        live: &mut LiveBytes,
    ) -> Result<()> {
        let mut next_read = 0;
        for (position, op) in ops.enumerate() {
            match op.kind {
                OpKind::Put => {
                    let loc = ValueLoc {
                        segment,
                        offset: (payload_offset + op.value_offset) as u32,
                        len: op.value.len() as u32,
                        crc: op.value_crc,
                    };
                    let read = reads.take(&mut next_read, position);
                    let Some(keyspace) = self.keyspaces.get_mut(&op.keyspace) else {
                        continue;
                    };
                    let old = keyspace.put_known(op.key, loc, read)?;
                    live.add(op.key, &loc);
                    if let Some(old) = old {
                        live.remove(op.key, &old);
                    }
                }
                OpKind::Delete => {
                    let read = reads.take(&mut next_read, position);
                    if let Some(keyspace) = self.keyspaces.get_mut(&op.keyspace)
                        && let Some(old) = keyspace.delete_known(op.key, read)?
                    {
                        live.remove(op.key, &old);
                    }
                }
                OpKind::CreateKeyspace => {
                    let name: Arc<str> = Arc::from(std::str::from_utf8(op.key).unwrap_or_default());
                    self.names.insert(name.clone(), op.keyspace);
                    self.keyspaces.insert(op.keyspace, KeyspaceState::new(name));
                    self.next_keyspace_id =
                        self.next_keyspace_id.max(op.keyspace.saturating_add(1));
                }
                OpKind::ClearKeyspace | OpKind::DropKeyspace => {
                    let Some(keyspace) = self.keyspaces.get_mut(&op.keyspace) else {
                        continue;
                    };
                    keyspace.check_base()?;
                    for entry in keyspace.iter()? {
                        let (key, loc) = entry?;
                        live.remove(key, &loc);
                    }
                    keyspace.clear();
                    if op.kind == OpKind::DropKeyspace {
                        let name = keyspace.name.clone();
                        self.keyspaces.remove(&op.keyspace);
                        self.names.remove(&name);
                    }
                }
            }
        }
        Ok(())
    }

    /// Number of keys in all keyspaces.
    pub(crate) fn total_keys(&self) -> usize {
        self.keyspaces.values().map(KeyspaceState::len).sum()
    }

    /// The blocks of the checkpoint the bases are read from, and how many are checked
    /// ((0, 0) without a base, or for a version 2 checkpoint checked whole at open).
    pub(crate) fn checkpoint_blocks(&self) -> (u64, u64) {
        self.keyspaces
            .values()
            .find_map(|keyspace| keyspace.base.as_ref()?.archive.blocks.as_ref())
            .map_or((0, 0), |blocks| {
                (blocks.crcs.len() as u64, blocks.checked_count() as u64)
            })
    }

    /// Entries held in memory in all keyspaces' overlays.
    pub(crate) fn overlay_len(&self) -> usize {
        self.keyspaces
            .values()
            .map(KeyspaceState::overlay_len)
            .sum()
    }

    /// The same logical directory as `self`, rebased onto a newly installed checkpoint.
    ///
    /// `checkpointed` is the directory the checkpoint was written from (taken earlier, at the
    /// checkpoint's log position; `self` is it plus every commit since), and `installed` the
    /// checkpoint as opened from its file, whose keyspaces are based on the new archive. Every
    /// keyspace that `checkpointed` had and that was not cleared since gets the new archive as
    /// its base and, as overlay, only what differs between `checkpointed` and `self`: the cost is
    /// in the changes since the position, since the overlays share structure.
    pub(crate) fn rebase(&self, checkpointed: &Directory, installed: &Directory) -> Directory {
        let mut rebased = self.clone();
        let ids: Vec<u32> = self.keyspaces.keys().copied().collect();
        for id in ids {
            let (Some(then), Some(new_base), Some(state)) = (
                checkpointed.keyspaces.get(&id),
                installed.keyspaces.get(&id),
                rebased.keyspaces.get_mut(&id),
            ) else {
                continue;
            };
            if then.clears != state.clears || new_base.base.is_none() {
                continue;
            }
            let mut overlay = OrdMap::new();
            for change in then.overlay.diff(&state.overlay) {
                match change {
                    DiffItem::Add(key, slot)
                    | DiffItem::Update {
                        new: (key, slot), ..
                    } => {
                        overlay.insert(key.clone(), *slot);
                    }
                    // Live at the checkpoint (so in the new base), gone since.
                    DiffItem::Remove(key, Slot::Put(_)) => {
                        overlay.insert(key.clone(), Slot::Deleted);
                    }
                    // Absent at the checkpoint, so absent from the new base too.
                    DiffItem::Remove(_, Slot::Deleted) => {}
                }
            }
            state.base.clone_from(&new_base.base);
            state.overlay = overlay;
        }
        rebased
    }
}

#[cfg(test)]
mod tests {
    use super::Key;

    #[test]
    fn inline_and_shared_keys_order_by_bytes() {
        let keys: Vec<Vec<u8>> = vec![
            vec![],
            vec![0],
            vec![0, 0],
            vec![1; 30],
            vec![1; 31],
            vec![1; 100],
            vec![2],
        ];
        for a in &keys {
            for b in &keys {
                assert_eq!(Key::new(a).cmp(&Key::new(b)), a.cmp(b), "{a:?} vs {b:?}");
                assert_eq!(Key::new(a) == Key::new(b), a == b);
            }
            assert_eq!(&*Key::new(a), &a[..]);
        }
        assert_eq!(std::mem::size_of::<Key>(), 32);
    }

    /// The integer compare of the first eight bytes (zero-padded) orders every pair as the
    /// bytes do: every key of up to 10 bytes over {0, 1, 255}, inline and shared alike.
    #[test]
    fn the_prefix_compare_agrees_with_byte_order() {
        let mut keys: Vec<Vec<u8>> = vec![Vec::new()];
        let mut layer: Vec<Vec<u8>> = vec![Vec::new()];
        for _ in 0..10 {
            layer = layer
                .iter()
                .flat_map(|key| {
                    [0u8, 1, 255].map(|byte| {
                        let mut longer = key.clone();
                        longer.push(byte);
                        longer
                    })
                })
                .filter(|key| key.len() < 6 || key[..key.len() - 1].iter().all(|&b| b == 0))
                .collect();
            keys.extend(layer.iter().cloned());
        }
        keys.push(vec![0; 40]);
        keys.push([vec![0; 39], vec![1]].concat());
        for a in &keys {
            for b in &keys {
                let expected = a.cmp(b);
                assert_eq!(super::compare_keys(a, b), expected, "{a:?} vs {b:?}");
                assert_eq!(Key::new(a).cmp(&Key::new(b)), expected, "{a:?} vs {b:?}");
            }
        }
    }
}
