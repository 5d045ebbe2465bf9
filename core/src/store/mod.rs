//! JsonStateStore: one JSON file of named sections, shared by processes (spec §5, §9). The
//! runtime state is one such file per owner (see [`owners`]).
//!
//! Every read and every read-modify-write happens under one exclusive lock, and every write
//! is a durable atomic replace, so two processes on one data dir never tear each other's
//! state. A file that does not parse is never silently overwritten: a copy is kept aside,
//! the reason is logged naming the file, and the store starts from empty.
//! A section's fields that its typed struct does not know are kept through an update (see
//! [`unknown`] for the rule).

mod atomic;
pub mod db;
pub mod edits;
pub mod files;
mod items;
pub mod jsonl;
pub mod keeper;
pub mod owners;
mod peek;
mod rows;
pub mod sections;
mod unknown;

pub use atomic::{
    fnv1a, keep_aside, keep_aside_once, lock_path_for, replaces_on_this_thread, revision_of, write_atomic,
    write_atomic_if, write_atomic_private, FileLock, Written,
};

use serde::{de::DeserializeOwned, Serialize};
use serde_json::{Map, Value};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("state file {path}: {source}")]
    Io { path: PathBuf, source: std::io::Error },
    #[error("state file {path}: section `{section}` cannot be encoded: {message}")]
    Encode { path: PathBuf, section: String, message: String },
    #[error(
        "state file {path}: section `{section}` would make it {bytes} bytes (at most {MAX_STATE_BYTES}); not written"
    )]
    TooLarge { path: PathBuf, section: String, bytes: usize },
    #[error(transparent)]
    Db(#[from] db::DbError),
}

/// The largest state file written: a write that would pass it is refused, naming the section
/// that grew, and the file keeps its last good content.
pub const MAX_STATE_BYTES: usize = 64 << 20;

/// Identifies one version of the file on disk, so readers can skip re-parsing it when
/// nothing changed. Any replace changes the inode, so a rename is never missed. A store kept
/// in the state database is versioned by its rows' revision instead.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stamp(Mark);

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mark {
    File { ino: u64, len: u64, mtime_ns: i128 },
    Revision(i64),
}

impl Stamp {
    /// The version of `path` now on disk (`None` when there is no file).
    pub fn of(path: &Path) -> Option<Stamp> {
        std::fs::metadata(path).ok().map(|m| Stamp::of_meta(&m))
    }

    /// The version of an open file (also of one a rename has since unlinked).
    pub fn of_file(file: &std::fs::File) -> Option<Stamp> {
        file.metadata().ok().map(|m| Stamp::of_meta(&m))
    }

    /// The version of rows in the state database: the last revision written to them.
    pub fn of_revision(revision: i64) -> Stamp {
        Stamp(Mark::Revision(revision))
    }

    fn of_meta(meta: &std::fs::Metadata) -> Stamp {
        #[cfg(unix)]
        let ino = std::os::unix::fs::MetadataExt::ino(meta);
        #[cfg(not(unix))]
        let ino = 0;
        let mtime_ns = meta
            .modified()
            .ok()
            .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
            .map(|d| d.as_nanos() as i128)
            .unwrap_or(0);
        Stamp(Mark::File { ino, len: meta.len(), mtime_ns })
    }

    /// How long ago the file was last modified (zero for a time in the future). A revision is
    /// exact whatever its age, so it reads as old.
    pub fn age(&self) -> std::time::Duration {
        let Mark::File { mtime_ns, .. } = self.0 else { return std::time::Duration::MAX };
        let now =
            std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default().as_nanos() as i128;
        std::time::Duration::from_nanos((now - mtime_ns).max(0) as u64)
    }
}

/// The whole file as read, and the version it was read from.
type Versioned = (Map<String, Value>, Option<Stamp>);

#[derive(Debug)]
pub struct JsonStateStore {
    path: PathBuf,
    lock_path: PathBuf,
    /// Human-readable notes of recoveries (corrupt files kept aside), newest last.
    notices: Mutex<Vec<String>>,
    /// Where the sections are kept when they are rows of the state database, not a file.
    rows: Option<sections::Rows>,
}

impl JsonStateStore {
    pub fn new(path: impl Into<PathBuf>) -> Self {
        let path = path.into();
        let lock_path = lock_path_for(&path);
        JsonStateStore { path, lock_path, notices: Mutex::new(Vec::new()), rows: None }
    }

