//! What a broken setup answers: a refused key names its variable, a web page is not quoted.

use super::*;
use crate::llm::provider::ChatMessage;
use wiremock::matchers::method;
use wiremock::{Mock, MockServer, ResponseTemplate};

fn request() -> CompletionRequest {
    CompletionRequest {
        messages: vec![ChatMessage::user("hello")],
        tools: Vec::new(),
        tool_choice: None,
        generation: crate::llm::provider::Generation {
            max_tokens: 64,
            temperature: 0.0,
            caller: crate::llm::provider::Caller::Other,
        },
        context: None,
    }
}

async fn answered(template: ResponseTemplate, key: Option<&str>) -> String {
    let server = MockServer::start().await;
    Mock::given(method("POST")).respond_with(template).mount(&server).await;
    let provider =
        OpenAiProvider::new(&format!("{}/v1", server.uri()), "m", key.map(str::to_owned), Duration::from_secs(5))
            .unwrap()
            .with_key_env("RAVEN_TEST_LLM_KEY");
    provider.complete(&request()).await.unwrap_err().to_string()
}

#[actix_rt::test]
async fn a_refused_key_names_the_variable_it_comes_from_and_whether_it_is_set() {
    let refused = || ResponseTemplate::new(401).set_body_string(r#"{"error": "invalid api key"}"#);
    let unset = answered(refused(), None).await;
    assert!(unset.contains("HTTP 401") && unset.contains("`RAVEN_TEST_LLM_KEY`, which is not set"), "{unset}");
    let wrong = answered(refused(), Some("sk-wrong")).await;
    assert!(wrong.contains("`RAVEN_TEST_LLM_KEY`, which is set: check the key"), "{wrong}");
    assert!(!wrong.contains("sk-wrong"), "the key itself is never shown: {wrong}");
    let other = answered(ResponseTemplate::new(500).set_body_string("boom"), None).await;
    assert!(!other.contains("RAVEN_TEST_LLM_KEY"), "only a refusal is about the key: {other}");
}

#[actix_rt::test]
async fn a_web_page_for_an_answer_points_at_the_base_url_and_is_not_quoted() {
    let page = "<!DOCTYPE html><html><body><h1>Welcome to nginx!</h1></body></html>";
    let ok_page = answered(ResponseTemplate::new(200).set_body_string(page), Some("k")).await;
    assert!(ok_page.contains("web page") && ok_page.contains("llm.base_url"), "{ok_page}");
    assert!(!ok_page.contains("nginx"), "{ok_page}");
    let error_page = answered(ResponseTemplate::new(502).set_body_string(page), Some("k")).await;
    assert!(error_page.contains("HTTP 502") && error_page.contains("(a web page"), "{error_page}");
    assert!(!error_page.contains("<html"), "{error_page}");
}
