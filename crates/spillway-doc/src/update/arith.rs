//! The arithmetic of `$inc` and `$mul`, with MongoDB's type promotion.
//!
//! - int32 with int32 stays int32, and becomes int64 when the result does not fit;
//! - int64 (with an int32 or int64) stays int64, and overflowing it is an error, not a silent
//!   switch to double (MongoDB refuses it too);
//! - anything with a double is a double;
//! - anything with a decimal128 is a decimal128, computed exactly and rounded half-even to 34
//!   digits (a double operand is first converted to a decimal with 15 significant digits, as
//!   MongoDB does).
//!
//! This module only computes values; it must never look at documents or paths.

use std::cmp::Ordering;

use bson::{Bson, Decimal128};

/// Which of the two operators is computing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Arithmetic {
    /// `$inc`.
    Add,
    /// `$mul`.
    Multiply,
}

impl Arithmetic {
    fn symbol(self) -> &'static str {
        match self {
            Arithmetic::Add => "+",
            Arithmetic::Multiply => "*",
        }
    }
}

/// Whether `value` is one of the four numeric types.
pub(super) fn is_number(value: &Bson) -> bool {
    matches!(
        value,
        Bson::Int32(_) | Bson::Int64(_) | Bson::Double(_) | Bson::Decimal128(_)
    )
}

/// Zero in the numeric type of `operand`: what `$mul` stores in a missing field.
pub(super) fn zero_like(operand: &Bson) -> Bson {
    match operand {
        Bson::Int64(_) => Bson::Int64(0),
        Bson::Double(_) => Bson::Double(0.0),
        Bson::Decimal128(_) => Bson::Decimal128("0".parse().expect("0 is a valid decimal")),
        _ => Bson::Int32(0),
    }
}

/// `current (+ or *) operand`; both must be numbers. Fails (with the reason) only when an
/// integer result does not fit in 64 bits.
pub(super) fn combine(op: Arithmetic, current: &Bson, operand: &Bson) -> Result<Bson, String> {
    let overflow = || {
        format!(
            "overflows a 64-bit integer ({current} {} {operand})",
            op.symbol()
        )
    };
    match (current, operand) {
        (Bson::Decimal128(_), _) | (_, Bson::Decimal128(_)) => {
            let (a, b) = (Decimal::from_bson(current), Decimal::from_bson(operand));
            let result = match op {
                Arithmetic::Add => a.add(&b),
                Arithmetic::Multiply => a.multiply(&b),
            };
            Ok(Bson::Decimal128(result.to_decimal128()))
        }
        (Bson::Double(_), _) | (_, Bson::Double(_)) => {
            let (a, b) = (to_f64(current), to_f64(operand));
            Ok(Bson::Double(match op {
                Arithmetic::Add => a + b,
                Arithmetic::Multiply => a * b,
            }))
        }
        (Bson::Int32(a), Bson::Int32(b)) => {
            let narrow = match op {
                Arithmetic::Add => a.checked_add(*b),
                Arithmetic::Multiply => a.checked_mul(*b),
            };
            Ok(narrow.map_or_else(
                || {
                    let (a, b) = (i64::from(*a), i64::from(*b));
                    Bson::Int64(match op {
                        Arithmetic::Add => a + b,
                        Arithmetic::Multiply => a * b,
                    })
                },
                Bson::Int32,
            ))
        }
        _ => {
            let (a, b) = (to_i64(current), to_i64(operand));
            let wide = match op {
                Arithmetic::Add => a.checked_add(b),
                Arithmetic::Multiply => a.checked_mul(b),
            };
            wide.map(Bson::Int64).ok_or_else(overflow)
        }
    }
}

fn to_f64(value: &Bson) -> f64 {
    match value {
        Bson::Int32(number) => f64::from(*number),
        Bson::Int64(number) => *number as f64,
        Bson::Double(number) => *number,
        _ => f64::NAN,
    }
}

