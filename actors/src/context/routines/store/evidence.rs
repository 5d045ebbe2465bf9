//! The evidence of each (topic, local hour): the distinct local days it was seen on, the
//! first and the last; and the book of all of them that a learn folds history lines into.
//!
//! Everything here is idempotent: seeing a line twice changes nothing, so the history can
//! be read again from its start whenever its cursor no longer fits.

use super::super::parse_history_line;
use super::Routine;
use crate::policy::topic::topic_of;
use chrono::{NaiveDate, Timelike};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};

/// The most recent distinct days kept per routine; older ones are dropped (the count of a
/// routine seen for longer stays at this).
pub const MAX_DAYS: usize = 60;

/// What is known about one (topic, local hour).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RoutineEvidence {
    pub topic: String,
    /// Local hour, 0-23.
    pub hour: u8,
    /// The first local day it was ever seen (kept when that day leaves `days`).
    pub first_seen: NaiveDate,
    /// The last local day it was seen.
    pub last_seen: NaiveDate,
    /// The distinct local days it was seen on, at most the [`MAX_DAYS`] most recent.
    pub days: BTreeSet<NaiveDate>,
}

impl RoutineEvidence {
    fn new(topic: String, hour: u8, day: NaiveDate) -> Self {
        RoutineEvidence { topic, hour, first_seen: day, last_seen: day, days: BTreeSet::from([day]) }
    }

    #[cfg(test)]
    pub fn days_seen(&self) -> u32 {
        u32::try_from(self.days.len()).unwrap_or(u32::MAX)
    }

    fn see(&mut self, day: NaiveDate) {
        self.first_seen = self.first_seen.min(day);
        self.last_seen = self.last_seen.max(day);
        self.days.insert(day);
        self.cap();
    }

    fn merge(&mut self, other: RoutineEvidence) {
        self.first_seen = self.first_seen.min(other.first_seen);
        self.last_seen = self.last_seen.max(other.last_seen);
        self.days.extend(other.days);
        self.cap();
    }

    fn cap(&mut self) {
        while self.days.len() > MAX_DAYS {
            self.days.pop_first();
        }
        if let (Some(first), Some(last)) = (self.days.first(), self.days.last()) {
            self.first_seen = self.first_seen.min(*first);
            self.last_seen = self.last_seen.max(*last);
        }
    }
}

/// The routines of `evidence` seen on at least `min_days` days, sorted by (hour, topic). A
/// topic seen at neighbouring hours is one routine (a habit at 19:00 give or take a few minutes
/// falls on 18 and 19): at the hour it was seen on most days (the earlier on a tie), with the
/// days of all of them, so its weekdays are told as well as a punctual one's.
pub fn routines(evidence: &[RoutineEvidence], min_days: u32) -> Vec<Routine> {
    let mut by_topic: BTreeMap<&str, Vec<&RoutineEvidence>> = BTreeMap::new();
    for e in evidence {
        by_topic.entry(&e.topic).or_default().push(e);
    }
    let mut out = Vec::new();
    for (topic, mut hours) in by_topic {
        hours.sort_by_key(|e| e.hour);
        for run in hours.chunk_by(|a, b| b.hour == a.hour + 1) {
            let days: BTreeSet<NaiveDate> = run.iter().flat_map(|e| e.days.iter().copied()).collect();
            let days_seen = u32::try_from(days.len()).unwrap_or(u32::MAX);
            if days_seen < min_days {
                continue;
            }
            let main =
                run.iter().max_by_key(|e| (e.days.len(), std::cmp::Reverse(e.hour))).expect("a run is not empty");
            let pattern = raven_proto::RoutineDays::of(&days);
            out.push(Routine { topic: topic.to_owned(), hour: main.hour, days_seen, days: pattern });
        }
    }
    out.sort_by(|a, b| (a.hour, &a.topic).cmp(&(b.hour, &b.topic)));
    out
}

/// All the evidence, keyed and ordered by (hour, topic).
#[derive(Debug, Default)]
pub(super) struct Book {
    by_key: BTreeMap<(u8, String), RoutineEvidence>,
}

impl Book {
    /// The book of `evidence`, merging entries of one key and capping their days.
    pub(super) fn new(evidence: Vec<RoutineEvidence>) -> Self {
        let mut book = Book::default();
        for mut e in evidence {
            e.cap();
            match book.by_key.entry((e.hour, e.topic.clone())) {
                std::collections::btree_map::Entry::Vacant(v) => {
                    v.insert(e);
                }
                std::collections::btree_map::Entry::Occupied(mut o) => o.get_mut().merge(e),
            }
        }
        book
    }

