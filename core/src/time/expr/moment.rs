//! One instant a person names: a clock time (`7pm`, `at 9`), a day (`today`, `tomorrow`, `day
//! after tomorrow`, `friday`, `next friday`, `friday this week`, `wednesday next week`, `May 15`,
//! `the 15th`), or both in either order (`tomorrow at 9`, `at 3pm on May 15`), read in the
//! user's zone; `by` or `due` before it (`by friday`) names the same instant.
//!
//! A day without a clock time is at 09:00. A clock time without a day is the next one ahead:
//! today, or tomorrow when it has passed (or is now). `today` at a passed time, and a date with
//! a year that has passed, are refused, never fired at once.

use super::super::{words, DateOrder};
use super::wall::{exactly, first_ahead};
use super::{out_of_range, unreadable, Found, TimeError};
use chrono::{DateTime, Datelike, Days, Month, Months, NaiveDate, NaiveTime, Utc, Weekday};
use chrono_tz::Tz;

/// The clock time of a day named without one.
pub(super) const MORNING: NaiveTime = match NaiveTime::from_hms_opt(9, 0, 0) {
    Some(time) => time,
    None => NaiveTime::MIN,
};

/// The last year a date may name.
const LAST_YEAR: i32 = 9999;

/// A day as a person names it, before a clock time is put to it.
#[derive(Debug, Clone, Copy)]
enum Day {
    /// `today`, `tomorrow`, `day after tomorrow`, `friday this week`, `wednesday next week`.
    FromToday(words::FromToday),
    /// `friday`: the next friday whose time is still ahead, which can be today.
    Weekday(Weekday),
    /// `next friday`: the first friday after today, never today itself (said on a Thursday it is
    /// the next day; said on a Friday, a week later).
    NextWeekday(Weekday),
    /// `May 15`, `2026-05-15`: with a year, that very day; without, the next May 15 ahead.
    Date { year: Option<i32>, month: u32, day: u32 },
    /// `the 15th`: the next 15th of a month that is still ahead.
    OfMonth(u32),
}

/// The instant named at the start of `tokens`, and how many tokens it took. A deadline names
/// the same instant: `by` or `due` before it (`by friday`), `due` after it (Chinese `周五前`).
pub(super) fn one_shot(tokens: &[&str], now: DateTime<Utc>, tz: Tz, order: DateOrder) -> Found<DateTime<Utc>> {
    let lead = usize::from(matches!(tokens.first(), Some(&("by" | "due"))));
    let Some((at, used)) = named(&tokens[lead..], now, tz, order)? else { return Ok(None) };
    let used = lead + used;
    let due_after = tokens.get(used) == Some(&"due");
    Ok(Some((at, used + usize::from(due_after))))
}

/// A day and/or a clock time, in either order.
fn named(tokens: &[&str], now: DateTime<Utc>, tz: Tz, order: DateOrder) -> Found<DateTime<Utc>> {
    if let Some((day, used)) = day(tokens, order)? {
        let (time, timed) = clock_after_day(&tokens[used..])?.unwrap_or((MORNING, 0));
        return Ok(Some((resolve(day, time, now, tz)?, used + timed)));
    }
    let Some((time, used)) = clock_at(tokens)? else { return Ok(None) };
    match day(&tokens[used..], order)? {
        Some((day, dated)) => Ok(Some((resolve(day, time, now, tz)?, used + dated))),
        None => Ok(Some((next_clock(time, now, tz)?, used))),
    }
}

/// A clock time at the start of `tokens`: `7pm`, `19:00`, `noon`, or after `at` also a bare hour
/// (`at 9`). `at` before something that starts like a number but is no clock time (`at 25:99`)
/// is refused; before anything else (`at the station`) it is not a time.
pub(super) fn clock_at(tokens: &[&str]) -> Found<NaiveTime> {
    let ["at", rest @ ..] = tokens else { return Ok(words::clock(tokens, false)) };
    // `at 8.30` is `at 8:30` (after `at` only: `15.05` elsewhere may be a date).
    let colon = rest.first().and_then(|w| dotted(w));
    let mut said: Vec<&str> = rest.to_vec();
    if let (Some(first), Some(colon)) = (said.first_mut(), colon.as_deref()) {
        *first = colon;
    }
    match (words::clock(&said, true), rest.first()) {
        (Some((time, used)), _) => Ok(Some((time, used + 1))),
        (None, Some(word)) if word.starts_with(|c: char| c.is_ascii_digit()) => {
            Err(unreadable(format!("`{word}` is not a clock time")))
        }
        (None, _) => Ok(None),
    }
}

