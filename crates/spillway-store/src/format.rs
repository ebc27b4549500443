//! Byte layouts of segments, frames, operations and the manifest (see `docs/file-format.md`).
//!
//! Pure functions from structs to bytes and back: this module must never do I/O, never panic on
//! any input (its decoders are fuzzed), and never return a frame whose checksum or structure it
//! has not fully verified. All integers are little-endian.

use std::fmt;

/// Where a value lives: segment id, offset and length inside it, and its CRC-32.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) struct ValueLoc {
    pub(crate) segment: u32,
    pub(crate) offset: u32,
    pub(crate) len: u32,
    pub(crate) crc: u32,
}

/// Every frame, op and value starts at a multiple of this many bytes inside a segment.
pub(crate) const ALIGN: usize = 8;

/// Size of the header at the start of every segment file; the first frame starts here.
pub(crate) const SEGMENT_HEADER_LEN: usize = 32;
pub(crate) const SEGMENT_MAGIC: [u8; 8] = *b"SPWYSEG\0";
/// Version of the segment header (the manifest has its own, [`MANIFEST_VERSION`]).
pub(crate) const FORMAT_VERSION: u16 = 1;

/// Size of a frame header; the payload follows immediately.
pub(crate) const FRAME_HEADER_LEN: usize = 32;
pub(crate) const FRAME_MAGIC: u32 = u32::from_le_bytes(*b"SPFR");

/// Size of an operation header inside a frame payload.
pub(crate) const OP_HEADER_LEN: usize = 24;

/// Largest frame (header plus payload) the format accepts: offsets inside a segment are `u32`.
pub(crate) const MAX_FRAME_LEN: u64 = (u32::MAX as u64) - (SEGMENT_HEADER_LEN as u64) - 7;

pub(crate) const MANIFEST_MAGIC: [u8; 8] = *b"SPWYMAN\0";
/// Version 1: the header's last u64 is reserved (zero), the entries have no flags. Read, and
/// rewritten as version 2 by the next manifest write.
pub(crate) const MANIFEST_VERSION_1: u32 = 1;
/// Version 2: the header's last u64 names the fallback, and an entry's flags byte marks a
/// segment kept only for it. Read, and rewritten as version 3 by the next manifest write.
pub(crate) const MANIFEST_VERSION_2: u32 = 2;
/// Version 3: the header ends with the active segment's written limit.
pub(crate) const MANIFEST_VERSION: u32 = 3;
/// Header length of versions 1 and 2.
const MANIFEST_HEADER_LEN_V2: usize = 48;
pub(crate) const MANIFEST_HEADER_LEN: usize = 56;
/// At most how far [`Manifest::active_written_limit`] is raised at a time: a manifest write
/// per this much log, and at most this much of the active segment's unused tail read by an
/// open. Segments under 64 MiB use a sixteenth of their size (at least 4 KiB).
pub(crate) const WRITTEN_LIMIT_STEP: usize = 4 << 20;

/// The written limit that lets frames be written up to `end` in an active segment of
/// `capacity` bytes: `end` rounded up to a multiple of the step (a sixteenth of the
/// capacity, between 4 KiB and [`WRITTEN_LIMIT_STEP`]), at most the capacity. A new
/// segment's is that of its header.
pub(crate) fn written_limit_for(end: usize, capacity: usize) -> u64 {
    let step = (capacity / 16).clamp(4096, WRITTEN_LIMIT_STEP);
    end.next_multiple_of(step).min(capacity) as u64
}
pub(crate) const MANIFEST_ENTRY_LEN: usize = 24;
/// `end` value of the manifest entry of the segment still being appended to.
pub(crate) const ACTIVE_SEGMENT_END: u64 = u64::MAX;
/// Manifest entry flag (version 2): the segment is kept only for the fallback.
const MANIFEST_FLAG_RETAINED: u8 = 1;
/// Fallback field value meaning "the log from its start".
const FALLBACK_LOG: u64 = u64::MAX;

/// Rounds `len` up to the next multiple of [`ALIGN`].
pub(crate) const fn align_up(len: usize) -> usize {
    (len + ALIGN - 1) & !(ALIGN - 1)
}

/// Bytes an op with these key and value lengths occupies in a frame payload.
pub(crate) const fn op_len(key_len: usize, value_len: usize) -> usize {
    OP_HEADER_LEN + align_up(key_len) + align_up(value_len)
}

/// What a segment holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SegmentKind {
    /// Commit frames in sequence order; replayed on open after the checkpoint position.
    Log,
    /// Live records copied by compaction; reachable only through a checkpoint, never replayed.
    Compacted,
}

impl SegmentKind {
    fn to_byte(self) -> u8 {
        match self {
            SegmentKind::Log => 1,
            SegmentKind::Compacted => 2,
        }
    }
}

impl SegmentKind {
    fn from_byte(byte: u8) -> Result<Self, String> {
        match byte {
            1 => Ok(SegmentKind::Log),
            2 => Ok(SegmentKind::Compacted),
            other => Err(format!("unknown segment kind {other}")),
        }
    }
}

