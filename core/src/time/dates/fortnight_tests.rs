//! Duties that come back every other week, in English and Chinese: one row per form, with its
//! first `at` and its occurrences over six weeks; the weeks stay the same whatever day the
//! notes are read, and a start off the duty's weekday moves to the next such day.

use super::*;
use chrono::TimeZone;
use chrono_tz::Asia::Shanghai;
use chrono_tz::Europe::Berlin;

const MF: DateOrder = DateOrder::MonthFirst;

fn utc(y: i32, mo: u32, d: u32, h: u32, mi: u32) -> DateTime<Utc> {
    Utc.with_ymd_and_hms(y, mo, d, h, mi, 0).unwrap()
}

/// Sunday 10 May 2026, noon UTC (as in `tests`).
fn sunday() -> DateTime<Utc> {
    utc(2026, 5, 10, 12, 0)
}

/// Wednesday 13 May 2026, 18:00 in Shanghai (as in `zh_tests`).
fn wednesday() -> DateTime<Utc> {
    utc(2026, 5, 13, 10, 0)
}

/// Six weeks from Monday 4 May 2026, local midnight: on Mondays 05-04 05-11 05-18 05-25 06-01 06-08.
fn six_weeks(tz: Tz) -> (DateTime<Utc>, DateTime<Utc>) {
    let from = tz.with_ymd_and_hms(2026, 5, 4, 0, 0, 0).unwrap().with_timezone(&Utc);
    (from, from + Duration::weeks(6))
}

/// `title | kind | first at (local, all day) | the local days of its occurrences over six
/// weeks | recurrence`, or `none`.
fn read(line: &str, now: DateTime<Utc>, tz: Tz) -> String {
    let found = find_dates(line, now, tz, MF);
    let f = match found.as_slice() {
        [] => return "none".into(),
        [f] => f,
        more => return format!("{} dates: {more:?}", more.len()),
    };
    let (from, to) = six_weeks(tz);
    let every = occurrences(f, from, to, tz);
    let time = |at: &DateTime<Utc>| at.with_timezone(&tz).time();
    assert!(every.iter().all(|at| time(at) == time(&f.at)), "{line}: {every:?} at the time of {}", f.at);
    let days: Vec<String> = every.iter().map(|at| at.with_timezone(&tz).format("%m-%d").to_string()).collect();
    let at = f.at.with_timezone(&tz).format("%m-%d %H:%M");
    let all_day = if f.all_day { " all day" } else { "" };
    let recurrence = f.recurrence.as_deref().unwrap_or("-");
    format!("{} | {:?} | {at}{all_day} | {} | {recurrence}", f.title, f.kind, days.join(" "))
}

