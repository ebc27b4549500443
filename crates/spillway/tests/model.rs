//! Model-based property test of the facade: random sequences of writes, index changes and
//! reopens run against an on-disk [`Database`] and against `spillway_doc::model::MemoryCollection`
//! (the reference semantics), which must agree after every step.
//!
//! Compared after each step: the operation's result (ids, matched / modified / deleted
//! counts, upserted id) or its error's kind; the whole collection in `_id` order; the index
//! names; and the answers to a few random queries (find with filters over indexed and
//! unindexed fields, sort + skip + limit, count_documents, distinct).
//!
//! The model has no indexes, so [`Reference`] adds what they change for writes: a unique index
//! refuses a write that would give two documents the same key (missing fields count as
//! `null`, arrays count element by element, an empty array as `undefined`), and the index
//! list follows `create_index` / `drop_index`'s rules. The model keeps insertion order; the
//! facade's natural order is `_id` order (ARCHITECTURE.md), so the reference re-sorts its
//! documents by `_id` after every write, and single-document writes pick the same document
//! on both sides.
//!
//! Values stay in a small domain (a few ids, ints and strings) so that filters match, writes
//! collide, and unique indexes refuse. Arrays appear only in `tags` and `n.d`, so that no
//! compound index sees parallel arrays. `PROPTEST_CASES` overrides the number of cases.

use bson::{Bson, Document, doc};
use proptest::prelude::*;
use spillway::{Database, DatabaseOptions, Durability, Error, ErrorKind, IndexModel, IndexOptions};
use spillway_doc::DocError;
use spillway_doc::compare::{compare, values_equal};
use spillway_doc::model::{
    FindOneAndOptions, FindOptions, MemoryCollection, ModelError, ReturnDocument, UpdateOptions,
};

const COLLECTION: &str = "things";
const DEFAULT_CASES: u32 = 256;

// ---------------------------------------------------------------------------------------
// Operations and queries

#[derive(Debug, Clone)]
enum Op {
    InsertOne(Document),
    InsertMany {
        documents: Vec<Document>,
        ordered: bool,
    },
    Update {
        filter: Document,
        update: Document,
        multi: bool,
        upsert: bool,
    },
    Replace {
        filter: Document,
        replacement: Document,
        upsert: bool,
    },
    Delete {
        filter: Document,
        multi: bool,
    },
    FindOneAndUpdate {
        filter: Document,
        update: Document,
        sort: Option<Document>,
        upsert: bool,
        return_after: bool,
    },
    FindOneAndDelete {
        filter: Document,
        sort: Option<Document>,
    },
    CreateIndex {
        keys: Document,
        unique: bool,
        name: Option<String>,
    },
    DropIndex(String),
    Reopen,
}

#[derive(Debug, Clone)]
enum Query {
    /// Unsorted: compared as sets (the order is the plan's, as in MongoDB).
    Find(Document),
    /// Sorted (with `_id` breaking ties), skipped and limited: compared in order.
    FindSorted {
        filter: Document,
        sort: Document,
        skip: u64,
        limit: i64,
    },
    Count {
        filter: Document,
        skip: u64,
        limit: u64,
    },
    Distinct {
        field: &'static str,
        filter: Document,
    },
}

/// What an operation produced, comparable across the two sides.
#[derive(Debug, Clone, PartialEq)]
enum Outcome {
    Inserted(Bson),
    InsertedMany {
        ids: Vec<(usize, Bson)>,
        failure: Option<(usize, Kind)>,
    },
    Updated {
        matched: u64,
        modified: u64,
        upserted: Option<Bson>,
    },
    Deleted(u64),
    Returned(Option<Document>),
    IndexCreated(String),
    Done,
    Failed(Kind),
}

/// The kind of an error, as both sides can report it.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Kind {
    Filter,
    Update,
    Document,
    Duplicate,
    InvalidIndex,
    IndexNotFound,
}

fn facade_kind(error: &Error) -> Kind {
    match error.kind() {
        ErrorKind::InvalidFilter(_) => Kind::Filter,
        ErrorKind::InvalidUpdate(_) => Kind::Update,
        ErrorKind::InvalidDocument(_) | ErrorKind::DocumentTooLarge { .. } => Kind::Document,
        ErrorKind::DuplicateKey { .. } => Kind::Duplicate,
        ErrorKind::InvalidIndex { .. } => Kind::InvalidIndex,
        ErrorKind::IndexNotFound { .. } => Kind::IndexNotFound,
        other => panic!("the facade failed in a way the model cannot: {other:?} ({error})"),
    }
}

