//! Cuts shell input into statements, and tells the interactive shell whether the input typed
//! so far is complete.
//!
//! A statement ends at a `;` or at the end of a line, but only where every bracket opened
//! inside it is closed, so a statement spans as many lines as its brackets need. A line
//! that starts with `.` continues the previous statement (`db.sales.find()` then
//! `.sort({year: -1})` on the next line), as in JavaScript. Strings, comments and regular
//! expression literals are skipped over, so a `;` or a bracket inside them does not count.
//!
//! This module only finds boundaries: it never reports syntax errors. Whatever is wrong
//! inside a statement is for the statement parser to say, with the statement's position.

use spillway_doc::shell::Position;

/// The text of one statement and where it starts in the whole input.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StatementSource<'a> {
    /// The statement, from its first to its last significant character (no `;`).
    pub text: &'a str,
    /// Where `text` starts in the input.
    pub start: Position,
}

/// The statements of `source`, in order, and whether the input is complete.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Split<'a> {
    /// Every statement found (the last one may be unfinished when `complete` is false).
    pub statements: Vec<StatementSource<'a>>,
    /// False when a bracket or a `/* */` comment is still open at the end of the input: the
    /// interactive shell then asks for another line.
    pub complete: bool,
}

/// What the scanner is inside of.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Context {
    Code,
    String(char),
    LineComment,
    BlockComment,
    Regex { in_class: bool },
}

/// Splits `source` into statements.
pub fn split_statements(source: &str) -> Split<'_> {
    let mut statements = Vec::new();
    let mut context = Context::Code;
    // The brackets still open, innermost last; `broken` once a closer does not match (no
    // later line can complete such a statement, so it ends at its line and the parser
    // reports the mismatch).
    let mut open: Vec<char> = Vec::new();
    let mut broken = false;
    let mut position = Position::START;
    // The statement being read: where it started, and the end of its last significant
    // character.
    let mut current: Option<(Position, usize)> = None;
    let mut last_significant = ' ';
    let mut newline_since_significant = false;
    let mut chars = source.char_indices().peekable();
    while let Some((offset, c)) = chars.next() {
        let next = chars.peek().map(|&(_, next)| next);
        let here = position;
        position.offset = offset + c.len_utf8();
        if c == '\n' {
            position.line += 1;
            position.column = 1;
        } else {
            position.column += 1;
        }
        match context {
            Context::String(quote) => {
                if c == '\\' {
                    if let Some((_, escaped)) = chars.next() {
                        position.offset += escaped.len_utf8();
                        position.column += 1;
                        if escaped == '\n' {
                            position.line += 1;
                            position.column = 1;
                        }
                    }
                } else if c == quote || c == '\n' {
                    // A line break ends an unterminated string: the parser reports it.
                    context = Context::Code;
                }
                if c != '\n' {
                    extend(&mut current, position.offset);
                }
                continue;
            }
            Context::LineComment => {
                if c == '\n' {
                    context = Context::Code;
                    newline_since_significant = true;
                }
                continue;
            }
            Context::BlockComment => {
                if c == '*' && next == Some('/') {
                    chars.next();
                    position.offset += 1;
                    position.column += 1;
                    context = Context::Code;
                } else if c == '\n' {
                    newline_since_significant = true;
                }
                continue;
            }
            Context::Regex { in_class } => {
                match c {
                    '\\' => {
                        if let Some((_, escaped)) = chars.next() {
                            position.offset += escaped.len_utf8();
                            position.column += 1;
                        }
                    }
                    '[' => context = Context::Regex { in_class: true },
                    ']' => context = Context::Regex { in_class: false },
                    '/' if !in_class => context = Context::Code,
                    '\n' => context = Context::Code,
                    _ => {}
                }
                if c != '\n' {
                    extend(&mut current, position.offset);
                }
                continue;
            }
            Context::Code => {}
        }
        if c.is_whitespace() || c == '\u{feff}' {
            if c == '\n' {
                newline_since_significant = true;
            }
            continue;
        }
        if c == '/' && next == Some('/') {
            context = Context::LineComment;
            continue;
        }
        if c == '/' && next == Some('*') {
            chars.next();
            position.offset += 1;
            position.column += 1;
            context = Context::BlockComment;
            continue;
        }
        if c == ';' && (open.is_empty() || broken) {
            finish(source, &mut current, &mut statements);
            open.clear();
            broken = false;
            last_significant = ';';
            newline_since_significant = false;
            continue;
        }
        let continues = c == '.' || last_significant == '.';
        if newline_since_significant && (open.is_empty() || broken) && !continues {
            finish(source, &mut current, &mut statements);
            open.clear();
            broken = false;
        }
        newline_since_significant = false;
        match c {
            '(' | '[' | '{' => open.push(c),
            ')' | ']' | '}' => {
                let opener = match c {
                    ')' => '(',
                    ']' => '[',
                    _ => '{',
                };
                if open.last() == Some(&opener) {
                    open.pop();
                } else {
                    broken = true;
                }
            }
            '"' | '\'' | '`' => context = Context::String(c),
            '/' => context = Context::Regex { in_class: false },
            _ => {}
        }
        if current.is_none() {
            current = Some((here, position.offset));
        }
        extend(&mut current, position.offset);
        last_significant = c;
    }
    let complete = (open.is_empty() || broken) && context != Context::BlockComment;
    finish(source, &mut current, &mut statements);
    Split {
        statements,
        complete,
    }
}

