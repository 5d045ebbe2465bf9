//! The one call shape every LLM backend answers: messages + tools → a tool call or text.
//! Errors are values.

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
}

impl ChatMessage {
    pub fn system(content: impl Into<String>) -> Self {
        ChatMessage { role: Role::System, content: content.into() }
    }

    pub fn user(content: impl Into<String>) -> Self {
        ChatMessage { role: Role::User, content: content.into() }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct ToolSchema {
    pub name: String,
    pub description: String,
    /// JSON Schema of the arguments.
    pub parameters: Value,
}

/// Generation parameters the caller pins, whatever a global config would say.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Generation {
    pub max_tokens: u32,
    pub temperature: f64,
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
    /// `arguments` as parsed JSON; text that is not JSON arrives as `Value::String`.
    ToolCall {
        name: String,
        arguments: Value,
    },
    Text(String),
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ProviderError {
    #[error("provider answered HTTP {status}: {body}")]
    Http { status: u16, body: String },
    #[error("provider timed out after {0} ms")]
    Timeout(u64),
    #[error("provider could not be reached: {0}")]
    Transport(String),
    #[error("provider reply is not understood: {0}")]
    Decode(String),
}

pub trait Provider: 'static {
    /// Name for logs and `raven status`.
    fn name(&self) -> &str;

    fn complete<'a>(&'a self, req: &'a CompletionRequest) -> LocalBoxFuture<'a, Result<ProviderReply, ProviderError>>;
}

pub type SharedProvider = std::rc::Rc<dyn Provider>;

/// Wraps a provider and counts its calls (LLM calls made, for stats, tests and benches).
pub struct Counted {
    inner: SharedProvider,
    calls: std::rc::Rc<std::cell::Cell<u64>>,
}

impl Counted {
    pub fn new(inner: SharedProvider) -> (Counted, std::rc::Rc<std::cell::Cell<u64>>) {
        let calls = std::rc::Rc::new(std::cell::Cell::new(0));
        (Counted { inner, calls: calls.clone() }, calls)
    }
}

impl Provider for Counted {
    fn name(&self) -> &str {
        self.inner.name()
    }

    fn complete<'a>(&'a self, req: &'a CompletionRequest) -> LocalBoxFuture<'a, Result<ProviderReply, ProviderError>> {
        self.calls.set(self.calls.get() + 1);
        self.inner.complete(req)
    }
}
