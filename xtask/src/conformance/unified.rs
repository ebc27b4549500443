//! The unified test format (`../shared/conformance/crud-unified` and
//! `../shared/conformance/transactions-unified`), run through the command layer: every file
//! of both directories, each operation sent as the command a driver sends ([`Driver`]).
//!
//! Read from the format: `runOnRequirements` (Spillway is taken for what `spillway serve`
//! presents: a single-node replica set of MongoDB [`SERVER_VERSION`]; requirements for
//! sharded or load-balanced topologies, serverless, auth, CSFLE or server parameters are
//! skipped), `createEntities` (clients, databases, collections, sessions), `initialData`,
//! the operations on collections, databases, sessions and the test runner (the CRUD
//! operations, `bulkWrite` split into `insert`/`update`/`delete` batches, DDL, transactions
//! with `lsid`, `txnNumber`, `startTransaction` and `autocommit`, `withTransaction`, and the
//! runner's assertions), `expectResult` (the matching rules in `matching.rs`),
//! `expectError` (`isError`, `isClientError`, `errorContains`, `errorCode`,
//! `errorCodeName`, `errorLabelsContain`, `errorLabelsOmit`, `expectResult`,
//! `errorResponse`), `expectEvents` for command events (the commands the runner sends are
//! the events a driver publishes), and `outcome`. What needs a real server's machinery or a
//! real driver (fail points, change streams, client-side timeouts,
//! MongoDB 8.0's client `bulkWrite`) is skipped; every skip says why, and the reasons are
//! counted. A test listed in `xtask/conformance-known-failures.txt` is reported apart when
//! it fails, and is an error when it passes (the list stays honest).
//!
//! This module must never reach the database behind the command layer: setup, operations
//! and outcome checks all go through commands.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fmt::Write as _;
use std::path::Path;
use std::rc::Rc;

use anyhow::{Context, Result, bail};
use bson::{Bson, Document, doc};
use spillway::Database;
use spillway::command::Commands;

use super::Tally;
use super::driver::{Driver, Event, Namespace, OpError, OpResult, Session};
use super::matching::mismatch;

/// The server version Spillway's wire server reports.
pub(crate) const SERVER_VERSION: (u32, u32) = (8, 0);

/// The outcome of one group of files.
#[derive(Debug, Default)]
pub(crate) struct Report {
    pub(crate) tally: Tally,
    /// Skip reasons and how many tests each skipped.
    pub(crate) reasons: BTreeMap<String, usize>,
    /// Assertions a test holds that the runner did not check, and how many tests held them.
    pub(crate) unchecked: BTreeMap<String, usize>,
    /// Listed known failures that passed or did not run: the list is stale.
    pub(crate) stale: Vec<String>,
    /// Every failing test (listed or not), with why it failed.
    pub(crate) failures: Vec<(String, String)>,
}

/// The checked-in list of known failures: `group/file.json: description | reason` per line.
#[derive(Debug, Default)]
pub(crate) struct KnownFailures {
    entries: BTreeMap<String, String>,
}

impl KnownFailures {
    /// Rewrites the list at `path` with exactly the tests that fail now: a listed test keeps
    /// its reason, a new one gets its failure message.
    pub(crate) fn write(path: &Path, failures: &[(String, String)]) -> Result<()> {
        let mut text = String::from(
            "# Unified-format conformance tests that fail through the command layer for a reason\n\
             # of Spillway's (not of the runner's): one `group/file.json: description | reason` per line.\n\
             # `cargo xtask conformance` reports them apart and fails when one of them passes or no\n\
             # longer runs; `cargo xtask conformance --update-known-failures` rewrites this file.\n",
        );
        let mut sorted: Vec<&(String, String)> = failures.iter().collect();
        sorted.sort();
        for (test, reason) in sorted {
            let reason: String = reason.split_whitespace().collect::<Vec<_>>().join(" ");
            let _ = writeln!(text, "{test} | {reason}");
        }
        std::fs::write(path, text).with_context(|| format!("writing {}", path.display()))
    }

    pub(crate) fn read(path: &Path) -> Result<KnownFailures> {
        let mut entries = BTreeMap::new();
        if !path.exists() {
            return Ok(KnownFailures { entries });
        }
        let text =
            std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
        for line in text.lines() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let Some((test, reason)) = line.rsplit_once(" | ") else {
                bail!("{}: a line without ' | reason': {line}", path.display());
            };
            entries.insert(test.trim().to_string(), reason.trim().to_string());
        }
        Ok(KnownFailures { entries })
    }
}

