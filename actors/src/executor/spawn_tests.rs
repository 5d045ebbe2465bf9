//! ProactiveSpawn through the wired engine: asked at the gate when decided, run outside the
//! tick, charged when its result is delivered; a failed or overlong run charges nothing; the
//! gate's quota and dedup hold.

use super::spawn::{ProactiveSpawn, SpawnError, SubagentManager};
use super::tests::{jsonl_config, lines, rig_with, Rig};
use crate::feedback::{Dispatch, Source};
use crate::supervise::LocalBoxFuture;
use chrono::Duration;
use raven_proto::{Action, PlannerDecision, Priority};
use std::cell::Cell;
use std::rc::Rc;
use std::time::Duration as StdDuration;

/// Counts spawns and answers with a fixed result.
struct CountingSubagent(Rc<Cell<u32>>);

impl SubagentManager for CountingSubagent {
    fn spawn<'a>(&'a self, task: &'a str, _: &'a str, _: &'a str) -> LocalBoxFuture<'a, Result<String, SpawnError>> {
        self.0.set(self.0.get() + 1);
        Box::pin(async move { Ok(format!("done: {task}")) })
    }
}

/// A run's time limit no test reaches.
const LIMIT: StdDuration = StdDuration::from_secs(60);

fn spawn_decision(task: &str) -> PlannerDecision {
    let mut d = PlannerDecision::skip("r");
    d.action = Action::SpawnAgent;
    d.spawn_task = Some(task.into());
    d.target_session = Some("jsonl:inbox".into());
    d
}

fn spawn_said(id: &str) -> Dispatch {
    Dispatch::new(id, "inbox", Priority::Low, Source::Spawn)
}

fn spawner(r: &Rig, count: Rc<Cell<u32>>) -> ProactiveSpawn {
    let dispatcher = super::dispatcher::NudgeDispatcher::new(r.engine.hub.clone(), vec!["jsonl:inbox".into()]);
    ProactiveSpawn::new(r.engine.policy.clone(), Rc::new(CountingSubagent(count)), dispatcher, LIMIT)
}

#[actix_rt::test]
async fn a_policy_denial_stops_a_spawn() {
    let mut c = jsonl_config("out.jsonl");
    c.policy.spawn_max_per_day = 0;
    let r = rig_with(c);
    let count = Rc::new(Cell::new(0));
    let result = spawner(&r, count.clone()).dispatch(&spawn_decision("Summarise my inbox"), &spawn_said("n-s1")).await;
    assert!(!result.delivered);
    assert!(result.error.unwrap().contains("day_quota"));
    assert_eq!(count.get(), 0, "the micro-agent never ran");
}

#[actix_rt::test]
async fn the_same_task_twice_in_the_dedup_window_runs_once() {
    let r = rig_with(jsonl_config("out.jsonl"));
    let count = Rc::new(Cell::new(0));
    let s = spawner(&r, count.clone());
    assert!(s.dispatch(&spawn_decision("Summarise my inbox"), &spawn_said("n-s1")).await.started);
    until("the spawn's result", || lines(&r.dir.root().join("out.jsonl")).len() == 1).await;
    r.clock.advance(Duration::hours(2));
    let second = s.dispatch(&spawn_decision("Summarise  my INBOX"), &spawn_said("n-s2")).await;
    assert!(second.error.unwrap().contains("content_dedup"));
    assert_eq!(count.get(), 1);
    let l = lines(&r.dir.root().join("out.jsonl"));
    assert_eq!(l.len(), 1);
    assert_eq!(l[0]["content"], "done: Summarise my inbox");
}

/// Polls `done` every millisecond (5 s at most), letting background tasks run.
async fn until(what: &str, mut done: impl FnMut() -> bool) {
    for _ in 0..5_000 {
        if done() {
            return;
        }
        actix_rt::time::sleep(StdDuration::from_millis(1)).await;
    }
    panic!("timed out waiting for {what}");
}

/// A micro-agent that finishes only when told to.
struct HeldSubagent(std::cell::RefCell<Option<tokio::sync::oneshot::Receiver<()>>>);

