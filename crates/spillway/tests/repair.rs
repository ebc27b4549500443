//! `Database::repair` salvages, never loses what is intact, never panics: a missing active
//! segment, a truncated or deleted compacted segment, a damaged catalog record, a zeroed
//! segment header and segment files swapped by name cost no more than the damaged bytes held;
//! a second repair finds nothing; and many kinds of random damage (fixed seed) never panic and
//! keep every document whose bytes were not damaged.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use spillway::bson::{Bson, Document};
use spillway::{Database, DatabaseOptions, IndexModel, IndexOptions, doc};

const SEGMENT_SIZE: u64 = 16 * 1024;

fn options() -> DatabaseOptions {
    DatabaseOptions::default().segment_size(SEGMENT_SIZE)
}

/// Every document, by collection and `_id`.
type Contents = BTreeMap<String, BTreeMap<i64, Document>>;

fn document(collection: &str, id: i64) -> Document {
    doc! {
        "_id": id,
        "title": format!("{collection} {id}"),
        "region": format!("r{}", id % 5),
        "tags": ["a", format!("t{id}")],
        "marker": format!("{collection}-{id:05}-marker"),
        "pad": "x".repeat(120),
    }
}

/// A database with `extra_sales` (rewritten, then compacted), `sales` (written after the
/// compaction, with a default-named, a unique and a custom-named index) and a checkpoint.
fn build(path: &Path) -> Contents {
    let database = Database::open_with(path, &options()).unwrap();
    let mut contents = Contents::new();
    let extra = database.collection::<Document>("extra_sales");
    extra
        .create_index(IndexModel::builder().keys(doc! { "region": -1 }).build())
        .run()
        .unwrap();
    // Each document shares its segment with a big churn document that is overwritten, so
    // that compaction moves every one of them into compacted segments.
    let churn = database.collection::<Document>("churn");
    for id in 0..60 {
        extra.insert_one(document("extra_sales", id)).run().unwrap();
        contents
            .entry("extra_sales".into())
            .or_default()
            .insert(id, document("extra_sales", id));
        churn
            .update_one(
                doc! { "_id": 0 },
                doc! { "$set": { "pad": format!("{id} {}", "c".repeat(1500)) } },
            )
            .upsert(true)
            .run()
            .unwrap();
    }
    assert!(churn.drop().run().is_ok());
    let compaction = database.compact().unwrap();
    assert!(!compaction.segments_written.is_empty(), "{compaction:?}");
    let sales = database.collection::<Document>("sales");
    sales
        .create_index(IndexModel::builder().keys(doc! { "tags": 1 }).build())
        .run()
        .unwrap();
    sales
        .create_index(
            IndexModel::builder()
                .keys(doc! { "title": 1 })
                .options(IndexOptions::builder().unique(true).build())
                .build(),
        )
        .run()
        .unwrap();
    sales
        .create_index(
            IndexModel::builder()
                .keys(doc! { "region": 1, "title": -1 })
                .options(
                    IndexOptions::builder()
                        .name("by_region".to_string())
                        .build(),
                )
                .build(),
        )
        .run()
        .unwrap();
    for id in 0..150 {
        sales.insert_one(document("sales", id)).run().unwrap();
        contents
            .entry("sales".into())
            .or_default()
            .insert(id, document("sales", id));
    }
    database.checkpoint().unwrap();
    contents
}

fn read_contents(database: &Database) -> Contents {
    let mut contents = Contents::new();
    for name in database.list_collection_names().run().unwrap() {
        let documents = contents.entry(name.clone()).or_default();
        let collection = database.collection::<Document>(&name);
        for document in collection.find(doc! {}).run().unwrap() {
            let document = document.unwrap();
            let id = match document.get("_id") {
                Some(Bson::Int64(id)) => *id,
                Some(Bson::Int32(id)) => i64::from(*id),
                other => panic!("unexpected _id {other:?}"),
            };
            documents.insert(id, document);
        }
    }
    contents
}

/// Opens the repaired database, checks that `verify` is clean, and returns its contents.
fn open_and_verify(path: &Path) -> (Database, Contents) {
    let database = Database::open_with(path, &options()).unwrap();
    let verify = database.verify().unwrap();
    assert!(verify.is_clean(), "{verify:?}");
    let contents = read_contents(&database);
    (database, contents)
}

