//! Arithmetic operators: `$add`, `$subtract`, `$multiply`, `$divide`, `$mod`, `$abs`,
//! `$ceil`, `$floor`, `$round`, `$trunc`, `$sqrt`, `$pow`, `$exp`, `$ln`, `$log`, `$log10`,
//! and the array forms of `$sum`, `$avg`, `$min`, `$max`, `$stdDevPop`, `$stdDevSamp`.
//! `$min` and `$max` order strings under the evaluation's collation, as MongoDB's do.

// Every operator function has the one signature of `CallFn` (the values by value, a
// `Result`), whether or not it consumes them or can fail.
#![allow(
    clippy::needless_pass_by_value,
    clippy::unnecessary_wraps,
    clippy::float_cmp
)]

use bson::{Bson, DateTime};

use super::num::{Num, is_nullish, type_name};
use super::{Expr, Scope, expect_args, expression_error};
use crate::collation::Collation;
use crate::compare::compare_collated;
use crate::error::Result;

type Values = Vec<Option<Bson>>;

/// Parses the arithmetic operator `name`, if it is one.
pub(super) fn parse(name: &str, argument: &Bson, scope: &mut Scope) -> Option<Result<Expr>> {
    let (name, min, max, function): (&'static str, usize, Option<usize>, super::CallFn) = match name
    {
        "$add" => ("$add", 0, None, add),
        "$subtract" => ("$subtract", 2, Some(2), subtract),
        "$multiply" => ("$multiply", 0, None, multiply),
        "$divide" => ("$divide", 2, Some(2), divide),
        "$mod" => ("$mod", 2, Some(2), modulo),
        "$abs" => ("$abs", 1, Some(1), abs),
        "$ceil" => ("$ceil", 1, Some(1), ceil),
        "$floor" => ("$floor", 1, Some(1), floor),
        "$round" => ("$round", 1, Some(2), round),
        "$trunc" => ("$trunc", 1, Some(2), trunc),
        "$sqrt" => ("$sqrt", 1, Some(1), float_function),
        "$exp" => ("$exp", 1, Some(1), float_function),
        "$ln" => ("$ln", 1, Some(1), float_function),
        "$log10" => ("$log10", 1, Some(1), float_function),
        "$log" => ("$log", 2, Some(2), log),
        "$pow" => ("$pow", 2, Some(2), pow),
        "$sum" => ("$sum", 0, None, sum),
        "$avg" => ("$avg", 0, None, avg),
        "$min" | "$max" => {
            let (name, function): (&'static str, super::CollatedFn) = if name == "$min" {
                ("$min", min)
            } else {
                ("$max", max)
            };
            return Some(
                expect_args(scope, name, argument, 0, None)
                    .map(|args| Expr::collated_call(name, args, function)),
            );
        }
        "$stdDevPop" => ("$stdDevPop", 0, None, std_dev_pop),
        "$stdDevSamp" => ("$stdDevSamp", 0, None, std_dev_samp),
        "$rand" => {
            if !matches!(argument, Bson::Document(options) if options.is_empty()) {
                return Some(Err(expression_error(
                    10065,
                    "$rand takes an empty object as its argument",
                )));
            }
            return Some(Ok(Expr::call("$rand", Vec::new(), rand)));
        }
        _ => return None,
    };
    Some(expect_args(scope, name, argument, min, max).map(|args| Expr::call(name, args, function)))
}

fn number(name: &str, value: &Bson, code: i32) -> Result<Num> {
    Num::of(value).ok_or_else(|| {
        expression_error(
            code,
            format!(
                "{name} only supports numeric types, not {}",
                type_name(Some(value))
            ),
        )
    })
}

fn add(name: &'static str, values: Values) -> Result<Option<Bson>> {
    let mut total = Num::Int(0);
    let mut date: Option<i64> = None;
    for value in &values {
        match value {
            None | Some(Bson::Null | Bson::Undefined) => return Ok(Some(Bson::Null)),
            Some(Bson::DateTime(at)) => {
                if date.is_some() {
                    return Err(expression_error(
                        16612,
                        "only one date allowed in an $add expression",
                    ));
                }
                date = Some(at.timestamp_millis());
            }
            Some(other) => {
                let n = Num::of(other).ok_or_else(|| {
                    expression_error(
                        16554,
                        format!(
                            "{name} only supports numeric or date types, not {}",
                            type_name(Some(other))
                        ),
                    )
                })?;
                total = total.add(n);
            }
        }
    }
    Ok(Some(match date {
        Some(millis) => Bson::DateTime(DateTime::from_millis(
            millis.wrapping_add(round_millis(total)),
        )),
        None => total.to_bson(),
    }))
}

fn round_millis(n: Num) -> i64 {
    match n {
        Num::Double(d) => d.round() as i64,
        other => other.as_i64().unwrap_or(0),
    }
}

fn subtract(name: &'static str, values: Values) -> Result<Option<Bson>> {
    let (a, b) = (values[0].as_ref(), values[1].as_ref());
    if is_nullish(a) || is_nullish(b) {
        return Ok(Some(Bson::Null));
    }
    let (a, b) = (a.expect("checked"), b.expect("checked"));
    match (a, b) {
        (Bson::DateTime(x), Bson::DateTime(y)) => Ok(Some(Bson::Int64(
            x.timestamp_millis().wrapping_sub(y.timestamp_millis()),
        ))),
        (Bson::DateTime(x), other) => match Num::of(other) {
            Some(n) => Ok(Some(Bson::DateTime(DateTime::from_millis(
                x.timestamp_millis().wrapping_sub(round_millis(n)),
            )))),
            None => Err(expression_error(
                16613,
                format!("cant {name} a {} from a date", type_name(Some(other))),
            )),
        },
        (x, y) => match (Num::of(x), Num::of(y)) {
            (Some(x), Some(y)) => Ok(Some(x.sub(y).to_bson())),
            _ => Err(expression_error(
                16556,
                format!(
                    "cant {name} a {} from a {}",
                    type_name(Some(y)),
                    type_name(Some(x))
                ),
            )),
        },
    }
}

fn multiply(name: &'static str, values: Values) -> Result<Option<Bson>> {
    let mut product = Num::Int(1);
    for value in &values {
        match value {
            None | Some(Bson::Null | Bson::Undefined) => return Ok(Some(Bson::Null)),
            Some(other) => product = product.mul(number(name, other, 16555)?),
        }
    }
    Ok(Some(product.to_bson()))
}

/// The two operands as numbers, or `None` when either is null or missing.
fn two_numbers(name: &str, values: &Values, code: i32) -> Result<Option<(Num, Num)>> {
    let (a, b) = (values[0].as_ref(), values[1].as_ref());
    if is_nullish(a) || is_nullish(b) {
        return Ok(None);
    }
    let (a, b) = (a.expect("checked"), b.expect("checked"));
    match (Num::of(a), Num::of(b)) {
        (Some(x), Some(y)) => Ok(Some((x, y))),
        _ => Err(expression_error(
            code,
            format!(
                "{name} only supports numeric types, not {} and {}",
                type_name(Some(a)),
                type_name(Some(b))
            ),
        )),
    }
}

fn divide(name: &'static str, values: Values) -> Result<Option<Bson>> {
    let Some((a, b)) = two_numbers(name, &values, 16609)? else {
        return Ok(Some(Bson::Null));
    };
    if b.as_f64() == 0.0 {
        return Err(expression_error(2, "can't $divide by zero"));
    }
    Ok(Some(Bson::Double(a.as_f64() / b.as_f64())))
}

fn modulo(name: &'static str, values: Values) -> Result<Option<Bson>> {
    let Some((a, b)) = two_numbers(name, &values, 16611)? else {
        return Ok(Some(Bson::Null));
    };
    if b.as_f64() == 0.0 {
        return Err(expression_error(16610, "can't $mod by zero"));
    }
    Ok(Some(match (a, b) {
        (Num::Int(x), Num::Int(y)) => Bson::Int32(x.wrapping_rem(y)),
        (Num::Double(_), _) | (_, Num::Double(_)) => Bson::Double(a.as_f64() % b.as_f64()),
        _ => Bson::Int64(
            a.as_i64()
                .unwrap_or(0)
                .wrapping_rem(b.as_i64().unwrap_or(1)),
        ),
    }))
}

/// The single numeric argument, or `None` for null/missing.
fn one_number(name: &str, values: &Values, code: i32) -> Result<Option<Num>> {
    match values[0].as_ref() {
        value if is_nullish(value) => Ok(None),
        Some(value) => number(name, value, code).map(Some),
        None => Ok(None),
    }
}

fn abs(name: &'static str, values: Values) -> Result<Option<Bson>> {
    Ok(Some(match one_number(name, &values, 28765)? {
        None => Bson::Null,
        Some(Num::Int(n)) => n
            .checked_abs()
            .map_or(Bson::Int64(i64::from(n).abs()), Bson::Int32),
        Some(Num::Long(n)) => match n.checked_abs() {
            Some(n) => Bson::Int64(n),
            None => return Err(expression_error(28680, "can't take $abs of long long min")),
        },
        Some(Num::Double(n)) => Bson::Double(n.abs()),
    }))
}

fn ceil(name: &'static str, values: Values) -> Result<Option<Bson>> {
    Ok(Some(match one_number(name, &values, 28765)? {
        None => Bson::Null,
        Some(Num::Double(n)) => Bson::Double(n.ceil()),
        Some(other) => other.to_bson(),
    }))
}

fn floor(name: &'static str, values: Values) -> Result<Option<Bson>> {
    Ok(Some(match one_number(name, &values, 28765)? {
        None => Bson::Null,
        Some(Num::Double(n)) => Bson::Double(n.floor()),
        Some(other) => other.to_bson(),
    }))
}

/// `$round` and `$trunc`: `place` digits after the point (negative: before it).
fn to_place(name: &'static str, values: &Values, round_half_even: bool) -> Result<Option<Bson>> {
    let place = match values.get(1) {
        None => 0,
        Some(value) if is_nullish(value.as_ref()) => return Ok(Some(Bson::Null)),
        Some(Some(value)) => match Num::of(value).and_then(Num::as_i64) {
            Some(place) if (-20..100).contains(&place) => place,
            _ => {
                return Err(expression_error(
                    51083,
                    format!(
                        "cannot apply {name} with precision value {value} value must be in [-20, 100]"
                    ),
                ));
            }
        },
        Some(None) => return Ok(Some(Bson::Null)),
    };
    let Some(n) = one_number(name, values, 51081)? else {
        return Ok(Some(Bson::Null));
    };
    let apply = |x: f64| {
        let factor = 10f64.powi(place as i32);
        let scaled = x * factor;
        let done = if round_half_even {
            let rounded = scaled.round();
            if (scaled - scaled.trunc()).abs() == 0.5 && rounded % 2.0 != 0.0 {
                rounded - scaled.signum()
            } else {
                rounded
            }
        } else {
            scaled.trunc()
        };
        done / factor
    };
    Ok(Some(match n {
        Num::Double(x) => Bson::Double(apply(x)),
        integer if place >= 0 => integer.to_bson(),
        Num::Int(x) => Bson::Int32(apply(f64::from(x)) as i32),
        Num::Long(x) => Bson::Int64(apply(x as f64) as i64),
    }))
}

fn round(name: &'static str, values: Values) -> Result<Option<Bson>> {
    to_place(name, &values, true)
}

fn trunc(name: &'static str, values: Values) -> Result<Option<Bson>> {
    to_place(name, &values, false)
}

fn float_function(name: &'static str, values: Values) -> Result<Option<Bson>> {
    let Some(n) = one_number(name, &values, 28765)? else {
        return Ok(Some(Bson::Null));
    };
    let x = n.as_f64();
    let result = match name {
        "$sqrt" if x < 0.0 => {
            return Err(expression_error(
                28714,
                "$sqrt's argument must be greater than or equal to 0",
            ));
        }
        "$sqrt" => x.sqrt(),
        "$exp" => x.exp(),
        "$ln" | "$log10" if x <= 0.0 => {
            return Err(expression_error(
                28766,
                format!("{name}'s argument must be a positive number, but is {x}"),
            ));
        }
        "$ln" => x.ln(),
        _ => x.log10(),
    };
    Ok(Some(Bson::Double(result)))
}

fn log(name: &'static str, values: Values) -> Result<Option<Bson>> {
    let Some((x, base)) = two_numbers(name, &values, 28756)? else {
        return Ok(Some(Bson::Null));
    };
    if x.as_f64() <= 0.0 {
        return Err(expression_error(
            28758,
            "$log's argument must be a positive number",
        ));
    }
    if base.as_f64() <= 0.0 || base.as_f64() == 1.0 {
        return Err(expression_error(
            28759,
            "$log's base must be a positive number not equal to 1",
        ));
    }
    Ok(Some(Bson::Double(x.as_f64().ln() / base.as_f64().ln())))
}

fn pow(name: &'static str, values: Values) -> Result<Option<Bson>> {
    let Some((base, exponent)) = two_numbers(name, &values, 28762)? else {
        return Ok(Some(Bson::Null));
    };
    if base.as_f64() == 0.0 && exponent.as_f64() < 0.0 {
        return Err(expression_error(
            28764,
            "$pow cannot take a base of 0 and a negative exponent",
        ));
    }
    if let (Some(b), Some(e)) = (base.as_i64(), exponent.as_i64())
        && !matches!(base, Num::Double(_))
        && !matches!(exponent, Num::Double(_))
        && e >= 0
        && let Ok(e) = u32::try_from(e)
        && let Some(result) = b.checked_pow(e)
    {
        let both_int = matches!((base, exponent), (Num::Int(_), Num::Int(_)));
        return Ok(Some(if both_int {
            Num::from_i64(result).to_bson()
        } else {
            Bson::Int64(result)
        }));
    }
    Ok(Some(Bson::Double(base.as_f64().powf(exponent.as_f64()))))
}

/// The values `$sum` and friends read: the elements of a single array argument, else the
/// arguments themselves.
fn operands(values: Values) -> Vec<Bson> {
    match values.as_slice() {
        [Some(Bson::Array(items))] => items.clone(),
        _ => values.into_iter().flatten().collect(),
    }
}

/// The sum of the numbers among `values` (others ignored), as `$sum` computes it.
pub(crate) fn sum_of<'a>(values: impl IntoIterator<Item = &'a Bson>) -> Num {
    values
        .into_iter()
        .filter_map(Num::of)
        .fold(Num::Int(0), Num::add)
}

