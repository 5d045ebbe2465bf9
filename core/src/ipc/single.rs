//! One supervisor per data dir: `raven up` holds an exclusive lock on `raven.lock` for as
//! long as it runs (the kernel lets it go when the process dies, however it dies), with its
//! pid written inside. Whether a supervisor runs is decided by that lock, not by the socket
//! answering: a socket that was deleted, or a supervisor too busy to answer, never lets a
//! second one start on the same data dir.

use std::fs::File;
use std::io::{Read, Seek, Write};
use std::path::{Path, PathBuf};

#[derive(Debug, thiserror::Error)]
pub enum LockError {
    #[error("already running (pid {pid}) on {dir}")]
    Held { pid: String, dir: PathBuf },
    #[error("{path}: {source}")]
    Io { path: PathBuf, source: std::io::Error },
}

/// Held while the value lives.
#[derive(Debug)]
pub struct SupervisorLock {
    _file: File,
}

impl SupervisorLock {
    /// Takes the lock at `path` (`<data dir>/raven.lock`), or says who holds it.
    pub fn take(path: &Path) -> Result<SupervisorLock, LockError> {
        let io = |source| LockError::Io { path: path.to_owned(), source };
        let mut file =
            std::fs::OpenOptions::new().create(true).truncate(false).read(true).write(true).open(path).map_err(io)?;
        if fs2::FileExt::try_lock_exclusive(&file).is_err() {
            let mut pid = String::new();
            let _ = file.read_to_string(&mut pid);
            let pid = match pid.trim() {
                "" => "unknown".to_owned(),
                p => p.to_owned(),
            };
            let dir = path.parent().unwrap_or(Path::new(".")).to_owned();
            return Err(LockError::Held { pid, dir });
        }
        file.set_len(0).map_err(io)?;
        file.rewind().map_err(io)?;
        writeln!(file, "{}", std::process::id()).map_err(io)?;
        Ok(SupervisorLock { _file: file })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_holder_is_refused_with_the_first_ones_pid_until_it_lets_go() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("raven.lock");
        let first = SupervisorLock::take(&path).unwrap();
        let err = SupervisorLock::take(&path).unwrap_err().to_string();
        assert!(err.contains(&format!("already running (pid {})", std::process::id())), "{err}");
        drop(first);
        assert!(SupervisorLock::take(&path).is_ok(), "free once the holder is gone");
    }
}
