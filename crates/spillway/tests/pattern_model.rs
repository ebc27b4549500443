//! The central property test of the pattern layer: random operation sequences against a
//! collection with two policies, compared after every step with a plain in-memory model.
//!
//! The collection `books` has an outlier policy on `tags` (threshold 3, buckets of 2, so that
//! small arrays already cross the threshold and split into several buckets) and a subset
//! policy on `reviews` (keep 2, sorted by the unique key `k` descending). The model is
//! spillway-doc's [`MemoryCollection`] holding the unsplit documents with plain MongoDB
//! semantics; because a subset's logical array is the archive in the policy's order, the
//! model's `reviews` arrays are re-sorted by `k` after every write (keys are unique, handed
//! out by a counter, so the order has no ties).
//!
//! Operations: inserts (one and many), updates (one and many, upserts) with `$push` and its
//! modifiers, `$addToSet`, `$pull`, `$pullAll`, `$pop`, `$set`/`$unset` of the field and of
//! an element (by index and positional `$`), other-field `$set`/`$inc`, replacements,
//! deletes, direct writes to the side collections (archive: delete a review, edit its text,
//! edit every text with `update_many`; overflow: delete a bucket, push into every bucket with
//! `update_many`, delete a book's buckets with `delete_many`), checkpoints and reopens of the
//! on-disk database.
//!
//! After every step: the expanded documents equal the model's, `verify_patterns()` is
//! empty, and random queries on the managed fields (`find` plain and expanded,
//! `count_documents`, `distinct`, `array_len`, `array_page`) agree with the model. When one
//! side fails, both must, with the same broad kind; the one documented exception is a write
//! the subset policy refuses (an element that is not a document), which the model would
//! accept: there the test checks that the model's result indeed breaks that rule.
//!
//! Cases: 64 by default; `PROPTEST_CASES` overrides.

use std::path::Path;

use proptest::prelude::*;
use spillway::bson::{Bson, Document, doc};
use spillway::{Database, DatabaseOptions, Durability, ErrorKind};
use spillway_doc::compare::compare;
use spillway_doc::model::{
    FindOneAndOptions, FindOptions, MemoryCollection, ModelError, ReturnDocument as ModelReturn,
    UpdateOptions,
};

const MAIN: &str = "books";
const OVERFLOW: &str = "extra_books";
const ARCHIVE: &str = "book_reviews";
const LINK: &str = "book_id";
const THRESHOLD: usize = 3;
const CAPACITY: usize = 2;
const KEEP: usize = 2;
const MAX_ID: i32 = 6;

// ---------------------------------------------------------------------------------------
// Operations, as generated (abstract: review keys are handed out when the step runs).

/// A review to be created with a fresh key.
#[derive(Debug, Clone)]
struct NewReview {
    text: &'static str,
}

#[derive(Debug, Clone)]
struct NewBook {
    id: i32,
    n: i32,
    tags: Option<Vec<i32>>,
    reviews: Option<Vec<NewReview>>,
}

