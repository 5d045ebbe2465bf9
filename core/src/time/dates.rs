//! The dates written in plain notes (the user's MEMORY.md), one a line, in whatever words or
//! language surround them:
//!
//! ```text
//! - [ ] Submit the tax return due: 2026-03-02 17:00 !high     Deadline, 17:00, high
//! Dentist on May 15 at 3pm                                     Event
//! Zahnarzt am 20.05. um 15:00                                  Event
//! 5/20 checkup for Mia                                         Event, end of May 20
//! Report by Friday, June 5                                     Deadline
//! - [x] Book flights due 2026-02-20                            Deadline, done
//! pay the nanny on the 20th of every month                     Duty, `59 23 20 * *`
//! Yoga every other Monday from March 2                         Duty, every 2 weeks from Mar 2
//! ```
//!
//! The rules:
//! - A date is a numeric word (ISO `2026-05-15`; `5/15` month first, or day first by
//!   [`DateOrder`]; `15.05.` day first) or a month name with a day (`May 15`, `15 May`,
//!   `15th of May`), an optional year after it, a weekday before it and a clock time after (or
//!   just before) it. A numeric date without a year needs evidence that it is not a fraction
//!   or a decimal: a zero-padded part (`05/06`, `15.05.`), a `/` day above 12 (`5/20`), a date
//!   word before it (`on`, `due`, `am`, `le`, a weekday) or a clock time after it; never before
//!   `of` or a measure (`1/2 cup`, `3/4 of the budget`); `24/7` never.
//! - A date without a year is the next such day within 12 months, unless it is at most 7 days
//!   past (then it is that day, overdue). A date without a time is due at the end of its day,
//!   23:59 local, and is `all_day`. Times are read in the user's zone and returned in UTC.
//! - A line with a checkbox (`- [ ]`, `* [ ]`, `[ ]`), or the word `due` or `deadline`, or `by`
//!   just before its date, is a [`DateKind::Deadline`]; a recurring line (`on the 20th of every
//!   month`, `every Monday`) is a [`DateKind::Duty`] with its cron expression, due at each
//!   occurrence; any other dated line is a [`DateKind::Event`].
//! - Every other week (`every other Monday`, `every 2 weeks on Monday`, `fortnightly on Monday`,
//!   `隔周一`) is a Duty too: its recurrence is the weekly cron expression followed by ` every 2
//!   weeks from ` and the date of its first occurrence (`59 23 * * 1 every 2 weeks from
//!   2026-03-02`), which [`occurrences`] reads. A start written on the line (`from March 2`,
//!   `starting 2026-03-02`, `从3月2日起`) fixes the weeks; without one they are a guess, the
//!   same on every read (the weeks an even number of weeks from that of 1970-01-05, see
//!   `fortnight`), and writing a start pins them.
//! - `[x]` or a title struck through (`~~...~~`) is done: still listed, with `done`.
//!   `!high`, `!low` (and `!medium`) set the importance, medium by default.
//! - A line that cannot be dated is left alone, never guessed into a wrong day: impossible days
//!   (`2/30`, `May 32`), a weekday that is not the date's (`Monday, June 5, 2026`), two different
//!   dates with none of them keyed by `due`/`by`/`deadline`, a recurrence that is not read
//!   (`every other day`, `every 3 weeks`, `every second Monday of the month`, `every other Monday
//!   until June 29`), relative words (`tomorrow`, `next Friday`: relative to when?).
//! - Chinese is read as the same words (see `zh`): `12月20日 体检`, `下周三下午3点 牙医`,
//!   `每月20号 付保姆工资`, `隔周一 倒垃圾`, `从3月2日起隔周一 游泳`, and a numeric date beside
//!   Chinese (`作业；12/15 运动会`) needs no other evidence. In a line with Chinese in it, days
//!   named from today (`明天`, `后天`, `今晚`, `下周三`, `本周五`) and a day of the week alone
//!   (`周四`: the next one, today included) are read from today, as the notes are read each day;
//!   a day of the week may follow the date (`12月20日（周日）`) and is checked against it.
//!
//! A 1 MB file (20,000 lines) is read on every tick: one byte scan skips a line unless it has a
//! digit beside a date separator, a digit and a month name, or the word `every`, `each` or
//! `fortnightly`; the others are read word by word, once.

