//! Duties that come back every two weeks (`every other Monday`, `隔周一`; the forms are read in
//! `recur`): which weeks they fall in, how their `recurrence` string says it, and their
//! occurrences.
//!
//! Which Mondays:
//! - A start written on the line wins: `every other Monday from March 2`, `every other Monday
//!   starting 2026-03-02`, `starting on`, `starting from`, `beginning`, `since`; in Chinese
//!   `从3月2日起隔周一`. The occurrences are its first day on one of the duty's weekdays (the
//!   start itself, or the first such day after it: `from` a Wednesday is the Monday after) and
//!   from there every other week; none before it. A start without a year is the latest such
//!   day at most 3 months ahead of today: a start that passed stays where it was (May 4, read
//!   in October, is this year's), one coming soon is ahead (March 2, read in February).
//! - Without a start, which weeks is a guess: the weeks (Monday to Sunday) an even number of
//!   weeks from the week of Monday 1970-01-05, the first Monday of the Unix epoch. It does not
//!   depend on the day the notes are read, so the same line gives the same days on every read,
//!   this year and the next (it is not the parity of the ISO week number, which two weeks in a
//!   row share where a year has 53 weeks, as 2026 has). The first occurrence ahead is the next
//!   such weekday when its week is one of them, else the one a week later: a guess, right half
//!   the time for a line just written, and the reason to write a start, which pins it.
//!
//! The `recurrence` string of such a duty is the weekly cron expression of its days, then
//! ` every 2 weeks from `, then the local date of its first occurrence (`YYYY-MM-DD`, always a
//! day the cron expression falls on): `59 23 * * 1 every 2 weeks from 2026-03-02`, and without
//! a start `0 9 * * 1 every 2 weeks from 1970-01-05`. The cron's occurrences count in the weeks
//! (Monday to Sunday) an even number of weeks from the week of that date, from that date on.
//! The other duties' strings are the cron expression alone.

use super::phrase::Phrase;
use super::resolve::{self, date_of};
use chrono::{DateTime, Datelike, Days, Months, NaiveDate, NaiveTime, Utc, Weekday};
use chrono_tz::Tz;
use croner::Cron;

/// What follows the cron expression in a fortnightly duty's recurrence, before its first day.
const EVERY_OTHER_WEEK: &str = " every 2 weeks from ";
/// The date format of the first day.
const DATE: &str = "%Y-%m-%d";
/// Words that say the next date is the start (`from March 2`, `starting 2026-03-02`).
const STARTS: &[&str] = &["from", "starting", "beginning", "since"];
/// A start without a year is the latest such day at most this many months ahead.
const START_AHEAD_MONTHS: u32 = 3;
/// Bounds the search for an occurrence in an on-week (two steps are enough).
const MAX_STEPS: usize = 4;

/// The Monday that fixes the weeks of a duty written without a start: 1970-01-05.
fn epoch() -> Option<NaiveDate> {
    NaiveDate::from_ymd_opt(1970, 1, 5)
}

/// The start a line writes: its date phrase, and the first word of it (`from`, `starting`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Start {
    pub first: usize,
    pub phrase: Phrase,
}

/// The line has a date that is not its start (an end, `until June 29`; the next one): which
/// weeks it means is not told, so the line is left alone.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct OtherDate;

/// The start among the line's date `phrases`, outside the recurrence's `spans`: none when the
/// line writes none.
pub(super) fn start(words: &[&str], phrases: &[Phrase], spans: &[(usize, usize)]) -> Result<Option<Start>, OtherDate> {
    let mut found = None;
    for phrase in phrases {
        if spans.iter().any(|&(start, end)| start <= phrase.start && phrase.end <= end) {
            continue;
        }
        match (started_at(words, phrase), found) {
            (Some(first), None) => found = Some(Start { first, phrase: *phrase }),
            _ => return Err(OtherDate),
        }
    }
    Ok(found)
}

