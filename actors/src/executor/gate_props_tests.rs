//! The one check-and-record, by property: random mixes of decisions (every action, with and
//! without a target), replies that injects ride, settled defers, spawns, outages and outbox
//! retries, through two engines on one data dir and one clock, against one day cap, one hour
//! cap and one dedup window. No limit is ever passed, and every send is recorded in the ledger.

use super::injector::ApplyInjects;
use super::tests::lines;
use crate::clock::{Clock, ManualClock};
use crate::config::RavenConfig;
use crate::data_dir::DataDir;
use crate::delivery::hub::RetryOutbox;
use crate::engine::{Engine, Overrides};
use crate::policy::{FireKind, PolicyState};
use crate::sentinel::{PollDeferred, Tick};
use crate::testkit::doubles::Scripted;
use chrono::{DateTime, Duration, TimeZone, Utc};
use proptest::prelude::*;
use serde_json::json;
use std::rc::Rc;

/// How many random runs CI makes (the name of the test says it too).
const CASES: u32 = 64;
const DAY_CAP: usize = 3;
const HOUR_CAP: usize = 2;
const SPAWN_DAY_CAP: usize = 2;
const DEDUP_MINUTES: i64 = 360;
const TEXTS: [&str; 3] = ["Renew the passport", "Call the bank", "Water the plants"];
const SESSIONS: [&str; 2] = ["jsonl:a", "jsonl:b"];

#[derive(Debug, Clone)]
enum Step {
    /// Engine `engine`'s Planner decides `action` (to `target`, or none) and it ticks.
    Decide {
        engine: usize,
        action: &'static str,
        target: Option<usize>,
        text: usize,
    },
    /// The user writes in a session: its queued injects ride the reply.
    Reply {
        engine: usize,
        session: usize,
    },
    /// Deferred nudges settle, the outbox is retried, running spawns end.
    Settle {
        engine: usize,
    },
    /// The outlet's file cannot be written (true) or can again (false).
    Outage(bool),
    Wait {
        minutes: i64,
    },
}

fn step() -> impl Strategy<Value = Step> {
    let action = prop::sample::select(vec!["nudge", "nudge_inject", "nudge_defer", "spawn_agent"]);
    prop_oneof![
        4 => (0..2usize, action, prop::option::of(0..2usize), 0..TEXTS.len())
            .prop_map(|(engine, action, target, text)| Step::Decide { engine, action, target, text }),
        2 => (0..2usize, 0..2usize).prop_map(|(engine, session)| Step::Reply { engine, session }),
        2 => (0..2usize).prop_map(|engine| Step::Settle { engine }),
        1 => any::<bool>().prop_map(Step::Outage),
        2 => (0..90i64).prop_map(|minutes| Step::Wait { minutes }),
    ]
}

/// One send as the user got it: when, on which quota line, what.
#[derive(Debug, Clone)]
struct Sent {
    at: DateTime<Utc>,
    kind: FireKind,
    text: String,
}

struct World {
    _tmp: tempfile::TempDir,
    dir: DataDir,
    clock: ManualClock,
    engines: Vec<(Engine, Scripted)>,
    sent: Vec<Sent>,
    lines_seen: usize,
}

fn config() -> RavenConfig {
    let mut c = RavenConfig::default();
    c.delivery.jsonl_path = "out/out.jsonl".into();
    c.delivery.default_targets = vec!["jsonl:inbox".into()];
    c.policy.max_per_day = DAY_CAP as u32;
    c.policy.max_per_hour = HOUR_CAP as u32;
    c.policy.spawn_max_per_day = SPAWN_DAY_CAP as u32;
    c.policy.dedup_window_minutes = DEDUP_MINUTES;
    c.policy.session_cooldown_minutes = 0;
    c.agent.subagent_max_iterations = 1;
    c
}

impl World {
    fn new() -> World {
        let tmp = tempfile::tempdir().unwrap();
        let dir = DataDir::new(tmp.path());
        std::fs::create_dir_all(dir.root().join("out")).unwrap();
        // Monday 2026-03-02 10:00 UTC: the run crosses quiet hours and midnight.
        let clock = ManualClock::new(Utc.with_ymd_and_hms(2026, 3, 2, 10, 0, 0).unwrap());
        let engines = (0..2)
            .map(|_| {
                let provider = Scripted::answering(json!({"action": "skip", "reason": "r", "proactivity_score": 0}));
                let o = Overrides { provider: Some(Rc::new(provider.clone())), ..Overrides::default() };
                (Engine::start_with(&dir, &config(), clock.shared(), o).unwrap(), provider)
            })
            .collect();
        World { _tmp: tmp, dir, clock, engines, sent: Vec::new(), lines_seen: 0 }
    }

