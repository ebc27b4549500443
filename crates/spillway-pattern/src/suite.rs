//! The backend test suite: what every storage under the pattern layer must pass, run by
//! each backend's own tests through a [`Target`] adapter (the in-memory reference in this
//! crate, the embedded database in `spillway`, a MongoDB deployment next).
//!
//! - [`central_property`]: random operation sequences on a collection with an outlier and a
//!   subset policy, with direct writes to both side collections, compared after every step
//!   with spillway-doc's [`MemoryCollection`] holding the unsplit documents; `verify` stays
//!   clean throughout.
//! - [`seed_layouts`]: the stored layouts of the two seed documents (`../shared/seeds`): a
//!   book whose buyers pass the threshold, a product with more reviews than it embeds.
//! - [`verify_cases`]: damage written behind the layer's back, each kind reported.
//! - [`interrupted_migrations`]: applying and removing a policy on 300 documents, a commit
//!   failing as a crash would, resumed by a restart, with nothing lost or changed.
//!
//! Built with the `suite` feature (it needs `proptest`).

use std::fmt;

use bson::{Bson, Document, doc};
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};
use spillway_doc::model::{FindOptions, MemoryCollection, UpdateOptions};

use crate::backend::Write;
use crate::policy::Pattern;
use crate::verify::Violation;

/// A database under the pattern layer, as the suite drives it. Each method is one
/// operation of the backend's public API (a logical write is one transaction).
pub trait Target {
    /// The backend's error.
    type Error: fmt::Debug + fmt::Display;

    /// Creates a collection.
    fn create_collection(&mut self, name: &str) -> Result<(), Self::Error>;
    /// Declares a policy and migrates the stored documents.
    fn set_pattern(&mut self, pattern: Pattern) -> Result<(), Self::Error>;
    /// Removes a policy, folding its arrays back.
    fn remove_pattern(&mut self, collection: &str, field: &str) -> Result<(), Self::Error>;
    /// Inserts one document.
    fn insert_one(&mut self, collection: &str, document: Document) -> Result<(), Self::Error>;
    /// `updateOne` / `updateMany`; the number modified.
    fn update(
        &mut self,
        collection: &str,
        filter: &Document,
        update: &Document,
        multi: bool,
    ) -> Result<u64, Self::Error>;
    /// `deleteOne` / `deleteMany`; the number deleted.
    fn delete(
        &mut self,
        collection: &str,
        filter: &Document,
        multi: bool,
    ) -> Result<u64, Self::Error>;
    /// The matching documents in `_id` order, logical when `expand`, stored otherwise.
    fn find(
        &mut self,
        collection: &str,
        filter: &Document,
        expand: bool,
    ) -> Result<Vec<Document>, Self::Error>;
    /// Every invariant problem of every policy.
    fn verify(&mut self) -> Result<Vec<Violation>, Self::Error>;
    /// Applies `writes` to the stored collections behind the pattern layer's back.
    fn write_behind(&mut self, writes: Vec<Write>) -> Result<(), Self::Error>;
    /// Makes a later commit fail, as a crash between commits would: at most `commits` more
    /// succeed first (a backend may count its commits its own way, e.g. by syncs).
    fn fail_commits_after(&mut self, commits: u64);
    /// Restarts after a failure (a crash): what was committed stays, unfinished
    /// migrations resume.
    fn restart(&mut self) -> Result<(), Self::Error>;
}

const BOOKS: &str = "books";
const OVERFLOW: &str = "extra_books";
const ARCHIVE: &str = "book_reviews";
const LINK: &str = "book_id";
const THRESHOLD: usize = 3;
const CAPACITY: usize = 2;
const KEEP: usize = 2;

fn outlier_policy() -> Pattern {
    Pattern::outlier(BOOKS, "tags")
        .threshold(THRESHOLD)
        .bucket_capacity(CAPACITY)
        .overflow_collection(OVERFLOW)
        .link_field(LINK)
        .into()
}

fn subset_policy() -> Pattern {
    Pattern::subset(BOOKS, "reviews")
        .keep(KEEP)
        .sort_by(doc! { "k": -1 })
        .archive_collection(ARCHIVE)
        .link_field(LINK)
        .into()
}

