//! Date operators: `$year`, `$month`, `$dayOfMonth`, `$hour`, `$minute`, `$second`,
//! `$millisecond`, `$dayOfWeek`, `$dayOfYear`, `$week`, `$isoWeek`, `$isoWeekYear`,
//! `$isoDayOfWeek`, `$dateToString`, `$dateTrunc`, `$dateAdd`, `$dateSubtract`, `$dateDiff`.
//!
//! Calendar arithmetic is the proleptic Gregorian calendar on milliseconds since the epoch.
//! Time zones: `UTC`, `GMT`, `Z` and fixed offsets (`+05:30`, `-0800`, `+02`); Olson names
//! (`Europe/Paris`) are refused with MongoDB's code 40485 (Spillway has no time zone database;
//! docs/document-language.md says so).

// Every operator function has the one signature of `CallFn` (the values by value, a
// `Result`), whether or not it consumes them or can fail.
#![allow(clippy::needless_pass_by_value, clippy::unnecessary_wraps)]

use bson::{Bson, DateTime};

use super::num::{Num, is_nullish, type_name};
use super::{Context, Expr, Named, Operator, OperatorBox, Scope, expression_error};
use crate::error::Result;

const MS_PER_DAY: i64 = 86_400_000;

/// Parses the date operator `name`, if it is one.
pub(super) fn parse(name: &str, argument: &Bson, scope: &mut Scope) -> Option<Result<Expr>> {
    let part = match name {
        "$year" => Part::Year,
        "$month" => Part::Month,
        "$dayOfMonth" => Part::DayOfMonth,
        "$hour" => Part::Hour,
        "$minute" => Part::Minute,
        "$second" => Part::Second,
        "$millisecond" => Part::Millisecond,
        "$dayOfWeek" => Part::DayOfWeek,
        "$dayOfYear" => Part::DayOfYear,
        "$week" => Part::Week,
        "$isoWeek" => Part::IsoWeek,
        "$isoWeekYear" => Part::IsoWeekYear,
        "$isoDayOfWeek" => Part::IsoDayOfWeek,
        "$dateToString" => return Some(parse_named(Kind::ToString, argument, scope)),
        "$dateTrunc" => return Some(parse_named(Kind::Trunc, argument, scope)),
        "$dateAdd" => return Some(parse_named(Kind::Add, argument, scope)),
        "$dateSubtract" => return Some(parse_named(Kind::Subtract, argument, scope)),
        "$dateDiff" => return Some(parse_named(Kind::Diff, argument, scope)),
        _ => return None,
    };
    let parsed = (|| {
        let (date, timezone) = match argument {
            Bson::Document(spec) if spec.contains_key("date") => {
                let mut named = Named::parse(scope, name, argument, &["date"], &["timezone"])?;
                (
                    named.take("date").expect("required"),
                    named.take("timezone"),
                )
            }
            Bson::Array(items) if items.len() == 1 => (scope.parse(&items[0])?, None),
            Bson::Array(items) => {
                return Err(expression_error(
                    16020,
                    format!(
                        "Expression {name} takes exactly 1 arguments. {} were passed in.",
                        items.len()
                    ),
                ));
            }
            other => (scope.parse(other)?, None),
        };
        let mut args = vec![date];
        args.extend(timezone);
        Ok(Expr::Operator(Box::new(DateOp {
            kind: Kind::Part(part),
            name: name_of(name),
            args: args.into_iter().map(|a| (String::new(), a)).collect(),
        })))
    })();
    Some(parsed)
}

fn name_of(name: &str) -> &'static str {
    const NAMES: &[&str] = &[
        "$year",
        "$month",
        "$dayOfMonth",
        "$hour",
        "$minute",
        "$second",
        "$millisecond",
        "$dayOfWeek",
        "$dayOfYear",
        "$week",
        "$isoWeek",
        "$isoWeekYear",
        "$isoDayOfWeek",
    ];
    NAMES
        .iter()
        .find(|known| **known == name)
        .copied()
        .unwrap_or("$date")
}

