//! Logical documents assembled from raw BSON: the stored main document's bytes are copied
//! field by field and a managed array is spliced together from the main array and the side
//! documents' raw arrays, each element's value bytes copied as they are under its new index.
//! Element boundaries come from a walk of BSON's grammar that checks every length against
//! the buffer; values are neither parsed nor validated again (they were when stored), decoded
//! into `Bson` or re-encoded, so an expanded read costs one copy of the bytes and the caller
//! decodes the result once (or matches a filter on it raw).
//!
//! [`Engine::expand_raw`] and [`Engine::may_differ_raw`] are the entry points; the decoded
//! [`Engine::expand`] stays for the write paths, which modify the logical document.

use bson::raw::{RawArray, RawBsonRef, RawDocument, RawDocumentBuf};
use bson::spec::ElementType;
use bson::{Bson, doc};

use crate::backend::{Query, ReadBackend};
use crate::engine::Engine;
use crate::error::PatternError;
use crate::outlier::Outlier;
use crate::policy::{BUCKET_FIELD, SEQUENCE_FIELD, Shape};
use crate::subset::Subset;

fn damaged(collection: &str, link: &Bson, message: impl std::fmt::Display) -> PatternError {
    PatternError::Corrupt {
        collection: collection.to_string(),
        link: Box::new(link.clone()),
        message: message.to_string(),
    }
}

/// The `_id` of a raw document, decoded (it names the side documents).
fn raw_id(stored: &RawDocument) -> Bson {
    stored
        .get("_id")
        .ok()
        .flatten()
        .and_then(|value| Bson::try_from(value).ok())
        .unwrap_or(Bson::Null)
}

/// The elements of a raw document or array in order: key bytes, type and value bytes.
///
/// Walks the bytes by BSON's grammar and checks every length against the buffer; it does
/// not validate keys as UTF-8 or parse values again (both were checked when the document was
/// stored, and the caller only copies them), which makes it about twice as fast as `bson`'s
/// iterator on the hundred-thousand-element arrays it splices.
fn elements(bytes: &[u8]) -> Elements<'_> {
    Elements {
        bytes,
        at: 4,
        done: bytes.len() < 5,
    }
}

/// The iterator of [`elements`].
struct Elements<'a> {
    bytes: &'a [u8],
    at: usize,
    done: bool,
}

/// One element: its key, its type and its value's bytes.
type Element<'a> = (&'a [u8], ElementType, &'a [u8]);

impl<'a> Elements<'a> {
    fn malformed(&mut self, what: &str) -> Result<Element<'a>, String> {
        self.done = true;
        Err(format!("malformed BSON at byte {}: {what}", self.at))
    }

    /// The length of the NUL-terminated string at `at`, its NUL included.
    fn cstring_len(&self, at: usize) -> Option<usize> {
        let rest = self.bytes.get(at..)?;
        rest.iter().position(|&byte| byte == 0).map(|nul| nul + 1)
    }

    /// The little-endian `i32` at `at` as a length of at least `minimum`.
    fn length_at(&self, at: usize, minimum: usize) -> Option<usize> {
        let raw = self.bytes.get(at..at + 4)?;
        let length = i32::from_le_bytes([raw[0], raw[1], raw[2], raw[3]]);
        usize::try_from(length)
            .ok()
            .filter(|&length| length >= minimum)
    }

    /// How many bytes the value of type `kind` at `at` takes.
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
}

impl<'a> Iterator for Elements<'a> {
    type Item = Result<Element<'a>, String>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        let Some(&kind_byte) = self.bytes.get(self.at) else {
            return Some(self.malformed("the document ends without its final NUL"));
        };
        if kind_byte == 0 {
            self.done = true;
            return None;
        }
        let Some(kind) = ElementType::from(kind_byte) else {
            return Some(self.malformed(&format!("unknown element type {kind_byte:#04x}")));
        };
        let key_start = self.at + 1;
        let Some(key_len) = self.cstring_len(key_start) else {
            return Some(self.malformed("a key has no terminating NUL"));
        };
        let value_start = key_start + key_len;
        let value_end = self
            .value_len(kind, value_start)
            .and_then(|len| value_start.checked_add(len))
            .filter(|&end| end < self.bytes.len());
        let Some(value_end) = value_end else {
            return Some(self.malformed("a value runs past the end of its document"));
        };
        let key = &self.bytes[key_start..value_start - 1];
        let value = &self.bytes[value_start..value_end];
        self.at = value_end;
        Some(Ok((key, kind, value)))
    }
}

