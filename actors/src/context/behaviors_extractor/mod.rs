//! BehaviorsExtractor (spec §9): the idle-triggered LLM extractor that turns session
//! messages into structured behavior events in `user_memory/behaviors.md`, whose folded
//! tail the Planner reads as `behaviors_recent`.
//!
//! Off by default: disabled, it reads, writes and asks nothing. Enabled, a session is
//! extracted once it has settled (no message for `idle_minutes`), so a conversation is read
//! whole rather than message by message, and one model call covers it. The model answers
//! through a forced `record_behaviors` tool call whose arguments are validated; a reply
//! that does not validate, or a provider error, appends nothing and leaves the session's
//! cursor where it was, so the same messages are offered again on the next run.

mod cursor;
mod error;
mod events;
#[cfg(test)]
mod tests;

pub use crate::config::BehaviorsConfig;
pub use cursor::cursor_path;
pub use error::ExtractError;
pub use events::{parse_events, BehaviorEvent, AT_FORMAT};

use crate::context::sessions::user_sessions;
use crate::llm::provider::{Caller, ChatMessage, CompletionRequest, Generation, SharedProvider, ToolSchema};
use crate::store::jsonl;
use chrono::{DateTime, Duration, Utc};
use chrono_tz::Tz;
use cursor::Cursor;
use serde::Deserialize;
use serde_json::json;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

pub const TOOL_NAME: &str = "record_behaviors";

/// Pinned so a global provider configuration cannot leak into the extraction.
pub const EXTRACT_GENERATION: Generation = Generation { max_tokens: 1024, temperature: 0.2, caller: Caller::Other };

/// A message longer than this is cut in the prompt.
const MAX_MESSAGE_CHARS: usize = 2000;

/// What one run did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ExtractReport {
    /// Model calls made.
    pub calls: u32,
    /// Events appended to behaviors.md.
    pub appended: usize,
    /// Sessions whose cursor moved (`channel:chat_id`).
    pub extracted: Vec<String>,
    /// Sessions with new messages that have not settled yet.
    pub waiting: Vec<String>,
    /// One line per session that failed; its cursor did not move.
    pub errors: Vec<String>,
}

pub struct BehaviorsExtractor {
    sessions_dir: PathBuf,
    behaviors_md: PathBuf,
    provider: SharedProvider,
    cfg: BehaviorsConfig,
    tz: Tz,
}

#[derive(Debug, Deserialize)]
struct Message {
    role: String,
    content: String,
    at: DateTime<Utc>,
}

impl BehaviorsExtractor {
    /// Reads `sessions_dir/<channel>_<chat_id>.jsonl`, appends to `behaviors_md` and keeps
    /// its cursors in [`cursor_path`]`(behaviors_md)`. Times are shown to the model, and
    /// written, in UTC unless [`with_timezone`](Self::with_timezone) says otherwise.
    pub fn new(
        sessions_dir: impl Into<PathBuf>,
        behaviors_md: impl Into<PathBuf>,
        provider: SharedProvider,
        cfg: BehaviorsConfig,
    ) -> Self {
        BehaviorsExtractor {
            sessions_dir: sessions_dir.into(),
            behaviors_md: behaviors_md.into(),
            provider,
            cfg,
            tz: Tz::UTC,
        }
    }

    /// The user's time zone (`general.timezone`): event times are local times.
    pub fn with_timezone(mut self, tz: Tz) -> Self {
        self.tz = tz;
        self
    }

    /// One pass over the sessions: each settled session with messages not yet extracted
    /// gets one model call. An `Err` is a failure of the whole pass (the sessions dir or the
    /// cursor file cannot be read); a failure of one session is in the report's `errors`.
    pub async fn maybe_extract(&mut self, now: DateTime<Utc>) -> Result<ExtractReport, ExtractError> {
        let mut report = ExtractReport::default();
        if !self.cfg.enabled {
            return Ok(report);
        }
        let mut cursors = cursor::load(&cursor_path(&self.behaviors_md))?;
        let idle = i64::try_from(self.cfg.idle_minutes).ok().and_then(Duration::try_minutes).unwrap_or(Duration::MAX);
        for (key, path) in self.session_files()? {
            let messages = match read_messages(&path) {
                Ok(m) => m,
                Err(e) => {
                    report.errors.push(format!("{key}: {}: {e}", path.display()));
                    continue;
                }
            };
            let times: Vec<DateTime<Utc>> = messages.iter().map(|m| m.at).collect();
            let expected = cursors.sessions.get(&key).copied();
            let start = cursor::first_pending(&times, expected.as_ref());
            let Some(last_at) = times.iter().max().copied().filter(|_| start < messages.len()) else {
                continue;
            };
            if now - last_at < idle {
                report.waiting.push(key);
                continue;
            }
            let end = messages.len().min(start.saturating_add(self.cfg.max_messages.max(1)));
            let batch = &messages[start..end];
            let events = if batch.iter().any(|m| m.role == "user") {
                report.calls += 1;
                match self.extract(&key, batch).await {
                    Ok(events) => events,
                    Err(e) => {
                        report.errors.push(format!("{key}: {e}"));
                        continue;
                    }
                }
            } else {
                // Nothing the user said (only replies and nudges): nothing to learn, no call.
                Vec::new()
            };
            let next = Cursor { count: end, last_at: messages[end - 1].at };
            match cursor::commit(&self.behaviors_md, &key, expected, next, &events) {
                Ok(stored) => {
                    cursors = stored;
                    report.appended += events.len();
                    report.extracted.push(key);
                }
                Err(e) => report.errors.push(e.to_string()),
            }
        }
        Ok(report)
    }

