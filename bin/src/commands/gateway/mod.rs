//! `raven gateway`: the channels that face the outside, as an HTTP server. `POST /inbound`
//! (the webhook channel) turns a message into a USER turn on the supervisor, over the control
//! socket; `GET /metrics` serves the supervisor's metrics in Prometheus text format. Each
//! request opens its own socket connection, so a restarted supervisor is simply found again.
//! It also hosts the outbound outlets (jsonl, webhook) and the chat channels of `[channels.*]`:
//! the supervisor's DeliveryHub hands it each delivery for them over one long-lived connection,
//! re-made when the supervisor restarts. `POST /tap/<token>` takes a push notification's
//! signed feedback button.

mod channels;
mod outlets;
mod serve;
mod tap;

use super::load_config;
use crate::error::CliError;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use raven_actors::data_dir::DataDir;
use raven_actors::ipc::ControlClient;
use raven_proto::control::{ControlRequest, ControlResponse};
use raven_proto::TurnRequest;
use serde::Deserialize;
use serde_json::json;
use std::path::PathBuf;
use std::sync::Arc;

pub const SECRET_HEADER: &str = "x-raven-secret";

/// Set by `raven up` on the gateway it starts (to its pid, for the log).
pub const SUPERVISED: &str = "RAVEN_GATEWAY_SUPERVISED";

struct Gateway {
    socket: PathBuf,
    secret: Option<String>,
    /// `gateway.metrics_public`: `/metrics` answers without the secret.
    metrics_public: bool,
    /// `POST /feedback` writes here (the supervisor's next tick, and `raven policy explain`,
    /// read it).
    feedback: Arc<raven_actors::feedback::NudgeFeedbackTracker>,
    /// The signed single-use links of push notifications' feedback buttons.
    taps: raven_actors::channels::taps::TapLinks,
}

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

fn error(status: StatusCode, message: impl Into<String>) -> Response {
    (status, Json(json!({"error": message.into()}))).into_response()
}

/// Compares without an early exit, so the time taken does not tell how much matched.
fn same_secret(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

async fn ask(socket: &std::path::Path, req: ControlRequest) -> Result<ControlResponse, Response> {
    let mut c = ControlClient::connect(socket)
        .await
        .map_err(|e| error(StatusCode::SERVICE_UNAVAILABLE, format!("the supervisor is not reachable: {e}")))?;
    c.request(req).await.map_err(|e| error(StatusCode::BAD_GATEWAY, e.to_string()))
}

/// The shared secret check of every POST: `None` when the request may go on.
fn refused(g: &Gateway, headers: &HeaderMap) -> Option<Response> {
    let Some(secret) = &g.secret else {
        return Some(error(
            StatusCode::SERVICE_UNAVAILABLE,
            "no shared secret is configured; set the gateway's secret_env variable",
        ));
    };
    let given = headers.get(SECRET_HEADER).map(|v| v.as_bytes()).unwrap_or_default();
    (!same_secret(given, secret.as_bytes())).then(|| error(StatusCode::UNAUTHORIZED, "wrong or missing x-raven-secret"))
}

/// `POST /feedback {"nudge_id"?, "session"?, "verdict", "reason"?}`: a verdict on one
/// proactive message, by id or as the latest of a conversation.
async fn feedback_verdict(State(g): State<Arc<Gateway>>, headers: HeaderMap, body: Bytes) -> Response {
    use raven_actors::feedback::give::{give, GiveFeedback};
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
        Err(
            e @ raven_actors::feedback::give::GiveError::Feedback(raven_actors::feedback::FeedbackError::Io { .. }),
        ) => error(StatusCode::INTERNAL_SERVER_ERROR, e.to_string()),
        Err(e) => error(StatusCode::UNPROCESSABLE_ENTITY, e.to_string()),
    }
}

async fn inbound(State(g): State<Arc<Gateway>>, headers: HeaderMap, body: Bytes) -> Response {
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
    // One conversation, one file: a name no file can hold is refused here, not answered and
    // then lost.
    if let Err(e) = raven_actors::sessions::file_name::validate(&msg.channel, &msg.chat_id) {
        return error(StatusCode::BAD_REQUEST, e.to_string());
    }
    let turn = inbound_turn(msg.channel, msg.chat_id, msg.text);
    match ask(&g.socket, ControlRequest::Inbound { turn, deliver: true }).await {
        Ok(ControlResponse::Reply { text }) => (StatusCode::OK, Json(json!({"reply": text}))).into_response(),
        Ok(ControlResponse::Error { message }) => error(StatusCode::UNPROCESSABLE_ENTITY, message),
        Ok(other) => error(StatusCode::BAD_GATEWAY, format!("unexpected answer: {other:?}")),
        Err(r) => r,
    }
}

/// The USER turn of a message that came in through the gateway.
pub(super) fn inbound_turn(
    channel: impl Into<String>,
    chat_id: impl Into<String>,
    text: impl Into<String>,
) -> TurnRequest {
    let now = chrono::Utc::now();
    let id = format!("in-{}-{}", std::process::id(), now.timestamp_nanos_opt().unwrap_or_default());
    TurnRequest::from_user(id, channel, chat_id, text, now)
}

