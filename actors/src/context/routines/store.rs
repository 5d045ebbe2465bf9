//! RoutineStore: the routines learned from `workspace/history.md`, kept with their evidence
//! in `user_memory/routines.json`, so a routine outlives the history's rotation and the
//! assembler's tail window, and each learn reads only the lines added since the last one.
//!
//! ```json
//! {
//!   "version": 1,
//!   "cursor": { "offset": 5120, "head": { "len": 10, "fnv1a": "…" }, "tail": { "len": 256, "fnv1a": "…" } },
//!   "routines": [
//!     { "topic": "medication", "hour": 9, "first_seen": "2026-03-01", "last_seen": "2026-03-04",
//!       "days": ["2026-03-01", "2026-03-02", "2026-03-04"] }
//!   ]
//! }
//! ```
//!
//! Every learn is one read-modify-write under the exclusive lock of `routines.json.lock`,
//! saved by an atomic replace and only when something changed, so learners in several
//! threads or processes never lose each other's evidence. A file that does not parse is
//! renamed aside (`routines.json.corrupt-<unix secs>`), logged, and the store starts empty; a
//! file of a newer format version is left alone and reported as an error.

mod cursor;
mod evidence;
#[cfg(test)]
mod tests;

pub use evidence::RoutineEvidence;

use super::Routine;
use crate::store::{lock_path_for, write_atomic, FileLock};
use chrono::{DateTime, Utc};
use chrono_tz::Tz;
use cursor::Cursor;
use evidence::Book;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// The format version this build reads and writes.
pub const VERSION: u64 = 1;

#[derive(Debug, thiserror::Error)]
pub enum RoutineError {
    #[error("routines file {path}: {source}")]
    Io { path: PathBuf, source: std::io::Error },
    #[error("history file {path}: {source}")]
    History { path: PathBuf, source: std::io::Error },
    #[error("routines file {path}: cannot be encoded: {source}")]
    Encode { path: PathBuf, source: serde_json::Error },
    #[error("routines file {path}: format version {found} is not the one this build reads ({VERSION}); left as it is")]
    Version { path: PathBuf, found: u64 },
}

/// When evidence makes a routine, and when a routine is forgotten.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LearnConfig {
    /// Distinct local days with the same topic at the same hour that make a routine.
    pub min_days: u32,
    /// A routine whose last day is this many local days before today (or more) is dropped.
    pub forget_days: u32,
}

impl Default for LearnConfig {
    fn default() -> Self {
        LearnConfig { min_days: 3, forget_days: 30 }
    }
}

/// The routines file, learned incrementally from the history; see the module doc.
#[derive(Debug, Clone)]
pub struct RoutineStore {
    path: PathBuf,
    lock: PathBuf,
}

/// The whole file.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
struct Stored {
    version: u64,
    #[serde(default)]
    cursor: Option<Cursor>,
    #[serde(default)]
    routines: Vec<RoutineEvidence>,
}

/// Only the version, read first so that a newer format is not taken for a corrupt one.
#[derive(Deserialize)]
struct Probe {
    version: u64,
}

