//! Strike decay through the wired engine: a reply on a job's conversation resets its strikes;
//! at the limit the job pauses and its outlet shows one notice; a reply there resumes it.

use super::*;
use crate::clock::{Clock, ManualClock};
use crate::cron::pause::Paused;
use crate::cron::service::RunDue;
use crate::cron::store::{Job, Schedule};
use crate::delivery::outlets::CliOutlet;
use crate::testkit::doubles::Screen;
use chrono::{DateTime, Duration as D, TimeZone, Utc};

fn cron_engine(dir: &DataDir, clock: &ManualClock, screen: &Screen) -> Engine {
    let outlet = Arc::new(CliOutlet::to_writer(Box::new(screen.clone())));
    let o = Overrides { outlets: vec![outlet], ..Default::default() };
    Engine::start_with(dir, &RavenConfig::default(), clock.shared(), o).unwrap()
}

/// `stretch`, every 10 minutes from now, to `cli:local`.
fn stretch(now: DateTime<Utc>) -> Job {
    Job {
        id: "stretch".into(),
        message: "Stand up and stretch".into(),
        schedule: Schedule::Every { every_s: 600, anchor: now },
        target: Some("cli:local".into()),
        broadcast: vec![],
        created_at: now,
        enabled: true,
        topic: None,
        state: Default::default(),
        extra: Default::default(),
    }
}

/// The user writes `text` on `cli:local`, as the REPL would.
async fn user_says(engine: &Engine, clock: &ManualClock, id: &str, text: &str) {
    let req = raven_proto::TurnRequest::new(
        id,
        raven_proto::Origin::User,
        "cli:local",
        "cli",
        "local",
        text,
        raven_proto::BusyPolicy::Append,
        clock.now(),
    );
    let (_, rx) = engine.scheduler.submit_wait(req);
    rx.await.unwrap();
}

/// Advances ten minutes and runs the timer; what fired.
async fn ten_minutes(engine: &Engine, clock: &ManualClock) -> Vec<crate::cron::service::FireReport> {
    clock.advance(D::minutes(10));
    engine.cron.as_ref().unwrap().call_async(RunDue).await.unwrap().fired
}

#[actix_rt::test]
async fn a_user_reply_resets_the_strikes_and_resumes_a_job_paused_after_one_notice() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = DataDir::new(tmp.path());
    let clock = ManualClock::new(Utc.with_ymd_and_hms(2026, 3, 2, 12, 0, 0).unwrap());
    let screen = Screen::default();
    let engine = cron_engine(&dir, &clock, &screen);
    let jobs = JobsStore::new(dir.jobs());
    jobs.update(|f| f.jobs.push(stretch(clock.now()))).unwrap();
    for _ in 0..2 {
        assert_eq!(ten_minutes(&engine, &clock).await.len(), 1);
    }
    assert_eq!(jobs.load().unwrap().jobs[0].state.strikes, 2);
    user_says(&engine, &clock, "u1", "ok, done").await;
    assert_eq!(jobs.load().unwrap().jobs[0].state.strikes, 0);
    // Five fires unanswered: the fifth pauses it and the outlet shows the notice.
    for _ in 0..4 {
        assert_eq!(ten_minutes(&engine, &clock).await[0].paused, None);
    }
    let fifth = ten_minutes(&engine, &clock).await;
    assert_eq!(fifth[0].paused, Some(Paused::Strikes { fires: 5 }));
    assert_eq!(fifth[0].told, ["cli:local"]);
    for _ in 0..3 {
        assert!(ten_minutes(&engine, &clock).await.is_empty(), "paused");
    }
    let notices = screen.text().matches("went unanswered 5 times").count();
    assert_eq!(notices, 1, "{}", screen.text());
    assert!(screen.text().contains("raven cron resume stretch"), "{}", screen.text());
    // A reply on its conversation: it fires again at its next slot.
    user_says(&engine, &clock, "u2", "sorry, back now").await;
    assert_eq!(jobs.load().unwrap().jobs[0].state.paused, None);
    let again = ten_minutes(&engine, &clock).await;
    assert_eq!((again.len(), again[0].paused.clone()), (1, None));
}

/// A channel that is down: every send fails and waits for a retry.
struct Down;

impl crate::delivery::outlets::Outlet for Down {
    fn channel(&self) -> &str {
        "cli"
    }
    fn deliver<'a>(
        &'a self,
        _: &'a raven_proto::OutboundText,
    ) -> LocalBoxFuture<'a, Result<(), crate::delivery::outlets::OutletError>> {
        Box::pin(async { Err(crate::delivery::outlets::OutletError::Transient("HTTP 500".into())) })
    }
}

#[actix_rt::test]
async fn fires_that_reached_nobody_during_an_outage_pause_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = DataDir::new(tmp.path());
    let clock = ManualClock::new(Utc.with_ymd_and_hms(2026, 3, 2, 12, 0, 0).unwrap());
    let o = Overrides { outlets: vec![Arc::new(Down)], ..Default::default() };
    let engine = Engine::start_with(&dir, &RavenConfig::default(), clock.shared(), o).unwrap();
    let jobs = JobsStore::new(dir.jobs());
    jobs.update(|f| f.jobs.push(stretch(clock.now()))).unwrap();
    for _ in 0..7 {
        let fired = ten_minutes(&engine, &clock).await;
        assert_eq!((fired.len(), fired[0].paused.clone()), (1, None));
    }
    let state = jobs.load().unwrap().jobs[0].state.clone();
    assert_eq!((state.runs, state.strikes), (7, 0), "{state:?}");
}
