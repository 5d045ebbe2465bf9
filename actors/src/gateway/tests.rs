//! The gateway's HTTP answers, in-process: the app against a fake supervisor. Connection
//! handling (the header timeout, the connection cap) is hyper's and is covered by the e2e
//! tests that run the real process.

use super::app::{app, Shared};
use super::channels::GatewayInbox;
use super::limits::Limits;
use super::supervisor::{Supervisor, SupervisorError};
use crate::channels::health::HealthBoard;
use crate::channels::taps::TapLinks;
use crate::channels::{ChannelError, Inbox};
use crate::data_dir::DataDir;
use crate::feedback::{Dispatch, NudgeFeedbackTracker, Source};
use crate::ipc::IpcError;
use axum::body::{Body, Bytes};
use axum::http::{Request, StatusCode};
use axum::Router;
use futures_util::future::BoxFuture;
use raven_proto::control::{ControlRequest, ControlResponse};
use raven_proto::{Origin, Priority};
use serde_json::{json, Value};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tower::ServiceExt;

const SECRET: &str = "s3cret";

/// A supervisor that answers with `answer` and keeps what it was asked.
struct Fake {
    answer: fn(&ControlRequest) -> Result<ControlResponse, SupervisorError>,
    asked: Mutex<Vec<ControlRequest>>,
}

impl Supervisor for Fake {
    fn ask(&self, request: ControlRequest) -> BoxFuture<'_, Result<ControlResponse, SupervisorError>> {
        let answer = (self.answer)(&request);
        self.asked.lock().unwrap().push(request);
        Box::pin(async move { answer })
    }
}

impl Fake {
    fn asked(&self) -> Vec<ControlRequest> {
        self.asked.lock().unwrap().clone()
    }
}

/// A supervisor that is there: a turn's reply echoes the message.
fn running(request: &ControlRequest) -> Result<ControlResponse, SupervisorError> {
    Ok(match request {
        ControlRequest::Inbound { turn, .. } => {
            ControlResponse::Reply { text: Some(format!("heard: {}", turn.content)) }
        }
        ControlRequest::Metrics => ControlResponse::Metrics { text: "raven_up 1\n# EOF\n".into() },
        ControlRequest::Ping => ControlResponse::Pong { pid: 7 },
        _ => ControlResponse::Ack,
    })
}

fn gone() -> IpcError {
    IpcError::Io { path: "/d/raven.sock".into(), source: std::io::Error::from(std::io::ErrorKind::NotFound) }
}

fn unreachable(_: &ControlRequest) -> Result<ControlResponse, SupervisorError> {
    Err(SupervisorError::Unreachable(gone()))
}

fn broken_off(_: &ControlRequest) -> Result<ControlResponse, SupervisorError> {
    Err(SupervisorError::Failed(IpcError::Protocol { path: "/d/raven.sock".into(), message: "closed".into() }))
}

fn failing_turns(_: &ControlRequest) -> Result<ControlResponse, SupervisorError> {
    Ok(ControlResponse::Error { message: "the turn failed: no model".into() })
}

struct Fixture {
    _tmp: tempfile::TempDir,
    dir: DataDir,
    fake: Arc<Fake>,
    shared: Arc<Shared>,
    app: Router,
}

fn limits() -> Limits {
    Limits {
        max_connections: 4,
        header_timeout: Duration::from_secs(5),
        body_timeout: Duration::from_secs(10),
        max_body_bytes: 1024,
    }
}

fn fixture_with(
    answer: fn(&ControlRequest) -> Result<ControlResponse, SupervisorError>,
    secret: Option<&str>,
    metrics_public: bool,
) -> Fixture {
    let tmp = tempfile::tempdir().unwrap();
    let dir = DataDir::new(tmp.path());
    let fake = Arc::new(Fake { answer, asked: Mutex::default() });
    let tracker = NudgeFeedbackTracker::new(dir.feedback(), Default::default(), chrono_tz::UTC);
    let verdicts = crate::cron::later::Verdicts::of(&dir, &Default::default());
    let feedback = Arc::new(super::feedback::Feedback { tracker, verdicts });
    let shared = Arc::new(Shared {
        supervisor: fake.clone(),
        secret: secret.map(str::to_owned),
        metrics_public,
        feedback,
        taps: TapLinks::open(&dir).unwrap(),
    });
    let app = app(shared.clone(), limits());
    Fixture { _tmp: tmp, dir, fake, shared, app }
}

fn fixture(answer: fn(&ControlRequest) -> Result<ControlResponse, SupervisorError>) -> Fixture {
    fixture_with(answer, Some(SECRET), false)
}

