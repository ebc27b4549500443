//! `cargo xtask conformance`: MongoDB's CRUD specification tests (legacy v1 format) from
//! `../shared/conformance/crud-v1`, run twice: against the reference model
//! [`spillway_doc::model::MemoryCollection`], and through the command layer
//! (`spillway::command::Commands` over `Database::open_in_memory()`, each operation sent as
//! the command a driver sends, `driver.rs`); then the unified-format files of
//! `../shared/conformance/crud-unified` and `../shared/conformance/transactions-unified`
//! through the command layer (`unified.rs`).
//!
//! Each v1 file holds `data` and `tests`; each test loads `data` into a fresh collection, runs
//! one operation and compares the result and (where given) the collection's final contents.
//! Values compare with MongoDB's equality (`1 == 1.0`, field order matters); write results
//! with the unified format's rules (`matching.rs`). Each run prints one line per failure and
//! per skip (with its reason), then `<target>: N passed, M failed, K skipped`, and for the
//! unified groups the skip reasons counted and the known failures
//! (`xtask/conformance-known-failures.txt`, which `--update-known-failures` rewrites). The
//! runner exists once; what differs between the v1 targets is behind [`Target`]
//! (`targets.rs`), and the mapping of operations to commands exists once (`driver.rs`). The
//! files are read from `../shared`, never copied into the repository.
//!
//! Counts on 2026-11-25 (main at dbcc825): CRUD v1 81/0/0 for the model and for the command
//! layer; unified CRUD 203 passed, 0 failed, 196 skipped, 38 known failures; unified
//! transactions 12 passed, 0 failed, 155 skipped, 91 known failures (all 91 wait for
//! `startTransaction` across requests, which answers 115 CommandNotSupported today).

mod driver;
mod matching;
mod targets;
mod unified;

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use bson::{Bson, Document, doc};
use spillway_doc::compare::values_equal;
use spillway_doc::model::{
    FindOneAndOptions, FindOptions, ReturnDocument, UpdateOptions, UpdateResult,
};

pub(crate) use targets::{CommandTarget, ModelTarget};

use crate::shared::shared_dir;

/// `cargo xtask conformance [--verbose] [--update-known-failures]`.
#[derive(clap::Args, Default)]
pub(crate) struct Options {
    /// Print the passing tests too, not only the failures and skips
    #[arg(long)]
    pub(crate) verbose: bool,
    /// Rewrite xtask/conformance-known-failures.txt with this run's unified-format failures
    #[arg(long)]
    pub(crate) update_known_failures: bool,
}

/// Runs the suite against every target and fails when any test of any target fails.
pub(crate) fn run(options: &Options) -> Result<()> {
    let Options {
        verbose,
        update_known_failures: update_known,
    } = *options;
    let Some(shared) = shared_dir() else {
        bail!(
            "the shared material is missing: expected ../shared beside the repository (or \
             $SPILLWAY_SHARED) with conformance/crud-v1 inside"
        );
    };
    let suite = shared.join("conformance").join("crud-v1");
    println!(
        "\n== conformance: MongoDB CRUD v1 tests in {} (document language, in memory)",
        suite.display()
    );
    let model = run_suite::<ModelTarget>(&suite, verbose)?;
    println!(
        "\n== conformance: the same tests through the command layer (spillway::command::Commands, in memory)"
    );
    let commands = run_suite::<CommandTarget>(&suite, verbose)?;
    let known = unified::KnownFailures::read(&known_failures_path())?;
    let mut reports = Vec::new();
    for (group, target) in [
        ("crud-unified", "command layer (unified CRUD)"),
        (
            "transactions-unified",
            "command layer (unified transactions)",
        ),
    ] {
        let dir = shared.join("conformance").join(group);
        println!(
            "\n== conformance: MongoDB's unified-format tests in {} through the command layer",
            dir.display()
        );
        reports.push(unified::run_suite(
            &dir,
            &|_| true,
            target,
            &known,
            verbose,
        )?);
    }
    println!("\n{}\n{}", model.summary(), commands.summary());
    let mut failed = model.failed + commands.failed;
    let mut stale = Vec::new();
    for report in &reports {
        println!("{}", report.tally.summary());
        for (reason, count) in &report.reasons {
            println!("  skipped {count}: {reason}");
        }
        for (what, count) in &report.unchecked {
            println!("  not checked in {count} test(s): {what}");
        }
        failed += report.tally.failed;
        stale.extend(report.stale.iter().cloned());
    }
    if update_known {
        let failures: Vec<(String, String)> = reports
            .iter()
            .flat_map(|report| report.failures.iter().cloned())
            .collect();
        unified::KnownFailures::write(&known_failures_path(), &failures)?;
        println!(
            "\nwrote {} known failure(s) to {}",
            failures.len(),
            known_failures_path().display()
        );
        if model.failed + commands.failed > 0 {
            bail!("CRUD v1 conformance test(s) failed");
        }
        return Ok(());
    }
    if !stale.is_empty() {
        println!(
            "\nstale entries of {} (remove them):",
            known_failures_path().display()
        );
        for entry in &stale {
            println!("  {entry}");
        }
    }
    if failed > 0 {
        bail!("{failed} conformance test(s) failed");
    }
    if !stale.is_empty() {
        bail!(
            "{} known failure(s) passed or did not run: update {}",
            stale.len(),
            known_failures_path().display()
        );
    }
    Ok(())
}

