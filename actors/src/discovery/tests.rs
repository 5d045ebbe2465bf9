//! A full day of task discovery on the manual clock, through the wired engine: the menu goes
//! out once; "/pick 9" gets a clear answer and runs nothing; "2" runs option 2; free text
//! reaches the agent; an expired menu consumes nothing; a superseded menu's pick is refused;
//! a confirm-step option runs only after "yes".

use crate::clock::{Clock, ManualClock};
use crate::config::RavenConfig;
use crate::cron::store::JobsStore;
use crate::data_dir::DataDir;
use crate::delivery::outlets::CliOutlet;
use crate::engine::{Engine, Overrides};
use crate::sentinel::triggers::TriggerStore;
use crate::sentinel::{DrainTriggers, Tick};
use crate::spine::TurnOutcome;
use crate::testkit::doubles::Screen;
use chrono::{Duration, TimeZone, Utc};
use raven_proto::{BusyPolicy, Origin, TurnRequest};
use std::sync::Arc;

struct Day {
    _tmp: tempfile::TempDir,
    dir: DataDir,
    clock: ManualClock,
    screen: Screen,
    engine: Engine,
    n: std::cell::Cell<u32>,
}

impl Day {
    fn new() -> Day {
        let tmp = tempfile::tempdir().unwrap();
        let dir = DataDir::new(tmp.path());
        dir.ensure().unwrap();
        std::fs::write(
            dir.memory(),
            "- [ ] Call the bank due: 2026-03-02 17:00\n- [ ] Pay the rent due: 2026-03-02 20:00\n",
        )
        .unwrap();
        std::fs::write(dir.heartbeat(), "- [ ] Draft the quarterly report\n").unwrap();
        let clock = ManualClock::new(Utc.with_ymd_and_hms(2026, 3, 2, 0, 0, 0).unwrap());
        let screen = Screen::default();
        let o =
            Overrides { outlets: vec![Arc::new(CliOutlet::to_writer(Box::new(screen.clone())))], ..Default::default() };
        let mut config = RavenConfig::default();
        config.general.timezone = chrono_tz::Tz::UTC;
        let engine = Engine::start_with(&dir, &config, clock.shared(), o).unwrap();
        Day { _tmp: tmp, dir, clock, screen, engine, n: Default::default() }
    }

    fn menus_sent(&self) -> usize {
        self.screen.text().matches("(menu m").count()
    }

    async fn say(&self, text: &str) -> String {
        self.n.set(self.n.get() + 1);
        let id = format!("u{}", self.n.get());
        let req =
            TurnRequest::new(id, Origin::User, "cli:local", "cli", "local", text, BusyPolicy::Append, self.clock.now());
        let (_, rx) = self.engine.scheduler.submit_wait(req);
        match rx.await.unwrap() {
            TurnOutcome::Replied(t) => t,
            other => panic!("{other:?}"),
        }
    }

    async fn discover_now(&self) {
        TriggerStore::in_dir(&self.dir).unwrap().request("test", self.clock.now()).unwrap();
        assert_eq!(self.engine.runner.call_async(DrainTriggers).await.unwrap().unwrap(), 1);
    }
}

const NO_MODEL: &str = "No language model is configured";

