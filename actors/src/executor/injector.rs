//! NudgeInjector (spec §6): `nudge_inject` queues a message that rides the agent's next reply
//! in that session. A TTL drops stale entries, a per-session cap evicts the oldest, and the
//! queue lives in state.json (section `injector`), so the REPL and the gateway never consume
//! one twice or lose one: every pop is a read-modify-write under the store's lock.

use crate::clock::SharedClock;
use crate::policy::{Nudge, NudgePolicyService, RecordFired};
use crate::store::{JsonStateStore, StoreError};
use crate::supervise::{Handle, Request, Serve, Service};
use chrono::{DateTime, Duration, Utc};
use raven_proto::{Action, Origin, Priority};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::sync::Arc;

pub const SECTION: &str = "injector";

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PendingInject {
    pub nudge_id: String,
    pub message: String,
    pub priority: Priority,
    pub queued_at: DateTime<Utc>,
    #[serde(default)]
    pub topic: String,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct InjectQueues {
    pub sessions: BTreeMap<String, Vec<PendingInject>>,
}

#[derive(Debug, Clone)]
pub struct NudgeInjector {
    store: Arc<JsonStateStore>,
    ttl: Duration,
    cap: usize,
}

impl NudgeInjector {
    pub fn new(store: Arc<JsonStateStore>, ttl: Duration, cap: usize) -> Self {
        NudgeInjector { store, ttl, cap: cap.max(1) }
    }

    /// Queues a message; returns the nudge ids the cap evicted (oldest first).
    pub fn queue(&self, session: &str, p: PendingInject) -> Result<Vec<String>, StoreError> {
        let (ttl, cap) = (self.ttl, self.cap);
        self.store.update(SECTION, |q: &mut InjectQueues| {
            let now = p.queued_at;
            let list = q.sessions.entry(session.to_owned()).or_default();
            list.retain(|e| now - e.queued_at < ttl);
            list.push(p);
            let over = list.len().saturating_sub(cap);
            list.drain(..over).map(|e| e.nudge_id).collect()
        })
    }

    /// The response modifier `(session_key, content) -> content`: pops the session's pending
    /// nudges and appends them. A system-generated turn's reply is returned untouched and
    /// nothing is popped.
    pub fn apply(
        &self,
        session: &str,
        content: &str,
        origin: Origin,
        now: DateTime<Utc>,
    ) -> Result<(String, Vec<PendingInject>), StoreError> {
        if origin.is_system_generated() {
            return Ok((content.to_owned(), Vec::new()));
        }
        let ttl = self.ttl;
        let taken = self.store.update(SECTION, |q: &mut InjectQueues| {
            let taken: Vec<PendingInject> = q.sessions.remove(session).unwrap_or_default();
            taken.into_iter().filter(|e| now - e.queued_at < ttl).collect::<Vec<_>>()
        })?;
        if taken.is_empty() {
            return Ok((content.to_owned(), taken));
        }
        let notes: Vec<String> = taken.iter().map(|e| format!("— {}", e.message)).collect();
        Ok((format!("{content}\n\n{}", notes.join("\n")), taken))
    }

    pub fn pending(&self, session: &str) -> Result<Vec<PendingInject>, StoreError> {
        Ok(self.store.read::<InjectQueues>(SECTION)?.0.sessions.get(session).cloned().unwrap_or_default())
    }
}

/// The injector as a supervised actor; a popped nudge is a delivered fire, so the gate
/// records it then.
pub struct InjectorService {
    injector: NudgeInjector,
    policy: Handle<NudgePolicyService>,
    clock: SharedClock,
}

impl InjectorService {
    pub fn new(injector: NudgeInjector, policy: Handle<NudgePolicyService>, clock: SharedClock) -> Self {
        InjectorService { injector, policy, clock }
    }
}

impl Service for InjectorService {
    fn name(&self) -> &'static str {
        "NudgeInjector"
    }
}

pub struct QueueInject {
    pub session: String,
    pub nudge_id: String,
    pub message: String,
    pub priority: Priority,
    pub topic: String,
}

impl Request for QueueInject {
    type Reply = Result<Vec<String>, String>;
    fn failed(r: &Self::Reply) -> bool {
        r.is_err()
    }
}

