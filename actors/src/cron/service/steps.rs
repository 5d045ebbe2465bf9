//! The timer's locked steps (claim the due jobs, write fires back, take the one-shots that
//! fired out of jobs.json), each run on a blocking thread and awaited: a peer holding the
//! jobs.json lock or the state database, or a slow disk, never stalls the actor thread. The
//! step hands back what it did and, when the timer's copy of the jobs cannot be brought up to
//! date from that, a fresh copy read on the same thread.

use super::super::claims::{Claimer, Completion, Reached};
use super::super::pause::Paused;
use super::super::store::{Job, JobState, JobsError, JobsFile, JobsStore, RunEdit, RunView, Version, View};
use crate::store::db::off_thread;
use chrono::{DateTime, Utc};
use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;

pub(super) struct Inner {
    pub(super) store: JobsStore,
    pub(super) claimer: Claimer,
    /// Every job as jobs.json holds it (the one-shots that fired too), at version `seen`: what
    /// the next wake is computed from, kept up to date by each change of run state (so it is
    /// not read again), and what fires while the file on disk does not parse.
    pub(super) loaded: JobsFile,
    /// Fires done from memory while the file was malformed, written back once it parses.
    pending: HashMap<String, JobState>,
    /// The version of the jobs `loaded` is at.
    pub(super) seen: Option<Version>,
    pub(super) next_wake: Option<DateTime<Utc>>,
    pub(super) error: Option<String>,
    /// After a failed write: no run before this time (the claim is retried then).
    pub(super) retry_after: Option<DateTime<Utc>>,
}

/// The timer's state, shared by the runs in flight.
pub(super) type Shared = Rc<RefCell<Inner>>;

/// How soon a run whose write failed is tried again.
fn retry_pause() -> chrono::Duration {
    chrono::Duration::seconds(1)
}

/// How far off the next fire must be for the one-shots that fired to be taken out of
/// jobs.json now (a rewrite of the file): not between the fires of a burst.
fn prune_gap() -> chrono::Duration {
    chrono::Duration::seconds(1)
}

/// A step's result, and a fresh copy of the jobs when its view cannot bring the timer's up to date.
type Stepped<R> = (Result<(R, RunView), JobsError>, Option<(JobsFile, Version)>);

/// Claims the due jobs under the lock; on a malformed file, from memory.
pub(super) async fn claim(inner: &Shared, now: DateTime<Utc>) -> Vec<Job> {
    let (store, claimer, pending, seen) = {
        let mut i = inner.borrow_mut();
        (i.store.clone(), i.claimer.clone(), std::mem::take(&mut i.pending), i.seen)
    };
    let (stepped, pending) = off_thread(move || {
        let out = store.update_run(|edit| {
            for i in 0..edit.jobs().len() {
                if let Some(state) = pending.get(&edit.jobs()[i].id) {
                    *edit.state_mut(i) = state.clone();
                }
            }
            claimer.claim_due(edit, now)
        });
        let fresh = fresh_copy(&store, &out, seen);
        ((out, fresh), pending)
    })
    .await;
    inner.borrow_mut().claimed(stepped, pending, now)
}

/// Writes every fire of a run back in one locked step (on a malformed file, to memory);
/// returns the pause reason per job, in order.
pub(super) async fn complete(inner: &Shared, jobs: Vec<(Job, Reached)>, now: DateTime<Utc>) -> Vec<Option<Paused>> {
    let (store, claimer, seen) = {
        let i = inner.borrow();
        (i.store.clone(), i.claimer.clone(), i.seen)
    };
    let (stepped, jobs) = off_thread(move || {
        let out = store.update_run(|edit| finish(&claimer, edit, &jobs, now));
        let fresh = fresh_copy(&store, &out, seen);
        ((out, fresh), jobs)
    })
    .await;
    inner.borrow_mut().completed(stepped, &jobs, now)
}

