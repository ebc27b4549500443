//! Type operators: `$type`, `$isNumber`, `$convert` and the `$toBool`, `$toInt`, `$toLong`,
//! `$toDouble`, `$toDecimal`, `$toString`, `$toDate`, `$toObjectId` family.

// Every operator function has the one signature of `CallFn` (the values by value, a
// `Result`), whether or not it consumes them or can fail.
#![allow(clippy::needless_pass_by_value, clippy::unnecessary_wraps)]

use std::str::FromStr;

use bson::oid::ObjectId;
use bson::{Bson, DateTime, Decimal128};

use super::num::{Num, is_nullish, type_name};
use super::{Context, Expr, Named, Operator, OperatorBox, Scope, expect_args, expression_error};
use crate::error::Result;

/// Parses the type operator `name`, if it is one.
pub(super) fn parse(name: &str, argument: &Bson, scope: &mut Scope) -> Option<Result<Expr>> {
    let to = match name {
        "$type" => {
            return Some(
                expect_args(scope, "$type", argument, 1, Some(1)).map(|args| {
                    Expr::call("$type", args, |_, values| {
                        Ok(Some(Bson::String(
                            type_name(values[0].as_ref()).to_string(),
                        )))
                    })
                }),
            );
        }
        "$isNumber" => {
            return Some(
                expect_args(scope, "$isNumber", argument, 1, Some(1)).map(|args| {
                    Expr::call("$isNumber", args, |_, values| {
                        Ok(Some(Bson::Boolean(matches!(
                            values[0],
                            Some(
                                Bson::Int32(_)
                                    | Bson::Int64(_)
                                    | Bson::Double(_)
                                    | Bson::Decimal128(_)
                            )
                        ))))
                    })
                }),
            );
        }
        "$convert" => return Some(parse_convert(argument, scope)),
        "$toBool" => "bool",
        "$toInt" => "int",
        "$toLong" => "long",
        "$toDouble" => "double",
        "$toDecimal" => "decimal",
        "$toString" => "string",
        "$toDate" => "date",
        "$toObjectId" => "objectId",
        _ => return None,
    };
    Some(
        expect_args(scope, name, argument, 1, Some(1)).map(|mut args| {
            Expr::Operator(Box::new(Convert {
                input: args.remove(0),
                to: To::Fixed(to),
                on_error: None,
                on_null: None,
            }))
        }),
    )
}

fn parse_convert(argument: &Bson, scope: &mut Scope) -> Result<Expr> {
    let mut named = Named::parse(
        scope,
        "$convert",
        argument,
        &["input", "to"],
        &["onError", "onNull", "format", "base", "byteOrder"],
    )?;
    Ok(Expr::Operator(Box::new(Convert {
        input: named.take("input").expect("required"),
        to: To::Computed(Box::new(named.take("to").expect("required"))),
        on_error: named.take("onError").map(Box::new),
        on_null: named.take("onNull").map(Box::new),
    })))
}

#[derive(Debug, Clone)]
enum To {
    Fixed(&'static str),
    Computed(Box<Expr>),
}

#[derive(Debug, Clone)]
struct Convert {
    input: Expr,
    to: To,
    on_error: Option<Box<Expr>>,
    on_null: Option<Box<Expr>>,
}

/// The target type's name, from a name or MongoDB's type number.
fn target(value: Option<&Bson>) -> Result<&'static str> {
    let name = match value {
        Some(Bson::String(name)) => name.as_str(),
        Some(number) => match Num::of(number).and_then(Num::as_i64) {
            Some(1) => "double",
            Some(2) => "string",
            Some(7) => "objectId",
            Some(8) => "bool",
            Some(9) => "date",
            Some(16) => "int",
            Some(18) => "long",
            Some(19) => "decimal",
            _ => {
                return Err(expression_error(
                    ErrorCode::BAD_VALUE,
                    format!("Unknown type name: {number}"),
                ));
            }
        },
        None => {
            return Err(expression_error(
                ErrorCode::BAD_VALUE,
                "$convert's 'to' argument is missing",
            ));
        }
    };
    Ok(match name {
        "double" => "double",
        "string" => "string",
        "objectId" => "objectId",
        "bool" => "bool",
        "date" => "date",
        "int" => "int",
        "long" => "long",
        "decimal" => "decimal",
        other => {
            return Err(expression_error(
                ErrorCode::BAD_VALUE,
                format!("Unknown type name: {other}"),
            ));
        }
    })
}

