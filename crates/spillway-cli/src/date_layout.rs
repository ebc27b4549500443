//! Date layouts of mongoimport's typed columns: `date(...)`/`date_go(...)` take a Go
//! reference-time layout (`2006-01-02T15:04:05Z07:00`), `date_ms(...)` a Microsoft one
//! (`yyyy-MM-dd HH:mm:ss`), `date_oracle(...)` an Oracle one (`YYYY-MM-DD HH24:MI:SS`).
//!
//! The three dialects are read into one list of [`Token`]s and one parser applies it, so a
//! value means the same in each. A value without a zone is UTC, as in mongoimport. Zone
//! abbreviations other than `UTC`, `GMT` and `Z` are refused rather than guessed (Go itself
//! makes an unknown abbreviation mean offset 0, silently). This module must never consult
//! the local time zone.

use spillway::bson::DateTime;

/// The dialect a layout is written in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Dialect {
    /// Go's reference time, Mon Jan 2 15:04:05 MST 2006 (`date`, `date_go`).
    Go,
    /// .NET custom date and time format strings (`date_ms`).
    Microsoft,
    /// Oracle's datetime format models (`date_oracle`).
    Oracle,
}

/// One element of a layout.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Token {
    /// Text that must appear as is.
    Literal(String),
    /// Four-digit year.
    Year4,
    /// Two-digit year: 69..99 are 19xx, 00..68 are 20xx (Go's rule).
    Year2,
    /// `January` / `Jan`, case-insensitive.
    MonthName {
        long: bool,
    },
    /// Month number: exactly two digits when `fixed`, else one or two.
    Month {
        fixed: bool,
    },
    /// Day of month; `space_padded` is Go's `_2`.
    Day {
        fixed: bool,
        space_padded: bool,
    },
    /// `Monday` / `Mon`: read and checked to be a weekday name, then ignored.
    Weekday {
        long: bool,
    },
    /// Hour 0..23.
    Hour24 {
        fixed: bool,
    },
    /// Hour 1..12, with an AM/PM marker somewhere in the layout.
    Hour12 {
        fixed: bool,
    },
    /// Minute.
    Minute {
        fixed: bool,
    },
    /// Second; a fraction written right after it is read even if the layout has none (Go).
    Second {
        fixed: bool,
    },
    /// Fraction of a second after a `.` or `,` literal: exactly `digits` digits, or any
    /// number when `None`.
    Fraction {
        digits: Option<usize>,
    },
    /// `AM`/`PM`.
    Meridiem,
    /// A numeric zone: `+07:00`; `z_for_utc` also accepts `Z`; `colon` and `minutes` say
    /// which parts the layout writes.
    Offset {
        z_for_utc: bool,
        colon: bool,
        minutes: bool,
    },
    /// Oracle's `TZH` (hours with a sign) and `TZM` (minutes).
    OffsetHours,
    OffsetMinutes,
    /// `MST`: a zone abbreviation.
    ZoneName,
}

/// A layout, read once per column and applied to every value of it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Layout {
    tokens: Vec<Token>,
}

impl Layout {
    /// Reads `layout` in `dialect`.
    pub(crate) fn parse(dialect: Dialect, layout: &str) -> Result<Layout, String> {
        if layout.is_empty() {
            return Err("the date layout is empty".to_owned());
        }
        let tokens = match dialect {
            Dialect::Go => go_tokens(layout),
            Dialect::Microsoft => microsoft_tokens(layout),
            Dialect::Oracle => oracle_tokens(layout),
        };
        let has = |wanted: fn(&Token) -> bool| tokens.iter().any(wanted);
        if !has(|token| matches!(token, Token::Year4 | Token::Year2)) {
            return Err(format!("the date layout {layout:?} has no year"));
        }
        if has(|token| matches!(token, Token::Hour12 { .. }))
            && !has(|token| *token == Token::Meridiem)
        {
            return Err(format!(
                "the date layout {layout:?} has a 12-hour clock hour but no AM/PM marker"
            ));
        }
        Ok(Layout { tokens })
    }

