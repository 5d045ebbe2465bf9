//! Sessions persisted per conversation as JSONL: `sessions/<channel>_<chat_id>.jsonl` (each
//! part encoded, see [`super::file_name`]), one [`SessionLine`] a line (the one schema
//! every reader and writer uses; the README shows it). A reply that called tools is kept as
//! an assistant line with its calls, then one `tool` line per call with its result; the
//! model reads them back as it sent them (see [`super::replay`]).

use super::file_name;
use super::Source;
use crate::llm::provider::{ChatMessage, Role, ToolCall};
use chrono::{DateTime, Utc};
use raven_proto::limits::{cut, SESSION_TEXT_BYTES, TOOL_ARGUMENTS_BYTES, TOOL_ID_BYTES};
use serde::{Deserialize, Serialize};
use std::borrow::Cow;
use std::path::PathBuf;

/// One message of a conversation. The user's words have the `user` role; everything the
/// engine says has the `assistant` role, and what it said on its own initiative (a nudge,
/// a reminder, a menu, a spawn's result, a heartbeat reply) is marked `proactive` with the
/// id the user and the agent can give feedback on. An assistant line may carry the tool calls
/// the model made (each with its id); each result is a `tool` line naming the call it answers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SessionLine {
    pub role: Role,
    pub content: String,
    pub at: DateTime<Utc>,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub proactive: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nudge_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub topic: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<Source>,
    /// An assistant line: the tools the model called, in its order, each with its id.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<ToolCall>,
    /// A `tool` line: the id of the call whose result `content` is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<String>,
}

impl SessionLine {
    pub fn new(role: Role, content: &str, at: DateTime<Utc>) -> Self {
        SessionLine {
            role,
            content: content.to_owned(),
            at,
            proactive: false,
            nudge_id: None,
            topic: None,
            source: None,
            tool_calls: Vec::new(),
            tool_call_id: None,
        }
    }

    /// The model's reply that called `calls` (each with its id), with the text beside them.
    pub fn calls(text: &str, calls: &[ToolCall], at: DateTime<Utc>) -> Self {
        SessionLine { tool_calls: calls.to_vec(), ..SessionLine::new(Role::Assistant, text, at) }
    }

    /// The result of the call `id`.
    pub fn result(id: &str, result: &str, at: DateTime<Utc>) -> Self {
        SessionLine { tool_call_id: Some(id.to_owned()), ..SessionLine::new(Role::Tool, result, at) }
    }

    /// The user's own words: the only lines that make a conversation active.
    pub fn is_user(&self) -> bool {
        self.role == Role::User
    }

    /// How the model reads the line: a proactive message shows its id, source and topic, so
    /// the agent can call `nudge_feedback` on it; tool calls and results as they were sent.
    pub fn as_chat(&self) -> ChatMessage {
        match (self.role, &self.nudge_id) {
            (Role::User, _) => ChatMessage::user(&self.content),
            (Role::Tool, _) => {
                ChatMessage::tool_result(self.tool_call_id.as_deref().unwrap_or_default(), &self.content)
            }
            (_, _) if !self.tool_calls.is_empty() => ChatMessage::tool_calls(&self.content, &self.tool_calls),
            (_, Some(id)) if self.proactive => ChatMessage::assistant(format!(
                "[proactive {} nudge_id={id} topic={}] {}",
                self.source.map_or("message", Source::name),
                self.topic.as_deref().unwrap_or("general"),
                self.content
            )),
            _ => ChatMessage::assistant(&self.content),
        }
    }
}

/// How much of the end of a session file `history` reads: far more than `window` lines, and
/// more than the longest line (its text, and [`TOOL_CALLS_PER_REPLY`] calls at their bounds).
///
/// [`TOOL_CALLS_PER_REPLY`]: raven_proto::limits::TOOL_CALLS_PER_REPLY
pub(crate) const TAIL_BYTES: u64 = 256 * 1024;

#[derive(Debug, Clone)]
pub struct SessionStore {
    dir: PathBuf,
    /// Messages of history handed to the model.
    pub window: usize,
}

