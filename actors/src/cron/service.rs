//! The Cron actor (spec §10): its own timer over jobs.json. Each run claims the due jobs under
//! the lock, fires them out of the lock, and writes each result back under the lock. The
//! loop sleeps until the earliest due job (capped, so a peer's edit is seen even when the
//! watcher missed it) and a watcher on jobs.json ends the sleep at once.
//!
//! A fire that makes strike decay pause its job is followed by one notice to the job's
//! targets, by the same delivery path, saying so and how to resume it.
//!
//! A malformed jobs.json is reported (file and position), never written over, and the jobs
//! loaded before it broke keep firing from memory; their fires are written back once the file
//! parses again.

use super::claims::{Claimer, Completion, Reached};
use super::pause::Paused;
use super::store::{Job, JobState, JobsError, JobsFile, JobsStore};
use crate::clock::SharedClock;
use crate::supervise::{Handle, LocalBoxFuture, Request, Serve, ServeAsync, Service};
use chrono::{DateTime, Utc};
use futures_util::stream::{FuturesUnordered, StreamExt};
use futures_util::FutureExt;
use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;
use std::sync::Arc;

/// What firing one job did.
#[derive(Debug, Clone, PartialEq)]
pub struct Fired {
    pub delivered_to: Vec<String>,
    pub reply: Option<String>,
}

/// Runs one claimed job (the real one submits a CRON turn and delivers its reply).
pub trait FireJob {
    /// Fires `job`: a fire does not fail (a reminder whose turn fails goes out in its own
    /// words); what it reached is in [`Fired::delivered_to`], empty when it reached nobody.
    fn fire(&self, job: Job) -> LocalBoxFuture<'static, Fired>;

    /// Delivers `text`, about the job itself (strike decay paused it), to the job's targets by
    /// the path its fires take; answers the targets reached.
    fn tell(&self, job: Job, text: String) -> LocalBoxFuture<'static, Vec<String>>;
}

#[derive(Debug, Clone, PartialEq)]
pub struct FireReport {
    pub job_id: String,
    pub slot: DateTime<Utc>,
    pub result: Fired,
    /// Set when this fire paused the job (strike decay, a schedule with no next time).
    pub paused: Option<Paused>,
    /// Where the notice of a strike pause went (empty when there was none).
    pub told: Vec<String>,
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct CronRun {
    pub fired: Vec<FireReport>,
    pub next_wake: Option<DateTime<Utc>>,
    /// Why jobs.json could not be used (it is left as it is).
    pub error: Option<String>,
}

struct Inner {
    store: JobsStore,
    claimer: Claimer,
    /// Every job as jobs.json holds it (the one-shots that fired too), at version `seen`: what
    /// the next wake is computed from, kept up to date by each change of run state (so it is
    /// not read again), and what fires while the file on disk does not parse.
    loaded: JobsFile,
    /// Fires done from memory while the file was malformed, written back once it parses.
    pending: HashMap<String, JobState>,
    /// The version of the jobs `loaded` is at.
    seen: Option<super::store::Version>,
    next_wake: Option<DateTime<Utc>>,
    error: Option<String>,
    /// After a failed write: no run before this time (the claim is retried then).
    retry_after: Option<DateTime<Utc>>,
}

/// How soon a run whose write failed is tried again.
fn retry_pause() -> chrono::Duration {
    chrono::Duration::seconds(1)
}

/// How far off the next fire must be for the one-shots that fired to be taken out of
/// jobs.json now (a rewrite of the file): not between the fires of a burst.
fn prune_gap() -> chrono::Duration {
    chrono::Duration::seconds(1)
}

impl Inner {
    /// Claims under the lock; on a malformed file, from memory.
    fn claim(&mut self, now: DateTime<Utc>) -> Vec<Job> {
        let (claimer, pending) = (&self.claimer, std::mem::take(&mut self.pending));
        let result = self.store.update_run(|edit| {
            for i in 0..edit.jobs().len() {
                if let Some(state) = pending.get(&edit.jobs()[i].id) {
                    *edit.state_mut(i) = state.clone();
                }
            }
            claimer.claim_due(edit, now)
        });
        match result {
            Ok((claimed, view)) => {
                self.recovered();
                self.follow(view);
                claimed
            }
            Err(e) if !matches!(e, JobsError::Malformed { .. }) => {
                // The file could not be written (a full disk, a peer's lock held too long):
                // nothing is claimed that is not on record, and the run is tried again soon.
                self.pending = pending;
                self.failed(&e);
                self.reload();
                self.retry_after = Some(now + retry_pause());
                Vec::new()
            }
            Err(e) => {
                self.pending = pending;
                self.failed(&e);
                let claimed = self.claimer.claim_due(&mut self.loaded.edit(), now);
                for job in &claimed {
                    self.pending.insert(job.id.clone(), job.state.clone());
                }
                claimed
            }
        }
    }

