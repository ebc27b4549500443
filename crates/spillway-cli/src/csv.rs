//! A small RFC 4180 CSV reader, and the rule that turns a row into a document.
//!
//! Fields are separated by commas and rows by `\n` or `\r\n`; a field in double quotes may
//! hold commas, line breaks and doubled quotes (`""`). A quote inside an unquoted field, or
//! text after a closing quote, is an error for that row only: the reader resumes at the next
//! line. Values are strings unless type inference is asked for, then `true`/`false` are
//! booleans and numbers are Int32, Int64 or Double (mongoimport's `--columnsHaveTypes`
//! without the type annotations). This module must never touch a database.

use spillway::bson::{Bson, Document};

/// One row: its fields, the line it starts on, and the byte offset just past it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CsvRow {
    /// The fields, unquoted.
    pub fields: Vec<String>,
    /// 1-based line where the row starts.
    pub line: usize,
    /// Offset just past the row's line break.
    pub end_offset: usize,
}

/// A row that could not be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CsvError {
    /// 1-based line where the row starts.
    pub line: usize,
    /// Offset just past the rest of the line that was skipped.
    pub end_offset: usize,
    /// What is wrong.
    pub message: String,
}

impl std::fmt::Display for CsvError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "line {}: {}", self.line, self.message)
    }
}

/// The rows of a CSV text, in order; empty lines are skipped.
#[derive(Debug, Clone)]
pub struct CsvRecords<'a> {
    text: &'a str,
    offset: usize,
    line: usize,
}

impl<'a> CsvRecords<'a> {
    /// A reader at the start of `text`.
    pub fn new(text: &'a str) -> CsvRecords<'a> {
        CsvRecords {
            text,
            offset: 0,
            line: 1,
        }
    }

    /// Skips to just past the next line break (after an error).
    fn skip_line(&mut self) {
        match self.text[self.offset..].find('\n') {
            Some(position) => {
                self.offset += position + 1;
                self.line += 1;
            }
            None => self.offset = self.text.len(),
        }
    }

    fn error(&mut self, line: usize, message: String) -> CsvError {
        self.skip_line();
        CsvError {
            line,
            end_offset: self.offset,
            message,
        }
    }
}

impl Iterator for CsvRecords<'_> {
    type Item = Result<CsvRow, CsvError>;

    fn next(&mut self) -> Option<Self::Item> {
        // Skip empty lines.
        loop {
            let rest = &self.text[self.offset..];
            if rest.starts_with("\r\n") {
                self.offset += 2;
            } else if rest.starts_with('\n') {
                self.offset += 1;
            } else {
                break;
            }
            self.line += 1;
        }
        if self.offset >= self.text.len() {
            return None;
        }
        let start_line = self.line;
        let mut fields = Vec::new();
        let mut field = String::new();
        let mut chars = self.text[self.offset..].char_indices().peekable();
        let mut in_quotes = false;
        let mut field_was_quoted = false;
        let mut after_closing_quote = false;
        loop {
            let Some((position, c)) = chars.next() else {
                if in_quotes {
                    // Everything to the end of the file is inside the quotes: nothing is left.
                    self.offset = self.text.len();
                    return Some(Err(CsvError {
                        line: start_line,
                        end_offset: self.offset,
                        message: "a quoted field is not closed before the end of the file"
                            .to_owned(),
                    }));
                }
                fields.push(std::mem::take(&mut field));
                self.offset = self.text.len();
                break;
            };
            if in_quotes {
                match c {
                    '"' if chars.peek().is_some_and(|&(_, next)| next == '"') => {
                        chars.next();
                        field.push('"');
                    }
                    '"' => {
                        in_quotes = false;
                        after_closing_quote = true;
                    }
                    '\n' => {
                        self.line += 1;
                        field.push('\n');
                    }
                    other => field.push(other),
                }
                continue;
            }
            match c {
                ',' => {
                    fields.push(std::mem::take(&mut field));
                    field_was_quoted = false;
                    after_closing_quote = false;
                }
                '\r' if chars.peek().is_some_and(|&(_, next)| next == '\n') => {}
                '\n' => {
                    fields.push(std::mem::take(&mut field));
                    self.offset += position + 1;
                    self.line += 1;
                    break;
                }
                '"' if field.is_empty() && !field_was_quoted => {
                    in_quotes = true;
                    field_was_quoted = true;
                }
                other if after_closing_quote => {
                    let line = self.line;
                    self.offset += position;
                    return Some(Err(self.error(
                        line,
                        format!(
                            "field {} has {other:?} after its closing quote",
                            fields.len() + 1
                        ),
                    )));
                }
                '"' => {
                    let line = self.line;
                    self.offset += position;
                    return Some(Err(self.error(
                        line,
                        format!(
                            "field {} has a quote inside an unquoted value (quote the whole field and double the quote)",
                            fields.len() + 1
                        ),
                    )));
                }
                other => field.push(other),
            }
        }
        Some(Ok(CsvRow {
            fields,
            line: start_line,
            end_offset: self.offset,
        }))
    }
}

/// The document of one CSV row under `header`; `a.b` header names make nested documents.
pub fn csv_document(
    header: &[String],
    fields: &[String],
    infer_types: bool,
) -> Result<Document, String> {
    if fields.len() != header.len() {
        return Err(format!(
            "expected {} fields as in the header, found {}",
            header.len(),
            fields.len()
        ));
    }
    let mut document = Document::new();
    for (name, text) in header.iter().zip(fields) {
        let value = if infer_types {
            infer_value(text)
        } else {
            Bson::String(text.clone())
        };
        insert_dotted(&mut document, name, value)?;
    }
    Ok(document)
}

