//! The time-expression reader against tables of inputs, each read in more than one zone from a
//! fixed `now`, with the exact instant, interval or cron expression expected; DST change days;
//! refusals quoting the input; reminders split from their text; and odd inputs that must not panic.

use super::super::duration::{leading_duration, parse_duration};
use super::*;
use chrono::TimeZone;
use chrono_tz::{America::New_York, Asia::Tokyo, Europe::Berlin};
use croner::parser::{CronParser, Seconds, Year};

const MF: DateOrder = DateOrder::MonthFirst;

fn utc(y: i32, mo: u32, d: u32, h: u32, mi: u32) -> DateTime<Utc> {
    Utc.with_ymd_and_hms(y, mo, d, h, mi, 0).unwrap()
}

/// Wednesday 2026-05-13 10:00 UTC: 12:00 in Berlin (CEST), 06:00 in New York (EDT), 19:00 in Tokyo.
fn now() -> DateTime<Utc> {
    utc(2026, 5, 13, 10, 0)
}

/// `2026-05-13T17:00Z`, `every 600s` or `cron 0 9 * * *` (a cron's zone must be `tz`).
fn show(when: &When, tz: Tz) -> String {
    match when {
        When::Once(at) => at.format("%Y-%m-%dT%H:%MZ").to_string(),
        When::Every(interval) => format!("every {}s", interval.num_seconds()),
        When::Cron { expr, tz: zone } if *zone == tz => format!("cron {expr}"),
        When::Cron { expr, tz: zone } => format!("cron {expr} in the wrong zone {zone}"),
    }
}

fn read(input: &str, at: DateTime<Utc>, tz: Tz, order: DateOrder) -> String {
    match parse_when(input, at, tz, order) {
        Ok(when) => show(&when, tz),
        Err(e) => format!("error: {e}"),
    }
}