#[derive(Debug, Clone, Copy)]
enum Part {
    Year,
    Month,
    DayOfMonth,
    Hour,
    Minute,
    Second,
    Millisecond,
    DayOfWeek,
    DayOfYear,
    Week,
    IsoWeek,
    IsoWeekYear,
    IsoDayOfWeek,
}

#[derive(Debug, Clone, Copy)]
enum Kind {
    Part(Part),
    ToString,
    Trunc,
    Add,
    Subtract,
    Diff,
}

fn parse_named(kind: Kind, argument: &Bson, scope: &mut Scope) -> Result<Expr> {
    let (name, required, optional): (&'static str, &[&str], &[&str]) = match kind {
        Kind::ToString => (
            "$dateToString",
            &["date"],
            &["format", "timezone", "onNull"],
        ),
        Kind::Trunc => (
            "$dateTrunc",
            &["date", "unit"],
            &["binSize", "timezone", "startOfWeek"],
        ),
        Kind::Add => ("$dateAdd", &["startDate", "unit", "amount"], &["timezone"]),
        Kind::Subtract => (
            "$dateSubtract",
            &["startDate", "unit", "amount"],
            &["timezone"],
        ),
        Kind::Diff => (
            "$dateDiff",
            &["startDate", "endDate", "unit"],
            &["timezone", "startOfWeek"],
        ),
        Kind::Part(_) => unreachable!("parts parse above"),
    };
    let mut named = Named::parse(scope, name, argument, required, optional)?;
    let args = required
        .iter()
        .chain(optional)
        .filter_map(|field| named.take(field).map(|expr| ((*field).to_string(), expr)))
        .collect();
    Ok(Expr::Operator(Box::new(DateOp { kind, name, args })))
}

#[derive(Debug, Clone)]
struct DateOp {
    kind: Kind,
    name: &'static str,
    /// Arguments by name (a part's date is unnamed, then its timezone).
    args: Vec<(String, Expr)>,
}

/// A calendar date and time of day, in some time zone.
#[derive(Debug, Clone, Copy)]
struct Civil {
    year: i64,
    month: i64,
    day: i64,
    hour: i64,
    minute: i64,
    second: i64,
    millisecond: i64,
}

/// Days since 1970-01-01 of a civil date (Howard Hinnant's algorithm).
fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let year = if month <= 2 { year - 1 } else { year };
    let era = year.div_euclid(400);
    let year_of_era = year - era * 400;
    let shifted_month = (month + 9) % 12;
    let day_of_year = (153 * shifted_month + 2) / 5 + day - 1;
    let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    era * 146_097 + day_of_era - 719_468
}