/// A structural problem found while decoding, with the offset relative to the decoded slice.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct FormatError {
    pub(crate) offset: u64,
    pub(crate) reason: String,
}

impl FormatError {
    pub(crate) fn new(offset: u64, reason: impl Into<String>) -> Self {
        FormatError {
            offset,
            reason: reason.into(),
        }
    }
}

impl fmt::Display for FormatError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} (offset {})", self.reason, self.offset)
    }
}

fn u16_at(bytes: &[u8], at: usize) -> u16 {
    u16::from_le_bytes([bytes[at], bytes[at + 1]])
}
fn u32_at(bytes: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(bytes[at..at + 4].try_into().expect("4 bytes"))
}
fn u64_at(bytes: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(bytes[at..at + 8].try_into().expect("8 bytes"))
}

// ---------------------------------------------------------------------------------------------
// Segment header

/// The 32-byte header at offset 0 of every segment.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct SegmentHeader {
    pub(crate) kind: SegmentKind,
    pub(crate) segment_id: u32,
    /// The length the file was created with (bytes 24..28), so that a shortened file is
    /// recognised as damage; 0 in segments written before this field existed (unknown).
    pub(crate) capacity: u32,
}

impl SegmentHeader {
    pub(crate) fn to_bytes(self) -> [u8; SEGMENT_HEADER_LEN] {
        let mut bytes = [0u8; SEGMENT_HEADER_LEN];
        bytes[0..8].copy_from_slice(&SEGMENT_MAGIC);
        bytes[8..10].copy_from_slice(&FORMAT_VERSION.to_le_bytes());
        bytes[10] = self.kind.to_byte();
        bytes[16..24].copy_from_slice(&u64::from(self.segment_id).to_le_bytes());
        bytes[24..28].copy_from_slice(&self.capacity.to_le_bytes());
        let crc = crc32fast::hash(&bytes[0..28]);
        bytes[28..32].copy_from_slice(&crc.to_le_bytes());
        bytes
    }

    pub(crate) fn from_bytes(bytes: &[u8]) -> Result<Self, FormatError> {
        if bytes.len() < SEGMENT_HEADER_LEN {
            return Err(FormatError::new(0, "segment shorter than its header"));
        }
        if bytes[0..8] != SEGMENT_MAGIC {
            return Err(FormatError::new(0, "bad segment magic"));
        }
        if crc32fast::hash(&bytes[0..28]) != u32_at(bytes, 28) {
            return Err(FormatError::new(0, "segment header checksum mismatch"));
        }
        let version = u16_at(bytes, 8);
        if version != FORMAT_VERSION {
            return Err(FormatError::new(
                8,
                format!("unsupported segment format version {version}"),
            ));
        }
        let kind = SegmentKind::from_byte(bytes[10]).map_err(|e| FormatError::new(10, e))?;
        let segment_id = u32::try_from(u64_at(bytes, 16))
            .map_err(|_| FormatError::new(16, "segment id out of range"))?;
        Ok(SegmentHeader {
            kind,
            segment_id,
            capacity: u32_at(bytes, 24),
        })
    }
}

// ---------------------------------------------------------------------------------------------
// Operations

/// Kinds of operations a frame can carry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum OpKind {
    Put = 1,
    Delete = 2,
    CreateKeyspace = 3,
    DropKeyspace = 4,
    ClearKeyspace = 5,
}

impl TryFrom<u8> for OpKind {
    type Error = String;
    fn try_from(byte: u8) -> Result<Self, String> {
        Ok(match byte {
            1 => OpKind::Put,
            2 => OpKind::Delete,
            3 => OpKind::CreateKeyspace,
            4 => OpKind::DropKeyspace,
            5 => OpKind::ClearKeyspace,
            other => return Err(format!("unknown op kind {other}")),
        })
    }
}

/// One decoded operation, borrowing its key and value from the payload.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Op<'a> {
    pub(crate) kind: OpKind,
    pub(crate) keyspace: u32,
    /// The key (for `CreateKeyspace`: the keyspace name).
    pub(crate) key: &'a [u8],
    pub(crate) value: &'a [u8],
    /// Offset of `value` from the start of the payload.
    pub(crate) value_offset: usize,
    pub(crate) value_crc: u32,
}

/// Appends one encoded op to `payload` (which must already be [`ALIGN`]-aligned in length).
pub(crate) fn encode_op(
    payload: &mut Vec<u8>,
    kind: OpKind,
    keyspace: u32,
    key: &[u8],
    value: &[u8],
) {
    debug_assert_eq!(payload.len() % ALIGN, 0);
    let value_crc = if kind == OpKind::Put {
        crc32fast::hash(value)
    } else {
        0
    };
    let key_len = u32::try_from(key.len()).expect("caller checked key length");
    let value_len = u32::try_from(value.len()).expect("caller checked value length");
    let mut header = [0u8; OP_HEADER_LEN];
    header[0] = kind as u8;
    header[4..8].copy_from_slice(&keyspace.to_le_bytes());
    header[8..12].copy_from_slice(&key_len.to_le_bytes());
    header[12..16].copy_from_slice(&value_len.to_le_bytes());
    header[16..20].copy_from_slice(&value_crc.to_le_bytes());
    payload.extend_from_slice(&header);
    payload.extend_from_slice(key);
    payload.resize(align_up(payload.len()), 0);
    payload.extend_from_slice(value);
    payload.resize(align_up(payload.len()), 0);
}

