//! `spillway import DB COLL FILE`: documents from JSON, CSV or TSV, with mongoimport's flags.
//!
//! JSON input may be Extended JSON, canonical (`{"$numberLong": "5"}`) or relaxed
//! (`{"$date": "2024-01-01T00:00:00Z"}`): `spillway_doc`'s strict-JSON reader decodes both.
//! A JSON file is a stream of documents (one per line, as mongoexport writes them, or
//! spread over several lines as `--pretty` writes them), streamed; or, with `--jsonArray` or
//! when it starts with `[`, one array, read whole. CSV and TSV are read whole, so that an
//! `auto()` column gets one type over every row (see `columns`).
//!
//! `--mode` says what each document does: `insert` (a duplicate `_id` is rejected), `upsert`
//! (replaces the document with the same `--upsertFields`, default `_id`, or inserts),
//! `merge` (sets the document's fields on that document, or inserts) or `delete` (deletes
//! it). Two ways to treat bad input:
//! - by default every valid document is applied and each rejected one is reported with its
//!   line and the reason (documents are applied in batches, one transaction each; a batch
//!   with a bad document is run again one document at a time, so one duplicate `_id` does
//!   not cost its neighbours); the first ten rejections of each kind are listed, then a
//!   count;
//! - with `--stop-on-error`, the file is all or nothing: every document is parsed first and
//!   then applied in one transaction (with `--drop`'s drop), so any problem leaves the
//!   database unchanged.
//!
//! This module must never write to the database except through the facade's operations.

use std::fs::File;
use std::io::{BufRead, BufReader, IsTerminal, Read};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

use anyhow::{Context, Result, bail};
use indicatif::{ProgressBar, ProgressStyle};
use spillway::bson::{Bson, Document};
use spillway::{Collection, Database, Durability, Transaction};
use spillway_doc::DocError;
use spillway_doc::shell::{Dialect, Parser, TokenKind, evaluate, parse_extjson};

use crate::columns::{
    ColumnType, ParseGrace, RowOutcome, RowReader, field_file_names, parse_columns,
    split_field_list,
};
use crate::csv::{CsvError, CsvRecords, CsvRow, tsv_rows};
use crate::database::{Access, open_database};
use crate::excerpt::pointer;

/// The formats `import` reads (`--format`, Spillway's older spelling of `--type`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ImportFormat {
    /// One JSON document per line (`.ndjson`, `.jsonl`); blank lines are skipped.
    Ndjson,
    /// JSON (`.json`): a stream of documents, or an array of them.
    Json,
    /// Comma-separated values (`.csv`).
    Csv,
    /// Tab-separated values (`.tsv`).
    Tsv,
}

/// mongoimport's `--type`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ImportType {
    /// JSON: a stream of documents (one per line), or an array with `--jsonArray`.
    Json,
    /// Comma-separated values.
    Csv,
    /// Tab-separated values.
    Tsv,
}

/// mongoimport's `--mode`: what each imported document does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ImportMode {
    /// Insert; a document whose `_id` (or unique key) exists is rejected.
    Insert,
    /// Replace the document with the same `--upsertFields` (default `_id`), or insert.
    Upsert,
    /// Set the document's fields on the document with the same `--upsertFields`, or insert.
    Merge,
    /// Delete the document with the same `--upsertFields`.
    Delete,
}

/// How the file is read, once the flags and the extension are weighed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Reading {
    /// A stream of JSON documents.
    JsonStream,
    /// One JSON array.
    JsonArray,
    /// An array if the file starts with `[`, else a stream (`.json` without `--jsonArray`).
    JsonDetect,
    Csv,
    Tsv,
}

impl Reading {
    fn name(self) -> &'static str {
        match self {
            Reading::JsonStream | Reading::JsonDetect => "json",
            Reading::JsonArray => "json array",
            Reading::Csv => "csv",
            Reading::Tsv => "tsv",
        }
    }

    fn is_delimited(self) -> bool {
        matches!(self, Reading::Csv | Reading::Tsv)
    }
}

