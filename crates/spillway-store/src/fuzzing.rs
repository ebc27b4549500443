//! Entry points for fuzzing the decoders of untrusted bytes (not a stable API).
//!
//! Used by the cargo-fuzz targets in `fuzz/` and by a proptest in this crate's tests. Every
//! function here must return normally for every input: a panic is a bug.

use crate::checkpoint;
use crate::directory::{Directory, LiveBytes};
use crate::format::{FrameSlot, SEGMENT_HEADER_LEN, SegmentHeader, decode_frame};

/// Decodes `bytes` as a segment: header, then frames until the first empty or invalid one,
/// applying each valid frame to a scratch directory. Returns the number of frames applied.
pub fn decode_segment(bytes: &[u8]) -> usize {
    let _ = SegmentHeader::from_bytes(bytes);
    let mut directory = Directory::default();
    let mut live = LiveBytes::default();
    let mut offset = SEGMENT_HEADER_LEN.min(bytes.len()) & !7;
    let mut frames = 0;
    while let Ok(FrameSlot::Frame(frame)) = decode_frame(bytes, offset) {
        if directory.check_ops(frame.ops()).is_ok() {
            directory.apply_ops(frame.ops(), 1, offset + 32, &mut live);
        }
        frames += 1;
        offset += frame.len;
    }
    frames
}

/// Decodes `bytes` as a checkpoint file, as if segments 0..16 existed with 1 MiB each.
/// Returns the number of keys loaded, or `None` if the checkpoint was rejected.
pub fn decode_checkpoint_file(bytes: &[u8]) -> Option<usize> {
    let segment_len = |id: u32| (id < 16).then_some(1 << 20);
    checkpoint::decode(bytes, &segment_len)
        .ok()
        .map(|loaded| loaded.directory.total_keys())
}

/// Decodes `bytes` as a checkpoint body, skipping the CRC check so that the fuzzer reaches
/// the `rkyv` validation. Returns the number of keys loaded, or `None` if rejected.
pub fn decode_checkpoint_body(bytes: &[u8]) -> Option<usize> {
    let segment_len = |id: u32| (id < 16).then_some(1 << 20);
    checkpoint::decode_body(bytes, &segment_len)
        .ok()
        .map(|loaded| loaded.directory.total_keys())
}

/// Decodes `bytes` as a manifest. Returns whether it was accepted.
pub fn decode_manifest(bytes: &[u8]) -> bool {
    crate::format::Manifest::from_bytes(bytes).is_ok()
}
