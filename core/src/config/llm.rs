//! The parts of `[llm]` that are tables of their own: the per-role overrides of the pinned
//! generation values (`[llm.planner]`, `[llm.agent]`, `[llm.heartbeat]`).

use serde::{Deserialize, Serialize};

/// The largest reply body read from a model by default: far above any completion, far below
/// what would hurt if it were kept.
pub const MAX_REPLY_BYTES: usize = 1 << 20;

/// The default of `llm.max_prompt_tokens`.
pub const DEFAULT_MAX_PROMPT_TOKENS: u32 = 4_000;

/// One role's overrides; each unset key keeps the value the role pins. There is no
/// `[llm]`-level equivalent on purpose: nothing global reaches a role's pinned values.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct RoleParams {
    /// The completion limit (sent as `max_tokens` or `max_completion_tokens`).
    pub max_tokens: Option<u32>,
    /// Never sent to a reasoning model, which refuses it.
    pub temperature: Option<f64>,
    /// Sent to a reasoning model only, in place of its lowest effort.
    pub reasoning_effort: Option<String>,
}

impl RoleParams {
    /// Range checks serde cannot express; `role` names the table in the error.
    // A `String` error: a range check's message, read by a person; ConfigError::Invalid names the file.
    pub(super) fn check(&self, role: &str) -> Result<(), String> {
        if self.max_tokens == Some(0) {
            return Err(format!("`llm.{role}.max_tokens` must be at least 1"));
        }
        if self.temperature.is_some_and(|t| !(0.0..=2.0).contains(&t)) {
            return Err(format!("`llm.{role}.temperature` must be between 0 and 2"));
        }
        if self.reasoning_effort.as_deref().is_some_and(|e| e.trim().is_empty()) {
            return Err(format!("`llm.{role}.reasoning_effort` must not be empty"));
        }
        Ok(())
    }
}

/// `[llm.retry]`: how a failed request is tried again.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct RetryConfig {
    /// Requests in all for one call (1: no retry).
    pub attempts: u32,
    /// The first backoff, doubling after each retry up to `backoff_max_ms` (jittered).
    pub backoff_initial_ms: u64,
    pub backoff_max_ms: u64,
    /// One call, its retries and waits included, ends within this; a `Retry-After` that
    /// would take it past is not waited for.
    pub deadline_s: u64,
}

impl Default for RetryConfig {
    fn default() -> Self {
        RetryConfig { attempts: 3, backoff_initial_ms: 500, backoff_max_ms: 8_000, deadline_s: 60 }
    }
}

/// `[llm.breaker]`: when the provider is marked down.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct BreakerConfig {
    /// Failed requests in a row (each retry counts) that mark the provider down.
    pub failures: u32,
    /// How long it stays down; then one call probes it.
    pub open_s: u64,
}

impl Default for BreakerConfig {
    fn default() -> Self {
        BreakerConfig { failures: 5, open_s: 300 }
    }
}

/// Range checks of the two tables.
// A `String` error: a range check's message, read by a person; ConfigError::Invalid names the file.
pub(super) fn check_retry(retry: &RetryConfig, breaker: &BreakerConfig) -> Result<(), String> {
    if retry.attempts == 0 || retry.deadline_s == 0 {
        return Err("`llm.retry.attempts` and `llm.retry.deadline_s` must be at least 1".into());
    }
    if retry.backoff_max_ms < retry.backoff_initial_ms {
        return Err("`llm.retry.backoff_max_ms` must be at least `backoff_initial_ms`".into());
    }
    if breaker.failures == 0 || breaker.open_s == 0 {
        return Err("`llm.breaker.failures` and `llm.breaker.open_s` must be at least 1".into());
    }
    Ok(())
}

/// The LLM endpoint. With no `base_url` the embedded `rules` provider decides.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct LlmConfig {
    /// An OpenAI-compatible API root, e.g. `http://127.0.0.1:11434/v1`; empty for `rules`.
    pub base_url: String,
    pub model: String,
    /// Name of the environment variable holding the API key (the key never sits in the file).
    pub api_key_env: String,
    pub timeout_s: u64,
    /// A reply body larger than this is a logged failure, never stored.
    pub max_reply_bytes: usize,
    /// Every prompt (the Planner, discovery, the heartbeat, the agent) is built within this
    /// many tokens (see `llm::budget` for what is kept first).
    pub max_prompt_tokens: u32,
    /// Tokens a local day that the proactive roles may spend (0: no limit); once spent they
    /// skip, the user's own turns never do.
    pub daily_token_budget: u64,
    /// Whether the model is a reasoning model (no temperature, `max_completion_tokens`, the
    /// lowest reasoning effort); unset, it is guessed from `model`.
    pub reasoning: Option<bool>,
    pub planner: RoleParams,
    pub agent: RoleParams,
    pub heartbeat: RoleParams,
    pub retry: RetryConfig,
    pub breaker: BreakerConfig,
}

impl Default for LlmConfig {
    fn default() -> Self {
        LlmConfig {
            base_url: String::new(),
            model: "gpt-4o-mini".into(),
            api_key_env: "OPENAI_API_KEY".into(),
            timeout_s: 30,
            max_reply_bytes: MAX_REPLY_BYTES,
            max_prompt_tokens: DEFAULT_MAX_PROMPT_TOKENS,
            daily_token_budget: 0,
            reasoning: None,
            planner: RoleParams::default(),
            agent: RoleParams::default(),
            heartbeat: RoleParams::default(),
            retry: RetryConfig::default(),
            breaker: BreakerConfig::default(),
        }
    }
}
