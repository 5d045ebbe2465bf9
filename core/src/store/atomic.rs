//! The two file primitives every store shares: an exclusive lock on a sidecar lock file,
//! and a durable replace (temp file in the same dir, fsync, rename, fsync the dir).

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Held for as long as the value lives; dropping it unlocks.
#[derive(Debug)]
pub struct FileLock {
    file: File,
}

impl FileLock {
    /// Waits until the exclusive lock on `lock_path` is ours, for [`LOCK_WAIT`] at most (a
    /// peer that holds it longer gets a `TimedOut` error, which the caller reports naming its
    /// file). The lock lives on a sidecar file because the data file itself is replaced by
    /// rename, which a lock would not follow.
    pub fn exclusive(lock_path: &Path) -> std::io::Result<FileLock> {
        if let Some(dir) = lock_path.parent() {
            std::fs::create_dir_all(dir)?;
        }
        let file = match OpenOptions::new().create(true).truncate(false).read(true).write(true).open(lock_path) {
            Ok(f) => f,
            // A read-only data dir: a lock taken for reading still works (flock needs no write
            // access), so reads go on; a write fails where it writes, naming its file.
            Err(e) if e.kind() == std::io::ErrorKind::PermissionDenied => File::open(lock_path).map_err(|_| e)?,
            Err(e) => return Err(e),
        };
        wait_for_lock(&file)?;
        Ok(FileLock { file })
    }

    /// The write counter kept in the lock file (0 when none): every writer through the
    /// store bumps it under the lock, so a reader can tell its cached copy is current
    /// without re-reading the data file, even when two writes land in the same mtime tick.
    /// `None` where positional IO is not available (no caching there).
    pub fn revision(&self) -> Option<u64> {
        #[cfg(unix)]
        {
            let mut b = [0u8; 8];
            match std::os::unix::fs::FileExt::read_at(&self.file, &mut b, 0) {
                Ok(8) => Some(u64::from_le_bytes(b)),
                Ok(_) => Some(0),
                Err(_) => None,
            }
        }
        #[cfg(not(unix))]
        {
            None
        }
    }

    /// Counts one write; returns the new revision.
    pub fn bump(&self) -> Option<u64> {
        let next = self.revision()?.wrapping_add(1);
        #[cfg(unix)]
        {
            std::os::unix::fs::FileExt::write_all_at(&self.file, &next.to_le_bytes(), 0).ok()?;
        }
        Some(next)
    }
}

/// How long a writer waits for a lock a peer holds before it gives up with an error.
pub const LOCK_WAIT: Duration = Duration::from_secs(2);

/// Tries the lock, sleeping a little longer each time (1 ms doubling to 50 ms), until it is
/// ours or [`LOCK_WAIT`] has passed.
fn wait_for_lock(file: &File) -> std::io::Result<()> {
    let deadline = Instant::now() + LOCK_WAIT;
    let mut backoff = crate::supervise::backoff::Backoff::new(Duration::from_millis(1), Duration::from_millis(50));
    loop {
        // Fully qualified: std's own File::try_lock would shadow fs2's method on newer Rust.
        match fs2::FileExt::try_lock_exclusive(file) {
            Ok(()) => return Ok(()),
            Err(e) if e.kind() != fs2::lock_contended_error().kind() => return Err(e),
            Err(_) if Instant::now() >= deadline => {
                return Err(std::io::Error::new(
                    std::io::ErrorKind::TimedOut,
                    format!("locked by another process for more than {} s", LOCK_WAIT.as_secs()),
                ))
            }
            Err(_) => {
                std::thread::sleep(backoff.next_wait());
            }
        }
    }
}

impl Drop for FileLock {
    fn drop(&mut self) {
        let _ = fs2::FileExt::unlock(&self.file);
    }
}

/// The write counter kept in the lock file at `lock_path` (see [`FileLock::revision`]), read
/// without taking the lock: a cheap way to tell that a peer wrote through a store. `None`
/// when there is no lock file or no positional IO.
pub fn revision_of(lock_path: &Path) -> Option<u64> {
    #[cfg(unix)]
    {
        let file = File::open(lock_path).ok()?;
        let mut b = [0u8; 8];
        match std::os::unix::fs::FileExt::read_at(&file, &mut b, 0) {
            Ok(8) => Some(u64::from_le_bytes(b)),
            Ok(_) => Some(0),
            Err(_) => None,
        }
    }
    #[cfg(not(unix))]
    {
        let _ = lock_path;
        None
    }
}

/// `<path>.lock`
pub fn lock_path_for(path: &Path) -> PathBuf {
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(".lock");
    path.with_file_name(name)
}

/// Replaces `path` with `bytes` so that a reader (or a crash) sees either the old or the
/// new content, never a torn one.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    replace(path, bytes, Access::Umask, || true).map(|_| ())
}

/// [`write_atomic`] for a file that holds a secret (an access token, a key): the new file is
/// readable and writable by its owner only (0600) from the moment it exists, whatever the
/// umask, and so is the file it replaces `path` with (an older, more open file is not kept).
pub fn write_atomic_private(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    replace(path, bytes, Access::OwnerOnly, || true).map(|_| ())
}

/// Who may read the file a replace writes.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Access {
    /// As the process umask says.
    Umask,
    /// Its owner only (0600).
    OwnerOnly,
}

