//! Turns a literal [`Expr`] into a [`Bson`] value: the number rule, mongosh's constructors
//! (`ObjectId(...)`, `ISODate(...)`, `NumberLong(...)`...) and Extended JSON objects
//! (`{"$oid": ...}`), which are decoded by the `bson` crate itself.
//!
//! Evaluation is pure except for the constructors whose meaning is "a fresh value"
//! (`ObjectId()`, `new Date()`, `UUID()`). It must never run anything else: method calls
//! and names that are not constructors are errors, so text from a user or a file can only
//! ever produce a value.

use bson::oid::ObjectId;
use bson::spec::BinarySubtype;
use bson::{
    Binary, Bson, DateTime, Decimal128, Document, JavaScriptCodeWithScope, Regex, Timestamp,
};

use super::iso_date;
use super::lexer::{NumberLiteral, Span, syntax_error};
use super::parser::{Expr, ExprKind, Field};
use crate::error::{DocError, MAX_SHOWN_CHARS, Result, abbreviate};

/// The keys that make an object an Extended JSON value rather than a document.
pub(crate) const EXTENDED_JSON_KEYS: &[&str] = &[
    "$oid",
    "$symbol",
    "$regularExpression",
    "$numberInt",
    "$numberLong",
    "$numberDouble",
    "$numberDecimal",
    "$binary",
    "$uuid",
    "$code",
    "$timestamp",
    "$date",
    "$minKey",
    "$maxKey",
    "$dbPointer",
    "$undefined",
];

/// The BSON type of a plain number: integers that fit an `i32` are Int32, other integers
/// that fit an `i64` are Int64, everything else is a Double.
pub(crate) fn number_to_bson(number: NumberLiteral) -> Bson {
    match number {
        NumberLiteral::Integer(value) => {
            if let Ok(small) = i32::try_from(value) {
                Bson::Int32(small)
            } else if let Ok(large) = i64::try_from(value) {
                Bson::Int64(large)
            } else {
                Bson::Double(value as f64)
            }
        }
        NumberLiteral::Double(value) => Bson::Double(value),
    }
}

/// Evaluates a literal expression.
pub fn evaluate(expr: &Expr) -> Result<Bson> {
    value(expr).map_err(|error| *error)
}

/// Inside the recursion errors are boxed: `DocError` is large, and a large `Err` in every
/// frame multiplies the stack each nesting level costs.
type Evaluated<T> = std::result::Result<T, Box<DocError>>;

fn value(expr: &Expr) -> Evaluated<Bson> {
    match &expr.kind {
        ExprKind::Null => Ok(Bson::Null),
        ExprKind::Undefined => Ok(Bson::Undefined),
        ExprKind::Boolean(value) => Ok(Bson::Boolean(*value)),
        ExprKind::Number(number) => Ok(number_to_bson(*number)),
        ExprKind::String(text) => Ok(Bson::String(text.clone())),
        ExprKind::Regex { pattern, flags } => {
            Ok(regex(pattern, flags, "regular expression", expr.span)?)
        }
        ExprKind::Array(elements) => elements
            .iter()
            .map(value)
            .collect::<Evaluated<Vec<_>>>()
            .map(Bson::Array),
        ExprKind::Object(fields) => {
            if let Some(field) = fields
                .iter()
                .find(|field| EXTENDED_JSON_KEYS.contains(&field.key.as_str()))
            {
                return Ok(extended_json(fields, field)?);
            }
            let mut document = Document::new();
            for field in fields {
                document.insert(field.key.clone(), value(&field.value)?);
            }
            Ok(Bson::Document(document))
        }
        ExprKind::Identifier(name) if name == "MinKey" => Ok(Bson::MinKey),
        ExprKind::Identifier(name) if name == "MaxKey" => Ok(Bson::MaxKey),
        ExprKind::Call { callee, arguments } | ExprKind::New { callee, arguments } => {
            // Arguments are evaluated here, so that the large `construct` is never part
            // of the recursion.
            let values = arguments.iter().map(value).collect::<Evaluated<Vec<_>>>()?;
            Ok(construct(callee, &values)?)
        }
        _ => Err(Box::new(not_a_value(expr))),
    }
}

