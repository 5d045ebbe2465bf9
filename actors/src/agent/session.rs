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

/// How much of the end of a session file `history` reads: far more than `window` lines.
pub(crate) const TAIL_BYTES: u64 = 256 * 1024;

/// The last `max` bytes of `path`, from the first whole line in them.
pub(crate) fn tail(path: &std::path::Path, max: u64) -> std::io::Result<String> {
    use std::io::{Read, Seek, SeekFrom};
    let mut f = std::fs::File::open(path)?;
    let len = f.metadata()?.len();
    let start = len.saturating_sub(max);
    f.seek(SeekFrom::Start(start))?;
    let mut bytes = Vec::with_capacity((len - start) as usize);
    f.read_to_end(&mut bytes)?;
    let text = String::from_utf8_lossy(&bytes).into_owned();
    // A cut line (and a cut character) is dropped, not misread.
    Ok(if start == 0 { text } else { text.split_once('\n').map(|(_, rest)| rest.to_owned()).unwrap_or_default() })
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

    /// The last `window` user and assistant messages. Only the end of the file is read: a
    /// conversation that runs for weeks (a daily cron job's) must not cost more each turn.
    pub fn history(&self, channel: &str, chat_id: &str) -> Vec<ChatMessage> {
        let text = tail(&self.path(channel, chat_id), TAIL_BYTES).unwrap_or_default();
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
}
