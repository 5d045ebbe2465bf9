//! What the agent knows of the user when a turn starts, within the prompt budget: now in the
//! user's zone, their preferences and the items due soon (from MEMORY.md), the proactive
//! messages Raven sent them lately (on any conversation), then the conversation itself, then
//! the other notes of MEMORY.md most relevant to the message (see [`crate::llm::budget`]).
//! A provider that renders no prompt (the embedded rules) is given none of it.

use crate::llm::budget::conversation;
use crate::llm::budget::fit::{Fitter, Keep};
use crate::llm::budget::PromptBudget;
use crate::llm::provider::ChatMessage;
use crate::planner::budget::memory::MemoryParts;
use crate::time::DateOrder;
use chrono::{DateTime, Duration, Utc};
use chrono_tz::Tz;
use std::path::PathBuf;
use std::sync::Arc;

use crate::sessions::SessionLine;

/// How far back a proactive message counts as recent, and how many are shown.
const PROACTIVE_WINDOW: Duration = Duration::hours(48);
const PROACTIVE_SHOWN: usize = 5;
/// A proactive message is shown to this many characters.
const PROACTIVE_CHARS: usize = 240;
/// The part of the allowance the facts before the conversation may take at most, so a long
/// MEMORY.md never crowds the conversation out.
const HEAD_SHARE: usize = 2;

/// Where the agent's knowledge is read from.
#[derive(Debug, Clone)]
pub struct Knowledge {
    pub memory: PathBuf,
    pub sessions: PathBuf,
    pub tz: Tz,
    pub order: DateOrder,
}

/// The system prompt's knowledge and the conversation, within `allowance` tokens.
pub struct Prompted {
    /// Appended to the system prompt.
    pub note: String,
    pub history: Vec<ChatMessage>,
}

impl Knowledge {
    /// What a turn on `message` starts with: the facts first (at most half the allowance),
    /// then the newest of `history` that fit, then the notes most relevant to the message.
    pub fn prompt(
        &self,
        history: Vec<ChatMessage>,
        message: &str,
        now: DateTime<Utc>,
        budget: &PromptBudget,
        allowance: usize,
    ) -> Prompted {
        let memory: Arc<str> =
            crate::store::files::read_optional(&self.memory).ok().flatten().unwrap_or_default().into();
        let recent = format!(
            "{message}\n{}",
            history.iter().rev().take(6).map(|m| m.content.as_str()).collect::<Vec<_>>().join("\n")
        );
        let parts = MemoryParts::of(&memory, now, self.tz, self.order, &recent);
        let mut head = Fitter::new(budget.counter, allowance / HEAD_SHARE);
        head.whole(&self.now_line(now));
        head.part("Preferences (MEMORY.md)", parts.text(&parts.preferences), Keep::First);
        head.part("Due soon (MEMORY.md)", parts.text(&parts.due), Keep::First);
        head.part("Proactive messages you sent lately", self.proactive(now).iter().map(String::as_str), Keep::Last);
        let head_left = head.left();
        let mut note = head.finish();
        let spent = allowance / HEAD_SHARE - head_left;
        let history = conversation::newest_within(history, budget, allowance - spent);
        let used: usize = history.iter().map(|m| conversation::cost(m, budget)).sum();
        let mut rest = Fitter::new(budget.counter, (allowance - spent).saturating_sub(used));
        rest.ranked("MEMORY.md (the notes most relevant now)", &parts.lines, &parts.relevant, false);
        note.push_str(&rest.finish());
        Prompted { note, history }
    }

    fn now_line(&self, now: DateTime<Utc>) -> String {
        let local = now.with_timezone(&self.tz);
        format!(
            "# Now\n{} ({}, local time in {}, UTC{})\n\n",
            crate::time::local(now, self.tz),
            local.format("%A"),
            self.tz,
            local.format("%:z")
        )
    }

