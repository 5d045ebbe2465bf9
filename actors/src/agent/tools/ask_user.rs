//! `ask_user(questions: [{question, choices, header, recommended}])`: a turn asks the user and
//! waits for the answers (the [`QuestionBroker`] keeps one question a conversation and its
//! fail-safe). Only the user's own turns may ask: a background turn would ask on a channel
//! nobody answers and hold its slot until the timeout.

use super::{args, Tool, ToolCtx};
use crate::agent::broker::{ClarifyRequest, QuestionBroker};
use crate::llm::provider::ToolSchema;
use futures_util::future::LocalBoxFuture;
use serde::Deserialize;
use serde_json::{json, Value};
use std::rc::Rc;

#[derive(Debug, Default, Deserialize)]
struct Args {
    #[serde(default)]
    questions: Option<Vec<Question>>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct Question {
    question: String,
    choices: Vec<String>,
    header: String,
    recommended: Option<String>,
}

impl From<Question> for ClarifyRequest {
    fn from(q: Question) -> Self {
        ClarifyRequest {
            question: q.question,
            choices: q.choices,
            header: q.header,
            recommended: q.recommended,
            timeout_s: 0,
            index: 0,
            total: 0,
            batch: String::new(),
        }
    }
}

pub struct AskUserTool {
    pub broker: Rc<QuestionBroker>,
}

impl Tool for AskUserTool {
    fn schema(&self) -> ToolSchema {
        ToolSchema {
            name: "ask_user".into(),
            description: "Ask the user one or more multiple-choice questions and wait for the answers.".into(),
            parameters: json!({
                "type": "object",
                "properties": {"questions": {"type": "array", "items": {"type": "object", "properties": {
                    "question": {"type": "string"}, "choices": {"type": "array", "items": {"type": "string"}},
                    "header": {"type": "string"}, "recommended": {"type": "string"}}, "required": ["question"]}}},
                "required": ["questions"]
            }),
        }
    }

    fn call<'a>(&'a self, given: &'a Value, ctx: &'a ToolCtx) -> LocalBoxFuture<'a, String> {
        Box::pin(async move {
            if !ctx.origin.is_user_input() {
                return "refused: ask_user is for the user's own turns; decide with what you know".into();
            }
            let questions = match args::<Args>("ask_user", given) {
                Ok(Args { questions: Some(q) }) => q,
                Ok(Args { questions: None }) => {
                    return "error: ask_user needs `questions`, a list of {question, choices}".into()
                }
                Err(said) => return said,
            };
            let asked: Vec<ClarifyRequest> = questions.into_iter().map(ClarifyRequest::from).collect();
            let answers = self.broker.ask(&ctx.conversation_id, asked).await;
            json!({"answers": answers}).to_string()
        })
    }
}
