//! Model-based property test: random sequences of puts, deletes, batches, clears, snapshot
//! reads, reopens, checkpoints and compactions against a `BTreeMap` model. The store and the
//! model must agree after every step, and every snapshot taken earlier must still show the
//! model as it was when the snapshot was taken.

use std::collections::BTreeMap;
use std::sync::Arc;

use proptest::prelude::*;
use spillway_store::backend::{Backend, FileBackend, MemoryBackend};
use spillway_store::{KeyspaceId, Snapshot, Store, StoreOptions, WriteBatch};

const KEYSPACES: [&str; 3] = ["c:books", "c:sales", "i:sales.date"];

type Model = BTreeMap<(usize, Vec<u8>), Vec<u8>>;

#[derive(Clone, Debug)]
enum Write {
    Put(usize, Vec<u8>, Vec<u8>),
    Delete(usize, Vec<u8>),
    Clear(usize),
}

#[derive(Clone, Debug)]
enum Step {
    Batch(Vec<Write>),
    TakeSnapshot,
    Reopen,
    Checkpoint,
    Compact,
}

fn key() -> impl Strategy<Value = Vec<u8>> {
    // A small key space so that overwrites and deletes hit existing keys.
    (0u8..24, 0usize..3).prop_map(|(k, extra)| {
        let mut key = vec![b'k', k];
        key.extend(std::iter::repeat_n(b'x', extra));
        key
    })
}

fn write() -> impl Strategy<Value = Write> {
    prop_oneof![
        6 => (0..KEYSPACES.len(), key(), prop::collection::vec(any::<u8>(), 0..400))
            .prop_map(|(ks, k, v)| Write::Put(ks, k, v)),
        3 => (0..KEYSPACES.len(), key()).prop_map(|(ks, k)| Write::Delete(ks, k)),
        1 => (0..KEYSPACES.len()).prop_map(Write::Clear),
    ]
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        12 => prop::collection::vec(write(), 1..6).prop_map(Step::Batch),
        2 => Just(Step::TakeSnapshot),
        2 => Just(Step::Reopen),
        1 => Just(Step::Checkpoint),
        1 => Just(Step::Compact),
    ]
}

fn open(backend: &Arc<dyn Backend>, dir: &std::path::Path) -> (Store, Vec<KeyspaceId>) {
    let options = StoreOptions {
        segment_size: 4096,
        compaction_live_ratio: 0.9,
        // Automatic checkpoints (in the background, and on close) at points the steps do
        // not choose, besides the explicit ones.
        checkpoint_after_log_bytes: 2048,
        ..StoreOptions::default()
    };
    let store = Store::open_with_backend(backend.clone(), dir, options).expect("open");
    let ids = KEYSPACES
        .iter()
        .map(|name| store.keyspace(name).expect("keyspace"))
        .collect();
    (store, ids)
}

fn check(snapshot: &Snapshot, ids: &[KeyspaceId], model: &Model) -> Result<(), TestCaseError> {
    for (index, &id) in ids.iter().enumerate() {
        let expected: Vec<(Vec<u8>, Vec<u8>)> = model
            .range((index, Vec::new())..(index + 1, Vec::new()))
            .map(|((_, k), v)| (k.clone(), v.clone()))
            .collect();
        let forward: Vec<(Vec<u8>, Vec<u8>)> = snapshot
            .iter(id)
            .unwrap()
            .map(|e| e.map(|(k, v)| (k.to_vec(), v.to_vec())))
            .collect::<Result<_, _>>()
            .unwrap();
        prop_assert_eq!(&forward, &expected);
        let mut backward: Vec<(Vec<u8>, Vec<u8>)> = snapshot
            .iter(id)
            .unwrap()
            .rev()
            .map(|e| e.map(|(k, v)| (k.to_vec(), v.to_vec())))
            .collect::<Result<_, _>>()
            .unwrap();
        backward.reverse();
        prop_assert_eq!(&backward, &expected);
        prop_assert_eq!(snapshot.len(id).unwrap(), expected.len());
        for (k, v) in &expected {
            prop_assert_eq!(snapshot.get(id, k).unwrap(), Some(&v[..]));
        }
        prop_assert_eq!(snapshot.get(id, b"absent").unwrap(), None);
    }
    Ok(())
}

fn run(
    backend: &Arc<dyn Backend>,
    dir: &std::path::Path,
    steps: Vec<Step>,
) -> Result<(), TestCaseError> {
    let (mut store, mut ids) = open(backend, dir);
    let mut model = Model::new();
    let mut snapshots: Vec<(Snapshot, Vec<KeyspaceId>, Model)> = Vec::new();
    for step in steps {
        match step {
            Step::Batch(writes) => {
                let mut batch = WriteBatch::new();
                for write in &writes {
                    match write {
                        Write::Put(ks, k, v) => {
                            batch.put(ids[*ks], k, v);
                        }
                        Write::Delete(ks, k) => {
                            batch.delete(ids[*ks], k);
                        }
                        Write::Clear(ks) => {
                            batch.clear_keyspace(ids[*ks]);
                        }
                    }
                }
                store.commit(batch).unwrap();
                for write in writes {
                    match write {
                        Write::Put(ks, k, v) => {
                            model.insert((ks, k), v);
                        }
                        Write::Delete(ks, k) => {
                            model.remove(&(ks, k));
                        }
                        Write::Clear(ks) => model.retain(|(k, _), _| *k != ks),
                    }
                }
            }
            Step::TakeSnapshot => snapshots.push((store.snapshot(), ids.clone(), model.clone())),
            Step::Reopen => {
                drop(store);
                (store, ids) = open(backend, dir);
            }
            Step::Checkpoint => store.checkpoint().unwrap(),
            Step::Compact => {
                store.compact().unwrap();
            }
        }
        check(&store.snapshot(), &ids, &model)?;
        for (snapshot, snapshot_ids, snapshot_model) in &snapshots {
            check(snapshot, snapshot_ids, snapshot_model)?;
        }
    }
    let report = store.verify().unwrap();
    prop_assert!(report.is_clean(), "{:?}", report.damage);
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn store_matches_model_in_memory(steps in prop::collection::vec(step(), 1..40)) {
        run(&(Arc::new(MemoryBackend::new()) as Arc<dyn Backend>), std::path::Path::new("/model"), steps)?;
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 12, ..ProptestConfig::default() })]

    #[test]
    fn store_matches_model_on_disk(steps in prop::collection::vec(step(), 1..30)) {
        let dir = tempfile::tempdir().unwrap();
        run(&(Arc::new(FileBackend) as Arc<dyn Backend>), dir.path(), steps)?;
    }
}
