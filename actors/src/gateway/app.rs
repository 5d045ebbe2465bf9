//! The gateway's routes, the state its handlers share, and the JSON shape of every answer
//! that is not a success: `{"error": "…"}`, for an unknown path (404) and a wrong method (405)
//! too.

use super::limits::{read_body_within, Limits};
use super::supervisor::{Supervisor, SupervisorError};
use super::{feedback, inbound, observe, tap};
use crate::channels::taps::TapLinks;
use axum::http::{Method, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use serde_json::json;
use std::sync::Arc;

/// What every handler may reach.
pub(super) struct Shared {
    pub supervisor: Arc<dyn Supervisor>,
    /// The shared secret of every POST but a tap; none configured refuses them all.
    pub secret: Option<String>,
    /// `gateway.metrics_public`: `/metrics` answers without the secret.
    pub metrics_public: bool,
    /// `POST /feedback` and `/tap` write here (the supervisor's next tick, and `raven policy
    /// explain`, read it), and so do the chat channels.
    pub feedback: Arc<super::feedback::Feedback>,
    /// The signed single-use links of push notifications' feedback buttons.
    pub taps: TapLinks,
}

/// The gateway's HTTP app: its routes, each body read within `limits` before any handler runs.
pub(super) fn app(shared: Arc<Shared>, limits: Limits) -> Router {
    Router::new()
        .route("/inbound", post(inbound::inbound))
        .route("/feedback", post(feedback::verdict))
        .route("/tap/{token}", post(tap::tap))
        .route("/metrics", get(observe::metrics))
        .route("/health", get(observe::health))
        .fallback(not_found)
        .method_not_allowed_fallback(method_not_allowed)
        .with_state(shared)
        .layer(axum::middleware::from_fn_with_state(limits, read_body_within))
}

/// An answer that is not a success: `status` with `{"error": message}`.
pub(super) fn error(status: StatusCode, message: impl Into<String>) -> Response {
    (status, Json(json!({"error": message.into()}))).into_response()
}

/// No answer from the supervisor: 503 when none is there, 502 when the request failed on
/// the way.
pub(super) fn unanswered(e: SupervisorError) -> Response {
    match e {
        SupervisorError::Unreachable(e) => {
            error(StatusCode::SERVICE_UNAVAILABLE, format!("the supervisor is not reachable: {e}"))
        }
        SupervisorError::Failed(e) => error(StatusCode::BAD_GATEWAY, e.to_string()),
    }
}

async fn not_found(uri: Uri) -> Response {
    error(StatusCode::NOT_FOUND, format!("no such path: {}", uri.path()))
}

async fn method_not_allowed(method: Method, uri: Uri) -> Response {
    error(StatusCode::METHOD_NOT_ALLOWED, format!("{method} is not served on {}", uri.path()))
}