/// Input, then what it is read as in Europe/Berlin and in America/New_York, from [`now`].
const ACCEPTED: &[(&str, &str, &str)] = &[
    ("in 10m", "2026-05-13T10:10Z", "2026-05-13T10:10Z"),
    ("in 1h30m", "2026-05-13T11:30Z", "2026-05-13T11:30Z"),
    ("in 1h 30m", "2026-05-13T11:30Z", "2026-05-13T11:30Z"),
    ("in 90 minutes", "2026-05-13T11:30Z", "2026-05-13T11:30Z"),
    ("in 2 hours", "2026-05-13T12:00Z", "2026-05-13T12:00Z"),
    ("in 1 min", "2026-05-13T10:01Z", "2026-05-13T10:01Z"),
    ("in 3 days", "2026-05-16T10:00Z", "2026-05-16T10:00Z"),
    ("in 2 weeks", "2026-05-27T10:00Z", "2026-05-27T10:00Z"),
    ("in 1h 30 min", "2026-05-13T11:30Z", "2026-05-13T11:30Z"),
    ("In 1 Hour and 30 Minutes", "2026-05-13T11:30Z", "2026-05-13T11:30Z"),
    ("in an hour", "2026-05-13T11:00Z", "2026-05-13T11:00Z"),
    ("in 1.5h", "2026-05-13T11:30Z", "2026-05-13T11:30Z"),
    ("10m", "2026-05-13T10:10Z", "2026-05-13T10:10Z"),
    ("7pm", "2026-05-13T17:00Z", "2026-05-13T23:00Z"),
    ("at 7pm", "2026-05-13T17:00Z", "2026-05-13T23:00Z"),
    ("at 7 pm", "2026-05-13T17:00Z", "2026-05-13T23:00Z"),
    ("19:00", "2026-05-13T17:00Z", "2026-05-13T23:00Z"),
    ("at 19:00", "2026-05-13T17:00Z", "2026-05-13T23:00Z"),
    ("7:30pm", "2026-05-13T17:30Z", "2026-05-13T23:30Z"),
    ("noon", "2026-05-14T10:00Z", "2026-05-13T16:00Z"),
    ("midnight", "2026-05-13T22:00Z", "2026-05-14T04:00Z"),
    ("at 9", "2026-05-14T07:00Z", "2026-05-13T13:00Z"),
    ("at 11:59", "2026-05-14T09:59Z", "2026-05-13T15:59Z"),
    ("at 11.59", "2026-05-14T09:59Z", "2026-05-13T15:59Z"),
    ("tomorrow at 8.30", "2026-05-14T06:30Z", "2026-05-14T12:30Z"),
    ("tomorrow 8.30", "2026-05-14T06:30Z", "2026-05-14T12:30Z"),
    ("tomorrow 9.15pm", "2026-05-14T19:15Z", "2026-05-15T01:15Z"),
    ("AT 7PM", "2026-05-13T17:00Z", "2026-05-13T23:00Z"),
    ("tomorrow", "2026-05-14T07:00Z", "2026-05-14T13:00Z"),
    ("tomorrow at 9", "2026-05-14T07:00Z", "2026-05-14T13:00Z"),
    ("tomorrow 7pm", "2026-05-14T17:00Z", "2026-05-14T23:00Z"),
    ("today at 18:00", "2026-05-13T16:00Z", "2026-05-13T22:00Z"),
    ("at noon tomorrow", "2026-05-14T10:00Z", "2026-05-14T16:00Z"),
    ("friday", "2026-05-15T07:00Z", "2026-05-15T13:00Z"),
    ("on friday at 5pm", "2026-05-15T15:00Z", "2026-05-15T21:00Z"),
    ("5pm friday", "2026-05-15T15:00Z", "2026-05-15T21:00Z"),
    ("at 5pm on Fri", "2026-05-15T15:00Z", "2026-05-15T21:00Z"),
    ("wednesday", "2026-05-20T07:00Z", "2026-05-13T13:00Z"),
    ("next wednesday", "2026-05-20T07:00Z", "2026-05-20T13:00Z"),
    ("next friday", "2026-05-15T07:00Z", "2026-05-15T13:00Z"),
    ("Monday at 8:15", "2026-05-18T06:15Z", "2026-05-18T12:15Z"),
    ("May 15", "2026-05-15T07:00Z", "2026-05-15T13:00Z"),
    ("15 May", "2026-05-15T07:00Z", "2026-05-15T13:00Z"),
    ("May 15th", "2026-05-15T07:00Z", "2026-05-15T13:00Z"),
    ("the 15th of May", "2026-05-15T07:00Z", "2026-05-15T13:00Z"),
    ("15th of may", "2026-05-15T07:00Z", "2026-05-15T13:00Z"),
    ("2026-05-15", "2026-05-15T07:00Z", "2026-05-15T13:00Z"),
    ("5/15", "2026-05-15T07:00Z", "2026-05-15T13:00Z"),
    ("15.5.", "2026-05-15T07:00Z", "2026-05-15T13:00Z"),
    ("15.05.2026", "2026-05-15T07:00Z", "2026-05-15T13:00Z"),
    ("on May 15 at 3pm", "2026-05-15T13:00Z", "2026-05-15T19:00Z"),
    ("May 15, 2026 at 15:00", "2026-05-15T13:00Z", "2026-05-15T19:00Z"),
    ("2026-05-15 15:00", "2026-05-15T13:00Z", "2026-05-15T19:00Z"),
    ("May 13", "2027-05-13T07:00Z", "2026-05-13T13:00Z"),
    ("Jan 1", "2027-01-01T08:00Z", "2027-01-01T14:00Z"),
    ("2026-12-24 at 18:00", "2026-12-24T17:00Z", "2026-12-24T23:00Z"),
    ("dec 25 at 8am", "2026-12-25T07:00Z", "2026-12-25T13:00Z"),
    ("Feb 29", "2028-02-29T08:00Z", "2028-02-29T14:00Z"),
    ("the 20th", "2026-05-20T07:00Z", "2026-05-20T13:00Z"),
    ("on the 13th", "2026-06-13T07:00Z", "2026-05-13T13:00Z"),
    ("2026-05-15T15:00:00+02:00", "2026-05-15T13:00Z", "2026-05-15T13:00Z"),
    ("2026-05-15T13:00:00Z", "2026-05-15T13:00Z", "2026-05-15T13:00Z"),
    ("2026-05-15T15:00", "2026-05-15T13:00Z", "2026-05-15T19:00Z"),
    ("every day at 9", "cron 0 9 * * *", "cron 0 9 * * *"),
    ("every day", "cron 0 9 * * *", "cron 0 9 * * *"),
    ("every day at 7:30pm", "cron 30 19 * * *", "cron 30 19 * * *"),
    ("daily at 7:30", "cron 30 7 * * *", "cron 30 7 * * *"),
    ("every weekday at 9", "cron 0 9 * * 1-5", "cron 0 9 * * 1-5"),
    ("Every Weekday at 9am", "cron 0 9 * * 1-5", "cron 0 9 * * 1-5"),
    ("every weekend at 10", "cron 0 10 * * 0,6", "cron 0 10 * * 0,6"),
    ("every monday", "cron 0 9 * * 1", "cron 0 9 * * 1"),
    ("every monday and thursday at 18:00", "cron 0 18 * * 1,4", "cron 0 18 * * 1,4"),
    ("every sunday, saturday", "cron 0 9 * * 0,6", "cron 0 9 * * 0,6"),
    ("every month on the 20th", "cron 0 9 20 * *", "cron 0 9 20 * *"),
    ("every month on the 1st at noon", "cron 0 12 1 * *", "cron 0 12 1 * *"),
    ("on the 20th of every month", "cron 0 9 20 * *", "cron 0 9 20 * *"),
    ("every hour", "cron 0 * * * *", "cron 0 * * * *"),
    ("@hourly", "cron 0 * * * *", "cron 0 * * * *"),
    ("@daily", "cron 0 0 * * *", "cron 0 0 * * *"),
    ("@weekly", "cron 0 0 * * 0", "cron 0 0 * * 0"),
    ("@monthly", "cron 0 0 1 * *", "cron 0 0 1 * *"),
    ("0 9 * * 1-5", "cron 0 9 * * 1-5", "cron 0 9 * * 1-5"),
    ("*/15 * * * *", "cron */15 * * * *", "cron */15 * * * *"),
    ("0 30 9 * * MON-FRI", "cron 0 30 9 * * MON-FRI", "cron 0 30 9 * * MON-FRI"),
    ("every 10m", "every 600s", "every 600s"),
    ("every 2 hours", "every 7200s", "every 7200s"),
    ("every 90 minutes", "every 5400s", "every 5400s"),
    ("every 1h30m", "every 5400s", "every 5400s"),
    ("every 2 days", "every 172800s", "every 172800s"),
];

