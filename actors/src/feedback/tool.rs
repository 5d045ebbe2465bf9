//! The `nudge_feedback(verdict, nudge_id, reason)` tool (spec §8): the main LLM marks a
//! dispatched nudge accepted, dismissed or neutral while answering the user, at no extra
//! LLM call. The current session reaches the tool through a task-local set by the
//! user-inbound hook, so the tool's call signature does not change.

use super::{FeedbackError, Lifecycle, NudgeFeedbackTracker};
use crate::llm::provider::ToolSchema;
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
        description: "Record how the user reacted to a proactive message (its id is shown beside it in the \
conversation). Without nudge_id, the latest proactive message of this conversation is meant."
            .into(),
        parameters: json!({
            "type": "object",
            "properties": {
                "verdict": {"type": "string", "enum": ["accepted", "dismissed", "neutral"]},
                "nudge_id": {"type": "string"},
                "reason": {"type": "string"}
            },
            "required": ["verdict"]
        }),
    }
}

/// Runs `f` with `session` as the current session of the tool.
pub async fn with_session<F: std::future::Future>(session: String, f: F) -> F::Output {
    CURRENT_SESSION.scope(session, f).await
}

/// The tool: validates, finds the message (by id, or the latest undecided one of the
/// current session within the reaction window), records the verdict. The reply is the tool
/// result the LLM sees.
// A `String` error: the tool's text, read by the model.
pub fn nudge_feedback(tracker: &NudgeFeedbackTracker, args: &Value, now: DateTime<Utc>) -> Result<String, String> {
    let field = |k: &str| args.get(k).and_then(Value::as_str).map(str::trim).unwrap_or_default().to_owned();
    let (verdict, nudge_id, reason) = (field("verdict"), field("nudge_id"), field("reason"));
    if Lifecycle::parse_verdict(&verdict).is_none() {
        return Err(format!("unknown verdict `{verdict}`: use accepted, dismissed or neutral"));
    }
    let session = CURRENT_SESSION.try_with(|s| s.clone()).ok();
    let sent = if nudge_id.is_empty() {
        let Some(session) = &session else {
            return Err("no nudge_id, and no conversation to find the latest proactive message in".into());
        };
        let latest = tracker.latest_undecided(session, now).map_err(|e| e.to_string())?;
        latest.ok_or_else(|| "no proactive message in this conversation waits for a verdict".to_owned())?
    } else {
        tracker.rated_message(&nudge_id).map_err(|e| e.to_string())?
    };
    if !sent.source.is_rated() {
        return Err(format!("`{}` is a reminder the user scheduled: it is not rated", sent.nudge_id));
    }
    if let (Some(current), Some(target)) = (&session, &sent.session) {
        if current != target {
            tracing::info!(nudge_id = %sent.nudge_id, current, target, "feedback given in another session than the nudge's");
        }
    }
    match tracker.record_verdict(&sent.nudge_id, &verdict, &reason, now) {
        Ok(event) => Ok(format!("recorded {} for {}", event.name(), sent.nudge_id)),
        Err(FeedbackError::BadVerdict(v)) => Err(format!("unknown verdict `{v}`: use accepted, dismissed or neutral")),
        Err(e) => Err(e.to_string()),
    }
}
