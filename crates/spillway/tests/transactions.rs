//! Transaction handles (`Database::start_transaction`): snapshot isolation, first committer
//! wins with `WriteConflict` (code 112, `TransientTransactionError`), unique index races,
//! concurrent DDL, writers outside transactions never blocked by an open handle, and a
//! model-based property test of random interleavings of handles and plain writes against
//! `spillway_doc::model::MemoryCollection`.

use std::collections::HashSet;
use std::sync::mpsc;
use std::time::Duration;

use bson::{Bson, Document, doc};
use proptest::prelude::*;
use spillway::{Database, Error, ErrorKind, IndexModel, IndexOptions, Pattern, Transaction};
use spillway_doc::model::{MemoryCollection, UpdateOptions};

fn all(db: &Database, collection: &str) -> Vec<Document> {
    db.collection::<Document>(collection)
        .find(doc! {})
        .sort(doc! { "_id": 1 })
        .run()
        .unwrap()
        .map(Result::unwrap)
        .collect()
}

fn all_in(db: &Database, collection: &str, tx: &mut Transaction) -> Vec<Document> {
    db.collection::<Document>(collection)
        .find(doc! {})
        .sort(doc! { "_id": 1 })
        .session(tx)
        .run()
        .unwrap()
        .map(Result::unwrap)
        .collect()
}

fn assert_write_conflict(result: Result<(), Error>) {
    let error = result.expect_err("the commit must be refused");
    assert!(
        matches!(error.kind(), ErrorKind::WriteConflict { .. }),
        "{error}"
    );
    assert_eq!(error.code(), Some(112));
    assert_eq!(error.code_name().as_deref(), Some("WriteConflict"));
    assert_eq!(error.labels(), ["TransientTransactionError"]);
}

fn unique(keys: Document) -> IndexModel {
    IndexModel::builder()
        .keys(keys)
        .options(IndexOptions::builder().unique(true).build())
        .build()
}

fn assert_verified(db: &Database) {
    let report = db.verify().unwrap();
    assert!(report.is_clean(), "{report:?}");
}

#[test]
fn handles_are_send_and_static() {
    fn send_static<T: Send + 'static>() {}
    send_static::<Transaction>();
}

#[test]
fn the_first_writer_wins_and_nothing_of_the_loser_is_visible() {
    let db = Database::open_in_memory().unwrap();
    let accounts = db.collection::<Document>("accounts");
    accounts
        .insert_one(doc! { "_id": 1, "balance": 100 })
        .run()
        .unwrap();

    let mut first = db.start_transaction().unwrap();
    let mut second = db.start_transaction().unwrap();
    // The loser first writes a document nobody else touches: it must not appear either.
    accounts
        .insert_one(doc! { "_id": 2, "balance": 7 })
        .session(&mut second)
        .run()
        .unwrap();
    accounts
        .update_one(doc! { "_id": 1 }, doc! { "$inc": { "balance": -30 } })
        .session(&mut first)
        .run()
        .unwrap();
    let refused = accounts
        .update_one(doc! { "_id": 1 }, doc! { "$inc": { "balance": -50 } })
        .session(&mut second)
        .run();
    assert_write_conflict(refused.map(drop));
    first.commit().unwrap();
    let error = second.commit().unwrap_err();
    assert!(matches!(error.kind(), ErrorKind::TransactionAborted { .. }));
    assert_eq!(error.code_name().as_deref(), Some("NoSuchTransaction"));
    assert_eq!(error.labels(), ["TransientTransactionError"]);
    assert_eq!(all(&db, "accounts"), [doc! { "_id": 1, "balance": 70 }]);

    // A handle that starts before a commit and writes what it changed afterwards loses too.
    let mut stale = db.start_transaction().unwrap();
    let mut fresh = db.start_transaction().unwrap();
    accounts
        .update_one(doc! { "_id": 1 }, doc! { "$inc": { "balance": 1 } })
        .session(&mut fresh)
        .run()
        .unwrap();
    fresh.commit().unwrap();
    let refused = accounts
        .update_one(doc! { "_id": 1 }, doc! { "$inc": { "balance": 1 } })
        .session(&mut stale)
        .run();
    assert_write_conflict(refused.map(drop));
    stale.rollback();
    assert_verified(&db);
}

#[test]
fn the_first_committer_wins_over_writes_outside_transactions() {
    let db = Database::open_in_memory().unwrap();
    let accounts = db.collection::<Document>("accounts");
    accounts
        .insert_one(doc! { "_id": 1, "balance": 100 })
        .run()
        .unwrap();
    let mut handle = db.start_transaction().unwrap();
    accounts
        .update_one(doc! { "_id": 1 }, doc! { "$inc": { "balance": -30 } })
        .session(&mut handle)
        .run()
        .unwrap();
    accounts
        .insert_one(doc! { "_id": 2, "balance": 1 })
        .session(&mut handle)
        .run()
        .unwrap();
    // Never refused nor blocked by the handle's claim on the document.
    accounts
        .update_one(doc! { "_id": 1 }, doc! { "$inc": { "balance": 5 } })
        .run()
        .unwrap();
    assert_write_conflict(handle.commit());
    assert_eq!(all(&db, "accounts"), [doc! { "_id": 1, "balance": 105 }]);
}

