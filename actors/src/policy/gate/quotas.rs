//! The quota layers (4, 5): nudges and spawns per local day, and per hour after the adaptive
//! and weekend multipliers.

use super::{Layer, NudgePolicy};
use chrono::{DateTime, Datelike, Duration, Utc, Weekday};

impl NudgePolicy {
    /// Start of the user's local calendar day, in UTC.
    fn local_midnight(&self, now: DateTime<Utc>) -> DateTime<Utc> {
        crate::time::local_midnight(now, self.tz)
    }

    /// The day's cap on `day`: on a Saturday or Sunday the lower `max_per_weekend_day`, if set.
    pub(super) fn day_limit(&self, spawn: bool, day: Weekday) -> u32 {
        match (spawn, self.cfg.max_per_weekend_day) {
            (true, _) => self.cfg.spawn_max_per_day,
            (false, Some(weekend)) if is_weekend(day) => weekend.min(self.cfg.max_per_day),
            (false, _) => self.cfg.max_per_day,
        }
    }

    pub(super) fn sent_today(&self, spawn: bool, now: DateTime<Utc>) -> u32 {
        let times = if spawn { &self.index.spawns } else { &self.index.nudges };
        times.count_since(self.local_midnight(now))
    }

    pub(super) fn day_quota(&self, spawn: bool, now: DateTime<Utc>) -> Layer {
        let day = now.with_timezone(&self.tz).weekday();
        let (sent, limit) = (self.sent_today(spawn, now), self.day_limit(spawn, day));
        if sent >= limit {
            Err(format!("{sent} of {limit} {} sent today", if spawn { "spawns" } else { "nudges" }))
        } else {
            Ok(())
        }
    }

    pub(super) fn weekend_factor(&self, day: Weekday) -> f64 {
        if is_weekend(day) {
            self.cfg.adaptive.weekend_factor
        } else {
            1.0
        }
    }

    /// The hour quota after the adaptive and weekend multipliers; never below one (the
    /// day quota is the hard cap).
    pub fn hour_limit(&self, spawn: bool, day: Weekday) -> u32 {
        let base = if spawn { self.cfg.spawn_max_per_hour } else { self.cfg.max_per_hour };
        if spawn {
            return base;
        }
        let scaled = f64::from(base) * self.state.multiplier * self.weekend_factor(day);
        (scaled.floor() as u32).max(1)
    }

    pub(super) fn sent_this_hour(&self, spawn: bool, now: DateTime<Utc>) -> u32 {
        let times = if spawn { &self.index.spawns } else { &self.index.nudges };
        times.count_within(Duration::hours(1), now)
    }

    pub(super) fn hour_quota(&self, spawn: bool, now: DateTime<Utc>, day: Weekday) -> Layer {
        let (sent, limit) = (self.sent_this_hour(spawn, now), self.hour_limit(spawn, day));
        if sent >= limit {
            Err(format!(
                "{sent} of {limit} in the last hour (multiplier {:.2}, weekend factor {:.2})",
                self.state.multiplier,
                self.weekend_factor(day)
            ))
        } else {
            Ok(())
        }
    }
}

fn is_weekend(day: Weekday) -> bool {
    matches!(day, Weekday::Sat | Weekday::Sun)
}
