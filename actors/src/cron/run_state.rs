//! The jobs' run state (next run, last run, runs, strikes, a pause, a claim) in the state
//! database, a row per job, so a fire writes its job's row and never rewrites jobs.json: that
//! file stays the user's, their jobs as they wrote them.
//!
//! A row belongs to the job with its id *and* creation time: a job removed and another added
//! later under the same id by hand starts afresh. Two jobs a hand edit gave one id are told
//! apart by their order among the jobs of that id (`nth`). A job with no row takes the `state` that
//! jobs.json holds (written by an earlier version, or by hand), and the first write moves it
//! here. Reads from a process that has not written open the database read-only and leave no
//! trace; none is made until a job has state to keep.

use super::store::{Job, JobState, JobsFile};
use crate::store::db::{Database, DbError};
use crate::store::StoreError;
use rusqlite::params;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// A rowid table, so a fire's change of one job's state is an update in place of one small
/// page: the key's index entry stays as it is, and the row (a few hundred bytes) fits its page
/// (in a table keyed by its primary key alone, a row that size spilled to an overflow page,
/// and each fire wrote three pages).
const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS cron_runs (
    job_id TEXT NOT NULL,
    nth INTEGER NOT NULL,
    created_at INTEGER NOT NULL,
    state TEXT NOT NULL,
    PRIMARY KEY (job_id, nth)
);
";

/// Where the previous version kept the rows: moved to `cron_runs` by the first writer.
const EARLIER: &str = "cron_state";
const MOVE_EARLIER: &str = "
INSERT OR IGNORE INTO cron_runs (job_id, nth, created_at, state)
    SELECT job_id, nth, created_at, state FROM cron_state;
DROP TABLE cron_state;
";

/// A job's key among the rows: its id, and its place among the jobs of that id.
pub(super) type Key = (String, i64);

/// Where the jobs' run state is kept, a record per job, apart from jobs.json: the store trait
/// in front of the cron state. [`RunStates`] keeps it in the state database; [`MemoryRunStates`]
/// is the test double. Each method is one atomic step against every process on the data dir.
pub(super) trait RunStateStore: Send + Sync + std::fmt::Debug {
    /// Puts each job's kept state on it (a job with no record of its own keeps what it has,
    /// and a record of another job that had this key, removed since, is not its).
    fn overlay(&self, jobs: &mut [Job]) -> Result<(), StoreError>;
    /// Keeps the state of the jobs of `all` at the positions `changed`, and drops the records
    /// of `gone` (keys from [`keys`]), together.
    fn save(&self, all: &[Job], changed: &[usize], gone: &[Key]) -> Result<(), StoreError>;
}

/// The rows read back: by key, the job's creation time (ms) and its state.
type Rows = HashMap<Key, (i64, JobState)>;

/// Where the rows of one jobs.json are kept.
#[derive(Debug)]
pub(super) struct RunStates {
    /// `state.db` of the data dir jobs.json is in.
    path: PathBuf,
    /// The connection this process writes through, once it has written.
    writer: Mutex<Option<Arc<Database>>>,
}

impl RunStates {
    /// The rows of the jobs in `jobs`: for `<data dir>/cron/jobs.json`, in
    /// `<data dir>/state.db`; for a jobs file anywhere else, in a `state.db` beside it.
    pub(super) fn of_jobs(jobs: &Path) -> Self {
        let beside = jobs.parent().unwrap_or(Path::new("."));
        let root = match beside.file_name() {
            Some(name) if name == "cron" => beside.parent().unwrap_or(beside),
            _ => beside,
        };
        RunStates { path: crate::data_dir::DataDir::new(root).state_db(), writer: Mutex::new(None) }
    }

    fn writer(&self) -> Result<Arc<Database>, DbError> {
        let mut writer = self.writer.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(db) = writer.as_ref() {
            return Ok(db.clone());
        }
        let db = Database::shared(&self.path)?;
        db.ensure_schema(SCHEMA)?;
        if db.has_table(EARLIER)? {
            db.ensure_schema(MOVE_EARLIER)?;
        }
        *writer = Some(db.clone());
        Ok(db)
    }

    /// Every job's row (by id and `nth`: its creation time in ms, its state), read through
    /// this process's writer, else a read-only connection; none when there is no database yet.
    fn rows(&self) -> Result<Rows, DbError> {
        let writer = self.writer.lock().unwrap_or_else(|p| p.into_inner()).clone();
        let db = match writer {
            Some(db) => db,
            None => match Database::open_read_only(&self.path)? {
                Some(db) => Arc::new(db),
                None => return Ok(HashMap::new()),
            },
        };
        // A read-only look at a database the previous version wrote reads its table.
        let table = match (db.has_table("cron_runs")?, db.has_table(EARLIER)?) {
            (true, _) => "cron_runs",
            (false, true) => EARLIER,
            (false, false) => return Ok(HashMap::new()),
        };
        db.read(|c| {
            let sql = format!("SELECT job_id, nth, created_at, state FROM {table}");
            let mut stmt = c.prepare_cached(&sql).map_err(|e| db.error(e))?;
            let rows = stmt
                .query_map([], |r| {
                    Ok((r.get::<_, String>(0)?, r.get::<_, i64>(1)?, r.get::<_, i64>(2)?, r.get::<_, String>(3)?))
                })
                .map_err(|e| db.error(e))?;
            let mut out = HashMap::new();
            for row in rows {
                let (id, nth, created, state) = row.map_err(|e| db.error(e))?;
                let state: JobState = serde_json::from_str(&state).map_err(|e| db.decode(e))?;
                out.insert((id, nth), (created, state));
            }
            Ok(out)
        })
    }
}