    /// The date `text` names under this layout.
    pub(crate) fn parse_value(&self, text: &str) -> Result<DateTime, String> {
        let mut fields = Fields::default();
        let mut rest = text;
        for (index, token) in self.tokens.iter().enumerate() {
            rest = read_token(token, rest, &mut fields)
                .map_err(|problem| format!("{text:?} does not match the date layout: {problem}"))?;
            // Go reads a fraction after the seconds even when the layout writes none.
            if matches!(token, Token::Second { .. })
                && !matches!(self.tokens.get(index + 1), Some(Token::Literal(next)) if next.starts_with(['.', ',']))
                && rest.starts_with(['.', ','])
                && rest[1..].starts_with(|c: char| c.is_ascii_digit())
            {
                rest = read_fraction(&rest[1..], None, &mut fields)
                    .map_err(|problem| format!("{text:?}: {problem}"))?;
            }
        }
        if !rest.is_empty() {
            return Err(format!(
                "{text:?} does not match the date layout: {rest:?} is left over"
            ));
        }
        fields
            .to_date()
            .map_err(|problem| format!("{text:?}: {problem}"))
    }
}

#[derive(Debug, Default)]
struct Fields {
    year: Option<i32>,
    month: Option<u8>,
    day: Option<u8>,
    hour: u8,
    hour12: Option<u8>,
    pm: Option<bool>,
    minute: u8,
    second: u8,
    millisecond: u16,
    offset_minutes: i64,
}

impl Fields {
    fn to_date(&self) -> Result<DateTime, String> {
        let year = self.year.ok_or("no year")?;
        let hour = match (self.hour12, self.pm) {
            (Some(hour), Some(pm)) => hour % 12 + if pm { 12 } else { 0 },
            _ => self.hour,
        };
        let month = self.month.unwrap_or(1);
        let day = self.day.unwrap_or(1);
        let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0);
        let days_in_month = match month {
            2 if leap => 29,
            2 => 28,
            4 | 6 | 9 | 11 => 30,
            _ => 31,
        };
        if day > days_in_month {
            return Err(format!(
                "{} {year} has no day {day}",
                MONTHS[usize::from(month) - 1]
            ));
        }
        let local = DateTime::builder()
            .year(year)
            .month(month)
            .day(day)
            .hour(hour)
            .minute(self.minute)
            .second(self.second)
            .millisecond(self.millisecond)
            .build()
            .map_err(|error| format!("not a valid date ({error})"))?;
        let millis = local
            .timestamp_millis()
            .checked_sub(self.offset_minutes * 60_000)
            .ok_or("the date is out of range")?;
        Ok(DateTime::from_millis(millis))
    }
}

const MONTHS: [&str; 12] = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
];
const WEEKDAYS: [&str; 7] = [
    "Monday",
    "Tuesday",
    "Wednesday",
    "Thursday",
    "Friday",
    "Saturday",
    "Sunday",
];

fn push_literal(tokens: &mut Vec<Token>, c: char) {
    if let Some(Token::Literal(text)) = tokens.last_mut() {
        text.push(c);
    } else {
        tokens.push(Token::Literal(c.to_string()));
    }
}

/// Go's `nextStdChunk`, the elements Go's `time.Parse` knows.
fn go_tokens(layout: &str) -> Vec<Token> {
    // (prefix, token), longest first where one is a prefix of another.
    let table: &[(&str, Token)] = &[
        ("January", Token::MonthName { long: true }),
        ("Jan", Token::MonthName { long: false }),
        ("Monday", Token::Weekday { long: true }),
        ("Mon", Token::Weekday { long: false }),
        ("MST", Token::ZoneName),
        ("2006", Token::Year4),
        ("01", Token::Month { fixed: true }),
        (
            "02",
            Token::Day {
                fixed: true,
                space_padded: false,
            },
        ),
        ("03", Token::Hour12 { fixed: true }),
        ("04", Token::Minute { fixed: true }),
        ("05", Token::Second { fixed: true }),
        ("06", Token::Year2),
        ("15", Token::Hour24 { fixed: false }),
        ("1", Token::Month { fixed: false }),
        (
            "_2",
            Token::Day {
                fixed: false,
                space_padded: true,
            },
        ),
        (
            "2",
            Token::Day {
                fixed: false,
                space_padded: false,
            },
        ),
        ("3", Token::Hour12 { fixed: false }),
        ("4", Token::Minute { fixed: false }),
        ("5", Token::Second { fixed: false }),
        ("PM", Token::Meridiem),
        ("pm", Token::Meridiem),
        (
            "Z07:00",
            Token::Offset {
                z_for_utc: true,
                colon: true,
                minutes: true,
            },
        ),
        (
            "Z0700",
            Token::Offset {
                z_for_utc: true,
                colon: false,
                minutes: true,
            },
        ),
        (
            "Z07",
            Token::Offset {
                z_for_utc: true,
                colon: false,
                minutes: false,
            },
        ),
        (
            "-07:00",
            Token::Offset {
                z_for_utc: false,
                colon: true,
                minutes: true,
            },
        ),
        (
            "-0700",
            Token::Offset {
                z_for_utc: false,
                colon: false,
                minutes: true,
            },
        ),
        (
            "-07",
            Token::Offset {
                z_for_utc: false,
                colon: false,
                minutes: false,
            },
        ),
    ];
    let mut tokens = Vec::new();
    let mut rest = layout;
    'outer: while let Some(c) = rest.chars().next() {
        // A fraction: `.000`, `.999`, `,000` followed by a non-digit.
        if matches!(c, '.' | ',') {
            let after = &rest[1..];
            if let Some(digit @ ('0' | '9')) = after.chars().next() {
                let run = after.chars().take_while(|&d| d == digit).count();
                if !after[run..].starts_with(|d: char| d.is_ascii_digit()) {
                    push_literal(&mut tokens, c);
                    tokens.push(Token::Fraction {
                        digits: (digit == '0').then_some(run),
                    });
                    rest = &after[run..];
                    continue;
                }
            }
        }
        for (prefix, token) in table {
            if rest.starts_with(prefix) {
                tokens.push(token.clone());
                rest = &rest[prefix.len()..];
                continue 'outer;
            }
        }
        push_literal(&mut tokens, c);
        rest = &rest[c.len_utf8()..];
    }
    tokens
}