mod cache;
mod fortnight;
#[cfg(test)]
mod fortnight_tests;
mod line;
mod numeric;
mod phrase;
mod recur;
mod resolve;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod zh_tests;

use super::{zh, DateOrder};
use chrono::{DateTime, Datelike, Duration, NaiveDate, Utc};
use chrono_tz::Tz;
use line::Line;
use phrase::Phrase;
use serde::{Deserialize, Serialize};

/// What a dated line is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DateKind {
    /// Something to have done by then: a checkbox, `due`, `by`, `deadline`.
    Deadline,
    /// Something that happens then.
    Event,
    /// A recurring obligation ("pay the nanny on the 20th of every month").
    Duty,
}

/// How much a dated line matters, by its marker: `!high`, `!low`, else medium.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Importance {
    Low,
    Medium,
    High,
}

/// One dated line of the notes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FoundDate {
    /// 1-based line number in the text.
    pub line: usize,
    /// The line's words without the date, time, markers and checkbox.
    pub title: String,
    /// When: a date without a time is the end of that local day (23:59); for a Duty, its next
    /// occurrence at or after a week before now.
    pub at: DateTime<Utc>,
    /// No time was written.
    pub all_day: bool,
    pub kind: DateKind,
    /// `[x]`, or the title struck through.
    pub done: bool,
    pub importance: Importance,
    /// Duty only: the 5-field cron expression of its occurrences in the user's zone; for one
    /// that comes back every other week, followed by ` every 2 weeks from YYYY-MM-DD`, the
    /// local date of its first occurrence (`59 23 * * 1 every 2 weeks from 2026-03-02`).
    pub recurrence: Option<String>,
    /// How long before it the line asks to hear of it (`a week before`, `提前3天`); in JSON,
    /// `lead_s` seconds. A line that asks for none has the one its kind needs by the user's
    /// [`Ladder`](super::Ladder), applied by whoever reads the deadlines (`lead_for` says the kind).
    #[serde(default, skip_serializing_if = "Option::is_none", rename = "lead_s", with = "super::lead::seconds")]
    pub lead: Option<Duration>,
    /// The kind the lead is for, when the line asked for none (`payment`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lead_for: Option<super::Need>,
}

impl FoundDate {
    /// The lead its line asks for, else the one its kind gets by `ladder`.
    pub fn lead_by(&self, ladder: &super::Ladder) -> Option<Duration> {
        self.lead.or_else(|| self.lead_for.and_then(|need| ladder.lead(need)))
    }
}

/// The most occurrences [`occurrences`] lists (a weekly duty over 190 years).
const MAX_OCCURRENCES: usize = 10_000;

/// Every dated line of `text`, in line order. `now` places the dates written without a year
/// and the next occurrence of a duty; `tz` is the zone the notes are written in.
pub fn find_dates(text: &str, now: DateTime<Utc>, tz: Tz, order: DateOrder) -> Vec<FoundDate> {
    read_dates(text, None, now, tz, order)
}

/// [`find_dates`] of a text the caller shares: the same `Arc` read again the same day costs
/// no comparison of its bytes.
pub fn find_dates_shared(text: &std::sync::Arc<str>, now: DateTime<Utc>, tz: Tz, order: DateOrder) -> Vec<FoundDate> {
    read_dates(text, Some(text), now, tz, order)
}

fn read_dates(
    text: &str,
    shared: Option<&std::sync::Arc<str>>,
    now: DateTime<Utc>,
    tz: Tz,
    order: DateOrder,
) -> Vec<FoundDate> {
    cache::read_through(text, shared, now, tz, order, || {
        let reader = Reader { now, today: now.with_timezone(&tz).date_naive(), tz, order };
        let mut notes = KeptNotes::default();
        text.lines()
            .enumerate()
            .filter(|(_, line)| !notes.inside(line) && may_hold_date(line))
            .filter_map(|(index, line)| reader.read(line, index + 1))
            .collect()
    })
}

