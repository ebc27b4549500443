//! Bad input changes nothing: every refused operation returns the right typed [`ErrorKind`]
//! and a message naming the problem, and leaves every collection and index exactly as it
//! was.
//!
//! A digest of the whole database (every document of every collection in `_id` order, and
//! every index list) is taken before each bad operation and compared after it; the messages
//! are snapshotted together. At the end the database is reopened from disk and the digest
//! checked again, so nothing refused reached the log either.

use std::fmt::Write as _;

use spillway::bson::{Bson, Document};
use spillway::{
    Database, Error, ErrorKind, IndexModel, IndexOptions, MAX_COLLECTION_NAME_LEN, doc,
};

/// Every collection's documents in `_id` order and its indexes, as canonical Extended JSON.
fn digest(db: &Database) -> String {
    let mut digest = String::new();
    for name in db.list_collection_names().run().unwrap() {
        let collection = db.collection::<Document>(&name);
        writeln!(digest, "collection {name}").unwrap();
        for index in collection
            .list_indexes()
            .run()
            .unwrap()
            .collect::<spillway::Result<Vec<_>>>()
            .unwrap()
        {
            let options = index.options.unwrap_or_default();
            writeln!(
                digest,
                "  index {:?} {} unique: {:?}",
                options.name, index.keys, options.unique
            )
            .unwrap();
        }
        let documents = collection
            .find(doc! {})
            .sort(doc! { "_id": 1 })
            .run()
            .unwrap();
        for document in documents {
            let json = Bson::Document(document.unwrap()).into_canonical_extjson();
            writeln!(digest, "  {json}").unwrap();
        }
    }
    digest
}

/// The variant's name, to assert and snapshot the kind of an error.
fn kind_name(kind: &ErrorKind) -> &'static str {
    match kind {
        ErrorKind::DuplicateKey { .. } => "DuplicateKey",
        ErrorKind::InvalidFilter(_) => "InvalidFilter",
        ErrorKind::InvalidUpdate(_) => "InvalidUpdate",
        ErrorKind::InvalidDocument(_) => "InvalidDocument",
        ErrorKind::InvalidArgument(_) => "InvalidArgument",
        ErrorKind::DocumentTooLarge { .. } => "DocumentTooLarge",
        ErrorKind::InvalidCollectionName { .. } => "InvalidCollectionName",
        ErrorKind::InvalidIndex { .. } => "InvalidIndex",
        ErrorKind::ParallelArrays { .. } => "ParallelArrays",
        ErrorKind::IndexNotFound { .. } => "IndexNotFound",
        ErrorKind::Corruption { .. } => "Corruption",
        ErrorKind::Storage(_) => "Storage",
        ErrorKind::Serialization { .. } => "Serialization",
        ErrorKind::TransactionAborted { .. } => "TransactionAborted",
        _ => "(a kind this test does not know)",
    }
}

/// Runs bad operations against one database and records what each said.
struct Checker<'a> {
    db: &'a Database,
    expected_digest: String,
    report: String,
}

impl Checker<'_> {
    /// `operation` must fail with `expected` kind, with a message containing `names`, and
    /// leave the digest unchanged.
    fn refused<R: std::fmt::Debug>(
        &mut self,
        case: &str,
        expected: &str,
        names: &str,
        operation: impl FnOnce() -> Result<R, Error>,
    ) {
        let error = match operation() {
            Ok(value) => panic!("{case}: expected {expected}, the operation returned {value:?}"),
            Err(error) => error,
        };
        let message = error.to_string();
        assert_eq!(kind_name(error.kind()), expected, "{case}: {message}");
        assert!(
            message.contains(names),
            "{case}: the message {message:?} does not name {names:?}"
        );
        assert!(
            !message.ends_with('.'),
            "{case}: trailing period in {message:?}"
        );
        assert_eq!(
            digest(self.db),
            self.expected_digest,
            "{case}: the refused operation changed the database"
        );
        // Long messages (16 MiB values are not in them, but sizes are) stay whole: they are
        // what a user sees.
        writeln!(self.report, "{case}\n  {expected}: {message}").unwrap();
    }
}

fn unique(name: &str) -> IndexOptions {
    IndexOptions::builder().unique(true).name(name).build()
}

