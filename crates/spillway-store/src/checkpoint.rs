//! Checkpoints: the whole key directory as an `rkyv` archive behind a CRC-checked header.
//!
//! Opening a store loads its checkpoint and replays only the log written after the checkpoint's
//! log position. A checkpoint is untrusted input: this module must never use unchecked `rkyv`
//! access, never accept an archive whose CRC it has not verified first, and never build a
//! directory whose locations point outside the segments that exist.

use rkyv::rancor;
use rkyv::util::AlignedVec;
use rkyv::{Archive, Serialize};

use crate::directory::{Directory, Key, KeyspaceState, ValueLoc};
use crate::format::{ALIGN, FRAME_HEADER_LEN, FormatError, OP_HEADER_LEN, SEGMENT_HEADER_LEN};

pub(crate) const CHECKPOINT_MAGIC: [u8; 8] = *b"SPWYCKP\0";
pub(crate) const CHECKPOINT_HEADER_LEN: usize = 32;
const CHECKPOINT_VERSION: u32 = 1;

/// The archived body of a checkpoint file.
#[derive(Archive, Serialize, Debug)]
pub(crate) struct CheckpointBody {
    /// Sequence number of the first log frame after the checkpoint.
    pub(crate) next_seq: u64,
    /// Log position the checkpoint covers up to: segment id and offset of the next frame.
    pub(crate) log_segment: u32,
    pub(crate) log_offset: u64,
    pub(crate) next_keyspace_id: u32,
    pub(crate) keyspaces: Vec<CheckpointKeyspace>,
}

