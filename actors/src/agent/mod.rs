//! The agent loop (spec §13): `run_turn` over the Provider with tools, sessions persisted per
//! conversation, and the origin gates: user-inbound hooks run for USER turns only; the
//! after-send chain (injected nudges) is skipped for system-generated turns; a CRON turn
//! cannot use the cron tool. Every tool call of a reply runs, in order, under the model's id,
//! and is kept in the session with its result; when the model cannot be reached, the embedded
//! agent stands in (see [`fallback`]).

pub(crate) mod broker;
pub(crate) mod calls;
pub(crate) mod fallback;
pub mod inbound;
pub(crate) mod knowledge;
pub(crate) mod notes;
mod spend;
pub(crate) mod subagent;
pub(crate) mod tools;

use crate::clock::SharedClock;
use crate::context::sessions::SYSTEM_CHANNELS;
use crate::delivery::conversation::Conversations;
use crate::executor::injector::{ApplyInjects, InjectorService, PendingInject};
use crate::feedback::{Dispatch, NudgeFeedbackTracker, Source};
use crate::llm::provider::{
    Caller, ChatMessage, CompletionRequest, Generation, ProviderError, ProviderReply, Role, SharedProvider, ToolCall,
    ToolSchema,
};
pub use crate::sessions::{HistorySink, InboundHook};
use crate::sessions::{SessionLine, SessionStore};
use crate::spine::{Inbox, TurnHandler, TurnOutcome};
use crate::supervise::Handle;
use chrono::{DateTime, Utc};
use futures_util::future::LocalBoxFuture;
use raven_proto::{Origin, TurnRequest};
use spend::Spend;
use std::rc::Rc;
pub use subagent::{AgentSubagent, SUBAGENT_RUNS_KEPT};
use tools::{Tool, ToolCtx};

pub const AGENT_GENERATION: Generation =
    Generation { max_tokens: 1024, temperature: 0.3, caller: Caller::Agent(raven_proto::Origin::User) };

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
    /// What a turn is told of the user (`None`: the conversation alone).
    pub knowledge: Option<knowledge::Knowledge>,
    /// A micro-agent's run (a SUBAGENT turn): its iterations and tokens.
    pub micro: MicroLimits,
}

/// The limits of a micro-agent's run (`agent.subagent_max_iterations`, `subagent_max_tokens`).
#[derive(Debug, Clone, Copy)]
pub struct MicroLimits {
    pub max_iterations: usize,
    pub max_tokens: u64,
}

impl Default for MicroLimits {
    fn default() -> Self {
        let c = crate::config::AgentConfig::default();
        MicroLimits { max_iterations: c.subagent_max_iterations, max_tokens: c.subagent_max_tokens }
    }
}

/// The loop as the spine's turn handler.
#[derive(Clone)]
pub struct Agent(pub Rc<AgentLoop>);

impl TurnHandler for Agent {
    fn run(&self, req: TurnRequest, inbox: Inbox) -> LocalBoxFuture<'static, TurnOutcome> {
        let agent = self.0.clone();
        Box::pin(async move { agent.run_turn(req, inbox).await })
    }
}

impl AgentLoop {
    pub async fn run_turn(&self, req: TurnRequest, inbox: Inbox) -> TurnOutcome {
        let now = self.clock.now();
        if let Some(early) = self.before_the_model(&req, now).await {
            return early;
        }
        // A turn the engine started on a user's conversation (a cron reminder) is not the
        // user's words: nothing of it is stored here; what reaches the user is written as a
        // proactive line by the delivery. The engine's own conversations keep everything.
        let keep = !req.origin.is_system_generated() || SYSTEM_CHANNELS.contains(&req.channel.as_str());
        let reply = match self.answer(&req, &inbox, keep, now).await {
            Ok(reply) => reply,
            Err(e) => return TurnOutcome::Failed(e.to_string()),
        };
        if keep {
            self.persist(&req.channel, &req.chat_id, Role::Assistant, &reply, self.clock.now());
        }
        self.after_send(&req, reply).await
    }

    /// What happens before the model is asked: a conversation that could not be kept is
    /// refused; a user's message ends what waited for a reaction, may be answered by an
    /// inbound hook, and goes into the history. `Some`: the turn ends here.
    async fn before_the_model(&self, req: &TurnRequest, now: DateTime<Utc>) -> Option<TurnOutcome> {
        let (channel, chat_id) = (req.channel.as_str(), req.chat_id.as_str());
        // A conversation that could not be kept is refused before it is answered.
        if let Err(e) = crate::sessions::file_name::validate(channel, chat_id) {
            return Some(TurnOutcome::Failed(format!("this conversation cannot be kept: {e}")));
        }
        if req.origin.is_user_input() {
            self.engaged(channel, chat_id, &req.content, now);
            for hook in &self.inbound_hooks {
                match hook.on_user_message(req).await {
                    Some(crate::sessions::Answer::Done(text)) => return Some(TurnOutcome::Replied(text)),
                    Some(crate::sessions::Answer::Refused(text)) => return Some(TurnOutcome::Refused(text)),
                    None => {}
                }
            }
            if let Some(h) = &self.history {
                h.record(&req.content, now);
            }
        }
        None
    }

