//! The wired engine: the attention.md watcher reaches the assembler, and an idle day costs
//! few LLM calls.

use super::*;
use crate::clock::{Clock, ManualClock};
use crate::context::Assemble;
use crate::delivery::outlets::CliOutlet;
use crate::testkit::doubles::Screen;
use chrono::{Duration as D, TimeZone, Utc};

#[actix_rt::test]
async fn an_idle_day_of_48_ticks_makes_at_most_6_llm_calls() {
    let calls = crate::testkit::sim::idle_day_llm_calls(48, D::minutes(30)).await;
    assert!(calls <= 6, "{calls} LLM calls");
    assert!(calls >= 1, "the planner was asked at least once");
}

#[actix_rt::test]
async fn a_hand_edit_of_attention_md_reaches_the_assembler_through_the_watcher() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = DataDir::new(tmp.path());
    let clock = ManualClock::new(Utc.with_ymd_and_hms(2026, 3, 2, 12, 0, 0).unwrap());
    let engine = Engine::start(&dir, &RavenConfig::default(), clock.shared()).unwrap();
    assert_eq!(engine.provider_name, "rules");
    std::fs::write(dir.attention(), "## Routines\nbefore\n").unwrap();
    let read =
        || async { engine.assembler.call(Assemble { now: clock.now(), policy: None }).await.unwrap().0.attention_md };
    // Let the first write's event arrive, then make sure the cache holds "before".
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    while !read().await.contains("before") && std::time::Instant::now() < deadline {
        actix_rt::time::sleep(std::time::Duration::from_millis(5)).await;
    }
    assert!(read().await.contains("before"));
    std::fs::write(dir.attention(), "## Routines\nafter the user's edit\n").unwrap();
    let mut seen = false;
    while std::time::Instant::now() < deadline + std::time::Duration::from_secs(5) {
        if read().await.contains("after the user's edit") {
            seen = true;
            break;
        }
        actix_rt::time::sleep(std::time::Duration::from_millis(5)).await;
    }
    assert!(seen, "the watcher's change event invalidated the cached section");
}

#[actix_rt::test]
async fn the_daily_analysis_runs_once_a_day_and_feeds_its_producer() {
    use crate::llm::decorator::Counted;
    use crate::planner::rules::RulesProvider;
    use crate::sentinel::{GetStats, Tick};
    let tmp = tempfile::tempdir().unwrap();
    let dir = DataDir::new(tmp.path());
    let clock = ManualClock::new(Utc.with_ymd_and_hms(2026, 3, 2, 8, 0, 0).unwrap());
    let mut config = RavenConfig::default();
    config.context.daily_analysis = true;
    let engine_with = |calls_provider: Counted| {
        let o = Overrides {
            provider: Some(Rc::new(calls_provider)),
            router: Some(Rc::new(crate::testkit::sim::NoOutlet)),
            ..Default::default()
        };
        Engine::start_with(&dir, &config, clock.shared(), o).unwrap()
    };
    let (provider, calls) = Counted::new(Rc::new(RulesProvider::new(chrono_tz::Tz::UTC)));
    let engine = engine_with(provider);
    std::fs::write(dir.memory(), "- [ ] Pay rent due: 2026-03-03 09:00\n").unwrap();
    for _ in 0..10 {
        engine.runner.call_async(Tick).await.unwrap();
        clock.advance(D::minutes(30));
    }
    let stats = engine.runner.call(GetStats).await.unwrap().unwrap();
    assert_eq!(stats.daily_analyses, 1, "once for the day");
    let text = std::fs::read_to_string(dir.attention()).unwrap();
    assert!(text.contains("## Daily focus\n- focus: Pay rent (due Tue 09:00)"), "{text}");
    assert_eq!(calls.get(), stats.planner_calls + 1, "one provider call more than the planner's");

    // A second engine on the same data dir the same day reuses the stored analysis.
    let (provider2, calls2) = Counted::new(Rc::new(RulesProvider::new(chrono_tz::Tz::UTC)));
    let second = engine_with(provider2);
    second.runner.call_async(Tick).await.unwrap();
    let s2 = second.runner.call(GetStats).await.unwrap().unwrap();
    assert_eq!(s2.daily_analyses, 0);
    assert_eq!(calls2.get(), s2.planner_calls);

    // The next day, a new analysis.
    clock.set(Utc.with_ymd_and_hms(2026, 3, 3, 8, 0, 0).unwrap());
    engine.runner.call_async(Tick).await.unwrap();
    assert_eq!(engine.runner.call(GetStats).await.unwrap().unwrap().daily_analyses, 2);
}

