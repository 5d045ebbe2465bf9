//! One conversation's serial lane: a local task taking its turns in order.

use super::{Activity, LaneState, OriginClass, OriginPools, TurnHandler, TurnOutcome};

use futures_util::future::{AbortHandle, Abortable};
use futures_util::FutureExt;
use raven_proto::{BusyPolicy, Origin, TurnRequest};
use std::cell::RefCell;
use std::collections::VecDeque;
use std::panic::AssertUnwindSafe;
use std::rc::Rc;
use tokio::sync::mpsc;

/// Messages injected into a running turn.
#[derive(Clone, Default, Debug)]
pub struct Inbox(Rc<RefCell<VecDeque<String>>>);

impl Inbox {
    pub fn push(&self, m: String) {
        self.0.borrow_mut().push_back(m);
    }

    /// Everything injected so far, oldest first; the turn merges them as user turns.
    pub fn drain(&self) -> Vec<String> {
        self.0.borrow_mut().drain(..).collect()
    }
}

/// Removes an idle lane from the scheduler's map (so conversations that come and go, such as
/// subagents and cron jobs, do not keep a task each for ever); the next turn makes a new one.
pub(super) struct Retire {
    pub lanes: super::Lanes,
    pub conversation: String,
}

impl Retire {
    /// True when the lane was idle and is gone from the map: its task may end.
    fn if_idle(&self, state: &Rc<RefCell<LaneState>>, rx: &mpsc::UnboundedReceiver<TurnRequest>) -> bool {
        let idle = rx.is_empty() && state.borrow().queued == 0 && state.borrow().running.is_none();
        let mut lanes = self.lanes.borrow_mut();
        let ours = lanes.get(&self.conversation).is_some_and(|l| Rc::ptr_eq(l, state));
        if idle && ours {
            lanes.remove(&self.conversation);
        }
        idle && ours
    }
}

#[allow(clippy::too_many_arguments)]
pub(super) fn spawn(
    state: Rc<RefCell<LaneState>>,
    mut rx: mpsc::UnboundedReceiver<TurnRequest>,
    handler: Rc<dyn TurnHandler>,
    pools: OriginPools,
    outcomes: Option<mpsc::UnboundedSender<(TurnRequest, TurnOutcome)>>,
    waiters: super::Waiters,
    activity: Rc<Activity>,
    retire: Retire,
) {
    actix_rt::spawn(async move {
        while let Some(req) = rx.recv().await {
            let pool = pools.pool(OriginClass::of(req.origin));
            let Ok(_permit) = pool.acquire().await else { break };
            let inbox = Inbox::default();
            let (abort, registration) = AbortHandle::new_pair();
            {
                let mut s = state.borrow_mut();
                s.queued = s.queued.saturating_sub(1);
                s.running = Some((inbox.clone(), abort));
            }
            activity.running();
            let began = std::time::Instant::now();
            // A turn that panics fails alone: the lane (and its queue) lives on.
            let turn = AssertUnwindSafe(handler.run(req.clone(), inbox.clone())).catch_unwind();
            let outcome = match Abortable::new(turn, registration).await {
                Err(_aborted) => TurnOutcome::Interrupted,
                Ok(Ok(outcome)) => outcome,
                Ok(Err(_panic)) => {
                    tracing::error!(conversation = %req.conversation_id, "a turn panicked; the lane goes on");
                    TurnOutcome::Failed("the turn panicked".into())
                }
            };
            state.borrow_mut().running = None;
            // An inject the turn never drained becomes the next turn: nothing is lost.
            let leftover = inbox.drain();
            if !leftover.is_empty() {
                let next = TurnRequest::new(
                    format!("{}-inject", req.request_id),
                    Origin::User,
                    req.conversation_id.clone(),
                    req.channel.clone(),
                    req.chat_id.clone(),
                    leftover.join("\n"),
                    BusyPolicy::Append,
                    req.created_at,
                );
                activity.user_started(&next);
                let s = state.borrow_mut();
                let _ = s.queue.send(next);
                drop(s);
                state.borrow_mut().queued += 1;
            }
            activity.finished(&req, &outcome, began.elapsed());
            if let Some(w) = waiters.borrow_mut().remove(&req.request_id) {
                let _ = w.send(outcome.clone());
            }
            if let Some(tx) = &outcomes {
                let _ = tx.send((req, outcome));
            }
            // No await between the check and the removal: no turn can slip in unseen.
            if retire.if_idle(&state, &rx) {
                break;
            }
        }
    });
}