fn ok<T, E: fmt::Display>(result: Result<T, E>, what: &str) -> T {
    result.unwrap_or_else(|error| panic!("{what}: {error}"))
}

/// The documents of a model collection in `_id` order.
fn model_documents(model: &MemoryCollection) -> Vec<Document> {
    let options = FindOptions {
        sort: Some(doc! { "_id": 1 }),
        ..FindOptions::default()
    };
    model.find(&doc! {}, &options).expect("a valid query")
}

// ---------------------------------------------------------------------------------------
// The central property.

/// One step of a random sequence.
#[derive(Debug, Clone)]
enum Op {
    Insert {
        id: i32,
        tags: Vec<i32>,
        reviews: usize,
    },
    Push {
        id: i32,
        tags: Vec<i32>,
    },
    AddToSet {
        id: i32,
        tag: i32,
    },
    PullTag {
        tag: i32,
    },
    SetTagAt {
        id: i32,
        index: usize,
        tag: i32,
    },
    SetOther {
        id: i32,
        n: i32,
    },
    PushReview {
        id: i32,
    },
    PullReview {
        pick: i32,
    },
    Replace {
        id: i32,
        tags: Vec<i32>,
    },
    Delete {
        id: i32,
    },
    DeleteBucket {
        id: i32,
        bucket: i64,
    },
    DeleteArchived {
        pick: i32,
    },
    EditArchived {
        pick: i32,
    },
}

fn op() -> impl Strategy<Value = Op> {
    let id = 1..5i32;
    let tag = 0..12i32;
    let tags = proptest::collection::vec(0..12i32, 0..9);
    prop_oneof![
        3 => (id.clone(), tags.clone(), 0..5usize)
            .prop_map(|(id, tags, reviews)| Op::Insert { id, tags, reviews }),
        4 => (id.clone(), tags.clone()).prop_map(|(id, tags)| Op::Push { id, tags }),
        2 => (id.clone(), tag.clone()).prop_map(|(id, tag)| Op::AddToSet { id, tag }),
        1 => tag.clone().prop_map(|tag| Op::PullTag { tag }),
        1 => (id.clone(), 0..8usize, tag).prop_map(|(id, index, tag)| Op::SetTagAt { id, index, tag }),
        1 => (id.clone(), 0..9i32).prop_map(|(id, n)| Op::SetOther { id, n }),
        2 => id.clone().prop_map(|id| Op::PushReview { id }),
        1 => (0..40i32).prop_map(|pick| Op::PullReview { pick }),
        1 => (id.clone(), tags).prop_map(|(id, tags)| Op::Replace { id, tags }),
        1 => id.clone().prop_map(|id| Op::Delete { id }),
        1 => (id, 0..3i64).prop_map(|(id, bucket)| Op::DeleteBucket { id, bucket }),
        1 => (0..40i32).prop_map(|pick| Op::DeleteArchived { pick }),
        1 => (0..40i32).prop_map(|pick| Op::EditArchived { pick }),
    ]
}

fn review(k: i32) -> Bson {
    Bson::Document(doc! { "k": k, "t": "fine" })
}

fn int_array(values: &[i32]) -> Vec<Bson> {
    values.iter().copied().map(Bson::Int32).collect()
}

/// The same logical statement for the target and the model; `None` for a side write, which
/// the model answers on the logical arrays ([`model_side_write`]).
enum Statement {
    Insert(Document),
    Update {
        filter: Document,
        update: Document,
        multi: bool,
    },
    Replace {
        filter: Document,
        replacement: Document,
    },
    Delete {
        filter: Document,
    },
    Side {
        collection: &'static str,
        filter: Document,
        update: Option<Document>,
    },
}

/// Review keys: unique, handed out by a counter as the steps run, so that the subset's
/// order (`k` descending) has no ties; `pick`s choose a key handed out already.
#[derive(Default)]
struct Keys {
    next: i32,
}

impl Keys {
    fn fresh(&mut self) -> i32 {
        self.next += 1;
        self.next
    }

    fn pick(&self, pick: i32) -> i32 {
        pick % self.next.max(1) + 1
    }
}

