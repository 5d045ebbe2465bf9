//! The shared secret every POST but a tap carries in `x-raven-secret`, compared in constant
//! time.

use super::app::{error, Shared};
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;

const SECRET_HEADER: &str = "x-raven-secret";

/// The shared secret check: `None` when the request may go on, else the answer (503 when no
/// secret is configured, 401 when it is missing or wrong).
pub(super) fn refused(g: &Shared, headers: &HeaderMap) -> Option<Response> {
    let Some(secret) = &g.secret else {
        return Some(error(
            StatusCode::SERVICE_UNAVAILABLE,
            "no shared secret is configured; set the gateway's secret_env variable",
        ));
    };
    let given = headers.get(SECRET_HEADER).map(|v| v.as_bytes()).unwrap_or_default();
    (!same_secret(given, secret.as_bytes())).then(|| error(StatusCode::UNAUTHORIZED, "wrong or missing x-raven-secret"))
}

/// Compares without an early exit, so the time taken does not tell how much matched.
fn same_secret(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}