/// The .NET custom format specifiers mongoimport's `date_ms` reads.
fn microsoft_tokens(layout: &str) -> Vec<Token> {
    let table: &[(&str, Token)] = &[
        ("yyyy", Token::Year4),
        ("yy", Token::Year2),
        ("MMMM", Token::MonthName { long: true }),
        ("MMM", Token::MonthName { long: false }),
        ("MM", Token::Month { fixed: true }),
        ("M", Token::Month { fixed: false }),
        ("dddd", Token::Weekday { long: true }),
        ("ddd", Token::Weekday { long: false }),
        (
            "dd",
            Token::Day {
                fixed: true,
                space_padded: false,
            },
        ),
        (
            "d",
            Token::Day {
                fixed: false,
                space_padded: false,
            },
        ),
        ("HH", Token::Hour24 { fixed: true }),
        ("H", Token::Hour24 { fixed: false }),
        ("hh", Token::Hour12 { fixed: true }),
        ("h", Token::Hour12 { fixed: false }),
        ("mm", Token::Minute { fixed: true }),
        ("m", Token::Minute { fixed: false }),
        ("ss", Token::Second { fixed: true }),
        ("s", Token::Second { fixed: false }),
        ("tt", Token::Meridiem),
        (
            "zzz",
            Token::Offset {
                z_for_utc: false,
                colon: true,
                minutes: true,
            },
        ),
        (
            "zz",
            Token::Offset {
                z_for_utc: false,
                colon: false,
                minutes: false,
            },
        ),
        (
            "K",
            Token::Offset {
                z_for_utc: true,
                colon: true,
                minutes: true,
            },
        ),
    ];
    let mut tokens = Vec::new();
    let mut rest = layout;
    'outer: while let Some(c) = rest.chars().next() {
        if c == 'f' || c == 'F' {
            let run = rest.chars().take_while(|&d| d == c).count();
            tokens.push(Token::Fraction {
                digits: (c == 'f').then_some(run),
            });
            rest = &rest[run..];
            continue;
        }
        if c == '\\'
            && let Some(escaped) = rest[1..].chars().next()
        {
            push_literal(&mut tokens, escaped);
            rest = &rest[1 + escaped.len_utf8()..];
            continue;
        }
        for (prefix, token) in table {
            if rest.starts_with(prefix) {
                tokens.push(token.clone());
                rest = &rest[prefix.len()..];
                continue 'outer;
            }
        }
        push_literal(&mut tokens, c);
        rest = &rest[c.len_utf8()..];
    }
    tokens
}