/// A clock time after a day: as [`clock_at`], and `8.30` without `at` too (after a day it
/// cannot be a date): `tomorrow 8.30`, `friday 9.15pm`.
fn clock_after_day(tokens: &[&str]) -> Found<NaiveTime> {
    if let Some(found) = clock_at(tokens)? {
        return Ok(Some(found));
    }
    let Some(colon) = tokens.first().and_then(|w| dotted(w)) else { return Ok(None) };
    let mut said: Vec<&str> = tokens.to_vec();
    said[0] = &colon;
    Ok(words::clock(&said, false))
}

/// `8.30` as `8:30`: one or two digits, a dot, two digits, perhaps `am` or `pm` (`9.15pm`).
fn dotted(word: &str) -> Option<String> {
    let (h, rest) = word.split_once('.')?;
    let (m, tail) = rest.split_at_checked(2)?;
    let digits =
        |s: &str, n: std::ops::RangeInclusive<usize>| n.contains(&s.len()) && s.bytes().all(|b| b.is_ascii_digit());
    let tail_ok = matches!(tail.to_ascii_lowercase().as_str(), "" | "am" | "pm");
    (digits(h, 1..=2) && digits(m, 2..=2) && tail_ok).then(|| format!("{h}:{m}{tail}"))
}

/// A day at the start of `tokens`, after an optional `on`.
fn day(tokens: &[&str], order: DateOrder) -> Found<Day> {
    let said_on = usize::from(tokens.first() == Some(&"on"));
    let rest = &tokens[said_on..];
    if let Some((named, used)) = words::from_today(rest) {
        return Ok(Some((Day::FromToday(named), said_on + used)));
    }
    let found = match rest {
        ["next", name, ..] => words::weekday(name).map(|w| (Day::NextWeekday(w), 2)),
        _ => match rest.first().and_then(|name| words::weekday(name)) {
            Some(w) => Some((Day::Weekday(w), 1)),
            None => match date(rest, order)? {
                Some(((year, month, day), used)) => Some((Day::Date { year, month, day }, used)),
                None => of_month(rest),
            },
        },
    };
    Ok(found.map(|(day, used)| (day, said_on + used)))
}

/// `the 15th` (not followed by `of`: that is a date).
fn of_month(tokens: &[&str]) -> Option<(Day, usize)> {
    let ["the", nth, rest @ ..] = tokens else { return None };
    if rest.first() == Some(&"of") {
        return None;
    }
    words::ordinal(nth).map(|day| (Day::OfMonth(day), 2))
}

/// A date at the start of `tokens`: `2026-05-15`, `5/15`, `15.5.`, `May 15`, `15 May`, `May
/// 15th`, `15th of May`, `the 15th of May`; a word-form date may end in a year (`May 15 2026`).
/// Refused when the day does not exist (`May 32`, `2/30`) or the year is past 9999.
fn date(tokens: &[&str], order: DateOrder) -> Found<(Option<i32>, u32, u32)> {
    let Some(first) = tokens.first() else { return Ok(None) };
    if has_long_year(first) {
        return Err(out_of_range(format!("the last year is {LAST_YEAR}")));
    }
    if let Some((year, month, day)) = words::numeric_date(first, order) {
        return Ok(Some((checked(year, month, day)?, 1)));
    }
    let Some(((month, day), used)) = word_date(tokens) else {
        return match tokens {
            [m, d, ..] if words::month(m).is_some() && d.starts_with(|c: char| c.is_ascii_digit()) => {
                Err(unreadable(format!("`{d}` is not a day of the month")))
            }
            _ => Ok(None),
        };
    };
    let (year, used) = match year(tokens.get(used).copied())? {
        Some(year) => (Some(year), used + 1),
        None => (None, used),
    };
    Ok(Some((checked(year, month, day)?, used)))
}

