//! DeferManager (spec §6): `nudge_defer` waits until the target session's thread settles
//! (idle for a threshold), then goes out through the same nudge routing, so the gate checks
//! it again. A maximum wait expires it. The heap is kept by a [`Keeper`] (the defer rows of the
//! state database): a deferred nudge survives a restart, and taking one out is one atomic
//! read-modify-write, so it fires once even with two processes on one data dir.

use crate::clock::SharedClock;
use crate::context::sessions::last_activity;
use crate::store::db::off_thread;
use crate::store::keeper::{self, Keeper, Section};
use crate::store::StoreError;
use crate::supervise::{LocalBoxFuture, Request, ServeAsync, Service};
use chrono::{DateTime, Duration, Utc};
use raven_proto::PlannerDecision;
use serde::{Deserialize, Serialize};
use std::path::PathBuf;
use std::sync::Arc;

pub const SECTION: &str = "defer";

/// Where the defer heap is kept.
pub type DeferKeeper = Arc<dyn Keeper<DeferHeap>>;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Deferred {
    pub id: String,
    pub decision: PlannerDecision,
    pub registered_at: DateTime<Utc>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct DeferHeap {
    pub entries: Vec<Deferred>,
}

#[derive(Debug, Default, PartialEq)]
pub struct Polled {
    /// Settled: route these now, highest priority first, oldest first.
    pub settled: Vec<Deferred>,
    /// Waited past the maximum: dropped.
    pub expired: Vec<Deferred>,
}

#[derive(Clone)]
pub struct DeferManager {
    store: DeferKeeper,
    sessions: PathBuf,
    idle: Duration,
    max_wait: Duration,
}

impl DeferManager {
    pub fn new(store: DeferKeeper, sessions: PathBuf, idle: Duration, max_wait: Duration) -> Self {
        DeferManager { store, sessions, idle, max_wait }
    }

    /// On the data dir's sessions and its defer state, with the configured idle and wait
    /// times.
    pub fn in_data_dir(dir: &crate::data_dir::DataDir, x: &crate::config::ExecutorConfig) -> Result<Self, StoreError> {
        let store = crate::store::owners::open(dir, crate::store::owners::Owner::Defer)?;
        Ok(DeferManager::new(
            Arc::new(Section::new(store, SECTION)),
            dir.sessions(),
            Duration::minutes(x.defer_idle_minutes),
            Duration::minutes(x.defer_max_wait_minutes),
        ))
    }

    pub fn register(&self, d: Deferred) -> Result<(), StoreError> {
        keeper::change(self.store.as_ref(), |h: &mut DeferHeap| {
            if !h.entries.iter().any(|e| e.id == d.id) {
                h.entries.push(d);
            }
        })
    }

    /// A session is settled when its last message is at least `idle` old (or it has none).
    fn settled(&self, d: &Deferred, now: DateTime<Utc>) -> bool {
        let last = d.decision.target_session.as_deref().and_then(|s| last_activity(&self.sessions, s));
        last.is_none_or(|t| now - t >= self.idle)
    }

    /// Whether anything waits (a read).
    pub fn waiting(&self) -> Result<bool, StoreError> {
        Ok(!self.store.load()?.0.entries.is_empty())
    }

    /// Takes out what settled and what expired.
    pub fn poll(&self, now: DateTime<Utc>) -> Result<Polled, StoreError> {
        // Nothing waits: read, not locked, not written.
        if !self.waiting()? {
            return Ok(Polled::default());
        }
        let mut out = keeper::change(self.store.as_ref(), |h: &mut DeferHeap| {
            let mut polled = Polled::default();
            let mut keep = Vec::new();
            for e in std::mem::take(&mut h.entries) {
                if now - e.registered_at >= self.max_wait {
                    polled.expired.push(e);
                } else if self.settled(&e, now) {
                    polled.settled.push(e);
                } else {
                    keep.push(e);
                }
            }
            h.entries = keep;
            polled
        })?;
        out.settled
            .sort_by(|a, b| b.decision.priority.cmp(&a.decision.priority).then(a.registered_at.cmp(&b.registered_at)));
        for e in &out.expired {
            tracing::info!(id = %e.id, "deferred nudge expired after waiting {}", now - e.registered_at);
        }
        Ok(out)
    }

    #[cfg(test)]
    pub fn pending(&self) -> Result<Vec<Deferred>, StoreError> {
        Ok(self.store.load()?.0.entries)
    }
}

pub struct DeferService {
    manager: DeferManager,
    clock: SharedClock,
}

impl DeferService {
    pub fn new(manager: DeferManager, clock: SharedClock) -> Self {
        DeferService { manager, clock }
    }
}

impl Service for DeferService {
    fn name(&self) -> &'static str {
        "DeferManager"
    }
}

pub struct Register {
    pub id: String,
    pub decision: PlannerDecision,
}