/// Two collections with indexes (one unique) and data.
fn populate(db: &Database) {
    let products = db.collection::<Document>("products");
    products
        .create_index(IndexModel {
            keys: doc! { "sku": 1 },
            options: Some(unique("sku_unique")),
        })
        .run()
        .unwrap();
    products
        .create_index(IndexModel {
            keys: doc! { "tags": 1, "price": -1 },
            options: None,
        })
        .run()
        .unwrap();
    products
        .insert_many([
            doc! { "_id": 1, "sku": "a-1", "price": 10, "tags": ["red", "big"], "stock": 3 },
            doc! { "_id": 2, "sku": "b-2", "price": 25.5, "tags": ["blue"], "stock": 0 },
            doc! { "_id": 3, "sku": "c-3", "price": 7, "tags": [], "stock": "n/a" },
            doc! { "_id": 4, "sku": "d-4", "price": 99, "dims": { "w": 1, "h": 2 }, "stock": 8 },
        ])
        .run()
        .unwrap();
    let reviews = db.collection::<Document>("reviews");
    reviews
        .create_index(IndexModel {
            keys: doc! { "product": 1 },
            options: None,
        })
        .run()
        .unwrap();
    reviews
        .insert_many([
            doc! { "_id": "r1", "product": 1, "stars": 4, "text": "fine" },
            doc! { "_id": "r2", "product": 1, "stars": 2 },
            doc! { "_id": "r3", "product": 2, "stars": 5, "text": "great" },
        ])
        .run()
        .unwrap();
}

/// A document nested `depth` levels deep (the outer document is level 1).
fn nested(depth: usize) -> Document {
    let mut document = doc! { "leaf": 1 };
    for _ in 1..depth {
        document = doc! { "n": document };
    }
    document
}

/// A string of `len` bytes.
fn filler(len: usize) -> String {
    "x".repeat(len)
}

