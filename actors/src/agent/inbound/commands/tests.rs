use super::*;
use crate::feedback::{Dispatch, Source};
use chrono::TimeZone;
use raven_proto::Priority;

fn t0() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 3, 2, 10, 0, 0).unwrap()
}

struct Rig {
    _dir: tempfile::TempDir,
    tracker: NudgeFeedbackTracker,
    jobs: JobsStore,
}

fn rig() -> Rig {
    let dir = tempfile::tempdir().unwrap();
    let tracker = NudgeFeedbackTracker::new(dir.path().join("fb.jsonl"), Default::default(), Tz::UTC);
    let jobs = JobsStore::new(dir.path().join("jobs.json"));
    Rig { _dir: dir, tracker, jobs }
}

impl Rig {
    fn run(&self, text: &str, at: DateTime<Utc>) -> String {
        self.run_in("cli:1", text, at)
    }

    fn run_in(&self, session: &str, text: &str, at: DateTime<Utc>) -> String {
        self.run_as(crate::time::Language::English, session, text, at)
    }

    fn run_as(&self, lang: crate::time::Language, session: &str, text: &str, at: DateTime<Utc>) -> String {
        let ctx = CommandCtx {
            tracker: &self.tracker,
            jobs: Some(&self.jobs),
            verdicts: None,
            session: Some(session),
            tz: Tz::UTC,
            now: at,
            lang,
        };
        ctx.apply(&parse(text).expect("a command").unwrap()).unwrap()
    }

    fn sent(&self, d: Dispatch) {
        self.sent_in("cli:1", d);
    }

    fn sent_in(&self, session: &str, d: Dispatch) {
        self.tracker.record_dispatched(&d, Some(session), true, t0()).unwrap();
    }
}

#[test]
fn only_the_three_commands_are_recognised_and_a_bad_snooze_is_refused() {
    assert_eq!(parse("/ok").unwrap().unwrap(), FeedbackCommand::Ok(None));
    assert_eq!(parse(" /STOP Water ").unwrap().unwrap(), FeedbackCommand::Stop(Some("water".into())));
    assert_eq!(parse("/snooze 2h").unwrap().unwrap(), FeedbackCommand::Snooze(Some(Duration::hours(2))));
    assert_eq!(parse("/snooze off").unwrap().unwrap(), FeedbackCommand::Snooze(None));
    assert!(parse("/snooze whenever").unwrap().is_err());
    assert!(parse("/snooze").unwrap().is_err());
    assert_eq!(parse("/later").unwrap().unwrap(), FeedbackCommand::Later(None));
    assert!(parse("stop it").is_none() && parse("/status").is_none() && parse("ok").is_none());
}

#[test]
fn with_nothing_to_judge_a_command_says_so_and_records_nothing() {
    let r = rig();
    assert!(r.run("/stop", t0()).starts_with("Nothing to give feedback on"));
    assert!(r.run("/ok", t0()).starts_with("Nothing to give feedback on"));
    assert!(r.tracker.records().unwrap().is_empty());
}

#[test]
fn stop_dismisses_the_latest_message_and_mutes_its_topic_until_ok() {
    let r = rig();
    r.sent(Dispatch::new("n-1", "water", Priority::Low, Source::Sentinel));
    let said = r.run("/stop", t0() + Duration::minutes(5));
    assert!(said.contains("dismissed") && said.contains("Muted topic `water`") && said.contains("/ok water"), "{said}");
    let s = r.tracker.summary(t0() + Duration::hours(1)).unwrap();
    assert!(s.muted_until("water", t0() + Duration::days(29)).is_some());
    assert_eq!(s.last_dismissal, Some(t0() + Duration::minutes(5)));
    let said = r.run("/ok water", t0() + Duration::hours(2));
    assert!(said.starts_with("Unmuted topic `water`"), "{said}");
    assert!(r.tracker.summary(t0() + Duration::hours(3)).unwrap().muted.is_empty());
}

#[test]
fn ok_accepts_and_says_how_to_undo() {
    let r = rig();
    r.sent(Dispatch::new("n-1", "water", Priority::Low, Source::Sentinel));
    let said = r.run("/ok", t0() + Duration::minutes(5));
    assert!(said.contains("accepted") && said.contains(&format!("raven feedback {} neutral", short_id("n-1"))));
    assert_eq!(r.tracker.summary(t0() + Duration::hours(1)).unwrap().overall.accepted, 1);
}