fn is_zero(bytes: &[u8]) -> bool {
    bytes.iter().all(|&b| b == 0)
}

/// Decodes the op starting at `at` in `payload`; returns it and the offset of the next op.
/// `verify_value` checks the value CRC of a put; [`Ops`] skips it because [`decode_frame`]
/// already did (or because the payload was just encoded by this process).
fn decode_op(
    payload: &[u8],
    at: usize,
    verify_value: bool,
) -> Result<(Op<'_>, usize), FormatError> {
    let err = |offset: usize, reason: &str| FormatError::new(offset as u64, reason.to_owned());
    let header = payload
        .get(at..at + OP_HEADER_LEN)
        .ok_or_else(|| err(at, "op header runs past the payload"))?;
    let kind = OpKind::try_from(header[0]).map_err(|reason| FormatError::new(at as u64, reason))?;
    if !is_zero(&header[1..4]) || !is_zero(&header[20..24]) {
        return Err(err(at, "reserved op header bytes are not zero"));
    }
    let keyspace = u32_at(header, 4);
    let key_len = u32_at(header, 8) as usize;
    let value_len = u32_at(header, 12) as usize;
    let value_crc = u32_at(header, 16);
    let key_start = at + OP_HEADER_LEN;
    let key_end = key_start
        .checked_add(key_len)
        .filter(|&end| end <= payload.len())
        .ok_or_else(|| err(at, "op key runs past the payload"))?;
    let value_start = align_up(key_end);
    let value_end = value_start
        .checked_add(value_len)
        .filter(|&end| end <= payload.len())
        .ok_or_else(|| err(at, "op value runs past the payload"))?;
    let next = align_up(value_end);
    if next > payload.len() {
        return Err(err(at, "op padding runs past the payload"));
    }
    if !is_zero(&payload[key_end..value_start]) || !is_zero(&payload[value_end..next]) {
        return Err(err(at, "op padding is not zero"));
    }
    let key = &payload[key_start..key_end];
    let value = &payload[value_start..value_end];
    match kind {
        OpKind::Put => {
            if verify_value && crc32fast::hash(value) != value_crc {
                return Err(err(at, "value checksum mismatch"));
            }
        }
        OpKind::CreateKeyspace => {
            if value_len != 0
                || value_crc != 0
                || std::str::from_utf8(key).is_err()
                || key.is_empty()
            {
                return Err(err(at, "malformed create-keyspace op"));
            }
        }
        OpKind::Delete | OpKind::DropKeyspace | OpKind::ClearKeyspace => {
            let key_allowed = kind == OpKind::Delete || key_len == 0;
            if value_len != 0 || value_crc != 0 || !key_allowed {
                return Err(err(at, "malformed op"));
            }
        }
    }
    Ok((
        Op {
            kind,
            keyspace,
            key,
            value,
            value_offset: value_start,
            value_crc,
        },
        next,
    ))
}

/// Iterator over the ops of a payload that [`decode_frame`] has already validated.
#[derive(Clone, Debug)]
pub(crate) struct Ops<'a> {
    payload: &'a [u8],
    at: usize,
}

impl<'a> Iterator for Ops<'a> {
    type Item = Op<'a>;
    fn next(&mut self) -> Option<Op<'a>> {
        if self.at >= self.payload.len() {
            return None;
        }
        let (op, next) = decode_op(self.payload, self.at, false).ok()?;
        self.at = next;
        Some(op)
    }
}

// ---------------------------------------------------------------------------------------------
// Frames

/// A frame whose checksum and every op of which have been verified.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Frame<'a> {
    pub(crate) seq: u64,
    pub(crate) payload: &'a [u8],
    /// Header plus payload, in bytes (a multiple of [`ALIGN`]).
    pub(crate) len: usize,
}

impl<'a> Frame<'a> {
    pub(crate) fn ops(&self) -> Ops<'a> {
        Ops {
            payload: self.payload,
            at: 0,
        }
    }
}

/// What the bytes of a frame that failed its checks still show, for a repair's report: read
/// without any checksum, so a key may itself be damaged.
#[derive(Debug)]
pub(crate) struct DamagedFrame<'a> {
    /// The frame's sequence number, if its magic is intact.
    pub(crate) seq: Option<u64>,
    /// Every op whose header and key lie within the bytes, in order.
    pub(crate) ops: Vec<DamagedOp<'a>>,
    /// The frame's length as its intact header gives it (when that fits in the bytes): where
    /// the next frame should start.
    pub(crate) len: Option<usize>,
    /// True when every op of the frame was read (its header's op count, or up to the end of
    /// `bytes` when the header is unreadable).
    pub(crate) whole: bool,
}

