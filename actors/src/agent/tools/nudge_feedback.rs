//! `nudge_feedback(verdict, nudge_id?, reason?)`: the model rates a proactive message while it
//! answers the user (the rule is [`crate::feedback::tool`]'s). Without `nudge_id`, the latest
//! proactive message of the conversation the call was made in is meant.

use super::{args, said, Tool, ToolCtx};
use crate::feedback::tool::{nudge_feedback, ModelVerdict};
use crate::feedback::NudgeFeedbackTracker;
use crate::llm::provider::ToolSchema;
use futures_util::future::LocalBoxFuture;
use serde::Deserialize;
use serde_json::{json, Value};
use std::rc::Rc;

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct Args {
    verdict: String,
    nudge_id: String,
    reason: String,
}

pub struct FeedbackTool {
    pub tracker: Rc<NudgeFeedbackTracker>,
}

impl Tool for FeedbackTool {
    fn schema(&self) -> ToolSchema {
        ToolSchema {
            name: "nudge_feedback".into(),
            description: "Record how the user reacted to a proactive message (its id is shown beside it in the \
conversation). Without nudge_id, the latest proactive message of this conversation is meant."
                .into(),
            parameters: json!({
                "type": "object",
                "properties": {
                    "verdict": {"type": "string", "enum": ["accepted", "dismissed", "neutral"]},
                    "nudge_id": {"type": "string"},
                    "reason": {"type": "string"}
                },
                "required": ["verdict"]
            }),
        }
    }

    fn call<'a>(&'a self, given: &'a Value, ctx: &'a ToolCtx) -> LocalBoxFuture<'a, String> {
        Box::pin(async move {
            let a = match args::<Args>("nudge_feedback", given) {
                Ok(a) => a,
                Err(said) => return said,
            };
            let session = ctx.session();
            let verdict =
                ModelVerdict { verdict: &a.verdict, nudge_id: &a.nudge_id, reason: &a.reason, session: &session };
            said(nudge_feedback(&self.tracker, verdict, ctx.now))
        })
    }
}