/// Arguments of `spillway import`, with mongoimport's spellings (and Spillway's older ones).
#[derive(Debug, clap::Args)]
#[command(
    override_usage = "spillway import [OPTIONS] [DB] [COLL] [FILE]\n       spillway import --db DB --collection COLL --file FILE [OPTIONS]"
)]
pub struct ImportArgs {
    /// [DB] [COLL] [FILE]: the database directory (created if missing), the collection
    /// (created if missing; default: the file's name without its extension) and the file,
    /// in that order, each unless given by --db, --collection or --file.
    #[arg(num_args = 0..=3, value_name = "PATH")]
    paths: Vec<String>,
    /// The database directory (mongoimport's --db names a database; here it is the
    /// directory that holds one).
    #[arg(short = 'd', long = "db", value_name = "DIR")]
    db: Option<PathBuf>,
    /// The collection (default: the file's name without its extension).
    #[arg(short = 'c', long = "collection", value_name = "NAME")]
    collection: Option<String>,
    /// The file to read.
    #[arg(long, value_name = "FILE")]
    file: Option<PathBuf>,
    /// The file's type (default: from its extension: .json/.ndjson/.jsonl, .csv, .tsv).
    #[arg(long = "type", value_enum, value_name = "TYPE")]
    input_type: Option<ImportType>,
    /// The file's format, Spillway's older spelling of --type (ndjson: one document per
    /// line, never an array).
    #[arg(long, value_enum, conflicts_with = "input_type")]
    format: Option<ImportFormat>,
    /// JSON: the file is one array of documents.
    #[arg(long = "jsonArray", alias = "json-array")]
    json_array: bool,
    /// CSV/TSV: the first line names the fields (the default without --fields or
    /// --fieldFile).
    #[arg(long = "headerline", alias = "header-line", conflicts_with_all = ["fields", "field_file"])]
    headerline: bool,
    /// CSV/TSV: the field names, comma-separated (`name,address.city`); the first line is
    /// then data.
    #[arg(short = 'f', long, value_name = "LIST", conflicts_with = "field_file")]
    fields: Option<String>,
    /// CSV/TSV: a file with one field name per line; the first line is then data.
    #[arg(long = "fieldFile", alias = "field-file", value_name = "FILE")]
    field_file: Option<PathBuf>,
    /// CSV/TSV: every field name carries its type, as `name.string()`, `n.int32()`,
    /// `n.int64()`, `x.double()`, `x.decimal()`, `b.boolean()`, `d.date(2006-01-02)`
    /// (also `date_go`, `date_ms`, `date_oracle`), `bin.binary(base64)` or `a.auto()`.
    #[arg(long = "columnsHaveTypes", alias = "columns-have-types")]
    columns_have_types: bool,
    /// CSV/TSV: every column `auto()`: booleans and numbers where every value of the column
    /// is one (not numbers with leading zeros, such as zip codes); default: strings.
    #[arg(long, conflicts_with = "columns_have_types")]
    types: bool,
    /// CSV/TSV with --columnsHaveTypes: what a value that does not fit its type does
    /// (default: stop, which rejects the row and ends the import there).
    #[arg(
        long = "parseGrace",
        alias = "parse-grace",
        value_enum,
        value_name = "GRACE"
    )]
    parse_grace: Option<ParseGrace>,
    /// CSV/TSV: leave empty values out of the documents.
    #[arg(long = "ignoreBlanks", alias = "ignore-blanks")]
    ignore_blanks: bool,
    /// What each document does (default: insert, or upsert with --upsertFields).
    #[arg(long, value_enum)]
    mode: Option<ImportMode>,
    /// The fields that find a document's counterpart in upsert, merge and delete modes,
    /// comma-separated (default: _id).
    #[arg(long = "upsertFields", alias = "upsert-fields", value_name = "LIST")]
    upsert_fields: Option<String>,
    /// Drop the collection before importing.
    #[arg(long)]
    drop: bool,
    /// Import the whole file or nothing: the first bad document leaves the database
    /// unchanged.
    #[arg(long = "stop-on-error", alias = "stopOnError")]
    stop_on_error: bool,
    /// Documents per transaction.
    #[arg(long = "batch-size", alias = "batchSize", default_value_t = 1000, value_parser = clap::value_parser!(u32).range(1..))]
    batch_size: u32,
}

/// Why a record was rejected: a kind, by which repeated rejections are summarised, and the
/// message.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Rejection {
    kind: String,
    reason: String,
}

impl Rejection {
    fn new(kind: &str, reason: impl Into<String>) -> Rejection {
        Rejection {
            kind: kind.to_owned(),
            reason: reason.into(),
        }
    }

    fn from_error(error: &spillway::Error) -> Rejection {
        Rejection {
            kind: error
                .code_name()
                .map_or_else(|| "database error".to_owned(), std::borrow::Cow::into_owned),
            reason: error.to_string(),
        }
    }
}

/// A document read from the input, or why the input at that line is not one.
struct Record {
    line: usize,
    /// Bytes of input consumed once this record is read (for the progress bar).
    consumed: u64,
    document: Result<Document, Rejection>,
    /// `--parseGrace stop`: nothing after this record is imported.
    stop: bool,
}

impl Record {
    fn rejected(line: usize, consumed: u64, rejection: Rejection) -> Record {
        Record {
            line,
            consumed,
            document: Err(rejection),
            stop: false,
        }
    }
}

/// What the import did.
#[derive(Debug, Default)]
struct Tally {
    inserted: u64,
    replaced: u64,
    merged: u64,
    unchanged: u64,
    deleted: u64,
    not_found: u64,
    rejected: Vec<(usize, Rejection)>,
    stopped_at: Option<usize>,
}

impl Tally {
    fn applied(&self) -> u64 {
        self.inserted + self.replaced + self.merged + self.unchanged + self.deleted
    }

    fn count(&mut self, outcome: Outcome) {
        match outcome {
            Outcome::Inserted(n) => self.inserted += n,
            Outcome::Replaced => self.replaced += 1,
            Outcome::Merged { changed: true } => self.merged += 1,
            Outcome::Merged { changed: false } => self.unchanged += 1,
            Outcome::Deleted => self.deleted += 1,
            Outcome::NotFound => self.not_found += 1,
        }
    }
}

/// What one document (or, for inserts, one batch) did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Outcome {
    Inserted(u64),
    Replaced,
    Merged { changed: bool },
    Deleted,
    NotFound,
}

/// The import's settled plan: where, what, how.
struct Plan {
    db: PathBuf,
    collection: String,
    file: PathBuf,
    reading: Reading,
    mode: ImportMode,
    upsert_fields: Vec<String>,
}

