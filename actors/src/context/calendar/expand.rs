//! From a parsed file to the occurrences starting within a window, in the user's zone.
//!
//! A recurring event is expanded by the `rrule` crate in the event's own frame: its `TZID`
//! zone (so the wall-clock time holds across DST), the user's zone for a floating time, UTC
//! for a `Z` time, and dates as UTC midnights for an all-day event (each date then starting at
//! local midnight in the user's zone). Overrides (`RECURRENCE-ID`) replace the occurrence they
//! name: moved, renamed, or gone when cancelled. Fields an override leaves out (title,
//! location, length, alarms) are the series'. An absolute alarm time only counts for an event
//! that does not recur (one moment cannot be "15 minutes before" every occurrence).

use crate::context::calendar::model::{EventSpec, Length, ParsedCalendar, Trigger};
use crate::context::calendar::values::{local_instant, When};
use crate::context::calendar::CalendarEvent;
use chrono::{DateTime, Duration, NaiveTime, TimeZone, Utc};
use chrono_tz::Tz;
use rrule::{RRule, RRuleSet, Validated};
use std::collections::HashMap;
use std::path::Path;

/// At most this many occurrences of one event within a window.
pub(super) const MAX_OCCURRENCES: usize = 1000;
/// At most this many steps through one event's rule, from its start to the window's end
/// (so an old every-second rule cannot run for ever).
pub(super) const MAX_STEPS: usize = 100_000;

const UNTITLED: &str = "(untitled event)";

/// Every occurrence of `calendar`'s events that starts within [from, until), unsorted.
pub(super) fn occurrences(
    calendar: &ParsedCalendar,
    path: &Path,
    tz: Tz,
    from: DateTime<Utc>,
    until: DateTime<Utc>,
) -> Vec<CalendarEvent> {
    let mut series: HashMap<&str, &EventSpec> = HashMap::new();
    let mut overrides: HashMap<&str, Vec<&EventSpec>> = HashMap::new();
    for event in &calendar.events {
        if event.recurrence_id.is_some() {
            overrides.entry(&event.uid).or_default().push(event);
        } else {
            series.entry(&event.uid).or_insert(event);
        }
    }
    let mut out = Vec::new();
    for event in calendar.events.iter().filter(|e| e.recurrence_id.is_none() && !e.cancelled) {
        let all_day = is_all_day(event);
        let replaced: Vec<DateTime<Utc>> = overrides
            .get(event.uid.as_str())
            .into_iter()
            .flatten()
            .filter_map(|o| o.recurrence_id)
            .map(|id| if all_day { When::Date(id.day(tz)).instant(tz) } else { id.instant(tz) })
            .collect();
        for start in starts(event, path, tz, from, until) {
            if !replaced.contains(&start) {
                out.push(occurrence(event, None, start, tz, path));
            }
        }
    }
    for (uid, moved) in &overrides {
        let parent = series.get(uid).copied();
        if parent.is_some_and(|p| p.cancelled) {
            continue;
        }
        for event in moved.iter().filter(|e| !e.cancelled) {
            let start = event.start.instant(tz);
            if from <= start && start < until {
                out.push(occurrence(event, parent, start, tz, path));
            }
        }
    }
    out
}

fn is_all_day(event: &EventSpec) -> bool {
    matches!(event.start, When::Date(_))
}

/// The zone an event's rule runs in.
fn frame(event: &EventSpec, tz: Tz) -> Tz {
    match event.start {
        When::Zoned(_, zone) => zone,
        When::Floating(_) => tz,
        When::Utc(_) | When::Date(_) => chrono_tz::UTC,
    }
}

/// Midnight UTC of `when`'s day in `tz`: how an all-day event's dates are counted.
fn day_point(when: When, tz: Tz) -> DateTime<Utc> {
    Utc.from_utc_datetime(&when.day(tz).and_time(NaiveTime::MIN))
}

/// The starts of `event`'s occurrences (its own start alone when it does not recur) within
/// [from, until), ascending.
fn starts(event: &EventSpec, path: &Path, tz: Tz, from: DateTime<Utc>, until: DateTime<Utc>) -> Vec<DateTime<Utc>> {
    let all_day = is_all_day(event);
    let zone = frame(event, tz);
    let point = |when: When| -> DateTime<rrule::Tz> {
        let at = if all_day { day_point(when, tz) } else { when.instant(tz) };
        at.with_timezone(&rrule::Tz::UTC)
    };
    let dt_start = point(event.start).with_timezone(&rrule::Tz::from(zone));
    let mut set = RRuleSet::new(dt_start);
    set = match rule(event, dt_start, tz, path) {
        Some(rule) => set.rrule(rule),
        None => set.rdate(dt_start),
    };
    set = event.rdates.iter().fold(set, |set, when| set.rdate(point(*when)));
    set = event.exdates.iter().fold(set, |set, when| set.exdate(point(*when)));

    // An all-day date's local midnight is within a day of its UTC midnight.
    let (low, high) = (from - Duration::days(2), until + Duration::days(2));
    let set = set.limit();
    let mut out: Vec<DateTime<Utc>> = Vec::new();
    for (step, at) in set.into_iter().enumerate() {
        let at_utc = at.with_timezone(&Utc);
        if at_utc >= high {
            break;
        }
        if step >= MAX_STEPS || out.len() >= MAX_OCCURRENCES {
            tracing::debug!(file = %path.display(), uid = %event.uid, "calendar: occurrences cut short");
            break;
        }
        if at_utc < low {
            continue;
        }
        let start = if all_day { When::Date(at.date_naive()).instant(tz) } else { at_utc };
        if from <= start && start < until && out.last() != Some(&start) {
            out.push(start);
        }
    }
    out
}