#[cold]
#[inline(never)]
fn not_a_value(expr: &Expr) -> DocError {
    syntax_error(
        expr.span.start,
        format!("expected a value, found {}", expr.kind.describe()),
    )
}

/// The constructor being evaluated, for error messages.
#[derive(Clone, Copy)]
struct Call<'a> {
    name: &'a str,
    span: Span,
}

impl Call<'_> {
    fn invalid(self, problem: impl std::fmt::Display) -> DocError {
        DocError::InvalidValue {
            message: format!("{} at {}: {problem}", self.name, self.span.start),
        }
    }

    fn expect_arguments(
        self,
        arguments: &[Bson],
        allowed: std::ops::RangeInclusive<usize>,
    ) -> Result<Vec<Bson>> {
        if !allowed.contains(&arguments.len()) {
            let expected = match (allowed.start(), allowed.end()) {
                (0, 0) => "no arguments".to_owned(),
                (low, high) if low == high => {
                    format!("{low} argument{}", if *low == 1 { "" } else { "s" })
                }
                (low, high) => format!("{low} to {high} arguments"),
            };
            return Err(self.invalid(format!("expected {expected}, found {}", arguments.len())));
        }
        Ok(arguments.to_vec())
    }

    fn string(self, value: &Bson, what: &str) -> Result<String> {
        match value {
            Bson::String(text) => Ok(text.clone()),
            other => Err(self.invalid(format!(
                "expected {what} as a string, found {}",
                crate::path::describe(other)
            ))),
        }
    }

    /// An integer argument, given as a number or a string of digits.
    fn integer(self, value: &Bson, low: i128, high: i128, what: &str) -> Result<i128> {
        let integer = match value {
            Bson::Int32(value) => Some(i128::from(*value)),
            Bson::Int64(value) => Some(i128::from(*value)),
            Bson::Double(value) if value.fract() == 0.0 && value.abs() < 1e38 => {
                Some(*value as i128)
            }
            Bson::String(text) => text.trim().parse::<i128>().ok(),
            _ => None,
        };
        integer
            .filter(|integer| (low..=high).contains(integer))
            .ok_or_else(|| {
                self.invalid(format!(
                    "expected {what} between {low} and {high}, found {}",
                    super::to_shell_string(value)
                ))
            })
    }
}

fn construct(callee: &Expr, arguments: &[Bson]) -> Result<Bson> {
    let Some(name) = callee.dotted_name() else {
        return Err(syntax_error(
            callee.span.start,
            "expected a value, found a call".to_owned(),
        ));
    };
    let name = name.as_str();
    let call = Call {
        name,
        span: callee.span,
    };

    match name {
        "ObjectId" | "ObjectId.createFromHexString" => object_id(call, arguments),
        "ISODate" | "Date" => date(call, &call.expect_arguments(arguments, 0..=7)?),
        "NumberInt" | "Int32" => number_int(call, arguments),
        "NumberLong" | "Long" | "Long.fromString" => number_long(call, arguments),
        "Double" => double(call, arguments),
        "NumberDecimal" | "Decimal128" | "Decimal128.fromString" => decimal(call, arguments),
        "UUID" => uuid(call, arguments),
        "BinData" => bin_data(call, arguments),
        "Binary.createFromBase64" => binary_from_base64(call, arguments),
        "HexData" | "Binary.createFromHexString" | "MD5" => hex_data(call, arguments),
        "Timestamp" => timestamp(call, arguments),
        "MinKey" => call
            .expect_arguments(arguments, 0..=0)
            .map(|_| Bson::MinKey),
        "MaxKey" => call
            .expect_arguments(arguments, 0..=0)
            .map(|_| Bson::MaxKey),
        "RegExp" | "BSONRegExp" => reg_exp(call, arguments),
        "Code" => code(call, arguments),
        "BSONSymbol" => {
            let arguments = call.expect_arguments(arguments, 1..=1)?;
            Ok(Bson::Symbol(call.string(&arguments[0], "a symbol")?))
        }
        "DBPointer" => db_pointer(call, arguments),
        "DBRef" => db_ref(call, arguments),
        _ => Err(syntax_error(
            call.span.start,
            format!(
                "unknown function '{name}' (shell literals know ObjectId, ISODate, Date, NumberInt, NumberLong, \
                 NumberDecimal, Decimal128, UUID, BinData, Timestamp, MinKey, MaxKey, RegExp and a few more)"
            ),
        )),
    }
}

