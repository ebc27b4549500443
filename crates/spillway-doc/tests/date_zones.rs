//! Date operators in named (IANA) time zones, across daylight saving changes, and at dates far
//! from 1970, data-driven: each case is an expression (on an empty document) and the value
//! MongoDB returns, or its error code. The expected values are worked out by hand from the
//! rules of MongoDB's `date_time_support.cpp` (cited per group) and the zones' published
//! transitions:
//! - Europe/Paris: +01:00 (CET) until 2024-03-31T01:00Z, then +02:00 (CEST) until
//!   2024-10-27T01:00Z, then +01:00 again.
//! - America/New_York: -05:00 (EST) until 2024-03-10T07:00Z, then -04:00 (EDT) until
//!   2024-11-03T06:00Z, then -05:00. In 1960 New York kept summer time too (EDT in July).
//! - Asia/Kolkata: +05:30 all year; America/St_Johns: -03:30 in winter.

use bson::{Bson, bson, doc};
use spillway_doc::DocError;
use spillway_doc::expr::{Expression, Variables};

/// A date from its RFC 3339 text.
fn at(text: &str) -> Bson {
    Bson::DateTime(bson::DateTime::parse_rfc3339_str(text).expect("a valid date"))
}

fn millis(value: i64) -> Bson {
    Bson::DateTime(bson::DateTime::from_millis(value))
}

/// What a case expects: a value, or MongoDB's error code.
enum Expect {
    Value(Bson),
    Code(i32),
}
use Expect::{Code, Value};

fn check(cases: Vec<(Bson, Expect)>) {
    let mut failures = Vec::new();
    for (expression, expected) in cases {
        let result = Expression::parse(&expression)
            .and_then(|parsed| parsed.evaluate(&doc! {}, &Variables::default()));
        let ok = match (&result, &expected) {
            (Ok(Some(got)), Value(want)) => got == want,
            (Err(DocError::Expression { code, .. }), Code(want)) => code == want,
            _ => false,
        };
        if !ok {
            let want = match expected {
                Value(value) => format!("{value}"),
                Code(code) => format!("error {code}"),
            };
            failures.push(format!("{expression}\n  want {want}\n  got  {result:?}"));
        }
    }
    assert!(failures.is_empty(), "\n{}", failures.join("\n"));
}

fn part(operator: &str, date: Bson, zone: &str) -> Bson {
    bson!({ operator: { "date": date, "timezone": zone } })
}

#[test]
fn parts_in_named_zones_follow_the_offset_at_the_instant() {
    // `TimeZone::getTimelibTime`: the instant read with the zone's offset at that instant.
    check(vec![
        // Paris, the night clocks go forward: 01:30 CET, then (an hour later) 03:30 CEST.
        (
            part("$hour", at("2024-03-31T00:30:00Z"), "Europe/Paris"),
            Value(Bson::Int32(1)),
        ),
        (
            part("$hour", at("2024-03-31T01:30:00Z"), "Europe/Paris"),
            Value(Bson::Int32(3)),
        ),
        // Paris, the night clocks go back: 02:30 twice, first in CEST, then in CET.
        (
            part("$hour", at("2024-10-27T00:30:00Z"), "Europe/Paris"),
            Value(Bson::Int32(2)),
        ),
        (
            part("$hour", at("2024-10-27T01:30:00Z"), "Europe/Paris"),
            Value(Bson::Int32(2)),
        ),
        // New York: 01:30 EST, then 03:30 EDT.
        (
            part("$hour", at("2024-03-10T06:30:00Z"), "America/New_York"),
            Value(Bson::Int32(1)),
        ),
        (
            part("$hour", at("2024-03-10T07:30:00Z"), "America/New_York"),
            Value(Bson::Int32(3)),
        ),
        // The local date, not UTC's: 23:30Z on Saturday 30 March is Sunday 31 in Kolkata
        // (05:00) but still Saturday in New York (19:30).
        (
            part("$dayOfMonth", at("2024-03-30T23:30:00Z"), "Asia/Kolkata"),
            Value(Bson::Int32(31)),
        ),
        (
            part("$dayOfWeek", at("2024-03-30T23:30:00Z"), "Asia/Kolkata"),
            Value(Bson::Int32(1)),
        ),
        (
            part("$dayOfWeek", at("2024-03-30T23:30:00Z"), "America/New_York"),
            Value(Bson::Int32(7)),
        ),
        (
            part("$minute", at("2024-03-30T23:30:00Z"), "Asia/Kolkata"),
            Value(Bson::Int32(0)),
        ),
        // New Year's Eve 23:30 in New York is already 2025 in UTC: week and ISO week of the
        // local date (Tuesday 2024-12-31: $week 52, ISO week 1 of 2025).
        (
            part("$year", at("2025-01-01T04:30:00Z"), "America/New_York"),
            Value(Bson::Int32(2024)),
        ),
        (
            part("$week", at("2025-01-01T04:30:00Z"), "America/New_York"),
            Value(Bson::Int32(52)),
        ),
        (
            part("$isoWeek", at("2025-01-01T04:30:00Z"), "America/New_York"),
            Value(Bson::Int32(1)),
        ),
        (
            part(
                "$isoWeekYear",
                at("2025-01-01T04:30:00Z"),
                "America/New_York",
            ),
            Value(Bson::Int64(2025)),
        ),
        // Milliseconds survive the zone.
        (
            part(
                "$millisecond",
                at("2024-03-31T01:30:00.123Z"),
                "Europe/Paris",
            ),
            Value(Bson::Int32(123)),
        ),
    ]);
}

