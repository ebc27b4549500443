//! The columns of a CSV or TSV import and how a row becomes a document.
//!
//! Column names come from the header line, `--fields a,b.c` or `--fieldFile`; `a.b` makes a
//! nested document. With `--columnsHaveTypes` every name carries mongoimport's type,
//! `name.string()`, `n.int32()`, `n.int64()`, `x.double()`, `x.decimal()`, `b.boolean()`,
//! `d.date(2006-01-02)` (Go layout; also `date_go`, `date_ms`, `date_oracle`),
//! `bin.binary(base64)` (or `base32`, `hex`) or `a.auto()`. `--types` makes every column
//! `auto()`.
//!
//! `auto()` is decided per column, over every row of the file, not per value as mongoimport
//! does: a column is numbers only if every non-blank value in it is a number without a
//! leading zero, so a zip code column never holds `"02134"` in one document and `2134` in
//! the next. A blank in a number or boolean column is left out of its document. This module
//! must never touch a database.

use std::str::FromStr;

use base64::Engine as _;
use spillway::bson::spec::BinarySubtype;
use spillway::bson::{Binary, Bson, Decimal128, Document};

use crate::date_layout::{Dialect, Layout};

/// The type of one column.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ColumnType {
    /// Strings, unchanged (the default without `--columnsHaveTypes`).
    String,
    /// `auto()`: booleans, numbers or strings, decided for the whole column.
    Auto,
    /// `int32()`.
    Int32,
    /// `int64()`.
    Int64,
    /// `double()`.
    Double,
    /// `decimal()`: Decimal128.
    Decimal,
    /// `boolean()`.
    Boolean,
    /// `date(layout)` and friends.
    Date(Layout),
    /// `binary(encoding)`.
    Binary(BinaryEncoding),
}

/// How a `binary(...)` column writes its bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum BinaryEncoding {
    Base64,
    Base32,
    Hex,
}

/// A named, typed column.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Column {
    /// The field path (`a.b` nests).
    pub(crate) name: String,
    /// How its values are read.
    pub(crate) column_type: ColumnType,
}

/// mongoimport's `--parseGrace`: what a value that does not fit its column's type does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
#[value(rename_all = "camelCase")]
pub(crate) enum ParseGrace {
    /// Store the value as `auto()` would read it alone.
    AutoCast,
    /// Leave the field out of the document.
    SkipField,
    /// Reject the row and go on with the next.
    SkipRow,
    /// Reject the row and stop the import there (the rows before it stay).
    #[default]
    Stop,
}

/// What became of one row.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum RowOutcome {
    /// The row's document.
    Document(Document),
    /// The row is rejected for this reason.
    Rejected(String),
    /// The row is rejected and, under `--parseGrace stop`, the import stops.
    Stop(String),
}

/// The names in a `--fields` list: commas separate them, except inside a type's parentheses
/// (`d.date(Jan 2, 2006)`). Surrounding spaces are trimmed.
pub(crate) fn split_field_list(list: &str) -> Vec<String> {
    let mut names = Vec::new();
    let mut current = String::new();
    let mut depth = 0_usize;
    for c in list.chars() {
        match c {
            '(' => depth += 1,
            ')' => depth = depth.saturating_sub(1),
            ',' if depth == 0 => {
                names.push(std::mem::take(&mut current).trim().to_owned());
                continue;
            }
            _ => {}
        }
        current.push(c);
    }
    names.push(current.trim().to_owned());
    names
}

/// The names in a `--fieldFile`: one per line, blank lines skipped.
pub(crate) fn field_file_names(text: &str) -> Vec<String> {
    text.lines()
        .map(str::trim)
        .filter(|line| !line.is_empty())
        .map(str::to_owned)
        .collect()
}

const TYPE_NAMES: &str = "auto(), binary(base64|base32|hex), boolean(), date(layout), date_go(layout), date_ms(layout), date_oracle(layout), decimal(), double(), int32(), int64(), string()";

