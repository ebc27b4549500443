//! Policies: what the application declares, validated, with its defaults and its catalog
//! record.
//!
//! A [`Pattern`] names one array field of one collection and says how it is split:
//! [`OutlierPattern`] keeps the first `threshold` elements in the main document and the rest
//! in bounded buckets of an overflow collection; [`SubsetPattern`] keeps every element in an
//! archive collection and the top `keep` by a sort key in the main document. Defaults follow
//! the seeds (`extra_<collection>`, `has_extras`, `<field>_extra`, `reviews`), so that stored
//! documents look like theirs. This module must never read or write documents.

use bson::{Bson, Document, doc};
use spillway_doc::compare::compare;

use crate::error::PatternError;

/// The default outlier threshold: the seed's 50.
pub const DEFAULT_THRESHOLD: usize = 50;
/// The default number of elements per overflow bucket.
pub const DEFAULT_BUCKET_CAPACITY: usize = 100;
/// The default number of elements a subset keeps in the main document: the seed's 10.
pub const DEFAULT_KEEP: usize = 10;
/// The archive field that records insertion order when a subset has no sort key.
pub const SEQUENCE_FIELD: &str = "_seq";
/// The overflow bucket field that numbers a document's buckets from 0.
pub const BUCKET_FIELD: &str = "bucket";

/// A declared policy on one array field.
#[derive(Debug, Clone, PartialEq)]
pub struct Pattern {
    pub(crate) collection: String,
    pub(crate) field: String,
    pub(crate) side_collection: String,
    pub(crate) link_field: String,
    pub(crate) shape: Shape,
}

/// What kind of policy, with its own options.
#[derive(Debug, Clone, PartialEq)]
pub enum Shape {
    /// Keep the first `threshold` elements; the rest go to overflow buckets.
    Outlier {
        /// Elements kept in the main document.
        threshold: usize,
        /// The main document field that is `true` exactly when there are overflow elements.
        flag_field: String,
        /// The array field of overflow documents.
        overflow_field: String,
        /// Elements per overflow document; `None` keeps one unbounded document, as the seed.
        bucket_capacity: Option<usize>,
    },
    /// Keep every element in the archive; the top `keep` by `sort_by` in the main document.
    Subset {
        /// Elements kept in the main document.
        keep: usize,
        /// The order of the logical array (`None`: insertion order, newest first).
        sort_by: Option<Document>,
        /// The element field that identifies an element across edits (`None`: none).
        identity: Option<String>,
    },
}

/// The kind of a policy, for listing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PatternKind {
    /// [`Shape::Outlier`].
    Outlier,
    /// [`Shape::Subset`].
    Subset,
}

impl std::fmt::Display for PatternKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            PatternKind::Outlier => "outlier",
            PatternKind::Subset => "subset",
        })
    }
}

/// Builder of an outlier policy; see [`Pattern::outlier`].
#[derive(Debug, Clone, PartialEq)]
pub struct OutlierPattern {
    pattern: Pattern,
}

/// Builder of a subset policy; see [`Pattern::subset`].
#[derive(Debug, Clone, PartialEq)]
pub struct SubsetPattern {
    pattern: Pattern,
}

impl Pattern {
    /// An outlier policy on `collection.field` with the seed's defaults: threshold 50,
    /// overflow collection `extra_<collection>`, link field `<collection>_id`, flag
    /// `has_extras`, overflow field `<field>_extra`, buckets of 100 elements.
    pub fn outlier(collection: &str, field: &str) -> OutlierPattern {
        OutlierPattern {
            pattern: Pattern {
                collection: collection.to_string(),
                field: field.to_string(),
                side_collection: format!("extra_{collection}"),
                link_field: format!("{collection}_id"),
                shape: Shape::Outlier {
                    threshold: DEFAULT_THRESHOLD,
                    flag_field: "has_extras".to_string(),
                    overflow_field: format!("{field}_extra"),
                    bucket_capacity: Some(DEFAULT_BUCKET_CAPACITY),
                },
            },
        }
    }

