//! Durable records of sessions' committed transactions (MongoDB's `config.transactions`), so
//! that a `commitTransaction` retried after a crash or restart is answered as committed
//! instead of being run again.
//!
//! A record lives in the `sessions` keyspace under the session's key (its `lsid` document's
//! bytes): `{ txnNumber, wall }`, the session's last committed transaction. It is written in
//! the transaction's own batch ([`Transaction::record_session`]), so it exists if and only if
//! that transaction committed. The command layer reads it when a session it does not hold in
//! memory retries a commit ([`Database::session_record`]), and prunes the records of sessions
//! unused for longer than MongoDB keeps sessions ([`Database::prune_session_records`]).
//!
//! This module never reads or writes documents.

use bson::{DateTime, Document, doc};

use crate::database::{Database, Transaction};
use crate::error::{Error, Result};
use crate::storage::decode;
use crate::txn::{KeyRange, Reader};

/// The keyspace of session records.
const SESSIONS_KEYSPACE: &str = "sessions";

impl Transaction {
    /// Writes, in this transaction's batch, that session `key` committed transaction
    /// `txn_number` (the caller commits next).
    pub(crate) fn record_session(&mut self, key: &[u8], txn_number: i64) -> Result<()> {
        let keyspace = self.database.inner.store.keyspace(SESSIONS_KEYSPACE)?;
        let record = doc! { "txnNumber": txn_number, "wall": DateTime::now() };
        let bytes = bson::serialize_to_vec(&record)
            .map_err(|error| Error::serialization(error.to_string()))?;
        self.txn.put(keyspace, key.to_vec(), bytes);
        Ok(())
    }
}

impl Database {
    /// The record of session `key`'s last committed transaction, if any.
    pub(crate) fn session_record(&self, key: &[u8]) -> Result<Option<Document>> {
        let state = self.inner.published();
        let Some(keyspace) = state.snapshot.keyspace(SESSIONS_KEYSPACE) else {
            return Ok(None);
        };
        state
            .get(keyspace, key)?
            .map(|bytes| decode(&bytes))
            .transpose()
    }

    /// Deletes the records written before `cutoff`; returns how many.
    pub(crate) fn prune_session_records(&self, cutoff: DateTime) -> Result<u64> {
        if self.is_read_only() {
            return Ok(0);
        }
        let Some(keyspace) = self.inner.published().snapshot.keyspace(SESSIONS_KEYSPACE) else {
            return Ok(0);
        };
        self.inner.write(|txn, _| {
            let mut stale = Vec::new();
            for entry in txn.scan(keyspace, &KeyRange::all(), false)? {
                let (key, value) = entry?;
                let wall = decode(&value)?.get_datetime("wall").copied();
                if wall.map_or(true, |wall| wall < cutoff) {
                    stale.push(key.to_vec());
                }
            }
            let pruned = stale.len() as u64;
            for key in stale {
                txn.delete(keyspace, key);
            }
            Ok(pruned)
        })
    }
}