    /// Writes every fire of a run back in one locked update (on a malformed file, to
    /// memory); returns the pause reason per job, in order.
    fn complete(&mut self, jobs: &[(Job, Reached)], now: DateTime<Utc>) -> Vec<Option<Paused>> {
        let claimer = self.claimer.clone();
        let finish = |edit: &mut super::store::RunEdit<'_>| -> Vec<Completion> {
            jobs.iter()
                .map(|(j, reached)| match &j.state.claim {
                    Some(claim) => claimer.complete(edit, &j.id, claim, *reached, now),
                    None => Completion::Lost,
                })
                .collect()
        };
        let done = match self.store.update_run(finish) {
            Ok((done, view)) => {
                self.follow(view);
                done
            }
            Err(e) => {
                self.failed(&e);
                let done = finish(&mut self.loaded.edit());
                for (job, _) in jobs {
                    if let Some(j) = self.loaded.jobs.iter().find(|j| j.id == job.id) {
                        self.pending.insert(job.id.clone(), j.state.clone());
                    }
                }
                done
            }
        };
        jobs.iter()
            .zip(done)
            .map(|((job, _), done)| match done {
                Completion::Done { paused } => paused,
                Completion::Lost => {
                    tracing::warn!(job = %job.id, "the fire's claim was taken over before it was written back");
                    None
                }
            })
            .collect()
    }

    /// Takes the one-shots that fired out of jobs.json (one rewrite of the file), unless the
    /// next fire is too close: then a later run does it.
    fn prune(&mut self, next: Option<DateTime<Utc>>, now: DateTime<Utc>) {
        let done = self.loaded.jobs.iter().any(|j| j.state.done_at.is_some());
        if !done || self.error.is_some() || next.is_some_and(|t| t - now < prune_gap()) {
            return;
        }
        match update_retrying(&self.store, |_| ()) {
            Ok(((), view)) => {
                self.loaded = view.file;
                self.seen = Some(view.version);
            }
            // Still done for every reader; the next run tries again.
            Err(e) => tracing::warn!("the reminders that fired stay in jobs.json for now: {e}"),
        }
    }

    /// Brings `loaded` to the version a change of run state left, reading the jobs anew only
    /// when another process or an edit changed them since.
    fn follow(&mut self, view: super::store::RunView) {
        if view.apply(self.seen, &mut self.loaded) {
            self.seen = Some(view.after);
        } else {
            self.reload();
        }
    }

    /// Reads every job anew (the last good copy stays when the file cannot be read).
    fn reload(&mut self) {
        match self.store.load_all() {
            Ok((file, version)) => {
                self.loaded = file;
                self.seen = Some(version);
            }
            Err(_) => self.seen = None,
        }
    }

    fn failed(&mut self, e: &JobsError) {
        let message = e.to_string();
        if self.error.as_deref() != Some(&message) {
            tracing::error!("{message}; the jobs loaded before keep running");
        }
        self.error = Some(message);
    }

    fn recovered(&mut self) {
        if self.error.take().is_some() {
            tracing::info!("{} parses again", self.store.path().display());
        }
    }
}

/// An update that a concurrent hand edit made give way is tried again on the edited file
/// (a few times: an edit is a human's, not a loop's).
fn update_retrying<R>(
    store: &JobsStore,
    mut f: impl FnMut(&mut JobsFile) -> R,
) -> Result<(R, super::store::View), JobsError> {
    let mut tries = 0;
    loop {
        match store.update_viewed(&mut f) {
            Err(JobsError::Conflict { .. }) if tries < 5 => tries += 1,
            other => return other,
        }
    }
}

pub struct CronService {
    inner: Rc<RefCell<Inner>>,
    fire: Rc<dyn FireJob>,
    clock: SharedClock,
}

impl CronService {
    pub fn new(store: JobsStore, claimer: Claimer, fire: Rc<dyn FireJob>, clock: SharedClock) -> Self {
        let inner = Inner {
            store,
            claimer,
            loaded: JobsFile::default(),
            pending: HashMap::new(),
            seen: None,
            next_wake: None,
            error: None,
            retry_after: None,
        };
        CronService { inner: Rc::new(RefCell::new(inner)), fire, clock }
    }
}

impl Service for CronService {
    fn name(&self) -> &'static str {
        "Cron"
    }
}

/// Fire what is due now; answers with the next wake.
pub struct RunDue;

impl Request for RunDue {
    type Reply = CronRun;
}

