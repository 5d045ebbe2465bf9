//! The decision journal: one JSON line per thing the engine did or decided (a Sentinel
//! tick, a gate verdict, a delivery, an outbox move, a cron fire, a feedback verdict), in
//! `<data dir>/journal.jsonl`, so `raven log` and `raven why` can say why it spoke or
//! stayed silent.
//!
//! Any process of the engine appends to it, under the file's lock, one whole line per event
//! ([`crate::store::files::append_whole`]: a failed write is cut back, no torn line is left).
//! Past [`ROTATE_AT`] (8 MiB) the file is renamed to `journal.jsonl.1` (replacing the older
//! one) before the next append, so at most about twice that is kept.
//!
//! No line is synced to disk: a crash may lose the last lines. The journal is for people;
//! the state files are the truth. A failed write is logged once (at warn) and never fails
//! what was being recorded.
//!
//! Every event recorded is also counted in the engine's [`Counters`] (written or not), so
//! `raven metrics` sees each decision the journal does; the verdicts other processes record
//! (the gateway, `raven feedback`) are counted too, through [`OthersVerdicts`].

mod event;
mod others;
mod read;
#[cfg(test)]
mod tests;

pub use event::{
    ConfigReload, CronFire, Delivery, DiscoveryRun, Entry, Event, Gate, HeartbeatRun, LlmUsage, OutboxMove, Tick,
    VerdictGiven, CONTENT_CHARS,
};
pub use others::OthersVerdicts;
pub use read::{read_all, rotated, JournalReader};

use crate::store::files::{append_whole, open_append};
use crate::store::{lock_path_for, FileLock};
use crate::supervise::Counters;
use chrono::{DateTime, Utc};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// Where the file is renamed to `journal.jsonl.1` before the next append.
pub const ROTATE_AT: u64 = 8 * 1024 * 1024;

#[derive(Debug, thiserror::Error)]
pub enum JournalError {
    #[error("journal {path}: {source}")]
    Io { path: PathBuf, source: std::io::Error },
    #[error("journal line not encoded: {0}")]
    Encode(#[from] serde_json::Error),
}

/// A cheap handle on the journal file, cloned into every part that records; one that is
/// [`Journal::off`] records nothing.
#[derive(Debug, Clone, Default)]
pub struct Journal {
    inner: Option<Arc<Inner>>,
    counters: Counters,
}

#[derive(Debug)]
struct Inner {
    path: PathBuf,
    lock: PathBuf,
    rotate_at: u64,
    warned: AtomicBool,
}

impl Journal {
    /// The journal at `path` (nothing is opened until the first event).
    pub fn at(path: impl Into<PathBuf>) -> Journal {
        Journal::bounded(path.into(), ROTATE_AT)
    }

    fn bounded(path: PathBuf, rotate_at: u64) -> Journal {
        let lock = lock_path_for(&path);
        let inner = Inner { path, lock, rotate_at, warned: AtomicBool::new(false) };
        Journal { inner: Some(Arc::new(inner)), counters: Counters::default() }
    }

    /// The journal of the data dir.
    pub fn in_data_dir(dir: &crate::data_dir::DataDir) -> Journal {
        Journal::at(dir.journal())
    }

    /// The same journal, its events counted in `counters`.
    pub fn counting(self, counters: &Counters) -> Journal {
        Journal { counters: counters.clone(), ..self }
    }

    /// A journal that records nothing.
    pub fn off() -> Journal {
        Journal::default()
    }

    pub fn path(&self) -> Option<&Path> {
        self.inner.as_deref().map(|i| i.path.as_path())
    }

    /// Appends one event; a failure is logged once and otherwise ignored.
    pub fn record(&self, at: DateTime<Utc>, source: Option<&str>, event: Event) {
        self.counters.observe(source, &event);
        let Some(inner) = &self.inner else { return };
        let entry = Entry { at, source: source.map(str::to_owned), pid: Some(std::process::id()), event };
        if let Err(e) = inner.append(&entry) {
            if !inner.warned.swap(true, Ordering::Relaxed) {
                tracing::warn!("the decision journal is not written (the engine goes on): {e}");
            }
        }
    }
}

impl Inner {
    fn io(&self, source: std::io::Error) -> JournalError {
        JournalError::Io { path: self.path.clone(), source }
    }

    fn append(&self, entry: &Entry) -> Result<(), JournalError> {
        let mut line = serde_json::to_vec(entry)?;
        line.push(b'\n');
        let _lock = FileLock::exclusive(&self.lock).map_err(|e| self.io(e))?;
        self.rotate_if_full().map_err(|e| self.io(e))?;
        let mut f = open_append(&self.path).map_err(|e| self.io(e))?;
        append_whole(&mut f, &line).map_err(|e| self.io(e))
    }

    /// Past the bound, the file becomes `journal.jsonl.1` (an older one is replaced).
    fn rotate_if_full(&self) -> std::io::Result<()> {
        match std::fs::metadata(&self.path) {
            Ok(m) if m.len() >= self.rotate_at => std::fs::rename(&self.path, rotated(&self.path)),
            Ok(_) => Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
            Err(e) => Err(e),
        }
    }
}
