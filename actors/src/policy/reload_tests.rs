//! A new configured base (config.toml changed while running) keeps the user's preferences
//! on top of it.

use super::*;
use crate::config::{PolicyConfig, TimeOfDay, Window};
use chrono::{TimeZone, Utc};
use chrono_tz::Tz;
use raven_proto::{Action, PolicyLayer, Priority};

#[test]
fn a_new_base_is_used_and_the_preferences_still_tighten_it() {
    let mut p = NudgePolicy::new(PolicyConfig::default(), Tz::UTC);
    let quiet_at_nine = Window::new(TimeOfDay::hm(21, 0), TimeOfDay::hm(7, 0));
    p.set_overrides(&PolicyOverrides { quiet_hours: Some(quiet_at_nine), ..Default::default() });
    let (at_noon, at_ten_pm) =
        (Utc.with_ymd_and_hms(2026, 3, 2, 12, 0, 0).unwrap(), Utc.with_ymd_and_hms(2026, 3, 2, 22, 0, 0).unwrap());
    let ask = |p: &NudgePolicy, at| p.check(Action::Nudge, Some("cli:1"), "Drink water", Priority::Low, at);
    assert!(ask(&p, at_noon).allow);

    let base = PolicyConfig { max_per_day: 0, ..Default::default() };
    assert!(p.set_base(base).is_empty());
    assert_eq!(ask(&p, at_noon).layer, Some(PolicyLayer::DayQuota), "the new base is used");
    assert_eq!(p.config().quiet_hours, quiet_at_nine, "the user's quiet hours still hold");
    assert_eq!(ask(&p, at_ten_pm).layer, Some(PolicyLayer::QuietHours));
}
