//! Model-aware generation parameters: what a caller pins ([`Generation`]) rendered for the
//! model and the API that serve it.
//!
//! A reasoning model (guessed from its name: the o-series `o1`, `o3`, `o4-mini`…, the `gpt-5`
//! family; `[llm] reasoning` overrides the guess) gets `max_completion_tokens`, no
//! `temperature`, its lowest `reasoning_effort`, and at least [`REASONING_MIN_TOKENS`] (its
//! reasoning is paid from the same limit). Any other model gets the pinned values, the limit as
//! `max_completion_tokens` on api.openai.com and as `max_tokens` everywhere else (Ollama,
//! llama.cpp server, vLLM and OpenRouter all read it). `[llm.planner]`, `[llm.agent]` and
//! `[llm.heartbeat]` override their role's values; nothing else does.

use super::provider::{Caller, Generation};
use crate::config::{LlmConfig, RoleParams};
use serde_json::{Map, Value};

/// The completion limit of a reasoning model when its role sets none: room for the
/// reasoning and the answer (the Planner's 400 would be spent before the tool call).
pub const REASONING_MIN_TOKENS: u32 = 2_000;

/// How a model is asked.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ModelParams {
    reasoning: bool,
    /// The lowest `reasoning_effort` the model accepts.
    lowest_effort: &'static str,
    /// The limit goes as `max_completion_tokens` (else `max_tokens`).
    completion_field: bool,
    planner: RoleParams,
    agent: RoleParams,
    heartbeat: RoleParams,
}

/// The values one request carries.
#[derive(Debug, Clone, PartialEq)]
pub struct Resolved {
    pub max_tokens: u32,
    pub temperature: Option<f64>,
    pub reasoning_effort: Option<String>,
}

impl ModelParams {
    /// The guess for `model` behind `base_url`, no role overrides.
    pub fn guess(model: &str, base_url: &str) -> Self {
        let reasoning = is_reasoning_model(model);
        ModelParams {
            reasoning,
            lowest_effort: lowest_effort(model),
            completion_field: reasoning || is_openai_api(base_url),
            ..ModelParams::default()
        }
    }

    /// As `[llm]` configures it.
    pub fn from_config(llm: &LlmConfig) -> Self {
        let mut p = ModelParams::guess(&llm.model, &llm.base_url);
        if let Some(reasoning) = llm.reasoning {
            p.reasoning = reasoning;
            p.completion_field = reasoning || is_openai_api(&llm.base_url);
        }
        ModelParams { planner: llm.planner.clone(), agent: llm.agent.clone(), heartbeat: llm.heartbeat.clone(), ..p }
    }

    pub fn reasoning(&self) -> bool {
        self.reasoning
    }

    fn role(&self, caller: Caller) -> Option<&RoleParams> {
        match caller {
            Caller::Planner => Some(&self.planner),
            Caller::Agent(_) => Some(&self.agent),
            Caller::Heartbeat => Some(&self.heartbeat),
            Caller::Other => None,
        }
    }

    /// The pinned values, the role's overrides, then what the model refuses taken out.
    pub fn resolve(&self, g: Generation) -> Resolved {
        let role = self.role(g.caller).cloned().unwrap_or_default();
        let pinned = if self.reasoning { g.max_tokens.max(REASONING_MIN_TOKENS) } else { g.max_tokens };
        let effort = role.reasoning_effort.unwrap_or_else(|| self.lowest_effort.to_owned());
        Resolved {
            max_tokens: role.max_tokens.unwrap_or(pinned),
            temperature: (!self.reasoning).then(|| role.temperature.unwrap_or(g.temperature)),
            reasoning_effort: self.reasoning.then_some(effort),
        }
    }

    /// Writes the resolved values into a request body.
    pub fn write(&self, g: Generation, body: &mut Map<String, Value>) {
        let r = self.resolve(g);
        let field = if self.completion_field { "max_completion_tokens" } else { "max_tokens" };
        body.insert(field.into(), r.max_tokens.into());
        if let Some(t) = r.temperature {
            body.insert("temperature".into(), t.into());
        }
        if let Some(e) = r.reasoning_effort {
            body.insert("reasoning_effort".into(), e.into());
        }
    }
}

/// The model's own name: a routing prefix (`openai/o3-mini` on OpenRouter) and a tag
/// (`name:latest` on Ollama) taken off, lower case.
fn base_name(model: &str) -> String {
    let name = model.rsplit('/').next().unwrap_or(model);
    name.split(':').next().unwrap_or(name).to_ascii_lowercase()
}

