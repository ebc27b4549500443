//! The crate's error type.
//!
//! Every variant says what went wrong and where (file, offset, keyspace). This module must never
//! hide an `io::Error`: the original is kept whole in [`Error::Io`]. Its text is part of the
//! message, so `source()` does not return it again (it forwards the `io::Error`'s own source):
//! a caller printing the chain says each cause once.

use std::fmt;
use std::io;
use std::path::PathBuf;

use crate::KeyspaceId;

/// Result alias used throughout `spillway-store`.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Everything that can go wrong in `spillway-store`.
#[derive(Debug)]
#[non_exhaustive]
pub enum Error {
    /// An I/O call failed.
    Io {
        /// What the store was doing (`"write frame"`, `"fsync segment"`, ...).
        operation: &'static str,
        /// The file or directory involved.
        path: PathBuf,
        /// The error the operating system (or the backend) returned.
        source: io::Error,
    },
    /// Another process (or another handle in this process) holds the store's exclusive lock.
    Locked {
        /// The store directory.
        path: PathBuf,
    },
    /// Bytes on disk are not what the store wrote: a checksum failed or a structure is invalid.
    Corrupt {
        /// The damaged file.
        path: PathBuf,
        /// Byte offset of the damaged structure inside the file.
        offset: u64,
        /// What was wrong.
        reason: String,
    },
    /// An earlier write or fsync failed, so the page cache can no longer be trusted: every later
    /// write fails until the store is reopened.
    Poisoned {
        /// The failure that poisoned the handle.
        cause: String,
    },
    /// A batch or snapshot named a keyspace id that does not exist (never created, or dropped).
    UnknownKeyspace(KeyspaceId),
    /// A keyspace name is empty or too long.
    InvalidKeyspaceName(String),
    /// A key, value or batch is larger than the format can hold.
    TooLarge {
        /// What was too large (`"key"`, `"value"`, `"batch"`).
        what: &'static str,
        /// Its size in bytes.
        len: u64,
        /// The largest accepted size in bytes.
        max: u64,
    },
    /// The options passed to `Store::open` are inconsistent.
    InvalidOptions(String),
    /// A write, checkpoint or compaction on a store opened with `Store::open_read_only`.
    ReadOnly {
        /// What was refused (`"commit"`, `"checkpoint"`, ...).
        operation: &'static str,
        /// The store directory.
        path: PathBuf,
    },
}

impl Error {
    pub(crate) fn io(operation: &'static str, path: impl Into<PathBuf>, source: io::Error) -> Self {
        Error::Io {
            operation,
            path: path.into(),
            source,
        }
    }

    /// A failed attempt to lock the store directory `dir`: [`Error::Locked`] when another
    /// process holds it, an I/O error otherwise.
    pub(crate) fn lock_failed(dir: &std::path::Path, source: io::Error) -> Self {
        if source.kind() == io::ErrorKind::WouldBlock {
            Error::Locked {
                path: dir.to_path_buf(),
            }
        } else {
            Error::io("lock store directory", dir, source)
        }
    }

    pub(crate) fn corrupt(
        path: impl Into<PathBuf>,
        offset: u64,
        reason: impl Into<String>,
    ) -> Self {
        Error::Corrupt {
            path: path.into(),
            offset,
            reason: reason.into(),
        }
    }

    /// True for [`Error::Corrupt`].
    pub fn is_corruption(&self) -> bool {
        matches!(self, Error::Corrupt { .. })
    }

    /// True for an I/O error caused by a full disk (`ENOSPC`).
    pub fn is_disk_full(&self) -> bool {
        matches!(self, Error::Io { source, .. } if source.kind() == io::ErrorKind::StorageFull)
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Io {
                operation,
                path,
                source,
            } => {
                if source.kind() == io::ErrorKind::StorageFull {
                    f.write_str("disk full: ")?;
                }
                write!(f, "{operation} failed on {}: {source}", path.display())
            }
            Error::Locked { path } => write!(
                f,
                "database is locked by another process: {}",
                path.display()
            ),
            Error::Corrupt {
                path,
                offset,
                reason,
            } => write!(
                f,
                "corruption in {} at offset {offset}: {reason}",
                path.display()
            ),
            Error::Poisoned { cause } => write!(
                f,
                "store handle is poisoned by an earlier failed write or fsync ({cause}); reopen the store"
            ),
            Error::UnknownKeyspace(id) => write!(f, "unknown keyspace id {}", id.as_u32()),
            Error::InvalidKeyspaceName(name) => write!(
                f,
                "invalid keyspace name {name:?}: names must be 1 to 1024 bytes"
            ),
            Error::TooLarge { what, len, max } => {
                write!(
                    f,
                    "{what} of {len} bytes is larger than the limit of {max} bytes"
                )
            }
            Error::InvalidOptions(message) => write!(f, "invalid store options: {message}"),
            Error::ReadOnly { operation, path } => write!(
                f,
                "{operation} refused: the database in {} was opened read-only",
                path.display()
            ),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            // The message already says `source`; give what it does not say.
            Error::Io { source, .. } => source.source(),
            _ => None,
        }
    }
}
