//! MongoDB's message framing: the 16-byte header, OP_MSG (kind-0 body and kind-1 document
//! sequences, the optional CRC-32C checksum, `moreToCome`), the legacy OP_QUERY that drivers
//! send for their first handshake, and the OP_MSG and OP_REPLY replies.
//!
//! Everything here is pure bytes in, values out: no sockets, no commands. Every decoder must
//! return an error (never panic, never allocate more than the message it was given, never
//! recurse deeper than the nesting limit) on arbitrary input, because the input comes straight
//! from the network: the nesting depth of every document is measured on its raw bytes, with a
//! loop and a bounded stack ([`check_nesting`]), before the recursive decoder sees it.

use bson::spec::ElementType;
use bson::{Document, RawBsonRef, RawDocument};

use crate::error::WireError;

/// The size of a message header: length, request id, response-to id, opcode.
pub const HEADER_LEN: usize = 16;

/// The largest message accepted by default (and announced as `maxMessageSizeBytes`).
pub const MAX_MESSAGE_SIZE: usize = 48_000_000;

/// The deepest nesting accepted in a message by default: MongoDB's `maxBSONDepth` (200),
/// counted as MongoDB counts it, in levels of embedded documents and arrays below a
/// message's top-level document (a flat document has none). A kind-1 section's documents
/// are counted where the command puts them, two levels down (`{documents: [doc]}`).
pub const MAX_BSON_DEPTH: usize = 200;

/// OP_REPLY: the legacy reply to an OP_QUERY.
pub const OP_REPLY: i32 = 1;
/// OP_QUERY: legacy query, still used for the first `hello`/`isMaster` of some drivers.
pub const OP_QUERY: i32 = 2004;
/// OP_COMPRESSED: a compressed message (never negotiated, so always refused).
pub const OP_COMPRESSED: i32 = 2012;
/// OP_MSG: the message of every modern command.
pub const OP_MSG: i32 = 2013;

/// OP_MSG flag bit 0: a CRC-32C of the message follows the sections.
pub const FLAG_CHECKSUM_PRESENT: u32 = 1;
/// OP_MSG flag bit 1: the sender expects no reply.
pub const FLAG_MORE_TO_COME: u32 = 1 << 1;
/// OP_MSG flag bit 16: the client accepts a stream of replies (never used by this server).
pub const FLAG_EXHAUST_ALLOWED: u32 = 1 << 16;
/// Bits 0-15 are "required": a receiver must refuse a message with one it does not know.
const REQUIRED_FLAGS_MASK: u32 = 0xffff;
const KNOWN_FLAGS: u32 = FLAG_CHECKSUM_PRESENT | FLAG_MORE_TO_COME;

/// OP_REPLY response flag bit 3: the server supports the `AwaitData` query option.
const REPLY_AWAIT_CAPABLE: i32 = 1 << 3;

/// A message header, checked: `length` is within `HEADER_LEN..=max`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Header {
    /// The whole message's length, header included.
    pub length: usize,
    /// The sender's id for this message.
    pub request_id: i32,
    /// The id of the message this one answers (0 in requests).
    pub response_to: i32,
    /// What kind of message follows.
    pub op_code: i32,
}

impl Header {
    /// Parses and checks a header, so that the caller can allocate `length` bytes safely:
    /// a negative, too short or larger-than-`max` length is refused here, before any
    /// allocation.
    pub fn parse(bytes: &[u8; HEADER_LEN], max: usize) -> Result<Header, WireError> {
        let length = read_i32(bytes, 0);
        let header = Header {
            length: 0,
            request_id: read_i32(bytes, 4),
            response_to: read_i32(bytes, 8),
            op_code: read_i32(bytes, 12),
        };
        let Ok(length) = usize::try_from(length) else {
            return Err(WireError::BadLength {
                length: i64::from(length),
            });
        };
        if length < HEADER_LEN {
            return Err(WireError::BadLength {
                length: length as i64,
            });
        }
        if length > max {
            return Err(WireError::TooLarge { length, max });
        }
        Ok(Header { length, ..header })
    }

    fn encode(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&(self.length as i32).to_le_bytes());
        out.extend_from_slice(&self.request_id.to_le_bytes());
        out.extend_from_slice(&self.response_to.to_le_bytes());
        out.extend_from_slice(&self.op_code.to_le_bytes());
    }
}

