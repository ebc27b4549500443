//! Numbers compared by value across int32, int64, double and decimal128.
//!
//! MongoDB compares `NumberInt(1)`, `NumberLong(1)`, `1.0` and `NumberDecimal("1.00")` as
//! equal, and orders `2^53 + 1` (an int64) above `2^53` (a double) even though the two are the
//! same `f64`. Getting that exactly right needs an exact representation: [`ExactDecimal`], a
//! sign, a digit string and a decimal exponent, into which every finite double, integer and
//! decimal128 converts without loss. The common cases (two integers, two doubles, an integer
//! and a double) take fast paths that never build one.
//!
//! This module must never round: every comparison it answers is exact.

use std::cmp::Ordering;
use std::fmt::Write as _;

use bson::Decimal128;

/// A BSON number, borrowed from either a decoded or a raw value.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Number {
    /// int32 and int64 (an int32 widens losslessly).
    Int(i64),
    /// A double, NaN and infinities included.
    Double(f64),
    /// A decimal128, NaN and infinities included.
    Decimal(Decimal128),
}

impl Number {
    /// Compares two numbers by value. NaN (double or decimal) is equal to NaN and less than
    /// every other number, as in MongoDB; -0 equals 0.
    pub(crate) fn compare(self, other: Number) -> Ordering {
        match (self, other) {
            (Number::Int(a), Number::Int(b)) => a.cmp(&b),
            (Number::Double(a), Number::Double(b)) => compare_doubles(a, b),
            (Number::Int(a), Number::Double(b)) => compare_int_double(a, b),
            (Number::Double(a), Number::Int(b)) => compare_int_double(b, a).reverse(),
            (a, b) => a.to_exact().cmp(&b.to_exact()),
        }
    }

    /// The exact value of this number.
    pub(crate) fn to_exact(self) -> ExactDecimal {
        match self {
            Number::Int(value) => ExactDecimal::from_i64(value),
            Number::Double(value) => ExactDecimal::from_f64(value),
            Number::Decimal(value) => ExactDecimal::from_decimal128(value),
        }
    }

    /// The largest double that is less than or equal to this number, and whether that double
    /// is exactly the number. NaN maps to NaN (and counts as exact).
    pub(crate) fn floor_double(self) -> (f64, bool) {
        match self {
            Number::Double(value) => (value, true),
            Number::Int(value) => {
                let rounded = value as f64; // round-to-nearest, may be above `value`
                match compare_int_double(value, rounded) {
                    Ordering::Equal => (rounded, true),
                    Ordering::Less => (rounded.next_down(), false),
                    Ordering::Greater => (rounded, false),
                }
            }
            Number::Decimal(value) => {
                let exact = ExactDecimal::from_decimal128(value);
                let nearest = exact.to_nearest_f64();
                match exact.cmp(&ExactDecimal::from_f64(nearest)) {
                    Ordering::Equal => (nearest, true),
                    Ordering::Less => (nearest.next_down(), false),
                    Ordering::Greater => (nearest, false),
                }
            }
        }
    }
}

/// Total order on doubles with NaN lowest and -0 == 0.
pub(crate) fn compare_doubles(a: f64, b: f64) -> Ordering {
    match (a.is_nan(), b.is_nan()) {
        (true, true) => Ordering::Equal,
        (true, false) => Ordering::Less,
        (false, true) => Ordering::Greater,
        (false, false) => a.partial_cmp(&b).unwrap_or(Ordering::Equal),
    }
}

/// Exact comparison of an integer with a double.
fn compare_int_double(int: i64, double: f64) -> Ordering {
    // Every i64 lies in [-2^63, 2^63); doubles outside that range decide by themselves.
    const TWO_POW_63: f64 = 9_223_372_036_854_775_808.0;
    if double.is_nan() {
        return Ordering::Greater;
    }
    if double >= TWO_POW_63 {
        return Ordering::Less;
    }
    if double < -TWO_POW_63 {
        return Ordering::Greater;
    }
    // Now trunc(double) fits an i64 exactly; compare integer parts, then the fraction.
    let truncated = double.trunc();
    let whole = truncated as i64;
    match int.cmp(&whole) {
        Ordering::Equal => 0.0_f64
            .partial_cmp(&(double - truncated))
            .unwrap_or(Ordering::Equal),
        other => other,
    }
}

