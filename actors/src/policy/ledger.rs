//! The persisted fire ledger and its in-memory index. The index turns every window count
//! into a binary search and every "last time" into a hash lookup, so `check()` costs about
//! the same with 10 or 10,000 fires on record.

use crate::feedback::FeedbackSummary;
use chrono::{DateTime, Duration, Utc};
use raven_proto::{Action, Priority};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;

/// Fires older than this can no longer matter to any layer (the widest is a week).
pub fn retention() -> Duration {
    Duration::days(8)
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FireKind {
    /// nudge, nudge_inject, nudge_defer: the reactive-nudge quota line.
    Nudge,
    /// spawn_agent: its own quota line.
    Spawn,
    /// A user-scheduled cron job: dedups its topic, charges no Sentinel quota.
    Cron,
}

impl FireKind {
    pub fn of(action: Action) -> FireKind {
        match action {
            Action::SpawnAgent => FireKind::Spawn,
            _ => FireKind::Nudge,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FireRecord {
    pub at: DateTime<Utc>,
    pub kind: FireKind,
    pub action: Action,
    pub session: Option<String>,
    pub topic: String,
    pub content_hash: u64,
    pub priority: Priority,
}

/// What the NudgePolicy keeps in `state.json` (section `policy`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct PolicyState {
    /// Sorted by time.
    pub fires: Vec<FireRecord>,
    /// The adaptive hour-quota multiplier.
    pub multiplier: f64,
    pub feedback: FeedbackSummary,
}

impl Default for PolicyState {
    fn default() -> Self {
        PolicyState { fires: Vec::new(), multiplier: 1.0, feedback: FeedbackSummary::default() }
    }
}

impl PolicyState {
    /// Adds a fire in time order and forgets what no layer can see any more.
    ///
    /// A cron fire charges no quota: layers see only its latest time per topic and per text.
    /// So an earlier cron fire of the same topic and text is replaced, not kept beside it
    /// (a recurring job is one record, not one per fire for a week).
    pub fn push_fire(&mut self, fire: FireRecord, now: DateTime<Utc>) {
        if fire.kind == FireKind::Cron {
            self.fires.retain(|f| {
                !(f.kind == FireKind::Cron
                    && f.topic == fire.topic
                    && f.content_hash == fire.content_hash
                    && f.at <= fire.at)
            });
        }
        let at = self.fires.partition_point(|f| f.at <= fire.at);
        self.fires.insert(at, fire);
        let cutoff = now - retention();
        let old = self.fires.partition_point(|f| f.at < cutoff);
        self.fires.drain(..old);
    }
}

/// Sorted times, counted over a window by binary search.
#[derive(Debug, Clone, Default)]
pub struct Times(Vec<DateTime<Utc>>);

impl Times {
    fn insert(&mut self, t: DateTime<Utc>) {
        let at = self.0.partition_point(|x| *x <= t);
        self.0.insert(at, t);
    }

    /// Fires at or after `since` (calendar windows: a fire at midnight is today's).
    pub fn count_since(&self, since: DateTime<Utc>) -> u32 {
        (self.0.len() - self.0.partition_point(|t| *t < since)) as u32
    }

    /// Fires strictly inside the rolling window that ends now: a fire exactly one window
    /// ago has left it.
    pub fn count_within(&self, window: chrono::Duration, now: DateTime<Utc>) -> u32 {
        let since = now - window;
        (self.0.len() - self.0.partition_point(|t| *t <= since)) as u32
    }
}

#[derive(Debug, Clone, Default)]
pub struct LedgerIndex {
    pub nudges: Times,
    pub spawns: Times,
    pub last_by_session: HashMap<String, DateTime<Utc>>,
    pub last_by_content: HashMap<u64, DateTime<Utc>>,
    pub last_cron_by_topic: HashMap<String, DateTime<Utc>>,
    /// Sentinel fires (nudge and spawn) per topic, for the rolling topic stack.
    pub by_topic: HashMap<String, Times>,
}

impl LedgerIndex {
    pub fn build(fires: &[FireRecord]) -> Self {
        let mut idx = LedgerIndex::default();
        for f in fires {
            idx.add(f);
        }
        idx
    }

    pub fn add(&mut self, f: &FireRecord) {
        fn latest<K: std::hash::Hash + Eq>(m: &mut HashMap<K, DateTime<Utc>>, k: K, t: DateTime<Utc>) {
            let e = m.entry(k).or_insert(t);
            *e = (*e).max(t);
        }
        latest(&mut self.last_by_content, f.content_hash, f.at);
        match f.kind {
            FireKind::Cron => latest(&mut self.last_cron_by_topic, f.topic.clone(), f.at),
            kind => {
                if kind == FireKind::Spawn {
                    self.spawns.insert(f.at);
                } else {
                    self.nudges.insert(f.at);
                }
                latest(&mut self.last_by_session, f.session.clone().unwrap_or_else(|| "*".into()), f.at);
                self.by_topic.entry(f.topic.clone()).or_default().insert(f.at);
            }
        }
    }
}
