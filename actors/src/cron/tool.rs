//! The jobs store behind the agent's `cron` tool and the CLI's `raven cron`: a schedule from
//! what people say, a new job, a job in one line.

use super::schedule::{parse_tz, ScheduleError};
use super::store::JobsError;
use super::store::{Job, JobState, JobsStore, Schedule};
use crate::delivery::targets::TargetError;
use crate::time::TimeError;
use crate::time::{parse_when, DateOrder, When};
use chrono::{DateTime, Utc};
use chrono_tz::Tz;

pub struct JobsCron {
    pub store: JobsStore,
    pub tz: Tz,
    pub order: DateOrder,
    /// Where a job may deliver: a target on another channel is refused when the job is added.
    pub channels: crate::delivery::targets::Channels,
}

/// What the store keeps for a parsed time: a one-shot, an interval anchored now, or a cron
/// expression in its zone.
pub fn schedule_of(when: When, now: DateTime<Utc>) -> Schedule {
    match when {
        When::Once(at) => Schedule::At { at },
        When::Every(d) => Schedule::Every { every_s: d.num_seconds().unsigned_abs(), anchor: now },
        When::Cron { expr, tz } => Schedule::Cron { expr, tz: tz.name().to_owned() },
    }
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

/// Why a job was not scheduled: said to the user (the CLI) or the model (the `cron` tool).
#[derive(Debug, thiserror::Error)]
pub enum JobError {
    #[error(transparent)]
    When(#[from] TimeError),
    #[error(transparent)]
    Schedule(#[from] ScheduleError),
    #[error("`{0}` is not a cron expression or @hourly/@daily/@weekly/@monthly")]
    NotCron(String),
    #[error(
        "say when: `when` (e.g. \"in 10m\", \"tomorrow at 9\", \"every weekday at 9\"), in_s, at, every_s or cron"
    )]
    NoWhen,
    #[error("a job needs a message")]
    NoMessage,
    #[error(transparent)]
    Target(#[from] TargetError),
    #[error(transparent)]
    Store(#[from] JobsError),
}

/// When a job is due, as the agent's `cron` tool and `raven cron add` say it: `when` (any form
/// people say: `in 1h 30m`, `tomorrow at 9`, `every weekday at 9`), or the older keys `in_s`,
/// `at_local` (HH:MM), `at` (RFC 3339 or any one-shot form), `every_s` or `cron` (an expression
/// or `@daily`), the first given counting. `tz` applies to every form.
#[derive(Debug, Clone, Default, PartialEq, serde::Deserialize)]
#[serde(default)]
pub struct WhenSpec {
    pub when: Option<String>,
    pub in_s: Option<serde_json::Number>,
    pub at_local: Option<String>,
    pub at: Option<String>,
    pub every_s: Option<serde_json::Number>,
    pub cron: Option<String>,
    pub tz: Option<String>,
}

impl JobsCron {
    /// The schedule `spec` says, every form read by the one time parser.
    pub fn schedule(&self, spec: &WhenSpec, now: DateTime<Utc>) -> Result<Schedule, JobError> {
        let tz = spec.tz.as_deref().map(parse_tz).transpose()?.unwrap_or(self.tz);
        let text = if let Some(w) = &spec.when {
            w.clone()
        } else if let Some(n) = &spec.in_s {
            format!("in {n}s")
        } else if let Some(hm) = &spec.at_local {
            format!("at {hm}")
        } else if let Some(at) = &spec.at {
            at.clone()
        } else if let Some(n) = &spec.every_s {
            format!("every {n}s")
        } else if let Some(expr) = &spec.cron {
            let when = parse_when(expr, now, tz, self.order)?;
            return match when {
                When::Cron { .. } => Ok(schedule_of(when, now)),
                _ => Err(JobError::NotCron(expr.clone())),
            };
        } else {
            return Err(JobError::NoWhen);
        };
        Ok(parse_when(&text, now, tz, self.order).map(|w| schedule_of(w, now))?)
    }

    /// Stores the job under a fresh id (unique even for two jobs in the same second, from two
    /// processes) and returns it with its first due time.
    pub fn insert(&self, new: NewJob, now: DateTime<Utc>) -> Result<Job, JobError> {
        if new.message.trim().is_empty() {
            return Err(JobError::NoMessage);
        }
        for target in new.target.iter().chain(&new.broadcast) {
            self.channels.check(target)?;
        }
        let first = new.schedule.parse()?.first(now);
        let mut job = Job {
            id: super::ids::new_id(now, &new.message, 0),
            message: new.message.trim().into(),
            schedule: new.schedule,
            target: new.target,
            broadcast: new.broadcast,
            created_at: now,
            enabled: true,
            topic: new.topic,
            state: JobState { next_run_at: first, ..JobState::default() },
            extra: Default::default(),
        };
        self.store
            .update(|f| {
                let mut attempt = 0;
                while f.jobs.iter().any(|j| j.id == job.id) {
                    attempt += 1;
                    job.id = super::ids::new_id(now, &job.message, attempt);
                }
                f.jobs.push(job.clone());
                job
            })
            .map_err(JobError::from)
    }
}

/// One line of a job for a listing: id, when, where, state, message; times in `tz`, to the
/// minute (the caller names the zone once).
pub fn describe(job: &Job, tz: Tz) -> String {
    let when = match &job.schedule {
        Schedule::At { at } => format!("at {}", crate::time::local(*at, tz)),
        Schedule::Every { every_s, .. } => {
            format!("every {}", humantime::format_duration(std::time::Duration::from_secs(*every_s)))
        }
        Schedule::Cron { .. } => super::words::in_words(&job.schedule, tz),
    };
    let to = match (&job.target, job.broadcast.is_empty()) {
        (_, false) => format!("broadcast {}", job.broadcast.join(",")),
        (Some(t), true) => t.clone(),
        (None, true) => "silent".into(),
    };
    let state = match (&job.state.paused, job.enabled) {
        (Some(why), _) if why.to_string().starts_with("paused") => why.to_string(),
        (Some(why), _) => format!("paused: {why}"),
        (None, false) => "disabled".into(),
        (None, true) => match job.state.next_run_at {
            Some(t) => format!("next {}", crate::time::local(t, tz)),
            None => "next: on the next timer run".into(),
        },
    };
    // One line a job: a message of several lines is shown joined.
    let message = job.message.lines().map(str::trim).filter(|l| !l.is_empty()).collect::<Vec<_>>().join(" / ");
    format!("{}  {when}  {to}  {state}  strikes {}  {message}", job.id, job.state.strikes)
}