fn statement(op: &Op, keys: &mut Keys) -> Statement {
    match op {
        Op::Insert { id, tags, reviews } => Statement::Insert(doc! {
            "_id": id,
            "n": 0,
            "tags": int_array(tags),
            "reviews": (0..*reviews).map(|_| review(keys.fresh())).collect::<Vec<_>>(),
        }),
        Op::Push { id, tags } => Statement::Update {
            filter: doc! { "_id": id },
            update: doc! { "$push": { "tags": { "$each": int_array(tags) } } },
            multi: false,
        },
        Op::AddToSet { id, tag } => Statement::Update {
            filter: doc! { "_id": id },
            update: doc! { "$addToSet": { "tags": tag } },
            multi: false,
        },
        Op::PullTag { tag } => Statement::Update {
            filter: doc! { "tags": tag },
            update: doc! { "$pull": { "tags": tag } },
            multi: true,
        },
        Op::SetTagAt { id, index, tag } => Statement::Update {
            filter: doc! { "_id": id },
            update: doc! { "$set": { format!("tags.{index}"): tag } },
            multi: false,
        },
        Op::SetOther { id, n } => Statement::Update {
            filter: doc! { "_id": id, "tags": { "$size": n } },
            update: doc! { "$inc": { "n": 1 } },
            multi: false,
        },
        Op::PushReview { id } => Statement::Update {
            filter: doc! { "_id": id },
            update: doc! { "$push": { "reviews": review(keys.fresh()) } },
            multi: false,
        },
        Op::PullReview { pick } => {
            let k = keys.pick(*pick);
            Statement::Update {
                filter: doc! { "reviews.k": k },
                update: doc! { "$pull": { "reviews": { "k": k } } },
                multi: true,
            }
        }
        Op::Replace { id, tags } => Statement::Replace {
            filter: doc! { "_id": id },
            replacement: doc! { "n": 7, "tags": int_array(tags), "reviews": [] },
        },
        Op::Delete { id } => Statement::Delete {
            filter: doc! { "_id": id },
        },
        Op::DeleteBucket { id, bucket } => Statement::Side {
            collection: OVERFLOW,
            filter: doc! { LINK: id, "bucket": bucket },
            update: None,
        },
        Op::DeleteArchived { pick } => Statement::Side {
            collection: ARCHIVE,
            filter: doc! { "k": keys.pick(*pick) },
            update: None,
        },
        Op::EditArchived { pick } => Statement::Side {
            collection: ARCHIVE,
            filter: doc! { "k": keys.pick(*pick) },
            update: Some(doc! { "$set": { "t": "edited" } }),
        },
    }
}

/// A direct write to a side collection, answered on the model's logical arrays: a bucket's
/// elements are the dense range it holds; an archive document is the review with its `k`.
/// Then the model's reviews are put in the subset's order, `k` descending.
fn model_side_write(model: &mut MemoryCollection, op: Option<(&Op, i32)>) {
    let mut documents = model_documents(model);
    for document in &mut documents {
        if let Ok(reviews) = document.get_array_mut("reviews") {
            let key = |value: &Bson| {
                value
                    .as_document()
                    .and_then(|review| review.get_i32("k").ok())
                    .unwrap_or_default()
            };
            reviews.sort_by_key(|value| std::cmp::Reverse(key(value)));
        }
        let Some((op, k)) = op else {
            continue;
        };
        match op {
            Op::DeleteBucket { id, bucket } if document.get("_id") == Some(&Bson::Int32(*id)) => {
                if let Ok(tags) = document.get_array_mut("tags") {
                    let start = THRESHOLD + *bucket as usize * CAPACITY;
                    if tags.len() > start {
                        let end = (start + CAPACITY).min(tags.len());
                        tags.drain(start..end);
                    }
                }
            }
            Op::DeleteArchived { .. } | Op::EditArchived { .. } => {
                if let Ok(reviews) = document.get_array_mut("reviews") {
                    let is_k = |value: &Bson| {
                        value.as_document().and_then(|review| review.get("k"))
                            == Some(&Bson::Int32(k))
                    };
                    if matches!(op, Op::DeleteArchived { .. }) {
                        reviews.retain(|value| !is_k(value));
                    } else {
                        for value in reviews.iter_mut().filter(|value| is_k(value)) {
                            if let Bson::Document(review) = value {
                                review.insert("t", "edited");
                            }
                        }
                    }
                }
            }
            _ => {}
        }
    }
    *model = MemoryCollection::new();
    for document in documents {
        model
            .insert_one(document)
            .expect("the model's own documents");
    }
}