/// Reads the columns named by `names`: plain names, or with `typed` (`--columnsHaveTypes`)
/// `name.type(argument)`. Every column not typed is `default_type`.
pub(crate) fn parse_columns(
    names: &[String],
    typed: bool,
    default_type: &ColumnType,
) -> Result<Vec<Column>, String> {
    let mut columns: Vec<Column> = Vec::with_capacity(names.len());
    for (index, spec) in names.iter().enumerate() {
        if spec.is_empty() {
            return Err(format!("column {} has no field name", index + 1));
        }
        let column = if typed {
            parse_typed_column(spec)?
        } else {
            Column {
                name: spec.clone(),
                column_type: default_type.clone(),
            }
        };
        check_path(&column.name)?;
        if let Some(clash) = columns.iter().find(|other| {
            other.name == column.name
                || other.name.starts_with(&format!("{}.", column.name))
                || column.name.starts_with(&format!("{}.", other.name))
        }) {
            return Err(if clash.name == column.name {
                format!("the field {:?} is named twice", column.name)
            } else {
                format!(
                    "the fields {:?} and {:?} clash: one would be both a value and a document",
                    clash.name, column.name
                )
            });
        }
        columns.push(column);
    }
    Ok(columns)
}

fn check_path(name: &str) -> Result<(), String> {
    if name.split('.').any(str::is_empty) {
        return Err(format!("the field name {name:?} has an empty part"));
    }
    if name.split('.').any(|part| part.starts_with('$')) {
        return Err(format!(
            "the field name {name:?} has a part starting with '$', which a stored field cannot"
        ));
    }
    Ok(())
}

fn parse_typed_column(spec: &str) -> Result<Column, String> {
    let missing = || {
        format!(
            "--columnsHaveTypes: the field {spec:?} has no type: write name.type(), for example {spec}.string(); the types are {TYPE_NAMES}"
        )
    };
    if spec.contains('(') && !spec.ends_with(')') {
        return Err(format!(
            "--columnsHaveTypes: the field {spec:?} opens a '(' it does not close (in a header line, a field whose type holds a comma must be quoted)"
        ));
    }
    let open = spec.find('(').ok_or_else(missing)?;
    let body = spec.strip_suffix(')').ok_or_else(missing)?;
    let dot = spec[..open].rfind('.').ok_or_else(missing)?;
    let name = &spec[..dot];
    let type_name = &spec[dot + 1..open];
    let argument = &body[open + 1..];
    if name.is_empty() {
        return Err(format!(
            "--columnsHaveTypes: {spec:?} has a type but no field name"
        ));
    }
    let no_argument = |column_type: ColumnType| {
        if argument.is_empty() {
            Ok(column_type)
        } else {
            Err(format!(
                "--columnsHaveTypes: {type_name}() takes no argument, found {argument:?} in {spec:?}"
            ))
        }
    };
    let date = |dialect: Dialect| {
        if argument.is_empty() {
            return Err(format!(
                "--columnsHaveTypes: {type_name}() needs a layout, for example {name}.{type_name}(2006-01-02)"
            ));
        }
        Layout::parse(dialect, argument)
            .map(ColumnType::Date)
            .map_err(|problem| format!("--columnsHaveTypes: {spec:?}: {problem}"))
    };
    let column_type = match type_name {
        "auto" => no_argument(ColumnType::Auto)?,
        "string" => no_argument(ColumnType::String)?,
        "int32" => no_argument(ColumnType::Int32)?,
        "int64" => no_argument(ColumnType::Int64)?,
        "double" => no_argument(ColumnType::Double)?,
        "decimal" => no_argument(ColumnType::Decimal)?,
        "boolean" => no_argument(ColumnType::Boolean)?,
        "date" | "date_go" => date(Dialect::Go)?,
        "date_ms" => date(Dialect::Microsoft)?,
        "date_oracle" => date(Dialect::Oracle)?,
        "binary" => ColumnType::Binary(match argument {
            "base64" => BinaryEncoding::Base64,
            "base32" => BinaryEncoding::Base32,
            "hex" => BinaryEncoding::Hex,
            other => {
                return Err(format!(
                    "--columnsHaveTypes: binary() takes base64, base32 or hex, found {other:?} in {spec:?}"
                ));
            }
        }),
        other => {
            return Err(format!(
                "--columnsHaveTypes: unknown type {other:?} in {spec:?}; the types are {TYPE_NAMES}"
            ));
        }
    };
    Ok(Column {
        name: name.to_owned(),
        column_type,
    })
}

