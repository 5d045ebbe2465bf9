//! Where a simulation keeps its data dir: always one of its own, never a user's. A private
//! temp dir removed after the run, or a kept dir (`raven simulate --keep-data`:
//! `<out>/data`) made fresh for each run and left for the user to inspect.
//!
//! A kept dir carries a marker file; a dir that exists without it is refused rather than
//! cleared, so a path that happens to hold someone's files is never emptied.

use std::path::{Path, PathBuf};

/// The file that marks a kept dir as a simulation's own, safe to clear on the next run.
pub const MARKER: &str = ".raven-simulation";

/// Where the run's data dir goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Place {
    /// A private temp dir, removed after the run.
    Temporary,
    /// This dir, cleared and marked before the run and kept after it.
    Kept(PathBuf),
}

/// Why the kept dir cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum PlaceError {
    #[error("{}: holds files but is not a simulation's data dir (no {MARKER}); choose another --out", .0.display())]
    NotASimulation(PathBuf),
    #[error("{}: {source}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

/// The data dir of one run, ready and empty; a temporary one goes when this is dropped.
#[derive(Debug)]
pub struct Workdir {
    root: PathBuf,
    _temporary: Option<tempfile::TempDir>,
}

impl Workdir {
    /// Makes the data dir `place` names: a new temp dir, or the kept dir cleared and marked.
    pub fn prepare(place: &Place) -> Result<Workdir, PlaceError> {
        match place {
            Place::Temporary => {
                let t =
                    tempfile::Builder::new().prefix("raven-simulate-").tempdir().map_err(io(std::env::temp_dir()))?;
                Ok(Workdir { root: t.path().to_path_buf(), _temporary: Some(t) })
            }
            Place::Kept(root) => {
                clear_kept(root)?;
                std::fs::create_dir_all(root).map_err(io(root))?;
                let marker = root.join(MARKER);
                std::fs::write(&marker, "A simulation's data dir: the next `raven simulate --keep-data` clears it.\n")
                    .map_err(io(&marker))?;
                Ok(Workdir { root: root.clone(), _temporary: None })
            }
        }
    }

    pub fn root(&self) -> &Path {
        &self.root
    }
}

fn io(path: impl Into<PathBuf>) -> impl FnOnce(std::io::Error) -> PlaceError {
    let path = path.into();
    move |source| PlaceError::Io { path, source }
}

/// Removes an earlier run's kept dir; an empty or missing dir is fine, any other is refused.
fn clear_kept(root: &Path) -> Result<(), PlaceError> {
    let mut entries = match std::fs::read_dir(root) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(io(root)(e)),
    };
    if entries.next().is_none() {
        return Ok(());
    }
    if !root.join(MARKER).is_file() {
        return Err(PlaceError::NotASimulation(root.to_path_buf()));
    }
    std::fs::remove_dir_all(root).map_err(io(root))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_kept_dir_is_cleared_only_when_a_simulation_made_it() {
        let tmp = tempfile::tempdir().unwrap();
        let kept = Place::Kept(tmp.path().join("data"));
        let w = Workdir::prepare(&kept).unwrap();
        std::fs::write(w.root().join("old"), "from the last run").unwrap();
        let w = Workdir::prepare(&kept).unwrap();
        assert!(!w.root().join("old").exists() && w.root().join(MARKER).is_file());
        let foreign = tmp.path().join("notes");
        std::fs::create_dir(&foreign).unwrap();
        std::fs::write(foreign.join("MEMORY.md"), "mine").unwrap();
        let err = Workdir::prepare(&Place::Kept(foreign.clone())).unwrap_err();
        assert!(matches!(err, PlaceError::NotASimulation(_)), "{err}");
        assert_eq!(std::fs::read_to_string(foreign.join("MEMORY.md")).unwrap(), "mine");
    }

    #[test]
    fn a_temporary_dir_goes_with_its_workdir() {
        let w = Workdir::prepare(&Place::Temporary).unwrap();
        let root = w.root().to_path_buf();
        assert!(root.is_dir());
        drop(w);
        assert!(!root.exists());
    }
}