#[test]
fn refused_operations_change_nothing_even_after_reopen() {
    let directory = tempfile::tempdir().unwrap();
    let db = Database::open(directory.path()).unwrap();
    populate(&db);
    let expected_digest = digest(&db);
    let mut check = Checker {
        db: &db,
        expected_digest: expected_digest.clone(),
        report: String::new(),
    };
    let products = db.collection::<Document>("products");
    let reviews = db.collection::<Document>("reviews");

    // Malformed filters.
    check.refused(
        "filter: unknown operator",
        "InvalidFilter",
        "$bogus",
        || {
            products
                .delete_many(doc! { "price": { "$bogus": 1 } })
                .run()
        },
    );
    check.refused("filter: $and not an array", "InvalidFilter", "$and", || {
        products
            .update_many(doc! { "$and": 1 }, doc! { "$set": { "x": 1 } })
            .run()
    });
    check.refused("filter: $in not an array", "InvalidFilter", "$in", || {
        reviews.delete_one(doc! { "stars": { "$in": 5 } }).run()
    });
    check.refused(
        "filter: unknown top-level operator",
        "InvalidFilter",
        "$alwaysTrue",
        || {
            products
                .find_one_and_delete(doc! { "$alwaysTrue": 1 })
                .run()
        },
    );
    check.refused(
        "filter: count with a bad $regex",
        "InvalidFilter",
        "$regex",
        || {
            products
                .count_documents(doc! { "sku": { "$regex": 3 } })
                .run()
        },
    );

    // Malformed updates.
    check.refused(
        "update: unknown operator",
        "InvalidUpdate",
        "$frobnicate",
        || {
            products
                .update_many(doc! {}, doc! { "$frobnicate": { "price": 1 } })
                .run()
        },
    );
    check.refused(
        "update: the same path twice",
        "InvalidUpdate",
        "price",
        || {
            products
                .update_one(
                    doc! { "_id": 1 },
                    doc! { "$set": { "price": 1 }, "$inc": { "price": 1 } },
                )
                .run()
        },
    );
    check.refused(
        "update: a path and its prefix",
        "InvalidUpdate",
        "dims",
        || {
            products
                .update_one(
                    doc! { "_id": 4 },
                    doc! { "$set": { "dims": {}, "dims.w": 3 } },
                )
                .run()
        },
    );
    check.refused(
        "update_many: $inc on a string in the third match",
        "InvalidUpdate",
        "stock",
        || {
            products
                .update_many(doc! {}, doc! { "$inc": { "stock": 1 } })
                .run()
        },
    );
    check.refused(
        "update: $push onto a string",
        "InvalidUpdate",
        "$push",
        || {
            reviews
                .update_one(doc! { "_id": "r1" }, doc! { "$push": { "text": "more" } })
                .run()
        },
    );
    check.refused("update: changing _id", "InvalidUpdate", "_id", || {
        products
            .update_one(doc! { "_id": 2 }, doc! { "$set": { "_id": 20 } })
            .run()
    });
    check.refused("update: empty", "InvalidUpdate", "empty", || {
        products.update_one(doc! { "_id": 2 }, doc! {}).run()
    });
    check.refused(
        "update: a replacement",
        "InvalidUpdate",
        "operators",
        || {
            products
                .update_one(doc! { "_id": 2 }, doc! { "price": 1 })
                .run()
        },
    );
    check.refused(
        "replace: with operators",
        "InvalidUpdate",
        "operators",
        || {
            products
                .replace_one(doc! { "_id": 2 }, doc! { "$set": { "price": 1 } })
                .run()
        },
    );
    check.refused(
        "find_one_and_update: $mul on an array",
        "InvalidUpdate",
        "$mul",
        || {
            products
                .find_one_and_update(doc! { "_id": 1 }, doc! { "$mul": { "tags": 2 } })
                .run()
        },
    );

    // '$' names where MongoDB refuses them.
    check.refused(
        "replace: a top-level '$' field",
        "InvalidUpdate",
        "$price",
        || {
            products
                .replace_one(doc! { "_id": 2 }, doc! { "sku": "b-2", "$price": 1 })
                .run()
        },
    );
    check.refused(
        "update: $set of a '$' field",
        "InvalidUpdate",
        "$hidden",
        || {
            products
                .update_one(doc! { "_id": 2 }, doc! { "$set": { "$hidden": 1 } })
                .run()
        },
    );
    check.refused(
        "upsert: $set of a value holding a '$' field",
        "InvalidUpdate",
        "$oops",
        || {
            products
                .update_one(
                    doc! { "_id": 77 },
                    doc! { "$set": { "meta": { "$oops": 1 } } },
                )
                .upsert(true)
                .run()
        },
    );
    check.refused(
        "insert: '$' field inside _id",
        "InvalidDocument",
        "$k",
        || products.insert_one(doc! { "_id": { "$k": 1 } }).run(),
    );

    // Invalid documents.
    check.refused("insert: an array _id", "InvalidDocument", "_id", || {
        products.insert_one(doc! { "_id": [1, 2] }).run()
    });
    check.refused(
        "insert: nesting deeper than 100",
        "InvalidDocument",
        "101",
        || {
            reviews
                .insert_one(doc! { "_id": "deep", "body": nested(100) })
                .run()
        },
    );
    check.refused(
        "insert: larger than 16 MiB",
        "DocumentTooLarge",
        "16777216",
        || {
            reviews
                .insert_one(doc! { "_id": "big", "text": filler(16 * 1024 * 1024) })
                .run()
        },
    );
    check.refused(
        "insert_many: first document too deep",
        "InvalidDocument",
        "document 0 of the batch",
        || {
            reviews
                .insert_many([doc! { "body": nested(101) }])
                .ordered(false)
                .run()
        },
    );

    // Invalid collection names.
    let long_name = "c".repeat(MAX_COLLECTION_NAME_LEN + 1);
    for (case, name, names) in [
        ("collection name: empty", "", "empty"),
        ("collection name: '$'", "price$", "'$'"),
        ("collection name: NUL", "a\0b", "NUL"),
        ("collection name: too long", long_name.as_str(), "255 bytes"),
        ("collection name: system.", "system.users", "system."),
    ] {
        check.refused(case, "InvalidCollectionName", names, || {
            db.collection::<Document>(name)
                .insert_one(doc! { "_id": 1 })
                .run()
        });
    }
    check.refused(
        "create_collection: '$'",
        "InvalidCollectionName",
        "'$'",
        || db.create_collection("a$").run(),
    );

    // Unique violations.
    check.refused(
        "insert_one: duplicate _id",
        "DuplicateKey",
        "'_id_': 1",
        || products.insert_one(doc! { "_id": 1, "sku": "new" }).run(),
    );
    check.refused(
        "insert_one: duplicate sku",
        "DuplicateKey",
        "sku_unique",
        || products.insert_one(doc! { "_id": 9, "sku": "c-3" }).run(),
    );
    check.refused(
        "insert_many: first document a duplicate",
        "DuplicateKey",
        "nothing was inserted",
        || {
            products
                .insert_many([doc! { "_id": 10, "sku": "a-1" }, doc! { "_id": 2 }])
                .ordered(false)
                .run()
        },
    );
    check.refused("update_one: sku collides", "DuplicateKey", "b-2", || {
        products
            .update_one(doc! { "_id": 1 }, doc! { "$set": { "sku": "b-2" } })
            .run()
    });
    check.refused(
        "update_many: the second match collides",
        "DuplicateKey",
        "sku_unique",
        || {
            products
                .update_many(
                    doc! { "_id": { "$in": [3, 4] } },
                    doc! { "$set": { "sku": "a-1" } },
                )
                .run()
        },
    );
    check.refused(
        "upsert: inserts a duplicate sku",
        "DuplicateKey",
        "d-4",
        || {
            products
                .update_one(doc! { "_id": 50 }, doc! { "$set": { "sku": "d-4" } })
                .upsert(true)
                .run()
        },
    );
    check.refused("replace: sku collides", "DuplicateKey", "a-1", || {
        products
            .replace_one(doc! { "_id": 2 }, doc! { "sku": "a-1" })
            .run()
    });
    check.refused(
        "find_one_and_replace upsert: duplicate sku",
        "DuplicateKey",
        "c-3",
        || {
            products
                .find_one_and_replace(doc! { "_id": 60 }, doc! { "sku": "c-3" })
                .upsert(true)
                .run()
        },
    );
    check.refused(
        "create_index: unique over duplicates",
        "DuplicateKey",
        "product",
        || {
            reviews
                .create_index(IndexModel {
                    keys: doc! { "product": 1, "missing": 1 },
                    options: Some(unique("product_missing")),
                })
                .run()
        },
    );

    // Oversized documents produced by updates.
    let half = filler(9 * 1024 * 1024);
    check.refused(
        "update: grows past 16 MiB",
        "DocumentTooLarge",
        "16777216",
        || {
            reviews
                .update_one(
                    doc! { "_id": "r2" },
                    doc! { "$set": { "a": half.clone(), "b": half.clone() } },
                )
                .run()
        },
    );
    check.refused(
        "find_one_and_update: $push grows past 16 MiB",
        "DocumentTooLarge",
        "16777216",
        || {
            reviews
                .find_one_and_update(
                    doc! { "product": 2 },
                    doc! { "$push": { "pad": { "$each": [half.clone(), half.clone()] } } },
                )
                .run()
        },
    );
    check.refused(
        "update: nests deeper than 100",
        "InvalidDocument",
        "101",
        || {
            products
                .update_one(doc! { "_id": 4 }, doc! { "$set": { "dims.w": nested(99) } })
                .run()
        },
    );

    let report = std::mem::take(&mut check.report);
    insta::assert_snapshot!("bad_input_messages", report);

    // Collection handles share the database: all of them must go to release the directory.
    drop((products, reviews, db));
    let reopened = Database::open(directory.path()).unwrap();
    assert_eq!(
        digest(&reopened),
        expected_digest,
        "after reopening from disk"
    );
}