/// Oracle's datetime format elements (case-insensitive) mongoimport's `date_oracle` reads.
fn oracle_tokens(layout: &str) -> Vec<Token> {
    let table: &[(&str, Token)] = &[
        ("YYYY", Token::Year4),
        ("YY", Token::Year2),
        ("MONTH", Token::MonthName { long: true }),
        ("MON", Token::MonthName { long: false }),
        ("MM", Token::Month { fixed: true }),
        ("DAY", Token::Weekday { long: true }),
        ("DY", Token::Weekday { long: false }),
        (
            "DD",
            Token::Day {
                fixed: true,
                space_padded: false,
            },
        ),
        ("HH24", Token::Hour24 { fixed: true }),
        ("HH12", Token::Hour12 { fixed: true }),
        ("HH", Token::Hour12 { fixed: true }),
        ("MI", Token::Minute { fixed: true }),
        ("SS", Token::Second { fixed: true }),
        ("AM", Token::Meridiem),
        ("PM", Token::Meridiem),
        ("TZH", Token::OffsetHours),
        ("TZM", Token::OffsetMinutes),
        ("TZR", Token::ZoneName),
    ];
    let mut tokens = Vec::new();
    let mut rest = layout;
    'outer: while let Some(c) = rest.chars().next() {
        let upper = rest.to_ascii_uppercase();
        if let Some(after) = upper.strip_prefix("FF") {
            let digits = after
                .chars()
                .next()
                .and_then(|d| d.to_digit(10))
                .filter(|d| (1..=9).contains(d));
            tokens.push(Token::Fraction {
                digits: digits.map(|d| d as usize),
            });
            rest = &rest[2 + usize::from(digits.is_some())..];
            continue;
        }
        for (prefix, token) in table {
            if upper.starts_with(prefix) {
                tokens.push(token.clone());
                rest = &rest[prefix.len()..];
                continue 'outer;
            }
        }
        push_literal(&mut tokens, c);
        rest = &rest[c.len_utf8()..];
    }
    tokens
}

/// Reads `1..=max_digits` ASCII digits (exactly `max_digits` when `fixed`).
fn read_number(
    text: &str,
    max_digits: usize,
    fixed: bool,
    what: &str,
) -> Result<(u32, usize), String> {
    let run = text
        .bytes()
        .take(max_digits)
        .take_while(u8::is_ascii_digit)
        .count();
    if run == 0 || (fixed && run < max_digits) {
        return Err(format!(
            "expected {} for the {what} at {text:?}",
            if fixed {
                format!("{max_digits} digits")
            } else {
                format!("up to {max_digits} digits")
            }
        ));
    }
    let value = text[..run].parse::<u32>().expect("ASCII digits");
    Ok((value, run))
}

fn read_in_range(
    text: &str,
    fixed: bool,
    range: std::ops::RangeInclusive<u32>,
    what: &str,
) -> Result<(u8, usize), String> {
    let (value, used) = read_number(text, 2, fixed, what)?;
    if !range.contains(&value) {
        return Err(format!("{what} {value} is out of range"));
    }
    Ok((u8::try_from(value).expect("at most 99"), used))
}

fn read_name<'t>(
    text: &'t str,
    names: &[&str],
    long: bool,
    what: &str,
) -> Result<(usize, &'t str), String> {
    for (index, name) in names.iter().enumerate() {
        let candidate = if long { name } else { &name[..3] };
        if text.len() >= candidate.len()
            && text.is_char_boundary(candidate.len())
            && text[..candidate.len()].eq_ignore_ascii_case(candidate)
        {
            return Ok((index, &text[candidate.len()..]));
        }
    }
    Err(format!("expected a {what} name at {text:?}"))
}

fn read_fraction<'t>(
    text: &'t str,
    digits: Option<usize>,
    fields: &mut Fields,
) -> Result<&'t str, String> {
    let run = text.bytes().take_while(u8::is_ascii_digit).count();
    match digits {
        Some(wanted) if run != wanted => {
            return Err(format!(
                "expected {wanted} digits of a fraction of a second at {text:?}"
            ));
        }
        None if run == 0 => return Err(format!("expected a fraction of a second at {text:?}")),
        _ => {}
    }
    // Milliseconds: the first three digits, padded; finer digits are dropped, as BSON dates
    // hold milliseconds.
    let mut millis = 0_u16;
    for position in 0..3 {
        let digit = text
            .as_bytes()
            .get(position)
            .filter(|_| position < run)
            .map_or(0, |b| b - b'0');
        millis = millis * 10 + u16::from(digit);
    }
    fields.millisecond = millis;
    Ok(&text[run..])
}

