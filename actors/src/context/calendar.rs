//! The user's calendars: iCalendar (.ics) files read into a flat list of the events that start
//! within a window, each recurring event expanded into its occurrences.
//!
//! ```text
//! parse_ics(text, path, tz, from, until)     one file's text -> its occurrences in [from, until)
//! CalendarSources::events(tz, from, until)   the configured files, each re-read only when changed
//! ```
//!
//! How a file is read, in three steps, each in its own submodule:
//! - `lines`: the text is unfolded into content lines, each remembering the 1-based line of
//!   the file it starts on, and its shape is checked (a `VCALENDAR` at the top, every `BEGIN`
//!   closed by its `END`, every line `NAME[;PARAMS]:VALUE`). The `icalendar` crate then parses
//!   the unfolded text into components.
//! - `model`: every `VEVENT` becomes an `EventSpec` that does not depend on the
//!   user's zone (dates, zones, rules and alarms as written), so a file is parsed once per
//!   change and only expanded per call, for a window that moves with time.
//! - `expand`: the `rrule` crate expands `RRULE`, `RDATE` and `EXDATE` in the event's own zone
//!   (so 09:00 Paris stays 09:00 across a DST change); `RECURRENCE-ID` overrides replace their
//!   occurrence, cancelled ones drop it. At most 1000 occurrences per event
//!   within the window, and at most 100 000 steps through a rule in all, so it is always bounded.
//!
//! Times: a `Z` time is UTC, a `TZID=` time is in that zone (an IANA name, found also at the end
//! of a path like `/mozilla.org/.../Europe/Paris`; any other name, such as one only defined by
//! the file's `VTIMEZONE`, falls back to the user's zone with a warning), a time with neither
//! is floating and read in the user's zone, and a date (`VALUE=DATE`) is an all-day event from
//! local midnight in the user's zone.
//!
//! Errors are per file and visible: a file that is not a `VCALENDAR`, or any `VEVENT` with a
//! date, duration, rule or alarm trigger that cannot be read (or no `DTSTART`), makes the whole
//! file [`CalendarError::Malformed`], naming the line, rather than quietly dropping one event.
//! A missing file is simply empty.
//!
//! Not read: `VTIMEZONE` definitions (zones are known by IANA name only), `RANGE=THISANDFUTURE`
//! on an override (it replaces its one occurrence), `EXRULE`.

mod expand;
mod hook;
mod lines;
mod model;
mod sources;
#[cfg(test)]
mod tests;
mod values;

use chrono::{DateTime, Utc};
use std::path::{Path, PathBuf};

pub use hook::calendar_hook;
pub use sources::CalendarSources;

/// One occurrence of an event (a recurring event gives one per occurrence).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CalendarEvent {
    pub uid: String,
    /// `SUMMARY`, unescaped and trimmed; `(untitled event)` when missing.
    pub title: String,
    pub start: DateTime<Utc>,
    pub end: Option<DateTime<Utc>>,
    /// Written as a date: starts (and ends) at local midnight in the user's zone.
    pub all_day: bool,
    /// How long before the start the event's first usable alarm rings.
    pub notice: Option<chrono::Duration>,
    pub location: Option<String>,
    /// The file it was read from.
    pub source: PathBuf,
}

#[derive(Debug, thiserror::Error)]
pub enum CalendarError {
    /// The file exists but could not be read (never raised for a missing file).
    #[error("cannot read calendar {}: {source}", path.display())]
    Io { path: PathBuf, source: std::io::Error },
    /// The file is not a readable iCalendar file; `line` is 1-based, of the offending line.
    #[error("malformed calendar {}, line {line}: {message}", path.display())]
    Malformed { path: PathBuf, line: usize, message: String },
}

impl CalendarError {
    /// The same error again, for a cached file that is reported on every call.
    fn duplicate(&self) -> CalendarError {
        match self {
            CalendarError::Io { path, source } => {
                CalendarError::Io { path: path.clone(), source: std::io::Error::new(source.kind(), source.to_string()) }
            }
            CalendarError::Malformed { path, line, message } => {
                CalendarError::Malformed { path: path.clone(), line: *line, message: message.clone() }
            }
        }
    }
}

/// Where in a file something is wrong, before it is tied to the file's path.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Bad {
    line: usize,
    message: String,
}

impl Bad {
    fn new(line: usize, message: impl Into<String>) -> Bad {
        Bad { line, message: message.into() }
    }

    fn at(self, path: &Path) -> CalendarError {
        CalendarError::Malformed { path: path.to_path_buf(), line: self.line, message: self.message }
    }
}

/// Pure: events of one file's text whose occurrence starts within [from, until).
#[cfg(test)]
pub fn parse_ics(
    text: &str,
    path: &Path,
    tz: chrono_tz::Tz,
    from: DateTime<Utc>,
    until: DateTime<Utc>,
) -> Result<Vec<CalendarEvent>, CalendarError> {
    let parsed = model::parse(text, path)?;
    let mut events = expand::occurrences(&parsed, path, tz, from, until);
    sort_events(&mut events);
    Ok(events)
}

/// By start, then title.
fn sort_events(events: &mut [CalendarEvent]) {
    events.sort_by(|a, b| a.start.cmp(&b.start).then_with(|| a.title.cmp(&b.title)));
}
