//! The server's error types: `WireError` for a message that cannot be decoded (it closes that
//! connection) and `ServerError` for what stops the server itself (binding, the runtime).
//!
//! A command that fails is never one of these: it is an `ok: 0` reply document.

use std::fmt;
use std::io;
use std::net::SocketAddr;

/// A message that cannot be decoded. The connection that sent it is closed.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum WireError {
    /// The header's length is negative or shorter than the header itself.
    BadLength {
        /// The declared length.
        length: i64,
    },
    /// The header's length is over the limit (refused before allocating).
    TooLarge {
        /// The declared length.
        length: usize,
        /// The limit.
        max: usize,
    },
    /// The declared length differs from the bytes given to the decoder.
    LengthMismatch {
        /// The length in the header.
        declared: usize,
        /// The bytes given.
        actual: usize,
    },
    /// The message ends inside something.
    Truncated {
        /// What was being read.
        what: &'static str,
    },
    /// An opcode this server does not speak (OP_COMPRESSED, the removed legacy opcodes...).
    UnsupportedOpcode {
        /// The opcode.
        op_code: i32,
    },
    /// An OP_MSG with a required flag bit (0-15) this server does not know.
    UnknownRequiredFlags {
        /// The flag bits.
        flags: u32,
    },
    /// An OP_MSG section kind other than 0 and 1.
    BadSectionKind {
        /// The kind byte.
        kind: u8,
    },
    /// A document sequence whose size is negative or smaller than its own size field.
    BadSectionSize {
        /// The declared size.
        size: i32,
    },
    /// A string that has no terminating NUL or is not UTF-8.
    BadCString {
        /// What was being read.
        what: &'static str,
    },
    /// A document nested deeper than the limit (found on its raw bytes, before decoding).
    /// The connection answers it with MongoDB's `Overflow` (15) and goes on.
    TooDeep {
        /// Where it was.
        what: &'static str,
        /// The levels allowed below that document.
        limit: usize,
    },
    /// A document that is not valid BSON.
    BadBson {
        /// Where it was.
        what: &'static str,
        /// What is wrong with it.
        message: String,
    },
    /// The OP_MSG checksum does not match the message.
    ChecksumMismatch {
        /// The checksum in the message.
        expected: u32,
        /// The CRC-32C of the message.
        actual: u32,
    },
    /// An OP_MSG without a kind-0 section.
    MissingBody,
    /// An OP_MSG with two kind-0 sections.
    DuplicateBody,
    /// A document sequence whose identifier is already a field of the command.
    DuplicateField {
        /// The identifier.
        identifier: String,
    },
    /// Bytes after the last part of a message.
    TrailingBytes {
        /// How many.
        count: usize,
    },
    /// A document that cannot be encoded (a key with a NUL byte).
    Encode {
        /// What is wrong with it.
        message: String,
    },
}

impl fmt::Display for WireError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            WireError::BadLength { length } => {
                write!(f, "message length {length} is shorter than a header")
            }
            WireError::TooLarge { length, max } => {
                write!(
                    f,
                    "message length {length} is over the limit of {max} bytes"
                )
            }
            WireError::LengthMismatch { declared, actual } => write!(
                f,
                "the header declares {declared} bytes but the message has {actual}"
            ),
            WireError::Truncated { what } => write!(f, "the message ends inside {what}"),
            WireError::UnsupportedOpcode { op_code } => {
                let name = match *op_code {
                    2012 => " (OP_COMPRESSED; compression is never negotiated)",
                    1 => " (OP_REPLY is a reply, not a request)",
                    2001 | 2002 | 2005 | 2006 | 2007 => " (a legacy opcode removed in MongoDB 6.0)",
                    _ => "",
                };
                write!(f, "unsupported opcode {op_code}{name}")
            }
            WireError::UnknownRequiredFlags { flags } => {
                write!(
                    f,
                    "OP_MSG flags {flags:#x} set a required bit this server does not know"
                )
            }
            WireError::BadSectionKind { kind } => write!(f, "unknown OP_MSG section kind {kind}"),
            WireError::BadSectionSize { size } => write!(f, "document sequence size {size}"),
            WireError::BadCString { what } => {
                write!(f, "{what} is not a NUL-terminated UTF-8 string")
            }
            WireError::TooDeep { what, limit } => write!(
                f,
                "BSONObj exceeded maximum nested object depth: {what} nests more than {limit} levels"
            ),
            WireError::BadBson { what, message } => write!(f, "bad BSON in {what}: {message}"),
            WireError::ChecksumMismatch { expected, actual } => write!(
                f,
                "checksum mismatch: the message says {expected:#010x}, its CRC-32C is {actual:#010x}"
            ),
            WireError::MissingBody => write!(f, "OP_MSG without a body section (kind 0)"),
            WireError::DuplicateBody => write!(f, "OP_MSG with more than one body section"),
            WireError::DuplicateField { identifier } => write!(
                f,
                "document sequence '{identifier}' duplicates a field of the command"
            ),
            WireError::TrailingBytes { count } => {
                write!(f, "{count} bytes after the end of the message")
            }
            WireError::Encode { message } => write!(f, "cannot encode a document: {message}"),
        }
    }
}

impl std::error::Error for WireError {}

/// What stops the server.
#[derive(Debug)]
#[non_exhaustive]
pub enum ServerError {
    /// The listening socket could not be bound.
    Bind {
        /// The address asked for.
        address: String,
        /// Why.
        source: io::Error,
    },
    /// The async runtime or the signal handlers could not be set up.
    Runtime(io::Error),
    /// `auth` was asked of an executor without a database to keep users in.
    AuthWithoutDatabase,
    /// A TLS certificate or key file cannot be used.
    Tls {
        /// The file.
        path: std::path::PathBuf,
        /// What is wrong with it.
        message: String,
    },
    /// The embedded database cannot be served under the name given
    /// ([`crate::ServerOptions::embedded_database`]).
    EmbeddedDatabase {
        /// The name given.
        name: String,
        /// Why not.
        reason: String,
    },
    /// The database's collection names could not be read at start.
    Store(spillway::Error),
    /// The listening socket failed.
    Accept {
        /// The address listened on.
        address: SocketAddr,
        /// Why.
        source: io::Error,
    },
}

impl fmt::Display for ServerError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ServerError::Bind { address, source } => {
                write!(f, "cannot listen on {address}: {source}")
            }
            ServerError::Runtime(source) => write!(f, "cannot start the server runtime: {source}"),
            ServerError::AuthWithoutDatabase => {
                write!(f, "authentication needs a database to keep its users in")
            }
            ServerError::Tls { path, message } => {
                write!(f, "TLS: {}: {message}", path.display())
            }
            ServerError::Accept { address, source } => {
                write!(f, "the listening socket {address} failed: {source}")
            }
            ServerError::EmbeddedDatabase { name, reason } => {
                write!(f, "--embedded-database {name}: {reason}")
            }
            ServerError::Store(source) => {
                write!(f, "cannot read the database's collection names: {source}")
            }
        }
    }
}

impl std::error::Error for ServerError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            ServerError::Bind { source, .. }
            | ServerError::Runtime(source)
            | ServerError::Accept { source, .. } => Some(source),
            ServerError::Store(source) => Some(source),
            ServerError::Tls { .. }
            | ServerError::AuthWithoutDatabase
            | ServerError::EmbeddedDatabase { .. } => None,
        }
    }
}
