//! The learning loop through the wired engine: a nudge becomes part of its conversation, the
//! agent (a real OpenAI-compatible client against a test server on 127.0.0.1) sees it with its
//! id, its `nudge_feedback` call records the user's reaction, and the gate learns from it at
//! once. And the no-reply timer: nothing is `ignored` that nobody could see.

use super::*;
use crate::agent::{dispatch_inbound, Inbound};
use crate::clock::{Clock, ManualClock};
use crate::feedback::{Lifecycle, NudgeFeedbackTracker};
use crate::llm::openai::OpenAiProvider;
use crate::policy::{Check, Nudge};
use crate::sentinel::Tick;
use crate::spine::TurnOutcome;
use chrono::{Duration as D, TimeZone, Utc};
use raven_proto::{Action, BusyPolicy, Origin, PolicyLayer, Priority, TurnRequest};
use serde_json::{json, Value};
use wiremock::matchers::{body_string_contains, method};
use wiremock::{Mock, MockServer, ResponseTemplate};

fn planner_says(message: &str) -> Value {
    let args = json!({"action": "nudge", "reason": "r", "proactivity_score": 0.9, "priority": "low",
        "nudge_message": message, "target_session": "jsonl:ann"});
    tool_call("planner_decision", &args)
}

fn tool_call(name: &str, args: &Value) -> Value {
    json!({"choices": [{"message": {"role": "assistant", "content": null,
        "tool_calls": [{"id": "c1", "type": "function", "function": {"name": name, "arguments": args.to_string()}}]}}]})
}

fn text(t: &str) -> Value {
    json!({"choices": [{"message": {"role": "assistant", "content": t}}]})
}

async fn mount_once(server: &MockServer, marker: &str, body: Value) {
    Mock::given(method("POST"))
        .and(body_string_contains(marker))
        .respond_with(ResponseTemplate::new(200).set_body_json(body))
        .up_to_n_times(1)
        .mount(server)
        .await;
}

/// The user writes on `jsonl:ann`; the turn's reply.
async fn user_says(engine: &Engine, words: &str, now: chrono::DateTime<Utc>) -> String {
    let req = TurnRequest::new(
        format!("in-{words}"),
        Origin::User,
        "jsonl:ann",
        "jsonl",
        "ann",
        words,
        BusyPolicy::Append,
        now,
    );
    let (how, rx) = dispatch_inbound(&engine.scheduler, &engine.questions, req);
    assert!(matches!(how, Inbound::Routed(_)), "{how:?}");
    match rx.unwrap().await.unwrap() {
        TurnOutcome::Replied(t) => t,
        other => panic!("{other:?}"),
    }
}

async fn layer_of(engine: &Engine, content: &str) -> Option<PolicyLayer> {
    let n = Nudge {
        action: Action::Nudge,
        session_key: Some("jsonl:bob".into()),
        content: content.into(),
        priority: Priority::Low,
        topic: None,
        solicited: false,
    };
    engine.policy.call(Check(n)).await.unwrap().layer
}

