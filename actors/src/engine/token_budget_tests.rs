//! The daily token budget through the wired engine, against a server on 127.0.0.1 that reports
//! each reply's usage, on the manual clock: once the day's tokens are spent the Planner makes
//! no request (a skip with the reason), the user's own turn still runs; the usage is journaled.

use super::*;
use crate::clock::{Clock, ManualClock};
use crate::sentinel::Tick;
use crate::spine::TurnOutcome;
use chrono::{Duration as D, TimeZone, Utc};
use raven_proto::Action;
use serde_json::json;
use wiremock::matchers::{body_string_contains, method};
use wiremock::{Mock, MockServer, ResponseTemplate};

fn usage() -> serde_json::Value {
    json!({"prompt_tokens": 900, "completion_tokens": 20, "total_tokens": 920})
}

async fn server() -> MockServer {
    let server = MockServer::start().await;
    let args = json!({"action": "skip", "reason": "nothing now", "proactivity_score": 0.1});
    let planner = json!({"choices": [{"finish_reason": "tool_calls", "message": {"role": "assistant", "content": null,
        "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "planner_decision", "arguments": args.to_string()}}]}}],
        "usage": usage()});
    let text = json!({"choices": [{"finish_reason": "stop", "message": {"role": "assistant", "content": "Hello!"}}], "usage": usage()});
    let for_planner = ResponseTemplate::new(200).set_body_json(planner);
    Mock::given(method("POST"))
        .and(body_string_contains("planner_decision\"}"))
        .respond_with(for_planner)
        .mount(&server)
        .await;
    Mock::given(method("POST")).respond_with(ResponseTemplate::new(200).set_body_json(text)).mount(&server).await;
    server
}

async fn requests(server: &MockServer) -> usize {
    server.received_requests().await.unwrap().len()
}

#[actix_rt::test]
async fn once_the_days_tokens_are_spent_the_planner_skips_and_the_user_still_gets_an_answer() {
    let server = server().await;
    let tmp = tempfile::tempdir().unwrap();
    let clock = ManualClock::new(Utc.with_ymd_and_hms(2026, 3, 2, 10, 0, 0).unwrap());
    let mut config = RavenConfig::default();
    config.llm.base_url = format!("{}/v1", server.uri());
    config.llm.daily_token_budget = 1_000;
    config.sentinel.skip_cache_ttl_s = 0;
    config.discovery.enabled = false;
    let engine = Engine::start(&DataDir::new(tmp.path()), &config, clock.shared()).unwrap();

    engine.runner.call_async(Tick).await.unwrap();
    assert_eq!(requests(&server).await, 1, "920 tokens of 1,000 spent");
    clock.advance(D::minutes(30));
    engine.runner.call_async(Tick).await.unwrap();
    assert_eq!(requests(&server).await, 2, "1,840 spent: over the budget");
    clock.advance(D::minutes(30));
    let tick = engine.runner.call_async(Tick).await.unwrap();
    assert_eq!(requests(&server).await, 2, "the Planner asked no one");
    assert_eq!(tick.decision.action, Action::Skip);
    assert!(tick.decision.reason.contains("daily token budget is spent"), "{tick:?}");

    let req = raven_proto::TurnRequest::new(
        "u1",
        raven_proto::Origin::User,
        "cli:local",
        "cli",
        "local",
        "hi",
        raven_proto::BusyPolicy::Append,
        clock.now(),
    );
    let (_, rx) = engine.scheduler.submit_wait(req);
    assert_eq!(rx.await.unwrap(), TurnOutcome::Replied("Hello!".into()), "the user's turn is never refused");
    assert_eq!(requests(&server).await, 3);

    let journal = std::fs::read_to_string(DataDir::new(tmp.path()).journal()).unwrap();
    let usage_lines: Vec<&str> = journal.lines().filter(|l| l.contains("\"kind\":\"llm_usage\"")).collect();
    assert_eq!(usage_lines.len(), 3, "{journal}");
    assert!(
        usage_lines[2].contains("\"role\":\"agent\"") && usage_lines[2].contains("\"day_total\":2760"),
        "{journal}"
    );
    clock.advance(D::days(1));
    engine.runner.call_async(Tick).await.unwrap();
    assert_eq!(requests(&server).await, 4, "a new day, a new budget");
}

#[actix_rt::test]
async fn the_embedded_rules_spend_no_tokens_and_nothing_is_counted_or_written() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = DataDir::new(tmp.path());
    std::fs::create_dir_all(dir.memory().parent().unwrap()).unwrap();
    std::fs::write(dir.memory(), "- [ ] Call the bank due: 2026-03-02 10:20\n").unwrap();
    let clock = ManualClock::new(Utc.with_ymd_and_hms(2026, 3, 2, 10, 0, 0).unwrap());
    let mut config = RavenConfig::default();
    config.llm.daily_token_budget = 1;
    let engine = Engine::start(&dir, &config, clock.shared()).unwrap();
    let tick = engine.runner.call_async(Tick).await.unwrap();
    assert_eq!(tick.decision.action, Action::Nudge, "a budget of 1 token holds nothing back: {tick:?}");
    assert!(!dir.sentinel_dir().join("llm_tokens.json").exists());
    let journal = std::fs::read_to_string(dir.root().join("journal.jsonl")).unwrap();
    assert!(!journal.contains("llm_usage"), "{journal}");
}

/// The day's spending is a row of the state database: an earlier version's
/// `sentinel/llm_tokens.json` is imported by the engine that opens it and kept as `.migrated`,
/// and what it says was spent today still counts.
#[actix_rt::test]
async fn an_earlier_versions_token_file_is_imported_and_still_counts() {
    let server = server().await;
    let tmp = tempfile::tempdir().unwrap();
    let dir = DataDir::new(tmp.path());
    std::fs::create_dir_all(dir.sentinel_dir()).unwrap();
    let earlier = r#"{"llm_tokens": {"day": "2026-03-02", "total": 1000, "by_role": {"planner": 1000}}}"#;
    std::fs::write(dir.sentinel_dir().join("llm_tokens.json"), earlier).unwrap();
    let clock = ManualClock::new(Utc.with_ymd_and_hms(2026, 3, 2, 10, 0, 0).unwrap());
    let mut config = RavenConfig::default();
    config.llm.base_url = format!("{}/v1", server.uri());
    config.llm.daily_token_budget = 1_000;
    config.discovery.enabled = false;
    let engine = Engine::start(&dir, &config, clock.shared()).unwrap();
    let tick = engine.runner.call_async(Tick).await.unwrap();
    assert_eq!(requests(&server).await, 0, "today's 1,000 tokens were spent before the upgrade");
    assert!(tick.decision.reason.contains("daily token budget is spent"), "{tick:?}");
    assert!(!dir.sentinel_dir().join("llm_tokens.json").exists());
    let kept = std::fs::read_to_string(dir.sentinel_dir().join("llm_tokens.json.migrated")).unwrap();
    assert_eq!(kept, earlier);
    let db = crate::store::db::Database::open_read_only(&dir.state_db()).unwrap().unwrap();
    let rows = crate::store::sections::everything(&db).unwrap();
    assert!(rows.iter().any(|(owner, section, _)| owner == "llm_tokens" && section == "llm_tokens"), "{rows:?}");
}
