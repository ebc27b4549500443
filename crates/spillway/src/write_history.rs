//! [`WriteHistory`]: which keys the commits since an open transaction handle began wrote, so
//! that the handle's conflict check asks "did a commit after my start write this key?"
//! exactly, whatever the value looks like now.
//!
//! A value's version in the store (`Snapshot::version`) answers the same question until a
//! compaction moves the value; the history does not depend on where values sit. It is kept
//! only while a handle is open: a handle registers the sequence number of the state it
//! began on, every commit then records the keys it wrote, and what no open handle can ask
//! about any more is forgotten when a handle ends. A history that grows past
//! [`WriteHistory::MAX_KEYS`] (a handle left open across a long run of commits) forgets its
//! oldest commits; a transaction that began before what the history still covers gets
//! `None` from [`WriteHistory::written_after`] and falls back to comparing versions.
//!
//! The database publishes every new state while it holds this history's lock (see
//! `database::Inner::commit`), so a handle that registers the published state's sequence
//! number sees every later commit recorded.

use std::collections::{BTreeMap, HashMap, VecDeque};

use spillway_store::KeyspaceId;

/// A key of one keyspace.
pub(crate) type KeyOf = (KeyspaceId, Vec<u8>);

/// The keys written by the commits that some open transaction handle may still ask about.
#[derive(Debug, Default)]
pub(crate) struct WriteHistory {
    /// The sequence numbers of the states the open handles began on, with how many began on
    /// each.
    open: BTreeMap<u64, usize>,
    /// Every commit after this sequence number is recorded (`None`: nothing is recorded).
    covers_after: Option<u64>,
    /// For each recorded key, the sequence number of the last commit that wrote it.
    last_write: HashMap<KeyOf, u64>,
    /// The recorded commits, oldest first, with the keys each wrote: what to forget.
    commits: VecDeque<(u64, Vec<KeyOf>)>,
    /// The keys in `commits`, counted once per commit that wrote them.
    kept: usize,
}

impl WriteHistory {
    /// The most keys kept for the open handles (counted once per commit that wrote them)
    /// before the oldest commits are forgotten.
    pub(crate) const MAX_KEYS: usize = 1 << 18;

    /// Registers a handle that began on the state with sequence number `base`.
    pub(crate) fn begin(&mut self, base: u64) {
        if self.open.is_empty() {
            self.covers_after = Some(base);
        }
        *self.open.entry(base).or_default() += 1;
    }

    /// Ends the handle registered with `base`, and forgets what no open handle needs.
    pub(crate) fn end(&mut self, base: u64) {
        if let Some(count) = self.open.get_mut(&base) {
            *count -= 1;
            if *count == 0 {
                self.open.remove(&base);
            }
        }
        match self.open.keys().next() {
            None => *self = WriteHistory::default(),
            Some(&oldest) => self.forget_through(oldest),
        }
    }

    /// Whether a commit should tell its keys ([`WriteHistory::record`]): a handle is open.
    pub(crate) fn is_recording(&self) -> bool {
        self.covers_after.is_some()
    }

    /// Records that commit `seq` wrote `keys` (kept only while a handle is open).
    pub(crate) fn record(&mut self, seq: u64, keys: Vec<KeyOf>) {
        if !self.is_recording() || keys.is_empty() {
            return;
        }
        for key in &keys {
            self.last_write.insert(key.clone(), seq);
        }
        self.kept += keys.len();
        self.commits.push_back((seq, keys));
        if self.kept > Self::MAX_KEYS {
            // Forget the oldest commits until half the bound is left: the handles that began
            // before them fall back to comparing versions.
            while self.kept > Self::MAX_KEYS / 2 {
                let Some(&(oldest, _)) = self.commits.front() else {
                    break;
                };
                self.forget_through(oldest);
            }
        }
    }

    /// Whether a commit after the state with sequence number `base` wrote `key`; `None` when
    /// the history does not cover every commit since `base`.
    pub(crate) fn written_after(
        &self,
        base: u64,
        keyspace: KeyspaceId,
        key: &[u8],
    ) -> Option<bool> {
        let covers_after = self.covers_after?;
        if base < covers_after {
            return None;
        }
        let key = (keyspace, key.to_vec());
        Some(self.last_write.get(&key).is_some_and(|&seq| seq > base))
    }

