//! The jobs store behind the agent's `cron` tool.

use super::schedule::{parse_cron, parse_tz};
use super::store::{Job, JobState, JobsStore, Schedule};
use crate::agent::tools::{CronJobs, ToolCtx};
use chrono::{DateTime, Duration, NaiveTime, TimeZone, Utc};
use chrono_tz::Tz;
use serde_json::Value;

pub struct JobsCron {
    pub store: JobsStore,
    pub tz: Tz,
}

/// A job as a caller asks for it (the tool, `raven cron add`); the id and the state are the
/// store's.
#[derive(Debug, Clone)]
pub struct NewJob {
    pub message: String,
    pub schedule: Schedule,
    pub target: Option<String>,
    pub broadcast: Vec<String>,
    pub topic: Option<String>,
}

impl JobsCron {
    /// When, from the tool's (and the CLI's) arguments: `in_s`, `at_local` (HH:MM), `at`
    /// (RFC 3339), `every_s` or `cron` (+ `tz`).
    pub fn schedule(&self, spec: &Value, now: DateTime<Utc>) -> Result<Schedule, String> {
        let s = |k: &str| spec.get(k).and_then(Value::as_str);
        if let Some(secs) = spec.get("in_s").and_then(Value::as_i64) {
            return (secs > 0)
                .then(|| Schedule::At { at: now + Duration::seconds(secs) })
                .ok_or("in_s must be positive".into());
        }
        if let Some(hm) = s("at_local") {
            let t = NaiveTime::parse_from_str(hm, "%H:%M").map_err(|_| format!("`{hm}` is not HH:MM"))?;
            let local = now.with_timezone(&self.tz);
            // Today at that time, or tomorrow when it has passed.
            for day in [local.date_naive(), local.date_naive() + Duration::days(1)] {
                if let Some(at) = self.tz.from_local_datetime(&day.and_time(t)).earliest() {
                    let at = at.with_timezone(&Utc);
                    if at > now {
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
                .then_some(Schedule::Every { every_s: every, anchor: now })
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

    /// Stores the job under a fresh id (unique even for two jobs in the same second, from two
    /// processes) and returns it with its first due time.
    pub fn insert(&self, new: NewJob, now: DateTime<Utc>) -> Result<Job, String> {
        if new.message.trim().is_empty() {
            return Err("a job needs a message".into());
        }
        let first = new.schedule.parse()?.first(now);
        let base = format!("job-{}-{}", now.format("%Y%m%d%H%M%S"), std::process::id() % 10_000);
        let mut job = Job {
            id: base.clone(),
            message: new.message.trim().into(),
            schedule: new.schedule,
            target: new.target,
            broadcast: new.broadcast,
            created_at: now,
            enabled: true,
            topic: new.topic,
            state: JobState { next_run_at: first, ..JobState::default() },
        };
        self.store
            .update(|f| {
                let mut n = 1;
                while f.jobs.iter().any(|j| j.id == job.id) {
                    n += 1;
                    job.id = format!("{base}-{n}");
                }
                f.jobs.push(job.clone());
                job
            })
            .map_err(|e| e.to_string())
    }
}

/// One line of a job for a listing: id, when, where, state, message.
pub fn describe(job: &Job) -> String {
    let when = match &job.schedule {
        Schedule::At { at } => format!("at {}", at.to_rfc3339()),
        Schedule::Every { every_s, .. } => format!("every {every_s}s"),
        Schedule::Cron { expr, tz } => format!("cron `{expr}` {tz}"),
    };
    let to = match (&job.target, job.broadcast.is_empty()) {
        (_, false) => format!("broadcast {}", job.broadcast.join(",")),
        (Some(t), true) => t.clone(),
        (None, true) => "silent".into(),
    };
    let state = match (&job.state.paused, job.enabled) {
        (Some(why), _) => format!("paused: {why}"),
        (None, false) => "disabled".into(),
        (None, true) => match job.state.next_run_at {
            Some(t) => format!("next {}", t.to_rfc3339()),
            None => "next: on the next timer run".into(),
        },
    };
    format!("{}  {when}  {to}  {state}  strikes {}  {}", job.id, job.state.strikes, job.message)
}

impl CronJobs for JobsCron {
    fn add(&self, spec: &Value, ctx: &ToolCtx) -> Result<String, String> {
        let message = spec.get("message").and_then(Value::as_str).unwrap_or_default().to_owned();
        let schedule = self.schedule(spec, ctx.now)?;
        let target = Some(format!("{}:{}", ctx.channel, ctx.chat_id));
        let new = NewJob { message, schedule, target, broadcast: Vec::new(), topic: None };
        self.insert(new, ctx.now).map(|j| j.id)
    }

    fn list(&self) -> Result<Vec<String>, String> {
        let file = self.store.load().map_err(|e| e.to_string())?;
        Ok(file.jobs.iter().map(describe).collect())
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