/// A BSON document or array written element by element.
struct Writer {
    bytes: Vec<u8>,
    count: usize,
}

impl Writer {
    fn with_capacity(capacity: usize) -> Writer {
        let mut bytes = Vec::with_capacity(capacity + 5);
        bytes.extend_from_slice(&[0; 4]);
        Writer { bytes, count: 0 }
    }

    fn field(&mut self, key: &[u8], kind: ElementType, value: &[u8]) {
        self.bytes.push(kind as u8);
        self.bytes.extend_from_slice(key);
        self.bytes.push(0);
        self.bytes.extend_from_slice(value);
    }

    /// The next element of an array, keyed by its index.
    fn element(&mut self, kind: ElementType, value: &[u8]) {
        let mut digits = [0u8; 20];
        let mut at = digits.len();
        let mut index = self.count;
        loop {
            at -= 1;
            digits[at] = b'0' + (index % 10) as u8;
            index /= 10;
            if index == 0 {
                break;
            }
        }
        self.bytes.push(kind as u8);
        self.bytes.extend_from_slice(&digits[at..]);
        self.bytes.push(0);
        self.bytes.extend_from_slice(value);
        self.count += 1;
    }

    /// Appends every element of `array` under the next indexes.
    fn extend(&mut self, array: &RawArray) -> Result<(), String> {
        for element in elements(array.as_bytes()) {
            let (_, kind, value) = element?;
            self.element(kind, value);
        }
        Ok(())
    }

    fn finish(mut self) -> Vec<u8> {
        self.bytes.push(0);
        let length = i32::try_from(self.bytes.len()).unwrap_or(i32::MAX);
        self.bytes[..4].copy_from_slice(&length.to_le_bytes());
        self.bytes
    }
}

/// `stored` with the fields in `drop` left out and `field` (where it is) replaced by the
/// array `array` (its bytes), field order kept.
fn rebuild(
    stored: &RawDocument,
    drop: &[&str],
    replace: Option<(&str, &[u8])>,
    collection: &str,
) -> Result<RawDocumentBuf, PatternError> {
    let corrupt = |error: String| damaged(collection, &raw_id(stored), error);
    let extra = replace.map_or(0, |(_, array)| array.len());
    let mut out = Writer::with_capacity(stored.as_bytes().len() + extra);
    for element in elements(stored.as_bytes()) {
        let (key, kind, value) = element.map_err(corrupt)?;
        if drop.iter().any(|dropped| dropped.as_bytes() == key) {
            continue;
        }
        match replace {
            Some((field, array)) if field.as_bytes() == key => {
                out.field(key, ElementType::Array, array);
            }
            _ => out.field(key, kind, value),
        }
    }
    RawDocumentBuf::from_bytes(out.finish()).map_err(|error| corrupt(error.to_string()))
}

