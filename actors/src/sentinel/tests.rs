//! The tick, end to end in-process: real actors, a scripted provider that counts its calls,
//! a router that records what it was given, the manual clock.

use super::*;
use crate::clock::ManualClock;
use crate::config::{ContextConfig, FeedbackConfig, PolicyConfig, SentinelConfig};
use crate::context::attention::{producers, AttentionUpdater};
use crate::context::{AssemblerService, ContextAssembler};
use crate::data_dir::DataDir;
use crate::feedback::NudgeFeedbackTracker;
use crate::llm::provider::ProviderError;
use crate::planner::{PlannerService, ProactivePlanner};
use crate::policy::{NudgePolicy, NudgePolicyService, PolicyState};
use crate::supervise::{start, LocalBoxFuture, Metrics, RestartPolicy};
use crate::testkit::doubles::Scripted;
use chrono::{DateTime, Duration, TimeZone, Utc};
use raven_proto::{Action, ExecutionResult, PlannerDecision, Priority};
use serde_json::{json, Value};
use std::cell::{Cell, RefCell};
use std::rc::Rc;

#[derive(Default)]
pub(super) struct Recording {
    pub(super) routed: RefCell<Vec<PlannerDecision>>,
    pub(super) said: RefCell<Vec<crate::feedback::Dispatch>>,
}

impl Router for Recording {
    fn route<'a>(
        &'a self,
        d: &'a PlannerDecision,
        said: &'a crate::feedback::Dispatch,
    ) -> LocalBoxFuture<'a, ExecutionResult> {
        self.routed.borrow_mut().push(d.clone());
        self.said.borrow_mut().push(said.clone());
        Box::pin(async { ExecutionResult::delivered(vec!["jsonl:test".into()]) })
    }
}

pub(super) struct Rig {
    _tmp: tempfile::TempDir,
    pub(super) dir: DataDir,
    pub(super) clock: ManualClock,
    pub(super) calls: Rc<Cell<u32>>,
    provider: Scripted,
    pub(super) router: Rc<Recording>,
    pub(super) runner: SentinelRunner,
    metrics: Metrics,
}

fn skip_args() -> Value {
    json!({"action": "skip", "reason": "nothing", "proactivity_score": 0.0})
}

/// Monday 2026-03-02, UTC.
pub(super) fn at(h: u32, m: u32) -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 3, 2, h, m, 0).unwrap()
}

fn rig_with(start_at: DateTime<Utc>, policy_cfg: PolicyConfig, assembler_policy: RestartPolicy) -> Rig {
    let tmp = tempfile::tempdir().unwrap();
    let dir = DataDir::new(tmp.path());
    dir.ensure().unwrap();
    let clock = ManualClock::new(start_at);
    let metrics = Metrics::default();
    let provider = Scripted::answering(skip_args());
    let calls = provider.calls.clone();
    let planner = start(
        PlannerService::new(ProactivePlanner::new(Rc::new(provider.clone()))),
        &metrics,
        RestartPolicy::default(),
    );
    let store =
        crate::policy::ledger_in(crate::store::owners::open(&dir, crate::store::owners::Owner::Policy).unwrap());
    let policy = start(
        NudgePolicyService::new(NudgePolicy::new(policy_cfg, chrono_tz::Tz::UTC), Some(store), clock.shared()),
        &metrics,
        RestartPolicy::default(),
    );
    let assembler =
        start(AssemblerService::new(ContextAssembler::new(&dir, ContextConfig::default())), &metrics, assembler_policy);
    let router = Rc::new(Recording::default());
    let runner = SentinelRunner::new(RunnerDeps {
        order: Default::default(),
        ladder: Default::default(),
        language: Default::default(),
        assembler,
        planner,
        policy,
        router: router.clone(),
        clock: clock.shared(),
        tz: chrono_tz::Tz::UTC,
        tracker: Rc::new(NudgeFeedbackTracker::new(dir.feedback(), FeedbackConfig::default(), chrono_tz::Tz::UTC)),
        attention: Some(AttentionUpdater::new(dir.attention(), producers::defaults())),
        cfg: SentinelConfig::default(),
        discovery: None,
        daily_analysis: None,
        quiet: Vec::new(),
        brief: None,
    })
    .with_journal(crate::journal::Journal::in_data_dir(&dir));
    Rig { _tmp: tmp, dir, clock, calls, provider, router, runner, metrics }
}

