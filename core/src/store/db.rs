//! The engine's own state in one embedded SQLite database (`state.db` in the data dir), shared
//! by every process on the data dir.
//!
//! WAL mode: readers never wait for a writer, and a write appends only the pages it changed,
//! so an operation costs what it changes, never what has accumulated. Every change is one
//! short `BEGIN IMMEDIATE` transaction (the write lock taken first, so two processes never
//! interleave a read and a write), waiting for a peer for [`BUSY_TIMEOUT`] at most and then
//! failing with a clear error that changed nothing. Commits are durable (`synchronous=FULL`):
//! what a transaction promised survives a crash or a power cut.
//!
//! A process has one connection ([`Database::shared`]), behind a mutex, that every owner's
//! store uses (opened when the first needs it); the outbox's and the cron run state's work runs
//! on a blocking thread ([`off_thread`]), never an actor's.
//! A file that is not a readable database is moved aside (`state.db.corrupt-<UTC time>`),
//! reported, and the engine starts from an empty one.

use rusqlite::{Connection, OpenFlags, Transaction, TransactionBehavior};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

/// How long a write waits for a peer that holds the database before it gives up.
pub const BUSY_TIMEOUT: Duration = Duration::from_secs(5);

/// The database's page size (set when it is created): the unit every change is written in.
const PAGE_SIZE: i64 = 1024;

/// Each connection's page cache, in KiB.
const CACHE_KIB: i64 = 256;

#[derive(Debug, thiserror::Error)]
pub enum DbError {
    #[error("state database {path}: another process held it for over {:.1} s; nothing was changed", waited.as_secs_f64())]
    Busy { path: PathBuf, waited: Duration },
    #[error("state database {path}: {source}")]
    Sqlite { path: PathBuf, source: rusqlite::Error },
    #[error("state database {path}: cannot write ({source}): is the disk full, or a file-size limit reached?")]
    Disk { path: PathBuf, source: rusqlite::Error },
    #[error("state database {path}: a record does not read back ({message})")]
    Decode { path: PathBuf, message: String },
    #[error("state database {path}: {source}")]
    Io { path: PathBuf, source: std::io::Error },
}

/// The process's connection to `state.db`.
#[derive(Debug)]
pub struct Database {
    path: PathBuf,
    conn: Mutex<Connection>,
    read_only: bool,
    /// How long a write waits for a peer ([`BUSY_TIMEOUT`]).
    busy: Duration,
}

impl Database {
    /// Opens (creating it if need be) the database at `path` for reading and writing. A file
    /// that is not a readable database is moved aside first; the returned note says so, for
    /// the operator (it is logged as an error too).
    pub fn open(path: &Path) -> Result<(Database, Option<String>), DbError> {
        match Self::open_writable(path) {
            Ok(db) => Ok((db, None)),
            Err(DbError::Sqlite { source, .. }) if is_corrupt(&source) => {
                let kept = move_aside(path)?;
                let note = format!(
                    "state database {} is corrupt ({source}); kept it as {} and started from an empty one",
                    path.display(),
                    kept.display()
                );
                tracing::error!("{note}");
                Ok((Self::open_writable(path)?, Some(note)))
            }
            Err(e) => Err(e),
        }
    }

    /// This process's connection to the database at `path`, opened (see [`Database::open`])
    /// by the first owner that asks and shared by every other while one holds it: one
    /// connection, one page cache, however many owners a process opens.
    pub fn shared(path: &Path) -> Result<Arc<Database>, DbError> {
        static OPEN: Mutex<Vec<(PathBuf, Weak<Database>)>> = Mutex::new(Vec::new());
        let mut open = OPEN.lock().unwrap_or_else(|p| p.into_inner());
        open.retain(|(_, db)| db.strong_count() > 0);
        if let Some(db) = open.iter().find(|(p, _)| p == path).and_then(|(_, db)| db.upgrade()) {
            return Ok(db);
        }
        let (db, _) = Database::open(path)?;
        let db = Arc::new(db);
        open.push((path.to_owned(), Arc::downgrade(&db)));
        Ok(db)
    }

    /// Opens the database for a command that only reads: `None` when there is none yet (a read
    /// never creates one). It leaves no trace: while no process has the database open (no
    /// write-ahead log beside it) it is read as a file no one changes, so not even SQLite's
    /// shared-memory file is made; otherwise it joins the writers' log to read their latest
    /// commits. A corrupt file is reported by the first read, and left where it is.
    pub fn open_read_only(path: &Path) -> Result<Option<Database>, DbError> {
        if !path.exists() {
            return Ok(None);
        }
        let flags = OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX | OpenFlags::SQLITE_OPEN_URI;
        let idle = !side_file(path, "-wal").exists();
        let uri = format!("file:{}{}", uri_path(path), if idle { "?immutable=1" } else { "" });
        let conn = Connection::open_with_flags(&uri, flags).map_err(|e| sqlite(path, e))?;
        conn.busy_timeout(BUSY_TIMEOUT).map_err(|e| sqlite(path, e))?;
        Ok(Some(Database { path: path.to_owned(), conn: Mutex::new(conn), read_only: true, busy: BUSY_TIMEOUT }))
    }