#[test]
fn date_to_string_writes_the_offset_of_the_instant() {
    // `%z` is the offset as +hhmm, `%Z` the offset in minutes (`TimeZone::utcOffset` at the
    // instant); without a format a zone other than UTC writes no `Z`.
    let format = "%Y-%m-%dT%H:%M:%S.%L%z %Z";
    let to_string = |date: Bson, zone: &str| bson!({ "$dateToString": { "date": date, "format": format, "timezone": zone } });
    check(vec![
        (
            to_string(at("2024-03-31T00:30:00Z"), "Europe/Paris"),
            Value(Bson::String("2024-03-31T01:30:00.000+0100 60".into())),
        ),
        (
            to_string(at("2024-03-31T01:30:00Z"), "Europe/Paris"),
            Value(Bson::String("2024-03-31T03:30:00.000+0200 120".into())),
        ),
        (
            to_string(at("2024-10-27T00:30:00Z"), "Europe/Paris"),
            Value(Bson::String("2024-10-27T02:30:00.000+0200 120".into())),
        ),
        (
            to_string(at("2024-10-27T01:30:00Z"), "Europe/Paris"),
            Value(Bson::String("2024-10-27T02:30:00.000+0100 60".into())),
        ),
        (
            to_string(at("2024-03-10T06:30:00Z"), "America/New_York"),
            Value(Bson::String("2024-03-10T01:30:00.000-0500 -300".into())),
        ),
        (
            to_string(at("2024-03-10T07:30:00Z"), "America/New_York"),
            Value(Bson::String("2024-03-10T03:30:00.000-0400 -240".into())),
        ),
        (
            to_string(at("2024-01-15T12:00:00Z"), "Asia/Kolkata"),
            Value(Bson::String("2024-01-15T17:30:00.000+0530 330".into())),
        ),
        (
            to_string(at("2024-01-15T12:00:00Z"), "America/St_Johns"),
            Value(Bson::String("2024-01-15T08:30:00.000-0330 -210".into())),
        ),
        // Fixed offsets as before.
        (
            to_string(at("2024-01-15T12:00:00Z"), "-08:00"),
            Value(Bson::String("2024-01-15T04:00:00.000-0800 -480".into())),
        ),
        (
            bson!({ "$dateToString": { "date": at("2024-07-01T12:00:00Z"), "timezone": "Europe/Paris" } }),
            Value(Bson::String("2024-07-01T14:00:00.000".into())),
        ),
        (
            bson!({ "$dateToString": { "date": at("2024-07-01T12:00:00Z"), "timezone": "UTC" } }),
            Value(Bson::String("2024-07-01T12:00:00.000Z".into())),
        ),
    ]);
}