pub(super) fn rig(start_at: DateTime<Utc>) -> Rig {
    rig_with(start_at, PolicyConfig::default(), RestartPolicy::default())
}

fn routine_history(dir: &DataDir) {
    let h = "- 2026-02-26 09:05 took my medication\n- 2026-02-27 09:10 medication done\n- 2026-02-28 09:02 medication taken\n";
    std::fs::write(dir.history(), h).unwrap();
}

#[actix_rt::test]
async fn quiet_hours_skip_without_calling_the_provider() {
    let mut r = rig(at(23, 30));
    let out = r.runner.tick_once().await;
    assert_eq!(out.route.to_string(), "fast_path_skip");
    assert_eq!(out.decision.reason, "fast_path:quiet_hours");
    assert_eq!(r.calls.get(), 0);
    r.clock.set(at(3, 0));
    r.runner.tick_once().await;
    assert_eq!(r.calls.get(), 0);
    assert_eq!(r.runner.stats().skipped_quiet_hours, 2);
}

/// Quiet hours give way only to a high-priority item within its notice (spec: high priority
/// may bypass quiet hours): the Planner is asked then, and the gate has the last word.
#[actix_rt::test]
async fn a_high_priority_deadline_within_its_notice_opens_quiet_hours_to_the_planner() {
    for (note, asked) in [
        ("- [ ] Pick up the test results due: 2026-03-02 03:30 !high", true),
        ("- [ ] Pick up the test results due: 2026-03-02 03:30", false),
        ("- [ ] Pick up the test results due: 2026-03-02 05:30 !high", false),
        ("- [ ] Pick up the test results due: 2026-03-02 01:30 !high", false),
    ] {
        let mut r = rig(at(3, 0));
        std::fs::write(r.dir.memory(), format!("{note}\n")).unwrap();
        let out = r.runner.tick_once().await;
        assert_eq!(r.calls.get(), u32::from(asked), "{note}: {:?}", out.decision);
        assert_eq!(out.decision.reason == "fast_path:quiet_hours", !asked, "{note}: {:?}", out.decision);
    }
}

#[actix_rt::test]
async fn an_unchanged_context_skips_the_second_call_until_the_ttl() {
    let mut r = rig(at(9, 0));
    std::fs::write(r.dir.memory(), "nothing pressing").unwrap();
    assert_eq!(r.runner.tick_once().await.route.to_string(), "skip");
    assert_eq!(r.calls.get(), 1);
    r.clock.advance(Duration::minutes(30));
    let out = r.runner.tick_once().await;
    assert_eq!(out.decision.reason, "fast_path:unchanged_context");
    assert_eq!(r.calls.get(), 1, "second tick made no provider call");
    r.clock.set(at(13, 0)); // the 4 h TTL has passed
    r.runner.tick_once().await;
    assert_eq!(r.calls.get(), 2, "after the TTL it calls again");
    // A changed memory is a new context: asked at once.
    r.clock.advance(Duration::minutes(30));
    std::fs::write(r.dir.memory(), "something new").unwrap();
    r.runner.tick_once().await;
    assert_eq!(r.calls.get(), 3);
}

