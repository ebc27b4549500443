//! Raw BSON walked and written element by element, without decoding values: the splices
//! of stored documents (an expanded logical array assembled from side documents, values
//! appended to a stored array) copy each element's bytes as they are.
//!
//! [`elements`] walks a document or array by BSON's grammar and checks every length against
//! the buffer; it does not validate keys as UTF-8 or parse values again (both were checked
//! when the document was stored, and callers only copy them). [`Writer`] writes a document
//! or array element by element. [`append_to_array`] splices new elements onto the end of a
//! top-level array of a stored document.

use bson::Bson;
use bson::raw::{RawArray, RawBsonRef, RawDocument};
use bson::spec::ElementType;

/// The elements of a raw document or array in order: key bytes, type and value bytes.
///
/// Walks the bytes by BSON's grammar and checks every length against the buffer; it does
/// not validate keys as UTF-8 or parse values again (both were checked when the document was
/// stored, and the caller only copies them), which makes it about twice as fast as `bson`'s
/// iterator on the hundred-thousand-element arrays it splices.
pub fn elements(bytes: &[u8]) -> Elements<'_> {
    Elements {
        bytes,
        at: 4,
        done: bytes.len() < 5,
    }
}

/// The iterator of [`elements`].
pub struct Elements<'a> {
    bytes: &'a [u8],
    at: usize,
    done: bool,
}

/// One element: its key, its type and its value's bytes.
pub type Element<'a> = (&'a [u8], ElementType, &'a [u8]);

impl<'a> Elements<'a> {
    /// Ends the walk at malformed bytes, with the error naming where and `what`.
    #[cold]
    fn malformed(&mut self, what: Malformed) -> String {
        self.done = true;
        format!("malformed BSON at byte {}: {what}", self.at)
    }

    /// The length of the NUL-terminated string at `at`, its NUL included.
    #[inline]
    fn cstring_len(&self, at: usize) -> Option<usize> {
        let rest = self.bytes.get(at..)?;
        // Keys are short (an array's are its indexes): the first eight bytes are looked at
        // as one word, the NUL found without a loop.
        if let Some(word) = rest.first_chunk::<8>() {
            let word = u64::from_le_bytes(*word);
            let zeros = word.wrapping_sub(0x0101_0101_0101_0101) & !word & 0x8080_8080_8080_8080;
            if zeros != 0 {
                return Some(zeros.trailing_zeros() as usize / 8 + 1);
            }
        }
        rest.iter().position(|&byte| byte == 0).map(|nul| nul + 1)
    }

    /// The little-endian `i32` at `at` as a length of at least `minimum`.
    #[inline]
    fn length_at(&self, at: usize, minimum: usize) -> Option<usize> {
        let raw = self.bytes.get(at..at + 4)?;
        let length = i32::from_le_bytes([raw[0], raw[1], raw[2], raw[3]]);
        usize::try_from(length)
            .ok()
            .filter(|&length| length >= minimum)
    }

    /// How many bytes the value of type `kind` at `at` takes.
    #[expect(
        clippy::inline_always,
        reason = "runs once per element of every document a scan filters; with `#[inline]` alone the scan profile showed it as a call of its own"
    )]
    #[inline(always)]
    fn value_len(&self, kind: ElementType, at: usize) -> Option<usize> {
        Some(match kind {
            ElementType::Double | ElementType::DateTime | ElementType::Int64 => 8,
            ElementType::Timestamp => 8,
            ElementType::Int32 => 4,
            ElementType::Decimal128 => 16,
            ElementType::ObjectId => 12,
            ElementType::Boolean => 1,
            ElementType::Null
            | ElementType::Undefined
            | ElementType::MinKey
            | ElementType::MaxKey => 0,
            ElementType::String | ElementType::JavaScriptCode | ElementType::Symbol => {
                4 + self.length_at(at, 1)?
            }
            ElementType::EmbeddedDocument
            | ElementType::Array
            | ElementType::JavaScriptCodeWithScope => self.length_at(at, 5)?,
            ElementType::Binary => 4 + 1 + self.length_at(at, 0)?,
            ElementType::RegularExpression => {
                let pattern = self.cstring_len(at)?;
                pattern + self.cstring_len(at + pattern)?
            }
            ElementType::DbPointer => 4 + self.length_at(at, 1)? + 12,
        })
    }

    /// The element at the walk's position as its type, where its value starts and where it
    /// ends; `None` at the document's final NUL, what is wrong at malformed bytes.
    #[expect(
        clippy::inline_always,
        reason = "runs once per element of every document a scan filters; with `#[inline]` alone the scan profile showed it as a call of its own"
    )]
    #[inline(always)]
    fn element_at(&self) -> Result<Option<(ElementType, usize, usize)>, Malformed> {
        let Some(&kind_byte) = self.bytes.get(self.at) else {
            return Err(Malformed::NoFinalNul);
        };
        if kind_byte == 0 {
            if self.at + 1 != self.bytes.len() {
                return Err(Malformed::EndsEarly);
            }
            return Ok(None);
        }
        let Some(kind) = element_type(kind_byte) else {
            return Err(Malformed::UnknownType(kind_byte));
        };
        let key_start = self.at + 1;
        let Some(key_len) = self.cstring_len(key_start) else {
            return Err(Malformed::UnterminatedKey);
        };
        let value_start = key_start + key_len;
        let value_end = self
            .value_len(kind, value_start)
            .and_then(|len| value_start.checked_add(len))
            .filter(|&end| end < self.bytes.len());
        match value_end {
            Some(value_end) => Ok(Some((kind, value_start, value_end))),
            None => Err(Malformed::ValuePastEnd),
        }
    }

    /// The next element whose key is `key`, as its type and value bytes; the walk goes on
    /// after it. The keys passed over are compared where they lie, without making an
    /// [`Element`] of each: a filter looks its field up this way in every document a scan
    /// reads.
    #[inline]
    pub fn find_key(&mut self, key: &[u8]) -> Option<Result<(ElementType, &'a [u8]), String>> {
        let wanted = KeyProbe::new(key);
        while !self.done {
            match self.element_at() {
                Ok(None) => self.done = true,
                Ok(Some((kind, value_start, value_end))) => {
                    let found = wanted.is_at(self.bytes, self.at + 1, value_start - 1);
                    self.at = value_end;
                    if found {
                        return Some(Ok((kind, &self.bytes[value_start..value_end])));
                    }
                }
                Err(what) => return Some(Err(self.malformed(what))),
            }
        }
        None
    }
}

