//! The skip cache and the last decision shared through the data dir: two one-shot engines
//! in turn (as two `raven tick` runs), against a server on 127.0.0.1, on the manual clock.

use super::*;
use crate::clock::ManualClock;
use crate::sentinel::Tick;
use chrono::{Duration as D, TimeZone, Utc};
use serde_json::json;
use wiremock::matchers::method;
use wiremock::{Mock, MockServer, ResponseTemplate};

fn skip_reply() -> serde_json::Value {
    let args = json!({"action": "skip", "reason": "nothing now", "proactivity_score": 0.1});
    json!({"choices": [{"finish_reason": "tool_calls", "message": {"role": "assistant", "content": null,
        "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "planner_decision", "arguments": args.to_string()}}]}}]})
}

/// One tick of a fresh engine on `tmp` at `at`, as a one-shot `raven tick` runs it.
async fn one_shot_tick(server: &MockServer, tmp: &tempfile::TempDir, at: chrono::DateTime<Utc>) -> String {
    let mut config = RavenConfig::default();
    config.llm.base_url = format!("{}/v1", server.uri());
    config.discovery.enabled = false;
    let clock = ManualClock::new(at);
    let engine = Engine::start(&DataDir::new(tmp.path()), &config, clock.shared()).unwrap();
    engine.runner.call_async(Tick).await.unwrap().route.to_string()
}

#[actix_rt::test]
async fn a_second_one_shot_tick_on_an_unchanged_context_makes_no_planner_request() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(200).set_body_json(skip_reply()))
        .mount(&server)
        .await;
    let tmp = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(tmp.path().join("workspace")).unwrap();
    std::fs::write(tmp.path().join("workspace/MEMORY.md"), "- likes tea\n").unwrap();
    let at = Utc.with_ymd_and_hms(2026, 3, 2, 10, 0, 0).unwrap();

    assert_eq!(one_shot_tick(&server, &tmp, at).await, "skip");
    assert_eq!(server.received_requests().await.unwrap().len(), 1);
    let second = one_shot_tick(&server, &tmp, at + D::minutes(30)).await;

    assert_eq!(second, "fast_path_skip");
    assert_eq!(server.received_requests().await.unwrap().len(), 1, "the second tick asked no one");
    std::fs::write(tmp.path().join("workspace/MEMORY.md"), "- likes tea\n- [ ] call mum\n").unwrap();
    one_shot_tick(&server, &tmp, at + D::minutes(60)).await;
    assert_eq!(server.received_requests().await.unwrap().len(), 2, "a changed context is asked about");
}