    /// A subset policy on `collection.field` with the seed's defaults: keep 10, newest first
    /// by insertion, archive collection named like the field, link field `<collection>_id`.
    pub fn subset(collection: &str, field: &str) -> SubsetPattern {
        SubsetPattern {
            pattern: Pattern {
                collection: collection.to_string(),
                field: field.to_string(),
                side_collection: field.to_string(),
                link_field: format!("{collection}_id"),
                shape: Shape::Subset {
                    keep: DEFAULT_KEEP,
                    sort_by: None,
                    identity: None,
                },
            },
        }
    }

    /// The main collection.
    pub fn collection(&self) -> &str {
        &self.collection
    }

    /// The managed array field of main documents.
    pub fn field(&self) -> &str {
        &self.field
    }

    /// The overflow (outlier) or archive (subset) collection.
    pub fn side_collection(&self) -> &str {
        &self.side_collection
    }

    /// The side documents' field holding the main document's `_id`.
    pub fn link_field(&self) -> &str {
        &self.link_field
    }

    /// The policy's own options.
    pub fn shape(&self) -> &Shape {
        &self.shape
    }

    /// Outlier or subset.
    pub fn kind(&self) -> PatternKind {
        match self.shape {
            Shape::Outlier { .. } => PatternKind::Outlier,
            Shape::Subset { .. } => PatternKind::Subset,
        }
    }

    /// The main document field this policy owns besides the array: the outlier's flag.
    pub fn reserved_main_field(&self) -> Option<&str> {
        match &self.shape {
            Shape::Outlier { flag_field, .. } => Some(flag_field.as_str()),
            Shape::Subset { .. } => None,
        }
    }

    /// The sort that orders a subset's archive, ties broken by `_id` (newest first); for an
    /// outlier, the order of overflow buckets.
    pub fn side_order(&self) -> Document {
        match &self.shape {
            Shape::Outlier { .. } => doc! { BUCKET_FIELD: 1 },
            Shape::Subset { sort_by, .. } => {
                let mut order = sort_by
                    .clone()
                    .unwrap_or_else(|| doc! { SEQUENCE_FIELD: -1 });
                if !order.contains_key("_id") {
                    order.insert("_id", -1);
                }
                order
            }
        }
    }

    /// The index the side collection needs: link field, then the side order, so that one
    /// document's side documents are read in order from one index range.
    pub fn side_index(&self) -> Document {
        let mut keys = doc! { self.link_field.as_str(): 1 };
        keys.extend(self.side_order());
        keys
    }

    /// Checks the policy on its own (names, numbers); the facade checks it against the
    /// database (collections, other policies).
    ///
    /// # Errors
    /// [`PatternError::InvalidPolicy`] naming the option at fault.
    pub fn validate(&self) -> Result<(), PatternError> {
        let invalid = |message: String| {
            Err(PatternError::InvalidPolicy {
                collection: self.collection.clone(),
                field: self.field.clone(),
                message,
            })
        };
        check_field_name("array field", &self.field).or_else(invalid)?;
        check_field_name("link field", &self.link_field).or_else(invalid)?;
        if self.side_collection.is_empty()
            || self.side_collection.contains('$')
            || self.side_collection.contains('\0')
        {
            return invalid(format!(
                "the side collection name {:?} must be non-empty, without '$' or NUL",
                self.side_collection
            ));
        }
        if self.side_collection == self.collection {
            return invalid(format!(
                "the side collection cannot be the main collection '{}'",
                self.collection
            ));
        }
        match &self.shape {
            Shape::Outlier {
                threshold,
                flag_field,
                overflow_field,
                bucket_capacity,
            } => {
                if *threshold == 0 {
                    return invalid("the threshold must be at least 1".to_string());
                }
                if *bucket_capacity == Some(0) {
                    return invalid("the bucket capacity must be at least 1".to_string());
                }
                check_field_name("flag field", flag_field).or_else(invalid)?;
                check_field_name("overflow field", overflow_field).or_else(invalid)?;
                if flag_field == &self.field {
                    return invalid("the flag field cannot be the array field".to_string());
                }
                if overflow_field == &self.link_field || overflow_field == BUCKET_FIELD {
                    return invalid(format!(
                        "the overflow field '{overflow_field}' clashes with the link or bucket field"
                    ));
                }
                if self.link_field == BUCKET_FIELD {
                    return invalid(format!("the link field cannot be '{BUCKET_FIELD}'"));
                }
            }
            Shape::Subset {
                keep,
                sort_by,
                identity,
            } => {
                if *keep == 0 {
                    return invalid("keep must be at least 1".to_string());
                }
                if let Some(sort_by) = sort_by {
                    if sort_by.is_empty() {
                        return invalid("sort_by needs at least one field".to_string());
                    }
                    for (field, direction) in sort_by {
                        if !matches!(direction, Bson::Int32(1 | -1) | Bson::Int64(1 | -1)) {
                            return invalid(format!(
                                "sort_by field '{field}' must be 1 or -1, not {direction}"
                            ));
                        }
                        if field == &self.link_field {
                            return invalid(format!("sort_by cannot use the link field '{field}'"));
                        }
                    }
                }
                // `_id` is the one identity that may be `_id`: the element's own `_id` becomes
                // its archive document's (see `subset.rs`), as docs/patterns.md says.
                if let Some(identity) = identity.as_deref().filter(|name| *name != "_id") {
                    check_field_name("identity field", identity).or_else(invalid)?;
                }
            }
        }
        Ok(())
    }