/// The element type of `byte`: `ElementType::from`, inlined into the walk (the `bson` function
/// is a call per element).
#[expect(
    clippy::inline_always,
    reason = "runs once per element of every document a scan filters; with `#[inline]` alone the scan profile showed it as a call of its own"
)]
#[inline(always)]
fn element_type(byte: u8) -> Option<ElementType> {
    Some(match byte {
        0x01 => ElementType::Double,
        0x02 => ElementType::String,
        0x03 => ElementType::EmbeddedDocument,
        0x04 => ElementType::Array,
        0x05 => ElementType::Binary,
        0x06 => ElementType::Undefined,
        0x07 => ElementType::ObjectId,
        0x08 => ElementType::Boolean,
        0x09 => ElementType::DateTime,
        0x0A => ElementType::Null,
        0x0B => ElementType::RegularExpression,
        0x0C => ElementType::DbPointer,
        0x0D => ElementType::JavaScriptCode,
        0x0E => ElementType::Symbol,
        0x0F => ElementType::JavaScriptCodeWithScope,
        0x10 => ElementType::Int32,
        0x11 => ElementType::Timestamp,
        0x12 => ElementType::Int64,
        0x13 => ElementType::Decimal128,
        0x7F => ElementType::MaxKey,
        0xFF => ElementType::MinKey,
        _ => return None,
    })
}

/// What [`Elements`] found wrong with the bytes it walks.
#[derive(Clone, Copy, Debug)]
enum Malformed {
    NoFinalNul,
    EndsEarly,
    UnknownType(u8),
    UnterminatedKey,
    ValuePastEnd,
}

impl std::fmt::Display for Malformed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Malformed::NoFinalNul => f.write_str("the document ends without its final NUL"),
            Malformed::EndsEarly => f.write_str("the document ends before its last byte"),
            Malformed::UnknownType(byte) => write!(f, "unknown element type {byte:#04x}"),
            Malformed::UnterminatedKey => f.write_str("a key has no terminating NUL"),
            Malformed::ValuePastEnd => f.write_str("a value runs past the end of its document"),
        }
    }
}

/// A key to find, prepared for comparison with keys where they lie in a document.
struct KeyProbe<'k> {
    key: &'k [u8],
    /// A key of one to seven bytes: its bytes as one little-endian word, zero-padded.
    short: Option<u64>,
}

impl<'k> KeyProbe<'k> {
    #[inline]
    fn new(key: &'k [u8]) -> KeyProbe<'k> {
        let short = (1..8).contains(&key.len()).then(|| {
            let mut word = [0u8; 8];
            word[..key.len()].copy_from_slice(key);
            u64::from_le_bytes(word)
        });
        KeyProbe { key, short }
    }

    /// Whether the key at `bytes[start..end]` is this one. Short keys are compared as one
    /// masked word, not by a call to `memcmp`.
    #[inline]
    fn is_at(&self, bytes: &[u8], start: usize, end: usize) -> bool {
        if end - start != self.key.len() {
            return false;
        }
        if let (Some(short), Some(word)) = (
            self.short,
            bytes.get(start..).and_then(<[u8]>::first_chunk::<8>),
        ) {
            let mask = u64::MAX >> (8 * (8 - self.key.len()));
            return u64::from_le_bytes(*word) & mask == short;
        }
        &bytes[start..end] == self.key
    }
}

impl<'a> Iterator for Elements<'a> {
    type Item = Result<Element<'a>, String>;

