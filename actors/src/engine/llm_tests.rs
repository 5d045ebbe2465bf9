//! The configured provider's retries and breaker through the wired engine, against a server on
//! 127.0.0.1, on the manual clock: a retry's wait moves the clock instead of sleeping.

use super::*;
use crate::clock::{Clock, ManualClock};
use crate::sentinel::Tick;
use chrono::{Duration as D, TimeZone, Utc};
use raven_proto::control::{ControlRequest, ControlResponse};
use raven_proto::Action;
use serde_json::json;
use wiremock::matchers::method;
use wiremock::{Mock, MockServer, ResponseTemplate};

fn nudge_reply() -> serde_json::Value {
    let args = json!({"action": "nudge", "reason": "r", "proactivity_score": 0.9, "priority": "low",
        "nudge_message": "Drink a glass of water"});
    json!({"choices": [{"finish_reason": "tool_calls", "message": {"role": "assistant", "content": null,
        "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "planner_decision", "arguments": args.to_string()}}]}}]})
}

/// An engine whose `[llm]` points at `server`, asking the Planner on every tick (no skip
/// cache, no discovery), at 10:00 on a Monday.
fn engine_against(server: &MockServer, tmp: &tempfile::TempDir) -> (Engine, ManualClock) {
    let dir = DataDir::new(tmp.path());
    let clock = ManualClock::new(Utc.with_ymd_and_hms(2026, 3, 2, 10, 0, 0).unwrap());
    let mut config = RavenConfig::default();
    config.llm.base_url = format!("{}/v1", server.uri());
    config.sentinel.skip_cache_ttl_s = 0;
    config.discovery.enabled = false;
    config.delivery.jsonl_path = "out.jsonl".into();
    config.delivery.default_targets = vec!["jsonl:me".into()];
    (Engine::start(&dir, &config, clock.shared()).unwrap(), clock)
}

async fn requests(server: &MockServer) -> usize {
    server.received_requests().await.unwrap().len()
}

#[actix_rt::test]
async fn a_429_with_retry_after_is_waited_out_on_the_clock_and_the_tick_still_nudges() {
    let server = MockServer::start().await;
    let limited = ResponseTemplate::new(429).insert_header("retry-after", "1").set_body_string("slow down");
    Mock::given(method("POST")).respond_with(limited).up_to_n_times(1).mount(&server).await;
    let ok = ResponseTemplate::new(200).set_body_json(nudge_reply());
    Mock::given(method("POST")).respond_with(ok).mount(&server).await;
    let tmp = tempfile::tempdir().unwrap();
    let (engine, clock) = engine_against(&server, &tmp);

    let before = clock.now();
    let real = std::time::Instant::now();
    let tick = engine.runner.call_async(Tick).await.unwrap();
    assert_eq!(tick.decision.action, Action::Nudge, "{tick:?}");
    assert!(tick.nudge_id.is_some(), "delivered: {tick:?}");
    assert_eq!(requests(&server).await, 2, "the 429, then the retry");
    assert!(clock.now() - before >= D::seconds(1), "Retry-After: 1 waited on the engine's clock");
    assert!(real.elapsed() < std::time::Duration::from_secs(1), "and not in real time");
}

#[actix_rt::test]
async fn five_failures_in_a_row_open_the_breaker_and_ticks_make_no_request_until_it_closes() {
    let server = MockServer::start().await;
    let boom = ResponseTemplate::new(500).set_body_string("boom");
    Mock::given(method("POST")).respond_with(boom).up_to_n_times(6).mount(&server).await;
    let ok = ResponseTemplate::new(200).set_body_json(nudge_reply());
    Mock::given(method("POST")).respond_with(ok).mount(&server).await;
    let tmp = tempfile::tempdir().unwrap();
    let (engine, clock) = engine_against(&server, &tmp);
    let tick = || async { engine.runner.call_async(Tick).await.unwrap() };
    let control = EngineControl::of(&engine);
    let breaker_state = || async {
        match crate::ipc::ControlHandler::handle(&control, ControlRequest::Status).await {
            ControlResponse::Status { llm: Some(h), .. } => h,
            other => panic!("{other:?}"),
        }
    };

    // Three requests (the first and two retries), then two more: the fifth 500 opens it.
    assert_eq!(tick().await.decision.action, Action::Skip);
    assert_eq!(requests(&server).await, 3);
    assert_eq!(tick().await.decision.action, Action::Skip);
    assert_eq!(requests(&server).await, 5, "the retry after the fifth failure is not sent");
    let h = breaker_state().await;
    assert_eq!((h.state.as_str(), h.failures, h.opened), ("open", 5, 1), "{h:?}");
    assert!(h.last_error.unwrap_or_default().contains("HTTP 500"));

    // Down: ticks for the next five minutes skip without a request.
    for _ in 0..4 {
        clock.advance(D::minutes(1));
        let t = tick().await;
        assert!(t.decision.reason.contains("marked down"), "{:?}", t.decision);
    }
    assert_eq!(requests(&server).await, 5);

    // Time is up: one probe; it fails, so it is down again at once.
    clock.advance(D::minutes(2));
    tick().await;
    assert_eq!(requests(&server).await, 6, "one probe, no retry");
    assert_eq!(breaker_state().await.state, "open");
    tick().await;
    assert_eq!(requests(&server).await, 6);

    // The next probe succeeds: closed, and the tick nudges.
    clock.advance(D::minutes(6));
    assert_eq!(tick().await.decision.action, Action::Nudge);
    assert_eq!(requests(&server).await, 7);
    let h = breaker_state().await;
    assert_eq!((h.state.as_str(), h.failures, h.opened), ("closed", 0, 2), "{h:?}");
}
