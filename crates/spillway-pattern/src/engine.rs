//! The engine: every write and read of a main collection with policies, expressed as reads
//! and one atomic batch on a backend.
//!
//! The rule that makes every write path correct is "expand, apply, split": the caller expands
//! the stored main document into the logical one ([`Engine::expand`]), applies MongoDB's
//! update semantics to it (spillway-doc), and hands the result to [`Engine::rewrite`], which
//! computes the stored layout and writes only what changed (the main document, the buckets or
//! archive documents whose content differs). Plain appends skip the expansion
//! ([`Engine::append`]): they touch the main document and the last bucket (outlier) or the
//! archive's top (subset). Each call ends in exactly one [`WriteBackend::apply`].

use bson::{Bson, Document, doc};

use crate::backend::{ReadBackend, Write, WriteBackend};
use crate::error::PatternError;
use crate::outlier::Outlier;
use crate::policy::{Pattern, Policy, Shape};
use crate::subset::Subset;

/// One policy's layout, whichever kind.
enum Layout<'p> {
    Outlier(Outlier<'p>),
    Subset(Subset<'p>),
}

impl<'p> Layout<'p> {
    fn of(pattern: &'p Pattern) -> Layout<'p> {
        match pattern.shape {
            Shape::Outlier { .. } => Layout::Outlier(Outlier::of(pattern).expect("an outlier")),
            Shape::Subset { .. } => Layout::Subset(
                Subset::of(pattern).expect("a validated subset policy has a valid order"),
            ),
        }
    }
}

/// The policies of one main collection.
pub struct Engine<'a> {
    collection: &'a str,
    policies: Vec<&'a Policy>,
}

fn id_of(document: &Document) -> Bson {
    document.get("_id").cloned().unwrap_or(Bson::Null)
}

impl<'a> Engine<'a> {
    /// The policies among `all` whose main collection is `collection`.
    pub fn new(collection: &'a str, all: &'a [Policy]) -> Engine<'a> {
        Engine {
            collection,
            policies: all
                .iter()
                .filter(|policy| policy.pattern.collection == collection)
                .collect(),
        }
    }

    /// The main collection.
    pub fn collection(&self) -> &'a str {
        self.collection
    }

    /// The policies of the collection, in declaration order.
    pub fn policies(&self) -> impl Iterator<Item = &'a Policy> + '_ {
        self.policies.iter().copied()
    }

    /// The policy managing `field`, if any.
    pub fn policy_on(&self, field: &str) -> Option<&'a Policy> {
        self.policies().find(|policy| policy.pattern.field == field)
    }

    /// Whether the collection has no policy.
    pub fn is_empty(&self) -> bool {
        self.policies.is_empty()
    }

    /// The managed array fields.
    pub fn managed_fields(&self) -> Vec<&'a str> {
        self.policies
            .iter()
            .map(|policy| policy.pattern.field.as_str())
            .collect()
    }

    /// Whether a dotted path reaches into a managed field.
    pub fn is_managed_path(&self, path: &str) -> bool {
        let head = path.split('.').next().unwrap_or(path);
        self.policies
            .iter()
            .any(|policy| policy.pattern.field == head)
    }

    /// Refuses a logical document (insert or replacement) that writes a field a policy owns.
    ///
    /// # Errors
    /// [`PatternError::Refused`] naming the field.
    pub fn check_document(&self, document: &Document) -> Result<(), PatternError> {
        for policy in &self.policies {
            if let Some(reserved) = policy.pattern.reserved_main_field()
                && document.contains_key(reserved)
            {
                return Err(refused(
                    &policy.pattern,
                    format!(
                        "'{reserved}' is the flag field of the policy on '{field}' and only the policy writes it. If the document was read from the stored layout (namespace system.stored.<collection>), its '{field}' holds only the first elements: write the logical document, as a default read returns it. If '{reserved}' is a field of your own, give the policy another flag field (flagField)",
                        field = policy.pattern.field,
                    ),
                ));
            }
        }
        Ok(())
    }

    /// Refuses an update that writes a field a policy owns or renames a managed field.
    /// `operations` are the update's `(operator, path)` pairs.
    ///
    /// # Errors
    /// [`PatternError::Refused`] naming the operator and the field.
    pub fn check_update(&self, operations: &[(&str, &str)]) -> Result<(), PatternError> {
        for policy in &self.policies {
            for (operator, path) in operations {
                let head = path.split('.').next().unwrap_or(path);
                if policy.pattern.reserved_main_field() == Some(head) {
                    return Err(refused(
                        &policy.pattern,
                        format!("{operator} of '{path}': the field is maintained by the policy"),
                    ));
                }
                if *operator == "$rename" && head == policy.pattern.field {
                    return Err(refused(
                        &policy.pattern,
                        format!(
                            "$rename of the managed field '{path}' is not supported; remove the policy first"
                        ),
                    ));
                }
            }
        }
        Ok(())
    }

    /// Whether a stored main document may differ from its logical document (it has overflow
    /// or archive elements beyond its main array).
    pub fn may_differ(&self, stored: &Document) -> bool {
        self.policies
            .iter()
            .any(|policy| match Layout::of(&policy.pattern) {
                Layout::Outlier(outlier) => outlier.is_flagged(stored),
                Layout::Subset(subset) => subset.may_have_more(stored),
            })
    }

    /// The logical document of a stored main document: every element of every managed
    /// array, in order, without the policies' flags. It does not depend on migration
    /// progress: a document not split yet has no side documents and reads as it is.
    ///
    /// # Errors
    /// The backend's, or [`PatternError::Corrupt`] when side documents are malformed.
    pub fn expand<R: ReadBackend>(
        &self,
        backend: &R,
        stored: &Document,
    ) -> Result<Document, R::Error> {
        self.expand_with(backend, stored, false)
    }

    /// The document filters on managed fields are evaluated on: the logical document with
    /// the flags kept (a filter may test them too).
    ///
    /// # Errors
    /// As [`Engine::expand`].
    pub fn query_view<R: ReadBackend>(
        &self,
        backend: &R,
        stored: &Document,
    ) -> Result<Document, R::Error> {
        self.expand_with(backend, stored, true)
    }

    fn expand_with<R: ReadBackend>(
        &self,
        backend: &R,
        stored: &Document,
        keep_flags: bool,
    ) -> Result<Document, R::Error> {
        let mut logical = stored.clone();
        for policy in &self.policies {
            match Layout::of(&policy.pattern) {
                Layout::Outlier(outlier) => {
                    outlier.expand_into(backend, stored, &mut logical)?;
                    if keep_flags && let Some(flag) = stored.get(outlier.flag_field) {
                        logical.insert(outlier.flag_field, flag.clone());
                    }
                }
                Layout::Subset(subset) => subset.expand_into(backend, stored, &mut logical)?,
            }
        }
        Ok(logical)
    }

    /// Inserts a logical document (with its `_id`): the main document with each managed
    /// array cut to its main part, and the side documents. Returns the stored main document.
    ///
    /// # Errors
    /// [`PatternError::Refused`] for a field the policy owns or a bad subset element; the
    /// backend's (duplicate key...).
    pub fn insert<W: WriteBackend>(
        &self,
        backend: &mut W,
        logical: Document,
    ) -> Result<Document, W::Error> {
        self.check_document(&logical)?;
        let mut main = logical;
        let link = id_of(&main);
        let mut side = Vec::new();
        for policy in &self.policies {
            match Layout::of(&policy.pattern) {
                Layout::Outlier(outlier) => {
                    let chunks = outlier.split(&mut main);
                    outlier.bucket_writes(&link, Vec::new(), chunks, &mut side);
                }
                Layout::Subset(subset) => side.extend(subset.split_new(&mut main)?),
            }
        }
        let mut batch = vec![Write::Insert {
            collection: self.collection.to_string(),
            document: main.clone(),
        }];
        batch.extend(side);
        backend.apply(batch)?;
        Ok(main)
    }

    /// Stores `logical_after` as the new logical document of the stored main document
    /// `stored_before` (same `_id`), writing only the side documents that change. Returns
    /// the stored main document.
    ///
    /// # Errors
    /// As [`Engine::insert`].
    pub fn rewrite<W: WriteBackend>(
        &self,
        backend: &mut W,
        stored_before: &Document,
        logical_after: Document,
    ) -> Result<Document, W::Error> {
        let mut main = logical_after;
        let link = id_of(stored_before);
        let mut batch = Vec::new();
        for policy in &self.policies {
            match Layout::of(&policy.pattern) {
                Layout::Outlier(outlier) => {
                    let chunks = outlier.split(&mut main);
                    let existing = if outlier.is_flagged(stored_before) {
                        outlier.buckets(backend, &link)?
                    } else {
                        Vec::new()
                    };
                    outlier.bucket_writes(&link, existing, chunks, &mut batch);
                }
                Layout::Subset(subset) => subset.rewrite(backend, &mut main, &mut batch)?,
            }
        }
        if main != *stored_before {
            batch.insert(
                0,
                Write::Replace {
                    collection: self.collection.to_string(),
                    document: main.clone(),
                },
            );
        }
        if !batch.is_empty() {
            backend.apply(batch)?;
        }
        Ok(main)
    }

    /// The fast path of plain `$push`es: `main` is the stored main document with the update's
    /// other operators already applied, `values` the elements appended to each managed field.
    /// Returns the new stored main document, or `None` (nothing written) when a target is not
    /// an array, for the general path to handle.
    ///
    /// # Errors
    /// As [`Engine::insert`].
    pub fn append<W: WriteBackend>(
        &self,
        backend: &mut W,
        mut main: Document,
        values: &[(String, Vec<Bson>)],
    ) -> Result<Option<Document>, W::Error> {
        let mut batch = Vec::new();
        for (field, elements) in values {
            let Some(policy) = self
                .policies
                .iter()
                .find(|policy| policy.pattern.field == *field)
            else {
                continue;
            };
            let appended = match Layout::of(&policy.pattern) {
                Layout::Outlier(outlier) => {
                    outlier.append(backend, &mut main, elements, &mut batch)?
                }
                Layout::Subset(subset) => {
                    subset.append(backend, &mut main, elements, &mut batch)?
                }
            };
            if !appended {
                return Ok(None);
            }
        }
        batch.insert(
            0,
            Write::Replace {
                collection: self.collection.to_string(),
                document: main.clone(),
            },
        );
        backend.apply(batch)?;
        Ok(Some(main))
    }

    /// Checks that a stored document can be brought into the policies' layout without
    /// changing its data, before a migration starts: a subset's elements must be documents
    /// without the archive's own fields; an outlier's flag field, which the migration takes
    /// over, must be absent or hold what a layout made by hand gives it (`true` when overflow
    /// documents link to the document, `false` when none do).
    ///
    /// # Errors
    /// [`PatternError::Refused`] (a subset element) or [`PatternError::InvalidPolicy`] (a
    /// flag field that collides with the document's data), naming the field and the `_id`;
    /// the backend's.
    pub fn check_migratable<R: ReadBackend>(
        &self,
        backend: &R,
        stored: &Document,
    ) -> Result<(), R::Error> {
        for policy in &self.policies {
            match Layout::of(&policy.pattern) {
                Layout::Subset(subset) => subset.check_elements(stored)?,
                Layout::Outlier(outlier) => {
                    let Some(value) = stored.get(outlier.flag_field) else {
                        continue;
                    };
                    let id = id_of(stored);
                    let has_overflow = backend.count(
                        &policy.pattern.side_collection,
                        &doc! { policy.pattern.link_field.as_str(): id.clone() },
                    )? > 0;
                    if *value != Bson::Boolean(has_overflow) {
                        return Err(invalid(
                            &policy.pattern,
                            format!(
                                "the flag field '{}' collides with data: document _id {id} holds {} there, which the policy would overwrite (a flag made by hand must be true with overflow documents in '{}', false without); choose another flag field",
                                outlier.flag_field,
                                short(value),
                                policy.pattern.side_collection,
                            ),
                        )
                        .into());
                    }
                }
            }
        }
        Ok(())
    }

    /// Brings one stored main document into the policies' layout (a migration step). Side
    /// documents that already exist for it (a layout made by hand, as the seeds describe)
    /// are adopted; a document already in the layout is left as it is.
    ///
    /// # Errors
    /// As [`Engine::insert`].
    pub fn migrate<W: WriteBackend>(
        &self,
        backend: &mut W,
        stored: &Document,
    ) -> Result<Document, W::Error> {
        let mut logical = self.expand(backend, stored)?;
        for policy in &self.policies {
            if let Layout::Subset(subset) = Layout::of(&policy.pattern) {
                subset.keep_embedded(stored, &mut logical);
            }
        }
        self.rewrite(backend, stored, logical)
    }

    /// Folds every managed array back into its main document and deletes the side documents
    /// (a step of removing policies).
    ///
    /// # Errors
    /// The backend's; a logical document over the size limit cannot be folded back.
    pub fn fold<W: WriteBackend>(
        &self,
        backend: &mut W,
        stored: &Document,
    ) -> Result<Document, W::Error> {
        let logical = self.expand(backend, stored)?;
        let mut batch = Vec::new();
        if logical != *stored {
            batch.push(Write::Replace {
                collection: self.collection.to_string(),
                document: logical.clone(),
            });
        }
        self.side_deletes(backend, stored, &mut batch)?;
        if !batch.is_empty() {
            backend.apply(batch)?;
        }
        Ok(logical)
    }

    fn side_deletes<R: ReadBackend>(
        &self,
        backend: &R,
        stored: &Document,
        batch: &mut Vec<Write>,
    ) -> Result<(), R::Error> {
        let link = id_of(stored);
        for policy in &self.policies {
            let side = match Layout::of(&policy.pattern) {
                Layout::Outlier(outlier) if outlier.is_flagged(stored) => {
                    outlier.buckets(backend, &link)?
                }
                Layout::Outlier(_) => Vec::new(),
                Layout::Subset(subset) => subset.archive(backend, &link)?,
            };
            batch.extend(side.iter().map(|document| Write::Delete {
                collection: policy.pattern.side_collection.clone(),
                id: id_of(document),
            }));
        }
        Ok(())
    }

    /// Whether the logical array `field` of a stored main document holds `value`, answered
    /// without expanding it (outlier policies: the main array, then an indexed count on the
    /// overflow); `None` when that is not possible (a subset, whose elements are archive
    /// documents; a value a query cannot test), for the caller to expand instead.
    ///
    /// # Errors
    /// The backend's.
    pub fn contains<R: ReadBackend>(
        &self,
        backend: &R,
        stored: &Document,
        field: &str,
        value: &Bson,
    ) -> Result<Option<bool>, R::Error> {
        let Some(policy) = self
            .policies
            .iter()
            .find(|policy| policy.pattern.field == field)
        else {
            return Ok(None);
        };
        match Layout::of(&policy.pattern) {
            Layout::Outlier(outlier) => outlier.contains(backend, stored, value),
            Layout::Subset(_) => Ok(None),
        }
    }

    /// Deletes a stored main document and every side document of its policies.
    ///
    /// # Errors
    /// The backend's.
    pub fn delete<W: WriteBackend>(
        &self,
        backend: &mut W,
        stored: &Document,
    ) -> Result<(), W::Error> {
        let mut batch = vec![Write::Delete {
            collection: self.collection.to_string(),
            id: id_of(stored),
        }];
        self.side_deletes(backend, stored, &mut batch)?;
        backend.apply(batch)
    }
}