    // Inlined into the loops that copy every element of an array (a splice walks a hundred
    // thousand of them).
    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        match self.element_at() {
            Ok(None) => {
                self.done = true;
                None
            }
            Ok(Some((kind, value_start, value_end))) => {
                let key = &self.bytes[self.at + 1..value_start - 1];
                let value = &self.bytes[value_start..value_end];
                self.at = value_end;
                Some(Ok((key, kind, value)))
            }
            Err(what) => Some(Err(self.malformed(what))),
        }
    }
}

/// A BSON document or array written element by element.
pub struct Writer {
    bytes: Vec<u8>,
    next_key: IndexKey,
}

impl Writer {
    /// An empty document or array with room for `capacity` bytes of elements.
    pub fn with_capacity(capacity: usize) -> Writer {
        let mut bytes = Vec::with_capacity(capacity + 5);
        bytes.extend_from_slice(&[0; 4]);
        Writer {
            bytes,
            next_key: IndexKey::default(),
        }
    }

    /// The next field of a document: its key, its type and its value's bytes.
    pub fn field(&mut self, key: &[u8], kind: ElementType, value: &[u8]) {
        self.bytes.push(kind as u8);
        self.bytes.extend_from_slice(key);
        self.bytes.push(0);
        self.bytes.extend_from_slice(value);
    }

    /// The next element of an array, keyed by its index.
    pub fn element(&mut self, kind: ElementType, value: &[u8]) {
        self.bytes.push(kind as u8);
        self.next_key.write_terminated(&mut self.bytes);
        self.bytes.extend_from_slice(value);
        self.next_key.increment();
    }

    /// Appends every element of `array` under the next indexes: each element's type and
    /// value bytes are copied as they are, only the key is rewritten.
    pub fn extend(&mut self, array: &RawArray) -> Result<(), String> {
        let bytes = array.as_bytes();
        self.bytes.reserve(bytes.len());
        for element in elements(bytes) {
            let (_, kind, value) = element?;
            self.element(kind, value);
        }
        Ok(())
    }

    /// Opens the array field `key` of a document: the elements written next (with
    /// [`element`](Self::element) or [`extend`](Self::extend)) go into it, numbered from 0,
    /// until [`close_array`](Self::close_array), so that an array assembled from pieces is
    /// written in place, not copied in afterwards.
    pub fn open_array(&mut self, key: &[u8]) -> OpenArray {
        self.bytes.push(ElementType::Array as u8);
        self.bytes.extend_from_slice(key);
        self.bytes.push(0);
        let at = self.bytes.len();
        self.bytes.extend_from_slice(&[0; 4]);
        OpenArray {
            at,
            outer_key: std::mem::take(&mut self.next_key),
        }
    }

    /// Closes the array `open` (its terminating NUL, its length); what is written next goes
    /// where it went before the array was opened.
    pub fn close_array(&mut self, open: OpenArray) {
        self.bytes.push(0);
        let length = i32::try_from(self.bytes.len() - open.at).unwrap_or(i32::MAX);
        self.bytes[open.at..open.at + 4].copy_from_slice(&length.to_le_bytes());
        self.next_key = open.outer_key;
    }

    /// Writes elements `start..end` of the array `array` (its bytes) as the array field
    /// `key`, or those it has when it holds fewer than `end` and `clip` is set; when it holds
    /// fewer and `clip` is not set, writes nothing and answers `false`.
    ///
    /// A window from the front (the typical `$slice: k`) is copied in one piece, keys and
    /// all (an array's keys are its indexes); a later one is renumbered from 0.
    ///
    /// # Errors
    /// A message naming the problem when `array` is malformed BSON.
    pub fn array_window(
        &mut self,
        key: &[u8],
        array: &[u8],
        start: usize,
        end: usize,
        clip: bool,
    ) -> Result<bool, String> {
        let mut walk = elements(array);
        for _ in 0..end {
            match walk.next() {
                Some(element) => {
                    element?;
                }
                None if clip => break,
                None => return Ok(false),
            }
        }
        let open = self.open_array(key);
        if start == 0 {
            // The elements before `end`, as they are: from after the length to where the
            // walk stopped.
            self.bytes
                .extend_from_slice(array.get(4..walk.at).unwrap_or_default());
        } else {
            for element in elements(array).skip(start).take(end.saturating_sub(start)) {
                let (_, kind, value) = element?;
                self.element(kind, value);
            }
        }
        self.close_array(open);
        Ok(true)
    }

    /// The bytes: the elements with the length in front and the terminating NUL.
    pub fn finish(mut self) -> Vec<u8> {
        self.bytes.push(0);
        let length = i32::try_from(self.bytes.len()).unwrap_or(i32::MAX);
        self.bytes[..4].copy_from_slice(&length.to_le_bytes());
        self.bytes
    }
}

/// An array field a [`Writer`] is writing ([`Writer::open_array`]).
#[must_use = "an open array is closed with Writer::close_array"]
pub struct OpenArray {
    /// Where its length goes.
    at: usize,
    /// The next key of what holds it.
    outer_key: IndexKey,
}

