//! A verdict given from outside a conversation: `raven feedback <id> <verdict>` and the
//! gateway's `POST /feedback`. Both name the message by id (the short id shown beside it, or
//! the full one) or, for the gateway, by the conversation whose latest proactive message is
//! meant. Both write to the feedback log directly, so the next `raven policy explain` (and
//! the next tick) sees it with no tick in between.
//!
//! `later` is no rating: it puts the message off and sends it again, which needs the user's
//! jobs, so it is given through [`crate::cron::later`]; here it is refused.

use super::{short_id, FeedbackError, FeedbackRecord, Lifecycle, NudgeFeedbackTracker};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GiveFeedback {
    #[serde(default)]
    pub nudge_id: Option<String>,
    /// `channel:chat_id`: its latest proactive message within the reaction window.
    #[serde(default)]
    pub session: Option<String>,
    pub verdict: String,
    #[serde(default)]
    pub reason: Option<String>,
}

/// What was recorded, and how to take it back.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Given {
    pub nudge_id: String,
    pub short_id: String,
    pub verdict: String,
    pub topic: Option<String>,
    pub undo: String,
    /// `later`: when the message comes again, and the one-shot job that sends it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub again_at: Option<DateTime<Utc>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub again_job: Option<String>,
}

#[derive(Debug, thiserror::Error)]
pub enum GiveError {
    #[error("unknown verdict `{0}`: use accepted, dismissed, neutral or later")]
    BadVerdict(String),
    #[error("the message was not put off: {0}")]
    NotPutOff(String),
    #[error("name the message: a nudge_id, or a session whose latest proactive message is meant")]
    NoTarget,
    #[error("no proactive message in {0} waits for a verdict (within the reaction window)")]
    NothingInSession(String),
    #[error(transparent)]
    Feedback(#[from] FeedbackError),
}

impl GiveError {
    /// The message named does not exist (as opposed to a malformed request).
    pub fn is_not_found(&self) -> bool {
        matches!(self, GiveError::NothingInSession(_) | GiveError::Feedback(FeedbackError::UnknownId(_)))
    }
}

pub fn give(tracker: &NudgeFeedbackTracker, req: &GiveFeedback, now: DateTime<Utc>) -> Result<Given, GiveError> {
    let verdict = req.verdict.trim();
    if Lifecycle::parse_verdict(verdict).is_none() {
        return Err(GiveError::BadVerdict(verdict.to_owned()));
    }
    let sent = message_of(tracker, req, now, false)?;
    tracker.record_verdict(&sent.nudge_id, verdict, req.reason.as_deref().unwrap_or_default(), now)?;
    let short = short_id(&sent.nudge_id);
    let undo = match verdict {
        "neutral" => format!("raven feedback {short} accepted (or dismissed) to give another verdict"),
        _ => format!("raven feedback {short} neutral"),
    };
    Ok(Given {
        nudge_id: sent.nudge_id,
        short_id: short,
        verdict: verdict.to_owned(),
        topic: sent.topic,
        undo,
        again_at: None,
        again_job: None,
    })
}

/// The dispatched record `req` names: by id, else the latest of its session still waiting for
/// a verdict. `any_source`: a cron reminder may be meant too (to put it off), not only a
/// message that can be rated.
pub fn message_of(
    tracker: &NudgeFeedbackTracker,
    req: &GiveFeedback,
    now: DateTime<Utc>,
    any_source: bool,
) -> Result<FeedbackRecord, GiveError> {
    match (req.nudge_id.as_deref().map(str::trim).filter(|s| !s.is_empty()), req.session.as_deref()) {
        (Some(id), _) if any_source => Ok(tracker.dispatched_message(id)?),
        (Some(id), _) => Ok(tracker.rated_message(id)?),
        (None, Some(session)) => match tracker.latest_undecided(session, now)? {
            Some(r) if any_source || r.source.is_rated() => Ok(r),
            Some(r) => Err(FeedbackError::CronId(r.nudge_id).into()),
            None => Err(GiveError::NothingInSession(session.to_owned())),
        },
        (None, None) => Err(GiveError::NoTarget),
    }
}
