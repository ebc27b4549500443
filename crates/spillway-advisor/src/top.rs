//! The `k` largest items of a stream, in bounded memory.

use std::cmp::{Ordering, Reverse};
use std::collections::BinaryHeap;

/// Keeps the `capacity` items with the largest keys seen so far. Among equal keys the item
/// seen first wins, so that the result does not depend on heap internals.
#[derive(Debug, Clone)]
pub(crate) struct TopK<T> {
    capacity: usize,
    heap: BinaryHeap<Reverse<Ranked<T>>>,
}

impl<T> TopK<T> {
    pub(crate) fn new(capacity: usize) -> TopK<T> {
        TopK {
            capacity,
            heap: BinaryHeap::with_capacity(capacity.min(1024) + 1),
        }
    }

    /// Whether an item with `key`, seen after every item already offered, would be kept.
    /// Lets callers skip building an item (cloning an `_id`) that would be dropped at once.
    pub(crate) fn would_keep(&self, key: u64) -> bool {
        if self.capacity == 0 {
            return false;
        }
        if self.heap.len() < self.capacity {
            return true;
        }
        self.heap
            .peek()
            .is_some_and(|Reverse(smallest)| key > smallest.key)
    }

    /// Offers an item; `position` orders items with equal keys (smaller wins).
    pub(crate) fn offer(&mut self, key: u64, position: u64, item: T) {
        if !self.would_keep(key) {
            return;
        }
        self.heap.push(Reverse(Ranked {
            key,
            position,
            item,
        }));
        if self.heap.len() > self.capacity {
            self.heap.pop();
        }
    }

    /// The kept items, largest key first (ties: first seen first).
    pub(crate) fn into_sorted(self) -> Vec<T> {
        // `into_sorted_vec` is ascending in `Reverse<Ranked>`, i.e. largest `Ranked` first.
        self.heap
            .into_sorted_vec()
            .into_iter()
            .map(|Reverse(ranked)| ranked.item)
            .collect()
    }
}

#[derive(Debug, Clone)]
struct Ranked<T> {
    key: u64,
    position: u64,
    item: T,
}

impl<T> Ranked<T> {
    /// Larger key ranks higher; for equal keys the earlier position ranks higher.
    fn rank(&self) -> (u64, Reverse<u64>) {
        (self.key, Reverse(self.position))
    }
}

impl<T> PartialEq for Ranked<T> {
    fn eq(&self, other: &Self) -> bool {
        self.rank() == other.rank()
    }
}

impl<T> Eq for Ranked<T> {}

impl<T> PartialOrd for Ranked<T> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl<T> Ord for Ranked<T> {
    fn cmp(&self, other: &Self) -> Ordering {
        self.rank().cmp(&other.rank())
    }
}
