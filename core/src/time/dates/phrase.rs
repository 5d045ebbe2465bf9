//! Date phrases among a line's words (their cores), left to right, none overlapping.
//!
//! A phrase is a date, then what belongs to it:
//! - the date: a numeric word (see `numeric`), `May 15`, `May 15th`, `15 May`, `15th of May`,
//!   with an optional four-digit year after it (`May 15, 2027`, `15 May 2027`);
//! - a weekday just before it (`Friday, May 15`), checked against the date later;
//! - a clock time just after it (`3pm`, `at 3pm`, `15:00`, `um 15:00`, `à 10h`, `at 9`), or else
//!   just before it (`3pm May 15`, `at 9 on May 15`); the end of a range after it (`3pm to 5pm`)
//!   goes with it, the date keeps the start;
//! - the small words that lead into it (`on`, `at`, `the`, `due`, `by`, `deadline`, `am`, `um`,
//!   `le`, `el`, `il`, `à`, `au`, `den`, `op`). `due`, `by` and `deadline` there make it keyed:
//!   the line's deadline. In a line with Chinese, the `from` of `从3月2日起` (from March 2) is
//!   taken with it too.
//!
//! `may` and `march` are English words too: before them (`15 May`) only the capitalized month
//! counts, so `chapter 3 may be late` holds no date.

use super::super::words::{clock, from_today, month, ordinal, weekday};
use super::super::DateOrder;
use super::line::is_one_of;
use super::numeric::numeric;
use chrono::{Datelike, Days, NaiveDate, NaiveTime, Weekday};

/// Words leading into a date, taken out of the title with it.
const LEADS: &[&str] =
    &["on", "at", "the", "due", "by", "deadline", "am", "um", "le", "el", "il", "à", "au", "den", "op"];
/// Leading words that make the date the line's deadline.
const KEYS: &[&str] = &["due", "by", "deadline"];
/// Words that may stand between a date and its clock time.
const TIME_LEADS: &[&str] = &["at", "um", "à", "a", "@", "from", "ab", "-", "–"];
/// After these a bare hour (`at 9`) is a clock time.
const BARE_HOUR_LEADS: &[&str] = &["at", "um", "à", "@"];
/// Words between the two times of a range (`3pm to 5pm`).
const RANGE_JOINTS: &[&str] = &["to", "until", "till", "-", "–", "bis", "à"];
/// Words that may follow a clock time and belong to it (`15 Uhr`).
const TIME_TAILS: &[&str] = &["uhr", "o'clock", "h"];

/// A calendar day as written: the year when one was written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Day {
    pub year: Option<i32>,
    pub month: u32,
    pub day: u32,
}

/// One date phrase: the words `start..end` it covers and what they say.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Phrase {
    pub start: usize,
    pub end: usize,
    pub day: Day,
    pub weekday: Option<Weekday>,
    pub time: Option<NaiveTime>,
    /// Led by `due`, `by` or `deadline`.
    pub keyed: bool,
}

/// Every date phrase in `words`, left to right. `from_today` is today when the line is written
/// in Chinese: days named from it (`明天`, `下周三`, a day of the week alone) are read too.
pub(super) fn phrases(words: &[&str], order: DateOrder, from_today: Option<NaiveDate>) -> Vec<Phrase> {
    let mut found = Vec::new();
    let mut floor = 0;
    let mut i = 0;
    while i < words.len() {
        let named = || from_today.and_then(|today| named_day(words, i, today));
        match date_at(words, i, floor, order).or_else(named) {
            Some((start, day, end)) => {
                let phrase = extend(words, start, end, floor, day, from_today.is_some());
                floor = phrase.end;
                i = phrase.end;
                found.push(phrase);
            }
            None => i += 1,
        }
    }
    found
}

/// A date whose number is the word at `i`: (first word, the day, the word after it).
fn date_at(words: &[&str], i: usize, floor: usize, order: DateOrder) -> Option<(usize, Day, usize)> {
    if !words[i].starts_with(|c: char| c.is_ascii_digit()) {
        return None;
    }
    if let Some(day) = numeric(words, i, order) {
        return Some((i, day, i + 1));
    }
    let day = ordinal(words[i])?;
    let (start, month, end) = month_before(words, i, floor)
        .map(|m| (i - 1, m, i + 1))
        .or_else(|| month_after(words, i).map(|m| (i, m, i + 2)))
        .or_else(|| month_of(words, i).map(|m| (i, m, i + 3)))?;
    let year = year_at(words, end);
    let end = if year.is_some() { end + 1 } else { end };
    Some((start, Day { year, month, day }, end))
}

/// A day named from `today` at `i` (`today`, `tomorrow`, `wednesday next week`), or a day of the
/// week alone (the next one, today included): (first word, the day, the word after it).
fn named_day(words: &[&str], i: usize, today: NaiveDate) -> Option<(usize, Day, usize)> {
    let (date, used) = match from_today(&words[i..]) {
        Some((named, used)) => (named.date(today)?, used),
        None => {
            let weekday = weekday(words[i])?;
            let ahead = (7 + weekday.num_days_from_monday() - today.weekday().num_days_from_monday()) % 7;
            (today.checked_add_days(Days::new(ahead.into()))?, 1)
        }
    };
    Some((i, Day { year: Some(date.year()), month: date.month(), day: date.day() }, i + used))
}

