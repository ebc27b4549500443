//! Numbers as aggregation expressions compute with them: int32 widens to int64 on overflow,
//! int64 to double; decimal128 operands are computed as doubles (Spillway has no decimal
//! arithmetic; the result is a double, documented in docs/document-language.md).

use bson::Bson;

/// A numeric value of an expression.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Num {
    Int(i32),
    Long(i64),
    Double(f64),
}

impl Num {
    /// The number in `value`, if it is one.
    pub(crate) fn of(value: &Bson) -> Option<Num> {
        match value {
            Bson::Int32(n) => Some(Num::Int(*n)),
            Bson::Int64(n) => Some(Num::Long(*n)),
            Bson::Double(n) => Some(Num::Double(*n)),
            Bson::Decimal128(n) => n.to_string().parse::<f64>().ok().map(Num::Double),
            _ => None,
        }
    }

    pub(crate) fn to_bson(self) -> Bson {
        match self {
            Num::Int(n) => Bson::Int32(n),
            Num::Long(n) => Bson::Int64(n),
            Num::Double(n) => Bson::Double(n),
        }
    }

    pub(crate) fn as_f64(self) -> f64 {
        match self {
            Num::Int(n) => f64::from(n),
            Num::Long(n) => n as f64,
            Num::Double(n) => n,
        }
    }

    /// The integer value, if the number is integral (a double with no fraction included).
    pub(crate) fn as_i64(self) -> Option<i64> {
        match self {
            Num::Int(n) => Some(i64::from(n)),
            Num::Long(n) => Some(n),
            Num::Double(n) if n.fract() == 0.0 && n.abs() < 9.2e18 => Some(n as i64),
            Num::Double(_) => None,
        }
    }

    /// `a + b` with MongoDB's widening.
    pub(crate) fn add(self, other: Num) -> Num {
        combine(self, other, i32::checked_add, i64::checked_add, |a, b| {
            a + b
        })
    }

    /// `a - b` with MongoDB's widening.
    pub(crate) fn sub(self, other: Num) -> Num {
        combine(self, other, i32::checked_sub, i64::checked_sub, |a, b| {
            a - b
        })
    }

    /// `a * b` with MongoDB's widening.
    pub(crate) fn mul(self, other: Num) -> Num {
        combine(self, other, i32::checked_mul, i64::checked_mul, |a, b| {
            a * b
        })
    }

    /// The narrowest integer type that holds `value`, as `$sum` of ints returns.
    pub(crate) fn from_i64(value: i64) -> Num {
        i32::try_from(value).map_or(Num::Long(value), Num::Int)
    }
}

fn combine(
    a: Num,
    b: Num,
    int: fn(i32, i32) -> Option<i32>,
    long: fn(i64, i64) -> Option<i64>,
    double: fn(f64, f64) -> f64,
) -> Num {
    match (a, b) {
        (Num::Int(x), Num::Int(y)) => int(x, y)
            .map(Num::Int)
            .or_else(|| long(i64::from(x), i64::from(y)).map(Num::Long))
            .unwrap_or(Num::Double(double(f64::from(x), f64::from(y)))),
        (Num::Double(_), _) | (_, Num::Double(_)) => Num::Double(double(a.as_f64(), b.as_f64())),
        _ => {
            let (x, y) = (a.as_i64().unwrap_or(0), b.as_i64().unwrap_or(0));
            long(x, y).map_or(Num::Double(double(x as f64, y as f64)), Num::Long)
        }
    }
}

/// Whether `value` is null, missing or undefined (most operators then return null).
pub(crate) fn is_nullish(value: Option<&Bson>) -> bool {
    matches!(value, None | Some(Bson::Null | Bson::Undefined))
}

/// MongoDB's type name of a value, as `$type` returns it and error messages say it.
pub fn type_name(value: Option<&Bson>) -> &'static str {
    match value {
        None => "missing",
        Some(value) => match value {
            Bson::Double(_) => "double",
            Bson::String(_) => "string",
            Bson::Document(_) => "object",
            Bson::Array(_) => "array",
            Bson::Binary(_) => "binData",
            Bson::Undefined => "undefined",
            Bson::ObjectId(_) => "objectId",
            Bson::Boolean(_) => "bool",
            Bson::DateTime(_) => "date",
            Bson::Null => "null",
            Bson::RegularExpression(_) => "regex",
            Bson::DbPointer(_) => "dbPointer",
            Bson::JavaScriptCode(_) => "javascript",
            Bson::Symbol(_) => "symbol",
            Bson::JavaScriptCodeWithScope(_) => "javascriptWithScope",
            Bson::Int32(_) => "int",
            Bson::Timestamp(_) => "timestamp",
            Bson::Int64(_) => "long",
            Bson::Decimal128(_) => "decimal",
            Bson::MinKey => "minKey",
            Bson::MaxKey => "maxKey",
        },
    }
}