fn model_kind(error: &ModelError) -> Kind {
    match error {
        ModelError::Doc(DocError::InvalidFilter { .. }) => Kind::Filter,
        ModelError::Doc(DocError::DocumentTooLarge { .. } | DocError::NestingTooDeep { .. })
        | ModelError::InvalidId(_) => Kind::Document,
        ModelError::DuplicateId(_) => Kind::Duplicate,
        ModelError::Doc(_) | ModelError::WrongUpdateKind(_) => Kind::Update,
        other => panic!("the model failed in an unexpected way: {other:?}"),
    }
}

// ---------------------------------------------------------------------------------------
// Generators: a small domain so that filters match and writes collide

/// A number of one of the three numeric types: equal values of different types must meet in
/// filters, indexes and unique keys.
fn number(values: std::ops::Range<i32>) -> impl Strategy<Value = Bson> {
    prop_oneof![
        4 => values.clone().prop_map(Bson::Int32),
        1 => values.clone().prop_map(|value| Bson::Int64(i64::from(value))),
        1 => values.prop_map(|value| Bson::Double(f64::from(value))),
    ]
}

fn scalar() -> impl Strategy<Value = Bson> {
    prop_oneof![
        4 => number(0..4),
        1 => Just(Bson::String("x".into())),
        1 => Just(Bson::String("y".into())),
        1 => Just(Bson::Null),
    ]
}

fn element() -> impl Strategy<Value = Bson> {
    prop_oneof![
        3 => number(0..3),
        1 => Just(Bson::String("x".into())),
    ]
}

fn array() -> impl Strategy<Value = Bson> {
    prop::collection::vec(element(), 0..4).prop_map(Bson::Array)
}

fn id() -> impl Strategy<Value = Bson> {
    number(0..10)
}

/// A document without `_id`: the fields `a`, `b` (scalars), `tags` (an array) and `n`
/// (`{ c: scalar, d: array }`), each possibly missing.
fn body() -> BoxedStrategy<Document> {
    (
        prop::option::weighted(0.8, scalar()),
        prop::option::weighted(0.6, scalar()),
        prop::option::weighted(0.6, array()),
        prop::option::weighted(0.4, (scalar(), array())),
    )
        .prop_map(|(a, b, tags, n)| {
            let mut document = Document::new();
            if let Some(a) = a {
                document.insert("a", a);
            }
            if let Some(b) = b {
                document.insert("b", b);
            }
            if let Some(tags) = tags {
                document.insert("tags", tags);
            }
            if let Some((c, d)) = n {
                document.insert("n", doc! { "c": c, "d": d });
            }
            document
        })
        .boxed()
}

fn document() -> BoxedStrategy<Document> {
    (id(), body())
        .prop_map(|(id, body)| {
            let mut document = doc! { "_id": id };
            document.extend(body);
            document
        })
        .boxed()
}

/// One condition on one field.
fn condition() -> BoxedStrategy<Document> {
    let scalar_field = prop::sample::select(vec!["a", "b", "n.c", "_id"]);
    let array_field = prop::sample::select(vec!["tags", "n.d"]);
    prop_oneof![
        (scalar_field.clone(), scalar()).prop_map(|(field, value)| doc! { field: value }),
        (scalar_field.clone(), 0..4i32).prop_map(|(field, value)| doc! { field: { "$gt": value } }),
        (scalar_field.clone(), 0..4i32)
            .prop_map(|(field, value)| doc! { field: { "$lte": value } }),
        (scalar_field.clone(), prop::collection::vec(scalar(), 1..3))
            .prop_map(|(field, values)| doc! { field: { "$in": values } }),
        (scalar_field.clone(), any::<bool>())
            .prop_map(|(field, exists)| doc! { field: { "$exists": exists } }),
        (scalar_field, scalar()).prop_map(|(field, value)| doc! { field: { "$ne": value } }),
        (array_field.clone(), element()).prop_map(|(field, value)| doc! { field: value }),
        (array_field.clone(), 0..3usize)
            .prop_map(|(field, size)| doc! { field: { "$size": size as i32 } }),
        (array_field, 0..3i32)
            .prop_map(|(field, value)| doc! { field: { "$elemMatch": { "$gte": value } } }),
    ]
    .boxed()
}