impl ServeAsync<RunDue> for CronService {
    fn serve_async(&mut self, _: RunDue) -> LocalBoxFuture<'static, CronRun> {
        let now = self.clock.now();
        let (inner, fire, clock) = (self.inner.clone(), self.fire.clone(), self.clock.clone());
        Box::pin(async move {
            let claimed = {
                let mut i = inner.borrow_mut();
                // Nothing changed on disk and nothing is due: no lock, no read.
                let unchanged = i.seen == Some(i.store.version()) && i.error.is_none();
                if unchanged && i.next_wake.is_none_or(|t| t > now) {
                    return CronRun { fired: Vec::new(), next_wake: i.next_wake, error: None };
                }
                i.claim(now)
            };
            let mut running: FuturesUnordered<_> = claimed
                .into_iter()
                .map(|job| {
                    let fire = fire.clone();
                    async move {
                        let result = fire.fire(job.clone()).await;
                        (job, result)
                    }
                })
                .collect();
            let mut fired = Vec::new();
            // Each fire is written back as soon as it is done (with whatever else is done by
            // then), not when the slowest fire of the run ends: a claim is good for the TTL
            // only, and a run of slow LLM turns could outlast it and let a peer fire again.
            while let Some(first) = running.next().await {
                let mut done = vec![first];
                while let Some(Some(more)) = running.next().now_or_never() {
                    done.push(more);
                }
                let (jobs, results): (Vec<Job>, Vec<_>) = done.into_iter().unzip();
                let reached: Vec<_> = jobs.iter().cloned().zip(results.iter().map(reached)).collect();
                let paused = inner.borrow_mut().complete(&reached, clock.now());
                for ((job, result), paused) in jobs.into_iter().zip(results).zip(paused) {
                    let told = match &paused {
                        Some(why) => tell_paused(fire.as_ref(), &job, why).await,
                        None => Vec::new(),
                    };
                    let slot = job.state.claim.map(|c| c.slot).unwrap_or(now);
                    fired.push(FireReport { job_id: job.id, slot, result, paused, told });
                }
            }
            let mut i = inner.borrow_mut();
            let next = i.claimer.next_wake(&i.loaded, clock.now());
            i.prune(next, clock.now());
            // A failed write is tried again after the pause, or at the next due time if later.
            i.next_wake = match i.retry_after.take() {
                Some(retry) => Some(next.map_or(retry, |t| t.max(retry))),
                None => next,
            };
            CronRun { fired, next_wake: i.next_wake, error: i.error.clone() }
        })
    }
}

/// Logs why a fire paused `job` and, for strike decay, tells its targets once: this fire is
/// the only one that pauses it (a paused job is not fired again until it is resumed).
async fn tell_paused(fire: &dyn FireJob, job: &Job, why: &Paused) -> Vec<String> {
    tracing::warn!(job = %job.id, "{why}");
    match why.notice(job) {
        Some(text) => fire.tell(job.clone(), text).await,
        None => Vec::new(),
    }
}

/// When the timer fires next (for `raven status`).
pub struct NextCronFire;

impl Request for NextCronFire {
    type Reply = Option<DateTime<Utc>>;
}

impl Serve<NextCronFire> for CronService {
    fn serve(&mut self, _: NextCronFire) -> Option<DateTime<Utc>> {
        self.inner.borrow().next_wake
    }
}

/// The timer: run what is due, sleep until the next wake (at most `max_sleep`), and wake at
/// once when `jobs_changed` is notified (the jobs.json watcher).
pub fn spawn_cron_loop(
    cron: Handle<CronService>,
    clock: SharedClock,
    jobs_changed: Arc<tokio::sync::Notify>,
    max_sleep: std::time::Duration,
) -> actix_rt::task::JoinHandle<()> {
    actix_rt::spawn(async move {
        loop {
            let next = match cron.call_async(RunDue).await {
                Ok(run) => run.next_wake,
                Err(e) => {
                    tracing::error!("cron run failed: {e}");
                    None
                }
            };
            let wait = next
                .map(|t| (t - clock.now()).to_std().unwrap_or_default())
                .unwrap_or(max_sleep)
                .clamp(std::time::Duration::from_millis(1), max_sleep);
            tokio::select! {
                _ = actix_rt::time::sleep(wait) => {}
                _ = jobs_changed.notified() => {}
            }
        }
    })
}

/// Whether a fire reached anybody (an outlet accepted its reply).
fn reached(fired: &Fired) -> Reached {
    if fired.delivered_to.is_empty() {
        Reached::Nobody
    } else {
        Reached::Someone
    }
}

#[cfg(test)]
mod strike_tests;
#[cfg(test)]
mod tests;
