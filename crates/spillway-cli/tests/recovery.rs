//! The binary and recovery: one line on stderr when an open dropped a torn tail, `verify`
//! saying so instead of a bare "ok: no damage", damage inside the log refused with a pointer to
//! `repair`, and `--read-only` on the commands that only read.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use spillway::{Database, DatabaseOptions};

use crate::common;

use common::{spillway, stderr, stdout};

/// `db` with ten books inserted one by one (one segment), closed; returns the segment and
/// where its log ends.
fn seed(directory: &Path) -> (PathBuf, usize) {
    let script = (1..=10)
        .map(|id| format!("db.books.insertOne({{ _id: {id}, t: 'book {id}' }})"))
        .collect::<Vec<_>>()
        .join("\n");
    std::fs::write(directory.join("seed.js"), script).unwrap();
    let output = spillway(&["run", "db", "seed.js"], directory);
    assert!(output.status.success(), "{}", stderr(&output));
    let db = directory.join("db");
    let stats = Database::open_with(&db, &DatabaseOptions::default())
        .unwrap()
        .stats()
        .unwrap();
    assert_eq!(stats.segments, 1);
    (
        db.join("seg-00000001.spw"),
        32 + stats.written_bytes as usize,
    )
}

fn damage(segment: &Path, edit: impl FnOnce(&mut Vec<u8>)) {
    let mut bytes = std::fs::read(segment).unwrap();
    edit(&mut bytes);
    std::fs::write(segment, bytes).unwrap();
}

fn files(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|entry| {
            let entry = entry.unwrap();
            let name = entry.file_name().into_string().unwrap();
            (name, std::fs::read(entry.path()).unwrap())
        })
        .collect()
}

#[test]
fn every_command_says_in_one_line_when_recovery_dropped_a_torn_tail() {
    let directory = tempfile::tempdir().unwrap();
    let (segment, end) = seed(directory.path());
    let line = format!(
        "recovery: dropped a torn tail of 24 bytes at offset {end} in {}",
        Path::new("db").join("seg-00000001.spw").display()
    );
    damage(&segment, |bytes| bytes[end..end + 24].fill(0x5A));
    let output = spillway(&["stats", "db"], directory.path());
    assert!(output.status.success(), "{}", stderr(&output));
    assert_eq!(stderr(&output), format!("{line}\n"));
    // Dropped for good: the next open is silent.
    let output = spillway(&["stats", "db"], directory.path());
    assert_eq!(stderr(&output), "");

    damage(&segment, |bytes| bytes[end..end + 24].fill(0x5A));
    let output = spillway(&["export", "db", "books"], directory.path());
    assert!(output.status.success());
    assert!(
        stderr(&output).starts_with(&format!("{line}\n")),
        "{}",
        stderr(&output)
    );
    assert_eq!(stdout(&output).lines().count(), 10);

    // verify does not call that "no damage" without a word.
    damage(&segment, |bytes| bytes[end..end + 24].fill(0x5A));
    let output = spillway(&["verify", "db"], directory.path());
    assert!(output.status.success());
    let text = stdout(&output);
    assert!(
        text.contains(&format!(
            "recovery: the open {}",
            line.trim_start_matches("recovery: ")
        )) && text.contains("ok: no damage left after recovery"),
        "{text}"
    );
}

#[test]
fn damage_inside_the_log_is_refused_with_a_pointer_to_repair() {
    let directory = tempfile::tempdir().unwrap();
    let (segment, end) = seed(directory.path());
    damage(&segment, |bytes| bytes[end / 2] ^= 0x04);
    let before = files(&directory.path().join("db"));
    for command in [&["verify", "db"][..], &["verify", "--read-only", "db"]] {
        let output = spillway(command, directory.path());
        assert_eq!(output.status.code(), Some(1));
        let text = stderr(&output);
        assert!(
            text.contains("cannot open the database in db")
                && text.contains("intact later frame(s) follow")
                && text.contains("run repair"),
            "{text}"
        );
    }
    assert!(
        files(&directory.path().join("db")) == before,
        "files changed"
    );
}

