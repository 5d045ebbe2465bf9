//! The `## Proactivity preferences` section of MEMORY.md: plain `key: value` lines a user
//! (or the agent, when it learns a preference) writes in words, read into
//! [`PolicyOverrides`]. A line that is not understood is named in a note, with its line
//! number, and the other lines still apply.
//!
//! ```markdown
//! ## Proactivity preferences
//! - quiet hours: 22:00-08:00
//! - max per day: 3
//! - max per weekend day: 2
//! - max per hour: 1
//! - session cooldown: 45m
//! - no nudges: 09:00-09:30 mon-fri
//! ```
//!
//! The same in Chinese: a `## 提醒偏好` (or `## 主动提醒偏好`) section, keys `安静时间` or
//! `免打扰时间` (quiet hours), `每天最多`, `周末每天最多`, `每小时最多`, `勿扰` (no nudges) and days `工作日`,
//! `周末`, `每天`, with a full-width colon `：` and a count such as `3条` or `3 次`.
//!
//! Keys are case-insensitive, `_` and `-` count as spaces, a leading `- ` / `* ` is
//! ignored. Values: a window is `HH:MM-HH:MM` (over midnight when the end is earlier); a
//! cooldown is minutes (`45`, `45m`, `1h30m`, `2 hours`); `no nudges` takes a window and
//! optional days (`mon-fri`, `sat,sun`, `tue thu`, `weekdays`, `weekends`, `daily`) and may
//! be given more than once, and so may `quiet hours` (every window is merged in). Another key given
//! twice: the later line wins.

use super::error::LineError;
use crate::config::{DndWindow, TimeOfDay, Window};
use crate::policy::PolicyOverrides;
use chrono::Weekday;

/// The H2 title of the section (matched case-insensitively).
pub const SECTION: &str = "Proactivity preferences";
/// The same title in Chinese.
const SECTION_ZH: [&str; 2] = ["提醒偏好", "主动提醒偏好"];

/// The overrides of every `## Proactivity preferences` section of `memory_md`, and one note
/// per line that was not understood.
pub fn parse_memory_md(memory_md: &str) -> (PolicyOverrides, Vec<String>) {
    let mut o = PolicyOverrides::default();
    let mut notes = Vec::new();
    let mut inside = false;
    for (i, raw) in memory_md.lines().enumerate() {
        let line = raw.trim();
        if let Some((level, title)) = heading(line) {
            // A deeper heading (###) stays inside the section.
            if level <= 2 {
                inside = level == 2 && (title.eq_ignore_ascii_case(SECTION) || SECTION_ZH.contains(&title));
            }
            continue;
        }
        if !inside || line.is_empty() || line.starts_with("<!--") {
            continue;
        }
        let item = ["- ", "* ", "+ "].iter().find_map(|m| line.strip_prefix(m)).unwrap_or(line).trim();
        if let Err(why) = apply(&mut o, item) {
            notes.push(format!("workspace/MEMORY.md line {}: {why}: `{item}`", i + 1));
        }
    }
    (o, notes)
}

/// `(level, title)` of a markdown heading (`## Title`, or a line of only `#`s).
fn heading(line: &str) -> Option<(usize, &str)> {
    let level = line.chars().take_while(|c| *c == '#').count();
    let rest = &line[level..];
    // `#hashtag` is text, not a heading.
    (level > 0 && (rest.is_empty() || rest.starts_with(' '))).then(|| (level, rest.trim().trim_end_matches('#').trim()))
}

fn apply(o: &mut PolicyOverrides, item: &str) -> Result<(), LineError> {
    let (key, value) = item.split_once([':', '：']).ok_or(LineError::NotKeyValue)?;
    let key = key.to_lowercase().replace(['_', '-'], " ").split_whitespace().collect::<Vec<_>>().join(" ");
    let value = value.trim();
    match key.as_str() {
        "quiet hours" | "安静时间" | "免打扰时间" => match o.quiet_hours {
            None => o.quiet_hours = Some(window(value)?),
            Some(_) => o.more_quiet_hours.push(window(value)?),
        },
        "max per day" | "每天最多" => o.max_per_day = Some(count(value)?),
        "max per weekend day" | "周末每天最多" => o.max_per_weekend_day = Some(count(value)?),
        "max per hour" | "每小时最多" => o.max_per_hour = Some(count(value)?),
        "session cooldown" | "session cooldown minutes" => o.session_cooldown_minutes = Some(minutes(value)?),
        "no nudges" | "勿扰" => o.dnd_windows.push(no_nudges(value)?),
        _ => return Err(LineError::UnknownKey(key)),
    }
    Ok(())
}