#[actix_rt::test]
async fn the_skip_cache_does_not_hold_a_dated_item_entering_its_reminder_hour() {
    let mut r = rig(at(9, 0));
    std::fs::write(r.dir.memory(), "Dentist on March 2 at 13:00\n").unwrap();
    assert_eq!(r.runner.tick_once().await.route.to_string(), "skip");
    r.clock.set(at(9, 30));
    assert_eq!(r.runner.tick_once().await.decision.reason, "fast_path:unchanged_context");
    assert_eq!(r.calls.get(), 1);
    // Within the hour before it, well inside the 4 h TTL: the Planner is asked again.
    r.clock.set(at(12, 15));
    r.runner.tick_once().await;
    assert_eq!(r.calls.get(), 2, "a reminder falls due: the context changed");
}

#[actix_rt::test]
async fn a_tick_is_journaled_and_a_skip_that_only_repeats_the_last_adds_no_line() {
    let mut r = rig(at(9, 0));
    assert_eq!(r.runner.tick_once().await.route.to_string(), "skip");
    r.clock.set(at(9, 30));
    assert_eq!(r.runner.tick_once().await.decision.reason, "fast_path:unchanged_context");
    r.clock.set(at(23, 30));
    assert_eq!(r.runner.tick_once().await.route.to_string(), "fast_path_skip");
    let lines = crate::journal::read_all(&r.dir.journal()).unwrap().unwrap();
    let ticks: Vec<crate::journal::Entry> = lines.iter().map(|l| serde_json::from_str(l).unwrap()).collect();
    let routes: Vec<_> = ticks
        .iter()
        .map(|e| match &e.event {
            crate::journal::Event::Tick(t) => (t.route.as_str(), t.fast_path.as_deref()),
            other => panic!("only ticks here: {other:?}"),
        })
        .collect();
    assert_eq!(routes, [("skip", None), ("fast_path_skip", Some("quiet_hours"))], "{lines:?}");
}

#[actix_rt::test]
async fn a_recurring_slot_fires_without_the_llm_once_a_day() {
    let mut r = rig(at(9, 0));
    routine_history(&r.dir);
    let out = r.runner.tick_once().await;
    assert_eq!(out.route.to_string(), "scheduled_fire", "{out:?}");
    assert_eq!(r.calls.get(), 0, "no LLM call");
    assert!(out.result.as_ref().unwrap().delivered);
    assert!(out.nudge_id.is_some());
    let routed = r.router.routed.borrow().clone();
    assert_eq!(routed.len(), 1);
    assert!(routed[0].nudge_message.as_deref().unwrap().contains("medication"));
    // Still inside the slot's window: it does not fire again today.
    r.clock.set(at(9, 20));
    let out = r.runner.tick_once().await;
    assert_ne!(out.route.to_string(), "scheduled_fire");
    assert_eq!(r.router.routed.borrow().len(), 1);
    // The next day it fires again.
    r.clock.set(at(9, 0) + Duration::days(1));
    assert_eq!(r.runner.tick_once().await.route.to_string(), "scheduled_fire");
    assert_eq!(r.router.routed.borrow().len(), 2);
    // The fire went through the gate and into the shared ledger.
    let (state, _) = crate::store::owners::open(&r.dir, crate::store::owners::Owner::Policy)
        .unwrap()
        .read::<PolicyState>("policy")
        .unwrap();
    assert_eq!(state.fires.len(), 2);
    assert_eq!(state.fires[0].topic, "medication");
}

#[actix_rt::test]
async fn a_one_shot_deadline_slot_goes_to_the_planner() {
    let mut r = rig(at(16, 0));
    std::fs::write(r.dir.memory(), "- [ ] Submit the report due: 2026-03-02 17:00 !high\n").unwrap();
    let out = r.runner.tick_once().await;
    assert_eq!(r.calls.get(), 1, "the planner decides a deadline slot");
    assert_eq!(out.decision.action, Action::Skip);
    assert!(out.notes.iter().any(|n| n.contains("unfired deadline slot")), "{:?}", out.notes);
    assert!(r.router.routed.borrow().is_empty());
}

