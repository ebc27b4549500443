//! The subset layout: every element in the archive collection as its own document, the top
//! `keep` by the policy's order embedded in the main document.
//!
//! ```text
//! products: { _id: <p>, name: "Super Widget", reviews: [ <10 newest reviews> ] }
//! reviews:  { _id: <oid>, review_id: 786, review_author: "Kristina", ..., product_id: <p> }
//! ```
//!
//! An archive document is the element's fields plus the link field, an `_id` (generated and
//! hidden from the logical array, unless the policy's identity is `_id`), and `_seq` when the
//! policy has no sort key (insertion order: a higher `_seq` is newer). The logical array is
//! the archive in the policy's order (ties: newest `_id` first); the main array is its first
//! `keep` elements. Elements must be documents, without the link field or `_seq`.

use bson::{Bson, Document, doc, oid::ObjectId};
use spillway_doc::compare::values_equal;
use spillway_doc::sort::SortSpec;

use crate::backend::{Query, ReadBackend, Write};
use crate::error::PatternError;
use crate::policy::{Pattern, SEQUENCE_FIELD, Shape};

/// A subset policy's options, borrowed.
pub(crate) struct Subset<'p> {
    pub(crate) pattern: &'p Pattern,
    pub(crate) keep: usize,
    pub(crate) identity: Option<&'p str>,
    order: SortSpec,
    order_document: Document,
    insertion_order: bool,
}

