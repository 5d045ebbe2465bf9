//! Sessions persisted per conversation as JSONL: `sessions/<channel>_<chat_id>.jsonl`, one
//! message a line, `{"role", "content", "at"}` (the format the ContextAssembler reads).

use crate::planner::provider::{ChatMessage, Role};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use std::io::Write;
use std::path::PathBuf;

#[derive(Debug, Clone, Serialize, Deserialize)]
struct Line {
    role: Role,
    content: String,
    at: DateTime<Utc>,
}

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

    fn path(&self, channel: &str, chat_id: &str) -> PathBuf {
        let clean = |s: &str| s.replace(['/', '\\'], "_");
        self.dir.join(format!("{}_{}.jsonl", clean(channel), clean(chat_id)))
    }

    /// The chat of `channel` written to last (where a job for a bare channel goes).
    pub fn latest_chat(&self, channel: &str) -> Option<String> {
        let prefix = format!("{}_", channel.replace(['/', '\\'], "_"));
        std::fs::read_dir(&self.dir)
            .ok()?
            .filter_map(Result::ok)
            .filter_map(|e| {
                let name = e.file_name().into_string().ok()?;
                let chat = name.strip_prefix(&prefix)?.strip_suffix(".jsonl")?.to_owned();
                Some((e.metadata().ok()?.modified().ok()?, chat))
            })
            .max()
            .map(|(_, chat)| chat)
    }

    /// The last `window` user and assistant messages.
    pub fn history(&self, channel: &str, chat_id: &str) -> Vec<ChatMessage> {
        let text = std::fs::read_to_string(self.path(channel, chat_id)).unwrap_or_default();
        let lines: Vec<Line> = text.lines().filter_map(|l| serde_json::from_str(l).ok()).collect();
        let start = lines.len().saturating_sub(self.window);
        lines[start..]
            .iter()
            .map(|l| match l.role {
                Role::User => ChatMessage::user(&l.content),
                _ => ChatMessage::assistant(&l.content),
            })
            .collect()
    }

    pub fn append(
        &self,
        channel: &str,
        chat_id: &str,
        role: Role,
        content: &str,
        at: DateTime<Utc>,
    ) -> std::io::Result<()> {
        std::fs::create_dir_all(&self.dir)?;
        let mut line = serde_json::to_vec(&Line { role, content: content.to_owned(), at })?;
        line.push(b'\n');
        let mut f = std::fs::OpenOptions::new().create(true).append(true).open(self.path(channel, chat_id))?;
        f.write_all(&line)
    }
}