/// An exact decimal value: `sign * 0.d1 d2 d3 ... * 10^exponent`, normalised so that the
/// digits have no leading or trailing zeros (zero has no digits), plus the special values.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ExactDecimal {
    /// Not a number: below every other value.
    NaN,
    /// Negative infinity.
    NegativeInfinity,
    /// A finite value.
    Finite {
        /// True for values below zero (never set for zero).
        negative: bool,
        /// Decimal digits 0..=9, first and last non-zero; empty for zero.
        digits: Vec<u8>,
        /// The power of ten of the digit string read as `0.d1d2...`.
        exponent: i32,
    },
    /// Positive infinity.
    PositiveInfinity,
}

impl ExactDecimal {
    fn finite(negative: bool, mut digits: Vec<u8>, mut exponent: i32) -> Self {
        let leading = digits.iter().take_while(|&&d| d == 0).count();
        digits.drain(..leading);
        exponent -= leading as i32;
        while digits.last() == Some(&0) {
            digits.pop();
        }
        if digits.is_empty() {
            return ExactDecimal::Finite {
                negative: false,
                digits,
                exponent: 0,
            };
        }
        ExactDecimal::Finite {
            negative,
            digits,
            exponent,
        }
    }

    fn from_unsigned_digits(negative: bool, magnitude: u128, scale: i32) -> Self {
        // magnitude * 10^scale
        let digits: Vec<u8> = magnitude.to_string().bytes().map(|b| b - b'0').collect();
        let exponent = digits.len() as i32 + scale;
        Self::finite(negative, digits, exponent)
    }

    pub(crate) fn from_i64(value: i64) -> Self {
        Self::from_unsigned_digits(value < 0, u128::from(value.unsigned_abs()), 0)
    }

    pub(crate) fn from_f64(value: f64) -> Self {
        if value.is_nan() {
            return ExactDecimal::NaN;
        }
        if value.is_infinite() {
            return if value > 0.0 {
                ExactDecimal::PositiveInfinity
            } else {
                ExactDecimal::NegativeInfinity
            };
        }
        let bits = value.to_bits();
        let negative = bits >> 63 == 1;
        let biased_exponent = ((bits >> 52) & 0x7ff) as i32;
        let fraction = bits & ((1 << 52) - 1);
        let (mantissa, binary_exponent) = if biased_exponent == 0 {
            (fraction, -1074)
        } else {
            (fraction | (1 << 52), biased_exponent - 1075)
        };
        if mantissa == 0 {
            return Self::finite(false, Vec::new(), 0);
        }
        // value = mantissa * 2^binary_exponent
        let mut big = BigUint::from_u64(mantissa);
        let scale = if binary_exponent >= 0 {
            big.multiply_by_power(2, binary_exponent as u32);
            0
        } else {
            // mantissa * 2^-k = mantissa * 5^k * 10^-k
            let k = binary_exponent.unsigned_abs();
            big.multiply_by_power(5, k);
            -(k as i32)
        };
        let digits = big.to_decimal_digits();
        let exponent = digits.len() as i32 + scale;
        Self::finite(negative, digits, exponent)
    }

    pub(crate) fn from_decimal128(value: Decimal128) -> Self {
        const MAX_COEFFICIENT: u128 = 9_999_999_999_999_999_999_999_999_999_999_999;
        let bits = u128::from_le_bytes(value.bytes());
        let negative = bits >> 127 == 1;
        let combination = (bits >> 122) & 0x1f;
        if combination == 0x1f {
            return ExactDecimal::NaN;
        }
        if combination == 0x1e {
            return if negative {
                ExactDecimal::NegativeInfinity
            } else {
                ExactDecimal::PositiveInfinity
            };
        }
        let (biased_exponent, coefficient) = if (bits >> 125) & 0b11 == 0b11 {
            // The large-coefficient form always exceeds 34 digits: non-canonical, so zero.
            (((bits >> 111) & 0x3fff) as i32, 0)
        } else {
            (((bits >> 113) & 0x3fff) as i32, bits & ((1 << 113) - 1))
        };
        let coefficient = if coefficient > MAX_COEFFICIENT {
            0
        } else {
            coefficient
        };
        Self::from_unsigned_digits(negative, coefficient, biased_exponent - 6176)
    }