    fn open_writable(path: &Path) -> Result<Database, DbError> {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(|source| DbError::Io { path: path.to_owned(), source })?;
        }
        // Private before SQLite opens it: its log and shared-memory files take the database's
        // permissions when they are made.
        if path.exists() {
            crate::data_dir::make_private(path).map_err(|source| DbError::Io { path: path.to_owned(), source })?;
        } else {
            create_private(path).map_err(|source| DbError::Io { path: path.to_owned(), source })?;
        }
        let conn = Connection::open(path).map_err(|e| sqlite(path, e))?;
        conn.busy_timeout(BUSY_TIMEOUT).map_err(|e| sqlite(path, e))?;
        // The first statements read the file's header: a file that is not a database fails here.
        // Small pages: a change writes the pages it touches whole, and the state is small rows.
        conn.pragma_update(None, "page_size", PAGE_SIZE).map_err(|e| sqlite(path, e))?;
        conn.pragma_update(None, "journal_mode", "WAL").map_err(|e| sqlite(path, e))?;
        conn.pragma_update(None, "synchronous", "FULL").map_err(|e| sqlite(path, e))?;
        // A small page cache: the engine's rows are few and small, and every connection has one.
        conn.pragma_update(None, "cache_size", -CACHE_KIB).map_err(|e| sqlite(path, e))?;
        // The schema is read whole: a file damaged there is caught now. (A full check reads every
        // page, and costs memory, at every start: `raven state check` runs it on request, and a
        // damaged page met later fails its operation with SQLite's "malformed" error.)
        conn.query_row("SELECT count(*) FROM sqlite_master", [], |r| r.get::<_, i64>(0))
            .map_err(|e| sqlite(path, e))?;
        Ok(Database { path: path.to_owned(), conn: Mutex::new(conn), read_only: false, busy: BUSY_TIMEOUT })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Waits `busy` for a peer's lock instead of [`BUSY_TIMEOUT`] (a test's short wait).
    #[cfg(test)]
    pub(crate) fn with_busy_timeout(mut self, busy: Duration) -> Result<Self, DbError> {
        self.conn.get_mut().unwrap_or_else(|p| p.into_inner()).busy_timeout(busy).map_err(|e| sqlite(&self.path, e))?;
        self.busy = busy;
        Ok(self)
    }

    /// Runs `f` in one `BEGIN IMMEDIATE` transaction, committed when it returns `Ok`.
    pub fn write<R>(&self, f: impl FnOnce(&Transaction) -> Result<R, DbError>) -> Result<R, DbError> {
        self.try_write(f)
    }

    /// [`Database::write`] for work that fails with an error of its own (rolled back).
    pub fn try_write<R, E: From<DbError>>(&self, f: impl FnOnce(&Transaction) -> Result<R, E>) -> Result<R, E> {
        let mut conn = self.conn.lock().unwrap_or_else(|p| p.into_inner());
        let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate).map_err(|e| self.error(e))?;
        let out = f(&tx)?;
        tx.commit().map_err(|e| self.error(e))?;
        Ok(out)
    }

    /// Runs `f` on one consistent snapshot (a read transaction).
    pub fn read<R>(&self, f: impl FnOnce(&Connection) -> Result<R, DbError>) -> Result<R, DbError> {
        self.try_read(f)
    }

    /// [`Database::read`] for work that fails with an error of its own.
    pub fn try_read<R, E: From<DbError>>(&self, f: impl FnOnce(&Connection) -> Result<R, E>) -> Result<R, E> {
        let mut conn = self.conn.lock().unwrap_or_else(|p| p.into_inner());
        let tx = conn.transaction_with_behavior(TransactionBehavior::Deferred).map_err(|e| self.error(e))?;
        let out = f(&tx)?;
        tx.finish().map_err(|e| self.error(e))?;
        Ok(out)
    }

    /// SQLite's full integrity check: `ok`, or what it found wrong.
    pub fn check(&self) -> Result<Vec<String>, DbError> {
        let conn = self.conn.lock().unwrap_or_else(|p| p.into_inner());
        let mut stmt = conn.prepare("PRAGMA integrity_check").map_err(|e| self.error(e))?;
        let rows = stmt.query_map([], |r| r.get::<_, String>(0)).map_err(|e| self.error(e))?;
        rows.collect::<Result<Vec<_>, _>>().map_err(|e| self.error(e))
    }

    /// A consistent copy of the whole database at `target` (a new file), as of one moment.
    pub fn copy_to(&self, target: &Path) -> Result<(), DbError> {
        let conn = self.conn.lock().unwrap_or_else(|p| p.into_inner());
        let target = target.to_str().ok_or_else(|| self.decode("the copy's path is not UTF-8"))?;
        conn.execute("VACUUM INTO ?1", [target]).map(|_| ()).map_err(|e| self.error(e))
    }

    /// Creates what an owner keeps here (`CREATE TABLE IF NOT EXISTS …`), unless this
    /// connection only reads.
    pub fn ensure_schema(&self, sql: &str) -> Result<(), DbError> {
        if self.read_only {
            return Ok(());
        }
        self.write(|tx| tx.execute_batch(sql).map_err(|e| self.error(e)))
    }

    /// Whether a table exists (a read-only connection on an older file may lack one).
    pub fn has_table(&self, table: &str) -> Result<bool, DbError> {
        self.read(|c| {
            c.query_row("SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = ?1", [table], |r| {
                r.get::<_, i64>(0)
            })
            .map(|n| n > 0)
            .map_err(|e| self.error(e))
        })
    }

    /// A SQLite error of this database, a timeout on its lock told plainly.
    pub fn error(&self, e: rusqlite::Error) -> DbError {
        match e.sqlite_error_code() {
            Some(rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked) => {
                DbError::Busy { path: self.path.clone(), waited: self.busy }
            }
            _ => sqlite(&self.path, e),
        }
    }

    /// A record that does not decode.
    pub fn decode(&self, e: impl std::fmt::Display) -> DbError {
        DbError::Decode { path: self.path.clone(), message: e.to_string() }
    }
}

