//! Index maintenance over one large array takes memory proportional to the index entries,
//! never entries × document size: building an index over a document with a 20,000-element
//! array (plain and unique), inserting such a document under a multikey index, and pushing
//! to it each stay far below what a copy of the document per entry would take (about 2.3 GB
//! for 4,000 elements, and a killed process at 21,809).
//!
//! Each test re-executes this binary with `SPILLWAY_INDEX_MEMORY_CHILD` set to run only its
//! own scenario in a fresh process, which prints its peak resident set size (`VmHWM` from
//! `/proc/self/status`) when done; the parent asserts the bound. The child runs under an
//! address space limit, so a regression fails quickly instead of exhausting the machine.

use std::process::Command;

use spillway::bson::{Bson, Document};
use spillway::{Database, IndexModel, IndexOptions, doc};

const CHILD_ENV: &str = "SPILLWAY_INDEX_MEMORY_CHILD";
const N_ELEMENTS: usize = 20_000;
/// The peak a scenario may reach. The document's elements take about 1 MB encoded; a few
/// copies of the document, the entries and the test binary itself fit easily.
const PEAK_LIMIT_KIB: u64 = 300 * 1024;
/// The child's address space limit (`ulimit -v`), so that a regression fails the test with an
/// allocation failure instead of taking the machine's memory (the quadratic build took 23 GB).
const ADDRESS_SPACE_LIMIT_KIB: u64 = 2 * 1024 * 1024;

/// A document whose `buyers` array has [`N_ELEMENTS`] distinct strings.
fn big_document(id: i64) -> Document {
    let buyers: Vec<Bson> = (0..N_ELEMENTS)
        .map(|n| Bson::String(format!("buyer-{n:06}-of-book-{id}")))
        .collect();
    doc! { "_id": id, "title": "popular", "buyers": buyers }
}

fn buyers_index(unique: bool) -> IndexModel {
    IndexModel::builder()
        .keys(doc! { "buyers": 1 })
        .options(IndexOptions::builder().unique(unique).build())
        .build()
}

/// The process's peak resident set size, in KiB.
fn peak_rss_kib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").expect("read /proc/self/status");
    let line = status
        .lines()
        .find(|line| line.starts_with("VmHWM:"))
        .expect("VmHWM in /proc/self/status");
    line.trim_start_matches("VmHWM:")
        .trim()
        .trim_end_matches("kB")
        .trim()
        .parse()
        .expect("VmHWM is a number of kB")
}

/// Runs `scenario` in a child process when this is the parent, or runs it and prints the
/// peak when this is that child; in the parent, returns the child's peak in KiB.
fn peak_of(test_name: &str, scenario: impl FnOnce(&Database)) -> Option<u64> {
    if std::env::var_os(CHILD_ENV).is_some() {
        let db = Database::open_in_memory().unwrap();
        scenario(&db);
        // On its own line: the harness prints the test's name before it, without a newline.
        println!("\npeak-rss-kib {}", peak_rss_kib());
        return None;
    }
    let output = Command::new("sh")
        .arg("-c")
        .arg(format!(
            "ulimit -v {ADDRESS_SPACE_LIMIT_KIB} && exec \"$0\" \"$@\""
        ))
        .arg(std::env::current_exe().unwrap())
        .args([test_name, "--exact", "--nocapture", "--test-threads=1"])
        .env(CHILD_ENV, "1")
        .output()
        .expect("run the child");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "child failed: {}\n{stdout}\n{}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
    let peak = stdout
        .lines()
        .find_map(|line| line.strip_prefix("peak-rss-kib "))
        .unwrap_or_else(|| panic!("the child printed no peak: {stdout}"))
        .parse()
        .unwrap();
    eprintln!("{test_name}: peak RSS {peak} KiB");
    Some(peak)
}