fn filter() -> BoxedStrategy<Document> {
    prop_oneof![
        1 => Just(doc! {}),
        5 => condition(),
        2 => (condition(), condition()).prop_map(|(left, right)| doc! { "$or": [left, right] }),
        2 => (condition(), condition()).prop_map(|(left, right)| doc! { "$and": [left, right] }),
    ]
    .boxed()
}

/// An upsert's filter: `_id` equality (so both sides insert the same `_id`) and maybe an
/// equality on a scalar field.
fn upsert_filter() -> BoxedStrategy<Document> {
    (
        id(),
        prop::option::of((prop::sample::select(vec!["a", "b"]), scalar())),
    )
        .prop_map(|(id, field)| {
            let mut filter = doc! { "_id": id };
            if let Some((field, value)) = field {
                filter.insert(field, value);
            }
            filter
        })
        .boxed()
}

/// One `(operator, field, argument)` clause of an update.
fn clause() -> BoxedStrategy<(&'static str, &'static str, Bson)> {
    let scalar_field = prop::sample::select(vec!["a", "b", "n.c"]);
    let array_field = prop::sample::select(vec!["tags", "n.d"]);
    let small = prop_oneof![
        4 => number(-2..4),
        1 => Just(Bson::Double(0.5)),
    ];
    prop_oneof![
        (scalar_field.clone(), scalar()).prop_map(|(field, value)| ("$set", field, value)),
        array_field
            .clone()
            .prop_flat_map(|field| array().prop_map(move |value| ("$set", field, value))),
        prop::sample::select(vec!["a", "b", "tags", "n", "n.c"]).prop_map(|field| (
            "$unset",
            field,
            Bson::String(String::new())
        )),
        (scalar_field.clone(), small.clone()).prop_map(|(field, value)| ("$inc", field, value)),
        (scalar_field.clone(), small.clone()).prop_map(|(field, value)| ("$mul", field, value)),
        (scalar_field.clone(), small.clone()).prop_map(|(field, value)| ("$min", field, value)),
        (scalar_field, small).prop_map(|(field, value)| ("$max", field, value)),
        prop::sample::select(vec![("a", "z"), ("b", "a"), ("a", "b")]).prop_map(|(from, to)| (
            "$rename",
            from,
            Bson::String(to.into())
        )),
        (array_field.clone(), element()).prop_map(|(field, value)| ("$push", field, value)),
        (
            array_field.clone(),
            prop::collection::vec(element(), 0..3),
            prop::option::of(0..2i32),
            prop::option::of(-2..3i32),
            prop::option::of(prop::sample::select(vec![1, -1])),
        )
            .prop_map(|(field, each, position, slice, sort)| {
                let mut modifiers = doc! { "$each": each };
                if let Some(position) = position {
                    modifiers.insert("$position", position);
                }
                if let Some(slice) = slice {
                    modifiers.insert("$slice", slice);
                }
                if let Some(sort) = sort {
                    modifiers.insert("$sort", sort);
                }
                ("$push", field, Bson::Document(modifiers))
            }),
        (array_field.clone(), element()).prop_map(|(field, value)| ("$addToSet", field, value)),
        (array_field.clone(), prop::collection::vec(element(), 0..3)).prop_map(|(field, each)| (
            "$addToSet",
            field,
            Bson::Document(doc! { "$each": each })
        )),
        (array_field.clone(), element()).prop_map(|(field, value)| ("$pull", field, value)),
        (array_field.clone(), 0..3i32).prop_map(|(field, value)| {
            ("$pull", field, Bson::Document(doc! { "$gte": value }))
        }),
        (array_field.clone(), prop::collection::vec(element(), 0..3))
            .prop_map(|(field, values)| ("$pullAll", field, Bson::Array(values))),
        (array_field, prop::sample::select(vec![1, -1])).prop_map(|(field, end)| (
            "$pop",
            field,
            Bson::Int32(end)
        )),
    ]
    .boxed()
}

