//! The tokenizer shared by shell literals and Extended JSON.
//!
//! It turns text into [`Token`]s that carry their [`Span`] (byte offsets plus 1-based line
//! and character column), so that every later error can point at the text. It knows nothing
//! about BSON: it only reads punctuation, identifiers, strings, numbers and regular
//! expression literals. It must never guess: text that is not a token is an error that says
//! what was found and where.
//!
//! There is no division operator in the shell grammar, so a `/` that does not start a
//! comment always starts a regular expression literal and the lexer needs no context from
//! the parser.

use std::fmt;

use crate::error::{DocError, Result};

/// Which language the text is written in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dialect {
    /// mongosh input: JavaScript-like literals with comments, single quotes, unquoted keys,
    /// trailing commas, regular expressions, hexadecimal numbers and constructor calls.
    Shell,
    /// Strict JSON (RFC 8259), as Extended JSON files are written.
    Json,
}

/// A place in the source text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Position {
    /// Byte offset from the start of the text.
    pub offset: usize,
    /// 1-based line number.
    pub line: usize,
    /// 1-based column, counted in characters (not bytes).
    pub column: usize,
}

impl Position {
    /// The first character of a text.
    pub const START: Position = Position {
        offset: 0,
        line: 1,
        column: 1,
    };
}

impl fmt::Display for Position {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}, column {}", self.line, self.column)
    }
}

/// The stretch of source text a token or expression was read from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Span {
    /// Where it starts.
    pub start: Position,
    /// Just past its last character.
    pub end: Position,
}

impl Span {
    /// The span from the start of `self` to the end of `other`.
    pub fn to(self, other: Span) -> Span {
        Span {
            start: self.start,
            end: other.end,
        }
    }
}

/// A number as written, before the rule that picks its BSON type is applied.
///
/// The lexer never produces negative numbers: a minus sign is a separate token that the
/// parser folds into the literal that follows it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum NumberLiteral {
    /// Written without a fraction or an exponent (decimal, `0x`, `0o` or `0b`) and small
    /// enough for an `i128`.
    Integer(i128),
    /// Written with a fraction or an exponent, an integer too large for an `i128`,
    /// `Infinity`, `NaN`, or `-0`.
    Double(f64),
}

impl NumberLiteral {
    /// The literal with its sign flipped. `-0` is the double `-0.0`, as in JavaScript.
    pub fn negated(self) -> NumberLiteral {
        match self {
            NumberLiteral::Integer(0) => NumberLiteral::Double(-0.0),
            NumberLiteral::Integer(value) => NumberLiteral::Integer(-value),
            NumberLiteral::Double(value) => NumberLiteral::Double(-value),
        }
    }
}

impl fmt::Display for NumberLiteral {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            NumberLiteral::Integer(value) => write!(f, "{value}"),
            NumberLiteral::Double(value) => write!(f, "{value:?}"),
        }
    }
}

/// What a token is.
#[derive(Debug, Clone, PartialEq)]
pub enum TokenKind {
    /// `{`
    LeftBrace,
    /// `}`
    RightBrace,
    /// `[`
    LeftBracket,
    /// `]`
    RightBracket,
    /// `(`
    LeftParen,
    /// `)`
    RightParen,
    /// `,`
    Comma,
    /// `:`
    Colon,
    /// `.`
    Dot,
    /// `;`
    Semicolon,
    /// `=`
    Equals,
    /// `-`
    Minus,
    /// `+`
    Plus,
    /// A name: `ObjectId`, `$set`, `true`, `db`... Keywords are identifiers too; the parser
    /// decides what they mean.
    Identifier(String),
    /// A quoted string, escapes already decoded.
    String(String),
    /// An unsigned number.
    Number(NumberLiteral),
    /// A regular expression literal `/pattern/flags`; the pattern is kept as written
    /// (escapes included), the way JavaScript's `RegExp.source` keeps it.
    Regex {
        /// The text between the slashes.
        pattern: String,
        /// The flags after the closing slash, as written.
        flags: String,
    },
    /// The end of the text.
    End,
}