/// o1, o3, o4-mini… and the gpt-5 family (its `-chat` models excepted, which answer
/// without reasoning).
pub fn is_reasoning_model(model: &str) -> bool {
    let name = base_name(model);
    let o_series = name.strip_prefix('o').is_some_and(|rest| rest.starts_with(|c: char| c.is_ascii_digit()));
    let gpt5 = name.starts_with("gpt-5") && !name.contains("-chat");
    o_series || gpt5
}

/// `minimal` for gpt-5, `none` for gpt-5.1 and later, `low` for the o-series and the rest.
fn lowest_effort(model: &str) -> &'static str {
    let name = base_name(model);
    match name.strip_prefix("gpt-5") {
        Some(rest) if rest.starts_with('.') => "none",
        Some(_) => "minimal",
        None => "low",
    }
}

fn is_openai_api(base_url: &str) -> bool {
    let host = base_url.split("://").nth(1).unwrap_or(base_url);
    host.split(['/', ':']).next().is_some_and(|h| h.eq_ignore_ascii_case("api.openai.com"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const PLANNER: Generation = Generation { max_tokens: 400, temperature: 0.1, caller: Caller::Planner };

    fn body(p: &ModelParams, g: Generation) -> Value {
        let mut m = Map::new();
        p.write(g, &mut m);
        Value::Object(m)
    }

    #[test]
    fn reasoning_models_are_guessed_from_the_name() {
        for m in ["o1", "o1-mini", "o3", "o3-mini", "o4-mini", "gpt-5", "gpt-5-mini", "gpt-5.1", "openai/o3-mini"] {
            assert!(is_reasoning_model(m), "{m}");
        }
        for m in ["gpt-4o-mini", "gpt-4.1", "llama3.2:3b", "qwen2.5", "gpt-5-chat-latest", "openai/gpt-4o", "olmo-7b"] {
            assert!(!is_reasoning_model(m), "{m}");
        }
    }

    #[test]
    fn a_reasoning_model_gets_max_completion_tokens_no_temperature_and_the_lowest_effort() {
        let p = ModelParams::guess("o3-mini", "http://127.0.0.1:8000/v1");
        assert_eq!(
            body(&p, PLANNER),
            json!({"max_completion_tokens": REASONING_MIN_TOKENS, "reasoning_effort": "low"})
        );
        let gpt5 = |m| body(&ModelParams::guess(m, "https://api.openai.com/v1"), PLANNER)["reasoning_effort"].clone();
        assert_eq!(gpt5("gpt-5-mini"), "minimal");
        assert_eq!(gpt5("gpt-5.1"), "none");
    }

    #[test]
    fn other_models_get_the_pinned_values_with_the_field_their_api_reads() {
        let local = ModelParams::guess("llama3.2:3b", "http://127.0.0.1:11434/v1");
        assert_eq!(body(&local, PLANNER), json!({"max_tokens": 400, "temperature": 0.1}));
        let openai = ModelParams::guess("gpt-4o-mini", "https://api.openai.com/v1");
        assert_eq!(body(&openai, PLANNER), json!({"max_completion_tokens": 400, "temperature": 0.1}));
    }

    #[test]
    fn the_reasoning_key_overrides_the_guess() {
        let mut llm = LlmConfig {
            model: "deepseek-r1".into(),
            base_url: "http://127.0.0.1:8000/v1".into(),
            ..Default::default()
        };
        assert!(!ModelParams::from_config(&llm).reasoning());
        llm.reasoning = Some(true);
        assert!(ModelParams::from_config(&llm).reasoning());
        llm.model = "o3".into();
        llm.reasoning = Some(false);
        let p = ModelParams::from_config(&llm);
        assert_eq!(body(&p, PLANNER), json!({"max_tokens": 400, "temperature": 0.1}));
    }

    #[test]
    fn only_the_callers_own_role_overrides_its_values() {
        let llm = LlmConfig {
            model: "gpt-4o-mini".into(),
            base_url: "http://127.0.0.1:8000/v1".into(),
            agent: RoleParams { max_tokens: Some(3000), temperature: Some(0.9), reasoning_effort: None },
            ..Default::default()
        };
        let p = ModelParams::from_config(&llm);
        assert_eq!(body(&p, PLANNER), json!({"max_tokens": 400, "temperature": 0.1}), "the Planner keeps its pins");
        let agent = Generation { max_tokens: 1024, temperature: 0.3, caller: Caller::Agent(raven_proto::Origin::User) };
        assert_eq!(body(&p, agent), json!({"max_tokens": 3000, "temperature": 0.9}));
        let planner = LlmConfig { planner: RoleParams { max_tokens: Some(600), ..Default::default() }, ..llm };
        assert_eq!(body(&ModelParams::from_config(&planner), PLANNER)["max_tokens"], 600);
    }
}