fn request(method: &str, path: &str, secret: Option<&str>, body: impl Into<Body>) -> Request<Body> {
    let mut r = Request::builder().method(method).uri(path).header("content-type", "application/json");
    if let Some(s) = secret {
        r = r.header("x-raven-secret", s);
    }
    r.body(body.into()).unwrap()
}

fn post(path: &str, body: Value) -> Request<Body> {
    request("POST", path, Some(SECRET), body.to_string())
}

/// The status, and the body as JSON (`Null` when it is not JSON).
async fn call(app: &Router, request: Request<Body>) -> (StatusCode, Value) {
    let (status, body) = call_text(app, request).await;
    (status, serde_json::from_str(&body).unwrap_or(Value::Null))
}

async fn call_text(app: &Router, request: Request<Body>) -> (StatusCode, String) {
    let response = app.clone().oneshot(request).await.unwrap();
    let status = response.status();
    let body = axum::body::to_bytes(response.into_body(), usize::MAX).await.unwrap();
    (status, String::from_utf8_lossy(&body).into_owned())
}

fn is_error(body: &Value) -> bool {
    body["error"].is_string()
}

#[tokio::test]
async fn a_missing_or_wrong_secret_is_401_and_asks_nothing() {
    let f = fixture(running);
    let hello = json!({"chat_id": "alice", "text": "hi"}).to_string();
    for secret in [None, Some("wrong"), Some("s3cre")] {
        for path in ["/inbound", "/feedback"] {
            let (status, body) = call(&f.app, request("POST", path, secret, hello.clone())).await;
            assert_eq!(status, StatusCode::UNAUTHORIZED, "{path} with {secret:?}: {body}");
            assert!(is_error(&body), "{body}");
        }
    }
    assert!(f.fake.asked().is_empty());
}

#[tokio::test]
async fn with_no_secret_configured_every_post_is_503() {
    let f = fixture_with(running, None, false);
    let (status, body) = call(&f.app, post("/inbound", json!({"chat_id": "alice", "text": "hi"}))).await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE);
    assert!(body["error"].as_str().unwrap().contains("no shared secret"), "{body}");
    assert!(f.fake.asked().is_empty());
}

#[tokio::test]
async fn an_inbound_message_is_a_user_turn_answered_with_its_reply() {
    let f = fixture(running);
    let (status, body) = call(&f.app, post("/inbound", json!({"chat_id": "alice", "text": "hello"}))).await;
    assert_eq!((status, body), (StatusCode::OK, json!({"reply": "heard: hello"})));
    // The reply is the HTTP answer only: it is not delivered through the channel too.
    let [ControlRequest::Inbound { turn, deliver: false }] = <[_; 1]>::try_from(f.fake.asked()).unwrap() else {
        panic!("one turn answered to the caller only: {:?}", f.fake.asked())
    };
    assert_eq!((turn.origin, turn.channel.as_str(), turn.chat_id.as_str()), (Origin::User, "webhook", "alice"));
    let (status, _) = call(&f.app, post("/inbound", json!({"chat_id": "7", "text": "x", "channel": "telegram"}))).await;
    assert_eq!(status, StatusCode::OK);
}

#[tokio::test]
async fn a_malformed_inbound_message_is_400_and_asks_nothing() {
    let f = fixture(running);
    let bad = [
        request("POST", "/inbound", Some(SECRET), "{not json"),
        post("/inbound", json!({"chat_id": "alice", "text": "hi", "priority": "high"})),
        post("/inbound", json!({"chat_id": "alice"})),
        post("/inbound", json!({"chat_id": " ", "text": "hi"})),
        post("/inbound", json!({"chat_id": "alice", "text": ""})),
        post("/inbound", json!({"chat_id": "a\u{0}b", "text": "hi"})),
    ];
    for r in bad {
        let (status, body) = call(&f.app, r).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
        assert!(is_error(&body), "{body}");
    }
    assert!(f.fake.asked().is_empty());
}

#[tokio::test]
async fn a_failed_turn_is_422_and_a_missing_supervisor_503_or_502() {
    let hello = json!({"chat_id": "alice", "text": "hi"});
    for (answer, expected) in [
        (failing_turns as fn(&_) -> _, StatusCode::UNPROCESSABLE_ENTITY),
        (unreachable, StatusCode::SERVICE_UNAVAILABLE),
        (broken_off, StatusCode::BAD_GATEWAY),
    ] {
        let f = fixture(answer);
        let (status, body) = call(&f.app, post("/inbound", hello.clone())).await;
        assert_eq!(status, expected, "{body}");
        assert!(is_error(&body), "{body}");
    }
    let (_, body) = call(&fixture(unreachable).app, post("/inbound", hello)).await;
    assert!(body["error"].as_str().unwrap().starts_with("the supervisor is not reachable: "), "{body}");
}

