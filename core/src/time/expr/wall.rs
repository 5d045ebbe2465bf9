//! Wall-clock times to instants, by the same DST rule the cron schedules follow: a local time
//! the spring-forward change skips fires at the first instant after the gap (02:30 on the
//! spring-forward day in Europe/Berlin is 03:00 CEST); one the fall-back change repeats fires at
//! its first occurrence (the earlier offset).

use super::{out_of_range, TimeError};
use chrono::{DateTime, NaiveDate, NaiveDateTime, NaiveTime, TimeDelta, TimeZone, Utc};
use chrono_tz::Tz;

/// How far past a skipped local time to look for the end of the gap: the widest gap on record
/// is a whole day (Samoa, 2011).
const GAP_SEARCH_MINUTES: i64 = 2 * 24 * 60;

/// The instant `local` names in `tz`.
pub(super) fn instant(local: NaiveDateTime, tz: Tz) -> Result<DateTime<Utc>, TimeError> {
    match tz.from_local_datetime(&local).earliest() {
        Some(at) => Ok(at.with_timezone(&Utc)),
        None => after_gap(local, tz).ok_or_else(|| out_of_range("that local time does not exist")),
    }
}

/// The first instant after the gap that swallowed `local`: the first wall-clock minute after it
/// that exists.
fn after_gap(local: NaiveDateTime, tz: Tz) -> Option<DateTime<Utc>> {
    (1..=GAP_SEARCH_MINUTES).find_map(|minutes| {
        let later = local.checked_add_signed(TimeDelta::try_minutes(minutes)?)?;
        tz.from_local_datetime(&later).earliest().map(|at| at.with_timezone(&Utc))
    })
}

/// `at`, when it is still ahead of `now`; otherwise a refusal saying when it was.
pub(super) fn ahead(at: DateTime<Utc>, now: DateTime<Utc>, tz: Tz) -> Result<DateTime<Utc>, TimeError> {
    if at > now {
        Ok(at)
    } else {
        Err(TimeError::Past { input: String::new(), when: super::super::local(at, tz) })
    }
}

/// `time` on `day` in `tz`, which must be ahead of `now`.
pub(super) fn exactly(day: NaiveDate, time: NaiveTime, now: DateTime<Utc>, tz: Tz) -> Result<DateTime<Utc>, TimeError> {
    ahead(instant(day.and_time(time), tz)?, now, tz)
}

/// `time` on the first of `days` where it is still ahead of `now`.
pub(super) fn first_ahead(
    days: impl IntoIterator<Item = NaiveDate>,
    time: NaiveTime,
    now: DateTime<Utc>,
    tz: Tz,
) -> Result<DateTime<Utc>, TimeError> {
    for day in days {
        let at = instant(day.and_time(time), tz)?;
        if at > now {
            return Ok(at);
        }
    }
    Err(out_of_range("no such day ahead"))
}