/// A decoded request.
#[derive(Debug, Clone, PartialEq)]
pub enum Request {
    /// An OP_MSG.
    Msg(OpMsg),
    /// A legacy OP_QUERY.
    Query(OpQuery),
}

/// An OP_MSG: flags, the body (kind 0) and the document sequences (kind 1).
#[derive(Debug, Clone, PartialEq)]
pub struct OpMsg {
    /// The flag bits (the checksum bit tells whether one was present and verified).
    pub flags: u32,
    /// The kind-0 section: the command.
    pub body: Document,
    /// The kind-1 sections, in order: an identifier (a field of the command, such as
    /// `documents`) and its documents.
    pub sequences: Vec<(String, Vec<Document>)>,
}

impl OpMsg {
    /// An OP_MSG of a body alone, no flags.
    pub fn new(body: Document) -> OpMsg {
        OpMsg {
            flags: 0,
            body,
            sequences: Vec::new(),
        }
    }

    /// Whether the sender wants no reply.
    pub fn more_to_come(&self) -> bool {
        self.flags & FLAG_MORE_TO_COME != 0
    }

    /// The command: the body with each document sequence added as an array field named by
    /// its identifier. A sequence whose identifier is already a field of the body (or of an
    /// earlier sequence) is refused, as MongoDB does.
    pub fn into_command(self) -> Result<Document, WireError> {
        let mut command = self.body;
        for (identifier, documents) in self.sequences {
            if command.contains_key(&identifier) {
                return Err(WireError::DuplicateField { identifier });
            }
            let array = documents.into_iter().map(bson::Bson::Document).collect();
            command.insert(identifier, bson::Bson::Array(array));
        }
        Ok(command)
    }

    /// Encodes the message (with a CRC-32C when `flags` has the checksum bit).
    pub fn encode(&self, request_id: i32, response_to: i32) -> Result<Vec<u8>, WireError> {
        let mut out = vec![0; HEADER_LEN];
        out.extend_from_slice(&self.flags.to_le_bytes());
        out.push(0);
        append_document(&mut out, &self.body)?;
        for (identifier, documents) in &self.sequences {
            out.push(1);
            let start = out.len();
            out.extend_from_slice(&[0; 4]);
            out.extend_from_slice(identifier.as_bytes());
            out.push(0);
            for document in documents {
                append_document(&mut out, document)?;
            }
            let size = (out.len() - start) as i32;
            out[start..start + 4].copy_from_slice(&size.to_le_bytes());
        }
        let checksum = self.flags & FLAG_CHECKSUM_PRESENT != 0;
        finish(&mut out, request_id, response_to, OP_MSG, checksum);
        Ok(out)
    }
}

/// A legacy OP_QUERY. Only commands (a namespace `<db>.$cmd`) are meaningful today.
#[derive(Debug, Clone, PartialEq)]
pub struct OpQuery {
    /// The query flags (ignored).
    pub flags: i32,
    /// `<db>.<collection>`; `<db>.$cmd` for a command.
    pub full_collection_name: String,
    /// Documents to skip (ignored for commands).
    pub number_to_skip: i32,
    /// Documents to return (ignored for commands).
    pub number_to_return: i32,
    /// The query: for a command, the command document (possibly wrapped in `$query`).
    pub query: Document,
    /// The optional projection.
    pub return_fields_selector: Option<Document>,
}

impl OpQuery {
    /// The database of a command (`admin` for `admin.$cmd`), or `None` when the namespace is
    /// not a command namespace.
    pub fn command_database(&self) -> Option<&str> {
        self.full_collection_name.strip_suffix(".$cmd")
    }

    /// The command document: the query, unwrapped from `{ $query: ... }` when a driver
    /// wrapped it (to add `$readPreference`).
    pub fn command(&self) -> Document {
        match self.query.get("$query") {
            Some(bson::Bson::Document(inner)) => inner.clone(),
            _ => self.query.clone(),
        }
    }

    /// Encodes the message.
    pub fn encode(&self, request_id: i32) -> Result<Vec<u8>, WireError> {
        let mut out = vec![0; HEADER_LEN];
        out.extend_from_slice(&self.flags.to_le_bytes());
        out.extend_from_slice(self.full_collection_name.as_bytes());
        out.push(0);
        out.extend_from_slice(&self.number_to_skip.to_le_bytes());
        out.extend_from_slice(&self.number_to_return.to_le_bytes());
        append_document(&mut out, &self.query)?;
        if let Some(fields) = &self.return_fields_selector {
            append_document(&mut out, fields)?;
        }
        finish(&mut out, request_id, 0, OP_QUERY, false);
        Ok(out)
    }
}

