//! The key directory: for every keyspace, an ordered map from key to the location of its value.
//!
//! Built on persistent (structurally shared) maps, so that cloning the whole directory for a
//! snapshot is O(1) and a writer only copies the few tree nodes it touches while a snapshot
//! shares them. This module must never read a segment: it only records where values are.

use std::borrow::Borrow;
use std::collections::HashMap;
use std::sync::Arc;

use imbl::OrdMap;

use crate::format::{Op, OpKind, op_len};

/// Where a value lives: segment id, offset and length inside it, and its CRC-32.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) struct ValueLoc {
    pub(crate) segment: u32,
    pub(crate) offset: u32,
    pub(crate) len: u32,
    pub(crate) crc: u32,
}

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
    fn cmp(&self, other: &Key) -> std::cmp::Ordering {
        self.as_slice().cmp(other.as_slice())
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

/// One keyspace: its name and its entries.
#[derive(Clone, Debug)]
pub(crate) struct KeyspaceState {
    pub(crate) name: Arc<str>,
    pub(crate) entries: OrdMap<Key, ValueLoc>,
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
    pub(crate) fn from_directory(directory: &Directory) -> LiveBytes {
        let mut live = LiveBytes::default();
        for keyspace in directory.keyspaces.values() {
            for (key, loc) in &keyspace.entries {
                live.add(key, loc);
            }
        }
        live
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

    /// Applies ops already checked by [`Directory::check_ops`]. `payload_offset` is the offset of
    /// the frame payload inside `segment`, so that value offsets become segment offsets.
    pub(crate) fn apply_ops<'a>(
        &mut self,
        ops: impl Iterator<Item = Op<'a>>,
        segment: u32,
        payload_offset: usize,
        live: &mut LiveBytes,
    ) {
        for op in ops {
            match op.kind {
                OpKind::Put => {
                    let loc = ValueLoc {
                        segment,
                        offset: (payload_offset + op.value_offset) as u32,
                        len: op.value.len() as u32,
                        crc: op.value_crc,
                    };
                    let Some(keyspace) = self.keyspaces.get_mut(&op.keyspace) else {
                        continue;
                    };
                    live.add(op.key, &loc);
                    if let Some(existing) = keyspace.entries.get_mut(op.key) {
                        live.remove(op.key, existing);
                        *existing = loc;
                    } else {
                        keyspace.entries.insert(Key::new(op.key), loc);
                    }
                }
                OpKind::Delete => {
                    if let Some(keyspace) = self.keyspaces.get_mut(&op.keyspace)
                        && let Some(old) = keyspace.entries.remove(op.key)
                    {
                        live.remove(op.key, &old);
                    }
                }
                OpKind::CreateKeyspace => {
                    let name: Arc<str> = Arc::from(std::str::from_utf8(op.key).unwrap_or_default());
                    self.names.insert(name.clone(), op.keyspace);
                    self.keyspaces.insert(
                        op.keyspace,
                        KeyspaceState {
                            name,
                            entries: OrdMap::new(),
                        },
                    );
                    self.next_keyspace_id =
                        self.next_keyspace_id.max(op.keyspace.saturating_add(1));
                }
                OpKind::ClearKeyspace | OpKind::DropKeyspace => {
                    let Some(keyspace) = self.keyspaces.get_mut(&op.keyspace) else {
                        continue;
                    };
                    for (key, loc) in &keyspace.entries {
                        live.remove(key, loc);
                    }
                    keyspace.entries = OrdMap::new();
                    if op.kind == OpKind::DropKeyspace {
                        let name = keyspace.name.clone();
                        self.keyspaces.remove(&op.keyspace);
                        self.names.remove(&name);
                    }
                }
            }
        }
    }

    /// Number of keys in all keyspaces.
    pub(crate) fn total_keys(&self) -> usize {
        self.keyspaces.values().map(|k| k.entries.len()).sum()
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
}