/// The checked-in list of known failures of the unified suites.
fn known_failures_path() -> PathBuf {
    crate::shared::repo_root()
        .join("xtask")
        .join("conformance-known-failures.txt")
}

/// What the runner needs from the collection under test: one implementation per target, so
/// that loading the tests and comparing results exist once. Operation errors (which a test
/// may expect) are returned as their message; `Err` of [`Target::load`] and
/// [`Target::documents`] is a failure of the harness.
pub(crate) trait Target: Sized {
    /// The name printed in the summary line.
    const NAME: &'static str;

    /// A fresh collection holding `data`.
    fn load(data: &[Document]) -> Result<Self>;

    /// Every document, in the target's natural order.
    fn documents(&self) -> Result<Vec<Document>>;

    /// Runs the operation `name` with the test's `arguments`.
    fn run(&mut self, name: &str, arguments: &Document) -> Result<Produced>;
}

/// An operation's result, or the message of the error it reported.
pub(crate) type Outcome<T> = std::result::Result<T, String>;

/// Which `findOneAnd*` operation a test runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ChangeKind {
    Update,
    Replace,
}

/// Counts of one run.
#[derive(Debug, Default)]
pub(crate) struct Tally {
    pub(crate) target: &'static str,
    pub(crate) passed: usize,
    pub(crate) failed: usize,
    pub(crate) skipped: usize,
    /// Failures listed in `xtask/conformance-known-failures.txt`.
    pub(crate) known_failures: usize,
}

impl Tally {
    fn summary(&self) -> String {
        let known = if self.known_failures > 0 {
            format!(", {} known failures", self.known_failures)
        } else {
            String::new()
        };
        format!(
            "{}: {} passed, {} failed, {} skipped{known}",
            self.target, self.passed, self.failed, self.skipped
        )
    }
}

enum Verdict {
    Pass,
    Fail(String),
}

pub(crate) fn run_suite<T: Target>(suite: &Path, verbose: bool) -> Result<Tally> {
    let mut files = Vec::new();
    for group in ["read", "write"] {
        let dir = suite.join(group);
        for entry in
            std::fs::read_dir(&dir).with_context(|| format!("reading {}", dir.display()))?
        {
            let path = entry?.path();
            if path.extension().is_some_and(|ext| ext == "json") {
                files.push(path);
            }
        }
    }
    files.sort();
    if files.is_empty() {
        bail!("no conformance files found under {}", suite.display());
    }
    let mut tally = Tally {
        target: T::NAME,
        ..Tally::default()
    };
    for file in &files {
        run_file::<T>(file, verbose, &mut tally)?;
    }
    Ok(tally)
}