#[actix_rt::test]
async fn a_day_of_menus_picks_and_replies() {
    let day = Day::new();
    // Every half hour until 10:00: the menu goes out at 09:00, once.
    for _ in 0..20 {
        day.engine.runner.call_async(Tick).await.unwrap();
        day.clock.advance(Duration::minutes(30));
    }
    assert_eq!(day.menus_sent(), 1, "{}", day.screen.text());
    let screen = day.screen.text();
    assert!(screen.contains("1. Remind me of “Call the bank” an hour before —"), "{screen}");
    assert!(screen.contains("3. Work on “Draft the quarterly report” —"), "{screen}");

    assert_eq!(day.say("/pick 9").await, "There is no option 9: pick 1–3 (menu m1).");
    assert!(JobsStore::new(day.dir.jobs()).load().unwrap().jobs.is_empty(), "nothing ran");
    let picked = day.say("2").await;
    assert!(picked.contains("scheduled job"), "{picked}");
    let jobs = JobsStore::new(day.dir.jobs()).load().unwrap().jobs;
    assert_eq!(jobs.len(), 1);
    assert_eq!(jobs[0].message, "Pay the rent is due in an hour", "option 2's action ran");
    assert!(day.say("how are you?").await.contains(NO_MODEL), "free text reaches the agent");
    // The rest of the day: no second menu.
    for _ in 20..48 {
        day.engine.runner.call_async(Tick).await.unwrap();
        day.clock.advance(Duration::minutes(30));
    }
    assert_eq!(day.menus_sent(), 1);

    // Next day, 10:00, an operator's run: a new menu, which expires after its TTL (4 h).
    day.clock.set(Utc.with_ymd_and_hms(2026, 3, 3, 10, 0, 0).unwrap());
    let memory = |extra: &str| {
        let text = format!("- [ ] Call the bank due: 2026-03-03 17:00\n{extra}");
        std::fs::write(day.dir.memory(), text).unwrap();
    };
    memory("");
    day.discover_now().await;
    assert_eq!(day.menus_sent(), 2, "{}", day.screen.text());
    day.clock.advance(Duration::hours(4));
    assert!(day.say("1").await.contains(NO_MODEL), "an expired menu consumes nothing");

    // Two runs an hour apart, with something new each time: the second menu supersedes the
    // first, whose picks are refused.
    day.clock.advance(Duration::hours(1));
    memory("- [ ] Book the flights due: 2026-03-03 19:00\n");
    day.discover_now().await;
    day.clock.advance(Duration::hours(1));
    memory("- [ ] Book the flights due: 2026-03-03 19:00\n- [ ] Renew the passport due: 2026-03-03 21:00\n");
    day.discover_now().await;
    assert_eq!(day.menus_sent(), 4, "{}", day.screen.text());
    assert_eq!(day.say("/pick m3 1").await, "Menu m3 was replaced by menu m4; pick from that one.");

    // Option 3 is a spawn behind a confirm step: nothing runs before "yes".
    let subagent_ran = || {
        std::fs::read_dir(day.dir.sessions())
            .unwrap()
            .any(|e| e.unwrap().file_name().to_string_lossy().starts_with("subagent_"))
    };
    let ask = day.say("3").await;
    assert!(ask.contains("shall I go ahead?"), "{ask}");
    actix_rt::time::sleep(std::time::Duration::from_millis(20)).await;
    assert!(!subagent_ran(), "nothing ran before yes");
    assert!(day.say("yes").await.starts_with("On it: “Work on “Draft the quarterly report””"));
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    while !subagent_ran() && std::time::Instant::now() < deadline {
        actix_rt::time::sleep(std::time::Duration::from_millis(2)).await;
    }
    assert!(subagent_ran(), "the spawn ran after yes");
}

#[actix_rt::test]
async fn a_picked_reply_goes_out_through_the_injector_and_is_recorded() {
    use crate::discovery::{Choice, ChoiceAction, PendingDecision, PendingDecisionStore, PendingState};
    let day = Day::new();
    day.clock.set(Utc.with_ymd_and_hms(2026, 3, 2, 12, 0, 0).unwrap());
    let store =
        PendingDecisionStore::new(crate::store::owners::open(&day.dir, crate::store::owners::Owner::Menus).unwrap());
    let choice = |title: &str, text: &str| Choice {
        title: title.into(),
        reason: "r".into(),
        action: ChoiceAction::Reply { text: text.into() },
        confirm: false,
    };
    let menu = PendingDecision {
        id: String::new(),
        session: "cli:local".into(),
        question: "q".into(),
        options: vec![choice("Tips for focus", "Try 25-minute blocks with a short break"), choice("b", "b")],
        created_at: day.clock.now(),
        expires_at: day.clock.now() + Duration::hours(1),
        state: PendingState::Open,
    };
    store.offer(menu, day.clock.now()).unwrap();
    let answer = day.say("1").await;
    assert_eq!(answer, "“Tips for focus”:\n\n— Try 25-minute blocks with a short break");
    let snap = day.engine.policy.call(crate::policy::Snapshot).await.unwrap();
    assert_eq!(snap.state.remaining_today, 7, "one fire charged: {snap:?}");
    assert_eq!(snap.fire_history.values().map(|h| h.fired).sum::<u32>(), 1, "{snap:?}");
}