fn run_step<T: Target>(
    target: &mut T,
    model: &mut MemoryCollection,
    keys: &mut Keys,
    op: &Op,
) -> Result<(), TestCaseError> {
    let side_key = match op {
        Op::DeleteArchived { pick } | Op::EditArchived { pick } => keys.pick(*pick),
        _ => 0,
    };
    let (ours, theirs) = match statement(op, keys) {
        Statement::Insert(document) => (
            target.insert_one(BOOKS, document.clone()).map(drop),
            model
                .insert_one(document)
                .map(drop)
                .map_err(|e| e.to_string()),
        ),
        Statement::Update {
            filter,
            update,
            multi,
        } => (
            target.update(BOOKS, &filter, &update, multi).map(drop),
            model
                .update(&filter, &update, multi, &UpdateOptions::default())
                .map(drop)
                .map_err(|e| e.to_string()),
        ),
        Statement::Replace {
            filter,
            replacement,
        } => (
            target.update(BOOKS, &filter, &replacement, false).map(drop),
            model
                .replace_one(&filter, &replacement, false)
                .map(drop)
                .map_err(|e| e.to_string()),
        ),
        Statement::Delete { filter } => (
            target.delete(BOOKS, &filter, true).map(drop),
            model
                .delete(&filter, true)
                .map(drop)
                .map_err(|e| e.to_string()),
        ),
        Statement::Side {
            collection,
            filter,
            update,
        } => {
            let ours = match update {
                Some(update) => target.update(collection, &filter, &update, true).map(drop),
                None => target.delete(collection, &filter, true).map(drop),
            };
            model_side_write(model, Some((op, side_key)));
            (ours, Ok(()))
        }
    };
    model_side_write(model, None);
    prop_assert_eq!(
        ours.is_ok(),
        theirs.is_ok(),
        "{:?}: the backend says {:?}, the model {:?}",
        op,
        ours.as_ref().map_err(ToString::to_string),
        theirs
    );
    let stored = target
        .find(BOOKS, &doc! {}, true)
        .map_err(|error| TestCaseError::fail(error.to_string()))?;
    prop_assert_eq!(stored, model_documents(model), "after {:?}", op);
    let violations = target
        .verify()
        .map_err(|error| TestCaseError::fail(error.to_string()))?;
    prop_assert!(violations.is_empty(), "after {:?}: {:?}", op, violations);
    Ok(())
}

/// How many cases [`central_property`] runs: `PROPTEST_CASES`, or `default`.
pub fn cases(default: u32) -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|cases| cases.parse().ok())
        .unwrap_or(default)
}

/// The suite's four tests for a backend, in the test file that invokes it:
/// `spillway_pattern::suite_tests!(Memory::new, 64);` with the harness's constructor and the
/// default number of [`central_property`] cases ([`cases`]).
#[macro_export]
macro_rules! suite_tests {
    ($make:expr, $cases:expr) => {
        #[test]
        fn central_property_against_the_unsplit_model() {
            $crate::suite::central_property($make, $crate::suite::cases($cases));
        }

        #[test]
        fn seed_layouts() {
            $crate::suite::seed_layouts($make);
        }

        #[test]
        fn verify_reports_damage_behind_the_layer() {
            $crate::suite::verify_cases($make);
        }

        #[test]
        fn interrupted_migrations_resume_without_loss() {
            $crate::suite::interrupted_migrations($make);
        }
    };
}