#[actix_rt::test]
async fn the_loops_retry_the_outbox_and_poll_defers_on_their_own() {
    use crate::delivery::hub::{OutboxSnapshot, Post};
    use raven_proto::OutboundText;
    let tmp = tempfile::tempdir().unwrap();
    let dir = DataDir::new(tmp.path());
    let clock = ManualClock::new(Utc.with_ymd_and_hms(2026, 3, 2, 12, 0, 0).unwrap());
    let mut config = RavenConfig::default();
    config.delivery.jsonl_path = "out.jsonl".into();
    config.delivery.outbox_backoff_s = 1;
    let engine = Engine::start(&dir, &config, clock.shared()).unwrap();
    // The outlet fails once (its file is a directory): the message waits in the outbox.
    let text = OutboundText::proactive("d-1", "jsonl", "me", "hello");
    std::fs::create_dir_all(dir.root().join("out.jsonl")).unwrap();
    assert!(engine.hub.call_async(Post::text(text)).await.unwrap().is_err());
    std::fs::remove_dir(dir.root().join("out.jsonl")).unwrap();
    clock.advance(D::seconds(5));
    let loops = engine.spawn_loops(&config);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    while std::time::Instant::now() < deadline {
        if engine.hub.call_async(OutboxSnapshot).await.unwrap().unwrap().entries.is_empty() {
            break;
        }
        actix_rt::time::sleep(std::time::Duration::from_millis(5)).await;
    }
    for l in loops {
        l.abort();
    }
    assert!(engine.hub.call_async(OutboxSnapshot).await.unwrap().unwrap().entries.is_empty());
    assert_eq!(std::fs::read_to_string(dir.root().join("out.jsonl")).unwrap().lines().count(), 1);
}

#[actix_rt::test]
async fn a_spawn_runs_an_isolated_agent_turn_and_delivers_to_the_originating_channel() {
    use crate::sentinel::Tick;
    use crate::testkit::doubles::Scripted;
    let tmp = tempfile::tempdir().unwrap();
    let dir = DataDir::new(tmp.path());
    let clock = ManualClock::new(Utc.with_ymd_and_hms(2026, 3, 2, 12, 0, 0).unwrap());
    let mut config = RavenConfig::default();
    config.delivery.jsonl_path = "out.jsonl".into();
    // The planner asks for a spawn. The subagent's turn gets the same scripted answer, a
    // `planner_decision` call of a tool it does not have, until its own iteration cap (the
    // micro-agent's, not the agent's): what that turn produced is still the result delivered
    // to jsonl:me.
    config.agent.subagent_max_iterations = 3;
    let p = Scripted::answering(serde_json::json!({"action": "spawn_agent", "reason": "r", "proactivity_score": 0.9,
        "spawn_task": "Summarise the week", "target_session": "jsonl:me"}));
    let o = Overrides { provider: Some(Rc::new(p.clone())), ..Overrides::default() };
    let engine = Engine::start_with(&dir, &config, clock.shared(), o).unwrap();
    let out = engine.runner.call_async(Tick).await.unwrap();
    assert_eq!(out.route.to_string(), "spawn_agent");
    let r = out.result.unwrap();
    assert!(r.started && !r.delivered, "started, not yet delivered: {r:?}");
    // The micro-agent runs after the tick, as a SUBAGENT turn in the spine's system pool; the
    // engine can wait for its result.
    let out_file = dir.root().join("out.jsonl");
    let ended = engine.spawns.settle(std::time::Duration::from_secs(5)).await.expect("the spawn ended");
    assert_eq!(ended, vec!["delivered to jsonl:me".to_owned()]);
    // The micro-agent, which nobody watches, was offered only the tools that read.
    let offered = p.offered.borrow().clone();
    let micro: Vec<_> = offered.iter().filter(|tools| tools.iter().any(|t| t == "read_memory")).collect();
    assert_eq!(micro.len(), 3, "each of its three steps: {offered:?}");
    for tools in micro {
        assert_eq!(tools, &["read_memory", "search_history", "list_jobs"], "{offered:?}");
    }
    let delivered = std::fs::read_to_string(&out_file).unwrap();
    assert!(
        delivered.contains("\"chat_id\":\"me\"") && delivered.contains("stopped after 3 tool calls"),
        "{delivered}"
    );
    // The subagent ran in its own conversation; the user's session got its result only, as
    // one proactive line.
    let mine = std::fs::read_to_string(dir.sessions().join("jsonl_me.jsonl")).unwrap();
    let line: crate::sessions::SessionLine = serde_json::from_str(mine.trim()).unwrap();
    assert_eq!(mine.lines().count(), 1, "{mine}");
    assert!(line.proactive && line.source == Some(crate::feedback::Source::Spawn), "{line:?}");
    assert!(std::fs::read_dir(dir.sessions()).unwrap().any(|e| e
        .unwrap()
        .file_name()
        .to_string_lossy()
        .starts_with("subagent_")));
    // Its completion wakes the heartbeat.
    let wake = engine.wake.snapshot();
    assert!(wake.pending().iter().any(|r| r.starts_with("subagent for jsonl:me")), "{:?}", wake.pending());
}