/// What `auto()` makes of a column (or of one value, under `--parseGrace autoCast`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum AutoType {
    Boolean,
    Int32,
    Int64,
    Double,
    String,
}

/// How `auto()` reads `text` alone: `true`/`false`, integers (Int32, else Int64), decimal
/// numbers (Double); anything else, numbers with leading zeros included, is a string.
fn classify(text: &str) -> AutoType {
    if text == "true" || text == "false" {
        return AutoType::Boolean;
    }
    let digits = text.strip_prefix('-').unwrap_or(text);
    let leading_zero = digits.len() > 1 && digits.starts_with('0') && !digits.starts_with("0.");
    let numeric = !digits.is_empty()
        && digits.starts_with(|c: char| c.is_ascii_digit())
        && digits
            .chars()
            .all(|c| c.is_ascii_digit() || matches!(c, '.' | 'e' | 'E' | '+' | '-'));
    if !numeric || leading_zero {
        return AutoType::String;
    }
    if let Ok(integer) = text.parse::<i64>() {
        return if i32::try_from(integer).is_ok() {
            AutoType::Int32
        } else {
            AutoType::Int64
        };
    }
    match text.parse::<f64>() {
        Ok(double) if double.is_finite() => AutoType::Double,
        _ => AutoType::String,
    }
}

/// The one type every value of a column can have: booleans only if all are booleans,
/// numbers only if all are numbers (the widest of them), else strings. Blank values do not
/// count.
pub(crate) fn infer_column<'t>(values: impl IntoIterator<Item = &'t str>) -> AutoType {
    let mut column: Option<AutoType> = None;
    for value in values {
        if value.is_empty() {
            continue;
        }
        let value_type = classify(value);
        column = Some(match (column, value_type) {
            (None, value_type) => value_type,
            (Some(AutoType::String), _) | (_, AutoType::String) => AutoType::String,
            (Some(AutoType::Boolean), AutoType::Boolean) => AutoType::Boolean,
            (Some(AutoType::Boolean), _) | (Some(_), AutoType::Boolean) => AutoType::String,
            (Some(numeric), other) => numeric.max(other),
        });
        if column == Some(AutoType::String) {
            break;
        }
    }
    column.unwrap_or(AutoType::String)
}

fn auto_value(text: &str, auto_type: AutoType) -> Bson {
    let parsed = match auto_type {
        AutoType::Boolean => Some(Bson::Boolean(text == "true")),
        AutoType::Int32 => text.parse().ok().map(Bson::Int32),
        AutoType::Int64 => text.parse().ok().map(Bson::Int64),
        AutoType::Double => text.parse().ok().map(Bson::Double),
        AutoType::String => None,
    };
    parsed.unwrap_or_else(|| Bson::String(text.to_owned()))
}

/// mongoimport's `boolean()`: Go's `ParseBool` spellings (`1`, `t`, `T`, `TRUE`, `true`,
/// `True` and their opposites), and any other number, true unless zero. A blank is false.
fn parse_boolean(text: &str) -> Option<bool> {
    match text {
        "" | "0" | "f" | "F" | "false" | "FALSE" | "False" => Some(false),
        "1" | "t" | "T" | "true" | "TRUE" | "True" => Some(true),
        other => other.parse::<f64>().ok().map(|number| number != 0.0),
    }
}