struct ErrorCode;

impl ErrorCode {
    const BAD_VALUE: i32 = 2;
    const CONVERSION_FAILURE: i32 = 241;
}

fn failure(value: &Bson, to: &str, why: &str) -> crate::DocError {
    expression_error(
        ErrorCode::CONVERSION_FAILURE,
        format!(
            "Failed to parse {} '{value}' to {to}{why}",
            type_name(Some(value))
        ),
    )
}

fn unsupported(value: &Bson, to: &str) -> crate::DocError {
    expression_error(
        ErrorCode::CONVERSION_FAILURE,
        format!(
            "Unsupported conversion from {} to {to} in $convert with no onError value",
            type_name(Some(value))
        ),
    )
}

/// `value` converted to type `to`, as `$convert` converts it.
fn convert(value: &Bson, to: &str) -> Result<Bson> {
    let number = Num::of(value);
    Ok(match to {
        "bool" => match value {
            Bson::Boolean(b) => Bson::Boolean(*b),
            Bson::String(_)
            | Bson::ObjectId(_)
            | Bson::DateTime(_)
            | Bson::Document(_)
            | Bson::Array(_)
            | Bson::Binary(_)
            | Bson::RegularExpression(_)
            | Bson::Timestamp(_) => Bson::Boolean(true),
            _ => match number {
                Some(n) => Bson::Boolean(n.as_f64() != 0.0),
                None => return Err(unsupported(value, to)),
            },
        },
        "int" | "long" => {
            let integer = match value {
                Bson::Boolean(b) => i64::from(*b),
                Bson::String(text) => text
                    .trim()
                    .parse::<i64>()
                    .ok()
                    .filter(|_| !text.starts_with(' ') && !text.ends_with(' '))
                    .ok_or_else(|| failure(value, to, ""))?,
                Bson::DateTime(at) if to == "long" => at.timestamp_millis(),
                _ => match number {
                    Some(Num::Double(d)) if !d.is_finite() => {
                        return Err(expression_error(
                            ErrorCode::CONVERSION_FAILURE,
                            format!(
                                "Attempt to convert NaN or infinity value to integer type in $convert with no onError value: {d}"
                            ),
                        ));
                    }
                    Some(Num::Double(d))
                        if d.trunc() < -9.223_372_036_854_776e18
                            || d.trunc() >= 9.223_372_036_854_776e18 =>
                    {
                        return Err(expression_error(
                            ErrorCode::CONVERSION_FAILURE,
                            format!(
                                "Conversion would overflow target type in $convert with no onError value: {d}"
                            ),
                        ));
                    }
                    Some(Num::Double(d)) => d.trunc() as i64,
                    Some(n) => n.as_i64().unwrap_or(0),
                    None => return Err(unsupported(value, to)),
                },
            };
            if to == "int" {
                Bson::Int32(i32::try_from(integer).map_err(|_| {
                    expression_error(ErrorCode::CONVERSION_FAILURE, format!("Conversion would overflow target type in $convert with no onError value: {integer}"))
                })?)
            } else {
                Bson::Int64(integer)
            }
        }
        "double" => match value {
            Bson::Boolean(b) => Bson::Double(f64::from(u8::from(*b))),
            Bson::String(text) => {
                Bson::Double(text.parse::<f64>().map_err(|_| failure(value, to, ""))?)
            }
            Bson::DateTime(at) => Bson::Double(at.timestamp_millis() as f64),
            _ => match number {
                Some(n) => Bson::Double(n.as_f64()),
                None => return Err(unsupported(value, to)),
            },
        },
        "decimal" => {
            let text = match value {
                Bson::Boolean(b) => u8::from(*b).to_string(),
                Bson::String(text) => text.clone(),
                Bson::Decimal128(d) => return Ok(Bson::Decimal128(*d)),
                Bson::Int32(n) => n.to_string(),
                Bson::Int64(n) => n.to_string(),
                Bson::Double(n) => n.to_string(),
                Bson::DateTime(at) => at.timestamp_millis().to_string(),
                _ => return Err(unsupported(value, to)),
            };
            Bson::Decimal128(Decimal128::from_str(&text).map_err(|_| failure(value, to, ""))?)
        }
        "string" => match value {
            Bson::String(text) => Bson::String(text.clone()),
            Bson::Boolean(b) => Bson::String(b.to_string()),
            Bson::Int32(n) => Bson::String(n.to_string()),
            Bson::Int64(n) => Bson::String(n.to_string()),
            Bson::Double(n) => Bson::String(format_double(*n)),
            Bson::Decimal128(n) => Bson::String(n.to_string()),
            Bson::ObjectId(id) => Bson::String(id.to_hex()),
            Bson::DateTime(at) => Bson::String(super::date::iso_string(at.timestamp_millis())),
            _ => return Err(unsupported(value, to)),
        },
        "date" => match value {
            Bson::DateTime(at) => Bson::DateTime(*at),
            Bson::ObjectId(id) => Bson::DateTime(DateTime::from_millis(
                (id.timestamp().timestamp_millis() / 1000) * 1000,
            )),
            Bson::Timestamp(ts) => Bson::DateTime(DateTime::from_millis(i64::from(ts.time) * 1000)),
            Bson::String(text) => Bson::DateTime(
                DateTime::parse_rfc3339_str(text).map_err(|_| failure(value, to, ""))?,
            ),
            Bson::Int64(n) => Bson::DateTime(DateTime::from_millis(*n)),
            Bson::Double(n) if n.is_finite() => {
                Bson::DateTime(DateTime::from_millis(n.trunc() as i64))
            }
            Bson::Decimal128(_) => Bson::DateTime(DateTime::from_millis(
                number.map_or(0.0, Num::as_f64).trunc() as i64,
            )),
            _ => return Err(unsupported(value, to)),
        },
        _ => match value {
            Bson::ObjectId(id) => Bson::ObjectId(*id),
            Bson::String(text) => Bson::ObjectId(ObjectId::parse_str(text).map_err(|_| {
                failure(
                    value,
                    to,
                    ": Invalid string length for parsing to OID, expected 24 but found other",
                )
            })?),
            _ => return Err(unsupported(value, to)),
        },
    })
}