#[test]
fn stop_on_a_reminder_pauses_its_job_and_rates_nothing() {
    let r = rig();
    let job = crate::cron::store::Job {
        id: "water".into(),
        message: "drink water".into(),
        schedule: crate::cron::store::Schedule::Every { every_s: 3600, anchor: t0() },
        target: Some("cli:1".into()),
        broadcast: Vec::new(),
        created_at: t0(),
        enabled: true,
        topic: None,
        state: Default::default(),
        extra: Default::default(),
    };
    r.jobs.update(|f| f.jobs.push(job)).unwrap();
    r.sent(Dispatch {
        job: Some("water".into()),
        ..Dispatch::new("cron-water-1", "water", Priority::Low, Source::Cron)
    });
    let said = r.run("/stop", t0() + Duration::minutes(1));
    assert!(said.contains("raven cron resume water"), "{said}");
    assert_eq!(
        r.jobs.load().unwrap().jobs[0].state.paused.as_ref().map(ToString::to_string).as_deref(),
        Some("paused by /stop")
    );
    let s = r.tracker.summary(t0() + Duration::hours(1)).unwrap();
    assert_eq!((s.overall.samples(), s.muted.len()), (0, 0), "a reminder the user wrote is not rated");
}

#[test]
fn snooze_holds_proactive_messages_and_off_ends_it() {
    let r = rig();
    let said = r.run("/snooze 2h", t0());
    assert!(said.contains("12:00") && said.contains("/snooze off"), "{said}");
    assert_eq!(r.tracker.summary(t0()).unwrap().snoozed(t0()), Some(t0() + Duration::hours(2)));
    r.run("/snooze off", t0() + Duration::minutes(30));
    assert_eq!(r.tracker.summary(t0() + Duration::minutes(31)).unwrap().snoozed_until, None);
}

#[test]
fn after_a_nudge_and_then_a_cron_reminder_ok_and_stop_mean_the_nudge() {
    let r = rig();
    let nudge = Dispatch::new("n-1", "parcel", Priority::Low, Source::Sentinel);
    r.tracker.record_dispatched(&nudge, Some("cli:1"), true, t0()).unwrap();
    let reminder =
        Dispatch { job: Some("a5fst0".into()), ..Dispatch::new("cron-a5fst0-1", "water", Priority::Low, Source::Cron) };
    r.tracker.record_dispatched(&reminder, Some("cli:1"), true, t0() + Duration::minutes(5)).unwrap();
    let said = r.run("/stop", t0() + Duration::minutes(6));
    assert!(said.contains("Muted topic `parcel`"), "{said}");
    assert!(r.tracker.summary(t0() + Duration::minutes(7)).unwrap().muted.contains_key("parcel"));
    let nudge = Dispatch::new("n-2", "bank", Priority::Low, Source::Sentinel);
    r.tracker.record_dispatched(&nudge, Some("cli:1"), true, t0() + Duration::minutes(8)).unwrap();
    let reminder =
        Dispatch { job: Some("a5fst0".into()), ..Dispatch::new("cron-a5fst0-2", "water", Priority::Low, Source::Cron) };
    r.tracker.record_dispatched(&reminder, Some("cli:1"), true, t0() + Duration::minutes(9)).unwrap();
    let said = r.run("/ok", t0() + Duration::minutes(10));
    assert!(said.contains("Recorded: accepted") && said.contains("topic `bank`"), "{said}");
}

#[test]
fn a_command_aimed_at_a_message_by_its_short_id_means_that_one_not_the_latest() {
    let r = rig();
    r.sent(Dispatch::new("n-1", "water", Priority::Low, Source::Sentinel));
    r.sent(Dispatch::new("n-2", "bank", Priority::Low, Source::Sentinel));
    let first = short_id("n-1");
    let said = r.run(&format!("/stop [{first}]"), t0() + Duration::minutes(5));
    assert!(said.contains(&format!("dismissed [{first}]")) && said.contains("Muted topic `water`"), "{said}");
    let s = r.tracker.summary(t0() + Duration::minutes(6)).unwrap();
    assert!(s.muted.contains_key("water") && !s.muted.contains_key("bank"), "{:?}", s.muted);
    let said = r.run(&format!("/ok [{}]", short_id("n-2")), t0() + Duration::minutes(7));
    assert!(said.contains("accepted") && said.contains("bank"), "{said}");

    let mut cron = Dispatch::new("cron-k3x9p2-1", "tea", Priority::Low, Source::Cron);
    cron.job = Some("k3x9p2".into());
    r.sent(cron);
    assert!(r
        .run(&format!("/ok [{}]", short_id("cron-k3x9p2-1")), t0())
        .starts_with("That was a reminder you scheduled"));
    let ctx = CommandCtx {
        tracker: &r.tracker,
        jobs: Some(&r.jobs),
        verdicts: None,
        session: Some("cli:1"),
        tz: Tz::UTC,
        now: t0(),
        lang: crate::time::Language::English,
    };
    let unknown = ctx.apply(&parse("/stop [abcdef]").unwrap().unwrap()).unwrap_err().to_string();
    assert!(unknown.contains("abcdef"), "{unknown}");
}

