//! DecisionRouter (spec §12): which replies are picks of a menu. A number or `/pick N`
//! (`/pick m3 N` names the menu) matches deterministically; any other text goes to an LLM
//! classifier when one is configured (never with the rules provider) and counts only above
//! its confidence threshold. A match consumes the reply; anything else passes through
//! untouched to the agent loop.

use super::pending::{PendingDecision, PendingDecisionStore, PendingState};
use crate::llm::provider::{Caller, ChatMessage, CompletionRequest, Generation, SharedProvider, ToolSchema};
use crate::store::StoreError;
use chrono::{DateTime, Utc};
use serde_json::json;

/// What a reply says, read without any model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Said {
    Pick { menu: Option<String>, n: usize },
    Yes,
    No,
    Other,
}

pub fn parse_reply(text: &str) -> Said {
    let t = text.trim().trim_end_matches(['.', '!']).to_lowercase();
    if let Ok(n) = t.parse::<usize>() {
        return Said::Pick { menu: None, n };
    }
    // `/pick` as a word of its own: `/pickup 2` is text, not a pick of menu "up".
    if let Some(rest) = t.strip_prefix("/pick").filter(|r| r.starts_with(char::is_whitespace)) {
        let parts: Vec<&str> = rest.split_whitespace().collect();
        match parts.as_slice() {
            [n] => {
                if let Ok(n) = n.parse() {
                    return Said::Pick { menu: None, n };
                }
            }
            [menu, n] => {
                if let Ok(n) = n.parse() {
                    return Said::Pick { menu: Some((*menu).to_owned()), n };
                }
            }
            _ => {}
        }
    }
    match t.as_str() {
        "yes" | "y" | "ok" | "okay" | "sure" | "confirm" | "go ahead" | "do it" => Said::Yes,
        "no" | "n" | "cancel" | "stop" | "don't" | "dont" => Said::No,
        _ => Said::Other,
    }
}

/// What becomes of a reply.
#[derive(Debug, Clone, PartialEq)]
pub enum Routed {
    /// Not about a menu: the agent gets it.
    PassThrough,
    /// Consumed; this is the answer, and nothing runs.
    Answer(String),
    /// Consumed: run option `choice` (0-based) of `menu`, already marked done.
    Run { menu: PendingDecision, choice: usize },
}

pub const CLASSIFY_TOOL: &str = "classify_reply";

pub struct DecisionRouter {
    pub store: PendingDecisionStore,
    /// The fallback for free text; `None` with the rules provider.
    pub classifier: Option<SharedProvider>,
    pub threshold: f64,
}

impl DecisionRouter {
    pub async fn route(&self, session: &str, text: &str, now: DateTime<Utc>) -> Result<Routed, StoreError> {
        let said = parse_reply(text);
        if let Said::Pick { menu: Some(id), n } = &said {
            let Some(menu) = self.store.get(id)? else {
                return Ok(Routed::Answer(format!("There is no menu {id}.")));
            };
            return self.named_pick(menu, *n, now);
        }
        let Some(menu) = self.store.live_for(session, now)? else {
            return Ok(Routed::PassThrough);
        };
        match (&menu.state, said) {
            (PendingState::AwaitingConfirm { choice }, Said::Yes) => {
                let (from, choice) = (menu.state.clone(), *choice);
                self.settle(menu, &from, choice)
            }
            (PendingState::AwaitingConfirm { choice }, Said::No) => {
                let title = menu.options[*choice].title.clone();
                let from = menu.state.clone();
                self.store.transition(&menu.id, &from, PendingState::Cancelled)?;
                Ok(Routed::Answer(format!("OK, I won't do “{title}”.")))
            }
            (_, Said::Pick { n, .. }) => self.pick(menu, n),
            (PendingState::Open, Said::Other) => match self.classify(&menu, text).await {
                Some(n) => self.pick(menu, n),
                None => Ok(Routed::PassThrough),
            },
            _ => Ok(Routed::PassThrough),
        }
    }

    fn named_pick(&self, menu: PendingDecision, n: usize, now: DateTime<Utc>) -> Result<Routed, StoreError> {
        match &menu.state {
            PendingState::Superseded { by } => {
                Ok(Routed::Answer(format!("Menu {} was replaced by menu {by}; pick from that one.", menu.id)))
            }
            _ if !menu.live(now) => Ok(Routed::Answer(format!("Menu {} is closed; nothing was run.", menu.id))),
            _ => self.pick(menu, n),
        }
    }

    /// Option `n` (1-based) of a live menu: run it, or ask first when it wants a confirm.
    fn pick(&self, menu: PendingDecision, n: usize) -> Result<Routed, StoreError> {
        let count = menu.options.len();
        if n == 0 || n > count {
            return Ok(Routed::Answer(format!("There is no option {n}: pick 1–{count} (menu {}).", menu.id)));
        }
        let choice = n - 1;
        let from = menu.state.clone();
        if menu.options[choice].confirm && !matches!(from, PendingState::AwaitingConfirm { choice: c } if c == choice) {
            let to = PendingState::AwaitingConfirm { choice };
            if !self.store.transition(&menu.id, &from, to)? {
                return Ok(Routed::Answer(format!("Menu {} was just settled; nothing was run.", menu.id)));
            }
            let title = &menu.options[choice].title;
            return Ok(Routed::Answer(format!("“{title}”: shall I go ahead? Reply yes or no.")));
        }
        self.settle(menu, &from, choice)
    }

    fn settle(&self, menu: PendingDecision, from: &PendingState, choice: usize) -> Result<Routed, StoreError> {
        // Only one reply settles a menu, even from two processes.
        if !self.store.transition(&menu.id, from, PendingState::Done { choice })? {
            return Ok(Routed::Answer(format!("Menu {} was just settled; nothing was run.", menu.id)));
        }
        Ok(Routed::Run { menu, choice })
    }

    /// The classifier's pick (1-based) for free text, when it is sure enough.
    async fn classify(&self, menu: &PendingDecision, text: &str) -> Option<usize> {
        let provider = self.classifier.as_ref()?;
        let options: Vec<String> =
            menu.options.iter().enumerate().map(|(i, o)| format!("{}. {}", i + 1, o.title)).collect();
        let req = CompletionRequest {
            messages: vec![
                ChatMessage::system(
                    "Decide whether the user's reply picks one of the numbered options. \
                     Call classify_reply with the option number (or null) and your confidence from 0 to 1.",
                ),
                ChatMessage::user(format!("Options:\n{}\n\nReply: {text}", options.join("\n"))),
            ],
            tools: vec![ToolSchema {
                name: CLASSIFY_TOOL.into(),
                description: "Which option the reply picks.".into(),
                parameters: json!({"type": "object", "properties": {
                    "choice": {"type": ["integer", "null"]}, "confidence": {"type": "number"}},
                    "required": ["choice", "confidence"]}),
            }],
            tool_choice: Some(CLASSIFY_TOOL.into()),
            generation: Generation { max_tokens: 64, temperature: 0.0, caller: Caller::Other },
            context: None,
        };
        match provider.complete(&req).await {
            Ok(reply) => {
                let call = reply.first_call().filter(|c| c.name == CLASSIFY_TOOL)?;
                let n = call.arguments.get("choice")?.as_u64()? as usize;
                let confidence = call.arguments.get("confidence")?.as_f64()?;
                (confidence >= self.threshold).then_some(n)
            }
            Err(e) => {
                tracing::warn!("the pick classifier failed; the reply passes through: {e}");
                None
            }
        }
    }
}

#[cfg(test)]
mod tests;