#[actix_rt::test]
async fn planner_down_fires_a_high_deadline_through_the_policy_but_not_a_low_one() {
    let mut r = rig(at(16, 0));
    r.provider.set(Err(ProviderError::Http { status: 503, body: "down".into(), retry_after: None }));
    std::fs::write(r.dir.memory(), "- [ ] Submit the report due: 2026-03-02 17:00 !high\n").unwrap();
    let out = r.runner.tick_once().await;
    assert_eq!(out.route.to_string(), "deadline_fallback", "{out:?}");
    assert_eq!(out.decision.priority, Priority::High);
    assert!(out.result.unwrap().delivered);
    assert_eq!(r.router.routed.borrow().len(), 1);
    let (state, _) = crate::store::owners::open(&r.dir, crate::store::owners::Owner::Policy)
        .unwrap()
        .read::<PolicyState>("policy")
        .unwrap();
    assert_eq!(state.fires.len(), 1, "recorded by the gate");

    let mut low = rig(at(16, 0));
    low.provider.set(Err(ProviderError::Timeout(100)));
    std::fs::write(low.dir.memory(), "- [ ] Water the plants due: 2026-03-02 17:00 !low\n").unwrap();
    let out = low.runner.tick_once().await;
    assert_eq!(out.decision.action, Action::Skip);
    assert!(out.decision.reason.starts_with("planner_error:"));
    assert!(low.router.routed.borrow().is_empty());
}

#[actix_rt::test]
async fn the_deadline_fallback_still_obeys_the_gate() {
    let cfg = PolicyConfig { max_per_day: 0, ..Default::default() };
    let mut r = rig_with(at(16, 0), cfg, RestartPolicy::default());
    r.provider.set(Err(ProviderError::Transport("refused".into())));
    std::fs::write(r.dir.memory(), "- [ ] Submit the report due: 2026-03-02 17:00 !high\n").unwrap();
    let out = r.runner.tick_once().await;
    assert_eq!(out.route.to_string(), "deadline_fallback:denied");
    assert!(out.result.unwrap().error.unwrap().contains("day_quota"));
    assert!(r.router.routed.borrow().is_empty());
}

#[actix_rt::test]
async fn an_assembler_panic_is_a_skip_and_the_next_tick_works() {
    let faulty =
        RestartPolicy { panic_at: Some(1), backoff_initial: std::time::Duration::from_millis(1), ..Default::default() };
    let mut r = rig_with(at(12, 0), PolicyConfig::default(), faulty);
    let out = r.runner.tick_once().await;
    assert_eq!(out.route.to_string(), "degraded");
    assert_eq!(out.decision.action, Action::Skip);
    assert_eq!(r.calls.get(), 0);
    let out = r.runner.tick_once().await;
    assert_eq!(out.route.to_string(), "skip", "{out:?}");
    assert_eq!(r.calls.get(), 1);
    let assembler = r.metrics.snapshot().into_iter().find(|m| m.name == "ContextAssembler").unwrap();
    assert_eq!(assembler.restarts, 1);
}

#[actix_rt::test]
async fn a_planner_nudge_is_routed_with_what_its_conversation_records() {
    let mut r = rig(at(12, 0));
    r.provider.set(Ok(
        json!({"action": "nudge", "reason": "r", "proactivity_score": 0.9, "nudge_message": "Stretch!", "target_session": "cli:1"}),
    ));
    let out = r.runner.tick_once().await;
    assert_eq!(out.route.to_string(), "nudge");
    let id = out.nudge_id.unwrap();
    // The delivery writes the dispatched record (see delivery::conversation): the runner
    // hands it the id, the topic and the source.
    let said = r.router.said.borrow().clone();
    assert_eq!(said.len(), 1);
    assert_eq!((said[0].nudge_id.as_str(), said[0].topic.as_str()), (id.as_str(), "stretch"));
    assert_eq!(said[0].source, crate::feedback::Source::Sentinel);
    // The attention file was refreshed by the tick.
    assert!(std::fs::read_to_string(r.dir.attention()).unwrap().contains("## Today's plan"));
}