impl SessionStore {
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        SessionStore { dir: dir.into(), window: 40 }
    }

    fn path(&self, channel: &str, chat_id: &str) -> std::io::Result<PathBuf> {
        let name = file_name::file_name(channel, chat_id)
            .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidInput, e))?;
        Ok(self.dir.join(name))
    }

    /// The chat of `channel` written to last (where a job for a bare channel goes).
    pub fn latest_chat(&self, channel: &str) -> Option<String> {
        std::fs::read_dir(&self.dir)
            .ok()?
            .filter_map(Result::ok)
            .filter_map(|e| {
                let (of, chat) = file_name::parse(e.file_name().to_str()?)?;
                (of == channel).then_some(())?;
                Some((e.metadata().ok()?.modified().ok()?, chat))
            })
            .max()
            .map(|(_, chat)| chat)
    }

    /// The last `window` lines, as the model reads them (tool calls with their results, see
    /// [`super::replay`]). Only the end of the file is read: a conversation that runs for weeks
    /// (a daily cron job's) must not cost more each turn.
    pub fn history(&self, channel: &str, chat_id: &str) -> Vec<ChatMessage> {
        let Ok(path) = self.path(channel, chat_id) else { return Vec::new() };
        let text = crate::store::files::tail(&path, TAIL_BYTES).ok().flatten().unwrap_or_default();
        let lines: Vec<SessionLine> = text.lines().filter_map(|l| serde_json::from_str(l).ok()).collect();
        let start = lines.len().saturating_sub(self.window);
        super::replay::messages(&lines[start..])
    }

    #[cfg(test)]
    pub fn append(
        &self,
        channel: &str,
        chat_id: &str,
        role: Role,
        content: &str,
        at: DateTime<Utc>,
    ) -> std::io::Result<()> {
        self.append_line(channel, chat_id, &SessionLine::new(role, content, at))
    }

    /// Appends one line (one `write`, so concurrent writers never interleave a line).
    /// A message over [`SESSION_TEXT_BYTES`] is kept cut, with a note saying how much; so are
    /// tool call ids and names over [`TOOL_ID_BYTES`]; arguments over [`TOOL_ARGUMENTS_BYTES`]
    /// are kept as a note of their size.
    pub fn append_line(&self, channel: &str, chat_id: &str, l: &SessionLine) -> std::io::Result<()> {
        let path = self.path(channel, chat_id)?;
        std::fs::create_dir_all(&self.dir)?;
        if l.content.len() > SESSION_TEXT_BYTES {
            tracing::warn!(file = %path.display(), "a {}-byte message is kept cut to {SESSION_TEXT_BYTES} bytes", l.content.len());
        }
        let mut line = serde_json::to_vec(&bounded(l))?;
        line.push(b'\n');
        crate::store::files::append_whole(&mut crate::store::files::open_append(&path)?, &line)
    }
}

/// `l` within the bounds of a line. An id is cut the same way on the call and on its result,
/// so the two still match.
fn bounded(l: &SessionLine) -> Cow<'_, SessionLine> {
    let within = l.content.len() <= SESSION_TEXT_BYTES
        && l.tool_call_id.as_ref().is_none_or(|id| id.len() <= TOOL_ID_BYTES)
        && l.tool_calls.iter().all(|c| bounded_call(c) == *c);
    if within {
        return Cow::Borrowed(l);
    }
    Cow::Owned(SessionLine {
        content: cut(&l.content, SESSION_TEXT_BYTES).into_owned(),
        tool_calls: l.tool_calls.iter().map(bounded_call).collect(),
        tool_call_id: l.tool_call_id.as_deref().map(|id| cut(id, TOOL_ID_BYTES).into_owned()),
        ..l.clone()
    })
}

fn bounded_call(c: &ToolCall) -> ToolCall {
    let text = c.arguments_text();
    let arguments = match text.len() > TOOL_ARGUMENTS_BYTES {
        true => serde_json::json!({"cut": format!("{} bytes of arguments not kept", text.len())}),
        false => c.arguments.clone(),
    };
    ToolCall {
        id: c.id.as_deref().map(|id| cut(id, TOOL_ID_BYTES).into_owned()),
        name: cut(&c.name, TOOL_ID_BYTES).into_owned(),
        arguments,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    #[test]
    fn history_reads_only_the_tail_of_a_long_session_and_keeps_the_last_messages() {
        let dir = tempfile::tempdir().unwrap();
        let s = SessionStore::new(dir.path());
        let at = Utc.with_ymd_and_hms(2026, 3, 2, 12, 0, 0).unwrap();
        // Far more than the tail: 600 KB of history, with multi-byte text at the cut.
        for i in 0..6000 {
            s.append("cron", "daily", Role::User, &format!("réminder {i:05} {}", "é".repeat(40)), at).unwrap();
        }
        assert!(std::fs::metadata(dir.path().join("cron_daily.jsonl")).unwrap().len() > 3 * TAIL_BYTES);
        let h = s.history("cron", "daily");
        assert_eq!(h.len(), s.window);
        assert!(h.last().unwrap().content.starts_with("réminder 05999"));
        assert!(h.first().unwrap().content.starts_with(&format!("réminder {:05}", 6000 - s.window)));
    }

    #[test]
    fn a_message_over_the_bound_is_kept_cut_with_a_note() {
        let dir = tempfile::tempdir().unwrap();
        let s = SessionStore::new(dir.path());
        let at = Utc.with_ymd_and_hms(2026, 3, 2, 12, 0, 0).unwrap();
        s.append("webhook", "ann", Role::Assistant, &"x".repeat(3 * SESSION_TEXT_BYTES), at).unwrap();
        let size = std::fs::metadata(dir.path().join("webhook_ann.jsonl")).unwrap().len();
        assert!(size < SESSION_TEXT_BYTES as u64 + 200, "{size}");
        let kept = &s.history("webhook", "ann")[0].content;
        assert!(
            kept.ends_with(&format!("[cut: {} more bytes not kept]", 2 * SESSION_TEXT_BYTES)),
            "{}",
            &kept[kept.len() - 60..]
        );
    }
}
