//! The agent loop (spec §13): `run_turn` over the Provider with tools, sessions persisted per
//! conversation, and the origin gates: user-inbound hooks run for USER turns only; the
//! after-send chain (injected nudges) is skipped for system-generated turns; a CRON turn
//! cannot use the cron tool. Every tool call of a reply runs, in order, under the model's id,
//! and is kept in the session with its result; when the model cannot be reached, the embedded
//! agent stands in (see [`fallback`]).

pub mod broker;
pub mod calls;
pub mod fallback;
pub mod replay;
pub mod session;
pub mod session_file;
pub mod session_layout;
pub mod tools;

use crate::clock::SharedClock;
use crate::context::sessions::SYSTEM_CHANNELS;
use crate::executor::conversation::Conversations;
use crate::executor::injector::{ApplyInjects, InjectorService, PendingInject};
use crate::feedback::tool::CURRENT_SESSION;
use crate::feedback::{Dispatch, NudgeFeedbackTracker, Source};
use crate::planner::provider::{
    Caller, ChatMessage, CompletionRequest, Generation, ProviderReply, Role, SharedProvider, ToolCall,
};
use crate::spine::{Inbox, TurnHandler, TurnOutcome};
use crate::supervise::Handle;
use futures_util::future::LocalBoxFuture;
use raven_proto::{Origin, TurnRequest};
use session::{SessionLine, SessionStore};
use std::rc::Rc;
use tools::{Tool, ToolCtx, TURN_ORIGIN};

pub const AGENT_GENERATION: Generation = Generation { max_tokens: 1024, temperature: 0.3, caller: Caller::Agent };

pub const SYSTEM_PROMPT: &str = "You are Raven, the user's personal assistant. Be brief and concrete. \
Use the tools when they help; when a proactive nudge you sent gets a reaction, record it with nudge_feedback.";

/// The line the system prompt gets per origin, so the model (and the rules provider) knows
/// what kind of turn this is.
pub fn origin_note(o: Origin) -> &'static str {
    match o {
        Origin::User => "turn origin: USER — the user wrote this.",
        Origin::Sentinel => "turn origin: SENTINEL — a proactive check, not the user's words.",
        Origin::Cron => "turn origin: CRON — a reminder the user scheduled; render it for the user.",
        Origin::Heartbeat => "turn origin: HEARTBEAT — periodic task review.",
        Origin::Subagent => "turn origin: SUBAGENT — a task handed to a helper agent.",
    }
}

/// A hook on genuine user input; it may consume the message (a menu pick, say) and answer.
pub trait InboundHook {
    fn on_user_message<'a>(&'a self, req: &'a TurnRequest) -> LocalBoxFuture<'a, Option<String>>;
}

pub struct AgentLoop {
    pub provider: SharedProvider,
    /// Answers in the model's place while it cannot be reached: the embedded agent, saying
    /// so (`None`: the provider's error fails the turn).
    pub embedded: Option<SharedProvider>,
    pub tools: Vec<Rc<dyn Tool>>,
    pub sessions: SessionStore,
    pub injector: Option<Handle<InjectorService>>,
    pub inbound_hooks: Vec<Rc<dyn InboundHook>>,
    pub clock: SharedClock,
    pub max_iterations: usize,
    /// Where an inject that rode a reply is written as its own proactive line.
    pub conversations: Option<Conversations>,
    /// The engagement hook: a user line ends the no-reply timer of what waits there.
    pub feedback: Option<Rc<NudgeFeedbackTracker>>,
    /// `workspace/history.md`: one line per user message that reaches the agent.
    pub history: Option<Rc<dyn HistorySink>>,
}

/// Takes the user's messages that reach the agent (the routine learner's input).
pub trait HistorySink {
    fn record(&self, text: &str, at: chrono::DateTime<chrono::Utc>);
}

/// The loop as the spine's turn handler.
#[derive(Clone)]
pub struct Agent(pub Rc<AgentLoop>);