#[test]
fn a_doomed_handle_gives_up_its_claims() {
    let db = Database::open_in_memory().unwrap();
    let things = db.collection::<Document>("things");
    things.insert_one(doc! { "_id": 1 }).run().unwrap();
    let mut doomed = db.start_transaction().unwrap();
    things
        .insert_one(doc! { "_id": 2 })
        .session(&mut doomed)
        .run()
        .unwrap();
    assert!(
        things
            .insert_one(doc! { "_id": 1 })
            .session(&mut doomed)
            .run()
            .unwrap_err()
            .is_duplicate_key()
    );
    // Still open, but it can never commit: another handle may write what it wrote.
    let mut other = db.start_transaction().unwrap();
    things
        .insert_one(doc! { "_id": 2, "by": "other" })
        .session(&mut other)
        .run()
        .unwrap();
    other.commit().unwrap();
    assert!(doomed.commit().is_err());
    assert_eq!(
        all(&db, "things"),
        [doc! { "_id": 1 }, doc! { "_id": 2, "by": "other" }]
    );
}

#[test]
fn disjoint_handles_both_commit() {
    let db = Database::open_in_memory().unwrap();
    let things = db.collection::<Document>("things");
    things
        .insert_many([doc! { "_id": 1, "n": 0 }, doc! { "_id": 2, "n": 0 }])
        .run()
        .unwrap();
    let mut first = db.start_transaction().unwrap();
    let mut second = db.start_transaction().unwrap();
    things
        .update_one(doc! { "_id": 1 }, doc! { "$set": { "n": 1 } })
        .session(&mut first)
        .run()
        .unwrap();
    things
        .update_one(doc! { "_id": 2 }, doc! { "$set": { "n": 2 } })
        .session(&mut second)
        .run()
        .unwrap();
    things
        .insert_one(doc! { "_id": 3 })
        .session(&mut second)
        .run()
        .unwrap();
    second.commit().unwrap();
    first.commit().unwrap();
    assert_eq!(
        all(&db, "things"),
        [
            doc! { "_id": 1, "n": 1 },
            doc! { "_id": 2, "n": 2 },
            doc! { "_id": 3 }
        ]
    );
}

#[test]
fn a_handle_sees_its_snapshot_and_its_own_writes() {
    let db = Database::open_in_memory().unwrap();
    let things = db.collection::<Document>("things");
    things.insert_one(doc! { "_id": 1 }).run().unwrap();
    let mut tx = db.start_transaction().unwrap();
    // Committed after the handle began: invisible to it.
    things.insert_one(doc! { "_id": 2 }).run().unwrap();
    things
        .update_one(doc! { "_id": 1 }, doc! { "$set": { "late": true } })
        .run()
        .unwrap();
    things
        .insert_one(doc! { "_id": 3 })
        .session(&mut tx)
        .run()
        .unwrap();
    assert_eq!(
        all_in(&db, "things", &mut tx),
        [doc! { "_id": 1 }, doc! { "_id": 3 }]
    );
    let count = things
        .count_documents(doc! {})
        .session(&mut tx)
        .run()
        .unwrap();
    assert_eq!(count, 2);
    // Its own writes are invisible to everyone else until it commits.
    assert_eq!(
        all(&db, "things"),
        [doc! { "_id": 1, "late": true }, doc! { "_id": 2 }]
    );
    tx.commit().unwrap();
    assert_eq!(
        all(&db, "things"),
        [
            doc! { "_id": 1, "late": true },
            doc! { "_id": 2 },
            doc! { "_id": 3 }
        ]
    );
}

#[test]
fn rollback_and_drop_discard_everything() {
    let db = Database::open_in_memory().unwrap();
    let things = db.collection::<Document>("things");
    let mut rolled_back = db.start_transaction().unwrap();
    things
        .insert_one(doc! { "_id": 1 })
        .session(&mut rolled_back)
        .run()
        .unwrap();
    rolled_back.rollback();
    {
        let mut dropped = db.start_transaction().unwrap();
        db.collection::<Document>("other")
            .insert_one(doc! { "_id": 1 })
            .session(&mut dropped)
            .run()
            .unwrap();
    }
    assert!(db.list_collection_names().run().unwrap().is_empty());
    // The ids the abandoned handles took are not reused in a way that matters: a new
    // collection works and verifies.
    things.insert_one(doc! { "_id": 2 }).run().unwrap();
    assert_eq!(all(&db, "things"), [doc! { "_id": 2 }]);
    assert_verified(&db);
}

#[test]
fn a_failed_operation_dooms_the_handle() {
    let db = Database::open_in_memory().unwrap();
    let things = db.collection::<Document>("things");
    things.insert_one(doc! { "_id": 1 }).run().unwrap();
    let mut tx = db.start_transaction().unwrap();
    things
        .insert_one(doc! { "_id": 2 })
        .session(&mut tx)
        .run()
        .unwrap();
    let duplicate = things
        .insert_one(doc! { "_id": 1 })
        .session(&mut tx)
        .run()
        .unwrap_err();
    assert_eq!(duplicate.code(), Some(11000));
    assert_eq!(duplicate.code_name().as_deref(), Some("DuplicateKey"));
    let error = tx.commit().unwrap_err();
    assert!(matches!(error.kind(), ErrorKind::TransactionAborted { .. }));
    assert_eq!(error.code(), Some(251));
    assert_eq!(error.code_name().as_deref(), Some("NoSuchTransaction"));
    assert_eq!(all(&db, "things"), [doc! { "_id": 1 }]);
}

