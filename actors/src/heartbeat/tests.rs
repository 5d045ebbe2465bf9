//! The heartbeat end to end in-process: a real DeliveryHub with a capturing outlet, a real
//! spine Scheduler whose turn handler records its turns (user turns can be held running), a
//! phase-one provider that counts its calls, the manual clock driving the loop.

use super::*;
use crate::clock::{Clock, ManualClock};
use crate::delivery::hub::{DeliveryHubService, RegisterOutlet};
use crate::delivery::outlets::{Outlet, OutletError};
use crate::llm::decorator::Counted;
use crate::llm::provider::{CompletionRequest, Provider, ProviderError, ProviderReply};
use crate::planner::rules::RulesProvider;
use crate::spine::{Inbox, OriginPools, Scheduler, TurnHandler, TurnOutcome};
use crate::supervise::{start, Handle, LocalBoxFuture, Metrics, RestartPolicy};
use chrono::{DateTime, Duration, TimeZone, Utc};
use raven_proto::{BusyPolicy, Origin, OutboundText, TurnRequest};
use serde_json::{json, Value};
use std::cell::{Cell, RefCell};
use std::rc::Rc;
use std::sync::{Arc, Mutex};
use tokio::sync::Notify;

fn t0() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 3, 2, 12, 0, 0).unwrap()
}

/// Phase one's provider: answers every call with the scripted reply, counting, and (when a
/// gate is set) only once the gate is opened.
#[derive(Clone, Default)]
struct Phase1 {
    calls: Rc<Cell<u32>>,
    requests: Rc<RefCell<Vec<CompletionRequest>>>,
    reply: Rc<RefCell<Option<Result<ProviderReply, ProviderError>>>>,
    gate: Rc<RefCell<Option<Rc<Notify>>>>,
}

impl Phase1 {
    fn set(&self, r: Result<ProviderReply, ProviderError>) {
        *self.reply.borrow_mut() = Some(r);
    }

    fn decide(&self, args: Value) {
        self.set(Ok(ProviderReply::call(decision::TOOL_NAME, args)));
    }
}

impl Provider for Phase1 {
    fn name(&self) -> &str {
        "phase1"
    }

    fn complete<'a>(&'a self, req: &'a CompletionRequest) -> LocalBoxFuture<'a, Result<ProviderReply, ProviderError>> {
        self.calls.set(self.calls.get() + 1);
        self.requests.borrow_mut().push(req.clone());
        let r = self.reply.borrow().clone().unwrap_or_else(|| Err(ProviderError::Decode("no reply scripted".into())));
        let gate = self.gate.borrow().clone();
        Box::pin(async move {
            if let Some(g) = gate {
                g.notified().await;
            }
            r
        })
    }
}

/// The spine's turn handler: records every turn; a USER turn runs until `release`.
#[derive(Clone, Default)]
struct Turns {
    log: Rc<RefCell<Vec<TurnRequest>>>,
    release: Rc<Notify>,
}

impl TurnHandler for Turns {
    fn run(&self, req: TurnRequest, _: Inbox) -> LocalBoxFuture<'static, TurnOutcome> {
        let t = self.clone();
        Box::pin(async move {
            t.log.borrow_mut().push(req.clone());
            if req.origin == Origin::User {
                t.release.notified().await;
            }
            TurnOutcome::Replied(format!("done: {}", req.content.lines().skip(1).collect::<Vec<_>>().join("; ")))
        })
    }
}

/// Takes every message for channel `test`.
#[derive(Default)]
struct Capture {
    got: Mutex<Vec<OutboundText>>,
}

impl Outlet for Capture {
    fn channel(&self) -> &str {
        "test"
    }

    fn deliver<'a>(&'a self, text: &'a OutboundText) -> LocalBoxFuture<'a, Result<(), OutletError>> {
        self.got.lock().unwrap().push(text.clone());
        Box::pin(async { Ok(()) })
    }
}

