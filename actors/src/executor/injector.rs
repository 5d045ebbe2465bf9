//! NudgeInjector (spec §6): `nudge_inject` queues a message that rides the agent's next reply
//! in that session. A TTL drops stale entries, a per-session cap evicts the oldest, and the
//! queues are kept by a [`Keeper`] (the injector's rows of the state database), so the REPL and
//! the gateway never consume one twice or lose one: every pop is one atomic read-modify-write.

use crate::clock::SharedClock;
use crate::policy::{Nudge, NudgePolicyService, Reservation, Reserve};
use crate::store::db::off_thread;
use crate::store::keeper::{self, Keeper, Section};
use crate::store::{JsonStateStore, StoreError};
use crate::supervise::{Handle, LocalBoxFuture, Request, ServeAsync, Service};
use chrono::{DateTime, Duration, Utc};
use raven_proto::{Action, Origin, Priority};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::sync::Arc;

pub const SECTION: &str = "injector";

/// Where the inject queues are kept.
pub type InjectKeeper = Arc<dyn Keeper<InjectQueues>>;

/// The queues kept in `store`: the injector's rows of the state database.
pub fn queues_in(store: JsonStateStore) -> InjectKeeper {
    Arc::new(Section::new(store, SECTION))
}

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

#[derive(Clone)]
pub struct NudgeInjector {
    store: InjectKeeper,
    ttl: Duration,
    cap: usize,
}

impl NudgeInjector {
    pub fn new(store: InjectKeeper, ttl: Duration, cap: usize) -> Self {
        NudgeInjector { store, ttl, cap: cap.max(1) }
    }

    /// Queues a message; returns the nudge ids the cap evicted (oldest first).
    pub fn queue(&self, session: &str, p: PendingInject) -> Result<Vec<String>, StoreError> {
        let (ttl, cap) = (self.ttl, self.cap);
        keeper::change(self.store.as_ref(), |q: &mut InjectQueues| {
            let now = p.queued_at;
            let list = q.sessions.entry(session.to_owned()).or_default();
            list.retain(|e| now - e.queued_at < ttl);
            list.push(p);
            let over = list.len().saturating_sub(cap);
            list.drain(..over).map(|e| e.nudge_id).collect()
        })
    }

    /// Whether anything may wait for `session` that a reply of `origin` takes: a read (an error
    /// says yes, so the take reports it).
    pub fn waits(&self, session: &str, origin: Origin) -> bool {
        !origin.is_system_generated() && self.store.load().map_or(true, |(q, _)| q.sessions.contains_key(session))
    }

    /// Pops the session's pending nudges still inside their TTL. A system-generated turn's
    /// reply takes nothing.
    pub fn take(&self, session: &str, origin: Origin, now: DateTime<Utc>) -> Result<Vec<PendingInject>, StoreError> {
        if origin.is_system_generated() {
            return Ok(Vec::new());
        }
        let ttl = self.ttl;
        // Nothing queued for the session: no lock, no write.
        if !self.store.load()?.0.sessions.contains_key(session) {
            return Ok(Vec::new());
        }
        keeper::change(self.store.as_ref(), |q: &mut InjectQueues| {
            let taken: Vec<PendingInject> = q.sessions.remove(session).unwrap_or_default();
            taken.into_iter().filter(|e| now - e.queued_at < ttl).collect::<Vec<_>>()
        })
    }

    /// Puts back injects that were taken but could not ride (the gate said no at reply
    /// time): ahead of what was queued meanwhile, still under their TTL and the cap.
    pub fn put_back(&self, session: &str, back: Vec<PendingInject>) -> Result<(), StoreError> {
        if back.is_empty() {
            return Ok(());
        }
        let cap = self.cap;
        keeper::change(self.store.as_ref(), |q: &mut InjectQueues| {
            let list = q.sessions.entry(session.to_owned()).or_default();
            let mut all = back;
            all.append(list);
            let over = all.len().saturating_sub(cap);
            all.drain(..over);
            *list = all;
        })
    }

    /// The response modifier `(session_key, content) -> content`: the reply with the
    /// nudges appended.
    pub fn compose(content: &str, riding: &[PendingInject]) -> String {
        if riding.is_empty() {
            return content.to_owned();
        }
        let notes: Vec<String> = riding.iter().map(|e| format!("— {}", e.message)).collect();
        format!("{content}\n\n{}", notes.join("\n"))
    }

    #[cfg(test)]
    pub fn pending(&self, session: &str) -> Result<Vec<PendingInject>, StoreError> {
        Ok(self.store.load()?.0.sessions.get(session).cloned().unwrap_or_default())
    }
}

/// The injector as a supervised actor; a popped nudge is reserved at the gate (checked and
/// charged in one step) before it rides the reply.
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
    type Reply = Result<Vec<String>, StoreError>;
    fn failed(r: &Self::Reply) -> bool {
        r.is_err()
    }
}