fn run_file<T: Target>(file: &PathBuf, verbose: bool, tally: &mut Tally) -> Result<()> {
    let text =
        std::fs::read_to_string(file).with_context(|| format!("reading {}", file.display()))?;
    let json: serde_json::Value =
        serde_json::from_str(&text).with_context(|| format!("parsing {}", file.display()))?;
    let Bson::Document(spec) =
        Bson::try_from(json).with_context(|| format!("Extended JSON in {}", file.display()))?
    else {
        bail!("{} is not a JSON object", file.display());
    };
    let name = file
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let data = documents(spec.get("data")).context("data")?;
    let Some(Bson::Array(tests)) = spec.get("tests") else {
        bail!("{name}: no tests array")
    };
    for test in tests {
        let Bson::Document(test) = test else {
            bail!("{name}: a test is not an object")
        };
        let description = test.get_str("description").unwrap_or("(no description)");
        let verdict = run_test::<T>(&data, test);
        match verdict {
            Verdict::Pass => {
                tally.passed += 1;
                if verbose {
                    println!("  pass  {name}: {description}");
                }
            }
            Verdict::Fail(why) => {
                tally.failed += 1;
                println!("  FAIL  {name}: {description}\n        {why}");
            }
        }
    }
    Ok(())
}

fn documents(value: Option<&Bson>) -> Result<Vec<Document>> {
    let Some(Bson::Array(items)) = value else {
        return Ok(Vec::new());
    };
    items
        .iter()
        .map(|item| match item {
            Bson::Document(document) => Ok(document.clone()),
            other => bail!("expected a document, found {other}"),
        })
        .collect()
}

fn run_test<T: Target>(data: &[Document], test: &Document) -> Verdict {
    match try_run_test::<T>(data, test) {
        Ok(verdict) => verdict,
        Err(error) => Verdict::Fail(format!("{error:#}")),
    }
}

/// What an operation produced: a value to compare with `outcome.result`, and whether it
/// reported an error.
pub(crate) struct Produced {
    pub(crate) result: Bson,
    pub(crate) error: Option<String>,
}

fn try_run_test<T: Target>(data: &[Document], test: &Document) -> Result<Verdict> {
    let operation = test.get_document("operation").context("operation")?;
    let name = operation.get_str("name").context("operation.name")?;
    let empty = Document::new();
    let arguments = operation.get_document("arguments").unwrap_or(&empty);
    let outcome = test.get_document("outcome").context("outcome")?;

    let mut collection = T::load(data).context("loading data")?;
    let produced = collection.run(name, arguments)?;

    let expects_error = outcome.get_bool("error").unwrap_or(false);
    match (&produced.error, expects_error) {
        (Some(error), false) => return Ok(Verdict::Fail(format!("unexpected error: {error}"))),
        (None, true) => {
            return Ok(Verdict::Fail(
                "expected an error, the operation succeeded".into(),
            ));
        }
        _ => {}
    }
    if let Some(expected) = outcome.get("result")
        && let Some(difference) = difference(expected, &produced.result)
    {
        return Ok(Verdict::Fail(format!("result: {difference}")));
    }
    if let Ok(expected_collection) = outcome.get_document("collection") {
        let expected = Bson::Array(
            documents(expected_collection.get("data"))?
                .into_iter()
                .map(Bson::Document)
                .collect(),
        );
        let actual = Bson::Array(
            collection
                .documents()?
                .into_iter()
                .map(Bson::Document)
                .collect(),
        );
        if let Some(difference) = difference(&expected, &actual) {
            return Ok(Verdict::Fail(format!("collection: {difference}")));
        }
    }
    Ok(Verdict::Pass)
}

