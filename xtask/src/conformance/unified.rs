//! MongoDB's unified-format CRUD tests (`../shared/conformance/crud-unified`) for the
//! operations Spillway's aggregation issue covers: every `aggregate*.json` file, run through
//! the facade (`Database::open_in_memory`, one database holding the files' collections).
//!
//! Read from the format: `runOnRequirements` (a standalone server of MongoDB 7-8 is what
//! Spillway claims to be: requirements for replica sets or sharding only, or for older
//! servers only, are skipped), `createEntities` (databases and collections), `initialData`,
//! the `aggregate` operation on a collection (`pipeline`, `let`; `batchSize`,
//! `allowDiskUse` and `comment` accepted), `expectResult` with the `$$type`, `$$exists` and
//! `$$unsetOrMatches` operators, `expectError` (`isError`, `errorCode`, `errorContains`),
//! and `outcome`. Event assertions (`expectEvents`) are not checked: an embedded database
//! has no command monitoring. Every skip says why, and the reasons are counted.

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::{Context, Result, bail};
use bson::{Bson, Document, doc};
use spillway::Database;
use spillway_doc::compare::values_equal;

use super::Tally;

/// Runs the aggregation files of the unified suite in `suite`.
pub(crate) fn run_suite(suite: &Path, verbose: bool) -> Result<(Tally, BTreeMap<String, usize>)> {
    let mut files: Vec<_> = std::fs::read_dir(suite)
        .with_context(|| format!("reading {}", suite.display()))?
        .filter_map(|entry| entry.ok().map(|entry| entry.path()))
        .filter(|path| {
            let is_json = path.extension().is_some_and(|ext| ext == "json");
            let name = path
                .file_name()
                .and_then(|name| name.to_str())
                .unwrap_or_default();
            is_json && (name.starts_with("aggregate") || name == "db-aggregate.json")
        })
        .collect();
    files.sort();
    if files.is_empty() {
        bail!("no aggregate*.json files under {}", suite.display());
    }
    let mut tally = Tally {
        target: "facade (unified aggregate)",
        ..Tally::default()
    };
    let mut reasons: BTreeMap<String, usize> = BTreeMap::new();
    for file in &files {
        let name = file
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let text =
            std::fs::read_to_string(file).with_context(|| format!("reading {}", file.display()))?;
        let json: serde_json::Value =
            serde_json::from_str(&text).with_context(|| format!("parsing {name}"))?;
        let Bson::Document(spec) =
            Bson::try_from(json).with_context(|| format!("Extended JSON in {name}"))?
        else {
            bail!("{name} is not an object");
        };
        let file_skip = requirements_unmet(spec.get("runOnRequirements"));
        let Some(Bson::Array(tests)) = spec.get("tests") else {
            bail!("{name}: no tests");
        };
        for test in tests {
            let Bson::Document(test) = test else {
                bail!("{name}: a test is not an object")
            };
            let description = test.get_str("description").unwrap_or("(no description)");
            let verdict = match file_skip
                .clone()
                .or_else(|| requirements_unmet(test.get("runOnRequirements")))
            {
                Some(reason) => Err(reason),
                None => run_test(&spec, test),
            };
            match verdict {
                Ok(()) => {
                    tally.passed += 1;
                    if verbose {
                        println!("  pass  {name}: {description}");
                    }
                }
                Err(reason) if reason.starts_with("FAIL: ") => {
                    tally.failed += 1;
                    println!("  FAIL  {name}: {description}\n        {}", &reason[6..]);
                }
                Err(reason) => {
                    tally.skipped += 1;
                    if verbose {
                        println!("  skip  {name}: {description} ({reason})");
                    }
                    *reasons.entry(reason).or_default() += 1;
                }
            }
        }
    }
    Ok((tally, reasons))
}

