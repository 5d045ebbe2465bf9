//! `list_jobs()`: the user's reminders, read only, so a micro-agent gets it too.

use super::{schema, CronJobs, Tool, ToolCtx};
use crate::llm::provider::ToolSchema;
use futures_util::future::LocalBoxFuture;
use serde_json::{json, Value};
use std::rc::Rc;

/// It takes no arguments: whatever comes is not read.
pub struct ListJobsTool {
    pub jobs: Rc<dyn CronJobs>,
}

impl Tool for ListJobsTool {
    fn schema(&self) -> ToolSchema {
        schema("list_jobs", "List the user's scheduled reminders (read only).", json!({}), &[])
    }

    fn for_micro_agent(&self) -> bool {
        true
    }

    fn call<'a>(&'a self, _: &'a Value, _: &'a ToolCtx) -> LocalBoxFuture<'a, String> {
        Box::pin(async move {
            match self.jobs.list() {
                Ok(l) if l.is_empty() => "no reminders are scheduled".into(),
                Ok(l) => l.join("\n"),
                Err(e) => format!("error: {e}"),
            }
        })
    }
}