fn assert_bounded(peak_kib: Option<u64>) {
    if let Some(peak_kib) = peak_kib {
        assert!(
            peak_kib < PEAK_LIMIT_KIB,
            "peak RSS {} MiB, over the {} MiB bound",
            peak_kib / 1024,
            PEAK_LIMIT_KIB / 1024
        );
    }
}

#[test]
fn building_an_index_over_a_20000_element_array_stays_bounded() {
    let peak = peak_of(
        "building_an_index_over_a_20000_element_array_stays_bounded",
        |db| {
            let books = db.collection::<Document>("books");
            books.insert_one(big_document(1)).run().unwrap();
            books.insert_one(big_document(2)).run().unwrap();
            books.create_index(buyers_index(false)).run().unwrap();
            let found = books
                .count_documents(
                    doc! { "buyers": format!("buyer-{:06}-of-book-2", N_ELEMENTS - 1) },
                )
                .run()
                .unwrap();
            assert_eq!(found, 1);
        },
    );
    assert_bounded(peak);
}

#[test]
fn building_a_unique_index_over_a_20000_element_array_stays_bounded() {
    let peak = peak_of(
        "building_a_unique_index_over_a_20000_element_array_stays_bounded",
        |db| {
            let books = db.collection::<Document>("books");
            books.insert_one(big_document(1)).run().unwrap();
            books.insert_one(big_document(2)).run().unwrap();
            books.create_index(buyers_index(true)).run().unwrap();
            books.drop_index("buyers_1").run().unwrap();
            // A duplicate among 20,000 entries is still found, and named.
            books
                .insert_one(doc! { "_id": 3, "buyers": ["buyer-000007-of-book-1"] })
                .run()
                .unwrap();
            let error = books.create_index(buyers_index(true)).run().unwrap_err();
            assert_eq!(
                error.to_string(),
                r#"duplicate key in collection 'books', index 'buyers_1': { "buyers": "buyer-000007-of-book-1" }"#
            );
        },
    );
    assert_bounded(peak);
}

#[test]
fn writing_a_20000_element_array_under_multikey_indexes_stays_bounded() {
    let peak = peak_of(
        "writing_a_20000_element_array_under_multikey_indexes_stays_bounded",
        |db| {
            let books = db.collection::<Document>("books");
            books.create_index(buyers_index(false)).run().unwrap();
            books
                .create_index(
                    IndexModel::builder()
                        .keys(doc! { "title": 1, "buyers": -1 })
                        .build(),
                )
                .run()
                .unwrap();
            books.insert_one(big_document(1)).run().unwrap();
            books
                .update_one(doc! { "_id": 1 }, doc! { "$push": { "buyers": "late" } })
                .run()
                .unwrap();
            books
                .update_many(doc! {}, doc! { "$set": { "title": "renamed" } })
                .run()
                .unwrap();
            let found = books
                .count_documents(doc! { "buyers": "late" })
                .run()
                .unwrap();
            assert_eq!(found, 1);
        },
    );
    assert_bounded(peak);
}

#[test]
fn a_unique_multikey_index_takes_a_20000_element_array_in_bounded_memory() {
    let peak = peak_of(
        "a_unique_multikey_index_takes_a_20000_element_array_in_bounded_memory",
        |db| {
            let books = db.collection::<Document>("books");
            books.create_index(buyers_index(true)).run().unwrap();
            books.insert_one(big_document(1)).run().unwrap();
            books
                .update_one(doc! { "_id": 1 }, doc! { "$push": { "buyers": "late" } })
                .run()
                .unwrap();
            let mut copy = big_document(1);
            copy.insert("_id", 2);
            let error = books.insert_one(copy).run().unwrap_err();
            // The message names the one duplicated value, not the 20,000 of the array.
            assert_eq!(
                error.to_string(),
                r#"duplicate key in collection 'books', index 'buyers_1': { "buyers": "buyer-000000-of-book-1" }"#
            );
        },
    );
    assert_bounded(peak);
}
