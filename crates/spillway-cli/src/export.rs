//! `spillway export DB COLL`: a collection as NDJSON or a JSON array of Extended JSON
//! documents, in `_id` order.
//!
//! Relaxed Extended JSON (the default, as mongoexport) writes plain JSON numbers and ISO
//! dates where that is exact; `--canonical` keeps every BSON type (`{"$numberLong": "5"}`),
//! so that an export imports back to identical documents. This module must never write to
//! the database.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, Result, bail};
use spillway::bson::{Bson, Document};
use spillway_doc::shell::{parse_document, to_canonical_extjson_string, to_relaxed_extjson_string};

use crate::app::{Access, open_database};

/// The formats `export` writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ExportFormat {
    /// One document per line.
    Ndjson,
    /// One JSON array, one document per line inside it.
    Json,
}

/// Arguments of `spillway export`.
#[derive(Debug, clap::Args)]
pub struct ExportArgs {
    /// Database directory (must exist).
    db: PathBuf,
    /// Collection to export.
    collection: String,
    /// Output format.
    #[arg(long, value_enum, default_value_t = ExportFormat::Ndjson)]
    format: ExportFormat,
    /// Write to FILE instead of standard output.
    #[arg(short, long, value_name = "FILE")]
    output: Option<PathBuf>,
    /// Canonical Extended JSON, which keeps every BSON type.
    #[arg(long)]
    canonical: bool,
    /// Export only the documents matching this filter, in shell syntax: '{year: {$gt: 2000}}'.
    #[arg(long, value_name = "FILTER")]
    query: Option<String>,
    /// Export logical documents: every array a pattern policy manages whole, read back from
    /// its side collection, without the policy's flags. By default the stored documents are
    /// exported, as `find` returns them.
    #[arg(long)]
    logical: bool,
    /// Open the database read-only: change nothing, not even a torn tail.
    #[arg(long)]
    read_only: bool,
}

/// Runs `spillway export`.
pub fn run(args: &ExportArgs) -> Result<ExitCode> {
    if !args.db.is_dir() {
        bail!(
            "no database in {}: the directory does not exist",
            args.db.display()
        );
    }
    let filter = match &args.query {
        Some(text) => parse_document(text)
            .with_context(|| format!("--query {text:?} is not a filter document"))?,
        None => Document::new(),
    };
    let database = open_database(Some(&args.db), Access::from_flag(args.read_only))?;
    let collection = database.collection::<Document>(&args.collection);
    let mut out: Box<dyn Write> = match &args.output {
        Some(path) => Box::new(BufWriter::new(
            File::create(path).with_context(|| format!("cannot create {}", path.display()))?,
        )),
        None => Box::new(BufWriter::new(std::io::stdout().lock())),
    };
    let to_json = if args.canonical {
        to_canonical_extjson_string
    } else {
        to_relaxed_extjson_string
    };
    let mut exported = 0_u64;
    if args.format == ExportFormat::Json {
        out.write_all(b"[")?;
    }
    for document in collection.find(filter).expand(args.logical).run()? {
        let text = to_json(&Bson::Document(document?));
        match args.format {
            ExportFormat::Ndjson => writeln!(out, "{text}")?,
            ExportFormat::Json => {
                let separator = if exported == 0 { "\n" } else { ",\n" };
                write!(out, "{separator}{text}")?;
            }
        }
        exported += 1;
    }
    if args.format == ExportFormat::Json {
        out.write_all(if exported == 0 { b"]\n" } else { b"\n]\n" })?;
    }
    out.flush()?;
    eprintln!(
        "exported {exported} document(s) from '{}'{}",
        args.collection,
        args.output
            .as_ref()
            .map(|path| format!(" to {}", path.display()))
            .unwrap_or_default()
    );
    Ok(ExitCode::SUCCESS)
}
