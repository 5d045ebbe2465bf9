//! The routine learner: recurring patterns in the history: the same topic at the same local
//! hour on at least `min_days` distinct days.
//!
//! A history line counts when it starts with a timestamp, `YYYY-MM-DD HH:MM` (optionally
//! after `- ` or inside `[...]`), in the user's zone; the rest of the line is its text.
//!
//! [`history::HistoryWriter`] appends those lines (one per user message) and keeps the file
//! bounded; [`store::RoutineStore`] learns from it incrementally and keeps the evidence in
//! `routines.json`, so routines survive the history's rotation and its tail window.

pub(crate) mod history;
pub(crate) mod store;

pub use history::HistoryWriter;
pub use store::{LearnConfig, RoutineError, RoutineStore};

use chrono::NaiveDateTime;
use raven_proto::Routine;

/// The local time and the text of one history line, if it has a timestamp.
pub fn parse_history_line(line: &str) -> Option<(NaiveDateTime, &str)> {
    let l = line.trim_start().trim_start_matches("- ").trim_start_matches('[');
    let stamp = NaiveDateTime::parse_from_str(l.get(..16)?, "%Y-%m-%d %H:%M").ok()?;
    let rest = l[16..].trim_start_matches([']', ':', ' ']);
    Some((stamp, rest))
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