fn invalid(pattern: &Pattern, message: String) -> PatternError {
    PatternError::InvalidPolicy {
        collection: pattern.collection.clone(),
        field: pattern.field.clone(),
        message,
    }
}

/// A value for a message: whole when short, its type otherwise (a user's array or document
/// can be megabytes).
fn short(value: &Bson) -> String {
    let text = value.to_string();
    if text.len() <= 80 {
        text
    } else {
        format!("a {:?} value", value.element_type())
    }
}

fn refused(pattern: &Pattern, message: String) -> PatternError {
    PatternError::Refused {
        collection: pattern.collection.clone(),
        field: pattern.field.clone(),
        message,
    }
}

/// The policies whose side collection is `collection`.
pub fn policies_on_side<'a>(all: &'a [Policy], collection: &str) -> Vec<&'a Policy> {
    all.iter()
        .filter(|policy| policy.pattern.side_collection == collection)
        .collect()
}

/// What keeps `document`, a document of `policy`'s side collection, from having the layout's
/// shape, or `None`: it must link to an existing main document and hold only what the layout
/// holds (an overflow bucket: `_id`, the link, `bucket` and an array; an archive document:
/// the element's fields, the link and, in insertion order, an integer `_seq`). When
/// `adopting`, the main document must also read it: an outlier's flag is `true`, a subset's
/// array is an array.
fn side_problem<R: ReadBackend>(
    policy: &Policy,
    backend: &R,
    document: &Document,
    adopting: bool,
) -> Result<Option<String>, R::Error> {
    let pattern = &policy.pattern;
    let layout = Layout::of(pattern);
    let Some(link) = document.get(pattern.link_field.as_str()) else {
        return Ok(Some(format!(
            "it has no link field '{}'",
            pattern.link_field
        )));
    };
    let shape = match &layout {
        Layout::Outlier(outlier) => outlier.shape_problem(document),
        Layout::Subset(subset) => subset.shape_problem(document),
    };
    if shape.is_some() {
        return Ok(shape);
    }
    let Some(main) = backend.get(&pattern.collection, link)? else {
        return Ok(Some(format!(
            "it links to {} {}, but '{}' has no document with _id {}",
            pattern.link_field,
            short(link),
            pattern.collection,
            short(link)
        )));
    };
    if !adopting {
        return Ok(None);
    }
    Ok(match layout {
        Layout::Outlier(outlier) if !outlier.is_flagged(&main) => Some(format!(
            "it links to _id {}, whose flag '{}' is not true",
            short(link),
            outlier.flag_field
        )),
        Layout::Subset(_) if !matches!(main.get(pattern.field.as_str()), Some(Bson::Array(_))) => {
            Some(format!(
                "it links to _id {}, which has no array '{}'",
                short(link),
                pattern.field
            ))
        }
        _ => None,
    })
}

