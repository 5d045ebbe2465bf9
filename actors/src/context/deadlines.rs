//! Deadlines written in MEMORY.md, one a line:
//!
//! ```text
//! - [ ] Submit the tax return due: 2026-03-02 17:00 !high
//! - [ ] Renew passport (due 2026-04-01)
//! - [x] Book flights due 2026-02-20            <- done: ignored
//! ```
//!
//! `due` (any case, an optional `:`) is followed by `YYYY-MM-DD` and an optional `HH:MM`
//! in the user's zone (a date alone means the end of that day, 23:59). `!high`, `!medium`
//! or `!low` sets the priority (default medium).

use crate::policy::topic::topic_of;
use chrono::{DateTime, NaiveDate, NaiveTime, TimeZone, Utc};
use chrono_tz::Tz;
use raven_proto::Priority;

#[derive(Debug, Clone, PartialEq)]
pub struct Deadline {
    pub title: String,
    pub due: DateTime<Utc>,
    pub priority: Priority,
    pub topic: String,
}

impl Deadline {
    /// Due within the hour, or already past.
    pub fn is_imminent(&self, now: DateTime<Utc>) -> bool {
        self.due - now <= chrono::Duration::hours(1)
    }
}

/// Every open deadline in `memory_md`, soonest first.
pub fn parse_deadlines(memory_md: &str, tz: Tz) -> Vec<Deadline> {
    // A 1 MB memory is 20,000 lines, few of them deadlines: find the keyword in the whole
    // text (a SIMD substring search), then parse only the lines that hold it.
    let bytes = memory_md.as_bytes();
    let mut starts: Vec<usize> = ["due", "Due", "DUE"]
        .iter()
        .flat_map(|k| memchr::memmem::find_iter(bytes, k.as_bytes()))
        .map(|i| memchr::memrchr(b'\n', &bytes[..i]).map_or(0, |n| n + 1))
        .collect();
    starts.sort_unstable();
    starts.dedup();
    let mut out: Vec<Deadline> = starts
        .into_iter()
        .filter_map(|start| {
            let line = memory_md[start..].lines().next().unwrap_or_default();
            parse_line(line, tz)
        })
        .collect();
    out.sort_by_key(|d| d.due);
    out
}

fn parse_line(line: &str, tz: Tz) -> Option<Deadline> {
    let lower = line.to_ascii_lowercase();
    if lower.contains("[x]") {
        return None;
    }
    let at = lower.find("due")?;
    let rest = line[at + 3..].trim_start_matches([':', ' ']);
    let date = NaiveDate::parse_from_str(rest.get(..10)?, "%Y-%m-%d").ok()?;
    let after_date = rest[10..].trim_start();
    let time = after_date.get(..5).and_then(|t| NaiveTime::parse_from_str(t, "%H:%M").ok());
    let local = date.and_time(time.unwrap_or(NaiveTime::from_hms_opt(23, 59, 0)?));
    let due = tz.from_local_datetime(&local).earliest()?.with_timezone(&Utc);
    let priority = if lower.contains("!high") {
        Priority::High
    } else if lower.contains("!low") {
        Priority::Low
    } else {
        Priority::Medium
    };
    let mut title = line[..at].to_owned();
    for junk in ["- [ ]", "* [ ]", "[ ]"] {
        title = title.replacen(junk, "", 1);
    }
    let title =
        title.trim().trim_start_matches(['-', '*']).trim().trim_end_matches(['(', ',', ';', ' ']).trim().to_owned();
    if title.is_empty() {
        return None;
    }
    let topic = topic_of(&title);
    Some(Deadline { title, due, priority, topic })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deadlines_parse_with_time_priority_and_done_marks() {
        let md = "# Notes\n- [ ] Submit the tax return due: 2026-03-02 17:00 !high\n- [ ] Renew passport (due 2026-04-01)\n- [x] Book flights due 2026-02-20\nno date here due soon\n";
        let d = parse_deadlines(md, chrono_tz::Europe::Berlin);
        assert_eq!(d.len(), 2);
        assert_eq!(d[0].title, "Submit the tax return");
        assert_eq!(d[0].priority, Priority::High);
        assert_eq!(d[0].due, Utc.with_ymd_and_hms(2026, 3, 2, 16, 0, 0).unwrap());
        assert_eq!(d[1].title, "Renew passport");
        assert_eq!(d[1].priority, Priority::Medium);
        assert_eq!(d[1].due, Utc.with_ymd_and_hms(2026, 4, 1, 21, 59, 0).unwrap());
        assert_eq!(d[0].topic, "return");
    }
}
