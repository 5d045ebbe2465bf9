//! What the agent's `nudge_feedback` tool does (spec §8): the main LLM marks a dispatched
//! nudge accepted, dismissed or neutral while answering the user, at no extra LLM call. The
//! tool itself (its arguments and schema) is the agent's; this is the rule it applies.

use super::{FeedbackError, Lifecycle, NudgeFeedbackTracker};
use chrono::{DateTime, Utc};

/// A verdict as the model gives it, in the conversation it answers.
#[derive(Debug, Clone, Copy)]
pub struct ModelVerdict<'a> {
    pub verdict: &'a str,
    /// Empty: the latest proactive message of `session` is meant.
    pub nudge_id: &'a str,
    pub reason: &'a str,
    /// `channel:chat_id` of the turn being served.
    pub session: &'a str,
}

/// Validates, finds the message (by id, or the latest undecided one of the session within
/// the reaction window), records the verdict. The answer is the tool result the LLM sees.
// A `String` error: the tool's text, read by the model.
pub fn nudge_feedback(
    tracker: &NudgeFeedbackTracker,
    given: ModelVerdict,
    now: DateTime<Utc>,
) -> Result<String, String> {
    let (verdict, nudge_id, reason) = (given.verdict.trim(), given.nudge_id.trim(), given.reason.trim());
    if Lifecycle::parse_verdict(verdict).is_none() {
        return Err(format!("unknown verdict `{verdict}`: use accepted, dismissed or neutral"));
    }
    let sent = if nudge_id.is_empty() {
        let latest = tracker.latest_undecided(given.session, now).map_err(|e| e.to_string())?;
        latest.ok_or_else(|| "no proactive message in this conversation waits for a verdict".to_owned())?
    } else {
        tracker.rated_message(nudge_id).map_err(|e| e.to_string())?
    };
    if !sent.source.is_rated() {
        return Err(format!("`{}` is a reminder the user scheduled: it is not rated", sent.nudge_id));
    }
    if let Some(target) = &sent.session {
        if given.session != target {
            let current = given.session;
            tracing::info!(nudge_id = %sent.nudge_id, current, target, "feedback given in another session than the nudge's");
        }
    }
    match tracker.record_verdict(&sent.nudge_id, verdict, reason, now) {
        Ok(event) => Ok(format!("recorded {} for {}", event.name(), sent.nudge_id)),
        Err(FeedbackError::BadVerdict(v)) => Err(format!("unknown verdict `{v}`: use accepted, dismissed or neutral")),
        Err(e) => Err(e.to_string()),
    }
}