#[test]
fn the_llm_s_options_are_validated_and_the_rules_derive_theirs() {
    use crate::discovery::discoverer::{parse_options, rules_options};
    use crate::discovery::ChoiceAction;
    let ok = serde_json::json!({"options": [
        {"title": "Summarise the week", "reason": "Friday", "kind": "spawn", "task": "summarise", "confirm": true},
        {"title": "A tip", "reason": "", "kind": "reply", "text": "Drink water"}]});
    let got = parse_options(&ok).unwrap();
    assert_eq!(got[0].action, ChoiceAction::Spawn { task: "summarise".into() });
    assert!(got[0].confirm && !got[1].confirm);
    for bad in [
        serde_json::json!({"options": "x"}),
        serde_json::json!({"options": [{"title": "t", "kind": "reply"}]}),
        serde_json::json!({"options": [{"title": "t", "kind": "email"}]}),
    ] {
        assert!(parse_options(&bad).is_err(), "{bad}");
    }
    let now = Utc.with_ymd_and_hms(2026, 3, 2, 9, 0, 0).unwrap();
    let memory = "- [ ] Call the bank due: 2026-03-02 09:30\n- [ ] Pay the rent due: 2026-03-02 20:00\n";
    let options = rules_options(
        memory,
        "- [x] done\n- [ ] Draft the report\n",
        (now, chrono_tz::Tz::UTC, Default::default()),
        crate::time::Language::English,
    );
    let titles: Vec<&str> = options.iter().map(|o| o.title.as_str()).collect();
    // The bank is due within the hour: too late for an hour-before reminder.
    assert_eq!(titles, ["Remind me of “Pay the rent” an hour before", "Work on “Draft the report”"]);
}

/// Offers a one-option menu on `cli:local` now; its id.
fn offer(day: &Day, title: &str, action: crate::discovery::ChoiceAction) -> String {
    use crate::discovery::{Choice, PendingDecision, PendingDecisionStore, PendingState};
    let store =
        PendingDecisionStore::new(crate::store::owners::open(&day.dir, crate::store::owners::Owner::Menus).unwrap());
    let option = Choice { title: title.into(), reason: "r".into(), action, confirm: false };
    let menu = PendingDecision {
        id: String::new(),
        session: "cli:local".into(),
        question: "q".into(),
        options: vec![option.clone(), Choice { title: "other".into(), ..option }],
        created_at: day.clock.now(),
        expires_at: day.clock.now() + Duration::hours(1),
        state: PendingState::Open,
    };
    store.offer(menu, day.clock.now()).unwrap().id
}

#[actix_rt::test]
async fn the_user_s_pick_wins_over_quotas_and_quiet_hours_and_is_recorded() {
    use crate::discovery::ChoiceAction;
    use crate::policy::{Nudge, Reservation, Reserve, Snapshot};
    let day = Day::new();
    day.clock.set(Utc.with_ymd_and_hms(2026, 3, 2, 12, 0, 0).unwrap());
    // The hour's quota is spent by two nudges.
    for (session, text, topic) in [("cli:a", "stretch your legs", "legs"), ("cli:b", "drink some water", "water")] {
        let n = Nudge {
            action: raven_proto::Action::Nudge,
            session_key: Some(session.into()),
            content: text.into(),
            priority: raven_proto::Priority::Low,
            topic: Some(topic.into()),
            solicited: false,
        };
        assert!(matches!(day.engine.policy.call_async(Reserve(n)).await.unwrap(), Ok(Reservation::Held(..))));
    }
    offer(&day, "Tips for focus", ChoiceAction::Reply { text: "Try 25-minute blocks".into() });
    let answer = day.say("1").await;
    assert_eq!(answer, "“Tips for focus”:\n\n— Try 25-minute blocks", "the pick ran");
    // Inside quiet hours too.
    day.clock.set(Utc.with_ymd_and_hms(2026, 3, 2, 23, 30, 0).unwrap());
    offer(&day, "A tip for sleep", ChoiceAction::Reply { text: "Dim the lights".into() });
    assert_eq!(day.say("1").await, "“A tip for sleep”:\n\n— Dim the lights");
    let snap = day.engine.policy.call(Snapshot).await.unwrap();
    assert_eq!(snap.fire_history.values().map(|h| h.fired).sum::<u32>(), 4, "each pick is a fire: {snap:?}");
}

