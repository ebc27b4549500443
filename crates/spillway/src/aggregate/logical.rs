//! What a pipeline reads of a collection with pattern policies, and how to give it that
//! without expanding more than it needs.
//!
//! A pipeline sees logical documents. Expanding one reads all its buckets (outlier) or its
//! archive (subset); [`LogicalInput::plan`] avoids it in three cases, checked on the stages
//! as written:
//!
//! - **Not read**: the pipeline never reads a managed array (nor a policy's flag) and never
//!   passes whole documents on: the stored document has the same values everywhere it looks.
//! - **Derived**: the first stage reads a managed array `f` only as `{$size: "$f"}`,
//!   `{$slice: ["$f", n]}`, `{$slice: ["$f", p, n]}`, `{$arrayElemAt: ["$f", i]}`,
//!   `{$first: "$f"}` or `{$last: "$f"}` with constant numbers. Each such expression is
//!   rewritten to read a field the input document is given, computed from the policy's
//!   layout: the logical length (the main array and the last bucket), or the page it needs
//!   (only the buckets it touches). The field's name appears nowhere else in the pipeline, so
//!   nothing else can read it. Where the stored value is not an array, the rewritten
//!   expression applies the original operator to it, with MongoDB's result or error.
//! - **Unwound**: the first stage is `$unwind` of a managed array. Each logical document is
//!   given in chunks (copies whose array is one page of the logical array), which `$unwind`
//!   turns into the same documents in the same order; an `includeArrayIndex` field is shifted
//!   by the chunk's offset. Memory holds one page, not the array.
//!
//! Otherwise each document is expanded whole. This module must never change what a pipeline
//! computes, only what it reads: the property test `tests/aggregate_patterns.rs` runs
//! pipelines with and without policies and compares.

use bson::{Bson, Document, doc};

use super::single_stage;
use crate::error::Result;
use crate::patterned;
use crate::route::Route;
use crate::txn::Reader;

/// How many elements of a managed array an unwound chunk holds.
const UNWIND_CHUNK: usize = 1000;

/// How the input documents of a pipeline on a collection with policies are made.
#[derive(Debug, Clone, Default)]
pub(crate) struct LogicalInput {
    /// Each document is expanded whole.
    pub(crate) expand: bool,
    /// Values computed from the layout, each under its own field of the input document.
    derived: Vec<Derived>,
    /// The first stage unwinds this managed array: documents come in chunks.
    unwind: Option<Unwind>,
}

#[derive(Debug, Clone)]
struct Derived {
    /// The managed array.
    field: String,
    /// The field of the input document that holds `{array: bool, value: ...}`.
    name: String,
    kind: DerivedKind,
}

#[derive(Debug, Clone, Copy)]
enum DerivedKind {
    Size,
    /// `$slice` with a start (negative: from the end) and a count, or only a count
    /// (negative: the last ones).
    Slice {
        position: Option<i64>,
        count: i64,
    },
    /// `$arrayElemAt` (negative: from the end); `$first` is 0, `$last` is -1.
    Element(i64),
}

#[derive(Debug, Clone)]
struct Unwind {
    field: String,
    /// The field that gets the offset of a chunk, when `includeArrayIndex` is asked for.
    offset_name: Option<String>,
}