struct Rig {
    tmp: tempfile::TempDir,
    clock: ManualClock,
    phase1: Phase1,
    turns: Turns,
    outlet: Arc<Capture>,
    scheduler: Scheduler,
    wake: WakeHandle,
    cfg: HeartbeatConfig,
    metrics: Metrics,
    handle: Handle<HeartbeatService>,
}

const TASKS: &str = "# Heartbeat\n- [ ] water the plants\n- [x] pay rent\n";

async fn rig_with(provider: Option<crate::llm::provider::SharedProvider>, targets: &[&str]) -> Rig {
    let tmp = tempfile::tempdir().unwrap();
    let clock = ManualClock::new(t0());
    let metrics = Metrics::default();
    let hub = start(
        DeliveryHubService::new(
            Arc::new(crate::delivery::outbox::MemoryOutbox::default()),
            clock.shared(),
            Duration::seconds(30),
            None,
        ),
        &metrics,
        RestartPolicy::default(),
    );
    let outlet = Arc::new(Capture::default());
    hub.call(RegisterOutlet(outlet.clone())).await.unwrap();
    let turns = Turns::default();
    let scheduler = Scheduler::new(Rc::new(turns.clone()), OriginPools::new(4, 2));
    let cfg = HeartbeatConfig::default();
    let wake = WakeHandle::from_config(&cfg);
    let phase1 = Phase1::default();
    let deps = HeartbeatDeps {
        provider: provider.unwrap_or_else(|| Rc::new(phase1.clone())),
        heartbeat_md: tmp.path().join("HEARTBEAT.md"),
        scheduler: scheduler.clone(),
        hub,
        targets: targets.iter().map(|t| t.to_string()).collect::<Vec<_>>().into(),
        clock: clock.shared(),
        cfg: cfg.clone(),
        wake: wake.clone(),
        policy: None,
        journal: crate::journal::Journal::at(tmp.path().join("journal.jsonl")),
    };
    let handle = start(HeartbeatService::new(deps), &metrics, RestartPolicy::default());
    Rig { tmp, clock, phase1, turns, outlet, scheduler, wake, cfg, metrics, handle }
}

async fn rig() -> Rig {
    rig_with(None, &["test:42"]).await
}

impl Rig {
    fn write(&self, text: &str) {
        std::fs::write(self.tmp.path().join("HEARTBEAT.md"), text).unwrap();
    }

    async fn tick(&self) -> HeartbeatOutcome {
        self.handle.call_async(HeartbeatTick).await.unwrap()
    }

    fn skip_always(&self) {
        self.write(TASKS);
        self.phase1.decide(json!({"action": "skip", "tasks": [], "reason": "not now"}));
    }

    fn spawn_loop(&self) -> actix_rt::task::JoinHandle<()> {
        spawn_heartbeat_loop(self.handle.clone(), self.wake.clone(), self.clock.shared(), self.cfg.clone())
    }

    /// Spawns the loop and waits until it has published its schedule (it is running).
    async fn running_loop(&self) -> actix_rt::task::JoinHandle<()> {
        let task = self.spawn_loop();
        until("the loop runs", || self.wake.next_heartbeat().is_some()).await;
        task
    }

    /// Moves the manual clock and lets the loop see it.
    fn advance(&self, secs: i64) {
        self.clock.advance(Duration::seconds(secs));
        self.wake.recheck();
    }
}

/// Lets every ready task run (about 20 ms).
async fn settle() {
    for _ in 0..20 {
        actix_rt::time::sleep(std::time::Duration::from_millis(1)).await;
    }
}

/// Waits (1 ms steps, 5 s at most) until `cond` holds.
async fn until(what: &str, cond: impl Fn() -> bool) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    while !cond() {
        assert!(std::time::Instant::now() < deadline, "timed out waiting until {what}");
        actix_rt::time::sleep(std::time::Duration::from_millis(1)).await;
    }
}