/// Runs `spillway import`.
pub fn run(args: &ImportArgs) -> Result<ExitCode> {
    let plan = plan(args)?;
    let file =
        File::open(&plan.file).with_context(|| format!("cannot open {}", plan.file.display()))?;
    let total_bytes = file.metadata().map_or(0, |metadata| metadata.len());
    let reading = match plan.reading {
        Reading::JsonDetect => {
            if starts_with_bracket(&plan.file)? {
                Reading::JsonArray
            } else {
                Reading::JsonStream
            }
        }
        other => other,
    };
    // Everything about the columns is checked before the database is touched.
    let records: Box<dyn Iterator<Item = Result<Record>>> = match reading {
        Reading::JsonStream | Reading::JsonDetect => {
            Box::new(json_stream_records(BufReader::new(file)))
        }
        Reading::JsonArray => Box::new(
            json_array_records(&read_text(file, &plan.file)?)?
                .into_iter()
                .map(Ok),
        ),
        Reading::Csv | Reading::Tsv => Box::new(
            delimited_records(args, reading, &read_text(file, &plan.file)?)?
                .into_iter()
                .map(Ok),
        ),
    };
    let database = open_database(Some(&plan.db), Access::ReadWrite(Durability::OsBuffered))?;
    let collection = database.collection::<Document>(&plan.collection);
    let progress = progress_bar(total_bytes);
    let started = Instant::now();
    let tally = if args.stop_on_error {
        import_all_or_nothing(&database, &collection, &plan, args.drop, records, &progress)?
    } else {
        if args.drop {
            collection.drop().run()?;
        }
        import_valid(
            &database,
            &collection,
            &plan,
            records,
            &progress,
            args.batch_size as usize,
        )?
    };
    database.sync()?;
    progress.finish_and_clear();
    let seconds = started.elapsed().as_secs_f64();
    print_summary(args, &plan, reading, total_bytes, seconds, &tally);
    Ok(if tally.rejected.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

/// Settles the database, collection, file, format and mode from the arguments, refusing
/// combinations that mean nothing.
fn plan(args: &ImportArgs) -> Result<Plan> {
    let (db, collection, file) = targets(args)?;
    let from_extension = || -> Option<Reading> {
        let extension = file.extension()?.to_str()?.to_ascii_lowercase();
        match extension.as_str() {
            "ndjson" | "jsonl" => Some(Reading::JsonStream),
            "json" => Some(Reading::JsonDetect),
            "csv" => Some(Reading::Csv),
            "tsv" => Some(Reading::Tsv),
            _ => None,
        }
    };
    let mut reading = match (args.input_type, args.format) {
        (Some(ImportType::Json), _) | (_, Some(ImportFormat::Json)) => Reading::JsonDetect,
        (_, Some(ImportFormat::Ndjson)) => Reading::JsonStream,
        (Some(ImportType::Csv), _) | (_, Some(ImportFormat::Csv)) => Reading::Csv,
        (Some(ImportType::Tsv), _) | (_, Some(ImportFormat::Tsv)) => Reading::Tsv,
        (None, None) if args.json_array => Reading::JsonArray,
        (None, None) => from_extension().with_context(|| {
            format!(
                "cannot tell the type of {} from its extension: pass --type json, csv or tsv",
                file.display()
            )
        })?,
    };
    if args.json_array {
        if reading.is_delimited() {
            bail!("--jsonArray applies to JSON input, not {}", reading.name());
        }
        if args.format == Some(ImportFormat::Ndjson) {
            bail!(
                "--jsonArray and --format ndjson contradict each other: an array is not one document per line"
            );
        }
        reading = Reading::JsonArray;
    }
    if !reading.is_delimited() {
        let delimited_only = [
            (args.headerline, "--headerline"),
            (args.fields.is_some(), "--fields"),
            (args.field_file.is_some(), "--fieldFile"),
            (args.columns_have_types, "--columnsHaveTypes"),
            (args.types, "--types"),
            (args.parse_grace.is_some(), "--parseGrace"),
            (args.ignore_blanks, "--ignoreBlanks"),
        ];
        if let Some((_, flag)) = delimited_only.iter().find(|(given, _)| *given) {
            bail!("{flag} applies to CSV and TSV input, not JSON");
        }
    }
    if args.parse_grace.is_some() && !args.columns_have_types {
        bail!("--parseGrace applies to typed columns: give --columnsHaveTypes too");
    }
    let mode = match (args.mode, &args.upsert_fields) {
        (Some(ImportMode::Insert), Some(_)) => {
            bail!(
                "--upsertFields finds documents to replace, merge or delete: it means nothing with --mode insert"
            )
        }
        (Some(mode), _) => mode,
        (None, Some(_)) => ImportMode::Upsert,
        (None, None) => ImportMode::Insert,
    };
    let upsert_fields = match &args.upsert_fields {
        Some(list) => {
            let fields: Vec<String> = list.split(',').map(|f| f.trim().to_owned()).collect();
            if let Some(bad) = fields.iter().find(|f| {
                f.is_empty()
                    || f.split('.')
                        .any(|part| part.is_empty() || part.starts_with('$'))
            }) {
                bail!("--upsertFields {list:?}: {bad:?} is not a field path");
            }
            fields
        }
        None => vec!["_id".to_owned()],
    };
    Ok(Plan {
        db,
        collection,
        file,
        reading,
        mode,
        upsert_fields,
    })
}

/// The database directory, collection and file, from positional arguments and flags.
fn targets(args: &ImportArgs) -> Result<(PathBuf, String, PathBuf)> {
    let mut db = args.db.clone();
    let mut collection = args.collection.clone();
    let mut file = args.file.clone();
    let free =
        usize::from(db.is_none()) + usize::from(collection.is_none()) + usize::from(file.is_none());
    let positional = &args.paths;
    if positional.len() > free {
        bail!(
            "too many arguments: {} given, but --db, --collection and --file leave room for {free} of DB, COLL and FILE",
            positional.len()
        );
    }
    // The file is the last argument; the ones before it are the database directory, then
    // the collection (which defaults to the file's name).
    let mut values = positional.iter();
    if file.is_none() {
        file = values.next_back().map(PathBuf::from);
    }
    if db.is_none() {
        db = values.next().map(PathBuf::from);
    }
    if collection.is_none() {
        collection = values.next().cloned();
    }
    let (Some(db), Some(file)) = (db, file) else {
        bail!("name the database directory and the file: DB [COLL] FILE, or --db DIR --file FILE");
    };
    let collection = match collection {
        Some(name) => name,
        None => file
            .file_stem()
            .and_then(|stem| stem.to_str())
            .filter(|stem| !stem.is_empty())
            .map(str::to_owned)
            .with_context(|| {
                format!(
                    "no collection named, and {} has no name to take one from: give --collection",
                    file.display()
                )
            })?,
    };
    Ok((db, collection, file))
}

/// Whether the file's first character after any byte order mark and white space is `[`.
fn starts_with_bracket(path: &Path) -> Result<bool> {
    let file = File::open(path).with_context(|| format!("cannot open {}", path.display()))?;
    for byte in BufReader::new(file).bytes() {
        let byte = byte.with_context(|| format!("cannot read {}", path.display()))?;
        match byte {
            b' ' | b'\t' | b'\r' | b'\n' | 0xEF | 0xBB | 0xBF => {}
            other => return Ok(other == b'['),
        }
    }
    Ok(false)
}

fn read_text(mut file: File, path: &Path) -> Result<String> {
    let mut text = String::new();
    file.read_to_string(&mut text)
        .with_context(|| format!("cannot read {} as UTF-8 text", path.display()))?;
    Ok(text)
}

fn progress_bar(total_bytes: u64) -> ProgressBar {
    if !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    ProgressBar::new(total_bytes).with_style(
        ProgressStyle::with_template("{bar:40} {bytes}/{total_bytes} {bytes_per_sec} eta {eta}")
            .expect("the template is valid"),
    )
}

/// Rejections listed one by one per kind; the rest of a kind are counted.
const REJECTIONS_LISTED_PER_KIND: usize = 10;

fn print_summary(
    args: &ImportArgs,
    plan: &Plan,
    reading: Reading,
    bytes: u64,
    seconds: f64,
    tally: &Tally,
) {
    let source = format!(
        "{} ({}, {bytes} bytes)",
        plan.file.display(),
        reading.name()
    );
    if args.stop_on_error && !tally.rejected.is_empty() {
        crate::outln!(
            "imported nothing into '{}' from {}: --stop-on-error and the file has a bad document, so the database is unchanged",
            plan.collection,
            source
        );
    } else {
        let details = match plan.mode {
            ImportMode::Insert => String::new(),
            ImportMode::Upsert => {
                format!(": {} inserted, {} replaced", tally.inserted, tally.replaced)
            }
            ImportMode::Merge => format!(
                ": {} inserted, {} merged, {} already as in the file",
                tally.inserted, tally.merged, tally.unchanged
            ),
            ImportMode::Delete => String::new(),
        };
        if plan.mode == ImportMode::Delete {
            crate::outln!(
                "deleted {} document(s) from '{}' named in {source} in {seconds:.2} s; {} matched no document",
                tally.deleted,
                plan.collection,
                tally.not_found
            );
        } else {
            crate::outln!(
                "imported {} document(s) into '{}' from {source} in {seconds:.2} s{details}",
                tally.applied(),
                plan.collection
            );
        }
    }
    if !tally.rejected.is_empty() {
        crate::outln!("rejected {} line(s):", tally.rejected.len());
        for line in rejection_lines(&tally.rejected) {
            crate::outln!("{line}");
        }
    }
    if let Some(line) = tally.stopped_at {
        crate::outln!("stopped at line {line} (--parseGrace stop): nothing after it was imported");
    }
}

/// The rejections as printed: the first ten of each kind, in line order, then one line per
/// kind that had more, with their count.
fn rejection_lines(rejected: &[(usize, Rejection)]) -> Vec<String> {
    let mut shown_per_kind: Vec<(&str, usize)> = Vec::new();
    let mut lines = Vec::new();
    for (line, rejection) in rejected {
        let position = shown_per_kind
            .iter()
            .position(|(kind, _)| *kind == rejection.kind)
            .unwrap_or_else(|| {
                shown_per_kind.push((&rejection.kind, 0));
                shown_per_kind.len() - 1
            });
        let shown = &mut shown_per_kind[position].1;
        *shown += 1;
        if *shown <= REJECTIONS_LISTED_PER_KIND {
            lines.push(format!("  line {line}: {}", rejection.reason));
        }
    }
    for (kind, count) in shown_per_kind {
        if count > REJECTIONS_LISTED_PER_KIND {
            lines.push(format!(
                "  ... and {} more {kind} rejection(s) not listed",
                count - REJECTIONS_LISTED_PER_KIND
            ));
        }
    }
    lines
}

/// In delete mode, a document needs one of the `--upsertFields` to say which document to
/// delete; without one it is rejected before anything is applied.
fn check_key(plan: &Plan, record: Record) -> Record {
    match &record.document {
        Ok(document)
            if plan.mode == ImportMode::Delete
                && counterpart_filter(&plan.upsert_fields, document).is_none() =>
        {
            Record {
                document: Err(Rejection::new(
                    "no key",
                    format!(
                        "the document has none of the --upsertFields ({}) to find the document to delete",
                        plan.upsert_fields.join(", ")
                    ),
                )),
                ..record
            }
        }
        _ => record,
    }
}

/// Applies every valid document; rejects the others with their line.
fn import_valid(
    database: &Database,
    collection: &Collection<Document>,
    plan: &Plan,
    records: impl Iterator<Item = Result<Record>>,
    progress: &ProgressBar,
    batch_size: usize,
) -> Result<Tally> {
    let mut tally = Tally::default();
    let mut batch: Vec<(usize, Document)> = Vec::with_capacity(batch_size);
    for record in records {
        let record = check_key(plan, record?);
        let stop = record.stop;
        match record.document {
            Ok(document) => batch.push((record.line, document)),
            Err(rejection) => tally.rejected.push((record.line, rejection)),
        }
        if batch.len() == batch_size || stop {
            apply_batch(database, collection, plan, &mut batch, &mut tally)?;
        }
        progress.set_position(record.consumed);
        if stop {
            tally.stopped_at = Some(record.line);
            break;
        }
    }
    apply_batch(database, collection, plan, &mut batch, &mut tally)?;
    tally.rejected.sort_by_key(|(line, _)| *line);
    Ok(tally)
}

fn apply_batch(
    database: &Database,
    collection: &Collection<Document>,
    plan: &Plan,
    batch: &mut Vec<(usize, Document)>,
    tally: &mut Tally,
) -> Result<()> {
    if batch.is_empty() {
        return Ok(());
    }
    let mut failed_at = None;
    let atomic = database
        .transaction(|transaction| apply_all(collection, plan, batch, transaction, &mut failed_at));
    match atomic {
        Ok(outcomes) => outcomes
            .into_iter()
            .for_each(|outcome| tally.count(outcome)),
        Err(error) if failed_at.is_some() && is_document_error(&error) => {
            // The batch wrote nothing: apply its documents one by one to find every bad one.
            for (line, document) in batch.iter() {
                match apply_one(collection, plan, document, None) {
                    Ok(outcome) => tally.count(outcome),
                    Err(error) if is_document_error(&error) => {
                        tally.rejected.push((*line, Rejection::from_error(&error)));
                    }
                    Err(error) => return Err(error.into()),
                }
            }
        }
        Err(error) => return Err(error.into()),
    }
    batch.clear();
    Ok(())
}

/// Applies `batch` inside `transaction`; on failure, `failed_at` is the failing document's
/// position.
fn apply_all(
    collection: &Collection<Document>,
    plan: &Plan,
    batch: &[(usize, Document)],
    transaction: &mut Transaction,
    failed_at: &mut Option<usize>,
) -> spillway::Result<Vec<Outcome>> {
    if plan.mode == ImportMode::Insert {
        let documents = batch.iter().map(|(_, document)| document);
        return match collection.insert_many(documents).session(transaction).run() {
            Ok(result) => Ok(vec![Outcome::Inserted(result.inserted_ids.len() as u64)]),
            Err(error) => {
                *failed_at = error.document_index();
                Err(error)
            }
        };
    }
    let mut outcomes = Vec::with_capacity(batch.len());
    for (index, (_, document)) in batch.iter().enumerate() {
        match apply_one(collection, plan, document, Some(transaction)) {
            Ok(outcome) => outcomes.push(outcome),
            Err(error) => {
                *failed_at = Some(index);
                return Err(error);
            }
        }
    }
    Ok(outcomes)
}

/// The filter that finds `document`'s counterpart: each `--upsertFields` path with the
/// document's value there (`null` where it has none, which matches a missing field, as in
/// mongoimport); `None` when the document has none of them.
fn counterpart_filter(fields: &[String], document: &Document) -> Option<Document> {
    let mut filter = Document::new();
    let mut any = false;
    for path in fields {
        let value = lookup_path(document, path);
        any |= value.is_some();
        filter.insert(path.clone(), value.cloned().unwrap_or(Bson::Null));
    }
    any.then_some(filter)
}

fn lookup_path<'d>(document: &'d Document, path: &str) -> Option<&'d Bson> {
    let mut parts = path.split('.');
    let mut value = document.get(parts.next()?)?;
    for part in parts {
        value = match value {
            Bson::Document(nested) => nested.get(part)?,
            _ => return None,
        };
    }
    Some(value)
}

