//! A reply's tool calls as the loop runs them: every call, in the model's order, under the
//! model's own id; a call that came without one gets a local id, unique to its turn. At most
//! [`TOOL_CALLS_PER_REPLY`] of one reply are run (and kept); the rest are dropped, logged.

use super::tools::{Tool, ToolCtx};
use crate::llm::provider::ToolCall;
use raven_proto::limits::TOOL_CALLS_PER_REPLY;
use std::rc::Rc;

/// `calls` with an id each; `local` names the reply (a call without an id becomes
/// `<local>-<n>`, its place in the reply).
pub fn prepared(mut calls: Vec<ToolCall>, local: &str) -> Vec<ToolCall> {
    if calls.len() > TOOL_CALLS_PER_REPLY {
        tracing::warn!("a reply called {} tools; the first {TOOL_CALLS_PER_REPLY} are run", calls.len());
        calls.truncate(TOOL_CALLS_PER_REPLY);
    }
    for (n, call) in calls.iter_mut().enumerate() {
        if call.id.as_deref().is_none_or(str::is_empty) {
            call.id = Some(format!("{local}-{n}"));
        }
    }
    calls
}

/// The call's result: the tool's answer, or an error the model reads when there is no such
/// tool.
pub async fn run(tools: &[Rc<dyn Tool>], call: &ToolCall, ctx: &ToolCtx) -> String {
    match tools.iter().find(|t| t.schema().name == call.name) {
        Some(tool) => tool.call(&call.arguments, ctx).await,
        None => format!("error: no tool named `{}`", call.name),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_models_ids_are_kept_and_only_a_missing_one_is_given() {
        let calls = vec![
            ToolCall { id: Some("call_abc".into()), name: "cron".into(), arguments: json!({}) },
            ToolCall::new("cron", json!({})),
            ToolCall { id: Some(String::new()), name: "cron".into(), arguments: json!({}) },
        ];
        let ids: Vec<_> = prepared(calls, "t1").into_iter().map(|c| c.id.unwrap()).collect();
        assert_eq!(ids, ["call_abc", "t1-1", "t1-2"]);
    }

    #[test]
    fn a_reply_runs_at_most_the_bound_of_calls() {
        let calls = (0..TOOL_CALLS_PER_REPLY + 5).map(|i| ToolCall::new(format!("t{i}"), json!({}))).collect();
        let kept = prepared(calls, "r");
        assert_eq!(kept.len(), TOOL_CALLS_PER_REPLY);
        assert_eq!(kept.last().unwrap().name, format!("t{}", TOOL_CALLS_PER_REPLY - 1));
    }
}
