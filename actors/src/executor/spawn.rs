//! ProactiveSpawn (spec §7): `spawn_agent` runs a micro-agent for a multi-step task. The gate
//! is asked when it is decided (spawn's own quota line, the shared dedup keyed on the task), so a
//! denied task never runs; the run goes on in the background through a `SubagentManager` (a
//! SUBAGENT turn in the spine's system pool), within `agent.subagent_timeout_s`, and its result
//! passes the one check-and-record when it is delivered: a spawn is *started* when decided and
//! charged only when its result reaches the user. A process that must not exit before its spawns
//! are done (a one-shot `raven tick`) waits on [`Spawns`].

use super::dispatcher::NudgeDispatcher;
use crate::feedback::Dispatch;
use crate::policy::{dispatch_through, Check, Gated, Nudge, NudgePolicyService};
use crate::supervise::Handle;
use futures_util::future::LocalBoxFuture;
use raven_proto::{split_target, Action, ExecutionResult, PlannerDecision};
use std::cell::RefCell;
use std::rc::Rc;
use std::time::Duration;
use tokio_util::task::TaskTracker;

/// Why a spawned task's result did not reach its conversation (its reservation is given back).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SpawnError {
    /// The micro-agent's turn failed, in its own words.
    #[error("{0}")]
    Failed(String),
    #[error("interrupted")]
    Interrupted,
    #[error("the spine dropped the turn")]
    Dropped,
    /// The run took longer than `agent.subagent_timeout_s`.
    #[error("the run took longer than {0} s (`agent.subagent_timeout_s`)")]
    TimedOut(u64),
    /// The result was not delivered, with the dispatcher's reason.
    #[error("not delivered: {0}")]
    NotDelivered(String),
}

pub trait SubagentManager {
    /// Runs `task` for the conversation `channel:chat_id`; the result text is delivered there.
    fn spawn<'a>(
        &'a self,
        task: &'a str,
        channel: &'a str,
        chat_id: &'a str,
    ) -> LocalBoxFuture<'a, Result<String, SpawnError>>;
}

/// The spawns still running, for a process that must wait for them before it exits, and
/// what became of those that ended.
#[derive(Clone, Default)]
pub struct Spawns {
    tracker: TaskTracker,
    ended: Rc<RefCell<Vec<String>>>,
}

impl Spawns {
    /// Waits until every spawn started so far has delivered or failed, or `within` passed:
    /// what became of each that ended (a line each), or `None` when some still run.
    pub async fn settle(&self, within: Duration) -> Option<Vec<String>> {
        self.tracker.close();
        let done = tokio::time::timeout(within, self.tracker.wait()).await.is_ok();
        self.tracker.reopen();
        done.then(|| std::mem::take(&mut *self.ended.borrow_mut()))
    }

    /// How many spawns are running now.
    pub fn running(&self) -> usize {
        self.tracker.len()
    }

    fn ended(&self, line: String) {
        self.ended.borrow_mut().push(line);
    }
}

#[derive(Clone)]
pub struct ProactiveSpawn {
    policy: Handle<NudgePolicyService>,
    subagents: Rc<dyn SubagentManager>,
    dispatcher: NudgeDispatcher,
    running: Spawns,
    /// How long one micro-agent's run may take (`agent.subagent_timeout_s`).
    timeout: Duration,
}

impl ProactiveSpawn {
    pub fn new(
        policy: Handle<NudgePolicyService>,
        subagents: Rc<dyn SubagentManager>,
        dispatcher: NudgeDispatcher,
        timeout: Duration,
    ) -> Self {
        ProactiveSpawn { policy, subagents, dispatcher, running: Spawns::default(), timeout }
    }

    /// The spawns this executor started and that are still running.
    pub fn running(&self) -> Spawns {
        self.running.clone()
    }

    pub async fn dispatch(&self, decision: &PlannerDecision, said: &Dispatch) -> ExecutionResult {
        self.dispatch_gated(decision, said, true).await
    }

    /// A spawn the user asked for (a menu pick): gated as a solicited answer (only layers 1
    /// and 10 apply; see `CheckRequest::solicited`).
    pub async fn dispatch_requested(&self, decision: &PlannerDecision, said: &Dispatch) -> ExecutionResult {
        self.dispatch_gated(decision, said, false).await
    }

    async fn dispatch_gated(&self, decision: &PlannerDecision, said: &Dispatch, unsolicited: bool) -> ExecutionResult {
        let task = match (decision.action, decision.spawn_task.as_deref().map(str::trim)) {
            (Action::SpawnAgent, Some(t)) if !t.is_empty() => t.to_owned(),
            _ => return ExecutionResult::failed("not a spawn_agent decision with a task"),
        };
        let targets = self.dispatcher.targets(decision.target_session.as_deref());
        let Some(target) = targets.first().cloned() else {
            return ExecutionResult::failed("no target");
        };
        let nudge = Nudge {
            action: Action::SpawnAgent,
            session_key: unsolicited.then(|| target.clone()),
            content: task.clone(),
            priority: decision.priority,
            topic: None,
            solicited: !unsolicited,
        };
        // Asked now, so a denied task never runs; charged when its result is delivered.
        match self.policy.call(Check(nudge.clone())).await {
            Ok(v) if v.allow => {}
            Ok(v) => return ExecutionResult::denied(&v),
            Err(e) => return ExecutionResult::failed(format!("policy unavailable: {e}")),
        }
        let (this, said, to) = (self.clone(), said.clone(), target.clone());
        actix_rt::spawn(self.running.tracker.track_future(async move {
            match this.run_and_post(&task, &to, &said, nudge).await {
                Ok(()) => this.running.ended(format!("delivered to {to}")),
                Err(e) => {
                    tracing::warn!(task = %task, "the spawned task's result was not delivered: {e}");
                    this.running.ended(format!("not delivered: {e}"));
                }
            }
        }));
        ExecutionResult::started(vec![target])
    }

    /// The micro-agent's run, then its result through the gate to `target` (recorded there as
    /// said, and charged).
    async fn run_and_post(&self, task: &str, target: &str, said: &Dispatch, fire: Nudge) -> Result<(), SpawnError> {
        let (channel, chat_id) = split_target(target);
        let result = tokio::time::timeout(self.timeout, self.subagents.spawn(task, &channel, &chat_id))
            .await
            .map_err(|_| SpawnError::TimedOut(self.timeout.as_secs()))??;
        let targets = [target.to_owned()];
        let gated = dispatch_through(&self.policy, fire.clone(), || async {
            let r = self.dispatcher.post(&targets, &result, said, Some(&fire)).await;
            if r.delivered {
                Ok(r)
            } else {
                Err(r)
            }
        })
        .await;
        match gated {
            Gated::Delivered(_) => Ok(()),
            Gated::Failed(r) => Err(SpawnError::NotDelivered(r.error.unwrap_or_default())),
            Gated::Denied(v) => Err(SpawnError::NotDelivered(format!("the gate said no: {}", v.reason))),
            Gated::Unavailable(e) => Err(SpawnError::NotDelivered(format!("policy unavailable: {e}"))),
        }
    }
}
