//! `search_history(query, limit?)`: the user's words in history.md and what Raven said in
//! their conversations, newest first. It only reads, so a micro-agent gets it too. The
//! answer is bounded.

use super::{args, cut, schema, words, Tool, ToolCtx, MATCH_CHARS};
use crate::llm::provider::{Role, ToolSchema};
use crate::sessions::SessionLine;
use futures_util::future::LocalBoxFuture;
use serde::Deserialize;
use serde_json::{json, Value};
use std::path::PathBuf;

/// Matches one search answers with.
const SEARCH_DEFAULT: usize = 10;
const SEARCH_MAX: usize = 30;
/// How much of the end of each file a search reads.
const HISTORY_TAIL: u64 = 1024 * 1024;
const SESSION_TAIL: u64 = 256 * 1024;

#[derive(Debug, Default, Deserialize)]
struct Args {
    #[serde(default)]
    query: String,
    #[serde(default)]
    limit: Option<u64>,
}

pub struct SearchHistoryTool {
    pub history: PathBuf,
    pub sessions: PathBuf,
    pub tz: chrono_tz::Tz,
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

    fn call<'a>(&'a self, given: &'a Value, _: &'a ToolCtx) -> LocalBoxFuture<'a, String> {
        Box::pin(async move {
            let a = match args::<Args>("search_history", given) {
                Ok(a) => a,
                Err(said) => return said,
            };
            let wanted = words(&a.query);
            if wanted.is_empty() {
                return "error: give a query of at least one word".into();
            }
            let limit = a.limit.map_or(SEARCH_DEFAULT, |n| (n as usize).clamp(1, SEARCH_MAX));
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