#[actix_rt::test]
async fn a_reply_to_a_nudge_reaches_the_gate_through_nudge_feedback_with_and_without_its_id() {
    let server = MockServer::start().await;
    let tmp = tempfile::tempdir().unwrap();
    let dir = DataDir::new(tmp.path());
    let clock = ManualClock::new(Utc.with_ymd_and_hms(2026, 3, 2, 10, 0, 0).unwrap());
    let mut config = RavenConfig::default();
    config.delivery.jsonl_path = "out.jsonl".into();
    let provider = OpenAiProvider::new(&server.uri(), "m", None, std::time::Duration::from_secs(5)).unwrap();
    let o = Overrides { provider: Some(Rc::new(provider)), ..Overrides::default() };
    let engine = Engine::start_with(&dir, &config, clock.shared(), o).unwrap();
    let tracker = NudgeFeedbackTracker::new(dir.feedback(), config.feedback.clone(), chrono_tz::UTC);

    // 1. A nudge about water, to ann; the user answers "stop"; the model calls the tool
    //    without an id: the latest proactive message of this conversation is meant.
    mount_once(&server, "planner_decision", planner_says("Drink a glass of water")).await;
    let tick = engine.runner.call_async(Tick).await.unwrap();
    let first = tick.nudge_id.clone().unwrap_or_else(|| panic!("{tick:?}"));
    let no_id = json!({"verdict": "dismissed", "reason": "stop reminding me about water"});
    mount_once(&server, "stop reminding me about water", tool_call("nudge_feedback", &no_id)).await;
    mount_once(&server, "recorded dismissed", text("Understood, no more water reminders.")).await;
    clock.advance(D::minutes(5));
    let reply = user_says(&engine, "stop reminding me about water", clock.now()).await;
    assert_eq!(reply, "Understood, no more water reminders.");

    let requests = server.received_requests().await.unwrap();
    let bodies: Vec<String> = requests.iter().map(|r| String::from_utf8_lossy(&r.body).into_owned()).collect();
    let agent_call = bodies.iter().find(|b| b.contains("stop reminding me about water")).unwrap();
    assert!(agent_call.contains("Drink a glass of water"), "the nudge is in the conversation: {agent_call}");
    assert!(agent_call.contains(&format!("nudge_id={first}")), "with its id: {agent_call}");
    let verdicts = |id: &str| -> Vec<Lifecycle> {
        tracker.records().unwrap().into_iter().filter(|r| r.nudge_id == id).map(|r| r.event).collect()
    };
    assert_eq!(verdicts(&first), [Lifecycle::Dispatched, Lifecycle::Engaged, Lifecycle::Dismissed]);
    // The gate learns at once (the runner retunes on its next tick; a check after it denies).
    engine.runner.call_async(Tick).await.unwrap();
    assert_eq!(layer_of(&engine, "Stretch your legs").await, Some(PolicyLayer::DismissalCooldown));
    clock.advance(D::hours(3));
    engine.runner.call_async(Tick).await.unwrap();
    assert_eq!(layer_of(&engine, "Drink some water now").await, Some(PolicyLayer::TopicRejectCooldown));

    // 2. Another nudge (the notes changed, so the planner is asked again); this time the model
    //    names the id.
    std::fs::write(dir.workspace().join("MEMORY.md"), "Sitting all day this week.\n").unwrap();
    mount_once(&server, "planner_decision", planner_says("Time to stretch your legs")).await;
    let tick = engine.runner.call_async(Tick).await.unwrap();
    let second = tick.nudge_id.clone().unwrap_or_else(|| panic!("{tick:?}"));
    let with_id = json!({"verdict": "dismissed", "nudge_id": second, "reason": "not now"});
    mount_once(&server, "not now please", tool_call("nudge_feedback", &with_id)).await;
    mount_once(&server, "recorded dismissed", text("Okay.")).await;
    clock.advance(D::minutes(1));
    assert_eq!(user_says(&engine, "not now please", clock.now()).await, "Okay.");
    assert_eq!(verdicts(&second).last(), Some(&Lifecycle::Dismissed));
    engine.runner.call_async(Tick).await.unwrap();
    assert_eq!(layer_of(&engine, "Call your mother").await, Some(PolicyLayer::DismissalCooldown));
}

#[actix_rt::test]
async fn an_unattended_engine_leaves_nothing_ignored_and_a_seen_nudge_is_ignored_once_after_six_awake_hours() {
    use crate::testkit::doubles::Scripted;
    let tmp = tempfile::tempdir().unwrap();
    let dir = DataDir::new(tmp.path());
    let clock = ManualClock::new(Utc.with_ymd_and_hms(2026, 3, 2, 10, 0, 0).unwrap());
    let mut config = RavenConfig::default();
    config.delivery.jsonl_path = "out.jsonl".into();
    // Counted as delivered though no one watches (without it, the nudge would wait in the
    // outbox: `delivery::watched`); still, no one saw it, so it is never `ignored`.
    config.delivery.cli_always = true;
    let say = |target: &str| json!({"action": "nudge", "reason": "r", "proactivity_score": 0.9, "nudge_message": format!("Water for {target}"), "target_session": target});
    let provider = Scripted::answering(say("cli:local"));
    // The cli outlet as `raven up` has it with stdout not a terminal and no REPL attached.
    let cli: Arc<dyn Outlet> = Arc::new(CliOutlet::events_only(crate::ipc::EventBus::default()));
    let o = Overrides { provider: Some(Rc::new(provider.clone())), outlets: vec![cli], ..Overrides::default() };
    let engine = Engine::start_with(&dir, &config, clock.shared(), o).unwrap();
    let unseen = engine.runner.call_async(Tick).await.unwrap().nudge_id.unwrap();
    clock.advance(D::hours(1));
    provider.set(Ok(say("jsonl:ann")));
    let seen = engine.runner.call_async(Tick).await.unwrap().nudge_id.unwrap();
    let tracker = NudgeFeedbackTracker::new(dir.feedback(), config.feedback.clone(), chrono_tz::UTC);
    let ignored = || -> Vec<String> {
        let records = tracker.records().unwrap().into_iter();
        records.filter(|r| r.event == Lifecycle::Ignored).map(|r| r.nudge_id).collect()
    };
    provider.set(Ok(json!({"action": "skip", "reason": "r", "proactivity_score": 0})));
    clock.advance(D::minutes(5 * 60 + 55));
    engine.runner.call_async(Tick).await.unwrap();
    assert!(ignored().is_empty(), "5 h 55 m is not 6 h");
    clock.advance(D::minutes(10));
    engine.runner.call_async(Tick).await.unwrap();
    clock.advance(D::hours(6));
    engine.runner.call_async(Tick).await.unwrap();
    assert_eq!(ignored(), [seen], "once, and never `{unseen}` that only an unwatched terminal got");
}