/// An op read from a damaged frame.
#[derive(Debug)]
pub(crate) struct DamagedOp<'a> {
    pub(crate) kind: OpKind,
    pub(crate) keyspace: u32,
    pub(crate) key: &'a [u8],
    /// A put's value, when it lies within the bytes and matches its own checksum.
    pub(crate) value: Option<&'a [u8]>,
}

/// Reads what it can of the frame at the start of `bytes` (the damaged bytes, up to the next
/// intact frame or the end of the log), checking no checksum. Never panics.
pub(crate) fn read_damaged_frame(bytes: &[u8]) -> DamagedFrame<'_> {
    let header = bytes.get(..FRAME_HEADER_LEN);
    let intact_header = header.filter(|h| u32_at(h, 0) == FRAME_MAGIC);
    let seq = intact_header.map(|h| u64_at(h, 8));
    let declared = intact_header.and_then(|h| {
        let payload_len = u32_at(h, 16) as usize;
        let end = FRAME_HEADER_LEN.checked_add(payload_len)?;
        (payload_len.is_multiple_of(ALIGN) && end <= bytes.len())
            .then_some((end, u32_at(h, 20) as usize))
    });
    let payload_start = FRAME_HEADER_LEN.min(bytes.len());
    let payload_end = declared.map_or(bytes.len(), |(end, _)| end);
    let payload = &bytes[payload_start..payload_end];
    let mut ops = Vec::new();
    let mut at = 0;
    let read_to_end = loop {
        if at == payload.len() {
            break true;
        }
        let Some(op) = payload.get(at..at + OP_HEADER_LEN) else {
            break false;
        };
        if is_zero(op) {
            // Zeroes, not an op: the end of what was written, unless the header says more.
            break declared.is_none() && is_zero(&payload[at..]);
        }
        let Ok(kind) = OpKind::try_from(op[0]) else {
            break false;
        };
        if !is_zero(&op[1..4]) || !is_zero(&op[20..24]) {
            break false;
        }
        let key_start = at + OP_HEADER_LEN;
        let Some(key_end) = key_start
            .checked_add(u32_at(op, 8) as usize)
            .filter(|&end| end <= payload.len())
        else {
            break false;
        };
        let value_start = align_up(key_end);
        let value = value_start
            .checked_add(u32_at(op, 12) as usize)
            .and_then(|value_end| payload.get(value_start..value_end));
        ops.push(DamagedOp {
            kind,
            keyspace: u32_at(op, 4),
            key: &payload[key_start..key_end],
            value: value
                .filter(|value| kind == OpKind::Put && crc32fast::hash(value) == u32_at(op, 16)),
        });
        match value
            .map(|value| align_up(value_start + value.len()))
            .filter(|&next| next <= payload.len())
        {
            Some(next) => at = next,
            None => break false,
        }
    };
    let whole = read_to_end && declared.is_none_or(|(_, op_count)| op_count == ops.len());
    DamagedFrame {
        seq,
        ops,
        len: declared.map(|(end, _)| end),
        whole,
    }
}

/// What [`decode_frame`] found at an offset.
#[derive(Debug)]
pub(crate) enum FrameSlot<'a> {
    /// A complete, verified frame.
    Frame(Frame<'a>),
    /// An all-zero header: nothing was ever written here (end of the log in this segment).
    Empty,
}

/// Writes the header of a frame into `frame[..FRAME_HEADER_LEN]`, given the CRC state over its
/// payload (`payload_crc` must have hashed exactly `frame[FRAME_HEADER_LEN..]`).
pub(crate) fn seal_frame(
    frame: &mut [u8],
    seq: u64,
    op_count: u32,
    payload_crc: &crc32fast::Hasher,
) {
    let payload_len =
        u32::try_from(frame.len() - FRAME_HEADER_LEN).expect("caller checked frame size");
    debug_assert_eq!(frame.len() % ALIGN, 0);
    let header = &mut frame[..FRAME_HEADER_LEN];
    header.fill(0);
    header[0..4].copy_from_slice(&FRAME_MAGIC.to_le_bytes());
    header[8..16].copy_from_slice(&seq.to_le_bytes());
    header[16..20].copy_from_slice(&payload_len.to_le_bytes());
    header[20..24].copy_from_slice(&op_count.to_le_bytes());
    let mut hasher = payload_crc.clone();
    hasher.update(&header[8..FRAME_HEADER_LEN]);
    let crc = hasher.finalize();
    header[4..8].copy_from_slice(&crc.to_le_bytes());
}