/// Refuses a document about to be written directly into `policy`'s side collection (insert,
/// update or replacement) that would not have the layout's shape: no link field, a link to a
/// main document that does not exist, an overflow array that is not an array, a field the
/// layout does not hold.
///
/// # Errors
/// [`PatternError::Refused`] naming the document and the problem; the backend's.
pub fn check_side_write<R: ReadBackend>(
    policy: &Policy,
    backend: &R,
    document: &Document,
) -> Result<(), R::Error> {
    match side_problem(policy, backend, document, false)? {
        None => Ok(()),
        Some(problem) => Err(refused(
            &policy.pattern,
            format!(
                "document _id {} of '{}' would break the layout: {problem}",
                short(&id_of(document)),
                policy.pattern.side_collection
            ),
        )
        .into()),
    }
}

/// Refuses to adopt an existing side collection (a new policy naming it) unless `document`,
/// one of its documents, already has the layout's shape and belongs to a main document that
/// reads it.
///
/// # Errors
/// [`PatternError::InvalidPolicy`] naming the collection, the document and the problem; the
/// backend's.
pub fn check_adoptable<R: ReadBackend>(
    policy: &Policy,
    backend: &R,
    document: &Document,
) -> Result<(), R::Error> {
    match side_problem(policy, backend, document, true)? {
        None => Ok(()),
        Some(problem) => Err(invalid(
            &policy.pattern,
            format!(
                "'{}' already holds documents that are not in the policy's layout, so it cannot be adopted: document _id {}: {problem}; name another side collection",
                policy.pattern.side_collection,
                short(&id_of(document))
            ),
        )
        .into()),
    }
}

