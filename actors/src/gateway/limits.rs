//! What one client may hold of the gateway: connections, the time to send a request head and
//! then its body, and the body's size. The body's limits are the app's own: it reads the whole
//! body before any handler runs.

use super::app::error;
use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::StatusCode;
use axum::middleware::Next;
use axum::response::Response;
use http_body_util::{BodyExt, LengthLimitError, Limited};
use std::time::Duration;

/// What one client may hold of the gateway.
#[derive(Debug, Clone, Copy)]
pub(super) struct Limits {
    /// Connections open at once; past it the oldest idle one makes room (see
    /// [`super::slots`]).
    pub max_connections: usize,
    /// From a connection's start (or the end of its last answer) to a whole request head.
    pub header_timeout: Duration,
    /// From the head to the whole body.
    pub body_timeout: Duration,
    pub max_body_bytes: usize,
}

/// Reads the whole body within `body_timeout` and `max_body_bytes` before any handler runs:
/// 408 when it is too slow, 413 when it is too large, 400 when it breaks off.
pub(super) async fn read_body_within(State(limits): State<Limits>, request: Request, next: Next) -> Response {
    let (parts, body) = request.into_parts();
    let read = Limited::new(body, limits.max_body_bytes).collect();
    let bytes = match tokio::time::timeout(limits.body_timeout, read).await {
        Ok(Ok(collected)) => collected.to_bytes(),
        Err(_) => {
            let why = format!("the body did not arrive within {} s", limits.body_timeout.as_secs());
            return error(StatusCode::REQUEST_TIMEOUT, why);
        }
        Ok(Err(e)) if e.downcast_ref::<LengthLimitError>().is_some() => {
            let why = format!("the body is over {} bytes", limits.max_body_bytes);
            return error(StatusCode::PAYLOAD_TOO_LARGE, why);
        }
        Ok(Err(e)) => return error(StatusCode::BAD_REQUEST, format!("the body could not be read: {e}")),
    };
    next.run(Request::from_parts(parts, Body::from(bytes))).await
}
