//! MongoDB's Stable API on every command: `apiVersion` (only `"1"` exists), `apiStrict`
//! (refuses a command outside API Version 1, and an `aggregate` using a stage outside it)
//! and `apiDeprecationErrors` (refuses a deprecated command; of Version 1 only the test
//! command `testDeprecation` is).
//!
//! Checked before a command runs, the server's own commands (`ping`, `hello`...) included,
//! with MongoDB's codes: 322 APIVersionError, 323 APIStrictError, 325 APIDeprecationError,
//! and 4886600 for strict or deprecation flags sent without a version. The test commands of
//! MongoDB's Stable API tests (a server answers them with test commands on) are placed in
//! versions as MongoDB places them.

use bson::{Bson, Document};

use super::error::{CommandError, CommandResult};

/// The commands of API Version 1 (MongoDB's list, the ones Spillway has).
const API_VERSION_1: &[&str] = &[
    "abortTransaction",
    "aggregate",
    "authenticate",
    "bulkWrite",
    "collMod",
    "commitTransaction",
    "count",
    "create",
    "createIndexes",
    "delete",
    "drop",
    "dropDatabase",
    "dropIndexes",
    "endSessions",
    "explain",
    "find",
    "findAndModify",
    "getMore",
    "hello",
    "insert",
    "killCursors",
    "listCollections",
    "listDatabases",
    "listIndexes",
    "ping",
    "refreshSessions",
    "saslContinue",
    "saslStart",
    "update",
    // MongoDB's test commands (with test commands on): in Version 1, and deprecated there.
    "testDeprecation",
    "testDeprecationInVersion2",
    "testRemoval",
    "testVersions1And2",
];

/// Aggregation stages outside API Version 1 (those of them Spillway has, and MongoDB's
/// other diagnostic stages): an `aggregate` with `apiStrict: true` may not use them.
const STAGES_OUTSIDE_VERSION_1: &[&str] = &[
    "$currentOp",
    "$indexStats",
    "$listCatalog",
    "$listLocalSessions",
    "$listSessions",
    "$listSearchIndexes",
    "$planCacheStats",
    "$search",
    "$searchMeta",
];

/// The commands of API Version 1 that are deprecated in it: MongoDB's test command only.
const DEPRECATED_IN_VERSION_1: &[&str] = &["testDeprecation"];

/// Refuses `command` when its Stable API parameters are invalid, or when `apiStrict` is true
/// and the command is not in API Version 1.
pub(crate) fn check(command: &Document) -> CommandResult<()> {
    let flag = |field: &str| match command.get(field) {
        None => Ok(None),
        Some(Bson::Boolean(value)) => Ok(Some(*value)),
        Some(other) => Err(CommandError::type_mismatch(format!(
            "BSON field '{field}' is the wrong type '{}', expected type 'bool'",
            spillway_doc::expr::type_name(Some(other))
        ))),
    };
    let strict = flag("apiStrict")?;
    let deprecation_errors = flag("apiDeprecationErrors")?;
    match command.get("apiVersion") {
        None if strict.is_some() || deprecation_errors.is_some() => Err(CommandError::new(
            4_886_600,
            "Provided apiStrict and/or apiDeprecationErrors without passing apiVersion",
        )),
        None => Ok(()),
        Some(Bson::String(version)) if version == "1" => {
            let name = command.keys().next().map_or("", String::as_str);
            if strict == Some(true) && !API_VERSION_1.contains(&name) {
                return Err(CommandError::new(
                    323,
                    format!(
                        "Provided apiStrict:true, but the command {name} is not in API Version 1. Information on supported commands and migrations in API Version 1 can be found at https://dochub.mongodb.org/core/manual-versioned-api"
                    ),
                ));
            }
            if strict == Some(true)
                && name == "aggregate"
                && let Some(stage) = stage_outside_version_1(command)
            {
                return Err(CommandError::new(
                    323,
                    format!("{stage} is not allowed with 'apiStrict: true' in API Version 1"),
                ));
            }
            if deprecation_errors == Some(true) && DEPRECATED_IN_VERSION_1.contains(&name) {
                return Err(CommandError::new(
                    325,
                    format!(
                        "Provided apiDeprecationErrors:true, but the command {name} is deprecated in API Version 1"
                    ),
                ));
            }
            Ok(())
        }
        Some(Bson::String(_)) => Err(CommandError::new(322, "API version must be \"1\"")),
        Some(other) => Err(CommandError::type_mismatch(format!(
            "BSON field 'apiVersion' is the wrong type '{}', expected type 'string'",
            spillway_doc::expr::type_name(Some(other))
        ))),
    }
}

/// The first stage of an `aggregate`'s pipeline (at its top level or in a `$facet`,
/// `$lookup` or `$unionWith`) that is outside API Version 1.
fn stage_outside_version_1(command: &Document) -> Option<String> {
    fn find(pipeline: &[Bson]) -> Option<String> {
        for stage in pipeline.iter().filter_map(Bson::as_document) {
            let (name, spec) = stage.iter().next()?;
            if STAGES_OUTSIDE_VERSION_1.contains(&name.as_str()) {
                return Some(name.clone());
            }
            let nested: Vec<&Bson> = match spec {
                Bson::Document(spec) if name == "$facet" => spec.values().collect(),
                Bson::Document(spec) => spec.get("pipeline").into_iter().collect(),
                _ => Vec::new(),
            };
            for inner in nested {
                if let Bson::Array(inner) = inner
                    && let Some(found) = find(inner)
                {
                    return Some(found);
                }
            }
        }
        None
    }
    find(command.get_array("pipeline").ok()?)
}