    /// The newest proactive messages of the user's conversations within the window, oldest
    /// first, each with where and when it went.
    fn proactive(&self, now: DateTime<Utc>) -> Vec<String> {
        let mut said: Vec<(DateTime<Utc>, String)> = Vec::new();
        for (key, path) in crate::context::sessions::user_sessions(&self.sessions).unwrap_or_default() {
            let Ok(Some(text)) = crate::store::files::tail(&path, 64 * 1024) else { continue };
            for l in
                crate::context::sessions::last_lines(&text).filter(|l| l.proactive && now - l.at <= PROACTIVE_WINDOW)
            {
                said.push((l.at, self.shown(&key, &l)));
            }
        }
        said.sort();
        let start = said.len().saturating_sub(PROACTIVE_SHOWN);
        said.drain(start..).map(|(_, s)| s).collect()
    }

    fn shown(&self, key: &str, l: &SessionLine) -> String {
        let text: String = l.content.chars().take(PROACTIVE_CHARS).collect::<String>().replace('\n', " ");
        let cut = if l.content.chars().count() > PROACTIVE_CHARS { "…" } else { "" };
        format!(
            "- {} to {key} [{} nudge_id={} topic={}]: {text}{cut}",
            crate::time::local(l.at, self.tz),
            l.source.map_or("message", crate::feedback::Source::name),
            l.nudge_id.as_deref().unwrap_or("-"),
            l.topic.as_deref().unwrap_or("general"),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::llm::provider::Role;
    use chrono::TimeZone;

    #[test]
    fn a_turn_knows_the_time_the_preferences_the_recent_nudges_and_the_relevant_notes_within_the_budget() {
        let tmp = tempfile::tempdir().unwrap();
        let now = Utc.with_ymd_and_hms(2026, 3, 2, 12, 0, 0).unwrap();
        let mut memory = String::from("## Proactivity preferences\n- never before 9\n\n## Notes\n");
        memory.push_str("- the bike lock code is 4711\n");
        for i in 0..20_000 {
            memory.push_str(&format!("- note {i}: something said once\n"));
        }
        std::fs::write(tmp.path().join("MEMORY.md"), memory).unwrap();
        let sessions = tmp.path().join("sessions");
        let store = crate::sessions::SessionStore::new(&sessions);
        let mut nudge = SessionLine::new(Role::Assistant, "Stretch your legs?", now - Duration::hours(1));
        (nudge.proactive, nudge.nudge_id, nudge.topic) = (true, Some("n-1".into()), Some("break".into()));
        store.append_line("telegram", "42", &nudge).unwrap();
        let mut old = nudge.clone();
        (old.at, old.content) = (now - Duration::days(3), "An old one".into());
        store.append_line("telegram", "42", &old).unwrap();
        let k = Knowledge {
            memory: tmp.path().join("MEMORY.md"),
            sessions,
            tz: chrono_tz::Europe::Berlin,
            order: DateOrder::MonthFirst,
        };
        let budget = PromptBudget::default();
        let history: Vec<ChatMessage> = (0..200).map(|i| ChatMessage::user(format!("earlier message {i}"))).collect();
        let p = k.prompt(history, "what is my bike lock code?", now, &budget, 3_000);
        assert!(p.note.contains("2026-03-02 13:00 (Monday, local time in Europe/Berlin, UTC+01:00)"), "{}", p.note);
        assert!(p.note.contains("- never before 9"), "{}", p.note);
        assert!(p.note.contains("to telegram:42 [message nudge_id=n-1 topic=break]: Stretch your legs?"), "{}", p.note);
        assert!(!p.note.contains("An old one"), "{}", p.note);
        assert_eq!(p.history.last().map(|m| m.content.as_str()), Some("earlier message 199"));
        let spent = budget.count(&p.note) + p.history.iter().map(|m| budget.count(&m.content) + 8).sum::<usize>();
        assert!(spent <= 3_000, "{spent} tokens");
        let short = k.prompt(Vec::new(), "what is my bike lock code?", now, &budget, 3_000);
        assert!(
            short.note.contains("- the bike lock code is 4711"),
            "the note sharing the message's words: {}",
            short.note
        );
    }
}
