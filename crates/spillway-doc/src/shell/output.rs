//! Prints BSON values the way mongosh does, and as Extended JSON.
//!
//! Everything printed here parses back with [`parse_value`](super::parse_value) to the same
//! value (the round trip is a property test). Where mongosh's own output would lose
//! information, this module deviates and says so: a Double with an integral value prints
//! as `1.0` (mongosh prints `1`, which reads back as an Int32), a date outside the years
//! 0000 to 9999 prints as `new Date(<millis>)`, and a regular expression that cannot be
//! written between slashes prints as `BSONRegExp('...', '...')`.

use std::fmt::{self, Write as _};

use bson::spec::BinarySubtype;
use bson::{Binary, Bson, Document};

use super::iso_date;
use super::lexer::{Dialect, Lexer, TokenKind};

/// Where mongosh (Node's `util.inspect`) breaks an object over several lines.
const BREAK_LENGTH: usize = 80;
/// Node's `compact: 3`: an object is kept on one line only if it holds at most this many
/// levels of nested objects and arrays.
const MAX_INLINE_DEPTH: usize = 3;

/// Prints `value` on one line in mongosh's style:
/// `{ _id: ObjectId('...'), year: 1972, n: Long('9007199254740993') }`.
pub fn to_shell_string(value: &Bson) -> String {
    let mut out = String::new();
    write_compact(value, &mut out).expect("writing to a String cannot fail");
    out
}

/// Prints `value` in mongosh's style, breaking objects and arrays that do not fit in 80
/// columns (or that nest more than three levels) over several lines, indented by 2 spaces.
pub fn to_shell_string_pretty(value: &Bson) -> String {
    format_pretty(value, 0).text
}

/// Prints `value` as relaxed Extended JSON (plain JSON numbers and ISO dates where they
/// are exact), using the `bson` crate's conversion.
pub fn to_relaxed_extjson_string(value: &Bson) -> String {
    value.clone().into_relaxed_extjson().to_string()
}

/// Prints `value` as canonical Extended JSON, which keeps every type (`{"$numberInt": "1"}`),
/// using the `bson` crate's conversion.
pub fn to_canonical_extjson_string(value: &Bson) -> String {
    value.clone().into_canonical_extjson().to_string()
}

struct Formatted {
    text: String,
    /// Levels of objects and arrays in the value: 0 for a scalar, 1 for `{ a: 1 }`.
    depth: usize,
}

fn format_pretty(value: &Bson, indentation: usize) -> Formatted {
    let (entries, braces): (Vec<(Option<&str>, &Bson)>, _) = match value {
        Bson::Document(document) => (
            document
                .iter()
                .map(|(key, value)| (Some(key.as_str()), value))
                .collect(),
            ('{', '}'),
        ),
        Bson::Array(elements) => (
            elements.iter().map(|value| (None, value)).collect(),
            ('[', ']'),
        ),
        scalar => {
            let mut text = String::new();
            write_compact(scalar, &mut text).expect("writing to a String cannot fail");
            return Formatted { text, depth: 0 };
        }
    };
    if entries.is_empty() {
        return Formatted {
            text: format!("{}{}", braces.0, braces.1),
            depth: 1,
        };
    }
    let mut depth = 1;
    let mut lines = Vec::with_capacity(entries.len());
    for (key, value) in entries {
        let formatted = format_pretty(value, indentation + 2);
        depth = depth.max(formatted.depth + 1);
        let mut line = String::new();
        if let Some(key) = key {
            write_key(key, &mut line).expect("writing to a String cannot fail");
            line.push_str(": ");
        }
        line.push_str(&formatted.text);
        lines.push(line);
    }
    // Node's isBelowBreakLength: entries, separators, indentation and the braces must fit.
    let total_length = lines.iter().map(|line| line.chars().count()).sum::<usize>()
        + 2 * lines.len()
        + indentation
        + 1
        + 10;
    let fits_on_one_line = depth <= MAX_INLINE_DEPTH
        && total_length <= BREAK_LENGTH
        && lines.iter().all(|line| !line.contains('\n'));
    let text = if fits_on_one_line {
        format!("{} {} {}", braces.0, lines.join(", "), braces.1)
    } else {
        let inner_indent = " ".repeat(indentation + 2);
        let separator = format!(",\n{inner_indent}");
        format!(
            "{}\n{inner_indent}{}\n{}{}",
            braces.0,
            lines.join(&separator),
            " ".repeat(indentation),
            braces.1
        )
    };
    Formatted { text, depth }
}