/// `ObjectId(hex)`, or a fresh ObjectId without an argument.
fn object_id(call: Call<'_>, arguments: &[Bson]) -> Result<Bson> {
    let arguments = call.expect_arguments(arguments, 0..=1)?;
    let Some(hex) = arguments.first() else {
        return Ok(Bson::ObjectId(ObjectId::new()));
    };
    let hex = call.string(hex, "24 hex digits")?;
    let valid = hex.len() == 24 && hex.bytes().all(|byte| byte.is_ascii_hexdigit());
    let oid = ObjectId::parse_str(&hex).ok().filter(|_| valid);
    oid.map(Bson::ObjectId)
        .ok_or_else(|| call.invalid(format!("expected 24 hex digits, found {}", quote(&hex))))
}

/// `NumberInt(n)`: a 32-bit integer.
fn number_int(call: Call<'_>, arguments: &[Bson]) -> Result<Bson> {
    let arguments = call.expect_arguments(arguments, 1..=1)?;
    let value = call.integer(
        &arguments[0],
        i32::MIN.into(),
        i32::MAX.into(),
        "an integer",
    )?;
    Ok(Bson::Int32(value as i32))
}

/// `NumberLong(n)`: a 64-bit integer.
fn number_long(call: Call<'_>, arguments: &[Bson]) -> Result<Bson> {
    let arguments = call.expect_arguments(arguments, 1..=1)?;
    let value = call.integer(
        &arguments[0],
        i64::MIN.into(),
        i64::MAX.into(),
        "an integer",
    )?;
    Ok(Bson::Int64(value as i64))
}

/// `Double(x)`: a double from a number or a string (`Infinity` and `NaN` included).
fn double(call: Call<'_>, arguments: &[Bson]) -> Result<Bson> {
    let arguments = call.expect_arguments(arguments, 1..=1)?;
    match &arguments[0] {
        Bson::Int32(value) => Ok(Bson::Double(f64::from(*value))),
        Bson::Int64(value) => Ok(Bson::Double(*value as f64)),
        Bson::Double(value) => Ok(Bson::Double(*value)),
        Bson::String(text) => {
            let parsed = match text.trim() {
                "Infinity" | "+Infinity" => Some(f64::INFINITY),
                "-Infinity" => Some(f64::NEG_INFINITY),
                "NaN" => Some(f64::NAN),
                other => other.parse::<f64>().ok().filter(|value| value.is_finite()),
            };
            parsed
                .map(Bson::Double)
                .ok_or_else(|| call.invalid(format!("expected a number, found {}", quote(text))))
        }
        other => Err(call.invalid(format!(
            "expected a number, found {}",
            crate::path::describe(other)
        ))),
    }
}

/// `NumberDecimal(text)`: a Decimal128 from a string or a finite number.
fn decimal(call: Call<'_>, arguments: &[Bson]) -> Result<Bson> {
    let arguments = call.expect_arguments(arguments, 1..=1)?;
    let text = match &arguments[0] {
        Bson::String(text) => text.clone(),
        Bson::Int32(value) => value.to_string(),
        Bson::Int64(value) => value.to_string(),
        Bson::Double(value) if value.is_finite() => value.to_string(),
        other => {
            return Err(call.invalid(format!(
                "expected a decimal number as a string, found {}",
                super::to_shell_string(other)
            )));
        }
    };
    text.parse::<Decimal128>()
        .map(Bson::Decimal128)
        .map_err(|_| call.invalid(format!("expected a decimal number, found {}", quote(&text))))
}

/// `UUID(text)`, or a fresh random UUID without an argument.
fn uuid(call: Call<'_>, arguments: &[Bson]) -> Result<Bson> {
    let arguments = call.expect_arguments(arguments, 0..=1)?;
    let Some(text) = arguments.first() else {
        return Ok(Bson::Binary(Binary::from_uuid(bson::Uuid::new())));
    };
    let text = call.string(text, "a UUID")?;
    let hex: String = text.chars().filter(|&c| c != '-').collect();
    let uuid = (hex.len() == 32)
        .then(|| decode_hex(&hex))
        .flatten()
        .and_then(|bytes| <[u8; 16]>::try_from(bytes).ok())
        .ok_or_else(|| {
            call.invalid(format!(
                "expected 32 hex digits (dashes allowed), found {}",
                quote(&text)
            ))
        })?;
    Ok(Bson::Binary(Binary::from_uuid(bson::Uuid::from_bytes(
        uuid,
    ))))
}

