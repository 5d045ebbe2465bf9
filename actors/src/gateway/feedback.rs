//! `POST /feedback {"nudge_id"?, "session"?, "verdict", "reason"?}` (behind the secret): a
//! verdict on one proactive message, by id or as the latest of a conversation.

use super::app::{error, Shared};
use super::secret::refused;
use crate::cron::later::Verdicts;
use crate::feedback::give::{GiveError, GiveFeedback, Given};
use crate::feedback::{FeedbackError, NudgeFeedbackTracker};
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde_json::json;
use std::sync::Arc;

/// Where the gateway's verdicts go (`POST /feedback`, `/tap`, the chat channels' buttons and
/// reactions): the feedback log, and the user's jobs for a `later`.
pub(crate) struct Feedback {
    pub tracker: NudgeFeedbackTracker,
    pub verdicts: Verdicts,
}

impl Feedback {
    pub fn give(&self, req: &GiveFeedback, now: chrono::DateTime<chrono::Utc>) -> Result<Given, GiveError> {
        self.verdicts.give(&self.tracker, req, now)
    }
}

pub(super) async fn verdict(State(g): State<Arc<Shared>>, headers: HeaderMap, body: Bytes) -> Response {
    if let Some(r) = refused(&g, &headers) {
        return r;
    }
    let req: GiveFeedback = match serde_json::from_slice(&body) {
        Ok(r) => r,
        Err(e) => {
            return error(
                StatusCode::BAD_REQUEST,
                format!("body must be {{\"nudge_id\"?, \"session\"?, \"verdict\", \"reason\"?}} JSON: {e}"),
            )
        }
    };
    match g.feedback.give(&req, chrono::Utc::now()) {
        Ok(given) => (StatusCode::OK, Json(json!({"recorded": given}))).into_response(),
        Err(e) if e.is_not_found() => error(StatusCode::NOT_FOUND, e.to_string()),
        Err(e @ GiveError::Feedback(FeedbackError::Io { .. })) => {
            error(StatusCode::INTERNAL_SERVER_ERROR, e.to_string())
        }
        Err(e) => error(StatusCode::UNPROCESSABLE_ENTITY, e.to_string()),
    }
}