fn extend(current: &mut Option<(Position, usize)>, end: usize) {
    if let Some((_, current_end)) = current {
        *current_end = end;
    }
}

fn finish<'a>(
    source: &'a str,
    current: &mut Option<(Position, usize)>,
    statements: &mut Vec<StatementSource<'a>>,
) {
    if let Some((start, end)) = current.take() {
        statements.push(StatementSource {
            text: &source[start.offset..end],
            start,
        });
    }
}

/// True when `source` can be run as it is: every bracket and block comment is closed.
pub fn is_complete(source: &str) -> bool {
    split_statements(source).complete
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(source: &str, expected: &[(&str, usize, usize)], complete: bool) {
        let split = split_statements(source);
        let found: Vec<(&str, usize, usize)> = split
            .statements
            .iter()
            .map(|statement| (statement.text, statement.start.line, statement.start.column))
            .collect();
        assert_eq!(found, expected, "statements of {source:?}");
        assert_eq!(split.complete, complete, "completeness of {source:?}");
    }

    #[test]
    fn statements_end_at_semicolons_and_line_ends() {
        check("a(); b()", &[("a()", 1, 1), ("b()", 1, 6)], true);
        check("a()\n  b()\n", &[("a()", 1, 1), ("b()", 2, 3)], true);
        check(";;\n;", &[], true);
        check("", &[], true);
        check("show collections", &[("show collections", 1, 1)], true);
    }

    #[test]
    fn brackets_keep_a_statement_open_across_lines() {
        check(
            "db.a.insertOne({\n  x: 1\n})\ndb.a.find()",
            &[
                ("db.a.insertOne({\n  x: 1\n})", 1, 1),
                ("db.a.find()", 4, 1),
            ],
            true,
        );
        check(
            "db.a.insertOne({\n  x: [1,",
            &[("db.a.insertOne({\n  x: [1,", 1, 1)],
            false,
        );
    }

    #[test]
    fn a_mismatched_bracket_ends_the_statement_at_its_line() {
        // `[1, 2}` can never be completed by more lines: the statement ends here and the
        // parser reports the mismatch, instead of swallowing the lines that follow.
        let split = split_statements("db.a.insertOne({ a: [1, 2}\nshow collections");
        assert!(split.complete);
        let texts: Vec<&str> = split.statements.iter().map(|s| s.text).collect();
        assert_eq!(texts, ["db.a.insertOne({ a: [1, 2}", "show collections"]);
        assert!(!is_complete("db.a.insertOne({ a: [1, 2]"));
    }

    #[test]
    fn a_leading_or_trailing_dot_continues_the_statement() {
        check(
            "db.a.find()\n  .sort({x: 1})\n  .limit(2)\nit",
            &[
                ("db.a.find()\n  .sort({x: 1})\n  .limit(2)", 1, 1),
                ("it", 4, 1),
            ],
            true,
        );
        check("db.a.\nfind()", &[("db.a.\nfind()", 1, 1)], true);
    }

    #[test]
    fn strings_comments_and_regexes_hide_brackets_and_semicolons() {
        check(
            "db.a.find({s: '(;'}) // ) ;\ndb.b.find({r: /[/;(]/})",
            &[
                ("db.a.find({s: '(;'})", 1, 1),
                ("db.b.find({r: /[/;(]/})", 2, 1),
            ],
            true,
        );
        check("db.a.find(/* ( */)", &[("db.a.find(/* ( */)", 1, 1)], true);
        check("db.a.find() /* open", &[("db.a.find()", 1, 1)], false);
        check(
            "db.a.insertOne({s: \"a\\\"(\"})",
            &[("db.a.insertOne({s: \"a\\\"(\"})", 1, 1)],
            true,
        );
    }

    #[test]
    fn an_unterminated_string_ends_at_its_line() {
        check(
            "db.a.insertOne({s: 'oops})\ndb.b.find()",
            &[("db.a.insertOne({s: 'oops})\ndb.b.find()", 1, 1)],
            false,
        );
    }

    #[test]
    fn columns_count_characters() {
        check("é; db.x()", &[("é", 1, 1), ("db.x()", 1, 4)], true);
    }
}
