//! `spillway import DB COLL FILE`: documents from NDJSON, a JSON array, or CSV.
//!
//! JSON input may be Extended JSON, canonical (`{"$numberLong": "5"}`) or relaxed
//! (`{"$date": "2024-01-01T00:00:00Z"}`): `spillway_doc`'s strict-JSON reader decodes both.
//! NDJSON is streamed line by line; a JSON array and CSV are read whole.
//!
//! Two ways to treat bad input:
//! - by default every valid document is stored and each rejected one is reported with its
//!   line and the reason (documents are inserted in batches; a batch with a bad document is
//!   retried one document at a time, so one duplicate `_id` does not cost its neighbours);
//! - with `--stop-on-error`, the file is all or nothing: every document is parsed first and
//!   then inserted in one atomic write, so any problem leaves the database unchanged.
//!
//! This module must never write to the database except through the facade's inserts.

use std::fs::File;
use std::io::{BufRead, BufReader, IsTerminal};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

use anyhow::{Context, Result, bail};
use indicatif::{ProgressBar, ProgressStyle};
use spillway::bson::{Bson, Document};
use spillway::{Collection, Database, Durability, InsertManyResult};
use spillway_doc::DocError;
use spillway_doc::shell::{Dialect, Parser, TokenKind, evaluate, parse_extjson};

use crate::app::{Access, open_database};
use crate::csv::{CsvRecords, csv_document};
use crate::excerpt::pointer;

/// The formats `import` reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ImportFormat {
    /// One JSON document per line (`.ndjson`, `.jsonl`); blank lines are skipped.
    Ndjson,
    /// A JSON array of documents, or one document (`.json`).
    Json,
    /// Comma-separated values with a header row of field names (`.csv`); `a.b` headers
    /// make nested documents.
    Csv,
}

impl ImportFormat {
    fn from_extension(path: &Path) -> Option<ImportFormat> {
        let extension = path.extension()?.to_str()?.to_ascii_lowercase();
        match extension.as_str() {
            "ndjson" | "jsonl" => Some(ImportFormat::Ndjson),
            "json" => Some(ImportFormat::Json),
            "csv" => Some(ImportFormat::Csv),
            _ => None,
        }
    }

    fn name(self) -> &'static str {
        match self {
            ImportFormat::Ndjson => "ndjson",
            ImportFormat::Json => "json",
            ImportFormat::Csv => "csv",
        }
    }
}

/// Arguments of `spillway import`.
#[derive(Debug, clap::Args)]
pub struct ImportArgs {
    /// Database directory (created if missing).
    db: PathBuf,
    /// Collection to insert into (created if missing).
    collection: String,
    /// The file to read.
    file: PathBuf,
    /// The file's format (default: from its extension: .ndjson/.jsonl, .json, .csv).
    #[arg(long, value_enum)]
    format: Option<ImportFormat>,
    /// CSV: read numbers, true and false as such (default: every value is a string).
    #[arg(long)]
    types: bool,
    /// Import the whole file or nothing: the first bad document leaves the database
    /// unchanged.
    #[arg(long)]
    stop_on_error: bool,
    /// Documents per insert.
    #[arg(long, default_value_t = 1000, value_parser = clap::value_parser!(u32).range(1..))]
    batch_size: u32,
}

/// A document read from the input, or why the input at that line is not one.
struct Record {
    line: usize,
    /// Bytes of input consumed once this record is read (for the progress bar).
    consumed: u64,
    document: Result<Document, String>,
}

/// What the import did.
#[derive(Debug, Default)]
struct Tally {
    imported: u64,
    rejected: Vec<(usize, String)>,
}