/// Whether the server reads the body of a message with this opcode: OP_MSG and OP_QUERY.
/// Every other opcode (OP_COMPRESSED, which is never negotiated, the removed legacy opcodes)
/// is refused from the header, before its body is read or allocated.
pub fn is_request_opcode(op_code: i32) -> bool {
    matches!(op_code, OP_MSG | OP_QUERY)
}

/// Decodes one whole message (header included, exactly `header.length` bytes), verifying
/// the OP_MSG checksum when one is present, with the default nesting limit
/// ([`MAX_BSON_DEPTH`]). OP_COMPRESSED and every other opcode are refused.
pub fn decode_message(message: &[u8]) -> Result<Request, WireError> {
    decode_message_with_depth(message, MAX_BSON_DEPTH)
}

/// [`decode_message`] with a nesting limit of `max_depth` levels below each command's
/// top-level document: a deeper document is [`WireError::TooDeep`], found by a loop over its
/// raw bytes before anything recursive reads it.
pub fn decode_message_with_depth(message: &[u8], max_depth: usize) -> Result<Request, WireError> {
    let Some(header_bytes) = message.first_chunk::<HEADER_LEN>() else {
        return Err(WireError::Truncated { what: "header" });
    };
    let header = Header::parse(header_bytes, usize::MAX)?;
    if header.length != message.len() {
        return Err(WireError::LengthMismatch {
            declared: header.length,
            actual: message.len(),
        });
    }
    match header.op_code {
        OP_MSG => decode_op_msg(message, max_depth).map(Request::Msg),
        OP_QUERY => decode_op_query(&message[HEADER_LEN..], max_depth).map(Request::Query),
        op_code => Err(WireError::UnsupportedOpcode { op_code }),
    }
}

/// The flag bits of an OP_MSG (`None` for another opcode or a message too short to have
/// them): read without decoding, so that an error reply can honour `moreToCome`.
pub fn op_msg_flags(message: &[u8]) -> Option<u32> {
    let header = message.first_chunk::<HEADER_LEN>()?;
    if read_i32(header, 12) != OP_MSG || message.len() < HEADER_LEN + 4 {
        return None;
    }
    Some(read_u32(message, HEADER_LEN))
}

/// Checks that `document` nests no more than `max_levels` levels of embedded documents and
/// arrays (a JavaScript scope counts as a document) below itself, with a loop whose stack is
/// at most `max_levels + 1` iterators long: no recursion, whatever the bytes. An element the
/// walk has to open and cannot is reported as bad BSON.
pub fn check_nesting(
    document: &RawDocument,
    max_levels: usize,
    what: &'static str,
) -> Result<(), WireError> {
    let bad = |error: bson::error::Error| WireError::BadBson {
        what,
        message: error.to_string(),
    };
    let mut open = vec![document.iter_elements()];
    while let Some(innermost) = open.last_mut() {
        let Some(element) = innermost.next() else {
            open.pop();
            continue;
        };
        let element = element.map_err(bad)?;
        let nested = match element.element_type() {
            ElementType::EmbeddedDocument
            | ElementType::Array
            | ElementType::JavaScriptCodeWithScope => element.value().map_err(bad)?,
            _ => continue,
        };
        // `open` holds the top-level document and every level above this element's value.
        if open.len() > max_levels {
            return Err(WireError::TooDeep {
                what,
                limit: max_levels,
            });
        }
        let elements = match nested {
            RawBsonRef::Document(inner) => inner.iter_elements(),
            RawBsonRef::Array(inner) => inner.iter_elements(),
            RawBsonRef::JavaScriptCodeWithScope(code) => code.scope.iter_elements(),
            _ => continue,
        };
        open.push(elements);
    }
    Ok(())
}