/// Runs blocking database work on a blocking thread and awaits it, so the actor thread that
/// asked never waits for a disk or a peer's lock.
pub async fn off_thread<R: Send + 'static>(f: impl FnOnce() -> R + Send + 'static) -> R {
    match actix_rt::task::spawn_blocking(f).await {
        Ok(r) => r,
        Err(e) => std::panic::resume_unwind(e.into_panic()),
    }
}

/// An empty file only its owner can read (SQLite takes an empty file for a new database).
fn create_private(path: &Path) -> std::io::Result<()> {
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    match options.open(path) {
        Ok(_) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(()),
        Err(e) => Err(e),
    }
}

/// `state.db-wal`, `state.db-shm` beside `state.db`.
fn side_file(path: &Path, suffix: &str) -> PathBuf {
    let name = path.file_name().unwrap_or_default().to_string_lossy();
    path.with_file_name(format!("{name}{suffix}"))
}

/// A path as the path part of a `file:` URI.
fn uri_path(path: &Path) -> String {
    const KEEP: &percent_encoding::AsciiSet =
        &percent_encoding::NON_ALPHANUMERIC.remove(b'/').remove(b'.').remove(b'-').remove(b'_');
    percent_encoding::utf8_percent_encode(&path.to_string_lossy(), KEEP).to_string()
}

fn sqlite(path: &Path, source: rusqlite::Error) -> DbError {
    match source.sqlite_error_code() {
        Some(rusqlite::ErrorCode::DiskFull | rusqlite::ErrorCode::SystemIoFailure) => {
            DbError::Disk { path: path.to_owned(), source }
        }
        _ => DbError::Sqlite { path: path.to_owned(), source },
    }
}

/// What a command that only reads says when the database does not read back as one: it is
/// shown as empty and left as it is. `None` for any other error.
pub fn corrupt_note(e: &DbError) -> Option<String> {
    match e {
        DbError::Sqlite { path, source } if is_corrupt(source) => Some(format!(
            "state database {} is corrupt ({source}); shown as empty and left as it is (the supervisor moves it aside when it next starts)",
            path.display()
        )),
        _ => None,
    }
}

/// Whether SQLite found the file is not a database, or a damaged one.
pub fn is_corrupt(e: &rusqlite::Error) -> bool {
    matches!(e.sqlite_error_code(), Some(rusqlite::ErrorCode::NotADatabase | rusqlite::ErrorCode::DatabaseCorrupt))
}

/// Renames the database and its WAL files to `<name>.corrupt-<UTC time>[-wal|-shm]`.
fn move_aside(path: &Path) -> Result<PathBuf, DbError> {
    let stamp = chrono::Utc::now().format("%Y%m%dT%H%M%S%.3fZ");
    let name = path.file_name().unwrap_or_default().to_string_lossy().into_owned();
    let kept = path.with_file_name(format!("{name}.corrupt-{stamp}"));
    std::fs::rename(path, &kept).map_err(|source| DbError::Io { path: path.to_owned(), source })?;
    for suffix in ["-wal", "-shm"] {
        let side = side_file(path, suffix);
        if side.exists() {
            let _ = std::fs::rename(&side, path.with_file_name(format!("{name}.corrupt-{stamp}{suffix}")));
        }
    }
    Ok(kept)
}
