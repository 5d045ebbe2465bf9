//! One instant for the `--at` of the dry-run commands (`tick`, `say`, `policy explain`): any
//! one-shot form of the shared parser (`tomorrow at 9`, `22:30`, `friday 7pm`), and an absolute
//! time in the past too (`2026-03-02 12:00` in the user's zone, or RFC 3339), since asking what
//! the gate said at a past moment is a fair question.

use super::{parse_when, DateOrder, TimeError, When};
use chrono::{DateTime, NaiveDate, NaiveDateTime, Utc};
use chrono_tz::Tz;

pub fn parse_instant(input: &str, now: DateTime<Utc>, tz: Tz, order: DateOrder) -> Result<DateTime<Utc>, TimeError> {
    if let Some(t) = absolute(input.trim(), tz) {
        return Ok(t);
    }
    match parse_when(input, now, tz, order)? {
        When::Once(t) => Ok(t),
        _ => Err(TimeError::Unreadable { input: input.to_owned(), why: "a recurrence is not one instant".into() }),
    }
}

/// An absolute instant only (a run's start, which nothing comes before): RFC 3339,
/// `YYYY-MM-DD HH:MM` or `YYYY-MM-DD` in `tz`.
pub fn parse_absolute(input: &str, tz: Tz) -> Result<DateTime<Utc>, TimeError> {
    absolute(input.trim(), tz).ok_or_else(|| TimeError::Unreadable {
        input: input.to_owned(),
        why: "say a date and time: 2026-03-02 09:00 (in the zone) or RFC 3339 (2026-03-02T09:00:00+01:00)".into(),
    })
}

/// RFC 3339, `YYYY-MM-DD HH:MM` or `YYYY-MM-DD` (midnight) in `tz`; a time the zone skips
/// moves past the gap, a repeated one takes its first occurrence.
fn absolute(s: &str, tz: Tz) -> Option<DateTime<Utc>> {
    if let Ok(t) = DateTime::parse_from_rfc3339(s) {
        return Some(t.to_utc());
    }
    let local = NaiveDateTime::parse_from_str(s, "%Y-%m-%d %H:%M")
        .or_else(|_| NaiveDate::parse_from_str(s, "%Y-%m-%d").map(|d| d.and_time(chrono::NaiveTime::MIN)))
        .ok()?;
    (0..=180).find_map(|m| {
        let t = local.checked_add_signed(chrono::Duration::minutes(m))?;
        t.and_local_timezone(tz).earliest().map(|t| t.to_utc())
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    #[test]
    fn past_absolute_times_and_every_one_shot_form_are_instants() {
        let now = Utc.with_ymd_and_hms(2026, 5, 13, 10, 0, 0).unwrap();
        let berlin = chrono_tz::Europe::Berlin;
        let at = |s| parse_instant(s, now, berlin, DateOrder::MonthFirst);
        assert_eq!(at("2026-03-02 12:00").unwrap(), Utc.with_ymd_and_hms(2026, 3, 2, 11, 0, 0).unwrap());
        assert_eq!(at("2026-03-02T12:00:00Z").unwrap(), Utc.with_ymd_and_hms(2026, 3, 2, 12, 0, 0).unwrap());
        assert_eq!(at("2026-03-29 02:30").unwrap(), Utc.with_ymd_and_hms(2026, 3, 29, 1, 0, 0).unwrap());
        assert_eq!(at("tomorrow at 9").unwrap(), Utc.with_ymd_and_hms(2026, 5, 14, 7, 0, 0).unwrap());
        assert_eq!(at("22:30").unwrap(), Utc.with_ymd_and_hms(2026, 5, 13, 20, 30, 0).unwrap());
        let err = at("every day at 9").unwrap_err().to_string();
        assert!(err.contains("`every day at 9`"), "{err}");
        assert!(at("blursday").unwrap_err().to_string().contains("`blursday`"));
    }
}