fn cron_engine(dir: &DataDir, clock: &ManualClock, screen: &Screen) -> Engine {
    let outlet = Arc::new(CliOutlet::to_writer(Box::new(screen.clone())));
    let o = Overrides { outlets: vec![outlet], ..Default::default() };
    Engine::start_with(dir, &RavenConfig::default(), clock.shared(), o).unwrap()
}

#[actix_rt::test]
async fn a_cron_fire_suppresses_a_sentinel_nudge_on_its_topic_and_leaves_the_acceptance_rate_alone() {
    use crate::cron::service::RunDue;
    use crate::cron::tool::{JobsCron, NewJob};
    use crate::feedback::{Dispatch, Source};
    use crate::policy::{Check, Nudge};
    let tmp = tempfile::tempdir().unwrap();
    let dir = DataDir::new(tmp.path());
    let clock = ManualClock::new(Utc.with_ymd_and_hms(2026, 3, 2, 12, 0, 0).unwrap());
    let screen = Screen::default();
    let engine = cron_engine(&dir, &clock, &screen);
    // One accepted Sentinel nudge on record: an acceptance rate of 1.0.
    let tracker = NudgeFeedbackTracker::new(dir.feedback(), Default::default(), chrono_tz::Tz::UTC);
    tracker
        .record_dispatched(
            &Dispatch::new("n1", "water", raven_proto::Priority::Low, Source::Sentinel),
            None,
            true,
            clock.now(),
        )
        .unwrap();
    tracker.record_verdict("n1", "accepted", "", clock.now()).unwrap();
    let before = tracker.summary(clock.now()).unwrap().overall;
    let jobs = JobsCron {
        store: JobsStore::new(dir.jobs()),
        tz: chrono_tz::Tz::UTC,
        order: Default::default(),
        channels: crate::delivery::targets::Channels::of(&RavenConfig::default()),
    };
    let schedule = crate::cron::store::Schedule::At { at: clock.now() + D::minutes(1) };
    let new = NewJob {
        message: "Take your medication".into(),
        schedule,
        target: Some("cli:local".into()),
        broadcast: vec![],
        topic: None,
    };
    jobs.insert(new, clock.now()).unwrap();
    clock.advance(D::minutes(1));
    let run = engine.cron.as_ref().unwrap().call_async(RunDue).await.unwrap();
    assert_eq!(run.fired.len(), 1);
    assert_eq!(run.fired[0].result.delivered_to, ["cli:local"]);
    assert!(screen.text().contains("Take your medication"), "delivered: {:?}", screen.text());
    // The Sentinel's own nudge on the same thing, an hour later: denied, naming the cron fire.
    clock.advance(D::hours(1));
    let nudge = Nudge {
        action: raven_proto::Action::Nudge,
        session_key: Some("cli:local".into()),
        content: "Remember the medications!".into(),
        priority: raven_proto::Priority::Low,
        topic: None,
        solicited: false,
    };
    let v = engine.policy.call(Check(nudge)).await.unwrap();
    assert!(!v.allow && v.reason.contains("cron"), "{v:?}");
    let after = tracker.summary(clock.now()).unwrap().overall;
    assert_eq!(after, before, "a cron fire is not a Sentinel sample");
    assert_eq!(after.acceptance(), Some(1.0));
    let cron_records: Vec<_> = tracker.records().unwrap().into_iter().filter(|r| r.source == Source::Cron).collect();
    assert_eq!(cron_records.len(), 1, "one dispatched record, for the one target: {cron_records:?}");
    assert!(cron_records[0].job.is_some() && cron_records[0].session.is_some());
    let wake = engine.wake.snapshot();
    assert!(wake.pending().iter().any(|r| r.starts_with("cron:") && r.ends_with("done")), "{:?}", wake.pending());
}