#[test]
fn later_puts_the_latest_message_off_as_a_job_and_rates_nothing() {
    let r = rig();
    let dir = crate::data_dir::DataDir::new(r._dir.path());
    let verdicts = Verdicts::of(&dir, &crate::config::RavenConfig::default());
    r.sent(Dispatch::new("n-1", "water", Priority::Low, Source::Sentinel));
    let now = t0() + Duration::minutes(5);
    let ctx = CommandCtx {
        tracker: &r.tracker,
        jobs: Some(&r.jobs),
        verdicts: Some(&verdicts),
        session: Some("cli:1"),
        tz: Tz::UTC,
        now,
        lang: crate::time::Language::English,
    };
    let said = ctx.apply(&parse("/later").unwrap().unwrap()).unwrap();
    assert!(said.starts_with("Later, then: I'll send it again at ") && said.contains("11:05 (job "), "{said}");
    let last = r.tracker.records().unwrap().pop().unwrap();
    assert_eq!(last.event, Lifecycle::Later, "{last:?}");
    let jobs = std::fs::read_to_string(dir.jobs()).unwrap();
    assert!(jobs.contains("water") && jobs.contains("cli:1"), "{jobs}");
    // A cron reminder can be put off too.
    r.sent(Dispatch { job: Some("tea".into()), ..Dispatch::new("cron-tea-1", "tea", Priority::Low, Source::Cron) });
    let again = ctx.apply(&parse("/later").unwrap().unwrap()).unwrap();
    assert!(again.starts_with("Later, then: I'll send it again at "), "{again}");
    assert_eq!(r.tracker.records().unwrap().last().unwrap().event, Lifecycle::Later);
    // Without the jobs (`raven feedback`), it says where later is given.
    let ctx = CommandCtx { verdicts: None, ..ctx };
    assert!(ctx.apply(&FeedbackCommand::Later(None)).unwrap().contains("raven feedback <id> later"));
}

/// In a chat the answers name chat commands, never a command line, and no backticks (a chat
/// shows them as they are).
#[test]
fn in_a_chat_the_answers_speak_chat() {
    let r = rig();
    let chat = "telegram:42";
    r.sent_in(chat, Dispatch::new("n-1", "water", Priority::Low, Source::Sentinel));
    let ok = r.run_in(chat, "/ok", t0() + Duration::minutes(5));
    r.sent_in(chat, Dispatch::new("n-2", "rent", Priority::Low, Source::Sentinel));
    let stop = r.run_in(chat, "/stop", t0() + Duration::minutes(6));
    assert!(stop.contains("Muted topic “rent”") && stop.contains("/ok rent"), "{stop}");
    let unmute = r.run_in(chat, "/ok rent", t0() + Duration::minutes(7));
    assert!(unmute.starts_with("Unmuted topic “rent”"), "{unmute}");
    for said in [&ok, &stop, &unmute] {
        assert!(!said.contains('`') && !said.contains("raven "), "{said}");
    }
}

