//! [`Cursor`]: the iterator `find(..).run()` and `aggregate(..).run()` return.
//!
//! An aggregation's cursor pulls its documents from the pipeline, which streams from a find
//! cursor underneath (see the `aggregate` module). Without a sort to do in memory, a find
//! cursor streams: it owns the snapshot it started on and
//! fetches `batch_size` matches at a time from the plan's position, so later commits never
//! show through and the whole result is never materialised. On a collection with pattern
//! policies a streaming cursor also does the logical part ([`LogicalRead`]): the plan
//! scans with the clauses on unmanaged fields, and each candidate is matched on its logical
//! view and expanded, spliced from raw BSON once, when it is reached. With an in-memory
//! `SORT` stage, a union of both sides' indexes, or inside a transaction (whose reads see its
//! own uncommitted writes), the result is computed when the cursor is created. This module
//! must never write.

use std::collections::VecDeque;
use std::marker::PhantomData;
use std::sync::Arc;

use bson::{Document, RawDocumentBuf};
use serde::de::DeserializeOwned;
use spillway_doc::filter::Filter;
use spillway_doc::projection::{ArrayRead, Projection};

use crate::error::{Error, Result};
use crate::exec::{Execution, Match, stored_document};
use crate::ops;
use crate::patterned;
use crate::route::Route;
use crate::storage;
use crate::txn::Published;

/// The logical part of a streaming read on a main collection with policies.
pub(crate) struct LogicalRead {
    /// The collection, whose policies the snapshot's catalog holds.
    pub(crate) collection: String,
    /// Whether the filter touches a managed field, so that candidates (which the plan found
    /// with the other clauses) are matched on their logical view.
    pub(crate) check: bool,
    /// Whether the stored documents that match are returned as they are (an aggregation's
    /// input, made logical by the pipeline's own input stage).
    as_stored: bool,
    /// Whether each document is expanded whole; otherwise the projection's windows of the
    /// managed arrays are read ([`patterned::LogicalOutput`]) and the flags removed.
    expand: bool,
    /// The managed arrays a projection reads partly, when the documents are not expanded.
    array_reads: Vec<(String, ArrayRead)>,
}

impl LogicalRead {
    /// The logical read of `collection` shaped by `output`, matching candidates on their
    /// logical views when `check`.
    pub(crate) fn new(collection: &str, check: bool, output: &patterned::LogicalOutput) -> Self {
        LogicalRead {
            collection: collection.to_string(),
            check,
            as_stored: false,
            expand: output.expand,
            array_reads: output.array_reads.clone(),
        }
    }

    /// Candidates of `collection` matched on their logical views, returned as stored.
    pub(crate) fn matching_only(collection: &str) -> Self {
        LogicalRead {
            collection: collection.to_string(),
            check: true,
            as_stored: true,
            expand: false,
            array_reads: Vec::new(),
        }
    }

    /// `found` as the read returns it, or `None` when its logical view does not match.
    fn apply(&self, state: &Published, filter: &Filter, found: Match) -> Result<Option<Match>> {
        let Route::Main(engine) = Route::of(&state.catalog, &self.collection) else {
            return Ok(Some(found));
        };
        let stored = stored_document(&found.bytes)?;
        if !self.expand {
            if self.check && !patterned::matches_logical(state, &engine, filter, stored)? {
                return Ok(None);
            }
            if self.as_stored {
                return Ok(Some(found));
            }
            let bytes = if self.array_reads.is_empty() {
                engine
                    .remove_flags_raw(stored)?
                    .map(RawDocumentBuf::into_bytes)
            } else {
                Some(patterned::projection_input(
                    state,
                    &engine,
                    &self.array_reads,
                    &found.bytes,
                )?)
            };
            return Ok(Some(match bytes {
                Some(bytes) => Match {
                    id_key: found.id_key,
                    bytes,
                },
                None => found,
            }));
        }
        // Expanded: the view is spliced anyway, and matched there. Most documents are their
        // own logical document, which one walk of the top-level keys tells.
        let raw_state = engine.raw_state(stored);
        let view = if raw_state.may_differ {
            patterned::expand_raw(state, &engine, stored, self.check)?
        } else {
            None
        };
        let document = view.as_deref().unwrap_or(stored);
        if self.check && !filter.matches(document).map_err(Error::filter)? {
            return Ok(None);
        }
        // A view spliced for the filter kept the flags; a stored document may carry some.
        let flags_left = if view.is_some() {
            self.check
        } else {
            raw_state.has_flags
        };
        let logical = if flags_left {
            engine.remove_flags_raw(document)?.or(view)
        } else {
            view
        };
        Ok(Some(match logical {
            Some(logical) => Match {
                id_key: found.id_key,
                bytes: patterned::check_returnable(&engine, logical)?.into_bytes(),
            },
            None => found,
        }))
    }
}

/// Where a cursor's documents come from.
enum Source {
    Streaming {
        state: Arc<Published>,
        execution: Box<Execution>,
        /// What the plan's execution matches: the filter, or for a logical read its clauses
        /// on unmanaged fields.
        scan_filter: Arc<Filter>,
        logical: Option<LogicalRead>,
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
    #[expect(
        clippy::too_many_arguments,
        reason = "a streaming read: its snapshot, plan, filters, logical part and window"
    )]
    pub(crate) fn streaming(
        state: Arc<Published>,
        execution: Execution,
        (filter, scan_filter): (Arc<Filter>, Arc<Filter>),
        logical: Option<LogicalRead>,
        projection: Option<Arc<Projection>>,
        skip: usize,
        limit: Option<usize>,
        batch_size: usize,
    ) -> Cursor<T> {
        Cursor {
            source: Source::Streaming {
                state,
                execution: Box::new(execution),
                scan_filter,
                logical,
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
                let found = match &self.source {
                    Source::Streaming {
                        state,
                        logical: Some(logical),
                        ..
                    } => match logical.apply(state, &self.filter, found)? {
                        Some(found) => found,
                        None => continue,
                    },
                    _ => found,
                };
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
                scan_filter,
                batch_size,
                to_skip,
                logical,
            } = &mut self.source
            else {
                return Ok(None);
            };
            if logical.is_none() && *to_skip > 0 {
                // An exact index scan passes over the skipped entries without reading them.
                *to_skip -= execution.skip_without_reading(&**state, *to_skip)?;
            }
            if execution.is_finished() {
                return Ok(None);
            }
            let mut batch = Vec::new();
            let wanted = (*batch_size).max((*to_skip).min(1 << 16));
            execution.fill(&**state, &**scan_filter, wanted, &mut batch)?;
            self.buffer.extend(batch);
        }
    }

    fn convert(&self, found: &Match) -> Result<T>
    where
        T: DeserializeOwned + 'static,
    {
        match &self.projection {
            None => storage::decode_as(&found.bytes, "a stored document"),
            Some(projection)
                if !projection.needs_match_details() && !projection.needs_text_score() =>
            {
                let projected = projection
                    .apply_raw(stored_document(&found.bytes)?, None)
                    .map_err(Error::argument)?;
                storage::document_as(projected, "a projected document")
            }
            Some(projection) => {
                let document = storage::decode(&found.bytes)?;
                let projected = ops::project(Some(projection), &self.filter, document)?;
                storage::document_as(projected, "a projected document")
            }
        }
    }
}

impl<T: DeserializeOwned + 'static> Iterator for Cursor<T> {
    type Item = Result<T>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.failed {
            return None;
        }
        let result = if let Source::Documents(documents) = &mut self.source {
            match documents.next()? {
                Ok(document) => storage::document_as(document, "a pipeline's document"),
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
