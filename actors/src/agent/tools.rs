//! The agent's tools. A tool answers with text (the tool result the model reads); refusals
//! and errors are results too, never failures of the turn.

use crate::cron::store::JobsError;
use crate::cron::tool::JobError;
use crate::feedback::tool::{nudge_feedback, tool_schema as feedback_schema};
use crate::feedback::NudgeFeedbackTracker;
use crate::llm::provider::ToolSchema;
use chrono::{DateTime, Utc};
use futures_util::future::LocalBoxFuture;
use raven_proto::Origin;
use serde_json::{json, Value};
use std::rc::Rc;

/// What a tool knows of the turn calling it.
#[derive(Debug, Clone)]
pub struct ToolCtx {
    pub conversation_id: String,
    pub channel: String,
    pub chat_id: String,
    pub now: DateTime<Utc>,
    /// The origin of the turn the call serves (a menu pick's tool runs as the user's).
    pub origin: Origin,
}

pub trait Tool {
    fn schema(&self) -> ToolSchema;
    /// Whether a micro-agent (a `spawn_agent` run, which nobody watches) may use it: only a
    /// tool that reads. One that writes the user's files or jobs, rates a message or asks the
    /// user is never offered to it.
    fn for_micro_agent(&self) -> bool {
        false
    }
    fn call<'a>(&'a self, args: &'a Value, ctx: &'a ToolCtx) -> LocalBoxFuture<'a, String>;
}

/// The jobs store behind the cron tool (it comes with the cron service).
pub trait CronJobs {
    fn add(&self, spec: &Value, ctx: &ToolCtx) -> Result<String, JobError>;
    fn list(&self) -> Result<Vec<String>, JobsError>;
    fn remove(&self, id: &str) -> Result<bool, JobsError>;
}

/// `cron(action: add|list|remove, ...)`.
pub struct CronTool {
    pub jobs: Rc<dyn CronJobs>,
}

impl Tool for CronTool {
    fn schema(&self) -> ToolSchema {
        ToolSchema {
            name: "cron".into(),
            description: "Schedule, list or remove the user's reminders.".into(),
            parameters: json!({
                "type": "object",
                "properties": {
                    "action": {"type": "string", "enum": ["add", "list", "remove"]},
                    "message": {"type": "string"},
                    "when": {"type": "string", "description": "when, as people say it: `in 1h 30m`, `at 7pm`, `tomorrow at 9`, `May 15 at 3pm`, `every weekday at 9`, `every month on the 20th`, `every 2 hours`, `@daily`"},
                    "at": {"type": "string", "description": "RFC 3339 time for a one-shot job"},
                    "every_s": {"type": "integer"},
                    "cron": {"type": "string", "description": "5 or 6 field cron expression"},
                    "tz": {"type": "string", "description": "IANA zone the time is read in (default: the user's)"},
                    "id": {"type": "string"}
                },
                "required": ["action"]
            }),
        }
    }

    fn call<'a>(&'a self, args: &'a Value, ctx: &'a ToolCtx) -> LocalBoxFuture<'a, String> {
        Box::pin(async move {
            // A cron turn must not schedule more cron jobs (a runaway loop otherwise).
            if ctx.origin == Origin::Cron {
                return "refused: a scheduled (cron) turn cannot create, list or remove cron jobs".into();
            }
            match args.get("action").and_then(Value::as_str) {
                Some("add") => said(self.jobs.add(args, ctx).map(|id| format!("scheduled job {id}"))),
                Some("list") => {
                    said(self.jobs.list().map(|l| if l.is_empty() { "no jobs".into() } else { l.join("\n") }))
                }
                Some("remove") => {
                    let id = args.get("id").and_then(Value::as_str).unwrap_or_default();
                    said(
                        self.jobs
                            .remove(id)
                            .map(|gone| if gone { format!("removed {id}") } else { format!("no job {id}") }),
                    )
                }
                other => format!("error: unknown action {other:?}: use add, list or remove"),
            }
        })
    }
}

/// A tool's outcome as the model reads it: the text, or `error: …`.
fn said(r: Result<String, impl std::fmt::Display>) -> String {
    r.unwrap_or_else(|e| format!("error: {e}"))
}

/// `nudge_feedback(verdict, nudge_id, reason)`.
pub struct FeedbackTool {
    pub tracker: Rc<NudgeFeedbackTracker>,
}

impl Tool for FeedbackTool {
    fn schema(&self) -> ToolSchema {
        feedback_schema()
    }

    fn call<'a>(&'a self, args: &'a Value, ctx: &'a ToolCtx) -> LocalBoxFuture<'a, String> {
        Box::pin(async move { said(nudge_feedback(&self.tracker, args, ctx.now)) })
    }
}

/// The agent's `cron` tool on the user's jobs.json.
impl CronJobs for crate::cron::tool::JobsCron {
    fn add(&self, spec: &Value, ctx: &ToolCtx) -> Result<String, JobError> {
        let message = spec.get("message").and_then(Value::as_str).unwrap_or_default().to_owned();
        let schedule = self.schedule(spec, ctx.now)?;
        let target = Some(format!("{}:{}", ctx.channel, ctx.chat_id));
        let new = crate::cron::tool::NewJob { message, schedule, target, broadcast: Vec::new(), topic: None };
        self.insert(new, ctx.now).map(|j| j.id)
    }

    fn list(&self) -> Result<Vec<String>, JobsError> {
        let file = self.store.load()?;
        Ok(file.jobs.iter().map(|j| crate::cron::tool::describe(j, self.tz)).collect())
    }

    fn remove(&self, id: &str) -> Result<bool, JobsError> {
        self.store.update(|f| {
            let before = f.jobs.len();
            f.jobs.retain(|j| j.id != id);
            f.jobs.len() != before
        })
    }
}
