//! The tools that let the agent know the user: `read_memory` (MEMORY.md, or its lines on a
//! subject), `remember` (a dated line in the `## Notes from Raven` section), `search_history`
//! (the user's words in history.md and what Raven said in their conversations) and
//! `list_jobs` (the user's reminders). All but `remember` only read, and a micro-agent (a
//! `spawn_agent` run) gets only those. Every answer is bounded.

use super::notes::MemoryNotes;
use super::tools::{CronJobs, Tool, ToolCtx};
use crate::llm::provider::{Role, ToolSchema};
use crate::sessions::SessionLine;
use futures_util::future::LocalBoxFuture;
use serde_json::{json, Value};
use std::path::PathBuf;
use std::rc::Rc;

/// The most of MEMORY.md one `read_memory` answers with.
const READ_BYTES: usize = 16 * 1024;
/// Lines one query answers with, and matches one search answers with.
const QUERY_LINES: usize = 40;
const SEARCH_DEFAULT: usize = 10;
const SEARCH_MAX: usize = 30;
/// A matched message is shown to this many characters.
const MATCH_CHARS: usize = 300;
/// How much of the end of each file a search reads.
const HISTORY_TAIL: u64 = 1024 * 1024;
const SESSION_TAIL: u64 = 256 * 1024;

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

fn cut(text: &str, chars: usize) -> String {
    let flat = text.replace('\n', " ");
    match flat.char_indices().nth(chars) {
        Some((i, _)) => format!("{}…", &flat[..i]),
        None => flat,
    }
}

/// `read_memory(query?)`.
pub struct ReadMemoryTool {
    pub memory: PathBuf,
}

impl ReadMemoryTool {
    fn answer(&self, query: Option<&str>) -> String {
        let text = match crate::store::files::read_optional(&self.memory) {
            Ok(Some(t)) if !t.trim().is_empty() => t,
            Ok(_) => return "MEMORY.md is empty".into(),
            Err(e) => return format!("error: MEMORY.md cannot be read: {e}"),
        };
        match query.map(words).filter(|w| !w.is_empty()) {
            Some(wanted) => Self::matching(&text, &wanted),
            None => Self::first(&text),
        }
    }

    /// The file's first lines within [`READ_BYTES`].
    fn first(text: &str) -> String {
        let mut out = String::new();
        let mut lines = text.lines();
        for line in lines.by_ref() {
            if out.len() + line.len() + 1 > READ_BYTES {
                let rest = 1 + lines.count();
                out.push_str(&format!("({rest} more lines: ask with a query)\n"));
                break;
            }
            out.push_str(line);
            out.push('\n');
        }
        out
    }

    /// The lines holding any of `wanted`, numbered.
    fn matching(text: &str, wanted: &[String]) -> String {
        let hits: Vec<String> = text
            .lines()
            .enumerate()
            .filter(|(_, l)| words(l).iter().any(|w| wanted.contains(w)))
            .take(QUERY_LINES)
            .map(|(i, l)| format!("{}: {}", i + 1, cut(l, MATCH_CHARS)))
            .collect();
        if hits.is_empty() {
            "no line of MEMORY.md mentions that".into()
        } else {
            hits.join("\n")
        }
    }
}

impl Tool for ReadMemoryTool {
    fn schema(&self) -> ToolSchema {
        schema(
            "read_memory",
            "Read the user's notes (MEMORY.md): all of it from the top, or with `query` the lines mentioning any of its words.",
            json!({"query": {"type": "string"}}),
            &[],
        )
    }

    fn for_micro_agent(&self) -> bool {
        true
    }

    fn call<'a>(&'a self, args: &'a Value, _: &'a ToolCtx) -> LocalBoxFuture<'a, String> {
        Box::pin(async move { self.answer(args.get("query").and_then(Value::as_str)) })
    }
}

/// `remember(note)`: never offered to a micro-agent.
pub struct RememberTool {
    pub notes: MemoryNotes,
}

impl Tool for RememberTool {
    fn schema(&self) -> ToolSchema {
        schema(
            "remember",
            "Keep a short fact about the user for later: one line, added to the `## Notes from Raven` section of MEMORY.md (never to their preferences).",
            json!({"note": {"type": "string"}}),
            &["note"],
        )
    }

