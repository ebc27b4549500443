//! mongosh literals and Extended JSON: reading them into [`Bson`] and printing [`Bson`] back.
//!
//! One parser reads both languages. [`parse_value`] and [`parse_document`] take what a user
//! types into mongosh, a superset of JSON:
//!
//! ```text
//! { _id: ObjectId('65a1f0c2e4b0a1b2c3d4e5f6'), title: 'Invisible Cities', // a comment
//!   year: 1972, price: NumberDecimal("12.50"), added: ISODate("2024-01-01"),
//!   tags: [/calvino/i, "fiction",], "$set": { n: NumberLong(9007199254740993) } }
//! ```
//!
//! and decodes Extended JSON objects inside it (`{"$oid": "..."}`, `{"$date": ...}`,
//! canonical or relaxed) with the `bson` crate's own decoder, so the same call reads shell
//! input and Extended JSON files. [`parse_extjson`] accepts strict JSON only.
//!
//! # The number rule
//!
//! JavaScript has one number type; mongosh stores integral numbers that fit an `i32` as
//! Int32 and every other number as a Double. Spillway reads a plain number as:
//!
//! - written without a fraction or an exponent (`42`, `-7`, `0x1F`, `0b101`, `0o17`):
//!   **Int32** if it fits, else **Int64** if it fits, else **Double**. Unlike mongosh,
//!   `9007199254740993` stays exact (Int64) instead of rounding to a Double: this is what
//!   the `bson` crate's relaxed Extended JSON reader does too, so shell input and JSON files
//!   agree;
//! - written with a fraction or an exponent (`1.0`, `1.5`, `2e3`, `.5`): **Double**, even
//!   when the value is integral (mongosh would make `1.0` an Int32; keeping it a Double is
//!   what lets printed doubles read back unchanged);
//! - `-0`, `Infinity`, `-Infinity`, `NaN`: **Double**, as in JavaScript.
//!
//! `NumberInt(..)`, `NumberLong(..)`, `NumberDecimal(..)` and `Double(..)` force a type.
//!
//! # Other choices
//!
//! - `Date(...)` without `new` is read like `new Date(...)` (JavaScript would return a
//!   string); `new Date(year, month, ...)` is refused because it depends on the local time
//!   zone. Dates without a zone are UTC, like mongosh's `ISODate`.
//! - `undefined` is the (deprecated) BSON Undefined value.
//! - Regular expression flags must be BSON options (`i l m s u x`); JavaScript's `g` is
//!   refused rather than dropped.
//! - An object with an Extended JSON key (`$oid`, `$date`, `$numberLong`...) is always
//!   decoded as Extended JSON, so a document whose own field is named `$date` cannot be
//!   written this way (the same limit Extended JSON itself has).
//!
//! # Reusing the parser for statements
//!
//! The grammar in [`parser`] is a small expression language (literals, names, `a.b`,
//! `a[b]`, calls, `new X(...)`) whose AST carries spans. The shell parses a whole statement
//! such as `db.sales.find({a: 1}).sort({b: -1})` with [`Parser::parse_expression`], walks
//! the method chain itself and turns each argument into a value with [`eval::evaluate`].
//!
//! This module must never execute code: the only names it gives meaning to are the
//! constructors listed in [`eval`], and it never depends on the local time zone.

pub mod eval;
mod iso_date;
pub mod lexer;
mod output;
pub mod parser;

use bson::{Bson, Document};

pub use eval::evaluate;
pub use lexer::{Dialect, Lexer, NumberLiteral, Position, Span, Token, TokenKind};
pub use output::{
    to_canonical_extjson_string, to_relaxed_extjson_string, to_shell_string, to_shell_string_pretty,
};
pub use parser::{Expr, ExprKind, Field, Parser};

use crate::error::Result;

/// Parses one mongosh literal (which may be, or contain, Extended JSON) and nothing else.
pub fn parse_value(text: &str) -> Result<Bson> {
    parse_whole(text, Dialect::Shell)
}

/// Parses one mongosh literal that must be an object.
pub fn parse_document(text: &str) -> Result<Document> {
    let mut parser = Parser::new(text, Dialect::Shell);
    let expr = parser.parse_expression()?;
    parser.expect_end()?;
    match evaluate(&expr)? {
        Bson::Document(document) => Ok(document),
        other => Err(lexer::syntax_error(
            expr.span.start,
            format!(
                "expected a document ('{{...}}'), found {}",
                crate::path::describe(&other)
            ),
        )),
    }
}

/// Parses strict JSON holding canonical or relaxed Extended JSON.
pub fn parse_extjson(text: &str) -> Result<Bson> {
    parse_whole(text, Dialect::Json)
}

fn parse_whole(text: &str, dialect: Dialect) -> Result<Bson> {
    let mut parser = Parser::new(text, dialect);
    let expr = parser.parse_expression()?;
    parser.expect_end()?;
    evaluate(&expr)
}