fn civil_from_days(days: i64) -> (i64, i64, i64) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let day_of_era = z - era * 146_097;
    let year_of_era =
        (day_of_era - day_of_era / 1460 + day_of_era / 36524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let mp = (5 * day_of_year + 2) / 153;
    let day = day_of_year - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = year_of_era + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

impl Civil {
    fn of(millis: i64) -> Civil {
        let days = millis.div_euclid(MS_PER_DAY);
        let in_day = millis.rem_euclid(MS_PER_DAY);
        let (year, month, day) = civil_from_days(days);
        Civil {
            year,
            month,
            day,
            hour: in_day / 3_600_000,
            minute: in_day / 60_000 % 60,
            second: in_day / 1000 % 60,
            millisecond: in_day % 1000,
        }
    }

    fn millis(self) -> i64 {
        days_from_civil(self.year, self.month, self.day) * MS_PER_DAY
            + self.hour * 3_600_000
            + self.minute * 60_000
            + self.second * 1000
            + self.millisecond
    }

    fn days(self) -> i64 {
        days_from_civil(self.year, self.month, self.day)
    }

    /// 1 (Sunday) to 7 (Saturday).
    fn day_of_week(self) -> i64 {
        (self.days() + 4).rem_euclid(7) + 1
    }

    fn iso_day_of_week(self) -> i64 {
        (self.days() + 3).rem_euclid(7) + 1
    }

    fn day_of_year(self) -> i64 {
        self.days() - days_from_civil(self.year, 1, 1) + 1
    }

    /// The week of the year, weeks starting on Sunday, days before the first Sunday in week 0.
    fn week(self) -> i64 {
        (self.day_of_year() - self.day_of_week() + 7) / 7
    }

    /// The ISO 8601 week number and week-numbering year.
    fn iso_week(self) -> (i64, i64) {
        let thursday = self.days() - self.iso_day_of_week() + 4;
        let (year, _, _) = civil_from_days(thursday);
        let week = (thursday - days_from_civil(year, 1, 1)) / 7 + 1;
        (week, year)
    }
}

/// A time zone's offset from UTC in milliseconds.
fn timezone_offset(name: &str, value: Option<&Bson>) -> Result<i64> {
    let text = match value {
        None => return Ok(0),
        Some(Bson::String(text)) => text.as_str(),
        Some(other) => {
            return Err(expression_error(
                40517,
                format!(
                    "{name}: timezone must evaluate to a string, found {}",
                    type_name(Some(other))
                ),
            ));
        }
    };
    if matches!(text, "UTC" | "GMT" | "Z" | "Etc/UTC" | "Etc/GMT") {
        return Ok(0);
    }
    let unknown = || {
        expression_error(
            40485,
            format!("{name}: unrecognized time zone identifier: \"{text}\""),
        )
    };
    let (sign, rest) = match text.as_bytes().first() {
        Some(b'+') => (1, &text[1..]),
        Some(b'-') => (-1, &text[1..]),
        _ => return Err(unknown()),
    };
    let digits: String = rest.chars().filter(|c| *c != ':').collect();
    if !digits.chars().all(|c| c.is_ascii_digit()) || !matches!(digits.len(), 2 | 4) {
        return Err(unknown());
    }
    let hours: i64 = digits[..2].parse().map_err(|_| unknown())?;
    let minutes: i64 = if digits.len() == 4 {
        digits[2..].parse().map_err(|_| unknown())?
    } else {
        0
    };
    Ok(sign * (hours * 3_600_000 + minutes * 60_000))
}

/// The instant a date operand stands for: a date, a timestamp or an ObjectId.
fn instant(name: &str, value: &Bson) -> Result<i64> {
    match value {
        Bson::DateTime(at) => Ok(at.timestamp_millis()),
        Bson::Timestamp(ts) => Ok(i64::from(ts.time) * 1000),
        Bson::ObjectId(id) => Ok(id.timestamp().timestamp_millis()),
        other => Err(expression_error(
            16006,
            format!(
                "can't convert from BSON type {} to Date in {name}",
                type_name(Some(other))
            ),
        )),
    }
}

/// A date as `$toString` and `$dateToString`'s default format write it.
pub(crate) fn iso_string(millis: i64) -> String {
    let c = Civil::of(millis);
    format!(
        "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}Z",
        c.year, c.month, c.day, c.hour, c.minute, c.second, c.millisecond
    )
}

fn format_date(name: &str, format: &str, millis: i64, offset: i64) -> Result<String> {
    let c = Civil::of(millis + offset);
    let mut out = String::new();
    let mut chars = format.chars();
    while let Some(ch) = chars.next() {
        if ch != '%' {
            out.push(ch);
            continue;
        }
        let spec = chars.next().ok_or_else(|| {
            expression_error(
                18535,
                format!("{name}: unmatched '%' at end of format string"),
            )
        })?;
        let (iso_week, iso_year) = c.iso_week();
        let piece = match spec {
            'Y' => format!("{:04}", c.year),
            'm' => format!("{:02}", c.month),
            'd' => format!("{:02}", c.day),
            'H' => format!("{:02}", c.hour),
            'M' => format!("{:02}", c.minute),
            'S' => format!("{:02}", c.second),
            'L' => format!("{:03}", c.millisecond),
            'j' => format!("{:03}", c.day_of_year()),
            'w' => c.day_of_week().to_string(),
            'u' => c.iso_day_of_week().to_string(),
            'U' => format!("{:02}", c.week()),
            'V' => format!("{iso_week:02}"),
            'G' => format!("{iso_year:04}"),
            'z' => {
                let minutes = offset / 60_000;
                format!(
                    "{}{:02}{:02}",
                    if minutes < 0 { '-' } else { '+' },
                    minutes.abs() / 60,
                    minutes.abs() % 60
                )
            }
            'Z' => (offset / 60_000).to_string(),
            '%' => "%".to_string(),
            other => {
                return Err(expression_error(
                    18536,
                    format!("{name}: invalid format character '%{other}' in format string"),
                ));
            }
        };
        out.push_str(&piece);
    }
    Ok(out)
}

/// The units `$dateAdd`, `$dateDiff` and `$dateTrunc` take.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Unit {
    Year,
    Quarter,
    Month,
    Week,
    Day,
    Hour,
    Minute,
    Second,
    Millisecond,
}

