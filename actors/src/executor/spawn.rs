//! ProactiveSpawn (spec §7): `spawn_agent` runs a micro-agent for a multi-step task. It
//! passes its own policy check (spawn's own quota line, the shared dedup keyed on the task),
//! spawns through a `SubagentManager`, and delivers the result through the dispatcher.

use super::dispatcher::NudgeDispatcher;
use crate::feedback::Dispatch;
use crate::policy::{dispatch_through, Gated, Nudge, NudgePolicyService};
use crate::supervise::Handle;
use futures_util::future::LocalBoxFuture;
use raven_proto::{split_target, Action, ExecutionResult, PlannerDecision};
use std::rc::Rc;

pub trait SubagentManager {
    /// Runs `task` for the conversation `channel:chat_id`; the result text is delivered there.
    fn spawn<'a>(
        &'a self,
        task: &'a str,
        channel: &'a str,
        chat_id: &'a str,
    ) -> LocalBoxFuture<'a, Result<String, String>>;
}

#[derive(Clone)]
pub struct ProactiveSpawn {
    policy: Handle<NudgePolicyService>,
    subagents: Rc<dyn SubagentManager>,
    dispatcher: NudgeDispatcher,
}

impl ProactiveSpawn {
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

    /// A spawn the user asked for (a menu pick): gated without the per-session cooldown,
    /// which is there against unsolicited nudges, not against answering the user.
    pub async fn dispatch_requested(&self, decision: &PlannerDecision, said: &Dispatch) -> ExecutionResult {
        self.dispatch_gated(decision, said, false).await
    }

    async fn dispatch_gated(&self, decision: &PlannerDecision, said: &Dispatch, session_gate: bool) -> ExecutionResult {
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
            session_key: session_gate.then(|| target.clone()),
            content: task.clone(),
            priority: decision.priority,
            topic: None,
        };
        let (channel, chat_id) = split_target(&target);
        let fire = nudge.clone();
        let gated = dispatch_through(&self.policy, nudge, || async {
            let result = self.subagents.spawn(&task, &channel, &chat_id).await?;
            let r = self.dispatcher.post(std::slice::from_ref(&target), &result, said, Some(&fire)).await;
            if r.delivered {
                Ok(r)
            } else {
                Err(r.error.unwrap_or_default())
            }
        })
        .await;
        match gated {
            Gated::Delivered(r) => r,
            Gated::Denied(v) => ExecutionResult::denied(&v),
            Gated::Failed(e) => ExecutionResult::failed(e),
            Gated::Unavailable(e) => ExecutionResult::failed(format!("policy unavailable: {e}")),
        }
    }
}