/// Decodes the frame at `offset` of `segment` (the bytes of a whole segment or any prefix of
/// one). Offsets in errors are absolute within `segment`.
pub(crate) fn decode_frame(segment: &[u8], offset: usize) -> Result<FrameSlot<'_>, FormatError> {
    let err = |reason: &str| FormatError::new(offset as u64, reason.to_owned());
    if !offset.is_multiple_of(ALIGN) {
        return Err(err("frame offset is not aligned"));
    }
    let header = segment
        .get(offset..)
        .and_then(|rest| rest.get(..FRAME_HEADER_LEN))
        .ok_or_else(|| err("frame header runs past the end of the segment"))?;
    if is_zero(header) {
        return Ok(FrameSlot::Empty);
    }
    if u32_at(header, 0) != FRAME_MAGIC {
        return Err(err("bad frame magic"));
    }
    let payload_len = u32_at(header, 16) as usize;
    let op_count = u32_at(header, 20);
    if !payload_len.is_multiple_of(ALIGN) {
        return Err(err("frame payload length is not aligned"));
    }
    if !is_zero(&header[24..32]) {
        return Err(err("reserved frame header bytes are not zero"));
    }
    let payload_start = offset + FRAME_HEADER_LEN;
    let payload = payload_start
        .checked_add(payload_len)
        .and_then(|end| segment.get(payload_start..end))
        .ok_or_else(|| err("frame payload runs past the end of the segment"))?;
    let mut hasher = crc32fast::Hasher::new();
    hasher.update(payload);
    hasher.update(&header[8..FRAME_HEADER_LEN]);
    if hasher.finalize() != u32_at(header, 4) {
        return Err(err("frame checksum mismatch"));
    }
    // The checksum matched, so the ops should be well formed; verify anyway so that a frame is
    // either applied whole or rejected whole, never half.
    let mut at = 0;
    let mut n_ops = 0u32;
    while at < payload.len() {
        let (_, next) = decode_op(payload, at, true)
            .map_err(|e| FormatError::new((payload_start as u64) + e.offset, e.reason))?;
        at = next;
        n_ops = n_ops.saturating_add(1);
    }
    if n_ops != op_count {
        return Err(err("frame op count does not match its payload"));
    }
    Ok(FrameSlot::Frame(Frame {
        seq: u64_at(header, 8),
        payload,
        len: FRAME_HEADER_LEN + payload_len,
    }))
}

// ---------------------------------------------------------------------------------------------
// Manifest

/// One segment as listed in the manifest.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct ManifestSegment {
    pub(crate) id: u32,
    pub(crate) kind: SegmentKind,
    /// Offset just past the last frame of a sealed segment, or [`ACTIVE_SEGMENT_END`].
    pub(crate) end: u64,
    /// Kept only for the fallback: a compaction victim that the fallback checkpoint may point
    /// into, or whose log frames its replay needs. Never read by a store opened from the
    /// current checkpoint, never a compaction victim again; deleted by the next checkpoint.
    pub(crate) retained: bool,
}

impl ManifestSegment {
    /// A segment of the current state (not retained).
    pub(crate) fn new(id: u32, kind: SegmentKind, end: u64) -> Self {
        ManifestSegment {
            id,
            kind,
            end,
            retained: false,
        }
    }
}

/// What an open uses when the current checkpoint is damaged: a state from which a replay of
/// the log reproduces exactly what the current checkpoint and the log after it hold.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Fallback {
    /// Nothing (a store made by repair, or written before manifest version 2, until its next
    /// checkpoint): a damaged checkpoint refuses the open.
    None,
    /// The whole log from its first frame: the current checkpoint is the store's first, and
    /// nothing was deleted before it.
    Log,
    /// The previous checkpoint file, by id.
    Checkpoint(u32),
}

impl Fallback {
    /// The checkpoint file id, if the fallback is one.
    pub(crate) fn checkpoint(self) -> Option<u32> {
        match self {
            Fallback::Checkpoint(id) => Some(id),
            Fallback::None | Fallback::Log => None,
        }
    }

    fn to_u64(self) -> u64 {
        match self {
            Fallback::None => 0,
            Fallback::Log => FALLBACK_LOG,
            Fallback::Checkpoint(id) => u64::from(id),
        }
    }
}

/// The manifest: which files make up the store.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Manifest {
    pub(crate) generation: u64,
    pub(crate) next_segment_id: u32,
    /// Id of the checkpoint file, if any.
    pub(crate) checkpoint: Option<u32>,
    /// What an open uses if the checkpoint is damaged.
    pub(crate) fallback: Fallback,
    /// No byte of the active segment at or after this offset was ever written: frames go only
    /// below it, and the store raises it durably before writing further. An open looks for
    /// intact frames and non-zero bytes after the end of the log only up to here. 0: unknown
    /// (a manifest before version 3), the whole segment.
    pub(crate) active_written_limit: u64,
    /// Segments in id order; exactly one log segment (the last log segment) is active.
    pub(crate) segments: Vec<ManifestSegment>,
}

impl Manifest {
    pub(crate) fn to_bytes(&self) -> Vec<u8> {
        self.encode(MANIFEST_VERSION)
    }

