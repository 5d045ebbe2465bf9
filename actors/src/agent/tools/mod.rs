//! The agent's tools, one file each: its typed `Args`, its `schema()` and its `call()` side by
//! side. A tool answers with text (the tool result the model reads); refusals, errors and
//! arguments that do not fit its `Args` are results too, never failures of the turn.

mod ask_user;
mod cron;
mod list_jobs;
mod nudge_feedback;
mod read_memory;
mod remember;
mod search_history;

pub use ask_user::AskUserTool;
pub use cron::{CronJobs, CronTool};
pub use list_jobs::ListJobsTool;
pub use nudge_feedback::FeedbackTool;
pub use read_memory::ReadMemoryTool;
pub use remember::RememberTool;
pub use search_history::SearchHistoryTool;

use crate::llm::provider::ToolSchema;
use chrono::{DateTime, Utc};
use futures_util::future::LocalBoxFuture;
use raven_proto::Origin;
use serde::de::DeserializeOwned;
use serde_json::{json, Value};

/// What a tool knows of the turn calling it.
#[derive(Debug, Clone)]
pub struct ToolCtx {
    pub conversation_id: String,
    pub channel: String,
    pub chat_id: String,
    pub now: DateTime<Utc>,
    /// The origin of the turn the call serves (a menu pick's tool runs as the user's).
    pub origin: Origin,
}

impl ToolCtx {
    /// `channel:chat_id`: the conversation the call was made in.
    pub fn session(&self) -> String {
        format!("{}:{}", self.channel, self.chat_id)
    }
}

pub trait Tool {
    fn schema(&self) -> ToolSchema;
    /// Whether a micro-agent (a `spawn_agent` run, which nobody watches) may use it: only a
    /// tool that reads. One that writes the user's files or jobs, rates a message or asks the
    /// user is never offered to it.
    fn for_micro_agent(&self) -> bool {
        false
    }
    fn call<'a>(&'a self, args: &'a Value, ctx: &'a ToolCtx) -> LocalBoxFuture<'a, String>;
}

/// The call's arguments as a tool's `Args`, or what the model is told of them. No arguments
/// at all read as `{}`.
// A `String` error: the tool's answer, read by the model.
fn args<T: DeserializeOwned>(tool: &str, args: &Value) -> Result<T, String> {
    let given = match args {
        Value::Null => json!({}),
        other => other.clone(),
    };
    serde_json::from_value(given).map_err(|e| format!("error: the arguments of {tool} do not fit its schema: {e}"))
}

/// A tool's outcome as the model reads it: the text, or `error: …`.
fn said(r: Result<String, impl std::fmt::Display>) -> String {
    r.unwrap_or_else(|e| format!("error: {e}"))
}

/// A tool's schema: an object of `properties`, of which `required` must be given.
fn schema(name: &str, description: &str, properties: Value, required: &[&str]) -> ToolSchema {
    ToolSchema {
        name: name.into(),
        description: description.into(),
        parameters: json!({"type": "object", "properties": properties, "required": required}),
    }
}

/// The lowercase words of `text` a search matches on.
fn words(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_alphanumeric()).filter(|w| w.chars().count() >= 2).map(str::to_lowercase).collect()
}

/// `text` on one line, cut to `chars` characters.
fn cut(text: &str, chars: usize) -> String {
    let flat = text.replace('\n', " ");
    match flat.char_indices().nth(chars) {
        Some((i, _)) => format!("{}…", &flat[..i]),
        None => flat,
    }
}

/// A matched line is shown to this many characters.
const MATCH_CHARS: usize = 300;

#[cfg(test)]
mod tests;
