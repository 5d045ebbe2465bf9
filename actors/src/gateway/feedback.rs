//! `POST /feedback {"nudge_id"?, "session"?, "verdict", "reason"?}` (behind the secret): a
//! verdict on one proactive message, by id or as the latest of a conversation.

use super::app::{error, Shared};
use super::secret::refused;
use crate::feedback::give::{give, GiveError, GiveFeedback};
use crate::feedback::FeedbackError;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde_json::json;
use std::sync::Arc;

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
    match give(&g.feedback, &req, chrono::Utc::now()) {
        Ok(given) => (StatusCode::OK, Json(json!({"recorded": given}))).into_response(),
        Err(e) if e.is_not_found() => error(StatusCode::NOT_FOUND, e.to_string()),
        Err(e @ GiveError::Feedback(FeedbackError::Io { .. })) => {
            error(StatusCode::INTERNAL_SERVER_ERROR, e.to_string())
        }
        Err(e) => error(StatusCode::UNPROCESSABLE_ENTITY, e.to_string()),
    }
}