fn sum(_: &'static str, values: Values) -> Result<Option<Bson>> {
    Ok(Some(sum_of(&operands(values)).to_bson()))
}

fn avg(_: &'static str, values: Values) -> Result<Option<Bson>> {
    let numbers: Vec<f64> = operands(values)
        .iter()
        .filter_map(Num::of)
        .map(Num::as_f64)
        .collect();
    if numbers.is_empty() {
        return Ok(Some(Bson::Null));
    }
    Ok(Some(Bson::Double(
        numbers.iter().sum::<f64>() / numbers.len() as f64,
    )))
}

/// The smallest (`wanted` less) or largest value, strings in `collation`'s order; null
/// when there is none but null and missing.
fn extreme(values: Values, wanted: std::cmp::Ordering, collation: &Collation) -> Option<Bson> {
    operands(values)
        .into_iter()
        .filter(|value| !matches!(value, Bson::Null | Bson::Undefined))
        .reduce(|best, value| {
            if compare_collated(&value, &best, collation) == wanted {
                value
            } else {
                best
            }
        })
        .or(Some(Bson::Null))
}

fn min(_: &'static str, values: Values, collation: &Collation) -> Result<Option<Bson>> {
    Ok(extreme(values, std::cmp::Ordering::Less, collation))
}

fn max(_: &'static str, values: Values, collation: &Collation) -> Result<Option<Bson>> {
    Ok(extreme(values, std::cmp::Ordering::Greater, collation))
}