#[actix_rt::test]
async fn a_missing_or_blank_heartbeat_md_skips_without_an_llm_call() {
    let r = rig().await;
    assert_eq!(r.tick().await, HeartbeatOutcome::Skipped { reason: "no HEARTBEAT.md".into() });
    for blank in ["", "  \n\n", "# Heartbeat\n<!-- add tasks below -->\n- [ ]\n"] {
        r.write(blank);
        assert_eq!(r.tick().await, HeartbeatOutcome::Skipped { reason: "HEARTBEAT.md is blank".into() }, "{blank:?}");
    }
    assert_eq!(r.phase1.calls.get(), 0, "no LLM call");
    assert!(r.turns.log.borrow().is_empty());
}

#[actix_rt::test]
async fn a_skip_decision_runs_no_agent_turn() {
    let r = rig().await;
    r.skip_always();
    assert_eq!(r.tick().await, HeartbeatOutcome::Skipped { reason: "not now".into() });
    assert_eq!(r.phase1.calls.get(), 1);
    let req = r.phase1.requests.borrow()[0].clone();
    assert_eq!(req.tool_choice.as_deref(), Some(decision::TOOL_NAME), "a forced virtual tool call");
    assert_eq!(decision::file_text(&req), TASKS, "the file text is in the messages");
    settle().await;
    assert!(r.turns.log.borrow().is_empty(), "no agent turn");
    assert!(r.outlet.got.lock().unwrap().is_empty());
}

#[actix_rt::test]
async fn a_run_decision_runs_exactly_one_turn_and_delivers_it_to_the_target() {
    let r = rig_with(None, &["test:42", "nowhere:1"]).await;
    r.write(TASKS);
    r.phase1.decide(json!({"action": "run", "tasks": ["water the plants"], "reason": "open task"}));
    let out = r.tick().await;
    assert_eq!(
        out,
        HeartbeatOutcome::Ran { reply: "done: - water the plants".into(), delivered_to: vec!["test:42".into()] },
        "the target without an outlet is not recorded as delivered"
    );
    settle().await;
    let turns = r.turns.log.borrow().clone();
    assert_eq!(turns.len(), 1, "exactly one turn");
    assert_eq!(turns[0].origin, Origin::Heartbeat);
    assert_eq!(turns[0].conversation_id, CONVERSATION);
    assert_eq!(turns[0].content, turn_content(&["water the plants".to_owned()]));
    let got = r.outlet.got.lock().unwrap().clone();
    assert_eq!(got.len(), 1);
    assert_eq!((got[0].chat_id.as_str(), got[0].content.as_str()), ("42", "done: - water the plants"));
    assert!(got[0].is_proactive());
}

#[actix_rt::test]
async fn a_text_answer_or_bad_arguments_skip_and_a_provider_error_fails() {
    let r = rig().await;
    r.write(TASKS);
    r.phase1.set(Ok(ProviderReply::Text("Yes, water the plants.".into())));
    assert_eq!(r.tick().await, HeartbeatOutcome::Skipped { reason: "no_tool_call".into() });
    r.phase1.decide(json!({"action": "run", "reason": "r"}));
    assert_eq!(r.tick().await, HeartbeatOutcome::Skipped { reason: "bad_args:run without tasks".into() });
    r.phase1.set(Err(ProviderError::Timeout(100)));
    assert!(matches!(r.tick().await, HeartbeatOutcome::Failed(e) if e.contains("timed out")));
    settle().await;
    assert!(r.turns.log.borrow().is_empty(), "no turn on any of them");
    let m = r.metrics.snapshot().into_iter().find(|m| m.name == "Heartbeat").unwrap();
    assert_eq!((m.handled, m.failed), (2, 1), "only the provider error counts as failed");
}