/// One document under the plan's mode (inserts one document; the batch path inserts many).
fn apply_one(
    collection: &Collection<Document>,
    plan: &Plan,
    document: &Document,
    transaction: Option<&mut Transaction>,
) -> spillway::Result<Outcome> {
    let filter = counterpart_filter(&plan.upsert_fields, document);
    match (plan.mode, filter) {
        (ImportMode::Insert, _) | (ImportMode::Upsert | ImportMode::Merge, None) => {
            let action = collection.insert_one(document);
            match transaction {
                Some(transaction) => action.session(transaction).run(),
                None => action.run(),
            }
            .map(|_| Outcome::Inserted(1))
        }
        (ImportMode::Upsert, Some(filter)) => {
            let action = collection
                .replace_one(filter, document.clone())
                .upsert(true);
            let result = match transaction {
                Some(transaction) => action.session(transaction).run(),
                None => action.run(),
            }?;
            Ok(if result.upserted_id.is_some() {
                Outcome::Inserted(1)
            } else {
                Outcome::Replaced
            })
        }
        (ImportMode::Merge, Some(filter)) => {
            // `_id` is the filter's when it is an upsert field; setting it again would be
            // the immutable-field error for no reason.
            let mut fields = document.clone();
            if filter.contains_key("_id") {
                fields.remove("_id");
            }
            let update = if fields.is_empty() {
                spillway::doc! { "$setOnInsert": filter.clone() }
            } else {
                spillway::doc! { "$set": fields }
            };
            let action = collection.update_one(filter, update).upsert(true);
            let result = match transaction {
                Some(transaction) => action.session(transaction).run(),
                None => action.run(),
            }?;
            Ok(if result.upserted_id.is_some() {
                Outcome::Inserted(1)
            } else {
                Outcome::Merged {
                    changed: result.modified_count > 0,
                }
            })
        }
        (ImportMode::Delete, filter) => {
            let filter = filter.expect("check_key rejects a document without a key to delete by");
            let action = collection.delete_one(filter);
            let result = match transaction {
                Some(transaction) => action.session(transaction).run(),
                None => action.run(),
            }?;
            Ok(if result.deleted_count > 0 {
                Outcome::Deleted
            } else {
                Outcome::NotFound
            })
        }
    }
}