impl RunStateStore for RunStates {
    fn overlay(&self, jobs: &mut [Job]) -> Result<(), StoreError> {
        put_on(jobs, self.rows()?);
        Ok(())
    }

    /// In one transaction; nothing at all (not even a database made) when there is nothing to
    /// keep or drop.
    fn save(&self, all: &[Job], changed: &[usize], gone: &[Key]) -> Result<(), StoreError> {
        if changed.is_empty() && gone.is_empty() {
            return Ok(());
        }
        let db = self.writer()?;
        db.write(|tx| {
            let sql = "INSERT INTO cron_runs (job_id, nth, created_at, state) VALUES (?1, ?2, ?3, ?4)
                ON CONFLICT (job_id, nth) DO UPDATE SET created_at = excluded.created_at, state = excluded.state";
            let mut put = tx.prepare_cached(sql).map_err(|e| db.error(e))?;
            for &i in changed {
                let (job, (id, nth)) = (&all[i], key(all, i));
                let state = serde_json::to_string(&job.state).map_err(|e| db.decode(e))?;
                put.execute(params![id, nth, job.created_at.timestamp_millis(), state]).map_err(|e| db.error(e))?;
            }
            let sql = "DELETE FROM cron_runs WHERE job_id = ?1 AND nth = ?2";
            let mut drop = tx.prepare_cached(sql).map_err(|e| db.error(e))?;
            for (id, nth) in gone {
                drop.execute(params![id, nth]).map_err(|e| db.error(e))?;
            }
            Ok(())
        })?;
        Ok(())
    }
}

/// Puts the records on the jobs they belong to: the same key *and* creation time.
fn put_on(jobs: &mut [Job], mut rows: Rows) {
    if rows.is_empty() {
        return;
    }
    let keys = keys(jobs);
    for (job, key) in jobs.iter_mut().zip(keys) {
        match rows.remove(&key) {
            Some((created, state)) if created == job.created_at.timestamp_millis() => job.state = state,
            _ => {}
        }
    }
}

/// The test double: the records in memory, with the rules of [`RunStates`].
#[cfg(test)]
#[derive(Debug, Default)]
pub(super) struct MemoryRunStates {
    rows: Mutex<Rows>,
}

#[cfg(test)]
impl RunStateStore for MemoryRunStates {
    fn overlay(&self, jobs: &mut [Job]) -> Result<(), StoreError> {
        put_on(jobs, self.rows.lock().unwrap().clone());
        Ok(())
    }

    fn save(&self, all: &[Job], changed: &[usize], gone: &[Key]) -> Result<(), StoreError> {
        let mut rows = self.rows.lock().unwrap();
        for &i in changed {
            rows.insert(key(all, i), (all[i].created_at.timestamp_millis(), all[i].state.clone()));
        }
        for k in gone {
            rows.remove(k);
        }
        Ok(())
    }
}

/// The key of the job at `i` alone (what a fire among many jobs needs, without the others').
fn key(jobs: &[Job], i: usize) -> Key {
    let id = &jobs[i].id;
    (id.clone(), jobs[..i].iter().filter(|j| j.id == *id).count() as i64)
}

/// Each job's key: its id, and how many jobs before it have that id (0 but after a hand edit
/// that gave two jobs one id).
pub(super) fn keys(jobs: &[Job]) -> Vec<Key> {
    let mut seen: HashMap<&str, i64> = HashMap::new();
    jobs.iter()
        .map(|j| {
            let nth = seen.entry(j.id.as_str()).or_insert(0);
            *nth += 1;
            (j.id.clone(), *nth - 1)
        })
        .collect()
}

/// Whether `a` and `b` hold the same jobs in the same order, whatever their run state.
pub(super) fn same_jobs(a: &JobsFile, b: &JobsFile) -> bool {
    a.jobs.len() == b.jobs.len() && a.jobs.iter().zip(&b.jobs).all(|(x, y)| x.same_definition(y))
}

/// The positions of the jobs of `after` whose run state differs from the same job's in
/// `before` (a new job with nothing kept yet has nothing to say).
pub(super) fn changed_states(before: &JobsFile, after: &JobsFile) -> Vec<usize> {
    let aligned =
        before.jobs.len() == after.jobs.len() && before.jobs.iter().zip(&after.jobs).all(|(b, a)| b.id == a.id);
    if aligned {
        return (0..after.jobs.len()).filter(|&i| before.jobs[i].state != after.jobs[i].state).collect();
    }
    let was: std::collections::HashMap<(String, i64), &JobState> =
        keys(&before.jobs).into_iter().zip(before.jobs.iter().map(|j| &j.state)).collect();
    keys(&after.jobs)
        .into_iter()
        .enumerate()
        .filter(|(i, key)| match was.get(key) {
            Some(state) => **state != after.jobs[*i].state,
            None => !after.jobs[*i].state.is_unset(),
        })
        .map(|(i, _)| i)
        .collect()
}

#[cfg(test)]
mod tests;