#[test]
fn read_only_commands_read_and_refuse_writes_without_changing_a_file() {
    let directory = tempfile::tempdir().unwrap();
    seed(directory.path());
    let db = directory.path().join("db");
    std::fs::remove_file(db.join("LOCK")).unwrap();
    let before = files(&db);

    let output = spillway(&["verify", "--read-only", "db"], directory.path());
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(stdout(&output).contains("ok: no damage"));
    let output = spillway(&["stats", "--read-only", "db"], directory.path());
    assert!(stdout(&output).contains("books: 10 document(s)"));
    let output = spillway(&["export", "--read-only", "db", "books"], directory.path());
    assert_eq!(stdout(&output).lines().count(), 10);

    std::fs::write(
        directory.path().join("mixed.js"),
        "db.books.countDocuments({})\ndb.books.insertOne({ _id: 11 })\n",
    )
    .unwrap();
    let output = spillway(
        &["run", "--read-only", "--keep-going", "db", "mixed.js"],
        directory.path(),
    );
    assert_eq!(output.status.code(), Some(1));
    assert!(stdout(&output).starts_with("10\n"), "{}", stdout(&output));
    assert!(
        stderr(&output).contains("was opened read-only"),
        "{}",
        stderr(&output)
    );
    let output = spillway(&["run", "--read-only", "mixed.js"], directory.path());
    assert!(stderr(&output).contains("--read-only needs a database directory"));

    assert!(files(&db) == before, "a read-only command changed files");
}

#[test]
fn a_damaged_checkpoint_opens_from_the_fallback_says_so_and_heals() {
    let directory = tempfile::tempdir().unwrap();
    seed(directory.path());
    let db = directory.path().join("db");
    {
        // Two checkpoints: the second is current, the first its fallback.
        let database = Database::open_with(&db, &DatabaseOptions::default()).unwrap();
        database.checkpoint().unwrap();
        let books = database.collection::<spillway::bson::Document>("books");
        books
            .insert_one(spillway::bson::doc! { "_id": 11, "t": "book 11" })
            .run()
            .unwrap();
        database.checkpoint().unwrap();
    }
    let mut checkpoints: Vec<String> = files(&db)
        .into_keys()
        .filter(|name| name.starts_with("ckpt-"))
        .collect();
    checkpoints.sort();
    assert_eq!(checkpoints.len(), 2, "{checkpoints:?}");
    let current = db.join(&checkpoints[1]);
    damage(&current, |bytes| {
        let middle = bytes.len() / 2;
        bytes[middle] ^= 0x10;
    });

    // A read-only open falls back, says so, and leaves the file for a writable open.
    let output = spillway(&["verify", "--read-only", "db"], directory.path());
    let text = stderr(&output);
    assert!(
        text.contains("recovery: checkpoint")
            && text.contains(&checkpoints[1])
            && text.contains("is damaged")
            && text.contains(&format!(
                "opened from the previous checkpoint {}",
                Path::new("db").join(&checkpoints[0]).display()
            ))
            && text.contains("opened read-only"),
        "{text}"
    );
    assert!(current.exists());

    // A writable open says so too, and heals: verify is clean, every book is there.
    let output = spillway(&["verify", "db"], directory.path());
    assert!(output.status.success(), "{}", stdout(&output));
    assert!(
        stderr(&output).contains("is damaged"),
        "{}",
        stderr(&output)
    );
    let text = stdout(&output);
    assert!(
        text.contains("recovery: the open found checkpoint")
            && text.contains("ok: no damage left after recovery"),
        "{text}"
    );
    assert!(!current.exists(), "the damaged checkpoint was replaced");
    let output = spillway(&["export", "db", "books"], directory.path());
    assert!(
        !stderr(&output).contains("recovery:"),
        "healed: the next open is silent: {}",
        stderr(&output)
    );
    assert_eq!(stdout(&output).lines().count(), 11);
}