/// Errors that concern one document (the import goes on), as opposed to the database
/// failing (the import stops).
fn is_document_error(error: &spillway::Error) -> bool {
    use spillway::ErrorKind;
    matches!(
        error.kind(),
        ErrorKind::DuplicateKey { .. }
            | ErrorKind::InvalidDocument(_)
            | ErrorKind::InvalidUpdate(_)
            | ErrorKind::InvalidArgument(_)
            | ErrorKind::DocumentTooLarge { .. }
            | ErrorKind::DocumentValidationFailure { .. }
            | ErrorKind::ParallelArrays { .. }
            | ErrorKind::Serialization { .. }
    )
}

/// Parses everything, then applies everything (after `--drop`'s drop) in one transaction.
fn import_all_or_nothing(
    database: &Database,
    collection: &Collection<Document>,
    plan: &Plan,
    drop_first: bool,
    records: impl Iterator<Item = Result<Record>>,
    progress: &ProgressBar,
) -> Result<Tally> {
    let mut tally = Tally::default();
    let mut batch = Vec::new();
    for record in records {
        let record = check_key(plan, record?);
        match record.document {
            Ok(document) => batch.push((record.line, document)),
            Err(rejection) => {
                tally.rejected.push((record.line, rejection));
                return Ok(tally);
            }
        }
        progress.set_position(record.consumed);
    }
    let mut failed_at = None;
    let applied = database.transaction(|transaction| {
        if drop_first {
            collection.drop().session(transaction).run()?;
        }
        apply_all(collection, plan, &batch, transaction, &mut failed_at)
    });
    match applied {
        Ok(outcomes) => outcomes
            .into_iter()
            .for_each(|outcome| tally.count(outcome)),
        Err(error) => match failed_at {
            Some(index) if is_document_error(&error) => tally
                .rejected
                .push((batch[index].0, Rejection::from_error(&error))),
            _ => return Err(error.into()),
        },
    }
    Ok(tally)
}

