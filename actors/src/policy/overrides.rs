//! User preference overrides (spec §5 "Personalization"): they may only tighten.

use crate::config::{DndWindow, PolicyConfig, Window};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct PolicyOverrides {
    pub quiet_hours: Option<Window>,
    /// Further quiet windows (a second source, a second line): merged in like `quiet_hours`.
    #[serde(skip)]
    pub more_quiet_hours: Vec<Window>,
    pub max_per_day: Option<u32>,
    /// The cap on a Saturday or Sunday.
    pub max_per_weekend_day: Option<u32>,
    pub max_per_hour: Option<u32>,
    pub session_cooldown_minutes: Option<i64>,
    /// Extra do-not-disturb windows; adding one always tightens.
    pub dnd_windows: Vec<DndWindow>,
}

/// The effective config: `base` tightened by `o`. Every requested loosening is ignored and
/// named in the returned notes (the caller logs them).
pub fn tighten(base: &PolicyConfig, o: &PolicyOverrides) -> (PolicyConfig, Vec<String>) {
    let mut eff = base.clone();
    let mut notes = Vec::new();
    for q in o.quiet_hours.iter().chain(&o.more_quiet_hours) {
        merge_quiet(&mut eff, *q);
    }
    let mut lower = |name: &str, want: Option<u32>, field: &mut u32| {
        if let Some(v) = want {
            if v <= *field {
                *field = v;
            } else {
                notes.push(format!("ignored {name} = {v}: preferences may only lower the configured {field}"));
            }
        }
    };
    lower("max_per_day", o.max_per_day, &mut eff.max_per_day);
    lower("max_per_hour", o.max_per_hour, &mut eff.max_per_hour);
    // The weekend's cap is the configured one (or the day's), lowered.
    let mut weekend = base.max_per_weekend_day.unwrap_or(base.max_per_day).min(eff.max_per_day);
    lower("max_per_weekend_day", o.max_per_weekend_day, &mut weekend);
    if o.max_per_weekend_day.is_some() || base.max_per_weekend_day.is_some() {
        eff.max_per_weekend_day = Some(weekend);
    }
    if let Some(v) = o.session_cooldown_minutes {
        if v >= base.session_cooldown_minutes {
            eff.session_cooldown_minutes = v;
        } else {
            notes.push(format!(
                "ignored session_cooldown_minutes = {v}: preferences may only lengthen the configured {}",
                base.session_cooldown_minutes
            ));
        }
    }
    eff.dnd_windows.extend(o.dnd_windows.iter().cloned());
    (eff, notes)
}

/// Quiet hours are merged, never dropped: a window that overlaps (or touches) the quiet hours
/// widens them to the union (`22:30-06:00` with `23:00-07:00` is `22:30-07:00`); one that does
/// not is kept as a further quiet window.
fn merge_quiet(eff: &mut PolicyConfig, q: Window) {
    if let Some(u) = eff.quiet_hours.union(&q) {
        eff.quiet_hours = u;
        // A further window the widened one now reaches joins it too.
        let extras = std::mem::take(&mut eff.extra_quiet_hours);
        for x in extras {
            merge_quiet(eff, x);
        }
    } else if let Some(x) = eff.extra_quiet_hours.iter_mut().find(|x| x.union(&q).is_some()) {
        *x = x.union(&q).unwrap_or(*x);
    } else {
        eff.extra_quiet_hours.push(q);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::TimeOfDay;

    #[test]
    fn wider_quiet_hours_and_lower_quotas_are_honoured() {
        let base = PolicyConfig::default();
        let o = PolicyOverrides {
            quiet_hours: Some(Window::new(TimeOfDay::hm(21, 0), TimeOfDay::hm(8, 0))),
            max_per_day: Some(3),
            ..Default::default()
        };
        let (eff, notes) = tighten(&base, &o);
        assert!(notes.is_empty(), "{notes:?}");
        assert_eq!(eff.quiet_hours.to_string(), "21:00-08:00");
        assert_eq!(eff.max_per_day, 3);
    }

    fn w(a: (u32, u32), b: (u32, u32)) -> Window {
        Window::new(TimeOfDay::hm(a.0, a.1), TimeOfDay::hm(b.0, b.1))
    }

    #[test]
    fn an_overlapping_quiet_window_widens_to_the_union_and_a_separate_one_is_added() {
        let base = PolicyConfig::default();
        let o = PolicyOverrides { quiet_hours: Some(w((22, 30), (6, 0))), ..Default::default() };
        let (eff, notes) = tighten(&base, &o);
        assert_eq!(eff.quiet_hours.to_string(), "22:30-07:00", "{notes:?}");
        assert!(eff.extra_quiet_hours.is_empty());
        let o = PolicyOverrides { quiet_hours: Some(w((13, 0), (14, 0))), ..Default::default() };
        let (eff, _) = tighten(&base, &o);
        assert_eq!(eff.quiet_hours, base.quiet_hours, "the configured window is never dropped");
        assert_eq!(eff.extra_quiet_hours, vec![w((13, 0), (14, 0))]);
        let o = PolicyOverrides {
            quiet_hours: Some(w((1, 0), (6, 0))),
            more_quiet_hours: vec![w((6, 30), (7, 30))],
            ..Default::default()
        };
        let (eff, _) = tighten(&base, &o);
        assert_eq!(eff.quiet_hours.to_string(), "23:00-07:30", "every preference window is merged in");
    }

    #[test]
    fn loosening_is_refused_with_a_note() {
        let base = PolicyConfig::default();
        let o = PolicyOverrides {
            quiet_hours: Some(Window::new(TimeOfDay::hm(1, 0), TimeOfDay::hm(6, 0))),
            max_per_day: Some(50),
            max_per_hour: Some(9),
            session_cooldown_minutes: Some(1),
            ..Default::default()
        };
        let (eff, notes) = tighten(&base, &o);
        assert_eq!(eff, base, "a quiet window inside the configured one changes nothing");
        assert_eq!(notes.len(), 3, "{notes:?}");
    }
}
