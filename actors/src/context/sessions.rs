//! Active sessions: channel sessions active within the recent window, with their last user
//! and assistant message. Sessions are `sessions/<channel>_<chat_id>.jsonl`, one message a
//! line: `{"role": "user"|"assistant", "content": "...", "at": "<RFC 3339>"}`.

use chrono::{DateTime, Duration, Utc};
use raven_proto::ActiveSession;
use serde::Deserialize;
use std::path::Path;

#[derive(Deserialize)]
struct Line {
    role: String,
    content: String,
    at: DateTime<Utc>,
}

/// `telegram_42.jsonl` → `telegram:42` (the first `_` separates channel and chat id).
pub fn session_key(file_name: &str) -> Option<String> {
    let stem = file_name.strip_suffix(".jsonl")?;
    let (channel, chat) = stem.split_once('_')?;
    Some(format!("{channel}:{chat}"))
}

/// When the session `channel:chat_id` last saw a message, from its file.
pub fn last_activity(dir: &Path, session_key: &str) -> Option<DateTime<Utc>> {
    let (channel, chat) = session_key.split_once(':')?;
    let text = std::fs::read_to_string(dir.join(format!("{channel}_{chat}.jsonl"))).ok()?;
    text.lines().rev().take(50).filter_map(|l| serde_json::from_str::<Line>(l).ok()).map(|l| l.at).max()
}

/// Reads every session file's tail; a session is active when its last message is within
/// `window` of `now`. Unreadable files are skipped.
pub fn active_sessions(dir: &Path, now: DateTime<Utc>, window: Duration) -> std::io::Result<Vec<ActiveSession>> {
    let entries = match std::fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(e),
    };
    let mut out = Vec::new();
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let Some(key) = session_key(&name) else {
            continue;
        };
        let Ok(text) = std::fs::read_to_string(entry.path()) else {
            continue;
        };
        let mut last: Option<DateTime<Utc>> = None;
        let (mut user, mut assistant) = (None, None);
        for line in text.lines().rev().take(50) {
            let Ok(l) = serde_json::from_str::<Line>(line) else {
                continue;
            };
            last = last.max(Some(l.at));
            match l.role.as_str() {
                "user" if user.is_none() => user = Some(l.content),
                "assistant" if assistant.is_none() => assistant = Some(l.content),
                _ => {}
            }
        }
        if let Some(at) = last.filter(|at| now - *at <= window) {
            out.push(ActiveSession {
                session_key: key,
                last_active: at,
                last_user_message: user,
                last_assistant_message: assistant,
            });
        }
    }
    out.sort_by(|a, b| a.session_key.cmp(&b.session_key));
    Ok(out)
}
