//! [`Statement`]: the engine's writes of one statement over several main documents (an
//! `update_many`, a `delete_many`, the resyncs after a statement on a side collection),
//! collected while each document is computed and applied together by
//! [`Statement::finish`], so that the backend checks unique indexes against the state the
//! whole statement leaves and the outcome does not depend on the order of the documents.
//!
//! While a statement is computed, reads see the backend as it was before the statement
//! ([`Statement::over`]). That is enough because each engine call ends in its one `apply`
//! (it never reads what it wrote itself) and the main documents of one statement have
//! disjoint side documents (a side document links to one main document).

use bson::{Bson, Document, RawDocument, RawDocumentBuf};

use crate::backend::{Query, ReadBackend, Write, WriteBackend};
use crate::policy::Policy;

/// The writes of one statement, not yet applied.
#[derive(Debug, Default)]
pub struct Statement {
    writes: Vec<Write>,
}

impl Statement {
    /// A backend whose reads go to `backend` and whose batches are added to this statement.
    pub fn over<'s, W: WriteBackend>(&'s mut self, backend: &'s mut W) -> Buffered<'s, W> {
        Buffered {
            backend,
            writes: &mut self.writes,
        }
    }

    /// Applies every collected write as one batch.
    ///
    /// # Errors
    /// The backend's; then nothing of the statement is applied.
    pub fn finish<W: WriteBackend>(self, backend: &mut W) -> Result<(), W::Error> {
        if self.writes.is_empty() {
            return Ok(());
        }
        backend.apply(self.writes)
    }
}

/// A backend while a [`Statement`] is computed: reads and DDL go to the backend, batches to
/// the statement.
pub struct Buffered<'s, W> {
    backend: &'s mut W,
    writes: &'s mut Vec<Write>,
}

impl<W: WriteBackend> ReadBackend for Buffered<'_, W> {
    type Error = W::Error;

    fn get(&self, collection: &str, id: &Bson) -> Result<Option<Document>, W::Error> {
        self.backend.get(collection, id)
    }

    fn find(&self, collection: &str, query: &Query) -> Result<Vec<Document>, W::Error> {
        self.backend.find(collection, query)
    }

    fn find_raw(&self, collection: &str, query: &Query) -> Result<Vec<RawDocumentBuf>, W::Error> {
        self.backend.find_raw(collection, query)
    }

    fn for_each_raw(
        &self,
        collection: &str,
        query: &Query,
        visit: &mut dyn FnMut(&RawDocument) -> Result<(), W::Error>,
    ) -> Result<(), W::Error> {
        self.backend.for_each_raw(collection, query, visit)
    }

    fn find_last_raw(
        &self,
        collection: &str,
        field: &str,
        value: &Bson,
        order_by: &str,
    ) -> Result<Option<RawDocumentBuf>, W::Error> {
        self.backend
            .find_last_raw(collection, field, value, order_by)
    }

    fn count(&self, collection: &str, filter: &Document) -> Result<u64, W::Error> {
        self.backend.count(collection, filter)
    }

    fn policies(&self) -> Result<Vec<Policy>, W::Error> {
        self.backend.policies()
    }

    fn collection_exists(&self, collection: &str) -> Result<bool, W::Error> {
        self.backend.collection_exists(collection)
    }

    fn index_keys(&self, collection: &str) -> Result<Vec<Document>, W::Error> {
        self.backend.index_keys(collection)
    }

    fn documents_after(
        &self,
        collection: &str,
        through: Option<&Bson>,
        limit: usize,
    ) -> Result<Vec<Document>, W::Error> {
        self.backend.documents_after(collection, through, limit)
    }
}

impl<W: WriteBackend> WriteBackend for Buffered<'_, W> {
    fn apply(&mut self, batch: Vec<Write>) -> Result<(), W::Error> {
        self.writes.extend(batch);
        Ok(())
    }

    fn ensure_index(&mut self, collection: &str, keys: &Document) -> Result<(), W::Error> {
        self.backend.ensure_index(collection, keys)
    }

    fn create_collection(&mut self, collection: &str) -> Result<(), W::Error> {
        self.backend.create_collection(collection)
    }

    fn drop_collection(&mut self, collection: &str) -> Result<(), W::Error> {
        self.backend.drop_collection(collection)
    }

    fn save_policies(&mut self, policies: Vec<Policy>) -> Result<(), W::Error> {
        self.backend.save_policies(policies)
    }
}