impl TurnHandler for Agent {
    fn run(&self, req: TurnRequest, inbox: Inbox) -> LocalBoxFuture<'static, TurnOutcome> {
        let agent = self.0.clone();
        let origin = req.origin;
        let session = format!("{}:{}", req.channel, req.chat_id);
        Box::pin(
            TURN_ORIGIN.scope(origin, CURRENT_SESSION.scope(session, async move { agent.run_turn(req, inbox).await })),
        )
    }
}

impl AgentLoop {
    pub async fn run_turn(&self, req: TurnRequest, inbox: Inbox) -> TurnOutcome {
        let now = self.clock.now();
        let (channel, chat_id) = (req.channel.as_str(), req.chat_id.as_str());
        // A conversation that could not be kept is refused before it is answered.
        if let Err(e) = session_file::validate(channel, chat_id) {
            return TurnOutcome::Failed(format!("this conversation cannot be kept: {e}"));
        }
        if req.origin.is_user_input() {
            self.engaged(channel, chat_id, now);
            for hook in &self.inbound_hooks {
                if let Some(answer) = hook.on_user_message(&req).await {
                    return TurnOutcome::Replied(answer);
                }
            }
            if let Some(h) = &self.history {
                h.record(&req.content, now);
            }
        }
        // A turn the engine started on a user's conversation (a cron reminder) is not the
        // user's words: nothing of it is stored here; what reaches the user is written as a
        // proactive line by the delivery. The engine's own conversations keep everything.
        let keep = !req.origin.is_system_generated() || SYSTEM_CHANNELS.contains(&channel);
        let system = format!("{SYSTEM_PROMPT}\n{}", origin_note(req.origin));
        let schemas: Vec<_> = self.tools.iter().map(|t| t.schema()).collect();
        let history = self.history_within_budget(channel, chat_id, &system, &req.content, &schemas);
        let mut messages = vec![ChatMessage::system(system)];
        messages.extend(history);
        messages.push(ChatMessage::user(&req.content));
        if keep {
            self.persist(channel, chat_id, Role::User, &req.content, now);
        }
        let ctx = ToolCtx {
            conversation_id: req.conversation_id.clone(),
            channel: channel.into(),
            chat_id: chat_id.into(),
            now,
        };
        let mut provider = fallback::TurnProvider::new(&self.provider, self.embedded.as_ref());
        let mut reply = None;
        for i in 0..self.max_iterations {
            // Mid-turn user input: merged as user turns before the next model call.
            for injected in inbox.drain() {
                self.persist(channel, chat_id, Role::User, &injected, self.clock.now());
                messages.push(ChatMessage::user(injected));
            }
            let call = CompletionRequest {
                messages: messages.clone(),
                tools: schemas.clone(),
                tool_choice: None,
                generation: AGENT_GENERATION,
                context: None,
            };
            match provider.complete(&call).await {
                Err(e) => return TurnOutcome::Failed(e.to_string()),
                Ok(ProviderReply::Text(t)) => {
                    reply = Some(t);
                    break;
                }
                Ok(ProviderReply::ToolCalls { calls, text }) => {
                    let calls = calls::prepared(calls, &format!("raven-{}-{i}", now.timestamp_millis()));
                    self.run_calls(&text, &calls, &ctx, &mut messages, keep).await;
                }
            }
        }
        let reply = reply.unwrap_or_else(|| format!("(stopped after {} tool calls)", self.max_iterations));
        if keep {
            self.persist(channel, chat_id, Role::Assistant, &reply, self.clock.now());
        }
        // The after-send chain: never on a system-generated reply.
        if req.origin.is_system_generated() {
            return TurnOutcome::Replied(reply);
        }
        let Some(injector) = &self.injector else { return TurnOutcome::Replied(reply) };
        let apply =
            ApplyInjects { session: format!("{channel}:{chat_id}"), content: reply.clone(), origin: req.origin };
        let (sent, taken) = injector.call_async(apply).await.unwrap_or((reply, Vec::new()));
        self.injected(channel, chat_id, &taken);
        TurnOutcome::Replied(sent)
    }

