//! Why a job stopped firing, and getting it going again: strike decay (unanswered fires),
//! a stop by the user (`/stop` on a reminder), or a schedule that gives no next time. The
//! first two are resumed by `raven cron resume` (and strike decay also by a reply on the
//! job's conversation); a job set aside as unschedulable is refused, with its reason.

use super::store::{Job, JobsError, JobsStore, Schedule};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

/// The reason a job is not firing, as `state.paused` keeps it.
///
/// On disk it stays one line of text (what `raven cron list` shows, and what every version
/// of jobs.json reads and writes back); the kind is told by its wording, so a file written
/// before the kinds existed reads the same.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(from = "String", into = "String")]
pub enum Paused {
    /// Strike decay: `fires` fires in a row went unanswered.
    Strikes { fires: u32 },
    /// Set aside: the schedule is unusable or has no future time (the text says which).
    Unschedulable(String),
    /// Stopped by the user (`/stop`), or any other reason written by hand.
    Stopped(String),
}

const UNUSABLE: &str = "unusable schedule: ";
const NO_FUTURE_TIME: &str = "the schedule has no future time";

impl Paused {
    /// A schedule that cannot be read.
    pub fn unusable(why: impl std::fmt::Display) -> Self {
        Paused::Unschedulable(format!("{UNUSABLE}{why}"))
    }

    /// A schedule with no slot left.
    pub fn no_future_time() -> Self {
        Paused::Unschedulable(NO_FUTURE_TIME.to_owned())
    }

    /// What the user is told once when strike decay pauses `job`; `None` for the other kinds,
    /// which the user chose or which `raven cron list` shows.
    pub fn notice(&self, job: &Job) -> Option<String> {
        let Paused::Strikes { fires } = self else { return None };
        Some(format!(
            "⏸ Paused the reminder “{}”: it went unanswered {fires} times in a row. Reply here, or send \
             /resume {}, to resume it (raven cron resume {} on the machine).",
            job.message, job.id, job.id
        ))
    }

    /// The strike text for `text`, when that is exactly what a strike pause writes.
    fn strikes_in(text: &str) -> Option<Paused> {
        let n = text.strip_prefix("paused after ")?;
        let n = n.strip_suffix(" fires with no reply").or_else(|| n.strip_suffix(" fire with no reply"))?;
        let strikes = Paused::Strikes { fires: n.parse().ok()? };
        (strikes.to_string() == text).then_some(strikes)
    }
}

impl std::fmt::Display for Paused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Paused::Strikes { fires: 1 } => f.write_str("paused after 1 fire with no reply"),
            Paused::Strikes { fires } => write!(f, "paused after {fires} fires with no reply"),
            Paused::Unschedulable(why) | Paused::Stopped(why) => f.write_str(why),
        }
    }
}

impl From<String> for Paused {
    fn from(text: String) -> Self {
        if let Some(strikes) = Paused::strikes_in(&text) {
            strikes
        } else if text.starts_with(UNUSABLE) || text == NO_FUTURE_TIME {
            Paused::Unschedulable(text)
        } else {
            Paused::Stopped(text)
        }
    }
}

impl From<Paused> for String {
    fn from(p: Paused) -> Self {
        p.to_string()
    }
}

/// What a pause or a resume found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PauseOutcome {
    Done,
    /// Already in the asked state: nothing written.
    Already,
    NoSuchJob,
}

#[derive(Debug, thiserror::Error)]
pub enum ResumeError {
    #[error(transparent)]
    Jobs(#[from] JobsError),
    /// Its schedule gives no next time: resuming cannot help until the schedule is fixed.
    #[error(
        "job {id} was set aside as unschedulable and cannot be resumed until its schedule is fixed in \
         jobs.json (or the job removed: `raven cron rm {id}`). Reason: {reason}"
    )]
    Unschedulable { id: String, reason: Paused },
}

/// The first slot of `schedule` after `now`, or why there is none.
fn next_slot(schedule: &Schedule, now: DateTime<Utc>) -> Result<DateTime<Utc>, Paused> {
    let parsed = schedule.parse().map_err(Paused::unusable)?;
    parsed.first(now).ok_or_else(Paused::no_future_time)
}

/// Lets `job` fire again from its next slot after `now`, strikes forgiven (a missed fire is
/// not caught up). A job whose schedule gives no next time is left as it is: the reason is
/// returned.
pub(super) fn resume_job(job: &mut Job, now: DateTime<Utc>) -> Result<(), Paused> {
    let next = next_slot(&job.schedule, now)?;
    job.enabled = true;
    job.state.paused = None;
    job.state.strikes = 0;
    job.state.next_run_at = Some(next);
    Ok(())
}

impl JobsStore {
    /// Stops the job from firing, with `why` shown by `cron list`, until it is resumed.
    pub fn pause(&self, id: &str, why: &str) -> Result<PauseOutcome, JobsError> {
        self.update(|f| match f.jobs.iter_mut().find(|j| j.id == id) {
            None => PauseOutcome::NoSuchJob,
            Some(j) if j.state.paused.is_some() => PauseOutcome::Already,
            Some(j) => {
                j.state.paused = Some(Paused::from(why.to_owned()));
                j.state.claim = None;
                PauseOutcome::Done
            }
        })
    }

    /// Lets a paused (or disabled) job fire again from its next due time after `now`, with
    /// its strikes forgiven; a missed fire is not caught up. A job whose schedule gives no
    /// next time is refused with the reason, and left as it is.
    pub fn resume(&self, id: &str, now: DateTime<Utc>) -> Result<PauseOutcome, ResumeError> {
        let refused = |reason| ResumeError::Unschedulable { id: id.to_owned(), reason };
        self.update(|f| match f.jobs.iter_mut().find(|j| j.id == id) {
            None => Ok(PauseOutcome::NoSuchJob),
            Some(j) if j.state.paused.is_none() && j.enabled => Ok(PauseOutcome::Already),
            Some(j) => resume_job(j, now).map(|()| PauseOutcome::Done).map_err(refused),
        })?
    }
}

#[cfg(test)]
mod tests;