impl Outlier<'_> {
    fn is_flagged_raw(&self, stored: &RawDocument) -> bool {
        matches!(
            stored.get(self.flag_field),
            Ok(Some(RawBsonRef::Boolean(true)))
        )
    }

    /// The logical array of a flagged main document: its main array, then every bucket's
    /// elements in bucket order.
    fn spliced<R: ReadBackend>(
        &self,
        backend: &R,
        stored: &RawDocument,
    ) -> Result<Vec<u8>, R::Error> {
        let pattern = self.pattern;
        let link = raw_id(stored);
        let buckets = backend.find_raw(
            &pattern.side_collection,
            &Query {
                filter: doc! { pattern.link_field.as_str(): link.clone() },
                sort: Some(doc! { BUCKET_FIELD: 1 }),
                ..Query::default()
            },
        )?;
        let corrupt = |message: String| damaged(&pattern.side_collection, &link, message);
        let Ok(Some(RawBsonRef::Array(main))) = stored.get(&pattern.field) else {
            return Err(corrupt(format!(
                "the main document has no array '{}'",
                pattern.field
            ))
            .into());
        };
        let capacity = main.as_bytes().len()
            + buckets
                .iter()
                .map(|bucket| bucket.as_bytes().len())
                .sum::<usize>();
        let mut array = Writer::with_capacity(capacity);
        array.extend(main).map_err(corrupt)?;
        for bucket in &buckets {
            let Ok(Some(RawBsonRef::Array(items))) = bucket.get(self.overflow_field) else {
                return Err(corrupt(format!(
                    "an overflow document has no array '{}'",
                    self.overflow_field
                ))
                .into());
            };
            array.extend(items).map_err(corrupt)?;
        }
        Ok(array.finish())
    }
}

impl Subset<'_> {
    /// The logical array of a main document from its raw archive documents (the policy's
    /// order), each element without the archive's own fields; `None` when the archive is
    /// empty (a document not split yet reads as stored).
    fn spliced<R: ReadBackend>(
        &self,
        backend: &R,
        stored: &RawDocument,
    ) -> Result<Option<Vec<u8>>, R::Error> {
        let pattern = self.pattern;
        let link = raw_id(stored);
        let archived = backend.find_raw(
            &pattern.side_collection,
            &self.archive_query(&link, 0, None),
        )?;
        if archived.is_empty() {
            return Ok(None);
        }
        let mut hidden = vec![pattern.link_field.as_str(), SEQUENCE_FIELD];
        if !self.keeps_element_id() {
            hidden.push("_id");
        }
        let capacity = archived
            .iter()
            .map(|document| document.as_bytes().len())
            .sum();
        let mut array = Writer::with_capacity(capacity);
        for document in &archived {
            let element = rebuild(document, &hidden, None, &pattern.side_collection)?;
            array.element(ElementType::EmbeddedDocument, element.as_bytes());
        }
        Ok(Some(array.finish()))
    }
}

impl Engine<'_> {
    /// `document` without the policies' flags (a logical view made for a filter, returned
    /// as the logical document); `None` when it has none.
    ///
    /// # Errors
    /// [`PatternError::Corrupt`] when the document is malformed.
    pub fn remove_flags_raw(
        &self,
        document: &RawDocument,
    ) -> Result<Option<RawDocumentBuf>, PatternError> {
        let flags: Vec<&str> = self
            .policies()
            .flat_map(|policy| policy.pattern.reserved_main_fields())
            .filter(|flag| matches!(document.get(flag), Ok(Some(_))))
            .collect();
        if flags.is_empty() {
            return Ok(None);
        }
        rebuild(document, &flags, None, self.collection()).map(Some)
    }

    /// Whether a raw stored main document may differ from its logical document (the raw
    /// form of [`Engine::may_differ`]).
    pub fn may_differ_raw(&self, stored: &RawDocument) -> bool {
        self.policies().any(|policy| match &policy.pattern.shape {
            Shape::Outlier { .. } => {
                Outlier::of(&policy.pattern).is_some_and(|outlier| outlier.is_flagged_raw(stored))
            }
            Shape::Subset { keep, .. } => matches!(
                stored.get(&policy.pattern.field),
                Ok(Some(RawBsonRef::Array(items))) if items.into_iter().count() >= *keep
            ),
        })
    }

    /// The logical document of a raw stored main document, as raw BSON: every element of
    /// every managed array in order; the policies' flags kept only when `keep_flags` (the
    /// view filters are evaluated on). `None` when it is the stored document as it is.
    ///
    /// # Errors
    /// The backend's, or [`PatternError::Corrupt`] when side documents are malformed.
    pub fn expand_raw<R: ReadBackend>(
        &self,
        backend: &R,
        stored: &RawDocument,
        keep_flags: bool,
    ) -> Result<Option<RawDocumentBuf>, R::Error> {
        let mut current: Option<RawDocumentBuf> = None;
        for policy in self.policies() {
            let pattern = &policy.pattern;
            let document: &RawDocument = current.as_deref().unwrap_or(stored);
            let next = match &pattern.shape {
                Shape::Outlier { flag_field, .. } => {
                    let outlier = Outlier::of(pattern).expect("an outlier");
                    let drop: &[&str] = if keep_flags { &[] } else { &[flag_field] };
                    if outlier.is_flagged_raw(document) {
                        let array = outlier.spliced(backend, document)?;
                        Some(rebuild(
                            document,
                            drop,
                            Some((&pattern.field, &array)),
                            &pattern.collection,
                        )?)
                    } else if !keep_flags
                        && matches!(document.get(flag_field.as_str()), Ok(Some(_)))
                    {
                        Some(rebuild(document, drop, None, &pattern.collection)?)
                    } else {
                        None
                    }
                }
                Shape::Subset { .. } => {
                    let subset =
                        Subset::of(pattern).expect("a validated subset policy has a valid order");
                    if matches!(document.get(&pattern.field), Ok(Some(RawBsonRef::Array(_)))) {
                        match subset.spliced(backend, document)? {
                            Some(array) => Some(rebuild(
                                document,
                                &[],
                                Some((&pattern.field, &array)),
                                &pattern.collection,
                            )?),
                            None => None,
                        }
                    } else {
                        None
                    }
                }
            };
            if let Some(next) = next {
                current = Some(next);
            }
        }
        Ok(current)
    }
}

