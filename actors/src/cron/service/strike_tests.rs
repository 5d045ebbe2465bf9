//! Strike decay through the timer, on a manual clock: a daily job is never paused for want of
//! a reply; a frequent one is, says so once, and a reply on its conversation resumes it.

use super::*;
use crate::clock::{Clock, ManualClock};
use crate::cron::claims::ChannelFilter;
use crate::cron::reply::JobReplies;
use crate::cron::store::{JobState, Schedule};
use crate::sessions::InboundHook;
use crate::supervise::{start, Metrics, RestartPolicy};
use chrono::{Duration, TimeZone};
use std::cell::RefCell;

/// Wednesday 2026-03-25, 07:00 in Berlin: the week ahead holds its spring-forward change.
fn t0() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 3, 25, 6, 0, 0).unwrap()
}

/// Every fire, and every notice with its text, as the user would see them.
#[derive(Clone, Default)]
struct Recording {
    fires: Rc<RefCell<Vec<String>>>,
    told: Rc<RefCell<Vec<(String, String)>>>,
}

impl FireJob for Recording {
    fn fire(&self, job: Job) -> LocalBoxFuture<'static, Fired> {
        self.fires.borrow_mut().push(job.id.clone());
        let delivered_to = job.target.into_iter().collect();
        Box::pin(async { Fired { delivered_to, reply: None } })
    }

    fn tell(&self, job: Job, text: String) -> LocalBoxFuture<'static, Vec<String>> {
        self.told.borrow_mut().push((job.id.clone(), text));
        let told = job.target.into_iter().collect();
        Box::pin(async { told })
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

/// A timer over `job` alone, with the default rules (5 strikes, counted below a day's gap).
fn rig(job: Job) -> (tempfile::TempDir, JobsStore, ManualClock, Recording, Handle<CronService>) {
    let dir = tempfile::tempdir().unwrap();
    let store = JobsStore::new(dir.path().join("cron/jobs.json"));
    store.update(|f| f.jobs.push(job)).unwrap();
    let clock = ManualClock::new(t0());
    let claimer = Claimer {
        pid: 1,
        ttl: Duration::seconds(300),
        filter: ChannelFilter::default(),
        strike_limit: 5,
        strike_min_gap: Duration::days(1),
    };
    let seen = Recording::default();
    let cron = CronService::new(store.clone(), claimer, Rc::new(seen.clone()), clock.shared());
    (dir, store, clock, seen, start(cron, &Metrics::default(), RestartPolicy::default()))
}

/// Runs the timer at its next wake; what fired.
async fn run_at_next_wake(cron: &Handle<CronService>, clock: &ManualClock) -> CronRun {
    let next = cron.call(NextCronFire).await.unwrap().expect("a wake is armed");
    clock.set(next.max(clock.now()));
    cron.call_async(RunDue).await.unwrap()
}

#[actix_rt::test]
async fn a_daily_job_unanswered_for_eight_days_still_fires_every_day() {
    let daily = Schedule::Cron { expr: "0 9 * * *".into(), tz: "Europe/Berlin".into() };
    let (_d, store, clock, seen, cron) = rig(job("standup", daily));
    cron.call_async(RunDue).await.unwrap();
    let mut days = Vec::new();
    for _ in 0..8 {
        let run = run_at_next_wake(&cron, &clock).await;
        assert_eq!(run.fired.len(), 1, "{run:?}");
        assert_eq!(run.fired[0].paused, None);
        days.push(clock.now().with_timezone(&chrono_tz::Europe::Berlin).format("%m-%d %H:%M").to_string());
    }
    let expected =
        ["03-25", "03-26", "03-27", "03-28", "03-29", "03-30", "03-31", "04-01"].map(|d| format!("{d} 09:00"));
    assert_eq!(days, expected, "every day at 09:00 local, across the spring change");
    let state = &store.load().unwrap().jobs[0].state;
    assert_eq!((state.runs, state.strikes, state.paused.clone()), (8, 0, None));
    assert!(state.next_run_at.is_some());
    assert!(seen.told.borrow().is_empty(), "nothing to tell");
}

#[actix_rt::test]
async fn a_job_every_ten_minutes_pauses_at_the_limit_says_so_once_and_a_reply_resumes_it() {
    let (_d, store, clock, seen, cron) = rig(job("stretch", Schedule::Every { every_s: 600, anchor: t0() }));
    cron.call_async(RunDue).await.unwrap();
    for fire in 1..=4 {
        let run = run_at_next_wake(&cron, &clock).await;
        assert_eq!((run.fired.len(), run.fired[0].paused.clone()), (1, None), "fire {fire}");
    }
    let fifth = run_at_next_wake(&cron, &clock).await;
    assert_eq!(fifth.fired[0].paused, Some(Paused::Strikes { fires: 5 }));
    assert_eq!(fifth.fired[0].told, ["cli:local"]);
    assert_eq!(fifth.next_wake, None, "nothing left to fire");
    // An hour of silence: no fire, and no second notice.
    clock.advance(Duration::hours(1));
    assert!(cron.call_async(RunDue).await.unwrap().fired.is_empty());
    let told = seen.told.borrow().clone();
    assert_eq!(told.len(), 1, "{told:?}");
    assert_eq!(told[0].0, "stretch");
    for part in ["unanswered 5 times", "Reply here", "raven cron resume stretch"] {
        assert!(told[0].1.contains(part), "{part}: {}", told[0].1);
    }
    // The user answers on the job's conversation: it fires again at its next slot.
    let reply = raven_proto::TurnRequest::new(
        "u1",
        raven_proto::Origin::User,
        "cli:local",
        "cli",
        "local",
        "ok, stretching",
        raven_proto::BusyPolicy::Append,
        clock.now(),
    );
    assert_eq!(JobReplies(store.clone()).on_user_message(&reply).await, None, "the message goes on to the agent");
    let resumed = cron.call_async(RunDue).await.unwrap();
    assert!(resumed.fired.is_empty(), "the slots missed while paused are not caught up");
    let next_slot = t0() + Duration::minutes(120);
    assert_eq!(resumed.next_wake, Some(next_slot));
    let run = run_at_next_wake(&cron, &clock).await;
    assert_eq!((run.fired.len(), run.fired[0].slot, run.fired[0].paused.clone()), (1, next_slot, None));
    assert_eq!(store.load().unwrap().jobs[0].state.strikes, 1, "counting again from the reply");
    assert_eq!(seen.fires.borrow().len(), 6);
    assert_eq!(seen.told.borrow().len(), 1, "still the one notice");
}
