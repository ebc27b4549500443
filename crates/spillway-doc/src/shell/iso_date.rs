//! ISO 8601 dates as mongosh's `ISODate(...)` reads and prints them, in UTC, to the
//! millisecond.
//!
//! `bson::DateTime::parse_rfc3339_str` needs a full RFC 3339 timestamp; mongosh also accepts
//! `ISODate("2024-01-31")` and timestamps without a zone (meaning UTC), so parsing is done
//! here, with the proleptic Gregorian calendar arithmetic of Howard Hinnant's
//! `days_from_civil`. This module must never consult the local time zone.

const MILLIS_PER_DAY: i64 = 86_400_000;

/// Milliseconds since the Unix epoch of the earliest date `ISODate` prints: 0000-01-01.
pub(crate) const FIRST_PRINTABLE_MILLIS: i64 = -62_167_219_200_000;
/// Milliseconds since the Unix epoch of the last millisecond `ISODate` prints: 9999-12-31.
pub(crate) const LAST_PRINTABLE_MILLIS: i64 = 253_402_300_799_999;

/// Days since 1970-01-01 of a proleptic Gregorian date.
fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let year = if month <= 2 { year - 1 } else { year };
    let era = year.div_euclid(400);
    let year_of_era = year - era * 400;
    let month_from_march = (month + 9) % 12;
    let day_of_year = (153 * month_from_march + 2) / 5 + day - 1;
    let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    era * 146_097 + day_of_era - 719_468
}

/// The proleptic Gregorian date `(year, month, day)` of a day count since 1970-01-01.
fn civil_from_days(days: i64) -> (i64, i64, i64) {
    let days = days + 719_468;
    let era = days.div_euclid(146_097);
    let day_of_era = days - era * 146_097;
    let year_of_era =
        (day_of_era - day_of_era / 1460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let month_from_march = (5 * day_of_year + 2) / 153;
    let day = day_of_year - (153 * month_from_march + 2) / 5 + 1;
    let month = if month_from_march < 10 {
        month_from_march + 3
    } else {
        month_from_march - 9
    };
    let year = year_of_era + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

fn days_in_month(year: i64, month: i64) -> i64 {
    match month {
        2 if year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// Formats milliseconds since the epoch as `YYYY-MM-DDTHH:MM:SS.mmmZ`, or `None` outside
/// years 0000 to 9999.
pub(crate) fn format_millis(millis: i64) -> Option<String> {
    if !(FIRST_PRINTABLE_MILLIS..=LAST_PRINTABLE_MILLIS).contains(&millis) {
        return None;
    }
    let (year, month, day) = civil_from_days(millis.div_euclid(MILLIS_PER_DAY));
    let millis_of_day = millis.rem_euclid(MILLIS_PER_DAY);
    let (hour, minute) = (millis_of_day / 3_600_000, millis_of_day / 60_000 % 60);
    let (second, milli) = (millis_of_day / 1000 % 60, millis_of_day % 1000);
    Some(format!(
        "{year:04}-{month:02}-{day:02}T{hour:02}:{minute:02}:{second:02}.{milli:03}Z"
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
    if !(1..=12).contains(&month) || !(1..=days_in_month(year, month)).contains(&day) {
        return None;
    }
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
    let days = days_from_civil(year, month, day);
    let seconds_of_day = hour * 3600 + minute * 60 + second - offset_minutes * 60;
    Some(days * MILLIS_PER_DAY + seconds_of_day * 1000 + milli)
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