#[test]
fn two_handles_giving_one_unique_key_to_different_documents_cannot_both_commit() {
    let db = Database::open_in_memory().unwrap();
    let users = db.collection::<Document>("users");
    users
        .create_index(unique(doc! { "email": 1 }))
        .run()
        .unwrap();
    let mut first = db.start_transaction().unwrap();
    let mut second = db.start_transaction().unwrap();
    users
        .insert_one(doc! { "_id": 1, "email": "a@x" })
        .session(&mut first)
        .run()
        .unwrap();
    // The second writer of the unique key loses at once (the first has not committed, so
    // this is no duplicate key in its snapshot)...
    let refused = users
        .insert_one(doc! { "_id": 2, "email": "a@x" })
        .session(&mut second)
        .run();
    assert_write_conflict(refused.map(drop));
    second.rollback();
    first.commit().unwrap();
    assert_eq!(all(&db, "users"), [doc! { "_id": 1, "email": "a@x" }]);

    // ... and so does one that writes it after the first committed, from an older snapshot.
    let mut older = db.start_transaction().unwrap();
    let mut taking = db.start_transaction().unwrap();
    users
        .insert_one(doc! { "_id": 5, "email": "c@x" })
        .session(&mut taking)
        .run()
        .unwrap();
    taking.commit().unwrap();
    let refused = users
        .insert_one(doc! { "_id": 6, "email": "c@x" })
        .session(&mut older)
        .run();
    assert_write_conflict(refused.map(drop));
    older.rollback();
    users.delete_one(doc! { "_id": 5 }).run().unwrap();

    // The same race against a plain write, and through an update that moves a key.
    let mut tx = db.start_transaction().unwrap();
    users
        .update_one(doc! { "_id": 1 }, doc! { "$set": { "email": "b@x" } })
        .session(&mut tx)
        .run()
        .unwrap();
    users
        .insert_one(doc! { "_id": 3, "email": "b@x" })
        .run()
        .unwrap();
    assert_write_conflict(tx.commit());

    // Freeing a key in one handle and taking it in another: both may commit in that order
    // only if they do not overlap; overlapping, the second loses.
    let mut freeing = db.start_transaction().unwrap();
    let mut taking = db.start_transaction().unwrap();
    users
        .delete_one(doc! { "_id": 3 })
        .session(&mut freeing)
        .run()
        .unwrap();
    let refused = users
        .insert_one(doc! { "_id": 4, "email": "b@x" })
        .session(&mut taking)
        .run()
        .unwrap_err();
    assert!(refused.is_duplicate_key(), "{refused}");
    freeing.commit().unwrap();
    taking.rollback();
    assert_eq!(all(&db, "users"), [doc! { "_id": 1, "email": "a@x" }]);
    assert_verified(&db);
}

#[test]
fn concurrent_ddl_conflicts_with_handles_that_write_the_collection() {
    let db = Database::open_in_memory().unwrap();
    let things = db.collection::<Document>("things");
    things.insert_one(doc! { "_id": 1 }).run().unwrap();

    // Dropped under a handle that writes it.
    let mut tx = db.start_transaction().unwrap();
    things
        .insert_one(doc! { "_id": 2 })
        .session(&mut tx)
        .run()
        .unwrap();
    things.drop().run().unwrap();
    assert_write_conflict(tx.commit());
    assert!(db.list_collection_names().run().unwrap().is_empty());

    // Two handles creating the same collection: the first wins.
    let mut first = db.start_transaction().unwrap();
    let mut second = db.start_transaction().unwrap();
    db.collection::<Document>("fresh")
        .insert_one(doc! { "_id": "first" })
        .session(&mut first)
        .run()
        .unwrap();
    db.collection::<Document>("fresh")
        .insert_one(doc! { "_id": "second" })
        .session(&mut second)
        .run()
        .unwrap();
    first.commit().unwrap();
    assert_write_conflict(second.commit());
    assert_eq!(all(&db, "fresh"), [doc! { "_id": "first" }]);

    // Dropped and created again under a handle: a new collection, still a conflict.
    let mut tx = db.start_transaction().unwrap();
    db.collection::<Document>("fresh")
        .insert_one(doc! { "_id": "late" })
        .session(&mut tx)
        .run()
        .unwrap();
    db.collection::<Document>("fresh").drop().run().unwrap();
    db.create_collection("fresh").run().unwrap();
    assert_write_conflict(tx.commit());
    assert!(all(&db, "fresh").is_empty());

    // A handle that drops a collection loses to a write into it.
    let mut dropping = db.start_transaction().unwrap();
    db.collection::<Document>("fresh")
        .drop()
        .session(&mut dropping)
        .run()
        .unwrap();
    db.collection::<Document>("fresh")
        .insert_one(doc! { "_id": "kept" })
        .run()
        .unwrap();
    assert_write_conflict(dropping.commit());
    assert_eq!(all(&db, "fresh"), [doc! { "_id": "kept" }]);

    // An index built in a handle loses to a write into the collection: the build read the
    // collection as of the handle's start.
    let mut indexing = db.start_transaction().unwrap();
    db.collection::<Document>("fresh")
        .create_index(IndexModel::builder().keys(doc! { "n": 1 }).build())
        .session(&mut indexing)
        .run()
        .unwrap();
    db.collection::<Document>("fresh")
        .insert_one(doc! { "_id": "indexed?", "n": 1 })
        .run()
        .unwrap();
    assert_write_conflict(indexing.commit());
    assert_eq!(
        db.collection::<Document>("fresh")
            .list_indexes()
            .run()
            .unwrap()
            .collect::<spillway::Result<Vec<_>>>()
            .unwrap()
            .len(),
        1
    );

    // An index added under a handle that writes the collection.
    let mut tx = db.start_transaction().unwrap();
    db.collection::<Document>("fresh")
        .insert_one(doc! { "_id": "mine", "n": 2 })
        .session(&mut tx)
        .run()
        .unwrap();
    db.collection::<Document>("fresh")
        .create_index(IndexModel::builder().keys(doc! { "n": 1 }).build())
        .run()
        .unwrap();
    assert_write_conflict(tx.commit());
    assert_verified(&db);
}

