//! Who fires which job, decided under the jobs.json lock: a due job is claimed with the pid and
//! the time, the claim is saved, the lock released, the job run out of the lock, and the
//! result written back under the lock again. A claim older than the TTL (its process died) is
//! anyone's again. Pure functions over a [`RunEdit`] (the run state of the jobs), so the rules
//! test without files.

use super::pause::Paused;
use super::store::{Claim, Job, JobsFile, RunEdit};
use chrono::{DateTime, Duration, Utc};

/// Which jobs an engine may take: everything (the supervisor) or only jobs whose every
/// delivery channel is listed (an embedded REPL takes `cli` jobs only, never stealing one
/// meant for a real channel; silent jobs stay with the supervisor).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ChannelFilter(pub Option<Vec<String>>);

impl ChannelFilter {
    #[cfg(test)]
    pub fn only(channels: &[&str]) -> Self {
        ChannelFilter(Some(channels.iter().map(|c| c.to_string()).collect()))
    }

    pub fn admits(&self, job: &Job) -> bool {
        match &self.0 {
            None => true,
            Some(allowed) => {
                let channels = job.channels();
                !channels.is_empty() && channels.iter().all(|c| allowed.contains(c))
            }
        }
    }
}

/// Whether a fire reached anybody: only a fire that was delivered can go unanswered, so only
/// such a fire can count as a strike (a channel that is down pauses nothing).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reached {
    Someone,
    Nobody,
}

/// The claim rules of one process.
#[derive(Debug, Clone)]
pub struct Claimer {
    pub pid: u32,
    pub ttl: Duration,
    pub filter: ChannelFilter,
    /// A recurring job pauses after this many fires with no user reply.
    pub strike_limit: u32,
    /// Only a job whose slots can come closer together than this counts strikes: a daily
    /// (or rarer) one never pauses for want of a reply.
    pub strike_min_gap: Duration,
}

/// What happened to a fired job, for [`Claimer::complete`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Completion {
    /// Still ours: written back.
    Done { paused: Option<Paused> },
    /// Somebody else holds it now (our claim went stale) or it is gone: nothing written.
    Lost,
}

impl Claimer {
    fn stale(&self, c: &Claim, now: DateTime<Utc>) -> bool {
        c.at + self.ttl <= now
    }

    /// Gives a job seen for the first time its first due time; an unusable schedule pauses it
    /// with the reason rather than failing the whole file.
    fn arm(edit: &mut RunEdit<'_>, i: usize, now: DateTime<Utc>) {
        let job = &edit.jobs()[i];
        if job.state.paused.is_some() || job.state.done_at.is_some() || !job.enabled {
            return;
        }
        // Armed and not due: nothing to check now. (Parsing every schedule on every claim was
        // most of a claim's cost with 10,000 jobs.)
        if job.state.next_run_at.is_some_and(|t| t > now) {
            return;
        }
        let armed = job.state.next_run_at.is_some();
        // However it got into jobs.json (a hand edit, an older version), a job that cannot be
        // scheduled is set aside with its reason before it fires, and the others keep firing.
        let first = job.schedule.parse().map(|p| p.first(job.created_at));
        match first {
            Err(e) => {
                let state = edit.state_mut(i);
                state.paused = Some(Paused::unusable(e));
                state.next_run_at = None;
            }
            Ok(_) if armed => {}
            Ok(Some(t)) => edit.state_mut(i).next_run_at = Some(t),
            Ok(None) => edit.state_mut(i).paused = Some(Paused::no_future_time()),
        }
    }

    fn live(&self, job: &Job) -> bool {
        job.enabled && job.state.paused.is_none() && job.state.done_at.is_none() && self.filter.admits(job)
    }

    /// Claims every due job this process may take. A job due many times while nothing ran is
    /// claimed once (catch-up), for its oldest slot.
    pub fn claim_due(&self, edit: &mut RunEdit<'_>, now: DateTime<Utc>) -> Vec<Job> {
        let mut claimed = Vec::new();
        for i in 0..edit.jobs().len() {
            Self::arm(edit, i, now);
            let job = &edit.jobs()[i];
            if !self.live(job) {
                continue;
            }
            let Some(slot) = job.state.next_run_at.filter(|t| *t <= now) else { continue };
            if job.state.claim.is_some_and(|c| !self.stale(&c, now)) {
                continue;
            }
            if let Some(old) = job.state.claim {
                tracing::warn!(job = %job.id, pid = old.pid, "taking over a stale claim from {}", old.at);
            }
            edit.state_mut(i).claim = Some(Claim { pid: self.pid, at: now, slot });
            claimed.push(edit.jobs()[i].clone());
        }
        claimed
    }

    /// Writes a fire back: clears our claim, moves the job to its next slot after `now`
    /// (missed slots are not replayed), counts a strike when the fire reached somebody and the
    /// job's slots come closer than `strike_min_gap`, pauses on the strike limit; a one-shot job
    /// is done (and gone for every reader).
    pub fn complete(
        &self,
        edit: &mut RunEdit<'_>,
        job_id: &str,
        claim: &Claim,
        reached: Reached,
        now: DateTime<Utc>,
    ) -> Completion {
        let live = |j: &Job| j.id == job_id && j.state.done_at.is_none();
        let Some(i) = edit.jobs().iter().position(live) else { return Completion::Lost };
        let job = &edit.jobs()[i];
        if job.state.claim.as_ref() != Some(claim) {
            return Completion::Lost;
        }
        let recurring = job.schedule.recurring();
        let strikes = recurring && reached == Reached::Someone && self.strikes(job, now);
        let next = job.schedule.parse().map(|p| p.next_after(now.max(claim.slot)));
        let s = edit.state_mut(i);
        s.claim = None;
        s.last_run_at = Some(now);
        s.runs += 1;
        if !recurring {
            s.done_at = Some(now);
            s.next_run_at = None;
            return Completion::Done { paused: None };
        }
        if strikes {
            s.strikes += 1;
        }
        s.next_run_at = next.as_ref().ok().copied().flatten();
        if strikes && s.strikes >= self.strike_limit {
            s.paused = Some(Paused::Strikes { fires: s.strikes });
        } else if let Err(e) = next {
            s.paused = Some(Paused::unusable(e));
        } else if s.next_run_at.is_none() {
            s.paused = Some(Paused::no_future_time());
        }
        Completion::Done { paused: s.paused.clone() }
    }

    /// Whether a fire of `job` that reached somebody counts as a strike: it told somebody (a silent job tells nobody,
    /// so nobody's silence counts against it) and its slots can come closer together than
    /// `strike_min_gap`.
    fn strikes(&self, job: &Job, now: DateTime<Utc>) -> bool {
        let frequent = || {
            let gap = job.schedule.parse().ok().and_then(|p| p.shortest_gap(now));
            gap.is_some_and(|g| g < self.strike_min_gap)
        };
        !job.channels().is_empty() && frequent()
    }

    /// When this process next has something to do: the earliest due job it may take, or the
    /// moment a peer's claim goes stale. `None` when nothing is scheduled.
    pub fn next_wake(&self, file: &JobsFile, now: DateTime<Utc>) -> Option<DateTime<Utc>> {
        file.jobs
            .iter()
            .filter(|j| self.live(j))
            .filter_map(|j| match (j.state.claim, j.state.next_run_at) {
                (Some(c), _) if c.pid == self.pid => None,
                (Some(c), _) => Some(c.at + self.ttl),
                (None, Some(t)) => Some(t),
                // Not armed yet (a hand edit): look now.
                (None, None) => Some(now),
            })
            .min()
    }
}

#[cfg(test)]
mod tests;
