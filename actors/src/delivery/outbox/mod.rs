//! The outbox: what no outlet took yet, with its lifetime, a bound, and the dead letters. A Sentinel message waits `delivery.outbox_ttl_nudge_h`
//! (6 h): news that late is no news; a cron reminder waits until its job's next slot (a
//! one-shot: 24 h); a message past its time, or pushed out when `delivery.outbox_max` are
//! waiting, becomes a dead letter: kept for `raven outbox --dead`, never delivered.
//!
//! [`Outbox`] states these rules on a value; the [`OutboxStore`] trait keeps them where
//! every process on the data dir shares them: in the state database ([`SqliteOutbox`], a row
//! per message, so a change writes that row, not the outbox) or in memory ([`MemoryOutbox`]).

mod sqlite;
mod store;

pub use sqlite::{open_in, peek_in, SqliteOutbox};
#[cfg(any(test, feature = "testkit"))]
pub use store::MemoryOutbox;
pub use store::{Leased, Levels, OutboxStore, Settled};

use crate::feedback::Dispatch;
use crate::journal::{Event, OutboxMove};
use crate::policy::Nudge;
use chrono::{DateTime, Utc};
use raven_proto::limits::{cut_in_place, ERROR_TEXT_BYTES, OUTBOX_TEXT_BYTES};
use raven_proto::OutboundText;
use serde::{Deserialize, Serialize};

pub const SECTION: &str = "outbox";