fn unit(name: &str, value: Option<&Bson>) -> Result<Unit> {
    Ok(match value {
        Some(Bson::String(unit)) => match unit.as_str() {
            "year" => Unit::Year,
            "quarter" => Unit::Quarter,
            "month" => Unit::Month,
            "week" => Unit::Week,
            "day" => Unit::Day,
            "hour" => Unit::Hour,
            "minute" => Unit::Minute,
            "second" => Unit::Second,
            "millisecond" => Unit::Millisecond,
            other => {
                return Err(expression_error(
                    ErrorUnknownUnit::CODE,
                    format!("{name}: unknown time unit value: {other}"),
                ));
            }
        },
        other => {
            return Err(expression_error(
                ErrorUnknownUnit::CODE,
                format!(
                    "{name}: unit is expected to be a string, found {}",
                    type_name(other)
                ),
            ));
        }
    })
}

struct ErrorUnknownUnit;

impl ErrorUnknownUnit {
    const CODE: i32 = 5439014;
}

fn fixed_millis(unit: Unit) -> Option<i64> {
    match unit {
        Unit::Week => Some(7 * MS_PER_DAY),
        Unit::Day => Some(MS_PER_DAY),
        Unit::Hour => Some(3_600_000),
        Unit::Minute => Some(60_000),
        Unit::Second => Some(1000),
        Unit::Millisecond => Some(1),
        _ => None,
    }
}

fn months_of(unit: Unit) -> i64 {
    match unit {
        Unit::Year => 12,
        Unit::Quarter => 3,
        _ => 1,
    }
}

fn add_units(millis: i64, unit: Unit, amount: i64, offset: i64) -> i64 {
    if let Some(step) = fixed_millis(unit) {
        return millis + step * amount;
    }
    let c = Civil::of(millis + offset);
    let total = c.year * 12 + (c.month - 1) + amount * months_of(unit);
    let (year, month) = (total.div_euclid(12), total.rem_euclid(12) + 1);
    let last_day = days_from_civil(year + i64::from(month == 12), month % 12 + 1, 1)
        - days_from_civil(year, month, 1);
    Civil {
        year,
        month,
        day: c.day.min(last_day),
        ..c
    }
    .millis()
        - offset
}

fn start_of_week(value: Option<&Bson>) -> Result<i64> {
    match value {
        None => Ok(7),
        Some(Bson::String(day)) => {
            let days = [
                "monday",
                "tuesday",
                "wednesday",
                "thursday",
                "friday",
                "saturday",
                "sunday",
            ];
            let short = ["mon", "tue", "wed", "thu", "fri", "sat", "sun"];
            let lower = day.to_lowercase();
            days.iter()
                .position(|d| *d == lower)
                .or_else(|| short.iter().position(|d| *d == lower))
                .map(|p| p as i64 + 1)
                .ok_or_else(|| {
                    expression_error(5439015, format!("unknown day of week value: {day}"))
                })
        }
        Some(other) => Err(expression_error(
            5439015,
            format!(
                "startOfWeek must be a string, found {}",
                type_name(Some(other))
            ),
        )),
    }
}

