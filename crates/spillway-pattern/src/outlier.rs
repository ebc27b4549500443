//! The outlier layout: the first `threshold` elements in the main document, the rest in
//! dense, numbered overflow buckets.
//!
//! ```text
//! sales:       { _id: 2, ..., customers_purchased: [user00 .. user49], has_extras: true }
//! extra_sales: { _id: <oid>, book_id: 2, bucket: 0, customers_purchased_extra: [user50 .. user149] }
//!              { _id: <oid>, book_id: 2, bucket: 1, customers_purchased_extra: [user150 ..] }
//! ```
//!
//! Invariants (checked by `verify`): buckets are numbered 0..k without gaps, every bucket but
//! the last holds exactly `capacity` elements and the last 1..=capacity, the flag is `true`
//! exactly when a bucket exists, and then the main array holds exactly `threshold` elements.
//! Density is what makes element `i` findable without reading other buckets: it lives in
//! bucket `(i - threshold) / capacity`, and the logical length is known from the last bucket
//! alone. With unbounded buckets there is one overflow document without a `bucket` field, as
//! in the seed.

use bson::{Bson, Document, RawBsonRef, RawDocument, doc, oid::ObjectId};
use spillway_doc::compare::values_equal;
use spillway_doc::raw::{array_len, document_id, top_level_array};
use spillway_doc::size::MAX_DOCUMENT_SIZE;

use crate::backend::{Query, ReadBackend, Write};
use crate::error::PatternError;
use crate::policy::{BUCKET_FIELD, Pattern, Shape};

/// An outlier policy's options, borrowed.
pub(crate) struct Outlier<'p> {
    pub(crate) pattern: &'p Pattern,
    pub(crate) threshold: usize,
    pub(crate) flag_field: &'p str,
    pub(crate) overflow_field: &'p str,
    pub(crate) capacity: Option<usize>,
}

