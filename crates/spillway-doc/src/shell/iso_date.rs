//! ISO 8601 dates as mongosh's `ISODate(...)` reads and prints them, in UTC, to the
//! millisecond.
//!
//! `bson::DateTime::parse_rfc3339_str` needs a full RFC 3339 timestamp; mongosh also accepts
//! `ISODate("2024-01-31")` and timestamps without a zone (meaning UTC), so parsing is done
//! here, the calendar arithmetic (proleptic Gregorian) being jiff's. This module must never
//! consult the local time zone: every conversion is at a fixed offset.

use jiff::SignedDuration;
use jiff::civil::{Date, DateTime, Time};

/// 1970-01-01T00:00:00, read in UTC. (Not `jiff::Timestamp`: its range stops a day short of
/// 9999-12-31 to leave room for any offset, and ISODate prints that last day.)
const EPOCH: DateTime = DateTime::constant(1970, 1, 1, 0, 0, 0, 0);

/// Milliseconds since the Unix epoch of the earliest date `ISODate` prints: 0000-01-01.
pub(crate) const FIRST_PRINTABLE_MILLIS: i64 = -62_167_219_200_000;
/// Milliseconds since the Unix epoch of the last millisecond `ISODate` prints: 9999-12-31.
pub(crate) const LAST_PRINTABLE_MILLIS: i64 = 253_402_300_799_999;

/// Formats milliseconds since the epoch as `YYYY-MM-DDTHH:MM:SS.mmmZ`, or `None` outside
/// years 0000 to 9999.
pub(crate) fn format_millis(millis: i64) -> Option<String> {
    if !(FIRST_PRINTABLE_MILLIS..=LAST_PRINTABLE_MILLIS).contains(&millis) {
        return None;
    }
    let at = EPOCH
        .checked_add(SignedDuration::from_millis(millis))
        .ok()?;
    Some(format!(
        "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}Z",
        at.year(),
        at.month(),
        at.day(),
        at.hour(),
        at.minute(),
        at.second(),
        at.millisecond()
    ))
}

/// A small cursor over the ASCII text of a date.
struct DateText<'a> {
    bytes: &'a [u8],
    index: usize,
}

impl DateText<'_> {
    fn number(&mut self, n_digits: usize) -> Option<i64> {
        let digits = self.bytes.get(self.index..self.index + n_digits)?;
        if !digits.iter().all(u8::is_ascii_digit) {
            return None;
        }
        self.index += n_digits;
        Some(
            digits
                .iter()
                .fold(0, |value, digit| value * 10 + i64::from(digit - b'0')),
        )
    }

    fn eat(&mut self, expected: &[u8]) -> Option<u8> {
        let next = *self.bytes.get(self.index)?;
        if expected.contains(&next) {
            self.index += 1;
            Some(next)
        } else {
            None
        }
    }

    fn at_end(&self) -> bool {
        self.index == self.bytes.len()
    }
}

/// Parses `YYYY-MM-DD`, optionally followed by `T` (or a space) and `HH:MM`, `:SS`,
/// `.fraction` (cut to milliseconds) and a zone (`Z`, `+HH:MM`, `+HHMM`, `+HH`; none means
/// UTC). Returns milliseconds since the epoch, or `None` when the text is not such a date.
pub(crate) fn parse_millis(text: &str) -> Option<i64> {
    let mut date = DateText {
        bytes: text.as_bytes(),
        index: 0,
    };
    let year = date.number(4)?;
    date.eat(b"-")?;
    let month = date.number(2)?;
    date.eat(b"-")?;
    let day = date.number(2)?;
    // jiff refuses a month or day that does not exist (2023-02-29, 2024-13-01).
    let calendar_date = Date::new(year as i16, month as i8, day as i8).ok()?;
    let (mut hour, mut minute, mut second, mut milli) = (0, 0, 0, 0);
    let mut offset_minutes = 0;
    if date.eat(b"T ").is_some() {
        hour = date.number(2)?;
        date.eat(b":")?;
        minute = date.number(2)?;
        if date.eat(b":").is_some() {
            second = date.number(2)?;
            if date.eat(b".").is_some() {
                let mut scale = 100;
                let fraction_start = date.index;
                while let Some(digit) = date.number(1) {
                    milli += digit * scale;
                    scale /= 10;
                }
                if date.index == fraction_start {
                    return None;
                }
            }
        }
        if hour > 23 || minute > 59 || second > 59 {
            return None;
        }
        if let Some(sign) = date.eat(b"+-") {
            let zone_hours = date.number(2)?;
            date.eat(b":");
            let zone_minutes = if date.at_end() { 0 } else { date.number(2)? };
            if zone_hours > 23 || zone_minutes > 59 {
                return None;
            }
            offset_minutes = zone_hours * 60 + zone_minutes;
            if sign == b'-' {
                offset_minutes = -offset_minutes;
            }
        } else {
            date.eat(b"Zz");
        }
    }
    if !date.at_end() {
        return None;
    }
    let time = Time::new(hour as i8, minute as i8, second as i8, 0).ok()?;
    let utc_millis = DateTime::from_parts(calendar_date, time)
        .duration_since(EPOCH)
        .as_millis();
    Some(utc_millis as i64 - offset_minutes * 60_000 + milli)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_and_parses_the_printable_range() {
        for millis in [
            FIRST_PRINTABLE_MILLIS,
            -1,
            0,
            1,
            951_782_400_000,
            1_704_067_200_123,
            LAST_PRINTABLE_MILLIS,
        ] {
            let text = format_millis(millis).unwrap();
            assert_eq!(parse_millis(&text), Some(millis), "{text}");
        }
        assert_eq!(format_millis(FIRST_PRINTABLE_MILLIS - 1), None);
        assert_eq!(format_millis(LAST_PRINTABLE_MILLIS + 1), None);
        assert_eq!(format_millis(0).unwrap(), "1970-01-01T00:00:00.000Z");
        assert_eq!(format_millis(-1).unwrap(), "1969-12-31T23:59:59.999Z");
    }

    #[test]
    fn parses_the_forms_mongosh_accepts() {
        let cases = [
            ("2024-01-01", Some(1_704_067_200_000)),
            ("2024-01-01T00:00Z", Some(1_704_067_200_000)),
            ("2024-01-01 00:00:00", Some(1_704_067_200_000)),
            ("2024-01-01T01:30:00+01:30", Some(1_704_067_200_000)),
            ("2023-12-31T19:00:00-0500", Some(1_704_067_200_000)),
            ("2024-01-01T00:00:00.1239Z", Some(1_704_067_200_123)),
            ("2024-02-29", Some(1_709_164_800_000)),
            ("2023-02-29", None),
            ("2024-13-01", None),
            ("2024-01-01T24:00:00Z", None),
            ("2024-01-01T00:00:00.Z", None),
            ("2024-1-01", None),
            ("2024-01-01Z", None),
            ("yesterday", None),
        ];
        for (text, expected) in cases {
            assert_eq!(parse_millis(text), expected, "{text}");
        }
    }
}
