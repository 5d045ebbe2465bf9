//! The Planner's only input (spec §1, §3): one packaged context built by the ContextAssembler.

use crate::decision::PlannerDecision;
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ActiveSession {
    /// `"channel:chat_id"`.
    pub session_key: String,
    pub last_active: DateTime<Utc>,
    pub last_user_message: Option<String>,
    pub last_assistant_message: Option<String>,
}

impl ActiveSession {
    /// A chat other people read: a Telegram group, supergroup or channel (its chat id is
    /// negative). What comes from the user's private notes is never sent there unasked.
    pub fn is_group(&self) -> bool {
        let (channel, chat) = crate::split_target(&self.session_key);
        channel == "telegram" && chat.starts_with('-')
    }
}

/// The most recently active conversation that only the user reads (no group): where a
/// proactive message from the user's own notes goes.
pub fn latest_private(sessions: &[ActiveSession]) -> Option<&ActiveSession> {
    sessions.iter().filter(|s| !s.is_group()).max_by_key(|s| s.last_active)
}

/// A candidate recurring pattern found by the RoutineLearner.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Routine {
    pub topic: String,
    /// Hour of day (user's zone) at which it recurs.
    pub hour: u8,
    /// On how many distinct days it was seen.
    pub days_seen: u32,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CalendarEntry {
    pub title: String,
    pub starts_at: DateTime<Utc>,
    pub ends_at: Option<DateTime<Utc>>,
    /// A whole-day event (starts at local midnight).
    #[serde(default)]
    pub all_day: bool,
    /// How long before the start it is announced (its alarm, else the configured notice).
    #[serde(default)]
    pub notice_minutes: Option<i64>,
}

/// What the Planner may know of the gate: remaining quota and quiet-hours state.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PolicySnapshot {
    pub in_quiet_hours: bool,
    /// A high-priority nudge may still go out in quiet hours (the bypass is not withdrawn for
    /// a low acceptance of high-priority nudges).
    #[serde(default)]
    pub quiet_bypass_open: bool,
    pub quiet_hours: String,
    pub remaining_today: u32,
    pub remaining_this_hour: u32,
    pub spawn_remaining_today: u32,
    /// The learned hour-quota multiplier; a soft signal for the Planner's own threshold.
    pub adaptive_multiplier: f64,
    /// 1.0 on weekdays; the weekend tightener otherwise.
    pub weekend_factor: f64,
    pub dismissal_cooldown_until: Option<DateTime<Utc>>,
}

impl Default for PolicySnapshot {
    fn default() -> Self {
        PolicySnapshot {
            in_quiet_hours: false,
            quiet_bypass_open: true,
            quiet_hours: String::new(),
            remaining_today: 0,
            remaining_this_hour: 0,
            spawn_remaining_today: 0,
            adaptive_multiplier: 1.0,
            weekend_factor: 1.0,
            dismissal_cooldown_until: None,
        }
    }
}

/// What was recently fired on one topic and how the user reacted.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct TopicFireHistory {
    pub fired: u32,
    pub last_fired: Option<DateTime<Utc>>,
    pub dismissed: u32,
    pub accepted: u32,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PlannerContext {
    pub now: DateTime<Utc>,
    /// The user's IANA zone: the Planner reads "now" and every time in it.
    pub timezone: String,
    /// Shared, not copied: MEMORY.md can be megabytes, and a tick hands it to several readers.
    pub memory_md: std::sync::Arc<str>,
    pub history_md_recent: String,
    pub active_sessions: Vec<ActiveSession>,
    pub routines: Vec<Routine>,
    pub calendar: Vec<CalendarEntry>,
    pub nudge_policy_state: PolicySnapshot,
    pub last_decision: Option<PlannerDecision>,
    pub fire_history: BTreeMap<String, TopicFireHistory>,
    pub attention_md: String,
    pub behaviors_recent: String,
}

impl PlannerContext {
    /// The context with every field at its "source missing" default (spec §3 table).
    pub fn empty(now: DateTime<Utc>) -> Self {
        PlannerContext {
            now,
            timezone: "UTC".into(),
            memory_md: std::sync::Arc::from(""),
            history_md_recent: String::new(),
            active_sessions: Vec::new(),
            routines: Vec::new(),
            calendar: Vec::new(),
            nudge_policy_state: PolicySnapshot::default(),
            last_decision: None,
            fire_history: BTreeMap::new(),
            attention_md: String::new(),
            behaviors_recent: String::new(),
        }
    }
}