    fn call<'a>(&'a self, args: &'a Value, ctx: &'a ToolCtx) -> LocalBoxFuture<'a, String> {
        Box::pin(async move {
            let note = args.get("note").and_then(Value::as_str).unwrap_or_default();
            match self.notes.append(note, ctx.now) {
                Ok(line) => format!("kept in MEMORY.md: {line}"),
                Err(e) => format!("error: {e}"),
            }
        })
    }
}

/// `search_history(query, limit?)`.
pub struct SearchHistoryTool {
    pub history: PathBuf,
    pub sessions: PathBuf,
    pub tz: chrono_tz::Tz,
}

impl SearchHistoryTool {
    /// Every match, as (when, line): the user's words from history.md, Raven's from the
    /// user's conversations.
    fn matches(&self, wanted: &[String]) -> Vec<(String, String)> {
        let hit = |text: &str| {
            let have = words(text);
            wanted.iter().all(|w| have.contains(w))
        };
        let mut out = Vec::new();
        let history = crate::store::files::tail(&self.history, HISTORY_TAIL).ok().flatten().unwrap_or_default();
        for line in history.lines().filter(|l| hit(l)) {
            let (when, text) = match (line.get(..16), line.get(16..)) {
                (Some(when), Some(text)) => (when, text),
                _ => ("", line),
            };
            out.push((when.to_owned(), format!("- {when} you said: {}", cut(text.trim(), MATCH_CHARS))));
        }
        for (key, path) in crate::context::sessions::user_sessions(&self.sessions).unwrap_or_default() {
            let text = crate::store::files::tail(&path, SESSION_TAIL).ok().flatten().unwrap_or_default();
            let said = text.lines().filter_map(|l| serde_json::from_str::<SessionLine>(l).ok());
            for l in said.filter(|l| l.role == Role::Assistant && l.tool_calls.is_empty() && hit(&l.content)) {
                let when = crate::time::local(l.at, self.tz);
                let line = format!("- {when} Raven said on {key}: {}", cut(&l.content, MATCH_CHARS));
                out.push((when, line));
            }
        }
        out
    }
}

impl Tool for SearchHistoryTool {
    fn schema(&self) -> ToolSchema {
        schema(
            "search_history",
            "Search what the user said (history.md) and what Raven said to them, newest first: lines holding every word of `query`.",
            json!({"query": {"type": "string"}, "limit": {"type": "integer", "description": "at most 30; 10 by default"}}),
            &["query"],
        )
    }

    fn for_micro_agent(&self) -> bool {
        true
    }

    fn call<'a>(&'a self, args: &'a Value, _: &'a ToolCtx) -> LocalBoxFuture<'a, String> {
        Box::pin(async move {
            let wanted = words(args.get("query").and_then(Value::as_str).unwrap_or_default());
            if wanted.is_empty() {
                return "error: give a query of at least one word".into();
            }
            let limit =
                args.get("limit").and_then(Value::as_u64).map_or(SEARCH_DEFAULT, |n| (n as usize).clamp(1, SEARCH_MAX));
            let mut found = self.matches(&wanted);
            found.sort_by(|a, b| b.0.cmp(&a.0));
            if found.is_empty() {
                return "nothing found".into();
            }
            let more = found.len().saturating_sub(limit);
            let mut out: Vec<String> = found.into_iter().take(limit).map(|(_, l)| l).collect();
            if more > 0 {
                out.push(format!("({more} older matches not shown)"));
            }
            out.join("\n")
        })
    }
}

/// `list_jobs()`: the user's reminders, read only.
pub struct ListJobsTool {
    pub jobs: Rc<dyn CronJobs>,
}

impl Tool for ListJobsTool {
    fn schema(&self) -> ToolSchema {
        schema("list_jobs", "List the user's scheduled reminders (read only).", json!({}), &[])
    }

    fn for_micro_agent(&self) -> bool {
        true
    }

    fn call<'a>(&'a self, _: &'a Value, _: &'a ToolCtx) -> LocalBoxFuture<'a, String> {
        Box::pin(async move {
            match self.jobs.list() {
                Ok(l) if l.is_empty() => "no reminders are scheduled".into(),
                Ok(l) => l.join("\n"),
                Err(e) => format!("error: {e}"),
            }
        })
    }
}

#[cfg(test)]
mod tests;