/// The reference model's operations (the command target maps them in `driver.rs`).
fn model_operation(
    collection: &mut ModelTarget,
    name: &str,
    arguments: &Document,
) -> Result<Produced> {
    let filter = arguments
        .get_document("filter")
        .cloned()
        .unwrap_or_default();
    let succeeded = |result: Bson| Produced {
        result,
        error: None,
    };
    let outcome = match name {
        "aggregate" => {
            let pipeline = match arguments.get_array("pipeline") {
                Ok(stages) => stages
                    .iter()
                    .map(|stage| stage.as_document().cloned().context("a pipeline stage"))
                    .collect::<Result<Vec<_>>>()?,
                Err(_) => Vec::new(),
            };
            collection
                .aggregate(&pipeline, arguments.get_document("let").ok())
                .map(|documents| {
                    succeeded(Bson::Array(
                        documents.into_iter().map(Bson::Document).collect(),
                    ))
                })
        }
        "find" => {
            let options = FindOptions {
                sort: arguments.get_document("sort").ok().cloned(),
                skip: integer(arguments, "skip").unsigned_abs(),
                limit: integer(arguments, "limit"),
                projection: arguments.get_document("projection").ok().cloned(),
            };
            collection.find(&filter, &options).map(|found| {
                succeeded(Bson::Array(found.into_iter().map(Bson::Document).collect()))
            })
        }
        "count" | "countDocuments" => collection
            .count_documents(
                &filter,
                integer(arguments, "skip").unsigned_abs(),
                integer(arguments, "limit").unsigned_abs(),
            )
            .map(|count| succeeded(Bson::Int64(count as i64))),
        "estimatedDocumentCount" => Ok(succeeded(Bson::Int64(
            collection.estimated_document_count() as i64,
        ))),
        "distinct" => {
            let field = arguments
                .get_str("fieldName")
                .context("distinct needs fieldName")?;
            collection
                .distinct(field, &filter)
                .map(|values| succeeded(Bson::Array(values)))
        }
        "insertOne" => {
            let document = arguments
                .get_document("document")
                .context("insertOne needs document")?;
            collection
                .insert_one(document.clone())
                .map(|id| succeeded(Bson::Document(doc! { "insertedId": id })))
        }
        "insertMany" => {
            let documents = documents(arguments.get("documents"))?;
            let ordered = ordered(arguments);
            let (inserted, error) = collection.insert_many(documents, ordered);
            let mut ids = Document::new();
            for (position, id) in &inserted {
                ids.insert(position.to_string(), id.clone());
            }
            let tally = BulkTally {
                inserted: inserted.len() as u64,
                ..BulkTally::default()
            };
            let mut result = tally.to_document();
            result.insert("insertedIds", ids);
            Ok(Produced {
                result: Bson::Document(result),
                error,
            })
        }
        "bulkWrite" => Ok(bulk_write(collection, arguments)?),
        "deleteOne" | "deleteMany" => collection
            .delete(&filter, name == "deleteMany")
            .map(|deleted| succeeded(Bson::Document(doc! { "deletedCount": deleted as i64 }))),
        "replaceOne" => {
            let replacement = arguments
                .get_document("replacement")
                .context("replaceOne needs replacement")?;
            collection
                .replace_one(
                    &filter,
                    replacement,
                    arguments.get_bool("upsert").unwrap_or(false),
                )
                .map(|result| succeeded(Bson::Document(update_result(&result))))
        }
        "updateOne" | "updateMany" => {
            let update = arguments
                .get_document("update")
                .context("update needs update")?;
            let options = update_options(arguments)?;
            collection
                .update(&filter, update, name == "updateMany", &options)
                .map(|result| succeeded(Bson::Document(update_result(&result))))
        }
        "findOneAndDelete" => collection
            .find_one_and_delete(&filter, &find_one_and_options(arguments)?)
            .map(|found| succeeded(found.map_or(Bson::Null, Bson::Document))),
        "findOneAndUpdate" | "findOneAndReplace" => {
            let (key, kind) = if name == "findOneAndUpdate" {
                ("update", ChangeKind::Update)
            } else {
                ("replacement", ChangeKind::Replace)
            };
            let change = arguments
                .get_document(key)
                .with_context(|| format!("{name} needs {key}"))?;
            collection
                .find_one_and_modify(&filter, change, kind, &find_one_and_options(arguments)?)
                .map(|found| succeeded(found.map_or(Bson::Null, Bson::Document)))
        }
        other => bail!("unknown operation {other}"),
    };
    Ok(outcome.unwrap_or_else(|error| Produced {
        result: Bson::Null,
        error: Some(error),
    }))
}