/// Runs the `*.json` files of `suite` whose names `select` accepts through the command
/// layer.
pub(crate) fn run_suite(
    suite: &Path,
    select: &dyn Fn(&str) -> bool,
    target: &'static str,
    known: &KnownFailures,
    verbose: bool,
) -> Result<Report> {
    let mut files: Vec<_> = std::fs::read_dir(suite)
        .with_context(|| format!("reading {}", suite.display()))?
        .filter_map(|entry| entry.ok().map(|entry| entry.path()))
        .filter(|path| {
            path.extension().is_some_and(|ext| ext == "json")
                && path
                    .file_name()
                    .and_then(|name| name.to_str())
                    .is_some_and(select)
        })
        .collect();
    files.sort();
    if files.is_empty() {
        bail!("no unified-format files under {}", suite.display());
    }
    let mut report = Report {
        tally: Tally {
            target,
            ..Tally::default()
        },
        ..Report::default()
    };
    let group = suite
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let mut seen_known = BTreeSet::new();
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
        let file_skip = if name.starts_with("client-bulkWrite") {
            Some("client bulkWrite (MongoDB 8.0's bulkWrite command)".to_string())
        } else {
            requirements_unmet(spec.get("runOnRequirements"))
        };
        let Some(Bson::Array(tests)) = spec.get("tests") else {
            bail!("{name}: no tests");
        };
        for test in tests {
            let Bson::Document(test) = test else {
                bail!("{name}: a test is not an object")
            };
            let description = test.get_str("description").unwrap_or("(no description)");
            let key = format!("{group}/{name}: {description}");
            let verdict = match file_skip
                .clone()
                .or_else(|| requirements_unmet(test.get("runOnRequirements")))
                .or_else(|| test.get_str("skipReason").ok().map(str::to_string))
                .or_else(|| unsupported(test))
            {
                Some(reason) => Verdict::Skip(reason),
                None => run_test(&spec, test, &mut report.unchecked),
            };
            let listed = known.entries.get(&key);
            if listed.is_some() {
                seen_known.insert(key.clone());
            }
            match (verdict, listed) {
                (Verdict::Pass, None) => {
                    report.tally.passed += 1;
                    if verbose {
                        println!("  pass  {key}");
                    }
                }
                (Verdict::Pass, Some(_)) => {
                    report.tally.passed += 1;
                    println!("  PASSES, but is listed as a known failure: {key}");
                    report.stale.push(format!("{key} (passes now)"));
                }
                (Verdict::Fail(why), None) => {
                    report.tally.failed += 1;
                    println!("  FAIL  {key}\n        {why}");
                    report.failures.push((key, why));
                }
                (Verdict::Fail(why), Some(reason)) => {
                    report.tally.known_failures += 1;
                    report.failures.push((key.clone(), reason.clone()));
                    println!("  known {key} ({reason})");
                    if verbose {
                        println!("        {why}");
                    }
                }
                (Verdict::Skip(reason), listed) => {
                    report.tally.skipped += 1;
                    if listed.is_some() {
                        report.stale.push(format!("{key} (skipped: {reason})"));
                    }
                    if verbose {
                        println!("  skip  {key} ({reason})");
                    }
                    *report.reasons.entry(reason).or_default() += 1;
                }
            }
        }
    }
    for key in known.entries.keys() {
        let prefix = format!("{group}/");
        let Some(file) = key
            .split(": ")
            .next()
            .and_then(|file| file.strip_prefix(&prefix))
        else {
            continue;
        };
        let ran = files
            .iter()
            .any(|path| path.file_name().is_some_and(|name| name == file));
        if ran && !seen_known.contains(key) {
            report.stale.push(format!("{key} (no such test)"));
        }
    }
    Ok(report)
}

enum Verdict {
    Pass,
    Fail(String),
    Skip(String),
}

/// Why a test stops: it failed, or it needs what this runner cannot give.
enum Stop {
    Fail(String),
    Skip(String),
}

type Step<T = ()> = std::result::Result<T, Stop>;

