//! The words times are made of: month and weekday names, ordinals (`20th`), clock times (`7pm`,
//! `19:00`, `noon`) and numeric dates (`5/15`, `15.5.`, `2026-05-15`). Case-insensitive; a
//! trailing `.` or `,` on a word is ignored. Each reader answers `None` for what it does not know,
//! never guesses.

use super::DateOrder;
use chrono::{Datelike, Days, NaiveDate, NaiveTime, Weekday};

const MONTHS: [&str; 12] = [
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
];

/// A word without the punctuation that may follow it in prose, lower-cased.
fn bare(word: &str) -> String {
    word.trim_end_matches(['.', ',', ';', ':', ')']).trim_start_matches('(').to_ascii_lowercase()
}

/// `may`, `May`, `sept`, `sep.`, `September` → 1..=12. Three letters at least (so `ma` is none).
pub fn month(word: &str) -> Option<u32> {
    let w = bare(word);
    if w.len() < 3 {
        return None;
    }
    if w == "sept" {
        return Some(9);
    }
    MONTHS.iter().position(|m| *m == w || (w.len() == 3 && m.starts_with(w.as_str()))).map(|i| i as u32 + 1)
}

/// `mon`, `monday`, `tues`, `thu`, `thurs`, `Fri.` → the weekday.
pub fn weekday(word: &str) -> Option<Weekday> {
    let w = bare(word);
    let w = w.strip_suffix('s').filter(|s| s.ends_with("day")).unwrap_or(&w);
    let table = [
        (Weekday::Mon, &["mon", "monday"][..]),
        (Weekday::Tue, &["tue", "tues", "tuesday"][..]),
        (Weekday::Wed, &["wed", "weds", "wednesday"][..]),
        (Weekday::Thu, &["thu", "thur", "thurs", "thursday"][..]),
        (Weekday::Fri, &["fri", "friday"][..]),
        (Weekday::Sat, &["sat", "saturday"][..]),
        (Weekday::Sun, &["sun", "sunday"][..]),
    ];
    table.iter().find(|(_, names)| names.contains(&w)).map(|(d, _)| *d)
}

/// A day named from today.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FromToday {
    /// `today`, `tomorrow`, `day after tomorrow`: this many days on.
    Days(u64),
    /// `friday this week` (`weeks` 0), `wednesday next week` (1): that day of the week that
    /// starts on a Monday.
    InWeek { weekday: Weekday, weeks: u64 },
    /// `the end of the month` (`months` 0), `the end of next month` (1): its last day.
    MonthEnd { months: u32 },
    /// `the 5th of next month`: that day of the month `months` on.
    DayOfMonth { day: u32, months: u32 },
}

impl FromToday {
    /// The date this names, seen from `today`.
    pub fn date(self, today: NaiveDate) -> Option<NaiveDate> {
        match self {
            FromToday::Days(days) => today.checked_add_days(Days::new(days)),
            FromToday::InWeek { weekday, weeks } => {
                let monday = today.checked_sub_days(Days::new(today.weekday().num_days_from_monday().into()))?;
                monday.checked_add_days(Days::new(weeks * 7 + u64::from(weekday.num_days_from_monday())))
            }
            FromToday::MonthEnd { months } => {
                let first = today.with_day(1)?.checked_add_months(chrono::Months::new(months + 1))?;
                first.checked_sub_days(Days::new(1))
            }
            FromToday::DayOfMonth { day, months } => {
                today.with_day(1)?.checked_add_months(chrono::Months::new(months))?.with_day(day)
            }
        }
    }
}

/// A day named from today at the start of `tokens`: `today`, `tomorrow`, `day after tomorrow`
/// (`the` before it too), `friday this week`, `wednesday next week`; and how many tokens it took.
pub fn from_today(tokens: &[&str]) -> Option<(FromToday, usize)> {
    let words: Vec<String> = tokens.iter().take(5).map(|t| bare(t)).collect();
    let words: Vec<&str> = words.iter().map(String::as_str).collect();
    let next = |w: &str| u32::from(w == "next");
    match words.as_slice() {
        ["today", ..] => Some((FromToday::Days(0), 1)),
        ["tomorrow", ..] => Some((FromToday::Days(1), 1)),
        ["day", "after", "tomorrow", ..] => Some((FromToday::Days(2), 3)),
        ["the", "day", "after", "tomorrow", ..] => Some((FromToday::Days(2), 4)),
        [n, "days", "from", "today", ..] => n.parse().ok().filter(|n| *n <= 366).map(|n| (FromToday::Days(n), 4)),
        ["the", "end", "of", which @ ("the" | "this" | "next"), "month", ..] => {
            Some((FromToday::MonthEnd { months: next(which) }, 5))
        }
        ["end", "of", which @ ("the" | "this" | "next"), "month", ..] => {
            Some((FromToday::MonthEnd { months: next(which) }, 4))
        }
        ["the", day, "of", which @ ("this" | "next"), "month", ..] => {
            ordinal(day).map(|day| (FromToday::DayOfMonth { day, months: next(which) }, 5))
        }
        [name, which @ ("this" | "next"), "week", ..] => {
            let weeks = u64::from(*which == "next");
            weekday(name).map(|weekday| (FromToday::InWeek { weekday, weeks }, 3))
        }
        _ => None,
    }
}