#[actix_rt::test]
async fn the_same_pick_twice_within_the_dedup_window_is_refused_at_layer_10_and_its_menu_stays_open() {
    use crate::discovery::ChoiceAction;
    let day = Day::new();
    day.clock.set(Utc.with_ymd_and_hms(2026, 3, 2, 12, 0, 0).unwrap());
    let tip = || ChoiceAction::Reply { text: "Try 25-minute blocks".into() };
    offer(&day, "Tips for focus", tip());
    assert_eq!(day.say("1").await, "“Tips for focus”:\n\n— Try 25-minute blocks");
    day.clock.set(Utc.with_ymd_and_hms(2026, 3, 2, 12, 10, 0).unwrap());
    let id = offer(&day, "Tips for focus", tip());
    let again = day.say("1").await;
    assert!(again.starts_with("Not now: the same content was sent at"), "layer 10 holds: {again}");
    assert!(again.ends_with(&format!("(menu {id} is still open)")), "{again}");
    // Still open: the next pick is routed to the menu, not to the agent.
    let other = day.say("2").await;
    assert!(other.starts_with("Not now: the same content") && other.contains(&id), "{other}");
}

#[actix_rt::test]
async fn a_pick_that_does_not_run_leaves_its_menu_open_and_says_why() {
    use crate::discovery::ChoiceAction;
    let day = Day::new();
    day.clock.set(Utc.with_ymd_and_hms(2026, 3, 2, 12, 0, 0).unwrap());
    let tool = ChoiceAction::Tool { name: "no_such_tool".into(), args: serde_json::json!({}) };
    let id = offer(&day, "Check the weather", tool);
    let answer = day.say("1").await;
    assert!(answer.contains("no tool named no_such_tool") && answer.contains(&format!("menu {id} is still open")));
    // Still open: the next pick is routed to the menu, not to the agent.
    let again = day.say("2").await;
    assert!(again.contains("no tool named no_such_tool"), "{again}");
}

#[test]
fn a_reminder_option_says_when_its_item_is_in_plain_words() {
    use crate::context::deadlines::Deadline;
    let tz = chrono_tz::Asia::Shanghai;
    let at = |d: u32, h: u32| tz.with_ymd_and_hms(2026, 12, d, h, 0, 0).unwrap().with_timezone(&chrono::Utc);
    let item = Deadline::plain;
    let now = at(17, 9);
    let reason =
        |d: &Deadline| super::discoverer::reminder_option(d, now, tz, crate::time::Language::English).unwrap().reason;
    assert_eq!(reason(&item("小宝 三岁体检", at(20, 23), true, true)), "on Sun 20 Dec");
    assert_eq!(reason(&item("付保姆工资 5000", at(20, 23), true, false)), "due on Sun 20 Dec");
    assert_eq!(reason(&item("Dentist", at(18, 10), false, true)), "tomorrow at 10:00");
}

#[test]
fn the_rules_menu_is_in_chinese_for_notes_written_in_chinese() {
    let tz = chrono_tz::Asia::Shanghai;
    let now = tz.with_ymd_and_hms(2026, 12, 17, 9, 0, 0).unwrap().with_timezone(&chrono::Utc);
    let memory = "# 备忘\n每月20号 付保姆工资 5000\n12月18日上午10点 牙医\n";
    let zh = crate::time::Language::Chinese;
    let options = super::discoverer::rules_options(memory, "- [ ] 整理照片\n", (now, tz, Default::default()), zh);
    let shown: Vec<(&str, &str)> = options.iter().map(|o| (o.title.as_str(), o.reason.as_str())).collect();
    assert_eq!(
        shown,
        [
            ("提前一小时提醒「牙医」", "明天 10:00"),
            ("12月20日（周日）早上提醒「付保姆工资 5000」", "12月20日（周日）到期"),
            ("处理「整理照片」", "HEARTBEAT.md 中未完成"),
        ]
    );
    let super::pending::ChoiceAction::Tool { args, .. } = &options[1].action else { panic!("{:?}", options[1]) };
    assert_eq!(args["message"], "提醒：「付保姆工资 5000」今天到期");
    let menu = crate::executor::dispatcher::render_menu("今天有什么我可以帮你分担的吗？", &[], zh);
    assert!(menu.ends_with("回复数字即可（或 /pick N）。"), "{menu}");
}