impl LogicalInput {
    /// Plans the input of `stages` (the pipeline after the planner's prefix, its write stage
    /// included) on `collection`, and rewrites `stages` where a derived value or chunked
    /// unwinding replaces an expansion. `dependencies` gives the fields a pipeline reads
    /// (and whether it passes whole documents on).
    pub(crate) fn plan(
        reader: &dyn Reader,
        collection: &str,
        stages: &mut Vec<Document>,
        dependencies: &dyn Fn(&[Document]) -> Result<spillway_doc::expr::Dependencies>,
    ) -> Result<LogicalInput> {
        let catalog = reader.catalog();
        if !catalog.has_policies(collection) {
            return Ok(LogicalInput::default());
        }
        let policy_path = |path: &str| {
            Route::of(catalog, collection).is_managed_path(path)
                || patterned::is_reserved_path(catalog, collection, path)
        };
        let reads_policy_fields = |stages: &[Document]| -> Result<bool> {
            let found = dependencies(stages)?;
            Ok(found.whole_document || found.paths.iter().any(|path| policy_path(path)))
        };
        if !reads_policy_fields(stages)? {
            return Ok(LogicalInput::default());
        }
        let policies = patterned::managed_fields(catalog, collection);
        let mut names = SyntheticNames::new(stages);
        // Unwinding a managed array, when nothing after it reads another policy's fields.
        if let Some(unwind) = unwound_field(stages.first(), &policies) {
            let other_policy_path = |path: &str| {
                let head = path.split('.').next().unwrap_or(path);
                head != unwind.field && policy_path(path)
            };
            let found = dependencies(&stages[1..])?;
            let single = policies.len() == 1;
            let reads_other = (found.whole_document && !single)
                || found.paths.iter().any(|path| other_policy_path(path));
            if !reads_other {
                let offset_name = unwind.index_field.as_ref().map(|_| names.next());
                if let (Some(index_field), Some(offset)) = (&unwind.index_field, &offset_name) {
                    stages.insert(
                        1,
                        doc! { "$set": { index_field: { "$add": [format!("${index_field}"), format!("${offset}")] } } },
                    );
                    stages.insert(2, doc! { "$unset": offset });
                }
                return Ok(LogicalInput {
                    expand: false,
                    derived: Vec::new(),
                    unwind: Some(Unwind {
                        field: unwind.field,
                        offset_name,
                    }),
                });
            }
        }
        // Derived values in the first stage.
        let mut derived = Vec::new();
        if let Some(first) = stages.first()
            && let Some((name, argument)) = single_stage(first)
            && REWRITTEN_STAGES.contains(&name)
        {
            let mut rewritten = argument.clone();
            rewrite(&mut rewritten, &policies, &mut names, &mut derived);
            if !derived.is_empty() {
                let mut candidate = stages.clone();
                candidate[0] = doc! { name: rewritten };
                if !reads_policy_fields(&candidate)? {
                    *stages = candidate;
                    return Ok(LogicalInput {
                        expand: false,
                        derived,
                        unwind: None,
                    });
                }
            }
        }
        Ok(LogicalInput {
            expand: true,
            derived: Vec::new(),
            unwind: None,
        })
    }

    /// How input documents are made, for `explain`.
    pub(crate) fn describe(&self) -> String {
        if self.expand {
            return "logical documents, expanded whole".to_string();
        }
        if let Some(unwind) = &self.unwind {
            return format!(
                "logical documents, '{}' unwound from chunks of {UNWIND_CHUNK} elements read a page at a time",
                unwind.field
            );
        }
        if self.derived.is_empty() {
            return "stored documents (the pipeline reads no managed array)".to_string();
        }
        let fields: Vec<&str> = self
            .derived
            .iter()
            .map(|derived| derived.field.as_str())
            .collect();
        format!(
            "stored documents, with sizes and pages of {} read without expanding",
            fields.join(", ")
        )
    }

    /// Whether input documents are made from stored ones at all (else they are used as
    /// stored).
    pub(crate) fn transforms(&self) -> bool {
        self.expand || !self.derived.is_empty() || self.unwind.is_some()
    }

    /// The input documents made from one stored document of `collection`, in order.
    pub(crate) fn documents(
        &self,
        reader: &dyn Reader,
        collection: &str,
        stored: Document,
    ) -> Result<Chunks> {
        if self.expand {
            return Ok(Chunks::one(patterned::expand(reader, collection, &stored)?));
        }
        if let Some(unwind) = &self.unwind {
            return Chunks::unwound(reader, collection, unwind, stored);
        }
        let mut document = stored.clone();
        for derived in &self.derived {
            let value = derived.compute(reader, collection, &stored)?;
            document.insert(derived.name.clone(), value);
        }
        Ok(Chunks::one(document))
    }
}

/// The input documents made from one stored document: one, or the chunks of an unwound
/// managed array, read a page at a time.
pub(crate) struct Chunks {
    single: Option<Document>,
    unwinding: Option<Unwinding>,
}

struct Unwinding {
    /// The document without the policies' flags; its array is replaced by each page.
    base: Document,
    stored: Document,
    field: String,
    offset_name: Option<String>,
    length: usize,
    next: usize,
}

impl Chunks {
    fn one(document: Document) -> Chunks {
        Chunks {
            single: Some(document),
            unwinding: None,
        }
    }