#[test]
fn date_trunc_in_named_zones_starts_bins_at_local_boundaries() {
    // `truncateDate`: days and longer are counted on the local calendar from
    // 2000-01-01T00:00 in the zone (weeks from the first `startOfWeek` day after it), and the
    // bin's local start is turned back into an instant with the offset in force then.
    let trunc = |date: Bson, unit: &str, zone: &str| bson!({ "$dateTrunc": { "date": date, "unit": unit, "timezone": zone } });
    check(vec![
        // 03:30 CEST on 2024-03-31: the day began at 00:00 CET.
        (
            trunc(at("2024-03-31T01:30:00Z"), "day", "Europe/Paris"),
            Value(at("2024-03-30T23:00:00Z")),
        ),
        // 02:30 CET on 2024-10-27: the day began at 00:00 CEST.
        (
            trunc(at("2024-10-27T01:30:00Z"), "day", "Europe/Paris"),
            Value(at("2024-10-26T22:00:00Z")),
        ),
        // 03:30 EDT on 2024-03-10: the day began at 00:00 EST.
        (
            trunc(at("2024-03-10T07:30:00Z"), "day", "America/New_York"),
            Value(at("2024-03-10T05:00:00Z")),
        ),
        // In UTC the same instant is in the day of 2024-03-10 too, starting at 00:00Z.
        (
            trunc(at("2024-03-10T07:30:00Z"), "day", "UTC"),
            Value(at("2024-03-10T00:00:00Z")),
        ),
        // Weeks start on Sunday by default: Sunday 2024-10-27 itself, at 00:00 CEST.
        (
            trunc(at("2024-10-27T01:30:00Z"), "week", "Europe/Paris"),
            Value(at("2024-10-26T22:00:00Z")),
        ),
        // From Monday: Monday 2024-10-21 00:00 CEST, and for Monday 2024-10-28 (13:00 CET)
        // its own midnight, already CET.
        (
            bson!({ "$dateTrunc": { "date": at("2024-10-27T01:30:00Z"), "unit": "week", "timezone": "Europe/Paris", "startOfWeek": "Monday" } }),
            Value(at("2024-10-20T22:00:00Z")),
        ),
        (
            bson!({ "$dateTrunc": { "date": at("2024-10-28T12:00:00Z"), "unit": "week", "timezone": "Europe/Paris", "startOfWeek": "mon" } }),
            Value(at("2024-10-27T23:00:00Z")),
        ),
        // A month that began in winter time, truncated from summer time (14:00 CEST on the
        // 31st), and the next one, begun in summer time.
        (
            trunc(at("2024-03-31T12:00:00Z"), "month", "Europe/Paris"),
            Value(at("2024-02-29T23:00:00Z")),
        ),
        (
            trunc(at("2024-04-15T12:00:00Z"), "month", "Europe/Paris"),
            Value(at("2024-03-31T22:00:00Z")),
        ),
        (
            trunc(at("2024-03-15T12:00:00Z"), "month", "Europe/Paris"),
            Value(at("2024-02-29T23:00:00Z")),
        ),
        // Hours in Kolkata start at the local hour (bins of fixed length from
        // 2000-01-01T00:00+05:30).
        (
            trunc(at("2024-01-15T12:45:00Z"), "hour", "Asia/Kolkata"),
            Value(at("2024-01-15T12:30:00Z")),
        ),
        // Bins of 7 hours are counted from 2000-01-01T00:00Z: 2024-01-15T12:45Z is 210,732
        // hours and 45 minutes after it, and 210,732 = 7 × 30,104 + 4, so the bin began at
        // 08:00Z (counted from 1970 it would have been 09:00Z).
        (
            bson!({ "$dateTrunc": { "date": at("2024-01-15T12:45:00Z"), "unit": "hour", "binSize": 7 } }),
            Value(at("2024-01-15T08:00:00Z")),
        ),
        // Bins of 2 years from 2000: 2024 begins one.
        (
            bson!({ "$dateTrunc": { "date": at("2025-06-01T00:00:00Z"), "unit": "year", "binSize": 2, "timezone": "Europe/Paris" } }),
            Value(at("2023-12-31T23:00:00Z")),
        ),
    ]);
}

