//! Messages still waiting for a reaction: the latest one a reply is about, the engagement
//! hook (a user line in the conversation), and the no-reply timer that records `ignored`.
//!
//! The timer lives in the log itself: a visible, rated message with nothing after it is
//! still running; the sweep checks and appends under the log's lock, so two processes never
//! record the same `ignored` twice.

use super::record::{FeedbackRecord, Lifecycle};
use super::{FeedbackError, NudgeFeedbackTracker};
use crate::store::FileLock;
use chrono::{DateTime, Duration, Utc};
use std::collections::HashSet;

/// Ids with an event that ends the no-reply timer (engaged, ignored or a verdict).
fn settled(records: &[FeedbackRecord]) -> HashSet<&str> {
    records.iter().filter(|r| r.event.settles()).map(|r| r.nudge_id.as_str()).collect()
}

/// Ids with an explicit verdict.
fn decided(records: &[FeedbackRecord]) -> HashSet<&str> {
    records.iter().filter(|r| r.event.is_verdict()).map(|r| r.nudge_id.as_str()).collect()
}

/// Awake time between `from` and `to`: five-minute steps that `asleep` says are not quiet.
pub fn awake_between(from: DateTime<Utc>, to: DateTime<Utc>, asleep: &dyn Fn(DateTime<Utc>) -> bool) -> Duration {
    let step = Duration::minutes(5);
    let mut t = from;
    let mut awake = Duration::zero();
    while t < to {
        if !asleep(t) {
            awake += step.min(to - t);
        }
        t += step;
    }
    awake
}

impl NudgeFeedbackTracker {
    fn window(&self) -> Duration {
        Duration::hours(self.config().reaction_window_h)
    }

    /// The latest proactive message to `session` within the reaction window that has no
    /// explicit verdict yet: one that can be rated first, else a cron reminder (`/stop` pauses
    /// its job).
    pub fn latest_undecided(&self, session: &str, now: DateTime<Utc>) -> Result<Option<FeedbackRecord>, FeedbackError> {
        let records = self.records()?;
        let decided = decided(&records);
        Ok(records
            .iter()
            .filter(|r| r.event == Lifecycle::Dispatched && r.session.as_deref() == Some(session))
            .filter(|r| r.at <= now && now - r.at <= self.window() && !decided.contains(r.nudge_id.as_str()))
            // A message that can be rated first: a cron reminder sent after a nudge does not
            // take the verdict meant for the nudge.
            .max_by_key(|r| (r.source.is_rated(), r.at))
            .cloned())
    }

    /// Appends `event` to every dispatched message `waits` picks that nothing has settled yet
    /// (one per message), under the log's lock: once across processes. Returns their ids.
    fn settle_waiting(
        &self,
        event: Lifecycle,
        now: DateTime<Utc>,
        waits: impl Fn(&FeedbackRecord) -> bool,
    ) -> Result<Vec<String>, FeedbackError> {
        let _lock = FileLock::exclusive(self.lock_path()).map_err(|e| self.io(e))?;
        let records = self.records()?;
        let settled = settled(&records);
        let mut seen = HashSet::new();
        let new: Vec<FeedbackRecord> = records
            .iter()
            .filter(|r| r.event == Lifecycle::Dispatched && !settled.contains(r.nudge_id.as_str()))
            .filter(|r| waits(r) && seen.insert(r.nudge_id.clone()))
            .map(|r| r.following(event, now))
            .collect();
        if !new.is_empty() {
            self.append_locked(&new)?;
        }
        Ok(new.into_iter().map(|r| r.nudge_id).collect())
    }

    /// The user wrote `said` in `session`: a rated message there still waiting within the
    /// window whose topic the words are about ("took my medication" after the medication nudge)
    /// is `accepted`: they did it, a verdict. Every other one waiting there is `engaged` (not a
    /// verdict; it only stops the no-reply timer). A command (`/later water`) and words that ask
    /// to stop are no acceptance.
    /// Returns their ids.
    pub fn record_engaged(&self, session: &str, said: &str, now: DateTime<Utc>) -> Result<Vec<String>, FeedbackError> {
        let window = self.window();
        let here = |r: &FeedbackRecord| r.session.as_deref() == Some(session) && r.at <= now && now - r.at <= window;
        let topic = crate::policy::topic::topic_of(said);
        let mut ids = Vec::new();
        if topic != "general" && !said.trim_start().starts_with('/') && !super::record::is_hard_reject(said) {
            ids = self.settle_waiting(Lifecycle::Accepted, now, |r| {
                here(r) && r.source.is_rated() && r.topic.as_deref() == Some(topic.as_str())
            })?;
        }
        ids.extend(self.settle_waiting(Lifecycle::Engaged, now, here)?);
        Ok(ids)
    }

    /// The no-reply timer: a visible, rated message with nothing after it for
    /// `feedback.ignore_after_h` of awake time becomes `ignored`, once. Returns their ids.
    pub fn sweep_ignored(
        &self,
        now: DateTime<Utc>,
        asleep: &dyn Fn(DateTime<Utc>) -> bool,
    ) -> Result<Vec<String>, FeedbackError> {
        let after = Duration::hours(self.config().ignore_after_h);
        let horizon = now - Duration::days(self.config().window_days);
        self.settle_waiting(Lifecycle::Ignored, now, |r| {
            r.visible
                && r.source.is_rated()
                && r.at >= horizon
                && now - r.at >= after
                && awake_between(r.at, now, asleep) >= after
        })
    }
}
