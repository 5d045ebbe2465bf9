//! The gateway's accept loop: a bounded number of connections, each with a deadline for its
//! request head and one for its body, so a client that sends half a request (or thousands of
//! them) holds a slot for a few seconds and never starves the others or the process's
//! descriptors.

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::StatusCode;
use axum::middleware::Next;
use axum::response::Response;
use axum::Router;
use http_body_util::{BodyExt, LengthLimitError, Limited};
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use std::sync::Arc;
use std::time::Duration;
use tokio::net::TcpListener;
use tokio::sync::Semaphore;

/// What one client may hold of the gateway.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Connections open at once; past it a new one is closed at once.
    pub max_connections: usize,
    /// From a connection's start (or the end of its last answer) to a whole request head.
    pub header_timeout: Duration,
    /// From the head to the whole body.
    pub body_timeout: Duration,
    pub max_body_bytes: usize,
}

/// Serves `app` on `listener` within `limits`, until the listener fails for good.
pub async fn serve(listener: TcpListener, app: Router, limits: Limits) {
    let app = app.layer(axum::middleware::from_fn_with_state(limits, read_body_within));
    let slots = Arc::new(Semaphore::new(limits.max_connections.max(1)));
    loop {
        let stream = match listener.accept().await {
            Ok((stream, _)) => stream,
            Err(e) => {
                // Out of descriptors, say: wait for some to close rather than spin.
                tracing::warn!("gateway: accept failed: {e}");
                actix_rt::time::sleep(Duration::from_millis(50)).await;
                continue;
            }
        };
        let Ok(slot) = slots.clone().try_acquire_owned() else {
            tracing::debug!("gateway: {} connections open; one more closed", limits.max_connections);
            continue;
        };
        let service = TowerToHyperService::new(app.clone());
        actix_rt::spawn(async move {
            let _slot = slot;
            let served = hyper::server::conn::http1::Builder::new()
                .timer(TokioTimer::new())
                .header_read_timeout(limits.header_timeout)
                .serve_connection(TokioIo::new(stream), service)
                .await;
            if let Err(e) = served {
                tracing::debug!("gateway: connection ended: {e}");
            }
        });
    }
}

/// Reads the whole body within `body_timeout` and `max_body_bytes` before any handler runs:
/// 408 when it is too slow, 413 when it is too large, 400 when it breaks off.
async fn read_body_within(State(limits): State<Limits>, request: Request, next: Next) -> Response {
    let (parts, body) = request.into_parts();
    let read = Limited::new(body, limits.max_body_bytes).collect();
    let bytes = match tokio::time::timeout(limits.body_timeout, read).await {
        Ok(Ok(collected)) => collected.to_bytes(),
        Err(_) => {
            let why = format!("the body did not arrive within {} s", limits.body_timeout.as_secs());
            return super::error(StatusCode::REQUEST_TIMEOUT, why);
        }
        Ok(Err(e)) if e.downcast_ref::<LengthLimitError>().is_some() => {
            let why = format!("the body is over {} bytes", limits.max_body_bytes);
            return super::error(StatusCode::PAYLOAD_TOO_LARGE, why);
        }
        Ok(Err(e)) => return super::error(StatusCode::BAD_REQUEST, format!("the body could not be read: {e}")),
    };
    next.run(Request::from_parts(parts, Body::from(bytes))).await
}
