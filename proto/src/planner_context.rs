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
    /// The days of the week it keeps to.
    #[serde(default)]
    pub days: RoutineDays,
}

/// The days of the week a routine keeps to: seen only on weekdays (Monday to Friday) while
/// a weekend passed, it is a weekday routine; only on weekends, a weekend one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RoutineDays {
    #[default]
    Every,
    Weekdays,
    Weekends,
}

impl RoutineDays {
    /// What the local days a routine was seen on say. Only at weekends, once a weekday passed:
    /// a weekend routine. Never at the weekend over two weeks at least, and on most weekdays
    /// of that span: a weekday routine (a habit only mentioned now and then, a daily
    /// medication say, is not taken to skip the weekend).
    pub fn of(days: &std::collections::BTreeSet<chrono::NaiveDate>) -> RoutineDays {
        use chrono::Datelike;
        let weekend = |d: &chrono::NaiveDate| d.weekday().number_from_monday() > 5;
        let (Some(first), Some(last)) = (days.first(), days.last()) else { return RoutineDays::Every };
        let span = (*last - *first).num_days();
        if days.iter().all(weekend) && span >= 6 {
            return RoutineDays::Weekends;
        }
        let weekdays_in_span = first.iter_days().take(span as usize + 1).filter(|d| !weekend(d)).count();
        let most = days.len() * 5 >= weekdays_in_span * 3;
        match days.iter().any(weekend) {
            false if span >= 13 && most => RoutineDays::Weekdays,
            _ => RoutineDays::Every,
        }
    }

    /// Whether the routine keeps to `day`.
    pub fn on(self, day: chrono::Weekday) -> bool {
        let weekend = day.number_from_monday() > 5;
        match self {
            RoutineDays::Every => true,
            RoutineDays::Weekdays => !weekend,
            RoutineDays::Weekends => weekend,
        }
    }
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
    /// The kinds of item (`payment`) the user asked to hear of earlier, and how many times
    /// (`/earlier`, "too late"): their lead is lengthened (`Ladder::lengthened`).
    #[serde(default)]
    pub earlier_kinds: BTreeMap<String, u32>,
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
            earlier_kinds: BTreeMap::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::{NaiveDate, Weekday};
    use std::collections::BTreeSet;

    /// The days of March 2026 given (the 2nd is a Monday).
    fn march(days: &[u32]) -> BTreeSet<NaiveDate> {
        days.iter().map(|d| NaiveDate::from_ymd_opt(2026, 3, *d).unwrap()).collect()
    }

    #[test]
    fn the_days_seen_tell_a_weekday_or_weekend_routine_once_a_week_has_passed() {
        let workdays = march(&[2, 3, 4, 5, 6, 9, 10, 11, 12, 13, 16]);
        assert_eq!(RoutineDays::of(&workdays), RoutineDays::Weekdays);
        assert_eq!(RoutineDays::of(&march(&[2, 3, 4, 11, 18, 25])), RoutineDays::Every, "mentioned now and then");
        assert_eq!(RoutineDays::of(&march(&[2, 3, 4, 5, 6, 9, 10])), RoutineDays::Every, "one weekend is not enough");
        assert_eq!(RoutineDays::of(&march(&[7, 8, 14, 15])), RoutineDays::Weekends);
        assert_eq!(RoutineDays::of(&march(&[2, 3, 7, 9])), RoutineDays::Every);
        assert_eq!(RoutineDays::of(&march(&[2, 3, 4])), RoutineDays::Every, "no weekend passed yet");
        assert_eq!(RoutineDays::of(&BTreeSet::new()), RoutineDays::Every);
        assert!(RoutineDays::Weekdays.on(Weekday::Fri) && !RoutineDays::Weekdays.on(Weekday::Sat));
        assert!(RoutineDays::Weekends.on(Weekday::Sun) && !RoutineDays::Weekends.on(Weekday::Mon));
        assert!(RoutineDays::Every.on(Weekday::Sat));
    }
}