/// An update with one to three clauses, grouped by operator (a later clause on the same
/// operator and field wins; clauses on overlapping paths make the update invalid on both
/// sides).
fn update() -> BoxedStrategy<Document> {
    prop::collection::vec(clause(), 1..4)
        .prop_map(|clauses| {
            let mut update = Document::new();
            for (operator, field, argument) in clauses {
                let fields = update
                    .entry(operator.to_string())
                    .or_insert_with(|| Bson::Document(Document::new()));
                if let Bson::Document(fields) = fields {
                    fields.insert(field, argument);
                }
            }
            update
        })
        .boxed()
}

/// The index key patterns the test creates: single, compound, multikey, descending, dotted;
/// never two array fields in one pattern.
fn index_keys() -> impl Strategy<Value = Document> {
    prop::sample::select(vec![
        doc! { "a": 1 },
        doc! { "b": -1 },
        doc! { "tags": 1 },
        doc! { "n.c": 1 },
        doc! { "n.d": -1 },
        doc! { "a": 1, "b": 1 },
        doc! { "b": 1, "tags": -1 },
        doc! { "a": -1, "n.c": 1 },
    ])
}

fn op() -> BoxedStrategy<Op> {
    prop_oneof![
        4 => document().prop_map(Op::InsertOne),
        2 => (prop::collection::vec(document(), 1..4), any::<bool>())
            .prop_map(|(documents, ordered)| Op::InsertMany { documents, ordered }),
        5 => (filter(), update(), any::<bool>()).prop_map(|(filter, update, multi)| Op::Update {
            filter,
            update,
            multi,
            upsert: false,
        }),
        2 => (upsert_filter(), update(), any::<bool>()).prop_map(|(filter, update, multi)| {
            Op::Update { filter, update, multi, upsert: true }
        }),
        // Only an upsert filter names the `_id` an upserted document gets.
        2 => (
            prop_oneof![
                filter().prop_map(|filter| (filter, false)),
                (upsert_filter(), any::<bool>()),
            ],
            body(),
        )
            .prop_map(|((filter, upsert), replacement)| Op::Replace {
                filter,
                replacement,
                upsert,
            }),
        2 => (filter(), any::<bool>()).prop_map(|(filter, multi)| Op::Delete { filter, multi }),
        1 => (
            prop_oneof![
                filter().prop_map(|filter| (filter, false)),
                (upsert_filter(), any::<bool>()),
            ],
            update(),
            prop::option::of(sort()),
            any::<bool>(),
        )
            .prop_map(|((filter, upsert), update, sort, return_after)| Op::FindOneAndUpdate {
                filter,
                update,
                sort,
                upsert,
                return_after,
            }),
        1 => (filter(), prop::option::of(sort()))
            .prop_map(|(filter, sort)| Op::FindOneAndDelete { filter, sort }),
        2 => (
            index_keys(),
            prop::bool::weighted(0.4),
            prop::option::weighted(0.2, prop::sample::select(vec!["custom", "a_1"])),
        )
            .prop_map(|(keys, unique, name)| Op::CreateIndex {
                keys,
                unique,
                name: name.map(str::to_string),
            }),
        1 => prop::sample::select(vec!["a_1", "b_-1", "tags_1", "a_1_b_1", "custom", "_id_", "n.c_1"])
            .prop_map(|name| Op::DropIndex(name.to_string())),
        1 => Just(Op::Reopen),
    ]
    .boxed()
}

/// A sort over indexed and unindexed, scalar and array fields, `_id` breaking ties (which
/// MongoDB leaves to the plan).
fn sort() -> impl Strategy<Value = Document> {
    prop::sample::select(vec![
        doc! { "a": 1 },
        doc! { "b": -1 },
        doc! { "tags": 1 },
        doc! { "n.c": -1, "a": 1 },
        doc! { "n.d": -1 },
    ])
    .prop_map(|mut sort| {
        sort.insert("_id", 1);
        sort
    })
}

fn query() -> BoxedStrategy<Query> {
    prop_oneof![
        filter().prop_map(Query::Find),
        (filter(), sort(), 0..3u64, 0..4i64,).prop_map(|(filter, sort, skip, limit)| {
            Query::FindSorted {
                filter,
                sort,
                skip,
                limit,
            }
        }),
        (filter(), 0..3u64, 0..4u64).prop_map(|(filter, skip, limit)| Query::Count {
            filter,
            skip,
            limit
        }),
        (
            prop::sample::select(vec!["a", "b", "tags", "n", "n.c", "n.d"]),
            filter()
        )
            .prop_map(|(field, filter)| Query::Distinct { field, filter }),
    ]
    .boxed()
}

