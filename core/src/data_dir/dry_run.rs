//! A dry run's data dir: a private copy of the user's, made before the run and removed after
//! it, so a command that pretends another time (`raven tick --at`, `raven say --at`) runs the
//! whole engine and saves nothing in the real one.
//!
//! Everything the engine reads is copied (config.toml, workspace/, user_memory/, sentinel/,
//! cron/, sessions/; the state database as one consistent snapshot, whatever a running
//! supervisor is writing meanwhile). Never copied: the control socket and every lock file, so
//! the copy neither reaches nor looks held by a running supervisor; and the decision cache
//! (the skip cache, the last decision and the day's brief, a file of an earlier version or
//! rows of the copied database), which a dry run neither reads nor writes. Links are followed and
//! their targets copied: a write in the copy can never land in a file the link points at.

use super::DataDir;
use std::ffi::OsStr;
use std::path::{Path, PathBuf};

/// How deep the copy goes; deeper means a link that leads back into its own dir.
const MAX_DEPTH: usize = 32;

/// Why no copy could be made.
#[derive(Debug, thiserror::Error)]
pub enum DryRunError {
    #[error("dry run: no private dir for the copy: {0}")]
    TempDir(#[source] std::io::Error),
    #[error("dry run: {} not copied: {source}", path.display())]
    Copy {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("dry run: the state database was not copied: {0}")]
    Database(#[from] crate::store::db::DbError),
    #[error("dry run: {} nests more than {MAX_DEPTH} dirs deep (a link into itself?)", .0.display())]
    TooDeep(PathBuf),
}

/// The private copy; dropping it removes the copy.
#[derive(Debug)]
pub struct DryRun {
    dir: DataDir,
    _copy: tempfile::TempDir,
}

impl DryRun {
    /// Copies `real` into a new private dir (empty when `real` does not exist yet).
    pub fn of(real: &DataDir) -> Result<DryRun, DryRunError> {
        let copy = tempfile::Builder::new().prefix("raven-dry-run-").tempdir().map_err(DryRunError::TempDir)?;
        if real.root().is_dir() {
            copy_tree(real.root(), copy.path(), 0)?;
            let dry = DataDir::new(copy.path());
            if let Some(db) = crate::store::db::Database::open_read_only(&real.state_db())? {
                db.copy_to(&dry.state_db())?;
                let (copy, _) = crate::store::db::Database::open(&dry.state_db())?;
                crate::store::sections::forget(&copy, crate::store::owners::Owner::DecisionCache.name())?;
            }
        }
        Ok(DryRun { dir: DataDir::new(copy.path()), _copy: copy })
    }

    /// The copy, to run the engine on.
    pub fn dir(&self) -> &DataDir {
        &self.dir
    }
}

fn failed(path: &Path) -> impl FnOnce(std::io::Error) -> DryRunError {
    let path = path.to_path_buf();
    move |source| DryRunError::Copy { path, source }
}

/// The state database (copied whole by SQLite, not file by file), the supervisor's socket
/// and lock, every lock file beside a store, and the decision cache
/// (a dry run neither reads nor changes the real skip cache and last decision).
fn skipped(name: &OsStr) -> bool {
    let state_db = name.to_string_lossy().starts_with("state.db");
    state_db
        || name == "raven.sock"
        || name == "raven.lock"
        || name == super::DECISION_CACHE_FILE
        || name.to_string_lossy().ends_with(".lock")
}

/// Copies the regular files and dirs under `from` into `to` (which exists), following links;
/// sockets, pipes and devices are left out.
fn copy_tree(from: &Path, to: &Path, depth: usize) -> Result<(), DryRunError> {
    if depth > MAX_DEPTH {
        return Err(DryRunError::TooDeep(from.to_path_buf()));
    }
    for entry in std::fs::read_dir(from).map_err(failed(from))? {
        let entry = entry.map_err(failed(from))?;
        let (source, target) = (entry.path(), to.join(entry.file_name()));
        if skipped(&entry.file_name()) {
            continue;
        }
        // `metadata` follows a link: its target is what gets copied.
        let Ok(meta) = std::fs::metadata(&source) else { continue };
        if meta.is_dir() {
            std::fs::create_dir(&target).map_err(failed(&target))?;
            copy_tree(&source, &target, depth + 1)?;
        } else if meta.is_file() {
            std::fs::copy(&source, &target).map_err(failed(&source))?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn files(root: &Path) -> Vec<String> {
        let mut out = Vec::new();
        for e in std::fs::read_dir(root).unwrap().flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            if e.path().is_dir() {
                out.extend(files(&e.path()).into_iter().map(|f| format!("{name}/{f}")));
            } else {
                out.push(name);
            }
        }
        out.sort();
        out
    }

    #[test]
    fn the_copy_holds_every_file_but_the_locks_and_writes_stay_in_it() {
        let real = tempfile::tempdir().unwrap();
        let dir = DataDir::new(real.path());
        dir.ensure().unwrap();
        std::fs::write(dir.memory(), "notes").unwrap();
        std::fs::write(dir.jobs(), "{}").unwrap();
        std::fs::write(dir.supervisor_lock(), "42").unwrap();
        std::fs::write(dir.root().join("cron/jobs.json.lock"), "").unwrap();
        let dry = DryRun::of(&dir).unwrap();
        assert_eq!(files(dry.dir().root()), ["cron/jobs.json", "workspace/MEMORY.md"]);
        std::fs::write(dry.dir().memory(), "changed").unwrap();
        assert_eq!(std::fs::read_to_string(dir.memory()).unwrap(), "notes");
        let copy = dry.dir().root().to_path_buf();
        drop(dry);
        assert!(!copy.exists(), "the copy is removed with the dry run");
    }

    #[cfg(unix)]
    #[test]
    fn a_linked_file_is_copied_not_linked() {
        let (real, elsewhere) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        let dir = DataDir::new(real.path());
        dir.ensure().unwrap();
        let target = elsewhere.path().join("MEMORY.md");
        std::fs::write(&target, "synced notes").unwrap();
        std::os::unix::fs::symlink(&target, dir.memory()).unwrap();
        let dry = DryRun::of(&dir).unwrap();
        std::fs::write(dry.dir().memory(), "changed").unwrap();
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "synced notes");
    }

    #[test]
    fn a_missing_data_dir_gives_an_empty_copy() {
        let real = tempfile::tempdir().unwrap();
        let dry = DryRun::of(&DataDir::new(real.path().join("none"))).unwrap();
        assert!(files(dry.dir().root()).is_empty());
    }
}