/// The start of the `unit` (of `bin` units) containing `millis`, in the zone at `offset`.
fn truncate(millis: i64, unit: Unit, bin: i64, offset: i64, week_start: i64) -> i64 {
    let local = millis + offset;
    let truncated = match unit {
        Unit::Year | Unit::Quarter | Unit::Month => {
            let c = Civil::of(local);
            let months = (c.year * 12 + c.month - 1) - 1970 * 12;
            let size = months_of(unit) * bin;
            let start = 1970 * 12 + months.div_euclid(size) * size;
            Civil {
                year: start.div_euclid(12),
                month: start.rem_euclid(12) + 1,
                day: 1,
                hour: 0,
                minute: 0,
                second: 0,
                millisecond: 0,
            }
            .millis()
        }
        Unit::Week => {
            let days = local.div_euclid(MS_PER_DAY);
            // 1970-01-01 was a Thursday (ISO 4).
            let first = days - (days + 3 - (week_start - 1)).rem_euclid(7);
            let reference = -(3 - (week_start - 1)).rem_euclid(7);
            let weeks = (first - reference).div_euclid(7);
            (reference + weeks.div_euclid(bin) * bin * 7) * MS_PER_DAY
        }
        _ => {
            let size = fixed_millis(unit).expect("fixed unit") * bin;
            local.div_euclid(size) * size
        }
    };
    truncated - offset
}

fn diff(start: i64, end: i64, unit: Unit, offset: i64, week_start: i64) -> i64 {
    match unit {
        Unit::Year | Unit::Quarter | Unit::Month => {
            let (a, b) = (Civil::of(start + offset), Civil::of(end + offset));
            let months = (b.year * 12 + b.month) - (a.year * 12 + a.month);
            match unit {
                Unit::Year => b.year - a.year,
                Unit::Quarter => {
                    ((b.year * 12 + b.month - 1) / 3) - ((a.year * 12 + a.month - 1) / 3)
                }
                _ => months,
            }
        }
        Unit::Week => {
            (truncate(end, Unit::Week, 1, offset, week_start)
                - truncate(start, Unit::Week, 1, offset, week_start))
                / (7 * MS_PER_DAY)
        }
        _ => {
            let size = fixed_millis(unit).expect("fixed unit");
            (end + offset).div_euclid(size) - (start + offset).div_euclid(size)
        }
    }
}

impl DateOp {
    fn argument(&self, name: &str) -> Option<&Expr> {
        self.args
            .iter()
            .find(|(given, _)| given == name)
            .map(|(_, expr)| expr)
    }

    fn value(&self, name: &str, context: &mut Context<'_>) -> Result<Option<Bson>> {
        match self.argument(name) {
            Some(expr) => expr.evaluate(context),
            None => Ok(None),
        }
    }
}