    /// The bytes in manifest format `version` (1 and 2 for tests of the upgrade path: a
    /// version 1 manifest's fallback field must be zero, and neither has a written limit).
    fn encode(&self, version: u32) -> Vec<u8> {
        let mut bytes =
            Vec::with_capacity(MANIFEST_HEADER_LEN + self.segments.len() * MANIFEST_ENTRY_LEN + 8);
        bytes.extend_from_slice(&MANIFEST_MAGIC);
        bytes.extend_from_slice(&version.to_le_bytes());
        bytes.extend_from_slice(&(self.segments.len() as u32).to_le_bytes());
        bytes.extend_from_slice(&self.generation.to_le_bytes());
        bytes.extend_from_slice(&u64::from(self.next_segment_id).to_le_bytes());
        bytes.extend_from_slice(&u64::from(self.checkpoint.unwrap_or(0)).to_le_bytes());
        bytes.extend_from_slice(&self.fallback.to_u64().to_le_bytes());
        if version >= MANIFEST_VERSION {
            bytes.extend_from_slice(&self.active_written_limit.to_le_bytes());
        }
        for segment in &self.segments {
            bytes.extend_from_slice(&u64::from(segment.id).to_le_bytes());
            bytes.extend_from_slice(&segment.end.to_le_bytes());
            bytes.push(segment.kind.to_byte());
            bytes.push(if segment.retained {
                MANIFEST_FLAG_RETAINED
            } else {
                0
            });
            bytes.extend_from_slice(&[0u8; 6]);
        }
        let crc = crc32fast::hash(&bytes);
        bytes.extend_from_slice(&crc.to_le_bytes());
        bytes.extend_from_slice(&0u32.to_le_bytes());
        bytes
    }

    pub(crate) fn from_bytes(bytes: &[u8]) -> Result<Self, FormatError> {
        let err = |offset: usize, reason: &str| FormatError::new(offset as u64, reason.to_owned());
        if bytes.len() < MANIFEST_HEADER_LEN_V2 + 8 {
            return Err(err(0, "manifest is shorter than its header"));
        }
        if bytes[0..8] != MANIFEST_MAGIC {
            return Err(err(0, "bad manifest magic"));
        }
        let version = u32_at(bytes, 8);
        if !matches!(
            version,
            MANIFEST_VERSION | MANIFEST_VERSION_2 | MANIFEST_VERSION_1
        ) {
            return Err(err(
                8,
                &format!("unsupported manifest format version {version}"),
            ));
        }
        let header_len = if version == MANIFEST_VERSION {
            MANIFEST_HEADER_LEN
        } else {
            MANIFEST_HEADER_LEN_V2
        };
        let count = u32_at(bytes, 12) as usize;
        let body_len = count
            .checked_mul(MANIFEST_ENTRY_LEN)
            .and_then(|n| n.checked_add(header_len))
            .filter(|&n| n + 8 == bytes.len())
            .ok_or_else(|| err(12, "manifest length does not match its segment count"))?;
        if crc32fast::hash(&bytes[..body_len]) != u32_at(bytes, body_len) {
            return Err(err(body_len, "manifest checksum mismatch"));
        }
        if u32_at(bytes, body_len + 4) != 0 {
            return Err(err(
                body_len + 4,
                "reserved manifest trailer bytes are not zero",
            ));
        }
        // Version 1 wrote zeroes into the fallback field and the entries' flags, and never
        // read them: it has no fallback and retains nothing.
        let is_version_1 = version == MANIFEST_VERSION_1;
        let to_id = |value: u64, at: usize| {
            u32::try_from(value).map_err(|_| err(at, "segment id out of range"))
        };
        let generation = u64_at(bytes, 16);
        let next_segment_id = to_id(u64_at(bytes, 24), 24)?;
        let checkpoint = match to_id(u64_at(bytes, 32), 32)? {
            0 => None,
            id => Some(id),
        };
        let fallback = match u64_at(bytes, 40) {
            _ if is_version_1 => Fallback::None,
            0 => Fallback::None,
            FALLBACK_LOG => Fallback::Log,
            id => Fallback::Checkpoint(to_id(id, 40)?),
        };
        let fallback_ok = match fallback {
            Fallback::None => true,
            Fallback::Log => checkpoint.is_some(),
            Fallback::Checkpoint(id) => {
                checkpoint.is_some_and(|current| current != id) && id < next_segment_id
            }
        };
        if !fallback_ok {
            return Err(err(40, "manifest fallback does not fit its checkpoint"));
        }
        let active_written_limit = if header_len == MANIFEST_HEADER_LEN {
            u64_at(bytes, 48)
        } else {
            0
        };
        let mut segments = Vec::with_capacity(count);
        for index in 0..count {
            let at = header_len + index * MANIFEST_ENTRY_LEN;
            let id = to_id(u64_at(bytes, at), at)?;
            let end = u64_at(bytes, at + 8);
            let kind = SegmentKind::from_byte(bytes[at + 16]).map_err(|e| err(at + 16, &e))?;
            let retained = if is_version_1 {
                false
            } else {
                let flags = bytes[at + 17];
                if flags & !MANIFEST_FLAG_RETAINED != 0 || !is_zero(&bytes[at + 18..at + 24]) {
                    return Err(err(at + 17, "reserved manifest entry bytes are not zero"));
                }
                flags & MANIFEST_FLAG_RETAINED != 0
            };
            if id >= next_segment_id
                || segments
                    .last()
                    .is_some_and(|s: &ManifestSegment| s.id >= id)
            {
                return Err(err(at, "manifest segment ids are not increasing"));
            }
            if retained && (end == ACTIVE_SEGMENT_END || fallback == Fallback::None) {
                return Err(err(
                    at + 17,
                    "a retained segment must be sealed and kept for a fallback",
                ));
            }
            segments.push(ManifestSegment {
                id,
                kind,
                end,
                retained,
            });
        }
        let manifest = Manifest {
            generation,
            next_segment_id,
            checkpoint,
            fallback,
            active_written_limit,
            segments,
        };
        let log_segments: Vec<_> = manifest
            .segments
            .iter()
            .filter(|s| s.kind == SegmentKind::Log)
            .collect();
        let active_ok = log_segments.split_last().is_some_and(|(last, rest)| {
            last.end == ACTIVE_SEGMENT_END && rest.iter().all(|s| s.end != ACTIVE_SEGMENT_END)
        });
        let compacted_ok = manifest
            .segments
            .iter()
            .filter(|s| s.kind == SegmentKind::Compacted)
            .all(|s| s.end != ACTIVE_SEGMENT_END);
        if !active_ok || !compacted_ok {
            return Err(err(
                0,
                "manifest must list exactly one active log segment, the last one",
            ));
        }
        Ok(manifest)
    }

