//! A small expression grammar over the [`lexer`](super::lexer) tokens, returning an AST
//! with spans.
//!
//! ```text
//! expression := ('-' | '+') expression          (only in front of a number)
//!             | 'new' member arguments?          (JavaScript's `new X`, `new a.B(...)`)
//!             | postfix
//! postfix    := primary ( '.' name | '[' expression ']' | arguments )*
//! primary    := number | string | regex | identifier | object | array | '(' expression ')'
//! object     := '{' ( key ':' expression ( ',' key ':' expression )* ','? )? '}'
//! key        := identifier | string | integer
//! array      := '[' ( expression ( ',' expression )* ','? )? ']'
//! arguments  := '(' ( expression ( ',' expression )* ','? )? ')'
//! ```
//!
//! The grammar is wider than literals on purpose: the shell reuses this parser for whole
//! statements like `db.sales.find({a: 1}).sort({b: -1})` and evaluates the method chain
//! itself. The parser never evaluates anything and never knows which names exist: that is
//! [`eval`](super::eval)'s job. In [`Dialect::Json`] only strict JSON is accepted.

#![allow(
    clippy::unnecessary_box_returns,
    reason = "errors are boxed so that the recursive descent's frames stay small at the nesting limit"
)]

use super::lexer::{Dialect, Lexer, NumberLiteral, Position, Span, Token, TokenKind, syntax_error};
use crate::error::{DocError, Result};

/// Inside the recursive descent errors are boxed: `DocError` is large, and a large `Err`
/// in every frame multiplies the stack each nesting level costs.
type Parsed<T> = std::result::Result<T, Box<DocError>>;

/// How deep objects, arrays, calls, parentheses and signs may nest. Deeper than any
/// document MongoDB stores ([`MAX_NESTING_DEPTH`](crate::size::MAX_NESTING_DEPTH) is 100)
/// with room for constructor calls inside, and shallow enough that hostile input cannot
/// exhaust the stack: at this depth parsing and evaluating take about 0.3 MiB of stack in
/// an optimized build (about 3 MiB unoptimized).
pub const MAX_PARSE_DEPTH: usize = 128;

/// A boxed syntax error; kept out of line so that error formatting does not grow the
/// frames of the recursive descent.
#[cold]
#[inline(never)]
fn error_at(position: Position, message: String) -> Box<DocError> {
    Box::new(syntax_error(position, message))
}

/// A parsed expression and the text it was read from.
#[derive(Debug, Clone, PartialEq)]
pub struct Expr {
    /// What it is.
    pub kind: ExprKind,
    /// Where it is.
    pub span: Span,
}

/// What an expression is.
#[derive(Debug, Clone, PartialEq)]
pub enum ExprKind {
    /// `null`
    Null,
    /// `undefined`
    Undefined,
    /// `true` or `false`
    Boolean(bool),
    /// A number, sign included; `Infinity` and `NaN` are numbers too.
    Number(NumberLiteral),
    /// A string literal.
    String(String),
    /// A regular expression literal; the pattern as written, the flags as written.
    Regex {
        /// The text between the slashes.
        pattern: String,
        /// The flags after the closing slash.
        flags: String,
    },
    /// `{ key: value, ... }`, fields in the order written (duplicates kept).
    Object(Vec<Field>),
    /// `[a, b, ...]`
    Array(Vec<Expr>),
    /// A name that is not a literal keyword: `ObjectId`, `db`, `MinKey`...
    Identifier(String),
    /// `object.property`
    Member {
        /// The expression before the dot.
        object: Box<Expr>,
        /// The name after the dot.
        property: String,
    },
    /// `object[index]`
    Index {
        /// The expression before the bracket.
        object: Box<Expr>,
        /// The expression inside the brackets.
        index: Box<Expr>,
    },
    /// `callee(arguments)`
    Call {
        /// What is called.
        callee: Box<Expr>,
        /// The arguments, in order.
        arguments: Vec<Expr>,
    },
    /// `new callee(arguments)`; `new Date` without parentheses has no arguments.
    New {
        /// What is constructed.
        callee: Box<Expr>,
        /// The arguments, in order.
        arguments: Vec<Expr>,
    },
}

