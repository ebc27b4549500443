//! Executes a plan's access path, resumably, over any [`Reader`].
//!
//! [`Execution`] keeps its position (the range it is in and the last key it examined) rather
//! than a borrowed iterator, so that a cursor can own its snapshot and fetch the next batch
//! later; every batch re-opens the store range after the last key examined. Every fetched
//! document is checked against the whole filter; multikey index scans skip `_id`s they have
//! already returned. This module must never write.

use std::collections::HashSet;
use std::ops::Bound;

use bson::RawDocument;
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
    access: Access,
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
        Filter::matches(self, document)
            .map_err(|error| Error::corruption(format!("a stored document is malformed: {error}")))
    }
}

fn matches(filter: &dyn Matcher, document: &RawDocument) -> Result<bool> {
    filter.matches(document)
}

impl Execution {
    pub(crate) fn new(access: Access, docs: Option<spillway_store::KeyspaceId>) -> Execution {
        let finished = matches!(access, Access::Eof);
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
        if self.finished {
            return Ok(());
        }
        let Some(docs) = self.docs else {
            self.finished = true;
            return Ok(());
        };
        let wanted = out.len() + max.max(1);
        match &self.access {
            Access::Eof => self.finished = true,
            Access::CollScan { reverse } => {
                let reverse = *reverse;
                let range = resumed(&KeyRange::all(), self.resume_after.as_deref(), reverse);
                let mut last_key = None;
                for entry in reader.scan(docs, &range, reverse)? {
                    let (key, value) = entry?;
                    self.docs_examined += 1;
                    if matches(filter, stored_document(&value)?)? {
                        out.push(Match {
                            id_key: key.to_vec(),
                            bytes: value.into_owned(),
                        });
                        if out.len() >= wanted {
                            last_key = Some(key.into_owned());
                            break;
                        }
                    }
                }
                match last_key {
                    Some(key) => self.resume_after = Some(key),
                    None => self.finished = true,
                }
            }
            Access::IdHack { keys, reverse } => {
                while self.range_position < keys.len() && out.len() < wanted {
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
                        if matches(filter, stored_document(&value)?)? {
                            out.push(Match {
                                id_key: id_key.clone(),
                                bytes: value.into_owned(),
                            });
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
                multikey,
                ..
            } => {
                let (keyspace, reverse, multikey) = (*keyspace, *reverse, *multikey);
                while self.range_position < ranges.len() {
                    let position = if reverse {
                        ranges.len() - 1 - self.range_position
                    } else {
                        self.range_position
                    };
                    let range = resumed(&ranges[position], self.resume_after.as_deref(), reverse);
                    let mut stopped_at = None;
                    for entry in reader.scan(keyspace, &range, reverse)? {
                        let (key, id_key) = entry?;
                        self.keys_examined += 1;
                        if multikey && !self.seen.insert(id_key.to_vec()) {
                            continue;
                        }
                        let Some(value) = reader.get(docs, &id_key)? else {
                            return Err(Error::corruption(
                                "an index entry refers to a document that does not exist",
                            ));
                        };
                        self.docs_examined += 1;
                        if matches(filter, stored_document(&value)?)? {
                            out.push(Match {
                                id_key: id_key.into_owned(),
                                bytes: value.into_owned(),
                            });
                            if out.len() >= wanted {
                                stopped_at = Some(key.into_owned());
                                break;
                            }
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
