//! The unified test format's matching rules, used by both conformance runners: expected
//! values compare with MongoDB's equality (`1 == 1.0`), root-level documents may hold fields
//! the expectation does not name (nested ones may not), and the special operators
//! `$$exists`, `$$type`, `$$unsetOrMatches`, `$$sessionLsid`, `$$matchesEntity`, `$$lte` and
//! `$$matchesHexBytes` apply.
//!
//! This module must never run anything: it compares values, and resolves entities only
//! through the lookup it is given.

use std::fmt::Write as _;

use bson::Bson;
use spillway_doc::compare::values_equal;

/// Resolves an entity's id (a session's `lsid`, a saved result) for `$$sessionLsid` and
/// `$$matchesEntity`.
pub(crate) type Lookup<'a> = &'a dyn Fn(&str) -> Option<Bson>;

/// No entities: for runners that have none.
pub(crate) fn no_entities(_id: &str) -> Option<Bson> {
    None
}

/// Where `actual` departs from `expected`, or `None` when it matches. `root` says whether
/// `expected` is a root-level document (extra fields allowed); arrays pass it to their
/// elements, as pymongo's runner does.
pub(crate) fn mismatch(
    expected: &Bson,
    actual: Option<&Bson>,
    root: bool,
    lookup: Lookup<'_>,
) -> Option<String> {
    if let Bson::Document(operator) = expected
        && operator.len() == 1
        && let Some((name, argument)) = operator.iter().next()
        && name.starts_with("$$")
    {
        return special(name, argument, actual, root, lookup);
    }
    let Some(actual) = actual else {
        return Some(format!("missing, expected {expected}"));
    };
    match (expected, actual) {
        (Bson::Document(expected), Bson::Document(actual)) => {
            for (key, value) in expected {
                if let Some(why) = mismatch(value, actual.get(key), false, lookup) {
                    return Some(format!("{key}: {why}"));
                }
            }
            if root {
                return None;
            }
            actual
                .keys()
                .find(|key| !expected.contains_key(*key))
                .map(|key| format!("unexpected field {key} in {actual}"))
        }
        (Bson::Array(expected), Bson::Array(actual)) => {
            if expected.len() != actual.len() {
                return Some(format!(
                    "expected {} elements, got {}: {}",
                    expected.len(),
                    actual.len(),
                    Bson::Array(actual.clone())
                ));
            }
            expected
                .iter()
                .zip(actual)
                .enumerate()
                .find_map(|(i, (e, a))| {
                    mismatch(e, Some(a), root, lookup).map(|why| format!("[{i}]: {why}"))
                })
        }
        _ if values_equal(expected, actual) => None,
        _ => Some(format!("expected {expected}, got {actual}")),
    }
}

fn special(
    name: &str,
    argument: &Bson,
    actual: Option<&Bson>,
    root: bool,
    lookup: Lookup<'_>,
) -> Option<String> {
    match name {
        "$$exists" => (argument.as_bool() != Some(actual.is_some()))
            .then(|| format!("$$exists {argument} failed (got {actual:?})")),
        "$$unsetOrMatches" => {
            actual.and_then(|actual| mismatch(argument, Some(actual), root, lookup))
        }
        "$$type" => {
            let names: Vec<&str> = match argument {
                Bson::String(name) => vec![name.as_str()],
                Bson::Array(names) => names.iter().filter_map(Bson::as_str).collect(),
                _ => Vec::new(),
            };
            let actual_type = actual.map(type_name);
            (!actual_type.is_some_and(|t| {
                names.contains(&t)
                    || (t == "int" || t == "long" || t == "double" || t == "decimal")
                        && names.contains(&"number")
            }))
            .then(|| format!("expected type {names:?}, got {actual_type:?}"))
        }
        "$$sessionLsid" | "$$matchesEntity" => {
            let id = argument.as_str().unwrap_or_default();
            let Some(value) = lookup(id) else {
                return Some(format!("{name}: no entity {id}"));
            };
            mismatch(&value, actual, root, lookup)
        }
        "$$lte" => {
            let Some(actual) = actual else {
                return Some("$$lte: missing".to_string());
            };
            let (Some(limit), Some(value)) = (number(argument), number(actual)) else {
                return Some(format!("$$lte: {actual} is not a number"));
            };
            (value > limit).then(|| format!("expected at most {limit}, got {value}"))
        }
        "$$matchesHexBytes" => {
            let expected = argument.as_str().unwrap_or_default().to_lowercase();
            let got = match actual {
                Some(Bson::Binary(binary)) => {
                    binary.bytes.iter().fold(String::new(), |mut hex, byte| {
                        let _ = write!(hex, "{byte:02x}");
                        hex
                    })
                }
                _ => String::new(),
            };
            (got != expected).then(|| format!("expected bytes {expected}, got {actual:?}"))
        }
        other => Some(format!(
            "matching operator {other} is not supported by this runner"
        )),
    }
}

#[expect(
    clippy::cast_precision_loss,
    reason = "comparing small counts and durations"
)]
fn number(value: &Bson) -> Option<f64> {
    match value {
        Bson::Int32(value) => Some(f64::from(*value)),
        Bson::Int64(value) => Some(*value as f64),
        Bson::Double(value) => Some(*value),
        _ => None,
    }
}

/// The type names of `$$type`.
pub(crate) fn type_name(value: &Bson) -> &'static str {
    match value {
        Bson::Double(_) => "double",
        Bson::String(_) => "string",
        Bson::Document(_) => "object",
        Bson::Array(_) => "array",
        Bson::Binary(_) => "binData",
        Bson::ObjectId(_) => "objectId",
        Bson::Boolean(_) => "bool",
        Bson::DateTime(_) => "date",
        Bson::Null => "null",
        Bson::Int32(_) => "int",
        Bson::Int64(_) => "long",
        Bson::Decimal128(_) => "decimal",
        Bson::Timestamp(_) => "timestamp",
        Bson::RegularExpression(_) => "regex",
        Bson::JavaScriptCode(_) => "javascript",
        Bson::MinKey => "minKey",
        Bson::MaxKey => "maxKey",
        Bson::Undefined => "undefined",
        _ => "other",
    }
}
