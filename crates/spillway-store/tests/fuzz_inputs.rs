//! The fuzz entry points (`spillway_store::fuzzing`, also driven by `fuzz/`) on random and
//! mutated inputs: they must return normally for every input.

use proptest::prelude::*;
use spillway_store::fuzzing;

/// A real segment and checkpoint written by the store, to mutate.
fn seeds() -> (Vec<u8>, Vec<u8>) {
    use spillway_store::backend::{Backend, MemoryBackend};
    use spillway_store::{Store, StoreOptions, WriteBatch};
    use std::path::Path;
    use std::sync::Arc;
    let backend = MemoryBackend::new();
    let options = StoreOptions {
        segment_size: 4096,
        ..StoreOptions::default()
    };
    let store = Store::open_with_backend(Arc::new(backend.clone()), "/seed", options).unwrap();
    let ks = store.keyspace("k").unwrap();
    for i in 0..5u8 {
        let mut batch = WriteBatch::new();
        batch
            .put(ks, &[b'k', i], &[i; 40])
            .delete(ks, &[b'k', i.wrapping_sub(1)]);
        store.commit(batch).unwrap();
    }
    store.checkpoint().unwrap();
    drop(store);
    let segment = backend
        .file_contents(Path::new("/seed/seg-00000001.spw"))
        .unwrap();
    let checkpoint_name = backend
        .list_dir(Path::new("/seed"))
        .unwrap()
        .into_iter()
        .find(|n| n.starts_with("ckpt-"))
        .unwrap();
    let checkpoint = backend
        .file_contents(&Path::new("/seed").join(checkpoint_name))
        .unwrap();
    let used = segment.iter().rposition(|&b| b != 0).map_or(0, |p| p + 1);
    (segment[..used.next_multiple_of(8)].to_vec(), checkpoint)
}

#[test]
fn seeds_decode() {
    let (segment, checkpoint) = seeds();
    assert_eq!(fuzzing::decode_segment(&segment), 6);
    assert_eq!(fuzzing::decode_checkpoint_file(&checkpoint), Some(1));
    let body_len = u64::from_le_bytes(checkpoint[16..24].try_into().unwrap()) as usize;
    assert_eq!(
        fuzzing::decode_checkpoint_body(&checkpoint[32..32 + body_len]),
        Some(1)
    );
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn random_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..2048)) {
        fuzzing::decode_segment(&bytes);
        fuzzing::decode_checkpoint_file(&bytes);
        fuzzing::decode_checkpoint_body(&bytes);
        fuzzing::decode_manifest(&bytes);
        fuzzing::open_and_repair_active_segment(&bytes);
    }

    #[test]
    fn mutated_seeds_never_panic(
        edits in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..8),
        cut in any::<prop::sample::Index>(),
    ) {
        let (mut segment, mut checkpoint) = seeds();
        for (index, byte) in &edits {
            let at = index.index(segment.len());
            segment[at] = *byte;
            let at = index.index(checkpoint.len() - 32) + 32;
            checkpoint[at] ^= *byte;
        }
        fuzzing::decode_segment(&segment);
        fuzzing::decode_segment(&segment[..cut.index(segment.len())]);
        fuzzing::decode_checkpoint_file(&checkpoint);
        // Skipping the CRC reaches the rkyv validation with damaged archives.
        fuzzing::decode_checkpoint_body(&checkpoint[32..]);
        fuzzing::decode_checkpoint_body(&checkpoint[32..32 + cut.index(checkpoint.len() - 32)]);
        fuzzing::open_and_repair_active_segment(&segment);
        fuzzing::open_and_repair_active_segment(&segment[..cut.index(segment.len())]);
    }
}
