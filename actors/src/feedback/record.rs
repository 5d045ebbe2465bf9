//! One line of the lifecycle log (`sentinel/feedback.jsonl`): what was said proactively, and
//! everything the user (or the clock) said of it afterwards.

use crate::journal::{Delivery, Event, VerdictGiven};
use chrono::{DateTime, Utc};
use raven_proto::Priority;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Lifecycle {
    /// Said to the user (one record per conversation it reached).
    Dispatched,
    Accepted,
    Dismissed,
    Neutral,
    /// The user wrote in the conversation within the reaction window: not a verdict, it only
    /// stops the no-reply timer.
    Engaged,
    /// No reply within `feedback.ignore_after_h` of awake time: a light non-acceptance that a
    /// later explicit verdict replaces.
    Ignored,
    /// `/stop <topic>`: the topic is muted until `until`.
    Muted,
    /// `/ok <topic>` after a mute: the mute is lifted.
    Unmuted,
    /// `/snooze <duration>`: nothing proactive but cron until `until`.
    Snoozed,
    /// "Later" on one message: put off until `until`, when it is sent again (see
    /// [`crate::feedback::give`]). An answer about the message that rates it neither way.
    Later,
}

impl Lifecycle {
    /// The verdicts the `nudge_feedback` tool and `raven feedback` may give.
    pub fn parse_verdict(s: &str) -> Option<Lifecycle> {
        match s.trim() {
            "accepted" => Some(Lifecycle::Accepted),
            "dismissed" => Some(Lifecycle::Dismissed),
            "neutral" => Some(Lifecycle::Neutral),
            _ => None,
        }
    }

    /// An explicit answer about one message (the user's or the tool's).
    pub fn is_verdict(self) -> bool {
        matches!(self, Lifecycle::Accepted | Lifecycle::Dismissed | Lifecycle::Neutral | Lifecycle::Later)
    }

    /// Anything that ends a message's no-reply timer.
    pub fn settles(self) -> bool {
        self.is_verdict() || matches!(self, Lifecycle::Engaged | Lifecycle::Ignored)
    }

    pub fn name(self) -> &'static str {
        match self {
            Lifecycle::Dispatched => "dispatched",
            Lifecycle::Accepted => "accepted",
            Lifecycle::Dismissed => "dismissed",
            Lifecycle::Neutral => "neutral",
            Lifecycle::Later => "later",
            Lifecycle::Engaged => "engaged",
            Lifecycle::Ignored => "ignored",
            Lifecycle::Muted => "muted",
            Lifecycle::Unmuted => "unmuted",
            Lifecycle::Snoozed => "snoozed",
        }
    }
}

pub use crate::sessions::Source;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FeedbackRecord {
    pub at: DateTime<Utc>,
    pub nudge_id: String,
    pub event: Lifecycle,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub topic: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub priority: Option<Priority>,
    /// `channel:chat_id` the message reached (dispatched) or the reply came from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session: Option<String>,
    #[serde(default)]
    pub source: Source,
    /// A dismissal that said "stop" (see [`is_hard_reject`]).
    #[serde(default)]
    pub hard: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Someone could see it (a channel other than `cli`, or `cli` with a REPL attached or a
    /// terminal on stdout): only such a message can become `ignored`.
    #[serde(default)]
    pub visible: bool,
    /// The cron job a reminder came from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub job: Option<String>,
    /// Where a mute or a snooze ends, or when a message put off `later` comes again.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub until: Option<DateTime<Utc>>,
    /// A dispatched message's text (cut to [`KEPT_TEXT`] characters): what "later" sends again.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// The kind of a brief's item told ahead by its kind's lead (`payment`): dismissals of a
    /// kind shorten its heads-up to the day before.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
}

/// The most of a message's text its dispatched record keeps.
pub const KEPT_TEXT: usize = 2_000;

impl FeedbackRecord {
    /// A record of `event` on `nudge_id` with every optional field empty.
    pub fn new(at: DateTime<Utc>, nudge_id: impl Into<String>, event: Lifecycle) -> Self {
        FeedbackRecord {
            at,
            nudge_id: nudge_id.into(),
            event,
            topic: None,
            priority: None,
            session: None,
            source: Source::Sentinel,
            hard: false,
            reason: None,
            visible: false,
            job: None,
            until: None,
            text: None,
            kind: None,
        }
    }
}

impl FeedbackRecord {
    /// `event` on the message this record dispatched, carrying its topic, priority, session,
    /// source and job, so a reader needs no join.
    pub fn following(&self, event: Lifecycle, at: DateTime<Utc>) -> FeedbackRecord {
        FeedbackRecord {
            topic: self.topic.clone(),
            priority: self.priority,
            session: self.session.clone(),
            source: self.source,
            job: self.job.clone(),
            ..FeedbackRecord::new(at, &self.nudge_id, event)
        }
    }
}

/// What the one place that says things proactively records of a message it delivered.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Dispatch {
    pub nudge_id: String,
    pub topic: String,
    pub priority: Priority,
    pub source: Source,
    #[serde(default)]
    pub job: Option<String>,
    /// A morning brief's items, each its own message to the feedback loop (a "later" on one
    /// sends that one again); empty for every other message.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub items: Vec<BriefItem>,
}

/// One item of a morning brief: its own id, topic and the text it is sent again with.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BriefItem {
    pub nudge_id: String,
    pub topic: String,
    pub text: String,
    /// Its kind (`payment`), when it is told ahead by its kind's lead.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
}

impl Dispatch {
    #[cfg(test)]
    pub fn new(nudge_id: impl Into<String>, topic: impl Into<String>, priority: Priority, source: Source) -> Self {
        Dispatch { nudge_id: nudge_id.into(), topic: topic.into(), priority, source, job: None, items: Vec::new() }
    }
}

/// A dismissal whose reason asks to stop altogether weighs more in layer 8.
pub fn is_hard_reject(reason: &str) -> bool {
    let r = reason.to_lowercase();
    ["stop", "never", "don't remind", "do not remind", "not interested", "leave me alone"].iter().any(|p| r.contains(p))
}

/// The id a person types: the last six hex digits of a hash of the full id.
pub fn short_id(nudge_id: &str) -> String {
    // FNV-1a: stable across processes and releases (std's hasher is not).
    format!("{:06x}", crate::store::fnv1a(nudge_id.as_bytes()) & 0xff_ffff)
}

impl FeedbackRecord {
    /// The journal's line for this verdict; `None` for a `dispatched` record (the delivery
    /// line says it) and for the user's mutes and snoozes, which are not about one message.
    pub fn journal_event(&self) -> Option<Event> {
        let verdict = match self.event {
            Lifecycle::Accepted => "accepted",
            Lifecycle::Dismissed => "dismissed",
            Lifecycle::Neutral => "neutral",
            Lifecycle::Later => "later",
            Lifecycle::Engaged => "engaged",
            Lifecycle::Ignored => "ignored",
            Lifecycle::Dispatched | Lifecycle::Muted | Lifecycle::Unmuted | Lifecycle::Snoozed => return None,
        };
        Some(Event::Verdict(VerdictGiven {
            nudge_id: self.nudge_id.clone(),
            verdict: verdict.to_owned(),
            topic: self.topic.clone(),
            reason: self.reason.clone(),
            job: self.job.clone(),
        }))
    }
}

impl Dispatch {
    /// The journal's line for this message having reached `target`.
    pub fn delivered_event(&self, target: String) -> Event {
        Event::Delivery(Delivery {
            nudge_id: self.nudge_id.clone(),
            topic: self.topic.clone(),
            target,
            status: "delivered".into(),
            job: self.job.clone(),
        })
    }
}