// ---------------------------------------------------------------------------------------
// The reference: the model plus what indexes change for writes

#[derive(Debug, Clone)]
struct IndexDef {
    name: String,
    keys: Document,
    unique: bool,
}

#[derive(Debug, Clone, Default)]
struct Reference {
    collection: MemoryCollection,
    indexes: Vec<IndexDef>,
}

/// The values an index field holds for a document, MongoDB's way: missing is `null`, an array
/// gives its elements (an empty one `undefined`).
fn field_keys(document: &Document, path: &str) -> Vec<Bson> {
    let mut value = Some(Bson::Document(document.clone()));
    for part in path.split('.') {
        value = match value {
            Some(Bson::Document(inner)) => inner.get(part).cloned(),
            _ => None,
        };
    }
    match value {
        None => vec![Bson::Null],
        Some(Bson::Array(items)) if items.is_empty() => vec![Bson::Undefined],
        Some(Bson::Array(items)) => items,
        Some(other) => vec![other],
    }
}

/// Every key tuple `document` has in an index with `keys`.
fn key_tuples(document: &Document, keys: &Document) -> Vec<Vec<Bson>> {
    let mut tuples: Vec<Vec<Bson>> = vec![Vec::new()];
    for field in keys.keys() {
        let values = field_keys(document, field);
        tuples = tuples
            .iter()
            .flat_map(|prefix| {
                values.iter().map(move |value| {
                    let mut tuple = prefix.clone();
                    tuple.push(value.clone());
                    tuple
                })
            })
            .collect();
    }
    tuples
}

fn same_tuple(left: &[Bson], right: &[Bson]) -> bool {
    left.iter()
        .zip(right)
        .all(|(left, right)| values_equal(left, right))
}

/// Whether two documents share a key in a unique index with `keys`.
fn has_duplicate(documents: &[Document], keys: &Document) -> bool {
    let per_document: Vec<Vec<Vec<Bson>>> = documents
        .iter()
        .map(|document| key_tuples(document, keys))
        .collect();
    per_document.iter().enumerate().any(|(position, tuples)| {
        per_document[position + 1..].iter().any(|others| {
            tuples
                .iter()
                .any(|tuple| others.iter().any(|other| same_tuple(tuple, other)))
        })
    })
}

fn default_index_name(keys: &Document) -> String {
    keys.iter()
        .map(|(field, direction)| format!("{field}_{direction}"))
        .collect::<Vec<_>>()
        .join("_")
}

fn sorted_by_id(documents: &[Document]) -> Vec<Document> {
    let mut documents = documents.to_vec();
    documents.sort_by(|left, right| compare(&left["_id"], &right["_id"]));
    documents
}

impl Reference {
    /// Runs `write` on a copy; keeps the copy if it succeeded and no unique index refuses the
    /// result, with the documents back in `_id` order (the facade's natural order).
    fn write<R>(
        &mut self,
        write: impl FnOnce(&mut MemoryCollection) -> Result<R, ModelError>,
    ) -> Result<R, Kind> {
        let mut copy = self.collection.clone();
        let result = write(&mut copy).map_err(|error| model_kind(&error))?;
        let documents = copy.documents();
        if self
            .indexes
            .iter()
            .any(|index| index.unique && has_duplicate(documents, &index.keys))
        {
            return Err(Kind::Duplicate);
        }
        let mut ordered = MemoryCollection::new();
        for document in sorted_by_id(documents) {
            ordered.insert_one(document).expect("already stored once");
        }
        self.collection = ordered;
        Ok(result)
    }