/// A day of the week just after the date, perhaps in brackets (`12月20日（周日）`): the day and
/// the word after it; none (and `end`) when there is none.
fn weekday_after(words: &[&str], end: usize) -> (Option<Weekday>, usize) {
    let named = (end..words.len().min(end + 2)).find(|&k| words[k].chars().any(char::is_alphanumeric));
    match named.and_then(|k| Some((weekday(words[k])?, k + 1))) {
        Some((day, after)) => (Some(day), after),
        None => (None, end),
    }
}

/// `May 15`: the month name before the day at `i`.
fn month_before(words: &[&str], i: usize, floor: usize) -> Option<u32> {
    let before = i.checked_sub(1).filter(|&b| b >= floor)?;
    month(words[before])
}

/// `15 May`: the month name after the day at `i`; `may` and `march` only capitalized.
fn month_after(words: &[&str], i: usize) -> Option<u32> {
    let word = words.get(i + 1)?;
    let common = is_one_of(word, &["may", "march"]) && word.starts_with(|c: char| c.is_ascii_lowercase());
    if common {
        return None;
    }
    month(word)
}

/// `15th of May`.
fn month_of(words: &[&str], i: usize) -> Option<u32> {
    let of = words.get(i + 1)?;
    if !of.eq_ignore_ascii_case("of") {
        return None;
    }
    month(words.get(i + 2)?)
}

/// A four-digit year (`2027`, `2027.`) at `j`.
fn year_at(words: &[&str], j: usize) -> Option<i32> {
    let word = words.get(j)?.trim_end_matches('.');
    (word.len() == 4 && word.bytes().all(|b| b.is_ascii_digit())).then(|| word.parse().ok()).flatten()
}

/// The date's weekday, clock time and leading words; in Chinese the weekday may follow the
/// date, `due` after it (`周五前`, before Friday) makes it keyed, and `from` before it
/// (`从3月2日起`) is taken.
fn extend(words: &[&str], start: usize, end: usize, floor: usize, day: Day, chinese: bool) -> Phrase {
    let (after, end) = if chinese { weekday_after(words, end) } else { (None, end) };
    let (mut time, end) = match time_after(words, end) {
        Some((time, after)) => (Some(time), after),
        None => (None, end),
    };
    let mut start = start;
    let before = start.checked_sub(1).filter(|&b| b >= floor).and_then(|b| weekday(words[b]));
    if before.is_some() {
        start -= 1;
    }
    let weekday = before.or(after);
    if time.is_none() {
        if let Some((before, first)) = time_before(words, start, floor) {
            time = Some(before);
            start = first;
        }
    }
    let (start, keyed) = leads_before(words, start, floor);
    // `从3月2日起` (from March 2) is one Chinese word: its `from` goes with the date.
    let from = chinese && start > floor && words[start - 1].eq_ignore_ascii_case("from");
    let start = start - usize::from(from);
    let due_after = chinese && words.get(end).is_some_and(|w| w.eq_ignore_ascii_case("due"));
    let end = end + usize::from(due_after);
    Phrase { start, end, day, weekday, time, keyed: keyed || due_after }
}

/// A clock time at `j`, perhaps after a leading word (`at 3pm`): (the time, the word after it).
pub(super) fn time_after(words: &[&str], j: usize) -> Option<(NaiveTime, usize)> {
    let rest = words.get(j..)?;
    let (time, used) = clock(rest, false).or_else(|| {
        let lead = rest.first()?;
        if !is_one_of(lead, TIME_LEADS) {
            return None;
        }
        let bare = is_one_of(lead, BARE_HOUR_LEADS);
        clock(rest.get(1..)?, bare).map(|(time, used)| (time, used + 1))
    })?;
    Some((time, range_end(words, after_tail(words, j + used))))
}

/// Past a word that belongs to the clock time before it (`15 Uhr`).
fn after_tail(words: &[&str], end: usize) -> usize {
    let tail = words.get(end).is_some_and(|w| is_one_of(w, TIME_TAILS));
    if tail {
        end + 1
    } else {
        end
    }
}

/// Past the end of a time range (`3pm to 5pm`, `15:00 - 16:00`): the date keeps its start.
fn range_end(words: &[&str], end: usize) -> usize {
    let Some(joint) = words.get(end) else {
        return end;
    };
    if !is_one_of(joint, RANGE_JOINTS) {
        return end;
    }
    let bare = words.get(end + 1..).and_then(|rest| clock(rest, true));
    match bare {
        Some((_, used)) => after_tail(words, end + 1 + used),
        None => end,
    }
}

/// A clock time ending just before `start` or before an `on` there (`3pm May 15`,
/// `at 9 on May 15`): (the time, its first word).
pub(super) fn time_before(words: &[&str], start: usize, floor: usize) -> Option<(NaiveTime, usize)> {
    let on = start.checked_sub(1).filter(|&b| b >= floor).is_some_and(|b| words[b].eq_ignore_ascii_case("on"));
    let end = if on { start - 1 } else { start };
    (1..=2).find_map(|len| {
        let first = end.checked_sub(len).filter(|&f| f >= floor)?;
        let bare = first.checked_sub(1).filter(|&b| b >= floor).is_some_and(|b| is_one_of(words[b], BARE_HOUR_LEADS));
        match clock(&words[first..end], bare) {
            Some((time, used)) if used == len => Some((time, first)),
            _ => None,
        }
    })
}

/// The leading words before `start`: (the first of them, whether one is `due`/`by`/`deadline`).
pub(super) fn leads_before(words: &[&str], start: usize, floor: usize) -> (usize, bool) {
    let mut start = start;
    let mut keyed = false;
    while start > floor && is_one_of(words[start - 1], LEADS) {
        keyed |= is_one_of(words[start - 1], KEYS);
        start -= 1;
    }
    (start, keyed)
}
