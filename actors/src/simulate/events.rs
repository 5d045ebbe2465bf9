//! Every event of a run, in the order it happened, for a program to score: read from the
//! run's own decision journal (what reached the user, what the gate held back, the
//! verdicts) plus the scripted user's messages. Each names its source (sentinel, cron,
//! heartbeat, discovery, user), its action, the message id, the topic and the target.

use crate::journal::{Entry, Event, Gate};
use serde::Serialize;

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ReportEvent {
    /// RFC 3339, simulated time.
    pub at: String,
    /// sentinel, cron, heartbeat, discovery or user.
    pub source: String,
    /// delivered, denied, queued, dead_letter, dropped, verdict or message.
    pub kind: String,
    /// nudge, nudge_inject, nudge_defer, spawn_agent, menu, reminder, heartbeat; for a
    /// verdict, the verdict.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub action: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub nudge_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub topic: Option<String>,
    /// `channel:chat_id`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub target: Option<String>,
    /// A denial's layer and reason, a cron job's id, an outbox move's why.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
}

impl ReportEvent {
    fn new(e: &Entry, source: &str, kind: &str) -> ReportEvent {
        ReportEvent {
            at: e.at.to_rfc3339(),
            source: source.to_owned(),
            kind: kind.to_owned(),
            action: None,
            nudge_id: None,
            topic: None,
            target: None,
            detail: None,
        }
    }

    /// A message the scripted user sent.
    pub fn user_message(at: chrono::DateTime<chrono::Utc>, target: &str) -> ReportEvent {
        ReportEvent {
            at: at.to_rfc3339(),
            source: "user".into(),
            kind: "message".into(),
            action: None,
            nudge_id: None,
            topic: None,
            target: Some(target.to_owned()),
            detail: None,
        }
    }
}

/// The journal's lines as report events, in their order. A gate denial takes the source of
/// the line that follows it at the same instant (the tick, discovery run or heartbeat that
/// asked); the Sentinel's otherwise.
pub fn from_journal(entries: &[Entry]) -> Vec<ReportEvent> {
    let mut out = Vec::new();
    let actions = actions_by_id(entries);
    let mut denials: Vec<(&Entry, &Gate)> = Vec::new();
    for e in entries {
        let caller = match &e.event {
            Event::Tick(_) => Some(e.source.as_deref().unwrap_or("sentinel")),
            Event::Discovery(_) => Some("discovery"),
            Event::Heartbeat(_) => Some("heartbeat"),
            _ => None,
        };
        if caller.is_some() || denials.first().is_some_and(|(d, _)| d.at != e.at) {
            flush(&mut denials, caller.map(source_of).unwrap_or("sentinel"), &mut out);
        }
        match &e.event {
            Event::Gate(g) if !g.allow => denials.push((e, g)),
            Event::Delivery(d) => {
                let source = e.source.as_deref().unwrap_or("sentinel");
                let mut r = ReportEvent::new(e, source_of(source), "delivered");
                r.action = actions.get(d.nudge_id.as_str()).map(|a| a.to_string()).or_else(|| action_of(source));
                (r.nudge_id, r.topic, r.target) =
                    (Some(d.nudge_id.clone()), Some(d.topic.clone()), Some(d.target.clone()));
                r.detail = d.job.clone();
                out.push(r);
            }
            Event::Outbox(o) if o.step != "delivered" => {
                let mut r = ReportEvent::new(e, source_of(e.source.as_deref().unwrap_or("sentinel")), &o.step);
                (r.nudge_id, r.topic, r.target) = (o.nudge_id.clone(), o.topic.clone(), Some(o.target.clone()));
                r.detail = o.why.clone();
                out.push(r);
            }
            Event::Verdict(v) => {
                let mut r = ReportEvent::new(e, "user", "verdict");
                (r.action, r.nudge_id, r.topic) = (Some(v.verdict.clone()), Some(v.nudge_id.clone()), v.topic.clone());
                out.push(r);
            }
            _ => {}
        }
    }
    flush(&mut denials, "sentinel", &mut out);
    out
}

/// A tick's line comes after the deliveries it made: the actions are gathered first.
fn actions_by_id(entries: &[Entry]) -> std::collections::HashMap<&str, &str> {
    entries.iter().filter_map(tick_action).collect()
}

fn tick_action(e: &Entry) -> Option<(&str, &str)> {
    match &e.event {
        Event::Tick(t) => t.nudge_id.as_deref().map(|id| (id, t.action.as_str())),
        _ => None,
    }
}

fn flush(denials: &mut Vec<(&Entry, &Gate)>, source: &str, out: &mut Vec<ReportEvent>) {
    for (e, g) in denials.drain(..) {
        let mut r = ReportEvent::new(e, source, "denied");
        (r.action, r.topic, r.target) = (Some(g.action.clone()), g.topic.clone(), g.session.clone());
        let layer = g.layer.as_deref().map(|l| format!("layer {l}: ")).unwrap_or_default();
        r.detail = Some(format!("{layer}{}", g.reason));
        out.push(r);
    }
}

/// The report's five sources: an inject, a defer and a spawn are the Sentinel's decisions;
/// a menu is discovery's.
fn source_of(journal_source: &str) -> &str {
    match journal_source {
        "inject" | "defer" | "spawn" | "sentinel" => "sentinel",
        "menu" | "discovery" => "discovery",
        other => other,
    }
}

/// The action of a delivery no tick line named.
fn action_of(journal_source: &str) -> Option<String> {
    let action = match journal_source {
        "inject" => "nudge_inject",
        "defer" => "nudge_defer",
        "spawn" => "spawn_agent",
        "menu" | "discovery" => "menu",
        "cron" => "reminder",
        "heartbeat" => "heartbeat",
        _ => return None,
    };
    Some(action.to_owned())
}
