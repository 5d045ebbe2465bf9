//! The scripted user: each rated proactive message on a topic with a `[[react]]` rule gets its
//! answer `after_minutes` later, through the same surfaces a person uses (a `/stop` or `/ok`
//! reply in the conversation, or a dismissal as `raven feedback` gives it). And the day's
//! verdicts, read back from the feedback log, for the report.

use super::Sim;
use crate::feedback::{FeedbackRecord, Lifecycle};
use chrono::{DateTime, Duration, Utc};

/// A reaction waiting for its time.
#[derive(Debug, Clone)]
pub struct Pending {
    pub at: DateTime<Utc>,
    pub nudge_id: String,
    pub session: String,
    pub with: String,
    pub topic: String,
}

impl Sim<'_> {
    /// The dispatched record of a delivered message (its topic, whether it is rated).
    fn dispatched(&self, nudge_id: &str) -> Option<FeedbackRecord> {
        let records = self.tracker.records().ok()?;
        records.into_iter().find(|r| r.nudge_id == nudge_id && r.event == Lifecycle::Dispatched)
    }

    /// A delivery seen: counted by topic, and answered later when a rule says how.
    pub(super) fn schedule_reaction(&mut self, at: DateTime<Utc>, session: String, nudge_id: &str) {
        let Some(sent) = self.dispatched(nudge_id).filter(|r| r.source.is_rated()) else { return };
        let topic = sent.topic.unwrap_or_default();
        *self.day(at).topics.entry(topic.clone()).or_default() += 1;
        if let Some(rule) = self.plan.reactions.iter().find(|r| r.topic == topic) {
            let at = at + Duration::minutes(i64::from(rule.after_minutes));
            let with = rule.with.clone();
            self.pending.push(Pending { at, nudge_id: nudge_id.to_owned(), session, with, topic });
        }
    }

    pub(super) fn next_reaction(&self) -> Option<DateTime<Utc>> {
        self.pending.iter().map(|p| p.at).min()
    }

    /// Answers every reaction due by `t`, in time order.
    pub(super) async fn react_due(&mut self, t: DateTime<Utc>) {
        self.pending.sort_by_key(|p| p.at);
        while self.pending.first().is_some_and(|p| p.at <= t) {
            let p = self.pending.remove(0);
            self.clock.set(p.at);
            match p.with.as_str() {
                "stop" => self.user_turn(p.at, &p.session, "/stop").await,
                "accept" => self.user_turn(p.at, &p.session, "/ok").await,
                "dismiss" => {
                    if let Err(e) = self.tracker.record_verdict(&p.nudge_id, "dismissed", "scenario", p.at) {
                        self.notes.push(format!("{}: dismissal not recorded: {e}", p.at.to_rfc3339()));
                    }
                }
                _ => {}
            }
            // The topic, not the id (which names the process): the same run renders the same bytes.
            self.mark(p.at, "feedback", format!("{} {}", p.with, p.topic));
        }
        self.clock.set(t);
    }

    /// Each day's reactions as the feedback log has them: verdicts, `ignored`, `engaged`,
    /// mutes and snoozes.
    pub(super) fn count_verdicts(&mut self) {
        let Ok(records) = self.tracker.records() else { return };
        for r in records.iter().filter(|r| r.event != Lifecycle::Dispatched) {
            *self.day(r.at).verdicts.entry(r.event.name().to_owned()).or_default() += 1;
        }
    }
}