/// `May 15`, `15 May`, `May 15th`, `15th of May`, `the 15th of May`: (month, day) and the tokens
/// taken.
fn word_date(tokens: &[&str]) -> Option<((u32, u32), usize)> {
    let month_day = |m: &str, d: &str| Some((words::month(m)?, words::ordinal(d)?));
    match tokens {
        ["the", d, "of", m, ..] => month_day(m, d).map(|md| (md, 4)),
        [d, "of", m, ..] => month_day(m, d).map(|md| (md, 3)),
        [a, b, ..] => month_day(a, b).or_else(|| month_day(b, a)).map(|md| (md, 2)),
        _ => None,
    }
}

/// A year after a word-form date: four digits or more (`2026`; `10000` is out of range).
fn year(token: Option<&str>) -> Result<Option<i32>, TimeError> {
    match token {
        Some(t) if t.len() >= 4 && t.bytes().all(|b| b.is_ascii_digit()) => {
            t.parse().map(Some).map_err(|_| out_of_range(format!("the last year is {LAST_YEAR}")))
        }
        _ => Ok(None),
    }
}

/// `10000-01-01`: an ISO date whose year has more than four digits.
fn has_long_year(token: &str) -> bool {
    token.split_once('-').is_some_and(|(year, rest)| {
        year.len() > 4 && year.bytes().all(|b| b.is_ascii_digit()) && rest.starts_with(|c: char| c.is_ascii_digit())
    })
}

/// The date, when that day exists (in some year, for a date without one) and its year is at
/// most 9999.
fn checked(year: Option<i32>, month: u32, day: u32) -> Result<(Option<i32>, u32, u32), TimeError> {
    let month_name = u8::try_from(month).ok().and_then(|m| Month::try_from(m).ok()).map_or("that month", |m| m.name());
    match year {
        Some(y) if y > LAST_YEAR => Err(out_of_range(format!("the last year is {LAST_YEAR}"))),
        Some(y) if NaiveDate::from_ymd_opt(y, month, day).is_none() => {
            Err(unreadable(format!("{month_name} {y} has no day {day}")))
        }
        None if NaiveDate::from_ymd_opt(2000, month, day).is_none() => {
            Err(unreadable(format!("{month_name} has no day {day}")))
        }
        _ => Ok((year, month, day)),
    }
}

/// The instant of `time` on `day`, counted from the user's today.
fn resolve(day: Day, time: NaiveTime, now: DateTime<Utc>, tz: Tz) -> Result<DateTime<Utc>, TimeError> {
    let today = now.with_timezone(&tz).date_naive();
    match day {
        Day::FromToday(named) => {
            exactly(named.date(today).ok_or_else(|| out_of_range("too far ahead"))?, time, now, tz)
        }
        Day::Weekday(w) => first_ahead(days_after(today, 0).filter(|d| d.weekday() == w), time, now, tz),
        Day::NextWeekday(w) => first_ahead(days_after(today, 1).filter(|d| d.weekday() == w).take(1), time, now, tz),
        Day::Date { year: Some(year), month, day } => match NaiveDate::from_ymd_opt(year, month, day) {
            Some(date) => exactly(date, time, now, tz),
            None => Err(unreadable("no such day")),
        },
        Day::Date { year: None, month, day } => {
            let years =
                (today.year()..=today.year().saturating_add(8)).filter_map(|y| NaiveDate::from_ymd_opt(y, month, day));
            first_ahead(years, time, now, tz)
        }
        Day::OfMonth(day) => {
            let first = today.with_day(1).ok_or_else(|| out_of_range("no such day"))?;
            let months = (0..=24).filter_map(|n| first.checked_add_months(Months::new(n))?.with_day(day));
            first_ahead(months, time, now, tz)
        }
    }
}

/// The next `time` ahead: today, else tomorrow (or the day after, past a skipped day).
fn next_clock(time: NaiveTime, now: DateTime<Utc>, tz: Tz) -> Result<DateTime<Utc>, TimeError> {
    let today = now.with_timezone(&tz).date_naive();
    first_ahead(days_after(today, 0).take(3), time, now, tz)
}

/// The eight days from `today` plus `from` days on (a week and one more).
fn days_after(today: NaiveDate, from: u64) -> impl Iterator<Item = NaiveDate> {
    (from..from + 8).filter_map(move |n| later(today, n))
}

fn later(day: NaiveDate, days: u64) -> Option<NaiveDate> {
    day.checked_add_days(Days::new(days))
}