fn decode_op_msg(message: &[u8], max_depth: usize) -> Result<OpMsg, WireError> {
    let mut reader = Reader::new(&message[HEADER_LEN..]);
    let flags = reader.u32("the flag bits")?;
    if flags & REQUIRED_FLAGS_MASK & !KNOWN_FLAGS != 0 {
        return Err(WireError::UnknownRequiredFlags { flags });
    }
    let mut sections_end = message.len();
    if flags & FLAG_CHECKSUM_PRESENT != 0 {
        if message.len() < HEADER_LEN + 4 + 4 {
            return Err(WireError::Truncated {
                what: "the checksum",
            });
        }
        sections_end -= 4;
        let expected = read_u32(message, sections_end);
        let actual = crc32c::crc32c(&message[..sections_end]);
        if expected != actual {
            return Err(WireError::ChecksumMismatch { expected, actual });
        }
    }
    let mut reader = Reader::new(&message[HEADER_LEN + 4..sections_end]);
    let mut body = None;
    let mut sequences = Vec::new();
    while !reader.is_empty() {
        match reader.u8("section kind")? {
            0 => {
                let document = reader.document("the body section", max_depth)?;
                if body.replace(document).is_some() {
                    return Err(WireError::DuplicateBody);
                }
            }
            1 => {
                let size = reader.i32("a document sequence's size")?;
                let Some(content_len) = usize::try_from(size)
                    .ok()
                    .and_then(|size| size.checked_sub(4))
                else {
                    return Err(WireError::BadSectionSize { size });
                };
                let mut section = Reader::new(reader.take(content_len, "a document sequence")?);
                let identifier = section.cstring("a document sequence's identifier")?;
                let mut documents = Vec::new();
                // Each document lands two levels down in the command: `{identifier: [doc]}`.
                let levels = max_depth.saturating_sub(2);
                while !section.is_empty() {
                    documents.push(section.document("a document sequence", levels)?);
                }
                sequences.push((identifier, documents));
            }
            kind => return Err(WireError::BadSectionKind { kind }),
        }
    }
    let body = body.ok_or(WireError::MissingBody)?;
    Ok(OpMsg {
        flags,
        body,
        sequences,
    })
}

fn decode_op_query(bytes: &[u8], max_depth: usize) -> Result<OpQuery, WireError> {
    let mut reader = Reader::new(bytes);
    let flags = reader.i32("OP_QUERY flags")?;
    let full_collection_name = reader.cstring("OP_QUERY namespace")?;
    let number_to_skip = reader.i32("OP_QUERY numberToSkip")?;
    let number_to_return = reader.i32("OP_QUERY numberToReturn")?;
    let query = reader.document("the OP_QUERY query", max_depth)?;
    let return_fields_selector = if reader.is_empty() {
        None
    } else {
        Some(reader.document("the OP_QUERY field selector", max_depth)?)
    };
    if !reader.is_empty() {
        return Err(WireError::TrailingBytes {
            count: reader.remaining(),
        });
    }
    Ok(OpQuery {
        flags,
        full_collection_name,
        number_to_skip,
        number_to_return,
        query,
        return_fields_selector,
    })
}

/// Encodes the OP_MSG reply to request `response_to`: no flags, one body section, never a
/// checksum (a client that sent one accepts a reply without).
pub fn encode_reply(request_id: i32, response_to: i32, reply: &Document) -> Vec<u8> {
    encode_reply_with_flags(request_id, response_to, 0, reply)
}

/// An OP_MSG reply with `flags` (`FLAG_MORE_TO_COME` for each but the last reply of an
/// exhaust cursor's stream).
pub fn encode_reply_with_flags(
    request_id: i32,
    response_to: i32,
    flags: u32,
    reply: &Document,
) -> Vec<u8> {
    let mut out = vec![0; HEADER_LEN];
    out.extend_from_slice(&flags.to_le_bytes());
    out.push(0);
    append_reply_document(&mut out, reply);
    finish(&mut out, request_id, response_to, OP_MSG, false);
    out
}

/// Encodes the OP_REPLY to an OP_QUERY: one document, no cursor.
pub fn encode_op_reply(request_id: i32, response_to: i32, reply: &Document) -> Vec<u8> {
    let mut out = vec![0; HEADER_LEN];
    out.extend_from_slice(&REPLY_AWAIT_CAPABLE.to_le_bytes());
    out.extend_from_slice(&0i64.to_le_bytes()); // cursorID
    out.extend_from_slice(&0i32.to_le_bytes()); // startingFrom
    out.extend_from_slice(&1i32.to_le_bytes()); // numberReturned
    append_reply_document(&mut out, reply);
    finish(&mut out, request_id, response_to, OP_REPLY, false);
    out
}