/// A double as MongoDB prints it in `$toString`: whole numbers without a fraction.
fn format_double(n: f64) -> String {
    if n.is_finite() && n.fract() == 0.0 && n.abs() < 1e15 {
        format!("{}", n as i64)
    } else {
        n.to_string()
    }
}

impl Operator for Convert {
    fn evaluate(&self, context: &mut Context<'_>) -> Result<Option<Bson>> {
        let input = self.input.evaluate(context)?;
        let to = match &self.to {
            To::Fixed(to) => *to,
            To::Computed(expr) => target(expr.evaluate(context)?.as_ref())?,
        };
        if is_nullish(input.as_ref()) {
            return match &self.on_null {
                Some(on_null) => on_null.evaluate(context),
                None => Ok(Some(Bson::Null)),
            };
        }
        let input = input.expect("not missing");
        match (convert(&input, to), &self.on_error) {
            (Ok(value), _) => Ok(Some(value)),
            (Err(_), Some(on_error)) => on_error.evaluate(context),
            (Err(error), None) => Err(error),
        }
    }

    fn clone_box(&self) -> OperatorBox {
        Box::new(self.clone())
    }

    fn children(&self) -> Vec<&Expr> {
        let mut children = vec![&self.input];
        if let To::Computed(to) = &self.to {
            children.push(to);
        }
        children.extend(self.on_error.as_deref());
        children.extend(self.on_null.as_deref());
        children
    }
}