/// Random sequences of writes on `books` (an outlier policy on `tags`: threshold 3, buckets
/// of 2; a subset policy on `reviews` ordered by `k` descending, keeping 2) and direct writes to
/// both side collections, each compared with the unsplit model: every logical document
/// equal, the same statements failing, `verify` clean. `cases` sequences of up to 24 steps.
///
/// # Panics
/// On the first sequence where the backend and the model disagree, with the shrunk
/// sequence.
pub fn central_property<T: Target>(make: impl Fn() -> T, cases: u32) {
    let mut runner = TestRunner::new(Config {
        cases,
        failure_persistence: None,
        ..Config::default()
    });
    let result = runner.run(&proptest::collection::vec(op(), 1..24), |ops| {
        let mut target = make();
        ok(target.create_collection(BOOKS), "create");
        ok(target.set_pattern(outlier_policy()), "outlier policy");
        ok(target.set_pattern(subset_policy()), "subset policy");
        let mut model = MemoryCollection::new();
        let mut keys = Keys::default();
        for op in &ops {
            run_step(&mut target, &mut model, &mut keys, op)?;
        }
        Ok(())
    });
    if let Err(error) = result {
        panic!("the backend disagrees with the unsplit model: {error}");
    }
}

// ---------------------------------------------------------------------------------------
// The seeds' layouts.

/// The seed book (`outlier-pattern.txt`): 60 buyers against a threshold of 50 store the
/// first 50 in the book, `has_extras: true`, and the other 10 in one `extra_books` document
/// linked by `book_id`; a 5-buyer book stays whole and unflagged. The seed product
/// (`subset-pattern.txt`): 12 reviews keeping 10 store the 10 newest in the product and all
/// 12 in `reviews`, linked by `product_id`. Expanded reads give back what was inserted.
///
/// # Panics
/// When a layout differs.
pub fn seed_layouts<T: Target>(make: impl Fn() -> T) {
    let mut target = make();
    ok(target.create_collection("books"), "create books");
    ok(target.create_collection("products"), "create products");
    ok(
        target.set_pattern(
            Pattern::outlier("books", "customers_purchased")
                .threshold(50)
                .link_field("book_id")
                .into(),
        ),
        "outlier policy",
    );
    ok(
        target.set_pattern(
            Pattern::subset("products", "reviews")
                .keep(10)
                .sort_by(doc! { "review_date": -1 })
                .link_field("product_id")
                .into(),
        ),
        "subset policy",
    );
    let buyers: Vec<Bson> = (0..60)
        .map(|i| Bson::String(format!("user{i:02}")))
        .collect();
    let book = doc! { "_id": 1, "title": "Harry Potter", "customers_purchased": buyers.clone() };
    ok(target.insert_one("books", book.clone()), "insert book");
    let quiet =
        doc! { "_id": 2, "title": "Quiet", "customers_purchased": ["a", "b", "c", "d", "e"] };
    ok(
        target.insert_one("books", quiet.clone()),
        "insert quiet book",
    );
    let stored = ok(target.find("books", &doc! {}, false), "find books");
    assert_eq!(
        stored,
        vec![
            doc! { "_id": 1, "title": "Harry Potter", "customers_purchased": buyers[..50].to_vec(), "has_extras": true },
            quiet.clone(),
        ],
        "the stored books"
    );
    let extras = ok(target.find("extra_books", &doc! {}, false), "find extras");
    assert_eq!(extras.len(), 1, "one overflow document: {extras:?}");
    assert_eq!(extras[0].get("book_id"), Some(&Bson::Int32(1)));
    assert_eq!(
        extras[0].get_array("customers_purchased_extra").ok(),
        Some(&buyers[50..].to_vec()),
        "the overflow holds the other 10 buyers in order"
    );
    assert_eq!(
        ok(target.find("books", &doc! {}, true), "expanded books"),
        vec![book, quiet]
    );

    let reviews: Vec<Bson> = (1..=12)
        .map(|day| {
            Bson::Document(doc! {
                "review_author": format!("author{day}"),
                "review_date": bson::DateTime::from_millis(i64::from(day) * 86_400_000),
                "review_text": "good",
            })
        })
        .collect();
    let product = doc! { "_id": 1, "name": "Super Widget", "reviews": reviews.clone() };
    ok(target.insert_one("products", product), "insert product");
    let stored = ok(target.find("products", &doc! {}, false), "find products");
    let embedded = stored[0].get_array("reviews").expect("embedded reviews");
    let newest: Vec<Bson> = reviews.iter().rev().take(10).cloned().collect();
    assert_eq!(embedded, &newest, "the 10 newest reviews, newest first");
    let archive = ok(target.find("reviews", &doc! {}, false), "find archive");
    assert_eq!(archive.len(), 12, "every review archived");
    assert!(
        archive
            .iter()
            .all(|review| review.get("product_id") == Some(&Bson::Int32(1))),
        "each archived review links to the product"
    );
    let expanded = ok(target.find("products", &doc! {}, true), "expanded products");
    let logical = expanded[0].get_array("reviews").expect("logical reviews");
    assert_eq!(logical.len(), 12);
    let mut sorted = reviews;
    sorted.reverse();
    assert_eq!(
        logical, &sorted,
        "the logical array is the archive in the policy's order"
    );
    assert_eq!(ok(target.verify(), "verify"), Vec::new());
}