/// Why no requirement of `requirements` holds for Spillway, or `None` when one does.
fn requirements_unmet(requirements: Option<&Bson>) -> Option<String> {
    let Some(Bson::Array(requirements)) = requirements else {
        return None;
    };
    let mut reason = None;
    for requirement in requirements {
        let Bson::Document(requirement) = requirement else {
            continue;
        };
        let unmet = if let Ok(topologies) = requirement.get_array("topologies")
            && !topologies.iter().any(|t| t.as_str() == Some("single"))
        {
            Some("needs a replica set or sharded cluster".to_string())
        } else if let Ok(max) = requirement.get_str("maxServerVersion")
            && version(max) < (7, 0)
        {
            Some(format!("for servers up to {max} only"))
        } else if requirement.contains_key("auth")
            || requirement.contains_key("csfle")
            || requirement.get_str("serverless").ok() == Some("require")
        {
            Some("needs auth, CSFLE or serverless".to_string())
        } else {
            None
        };
        match unmet {
            None => return None,
            Some(why) => reason = Some(why),
        }
    }
    reason
}

fn version(text: &str) -> (u32, u32) {
    let mut parts = text.split('.').map(|part| part.parse().unwrap_or(0));
    (parts.next().unwrap_or(0), parts.next().unwrap_or(0))
}

/// Entities by id: collection name for collections, `None` for databases.
fn entities(spec: &Document) -> BTreeMap<String, Option<String>> {
    let mut found = BTreeMap::new();
    if let Ok(list) = spec.get_array("createEntities") {
        for entity in list.iter().filter_map(Bson::as_document) {
            if let Ok(collection) = entity.get_document("collection") {
                if let (Ok(id), Ok(name)) = (
                    collection.get_str("id"),
                    collection.get_str("collectionName"),
                ) {
                    found.insert(id.to_string(), Some(name.to_string()));
                }
            } else if let Ok(database) = entity.get_document("database")
                && let Ok(id) = database.get_str("id")
            {
                found.insert(id.to_string(), None);
            }
        }
    }
    found
}

/// Runs one test; `Err` with a reason that does not start with "FAIL" is a skip.
fn run_test(spec: &Document, test: &Document) -> Result<(), String> {
    let db = Database::open_in_memory().map_err(|e| format!("FAIL: open: {e}"))?;
    if let Ok(initial) = spec.get_array("initialData") {
        for data in initial.iter().filter_map(Bson::as_document) {
            let name = data
                .get_str("collectionName")
                .map_err(|e| format!("FAIL: initialData: {e}"))?;
            db.create_collection(name)
                .map_err(|e| format!("FAIL: create {name}: {e}"))?;
            let documents: Vec<Document> = data
                .get_array("documents")
                .map(|docs| docs.iter().filter_map(Bson::as_document).cloned().collect())
                .unwrap_or_default();
            if !documents.is_empty() {
                db.collection::<Document>(name)
                    .insert_many(documents)
                    .run()
                    .map_err(|e| format!("FAIL: initialData: {e}"))?;
            }
        }
    }
    let entities = entities(spec);
    let operations = test
        .get_array("operations")
        .map_err(|e| format!("FAIL: operations: {e}"))?;
    for operation in operations.iter().filter_map(Bson::as_document) {
        let name = operation.get_str("name").unwrap_or_default();
        let object = operation.get_str("object").unwrap_or_default();
        if name != "aggregate" {
            return Err(format!("operation {name} is outside this runner"));
        }
        let Some(collection) = entities.get(object).cloned().flatten() else {
            return Err(
                "database-level aggregate ($currentOp, $documents without a collection)"
                    .to_string(),
            );
        };
        let empty = Document::new();
        let arguments = operation.get_document("arguments").unwrap_or(&empty);
        if arguments.contains_key("collation") {
            return Err("collation".to_string());
        }
        if arguments.contains_key("hint") {
            return Err("hint".to_string());
        }
        let pipeline: Vec<Document> = arguments
            .get_array("pipeline")
            .map(|stages| {
                stages
                    .iter()
                    .filter_map(Bson::as_document)
                    .cloned()
                    .collect()
            })
            .unwrap_or_default();
        let target = db.collection::<Document>(&collection);
        let mut action = target.aggregate(pipeline);
        if let Ok(let_vars) = arguments.get_document("let") {
            action = action.let_vars(let_vars.clone());
        }
        let result = action
            .run()
            .and_then(std::iter::Iterator::collect::<spillway::Result<Vec<Document>>>);
        match (result, operation.get_document("expectError")) {
            (Ok(_), Ok(_)) => {
                return Err("FAIL: expected an error, the aggregate succeeded".to_string());
            }
            (Err(error), Ok(expected)) => {
                if let Ok(code) = expected.get_i32("errorCode")
                    && error.code() != Some(code)
                {
                    return Err(format!(
                        "FAIL: expected error code {code}, got {:?}: {error}",
                        error.code()
                    ));
                }
                if let Ok(text) = expected.get_str("errorContains")
                    && !error
                        .to_string()
                        .to_lowercase()
                        .contains(&text.to_lowercase())
                {
                    return Err(format!(
                        "FAIL: expected an error containing '{text}', got: {error}"
                    ));
                }
            }
            (Err(error), Err(_)) => return Err(format!("FAIL: unexpected error: {error}")),
            (Ok(documents), Err(_)) => {
                if let Some(expected) = operation.get("expectResult") {
                    let actual = Bson::Array(documents.into_iter().map(Bson::Document).collect());
                    if let Some(why) = mismatch(expected, Some(&actual)) {
                        return Err(format!("FAIL: result: {why}"));
                    }
                }
            }
        }
    }
    if let Ok(outcome) = test.get_array("outcome") {
        for expected in outcome.iter().filter_map(Bson::as_document) {
            let name = expected
                .get_str("collectionName")
                .map_err(|e| format!("FAIL: outcome: {e}"))?;
            let actual: Vec<Document> = db
                .collection::<Document>(name)
                .find(doc! {})
                .sort(doc! { "_id": 1 })
                .run()
                .and_then(Iterator::collect)
                .map_err(|e| format!("FAIL: reading {name}: {e}"))?;
            let expected = expected
                .get("documents")
                .cloned()
                .unwrap_or(Bson::Array(Vec::new()));
            let actual = Bson::Array(actual.into_iter().map(Bson::Document).collect());
            if let Some(why) = mismatch(&expected, Some(&actual)) {
                return Err(format!("FAIL: outcome of {name}: {why}"));
            }
        }
    }
    Ok(())
}