fn decode_base32(text: &str) -> Option<Vec<u8>> {
    const ALPHABET: &[u8; 32] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
    let mut bytes = Vec::with_capacity(text.len() * 5 / 8);
    let mut buffer = 0_u64;
    let mut bits = 0;
    for c in text.trim_end_matches('=').bytes() {
        let value = ALPHABET.iter().position(|&a| a == c.to_ascii_uppercase())?;
        buffer = (buffer << 5) | value as u64;
        bits += 5;
        if bits >= 8 {
            bits -= 8;
            bytes.push((buffer >> bits) as u8);
            buffer &= (1 << bits) - 1;
        }
    }
    Some(bytes)
}

fn decode_hex(text: &str) -> Option<Vec<u8>> {
    if !text.len().is_multiple_of(2) {
        return None;
    }
    (0..text.len())
        .step_by(2)
        .map(|index| u8::from_str_radix(text.get(index..index + 2)?, 16).ok())
        .collect()
}

/// `text` read as `column_type`, or why it cannot be (`Auto` and `String` always can).
fn typed_value(text: &str, column_type: &ColumnType) -> Result<Bson, String> {
    let trimmed = text.trim();
    let fail = |what: &str| format!("{text:?} is not {what}");
    Ok(match column_type {
        ColumnType::String => Bson::String(text.to_owned()),
        ColumnType::Auto => auto_value(text, classify(text)),
        ColumnType::Int32 => Bson::Int32(trimmed.parse().map_err(|_| fail("an int32"))?),
        ColumnType::Int64 => Bson::Int64(trimmed.parse().map_err(|_| fail("an int64"))?),
        ColumnType::Double => Bson::Double(trimmed.parse().map_err(|_| fail("a double"))?),
        ColumnType::Decimal => {
            Bson::Decimal128(Decimal128::from_str(trimmed).map_err(|_| fail("a decimal"))?)
        }
        ColumnType::Boolean => {
            Bson::Boolean(parse_boolean(trimmed).ok_or_else(|| fail("a boolean"))?)
        }
        ColumnType::Date(layout) => Bson::DateTime(layout.parse_value(text)?),
        ColumnType::Binary(encoding) => {
            let bytes = match encoding {
                BinaryEncoding::Base64 => base64::engine::general_purpose::STANDARD
                    .decode(trimmed)
                    .ok(),
                BinaryEncoding::Base32 => decode_base32(trimmed),
                BinaryEncoding::Hex => decode_hex(trimmed),
            };
            Bson::Binary(Binary {
                subtype: BinarySubtype::Generic,
                bytes: bytes.ok_or_else(|| fail(&format!("{encoding:?}").to_ascii_lowercase()))?,
            })
        }
    })
}

/// Turns rows into documents under one set of columns.
#[derive(Debug)]
pub(crate) struct RowReader {
    columns: Vec<Column>,
    /// For each `auto()` column, the type decided over every row.
    auto_types: Vec<Option<AutoType>>,
    grace: ParseGrace,
    ignore_blanks: bool,
}

impl RowReader {
    /// A reader for `columns`; `all_rows` are every well-formed row of the file, from which
    /// each `auto()` column's type is decided.
    pub(crate) fn new(
        columns: Vec<Column>,
        all_rows: &[&[String]],
        grace: ParseGrace,
        ignore_blanks: bool,
    ) -> RowReader {
        let auto_types = columns
            .iter()
            .enumerate()
            .map(|(index, column)| {
                (column.column_type == ColumnType::Auto).then(|| {
                    infer_column(
                        all_rows
                            .iter()
                            .filter_map(|row| row.get(index).map(String::as_str)),
                    )
                })
            })
            .collect();
        RowReader {
            columns,
            auto_types,
            grace,
            ignore_blanks,
        }
    }

    /// The columns and the type `auto()` decided for each, as `name.type()` (for the
    /// import's summary).
    pub(crate) fn describe_auto_columns(&self) -> Vec<String> {
        self.columns
            .iter()
            .zip(&self.auto_types)
            .filter_map(|(column, auto_type)| {
                auto_type.map(|auto_type| {
                    let type_name = match auto_type {
                        AutoType::Boolean => "boolean",
                        AutoType::Int32 => "int32",
                        AutoType::Int64 => "int64",
                        AutoType::Double => "double",
                        AutoType::String => "string",
                    };
                    format!("{}.{type_name}()", column.name)
                })
            })
            .collect()
    }