fn insert_dotted(document: &mut Document, name: &str, value: Bson) -> Result<(), String> {
    let mut target = document;
    let mut parts = name.split('.').peekable();
    while let Some(part) = parts.next() {
        if part.is_empty() {
            return Err(format!("the header field name {name:?} has an empty part"));
        }
        if parts.peek().is_none() {
            if target.contains_key(part) {
                return Err(format!("the header names field {name:?} twice"));
            }
            target.insert(part, value);
            return Ok(());
        }
        let entry = target
            .entry(part.to_owned())
            .or_insert_with(|| Bson::Document(Document::new()));
        target = match entry {
            Bson::Document(nested) => nested,
            _ => {
                return Err(format!(
                    "the header uses {part:?} both as a value and as a document"
                ));
            }
        };
    }
    Ok(())
}

/// `true`, `false`, integers and decimal numbers become typed values; anything else stays a
/// string (including numbers with leading zeros such as zip codes, which are identifiers).
fn infer_value(text: &str) -> Bson {
    match text {
        "true" => return Bson::Boolean(true),
        "false" => return Bson::Boolean(false),
        _ => {}
    }
    let digits = text.strip_prefix('-').unwrap_or(text);
    let leading_zero = digits.len() > 1 && digits.starts_with('0') && !digits.starts_with("0.");
    let numeric = !digits.is_empty()
        && digits.starts_with(|c: char| c.is_ascii_digit())
        && digits
            .chars()
            .all(|c| c.is_ascii_digit() || matches!(c, '.' | 'e' | 'E' | '+' | '-'));
    if !numeric || leading_zero {
        return Bson::String(text.to_owned());
    }
    if let Ok(integer) = text.parse::<i64>() {
        return i32::try_from(integer).map_or(Bson::Int64(integer), Bson::Int32);
    }
    match text.parse::<f64>() {
        Ok(double) if double.is_finite() => Bson::Double(double),
        _ => Bson::String(text.to_owned()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use spillway::doc;

    fn rows(text: &str) -> Vec<Result<(usize, Vec<&str>), String>> {
        let owned: Vec<Result<CsvRow, CsvError>> = CsvRecords::new(text).collect();
        owned
            .iter()
            .map(|row| match row {
                Ok(row) => Ok((
                    row.line,
                    row.fields
                        .iter()
                        .map(|field| Box::leak(field.clone().into_boxed_str()) as &str)
                        .collect(),
                )),
                Err(error) => Err(error.to_string()),
            })
            .collect()
    }

    #[test]
    fn reads_quoted_fields_line_breaks_and_doubled_quotes() {
        assert_eq!(
            rows("a,b\n1,\"x, y\"\r\n\n\"multi\nline\",\"say \"\"hi\"\"\"\n,\n"),
            vec![
                Ok((1, vec!["a", "b"])),
                Ok((2, vec!["1", "x, y"])),
                Ok((4, vec!["multi\nline", "say \"hi\""])),
                Ok((6, vec!["", ""])),
            ]
        );
    }

    #[test]
    fn a_bad_row_is_an_error_and_reading_resumes_on_the_next_line() {
        assert_eq!(
            rows("a,b\n1,x\"y\n2,\"ok\"z\n3,4\n5,\"open"),
            vec![
                Ok((1, vec!["a", "b"])),
                Err("line 2: field 2 has a quote inside an unquoted value (quote the whole field and double the quote)".to_owned()),
                Err("line 3: field 2 has 'z' after its closing quote".to_owned()),
                Ok((4, vec!["3", "4"])),
                Err("line 5: a quoted field is not closed before the end of the file".to_owned()),
            ]
        );
    }

    #[test]
    fn rows_become_documents_with_optional_types() {
        let header = [
            "name".to_owned(),
            "price.value".to_owned(),
            "price.n".to_owned(),
            "zip".to_owned(),
        ];
        let fields = [
            "Widget".to_owned(),
            "119.99".to_owned(),
            "3".to_owned(),
            "02134".to_owned(),
        ];
        assert_eq!(
            csv_document(&header, &fields, false).unwrap(),
            doc! { "name": "Widget", "price": { "value": "119.99", "n": "3" }, "zip": "02134" }
        );
        assert_eq!(
            csv_document(&header, &fields, true).unwrap(),
            doc! { "name": "Widget", "price": { "value": 119.99, "n": 3 }, "zip": "02134" }
        );
        assert_eq!(infer_value("true"), Bson::Boolean(true));
        assert_eq!(infer_value("-12"), Bson::Int32(-12));
        assert_eq!(
            infer_value("9007199254740993"),
            Bson::Int64(9_007_199_254_740_993)
        );
        assert_eq!(infer_value("1e3"), Bson::Double(1000.0));
        assert_eq!(infer_value("0.5"), Bson::Double(0.5));
        assert_eq!(infer_value("1-2"), Bson::String("1-2".to_owned()));
        assert_eq!(infer_value(""), Bson::String(String::new()));
        assert!(
            csv_document(&header, &fields[..2], false)
                .unwrap_err()
                .contains("expected 4 fields")
        );
        let clash = ["a".to_owned(), "a.b".to_owned()];
        assert!(csv_document(&clash, &["1".to_owned(), "2".to_owned()], false).is_err());
    }
}