/// `BinData(subtype, base64)`.
fn bin_data(call: Call<'_>, arguments: &[Bson]) -> Result<Bson> {
    let arguments = call.expect_arguments(arguments, 2..=2)?;
    let subtype = call.integer(&arguments[0], 0, 255, "a binary subtype")?;
    base64_binary(call, &arguments[1], subtype as u8)
}

/// `Binary.createFromBase64(base64, subtype?)`.
fn binary_from_base64(call: Call<'_>, arguments: &[Bson]) -> Result<Bson> {
    let arguments = call.expect_arguments(arguments, 1..=2)?;
    let subtype = arguments.get(1).map_or(Ok(0), |subtype| {
        call.integer(subtype, 0, 255, "a binary subtype")
    })?;
    base64_binary(call, &arguments[0], subtype as u8)
}

/// `HexData(subtype, hex)`, `Binary.createFromHexString(hex, subtype?)` and `MD5(hex)`.
fn hex_data(call: Call<'_>, arguments: &[Bson]) -> Result<Bson> {
    let name = call.name;
    let arguments =
        call.expect_arguments(arguments, if name == "HexData" { 2..=2 } else { 1..=2 })?;
    let (subtype, hex) = match (name, arguments.as_slice()) {
        ("HexData", [subtype, hex]) => (call.integer(subtype, 0, 255, "a binary subtype")?, hex),
        ("MD5", [hex]) => (5, hex),
        (_, [hex]) => (0, hex),
        (_, [hex, subtype]) => (call.integer(subtype, 0, 255, "a binary subtype")?, hex),
        _ => unreachable!("argument count checked above"),
    };
    let hex = call.string(hex, "hex digits")?;
    let bytes = decode_hex(&hex).ok_or_else(|| {
        call.invalid(format!(
            "expected an even number of hex digits, found {}",
            quote(&hex)
        ))
    })?;
    Ok(Bson::Binary(Binary {
        subtype: BinarySubtype::from(subtype as u8),
        bytes,
    }))
}

/// `Timestamp(t, i)`, `Timestamp({t, i})` or `Timestamp()` (zero).
fn timestamp(call: Call<'_>, arguments: &[Bson]) -> Result<Bson> {
    let arguments = call.expect_arguments(arguments, 0..=2)?;
    let (time, increment) = match arguments.as_slice() {
        [] => (Bson::Int32(0), Bson::Int32(0)),
        [Bson::Document(parts)]
            if parts.len() == 2 && parts.contains_key("t") && parts.contains_key("i") =>
        {
            (
                parts.get("t").cloned().unwrap_or(Bson::Null),
                parts.get("i").cloned().unwrap_or(Bson::Null),
            )
        }
        [time, increment] => (time.clone(), increment.clone()),
        _ => {
            return Err(call.invalid("expected (t, i) or ({ t: <seconds>, i: <increment> })"));
        }
    };
    let time = call.integer(&time, 0, u32::MAX.into(), "t")?;
    let increment = call.integer(&increment, 0, u32::MAX.into(), "i")?;
    Ok(Bson::Timestamp(Timestamp {
        time: time as u32,
        increment: increment as u32,
    }))
}

/// `RegExp(pattern, flags?)`, the pattern a string or a regular expression.
fn reg_exp(call: Call<'_>, arguments: &[Bson]) -> Result<Bson> {
    let arguments = call.expect_arguments(arguments, 1..=2)?;
    let flags = match arguments.get(1) {
        Some(flags) => Some(call.string(flags, "flags")?),
        None => None,
    };
    match &arguments[0] {
        Bson::RegularExpression(existing) => regex(
            existing.pattern.as_str(),
            flags.as_deref().unwrap_or(existing.options.as_str()),
            call.name,
            call.span,
        ),
        pattern => regex(
            &call.string(pattern, "a pattern")?,
            flags.as_deref().unwrap_or(""),
            call.name,
            call.span,
        ),
    }
}

