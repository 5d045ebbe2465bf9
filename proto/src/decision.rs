//! The Planner's output (spec §1) and its validation (spec §4 steps 3–5).

use crate::limits::{cut, DECISION_FIELD_BYTES, RAW_RESPONSE_BYTES};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::fmt;

/// One of the five structured actions a tick can decide.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, PartialOrd, Ord)]
#[serde(rename_all = "snake_case")]
pub enum Action {
    /// Nothing worth doing this tick.
    Skip,
    /// Send a standalone message now.
    Nudge,
    /// Append to the agent's next reply in `target_session`.
    NudgeInject,
    /// Wait until `target_session`'s current thread settles.
    NudgeDefer,
    /// Dispatch a micro-agent for a multi-step task.
    SpawnAgent,
}

impl Action {
    pub const ALL: [Action; 5] =
        [Action::Skip, Action::Nudge, Action::NudgeInject, Action::NudgeDefer, Action::SpawnAgent];

    pub fn as_str(self) -> &'static str {
        match self {
            Action::Skip => "skip",
            Action::Nudge => "nudge",
            Action::NudgeInject => "nudge_inject",
            Action::NudgeDefer => "nudge_defer",
            Action::SpawnAgent => "spawn_agent",
        }
    }

    /// Parses the wire spelling; anything else is `None` (the caller decides the fallback).
    pub fn parse(s: &str) -> Option<Action> {
        Action::ALL.into_iter().find(|a| a.as_str() == s.trim())
    }

    /// The three actions that deliver a message written by the Planner.
    pub fn is_nudge(self) -> bool {
        matches!(self, Action::Nudge | Action::NudgeInject | Action::NudgeDefer)
    }
}

impl fmt::Display for Action {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, PartialOrd, Ord, Default)]
#[serde(rename_all = "snake_case")]
pub enum Priority {
    #[default]
    Low,
    Medium,
    High,
}

impl Priority {
    pub fn as_str(self) -> &'static str {
        match self {
            Priority::Low => "low",
            Priority::Medium => "medium",
            Priority::High => "high",
        }
    }

    pub fn parse(s: &str) -> Option<Priority> {
        match s.trim() {
            "low" => Some(Priority::Low),
            "medium" => Some(Priority::Medium),
            "high" => Some(Priority::High),
            _ => None,
        }
    }
}

impl fmt::Display for Priority {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PlannerDecision {
    pub action: Action,
    pub reason: String,
    pub priority: Priority,
    /// 0–1 confidence.
    pub proactivity_score: f64,
    /// `"channel:chat_id"`.
    pub target_session: Option<String>,
    /// Required for the three nudge actions.
    pub nudge_message: Option<String>,
    /// Required for `spawn_agent`.
    pub spawn_task: Option<String>,
    /// Required for `nudge_defer`.
    pub defer_condition: Option<String>,
    /// The tool arguments as the provider sent them, as JSON text (kept as text so the
    /// decision stays encodable by the non-self-describing wire codec).
    pub raw_llm_response: Option<String>,
}

impl PlannerDecision {
    pub fn skip(reason: impl Into<String>) -> Self {
        PlannerDecision {
            action: Action::Skip,
            reason: reason.into(),
            priority: Priority::Low,
            proactivity_score: 0.0,
            target_session: None,
            nudge_message: None,
            spawn_task: None,
            defer_condition: None,
            raw_llm_response: None,
        }
    }

    /// A nudge-family decision with its message; the caller sets the rest.
    pub fn with_message(action: Action, message: impl Into<String>, reason: impl Into<String>) -> Self {
        PlannerDecision { action, nudge_message: Some(message.into()), ..PlannerDecision::skip(reason) }
    }

    /// Spec §4 step 3: turns `planner_decision` tool arguments into a decision. Arguments
    /// that are not an object degrade to skip; an unknown action becomes skip and an unknown
    /// priority becomes low (step 4). The result is then [`validated`](Self::validated).
    pub fn from_tool_args(args: &Value) -> PlannerDecision {
        let Some(obj) = args.as_object() else {
            return PlannerDecision::skip("planner_error:args_not_object");
        };
        // What a model sends can be any size; what is kept is bounded (`limits`).
        let text = |key: &str| -> Option<String> {
            let s = obj.get(key).and_then(Value::as_str).map(str::trim).filter(|s| !s.is_empty())?;
            Some(cut(s, DECISION_FIELD_BYTES).into_owned())
        };
        let raw = Some(cut(&args.to_string(), RAW_RESPONSE_BYTES).into_owned());
        let action_text = obj.get("action").and_then(Value::as_str).unwrap_or("");
        let Some(action) = Action::parse(action_text) else {
            return PlannerDecision {
                raw_llm_response: raw,
                ..PlannerDecision::skip(format!("invalid_action:{action_text}"))
            };
        };
        let priority = obj.get("priority").and_then(Value::as_str).and_then(Priority::parse).unwrap_or(Priority::Low);
        // A score sent as a string ("0.8") is read too; anything unreadable is 0.
        let proactivity_score = match obj.get("proactivity_score").or_else(|| obj.get("score")) {
            Some(Value::Number(n)) => n.as_f64().unwrap_or(0.0),
            Some(Value::String(s)) => s.trim().parse().unwrap_or(0.0),
            _ => 0.0,
        };
        PlannerDecision {
            action,
            reason: text("reason").unwrap_or_default(),
            priority,
            proactivity_score,
            target_session: text("target_session"),
            nudge_message: text("nudge_message"),
            spawn_task: text("spawn_task"),
            defer_condition: text("defer_condition"),
            raw_llm_response: raw,
        }
        .validated()
    }

