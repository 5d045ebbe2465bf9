//! `cron(action: add|list|remove, …)`: the user's reminders, scheduled, listed or removed
//! from a conversation. A cron turn may not use it (a runaway loop otherwise).

use super::{args, said, Tool, ToolCtx};
use crate::cron::store::JobsError;
use crate::cron::tool::{JobError, JobsCron, NewJob, WhenSpec};
use crate::llm::provider::ToolSchema;
use futures_util::future::LocalBoxFuture;
use raven_proto::Origin;
use serde::Deserialize;
use serde_json::{json, Value};
use std::rc::Rc;

#[derive(Debug, Default, Deserialize)]
struct Args {
    #[serde(default)]
    action: Option<String>,
    #[serde(default)]
    message: String,
    #[serde(default)]
    id: String,
    #[serde(flatten)]
    when: WhenSpec,
}

/// The jobs store behind the tool (it comes with the cron service).
pub trait CronJobs {
    fn add(&self, message: &str, when: &WhenSpec, ctx: &ToolCtx) -> Result<String, JobError>;
    fn list(&self) -> Result<Vec<String>, JobsError>;
    fn remove(&self, id: &str) -> Result<bool, JobsError>;
}

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

    fn call<'a>(&'a self, given: &'a Value, ctx: &'a ToolCtx) -> LocalBoxFuture<'a, String> {
        Box::pin(async move {
            if ctx.origin == Origin::Cron {
                return "refused: a scheduled (cron) turn cannot create, list or remove cron jobs".into();
            }
            let a = match args::<Args>("cron", given) {
                Ok(a) => a,
                Err(said) => return said,
            };
            match a.action.as_deref() {
                Some("add") => said(self.jobs.add(&a.message, &a.when, ctx).map(|id| format!("scheduled job {id}"))),
                Some("list") => {
                    said(self.jobs.list().map(|l| if l.is_empty() { "no jobs".into() } else { l.join("\n") }))
                }
                Some("remove") => {
                    let id = a.id;
                    said(
                        self.jobs
                            .remove(&id)
                            .map(|gone| if gone { format!("removed {id}") } else { format!("no job {id}") }),
                    )
                }
                other => format!("error: unknown action {other:?}: use add, list or remove"),
            }
        })
    }
}

/// The tool on the user's jobs.json: a job added from a conversation goes back to it.
impl CronJobs for JobsCron {
    fn add(&self, message: &str, when: &WhenSpec, ctx: &ToolCtx) -> Result<String, JobError> {
        let schedule = self.schedule(when, ctx.now)?;
        let target = Some(format!("{}:{}", ctx.channel, ctx.chat_id));
        let new = NewJob { message: message.to_owned(), schedule, target, broadcast: Vec::new(), topic: None };
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
