//! `verify`: every invariant of a policy, checked over the whole main and side collections,
//! with one [`Violation`] per problem found.

use std::collections::BTreeMap;
use std::fmt;

use bson::{Bson, Document};
use spillway_doc::key::to_key;
use spillway_doc::sort::SortSpec;

use crate::backend::{Query, ReadBackend};
use crate::engine::{check_document, side_documents};
use crate::policy::Policy;

/// One broken invariant.
#[derive(Debug, Clone, PartialEq)]
pub struct Violation {
    /// The collection holding the document at fault.
    pub collection: String,
    /// That document's `_id`.
    pub id: Bson,
    /// The managed field of the policy.
    pub field: String,
    /// What is wrong.
    pub problem: String,
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} _id {} ({}): {}",
            self.collection, self.id, self.field, self.problem
        )
    }
}

/// Checks `policy` over its main and side collections. Documents a migration has not
/// reached yet are checked only for stray side documents.
///
/// # Errors
/// The backend's, when it cannot read.
pub fn verify<R: ReadBackend>(policy: &Policy, backend: &R) -> Result<Vec<Violation>, R::Error> {
    let pattern = &policy.pattern;
    let mains = backend.find(pattern.collection(), &Query::default())?;
    // Every side document as stored, found by a scan (not through the side index, which is
    // what the read paths use and what is compared with it below), in the policy's order.
    let mut sides = backend.find(pattern.side_collection(), &Query::default())?;
    let order = SortSpec::parse(&pattern.side_index())
        .expect("a validated policy's side index is a valid sort");
    sides.sort_by(|a, b| order.compare(a, b));
    let mut by_link: BTreeMap<Vec<u8>, Vec<Document>> = BTreeMap::new();
    let mut violations = Vec::new();
    for side in sides {
        match side.get(pattern.link_field()) {
            Some(link) => by_link.entry(to_key(link)).or_default().push(side),
            None => violations.push(Violation {
                collection: pattern.side_collection().to_string(),
                id: side.get("_id").cloned().unwrap_or(Bson::Null),
                field: pattern.field().to_string(),
                problem: format!("has no link field '{}'", pattern.link_field()),
            }),
        }
    }
    for main in &mains {
        let id = main.get("_id").cloned().unwrap_or(Bson::Null);
        let side = by_link.remove(&to_key(&id)).unwrap_or_default();
        if !policy.is_split(&id) {
            if !side.is_empty() {
                violations.push(Violation {
                    collection: pattern.collection().to_string(),
                    id,
                    field: pattern.field().to_string(),
                    problem: format!(
                        "{} side document(s) exist for a document the migration has not reached",
                        side.len()
                    ),
                });
            }
            continue;
        }
        let indexed = side_documents(policy, backend, &id)?;
        if ids(&indexed) != ids(&side) {
            violations.push(Violation {
                collection: pattern.side_collection().to_string(),
                id: id.clone(),
                field: pattern.field().to_string(),
                problem: format!(
                    "the side index finds {} side document(s) for this _id where {} are stored, so the logical array read through it is stale; repair rebuilds indexes",
                    indexed.len(),
                    side.len()
                ),
            });
        }
        for problem in check_document(policy, main, &side) {
            violations.push(Violation {
                collection: pattern.collection().to_string(),
                id: id.clone(),
                field: pattern.field().to_string(),
                problem,
            });
        }
    }
    for orphans in by_link.into_values() {
        for orphan in orphans {
            violations.push(Violation {
                collection: pattern.side_collection().to_string(),
                id: orphan.get("_id").cloned().unwrap_or(Bson::Null),
                field: pattern.field().to_string(),
                problem: format!(
                    "links to {} {}, which does not exist in {}",
                    pattern.link_field(),
                    orphan
                        .get(pattern.link_field())
                        .cloned()
                        .unwrap_or(Bson::Null),
                    pattern.collection()
                ),
            });
        }
    }
    Ok(violations)
}

/// The `_id` keys of `documents`, sorted.
fn ids(documents: &[Document]) -> Vec<Vec<u8>> {
    let mut keys: Vec<Vec<u8>> = documents
        .iter()
        .map(|document| to_key(document.get("_id").unwrap_or(&Bson::Null)))
        .collect();
    keys.sort();
    keys
}
