//! Time as people say it: the user's zone, one parser for every time expression a person types
//! (`/remind`, `raven cron add`, the agent's cron tool, preferences, scenario files, `--at`), one
//! finder for the dates written in plain notes, and the way a time is shown to a person.
//!
//! What a person reads is in their zone, to the minute; what a program reads (JSON) stays RFC 3339.

mod dates;
mod duration;
mod expr;
mod gap;
mod instant;
mod lang;
mod lead;
mod need;
pub mod words;
mod zh;

pub use dates::{find_dates, find_dates_shared, occurrences, DateKind, FoundDate, Importance};
pub use duration::parse_duration;
pub use expr::{parse_when, split_when};
pub use instant::{parse_absolute, parse_instant};

use chrono::{DateTime, Utc};
use chrono_tz::Tz;
use serde::{Deserialize, Serialize};

/// How a numeric date with `/` is read: `5/6` is May 6 (month first, the default) or 5 June
/// (day first). A date with `.` is always day first (`6.5.` is 6 May); `2026-05-06` is ISO.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DateOrder {
    #[default]
    MonthFirst,
    DayFirst,
}

/// When something is due, as a person said it.
#[derive(Debug, Clone, PartialEq)]
pub enum When {
    /// Once, at this instant.
    Once(DateTime<Utc>),
    /// Again and again, this long apart, counted from now.
    Every(chrono::Duration),
    /// Again and again, on a 5-field cron expression read in a zone (`every weekday at 9` is
    /// `0 9 * * 1-5`).
    Cron { expr: String, tz: Tz },
}

/// The forms every entry point accepts, listed in every "cannot read" error.
pub const ACCEPTED_FORMS: &str =
    "durations (10m, 1h30m, 1h 30m, 90 minutes, 2 hours), clock times (7pm, 19:00, noon), \
days (today, tomorrow, friday, next friday, wednesday next week), a leading `by` (by friday), dates (May 15, 15 May, 2026-05-15, 5/15), \
recurrences (every day at 9, every weekday at 9, every monday, every month on the 20th, every 2 hours, \
@hourly, @daily, @weekly, @monthly), RFC 3339 (2026-05-15T15:00:00+02:00) and the same in Chinese \
(明天上午10点, 下午3点, 3小时后, 下周三, 12月20日, 每天早上8点, 每周二, 每月20号, 工作日)";

/// Why a time expression was refused. Every variant quotes what the person typed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TimeError {
    #[error("cannot read `{input}` as a time: {why}. Accepted: {ACCEPTED_FORMS}")]
    Unreadable { input: String, why: String },
    #[error("`{input}` is out of range: {why}")]
    OutOfRange { input: String, why: String },
    #[error("`{input}` is in the past ({when}); say a time still ahead")]
    Past { input: String, when: String },
}

mod show;
pub mod zone;

pub use gap::skipped_clock;
pub use lang::{Language, LanguageSetting};
pub use need::{Ladder, Need};
pub use show::local;
pub use zone::{resolve, resolve_from_env, UserZone, ZoneSource, LOCALTIME};

/// The first instant of the local calendar day of `now` in `tz`, in UTC. A zone may skip
/// midnight on a DST day: the first instant of the day is then later.
pub fn local_midnight(now: DateTime<Utc>, tz: Tz) -> DateTime<Utc> {
    use chrono::TimeZone;
    let date = now.with_timezone(&tz).date_naive();
    (0..3)
        .find_map(|h| tz.from_local_datetime(&date.and_hms_opt(h, 0, 0)?).earliest())
        .map(|t| t.with_timezone(&Utc))
        .unwrap_or(now - chrono::Duration::hours(24))
}

#[cfg(test)]
mod midnight_tests {
    use super::*;
    use chrono::TimeZone;

    #[test]
    fn local_midnight_is_the_first_instant_of_the_local_day() {
        let now = Utc.with_ymd_and_hms(2026, 3, 2, 5, 0, 0).unwrap();
        let berlin: Tz = "Europe/Berlin".parse().unwrap();
        assert_eq!(local_midnight(now, berlin), Utc.with_ymd_and_hms(2026, 3, 1, 23, 0, 0).unwrap());
        // Santiago skips midnight on 2026-09-06: the day starts at 01:00 local (04:00 UTC).
        let santiago: Tz = "America/Santiago".parse().unwrap();
        let day = Utc.with_ymd_and_hms(2026, 9, 6, 15, 0, 0).unwrap();
        assert_eq!(local_midnight(day, santiago), Utc.with_ymd_and_hms(2026, 9, 6, 4, 0, 0).unwrap());
    }
}
