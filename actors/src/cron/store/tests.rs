use super::*;
use chrono::TimeZone;

pub(super) fn job(id: &str) -> Job {
    Job {
        id: id.into(),
        message: "stretch".into(),
        schedule: Schedule::At { at: Utc.with_ymd_and_hms(2026, 3, 2, 12, 10, 0).unwrap() },
        target: Some("cli:local".into()),
        created_at: Utc.with_ymd_and_hms(2026, 3, 2, 12, 0, 0).unwrap(),
        enabled: true,
        topic: None,
        broadcast: Vec::new(),
        state: JobState::default(),
        extra: Default::default(),
    }
}

#[test]
fn jobs_round_trip() {
    let dir = tempfile::tempdir().unwrap();
    let s = JobsStore::new(dir.path().join("cron/jobs.json"));
    s.update(|f| f.jobs.push(job("a"))).unwrap();
    assert_eq!(s.load().unwrap().jobs, vec![job("a")]);
}

#[test]
fn a_malformed_file_is_named_with_its_position_and_left_byte_identical() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("jobs.json");
    let bad = b"{\"jobs\": [\n  {\"id\": \"a\",, }\n]}";
    std::fs::write(&path, bad).unwrap();
    let s = JobsStore::new(&path);
    let err = s.update(|f| f.jobs.push(job("b"))).unwrap_err().to_string();
    assert!(err.contains(&path.display().to_string()) && err.contains("line 2"), "{err}");
    assert_eq!(std::fs::read(&path).unwrap(), bad);
}

#[test]
fn an_update_that_changes_nothing_does_not_write() {
    let dir = tempfile::tempdir().unwrap();
    let s = JobsStore::new(dir.path().join("jobs.json"));
    s.update(|f| f.jobs.push(job("a"))).unwrap();
    let before = s.stamp();
    std::thread::sleep(std::time::Duration::from_millis(5));
    s.update(|f| f.jobs.len()).unwrap();
    assert_eq!(s.stamp(), before);
}

#[test]
fn a_peer_store_s_write_and_a_hand_edit_are_both_seen_through_the_cache() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("jobs.json");
    let (mine, peer) = (JobsStore::new(&path), JobsStore::new(&path));
    mine.update(|f| f.jobs.push(job("a"))).unwrap();
    assert_eq!(mine.load().unwrap().jobs.len(), 1);
    // Same length, same moment: only the write counter tells them apart.
    peer.update(|f| f.jobs[0].id = "b".into()).unwrap();
    assert_eq!(mine.load().unwrap().jobs[0].id, "b");
    std::thread::sleep(RACY * 2);
    let text = std::fs::read_to_string(&path).unwrap();
    assert_eq!(mine.load().unwrap().jobs[0].id, "b", "parsed once still, now cached");
    std::fs::write(&path, text.replace("\"b\"", "\"c\"")).unwrap();
    assert_eq!(mine.load().unwrap().jobs[0].id, "c", "a hand edit changes the file's version");
}

/// A hand edit racing an update is kept and the update gives way (the caller tries again
/// on the edited file): one saved while the update computes, which the check before the
/// rename sees; and one saved in place in the instant between that check and the rename,
/// which lands in the file the rename unlinks, where the update sees it and puts it back.
#[test]
fn a_hand_edit_racing_an_update_is_kept_and_the_update_gives_way() {
    for after_the_check in [false, true] {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("jobs.json");
        let s = JobsStore::new(&path);
        s.update(|f| f.jobs.push(job("a"))).unwrap();
        let edit = b"{\"jobs\": []}";
        let save = || std::fs::write(&path, edit).unwrap(); // the user's editor, in place
        let raced = if after_the_check {
            s.update_racing(|f| f.jobs.push(job("b")), save)
        } else {
            s.update_racing(
                |f| {
                    save();
                    f.jobs.push(job("b"))
                },
                || {},
            )
        };
        let err = raced.unwrap_err();
        assert!(matches!(err, JobsError::Conflict { .. }), "{err}");
        assert_eq!(std::fs::read(&path).unwrap(), edit, "the edit was kept");
        assert!(s.update(|f| f.jobs.push(job("b"))).is_ok(), "and the next update works on it");
        assert_eq!(s.load().unwrap().jobs.len(), 1);
    }
}

#[test]
fn an_empty_file_is_malformed_and_left_alone_but_a_missing_one_is_no_jobs() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("jobs.json");
    let s = JobsStore::new(&path);
    assert_eq!(s.load().unwrap(), JobsFile::default(), "no file yet: no jobs");
    for blank in [&b""[..], b" \n\t\n"] {
        std::fs::write(&path, blank).unwrap();
        let err = s.update(|f| f.jobs.push(job("a"))).unwrap_err();
        assert!(matches!(err, JobsError::Malformed { line: 1, .. }), "{err}");
        let text = err.to_string();
        assert!(text.contains(&path.display().to_string()) && text.contains("is empty"), "{text}");
        assert_eq!(std::fs::read(&path).unwrap(), blank, "left as it was");
    }
}

#[test]
fn a_hand_written_job_without_state_parses() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("jobs.json");
    let text = r#"{"jobs": [{"id": "w", "message": "water the plants", "target": "cli:local",
        "created_at": "2026-12-01T08:00:00Z", "schedule": {"kind": "cron", "expr": "0 9 * * *", "tz": "UTC"}}]}"#;
    std::fs::write(&path, text).unwrap();
    let file = JobsStore::new(&path).load().unwrap();
    assert_eq!(file.jobs[0].state, JobState::default());
    assert!(file.jobs[0].enabled);
}

