//! A change to the jobs' run state alone (a claim, a fire written back, a one-shot done): made
//! on the process's cached copy in place, under the jobs.json lock, with only the changed jobs'
//! rows written. jobs.json is neither rewritten nor read again, nothing is copied, so what a
//! fire costs is what it changed, however many jobs wait.

use super::{Cached, Job, JobState, JobsError, JobsFile, JobsStore, Version};
use crate::store::edits::RACY;
use crate::store::{FileLock, Stamp};

/// The jobs as a run of the timer may change them: their run state, nothing else.
#[derive(Debug)]
pub struct RunEdit<'a> {
    jobs: &'a mut [Job],
    touched: Vec<usize>,
}

impl RunEdit<'_> {
    pub fn jobs(&self) -> &[Job] {
        self.jobs
    }

    /// The run state of the job at `i`, to change (it is written back).
    pub fn state_mut(&mut self, i: usize) -> &mut JobState {
        if self.touched.last() != Some(&i) {
            self.touched.push(i);
        }
        &mut self.jobs[i].state
    }

    /// The positions changed, each once, in order.
    fn touched(mut self) -> Vec<usize> {
        self.touched.sort_unstable();
        self.touched.dedup();
        self.touched
    }
}

impl JobsFile {
    /// These jobs' run state to change, in memory.
    pub fn edit(&mut self) -> RunEdit<'_> {
        RunEdit { jobs: &mut self.jobs, touched: Vec::new() }
    }
}

/// What a change of run state did: the version the jobs were at before it (none when it
/// went through a rewrite of the file) and after it, and each changed job's new state by its
/// position, so a copy at the version before is brought up to date without reading the jobs.
#[derive(Debug, Clone)]
pub struct RunView {
    pub before: Option<Version>,
    pub after: Version,
    pub changed: Vec<(usize, JobState)>,
}

impl RunView {
    /// Brings `copy`, at version `seen`, to the version after the change; false (and `copy`
    /// left alone) when it was at another version, and must be read anew.
    pub fn apply(&self, seen: Option<Version>, copy: &mut JobsFile) -> bool {
        let fits = self.changed.iter().all(|(i, _)| *i < copy.jobs.len());
        if self.before.is_none() || seen != self.before || !fits {
            return false;
        }
        for (i, state) in &self.changed {
            copy.jobs[*i].state = state.clone();
        }
        true
    }
}

impl JobsStore {
    /// Changes run state only: `f` gets every job jobs.json holds (the one-shots that fired
    /// too), and what it changed is written to the state database in one transaction. A file
    /// an earlier version wrote run state into goes through [`update`](Self::update) once, to
    /// move that state out.
    pub fn update_run<R>(&self, f: impl FnOnce(&mut RunEdit<'_>) -> R) -> Result<(R, RunView), JobsError> {
        let lock = FileLock::exclusive(&self.lock_path).map_err(|e| self.io(e))?;
        let before = (Stamp::of(&self.path), lock.revision());
        let (mut on_disk, _) = self.read_locked(&lock, true)?;
        if on_disk.legacy_state {
            drop(lock);
            return self.update_run_moving(f);
        }
        let mut edit = on_disk.file.edit();
        let out = f(&mut edit);
        let touched = edit.touched();
        let mut after = before;
        if !touched.is_empty() {
            *self.cache() = None;
            after.1 = lock.bump();
            self.states.save(&on_disk.file.jobs, &touched, &[])?;
        }
        let changed = touched.iter().map(|&i| (i, on_disk.file.jobs[i].state.clone())).collect();
        // A file written this very moment is not cached (see `read_locked`).
        if let (Some(revision), Some(stamp)) = (after.1, after.0.filter(|s| s.age() > RACY)) {
            *self.cache() = Some(Cached { revision, stamp, file: on_disk });
        }
        Ok((out, RunView { before: Some(before), after, changed }))
    }

    /// [`update_run`](Self::update_run) on an earlier version's file: through a rewrite.
    fn update_run_moving<R>(&self, f: impl FnOnce(&mut RunEdit<'_>) -> R) -> Result<(R, RunView), JobsError> {
        let (out, view) = self.update_viewed(|file| f(&mut file.edit()))?;
        Ok((out, RunView { before: None, after: view.version, changed: Vec::new() }))
    }
}

#[cfg(test)]
mod tests;