impl SubagentManager for HeldSubagent {
    fn spawn<'a>(&'a self, task: &'a str, _: &'a str, _: &'a str) -> LocalBoxFuture<'a, Result<String, SpawnError>> {
        let go = self.0.borrow_mut().take();
        Box::pin(async move {
            if let Some(go) = go {
                let _ = go.await;
            }
            Ok(format!("done: {task}"))
        })
    }
}

#[actix_rt::test]
async fn a_spawn_is_started_when_decided_and_charged_when_its_result_is_delivered() {
    let r = rig_with(jsonl_config("out.jsonl"));
    let (go, held) = tokio::sync::oneshot::channel();
    let dispatcher = super::dispatcher::NudgeDispatcher::new(r.engine.hub.clone(), vec!["jsonl:inbox".into()]);
    let subagent = Rc::new(HeldSubagent(std::cell::RefCell::new(Some(held))));
    let s = ProactiveSpawn::new(r.engine.policy.clone(), subagent, dispatcher, LIMIT);
    let result = s.dispatch(&spawn_decision("Summarise my inbox"), &spawn_said("n-s1")).await;
    assert!(result.started && !result.delivered, "{result:?}");
    assert_eq!(r.fires(), 0, "nothing charged while it runs");
    assert!(lines(&r.dir.root().join("out.jsonl")).is_empty(), "the micro-agent is still running");
    go.send(()).unwrap();
    let ended = s.running().settle(StdDuration::from_secs(5)).await.expect("the run ended");
    assert_eq!(ended, vec!["delivered to jsonl:inbox".to_owned()]);
    assert_eq!(lines(&r.dir.root().join("out.jsonl")).len(), 1);
    assert_eq!(r.fires(), 1, "charged once, when delivered");
}

/// A micro-agent that fails.
struct FailingSubagent;

impl SubagentManager for FailingSubagent {
    fn spawn<'a>(&'a self, _: &'a str, _: &'a str, _: &'a str) -> LocalBoxFuture<'a, Result<String, SpawnError>> {
        Box::pin(async { Err(SpawnError::Failed("the provider could not be reached".to_owned())) })
    }
}

#[actix_rt::test]
async fn a_spawn_whose_run_fails_charges_nothing() {
    let r = rig_with(jsonl_config("out.jsonl"));
    let dispatcher = super::dispatcher::NudgeDispatcher::new(r.engine.hub.clone(), vec!["jsonl:inbox".into()]);
    let s = ProactiveSpawn::new(r.engine.policy.clone(), Rc::new(FailingSubagent), dispatcher, LIMIT);
    assert!(s.dispatch(&spawn_decision("Summarise my inbox"), &spawn_said("n-s1")).await.started);
    let ended = s.running().settle(StdDuration::from_secs(5)).await.expect("the run ended");
    assert_eq!(ended, vec!["not delivered: the provider could not be reached".to_owned()]);
    assert_eq!(r.fires(), 0);
}

#[actix_rt::test]
async fn a_run_past_its_time_limit_is_stopped_and_sends_nothing() {
    let r = rig_with(jsonl_config("out.jsonl"));
    let (_never, held) = tokio::sync::oneshot::channel::<()>();
    let dispatcher = super::dispatcher::NudgeDispatcher::new(r.engine.hub.clone(), vec!["jsonl:inbox".into()]);
    let subagent = Rc::new(HeldSubagent(std::cell::RefCell::new(Some(held))));
    let s = ProactiveSpawn::new(r.engine.policy.clone(), subagent, dispatcher, StdDuration::from_millis(20));
    assert!(s.dispatch(&spawn_decision("Summarise my inbox"), &spawn_said("n-s1")).await.started);
    let ended = s.running().settle(StdDuration::from_secs(5)).await.expect("stopped by its limit");
    assert!(ended[0].contains("agent.subagent_timeout_s"), "{ended:?}");
    assert!(lines(&r.dir.root().join("out.jsonl")).is_empty());
    assert_eq!(r.fires(), 0);
}
