//! Executes a plan's access path, resumably, over any [`Reader`].
//!
//! [`Execution`] keeps its position (the range it is in and the last key it examined) rather
//! than a borrowed iterator, so that a cursor can own its snapshot and fetch the next batch
//! later; every batch re-opens the store range after the last key examined. Every fetched
//! document is checked against the filter the caller gives; multikey index scans that can
//! reach a document twice skip `_id`s they have already returned. This module must never
//! write.

use std::collections::HashSet;
use std::ops::Bound;
use std::sync::Arc;

use bson::RawDocument;
use spillway_doc::DocError;
use spillway_doc::filter::Filter;

use crate::error::{Error, Result};
use crate::planner::Access;
use crate::txn::{KeyRange, Reader};

/// A document the filter matched: its `_id` key and its stored bytes.
#[derive(Debug, Clone)]
pub(crate) struct Match {
    pub(crate) id_key: Vec<u8>,
    pub(crate) bytes: Vec<u8>,
}

/// The position and counters of one plan execution.
#[derive(Debug)]
pub(crate) struct Execution {
    access: Arc<Access>,
    docs: Option<spillway_store::KeyspaceId>,
    range_position: usize,
    resume_after: Option<Vec<u8>>,
    seen: HashSet<Vec<u8>>,
    finished: bool,
    pub(crate) keys_examined: u64,
    pub(crate) docs_examined: u64,
}

/// Parses stored bytes as a document, or reports corruption.
pub(crate) fn stored_document(bytes: &[u8]) -> Result<&RawDocument> {
    RawDocument::from_bytes(bytes)
        .map_err(|error| Error::corruption(format!("a stored document is not valid BSON: {error}")))
}

/// What decides whether a fetched document is a result: a filter on the stored document, or
/// (for collections with pattern policies) a filter on the logical document.
pub(crate) trait Matcher {
    /// Whether the stored `document` is a result.
    fn matches(&self, document: &RawDocument) -> Result<bool>;
}

impl Matcher for Filter {
    fn matches(&self, document: &RawDocument) -> Result<bool> {
        Filter::matches(self, document).map_err(|error| match error {
            DocError::MalformedBson { .. } => {
                Error::corruption(format!("a stored document is malformed: {error}"))
            }
            // An expression or a script that fails on this document (`$expr`, `$where`).
            other => Error::filter(other),
        })
    }
}

fn matches(filter: &dyn Matcher, document: &RawDocument) -> Result<bool> {
    filter.matches(document)
}

impl Execution {
    pub(crate) fn new(access: Arc<Access>, docs: Option<spillway_store::KeyspaceId>) -> Execution {
        let finished = matches!(*access, Access::Eof);
        Execution {
            access,
            docs,
            range_position: 0,
            resume_after: None,
            seen: HashSet::new(),
            finished,
            keys_examined: 0,
            docs_examined: 0,
        }
    }

    /// Whether every document has been examined.
    pub(crate) fn is_finished(&self) -> bool {
        self.finished
    }

    /// Appends up to `max` more matching documents to `out` (fewer only at the end).
    pub(crate) fn fill(
        &mut self,
        reader: &dyn Reader,
        filter: &dyn Matcher,
        max: usize,
        out: &mut Vec<Match>,
    ) -> Result<()> {
        let wanted = out.len() + max.max(1);
        self.advance(reader, filter, |id_key, bytes| {
            out.push(Match {
                id_key: id_key.to_vec(),
                bytes: bytes.to_vec(),
            });
            Ok(out.len() >= wanted)
        })
    }

    /// Runs to the end and shows every match to `visit` as borrowed `_id` key and stored
    /// bytes, copying nothing: for callers that keep only part of each document.
    pub(crate) fn for_each(
        &mut self,
        reader: &dyn Reader,
        filter: &dyn Matcher,
        mut visit: impl FnMut(&[u8], &[u8]) -> Result<()>,
    ) -> Result<()> {
        while !self.finished {
            self.advance(reader, filter, |id_key, bytes| {
                visit(id_key, bytes)?;
                Ok(false)
            })?;
        }
        Ok(())
    }

