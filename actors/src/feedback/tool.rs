//! The `nudge_feedback(verdict, nudge_id, reason)` tool (spec §8): the main LLM marks a
//! dispatched nudge accepted, dismissed or neutral while answering the user, at no extra
//! LLM call. The current session reaches the tool through a task-local set by the
//! user-inbound hook, so the tool's call signature does not change.

use super::{FeedbackError, Lifecycle, NudgeFeedbackTracker};
use crate::planner::provider::ToolSchema;
use chrono::{DateTime, Utc};
use serde_json::{json, Value};

pub const TOOL_NAME: &str = "nudge_feedback";

tokio::task_local! {
    /// `channel:chat_id` of the turn being served.
    pub static CURRENT_SESSION: String;
}

pub fn tool_schema() -> ToolSchema {
    ToolSchema {
        name: TOOL_NAME.into(),
        description: "Record how the user reacted to a proactive nudge (its id is in the nudge).".into(),
        parameters: json!({
            "type": "object",
            "properties": {
                "verdict": {"type": "string", "enum": ["accepted", "dismissed", "neutral"]},
                "nudge_id": {"type": "string"},
                "reason": {"type": "string"}
            },
            "required": ["verdict", "nudge_id"]
        }),
    }
}

/// Runs `f` with `session` as the current session of the tool.
pub async fn with_session<F: std::future::Future>(session: String, f: F) -> F::Output {
    CURRENT_SESSION.scope(session, f).await
}

/// The tool: validates, correlates the id with a dispatched nudge, records the verdict.
/// The reply is the tool result the LLM sees.
pub fn nudge_feedback(tracker: &NudgeFeedbackTracker, args: &Value, now: DateTime<Utc>) -> Result<String, String> {
    let field = |k: &str| args.get(k).and_then(Value::as_str).map(str::trim).unwrap_or_default().to_owned();
    let (verdict, nudge_id, reason) = (field("verdict"), field("nudge_id"), field("reason"));
    if nudge_id.is_empty() {
        return Err("nudge_feedback needs the nudge_id of the nudge the user reacted to".into());
    }
    let records = tracker.records().map_err(|e| e.to_string())?;
    let Some(sent) = records.iter().find(|r| r.nudge_id == nudge_id && r.event == Lifecycle::Dispatched) else {
        return Err(format!("no dispatched nudge has the id `{nudge_id}`"));
    };
    let session = CURRENT_SESSION.try_with(|s| s.clone()).ok();
    if let (Some(current), Some(target)) = (&session, &sent.session) {
        if current != target {
            tracing::info!(nudge_id, current, target, "feedback given in another session than the nudge's");
        }
    }
    match tracker.record_verdict(&nudge_id, &verdict, &reason, now) {
        Ok(event) => Ok(format!("recorded {event:?} for {nudge_id}").to_lowercase()),
        Err(FeedbackError::BadVerdict(v)) => Err(format!("unknown verdict `{v}`: use accepted, dismissed or neutral")),
        Err(e) => Err(e.to_string()),
    }
}
