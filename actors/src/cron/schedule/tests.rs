use super::*;
use chrono::{NaiveDate, TimeZone};

fn cron(expr: &str, tz: &str) -> Parsed {
    Schedule::Cron { expr: expr.into(), tz: tz.into() }.parse().unwrap()
}

/// Every fire whose local date is `day`, walking the schedule from the day before.
fn fires_on(p: &Parsed, tz: Tz, day: NaiveDate) -> Vec<DateTime<Utc>> {
    let start = tz.from_local_datetime(&(day - Duration::days(1)).and_hms_opt(12, 0, 0).unwrap()).unwrap();
    let mut t = start.with_timezone(&Utc);
    let mut out = Vec::new();
    while let Some(next) = p.next_after(t) {
        let local = next.with_timezone(&tz).date_naive();
        if local > day {
            break;
        }
        if local == day {
            out.push(next);
        }
        t = next;
    }
    out
}

fn utc(y: i32, m: u32, d: u32, h: u32, min: u32) -> DateTime<Utc> {
    Utc.with_ymd_and_hms(y, m, d, h, min, 0).unwrap()
}

fn date(y: i32, m: u32, d: u32) -> NaiveDate {
    NaiveDate::from_ymd_opt(y, m, d).unwrap()
}

#[test]
fn berlin_spring_forward_a_skipped_time_fires_once_after_the_gap() {
    let p = cron("30 2 * * *", "Europe/Berlin");
    // 2026-03-29: 02:00 CET jumps to 03:00 CEST; 02:30 does not exist.
    assert_eq!(fires_on(&p, chrono_tz::Europe::Berlin, date(2026, 3, 29)), vec![utc(2026, 3, 29, 1, 0)]);
    // The next day is back to 02:30 local (CEST).
    assert_eq!(fires_on(&p, chrono_tz::Europe::Berlin, date(2026, 3, 30)), vec![utc(2026, 3, 30, 0, 30)]);
}

#[test]
fn berlin_fall_back_a_repeated_time_fires_once_at_its_first_occurrence() {
    let p = cron("30 2 * * *", "Europe/Berlin");
    // 2026-10-25: 03:00 CEST falls back to 02:00 CET; 02:30 happens twice.
    assert_eq!(fires_on(&p, chrono_tz::Europe::Berlin, date(2026, 10, 25)), vec![utc(2026, 10, 25, 0, 30)]);
    assert_eq!(fires_on(&p, chrono_tz::Europe::Berlin, date(2026, 10, 26)), vec![utc(2026, 10, 26, 1, 30)]);
}

#[test]
fn new_york_spring_forward_a_skipped_time_fires_once_after_the_gap() {
    let p = cron("30 2 * * *", "America/New_York");
    // 2026-03-08: 02:00 EST jumps to 03:00 EDT.
    assert_eq!(fires_on(&p, chrono_tz::America::New_York, date(2026, 3, 8)), vec![utc(2026, 3, 8, 7, 0)]);
    assert_eq!(fires_on(&p, chrono_tz::America::New_York, date(2026, 3, 9)), vec![utc(2026, 3, 9, 6, 30)]);
}

#[test]
fn new_york_fall_back_a_repeated_time_fires_once_at_its_first_occurrence() {
    let p = cron("30 1 * * *", "America/New_York");
    // 2026-11-01: 02:00 EDT falls back to 01:00 EST; 01:30 happens twice.
    assert_eq!(fires_on(&p, chrono_tz::America::New_York, date(2026, 11, 1)), vec![utc(2026, 11, 1, 5, 30)]);
    assert_eq!(fires_on(&p, chrono_tz::America::New_York, date(2026, 11, 2)), vec![utc(2026, 11, 2, 6, 30)]);
}

#[test]
fn an_interval_expression_keeps_elapsed_time_across_the_changes() {
    let p = cron("0 * * * *", "Europe/Berlin");
    // 23 hours on the spring-forward day, 25 on the fall-back day.
    assert_eq!(fires_on(&p, chrono_tz::Europe::Berlin, date(2026, 3, 29)).len(), 23);
    assert_eq!(fires_on(&p, chrono_tz::Europe::Berlin, date(2026, 10, 25)).len(), 25);
}