    /// The sections of one owner as rows of the state database (see [`sections`]).
    pub fn on_rows(rows: sections::Rows) -> Self {
        let path = rows.path().to_owned();
        JsonStateStore { lock_path: lock_path_for(&path), path, notices: Mutex::new(Vec::new()), rows: Some(rows) }
    }

    /// The file, or the state database that holds the rows.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The version now stored (`None` when there is no file, or no row yet).
    pub fn stamp(&self) -> Option<Stamp> {
        match &self.rows {
            Some(rows) => self.rows_stamp(rows),
            None => Stamp::of(&self.path),
        }
    }

    /// Takes the recovery notices gathered so far.
    #[cfg(test)]
    pub fn take_notices(&self) -> Vec<String> {
        std::mem::take(&mut *self.notices.lock().unwrap_or_else(|p| p.into_inner()))
    }

    pub(crate) fn io(&self, source: std::io::Error) -> StoreError {
        StoreError::Io { path: self.path.clone(), source }
    }

    fn notice(&self, message: String) {
        tracing::error!("{message}");
        self.notices.lock().unwrap_or_else(|p| p.into_inner()).push(message);
    }

    /// Reads one section (its default when absent), with the stamp of the version read.
    ///
    /// Without the lock: every write is a rename, so a reader sees the old file or the new
    /// one, whole, and a peer holding the lock never delays a reader. Only a file that does
    /// not parse is read again under the lock, where it is kept aside.
    pub fn read<T: DeserializeOwned + Default>(&self, section: &str) -> Result<(T, Option<Stamp>), StoreError> {
        if let Some(rows) = &self.rows {
            return self.read_row(rows, section);
        }
        if let Some((root, stamp)) = self.load_root_unlocked()? {
            return Ok((self.section_of(&root, section), stamp));
        }
        let _lock = FileLock::exclusive(&self.lock_path).map_err(|e| self.io(e))?;
        let root = self.load_root()?;
        let value = self.section_of(&root, section);
        Ok((value, self.stamp()))
    }