#[actix_rt::test]
async fn cron_targets_resolve_at_fire_time_and_a_broadcast_reaches_each_target() {
    use crate::cron::service::RunDue;
    use crate::cron::store::{Job, Schedule};
    let tmp = tempfile::tempdir().unwrap();
    let dir = DataDir::new(tmp.path());
    let clock = ManualClock::new(Utc.with_ymd_and_hms(2026, 3, 2, 12, 0, 0).unwrap());
    let mut config = RavenConfig::default();
    config.delivery.jsonl_path = "out.jsonl".into();
    // A cli job goes to the forward channel; a bare channel takes the chat of its latest session.
    config.cron.forward_channels = vec!["jsonl".into()];
    let sessions = crate::sessions::SessionStore::new(dir.sessions());
    sessions.append("jsonl", "old", crate::llm::provider::Role::User, "hi", clock.now()).unwrap();
    sessions.append("jsonl", "ann", crate::llm::provider::Role::User, "hi", clock.now()).unwrap();
    // "old" was last written an hour before "ann" (set, not slept: a coarse mtime could tie
    // the two; taken from the file system's own time, which a shifted wall clock does not move).
    let ann_written = std::fs::metadata(dir.sessions().join("jsonl_ann.jsonl")).unwrap().modified().unwrap();
    let an_hour_ago = ann_written - std::time::Duration::from_secs(3600);
    let old = std::fs::File::options().append(true).open(dir.sessions().join("jsonl_old.jsonl")).unwrap();
    old.set_modified(an_hour_ago).unwrap();
    let engine = Engine::start(&dir, &config, clock.shared()).unwrap();
    let job = |id: &str, target: Option<&str>, broadcast: &[&str]| Job {
        id: id.into(),
        message: format!("message of {id}"),
        schedule: Schedule::At { at: clock.now() },
        target: target.map(Into::into),
        broadcast: broadcast.iter().map(|b| b.to_string()).collect(),
        created_at: clock.now(),
        enabled: true,
        topic: Some(id.into()),
        state: Default::default(),
        extra: Default::default(),
    };
    JobsStore::new(dir.jobs())
        .update(|f| {
            f.jobs.push(job("forwarded", Some("cli:local"), &[]));
            f.jobs.push(job("everywhere", None, &["jsonl:bob", "jsonl:carl"]));
            f.jobs.push(job("quiet", None, &[]));
        })
        .unwrap();
    let run = engine.cron.as_ref().unwrap().call_async(RunDue).await.unwrap();
    let to = |id: &str| run.fired.iter().find(|f| f.job_id == id).unwrap().result.delivered_to.clone();
    assert_eq!(to("forwarded"), ["jsonl:ann"], "cli → the forward channel, its latest chat");
    assert_eq!(to("everywhere"), ["jsonl:bob", "jsonl:carl"]);
    assert!(to("quiet").is_empty(), "a silent job tells nobody");
    // The broadcast's turn ran on the job's own channel; a user's conversation got the reminder
    // only, as one proactive assistant line (never as the user's words).
    assert!(dir.sessions().join("cron_everywhere.jsonl").exists());
    let bob = std::fs::read_to_string(dir.sessions().join("jsonl_bob.jsonl")).unwrap();
    let line: crate::sessions::SessionLine = serde_json::from_str(bob.trim()).unwrap();
    assert_eq!(bob.lines().count(), 1, "{bob}");
    assert!(line.proactive && line.role == crate::llm::provider::Role::Assistant, "{line:?}");
    assert_eq!(line.source, Some(crate::feedback::Source::Cron));
    let out = std::fs::read_to_string(dir.root().join("out.jsonl")).unwrap();
    assert_eq!(out.lines().filter(|l| l.contains("message of everywhere")).count(), 2);
}

