//! What a tick produced (spec §2) and what an executor did.

use crate::decision::PlannerDecision;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct ExecutionResult {
    pub delivered: bool,
    /// The `channel:chat_id` targets that accepted the message.
    pub targets: Vec<String>,
    /// Why nothing was delivered (a denial, an outlet error); `None` when delivered.
    pub error: Option<String>,
}

impl ExecutionResult {
    pub fn delivered(targets: Vec<String>) -> Self {
        ExecutionResult { delivered: true, targets, error: None }
    }

    pub fn failed(error: impl Into<String>) -> Self {
        ExecutionResult { delivered: false, targets: Vec::new(), error: Some(error.into()) }
    }

    /// Not delivered because the gate said no; the error names the layer.
    pub fn denied(v: &crate::Verdict) -> Self {
        let layer = v.layer.map(|l| l.to_string()).unwrap_or_default();
        ExecutionResult::failed(format!("denied at {layer}: {}", v.reason))
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TickOutcome {
    pub decision: PlannerDecision,
    /// `None` when skipped or no executor fired.
    pub result: Option<ExecutionResult>,
    /// Correlates the NudgeFeedbackTracker.
    pub nudge_id: Option<String>,
    /// Which executor path was taken.
    pub route: String,
    pub notes: Vec<String>,
}

impl TickOutcome {
    /// What a person reads of it, a line each: the decision with its reason, and what became
    /// of it (delivered where, or why not: a denial names its layer).
    pub fn describe(&self) -> Vec<String> {
        let d = &self.decision;
        let mut lines =
            vec![format!("decision: {} ({}, score {:.2}): {}", d.action, d.priority, d.proactivity_score, d.reason)];
        if let Some(r) = &self.result {
            lines.push(match &r.error {
                None => format!("result:   delivered to {}", r.targets.join(", ")),
                Some(e) => format!("result:   not delivered: {e}"),
            });
        }
        lines
    }
}
