//! The write half of the gate: a fire recorded after a successful dispatch (or a cron fire's
//! topic tag), the ledger index kept in step, and the adaptive tuning.

use super::{CheckRequest, NudgePolicy};
use crate::config::PolicyConfig;
use crate::feedback::FeedbackSummary;
use crate::policy::adaptive::{self, Tuning};
use crate::policy::ledger::{FireKind, FireRecord, LedgerIndex, PolicyState};
use crate::policy::topic::{content_hash, topic_of};
use chrono::{DateTime, Utc};
use raven_proto::{Action, Priority};

impl NudgePolicy {
    /// The write half of the read/write split: call after a successful dispatch.
    pub fn record_fired(
        &mut self,
        action: Action,
        session_key: Option<&str>,
        content: &str,
        priority: Priority,
        topic: Option<&str>,
        now: DateTime<Utc>,
    ) -> FireRecord {
        let req = CheckRequest { action, session_key, content, priority, topic, solicited: false };
        self.record(FireKind::of(action), &req, now)
    }

    /// A cron fire's topic tag: suppresses a Sentinel nudge on the topic within the dedup
    /// window; charges no Sentinel quota.
    #[cfg(test)]
    pub fn record_cron_fire(&mut self, topic: Option<&str>, content: &str, now: DateTime<Utc>) -> FireRecord {
        self.record(FireKind::Cron, &CheckRequest::cron(content, topic), now)
    }

    fn record(&mut self, kind: FireKind, req: &CheckRequest<'_>, now: DateTime<Utc>) -> FireRecord {
        let fire = fire_record(kind, req, now);
        self.push(fire.clone(), now);
        fire
    }

    fn push(&mut self, fire: FireRecord, now: DateTime<Utc>) {
        let before = self.state.fires.first().map(|f| f.at);
        self.state.push_fire(fire.clone(), now);
        if self.state.fires.first().map(|f| f.at) != before {
            // Old fires were pruned: rebuild rather than un-index.
            self.index = LedgerIndex::build(&self.state.fires);
        } else {
            self.index.add(&fire);
        }
    }

    /// `apply_adaptive_tuning`: adopts the latest feedback and moves the multiplier.
    pub fn apply_adaptive_tuning(&mut self, summary: FeedbackSummary) -> Tuning {
        apply_tuning(&mut self.state, summary, &self.cfg)
    }
}

/// The ledger entry of one fire; the topic is the explicit tag or derived from the content.
pub fn fire_record(kind: FireKind, req: &CheckRequest<'_>, at: DateTime<Utc>) -> FireRecord {
    FireRecord {
        at,
        kind,
        action: req.action,
        session: req.session_key.map(str::to_owned),
        topic: req.topic.map(str::to_owned).unwrap_or_else(|| topic_of(req.content)),
        content_hash: content_hash(req.content),
        priority: req.priority,
    }
}

/// The tuning step on a state, shared by the in-memory policy and the store's
/// read-modify-write (so a tuning never overwrites a peer's fires).
pub fn apply_tuning(state: &mut PolicyState, summary: FeedbackSummary, cfg: &PolicyConfig) -> Tuning {
    let tuning = adaptive::tune(&mut state.multiplier, summary.overall, &cfg.adaptive);
    state.feedback = summary;
    tuning
}