fn to_i64(value: &Bson) -> i64 {
    match value {
        Bson::Int32(number) => i64::from(*number),
        Bson::Int64(number) => *number,
        _ => 0,
    }
}

/// The largest number of significant digits a decimal128 holds.
const MAX_DIGITS: usize = 34;
/// The largest exponent of a decimal128 coefficient (`coefficient * 10^exponent`).
const MAX_EXPONENT: i64 = 6111;
/// The smallest exponent of a decimal128 coefficient.
const MIN_EXPONENT: i64 = -6176;

/// An exact decimal: sign, coefficient digits (most significant first, no leading zeros
/// except the single digit of zero) and exponent; or infinity, or NaN.
#[derive(Debug, Clone, PartialEq)]
enum Decimal {
    Finite {
        negative: bool,
        digits: Vec<u8>,
        exponent: i64,
    },
    Infinity {
        negative: bool,
    },
    NaN,
}

impl Decimal {
    fn from_bson(value: &Bson) -> Decimal {
        match value {
            Bson::Int32(number) => Decimal::from_text(&number.to_string()),
            Bson::Int64(number) => Decimal::from_text(&number.to_string()),
            Bson::Double(number) if number.is_nan() => Decimal::NaN,
            Bson::Double(number) if number.is_infinite() => Decimal::Infinity {
                negative: *number < 0.0,
            },
            Bson::Double(number) if *number == 0.0 => Decimal::from_text("0"),
            // MongoDB converts doubles to decimals with 15 significant digits.
            Bson::Double(number) => Decimal::from_text(&format!("{number:.14e}")),
            Bson::Decimal128(number) => Decimal::from_text(&number.to_string()),
            _ => Decimal::NaN,
        }
    }

    /// Reads the text forms produced by `Decimal128`'s `Display` and Rust's `{:e}`.
    fn from_text(text: &str) -> Decimal {
        let (negative, unsigned) = match text.strip_prefix('-') {
            Some(rest) => (true, rest),
            None => (false, text.strip_prefix('+').unwrap_or(text)),
        };
        if unsigned.eq_ignore_ascii_case("nan") {
            return Decimal::NaN;
        }
        if unsigned.eq_ignore_ascii_case("infinity") || unsigned.eq_ignore_ascii_case("inf") {
            return Decimal::Infinity { negative };
        }
        let (mantissa, exponent_text) = match unsigned.find(['e', 'E']) {
            Some(at) => (&unsigned[..at], &unsigned[at + 1..]),
            None => (unsigned, "0"),
        };
        let mut exponent: i64 = exponent_text.trim_start_matches('+').parse().unwrap_or(0);
        let mut digits = Vec::with_capacity(mantissa.len());
        let mut seen_point = false;
        for byte in mantissa.bytes() {
            match byte {
                b'.' => seen_point = true,
                b'0'..=b'9' => {
                    digits.push(byte - b'0');
                    if seen_point {
                        exponent -= 1;
                    }
                }
                _ => {}
            }
        }
        Decimal::Finite {
            negative,
            digits: trim_leading_zeros(digits),
            exponent,
        }
    }