/// The standard deviation of `numbers` (population, or sample with `sample`).
pub(crate) fn std_dev(numbers: &[f64], sample: bool) -> Option<f64> {
    let n = numbers.len();
    if n == 0 || (sample && n < 2) {
        return None;
    }
    let mean = numbers.iter().sum::<f64>() / n as f64;
    let squares: f64 = numbers.iter().map(|x| (x - mean) * (x - mean)).sum();
    Some((squares / (n - usize::from(sample)) as f64).sqrt())
}

fn std_dev_pop(_: &'static str, values: Values) -> Result<Option<Bson>> {
    let numbers: Vec<f64> = operands(values)
        .iter()
        .filter_map(Num::of)
        .map(Num::as_f64)
        .collect();
    Ok(Some(
        std_dev(&numbers, false).map_or(Bson::Null, Bson::Double),
    ))
}

fn std_dev_samp(_: &'static str, values: Values) -> Result<Option<Bson>> {
    let numbers: Vec<f64> = operands(values)
        .iter()
        .filter_map(Num::of)
        .map(Num::as_f64)
        .collect();
    Ok(Some(
        std_dev(&numbers, true).map_or(Bson::Null, Bson::Double),
    ))
}

/// `$rand`: a double in [0, 1), from a per-thread xorshift generator seeded by the clock.
fn rand(_: &'static str, _: Values) -> Result<Option<Bson>> {
    use std::cell::Cell;
    thread_local! {
        static STATE: Cell<u64> = Cell::new(
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0x9E37_79B9_7F4A_7C15, |elapsed| elapsed.as_nanos() as u64)
                | 1,
        );
    }
    let bits = STATE.with(|state| {
        let mut x = state.get();
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        state.set(x);
        x
    });
    Ok(Some(Bson::Double(
        (bits >> 11) as f64 / (1u64 << 53) as f64,
    )))
}
