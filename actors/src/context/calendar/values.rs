//! Property values: dates and date-times as written (UTC, in a named zone, floating, or a bare
//! date), the zone a `TZID` names, and RFC 5545 durations such as `-PT15M` (read here: the
//! `icalendar` crate's duration reader takes no sign, and alarms are mostly negative).

use chrono::{DateTime, Duration, NaiveDate, NaiveDateTime, TimeZone, Utc};
use chrono_tz::Tz;
use icalendar::parser::Property;
use icalendar::{CalendarDateTime, DatePerhapsTime};
use std::path::Path;

/// A moment as written in the file, before the user's zone is known.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum When {
    /// `...Z`.
    Utc(NaiveDateTime),
    /// `TZID=` a zone we know.
    Zoned(NaiveDateTime, Tz),
    /// Neither: read in the user's zone (also an unknown `TZID`).
    Floating(NaiveDateTime),
    /// `VALUE=DATE`: the whole day, from local midnight in the user's zone.
    Date(NaiveDate),
}

impl When {
    /// The instant it names, floating times and dates read in `tz`.
    pub(super) fn instant(self, tz: Tz) -> DateTime<Utc> {
        match self {
            When::Utc(at) => Utc.from_utc_datetime(&at),
            When::Zoned(at, zone) => local_instant(zone, at),
            When::Floating(at) => local_instant(tz, at),
            When::Date(day) => local_instant(tz, day.and_time(chrono::NaiveTime::MIN)),
        }
    }

    /// The day it falls on in `tz`.
    pub(super) fn day(self, tz: Tz) -> NaiveDate {
        match self {
            When::Date(day) => day,
            When::Floating(at) => at.date(),
            other => other.instant(tz).with_timezone(&tz).date_naive(),
        }
    }
}

/// The instant of wall-clock time `at` in `zone`: the earlier one when the clocks go back, an
/// hour later when it falls in the gap of clocks going forward.
pub(super) fn local_instant(zone: Tz, at: NaiveDateTime) -> DateTime<Utc> {
    zone.from_local_datetime(&at)
        .earliest()
        .or_else(|| zone.from_local_datetime(&(at + Duration::hours(1))).earliest())
        .map(|t| t.with_timezone(&Utc))
        .unwrap_or_else(|| Utc.from_utc_datetime(&at))
}

/// Where a value comes from, for the warning about a zone we do not know.
#[derive(Debug, Clone, Copy)]
pub(super) struct Origin<'a> {
    pub(super) path: &'a Path,
    pub(super) line: usize,
}

/// Why a property's value could not be read (reported with the file and line it is on).
#[derive(Debug, thiserror::Error)]
pub(super) enum ValueError {
    #[error("{prop} has no readable date or date-time: {raw:?}")]
    NoDate { prop: String, raw: String },
    #[error("unreadable UNTIL {0:?} in RRULE")]
    Until(String),
    #[error("unreadable RRULE {value:?}: {reason}")]
    Rule { value: String, reason: String },
}

/// One date or date-time value of `prop`: its value, or `raw`, one item of its value list.
pub(super) fn parse_when(prop: &Property<'_>, raw: &str, origin: Origin<'_>) -> Result<When, ValueError> {
    let raw = raw.trim();
    let single = Property { name: prop.name.clone(), val: raw.into(), params: prop.params.clone() };
    let value = DatePerhapsTime::try_from(&single)
        .map_err(|_| ValueError::NoDate { prop: prop.name.to_string(), raw: raw.to_owned() })?;
    Ok(match value {
        DatePerhapsTime::Date(day) => When::Date(day),
        DatePerhapsTime::DateTime(CalendarDateTime::Utc(at)) => When::Utc(at.naive_utc()),
        DatePerhapsTime::DateTime(CalendarDateTime::Floating(at)) => When::Floating(at),
        DatePerhapsTime::DateTime(CalendarDateTime::WithTimezone { date_time, tzid }) => match zone(&tzid) {
            Some(zone) => When::Zoned(date_time, zone),
            None => {
                tracing::warn!(
                    file = %origin.path.display(),
                    line = origin.line,
                    tzid = %tzid,
                    "calendar: unknown TZID, reading the time in the user's zone"
                );
                When::Floating(date_time)
            }
        },
    })
}

/// A bare value such as `UNTIL=` holds: `...Z`, floating, or a date.
pub(super) fn parse_bare(raw: &str) -> Option<When> {
    let raw = raw.trim();
    if let Some(utc) = raw.strip_suffix(['Z', 'z']) {
        return NaiveDateTime::parse_from_str(utc, "%Y%m%dT%H%M%S").ok().map(When::Utc);
    }
    NaiveDateTime::parse_from_str(raw, "%Y%m%dT%H%M%S")
        .map(When::Floating)
        .or_else(|_| NaiveDate::parse_from_str(raw, "%Y%m%d").map(When::Date))
        .ok()
}

/// The IANA zone a `TZID` names, also at the end of a longer id such as
/// `/mozilla.org/20070129_1/Europe/Paris`.
pub(super) fn zone(tzid: &str) -> Option<Tz> {
    let tzid = tzid.trim().trim_matches('"');
    tzid.parse().ok().or_else(|| tzid.match_indices('/').find_map(|(i, _)| tzid[i + 1..].parse().ok()))
}

/// An RFC 5545 duration: whole days (weeks included) kept apart from the time part, so a day
/// can mean a calendar day.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Dur {
    pub(super) days: i64,
    pub(super) seconds: i64,
}

impl Dur {
    /// Days counted as 24 hours.
    pub(super) fn exact(self) -> Duration {
        Duration::days(self.days) + Duration::seconds(self.seconds)
    }
}

/// `[+|-]P[nW][nD][T[nH][nM][nS]]`, e.g. `-PT15M`, `P1D`, `-P1DT2H30M`; `None` if unreadable.
pub(super) fn parse_duration(text: &str) -> Option<Dur> {
    let text = text.trim();
    let (sign, rest) = match text.as_bytes().first()? {
        b'-' => (-1, &text[1..]),
        b'+' => (1, &text[1..]),
        _ => (1, text),
    };
    let rest = rest.strip_prefix(['P', 'p'])?;
    let (mut days, mut seconds, mut in_time, mut parts) = (0i64, 0i64, false, 0);
    let mut number = String::new();
    for c in rest.chars() {
        match c.to_ascii_uppercase() {
            'T' if !in_time && number.is_empty() => in_time = true,
            d if d.is_ascii_digit() && number.len() < 9 => number.push(d),
            unit => {
                let n: i64 = number.parse().ok()?;
                number.clear();
                parts += 1;
                match (in_time, unit) {
                    (false, 'W') => days += n * 7,
                    (false, 'D') => days += n,
                    (true, 'H') => seconds += n * 3600,
                    (true, 'M') => seconds += n * 60,
                    (true, 'S') => seconds += n,
                    _ => return None,
                }
            }
        }
    }
    (number.is_empty() && parts > 0).then_some(Dur { days: sign * days, seconds: sign * seconds })
}