/// The first word of the start that leads into `phrase` (`starting from March 2`); in Chinese
/// the phrase holds its `from` (`从3月2日起`).
fn started_at(words: &[&str], phrase: &Phrase) -> Option<usize> {
    let is = |k: usize, names: &[&str]| words.get(k).is_some_and(|w| names.iter().any(|n| w.eq_ignore_ascii_case(n)));
    if is(phrase.start, &["from"]) {
        return Some(phrase.start);
    }
    let lead = phrase.start.checked_sub(1).filter(|&k| is(k, STARTS))?;
    let two = lead > 0 && is(lead, &["from"]) && is(lead - 1, &["starting", "beginning"]);
    Some(if two { lead - 1 } else { lead })
}

/// The local date of the first occurrence on `days`: the first such day on or after the
/// written start (read from `today`), else on or after the epoch Monday. `None` when the start
/// is no date, or names a weekday that is not its own.
pub(super) fn first_day(start: Option<&Phrase>, days: &[Weekday], today: NaiveDate) -> Option<NaiveDate> {
    let from = match start {
        None => epoch()?,
        Some(phrase) => {
            let date = match phrase.day.year {
                Some(_) => date_of(phrase.day, today)?,
                None => yearless_start(phrase.day.month, phrase.day.day, today)?,
            };
            if phrase.weekday.is_some_and(|weekday| weekday != date.weekday()) {
                return None;
            }
            date
        }
    };
    (0..7).filter_map(|n| from.checked_add_days(Days::new(n))).find(|day| days.contains(&day.weekday()))
}

/// The latest `month`/`day` at most [`START_AHEAD_MONTHS`] ahead of `today` (within 4 years,
/// for February 29).
fn yearless_start(month: u32, day: u32, today: NaiveDate) -> Option<NaiveDate> {
    let latest = today.checked_add_months(Months::new(START_AHEAD_MONTHS))?;
    (latest.year() - 4..=latest.year())
        .rev()
        .filter(|year| (1..=9999).contains(year))
        .filter_map(|year| NaiveDate::from_ymd_opt(year, month, day))
        .find(|date| *date <= latest)
}

/// The recurrence string of a duty on the weekly `cron` expression, every other week from
/// `first`.
pub(super) fn encode(cron: &str, first: NaiveDate) -> String {
    format!("{cron}{EVERY_OTHER_WEEK}{}", first.format(DATE))
}

/// A recurrence string's cron expression, and its first day when it comes back every other
/// week; `None` when the words after the cron expression are not that.
pub(super) fn decode(expr: &str) -> Option<(&str, Option<NaiveDate>)> {
    match expr.split_once(EVERY_OTHER_WEEK) {
        None => Some((expr, None)),
        Some((cron, first)) => Some((cron, Some(NaiveDate::parse_from_str(first, DATE).ok()?))),
    }
}

/// The first occurrence of `cron` in `tz` at or after `from` (`inclusive`) or strictly after
/// it, on or after `first` and in a week an even number of weeks from `first`'s.
pub(super) fn next(
    cron: &Cron,
    first: NaiveDate,
    from: DateTime<Utc>,
    tz: Tz,
    inclusive: bool,
) -> Option<DateTime<Utc>> {
    let start = resolve::instant(first, NaiveTime::MIN, tz)?;
    let (mut probe, mut inclusive) = if from < start { (start, true) } else { (from, inclusive) };
    let on_week = monday(first)?;
    for _ in 0..MAX_STEPS {
        let at = resolve::next_occurrence(cron, probe, tz, inclusive)?;
        let week = monday(at.with_timezone(&tz).date_naive())?;
        if (week - on_week).num_weeks().rem_euclid(2) == 0 {
            return Some(at);
        }
        probe = resolve::instant(week.checked_add_days(Days::new(7))?, NaiveTime::MIN, tz)?;
        inclusive = true;
    }
    None
}

/// The Monday of `day`'s week.
fn monday(day: NaiveDate) -> Option<NaiveDate> {
    day.checked_sub_days(Days::new(day.weekday().num_days_from_monday().into()))
}
