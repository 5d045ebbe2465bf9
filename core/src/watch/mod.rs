//! notify watchers turning file changes into typed events. The parent dir is watched (not
//! the file), because every store replaces its file by rename, which a watch on the old
//! inode would miss.

use notify::{EventKind, RecommendedWatcher, RecursiveMode, Watcher};
use std::path::Path;

/// Keeps the watch alive; dropping it stops the events.
pub struct FileWatch {
    _watcher: RecommendedWatcher,
}

/// Calls `on_change` (on notify's thread) whenever `path` is created, written, renamed into
/// place or removed. The caller forwards it into its actor (`Handle::do_send` is safe from
/// any thread).
pub fn watch_file(path: &Path, on_change: impl Fn() + Send + 'static) -> notify::Result<FileWatch> {
    let dir = path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new(".")).to_path_buf();
    std::fs::create_dir_all(&dir).map_err(notify::Error::io)?;
    let name = path.file_name().map(|n| n.to_owned());
    let mut watcher = notify::recommended_watcher(move |res: notify::Result<notify::Event>| {
        let Ok(event) = res else { return };
        let relevant = matches!(event.kind, EventKind::Create(_) | EventKind::Modify(_) | EventKind::Remove(_));
        if relevant && event.paths.iter().any(|p| p.file_name() == name.as_deref()) {
            on_change();
        }
    })?;
    watcher.watch(&dir, RecursiveMode::NonRecursive)?;
    Ok(FileWatch { _watcher: watcher })
}

/// Like [`watch_file`], for a file people edit: each change is handed on once the file has
/// been left alone for `settle`, so a reader sees the whole of an editor's save rather than
/// the empty file between its truncate and its write. The events of one save are each
/// handed on; `on_change` must do nothing when nothing changed.
pub fn watch_edited_file(
    path: &Path,
    settle: std::time::Duration,
    on_change: impl Fn() + Send + 'static,
) -> notify::Result<FileWatch> {
    watch_file(path, move || {
        std::thread::sleep(settle);
        on_change()
    })
}

/// How long a hand-edited file is left alone before it is read.
pub const SETTLE: std::time::Duration = std::time::Duration::from_millis(100);

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;
    use std::time::{Duration, Instant};

    fn wait_for(count: &AtomicUsize, at_least: usize) -> bool {
        let deadline = Instant::now() + Duration::from_secs(5);
        while Instant::now() < deadline {
            if count.load(Ordering::SeqCst) >= at_least {
                return true;
            }
            std::thread::sleep(Duration::from_millis(2));
        }
        false
    }

    #[test]
    fn an_atomic_replace_and_a_plain_write_are_both_seen() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("attention.md");
        let count = Arc::new(AtomicUsize::new(0));
        let c = count.clone();
        let _w = watch_file(&path, move || {
            c.fetch_add(1, Ordering::SeqCst);
        })
        .unwrap();
        std::fs::write(dir.path().join("other.md"), "x").unwrap();
        crate::store::write_atomic(&path, b"## A\n").unwrap();
        assert!(wait_for(&count, 1), "rename into place seen");
        let seen = count.load(Ordering::SeqCst);
        std::fs::write(&path, "## B\n").unwrap();
        assert!(wait_for(&count, seen + 1), "plain write seen");
    }
}