fn integer(arguments: &Document, key: &str) -> i64 {
    match arguments.get(key) {
        Some(Bson::Int32(value)) => i64::from(*value),
        Some(Bson::Int64(value)) => *value,
        Some(Bson::Double(value)) => *value as i64,
        _ => 0,
    }
}

fn ordered(arguments: &Document) -> bool {
    arguments
        .get_document("options")
        .ok()
        .and_then(|options| options.get_bool("ordered").ok())
        .unwrap_or(true)
}

fn update_options(arguments: &Document) -> Result<UpdateOptions> {
    Ok(UpdateOptions {
        upsert: arguments.get_bool("upsert").unwrap_or(false),
        array_filters: documents(arguments.get("arrayFilters"))?,
    })
}

fn find_one_and_options(arguments: &Document) -> Result<FindOneAndOptions> {
    Ok(FindOneAndOptions {
        sort: arguments.get_document("sort").ok().cloned(),
        projection: arguments.get_document("projection").ok().cloned(),
        upsert: arguments.get_bool("upsert").unwrap_or(false),
        return_document: match arguments.get_str("returnDocument") {
            Ok("After") => ReturnDocument::After,
            _ => ReturnDocument::Before,
        },
        array_filters: documents(arguments.get("arrayFilters"))?,
    })
}

fn update_result(result: &UpdateResult) -> Document {
    let mut document = doc! {
        "matchedCount": result.matched_count as i64,
        "modifiedCount": result.modified_count as i64,
        "upsertedCount": i64::from(result.upserted_id.is_some()),
    };
    if let Some(id) = &result.upserted_id {
        document.insert("upsertedId", id.clone());
    }
    document
}

/// The counters of a bulk write, named as the drivers name them.
#[derive(Default)]
struct BulkTally {
    inserted: u64,
    matched: u64,
    modified: u64,
    deleted: u64,
    upserted_ids: Document,
}

impl BulkTally {
    fn to_document(&self) -> Document {
        doc! {
            "deletedCount": self.deleted as i64,
            "insertedCount": self.inserted as i64,
            "matchedCount": self.matched as i64,
            "modifiedCount": self.modified as i64,
            "upsertedCount": self.upserted_ids.len() as i64,
            "upsertedIds": self.upserted_ids.clone(),
        }
    }

    fn add_update(&mut self, position: usize, result: &UpdateResult) {
        self.matched += result.matched_count;
        self.modified += result.modified_count;
        if let Some(id) = &result.upserted_id {
            self.upserted_ids.insert(position.to_string(), id.clone());
        }
    }
}

fn bulk_write(collection: &mut ModelTarget, arguments: &Document) -> Result<Produced> {
    let ordered = ordered(arguments);
    let requests = documents(arguments.get("requests"))?;
    let mut tally = BulkTally::default();
    let mut inserted_ids = Document::new();
    let mut errors = String::new();
    for (position, request) in requests.iter().enumerate() {
        let name = request.get_str("name").context("request name")?;
        let empty = Document::new();
        let arguments = request.get_document("arguments").unwrap_or(&empty);
        let filter = arguments
            .get_document("filter")
            .cloned()
            .unwrap_or_default();
        let outcome: Outcome<()> = match name {
            "insertOne" => {
                let document = arguments
                    .get_document("document")
                    .context("insertOne needs document")?;
                collection.insert_one(document.clone()).map(|id| {
                    tally.inserted += 1;
                    inserted_ids.insert(position.to_string(), id);
                })
            }
            "updateOne" | "updateMany" => {
                let update = arguments
                    .get_document("update")
                    .context("update needs update")?;
                collection
                    .update(
                        &filter,
                        update,
                        name == "updateMany",
                        &update_options(arguments)?,
                    )
                    .map(|result| tally.add_update(position, &result))
            }
            "replaceOne" => {
                let replacement = arguments
                    .get_document("replacement")
                    .context("replaceOne needs replacement")?;
                collection
                    .replace_one(
                        &filter,
                        replacement,
                        arguments.get_bool("upsert").unwrap_or(false),
                    )
                    .map(|result| tally.add_update(position, &result))
            }
            "deleteOne" | "deleteMany" => collection
                .delete(&filter, name == "deleteMany")
                .map(|deleted| tally.deleted += deleted),
            other => bail!("unknown bulk write request {other}"),
        };
        if let Err(error) = outcome {
            let _ = writeln!(errors, "write {position}: {error}");
            if ordered {
                break;
            }
        }
    }
    let mut result = tally.to_document();
    result.insert("insertedIds", inserted_ids);
    Ok(Produced {
        result: Bson::Document(result),
        error: (!errors.is_empty()).then_some(errors),
    })
}