/// A day of the month: `20th`, `1st`, `2nd`, `3rd`, `23rd` or a plain `20` → 1..=31.
pub fn ordinal(word: &str) -> Option<u32> {
    let w = bare(word);
    let digits = w.trim_end_matches(|c: char| c.is_ascii_alphabetic());
    let suffix = &w[digits.len()..];
    let expected = match digits.parse::<u32>().ok()? {
        n if (11..=13).contains(&(n % 100)) => "th",
        n if n % 10 == 1 => "st",
        n if n % 10 == 2 => "nd",
        n if n % 10 == 3 => "rd",
        _ => "th",
    };
    let day = digits.parse::<u32>().ok()?;
    ((suffix.is_empty() || suffix == expected) && (1..=31).contains(&day) && !digits.is_empty()).then_some(day)
}

/// The clock time at the start of `tokens` and how many tokens it took: `7pm`, `7 pm`,
/// `7:30pm`, `7:30 p.m.`, `19:00`, `19h`, `noon`, `midnight`, and a bare hour (`9`) only when
/// `bare_hour` (after `at`, where nothing else can be meant).
pub fn clock(tokens: &[&str], bare_hour: bool) -> Option<(NaiveTime, usize)> {
    let first = bare(tokens.first()?);
    match first.as_str() {
        "noon" | "midday" => return Some((NaiveTime::from_hms_opt(12, 0, 0)?, 1)),
        "midnight" => return Some((NaiveTime::from_hms_opt(0, 0, 0)?, 1)),
        _ => {}
    }
    let (digits, suffix) = split_suffix(&first);
    let (hour, minute) = hour_minute(digits)?;
    let meridiem = |s: &str| match s.replace('.', "").as_str() {
        "am" => Some(false),
        "pm" => Some(true),
        _ => None,
    };
    let (pm, used) = match suffix {
        "" => match tokens.get(1).map(|t| bare(t)).as_deref().and_then(meridiem) {
            Some(pm) => (Some(pm), 2),
            None => (None, 1),
        },
        "h" if digits.len() <= 2 => (None, 1),
        s => (Some(meridiem(s)?), 1),
    };
    let hour = match pm {
        Some(pm) if (1..=12).contains(&hour) => hour % 12 + if pm { 12 } else { 0 },
        Some(_) => return None,
        None if digits.contains(':') || suffix == "h" || bare_hour => hour,
        None => return None,
    };
    Some((NaiveTime::from_hms_opt(hour, minute, 0)?, used))
}

/// `7:30pm` → (`7:30`, `pm`); `19h` → (`19`, `h`).
fn split_suffix(word: &str) -> (&str, &str) {
    let at = word.find(|c: char| !(c.is_ascii_digit() || c == ':')).unwrap_or(word.len());
    word.split_at(at)
}

/// `7` → (7, 0); `19:05` → (19, 5); anything else (`7:5`, `25`, `:30`) → none.
fn hour_minute(digits: &str) -> Option<(u32, u32)> {
    let (h, m) = digits.split_once(':').unwrap_or((digits, "00"));
    if h.is_empty() || h.len() > 2 || m.len() != 2 || !h.bytes().chain(m.bytes()).all(|b| b.is_ascii_digit()) {
        return None;
    }
    let (h, m) = (h.parse().ok()?, m.parse().ok()?);
    (h < 24 && m < 60).then_some((h, m))
}

