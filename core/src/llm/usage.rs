//! Token usage: what each reply says it cost (`usage.prompt_tokens`, `usage.completion_tokens`,
//! the shape every OpenAI-compatible server shares), handed from the provider that read it to
//! the wrapper that accounts for it without passing through the reply: the accounting wrapper
//! opens a [`measure`] scope around a call, and the provider [`report`]s into it (several
//! requests of one call, its retries, add up).

use serde_json::Value;
use std::cell::Cell;

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
}

tokio::task_local! {
    static REPORTED: Cell<Option<Usage>>;
}

/// Adds `usage` to the call being measured (nothing when none is).
pub fn report(usage: Usage) {
    let _ = REPORTED.try_with(|c| {
        let before = c.get().unwrap_or_default();
        c.set(Some(Usage { prompt: before.prompt + usage.prompt, completion: before.completion + usage.completion }));
    });
}

/// Runs `call`, answering its result and the usage its requests reported (which is also
/// reported to a measure around this one: the agent's around the accounting's).
pub async fn measure<T>(call: impl std::future::Future<Output = T>) -> (T, Option<Usage>) {
    let (out, usage) = REPORTED
        .scope(Cell::new(None), async move {
            let out = call.await;
            (out, REPORTED.with(Cell::get))
        })
        .await;
    if let Some(u) = usage {
        report(u);
    }
    (out, usage)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[actix_rt::test]
    async fn the_usage_of_each_request_of_a_call_adds_up() {
        let body = r#"{"choices": [], "usage": {"prompt_tokens": 120, "completion_tokens": 8, "total_tokens": 128}}"#;
        let ((), usage) = measure(async {
            report(Usage::from_body(body).unwrap());
            report(Usage { prompt: 1, completion: 2 });
        })
        .await;
        assert_eq!(usage, Some(Usage { prompt: 121, completion: 10 }));
        let (_, outer) = measure(async { measure(async { report(Usage { prompt: 5, completion: 1 }) }).await }).await;
        assert_eq!(outer, Some(Usage { prompt: 5, completion: 1 }), "a measure around a measure sees its usage");
        assert_eq!(Usage::from_body(r#"{"choices": []}"#), None);
        report(Usage::default());
    }
}