    /// The document of one row.
    pub(crate) fn document(&self, fields: &[String]) -> RowOutcome {
        if fields.len() != self.columns.len() {
            return RowOutcome::Rejected(format!(
                "expected {} fields, one per column, found {}",
                self.columns.len(),
                fields.len()
            ));
        }
        let mut document = Document::new();
        for ((column, auto_type), text) in self.columns.iter().zip(&self.auto_types).zip(fields) {
            if self.ignore_blanks && text.is_empty() {
                continue;
            }
            let value = match auto_type {
                // A blank has no value of a number or boolean column's type: it is left
                // out rather than stored as the one string of the column.
                Some(auto_type) if text.is_empty() && *auto_type != AutoType::String => continue,
                Some(auto_type) => auto_value(text, *auto_type),
                None => match typed_value(text, &column.column_type) {
                    Ok(value) => value,
                    Err(problem) => {
                        let reason = format!("field {:?}: {problem}", column.name);
                        match self.grace {
                            ParseGrace::AutoCast => auto_value(text, classify(text)),
                            ParseGrace::SkipField => continue,
                            ParseGrace::SkipRow => return RowOutcome::Rejected(reason),
                            ParseGrace::Stop => return RowOutcome::Stop(reason),
                        }
                    }
                },
            };
            insert_path(&mut document, &column.name, value);
        }
        RowOutcome::Document(document)
    }
}

