//! `read_memory(query?)`: the user's notes (MEMORY.md), from the top or the lines on a subject.
//! It only reads, so a micro-agent gets it too. The answer is bounded.

use super::{args, cut, schema, words, Tool, ToolCtx, MATCH_CHARS};
use crate::llm::provider::ToolSchema;
use futures_util::future::LocalBoxFuture;
use serde::Deserialize;
use serde_json::{json, Value};
use std::path::PathBuf;

/// The most of MEMORY.md one `read_memory` answers with.
pub(super) const READ_BYTES: usize = 16 * 1024;
/// Lines one query answers with.
const QUERY_LINES: usize = 40;

#[derive(Debug, Default, Deserialize)]
struct Args {
    #[serde(default)]
    query: Option<String>,
}

pub struct ReadMemoryTool {
    pub memory: PathBuf,
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

    fn call<'a>(&'a self, given: &'a Value, _: &'a ToolCtx) -> LocalBoxFuture<'a, String> {
        Box::pin(async move {
            match args::<Args>("read_memory", given) {
                Ok(a) => self.answer(a.query.as_deref()),
                Err(said) => said,
            }
        })
    }
}

impl ReadMemoryTool {
    fn answer(&self, query: Option<&str>) -> String {
        let text = match crate::store::files::read_optional(&self.memory) {
            Ok(Some(t)) if !t.trim().is_empty() => t,
            Ok(_) => return "MEMORY.md is empty".into(),
            Err(e) => return format!("error: MEMORY.md cannot be read: {e}"),
        };
        match query.map(words).filter(|w| !w.is_empty()) {
            Some(wanted) => matching(&text, &wanted),
            None => first(&text),
        }
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