impl Operator for DateOp {
    fn evaluate(&self, context: &mut Context<'_>) -> Result<Option<Bson>> {
        let name = self.name;
        match self.kind {
            Kind::Part(part) => {
                let date = self.args[0].1.evaluate(context)?;
                let timezone = match self.args.get(1) {
                    Some((_, expr)) => expr.evaluate(context)?,
                    None => None,
                };
                if is_nullish(date.as_ref())
                    || (self.args.len() > 1 && is_nullish(timezone.as_ref()))
                {
                    return Ok(Some(Bson::Null));
                }
                let millis = instant(name, date.as_ref().expect("checked"))?;
                let c = Civil::of(millis + timezone_offset(name, timezone.as_ref())?);
                let value = match part {
                    Part::Year => c.year,
                    Part::Month => c.month,
                    Part::DayOfMonth => c.day,
                    Part::Hour => c.hour,
                    Part::Minute => c.minute,
                    Part::Second => c.second,
                    Part::Millisecond => c.millisecond,
                    Part::DayOfWeek => c.day_of_week(),
                    Part::DayOfYear => c.day_of_year(),
                    Part::Week => c.week(),
                    Part::IsoWeek => c.iso_week().0,
                    Part::IsoWeekYear => return Ok(Some(Bson::Int64(c.iso_week().1))),
                    Part::IsoDayOfWeek => c.iso_day_of_week(),
                };
                Ok(Some(Bson::Int32(value as i32)))
            }
            Kind::ToString => {
                let date = self.value("date", context)?;
                if is_nullish(date.as_ref()) {
                    return match self.argument("onNull") {
                        Some(on_null) => on_null.evaluate(context),
                        None => Ok(Some(Bson::Null)),
                    };
                }
                let timezone = self.value("timezone", context)?;
                let format = match self.value("format", context)? {
                    None => None,
                    Some(Bson::String(format)) => Some(format),
                    Some(Bson::Null) => return Ok(Some(Bson::Null)),
                    Some(other) => {
                        return Err(expression_error(
                            18533,
                            format!(
                                "{name} requires that 'format' be a string, found: {}",
                                type_name(Some(&other))
                            ),
                        ));
                    }
                };
                let millis = instant(name, date.as_ref().expect("checked"))?;
                let offset = timezone_offset(name, timezone.as_ref())?;
                let format = format.unwrap_or_else(|| {
                    if offset == 0 {
                        "%Y-%m-%dT%H:%M:%S.%LZ".to_string()
                    } else {
                        "%Y-%m-%dT%H:%M:%S.%L".to_string()
                    }
                });
                Ok(Some(Bson::String(format_date(
                    name, &format, millis, offset,
                )?)))
            }
            Kind::Trunc => {
                let date = self.value("date", context)?;
                let unit_value = self.value("unit", context)?;
                if is_nullish(date.as_ref()) || is_nullish(unit_value.as_ref()) {
                    return Ok(Some(Bson::Null));
                }
                let millis = instant(name, date.as_ref().expect("checked"))?;
                let unit = unit(name, unit_value.as_ref())?;
                let bin = match self.value("binSize", context)? {
                    None => 1,
                    Some(value) => match Num::of(&value).and_then(Num::as_i64) {
                        Some(n) if n > 0 => n,
                        _ => {
                            return Err(expression_error(
                                5439017,
                                format!(
                                    "{name} requires 'binSize' to be a positive 64-bit integer"
                                ),
                            ));
                        }
                    },
                };
                let offset = timezone_offset(name, self.value("timezone", context)?.as_ref())?;
                let week_start = start_of_week(self.value("startOfWeek", context)?.as_ref())?;
                Ok(Some(Bson::DateTime(DateTime::from_millis(truncate(
                    millis, unit, bin, offset, week_start,
                )))))
            }
            Kind::Add | Kind::Subtract => {
                let start = self.value("startDate", context)?;
                let unit_value = self.value("unit", context)?;
                let amount = self.value("amount", context)?;
                if is_nullish(start.as_ref())
                    || is_nullish(unit_value.as_ref())
                    || is_nullish(amount.as_ref())
                {
                    return Ok(Some(Bson::Null));
                }
                let millis = instant(name, start.as_ref().expect("checked"))?;
                let unit = unit(name, unit_value.as_ref())?;
                let amount = amount
                    .as_ref()
                    .and_then(Num::of)
                    .and_then(Num::as_i64)
                    .ok_or_else(|| {
                        expression_error(
                            5166402,
                            format!("{name} expects integer amount of time units"),
                        )
                    })?;
                let amount = if matches!(self.kind, Kind::Subtract) {
                    -amount
                } else {
                    amount
                };
                let offset = timezone_offset(name, self.value("timezone", context)?.as_ref())?;
                Ok(Some(Bson::DateTime(DateTime::from_millis(add_units(
                    millis, unit, amount, offset,
                )))))
            }
            Kind::Diff => {
                let start = self.value("startDate", context)?;
                let end = self.value("endDate", context)?;
                let unit_value = self.value("unit", context)?;
                if is_nullish(start.as_ref())
                    || is_nullish(end.as_ref())
                    || is_nullish(unit_value.as_ref())
                {
                    return Ok(Some(Bson::Null));
                }
                let start = instant(name, start.as_ref().expect("checked"))?;
                let end = instant(name, end.as_ref().expect("checked"))?;
                let unit = unit(name, unit_value.as_ref())?;
                let offset = timezone_offset(name, self.value("timezone", context)?.as_ref())?;
                let week_start = start_of_week(self.value("startOfWeek", context)?.as_ref())?;
                Ok(Some(Bson::Int64(diff(
                    start, end, unit, offset, week_start,
                ))))
            }
        }
    }

    fn clone_box(&self) -> OperatorBox {
        Box::new(self.clone())
    }

    fn children(&self) -> Vec<&Expr> {
        self.args.iter().map(|(_, expr)| expr).collect()
    }
}