#[tokio::test]
async fn an_unknown_path_is_404_and_a_wrong_method_405_both_json() {
    let f = fixture(running);
    let (status, body) = call(&f.app, request("GET", "/nowhere", None, Body::empty())).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert_eq!(body["error"], "no such path: /nowhere");
    let (status, body) = call(&f.app, request("GET", "/inbound", None, Body::empty())).await;
    assert_eq!(status, StatusCode::METHOD_NOT_ALLOWED);
    assert_eq!(body["error"], "GET is not served on /inbound");
    let (status, body) = call(&f.app, request("GET", "/tap/abc", None, Body::empty())).await;
    assert_eq!(status, StatusCode::METHOD_NOT_ALLOWED, "a link previewer records nothing: {body}");
}

#[tokio::test]
async fn a_body_over_the_limit_is_413_before_any_handler() {
    let f = fixture(running);
    let big = format!("{{\"chat_id\": \"alice\", \"text\": \"{}\"}}", "x".repeat(2000));
    for path in ["/inbound", "/nowhere"] {
        let (status, body) = call(&f.app, request("POST", path, Some(SECRET), big.clone())).await;
        assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE);
        assert_eq!(body["error"], "the body is over 1024 bytes");
    }
    assert!(f.fake.asked().is_empty());
}

#[tokio::test(start_paused = true)]
async fn a_body_that_stalls_is_408_after_the_body_timeout() {
    let f = fixture(running);
    use futures_util::StreamExt;
    let stalled = futures_util::stream::once(async { Ok::<_, std::io::Error>(Bytes::from_static(b"{\"chat")) })
        .chain(futures_util::stream::pending());
    let started = tokio::time::Instant::now();
    let (status, body) = call(&f.app, request("POST", "/inbound", Some(SECRET), Body::from_stream(stalled))).await;
    assert_eq!(status, StatusCode::REQUEST_TIMEOUT);
    assert_eq!(body["error"], "the body did not arrive within 10 s");
    assert_eq!(started.elapsed(), Duration::from_secs(10));
    assert!(f.fake.asked().is_empty());
}

/// A rated message `nudge-1` that reached `webhook:alice`.
fn dispatched(f: &Fixture) {
    let d = Dispatch::new("nudge-1", "water", Priority::Low, Source::Sentinel);
    f.shared.feedback.tracker.record_dispatched(&d, Some("webhook:alice"), true, chrono::Utc::now()).unwrap();
}

#[tokio::test]
async fn feedback_records_a_verdict_and_refuses_what_it_cannot_record() {
    let f = fixture(running);
    dispatched(&f);
    let (status, body) = call(&f.app, post("/feedback", json!({"nudge_id": "nudge-1", "verdict": "accepted"}))).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(
        (body["recorded"]["nudge_id"].as_str(), body["recorded"]["topic"].as_str()),
        (Some("nudge-1"), Some("water"))
    );
    let (status, _) = call(&f.app, post("/feedback", json!({"nudge_id": "nobody", "verdict": "accepted"}))).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    let (status, _) = call(&f.app, post("/feedback", json!({"nudge_id": "nudge-1", "verdict": "meh"}))).await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
    let (status, _) = call(&f.app, post("/feedback", json!({"verdict": "accepted", "mood": "good"}))).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert!(f.fake.asked().is_empty(), "feedback is written here, not asked of the supervisor");
}

#[tokio::test]
async fn later_sends_the_message_again_and_says_when_or_why_not() {
    let f = fixture(running);
    dispatched(&f);
    let (status, body) = call(&f.app, post("/feedback", json!({"nudge_id": "nudge-1", "verdict": "later"}))).await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "no webhook is set up to send it again: {body}");
    let d = Dispatch::new("nudge-2", "water", Priority::Low, Source::Sentinel);
    f.shared.feedback.tracker.record_said(&d, Some("cli:local"), true, "Drink some water", chrono::Utc::now()).unwrap();
    let (status, body) = call(&f.app, post("/feedback", json!({"session": "cli:local", "verdict": "later"}))).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let job = body["recorded"]["again_job"].as_str().unwrap().to_owned();
    assert!(
        body["recorded"]["again_at"].is_string()
            && body["recorded"]["undo"].as_str() == Some(&format!("raven cron rm {job}"))
    );
}

