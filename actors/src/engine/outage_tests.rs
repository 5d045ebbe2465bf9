//! The outage fallback through the wired engine: with `[llm] base_url` at a port on 127.0.0.1
//! where nothing listens, the embedded agent takes the user's turns (a `/remind` still makes its
//! job, anything else is told the model is unreachable) and a cron reminder still goes out.

use super::*;
use crate::clock::ManualClock;
use crate::cron::service::RunDue;
use crate::planner::rules::MODEL_DOWN;
use crate::spine::TurnOutcome;
use chrono::{Duration as D, TimeZone, Utc};
use raven_proto::{BusyPolicy, Origin, TurnRequest};

/// A port on 127.0.0.1 that refuses connections: bound, then let go.
fn unreachable_base_url() -> String {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    drop(listener);
    format!("http://127.0.0.1:{port}/v1")
}

fn engine_with_the_model_down(tmp: &tempfile::TempDir) -> (Engine, ManualClock) {
    let dir = DataDir::new(tmp.path());
    let clock = ManualClock::new(Utc.with_ymd_and_hms(2026, 3, 2, 10, 0, 0).unwrap());
    let mut config = RavenConfig::default();
    config.llm.base_url = unreachable_base_url();
    config.llm.retry.attempts = 1;
    config.discovery.enabled = false;
    config.delivery.jsonl_path = "out.jsonl".into();
    (Engine::start(&dir, &config, clock.shared()).unwrap(), clock)
}

async fn say(engine: &Engine, text: &str) -> TurnOutcome {
    let at = engine.clock.now();
    let req =
        TurnRequest::new(format!("r-{text}"), Origin::User, "cli:local", "cli", "local", text, BusyPolicy::Append, at);
    engine.scheduler.submit_wait(req).1.await.unwrap()
}

#[actix_rt::test]
async fn remind_works_with_the_model_unreachable_and_the_rest_is_told_why() {
    let tmp = tempfile::tempdir().unwrap();
    let (engine, clock) = engine_with_the_model_down(&tmp);

    let TurnOutcome::Replied(reply) = say(&engine, "/remind in 10m tea").await else { panic!("the turn failed") };
    assert!(reply.starts_with("Reminder set: “tea”\nWhen: once, on Mon 2 Mar at 10:10 (UTC)"), "{reply}");
    let jobs = crate::cron::store::JobsStore::new(DataDir::new(tmp.path()).jobs()).load().unwrap();
    assert_eq!(jobs.jobs.iter().map(|j| j.message.as_str()).collect::<Vec<_>>(), ["tea"]);
    assert_eq!(say(&engine, "how was my week?").await, TurnOutcome::Replied(MODEL_DOWN.into()));

    clock.advance(D::minutes(10));
    let run = engine.cron.as_ref().unwrap().call_async(RunDue).await.unwrap();
    let replies: Vec<_> = run.fired.iter().map(|f| f.result.reply.clone().unwrap_or_default()).collect();
    assert_eq!(replies, ["Reminder: tea"], "{:?}", run.error);
}