#[test]
fn accepted_inputs_read_the_same_way_in_berlin_and_new_york() {
    assert!(ACCEPTED.len() >= 60);
    let mut wrong = Vec::new();
    for (input, berlin, new_york) in ACCEPTED {
        for (tz, want) in [(Berlin, berlin), (New_York, new_york)] {
            let got = read(input, now(), tz, MF);
            if got != *want {
                wrong.push(format!("{input:?} in {tz}: got {got}, want {want}"));
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn tokyo_and_day_first_dates() {
    let cases = [
        ("7pm", MF, "2026-05-14T10:00Z"),
        ("tomorrow", MF, "2026-05-14T00:00Z"),
        ("friday", MF, "2026-05-15T00:00Z"),
        ("May 15 at 3pm", MF, "2026-05-15T06:00Z"),
        ("every day at 9", MF, "cron 0 9 * * *"),
        ("in 2 hours", MF, "2026-05-13T12:00Z"),
        ("15/5", DateOrder::DayFirst, "2026-05-15T00:00Z"),
        ("15/5 at 18:30", DateOrder::DayFirst, "2026-05-15T09:30Z"),
        ("15.5. 7pm", DateOrder::DayFirst, "2026-05-15T10:00Z"),
    ];
    for (input, order, want) in cases {
        assert_eq!(read(input, now(), Tokyo, order), want, "{input}");
    }
}

/// Zone, now, input, expected: around the DST changes of 2026 (Berlin: March 29 and October 25;
/// New York: March 8 and November 1).
#[test]
fn dst_gaps_fire_after_the_gap_and_repeated_hours_at_their_first_occurrence() {
    let cases = [
        (Berlin, utc(2026, 3, 28, 12, 0), "tomorrow at 2:30", "2026-03-29T01:00Z"),
        (Berlin, utc(2026, 3, 28, 12, 0), "tomorrow at 1:30", "2026-03-29T00:30Z"),
        (Berlin, utc(2026, 3, 28, 12, 0), "tomorrow at 3:30", "2026-03-29T01:30Z"),
        (Berlin, utc(2026, 3, 28, 12, 0), "March 29 at 2:00", "2026-03-29T01:00Z"),
        (Berlin, utc(2026, 3, 29, 0, 30), "at 2:30", "2026-03-29T01:00Z"),
        (Berlin, utc(2026, 3, 29, 0, 30), "in 2 hours", "2026-03-29T02:30Z"),
        (Berlin, utc(2026, 10, 24, 12, 0), "tomorrow at 2:30", "2026-10-25T00:30Z"),
        (Berlin, utc(2026, 10, 24, 12, 0), "tomorrow at 9", "2026-10-25T08:00Z"),
        (Berlin, utc(2026, 10, 25, 0, 45), "at 2:30", "2026-10-26T01:30Z"),
        (Berlin, utc(2026, 10, 24, 23, 0), "in 2 hours", "2026-10-25T01:00Z"),
        (New_York, utc(2026, 3, 7, 17, 0), "tomorrow at 2:30", "2026-03-08T07:00Z"),
        (New_York, utc(2026, 3, 7, 17, 0), "tomorrow at 9", "2026-03-08T13:00Z"),
        (New_York, utc(2026, 3, 8, 6, 0), "in 2 hours", "2026-03-08T08:00Z"),
        (New_York, utc(2026, 11, 1, 4, 0), "at 1:30", "2026-11-01T05:30Z"),
        (New_York, utc(2026, 10, 31, 16, 0), "tomorrow at 1:30", "2026-11-01T05:30Z"),
        (New_York, utc(2026, 10, 31, 16, 0), "sunday at 9", "2026-11-01T14:00Z"),
        (New_York, utc(2026, 11, 1, 4, 0), "in 2 hours", "2026-11-01T06:00Z"),
        (New_York, utc(2026, 11, 1, 5, 45), "at 1:30", "2026-11-02T06:30Z"),
        (Tokyo, utc(2026, 3, 28, 12, 0), "tomorrow at 2:30", "2026-03-28T17:30Z"),
    ];
    for (tz, at, input, want) in cases {
        assert_eq!(read(input, at, tz, MF), want, "{input} in {tz} at {at}");
    }
}

/// Input and the kind of refusal, in Berlin and New York from [`now`].
const REFUSED: &[(&str, &str)] = &[
    ("in 99999999999999d", "range"),
    ("in 99999999999999 days", "range"),
    ("in 99999999999999999999999s", "range"),
    ("every 18446744073709551615s", "range"),
    ("every 200 years", "range"),
    ("in 101 years", "range"),
    ("in 0m", "range"),
    ("in -5m", "range"),
    ("every 0 minutes", "range"),
    ("every 0.5s", "range"),
    ("10000-01-01", "range"),
    ("May 15 10000", "range"),
    ("at 25:99", "unreadable"),
    ("friday at 25:00", "unreadable"),
    ("in ten", "unreadable"),
    ("tomorrow x", "unreadable"),
    ("May 32", "unreadable"),
    ("2/30", "unreadable"),
    ("2027-02-29", "unreadable"),
    ("every", "unreadable"),
    ("every fortnight", "unreadable"),
    ("", "unreadable"),
    ("   ", "unreadable"),
    ("@yearly?", "unreadable"),
    ("61 * * * *", "unreadable"),
    ("next", "unreadable"),
    ("45", "unreadable"),
    ("call mum", "unreadable"),
    ("2020-01-01 at 9", "past"),
    ("today at 5:00", "past"),
    ("2026-05-13T09:00:00Z", "past"),
    ("2020-01-01T00:00:00+00:00", "past"),
];

#[test]
fn refusals_quote_the_input_and_say_why() {
    assert!(REFUSED.len() >= 15);
    for (input, kind) in REFUSED {
        for tz in [Berlin, New_York] {
            let error = parse_when(input, now(), tz, MF).expect_err(input);
            let got = match error {
                TimeError::Unreadable { .. } => "unreadable",
                TimeError::OutOfRange { .. } => "range",
                TimeError::Past { .. } => "past",
            };
            assert_eq!(got, *kind, "{input:?} in {tz}: {error}");
            assert!(error.to_string().contains(&format!("`{input}`")), "{error}");
        }
    }
}

#[test]
fn a_time_already_past_names_when_it_was() {
    let error = parse_when("2020-01-01 at 9", now(), Berlin, MF).unwrap_err();
    assert_eq!(error, TimeError::Past { input: "2020-01-01 at 9".into(), when: "2020-01-01 09:00".into() });
}

#[test]
fn reminders_split_into_time_and_text() {
    let cases = [
        ("in 1h 30m stretch", "2026-05-13T11:30Z", "stretch"),
        ("in 10m 2 pills", "2026-05-13T10:10Z", "2 pills"),
        ("in 90 minutes tea", "2026-05-13T11:30Z", "tea"),
        ("at 7pm call mum", "2026-05-13T17:00Z", "call mum"),
        ("at 7pm, call mum", "2026-05-13T17:00Z", "call mum"),
        ("tomorrow at 9 dentist", "2026-05-14T07:00Z", "dentist"),
        ("on May 15 at 3pm dentist", "2026-05-15T13:00Z", "dentist"),
        ("friday   Call Mum  ", "2026-05-15T07:00Z", "Call Mum"),
        ("tomorrow at the gym do legs", "2026-05-14T07:00Z", "at the gym do legs"),
        ("every weekday at 9 standup", "cron 0 9 * * 1-5", "standup"),
        ("every monday and buy milk", "cron 0 9 * * 1", "and buy milk"),
        ("every 2 hours drink water", "every 7200s", "drink water"),
        ("0 9 * * 1-5 standup", "cron 0 9 * * 1-5", "standup"),
        ("@daily backup", "cron 0 0 * * *", "backup"),
        ("0 9 * * 1-5, standup", "cron 0 9 * * 1-5", "standup"),
        ("in a minute stretch", "2026-05-13T10:01Z", "stretch"),
        ("5 min plank", "2026-05-13T10:05Z", "plank"),
    ];
    for (input, when, text) in cases {
        let (got, rest) = split_when(input, now(), Berlin, MF).expect(input);
        assert_eq!((show(&got, Berlin).as_str(), rest), (when, text), "{input}");
    }
}

#[test]
fn a_reminder_needs_a_time_and_a_text() {
    for input in ["in 10m", "call mum", "at 25:99 x", "", "every", "a day at the zoo", "tomorrow"] {
        let error = split_when(input, now(), Berlin, MF).expect_err(input);
        assert!(matches!(error, TimeError::Unreadable { .. }), "{input}: {error}");
        assert!(error.to_string().contains(&format!("`{input}`")), "{error}");
    }
}

#[test]
fn durations_alone() {
    let minutes = |s: &str| parse_duration(s).map(|d| d.num_minutes());
    for (input, want) in [("10m", 10), ("1h30m", 90), ("1h 30m", 90), ("90 minutes", 90), ("2 hours", 120)] {
        assert_eq!(minutes(input), Ok(want), "{input}");
    }
    for (input, want) in [("1 min", 1), ("1 day", 1440), ("2 weeks", 20_160), ("1h 30 min", 90), ("90min", 90)] {
        assert_eq!(minutes(input), Ok(want), "{input}");
    }
    for input in ["45", "0m", "99999999999999d", "99999999999999 days", "18446744073709551615s", "10m pills", ""] {
        let error = parse_duration(input).expect_err(input);
        assert!(error.to_string().contains(&format!("`{input}`")), "{error}");
    }
    assert!(matches!(parse_duration("45"), Err(TimeError::Unreadable { .. })));
    assert!(matches!(parse_duration("99999999999999 days"), Err(TimeError::OutOfRange { .. })));
}

#[test]
fn a_leading_duration_takes_the_longest_run_of_words() {
    let used = |tokens: &[&str]| leading_duration(tokens).map(|r| r.map(|(d, n)| (d.num_minutes(), n)));
    assert_eq!(used(&["10m", "2", "pills"]), Some(Ok((10, 1))));
    assert_eq!(used(&["1h", "30m", "stretch"]), Some(Ok((90, 2))));
    assert_eq!(used(&["90", "minutes", "tea"]), Some(Ok((90, 2))));
    assert_eq!(used(&["2", "hours"]), Some(Ok((120, 2))));
    assert_eq!(used(&["1h", "30", "min", "and", "x"]), Some(Ok((90, 3))));
    assert_eq!(used(&["45"]), None);
    assert_eq!(used(&["pills"]), None);
    assert!(matches!(used(&["0m"]), Some(Err(_))));
}

#[test]
fn every_cron_expression_it_makes_is_valid() {
    for (input, berlin, _) in ACCEPTED {
        if let Ok(When::Cron { expr, .. }) = parse_when(input, now(), Berlin, MF) {
            let parser = CronParser::builder().seconds(Seconds::Optional).year(Year::Disallowed).build();
            assert!(parser.parse(&expr).is_ok(), "{input}: {berlin}");
        }
    }
}

/// Random concatenations of the vocabulary, in zones with odd changes: each is read (or refused,
/// quoting the input) without a panic.
#[test]
fn odd_inputs_never_panic() {
    const VOCABULARY: &[&str] = &[
        "in",
        "at",
        "on",
        "every",
        "the",
        "of",
        "and",
        "next",
        "today",
        "tomorrow",
        "friday",
        "monday",
        "weekday",
        "month",
        "day",
        "hour",
        "may",
        "feb",
        "29",
        "31st",
        "15th",
        "0",
        "-1",
        "10m",
        "1h30m",
        "90",
        "minutes",
        "99999999999999d",
        "18446744073709551615s",
        "1.5h",
        ".5h",
        "7pm",
        "12am",
        "13pm",
        "19:00",
        "24:00",
        "25:99",
        "noon",
        "midnight",
        "2:30",
        "5/15",
        "2/30",
        "15.5.",
        "9999-12-31",
        "10000-01-01",
        "2026-05-15T15:00:00+02:00",
        "@daily",
        "@",
        "*",
        "*/0",
        "1-5",
        "?",
        "a",
        "an",
        ",",
        ":",
        "µs",
        "ß",
        "😀",
        "",
    ];
    let zones = [Berlin, New_York, Tokyo, chrono_tz::Pacific::Apia, chrono_tz::Australia::Lord_Howe];
    let mut seed: u64 = 0x2545_f491_4f6c_dd1d;
    let mut next = |bound: usize| {
        seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
        (seed >> 33) as usize % bound
    };
    let instants = [now(), utc(2011, 12, 29, 12, 0), utc(2026, 3, 29, 0, 59), utc(9999, 12, 31, 12, 0)];
    for round in 0..600 {
        let words: Vec<&str> = (0..1 + next(5)).map(|_| VOCABULARY[next(VOCABULARY.len())]).collect();
        let input = words.join(if round % 3 == 0 { "" } else { " " });
        let (tz, at) = (zones[next(zones.len())], instants[next(instants.len())]);
        let order = if round % 2 == 0 { MF } else { DateOrder::DayFirst };
        if let Err(error) = parse_when(&input, at, tz, order) {
            assert!(error.to_string().contains(&format!("`{input}`")), "{input}: {error}");
        }
        let _ = split_when(&input, at, tz, order);
        let _ = parse_duration(&input);
    }
}
