//! `spillway export DB COLL`: a collection as JSON (one document per line, or an array),
//! CSV or TSV, with mongoexport's flags.
//!
//! Relaxed Extended JSON (the default, as mongoexport) writes plain JSON numbers and ISO
//! dates where that is exact; `--canonical` (or `--jsonFormat canonical`) keeps every BSON
//! type (`{"$numberLong": "5"}`), so that an export imports back to identical documents.
//! CSV and TSV need the fields to write (`--fields`, `--fieldFile`) and write their values as
//! mongoexport does: strings as they are, dates as `2006-01-02T15:04:05.000Z`, ObjectIds as
//! `ObjectId(hex)`, documents and arrays as relaxed Extended JSON, missing fields and nulls
//! as nothing. This module must never write to the database.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, Result, bail};
use spillway::bson::{Bson, Document};
use spillway_doc::shell::{parse_document, to_canonical_extjson_string, to_relaxed_extjson_string};

use crate::columns::{field_file_names, split_field_list};
use crate::csv::csv_field;
use crate::database::{Access, open_database};

/// The formats `export` writes (`--format`, Spillway's older spelling).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ExportFormat {
    /// One document per line.
    Ndjson,
    /// One JSON array, one document per line inside it (as --jsonArray).
    Json,
}

/// mongoexport's `--type`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ExportType {
    /// Extended JSON, one document per line (or an array with --jsonArray).
    Json,
    /// Comma-separated values of the --fields.
    Csv,
    /// Tab-separated values of the --fields (not mongoexport's: what mongoimport --type tsv
    /// reads).
    Tsv,
}

/// mongoexport's `--jsonFormat`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum JsonFormat {
    /// Plain JSON numbers and ISO dates where they are exact.
    Relaxed,
    /// Every BSON type kept (`{"$numberInt": "1"}`).
    Canonical,
}

/// Arguments of `spillway export`, with mongoexport's spellings (and Spillway's older ones).
#[derive(Debug, clap::Args)]
#[command(
    override_usage = "spillway export [OPTIONS] [DB] [COLL]\n       spillway export --db DB --collection COLL [OPTIONS]"
)]
pub struct ExportArgs {
    /// [DB] [COLL]: the database directory (must exist) and the collection, each unless
    /// given by --db or --collection.
    #[arg(num_args = 0..=2, value_name = "PATH")]
    paths: Vec<String>,
    /// The database directory (mongoexport's --db names a database; here it is the
    /// directory that holds one).
    #[arg(short = 'd', long = "db", value_name = "DIR")]
    db: Option<PathBuf>,
    /// The collection.
    #[arg(short = 'c', long = "collection", value_name = "NAME")]
    collection: Option<String>,
    /// What to write (default: json).
    #[arg(long = "type", value_enum, value_name = "TYPE")]
    output_type: Option<ExportType>,
    /// Spillway's older spelling: ndjson (one document per line) or json (one array).
    #[arg(long, value_enum, conflicts_with = "output_type")]
    format: Option<ExportFormat>,
    /// JSON: one array of documents instead of one document per line.
    #[arg(long = "jsonArray", alias = "json-array")]
    json_array: bool,
    /// JSON: each document indented over several lines (import reads it back).
    #[arg(long)]
    pretty: bool,
    /// Write to FILE instead of standard output.
    #[arg(short = 'o', long = "out", alias = "output", value_name = "FILE")]
    out: Option<PathBuf>,
    /// Canonical Extended JSON, which keeps every BSON type (as --jsonFormat canonical).
    #[arg(long, conflicts_with = "json_format")]
    canonical: bool,
    /// relaxed (default) or canonical Extended JSON.
    #[arg(
        long = "jsonFormat",
        alias = "json-format",
        value_enum,
        value_name = "FORMAT"
    )]
    json_format: Option<JsonFormat>,
    /// Export only the documents matching this filter, in shell syntax: '{year: {$gt: 2000}}'.
    #[arg(short = 'q', long, value_name = "FILTER")]
    query: Option<String>,
    /// The fields to export, comma-separated (`title,price.value`): a projection for JSON,
    /// the columns for CSV and TSV.
    #[arg(short = 'f', long, value_name = "LIST", conflicts_with = "field_file")]
    fields: Option<String>,
    /// A file with one field to export per line.
    #[arg(long = "fieldFile", alias = "field-file", value_name = "FILE")]
    field_file: Option<PathBuf>,
    /// CSV/TSV: no header line of field names.
    #[arg(long = "noHeaderLine", alias = "no-header-line")]
    no_header_line: bool,
    /// The order of the documents, in shell syntax: '{year: -1}' (default: `_id` order).
    #[arg(long, value_name = "SORT")]
    sort: Option<String>,
    /// Documents to pass over first.
    #[arg(long, value_name = "N")]
    skip: Option<u64>,
    /// Documents to export at most (0: no limit, as in MongoDB).
    #[arg(long, value_name = "N")]
    limit: Option<u64>,
    /// Export the stored layout of a collection with pattern policies (an outlier's first
    /// elements and its flag, a subset's top elements) instead of its logical documents,
    /// which `find` returns and the export writes by default: every managed array whole.
    #[arg(long)]
    stored: bool,
    /// Open the database read-only: change nothing, not even a torn tail.
    #[arg(long)]
    read_only: bool,
}

