//! The policy store in the cluster: one document, `{ _id: "policies", policies: [...] }`, in
//! the collection [`POLICY_COLLECTION`] of the application's database. Each entry is
//! `Pattern::to_document()` plus `progress: { state: "active" | "applying" | "removing",
//! through: <last _id done> }` and `created_side: <bool>`, the same fields the embedded
//! catalog keeps.
//!
//! One document rather than one per policy: the pattern layer replaces every policy at once
//! (`WriteBackend::save_policies`), and a single document makes any two transactions that
//! change policies conflict with each other, so a migration step and a concurrent
//! declaration never both commit on a stale list.

use bson::{Bson, Document, doc};
use spillway_pattern::{Pattern, PatternError, Policy, Progress};

/// The collection holding the policy document, in the application's database.
pub const POLICY_COLLECTION: &str = "spillway_policies";

/// The `_id` of the policy document.
pub const POLICY_DOCUMENT_ID: &str = "policies";

/// The policy document for `policies`.
pub(crate) fn to_document(policies: &[Policy]) -> Document {
    let entries = policies
        .iter()
        .map(|policy| {
            let mut entry = policy.pattern.to_document();
            let (state, through) = match &policy.progress {
                Progress::Active => ("active", None),
                Progress::Applying { through } => ("applying", through.clone()),
                Progress::Removing { through } => ("removing", through.clone()),
            };
            let mut progress = doc! { "state": state };
            if let Some(through) = through {
                progress.insert("through", through);
            }
            entry.insert("progress", progress);
            entry.insert("created_side", policy.created_side);
            Bson::Document(entry)
        })
        .collect::<Vec<_>>();
    doc! { "_id": POLICY_DOCUMENT_ID, "policies": entries }
}

/// The policies of a policy document (none when there is no document).
pub(crate) fn from_document(document: Option<&Document>) -> Result<Vec<Policy>, PatternError> {
    let Some(document) = document else {
        return Ok(Vec::new());
    };
    let invalid = |message: String| PatternError::InvalidRecord { message };
    let entries = document.get_array("policies").map_err(|_| {
        invalid(format!(
            "the policy document in '{POLICY_COLLECTION}' has no array 'policies': {document}"
        ))
    })?;
    entries
        .iter()
        .map(|entry| {
            let Bson::Document(entry) = entry else {
                return Err(invalid(format!(
                    "a policy entry is not a document: {entry}"
                )));
            };
            let pattern = Pattern::from_document(entry)?;
            let progress = entry
                .get_document("progress")
                .map_err(|_| invalid(format!("policy entry {entry} has no document 'progress'")))?;
            let through = progress.get("through").cloned();
            let progress = match progress.get_str("state") {
                Ok("active") => Progress::Active,
                Ok("applying") => Progress::Applying { through },
                Ok("removing") => Progress::Removing { through },
                _ => {
                    return Err(invalid(format!(
                        "policy entry {entry} has no known progress state"
                    )));
                }
            };
            Ok(Policy {
                pattern,
                progress,
                created_side: entry.get_bool("created_side").unwrap_or(false),
            })
        })
        .collect()
}

/// The patterns a policy document declares (none when there is no document), for a reader
/// that fetched the document itself: `spillway serve --upstream` routes each command by them
/// without opening a backend, which would create this crate's collections in every database
/// a client touches.
///
/// # Errors
/// A damaged policy document.
pub fn declared_patterns(document: Option<&Document>) -> Result<Vec<Pattern>, PatternError> {
    Ok(from_document(document)?
        .into_iter()
        .map(|policy| policy.pattern)
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn policies_round_trip_with_their_progress() {
        let outlier: Pattern = Pattern::outlier("sales", "buyers").threshold(5).into();
        let subset: Pattern = Pattern::subset("products", "reviews").keep(3).into();
        let policies = vec![
            Policy::active(outlier.clone()),
            Policy {
                pattern: subset,
                progress: Progress::Applying {
                    through: Some(Bson::Int32(7)),
                },
                created_side: true,
            },
            Policy {
                pattern: outlier,
                progress: Progress::Removing { through: None },
                created_side: false,
            },
        ];
        let document = to_document(&policies);
        assert_eq!(from_document(Some(&document)), Ok(policies));
        assert_eq!(from_document(None), Ok(Vec::new()));
    }

    #[test]
    fn a_damaged_record_is_refused_with_what_is_wrong() {
        let error = from_document(Some(&doc! { "_id": "policies", "policies": [1] }))
            .expect_err("not a document");
        assert!(error.to_string().contains("not a document"), "{error}");
        let error = from_document(Some(&doc! { "_id": "policies" })).expect_err("no array");
        assert!(error.to_string().contains("no array"), "{error}");
    }
}
