//! Token usage: what each reply says it cost (`usage.prompt_tokens`, `usage.completion_tokens`,
//! the shape every OpenAI-compatible server shares). It travels with the reply in an
//! [`Answer`], from the provider that read it through the decorators (a retry adds up the
//! usage of every request it made) to the accounting and the agent's spending.

use super::provider::{ProviderError, ProviderReply};
use serde_json::Value;

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Usage {
    pub prompt: u64,
    pub completion: u64,
}

impl Usage {
    pub fn total(&self) -> u64 {
        self.prompt + self.completion
    }

    /// The `usage` object of a reply body, when it has one.
    pub fn from_body(body: &str) -> Option<Usage> {
        let v: Value = serde_json::from_str(body).ok()?;
        let usage = v.get("usage")?;
        let n = |k: &str| usage.get(k).and_then(Value::as_u64).unwrap_or(0);
        Some(Usage { prompt: n("prompt_tokens"), completion: n("completion_tokens") })
    }

    /// Both counts added; `None` only when neither said anything.
    pub fn sum(a: Option<Usage>, b: Option<Usage>) -> Option<Usage> {
        match (a, b) {
            (Some(a), Some(b)) => Some(Usage { prompt: a.prompt + b.prompt, completion: a.completion + b.completion }),
            (a, b) => a.or(b),
        }
    }
}

/// What one call answered and what its requests said they cost. A reply that was refused
/// after it came (cut off at its token limit) still cost its tokens, so usage rides an error
/// too.
#[derive(Debug, Clone, PartialEq)]
pub struct Answer {
    pub reply: Result<ProviderReply, ProviderError>,
    /// `None` when no request of the call said what it cost.
    pub usage: Option<Usage>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_usage_of_each_request_of_a_call_adds_up() {
        let body = r#"{"choices": [], "usage": {"prompt_tokens": 120, "completion_tokens": 8, "total_tokens": 128}}"#;
        let first = Usage::from_body(body);
        let usage = Usage::sum(first, Some(Usage { prompt: 1, completion: 2 }));
        assert_eq!(usage, Some(Usage { prompt: 121, completion: 10 }));
        assert_eq!(Usage::sum(None, first), first, "a request that said nothing adds nothing");
        assert_eq!(Usage::sum(None, None), None);
        assert_eq!(Usage::from_body(r#"{"choices": []}"#), None);
    }
}