/// Where the lines of the sections whose dates are not the user's plans are: `## Notes from
/// Raven` (the facts the agent kept, each dated when it was kept) and the proactivity
/// preferences (`## Proactivity preferences`, `## 提醒偏好`, `## 主动提醒偏好`: `每天最多：4条` is a
/// cap, not a daily duty). A section runs from its heading line to the next heading of level 1
/// or 2 (told by the line alone: what is read here is only dates).
#[derive(Default)]
struct KeptNotes {
    inside: bool,
}

/// The titles of the sections that are not read for dates (matched case-insensitively).
const UNREAD_SECTIONS: [&str; 4] = ["notes from raven", "proactivity preferences", "提醒偏好", "主动提醒偏好"];

impl KeptNotes {
    /// Whether `line` (taken in file order) is in one of the sections.
    fn inside(&mut self, line: &str) -> bool {
        if line.starts_with("# ") || line.starts_with("## ") {
            let title = line.strip_prefix("## ").map(|t| t.trim().to_lowercase());
            self.inside = title.is_some_and(|t| UNREAD_SECTIONS.contains(&t.as_str()));
        }
        self.inside
    }
}

/// Every occurrence of a Duty within `[from, to)`, or the single date of the others when it
/// falls there; at most 10,000.
pub fn occurrences(found: &FoundDate, from: DateTime<Utc>, to: DateTime<Utc>, tz: Tz) -> Vec<DateTime<Utc>> {
    let Some(expr) = &found.recurrence else {
        return if (from..to).contains(&found.at) { vec![found.at] } else { Vec::new() };
    };
    let Some(schedule) = resolve::Schedule::parse(expr) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let mut next = schedule.next(from, tz, true);
    while let Some(at) = next.filter(|at| *at < to && out.len() < MAX_OCCURRENCES) {
        out.push(at);
        next = schedule.next(at, tz, false);
    }
    out
}

/// A byte scan for what every date needs: the word `every`, `each` or `fortnightly`, a Chinese
/// date or time character, or a digit with either a
/// date separator between digits (`5/20`, `15.05.`, `2026-05-15`) or a word that opens with a
/// month's three letters (`May 15`, `monthly on the 1st`). Prose without a digit costs one pass.
fn may_hold_date(line: &str) -> bool {
    let bytes = line.as_bytes();
    if says_every(bytes) || (!line.is_ascii() && line.contains(CHINESE_DATE_CHARS)) {
        return true;
    }
    bytes.iter().any(u8::is_ascii_digit) && (separated_digits(bytes) || names_a_month(bytes))
}

/// The characters every Chinese date or time word has one of (`月`, `号`, `周`, `点`, `天`, `晚`,
/// `每`, `工作日`, ...).
const CHINESE_DATE_CHARS: &[char] =
    &['月', '日', '号', '號', '周', '週', '星', '拜', '点', '點', '时', '天', '晚', '早', '每', '午'];

/// The word `every`, `each` or `fortnightly`, in any case.
fn says_every(bytes: &[u8]) -> bool {
    let word_at = |at: usize, word: &[u8]| {
        let word_start = at == 0 || !bytes[at - 1].is_ascii_alphabetic();
        word_start && starts_with_word(&bytes[at..], word)
    };
    let every = memchr::memchr2_iter(b'e', b'E', bytes).any(|at| word_at(at, b"every") || word_at(at, b"each"));
    every || memchr::memchr2_iter(b'f', b'F', bytes).any(|at| word_at(at, b"fortnightly"))
}

/// `/`, `-` or `.` between two digits.
fn separated_digits(bytes: &[u8]) -> bool {
    memchr::memchr3_iter(b'/', b'-', b'.', bytes).any(|at| {
        let before = at.checked_sub(1).is_some_and(|b| bytes[b].is_ascii_digit());
        before && bytes.get(at + 1).is_some_and(u8::is_ascii_digit)
    })
}

/// A word opening with `jan`, `feb`, ... `dec` or `mon` (`monthly`), in any case.
fn names_a_month(bytes: &[u8]) -> bool {
    (0..bytes.len()).any(|at| {
        let word_start = at == 0 || !bytes[at - 1].is_ascii_alphabetic();
        let Some(&[a, b, c]) = bytes.get(at..at + 3) else {
            return false;
        };
        word_start && MONTH_OPENINGS.contains(&[a | 0x20, b | 0x20, c | 0x20])
    })
}