impl ExprKind {
    /// How error messages name an expression: `a string`, `a call to ObjectId`...
    pub fn describe(&self) -> String {
        match self {
            ExprKind::Null => "null".to_owned(),
            ExprKind::Undefined => "undefined".to_owned(),
            ExprKind::Boolean(_) => "a boolean".to_owned(),
            ExprKind::Number(_) => "a number".to_owned(),
            ExprKind::String(_) => "a string".to_owned(),
            ExprKind::Regex { .. } => "a regular expression".to_owned(),
            ExprKind::Object(_) => "an object".to_owned(),
            ExprKind::Array(_) => "an array".to_owned(),
            ExprKind::Identifier(name) => format!("the name '{name}'"),
            ExprKind::Member { .. } | ExprKind::Index { .. } => "a property access".to_owned(),
            ExprKind::Call { callee, .. } | ExprKind::New { callee, .. } => {
                match callee.dotted_name() {
                    Some(name) => format!("a call to {name}"),
                    None => "a call".to_owned(),
                }
            }
        }
    }
}

impl Expr {
    /// The dotted name of an identifier or a chain of member accesses (`Binary.createFromBase64`),
    /// or `None` for anything else.
    pub fn dotted_name(&self) -> Option<String> {
        match &self.kind {
            ExprKind::Identifier(name) => Some(name.clone()),
            ExprKind::Member { object, property } => {
                Some(format!("{}.{property}", object.dotted_name()?))
            }
            _ => None,
        }
    }
}

/// One `key: value` of an object literal.
#[derive(Debug, Clone, PartialEq)]
pub struct Field {
    /// The key, unquoted and unescaped.
    pub key: String,
    /// Where the key was written.
    pub key_span: Span,
    /// The value.
    pub value: Expr,
}

/// Parses expressions one at a time from a text.
///
/// A caller can parse one expression, look at what follows it with [`Parser::peek`] (a
/// `;`, a `.` of a method chain, the end), and go on; [`Parser::consumed_up_to`] says
/// where the parser stopped.
#[derive(Debug, Clone)]
pub struct Parser<'a> {
    lexer: Lexer<'a>,
    peeked: Option<Token>,
    consumed_up_to: Position,
    depth: usize,
}

impl<'a> Parser<'a> {
    /// A parser positioned at the start of `source`.
    pub fn new(source: &'a str, dialect: Dialect) -> Self {
        Parser {
            lexer: Lexer::new(source, dialect),
            peeked: None,
            consumed_up_to: Position::START,
            depth: 0,
        }
    }

    /// A parser over `source`, a piece of a larger text starting at `start` (see
    /// [`Lexer::starting_at`]): positions in spans and errors are lines and columns of the
    /// larger text.
    pub fn starting_at(source: &'a str, dialect: Dialect, start: Position) -> Self {
        Parser {
            lexer: Lexer::starting_at(source, dialect, start),
            peeked: None,
            consumed_up_to: Position { offset: 0, ..start },
            depth: 0,
        }
    }