/// A numeric date written as one token: `2026-05-15` (ISO), `5/15` or `5/15/2026` (month first
/// by `order`, a two-digit year is 20xx), `15.5.`, `15.05.` or `15.05.2026` (always day first).
/// Returns (year if written, month, day) with month 1..=12 and day 1..=31; whether that day
/// exists in that month is the caller's check.
pub fn numeric_date(token: &str, order: DateOrder) -> Option<(Option<i32>, u32, u32)> {
    let t = token.trim_matches(|c: char| matches!(c, '(' | ')' | ',' | ';' | ':' | '!' | '?'));
    let (sep, parts) = if t.contains('-') {
        ('-', t.split('-').collect::<Vec<_>>())
    } else if t.contains('/') {
        ('/', t.split('/').collect())
    } else {
        ('.', t.strip_suffix('.').unwrap_or(t).split('.').collect())
    };
    if !(2..=3).contains(&parts.len()) || parts.iter().any(|p| p.is_empty() || !p.bytes().all(|b| b.is_ascii_digit())) {
        return None;
    }
    let num = |s: &str| s.parse::<u32>().ok();
    let year = |s: &str| -> Option<i32> {
        match s.len() {
            2 => Some(2000 + s.parse::<i32>().ok()?),
            4 => s.parse().ok(),
            _ => None,
        }
    };
    let (y, m, d) = match (sep, parts.as_slice()) {
        ('-', [y, m, d]) if y.len() == 4 => (Some(year(y)?), num(m)?, num(d)?),
        ('/', [a, b, rest @ ..]) => {
            let y = rest.first().map(|y| year(y)).unwrap_or(Some(0))?;
            let (m, d) = match order {
                DateOrder::MonthFirst => (num(a)?, num(b)?),
                DateOrder::DayFirst => (num(b)?, num(a)?),
            };
            ((!rest.is_empty()).then_some(y), m, d)
        }
        ('.', [d, m, rest @ ..]) if t.ends_with('.') || !rest.is_empty() => {
            let y = rest.first().map(|y| year(y)).unwrap_or(Some(0))?;
            ((!rest.is_empty()).then_some(y), num(m)?, num(d)?)
        }
        _ => return None,
    };
    let short = |s: &str| s.len() <= 2;
    let shape_ok = match sep {
        '-' => parts[1].len() == 2 && parts[2].len() == 2,
        _ => short(parts[0]) && short(parts[1]),
    };
    (shape_ok && (1..=12).contains(&m) && (1..=31).contains(&d)).then_some((y, m, d))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hm(h: u32, m: u32) -> NaiveTime {
        NaiveTime::from_hms_opt(h, m, 0).unwrap()
    }

    #[test]
    fn months_and_weekdays_read_in_any_case_with_abbreviations() {
        assert_eq!(month("May"), Some(5));
        assert_eq!(month("sept."), Some(9));
        assert_eq!(month("Sep"), Some(9));
        assert_eq!(month("December,"), Some(12));
        assert_eq!(month("ma"), None);
        assert_eq!(month("mayday"), None);
        assert_eq!(weekday("Fri."), Some(Weekday::Fri));
        assert_eq!(weekday("thurs"), Some(Weekday::Thu));
        assert_eq!(weekday("Mondays"), Some(Weekday::Mon));
        assert_eq!(weekday("moon"), None);
    }

    #[test]
    fn ordinals_need_the_right_suffix() {
        assert_eq!(ordinal("20th"), Some(20));
        assert_eq!(ordinal("1st"), Some(1));
        assert_eq!(ordinal("22nd"), Some(22));
        assert_eq!(ordinal("13th"), Some(13));
        assert_eq!(ordinal("20"), Some(20));
        assert_eq!(ordinal("1th"), None);
        assert_eq!(ordinal("32nd"), None);
        assert_eq!(ordinal("0"), None);
        assert_eq!(ordinal("th"), None);
    }

    #[test]
    fn clock_times_in_their_written_forms() {
        assert_eq!(clock(&["7pm"], false), Some((hm(19, 0), 1)));
        assert_eq!(clock(&["7", "pm", "x"], false), Some((hm(19, 0), 2)));
        assert_eq!(clock(&["7:30pm"], false), Some((hm(19, 30), 1)));
        assert_eq!(clock(&["12am"], false), Some((hm(0, 0), 1)));
        assert_eq!(clock(&["12pm"], false), Some((hm(12, 0), 1)));
        assert_eq!(clock(&["19:00,"], false), Some((hm(19, 0), 1)));
        assert_eq!(clock(&["15h"], false), Some((hm(15, 0), 1)));
        assert_eq!(clock(&["noon"], false), Some((hm(12, 0), 1)));
        assert_eq!(clock(&["9"], true), Some((hm(9, 0), 1)));
        assert_eq!(clock(&["9"], false), None);
        for bad in ["25:00", "13pm", "7:5", "19:60", "pm", "2", "x"] {
            assert_eq!(clock(&[bad], false), None, "{bad}");
        }
    }

    #[test]
    fn numeric_dates_by_separator_and_order() {
        let mf = DateOrder::MonthFirst;
        assert_eq!(numeric_date("2026-05-15", mf), Some((Some(2026), 5, 15)));
        assert_eq!(numeric_date("5/15", mf), Some((None, 5, 15)));
        assert_eq!(numeric_date("5/15", DateOrder::DayFirst), None);
        assert_eq!(numeric_date("15/5", DateOrder::DayFirst), Some((None, 5, 15)));
        assert_eq!(numeric_date("5/15/26", mf), Some((Some(2026), 5, 15)));
        assert_eq!(numeric_date("(15.05.2026)", mf), Some((Some(2026), 5, 15)));
        assert_eq!(numeric_date("15.5.", mf), Some((None, 5, 15)));
        for bad in ["24/7", "v2.0.15", "2.0.15", "15.5", "1.5", "555-1234", "5/15/2026/1", "12345/1", "3-4"] {
            assert_eq!(numeric_date(bad, mf), None, "{bad}");
        }
    }
}
