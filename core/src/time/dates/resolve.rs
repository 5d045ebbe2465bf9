//! From a written day and time to an instant.
//!
//! - A date with a year is that day (years 1 to 9999; anything else is ignored).
//! - A date without a year is the next such day within 12 months of today, unless it is at most
//!   7 days past: then it is that past day (overdue). A day with no such date within that span
//!   (`Feb 29` far from a leap year) is ignored.
//! - The local time is read in the user's zone: a time the spring-forward change skips moves to
//!   the first instant after the gap, a time the fall-back change repeats takes its earlier copy.
//! - A recurrence's occurrences come from its cron expression in the zone (croner keeps the same
//!   gap and overlap rules); a duty that comes back every other week keeps those of its weeks
//!   (see `fortnight`).

use super::fortnight;
use super::phrase::Day;
use chrono::{DateTime, Datelike, Days, Duration, LocalResult, Months, NaiveDate, NaiveTime, TimeZone, Utc};
use chrono_tz::Tz;
use croner::parser::{CronParser, Seconds, Year};
use croner::Cron;

/// A date without a year counts this many days back (overdue).
const PAST_DAYS: u64 = 7;
/// A duty is placed at its next occurrence at or after this many days ago (still due).
const DUE_PAST_DAYS: i64 = 7;
/// A date without a year looks this many months ahead.
const AHEAD_MONTHS: u32 = 12;
/// The longest skipped span searched for the end of a gap (Samoa skipped a whole day in 2011).
const MAX_GAP_MINUTES: i64 = 26 * 60;

/// The end of a day, for a date written without a time.
pub(super) fn end_of_day() -> NaiveTime {
    NaiveTime::from_hms_opt(23, 59, 0).unwrap_or(NaiveTime::MIN)
}

/// The calendar date a written day means, seen from `today`.
pub(super) fn date_of(day: Day, today: NaiveDate) -> Option<NaiveDate> {
    match day.year {
        Some(year) if (1..=9999).contains(&year) => NaiveDate::from_ymd_opt(year, day.month, day.day),
        Some(_) => None,
        None => next_yearless(day.month, day.day, today),
    }
}

fn next_yearless(month: u32, day: u32, today: NaiveDate) -> Option<NaiveDate> {
    let earliest = today.checked_sub_days(Days::new(PAST_DAYS))?;
    let latest = today.checked_add_months(Months::new(AHEAD_MONTHS))?;
    let year = today.year();
    [year.checked_sub(1), Some(year), year.checked_add(1)]
        .into_iter()
        .flatten()
        .filter(|y| (1..=9999).contains(y))
        .filter_map(|y| NaiveDate::from_ymd_opt(y, month, day))
        .filter(|date| *date >= earliest)
        .min()
        .filter(|date| *date <= latest)
}

/// The instant of a local date and time in `tz`.
pub(super) fn instant(date: NaiveDate, time: NaiveTime, tz: Tz) -> Option<DateTime<Utc>> {
    let local = date.and_time(time);
    (0..=MAX_GAP_MINUTES).find_map(|minutes| {
        let probe = local.checked_add_signed(chrono::Duration::minutes(minutes))?;
        match tz.from_local_datetime(&probe) {
            LocalResult::Single(at) => Some(at.with_timezone(&Utc)),
            LocalResult::Ambiguous(first, second) => Some(first.min(second).with_timezone(&Utc)),
            LocalResult::None => None,
        }
    })
}

/// A duty's occurrences, as its `recurrence` string says them: a 5-field cron expression,
/// perhaps every other week from a first day (see `fortnight`).
pub(super) struct Schedule {
    cron: Cron,
    fortnight: Option<NaiveDate>,
}

impl Schedule {
    /// The schedule of a `recurrence` string; `None` when it is none.
    pub fn parse(expr: &str) -> Option<Schedule> {
        let (expr, fortnight) = fortnight::decode(expr)?;
        Some(Schedule { cron: cron(expr)?, fortnight })
    }

    /// The first occurrence in `tz` at or after `from` (`inclusive`) or strictly after it.
    pub fn next(&self, from: DateTime<Utc>, tz: Tz, inclusive: bool) -> Option<DateTime<Utc>> {
        match self.fortnight {
            None => next_occurrence(&self.cron, from, tz, inclusive),
            Some(first) => fortnight::next(&self.cron, first, from, tz, inclusive),
        }
    }

    /// Where a duty is placed: its next occurrence at or after a week before `now`.
    pub fn due(&self, now: DateTime<Utc>, tz: Tz) -> Option<DateTime<Utc>> {
        self.next(now.checked_sub_signed(Duration::days(DUE_PAST_DAYS))?, tz, true)
    }
}

/// A 5-field cron expression, minute first.
fn cron(expr: &str) -> Option<Cron> {
    if expr.split_whitespace().count() != 5 {
        return None;
    }
    CronParser::builder().seconds(Seconds::Disallowed).year(Year::Disallowed).build().parse(expr).ok()
}

/// The first occurrence of `cron` in `tz` at or after `from` (`inclusive`) or strictly after it.
pub(super) fn next_occurrence(cron: &Cron, from: DateTime<Utc>, tz: Tz, inclusive: bool) -> Option<DateTime<Utc>> {
    cron.find_next_occurrence(&from.with_timezone(&tz), inclusive).ok().map(|at| at.with_timezone(&Utc))
}
