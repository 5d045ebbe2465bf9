//! `remember(note)`: a dated line in the `## Notes from Raven` section of MEMORY.md. It
//! writes, so a micro-agent never gets it.

use super::{args, schema, Tool, ToolCtx};
use crate::agent::notes::MemoryNotes;
use crate::llm::provider::ToolSchema;
use futures_util::future::LocalBoxFuture;
use serde::Deserialize;
use serde_json::{json, Value};

#[derive(Debug, Default, Deserialize)]
struct Args {
    #[serde(default)]
    note: String,
}

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

    fn call<'a>(&'a self, given: &'a Value, ctx: &'a ToolCtx) -> LocalBoxFuture<'a, String> {
        Box::pin(async move {
            let note = match args::<Args>("remember", given) {
                Ok(a) => a.note,
                Err(said) => return said,
            };
            match self.notes.append(&note, ctx.now) {
                Ok(line) => format!("kept in MEMORY.md: {line}"),
                Err(e) => format!("error: {e}"),
            }
        })
    }
}
