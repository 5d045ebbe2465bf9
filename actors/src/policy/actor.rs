//! The NudgePolicy as a supervised actor. Before each check it hydrates from its ledger's
//! [`Keeper`] when another process changed it (a cheap look at its version otherwise); each
//! fire is one atomic read-modify-write there, so fires recorded by a peer process are never
//! overwritten.

use super::gate::{apply_tuning, fire_record, CheckRequest, NudgePolicy};
use super::ledger::{FireKind, PolicyState};
use super::overrides::PolicyOverrides;
use super::Tuning;
use crate::clock::SharedClock;
use crate::feedback::FeedbackSummary;
use crate::journal::{Event, Journal};
use crate::policy::FireRecord;
use crate::store::keeper::{Keeper, Section};
use crate::store::{JsonStateStore, Stamp, StoreError};
use crate::supervise::{LocalBoxFuture, Request, Serve, ServeAsync, Service};
use raven_proto::{Action, PolicySnapshot, Priority, TopicFireHistory, Verdict};

use std::cell::{Cell, RefCell};
use std::collections::BTreeMap;
use std::rc::Rc;
use std::sync::Arc;

mod write;

/// The store section the policy owns.
pub const SECTION: &str = "policy";

/// Where the gate's ledger and learned feedback are kept.
pub type LedgerKeeper = Arc<dyn Keeper<PolicyState>>;

/// The ledger kept in `store`: the policy's rows of the state database.
pub fn ledger_in(store: JsonStateStore) -> LedgerKeeper {
    Arc::new(Section::new(store, SECTION))
}

pub struct NudgePolicyService {
    /// The gate as this process last knew it, and the ledger's version it read: shared with
    /// the writes in flight, which bring it up to date as they land.
    gate: Rc<Known>,
    store: Option<LedgerKeeper>,
    clock: SharedClock,
    journal: Journal,
}

/// The gate and the version of the ledger it holds.
struct Known {
    policy: RefCell<NudgePolicy>,
    seen: Cell<Option<Stamp>>,
}

impl NudgePolicyService {
    pub fn new(policy: NudgePolicy, store: Option<LedgerKeeper>, clock: SharedClock) -> Self {
        let gate = Rc::new(Known { policy: RefCell::new(policy), seen: Cell::new(None) });
        let s = NudgePolicyService { gate, store, clock, journal: Journal::off() };
        s.hydrate();
        s
    }

    /// Every verdict, allow or deny, goes to the decision journal.
    pub fn with_journal(mut self, journal: Journal) -> Self {
        self.journal = journal;
        self
    }

    /// Re-reads the ledger when what is kept is not the version we last read. A read: in the
    /// state database it never waits for a writer.
    fn hydrate(&self) {
        let Some(store) = &self.store else { return };
        let now_stamp = store.stamp();
        if now_stamp.is_some() && now_stamp == self.gate.seen.get() {
            return;
        }
        match store.load() {
            Ok((state, stamp)) => {
                self.gate.policy.borrow_mut().replace_state(state);
                self.gate.seen.set(stamp);
            }
            Err(e) => {
                tracing::error!("policy state not reloaded, gating on the last known ledger: {e}")
            }
        }
    }

    /// The gate as this process knows it.
    fn policy(&self) -> std::cell::Ref<'_, NudgePolicy> {
        self.gate.policy.borrow()
    }
}

impl Service for NudgePolicyService {
    fn name(&self) -> &'static str {
        "NudgePolicy"
    }

    fn restarting(&mut self) {
        self.gate.seen.set(None);
        self.hydrate();
    }
}

/// A message (or spawn task) as the gate sees it; owned, to travel in messages (and to
/// wait in the outbox until its delivery is recorded).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Nudge {
    pub action: Action,
    pub session_key: Option<String>,
    pub content: String,
    pub priority: Priority,
    pub topic: Option<String>,
    /// The user asked for it (a menu pick): see [`CheckRequest::solicited`].
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub solicited: bool,
}