/// Compares without printing every document.
fn assert_same(found: &Contents, expected: &Contents, what: &str) {
    for (name, documents) in expected {
        let found_documents = found.get(name);
        assert!(
            found_documents.is_some(),
            "{what}: collection {name} is gone (found {:?})",
            found.keys().collect::<Vec<_>>()
        );
        let found_documents = found_documents.unwrap();
        for (id, document) in documents {
            assert_eq!(
                found_documents.get(id),
                Some(document),
                "{what}: {name} _id {id}"
            );
        }
        assert_eq!(
            found_documents.len(),
            documents.len(),
            "{what}: collection {name}"
        );
    }
}

/// `(path, id in the header, kind byte)` of every segment file: kind 1 is log, 2 compacted.
fn segment_files(path: &Path) -> Vec<(PathBuf, u64, u8)> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(path).unwrap() {
        let file = entry.unwrap().path();
        let name = file.file_name().unwrap().to_string_lossy().into_owned();
        if name.starts_with("seg-") {
            let bytes = std::fs::read(&file).unwrap();
            let id = u64::from_le_bytes(bytes[16..24].try_into().unwrap());
            files.push((file, id, bytes[10]));
        }
    }
    files.sort();
    files
}

fn repair(path: &Path) -> spillway::RepairReport {
    Database::repair(path, &options()).unwrap()
}

fn assert_second_repair_is_clean(path: &Path) {
    let names = |path: &Path| {
        let mut names: Vec<_> = std::fs::read_dir(path)
            .unwrap()
            .map(|entry| entry.unwrap().file_name())
            .collect();
        names.sort();
        names
    };
    let before = names(path);
    let again = repair(path);
    assert!(again.is_clean(), "{again:?}");
    assert_eq!(names(path), before);
}

#[test]
fn a_missing_active_segment_is_started_again_and_the_rest_kept() {
    for without_manifest in [false, true] {
        let directory = tempfile::tempdir().unwrap();
        let contents = build(directory.path());
        let active = segment_files(directory.path())
            .into_iter()
            .filter(|(_, _, kind)| *kind == 1)
            .max_by_key(|(_, id, _)| *id)
            .unwrap()
            .0;
        let active_bytes = std::fs::read(&active).unwrap();
        std::fs::remove_file(&active).unwrap();
        if without_manifest {
            std::fs::remove_file(directory.path().join("MANIFEST")).unwrap();
        }
        let report = repair(directory.path());
        assert!(report.active_segment_missing, "{report:?}");
        let (_, found) = open_and_verify(directory.path());
        // What was lost is exactly what the active segment held.
        let mut expected = contents.clone();
        for documents in expected.values_mut() {
            documents.retain(|_, document| {
                let marker = document.get_str("marker").unwrap().as_bytes();
                !active_bytes.windows(marker.len()).any(|w| w == marker)
            });
        }
        let lost: u64 = contents
            .values()
            .map(|documents| documents.len() as u64)
            .sum::<u64>()
            - expected
                .values()
                .map(|documents| documents.len() as u64)
                .sum::<u64>();
        assert_same(
            &found,
            &expected,
            &format!("without manifest {without_manifest}"),
        );
        let reported: u64 = report.documents_lost.iter().map(|(_, n)| n).sum();
        assert_eq!(reported, lost, "{report:?}");
        assert_second_repair_is_clean(directory.path());
    }
}

#[test]
fn a_truncated_or_deleted_compacted_segment_keeps_every_collection() {
    // (truncate to this length, or delete; also delete the checkpoint)
    for (cut, without_checkpoint) in [
        (Some(0), false),
        (Some(100), false),
        (Some(2000), false),
        (None, false),
        (None, true),
    ] {
        let what = format!("cut {cut:?}, without checkpoint {without_checkpoint}");
        let directory = tempfile::tempdir().unwrap();
        let contents = build(directory.path());
        // The compacted segment holding the most documents.
        let markers = |file: &Path| {
            let bytes = std::fs::read(file).unwrap();
            bytes.windows(7).filter(|w| w == b"-marker").count()
        };
        let (compacted, _, _) = segment_files(directory.path())
            .into_iter()
            .filter(|(_, _, kind)| *kind == 2)
            .max_by_key(|(file, _, _)| markers(file))
            .unwrap();
        let bytes = std::fs::read(&compacted).unwrap();
        match cut {
            Some(len) => std::fs::write(&compacted, &bytes[..len]).unwrap(),
            None => std::fs::remove_file(&compacted).unwrap(),
        }
        if without_checkpoint {
            for entry in std::fs::read_dir(directory.path()).unwrap() {
                let path = entry.unwrap().path();
                if path
                    .file_name()
                    .unwrap()
                    .to_string_lossy()
                    .starts_with("ckpt-")
                {
                    std::fs::remove_file(path).unwrap();
                }
            }
        }
        let report = repair(directory.path());
        let (_, found) = open_and_verify(directory.path());
        // Everything written after the compaction is intact; of `extra_sales`, what the
        // remaining bytes hold.
        assert_same(
            &found,
            &Contents::from([("sales".to_string(), contents["sales"].clone())]),
            &what,
        );
        // Of `extra_sales`, exactly the documents the lost bytes did not hold survive.
        let lost_bytes = &bytes[cut.unwrap_or(0)..];
        let extra = found
            .get("extra_sales")
            .unwrap_or_else(|| panic!("{what}: extra_sales is gone: {report:?}"));
        let held: Vec<i64> = contents["extra_sales"]
            .iter()
            .filter(|(_, document)| {
                let marker = document.get_str("marker").unwrap().as_bytes();
                lost_bytes.windows(marker.len()).any(|w| w == marker)
            })
            .map(|(id, _)| *id)
            .collect();
        assert!(
            cut == Some(2000) || !held.is_empty(),
            "{what}: the test needs documents there"
        );
        for (id, document) in &contents["extra_sales"] {
            if held.contains(id) {
                assert!(
                    !extra.contains_key(id),
                    "{what}: {id} came back from nowhere"
                );
            } else {
                assert_eq!(extra.get(id), Some(document), "{what}: {id}");
            }
        }
        if !held.is_empty() {
            assert!(
                report
                    .documents_lost
                    .contains(&("extra_sales".to_string(), held.len() as u64))
                    || without_checkpoint,
                "{what}: {report:?}"
            );
        }
        assert_second_repair_is_clean(directory.path());
    }
}