/// Queued on a blocking thread, awaited: a peer holding the state database stalls no actor.
impl ServeAsync<QueueInject> for InjectorService {
    fn serve_async(&mut self, m: QueueInject) -> LocalBoxFuture<'static, Result<Vec<String>, StoreError>> {
        let p = PendingInject {
            nudge_id: m.nudge_id,
            message: m.message,
            priority: m.priority,
            queued_at: self.clock.now(),
            topic: m.topic,
        };
        let injector = self.injector.clone();
        Box::pin(off_thread(move || injector.queue(&m.session, p)))
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

/// After every turn: a look (a read, which never waits for a writer) on the actor's thread; only
/// when something waits for the session are it taken and what the gate held back put back, on a
/// blocking thread.
impl ServeAsync<ApplyInjects> for InjectorService {
    fn serve_async(&mut self, m: ApplyInjects) -> LocalBoxFuture<'static, (String, Vec<PendingInject>)> {
        if !self.injector.waits(&m.session, m.origin) {
            return Box::pin(std::future::ready((m.content, Vec::new())));
        }
        let (policy, injector, now) = (self.policy.clone(), self.injector.clone(), self.clock.now());
        Box::pin(async move {
            let (from, session, origin) = (injector.clone(), m.session.clone(), m.origin);
            let taken = off_thread(move || from.take(&session, origin, now)).await.unwrap_or_else(|e| {
                // The reply still goes out; the nudges stay queued for the next one.
                tracing::error!("injects not applied: {e}");
                Vec::new()
            });
            let (riding, held) = reserve_each(&policy, &m.session, taken).await;
            let session = m.session.clone();
            if let Err(e) = off_thread(move || injector.put_back(&session, held)).await {
                tracing::error!("injects withheld at reply time were not put back: {e}");
            }
            (NudgeInjector::compose(&m.content, &riding), riding)
        })
    }
}

/// Each taken inject reserved at the gate (checked when queued, reserved now: other
/// dispatchers may have sent meanwhile): those that ride this reply, and those the gate held
/// back, which wait for the next reply.
async fn reserve_each(
    policy: &Handle<NudgePolicyService>,
    session: &str,
    taken: Vec<PendingInject>,
) -> (Vec<PendingInject>, Vec<PendingInject>) {
    let (mut riding, mut held) = (Vec::new(), Vec::new());
    for p in taken {
        match policy.call_async(Reserve(p.nudge(session))).await {
            Ok(Ok(Reservation::Held(..))) => riding.push(p),
            Ok(Ok(Reservation::Denied(v))) => {
                tracing::info!(nudge = %p.nudge_id, "inject held for the next reply by the gate: {}", v.reason);
                held.push(p);
            }
            Ok(Err(e)) => {
                tracing::error!(nudge = %p.nudge_id, "inject held for the next reply, the ledger failed: {e}");
                held.push(p);
            }
            Err(e) => {
                tracing::error!(nudge = %p.nudge_id, "inject held for the next reply, the policy is unavailable: {e}");
                held.push(p);
            }
        }
    }
    (riding, held)
}

impl PendingInject {
    /// The inject as the gate sees it, riding a reply in `session`.
    fn nudge(&self, session: &str) -> Nudge {
        Nudge {
            action: Action::NudgeInject,
            session_key: Some(session.to_owned()),
            content: self.message.clone(),
            priority: self.priority,
            topic: (!self.topic.is_empty()).then(|| self.topic.clone()),
            solicited: false,
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

    /// What a reply does without the gate: take, then compose.
    fn apply(
        inj: &NudgeInjector,
        session: &str,
        content: &str,
        origin: Origin,
        now: DateTime<Utc>,
    ) -> Result<(String, Vec<PendingInject>), StoreError> {
        let taken = inj.take(session, origin, now)?;
        Ok((NudgeInjector::compose(content, &taken), taken))
    }

    fn injector(dir: &std::path::Path) -> NudgeInjector {
        NudgeInjector::new(queues_in(JsonStateStore::new(dir.join("state.json"))), Duration::minutes(60), 2)
    }

    #[test]
    fn ttl_expiry_drops_stale_injects() {
        let dir = tempfile::tempdir().unwrap();
        let inj = injector(dir.path());
        inj.queue("cli:1", pending("a", 0)).unwrap();
        let (out, taken) = apply(&inj, "cli:1", "reply", Origin::User, at(61)).unwrap();
        assert_eq!(out, "reply");
        assert!(taken.is_empty());
        inj.queue("cli:1", pending("b", 61)).unwrap();
        let (out, _) = apply(&inj, "cli:1", "reply", Origin::User, at(70)).unwrap();
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
            let (out, taken) = apply(&inj, "cli:1", "proactive reply", origin, at(1)).unwrap();
            assert_eq!(out, "proactive reply");
            assert!(taken.is_empty());
        }
        let (out, _) = apply(&inj, "cli:1", "user reply", Origin::User, at(2)).unwrap();
        assert_eq!(out, "user reply\n\n— note a");
        let (out, _) = apply(&inj, "cli:1", "again", Origin::User, at(3)).unwrap();
        assert_eq!(out, "again", "consumed once");
    }
}