impl Nudge {
    /// The journal's line for the gate's answer to this request at `step` (`check`, `reserve`).
    pub fn journal_event(&self, step: &str, v: &Verdict) -> Event {
        Event::Gate(crate::journal::Gate {
            step: step.to_owned(),
            allow: v.allow,
            layer: v.layer.map(|l| l.number().to_owned()),
            layer_name: v.layer.map(|l| l.name().to_owned()),
            reason: v.reason.clone(),
            action: self.action.as_str().to_owned(),
            topic: self.topic.clone(),
            session: self.session_key.clone(),
            content: self.content.chars().take(crate::journal::CONTENT_CHARS).collect(),
        })
    }

    /// A nudge-family decision as the gate sees it.
    pub fn of(d: &raven_proto::PlannerDecision, topic: Option<String>) -> Nudge {
        Nudge {
            action: d.action,
            session_key: d.target_session.clone(),
            content: d.nudge_message.clone().unwrap_or_default(),
            priority: d.priority,
            topic,
            solicited: false,
        }
    }

    pub fn as_request(&self) -> CheckRequest<'_> {
        CheckRequest {
            action: self.action,
            session_key: self.session_key.as_deref(),
            content: &self.content,
            priority: self.priority,
            topic: self.topic.as_deref(),
            solicited: self.solicited,
        }
    }
}

/// `check()`: may this be delivered now?
#[derive(Debug, Clone)]
pub struct Check(pub Nudge);

impl Request for Check {
    type Reply = Verdict;
}

impl Serve<Check> for NudgePolicyService {
    fn serve(&mut self, Check(n): Check) -> Verdict {
        self.hydrate();
        let (now, request) = (self.clock.now(), n.as_request());
        let verdict = self.policy().check_request(&request, now);
        self.journal.record(now, None, n.journal_event("check", &verdict));
        verdict
    }
}

/// `check()` and `record()` as one step, under the ledger's lock: an allowed nudge is charged
/// before any other dispatcher (in this process or another) can be checked against the same
/// ledger. A dispatch that then fails gives the reservation back ([`RetractFired`]).
#[derive(Debug, Clone)]
pub struct Reserve(pub Nudge);

#[derive(Debug, Clone, PartialEq)]
pub enum Reservation {
    Denied(Verdict),
    /// Allowed and charged: the record to give back if the dispatch fails.
    Held(Verdict, FireRecord),
}

impl Reservation {
    pub fn verdict(&self) -> &Verdict {
        match self {
            Reservation::Denied(v) | Reservation::Held(v, _) => v,
        }
    }
}

impl Request for Reserve {
    type Reply = Result<Reservation, StoreError>;
    fn failed(r: &Self::Reply) -> bool {
        r.is_err()
    }
}

impl ServeAsync<Reserve> for NudgePolicyService {
    fn serve_async(&mut self, Reserve(n): Reserve) -> LocalBoxFuture<'static, Result<Reservation, StoreError>> {
        let now = self.clock.now();
        let request = n.clone();
        let decide = move |policy: &mut NudgePolicy, ledger: &mut PolicyState| {
            let req = request.as_request();
            if ledger != policy.state() {
                policy.replace_state(ledger.clone());
            }
            let verdict = policy.check_request(&req, now);
            if !verdict.allow {
                return Reservation::Denied(verdict);
            }
            let fire = policy.record_fired(req.action, req.session_key, req.content, req.priority, req.topic, now);
            *ledger = policy.state().clone();
            Reservation::Held(verdict, fire)
        };
        let (written, journal) = (self.write(decide), self.journal.clone());
        Box::pin(async move {
            let out = written.await;
            if let Ok(r) = &out {
                journal.record(now, None, n.journal_event("reserve", r.verdict()));
            }
            out
        })
    }
}

/// A cron job fired: its topic tag enters the shared ledger.
#[derive(Debug, Clone)]
pub struct RecordCronFire {
    pub topic: Option<String>,
    pub content: String,
}

impl Request for RecordCronFire {
    type Reply = Result<(), StoreError>;
    fn failed(r: &Self::Reply) -> bool {
        r.is_err()
    }
}

