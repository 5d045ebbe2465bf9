//! Pausing a job by hand (`/stop` on a reminder) and resuming it (`raven cron resume`).

use super::store::{JobsError, JobsStore};
use chrono::{DateTime, Utc};

/// What a pause or a resume found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PauseOutcome {
    Done,
    /// Already in the asked state: nothing written.
    Already,
    NoSuchJob,
}

impl JobsStore {
    /// Stops the job from firing, with `why` shown by `cron list`, until it is resumed.
    pub fn pause(&self, id: &str, why: &str) -> Result<PauseOutcome, JobsError> {
        self.update(|f| match f.jobs.iter_mut().find(|j| j.id == id) {
            None => PauseOutcome::NoSuchJob,
            Some(j) if j.state.paused.is_some() => PauseOutcome::Already,
            Some(j) => {
                j.state.paused = Some(why.to_owned());
                j.state.claim = None;
                PauseOutcome::Done
            }
        })
    }

    /// Lets a paused (or disabled) job fire again from its next due time after `now`, with
    /// its strikes forgiven; a missed fire is not caught up.
    pub fn resume(&self, id: &str, now: DateTime<Utc>) -> Result<PauseOutcome, JobsError> {
        self.update(|f| match f.jobs.iter_mut().find(|j| j.id == id) {
            None => PauseOutcome::NoSuchJob,
            Some(j) if j.state.paused.is_none() && j.enabled => PauseOutcome::Already,
            Some(j) => {
                j.enabled = true;
                j.state.paused = None;
                j.state.strikes = 0;
                j.state.next_run_at = j.schedule.parse().ok().and_then(|p| p.first(now));
                if j.state.next_run_at.is_none() {
                    j.state.paused = Some("the schedule has no future time".into());
                }
                PauseOutcome::Done
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cron::store::{Job, JobState, Schedule};
    use chrono::{Duration, TimeZone};

    #[test]
    fn a_paused_job_resumes_from_its_next_time_and_unknown_ids_are_said() {
        let dir = tempfile::tempdir().unwrap();
        let store = JobsStore::new(dir.path().join("jobs.json"));
        let t0 = Utc.with_ymd_and_hms(2026, 3, 2, 8, 0, 0).unwrap();
        let job = Job {
            id: "water".into(),
            message: "drink water".into(),
            schedule: Schedule::Every { every_s: 3600, anchor: t0 },
            target: Some("cli:local".into()),
            broadcast: Vec::new(),
            created_at: t0,
            enabled: true,
            topic: None,
            state: JobState { next_run_at: Some(t0 + Duration::hours(1)), ..JobState::default() },
            extra: Default::default(),
        };
        store.update(|f| f.jobs.push(job)).unwrap();
        assert_eq!(store.pause("water", "stopped by the user").unwrap(), PauseOutcome::Done);
        assert_eq!(store.pause("water", "again").unwrap(), PauseOutcome::Already);
        assert_eq!(store.load().unwrap().jobs[0].state.paused.as_deref(), Some("stopped by the user"));
        let later = t0 + Duration::hours(5) + Duration::minutes(10);
        assert_eq!(store.resume("water", later).unwrap(), PauseOutcome::Done);
        let j = &store.load().unwrap().jobs[0];
        assert_eq!(j.state.paused, None);
        assert!(j.state.next_run_at.unwrap() > later, "no catch-up of the fires missed while paused");
        assert_eq!(store.resume("nope", later).unwrap(), PauseOutcome::NoSuchJob);
    }
}