    /// `(session key, path)` of every session file of the user's, by name: the engine's own
    /// conversations (a heartbeat's, a cron job's, a micro-agent's) say nothing of the user.
    fn session_files(&self) -> Result<Vec<(String, PathBuf)>, ExtractError> {
        let mut files = user_sessions(&self.sessions_dir)
            .map_err(|source| ExtractError::Io { path: self.sessions_dir.clone(), source })?;
        files.sort();
        Ok(files)
    }

    async fn extract(&self, key: &str, batch: &[Message]) -> Result<Vec<BehaviorEvent>, ExtractError> {
        let req = CompletionRequest {
            messages: vec![ChatMessage::system(EXTRACT_PROMPT), ChatMessage::user(self.render(key, batch))],
            tools: vec![tool_schema()],
            tool_choice: Some(TOOL_NAME.into()),
            generation: EXTRACT_GENERATION,
            context: None,
        };
        let reply = self.provider.complete(&req).await?;
        match reply.first_call() {
            Some(call) if call.name == TOOL_NAME => Ok(parse_events(&call.arguments, self.cfg.max_messages.max(1))?),
            Some(call) => Err(ExtractError::UnexpectedTool(call.name.clone())),
            None => Err(ExtractError::NoToolCall),
        }
    }

    /// The session's new messages, one a line, `[YYYY-MM-DD HH:MM] role: text`.
    fn render(&self, key: &str, batch: &[Message]) -> String {
        let mut out = format!("Session {key}. Times are local ({}).\n\n", self.tz.name());
        for m in batch.iter().filter(|m| m.role == "user" || m.role == "assistant") {
            let at = m.at.with_timezone(&self.tz).format(AT_FORMAT);
            let text: String = m.content.chars().take(MAX_MESSAGE_CHARS).collect();
            let cut = if text.len() < m.content.len() { " [...]" } else { "" };
            let _ = writeln!(out, "[{at}] {}: {}{cut}", m.role, text.replace('\n', " "));
        }
        out
    }
}

/// The session's messages in file order; lines that do not parse (a line being written, a
/// byte that is not UTF-8) are skipped, each on its own.
fn read_messages(path: &Path) -> std::io::Result<Vec<Message>> {
    let bytes = std::fs::read(path)?;
    Ok(jsonl::lines(&bytes).filter_map(|(_, line)| jsonl::parse(line).ok()).collect())
}

pub const EXTRACT_PROMPT: &str = "\
You are Raven's behavior recorder. Read the conversation below and call the record_behaviors \
tool once with the events worth remembering about the user: routines, habits, preferences, \
commitments, recurring activities. Each event has `at` (YYYY-MM-DD HH:MM, local time, when it \
happened or was said), `kind` (one lowercase word such as routine, habit, preference, \
commitment, activity) and `summary` (one short sentence in the third person). Record only what \
the user did or said, never what the assistant suggested. If nothing is worth keeping, call it \
with an empty list.";

pub fn tool_schema() -> ToolSchema {
    ToolSchema {
        name: TOOL_NAME.into(),
        description: "Record behavior events observed in the conversation.".into(),
        parameters: json!({
            "type": "object",
            "properties": {
                "events": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "properties": {
                            "at": {"type": "string", "description": "YYYY-MM-DD HH:MM, local time"},
                            "kind": {"type": "string", "description": "a lowercase slug: routine, habit, preference..."},
                            "summary": {"type": "string", "description": "one short sentence"}
                        },
                        "required": ["at", "kind", "summary"]
                    }
                }
            },
            "required": ["events"]
        }),
    }
}