/// What the flags ask to write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Shape {
    JsonLines,
    JsonArray,
    Delimited(char),
}

/// Runs `spillway export`.
pub fn run(args: &ExportArgs) -> Result<ExitCode> {
    let (db, collection_name) = targets(args)?;
    let shape = match (args.output_type, args.format) {
        (Some(ExportType::Csv), _) => Shape::Delimited(','),
        (Some(ExportType::Tsv), _) => Shape::Delimited('\t'),
        (_, Some(ExportFormat::Json)) => Shape::JsonArray,
        _ if args.json_array => Shape::JsonArray,
        _ => Shape::JsonLines,
    };
    let fields = match (&args.fields, &args.field_file) {
        (Some(list), _) => Some(split_field_list(list)),
        (None, Some(path)) => Some(field_file_names(
            &std::fs::read_to_string(path)
                .with_context(|| format!("cannot read the --fieldFile {}", path.display()))?,
        )),
        (None, None) => None,
    };
    if let Some(fields) = &fields
        && let Some(bad) = fields
            .iter()
            .find(|f| f.is_empty() || f.split('.').any(str::is_empty))
    {
        bail!("--fields: {bad:?} is not a field path");
    }
    if let Shape::Delimited(_) = shape {
        if fields.as_ref().is_none_or(Vec::is_empty) {
            bail!("CSV and TSV export need the fields to write: give --fields or --fieldFile");
        }
        let json_only = [
            (args.json_array, "--jsonArray"),
            (args.pretty, "--pretty"),
            (
                args.canonical || args.json_format.is_some(),
                "--jsonFormat/--canonical",
            ),
        ];
        if let Some((_, flag)) = json_only.iter().find(|(given, _)| *given) {
            bail!("{flag} applies to JSON output, not CSV or TSV");
        }
    } else if args.no_header_line {
        bail!("--noHeaderLine applies to CSV and TSV output, not JSON");
    }
    let filter = parse_option("--query", "a filter", args.query.as_deref())?.unwrap_or_default();
    let sort = parse_option("--sort", "a sort", args.sort.as_deref())?;
    if !db.is_dir() {
        bail!(
            "no database in {}: the directory does not exist",
            db.display()
        );
    }
    let database = open_database(Some(&db), Access::from_flag(args.read_only))?;
    let collection = database.collection::<Document>(&collection_name);
    let mut out: Box<dyn Write> = match &args.out {
        Some(path) => Box::new(BufWriter::new(
            File::create(path).with_context(|| format!("cannot create {}", path.display()))?,
        )),
        None => Box::new(BufWriter::new(std::io::stdout().lock())),
    };
    let canonical = args.canonical || args.json_format == Some(JsonFormat::Canonical);
    let mut find = collection.find(filter).stored(args.stored);
    if let Some(sort) = sort {
        find = find.sort(sort);
    }
    if let Some(skip) = args.skip {
        find = find.skip(skip);
    }
    if let Some(limit) = args.limit.filter(|&limit| limit > 0) {
        find = find.limit(i64::try_from(limit).unwrap_or(i64::MAX));
    }
    if let (Some(fields), Shape::JsonLines | Shape::JsonArray) = (&fields, shape) {
        let mut projection = Document::new();
        for field in fields {
            projection.insert(field.clone(), 1);
        }
        find = find.projection(projection);
    }
    let mut exported = 0_u64;
    match shape {
        Shape::JsonArray => out.write_all(b"[")?,
        Shape::Delimited(separator) if !args.no_header_line => {
            let fields = fields.as_deref().unwrap_or_default();
            let header: Vec<String> = fields
                .iter()
                .map(|field| delimited_value(field, separator, "the header", field))
                .collect::<Result<_>>()?;
            writeln!(out, "{}", header.join(&separator.to_string()))?;
        }
        _ => {}
    }
    for document in find.run()? {
        let document = document?;
        match shape {
            Shape::JsonLines | Shape::JsonArray => {
                let text = json_text(&document, canonical, args.pretty);
                if shape == Shape::JsonArray {
                    out.write_all(if exported == 0 { b"\n" } else { b",\n" })?;
                    write!(out, "{text}")?;
                } else {
                    writeln!(out, "{text}")?;
                }
            }
            Shape::Delimited(separator) => {
                let fields = fields.as_deref().unwrap_or_default();
                let row = delimited_row(&document, fields, separator)?;
                writeln!(out, "{row}")?;
            }
        }
        exported += 1;
    }
    if shape == Shape::JsonArray {
        out.write_all(if exported == 0 { b"]\n" } else { b"\n]\n" })?;
    }
    out.flush()?;
    eprintln!(
        "exported {exported} document(s) from '{collection_name}'{}",
        args.out
            .as_ref()
            .map(|path| format!(" to {}", path.display()))
            .unwrap_or_default()
    );
    Ok(ExitCode::SUCCESS)
}