    /// The manifest as a build before version 2 wrote it (no fallback, no retained
    /// segments), for tests of the upgrade path; `None` if it retains segments, which
    /// version 1 cannot say.
    pub(crate) fn to_bytes_version_1(&self) -> Option<Vec<u8>> {
        if self.segments.iter().any(|s| s.retained) {
            return None;
        }
        Some(
            Manifest {
                fallback: Fallback::None,
                ..self.clone()
            }
            .encode(MANIFEST_VERSION_1),
        )
    }

    /// The manifest as a build before version 3 wrote it (no written limit), for tests of the
    /// upgrade path.
    pub(crate) fn to_bytes_version_2(&self) -> Vec<u8> {
        self.encode(MANIFEST_VERSION_2)
    }

    pub(crate) fn active_segment(&self) -> ManifestSegment {
        *self
            .segments
            .iter()
            .rev()
            .find(|s| s.kind == SegmentKind::Log)
            .expect("validated manifest has an active log segment")
    }
}

/// File name of a segment.
pub(crate) fn segment_file_name(id: u32) -> String {
    format!("seg-{id:08x}.spw")
}

/// File name of a checkpoint.
pub(crate) fn checkpoint_file_name(id: u32) -> String {
    format!("ckpt-{id:08x}.spw")
}

pub(crate) const MANIFEST_FILE_NAME: &str = "MANIFEST";
pub(crate) const MANIFEST_TEMP_FILE_NAME: &str = "MANIFEST.tmp";

#[cfg(test)]
mod tests {
    use super::*;

    fn frame_with(ops: &[(OpKind, u32, &[u8], &[u8])], seq: u64) -> Vec<u8> {
        let mut frame = vec![0u8; FRAME_HEADER_LEN];
        for (kind, keyspace, key, value) in ops {
            encode_op(&mut frame, *kind, *keyspace, key, value);
        }
        let mut hasher = crc32fast::Hasher::new();
        hasher.update(&frame[FRAME_HEADER_LEN..]);
        seal_frame(&mut frame, seq, ops.len() as u32, &hasher);
        frame
    }

    #[test]
    fn frame_round_trip_keeps_values_aligned() {
        let frame = frame_with(
            &[
                (OpKind::Put, 3, b"abc", b"value-1"),
                (OpKind::Delete, 3, b"zz", b""),
                (OpKind::Put, 4, b"k", b"0123456789"),
            ],
            42,
        );
        let FrameSlot::Frame(decoded) = decode_frame(&frame, 0).unwrap() else {
            panic!("expected a frame");
        };
        assert_eq!(decoded.seq, 42);
        assert_eq!(decoded.len, frame.len());
        let ops: Vec<_> = decoded.ops().collect();
        assert_eq!(ops.len(), 3);
        assert_eq!(ops[0].key, b"abc");
        assert_eq!(ops[0].value, b"value-1");
        assert_eq!(ops[2].value, b"0123456789");
        for op in ops {
            assert_eq!((FRAME_HEADER_LEN + op.value_offset) % ALIGN, 0);
        }
    }

    #[test]
    fn every_single_bit_flip_in_a_frame_is_rejected() {
        let frame = frame_with(&[(OpKind::Put, 1, b"key", b"some value bytes")], 7);
        for byte in 0..frame.len() {
            for bit in 0..8 {
                let mut damaged = frame.clone();
                damaged[byte] ^= 1 << bit;
                assert!(
                    !matches!(decode_frame(&damaged, 0), Ok(FrameSlot::Frame(_))),
                    "flip of bit {bit} in byte {byte} went unnoticed"
                );
            }
        }
    }

    #[test]
    fn zero_header_is_empty_and_short_input_is_an_error() {
        assert!(matches!(decode_frame(&[0u8; 64], 0), Ok(FrameSlot::Empty)));
        assert!(decode_frame(&[0u8; 16], 0).is_err());
        assert!(decode_frame(&[0u8; 64], 3).is_err());
    }