    fn apply(&mut self, op: &Op) -> Outcome {
        let outcome = match op {
            Op::InsertOne(document) => self
                .write(|collection| collection.insert_one(document.clone()))
                .map(Outcome::Inserted),
            Op::InsertMany { documents, ordered } => {
                let mut ids = Vec::new();
                let mut failure = None;
                for (position, document) in documents.iter().enumerate() {
                    match self.write(|collection| collection.insert_one(document.clone())) {
                        Ok(id) => ids.push((position, id)),
                        Err(kind) => {
                            failure.get_or_insert((position, kind));
                            if *ordered {
                                break;
                            }
                        }
                    }
                }
                Ok(Outcome::InsertedMany { ids, failure })
            }
            Op::Update {
                filter,
                update,
                multi,
                upsert,
            } => {
                let options = UpdateOptions {
                    upsert: *upsert,
                    array_filters: Vec::new(),
                };
                self.write(|collection| collection.update(filter, update, *multi, &options))
                    .map(|result| Outcome::Updated {
                        matched: result.matched_count,
                        modified: result.modified_count,
                        upserted: result.upserted_id,
                    })
            }
            Op::Replace {
                filter,
                replacement,
                upsert,
            } => self
                .write(|collection| collection.replace_one(filter, replacement, *upsert))
                .map(|result| Outcome::Updated {
                    matched: result.matched_count,
                    modified: result.modified_count,
                    upserted: result.upserted_id,
                }),
            Op::Delete { filter, multi } => self
                .write(|collection| collection.delete(filter, *multi))
                .map(Outcome::Deleted),
            Op::FindOneAndUpdate {
                filter,
                update,
                sort,
                upsert,
                return_after,
            } => {
                let options = FindOneAndOptions {
                    sort: sort.clone(),
                    upsert: *upsert,
                    return_document: if *return_after {
                        ReturnDocument::After
                    } else {
                        ReturnDocument::Before
                    },
                    ..FindOneAndOptions::default()
                };
                self.write(|collection| collection.find_one_and_modify(filter, update, &options))
                    .map(Outcome::Returned)
            }
            Op::FindOneAndDelete { filter, sort } => {
                let options = FindOneAndOptions {
                    sort: sort.clone(),
                    ..FindOneAndOptions::default()
                };
                self.write(|collection| collection.find_one_and_delete(filter, &options))
                    .map(Outcome::Returned)
            }
            Op::CreateIndex { keys, unique, name } => {
                self.create_index(keys, *unique, name.as_deref())
            }
            Op::DropIndex(name) => self.drop_index(name),
            Op::Reopen => Ok(Outcome::Done),
        };
        outcome.unwrap_or_else(Outcome::Failed)
    }

    /// `create_index`'s rules: an identical index is not created twice, a clash of name or
    /// keys is refused, a unique index is not built over duplicates.
    fn create_index(
        &mut self,
        keys: &Document,
        unique: bool,
        name: Option<&str>,
    ) -> Result<Outcome, Kind> {
        let name = name.map_or_else(|| default_index_name(keys), str::to_string);
        for index in &self.indexes {
            let same_keys = &index.keys == keys;
            if index.name == name || same_keys {
                if index.name == name && same_keys && index.unique == unique {
                    return Ok(Outcome::IndexCreated(name));
                }
                return Err(Kind::InvalidIndex);
            }
        }
        if unique && has_duplicate(self.collection.documents(), keys) {
            return Err(Kind::Duplicate);
        }
        self.indexes.push(IndexDef {
            name: name.clone(),
            keys: keys.clone(),
            unique,
        });
        Ok(Outcome::IndexCreated(name))
    }

    fn drop_index(&mut self, name: &str) -> Result<Outcome, Kind> {
        if name == "_id_" {
            return Err(Kind::InvalidIndex);
        }
        let position = self
            .indexes
            .iter()
            .position(|index| index.name == name)
            .ok_or(Kind::IndexNotFound)?;
        self.indexes.remove(position);
        Ok(Outcome::Done)
    }

    fn index_names(&self) -> Vec<String> {
        std::iter::once("_id_".to_string())
            .chain(self.indexes.iter().map(|index| index.name.clone()))
            .collect()
    }

    fn answer(&self, query: &Query) -> Result<Vec<Bson>, Kind> {
        let collection = &self.collection;
        let answer = match query {
            Query::Find(filter) => collection
                .find(filter, &FindOptions::default())
                .map(|found| as_set(found.into_iter().map(Bson::Document).collect())),
            Query::FindSorted {
                filter,
                sort,
                skip,
                limit,
            } => collection
                .find(
                    filter,
                    &FindOptions {
                        sort: Some(sort.clone()),
                        skip: *skip,
                        limit: *limit,
                        projection: None,
                    },
                )
                .map(|found| found.into_iter().map(Bson::Document).collect()),
            Query::Count {
                filter,
                skip,
                limit,
            } => collection
                .count_documents(filter, *skip, *limit)
                .map(|count| vec![Bson::Int64(count as i64)]),
            Query::Distinct { field, filter } => collection.distinct(field, filter).map(as_set),
        };
        answer.map_err(|error| model_kind(&error))
    }
}