/// Takes back a fire recorded for a dispatch that then failed (the failure charges nothing).
pub struct RetractFired(pub FireRecord);

impl Request for RetractFired {
    type Reply = Result<(), StoreError>;
    fn failed(r: &Self::Reply) -> bool {
        r.is_err()
    }
}

impl ServeAsync<RetractFired> for NudgePolicyService {
    fn serve_async(&mut self, RetractFired(fire): RetractFired) -> LocalBoxFuture<'static, Result<(), StoreError>> {
        self.write(move |_, s| {
            if let Some(i) = s.fires.iter().rposition(|f| *f == fire) {
                s.fires.remove(i);
            }
        })
    }
}

impl ServeAsync<RecordCronFire> for NudgePolicyService {
    fn serve_async(&mut self, m: RecordCronFire) -> LocalBoxFuture<'static, Result<(), StoreError>> {
        let now = self.clock.now();
        let fire = fire_record(FireKind::Cron, &CheckRequest::cron(&m.content, m.topic.as_deref()), now);
        self.write(move |_, s| s.push_fire(fire, now))
    }
}

#[derive(Debug, Clone)]
pub struct Snapshot;

#[derive(Debug, Clone, PartialEq)]
pub struct SnapshotReply {
    pub state: PolicySnapshot,
    pub fire_history: BTreeMap<String, TopicFireHistory>,
}

impl Request for Snapshot {
    type Reply = SnapshotReply;
}

impl Serve<Snapshot> for NudgePolicyService {
    fn serve(&mut self, _: Snapshot) -> SnapshotReply {
        self.hydrate();
        let now = self.clock.now();
        let policy = self.policy();
        SnapshotReply { state: policy.snapshot_state(now), fire_history: policy.fire_history(now) }
    }
}

/// The runner's per-tick retune with the tracker's latest summary.
#[derive(Debug, Clone)]
pub struct ApplyTuning(pub FeedbackSummary);

impl Request for ApplyTuning {
    type Reply = Result<Tuning, StoreError>;
    fn failed(r: &Self::Reply) -> bool {
        r.is_err()
    }
}

impl ServeAsync<ApplyTuning> for NudgePolicyService {
    fn serve_async(
        &mut self,
        ApplyTuning(summary): ApplyTuning,
    ) -> LocalBoxFuture<'static, Result<Tuning, StoreError>> {
        self.hydrate();
        // Every tick retunes; most ticks change nothing, and those must not write (and fsync)
        // the shared state.
        let unchanged = {
            let policy = self.policy();
            let state = policy.state();
            let mut multiplier = state.multiplier;
            let tuning = super::adaptive::tune(&mut multiplier, summary.overall, &policy.config().adaptive);
            (multiplier == state.multiplier && summary == state.feedback).then_some(tuning)
        };
        match unchanged {
            Some(tuning) => Box::pin(std::future::ready(Ok(tuning))),
            None => self.write(move |p, s| apply_tuning(s, summary, p.config())),
        }
    }
}

/// The preferences reader's latest overrides; the reply lists refused loosenings.
#[derive(Debug, Clone)]
pub struct SetOverrides(pub PolicyOverrides);

impl Request for SetOverrides {
    type Reply = Vec<String>;
}

impl Serve<SetOverrides> for NudgePolicyService {
    fn serve(&mut self, SetOverrides(o): SetOverrides) -> Vec<String> {
        let notes = self.gate.policy.borrow_mut().set_overrides(&o);
        for n in &notes {
            tracing::info!("preferences: {n}");
        }
        notes
    }
}

/// A new configured policy (config.toml changed): the preferences last handed over are
/// applied over it again; the reply lists refused loosenings.
#[derive(Debug, Clone)]
pub struct SetBase(pub crate::config::PolicyConfig);

impl Request for SetBase {
    type Reply = Vec<String>;
}

impl Serve<SetBase> for NudgePolicyService {
    fn serve(&mut self, SetBase(base): SetBase) -> Vec<String> {
        self.gate.policy.borrow_mut().set_base(base)
    }
}