#[actix_rt::test]
async fn the_rules_provider_runs_unchecked_tasks_and_skips_checked_ones() {
    let rules = RulesProvider::new(chrono_tz::Tz::UTC);
    let md = "# Heartbeat\n- [ ] water the plants\n* [ ] check the backup log\n- [x] pay rent\n";
    let reply = rules.complete(&decision::request(md, &Default::default())).await.unwrap();
    let call = reply.first_call().expect("a tool call");
    assert_eq!(call.name, decision::TOOL_NAME);
    assert_eq!(call.arguments["action"], "run");
    assert_eq!(call.arguments["tasks"], json!(["water the plants", "check the backup log"]));
    let done = "# Heartbeat\n- [x] pay rent\n* [x] call mum\nAll quiet this week.\n";
    let reply = rules.complete(&decision::request(done, &Default::default())).await.unwrap();
    assert!(matches!(decision::parse(&reply), Decision::Skip { .. }), "{reply:?}");

    // Through the service: the run decision becomes one turn.
    let (counted, calls) = Counted::new(Rc::new(rules));
    let r = rig_with(Some(Rc::new(counted)), &["test:7"]).await;
    r.write(md);
    let out = r.tick().await;
    assert!(matches!(&out, HeartbeatOutcome::Ran { delivered_to, .. } if delivered_to == &["test:7".to_owned()]));
    assert_eq!(calls.get(), 1);
    assert_eq!(r.turns.log.borrow().len(), 1);
    r.write(done);
    assert!(matches!(r.tick().await, HeartbeatOutcome::Skipped { .. }));
    assert_eq!(r.turns.log.borrow().len(), 1, "all checked: no second turn");
}

#[actix_rt::test]
async fn the_loop_ticks_on_the_interval_and_reports_the_next_heartbeat() {
    let r = rig().await;
    r.skip_always();
    assert_eq!(r.handle.call(NextHeartbeat).await.unwrap(), None, "no loop yet");
    let task = r.running_loop().await;
    assert_eq!(r.handle.call(NextHeartbeat).await.unwrap(), Some(t0() + Duration::seconds(1800)));
    settle().await;
    assert_eq!(r.phase1.calls.get(), 0, "the first tick is an interval after the start");
    r.advance(1799);
    settle().await;
    assert_eq!(r.phase1.calls.get(), 0);
    r.advance(1);
    until("the interval tick", || r.phase1.calls.get() == 1).await;
    until("the next tick is scheduled", || r.wake.next_heartbeat() == Some(t0() + Duration::seconds(3600))).await;
    task.abort();
    settle().await;
    assert_eq!(r.handle.call(NextHeartbeat).await.unwrap(), None, "an aborted loop ticks no more");
}

#[actix_rt::test]
async fn three_wakes_at_once_make_exactly_one_tick() {
    let r = rig().await;
    r.skip_always();
    let task = r.running_loop().await;
    r.wake.request_wake_now("cron:backup done", r.clock.now());
    r.wake.request_wake_now("subagent done", r.clock.now());
    r.handle.call(RequestWake { reason: "manual".into() }).await.unwrap();
    until("the wake tick", || r.phase1.calls.get() == 1).await;
    settle().await;
    assert_eq!(r.phase1.calls.get(), 1, "coalesced into one tick");
    assert!(r.wake.snapshot().pending().is_empty());
    task.abort();
}

#[actix_rt::test]
async fn three_wakes_inside_the_window_make_exactly_one_tick_at_its_end() {
    let r = rig().await;
    r.skip_always();
    let task = r.running_loop().await;
    r.wake.request_wake_now("first", r.clock.now());
    until("the first wake tick", || r.phase1.calls.get() == 1).await;
    for (at, reason) in [(10, "cron:a"), (20, "cron:b"), (30, "subagent")] {
        r.clock.set(t0() + Duration::seconds(at));
        r.wake.request_wake_now(reason, r.clock.now());
        settle().await;
    }
    assert_eq!(r.phase1.calls.get(), 1, "the guard holds them");
    assert_eq!(r.handle.call(NextHeartbeat).await.unwrap(), Some(t0() + Duration::seconds(60)));
    r.advance(29); // t0 + 59
    settle().await;
    assert_eq!(r.phase1.calls.get(), 1);
    r.advance(1); // t0 + 60: last fire + gap
    until("the held wakes fire", || r.phase1.calls.get() == 2).await;
    settle().await;
    assert_eq!(r.phase1.calls.get(), 2, "three requests, one tick");
    task.abort();
}

