//! What one journal line says: when, from which source, and one event of a known kind.

use chrono::{DateTime, Utc};
use raven_proto::TickOutcome;
use serde::{Deserialize, Serialize};

/// How much of a message a gate line keeps.
pub const CONTENT_CHARS: usize = 80;

/// One line of the journal.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Entry {
    pub at: DateTime<Utc>,
    /// sentinel, defer, cron, heartbeat, discovery, user…: where known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    /// The process that recorded it (the supervisor, the gateway, a command).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pid: Option<u32>,
    #[serde(flatten)]
    pub event: Event,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Event {
    Tick(Tick),
    Gate(Gate),
    Delivery(Delivery),
    Outbox(OutboxMove),
    Cron(CronFire),
    Verdict(VerdictGiven),
    Config(ConfigReload),
    Heartbeat(HeartbeatRun),
    Discovery(DiscoveryRun),
    LlmUsage(LlmUsage),
}

/// A Sentinel tick: the planner's decision, the route taken and how it ended.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Tick {
    pub route: String,
    pub action: String,
    pub reason: String,
    /// skipped, delivered, denied or failed.
    pub outcome: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fast_path: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nudge_id: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub targets: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// A verdict of the gate (`check`, or `reserve`: checked and charged in one step).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Gate {
    pub step: String,
    pub allow: bool,
    /// The number of the layer that denied (`5`, `2b`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub layer: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub layer_name: Option<String>,
    pub reason: String,
    pub action: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub topic: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session: Option<String>,
    pub content: String,
}

/// A proactive message that reached its conversation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Delivery {
    pub nudge_id: String,
    pub topic: String,
    pub target: String,
    /// `delivered` (a message that waits is an outbox move).
    pub status: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub job: Option<String>,
}

/// A message moving in the outbox: queued, delivered later, dropped or made a dead letter.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OutboxMove {
    #[serde(rename = "move")]
    pub step: String,
    pub delivery_id: String,
    pub target: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nudge_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub topic: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub why: Option<String>,
}

/// A cron job fired.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CronFire {
    pub job: String,
    pub delivered_to: Vec<String>,
}

/// A feedback verdict on one message (anything but its `dispatched` record).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct VerdictGiven {
    pub nudge_id: String,
    pub verdict: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub topic: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub job: Option<String>,
}

/// A heartbeat tick: whether a turn ran, why not, and where its reply went.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HeartbeatRun {
    /// skipped, ran or failed.
    pub outcome: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub delivered_to: Vec<String>,
}

/// A task-discovery run that was due or asked for (`raven discover`): the menu sent, or why
/// none was.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DiscoveryRun {
    /// sent, nothing_to_propose, nothing_new, denied or failed.
    pub outcome: String,
    /// Asked for by the operator rather than due.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub requested: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub menu_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub options: Option<usize>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// The tokens one LLM call used (as its reply said, else its prompt as counted), by role
/// (planner, agent, heartbeat, other), and the local day's total after it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LlmUsage {
    pub role: String,
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
    pub day_total: u64,
}

/// config.toml changed under a running process: what it took, what waits for a restart, or
/// why the file was not taken (the running config stays).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct ConfigReload {
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub applied: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub needs_restart: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

impl Event {
    pub fn tick(o: &TickOutcome) -> Event {
        let outcome = match &o.result {
            None => "skipped",
            Some(r) if r.delivered => "delivered",
            Some(_) if o.route.denied => "denied",
            Some(_) => "failed",
        };
        let result = o.result.as_ref();
        Event::Tick(Tick {
            route: o.route.to_string(),
            action: o.decision.action.as_str().to_owned(),
            reason: o.decision.reason.clone(),
            outcome: outcome.to_owned(),
            fast_path: o.decision.reason.strip_prefix("fast_path:").map(str::to_owned),
            nudge_id: o.nudge_id.clone(),
            targets: result.map(|r| r.targets.clone()).unwrap_or_default(),
            error: result.and_then(|r| r.error.clone()),
        })
    }

    pub fn cron(job: &str, delivered_to: &[String]) -> Event {
        Event::Cron(CronFire { job: job.to_owned(), delivered_to: delivered_to.to_vec() })
    }

    pub fn kind(&self) -> &'static str {
        match self {
            Event::Tick(_) => "tick",
            Event::Gate(_) => "gate",
            Event::Delivery(_) => "delivery",
            Event::Outbox(_) => "outbox",
            Event::Cron(_) => "cron",
            Event::Verdict(_) => "verdict",
            Event::Config(_) => "config",
            Event::Heartbeat(_) => "heartbeat",
            Event::Discovery(_) => "discovery",
            Event::LlmUsage(_) => "llm_usage",
        }
    }
}

impl Entry {
    /// The message this line is about, if any.
    pub fn nudge_id(&self) -> Option<&str> {
        match &self.event {
            Event::Tick(t) => t.nudge_id.as_deref(),
            Event::Delivery(d) => Some(&d.nudge_id),
            Event::Outbox(o) => o.nudge_id.as_deref(),
            Event::Verdict(v) => Some(&v.nudge_id),
            Event::Discovery(d) => d.menu_id.as_deref(),
            Event::Gate(_) | Event::Cron(_) | Event::Config(_) | Event::Heartbeat(_) | Event::LlmUsage(_) => None,
        }
    }

    pub fn topic(&self) -> Option<&str> {
        match &self.event {
            Event::Gate(g) => g.topic.as_deref(),
            Event::Delivery(d) => Some(&d.topic),
            Event::Outbox(o) => o.topic.as_deref(),
            Event::Verdict(v) => v.topic.as_deref(),
            Event::Tick(_)
            | Event::Cron(_)
            | Event::Config(_)
            | Event::Heartbeat(_)
            | Event::Discovery(_)
            | Event::LlmUsage(_) => None,
        }
    }

    /// The cron job this line is about, if any.
    pub fn job(&self) -> Option<&str> {
        match &self.event {
            Event::Cron(c) => Some(&c.job),
            Event::Delivery(d) => d.job.as_deref(),
            Event::Verdict(v) => v.job.as_deref(),
            _ => None,
        }
    }
}