#[actix_rt::test]
async fn a_heartbeat_at_night_is_held_by_the_gate_and_runs_in_the_day() {
    use crate::heartbeat::{HeartbeatOutcome, HeartbeatTick};
    let tmp = tempfile::tempdir().unwrap();
    let dir = DataDir::new(tmp.path());
    // 03:00 UTC: inside the default quiet hours (23:00-07:00).
    let clock = ManualClock::new(Utc.with_ymd_and_hms(2026, 3, 2, 3, 0, 0).unwrap());
    let screen = Screen::default();
    let engine = cron_engine(&dir, &clock, &screen);
    std::fs::create_dir_all(dir.workspace()).unwrap();
    std::fs::write(dir.heartbeat(), "- [ ] Check the build status\n").unwrap();
    match engine.heartbeat.call_async(HeartbeatTick).await.unwrap() {
        HeartbeatOutcome::Skipped { reason } => assert!(reason.contains("quiet"), "{reason}"),
        other => panic!("ran at 3 a.m.: {other:?}"),
    }
    assert!(screen.text().is_empty(), "nothing reached the user at night");
    clock.set(Utc.with_ymd_and_hms(2026, 3, 2, 10, 0, 0).unwrap());
    match engine.heartbeat.call_async(HeartbeatTick).await.unwrap() {
        HeartbeatOutcome::Ran { delivered_to, .. } => assert_eq!(delivered_to, ["cli:local"]),
        other => panic!("{other:?}"),
    }
    assert!(screen.text().contains("Check the build status"), "{}", screen.text());
}

#[actix_rt::test]
async fn a_hand_written_job_that_cannot_be_scheduled_is_set_aside_and_the_others_fire_on_time() {
    use crate::cron::service::RunDue;
    use crate::cron::store::{Job, JobState, Schedule};
    let tmp = tempfile::tempdir().unwrap();
    let dir = DataDir::new(tmp.path());
    let clock = ManualClock::new(Utc.with_ymd_and_hms(2026, 3, 2, 12, 0, 0).unwrap());
    let screen = Screen::default();
    let engine = cron_engine(&dir, &clock, &screen);
    let jobs = JobsStore::new(dir.jobs());
    let job = |id: &str, every_s: u64| Job {
        id: id.into(),
        message: format!("message of {id}"),
        schedule: Schedule::Every { every_s, anchor: clock.now() },
        target: None,
        broadcast: vec![],
        created_at: clock.now(),
        enabled: true,
        topic: None,
        // As a hand edit leaves it: armed, and due in a second.
        state: JobState { next_run_at: Some(clock.now() + D::seconds(1)), ..JobState::default() },
        extra: Default::default(),
    };
    jobs.update(|f| f.jobs = vec![job("huge", 100_000_000_000_000_000), job("wraps", u64::MAX), job("good", 1)])
        .unwrap();
    let cron = engine.cron.clone().unwrap();
    for _ in 0..5 {
        clock.advance(D::seconds(1));
        let run = cron.call_async(RunDue).await.unwrap();
        let fired: Vec<_> = run.fired.iter().map(|f| f.job_id.as_str()).collect();
        assert_eq!(fired, ["good"], "{:?}", run.error);
    }
    let file = jobs.load().unwrap();
    for bad in &file.jobs[..2] {
        assert!(bad.state.paused.as_ref().is_some_and(|p| p.to_string().contains("over 100 years")), "{:?}", bad.state);
    }
    assert_eq!(file.jobs[2].state.runs, 5);
}