/// Flips one bit in every stored version of the catalog record of `collection`.
fn damage_catalog_record(path: &Path, collection: &str) -> usize {
    let mut damaged = 0;
    for (file, _, _) in segment_files(path) {
        let mut bytes = std::fs::read(&file).unwrap();
        // The record's `keyspace` field: type 2 (string), name, length, `docs.<n>.<collection>`.
        let mut at = 0;
        while let Some(found) = bytes[at..]
            .windows(b"\x02keyspace\x00".len())
            .position(|w| w == b"\x02keyspace\x00")
        {
            let value = at + found + b"\x02keyspace\x00".len() + 4;
            let suffix = format!(".{collection}\0");
            let names_docs = bytes[value..].starts_with(b"docs.")
                && bytes[value..value + 40]
                    .windows(suffix.len())
                    .any(|w| w == suffix.as_bytes());
            if names_docs {
                bytes[value + 2] ^= 0x10;
                damaged += 1;
            }
            at = value;
        }
        std::fs::write(&file, bytes).unwrap();
    }
    damaged
}

#[test]
fn a_damaged_catalog_record_is_rebuilt_from_the_keyspaces() {
    let directory = tempfile::tempdir().unwrap();
    let contents = build(directory.path());
    assert!(damage_catalog_record(directory.path(), "sales") > 0);
    assert!(Database::open_with(directory.path(), &options()).is_err());

    let report = repair(directory.path());
    assert_eq!(report.values_dropped, 1, "{report:?}");
    assert!(report.documents_lost.is_empty(), "{report:?}");
    assert_eq!(report.catalog_records_lost, ["coll:sales"], "{report:?}");
    assert_eq!(report.collections_rebuilt.len(), 1, "{report:?}");
    assert_eq!(report.collections_rebuilt[0].name, "sales");
    assert_eq!(report.collections_rebuilt[0].documents, 150);
    // Default names spell the key pattern; a custom name does not.
    let mut rebuilt = report.indexes_rebuilt.clone();
    rebuilt.sort();
    assert_eq!(rebuilt, ["sales.tags_1", "sales.title_1"], "{report:?}");
    assert_eq!(report.indexes_lost.len(), 1, "{report:?}");
    assert_eq!(report.indexes_lost[0].0, "sales.by_region");

    let (database, found) = open_and_verify(directory.path());
    assert_same(&found, &contents, "catalog record");
    let sales = database.collection::<Document>("sales");
    let indexes = sales
        .list_indexes()
        .run()
        .unwrap()
        .collect::<spillway::Result<Vec<_>>>()
        .unwrap();
    let title = indexes
        .iter()
        .find(|index| index.options.as_ref().and_then(|o| o.name.as_deref()) == Some("title_1"))
        .unwrap_or_else(|| panic!("{indexes:?}"));
    assert_eq!(
        title.options.as_ref().and_then(|o| o.unique),
        Some(true),
        "uniqueness recovered from the entries"
    );
    let duplicate = sales.insert_one(document("sales", 7)).run();
    assert!(duplicate.is_err());
    assert_eq!(
        sales.count_documents(doc! { "tags": "t7" }).run().unwrap(),
        1
    );
    drop((sales, database));
    assert_second_repair_is_clean(directory.path());
}