/// A line, and the duty read from it: its title, first `at` (local), the days of its
/// occurrences over six weeks, its recurrence.
type Row = (&'static str, &'static str, &'static str, &'static str, &'static str);

/// Every other Monday in the weeks of 1970-01-05, at the end of the day.
const MONDAYS: &str = "59 23 * * 1 every 2 weeks from 1970-01-05";

fn wrong(rows: &[Row], now: DateTime<Utc>, tz: Tz) -> Vec<String> {
    rows.iter()
        .map(|(line, title, at, days, every)| (line, format!("{title} | Duty | {at} | {days} | {every}")))
        .map(|(line, want)| (line, read(line, now, tz), want))
        .filter(|(_, got, want)| got != want)
        .map(|(line, got, want)| format!("{line}:\n  got  {got}\n  want {want}"))
        .collect()
}

/// Read on Sunday 10 May 2026 in Berlin. Without a start the weeks are those of 1970-01-05:
/// 05-11, 05-25, 06-08.
const ENGLISH: &[Row] = &[
    ("Yoga every other Monday", "Yoga", "05-11 23:59 all day", "05-11 05-25 06-08", MONDAYS),
    ("Yoga every second Monday", "Yoga", "05-11 23:59 all day", "05-11 05-25 06-08", MONDAYS),
    ("Yoga every 2 weeks on Monday", "Yoga", "05-11 23:59 all day", "05-11 05-25 06-08", MONDAYS),
    ("Yoga every two weeks on Monday", "Yoga", "05-11 23:59 all day", "05-11 05-25 06-08", MONDAYS),
    ("Yoga every other week on Monday", "Yoga", "05-11 23:59 all day", "05-11 05-25 06-08", MONDAYS),
    ("Yoga fortnightly on Monday", "Yoga", "05-11 23:59 all day", "05-11 05-25 06-08", MONDAYS),
    ("Yoga every fortnight on Mondays", "Yoga", "05-11 23:59 all day", "05-11 05-25 06-08", MONDAYS),
    (
        "Yoga every other Monday at 9am",
        "Yoga",
        "05-11 09:00",
        "05-11 05-25 06-08",
        "0 9 * * 1 every 2 weeks from 1970-01-05",
    ),
    (
        "at 6pm every other Monday: call grandma",
        "call grandma",
        "05-11 18:00",
        "05-11 05-25 06-08",
        "0 18 * * 1 every 2 weeks from 1970-01-05",
    ),
    (
        "Yoga fortnightly on Mondays at 7:30am",
        "Yoga",
        "05-11 07:30",
        "05-11 05-25 06-08",
        "30 7 * * 1 every 2 weeks from 1970-01-05",
    ),
    (
        "Yoga every other Monday from March 2",
        "Yoga",
        "05-11 23:59 all day",
        "05-11 05-25 06-08",
        "59 23 * * 1 every 2 weeks from 2026-03-02",
    ),
    (
        "Yoga every other Monday starting 2026-03-02",
        "Yoga",
        "05-11 23:59 all day",
        "05-11 05-25 06-08",
        "59 23 * * 1 every 2 weeks from 2026-03-02",
    ),
    (
        "Yoga every other Monday from March 2 at 9am",
        "Yoga",
        "05-11 09:00",
        "05-11 05-25 06-08",
        "0 9 * * 1 every 2 weeks from 2026-03-02",
    ),
    (
        "Yoga every other Monday from May 4",
        "Yoga",
        "05-04 23:59 all day",
        "05-04 05-18 06-01",
        "59 23 * * 1 every 2 weeks from 2026-05-04",
    ),
    (
        "Yoga every 2 weeks on Monday starting on May 4 at 9am",
        "Yoga",
        "05-04 09:00",
        "05-04 05-18 06-01",
        "0 9 * * 1 every 2 weeks from 2026-05-04",
    ),
    (
        "Yoga every other Monday starting from 2026-05-18",
        "Yoga",
        "05-18 23:59 all day",
        "05-18 06-01",
        "59 23 * * 1 every 2 weeks from 2026-05-18",
    ),
    (
        "From May 4: yoga every other Monday",
        "yoga",
        "05-04 23:59 all day",
        "05-04 05-18 06-01",
        "59 23 * * 1 every 2 weeks from 2026-05-04",
    ),
    (
        "Yoga every other Monday from Wednesday, May 6",
        "Yoga",
        "05-11 23:59 all day",
        "05-11 05-25 06-08",
        "59 23 * * 1 every 2 weeks from 2026-05-11",
    ),
    (
        "Swim every other Tuesday and Thursday",
        "Swim",
        "05-12 23:59 all day",
        "05-12 05-14 05-26 05-28 06-09 06-11",
        "59 23 * * 2,4 every 2 weeks from 1970-01-06",
    ),
];

#[test]
fn every_other_week_in_english_is_a_duty_every_two_weeks() {
    let wrong = wrong(ENGLISH, sunday(), Berlin);
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// Read on Wednesday 13 May 2026 in Shanghai.
const CHINESE: &[Row] = &[
    ("隔周一 倒垃圾", "倒垃圾", "05-11 23:59 all day", "05-11 05-25 06-08", MONDAYS),
    ("隔周周一 倒垃圾", "倒垃圾", "05-11 23:59 all day", "05-11 05-25 06-08", MONDAYS),
    ("每两周一 倒垃圾", "倒垃圾", "05-11 23:59 all day", "05-11 05-25 06-08", MONDAYS),
    ("每两周周一 倒垃圾", "倒垃圾", "05-11 23:59 all day", "05-11 05-25 06-08", MONDAYS),
    ("每隔一周周一 倒垃圾", "倒垃圾", "05-11 23:59 all day", "05-11 05-25 06-08", MONDAYS),
    ("双周周一 倒垃圾", "倒垃圾", "05-11 23:59 all day", "05-11 05-25 06-08", MONDAYS),
    ("隔周一上午9点 游泳", "游泳", "05-11 09:00", "05-11 05-25 06-08", "0 9 * * 1 every 2 weeks from 1970-01-05"),
    (
        "从3月2日起隔周一 游泳",
        "游泳",
        "05-11 23:59 all day",
        "05-11 05-25 06-08",
        "59 23 * * 1 every 2 weeks from 2026-03-02",
    ),
    (
        "从5月4日起隔周一 游泳",
        "游泳",
        "05-18 23:59 all day",
        "05-04 05-18 06-01",
        "59 23 * * 1 every 2 weeks from 2026-05-04",
    ),
    (
        "从5月6日起隔周一 游泳",
        "游泳",
        "05-11 23:59 all day",
        "05-11 05-25 06-08",
        "59 23 * * 1 every 2 weeks from 2026-05-11",
    ),
    (
        "隔周二、四 羽毛球",
        "羽毛球",
        "05-12 23:59 all day",
        "05-12 05-14 05-26 05-28 06-09 06-11",
        "59 23 * * 2,4 every 2 weeks from 1970-01-06",
    ),
];

#[test]
fn every_other_week_in_chinese_is_a_duty_every_two_weeks() {
    let wrong = wrong(CHINESE, wednesday(), Shanghai);
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn other_every_few_weeks_forms_and_lines_with_another_date_are_left_alone() {
    let english = [
        "Yoga every other day",
        "Yoga every 3 weeks on Monday",
        "Yoga every three weeks on Monday",
        "Yoga every other month",
        "Yoga every other weekday",
        "Yoga every 2 weeks",
        "Yoga every second Tuesday of the month",
        "Yoga every other Monday in June",
        "Yoga every other Monday until June 29",
        "Yoga every other Monday, next May 11",
        "Yoga fortnightly on Monday until June 29",
        "Yoga every two weeks, next on May 12",
        "Yoga every fortnight, next on May 12",
        "Yoga every other Monday from Tuesday, May 6",
        "Yoga every other Monday from May 4 and from May 11",
    ];
    for line in english {
        assert_eq!(read(line, sunday(), Berlin), "none", "{line}");
    }
    for line in ["隔周一 12月20日 体检", "每三周一 体检", "每隔两周周一 体检", "每两周一次 打扫", "隔周 开会"]
    {
        assert_eq!(read(line, wednesday(), Shanghai), "none", "{line}");
    }
    let once = read("Fortnightly review due May 20", sunday(), Berlin);
    assert_eq!(once, "Fortnightly review | Deadline | 05-20 23:59 all day | 05-20 | -", "a single date stays one");
}

/// Without a start, the weeks are those of 1970-01-05: read on any day, the line gives the same
/// days, and its `at` is always one of them (never the Monday of a week between), also when
/// the same text is read again later the same day.
#[test]
fn without_a_start_the_weeks_are_the_same_whatever_day_the_notes_are_read() {
    let line = "Yoga every other Monday at 9am";
    let (from, to) = (utc(2026, 4, 1, 0, 0), utc(2027, 3, 1, 0, 0));
    let first = &find_dates(line, sunday(), Berlin, MF)[0];
    let expected = occurrences(first, from, to, Berlin);
    assert_eq!(expected.len(), 23);
    let days: Vec<NaiveDate> = expected.iter().map(|at| at.with_timezone(&Berlin).date_naive()).collect();
    assert!(days.windows(2).all(|pair| pair[1] - pair[0] == Duration::weeks(2)), "across 2026's 53rd week too");
    for day in 0..60 {
        let now = utc(2026, 5, 1, 12, 0) + Duration::days(day);
        let found = &find_dates(line, now, Berlin, MF)[0];
        assert_eq!(found.recurrence, first.recurrence, "{now}");
        assert_eq!(occurrences(found, from, to, Berlin), expected, "read on {now}");
        let due = expected.iter().find(|at| **at >= now - Duration::days(7));
        assert_eq!(Some(&found.at), due, "read on {now}");
    }
    let later = utc(2027, 1, 20, 12, 0);
    assert_eq!(occurrences(&find_dates(line, later, Berlin, MF)[0], from, to, Berlin), expected, "a year on");
    let (early, late) = (utc(2026, 5, 18, 6, 0), utc(2026, 5, 18, 12, 0));
    assert_eq!(find_dates(line, early, Berlin, MF)[0].at, utc(2026, 5, 11, 7, 0), "09:00 on 05-11, a week ago");
    assert_eq!(find_dates(line, late, Berlin, MF)[0].at, utc(2026, 5, 25, 7, 0), "not 05-18, the week between");
}

/// A start that is not the duty's weekday moves to the first such day after it, in English
/// and Chinese; a start without a year is the latest one at most 3 months ahead.
#[test]
fn a_start_off_the_weekday_moves_to_the_next_such_day() {
    let starts = [
        ("Yoga every other Monday from Wednesday, May 6", "2026-05-11"),
        ("Yoga every other Monday starting 2026-05-02", "2026-05-04"),
        ("Yoga every other Monday from May 11", "2026-05-11"),
        ("Yoga every other Friday from 2026-05-11", "2026-05-15"),
        ("Yoga every other Monday from August 1", "2026-08-03"),
        ("Yoga every other Monday from September 1", "2025-09-01"),
    ];
    for (line, first) in starts {
        let found = &find_dates(line, sunday(), Berlin, MF)[0];
        let recurrence = found.recurrence.as_deref().unwrap_or_default();
        assert!(recurrence.ends_with(&format!("every 2 weeks from {first}")), "{line}: {recurrence}");
        let day = NaiveDate::parse_from_str(first, "%Y-%m-%d").unwrap();
        let start = Berlin.from_local_datetime(&day.and_hms_opt(0, 0, 0).unwrap()).unwrap().with_timezone(&Utc);
        let every = occurrences(found, start - Duration::weeks(4), start + Duration::weeks(5), Berlin);
        let days: Vec<NaiveDate> = every.iter().map(|at| at.with_timezone(&Berlin).date_naive()).collect();
        let weeks = [0, 2, 4].map(|w| day + Duration::weeks(w));
        assert_eq!(days, weeks, "{line}: nothing before its start, then every two weeks");
    }
    let zh = &find_dates("从5月6日起隔周一 游泳", wednesday(), Shanghai, MF)[0];
    assert_eq!(zh.recurrence.as_deref(), Some("59 23 * * 1 every 2 weeks from 2026-05-11"));
}

#[test]
fn every_other_week_at_the_ends_of_the_calendar_never_panics() {
    let text = "Yoga every other Monday\nYoga every other Sunday from Dec 31 at 23:30\n从3月2日起隔周一 游泳\n\
        Yoga every other Monday starting 9999-12-27\nYoga fortnightly on Mondays starting 0001-01-01";
    let edges = [
        sunday(),
        Utc.with_ymd_and_hms(9999, 12, 31, 23, 0, 0).unwrap(),
        Utc.with_ymd_and_hms(1, 1, 1, 0, 0, 0).unwrap(),
    ];
    for now in edges {
        for tz in [Berlin, Shanghai, chrono_tz::Pacific::Apia, chrono_tz::UTC] {
            for found in find_dates(text, now, tz, MF) {
                let every = occurrences(&found, now - Duration::days(400), now + Duration::days(400), tz);
                assert!(every.windows(2).all(|pair| pair[1] - pair[0] >= Duration::days(13)), "{found:?}");
            }
        }
    }
}