impl Serve<QueueInject> for InjectorService {
    fn serve(&mut self, m: QueueInject) -> Result<Vec<String>, String> {
        let p = PendingInject {
            nudge_id: m.nudge_id,
            message: m.message,
            priority: m.priority,
            queued_at: self.clock.now(),
            topic: m.topic,
        };
        self.injector.queue(&m.session, p).map_err(|e| e.to_string())
    }
}

/// The after-send hook of a turn.
pub struct ApplyInjects {
    pub session: String,
    pub content: String,
    pub origin: Origin,
}

/// The reply with the injects appended, and the injects it took (the agent writes each into
/// the conversation as its own proactive line).
impl Request for ApplyInjects {
    type Reply = (String, Vec<PendingInject>);
}

impl Serve<ApplyInjects> for InjectorService {
    fn serve(&mut self, m: ApplyInjects) -> (String, Vec<PendingInject>) {
        match self.injector.apply(&m.session, &m.content, m.origin, self.clock.now()) {
            Ok((content, taken)) => {
                for p in &taken {
                    self.policy.do_send(RecordFired(Nudge {
                        action: Action::NudgeInject,
                        session_key: Some(m.session.clone()),
                        content: p.message.clone(),
                        priority: p.priority,
                        topic: (!p.topic.is_empty()).then(|| p.topic.clone()),
                    }));
                }
                (content, taken)
            }
            Err(e) => {
                // The reply still goes out; the nudges stay queued for the next one.
                tracing::error!("injects not applied: {e}");
                (m.content, Vec::new())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    fn at(m: i64) -> DateTime<Utc> {
        Utc.with_ymd_and_hms(2026, 3, 2, 12, 0, 0).unwrap() + Duration::minutes(m)
    }

    fn pending(id: &str, m: i64) -> PendingInject {
        PendingInject {
            nudge_id: id.into(),
            message: format!("note {id}"),
            priority: Priority::Low,
            queued_at: at(m),
            topic: "note".into(),
        }
    }

    fn injector(dir: &std::path::Path) -> NudgeInjector {
        NudgeInjector::new(Arc::new(JsonStateStore::new(dir.join("state.json"))), Duration::minutes(60), 2)
    }

    #[test]
    fn ttl_expiry_drops_stale_injects() {
        let dir = tempfile::tempdir().unwrap();
        let inj = injector(dir.path());
        inj.queue("cli:1", pending("a", 0)).unwrap();
        let (out, taken) = inj.apply("cli:1", "reply", Origin::User, at(61)).unwrap();
        assert_eq!(out, "reply");
        assert!(taken.is_empty());
        inj.queue("cli:1", pending("b", 61)).unwrap();
        let (out, _) = inj.apply("cli:1", "reply", Origin::User, at(70)).unwrap();
        assert_eq!(out, "reply\n\n— note b");
    }

    #[test]
    fn the_cap_evicts_the_oldest_first() {
        let dir = tempfile::tempdir().unwrap();
        let inj = injector(dir.path());
        assert!(inj.queue("cli:1", pending("a", 0)).unwrap().is_empty());
        assert!(inj.queue("cli:1", pending("b", 1)).unwrap().is_empty());
        assert_eq!(inj.queue("cli:1", pending("c", 2)).unwrap(), vec!["a"]);
        let ids: Vec<_> = inj.pending("cli:1").unwrap().into_iter().map(|p| p.nudge_id).collect();
        assert_eq!(ids, vec!["b", "c"]);
    }

    #[test]
    fn system_origin_turns_are_untouched_and_consume_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let inj = injector(dir.path());
        inj.queue("cli:1", pending("a", 0)).unwrap();
        for origin in [Origin::Sentinel, Origin::Cron, Origin::Heartbeat, Origin::Subagent] {
            let (out, taken) = inj.apply("cli:1", "proactive reply", origin, at(1)).unwrap();
            assert_eq!(out, "proactive reply");
            assert!(taken.is_empty());
        }
        let (out, _) = inj.apply("cli:1", "user reply", Origin::User, at(2)).unwrap();
        assert_eq!(out, "user reply\n\n— note a");
        let (out, _) = inj.apply("cli:1", "again", Origin::User, at(3)).unwrap();
        assert_eq!(out, "again", "consumed once");
    }
}