    /// The options that declare this policy in `setPattern`'s syntax (the shell statement's
    /// argument and the `setPattern` command's fields), without the collection:
    /// `{ outlier: 'customers_purchased', threshold: 50, overflowCollection: ..., ... }`.
    /// [`Pattern::from_options`] reads it back.
    pub fn options(&self) -> Document {
        let count = |value: usize| match i32::try_from(value) {
            Ok(small) => Bson::Int32(small),
            Err(_) => Bson::Int64(i64::try_from(value).unwrap_or(i64::MAX)),
        };
        match &self.shape {
            Shape::Outlier {
                threshold,
                flag_field,
                overflow_field,
                bucket_capacity,
            } => {
                let mut options = doc! {
                    "outlier": &self.field,
                    "threshold": count(*threshold),
                    "overflowCollection": &self.side_collection,
                    "linkField": &self.link_field,
                    "flagField": flag_field,
                    "overflowField": overflow_field,
                };
                match bucket_capacity {
                    Some(capacity) => options.insert("bucketCapacity", count(*capacity)),
                    None => options.insert("unboundedBuckets", true),
                };
                options
            }
            Shape::Subset {
                keep,
                sort_by,
                identity,
            } => {
                let mut options = doc! { "subset": &self.field, "keep": count(*keep) };
                if let Some(sort_by) = sort_by {
                    options.insert("sortBy", sort_by.clone());
                }
                options.insert("archiveCollection", &self.side_collection);
                options.insert("linkField", &self.link_field);
                if let Some(identity) = identity {
                    options.insert("identity", identity);
                }
                options
            }
        }
    }