    /// Shows matching documents to `found` until it answers `true` (stop after this one) or
    /// the access path ends; the position is kept for the next call.
    fn advance(
        &mut self,
        reader: &dyn Reader,
        filter: &dyn Matcher,
        mut found: impl FnMut(&[u8], &[u8]) -> Result<bool>,
    ) -> Result<()> {
        if self.finished {
            return Ok(());
        }
        let Some(docs) = self.docs else {
            self.finished = true;
            return Ok(());
        };
        match &*self.access {
            Access::Eof => self.finished = true,
            Access::CollScan { reverse, bounds } => {
                let reverse = *reverse;
                let all = KeyRange::all();
                let range = resumed(
                    bounds.as_ref().unwrap_or(&all),
                    self.resume_after.as_deref(),
                    reverse,
                );
                let mut last_key = None;
                for entry in reader.scan(docs, &range, reverse)? {
                    let (key, value) = entry?;
                    self.docs_examined += 1;
                    if matches(filter, stored_document(&value)?)? && found(&key, &value)? {
                        last_key = Some(key.into_owned());
                        break;
                    }
                }
                match last_key {
                    Some(key) => self.resume_after = Some(key),
                    None => self.finished = true,
                }
            }
            Access::IdHack { keys, reverse } => {
                while self.range_position < keys.len() {
                    let position = if *reverse {
                        keys.len() - 1 - self.range_position
                    } else {
                        self.range_position
                    };
                    self.range_position += 1;
                    let id_key = &keys[position];
                    self.keys_examined += 1;
                    if let Some(value) = reader.get(docs, id_key)? {
                        self.docs_examined += 1;
                        if matches(filter, stored_document(&value)?)? && found(id_key, &value)? {
                            break;
                        }
                    }
                }
                if self.range_position >= keys.len() {
                    self.finished = true;
                }
            }
            Access::IxScan {
                keyspace,
                ranges,
                reverse,
                repeats,
                ..
            } => {
                let (keyspace, reverse, repeats) = (*keyspace, *reverse, *repeats);
                while self.range_position < ranges.len() {
                    let range = self.current_range(ranges, reverse);
                    let mut stopped_at = None;
                    for entry in reader.scan(keyspace, &range, reverse)? {
                        let (key, id_key) = entry?;
                        self.keys_examined += 1;
                        if repeats && !self.seen.insert(id_key.to_vec()) {
                            continue;
                        }
                        let Some(value) = reader.get(docs, &id_key)? else {
                            return Err(Error::corruption(
                                "an index entry refers to a document that does not exist",
                            ));
                        };
                        self.docs_examined += 1;
                        if matches(filter, stored_document(&value)?)? && found(&id_key, &value)? {
                            stopped_at = Some(key.into_owned());
                            break;
                        }
                    }
                    if let Some(key) = stopped_at {
                        self.resume_after = Some(key);
                        return Ok(());
                    }
                    self.range_position += 1;
                    self.resume_after = None;
                }
                self.finished = true;
            }
        }
        Ok(())
    }

    /// Passes over up to `count` matches without reading their documents, when the access
    /// path's entries are exactly the matches (an exact index scan, see
    /// [`Access::IxScan`]'s `exact`); how many it passed over (fewer only at the end). Any
    /// other access path passes over none: its matches are only known by reading them.
    pub(crate) fn skip_without_reading(
        &mut self,
        reader: &dyn Reader,
        count: usize,
    ) -> Result<usize> {
        let Access::IxScan {
            keyspace,
            ranges,
            reverse,
            exact: true,
            ..
        } = &*self.access
        else {
            return Ok(0);
        };
        let (keyspace, reverse) = (*keyspace, *reverse);
        let mut skipped = 0;
        while skipped < count && !self.finished {
            if self.range_position >= ranges.len() {
                self.finished = true;
                break;
            }
            let range = self.current_range(ranges, reverse);
            let mut last_key = None;
            for entry in reader.scan(keyspace, &range, reverse)? {
                let (key, _) = entry?;
                self.keys_examined += 1;
                skipped += 1;
                if skipped == count {
                    last_key = Some(key.into_owned());
                    break;
                }
            }
            if let Some(key) = last_key {
                self.resume_after = Some(key);
            } else {
                self.range_position += 1;
                self.resume_after = None;
                if self.range_position >= ranges.len() {
                    self.finished = true;
                }
            }
        }
        Ok(skipped)
    }

    /// Runs to the end and returns every match.
    pub(crate) fn collect(
        &mut self,
        reader: &dyn Reader,
        filter: &dyn Matcher,
    ) -> Result<Vec<Match>> {
        let mut out = Vec::new();
        while !self.finished {
            self.fill(reader, filter, usize::MAX / 2, &mut out)?;
        }
        Ok(out)
    }
}

impl Execution {
    /// The index range the scan is in (ranges are taken last first when `reverse`), from
    /// after the last key examined.
    fn current_range(&self, ranges: &[KeyRange], reverse: bool) -> KeyRange {
        let position = if reverse {
            ranges.len() - 1 - self.range_position
        } else {
            self.range_position
        };
        resumed(&ranges[position], self.resume_after.as_deref(), reverse)
    }
}

/// `range` restricted to the keys after `resume_after` in scan order.
fn resumed(range: &KeyRange, resume_after: Option<&[u8]>, reverse: bool) -> KeyRange {
    let Some(resume_after) = resume_after else {
        return range.clone();
    };
    let mut range = range.clone();
    if reverse {
        range.high = Bound::Excluded(resume_after.to_vec());
    } else {
        range.low = Bound::Excluded(resume_after.to_vec());
    }
    range
}
