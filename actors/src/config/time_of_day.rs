//! `"HH:MM"` times of day and windows over midnight, read from config.

use chrono::{NaiveTime, Timelike};
use serde::{de, Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct TimeOfDay(pub NaiveTime);

impl TimeOfDay {
    pub fn hm(h: u32, m: u32) -> Self {
        TimeOfDay(NaiveTime::from_hms_opt(h, m, 0).expect("valid time"))
    }

    pub fn minute_of_day(self) -> u32 {
        self.0.hour() * 60 + self.0.minute()
    }
}

impl fmt::Display for TimeOfDay {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0.format("%H:%M"))
    }
}

impl Serialize for TimeOfDay {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.to_string())
    }
}

impl<'de> Deserialize<'de> for TimeOfDay {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        NaiveTime::parse_from_str(s.trim(), "%H:%M")
            .map(TimeOfDay)
            .map_err(|_| de::Error::custom(format!("`{s}` is not a time of day; write it as \"HH:MM\"")))
    }
}

/// `[start, end)` in local time; `end <= start` wraps over midnight (23:00–07:00).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Window {
    pub start: TimeOfDay,
    pub end: TimeOfDay,
}

impl Window {
    pub fn new(start: TimeOfDay, end: TimeOfDay) -> Self {
        Window { start, end }
    }

    pub fn contains_minute(&self, minute: u32) -> bool {
        let (s, e) = (self.start.minute_of_day(), self.end.minute_of_day());
        if s == e {
            false
        } else if s < e {
            (s..e).contains(&minute)
        } else {
            minute >= s || minute < e
        }
    }

    pub fn contains(&self, t: NaiveTime) -> bool {
        self.contains_minute(t.hour() * 60 + t.minute())
    }

    /// True when every minute of `other` is also in `self` (so `self` is at least as wide).
    pub fn covers(&self, other: &Window) -> bool {
        (0..24 * 60).all(|m| !other.contains_minute(m) || self.contains_minute(m))
    }
}

impl fmt::Display for Window {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}-{}", self.start, self.end)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn windows_wrap_over_midnight() {
        let q = Window::new(TimeOfDay::hm(23, 0), TimeOfDay::hm(7, 0));
        assert!(q.contains_minute(23 * 60));
        assert!(q.contains_minute(3 * 60));
        assert!(!q.contains_minute(7 * 60));
        assert!(!q.contains_minute(12 * 60));
        let wider = Window::new(TimeOfDay::hm(22, 0), TimeOfDay::hm(8, 0));
        assert!(wider.covers(&q));
        assert!(!q.covers(&wider));
    }
}