    /// Runs a reply's calls in order. The reply and each result go into the turn's messages
    /// and, when the turn is kept, into the session, as the model will read them back.
    async fn run_calls(
        &self,
        text: &str,
        calls: &[ToolCall],
        ctx: &ToolCtx,
        messages: &mut Vec<ChatMessage>,
        keep: bool,
    ) {
        let (channel, chat_id) = (ctx.channel.as_str(), ctx.chat_id.as_str());
        messages.push(ChatMessage::tool_calls(text, calls));
        if keep {
            self.keep(channel, chat_id, &SessionLine::calls(text, calls, self.clock.now()));
        }
        for call in calls {
            let id = call.id.as_deref().unwrap_or_default();
            let result = calls::run(&self.tools, call, ctx).await;
            if keep {
                self.keep(channel, chat_id, &SessionLine::result(id, &result, self.clock.now()));
            }
            messages.push(ChatMessage::tool_result(id, result));
        }
    }

    /// The conversation so far, its newest messages within the prompt budget once the system
    /// prompt, the tools and the new message are paid for.
    fn history_within_budget(
        &self,
        channel: &str,
        chat_id: &str,
        system: &str,
        content: &str,
        schemas: &[crate::planner::provider::ToolSchema],
    ) -> Vec<ChatMessage> {
        let budget = self.provider.prompt_budget();
        let tools: Vec<String> = schemas.iter().map(|s| format!("{}{}", s.description, s.parameters)).collect();
        let fixed = [system, content].into_iter().chain(tools.iter().map(String::as_str));
        let allowance = budget.left_after(fixed, 2);
        crate::planner::budget::conversation::newest_within(self.sessions.history(channel, chat_id), &budget, allowance)
    }

    /// The user wrote here: what waited for a reaction is engaged.
    fn engaged(&self, channel: &str, chat_id: &str, now: chrono::DateTime<chrono::Utc>) {
        let Some(tracker) = &self.feedback else { return };
        if let Err(e) = tracker.record_engaged(&format!("{channel}:{chat_id}"), now) {
            tracing::warn!("engagement not recorded: {e}");
        }
    }

    /// Each inject that rode the reply, as its own proactive line (the user just wrote, so
    /// someone sees it).
    fn injected(&self, channel: &str, chat_id: &str, taken: &[PendingInject]) {
        let Some(c) = &self.conversations else { return };
        for p in taken {
            let d = Dispatch {
                nudge_id: p.nudge_id.clone(),
                topic: p.topic.clone(),
                priority: p.priority,
                source: Source::Inject,
                job: None,
            };
            c.said(&d, channel, chat_id, &p.message, true, self.clock.now());
        }
    }

    fn persist(&self, channel: &str, chat_id: &str, role: Role, content: &str, at: chrono::DateTime<chrono::Utc>) {
        self.keep(channel, chat_id, &SessionLine::new(role, content, at));
    }

    fn keep(&self, channel: &str, chat_id: &str, line: &SessionLine) {
        if let Err(e) = self.sessions.append_line(channel, chat_id, line) {
            tracing::warn!("session not saved: {e}");
        }
    }
}

/// How a channel's inbound user message enters (the gateway's and the REPL's dispatch):
/// the answer to a pending ask_user question, else an INJECT into the conversation's
/// running turn, else a fresh turn.
#[derive(Debug, PartialEq, Eq)]
pub enum Inbound {
    Answered,
    Routed(crate::spine::Routed),
}

pub fn dispatch_inbound(
    scheduler: &crate::spine::Scheduler,
    broker: &broker::QuestionBroker,
    mut req: TurnRequest,
) -> (Inbound, Option<tokio::sync::oneshot::Receiver<TurnOutcome>>) {
    if broker.pending_req(&req.conversation_id).is_some() && broker.reply(&req.conversation_id, &req.content) {
        return (Inbound::Answered, None);
    }
    if scheduler.has_inflight(&req.conversation_id) {
        req = TurnRequest::new(
            req.request_id,
            req.origin,
            req.conversation_id,
            req.channel,
            req.chat_id,
            req.content,
            raven_proto::BusyPolicy::Inject,
            req.created_at,
        );
    }
    let (routed, rx) = scheduler.submit_wait(req);
    (Inbound::Routed(routed), Some(rx))
}

