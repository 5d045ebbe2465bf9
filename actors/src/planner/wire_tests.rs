//! The openai provider on the wire, against a server on 127.0.0.1: the reply shapes of
//! OpenAI, Ollama, llama.cpp server, vLLM and OpenRouter (bodies in `fixtures/`, shaped after
//! each project's documented examples), and the request body a configured model gets.

use super::*;
use crate::config::RavenConfig;
use crate::llm::openai;
use crate::llm::provider::{CompletionRequest, Provider, ProviderError, ProviderReply};
use chrono::{TimeZone, Utc};
use raven_proto::Action;
use serde_json::{json, Value};
use std::time::Duration;
use wiremock::matchers::method;
use wiremock::{Mock, MockServer, ResponseTemplate};

async fn serving(body: &str) -> MockServer {
    let server = MockServer::start().await;
    let template = ResponseTemplate::new(200).set_body_raw(body.as_bytes().to_vec(), "application/json");
    Mock::given(method("POST")).respond_with(template).mount(&server).await;
    server
}

/// The provider `[llm]` configures (as `raven up` builds it), aimed at `server`.
fn configured(server: &MockServer, llm_toml: &str) -> SharedProvider {
    let text = format!("[llm]\nbase_url = \"{}/v1\"\n{llm_toml}", server.uri());
    let (config, _) = RavenConfig::parse(&text, std::path::Path::new("config.toml")).unwrap();
    let clock = crate::clock::ManualClock::new(Utc.with_ymd_and_hms(2026, 3, 2, 12, 0, 0).unwrap());
    crate::engine::provider(&config, clock.shared()).unwrap().0
}

fn any_request() -> CompletionRequest {
    let ctx = PlannerContext::empty(Utc.with_ymd_and_hms(2026, 3, 2, 12, 0, 0).unwrap());
    ProactivePlanner::new(std::rc::Rc::new(rules::RulesProvider::new(chrono_tz::UTC))).request(Arc::new(ctx))
}

async fn reply_to(fixture: &str) -> Result<ProviderReply, ProviderError> {
    let server = serving(fixture).await;
    let provider = openai::OpenAiProvider::new(&server.uri(), "m", None, Duration::from_secs(5)).unwrap();
    provider.complete(&any_request()).await
}

#[actix_rt::test]
async fn the_documented_reply_shape_of_each_server_is_understood() {
    let cases = [
        (include_str!("fixtures/openai_tool_call.json"), "get_current_weather", json!({"location": "Boston, MA"})),
        (include_str!("fixtures/ollama_tool_call.json"), "calculate", json!({"operation": "+", "x": "5", "y": "3"})),
        (include_str!("fixtures/llamacpp_tool_call.json"), "get_current_weather", json!({"location": "Paris, FR"})),
        (include_str!("fixtures/vllm_tool_call.json"), "get_weather", json!({"location": "San Francisco, CA"})),
        (include_str!("fixtures/openrouter_tool_call.json"), "get_weather", json!({"location": "San Francisco, CA"})),
    ];
    for (fixture, name, arguments) in cases {
        let got = reply_to(fixture).await.unwrap();
        let call = got.first_call().unwrap_or_else(|| panic!("no tool call: {got:?}"));
        assert_eq!((call.name.as_str(), &call.arguments), (name, &arguments), "{fixture}");
        assert!(call.id.as_deref().is_some_and(|id| !id.is_empty()), "the server's own id: {fixture}");
    }
    let text = reply_to(include_str!("fixtures/llamacpp_text.json")).await;
    assert_eq!(text, Ok(ProviderReply::Text("Hello! How can I help you today?".into())));
}

#[actix_rt::test]
async fn a_reply_cut_off_at_its_limit_is_a_skip_with_the_reason() {
    let server = serving(include_str!("fixtures/openai_reasoning_cut_off.json")).await;
    let planner = ProactivePlanner::new(configured(&server, "model = \"o3-mini\""));
    let ctx = PlannerContext::empty(Utc.with_ymd_and_hms(2026, 3, 2, 12, 0, 0).unwrap());
    let planned = planner.decide(ctx).await;
    assert_eq!(planned.decision.action, Action::Skip);
    let err = planned.error.unwrap_or_default();
    assert!(err.contains("cut off at its token limit of 2000"), "{err}");
}

async fn planner_body(llm_toml: &str) -> Value {
    let args = json!({"action": "skip", "reason": "r", "proactivity_score": 0});
    let reply = json!({"choices": [{"finish_reason": "tool_calls", "message": {"tool_calls": [
        {"id": "c1", "type": "function", "function": {"name": "planner_decision", "arguments": args.to_string()}}]}}]});
    let server = serving(&reply.to_string()).await;
    let planner = ProactivePlanner::new(configured(&server, llm_toml));
    let planned = planner.decide(PlannerContext::empty(Utc.with_ymd_and_hms(2026, 3, 2, 12, 0, 0).unwrap())).await;
    assert_eq!(planned.error, None);
    let requests = server.received_requests().await.unwrap();
    assert_eq!(requests.len(), 1);
    serde_json::from_slice(&requests[0].body).unwrap()
}

#[actix_rt::test]
async fn a_reasoning_model_config_sends_max_completion_tokens_and_no_temperature() {
    for llm in ["model = \"o3-mini\"", "model = \"gpt-5-mini\"", "model = \"my-thinker\"\nreasoning = true"] {
        let body = planner_body(llm).await;
        assert_eq!(body["max_completion_tokens"], 2000, "{llm}: {body}");
        assert!(body.get("temperature").is_none(), "{llm}: {body}");
        assert!(body.get("max_tokens").is_none(), "{llm}: {body}");
        assert!(body["reasoning_effort"].is_string(), "{llm}: {body}");
        assert!(body.get("parallel_tool_calls").is_none(), "refused by reasoning models: {llm}: {body}");
    }
    let body = planner_body("model = \"o3-mini\"").await;
    assert_eq!(body["reasoning_effort"], "low", "the lowest effort of the o-series");
}

#[actix_rt::test]
async fn only_the_planners_own_table_changes_its_pinned_values() {
    let others =
        "model = \"llama3.2\"\n[llm.agent]\nmax_tokens = 3000\ntemperature = 0.9\n[llm.heartbeat]\ntemperature = 1.0\n";
    let body = planner_body(others).await;
    assert_eq!((body["max_tokens"].clone(), body["temperature"].clone()), (json!(400), json!(0.1)), "{body}");
    let own = "model = \"llama3.2\"\n[llm.planner]\nmax_tokens = 600\ntemperature = 0.0\n";
    let body = planner_body(own).await;
    assert_eq!((body["max_tokens"].clone(), body["temperature"].clone()), (json!(600), json!(0.0)), "{body}");
    for global in ["temperature = 0.9", "max_tokens = 100", "reasoning_effort = \"high\""] {
        let err = RavenConfig::parse(&format!("[llm]\n{global}\n"), std::path::Path::new("c.toml")).unwrap_err();
        assert!(err.to_string().contains("unknown field"), "[llm] {global}: {err}");
    }
}