#[test]
fn ddl_on_other_collections_does_not_conflict_and_survives_the_commit() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    {
        let db = Database::open(&path).unwrap();
        let things = db.collection::<Document>("things");
        things.insert_one(doc! { "_id": 1, "n": 0 }).run().unwrap();
        let mut tx = db.start_transaction().unwrap();
        things
            .update_one(doc! { "_id": 1 }, doc! { "$set": { "n": 1 } })
            .session(&mut tx)
            .run()
            .unwrap();
        db.collection::<Document>("created_meanwhile")
            .insert_one(doc! { "_id": "x" })
            .run()
            .unwrap();
        db.collection::<Document>("created_meanwhile")
            .create_index(IndexModel::builder().keys(doc! { "v": 1 }).build())
            .run()
            .unwrap();
        // A handle that creates a collection beside the one created meanwhile.
        let mut creating = db.start_transaction().unwrap();
        db.collection::<Document>("created_by_handle")
            .insert_one(doc! { "_id": "y" })
            .session(&mut creating)
            .run()
            .unwrap();
        db.collection::<Document>("created_late")
            .insert_one(doc! { "_id": "z" })
            .run()
            .unwrap();
        tx.commit().unwrap();
        creating.commit().unwrap();
        assert_eq!(
            db.list_collection_names().run().unwrap(),
            [
                "created_by_handle",
                "created_late",
                "created_meanwhile",
                "things"
            ]
        );
        assert_verified(&db);
    }
    let db = Database::open(&path).unwrap();
    assert_eq!(
        db.list_collection_names().run().unwrap(),
        [
            "created_by_handle",
            "created_late",
            "created_meanwhile",
            "things"
        ]
    );
    assert_eq!(all(&db, "things"), [doc! { "_id": 1, "n": 1 }]);
    assert_eq!(all(&db, "created_by_handle"), [doc! { "_id": "y" }]);
    assert_eq!(all(&db, "created_late"), [doc! { "_id": "z" }]);
    assert_eq!(
        db.collection::<Document>("created_meanwhile")
            .list_indexes()
            .run()
            .unwrap()
            .collect::<spillway::Result<Vec<_>>>()
            .unwrap()
            .len(),
        2
    );
    assert_verified(&db);
}

#[test]
fn multikey_flags_set_on_both_sides_are_kept() {
    let db = Database::open_in_memory().unwrap();
    let things = db.collection::<Document>("things");
    things
        .create_index(IndexModel::builder().keys(doc! { "tags": 1 }).build())
        .run()
        .unwrap();
    let mut tx = db.start_transaction().unwrap();
    things
        .insert_one(doc! { "_id": 1, "tags": ["a", "b"] })
        .session(&mut tx)
        .run()
        .unwrap();
    things
        .insert_one(doc! { "_id": 2, "tags": ["b", "c"] })
        .run()
        .unwrap();
    tx.commit().unwrap();
    let tagged_b: Vec<Document> = things
        .find(doc! { "tags": "b" })
        .sort(doc! { "_id": 1 })
        .run()
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert_eq!(tagged_b.len(), 2);
    assert_verified(&db);
}

#[test]
fn a_closure_transaction_that_changed_the_keys_makes_the_handle_conflict() {
    let db = Database::open_in_memory().unwrap();
    let things = db.collection::<Document>("things");
    things.insert_one(doc! { "_id": 1, "n": 0 }).run().unwrap();
    let mut handle = db.start_transaction().unwrap();
    things
        .update_one(doc! { "_id": 1 }, doc! { "$inc": { "n": 1 } })
        .session(&mut handle)
        .run()
        .unwrap();
    db.transaction(|tx| {
        things
            .update_one(doc! { "_id": 1 }, doc! { "$inc": { "n": 10 } })
            .session(tx)
            .run()
    })
    .unwrap();
    assert_write_conflict(handle.commit());
    assert_eq!(all(&db, "things"), [doc! { "_id": 1, "n": 10 }]);

    // A handle cannot commit from inside a closure transaction on the same thread (it would
    // wait for the lock the closure holds): it is refused, and nothing of it is committed.
    let mut handle = db.start_transaction().unwrap();
    things
        .insert_one(doc! { "_id": 2 })
        .session(&mut handle)
        .run()
        .unwrap();
    let error = db
        .transaction(|_| handle.commit())
        .expect_err("a commit inside a closure transaction is refused");
    assert!(matches!(error.kind(), ErrorKind::TransactionAborted { .. }));
    assert_eq!(all(&db, "things"), [doc! { "_id": 1, "n": 10 }]);
}

#[test]
fn writers_outside_transactions_are_not_blocked_by_an_open_handle() {
    let db = Database::open_in_memory().unwrap();
    db.create_collection("things").run().unwrap();
    let things = db.collection::<Document>("things");
    let mut handle = db.start_transaction().unwrap();
    things
        .insert_one(doc! { "_id": "handle" })
        .session(&mut handle)
        .run()
        .unwrap();

    let (done, finished) = mpsc::channel();
    let writer_db = db.clone();
    let writer = std::thread::spawn(move || {
        let things = writer_db.collection::<Document>("things");
        for n in 0..10 {
            things.insert_one(doc! { "_id": n }).run().unwrap();
        }
        writer_db
            .transaction(|tx| {
                things
                    .insert_one(doc! { "_id": "closure" })
                    .session(tx)
                    .run()
            })
            .unwrap();
        done.send(()).unwrap();
    });
    // Under a lock held by the open handle the writer would never finish.
    finished
        .recv_timeout(Duration::from_secs(60))
        .expect("the writer finished while the handle was open");
    writer.join().unwrap();

    // The handle moves to another thread and commits there.
    let committer = std::thread::spawn(move || handle.commit());
    committer.join().unwrap().unwrap();
    assert_eq!(all(&db, "things").len(), 12);
}

