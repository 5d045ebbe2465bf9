//! NudgeDispatcher (spec §6): stateless; posts a `nudge` to each resolved target through
//! the DeliveryHub's non-turn path (a proactive message never re-enters the agent loop), and
//! posts a discovery menu as the finished numbered markdown.

use crate::config::LiveConfig;
use crate::delivery::hub::{DeliveryHubService, Post, PostError};
use crate::feedback::Dispatch;
use crate::policy::Nudge;
use crate::supervise::Handle;
use raven_proto::{split_target, Action, ExecutionResult, OutboundText, PlannerDecision};

#[derive(Clone)]
pub struct NudgeDispatcher {
    hub: Handle<DeliveryHubService>,
    /// Where an untargeted nudge goes (`channel:chat_id`).
    default_targets: DefaultTargets,
}

/// `delivery.default_targets` as it stands at each use: it follows config.toml without a
/// restart. A fixed list (`From<Vec<String>>`) never changes.
#[derive(Debug, Clone)]
pub struct DefaultTargets(LiveConfig);

impl DefaultTargets {
    pub fn following(config: LiveConfig) -> Self {
        DefaultTargets(config)
    }

    pub fn get(&self) -> Vec<String> {
        self.0.get().delivery.default_targets.clone()
    }
}

impl From<Vec<String>> for DefaultTargets {
    fn from(default_targets: Vec<String>) -> Self {
        let delivery = crate::config::DeliveryConfig { default_targets, ..Default::default() };
        DefaultTargets(LiveConfig::new(crate::config::RavenConfig { delivery, ..Default::default() }))
    }
}

/// One option of a discovery menu.
#[derive(Debug, Clone, PartialEq)]
pub struct MenuOption {
    pub title: String,
    pub reason: String,
}

/// The menu as the user sees it: numbered options with one-line reasons.
pub fn render_menu(question: &str, options: &[MenuOption], lang: crate::time::Language) -> String {
    let mut out = format!("{question}\n\n");
    for (i, o) in options.iter().enumerate() {
        out.push_str(&format!("{}. **{}** — {}\n", i + 1, o.title, o.reason));
    }
    out.push_str(match lang {
        crate::time::Language::English => "\nReply with a number (or /pick N).",
        crate::time::Language::Chinese => "\n回复数字即可（或 /pick N）。",
    });
    out
}

impl NudgeDispatcher {
    pub fn new(hub: Handle<DeliveryHubService>, default_targets: impl Into<DefaultTargets>) -> Self {
        NudgeDispatcher { hub, default_targets: default_targets.into() }
    }

    pub fn targets(&self, target_session: Option<&str>) -> Vec<String> {
        match target_session {
            Some(t) => vec![t.to_owned()],
            None => self.default_targets.get(),
        }
    }

    /// Posts `content` to every target; delivered when at least one outlet accepted it.
    /// Each target that got it records it in its own conversation (see
    /// [`crate::delivery::conversation`]).
    pub async fn post(
        &self,
        targets: &[String],
        content: &str,
        said: &Dispatch,
        fire: Option<&Nudge>,
    ) -> ExecutionResult {
        let (mut delivered, mut errors, mut queued) = (Vec::new(), Vec::new(), false);
        for target in targets {
            let (channel, chat_id) = split_target(target);
            let text = OutboundText::proactive(format!("{}@{target}", said.nudge_id), &channel, &chat_id, content);
            let fire = fire.map(|f| Nudge { session_key: Some(target.clone()), ..f.clone() });
            match self.hub.call_async(Post::proactive(text, fire, said.clone())).await {
                Ok(Ok(to)) => delivered.push(to),
                Ok(Err(e @ PostError::Queued(_))) => {
                    queued = true;
                    errors.push(format!("{target}: {e}"))
                }
                Ok(Err(e @ PostError::Dropped(_))) => errors.push(format!("{target}: {e}")),
                Err(e) => errors.push(format!("{target}: {e}")),
            }
        }
        if delivered.is_empty() {
            let why = if errors.is_empty() { "no target".to_owned() } else { errors.join("; ") };
            ExecutionResult { queued, ..ExecutionResult::failed(why) }
        } else {
            ExecutionResult::delivered(delivered)
        }
    }

    pub async fn dispatch(&self, decision: &PlannerDecision, said: &Dispatch) -> ExecutionResult {
        let Some(message) = decision.nudge_message.as_deref() else {
            return ExecutionResult::failed("a nudge without a message");
        };
        // What the gate records should the outbox deliver this late.
        let fire = Nudge { action: Action::Nudge, ..Nudge::of(decision, Some(said.topic.clone())) };
        self.post(&self.targets(decision.target_session.as_deref()), message, said, Some(&fire)).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_menu_is_the_finished_numbered_markdown() {
        let options = [
            MenuOption { title: "Draft the report".into(), reason: "due Friday".into() },
            MenuOption { title: "Book the dentist".into(), reason: "you asked twice".into() },
        ];
        assert_eq!(
            render_menu("Anything I can take off your plate?", &options, crate::time::Language::English),
            "Anything I can take off your plate?\n\n1. **Draft the report** — due Friday\n2. **Book the dentist** — you asked twice\n\nReply with a number (or /pick N)."
        );
    }
}
