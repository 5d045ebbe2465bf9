//! The jobs store behind the agent's `cron` tool.

use super::schedule::{parse_cron, parse_tz};
use super::store::{Job, JobState, JobsStore, Schedule};
use crate::agent::tools::{CronJobs, ToolCtx};
use chrono::{Duration, NaiveTime, TimeZone, Utc};
use chrono_tz::Tz;
use serde_json::Value;

pub struct JobsCron {
    pub store: JobsStore,
    pub tz: Tz,
}

impl JobsCron {
    fn schedule(&self, spec: &Value, ctx: &ToolCtx) -> Result<Schedule, String> {
        let s = |k: &str| spec.get(k).and_then(Value::as_str);
        if let Some(secs) = spec.get("in_s").and_then(Value::as_i64) {
            return (secs > 0)
                .then(|| Schedule::At { at: ctx.now + Duration::seconds(secs) })
                .ok_or("in_s must be positive".into());
        }
        if let Some(hm) = s("at_local") {
            let t = NaiveTime::parse_from_str(hm, "%H:%M").map_err(|_| format!("`{hm}` is not HH:MM"))?;
            let local = ctx.now.with_timezone(&self.tz);
            // Today at that time, or tomorrow when it has passed.
            for day in [local.date_naive(), local.date_naive() + Duration::days(1)] {
                if let Some(at) = self.tz.from_local_datetime(&day.and_time(t)).earliest() {
                    let at = at.with_timezone(&Utc);
                    if at > ctx.now {
                        return Ok(Schedule::At { at });
                    }
                }
            }
            return Err(format!("no {hm} in the next day in {}", self.tz));
        }
        if let Some(at) = s("at") {
            let at = chrono::DateTime::parse_from_rfc3339(at).map_err(|e| format!("`at`: {e}"))?;
            return Ok(Schedule::At { at: at.with_timezone(&Utc) });
        }
        if let Some(every) = spec.get("every_s").and_then(Value::as_u64) {
            return (every > 0)
                .then_some(Schedule::Every { every_s: every, anchor: ctx.now })
                .ok_or("every_s must be positive".into());
        }
        if let Some(expr) = s("cron") {
            let tz = s("tz").unwrap_or(self.tz.name());
            parse_cron(expr)?;
            parse_tz(tz)?;
            return Ok(Schedule::Cron { expr: expr.into(), tz: tz.into() });
        }
        Err("say when: in_s, at_local (HH:MM), at (RFC 3339), every_s or cron".into())
    }
}

impl CronJobs for JobsCron {
    fn add(&self, spec: &Value, ctx: &ToolCtx) -> Result<String, String> {
        let message = spec.get("message").and_then(Value::as_str).map(str::trim).unwrap_or_default();
        if message.is_empty() {
            return Err("a job needs a message".into());
        }
        let schedule = self.schedule(spec, ctx)?;
        let id = format!("job-{}-{}", ctx.now.format("%Y%m%d%H%M%S"), std::process::id() % 10_000);
        let job = Job {
            id: id.clone(),
            message: message.into(),
            schedule,
            target: Some(format!("{}:{}", ctx.channel, ctx.chat_id)),
            created_at: ctx.now,
            enabled: true,
            topic: None,
            broadcast: Vec::new(),
            state: JobState::default(),
        };
        self.store
            .update(|f| {
                // Unique even for two jobs in the same second.
                let mut job = job;
                let mut n = 1;
                while f.jobs.iter().any(|j| j.id == job.id) {
                    n += 1;
                    job.id = format!("{id}-{n}");
                }
                let id = job.id.clone();
                f.jobs.push(job);
                id
            })
            .map_err(|e| e.to_string())
    }

    fn list(&self) -> Result<Vec<String>, String> {
        let file = self.store.load().map_err(|e| e.to_string())?;
        Ok(file.jobs.iter().map(|j| format!("{}  {:?}  {}", j.id, j.schedule, j.message)).collect())
    }

    fn remove(&self, id: &str) -> Result<bool, String> {
        self.store
            .update(|f| {
                let before = f.jobs.len();
                f.jobs.retain(|j| j.id != id);
                f.jobs.len() != before
            })
            .map_err(|e| e.to_string())
    }
}
