//! `GET|POST /tap/<token>`: a feedback button of a push notification, tapped. The token is a
//! signed, single-use link ([`raven_actors::channels::taps`]) and needs no secret: the verdict
//! it names is recorded once; a second tap, a forged or an expired link is refused.

use super::{error, Gateway};
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use raven_actors::channels::taps::TapError;
use raven_actors::feedback::give::{give, GiveFeedback};
use serde_json::json;
use std::sync::Arc;

pub async fn tap(State(g): State<Arc<Gateway>>, Path(token): Path<String>) -> Response {
    let now = chrono::Utc::now();
    let tap = match g.taps.take(&token, now) {
        Ok(t) => t,
        Err(e @ TapError::Forged) => return error(StatusCode::FORBIDDEN, e.to_string()),
        Err(e @ (TapError::Used | TapError::Expired)) => return error(StatusCode::GONE, e.to_string()),
        Err(e @ TapError::Io(_)) => return error(StatusCode::INTERNAL_SERVER_ERROR, e.to_string()),
    };
    let req = GiveFeedback { nudge_id: Some(tap.nudge), verdict: tap.verdict, ..Default::default() };
    match give(&g.feedback, &req, now) {
        Ok(given) => (StatusCode::OK, Json(json!({"recorded": given}))).into_response(),
        Err(e) if e.is_not_found() => error(StatusCode::NOT_FOUND, e.to_string()),
        Err(e) => error(StatusCode::UNPROCESSABLE_ENTITY, e.to_string()),
    }
}