    /// Spec §4 steps 4–5: clamps the score into [0, 1] (NaN counts as 0) and downgrades an
    /// action whose conditionally-required field is missing to skip, so executors downstream
    /// never need defensive checks.
    pub fn validated(mut self) -> PlannerDecision {
        self.proactivity_score =
            if self.proactivity_score.is_nan() { 0.0 } else { self.proactivity_score.clamp(0.0, 1.0) };
        let present = |f: &Option<String>| f.as_deref().is_some_and(|s| !s.trim().is_empty());
        let missing = match self.action {
            Action::Skip => None,
            Action::Nudge | Action::NudgeInject if !present(&self.nudge_message) => Some("nudge_message"),
            Action::NudgeDefer if !present(&self.nudge_message) => Some("nudge_message"),
            Action::NudgeDefer if !present(&self.defer_condition) => Some("defer_condition"),
            Action::SpawnAgent if !present(&self.spawn_task) => Some("spawn_task"),
            _ => None,
        };
        if let Some(field) = missing {
            let was = self.action;
            self.action = Action::Skip;
            self.reason = format!("downgraded:{was}_without_{field}; {}", self.reason);
        }
        if self.action == Action::NudgeInject && !present(&self.target_session) {
            // No conversation to ride: it goes out as a nudge, through the one
            // check-and-record every proactive send passes.
            self.action = Action::Nudge;
            self.target_session = None;
            self.reason = format!("as_nudge:nudge_inject_without_target_session; {}", self.reason);
        }
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn each_action_parses_from_valid_args() {
        let cases = [
            (json!({"action":"skip","reason":"r","proactivity_score":0.1}), Action::Skip),
            (json!({"action":"nudge","reason":"r","proactivity_score":0.9,"nudge_message":"hi"}), Action::Nudge),
            (
                json!({"action":"nudge_inject","reason":"r","proactivity_score":0.5,"nudge_message":"hi","target_session":"cli:1"}),
                Action::NudgeInject,
            ),
            (
                json!({"action":"nudge_defer","reason":"r","proactivity_score":0.5,"nudge_message":"hi","defer_condition":"thread settles"}),
                Action::NudgeDefer,
            ),
            (
                json!({"action":"spawn_agent","reason":"r","proactivity_score":0.5,"spawn_task":"digest"}),
                Action::SpawnAgent,
            ),
        ];
        for (args, want) in cases {
            assert_eq!(PlannerDecision::from_tool_args(&args).action, want, "{args}");
        }
    }

    #[test]
    fn args_not_an_object_is_skip() {
        let d = PlannerDecision::from_tool_args(&json!(["nudge"]));
        assert_eq!(d.action, Action::Skip);
        assert!(d.reason.contains("args_not_object"));
    }

    #[test]
    fn invalid_action_becomes_skip() {
        let d = PlannerDecision::from_tool_args(&json!({"action":"shout","nudge_message":"x"}));
        assert_eq!(d.action, Action::Skip);
        assert!(d.reason.contains("invalid_action"));
    }

    #[test]
    fn invalid_priority_becomes_low() {
        let d = PlannerDecision::from_tool_args(&json!({"action":"nudge","priority":"urgent!!","nudge_message":"x"}));
        assert_eq!(d.action, Action::Nudge);
        assert_eq!(d.priority, Priority::Low);
    }

    #[test]
    fn score_is_clamped() {
        let hi = PlannerDecision::from_tool_args(&json!({"action":"skip","proactivity_score":7.0}));
        let lo = PlannerDecision::from_tool_args(&json!({"action":"skip","proactivity_score":-2}));
        assert_eq!(hi.proactivity_score, 1.0);
        assert_eq!(lo.proactivity_score, 0.0);
        let mut nan = PlannerDecision::skip("x");
        nan.proactivity_score = f64::NAN;
        assert_eq!(nan.validated().proactivity_score, 0.0);
    }

    #[test]
    fn an_inject_without_a_conversation_is_a_nudge() {
        for args in [
            json!({"action":"nudge_inject","nudge_message":"Stretch"}),
            json!({"action":"nudge_inject","nudge_message":"Stretch","target_session":"  "}),
        ] {
            let d = PlannerDecision::from_tool_args(&args);
            assert_eq!((d.action, d.target_session.as_deref()), (Action::Nudge, None), "{args}");
            assert!(d.reason.starts_with("as_nudge:nudge_inject_without_target_session"), "{}", d.reason);
        }
        let targeted = json!({"action":"nudge_inject","nudge_message":"Stretch","target_session":"cli:1"});
        assert_eq!(PlannerDecision::from_tool_args(&targeted).action, Action::NudgeInject);
    }

    #[test]
    fn missing_required_fields_downgrade_to_skip() {
        for args in [
            json!({"action":"nudge"}),
            json!({"action":"nudge","nudge_message":"   "}),
            json!({"action":"nudge_inject"}),
            json!({"action":"nudge_defer","nudge_message":"x"}),
            json!({"action":"spawn_agent"}),
        ] {
            let d = PlannerDecision::from_tool_args(&args);
            assert_eq!(d.action, Action::Skip, "{args}");
            assert!(d.reason.starts_with("downgraded:"), "{}", d.reason);
        }
    }
}
