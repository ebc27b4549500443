//! The policy store in the cluster: one document, `{ _id: "policies", policies: [...] }`, in
//! the collection [`POLICY_COLLECTION`] of the application's database. Each entry is
//! `Pattern::to_document()` plus `progress: { state: "active" | "applying" | "removing",
//! through: <last _id done> }` and `created_side: <bool>`, the same fields the embedded
//! catalog keeps.
//!
//! One document rather than one per policy: the pattern layer replaces every policy at once
//! (`WriteBackend::save_policies`, which sets the field `policies` and leaves the others), and
//! a single document makes any two transactions that change policies conflict with each
//! other, so a migration step and a concurrent declaration never both commit on a stale list.
//!
//! A rename of a collection with policies ([`RenameIntent`]) is a DDL command, which cannot be
//! part of a transaction: while it runs, the document also holds `rename: { from, to,
//! drop_target }`, written before the collection is renamed and removed in the transaction
//! that moves the policies to the new name, so that a process stopped in between leaves a
//! record of what it was doing for the next one to finish.

use bson::{Bson, Document, doc};
use spillway_pattern::{Pattern, PatternError, Policy, Progress};

/// The collection holding the policy document, in the application's database.
pub const POLICY_COLLECTION: &str = "spillway_policies";

/// The `_id` of the policy document.
pub const POLICY_DOCUMENT_ID: &str = "policies";

/// The field of the policy document holding a [`RenameIntent`].
pub(crate) const RENAME_FIELD: &str = "rename";

/// The policy document for `policies`.
#[cfg(test)]
pub(crate) fn to_document(policies: &[Policy]) -> Document {
    doc! { "_id": POLICY_DOCUMENT_ID, "policies": entries(policies) }
}

/// The entries of the field `policies` for `policies`.
pub(crate) fn entries(policies: &[Policy]) -> Vec<Bson> {
    policies
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
        .collect()
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

/// A rename of main collection `from` to `to` in one database, decided and not yet finished:
/// written into the policy document before the deployment renames the collection, removed
/// in the transaction that moves the policies to `to`. While it is there the two names are
/// busy (`spillway serve --upstream` refuses commands on them), and the rename is finished
/// by sending it again.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RenameIntent {
    /// The collection being renamed.
    pub from: String,
    /// Its new name.
    pub to: String,
    /// Whether an existing `to` is dropped (with its policies, as a drop takes them).
    pub drop_target: bool,
}

impl RenameIntent {
    /// The intent as it is stored, in the field `rename` of the policy document.
    pub(crate) fn to_document(&self) -> Document {
        doc! { "from": &self.from, "to": &self.to, "drop_target": self.drop_target }
    }

    fn from_document(document: &Document) -> Result<RenameIntent, PatternError> {
        let invalid = || PatternError::InvalidRecord {
            message: format!(
                "the rename in progress recorded in '{POLICY_COLLECTION}' is not {{ from, to, drop_target }}: {document}"
            ),
        };
        Ok(RenameIntent {
            from: document.get_str("from").map_err(|_| invalid())?.to_owned(),
            to: document.get_str("to").map_err(|_| invalid())?.to_owned(),
            drop_target: document.get_bool("drop_target").map_err(|_| invalid())?,
        })
    }

    /// The policies once the rename is done: those of `to` are gone (a dropped target's, as
    /// a drop takes them), those of `from` are declared on `to` with their options, side
    /// collection and migration progress (kept by `_id`, which a rename keeps). Returns the
    /// policies kept and those that went.
    pub(crate) fn renamed(&self, policies: Vec<Policy>) -> (Vec<Policy>, Vec<Policy>) {
        let (dropped, kept): (Vec<Policy>, Vec<Policy>) = policies
            .into_iter()
            .partition(|policy| policy.pattern.collection() == self.to);
        let kept = kept
            .into_iter()
            .map(|mut policy| {
                if policy.pattern.collection() == self.from {
                    let side = policy.pattern.side_collection().to_owned();
                    policy.pattern = policy.pattern.on_collections(&self.to, &side);
                }
                policy
            })
            .collect();
        (kept, dropped)
    }
}

/// The rename a policy document records as in progress, if any.
///
/// # Errors
/// A damaged record.
pub fn pending_rename(document: Option<&Document>) -> Result<Option<RenameIntent>, PatternError> {
    match document.and_then(|document| document.get(RENAME_FIELD)) {
        None | Some(Bson::Null) => Ok(None),
        Some(Bson::Document(intent)) => RenameIntent::from_document(intent).map(Some),
        Some(other) => Err(PatternError::InvalidRecord {
            message: format!(
                "the rename in progress recorded in '{POLICY_COLLECTION}' is not a document: {other}"
            ),
        }),
    }
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
        let error = pending_rename(Some(&doc! { "_id": "policies", "rename": { "from": "a" } }))
            .expect_err("no to");
        assert!(
            error.to_string().contains("{ from, to, drop_target }"),
            "{error}"
        );
        let error = pending_rename(Some(&doc! { "rename": "a" })).expect_err("not a document");
        assert!(error.to_string().contains("not a document"), "{error}");
    }

    #[test]
    fn a_rename_intent_is_stored_beside_the_policies_and_read_back() {
        let intent = RenameIntent {
            from: "sales".to_owned(),
            to: "orders".to_owned(),
            drop_target: true,
        };
        let mut document = to_document(&[Policy::active(
            Pattern::outlier("sales", "buyers").threshold(5).into(),
        )]);
        assert_eq!(pending_rename(Some(&document)), Ok(None));
        assert_eq!(pending_rename(None), Ok(None));
        document.insert(RENAME_FIELD, intent.to_document());
        assert_eq!(pending_rename(Some(&document)), Ok(Some(intent)));
        assert_eq!(
            from_document(Some(&document)).map(|policies| policies.len()),
            Ok(1),
            "the policies read as before"
        );
    }

    #[test]
    fn a_rename_moves_the_policies_of_from_and_drops_those_of_to() {
        let buyers: Pattern = Pattern::outlier("sales", "buyers")
            .threshold(5)
            .overflow_collection("extra_sales")
            .into();
        let reviews: Pattern = Pattern::subset("sales", "reviews").keep(3).into();
        let target: Pattern = Pattern::outlier("orders", "items").threshold(2).into();
        let other: Pattern = Pattern::outlier("books", "readers").threshold(9).into();
        let applying = Policy {
            pattern: reviews.clone(),
            progress: Progress::Applying {
                through: Some(Bson::Int32(7)),
            },
            created_side: true,
        };
        let policies = vec![
            Policy::active(buyers.clone()),
            applying.clone(),
            Policy::active(target.clone()),
            Policy::active(other.clone()),
        ];
        let intent = RenameIntent {
            from: "sales".to_owned(),
            to: "orders".to_owned(),
            drop_target: true,
        };
        let (kept, dropped) = intent.renamed(policies);
        assert_eq!(dropped, vec![Policy::active(target)]);
        assert_eq!(
            kept,
            vec![
                Policy::active(buyers.on_collections("orders", "extra_sales")),
                Policy {
                    pattern: reviews
                        .clone()
                        .on_collections("orders", reviews.side_collection()),
                    ..applying
                },
                Policy::active(other),
            ],
            "options, side collections and progress kept; other collections untouched"
        );
    }
}