    /// Forgets the commits up to and including sequence number `seq`.
    fn forget_through(&mut self, seq: u64) {
        while let Some((commit, _)) = self.commits.front() {
            if *commit > seq {
                break;
            }
            let Some((commit, keys)) = self.commits.pop_front() else {
                break;
            };
            self.kept -= keys.len();
            for key in keys {
                if self.last_write.get(&key) == Some(&commit) {
                    self.last_write.remove(&key);
                }
            }
        }
        if let Some(covers_after) = &mut self.covers_after {
            *covers_after = (*covers_after).max(seq);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keyspace() -> KeyspaceId {
        spillway_store::Store::open_in_memory()
            .and_then(|store| store.keyspace("documents"))
            .expect("a keyspace of an in-memory store")
    }

    fn key(byte: u8) -> KeyOf {
        (keyspace(), vec![byte])
    }

    fn written(history: &WriteHistory, base: u64, byte: u8) -> Option<bool> {
        history.written_after(base, keyspace(), &[byte])
    }

    #[test]
    fn a_key_counts_as_written_only_by_commits_after_the_base() {
        let mut history = WriteHistory::default();
        history.record(3, vec![key(1)]);
        assert_eq!(
            written(&history, 2, 1),
            None,
            "nothing is recorded without a handle"
        );
        history.begin(5);
        history.begin(7);
        history.record(6, vec![key(1)]);
        history.record(8, vec![key(2)]);
        assert_eq!(written(&history, 5, 1), Some(true));
        assert_eq!(written(&history, 7, 1), Some(false));
        assert_eq!(written(&history, 7, 2), Some(true));
        assert_eq!(written(&history, 7, 3), Some(false));
        assert_eq!(
            written(&history, 4, 1),
            None,
            "before what the history covers"
        );
    }

    #[test]
    fn ending_the_oldest_handle_forgets_what_only_it_could_ask() {
        let mut history = WriteHistory::default();
        history.begin(5);
        history.record(6, vec![key(1)]);
        history.begin(6);
        history.record(7, vec![key(2)]);
        history.end(5);
        assert_eq!(history.last_write.len(), 1);
        assert_eq!(written(&history, 6, 2), Some(true));
        assert_eq!(written(&history, 5, 1), None);
        history.end(6);
        assert!(!history.is_recording());
        assert!(history.last_write.is_empty() && history.commits.is_empty());
    }

    #[test]
    fn a_history_past_its_bound_forgets_its_oldest_commits_and_says_so() {
        let mut history = WriteHistory::default();
        history.begin(0);
        let keyspace = keyspace();
        let keys_per_commit = 1 << 12;
        let commits = WriteHistory::MAX_KEYS / keys_per_commit + 1;
        for commit in 0..commits {
            let keys = (0..keys_per_commit)
                .map(|n| {
                    let n = commit * keys_per_commit + n;
                    (keyspace, n.to_be_bytes().to_vec())
                })
                .collect();
            history.record(commit as u64 + 1, keys);
        }
        assert!(history.kept <= WriteHistory::MAX_KEYS / 2);
        assert!(history.last_write.len() <= history.kept);
        assert_eq!(
            history.written_after(0, keyspace, &0usize.to_be_bytes()),
            None,
            "the handle falls back"
        );
        let newest = (commits * keys_per_commit - 1).to_be_bytes();
        assert_eq!(
            history.written_after(commits as u64 - 1, keyspace, &newest),
            Some(true)
        );
    }

    #[test]
    fn one_key_written_by_many_commits_is_bounded_too() {
        let mut history = WriteHistory::default();
        history.begin(0);
        let key = key(1);
        let commits = WriteHistory::MAX_KEYS as u64 + 1;
        for commit in 1..=commits {
            history.record(commit, vec![key.clone()]);
        }
        assert!(history.commits.len() <= WriteHistory::MAX_KEYS / 2);
        assert_eq!(written(&history, 0, 1), None, "the handle falls back");
        assert_eq!(written(&history, commits - 1, 1), Some(true));
    }
}