/// Values in comparison order: for answers whose order MongoDB leaves to the plan.
fn as_set(mut values: Vec<Bson>) -> Vec<Bson> {
    values.sort_by(compare);
    values
}

// ---------------------------------------------------------------------------------------
// The facade side

struct Subject {
    directory: tempfile::TempDir,
    database: Database,
}

fn options() -> DatabaseOptions {
    // Durability is not under test here (the storage engine's tests cover it); small segments
    // keep each case's directory small.
    let mut options = DatabaseOptions::default().durability(Durability::OsBuffered);
    options.segment_size = Some(1 << 20);
    options
}

impl Subject {
    fn new() -> Subject {
        let directory = tempfile::tempdir().unwrap();
        let database = Database::open_with(directory.path(), &options()).unwrap();
        Subject {
            directory,
            database,
        }
    }

    fn collection(&self) -> spillway::Collection<Document> {
        self.database.collection(COLLECTION)
    }

    fn apply(&mut self, op: &Op) -> Outcome {
        let collection = self.collection();
        let outcome = match op {
            Op::InsertOne(document) => collection
                .insert_one(document)
                .run()
                .map(|result| Outcome::Inserted(result.inserted_id)),
            Op::InsertMany { documents, ordered } => {
                let result = collection.insert_many(documents).ordered(*ordered).run();
                let (ids, failure) = match result {
                    Ok(result) => (result.inserted_ids, None),
                    Err(error) => (
                        error.inserted_ids().cloned().expect("an insert_many error"),
                        Some((
                            error.document_index().expect("a failed position"),
                            facade_kind(&error),
                        )),
                    ),
                };
                let mut ids: Vec<(usize, Bson)> = ids.into_iter().collect();
                ids.sort_by_key(|(position, _)| *position);
                Ok(Outcome::InsertedMany { ids, failure })
            }
            Op::Update {
                filter,
                update,
                multi,
                upsert,
            } => {
                let action = if *multi {
                    collection.update_many(filter.clone(), update.clone())
                } else {
                    collection.update_one(filter.clone(), update.clone())
                };
                action.upsert(*upsert).run().map(|result| Outcome::Updated {
                    matched: result.matched_count,
                    modified: result.modified_count,
                    upserted: result.upserted_id,
                })
            }
            Op::Replace {
                filter,
                replacement,
                upsert,
            } => collection
                .replace_one(filter.clone(), replacement)
                .upsert(*upsert)
                .run()
                .map(|result| Outcome::Updated {
                    matched: result.matched_count,
                    modified: result.modified_count,
                    upserted: result.upserted_id,
                }),
            Op::Delete { filter, multi } => {
                let action = if *multi {
                    collection.delete_many(filter.clone())
                } else {
                    collection.delete_one(filter.clone())
                };
                action
                    .run()
                    .map(|result| Outcome::Deleted(result.deleted_count))
            }
            Op::FindOneAndUpdate {
                filter,
                update,
                sort,
                upsert,
                return_after,
            } => {
                let mut action = collection
                    .find_one_and_update(filter.clone(), update.clone())
                    .upsert(*upsert)
                    .return_document(if *return_after {
                        spillway::ReturnDocument::After
                    } else {
                        spillway::ReturnDocument::Before
                    });
                if let Some(sort) = sort {
                    action = action.sort(sort.clone());
                }
                action.run().map(Outcome::Returned)
            }
            Op::FindOneAndDelete { filter, sort } => {
                let mut action = collection.find_one_and_delete(filter.clone());
                if let Some(sort) = sort {
                    action = action.sort(sort.clone());
                }
                action.run().map(Outcome::Returned)
            }
            Op::CreateIndex { keys, unique, name } => {
                let mut options = IndexOptions::builder().unique(*unique);
                if let Some(name) = name {
                    options = options.name(name.clone());
                }
                let model = IndexModel::builder()
                    .keys(keys.clone())
                    .options(options.build())
                    .build();
                collection
                    .create_index(model)
                    .run()
                    .map(|result| Outcome::IndexCreated(result.index_name))
            }
            Op::DropIndex(name) => collection.drop_index(name).run().map(|()| Outcome::Done),
            Op::Reopen => {
                drop(collection);
                self.reopen();
                return Outcome::Done;
            }
        };
        outcome.unwrap_or_else(|error| Outcome::Failed(facade_kind(&error)))
    }