/// Appends a reply document. A reply that cannot be encoded (a key with a NUL byte, which
/// only a bug upstream could produce) is replaced by an InternalError reply, so that the
/// client always gets an answer.
fn append_reply_document(out: &mut Vec<u8>, reply: &Document) {
    let start = out.len();
    if let Err(error) = append_document(out, reply) {
        out.truncate(start);
        let fallback = bson::doc! {
            "ok": 0.0,
            "errmsg": format!("the reply could not be encoded: {error}"),
            "code": 1,
            "codeName": "InternalError",
        };
        append_document(out, &fallback).expect("a fixed document encodes");
    }
}

fn append_document(out: &mut Vec<u8>, document: &Document) -> Result<(), WireError> {
    document
        .to_writer(&mut *out)
        .map_err(|error| WireError::Encode {
            message: error.to_string(),
        })
}

/// Fills in the header of `out` (whose first `HEADER_LEN` bytes are reserved), appending
/// the CRC-32C first when asked.
fn finish(out: &mut Vec<u8>, request_id: i32, response_to: i32, op_code: i32, checksum: bool) {
    if checksum {
        out.extend_from_slice(&[0; 4]);
    }
    let header = Header {
        length: out.len(),
        request_id,
        response_to,
        op_code,
    };
    let mut bytes = Vec::with_capacity(HEADER_LEN);
    header.encode(&mut bytes);
    out[..HEADER_LEN].copy_from_slice(&bytes);
    if checksum {
        let end = out.len() - 4;
        let crc = crc32c::crc32c(&out[..end]);
        out[end..].copy_from_slice(&crc.to_le_bytes());
    }
}

fn read_i32(bytes: &[u8], at: usize) -> i32 {
    i32::from_le_bytes(bytes[at..at + 4].try_into().expect("4 bytes"))
}

fn read_u32(bytes: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(bytes[at..at + 4].try_into().expect("4 bytes"))
}

/// A cursor over a message's bytes whose every read is bounds-checked.
struct Reader<'a> {
    bytes: &'a [u8],
}

impl<'a> Reader<'a> {
    fn new(bytes: &'a [u8]) -> Reader<'a> {
        Reader { bytes }
    }

    fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }

    fn remaining(&self) -> usize {
        self.bytes.len()
    }

    fn take(&mut self, len: usize, what: &'static str) -> Result<&'a [u8], WireError> {
        if len > self.bytes.len() {
            return Err(WireError::Truncated { what });
        }
        let (taken, rest) = self.bytes.split_at(len);
        self.bytes = rest;
        Ok(taken)
    }

    fn u8(&mut self, what: &'static str) -> Result<u8, WireError> {
        Ok(self.take(1, what)?[0])
    }

    fn i32(&mut self, what: &'static str) -> Result<i32, WireError> {
        Ok(read_i32(self.take(4, what)?, 0))
    }

    fn u32(&mut self, what: &'static str) -> Result<u32, WireError> {
        Ok(read_u32(self.take(4, what)?, 0))
    }

    fn cstring(&mut self, what: &'static str) -> Result<String, WireError> {
        let Some(nul) = self.bytes.iter().position(|&byte| byte == 0) else {
            return Err(WireError::BadCString { what });
        };
        let bytes = self.take(nul + 1, what)?;
        std::str::from_utf8(&bytes[..nul])
            .map(str::to_owned)
            .map_err(|_| WireError::BadCString { what })
    }

    /// One BSON document: its declared length must fit what is left, its nesting must stay
    /// within `max_levels` (checked on the raw bytes before the recursive decoder runs), and
    /// its content must be valid BSON. Decoded by `spillway_doc::decode`, which reads each
    /// value once from the message's bytes (`bson`'s own conversion copies every embedded
    /// document once per level above it: memory of depth times size).
    fn document(&mut self, what: &'static str, max_levels: usize) -> Result<Document, WireError> {
        let Some(length_bytes) = self.bytes.first_chunk::<4>() else {
            return Err(WireError::Truncated { what });
        };
        let length = i32::from_le_bytes(*length_bytes);
        let Some(length) = usize::try_from(length).ok().filter(|&length| length >= 5) else {
            return Err(WireError::BadBson {
                what,
                message: format!("document length {length}"),
            });
        };
        let bytes = self.take(length, what)?;
        let raw = RawDocument::from_bytes(bytes).map_err(|error| WireError::BadBson {
            what,
            message: error.to_string(),
        })?;
        check_nesting(raw, max_levels, what)?;
        spillway_doc::decode::document(raw).map_err(|error| WireError::BadBson {
            what,
            message: error.to_string(),
        })
    }
}