#[actix_rt::test]
async fn the_runner_actor_ticks_and_reports_stats() {
    let r = rig(at(12, 0));
    let metrics = r.metrics.clone();
    let h = start(RunnerService::new(r.runner), &metrics, RestartPolicy::default());
    assert_eq!(h.call_async(Tick).await.unwrap().route.to_string(), "skip");
    assert_eq!(h.call(GetStats).await.unwrap().unwrap().ticks, 1);
    let names: Vec<_> = metrics.snapshot().into_iter().map(|m| m.name).collect();
    for n in ["Planner", "NudgePolicy", "ContextAssembler", "SentinelRunner"] {
        assert!(names.iter().any(|x| x == n), "{n} missing from {names:?}");
    }
}

#[actix_rt::test]
async fn the_interval_loop_keeps_ticking() {
    let r = rig(at(12, 0));
    let metrics = r.metrics.clone();
    let h = start(RunnerService::new(r.runner), &metrics, RestartPolicy::default());
    let next = std::rc::Rc::new(std::cell::Cell::new(None));
    let clock = crate::clock::ManualClock::new(at(12, 0));
    let ms2 = std::time::Duration::from_millis(2);
    let loop_task = spawn_tick_loop(h.clone(), move || Some(ms2), ms2, clock.shared(), next.clone());
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    let mut ticks = 0;
    while std::time::Instant::now() < deadline {
        ticks = h.call(GetStats).await.unwrap().map_or(ticks, |s| s.ticks);
        if ticks >= 3 {
            break;
        }
        actix_rt::time::sleep(std::time::Duration::from_millis(2)).await;
    }
    loop_task.abort();
    assert!(ticks >= 3, "{ticks} ticks");
    assert_eq!(next.get(), Some(at(12, 0) + chrono::Duration::milliseconds(2)), "the next tick is kept for status");
}

#[actix_rt::test]
async fn a_loop_that_is_off_does_not_tick_until_turned_on() {
    let r = rig(at(12, 0));
    let metrics = r.metrics.clone();
    let h = start(RunnerService::new(r.runner), &metrics, RestartPolicy::default());
    let next = std::rc::Rc::new(std::cell::Cell::new(None));
    let clock = crate::clock::ManualClock::new(at(12, 0));
    let on = Rc::new(Cell::new(false));
    let (ms2, flag) = (std::time::Duration::from_millis(2), on.clone());
    let loop_task = spawn_tick_loop(h.clone(), move || flag.get().then_some(ms2), ms2, clock.shared(), next.clone());
    let ticks = || async { h.call(GetStats).await.unwrap().map_or(0, |s| s.ticks) };
    // Long enough for several polls while off.
    actix_rt::time::sleep(std::time::Duration::from_millis(20)).await;
    assert_eq!((ticks().await, next.get()), (0, None), "off: no tick, and none announced");
    on.set(true);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    while ticks().await == 0 && std::time::Instant::now() < deadline {
        actix_rt::time::sleep(ms2).await;
    }
    loop_task.abort();
    assert!(ticks().await >= 1, "turned on, it ticks");
}

/// Counts the discovery runs the runner asks for.
struct CountingDiscovery(Rc<Cell<u32>>);

impl crate::sentinel::DiscoveryHook for CountingDiscovery {
    fn maybe_run(&mut self, _: DateTime<Utc>) -> LocalBoxFuture<'_, crate::discovery::Discovered> {
        Box::pin(async { crate::discovery::Discovered::NotDue })
    }
    fn run_now(&mut self, _: DateTime<Utc>) -> LocalBoxFuture<'_, crate::discovery::Discovered> {
        self.0.set(self.0.get() + 1);
        Box::pin(async { crate::discovery::Discovered::NothingToPropose })
    }
}

