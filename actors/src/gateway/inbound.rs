//! `POST /inbound {"chat_id", "text", "channel"?}` (the webhook channel, behind the secret):
//! a message from the user, answered with the reply of its USER turn. The reply is the HTTP
//! answer only (the caller posted it and reads the answer; it is not sent through an outlet
//! too), and a turn that failed is an error status with the reason, never a 200.

use super::app::{error, unanswered, Shared};
use super::secret::refused;
use super::turn::{user_turn, Heard, NotHeard, ReplyTo};
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde::Deserialize;
use serde_json::json;
use std::sync::Arc;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Inbound {
    chat_id: String,
    text: String,
    #[serde(default = "webhook")]
    channel: String,
}

fn webhook() -> String {
    "webhook".into()
}

pub(super) async fn inbound(State(g): State<Arc<Shared>>, headers: HeaderMap, body: Bytes) -> Response {
    if let Some(r) = refused(&g, &headers) {
        return r;
    }
    let msg: Inbound = match serde_json::from_slice(&body) {
        Ok(m) => m,
        Err(e) => return error(StatusCode::BAD_REQUEST, format!("body must be {{\"chat_id\", \"text\"}} JSON: {e}")),
    };
    if msg.text.trim().is_empty() || msg.chat_id.trim().is_empty() {
        return error(StatusCode::BAD_REQUEST, "chat_id and text must not be empty");
    }
    match user_turn(g.supervisor.as_ref(), (&msg.channel, &msg.chat_id), &msg.text, ReplyTo::Caller).await {
        Ok(Heard::Replied(text)) => (StatusCode::OK, Json(json!({"reply": text}))).into_response(),
        Ok(Heard::Failed(message)) => error(StatusCode::UNPROCESSABLE_ENTITY, message),
        // A name no file can hold is refused here, not answered and then lost.
        Err(e @ NotHeard::Chat(_)) => error(StatusCode::BAD_REQUEST, e.to_string()),
        Err(NotHeard::Supervisor(e)) => unanswered(e),
        Err(e @ NotHeard::Unexpected(_)) => error(StatusCode::BAD_GATEWAY, e.to_string()),
    }
}