    /// The model and the tools in turn, until the model answers in text or the turn has spent
    /// its iterations or tokens; the provider's error when it fails.
    async fn answer(
        &self,
        req: &TurnRequest,
        inbox: &Inbox,
        keep: bool,
        now: DateTime<Utc>,
    ) -> Result<String, ProviderError> {
        let (channel, chat_id) = (req.channel.as_str(), req.chat_id.as_str());
        let tools = self.tools_for(req.origin);
        let schemas: Vec<_> = tools.iter().map(|t| t.schema()).collect();
        let mut messages = self.opening(req, &schemas, now);
        if keep {
            self.persist(channel, chat_id, Role::User, &req.content, now);
        }
        let ctx = ToolCtx {
            conversation_id: req.conversation_id.clone(),
            channel: channel.into(),
            chat_id: chat_id.into(),
            now,
            origin: req.origin,
        };
        let mut provider = fallback::TurnProvider::new(&self.provider, self.embedded.as_ref());
        let mut spend = Spend::of(req.origin, self.max_iterations, self.micro);
        for i in 0..spend.iterations {
            if let Some(stop) = spend.exhausted() {
                return Ok(stop);
            }
            self.take_injected(channel, chat_id, inbox, &mut messages);
            let call = CompletionRequest {
                messages: messages.clone(),
                tools: schemas.clone(),
                tool_choice: None,
                generation: Generation { caller: Caller::Agent(req.origin), ..AGENT_GENERATION },
                context: None,
            };
            let answer = provider.answer(&call).await;
            spend.add(answer.usage, &call, &self.provider.prompt_budget());
            match answer.reply? {
                ProviderReply::Text(t) => return Ok(t),
                ProviderReply::ToolCalls { calls, text } => {
                    let calls = calls::prepared(calls, &format!("raven-{}-{i}", now.timestamp_millis()));
                    self.run_calls(&tools, &text, &calls, &ctx, &mut messages, keep).await;
                }
            }
        }
        Ok(format!("(stopped after {} tool calls)", spend.iterations))
    }

    /// Mid-turn user input: merged as user turns before the next model call.
    fn take_injected(&self, channel: &str, chat_id: &str, inbox: &Inbox, messages: &mut Vec<ChatMessage>) {
        for injected in inbox.drain() {
            self.persist(channel, chat_id, Role::User, &injected, self.clock.now());
            messages.push(ChatMessage::user(injected));
        }
    }

    /// The after-send chain: the nudges waiting to be injected ride the reply, each written as
    /// its own proactive line. Never on a system-generated reply.
    async fn after_send(&self, req: &TurnRequest, reply: String) -> TurnOutcome {
        if req.origin.is_system_generated() {
            return TurnOutcome::Replied(reply);
        }
        let Some(injector) = &self.injector else { return TurnOutcome::Replied(reply) };
        let (channel, chat_id) = (req.channel.as_str(), req.chat_id.as_str());
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
        tools: &[Rc<dyn Tool>],
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
            let result = calls::run(tools, call, ctx).await;
            if keep {
                self.keep(channel, chat_id, &SessionLine::result(id, &result, self.clock.now()));
            }
            messages.push(ChatMessage::tool_result(id, result));
        }
    }

    /// The tools a turn of `origin` may use: a micro-agent's run gets the ones that write no
    /// file of the user's.
    fn tools_for(&self, origin: Origin) -> Vec<Rc<dyn Tool>> {
        let micro = origin == Origin::Subagent;
        self.tools.iter().filter(|t| !micro || t.for_micro_agent()).cloned().collect()
    }

    /// The system prompt, what the turn knows of the user and the conversation so far, and
    /// the new message: within the prompt budget once the tools are paid for.
    fn opening(
        &self,
        req: &TurnRequest,
        schemas: &[ToolSchema],
        now: chrono::DateTime<chrono::Utc>,
    ) -> Vec<ChatMessage> {
        let system = format!("{SYSTEM_PROMPT}\n{}", origin_note(req.origin));
        let budget = self.provider.prompt_budget();
        let tools: Vec<String> = schemas.iter().map(|s| format!("{}{}", s.description, s.parameters)).collect();
        let fixed = [system.as_str(), req.content.as_str()].into_iter().chain(tools.iter().map(String::as_str));
        let allowance = budget.left_after(fixed, 2);
        let history = self.sessions.history(&req.channel, &req.chat_id);
        let (note, history) = match self.knowledge.as_ref().filter(|_| self.provider.reads_prompt()) {
            Some(k) => {
                let p = k.prompt(history, &req.content, now, &budget, allowance);
                (p.note, p.history)
            }
            None => (String::new(), crate::llm::budget::conversation::newest_within(history, &budget, allowance)),
        };
        let system = if note.is_empty() { system } else { format!("{system}\n\n{note}") };
        let mut messages = vec![ChatMessage::system(system)];
        messages.extend(history);
        messages.push(ChatMessage::user(&req.content));
        messages
    }

    /// The user wrote `said` here: what waited for a reaction is engaged, or accepted when the
    /// words are about its topic (they did it).
    fn engaged(&self, channel: &str, chat_id: &str, said: &str, now: chrono::DateTime<chrono::Utc>) {
        let Some(tracker) = &self.feedback else { return };
        if let Err(e) = tracker.record_engaged(&format!("{channel}:{chat_id}"), said, now) {
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
                items: Vec::new(),
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

#[cfg(test)]
mod knowledge_tests;

#[cfg(test)]
mod tests;

#[cfg(test)]
mod tool_call_tests;