thread_local! {
    static REPLACES: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

/// Durable replaces (temp file, fsync, rename, dir fsync) made on this thread: on the engine's
/// thread, every state, jobs and attention write of the engine (`raven_file_replaces_total` in
/// `raven metrics`).
pub fn replaces_on_this_thread() -> u64 {
    REPLACES.with(|r| r.get())
}

/// What a replace wrote: the version of the new file (`None` where it cannot be read).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Written {
    pub stamp: Option<super::Stamp>,
}

/// [`write_atomic`], but the replace happens only if `still_ok()` says so once the new
/// content is durable, right before the rename (the caller checks that nobody changed the
/// file meanwhile); `Ok(None)` when it did not, with nothing changed. `Ok(Some(written))` is
/// the version this call wrote, taken from the file it wrote rather than from the path, which
/// someone may have edited in place since the rename.
pub fn write_atomic_if(path: &Path, bytes: &[u8], still_ok: impl FnOnce() -> bool) -> std::io::Result<Option<Written>> {
    replace(path, bytes, Access::Umask, still_ok)
}

/// The replace itself: temp file (made with `access`), fsync, rename if `still_ok()`, dir fsync.
fn replace(
    path: &Path,
    bytes: &[u8],
    access: Access,
    still_ok: impl FnOnce() -> bool,
) -> std::io::Result<Option<Written>> {
    let dir = path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir)?;
    let mut tmp_name = path.file_name().unwrap_or_default().to_os_string();
    tmp_name.push(format!(".tmp-{}", std::process::id()));
    let tmp = dir.join(tmp_name);
    let result = (|| {
        let mut f = open_temp(&tmp, access)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        let written = Written { stamp: super::Stamp::of_file(&f) };
        if !still_ok() {
            return Ok(None);
        }
        std::fs::rename(&tmp, path)?;
        File::open(dir)?.sync_all()?;
        REPLACES.with(|r| r.set(r.get() + 1));
        Ok(Some(written))
    })();
    if !matches!(result, Ok(Some(_))) {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

/// The temp file of a replace, empty. An owner-only one is created 0600 and set so (a temp
/// file left by a crash keeps the mode it was made with) before a byte is written.
fn open_temp(tmp: &Path, access: Access) -> std::io::Result<File> {
    let mut options = OpenOptions::new();
    options.create(true).truncate(true).write(true);
    #[cfg(unix)]
    if access == Access::OwnerOnly {
        use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
        options.mode(0o600);
        let f = options.open(tmp)?;
        f.set_permissions(std::fs::Permissions::from_mode(0o600))?;
        return Ok(f);
    }
    #[cfg(not(unix))]
    let _ = access;
    options.open(tmp)
}

/// FNV-1a, 64 bits: stable across processes and releases (std's hasher is neither).
pub fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, b| (h ^ u64::from(*b)).wrapping_mul(0x0000_0100_0000_01b3))
}

/// Keeps a copy of `path` aside as `<name>.corrupt-<hash of its bytes>`, once: the same
/// bytes are never copied again (a file read many times is kept once, not once a read).
/// Returns the copy's path and whether this call made it.
pub fn keep_aside_once(path: &Path) -> std::io::Result<(PathBuf, bool)> {
    let bytes = std::fs::read(path)?;
    let name = path.file_name().unwrap_or_default().to_string_lossy().into_owned();
    let aside = path.with_file_name(format!("{name}.corrupt-{:016x}", fnv1a(&bytes)));
    if aside.exists() {
        return Ok((aside, false));
    }
    write_atomic(&aside, &bytes)?;
    Ok((aside, true))
}

/// Keeps a copy of a file that could not be parsed beside it, as
/// `<name>.corrupt-<UTC timestamp>`, never overwriting an earlier copy.
pub fn keep_aside(path: &Path) -> std::io::Result<PathBuf> {
    let stamp = chrono::Utc::now().format("%Y%m%dT%H%M%S%.3fZ");
    let name = path.file_name().unwrap_or_default().to_string_lossy().into_owned();
    let mut n = 0;
    loop {
        let suffix = if n == 0 { String::new() } else { format!(".{n}") };
        let aside = path.with_file_name(format!("{name}.corrupt-{stamp}{suffix}"));
        if !aside.exists() {
            std::fs::copy(path, &aside)?;
            return Ok(aside);
        }
        n += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(unix)]
    fn mode(path: &Path) -> u32 {
        use std::os::unix::fs::PermissionsExt;
        std::fs::metadata(path).unwrap().permissions().mode() & 0o777
    }

    /// A secret file is 0600 whatever the umask, and replacing a file others could read
    /// leaves one they cannot.
    #[cfg(unix)]
    #[test]
    fn a_private_write_is_for_its_owner_only() {
        use std::os::unix::fs::PermissionsExt;
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("secret.json");
        write_atomic_private(&path, b"token").unwrap();
        assert_eq!(mode(&path), 0o600);
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
        // A temp file a crash left behind, open to all: it is not reused as it was.
        let left = tmp.path().join(format!("secret.json.tmp-{}", std::process::id()));
        std::fs::write(&left, b"old").unwrap();
        std::fs::set_permissions(&left, std::fs::Permissions::from_mode(0o666)).unwrap();
        write_atomic_private(&path, b"token 2").unwrap();
        assert_eq!((mode(&path), std::fs::read(&path).unwrap()), (0o600, b"token 2".to_vec()));
    }
}