/// What tells one version of a file from the next: its inode (an atomic replace makes a new
/// one), its modification time and its length.
type Version = (u64, std::time::SystemTime, u64);

/// Every file under `root` with its version.
fn snapshot(root: &std::path::Path) -> std::collections::BTreeMap<std::path::PathBuf, Version> {
    let mut out = std::collections::BTreeMap::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let (p, m) = (e.path(), e.metadata().unwrap());
            if m.is_dir() {
                stack.push(p);
            } else {
                out.insert(p, (std::os::unix::fs::MetadataExt::ino(&m), m.modified().unwrap(), m.len()));
            }
        }
    }
    out
}

#[actix_rt::test]
async fn an_idle_engine_writes_no_state_in_ten_minutes_of_its_loops() {
    use crate::cron::service::RunDue;
    use crate::delivery::hub::RetryOutbox;
    use crate::sentinel::PollDeferred;
    let tmp = tempfile::tempdir().unwrap();
    let dir = DataDir::new(tmp.path());
    let clock = ManualClock::new(Utc.with_ymd_and_hms(2026, 3, 2, 10, 0, 0).unwrap());
    let engine = Engine::start(&dir, &RavenConfig::default(), clock.shared()).unwrap();
    let cron = engine.cron.clone().unwrap();
    let round = || async {
        engine.hub.call_async(RetryOutbox).await.unwrap().unwrap();
        engine.runner.call_async(PollDeferred).await.unwrap();
        cron.call_async(RunDue).await.unwrap();
    };
    // Start-up may write (the first tick's attention.md, the day's guards); then nothing.
    round().await;
    engine.runner.call_async(Tick).await.unwrap();
    std::thread::sleep(std::time::Duration::from_millis(20));
    let before = snapshot(tmp.path());
    for s in 1..=20 {
        clock.advance(D::seconds(30));
        round().await;
        if s % 10 == 0 {
            engine.runner.call_async(Tick).await.unwrap();
        }
    }
    let after = snapshot(tmp.path());
    let changed: Vec<_> = after.iter().filter(|(p, v)| before.get(*p) != Some(v)).map(|(p, _)| p.clone()).collect();
    assert!(changed.is_empty(), "written while idle: {changed:?}");
}

/// The loops themselves, as `raven up` runs them, over ten minutes of paused tokio time (and
/// the manual clock in step): after start-up, not one file is written or replaced.
#[actix_rt::test]
async fn an_engine_whose_loops_run_ten_idle_minutes_of_paused_time_writes_no_file() {
    tokio::time::pause();
    let tmp = tempfile::tempdir().unwrap();
    let dir = DataDir::new(tmp.path());
    let clock = ManualClock::new(Utc.with_ymd_and_hms(2026, 3, 2, 10, 0, 0).unwrap());
    let mut config = RavenConfig::default();
    config.sentinel.enabled = true;
    config.sentinel.interval_s = 60;
    let engine = Engine::start(&dir, &config, clock.shared()).unwrap();
    let loops = engine.spawn_loops(&config);
    let run = |seconds: u32| {
        let clock = clock.clone();
        async move {
            for _ in 0..seconds {
                clock.advance(D::seconds(1));
                tokio::time::advance(std::time::Duration::from_secs(1)).await;
                for _ in 0..20 {
                    tokio::task::yield_now().await;
                }
            }
        }
    };
    // Start-up may write (the first tick's attention.md, the day's guards); then nothing.
    run(90).await;
    let (before, replaces) = (snapshot(tmp.path()), crate::store::replaces_on_this_thread());
    assert!(replaces > 0, "the counter sees the start-up's writes");
    run(600).await;
    let after = snapshot(tmp.path());
    assert_eq!(crate::store::replaces_on_this_thread(), replaces, "the write counter moved while idle");
    let ticks = engine.runner.call(crate::sentinel::GetStats).await.ok().flatten().map_or(0, |s| s.ticks);
    for l in loops {
        l.abort();
    }
    assert!(ticks >= 10, "the tick loop ran meanwhile ({ticks} ticks)");
    let changed: Vec<_> = after.iter().filter(|(p, v)| before.get(*p) != Some(v)).map(|(p, _)| p.clone()).collect();
    assert!(changed.is_empty(), "written while idle: {changed:?}");
}
