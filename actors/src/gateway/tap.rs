//! `POST /tap/<token>`: a feedback button of a push notification, tapped (not GET: a link
//! previewer fetching it must not record a verdict). The token is a signed, single-use link
//! ([`crate::channels::taps`]) and needs no secret: the verdict it names is recorded once; a
//! second tap, a forged or an expired link is refused.

use super::app::{error, Shared};
use crate::channels::taps::{Tap, TapError};
use crate::feedback::give::GiveFeedback;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde_json::json;
use std::sync::Arc;

pub(super) async fn tap(State(g): State<Arc<Shared>>, Path(token): Path<String>) -> Response {
    let now = chrono::Utc::now();
    let record = |tap: &Tap| {
        let req =
            GiveFeedback { nudge_id: Some(tap.nudge.clone()), verdict: tap.verdict.clone(), ..Default::default() };
        g.feedback.give(&req, now)
    };
    match g.taps.take(&token, now, record) {
        Ok(given) => (StatusCode::OK, Json(json!({"recorded": given}))).into_response(),
        Err(e @ TapError::Forged) => error(StatusCode::FORBIDDEN, e.to_string()),
        Err(e @ (TapError::Used | TapError::Expired)) => error(StatusCode::GONE, e.to_string()),
        Err(e @ TapError::NotRecorded(_)) => error(StatusCode::UNPROCESSABLE_ENTITY, e.to_string()),
        Err(e @ TapError::Io(_)) => error(StatusCode::INTERNAL_SERVER_ERROR, e.to_string()),
    }
}