#[test]
fn read_modify_write_handles_retried_on_conflict_lose_no_update() {
    let db = Database::open_in_memory().unwrap();
    let counters = db.collection::<Document>("counters");
    counters
        .insert_one(doc! { "_id": 1, "n": 0 })
        .run()
        .unwrap();
    let threads = 4;
    let increments = 20;
    let workers: Vec<_> = (0..threads)
        .map(|_| {
            let db = db.clone();
            std::thread::spawn(move || {
                let counters = db.collection::<Document>("counters");
                let mut conflicts = 0;
                // Read, then write what was read plus one: without the conflict checks,
                // concurrent handles would lose updates.
                let increment = || -> Result<(), Error> {
                    let mut tx = db.start_transaction()?;
                    let counter = counters
                        .find_one(doc! { "_id": 1 })
                        .session(&mut tx)
                        .run()?
                        .expect("the counter exists");
                    let n = counter.get_i32("n").expect("n is an int32");
                    counters
                        .update_one(doc! { "_id": 1 }, doc! { "$set": { "n": n + 1 } })
                        .session(&mut tx)
                        .run()?;
                    tx.commit()
                };
                for _ in 0..increments {
                    loop {
                        match increment() {
                            Ok(()) => break,
                            Err(error) if error.labels().contains(&"TransientTransactionError") => {
                                conflicts += 1;
                            }
                            Err(error) => panic!("{error}"),
                        }
                    }
                }
                conflicts
            })
        })
        .collect();
    for worker in workers {
        worker.join().unwrap();
    }
    assert_eq!(
        all(&db, "counters"),
        [doc! { "_id": 1, "n": threads * increments }]
    );
}

/// A database of small segments holding documents 0 to 9 of `things` (`{ _id, n: 0, pad }`)
/// among the dead records of 40 deleted ones: a compaction moves every live record.
fn compactable_things(dir: &std::path::Path) -> (Database, spillway::Collection<Document>) {
    let db = Database::open_with(
        dir.join("db"),
        &spillway::DatabaseOptions::default().segment_size(4096),
    )
    .unwrap();
    let things = db.collection::<Document>("things");
    for n in 0..50 {
        things
            .insert_one(doc! { "_id": n, "n": 0, "pad": "x".repeat(200) })
            .run()
            .unwrap();
    }
    things
        .delete_many(doc! { "_id": { "$gte": 10 } })
        .run()
        .unwrap();
    (db, things)
}

#[test]
fn a_compaction_while_a_handle_is_open_is_no_conflict() {
    let dir = tempfile::tempdir().unwrap();
    let (db, things) = compactable_things(dir.path());
    let mut tx = db.start_transaction().unwrap();
    things
        .update_one(doc! { "_id": 1 }, doc! { "$set": { "n": 1 } })
        .session(&mut tx)
        .run()
        .unwrap();
    // A write elsewhere in the collection, then a compaction that moves the live records:
    // the check asks which keys commits wrote, not where their values are stored.
    things
        .update_one(doc! { "_id": 2 }, doc! { "$set": { "n": 2 } })
        .run()
        .unwrap();
    db.compact().unwrap();
    // The next published state reads the compacted segments.
    things
        .update_one(doc! { "_id": 3 }, doc! { "$set": { "n": 3 } })
        .run()
        .unwrap();
    tx.commit().unwrap();
    let first = things.find_one(doc! { "_id": 1 }).run().unwrap().unwrap();
    assert_eq!(first.get_i32("n").unwrap(), 1);
    assert_verified(&db);
}

#[test]
fn a_value_written_back_as_it_was_and_then_compacted_still_conflicts() {
    let dir = tempfile::tempdir().unwrap();
    let (db, things) = compactable_things(dir.path());
    let mut tx = db.start_transaction().unwrap();
    things
        .update_one(doc! { "_id": 1 }, doc! { "$inc": { "n": 1 } })
        .session(&mut tx)
        .run()
        .unwrap();
    // Two commits leave document 1 as it was, and a compaction moves it: its value and
    // where it sits say nothing of the commits, but the handle's increment was computed
    // from a state they replaced.
    for n in [5, 0] {
        things
            .update_one(doc! { "_id": 1 }, doc! { "$set": { "n": n } })
            .run()
            .unwrap();
    }
    db.compact().unwrap();
    things
        .update_one(doc! { "_id": 3 }, doc! { "$set": { "n": 3 } })
        .run()
        .unwrap();
    assert_write_conflict(tx.commit());
    let first = things.find_one(doc! { "_id": 1 }).run().unwrap().unwrap();
    assert_eq!(first.get_i32("n").unwrap(), 0);
    assert_verified(&db);
}

#[test]
fn a_document_inserted_and_deleted_since_a_handle_began_conflicts_with_its_insert() {
    let db = Database::open_in_memory().unwrap();
    let things = db.collection::<Document>("things");
    things.insert_one(doc! { "_id": 1 }).run().unwrap();
    let mut tx = db.start_transaction().unwrap();
    things.insert_one(doc! { "_id": 2 }).run().unwrap();
    things.delete_one(doc! { "_id": 2 }).run().unwrap();
    let inserted = things
        .insert_one(doc! { "_id": 2, "by": "handle" })
        .session(&mut tx)
        .run()
        .map(drop);
    // Refused at the insert, as MongoDB refuses a write to a document written since the
    // transaction's snapshot; the commit then refuses too.
    assert_write_conflict(inserted);
    assert!(tx.commit().is_err());
    assert_eq!(things.count_documents(doc! {}).run().unwrap(), 1);
}