/// A filter; `pick` values choose an existing review key when the step runs.
#[derive(Debug, Clone)]
enum FilterSpec {
    All,
    Id(i32),
    NGreater(i32),
    Tag(i32),
    TagSize(usize),
    TagAll(i32, i32),
    TagElemMatch(i32, i32),
    TagAt(usize, i32),
    ReviewKey(u16),
    ReviewText(&'static str),
    ReviewSize(usize),
    ReviewElemMatch(u16, &'static str),
    TagOrN(i32, i32),
}

#[derive(Debug, Clone)]
enum UpdateSpec {
    PushTag(i32),
    PushTags {
        values: Vec<i32>,
        position: Option<i32>,
        sort: Option<i32>,
        slice: Option<i32>,
    },
    PushReview(NewReview),
    PushReviews {
        values: Vec<NewReview>,
        position: Option<i32>,
        slice: Option<i32>,
    },
    PushBoth(i32, NewReview),
    PushTagAndSetN(i32, i32),
    AddToSetTags(Vec<i32>),
    PullTag(i32),
    PullTagsAtLeast(i32),
    PullAllTags(Vec<i32>),
    PullReviewsBelow(u16),
    PullReviewsText(&'static str),
    Pop(&'static str, i32),
    SetTags(Vec<i32>),
    SetReviews(Vec<NewReview>),
    SetFieldScalar(&'static str),
    Unset(&'static str),
    SetTagAt(usize, i32),
    UnsetTagAt(usize),
    SetTagPositional(i32),
    SetReviewTextAt(usize, &'static str),
    SetReviewKeyAt(usize),
    UnsetReviewAt(usize),
    SetReviewTextPositional(&'static str),
    SetN(i32),
    IncN,
}

#[derive(Debug, Clone)]
enum Op {
    InsertOne(NewBook),
    InsertMany(Vec<NewBook>),
    Update {
        filter: FilterSpec,
        update: UpdateSpec,
        many: bool,
        upsert: bool,
    },
    Replace {
        filter: FilterSpec,
        book: NewBook,
        upsert: bool,
    },
    Delete {
        filter: FilterSpec,
        many: bool,
    },
    ArchiveDelete(u16),
    ArchiveSetText(u16, &'static str),
    BucketDelete(i32, i64),
    /// `updateMany({}, {$push: {tags_extra: v}})` on the overflow collection.
    BucketPushAll(i32),
    /// `deleteMany({book_id: id})` on the overflow collection.
    BucketDeleteBook(i32),
    /// `updateMany({}, {$set: {t: text}})` on the archive.
    ArchiveSetTextAll(&'static str),
    /// `findOneAndUpdate` with a sort and a projection, returning the document before or
    /// after: what it returns must be the model's (logical) document.
    FindOneAndUpdate {
        filter: FilterSpec,
        update: UpdateSpec,
        sort: Document,
        projection: Option<Document>,
        after: bool,
    },
    Checkpoint,
    Reopen,
}

/// A read compared after the step.
#[derive(Debug, Clone)]
struct Probe {
    filter: FilterSpec,
    id: i32,
    skip: usize,
    limit: usize,
    /// The order of the probe's `find` and leading-`$sort` aggregate; `_id` comes last, so
    /// that ties have one order.
    sort: Document,
    /// The probe's `find` projection, if any.
    projection: Option<Document>,
}

const TEXTS: &[&str] = &["good", "bad", "meh"];

fn text() -> impl Strategy<Value = &'static str> {
    proptest::sample::select(TEXTS)
}

fn tag() -> impl Strategy<Value = i32> {
    0..6
}

fn new_review() -> impl Strategy<Value = NewReview> {
    text().prop_map(|text| NewReview { text })
}

fn book() -> impl Strategy<Value = NewBook> {
    (
        0..MAX_ID,
        0..10,
        proptest::option::weighted(0.9, proptest::collection::vec(tag(), 0..12)),
        proptest::option::weighted(0.9, proptest::collection::vec(new_review(), 0..12)),
    )
        .prop_map(|(id, n, tags, reviews)| NewBook {
            id,
            n,
            tags,
            reviews,
        })
}

fn managed_field() -> impl Strategy<Value = &'static str> {
    proptest::sample::select(&["tags", "reviews"][..])
}

fn filter() -> impl Strategy<Value = FilterSpec> {
    prop_oneof![
        2 => Just(FilterSpec::All),
        6 => (0..MAX_ID).prop_map(FilterSpec::Id),
        1 => (0..10).prop_map(FilterSpec::NGreater),
        3 => tag().prop_map(FilterSpec::Tag),
        1 => (0..13_usize).prop_map(FilterSpec::TagSize),
        1 => (tag(), tag()).prop_map(|(a, b)| FilterSpec::TagAll(a, b)),
        1 => (tag(), tag()).prop_map(|(a, b)| FilterSpec::TagElemMatch(a, b)),
        1 => (0..8_usize, tag()).prop_map(|(i, v)| FilterSpec::TagAt(i, v)),
        3 => any::<u16>().prop_map(FilterSpec::ReviewKey),
        1 => text().prop_map(FilterSpec::ReviewText),
        1 => (0..13_usize).prop_map(FilterSpec::ReviewSize),
        1 => (any::<u16>(), text()).prop_map(|(k, t)| FilterSpec::ReviewElemMatch(k, t)),
        1 => (tag(), 0..10).prop_map(|(v, n)| FilterSpec::TagOrN(v, n)),
    ]
}

fn update() -> impl Strategy<Value = UpdateSpec> {
    let modifier = || proptest::option::of(-3..6_i32);
    prop_oneof![
        4 => tag().prop_map(UpdateSpec::PushTag),
        3 => (
            proptest::collection::vec(tag(), 0..7),
            modifier(),
            proptest::option::of(prop_oneof![Just(1), Just(-1)]),
            modifier(),
        )
            .prop_map(|(values, position, sort, slice)| UpdateSpec::PushTags {
                values,
                position,
                sort,
                slice,
            }),
        3 => new_review().prop_map(UpdateSpec::PushReview),
        2 => (proptest::collection::vec(new_review(), 0..5), modifier(), modifier()).prop_map(
            |(values, position, slice)| UpdateSpec::PushReviews {
                values,
                position,
                slice,
            }
        ),
        1 => (tag(), new_review()).prop_map(|(t, r)| UpdateSpec::PushBoth(t, r)),
        1 => (tag(), 0..10).prop_map(|(t, n)| UpdateSpec::PushTagAndSetN(t, n)),
        1 => proptest::collection::vec(tag(), 1..4).prop_map(UpdateSpec::AddToSetTags),
        2 => tag().prop_map(UpdateSpec::PullTag),
        1 => tag().prop_map(UpdateSpec::PullTagsAtLeast),
        1 => proptest::collection::vec(tag(), 1..3).prop_map(UpdateSpec::PullAllTags),
        1 => any::<u16>().prop_map(UpdateSpec::PullReviewsBelow),
        1 => text().prop_map(UpdateSpec::PullReviewsText),
        2 => (managed_field(), prop_oneof![Just(1), Just(-1)])
            .prop_map(|(f, d)| UpdateSpec::Pop(f, d)),
        1 => proptest::collection::vec(tag(), 0..9).prop_map(UpdateSpec::SetTags),
        1 => proptest::collection::vec(new_review(), 0..6).prop_map(UpdateSpec::SetReviews),
        1 => managed_field().prop_map(UpdateSpec::SetFieldScalar),
        1 => managed_field().prop_map(UpdateSpec::Unset),
        2 => (0..9_usize, tag()).prop_map(|(i, v)| UpdateSpec::SetTagAt(i, v)),
        1 => (0..9_usize).prop_map(UpdateSpec::UnsetTagAt),
        1 => tag().prop_map(UpdateSpec::SetTagPositional),
        2 => (0..6_usize, text()).prop_map(|(i, t)| UpdateSpec::SetReviewTextAt(i, t)),
        1 => (0..6_usize).prop_map(UpdateSpec::SetReviewKeyAt),
        1 => (0..4_usize).prop_map(UpdateSpec::UnsetReviewAt),
        1 => text().prop_map(UpdateSpec::SetReviewTextPositional),
        1 => (0..10).prop_map(UpdateSpec::SetN),
        1 => Just(UpdateSpec::IncN),
    ]
}

/// Sorts of reads: on the managed arrays (MongoDB's array sort keys: the smallest element
/// ascending, the largest descending), on other fields, mixed.
fn sort() -> impl Strategy<Value = Document> {
    proptest::sample::select(vec![
        doc! { "_id": 1 },
        doc! { "tags": 1, "_id": 1 },
        doc! { "tags": -1, "_id": 1 },
        doc! { "reviews.k": 1, "_id": 1 },
        doc! { "reviews.k": -1, "_id": 1 },
        doc! { "reviews": 1, "_id": 1 },
        doc! { "n": -1, "tags": 1, "_id": 1 },
        doc! { "tags": -1, "reviews.k": 1, "_id": 1 },
    ])
}

/// Projections of reads: the hot path's `$slice` windows, the managed arrays left out,
/// parts of their elements, `$elemMatch`.
fn projection() -> impl Strategy<Value = Option<Document>> {
    proptest::sample::select(vec![
        None,
        Some(doc! { "tags": { "$slice": 2 } }),
        Some(doc! { "tags": { "$slice": THRESHOLD as i32 } }),
        Some(doc! { "tags": { "$slice": [0, THRESHOLD as i32 + 1] } }),
        Some(doc! { "tags": { "$slice": -2 } }),
        Some(doc! { "tags": { "$slice": [1, 3] } }),
        Some(doc! { "tags": { "$slice": [-4, 2] }, "n": 1 }),
        Some(doc! { "reviews": { "$slice": 1 } }),
        Some(doc! { "tags": 0 }),
        Some(doc! { "tags": 0, "reviews": 0 }),
        Some(doc! { "n": 1 }),
        Some(doc! { "reviews.k": 1 }),
        Some(doc! { "tags": { "$elemMatch": { "$gte": 5 } } }),
    ])
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => book().prop_map(Op::InsertOne),
        1 => proptest::collection::vec(book(), 1..4).prop_map(Op::InsertMany),
        14 => (filter(), update(), proptest::bool::weighted(0.2), proptest::bool::weighted(0.15))
            .prop_map(|(filter, update, many, upsert)| Op::Update {
                filter,
                update,
                many,
                upsert,
            }),
        2 => (filter(), book(), any::<bool>()).prop_map(|(filter, book, upsert)| Op::Replace {
            filter,
            book,
            upsert,
        }),
        1 => (filter(), proptest::bool::weighted(0.2))
            .prop_map(|(filter, many)| Op::Delete { filter, many }),
        2 => any::<u16>().prop_map(Op::ArchiveDelete),
        2 => (any::<u16>(), text()).prop_map(|(k, t)| Op::ArchiveSetText(k, t)),
        2 => (0..MAX_ID, 0..4_i64).prop_map(|(id, n)| Op::BucketDelete(id, n)),
        1 => (0..20_i32).prop_map(Op::BucketPushAll),
        1 => (0..MAX_ID).prop_map(Op::BucketDeleteBook),
        1 => text().prop_map(Op::ArchiveSetTextAll),
        3 => (filter(), update(), sort(), projection(), any::<bool>()).prop_map(
            |(filter, update, sort, projection, after)| Op::FindOneAndUpdate {
                filter,
                update,
                sort,
                projection,
                after,
            }
        ),
        1 => Just(Op::Checkpoint),
        1 => Just(Op::Reopen),
    ]
}

fn probe() -> impl Strategy<Value = Probe> {
    (
        filter(),
        0..MAX_ID,
        0..10_usize,
        0..6_usize,
        sort(),
        projection(),
    )
        .prop_map(|(filter, id, skip, limit, sort, projection)| Probe {
            filter,
            id,
            skip,
            limit,
            sort,
            projection,
        })
}

/// The other collections a model's pipeline may read: none.
struct NoOtherCollections;

impl spillway_doc::pipeline::Source for NoOtherCollections {
    fn documents(
        &self,
        collection: &str,
        _filter: &Document,
    ) -> spillway_doc::Result<Box<dyn Iterator<Item = spillway_doc::Result<Document>> + '_>> {
        Err(spillway_doc::DocError::Pipeline {
            code: 2,
            message: format!("the model reads no collection '{collection}'"),
        })
    }
}

// ---------------------------------------------------------------------------------------
// Running a case.

struct Harness {
    dir: tempfile::TempDir,
    db: Option<Database>,
    model: MemoryCollection,
    next_key: i32,
}

fn options() -> DatabaseOptions {
    // Reopen after a clean close is what is tested here; fsync adds nothing but time, and
    // small segments keep each case's files small.
    let mut options = DatabaseOptions::default().durability(Durability::OsBuffered);
    options.segment_size = Some(256 * 1024);
    options
}

fn open(path: &Path) -> Database {
    Database::open_with(path, &options()).expect("open the database")
}

/// The broad kind of a failure, on which both sides must agree.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Failure {
    DuplicateKey,
    Invalid,
    Refused,
}

fn engine_failure(error: &spillway::Error) -> Failure {
    match error.kind() {
        ErrorKind::DuplicateKey { .. } => Failure::DuplicateKey,
        ErrorKind::InvalidFilter(_)
        | ErrorKind::InvalidUpdate(_)
        | ErrorKind::InvalidDocument(_)
        | ErrorKind::InvalidArgument(_)
        | ErrorKind::DocumentTooLarge { .. } => Failure::Invalid,
        ErrorKind::Pattern(_) => Failure::Refused,
        _ => panic!("unexpected engine error: {error}"),
    }
}

fn model_failure(error: &ModelError) -> Failure {
    match error {
        ModelError::DuplicateId(_) => Failure::DuplicateKey,
        _ => Failure::Invalid,
    }
}

impl Harness {
    fn new() -> Harness {
        let dir = tempfile::tempdir().expect("temp dir");
        let db = open(dir.path());
        db.create_collection(MAIN).run().unwrap();
        db.set_pattern(
            spillway::Pattern::outlier(MAIN, "tags")
                .threshold(THRESHOLD)
                .bucket_capacity(CAPACITY)
                .overflow_collection(OVERFLOW)
                .link_field(LINK),
        )
        .unwrap();
        db.set_pattern(
            spillway::Pattern::subset(MAIN, "reviews")
                .keep(KEEP)
                .sort_by(doc! { "k": -1 })
                .archive_collection(ARCHIVE)
                .link_field(LINK),
        )
        .unwrap();
        Harness {
            dir,
            db: Some(db),
            model: MemoryCollection::new(),
            next_key: 0,
        }
    }

    fn db(&self) -> &Database {
        self.db.as_ref().expect("the database is open")
    }

    fn review(&mut self, review: &NewReview) -> Bson {
        let k = self.next_key;
        self.next_key += 1;
        Bson::Document(doc! { "k": k, "t": review.text })
    }

    fn reviews(&mut self, reviews: &[NewReview]) -> Vec<Bson> {
        reviews.iter().map(|review| self.review(review)).collect()
    }

    /// An existing review key (or one past the last) chosen by `pick`.
    fn key(&self, pick: u16) -> i32 {
        i32::from(pick) % (self.next_key + 1)
    }

    fn book(&mut self, book: &NewBook, with_id: bool) -> Document {
        let mut document = Document::new();
        if with_id {
            document.insert("_id", book.id);
        }
        document.insert("n", book.n);
        if let Some(tags) = &book.tags {
            document.insert("tags", tags.clone());
        }
        if let Some(reviews) = &book.reviews {
            let reviews = self.reviews(reviews);
            document.insert("reviews", reviews);
        }
        document
    }

    fn filter(&self, filter: &FilterSpec) -> Document {
        match filter {
            FilterSpec::All => doc! {},
            FilterSpec::Id(id) => doc! { "_id": id },
            FilterSpec::NGreater(n) => doc! { "n": { "$gt": n } },
            FilterSpec::Tag(v) => doc! { "tags": v },
            FilterSpec::TagSize(n) => doc! { "tags": { "$size": *n as i64 } },
            FilterSpec::TagAll(a, b) => doc! { "tags": { "$all": [a, b] } },
            FilterSpec::TagElemMatch(a, b) => {
                doc! { "tags": { "$elemMatch": { "$gte": a, "$lte": b } } }
            }
            FilterSpec::TagAt(i, v) => doc! { format!("tags.{i}"): v },
            FilterSpec::ReviewKey(pick) => doc! { "reviews.k": self.key(*pick) },
            FilterSpec::ReviewText(t) => doc! { "reviews.t": t },
            FilterSpec::ReviewSize(n) => doc! { "reviews": { "$size": *n as i64 } },
            FilterSpec::ReviewElemMatch(pick, t) => doc! {
                "reviews": { "$elemMatch": { "k": { "$gte": self.key(*pick) }, "t": t } }
            },
            FilterSpec::TagOrN(v, n) => doc! { "$or": [{ "tags": v }, { "n": n }] },
        }
    }

    fn update(&mut self, update: &UpdateSpec) -> Document {
        let modifiers = |each: Vec<Bson>, position: Option<i32>, slice: Option<i32>| {
            let mut push = doc! { "$each": each };
            if let Some(position) = position {
                push.insert("$position", position);
            }
            if let Some(slice) = slice {
                push.insert("$slice", slice);
            }
            push
        };
        match update {
            UpdateSpec::PushTag(v) => doc! { "$push": { "tags": v } },
            UpdateSpec::PushTags {
                values,
                position,
                sort,
                slice,
            } => {
                let each = values.iter().map(|v| Bson::Int32(*v)).collect();
                let mut push = modifiers(each, *position, *slice);
                if let Some(sort) = sort {
                    push.insert("$sort", sort);
                }
                doc! { "$push": { "tags": push } }
            }
            UpdateSpec::PushReview(review) => {
                let review = self.review(review);
                doc! { "$push": { "reviews": review } }
            }
            UpdateSpec::PushReviews {
                values,
                position,
                slice,
            } => {
                let each = self.reviews(values);
                doc! { "$push": { "reviews": modifiers(each, *position, *slice) } }
            }
            UpdateSpec::PushBoth(v, review) => {
                let review = self.review(review);
                doc! { "$push": { "tags": v, "reviews": review } }
            }
            UpdateSpec::PushTagAndSetN(v, n) => {
                doc! { "$push": { "tags": v }, "$set": { "n": n } }
            }
            UpdateSpec::AddToSetTags(values) => {
                doc! { "$addToSet": { "tags": { "$each": values.clone() } } }
            }
            UpdateSpec::PullTag(v) => doc! { "$pull": { "tags": v } },
            UpdateSpec::PullTagsAtLeast(v) => doc! { "$pull": { "tags": { "$gte": v } } },
            UpdateSpec::PullAllTags(values) => doc! { "$pullAll": { "tags": values.clone() } },
            UpdateSpec::PullReviewsBelow(pick) => {
                doc! { "$pull": { "reviews": { "k": { "$lt": self.key(*pick) } } } }
            }
            UpdateSpec::PullReviewsText(t) => doc! { "$pull": { "reviews": { "t": t } } },
            UpdateSpec::Pop(field, direction) => doc! { "$pop": { *field: direction } },
            UpdateSpec::SetTags(values) => doc! { "$set": { "tags": values.clone() } },
            UpdateSpec::SetReviews(values) => {
                let reviews = self.reviews(values);
                doc! { "$set": { "reviews": reviews } }
            }
            UpdateSpec::SetFieldScalar(field) => doc! { "$set": { *field: "scalar" } },
            UpdateSpec::Unset(field) => doc! { "$unset": { *field: "" } },
            UpdateSpec::SetTagAt(i, v) => doc! { "$set": { format!("tags.{i}"): v } },
            UpdateSpec::UnsetTagAt(i) => doc! { "$unset": { format!("tags.{i}"): "" } },
            UpdateSpec::SetTagPositional(v) => doc! { "$set": { "tags.$": v } },
            UpdateSpec::SetReviewTextAt(i, t) => {
                doc! { "$set": { format!("reviews.{i}.t"): t } }
            }
            UpdateSpec::SetReviewKeyAt(i) => {
                let k = self.next_key;
                self.next_key += 1;
                doc! { "$set": { format!("reviews.{i}.k"): k } }
            }
            UpdateSpec::UnsetReviewAt(i) => doc! { "$unset": { format!("reviews.{i}"): "" } },
            UpdateSpec::SetReviewTextPositional(t) => doc! { "$set": { "reviews.$.t": t } },
            UpdateSpec::SetN(n) => doc! { "$set": { "n": n } },
            UpdateSpec::IncN => doc! { "$inc": { "n": 1 } },
        }
    }

    /// Runs one operation on both sides and checks that they agree on its outcome.
    fn step(&mut self, op: &Op) -> Result<(), TestCaseError> {
        let mut model = self.model.clone();
        // The documents an insert_many sent, to replay the part an ordered insert kept.
        let mut sent: Vec<Document> = Vec::new();
        let (engine, expected): (Result<u64, spillway::Error>, Result<u64, ModelError>) = match op {
            Op::InsertOne(book) => {
                let document = self.book(book, true);
                let engine = self
                    .db()
                    .collection::<Document>(MAIN)
                    .insert_one(document.clone())
                    .run()
                    .map(|_| 1);
                (engine, model.insert_one(document).map(|_| 1))
            }
            Op::InsertMany(books) => {
                let documents: Vec<Document> =
                    books.iter().map(|book| self.book(book, true)).collect();
                sent.clone_from(&documents);
                let engine = self
                    .db()
                    .collection::<Document>(MAIN)
                    .insert_many(documents.clone())
                    .run()
                    .map(|result| result.inserted_ids.len() as u64);
                // Ordered, as MongoDB: the documents before the first failure stay.
                let (inserted, failures) = model.insert_many(documents, true);
                let expected = match failures.into_iter().next() {
                    Some((_, error)) => Err(error),
                    None => Ok(inserted.len() as u64),
                };
                (engine, expected)
            }
            Op::Update {
                filter,
                update,
                many,
                upsert,
            } => {
                let filter_document = self.filter(filter);
                let update = self.update(update);
                // Upserts only with an `_id` filter: a generated ObjectId would differ.
                let upsert = *upsert && matches!(filter, FilterSpec::Id(_));
                let collection = self.db().collection::<Document>(MAIN);
                let action = if *many {
                    collection.update_many(filter_document.clone(), update.clone())
                } else {
                    collection.update_one(filter_document.clone(), update.clone())
                };
                let engine = action
                    .upsert(upsert)
                    .run()
                    .map(|result| result.matched_count * 10 + result.modified_count);
                let options = UpdateOptions {
                    upsert,
                    array_filters: Vec::new(),
                };
                let expected = model
                    .update(&filter_document, &update, *many, &options)
                    .map(|result| result.matched_count * 10 + result.modified_count);
                (engine, expected)
            }
            Op::Replace {
                filter,
                book,
                upsert,
            } => {
                let filter_document = self.filter(filter);
                let replacement = self.book(book, false);
                let upsert = *upsert && matches!(filter, FilterSpec::Id(_));
                let engine = self
                    .db()
                    .collection::<Document>(MAIN)
                    .replace_one(filter_document.clone(), replacement.clone())
                    .upsert(upsert)
                    .run()
                    .map(|result| result.matched_count * 10 + result.modified_count);
                let expected = model
                    .replace_one(&filter_document, &replacement, upsert)
                    .map(|result| result.matched_count * 10 + result.modified_count);
                (engine, expected)
            }
            Op::FindOneAndUpdate {
                filter,
                update,
                sort,
                projection,
                after,
            } => {
                let filter_document = self.filter(filter);
                let update = self.update(update);
                let return_document = if *after {
                    spillway::ReturnDocument::After
                } else {
                    spillway::ReturnDocument::Before
                };
                let collection = self.db().collection::<Document>(MAIN);
                let mut action = collection
                    .find_one_and_update(filter_document.clone(), update.clone())
                    .sort(sort.clone())
                    .return_document(return_document);
                if let Some(projection) = projection {
                    action = action.projection(projection.clone());
                }
                let engine = action.run();
                // The model projects after its reviews are put in the policy's order.
                let options = FindOneAndOptions {
                    sort: Some(sort.clone()),
                    projection: None,
                    upsert: false,
                    return_document: if *after {
                        ModelReturn::After
                    } else {
                        ModelReturn::Before
                    },
                    array_filters: Vec::new(),
                };
                let expected = model.find_one_and_modify(&filter_document, &update, &options);
                match (engine, expected) {
                    (Ok(engine), Ok(expected)) => {
                        // The model's subset arrays are put in the policy's order after each
                        // write, so the document returned is compared in that order too.
                        let expected = match expected.map(sort_reviews) {
                            Some(document) => match projection {
                                Some(projection) => Some(
                                    spillway_doc::projection::Projection::parse(projection)
                                        .and_then(|projection| projection.apply(&document))
                                        .expect("a valid projection"),
                                ),
                                None => Some(document),
                            },
                            None => None,
                        };
                        prop_assert_eq!(
                            &engine,
                            &expected,
                            "{:?}: findOneAndUpdate returned another document",
                            op
                        );
                        (Ok(1), Ok(1))
                    }
                    (engine, expected) => (engine.map(|_| 1), expected.map(|_| 1)),
                }
            }
            Op::Delete { filter, many } => {
                let filter_document = self.filter(filter);
                let collection = self.db().collection::<Document>(MAIN);
                let action = if *many {
                    collection.delete_many(filter_document.clone())
                } else {
                    collection.delete_one(filter_document.clone())
                };
                let engine = action.run().map(|result| result.deleted_count);
                (engine, model.delete(&filter_document, *many))
            }
            Op::ArchiveDelete(pick) => {
                let k = self.key(*pick);
                let engine = self
                    .db()
                    .collection::<Document>(ARCHIVE)
                    .delete_one(doc! { "k": k })
                    .run()
                    .map(|result| result.deleted_count);
                let expected = edit_review(&mut model, k, |reviews, position| {
                    reviews.remove(position);
                });
                (engine, Ok(expected))
            }
            Op::ArchiveSetText(pick, text) => {
                let k = self.key(*pick);
                let engine = self
                    .db()
                    .collection::<Document>(ARCHIVE)
                    .update_one(doc! { "k": k }, doc! { "$set": { "t": *text } })
                    .run()
                    .map(|result| result.matched_count * 10 + result.modified_count);
                let mut modified = 0;
                let matched = edit_review(&mut model, k, |reviews, position| {
                    let review = reviews[position].as_document_mut().expect("a review");
                    if review.get_str("t").ok() != Some(*text) {
                        review.insert("t", *text);
                        modified = 1;
                    }
                });
                (engine, Ok(matched * 10 + modified))
            }
            Op::BucketDelete(id, bucket) => {
                let engine = self
                    .db()
                    .collection::<Document>(OVERFLOW)
                    .delete_one(doc! { LINK: id, "bucket": bucket })
                    .run()
                    .map(|result| result.deleted_count);
                (engine, Ok(delete_bucket(&mut model, *id, *bucket)))
            }
            Op::BucketPushAll(value) => {
                let engine = self
                    .db()
                    .collection::<Document>(OVERFLOW)
                    .update_many(doc! {}, doc! { "$push": { "tags_extra": *value } })
                    .run()
                    .map(|result| result.matched_count * 10 + result.modified_count);
                let buckets = push_into_every_bucket(&mut model, *value);
                (engine, Ok(buckets * 10 + buckets))
            }
            Op::BucketDeleteBook(id) => {
                let engine = self
                    .db()
                    .collection::<Document>(OVERFLOW)
                    .delete_many(doc! { LINK: id })
                    .run()
                    .map(|result| result.deleted_count);
                (engine, Ok(delete_overflow(&mut model, *id)))
            }
            Op::ArchiveSetTextAll(text) => {
                let engine = self
                    .db()
                    .collection::<Document>(ARCHIVE)
                    .update_many(doc! {}, doc! { "$set": { "t": *text } })
                    .run()
                    .map(|result| result.matched_count * 10 + result.modified_count);
                (engine, Ok(set_every_review_text(&mut model, text)))
            }
            Op::Checkpoint => {
                self.db().checkpoint().unwrap();
                return Ok(());
            }
            Op::Reopen => {
                drop(self.db.take());
                self.db = Some(open(self.dir.path()));
                return Ok(());
            }
        };
        match (engine, expected) {
            (Ok(engine), Ok(expected)) => {
                prop_assert_eq!(engine, expected, "counts of {:?}", op);
                self.model = normalized(&model);
            }
            (Err(engine), Ok(_)) if engine_failure(&engine) == Failure::Refused => {
                prop_assert!(
                    breaks_subset_rule(&model),
                    "the engine refused {:?} ({}) but the model's result keeps every review a document",
                    op,
                    engine
                );
                // An ordered insert_many keeps the documents before the refused one.
                if matches!(op, Op::InsertMany(_)) {
                    let mut kept = self.model.clone();
                    for document in sent {
                        let mut probe = kept.clone();
                        if probe.insert_one(document).is_err() {
                            break;
                        }
                        if breaks_subset_rule(&probe) {
                            break;
                        }
                        kept = probe;
                    }
                    self.model = normalized(&kept);
                }
            }
            (Err(engine), Err(expected)) => {
                // Both refuse the whole operation. When one document breaks the policy and
                // another the update itself, the reason each side gives depends on which
                // document it meets first (the engine in `_id` order, the model all at
                // once), so a policy refusal answers an invalid update too; the probes
                // below still compare what both hold afterwards.
                let kinds = (engine_failure(&engine), model_failure(&expected));
                prop_assert!(
                    kinds.0 == kinds.1 || kinds == (Failure::Refused, Failure::Invalid),
                    "{:?}: engine {} / model {}",
                    op,
                    engine,
                    expected
                );
                // An ordered insert_many keeps what it inserted before the failure; every
                // other failed operation leaves nothing.
                if matches!(op, Op::InsertMany(_)) {
                    self.model = normalized(&model);
                }
            }
            (engine, expected) => {
                return Err(TestCaseError::fail(format!(
                    "{op:?}: engine {engine:?} but model {expected:?}"
                )));
            }
        }
        Ok(())
    }

    /// Compares the whole state and the answers of `probe` with the model.
    fn check(&self, probe: &Probe) -> Result<(), TestCaseError> {
        let db = self.db();
        let books = db.collection::<Document>(MAIN);
        let logical: Vec<Document> = books
            .find(doc! {})
            .sort(doc! { "_id": 1 })
            .run()
            .unwrap()
            .map(Result::unwrap)
            .collect();
        let mut expected: Vec<Document> = self.model.documents().to_vec();
        expected.sort_by(|a, b| compare(&a["_id"], &b["_id"]));
        prop_assert_eq!(&logical, &expected, "logical documents");
        let violations = db.verify_patterns().unwrap();
        prop_assert!(
            violations.is_empty(),
            "verify: {:?}",
            violations
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
        );

        let filter = self.filter(&probe.filter);
        let model_found = self
            .model
            .find(&filter, &FindOptions::default())
            .expect("model find");
        let mut want_ids: Vec<Bson> = model_found.iter().map(|d| d["_id"].clone()).collect();
        want_ids.sort_by(compare);
        let found: Vec<Document> = books
            .find(filter.clone())
            .sort(doc! { "_id": 1 })
            .projection(doc! { "_id": 1 })
            .run()
            .unwrap()
            .map(Result::unwrap)
            .collect();
        let found_ids: Vec<Bson> = found.iter().map(|d| d["_id"].clone()).collect();
        prop_assert_eq!(&found_ids, &want_ids, "find {} (only the _id)", filter);
        let mut model_sorted = model_found.clone();
        model_sorted.sort_by(|a, b| compare(&a["_id"], &b["_id"]));
        let expanded: Vec<Document> = books
            .find(filter.clone())
            .sort(doc! { "_id": 1 })
            .run()
            .unwrap()
            .map(Result::unwrap)
            .collect();
        prop_assert_eq!(&expanded, &model_sorted, "find {}", filter);
        let count = books.count_documents(filter.clone()).run().unwrap();
        prop_assert_eq!(count, want_ids.len() as u64, "count {}", filter);
        for field in ["tags", "reviews.k"] {
            let mut got = books.distinct(field, filter.clone()).run().unwrap();
            let mut want = self.model.distinct(field, &filter).unwrap();
            got.sort_by(compare);
            want.sort_by(compare);
            prop_assert_eq!(got, want, "distinct {} {}", field, filter);
        }
        let model_doc = self
            .model
            .documents()
            .iter()
            .find(|d| d.get_i32("_id").ok() == Some(probe.id));
        for field in ["tags", "reviews"] {
            let array = model_doc.map(|d| match d.get(field) {
                Some(Bson::Array(items)) => items.clone(),
                _ => Vec::new(),
            });
            let len = books.array_len(probe.id, field).unwrap();
            prop_assert_eq!(
                len,
                array.as_ref().map(|a| a.len() as u64),
                "array_len {}",
                field
            );
            let page = books
                .array_page(probe.id, field, probe.skip, probe.limit)
                .unwrap();
            let want = array.map(|a| {
                a.into_iter()
                    .skip(probe.skip)
                    .take(probe.limit)
                    .collect::<Vec<_>>()
            });
            prop_assert_eq!(
                page,
                want,
                "array_page {} {} {}",
                field,
                probe.skip,
                probe.limit
            );
        }
        self.check_reads(&books, &filter, probe)
    }

    /// A policy changes cost, never answers: a `find` with the probe's sort, skip, limit
    /// and projection, and an aggregate whose first stage is the `$sort`, answer as the
    /// model (a plain collection of the logical documents) does.
    fn check_reads(
        &self,
        books: &spillway::Collection<Document>,
        filter: &Document,
        probe: &Probe,
    ) -> Result<(), TestCaseError> {
        let options = FindOptions {
            sort: Some(probe.sort.clone()),
            skip: probe.skip as u64,
            limit: probe.limit as i64,
            projection: probe.projection.clone(),
        };
        let want = self.model.find(filter, &options);
        let mut action = books
            .find(filter.clone())
            .sort(probe.sort.clone())
            .skip(probe.skip as u64)
            .limit(probe.limit as i64)
            .batch_size(2);
        if let Some(projection) = &probe.projection {
            action = action.projection(projection.clone());
        }
        let got = action
            .run()
            .and_then(Iterator::collect::<spillway::Result<Vec<_>>>);
        match (got, want) {
            (Ok(got), Ok(want)) => prop_assert_eq!(
                got,
                want,
                "find {} sort {} projection {:?} skip {} limit {}",
                filter,
                &probe.sort,
                &probe.projection,
                probe.skip,
                probe.limit
            ),
            (Err(_), Err(_)) => {}
            (got, want) => {
                return Err(TestCaseError::fail(format!(
                    "find {filter} sort {} projection {:?}: engine {got:?} but model {want:?}",
                    probe.sort, probe.projection
                )));
            }
        }
        let mut pipeline = vec![
            doc! { "$sort": probe.sort.clone() },
            doc! { "$match": filter.clone() },
        ];
        if probe.skip > 0 {
            pipeline.push(doc! { "$skip": probe.skip as i64 });
        }
        if probe.limit > 0 {
            pipeline.push(doc! { "$limit": probe.limit as i64 });
        }
        let want = self.model.aggregate(
            &pipeline,
            &spillway_doc::pipeline::PipelineOptions::default(),
            std::sync::Arc::new(NoOtherCollections),
        );
        let got = books
            .aggregate(pipeline.clone())
            .run()
            .and_then(Iterator::collect::<spillway::Result<Vec<_>>>);
        match (got, want) {
            (Ok(got), Ok(want)) => prop_assert_eq!(got, want, "aggregate {:?}", pipeline),
            (Err(_), Err(_)) => {}
            (got, want) => {
                return Err(TestCaseError::fail(format!(
                    "aggregate {pipeline:?}: engine {got:?} but model {want:?}"
                )));
            }
        }
        Ok(())
    }
}

/// Applies `edit` to the model's review with key `k`, if any; returns how many matched.
fn edit_review(
    model: &mut MemoryCollection,
    k: i32,
    edit: impl FnOnce(&mut Vec<Bson>, usize),
) -> u64 {
    let mut documents = model.documents().to_vec();
    let mut edit = Some(edit);
    let mut matched = 0;
    for document in &mut documents {
        if let Ok(reviews) = document.get_array_mut("reviews")
            && let Some(position) = reviews.iter().position(|review| {
                review
                    .as_document()
                    .is_some_and(|review| review.get_i32("k").ok() == Some(k))
            })
        {
            (edit.take().expect("keys are unique"))(reviews, position);
            matched = 1;
            break;
        }
    }
    *model = rebuild(documents);
    matched
}

/// Removes from the model the elements that overflow bucket `bucket` of book `id` holds.
fn delete_bucket(model: &mut MemoryCollection, id: i32, bucket: i64) -> u64 {
    let mut documents = model.documents().to_vec();
    let mut deleted = 0;
    for document in &mut documents {
        if document.get_i32("_id").ok() != Some(id) {
            continue;
        }
        if let Ok(tags) = document.get_array_mut("tags") {
            let start = THRESHOLD + bucket as usize * CAPACITY;
            if start < tags.len() {
                let end = (start + CAPACITY).min(tags.len());
                tags.drain(start..end);
                deleted = 1;
            }
        }
    }
    *model = rebuild(documents);
    deleted
}

/// The overflow of a book's `tags` as its dense buckets hold it.
fn overflow_chunks(tags: &[Bson]) -> Vec<Vec<Bson>> {
    tags.get(THRESHOLD..)
        .unwrap_or_default()
        .chunks(CAPACITY)
        .map(<[Bson]>::to_vec)
        .collect()
}

/// Appends `value` to every overflow bucket of every book in the model (the logical array
/// is the main part, then the buckets in order); returns how many buckets there were.
fn push_into_every_bucket(model: &mut MemoryCollection, value: i32) -> u64 {
    let mut documents = model.documents().to_vec();
    let mut buckets = 0;
    for document in &mut documents {
        if let Ok(tags) = document.get_array_mut("tags")
            && tags.len() > THRESHOLD
        {
            let chunks = overflow_chunks(tags);
            buckets += chunks.len() as u64;
            tags.truncate(THRESHOLD);
            for mut chunk in chunks {
                chunk.push(Bson::Int32(value));
                tags.extend(chunk);
            }
        }
    }
    *model = rebuild(documents);
    buckets
}

/// Removes every overflow element of book `id` from the model; returns how many buckets held
/// them.
fn delete_overflow(model: &mut MemoryCollection, id: i32) -> u64 {
    let mut documents = model.documents().to_vec();
    let mut buckets = 0;
    for document in &mut documents {
        if document.get_i32("_id").ok() == Some(id)
            && let Ok(tags) = document.get_array_mut("tags")
        {
            buckets = overflow_chunks(tags).len() as u64;
            tags.truncate(THRESHOLD);
        }
    }
    *model = rebuild(documents);
    buckets
}

/// Sets `t` of every review in the model; returns matched * 10 + modified, as the archive's
/// `update_many` counts them (one archive document per review).
fn set_every_review_text(model: &mut MemoryCollection, text: &str) -> u64 {
    let mut documents = model.documents().to_vec();
    let (mut matched, mut modified) = (0, 0);
    for document in &mut documents {
        if let Ok(reviews) = document.get_array_mut("reviews") {
            for review in reviews.iter_mut().filter_map(Bson::as_document_mut) {
                matched += 1;
                if review.get_str("t").ok() != Some(text) {
                    review.insert("t", text);
                    modified += 1;
                }
            }
        }
    }
    *model = rebuild(documents);
    matched * 10 + modified
}

fn rebuild(documents: Vec<Document>) -> MemoryCollection {
    let mut model = MemoryCollection::new();
    for document in documents {
        model
            .insert_one(document)
            .expect("documents already stored");
    }
    model
}

/// The model with every `reviews` array in the subset's order (`k` descending), and its
/// documents in `_id` order: the natural order of a stored collection, which decides the
/// document `update_one` and `delete_one` pick among several matches.
/// `document` with its `reviews` in the subset policy's order (`k` descending), as the
/// logical document holds them.
fn sort_reviews(mut document: Document) -> Document {
    if let Ok(reviews) = document.get_array_mut("reviews")
        && reviews.iter().all(|review| review.as_document().is_some())
    {
        reviews.sort_by(|a, b| {
            let key = |review: &Bson| review.as_document().and_then(|r| r.get("k")).cloned();
            compare(&key(b).unwrap_or(Bson::Null), &key(a).unwrap_or(Bson::Null))
        });
    }
    document
}

fn normalized(model: &MemoryCollection) -> MemoryCollection {
    let mut documents: Vec<Document> = model
        .documents()
        .iter()
        .cloned()
        .map(sort_reviews)
        .collect();
    documents.sort_by(|a, b| compare(&a["_id"], &b["_id"]));
    rebuild(documents)
}

/// Whether a model state has a `reviews` array the subset policy cannot hold (an element
/// that is not a document, or one with a field the archive uses).
fn breaks_subset_rule(model: &MemoryCollection) -> bool {
    model.documents().iter().any(|document| {
        matches!(document.get("reviews"), Some(Bson::Array(reviews)) if reviews.iter().any(|review| {
            review.as_document().is_none_or(|review| {
                review.contains_key(LINK) || review.contains_key("_seq") || review.contains_key("_id")
            })
        }))
    })
}

fn cases() -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|cases| cases.parse().ok())
        .unwrap_or(64)
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: cases(),
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    #[test]
    fn expanded_documents_match_the_model(
        steps in proptest::collection::vec((op(), probe()), 1..40)
    ) {
        let mut harness = Harness::new();
        for (op, probe) in &steps {
            harness.step(op)?;
            harness.check(probe)?;
        }
    }
}