/// One keyspace: its keys concatenated, and one entry per key in key order.
#[derive(Archive, Serialize, Debug)]
pub(crate) struct CheckpointKeyspace {
    pub(crate) id: u32,
    pub(crate) name: String,
    pub(crate) key_bytes: Vec<u8>,
    pub(crate) entries: Vec<CheckpointEntry>,
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

/// A loaded checkpoint.
#[derive(Debug)]
pub(crate) struct LoadedCheckpoint {
    pub(crate) directory: Directory,
    pub(crate) next_seq: u64,
    pub(crate) log_segment: u32,
    pub(crate) log_offset: usize,
}

/// Serialises `directory` and the log position into the bytes of a checkpoint file.
pub(crate) fn encode(
    directory: &Directory,
    next_seq: u64,
    log_segment: u32,
    log_offset: usize,
) -> Vec<u8> {
    let keyspaces = directory
        .keyspaces
        .iter()
        .map(|(&id, keyspace)| {
            let mut key_bytes = Vec::new();
            let mut entries = Vec::with_capacity(keyspace.entries.len());
            for (key, loc) in &keyspace.entries {
                key_bytes.extend_from_slice(key);
                entries.push(CheckpointEntry {
                    key_end: key_bytes.len() as u64,
                    segment: loc.segment,
                    offset: loc.offset,
                    len: loc.len,
                    crc: loc.crc,
                });
            }
            CheckpointKeyspace {
                id,
                name: keyspace.name.to_string(),
                key_bytes,
                entries,
            }
        })
        .collect();
    let body = CheckpointBody {
        next_seq,
        log_segment,
        log_offset: log_offset as u64,
        next_keyspace_id: directory.next_keyspace_id,
        keyspaces,
    };
    let archived =
        rkyv::to_bytes::<rancor::Error>(&body).expect("serialising into memory cannot fail");
    let mut file = Vec::with_capacity(CHECKPOINT_HEADER_LEN + archived.len());
    file.extend_from_slice(&CHECKPOINT_MAGIC);
    file.extend_from_slice(&CHECKPOINT_VERSION.to_le_bytes());
    file.extend_from_slice(&crc32fast::hash(&archived).to_le_bytes());
    file.extend_from_slice(&(archived.len() as u64).to_le_bytes());
    file.extend_from_slice(&[0u8; 8]);
    file.extend_from_slice(&archived);
    file
}

/// Checks the header and CRC of a checkpoint file, then decodes its body.
///
/// `segment_len` gives the length of each existing segment (`None` if there is no such
/// segment); every value location must fall inside one.
pub(crate) fn decode(
    file: &[u8],
    segment_len: &dyn Fn(u32) -> Option<usize>,
) -> Result<LoadedCheckpoint, FormatError> {
    let header = file
        .get(..CHECKPOINT_HEADER_LEN)
        .ok_or_else(|| FormatError::new(0, "checkpoint is shorter than its header"))?;
    if header[0..8] != CHECKPOINT_MAGIC {
        return Err(FormatError::new(0, "bad checkpoint magic"));
    }
    let version = u32::from_le_bytes(header[8..12].try_into().expect("4 bytes"));
    if version != CHECKPOINT_VERSION {
        return Err(FormatError::new(
            8,
            format!("unsupported checkpoint version {version}"),
        ));
    }
    let crc = u32::from_le_bytes(header[12..16].try_into().expect("4 bytes"));
    let body_len = u64::from_le_bytes(header[16..24].try_into().expect("8 bytes"));
    if header[24..32].iter().any(|&b| b != 0) {
        return Err(FormatError::new(
            24,
            "reserved checkpoint header bytes are not zero",
        ));
    }
    let body = &file[CHECKPOINT_HEADER_LEN..];
    if body.len() as u64 != body_len {
        return Err(FormatError::new(
            16,
            format!(
                "checkpoint body is {} bytes, header says {body_len}",
                body.len()
            ),
        ));
    }
    if crc32fast::hash(body) != crc {
        return Err(FormatError::new(12, "checkpoint checksum mismatch"));
    }
    decode_body(body, segment_len)
        .map_err(|e| FormatError::new(CHECKPOINT_HEADER_LEN as u64 + e.offset, e.reason))
}

/// Decodes a checkpoint body (no CRC check: the caller did it, or is a fuzzer).
pub(crate) fn decode_body(
    body: &[u8],
    segment_len: &dyn Fn(u32) -> Option<usize>,
) -> Result<LoadedCheckpoint, FormatError> {
    let mut aligned = AlignedVec::<16>::with_capacity(body.len());
    aligned.extend_from_slice(body);
    let archived = rkyv::access::<ArchivedCheckpointBody, rancor::Error>(&aligned)
        .map_err(|e| FormatError::new(0, format!("checkpoint archive is invalid: {e}")))?;

    let log_segment = archived.log_segment.to_native();
    let log_offset = usize::try_from(archived.log_offset.to_native()).unwrap_or(usize::MAX);
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
    let next_keyspace_id = archived.next_keyspace_id.to_native();
    let min_value_offset = SEGMENT_HEADER_LEN + FRAME_HEADER_LEN + OP_HEADER_LEN;

    let mut directory = Directory {
        next_keyspace_id,
        ..Directory::default()
    };
    for keyspace in archived.keyspaces.iter() {
        let id = keyspace.id.to_native();
        let name = keyspace.name.as_str();
        if id >= next_keyspace_id
            || name.is_empty()
            || directory.keyspaces.contains_key(&id)
            || directory.names.contains_key(name)
        {
            return Err(FormatError::new(
                0,
                format!("checkpoint keyspace {id} ({name:?}) is invalid"),
            ));
        }
        let key_bytes = keyspace.key_bytes.as_slice();
        let mut entries = imbl::OrdMap::new();
        let mut key_start = 0usize;
        let mut previous: Option<&[u8]> = None;
        for entry in keyspace.entries.iter() {
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
            let loc = ValueLoc {
                segment: entry.segment.to_native(),
                offset: entry.offset.to_native(),
                len: entry.len.to_native(),
                crc: entry.crc.to_native(),
            };
            let offset = loc.offset as usize;
            let fits = segment_len(loc.segment).is_some_and(|len| {
                offset >= min_value_offset
                    && offset.is_multiple_of(ALIGN)
                    && offset + loc.len as usize <= len
            });
            if !fits {
                return Err(FormatError::new(
                    0,
                    format!(
                        "checkpoint value location (segment {}, offset {}, {} bytes) is invalid",
                        loc.segment, loc.offset, loc.len
                    ),
                ));
            }
            entries.insert(Key::new(key), loc);
            previous = Some(key);
            key_start = key_end;
        }
        if key_start != key_bytes.len() {
            return Err(FormatError::new(
                0,
                format!("checkpoint has stray key bytes in keyspace {id}"),
            ));
        }
        let name: std::sync::Arc<str> = std::sync::Arc::from(name);
        directory.names.insert(name.clone(), id);
        directory
            .keyspaces
            .insert(id, KeyspaceState { name, entries });
    }
    Ok(LoadedCheckpoint {
        directory,
        next_seq: archived.next_seq.to_native(),
        log_segment,
        log_offset,
    })
}
