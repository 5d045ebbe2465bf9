use super::*;
use crate::cron::store::Schedule;
use chrono::{TimeZone, Utc};

fn job(id: &str) -> Job {
    let at = Utc.with_ymd_and_hms(2026, 3, 2, 12, 0, 0).unwrap();
    Job {
        id: id.into(),
        message: format!("the reminder that job {id} sends, at some length like a real one"),
        schedule: Schedule::Every { every_s: 60, anchor: at },
        target: Some("telegram:123456789".into()),
        broadcast: Vec::new(),
        created_at: at,
        enabled: true,
        topic: None,
        state: JobState::default(),
        extra: Default::default(),
    }
}

/// A state like a recurring job's after some fires: next and last run, runs, a claim.
fn fired(job: &mut Job, runs: u64) {
    // Times as the clock gives them, to the nanosecond.
    let at = Utc.with_ymd_and_hms(2026, 12, 7, 9, 0, 0).unwrap()
        + chrono::Duration::seconds(runs as i64)
        + chrono::Duration::nanoseconds(392_562_154);
    job.state.next_run_at = Some(at + chrono::Duration::seconds(60));
    job.state.last_run_at = Some(at);
    job.state.runs = runs;
    job.state.claim = Some(crate::cron::store::Claim { pid: 4_000_000, at, slot: at });
}

/// The write-ahead log's frames (pages written) since it was last emptied.
fn frames(db: &std::path::Path) -> u64 {
    let wal = std::fs::metadata(db.with_extension("db-wal")).map(|m| m.len()).unwrap_or(0);
    wal.saturating_sub(32) / (1024 + 24)
}

fn checkpoint(db: &std::path::Path) {
    let c = rusqlite::Connection::open(db).unwrap();
    c.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(())).unwrap();
}

/// A fire writes its job's row: one page, among a hundred jobs with state as among one.
#[test]
fn a_change_of_one_jobs_state_writes_one_page() {
    let dir = tempfile::tempdir().unwrap();
    let states = RunStates::of_jobs(&dir.path().join("cron/jobs.json"));
    let mut jobs: Vec<Job> = (0..100).map(|i| job(&format!("job{i:03}"))).collect();
    jobs.iter_mut().enumerate().for_each(|(i, j)| fired(j, i as u64));
    states.save(&jobs, &(0..100).collect::<Vec<_>>(), &[]).unwrap();
    let db = dir.path().join("state.db");
    checkpoint(&db);
    fired(&mut jobs[42], 1_000);
    states.save(&jobs, &[42], &[]).unwrap();
    assert_eq!(frames(&db), 1, "one page for one job's new state");
    let mut back = jobs.clone();
    back.iter_mut().for_each(|j| j.state = JobState::default());
    states.overlay(&mut back).unwrap();
    assert_eq!(back, jobs);
}

/// Rows the previous version kept (a table keyed by the primary key alone) are read as they
/// are by a read-only look, and moved once by the first writer.
#[test]
fn the_previous_versions_rows_are_read_and_moved_once() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("state.db");
    let mut jobs = vec![job("a"), job("b")];
    fired(&mut jobs[1], 7);
    {
        let c = rusqlite::Connection::open(&db).unwrap();
        c.execute_batch(
            "CREATE TABLE cron_state (job_id TEXT NOT NULL, nth INTEGER NOT NULL, created_at INTEGER NOT NULL,
             state TEXT NOT NULL, PRIMARY KEY (job_id, nth)) WITHOUT ROWID;",
        )
        .unwrap();
        let state = serde_json::to_string(&jobs[1].state).unwrap();
        let created = jobs[1].created_at.timestamp_millis();
        c.execute("INSERT INTO cron_state VALUES ('b', 0, ?1, ?2)", rusqlite::params![created, state]).unwrap();
    }
    let read = |states: &RunStates| {
        let mut back = vec![job("a"), job("b")];
        states.overlay(&mut back).unwrap();
        back
    };
    assert_eq!(read(&RunStates::of_jobs(&dir.path().join("cron/jobs.json"))), jobs, "read where it is");
    let writer = RunStates::of_jobs(&dir.path().join("cron/jobs.json"));
    writer.save(&jobs, &[0], &[]).unwrap();
    let c = rusqlite::Connection::open(&db).unwrap();
    let tables: Vec<String> = c
        .prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert_eq!(tables, ["cron_runs"]);
    assert_eq!(read(&writer), jobs);
    assert_eq!(read(&RunStates::of_jobs(&dir.path().join("cron/jobs.json"))), jobs);
}
