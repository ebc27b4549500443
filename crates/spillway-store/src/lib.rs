#![doc = include_str!("../README.md")]
//!
//! ## What it does
//!
//! - **Keyspaces** of ordered byte keys to byte values ([`Store::keyspace`]).
//! - **Atomic write batches** across keyspaces ([`WriteBatch`], [`Store::commit`]): each batch
//!   is one checksummed frame in an append-only segment file, so it is all or nothing.
//! - **Snapshots** ([`Store::snapshot`]): O(1) to take, unaffected by later commits and
//!   compaction, values read in place from the segment maps (8-byte aligned).
//! - **Durability modes** ([`Durability`]): fsync every commit with group commit, fsync on an
//!   interval, or leave it to the OS. A failed fsync poisons the handle.
//! - **Recovery**: a torn tail of the active segment (a bad last frame with nothing intact
//!   after it) is dropped and reported; a damaged checkpoint is replaced by the fallback (the
//!   previous checkpoint and the log after it, or the whole log), reported
//!   ([`RecoveryReport::checkpoint_fallback`]) and healed by a new checkpoint. An open checks
//!   only the checkpoint's header, block table and structure; its other blocks are checked
//!   when a read first touches them, and a damaged one fails exactly the reads, commits and
//!   checkpoints that touch it with [`Error::Corrupt`] (never wrong data), is reported by
//!   [`Store::verify`], makes the next open fall back if its replay reads it, and is healed
//!   by [`Store::repair`] (`docs/file-format.md`, "Damage found after the open"). Damage
//!   anywhere else, including a bad frame
//!   followed by intact ones, or in the fallback as well, fails the open with the file and
//!   offset and changes nothing, and [`Store::repair`] salvages around it.
//! - **Checkpoints** ([`Store::checkpoint`], and automatically: see
//!   [`StoreOptions::checkpoint_after_log_bytes`]): the key directory as a checked `rkyv`
//!   archive that is mapped and read in place, so opening replays only the log written after
//!   it, and memory holds only the keys changed since ([`StoreStats::keys_in_memory`]): open
//!   time and resident memory do not grow with the key count. One CRC per 64 KiB block,
//!   checked the first time a read touches the block, so the open reads only a few blocks
//!   ([`StoreStats::checkpoint_blocks_checked`]). The previous checkpoint stays as
//!   the fallback until the next one.
//! - **Compaction** ([`Store::compact`]): live records of mostly-dead segments are copied into
//!   new segments, installed through an atomically replaced manifest; the old segments are kept
//!   for the fallback until the next checkpoint, and deleted only when no snapshot maps them.
//! - **Exclusive lock** on the directory itself: a second writer gets [`Error::Locked`]
//!   (after waiting 200 ms for a holder that is just letting go).
//!   [`Store::open_read_only`] shares the lock with other readers and writes nothing.
//! - **Allocated segments**: a full disk is an error on the call that needs space
//!   ([`Error::is_disk_full`]), never a SIGBUS from a mapped hole.
//!
//! All file I/O goes through [`backend::Backend`]; [`backend::MemoryBackend`] simulates
//! crashes and injects faults for tests. The on-disk format and the recovery argument are in
//! `docs/file-format.md`; the `unsafe` argument is in `UNSAFE.md`.
//!
//! This crate knows nothing about documents or BSON: keys and values are opaque bytes.
//!
//! Modules are layered, each using only those below it (bottom first): `error`, `format`,
//! `map` (a file's read-only view) → `backend`, `batch` → `mapped` (published bytes of a
//! mapped file) → `checkpoint_archive` (the archive's layout), `segment` → `directory` →
//! `checkpoint`, `compaction`, `snapshot` → `recovery` (opening, and its report), `fuzzing` →
//! `salvage` (repair, and its report) → `store`.

pub mod backend;
mod batch;
mod checkpoint;
mod checkpoint_archive;
mod compaction;
mod directory;
mod error;
mod format;
#[doc(hidden)]
pub mod fuzzing;
mod map;
mod mapped;
mod recovery;
mod salvage;
mod segment;
mod snapshot;
mod store;

pub use batch::WriteBatch;
pub use error::{Error, Result};
pub use format::SegmentKind;
pub use recovery::{CheckpointFallback, RecoveryReport, TornTail};
pub use salvage::{Damage, LostWrite, LostWriteEffect, RepairReport};
pub use snapshot::{Range, Snapshot, ValueLengths, ValueVersion};
pub use store::{
    CLOSE_CHECKPOINT_MIN_BYTES, CompactionReport, Durability, KeyspaceId, KeyspaceStats,
    MAX_SEGMENT_SIZE, MIN_SEGMENT_SIZE, SMALL_DISK_SEGMENT_SIZE, SegmentStats, Store, StoreOptions,
    StoreStats, VerifyReport,
};