/// `3`, or `3条`, `3 次`, `3个` in Chinese.
fn count(value: &str) -> Result<u32, LineError> {
    value.trim_end_matches(['条', '次', '个']).trim().parse().map_err(|_| LineError::NotCount(value.to_owned()))
}

/// `22:00`, or a clock time of the shared parser (`10pm`, `10:30 pm`, `noon`).
fn time(s: &str) -> Result<TimeOfDay, LineError> {
    let tokens: Vec<&str> = s.split_whitespace().collect();
    match crate::time::words::clock(&tokens, true) {
        Some((t, used)) if used == tokens.len() => Ok(TimeOfDay(t)),
        _ => Err(LineError::NotTime(s.trim().to_owned())),
    }
}

/// `HH:MM-HH:MM` (also with spaces, an en dash or `to`).
fn window(value: &str) -> Result<Window, LineError> {
    let v = dashes(value);
    let (start, end) = v.split_once('-').ok_or_else(|| LineError::NotWindow(value.to_owned()))?;
    let w = Window::new(time(start)?, time(end)?);
    if w.start == w.end {
        return Err(LineError::EmptyWindow(value.to_owned()));
    }
    Ok(w)
}

/// The window's separator as `-`: a dash, `to`, `~` or `至`.
fn dashes(value: &str) -> String {
    value.replace(['–', '—', '~', '～', '至'], "-").replace(" to ", "-")
}

/// `45` (minutes), or any duration of the shared time parser (`45m`, `1h30m`, `2 hours`,
/// `90 minutes`): whole minutes.
fn minutes(value: &str) -> Result<i64, LineError> {
    if let Ok(m) = value.trim().parse::<i64>() {
        return if m >= 0 { Ok(m) } else { Err(LineError::NotMinutes(value.to_owned())) };
    }
    crate::time::parse_duration(value).map(|d| d.num_minutes()).map_err(|_| LineError::NotMinutes(value.to_owned()))
}

/// `HH:MM-HH:MM [days]`.
fn no_nudges(value: &str) -> Result<DndWindow, LineError> {
    let v = dashes(value);
    let v = v.trim();
    // The window is everything up to the first letter (the days follow it).
    let split = v.find(|c: char| c.is_alphabetic()).unwrap_or(v.len());
    let (win, days) = v.split_at(split);
    let w = window(win)?;
    Ok(DndWindow { name: "no nudges (preferences)".into(), start: w.start, end: w.end, weekdays: weekdays(days)? })
}

fn weekdays(spec: &str) -> Result<Vec<Weekday>, LineError> {
    use Weekday::*;
    let spec = spec.to_lowercase().replace("every day", "daily").replace(['，', '、'], ",");
    let mut days: Vec<Weekday> = Vec::new();
    for part in spec.split([',', ' ']).filter(|p| !p.is_empty()) {
        let add: Vec<Weekday> = match part {
            "daily" | "everyday" | "每天" => vec![Mon, Tue, Wed, Thu, Fri, Sat, Sun],
            "weekdays" | "工作日" => vec![Mon, Tue, Wed, Thu, Fri],
            "weekends" | "weekend" | "周末" => vec![Sat, Sun],
            _ => match part.split_once('-') {
                // A range wraps over the week's end: `fri-mon` is fri, sat, sun, mon.
                Some((a, b)) => {
                    let (a, b) = (day(a)?.num_days_from_monday(), day(b)?.num_days_from_monday());
                    let span = (b + 7 - a) % 7;
                    (a..=a + span).map(|k| Weekday::try_from((k % 7) as u8).expect("0..7 is a weekday")).collect()
                }
                None => vec![day(part)?],
            },
        };
        for d in add {
            if !days.contains(&d) {
                days.push(d);
            }
        }
    }
    // Every day is the same as no restriction (an empty list).
    if days.len() == 7 {
        days.clear();
    }
    days.sort_by_key(|d| d.num_days_from_monday());
    Ok(days)
}

fn day(s: &str) -> Result<Weekday, LineError> {
    s.trim().parse().map_err(|_| LineError::NotDay(s.to_owned()))
}