/// Sets `path` (checked by [`parse_columns`]: no empty part, no clash) to `value`.
fn insert_path(document: &mut Document, path: &str, value: Bson) {
    let mut target = document;
    let mut parts = path.split('.').peekable();
    while let Some(part) = parts.next() {
        if parts.peek().is_none() {
            target.insert(part, value);
            return;
        }
        let entry = target
            .entry(part.to_owned())
            .or_insert_with(|| Bson::Document(Document::new()));
        let Bson::Document(nested) = entry else {
            unreachable!("parse_columns refuses a field that is both a value and a document")
        };
        target = nested;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use spillway::doc;

    fn strings(list: &[&str]) -> Vec<String> {
        list.iter().map(|&s| s.to_owned()).collect()
    }

    #[test]
    fn field_lists_split_outside_parentheses() {
        assert_eq!(
            split_field_list("a.int32(), d.date(Jan 2, 2006) ,name"),
            strings(&["a.int32()", "d.date(Jan 2, 2006)", "name"])
        );
        assert_eq!(field_file_names("a\n\n b.c \r\n"), strings(&["a", "b.c"]));
    }

    #[test]
    fn typed_columns_and_their_errors() {
        let columns = parse_columns(
            &strings(&[
                "n.int32()",
                "price.value.decimal()",
                "when.date(2006-01-02)",
                "x.auto()",
            ]),
            true,
            &ColumnType::String,
        )
        .unwrap();
        assert_eq!(columns[0].name, "n");
        assert_eq!(columns[1].name, "price.value");
        assert_eq!(columns[1].column_type, ColumnType::Decimal);
        assert!(matches!(columns[2].column_type, ColumnType::Date(_)));
        for (spec, expected) in [
            ("n", "the field \"n\" has no type"),
            ("n.int()", "unknown type \"int\" in \"n.int()\""),
            ("n.int32(5)", "int32() takes no argument, found \"5\""),
            ("d.date()", "date() needs a layout"),
            ("b.binary(base16)", "binary() takes base64, base32 or hex"),
            (".int32()", "has a type but no field name"),
        ] {
            let error = parse_columns(&strings(&[spec]), true, &ColumnType::String).unwrap_err();
            assert!(error.contains(expected), "{spec}: {error}");
        }
        let error = parse_columns(&strings(&["a", "a.b"]), false, &ColumnType::String).unwrap_err();
        assert!(error.contains("clash"), "{error}");
        let error = parse_columns(&strings(&["a", "a"]), false, &ColumnType::String).unwrap_err();
        assert!(error.contains("named twice"), "{error}");
        let error = parse_columns(&strings(&["a..b"]), false, &ColumnType::String).unwrap_err();
        assert!(error.contains("empty part"), "{error}");
    }

    #[test]
    fn auto_columns_are_typed_the_same_in_every_row() {
        assert_eq!(infer_column(["02134", "10001"]), AutoType::String);
        assert_eq!(infer_column(["10001", "", "2"]), AutoType::Int32);
        assert_eq!(infer_column(["1", "9007199254740993"]), AutoType::Int64);
        assert_eq!(infer_column(["1", "0.5"]), AutoType::Double);
        assert_eq!(infer_column(["true", "false"]), AutoType::Boolean);
        assert_eq!(infer_column(["true", "1"]), AutoType::String);
        assert_eq!(infer_column([""]), AutoType::String);
        let rows = [strings(&["02134", "1"]), strings(&["10001", "2.5"])];
        let rows: Vec<&[String]> = rows.iter().map(Vec::as_slice).collect();
        let reader = RowReader::new(
            parse_columns(&strings(&["zip", "n"]), false, &ColumnType::Auto).unwrap(),
            &rows,
            ParseGrace::Stop,
            false,
        );
        assert_eq!(
            reader.document(rows[1]),
            RowOutcome::Document(doc! { "zip": "10001", "n": 2.5 })
        );
        assert_eq!(
            reader.document(rows[0]),
            RowOutcome::Document(doc! { "zip": "02134", "n": 1.0 })
        );
        assert_eq!(
            reader.describe_auto_columns(),
            strings(&["zip.string()", "n.double()"])
        );
    }

    #[test]
    fn typed_values_and_parse_grace() {
        let columns = parse_columns(
            &strings(&[
                "n.int32()",
                "b.boolean()",
                "bin.binary(hex)",
                "b32.binary(base32)",
                "b64.binary(base64)",
                "d.date_ms(yyyy-MM-dd)",
            ]),
            true,
            &ColumnType::String,
        )
        .unwrap();
        let row = strings(&["7", "T", "00ff", "MZXW6===", "Zm9v", "2024-05-06"]);
        let reader = RowReader::new(columns.clone(), &[], ParseGrace::Stop, false);
        let binary = |bytes: &[u8]| Binary {
            subtype: BinarySubtype::Generic,
            bytes: bytes.to_vec(),
        };
        assert_eq!(
            reader.document(&row),
            RowOutcome::Document(doc! {
                "n": 7, "b": true, "bin": binary(&[0, 255]), "b32": binary(b"foo"),
                "b64": binary(b"foo"),
                "d": spillway::bson::DateTime::builder().year(2024).month(5).day(6).build().unwrap(),
            })
        );
        let bad = strings(&["seven", "T", "00ff", "MZXW6===", "Zm9v", "2024-05-06"]);
        assert_eq!(
            reader.document(&bad),
            RowOutcome::Stop("field \"n\": \"seven\" is not an int32".to_owned())
        );
        let skip_row = RowReader::new(columns.clone(), &[], ParseGrace::SkipRow, false);
        assert!(matches!(skip_row.document(&bad), RowOutcome::Rejected(_)));
        let skip_field = RowReader::new(columns.clone(), &[], ParseGrace::SkipField, false);
        let RowOutcome::Document(document) = skip_field.document(&bad) else {
            panic!("skipField keeps the row")
        };
        assert!(!document.contains_key("n"));
        let cast = RowReader::new(columns, &[], ParseGrace::AutoCast, true);
        let blank = strings(&["seven", "", "", "", "", ""]);
        assert_eq!(
            cast.document(&blank),
            RowOutcome::Document(doc! { "n": "seven" })
        );
        assert_eq!(
            cast.document(&strings(&["1"])),
            RowOutcome::Rejected("expected 6 fields, one per column, found 1".to_owned())
        );
    }
}