    /// The policy on `collection` that `options` declare, in `setPattern`'s syntax
    /// (`{ outlier: 'customers_purchased', threshold: 50, ... }` or `{ subset: 'reviews',
    /// keep: 10, sortBy: {...}, ... }`); options left out take their defaults, and `ignored`
    /// names fields of the enclosing document that are not options (a command's own name).
    ///
    /// # Errors
    /// [`PatternError::InvalidPolicy`] naming an unknown option, an option of the wrong type,
    /// or a policy that is neither or both kinds.
    pub fn from_options(
        collection: &str,
        options: &Document,
        ignored: &[&str],
    ) -> Result<Pattern, PatternError> {
        let field_of = |kind: &str| options.get_str(kind).map(str::to_string);
        let invalid = |field: &str, message: String| PatternError::InvalidPolicy {
            collection: collection.to_string(),
            field: field.to_string(),
            message,
        };
        let (kind, field) = match (field_of("outlier"), field_of("subset")) {
            (Ok(field), Err(_)) if !options.contains_key("subset") => ("outlier", field),
            (Err(_), Ok(field)) if !options.contains_key("outlier") => ("subset", field),
            _ => {
                return Err(invalid(
                    "",
                    "a policy needs either outlier: '<field>' or subset: '<field>' (a string), not both".into(),
                ));
            }
        };
        let known = if kind == "outlier" {
            OUTLIER_OPTIONS
        } else {
            SUBSET_OPTIONS
        };
        if let Some(unknown) = options
            .keys()
            .find(|key| !known.contains(&key.as_str()) && !ignored.contains(&key.as_str()))
        {
            return Err(invalid(
                &field,
                format!(
                    "unknown {kind} option '{unknown}' (known: {})",
                    known.join(", ")
                ),
            ));
        }
        let count = |name: &str| -> Result<Option<usize>, PatternError> {
            match options.get(name) {
                None => Ok(None),
                Some(Bson::Int32(value)) if *value >= 0 => Ok(Some(*value as usize)),
                Some(Bson::Int64(value)) if *value >= 0 => Ok(Some(*value as usize)),
                Some(Bson::Double(value)) if *value >= 0.0 && value.fract() == 0.0 => {
                    Ok(Some(*value as usize))
                }
                Some(other) => Err(invalid(
                    &field,
                    format!("{name} must be a non-negative whole number, not {other}"),
                )),
            }
        };
        let text = |name: &str| -> Result<Option<String>, PatternError> {
            match options.get(name) {
                None => Ok(None),
                Some(Bson::String(value)) => Ok(Some(value.clone())),
                Some(other) => Err(invalid(
                    &field,
                    format!("{name} must be a string, not {other}"),
                )),
            }
        };
        if kind == "outlier" {
            let mut pattern = Pattern::outlier(collection, &field);
            if let Some(threshold) = count("threshold")? {
                pattern = pattern.threshold(threshold);
            }
            if let Some(name) = text("overflowCollection")? {
                pattern = pattern.overflow_collection(&name);
            }
            if let Some(name) = text("linkField")? {
                pattern = pattern.link_field(&name);
            }
            if let Some(name) = text("flagField")? {
                pattern = pattern.flag_field(&name);
            }
            if let Some(name) = text("overflowField")? {
                pattern = pattern.overflow_field(&name);
            }
            let unbounded = match options.get("unboundedBuckets") {
                None => false,
                Some(Bson::Boolean(value)) => *value,
                Some(other) => {
                    return Err(invalid(
                        &field,
                        format!("unboundedBuckets must be a boolean, not {other}"),
                    ));
                }
            };
            match (count("bucketCapacity")?, unbounded) {
                (Some(_), true) => {
                    return Err(invalid(
                        &field,
                        "give either bucketCapacity or unboundedBuckets: true, not both".into(),
                    ));
                }
                (Some(capacity), false) => pattern = pattern.bucket_capacity(capacity),
                (None, true) => pattern = pattern.unbounded_buckets(),
                (None, false) => {}
            }
            Ok(pattern.into())
        } else {
            let mut pattern = Pattern::subset(collection, &field);
            if let Some(keep) = count("keep")? {
                pattern = pattern.keep(keep);
            }
            match options.get("sortBy") {
                None => {}
                Some(Bson::Document(sort)) => pattern = pattern.sort_by(sort.clone()),
                Some(other) => {
                    return Err(invalid(
                        &field,
                        format!("sortBy must be a document, not {other}"),
                    ));
                }
            }
            if let Some(name) = text("archiveCollection")? {
                pattern = pattern.archive_collection(&name);
            }
            if let Some(name) = text("linkField")? {
                pattern = pattern.link_field(&name);
            }
            if let Some(name) = text("identity")? {
                pattern = pattern.identity(&name);
            }
            Ok(pattern.into())
        }
    }

    /// The same policy over other collections: the main collection is stored as
    /// `collection` and the side collection as `side_collection` (a server keeps collection
    /// `c` of database `d` as `d.c`).
    #[must_use]
    pub fn on_collections(mut self, collection: &str, side_collection: &str) -> Pattern {
        self.collection = collection.to_string();
        self.side_collection = side_collection.to_string();
        self
    }

    /// The catalog record of this policy.
    pub fn to_document(&self) -> Document {
        let mut record = doc! {
            "kind": self.kind().to_string(),
            "collection": &self.collection,
            "field": &self.field,
            "side_collection": &self.side_collection,
            "link_field": &self.link_field,
        };
        match &self.shape {
            Shape::Outlier {
                threshold,
                flag_field,
                overflow_field,
                bucket_capacity,
            } => {
                record.insert("threshold", *threshold as i64);
                record.insert("flag_field", flag_field);
                record.insert("overflow_field", overflow_field);
                record.insert(
                    "bucket_capacity",
                    bucket_capacity.map_or(Bson::Null, |capacity| Bson::Int64(capacity as i64)),
                );
            }
            Shape::Subset {
                keep,
                sort_by,
                identity,
            } => {
                record.insert("keep", *keep as i64);
                record.insert(
                    "sort_by",
                    sort_by.clone().map_or(Bson::Null, Bson::Document),
                );
                record.insert(
                    "identity",
                    identity.clone().map_or(Bson::Null, Bson::String),
                );
            }
        }
        record
    }