    async fn run(&mut self, step: &Step) {
        match *step {
            Step::Decide { engine, action, target, text } => {
                let (e, provider) = &self.engines[engine];
                provider.set(Ok(json!({
                    "action": action, "reason": "r", "priority": "low", "proactivity_score": 0.8,
                    "nudge_message": TEXTS[text], "spawn_task": TEXTS[text],
                    "defer_condition": "the thread settles", "target_session": target.map(|t| SESSIONS[t]),
                })));
                e.runner.call_async(Tick).await.unwrap();
            }
            Step::Reply { engine, session } => {
                let reply = ApplyInjects {
                    session: SESSIONS[session].into(),
                    content: "Sure.".into(),
                    origin: raven_proto::Origin::User,
                };
                let (_, riding) = self.engines[engine].0.injector.call_async(reply).await.unwrap();
                let at = self.clock.now();
                self.sent.extend(riding.into_iter().map(|p| Sent { at, kind: FireKind::Nudge, text: p.message }));
            }
            Step::Settle { engine } => {
                let e = &self.engines[engine].0;
                e.runner.call_async(PollDeferred).await.unwrap();
                e.hub.call_async(RetryOutbox).await.unwrap().ok();
                for (e, _) in &self.engines {
                    assert!(e.spawns.settle(std::time::Duration::from_secs(10)).await.is_some());
                }
            }
            Step::Outage(down) => self.outage(down),
            Step::Wait { minutes } => self.clock.advance(Duration::minutes(minutes)),
        }
        self.collect_outlet();
    }

    /// The outlet's dir is a file while the channel is down.
    fn outage(&self, down: bool) {
        let (out, aside) = (self.dir.root().join("out"), self.dir.root().join("out.aside"));
        match (down, aside.exists()) {
            (true, false) => {
                std::fs::rename(&out, &aside).unwrap();
                std::fs::write(&out, "down").unwrap();
            }
            (false, true) => {
                std::fs::remove_file(&out).unwrap();
                std::fs::rename(&aside, &out).unwrap();
            }
            _ => {}
        }
    }

    /// What reached the outlet since the last look (a spawn's result reads as a stopped run).
    fn collect_outlet(&mut self) {
        let file = match self.dir.root().join("out.aside").exists() {
            true => self.dir.root().join("out.aside/out.jsonl"),
            false => self.dir.root().join("out/out.jsonl"),
        };
        let all = lines(&file);
        let at = self.clock.now();
        for l in &all[self.lines_seen.min(all.len())..] {
            let text = l["content"].as_str().unwrap_or_default().to_owned();
            let kind = if text.starts_with("(stopped") { FireKind::Spawn } else { FireKind::Nudge };
            self.sent.push(Sent { at, kind, text });
        }
        self.lines_seen = all.len();
    }

    fn ledger(&self) -> PolicyState {
        let store = crate::store::owners::open(&self.dir, crate::store::owners::Owner::Policy).unwrap();
        store.read::<PolicyState>("policy").unwrap().0
    }
}

/// The limits, over everything sent so far.
fn check(sent: &[Sent], ledger: &PolicyState) -> Result<(), TestCaseError> {
    let of = |kind: FireKind| sent.iter().filter(move |s| s.kind == kind);
    for s in sent {
        let day = of(s.kind).filter(|o| o.at.date_naive() == s.at.date_naive()).count();
        let cap = if s.kind == FireKind::Spawn { SPAWN_DAY_CAP } else { DAY_CAP };
        prop_assert!(day <= cap, "{day} sends on {} past the cap of {cap}: {sent:?}", s.at.date_naive());
        if s.kind == FireKind::Nudge {
            let hour = of(FireKind::Nudge).filter(|o| o.at <= s.at && s.at - o.at < Duration::hours(1)).count();
            prop_assert!(hour <= HOUR_CAP, "{hour} sends in the hour to {}: {sent:?}", s.at);
        }
        // A spawn is deduplicated on its task; its result's words are the micro-agent's.
        if s.kind == FireKind::Nudge {
            let window = |o: &&Sent| o.at >= s.at && o.at - s.at < Duration::minutes(DEDUP_MINUTES);
            let again = of(FireKind::Nudge).filter(|o| o.text == s.text).filter(window).count();
            prop_assert_eq!(again, 1, "{:?} twice inside the dedup window: {:?}", s.text, sent);
        }
    }
    for kind in [FireKind::Nudge, FireKind::Spawn] {
        let recorded = ledger.fires.iter().filter(|f| f.kind == kind).count();
        prop_assert_eq!(recorded, of(kind).count(), "{:?}: sends and records differ: {:?}", kind, sent);
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: CASES, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn two_engines_on_one_data_dir_keep_every_limit_and_record_every_send_over_64_random_runs(
        steps in prop::collection::vec(step(), 1..40)
    ) {
        let outcome: Result<(), TestCaseError> = actix_rt::System::new().block_on(async move {
            let mut w = World::new();
            for s in &steps {
                w.run(s).await;
            }
            w.run(&Step::Outage(false)).await;
            w.run(&Step::Settle { engine: 0 }).await;
            check(&w.sent, &w.ledger())
        });
        outcome?;
    }
}
