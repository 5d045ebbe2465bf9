//! The one call shape every LLM backend answers: messages + tools → a tool call or text.
//! Errors are values.

use super::budget::PromptBudget;
use super::usage::Answer;
use futures_util::future::LocalBoxFuture;
use raven_proto::PlannerContext;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::sync::Arc;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    System,
    User,
    Assistant,
    Tool,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChatMessage {
    pub role: Role,
    pub content: String,
    /// An assistant message that called a tool: `[{id, type, function: {name, arguments}}]`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_calls: Option<Value>,
    /// A tool result: the id of the call it answers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<String>,
}

impl ChatMessage {
    fn plain(role: Role, content: impl Into<String>) -> Self {
        ChatMessage { role, content: content.into(), tool_calls: None, tool_call_id: None }
    }

    pub fn system(content: impl Into<String>) -> Self {
        ChatMessage::plain(Role::System, content)
    }

    pub fn user(content: impl Into<String>) -> Self {
        ChatMessage::plain(Role::User, content)
    }

    pub fn assistant(content: impl Into<String>) -> Self {
        ChatMessage::plain(Role::Assistant, content)
    }

    /// The assistant's calls, in their order, with the text it wrote beside them. A call is
    /// sent under its id (whoever runs the calls gives one to a call that came without).
    pub fn tool_calls(text: &str, calls: &[ToolCall]) -> Self {
        let calls: Vec<Value> = calls.iter().map(ToolCall::wire).collect();
        ChatMessage { tool_calls: Some(Value::Array(calls)), ..ChatMessage::plain(Role::Assistant, text) }
    }

    /// The result of the call `id`.
    pub fn tool_result(id: &str, content: impl Into<String>) -> Self {
        ChatMessage { tool_call_id: Some(id.to_owned()), ..ChatMessage::plain(Role::Tool, content) }
    }
}

/// One call of a tool the model asked for.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolCall {
    /// The model's own id for the call; `None` when the backend gave none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    pub name: String,
    /// As parsed JSON; arguments that are not JSON arrive as `Value::String`.
    pub arguments: Value,
}

impl ToolCall {
    /// A call without an id (what an embedded backend answers).
    pub fn new(name: impl Into<String>, arguments: Value) -> Self {
        ToolCall { id: None, name: name.into(), arguments }
    }

    /// The arguments as the wire carries them: JSON text (text that was not JSON, as it came).
    pub fn arguments_text(&self) -> String {
        match &self.arguments {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        }
    }

    /// `{id, type, function: {name, arguments}}`, as an assistant message lists it.
    fn wire(&self) -> Value {
        let id = self.id.as_deref().unwrap_or_default();
        serde_json::json!({"id": id, "type": "function", "function": {"name": self.name, "arguments": self.arguments_text()}})
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct ToolSchema {
    pub name: String,
    pub description: String,
    /// JSON Schema of the arguments.
    pub parameters: Value,
}

/// Who asks: the roles whose pinned values `[llm.planner]`, `[llm.agent]` and
/// `[llm.heartbeat]` may override; every other caller keeps its own.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Caller {
    Planner,
    /// An agent turn, with the origin of the turn it serves (the user's own, or one the
    /// engine started: cron, heartbeat, subagent).
    Agent(raven_proto::Origin),
    Heartbeat,
    Other,
}

/// Generation parameters the caller pins, whatever a global config would say. The provider
/// renders them for its model (see [`super::params`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Generation {
    pub max_tokens: u32,
    pub temperature: f64,
    pub caller: Caller,
}

#[derive(Debug, Clone)]
pub struct CompletionRequest {
    pub messages: Vec<ChatMessage>,
    pub tools: Vec<ToolSchema>,
    /// Force a call of this tool.
    pub tool_choice: Option<String>,
    pub generation: Generation,
    /// The structured form of what the messages render, for embedded providers that
    /// decide from data rather than text. Network providers ignore it.
    pub context: Option<Arc<PlannerContext>>,
}

#[derive(Debug, Clone, PartialEq)]
pub enum ProviderReply {
    /// The tools the model called (at least one), in its order, and any text it wrote beside
    /// them.
    ToolCalls {
        calls: Vec<ToolCall>,
        text: String,
    },
    Text(String),
}

impl ProviderReply {
    /// One call of `name`, no id, no text: what a caller that forces one tool expects.
    pub fn call(name: impl Into<String>, arguments: Value) -> Self {
        ProviderReply::ToolCalls { calls: vec![ToolCall::new(name, arguments)], text: String::new() }
    }

    /// The first call: the one a caller that forces a single tool reads.
    pub fn first_call(&self) -> Option<&ToolCall> {
        match self {
            ProviderReply::ToolCalls { calls, .. } => calls.first(),
            ProviderReply::Text(_) => None,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ProviderError {
    #[error("provider answered HTTP {status}: {body}")]
    Http {
        status: u16,
        body: String,
        /// How long the server asked to be left alone (`Retry-After`), when it said.
        retry_after: Option<std::time::Duration>,
    },
    #[error("provider timed out after {0} ms")]
    Timeout(u64),
    #[error("provider could not be reached: {0}")]
    Transport(String),
    #[error("provider reply is not understood: {0}")]
    Decode(String),
    #[error("provider reply is over {limit} bytes (`llm.max_reply_bytes`); it was dropped, nothing of it kept")]
    TooLarge { limit: usize },
    #[error("provider reply was cut off at its token limit of {limit} (finish_reason: length)")]
    CutOff { limit: u32 },
    #[error("provider is marked down until {until} after {failures} failed requests in a row; not called")]
    Down { until: chrono::DateTime<chrono::Utc>, failures: u32 },
    #[error("the daily token budget is spent ({spent} of {budget} tokens today, `llm.daily_token_budget`); proactive calls wait for the next day")]
    BudgetSpent { spent: u64, budget: u64 },
}

pub trait Provider: 'static {
    /// Name for logs and `raven status`.
    fn name(&self) -> &str;

    /// Whether it reads the rendered prompt. One that decides from the structured context
    /// alone (the embedded rules) is spared rendering megabytes of text it never reads.
    fn reads_prompt(&self) -> bool {
        true
    }

    /// How many tokens a prompt for it may take, and how they are counted.
    fn prompt_budget(&self) -> PromptBudget {
        PromptBudget::default()
    }

    /// The reply alone: what a caller that does not account for tokens reads.
    fn complete<'a>(&'a self, req: &'a CompletionRequest) -> LocalBoxFuture<'a, Result<ProviderReply, ProviderError>>;

    /// The reply with what it cost, as the backend said (a provider that cannot say answers
    /// no usage: the reply of [`complete`](Provider::complete) alone).
    fn answer<'a>(&'a self, req: &'a CompletionRequest) -> LocalBoxFuture<'a, Answer> {
        Box::pin(async move { Answer { reply: self.complete(req).await, usage: None } })
    }
}

pub type SharedProvider = std::rc::Rc<dyn Provider>;