    /// The double nearest to this value (Rust's float parsing rounds correctly).
    fn to_nearest_f64(&self) -> f64 {
        match self {
            ExactDecimal::NaN => f64::NAN,
            ExactDecimal::NegativeInfinity => f64::NEG_INFINITY,
            ExactDecimal::PositiveInfinity => f64::INFINITY,
            ExactDecimal::Finite { digits, .. } if digits.is_empty() => 0.0,
            ExactDecimal::Finite {
                negative,
                digits,
                exponent,
            } => {
                let mut text = String::with_capacity(digits.len() + 16);
                if *negative {
                    text.push('-');
                }
                text.push_str("0.");
                text.extend(digits.iter().map(|d| char::from(b'0' + d)));
                text.push('e');
                text.push_str(&exponent.to_string());
                text.parse().unwrap_or(f64::NAN)
            }
        }
    }

    fn rank(&self) -> u8 {
        match self {
            ExactDecimal::NaN => 0,
            ExactDecimal::NegativeInfinity => 1,
            ExactDecimal::Finite { .. } => 2,
            ExactDecimal::PositiveInfinity => 3,
        }
    }

    /// Appends a memcomparable encoding: byte order equals value order, and no encoding is a
    /// prefix of another. Used by the index key encoding for numbers that no double equals.
    pub(crate) fn encode_memcomparable(&self, out: &mut Vec<u8>) {
        match self {
            ExactDecimal::NaN => out.push(0),
            ExactDecimal::NegativeInfinity => out.push(1),
            ExactDecimal::PositiveInfinity => out.push(5),
            ExactDecimal::Finite { digits, .. } if digits.is_empty() => out.push(3),
            ExactDecimal::Finite {
                negative,
                digits,
                exponent,
            } => {
                // Digits are written as 1..=10 with a 0 terminator, so a shorter digit
                // string (0.12) sorts before a longer one it prefixes (0.123). Negative
                // values invert every byte after the tag: larger magnitudes sort lower.
                let flip = |byte: u8| if *negative { !byte } else { byte };
                out.push(if *negative { 2 } else { 4 });
                let exponent_key = (*exponent as u32) ^ 0x8000_0000;
                out.extend(exponent_key.to_be_bytes().map(flip));
                out.extend(digits.iter().map(|&d| flip(d + 1)));
                out.push(flip(0));
            }
        }
    }
}

impl Ord for ExactDecimal {
    fn cmp(&self, other: &Self) -> Ordering {
        let (
            ExactDecimal::Finite {
                negative: a_negative,
                digits: a_digits,
                exponent: a_exponent,
            },
            ExactDecimal::Finite {
                negative: b_negative,
                digits: b_digits,
                exponent: b_exponent,
            },
        ) = (self, other)
        else {
            return self.rank().cmp(&other.rank());
        };
        let sign = |negative: bool, digits: &[u8]| match (negative, digits.is_empty()) {
            (_, true) => 0,
            (true, false) => -1,
            (false, false) => 1,
        };
        let (a_sign, b_sign) = (sign(*a_negative, a_digits), sign(*b_negative, b_digits));
        if a_sign != b_sign || a_sign == 0 {
            return a_sign.cmp(&b_sign);
        }
        let magnitude = a_exponent
            .cmp(b_exponent)
            .then_with(|| a_digits.cmp(b_digits));
        if a_sign < 0 {
            magnitude.reverse()
        } else {
            magnitude
        }
    }
}

impl PartialOrd for ExactDecimal {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// Just enough unsigned big-integer arithmetic to expand a double exactly: multiply by small
/// powers and print decimal digits. Limbs are base 10^9, least significant first.
struct BigUint {
    limbs: Vec<u32>,
}

impl BigUint {
    const BASE: u64 = 1_000_000_000;

    fn from_u64(mut value: u64) -> Self {
        let mut limbs = Vec::new();
        while value > 0 {
            limbs.push((value % Self::BASE) as u32);
            value /= Self::BASE;
        }
        BigUint { limbs }
    }

    fn multiply_small(&mut self, factor: u32) {
        let mut carry = 0_u64;
        for limb in &mut self.limbs {
            let product = u64::from(*limb) * u64::from(factor) + carry;
            *limb = (product % Self::BASE) as u32;
            carry = product / Self::BASE;
        }
        while carry > 0 {
            self.limbs.push((carry % Self::BASE) as u32);
            carry /= Self::BASE;
        }
    }