/// A Chinese-speaking user's chat gets the answers in Chinese; the terminal keeps English (it
/// names commands).
#[test]
fn in_a_chinese_chat_the_answers_are_in_chinese() {
    use crate::time::Language::Chinese;
    let r = rig();
    let chat = "telegram:42";
    r.sent_in(chat, Dispatch::new("n-1", "水", Priority::Low, Source::Sentinel));
    assert_eq!(
        r.run_as(Chinese, chat, "/ok", t0() + Duration::minutes(5)),
        format!("已记录：有用 [{}]（话题「水」）。谢谢！", short_id("n-1"))
    );
    r.sent_in(chat, Dispatch::new("n-2", "房租", Priority::Low, Source::Sentinel));
    let stop = r.run_as(Chinese, chat, "/stop", t0() + Duration::minutes(6));
    assert!(
        stop.starts_with("已记录：不要了") && stop.contains("话题「房租」静音到") && stop.contains("/ok 房租"),
        "{stop}"
    );
    let snooze = r.run_as(Chinese, chat, "/snooze 2h", t0() + Duration::minutes(7));
    assert!(snooze.starts_with("好的：") && snooze.contains("/snooze off"), "{snooze}");
    assert!(r.run_as(Chinese, chat, "/snooze off", t0() + Duration::minutes(8)).starts_with("免打扰结束了"));
    assert!(r.run_as(Chinese, "telegram:9", "/ok", t0()).starts_with("这里没有可以评价的消息"));
    assert!(r.run_as(Chinese, "cli:1", "/ok", t0()).starts_with("Nothing to give feedback on"), "a terminal");
}

/// `/stop 2` after a morning brief means its item 2 (not the brief, not a topic "2"), and
/// mutes that item's topic; a number with no such item in this conversation says so.
#[test]
fn a_number_names_an_item_of_the_latest_morning_brief_here() {
    let r = rig();
    let brief = crate::context::brief::TOPIC;
    r.sent(Dispatch::new("n-9", brief, Priority::Medium, Source::Sentinel));
    r.sent(Dispatch::new("n-9.1", "bank", Priority::Medium, Source::Sentinel));
    r.sent(Dispatch::new("n-9.2", "rent", Priority::Medium, Source::Sentinel));
    let said = r.run("/stop 2", t0() + Duration::minutes(5));
    assert!(said.contains(&format!("[{}]", short_id("n-9.2"))) && said.contains("Muted topic `rent`"), "{said}");
    let refused = |session: &str, text: &str| {
        let ctx = CommandCtx {
            tracker: &r.tracker,
            jobs: None,
            verdicts: None,
            session: Some(session),
            tz: Tz::UTC,
            now: t0(),
            lang: crate::time::Language::English,
        };
        ctx.apply(&parse(text).unwrap().unwrap()).unwrap_err().to_string()
    };
    for (session, text) in [("cli:1", "/ok 3"), ("telegram:7", "/ok 1")] {
        let err = refused(session, text);
        assert!(err.contains("no item") && err.contains("in the last morning brief here"), "{session} {text}: {err}");
    }
}

/// `/earlier 1` on the brief's rent (told three days ahead, a payment): a neutral verdict that
/// counts for the kind, and says so; an item told by no kind has nothing to move.
#[test]
fn earlier_on_an_item_told_by_its_kind_lengthens_that_kind() {
    let r = rig();
    let chat = "telegram:42";
    let brief = Dispatch::new("n-9", crate::context::brief::TOPIC, Priority::Medium, Source::Sentinel);
    r.sent_in(chat, brief.clone());
    let item = |n: usize, topic: &str, kind: Option<&str>| crate::feedback::BriefItem {
        nudge_id: format!("n-9.{n}"),
        topic: topic.into(),
        text: format!("Heads-up: {topic}"),
        kind: kind.map(str::to_owned),
    };
    for i in [item(1, "rent", Some("payment")), item(2, "bank", None)] {
        r.tracker.record_item(&brief, &i, Some(chat), true, t0()).unwrap();
    }
    let said = r.run_in(chat, "/earlier 1", t0() + Duration::minutes(5));
    assert!(said.starts_with("Noted: I'll tell you of a payment earlier"), "{said}");
    let none = r.run_in(chat, "/earlier 2", t0() + Duration::minutes(6));
    assert!(none.starts_with("That was not a heads-up told ahead by its kind"), "{none}");
    let latest = r.run_as(crate::time::Language::Chinese, chat, "/earlier", t0() + Duration::minutes(7));
    assert!(latest.starts_with("好的：以后付款类的事会更早告诉你"), "the latest told by its kind: {latest}");
    let s = r.tracker.summary(t0() + Duration::hours(1)).unwrap();
    assert_eq!(s.earlier_kinds.get("payment"), Some(&1), "one message, its latest verdict");
    assert_eq!(s.overall, crate::feedback::Rate::default(), "neutral: it rates nothing");
}