#[test]
fn pattern_side_documents_are_part_of_the_conflict_check() {
    let db = Database::open_in_memory().unwrap();
    db.create_collection("sales").run().unwrap();
    db.set_pattern(
        Pattern::outlier("sales", "buyers")
            .threshold(2)
            .link_field("book_id"),
    )
    .unwrap();
    let sales = db.collection::<Document>("sales");
    sales
        .insert_one(doc! { "_id": 1, "buyers": ["a", "b"] })
        .run()
        .unwrap();
    let mut handle = db.start_transaction().unwrap();
    sales
        .update_one(doc! { "_id": 1 }, doc! { "$push": { "buyers": "c" } })
        .session(&mut handle)
        .run()
        .unwrap();
    sales
        .update_one(doc! { "_id": 1 }, doc! { "$push": { "buyers": "d" } })
        .run()
        .unwrap();
    assert_write_conflict(handle.commit());
    let whole = sales.find_one(doc! { "_id": 1 }).run().unwrap().unwrap();
    assert_eq!(whole.get_array("buyers").unwrap().len(), 3);
    assert!(db.verify_patterns().unwrap().is_empty());

    // A policy declared under a handle that writes the collection is a conflict too.
    db.create_collection("books").run().unwrap();
    let mut handle = db.start_transaction().unwrap();
    db.collection::<Document>("books")
        .insert_one(doc! { "_id": 1, "reviews": [] })
        .session(&mut handle)
        .run()
        .unwrap();
    db.set_pattern(Pattern::subset("books", "reviews").keep(2))
        .unwrap();
    assert_write_conflict(handle.commit());
    assert!(db.verify_patterns().unwrap().is_empty());
}

#[test]
fn error_codes_and_names() {
    let db = Database::open_in_memory().unwrap();
    let things = db.collection::<Document>("things");
    things.insert_one(doc! { "_id": 1, "a": 1 }).run().unwrap();
    let check = |error: Error, code: i32, name: &str| {
        assert_eq!(error.code(), Some(code), "{error}");
        assert_eq!(error.code_name().as_deref(), Some(name), "{error}");
        assert!(error.labels().is_empty());
    };
    check(
        things
            .find(doc! { "a": { "$bogus": 1 } })
            .run()
            .unwrap_err(),
        2,
        "BadValue",
    );
    check(
        things
            .update_one(doc! { "_id": 1 }, doc! { "$bogus": { "a": 1 } })
            .run()
            .unwrap_err(),
        9,
        "FailedToParse",
    );
    check(
        things
            .update_one(doc! { "_id": 1 }, doc! { "$set": { "_id": 2 } })
            .run()
            .unwrap_err(),
        66,
        "ImmutableField",
    );
    check(
        db.collection::<Document>("bad$name")
            .insert_one(doc! {})
            .run()
            .unwrap_err(),
        73,
        "InvalidNamespace",
    );
    check(
        things.drop_index("nope").run().unwrap_err(),
        27,
        "IndexNotFound",
    );
    things
        .create_index(IndexModel::builder().keys(doc! { "a": 1 }).build())
        .run()
        .unwrap();
    check(
        things
            .create_index(
                IndexModel::builder()
                    .keys(doc! { "b": 1 })
                    .options(IndexOptions::builder().name("a_1".to_string()).build())
                    .build(),
            )
            .run()
            .unwrap_err(),
        86,
        "IndexKeySpecsConflict",
    );
    check(
        things
            .create_index(unique(doc! { "a": 1 }))
            .run()
            .unwrap_err(),
        85,
        "IndexOptionsConflict",
    );
    check(
        things
            .create_index(IndexModel::builder().keys(doc! { "a": 0 }).build())
            .run()
            .unwrap_err(),
        67,
        "CannotCreateIndex",
    );
    check(
        things.aggregate([doc! { "$bogus": {} }]).run().unwrap_err(),
        40324,
        "Location40324",
    );
}

// ---------------------------------------------------------------------------------------
// Model-based property test

const COLLECTION: &str = "things";
const HANDLES: usize = 3;

/// One write on one `_id`: each reads only the key it writes (the document `_id: id`, and the
/// unique `u` values it takes or frees), so that a handle that commits without conflict
/// behaves as if it ran alone at its commit.
#[derive(Debug, Clone)]
enum Write {
    /// `insert_one({ _id: id, u, n: 0 })`: refused when `id` or `u` is taken.
    Insert { id: i32, u: i32 },
    /// `update_one({ _id: id }, { $inc: { n: 1 }, $setOnInsert: { u: 100 + id } }, upsert)`.
    Increment { id: i32 },
    /// `delete_one({ _id: id })` (in a handle only when the document is in its view: a delete
    /// that finds nothing writes nothing, and reads a key a concurrent commit may write).
    Delete { id: i32 },
}

#[derive(Debug, Clone)]
enum Step {
    Begin(usize),
    InHandle(usize, Write),
    Read(usize),
    Commit(usize),
    Rollback(usize),
    Plain(Write),
}

fn write_strategy() -> impl Strategy<Value = Write> {
    prop_oneof![
        (0..4, 0..3).prop_map(|(id, u)| Write::Insert { id, u }),
        (0..4).prop_map(|id| Write::Increment { id }),
        (0..4).prop_map(|id| Write::Delete { id }),
    ]
}