    fn multiply_by_power(&mut self, base: u32, mut exponent: u32) {
        // Multiply in chunks that stay below 2^32 per step.
        let (chunk, chunk_exponent) = if base == 2 {
            (1 << 29, 29)
        } else {
            (5_u32.pow(13), 13)
        };
        while exponent >= chunk_exponent {
            self.multiply_small(chunk);
            exponent -= chunk_exponent;
        }
        if exponent > 0 {
            self.multiply_small(base.pow(exponent));
        }
    }

    fn to_decimal_digits(&self) -> Vec<u8> {
        let mut text = String::new();
        for (index, limb) in self.limbs.iter().rev().enumerate() {
            if index == 0 {
                text.push_str(&limb.to_string());
            } else {
                let _ = write!(text, "{limb:09}");
            }
        }
        text.bytes().map(|b| b - b'0').collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decimal(text: &str) -> Number {
        Number::Decimal(text.parse().expect("valid decimal literal"))
    }

    #[test]
    fn doubles_expand_exactly() {
        let exact = ExactDecimal::from_f64(0.1);
        let ExactDecimal::Finite {
            digits,
            exponent,
            negative,
        } = exact
        else {
            panic!()
        };
        let text: String = digits.iter().map(|d| char::from(b'0' + d)).collect();
        assert_eq!(
            text,
            "1000000000000000055511151231257827021181583404541015625"
        );
        assert_eq!((exponent, negative), (0, false));
        assert_eq!(ExactDecimal::from_f64(-0.0), ExactDecimal::from_i64(0));
        assert_eq!(
            ExactDecimal::from_f64(1e21),
            ExactDecimal::from_decimal128_text("1E+21")
        );
    }

    impl ExactDecimal {
        fn from_decimal128_text(text: &str) -> Self {
            ExactDecimal::from_decimal128(text.parse().expect("valid decimal literal"))
        }
    }

    #[test]
    fn cross_type_comparisons_are_exact() {
        use Ordering::{Equal, Greater, Less};
        let two_pow_53 = 9_007_199_254_740_992_i64;
        let cases = [
            (Number::Int(1), Number::Double(1.0), Equal),
            (
                Number::Int(two_pow_53 + 1),
                Number::Double(two_pow_53 as f64),
                Greater,
            ),
            (
                Number::Int(i64::MAX),
                Number::Double(9_223_372_036_854_775_808.0),
                Less,
            ),
            (Number::Int(-3), Number::Double(-2.5), Less),
            (
                Number::Double(f64::NAN),
                Number::Double(f64::NEG_INFINITY),
                Less,
            ),
            (Number::Double(f64::NAN), Number::Int(i64::MIN), Less),
            (decimal("1.00"), Number::Int(1), Equal),
            (decimal("0.1"), Number::Double(0.1), Less),
            (decimal("-0"), Number::Double(0.0), Equal),
            (decimal("NaN"), Number::Double(f64::NAN), Equal),
            (decimal("Infinity"), Number::Double(f64::MAX), Greater),
            (decimal("-Infinity"), Number::Int(i64::MIN), Less),
            (decimal("1E-6176"), Number::Int(0), Greater),
            (
                decimal("9.999999999999999999999999999999999E+6144"),
                Number::Double(f64::MAX),
                Greater,
            ),
        ];
        for (a, b, expected) in cases {
            assert_eq!(a.compare(b), expected, "{a:?} vs {b:?}");
            assert_eq!(b.compare(a), expected.reverse(), "{b:?} vs {a:?}");
        }
    }

    #[test]
    fn floor_double_is_the_largest_double_not_above() {
        let two_pow_53 = 9_007_199_254_740_992_i64;
        assert_eq!(
            Number::Int(two_pow_53 + 1).floor_double(),
            (two_pow_53 as f64, false)
        );
        assert_eq!(Number::Int(5).floor_double(), (5.0, true));
        let (floor, exact) = Number::Int(i64::MAX).floor_double();
        assert!(!exact && floor < 9_223_372_036_854_775_808.0);
        assert_eq!(decimal("0.5").floor_double(), (0.5, true));
        let (floor, exact) = decimal("0.1").floor_double();
        assert!(!exact && floor < 0.1 && floor.next_up().to_bits() == 0.1_f64.to_bits());
        let (floor, exact) = decimal("-0.1").floor_double();
        assert!(!exact && floor.to_bits() == (-0.1_f64).to_bits());
    }
}