    fn add(&self, other: &Decimal) -> Decimal {
        match (self, other) {
            (Decimal::NaN, _) | (_, Decimal::NaN) => Decimal::NaN,
            (Decimal::Infinity { negative: a }, Decimal::Infinity { negative: b }) if a != b => {
                Decimal::NaN
            }
            (Decimal::Infinity { negative }, _) | (_, Decimal::Infinity { negative }) => {
                Decimal::Infinity {
                    negative: *negative,
                }
            }
            (
                Decimal::Finite {
                    negative: a_negative,
                    digits: a_digits,
                    exponent: a_exponent,
                },
                Decimal::Finite {
                    negative: b_negative,
                    digits: b_digits,
                    exponent: b_exponent,
                },
            ) => {
                let exponent = (*a_exponent).min(*b_exponent);
                let a_aligned = shift_left(a_digits, (a_exponent - exponent) as usize);
                let b_aligned = shift_left(b_digits, (b_exponent - exponent) as usize);
                let (negative, digits) = if a_negative == b_negative {
                    (*a_negative, add_magnitudes(&a_aligned, &b_aligned))
                } else {
                    match compare_magnitudes(&a_aligned, &b_aligned) {
                        Ordering::Equal => (false, vec![0]),
                        Ordering::Greater => {
                            (*a_negative, subtract_magnitudes(&a_aligned, &b_aligned))
                        }
                        Ordering::Less => {
                            (*b_negative, subtract_magnitudes(&b_aligned, &a_aligned))
                        }
                    }
                };
                // IEEE 754: an exact zero sum is positive unless both operands are negative.
                let negative = negative && !(digits == [0] && a_negative != b_negative);
                Decimal::Finite {
                    negative,
                    digits,
                    exponent,
                }
                .rounded()
            }
        }
    }

    fn multiply(&self, other: &Decimal) -> Decimal {
        let is_zero =
            |value: &Decimal| matches!(value, Decimal::Finite { digits, .. } if digits == &[0]);
        match (self, other) {
            (Decimal::NaN, _) | (_, Decimal::NaN) => Decimal::NaN,
            (Decimal::Infinity { .. }, _) if is_zero(other) => Decimal::NaN,
            (_, Decimal::Infinity { .. }) if is_zero(self) => Decimal::NaN,
            (
                Decimal::Infinity { negative: a } | Decimal::Finite { negative: a, .. },
                Decimal::Infinity { negative: b } | Decimal::Finite { negative: b, .. },
            ) if matches!(self, Decimal::Infinity { .. })
                || matches!(other, Decimal::Infinity { .. }) =>
            {
                Decimal::Infinity { negative: a != b }
            }
            (
                Decimal::Finite {
                    negative: a_negative,
                    digits: a_digits,
                    exponent: a_exponent,
                },
                Decimal::Finite {
                    negative: b_negative,
                    digits: b_digits,
                    exponent: b_exponent,
                },
            ) => Decimal::Finite {
                negative: a_negative != b_negative,
                digits: multiply_magnitudes(a_digits, b_digits),
                exponent: a_exponent + b_exponent,
            }
            .rounded(),
            _ => Decimal::NaN,
        }
    }

    /// Rounds half-even to 34 digits and brings the exponent into decimal128's range
    /// (overflow becomes infinity, underflow loses digits or becomes zero).
    fn rounded(self) -> Decimal {
        let Decimal::Finite {
            negative,
            mut digits,
            mut exponent,
        } = self
        else {
            return self;
        };
        if digits.len() > MAX_DIGITS {
            let dropped = digits.len() - MAX_DIGITS;
            digits = round_off(&digits, dropped);
            exponent += dropped as i64;
            if digits.len() > MAX_DIGITS {
                digits.pop();
                exponent += 1;
            }
        }
        if exponent < MIN_EXPONENT {
            let dropped = (MIN_EXPONENT - exponent) as usize;
            digits = if dropped > digits.len() {
                vec![0]
            } else {
                round_off(&digits, dropped)
            };
            exponent = MIN_EXPONENT;
        }
        if exponent > MAX_EXPONENT {
            if digits == [0] {
                exponent = MAX_EXPONENT;
            } else {
                let padding = (exponent - MAX_EXPONENT) as usize;
                if digits.len() + padding > MAX_DIGITS {
                    return Decimal::Infinity { negative };
                }
                digits.extend(std::iter::repeat_n(0, padding));
                exponent = MAX_EXPONENT;
            }
        }
        Decimal::Finite {
            negative,
            digits,
            exponent,
        }
    }