fn write_document(document: &Document, out: &mut impl fmt::Write) -> fmt::Result {
    if document.is_empty() {
        return out.write_str("{}");
    }
    out.write_str("{ ")?;
    for (index, (key, value)) in document.iter().enumerate() {
        if index > 0 {
            out.write_str(", ")?;
        }
        write_key(key, out)?;
        out.write_str(": ")?;
        write_compact(value, out)?;
    }
    out.write_str(" }")
}

/// `Name('argument')`, the shape of most constructors.
fn write_call(name: &str, argument: &str, out: &mut impl fmt::Write) -> fmt::Result {
    write!(out, "{name}(")?;
    write_string(argument, out)?;
    out.write_char(')')
}

fn write_compact(value: &Bson, out: &mut impl fmt::Write) -> fmt::Result {
    match value {
        Bson::Document(document) => write_document(document, out),
        Bson::Array(elements) if elements.is_empty() => out.write_str("[]"),
        Bson::Array(elements) => {
            out.write_str("[ ")?;
            for (index, element) in elements.iter().enumerate() {
                if index > 0 {
                    out.write_str(", ")?;
                }
                write_compact(element, out)?;
            }
            out.write_str(" ]")
        }
        Bson::Double(value) => write_double(*value, out),
        Bson::String(text) => write_string(text, out),
        Bson::Boolean(value) => write!(out, "{value}"),
        Bson::Null => out.write_str("null"),
        Bson::Undefined => out.write_str("undefined"),
        Bson::Int32(value) => write!(out, "{value}"),
        Bson::Int64(value) => write!(out, "Long('{value}')"),
        Bson::Decimal128(value) => write!(out, "Decimal128('{value}')"),
        Bson::ObjectId(oid) => write!(out, "ObjectId('{}')", oid.to_hex()),
        Bson::DateTime(date) => match iso_date::format_millis(date.timestamp_millis()) {
            Some(iso) => write!(out, "ISODate('{iso}')"),
            None => write!(out, "new Date({})", date.timestamp_millis()),
        },
        Bson::Timestamp(timestamp) => {
            write!(
                out,
                "Timestamp({{ t: {}, i: {} }})",
                timestamp.time, timestamp.increment
            )
        }
        Bson::Binary(binary) => write_binary(binary, out),
        Bson::RegularExpression(regex) => {
            let (pattern, options) = (regex.pattern.as_str(), regex.options.as_str());
            if can_be_regex_literal(pattern, options) {
                write!(out, "/{pattern}/{options}")
            } else {
                out.write_str("BSONRegExp(")?;
                write_string(pattern, out)?;
                out.write_str(", ")?;
                write_string(options, out)?;
                out.write_char(')')
            }
        }
        Bson::JavaScriptCode(code) => write_call("Code", code, out),
        Bson::JavaScriptCodeWithScope(code_with_scope) => {
            out.write_str("Code(")?;
            write_string(&code_with_scope.code, out)?;
            out.write_str(", ")?;
            write_document(&code_with_scope.scope, out)?;
            out.write_char(')')
        }
        Bson::Symbol(symbol) => write_call("BSONSymbol", symbol, out),
        Bson::DbPointer(_) => {
            // bson keeps the namespace and id private; its Extended JSON form exposes them.
            let json = value.clone().into_canonical_extjson();
            let pointer = &json["$dbPointer"];
            out.write_str("DBPointer(")?;
            write_string(pointer["$ref"].as_str().unwrap_or_default(), out)?;
            let hex = pointer["$id"]["$oid"].as_str().unwrap_or_default();
            write!(out, ", ObjectId('{hex}'))")
        }
        Bson::MinKey => out.write_str("MinKey()"),
        Bson::MaxKey => out.write_str("MaxKey()"),
    }
}

