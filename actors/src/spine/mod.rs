//! The spine (spec §13): every turn, a user's or a proactive one, is a `TurnRequest`
//! submitted to the Scheduler, which routes it to its conversation's serial lane.
//!
//! - One lane per conversation runs one turn at a time, in submission order; lanes of
//!   different conversations run concurrently.
//! - `OriginPools` bound the turns running at once per origin class (user: 4 by default), so a
//!   turn blocked on `ask_user` holds its slot until answered or timed out.
//! - BusyPolicy: APPEND queues a fresh turn; INJECT drops the message into the running turn's
//!   inbox, which the turn drains at the top of each tool-loop iteration (an inject the turn
//!   never drains becomes a fresh appended turn: nothing is lost); INTERRUPT cancels the
//!   running turn. INJECT and INTERRUPT are user-only (`TurnRequest::new` demotes the rest).
//! - The Scheduler counts the user turns in flight and calls its turn-complete callbacks
//!   after every turn, so a proactive source can hold back while the user is being served
//!   (the heartbeat's parked wake, spec §11).

mod lane;

pub use lane::Inbox;

use futures_util::future::{AbortHandle, LocalBoxFuture};
use raven_proto::{BusyPolicy, Origin, TurnRequest};
use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::rc::Rc;
use tokio::sync::{mpsc, Semaphore};

/// How a turn ended.
#[derive(Debug, Clone, PartialEq)]
pub enum TurnOutcome {
    Replied(String),
    /// Answered without doing anything: input a command could not take (a time it could not
    /// read, an unknown id); the text says why.
    Refused(String),
    Failed(String),
    Interrupted,
}

/// Runs one turn. The inbox holds messages injected while it runs.
pub trait TurnHandler {
    fn run(&self, req: TurnRequest, inbox: Inbox) -> LocalBoxFuture<'static, TurnOutcome>;
}

/// The two origin classes the pools bound.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum OriginClass {
    User,
    System,
}

impl OriginClass {
    pub fn of(o: Origin) -> OriginClass {
        if o == Origin::User {
            OriginClass::User
        } else {
            OriginClass::System
        }
    }
}

/// Concurrency bounds per origin class.
#[derive(Clone)]
pub struct OriginPools {
    user: Rc<Semaphore>,
    system: Rc<Semaphore>,
}

impl OriginPools {
    /// The gateway's default is a user pool of 4.
    pub fn new(user: usize, system: usize) -> Self {
        OriginPools { user: Rc::new(Semaphore::new(user.max(1))), system: Rc::new(Semaphore::new(system.max(1))) }
    }

    pub fn pool(&self, class: OriginClass) -> Rc<Semaphore> {
        match class {
            OriginClass::User => self.user.clone(),
            OriginClass::System => self.system.clone(),
        }
    }
}

/// What the Scheduler did with a submission.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Routed {
    /// Queued behind the lane's running turn (or started at once).
    Appended,
    /// Dropped into the running turn's inbox.
    Injected,
    /// The running turn was cancelled; this one is queued next.
    Interrupted,
}

pub(crate) struct LaneState {
    pub queue: mpsc::UnboundedSender<TurnRequest>,
    /// The running turn's inbox and abort handle, while one runs.
    pub running: Option<(Inbox, AbortHandle)>,
    pub queued: usize,
}

/// Routes turns to per-conversation lanes.
#[derive(Clone)]
pub struct Scheduler {
    handler: Rc<dyn TurnHandler>,
    pools: OriginPools,
    lanes: Lanes,
    outcomes: Option<mpsc::UnboundedSender<(TurnRequest, TurnOutcome)>>,
    waiters: Waiters,
    activity: Rc<Activity>,
}

pub(crate) type Lanes = Rc<RefCell<HashMap<String, Rc<RefCell<LaneState>>>>>;

/// Called after every finished turn, once the in-flight count no longer includes it.
pub type TurnComplete = Rc<dyn Fn(&TurnRequest, &TurnOutcome)>;

/// What every clone of a Scheduler shares about the turns going on.
#[derive(Default)]
pub(crate) struct Activity {
    /// User turns submitted (queued or running) and not finished.
    pub user_in_flight: Cell<usize>,
    pub on_complete: RefCell<Vec<TurnComplete>>,
    /// The spine's row in `raven status`: turns queued (the mailbox), handled, failed, time.
    pub meter: RefCell<Option<std::sync::Arc<crate::supervise::Meter>>>,
}

impl Activity {
    pub(crate) fn user_started(&self, req: &TurnRequest) {
        if let Some(m) = self.meter.borrow().as_ref() {
            m.on_send();
        }
        if req.origin == Origin::User {
            self.user_in_flight.set(self.user_in_flight.get() + 1);
        }
    }

    /// A queued turn got its slot and runs now.
    pub(crate) fn running(&self) {
        if let Some(m) = self.meter.borrow().as_ref() {
            m.on_start();
        }
    }