    fn to_decimal128(&self) -> Decimal128 {
        let text = match self {
            Decimal::NaN => "NaN".to_string(),
            Decimal::Infinity { negative } => {
                if *negative {
                    "-Infinity".to_string()
                } else {
                    "Infinity".to_string()
                }
            }
            Decimal::Finite {
                negative,
                digits,
                exponent,
            } => {
                let digits: String = digits
                    .iter()
                    .map(|digit| char::from(b'0' + digit))
                    .collect();
                format!("{}{digits}E{exponent}", if *negative { "-" } else { "" })
            }
        };
        text.parse()
            .expect("a rounded decimal fits decimal128 exactly")
    }
}

fn trim_leading_zeros(mut digits: Vec<u8>) -> Vec<u8> {
    let leading = digits.iter().take_while(|digit| **digit == 0).count();
    if leading == digits.len() {
        return vec![0];
    }
    digits.drain(..leading);
    digits
}

fn shift_left(digits: &[u8], zeros: usize) -> Vec<u8> {
    let mut shifted = Vec::with_capacity(digits.len() + zeros);
    shifted.extend_from_slice(digits);
    if digits != [0] {
        shifted.extend(std::iter::repeat_n(0, zeros));
    }
    shifted
}

fn compare_magnitudes(a: &[u8], b: &[u8]) -> Ordering {
    a.len().cmp(&b.len()).then_with(|| a.cmp(b))
}

fn add_magnitudes(a: &[u8], b: &[u8]) -> Vec<u8> {
    let mut sum = Vec::with_capacity(a.len().max(b.len()) + 1);
    let mut carry = 0;
    let (mut a_digits, mut b_digits) = (a.iter().rev(), b.iter().rev());
    loop {
        let (x, y) = (a_digits.next(), b_digits.next());
        if x.is_none() && y.is_none() {
            break;
        }
        let total = x.copied().unwrap_or(0) + y.copied().unwrap_or(0) + carry;
        sum.push(total % 10);
        carry = total / 10;
    }
    if carry > 0 {
        sum.push(carry);
    }
    sum.reverse();
    trim_leading_zeros(sum)
}

/// `a - b` for `a >= b`.
fn subtract_magnitudes(a: &[u8], b: &[u8]) -> Vec<u8> {
    let mut difference = Vec::with_capacity(a.len());
    let mut borrow = 0;
    let mut b_digits = b.iter().rev();
    for x in a.iter().rev() {
        let y = b_digits.next().copied().unwrap_or(0) + borrow;
        if *x >= y {
            difference.push(x - y);
            borrow = 0;
        } else {
            difference.push(x + 10 - y);
            borrow = 1;
        }
    }
    difference.reverse();
    trim_leading_zeros(difference)
}

fn multiply_magnitudes(a: &[u8], b: &[u8]) -> Vec<u8> {
    let mut product = vec![0_u32; a.len() + b.len()];
    for (i, x) in a.iter().rev().enumerate() {
        for (j, y) in b.iter().rev().enumerate() {
            product[i + j] += u32::from(*x) * u32::from(*y);
        }
    }
    let mut carry = 0;
    for slot in &mut product {
        let total = *slot + carry;
        *slot = total % 10;
        carry = total / 10;
    }
    let digits: Vec<u8> = product.iter().rev().map(|digit| *digit as u8).collect();
    trim_leading_zeros(digits)
}

