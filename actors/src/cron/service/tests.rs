use super::*;
use crate::clock::ManualClock;
use crate::cron::claims::ChannelFilter;
use crate::cron::store::{JobState, Schedule};
use crate::supervise::{start, Metrics, RestartPolicy};
use chrono::{Duration, TimeZone};
use std::cell::RefCell;

fn t0() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 12, 2, 9, 0, 0).unwrap()
}

/// Counts fires per job id across every service that shares it.
#[derive(Clone, Default)]
struct Counting(Rc<RefCell<Vec<String>>>);

impl Counting {
    fn count(&self, id: &str) -> usize {
        self.0.borrow().iter().filter(|j| *j == id).count()
    }
}

impl FireJob for Counting {
    fn fire(&self, job: Job) -> LocalBoxFuture<'static, Fired> {
        self.0.borrow_mut().push(job.id.clone());
        Box::pin(async { Fired { delivered_to: vec!["cli:local".into()], reply: None } })
    }

    fn tell(&self, _job: Job, _text: String) -> LocalBoxFuture<'static, Vec<String>> {
        Box::pin(async { Vec::new() })
    }
}

fn job(id: &str, schedule: Schedule) -> Job {
    Job {
        id: id.into(),
        message: format!("reminder {id}"),
        schedule,
        target: Some("cli:local".into()),
        broadcast: Vec::new(),
        created_at: t0(),
        enabled: true,
        topic: None,
        state: JobState::default(),
        extra: Default::default(),
    }
}

fn at(id: &str, when: DateTime<Utc>) -> Job {
    job(id, Schedule::At { at: when })
}

/// The default rules: 5 strikes, counted for jobs due more often than daily.
fn claimer(pid: u32) -> Claimer {
    Claimer {
        pid,
        ttl: Duration::seconds(300),
        filter: ChannelFilter::default(),
        strike_limit: 5,
        strike_min_gap: Duration::days(1),
    }
}

fn service(store: &JobsStore, pid: u32, fire: &Counting, clock: &ManualClock) -> Handle<CronService> {
    service_firing(store, pid, Rc::new(fire.clone()), clock)
}

fn service_firing(store: &JobsStore, pid: u32, fire: Rc<dyn FireJob>, clock: &ManualClock) -> Handle<CronService> {
    let claimer = claimer(pid);
    let s = CronService::new(store.clone(), claimer, fire, clock.shared());
    start(s, &Metrics::default(), RestartPolicy::default())
}

fn rig() -> (tempfile::TempDir, JobsStore, ManualClock) {
    let dir = tempfile::tempdir().unwrap();
    let store = JobsStore::new(dir.path().join("cron/jobs.json"));
    (dir, store, ManualClock::new(t0()))
}

#[actix_rt::test]
async fn two_engines_on_one_file_fire_each_of_a_hundred_due_jobs_exactly_once() {
    let (_d, store, clock) = rig();
    let due = t0() + Duration::seconds(30);
    store.update(|f| f.jobs.extend((0..100).map(|i| at(&format!("j{i}"), due)))).unwrap();
    let fires = Counting::default();
    let (a, b) = (service(&store, 1, &fires, &clock), service(&store, 2, &fires, &clock));
    assert_eq!(a.call_async(RunDue).await.unwrap().next_wake, Some(due));
    clock.set(due);
    let (ra, rb) = futures_util::join!(a.call_async(RunDue), b.call_async(RunDue));
    let (ra, rb) = (ra.unwrap(), rb.unwrap());
    assert_eq!(ra.fired.len() + rb.fired.len(), 100);
    for i in 0..100 {
        assert_eq!(fires.count(&format!("j{i}")), 1, "j{i}");
    }
    assert!(store.load().unwrap().jobs.is_empty(), "one-shots are gone after firing");
    // An engine whose last look came while the other was still firing may say it wakes at
    // `due` (a job it saw claimed, not yet done): that wake fires nothing and leaves none.
    let (ra, rb) = (a.call_async(RunDue).await.unwrap(), b.call_async(RunDue).await.unwrap());
    assert_eq!((ra.fired.len(), rb.fired.len()), (0, 0), "nothing fires twice");
    assert_eq!((ra.next_wake, rb.next_wake), (None, None));
}