/// The side documents of the main document `link` as the read paths find them (through the
/// side collection's index), in the policy's order.
///
/// # Errors
/// The backend's.
pub fn side_documents<R: ReadBackend>(
    policy: &Policy,
    backend: &R,
    link: &Bson,
) -> Result<Vec<Document>, R::Error> {
    match Layout::of(&policy.pattern) {
        Layout::Outlier(outlier) => outlier.buckets(backend, link),
        Layout::Subset(subset) => subset.archive(backend, link),
    }
}

/// Prepares a document inserted directly into a side collection (a subset archive in
/// insertion order gets its `_seq`, newest).
///
/// # Errors
/// The backend's.
pub fn prepare_side_insert<R: ReadBackend>(
    policy: &Policy,
    backend: &R,
    document: &mut Document,
) -> Result<(), R::Error> {
    match Layout::of(&policy.pattern) {
        Layout::Subset(subset) => subset.prepare_direct_insert(backend, document),
        Layout::Outlier(_) => Ok(()),
    }
}

/// Brings the main document `link` back in step after side documents of `policy` were
/// written directly: a subset's main array is recomputed from the archive; an outlier's
/// logical array (main, then buckets in order) is split again into dense buckets.
///
/// # Errors
/// The backend's.
pub fn resync<W: WriteBackend>(
    policy: &Policy,
    backend: &mut W,
    link: &Bson,
) -> Result<(), W::Error> {
    if !policy.is_split(link) {
        return Ok(());
    }
    match Layout::of(&policy.pattern) {
        Layout::Subset(subset) => {
            if let Some(write) = subset.resync(backend, link)? {
                backend.apply(vec![write])?;
            }
            Ok(())
        }
        Layout::Outlier(outlier) => {
            let Some(stored) = backend.get(&policy.pattern.collection, link)? else {
                return Ok(());
            };
            let buckets = outlier.buckets(backend, link)?;
            let mut logical = stored.clone();
            logical.remove(outlier.flag_field);
            if let Some(Bson::Array(items)) = logical.get_mut(policy.pattern.field.as_str()) {
                for bucket in &buckets {
                    if let Some(Bson::Array(elements)) = bucket.get(outlier.overflow_field) {
                        items.extend(elements.iter().cloned());
                    }
                }
            }
            let mut main = logical;
            let chunks = outlier.split(&mut main);
            let mut batch = Vec::new();
            outlier.bucket_writes(link, buckets, chunks, &mut batch);
            if main != stored {
                batch.insert(
                    0,
                    Write::Replace {
                        collection: policy.pattern.collection.clone(),
                        document: main,
                    },
                );
            }
            if !batch.is_empty() {
                backend.apply(batch)?;
            }
            Ok(())
        }
    }
}