impl fmt::Display for TokenKind {
    /// How error messages name a token: `'}'`, `identifier 'foo'`, `end of input`...
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let punctuation = match self {
            TokenKind::LeftBrace => "{",
            TokenKind::RightBrace => "}",
            TokenKind::LeftBracket => "[",
            TokenKind::RightBracket => "]",
            TokenKind::LeftParen => "(",
            TokenKind::RightParen => ")",
            TokenKind::Comma => ",",
            TokenKind::Colon => ":",
            TokenKind::Dot => ".",
            TokenKind::Semicolon => ";",
            TokenKind::Equals => "=",
            TokenKind::Minus => "-",
            TokenKind::Plus => "+",
            TokenKind::Identifier(name) => return write!(f, "identifier '{}'", shorten(name)),
            TokenKind::String(text) => return write!(f, "string {:?}", shorten(text)),
            TokenKind::Number(number) => return write!(f, "number {number}"),
            TokenKind::Regex { pattern, flags } => {
                return write!(f, "regular expression /{}/{flags}", shorten(pattern));
            }
            TokenKind::End => return f.write_str("end of input"),
        };
        write!(f, "'{punctuation}'")
    }
}

/// Long strings in error messages are cut to keep the message on one line.
fn shorten(text: &str) -> String {
    const MAX_CHARS: usize = 24;
    if text.chars().count() <= MAX_CHARS {
        text.to_owned()
    } else {
        let mut short: String = text.chars().take(MAX_CHARS).collect();
        short.push_str("...");
        short
    }
}

/// One token and where it was read.
#[derive(Debug, Clone, PartialEq)]
pub struct Token {
    /// What it is.
    pub kind: TokenKind,
    /// Where it is.
    pub span: Span,
}

/// Reads tokens one at a time from a text.
#[derive(Debug, Clone)]
pub struct Lexer<'a> {
    source: &'a str,
    position: Position,
    dialect: Dialect,
}

/// A syntax error at `position`.
pub(crate) fn syntax_error(position: Position, message: impl Into<String>) -> DocError {
    DocError::Syntax {
        line: position.line,
        column: position.column,
        message: message.into(),
    }
}

fn is_identifier_start(c: char) -> bool {
    c == '$' || c == '_' || c.is_alphabetic()
}

fn is_identifier_part(c: char) -> bool {
    is_identifier_start(c) || c.is_alphanumeric()
}

/// Line terminators end `//` comments and may not appear inside strings or regexes.
fn is_line_terminator(c: char) -> bool {
    matches!(c, '\n' | '\r' | '\u{2028}' | '\u{2029}')
}

impl<'a> Lexer<'a> {
    /// A lexer positioned at the start of `source`.
    pub fn new(source: &'a str, dialect: Dialect) -> Self {
        Lexer {
            source,
            position: Position::START,
            dialect,
        }
    }

    /// A lexer over `source`, a piece of a larger text that starts at line `start.line`,
    /// column `start.column` of it (`start.offset` is ignored). Spans and errors then give
    /// lines and columns in the larger text, so that a shell can parse one statement of a
    /// script and still report where in the script a problem is; offsets stay relative to
    /// `source`.
    pub fn starting_at(source: &'a str, dialect: Dialect, start: Position) -> Self {
        Lexer {
            source,
            position: Position {
                offset: 0,
                line: start.line,
                column: start.column,
            },
            dialect,
        }
    }

