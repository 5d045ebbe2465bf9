//! Any OpenAI-compatible `POST {base_url}/chat/completions` (OpenAI, Ollama, vLLM,
//! llama.cpp server, OpenRouter), over reqwest with rustls.

use super::budget::PromptBudget;
use super::params::ModelParams;
use super::provider::{CompletionRequest, Provider, ProviderError, ProviderReply, ToolCall};
use super::usage::{Answer, Usage};
use futures_util::future::LocalBoxFuture;
use serde_json::{json, Value};
use std::time::Duration;

#[derive(Debug, Clone)]
pub struct OpenAiProvider {
    client: reqwest::Client,
    base_url: String,
    model: String,
    api_key: Option<String>,
    /// The environment variable the key is read from, named when the API refuses it.
    key_env: Option<String>,
    timeout: Duration,
    max_reply_bytes: usize,
    params: ModelParams,
    budget: PromptBudget,
}

pub use crate::config::MAX_REPLY_BYTES;

impl OpenAiProvider {
    pub fn new(base_url: &str, model: &str, api_key: Option<String>, timeout: Duration) -> Result<Self, ProviderError> {
        let client =
            reqwest::Client::builder().timeout(timeout).build().map_err(|e| ProviderError::Transport(e.to_string()))?;
        Ok(OpenAiProvider {
            client,
            base_url: base_url.trim_end_matches('/').to_owned(),
            model: model.to_owned(),
            api_key: api_key.filter(|k| !k.is_empty()),
            key_env: None,
            timeout,
            max_reply_bytes: MAX_REPLY_BYTES,
            params: ModelParams::guess(model, base_url),
            budget: PromptBudget::for_model(model, super::budget::DEFAULT_MAX_PROMPT_TOKENS),
        })
    }

    /// The key came from the environment variable `name` (`llm.api_key_env`): a refusal says so.
    pub fn with_key_env(mut self, name: &str) -> Self {
        self.key_env = Some(name.to_owned());
        self
    }

    /// A reply body over `bytes` is a failure, read no further and never stored.
    pub fn with_max_reply_bytes(mut self, bytes: usize) -> Self {
        self.max_reply_bytes = bytes;
        self
    }

    /// Prompts for it are built within `max_tokens`, counted with the model's tokenizer.
    pub fn with_max_prompt_tokens(mut self, max_tokens: u32) -> Self {
        self.budget.max_tokens = max_tokens;
        self
    }

    /// How the model is asked (by default as guessed from its name and the API root).
    pub fn with_params(mut self, params: ModelParams) -> Self {
        self.params = params;
        self
    }

    /// The request body: the caller's pinned parameters, rendered for the model (see
    /// [`ModelParams`]); no global defaults.
    pub fn body(&self, req: &CompletionRequest) -> Value {
        let tools: Vec<Value> = req
            .tools
            .iter()
            .map(|t| json!({"type": "function", "function": {"name": t.name, "description": t.description, "parameters": t.parameters}}))
            .collect();
        let mut fields = serde_json::Map::new();
        fields.insert("model".into(), json!(self.model));
        fields.insert("messages".into(), json!(req.messages));
        self.params.write(req.generation, &mut fields);
        let mut body = Value::Object(fields);
        if !tools.is_empty() {
            body["tools"] = Value::Array(tools);
            // The agent runs a reply's calls one after another, not at once; asked for one call
            // at a time, the model decides each knowing the results of those before it (an
            // ask_user answer, a job made). Reasoning models refuse the field.
            if !self.params.reasoning() {
                body["parallel_tool_calls"] = Value::Bool(false);
            }
        }
        if let Some(name) = &req.tool_choice {
            body["tool_choice"] = json!({"type": "function", "function": {"name": name}});
        }
        body
    }

    /// One request: its reply, and what the body said it cost (a reply refused after it came,
    /// cut off or not understood, still cost its tokens).
    async fn send(&self, req: &CompletionRequest) -> Answer {
        let text = match self.post(req).await {
            Ok(text) => text,
            Err(e) => return Answer { reply: Err(e), usage: None },
        };
        let usage = Usage::from_body(&text);
        let reply = parse_reply(&text, self.params.resolve(req.generation).max_tokens);
        if let Err(e @ ProviderError::CutOff { .. }) = &reply {
            tracing::warn!(model = %self.model, "{e}; the reply is dropped");
        }
        Answer { reply, usage }
    }

    /// The body of a successful answer, which is the API's JSON and not a web page.
    async fn post(&self, req: &CompletionRequest) -> Result<String, ProviderError> {
        let mut http = self.client.post(format!("{}/chat/completions", self.base_url)).json(&self.body(req));
        if let Some(key) = &self.api_key {
            http = http.bearer_auth(key);
        }
        let resp = http.send().await.map_err(|e| self.transport(e))?;
        let status = resp.status();
        let retry_after = retry_after(resp.headers());
        let body = self.read_bounded(resp).await?;
        let text = String::from_utf8_lossy(&body).into_owned();
        if !status.is_success() {
            let body = self.refusal(status.as_u16(), &text);
            return Err(ProviderError::Http { status: status.as_u16(), body, retry_after });
        }
        if is_web_page(&text) {
            return Err(ProviderError::Decode(format!(
                "{} answered a web page, not the API's JSON: check `llm.base_url` (an API root, often ending in /v1)",
                self.base_url
            )));
        }
        Ok(text)
    }

