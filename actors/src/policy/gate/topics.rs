//! The layers about a topic: muted or rejected by the user (8), accepted too rarely (9), and
//! sent too often this hour, day or week (11).

use super::{Layer, NudgePolicy};
use crate::feedback::FeedbackSummary;
use chrono::{DateTime, Duration, Utc};

impl NudgePolicy {
    /// A topic the user muted (`/stop`), or rejected enough that it cools down. The cooldown
    /// starts at the last reject and lasts by the weight as it was then.
    pub(super) fn topic_reject(&self, fb: &FeedbackSummary, topic: &str, now: DateTime<Utc>) -> Layer {
        if let Some(until) = fb.muted_until(topic, now) {
            return Err(format!(
                "topic `{topic}` muted by the user until {} (/ok {topic} unmutes it)",
                self.shown(until)
            ));
        }
        let Some(t) = fb.by_topic.get(topic) else {
            return Ok(());
        };
        let weight = t.weight_at_last_reject.max(t.reject_weight);
        let (Some(last), true) = (t.last_reject, weight >= self.cfg.topic_reject_weight_threshold) else {
            return Ok(());
        };
        let hours =
            (self.cfg.topic_reject_cooldown_hours as f64 * weight).min(self.cfg.topic_reject_max_cooldown_hours as f64);
        let until = last + Duration::minutes((hours * 60.0) as i64);
        if now < until {
            Err(format!("topic `{topic}` was rejected (weight {:.2}); cooled down until {}", weight, self.shown(until)))
        } else {
            Ok(())
        }
    }

    pub(super) fn topic_acceptance(&self, fb: &FeedbackSummary, topic: &str) -> Layer {
        let Some(t) = fb.by_topic.get(topic) else {
            return Ok(());
        };
        match t.rate.acceptance() {
            Some(a) if t.rate.samples() >= self.cfg.topic_min_samples && a < self.cfg.topic_min_acceptance => {
                Err(format!("topic `{topic}` acceptance {:.0}% over {} verdicts", a * 100.0, t.rate.samples()))
            }
            _ => Ok(()),
        }
    }

    pub(super) fn topic_quota(&self, topic: &str, now: DateTime<Utc>) -> Layer {
        let Some(times) = self.index.by_topic.get(topic) else {
            return Ok(());
        };
        let stack = [
            ("hour", Duration::hours(1), self.cfg.topic_max_per_hour),
            ("day", Duration::days(1), self.cfg.topic_max_per_day),
            ("week", Duration::weeks(1), self.cfg.topic_max_per_week),
        ];
        for (name, window, limit) in stack {
            let n = times.count_within(window, now);
            if n >= limit {
                return Err(format!("topic `{topic}`: {n} of {limit} this {name}"));
            }
        }
        Ok(())
    }
}