/// How a `spillway_doc` parse error reads in a rejection: its column (the line is the
/// record's) and message.
fn describe_line_error(error: &DocError) -> Rejection {
    match error {
        DocError::Syntax {
            column, message, ..
        } => Rejection::new("syntax error", format!("column {column}: {message}")),
        other => Rejection::new("invalid value", other.to_string()),
    }
}

fn expect_document(value: Bson) -> Result<Document, Rejection> {
    match value {
        Bson::Document(document) => Ok(document),
        other => Err(Rejection::new(
            "not a document",
            format!(
                "expected a JSON object (a document), found {}",
                spillway_doc::path::describe(&other)
            ),
        )),
    }
}

/// The longest text one streamed document may take; past it the document is rejected
/// rather than read on (a missing closing brace must not swallow the rest of a huge file).
const MAX_DOCUMENT_TEXT: usize = 64 * 1024 * 1024;

/// Brackets still open at the end of the text read so far, outside strings.
#[derive(Debug, Default)]
struct Nesting {
    depth: i64,
    in_string: bool,
    escaped: bool,
}

impl Nesting {
    fn scan(&mut self, text: &str) {
        for c in text.chars() {
            if self.in_string {
                match c {
                    _ if self.escaped => self.escaped = false,
                    '\\' => self.escaped = true,
                    '"' => self.in_string = false,
                    _ => {}
                }
                continue;
            }
            match c {
                '"' => self.in_string = true,
                '{' | '[' => self.depth += 1,
                '}' | ']' => self.depth -= 1,
                _ => {}
            }
        }
    }

    fn is_open(&self) -> bool {
        self.depth > 0 || self.in_string
    }
}