// ---------------------------------------------------------------------------------------
// Verify.

/// A target with the suite's two policies and six books, each with 10 tags (3 in the book,
/// then buckets of 2, 2, 2 and 1) and 4 reviews.
fn seeded<T: Target>(make: &impl Fn() -> T) -> T {
    let mut target = make();
    ok(target.create_collection(BOOKS), "create");
    ok(target.set_pattern(outlier_policy()), "outlier policy");
    ok(target.set_pattern(subset_policy()), "subset policy");
    for id in 1..=6 {
        let tags: Vec<i32> = (0..10).collect();
        let reviews: Vec<Bson> = (0..4).map(|k| review(id * 10 + k)).collect();
        ok(
            target.insert_one(
                BOOKS,
                doc! { "_id": id, "tags": int_array(&tags), "reviews": reviews },
            ),
            "insert",
        );
    }
    assert_eq!(
        ok(target.verify(), "verify"),
        Vec::new(),
        "a fresh layout verifies clean"
    );
    target
}

fn side_document<T: Target>(target: &mut T, collection: &str, filter: &Document) -> Document {
    ok(target.find(collection, filter, false), "find side document")
        .into_iter()
        .next()
        .unwrap_or_else(|| panic!("no document of {collection} matches {filter}"))
}

/// Damage written behind the layer's back, one kind per fresh target, each reported by
/// `verify` naming the main document: a missing bucket, a bucket with too many elements, a
/// flag cleared while buckets exist, an orphan bucket, a missing archive document of an
/// embedded review (one the main document does not hold leaves no trace to check), an
/// embedded review the archive does not hold.
///
/// # Panics
/// When a kind of damage goes unreported.
pub fn verify_cases<T: Target>(make: impl Fn() -> T) {
    type Damage<T> = fn(&mut T) -> Vec<Write>;
    let cases: Vec<(&str, Damage<T>)> = vec![
        ("a missing bucket", |target| {
            let bucket = side_document(target, OVERFLOW, &doc! { LINK: 2, "bucket": 1 });
            vec![Write::Delete {
                collection: OVERFLOW.to_string(),
                id: bucket.get("_id").cloned().unwrap_or(Bson::Null),
            }]
        }),
        ("an overfull bucket", |target| {
            let mut bucket = side_document(target, OVERFLOW, &doc! { LINK: 2, "bucket": 0 });
            bucket.insert("tags_extra", int_array(&[1, 2, 3, 4, 5]));
            vec![Write::Replace {
                collection: OVERFLOW.to_string(),
                document: bucket,
            }]
        }),
        ("a cleared flag", |target| {
            let mut book = side_document(target, BOOKS, &doc! { "_id": 2 });
            book.insert("has_extras", false);
            vec![Write::Replace {
                collection: BOOKS.to_string(),
                document: book,
            }]
        }),
        ("an orphan bucket", |_| {
            vec![Write::Insert {
                collection: OVERFLOW.to_string(),
                document: doc! { "_id": "orphan", LINK: 99, "bucket": 0, "tags_extra": [1] },
            }]
        }),
        ("a missing archive document", |target| {
            let archived = side_document(target, ARCHIVE, &doc! { "k": 23 });
            vec![Write::Delete {
                collection: ARCHIVE.to_string(),
                id: archived.get("_id").cloned().unwrap_or(Bson::Null),
            }]
        }),
        ("an embedded review the archive lacks", |target| {
            let mut book = side_document(target, BOOKS, &doc! { "_id": 2 });
            book.insert("reviews", vec![review(999), review(998)]);
            vec![Write::Replace {
                collection: BOOKS.to_string(),
                document: book,
            }]
        }),
    ];
    for (what, damage) in cases {
        let mut target = seeded(&make);
        let writes = damage(&mut target);
        ok(target.write_behind(writes), what);
        let violations = ok(target.verify(), what);
        assert!(!violations.is_empty(), "{what} goes unreported");
        let expected_id = if what == "an orphan bucket" { 99 } else { 2 };
        assert!(
            violations
                .iter()
                .any(|violation| violation.to_string().contains(&expected_id.to_string())),
            "{what}: no violation names _id {expected_id}: {violations:?}"
        );
    }
}

