//! `[policy]` and `[feedback]`: the gate's layers and the learning loop's knobs.

use super::{TimeOfDay, Window};
use serde::{Deserialize, Serialize};

/// A named do-not-disturb window of the persona (layer 3).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DndWindow {
    pub name: String,
    pub start: TimeOfDay,
    pub end: TimeOfDay,
    /// Days it applies on (`mon` … `sun`); empty means every day.
    #[serde(default)]
    pub weekdays: Vec<chrono::Weekday>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct PolicyConfig {
    /// Layer 2: quiet hours, in `general.timezone` (default 23:00–07:00).
    pub quiet_hours: Window,
    /// Further quiet windows, read like `quiet_hours` (layer 2); user preferences that do not
    /// touch `quiet_hours` land here.
    pub extra_quiet_hours: Vec<Window>,
    /// Layer 2 bypass withdrawal: high priority no longer bypasses quiet hours once at
    /// least `quiet_bypass_min_samples` high-priority verdicts show an acceptance below this.
    pub quiet_bypass_min_acceptance: f64,
    pub quiet_bypass_min_samples: u32,
    /// Layer 2b: an hour of day becomes do-not-disturb once it gathered this many
    /// dismissals with an acceptance at or below `dynamic_dnd_max_acceptance`.
    pub dynamic_dnd_min_dismissals: u32,
    pub dynamic_dnd_max_acceptance: f64,
    /// Layer 3.
    pub dnd_windows: Vec<DndWindow>,
    /// Layer 4: hard cap per local calendar day.
    pub max_per_day: u32,
    /// Layer 4 on a Saturday or Sunday: a lower cap for those days (`None`: `max_per_day`).
    pub max_per_weekend_day: Option<u32>,
    /// Layer 5: per rolling hour, before the adaptive and weekend multipliers.
    pub max_per_hour: u32,
    /// Layer 6.
    pub session_cooldown_minutes: i64,
    /// Layer 7.
    pub dismissal_cooldown_minutes: i64,
    /// Layer 8: a topic whose decayed reject weight reaches the threshold is cooled down
    /// for `topic_reject_cooldown_hours × weight` (at most the max) after its last reject.
    pub topic_reject_weight_threshold: f64,
    pub topic_reject_cooldown_hours: i64,
    pub topic_reject_max_cooldown_hours: i64,
    /// Layer 9.
    pub topic_min_samples: u32,
    pub topic_min_acceptance: f64,
    /// Layer 10 (also the window in which a cron fire suppresses a nudge on its topic).
    pub dedup_window_minutes: i64,
    /// Layer 11: rolling per-topic stack.
    pub topic_max_per_hour: u32,
    pub topic_max_per_day: u32,
    pub topic_max_per_week: u32,
    /// spawn_agent's own quota line (layers 4 and 5 for spawns).
    pub spawn_max_per_day: u32,
    pub spawn_max_per_hour: u32,
    pub adaptive: AdaptiveConfig,
}

impl Default for PolicyConfig {
    fn default() -> Self {
        PolicyConfig {
            quiet_hours: Window::new(TimeOfDay::hm(23, 0), TimeOfDay::hm(7, 0)),
            extra_quiet_hours: Vec::new(),
            quiet_bypass_min_acceptance: 0.3,
            quiet_bypass_min_samples: 5,
            dynamic_dnd_min_dismissals: 3,
            dynamic_dnd_max_acceptance: 0.25,
            dnd_windows: Vec::new(),
            max_per_day: 8,
            max_per_weekend_day: None,
            max_per_hour: 2,
            session_cooldown_minutes: 30,
            dismissal_cooldown_minutes: 120,
            topic_reject_weight_threshold: 1.0,
            topic_reject_cooldown_hours: 48,
            topic_reject_max_cooldown_hours: 336,
            topic_min_samples: 4,
            topic_min_acceptance: 0.2,
            dedup_window_minutes: 360,
            topic_max_per_hour: 1,
            topic_max_per_day: 3,
            topic_max_per_week: 10,
            spawn_max_per_day: 4,
            spawn_max_per_hour: 1,
            adaptive: AdaptiveConfig::default(),
        }
    }
}

/// The adaptive hour-quota multiplier (spec §5 "Adaptive multiplier").
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct AdaptiveConfig {
    pub min_multiplier: f64,
    pub max_multiplier: f64,
    /// Acceptance rate at which the target multiplier is 1.0; the target moves linearly
    /// (symmetrically) with the rate around it: `1 + (rate - pivot) * gain`.
    pub pivot: f64,
    pub gain: f64,
    /// Hysteresis band: the multiplier moves only when the target is further than this.
    pub band: f64,
    /// Cold-start floor: below this many verdicts the multiplier stays at 1.0.
    pub cold_start_samples: u32,
    /// Asymmetric volume gate: tightening needs this many verdicts …
    pub min_samples_tighten: u32,
    /// … loosening needs more.
    pub min_samples_loosen: u32,
    /// Extra factor on the hour quota on Saturday and Sunday (user's zone).
    pub weekend_factor: f64,
}

impl Default for AdaptiveConfig {
    fn default() -> Self {
        AdaptiveConfig {
            min_multiplier: 0.5,
            max_multiplier: 1.5,
            pivot: 0.5,
            gain: 1.0,
            band: 0.15,
            cold_start_samples: 5,
            min_samples_tighten: 5,
            min_samples_loosen: 15,
            weekend_factor: 0.5,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct FeedbackConfig {
    /// Acceptance rates are computed over this many days.
    pub window_days: i64,
    /// The daily trim drops lifecycle records older than this.
    pub retention_days: i64,
    /// Half-life of a reject's weight in layer 8.
    pub reject_half_life_days: f64,
    /// Weight of a plain dismissal and of a hard reject ("stop reminding me").
    pub dismiss_weight: f64,
    pub hard_reject_weight: f64,
    /// A reply within this many hours of a proactive message is a reaction to it (the
    /// engagement hook, and `nudge_feedback` / `/stop` without an id).
    pub reaction_window_h: i64,
    /// Awake hours (quiet hours do not count) without a reply before a message someone
    /// could see is recorded `ignored`.
    pub ignore_after_h: i64,
    /// What an `ignored` adds to its topic's reject weight.
    pub ignore_weight: f64,
    /// How long `/stop <topic>` mutes the topic.
    pub stop_mute_days: i64,
    /// "Later" on a message (the ⏰ button, reaction or tap): it comes again after this many
    /// minutes (past the quiet hours if it would land in them).
    pub later_minutes: i64,
}

impl Default for FeedbackConfig {
    fn default() -> Self {
        FeedbackConfig {
            window_days: 14,
            retention_days: 30,
            reject_half_life_days: 7.0,
            dismiss_weight: 0.5,
            hard_reject_weight: 1.0,
            reaction_window_h: 6,
            ignore_after_h: 6,
            ignore_weight: 0.25,
            stop_mute_days: 30,
            later_minutes: 60,
        }
    }
}