    /// The text being parsed.
    pub fn source(&self) -> &'a str {
        self.lexer.source()
    }

    /// Which language the parser reads.
    pub fn dialect(&self) -> Dialect {
        self.lexer.dialect()
    }

    /// The end of the last token consumed: where the last parsed expression stopped.
    pub fn consumed_up_to(&self) -> Position {
        self.consumed_up_to
    }

    /// The next token, without consuming it.
    pub fn peek(&mut self) -> Result<&Token> {
        self.peek_token().map_err(|error| *error)
    }

    /// Consumes and returns the next token.
    pub fn next_token(&mut self) -> Result<Token> {
        self.take().map_err(|error| *error)
    }

    /// Consumes the next token if it is `kind`.
    pub fn eat(&mut self, kind: &TokenKind) -> Result<Option<Token>> {
        self.take_if(kind).map_err(|error| *error)
    }

    /// Fails unless the whole text has been consumed.
    pub fn expect_end(&mut self) -> Result<()> {
        let token = self.peek()?;
        if token.kind == TokenKind::End {
            Ok(())
        } else {
            Err(syntax_error(
                token.span.start,
                format!(
                    "expected end of input after the value, found {}",
                    token.kind
                ),
            ))
        }
    }

    /// Parses one expression and stops at the first token that cannot continue it.
    pub fn parse_expression(&mut self) -> Result<Expr> {
        self.expression().map_err(|error| *error)
    }

    fn peek_token(&mut self) -> Parsed<&Token> {
        if self.peeked.is_none() {
            self.peeked = Some(self.lexer.next_token()?);
        }
        Ok(self.peeked.as_ref().expect("just filled"))
    }

    fn take(&mut self) -> Parsed<Token> {
        let token = match self.peeked.take() {
            Some(token) => token,
            None => self.lexer.next_token()?,
        };
        if token.kind != TokenKind::End {
            self.consumed_up_to = token.span.end;
        }
        Ok(token)
    }

    fn take_if(&mut self, kind: &TokenKind) -> Parsed<Option<Token>> {
        if &self.peek_token()?.kind == kind {
            self.take().map(Some)
        } else {
            Ok(None)
        }
    }

    #[cold]
    #[inline(never)]
    fn unexpected(&mut self, expected: &str) -> Box<DocError> {
        match self.peek_token() {
            Ok(token) => error_at(
                token.span.start,
                format!("expected {expected}, found {}", token.kind),
            ),
            Err(error) => error,
        }
    }

    #[cold]
    #[inline(never)]
    fn missing_colon(&mut self, key: &str) -> Box<DocError> {
        self.unexpected(&format!("':' after the field name '{key}'"))
    }

    /// `{a.b: 1}`: JavaScript has no dotted keys; say how to write one.
    #[cold]
    #[inline(never)]
    fn unquoted_dotted_key(&mut self, first_part: &str) -> Box<DocError> {
        let mut dotted = first_part.to_owned();
        let dot = match self.peek_token() {
            Ok(token) => token.span.start,
            Err(error) => return error,
        };
        while let Ok(Some(_)) = self.take_if(&TokenKind::Dot) {
            dotted.push('.');
            match self.take() {
                Ok(Token {
                    kind: TokenKind::Identifier(part),
                    ..
                }) => dotted.push_str(&part),
                Ok(Token {
                    kind: TokenKind::Number(NumberLiteral::Integer(index)),
                    ..
                }) => {
                    dotted.push_str(&index.to_string());
                }
                _ => break,
            }
        }
        error_at(
            dot,
            format!(
                "expected ':' after the field name '{first_part}', found '.' \
                 (quote dotted field names: '{dotted}')"
            ),
        )
    }

    fn enter(&mut self, at: Position) -> Parsed<()> {
        self.depth += 1;
        if self.depth > MAX_PARSE_DEPTH {
            return Err(error_at(
                at,
                format!("nesting deeper than {MAX_PARSE_DEPTH} levels"),
            ));
        }
        Ok(())
    }

    fn leave(&mut self) {
        self.depth -= 1;
    }

    fn expression(&mut self) -> Parsed<Expr> {
        if self.dialect() == Dialect::Json {
            return self.json_value();
        }
        let token = self.peek_token()?.clone();
        match &token.kind {
            TokenKind::Minus | TokenKind::Plus => {
                self.take()?;
                let sign = if token.kind == TokenKind::Minus {
                    "-"
                } else {
                    "+"
                };
                self.enter(token.span.start)?;
                let operand = self.expression()?;
                self.leave();
                match operand.kind {
                    ExprKind::Number(number) => {
                        let number = if sign == "-" {
                            number.negated()
                        } else {
                            number
                        };
                        Ok(Expr {
                            kind: ExprKind::Number(number),
                            span: token.span.to(operand.span),
                        })
                    }
                    other => Err(error_at(
                        operand.span.start,
                        format!(
                            "expected a number after '{sign}', found {}",
                            other.describe()
                        ),
                    )),
                }
            }
            TokenKind::Identifier(name) if name == "new" => {
                self.take()?;
                self.enter(token.span.start)?;
                let callee = self.postfix(false)?;
                let (arguments, end) = if self.peek_token()?.kind == TokenKind::LeftParen {
                    self.arguments()?
                } else {
                    (Vec::new(), callee.span)
                };
                self.leave();
                let constructed = Expr {
                    kind: ExprKind::New {
                        callee: Box::new(callee),
                        arguments,
                    },
                    span: token.span.to(end),
                };
                self.postfix_from(constructed, true)
            }
            _ => self.postfix(true),
        }
    }

    /// A primary expression followed by member accesses, indexes and (when `calls`) calls.
    fn postfix(&mut self, calls: bool) -> Parsed<Expr> {
        let primary = self.primary()?;
        self.postfix_from(primary, calls)
    }

    fn postfix_from(&mut self, mut expr: Expr, calls: bool) -> Parsed<Expr> {
        loop {
            match self.peek_token()?.kind {
                TokenKind::Dot => {
                    self.take()?;
                    let name = self.take()?;
                    let TokenKind::Identifier(property) = name.kind else {
                        return Err(error_at(
                            name.span.start,
                            format!("expected a property name after '.', found {}", name.kind),
                        ));
                    };
                    let span = expr.span.to(name.span);
                    expr = Expr {
                        kind: ExprKind::Member {
                            object: Box::new(expr),
                            property,
                        },
                        span,
                    };
                }
                TokenKind::LeftBracket => {
                    let open = self.take()?;
                    self.enter(open.span.start)?;
                    let index = self.expression()?;
                    let close = self.expect(&TokenKind::RightBracket, "']' after the index")?;
                    self.leave();
                    let span = expr.span.to(close.span);
                    expr = Expr {
                        kind: ExprKind::Index {
                            object: Box::new(expr),
                            index: Box::new(index),
                        },
                        span,
                    };
                }
                TokenKind::LeftParen if calls => {
                    let (arguments, end) = self.arguments()?;
                    let span = expr.span.to(end);
                    expr = Expr {
                        kind: ExprKind::Call {
                            callee: Box::new(expr),
                            arguments,
                        },
                        span,
                    };
                }
                _ => return Ok(expr),
            }
        }
    }

    fn expect(&mut self, kind: &TokenKind, expected: &str) -> Parsed<Token> {
        match self.take_if(kind)? {
            Some(token) => Ok(token),
            None => Err(self.unexpected(expected)),
        }
    }

    /// `( expression, ... )`, returning the arguments and the span of the closing parenthesis.
    fn arguments(&mut self) -> Parsed<(Vec<Expr>, Span)> {
        let open = self.expect(&TokenKind::LeftParen, "'('")?;
        self.enter(open.span.start)?;
        let mut arguments = Vec::new();
        let close = loop {
            if let Some(close) = self.take_if(&TokenKind::RightParen)? {
                break close;
            }
            arguments.push(self.expression()?);
            if let Some(close) = self.take_if(&TokenKind::RightParen)? {
                break close;
            }
            self.expect(&TokenKind::Comma, "',' or ')' after an argument")?;
        };
        self.leave();
        Ok((arguments, close.span))
    }

    fn primary(&mut self) -> Parsed<Expr> {
        let token = self.peek_token()?.clone();
        let kind = match token.kind {
            TokenKind::LeftBrace => return self.object(),
            TokenKind::LeftBracket => return self.array(),
            TokenKind::LeftParen => {
                self.take()?;
                self.enter(token.span.start)?;
                let inner = self.expression()?;
                let close = self.expect(&TokenKind::RightParen, "')' to close the parenthesis")?;
                self.leave();
                return Ok(Expr {
                    kind: inner.kind,
                    span: token.span.to(close.span),
                });
            }
            TokenKind::Number(number) => ExprKind::Number(number),
            TokenKind::String(text) => ExprKind::String(text),
            TokenKind::Regex { pattern, flags } => ExprKind::Regex { pattern, flags },
            TokenKind::Identifier(name) => match name.as_str() {
                "true" => ExprKind::Boolean(true),
                "false" => ExprKind::Boolean(false),
                "null" => ExprKind::Null,
                "undefined" => ExprKind::Undefined,
                "Infinity" => ExprKind::Number(NumberLiteral::Double(f64::INFINITY)),
                "NaN" => ExprKind::Number(NumberLiteral::Double(f64::NAN)),
                _ => ExprKind::Identifier(name),
            },
            _ => return Err(self.unexpected("a value")),
        };
        self.take()?;
        Ok(Expr {
            kind,
            span: token.span,
        })
    }

    fn object(&mut self) -> Parsed<Expr> {
        let open = self.take()?;
        self.enter(open.span.start)?;
        let mut fields = Vec::new();
        let close = loop {
            if let Some(close) = self.take_if(&TokenKind::RightBrace)? {
                break close;
            }
            let key_token = self.take()?;
            let key = match key_token.kind {
                TokenKind::Identifier(name) => name,
                TokenKind::String(text) => text,
                TokenKind::Number(NumberLiteral::Integer(value)) => value.to_string(),
                other => {
                    return Err(error_at(
                        key_token.span.start,
                        format!("expected a field name or '}}', found {other}"),
                    ));
                }
            };
            if self.peek_token()?.kind == TokenKind::Dot {
                return Err(self.unquoted_dotted_key(&key));
            }
            if self.take_if(&TokenKind::Colon)?.is_none() {
                return Err(self.missing_colon(&key));
            }
            let value = self.expression()?;
            fields.push(Field {
                key,
                key_span: key_token.span,
                value,
            });
            if let Some(close) = self.take_if(&TokenKind::RightBrace)? {
                break close;
            }
            self.expect(&TokenKind::Comma, "',' or '}' after a field")?;
        };
        self.leave();
        Ok(Expr {
            kind: ExprKind::Object(fields),
            span: open.span.to(close.span),
        })
    }

    fn array(&mut self) -> Parsed<Expr> {
        let open = self.take()?;
        self.enter(open.span.start)?;
        let mut elements = Vec::new();
        let close = loop {
            if let Some(close) = self.take_if(&TokenKind::RightBracket)? {
                break close;
            }
            elements.push(self.expression()?);
            if let Some(close) = self.take_if(&TokenKind::RightBracket)? {
                break close;
            }
            self.expect(&TokenKind::Comma, "',' or ']' after an array element")?;
        };
        self.leave();
        Ok(Expr {
            kind: ExprKind::Array(elements),
            span: open.span.to(close.span),
        })
    }

    /// Strict JSON: no comments, no trailing commas, keys in double quotes, no names but
    /// `true`, `false` and `null`.
    fn json_value(&mut self) -> Parsed<Expr> {
        let token = self.take()?;
        let kind = match token.kind {
            TokenKind::LeftBrace => return self.json_object(token.span),
            TokenKind::LeftBracket => return self.json_array(token.span),
            TokenKind::String(text) => ExprKind::String(text),
            TokenKind::Number(number) => ExprKind::Number(number),
            TokenKind::Minus => {
                let number = self.take()?;
                let adjacent = number.span.start == token.span.end;
                match number.kind {
                    TokenKind::Number(value) if adjacent => {
                        return Ok(Expr {
                            kind: ExprKind::Number(value.negated()),
                            span: token.span.to(number.span),
                        });
                    }
                    other => {
                        return Err(error_at(
                            number.span.start,
                            format!("expected digits right after '-', found {other}"),
                        ));
                    }
                }
            }
            TokenKind::Identifier(name) if name == "true" => ExprKind::Boolean(true),
            TokenKind::Identifier(name) if name == "false" => ExprKind::Boolean(false),
            TokenKind::Identifier(name) if name == "null" => ExprKind::Null,
            other => {
                return Err(error_at(
                    token.span.start,
                    format!("expected a JSON value, found {other}"),
                ));
            }
        };
        Ok(Expr {
            kind,
            span: token.span,
        })
    }

    fn json_object(&mut self, open: Span) -> Parsed<Expr> {
        self.enter(open.start)?;
        let mut fields = Vec::new();
        let close = if let Some(close) = self.take_if(&TokenKind::RightBrace)? {
            close
        } else {
            loop {
                let key_token = self.take()?;
                let TokenKind::String(key) = key_token.kind else {
                    let expected = if fields.is_empty() {
                        "a field name in double quotes or '}'"
                    } else {
                        "a field name in double quotes"
                    };
                    return Err(error_at(
                        key_token.span.start,
                        format!("expected {expected}, found {}", key_token.kind),
                    ));
                };
                if self.take_if(&TokenKind::Colon)?.is_none() {
                    return Err(self.missing_colon(&key));
                }
                let value = self.json_value()?;
                fields.push(Field {
                    key,
                    key_span: key_token.span,
                    value,
                });
                if let Some(close) = self.take_if(&TokenKind::RightBrace)? {
                    break close;
                }
                self.expect(&TokenKind::Comma, "',' or '}' after a field")?;
            }
        };
        self.leave();
        Ok(Expr {
            kind: ExprKind::Object(fields),
            span: open.to(close.span),
        })
    }

    fn json_array(&mut self, open: Span) -> Parsed<Expr> {
        self.enter(open.start)?;
        let mut elements = Vec::new();
        let close = if let Some(close) = self.take_if(&TokenKind::RightBracket)? {
            close
        } else {
            loop {
                elements.push(self.json_value()?);
                if let Some(close) = self.take_if(&TokenKind::RightBracket)? {
                    break close;
                }
                self.expect(&TokenKind::Comma, "',' or ']' after an array element")?;
            }
        };
        self.leave();
        Ok(Expr {
            kind: ExprKind::Array(elements),
            span: open.to(close.span),
        })
    }
}