/// `Code(code, scope?)`: JavaScript code, with a scope object when given one.
fn code(call: Call<'_>, arguments: &[Bson]) -> Result<Bson> {
    let arguments = call.expect_arguments(arguments, 1..=2)?;
    let code = call.string(&arguments[0], "JavaScript code")?;
    match arguments.get(1) {
        None => Ok(Bson::JavaScriptCode(code)),
        Some(Bson::Document(scope)) => Ok(Bson::JavaScriptCodeWithScope(JavaScriptCodeWithScope {
            code,
            scope: scope.clone(),
        })),
        Some(other) => Err(call.invalid(format!(
            "expected a scope object, found {}",
            crate::path::describe(other)
        ))),
    }
}

/// `DBPointer(namespace, oid)`.
fn db_pointer(call: Call<'_>, arguments: &[Bson]) -> Result<Bson> {
    let arguments = call.expect_arguments(arguments, 2..=2)?;
    let namespace = call.string(&arguments[0], "a namespace")?;
    let Bson::ObjectId(id) = &arguments[1] else {
        return Err(call.invalid(format!(
            "expected an ObjectId, found {}",
            crate::path::describe(&arguments[1])
        )));
    };
    // bson has no public constructor for this deprecated type: go through its
    // Extended JSON decoder.
    let json =
        serde_json::json!({ "$dbPointer": { "$ref": namespace, "$id": { "$oid": id.to_hex() } } });
    Bson::try_from(json).map_err(|error| call.invalid(error))
}

/// `DBRef(collection, id, database?)`: a `{$ref, $id, $db}` document.
fn db_ref(call: Call<'_>, arguments: &[Bson]) -> Result<Bson> {
    let arguments = call.expect_arguments(arguments, 2..=3)?;
    let mut reference = Document::new();
    reference.insert("$ref", call.string(&arguments[0], "a collection name")?);
    reference.insert("$id", arguments[1].clone());
    if let Some(database) = arguments.get(2) {
        reference.insert("$db", call.string(database, "a database name")?);
    }
    Ok(Bson::Document(reference))
}

fn date(call: Call<'_>, arguments: &[Bson]) -> Result<Bson> {
    match arguments {
        [] => Ok(Bson::DateTime(DateTime::now())),
        [Bson::String(text)] => iso_date::parse_millis(text.trim())
            .map(|millis| Bson::DateTime(DateTime::from_millis(millis)))
            .ok_or_else(|| {
                call.invalid(format!(
                    "expected an ISO 8601 date like '2024-01-31T12:00:00Z', found {}",
                    quote(text)
                ))
            }),
        [Bson::DateTime(date)] => Ok(Bson::DateTime(*date)),
        [millis] => {
            let millis = call.integer(
                &truncated(millis),
                i64::MIN.into(),
                i64::MAX.into(),
                "milliseconds since the epoch",
            )?;
            Ok(Bson::DateTime(DateTime::from_millis(millis as i64)))
        }
        numbers
            if numbers.iter().all(|value| {
                matches!(value, Bson::Int32(_) | Bson::Int64(_) | Bson::Double(_))
            }) =>
        {
            Err(call.invalid(
                "the form (year, month, ...) depends on the local time zone and is not supported: \
                 write ISODate('2024-01-31T12:00:00Z')",
            ))
        }
        _ => Err(call.invalid(
            "expected an ISO 8601 date string, milliseconds since the epoch or no argument",
        )),
    }
}

/// JavaScript dates drop the fraction of a millisecond count.
fn truncated(millis: &Bson) -> Bson {
    match millis {
        Bson::Double(value) if value.is_finite() => Bson::Double(value.trunc()),
        other => other.clone(),
    }
}

fn base64_binary(call: Call<'_>, text: &Bson, subtype: u8) -> Result<Bson> {
    let text = call.string(text, "base64 data")?;
    Binary::from_base64(&text, BinarySubtype::from(subtype))
        .map(Bson::Binary)
        .map_err(|_| call.invalid(format!("expected base64 data, found {}", quote(&text))))
}

/// The BSON regular expression options; JavaScript's `g`, `y`, `d` and `v` have no BSON
/// meaning and are refused rather than silently dropped.
const REGEX_OPTIONS: &str = "ilmsux";

