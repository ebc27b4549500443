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

use super::lexer::{Dialect, Lexer, NumberLiteral, Position, Span, Token, TokenKind, syntax_error};
use crate::error::Result;

/// How deep objects, arrays, calls and parentheses may nest. Deeper than any document
/// MongoDB accepts ([`MAX_NESTING_DEPTH`](crate::size::MAX_NESTING_DEPTH) is 100) with room
/// for constructor calls inside, and shallow enough that the recursive descent never
/// exhausts a thread's stack on hostile input.
pub const MAX_PARSE_DEPTH: usize = 200;

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
        if self.peeked.is_none() {
            self.peeked = Some(self.lexer.next_token()?);
        }
        Ok(self.peeked.as_ref().expect("just filled"))
    }

    /// Consumes and returns the next token.
    pub fn next_token(&mut self) -> Result<Token> {
        let token = match self.peeked.take() {
            Some(token) => token,
            None => self.lexer.next_token()?,
        };
        if token.kind != TokenKind::End {
            self.consumed_up_to = token.span.end;
        }
        Ok(token)
    }

    /// Consumes the next token if it is `kind`.
    pub fn eat(&mut self, kind: &TokenKind) -> Result<Option<Token>> {
        if &self.peek()?.kind == kind {
            self.next_token().map(Some)
        } else {
            Ok(None)
        }
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

    fn unexpected(&mut self, expected: &str) -> crate::error::DocError {
        match self.peek() {
            Ok(token) => syntax_error(
                token.span.start,
                format!("expected {expected}, found {}", token.kind),
            ),
            Err(error) => error,
        }
    }

    fn enter(&mut self, at: Position) -> Result<()> {
        self.depth += 1;
        if self.depth > MAX_PARSE_DEPTH {
            return Err(syntax_error(
                at,
                format!("nesting deeper than {MAX_PARSE_DEPTH} levels"),
            ));
        }
        Ok(())
    }

    fn leave(&mut self) {
        self.depth -= 1;
    }

    /// Parses one expression and stops at the first token that cannot continue it.
    pub fn parse_expression(&mut self) -> Result<Expr> {
        if self.dialect() == Dialect::Json {
            return self.json_value();
        }
        let token = self.peek()?.clone();
        match &token.kind {
            TokenKind::Minus | TokenKind::Plus => {
                self.next_token()?;
                let sign = if token.kind == TokenKind::Minus {
                    "-"
                } else {
                    "+"
                };
                self.enter(token.span.start)?;
                let operand = self.parse_expression()?;
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
                    other => Err(syntax_error(
                        operand.span.start,
                        format!(
                            "expected a number after '{sign}', found {}",
                            other.describe()
                        ),
                    )),
                }
            }
            TokenKind::Identifier(name) if name == "new" => {
                self.next_token()?;
                self.enter(token.span.start)?;
                let callee = self.postfix(false)?;
                let (arguments, end) = if self.peek()?.kind == TokenKind::LeftParen {
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
    fn postfix(&mut self, calls: bool) -> Result<Expr> {
        let primary = self.primary()?;
        self.postfix_from(primary, calls)
    }

    fn postfix_from(&mut self, mut expr: Expr, calls: bool) -> Result<Expr> {
        loop {
            match self.peek()?.kind {
                TokenKind::Dot => {
                    self.next_token()?;
                    let name = self.next_token()?;
                    let TokenKind::Identifier(property) = name.kind else {
                        return Err(syntax_error(
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
                    let open = self.next_token()?;
                    self.enter(open.span.start)?;
                    let index = self.parse_expression()?;
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

    fn expect(&mut self, kind: &TokenKind, expected: &str) -> Result<Token> {
        match self.eat(kind)? {
            Some(token) => Ok(token),
            None => Err(self.unexpected(expected)),
        }
    }

    /// `( expression, ... )`, returning the arguments and the span of the closing parenthesis.
    fn arguments(&mut self) -> Result<(Vec<Expr>, Span)> {
        let open = self.expect(&TokenKind::LeftParen, "'('")?;
        self.enter(open.span.start)?;
        let mut arguments = Vec::new();
        let close = loop {
            if let Some(close) = self.eat(&TokenKind::RightParen)? {
                break close;
            }
            arguments.push(self.parse_expression()?);
            if let Some(close) = self.eat(&TokenKind::RightParen)? {
                break close;
            }
            self.expect(&TokenKind::Comma, "',' or ')' after an argument")?;
        };
        self.leave();
        Ok((arguments, close.span))
    }

    fn primary(&mut self) -> Result<Expr> {
        let token = self.peek()?.clone();
        let kind = match token.kind {
            TokenKind::LeftBrace => return self.object(),
            TokenKind::LeftBracket => return self.array(),
            TokenKind::LeftParen => {
                self.next_token()?;
                self.enter(token.span.start)?;
                let inner = self.parse_expression()?;
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
        self.next_token()?;
        Ok(Expr {
            kind,
            span: token.span,
        })
    }

    fn object(&mut self) -> Result<Expr> {
        let open = self.next_token()?;
        self.enter(open.span.start)?;
        let mut fields = Vec::new();
        let close = loop {
            if let Some(close) = self.eat(&TokenKind::RightBrace)? {
                break close;
            }
            let key_token = self.next_token()?;
            let key = match key_token.kind {
                TokenKind::Identifier(name) => name,
                TokenKind::String(text) => text,
                TokenKind::Number(NumberLiteral::Integer(value)) => value.to_string(),
                other => {
                    return Err(syntax_error(
                        key_token.span.start,
                        format!("expected a field name or '}}', found {other}"),
                    ));
                }
            };
            if let Some(dot) = self.eat(&TokenKind::Dot)? {
                return Err(syntax_error(
                    dot.span.start,
                    format!(
                        "expected ':' after the field name '{key}', found '.' (quote dotted field names: '{key}.')"
                    ),
                ));
            }
            self.expect(
                &TokenKind::Colon,
                &format!("':' after the field name '{key}'"),
            )?;
            let value = self.parse_expression()?;
            fields.push(Field {
                key,
                key_span: key_token.span,
                value,
            });
            if let Some(close) = self.eat(&TokenKind::RightBrace)? {
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

    fn array(&mut self) -> Result<Expr> {
        let open = self.next_token()?;
        self.enter(open.span.start)?;
        let mut elements = Vec::new();
        let close = loop {
            if let Some(close) = self.eat(&TokenKind::RightBracket)? {
                break close;
            }
            elements.push(self.parse_expression()?);
            if let Some(close) = self.eat(&TokenKind::RightBracket)? {
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
    fn json_value(&mut self) -> Result<Expr> {
        let token = self.next_token()?;
        let kind = match token.kind {
            TokenKind::LeftBrace => return self.json_object(token.span),
            TokenKind::LeftBracket => return self.json_array(token.span),
            TokenKind::String(text) => ExprKind::String(text),
            TokenKind::Number(number) => ExprKind::Number(number),
            TokenKind::Minus => {
                let number = self.next_token()?;
                let adjacent = number.span.start == token.span.end;
                match number.kind {
                    TokenKind::Number(value) if adjacent => {
                        return Ok(Expr {
                            kind: ExprKind::Number(value.negated()),
                            span: token.span.to(number.span),
                        });
                    }
                    other => {
                        return Err(syntax_error(
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
                return Err(syntax_error(
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

    fn json_object(&mut self, open: Span) -> Result<Expr> {
        self.enter(open.start)?;
        let mut fields = Vec::new();
        let close = if let Some(close) = self.eat(&TokenKind::RightBrace)? {
            close
        } else {
            loop {
                let key_token = self.next_token()?;
                let TokenKind::String(key) = key_token.kind else {
                    let expected = if fields.is_empty() {
                        "a field name in double quotes or '}'"
                    } else {
                        "a field name in double quotes"
                    };
                    return Err(syntax_error(
                        key_token.span.start,
                        format!("expected {expected}, found {}", key_token.kind),
                    ));
                };
                self.expect(
                    &TokenKind::Colon,
                    &format!("':' after the field name \"{key}\""),
                )?;
                let value = self.json_value()?;
                fields.push(Field {
                    key,
                    key_span: key_token.span,
                    value,
                });
                if let Some(close) = self.eat(&TokenKind::RightBrace)? {
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

    fn json_array(&mut self, open: Span) -> Result<Expr> {
        self.enter(open.start)?;
        let mut elements = Vec::new();
        let close = if let Some(close) = self.eat(&TokenKind::RightBracket)? {
            close
        } else {
            loop {
                elements.push(self.json_value()?);
                if let Some(close) = self.eat(&TokenKind::RightBracket)? {
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
