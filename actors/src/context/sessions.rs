//! Active sessions: channel sessions the USER wrote in within the recent window, with their
//! last user and assistant message. Sessions are `sessions/<channel>_<chat_id>.jsonl` (each
//! part encoded, see [`crate::sessions::file_name`]), one [`SessionLine`] a line. Only the user's own lines count as activity: a proactive message
//! (or a reply the engine wrote) neither makes a conversation active nor delays a defer.

use crate::sessions::SessionLine;
use chrono::{DateTime, Duration, Utc};
use raven_proto::ActiveSession;
use std::path::Path;

/// Channels of conversations the engine holds with itself.
pub const SYSTEM_CHANNELS: [&str; 3] = ["heartbeat", "cron", "subagent"];

/// `telegram_42.jsonl` → `telegram:42`; `webhook_alice%5F1.jsonl` → `webhook:alice_1`.
pub fn session_key(file_name: &str) -> Option<String> {
    let (channel, chat) = crate::sessions::file_name::parse(file_name)?;
    Some(format!("{channel}:{chat}"))
}

/// The last 50 lines of a session file's text that parse, newest first.
pub fn last_lines(text: &str) -> impl Iterator<Item = SessionLine> + '_ {
    text.lines().rev().take(50).filter_map(|l| serde_json::from_str::<SessionLine>(l).ok())
}

/// The user's conversations in `dir`, as `(channel:chat_id, file)`: every session file but
/// the engine's own conversations (a heartbeat, a cron job's, a subagent's). A missing dir
/// has none.
pub fn user_sessions(dir: &Path) -> std::io::Result<Vec<(String, std::path::PathBuf)>> {
    let entries = match std::fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(e),
    };
    Ok(entries
        .flatten()
        .filter_map(|entry| Some((session_key(&entry.file_name().to_string_lossy())?, entry.path())))
        .filter(|(key, _)| !SYSTEM_CHANNELS.iter().any(|c| key.split_once(':').is_some_and(|(ch, _)| ch == *c)))
        .collect())
}

/// When the user last wrote in the session `channel:chat_id`, from its file.
pub fn last_activity(dir: &Path, session_key: &str) -> Option<DateTime<Utc>> {
    let (channel, chat) = session_key.split_once(':')?;
    let name = crate::sessions::file_name::file_name(channel, chat).ok()?;
    let text = crate::store::files::tail(&dir.join(name), 64 * 1024).ok()??;
    last_lines(&text).filter(SessionLine::is_user).map(|l| l.at).max()
}

/// Reads every session file's tail; a session is active when its last message is within
/// `window` of `now`. Unreadable files are skipped.
pub fn active_sessions(dir: &Path, now: DateTime<Utc>, window: Duration) -> std::io::Result<Vec<ActiveSession>> {
    let mut out = Vec::new();
    // The engine's own conversations are not a user to reach: a nudge aimed there would find
    // no outlet.
    for (key, path) in user_sessions(dir)? {
        // The last 50 lines are all that is looked at: read the end only.
        let Ok(Some(text)) = crate::store::files::tail(&path, 64 * 1024) else {
            continue;
        };
        let mut last: Option<DateTime<Utc>> = None;
        let (mut user, mut assistant) = (None, None);
        for l in last_lines(&text) {
            if l.is_user() {
                last = last.max(Some(l.at));
                user = user.or(Some(l.content));
            } else if l.role == crate::llm::provider::Role::Assistant && l.tool_calls.is_empty() && assistant.is_none()
            {
                assistant = Some(l.content);
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

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    #[test]
    fn the_engine_s_own_conversations_are_not_active_sessions() {
        let dir = tempfile::tempdir().unwrap();
        let now = Utc.with_ymd_and_hms(2026, 3, 2, 12, 0, 0).unwrap();
        let line = format!("{{\"role\":\"user\",\"content\":\"hi\",\"at\":\"{}\"}}\n", now.to_rfc3339());
        for name in ["telegram_42", "heartbeat_main", "cron_job-1", "subagent_9-1"] {
            std::fs::write(dir.path().join(format!("{name}.jsonl")), &line).unwrap();
        }
        let active = active_sessions(dir.path(), now, Duration::minutes(30)).unwrap();
        let keys: Vec<&str> = active.iter().map(|s| s.session_key.as_str()).collect();
        assert_eq!(keys, ["telegram:42"]);
    }

    #[test]
    fn only_the_user_s_own_lines_make_a_session_active() {
        use crate::feedback::{Dispatch, NudgeFeedbackTracker, Source};
        use crate::llm::provider::Role;
        use crate::sessions::SessionStore;
        let dir = tempfile::tempdir().unwrap();
        let now = Utc.with_ymd_and_hms(2026, 3, 2, 12, 0, 0).unwrap();
        let sessions = SessionStore::new(dir.path());
        sessions.append("telegram", "7", Role::User, "hi", now - Duration::hours(3)).unwrap();
        let tracker = NudgeFeedbackTracker::new(dir.path().join("fb.jsonl"), Default::default(), chrono_tz::UTC);
        let said = crate::delivery::conversation::Conversations::new(sessions.clone(), std::rc::Rc::new(tracker));
        for (n, source) in [(1, Source::Sentinel), (2, Source::Cron)] {
            let d = Dispatch {
                nudge_id: format!("n-{n}"),
                topic: "water".into(),
                priority: raven_proto::Priority::Low,
                source,
                job: None,
                items: Vec::new(),
            };
            said.said(&d, "telegram", "7", "drink water", true, now - Duration::minutes(n));
        }
        let window = Duration::minutes(30);
        assert!(active_sessions(dir.path(), now, window).unwrap().is_empty(), "a proactive line is not activity");
        assert_eq!(last_activity(dir.path(), "telegram:7"), Some(now - Duration::hours(3)));
        sessions.append("telegram", "7", Role::User, "thanks", now).unwrap();
        let active = active_sessions(dir.path(), now, window).unwrap();
        assert_eq!(active[0].last_active, now);
        assert_eq!(active[0].last_assistant_message.as_deref(), Some("drink water"));
    }
}
