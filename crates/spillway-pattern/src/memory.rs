//! [`MemoryBackend`]: the backend traits over spillway-doc's [`MemoryCollection`]s, plain
//! in-memory collections with MongoDB's semantics. It is the reference the backend test
//! suite holds every other backend to, and the quickest way to try a policy.
//!
//! Every [`WriteBackend::apply`] is atomic (the batch is applied to copies of the collections
//! it touches, which replace the originals only when all of it succeeded). Transactions over
//! several batches are [`Layer`](crate::layer::Layer)'s: it works on a copy of the backend
//! and keeps it on success. For tests of interrupted work, [`MemoryBackend::fail_commits_after`]
//! makes a later commit fail as a crash between two commits would.

use std::collections::BTreeMap;
use std::fmt;

use bson::{Bson, Document, doc};
use spillway_doc::model::{FindOptions, MemoryCollection, ModelError, UpdateOptions};

use crate::backend::{Query, ReadBackend, Write, WriteBackend};
use crate::error::PatternError;
use crate::layer::Transactional;
use crate::policy::Policy;

/// The collections, their index key patterns and the policies, all in memory.
#[derive(Debug, Clone, Default)]
pub struct MemoryBackend {
    collections: BTreeMap<String, MemoryCollection>,
    indexes: BTreeMap<String, Vec<Document>>,
    policies: Vec<Policy>,
    /// Commits that may still succeed before an injected failure; `None`: no failure.
    commits_left: Option<u64>,
}

/// The in-memory backend's error.
#[derive(Debug, Clone, PartialEq)]
pub enum MemoryError {
    /// What the pattern layer refused.
    Pattern(PatternError),
    /// What the collections refused (a duplicate `_id`, an invalid filter...).
    Model(ModelError),
    /// A commit failed on purpose ([`MemoryBackend::fail_commits_after`]).
    Injected,
}

impl fmt::Display for MemoryError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            MemoryError::Pattern(error) => error.fmt(f),
            MemoryError::Model(error) => error.fmt(f),
            MemoryError::Injected => f.write_str("injected commit failure"),
        }
    }
}

impl std::error::Error for MemoryError {}

impl From<PatternError> for MemoryError {
    fn from(error: PatternError) -> Self {
        MemoryError::Pattern(error)
    }
}

impl From<ModelError> for MemoryError {
    fn from(error: ModelError) -> Self {
        MemoryError::Model(error)
    }
}

fn by_id(id: &Bson) -> Document {
    doc! { "_id": { "$eq": id.clone() } }
}

impl MemoryBackend {
    /// An empty backend.
    pub fn new() -> MemoryBackend {
        MemoryBackend::default()
    }

    /// Makes the commit after the next `commits` fail with [`MemoryError::Injected`], leaving
    /// what was committed before (as a crash between two commits would); later commits
    /// succeed again.
    pub fn fail_commits_after(&mut self, commits: u64) {
        self.commits_left = Some(commits);
    }

    /// Counts a commit; fails it if [`fail_commits_after`](Self::fail_commits_after) says so.
    fn commit(&mut self) -> Result<(), MemoryError> {
        match self.commits_left {
            None => Ok(()),
            Some(0) => {
                self.commits_left = None;
                Err(MemoryError::Injected)
            }
            Some(left) => {
                self.commits_left = Some(left - 1);
                Ok(())
            }
        }
    }

    /// The names of the collections, in order.
    pub fn collection_names(&self) -> Vec<String> {
        self.collections.keys().cloned().collect()
    }

    fn collection(&self, name: &str) -> Option<&MemoryCollection> {
        self.collections.get(name)
    }
}

impl ReadBackend for MemoryBackend {
    type Error = MemoryError;

    fn get(&self, collection: &str, id: &Bson) -> Result<Option<Document>, MemoryError> {
        let Some(documents) = self.collection(collection) else {
            return Ok(None);
        };
        Ok(documents
            .find(&by_id(id), &FindOptions::default())?
            .into_iter()
            .next())
    }

    fn find(&self, collection: &str, query: &Query) -> Result<Vec<Document>, MemoryError> {
        let Some(documents) = self.collection(collection) else {
            return Ok(Vec::new());
        };
        let options = FindOptions {
            // Natural order is `_id` order, as in the embedded database.
            sort: Some(query.sort.clone().unwrap_or_else(|| doc! { "_id": 1 })),
            skip: query.skip,
            limit: query
                .limit
                .map_or(0, |limit| i64::try_from(limit).unwrap_or(i64::MAX)),
            projection: None,
        };
        Ok(documents.find(&query.filter, &options)?)
    }

