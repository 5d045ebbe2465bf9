//! RoutineLearner: recurring patterns in the history: the same topic at the same local hour
//! on at least `min_days` distinct days.
//!
//! A history line counts when it starts with a timestamp, `YYYY-MM-DD HH:MM` (optionally
//! after `- ` or inside `[...]`), in the user's zone; the rest of the line is its text.
//!
//! [`history::HistoryWriter`] appends those lines (one per user message) and keeps the file
//! bounded; [`store::RoutineStore`] learns from it incrementally and keeps the evidence in
//! `routines.json`, so routines survive the history's rotation and its tail window.

pub mod history;
pub mod store;

pub use history::{HistoryError, HistoryWriter};
pub use store::{LearnConfig, RoutineError, RoutineEvidence, RoutineStore};

use crate::policy::topic::topic_of;
use chrono::{NaiveDate, NaiveDateTime, Timelike};
use raven_proto::Routine;
use std::collections::{BTreeMap, BTreeSet};

#[derive(Debug, Clone)]
pub struct RoutineLearner {
    pub min_days: u32,
}

impl Default for RoutineLearner {
    fn default() -> Self {
        RoutineLearner { min_days: 3 }
    }
}

/// The local time and the text of one history line, if it has a timestamp.
pub fn parse_history_line(line: &str) -> Option<(NaiveDateTime, &str)> {
    let l = line.trim_start().trim_start_matches("- ").trim_start_matches('[');
    let stamp = NaiveDateTime::parse_from_str(l.get(..16)?, "%Y-%m-%d %H:%M").ok()?;
    let rest = l[16..].trim_start_matches([']', ':', ' ']);
    Some((stamp, rest))
}

impl RoutineLearner {
    pub fn learn(&self, history: &str) -> Vec<Routine> {
        let mut days: BTreeMap<(String, u8), BTreeSet<NaiveDate>> = BTreeMap::new();
        for (at, text) in history.lines().filter_map(parse_history_line) {
            let topic = topic_of(text);
            if topic == "general" {
                continue;
            }
            days.entry((topic, at.hour() as u8)).or_default().insert(at.date());
        }
        let mut out: Vec<Routine> = days
            .into_iter()
            .filter(|(_, d)| d.len() as u32 >= self.min_days)
            .map(|((topic, hour), d)| Routine {
                topic,
                hour,
                days_seen: d.len() as u32,
                days: raven_proto::RoutineDays::of(&d),
            })
            .collect();
        out.sort_by(|a, b| (a.hour, &a.topic).cmp(&(b.hour, &b.topic)));
        out
    }
}

/// The writer as the agent's history sink: every user message that reaches the agent.
pub struct HistoryHook {
    pub writer: HistoryWriter,
    pub tz: chrono_tz::Tz,
}

impl crate::sessions::HistorySink for HistoryHook {
    fn record(&self, text: &str, at: chrono::DateTime<chrono::Utc>) {
        if let Err(e) = self.writer.record(text, at, self.tz) {
            tracing::warn!("history.md not written: {e}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_topic_same_hour_on_three_days_is_a_routine() {
        let h = "\
- 2026-03-01 09:05 user: took my medication
- 2026-03-02 09:40 user: medication done
[2026-03-03 09:10] user: medication taken
- 2026-03-03 21:00 user: medication again late
- 2026-03-01 14:00 user: lunch with Sam
- 2026-03-02 14:00 user: lunch with Sam
no stamp here
";
        let r = RoutineLearner::default().learn(h);
        assert_eq!(r, vec![Routine { topic: "medication".into(), hour: 9, days_seen: 3, days: Default::default() }]);
    }
}