/// Dead letters kept (the oldest are dropped past this).
pub const DEAD_KEPT: usize = 1000;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OutboxEntry {
    pub text: OutboundText,
    pub attempts: u32,
    pub last_error: String,
    pub queued_at: DateTime<Utc>,
    pub next_attempt_at: DateTime<Utc>,
    /// A retrier's lease (pid, until): a peer leaves the entry alone meanwhile.
    #[serde(default)]
    pub lease: Option<(u32, DateTime<Utc>)>,
    /// The fire the gate records once this is delivered (it was not charged when it failed).
    #[serde(default)]
    pub fire: Option<Nudge>,
    /// What the conversation and the feedback log record once this is delivered.
    #[serde(default)]
    pub said: Option<Dispatch>,
    /// Past this it is a dead letter, not delivered (`None`: it waits until pushed out).
    #[serde(default)]
    pub expires_at: Option<DateTime<Utc>>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DeadLetter {
    pub entry: OutboxEntry,
    pub at: DateTime<Utc>,
    pub why: String,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Outbox {
    pub entries: Vec<OutboxEntry>,
    pub dead: Vec<DeadLetter>,
}

impl Outbox {
    fn bury(&mut self, entry: OutboxEntry, at: DateTime<Utc>, why: String) {
        tracing::warn!(delivery = %entry.text.delivery_id, "outbox: dead letter: {why}");
        self.dead.push(DeadLetter { entry, at, why });
        let over = self.dead.len().saturating_sub(DEAD_KEPT);
        self.dead.drain(..over);
    }

    /// `entry`, refused for good by its outlet, as a dead letter.
    pub fn refused(&mut self, entry: OutboxEntry, at: DateTime<Utc>, why: String) {
        self.bury(entry, at, why);
    }

    /// Queues `entry` (one copy per target and text); past `max` waiting, the oldest becomes a
    /// dead letter.
    /// A message over [`OUTBOX_TEXT_BYTES`] waits cut, with a note saying how much.
    pub fn admit(&mut self, entry: OutboxEntry, max: usize, now: DateTime<Utc>) {
        let entry = entry.cut();
        if self.entries.iter().any(|e| e.is_same(&entry)) {
            return;
        }
        self.entries.push(entry);
        while self.entries.len() > max.max(1) {
            let oldest = self.entries.remove(0);
            self.bury(oldest, now, format!("the outbox holds at most {max}"));
        }
    }

    /// Whether a retry at `now` has anything to do: an entry due and free, or one expired.
    pub fn has_work(&self, now: DateTime<Utc>) -> bool {
        self.entries.iter().any(|e| e.is_free(now) && (e.next_attempt_at <= now || e.is_expired(now)))
    }

    /// Moves what is past its time (and not leased) to the dead letters; what it buried.
    pub fn expire(&mut self, now: DateTime<Utc>) -> Vec<DeadLetter> {
        let (expired, kept): (Vec<_>, Vec<_>) =
            std::mem::take(&mut self.entries).into_iter().partition(|e| e.is_expired(now) && e.is_free(now));
        self.entries = kept;
        let mut buried = Vec::new();
        for e in expired {
            let why = e.expired_why(now);
            buried.push(DeadLetter { entry: e.clone(), at: now, why: why.clone() });
            self.bury(e, now, why);
        }
        buried
    }

    /// Drops the waiting entry (or dead letter) with this delivery id; whether one was found.
    pub fn drop_id(&mut self, id: &str) -> bool {
        let (n, d) = (self.entries.len(), self.dead.len());
        self.entries.retain(|e| e.text.delivery_id != id);
        self.dead.retain(|d| d.entry.text.delivery_id != id);
        n != self.entries.len() || d != self.dead.len()
    }
}

impl OutboxEntry {
    /// The entry as it waits: a message over [`OUTBOX_TEXT_BYTES`] cut, with a note saying
    /// how much, and its error cut to [`ERROR_TEXT_BYTES`].
    pub fn cut(mut self) -> Self {
        if cut_in_place(&mut self.text.content, OUTBOX_TEXT_BYTES) {
            tracing::warn!(delivery = %self.text.delivery_id, "outbox: a long message waits cut to {OUTBOX_TEXT_BYTES} bytes");
        }
        cut_in_place(&mut self.last_error, ERROR_TEXT_BYTES);
        self
    }

    /// The same text for the same target: one copy waits.
    pub fn is_same(&self, other: &OutboxEntry) -> bool {
        self.text.channel == other.text.channel
            && self.text.chat_id == other.text.chat_id
            && self.text.content == other.text.content
    }

    /// No live lease holds it.
    pub fn is_free(&self, now: DateTime<Utc>) -> bool {
        self.lease.is_none_or(|(_, until)| until <= now)
    }

    pub fn is_expired(&self, now: DateTime<Utc>) -> bool {
        self.expires_at.is_some_and(|t| t <= now)
    }

    /// Why an expired entry is a dead letter.
    pub fn expired_why(&self, now: DateTime<Utc>) -> String {
        format!(
            "not delivered by {} ({} attempts; last: {})",
            self.expires_at.unwrap_or(now),
            self.attempts,
            self.last_error
        )
    }

    /// The journal's line for this entry's move at `step` (`queued`, `delivered`,
    /// `dead_letter`), with why.
    pub fn journal_event(&self, step: &str, why: Option<String>) -> Event {
        Event::Outbox(OutboxMove {
            step: step.to_owned(),
            delivery_id: self.text.delivery_id.clone(),
            target: format!("{}:{}", self.text.channel, self.text.chat_id),
            nudge_id: self.said.as_ref().map(|d| d.nudge_id.clone()),
            topic: self.said.as_ref().map(|d| d.topic.clone()),
            why,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::{Duration, TimeZone};

    fn entry(id: &str, at: DateTime<Utc>, ttl: Option<Duration>) -> OutboxEntry {
        OutboxEntry {
            text: OutboundText::proactive(id, "webhook", "ann", format!("text {id}")),
            attempts: 1,
            last_error: "down".into(),
            queued_at: at,
            next_attempt_at: at,
            lease: None,
            fire: None,
            said: None,
            expires_at: ttl.map(|t| at + t),
        }
    }

    #[test]
    fn a_long_message_and_a_long_error_wait_cut() {
        let t0 = Utc.with_ymd_and_hms(2026, 3, 2, 12, 0, 0).unwrap();
        let mut e = entry("a", t0, None);
        e.text.content = "y".repeat(10 * OUTBOX_TEXT_BYTES);
        e.last_error = "z".repeat(10 * ERROR_TEXT_BYTES);
        let mut outbox = Outbox::default();
        outbox.admit(e, 10, t0);
        let kept = &outbox.entries[0];
        assert!(kept.text.content.len() < OUTBOX_TEXT_BYTES + 64 && kept.text.content.contains("[cut: "));
        assert!(kept.last_error.len() < ERROR_TEXT_BYTES + 64);
    }

    #[test]
    fn past_its_time_or_past_the_bound_a_message_becomes_a_dead_letter() {
        let t0 = Utc.with_ymd_and_hms(2026, 3, 2, 12, 0, 0).unwrap();
        let mut o = Outbox::default();
        o.admit(entry("nudge", t0, Some(Duration::hours(6))), 3, t0);
        o.admit(entry("reply", t0, None), 3, t0);
        o.expire(t0 + Duration::hours(6) - Duration::seconds(1));
        assert_eq!(o.entries.len(), 2);
        o.expire(t0 + Duration::hours(6));
        let ids: Vec<_> = o.entries.iter().map(|e| e.text.delivery_id.as_str()).collect();
        assert_eq!(ids, ["reply"]);
        assert!(o.dead[0].why.starts_with("not delivered by"), "{:?}", o.dead[0]);
        for i in 0..3 {
            o.admit(entry(&format!("m{i}"), t0, None), 3, t0);
        }
        let ids: Vec<_> = o.entries.iter().map(|e| e.text.delivery_id.as_str()).collect();
        assert_eq!(ids, ["m0", "m1", "m2"], "the oldest was pushed out");
        assert_eq!(o.dead.last().unwrap().entry.text.delivery_id, "reply");
        assert!(o.drop_id("reply") && !o.drop_id("reply"));
    }
}