#[actix_rt::test]
async fn an_operator_trigger_runs_discovery_once_from_the_drain_loop() {
    use crate::sentinel::triggers::TriggerStore;
    use crate::sentinel::DrainTriggers;
    let r = rig(at(12, 0));
    let runs = Rc::new(Cell::new(0));
    let runner = r.runner.with_discovery(Box::new(CountingDiscovery(runs.clone())));
    let h = start(
        RunnerService::new(runner).with_triggers(TriggerStore::in_dir(&r.dir).unwrap()),
        &r.metrics,
        RestartPolicy::default(),
    );
    assert_eq!(h.call_async(DrainTriggers).await.unwrap().unwrap(), 0);
    // Another process asks for a run; the short loop takes it once.
    TriggerStore::in_dir(&r.dir).unwrap().request("operator", at(12, 1)).unwrap();
    let task = crate::sentinel::spawn_trigger_loop(h.clone(), std::time::Duration::from_millis(2));
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    while runs.get() == 0 && std::time::Instant::now() < deadline {
        actix_rt::time::sleep(std::time::Duration::from_millis(2)).await;
    }
    actix_rt::time::sleep(std::time::Duration::from_millis(10)).await;
    task.abort();
    assert_eq!(runs.get(), 1, "one request, one run");
}

#[actix_rt::test]
async fn a_tightened_preference_takes_effect_on_the_next_tick_and_a_loosening_is_refused() {
    use crate::context::preferences::ProactivityPreferencesReader;
    let r = rig(at(22, 30));
    let (dir, clock) = (r.dir.clone(), r.clock.clone());
    let mut runner = r.runner.with_preferences(ProactivityPreferencesReader::for_data_dir(&dir));
    std::fs::write(dir.memory(), "# Me\n").unwrap();
    assert_ne!(
        runner.tick_once().await.route.to_string(),
        "fast_path_skip",
        "22:30 is outside the configured 23:00-07:00"
    );
    // The user widens their quiet hours in MEMORY.md: the very next tick honours it.
    std::fs::write(dir.memory(), "# Me\n\n## Proactivity preferences\nquiet hours: 22:00-07:00\n").unwrap();
    clock.advance(Duration::minutes(5));
    let out = runner.tick_once().await;
    assert_eq!(
        (out.route.to_string().as_str(), out.decision.reason.as_str()),
        ("fast_path_skip", "fast_path:quiet_hours")
    );
    // A narrower window is a loosening: refused, the configured 23:00 start holds.
    std::fs::write(dir.memory(), "# Me\n\n## Proactivity preferences\nquiet hours: 23:30-07:00\n").unwrap();
    clock.set(at(23, 10));
    assert_eq!(runner.tick_once().await.decision.reason, "fast_path:quiet_hours");
    clock.set(at(22, 40));
    assert_ne!(
        runner.tick_once().await.route.to_string(),
        "fast_path_skip",
        "and the earlier widening is gone with its line"
    );
}

#[actix_rt::test]
async fn an_untargeted_inject_goes_through_the_gate_like_a_nudge_and_is_sent_once() {
    let mut r = rig(at(12, 0));
    r.provider.set(Ok(
        json!({"action": "nudge_inject", "reason": "r", "proactivity_score": 0.9, "nudge_message": "Drink some water"}),
    ));
    let mut routes = Vec::new();
    for _ in 0..3 {
        routes.push(r.runner.tick_once().await.route.to_string());
        r.clock.advance(Duration::minutes(5));
    }
    let routed = r.router.routed.borrow().clone();
    assert_eq!(routed.len(), 1, "sent once, the repeats denied: {routes:?}");
    assert_eq!(routed[0].action, Action::Nudge);
    assert_eq!(routes[0], "nudge");
    assert!(routes[1..].iter().all(|r| r.ends_with(":denied")), "{routes:?}");
}