/// The database directory and collection, from positional arguments and flags.
fn targets(args: &ExportArgs) -> Result<(PathBuf, String)> {
    let mut db = args.db.clone();
    let mut collection = args.collection.clone();
    let free = usize::from(db.is_none()) + usize::from(collection.is_none());
    if args.paths.len() > free {
        bail!(
            "too many arguments: {} given, but --db and --collection leave room for {free} of DB and COLL",
            args.paths.len()
        );
    }
    let mut values = args.paths.iter();
    if db.is_none() {
        db = values.next().map(PathBuf::from);
    }
    if collection.is_none() {
        collection = values.next().cloned();
    }
    let Some(db) = db else {
        bail!("no database directory: give DB COLL, or --db DIR");
    };
    let Some(collection) = collection else {
        bail!("no collection to export: give DB COLL, or --collection NAME");
    };
    Ok((db, collection))
}

fn parse_option(flag: &str, what: &str, text: Option<&str>) -> Result<Option<Document>> {
    text.map(|text| {
        parse_document(text).with_context(|| format!("{flag} {text:?} is not {what} document"))
    })
    .transpose()
}

fn json_text(document: &Document, canonical: bool, pretty: bool) -> String {
    let value = Bson::Document(document.clone());
    if !pretty {
        return if canonical {
            to_canonical_extjson_string(&value)
        } else {
            to_relaxed_extjson_string(&value)
        };
    }
    let json = if canonical {
        value.into_canonical_extjson()
    } else {
        value.into_relaxed_extjson()
    };
    // mongoexport --pretty indents with tabs.
    let mut text = Vec::new();
    let formatter = serde_json::ser::PrettyFormatter::with_indent(b"\t");
    let mut serializer = serde_json::Serializer::with_formatter(&mut text, formatter);
    serde::Serialize::serialize(&json, &mut serializer).expect("a JSON value serializes");
    String::from_utf8(text).expect("serde_json writes UTF-8")
}

