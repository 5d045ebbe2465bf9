//! What the Planner sees of the gate: its state now, and the recent fires per topic with the
//! user's reactions.

use super::NudgePolicy;
use chrono::{DateTime, Datelike, Duration, Utc};
use raven_proto::{PolicySnapshot, TopicFireHistory};
use std::collections::BTreeMap;

impl NudgePolicy {
    /// What the Planner sees of the gate.
    pub fn snapshot_state(&self, now: DateTime<Utc>) -> PolicySnapshot {
        let local = now.with_timezone(&self.tz);
        let day = local.weekday();
        let remaining = |limit: u32, sent: u32| limit.saturating_sub(sent);
        PolicySnapshot {
            in_quiet_hours: self.quiet_hours(local.time()).is_err(),
            quiet_bypass_open: self.quiet_bypass_withdrawn().is_none(),
            quiet_hours: {
                let all = std::iter::once(&self.cfg.quiet_hours).chain(&self.cfg.extra_quiet_hours);
                format!("{} ({})", all.map(ToString::to_string).collect::<Vec<_>>().join(", "), self.tz)
            },
            remaining_today: remaining(self.day_limit(false, day), self.sent_today(false, now)),
            remaining_this_hour: remaining(self.hour_limit(false, day), self.sent_this_hour(false, now)),
            spawn_remaining_today: remaining(self.cfg.spawn_max_per_day, self.sent_today(true, now)),
            adaptive_multiplier: self.state.multiplier,
            weekend_factor: self.weekend_factor(day),
            dismissal_cooldown_until: self
                .state
                .feedback
                .last_dismissal
                .map(|d| d + Duration::minutes(self.cfg.dismissal_cooldown_minutes))
                .filter(|until| *until > now),
        }
    }

    /// Recent fires per topic with the user's reactions: the Planner's `fire_history`,
    /// straight from memory (no disk, no LLM).
    pub fn fire_history(&self, now: DateTime<Utc>) -> BTreeMap<String, TopicFireHistory> {
        let since = now - Duration::weeks(1);
        let mut out: BTreeMap<String, TopicFireHistory> = BTreeMap::new();
        for f in self.state.fires.iter().filter(|f| f.at >= since) {
            let h = out.entry(f.topic.clone()).or_default();
            h.fired += 1;
            h.last_fired = h.last_fired.max(Some(f.at));
        }
        for (topic, h) in out.iter_mut() {
            if let Some(t) = self.state.feedback.by_topic.get(topic) {
                h.accepted = t.rate.accepted;
                h.dismissed = t.rate.dismissed;
            }
        }
        out
    }
}
