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

/// A key, shared between the directory versions that contain it.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) struct Key(Arc<[u8]>);

impl Key {
    pub(crate) fn new(bytes: &[u8]) -> Key {
        Key(Arc::from(bytes))
    }
}

impl Borrow<[u8]> for Key {
    fn borrow(&self) -> &[u8] {
        &self.0
    }
}

impl std::ops::Deref for Key {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        &self.0
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