#[cfg(test)]
mod tests {
    use bson::{Bson, Document, RawDocumentBuf, doc};

    use crate::backend::ReadBackend;
    use crate::engine::Engine;
    use crate::layer::Layer;
    use crate::memory::MemoryBackend;
    use crate::policy::Pattern;

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

    /// The spliced bytes are exactly the canonical encoding of the decoded expansion: keys
    /// renumbered `0..n`, lengths right, field order kept, flags dropped or kept as asked.
    #[test]
    fn spliced_bytes_are_the_canonical_encoding_of_the_expansion() {
        let mut layer = Layer::open(MemoryBackend::new()).unwrap();
        layer.create_collection("books").unwrap();
        layer
            .set_pattern(
                Pattern::outlier("books", "tags")
                    .threshold(3)
                    .bucket_capacity(4),
            )
            .unwrap();
        layer
            .set_pattern(
                Pattern::subset("books", "reviews")
                    .keep(2)
                    .sort_by(doc! { "k": -1 }),
            )
            .unwrap();
        let tags: Vec<Bson> = (0..23)
            .map(|n| match n % 3 {
                0 => Bson::Int32(n),
                1 => Bson::String(format!("t{n}")),
                _ => Bson::Document(doc! { "n": n, "nested": [n, n] }),
            })
            .collect();
        let reviews: Vec<Bson> = (0..7)
            .rev()
            .map(|k| Bson::Document(doc! { "k": k }))
            .collect();
        let book = doc! { "_id": 1, "title": "t", "tags": tags, "reviews": reviews, "z": 1 };
        layer.insert_one("books", book.clone()).unwrap();
        let backend = layer.backend();
        let policies = backend.policies().unwrap();
        let engine = Engine::new("books", &policies);
        let stored = backend.get("books", &Bson::Int32(1)).unwrap().unwrap();
        let raw = RawDocumentBuf::try_from(&stored).unwrap();
        for keep_flags in [false, true] {
            let spliced = engine
                .expand_raw(backend, &raw, keep_flags)
                .unwrap()
                .unwrap();
            let mut expected: Document = engine.query_view(backend, &stored).unwrap();
            if !keep_flags {
                expected = engine.expand(backend, &stored).unwrap();
            }
            assert_eq!(
                spliced.as_bytes(),
                bson::serialize_to_vec(&expected).unwrap(),
                "keep_flags {keep_flags}"
            );
        }
        assert_eq!(layer.find("books", &doc! {}, true).unwrap(), vec![book]);
    }
}