#[actix_rt::test]
async fn claims_of_a_dead_process_are_fired_by_the_other_after_the_ttl_once_each() {
    let (_d, store, clock) = rig();
    store.update(|f| f.jobs.extend((0..10).map(|i| at(&format!("j{i}"), t0())))).unwrap();
    // Process 77 claimed everything, then died before firing.
    let dead = claimer(77);
    store.update_run(|e| dead.claim_due(e, t0())).unwrap();
    let fires = Counting::default();
    let live = service(&store, 2, &fires, &clock);
    let run = live.call_async(RunDue).await.unwrap();
    assert!(run.fired.is_empty(), "claims inside the TTL are respected");
    assert_eq!(run.next_wake, Some(t0() + Duration::seconds(300)), "wakes when they go stale");
    clock.advance(Duration::seconds(300));
    assert_eq!(live.call_async(RunDue).await.unwrap().fired.len(), 10);
    assert_eq!(live.call_async(RunDue).await.unwrap().fired.len(), 0);
    assert!((0..10).all(|i| fires.count(&format!("j{i}")) == 1));
}

#[actix_rt::test]
async fn a_peer_edit_re_arms_the_next_wake() {
    let (_d, store, clock) = rig();
    store.update(|f| f.jobs.push(at("far", t0() + Duration::hours(1)))).unwrap();
    let fires = Counting::default();
    let cron = service(&store, 1, &fires, &clock);
    assert_eq!(cron.call_async(RunDue).await.unwrap().next_wake, Some(t0() + Duration::hours(1)));
    // Another process adds a job due in 2 s.
    JobsStore::new(store.path()).update(|f| f.jobs.push(at("soon", t0() + Duration::seconds(2)))).unwrap();
    assert_eq!(cron.call_async(RunDue).await.unwrap().next_wake, Some(t0() + Duration::seconds(2)));
    assert_eq!(cron.call(NextCronFire).await.unwrap(), Some(t0() + Duration::seconds(2)));
    clock.advance(Duration::seconds(2));
    let run = cron.call_async(RunDue).await.unwrap();
    assert_eq!(run.fired.iter().map(|f| f.job_id.as_str()).collect::<Vec<_>>(), ["soon"]);
    assert_eq!(run.fired[0].slot, t0() + Duration::seconds(2), "fired for its own time");
}

/// A service that has loaded one job, "tea", due every minute from t0.
async fn tea_every_minute() -> (tempfile::TempDir, JobsStore, ManualClock, Counting, Handle<CronService>) {
    let (d, store, clock) = rig();
    store.update(|f| f.jobs.push(job("tea", Schedule::Every { every_s: 60, anchor: t0() }))).unwrap();
    let fires = Counting::default();
    let cron = service(&store, 1, &fires, &clock);
    cron.call_async(RunDue).await.unwrap();
    (d, store, clock, fires, cron)
}

#[actix_rt::test]
async fn a_malformed_file_is_reported_left_byte_identical_and_loaded_jobs_still_fire() {
    let (_d, store, clock, fires, cron) = tea_every_minute().await;
    let good = std::fs::read(store.path()).unwrap();
    let bad = b"{\"jobs\": [ {\"id\": \"tea\",, } ]}".to_vec();
    std::fs::write(store.path(), &bad).unwrap();
    clock.advance(Duration::seconds(60));
    let run = cron.call_async(RunDue).await.unwrap();
    let error = run.error.expect("the error is reported");
    assert!(error.contains(&store.path().display().to_string()) && error.contains("line 1"), "{error}");
    assert_eq!(run.fired.len(), 1, "the loaded job fired from memory");
    assert_eq!(std::fs::read(store.path()).unwrap(), bad, "nothing wrote over it");
    clock.advance(Duration::seconds(60));
    assert_eq!(cron.call_async(RunDue).await.unwrap().fired.len(), 1);
    assert_eq!(std::fs::read(store.path()).unwrap(), bad);
    // The user restores the file: the fires done from memory are written back, not repeated.
    std::fs::write(store.path(), &good).unwrap();
    let run = cron.call_async(RunDue).await.unwrap();
    assert!(run.fired.is_empty() && run.error.is_none(), "{run:?}");
    let state = &store.load().unwrap().jobs[0].state;
    assert_eq!((state.runs, state.next_run_at), (2, Some(t0() + Duration::seconds(180))));
    assert_eq!(fires.count("tea"), 2);
}

