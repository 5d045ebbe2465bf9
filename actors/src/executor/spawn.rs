//! ProactiveSpawn (spec §7): `spawn_agent` runs a micro-agent for a multi-step task. It is
//! reserved at the gate (spawn's own quota line, the shared dedup keyed on the task) when
//! decided, then runs in the background through a `SubagentManager` (a SUBAGENT turn in the
//! spine's system pool), and its result is delivered through the dispatcher; a run or a
//! delivery that fails gives the reservation back.

use super::dispatcher::NudgeDispatcher;
use crate::feedback::Dispatch;
use crate::policy::{release, Nudge, NudgePolicyService, Reservation, Reserve};
use crate::supervise::Handle;
use futures_util::future::LocalBoxFuture;
use raven_proto::{split_target, Action, ExecutionResult, PlannerDecision};
use std::rc::Rc;

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

#[derive(Clone)]
pub struct ProactiveSpawn {
    policy: Handle<NudgePolicyService>,
    subagents: Rc<dyn SubagentManager>,
    dispatcher: NudgeDispatcher,
}

impl ProactiveSpawn {
    /// The micro-agent's run, then its result posted to `target` (recorded there as said).
    async fn run_and_post(&self, task: &str, target: &str, said: &Dispatch, fire: &Nudge) -> Result<(), SpawnError> {
        let (channel, chat_id) = split_target(target);
        let result = self.subagents.spawn(task, &channel, &chat_id).await?;
        let r = self.dispatcher.post(&[target.to_owned()], &result, said, Some(fire)).await;
        match r.delivered {
            true => Ok(()),
            false => Err(SpawnError::NotDelivered(r.error.unwrap_or_default())),
        }
    }

    pub fn new(
        policy: Handle<NudgePolicyService>,
        subagents: Rc<dyn SubagentManager>,
        dispatcher: NudgeDispatcher,
    ) -> Self {
        ProactiveSpawn { policy, subagents, dispatcher }
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
        // Reserved now (checked and charged in one step), run in the background: the tick
        // does not wait for a micro-agent, and a run that fails gives the reservation back.
        let fire = match self.policy.call(Reserve(nudge.clone())).await {
            Ok(Ok(Reservation::Held(_, fire))) => fire,
            Ok(Ok(Reservation::Denied(v))) => return ExecutionResult::denied(&v),
            Ok(Err(e)) => return ExecutionResult::failed(format!("the ledger could not be written: {e}")),
            Err(e) => return ExecutionResult::failed(format!("policy unavailable: {e}")),
        };
        let (this, said, to) = (self.clone(), said.clone(), target.clone());
        actix_rt::spawn(async move {
            if let Err(e) = this.run_and_post(&task, &to, &said, &nudge).await {
                tracing::warn!(task = %task, "the spawned task's result was not delivered: {e}");
                release(&this.policy, fire).await;
            }
        });
        ExecutionResult::delivered(vec![target])
    }
}
