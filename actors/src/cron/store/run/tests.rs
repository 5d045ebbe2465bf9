use super::super::tests::job;
use super::*;
use chrono::{TimeZone, Utc};
use std::sync::Arc;

fn claimed(state: &mut JobState, pid: u32) {
    let at = Utc.with_ymd_and_hms(2026, 3, 2, 12, 10, 0).unwrap();
    state.claim = Some(super::super::Claim { pid, at, slot: at });
}

/// A change of run state writes the changed job's row and nothing else: jobs.json is left
/// byte for byte, and another process's store reads the state back.
#[test]
fn a_change_of_run_state_leaves_jobs_json_and_reaches_a_peer() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("cron/jobs.json");
    let s = JobsStore::new(&path);
    s.update(|f| f.jobs.extend([job("a"), job("b"), job("c")])).unwrap();
    let written = std::fs::read(&path).unwrap();
    let ((), view) = s.update_run(|e| claimed(e.state_mut(1), 7)).unwrap();
    assert_eq!(std::fs::read(&path).unwrap(), written, "jobs.json untouched");
    assert_eq!(view.changed.iter().map(|(i, _)| *i).collect::<Vec<_>>(), [1]);
    assert_eq!(view.after, s.version(), "the version it leaves is the one read after it");
    let seen = JobsStore::new(&path).load().unwrap();
    assert_eq!(seen.jobs.iter().map(|j| j.state.claim.map(|c| c.pid)).collect::<Vec<_>>(), [None, Some(7), None]);
    // Nothing changed: nothing written, the version stays.
    let ((), same) = s.update_run(|e| assert_eq!(e.jobs().len(), 3)).unwrap();
    assert_eq!((same.before, same.after), (Some(view.after), view.after));
}

/// A copy at the version before a change is brought up to date by its view; a copy at any
/// other version (another process changed the jobs since) is left for a fresh read.
#[test]
fn a_view_brings_only_a_copy_at_its_version_up_to_date() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("cron/jobs.json");
    let (s, peer) = (JobsStore::new(&path), JobsStore::new(&path));
    s.update(|f| f.jobs.extend([job("a"), job("b")])).unwrap();
    let (mut copy, seen) = s.load_all().unwrap();
    let ((), view) = s.update_run(|e| e.state_mut(0).runs = 3).unwrap();
    assert!(view.apply(Some(seen), &mut copy));
    assert_eq!(copy, s.load_all().unwrap().0);
    peer.update_run(|e| e.state_mut(1).runs = 9).unwrap();
    let ((), view) = s.update_run(|e| e.state_mut(0).runs = 4).unwrap();
    assert!(!view.apply(Some(view.after), &mut copy), "the peer's change is not in the copy");
    assert_eq!(copy.jobs[0].state.runs, 3, "left alone");
    let (fresh, _) = s.load_all().unwrap();
    assert_eq!((fresh.jobs[0].state.runs, fresh.jobs[1].state.runs), (4, 9));
}

/// A one-shot marked done is gone for readers and for a general update, and the file is
/// written without it there, its row dropped.
#[test]
fn a_done_one_shot_is_gone_for_readers_and_leaves_at_the_next_write() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("cron/jobs.json");
    let s = JobsStore::new(&path);
    s.update(|f| f.jobs.extend([job("a"), job("b")])).unwrap();
    s.update_run(|e| e.state_mut(0).done_at = Some(Utc::now())).unwrap();
    assert_eq!(JobsStore::new(&path).load().unwrap().jobs, vec![job("b")]);
    assert_eq!(s.load_all().unwrap().0.jobs.len(), 2, "still in jobs.json");
    let ids = s.update(|f| f.jobs.iter().map(|j| j.id.clone()).collect::<Vec<_>>()).unwrap();
    assert_eq!(ids, ["b"]);
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(!text.contains("\"a\""), "{text}");
    // A job added again under the id starts afresh: the done row went with it.
    s.update(|f| f.jobs.push(job("a"))).unwrap();
    assert!(JobsStore::new(&path).load().unwrap().jobs.iter().all(|j| j.state.is_unset()));
}

/// The store's rules do not depend on where the run state is kept: on the test double, as on
/// the database, a change leaves jobs.json alone and a peer sharing the state reads it back.
#[test]
fn the_run_state_double_keeps_the_same_rules() {
    use super::super::run_state::MemoryRunStates;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("cron/jobs.json");
    let states: Arc<MemoryRunStates> = Arc::default();
    let s = JobsStore::keeping_state_in(&path, states.clone());
    s.update(|f| f.jobs.extend([job("a"), job("b")])).unwrap();
    let written = std::fs::read(&path).unwrap();
    s.update_run(|e| claimed(e.state_mut(1), 7)).unwrap();
    assert_eq!(std::fs::read(&path).unwrap(), written, "jobs.json untouched");
    let peer = JobsStore::keeping_state_in(&path, states);
    assert_eq!(
        peer.load().unwrap().jobs.iter().map(|j| j.state.claim.map(|c| c.pid)).collect::<Vec<_>>(),
        [None, Some(7)]
    );
    assert!(!dir.path().join("state.db").exists(), "the double keeps it in memory");
    assert_eq!(JobsStore::new(&path).load().unwrap().jobs[1].state.claim, None, "not in the database");
}