impl<'p> Outlier<'p> {
    pub(crate) fn of(pattern: &'p Pattern) -> Option<Outlier<'p>> {
        match &pattern.shape {
            Shape::Outlier {
                threshold,
                flag_field,
                overflow_field,
                bucket_capacity,
            } => Some(Outlier {
                pattern,
                threshold: *threshold,
                flag_field,
                overflow_field,
                capacity: *bucket_capacity,
            }),
            Shape::Subset { .. } => None,
        }
    }

    fn field(&self) -> &str {
        &self.pattern.field
    }

    fn side(&self) -> &str {
        &self.pattern.side_collection
    }

    fn link(&self) -> &str {
        &self.pattern.link_field
    }

    /// Whether a stored main document has overflow buckets (its flag is `true`).
    pub(crate) fn is_flagged(&self, stored: &Document) -> bool {
        matches!(stored.get(self.flag_field), Some(Bson::Boolean(true)))
    }

    fn corrupt(&self, link: &Bson, message: impl Into<String>) -> PatternError {
        PatternError::Corrupt {
            collection: self.side().to_string(),
            link: Box::new(link.clone()),
            message: message.into(),
        }
    }

    /// Cuts a logical document's array down to the main part, sets or clears the flag, and
    /// returns the overflow elements in bucket-sized chunks.
    pub(crate) fn split(&self, document: &mut Document) -> Vec<Vec<Bson>> {
        let overflow = match document.get_mut(self.pattern.field.as_str()) {
            Some(Bson::Array(items)) if items.len() > self.threshold => {
                let overflow = items.split_off(self.threshold);
                items.shrink_to_fit();
                overflow
            }
            _ => Vec::new(),
        };
        if overflow.is_empty() {
            document.remove(self.flag_field);
            return Vec::new();
        }
        document.insert(self.flag_field, true);
        self.chunks(overflow)
    }

    fn chunks(&self, elements: Vec<Bson>) -> Vec<Vec<Bson>> {
        if elements.is_empty() {
            return Vec::new();
        }
        let Some(capacity) = self.capacity else {
            return vec![elements];
        };
        // Each chunk is collected into its own allocation: splitting the vector off its tail
        // again and again would copy the rest every time and leave every chunk holding the
        // capacity of everything after it (quadratic time and memory for a large insert).
        let mut chunks = Vec::with_capacity(elements.len().div_ceil(capacity));
        let mut elements = elements.into_iter();
        loop {
            let chunk: Vec<Bson> = elements.by_ref().take(capacity).collect();
            if chunk.is_empty() {
                return chunks;
            }
            chunks.push(chunk);
        }
    }

    fn bucket_document(
        &self,
        id: Bson,
        link: &Bson,
        number: usize,
        elements: Vec<Bson>,
    ) -> Document {
        let mut bucket = doc! { "_id": id, self.link(): link.clone() };
        if self.capacity.is_some() {
            bucket.insert(BUCKET_FIELD, number as i64);
        }
        bucket.insert(self.overflow_field, elements);
        bucket
    }

    /// Every overflow bucket of `link`, in order.
    pub(crate) fn buckets<R: ReadBackend>(
        &self,
        backend: &R,
        link: &Bson,
    ) -> Result<Vec<Document>, R::Error> {
        backend.find(
            self.side(),
            &Query {
                filter: doc! { self.link(): link.clone() },
                sort: Some(doc! { BUCKET_FIELD: 1 }),
                ..Query::default()
            },
        )
    }

    /// What the appends and the length need of the last overflow bucket of `link`, found
    /// through the side index and read raw: its array is counted, not decoded.
    fn last_bucket<R: ReadBackend>(
        &self,
        backend: &R,
        link: &Bson,
    ) -> Result<Option<LastBucket>, R::Error> {
        let Some(bucket) = backend.find_last_raw(self.side(), self.link(), link, BUCKET_FIELD)?
        else {
            return Ok(None);
        };
        let no_array = || {
            self.corrupt(
                link,
                format!(
                    "an overflow document has no array '{}'",
                    self.overflow_field
                ),
            )
        };
        let elements = top_level_array(&bucket, self.overflow_field).ok_or_else(no_array)?;
        let len = array_len(elements).map_err(|message| self.corrupt(link, message))?;
        let number = match bucket.get(BUCKET_FIELD) {
            Ok(Some(RawBsonRef::Int64(number))) => usize::try_from(number).unwrap_or(0),
            Ok(Some(RawBsonRef::Int32(number))) => usize::try_from(number).unwrap_or(0),
            _ => 0,
        };
        let id = document_id(&bucket);
        Ok(Some(LastBucket {
            id,
            number,
            len,
            array_bytes: elements.as_bytes().len(),
        }))
    }

    /// About how many bytes the logical document of the flagged main document `stored` of
    /// `link` takes, from its last bucket alone (buckets are dense: each one before it holds
    /// `capacity` elements, taken to be as large as its own), so that the expanded read
    /// writes into one allocation. Each element is counted with its old key and its new one,
    /// so a read of elements of even size fits; at most the size a document may have.
    pub(crate) fn expanded_size_hint<R: ReadBackend>(
        &self,
        backend: &R,
        link: &Bson,
        stored: &RawDocument,
    ) -> Result<usize, R::Error> {
        let stored_bytes = stored.as_bytes().len();
        let Some(last) = self.last_bucket(backend, link)? else {
            return Ok(stored_bytes);
        };
        let overflow = last
            .number
            .saturating_mul(self.capacity.unwrap_or(0))
            .saturating_add(last.len);
        let logical = self.threshold.saturating_add(overflow);
        let key_digits = logical
            .checked_ilog10()
            .map_or(1, |digits| digits as usize + 1);
        let element_bytes = last.array_bytes / last.len.max(1) + key_digits;
        // A document past the limit is refused once read: no need to reserve beyond it.
        Ok(stored_bytes
            .saturating_add(overflow.saturating_mul(element_bytes))
            .min(MAX_DOCUMENT_SIZE))
    }

    fn elements_of<'b>(
        &self,
        link: &Bson,
        bucket: &'b Document,
    ) -> Result<&'b Vec<Bson>, PatternError> {
        match bucket.get(self.overflow_field) {
            Some(Bson::Array(items)) => Ok(items),
            _ => Err(self.corrupt(
                link,
                format!(
                    "an overflow document has no array '{}'",
                    self.overflow_field
                ),
            )),
        }
    }

    /// Appends the overflow elements of a flagged main document to `logical`'s array.
    pub(crate) fn expand_into<R: ReadBackend>(
        &self,
        backend: &R,
        stored: &Document,
        logical: &mut Document,
    ) -> Result<(), R::Error> {
        logical.remove(self.flag_field);
        if !self.is_flagged(stored) {
            return Ok(());
        }
        let link = stored.get("_id").cloned().unwrap_or(Bson::Null);
        let buckets = self.buckets(backend, &link)?;
        let Some(Bson::Array(items)) = logical.get_mut(self.field()) else {
            return Err(self
                .corrupt(
                    &link,
                    format!("the main document has no array '{}'", self.field()),
                )
                .into());
        };
        for mut bucket in buckets {
            // The buckets are ours: move their elements instead of copying them.
            match bucket.remove(self.overflow_field) {
                Some(Bson::Array(elements)) => items.extend(elements),
                _ => {
                    return Err(self
                        .corrupt(
                            &link,
                            format!(
                                "an overflow document has no array '{}'",
                                self.overflow_field
                            ),
                        )
                        .into());
                }
            }
        }
        Ok(())
    }

    /// The writes that turn the stored buckets `existing` (in order) into `chunks`: changed
    /// buckets are replaced in place (keeping their `_id`), missing ones inserted, extra
    /// ones deleted.
    pub(crate) fn bucket_writes(
        &self,
        link: &Bson,
        existing: Vec<Document>,
        chunks: Vec<Vec<Bson>>,
        batch: &mut Vec<Write>,
    ) {
        let mut existing = existing.into_iter();
        for (number, chunk) in chunks.into_iter().enumerate() {
            match existing.next() {
                Some(old) => {
                    let id = old.get("_id").cloned().unwrap_or(Bson::Null);
                    let new = self.bucket_document(id, link, number, chunk);
                    if new != old {
                        batch.push(Write::Replace {
                            collection: self.side().to_string(),
                            document: new,
                        });
                    }
                }
                None => batch.push(Write::Insert {
                    collection: self.side().to_string(),
                    document: self.bucket_document(
                        Bson::ObjectId(ObjectId::new()),
                        link,
                        number,
                        chunk,
                    ),
                }),
            }
        }
        for old in existing {
            batch.push(Write::Delete {
                collection: self.side().to_string(),
                id: old.get("_id").cloned().unwrap_or(Bson::Null),
            });
        }
    }

    /// The fast path of `$push` without modifiers: appends `values` to the logical array of
    /// `main` (the stored main document, other operators already applied) touching only the
    /// main document and the last bucket. Returns `false` (nothing done) when the stored
    /// array is missing or not an array, for the general path to handle.
    pub(crate) fn append<R: ReadBackend>(
        &self,
        backend: &R,
        main: &mut Document,
        values: &[Bson],
        batch: &mut Vec<Write>,
    ) -> Result<bool, R::Error> {
        let flagged = self.is_flagged(main);
        let Some(Bson::Array(items)) = main.get_mut(self.field()) else {
            return Ok(false);
        };
        let room = self.threshold.saturating_sub(items.len());
        let (head, tail) = values.split_at(room.min(values.len()));
        items.extend(head.iter().cloned());
        if tail.is_empty() {
            return Ok(true);
        }
        let link = main.get("_id").cloned().unwrap_or(Bson::Null);
        main.insert(self.flag_field, true);
        self.overflow_writes(backend, &link, flagged, tail.to_vec(), batch)?;
        Ok(true)
    }

    /// The writes that append `tail` to the overflow of main document `link` (whose main
    /// array is full): the last bucket's room filled by a push, the rest in new buckets.
    /// `flagged`: whether the main document has buckets already.
    pub(crate) fn overflow_writes<R: ReadBackend>(
        &self,
        backend: &R,
        link: &Bson,
        flagged: bool,
        mut tail: Vec<Bson>,
        batch: &mut Vec<Write>,
    ) -> Result<(), R::Error> {
        let last = if flagged {
            self.last_bucket(backend, link)?
        } else {
            None
        };
        let mut next_number = 0;
        if let Some(last) = last {
            let room = self
                .capacity
                .map_or(usize::MAX, |capacity| capacity.saturating_sub(last.len));
            let rest = tail.split_off(room.min(tail.len()));
            if !tail.is_empty() {
                batch.push(Write::Push {
                    collection: self.side().to_string(),
                    id: last.id,
                    field: self.overflow_field.to_string(),
                    values: tail,
                });
            }
            tail = rest;
            next_number = last.number + 1;
        }
        for (offset, chunk) in self.chunks(tail).into_iter().enumerate() {
            batch.push(Write::Insert {
                collection: self.side().to_string(),
                document: self.bucket_document(
                    Bson::ObjectId(ObjectId::new()),
                    link,
                    next_number + offset,
                    chunk,
                ),
            });
        }
        Ok(())
    }

    /// Whether the logical array of a stored main document holds an element equal to
    /// `value` (MongoDB's equality): the main array is checked in memory, the overflow with
    /// one count query on the link and the overflow field, which an index on the overflow
    /// field answers without reading every bucket. `None` for a value a query cannot test for
    /// equality alone (an array, `null`, a regular expression, a document with `$` keys).
    pub(crate) fn contains<R: ReadBackend>(
        &self,
        backend: &R,
        stored: &Document,
        value: &Bson,
    ) -> Result<Option<bool>, R::Error> {
        let queryable = match value {
            Bson::Array(_) | Bson::Null | Bson::RegularExpression(_) | Bson::Undefined => false,
            Bson::Document(document) => document.keys().all(|key| !key.starts_with('$')),
            _ => true,
        };
        if !queryable {
            return Ok(None);
        }
        if let Some(Bson::Array(items)) = stored.get(self.field())
            && items.iter().any(|item| values_equal(item, value))
        {
            return Ok(Some(true));
        }
        if !self.is_flagged(stored) {
            return Ok(Some(false));
        }
        let link = stored.get("_id").cloned().unwrap_or(Bson::Null);
        let found = backend.count(
            self.side(),
            &doc! { self.link(): link, self.overflow_field: value.clone() },
        )?;
        Ok(Some(found > 0))
    }

    /// The logical length of a stored main document's array, reading at most the last
    /// bucket.
    pub(crate) fn len<R: ReadBackend>(
        &self,
        backend: &R,
        stored: &Document,
    ) -> Result<u64, R::Error> {
        let main = match stored.get(self.field()) {
            Some(Bson::Array(items)) => items.len() as u64,
            _ => return Ok(0),
        };
        if !self.is_flagged(stored) {
            return Ok(main);
        }
        let link = stored.get("_id").cloned().unwrap_or(Bson::Null);
        let Some(last) = self.last_bucket(backend, &link)? else {
            return Ok(main);
        };
        let full = self.capacity.map_or(0, |capacity| {
            (last.number as u64).saturating_mul(capacity as u64)
        });
        Ok(main + full + last.len as u64)
    }

    /// Elements `skip..skip + limit` of the logical array, reading only the buckets that hold
    /// them.
    pub(crate) fn page<R: ReadBackend>(
        &self,
        backend: &R,
        stored: &Document,
        skip: usize,
        limit: usize,
    ) -> Result<Vec<Bson>, R::Error> {
        let main: &[Bson] = match stored.get(self.field()) {
            Some(Bson::Array(items)) => items,
            _ => &[],
        };
        let end = skip.saturating_add(limit);
        let mut page: Vec<Bson> = main.iter().skip(skip).take(limit).cloned().collect();
        if end <= main.len() || !self.is_flagged(stored) {
            return Ok(page);
        }
        let link = stored.get("_id").cloned().unwrap_or(Bson::Null);
        let first_overflow = skip.saturating_sub(main.len());
        let last_overflow = end - main.len() - 1;
        let (filter, offset) = match self.capacity {
            Some(capacity) => (
                doc! {
                    self.link(): link.clone(),
                    BUCKET_FIELD: {
                        "$gte": (first_overflow / capacity) as i64,
                        "$lte": (last_overflow / capacity) as i64,
                    },
                },
                first_overflow / capacity * capacity,
            ),
            None => (doc! { self.link(): link.clone() }, 0),
        };
        let buckets = backend.find(
            self.side(),
            &Query {
                filter,
                sort: Some(doc! { BUCKET_FIELD: 1 }),
                ..Query::default()
            },
        )?;
        let mut position = offset;
        for bucket in &buckets {
            for element in self.elements_of(&link, bucket)? {
                if position >= first_overflow && page.len() < limit {
                    page.push(element.clone());
                }
                position += 1;
            }
        }
        Ok(page)
    }

    /// What keeps `document` from being an overflow bucket (besides its link): only `_id`,
    /// the link, `bucket` (a number from 0) and the overflow array, since every rewrite of the
    /// buckets keeps nothing else.
    pub(crate) fn shape_problem(&self, document: &Document) -> Option<String> {
        if let Some(key) = document.keys().find(|key| {
            !["_id", self.link(), BUCKET_FIELD, self.overflow_field].contains(&key.as_str())
        }) {
            return Some(format!(
                "it has the field '{key}', which an overflow bucket does not hold (only _id, '{}', '{BUCKET_FIELD}' and '{}')",
                self.link(),
                self.overflow_field
            ));
        }
        match document.get(self.overflow_field) {
            Some(Bson::Array(_)) => {}
            Some(other) => {
                return Some(format!(
                    "its '{}' is {:?}, not an array",
                    self.overflow_field,
                    other.element_type()
                ));
            }
            None => return Some(format!("it has no array '{}'", self.overflow_field)),
        }
        match document.get(BUCKET_FIELD) {
            None | Some(Bson::Int32(0..) | Bson::Int64(0..)) => None,
            Some(other) => Some(format!(
                "its '{BUCKET_FIELD}' is {other}, not a bucket number (an integer from 0)"
            )),
        }
    }

    /// What is wrong with one main document and its buckets, as messages.
    pub(crate) fn check(&self, stored: &Document, buckets: &[Document]) -> Vec<String> {
        let mut problems = Vec::new();
        let main_len = match stored.get(self.field()) {
            Some(Bson::Array(items)) => Some(items.len()),
            _ => None,
        };
        let flagged = self.is_flagged(stored);
        if let Some(flag) = stored.get(self.flag_field)
            && !matches!(flag, Bson::Boolean(true))
        {
            problems.push(format!(
                "flag '{}' is {flag}; it must be true or absent",
                self.flag_field
            ));
        }
        if let Some(length) = main_len
            && length > self.threshold
        {
            problems.push(format!(
                "main array holds {length} elements, more than the threshold {}",
                self.threshold
            ));
        }
        if flagged && buckets.is_empty() {
            problems.push(format!(
                "flag '{}' is true but there is no overflow document",
                self.flag_field
            ));
        }
        if !buckets.is_empty() {
            if !flagged {
                problems.push(format!(
                    "{} overflow document(s) exist but flag '{}' is not true",
                    buckets.len(),
                    self.flag_field
                ));
            }
            if main_len != Some(self.threshold) {
                problems.push(format!(
                    "main array holds {} elements while overflow exists; it must hold exactly {}",
                    main_len.map_or_else(|| "no".to_string(), |n| n.to_string()),
                    self.threshold
                ));
            }
        }
        for (position, bucket) in buckets.iter().enumerate() {
            let number = bucket.get(BUCKET_FIELD);
            let expected_number = self.capacity.map(|_| position as i64);
            let number_ok = match (expected_number, number) {
                (Some(expected), Some(Bson::Int64(found))) => *found == expected,
                (Some(expected), Some(Bson::Int32(found))) => i64::from(*found) == expected,
                (None, None) => buckets.len() == 1,
                _ => false,
            };
            if !number_ok {
                problems.push(format!(
                    "overflow document {} has {} {}, expected {}",
                    bucket
                        .get("_id")
                        .map_or_else(|| "?".to_string(), ToString::to_string),
                    BUCKET_FIELD,
                    number.map_or_else(|| "none".to_string(), ToString::to_string),
                    expected_number
                        .map_or_else(|| "one document without it".to_string(), |n| n.to_string()),
                ));
            }
            let Some(Bson::Array(items)) = bucket.get(self.overflow_field) else {
                problems.push(format!(
                    "overflow document {} has no array '{}'",
                    bucket
                        .get("_id")
                        .map_or_else(|| "?".to_string(), ToString::to_string),
                    self.overflow_field
                ));
                continue;
            };
            let length = items.len();
            let is_last = position + 1 == buckets.len();
            let size_ok = match self.capacity {
                Some(capacity) if is_last => (1..=capacity).contains(&length),
                Some(capacity) => length == capacity,
                None => length >= 1,
            };
            if !size_ok {
                problems.push(format!(
                    "overflow document {} holds {length} elements; {}",
                    bucket
                        .get("_id")
                        .map_or_else(|| "?".to_string(), ToString::to_string),
                    match self.capacity {
                        Some(capacity) if is_last =>
                            format!("the last bucket holds 1 to {capacity}"),
                        Some(capacity) =>
                            format!("every bucket but the last holds exactly {capacity}"),
                        None => "it must hold at least 1".to_string(),
                    }
                ));
            }
        }
        problems
    }
}

/// The last overflow bucket of a main document, as appends and lengths need it.
struct LastBucket {
    id: Bson,
    /// Its number (0 when absent, as in the unbounded layout).
    number: usize,
    /// How many elements it holds.
    len: usize,
    /// How many bytes its array takes.
    array_bytes: usize,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::Pattern;

    #[test]
    fn each_bucket_owns_only_its_own_elements() {
        // Splitting a vector off its tail again and again left every chunk holding the
        // capacity of everything after it: a 200,000-element insert took 22 GB.
        let pattern: Pattern = Pattern::outlier("books", "buyers")
            .bucket_capacity(100)
            .into();
        let outlier = Outlier::of(&pattern).expect("an outlier policy");
        let elements: Vec<Bson> = (0..1_050).map(Bson::Int32).collect();
        let chunks = outlier.chunks(elements);
        assert_eq!(chunks.len(), 11);
        assert!(chunks.iter().all(|chunk| chunk.capacity() <= 100));
        assert_eq!(
            chunks[10],
            (1_000..1_050).map(Bson::Int32).collect::<Vec<_>>()
        );
    }
}
