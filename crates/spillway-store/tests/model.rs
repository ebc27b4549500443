//! Model-based property test: random sequences of puts, deletes, batches, clears, snapshot
//! reads, reopens, checkpoints, compactions and reopens with the current checkpoint damaged
//! (the store must open from its fallback, or refuse if it has none) against a `BTreeMap`
//! model. The store and the model must agree after every step, and every snapshot taken
//! earlier must still show the model as it was when the snapshot was taken. Automatic checkpoints fire every 2 KiB of log,
//! so the keys are split between the mapped checkpoint and the in-memory overlay at random
//! points; range scans with random bounds, walked from both ends in a random interleaving,
//! cross that boundary.

use std::collections::BTreeMap;
use std::ops::Bound;
use std::sync::Arc;

use proptest::prelude::*;
use spillway_store::backend::{Backend, FileBackend, MemoryBackend};
use spillway_store::{KeyspaceId, Snapshot, Store, StoreOptions, WriteBatch, fuzzing};

const KEYSPACES: [&str; 3] = ["c:books", "c:sales", "i:sales.date"];

type Model = BTreeMap<(usize, Vec<u8>), Vec<u8>>;

#[derive(Clone, Debug)]
enum Write {
    Put(usize, Vec<u8>, Vec<u8>),
    Delete(usize, Vec<u8>),
    Clear(usize),
}

#[derive(Clone, Copy, Debug)]
enum Damage {
    /// A byte of the archive flipped (at this fraction of the file, in 1/256ths).
    Flip(u8),
    /// Cut to this fraction of the file, in 1/256ths.
    Truncate(u8),
    ZeroHeader,
}

#[derive(Clone, Debug)]
enum Step {
    Batch(Vec<Write>),
    TakeSnapshot,
    Reopen,
    Checkpoint,
    Compact,
    /// Closes the store, damages its current checkpoint and reopens it.
    DamageCheckpoint(Damage),
    /// A range scan of a keyspace, on the store and on every snapshot; `true` in the walk
    /// takes the next entry from the back.
    Scan(usize, Bound<Vec<u8>>, Bound<Vec<u8>>, Vec<bool>),
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

fn bound() -> impl Strategy<Value = Bound<Vec<u8>>> {
    prop_oneof![
        1 => Just(Bound::Unbounded),
        2 => key().prop_map(Bound::Included),
        2 => key().prop_map(Bound::Excluded),
    ]
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        12 => prop::collection::vec(write(), 1..6).prop_map(Step::Batch),
        2 => Just(Step::TakeSnapshot),
        2 => Just(Step::Reopen),
        1 => Just(Step::Checkpoint),
        1 => Just(Step::Compact),
        2 => prop_oneof![
            any::<u8>().prop_map(Damage::Flip),
            any::<u8>().prop_map(Damage::Truncate),
            Just(Damage::ZeroHeader),
        ]
        .prop_map(Step::DamageCheckpoint),
        3 => (0..KEYSPACES.len(), bound(), bound(), prop::collection::vec(any::<bool>(), 0..40))
            .prop_map(|(ks, low, high, walk)| Step::Scan(ks, low, high, walk)),
    ]
}

/// Scans `low..high` of keyspace `index`, taking entries from the front or the back as `walk`
/// says (then from the front until the end), and compares with the model.
fn check_scan(
    snapshot: &Snapshot,
    ids: &[KeyspaceId],
    model: &Model,
    index: usize,
    bounds: (&Bound<Vec<u8>>, &Bound<Vec<u8>>),
    walk: &[bool],
) -> Result<(), TestCaseError> {
    let as_slice = |b: &Bound<Vec<u8>>| match b {
        Bound::Included(k) => Bound::Included(k.clone()),
        Bound::Excluded(k) => Bound::Excluded(k.clone()),
        Bound::Unbounded => Bound::Unbounded,
    };
    let (low, high) = (as_slice(bounds.0), as_slice(bounds.1));
    let in_range = |k: &Vec<u8>| {
        let above = match &low {
            Bound::Included(b) => k >= b,
            Bound::Excluded(b) => k > b,
            Bound::Unbounded => true,
        };
        let below = match &high {
            Bound::Included(b) => k <= b,
            Bound::Excluded(b) => k < b,
            Bound::Unbounded => true,
        };
        above && below
    };
    let mut expected: std::collections::VecDeque<(Vec<u8>, Vec<u8>)> = model
        .range((index, Vec::new())..(index + 1, Vec::new()))
        .filter(|((_, k), _)| in_range(k))
        .map(|((_, k), v)| (k.clone(), v.clone()))
        .collect();
    let range = (
        match bounds.0 {
            Bound::Included(k) => Bound::Included(&k[..]),
            Bound::Excluded(k) => Bound::Excluded(&k[..]),
            Bound::Unbounded => Bound::Unbounded,
        },
        match bounds.1 {
            Bound::Included(k) => Bound::Included(&k[..]),
            Bound::Excluded(k) => Bound::Excluded(&k[..]),
            Bound::Unbounded => Bound::Unbounded,
        },
    );
    let mut scan = snapshot.range(ids[index], range).unwrap();
    let mut steps = walk.iter().copied().chain(std::iter::repeat(false));
    loop {
        let from_back = steps.next().unwrap_or(false);
        let (found, wanted) = if from_back {
            (scan.next_back(), expected.pop_back())
        } else {
            (scan.next(), expected.pop_front())
        };
        let found = found.map(|e| e.map(|(k, v)| (k.to_vec(), v.to_vec())).unwrap());
        prop_assert_eq!(
            &found,
            &wanted,
            "{:?} {:?} from_back={}",
            bounds.0,
            bounds.1,
            from_back
        );
        if found.is_none() {
            // Exhausted from one end means exhausted from both.
            prop_assert!(scan.next().is_none() && scan.next_back().is_none());
            return Ok(());
        }
    }
}

