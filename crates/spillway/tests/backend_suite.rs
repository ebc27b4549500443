//! The backend test suite (`spillway_pattern::suite`) on the embedded database: the same
//! cases the in-memory reference backend passes, through the facade's public API.
//!
//! The database lives on spillway-store's in-memory file backend, so that a failing commit
//! can be injected (a failed sync, after which the store refuses writes, as after a crash)
//! and a restart is a simulated power loss and a reopen. Writes behind the pattern layer's
//! back set the policy records aside in the catalog keyspace, write through the ordinary API
//! (documents and indexes stay consistent with each other), and put the records back.
//!
//! Cases of the central property: 64 by default; `PROPTEST_CASES` overrides.

use std::sync::Arc;

use spillway::bson::{Document, doc};
use spillway::{Database, Pattern, Violation};
use spillway_pattern::Write;
use spillway_pattern::suite::Target;
use spillway_store::backend::{CrashMode, FaultPlan, MemoryBackend};
use spillway_store::{Store, StoreOptions, WriteBatch};

const DIR: &str = "/suite";
const CATALOG: &str = "catalog";
const POLICY_PREFIX: &[u8] = b"pattern:";

/// The embedded database as the suite drives it.
struct Embedded {
    files: Arc<MemoryBackend>,
    db: Option<Database>,
}

fn open_store(files: &Arc<MemoryBackend>) -> Store {
    let options = StoreOptions {
        segment_size: 1 << 20,
        ..StoreOptions::default()
    };
    Store::open_with_backend(files.clone(), DIR, options).expect("the store opens")
}

impl Embedded {
    fn new() -> Embedded {
        let files = Arc::new(MemoryBackend::new());
        let db = Database::from_store(open_store(&files)).expect("the database opens");
        Embedded {
            files,
            db: Some(db),
        }
    }

    fn db(&self) -> &Database {
        self.db.as_ref().expect("open")
    }

    /// Replaces the policy records of the catalog by `records` and returns the old ones;
    /// the database must be closed.
    fn swap_policy_records(&self, records: &[(Vec<u8>, Vec<u8>)]) -> Vec<(Vec<u8>, Vec<u8>)> {
        let store = open_store(&self.files);
        let catalog = store.keyspace_id(CATALOG).expect("a catalog keyspace");
        let old: Vec<(Vec<u8>, Vec<u8>)> = store
            .snapshot()
            .iter(catalog)
            .expect("the catalog reads")
            .map(|entry| entry.map(|(key, value)| (key.to_vec(), value.to_vec())))
            .collect::<Result<Vec<_>, _>>()
            .expect("the catalog reads")
            .into_iter()
            .filter(|(key, _)| key.starts_with(POLICY_PREFIX))
            .collect();
        let mut batch = WriteBatch::new();
        for (key, _) in &old {
            batch.delete(catalog, key);
        }
        for (key, value) in records {
            batch.put(catalog, key, value);
        }
        store.commit(batch).expect("the catalog writes");
        old
    }
}

impl Target for Embedded {
    type Error = spillway::Error;

    fn create_collection(&mut self, name: &str) -> spillway::Result<()> {
        self.db().create_collection(name).run()
    }

    fn set_pattern(&mut self, pattern: Pattern) -> spillway::Result<()> {
        self.db().set_pattern(pattern)
    }

    fn remove_pattern(&mut self, collection: &str, field: &str) -> spillway::Result<()> {
        self.db().remove_pattern(collection, field)
    }

    fn insert_one(&mut self, collection: &str, document: Document) -> spillway::Result<()> {
        self.db()
            .collection::<Document>(collection)
            .insert_one(document)
            .run()
            .map(drop)
    }

    fn update(
        &mut self,
        collection: &str,
        filter: &Document,
        update: &Document,
        multi: bool,
    ) -> spillway::Result<u64> {
        let collection = self.db().collection::<Document>(collection);
        let is_replacement = update.keys().all(|key| !key.starts_with('$'));
        let result = if is_replacement {
            collection
                .replace_one(filter.clone(), update.clone())
                .run()?
        } else if multi {
            collection
                .update_many(filter.clone(), update.clone())
                .run()?
        } else {
            collection
                .update_one(filter.clone(), update.clone())
                .run()?
        };
        Ok(result.modified_count)
    }

    fn delete(
        &mut self,
        collection: &str,
        filter: &Document,
        multi: bool,
    ) -> spillway::Result<u64> {
        let collection = self.db().collection::<Document>(collection);
        let result = if multi {
            collection.delete_many(filter.clone()).run()?
        } else {
            collection.delete_one(filter.clone()).run()?
        };
        Ok(result.deleted_count)
    }

    fn find(
        &mut self,
        collection: &str,
        filter: &Document,
        expand: bool,
    ) -> spillway::Result<Vec<Document>> {
        self.db()
            .collection::<Document>(collection)
            .find(filter.clone())
            .sort(doc! { "_id": 1 })
            .stored(!expand)
            .run()?
            .collect()
    }

    fn verify(&mut self) -> spillway::Result<Vec<Violation>> {
        self.db().verify_patterns()
    }

    fn write_behind(&mut self, writes: Vec<Write>) -> spillway::Result<()> {
        drop(self.db.take());
        let records = self.swap_policy_records(&[]);
        {
            let db = Database::from_store(open_store(&self.files))?;
            assert!(db.patterns().is_empty(), "the policies are set aside");
            for write in writes {
                match write {
                    Write::Insert {
                        collection,
                        document,
                    } => {
                        db.collection::<Document>(&collection)
                            .insert_one(document)
                            .run()?;
                    }
                    Write::Replace {
                        collection,
                        document,
                    } => {
                        let id = document.get("_id").cloned().expect("an _id");
                        db.collection::<Document>(&collection)
                            .replace_one(doc! { "_id": id }, document)
                            .run()?;
                    }
                    Write::Delete { collection, id } => {
                        db.collection::<Document>(&collection)
                            .delete_one(doc! { "_id": id })
                            .run()?;
                    }
                    Write::Claim { .. } => {}
                    Write::Push {
                        collection,
                        id,
                        field,
                        values,
                    } => {
                        db.collection::<Document>(&collection)
                            .update_one(
                                doc! { "_id": id },
                                doc! { "$push": { field: { "$each": values } } },
                            )
                            .run()?;
                    }
                }
            }
        }
        self.swap_policy_records(&records);
        self.db = Some(Database::from_store(open_store(&self.files))?);
        Ok(())
    }

    fn fail_commits_after(&mut self, commits: u64) {
        // A commit syncs the log once (durability SyncEveryCommit), and once more for each
        // keyspace it creates: counting syncs, the failure lands at or before the commit the
        // suite names, which the suite allows for.
        let syncs = self.files.counters().syncs;
        self.files.set_faults(FaultPlan {
            fail_sync_at: Some(syncs + commits + 1),
            ..FaultPlan::default()
        });
    }

    fn restart(&mut self) -> spillway::Result<()> {
        drop(self.db.take());
        self.files.set_faults(FaultPlan::default());
        self.files = Arc::new(self.files.crash(CrashMode::LoseUnsynced));
        self.db = Some(Database::from_store(open_store(&self.files))?);
        Ok(())
    }
}

spillway_pattern::suite_tests!(Embedded::new, 64);