    pub(crate) fn finished(&self, req: &TurnRequest, outcome: &TurnOutcome, took: std::time::Duration) {
        if let Some(m) = self.meter.borrow().as_ref() {
            m.on_done(!matches!(outcome, TurnOutcome::Failed(_)), took.as_nanos() as u64);
        }
        if req.origin == Origin::User {
            self.user_in_flight.set(self.user_in_flight.get().saturating_sub(1));
        }
        // A clone: a callback may register another.
        let callbacks = self.on_complete.borrow().clone();
        for f in callbacks {
            f(req, outcome);
        }
    }
}

/// Callers waiting for a given request's outcome.
pub(crate) type Waiters = Rc<RefCell<HashMap<String, tokio::sync::oneshot::Sender<TurnOutcome>>>>;

impl Scheduler {
    pub fn new(handler: Rc<dyn TurnHandler>, pools: OriginPools) -> Self {
        Scheduler {
            handler,
            pools,
            lanes: Default::default(),
            outcomes: None,
            waiters: Default::default(),
            activity: Default::default(),
        }
    }

    /// User turns submitted and not finished yet, queued or running (an inject rides the
    /// running turn and is not one more).
    pub fn user_turns_in_flight(&self) -> usize {
        self.activity.user_in_flight.get()
    }

    /// `f` is called after every finished turn (any origin), with the in-flight count
    /// already down, on every clone of this Scheduler.
    pub fn on_turn_complete(&self, f: impl Fn(&TurnRequest, &TurnOutcome) + 'static) {
        self.activity.on_complete.borrow_mut().push(Rc::new(f));
    }

    /// Meters the turns under `name` in `metrics` (the "Spine" row of `raven status`).
    pub fn metered(self, metrics: &crate::supervise::Metrics, name: &str) -> Self {
        *self.activity.meter.borrow_mut() = Some(metrics.register(name));
        self
    }

    /// Every finished turn and its outcome is also sent here (tests, metrics, delivery).
    #[cfg(test)]
    pub fn with_outcomes(mut self, tx: mpsc::UnboundedSender<(TurnRequest, TurnOutcome)>) -> Self {
        self.outcomes = Some(tx);
        self
    }

    /// True while a turn of `conversation` is running.
    pub fn has_inflight(&self, conversation: &str) -> bool {
        self.lanes.borrow().get(conversation).is_some_and(|l| l.borrow().running.is_some())
    }

    /// Turns waiting in `conversation`'s lane behind the running one.
    #[cfg(test)]
    pub fn queued(&self, conversation: &str) -> usize {
        self.lanes.borrow().get(conversation).map_or(0, |l| l.borrow().queued)
    }

    /// Submits and returns a receiver for this request's outcome (an injected message has
    /// none of its own: its receiver closes).
    pub fn submit_wait(&self, req: TurnRequest) -> (Routed, tokio::sync::oneshot::Receiver<TurnOutcome>) {
        let (tx, rx) = tokio::sync::oneshot::channel();
        self.waiters.borrow_mut().insert(req.request_id.clone(), tx);
        let id = req.request_id.clone();
        let routed = self.submit(req);
        if routed == Routed::Injected {
            self.waiters.borrow_mut().remove(&id);
        }
        (routed, rx)
    }

    pub fn submit(&self, req: TurnRequest) -> Routed {
        let lane = self.lane(&req.conversation_id);
        let mut l = lane.borrow_mut();
        match (req.busy_policy(), &l.running) {
            (BusyPolicy::Inject, Some((inbox, _))) => {
                inbox.push(req.content);
                Routed::Injected
            }
            (BusyPolicy::Interrupt, Some((_, abort))) => {
                abort.abort();
                l.queued += 1;
                self.activity.user_started(&req);
                let _ = l.queue.send(req);
                Routed::Interrupted
            }
            _ => {
                l.queued += 1;
                self.activity.user_started(&req);
                let _ = l.queue.send(req);
                Routed::Appended
            }
        }
    }

    fn lane(&self, conversation: &str) -> Rc<RefCell<LaneState>> {
        if let Some(l) = self.lanes.borrow().get(conversation) {
            return l.clone();
        }
        let (tx, rx) = mpsc::unbounded_channel();
        let state = Rc::new(RefCell::new(LaneState { queue: tx, running: None, queued: 0 }));
        self.lanes.borrow_mut().insert(conversation.to_owned(), state.clone());
        lane::spawn(
            state.clone(),
            rx,
            self.handler.clone(),
            self.pools.clone(),
            self.outcomes.clone(),
            self.waiters.clone(),
            self.activity.clone(),
            lane::Retire { lanes: self.lanes.clone(), conversation: conversation.to_owned() },
        );
        state
    }

    /// Conversations with a lane now (idle lanes are retired).
    #[cfg(test)]
    pub fn lanes(&self) -> usize {
        self.lanes.borrow().len()
    }
}

#[cfg(test)]
mod tests;
