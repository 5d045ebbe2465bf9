//! An agent that knows the user, against a server on 127.0.0.1: a user's turn is told the
//! time in their zone, their notes and Raven's recent nudges, and has the memory tools; a
//! micro-agent's run has only the tools that write nothing of the user's, and stops at its
//! own iteration and token limits.

use super::knowledge::Knowledge;
use super::notes::MemoryNotes;
use super::tools::Tool;
use super::tools::{ReadMemoryTool, RememberTool};
use super::*;
use crate::clock::ManualClock;
use crate::llm::openai::OpenAiProvider;
use crate::spine::Inbox;
use chrono::{TimeZone, Utc};
use serde_json::{json, Value};
use std::time::Duration;
use wiremock::matchers::method;
use wiremock::{Mock, MockServer, ResponseTemplate};

fn now() -> chrono::DateTime<chrono::Utc> {
    Utc.with_ymd_and_hms(2026, 3, 2, 12, 0, 0).unwrap()
}

fn read_memory_call() -> Value {
    let call = json!({"id": "call_1", "type": "function", "function": {"name": "read_memory", "arguments": "{}"}});
    json!({"choices": [{"finish_reason": "tool_calls", "message": {"role": "assistant", "content": null, "tool_calls": [call]}}],
           "usage": {"prompt_tokens": 900, "completion_tokens": 20}})
}

async fn model(first: Value) -> MockServer {
    let server = MockServer::start().await;
    let reply = |body: Value| ResponseTemplate::new(200).set_body_json(body);
    Mock::given(method("POST")).respond_with(reply(first)).mount(&server).await;
    server
}

fn agent(dir: &std::path::Path, server: &MockServer, micro: MicroLimits) -> AgentLoop {
    let provider = OpenAiProvider::new(&server.uri(), "gpt-4o-mini", None, Duration::from_secs(5)).unwrap();
    let memory = dir.join("MEMORY.md");
    let tools: Vec<Rc<dyn Tool>> = vec![
        Rc::new(ReadMemoryTool { memory: memory.clone() }),
        Rc::new(RememberTool { notes: MemoryNotes { path: memory.clone(), tz: chrono_tz::UTC } }),
    ];
    AgentLoop {
        provider: Rc::new(provider),
        embedded: None,
        tools,
        sessions: SessionStore::new(dir.join("sessions")),
        injector: None,
        inbound_hooks: Vec::new(),
        clock: ManualClock::new(now()).shared(),
        max_iterations: 8,
        conversations: None,
        feedback: None,
        history: None,
        knowledge: Some(Knowledge {
            memory,
            sessions: dir.join("sessions"),
            tz: chrono_tz::America::New_York,
            order: crate::time::DateOrder::MonthFirst,
        }),
        micro,
    }
}

fn turn(origin: Origin, text: &str) -> TurnRequest {
    TurnRequest::new("r-1", origin, "cli:1", "cli", "1", text, raven_proto::BusyPolicy::Append, now())
}

async fn bodies(server: &MockServer) -> Vec<Value> {
    let requests = server.received_requests().await.unwrap();
    requests.iter().map(|r| serde_json::from_slice(&r.body).unwrap()).collect()
}

fn tool_names(body: &Value) -> Vec<String> {
    body["tools"].as_array().unwrap().iter().map(|t| t["function"]["name"].as_str().unwrap().to_owned()).collect()
}

#[actix_rt::test]
async fn a_users_turn_knows_the_time_the_notes_and_the_recent_nudges_and_has_the_memory_tools() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(
        tmp.path().join("MEMORY.md"),
        "## Proactivity preferences\n- never before 9\n\n## Notes\n- the dentist is Dr. Ruiz\n",
    )
    .unwrap();
    let mut nudge =
        crate::sessions::SessionLine::new(Role::Assistant, "Time to stretch?", now() - chrono::Duration::hours(2));
    (nudge.proactive, nudge.nudge_id, nudge.topic) = (true, Some("n-7".into()), Some("stretch".into()));
    SessionStore::new(tmp.path().join("sessions")).append_line("telegram", "42", &nudge).unwrap();
    let server = model(
        json!({"choices": [{"finish_reason": "stop", "message": {"role": "assistant", "content": "Dr. Ruiz."}}]}),
    )
    .await;
    let agent = agent(tmp.path(), &server, MicroLimits::default());
    let outcome = agent.run_turn(turn(Origin::User, "who is my dentist?"), Inbox::default()).await;
    assert_eq!(outcome, TurnOutcome::Replied("Dr. Ruiz.".into()));
    let body = &bodies(&server).await[0];
    let system = body["messages"][0]["content"].as_str().unwrap();
    assert!(system.contains("2026-03-02 07:00 (Monday, local time in America/New_York, UTC-05:00)"), "{system}");
    assert!(system.contains("- never before 9") && system.contains("- the dentist is Dr. Ruiz"), "{system}");
    assert!(system.contains("to telegram:42 [message nudge_id=n-7 topic=stretch]: Time to stretch?"), "{system}");
    assert_eq!(tool_names(body), ["read_memory", "remember"]);
}

#[actix_rt::test]
async fn a_micro_agent_has_the_read_only_tools_and_stops_at_its_iteration_limit() {
    let tmp = tempfile::tempdir().unwrap();
    let server = model(read_memory_call()).await;
    let limits = MicroLimits { max_iterations: 3, max_tokens: 1_000_000 };
    let outcome = agent(tmp.path(), &server, limits).run_turn(turn(Origin::Subagent, "digest"), Inbox::default()).await;
    assert_eq!(outcome, TurnOutcome::Replied("(stopped after 3 tool calls)".into()));
    let bodies = bodies(&server).await;
    assert_eq!(bodies.len(), 3, "its own limit, not the agent's 8");
    assert_eq!(tool_names(&bodies[0]), ["read_memory"], "no tool that writes the user's files");
}

#[actix_rt::test]
async fn a_micro_agent_stops_once_its_tokens_are_spent() {
    let tmp = tempfile::tempdir().unwrap();
    let server = model(read_memory_call()).await;
    let limits = MicroLimits { max_iterations: 10, max_tokens: 2_000 };
    let outcome = agent(tmp.path(), &server, limits).run_turn(turn(Origin::Subagent, "digest"), Inbox::default()).await;
    let TurnOutcome::Replied(text) = outcome else { panic!("{outcome:?}") };
    assert_eq!(text, "(stopped: this run spent 2760 of its 2000 tokens, `agent.subagent_max_tokens`)");
    assert_eq!(bodies(&server).await.len(), 3, "920 reported tokens a request: the third passes 2,000");
}