    /// The text being read.
    pub fn source(&self) -> &'a str {
        self.source
    }

    /// Which language the lexer reads.
    pub fn dialect(&self) -> Dialect {
        self.dialect
    }

    /// Where the next call to [`Lexer::next_token`] starts reading (before any whitespace).
    pub fn position(&self) -> Position {
        self.position
    }

    fn peek(&self) -> Option<char> {
        self.source[self.position.offset..].chars().next()
    }

    fn peek_second(&self) -> Option<char> {
        let mut rest = self.source[self.position.offset..].chars();
        rest.next();
        rest.next()
    }

    /// Consumes one character, keeping line and column up to date. Positions count lines at
    /// `\n` only, as every tool that shows the offending line does (`\r\n` is one break; a
    /// lone `\r` moves neither line nor column).
    fn bump(&mut self) -> Option<char> {
        let c = self.peek()?;
        self.position.offset += c.len_utf8();
        if c == '\n' {
            self.position.line += 1;
            self.position.column = 1;
        } else if c != '\r' {
            self.position.column += 1;
        }
        Some(c)
    }

    fn bump_if(&mut self, expected: char) -> bool {
        if self.peek() == Some(expected) {
            self.bump();
            true
        } else {
            false
        }
    }

    fn is_whitespace(&self, c: char) -> bool {
        match self.dialect {
            Dialect::Json => matches!(c, ' ' | '\t' | '\n' | '\r'),
            Dialect::Shell => c.is_whitespace() || c == '\u{feff}',
        }
    }

    /// Skips whitespace and comments.
    fn skip_trivia(&mut self) -> Result<()> {
        loop {
            match self.peek() {
                Some(c) if self.is_whitespace(c) => {
                    self.bump();
                }
                Some('/') if matches!(self.peek_second(), Some('/' | '*')) => {
                    if self.dialect == Dialect::Json {
                        return Err(syntax_error(
                            self.position,
                            "expected a JSON value, found a comment (comments are not allowed in JSON)",
                        ));
                    }
                    let start = self.position;
                    self.bump();
                    if self.bump() == Some('/') {
                        while self.peek().is_some_and(|c| !is_line_terminator(c)) {
                            self.bump();
                        }
                    } else {
                        loop {
                            match self.bump() {
                                None => {
                                    return Err(syntax_error(
                                        start,
                                        "unterminated comment: expected '*/' before the end of input",
                                    ));
                                }
                                Some('*') if self.bump_if('/') => break,
                                Some(_) => {}
                            }
                        }
                    }
                }
                _ => return Ok(()),
            }
        }
    }

    /// Reads the next token; at the end of the text, returns [`TokenKind::End`] (again and
    /// again).
    pub fn next_token(&mut self) -> Result<Token> {
        self.skip_trivia()?;
        let start = self.position;
        let Some(c) = self.peek() else {
            return Ok(Token {
                kind: TokenKind::End,
                span: Span { start, end: start },
            });
        };
        let kind = match c {
            '{' => self.punctuation(TokenKind::LeftBrace),
            '}' => self.punctuation(TokenKind::RightBrace),
            '[' => self.punctuation(TokenKind::LeftBracket),
            ']' => self.punctuation(TokenKind::RightBracket),
            '(' => self.punctuation(TokenKind::LeftParen),
            ')' => self.punctuation(TokenKind::RightParen),
            ',' => self.punctuation(TokenKind::Comma),
            ':' => self.punctuation(TokenKind::Colon),
            ';' => self.punctuation(TokenKind::Semicolon),
            '=' => self.punctuation(TokenKind::Equals),
            '-' => self.punctuation(TokenKind::Minus),
            '+' => self.punctuation(TokenKind::Plus),
            '.' if self.dialect == Dialect::Shell
                && self.peek_second().is_some_and(|c| c.is_ascii_digit()) =>
            {
                self.number()?
            }
            '.' => self.punctuation(TokenKind::Dot),
            '"' => self.string('"')?,
            '\'' if self.dialect == Dialect::Shell => self.string('\'')?,
            '/' if self.dialect == Dialect::Shell => self.regex()?,
            c if c.is_ascii_digit() => self.number()?,
            c if is_identifier_start(c) => self.identifier(),
            '\'' => {
                return Err(syntax_error(
                    start,
                    "expected a JSON value, found \"'\" (JSON strings use double quotes)",
                ));
            }
            other => {
                return Err(syntax_error(
                    start,
                    format!("unexpected character {other:?}"),
                ));
            }
        };
        Ok(Token {
            kind,
            span: Span {
                start,
                end: self.position,
            },
        })
    }

    fn punctuation(&mut self, kind: TokenKind) -> TokenKind {
        self.bump();
        kind
    }

    fn identifier(&mut self) -> TokenKind {
        let start = self.position.offset;
        while self.peek().is_some_and(is_identifier_part) {
            self.bump();
        }
        TokenKind::Identifier(self.source[start..self.position.offset].to_owned())
    }

    fn number(&mut self) -> Result<TokenKind> {
        let start = self.position;
        let radix = match (self.peek(), self.peek_second()) {
            (Some('0'), Some('x' | 'X')) => Some(16),
            (Some('0'), Some('o' | 'O')) => Some(8),
            (Some('0'), Some('b' | 'B')) => Some(2),
            _ => None,
        };
        let literal = match radix {
            Some(radix) if self.dialect == Dialect::Shell => self.radix_number(start, radix)?,
            _ => self.decimal_number(start)?,
        };
        if let Some(c) = self.peek().filter(|&c| is_identifier_part(c)) {
            return Err(syntax_error(
                self.position,
                format!(
                    "unexpected character {c:?} right after the number '{}'",
                    &self.source[start.offset..self.position.offset]
                ),
            ));
        }
        Ok(TokenKind::Number(literal))
    }

    fn radix_number(&mut self, start: Position, radix: u32) -> Result<NumberLiteral> {
        self.bump();
        self.bump();
        let digits_start = self.position.offset;
        while self.peek().is_some_and(|c| c.is_digit(radix)) {
            self.bump();
        }
        let digits = &self.source[digits_start..self.position.offset];
        if digits.is_empty() {
            let prefix = &self.source[start.offset..digits_start];
            return Err(syntax_error(
                self.position,
                format!(
                    "expected base-{radix} digits after '{prefix}', found {}",
                    self.describe_next()
                ),
            ));
        }
        if let Ok(value) = i128::from_str_radix(digits, radix) {
            return Ok(NumberLiteral::Integer(value));
        }
        // Too large for an i128: like JavaScript, keep the nearest double.
        let value = digits.chars().fold(0.0_f64, |value, digit| {
            value * f64::from(radix) + f64::from(digit.to_digit(radix).unwrap_or(0))
        });
        Ok(NumberLiteral::Double(value))
    }

    fn decimal_number(&mut self, start: Position) -> Result<NumberLiteral> {
        let shell = self.dialect == Dialect::Shell;
        let mut integer_digits = 0;
        while self.peek().is_some_and(|c| c.is_ascii_digit()) {
            self.bump();
            integer_digits += 1;
        }
        if integer_digits > 1 && self.source[start.offset..].starts_with('0') {
            return Err(syntax_error(
                start,
                format!(
                    "invalid number '{}': leading zeros are not allowed",
                    &self.source[start.offset..self.position.offset]
                ),
            ));
        }
        let mut is_integer = true;
        if self.peek() == Some('.') {
            is_integer = false;
            self.bump();
            let mut fraction_digits = 0;
            while self.peek().is_some_and(|c| c.is_ascii_digit()) {
                self.bump();
                fraction_digits += 1;
            }
            if fraction_digits == 0 && (!shell || integer_digits == 0) {
                return Err(syntax_error(
                    self.position,
                    format!(
                        "expected digits after the decimal point, found {}",
                        self.describe_next()
                    ),
                ));
            }
        }
        if matches!(self.peek(), Some('e' | 'E')) {
            is_integer = false;
            self.bump();
            if !self.bump_if('+') {
                self.bump_if('-');
            }
            let mut exponent_digits = 0;
            while self.peek().is_some_and(|c| c.is_ascii_digit()) {
                self.bump();
                exponent_digits += 1;
            }
            if exponent_digits == 0 {
                return Err(syntax_error(
                    self.position,
                    format!(
                        "expected digits in the exponent, found {}",
                        self.describe_next()
                    ),
                ));
            }
        }
        let text = &self.source[start.offset..self.position.offset];
        if is_integer && let Ok(value) = text.parse::<i128>() {
            return Ok(NumberLiteral::Integer(value));
        }
        let value = text
            .parse::<f64>()
            .map_err(|error| syntax_error(start, format!("invalid number '{text}': {error}")))?;
        Ok(NumberLiteral::Double(value))
    }

    /// Names the next character for an error message.
    fn describe_next(&self) -> String {
        match self.peek() {
            None => "end of input".to_owned(),
            Some(c) => format!("{c:?}"),
        }
    }

    fn string(&mut self, quote: char) -> Result<TokenKind> {
        let start = self.position;
        self.bump();
        let mut value = String::new();
        loop {
            let here = self.position;
            match self.bump() {
                None => {
                    return Err(syntax_error(
                        start,
                        format!(
                            "unterminated string: expected a closing {quote} before the end of input"
                        ),
                    ));
                }
                Some(c) if c == quote => return Ok(TokenKind::String(value)),
                Some('\n' | '\r') => {
                    return Err(syntax_error(
                        here,
                        format!(
                            "unterminated string: line break before the closing {quote} (write \\n for a line break)"
                        ),
                    ));
                }
                Some(c) if self.dialect == Dialect::Json && c < ' ' => {
                    return Err(syntax_error(
                        here,
                        format!(
                            "control character {c:?} inside a string: JSON requires it escaped"
                        ),
                    ));
                }
                Some('\\') => self.escape(here, &mut value)?,
                Some(c) => value.push(c),
            }
        }
    }

    /// Decodes one escape sequence; the backslash at `backslash` is already consumed.
    fn escape(&mut self, backslash: Position, value: &mut String) -> Result<()> {
        let shell = self.dialect == Dialect::Shell;
        let Some(c) = self.bump() else {
            return Err(syntax_error(
                backslash,
                "unterminated string: expected an escape after '\\'",
            ));
        };
        let decoded = match c {
            '"' | '\\' | '/' => c,
            'n' => '\n',
            't' => '\t',
            'r' => '\r',
            'b' => '\u{8}',
            'f' => '\u{c}',
            'u' => return self.unicode_escape(backslash, value),
            '\'' if shell => '\'',
            'v' if shell => '\u{b}',
            '0' if shell && !self.peek().is_some_and(|c| c.is_ascii_digit()) => '\0',
            'x' if shell => {
                let code = self.hex_digits(backslash, 2, "\\x")?;
                char::from_u32(code).unwrap_or('\u{fffd}')
            }
            // A backslash before a line break continues the string on the next line.
            '\r' if shell => {
                self.bump_if('\n');
                return Ok(());
            }
            '\n' | '\u{2028}' | '\u{2029}' if shell => return Ok(()),
            c if shell && !c.is_ascii_digit() => c,
            other => {
                return Err(syntax_error(
                    backslash,
                    format!("invalid escape '\\{other}' in a string"),
                ));
            }
        };
        value.push(decoded);
        Ok(())
    }

    fn hex_digits(&mut self, backslash: Position, count: usize, escape: &str) -> Result<u32> {
        let mut code = 0;
        for _ in 0..count {
            match self.peek().and_then(|c| c.to_digit(16)) {
                Some(digit) => {
                    self.bump();
                    code = code * 16 + digit;
                }
                None => {
                    return Err(syntax_error(
                        backslash,
                        format!(
                            "invalid escape '{escape}': expected {count} hex digits, found {}",
                            self.describe_next()
                        ),
                    ));
                }
            }
        }
        Ok(code)
    }

    /// `\uXXXX` (with surrogate pairs joined) and, in the shell, `\u{X...}`.
    fn unicode_escape(&mut self, backslash: Position, value: &mut String) -> Result<()> {
        if self.dialect == Dialect::Shell && self.bump_if('{') {
            let mut code: u32 = 0;
            let mut n_digits = 0;
            while let Some(digit) = self.peek().and_then(|c| c.to_digit(16)) {
                self.bump();
                n_digits += 1;
                code = code.saturating_mul(16).saturating_add(digit);
            }
            if n_digits == 0 || !self.bump_if('}') {
                return Err(syntax_error(
                    backslash,
                    "invalid escape '\\u{': expected hex digits and '}'",
                ));
            }
            let c = char::from_u32(code).ok_or_else(|| {
                syntax_error(
                    backslash,
                    format!("invalid escape '\\u{{{code:x}}}': not a Unicode scalar value"),
                )
            })?;
            value.push(c);
            return Ok(());
        }
        let code = self.hex_digits(backslash, 4, "\\u")?;
        if let Some(c) = char::from_u32(code) {
            value.push(c);
            return Ok(());
        }
        // A surrogate: only a high surrogate followed by an escaped low surrogate makes a
        // character; Rust strings cannot hold a lone one.
        let lone = || {
            syntax_error(
                backslash,
                format!(
                    "invalid escape '\\u{code:04X}': a lone surrogate cannot be stored in a UTF-8 string"
                ),
            )
        };
        if !(0xD800..0xDC00).contains(&code)
            || !self.source[self.position.offset..].starts_with("\\u")
        {
            return Err(lone());
        }
        let second_backslash = self.position;
        self.bump();
        self.bump();
        let low = self.hex_digits(second_backslash, 4, "\\u")?;
        if !(0xDC00..0xE000).contains(&low) {
            return Err(lone());
        }
        let combined = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00);
        value.push(char::from_u32(combined).ok_or_else(lone)?);
        Ok(())
    }

    fn regex(&mut self) -> Result<TokenKind> {
        let start = self.position;
        self.bump();
        let pattern_start = self.position.offset;
        let mut in_class = false;
        loop {
            let unterminated = || {
                syntax_error(
                    start,
                    "unterminated regular expression: expected a closing '/' on the same line",
                )
            };
            match self.peek() {
                None => return Err(unterminated()),
                Some(c) if is_line_terminator(c) => return Err(unterminated()),
                Some('\\') => {
                    self.bump();
                    match self.peek() {
                        Some(c) if !is_line_terminator(c) => {
                            self.bump();
                        }
                        _ => return Err(unterminated()),
                    }
                }
                Some('[') => {
                    in_class = true;
                    self.bump();
                }
                Some(']') => {
                    in_class = false;
                    self.bump();
                }
                Some('/') if !in_class => break,
                Some(_) => {
                    self.bump();
                }
            }
        }
        let pattern = self.source[pattern_start..self.position.offset].to_owned();
        self.bump();
        let flags_start = self.position.offset;
        while self.peek().is_some_and(is_identifier_part) {
            self.bump();
        }
        let flags = self.source[flags_start..self.position.offset].to_owned();
        Ok(TokenKind::Regex { pattern, flags })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(text: &str) -> Vec<TokenKind> {
        let mut lexer = Lexer::new(text, Dialect::Shell);
        let mut kinds = Vec::new();
        loop {
            let token = lexer.next_token().unwrap();
            if token.kind == TokenKind::End {
                return kinds;
            }
            kinds.push(token.kind);
        }
    }

    #[test]
    fn tokens_carry_line_and_character_column() {
        let mut lexer = Lexer::new("{\n  é: 'x',\r\n\tb }", Dialect::Shell);
        let positions: Vec<(usize, usize)> = std::iter::from_fn(|| {
            let token = lexer.next_token().unwrap();
            (token.kind != TokenKind::End)
                .then_some((token.span.start.line, token.span.start.column))
        })
        .collect();
        assert_eq!(
            positions,
            [(1, 1), (2, 3), (2, 4), (2, 6), (2, 9), (3, 2), (3, 4)]
        );
    }

    #[test]
    fn slash_starts_a_comment_or_a_regex() {
        assert_eq!(
            kinds("/a[/]b\\//gi // c\n/* d */ x"),
            [
                TokenKind::Regex {
                    pattern: "a[/]b\\/".into(),
                    flags: "gi".into()
                },
                TokenKind::Identifier("x".into())
            ]
        );
    }

    #[test]
    fn numbers_keep_integers_apart_from_doubles() {
        assert_eq!(
            kinds("0 12 1.5 .5 5. 1e3 0x1F 0b101 0o17 170141183460469231731687303715884105728"),
            [
                TokenKind::Number(NumberLiteral::Integer(0)),
                TokenKind::Number(NumberLiteral::Integer(12)),
                TokenKind::Number(NumberLiteral::Double(1.5)),
                TokenKind::Number(NumberLiteral::Double(0.5)),
                TokenKind::Number(NumberLiteral::Double(5.0)),
                TokenKind::Number(NumberLiteral::Double(1000.0)),
                TokenKind::Number(NumberLiteral::Integer(31)),
                TokenKind::Number(NumberLiteral::Integer(5)),
                TokenKind::Number(NumberLiteral::Integer(15)),
                TokenKind::Number(NumberLiteral::Double(2_f64.powi(127))),
            ]
        );
    }
}