/// Takes the one-shots that fired out of jobs.json (one rewrite of the file), unless the
/// next fire is too close: then a later run does it.
pub(super) async fn prune(inner: &Shared, next: Option<DateTime<Utc>>, now: DateTime<Utc>) {
    let store = {
        let i = inner.borrow();
        let done = i.loaded.jobs.iter().any(|j| j.state.done_at.is_some());
        if !done || i.error.is_some() || next.is_some_and(|t| t - now < prune_gap()) {
            return;
        }
        i.store.clone()
    };
    match off_thread(move || update_retrying(&store, |_| ())).await {
        Ok(((), view)) => {
            let mut i = inner.borrow_mut();
            i.loaded = view.file;
            i.seen = Some(view.version);
        }
        // Still done for every reader; the next run tries again.
        Err(e) => tracing::warn!("the reminders that fired stay in jobs.json for now: {e}"),
    }
}

/// What a step leaves for the timer's copy: none when the step's view brings it up to date
/// (it was at the version the step began from), else every job read anew (none on a file
/// that does not parse: the last good copy stays).
fn fresh_copy<R>(
    store: &JobsStore,
    out: &Result<(R, RunView), JobsError>,
    seen: Option<Version>,
) -> Option<(JobsFile, Version)> {
    match out {
        Ok((_, view)) if view.before.is_some() && view.before == seen => None,
        Err(JobsError::Malformed { .. }) => None,
        _ => store.load_all().ok(),
    }
}

/// Each fire of a run written back.
fn finish(claimer: &Claimer, edit: &mut RunEdit<'_>, jobs: &[(Job, Reached)], now: DateTime<Utc>) -> Vec<Completion> {
    jobs.iter()
        .map(|(j, reached)| match &j.state.claim {
            Some(claim) => claimer.complete(edit, &j.id, claim, *reached, now),
            None => Completion::Lost,
        })
        .collect()
}

impl Inner {
    pub(super) fn new(store: JobsStore, claimer: Claimer) -> Self {
        Inner {
            store,
            claimer,
            loaded: JobsFile::default(),
            pending: HashMap::new(),
            seen: None,
            next_wake: None,
            error: None,
            retry_after: None,
        }
    }

    fn claimed(
        &mut self,
        (out, fresh): Stepped<Vec<Job>>,
        pending: HashMap<String, JobState>,
        now: DateTime<Utc>,
    ) -> Vec<Job> {
        match out {
            Ok((claimed, view)) => {
                self.recovered();
                self.follow(view, fresh);
                claimed
            }
            Err(e) if !matches!(e, JobsError::Malformed { .. }) => {
                // The file could not be written (a full disk, a peer's lock held too long):
                // nothing is claimed that is not on record, and the run is tried again soon.
                self.pending = pending;
                self.failed(&e);
                if let Some((file, version)) = fresh {
                    (self.loaded, self.seen) = (file, Some(version));
                }
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

    fn completed(
        &mut self,
        (out, fresh): Stepped<Vec<Completion>>,
        jobs: &[(Job, Reached)],
        now: DateTime<Utc>,
    ) -> Vec<Option<Paused>> {
        let done = match out {
            Ok((done, view)) => {
                self.follow(view, fresh);
                done
            }
            Err(e) => {
                self.failed(&e);
                let done = finish(&self.claimer, &mut self.loaded.edit(), jobs, now);
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

    /// Brings `loaded` to the version a step left: by the step's view when `loaded` was at
    /// the version the step began from, else to the fresh copy (none: read at the next run).
    fn follow(&mut self, view: RunView, fresh: Option<(JobsFile, Version)>) {
        if view.apply(self.seen, &mut self.loaded) {
            self.seen = Some(view.after);
            return;
        }
        match fresh {
            Some((file, version)) => (self.loaded, self.seen) = (file, Some(version)),
            None => self.seen = None,
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
fn update_retrying<R>(store: &JobsStore, mut f: impl FnMut(&mut JobsFile) -> R) -> Result<(R, View), JobsError> {
    let mut tries = 0;
    loop {
        match store.update_viewed(&mut f) {
            Err(JobsError::Conflict { .. }) if tries < 5 => tries += 1,
            other => return other,
        }
    }
}
