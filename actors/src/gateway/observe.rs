//! What a monitor reads: `GET /metrics`, the supervisor's metrics in the OpenMetrics text
//! format (behind the secret unless `gateway.metrics_public`), and `GET /health` (no secret):
//! this gateway answers, and whether its supervisor does.

use super::app::{error, unanswered, Shared};
use super::secret::refused;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use raven_proto::control::{ControlRequest, ControlResponse};
use serde_json::json;
use std::sync::Arc;

pub(super) async fn metrics(State(g): State<Arc<Shared>>, headers: HeaderMap) -> Response {
    if let Some(r) = (!g.metrics_public).then(|| refused(&g, &headers)).flatten() {
        return r;
    }
    match g.supervisor.ask(ControlRequest::Metrics).await {
        Ok(ControlResponse::Metrics { text }) => {
            ([("content-type", "application/openmetrics-text; version=1.0.0; charset=utf-8")], text).into_response()
        }
        Ok(other) => error(StatusCode::BAD_GATEWAY, format!("unexpected answer: {other:?}")),
        Err(e) => unanswered(e),
    }
}

pub(super) async fn health(State(g): State<Arc<Shared>>) -> Response {
    let supervisor = matches!(g.supervisor.ask(ControlRequest::Ping).await, Ok(ControlResponse::Pong { .. }));
    let status = if supervisor { StatusCode::OK } else { StatusCode::SERVICE_UNAVAILABLE };
    (status, Json(json!({"gateway": "ok", "supervisor": if supervisor { "ok" } else { "unreachable" }})))
        .into_response()
}
