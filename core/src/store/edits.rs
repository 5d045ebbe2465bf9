//! Replacing a file a person may be editing at the same moment (jobs.json, MEMORY.md). An
//! editor takes no lock, so a write is only made on the version that was read: an edit that
//! landed since the read makes the write give way ([`Replaced::Edited`]), and the caller tries
//! again on the edited file. An edit saved in place between that check and the rename went
//! into the file the rename unlinked: it is put back, and the write gives way to it too.

use super::{write_atomic, write_atomic_if, Stamp, Written};
use std::fs::File;
use std::io::{Read, Seek};
use std::path::Path;
use std::time::{Duration, Instant};

/// How long a file must have been unchanged to count as saved (an mtime ticks coarsely).
pub const RACY: Duration = Duration::from_millis(50);

/// The file as read, held open (an edit saved in place lands in it), and its version.
pub struct Snapshot {
    file: Option<File>,
    version: Option<Stamp>,
}

impl Snapshot {
    /// Taken before the file is read; a missing file is a snapshot of nothing.
    pub fn take(path: &Path) -> Snapshot {
        let file = File::open(path).ok();
        let version = file.as_ref().and_then(Stamp::of_file);
        Snapshot { file, version }
    }
}

/// What became of a replace.
#[derive(Debug)]
pub enum Replaced {
    Written(Written),
    /// Someone edited the file since the snapshot; their edit stands, nothing was written.
    Edited,
}

/// Replaces `path` with `bytes` unless it changed since `snapshot`; `between` runs after the
/// check and before the rename (where a test puts an editor's racing save).
pub fn replace_unless_edited(
    path: &Path,
    snapshot: &Snapshot,
    bytes: &[u8],
    between: impl FnOnce(),
) -> std::io::Result<Replaced> {
    let unchanged = || {
        let unchanged = Stamp::of(path) == snapshot.version;
        if unchanged {
            between();
        }
        unchanged
    };
    let Some(written) = write_atomic_if(path, bytes, unchanged)? else { return Ok(Replaced::Edited) };
    if let Some(read) = snapshot.file.as_ref().filter(|r| Stamp::of_file(r) != snapshot.version) {
        put_back(path, read)?;
        return Ok(Replaced::Edited);
    }
    Ok(Replaced::Written(written))
}

/// Writes the content of `read` (a replaced file an editor saved into) back in place, once the
/// save looks finished: the file still for a moment, a second at most. Rare, so it may wait.
fn put_back(path: &Path, mut read: &File) -> std::io::Result<()> {
    let deadline = Instant::now() + Duration::from_secs(1);
    while Stamp::of_file(read).is_some_and(|s| s.age() <= RACY) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(5));
    }
    let mut bytes = Vec::new();
    read.seek(std::io::SeekFrom::Start(0))?;
    read.read_to_end(&mut bytes)?;
    write_atomic(path, &bytes)?;
    tracing::warn!("{}: an edit saved while an update replaced the file was put back", path.display());
    Ok(())
}