fn fail<T>(why: impl Into<String>) -> Step<T> {
    Err(Stop::Fail(why.into()))
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
            && !topologies.iter().any(|t| t.as_str() == Some("replicaset"))
        {
            Some("needs a sharded or load-balanced topology".to_string())
        } else if let Ok(max) = requirement.get_str("maxServerVersion")
            && version(max) < SERVER_VERSION
        {
            Some(format!("for servers up to {max} only"))
        } else if let Ok(min) = requirement.get_str("minServerVersion")
            && version(min) > SERVER_VERSION
        {
            Some(format!("needs a server of at least {min}"))
        } else if requirement.get_bool("auth").unwrap_or(false)
            || requirement.contains_key("csfle")
            || requirement.get_str("serverless").ok() == Some("require")
        {
            Some("needs auth, CSFLE or serverless".to_string())
        } else if requirement.contains_key("serverParameters") {
            Some("needs server parameters".to_string())
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

/// The operations this runner maps, by the kind of object they run on.
const COLLECTION_OPERATIONS: &[&str] = &[
    "insertOne",
    "insertMany",
    "updateOne",
    "updateMany",
    "replaceOne",
    "deleteOne",
    "deleteMany",
    "bulkWrite",
    "find",
    "findOne",
    "countDocuments",
    "count",
    "estimatedDocumentCount",
    "distinct",
    "aggregate",
    "findOneAndUpdate",
    "findOneAndReplace",
    "findOneAndDelete",
    "createIndex",
    "listIndexes",
    "dropIndex",
    "dropIndexes",
    "drop",
    "rename",
];
const OTHER_OPERATIONS: &[&str] = &[
    "runCommand",
    "createCollection",
    "dropCollection",
    "listCollections",
    "listCollectionNames",
    "dropDatabase",
    "listDatabases",
    "startTransaction",
    "commitTransaction",
    "abortTransaction",
    "withTransaction",
    "endSession",
    "createEntities",
    "assertSessionTransactionState",
    "assertCollectionExists",
    "assertCollectionNotExists",
    "assertIndexExists",
    "assertIndexNotExists",
    "assertSessionPinned",
    "assertSessionUnpinned",
    "assertSessionDirty",
    "assertSessionNotDirty",
    "assertSameLsidOnLastTwoCommands",
    "assertDifferentLsidOnLastTwoCommands",
];

/// Why a test cannot run here, found before it runs.
fn unsupported(test: &Document) -> Option<String> {
    fn walk(operations: &[Bson]) -> Option<String> {
        for operation in operations.iter().filter_map(Bson::as_document) {
            let name = operation.get_str("name").unwrap_or_default();
            let empty = Document::new();
            let arguments = operation.get_document("arguments").unwrap_or(&empty);
            let reason = match name {
                "failPoint" | "targetedFailPoint" => {
                    Some("fail points (a server's fault injection)".to_string())
                }
                "clientBulkWrite" => {
                    Some("client bulkWrite (MongoDB 8.0's bulkWrite command)".to_string())
                }
                _ if arguments.contains_key("timeoutMS") => {
                    Some("client-side timeouts (timeoutMS)".to_string())
                }
                _ if !COLLECTION_OPERATIONS.contains(&name)
                    && !OTHER_OPERATIONS.contains(&name) =>
                {
                    Some(format!("driver-only operation {name}"))
                }
                _ => None,
            };
            if reason.is_some() {
                return reason;
            }
            if let Ok(callback) = arguments.get_array("callback")
                && let Some(reason) = walk(callback)
            {
                return Some(reason);
            }
            if let Ok(entities) = arguments.get_array("entities")
                && let Some(reason) = entities_unsupported(entities)
            {
                return Some(reason);
            }
        }
        None
    }
    test.get_array("operations").ok().and_then(|ops| walk(ops))
}

fn entities_unsupported(entities: &[Bson]) -> Option<String> {
    for entity in entities.iter().filter_map(Bson::as_document) {
        if let Ok(client) = entity.get_document("client") {
            if client.contains_key("storeEventsAsEntities")
                || client.contains_key("observeSensitiveCommands")
            {
                return Some("client options only a real driver has".to_string());
            }
            if client
                .get_document("uriOptions")
                .is_ok_and(|options| options.contains_key("socketTimeoutMS"))
            {
                return Some("client-side timeouts (socketTimeoutMS)".to_string());
            }
        }
        if entity.contains_key("bucket") || entity.contains_key("clientEncryption") {
            return Some("GridFS or client encryption entities".to_string());
        }
    }
    None
}

/// A client entity: its driver and which command events it observes.
struct Client {
    driver: Driver,
    /// `readConcern`, `writeConcern` and `retryWrites` of its URI options.
    concerns: Document,
    observe: Vec<String>,
    ignore: Vec<String>,
}

enum Entity {
    Client(Rc<Client>),
    Database {
        client: Rc<Client>,
        name: String,
        concerns: Document,
    },
    Collection {
        client: Rc<Client>,
        database: String,
        name: String,
        concerns: Document,
    },
    Session {
        client: Rc<Client>,
        session: Box<Session>,
    },
    Value(Bson),
}

struct Runner {
    commands: Rc<Commands>,
    /// The runner's own client: setup and checks, never observed.
    internal: Driver,
    entities: HashMap<String, Entity>,
}

fn run_test(spec: &Document, test: &Document, unchecked: &mut BTreeMap<String, usize>) -> Verdict {
    let database = match Database::open_in_memory() {
        Ok(database) => database,
        Err(error) => return Verdict::Fail(format!("opening the database: {error}")),
    };
    let commands = Rc::new(Commands::new(database));
    let mut runner = Runner {
        internal: Driver::new(Rc::clone(&commands)),
        commands,
        entities: HashMap::new(),
    };
    match runner.run(spec, test, unchecked) {
        Ok(()) => Verdict::Pass,
        Err(Stop::Fail(why)) => Verdict::Fail(why),
        Err(Stop::Skip(why)) => Verdict::Skip(why),
    }
}

impl Runner {
    fn run(
        &mut self,
        spec: &Document,
        test: &Document,
        unchecked: &mut BTreeMap<String, usize>,
    ) -> Step {
        if let Ok(entities) = spec.get_array("createEntities")
            && let Some(reason) = entities_unsupported(entities)
        {
            return Err(Stop::Skip(reason));
        }
        if let Ok(initial) = spec.get_array("initialData") {
            for data in initial.iter().filter_map(Bson::as_document) {
                self.load(data)?;
            }
        }
        if let Ok(entities) = spec.get_array("createEntities") {
            self.create_entities(entities)?;
        }
        let operations = test
            .get_array("operations")
            .map_err(|e| Stop::Fail(format!("operations: {e}")))?;
        for (position, operation) in operations.iter().enumerate() {
            let Bson::Document(operation) = operation else {
                return fail("an operation is not a document");
            };
            self.operation(operation).map_err(|stop| match stop {
                Stop::Fail(why) => Stop::Fail(format!(
                    "operation {position} ({}): {why}",
                    operation.get_str("name").unwrap_or_default()
                )),
                skip @ Stop::Skip(_) => skip,
            })?;
        }
        if let Ok(expected) = test.get_array("expectEvents") {
            for expected in expected.iter().filter_map(Bson::as_document) {
                self.check_events(expected, unchecked)?;
            }
        }
        if let Ok(outcome) = test.get_array("outcome") {
            for expected in outcome.iter().filter_map(Bson::as_document) {
                self.check_outcome(expected)?;
            }
        }
        Ok(())
    }

    fn load(&self, data: &Document) -> Step {
        let (Ok(database), Ok(collection)) =
            (data.get_str("databaseName"), data.get_str("collectionName"))
        else {
            return fail("initialData without databaseName or collectionName");
        };
        let setup = |command: Document| {
            self.internal
                .command(database, command, None, false)
                .map_err(|error| Stop::Fail(format!("initialData: {error}")))
        };
        match self
            .internal
            .command(database, doc! { "drop": collection }, None, false)
        {
            Err(error) if error.code != Some(26) => {
                return fail(format!("initialData: drop: {error}"));
            }
            _ => {}
        }
        let mut create = doc! { "create": collection };
        if let Ok(options) = data.get_document("createOptions") {
            create.extend(options.clone());
        }
        setup(create)?;
        let documents = data.get_array("documents").cloned().unwrap_or_default();
        if !documents.is_empty() {
            setup(doc! { "insert": collection, "documents": documents })?;
        }
        Ok(())
    }

    fn create_entities(&mut self, entities: &[Bson]) -> Step {
        for entity in entities.iter().filter_map(Bson::as_document) {
            let Some((kind, Bson::Document(entity))) = entity.iter().next() else {
                return fail("an entity is not a document");
            };
            let id = entity.get_str("id").unwrap_or_default().to_string();
            let created = match kind.as_str() {
                "client" => {
                    let strings = |key: &str| -> Vec<String> {
                        entity
                            .get_array(key)
                            .map(|list| {
                                list.iter()
                                    .filter_map(Bson::as_str)
                                    .map(str::to_string)
                                    .collect()
                            })
                            .unwrap_or_default()
                    };
                    let mut concerns = Document::new();
                    if let Ok(options) = entity.get_document("uriOptions") {
                        if let Some(w) = options.get("w") {
                            concerns.insert("writeConcern", doc! { "w": w.clone() });
                        }
                        if let Some(level) = options.get("readConcernLevel") {
                            concerns.insert("readConcern", doc! { "level": level.clone() });
                        }
                        if let Some(mode) = options.get("readPreference") {
                            concerns.insert("readPreference", doc! { "mode": mode.clone() });
                        }
                        if let Some(retry) = options.get("retryWrites") {
                            concerns.insert("retryWrites", retry.clone());
                        }
                    }
                    Entity::Client(Rc::new(Client {
                        driver: Driver::new(Rc::clone(&self.commands)),
                        concerns,
                        observe: strings("observeEvents"),
                        ignore: strings("ignoreCommandMonitoringEvents"),
                    }))
                }
                "database" => {
                    let client = self.client(entity.get_str("client").unwrap_or_default())?;
                    let mut concerns = client.concerns.clone();
                    if let Ok(options) = entity.get_document("databaseOptions") {
                        concerns.extend(options.clone());
                    }
                    Entity::Database {
                        client,
                        name: entity
                            .get_str("databaseName")
                            .unwrap_or_default()
                            .to_string(),
                        concerns,
                    }
                }
                "collection" => {
                    let database = entity.get_str("database").unwrap_or_default();
                    let Some(Entity::Database {
                        client,
                        name,
                        concerns,
                    }) = self.entities.get(database)
                    else {
                        return fail(format!("no database entity {database}"));
                    };
                    let mut concerns = concerns.clone();
                    if let Ok(options) = entity.get_document("collectionOptions") {
                        concerns.extend(options.clone());
                    }
                    Entity::Collection {
                        client: Rc::clone(client),
                        database: name.clone(),
                        concerns,
                        name: entity
                            .get_str("collectionName")
                            .unwrap_or_default()
                            .to_string(),
                    }
                }
                "session" => {
                    let client = self.client(entity.get_str("client").unwrap_or_default())?;
                    let mut defaults = client.concerns.clone();
                    let options = entity
                        .get_document("sessionOptions")
                        .cloned()
                        .unwrap_or_default();
                    if let Ok(options) = options.get_document("defaultTransactionOptions") {
                        defaults.extend(options.clone());
                    }
                    let causal = options.get_bool("causalConsistency").unwrap_or(true);
                    Entity::Session {
                        client,
                        session: Box::new(Session::new(defaults, causal)),
                    }
                }
                other => return Err(Stop::Skip(format!("{other} entities"))),
            };
            self.entities.insert(id, created);
        }
        Ok(())
    }

    fn client(&self, id: &str) -> Step<Rc<Client>> {
        match self.entities.get(id) {
            Some(Entity::Client(client)) => Ok(Rc::clone(client)),
            _ => fail(format!("no client entity {id}")),
        }
    }

    fn session(&mut self, id: &str) -> Step<&mut Session> {
        match self.entities.get_mut(id) {
            Some(Entity::Session { session, .. }) => Ok(session),
            _ => fail(format!("no session entity {id}")),
        }
    }

    /// The value an entity stands for in matching: a session's `lsid`, a saved result.
    fn lookup(&self, id: &str) -> Option<Bson> {
        match self.entities.get(id)? {
            Entity::Session { session, .. } => Some(Bson::Document(session.lsid.clone())),
            Entity::Value(value) => Some(value.clone()),
            _ => None,
        }
    }

    /// Runs one operation and checks its `expectResult` or `expectError`.
    fn operation(&mut self, operation: &Document) -> Step {
        let name = operation.get_str("name").unwrap_or_default();
        let object = operation.get_str("object").unwrap_or_default();
        let empty = Document::new();
        let arguments = operation.get_document("arguments").unwrap_or(&empty);
        let result = self.dispatch(name, object, arguments)?;
        if operation.get_bool("ignoreResultAndError").unwrap_or(false) {
            return Ok(());
        }
        match (result, operation.get_document("expectError")) {
            (Ok(value), Ok(_)) => fail(format!("expected an error, got {value}")),
            (Err(error), Ok(expected)) => self.check_error(&error, expected),
            (Err(error), Err(_)) => fail(format!("unexpected error: {error}")),
            (Ok(value), Err(_)) => {
                if let Some(expected) = operation.get("expectResult")
                    && let Some(why) = mismatch(expected, Some(&value), true, &|id| self.lookup(id))
                {
                    return fail(format!("result: {why}"));
                }
                if let Ok(id) = operation.get_str("saveResultAsEntity") {
                    self.entities.insert(id.to_string(), Entity::Value(value));
                }
                Ok(())
            }
        }
    }

    fn check_error(&self, error: &OpError, expected: &Document) -> Step {
        if let Ok(client) = expected.get_bool("isClientError")
            && client != error.client
        {
            return fail(format!("isClientError {client}, got {error}"));
        }
        if expected.get_bool("isTimeoutError").unwrap_or(false) {
            return fail(format!("expected a timeout, got {error}"));
        }
        if let Ok(text) = expected.get_str("errorContains")
            && !error.message.to_lowercase().contains(&text.to_lowercase())
        {
            return fail(format!(
                "expected an error containing '{text}', got {error}"
            ));
        }
        if let Some(code) = expected.get("errorCode")
            && error.code.map(i64::from) != Some(super::driver::integer(Some(code)))
        {
            return fail(format!("expected error code {code}, got {error}"));
        }
        if let Ok(name) = expected.get_str("errorCodeName")
            && error.code_name.as_deref() != Some(name)
        {
            return fail(format!("expected error {name}, got {error}"));
        }
        if let Ok(labels) = expected.get_array("errorLabelsContain") {
            for label in labels.iter().filter_map(Bson::as_str) {
                if !error.labels.iter().any(|have| have == label) {
                    return fail(format!(
                        "expected label {label}, got {:?} on {error}",
                        error.labels
                    ));
                }
            }
        }
        if let Ok(labels) = expected.get_array("errorLabelsOmit") {
            for label in labels.iter().filter_map(Bson::as_str) {
                if error.labels.iter().any(|have| have == label) {
                    return fail(format!("label {label} should be absent on {error}"));
                }
            }
        }
        if let Some(result) = expected.get("expectResult") {
            let partial = error.partial.clone().map_or(Bson::Null, |partial| *partial);
            if let Some(why) = mismatch(result, Some(&partial), true, &|id| self.lookup(id)) {
                return fail(format!("the error's result: {why}"));
            }
        }
        if let Some(response) = expected.get("errorResponse") {
            let reply = error.reply.clone().map(|reply| Bson::Document(*reply));
            if let Some(why) = mismatch(response, reply.as_ref(), true, &|id| self.lookup(id)) {
                return fail(format!("the error's response: {why}"));
            }
        }
        Ok(())
    }

    /// Runs operation `name` on entity `object`.
    fn dispatch(&mut self, name: &str, object: &str, arguments: &Document) -> Step<OpResult> {
        if object == "testRunner" {
            return self.test_runner(name, arguments).map(|()| Ok(Bson::Null));
        }
        let session_id = arguments.get_str("session").ok().map(str::to_string);
        let target = match self.entities.get(object) {
            Some(Entity::Collection {
                client,
                database,
                name,
                concerns,
            }) => {
                client.driver.set_concerns(concerns.clone());
                Target::Collection(Rc::clone(client), database.clone(), name.clone())
            }
            Some(Entity::Database {
                client,
                name,
                concerns,
            }) => {
                client.driver.set_concerns(concerns.clone());
                Target::Database(Rc::clone(client), name.clone())
            }
            Some(Entity::Client(client)) => {
                client.driver.set_concerns(client.concerns.clone());
                Target::Client(Rc::clone(client))
            }
            Some(Entity::Session { client, .. }) => Target::Session(Rc::clone(client)),
            Some(Entity::Value(_)) | None => return fail(format!("no entity {object}")),
        };
        let session = match &session_id {
            Some(id) => Some(self.session(id)?),
            None => None,
        };
        Ok(match target {
            Target::Collection(client, database, collection) => client.driver.collection_operation(
                Namespace {
                    database: &database,
                    collection: &collection,
                },
                name,
                arguments,
                session,
            ),
            Target::Database(client, database) => client
                .driver
                .database_operation(&database, name, arguments, session),
            Target::Client(client) => match name {
                "listDatabases" => client
                    .driver
                    .command("admin", doc! { "listDatabases": 1 }, session, false)
                    .map(|reply| reply.get("databases").cloned().unwrap_or(Bson::Null)),
                other => return Err(Stop::Skip(format!("client operation {other}"))),
            },
            Target::Session(client) => {
                return self.session_operation(&client, name, object, arguments);
            }
        })
    }

    fn session_operation(
        &mut self,
        client: &Rc<Client>,
        name: &str,
        id: &str,
        arguments: &Document,
    ) -> Step<OpResult> {
        let session = self.session(id)?;
        Ok(match name {
            "startTransaction" => {
                Driver::start_transaction(session, arguments).map(|()| Bson::Null)
            }
            "commitTransaction" => client
                .driver
                .commit_transaction(session)
                .map(|()| Bson::Null),
            "abortTransaction" => client
                .driver
                .abort_transaction(session)
                .map(|()| Bson::Null),
            "endSession" => {
                if session.state == super::driver::TxnState::InProgress {
                    let _ignored = client.driver.abort_transaction(session);
                }
                Ok(Bson::Null)
            }
            "withTransaction" => {
                let options = arguments
                    .get_document("options")
                    .cloned()
                    .unwrap_or_default();
                if let Err(error) = Driver::start_transaction(session, &options) {
                    return Ok(Err(error));
                }
                let callback = arguments.get_array("callback").cloned().unwrap_or_default();
                for operation in callback.iter().filter_map(Bson::as_document) {
                    self.operation(operation)?;
                }
                let session = self.session(id)?;
                match session.state {
                    super::driver::TxnState::Starting | super::driver::TxnState::InProgress => {
                        client
                            .driver
                            .commit_transaction(session)
                            .map(|()| Bson::Null)
                    }
                    _ => Ok(Bson::Null),
                }
            }
            other => return fail(format!("unknown session operation {other}")),
        })
    }

    /// The test runner's own operations: assertions on sessions, collections and indexes.
    fn test_runner(&mut self, name: &str, arguments: &Document) -> Step {
        let text = |key: &str| arguments.get_str(key).unwrap_or_default().to_string();
        match name {
            "createEntities" => {
                let entities = arguments.get_array("entities").cloned().unwrap_or_default();
                self.create_entities(&entities)
            }
            "assertSessionTransactionState" => {
                let session = self.session(&text("session"))?;
                let state = text("state");
                if session.state.name() == state {
                    Ok(())
                } else {
                    fail(format!(
                        "session state {}, expected {state}",
                        session.state.name()
                    ))
                }
            }
            "assertSessionPinned" => fail("sessions are never pinned on a replica set"),
            "assertSessionUnpinned" | "assertSessionNotDirty" => Ok(()),
            "assertSessionDirty" => fail("sessions are dirty only after network errors"),
            "assertCollectionExists" | "assertCollectionNotExists" => {
                let (database, collection) = (text("databaseName"), text("collectionName"));
                let names = self
                    .internal
                    .database_operation(&database, "listCollectionNames", &doc! {}, None)
                    .map_err(|error| Stop::Fail(format!("listCollections: {error}")))?;
                let exists = names
                    .as_array()
                    .is_some_and(|names| names.iter().any(|n| n.as_str() == Some(&collection)));
                if exists == (name == "assertCollectionExists") {
                    Ok(())
                } else {
                    fail(format!("{database}.{collection} exists: {exists}"))
                }
            }
            "assertIndexExists" | "assertIndexNotExists" => {
                let (database, collection, index) = (
                    text("databaseName"),
                    text("collectionName"),
                    text("indexName"),
                );
                let indexes = self.internal.collection_operation(
                    Namespace {
                        database: &database,
                        collection: &collection,
                    },
                    "listIndexes",
                    &doc! {},
                    None,
                );
                let exists = indexes
                    .ok()
                    .and_then(|list| list.as_array().cloned())
                    .is_some_and(|list| {
                        list.iter()
                            .filter_map(Bson::as_document)
                            .any(|entry| entry.get_str("name").ok() == Some(index.as_str()))
                    });
                if exists == (name == "assertIndexExists") {
                    Ok(())
                } else {
                    fail(format!(
                        "index {index} on {database}.{collection} exists: {exists}"
                    ))
                }
            }
            "assertSameLsidOnLastTwoCommands" | "assertDifferentLsidOnLastTwoCommands" => {
                let client = self.client(&text("client"))?;
                let events = client.driver.events();
                let [.., first, second] = events.as_slice() else {
                    return fail("fewer than two commands were sent");
                };
                let same = first.command.get("lsid") == second.command.get("lsid");
                if same == (name == "assertSameLsidOnLastTwoCommands") {
                    Ok(())
                } else {
                    fail(format!("the last two commands' lsids are the same: {same}"))
                }
            }
            other => Err(Stop::Skip(format!("test runner operation {other}"))),
        }
    }

    /// `expectEvents` for one client: the commands it sent, as command monitoring reports
    /// them.
    fn check_events(&self, expected: &Document, unchecked: &mut BTreeMap<String, usize>) -> Step {
        let kind = expected.get_str("eventType").unwrap_or("command");
        if kind != "command" {
            *unchecked
                .entry(format!(
                    "expectEvents of {kind} events (a driver's connection pool)"
                ))
                .or_default() += 1;
            return Ok(());
        }
        let client = self.client(expected.get_str("client").unwrap_or_default())?;
        let mut actual: Vec<(&str, Event)> = Vec::new();
        for event in client.driver.events() {
            if client.ignore.contains(&event.name) {
                continue;
            }
            if client.observe.iter().any(|o| o == "commandStartedEvent") {
                actual.push(("commandStartedEvent", event.clone()));
            }
            let ended = if event.succeeded() {
                "commandSucceededEvent"
            } else {
                "commandFailedEvent"
            };
            if client.observe.iter().any(|o| o == ended) {
                actual.push((ended, event));
            }
        }
        let events = expected.get_array("events").cloned().unwrap_or_default();
        let extra_allowed = expected.get_bool("ignoreExtraEvents").unwrap_or(false);
        if actual.len() < events.len() || (!extra_allowed && actual.len() != events.len()) {
            let sent: Vec<String> = actual
                .iter()
                .map(|(kind, event)| format!("{kind} {}", event.name))
                .collect();
            return fail(format!(
                "expected {} events, got {}: {sent:?}",
                events.len(),
                actual.len()
            ));
        }
        for (position, (expected, (kind, event))) in events.iter().zip(&actual).enumerate() {
            let Some((expected_kind, Bson::Document(fields))) =
                expected.as_document().and_then(|e| e.iter().next())
            else {
                return fail("an expected event is not a document");
            };
            if expected_kind != kind {
                return fail(format!(
                    "event {position}: expected {expected_kind}, got {kind} of {}",
                    event.name
                ));
            }
            if let Ok(name) = fields.get_str("commandName")
                && name != event.name
            {
                return fail(format!(
                    "event {position}: expected command {name}, got {}",
                    event.name
                ));
            }
            if let Ok(database) = fields.get_str("databaseName")
                && database != event.database
            {
                return fail(format!(
                    "event {position}: expected database {database}, got {}",
                    event.database
                ));
            }
            let (field, value) = if *kind == "commandStartedEvent" {
                ("command", &event.command)
            } else {
                ("reply", &event.reply)
            };
            if let Some(expected) = fields.get(field)
                && let Some(why) = mismatch(
                    expected,
                    Some(&Bson::Document(value.clone())),
                    true,
                    &|id| self.lookup(id),
                )
            {
                return fail(format!("event {position} ({}): {field}: {why}", event.name));
            }
        }
        Ok(())
    }

    fn check_outcome(&self, expected: &Document) -> Step {
        let (Ok(database), Ok(collection)) = (
            expected.get_str("databaseName"),
            expected.get_str("collectionName"),
        ) else {
            return fail("outcome without databaseName or collectionName");
        };
        let actual = self
            .internal
            .collection_operation(
                Namespace {
                    database,
                    collection,
                },
                "find",
                &doc! { "filter": {}, "sort": { "_id": 1 } },
                None,
            )
            .map_err(|error| Stop::Fail(format!("reading {database}.{collection}: {error}")))?;
        let documents = expected
            .get("documents")
            .cloned()
            .unwrap_or(Bson::Array(Vec::new()));
        match mismatch(&documents, Some(&actual), false, &|id| self.lookup(id)) {
            Some(why) => fail(format!("outcome of {database}.{collection}: {why}")),
            None => Ok(()),
        }
    }
}

/// What an operation's `object` names.
enum Target {
    Collection(Rc<Client>, String, String),
    Database(Rc<Client>, String),
    Client(Rc<Client>),
    Session(Rc<Client>),
}
