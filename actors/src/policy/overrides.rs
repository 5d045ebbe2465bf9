//! User preference overrides (spec §5 "Personalization"): they may only tighten.

use crate::config::{DndWindow, PolicyConfig, Window};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct PolicyOverrides {
    pub quiet_hours: Option<Window>,
    pub max_per_day: Option<u32>,
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
    if let Some(q) = o.quiet_hours {
        if q.covers(&base.quiet_hours) {
            eff.quiet_hours = q;
        } else {
            notes.push(format!(
                "ignored quiet hours {q}: preferences may only widen the configured {}",
                base.quiet_hours
            ));
        }
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
        assert_eq!(eff, base);
        assert_eq!(notes.len(), 4, "{notes:?}");
        assert!(notes[0].contains("quiet hours"));
    }
}