    /// Reads a record written by [`Pattern::to_document`].
    ///
    /// # Errors
    /// [`PatternError::InvalidRecord`] when a field is missing or has the wrong type.
    pub fn from_document(record: &Document) -> Result<Pattern, PatternError> {
        let text = |name: &str| {
            record
                .get_str(name)
                .map(str::to_string)
                .map_err(|_| PatternError::InvalidRecord {
                    message: format!("policy record {record} has no string field '{name}'"),
                })
        };
        let number = |name: &str| match record.get(name) {
            Some(Bson::Int64(value)) => usize::try_from(*value).ok(),
            Some(Bson::Int32(value)) => usize::try_from(*value).ok(),
            _ => None,
        };
        let missing = |name: &str| PatternError::InvalidRecord {
            message: format!("policy record {record} has no count field '{name}'"),
        };
        let shape = match text("kind")?.as_str() {
            "outlier" => Shape::Outlier {
                threshold: number("threshold").ok_or_else(|| missing("threshold"))?,
                flag_field: text("flag_field")?,
                overflow_field: text("overflow_field")?,
                bucket_capacity: number("bucket_capacity"),
            },
            "subset" => Shape::Subset {
                keep: number("keep").ok_or_else(|| missing("keep"))?,
                sort_by: record.get_document("sort_by").ok().cloned(),
                identity: record.get_str("identity").ok().map(str::to_string),
            },
            other => {
                return Err(PatternError::InvalidRecord {
                    message: format!("unknown policy kind '{other}'"),
                });
            }
        };
        Ok(Pattern {
            collection: text("collection")?,
            field: text("field")?,
            side_collection: text("side_collection")?,
            link_field: text("link_field")?,
            shape,
        })
    }
}

fn check_field_name(role: &str, name: &str) -> Result<(), String> {
    if name.is_empty() || name.starts_with('$') || name.contains('.') || name.contains('\0') {
        return Err(format!(
            "the {role} {name:?} must be a top-level field name (non-empty, no '.', no leading '$')"
        ));
    }
    if name == "_id" {
        return Err(format!("the {role} cannot be _id"));
    }
    Ok(())
}

impl OutlierPattern {
    /// Elements kept in the main document (default 50).
    #[must_use]
    pub fn threshold(mut self, threshold: usize) -> Self {
        if let Shape::Outlier { threshold: t, .. } = &mut self.pattern.shape {
            *t = threshold;
        }
        self
    }

    /// The overflow collection (default `extra_<collection>`).
    #[must_use]
    pub fn overflow_collection(mut self, name: &str) -> Self {
        self.pattern.side_collection = name.to_string();
        self
    }

    /// The overflow documents' field holding the main document's `_id` (default
    /// `<collection>_id`).
    #[must_use]
    pub fn link_field(mut self, name: &str) -> Self {
        self.pattern.link_field = name.to_string();
        self
    }

    /// The main document field that flags overflow (default `has_extras`).
    #[must_use]
    pub fn flag_field(mut self, name: &str) -> Self {
        if let Shape::Outlier { flag_field, .. } = &mut self.pattern.shape {
            *flag_field = name.to_string();
        }
        self
    }

    /// The overflow documents' array field (default `<field>_extra`).
    #[must_use]
    pub fn overflow_field(mut self, name: &str) -> Self {
        if let Shape::Outlier { overflow_field, .. } = &mut self.pattern.shape {
            *overflow_field = name.to_string();
        }
        self
    }

    /// Elements per overflow document (default 100).
    #[must_use]
    pub fn bucket_capacity(mut self, capacity: usize) -> Self {
        if let Shape::Outlier {
            bucket_capacity, ..
        } = &mut self.pattern.shape
        {
            *bucket_capacity = Some(capacity);
        }
        self
    }