    fn count(&self, collection: &str, filter: &Document) -> Result<u64, MemoryError> {
        let Some(documents) = self.collection(collection) else {
            return Ok(0);
        };
        Ok(documents.count_documents(filter, 0, 0)?)
    }

    fn policies(&self) -> Result<Vec<Policy>, MemoryError> {
        Ok(self.policies.clone())
    }

    fn collection_exists(&self, collection: &str) -> Result<bool, MemoryError> {
        Ok(self.collections.contains_key(collection))
    }

    fn index_keys(&self, collection: &str) -> Result<Vec<Document>, MemoryError> {
        Ok(self.indexes.get(collection).cloned().unwrap_or_default())
    }
}

impl WriteBackend for MemoryBackend {
    fn apply(&mut self, batch: Vec<Write>) -> Result<(), MemoryError> {
        let mut changed: BTreeMap<String, MemoryCollection> = BTreeMap::new();
        for write in batch {
            let name = write.collection().to_string();
            let documents = changed
                .entry(name.clone())
                .or_insert_with(|| self.collections.get(&name).cloned().unwrap_or_default());
            match write {
                Write::Insert { document, .. } => {
                    documents.insert_one(document)?;
                }
                Write::Replace { document, .. } => {
                    let id = document.get("_id").cloned().unwrap_or(Bson::Null);
                    let result = documents.replace_one(&by_id(&id), &document, false)?;
                    if result.matched_count == 0 {
                        return Err(PatternError::InvalidRecord {
                            message: format!(
                                "collection '{name}' has no document with _id {id} to replace"
                            ),
                        }
                        .into());
                    }
                }
                Write::Delete { id, .. } => {
                    documents.delete(&by_id(&id), false)?;
                }
                Write::Claim { id, .. } => {
                    if documents.count_documents(&by_id(&id), 0, 0)? == 0 {
                        return Err(PatternError::InvalidRecord {
                            message: format!(
                                "collection '{name}' has no document with _id {id} to claim"
                            ),
                        }
                        .into());
                    }
                }
                Write::Push {
                    id, field, values, ..
                } => {
                    let mut filter = by_id(&id);
                    filter.insert(field.as_str(), doc! { "$type": "array" });
                    let push = doc! { "$push": { field.as_str(): { "$each": values } } };
                    let result =
                        documents.update(&filter, &push, false, &UpdateOptions::default())?;
                    if result.matched_count == 0 {
                        return Err(PatternError::InvalidRecord {
                            message: format!(
                                "collection '{name}' has no document with _id {id} holding an array '{field}'"
                            ),
                        }
                        .into());
                    }
                }
            }
        }
        for (name, documents) in changed {
            self.indexes.entry(name.clone()).or_default();
            self.collections.insert(name, documents);
        }
        Ok(())
    }

    fn ensure_index(&mut self, collection: &str, keys: &Document) -> Result<(), MemoryError> {
        let indexes = self.indexes.entry(collection.to_string()).or_default();
        self.collections.entry(collection.to_string()).or_default();
        if !indexes.contains(keys) {
            indexes.push(keys.clone());
        }
        Ok(())
    }

    fn create_collection(&mut self, collection: &str) -> Result<(), MemoryError> {
        self.collections.entry(collection.to_string()).or_default();
        self.indexes.entry(collection.to_string()).or_default();
        Ok(())
    }

    fn drop_collection(&mut self, collection: &str) -> Result<(), MemoryError> {
        self.collections.remove(collection);
        self.indexes.remove(collection);
        Ok(())
    }

    fn save_policies(&mut self, policies: Vec<Policy>) -> Result<(), MemoryError> {
        self.policies = policies;
        Ok(())
    }
}

impl Transactional for MemoryBackend {
    fn transaction<T>(
        &mut self,
        mut work: impl FnMut(&mut Self) -> Result<T, MemoryError>,
    ) -> Result<T, MemoryError> {
        let mut copy = self.clone();
        let value = work(&mut copy)?;
        self.commit()?;
        copy.commits_left = self.commits_left;
        *self = copy;
        Ok(value)
    }
}

#[cfg(test)]
mod tests {
    use bson::{Bson, doc};

    use super::MemoryBackend;
    use crate::backend::{ReadBackend, Write, WriteBackend};

    fn push(id: i32, field: &str, values: Vec<Bson>) -> Write {
        Write::Push {
            collection: "c".into(),
            id: Bson::Int32(id),
            field: field.into(),
            values,
        }
    }

    fn stored(backend: &MemoryBackend) -> bson::Document {
        backend.get("c", &Bson::Int32(1)).unwrap().unwrap()
    }