/// DBRef's `$ref`, `$id` and `$db` are the `$` names a document may store, at any depth
/// (outside `_id`), through inserts, replacements and updates alike.
#[test]
fn dbref_field_names_are_stored() {
    let db = Database::open_in_memory().unwrap();
    let posts = db.collection::<Document>("posts");
    let author = doc! { "$ref": "users", "$id": 7, "$db": "blog" };
    posts
        .insert_one(doc! { "_id": 1, "author": author.clone(), "refs": [author.clone()] })
        .run()
        .unwrap();
    posts
        .insert_one(doc! { "$ref": "users", "$id": 8 })
        .run()
        .unwrap();
    posts
        .replace_one(doc! { "_id": 1 }, doc! { "author": author.clone() })
        .run()
        .unwrap();
    posts
        .update_one(
            doc! { "_id": 1 },
            doc! { "$push": { "refs": author.clone() } },
        )
        .run()
        .unwrap();
    let stored = posts.find_one(doc! { "_id": 1 }).run().unwrap().unwrap();
    assert_eq!(
        stored,
        doc! { "_id": 1, "author": author.clone(), "refs": [author] }
    );
    assert_eq!(posts.count_documents(doc! {}).run().unwrap(), 2);
}

/// MongoDB 5.0+ stores field names starting with `$` outside `_id`: inserts (at any depth),
/// upserts seeded from the filter, and replacements below the top level keep them as data.
#[test]
fn dollar_prefixed_field_names_are_data_outside_id() {
    let db = Database::open_in_memory().unwrap();
    let items = db.collection::<Document>("items");
    items
        .insert_one(doc! { "_id": 1, "$x": 1, "a": { "b": [1, { "$y": 2 }] } })
        .run()
        .unwrap();
    items
        .insert_many([doc! { "_id": 2, "$x": 1 }, doc! { "_id": 3 }])
        .run()
        .unwrap();
    items
        .update_one(
            doc! { "_id": 4, "meta": { "$eq": { "$x": 1 } } },
            doc! { "$set": { "b": 1 } },
        )
        .upsert(true)
        .run()
        .unwrap();
    items
        .replace_one(doc! { "_id": 3 }, doc! { "meta": { "$z": 3 } })
        .run()
        .unwrap();
    let stored: Vec<Document> = items
        .find(doc! {})
        .run()
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(
        stored,
        [
            doc! { "_id": 1, "$x": 1, "a": { "b": [1, { "$y": 2 }] } },
            doc! { "_id": 2, "$x": 1 },
            doc! { "_id": 3, "meta": { "$z": 3 } },
            doc! { "_id": 4, "meta": { "$x": 1 }, "b": 1 },
        ]
    );
}
