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

use super::claims::{Claimer, Reached};
use super::pause::Paused;
use super::store::{Job, JobsStore};
use crate::clock::SharedClock;
use crate::supervise::{Handle, LocalBoxFuture, Request, Serve, ServeAsync, Service};
use chrono::{DateTime, Utc};
use futures_util::stream::{FuturesUnordered, StreamExt};
use futures_util::FutureExt;
use std::cell::RefCell;
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

pub struct CronService {
    inner: steps::Shared,
    fire: Rc<dyn FireJob>,
    clock: SharedClock,
}

impl CronService {
    pub fn new(store: JobsStore, claimer: Claimer, fire: Rc<dyn FireJob>, clock: SharedClock) -> Self {
        CronService { inner: Rc::new(RefCell::new(steps::Inner::new(store, claimer))), fire, clock }
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
            {
                let i = inner.borrow();
                // Nothing changed on disk and nothing is due: no lock, no read.
                let unchanged = i.seen == Some(i.store.version()) && i.error.is_none();
                if unchanged && i.next_wake.is_none_or(|t| t > now) {
                    return CronRun { fired: Vec::new(), next_wake: i.next_wake, error: None };
                }
            }
            let claimed = steps::claim(&inner, now).await;
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
                let paused = steps::complete(&inner, reached, clock.now()).await;
                for ((job, result), paused) in jobs.into_iter().zip(results).zip(paused) {
                    let told = match &paused {
                        Some(why) => tell_paused(fire.as_ref(), &job, why).await,
                        None => Vec::new(),
                    };
                    let slot = job.state.claim.map(|c| c.slot).unwrap_or(now);
                    fired.push(FireReport { job_id: job.id, slot, result, paused, told });
                }
            }
            let next = {
                let i = inner.borrow();
                i.claimer.next_wake(&i.loaded, clock.now())
            };
            steps::prune(&inner, next, clock.now()).await;
            let mut i = inner.borrow_mut();
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

mod steps;

#[cfg(test)]
mod strike_tests;
#[cfg(test)]
mod tests;