fn read_offset_sign(text: &str) -> Result<(i64, &str), String> {
    match text.chars().next() {
        Some('+') => Ok((1, &text[1..])),
        Some('-') => Ok((-1, &text[1..])),
        _ => Err(format!("expected a zone offset such as +01:00 at {text:?}")),
    }
}

fn read_token<'t>(token: &Token, text: &'t str, fields: &mut Fields) -> Result<&'t str, String> {
    Ok(match token {
        Token::Literal(literal) => text
            .strip_prefix(literal.as_str())
            .ok_or_else(|| format!("expected {literal:?} at {text:?}"))?,
        Token::Year4 => {
            let (year, used) = read_number(text, 4, true, "year")?;
            fields.year = Some(i32::try_from(year).expect("four digits"));
            &text[used..]
        }
        Token::Year2 => {
            let (year, used) = read_number(text, 2, true, "year")?;
            let year = i32::try_from(year).expect("two digits");
            fields.year = Some(if year >= 69 { 1900 + year } else { 2000 + year });
            &text[used..]
        }
        Token::MonthName { long } => {
            let (index, rest) = read_name(text, &MONTHS, *long, "month")?;
            fields.month = Some(u8::try_from(index + 1).expect("12 months"));
            rest
        }
        Token::Month { fixed } => {
            let (month, used) = read_in_range(text, *fixed, 1..=12, "month")?;
            fields.month = Some(month);
            &text[used..]
        }
        Token::Day {
            fixed,
            space_padded,
        } => {
            let text = if *space_padded {
                text.strip_prefix(' ').unwrap_or(text)
            } else {
                text
            };
            let (day, used) = read_in_range(text, *fixed, 1..=31, "day")?;
            fields.day = Some(day);
            &text[used..]
        }
        Token::Weekday { long } => read_name(text, &WEEKDAYS, *long, "weekday")?.1,
        Token::Hour24 { fixed } => {
            let (hour, used) = read_in_range(text, *fixed, 0..=23, "hour")?;
            fields.hour = hour;
            &text[used..]
        }
        Token::Hour12 { fixed } => {
            let (hour, used) = read_in_range(text, *fixed, 1..=12, "hour")?;
            fields.hour12 = Some(hour);
            &text[used..]
        }
        Token::Minute { fixed } => {
            let (minute, used) = read_in_range(text, *fixed, 0..=59, "minute")?;
            fields.minute = minute;
            &text[used..]
        }
        Token::Second { fixed } => {
            let (second, used) = read_in_range(text, *fixed, 0..=59, "second")?;
            fields.second = second;
            &text[used..]
        }
        Token::Fraction { digits } => read_fraction(text, *digits, fields)?,
        Token::Meridiem => {
            let marker = text.get(..2).unwrap_or_default();
            fields.pm = Some(match marker.to_ascii_uppercase().as_str() {
                "AM" => false,
                "PM" => true,
                _ => return Err(format!("expected AM or PM at {text:?}")),
            });
            &text[2..]
        }
        Token::Offset {
            z_for_utc,
            colon,
            minutes,
        } => {
            if *z_for_utc && let Some(rest) = text.strip_prefix('Z') {
                fields.offset_minutes = 0;
                return Ok(rest);
            }
            let (sign, rest) = read_offset_sign(text)?;
            let (hours, used) = read_number(rest, 2, true, "zone hours")?;
            let mut rest = &rest[used..];
            let mut offset_minutes = i64::from(hours) * 60;
            if *minutes {
                if *colon {
                    rest = rest
                        .strip_prefix(':')
                        .ok_or_else(|| format!("expected ':' in the zone offset at {rest:?}"))?;
                }
                let (extra, used) = read_number(rest, 2, true, "zone minutes")?;
                offset_minutes += i64::from(extra);
                rest = &rest[used..];
            }
            fields.offset_minutes = sign * offset_minutes;
            rest
        }
        Token::OffsetHours => {
            let (sign, rest) = read_offset_sign(text)?;
            let (hours, used) = read_number(rest, 2, false, "zone hours")?;
            fields.offset_minutes = sign * i64::from(hours) * 60;
            &rest[used..]
        }
        Token::OffsetMinutes => {
            let (minutes, used) = read_number(text, 2, true, "zone minutes")?;
            let sign = if fields.offset_minutes < 0 { -1 } else { 1 };
            fields.offset_minutes += sign * i64::from(minutes);
            &text[used..]
        }
        Token::ZoneName => {
            let run = text.bytes().take_while(u8::is_ascii_alphabetic).count();
            match &text[..run] {
                "UTC" | "GMT" | "Z" => {}
                "" => return Err(format!("expected a zone name at {text:?}")),
                other => {
                    return Err(format!(
                        "the zone {other:?} is ambiguous: write the offset (-07:00) instead, or UTC"
                    ));
                }
            }
            &text[run..]
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(dialect: Dialect, layout: &str, value: &str, expected: &str) {
        let parsed = Layout::parse(dialect, layout)
            .and_then(|layout| layout.parse_value(value))
            .map(|date| date.try_to_rfc3339_string().unwrap());
        match parsed {
            Ok(date) => assert_eq!(date, expected, "{layout} {value}"),
            Err(error) => assert_eq!(format!("error: {error}"), expected, "{layout} {value}"),
        }
    }

    #[test]
    fn go_layouts() {
        use Dialect::Go;
        check(Go, "2006-01-02", "2024-02-29", "2024-02-29T00:00:00Z");
        check(
            Go,
            "2006-01-02T15:04:05Z07:00",
            "2024-01-01T10:00:00+02:00",
            "2024-01-01T08:00:00Z",
        );
        check(
            Go,
            "2006-01-02T15:04:05Z07:00",
            "2024-01-01T10:00:00Z",
            "2024-01-01T10:00:00Z",
        );
        check(
            Go,
            "2006-01-02T15:04:05.000Z07:00",
            "2024-01-01T10:00:00.250Z",
            "2024-01-01T10:00:00.25Z",
        );
        check(
            Go,
            "2006-01-02 15:04:05",
            "2024-01-01 10:00:00.5",
            "2024-01-01T10:00:00.5Z",
        );
        check(
            Go,
            "Jan 2, 2006 at 3:04pm (MST)",
            "Feb 3, 2013 at 7:54pm (UTC)",
            "2013-02-03T19:54:00Z",
        );
        check(
            Go,
            "Monday, 02-Jan-06 15:04:05 -0700",
            "Tuesday, 05-Mar-24 01:02:03 -0130",
            "2024-03-05T02:32:03Z",
        );
        check(
            Go,
            "January _2 2006",
            "march  7 1999",
            "1999-03-07T00:00:00Z",
        );
        check(Go, "1/2/2006", "12/31/1999", "1999-12-31T00:00:00Z");
        check(
            Go,
            "2006-01-02",
            "2023-02-29",
            "error: \"2023-02-29\": February 2023 has no day 29",
        );
        check(
            Go,
            "2006-01-02",
            "2024-1-02",
            "error: \"2024-1-02\" does not match the date layout: expected 2 digits for the month at \"1-02\"",
        );
        check(
            Go,
            "2006-01-02",
            "2024-01-02x",
            "error: \"2024-01-02x\" does not match the date layout: \"x\" is left over",
        );
        check(
            Go,
            "15:04 MST 2006",
            "10:00 PST 2024",
            "error: \"10:00 PST 2024\" does not match the date layout: the zone \"PST\" is ambiguous: write the offset (-07:00) instead, or UTC",
        );
        check(
            Go,
            "01/02",
            "01/02",
            "error: the date layout \"01/02\" has no year",
        );
    }

    #[test]
    fn microsoft_and_oracle_layouts() {
        check(
            Dialect::Microsoft,
            "yyyy-MM-dd HH:mm:ss.fff",
            "2024-07-04 23:59:58.123",
            "2024-07-04T23:59:58.123Z",
        );
        check(
            Dialect::Microsoft,
            "dd MMM yyyy h:mm tt zzz",
            "04 Jul 2024 1:05 PM +01:00",
            "2024-07-04T12:05:00Z",
        );
        check(
            Dialect::Oracle,
            "YYYY-MM-DD HH24:MI:SS",
            "2024-07-04 23:59:58",
            "2024-07-04T23:59:58Z",
        );
        check(
            Dialect::Oracle,
            "dd-mon-yy hh:mi am tzh:tzm",
            "04-JUL-24 12:30 AM -02:30",
            "2024-07-04T03:00:00Z",
        );
        check(
            Dialect::Oracle,
            "YYYY-MM-DD HH:MI",
            "2024-07-04 01:00",
            "error: the date layout \"YYYY-MM-DD HH:MI\" has a 12-hour clock hour but no AM/PM marker",
        );
    }
}