/// The value at `path` (`a.b`, `a.0` for an array element), if any.
fn lookup<'d>(document: &'d Document, path: &str) -> Option<&'d Bson> {
    let mut parts = path.split('.');
    let mut value = document.get(parts.next()?)?;
    for part in parts {
        value = match value {
            Bson::Document(nested) => nested.get(part)?,
            Bson::Array(elements) => elements.get(part.parse::<usize>().ok()?)?,
            _ => return None,
        };
    }
    Some(value)
}

/// One value as mongoexport writes it in CSV.
fn plain_text(value: &Bson) -> String {
    match value {
        Bson::Null | Bson::Undefined => String::new(),
        Bson::String(text) => text.clone(),
        Bson::Boolean(flag) => flag.to_string(),
        Bson::Int32(n) => n.to_string(),
        Bson::Int64(n) => n.to_string(),
        Bson::Decimal128(decimal) => decimal.to_string(),
        Bson::ObjectId(id) => format!("ObjectId({id})"),
        Bson::DateTime(date) => match date.try_to_rfc3339_string() {
            // Always three digits of milliseconds, as mongoexport.
            Ok(text) => {
                let without_zone = text.trim_end_matches('Z');
                match without_zone.split_once('.') {
                    Some((seconds, fraction)) => format!("{seconds}.{fraction:0<3}Z"),
                    None => format!("{without_zone}.000Z"),
                }
            }
            Err(_) => to_relaxed_extjson_string(value),
        },
        other => to_relaxed_extjson_string(other),
    }
}

fn delimited_value(text: &str, separator: char, document: &str, field: &str) -> Result<String> {
    if separator == ',' {
        return Ok(csv_field(text).into_owned());
    }
    if text.contains(['\t', '\n', '\r']) {
        bail!(
            "TSV cannot hold {document}'s field {field:?}: its value has a tab or a line break (TSV has no quoting; export CSV instead)"
        );
    }
    Ok(text.to_owned())
}

fn delimited_row(document: &Document, fields: &[String], separator: char) -> Result<String> {
    let id = document.get("_id").map_or_else(
        || "a document".to_owned(),
        |id| format!("the document with _id {}", to_relaxed_extjson_string(id)),
    );
    let values: Vec<String> = fields
        .iter()
        .map(|field| {
            let text = lookup(document, field).map(plain_text).unwrap_or_default();
            delimited_value(&text, separator, &id, field)
        })
        .collect::<Result<_>>()?;
    Ok(values.join(&separator.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use spillway::bson::oid::ObjectId;
    use spillway::doc;

    #[test]
    fn values_are_written_as_mongoexport_writes_them() {
        let date = spillway::bson::DateTime::from_millis(1_704_103_200_250);
        let document = doc! {
            "s": "a, b", "n": 3, "big": 5_i64, "x": 0.5, "t": true, "nothing": null,
            "d": date, "whole": spillway::bson::DateTime::from_millis(0),
            "id": ObjectId::parse_str("507f1f77bcf86cd993384520").unwrap(),
            "nested": { "deep": [1, { "k": "v" }] },
        };
        let fields: Vec<String> = [
            "s",
            "n",
            "big",
            "x",
            "t",
            "nothing",
            "missing",
            "d",
            "whole",
            "id",
            "nested",
            "nested.deep.1.k",
        ]
        .iter()
        .map(|&f| f.to_owned())
        .collect();
        assert_eq!(
            delimited_row(&document, &fields, ',').unwrap(),
            "\"a, b\",3,5,0.5,true,,,2024-01-01T10:00:00.250Z,1970-01-01T00:00:00.000Z,ObjectId(507f1f77bcf86cd993384520),\"{\"\"deep\"\":[1,{\"\"k\"\":\"\"v\"\"}]}\",v"
        );
        let error = delimited_row(&doc! { "_id": 7, "s": "a\tb" }, &["s".to_owned()], '\t')
            .unwrap_err()
            .to_string();
        assert!(
            error.contains("the document with _id 7's field \"s\""),
            "{error}"
        );
    }

    #[test]
    fn pretty_json_is_indented_with_tabs() {
        assert_eq!(
            json_text(&doc! { "a": 1, "b": [2] }, false, true),
            "{\n\t\"a\": 1,\n\t\"b\": [\n\t\t2\n\t]\n}"
        );
    }
}