    fn reopen(&mut self) {
        // The old handle must close (releasing the directory's lock) before the new open.
        let closed = std::mem::replace(
            &mut self.database,
            Database::open_in_memory().expect("an in-memory placeholder"),
        );
        drop(closed);
        self.database = Database::open_with(self.directory.path(), &options()).unwrap();
    }

    fn documents(&self) -> Vec<Document> {
        self.collection()
            .find(doc! {})
            .sort(doc! { "_id": 1 })
            .run()
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap()
    }

    fn index_names(&self) -> Vec<String> {
        let names = self.collection().list_index_names().run().unwrap();
        // A collection that does not exist yet has no `_id_` index to list.
        if names.is_empty() {
            vec!["_id_".to_string()]
        } else {
            names
        }
    }

    fn answer(&self, query: &Query) -> Result<Vec<Bson>, Kind> {
        let collection = self.collection();
        let collect = |cursor: spillway::Result<spillway::Cursor<Document>>| {
            cursor
                .and_then(Iterator::collect::<Result<Vec<_>, _>>)
                .map(|found| found.into_iter().map(Bson::Document).collect::<Vec<_>>())
        };
        let answer = match query {
            Query::Find(filter) => collect(collection.find(filter.clone()).run()).map(as_set),
            Query::FindSorted {
                filter,
                sort,
                skip,
                limit,
            } => collect(
                collection
                    .find(filter.clone())
                    .sort(sort.clone())
                    .skip(*skip)
                    .limit(*limit)
                    .run(),
            ),
            Query::Count {
                filter,
                skip,
                limit,
            } => collection
                .count_documents(filter.clone())
                .skip(*skip)
                .limit(*limit)
                .run()
                .map(|count| vec![Bson::Int64(count as i64)]),
            Query::Distinct { field, filter } => {
                collection.distinct(field, filter.clone()).run().map(as_set)
            }
        };
        answer.map_err(|error| facade_kind(&error))
    }
}

// ---------------------------------------------------------------------------------------
// The property

/// Answers must be identical, except that `distinct` keeps the first of equal values
/// (`1` or `1.0`) in the plan's order, so its values compare with MongoDB's equality.
fn answers_agree(
    query: &Query,
    expected: &Result<Vec<Bson>, Kind>,
    actual: &Result<Vec<Bson>, Kind>,
) -> bool {
    match (query, expected, actual) {
        (Query::Distinct { .. }, Ok(expected), Ok(actual)) => {
            expected.len() == actual.len()
                && expected
                    .iter()
                    .zip(actual)
                    .all(|(expected, actual)| values_equal(expected, actual))
        }
        _ => expected == actual,
    }
}

fn run(ops: &[Op], queries: &[Query]) -> Result<(), TestCaseError> {
    let mut reference = Reference::default();
    let mut subject = Subject::new();
    for (step, op) in ops.iter().enumerate() {
        let expected = reference.apply(op);
        let actual = subject.apply(op);
        prop_assert!(
            expected == actual,
            "step {step}: {op:?}\n  model:  {expected:?}\n  facade: {actual:?}"
        );
        prop_assert_eq!(
            subject.documents(),
            reference.collection.documents().to_vec(),
            "step {}: documents after {:?}",
            step,
            op
        );
        prop_assert_eq!(
            subject.index_names(),
            reference.index_names(),
            "step {}: indexes after {:?}",
            step,
            op
        );
        for query in queries {
            let expected = reference.answer(query);
            let actual = subject.answer(query);
            prop_assert!(
                answers_agree(query, &expected, &actual),
                "step {step}: {query:?} after {op:?} (indexes {:?})\n  model:  {expected:?}\n  facade: {actual:?}",
                reference.index_names()
            );
        }
    }
    Ok(())
}

fn cases() -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|cases| cases.parse().ok())
        .unwrap_or(DEFAULT_CASES)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(), ..ProptestConfig::default() })]

    #[test]
    fn facade_matches_the_model(
        ops in prop::collection::vec(op(), 1..24),
        queries in prop::collection::vec(query(), 1..5),
    ) {
        run(&ops, &queries)?;
    }
}
