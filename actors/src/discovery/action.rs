//! ActionExecutor (spec §12): runs a picked option. A reply goes out through the injector
//! (queued for the session, then applied to the answer, which records the fire); a tool call
//! runs one of the agent's tools; a spawn hands the task to ProactiveSpawn in the background
//! (its result is delivered to the session when done). Each path asks the NudgePolicy first
//! (without the per-session cooldown: this answers the user) and records the fire; a denial
//! runs nothing and says why.

use super::pending::{ChoiceAction, PendingDecision};
use crate::agent::tools::{Tool, ToolCtx};
use crate::clock::SharedClock;
use crate::executor::injector::{ApplyInjects, InjectorService, QueueInject};
use crate::executor::spawn::ProactiveSpawn;
use crate::policy::{dispatch_through, Check, Gated, Nudge, NudgePolicyService};
use crate::supervise::Handle;
use raven_proto::{Action, Origin, PlannerDecision, Priority};
use std::cell::OnceCell;
use std::rc::Rc;

pub struct ActionExecutor {
    pub policy: Handle<NudgePolicyService>,
    pub injector: Handle<InjectorService>,
    pub tools: Vec<Rc<dyn Tool>>,
    /// Set once the agent exists (the spawn's subagent is the agent itself).
    pub spawn: Rc<OnceCell<ProactiveSpawn>>,
    pub clock: SharedClock,
}

/// The gate's view of a picked action. It answers the user's own message, so it is asked
/// without the per-session cooldown (that layer keeps unsolicited nudges apart; the menu
/// itself was one); the quotas, the dismissal cooldown, the topic layers and the dedup apply.
fn nudge(action: Action, content: String) -> Nudge {
    Nudge { action, session_key: None, content, priority: Priority::Medium, topic: None }
}

impl ActionExecutor {
    /// Runs option `choice` of `menu` for the user on `session`; the answer to show them.
    pub async fn execute(&self, menu: &PendingDecision, choice: usize, conversation: &str) -> String {
        let option = &menu.options[choice];
        let session = menu.session.as_str();
        let id = format!("{}-{}", menu.id, choice + 1);
        match &option.action {
            ChoiceAction::Reply { text } => {
                let n = nudge(Action::NudgeInject, text.clone());
                match self.policy.call(Check(n)).await {
                    Ok(v) if v.allow => {}
                    Ok(v) => return format!("Not now: {}", v.reason),
                    Err(e) => return format!("Not now: the policy is unavailable ({e})"),
                }
                let queue = QueueInject {
                    session: session.into(),
                    nudge_id: id,
                    message: text.clone(),
                    priority: Priority::Medium,
                    topic: crate::policy::topic::topic_of(text),
                };
                if let Ok(Err(e)) | Err(e) = self.injector.call(queue).await.map_err(|e| e.to_string()) {
                    return format!("Could not do “{}”: {e}", option.title);
                }
                let header = format!("“{}”:", option.title);
                let apply = ApplyInjects { session: session.into(), content: header.clone(), origin: Origin::User };
                self.injector.call_async(apply).await.map(|(content, _)| content).unwrap_or(header)
            }
            ChoiceAction::Tool { name, args } => {
                let Some(tool) = self.tools.iter().find(|t| t.schema().name == *name).cloned() else {
                    return format!("Could not do “{}”: no tool named {name}", option.title);
                };
                let (channel, chat_id) = raven_proto::split_target(session);
                let ctx = ToolCtx { conversation_id: conversation.into(), channel, chat_id, now: self.clock.now() };
                let n = nudge(Action::Nudge, format!("{}: {}", option.title, name));
                match dispatch_through(&self.policy, n, || async { Ok::<_, String>(tool.call(args, &ctx).await) }).await
                {
                    Gated::Delivered(result) => format!("“{}”: {result}", option.title),
                    Gated::Denied(v) => format!("Not now: {}", v.reason),
                    Gated::Failed(e) | Gated::Unavailable(e) => format!("Could not do “{}”: {e}", option.title),
                }
            }
            ChoiceAction::Spawn { task } => {
                let Some(spawn) = self.spawn.get().cloned() else {
                    return format!("Could not do “{}”: no subagents in this engine", option.title);
                };
                let decision = PlannerDecision {
                    action: Action::SpawnAgent,
                    spawn_task: Some(task.clone()),
                    target_session: Some(session.to_owned()),
                    priority: Priority::Medium,
                    reason: format!("picked from menu {}", menu.id),
                    proactivity_score: 1.0,
                    ..PlannerDecision::skip("")
                };
                let said = crate::feedback::Dispatch {
                    nudge_id: id,
                    topic: crate::policy::topic::topic_of(&option.title),
                    priority: Priority::Medium,
                    source: crate::feedback::Source::Spawn,
                    job: None,
                };
                // The subagent's result is delivered to the session when it is done; the
                // gate is asked (and the fire recorded) inside the spawn.
                actix_rt::spawn(async move {
                    let r = spawn.dispatch_requested(&decision, &said).await;
                    if !r.delivered {
                        tracing::warn!("the picked task did not complete: {:?}", r.error);
                    }
                });
                format!("On it: “{}”. The result will follow here.", option.title)
            }
        }
    }
}