#[actix_rt::test]
async fn a_run_with_nothing_due_and_an_unchanged_file_does_not_lock_or_read() {
    let (_d, store, clock) = rig();
    store.update(|f| f.jobs.push(at("later", t0() + Duration::hours(1)))).unwrap();
    let fires = Counting::default();
    let cron = service(&store, 1, &fires, &clock);
    cron.call_async(RunDue).await.unwrap();
    // Hold the lock: a run that tried to take it would block here.
    let _held = crate::store::FileLock::exclusive(&crate::store::lock_path_for(store.path())).unwrap();
    clock.advance(Duration::minutes(5));
    let run = actix_rt::time::timeout(std::time::Duration::from_secs(2), cron.call_async(RunDue)).await;
    assert_eq!(run.expect("did not block on the lock").unwrap().next_wake, Some(t0() + Duration::hours(1)));
}

/// An editor that saves in place truncates the file before it writes: a run that lands in
/// between sees it empty. That is not "the user deleted every job": the loaded jobs keep
/// firing and nothing is written over the file.
#[actix_rt::test]
async fn a_file_caught_empty_mid_save_does_not_unload_the_jobs() {
    let (_d, store, clock, fires, cron) = tea_every_minute().await;
    std::fs::write(store.path(), b"").unwrap();
    let run = cron.call_async(RunDue).await.unwrap();
    assert!(run.error.as_deref().is_some_and(|e| e.contains("is empty")), "{run:?}");
    assert_eq!(run.next_wake, Some(t0() + Duration::seconds(60)), "the job is still armed");
    // The save completes with a file that does not parse: the loaded job fires from memory.
    std::fs::write(store.path(), b"{\"jobs\": [ {\"id\": \"tea\",, } ]}").unwrap();
    clock.advance(Duration::seconds(60));
    assert_eq!(cron.call_async(RunDue).await.unwrap().fired.len(), 1, "fired from memory");
    assert_eq!(fires.count("tea"), 1);
}

/// Fires at once, except the job named `slow`, which waits until `release` is notified.
#[derive(Clone, Default)]
struct OneSlow {
    fires: Counting,
    release: Rc<tokio::sync::Notify>,
}

impl FireJob for OneSlow {
    fn fire(&self, job: Job) -> LocalBoxFuture<'static, Fired> {
        let (done, release) = (self.fires.fire(job.clone()), self.release.clone());
        Box::pin(async move {
            if job.id == "slow" {
                release.notified().await;
            }
            done.await
        })
    }

    fn tell(&self, job: Job, text: String) -> LocalBoxFuture<'static, Vec<String>> {
        self.fires.tell(job, text)
    }
}

/// A claim is good for the TTL only: a fire is written back as soon as it is done, not when
/// the slowest fire of its run ends, so a run of slow LLM turns cannot outlast the claims of
/// the jobs it already fired (and let a peer fire them again).
#[actix_rt::test]
async fn each_fire_is_written_back_when_it_is_done_not_when_the_run_ends() {
    let (_d, store, clock) = rig();
    store.update(|f| f.jobs.extend([at("quick", t0()), at("slow", t0())])).unwrap();
    let fire = OneSlow::default();
    let cron = service_firing(&store, 1, Rc::new(fire.clone()), &clock);
    let run = actix_rt::spawn({
        let cron = cron.clone();
        async move { cron.call_async(RunDue).await.unwrap() }
    });
    let ids = || store.load().unwrap().jobs.into_iter().map(|j| j.id).collect::<Vec<_>>();
    for _ in 0..1000 {
        if ids() == ["slow"] {
            break;
        }
        actix_rt::time::sleep(std::time::Duration::from_millis(1)).await;
    }
    assert_eq!(ids(), ["slow"], "the quick one-shot is written back (removed) while the slow one runs");
    assert!(store.load().unwrap().jobs[0].state.claim.is_some(), "the slow one is still claimed");
    fire.release.notify_one();
    let run = run.await.unwrap();
    assert_eq!(run.fired.len(), 2);
    assert!(ids().is_empty());
    assert_eq!((fire.fires.count("quick"), fire.fires.count("slow")), (1, 1));
}

/// The jobs' ids in jobs.json itself.
fn ids_on_disk(store: &JobsStore) -> Vec<String> {
    let file: serde_json::Value = serde_json::from_slice(&std::fs::read(store.path()).unwrap()).unwrap();
    file["jobs"].as_array().unwrap().iter().map(|j| j["id"].as_str().unwrap().to_owned()).collect()
}