#[test]
fn five_and_six_fields_are_accepted_and_others_named() {
    let six = cron("15 30 9 * * 1", "UTC");
    assert_eq!(six.next_after(utc(2026, 11, 30, 9, 0)), Some(Utc.with_ymd_and_hms(2026, 11, 30, 9, 30, 15).unwrap()));
    // POSIX weekdays: 0 and 7 are Sunday (2026-12-06 is a Sunday).
    for sunday in ["0 9 * * 0", "0 9 * * 7"] {
        assert_eq!(cron(sunday, "UTC").next_after(utc(2026, 12, 2, 0, 0)), Some(utc(2026, 12, 6, 9, 0)));
    }
    let err = parse_cron("* * * *").unwrap_err().to_string();
    assert!(err.contains("4 fields"), "{err}");
    assert!(parse_cron("61 * * * *").is_err());
    assert!(parse_tz("Mars/Olympus").unwrap_err().to_string().contains("Mars/Olympus"));
}

#[test]
fn every_counts_from_its_anchor_and_at_is_once() {
    let anchor = utc(2026, 12, 2, 9, 0);
    let every = Schedule::Every { every_s: 600, anchor }.parse().unwrap();
    assert_eq!(every.first(anchor), Some(utc(2026, 12, 2, 9, 10)));
    // After a long outage the next slot is the first after now: missed slots are not replayed.
    assert_eq!(every.next_after(utc(2026, 12, 2, 13, 4)), Some(utc(2026, 12, 2, 13, 10)));
    let at = Schedule::At { at: anchor }.parse().unwrap();
    assert_eq!(at.first(anchor + Duration::hours(1)), Some(anchor), "a passed one-shot is still due once");
    assert_eq!(at.next_after(anchor), None);
    assert!(Schedule::Every { every_s: 0, anchor }.parse().is_err());
}

#[test]
fn the_shortest_gap_is_the_interval_or_the_least_gap_of_the_next_slots_and_none_for_a_one_shot() {
    let anchor = utc(2026, 12, 2, 9, 0);
    let gap = |p: Parsed, from: DateTime<Utc>| p.shortest_gap(from).map(|d| d.num_seconds());
    assert_eq!(gap(Schedule::Every { every_s: 600, anchor }.parse().unwrap(), anchor), Some(600));
    assert_eq!(gap(Schedule::At { at: anchor }.parse().unwrap(), anchor), None);
    assert_eq!(gap(cron("*/10 * * * *", "UTC"), anchor), Some(600));
    assert_eq!(gap(cron("0 9,21 * * *", "Europe/Berlin"), anchor), Some(12 * 3600));
    // Weekdays at 9: a day apart, the weekend's three days do not count.
    assert_eq!(gap(cron("0 9 * * 1-5", "Europe/Berlin"), anchor), Some(86_400));
    // Mondays only: a week apart.
    assert_eq!(gap(cron("0 9 * * 1", "UTC"), anchor), Some(7 * 86_400));
}

#[test]
fn a_daily_time_is_a_day_apart_even_across_the_daylight_saving_changes() {
    // The spring-forward day is 23 hours long in Berlin, the fall-back one 25: the daily
    // pattern is still a day apart, so it never looks more frequent than daily.
    for (expr, from) in [("0 9 * * *", utc(2026, 3, 27, 12, 0)), ("30 2 * * *", utc(2026, 10, 23, 12, 0))] {
        let gap = cron(expr, "Europe/Berlin").shortest_gap(from);
        assert_eq!(gap, Some(Duration::days(1)), "{expr}");
    }
}

proptest::proptest! {
    /// Whatever a jobs file says, reading a schedule and asking when it is next never panics
    /// (nor wraps into a tiny step): it answers, or refuses with a reason.
    #[test]
    fn any_every_schedule_is_read_or_refused_without_panicking(
        every_s in proptest::prelude::any::<u64>(),
        anchor_s in -8_000_000_000_000i64..8_000_000_000_000i64,
        after_s in -8_000_000_000_000i64..8_000_000_000_000i64,
    ) {
        let (Some(anchor), Some(after)) = (DateTime::from_timestamp(anchor_s, 0), DateTime::from_timestamp(after_s, 0)) else {
            return Ok(());
        };
        match (Schedule::Every { every_s, anchor }).parse() {
            Ok(p) => {
                proptest::prop_assert!(every_s <= super::MAX_EVERY_S);
                if let Some(next) = p.next_after(after) {
                    proptest::prop_assert!(next > after);
                }
                let _ = p.first(after);
            }
            Err(why) => proptest::prop_assert!(every_s == 0 || why.to_string().contains("over 100 years"), "{}", why),
        }
    }
}
