//! Logical documents assembled from raw BSON: the stored main document's bytes are copied
//! field by field and a managed array is spliced together from the main array and the side
//! documents' raw arrays, element bytes copied as they are. Nothing is decoded into `Bson`
//! values and nothing re-encoded, so an expanded read costs one pass over the bytes and the
//! caller decodes the result once (or matches a filter on it raw).
//!
//! [`Engine::expand_raw`] and [`Engine::may_differ_raw`] are the entry points; the decoded
//! [`Engine::expand`] stays for the write paths, which modify the logical document.

use bson::raw::{RawArrayBuf, RawBsonRef, RawDocument, RawDocumentBuf};
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

/// `stored` with the fields in `drop` left out and `field` (where it is) replaced by
/// `array`, field order kept.
fn rebuild(
    stored: &RawDocument,
    drop: &[&str],
    replace: Option<(&str, &RawArrayBuf)>,
    collection: &str,
) -> Result<RawDocumentBuf, PatternError> {
    let mut out = RawDocumentBuf::new();
    for element in stored {
        let (key, value) = element.map_err(|error| damaged(collection, &raw_id(stored), error))?;
        let name = key.as_str();
        if drop.contains(&name) {
            continue;
        }
        match replace {
            Some((field, array)) if field == name => out.append(key, array.clone()),
            _ => out.append(key, value),
        }
    }
    Ok(out)
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
    ) -> Result<RawArrayBuf, R::Error> {
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
        let mut array = RawArrayBuf::new();
        match stored.get(&pattern.field) {
            Ok(Some(RawBsonRef::Array(items))) => {
                for item in items {
                    array.push(item.map_err(|error| corrupt(error.to_string()))?);
                }
            }
            _ => {
                return Err(corrupt(format!(
                    "the main document has no array '{}'",
                    pattern.field
                ))
                .into());
            }
        }
        for bucket in &buckets {
            let Ok(Some(RawBsonRef::Array(items))) = bucket.get(self.overflow_field) else {
                return Err(corrupt(format!(
                    "an overflow document has no array '{}'",
                    self.overflow_field
                ))
                .into());
            };
            for item in items {
                array.push(item.map_err(|error| corrupt(error.to_string()))?);
            }
        }
        Ok(array)
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
    ) -> Result<Option<RawArrayBuf>, R::Error> {
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
        let mut array = RawArrayBuf::new();
        for document in &archived {
            array.push(rebuild(document, &hidden, None, &pattern.side_collection)?);
        }
        Ok(Some(array))
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
