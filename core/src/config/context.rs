//! `[context]`: what the ContextAssembler reads (notes, history, calendar, behaviours).

use serde::{Deserialize, Serialize};

/// What the ContextAssembler reads (spec §3).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ContextConfig {
    /// Bytes of the end of history.md handed to the Planner.
    pub history_tail_bytes: usize,
    /// A session is active when its last message is this recent.
    pub active_window_minutes: i64,
    /// The H2 sections of attention.md the Planner sees.
    pub attention_sections: Vec<String>,
    /// Events of behaviors.md in the folded tail.
    pub behaviors_tail_events: usize,
    /// Distinct days a topic must recur at one hour to count as a routine.
    pub routine_min_days: u32,
    /// The DailyAnalysisService: one LLM call a day shared by the LLM-backed attention
    /// producers. Off by default.
    pub daily_analysis: bool,
    /// The idle-triggered extractor of behaviors.md (off by default; needs an LLM).
    pub behaviors: BehaviorsConfig,
    /// One line per user message in workspace/history.md (what routines are learned from).
    pub history_enabled: bool,
    /// A routine unseen for this many days is forgotten.
    pub routine_forget_days: u32,
    /// The user's own calendar files.
    pub calendar: CalendarConfig,
}

/// `[context.calendar]`: iCalendar files whose events are announced before they start.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct CalendarConfig {
    /// `.ics` files, relative to the data dir (or absolute). A missing file has no events.
    pub paths: Vec<String>,
    /// How long before an event without its own alarm (VALARM) it is announced.
    pub notice_minutes: i64,
    /// How far ahead events are read.
    pub horizon_days: i64,
}

impl Default for CalendarConfig {
    fn default() -> Self {
        CalendarConfig { paths: vec!["workspace/calendar.ics".into()], notice_minutes: 60, horizon_days: 14 }
    }
}

impl Default for ContextConfig {
    fn default() -> Self {
        ContextConfig {
            history_tail_bytes: 16 * 1024,
            active_window_minutes: 30,
            attention_sections: ["Upcoming deadlines", "Today's plan", "Recent engagement", "Routines", "Daily focus"]
                .map(String::from)
                .to_vec(),
            behaviors_tail_events: 20,
            routine_min_days: 3,
            daily_analysis: false,
            behaviors: Default::default(),
            history_enabled: true,
            routine_forget_days: 14,
            calendar: CalendarConfig::default(),
        }
    }
}

/// `[context.behaviors]`: the idle-triggered extractor of behaviors.md.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct BehaviorsConfig {
    /// The extractor runs only when enabled (off by default): it costs one model call per
    /// settled session.
    pub enabled: bool,
    /// A session counts as settled, and is extracted, after this many minutes without a
    /// message.
    pub idle_minutes: u64,
    /// Messages of one session in one extraction at most; the rest wait for the next run.
    pub max_messages: usize,
}

impl Default for BehaviorsConfig {
    fn default() -> Self {
        BehaviorsConfig { enabled: false, idle_minutes: 30, max_messages: 40 }
    }
}