#[tokio::test]
async fn a_tap_records_its_verdict_once_and_a_forged_one_never() {
    let f = fixture(running);
    dispatched(&f);
    let path = f.shared.taps.path("nudge-1", "dismissed", chrono::Utc::now() + chrono::Duration::hours(1));
    let (status, body) = call(&f.app, request("POST", &path, None, Body::empty())).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["recorded"]["verdict"], "dismissed");
    let (status, body) = call(&f.app, request("POST", &path, None, Body::empty())).await;
    assert_eq!(status, StatusCode::GONE, "a second tap: {body}");
    let forged = path.replace("dismissed", "accepted");
    let (status, body) = call(&f.app, request("POST", &forged, None, Body::empty())).await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{body}");
    assert!(is_error(&body), "{body}");
}

#[tokio::test]
async fn metrics_are_behind_the_secret_unless_public() {
    let f = fixture(running);
    let (status, _) = call(&f.app, request("GET", "/metrics", None, Body::empty())).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    let response = f.app.clone().oneshot(request("GET", "/metrics", Some(SECRET), Body::empty())).await.unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    assert!(response.headers()["content-type"].to_str().unwrap().starts_with("application/openmetrics-text"));
    let public = fixture_with(running, Some(SECRET), true);
    let (status, text) = call_text(&public.app, request("GET", "/metrics", None, Body::empty())).await;
    assert_eq!((status, text.as_str()), (StatusCode::OK, "raven_up 1\n# EOF\n"));
    let (status, _) = call(&public.app, request("POST", "/inbound", None, "{}")).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED, "public metrics open nothing else");
    let (status, body) = call(&fixture(unreachable).app, request("GET", "/metrics", Some(SECRET), Body::empty())).await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{body}");
}

#[tokio::test]
async fn health_says_whether_the_supervisor_answers() {
    let (status, body) = call(&fixture(running).app, request("GET", "/health", None, Body::empty())).await;
    assert_eq!((status, body), (StatusCode::OK, json!({"gateway": "ok", "supervisor": "ok"})));
    let (status, body) = call(&fixture(unreachable).app, request("GET", "/health", None, Body::empty())).await;
    assert_eq!(
        (status, body),
        (StatusCode::SERVICE_UNAVAILABLE, json!({"gateway": "ok", "supervisor": "unreachable"}))
    );
}

fn inbox(f: &Fixture) -> GatewayInbox {
    GatewayInbox { supervisor: f.fake.clone(), feedback: f.shared.feedback.clone(), health: HealthBoard::new(&f.dir) }
}

#[tokio::test]
async fn a_chat_message_is_the_same_user_turn_as_an_inbound_post() {
    let f = fixture(running);
    inbox(&f).message("telegram", "42", "hello").await.unwrap();
    call(&f.app, post("/inbound", json!({"chat_id": "42", "text": "hello", "channel": "telegram"}))).await;
    let turns: Vec<_> = f
        .fake
        .asked()
        .into_iter()
        .map(|r| match r {
            ControlRequest::Inbound { turn, deliver } => {
                (turn.origin, turn.channel, turn.chat_id, turn.content, deliver)
            }
            other => panic!("{other:?}"),
        })
        .collect();
    // The same turn; only a chat message's reply goes out through its channel.
    let heard = |deliver| (Origin::User, "telegram".to_owned(), "42".to_owned(), "hello".to_owned(), deliver);
    assert_eq!(turns, [heard(true), heard(false)]);
}

#[tokio::test]
async fn a_chat_message_not_heard_is_retried_only_when_the_supervisor_did_not_take_it() {
    let f = fixture(failing_turns);
    inbox(&f).message("telegram", "42", "hello").await.expect("a failed turn was answered there");
    inbox(&f).message("telegram", "a\u{0}b", "hello").await.expect("a chat no file can name is dropped");
    assert_eq!(f.fake.asked().len(), 1);
    let away = fixture(unreachable);
    let e = inbox(&away).message("telegram", "42", "hello").await.unwrap_err();
    assert!(matches!(&e, ChannelError::Inbox(m) if *m == gone().to_string()), "{e:?}");
}

#[tokio::test]
async fn a_chat_message_too_large_for_a_turn_reaches_the_supervisor_cut() {
    let f = fixture(running);
    let huge = "é".repeat(600 * 1024);
    inbox(&f).message("telegram", "42", &huge).await.unwrap();
    let asked: [ControlRequest; 1] = f.fake.asked().try_into().unwrap();
    let [ControlRequest::Inbound { turn, .. }] = asked else { panic!("one turn") };
    assert!(turn.content.len() < 65 * 1024, "{} bytes", turn.content.len());
    assert!(turn.content.starts_with("éé") && turn.content.ends_with("bytes]"), "cut, and says so");
}
