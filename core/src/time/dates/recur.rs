//! Recurring obligations, read as a 5-field cron expression in the user's zone:
//!
//! - `on the 20th of every month`, `the 20th of each month`, `every month on the 20th`,
//!   `monthly on the 20th`, `every 20th of the month`: `59 23 20 * *`;
//! - `every Monday`, `every week on Monday`: `59 23 * * 1`; `every Monday and Thursday`:
//!   `59 23 * * 1,4`; `every weekday`: `59 23 * * 1-5`;
//! - every other week: `every other Monday`, `every second Monday`, `every other week on
//!   Monday`, `every 2 weeks on Monday`, `every two weeks on Monday`, `every fortnight on
//!   Monday`, `fortnightly on Monday` (and a list of days, `every other Tuesday and Thursday`),
//!   with the start the line may write (`from March 2`, `starting 2026-03-02`): `59 23 * * 1
//!   every 2 weeks from 2026-03-02` (see `fortnight` for which weeks, and the string). A line
//!   that writes another date beside it (`every other Monday until June 29`) is left alone, as
//!   is `every second Monday of the month`;
//! - `every day`, `each day`: `59 23 * * *`;
//! - `every year on May 15`, `May 15 every year`: `59 23 15 5 *`.
//!
//! A clock time after the phrase or just before it sets the minute and hour (`every Monday at
//! 9am` is `0 9 * * 1`); without one the obligation is due at the end of its day (23:59). A day
//! a month lacks (the 31st in April) has no occurrence that month, as in cron.
//!
//! A line that says `every` or `each` before a number, a weekday or a calendar word (`every other
//! day`, `every 3 weeks`, `every two months`, `every morning`), or says every other week in a
//! way not read here, but is none of these is a recurrence this cannot express: [`unreadable`]
//! tells the finder to leave it alone rather than date it once.

use super::super::words::{month, ordinal, weekday};
use super::fortnight;
use super::line::is_one_of;
use super::phrase::{leads_before, time_after, time_before, Phrase};
use chrono::{NaiveDate, NaiveTime, Timelike, Weekday};

const EVERY: &[&str] = &["every", "each"];
const WORKDAYS: [Weekday; 5] = [Weekday::Mon, Weekday::Tue, Weekday::Wed, Weekday::Thu, Weekday::Fri];
/// After `every`, words that make the line a recurrence.
const CALENDAR: &[&str] = &[
    "other", "day", "days", "week", "weeks", "month", "months", "year", "years", "weekday", "weekdays", "weekend",
    "weekends", "morning", "evening", "night", "first", "second", "third", "fourth", "last",
];
/// After `every`, numbers in words that make the line a recurrence (`every two days`).
const NUMBERS: &[&str] = &["two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve"];
/// After `every`, the words of every other week (`every other Monday`, `every other week on
/// Monday`); `week`, `weeks` or `on` may follow.
const OTHER: &[&str] = &["other", "second", "fortnight"];
/// After `every`, two weeks: `every 2 weeks on Monday`.
const TWO: &[&str] = &["2", "two"];

/// How often the obligation comes back; `Fortnightly` on its days every other week, from the
/// start the line wrote (see `fortnight`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Cadence {
    Daily,
    Monthly(u32),
    Weekly(Vec<Weekday>),
    Fortnightly(Vec<Weekday>, Option<Phrase>),
    Yearly { month: u32, day: u32 },
}

/// A recurring phrase: the words it covers (one or two spans) and its cadence and time.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Recurrence {
    pub spans: Vec<(usize, usize)>,
    pub cadence: Cadence,
    pub time: Option<NaiveTime>,
}

impl Recurrence {
    /// The 5-field cron expression of its occurrences (23:59 without a written time).
    pub fn cron(&self) -> String {
        let (minute, hour) = self.time.map_or((59, 23), |t| (t.minute(), t.hour()));
        match &self.cadence {
            Cadence::Daily => format!("{minute} {hour} * * *"),
            Cadence::Weekly(days) if *days == WORKDAYS => format!("{minute} {hour} * * 1-5"),
            Cadence::Monthly(day) => format!("{minute} {hour} {day} * *"),
            Cadence::Weekly(days) | Cadence::Fortnightly(days, _) => {
                let days: Vec<String> = days.iter().map(|d| d.num_days_from_sunday().to_string()).collect();
                format!("{minute} {hour} * * {}", days.join(","))
            }
            Cadence::Yearly { month, day } => format!("{minute} {hour} {day} {month} *"),
        }
    }

