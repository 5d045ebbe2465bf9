//! Every tool call of a reply, against a server on 127.0.0.1: each runs in order under the
//! model's id, and the calls and results are in the next request of the turn and, read back
//! from the session, in the next turn's.

use super::tools::{Tool, ToolCtx};
use super::*;
use crate::clock::ManualClock;
use crate::llm::openai::OpenAiProvider;
use crate::spine::Inbox;
use chrono::{TimeZone, Utc};
use serde_json::{json, Value};
use std::cell::RefCell;
use std::time::Duration;
use wiremock::matchers::method;
use wiremock::{Mock, MockServer, ResponseTemplate};

/// `note(text)`: keeps what it was asked to note, in order.
#[derive(Default)]
struct Note(RefCell<Vec<String>>);

impl Tool for Note {
    fn schema(&self) -> crate::llm::provider::ToolSchema {
        crate::llm::provider::ToolSchema {
            name: "note".into(),
            description: "note something".into(),
            parameters: json!({"type": "object", "properties": {"text": {"type": "string"}}}),
        }
    }
    fn call<'a>(&'a self, args: &'a Value, _: &'a ToolCtx) -> LocalBoxFuture<'a, String> {
        let text = args["text"].as_str().unwrap_or_default().to_owned();
        self.0.borrow_mut().push(text.clone());
        Box::pin(async move { format!("noted {text}") })
    }
}

fn two_calls() -> Value {
    let call = |id: &str, text: &str| json!({"id": id, "type": "function", "function": {"name": "note", "arguments": json!({"text": text}).to_string()}});
    json!({"choices": [{"finish_reason": "tool_calls", "message": {"role": "assistant", "content": null,
        "tool_calls": [call("call_milk", "milk"), call("call_eggs", "eggs")]}}]})
}

fn text(t: &str) -> Value {
    json!({"choices": [{"finish_reason": "stop", "message": {"role": "assistant", "content": t}}]})
}

async fn model() -> MockServer {
    let server = MockServer::start().await;
    let reply = |body: Value| ResponseTemplate::new(200).set_body_json(body);
    Mock::given(method("POST")).respond_with(reply(two_calls())).up_to_n_times(1).mount(&server).await;
    Mock::given(method("POST")).respond_with(reply(text("Both noted."))).mount(&server).await;
    server
}

fn agent(dir: &std::path::Path, server: &MockServer, note: Rc<Note>) -> AgentLoop {
    let provider = OpenAiProvider::new(&server.uri(), "m", None, Duration::from_secs(5)).unwrap();
    AgentLoop {
        provider: Rc::new(provider),
        embedded: None,
        tools: vec![note],
        sessions: SessionStore::new(dir.join("sessions")),
        injector: None,
        inbound_hooks: Vec::new(),
        clock: ManualClock::new(Utc.with_ymd_and_hms(2026, 3, 2, 12, 0, 0).unwrap()).shared(),
        max_iterations: 6,
        conversations: None,
        feedback: None,
        history: None,
        knowledge: None,
        micro: super::MicroLimits::default(),
    }
}

fn said(text: &str) -> TurnRequest {
    let at = Utc.with_ymd_and_hms(2026, 3, 2, 12, 0, 0).unwrap();
    TurnRequest::new(format!("r-{text}"), Origin::User, "cli:1", "cli", "1", text, raven_proto::BusyPolicy::Append, at)
}

async fn bodies(server: &MockServer) -> Vec<Value> {
    let requests = server.received_requests().await.unwrap();
    requests.iter().map(|r| serde_json::from_slice(&r.body).unwrap()).collect()
}

/// The calls and results of `messages` as `(role, id, content or name)`, the rest left out.
fn tool_messages(messages: &Value) -> Vec<(String, String, String)> {
    let mut out = Vec::new();
    for m in messages.as_array().unwrap() {
        for c in m["tool_calls"].as_array().into_iter().flatten() {
            let name = format!(
                "{}({})",
                c["function"]["name"].as_str().unwrap(),
                c["function"]["arguments"].as_str().unwrap()
            );
            out.push(("assistant".into(), c["id"].as_str().unwrap().into(), name));
        }
        if m["role"] == "tool" {
            out.push((
                "tool".into(),
                m["tool_call_id"].as_str().unwrap().into(),
                m["content"].as_str().unwrap().into(),
            ));
        }
    }
    out
}

fn expected() -> Vec<(String, String, String)> {
    [
        ("assistant", "call_milk", r#"note({"text":"milk"})"#),
        ("assistant", "call_eggs", r#"note({"text":"eggs"})"#),
        ("tool", "call_milk", "noted milk"),
        ("tool", "call_eggs", "noted eggs"),
    ]
    .map(|(a, b, c)| (a.to_owned(), b.to_owned(), c.to_owned()))
    .to_vec()
}

#[actix_rt::test]
async fn a_reply_with_two_tool_calls_runs_both_and_the_next_requests_replay_both_with_their_ids() {
    let server = model().await;
    let dir = tempfile::tempdir().unwrap();
    let note = Rc::new(Note::default());
    let agent = agent(dir.path(), &server, note.clone());

    let out = agent.run_turn(said("note milk and eggs"), Inbox::default()).await;
    assert_eq!(out, TurnOutcome::Replied("Both noted.".into()));
    assert_eq!(*note.0.borrow(), ["milk", "eggs"], "both calls ran, in order");
    let first = bodies(&server).await;
    assert_eq!(first.len(), 2);
    assert_eq!(first[0]["parallel_tool_calls"], false, "the loop runs them one after another");
    assert_eq!(tool_messages(&first[1]["messages"]), expected(), "the turn's second request");
    let roles: Vec<&str> =
        first[1]["messages"].as_array().unwrap().iter().map(|m| m["role"].as_str().unwrap()).collect();
    assert_eq!(roles, ["system", "user", "assistant", "tool", "tool"]);

    let out = agent.run_turn(said("thanks"), Inbox::default()).await;
    assert_eq!(out, TurnOutcome::Replied("Both noted.".into()));
    let next = bodies(&server).await.pop().unwrap();
    assert_eq!(tool_messages(&next["messages"]), expected(), "the next turn, read back from the session");
    let roles: Vec<&str> = next["messages"].as_array().unwrap().iter().map(|m| m["role"].as_str().unwrap()).collect();
    assert_eq!(roles, ["system", "user", "assistant", "tool", "tool", "assistant", "user"]);
}

#[actix_rt::test]
async fn the_session_keeps_each_call_and_each_result_as_a_line() {
    let server = model().await;
    let dir = tempfile::tempdir().unwrap();
    let agent = agent(dir.path(), &server, Rc::new(Note::default()));
    agent.run_turn(said("note milk and eggs"), Inbox::default()).await;

    let text = std::fs::read_to_string(dir.path().join("sessions/cli_1.jsonl")).unwrap();
    let lines: Vec<Value> = text.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(lines.len(), 5, "{text}");
    let ids: Vec<&str> = lines[1]["tool_calls"].as_array().unwrap().iter().map(|c| c["id"].as_str().unwrap()).collect();
    assert_eq!(ids, ["call_milk", "call_eggs"]);
    assert_eq!(lines[1]["tool_calls"][0]["arguments"], json!({"text": "milk"}));
    assert_eq!((lines[2]["role"].as_str(), lines[2]["tool_call_id"].as_str()), (Some("tool"), Some("call_milk")));
    assert_eq!(
        (lines[3]["content"].as_str(), lines[3]["tool_call_id"].as_str()),
        (Some("noted eggs"), Some("call_eggs"))
    );
}