fn step_strategy() -> impl Strategy<Value = Step> {
    prop_oneof![
        1 => (0..HANDLES).prop_map(Step::Begin),
        5 => (0..HANDLES, write_strategy()).prop_map(|(h, w)| Step::InHandle(h, w)),
        1 => (0..HANDLES).prop_map(Step::Read),
        3 => (0..HANDLES).prop_map(Step::Commit),
        1 => (0..HANDLES).prop_map(Step::Rollback),
        3 => write_strategy().prop_map(Step::Plain),
    ]
}

/// A key a write may touch: a document, or a value of the unique index on `u`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
enum Key {
    Document(i32),
    Unique(i32),
}

/// What one write did, on either side.
#[derive(Debug, Clone, PartialEq)]
enum Outcome {
    Inserted,
    Refused,
    Updated {
        upserted: bool,
    },
    Deleted(u64),
    /// `WriteConflict`: another open handle wrote a key first, or a commit changed it.
    Conflict,
}

/// The reference: a `MemoryCollection` plus the unique index on `u` it does not have.
#[derive(Debug, Clone, Default)]
struct Reference {
    collection: MemoryCollection,
    /// How many commits wrote each key: a key written since a handle began is a conflict
    /// for it even when the commit left the value it had (a document deleted and inserted
    /// again, say), as in MongoDB.
    writes: std::collections::HashMap<Key, u64>,
}

impl Reference {
    fn document(&self, id: i32) -> Option<&Document> {
        self.collection
            .documents()
            .iter()
            .find(|document| document.get("_id") == Some(&Bson::Int32(id)))
    }

    fn u_taken(&self, u: i32) -> bool {
        self.collection
            .documents()
            .iter()
            .any(|document| document.get("u") == Some(&Bson::Int32(u)))
    }

    /// Whether a commit wrote `key` between `self` (a handle's base) and `current`, whatever
    /// it holds now: a key inserted and deleted again between counts as written, as in
    /// MongoDB.
    fn written_between(&self, current: &Reference, key: Key) -> bool {
        let writes = |reference: &Reference| reference.writes.get(&key).copied().unwrap_or(0);
        writes(self) != writes(current)
    }

    /// Applies `write`; returns what it did and the keys it wrote.
    fn apply(&mut self, write: &Write) -> (Outcome, Vec<Key>) {
        let (outcome, keys) = self.apply_unversioned(write);
        for key in &keys {
            *self.writes.entry(*key).or_default() += 1;
        }
        (outcome, keys)
    }

    fn apply_unversioned(&mut self, write: &Write) -> (Outcome, Vec<Key>) {
        match *write {
            Write::Insert { id, u } => {
                if self.document(id).is_some() || self.u_taken(u) {
                    return (Outcome::Refused, Vec::new());
                }
                self.collection
                    .insert_one(doc! { "_id": id, "u": u, "n": 0 })
                    .unwrap();
                (Outcome::Inserted, vec![Key::Document(id), Key::Unique(u)])
            }
            Write::Increment { id } => {
                let result = self
                    .collection
                    .update(
                        &doc! { "_id": id },
                        &increment(id),
                        false,
                        &UpdateOptions {
                            upsert: true,
                            ..UpdateOptions::default()
                        },
                    )
                    .unwrap();
                let upserted = result.upserted_id.is_some();
                let mut keys = vec![Key::Document(id)];
                if upserted {
                    keys.push(Key::Unique(100 + id));
                }
                (Outcome::Updated { upserted }, keys)
            }
            Write::Delete { id } => {
                let u = self
                    .document(id)
                    .map(|document| document.get_i32("u").unwrap());
                let deleted = self.collection.delete(&doc! { "_id": id }, false).unwrap();
                let keys = match u {
                    Some(u) => vec![Key::Document(id), Key::Unique(u)],
                    None => Vec::new(),
                };
                (Outcome::Deleted(deleted), keys)
            }
        }
    }

    fn sorted(&self) -> Vec<Document> {
        let mut documents = self.collection.documents().to_vec();
        documents.sort_by_key(|document| document.get_i32("_id").unwrap());
        documents
    }
}

fn increment(id: i32) -> Document {
    doc! { "$inc": { "n": 1 }, "$setOnInsert": { "u": 100 + id } }
}

/// Runs `write` through the facade, in `session` when given.
fn run_write(db: &Database, write: &Write, session: Option<&mut Transaction>) -> Outcome {
    let things = db.collection::<Document>(COLLECTION);
    let result = match *write {
        Write::Insert { id, u } => {
            let action = things.insert_one(doc! { "_id": id, "u": u, "n": 0 });
            match session {
                Some(tx) => action.session(tx).run(),
                None => action.run(),
            }
            .map(|_| Outcome::Inserted)
        }
        Write::Increment { id } => {
            let action = things
                .update_one(doc! { "_id": id }, increment(id))
                .upsert(true);
            match session {
                Some(tx) => action.session(tx).run(),
                None => action.run(),
            }
            .map(|result| Outcome::Updated {
                upserted: result.upserted_id.is_some(),
            })
        }
        Write::Delete { id } => {
            let action = things.delete_one(doc! { "_id": id });
            match session {
                Some(tx) => action.session(tx).run(),
                None => action.run(),
            }
            .map(|result| Outcome::Deleted(result.deleted_count))
        }
    };
    match result {
        Ok(outcome) => outcome,
        Err(error) if error.is_duplicate_key() => Outcome::Refused,
        Err(error) if error.is_write_conflict() => {
            assert_eq!(error.labels(), ["TransientTransactionError"]);
            Outcome::Conflict
        }
        Err(error) => panic!("{write:?} failed: {error}"),
    }
}