    /// The duty's `recurrence` string, its start read from `today`: the cron expression, and
    /// for every other week its first day (see `fortnight`). `None` when the start is no date.
    pub fn expression(&self, today: NaiveDate) -> Option<String> {
        match &self.cadence {
            Cadence::Fortnightly(days, start) => {
                fortnight::first_day(start.as_ref(), days, today).map(|first| fortnight::encode(&self.cron(), first))
            }
            _ => Some(self.cron()),
        }
    }
}

/// The recurring phrase in `words`, if one is there. `phrases` are the line's date phrases
/// (for `every year on May 15`).
pub(super) fn recurrence(words: &[&str], phrases: &[Phrase]) -> Option<Recurrence> {
    (0..words.len()).find_map(|e| {
        let word = words[e];
        if word.eq_ignore_ascii_case("monthly") {
            return on_the_day(words, e + 1).and_then(|(day, end)| with_time(words, e, end, Cadence::Monthly(day)));
        }
        if word.eq_ignore_ascii_case("fortnightly") {
            return fortnightly(words, e, phrases);
        }
        if !is_one_of(word, EVERY) {
            return None;
        }
        daily(words, e)
            .or_else(|| monthly(words, e))
            .or_else(|| weekly(words, e))
            .or_else(|| fortnightly(words, e, phrases))
            .or_else(|| yearly(words, e, phrases))
    })
}

/// Whether a line says `every`/`each` before a number, weekday or calendar word, or says every
/// other week on a day.
pub(super) fn unreadable(words: &[&str]) -> bool {
    let every = words.windows(2).any(|pair| {
        let next = pair[1];
        is_one_of(pair[0], EVERY)
            && (next.starts_with(|c: char| c.is_ascii_digit())
                || [CALENDAR, OTHER, NUMBERS].iter().any(|names| is_one_of(next, names))
                || weekday(next).is_some())
    });
    every || (0..words.len()).any(|e| other_weeks(words, e).is_some())
}

/// `every day`, `every weekday`.
fn daily(words: &[&str], e: usize) -> Option<Recurrence> {
    let next = words.get(e + 1)?;
    if next.eq_ignore_ascii_case("day") {
        with_time(words, e, e + 2, Cadence::Daily)
    } else if next.eq_ignore_ascii_case("weekday") {
        with_time(words, e, e + 2, Cadence::Weekly(WORKDAYS.to_vec()))
    } else {
        None
    }
}

/// `every month on the 20th`, `every 1st of the month`, `the 20th of every month`.
fn monthly(words: &[&str], e: usize) -> Option<Recurrence> {
    let word = |k: usize| words.get(k).copied().unwrap_or("");
    if word(e + 1).eq_ignore_ascii_case("month") {
        if let Some((day, end)) = on_the_day(words, e + 2) {
            return with_time(words, e, end, Cadence::Monthly(day));
        }
    }
    if let Some(day) = ordinal(word(e + 1)) {
        let of_the_month = word(e + 2).eq_ignore_ascii_case("of")
            && is_one_of(word(e + 3), &["the", "every", "each"])
            && word(e + 4).eq_ignore_ascii_case("month");
        return if of_the_month { with_time(words, e, e + 5, Cadence::Monthly(day)) } else { None };
    }
    let day_before = e >= 2 && word(e - 1).eq_ignore_ascii_case("of") && word(e + 1).eq_ignore_ascii_case("month");
    let day = ordinal(word(e.checked_sub(2)?)).filter(|_| day_before)?;
    with_time(words, e - 2, e + 2, Cadence::Monthly(day))
}

/// `on the 20th`, `the 20th`, `20th` at `k`: (the day, the word after it).
fn on_the_day(words: &[&str], k: usize) -> Option<(u32, usize)> {
    let mut k = k;
    for lead in ["on", "the"] {
        if words.get(k).is_some_and(|w| w.eq_ignore_ascii_case(lead)) {
            k += 1;
        }
    }
    ordinal(words.get(k)?).map(|day| (day, k + 1))
}

/// `every Monday`, `every Monday and Thursday`, `every week on Monday`.
fn weekly(words: &[&str], e: usize) -> Option<Recurrence> {
    let week_on = words.get(e + 1).is_some_and(|w| w.eq_ignore_ascii_case("week"))
        && words.get(e + 2).is_some_and(|w| w.eq_ignore_ascii_case("on"));
    let (days, k) = weekdays(words, if week_on { e + 3 } else { e + 1 });
    if days.is_empty() {
        return None;
    }
    with_time(words, e, k, Cadence::Weekly(days))
}