    fn unwound(
        reader: &dyn Reader,
        collection: &str,
        unwind: &Unwind,
        stored: Document,
    ) -> Result<Chunks> {
        let mut base = stored.clone();
        patterned::remove_reserved_fields(reader.catalog(), collection, &mut base);
        // Not an array (missing, null, a scalar): the document as it is, for `$unwind`.
        let Some(Bson::Array(_)) = stored.get(&unwind.field) else {
            if let Some(offset) = &unwind.offset_name {
                base.insert(offset.clone(), 0_i64);
            }
            return Ok(Chunks::one(base));
        };
        let length = patterned::array_len(reader, collection, &unwind.field, &stored)? as usize;
        if length == 0 {
            if let Some(offset) = &unwind.offset_name {
                base.insert(offset.clone(), 0_i64);
            }
            return Ok(Chunks::one(base));
        }
        Ok(Chunks {
            single: None,
            unwinding: Some(Unwinding {
                base,
                stored,
                field: unwind.field.clone(),
                offset_name: unwind.offset_name.clone(),
                length,
                next: 0,
            }),
        })
    }

    /// The next input document, reading the next page of an unwound array when needed.
    pub(crate) fn next(
        &mut self,
        reader: &dyn Reader,
        collection: &str,
    ) -> Result<Option<Document>> {
        if let Some(document) = self.single.take() {
            return Ok(Some(document));
        }
        let Some(unwinding) = &mut self.unwinding else {
            return Ok(None);
        };
        if unwinding.next >= unwinding.length {
            return Ok(None);
        }
        let offset = unwinding.next;
        let page = patterned::array_page(
            reader,
            collection,
            &unwinding.field,
            &unwinding.stored,
            offset,
            UNWIND_CHUNK,
        )?;
        if page.is_empty() {
            unwinding.next = unwinding.length;
            return Ok(None);
        }
        unwinding.next += page.len();
        let mut chunk = unwinding.base.clone();
        chunk.insert(unwinding.field.clone(), Bson::Array(page));
        if let Some(name) = &unwinding.offset_name {
            chunk.insert(name.clone(), offset as i64);
        }
        Ok(Some(chunk))
    }
}

impl Derived {
    /// `{array: true, value}` with the derived value (missing for an element out of range),
    /// or `{array: false, value}` with the stored value where it is not an array.
    fn compute(&self, reader: &dyn Reader, collection: &str, stored: &Document) -> Result<Bson> {
        let Some(Bson::Array(_)) = stored.get(&self.field) else {
            let mut holder = doc! { "array": false };
            if let Some(value) = stored.get(&self.field) {
                holder.insert("value", value.clone());
            }
            return Ok(Bson::Document(holder));
        };
        let length = || -> Result<i64> {
            Ok(patterned::array_len(reader, collection, &self.field, stored)? as i64)
        };
        let page = |start: i64, count: i64| -> Result<Vec<Bson>> {
            if count <= 0 {
                return Ok(Vec::new());
            }
            patterned::array_page(
                reader,
                collection,
                &self.field,
                stored,
                start.max(0) as usize,
                count as usize,
            )
        };
        let value = match self.kind {
            DerivedKind::Size => Some(Bson::Int32(length()? as i32)),
            DerivedKind::Slice {
                position: None,
                count,
            } if count >= 0 => Some(Bson::Array(page(0, count)?)),
            DerivedKind::Slice {
                position: None,
                count,
            } => {
                let length = length()?;
                let start = (length + count).max(0);
                Some(Bson::Array(page(start, length - start)?))
            }
            DerivedKind::Slice {
                position: Some(position),
                count,
            } => {
                let start = if position < 0 {
                    (length()? + position).max(0)
                } else {
                    position
                };
                Some(Bson::Array(page(start, count)?))
            }
            DerivedKind::Element(index) => {
                let start = if index < 0 { length()? + index } else { index };
                if start < 0 {
                    None
                } else {
                    page(start, 1)?.into_iter().next()
                }
            }
        };
        let mut holder = doc! { "array": true };
        if let Some(value) = value {
            holder.insert("value", value);
        }
        Ok(Bson::Document(holder))
    }

    /// The expression that replaces the original one: the derived value for an array, the
    /// original operator applied to the stored value otherwise.
    fn expression(&self, original: &str, arguments: &[Bson]) -> Bson {
        let value = format!("${}.value", self.name);
        let mut fallback_arguments = arguments.to_vec();
        fallback_arguments[0] = Bson::String(value.clone());
        let fallback = doc! { original: fallback_arguments };
        bson::bson!({ "$cond": [format!("${}.array", self.name), value, fallback] })
    }
}

