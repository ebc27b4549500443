//! [`Cursor`]: the iterator `find(..).run()` and `aggregate(..).run()` return.
//!
//! An aggregation's cursor pulls its documents from the pipeline, which streams from a find
//! cursor underneath (see the `aggregate` module). Without a sort to do in memory, a find
//! cursor streams: it owns the snapshot it started on and
//! fetches `batch_size` matches at a time from the plan's position, so later commits never
//! show through and the whole result is never materialised. With an in-memory `SORT` stage,
//! or inside a transaction (whose reads see its own uncommitted writes), the result is
//! computed when the cursor is created. This module must never write.

use std::collections::VecDeque;
use std::marker::PhantomData;
use std::sync::Arc;

use bson::Document;
use serde::de::DeserializeOwned;
use spillway_doc::filter::Filter;
use spillway_doc::projection::Projection;

use crate::error::{Error, Result};
use crate::exec::{Execution, Match};
use crate::ops;
use crate::storage;
use crate::txn::Published;

/// Where a cursor's documents come from.
enum Source {
    Streaming {
        state: Arc<Published>,
        execution: Box<Execution>,
        batch_size: usize,
        to_skip: usize,
    },
    Materialised,
    /// The output of an aggregation pipeline: decoded documents, pulled one at a time.
    Documents(Box<dyn Iterator<Item = Result<Document>> + Send>),
}

/// The documents of a `find`, as an iterator of `Result<T>`.
pub struct Cursor<T> {
    source: Source,
    buffer: VecDeque<Match>,
    remaining: Option<usize>,
    filter: Arc<Filter>,
    projection: Option<Arc<Projection>>,
    failed: bool,
    marker: PhantomData<fn() -> T>,
}

impl<T> std::fmt::Debug for Cursor<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Cursor")
            .field("buffered", &self.buffer.len())
            .finish_non_exhaustive()
    }
}

impl<T> Cursor<T> {
    pub(crate) fn streaming(
        state: Arc<Published>,
        execution: Execution,
        filter: Arc<Filter>,
        projection: Option<Arc<Projection>>,
        skip: usize,
        limit: Option<usize>,
        batch_size: usize,
    ) -> Cursor<T> {
        Cursor {
            source: Source::Streaming {
                state,
                execution: Box::new(execution),
                batch_size: batch_size.max(1),
                to_skip: skip,
            },
            buffer: VecDeque::new(),
            remaining: limit,
            filter,
            projection,
            failed: false,
            marker: PhantomData,
        }
    }

    pub(crate) fn materialised(
        matches: Vec<Match>,
        filter: Arc<Filter>,
        projection: Option<Arc<Projection>>,
    ) -> Cursor<T> {
        Cursor {
            source: Source::Materialised,
            buffer: matches.into(),
            remaining: None,
            filter,
            projection,
            failed: false,
            marker: PhantomData,
        }
    }

    /// A cursor over documents an aggregation pipeline produces (`filter` and projection do
    /// not apply to them).
    pub(crate) fn documents(
        documents: Box<dyn Iterator<Item = Result<Document>> + Send>,
    ) -> Cursor<T> {
        Cursor {
            source: Source::Documents(documents),
            buffer: VecDeque::new(),
            remaining: None,
            filter: Arc::new(Filter::match_all()),
            projection: None,
            failed: false,
            marker: PhantomData,
        }
    }

    fn next_match(&mut self) -> Result<Option<Match>> {
        if self.remaining == Some(0) {
            return Ok(None);
        }
        loop {
            if let Some(found) = self.buffer.pop_front() {
                if let Source::Streaming { to_skip, .. } = &mut self.source
                    && *to_skip > 0
                {
                    *to_skip -= 1;
                    continue;
                }
                if let Some(remaining) = &mut self.remaining {
                    *remaining -= 1;
                }
                return Ok(Some(found));
            }
            let Source::Streaming {
                state,
                execution,
                batch_size,
                to_skip,
            } = &mut self.source
            else {
                return Ok(None);
            };
            if execution.is_finished() {
                return Ok(None);
            }
            let mut batch = Vec::new();
            let wanted = (*batch_size).max((*to_skip).min(1 << 16));
            execution.fill(&**state, &*self.filter, wanted, &mut batch)?;
            self.buffer.extend(batch);
        }
    }

    fn convert(&self, found: &Match) -> Result<T>
    where
        T: DeserializeOwned,
    {
        match &self.projection {
            None => bson::deserialize_from_slice(&found.bytes).map_err(|error| {
                Error::serialization(format!("cannot deserialize a stored document: {error}"))
            }),
            Some(projection) => {
                let document = storage::decode(&found.bytes)?;
                let projected = ops::project(Some(projection), &self.filter, document)?;
                bson::deserialize_from_document(projected).map_err(|error| {
                    Error::serialization(format!(
                        "cannot deserialize a projected document: {error}"
                    ))
                })
            }
        }
    }
}

impl<T: DeserializeOwned> Iterator for Cursor<T> {
    type Item = Result<T>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.failed {
            return None;
        }
        let result = if let Source::Documents(documents) = &mut self.source {
            match documents.next()? {
                Ok(document) => bson::deserialize_from_document(document).map_err(|error| {
                    Error::serialization(format!(
                        "cannot deserialize a pipeline's document: {error}"
                    ))
                }),
                Err(error) => Err(error),
            }
        } else {
            match self.next_match() {
                Ok(Some(found)) => self.convert(&found),
                Ok(None) => return None,
                Err(error) => Err(error),
            }
        };
        if result.is_err() {
            // A cursor whose read failed stops: its position is no longer meaningful.
            self.failed = true;
        }
        Some(result)
    }
}