/// Doubles always show that they are doubles (`1.0`, `1e300`), so that they read back as
/// doubles and not as Int32.
fn write_double(value: f64, out: &mut impl fmt::Write) -> fmt::Result {
    if value.is_nan() {
        out.write_str("NaN")
    } else if value.is_infinite() {
        out.write_str(if value > 0.0 { "Infinity" } else { "-Infinity" })
    } else {
        // Debug is the shortest text that reads back to the same bits, and always has a
        // '.' or an exponent.
        write!(out, "{value:?}")
    }
}

fn write_binary(binary: &Binary, out: &mut impl fmt::Write) -> fmt::Result {
    if binary.subtype == BinarySubtype::Uuid && binary.bytes.len() == 16 {
        let hex = binary.bytes.iter().fold(String::new(), |mut hex, byte| {
            let _ = write!(hex, "{byte:02x}");
            hex
        });
        let groups = [
            &hex[..8],
            &hex[8..12],
            &hex[12..16],
            &hex[16..20],
            &hex[20..],
        ];
        write!(out, "UUID('{}')", groups.join("-"))
    } else {
        let subtype = u8::from(binary.subtype);
        write!(
            out,
            "Binary.createFromBase64('{}', {subtype})",
            encode_base64(&binary.bytes)
        )
    }
}

/// Standard base64 with padding (`bson` decodes base64 but does not expose its encoder).
fn encode_base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut encoded = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let group = chunk
            .iter()
            .enumerate()
            .fold(0_u32, |group, (index, &byte)| {
                group | u32::from(byte) << (16 - 8 * index)
            });
        for index in 0..4 {
            if index <= chunk.len() {
                encoded.push(char::from(
                    ALPHABET[(group >> (18 - 6 * index) & 63) as usize],
                ));
            } else {
                encoded.push('=');
            }
        }
    }
    encoded
}

/// Whether `/pattern/options` reads back as exactly this regular expression: asks the
/// lexer itself, so printing and parsing cannot disagree.
fn can_be_regex_literal(pattern: &str, options: &str) -> bool {
    let text = format!("/{pattern}/{options}");
    let mut lexer = Lexer::new(&text, Dialect::Shell);
    let read_back = lexer.next_token();
    matches!(
        read_back,
        Ok(token) if token.kind == TokenKind::Regex { pattern: pattern.to_owned(), flags: options.to_owned() }
    ) && matches!(lexer.next_token(), Ok(token) if token.kind == TokenKind::End)
}

/// Keys that are plain identifiers print bare, like Node prints them; others are quoted.
fn write_key(key: &str, out: &mut impl fmt::Write) -> fmt::Result {
    let mut chars = key.chars();
    let is_plain = chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_');
    if is_plain {
        out.write_str(key)
    } else {
        write_string(key, out)
    }
}

/// Single quotes, or double quotes when that avoids escaping, like Node.
fn write_string(text: &str, out: &mut impl fmt::Write) -> fmt::Result {
    let quote = if text.contains('\'') && !text.contains('"') {
        '"'
    } else {
        '\''
    };
    out.write_char(quote)?;
    for c in text.chars() {
        match c {
            '\n' => out.write_str("\\n")?,
            '\t' => out.write_str("\\t")?,
            '\r' => out.write_str("\\r")?,
            '\u{8}' => out.write_str("\\b")?,
            '\u{c}' => out.write_str("\\f")?,
            '\\' => out.write_str("\\\\")?,
            c if c == quote => write!(out, "\\{c}")?,
            c if c.is_control() && u32::from(c) < 0x100 => write!(out, "\\x{:02X}", u32::from(c))?,
            c => out.write_char(c)?,
        }
    }
    out.write_char(quote)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_matches_the_rfc_examples() {
        let cases = [
            ("", ""),
            ("f", "Zg=="),
            ("fo", "Zm8="),
            ("foo", "Zm9v"),
            ("foob", "Zm9vYg=="),
            ("foobar", "Zm9vYmFy"),
        ];
        for (plain, encoded) in cases {
            assert_eq!(encode_base64(plain.as_bytes()), encoded);
        }
    }
}