#[actix_rt::test]
async fn a_wake_after_the_window_ticks_again_at_once() {
    let r = rig().await;
    r.skip_always();
    let task = r.running_loop().await;
    r.wake.request_wake_now("first", r.clock.now());
    until("the first wake tick", || r.phase1.calls.get() == 1).await;
    r.clock.set(t0() + Duration::seconds(61));
    r.wake.request_wake_now("second", r.clock.now());
    until("a second tick", || r.phase1.calls.get() == 2).await;
    task.abort();
}

#[actix_rt::test]
async fn a_wake_during_a_busy_user_turn_ticks_only_after_the_turn_completes_and_once() {
    let r = rig().await;
    r.skip_always();
    let task = r.running_loop().await;
    let user = TurnRequest::new("u1", Origin::User, "cli:1", "cli", "1", "hello", BusyPolicy::Append, t0());
    let (_, user_done) = r.scheduler.submit_wait(user);
    until("the user turn runs", || r.scheduler.has_inflight("cli:1")).await;
    r.wake.request_wake_now("cron:a", r.clock.now());
    settle().await;
    assert_eq!(r.phase1.calls.get(), 0, "no tick while the user is being served");
    assert!(r.wake.snapshot().is_parked());
    r.advance(120); // past the guard and still busy: still parked
    settle().await;
    assert_eq!(r.phase1.calls.get(), 0);
    r.turns.release.notify_one();
    user_done.await.unwrap();
    until("the parked wake fires", || r.phase1.calls.get() == 1).await;
    settle().await;
    assert_eq!(r.phase1.calls.get(), 1, "exactly once");
    assert!(!r.wake.snapshot().is_parked());
    task.abort();
}

#[actix_rt::test]
async fn a_wake_arriving_during_a_tick_is_not_lost() {
    let r = rig().await;
    r.skip_always();
    let gate = Rc::new(Notify::new());
    *r.phase1.gate.borrow_mut() = Some(gate.clone());
    let task = r.running_loop().await;
    r.wake.request_wake_now("first", r.clock.now());
    until("the first tick asks the provider", || r.phase1.calls.get() == 1).await;
    // The tick is waiting on the LLM when a subagent finishes.
    r.wake.request_wake_now("subagent done", r.clock.now());
    gate.notify_one();
    settle().await;
    assert_eq!(r.phase1.calls.get(), 1, "held by the guard, not served by the running tick");
    assert_eq!(r.wake.snapshot().pending(), ["subagent done".to_owned()]);
    r.advance(60);
    until("the kept wake fires", || r.phase1.calls.get() == 2).await;
    gate.notify_one();
    settle().await;
    assert!(r.wake.snapshot().pending().is_empty());
    task.abort();
}

#[actix_rt::test]
async fn a_disabled_heartbeat_neither_loops_nor_calls_the_llm() {
    let mut r = rig().await;
    r.skip_always();
    r.cfg.enabled = false;
    let task = r.spawn_loop();
    settle().await;
    assert!(task.is_finished());
    assert_eq!(r.handle.call(NextHeartbeat).await.unwrap(), None);
    assert_eq!(r.phase1.calls.get(), 0);
}

#[actix_rt::test]
async fn the_same_skip_again_is_not_written_to_the_journal_again() {
    let r = rig().await;
    let lines = || std::fs::read_to_string(r.tmp.path().join("journal.jsonl")).unwrap_or_default().lines().count();
    let interval = || async { r.handle.call_async(IntervalTick).await.unwrap() };
    for _ in 0..3 {
        assert!(matches!(interval().await, HeartbeatOutcome::Skipped { .. }));
    }
    assert_eq!(lines(), 1, "no HEARTBEAT.md, three times: one line");
    r.tick().await;
    assert_eq!(lines(), 2, "a tick asked for (a wake) always has its line");
    r.write("   \n");
    interval().await;
    interval().await;
    assert_eq!(lines(), 3, "a new reason is a new line");
    r.skip_always();
    interval().await;
    r.write("");
    interval().await;
    assert_eq!(lines(), 5, "after another line, the blank file's skip is told again");
}
