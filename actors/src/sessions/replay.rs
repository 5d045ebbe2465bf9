//! A session's lines as the model reads them on the next turn: each reply that called tools
//! as an assistant message with its `tool_calls` (the ids the model gave), followed by one
//! `tool` message per call with its `tool_call_id`, in the order they were kept.
//!
//! What would make the conversation one an API refuses is left out: a result whose call is
//! not there (the window began between them), and a call whose result was never kept (the
//! turn was cut short). The rest of that reply is kept.

use super::SessionLine;
use crate::llm::provider::{ChatMessage, Role};

/// `lines` (oldest first) as messages for the model.
pub fn messages(lines: &[SessionLine]) -> Vec<ChatMessage> {
    let mut out = Vec::with_capacity(lines.len());
    let mut rest = lines;
    while let Some((line, after)) = rest.split_first() {
        if line.role == Role::Tool {
            // A result outside a reply's group has lost its call.
            rest = after;
            continue;
        }
        if line.tool_calls.is_empty() {
            out.push(line.as_chat());
            rest = after;
            continue;
        }
        let results = after.iter().take_while(|l| l.role == Role::Tool).count();
        out.extend(group(line, &after[..results]));
        rest = &after[results..];
    }
    out
}

/// One reply's calls and their results: the calls that have a result, each paired with its
/// own, in the order of the calls. A reply left with no call is its text alone (or nothing).
fn group(reply: &SessionLine, results: &[SessionLine]) -> Vec<ChatMessage> {
    let mut taken = vec![false; results.len()];
    let mut answered = Vec::new();
    for call in &reply.tool_calls {
        let id = call.id.as_deref();
        let Some(i) =
            (0..results.len()).find(|&i| !taken[i] && id.is_some() && results[i].tool_call_id.as_deref() == id)
        else {
            continue;
        };
        taken[i] = true;
        answered.push((call.clone(), &results[i]));
    }
    if answered.is_empty() {
        let text = SessionLine { tool_calls: Vec::new(), ..reply.clone() };
        return if text.content.is_empty() { Vec::new() } else { vec![text.as_chat()] };
    }
    let calls: Vec<_> = answered.iter().map(|(c, _)| c.clone()).collect();
    let mut out = vec![ChatMessage::tool_calls(&reply.content, &calls)];
    out.extend(answered.iter().map(|(_, r)| r.as_chat()));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::llm::provider::ToolCall;
    use chrono::{TimeZone, Utc};
    use serde_json::json;

    fn at() -> chrono::DateTime<Utc> {
        Utc.with_ymd_and_hms(2026, 3, 2, 12, 0, 0).unwrap()
    }

    fn call(id: &str, name: &str) -> ToolCall {
        ToolCall { id: Some(id.into()), name: name.into(), arguments: json!({"q": id}) }
    }

    fn shape(messages: &[ChatMessage]) -> Vec<String> {
        messages
            .iter()
            .map(|m| match (&m.tool_calls, &m.tool_call_id) {
                (Some(calls), _) => {
                    let ids: Vec<&str> = calls.as_array().unwrap().iter().map(|c| c["id"].as_str().unwrap()).collect();
                    format!("assistant calls {}", ids.join(","))
                }
                (_, Some(id)) => format!("tool {id}: {}", m.content),
                _ => format!("{:?}: {}", m.role, m.content).to_lowercase(),
            })
            .collect()
    }

    #[test]
    fn calls_and_their_results_come_back_in_order_with_their_ids() {
        let lines = [
            SessionLine::new(Role::User, "hi", at()),
            SessionLine::calls("", &[call("a", "cron"), call("b", "cron")], at()),
            SessionLine::result("a", "ra", at()),
            SessionLine::result("b", "rb", at()),
            SessionLine::new(Role::Assistant, "done", at()),
        ];
        let m = messages(&lines);
        assert_eq!(shape(&m), ["user: hi", "assistant calls a,b", "tool a: ra", "tool b: rb", "assistant: done"]);
        assert_eq!(m[1].tool_calls.as_ref().unwrap()[1]["function"]["arguments"], r#"{"q":"b"}"#);
    }

    #[test]
    fn a_result_without_its_call_and_a_call_without_its_result_are_left_out() {
        let lines = [
            SessionLine::result("gone", "its call was before the window", at()),
            SessionLine::new(Role::User, "hi", at()),
            SessionLine::calls("let me look", &[call("a", "cron"), call("b", "cron")], at()),
            SessionLine::result("b", "rb", at()),
            SessionLine::new(Role::User, "again", at()),
            SessionLine::calls("", &[call("c", "cron")], at()),
        ];
        let m = messages(&lines);
        assert_eq!(shape(&m), ["user: hi", "assistant calls b", "tool b: rb", "user: again"]);
        assert_eq!(m[1].content, "let me look", "the text beside the calls is kept");
    }
}