/// An archive document after a rewrite, and what the rewrite does to it.
struct Archived {
    document: Document,
    action: ArchiveAction,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum ArchiveAction {
    Keep,
    Replace,
    Insert,
}

impl<'p> Subset<'p> {
    pub(crate) fn of(pattern: &'p Pattern) -> Option<Subset<'p>> {
        let Shape::Subset {
            keep,
            sort_by,
            identity,
        } = &pattern.shape
        else {
            return None;
        };
        let order_document = pattern.side_order();
        let order = SortSpec::parse(&order_document).ok()?;
        Some(Subset {
            pattern,
            keep: *keep,
            identity: identity.as_deref(),
            order,
            order_document,
            insertion_order: sort_by.is_none(),
        })
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

    pub(crate) fn keeps_element_id(&self) -> bool {
        self.identity == Some("_id")
    }

    fn refused(&self, message: String) -> PatternError {
        PatternError::Refused {
            collection: self.pattern.collection.clone(),
            field: self.pattern.field.clone(),
            message,
        }
    }

    /// Whether a stored main document may have archive elements beyond its main array (its
    /// array is full).
    pub(crate) fn may_have_more(&self, stored: &Document) -> bool {
        matches!(stored.get(self.field()), Some(Bson::Array(items)) if items.len() >= self.keep)
    }

    /// The archive document of a new element.
    fn archive_document(
        &self,
        element: &Bson,
        link: &Bson,
        sequence: i64,
    ) -> Result<Document, PatternError> {
        let Bson::Document(element) = element else {
            return Err(self.refused(format!("subset elements must be documents, got {element}")));
        };
        for reserved in [self.link(), SEQUENCE_FIELD] {
            if element.contains_key(reserved) {
                return Err(self.refused(format!(
                    "an element cannot have the field '{reserved}', which the archive uses"
                )));
            }
        }
        let id = match element.get("_id") {
            Some(id) if self.keeps_element_id() => id.clone(),
            Some(_) => {
                return Err(self.refused(
                    "an element has an _id; declare the policy with .identity(\"_id\") to keep element ids"
                        .to_string(),
                ));
            }
            None => Bson::ObjectId(ObjectId::new()),
        };
        let mut archived = doc! { "_id": id };
        for (key, value) in element {
            if key != "_id" {
                archived.insert(key.clone(), value.clone());
            }
        }
        archived.insert(self.link(), link.clone());
        if self.insertion_order {
            archived.insert(SEQUENCE_FIELD, sequence);
        }
        Ok(archived)
    }

    /// The element an archive document stands for.
    pub(crate) fn element_of(&self, archived: &Document) -> Bson {
        let mut element = Document::new();
        for (key, value) in archived {
            let hidden = key == self.link()
                || key == SEQUENCE_FIELD
                || (key == "_id" && !self.keeps_element_id());
            if !hidden {
                element.insert(key.clone(), value.clone());
            }
        }
        Bson::Document(element)
    }

    pub(crate) fn archive_query(&self, link: &Bson, skip: u64, limit: Option<u64>) -> Query {
        Query {
            filter: doc! { self.link(): link.clone() },
            sort: Some(self.order_document.clone()),
            skip,
            limit,
        }
    }

    /// Every archive document of `link`, in the policy's order.
    pub(crate) fn archive<R: ReadBackend>(
        &self,
        backend: &R,
        link: &Bson,
    ) -> Result<Vec<Document>, R::Error> {
        backend.find(self.side(), &self.archive_query(link, 0, None))
    }

    /// The first `keep` archive documents of `link`.
    fn top<R: ReadBackend>(&self, backend: &R, link: &Bson) -> Result<Vec<Document>, R::Error> {
        backend.find(
            self.side(),
            &self.archive_query(link, 0, Some(self.keep as u64)),
        )
    }

    fn next_sequence<R: ReadBackend>(&self, backend: &R, link: &Bson) -> Result<i64, R::Error> {
        if !self.insertion_order {
            return Ok(0);
        }
        let newest = backend.find(self.side(), &self.archive_query(link, 0, Some(1)))?;
        Ok(newest
            .first()
            .and_then(|newest| match newest.get(SEQUENCE_FIELD) {
                Some(Bson::Int64(sequence)) => Some(*sequence + 1),
                Some(Bson::Int32(sequence)) => Some(i64::from(*sequence) + 1),
                _ => None,
            })
            .unwrap_or(0))
    }

    fn sort(&self, archived: &mut [Document]) {
        archived.sort_by(|a, b| self.order.compare(a, b));
    }

    fn main_array(&self, archived: &[Document]) -> Bson {
        Bson::Array(
            archived
                .iter()
                .take(self.keep)
                .map(|doc| self.element_of(doc))
                .collect(),
        )
    }

    /// Replaces a logical document's array with its main part and returns the archive
    /// documents of a newly inserted main document.
    pub(crate) fn split_new(&self, document: &mut Document) -> Result<Vec<Write>, PatternError> {
        let link = document.get("_id").cloned().unwrap_or(Bson::Null);
        let Some(Bson::Array(elements)) = document.get(self.field()) else {
            return Ok(Vec::new());
        };
        let count = elements.len() as i64;
        let mut archived = elements
            .iter()
            .enumerate()
            .map(|(position, element)| {
                self.archive_document(element, &link, count - 1 - position as i64)
            })
            .collect::<Result<Vec<_>, _>>()?;
        self.sort(&mut archived);
        document.insert(self.field(), self.main_array(&archived));
        Ok(archived
            .into_iter()
            .map(|document| Write::Insert {
                collection: self.side().to_string(),
                document,
            })
            .collect())
    }

    /// Checks that a document's array can be archived (every element a document without
    /// the fields the archive uses), before a migration starts.
    pub(crate) fn check_elements(&self, document: &Document) -> Result<(), PatternError> {
        if let Some(Bson::Array(elements)) = document.get(self.field()) {
            for element in elements {
                self.archive_document(element, &Bson::Null, 0)?;
            }
        }
        Ok(())
    }

    /// Sets a logical document's array from the archive, unless the archive is empty.
    pub(crate) fn expand_into<R: ReadBackend>(
        &self,
        backend: &R,
        stored: &Document,
        logical: &mut Document,
    ) -> Result<(), R::Error> {
        if !matches!(stored.get(self.field()), Some(Bson::Array(_))) {
            return Ok(());
        }
        let link = stored.get("_id").cloned().unwrap_or(Bson::Null);
        let archived = self.archive(backend, &link)?;
        // An empty archive means a main document not split yet (a migration has not reached
        // it): its array is whole. A split one with an empty archive has an empty array.
        if !archived.is_empty() {
            logical.insert(
                self.field(),
                Bson::Array(archived.iter().map(|doc| self.element_of(doc)).collect()),
            );
        }
        Ok(())
    }

    /// Rewrites `link`'s archive so that it holds `after`'s array, keeping the archive
    /// document of every element that stays (matched by identity, else by equal content,
    /// else by position), and sets the main part of `after`'s array.
    pub(crate) fn rewrite<R: ReadBackend>(
        &self,
        backend: &R,
        after: &mut Document,
        batch: &mut Vec<Write>,
    ) -> Result<(), R::Error> {
        let link = after.get("_id").cloned().unwrap_or(Bson::Null);
        let existing = self.archive(backend, &link)?;
        let elements = match after.get(self.field()) {
            Some(Bson::Array(elements)) => elements.clone(),
            _ => Vec::new(),
        };
        let mut unmatched: Vec<Option<Document>> = existing.into_iter().map(Some).collect();
        let mut slots: Vec<Option<Archived>> = elements.iter().map(|_| None).collect();
        // Identity first, then equal content.
        for (position, element) in elements.iter().enumerate() {
            let wanted = self.identity_of(element);
            let found = unmatched.iter().position(|candidate| {
                candidate.as_ref().is_some_and(|candidate| match &wanted {
                    Some(identity) => self
                        .identity_of(&self.element_of(candidate))
                        .is_some_and(|known| values_equal(&known, identity)),
                    None => self.element_of(candidate) == *element,
                })
            });
            if let Some(found) = found {
                let old = unmatched[found].take().expect("found");
                slots[position] = Some(self.refill(&old, element, &link)?);
            }
        }
        // Then position: the remaining old documents take the remaining new elements.
        let mut leftovers = unmatched.into_iter().flatten();
        let mut fresh = Vec::new();
        for (position, element) in elements.iter().enumerate() {
            if slots[position].is_some() {
                continue;
            }
            match leftovers.next() {
                Some(old) if self.identity.is_none() => {
                    slots[position] = Some(self.refill(&old, element, &link)?);
                }
                Some(old) => {
                    batch.push(self.delete(&old));
                    fresh.push(position);
                }
                None => fresh.push(position),
            }
        }
        for old in leftovers {
            batch.push(self.delete(&old));
        }
        let first_sequence = self.next_sequence(backend, &link)?;
        for (sequence, &position) in (first_sequence..).zip(fresh.iter().rev()) {
            let document = self.archive_document(&elements[position], &link, sequence)?;
            slots[position] = Some(Archived {
                document,
                action: ArchiveAction::Insert,
            });
        }
        let mut archived = Vec::with_capacity(slots.len());
        for slot in slots.into_iter().flatten() {
            let collection = self.side().to_string();
            match slot.action {
                ArchiveAction::Keep => {}
                ArchiveAction::Replace => batch.push(Write::Replace {
                    collection,
                    document: slot.document.clone(),
                }),
                ArchiveAction::Insert => batch.push(Write::Insert {
                    collection,
                    document: slot.document.clone(),
                }),
            }
            archived.push(slot.document);
        }
        self.sort(&mut archived);
        if matches!(after.get(self.field()), Some(Bson::Array(_))) {
            after.insert(self.field(), self.main_array(&archived));
        }
        Ok(())
    }

    fn identity_of(&self, element: &Bson) -> Option<Bson> {
        let field = self.identity?;
        match element {
            Bson::Document(element) => element.get(field).cloned(),
            _ => None,
        }
    }

    /// `old`'s archive document holding `element` instead (same `_id` and `_seq`).
    fn refill(
        &self,
        old: &Document,
        element: &Bson,
        link: &Bson,
    ) -> Result<Archived, PatternError> {
        let sequence = match old.get(SEQUENCE_FIELD) {
            Some(Bson::Int64(sequence)) => *sequence,
            Some(Bson::Int32(sequence)) => i64::from(*sequence),
            _ => 0,
        };
        let mut document = self.archive_document(&self.strip_id(element), link, sequence)?;
        if let Some(id) = old.get("_id") {
            document.insert("_id", id.clone());
        }
        let document = move_id_first(document);
        let action = if document == *old {
            ArchiveAction::Keep
        } else {
            ArchiveAction::Replace
        };
        Ok(Archived { document, action })
    }

    fn strip_id(&self, element: &Bson) -> Bson {
        match element {
            Bson::Document(element) if self.keeps_element_id() => {
                let mut element = element.clone();
                element.remove("_id");
                Bson::Document(element)
            }
            other => other.clone(),
        }
    }

    fn delete(&self, old: &Document) -> Write {
        Write::Delete {
            collection: self.side().to_string(),
            id: old.get("_id").cloned().unwrap_or(Bson::Null),
        }
    }

    /// The fast path of `$push` without modifiers: archives `values` as the newest elements
    /// and recomputes the main array from the archive's current top and the new ones.
    pub(crate) fn append<R: ReadBackend>(
        &self,
        backend: &R,
        main: &mut Document,
        values: &[Bson],
        batch: &mut Vec<Write>,
    ) -> Result<bool, R::Error> {
        if !matches!(main.get(self.field()), Some(Bson::Array(_))) {
            return Ok(false);
        }
        let link = main.get("_id").cloned().unwrap_or(Bson::Null);
        let mut top = self.top(backend, &link)?;
        let first_sequence = self.next_sequence(backend, &link)?;
        for (sequence, value) in (first_sequence..).zip(values) {
            let document = self.archive_document(value, &link, sequence)?;
            batch.push(Write::Insert {
                collection: self.side().to_string(),
                document: document.clone(),
            });
            top.push(document);
        }
        self.sort(&mut top);
        main.insert(self.field(), self.main_array(&top));
        Ok(true)
    }

    /// Brings the main document of `link` in step with its archive after a direct write to
    /// the archive; `None` when nothing needs to change.
    pub(crate) fn resync<R: ReadBackend>(
        &self,
        backend: &R,
        link: &Bson,
    ) -> Result<Option<Write>, R::Error> {
        let Some(mut main) = backend.get(&self.pattern.collection, link)? else {
            return Ok(None);
        };
        let top = self.top(backend, link)?;
        let wanted = self.main_array(&top);
        let current = main.get(self.field());
        let has_array = matches!(current, Some(Bson::Array(_)));
        if current == Some(&wanted) || (!has_array && top.is_empty()) {
            return Ok(None);
        }
        main.insert(self.field(), wanted);
        Ok(Some(Write::Replace {
            collection: self.pattern.collection.clone(),
            document: main,
        }))
    }

    /// Gives a document inserted directly into the archive its `_seq` (newest), so that it
    /// takes its place in insertion order.
    pub(crate) fn prepare_direct_insert<R: ReadBackend>(
        &self,
        backend: &R,
        document: &mut Document,
    ) -> Result<(), R::Error> {
        if !self.insertion_order || document.contains_key(SEQUENCE_FIELD) {
            return Ok(());
        }
        let Some(link) = document.get(self.link()).cloned() else {
            return Ok(());
        };
        let sequence = self.next_sequence(backend, &link)?;
        document.insert(SEQUENCE_FIELD, sequence);
        Ok(())
    }

    /// The logical length: the number of archive documents.
    pub(crate) fn len<R: ReadBackend>(
        &self,
        backend: &R,
        stored: &Document,
    ) -> Result<u64, R::Error> {
        let link = stored.get("_id").cloned().unwrap_or(Bson::Null);
        backend.count(self.side(), &doc! { self.link(): link })
    }

    /// Elements `skip..skip + limit` of the logical array (newest first), from the archive.
    pub(crate) fn page<R: ReadBackend>(
        &self,
        backend: &R,
        stored: &Document,
        skip: usize,
        limit: usize,
    ) -> Result<Vec<Bson>, R::Error> {
        let link = stored.get("_id").cloned().unwrap_or(Bson::Null);
        let archived = backend.find(
            self.side(),
            &self.archive_query(&link, skip as u64, Some(limit as u64)),
        )?;
        Ok(archived.iter().map(|doc| self.element_of(doc)).collect())
    }

    /// What keeps `document` from being an archive document (besides its link): `_seq` is
    /// the archive's own field, an integer in insertion order and absent under `sort_by`
    /// (where no element may carry it).
    pub(crate) fn shape_problem(&self, document: &Document) -> Option<String> {
        match (document.get(SEQUENCE_FIELD), self.insertion_order) {
            (None | Some(Bson::Int32(_) | Bson::Int64(_)), true) | (None, false) => None,
            (Some(other), true) => Some(format!(
                "its '{SEQUENCE_FIELD}' is {other}, not an integer (the archive's insertion order)"
            )),
            (Some(_), false) => Some(format!(
                "it has the field '{SEQUENCE_FIELD}', which an archive sorted by {} does not hold",
                self.order_document
            )),
        }
    }

    /// Adds to `logical`'s array (read from the archive) the elements of `stored`'s main array
    /// that the archive does not hold, matched by identity when the policy has one, else by
    /// equal content: a layout made by hand may keep its newest elements only in the main
    /// document (the subset seed's "old reviews" collection), and adopting it must lose none.
    pub(crate) fn keep_embedded(&self, stored: &Document, logical: &mut Document) {
        let Some(Bson::Array(embedded)) = stored.get(self.field()) else {
            return;
        };
        let Some(Bson::Array(elements)) = logical.get_mut(self.field()) else {
            return;
        };
        let mut matched = vec![false; elements.len()];
        let mut missing = Vec::new();
        for element in embedded {
            let wanted = self.identity_of(element);
            let found = elements
                .iter()
                .enumerate()
                .position(|(position, candidate)| {
                    !matched[position]
                        && match &wanted {
                            Some(identity) => self
                                .identity_of(candidate)
                                .is_some_and(|known| values_equal(&known, identity)),
                            None => candidate == element,
                        }
                });
            match found {
                Some(position) => matched[position] = true,
                None => missing.push(element.clone()),
            }
        }
        elements.extend(missing);
    }

    /// What is wrong with one main document and its archive (in order), as messages.
    pub(crate) fn check(&self, stored: &Document, archived: &[Document]) -> Vec<String> {
        let mut problems = Vec::new();
        let wanted = self.main_array(archived);
        match stored.get(self.field()) {
            Some(found @ Bson::Array(items)) if *found != wanted => {
                problems.push(format!(
                    "main array ({} elements) is not the first {} of the archive's {} in order {}",
                    items.len(),
                    self.keep,
                    archived.len(),
                    self.order_document,
                ));
            }
            Some(Bson::Array(_)) => {}
            _ if !archived.is_empty() => problems.push(format!(
                "{} archive document(s) exist but the main document has no array '{}'",
                archived.len(),
                self.field()
            )),
            _ => {}
        }
        if self.insertion_order {
            let missing = archived
                .iter()
                .filter(|doc| {
                    !matches!(
                        doc.get(SEQUENCE_FIELD),
                        Some(Bson::Int64(_) | Bson::Int32(_))
                    )
                })
                .count();
            if missing > 0 {
                problems.push(format!(
                    "{missing} archive document(s) have no integer '{SEQUENCE_FIELD}' (insertion order)"
                ));
            }
        }
        problems
    }
}

fn move_id_first(mut document: Document) -> Document {
    let Some(id) = document.remove("_id") else {
        return document;
    };
    let mut ordered = doc! { "_id": id };
    ordered.extend(document);
    ordered
}
