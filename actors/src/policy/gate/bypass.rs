//! High priority may pass a do-not-disturb layer (quiet hours, the learned hour, a persona
//! window), but once per topic per window: a second high-priority message on the same topic
//! inside the same window waits for the window to end, like any other.

use super::NudgePolicy;
use crate::config::Window;
use chrono::{DateTime, Duration, NaiveTime, TimeZone, Timelike, Utc};
use chrono_tz::Tz;
use raven_proto::PolicyLayer;

/// The latest instant at or before `now` whose local time is `start`.
fn last_start(now: DateTime<Utc>, start: NaiveTime, tz: Tz) -> DateTime<Utc> {
    let local = now.with_timezone(&tz);
    let day = if local.time() >= start { local.date_naive() } else { local.date_naive() - Duration::days(1) };
    tz.from_local_datetime(&day.and_time(start)).earliest().map_or(now - Duration::hours(24), |t| t.to_utc())
}

impl NudgePolicy {
    /// When the window that `layer` denies in began, for a do-not-disturb layer.
    fn window_began(&self, layer: PolicyLayer, now: DateTime<Utc>) -> Option<DateTime<Utc>> {
        let local = now.with_timezone(&self.tz);
        let start_of = |w: &Window| last_start(now, w.start.0, self.tz);
        match layer {
            PolicyLayer::QuietHours => std::iter::once(&self.cfg.quiet_hours)
                .chain(&self.cfg.extra_quiet_hours)
                .find(|w| w.contains(local.time()))
                .map(start_of),
            PolicyLayer::DynamicDnd => Some(last_start(now, NaiveTime::from_hms_opt(local.hour(), 0, 0)?, self.tz)),
            PolicyLayer::PersonaDnd => self
                .cfg
                .dnd_windows
                .iter()
                .map(|w| Window::new(w.start, w.end))
                .find(|w| w.contains(local.time()))
                .map(|w| start_of(&w)),
            _ => None,
        }
    }

    /// Why a high-priority bypass of `layer` is spent for `topic`: one already went out on
    /// the topic since the window began.
    pub(super) fn bypass_spent(&self, layer: PolicyLayer, topic: &str, now: DateTime<Utc>) -> Option<String> {
        let began = self.window_began(layer, now)?;
        let times = self.index.by_topic.get(topic)?;
        (times.count_since(began) > 0).then(|| {
            format!("high priority already passed this window once for `{topic}` (since {})", self.shown(began))
        })
    }
}
