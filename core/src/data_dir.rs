//! The data dir layout (`--data-dir`, else `RAVEN_HOME`, else `$XDG_DATA_HOME/raven`, else
//! `~/.local/share/raven`).

pub mod dry_run;
mod writable;

pub use dry_run::{DryRun, DryRunError};
pub use writable::NotWritable;

use std::path::{Path, PathBuf};

/// Neither `--data-dir`, `RAVEN_HOME`, `XDG_DATA_HOME` nor `HOME` names a data dir.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("no data dir: pass --data-dir, or set RAVEN_HOME or HOME")]
pub struct NoDataDir;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DataDir {
    root: PathBuf,
}

impl DataDir {
    pub fn new(root: impl Into<PathBuf>) -> Self {
        DataDir { root: root.into() }
    }

    /// Resolves the data dir from an explicit choice or the environment.
    pub fn resolve(explicit: Option<PathBuf>) -> Result<DataDir, NoDataDir> {
        if let Some(p) = explicit {
            return Ok(DataDir::new(p));
        }
        let env = |k: &str| std::env::var_os(k).filter(|v| !v.is_empty()).map(PathBuf::from);
        if let Some(p) = env("RAVEN_HOME") {
            return Ok(DataDir::new(p));
        }
        if let Some(p) = env("XDG_DATA_HOME") {
            return Ok(DataDir::new(p.join("raven")));
        }
        match env("HOME") {
            Some(home) => Ok(DataDir::new(home.join(".local/share/raven"))),
            None => Err(NoDataDir),
        }
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    pub fn config(&self) -> PathBuf {
        self.root.join("config.toml")
    }

    pub fn sentinel_dir(&self) -> PathBuf {
        self.root.join("sentinel")
    }

    /// The one-file state of earlier versions, split per owner when found (see
    /// `store::owners`).
    pub fn legacy_state(&self) -> PathBuf {
        self.sentinel_dir().join("state.json")
    }

    /// The engine's own state: one SQLite database (see `store::db`).
    pub fn state_db(&self) -> PathBuf {
        self.root.join("state.db")
    }

    /// The Sentinel's skip cache and last decision (a dry run's copy leaves it out).
    pub fn decision_cache(&self) -> PathBuf {
        self.sentinel_dir().join(DECISION_CACHE_FILE)
    }

    pub fn feedback(&self) -> PathBuf {
        self.sentinel_dir().join("feedback.jsonl")
    }

    pub fn workspace(&self) -> PathBuf {
        self.root.join("workspace")
    }

    pub fn memory(&self) -> PathBuf {
        self.workspace().join("MEMORY.md")
    }

    pub fn history(&self) -> PathBuf {
        self.workspace().join("history.md")
    }

    pub fn heartbeat(&self) -> PathBuf {
        self.workspace().join("HEARTBEAT.md")
    }

    pub fn user_memory(&self) -> PathBuf {
        self.root.join("user_memory")
    }

    pub fn attention(&self) -> PathBuf {
        self.user_memory().join("attention.md")
    }

    pub fn behaviors(&self) -> PathBuf {
        self.user_memory().join("behaviors.md")
    }

    /// The decision journal (rotated to `journal.jsonl.1`, see `journal`).
    pub fn journal(&self) -> PathBuf {
        self.root.join("journal.jsonl")
    }

    /// The supervisor's control socket.
    pub fn socket(&self) -> PathBuf {
        self.root.join("raven.sock")
    }

    /// Held by the running supervisor (see `ipc::single`).
    pub fn supervisor_lock(&self) -> PathBuf {
        self.root.join("raven.lock")
    }

    /// Where a running supervisor writes the zone it resolved, so its clients read times in it.
    pub fn zone(&self) -> PathBuf {
        self.root.join("raven.zone")
    }

    /// Where `raven gateway` writes the address it listens on.
    pub fn gateway_addr(&self) -> PathBuf {
        self.root.join("gateway.addr")
    }

    /// Operator-requested discovery runs (`raven discover`).
    pub fn triggers(&self) -> PathBuf {
        self.sentinel_dir().join("triggers.json")
    }

    pub fn jobs(&self) -> PathBuf {
        self.root.join("cron").join("jobs.json")
    }

    pub fn sessions(&self) -> PathBuf {
        self.root.join("sessions")
    }

    /// Creates the data dir itself (none of its parts), private to the user (see
    /// [`make_private`]): what a command that writes there does first, so what it keeps (a
    /// channel's login, say) never sits in a dir others can read.
    pub fn ensure_root(&self) -> std::io::Result<()> {
        std::fs::create_dir_all(&self.root)?;
        make_private(&self.root)
    }

    /// Creates the dirs the engine writes to, private to the user (see [`make_private`]).
    pub fn ensure(&self) -> std::io::Result<()> {
        let cron = self.root.join("cron");
        for dir in [self.root.clone(), self.sentinel_dir(), cron, self.workspace(), self.user_memory(), self.sessions()]
        {
            std::fs::create_dir_all(&dir)?;
            make_private(&dir)?;
        }
        Ok(())
    }
}

/// The file name of [`DataDir::decision_cache`].
pub const DECISION_CACHE_FILE: &str = "decision_cache.json";

/// Takes the group's and others' permissions off `path` (a new dir becomes 0700), and never
/// adds one: a data dir its owner made read-only stays read-only, and what needs to write
/// there fails with an error naming the file instead of quietly undoing the owner's choice.
pub fn make_private(path: &Path) -> std::io::Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(path)?.permissions().mode() & 0o7777;
        if mode & 0o077 != 0 {
            std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode & 0o700))?;
        }
    }
    #[cfg(not(unix))]
    let _ = path;
    Ok(())
}