/// Where `actual` departs from `expected` under the unified format's matching rules.
fn mismatch(expected: &Bson, actual: Option<&Bson>) -> Option<String> {
    if let Bson::Document(operator) = expected
        && operator.len() == 1
        && let Some((name, argument)) = operator.iter().next()
        && name.starts_with("$$")
    {
        return match name.as_str() {
            "$$exists" => (argument.as_bool() != Some(actual.is_some()))
                .then(|| format!("$$exists {argument} failed")),
            "$$unsetOrMatches" => actual.and_then(|actual| mismatch(argument, Some(actual))),
            "$$type" => {
                let names: Vec<&str> = match argument {
                    Bson::String(name) => vec![name.as_str()],
                    Bson::Array(names) => names.iter().filter_map(Bson::as_str).collect(),
                    _ => Vec::new(),
                };
                let actual_type = actual.map(type_name);
                (!actual_type.is_some_and(|t| names.contains(&t)))
                    .then(|| format!("expected type {names:?}, got {actual_type:?}"))
            }
            other => Some(format!(
                "matching operator {other} is not supported by this runner"
            )),
        };
    }
    let Some(actual) = actual else {
        return Some(format!("missing, expected {expected}"));
    };
    match (expected, actual) {
        (Bson::Document(expected), Bson::Document(actual)) => {
            for (key, value) in expected {
                if let Some(why) = mismatch(value, actual.get(key)) {
                    return Some(format!("{key}: {why}"));
                }
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
                .find_map(|(i, (e, a))| mismatch(e, Some(a)).map(|why| format!("[{i}]: {why}")))
        }
        _ if values_equal(expected, actual) => None,
        _ => Some(format!("expected {expected}, got {actual}")),
    }
}

fn type_name(value: &Bson) -> &'static str {
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
        _ => "other",
    }
}
