//! A conversation replayed within the prompt budget: its newest messages, whole, as many as
//! fit; a tool result whose call was cut off is dropped with it (a model refuses a result that
//! answers no call).

use super::PromptBudget;
use crate::llm::provider::{ChatMessage, Role};

/// The newest of `history` that fit in `allowance` tokens, in their order.
pub fn newest_within(history: Vec<ChatMessage>, budget: &PromptBudget, allowance: usize) -> Vec<ChatMessage> {
    let mut left = allowance;
    let mut start = history.len();
    for (i, m) in history.iter().enumerate().rev() {
        let cost = cost(m, budget);
        if cost > left {
            break;
        }
        left -= cost;
        start = i;
    }
    let mut kept: Vec<ChatMessage> = history.into_iter().skip(start).collect();
    let orphans = kept.iter().take_while(|m| m.role == Role::Tool).count();
    kept.drain(..orphans);
    kept
}

/// What one message of a conversation takes: its text, its tool calls, and the message itself.
pub fn cost(m: &ChatMessage, budget: &PromptBudget) -> usize {
    let calls = m.tool_calls.as_ref().map(|c| c.to_string()).unwrap_or_default();
    budget.count(&m.content) + budget.count(&calls) + super::PER_MESSAGE
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_newest_messages_are_kept_and_no_result_without_its_call() {
        let budget = PromptBudget::default();
        let mut history: Vec<ChatMessage> = (0..100).map(|i| ChatMessage::user(format!("message {i:03}"))).collect();
        let call = crate::llm::provider::ToolCall {
            id: Some("c1".into()),
            name: "cron".into(),
            arguments: serde_json::json!({}),
        };
        history.push(ChatMessage::tool_calls("", &[call]));
        history.push(ChatMessage::tool_result("c1", "x".repeat(400)));
        history.push(ChatMessage::assistant("done"));
        let kept = newest_within(history.clone(), &budget, 200);
        assert_eq!(kept.last().map(|m| m.content.as_str()), Some("done"));
        assert!(kept.len() < 20 && kept[0].role != Role::Tool, "{kept:?}");
        let cut_at_the_result = newest_within(history, &budget, 120);
        assert_eq!(cut_at_the_result.len(), 1, "the result left alone is dropped: {cut_at_the_result:?}");
    }
}