/// A field this version does not know, on a job and in its state, survives a write-back of
/// the whole file (here: another job added): the job's in jobs.json, the state's with the
/// state, in the database.
#[test]
fn unknown_fields_of_a_job_and_of_its_state_survive_a_write_back() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("jobs.json");
    let text = r#"{"jobs": [{"id": "w", "message": "water the plants", "target": "cli:local", "note": "mine",
        "created_at": "2026-12-01T08:00:00Z", "schedule": {"kind": "cron", "expr": "0 9 * * *", "tz": "UTC"},
        "state": {"runs": 3, "streak": {"days": 4}}}]}"#;
    std::fs::write(&path, text).unwrap();
    let s = JobsStore::new(&path);
    s.update(|f| f.jobs.push(job("b"))).unwrap();
    let written: serde_json::Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    let w = &written["jobs"][0];
    assert_eq!(w["note"], "mine", "{written}");
    let state = &JobsStore::new(&path).load().unwrap().jobs[0].state;
    assert_eq!(state.extra["streak"], serde_json::json!({"days": 4}), "{state:?}");
    assert_eq!(state.runs, 3);
    assert_eq!(written["jobs"][1]["id"], "b");
    assert!(written["jobs"][1].get("note").is_none(), "nothing is added to a job that had none");
}

/// A field written by hand at the top of the file, beside `jobs`, survives a write-back, and
/// so does one of a job.
#[test]
fn an_unknown_top_level_field_survives_a_write_back() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("jobs.json");
    let text = r#"{"note": "mine", "jobs": [{"id": "w", "message": "water", "target": "cli:local", "colour": "red",
        "created_at": "2026-12-01T08:00:00Z", "schedule": {"kind": "cron", "expr": "0 9 * * *", "tz": "UTC"}}]}"#;
    std::fs::write(&path, text).unwrap();
    let s = JobsStore::new(&path);
    s.update(|f| f.jobs[0].state.runs += 1).unwrap();
    s.update(|f| f.jobs.push(job("b"))).unwrap();
    let written: serde_json::Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    assert_eq!(written["note"], "mine", "{written}");
    assert_eq!(written["jobs"][0]["colour"], "red", "{written}");
    assert_eq!(JobsStore::new(&path).load().unwrap().jobs[0].state.runs, 1, "{written}");
}

fn armed(job: &mut Job, at: DateTime<Utc>) {
    job.state.next_run_at = Some(at);
    job.state.claim = Some(Claim { pid: 7, at, slot: at });
}

/// A fire changes its job's run state only: that goes to the state database, a row for the
/// job, and jobs.json is left byte for byte; another process's store reads it back.
#[test]
fn a_fire_writes_its_run_state_to_the_database_and_leaves_jobs_json_alone() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("cron/jobs.json");
    let s = JobsStore::new(&path);
    s.update(|f| f.jobs.extend([job("a"), job("b")])).unwrap();
    let written = std::fs::read(&path).unwrap();
    let at = Utc.with_ymd_and_hms(2026, 3, 2, 12, 10, 0).unwrap();
    let (_, view) = s.update_viewed(|f| armed(&mut f.jobs[1], at)).unwrap();
    assert_eq!(std::fs::read(&path).unwrap(), written, "jobs.json untouched by a change of run state");
    assert!(dir.path().join("state.db").is_file());
    assert_eq!(view.version, s.version(), "the version a fire leaves is the one read after it");
    let peer = JobsStore::new(&path);
    let seen = peer.load().unwrap();
    assert_eq!(seen.jobs[1].state.claim.map(|c| c.pid), Some(7));
    assert!(seen.jobs[0].state.is_unset());
    // Its own store's cached copy follows a peer's change of run state too.
    peer.update(|f| f.jobs[1].state.runs = 5).unwrap();
    assert_eq!(s.load().unwrap().jobs[1].state.runs, 5);
    // Removing the job removes its row: a job added later under the same id starts afresh.
    s.update(|f| f.jobs.remove(1)).unwrap();
    let mut again = job("b");
    again.created_at += chrono::Duration::seconds(1);
    s.update(|f| f.jobs.push(again.clone())).unwrap();
    assert_eq!(JobsStore::new(&path).load().unwrap().jobs[1], again);
}

/// The state an earlier version wrote into jobs.json moves to the database at the first write,
/// unknown fields and all; the jobs themselves stay as they were written.
#[test]
fn run_state_in_an_earlier_jobs_json_moves_to_the_database_once() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("cron/jobs.json");
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    let earlier = r#"{"jobs": [{"id": "w", "message": "water", "target": "cli:local", "note": "mine",
        "created_at": "2026-03-01T08:00:00Z", "schedule": {"kind": "cron", "expr": "0 9 * * *", "tz": "UTC"},
        "state": {"runs": 3, "strikes": 1, "streak": {"days": 4}}}], "owner": "me"}"#;
    std::fs::write(&path, earlier).unwrap();
    let s = JobsStore::new(&path);
    assert_eq!(s.load().unwrap().jobs[0].state.runs, 3, "read from the file until moved");
    assert!(!dir.path().join("state.db").exists(), "a read makes no database");
    s.update(|f| f.jobs[0].state.strikes = 0).unwrap();
    let file: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    assert!(file["jobs"][0].get("state").is_none(), "{file}");
    assert_eq!((&file["jobs"][0]["note"], &file["owner"]), (&Value::from("mine"), &Value::from("me")));
    let state = JobsStore::new(&path).load().unwrap().jobs[0].state.clone();
    assert_eq!((state.runs, state.strikes), (3, 0));
    assert_eq!(state.extra["streak"]["days"], 4);
}