    /// The body, chunk by chunk, up to the bound: a larger one is dropped as it arrives.
    async fn read_bounded(&self, mut resp: reqwest::Response) -> Result<Vec<u8>, ProviderError> {
        let too_large = ProviderError::TooLarge { limit: self.max_reply_bytes };
        if resp.content_length().is_some_and(|n| n > self.max_reply_bytes as u64) {
            return Err(too_large);
        }
        let mut body = Vec::new();
        while let Some(chunk) = resp.chunk().await.map_err(|e| self.transport(e))? {
            if body.len() + chunk.len() > self.max_reply_bytes {
                return Err(too_large);
            }
            body.extend_from_slice(&chunk);
        }
        Ok(body)
    }

    fn transport(&self, e: reqwest::Error) -> ProviderError {
        if e.is_timeout() {
            ProviderError::Timeout(self.timeout.as_millis() as u64)
        } else {
            ProviderError::Transport(e.to_string())
        }
    }
}

/// How long the server asked to be left alone: OpenAI's `retry-after-ms`, else the standard
/// `Retry-After` (an HTTP date there is the server's wall clock, so it is read against ours).
fn retry_after(headers: &reqwest::header::HeaderMap) -> Option<Duration> {
    let header = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
    if let Some(ms) = header("retry-after-ms").and_then(|v| v.trim().parse::<f64>().ok()) {
        return Some(Duration::from_secs_f64(ms.max(0.0) / 1000.0));
    }
    header("retry-after").and_then(|v| super::retry::parse_retry_after(v, chrono::Utc::now()))
}

/// `choices[0].message`: its tool calls in order, each with its id, beside its text, else its
/// text; a reply cut off at the token limit `limit` (`finish_reason: "length"`) is an error,
/// whatever it holds.
impl OpenAiProvider {
    /// What a refusal's body says, made readable: a web page is not quoted, and a refused key
    /// names the variable it comes from and whether that is set.
    fn refusal(&self, status: u16, text: &str) -> String {
        let mut body: String = match is_web_page(text) {
            true => "(a web page, not the API's JSON)".to_owned(),
            false => text.chars().take(300).collect(),
        };
        if let (401 | 403, Some(env)) = (status, &self.key_env) {
            let state = if self.api_key.is_some() { "is set: check the key" } else { "is not set" };
            body.push_str(&format!(" (the API key comes from the environment variable `{env}`, which {state})"));
        }
        body
    }
}

/// An HTML page where JSON was expected (a proxy's error page, a wrong `base_url`).
fn is_web_page(text: &str) -> bool {
    let head: String = text.trim_start().chars().take(15).collect::<String>().to_ascii_lowercase();
    head.starts_with("<!doctype html") || head.starts_with("<html")
}

pub fn parse_reply(text: &str, limit: u32) -> Result<ProviderReply, ProviderError> {
    let v: Value = serde_json::from_str(text).map_err(|e| ProviderError::Decode(format!("body is not JSON: {e}")))?;
    if v.pointer("/choices/0/finish_reason").and_then(Value::as_str) == Some("length") {
        return Err(ProviderError::CutOff { limit });
    }
    let message =
        v.pointer("/choices/0/message").ok_or_else(|| ProviderError::Decode("no choices[0].message".into()))?;
    let text = message.get("content").and_then(Value::as_str).unwrap_or_default().to_owned();
    let calls: Vec<ToolCall> =
        message.get("tool_calls").and_then(Value::as_array).into_iter().flatten().filter_map(tool_call).collect();
    if calls.is_empty() {
        return Ok(ProviderReply::Text(text));
    }
    Ok(ProviderReply::ToolCalls { calls, text })
}

/// One entry of `tool_calls`: `{id, function: {name, arguments}}` (arguments as JSON text, or
/// as an object where a server sends one); an empty id is none.
fn tool_call(entry: &Value) -> Option<ToolCall> {
    let function = entry.get("function")?;
    let name = function.get("name").and_then(Value::as_str).unwrap_or_default().to_owned();
    let arguments = match function.get("arguments") {
        Some(Value::String(s)) => serde_json::from_str(s).unwrap_or_else(|_| Value::String(s.clone())),
        Some(other) => other.clone(),
        None => Value::Null,
    };
    let id = entry.get("id").and_then(Value::as_str).filter(|id| !id.is_empty()).map(str::to_owned);
    Some(ToolCall { id, name, arguments })
}

impl Provider for OpenAiProvider {
    fn name(&self) -> &str {
        "openai"
    }

    fn prompt_budget(&self) -> PromptBudget {
        self.budget
    }

    fn complete<'a>(&'a self, req: &'a CompletionRequest) -> LocalBoxFuture<'a, Result<ProviderReply, ProviderError>> {
        Box::pin(async move { self.send(req).await.reply })
    }

    fn answer<'a>(&'a self, req: &'a CompletionRequest) -> LocalBoxFuture<'a, Answer> {
        Box::pin(self.send(req))
    }
}

#[cfg(test)]
#[path = "openai_tests.rs"]
mod tests;