#[test]
fn date_add_keeps_the_local_time_across_daylight_saving_changes() {
    // `dateAdd`: days and longer move the wall clock in the zone (so 1 day is 23 or 25 hours
    // on the nights clocks change); hours and shorter are a length of time.
    let add = |date: Bson, unit: &str, amount: i64, zone: &str| bson!({ "$dateAdd": { "startDate": date, "unit": unit, "amount": amount, "timezone": zone } });
    check(vec![
        // 13:00 CET + 1 day = 13:00 CEST, 23 hours later.
        (
            add(at("2024-03-30T12:00:00Z"), "day", 1, "Europe/Paris"),
            Value(at("2024-03-31T11:00:00Z")),
        ),
        // 14:00 CEST + 1 day = 14:00 CET, 25 hours later.
        (
            add(at("2024-10-26T12:00:00Z"), "day", 1, "Europe/Paris"),
            Value(at("2024-10-27T13:00:00Z")),
        ),
        // 08:00 EDT + 1 day = 08:00 EST.
        (
            add(at("2024-11-02T12:00:00Z"), "day", 1, "America/New_York"),
            Value(at("2024-11-03T13:00:00Z")),
        ),
        // 24 hours are 24 hours.
        (
            add(at("2024-03-30T12:00:00Z"), "hour", 24, "Europe/Paris"),
            Value(at("2024-03-31T12:00:00Z")),
        ),
        // In UTC a day is 24 hours.
        (
            add(at("2024-03-30T12:00:00Z"), "day", 1, "UTC"),
            Value(at("2024-03-31T12:00:00Z")),
        ),
        // A week, and a month clamped to the end of February, in local time.
        (
            add(at("2024-03-27T12:00:00Z"), "week", 1, "Europe/Paris"),
            Value(at("2024-04-03T11:00:00Z")),
        ),
        (
            add(at("2024-01-31T12:00:00Z"), "month", 1, "Europe/Paris"),
            Value(at("2024-02-29T12:00:00Z")),
        ),
        (
            add(at("2024-03-31T10:00:00Z"), "month", -1, "Europe/Paris"),
            Value(at("2024-02-29T11:00:00Z")),
        ),
        // 02:30 CET + 1 day lands in the hour Paris skips (02:00 to 03:00 on 2024-03-31):
        // timelib reads it with the offset before the gap, +01:00, so 03:30 CEST.
        (
            add(at("2024-03-30T01:30:00Z"), "day", 1, "Europe/Paris"),
            Value(at("2024-03-31T01:30:00Z")),
        ),
        // 02:30 lands in the hour Paris repeats (2024-10-27): timelib keeps the daylight
        // saving flag of the start, so from 02:30 CEST the first 02:30 (CEST) ...
        (
            add(at("2024-10-26T00:30:00Z"), "day", 1, "Europe/Paris"),
            Value(at("2024-10-27T00:30:00Z")),
        ),
        // ... and from 02:30 CET (a day later, subtracting) the second one (CET).
        (
            bson!({ "$dateSubtract": { "startDate": at("2024-10-28T01:30:00Z"), "unit": "day", "amount": 1, "timezone": "Europe/Paris" } }),
            Value(at("2024-10-27T01:30:00Z")),
        ),
    ]);
}

#[test]
fn date_diff_counts_local_boundaries() {
    // `dateDiff`: calendar units count boundaries on the local calendar; hours, minutes and
    // seconds count local boundaries corrected by the change of offset.
    let diff = |start: Bson, end: Bson, unit: &str, zone: &str| bson!({ "$dateDiff": { "startDate": start, "endDate": end, "unit": unit, "timezone": zone } });
    check(vec![
        // Paris midnight to midnight over the spring change: 1 day, 23 hours.
        (
            diff(
                at("2024-03-30T23:00:00Z"),
                at("2024-03-31T22:00:00Z"),
                "day",
                "Europe/Paris",
            ),
            Value(Bson::Int64(1)),
        ),
        (
            diff(
                at("2024-03-30T23:00:00Z"),
                at("2024-03-31T22:00:00Z"),
                "hour",
                "Europe/Paris",
            ),
            Value(Bson::Int64(23)),
        ),
        (
            diff(
                at("2024-03-30T23:00:00Z"),
                at("2024-03-31T22:00:00Z"),
                "minute",
                "Europe/Paris",
            ),
            Value(Bson::Int64(23 * 60)),
        ),
        // 23:30Z to 00:30Z crosses midnight in UTC, not in Kolkata (05:00 to 06:00) nor in
        // New York (19:30 to 20:30).
        (
            diff(
                at("2024-03-30T23:30:00Z"),
                at("2024-03-31T00:30:00Z"),
                "day",
                "UTC",
            ),
            Value(Bson::Int64(1)),
        ),
        (
            diff(
                at("2024-03-30T23:30:00Z"),
                at("2024-03-31T00:30:00Z"),
                "day",
                "Asia/Kolkata",
            ),
            Value(Bson::Int64(0)),
        ),
        (
            diff(
                at("2024-03-30T23:30:00Z"),
                at("2024-03-31T00:30:00Z"),
                "day",
                "America/New_York",
            ),
            Value(Bson::Int64(0)),
        ),
        // Saturday 19:30 to Sunday 00:30 in New York crosses a (Sunday) week boundary.
        (
            diff(
                at("2024-03-30T23:30:00Z"),
                at("2024-03-31T04:30:00Z"),
                "week",
                "America/New_York",
            ),
            Value(Bson::Int64(1)),
        ),
    ]);
}