/// The key of the next array element: its index as ASCII decimal digits, counted up in
/// place (a carry rewrites the trailing nines) rather than formatted anew for each element.
#[derive(Debug, Clone)]
struct IndexKey {
    /// The digits, right-aligned to [`IndexKey::END`] (the ones before `start` are `b'0'`),
    /// then NULs: the key's terminator, and room for [`IndexKey::write_terminated`] to copy
    /// a fixed number of bytes.
    buffer: [u8; IndexKey::END + IndexKey::CHUNK],
    start: usize,
}

impl Default for IndexKey {
    /// The key of index 0.
    fn default() -> IndexKey {
        IndexKey::at(0)
    }
}

impl IndexKey {
    /// Where the digits end: `usize` has at most 20.
    const END: usize = 20;
    /// How many bytes a short key and its NUL are copied as.
    const CHUNK: usize = 8;

    /// The key of index `index`.
    fn at(index: usize) -> IndexKey {
        let mut digits = [0; IndexKey::END];
        let written = index_key(index, &mut digits).len();
        let mut buffer = [b'0'; IndexKey::END + IndexKey::CHUNK];
        buffer[IndexKey::END..].fill(0);
        let start = IndexKey::END - written;
        buffer[start..IndexKey::END].copy_from_slice(&digits[start..]);
        IndexKey { buffer, start }
    }

    /// The current index's digits.
    #[cfg(test)]
    fn digits(&self) -> &[u8] {
        &self.buffer[self.start..IndexKey::END]
    }

    /// Appends the current key and its NUL to `out`. A key shorter than
    /// [`IndexKey::CHUNK`] bytes (an index below ten million) goes as one fixed-size copy,
    /// the bytes after its NUL taken back: no length-dependent copy for each element.
    fn write_terminated(&self, out: &mut Vec<u8>) {
        let written = IndexKey::END - self.start + 1;
        match self.buffer[self.start..].first_chunk::<{ IndexKey::CHUNK }>() {
            Some(chunk) if written <= IndexKey::CHUNK => {
                out.extend_from_slice(chunk);
                out.truncate(out.len() - (IndexKey::CHUNK - written));
            }
            _ => out.extend_from_slice(&self.buffer[self.start..=IndexKey::END]),
        }
    }

    /// Moves on to the next index.
    fn increment(&mut self) {
        let mut at = IndexKey::END;
        loop {
            at -= 1;
            if self.buffer[at] < b'9' {
                self.buffer[at] += 1;
                break;
            }
            self.buffer[at] = b'0';
            if at == self.start {
                // All nines: one digit more (`usize` has at most 20, so `start` stays > 0).
                self.start -= 1;
                self.buffer[self.start] = b'1';
                break;
            }
        }
    }
}

/// `document` with the elements of `values` appended to its top-level array `field`,
/// numbered after the array's last index: the bytes before and after the array are copied
/// as they are, and the lengths of the array and of the document are rewritten. `None` when
/// `field` is missing or not an array. The result is not checked against the document size
/// limit: the caller knows which limit applies.
///
/// # Errors
/// A message naming the problem when `document` or `values` is malformed BSON.
pub fn append_to_array(
    document: &RawDocument,
    field: &str,
    values: &RawArray,
) -> Result<Option<Vec<u8>>, String> {
    let bytes = document.as_bytes();
    let mut found = None;
    let mut walk = elements(bytes);
    while let Some(element) = walk.next() {
        let (key, kind, value) = element?;
        if key == field.as_bytes() {
            if kind != ElementType::Array {
                return Ok(None);
            }
            // `value` is a subslice of `bytes`: its offset is the walk's position less its length.
            let end = walk.at;
            found = Some((end - value.len(), end));
            break;
        }
    }
    let Some((array_start, array_end)) = found else {
        return Ok(None);
    };
    // The elements already there are counted, not copied one by one: the new ones are
    // written after them under the next indexes, and two lengths are rewritten.
    let existing = &bytes[array_start..array_end];
    let mut walk = elements(existing);
    let mut count = 0;
    for element in walk.by_ref() {
        element?;
        count += 1;
    }
    if walk.at + 1 != existing.len() {
        return Err(format!(
            "malformed BSON: the array '{field}' ends at byte {} of its {}",
            walk.at + 1,
            existing.len()
        ));
    }
    let mut spliced = Writer {
        bytes: Vec::with_capacity(bytes.len() + 2 * values.as_bytes().len()),
        next_key: IndexKey::at(count),
    };
    spliced.bytes.extend_from_slice(&bytes[..array_end - 1]);
    spliced.extend(values)?;
    let mut spliced = spliced.bytes;
    spliced.push(0);
    let array_len = spliced.len() - array_start;
    spliced.extend_from_slice(&bytes[array_end..]);
    for (at, length) in [(array_start, array_len), (0, spliced.len())] {
        let length = i32::try_from(length)
            .map_err(|_| format!("the document would be {} bytes long", spliced.len()))?;
        spliced[at..at + 4].copy_from_slice(&length.to_le_bytes());
    }
    Ok(Some(spliced))
}

/// The key of array element `index` (its decimal digits), written into `digits`.
fn index_key(index: usize, digits: &mut [u8; 20]) -> &[u8] {
    let mut at = digits.len();
    let mut rest = index;
    loop {
        at -= 1;
        digits[at] = b'0' + (rest % 10) as u8;
        rest /= 10;
        if rest == 0 {
            break;
        }
    }
    &digits[at..]
}

