//! The parts of `[llm]` that are tables of their own: the per-role overrides of the pinned
//! generation values (`[llm.planner]`, `[llm.agent]`, `[llm.heartbeat]`).

use serde::{Deserialize, Serialize};

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