#[test]
fn unknown_zones_are_refused_with_code_40485() {
    check(vec![
        (
            part("$hour", at("2024-01-01T00:00:00Z"), "Mars/Olympus"),
            Code(40485),
        ),
        // MongoDB looks names up as written.
        (
            part("$hour", at("2024-01-01T00:00:00Z"), "europe/paris"),
            Code(40485),
        ),
        (part("$hour", at("2024-01-01T00:00:00Z"), ""), Code(40485)),
        (
            bson!({ "$dateTrunc": { "date": at("2024-01-01T00:00:00Z"), "unit": "day", "timezone": "Nowhere/Special" } }),
            Code(40485),
        ),
        (
            bson!({ "$dateAdd": { "startDate": at("2024-01-01T00:00:00Z"), "unit": "day", "amount": 1, "timezone": "Nowhere/Special" } }),
            Code(40485),
        ),
    ]);
}

#[test]
fn dates_far_from_1970() {
    // -0001-03-01T00:00Z, a Monday (the proleptic Gregorian calendar, year 0 included).
    let minus_one = millis(-62_193_657_600_000);
    // 10000-01-01T00:00Z, a Saturday.
    let ten_thousand = millis(253_402_300_800_000);
    check(vec![
        // One millisecond before the epoch.
        (bson!({ "$year": millis(-1) }), Value(Bson::Int32(1969))),
        (
            bson!({ "$millisecond": millis(-1) }),
            Value(Bson::Int32(999)),
        ),
        (bson!({ "$dayOfWeek": millis(-1) }), Value(Bson::Int32(4))),
        (
            bson!({ "$dateToString": { "date": millis(-1) } }),
            Value(Bson::String("1969-12-31T23:59:59.999Z".into())),
        ),
        // ... is already 1970 in Paris (CET, +01:00, in 1969).
        (
            part("$year", millis(-1), "Europe/Paris"),
            Value(Bson::Int32(1970)),
        ),
        // New York kept summer time in 1960: noon UTC on 1960-07-01 is 08:00 EDT.
        (
            part("$hour", at("1960-07-01T12:00:00Z"), "America/New_York"),
            Value(Bson::Int32(8)),
        ),
        (
            bson!({ "$year": minus_one.clone() }),
            Value(Bson::Int32(-1)),
        ),
        (
            bson!({ "$month": minus_one.clone() }),
            Value(Bson::Int32(3)),
        ),
        (
            bson!({ "$dayOfMonth": minus_one.clone() }),
            Value(Bson::Int32(1)),
        ),
        (
            bson!({ "$dayOfWeek": minus_one.clone() }),
            Value(Bson::Int32(2)),
        ),
        (
            bson!({ "$isoDayOfWeek": minus_one.clone() }),
            Value(Bson::Int32(1)),
        ),
        // A day before it is the last day of February of a common year.
        (
            bson!({ "$dayOfMonth": { "$dateSubtract": { "startDate": minus_one.clone(), "unit": "day", "amount": 1 } } }),
            Value(Bson::Int32(28)),
        ),
        (
            bson!({ "$dateDiff": { "startDate": minus_one, "endDate": millis(0), "unit": "year" } }),
            Value(Bson::Int64(1971)),
        ),
        (
            bson!({ "$year": ten_thousand.clone() }),
            Value(Bson::Int32(10_000)),
        ),
        (
            bson!({ "$dayOfWeek": ten_thousand.clone() }),
            Value(Bson::Int32(7)),
        ),
        (
            bson!({ "$dateAdd": { "startDate": ten_thousand, "unit": "month", "amount": -1 } }),
            Value(at("9999-12-01T00:00:00Z")),
        ),
        // The last and first BSON dates: 292278994-08-17T07:12:55.807Z and
        // -292275055-05-16T16:47:04.192Z.
        (
            bson!({ "$year": millis(i64::MAX) }),
            Value(Bson::Int32(292_278_994)),
        ),
        (
            bson!({ "$dateToString": { "date": millis(i64::MAX), "format": "%m-%d %H:%M:%S.%L" } }),
            Value(Bson::String("08-17 07:12:55.807".into())),
        ),
        (
            bson!({ "$year": millis(i64::MIN) }),
            Value(Bson::Int32(-292_275_055)),
        ),
        (
            bson!({ "$dateToString": { "date": millis(i64::MIN), "format": "%m-%d %H:%M:%S.%L" } }),
            Value(Bson::String("05-16 16:47:04.192".into())),
        ),
        (
            bson!({ "$dateAdd": { "startDate": millis(i64::MAX), "unit": "day", "amount": 1 } }),
            Code(5_166_406),
        ),
    ]);
}