/// The real SubagentManager: a SUBAGENT turn (its own conversation) submitted to the spine,
/// so it runs in the system pool beside cron and heartbeat turns; ProactiveSpawn delivers its
/// result to the originating channel.
pub struct AgentSubagent {
    scheduler: crate::spine::Scheduler,
    clock: crate::clock::SharedClock,
    /// Where the runs' conversations are kept: the newest [`SUBAGENT_RUNS_KEPT`] of them.
    sessions: std::path::PathBuf,
    seq: std::cell::Cell<u64>,
}

/// Subagent conversations kept (for a look at what a run did); older ones are removed when a
/// new run starts.
pub const SUBAGENT_RUNS_KEPT: usize = 50;

impl AgentSubagent {
    pub fn new(
        scheduler: crate::spine::Scheduler,
        clock: crate::clock::SharedClock,
        sessions: std::path::PathBuf,
    ) -> Self {
        AgentSubagent { scheduler, clock, sessions, seq: Default::default() }
    }
}

/// Removes all but the newest `keep` subagent conversations in `dir`.
fn prune_subagent_runs(dir: &std::path::Path, keep: usize) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    let mut runs: Vec<(std::time::SystemTime, std::path::PathBuf)> = entries
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with("subagent_"))
        .filter_map(|e| Some((e.metadata().ok()?.modified().ok()?, e.path())))
        .collect();
    runs.sort();
    let over = runs.len().saturating_sub(keep);
    for (_, path) in runs.into_iter().take(over) {
        if let Err(e) = std::fs::remove_file(&path) {
            tracing::warn!("an old subagent conversation was not removed: {}: {e}", path.display());
        }
    }
}

impl crate::executor::spawn::SubagentManager for AgentSubagent {
    fn spawn<'a>(
        &'a self,
        task: &'a str,
        channel: &'a str,
        chat_id: &'a str,
    ) -> LocalBoxFuture<'a, Result<String, String>> {
        Box::pin(async move {
            self.seq.set(self.seq.get() + 1);
            prune_subagent_runs(&self.sessions, SUBAGENT_RUNS_KEPT.saturating_sub(1));
            let n = format!("{}-{}", std::process::id(), self.seq.get());
            let req = TurnRequest::new(
                format!("spawn-{n}"),
                Origin::Subagent,
                format!("subagent:{n}"),
                "subagent",
                n.clone(),
                format!("{task}\n(for {channel}:{chat_id})"),
                raven_proto::BusyPolicy::Append,
                self.clock.now(),
            );
            let (_, outcome) = self.scheduler.submit_wait(req);
            match outcome.await {
                Ok(TurnOutcome::Replied(text)) => Ok(text),
                Ok(TurnOutcome::Failed(e)) => Err(e),
                Ok(TurnOutcome::Interrupted) => Err("interrupted".into()),
                Err(_) => Err("the spine dropped the turn".into()),
            }
        })
    }
}

#[cfg(test)]
mod tests;

#[cfg(test)]
mod tool_call_tests;

#[cfg(test)]
mod prune_tests {
    #[test]
    fn only_the_newest_subagent_runs_are_kept_and_other_conversations_are_left_alone() {
        let dir = tempfile::tempdir().unwrap();
        let old = std::time::SystemTime::now() - std::time::Duration::from_secs(3600);
        for i in 0..5 {
            let p = dir.path().join(format!("subagent_1-{i}.jsonl"));
            std::fs::write(&p, "{}").unwrap();
            let f = std::fs::File::options().append(true).open(&p).unwrap();
            f.set_modified(old + std::time::Duration::from_secs(i)).unwrap();
        }
        std::fs::write(dir.path().join("cli_local.jsonl"), "{}").unwrap();
        super::prune_subagent_runs(dir.path(), 2);
        let mut left: Vec<String> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        left.sort();
        assert_eq!(left, ["cli_local.jsonl", "subagent_1-3.jsonl", "subagent_1-4.jsonl"]);
    }
}
