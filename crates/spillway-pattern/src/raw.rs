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

use bson::raw::{RawBsonRef, RawDocument, RawDocumentBuf};
use bson::spec::ElementType;
use bson::{Bson, doc};
use spillway_doc::raw::{
    Writer, array_len, document_id, elements, top_level_array, top_level_field,
};

use crate::backend::{Query, ReadBackend, Write, WriteBackend};
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

/// `stored` with the fields in `drop` left out and `field` (where it is) replaced by the
/// array `array` (its bytes), field order kept.
fn rebuild(
    stored: &RawDocument,
    drop: &[&str],
    replace: Option<(&str, &[u8])>,
    collection: &str,
) -> Result<RawDocumentBuf, PatternError> {
    let corrupt = |error: String| damaged(collection, &document_id(stored), error);
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
            top_level_field(stored, self.flag_field),
            Some((ElementType::Boolean, [1]))
        )
    }

    /// The append fast path on a raw stored main document whose main array is full and
    /// which has buckets: every value goes to the overflow ([`Outlier::overflow_writes`]) and
    /// the main document stays as it is. `false` (nothing done) for any other document.
    fn append_raw<R: ReadBackend>(
        &self,
        backend: &R,
        stored: &RawDocument,
        values: &[Bson],
        batch: &mut Vec<Write>,
    ) -> Result<bool, R::Error> {
        if !self.is_flagged_raw(stored) {
            return Ok(false);
        }
        let Some(main) = top_level_array(stored, &self.pattern.field) else {
            return Ok(false);
        };
        let link = document_id(stored);
        let len =
            array_len(main).map_err(|message| damaged(&self.pattern.collection, &link, message))?;
        if len < self.threshold {
            return Ok(false);
        }
        self.overflow_writes(backend, &link, true, values.to_vec(), batch)?;
        Ok(true)
    }

    /// The logical document of the flagged main document `stored`, without the fields in
    /// `drop`: its fields in order, the managed array spliced in place from the main array
    /// and then every bucket's elements in bucket order, renumbered. Each element's bytes
    /// are copied once, straight into the output, from the bucket where it lies in the
    /// backend ([`ReadBackend::for_each_raw`]).
    fn expanded<R: ReadBackend>(
        &self,
        backend: &R,
        stored: &RawDocument,
        drop: &[&str],
    ) -> Result<RawDocumentBuf, R::Error> {
        let pattern = self.pattern;
        let link = document_id(stored);
        let corrupt = |message: String| damaged(&pattern.side_collection, &link, message);
        let field = pattern.field.as_bytes();
        let buckets = Query {
            filter: doc! { pattern.link_field.as_str(): link.clone() },
            sort: Some(doc! { BUCKET_FIELD: 1 }),
            ..Query::default()
        };
        let mut out = Writer::with_capacity(self.expanded_size_hint(backend, &link, stored)?);
        let mut spliced = false;
        for element in elements(stored.as_bytes()) {
            let (key, kind, value) = element.map_err(&corrupt)?;
            if drop.iter().any(|dropped| dropped.as_bytes() == key) {
                continue;
            }
            if key != field {
                out.field(key, kind, value);
                continue;
            }
            let Ok(Some(RawBsonRef::Array(main))) = stored.get(&pattern.field) else {
                break;
            };
            let array = out.open_array(key);
            out.extend(main).map_err(&corrupt)?;
            backend.for_each_raw(&pattern.side_collection, &buckets, &mut |bucket| {
                let Ok(Some(RawBsonRef::Array(items))) = bucket.get(self.overflow_field) else {
                    return Err(corrupt(format!(
                        "an overflow document has no array '{}'",
                        self.overflow_field
                    ))
                    .into());
                };
                out.extend(items).map_err(|message| corrupt(message).into())
            })?;
            out.close_array(array);
            spliced = true;
        }
        if !spliced {
            return Err(corrupt(format!(
                "the main document has no array '{}'",
                pattern.field
            ))
            .into());
        }
        RawDocumentBuf::from_bytes(out.finish())
            .map_err(|error| damaged(&pattern.collection, &link, error.to_string()).into())
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
        let link = document_id(stored);
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

/// What [`Engine::raw_state`] found in a raw stored main document.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct RawState {
    /// It may differ from its logical document: expand it to read it logically.
    pub may_differ: bool,
    /// It carries a policy's flag, which a logical read removes.
    pub has_flags: bool,
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
        if !self.raw_state(document).has_flags {
            return Ok(None);
        }
        let flags: Vec<&str> = self
            .policies()
            .filter_map(|policy| policy.pattern.reserved_main_field())
            .filter(|flag| top_level_field(document, flag).is_some())
            .collect();
        if flags.is_empty() {
            return Ok(None);
        }
        rebuild(document, &flags, None, self.collection()).map(Some)
    }

    /// Appends `values` to the logical arrays of the raw stored main document `stored`
    /// without decoding it, when every array is an outlier's whose main part is full: the
    /// values go to the buckets and the main document is claimed ([`Write::Claim`]), not
    /// rewritten. `false` (nothing done) when that does not hold, for the decoded path.
    ///
    /// # Errors
    /// The backend's, or [`PatternError::Corrupt`] when the document is malformed.
    pub(crate) fn append_raw<W: WriteBackend>(
        &self,
        backend: &mut W,
        stored: &RawDocument,
        values: &[(String, Vec<Bson>)],
    ) -> Result<bool, W::Error> {
        let mut batch = Vec::new();
        for (field, elements) in values {
            let outlier = self
                .policies()
                .find(|policy| policy.pattern.field == *field)
                .and_then(|policy| Outlier::of(&policy.pattern));
            let Some(outlier) = outlier else {
                return Ok(false);
            };
            if elements.is_empty()
                || !outlier.append_raw(&*backend, stored, elements, &mut batch)?
            {
                return Ok(false);
            }
        }
        batch.insert(
            0,
            Write::Claim {
                collection: self.collection().to_string(),
                id: document_id(stored),
            },
        );
        backend.apply(batch)?;
        Ok(true)
    }

    /// Whether a raw stored main document may differ from its logical document (the raw
    /// form of [`Engine::may_differ`]).
    pub fn may_differ_raw(&self, stored: &RawDocument) -> bool {
        self.raw_state(stored).may_differ
    }

    /// How many elements the stored array `field` of the raw main document `stored` holds,
    /// when the layout says so without counting them: a flagged outlier's main array holds
    /// exactly `threshold` (the invariant `verify` checks). `None` otherwise (an unflagged
    /// document not yet migrated may hold more).
    pub fn known_stored_len(&self, stored: &RawDocument, field: &str) -> Option<usize> {
        let policy = self.policy_on(field)?;
        let Shape::Outlier {
            threshold,
            flag_field,
            ..
        } = &policy.pattern.shape
        else {
            return None;
        };
        let flagged = top_level_field(stored, flag_field) == Some((ElementType::Boolean, &[1][..]));
        flagged.then_some(*threshold)
    }

    /// What a read must do with the raw stored main document `stored`, found in one walk of
    /// its top-level fields: whether it may differ from its logical document (an outlier's
    /// flag is set, a subset's array is full) and whether it carries any policy's flag.
    ///
    /// Every document a logical read returns goes through this, most of them documents that
    /// are their own logical document: one walk comparing keys as bytes keeps that cheap.
    pub fn raw_state(&self, stored: &RawDocument) -> RawState {
        let mut state = RawState::default();
        for (key, kind, value) in elements(stored.as_bytes()).map_while(Result::ok) {
            for policy in self.policies() {
                let pattern = &policy.pattern;
                match &pattern.shape {
                    Shape::Outlier { flag_field, .. } if key == flag_field.as_bytes() => {
                        state.has_flags = true;
                        state.may_differ |= kind == ElementType::Boolean && value == [1];
                    }
                    Shape::Subset { keep, .. }
                        if kind == ElementType::Array && key == pattern.field.as_bytes() =>
                    {
                        state.may_differ |=
                            elements(value).take(*keep).map_while(Result::ok).count() >= *keep;
                    }
                    _ => {}
                }
            }
        }
        state
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
                        Some(outlier.expanded(backend, document, drop)?)
                    } else if !keep_flags && top_level_field(document, flag_field).is_some() {
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
