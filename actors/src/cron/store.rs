//! `cron/jobs.json`: the user's scheduled jobs, under its own lock (`jobs.json.lock`) with
//! atomic replace. A file that does not parse is an error naming the file and the position;
//! it is left untouched and nothing writes over it until it parses again. Fields of a job
//! (or of its `state`) that this version does not know are written back as they were read.

use super::pause::Paused;
use crate::store::edits::{replace_unless_edited, Replaced, Snapshot, RACY};
use crate::store::{lock_path_for, FileLock, Stamp};
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
    /// What the timer keeps: absent on a hand-written job, filled on first sight.
    #[serde(default)]
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

impl Job {
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
}

#[derive(Debug, thiserror::Error)]
pub enum JobsError {
    #[error("{path}: {source}")]
    Io { path: PathBuf, source: std::io::Error },
    #[error("{path} is malformed at line {line}, column {column}: {message}; it was left untouched")]
    Malformed { path: PathBuf, line: usize, column: usize, message: String },
    #[error("{path} was edited while it was being updated; the edit was kept, try again")]
    Conflict { path: PathBuf },
}

/// The file as an update left it, and its version on disk.
#[derive(Debug, Clone)]
pub struct View {
    pub file: JobsFile,
    pub stamp: Option<Stamp>,
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
}

impl JobsStore {
    pub fn new(path: impl Into<PathBuf>) -> Self {
        let path = path.into();
        let lock_path = lock_path_for(&path);
        JobsStore { path, lock_path, cache: Default::default() }
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
    fn read_locked(&self, lock: &FileLock) -> Result<OnDisk, JobsError> {
        let (revision, stamp) = (lock.revision(), Stamp::of(&self.path));
        if let (Some(revision), Some(stamp)) = (revision, stamp) {
            if let Some(c) = self.cache().as_ref().filter(|c| c.revision == revision && c.stamp == stamp) {
                return Ok(c.file.clone());
            }
        }
        let file = match std::fs::read(&self.path) {
            Ok(b) => self.parse(&b)?,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => OnDisk::default(),
            Err(e) => return Err(self.io(e)),
        };
        // A file changed by something other than a store (a hand edit) is only known by its
        // version, whose mtime ticks coarsely: one written this very moment could change again
        // within the same tick unseen, so it is not cached until it has been still a while.
        if let (Some(revision), Some(stamp)) = (revision, stamp.filter(|s| s.age() > RACY)) {
            *self.cache() = Some(Cached { revision, stamp, file: file.clone() });
        }
        Ok(file)
    }

    pub fn load(&self) -> Result<JobsFile, JobsError> {
        let lock = FileLock::exclusive(&self.lock_path).map_err(|e| self.io(e))?;
        self.read_locked(&lock).map(|on_disk| on_disk.file)
    }

    /// Read-modify-write under the lock; a malformed file is never written over, and a
    /// change that changes nothing writes nothing (so a watcher sees only real edits).
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
        let mut on_disk = self.read_locked(&lock)?;
        let before = on_disk.file.clone();
        let out = f(&mut on_disk.file);
        // The version the view describes: the one read, or the one written below.
        let mut stamp = Stamp::of(&self.path);
        if on_disk.file != before {
            let bytes = serde_json::to_vec_pretty(&on_disk).map_err(|e| self.io(e.into()))?;
            let revision = lock.bump();
            *self.cache() = None;
            // A hand edit takes no lock: if one landed since the read, replacing the file now
            // would throw it away. Leave it; the caller tries again on the edited file.
            let written = match replace_unless_edited(&self.path, &snapshot, &bytes, between).map_err(|e| self.io(e))? {
                Replaced::Written(w) => w,
                Replaced::Edited => return Err(JobsError::Conflict { path: self.path.clone() }),
            };
            // Cached under the version written, not the path's: an edit saved in place since
            // the rename has another version, so the cache cannot hide it.
            if let (Some(revision), Some(stamp)) = (revision, written.stamp) {
                *self.cache() = Some(Cached { revision, stamp, file: on_disk.clone() });
            }
            stamp = written.stamp;
        }
        Ok((out, View { file: on_disk.file, stamp }))
    }

    /// The version of the file on disk, to skip re-reading an unchanged one.
    pub fn stamp(&self) -> Option<crate::store::Stamp> {
        crate::store::Stamp::of(&self.path)
    }
}

#[cfg(test)]
mod tests;
