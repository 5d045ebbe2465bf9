//! The configured calendar files, each parsed once per change of its (mtime, length) and
//! expanded afresh on every call, for that call's window.

use crate::context::calendar::model::{self, ParsedCalendar};
use crate::context::calendar::{expand, sort_events, CalendarError, CalendarEvent};
use chrono::{DateTime, Utc};
use chrono_tz::Tz;
use std::io::ErrorKind;
use std::path::PathBuf;
use std::time::SystemTime;

/// The configured files, each re-read only when its (mtime, len) changed.
#[derive(Debug)]
pub struct CalendarSources {
    files: Vec<Source>,
    /// How many times a file was read and parsed.
    #[cfg(test)]
    pub(super) parses: usize,
}

#[derive(Debug)]
struct Source {
    path: PathBuf,
    /// `None` while the file is missing (or not yet looked at).
    cached: Option<Cached>,
}

#[derive(Debug)]
struct Cached {
    stamp: Stamp,
    parsed: Result<ParsedCalendar, CalendarError>,
}

/// What tells a changed file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stamp {
    File {
        modified: Option<SystemTime>,
        len: u64,
    },
    /// Its metadata could not be read.
    Unreadable(ErrorKind),
}

impl CalendarSources {
    pub fn new(paths: Vec<PathBuf>) -> Self {
        CalendarSources {
            files: paths.into_iter().map(|path| Source { path, cached: None }).collect(),
            #[cfg(test)]
            parses: 0,
        }
    }

    /// All events of all files within [from, until), sorted by start; a missing file gives no events and no error;
    /// a malformed or unreadable file gives its error in the second list (logged once per change with tracing::warn!
    /// naming file and line) while the other files' events are still returned. A file that was fine and then became
    /// malformed keeps giving nothing from that file (not stale events) until fixed.
    pub fn events(
        &mut self,
        tz: Tz,
        from: DateTime<Utc>,
        until: DateTime<Utc>,
    ) -> (Vec<CalendarEvent>, Vec<CalendarError>) {
        let (mut events, mut errors) = (Vec::new(), Vec::new());
        for source in &mut self.files {
            if source.refresh() {
                #[cfg(test)]
                {
                    self.parses += 1;
                }
            }
            match source.cached.as_ref().map(|c| &c.parsed) {
                None => {}
                Some(Ok(parsed)) => events.extend(expand::occurrences(parsed, &source.path, tz, from, until)),
                Some(Err(error)) => errors.push(error.duplicate()),
            }
        }
        sort_events(&mut events);
        (events, errors)
    }
}

impl Source {
    /// Re-reads the file if it changed since last time; true if it did.
    fn refresh(&mut self) -> bool {
        // Looked at before reading, so a write racing the read shows as a change next time.
        let (stamp, stat_error) = match std::fs::metadata(&self.path) {
            Ok(meta) => (Stamp::File { modified: meta.modified().ok(), len: meta.len() }, None),
            Err(e) if e.kind() == ErrorKind::NotFound => {
                self.cached = None;
                return false;
            }
            Err(e) => (Stamp::Unreadable(e.kind()), Some(e)),
        };
        if self.cached.as_ref().is_some_and(|c| c.stamp == stamp) {
            return false;
        }
        let parsed = match stat_error {
            Some(source) => Err(CalendarError::Io { path: self.path.clone(), source }),
            None => match std::fs::read(&self.path) {
                Ok(bytes) => model::parse(&String::from_utf8_lossy(&bytes), &self.path),
                Err(e) if e.kind() == ErrorKind::NotFound => {
                    self.cached = None;
                    return false;
                }
                Err(source) => Err(CalendarError::Io { path: self.path.clone(), source }),
            },
        };
        match &parsed {
            Err(CalendarError::Io { path, source }) => {
                tracing::warn!(file = %path.display(), error = %source, "calendar: file cannot be read")
            }
            Err(CalendarError::Malformed { path, line, message }) => {
                tracing::warn!(file = %path.display(), line = *line, "calendar: file skipped: {message}")
            }
            Ok(_) => {}
        }
        self.cached = Some(Cached { stamp, parsed });
        true
    }
}
