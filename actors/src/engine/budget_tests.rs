//! The prompt budget through the wired engine, against a server on 127.0.0.1, on the manual
//! clock: what a long MEMORY.md leaves of a Planner request, and a discovery endpoint that
//! fails all day.

use super::*;
use crate::clock::ManualClock;
use crate::llm::budget::TokenCounter;
use crate::sentinel::Tick;
use chrono::{Duration as D, TimeZone, Utc};
use serde_json::{json, Value};
use std::sync::{Arc as StdArc, Mutex};
use wiremock::matchers::method;
use wiremock::{Mock, MockServer, ResponseTemplate};

fn skip_reply() -> Value {
    let args = json!({"action": "skip", "reason": "nothing now", "proactivity_score": 0.1});
    json!({"choices": [{"finish_reason": "tool_calls", "message": {"role": "assistant", "content": null,
        "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "planner_decision", "arguments": args.to_string()}}]}}]})
}

fn engine_on(
    server: &MockServer,
    tmp: &tempfile::TempDir,
    at: chrono::DateTime<Utc>,
    edit: impl Fn(&mut RavenConfig),
) -> (Engine, ManualClock) {
    let dir = DataDir::new(tmp.path());
    let clock = ManualClock::new(at);
    let mut config = RavenConfig::default();
    config.llm.base_url = format!("{}/v1", server.uri());
    config.delivery.jsonl_path = "out.jsonl".into();
    edit(&mut config);
    (Engine::start(&dir, &config, clock.shared()).unwrap(), clock)
}

async fn bodies(server: &MockServer) -> Vec<Value> {
    let requests = server.received_requests().await.unwrap();
    requests.iter().map(|r| serde_json::from_slice(&r.body).unwrap()).collect()
}

/// What the body asks the model to read: every message and tool, counted as the model does.
fn prompt_tokens(body: &Value, counter: TokenCounter) -> usize {
    let messages: usize = body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| counter.count(m["content"].as_str().unwrap_or_default()))
        .sum();
    messages + counter.count(&body["tools"].to_string())
}

fn ten_megabytes_of_notes() -> String {
    let mut memory = String::from("## Proactivity preferences\n- max 2 nudges a day, never about chores\n\n## Notes\n");
    let mut i = 0;
    while memory.len() < 10 << 20 {
        memory
            .push_str(&format!("- note {i}: the user mentioned a film they liked, a shop, a friend's birthday idea\n"));
        i += 1;
    }
    memory.push_str("- [ ] Submit the tax return due: 2026-03-02 17:00 !high\n");
    memory
}

#[actix_rt::test]
async fn a_10_mb_memory_gives_a_planner_request_within_the_budget_with_the_due_deadline_and_the_preferences() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(200).set_body_json(skip_reply()))
        .mount(&server)
        .await;
    let tmp = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(tmp.path().join("workspace")).unwrap();
    std::fs::write(tmp.path().join("workspace/MEMORY.md"), ten_megabytes_of_notes()).unwrap();
    let at = Utc.with_ymd_and_hms(2026, 3, 2, 10, 0, 0).unwrap();
    let (engine, _clock) = engine_on(&server, &tmp, at, |c| c.discovery.enabled = false);

    engine.runner.call_async(Tick).await.unwrap();

    let bodies = bodies(&server).await;
    let planner: Vec<&Value> =
        bodies.iter().filter(|b| b["tool_choice"]["function"]["name"] == "planner_decision").collect();
    assert_eq!(planner.len(), 1, "one Planner call");
    let body = planner[0];
    let tokens = prompt_tokens(body, TokenCounter::for_model("gpt-4o-mini"));
    assert!(tokens <= 4_000, "{tokens} tokens");
    let bytes = body.to_string().len();
    assert!(bytes < 40_000, "{bytes} bytes for a 10 MB memory");
    let context = body["messages"][1]["content"].as_str().unwrap();
    assert!(context.contains("Submit the tax return due: 2026-03-02 17:00 !high"), "the due deadline: {context}");
    assert!(context.contains("max 2 nudges a day, never about chores"), "the preferences: {context}");
}

/// The log lines at warn of what runs on this thread while the guard lives.
fn warn_lines() -> (StdArc<Mutex<Vec<u8>>>, tracing::subscriber::DefaultGuard) {
    #[derive(Clone)]
    struct Lines(StdArc<Mutex<Vec<u8>>>);
    impl std::io::Write for Lines {
        fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(b);
            Ok(b.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let buf = StdArc::new(Mutex::new(Vec::new()));
    let lines = Lines(buf.clone());
    let subscriber = tracing_subscriber::fmt()
        .with_max_level(tracing::Level::WARN)
        .with_ansi(false)
        .with_writer(move || lines.clone())
        .finish();
    (buf, tracing::subscriber::set_default(subscriber))
}

#[actix_rt::test]
async fn a_failing_discovery_endpoint_is_tried_at_most_6_times_a_day_each_warned_and_within_the_budget() {
    let server = MockServer::start().await;
    Mock::given(method("POST")).respond_with(ResponseTemplate::new(500).set_body_string("down")).mount(&server).await;
    let tmp = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(tmp.path().join("workspace")).unwrap();
    let memory: String = (0..20_000).map(|i| format!("- note {i}: something worth keeping in mind\n")).collect();
    std::fs::write(tmp.path().join("workspace/MEMORY.md"), memory).unwrap();
    let monday = Utc.with_ymd_and_hms(2026, 3, 2, 0, 0, 0).unwrap();
    let (engine, clock) = engine_on(&server, &tmp, monday, |c| {
        c.discovery.target = "cli:me".into();
        c.llm.retry.attempts = 1;
        c.llm.breaker.failures = 1_000;
        c.llm.max_prompt_tokens = 2_000;
    });
    let (log, _guard) = warn_lines();

    for _ in 0..48 {
        engine.runner.call_async(Tick).await.unwrap();
        clock.advance(D::minutes(30));
    }

    let bodies = bodies(&server).await;
    let discovery: Vec<&Value> =
        bodies.iter().filter(|b| b["tool_choice"]["function"]["name"] == "propose_tasks").collect();
    assert!((1..=6).contains(&discovery.len()), "{} discovery attempts", discovery.len());
    for body in &discovery {
        let tokens = prompt_tokens(body, TokenCounter::for_model("gpt-4o-mini"));
        assert!(tokens <= 2_000, "{tokens} tokens");
    }
    let log = String::from_utf8(log.lock().unwrap().clone()).unwrap();
    let warned = log.lines().filter(|l| l.contains("WARN") && l.contains("task discovery")).count();
    assert_eq!(warned, discovery.len(), "one warn line an attempt: {log}");
}
