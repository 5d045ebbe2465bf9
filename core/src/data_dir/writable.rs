//! Whether this process can write where a conversation leaves its traces (the data dir, its
//! sessions, its state and its workspace), asked before a command delivers anything, so a
//! data dir the user made read-only is a clear error, not a message shown and never kept.

use super::DataDir;
use std::path::{Path, PathBuf};

#[derive(Debug, thiserror::Error)]
#[error("the data dir is not writable: {path}: {source} (nothing was sent)")]
pub struct NotWritable {
    pub path: PathBuf,
    pub source: std::io::Error,
}

impl DataDir {
    /// Creates and removes a probe file in each dir a turn or a delivery writes to.
    pub fn check_writable(&self) -> Result<(), NotWritable> {
        let dirs = [self.root().to_path_buf(), self.sentinel_dir(), self.sessions(), self.workspace()];
        dirs.iter().try_for_each(|d| probe(d))
    }
}

fn probe(dir: &Path) -> Result<(), NotWritable> {
    let path = dir.join(format!(".write-probe-{}", std::process::id()));
    let made = std::fs::OpenOptions::new().write(true).create_new(true).open(&path);
    match made {
        Ok(_) => std::fs::remove_file(&path).map_err(|source| NotWritable { path, source }),
        // A probe left by a crash of a process with this pid: the dir took it once.
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(()),
        // A dir not made yet is made by the engine's start, which reports its own error.
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(source) => Err(NotWritable { path: dir.to_owned(), source }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_writable_dir_passes_and_leaves_nothing_behind() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = DataDir::new(tmp.path());
        dir.ensure().unwrap();
        dir.check_writable().unwrap();
        let left: Vec<_> = std::fs::read_dir(tmp.path()).unwrap().flatten().map(|e| e.file_name()).collect();
        assert!(left.iter().all(|n| !n.to_string_lossy().starts_with(".write-probe")), "{left:?}");
    }
}