/// `Monday`, `Monday and Thursday`, `Mon Wed Fri` at `k`: the days (none when there is none)
/// and the word after them.
fn weekdays(words: &[&str], k: usize) -> (Vec<Weekday>, usize) {
    let mut k = k;
    let mut days = Vec::new();
    while let Some(day) = words.get(k).and_then(|w| weekday(w)) {
        if !days.contains(&day) {
            days.push(day);
        }
        k += 1;
        let joined = words.get(k).is_some_and(|w| is_one_of(w, &["and", "&"]));
        if joined && words.get(k + 1).and_then(|w| weekday(w)).is_some() {
            k += 1;
        }
    }
    (days, k)
}

/// Every other week on the days at `e` (see [`other_weeks`]), with the start the line writes;
/// none when it writes another date.
fn fortnightly(words: &[&str], e: usize, phrases: &[Phrase]) -> Option<Recurrence> {
    let (days, end) = other_weeks(words, e)?;
    let mut found = with_time(words, e, end, Cadence::Fortnightly(days.clone(), None))?;
    let start = fortnight::start(words, phrases, &found.spans).ok()?;
    if let Some(start) = start {
        found.spans.push((start.first, start.phrase.end));
        found.spans.sort_unstable();
        found.time = found.time.or(start.phrase.time);
    }
    found.cadence = Cadence::Fortnightly(days, start.map(|s| s.phrase));
    Some(found)
}

/// `every other Monday`, `every second Monday`, `every other week on Monday`, `every 2 weeks on
/// Monday`, `every two weeks on Monday`, `every fortnight on Monday`, `fortnightly on Monday`
/// at `e`: the days and the word after them. Not `every second Monday of the month`.
fn other_weeks(words: &[&str], e: usize) -> Option<(Vec<Weekday>, usize)> {
    let word = |k: usize| words.get(k).copied().unwrap_or("");
    let said = |k: usize, name: &str| word(k).eq_ignore_ascii_case(name);
    let after = if said(e, "fortnightly") {
        e + 1
    } else if !is_one_of(word(e), EVERY) {
        return None;
    } else if is_one_of(word(e + 1), OTHER) {
        e + 2 + usize::from(said(e + 2, "week"))
    } else if is_one_of(word(e + 1), TWO) && said(e + 2, "weeks") {
        e + 3
    } else {
        return None;
    };
    let (days, end) = weekdays(words, after + usize::from(said(after, "on")));
    let of_the_month = is_one_of(word(end), &["of", "in"])
        && (month(word(end + 1)).is_some()
            || said(end + 1, "month")
            || (is_one_of(word(end + 1), &["the", "each", "every"]) && said(end + 2, "month")));
    (!days.is_empty() && !of_the_month).then_some((days, end))
}

/// `every year on May 15`, `May 15 every year`: the line's one date phrase without a year.
fn yearly(words: &[&str], e: usize, phrases: &[Phrase]) -> Option<Recurrence> {
    if !words.get(e + 1).is_some_and(|w| w.eq_ignore_ascii_case("year")) {
        return None;
    }
    let [phrase] = phrases else {
        return None;
    };
    let (month, day) = (phrase.day.month, phrase.day.day);
    let exists = phrase.day.year.is_none() && NaiveDate::from_ymd_opt(2000, month, day).is_some();
    if !exists || phrase.weekday.is_some() {
        return None;
    }
    let mut spans = vec![(phrase.start, phrase.end), (e, e + 2)];
    spans.sort_unstable();
    Some(Recurrence { spans, cadence: Cadence::Yearly { month, day }, time: phrase.time })
}

/// The phrase `start..end` with its clock time and leading words.
fn with_time(words: &[&str], start: usize, end: usize, cadence: Cadence) -> Option<Recurrence> {
    let (time, start, end) = match time_after(words, end) {
        Some((time, after)) => (Some(time), start, after),
        None => match time_before(words, start, 0) {
            Some((time, first)) => (Some(time), first, end),
            None => (None, start, end),
        },
    };
    let (start, _) = leads_before(words, start, 0);
    Some(Recurrence { spans: vec![(start, end)], cadence, time })
}
