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

    /// The one window covering both, when they overlap or touch; `None` when a gap lies between
    /// them on both sides. A union that covers the whole day is `00:00-23:59`.
    pub fn union(&self, other: &Window) -> Option<Window> {
        let day = 24 * 60;
        let inside = |m: u32| self.contains_minute(m % day) || other.contains_minute(m % day);
        if (0..day).all(inside) {
            return Some(Window::new(TimeOfDay::hm(0, 0), TimeOfDay::hm(23, 59)));
        }
        // The union is one window when exactly one minute starts a run of quiet minutes.
        let starts: Vec<u32> = (0..day).filter(|&m| inside(m) && !inside(m + day - 1)).collect();
        let [start] = starts[..] else { return None };
        let len = (start..start + day).take_while(|&m| inside(m)).count() as u32;
        let at = |m: u32| TimeOfDay::hm((m % day) / 60, m % 60);
        Some(Window::new(at(start), at(start + len)))
    }

    /// True when every minute of `other` is also in `self` (so `self` is at least as wide).
    #[cfg(test)]
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
    fn windows_that_overlap_or_touch_unite_and_separate_ones_do_not() {
        let w = |a: u32, b: u32, c: u32, d: u32| Window::new(TimeOfDay::hm(a, b), TimeOfDay::hm(c, d));
        let night = w(23, 0, 7, 0);
        assert_eq!(night.union(&w(22, 30, 6, 0)), Some(w(22, 30, 7, 0)));
        assert_eq!(night.union(&w(6, 0, 8, 0)), Some(w(23, 0, 8, 0)));
        assert_eq!(night.union(&w(7, 0, 8, 0)), Some(w(23, 0, 8, 0)), "touching windows join");
        assert_eq!(night.union(&w(1, 0, 2, 0)), Some(night));
        assert_eq!(night.union(&w(13, 0, 14, 0)), None);
        assert_eq!(night.union(&w(6, 0, 23, 30)), Some(w(0, 0, 23, 59)), "the whole day");
    }

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