/// An open handle and what the reference knows of it.
struct Open {
    tx: Transaction,
    /// The committed state when it began.
    base: Reference,
    /// The handle's view: `base` with its own writes.
    view: Reference,
    /// The writes it ran, with their outcomes, in order.
    writes: Vec<(Write, Outcome)>,
    /// The keys it wrote.
    keys: HashSet<Key>,
    /// Whether one of its writes failed (a duplicate key), dooming it.
    doomed: bool,
}

impl Open {
    fn begin(db: &Database, committed: &Reference) -> Open {
        Open {
            tx: db.start_transaction().unwrap(),
            base: committed.clone(),
            view: committed.clone(),
            writes: Vec::new(),
            keys: HashSet::new(),
            doomed: false,
        }
    }
}

fn run_steps(steps: &[Step]) -> Result<(), TestCaseError> {
    let db = Database::open_in_memory().unwrap();
    db.collection::<Document>(COLLECTION)
        .create_index(unique(doc! { "u": 1 }))
        .run()
        .unwrap();
    let mut committed = Reference::default();
    let mut handles: Vec<Option<Open>> = (0..HANDLES).map(|_| None).collect();
    for step in steps {
        match step {
            Step::Begin(h) => {
                if handles[*h].is_none() {
                    handles[*h] = Some(Open::begin(&db, &committed));
                }
            }
            Step::InHandle(h, write) => {
                // A write to a handle that is not open begins it.
                if handles[*h].is_none() {
                    handles[*h] = Some(Open::begin(&db, &committed));
                }
                let open = handles[*h].as_ref().expect("open");
                if open.doomed {
                    continue;
                }
                if let Write::Delete { id } = write
                    && open.view.document(*id).is_none()
                {
                    continue;
                }
                let mut view = open.view.clone();
                let (mut expected, keys) = view.apply(write);
                // First writer wins among open handles (a doomed one has given up its
                // keys); a key a commit wrote since the handle began is a conflict too.
                let claimed = handles.iter().enumerate().any(|(other, handle)| {
                    other != *h
                        && handle.as_ref().is_some_and(|handle| {
                            !handle.doomed && keys.iter().any(|key| handle.keys.contains(key))
                        })
                });
                let changed = keys
                    .iter()
                    .any(|&key| open.base.written_between(&committed, key));
                if claimed || changed {
                    expected = Outcome::Conflict;
                }
                let open = handles[*h].as_mut().expect("open");
                let actual = run_write(&db, write, Some(&mut open.tx));
                prop_assert_eq!(&actual, &expected, "{:?} in handle {}", write, h);
                if matches!(actual, Outcome::Refused | Outcome::Conflict) {
                    open.doomed = true;
                    continue;
                }
                open.view = view;
                open.keys.extend(keys);
                open.writes.push((write.clone(), actual));
            }
            Step::Read(h) => {
                let Some(open) = handles[*h].as_mut() else {
                    continue;
                };
                if open.doomed {
                    continue;
                }
                prop_assert_eq!(all_in(&db, COLLECTION, &mut open.tx), open.view.sorted());
            }
            Step::Commit(h) => {
                let Some(open) = handles[*h].take() else {
                    continue;
                };
                // The rule: a commit since it began wrote a key it writes.
                let overlapping = open
                    .keys
                    .iter()
                    .any(|&key| open.base.written_between(&committed, key));
                let result = open.tx.commit();
                if open.doomed {
                    let error = result.expect_err("a doomed handle cannot commit");
                    prop_assert!(
                        matches!(error.kind(), ErrorKind::TransactionAborted { .. }),
                        "{}",
                        error
                    );
                    prop_assert_eq!(error.labels(), ["TransientTransactionError"]);
                } else if overlapping {
                    let error = result.expect_err("a conflicting handle cannot commit");
                    prop_assert!(error.is_write_conflict(), "{}", error);
                    prop_assert_eq!(error.code(), Some(112));
                } else {
                    prop_assert!(result.is_ok(), "{:?}", result);
                    // Serial execution at its commit point gives what it saw.
                    for (write, outcome) in &open.writes {
                        let (replayed, _) = committed.apply(write);
                        prop_assert_eq!(&replayed, outcome, "{:?} replayed at commit", write);
                    }
                }
            }
            Step::Rollback(h) => {
                if let Some(open) = handles[*h].take() {
                    open.tx.rollback();
                }
            }
            Step::Plain(write) => {
                let actual = run_write(&db, write, None);
                let (expected, _) = committed.apply(write);
                prop_assert_eq!(&actual, &expected, "plain {:?}", write);
            }
        }
        prop_assert_eq!(all(&db, COLLECTION), committed.sorted());
    }
    let report = db.verify().unwrap();
    prop_assert!(report.is_clean(), "{:?}", report);
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(
        std::env::var("PROPTEST_CASES").ok().and_then(|cases| cases.parse().ok()).unwrap_or(64)
    ))]

    /// Random interleavings of handles and plain writes: a handle's write fails with
    /// `WriteConflict` exactly when another open handle wrote one of its keys (a document, a
    /// unique value) first or a commit changed one since the handle began; a commit is
    /// refused exactly when a key the handle writes has another committed value than when it
    /// began (or an earlier failure doomed it); and the committed state always equals the
    /// committed handles and plain writes run one after another in commit order (each
    /// handle's writes, replayed at its commit, do what they did in the handle).
    #[test]
    fn interleavings_match_serial_execution_in_commit_order(
        steps in proptest::collection::vec(step_strategy(), 1..50)
    ) {
        run_steps(&steps)?;
    }
}
