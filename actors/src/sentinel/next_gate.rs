//! The gate as the next Sentinel tick will check with it, worked out without a tick and
//! without writing anything (what `raven policy explain` evaluates). A tick first polls the
//! user's preferences (the workspace MEMORY.md and `user_memory/preferences.toml`) and hands
//! them to the policy, which keeps what tightens it; then it retunes the policy with the
//! feedback summary. Here the same reader is polled, the same `set_overrides` applies its
//! result, and the same tuning step takes the summary read from the log now.

use crate::config::RavenConfig;
use crate::context::preferences::ProactivityPreferencesReader;
use crate::data_dir::DataDir;
use crate::feedback::{FeedbackError, NudgeFeedbackTracker};
use crate::policy::{NudgePolicy, PolicyState};
use crate::store::owners::{self, Owner};
use crate::store::StoreError;
use chrono::{DateTime, Utc};

/// The gate of the next tick, and what went into it.
#[derive(Debug)]
pub struct NextGate {
    pub policy: NudgePolicy,
    /// Fires on record in the ledger.
    pub fires: usize,
    /// The preference lines not understood, the loosenings refused, a source not read.
    pub notes: Vec<String>,
}

/// Why the gate could not be worked out.
#[derive(Debug, thiserror::Error)]
pub enum NextGateError {
    #[error("the policy ledger: {0}")]
    Ledger(#[from] StoreError),
    #[error("the feedback log: {0}")]
    Feedback(#[from] FeedbackError),
}

/// The gate a tick at `now` would check with, against `dir` as it is.
pub fn next_gate(dir: &DataDir, config: &RavenConfig, now: DateTime<Utc>) -> Result<NextGate, NextGateError> {
    let tz = config.general.timezone;
    let mut policy = NudgePolicy::new(config.policy.clone(), tz);
    let mut notes = apply_preferences(&mut policy, ProactivityPreferencesReader::for_data_dir(dir));
    let (state, unreadable) = read_ledger(dir)?;
    notes.extend(unreadable);
    let fires = state.fires.len();
    policy.replace_state(state);
    let tracker = NudgeFeedbackTracker::new(dir.feedback(), config.feedback.clone(), tz);
    policy.apply_adaptive_tuning(tracker.summary(now)?);
    Ok(NextGate { policy, fires, notes })
}

/// The preferences as a tick polls them, applied as the policy applies them. A source that
/// cannot be read sets nothing (a running engine would keep the last ones it had).
fn apply_preferences(policy: &mut NudgePolicy, mut reader: ProactivityPreferencesReader) -> Vec<String> {
    let poll = reader.poll();
    let mut notes = poll.notes;
    notes.extend(poll.error.map(|e| format!("preferences not read: {e}")));
    if let Some(overrides) = poll.send {
        notes.extend(policy.set_overrides(&overrides));
    }
    notes
}

/// The ledger as on disk, read only: a corrupt file is left where it is (the supervisor keeps
/// it aside when it next writes), read as empty, with a note that says so.
fn read_ledger(dir: &DataDir) -> Result<(PolicyState, Option<String>), StoreError> {
    owners::read_only(dir, Owner::Policy)?.peek::<PolicyState>(Owner::Policy.name())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::CheckRequest;
    use raven_proto::{Action, Priority};

    fn deny_layer(gate: &NextGate, at: &str) -> Option<String> {
        let req = CheckRequest {
            action: Action::Nudge,
            session_key: None,
            content: "Drink water",
            priority: Priority::Low,
            topic: None,
            solicited: false,
        };
        let now = DateTime::parse_from_rfc3339(at).unwrap().with_timezone(&Utc);
        gate.policy.check_request(&req, now).layer.map(|l| l.name().to_owned())
    }

    #[test]
    fn the_quiet_hours_of_memory_md_hold_as_in_a_tick() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = DataDir::new(tmp.path());
        dir.ensure().unwrap();
        let config = RavenConfig::default();
        let now = Utc::now();
        assert_eq!(deny_layer(&next_gate(&dir, &config, now).unwrap(), "2026-03-02T22:30:00Z"), None);
        std::fs::write(dir.memory(), "## Proactivity preferences\n- quiet hours: 22:00-08:00\n").unwrap();
        let gate = next_gate(&dir, &config, now).unwrap();
        assert_eq!(deny_layer(&gate, "2026-03-02T22:30:00Z").as_deref(), Some("quiet_hours"));
        assert!(gate.notes.is_empty(), "{:?}", gate.notes);
    }

    #[test]
    fn a_loosening_in_preferences_toml_is_refused_with_a_note() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = DataDir::new(tmp.path());
        dir.ensure().unwrap();
        std::fs::write(dir.user_memory().join("preferences.toml"), "max_per_day = 999\n").unwrap();
        let gate = next_gate(&dir, &RavenConfig::default(), Utc::now()).unwrap();
        assert!(gate.notes.iter().any(|n| n.contains("max_per_day = 999")), "{:?}", gate.notes);
    }
}
