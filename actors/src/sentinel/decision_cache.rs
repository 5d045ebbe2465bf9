//! The unchanged-context skip cache and the last decision, kept in the data dir
//! (`sentinel/decision_cache.json`, under the state store's lock), so every process on one
//! data dir shares them: a one-shot `raven tick` after a skip with nothing changed makes no
//! Planner call either. A dry run (`raven tick --at`) works on a copy without this file, so
//! it neither reads nor changes the real one. The same file keeps the day's morning brief
//! ([`Briefed`]), so a restart or another process does not send it again.
//!
//! The signature is a hash by the standard library's fixed-key hasher: a build that hashes
//! differently only costs one Planner call.

use crate::store::JsonStateStore;
use chrono::{DateTime, Utc};
use raven_proto::PlannerDecision;
use serde::{Deserialize, Serialize};

const SECTION: &str = "decision_cache";

/// A skip, and the context it was made on: trusted while the signature holds and the cache
/// is younger than `sentinel.skip_cache_ttl_s`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SkipCache {
    pub signature: u64,
    pub at: DateTime<Utc>,
}

/// What one tick leaves for the next, in any process.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Remembered {
    #[serde(default)]
    pub skip: Option<SkipCache>,
    #[serde(default)]
    pub last_decision: Option<PlannerDecision>,
}

/// The day the morning brief went out (or had nothing to say), and the topics of the dated
/// items it said: they count as told for the rest of their heads-up window.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Briefed {
    pub day: Option<chrono::NaiveDate>,
    /// Topics a brief said, and when (kept five weeks: a lead window is shorter).
    #[serde(default)]
    pub told: std::collections::BTreeMap<String, DateTime<Utc>>,
}

const BRIEF: &str = "brief";

/// The store of [`Remembered`]; off, it keeps nothing (the runner remembers in memory only).
#[derive(Default)]
pub struct DecisionCache {
    store: Option<JsonStateStore>,
    /// What the file held when last read or written: the same again is not written (an idle
    /// engine writes nothing).
    seen: Option<Remembered>,
}

impl DecisionCache {
    /// The cache kept in `store` (the data dir's: `owners::Owner::DecisionCache`).
    pub fn on(store: JsonStateStore) -> Self {
        DecisionCache { store: Some(store), seen: None }
    }

    /// What the last tick of any process left; `None` when off or unreadable (logged).
    pub fn load(&mut self) -> Option<Remembered> {
        let store = self.store.as_ref()?;
        match store.read::<Remembered>(SECTION) {
            Ok((r, _)) => {
                self.seen = Some(r.clone());
                Some(r)
            }
            Err(e) => {
                tracing::warn!("the decision cache is not read: {e}");
                None
            }
        }
    }

    /// Keeps `remembered` for the next tick of any process (unless the file holds it already).
    pub fn save(&mut self, remembered: Remembered) {
        let Some(store) = &self.store else { return };
        if self.seen.as_ref() == Some(&remembered) {
            return;
        }
        match store.update(SECTION, |r: &mut Remembered| *r = remembered.clone()) {
            Ok(()) => self.seen = Some(remembered),
            Err(e) => tracing::warn!("the decision cache is not kept: {e}"),
        }
    }

    /// The day's brief as any process left it; `None` when off or unreadable (logged).
    pub fn briefed(&self) -> Option<Briefed> {
        let store = self.store.as_ref()?;
        store
            .read::<Briefed>(BRIEF)
            .map(|(b, _)| b)
            .map_err(|e| tracing::warn!("the brief's day is not read: {e}"))
            .ok()
    }

    /// Keeps the day's brief for every process on the data dir.
    pub fn save_briefed(&self, briefed: &Briefed) {
        let Some(store) = &self.store else { return };
        if let Err(e) = store.update(BRIEF, |b: &mut Briefed| *b = briefed.clone()) {
            tracing::warn!("the brief's day is not kept: {e}");
        }
    }
}