/// How many elements `array` holds, counted by walking it (no value is decoded).
///
/// # Errors
/// A message naming the problem when `array` is malformed BSON.
pub fn array_len(array: &RawArray) -> Result<usize, String> {
    elements(array.as_bytes()).try_fold(0, |count, element| element.map(|_| count + 1))
}

/// The `_id` of `document`, decoded; `null` when it has none or it cannot be decoded.
pub fn document_id(document: &RawDocument) -> Bson {
    document
        .get("_id")
        .ok()
        .flatten()
        .and_then(|value| Bson::try_from(value).ok())
        .unwrap_or(Bson::Null)
}

/// The type and value bytes of `document`'s top-level field `field`, found by [`elements`]
/// (keys compared as bytes, nothing validated again); `None` when it has no such field or
/// is malformed before it.
///
/// The per-document checks of a read (is a policy's flag there, how long is a main array)
/// use it: `bson`'s `RawDocument::get` validates every key and string it passes as UTF-8.
pub fn top_level_field<'d>(
    document: &'d RawDocument,
    field: &str,
) -> Option<(ElementType, &'d [u8])> {
    elements(document.as_bytes())
        .find_key(field.as_bytes())
        .and_then(Result::ok)
}

/// `document`'s top-level field `key`: what `bson`'s `RawDocument::get` answers, found by
/// [`elements`]: lengths are checked, keys compared as bytes, and what the walk steps over is
/// not read (a stored document's keys and strings were checked when it was written); the
/// found value is checked as `bson` would.
///
/// A filter looks its fields up in every document a scan reads; `bson`'s `get` validates
/// every key and string it passes on the way, which made it a fifth of a collection scan.
/// Arrays and the rare types (and anything malformed) are answered by `bson`'s `get` itself,
/// so errors and values are always `bson`'s.
///
/// # Errors
/// `bson`'s error when the document is malformed before or at the field.
pub fn get<'d>(
    document: &'d RawDocument,
    key: &str,
) -> bson::error::Result<Option<RawBsonRef<'d>>> {
    match elements(document.as_bytes()).find_key(key.as_bytes()) {
        None => Ok(None),
        Some(Ok((kind, value))) => match value_ref(kind, value) {
            Some(value) => Ok(Some(value)),
            None => document.get(key),
        },
        Some(Err(_)) => document.get(key),
    }
}

/// The value of type `kind` whose bytes are `value`, for the common types whose bytes need
/// no check beyond their length (and a string's UTF-8); `None` for the others and for bytes
/// that do not pass, which the caller hands to `bson`.
#[inline]
pub(crate) fn value_ref(kind: ElementType, value: &[u8]) -> Option<RawBsonRef<'_>> {
    let eight = || value.first_chunk::<8>().copied();
    Some(match kind {
        ElementType::Double => RawBsonRef::Double(f64::from_le_bytes(eight()?)),
        ElementType::Int32 => RawBsonRef::Int32(i32::from_le_bytes(*value.first_chunk::<4>()?)),
        ElementType::Int64 => RawBsonRef::Int64(i64::from_le_bytes(eight()?)),
        ElementType::DateTime => {
            RawBsonRef::DateTime(bson::DateTime::from_millis(i64::from_le_bytes(eight()?)))
        }
        ElementType::Boolean => match value {
            [0] => RawBsonRef::Boolean(false),
            [1] => RawBsonRef::Boolean(true),
            _ => return None,
        },
        ElementType::Null => RawBsonRef::Null,
        ElementType::ObjectId => {
            RawBsonRef::ObjectId(bson::oid::ObjectId::from_bytes(*value.first_chunk::<12>()?))
        }
        ElementType::String => {
            let (&0, text) = value.get(4..)?.split_last()? else {
                return None;
            };
            RawBsonRef::String(std::str::from_utf8(text).ok()?)
        }
        ElementType::EmbeddedDocument => RawBsonRef::Document(RawDocument::from_bytes(value).ok()?),
        _ => return None,
    })
}