/// The logical length of `policy`'s array in a stored main document, reading at most one
/// bucket (outlier) or counting archive entries (subset).
///
/// # Errors
/// The backend's.
pub fn logical_len<R: ReadBackend>(
    policy: &Policy,
    backend: &R,
    stored: &Document,
) -> Result<u64, R::Error> {
    if !policy.is_split(&id_of(stored)) {
        return Ok(match stored.get(policy.pattern.field.as_str()) {
            Some(Bson::Array(items)) => items.len() as u64,
            _ => 0,
        });
    }
    match Layout::of(&policy.pattern) {
        Layout::Outlier(outlier) => outlier.len(backend, stored),
        Layout::Subset(subset) => subset.len(backend, stored),
    }
}

/// Elements `skip..skip + limit` of `policy`'s logical array in a stored main document,
/// reading only the side documents that hold them.
///
/// # Errors
/// The backend's.
pub fn page<R: ReadBackend>(
    policy: &Policy,
    backend: &R,
    stored: &Document,
    skip: usize,
    limit: usize,
) -> Result<Vec<Bson>, R::Error> {
    if !policy.is_split(&id_of(stored)) {
        return Ok(match stored.get(policy.pattern.field.as_str()) {
            Some(Bson::Array(items)) => items.iter().skip(skip).take(limit).cloned().collect(),
            _ => Vec::new(),
        });
    }
    match Layout::of(&policy.pattern) {
        Layout::Outlier(outlier) => outlier.page(backend, stored, skip, limit),
        Layout::Subset(subset) => subset.page(backend, stored, skip, limit),
    }
}

/// The invariant problems of one main document and its side documents (in the policy's
/// order), as messages; empty when it is consistent.
pub fn check_document(policy: &Policy, stored: &Document, side: &[Document]) -> Vec<String> {
    match Layout::of(&policy.pattern) {
        Layout::Outlier(outlier) => outlier.check(stored, side),
        Layout::Subset(subset) => subset.check(stored, side),
    }
}