/// A stream of JSON documents: one per line (blank lines skipped), or spread over lines as
/// `--pretty` writes them (a line ending with a bracket open continues the document; a line
/// starting with `{` in its first column starts a new one).
fn json_stream_records(mut reader: impl BufRead) -> impl Iterator<Item = Result<Record>> {
    let mut line_number = 0;
    let mut consumed = 0_u64;
    let mut bytes = Vec::new();
    // The document being read: its first line and its text so far.
    let mut pending: Option<(usize, String, Nesting)> = None;
    // A line read but not yet used (it started a new document while one was open).
    let mut held: Option<String> = None;
    std::iter::from_fn(move || {
        loop {
            let line = if let Some(line) = held.take() {
                line
            } else {
                bytes.clear();
                // Bytes, not a `String`: a line that is not UTF-8 is one bad record, not the
                // end of the file.
                let read = match reader.read_until(b'\n', &mut bytes) {
                    Ok(0) => {
                        let (first_line, text, _) = pending.take()?;
                        return Some(Ok(parse_streamed(first_line, &text, consumed)));
                    }
                    Ok(read) => read,
                    Err(error) => {
                        return Some(Err(anyhow::Error::new(error)
                            .context(format!("cannot read line {}", line_number + 1))));
                    }
                };
                line_number += 1;
                consumed += read as u64;
                match String::from_utf8(std::mem::take(&mut bytes)) {
                    Ok(line) => line,
                    Err(error) => {
                        let byte = error.utf8_error().valid_up_to() + 1;
                        let first_line = pending.take().map_or(line_number, |(first, ..)| first);
                        return Some(Ok(Record::rejected(
                            first_line,
                            consumed,
                            Rejection::new(
                                "not valid UTF-8",
                                if first_line == line_number {
                                    format!("not valid UTF-8 at byte {byte}")
                                } else {
                                    format!("line {line_number}: not valid UTF-8 at byte {byte}")
                                },
                            ),
                        )));
                    }
                }
            };
            let line = if line_number == 1 {
                line.trim_start_matches('\u{feff}').to_owned()
            } else {
                line
            };
            match &mut pending {
                None => {
                    if line.trim().is_empty() {
                        continue;
                    }
                    let mut nesting = Nesting::default();
                    nesting.scan(&line);
                    if nesting.is_open() {
                        pending = Some((line_number, line, nesting));
                        continue;
                    }
                    return Some(Ok(parse_streamed(line_number, &line, consumed)));
                }
                Some((first_line, text, nesting)) => {
                    if line.starts_with('{') {
                        // A new document starts while this one is open: this one is
                        // broken, and parsing it says where.
                        let record = parse_streamed(*first_line, text, consumed);
                        pending = None;
                        held = Some(line);
                        return Some(Ok(record));
                    }
                    if text.len() + line.len() > MAX_DOCUMENT_TEXT {
                        let record = Record::rejected(
                            *first_line,
                            consumed,
                            Rejection::new(
                                "syntax error",
                                format!(
                                    "the document starting here is still not closed at line {line_number}, past {MAX_DOCUMENT_TEXT} bytes"
                                ),
                            ),
                        );
                        pending = None;
                        return Some(Ok(record));
                    }
                    nesting.scan(&line);
                    text.push_str(&line);
                    if !nesting.is_open() {
                        let (first_line, text, _) = pending.take().expect("matched Some");
                        return Some(Ok(parse_streamed(first_line, &text, consumed)));
                    }
                }
            }
        }
    })
}

/// The record of a streamed document's text, which starts at `first_line`.
fn parse_streamed(first_line: usize, text: &str, consumed: u64) -> Record {
    let trimmed = text.trim();
    let document = parse_extjson(trimmed)
        .map_err(|error| match &error {
            DocError::Syntax { line, column, .. } => {
                let absolute = first_line + line - 1;
                let mut rejection = describe_line_error(&error);
                if *line > 1 {
                    rejection.reason = format!("line {absolute}, {}", rejection.reason);
                }
                let source_line = trimmed.lines().nth(line - 1).unwrap_or_default();
                for shown in pointer(absolute, source_line, *column).lines() {
                    rejection.reason.push_str("\n  ");
                    rejection.reason.push_str(shown);
                }
                rejection
            }
            _ => describe_line_error(&error),
        })
        .and_then(expect_document);
    Record {
        line: first_line,
        consumed,
        document,
        stop: false,
    }
}

/// The documents of a JSON array (or a single JSON document). A syntax error anywhere
/// rejects the whole file: past it the array cannot be read reliably.
fn json_array_records(text: &str) -> Result<Vec<Record>> {
    let text = text.trim_start_matches('\u{feff}');
    let total = text.len() as u64;
    let fail = |error: DocError| -> anyhow::Error {
        anyhow::anyhow!("the file is not valid JSON, nothing was imported: {error}")
    };
    let mut parser = Parser::new(text, Dialect::Json);
    if parser.peek().map_err(fail)?.kind != TokenKind::LeftBracket {
        bail!(
            "--jsonArray: the file does not start with '[', so it is not a JSON array; without --jsonArray it is read as one document per line"
        );
    }
    parser.next_token().map_err(fail)?;
    let mut records = Vec::new();
    if parser
        .eat(&TokenKind::RightBracket)
        .map_err(fail)?
        .is_none()
    {
        loop {
            let element = parser.parse_expression().map_err(fail)?;
            let document = evaluate(&element)
                .map_err(|error| describe_line_error(&error))
                .and_then(expect_document);
            records.push(Record {
                line: element.span.start.line,
                consumed: element.span.end.offset as u64,
                document,
                stop: false,
            });
            if parser
                .eat(&TokenKind::RightBracket)
                .map_err(fail)?
                .is_some()
            {
                break;
            }
            if parser.eat(&TokenKind::Comma).map_err(fail)?.is_none() {
                let found = parser.peek().map_err(fail)?.clone();
                bail!(
                    "the file is not valid JSON, nothing was imported: line {}, column {}: expected ',' or ']' after an array element, found {}",
                    found.span.start.line,
                    found.span.start.column,
                    found.kind
                );
            }
        }
    }
    parser.expect_end().map_err(fail)?;
    if let Some(last) = records.last_mut() {
        last.consumed = total;
    }
    Ok(records)
}

