//! A small RFC 4180 CSV reader and writer, and a TSV reader.
//!
//! Fields are separated by commas and rows by `\n` or `\r\n`; a field in double quotes may
//! hold commas, line breaks and doubled quotes (`""`). A quote inside an unquoted field, or
//! text after a closing quote, is an error for that row only: the reader resumes at the next
//! line. TSV is read as mongoimport reads it: tabs and line breaks, no quoting. How a row
//! becomes a document is `columns`'s business. This module must never touch a database.

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

/// The rows of a TSV text, as mongoimport reads TSV: fields separated by tabs, one row per
/// line (a trailing `\r` dropped), no quoting; empty lines are skipped.
pub fn tsv_rows(text: &str) -> impl Iterator<Item = CsvRow> + '_ {
    let mut offset = 0;
    text.split_inclusive('\n')
        .enumerate()
        .filter_map(move |(index, line)| {
            offset += line.len();
            let content = line.trim_end_matches('\n').trim_end_matches('\r');
            (!content.is_empty()).then(|| CsvRow {
                fields: content.split('\t').map(str::to_owned).collect(),
                line: index + 1,
                end_offset: offset,
            })
        })
}

/// `text` as one CSV field: in double quotes (inner quotes doubled) when it holds a comma,
/// a quote or a line break, or starts or ends with a space, as is otherwise.
pub fn csv_field(text: &str) -> std::borrow::Cow<'_, str> {
    let needs_quotes =
        text.contains([',', '"', '\n', '\r']) || text.starts_with(' ') || text.ends_with(' ');
    if needs_quotes {
        std::borrow::Cow::Owned(format!("\"{}\"", text.replace('"', "\"\"")))
    } else {
        std::borrow::Cow::Borrowed(text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
    fn tsv_rows_split_on_tabs_without_quoting() {
        let rows: Vec<CsvRow> = tsv_rows("a\tb\r\n\n\"x\"\t\n").collect();
        assert_eq!(rows.len(), 2);
        assert_eq!(rows[0].fields, ["a", "b"]);
        assert_eq!(
            (rows[1].line, rows[1].fields.clone()),
            (3, vec!["\"x\"".to_owned(), String::new()])
        );
        assert_eq!(rows[1].end_offset, 11);
    }

    #[test]
    fn csv_fields_are_quoted_only_when_needed() {
        assert_eq!(csv_field("plain"), "plain");
        assert_eq!(csv_field("a, b"), "\"a, b\"");
        assert_eq!(csv_field("say \"hi\""), "\"say \"\"hi\"\"\"");
        assert_eq!(csv_field("two\nlines"), "\"two\nlines\"");
        assert_eq!(csv_field(" padded"), "\" padded\"");
        let row = format!("{},{}\n", csv_field("x,y"), csv_field("say \"hi\""));
        let read: Vec<_> = CsvRecords::new(&row).collect();
        assert_eq!(read[0].as_ref().unwrap().fields, ["x,y", "say \"hi\""]);
    }
}
