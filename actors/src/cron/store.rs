//! `cron/jobs.json`: the user's scheduled jobs, under its own lock (`jobs.json.lock`) with
//! atomic replace. A file that does not parse is an error naming the file and the position;
//! it is left untouched and nothing writes over it until it parses again. Fields of a job
//! that this version does not know are written back as they were read.
//!
//! What the timer keeps of a job (its `state`) lives in the state database, a row per job
//! (see [`super::run_state`]): a fire writes that row, and jobs.json is rewritten only when
//! the jobs themselves change (added, removed, enabled, a one-shot done). Every write, of
//! either, happens under the jobs.json lock and bumps its write counter, so a process's cached
//! copy is current exactly when the counter and the file's version are the ones it saw. The
//! `state` an earlier version wrote into jobs.json is moved to the database by the first write.

use super::pause::Paused;
use super::run_state::{self, changed_states, same_jobs, RunStateStore, RunStates};
use crate::store::db::DbError;
use crate::store::edits::{replace_unless_edited, Replaced, Snapshot, RACY};
use crate::store::{lock_path_for, FileLock, Stamp, StoreError};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Schedule {
    /// Once, at an absolute time.
    At { at: DateTime<Utc> },
    /// Every `every_s` seconds from `anchor`.
    Every { every_s: u64, anchor: DateTime<Utc> },
    /// A 5- or 6-field cron expression in an IANA zone.
    Cron { expr: String, tz: String },
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Job {
    pub id: String,
    pub message: String,
    pub schedule: Schedule,
    /// `channel:chat_id` (or a bare channel) the job delivers to; `None` with no `broadcast`
    /// is a silent job (it runs, nobody is told).
    pub target: Option<String>,
    /// Deliver to every one of these instead (each resolved at fire time).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub broadcast: Vec<String>,
    pub created_at: DateTime<Utc>,
    #[serde(default = "yes")]
    pub enabled: bool,
    #[serde(default)]
    pub topic: Option<String>,
    /// What the timer keeps: absent on a hand-written job, filled on first sight. Kept in the
    /// state database, not in jobs.json (where only an earlier version wrote it).
    #[serde(default, skip_serializing_if = "JobState::is_unset")]
    pub state: JobState,
    /// Fields this version does not know (the user's own, or a newer version's): kept and
    /// written back with the job.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct JobState {
    pub next_run_at: Option<DateTime<Utc>>,
    pub last_run_at: Option<DateTime<Utc>>,
    pub runs: u64,
    /// Fires since the user last replied on the job's conversation.
    pub strikes: u32,
    /// Why the job stopped firing (strike decay, a stop, an unusable schedule); `None` when
    /// live.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub paused: Option<Paused>,
    /// The process firing it now; a claim older than the TTL is anyone's.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub claim: Option<Claim>,
    /// When a one-shot fired: it is done, and gone for every reader, though jobs.json keeps it
    /// until the file is next written (a fire does not rewrite the file).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub done_at: Option<DateTime<Utc>>,
    /// Fields this version does not know, kept and written back with the state.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Claim {
    pub pid: u32,
    pub at: DateTime<Utc>,
    /// The due time being fired.
    pub slot: DateTime<Utc>,
}

fn yes() -> bool {
    true
}

impl JobState {
    /// Nothing kept yet: a job never armed.
    pub fn is_unset(&self) -> bool {
        *self == JobState::default()
    }
}

impl JobsFile {
    /// Drops the one-shots that fired: every reader sees the jobs without them.
    fn without_done(mut self) -> JobsFile {
        self.jobs.retain(|j| j.state.done_at.is_none());
        self
    }
}

impl Job {
    /// The same job as `other`, whatever either's run state: what jobs.json holds of it.
    pub(super) fn same_definition(&self, other: &Job) -> bool {
        self.id == other.id
            && self.message == other.message
            && self.schedule == other.schedule
            && self.target == other.target
            && self.broadcast == other.broadcast
            && self.created_at == other.created_at
            && self.enabled == other.enabled
            && self.topic == other.topic
            && self.extra == other.extra
    }

    /// The channels the job delivers to, as written (before fire-time resolution).
    pub fn channels(&self) -> Vec<String> {
        self.target.iter().chain(&self.broadcast).map(|t| raven_proto::split_target(t).0).collect()
    }
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct JobsFile {
    #[serde(default)]
    pub jobs: Vec<Job>,
}

/// The file as it is on disk: the jobs, and every top-level field this version does not know
/// (a note written by hand, a newer version's field), written back as it was.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
struct OnDisk {
    #[serde(flatten)]
    file: JobsFile,
    #[serde(flatten)]
    extra: Map<String, Value>,
    /// jobs.json itself holds some job's run state (an earlier version's file): the next
    /// write moves it to the database.
    #[serde(skip)]
    legacy_state: bool,
}

impl OnDisk {
    /// The file as jobs.json keeps it: the jobs without their run state.
    fn as_written(&self) -> OnDisk {
        let mut out = self.clone();
        out.file.jobs.iter_mut().for_each(|j| j.state = JobState::default());
        out
    }
}

#[derive(Debug, thiserror::Error)]
pub enum JobsError {
    #[error("{path}: {source}")]
    Io { path: PathBuf, source: std::io::Error },
    #[error("{path} is malformed at line {line}, column {column}: {message}; it was left untouched")]
    Malformed { path: PathBuf, line: usize, column: usize, message: String },
    #[error("{path} was edited while it was being updated; the edit was kept, try again")]
    Conflict { path: PathBuf },
    /// The jobs' run state could not be read or kept.
    #[error("the jobs' run state: {0}")]
    State(#[from] StoreError),
}

impl From<DbError> for JobsError {
    fn from(e: DbError) -> Self {
        JobsError::State(StoreError::Db(e))
    }
}

/// Which version of the jobs a process saw: jobs.json's, and the store's write counter (a
/// fire changes the latter only).
pub type Version = (Option<Stamp>, Option<u64>);

/// The file as an update left it, and its version.
#[derive(Debug, Clone)]
pub struct View {
    pub file: JobsFile,
    pub version: Version,
}

/// The last version this process read or wrote, so an unchanged file is not parsed again
/// (at 10,000 jobs a parse costs tens of ms; a claim and a write-back each need the file).
#[derive(Debug)]
struct Cached {
    revision: u64,
    stamp: Stamp,
    file: OnDisk,
}

#[derive(Debug, Clone)]
pub struct JobsStore {
    path: PathBuf,
    lock_path: PathBuf,
    cache: Arc<Mutex<Option<Cached>>>,
    states: Arc<dyn RunStateStore>,
}

impl JobsStore {
    pub fn new(path: impl Into<PathBuf>) -> Self {
        let path = path.into();
        let lock_path = lock_path_for(&path);
        let states = Arc::new(RunStates::of_jobs(&path));
        JobsStore { path, lock_path, cache: Default::default(), states }
    }

    /// The jobs at `path`, their run state kept by `states`.
    #[cfg(test)]
    fn keeping_state_in(path: &Path, states: Arc<dyn RunStateStore>) -> Self {
        JobsStore { states, ..JobsStore::new(path) }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    fn io(&self, source: std::io::Error) -> JobsError {
        JobsError::Io { path: self.path.clone(), source }
    }

    /// Bytes, not text: a file that is not UTF-8 is malformed like any other, with the
    /// position of its first bad byte.
    ///
    /// An empty file is malformed too, not "no jobs": an editor that saves in place truncates
    /// before it writes, and a crash can leave a file empty. Taking either for "the user
    /// deleted every job" would drop the loaded jobs; a missing file is the way to say none.
    fn parse(&self, bytes: &[u8]) -> Result<OnDisk, JobsError> {
        if std::str::from_utf8(bytes).is_ok_and(|t| t.trim().is_empty()) {
            return Err(JobsError::Malformed {
                path: self.path.clone(),
                line: 1,
                column: 0,
                message: "the file is empty (for no jobs write {\"jobs\": []} or delete it)".into(),
            });
        }
        serde_json::from_slice(bytes).map_err(|e| JobsError::Malformed {
            path: self.path.clone(),
            line: e.line(),
            column: e.column(),
            message: e.to_string(),
        })
    }

    fn cache(&self) -> std::sync::MutexGuard<'_, Option<Cached>> {
        self.cache.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The file under `lock`: the cached copy when both the store's write counter and the
    /// file's version are the ones it was taken at (a hand edit changes the version, a
    /// peer's write through a store the counter), else parsed anew.
    ///
    /// `take`: an update about to replace the cache takes the cached copy instead of cloning
    /// it (at 10,000 jobs a clone is milliseconds).
    /// Also says whether the copy came from the cache.
    fn read_locked(&self, lock: &FileLock, take: bool) -> Result<(OnDisk, bool), JobsError> {
        let (revision, stamp) = (lock.revision(), Stamp::of(&self.path));
        if let (Some(revision), Some(stamp)) = (revision, stamp) {
            let mut cache = self.cache();
            if cache.as_ref().is_some_and(|c| c.revision == revision && c.stamp == stamp) {
                let file = match take {
                    true => cache.take().map(|c| c.file),
                    false => cache.as_ref().map(|c| c.file.clone()),
                };
                return Ok((file.unwrap_or_default(), true));
            }
        }
        let mut file = match std::fs::read(&self.path) {
            Ok(b) => self.parse(&b)?,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => OnDisk::default(),
            Err(e) => return Err(self.io(e)),
        };
        file.legacy_state = file.file.jobs.iter().any(|j| !j.state.is_unset());
        self.states.overlay(&mut file.file.jobs)?;
        // A file changed by something other than a store (a hand edit) is only known by its
        // version, whose mtime ticks coarsely: one written this very moment could change again
        // within the same tick unseen, so it is not cached until it has been still a while.
        if let (Some(revision), Some(stamp)) = (revision, stamp.filter(|s| s.age() > RACY)) {
            *self.cache() = Some(Cached { revision, stamp, file: file.clone() });
        }
        Ok((file, false))
    }

    /// The jobs, without the one-shots that fired.
    pub fn load(&self) -> Result<JobsFile, JobsError> {
        self.load_all().map(|(file, _)| file.without_done())
    }

    /// Every job jobs.json holds, the one-shots that fired too, and the version read: the copy
    /// a timer brings up to date with each [`RunView`].
    pub fn load_all(&self) -> Result<(JobsFile, Version), JobsError> {
        let lock = FileLock::exclusive(&self.lock_path).map_err(|e| self.io(e))?;
        let version = (Stamp::of(&self.path), lock.revision());
        self.read_locked(&lock, false).map(|(on_disk, _)| (on_disk.file, version))
    }

    /// Read-modify-write under the lock; a malformed file is never written over, and a
    /// change that changes nothing writes nothing (so a watcher sees only real edits).
    /// `f` sees the jobs without the one-shots that fired, and the file is written without
    /// them: that is when they leave jobs.json.
    pub fn update<R>(&self, f: impl FnOnce(&mut JobsFile) -> R) -> Result<R, JobsError> {
        self.update_viewed(f).map(|(out, _)| out)
    }

    /// [`update`](Self::update), also returning the file as it now is and its version,
    /// both taken under the lock (so a peer's write right after cannot be mistaken for ours).
    pub fn update_viewed<R>(&self, f: impl FnOnce(&mut JobsFile) -> R) -> Result<(R, View), JobsError> {
        self.update_racing(f, || {})
    }

    /// [`update_viewed`](Self::update_viewed), running `between` after the check for a hand
    /// edit and before the rename (where a test puts an editor's racing save).
    fn update_racing<R>(
        &self,
        f: impl FnOnce(&mut JobsFile) -> R,
        between: impl FnOnce(),
    ) -> Result<(R, View), JobsError> {
        let lock = FileLock::exclusive(&self.lock_path).map_err(|e| self.io(e))?;
        // The file as read, held open: an edit saved in place lands in it (see `store::edits`).
        let snapshot = Snapshot::take(&self.path);
        let (mut on_disk, cached) = self.read_locked(&lock, true)?;
        let before = on_disk.file.clone();
        on_disk.file = std::mem::take(&mut on_disk.file).without_done();
        let out = f(&mut on_disk.file);
        // The version the view describes: the one read, or the one written below.
        let (mut stamp, mut revision) = (Stamp::of(&self.path), lock.revision());
        if on_disk.file != before {
            revision = lock.bump();
            *self.cache() = None;
            let jobs = &on_disk.file.jobs;
            let moved: Vec<usize> = match on_disk.legacy_state {
                true => (0..jobs.len()).filter(|&i| !jobs[i].state.is_unset()).collect(),
                false => changed_states(&before, &on_disk.file),
            };
            let rewrite = on_disk.legacy_state || !same_jobs(&before, &on_disk.file);
            // Run state an earlier version kept in jobs.json goes to the database before the
            // file loses it; otherwise the file comes first, so an error writing it (a full disk,
            // a read-only dir) is the one said, and the state of a job not in it is never kept.
            if on_disk.legacy_state || !rewrite {
                self.states.save(jobs, &moved, &[])?;
            }
            if rewrite {
                let bytes = serde_json::to_vec_pretty(&on_disk.as_written()).map_err(|e| self.io(e.into()))?;
                // A hand edit takes no lock: if one landed since the read, replacing the file
                // now would throw it away. Leave it; the caller tries again on the edited file.
                let written =
                    match replace_unless_edited(&self.path, &snapshot, &bytes, between).map_err(|e| self.io(e))? {
                        Replaced::Written(w) => w,
                        Replaced::Edited => return Err(JobsError::Conflict { path: self.path.clone() }),
                    };
                stamp = written.stamp;
                let kept: std::collections::HashSet<_> = run_state::keys(&on_disk.file.jobs).into_iter().collect();
                let gone: Vec<_> = run_state::keys(&before.jobs).into_iter().filter(|k| !kept.contains(k)).collect();
                let moved: &[usize] = if on_disk.legacy_state { &[] } else { &moved };
                self.states.save(&on_disk.file.jobs, moved, &gone)?;
                on_disk.legacy_state = false;
            }
            // Cached under the version written, not the path's: an edit saved in place since
            // the rename has another version, so the cache cannot hide it.
            if let (Some(revision), Some(stamp)) = (revision, stamp) {
                *self.cache() = Some(Cached { revision, stamp, file: on_disk.clone() });
            }
        }
        if on_disk.file == before && cached {
            // Unchanged: the copy taken from the cache goes back, as it was.
            if let (Some(revision), Some(stamp)) = (revision, stamp) {
                let file = OnDisk { file: before, extra: on_disk.extra.clone(), legacy_state: on_disk.legacy_state };
                *self.cache() = Some(Cached { revision, stamp, file });
            }
        }
        Ok((out, View { file: on_disk.file, version: (stamp, revision) }))
    }

    /// The version of the file on disk, to skip re-reading an unchanged one.
    pub fn stamp(&self) -> Option<crate::store::Stamp> {
        crate::store::Stamp::of(&self.path)
    }

    /// The version of the jobs now: jobs.json's and the write counter's (a fire, a pause or a
    /// resume changes the counter only), read without the lock.
    pub fn version(&self) -> Version {
        (self.stamp(), crate::store::revision_of(&self.lock_path))
    }
}

mod run;
pub use run::{RunEdit, RunView};

#[cfg(test)]
mod tests;