/// `event`'s rule, ready to run from `dt_start`; `None` when it has none, or one that cannot
/// give more than its start (an `UNTIL` before it, a rule the crate refuses: logged).
fn rule(event: &EventSpec, dt_start: DateTime<rrule::Tz>, tz: Tz, path: &Path) -> Option<RRule<Validated>> {
    let spec = event.rule.as_ref()?;
    let mut rule = spec.rule.clone();
    if let Some(until) = spec.until {
        let zone = frame(event, tz);
        let until = match until {
            _ if is_all_day(event) => day_point(until, tz),
            When::Date(day) => {
                local_instant(zone, day.and_time(NaiveTime::MIN) + Duration::days(1) - Duration::seconds(1))
            }
            When::Floating(at) => local_instant(zone, at),
            other => other.instant(tz),
        };
        if until < dt_start {
            return None;
        }
        rule = rule.until(until.with_timezone(&rrule::Tz::UTC));
    }
    match rule.validate(dt_start) {
        Ok(rule) => Some(rule),
        Err(e) => {
            tracing::warn!(file = %path.display(), uid = %event.uid, error = %e, "calendar: RRULE not expanded");
            None
        }
    }
}

/// The occurrence of `event` (of the series `parent`, for an override) starting at `start`.
fn occurrence(
    event: &EventSpec,
    parent: Option<&EventSpec>,
    start: DateTime<Utc>,
    tz: Tz,
    path: &Path,
) -> CalendarEvent {
    // The length as written, with the start it was written against.
    let (first, length) = match parent {
        Some(parent) if event.length.is_none() => (parent.start, parent.length),
        _ => (event.start, event.length),
    };
    let end = end(is_all_day(event), first, length, start, tz);
    let alarms = match parent {
        Some(parent) if event.alarms.is_empty() => &parent.alarms,
        _ => &event.alarms,
    };
    let recurs = event.rule.is_some() || !event.rdates.is_empty();
    let title = event.title.as_ref().or(parent.and_then(|p| p.title.as_ref()));
    CalendarEvent {
        uid: event.uid.clone(),
        title: title.map_or(UNTITLED, String::as_str).to_owned(),
        start,
        end,
        all_day: is_all_day(event),
        notice: notice(alarms, start, end, tz, recurs),
        location: event.location.clone().or_else(|| parent.and_then(|p| p.location.clone())),
        source: path.to_path_buf(),
    }
}

/// The end of an occurrence starting at `start`, `length` being written against `first`:
/// all-day events end at a local midnight (a day after the start when no end is written),
/// others keep the written length, or have no end.
fn end(all_day: bool, first: When, length: Option<Length>, start: DateTime<Utc>, tz: Tz) -> Option<DateTime<Utc>> {
    if all_day {
        let days = match length {
            Some(Length::Until(end)) => (end.day(tz) - first.day(tz)).num_days(),
            Some(Length::For(d)) => d.days + i64::from(d.seconds > 0),
            None => 1,
        };
        let day = start.with_timezone(&tz).date_naive() + Duration::days(days.max(1));
        return Some(When::Date(day).instant(tz));
    }
    let length = match length? {
        Length::Until(end) => end.instant(tz) - first.instant(tz),
        Length::For(d) => d.exact(),
    };
    Some(start + length.max(Duration::zero()))
}

/// How long before `start` the first alarm that rings before it (or, relative to the start,
/// at it) rings.
fn notice(
    alarms: &[Trigger],
    start: DateTime<Utc>,
    end: Option<DateTime<Utc>>,
    tz: Tz,
    recurs: bool,
) -> Option<Duration> {
    let before = |at: DateTime<Utc>| (at < start).then(|| start - at);
    alarms.iter().find_map(|alarm| match *alarm {
        Trigger::Start(offset) => (offset <= Duration::zero()).then(|| -offset),
        Trigger::End(offset) => before(end.unwrap_or(start) + offset),
        Trigger::At(at) if !recurs => before(at.instant(tz)),
        Trigger::At(_) => None,
    })
}
