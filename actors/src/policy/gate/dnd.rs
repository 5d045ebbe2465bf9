//! The do-not-disturb layers (2, 2b, 3): the configured quiet hours, the hour the user's
//! feedback taught to keep quiet, and the persona's windows with the user's own `/snooze`.

use super::{Layer, NudgePolicy};
use crate::feedback::FeedbackSummary;
use chrono::{DateTime, NaiveTime, Utc, Weekday};

impl NudgePolicy {
    pub(super) fn quiet_hours(&self, t: NaiveTime) -> Layer {
        match std::iter::once(&self.cfg.quiet_hours).chain(&self.cfg.extra_quiet_hours).find(|q| q.contains(t)) {
            Some(q) => Err(format!("quiet hours {q} ({})", self.tz)),
            None => Ok(()),
        }
    }

    /// The bypass of quiet hours is itself withdrawn while the user keeps rejecting
    /// high-priority nudges.
    pub(super) fn quiet_bypass_withdrawn(&self) -> Option<String> {
        let high = self.state.feedback.high_priority;
        let rate = high.acceptance()?;
        (high.samples() >= self.cfg.quiet_bypass_min_samples && rate < self.cfg.quiet_bypass_min_acceptance).then(
            || {
                format!(
                    "high-priority acceptance {:.0}% over {} verdicts is below {:.0}%",
                    rate * 100.0,
                    high.samples(),
                    self.cfg.quiet_bypass_min_acceptance * 100.0
                )
            },
        )
    }

    pub(super) fn dynamic_dnd(&self, hour: u32) -> Layer {
        let r = self.state.feedback.hour(hour);
        match r.acceptance() {
            Some(a)
                if r.dismissed >= self.cfg.dynamic_dnd_min_dismissals && a <= self.cfg.dynamic_dnd_max_acceptance =>
            {
                Err(format!(
                    "learned do-not-disturb at {hour:02}:00: {} of {} nudges dismissed",
                    r.dismissed,
                    r.samples()
                ))
            }
            _ => Ok(()),
        }
    }

    /// The persona's do-not-disturb windows, and the user's `/snooze` (a temporary one).
    pub(super) fn persona_dnd(&self, fb: &FeedbackSummary, now: DateTime<Utc>, t: NaiveTime, day: Weekday) -> Layer {
        if let Some(until) = fb.snoozed(now) {
            return Err(format!("snoozed by the user until {} (/snooze off ends it)", self.shown(until)));
        }
        match self.cfg.dnd_windows.iter().find(|w| {
            (w.weekdays.is_empty() || w.weekdays.contains(&day))
                && crate::config::Window::new(w.start, w.end).contains(t)
        }) {
            Some(w) => Err(format!("do-not-disturb window `{}` {}-{}", w.name, w.start, w.end)),
            None => Ok(()),
        }
    }
}