/// Runs `spillway import`.
pub fn run(args: &ImportArgs) -> Result<ExitCode> {
    let format = match args.format {
        Some(format) => format,
        None => ImportFormat::from_extension(&args.file).with_context(|| {
            format!(
                "cannot tell the format of {} from its extension: pass --format ndjson, json or csv",
                args.file.display()
            )
        })?,
    };
    let file =
        File::open(&args.file).with_context(|| format!("cannot open {}", args.file.display()))?;
    let total_bytes = file.metadata().map_or(0, |metadata| metadata.len());
    let database = open_database(Some(&args.db), Access::ReadWrite(Durability::OsBuffered))?;
    let collection = database.collection::<Document>(&args.collection);
    let records: Box<dyn Iterator<Item = Result<Record>>> = match format {
        ImportFormat::Ndjson => Box::new(ndjson_records(BufReader::new(file))),
        ImportFormat::Json => Box::new(
            json_records(&read_text(file, &args.file)?)?
                .into_iter()
                .map(Ok),
        ),
        ImportFormat::Csv => Box::new(
            csv_records(&read_text(file, &args.file)?, args.types)?
                .into_iter()
                .map(Ok),
        ),
    };
    let progress = progress_bar(total_bytes);
    let started = Instant::now();
    let tally = if args.stop_on_error {
        import_all_or_nothing(&database, &collection, records, &progress)?
    } else {
        import_valid(
            &database,
            &collection,
            records,
            &progress,
            args.batch_size as usize,
        )?
    };
    database.sync()?;
    progress.finish_and_clear();
    let seconds = started.elapsed().as_secs_f64();
    print_summary(args, format, total_bytes, seconds, &tally);
    Ok(if tally.rejected.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

fn read_text(mut file: File, path: &Path) -> Result<String> {
    let mut text = String::new();
    std::io::Read::read_to_string(&mut file, &mut text)
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

fn print_summary(args: &ImportArgs, format: ImportFormat, bytes: u64, seconds: f64, tally: &Tally) {
    if args.stop_on_error && !tally.rejected.is_empty() {
        println!(
            "imported nothing into '{}' from {} ({}): --stop-on-error and the file has a bad document, so the database is unchanged",
            args.collection,
            args.file.display(),
            format.name()
        );
    } else {
        println!(
            "imported {} document(s) into '{}' from {} ({}, {bytes} bytes) in {seconds:.2} s",
            tally.imported,
            args.collection,
            args.file.display(),
            format.name()
        );
    }
    if !tally.rejected.is_empty() {
        println!("rejected {} line(s):", tally.rejected.len());
        for (line, reason) in &tally.rejected {
            println!("  line {line}: {reason}");
        }
    }
}

/// Stores every valid document; rejects the others with their line.
fn import_valid(
    database: &Database,
    collection: &Collection<Document>,
    records: impl Iterator<Item = Result<Record>>,
    progress: &ProgressBar,
    batch_size: usize,
) -> Result<Tally> {
    let mut tally = Tally::default();
    let mut batch: Vec<(usize, Document)> = Vec::with_capacity(batch_size);
    for record in records {
        let record = record?;
        match record.document {
            Ok(document) => batch.push((record.line, document)),
            Err(reason) => tally.rejected.push((record.line, reason)),
        }
        if batch.len() == batch_size {
            insert_batch(database, collection, &mut batch, &mut tally)?;
        }
        progress.set_position(record.consumed);
    }
    insert_batch(database, collection, &mut batch, &mut tally)?;
    tally.rejected.sort_by_key(|(line, _)| *line);
    Ok(tally)
}

fn insert_batch(
    database: &Database,
    collection: &Collection<Document>,
    batch: &mut Vec<(usize, Document)>,
    tally: &mut Tally,
) -> Result<()> {
    if batch.is_empty() {
        return Ok(());
    }
    let documents = batch.iter().map(|(_, document)| document);
    match insert_atomically(database, collection, documents) {
        Ok(result) => tally.imported += result.inserted_ids.len() as u64,
        Err(error) if error.document_index().is_some() => {
            // The batch wrote nothing: insert its documents one by one to find every bad one.
            for (line, document) in batch.iter() {
                match collection.insert_one(document).run() {
                    Ok(_) => tally.imported += 1,
                    Err(error) if is_document_error(&error) => {
                        tally.rejected.push((*line, error.to_string()));
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

/// Inserts `documents` in one atomic write: the facade's `insert_many`, like MongoDB's,
/// keeps the documents before a failure, unless it runs in a transaction, which aborts whole.
fn insert_atomically<'d>(
    database: &Database,
    collection: &Collection<Document>,
    documents: impl IntoIterator<Item = &'d Document>,
) -> spillway::Result<InsertManyResult> {
    database.transaction(|transaction| collection.insert_many(documents).session(transaction).run())
}

/// Errors that concern one document (the import goes on), as opposed to the database
/// failing (the import stops).
fn is_document_error(error: &spillway::Error) -> bool {
    use spillway::ErrorKind;
    matches!(
        error.kind(),
        ErrorKind::DuplicateKey { .. }
            | ErrorKind::InvalidDocument(_)
            | ErrorKind::DocumentTooLarge { .. }
            | ErrorKind::ParallelArrays { .. }
            | ErrorKind::Serialization { .. }
    )
}

/// Parses everything, then inserts everything in one atomic write.
fn import_all_or_nothing(
    database: &Database,
    collection: &Collection<Document>,
    records: impl Iterator<Item = Result<Record>>,
    progress: &ProgressBar,
) -> Result<Tally> {
    let mut tally = Tally::default();
    let mut lines = Vec::new();
    let mut documents = Vec::new();
    for record in records {
        let record = record?;
        match record.document {
            Ok(document) => {
                lines.push(record.line);
                documents.push(document);
            }
            Err(reason) => {
                tally.rejected.push((record.line, reason));
                return Ok(tally);
            }
        }
        progress.set_position(record.consumed);
    }
    match insert_atomically(database, collection, &documents) {
        Ok(result) => tally.imported = result.inserted_ids.len() as u64,
        Err(error) => match error.document_index() {
            Some(index) => tally.rejected.push((lines[index], error.to_string())),
            None => return Err(error.into()),
        },
    }
    Ok(tally)
}

/// How a `spillway_doc` parse error reads in a rejection: its column (the line is the
/// record's) and message.
fn describe_line_error(error: &DocError) -> String {
    match error {
        DocError::Syntax {
            column, message, ..
        } => format!("column {column}: {message}"),
        other => other.to_string(),
    }
}

/// [`describe_line_error`], with the NDJSON line (a window of it, if it is long) and a caret
/// under the column of a syntax error, indented under the rejection.
fn describe_ndjson_error(error: &DocError, line_number: usize, text: &str) -> String {
    let mut described = describe_line_error(error);
    if let DocError::Syntax { column, .. } = error {
        for line in pointer(line_number, text, *column).lines() {
            described.push_str("\n  ");
            described.push_str(line);
        }
    }
    described
}

fn expect_document(value: Bson) -> Result<Document, String> {
    match value {
        Bson::Document(document) => Ok(document),
        other => Err(format!(
            "expected a JSON object (a document), found {}",
            spillway_doc::path::describe(&other)
        )),
    }
}

fn ndjson_records(mut reader: impl BufRead) -> impl Iterator<Item = Result<Record>> {
    let mut line_number = 0;
    let mut consumed = 0_u64;
    let mut buffer = Vec::new();
    std::iter::from_fn(move || {
        loop {
            buffer.clear();
            line_number += 1;
            // Bytes, not a `String`: a line that is not UTF-8 is one bad record, not the end
            // of the file.
            let read = match reader.read_until(b'\n', &mut buffer) {
                Ok(0) => return None,
                Ok(read) => read,
                Err(error) => {
                    return Some(Err(anyhow::Error::new(error)
                        .context(format!("cannot read line {line_number}"))));
                }
            };
            consumed += read as u64;
            let document = match std::str::from_utf8(&buffer) {
                Ok(line) => {
                    let text = line.trim_start_matches('\u{feff}').trim();
                    if text.is_empty() {
                        continue;
                    }
                    parse_extjson(text)
                        .map_err(|error| describe_ndjson_error(&error, line_number, text))
                        .and_then(expect_document)
                }
                Err(error) => Err(format!(
                    "not valid UTF-8 at byte {}",
                    error.valid_up_to() + 1
                )),
            };
            return Some(Ok(Record {
                line: line_number,
                consumed,
                document,
            }));
        }
    })
}

/// The documents of a JSON array (or a single JSON document). A syntax error anywhere
/// rejects the whole file: past it the array cannot be read reliably.
fn json_records(text: &str) -> Result<Vec<Record>> {
    let text = text.trim_start_matches('\u{feff}');
    let total = text.len() as u64;
    let fail = |error: DocError| -> anyhow::Error {
        anyhow::anyhow!("the file is not valid JSON, nothing was imported: {error}")
    };
    let mut parser = Parser::new(text, Dialect::Json);
    if parser.peek().map_err(fail)?.kind != TokenKind::LeftBracket {
        let value = parse_extjson(text).map_err(fail)?;
        return Ok(vec![Record {
            line: 1,
            consumed: total,
            document: expect_document(value),
        }]);
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
    Ok(records)
}

fn csv_records(text: &str, infer_types: bool) -> Result<Vec<Record>> {
    let mut rows = CsvRecords::new(text.trim_start_matches('\u{feff}'));
    let Some(header) = rows.next() else {
        bail!("the CSV file is empty: it needs a header row of field names");
    };
    let header = header.map_err(|error| anyhow::anyhow!("the CSV header is not valid: {error}"))?;
    if let Some(empty) = header.fields.iter().position(String::is_empty) {
        bail!(
            "the CSV header names no field for column {} (line {})",
            empty + 1,
            header.line
        );
    }
    let mut records = Vec::new();
    for row in rows {
        let (line, consumed, document) = match row {
            Ok(row) => (
                row.line,
                row.end_offset as u64,
                csv_document(&header.fields, &row.fields, infer_types),
            ),
            Err(error) => (
                error.line,
                error.end_offset as u64,
                Err(error.message.clone()),
            ),
        };
        records.push(Record {
            line,
            consumed,
            document,
        });
    }
    Ok(records)
}