    /// The reference for every backend: a push appends in order; a push or a claim whose
    /// document is missing, or a push onto what is not an array, fails the whole batch.
    #[test]
    fn pushes_append_and_claims_change_nothing_or_the_batch_fails() {
        let mut backend = MemoryBackend::new();
        backend
            .apply(vec![Write::Insert {
                collection: "c".into(),
                document: doc! { "_id": 1, "list": [1], "text": "t" },
            }])
            .unwrap();
        backend
            .apply(vec![
                push(1, "list", vec![Bson::Int32(2), Bson::Int32(3)]),
                Write::Claim {
                    collection: "c".into(),
                    id: Bson::Int32(1),
                },
                push(1, "list", vec![Bson::Int32(4)]),
            ])
            .unwrap();
        assert_eq!(
            stored(&backend),
            doc! { "_id": 1, "list": [1, 2, 3, 4], "text": "t" }
        );
        for refused in [
            push(2, "list", vec![Bson::Int32(5)]),
            push(1, "text", vec![Bson::Int32(5)]),
            push(1, "absent", vec![Bson::Int32(5)]),
            Write::Claim {
                collection: "c".into(),
                id: Bson::Int32(2),
            },
        ] {
            let mut backend = backend.clone();
            let before = stored(&backend);
            let batch = vec![push(1, "list", vec![Bson::Int32(9)]), refused.clone()];
            assert!(backend.apply(batch).is_err(), "{refused:?} was applied");
            assert_eq!(stored(&backend), before, "{refused:?}");
        }
    }
}

/// The rename of a policy's collection, run on the in-memory backend (here, above both).
#[cfg(test)]
mod rename_tests {
    use bson::{Bson, doc};

    use super::MemoryBackend;
    use crate::backend::{Query, ReadBackend, Write, WriteBackend};
    use crate::migration::{declare, migration_step, unfinished};
    use crate::policy::{Pattern, Progress};
    use crate::verify::verify;
    use crate::writes::before_rename;

    /// A rename in the middle of a migration: the policy moves with its progress (the last
    /// `_id` done), and the resumed migration on the new name splits exactly the documents
    /// the old name had not reached, none twice.
    #[test]
    fn an_unfinished_migration_carries_over_to_the_new_name() {
        let mut backend = MemoryBackend::new();
        backend.create_collection("c").unwrap();
        let documents: Vec<_> = (1..=5)
            .map(|id| doc! { "_id": id, "a": (0..id * 2).collect::<Vec<i32>>() })
            .collect();
        let inserts = documents
            .iter()
            .map(|document| Write::Insert {
                collection: "c".into(),
                document: document.clone(),
            })
            .collect();
        backend.apply(inserts).unwrap();
        declare(&mut backend, Pattern::outlier("c", "a").threshold(2).into()).unwrap();
        let policy = unfinished(&backend.policies().unwrap()).cloned().unwrap();
        migration_step(&mut backend, &policy, 2).unwrap();
        let progress = backend.policies().unwrap()[0].progress.clone();
        assert_eq!(
            progress,
            Progress::Applying {
                through: Some(Bson::Int32(2))
            }
        );

        // The caller's rename of the main collection: the same documents under `d`.
        let stored = backend.find("c", &Query::default()).unwrap();
        backend.drop_collection("c").unwrap();
        backend.create_collection("d").unwrap();
        let moved = stored
            .into_iter()
            .map(|document| Write::Insert {
                collection: "d".into(),
                document,
            })
            .collect();
        backend.apply(moved).unwrap();
        let moves = before_rename(&mut backend, "c", "d", str::to_string).unwrap();
        assert!(moves.is_empty(), "the overflow keeps its name");

        let policies = backend.policies().unwrap();
        assert_eq!(policies[0].pattern.collection(), "d");
        assert_eq!(policies[0].pattern.side_collection(), "extra_c");
        assert_eq!(policies[0].progress, progress, "the progress came along");
        while let Some(policy) = unfinished(&backend.policies().unwrap()).cloned() {
            migration_step(&mut backend, &policy, 2).unwrap();
        }
        let policy = backend.policies().unwrap()[0].clone();
        assert_eq!(policy.progress, Progress::Active);
        assert!(verify(&policy, &backend).unwrap().is_empty());
        let engine = crate::Engine::new("d", std::slice::from_ref(&policy));
        for document in &documents {
            let id = document.get("_id").unwrap();
            let main = backend.get("d", id).unwrap().unwrap();
            assert!(main.get_array("a").unwrap().len() <= 2, "split: {main}");
            assert_eq!(&engine.expand(&backend, &main).unwrap(), document);
        }
    }
}