/// A one-shot's fire changes its run state only: between the fires of a burst jobs.json is
/// left as it is, and the one-shots that fired leave it in one rewrite once the next fire is
/// far. Every reader sees each gone from its fire on, and none fires again.
#[actix_rt::test]
async fn fired_one_shots_leave_jobs_json_in_one_rewrite_after_the_burst() {
    let (_d, store, clock) = rig();
    let soon = t0() + Duration::milliseconds(500);
    store.update(|f| f.jobs.extend([at("a", t0()), at("b", soon), at("far", t0() + Duration::hours(1))])).unwrap();
    let written = std::fs::read(store.path()).unwrap();
    let fires = Counting::default();
    let cron = service(&store, 1, &fires, &clock);
    let run = cron.call_async(RunDue).await.unwrap();
    assert_eq!(run.fired.iter().map(|f| f.job_id.as_str()).collect::<Vec<_>>(), ["a"]);
    assert_eq!(std::fs::read(store.path()).unwrap(), written, "b is due in half a second: no rewrite yet");
    let readers: Vec<_> = JobsStore::new(store.path()).load().unwrap().jobs.into_iter().map(|j| j.id).collect();
    assert_eq!(readers, ["b", "far"], "a is gone for every reader from its fire on");
    clock.set(soon);
    let run = cron.call_async(RunDue).await.unwrap();
    assert_eq!(run.fired.iter().map(|f| f.job_id.as_str()).collect::<Vec<_>>(), ["b"]);
    assert_eq!(ids_on_disk(&store), ["far"], "the next fire is an hour off: both left in one rewrite");
    clock.advance(Duration::minutes(5));
    assert!(cron.call_async(RunDue).await.unwrap().fired.is_empty());
    assert_eq!((fires.count("a"), fires.count("b")), (1, 1));
}

/// A one-shot done but still in jobs.json (the next fire was close) fires for no other
/// process, and the next change of the jobs takes it out of the file.
#[actix_rt::test]
async fn a_one_shot_done_but_still_in_jobs_json_never_fires_again() {
    let (_d, store, clock) = rig();
    store.update(|f| f.jobs.extend([at("a", t0()), at("b", t0() + Duration::milliseconds(10))])).unwrap();
    let fires = Counting::default();
    service(&store, 1, &fires, &clock).call_async(RunDue).await.unwrap();
    assert_eq!(ids_on_disk(&store), ["a", "b"], "b is close: a is still written there");
    JobsStore::new(store.path()).update(|f| f.jobs.push(at("c", t0() + Duration::days(1)))).unwrap();
    assert_eq!(ids_on_disk(&store), ["b", "c"], "a change of the jobs takes a out");
    clock.advance(Duration::hours(1));
    let peer = service(&store, 2, &fires, &clock);
    let fired: Vec<_> = peer.call_async(RunDue).await.unwrap().fired.into_iter().map(|f| f.job_id).collect();
    assert_eq!(fired, ["b"]);
    assert_eq!((fires.count("a"), fires.count("b")), (1, 1));
    assert_eq!(ids_on_disk(&store), ["c"]);
}

/// A run's locked steps wait for a peer's lock on a blocking thread: the timer answers the
/// while, and the run goes on once the lock is free.
#[actix_rt::test]
async fn the_timer_answers_while_a_peer_holds_the_jobs_lock() {
    let (_d, store, clock) = rig();
    store.update(|f| f.jobs.push(at("a", t0()))).unwrap();
    let fires = Counting::default();
    let cron = service(&store, 1, &fires, &clock);
    let lock = crate::store::FileLock::exclusive(&crate::store::lock_path_for(store.path())).unwrap();
    let run = actix_rt::spawn({
        let cron = cron.clone();
        async move { cron.call_async(RunDue).await }
    });
    for _ in 0..5 {
        actix_rt::task::yield_now().await;
    }
    assert_eq!(cron.call(NextCronFire).await.unwrap(), None, "answered, nothing run yet");
    assert!(!run.is_finished(), "the run still waits for the lock");
    drop(lock);
    let run = run.await.unwrap().unwrap();
    assert_eq!(run.fired.iter().map(|f| f.job_id.as_str()).collect::<Vec<_>>(), ["a"]);
}