    /// One unbounded overflow document per main document: the seed's exact layout, at the
    /// cost of a side document that grows without bound.
    #[must_use]
    pub fn unbounded_buckets(mut self) -> Self {
        if let Shape::Outlier {
            bucket_capacity, ..
        } = &mut self.pattern.shape
        {
            *bucket_capacity = None;
        }
        self
    }
}

impl SubsetPattern {
    /// Elements kept in the main document (default 10).
    #[must_use]
    pub fn keep(mut self, keep: usize) -> Self {
        if let Shape::Subset { keep: k, .. } = &mut self.pattern.shape {
            *k = keep;
        }
        self
    }

    /// The order of the logical array, e.g. `{ published_date: -1 }` (default: insertion
    /// order, newest first). Ties are broken by the archive `_id`, newest first.
    #[must_use]
    pub fn sort_by(mut self, sort: Document) -> Self {
        if let Shape::Subset { sort_by, .. } = &mut self.pattern.shape {
            *sort_by = Some(sort);
        }
        self
    }

    /// The archive collection (default: the field's name).
    #[must_use]
    pub fn archive_collection(mut self, name: &str) -> Self {
        self.pattern.side_collection = name.to_string();
        self
    }

    /// The archive documents' field holding the main document's `_id` (default
    /// `<collection>_id`).
    #[must_use]
    pub fn link_field(mut self, name: &str) -> Self {
        self.pattern.link_field = name.to_string();
        self
    }

    /// The element field that identifies an element across edits, e.g. `review_id`; with
    /// `"_id"` the element's `_id` becomes its archive `_id` (generated when missing).
    #[must_use]
    pub fn identity(mut self, field: &str) -> Self {
        if let Shape::Subset { identity, .. } = &mut self.pattern.shape {
            *identity = Some(field.to_string());
        }
        self
    }
}

impl From<OutlierPattern> for Pattern {
    fn from(builder: OutlierPattern) -> Pattern {
        builder.pattern
    }
}

impl From<SubsetPattern> for Pattern {
    fn from(builder: SubsetPattern) -> Pattern {
        builder.pattern
    }
}

/// The options of `setPattern` for an outlier policy ([`Pattern::options`] writes them,
/// [`Pattern::from_options`] reads them).
pub const OUTLIER_OPTIONS: &[&str] = &[
    "outlier",
    "threshold",
    "overflowCollection",
    "linkField",
    "flagField",
    "overflowField",
    "bucketCapacity",
    "unboundedBuckets",
];

/// The options of `setPattern` for a subset policy.
pub const SUBSET_OPTIONS: &[&str] = &[
    "subset",
    "keep",
    "sortBy",
    "archiveCollection",
    "linkField",
    "identity",
];

/// A policy with its migration progress, as the catalog stores it.
#[derive(Debug, Clone, PartialEq)]
pub struct Policy {
    /// What was declared.
    pub pattern: Pattern,
    /// Whether the collection's documents are in the policy's layout yet.
    pub progress: Progress,
    /// Whether declaring the policy created its side collection. Removing the policy drops
    /// only a side collection it created (and only once it is empty); an adopted one stays.
    pub created_side: bool,
}

/// Where a policy's migration stands. Migrations go in `_id` order, in batches, each batch
/// one atomic write; `through` is the last `_id` done.
#[derive(Debug, Clone, PartialEq)]
pub enum Progress {
    /// Every document is in the policy's layout.
    Active,
    /// Being applied to an existing collection: documents up to `through` are split.
    Applying {
        /// The last `_id` migrated, if any.
        through: Option<Bson>,
    },
    /// Being removed: documents up to `through` are folded back into their main document.
    Removing {
        /// The last `_id` folded back, if any.
        through: Option<Bson>,
    },
}

impl Policy {
    /// An active policy (whose side collection it did not create).
    pub fn active(pattern: Pattern) -> Policy {
        Policy {
            pattern,
            progress: Progress::Active,
            created_side: false,
        }
    }

    /// Whether the main document with `_id` `id` is stored in the policy's layout.
    pub fn is_split(&self, id: &Bson) -> bool {
        let done = |through: &Option<Bson>| {
            through
                .as_ref()
                .is_some_and(|through| compare(id, through).is_le())
        };
        match &self.progress {
            Progress::Active => true,
            Progress::Applying { through } => done(through),
            Progress::Removing { through } => !done(through),
        }
    }
}