impl Request for Register {
    type Reply = Result<(), StoreError>;
    fn failed(r: &Self::Reply) -> bool {
        r.is_err()
    }
}

/// Registered on a blocking thread, awaited: a peer holding the state database stalls no actor.
impl ServeAsync<Register> for DeferService {
    fn serve_async(&mut self, m: Register) -> LocalBoxFuture<'static, Result<(), StoreError>> {
        let d = Deferred { id: m.id, decision: m.decision, registered_at: self.clock.now() };
        let manager = self.manager.clone();
        Box::pin(off_thread(move || manager.register(d)))
    }
}

pub struct Poll;

impl Request for Poll {
    type Reply = Result<Polled, StoreError>;
    fn failed(r: &Self::Reply) -> bool {
        r.is_err()
    }
}

/// A look on the actor's thread (a read, which never waits for a writer); only when something
/// waits is the heap taken from, on a blocking thread.
impl ServeAsync<Poll> for DeferService {
    fn serve_async(&mut self, _: Poll) -> LocalBoxFuture<'static, Result<Polled, StoreError>> {
        match self.manager.waiting() {
            Ok(false) => Box::pin(std::future::ready(Ok(Polled::default()))),
            Err(e) => Box::pin(std::future::ready(Err(e))),
            Ok(true) => {
                let (manager, now) = (self.manager.clone(), self.clock.now());
                Box::pin(off_thread(move || manager.poll(now)))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;
    use raven_proto::{Action, Priority};

    fn at(m: i64) -> DateTime<Utc> {
        Utc.with_ymd_and_hms(2026, 3, 2, 12, 0, 0).unwrap() + Duration::minutes(m)
    }

    fn deferred(id: &str, session: &str, m: i64, p: Priority) -> Deferred {
        let mut decision = PlannerDecision::with_message(Action::NudgeDefer, format!("later {id}"), "r");
        decision.defer_condition = Some("settles".into());
        decision.target_session = Some(session.into());
        decision.priority = p;
        Deferred { id: id.into(), decision, registered_at: at(m) }
    }

    fn talk(dir: &std::path::Path, session_file: &str, at: DateTime<Utc>) {
        let line = serde_json::json!({"role": "user", "content": "hi", "at": at.to_rfc3339()});
        let sessions = crate::data_dir::DataDir::new(dir.join("data")).sessions();
        std::fs::create_dir_all(&sessions).unwrap();
        std::fs::write(sessions.join(session_file), format!("{line}\n")).unwrap();
    }

    /// The defaults: settled after 10 idle minutes, expired after 4 hours.
    fn manager(dir: &std::path::Path) -> DeferManager {
        DeferManager::in_data_dir(&crate::data_dir::DataDir::new(dir.join("data")), &Default::default()).unwrap()
    }

    #[test]
    fn a_defer_settles_after_the_session_goes_idle() {
        let dir = tempfile::tempdir().unwrap();
        let m = manager(dir.path());
        talk(dir.path(), "cli_1.jsonl", at(0));
        m.register(deferred("d1", "cli:1", 0, Priority::Low)).unwrap();
        assert!(m.poll(at(9)).unwrap().settled.is_empty(), "still talking");
        talk(dir.path(), "cli_1.jsonl", at(9));
        assert!(m.poll(at(15)).unwrap().settled.is_empty(), "new activity restarts the idle clock");
        let p = m.poll(at(19)).unwrap();
        assert_eq!(p.settled.len(), 1);
        assert!(m.poll(at(20)).unwrap().settled.is_empty(), "taken once");
    }

    #[test]
    fn a_defer_expires_after_the_maximum_wait() {
        let dir = tempfile::tempdir().unwrap();
        let m = manager(dir.path());
        m.register(deferred("d1", "cli:1", 0, Priority::Low)).unwrap();
        // The user never stops talking.
        for minute in (0..240).step_by(5) {
            talk(dir.path(), "cli_1.jsonl", at(minute));
            assert!(m.poll(at(minute)).unwrap().settled.is_empty());
        }
        let p = m.poll(at(240)).unwrap();
        assert_eq!(p.expired.len(), 1);
        assert!(p.settled.is_empty());
        assert!(m.pending().unwrap().is_empty());
    }

    #[test]
    fn settled_defers_come_out_by_priority_then_age() {
        let dir = tempfile::tempdir().unwrap();
        let m = manager(dir.path());
        m.register(deferred("old-low", "a:1", 0, Priority::Low)).unwrap();
        m.register(deferred("high", "b:1", 5, Priority::High)).unwrap();
        m.register(deferred("new-low", "c:1", 6, Priority::Low)).unwrap();
        let ids: Vec<_> = m.poll(at(30)).unwrap().settled.into_iter().map(|d| d.id).collect();
        assert_eq!(ids, vec!["high", "old-low", "new-low"]);
    }
}