fn regex(pattern: &str, flags: &str, what: &str, span: Span) -> Result<Bson> {
    let invalid = |problem: String| DocError::InvalidValue {
        message: format!("{what} at {}: {problem}", span.start),
    };
    let mut options: Vec<char> = flags.chars().collect();
    if let Some(flag) = options.iter().find(|&&flag| !REGEX_OPTIONS.contains(flag)) {
        return Err(invalid(format!(
            "unsupported flag {flag:?} (BSON regular expressions take i, l, m, s, u and x)"
        )));
    }
    options.sort_unstable();
    if let Some([flag, _]) = options.windows(2).find(|pair| pair[0] == pair[1]) {
        return Err(invalid(format!("flag {flag:?} given twice")));
    }
    let options: String = options.into_iter().collect();
    let pattern = pattern
        .try_into()
        .map_err(|_| invalid("a pattern cannot contain the character U+0000".to_owned()))?;
    let options = options
        .as_str()
        .try_into()
        .expect("options are ASCII letters");
    Ok(Bson::RegularExpression(Regex { pattern, options }))
}

/// Decodes an Extended JSON object with the `bson` crate; `marker` is its first `$` key.
fn extended_json(fields: &[Field], marker: &Field) -> Result<Bson> {
    let mut object = serde_json::Map::new();
    for field in fields {
        object.insert(field.key.clone(), to_json(&field.value, marker)?);
    }
    Bson::try_from(serde_json::Value::Object(object)).map_err(|error| DocError::InvalidValue {
        message: format!(
            "Extended JSON {} at {}: {}",
            marker.key,
            marker.key_span.start,
            bson_error_message(&error)
        ),
    })
}

/// The part of a `bson` error message that describes the problem.
fn bson_error_message(error: &bson::error::Error) -> String {
    let message = error
        .message
        .clone()
        .unwrap_or_else(|| error.kind.to_string());
    // The crate's message quotes the value, which may be megabytes long.
    abbreviate(message.trim_end_matches('.'), MAX_SHOWN_CHARS).into_owned()
}

/// The plain JSON inside an Extended JSON object.
fn to_json(expr: &Expr, marker: &Field) -> Result<serde_json::Value> {
    use serde_json::Value;
    let not_json = |what: String| DocError::InvalidValue {
        message: format!(
            "Extended JSON {} at {}: expected plain JSON inside, found {what} at {}",
            marker.key, marker.key_span.start, expr.span.start
        ),
    };
    Ok(match &expr.kind {
        ExprKind::Null => Value::Null,
        ExprKind::Boolean(value) => Value::Bool(*value),
        ExprKind::String(text) => Value::String(text.clone()),
        ExprKind::Number(NumberLiteral::Integer(value)) if i64::try_from(*value).is_ok() => {
            Value::from(*value as i64)
        }
        ExprKind::Number(number) => {
            let value = match number {
                NumberLiteral::Integer(value) => *value as f64,
                NumberLiteral::Double(value) => *value,
            };
            serde_json::Number::from_f64(value)
                .map(Value::Number)
                .ok_or_else(|| not_json(format!("{value}")))?
        }
        ExprKind::Array(elements) => Value::Array(
            elements
                .iter()
                .map(|element| to_json(element, marker))
                .collect::<Result<_>>()?,
        ),
        ExprKind::Object(fields) => {
            let mut object = serde_json::Map::new();
            for field in fields {
                object.insert(field.key.clone(), to_json(&field.value, marker)?);
            }
            Value::Object(object)
        }
        other => return Err(not_json(other.describe())),
    })
}

/// Quotes a string argument for an error message, cut to a readable length.
fn quote(text: &str) -> String {
    const MAX_CHARS: usize = 40;
    if text.chars().count() <= MAX_CHARS {
        format!("{text:?}")
    } else {
        format!("{:?}...", text.chars().take(MAX_CHARS).collect::<String>())
    }
}

/// Decodes hex digits (either case) into bytes; `None` for an odd count or a non-digit.
pub(crate) fn decode_hex(text: &str) -> Option<Vec<u8>> {
    if !text.len().is_multiple_of(2) {
        return None;
    }
    text.as_bytes()
        .chunks(2)
        .map(|pair| {
            let high = char::from(pair[0]).to_digit(16)?;
            let low = char::from(pair[1]).to_digit(16)?;
            Some((high * 16 + low) as u8)
        })
        .collect()
}