    /// Adds one history line: its topic at its local hour on its local day. Lines without a
    /// stamp and lines of no particular topic (`general`) are no evidence.
    pub(super) fn see_line(&mut self, line: &str) {
        let Some((at, text)) = parse_history_line(line.trim_end()) else {
            return;
        };
        let topic = topic_of(text);
        if topic == "general" {
            return;
        }
        let key = (at.hour() as u8, topic);
        match self.by_key.get_mut(&key) {
            Some(e) => e.see(at.date()),
            None => {
                let e = RoutineEvidence::new(key.1.clone(), key.0, at.date());
                self.by_key.insert(key, e);
            }
        }
    }

    /// Drops what was last seen `forget_days` or more local days before `today`.
    pub(super) fn forget(&mut self, today: NaiveDate, forget_days: u32) {
        self.by_key.retain(|_, e| (today - e.last_seen).num_days() < i64::from(forget_days));
    }

    pub(super) fn into_vec(self) -> Vec<RoutineEvidence> {
        self.by_key.into_values().collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::Datelike;

    fn day(d: u32) -> NaiveDate {
        NaiveDate::from_ymd_opt(2026, 3, d).unwrap()
    }

    /// Gym at 19:00 give or take five minutes, on weekdays only, over three weeks: one routine
    /// at 19 (its most frequent hour) that keeps to weekdays, although neither hour alone was
    /// seen on most weekdays.
    #[test]
    fn a_topic_at_neighbouring_hours_is_one_routine_with_the_days_of_both() {
        let mut at_18 = RoutineEvidence::new("gym".into(), 18, day(2));
        let mut at_19 = RoutineEvidence::new("gym".into(), 19, day(3));
        let weekdays = (2..=20).map(day).filter(|d| d.weekday().number_from_monday() <= 5);
        for (i, d) in weekdays.enumerate() {
            if i % 5 < 2 {
                at_18.see(d)
            } else {
                at_19.see(d)
            }
        }
        let tea = RoutineEvidence { hour: 7, ..RoutineEvidence::new("tea".into(), 7, day(2)) };
        let got = routines(&[tea, at_18, at_19], 3);
        assert_eq!(got.len(), 1, "tea was seen once: {got:?}");
        assert_eq!((got[0].topic.as_str(), got[0].hour, got[0].days_seen), ("gym", 19, 15));
        assert_eq!(got[0].days, raven_proto::RoutineDays::Weekdays);
    }

    #[test]
    fn seeing_a_line_again_changes_nothing() {
        let mut book = Book::default();
        for line in ["2026-03-01 09:05 medication", "2026-03-01 09:55 medication again", "hello", "2026-03-02 09:00 hi"]
        {
            book.see_line(line);
            book.see_line(line);
        }
        let v = book.into_vec();
        assert_eq!(v.len(), 1);
        assert_eq!((v[0].topic.as_str(), v[0].hour, v[0].days_seen()), ("medication", 9, 1));
    }

    #[test]
    fn days_are_capped_to_the_most_recent_and_first_seen_is_kept() {
        let mut book = Book::default();
        let start = NaiveDate::from_ymd_opt(2026, 1, 1).unwrap();
        let all: Vec<NaiveDate> = start.iter_days().take(MAX_DAYS + 10).collect();
        for d in all.iter().rev() {
            book.see_line(&format!("{} 07:30 running", d.format("%Y-%m-%d")));
        }
        let e = &book.into_vec()[0];
        assert_eq!(e.days.len(), MAX_DAYS);
        assert_eq!(e.days.first(), all.get(10));
        assert_eq!((e.first_seen, e.last_seen), (all[0], all[MAX_DAYS + 9]));
    }

    #[test]
    fn duplicate_entries_of_a_hand_edited_file_merge() {
        let a = RoutineEvidence::new("water".into(), 8, day(1));
        let b = RoutineEvidence::new("water".into(), 8, day(3));
        let v = Book::new(vec![b, a]).into_vec();
        assert_eq!(v.len(), 1);
        assert_eq!(v[0].days, BTreeSet::from([day(1), day(3)]));
        assert_eq!((v[0].first_seen, v[0].last_seen), (day(1), day(3)));
    }
}