    /// The whole file and the stamp of that version, read without the lock; `None` when it
    /// does not parse (the locked path recovers it).
    fn load_root_unlocked(&self) -> Result<Option<Versioned>, StoreError> {
        let mut file = match std::fs::File::open(&self.path) {
            Ok(f) => f,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Some((Map::new(), None))),
            Err(e) => return Err(self.io(e)),
        };
        let stamp = Stamp::of_file(&file);
        let mut bytes = Vec::new();
        std::io::Read::read_to_end(&mut file, &mut bytes).map_err(|e| self.io(e))?;
        Ok(match serde_json::from_slice::<Value>(&bytes) {
            Ok(Value::Object(map)) => Some((map, stamp)),
            _ => None,
        })
    }

    /// Read-modify-write of one section under the lock; the closure's result is returned
    /// once the new state is durably on disk. Other sections are carried over untouched; a
    /// closure that changed nothing writes nothing.
    pub fn update<T, R>(&self, section: &str, f: impl FnOnce(&mut T) -> R) -> Result<R, StoreError>
    where
        T: Serialize + DeserializeOwned + Default,
    {
        if let Some(rows) = &self.rows {
            return self.update_row(rows, section, f);
        }
        let _lock = FileLock::exclusive(&self.lock_path).map_err(|e| self.io(e))?;
        let mut root = self.load_root()?;
        let decoded: Option<T> = self.decoded(&root, section);
        // What to carry over: the section as read, unless it was of the wrong shape (then it
        // was kept aside and is reset whole).
        let read = decoded.as_ref().and(root.get(section));
        let mut value = decoded.unwrap_or_default();
        let out = f(&mut value);
        let encoded = self.encode(section, &value, read)?;
        // Nothing changed (an absent section reads as its default): nothing is written, so an
        // idle engine leaves the file, and every reader's cache of it, alone.
        if unchanged::<T>(root.get(section), &encoded) {
            return Ok(out);
        }
        root.insert(section.to_owned(), encoded);
        self.write_root(root, section)?;
        Ok(out)
    }

    /// `value` as it is kept: the fields of `read` its type does not know carried over.
    fn encode<T: Serialize + DeserializeOwned>(
        &self,
        section: &str,
        value: &T,
        read: Option<&Value>,
    ) -> Result<Value, StoreError> {
        let mut encoded = serde_json::to_value(value).map_err(|e| StoreError::Encode {
            path: self.path.clone(),
            section: section.to_owned(),
            message: e.to_string(),
        })?;
        unknown::carry_over::<T>(read, &mut encoded);
        Ok(encoded)
    }

    /// Runs `f` on the whole file under the lock (a corrupt file is kept aside first).
    pub fn with_root<R>(&self, f: impl FnOnce(&Map<String, Value>) -> Result<R, StoreError>) -> Result<R, StoreError> {
        let _lock = FileLock::exclusive(&self.lock_path).map_err(|e| self.io(e))?;
        let root = self.load_root()?;
        f(&root)
    }

    /// Takes in a section from elsewhere unless this file has it already.
    pub fn adopt(&self, section: &str, value: &Value) -> Result<(), StoreError> {
        let _lock = FileLock::exclusive(&self.lock_path).map_err(|e| self.io(e))?;
        let mut root = self.load_root()?;
        if root.contains_key(section) {
            return Ok(());
        }
        root.insert(section.to_owned(), value.clone());
        self.write_root(root, section)
    }

    /// A durable replace of the whole file. Called under the lock.
    fn write_root(&self, root: Map<String, Value>, section: &str) -> Result<(), StoreError> {
        let bytes = serde_json::to_vec_pretty(&Value::Object(root)).map_err(|e| StoreError::Encode {
            path: self.path.clone(),
            section: section.to_owned(),
            message: e.to_string(),
        })?;
        if bytes.len() > MAX_STATE_BYTES {
            return Err(StoreError::TooLarge {
                path: self.path.clone(),
                section: section.to_owned(),
                bytes: bytes.len(),
            });
        }
        write_atomic(&self.path, &bytes).map_err(|e| self.io(e))
    }

    /// The whole file as a JSON object. Called under the lock.
    fn load_root(&self) -> Result<Map<String, Value>, StoreError> {
        let bytes = match std::fs::read(&self.path) {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Map::new()),
            Err(e) => return Err(self.io(e)),
        };
        match serde_json::from_slice::<Value>(&bytes) {
            Ok(Value::Object(map)) => Ok(map),
            Ok(_) => self.recover("is not a JSON object"),
            Err(e) => self.recover(&e.to_string()),
        }
    }

    /// Keeps the unreadable file aside and starts from empty. The next write replaces the
    /// original only after the copy exists, so no byte of it is lost.
    fn recover(&self, why: &str) -> Result<Map<String, Value>, StoreError> {
        let aside = keep_aside(&self.path).map_err(|e| self.io(e))?;
        std::fs::remove_file(&self.path).map_err(|e| self.io(e))?;
        self.notice(format!(
            "state file {} is corrupt ({why}); kept it as {} and started from empty state",
            self.path.display(),
            aside.display()
        ));
        Ok(Map::new())
    }

    /// One section decoded; a section of the wrong shape is kept aside (a copy of the whole
    /// file, once per content) and read as its default, so the other sections survive.
    fn section_of<T: DeserializeOwned + Default>(&self, root: &Map<String, Value>, section: &str) -> T {
        self.decoded(root, section).unwrap_or_default()
    }

    /// One section decoded; `None` when it is absent or of the wrong shape (kept aside).
    fn decoded<T: DeserializeOwned>(&self, root: &Map<String, Value>, section: &str) -> Option<T> {
        match T::deserialize(root.get(section)?) {
            Ok(t) => Some(t),
            Err(e) => {
                // Reported and copied once per content: a section read on every status is not
                // copied on every read.
                match keep_aside_once(&self.path) {
                    Ok((_, false)) => {}
                    Ok((kept, true)) => self.notice(format!(
                        "state file {}: section `{section}` is unreadable ({e}); kept a copy as {} and reset that section",
                        self.path.display(),
                        kept.display()
                    )),
                    Err(err) => self.notice(format!(
                        "state file {}: section `{section}` is unreadable ({e}); the copy failed ({err}); reset that section",
                        self.path.display()
                    )),
                }
                None
            }
        }
    }
}

/// Whether `encoded` is what was kept (an absent section is its default).
fn unchanged<T: Serialize + Default>(kept: Option<&Value>, encoded: &Value) -> bool {
    match kept {
        Some(old) => old == encoded,
        None => serde_json::to_value(T::default()).is_ok_and(|d| d == *encoded),
    }
}

#[cfg(test)]
mod db_tests;
#[cfg(test)]
mod items_tests;
#[cfg(test)]
mod sections_tests;
#[cfg(test)]
mod tests;