/// The records of a CSV or TSV text under the arguments' columns.
fn delimited_records(args: &ImportArgs, reading: Reading, text: &str) -> Result<Vec<Record>> {
    let text = text.trim_start_matches('\u{feff}');
    let mut rows: Vec<Result<CsvRow, CsvError>> = match reading {
        Reading::Tsv => tsv_rows(text).map(Ok).collect(),
        _ => CsvRecords::new(text).collect(),
    };
    let names = if let Some(list) = &args.fields {
        split_field_list(list)
    } else if let Some(path) = &args.field_file {
        let names = field_file_names(
            &std::fs::read_to_string(path)
                .with_context(|| format!("cannot read the --fieldFile {}", path.display()))?,
        );
        if names.is_empty() {
            bail!("the --fieldFile {} names no field", path.display());
        }
        names
    } else {
        if rows.is_empty() {
            bail!(
                "the {} file is empty: it needs a header line of field names (or --fields)",
                reading.name()
            );
        }
        match rows.remove(0) {
            Ok(header) => header.fields,
            Err(error) => bail!("the header line is not valid: {error}"),
        }
    };
    let default_type = if args.types {
        ColumnType::Auto
    } else {
        ColumnType::String
    };
    let where_named = if args.fields.is_some() {
        "--fields"
    } else if args.field_file.is_some() {
        "--fieldFile"
    } else {
        "the header line"
    };
    let columns = parse_columns(&names, args.columns_have_types, &default_type)
        .map_err(|problem| anyhow::anyhow!("{where_named}: {problem}"))?;
    let well_formed: Vec<&[String]> = rows
        .iter()
        .filter_map(|row| row.as_ref().ok())
        .filter(|row| row.fields.len() == columns.len())
        .map(|row| row.fields.as_slice())
        .collect();
    let reader = RowReader::new(
        columns,
        &well_formed,
        args.parse_grace.unwrap_or_default(),
        args.ignore_blanks,
    );
    let auto_columns = reader.describe_auto_columns();
    if !auto_columns.is_empty() {
        eprintln!("auto() typed the columns: {}", auto_columns.join(", "));
    }
    Ok(rows
        .into_iter()
        .map(|row| match row {
            Ok(row) => {
                let (document, stop) = match reader.document(&row.fields) {
                    RowOutcome::Document(document) => (Ok(document), false),
                    RowOutcome::Rejected(reason) => (Err(Rejection::new("row", reason)), false),
                    RowOutcome::Stop(reason) => (Err(Rejection::new("row", reason)), true),
                };
                Record {
                    line: row.line,
                    consumed: row.end_offset as u64,
                    document,
                    stop,
                }
            }
            Err(error) => Record::rejected(
                error.line,
                error.end_offset as u64,
                Rejection::new("row", error.message),
            ),
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn records(text: &str) -> Vec<(usize, Result<Document, String>)> {
        json_stream_records(text.as_bytes())
            .map(|record| {
                let record = record.unwrap();
                (
                    record.line,
                    record.document.map_err(|rejection| rejection.reason),
                )
            })
            .collect()
    }

    #[test]
    fn json_streams_read_lines_and_pretty_documents() {
        let read = records(
            "{\"a\": 1}\n\n{\n\t\"b\": [\n\t\t2\n\t]\n}\n{\"c\": \"}\"}\n{\"open\": \n{\"d\": 4}\n42\n",
        );
        assert_eq!(read[0], (1, Ok(spillway::doc! { "a": 1 })));
        assert_eq!(read[1], (3, Ok(spillway::doc! { "b": [2] })));
        assert_eq!(read[2], (8, Ok(spillway::doc! { "c": "}" })));
        // An unclosed document ends where the next one starts, with its own syntax error.
        let (line, Err(reason)) = &read[3] else {
            panic!("{read:?}")
        };
        assert_eq!(*line, 9);
        assert!(
            reason.starts_with("column 9: expected a JSON value, found end of input"),
            "{reason}"
        );
        assert_eq!(read[4], (10, Ok(spillway::doc! { "d": 4 })));
        assert_eq!(
            read[5],
            (
                11,
                Err("expected a JSON object (a document), found an int".to_owned())
            )
        );
        assert_eq!(read.len(), 6);
    }

    #[test]
    fn a_syntax_error_inside_a_pretty_document_names_its_own_line() {
        let read = records("{\n  \"a\": 1,\n  \"b\" 2\n}\n");
        let (line, Err(reason)) = &read[0] else {
            panic!("{read:?}")
        };
        assert_eq!(*line, 1);
        assert!(reason.starts_with("line 3, column 7: "), "{reason}");
        assert!(reason.contains("3 |   \"b\" 2"), "{reason}");
    }

    #[test]
    fn rejections_are_listed_ten_per_kind_then_counted() {
        let mut rejected: Vec<(usize, Rejection)> = (1..=25)
            .map(|line| (line, Rejection::new("DuplicateKey", format!("dup {line}"))))
            .collect();
        rejected.push((26, Rejection::new("syntax error", "bad")));
        let lines = rejection_lines(&rejected);
        assert_eq!(lines.len(), 12);
        assert_eq!(lines[0], "  line 1: dup 1");
        assert_eq!(lines[9], "  line 10: dup 10");
        assert_eq!(lines[10], "  line 26: bad");
        assert_eq!(
            lines[11],
            "  ... and 15 more DuplicateKey rejection(s) not listed"
        );
    }

    #[test]
    fn counterpart_filters_use_the_upsert_fields() {
        let document = spillway::doc! { "_id": 1, "name": { "first": "Ada" } };
        let fields = ["name.first".to_owned(), "year".to_owned()];
        assert_eq!(
            counterpart_filter(&fields, &document),
            Some(spillway::doc! { "name.first": "Ada", "year": null })
        );
        assert_eq!(counterpart_filter(&["year".to_owned()], &document), None);
    }
}