fn options() -> StoreOptions {
    StoreOptions {
        segment_size: 4096,
        compaction_live_ratio: 0.9,
        // Automatic checkpoints (in the background, and on close) at points the steps do
        // not choose, besides the explicit ones.
        checkpoint_after_log_bytes: 2048,
        ..StoreOptions::default()
    }
}

fn open(backend: &Arc<dyn Backend>, dir: &std::path::Path) -> (Store, Vec<KeyspaceId>) {
    let store = Store::open_with_backend(backend.clone(), dir, options()).expect("open");
    let ids = KEYSPACES
        .iter()
        .map(|name| store.keyspace(name).expect("keyspace"))
        .collect();
    (store, ids)
}

/// Replaces `file` with `bytes` through a rename, as a new file: snapshots of an earlier
/// handle still map the old one, which must not change under them.
fn replace_file(backend: &Arc<dyn Backend>, dir: &std::path::Path, file: &str, bytes: &[u8]) {
    let temp = dir.join("damage.tmp");
    let written = backend.create_file(&temp).unwrap();
    written.write_all_at(bytes, 0).unwrap();
    written.sync_data().unwrap();
    drop(written);
    backend.rename(&temp, &dir.join(file)).unwrap();
    backend.sync_dir(dir).unwrap();
}

/// Closes `store`, damages its current checkpoint (if it has one) and reopens it: from the
/// fallback, reported, healed by a new checkpoint that replaced the damaged file; or, without
/// a fallback, after a refusal naming the file (the intact file is then put back).
fn reopen_with_damaged_checkpoint(
    backend: &Arc<dyn Backend>,
    dir: &std::path::Path,
    store: Store,
    how: Damage,
) -> Result<(Store, Vec<KeyspaceId>), TestCaseError> {
    drop(store);
    let manifest = backend.read_file(&dir.join("MANIFEST")).unwrap();
    let named = fuzzing::manifest_files(&manifest).unwrap();
    let Some(checkpoint) = named.checkpoint.clone() else {
        return Ok(open(backend, dir));
    };
    let intact = backend.read_file(&dir.join(&checkpoint)).unwrap();
    let mut damaged = intact.clone();
    match how {
        Damage::Flip(at) => damaged[intact.len() * usize::from(at) / 256] ^= 0x08,
        Damage::Truncate(at) => damaged.truncate(intact.len() * usize::from(at) / 256),
        Damage::ZeroHeader => damaged[..32].fill(0),
    }
    replace_file(backend, dir, &checkpoint, &damaged);
    if named.fallback.is_none() {
        let error = Store::open_with_backend(backend.clone(), dir, options()).unwrap_err();
        let message = error.to_string();
        prop_assert!(
            message.contains(&checkpoint) && message.contains("run repair"),
            "{}",
            message
        );
        replace_file(backend, dir, &checkpoint, &intact);
        return Ok(open(backend, dir));
    }
    let (store, ids) = open(backend, dir);
    let fell_back = store.recovery_report().checkpoint_fallback.clone();
    prop_assert_eq!(
        fell_back.map(|f| f.damaged),
        Some(dir.join(&checkpoint)),
        "{:?}",
        named
    );
    // Healed at once: a new checkpoint replaced the damaged file.
    prop_assert!(backend.read_file(&dir.join(&checkpoint)).is_err());
    let report = store.verify().unwrap();
    prop_assert!(report.is_clean(), "{:?}", report.damage);
    Ok((store, ids))
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
            Step::DamageCheckpoint(how) => {
                (store, ids) = reopen_with_damaged_checkpoint(backend, dir, store, how)?;
            }
            Step::Compact => {
                store.compact().unwrap();
            }
            Step::Scan(index, low, high, walk) => {
                check_scan(&store.snapshot(), &ids, &model, index, (&low, &high), &walk)?;
                for (snapshot, snapshot_ids, snapshot_model) in &snapshots {
                    check_scan(
                        snapshot,
                        snapshot_ids,
                        snapshot_model,
                        index,
                        (&low, &high),
                        &walk,
                    )?;
                }
            }
        }
        let stats = store.stats();
        let keys: u64 = stats.keyspaces.iter().map(|k| k.keys).sum();
        prop_assert_eq!(keys, model.len() as u64);
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
