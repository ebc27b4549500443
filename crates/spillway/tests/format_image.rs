//! The committed format test images (`tests/format-images/`, see the README there): every
//! version of Spillway must open a copy of each and read exactly what the generator wrote, so
//! that a change of the on-disk format cannot slip in unnoticed.

use std::path::Path;

use spillway::bson::{Bson, Document};
use spillway::{Database, doc};

fn copy_image(version: &str) -> tempfile::TempDir {
    let source = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/format-images")
        .join(version);
    let copy = tempfile::tempdir().unwrap();
    let mut n_files = 0;
    for entry in std::fs::read_dir(&source).unwrap() {
        let entry = entry.unwrap();
        let name = entry.file_name();
        if name == "README.md" {
            continue;
        }
        std::fs::copy(entry.path(), copy.path().join(&name)).unwrap();
        n_files += 1;
    }
    assert!(n_files >= 5, "image {version} has only {n_files} files");
    copy
}

fn expected_books() -> Vec<Document> {
    let mut books = Vec::new();
    for id in 0..11 {
        let mut book = doc! { "_id": id, "title": format!("book {id}"), "year": 2000 + id };
        if id < 4 {
            book.insert("old", true);
        }
        books.push(book);
    }
    for id in 100..130 {
        books.push(doc! { "_id": id, "title": format!("after the checkpoint {id}"), "year": 2026 });
    }
    books
}

fn check_contents(db: &Database) {
    assert_eq!(
        db.list_collection_names().run().unwrap(),
        ["books", "extra_sales", "sales"]
    );
    let books = db.collection::<Document>("books");
    let found: Vec<Document> = books
        .find(doc! {})
        .run()
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(found, expected_books());
    assert_eq!(books.list_index_names().run().unwrap(), ["_id_", "title_1"]);
    // The unique index answers and still refuses a duplicate.
    let by_title = books
        .find_one(doc! { "title": "book 3" })
        .run()
        .unwrap()
        .unwrap();
    assert_eq!(by_title.get_i32("_id").unwrap(), 3);
    assert!(
        books
            .insert_one(doc! { "_id": 999, "title": "book 3" })
            .run()
            .is_err()
    );

    let sales = db.collection::<Document>("sales");
    let stored: Vec<Document> = sales
        .find(doc! {})
        .stored(true)
        .run()
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(
        stored,
        [
            doc! { "_id": "quiet", "buyers": ["x", "y"] },
            doc! { "_id": "viral", "buyers": ["a", "b", "c"], "has_extras": true },
        ]
    );
    let n_buckets = db
        .collection::<Document>("extra_sales")
        .count_documents(doc! {})
        .run()
        .unwrap();
    assert_eq!(n_buckets, 1);
    let found: Vec<Document> = sales
        .find(doc! {})
        .run()
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    let buyers = |ids: &[&str]| Bson::Array(ids.iter().map(|&id| Bson::from(id)).collect());
    assert_eq!(found.len(), 2, "{found:?}");
    assert_eq!(found[0].get_str("_id").unwrap(), "quiet");
    assert_eq!(found[0].get("buyers"), Some(&buyers(&["x", "y"])));
    assert_eq!(found[1].get_str("_id").unwrap(), "viral");
    assert_eq!(
        found[1].get("buyers"),
        Some(&buyers(&["a", "b", "c", "d", "e", "f", "g"]))
    );
    assert!(db.verify().unwrap().is_clean());
    assert!(db.verify_patterns().unwrap().is_empty());
}

#[test]
fn format_v1_image_opens_with_its_exact_contents() {
    let copy = copy_image("v1");
    let db = Database::open(copy.path()).unwrap();
    check_contents(&db);
    // Still writable, and the write survives a reopen next to the old data.
    db.collection::<Document>("books")
        .insert_one(doc! { "_id": 500, "title": "written by this version" })
        .run()
        .unwrap();
    drop(db);
    let db = Database::open(copy.path()).unwrap();
    assert_eq!(
        db.collection::<Document>("books")
            .count_documents(doc! {})
            .run()
            .unwrap(),
        42
    );
}
