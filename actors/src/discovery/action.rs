//! ActionExecutor (spec §12): runs a picked option. A reply is the answer itself; a tool call
//! runs one of the agent's tools; a spawn hands the task to ProactiveSpawn in the background
//! (its result is delivered to the session when done). Each path asks the NudgePolicy first
//! as an answer the user asked for (only layers 1 and 10 apply: a deliberate departure from
//! spec §12, which runs the whole gate) and records the fire; a denial runs nothing, says why,
//! and leaves the menu open.

use super::pending::{ChoiceAction, PendingDecision};
use crate::agent::tools::{Tool, ToolCtx};
use crate::clock::SharedClock;
use crate::executor::spawn::ProactiveSpawn;
use crate::policy::{dispatch_through, Gated, Nudge, NudgePolicyService};
use crate::supervise::Handle;
use raven_proto::{Action, Origin, PlannerDecision, Priority};
use std::cell::OnceCell;
use std::rc::{Rc, Weak};

pub struct ActionExecutor {
    pub policy: Handle<NudgePolicyService>,
    pub tools: Vec<Rc<dyn Tool>>,
    /// Set once the agent exists (the spawn's subagent is the agent itself). Weak: the spawn
    /// leads back through the agent to this executor, and the engine holds it.
    pub spawn: Weak<OnceCell<ProactiveSpawn>>,
    pub clock: SharedClock,
}

/// The gate's view of a picked action: the user asked for it, so only layers 1 and 10 apply
/// (the same pick twice within the dedup window is refused); it is recorded as a fire.
fn nudge(action: Action, content: String) -> Nudge {
    Nudge { action, session_key: None, content, priority: Priority::Medium, topic: None, solicited: true }
}

/// What a pick came to: the answer to show the user, and whether the option ran (a pick
/// that did not run leaves its menu open).
#[derive(Debug, Clone, PartialEq)]
pub struct Picked {
    pub answer: String,
    pub ran: bool,
}

impl Picked {
    fn ran(answer: String) -> Self {
        Picked { answer, ran: true }
    }

    fn not_run(answer: String) -> Self {
        Picked { answer, ran: false }
    }
}

impl ActionExecutor {
    /// Runs option `choice` of `menu` for the user on `session`.
    pub async fn execute(&self, menu: &PendingDecision, choice: usize, conversation: &str) -> Picked {
        let option = &menu.options[choice];
        let session = menu.session.as_str();
        let title = &option.title;
        match &option.action {
            ChoiceAction::Reply { text } => {
                let n = nudge(Action::NudgeInject, text.clone());
                let said = || async { Ok::<_, String>(format!("“{title}”:\n\n— {text}")) };
                gated(title, dispatch_through(&self.policy, n, said).await)
            }
            ChoiceAction::Tool { name, args } => {
                let Some(tool) = self.tools.iter().find(|t| t.schema().name == *name).cloned() else {
                    return Picked::not_run(format!("Could not do “{title}”: no tool named {name}"));
                };
                let (channel, chat_id) = raven_proto::split_target(session);
                let now = self.clock.now();
                let ctx = ToolCtx { conversation_id: conversation.into(), channel, chat_id, now, origin: Origin::User };
                let n = nudge(Action::Nudge, format!("{title}: {name}"));
                let run = || async { Ok::<_, String>(format!("“{title}”: {}", tool.call(args, &ctx).await)) };
                gated(title, dispatch_through(&self.policy, n, run).await)
            }
            ChoiceAction::Spawn { task } => self.spawn(menu, choice, task).await,
        }
    }

    /// Hands the task to ProactiveSpawn: the gate is asked (and the fire recorded) there;
    /// the subagent's result is delivered to the session when it is done.
    async fn spawn(&self, menu: &PendingDecision, choice: usize, task: &str) -> Picked {
        let title = &menu.options[choice].title;
        let Some(spawn) = self.spawn.upgrade().and_then(|s| s.get().cloned()) else {
            return Picked::not_run(format!("Could not do “{title}”: no subagents in this engine"));
        };
        let decision = PlannerDecision {
            action: Action::SpawnAgent,
            spawn_task: Some(task.to_owned()),
            target_session: Some(menu.session.clone()),
            priority: Priority::Medium,
            reason: format!("picked from menu {}", menu.id),
            proactivity_score: 1.0,
            ..PlannerDecision::skip("")
        };
        let said = crate::feedback::Dispatch {
            nudge_id: format!("{}-{}", menu.id, choice + 1),
            topic: crate::policy::topic::topic_of(title),
            priority: Priority::Medium,
            source: crate::feedback::Source::Spawn,
            job: None,
            items: Vec::new(),
        };
        let started = spawn.dispatch_requested(&decision, &said).await;
        match started.error {
            None => Picked::ran(format!("On it: “{title}”. The result will follow here.")),
            Some(e) => Picked::not_run(format!("Could not do “{title}”: {e}")),
        }
    }
}

/// A gated run as the user reads it.
fn gated(title: &str, outcome: Gated<String, String>) -> Picked {
    match outcome {
        Gated::Delivered(answer) => Picked::ran(answer),
        Gated::Denied(v) => Picked::not_run(format!("Not now: {}", v.reason)),
        Gated::Failed(e) | Gated::Unavailable(e) => Picked::not_run(format!("Could not do “{title}”: {e}")),
    }
}