/// The first three letters of the month names, and of `monthly`, lower-cased.
const MONTH_OPENINGS: [[u8; 3]; 13] = [
    *b"jan", *b"feb", *b"mar", *b"apr", *b"may", *b"jun", *b"jul", *b"aug", *b"sep", *b"oct", *b"nov", *b"dec", *b"mon",
];

/// `bytes` opens with `word` (any case), and no letter follows it.
fn starts_with_word(bytes: &[u8], word: &[u8]) -> bool {
    let opens = bytes.get(..word.len()).is_some_and(|b| b.eq_ignore_ascii_case(word));
    opens && !bytes.get(word.len()).is_some_and(u8::is_ascii_alphabetic)
}

/// What reading a line needs to know.
struct Reader {
    now: DateTime<Utc>,
    today: NaiveDate,
    tz: Tz,
    order: DateOrder,
}

/// Where a line's date landed: its instant, whether a time was written, what it is.
struct Dated {
    at: DateTime<Utc>,
    all_day: bool,
    kind: DateKind,
    recurrence: Option<String>,
}

impl Reader {
    fn read(&self, text: &str, number: usize) -> Option<FoundDate> {
        let (checkbox, checked, content) = line::content(text);
        let pieces = zh::pieces(content);
        let mut line = Line::read(checkbox, checked, &pieces);
        let from_today = content.chars().any(zh::is_ideograph).then_some(self.today);
        let phrases = phrase::phrases(&line.core, self.order, from_today);
        let dated = match recur::recurrence(&line.core, &phrases) {
            Some(recurrence) => self.duty(&mut line, &recurrence)?,
            None if recur::unreadable(&line.core) => return None,
            None => self.single(&mut line, &phrases)?,
        };
        let (title, struck) = line.title();
        if title.is_empty() {
            return None;
        }
        let asked = super::lead::lead_in(content);
        // The words asking for the lead say when, not what: they leave the title.
        let title = if asked.is_some() { super::lead::without_lead(&title) } else { title };
        let need = asked.is_none().then(|| super::Need::of(content)).flatten();
        Some(FoundDate {
            line: number,
            title,
            at: dated.at,
            all_day: dated.all_day,
            kind: dated.kind,
            done: line.done || struck,
            importance: line.importance,
            recurrence: dated.recurrence,
            lead: asked,
            lead_for: need,
        })
    }

    /// A recurring line: its next occurrence at or after a week before now.
    fn duty(&self, line: &mut Line, recurrence: &recur::Recurrence) -> Option<Dated> {
        let expr = recurrence.expression(self.today)?;
        let at = resolve::Schedule::parse(&expr)?.due(self.now, self.tz)?;
        for (start, end) in &recurrence.spans {
            line.take(*start, *end);
        }
        let all_day = recurrence.time.is_none();
        Some(Dated { at, all_day, kind: DateKind::Duty, recurrence: Some(expr) })
    }

    /// A line with one date (or the same date written more than once, or one keyed date).
    fn single(&self, line: &mut Line, phrases: &[Phrase]) -> Option<Dated> {
        let chosen = choose(phrases)?;
        let date = resolve::date_of(chosen.day, self.today)?;
        if chosen.weekday.is_some_and(|weekday| weekday != date.weekday()) {
            return None;
        }
        let at = resolve::instant(date, chosen.time.unwrap_or_else(resolve::end_of_day), self.tz)?;
        for phrase in phrases.iter().filter(|p| same_date(p, &chosen)) {
            line.take(phrase.start, phrase.end);
        }
        let deadline = line.checkbox || chosen.keyed || line.has_word(&["due", "deadline"]);
        let kind = if deadline { DateKind::Deadline } else { DateKind::Event };
        Some(Dated { at, all_day: chosen.time.is_none(), kind, recurrence: None })
    }
}

/// The line's date: the first keyed one, else the one date all phrases say; none when they
/// disagree.
fn choose(phrases: &[Phrase]) -> Option<Phrase> {
    if let Some(keyed) = phrases.iter().find(|p| p.keyed) {
        return Some(*keyed);
    }
    let first = phrases.first()?;
    phrases.iter().all(|p| same_date(p, first)).then_some(*first)
}

fn same_date(a: &Phrase, b: &Phrase) -> bool {
    a.day == b.day && a.time == b.time
}