impl RoutineStore {
    pub fn new(path: impl Into<PathBuf>) -> Self {
        let path = path.into();
        let lock = lock_path_for(&path);
        RoutineStore { path, lock }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Reads the lines of `history` added since the last learn (all of it when the file was
    /// rotated or rewritten; evidence is sets of days, so re-reading counts nothing twice),
    /// adds each stamped line to the evidence of its (topic, local hour), forgets routines
    /// unseen for `cfg.forget_days` local days before `now` in `tz`, saves when anything
    /// changed, and returns the routines seen on at least `cfg.min_days` days, sorted by
    /// (hour, topic): a topic seen at neighbouring hours is one routine (see
    /// [`evidence::routines`]). A missing history file has nothing new.
    pub fn learn(
        &self,
        history: &Path,
        tz: Tz,
        now: DateTime<Utc>,
        cfg: &LearnConfig,
    ) -> Result<Vec<Routine>, RoutineError> {
        let lock = self.exclusive()?;
        let stored = self.load()?;
        let mut book = Book::new(stored.routines.clone());
        let cursor = cursor::read_new(history, stored.cursor.as_ref(), |line| book.see_line(line))
            .map_err(|source| RoutineError::History { path: history.to_path_buf(), source })?;
        book.forget(now.with_timezone(&tz).date_naive(), cfg.forget_days);
        let next =
            Stored { version: VERSION, cursor: cursor.or_else(|| stored.cursor.clone()), routines: book.into_vec() };
        if next != stored {
            self.save(&next, &lock)?;
        }
        Ok(evidence::routines(&next.routines, cfg.min_days))
    }

    /// The stored evidence, sorted by (hour, topic), without learning.
    #[cfg(test)]
    pub fn evidence(&self) -> Result<Vec<RoutineEvidence>, RoutineError> {
        let _lock = self.exclusive()?;
        Ok(self.load()?.routines)
    }

    fn exclusive(&self) -> Result<FileLock, RoutineError> {
        FileLock::exclusive(&self.lock).map_err(|source| RoutineError::Io { path: self.lock.clone(), source })
    }

    /// The file as stored (empty when there is none); the caller holds the lock.
    fn load(&self) -> Result<Stored, RoutineError> {
        let empty = Stored { version: VERSION, ..Stored::default() };
        let bytes = match std::fs::read(&self.path) {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(empty),
            Err(e) => return Err(self.io(e)),
        };
        if bytes.iter().all(u8::is_ascii_whitespace) {
            return Ok(empty);
        }
        let why = match serde_json::from_slice::<Probe>(&bytes) {
            Ok(p) if p.version != VERSION => {
                return Err(RoutineError::Version { path: self.path.clone(), found: p.version })
            }
            Ok(_) => match serde_json::from_slice::<Stored>(&bytes) {
                Ok(s) => match s.routines.iter().find(|e| e.hour > 23) {
                    None => return Ok(Stored { routines: Book::new(s.routines).into_vec(), ..s }),
                    Some(e) => format!("routine `{}` has hour {}", e.topic, e.hour),
                },
                Err(e) => e.to_string(),
            },
            Err(e) => e.to_string(),
        };
        let aside = self.keep_aside()?;
        tracing::warn!(
            path = %self.path.display(),
            aside = %aside.display(),
            "routines file does not parse ({why}); kept aside, learning starts from empty"
        );
        Ok(empty)
    }

    /// Renames the file to `<name>.corrupt-<unix secs>` (`.1`, `.2`… after it when taken).
    fn keep_aside(&self) -> Result<PathBuf, RoutineError> {
        let name = self.path.file_name().unwrap_or_default().to_string_lossy().into_owned();
        let secs = Utc::now().timestamp();
        let mut n = 0;
        loop {
            let suffix = if n == 0 { String::new() } else { format!(".{n}") };
            let aside = self.path.with_file_name(format!("{name}.corrupt-{secs}{suffix}"));
            if !aside.exists() {
                std::fs::rename(&self.path, &aside).map_err(|e| self.io(e))?;
                return Ok(aside);
            }
            n += 1;
        }
    }

    /// Replaces the file and counts the write in the lock file; the caller holds `lock`.
    fn save(&self, stored: &Stored, lock: &FileLock) -> Result<(), RoutineError> {
        let mut bytes = serde_json::to_vec_pretty(stored)
            .map_err(|source| RoutineError::Encode { path: self.path.clone(), source })?;
        bytes.push(b'\n');
        write_atomic(&self.path, &bytes).map_err(|e| self.io(e))?;
        lock.bump();
        Ok(())
    }

    fn io(&self, source: std::io::Error) -> RoutineError {
        RoutineError::Io { path: self.path.clone(), source }
    }
}