/// The array `field` of `document`, when it is one.
pub fn top_level_array<'d>(document: &'d RawDocument, field: &str) -> Option<&'d RawArray> {
    match document.get(field) {
        Ok(Some(RawBsonRef::Array(array))) => Some(array),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use bson::{Bson, Document, RawArrayBuf, RawBson, RawDocumentBuf, doc};

    /// A document holding a value of every BSON type, nested ones included.
    fn every_type() -> RawDocumentBuf {
        use bson::spec::BinarySubtype;
        use bson::{Binary, DbPointer, JavaScriptCodeWithScope, Regex, Timestamp};
        let pointer: DbPointer = bson::deserialize_from_slice::<Document>(&hex_bytes(
            "1c0000000c700004000000636f6c000102030405060708090a0b0c00",
        ))
        .map(|document| match document.get("p") {
            Some(Bson::DbPointer(pointer)) => pointer.clone(),
            other => panic!("not a DBPointer: {other:?}"),
        })
        .unwrap();
        let document = doc! {
            "double": 1.5, "string": "héllo", "document": { "a": 1, "b": [1, 2] },
            "array": [1, "two", { "three": 3 }, [4]],
            "binary": Binary { subtype: BinarySubtype::Generic, bytes: vec![1, 2, 3] },
            "undefined": Bson::Undefined, "oid": bson::oid::ObjectId::new(), "bool": true,
            "date": bson::DateTime::from_millis(42), "null": Bson::Null,
            "regex": Regex {
                pattern: "^a".to_string().try_into().unwrap(),
                options: "i".to_string().try_into().unwrap(),
            },
            "pointer": pointer,
            "code": Bson::JavaScriptCode("f()".into()), "symbol": Bson::Symbol("s".into()),
            "code_with_scope": JavaScriptCodeWithScope { code: "g()".into(), scope: doc! { "x": 1 } },
            "int32": 7, "timestamp": Timestamp { time: 1, increment: 2 }, "int64": 8_i64,
            "decimal": "1.25".parse::<bson::Decimal128>().unwrap(),
            "min": Bson::MinKey, "max": Bson::MaxKey,
        };
        RawDocumentBuf::try_from(&document).unwrap()
    }

    fn hex_bytes(hex: &str) -> Vec<u8> {
        (0..hex.len())
            .step_by(2)
            .map(|at| u8::from_str_radix(&hex[at..at + 2], 16).unwrap())
            .collect()
    }

    /// The hand walk finds the same keys, types and value bytes as `bson`'s iterator.
    #[test]
    fn element_walk_agrees_with_bson_on_every_type() {
        let document = every_type();
        let walked: Vec<_> = super::elements(document.as_bytes())
            .collect::<Result<Vec<_>, _>>()
            .unwrap();
        let iterated: Vec<_> = document
            .iter_elements()
            .map(|element| element.unwrap())
            .collect();
        assert_eq!(walked.len(), iterated.len());
        assert_eq!(walked.len(), 21);
        for ((key, kind, value), element) in walked.iter().zip(&iterated) {
            assert_eq!(*key, element.key().as_str().as_bytes());
            assert_eq!(*kind, element.element_type());
            assert_eq!(
                value.len(),
                element.size(),
                "value of {}",
                element.key().as_str()
            );
        }
    }

    /// Keys of every length from 0 to 20 (a key is found a word at a time when eight bytes
    /// remain, byte by byte near the end), first, in the middle and last in a document.
    #[test]
    fn element_walk_finds_keys_of_every_length() {
        for length in 0..=20 {
            let key = "k".repeat(length);
            for document in [
                doc! { key.as_str(): 1 },
                doc! { "a": "x", key.as_str(): true, "b": Bson::Null },
                doc! { "long field name": [1, 2], key.as_str(): Bson::Null },
            ] {
                let raw = RawDocumentBuf::try_from(&document).unwrap();
                let keys: Vec<&[u8]> = super::elements(raw.as_bytes())
                    .map(|element| element.unwrap().0)
                    .collect();
                let expected: Vec<&[u8]> = document.keys().map(String::as_bytes).collect();
                assert_eq!(keys, expected, "key of length {length}");
            }
        }
    }

    /// Damaged bytes (every truncation, every single-byte change) give an error or a walk
    /// whose values stay inside the buffer: never a panic, never a read past the end.
    #[test]
    fn element_walk_survives_damaged_bytes() {
        let document = every_type();
        let bytes = document.as_bytes();
        for end in 0..bytes.len() {
            let walked: Result<Vec<_>, _> = super::elements(&bytes[..end]).collect();
            if end < bytes.len() - 1 {
                assert!(
                    walked.is_err() || end < 5,
                    "a truncation at {end} was accepted"
                );
            }
        }
        for at in 0..bytes.len() {
            for value in [0x00, 0x01, 0x7f, 0x80, 0xff] {
                let mut damaged = bytes.to_vec();
                damaged[at] = value;
                for element in super::elements(&damaged) {
                    let Ok((key, _, value)) = element else { break };
                    assert!(key.len() + value.len() < damaged.len());
                }
            }
        }
    }

    /// The fast lookup answers what `bson`'s `get` answers, for every type, a missing key,
    /// and damaged bytes (every single-byte change): never a panic, and wherever `bson`
    /// answers, the same answer.
    #[test]
    fn get_agrees_with_bson() {
        let document = every_type();
        let mut keys: Vec<String> = document
            .iter_elements()
            .map(|element| element.unwrap().key().as_str().to_owned())
            .collect();
        keys.push("missing".to_owned());
        for key in &keys {
            assert_eq!(
                super::get(&document, key).unwrap(),
                document.get(key).unwrap(),
                "{key}"
            );
        }
        let bytes = document.as_bytes();
        for at in 4..bytes.len() {
            for value in [0x00, 0x01, 0x7f, 0x80, 0xff] {
                let mut damaged = bytes.to_vec();
                damaged[at] = value;
                let Ok(damaged) = bson::RawDocument::from_bytes(&damaged) else {
                    continue;
                };
                for key in &keys {
                    let ours = super::get(damaged, key);
                    let theirs = damaged.get(key);
                    match (&ours, &theirs) {
                        // Debug forms, so that a NaN equals itself.
                        (Ok(ours), Ok(theirs)) => {
                            assert_eq!(format!("{ours:?}"), format!("{theirs:?}"), "{key} at {at}");
                        }
                        (Err(error), Ok(_)) => panic!("{key} at {at}: {error}, bson answers"),
                        // `bson` refuses for bytes the walk steps over unread (a key's
                        // UTF-8, a string's terminator); stored documents are checked when
                        // written and by their checksum when read.
                        (Ok(_) | Err(_), Err(_)) => {}
                    }
                }
            }
        }
    }

    /// The inlined type table is `bson`'s, byte for byte.
    #[test]
    fn element_types_are_bsons() {
        for byte in 0..=u8::MAX {
            assert_eq!(
                super::element_type(byte),
                bson::spec::ElementType::from(byte),
                "{byte:#04x}"
            );
        }
    }

    /// A key is found by its whole bytes whatever its length, never by a prefix or an
    /// extension of it, also where fewer than eight bytes follow it (the last key of a
    /// document whose value is empty).
    #[test]
    fn keys_are_found_whole_at_every_length() {
        let names: Vec<String> = (0..=10).map(|len| "k".repeat(len)).collect();
        for last_is_null in [false, true] {
            let mut document = Document::new();
            for (value, name) in names.iter().enumerate().rev() {
                document.insert(name, value as i32);
            }
            document.insert("kkkkkkkx", "not a k");
            if last_is_null {
                document.insert("z", Bson::Null);
            }
            let raw = RawDocumentBuf::try_from(&document).unwrap();
            for (value, name) in names.iter().enumerate() {
                assert_eq!(
                    super::get(&raw, name).unwrap(),
                    Some(bson::raw::RawBsonRef::Int32(value as i32)),
                    "{name:?}"
                );
            }
            for missing in ["kkkkkkkkkkk", "kkkkkkkkx", "kkkkkkx", "x", "K"] {
                assert_eq!(super::get(&raw, missing).unwrap(), None, "{missing:?}");
            }
            assert_eq!(
                super::top_level_field(&raw, "z").map(|(kind, _)| kind),
                last_is_null.then_some(bson::spec::ElementType::Null)
            );
        }
    }

    /// Appending raw gives exactly the encoding of the decoded document with the values
    /// pushed: every type, the field anywhere in the document, an empty array, nothing to add.
    #[test]
    fn append_to_array_is_the_encoding_of_the_decoded_push() {
        let every = every_type();
        let every: Document = bson::deserialize_from_slice(every.as_bytes()).unwrap();
        let values: Vec<Bson> = every.values().cloned().collect();
        for (array, position) in [
            (Vec::new(), 0),
            (vec![Bson::Int32(1)], 1),
            (values.clone(), 2),
        ] {
            for pushed in [Vec::new(), vec![Bson::String("x".into())], values.clone()] {
                let mut document = doc! { "_id": 1, "a": "before" };
                if position == 0 {
                    document = doc! { "list": array.clone(), "_id": 1 };
                } else {
                    document.insert("list", array.clone());
                    if position == 2 {
                        document.insert("z", {
                            let mut inner = every.clone();
                            inner.insert("list", 3);
                            inner
                        });
                    }
                }
                let raw = RawDocumentBuf::try_from(&document).unwrap();
                let encoded: RawArrayBuf = pushed
                    .iter()
                    .map(|value| RawBson::try_from(value.clone()).unwrap())
                    .collect();
                let spliced = super::append_to_array(&raw, "list", &encoded)
                    .unwrap()
                    .unwrap();
                let mut expected = document.clone();
                let Some(Bson::Array(list)) = expected.get_mut("list") else {
                    unreachable!()
                };
                list.extend(pushed.iter().cloned());
                assert_eq!(spliced, bson::serialize_to_vec(&expected).unwrap());
                let list = super::top_level_array(
                    RawDocumentBuf::from_bytes(spliced).unwrap().as_ref(),
                    "list",
                )
                .map(|array| super::array_len(array).unwrap());
                assert_eq!(list, Some(array.len() + pushed.len()));
            }
        }
    }

    /// A missing field or one that is not an array gives `None`; damaged bytes an error,
    /// never a panic.
    #[test]
    fn append_to_array_refuses_what_is_not_an_array() {
        let values: RawArrayBuf = [RawBson::Int32(1)].into_iter().collect();
        let raw = RawDocumentBuf::try_from(&doc! { "_id": 1, "list": "text" }).unwrap();
        assert_eq!(super::append_to_array(&raw, "list", &values), Ok(None));
        assert_eq!(super::append_to_array(&raw, "other", &values), Ok(None));
        let raw = RawDocumentBuf::try_from(&doc! { "_id": 1, "list": [1, 2, 3], "z": 1 }).unwrap();
        let bytes = raw.as_bytes();
        for at in 4..bytes.len() {
            for value in [0x00, 0x01, 0x7f, 0xff] {
                let mut damaged = bytes.to_vec();
                damaged[at] = value;
                if let Ok(document) = bson::RawDocument::from_bytes(&damaged) {
                    let _ = super::append_to_array(document, "list", &values);
                }
            }
        }
    }

    /// The counted-up key is the decimal index at every step, across the carries
    /// (9 to 10, 99 to 100, 999 to 1000, ...), from 0 or from any starting index.
    #[test]
    fn index_keys_count_up_in_decimal_across_every_carry() {
        let mut key = super::IndexKey::default();
        for index in 0..=100_001_usize {
            assert_eq!(key.digits(), index.to_string().as_bytes(), "index {index}");
            key.increment();
        }
        for start in [
            9_usize,
            99,
            999,
            9_999,
            10_usize.pow(18) - 1,
            10_usize.pow(19) - 1,
        ] {
            let mut key = super::IndexKey::at(start);
            for index in start..start + 3 {
                assert_eq!(key.digits(), index.to_string().as_bytes(), "index {index}");
                key.increment();
            }
        }
        // Written with its NUL after what is there, short (one fixed-size copy) or long.
        for index in [0, 7, 999_999, 1_000_000, 9_999_999, 10_000_000, usize::MAX] {
            let mut out = b"xy".to_vec();
            super::IndexKey::at(index).write_terminated(&mut out);
            assert_eq!(out, format!("xy{index}\0").into_bytes(), "index {index}");
        }
    }

    /// Extending renumbers every element after the ones already written, across the
    /// carries, and copies each value's bytes as they are.
    #[test]
    fn extend_renumbers_the_elements_it_appends() {
        let every = every_type();
        let values: Vec<Bson> = bson::deserialize_from_slice::<Document>(every.as_bytes())
            .unwrap()
            .into_iter()
            .map(|(_, value)| value)
            .collect();
        let parts: Vec<Vec<Bson>> = (0..60).map(|_| values.clone()).collect();
        let mut writer = super::Writer::with_capacity(0);
        for part in &parts {
            let part: RawArrayBuf = part
                .iter()
                .map(|value| RawBson::try_from(value.clone()).unwrap())
                .collect();
            writer.extend(&part).unwrap();
        }
        let all: Vec<Bson> = parts.concat();
        assert!(all.len() > 1_000);
        let expected = bson::serialize_to_vec(&doc! { "a": all }).unwrap();
        let expected = bson::RawDocument::from_bytes(&expected)
            .unwrap()
            .get_array("a")
            .unwrap()
            .as_bytes()
            .to_vec();
        assert_eq!(writer.finish(), expected);
    }

    /// An array opened inside a document is written in place: the document is what
    /// encoding it gives, numbered from 0, and the fields after it go on as before.
    #[test]
    fn an_open_array_is_written_in_place() {
        let first: RawArrayBuf = [RawBson::Int32(1), RawBson::String("two".into())]
            .into_iter()
            .collect();
        let second: RawArrayBuf = [RawBson::Int64(3)].into_iter().collect();
        let mut writer = super::Writer::with_capacity(0);
        writer.field(b"a", bson::spec::ElementType::Int32, &7_i32.to_le_bytes());
        let open = writer.open_array(b"list");
        writer.extend(&first).unwrap();
        writer.element(bson::spec::ElementType::Int32, &4_i32.to_le_bytes());
        writer.extend(&second).unwrap();
        writer.close_array(open);
        writer.field(b"z", bson::spec::ElementType::Boolean, &[1]);
        let expected = doc! { "a": 7, "list": [1, "two", 4, 3_i64], "z": true };
        assert_eq!(writer.finish(), bson::serialize_to_vec(&expected).unwrap());
    }

    /// A window is byte for byte what encoding its elements gives, from the front or later;
    /// an array too short has none.
    #[test]
    fn an_array_window_is_its_elements_encoded() {
        let array: RawArrayBuf = [
            RawBson::Int32(1),
            RawBson::String("two".into()),
            RawBson::Int64(3),
        ]
        .into_iter()
        .collect();
        // `{a: <window>}` as written, or `None` when the writer refused the window.
        let window = |start, end, clip| {
            let mut writer = super::Writer::with_capacity(0);
            let written = writer
                .array_window(b"a", array.as_bytes(), start, end, clip)
                .unwrap();
            written.then(|| writer.finish())
        };
        let expected = |values: Bson| Some(doc! { "a": values }.to_vec().unwrap());
        assert_eq!(window(0, 2, false), expected(bson::bson!([1, "two"])));
        assert_eq!(window(0, 0, false), expected(bson::bson!([])));
        assert_eq!(
            window(0, 3, false),
            expected(bson::bson!([1, "two", 3_i64]))
        );
        assert_eq!(window(0, 4, false), None);
        assert_eq!(window(0, 4, true), expected(bson::bson!([1, "two", 3_i64])));
        assert_eq!(window(1, 3, false), expected(bson::bson!(["two", 3_i64])));
        assert_eq!(window(1, 4, false), None);
        assert_eq!(window(1, 4, true), expected(bson::bson!(["two", 3_i64])));
        assert_eq!(window(5, 7, true), expected(bson::bson!([])));
    }
}