/// Where `actual` departs from `expected`, or `None` when it conforms. Documents in the
/// expected result may omit fields the actual one has (the spec compares what it names);
/// everything else compares with MongoDB's equality.
fn difference(expected: &Bson, actual: &Bson) -> Option<String> {
    match expected {
        Bson::Document(fields) if is_result_summary(fields) => {
            matching::mismatch(expected, Some(actual), true, &matching::no_entities)
        }
        _ if values_equal(expected, actual) => None,
        _ => Some(format!("expected {expected}, got {actual}")),
    }
}

/// Write results (`insertedId`, `matchedCount`...) are compared field by field; documents of
/// the collection are compared whole.
fn is_result_summary(document: &Document) -> bool {
    document.keys().any(|key| {
        matches!(
            key.as_str(),
            "insertedId"
                | "insertedIds"
                | "insertedCount"
                | "matchedCount"
                | "modifiedCount"
                | "deletedCount"
                | "upsertedCount"
                | "upsertedId"
                | "upsertedIds"
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The same run as `cargo xtask conformance` for one target, as a plain test: it passes
    /// with every in-scope test passing, and says so plainly when `../shared` is missing.
    fn check_conformance<T: Target>() {
        let Some(shared) = shared_dir() else {
            println!("SKIPPED: ../shared is missing, the conformance suite did not run");
            return;
        };
        let tally = run_suite::<T>(&shared.join("conformance").join("crud-v1"), false).unwrap();
        println!("{}", tally.summary());
        assert_eq!(tally.failed, 0, "{}", tally.summary());
        assert!(tally.passed > 0);
    }

    #[test]
    fn crud_v1_conformance_against_the_model() {
        check_conformance::<ModelTarget>();
    }

    #[test]
    fn crud_v1_conformance_through_the_command_layer() {
        check_conformance::<CommandTarget>();
    }

    /// A sample of the unified files (the whole run, a few minutes in a debug build, is
    /// `cargo xtask conformance`, which `cargo xtask ci` runs).
    #[test]
    fn unified_conformance_through_the_command_layer() {
        let Some(shared) = shared_dir() else {
            println!("SKIPPED: ../shared is missing, the unified suites did not run");
            return;
        };
        let known = unified::KnownFailures::read(&known_failures_path()).unwrap();
        let sample = |name: &str| {
            [
                "aggregate",
                "bulkWrite-",
                "find",
                "insert",
                "commit",
                "abort",
                "errors",
            ]
            .iter()
            .any(|prefix| name.starts_with(prefix))
        };
        for group in ["crud-unified", "transactions-unified"] {
            let report = unified::run_suite(
                &shared.join("conformance").join(group),
                &sample,
                "command layer",
                &known,
                false,
            )
            .unwrap();
            println!("{group}: {} {:?}", report.tally.summary(), report.reasons);
            assert_eq!(report.tally.failed, 0, "{}", report.tally.summary());
            assert!(report.stale.is_empty(), "{:?}", report.stale);
            assert!(report.tally.passed > 0, "{}", report.tally.summary());
        }
    }
}