#[test]
fn a_zeroed_segment_header_or_swapped_segment_files_lose_no_document() {
    for case in ["zero log header", "zero compacted header", "swap"] {
        let directory = tempfile::tempdir().unwrap();
        let contents = build(directory.path());
        let files = segment_files(directory.path());
        let log = files.iter().find(|f| f.2 == 1).unwrap().0.clone();
        let compacted = files.iter().find(|f| f.2 == 2).unwrap().0.clone();
        if case == "swap" {
            let aside = directory.path().join("aside");
            std::fs::rename(&log, &aside).unwrap();
            std::fs::rename(&compacted, &log).unwrap();
            std::fs::rename(&aside, &compacted).unwrap();
        } else {
            let target = if case == "zero log header" {
                &log
            } else {
                &compacted
            };
            let mut bytes = std::fs::read(target).unwrap();
            bytes[..32].fill(0);
            std::fs::write(target, bytes).unwrap();
        }
        let report = repair(directory.path());
        assert_eq!(report.values_dropped, 0, "{case}: {report:?}");
        assert!(report.documents_lost.is_empty(), "{case}: {report:?}");
        let (_, found) = open_and_verify(directory.path());
        assert_same(&found, &contents, case);
        assert_second_repair_is_clean(directory.path());
    }
}

#[test]
fn repairing_a_healthy_database_changes_nothing() {
    let directory = tempfile::tempdir().unwrap();
    let contents = build(directory.path());
    let files = |path: &Path| {
        let mut all = BTreeMap::new();
        for entry in std::fs::read_dir(path).unwrap() {
            let file = entry.unwrap().path();
            if file.is_file() {
                all.insert(file.clone(), std::fs::read(&file).unwrap());
            }
        }
        all
    };
    let before = files(directory.path());
    let report = repair(directory.path());
    assert!(report.is_clean(), "{report:?}");
    assert_eq!(report.backup_dir, None);
    assert_eq!(files(directory.path()), before);
    let (_, found) = open_and_verify(directory.path());
    assert_same(&found, &contents, "healthy");
}

// ---------------------------------------------------------------------------------------------
// Random damage

/// A small database where every document is its own commit, in compacted, sealed and active
/// segments, with a checkpoint in the middle of the log.
fn build_small(path: &Path) -> Contents {
    fn insert(database: &Database, contents: &mut Contents, collection: &str, id: i64) {
        database
            .collection::<Document>(collection)
            .insert_one(document(collection, id))
            .run()
            .unwrap();
        contents
            .entry(collection.to_string())
            .or_default()
            .insert(id, document(collection, id));
    }
    let database = Database::open_with(path, &options()).unwrap();
    let mut contents = Contents::new();
    for id in 0..25 {
        insert(&database, &mut contents, "a", id);
    }
    let churn = database.collection::<Document>("churn");
    for round in 0..6 {
        churn
            .update_one(
                doc! { "_id": 0 },
                doc! { "$set": { "pad": "c".repeat(3000), "round": round } },
            )
            .upsert(true)
            .run()
            .unwrap();
    }
    database.compact().unwrap();
    database
        .collection::<Document>("b")
        .create_index(IndexModel::builder().keys(doc! { "region": 1 }).build())
        .run()
        .unwrap();
    for id in 0..25 {
        insert(&database, &mut contents, "b", id);
    }
    database.checkpoint().unwrap();
    for id in 25..35 {
        insert(&database, &mut contents, "b", id);
    }
    contents
}

/// Frame boundaries of a segment file (`SPFR` frames from offset 32 on).
fn frames(bytes: &[u8]) -> Vec<(usize, usize)> {
    let mut frames = Vec::new();
    let mut offset = 32;
    while offset + 32 <= bytes.len() && &bytes[offset..offset + 4] == b"SPFR" {
        let len =
            32 + u32::from_le_bytes(bytes[offset + 16..offset + 20].try_into().unwrap()) as usize;
        frames.push((offset, offset + len));
        offset += len;
    }
    frames
}

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

fn copy_dir(from: &Path, to: &Path) {
    for entry in std::fs::read_dir(from).unwrap() {
        let file = entry.unwrap().path();
        if file.is_file() {
            std::fs::copy(&file, to.join(file.file_name().unwrap())).unwrap();
        }
    }
}