    fn sample_manifest() -> Manifest {
        Manifest {
            generation: 9,
            next_segment_id: 7,
            checkpoint: Some(6),
            fallback: Fallback::Checkpoint(4),
            active_written_limit: 8 << 20,
            segments: vec![
                ManifestSegment::new(2, SegmentKind::Log, 4096),
                ManifestSegment {
                    retained: true,
                    ..ManifestSegment::new(3, SegmentKind::Compacted, 999)
                },
                ManifestSegment::new(5, SegmentKind::Log, ACTIVE_SEGMENT_END),
            ],
        }
    }

    #[test]
    fn manifest_round_trip_and_checksum() {
        for fallback in [Fallback::None, Fallback::Log, Fallback::Checkpoint(4)] {
            let mut manifest = sample_manifest();
            manifest.fallback = fallback;
            if fallback == Fallback::None {
                manifest.segments[1].retained = false;
            }
            let bytes = manifest.to_bytes();
            assert_eq!(Manifest::from_bytes(&bytes).unwrap(), manifest);
            for byte in 0..bytes.len() {
                let mut damaged = bytes.clone();
                damaged[byte] ^= 0x10;
                assert!(
                    Manifest::from_bytes(&damaged).is_err(),
                    "flip in byte {byte}"
                );
            }
        }
    }

    /// Re-seals `bytes` (a manifest whose fields a test changed) with a valid CRC.
    fn reseal(bytes: &mut [u8]) {
        let body_len = bytes.len() - 8;
        let crc = crc32fast::hash(&bytes[..body_len]);
        bytes[body_len..body_len + 4].copy_from_slice(&crc.to_le_bytes());
    }

    #[test]
    fn a_version_1_manifest_reads_without_fallback_or_retained_segments() {
        let mut manifest = sample_manifest();
        manifest.segments[1].retained = false;
        let mut bytes = manifest.encode(MANIFEST_VERSION_1);
        // Version 1 never read these bytes: whatever they hold means nothing.
        bytes[40..48].copy_from_slice(&7u64.to_le_bytes());
        reseal(&mut bytes);
        let read = Manifest::from_bytes(&bytes).unwrap();
        assert_eq!(read.fallback, Fallback::None);
        assert!(read.segments.iter().all(|s| !s.retained));
        assert_eq!(read.checkpoint, Some(6));
        assert_eq!(read.active_written_limit, 0, "unknown: the whole segment");
        // Written again, it is the current version.
        assert_eq!(u32_at(&read.to_bytes(), 8), MANIFEST_VERSION);
    }

    #[test]
    fn a_version_2_manifest_reads_with_its_fallback_and_no_written_limit() {
        let manifest = sample_manifest();
        let bytes = manifest.to_bytes_version_2();
        assert_eq!(bytes.len(), manifest.to_bytes().len() - 8);
        let read = Manifest::from_bytes(&bytes).unwrap();
        assert_eq!(
            read,
            Manifest {
                active_written_limit: 0,
                ..manifest
            }
        );
        assert_eq!(u32_at(&read.to_bytes(), 8), MANIFEST_VERSION);
    }

    #[test]
    fn a_manifest_whose_fallback_or_retained_flag_does_not_fit_is_refused() {
        let check = |edit: &dyn Fn(&mut Vec<u8>), expected: &str| {
            let mut bytes = sample_manifest().to_bytes();
            edit(&mut bytes);
            reseal(&mut bytes);
            let error = Manifest::from_bytes(&bytes).unwrap_err();
            assert!(error.reason.contains(expected), "{error}");
        };
        // The fallback is the current checkpoint, or an id not yet allocated.
        check(
            &|b| b[40..48].copy_from_slice(&6u64.to_le_bytes()),
            "fallback",
        );
        check(
            &|b| b[40..48].copy_from_slice(&9u64.to_le_bytes()),
            "fallback",
        );
        // A retained segment with no fallback to keep it for; the active segment retained.
        check(&|b| b[40..48].fill(0), "retained");
        let active_flags = MANIFEST_HEADER_LEN + 2 * MANIFEST_ENTRY_LEN + 17;
        check(&|b| b[active_flags] = 1, "retained");
        // An unknown flag.
        check(&|b| b[MANIFEST_HEADER_LEN + 17] = 2, "reserved");
    }

    #[test]
    fn segment_header_round_trip() {
        let header = SegmentHeader {
            kind: SegmentKind::Compacted,
            segment_id: 77,
            capacity: 4096,
        };
        assert_eq!(
            SegmentHeader::from_bytes(&header.to_bytes()).unwrap(),
            header
        );
        let mut damaged = header.to_bytes();
        damaged[17] ^= 1;
        assert!(SegmentHeader::from_bytes(&damaged).is_err());
        let mut damaged = header.to_bytes();
        damaged[25] ^= 1;
        assert!(SegmentHeader::from_bytes(&damaged).is_err());
    }
}