async fn metrics(State(g): State<Arc<Gateway>>, headers: HeaderMap) -> Response {
    if let Some(r) = (!g.metrics_public).then(|| refused(&g, &headers)).flatten() {
        return r;
    }
    match ask(&g.socket, ControlRequest::Metrics).await {
        Ok(ControlResponse::Metrics { text }) => {
            ([("content-type", "application/openmetrics-text; version=1.0.0; charset=utf-8")], text).into_response()
        }
        Ok(other) => error(StatusCode::BAD_GATEWAY, format!("unexpected answer: {other:?}")),
        Err(r) => r,
    }
}

/// `GET /health` (no secret): this gateway answers, and whether its supervisor does.
async fn health(State(g): State<Arc<Gateway>>) -> Response {
    let supervisor = matches!(ask(&g.socket, ControlRequest::Ping).await, Ok(ControlResponse::Pong { .. }));
    let status = if supervisor { StatusCode::OK } else { StatusCode::SERVICE_UNAVAILABLE };
    (status, Json(json!({"gateway": "ok", "supervisor": if supervisor { "ok" } else { "unreachable" }})))
        .into_response()
}

async fn not_found(uri: axum::http::Uri) -> Response {
    error(StatusCode::NOT_FOUND, format!("no such path: {}", uri.path()))
}

async fn method_not_allowed(method: axum::http::Method, uri: axum::http::Uri) -> Response {
    error(StatusCode::METHOD_NOT_ALLOWED, format!("{method} is not served on {}", uri.path()))
}

/// Leaves once no supervisor has been there for `timeout`. Absent means the control socket is
/// gone or refuses connections; a connection that fails otherwise (this process out of
/// descriptors under a flood, a supervisor at its connection cap) says nothing about it.
async fn leave_when_orphaned(socket: PathBuf, timeout: std::time::Duration) {
    let mut seen = std::time::Instant::now();
    loop {
        if !supervisor_absent(&socket).await {
            seen = std::time::Instant::now();
        } else if seen.elapsed() > timeout {
            super::note("raven gateway: no supervisor for too long; exiting");
            std::process::exit(0);
        }
        actix_rt::time::sleep(std::time::Duration::from_millis(500)).await;
    }
}

async fn supervisor_absent(socket: &std::path::Path) -> bool {
    use std::io::ErrorKind::{ConnectionRefused, NotFound};
    match ControlClient::connect(socket).await {
        Ok(_) => false,
        Err(raven_actors::ipc::IpcError::Io { source, .. }) => matches!(source.kind(), NotFound | ConnectionRefused),
        Err(_) => false,
    }
}

pub fn run(dir: &DataDir) -> Result<(), CliError> {
    let config = load_config(dir)?;
    let g = &config.gateway;
    let secret = std::env::var(&g.secret_env).ok().filter(|s| !s.is_empty());
    if secret.is_none() {
        tracing::warn!("no {} set: POST /inbound and /feedback answer 503 until one is", g.secret_env);
    }
    let feedback = Arc::new(raven_actors::feedback::NudgeFeedbackTracker::new(
        dir.feedback(),
        config.feedback.clone(),
        config.general.timezone,
    ));
    let taps = raven_actors::channels::taps::TapLinks::open(dir)?;
    let chat_feedback = feedback.clone();
    let state = Arc::new(Gateway { socket: dir.socket(), secret, metrics_public: g.metrics_public, feedback, taps });
    let app = Router::new()
        .route("/inbound", post(inbound))
        .route("/feedback", post(feedback_verdict))
        .route("/tap/{token}", post(tap::tap))
        .route("/metrics", get(metrics))
        .route("/health", get(health))
        .fallback(not_found)
        .method_not_allowed_fallback(method_not_allowed)
        .with_state(state);
    let limits = serve::Limits {
        max_connections: g.max_connections,
        header_timeout: std::time::Duration::from_secs(g.header_timeout_s),
        body_timeout: std::time::Duration::from_secs(g.body_timeout_s),
        max_body_bytes: g.max_body_bytes,
    };
    let listen = g.listen.clone();
    let orphan_timeout_s = g.orphan_timeout_s;
    let addr_file = dir.gateway_addr();
    actix_rt::System::new().block_on(async move {
        // Exit code 3 (crate::error::CANNOT_LISTEN): its supervisor tries again slowly.
        let listening = tokio::net::TcpListener::bind(&listen).await;
        let listener = listening.map_err(|source| CliError::CannotListen { listen, source })?;
        let bound = listener.local_addr().map_err(CliError::Io)?;
        // "<address> <pid>": where to reach it, and which process it is.
        let line = format!("{bound} {}", std::process::id());
        raven_actors::store::write_atomic(&addr_file, line.as_bytes()).map_err(CliError::Io)?;
        super::note(format!("raven gateway: listening on http://{bound}"));
        // Started by a supervisor: outlive its restart (the next one adopts this process and
        // every connection is made anew), but not its absence: with no supervisor answering
        // for `orphan_timeout_s`, leave, so no orphan holds the port for ever.
        if std::env::var_os(SUPERVISED).is_some() {
            let timeout = std::time::Duration::from_secs(orphan_timeout_s.max(1));
            actix_rt::spawn(leave_when_orphaned(dir.socket(), timeout));
        }
        let chats = channels::start(dir, &config, chat_feedback);
        let hosted = outlets::Hosted::of(dir, &config, chats)?;
        let _watch = hosted.follow_config(dir);
        if !hosted.is_empty() {
            actix_rt::spawn(outlets::host(dir.socket(), hosted));
        }
        serve::serve(listener, app, limits).await;
        Ok(())
    })
}