/// The stages whose expressions may be rewritten to read derived values: those that read
/// expressions of their input document and pass nothing else on.
const REWRITTEN_STAGES: &[&str] = &[
    "$project",
    "$group",
    "$replaceRoot",
    "$replaceWith",
    "$bucket",
    "$sortByCount",
];

/// Rewrites, inside `value`, each expression on a managed array that a derived value can
/// answer, recording what the input document must hold.
fn rewrite(
    value: &mut Bson,
    policies: &[String],
    names: &mut SyntheticNames,
    derived: &mut Vec<Derived>,
) {
    match value {
        Bson::Document(document) => {
            if let Some((operator, argument)) = single_stage(document) {
                if operator == "$literal" {
                    return;
                }
                if let Some((field, kind, arguments)) = derivable(operator, argument, policies) {
                    let name = names.next();
                    let entry = Derived { field, name, kind };
                    *value = entry.expression(operator, &arguments);
                    derived.push(entry);
                    return;
                }
            }
            for (_, child) in document.iter_mut() {
                rewrite(child, policies, names, derived);
            }
        }
        Bson::Array(items) => {
            for item in items {
                rewrite(item, policies, names, derived);
            }
        }
        _ => {}
    }
}

/// The managed array, the derived kind and the argument list, if `{operator: argument}` is
/// one of the forms a derived value answers.
fn derivable(
    operator: &str,
    argument: &Bson,
    policies: &[String],
) -> Option<(String, DerivedKind, Vec<Bson>)> {
    let arguments: Vec<Bson> = match argument {
        Bson::Array(items) => items.clone(),
        single => vec![single.clone()],
    };
    let field = match arguments.first() {
        Some(Bson::String(path)) => path.strip_prefix('$')?,
        _ => return None,
    };
    if field.starts_with('$') || !policies.iter().any(|managed| managed == field) {
        return None;
    }
    let integer = |index: usize| match arguments.get(index) {
        Some(Bson::Int32(n)) => Some(i64::from(*n)),
        Some(Bson::Int64(n)) => Some(*n),
        _ => None,
    };
    let kind = match (operator, arguments.len()) {
        ("$size", 1) => DerivedKind::Size,
        ("$first", 1) => DerivedKind::Element(0),
        ("$last", 1) => DerivedKind::Element(-1),
        ("$arrayElemAt", 2) => DerivedKind::Element(integer(1)?),
        ("$slice", 2) => DerivedKind::Slice {
            position: None,
            count: integer(1)?,
        },
        // A count that is not positive is an error MongoDB reports: leave it to the operator.
        ("$slice", 3) if integer(2)? > 0 => DerivedKind::Slice {
            position: Some(integer(1)?),
            count: integer(2)?,
        },
        _ => return None,
    };
    Some((field.to_string(), kind, arguments))
}

/// `$unwind` of a managed array, as the first stage.
struct UnwoundField {
    field: String,
    index_field: Option<String>,
}

fn unwound_field(stage: Option<&Document>, policies: &[String]) -> Option<UnwoundField> {
    let (name, argument) = single_stage(stage?)?;
    if name != "$unwind" {
        return None;
    }
    let (path, index_field) = match argument {
        Bson::String(path) => (path.as_str(), None),
        Bson::Document(options) => (
            options.get_str("path").ok()?,
            options
                .get_str("includeArrayIndex")
                .ok()
                .map(str::to_string),
        ),
        _ => return None,
    };
    let field = path.strip_prefix('$')?;
    policies
        .iter()
        .any(|managed| managed == field)
        .then(|| UnwoundField {
            field: field.to_string(),
            index_field,
        })
}

/// Field names that appear nowhere in a pipeline's text.
struct SyntheticNames {
    text: String,
    counter: usize,
}

impl SyntheticNames {
    fn new(stages: &[Document]) -> SyntheticNames {
        SyntheticNames {
            text: stages.iter().map(ToString::to_string).collect(),
            counter: 0,
        }
    }

    fn next(&mut self) -> String {
        loop {
            let name = format!("__spillway_{}", self.counter);
            self.counter += 1;
            if !self.text.contains(&name) {
                return name;
            }
        }
    }
}