#[test]
fn random_damage_never_panics_and_keeps_every_undamaged_document() {
    let pristine = tempfile::tempdir().unwrap();
    let contents = build_small(pristine.path());
    let mut store_files: Vec<PathBuf> = std::fs::read_dir(pristine.path())
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|file| {
            let name = file.file_name().unwrap().to_string_lossy();
            name.starts_with("seg-") || name.starts_with("ckpt-") || name == "MANIFEST"
        })
        .collect();
    store_files.sort();
    let segments: Vec<PathBuf> = store_files
        .iter()
        .filter(|file| {
            file.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("seg-")
        })
        .cloned()
        .collect();
    let mut rng = Rng(0x5EED_2024_0BAD_F00D);
    let trials = 120;
    let mut kinds = [0_u32; 5];
    for trial in 0..trials {
        let directory = tempfile::tempdir().unwrap();
        copy_dir(pristine.path(), directory.path());
        let kind = rng.below(5);
        kinds[kind] += 1;
        let target = &store_files[rng.below(store_files.len())];
        let name = target.file_name().unwrap();
        let damaged_path = directory.path().join(name);
        let original = std::fs::read(target).unwrap();
        // The byte range whose loss is allowed, in `target`; `None`: nothing may be lost.
        let damaged: Option<(usize, usize)>;
        let what;
        match kind {
            0 => {
                let offset = rng.below(original.len());
                let bit = rng.below(8);
                let mut bytes = original.clone();
                bytes[offset] ^= 1 << bit;
                std::fs::write(&damaged_path, bytes).unwrap();
                damaged = Some((offset, offset + 1));
                what = format!("bit {bit} of byte {offset} of {name:?}");
            }
            1 => {
                let len = rng.below(original.len());
                std::fs::write(&damaged_path, &original[..len]).unwrap();
                damaged = Some((len, usize::MAX));
                what = format!("{name:?} truncated to {len} bytes");
            }
            2 => {
                std::fs::remove_file(&damaged_path).unwrap();
                damaged = Some((0, usize::MAX));
                what = format!("{name:?} deleted");
            }
            3 => {
                let first = rng.below(segments.len());
                let second = (first + 1 + rng.below(segments.len() - 1)) % segments.len();
                let (a, b) = (&segments[first], &segments[second]);
                let (a, b) = (
                    directory.path().join(a.file_name().unwrap()),
                    directory.path().join(b.file_name().unwrap()),
                );
                let aside = directory.path().join("aside");
                std::fs::rename(&a, &aside).unwrap();
                std::fs::rename(&b, &a).unwrap();
                std::fs::rename(&aside, &b).unwrap();
                damaged = None;
                what = format!("{a:?} and {b:?} swapped");
            }
            _ => {
                let segment = &segments[rng.below(segments.len())];
                let path = directory.path().join(segment.file_name().unwrap());
                let mut bytes = std::fs::read(&path).unwrap();
                bytes[..32].fill(0);
                std::fs::write(&path, bytes).unwrap();
                damaged = None;
                what = format!("header of {segment:?} zeroed");
            }
        }
        let what = format!("trial {trial}: {what}");

        let report = match Database::repair(directory.path(), &options()) {
            Ok(report) => report,
            Err(error) => panic!("{what}: repair failed: {error}"),
        };
        let (_, found) = open_and_verify(directory.path());

        // Documents whose bytes sat in a damaged frame of a segment may be lost; nothing
        // else. (Damage to the manifest or the checkpoint costs no document.)
        let is_segment = name.to_string_lossy().starts_with("seg-");
        let at_risk = |marker: &[u8]| -> bool {
            let Some((start, end)) = damaged else {
                return false;
            };
            if !is_segment {
                return false;
            }
            frames(&original).iter().any(|&(frame_start, frame_end)| {
                frame_start < end
                    && start < frame_end
                    && original[frame_start..frame_end]
                        .windows(marker.len())
                        .any(|w| w == marker)
            })
        };
        let all_found: BTreeMap<String, &Document> = found
            .values()
            .flat_map(|documents| documents.values())
            .filter_map(|document| Some((document.get_str("marker").ok()?.to_string(), document)))
            .collect();
        for (collection, documents) in &contents {
            for (id, document) in documents {
                let Ok(marker) = document.get_str("marker") else {
                    continue;
                };
                match all_found.get(marker) {
                    Some(found) => assert_eq!(*found, document, "{what}: {collection} {id}"),
                    None => assert!(
                        at_risk(marker.as_bytes()),
                        "{what}: {collection} {id} lost although its bytes were intact: {report:?}"
                    ),
                }
            }
        }
        assert_second_repair_is_clean(directory.path());
    }
    eprintln!(
        "random damage: {trials} trials, by kind (flip, truncate, delete, swap, zero header): {kinds:?}"
    );
    assert!(kinds.iter().all(|&n| n > 0));
}