/// Drops the last `dropped` digits, rounding half to even.
fn round_off(digits: &[u8], dropped: usize) -> Vec<u8> {
    let (kept, removed) = digits.split_at(digits.len() - dropped);
    let kept = if kept.is_empty() {
        vec![0]
    } else {
        kept.to_vec()
    };
    let first_removed = removed.first().copied().unwrap_or(0);
    let rest_nonzero = removed.iter().skip(1).any(|digit| *digit != 0);
    let last_kept_odd = kept.last().is_some_and(|digit| digit % 2 == 1);
    let round_up = first_removed > 5 || (first_removed == 5 && (rest_nonzero || last_kept_odd));
    if round_up {
        add_magnitudes(&kept, &[1])
    } else {
        kept
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decimal(text: &str) -> Bson {
        Bson::Decimal128(text.parse().unwrap())
    }

    #[test]
    fn integer_promotion_and_overflow() {
        let add = |a, b| combine(Arithmetic::Add, &a, &b);
        let multiply = |a, b| combine(Arithmetic::Multiply, &a, &b);
        assert_eq!(add(Bson::Int32(1), Bson::Int32(2)), Ok(Bson::Int32(3)));
        assert_eq!(
            add(Bson::Int32(i32::MAX), Bson::Int32(1)),
            Ok(Bson::Int64(2_147_483_648))
        );
        assert_eq!(add(Bson::Int32(1), Bson::Int64(2)), Ok(Bson::Int64(3)));
        assert_eq!(
            multiply(Bson::Int32(i32::MAX), Bson::Int32(i32::MAX)),
            Ok(Bson::Int64(4_611_686_014_132_420_609))
        );
        assert_eq!(
            add(Bson::Int64(i64::MAX), Bson::Int32(1)),
            Err("overflows a 64-bit integer (9223372036854775807 + 1)".to_string())
        );
        assert!(multiply(Bson::Int64(i64::MIN), Bson::Int32(-1)).is_err());
        assert_eq!(
            add(Bson::Int32(1), Bson::Double(0.5)),
            Ok(Bson::Double(1.5))
        );
        assert_eq!(
            multiply(Bson::Int64(3), Bson::Double(0.5)),
            Ok(Bson::Double(1.5))
        );
    }

    #[test]
    fn decimal_arithmetic_is_exact_then_rounded() {
        let add = |a, b| combine(Arithmetic::Add, &a, &b).unwrap();
        let multiply = |a, b| combine(Arithmetic::Multiply, &a, &b).unwrap();
        assert_eq!(add(decimal("0.1"), decimal("0.2")), decimal("0.3"));
        assert_eq!(add(decimal("1.5"), Bson::Int32(2)), decimal("3.5"));
        assert_eq!(
            add(decimal("1"), Bson::Double(0.1)),
            decimal("1.100000000000000")
        );
        assert_eq!(add(decimal("-2.5"), decimal("2.5")), decimal("0.0"));
        assert_eq!(multiply(decimal("1.10"), decimal("3")), decimal("3.30"));
        assert_eq!(multiply(decimal("-2"), Bson::Int64(4)), decimal("-8"));
        assert_eq!(
            add(
                decimal("9999999999999999999999999999999999"),
                Bson::Int32(1)
            ),
            decimal("1.000000000000000000000000000000000E+34")
        );
        assert_eq!(
            add(
                decimal("1234567890123456789012345678901234"),
                decimal("0.5")
            ),
            decimal("1234567890123456789012345678901234")
        );
        assert_eq!(
            add(
                decimal("1234567890123456789012345678901235"),
                decimal("0.5")
            ),
            decimal("1234567890123456789012345678901236")
        );
        assert_eq!(
            multiply(decimal("9E+6144"), decimal("10")),
            decimal("Infinity")
        );
        assert_eq!(
            add(decimal("Infinity"), decimal("-Infinity")),
            decimal("NaN")
        );
        assert_eq!(
            multiply(decimal("Infinity"), Bson::Int32(0)),
            decimal("NaN")
        );
        assert_eq!(
            multiply(decimal("-Infinity"), Bson::Int32(2)),
            decimal("-Infinity")
        );
    }

    #[test]
    fn zero_has_the_operand_type() {
        assert_eq!(zero_like(&Bson::Int32(5)), Bson::Int32(0));
        assert_eq!(zero_like(&Bson::Int64(5)), Bson::Int64(0));
        assert_eq!(zero_like(&Bson::Double(5.0)), Bson::Double(0.0));
        assert_eq!(zero_like(&decimal("5")), decimal("0"));
    }
}