// ---------------------------------------------------------------------------------------
// Interrupted migrations.

/// 300 books (two migration batches), some with more tags than the threshold.
fn many_books<T: Target>(make: &impl Fn() -> T) -> (T, Vec<Document>) {
    let mut target = make();
    ok(target.create_collection(BOOKS), "create");
    let mut inserted = Vec::new();
    for id in 0..300 {
        let length = (id % 9) as usize;
        let tags: Vec<i32> = (0..length as i32).map(|tag| tag + id).collect();
        let document = doc! { "_id": id, "n": id, "tags": int_array(&tags) };
        ok(target.insert_one(BOOKS, document.clone()), "insert");
        inserted.push(document);
    }
    (target, inserted)
}

/// Whether the stored layout is the outlier policy's: no main array over the threshold, and
/// overflow documents for the long ones.
fn is_split<T: Target>(target: &mut T) -> bool {
    let stored = ok(target.find(BOOKS, &doc! {}, false), "stored");
    let short = stored.iter().all(|document| {
        document
            .get_array("tags")
            .is_ok_and(|tags| tags.len() <= THRESHOLD)
    });
    short && !ok(target.find(OVERFLOW, &doc! {}, false), "overflow").is_empty()
}

/// A policy applied to 300 books (two migration batches) with a later commit failing as a
/// crash would, then the target restarted: whatever the failure interrupted (the declaration
/// or a migration batch), every logical document is what was inserted and `verify` is clean;
/// a declaration the failure undid can be made again, and an interrupted migration resumes.
/// Then the policy removed the same way: the stored documents are the inserted ones again and
/// the overflow collection, which the policy created, is empty. The failure is placed after
/// 1 to 4 commits, one run each; at least one run must have interrupted a migration mid-way.
///
/// # Panics
/// When a document is lost or changed, or the layout is wrong after the restart.
pub fn interrupted_migrations<T: Target>(make: impl Fn() -> T) {
    let mut interrupted_apply = 0;
    let mut interrupted_removal = 0;
    for commits in 1..=4 {
        let (mut target, inserted) = many_books(&make);
        target.fail_commits_after(commits);
        let failed = target.set_pattern(outlier_policy()).is_err();
        ok(target.restart(), "restart after the failure");
        assert_eq!(
            ok(target.find(BOOKS, &doc! {}, true), "expanded"),
            inserted,
            "after a failure {commits} commits into applying the policy"
        );
        if failed && is_split(&mut target) {
            interrupted_apply += 1;
        } else if failed {
            ok(target.set_pattern(outlier_policy()), "declaring again");
        }
        assert!(is_split(&mut target), "the migration finished");
        assert_eq!(ok(target.verify(), "verify"), Vec::new());

        target.fail_commits_after(commits);
        let failed = target.remove_pattern(BOOKS, "tags").is_err();
        ok(target.restart(), "restart after the failure");
        if failed && ok(target.find(BOOKS, &doc! {}, false), "stored") == inserted {
            interrupted_removal += 1;
        } else if failed {
            ok(target.remove_pattern(BOOKS, "tags"), "removing again");
        }
        assert_eq!(
            ok(target.find(BOOKS, &doc! {}, false), "stored"),
            inserted,
            "after a failure {commits} commits into removing the policy"
        );
        assert_eq!(
            ok(target.find(OVERFLOW, &doc! {}, false), "overflow"),
            Vec::<Document>::new(),
            "nothing is left in the overflow collection"
        );
        assert_eq!(ok(target.verify(), "verify"), Vec::new());
    }
    assert!(
        interrupted_apply > 0 && interrupted_removal > 0,
        "no failure interrupted a migration mid-way ({interrupted_apply} applying, {interrupted_removal} removing)"
    );
}
