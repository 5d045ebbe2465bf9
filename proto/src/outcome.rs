//! What a tick produced (spec §2) and what an executor did.

use crate::decision::{Action, PlannerDecision};
use crate::Verdict;
use serde::{Deserialize, Serialize};
use std::fmt;

#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct ExecutionResult {
    pub delivered: bool,
    /// The `channel:chat_id` targets that accepted the message.
    pub targets: Vec<String>,
    /// Why nothing was delivered (a denial, an outlet error); `None` when delivered.
    pub error: Option<String>,
    /// The gate's verdict when it said no (the error then names its layer).
    #[serde(default)]
    pub denied: Option<Verdict>,
    /// Started, not yet delivered: a spawned micro-agent is running; its result goes to
    /// `targets` when ready, and is charged at the gate then.
    #[serde(default)]
    pub started: bool,
    /// Not delivered yet but kept in the outbox, which sends it when its channel can take it.
    #[serde(default)]
    pub queued: bool,
}

impl ExecutionResult {
    pub fn delivered(targets: Vec<String>) -> Self {
        ExecutionResult { delivered: true, targets, ..Default::default() }
    }

    /// A micro-agent started for `targets`: its result is delivered (and charged) later.
    pub fn started(targets: Vec<String>) -> Self {
        ExecutionResult { started: true, targets, ..Default::default() }
    }

    pub fn failed(error: impl Into<String>) -> Self {
        ExecutionResult { error: Some(error.into()), ..Default::default() }
    }

    /// Not delivered because the gate said no; the error names the layer.
    pub fn denied(v: &crate::Verdict) -> Self {
        let layer = v.layer.map(|l| l.to_string()).unwrap_or_default();
        ExecutionResult {
            denied: Some(v.clone()),
            ..ExecutionResult::failed(format!("denied at {layer}: {}", v.reason))
        }
    }
}

/// The path a tick's decision took to the executors.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Path {
    /// The Planner's decision, routed by its action (`skip`, `nudge`, …).
    Planned(Action),
    /// A rule decided before the Planner was asked (quiet hours, nothing changed).
    FastPathSkip,
    /// A recurring slot of the day's plan came due.
    ScheduledFire,
    /// The Planner is down and a high-priority deadline slot is open.
    DeadlineFallback,
    /// The context could not be assembled: a skip.
    Degraded,
    /// A deferred decision whose conversation settled.
    Deferred,
}

impl Path {
    pub fn as_str(self) -> &'static str {
        match self {
            Path::Planned(a) => a.as_str(),
            Path::FastPathSkip => "fast_path_skip",
            Path::ScheduledFire => "scheduled_fire",
            Path::DeadlineFallback => "deadline_fallback",
            Path::Degraded => "degraded",
            Path::Deferred => "deferred",
        }
    }
}

/// Which path a tick took, and whether the gate denied it there. Written as the journal and
/// the CLI show it: `nudge`, `deadline_fallback:denied`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Route {
    pub path: Path,
    pub denied: bool,
}

impl Route {
    pub fn of(path: Path) -> Route {
        Route { path, denied: false }
    }
}

impl fmt::Display for Route {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.path.as_str())?;
        if self.denied {
            f.write_str(":denied")?;
        }
        Ok(())
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
    pub route: Route,
    pub notes: Vec<String>,
    /// The morning brief this tick sent (or tried to), before it decided.
    #[serde(default)]
    pub brief: Option<Box<TickOutcome>>,
}

impl TickOutcome {
    /// What a person reads of it, a line each: the decision with its reason, and what became
    /// of it (delivered where, or why not: a denial names its layer).
    /// A fast-path skip in words: why the Planner was not asked.
    pub fn fast_path_words(&self) -> Option<&'static str> {
        if self.route.path != Path::FastPathSkip {
            return None;
        }
        Some(match self.decision.reason.strip_prefix("fast_path:") {
            Some("quiet_hours") => "quiet hours: nothing is asked or sent until they end",
            Some("unchanged_context") => "nothing changed since the last look: the planner was not asked",
            _ => "skipped before the planner was asked",
        })
    }

    pub fn describe(&self) -> Vec<String> {
        let d = &self.decision;
        let mut lines =
            vec![format!("decision: {} ({}, score {:.2}): {}", d.action, d.priority, d.proactivity_score, d.reason)];
        if let Some(why) = self.fast_path_words() {
            lines.push(format!("why:      {why}"));
        }
        if let Some(r) = &self.result {
            lines.push(match &r.error {
                None if r.started => {
                    format!("result:   started; its result goes to {} when ready", r.targets.join(", "))
                }
                None => format!("result:   delivered to {}", r.targets.join(", ")),
                Some(e) => format!("result:   not delivered: {e}"),
            });
        }
        if let Some(r) = self.brief.as_ref().and_then(|b| b.result.as_ref()) {
            lines.push(match &r.error {
                None => format!("brief:    the morning brief, delivered to {}", r.targets.join(", ")),
                Some(e) => format!("brief:    the morning brief, not delivered: {e}"),
            });
        }
        lines
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn skipped(path: Path, reason: &str) -> TickOutcome {
        TickOutcome {
            decision: PlannerDecision::skip(reason),
            result: None,
            nudge_id: None,
            route: Route::of(path),
            notes: Vec::new(),
            brief: None,
        }
    }

    /// A fast-path skip says why in words; a tick the Planner decided needs no such line.
    #[test]
    fn a_fast_path_skip_says_why_in_words() {
        let quiet = skipped(Path::FastPathSkip, "fast_path:quiet_hours").describe();
        assert_eq!(quiet[1], "why:      quiet hours: nothing is asked or sent until they end");
        let unchanged = skipped(Path::FastPathSkip, "fast_path:unchanged_context").describe();
        assert!(unchanged[1].contains("nothing changed since the last look"), "{unchanged:?}");
        assert_eq!(skipped(Path::Planned(Action::Skip), "nothing due").describe().len(), 1);
    }
}
