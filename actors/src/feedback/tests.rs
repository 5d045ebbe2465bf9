use super::*;
use chrono::{Duration, TimeZone};
use raven_proto::Priority;
use std::io::Write;

fn t0() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 3, 2, 10, 0, 0).unwrap()
}

fn tracker(dir: &Path) -> NudgeFeedbackTracker {
    NudgeFeedbackTracker::new(dir.join("feedback.jsonl"), FeedbackConfig::default(), Tz::UTC)
}

#[test]
fn acceptance_rates_overall_per_topic_and_high_priority() {
    let dir = tempfile::tempdir().unwrap();
    let t = tracker(dir.path());
    let now = t0();
    let plan = [
        ("n1", "water", Priority::Low, "accepted"),
        ("n2", "water", Priority::High, "dismissed"),
        ("n3", "taxes", Priority::High, "accepted"),
        ("n4", "taxes", Priority::Low, "neutral"),
    ];
    for (id, topic, p, verdict) in plan {
        t.record_dispatched(&Dispatch::new(id, topic, p, Source::Sentinel), Some("cli:1"), true, now).unwrap();
        t.record_verdict(id, verdict, "", now + Duration::minutes(1)).unwrap();
    }
    let s = t.summary(now + Duration::hours(1)).unwrap();
    assert_eq!(s.overall, Rate { accepted: 2, dismissed: 1 });
    assert_eq!(s.high_priority, Rate { accepted: 1, dismissed: 1 });
    assert_eq!(s.by_topic["water"].rate, Rate { accepted: 1, dismissed: 1 });
    assert_eq!(s.by_topic["taxes"].rate, Rate { accepted: 1, dismissed: 0 }, "neutral is not a sample");
    assert_eq!(s.hour(10), Rate { accepted: 2, dismissed: 1 });
    assert_eq!(s.last_dismissal, Some(now + Duration::minutes(1)));
}

#[test]
fn cron_fires_do_not_move_the_acceptance_rate() {
    let dir = tempfile::tempdir().unwrap();
    let t = tracker(dir.path());
    t.record_dispatched(&Dispatch::new("n1", "water", Priority::Low, Source::Sentinel), None, true, t0()).unwrap();
    t.record_verdict("n1", "accepted", "", t0()).unwrap();
    for i in 0..5 {
        let id = format!("cron-{i}");
        t.record_dispatched(&Dispatch::new(&id, "water", Priority::Low, Source::Cron), Some("cli:1"), true, t0())
            .unwrap();
        t.record_verdict(&id, "dismissed", "", t0()).unwrap();
    }
    let s = t.summary(t0()).unwrap();
    assert_eq!(s.overall, Rate { accepted: 1, dismissed: 0 });
    assert_eq!(s.overall.acceptance(), Some(1.0));
}

#[test]
fn the_latest_verdict_wins_and_old_ones_leave_the_window() {
    let dir = tempfile::tempdir().unwrap();
    let t = tracker(dir.path());
    t.record_dispatched(&Dispatch::new("n1", "water", Priority::Low, Source::Sentinel), None, true, t0()).unwrap();
    t.record_verdict("n1", "dismissed", "", t0()).unwrap();
    t.record_verdict("n1", "accepted", "", t0() + Duration::minutes(5)).unwrap();
    assert_eq!(t.summary(t0() + Duration::hours(1)).unwrap().overall, Rate { accepted: 1, dismissed: 0 });
    assert_eq!(t.summary(t0() + Duration::days(15)).unwrap().overall, Rate::default());
}

#[test]
fn hard_rejects_weigh_more_and_decay() {
    let dir = tempfile::tempdir().unwrap();
    let t = tracker(dir.path());
    t.record_dispatched(&Dispatch::new("a", "gym", Priority::Low, Source::Sentinel), None, true, t0()).unwrap();
    t.record_verdict("a", "dismissed", "stop reminding me about the gym", t0()).unwrap();
    t.record_dispatched(&Dispatch::new("b", "tea", Priority::Low, Source::Sentinel), None, true, t0()).unwrap();
    t.record_verdict("b", "dismissed", "not now", t0()).unwrap();
    let s = t.summary(t0()).unwrap();
    assert!((s.by_topic["gym"].reject_weight - 1.0).abs() < 1e-9);
    assert!((s.by_topic["tea"].reject_weight - 0.5).abs() < 1e-9);
    let week_later = t.summary(t0() + Duration::days(7)).unwrap();
    assert!((week_later.by_topic["gym"].reject_weight - 0.5).abs() < 1e-6, "one half-life");
}

#[test]
fn unknown_verdicts_are_refused_and_nothing_is_written() {
    let dir = tempfile::tempdir().unwrap();
    let t = tracker(dir.path());
    assert!(matches!(t.record_verdict("n", "loved it", "", t0()), Err(FeedbackError::BadVerdict(_))));
    assert!(t.records().unwrap().is_empty());
}

#[test]
fn daily_trim_drops_old_records_once_a_day() {
    let dir = tempfile::tempdir().unwrap();
    let t = tracker(dir.path());
    t.record_dispatched(
        &Dispatch::new("old", "x", Priority::Low, Source::Sentinel),
        None,
        true,
        t0() - Duration::days(40),
    )
    .unwrap();
    t.record_dispatched(&Dispatch::new("new", "x", Priority::Low, Source::Sentinel), None, true, t0()).unwrap();
    assert!(t.trim_if_due(t0()).unwrap());
    let ids: Vec<_> = t.records().unwrap().into_iter().map(|r| r.nudge_id).collect();
    assert_eq!(ids, vec!["new"]);
    assert!(!t.trim_if_due(t0() + Duration::hours(1)).unwrap(), "once a day");
    assert!(t.trim_if_due(t0() + Duration::days(1)).unwrap());
}

#[test]
fn a_torn_line_is_skipped_not_fatal() {
    let dir = tempfile::tempdir().unwrap();
    let t = tracker(dir.path());
    t.record_dispatched(&Dispatch::new("a", "x", Priority::Low, Source::Sentinel), None, true, t0()).unwrap();
    std::fs::OpenOptions::new().append(true).open(t.path()).unwrap().write_all(b"{\"at\": \"20").unwrap();
    assert_eq!(t.records().unwrap().len(), 1);
    t.record_dispatched(&Dispatch::new("b", "x", Priority::Low, Source::Sentinel), None, true, t0()).unwrap();
    let ids: Vec<_> = t.records().unwrap().into_iter().map(|r| r.nudge_id).collect();
    assert_eq!(ids, vec!["a", "b"], "the record after a torn line survives");
}

fn sent(t: &NudgeFeedbackTracker, id: &str, topic: &str, session: &str, visible: bool, at: DateTime<Utc>) {
    t.record_dispatched(&Dispatch::new(id, topic, Priority::Low, Source::Sentinel), Some(session), visible, at)
        .unwrap();
}

fn events(t: &NudgeFeedbackTracker, id: &str) -> Vec<Lifecycle> {
    t.records().unwrap().into_iter().filter(|r| r.nudge_id == id).map(|r| r.event).collect()
}

#[test]
fn a_single_stop_holds_the_topic_cooldown_on_the_next_tick() {
    let dir = tempfile::tempdir().unwrap();
    let t = tracker(dir.path());
    sent(&t, "a", "water", "cli:1", true, t0());
    t.record_verdict("a", "dismissed", "stop reminding me about water", t0()).unwrap();
    let s = t.summary(t0() + Duration::minutes(5)).unwrap();
    let water = &s.by_topic["water"];
    assert!(water.reject_weight < 1.0, "decayed a little by the next tick");
    assert!((water.weight_at_last_reject - 1.0).abs() < 1e-9, "the cooldown is measured by the weight at the stop");
}

#[test]
fn no_reply_becomes_ignored_once_only_when_seen_and_the_clock_pauses_in_quiet_hours() {
    let dir = tempfile::tempdir().unwrap();
    let t = tracker(dir.path());
    let other = tracker(dir.path());
    let at = Utc.with_ymd_and_hms(2026, 3, 2, 20, 0, 0).unwrap();
    sent(&t, "seen", "water", "telegram:1", true, at);
    sent(&t, "unseen", "water", "cli:local", false, at);
    // Quiet 22:00-07:00: 20:00 + 2 h awake, then 9 h asleep, then 4 h more from 07:00.
    let asleep = |x: DateTime<Utc>| {
        let h = chrono::Timelike::hour(&x);
        !(7..22).contains(&h)
    };
    let almost = Utc.with_ymd_and_hms(2026, 3, 3, 10, 55, 0).unwrap();
    assert!(t.sweep_ignored(almost, &asleep).unwrap().is_empty(), "5 h 55 m awake is not 6 h");
    let due = Utc.with_ymd_and_hms(2026, 3, 3, 11, 0, 0).unwrap();
    assert_eq!(t.sweep_ignored(due, &asleep).unwrap(), ["seen"]);
    assert!(other.sweep_ignored(due + Duration::hours(1), &asleep).unwrap().is_empty(), "fires once across trackers");
    assert_eq!(events(&t, "unseen"), [Lifecycle::Dispatched], "a terminal nobody watched is never ignored");
    let s = t.summary(due).unwrap();
    assert_eq!(s.overall, Rate { accepted: 0, dismissed: 1 }, "a non-acceptance");
    assert_eq!(s.last_dismissal, None, "no layer-7 cooldown");
    assert_eq!(s.hour(20), Rate::default(), "not counted toward the learned do-not-disturb hour");
    assert!((s.by_topic["water"].reject_weight - 0.25).abs() < 1e-3);
    t.record_verdict("seen", "accepted", "", due + Duration::minutes(1)).unwrap();
    assert_eq!(t.summary(due).unwrap().overall, Rate { accepted: 1, dismissed: 0 }, "a verdict replaces it");
}

#[test]
fn a_user_line_engages_what_waits_and_stops_the_timer() {
    let dir = tempfile::tempdir().unwrap();
    let t = tracker(dir.path());
    sent(&t, "a", "water", "telegram:1", true, t0());
    sent(&t, "b", "gym", "telegram:2", true, t0());
    assert_eq!(t.record_engaged("telegram:1", "hi there", t0() + Duration::hours(1)).unwrap(), ["a"]);
    assert!(t.record_engaged("telegram:1", "hi", t0() + Duration::hours(2)).unwrap().is_empty(), "once");
    assert_eq!(t.sweep_ignored(t0() + Duration::hours(7), &|_| false).unwrap(), ["b"]);
    let s = t.summary(t0() + Duration::hours(7)).unwrap();
    assert_eq!(s.by_topic.get("water").map(|w| w.rate), None, "engagement is not a verdict");
    assert_eq!(t.latest_undecided("telegram:1", t0() + Duration::hours(2)).unwrap().unwrap().nudge_id, "a");
    assert!(t.latest_undecided("telegram:1", t0() + Duration::hours(7)).unwrap().is_none(), "outside the window");
}

/// "Took my medication" after the medication nudge: they did it, an acceptance; the same
/// words after a nudge on another topic, a command or words asking to stop are not.
#[test]
fn a_user_line_about_the_nudge_s_topic_accepts_it() {
    let dir = tempfile::tempdir().unwrap();
    let t = tracker(dir.path());
    sent(&t, "a", "medication", "telegram:1", true, t0());
    sent(&t, "b", "water", "telegram:1", true, t0());
    assert_eq!(t.record_engaged("telegram:1", "took my medication", t0() + Duration::minutes(10)).unwrap(), ["a", "b"]);
    let s = t.summary(t0() + Duration::hours(1)).unwrap();
    assert_eq!(s.by_topic["medication"].rate, Rate { accepted: 1, dismissed: 0 }, "they did it");
    assert_eq!(s.by_topic.get("water").map(|w| w.rate), None, "only engaged");

    sent(&t, "c", "medication", "telegram:2", true, t0());
    sent(&t, "d", "medication", "telegram:3", true, t0());
    t.record_engaged("telegram:2", "/later medication", t0() + Duration::minutes(5)).unwrap();
    t.record_engaged("telegram:3", "stop reminding me of the medication", t0() + Duration::minutes(5)).unwrap();
    let s = t.summary(t0() + Duration::hours(1)).unwrap();
    assert_eq!(s.by_topic["medication"].rate, Rate { accepted: 1, dismissed: 0 }, "neither counts");
}

#[test]
fn mutes_and_snoozes_hold_until_their_end_or_their_undo() {
    let dir = tempfile::tempdir().unwrap();
    let t = tracker(dir.path());
    t.record_mute("water", Some(t0() + Duration::days(30)), t0()).unwrap();
    t.record_snooze(t0() + Duration::hours(2), t0()).unwrap();
    let s = t.summary(t0() + Duration::hours(1)).unwrap();
    assert_eq!(s.muted_until("water", t0() + Duration::hours(1)), Some(t0() + Duration::days(30)));
    assert_eq!(s.snoozed(t0() + Duration::hours(1)), Some(t0() + Duration::hours(2)));
    assert_eq!(t.summary(t0() + Duration::hours(3)).unwrap().snoozed_until, None, "a snooze ends");
    t.record_mute("water", None, t0() + Duration::days(1)).unwrap();
    assert!(t.summary(t0() + Duration::days(2)).unwrap().muted.is_empty(), "/ok unmutes");
}

#[test]
fn short_ids_are_stable_six_hex_digits() {
    assert_eq!(short_id("n-20260302T100000-1-1"), short_id("n-20260302T100000-1-1"));
    assert_eq!(short_id("n-20260302T100000-1-1").len(), 6);
    assert_ne!(short_id("n-20260302T100000-1-1"), short_id("n-20260302T100000-1-2"));
}

fn log_lines(path: &Path) -> Vec<Vec<u8>> {
    std::fs::read(path)
        .map(|b| b.split(|c| *c == b'\n').filter(|l| !l.is_empty()).map(<[u8]>::to_vec).collect())
        .unwrap_or_default()
}

fn push_raw(path: &Path, line: &[u8]) {
    let mut f = std::fs::OpenOptions::new().create(true).append(true).open(path).unwrap();
    f.write_all(line).unwrap();
    f.write_all(b"\n").unwrap();
}

#[test]
fn a_record_with_a_field_unknown_here_survives_appends_and_a_trim_byte_for_byte() {
    let dir = tempfile::tempdir().unwrap();
    let t = tracker(dir.path());
    sent(&t, "old", "water", "cli:1", true, t0() - Duration::days(40));
    let mine = br#"{"event": "dispatched",  "nudge_id": "mine", "at": "2026-03-02T09:00:00Z", "topic": "tea", "mood": {"sky": "clear"}}"#;
    push_raw(t.path(), mine);
    sent(&t, "new", "water", "cli:1", true, t0());
    t.record_verdict("mine", "accepted", "", t0()).unwrap();
    assert!(t.trim_if_due(t0()).unwrap());
    let lines = log_lines(t.path());
    assert_eq!(lines.len(), 3, "the old record was dropped");
    assert_eq!(lines[0], mine, "kept as it was written");
    let ids: Vec<_> = t.records().unwrap().into_iter().map(|r| r.nudge_id).collect();
    assert_eq!(ids, ["mine", "new", "mine"]);
}

#[test]
fn an_unreadable_line_is_moved_to_the_rejected_file_once_not_lost() {
    let dir = tempfile::tempdir().unwrap();
    let t = tracker(dir.path());
    sent(&t, "a", "water", "cli:1", true, t0());
    push_raw(t.path(), b"not json at all");
    push_raw(t.path(), br#"{"at": "yesterday", "nudge_id": "b"}"#);
    sent(&t, "c", "water", "cli:1", true, t0());
    assert!(t.trim_if_due(t0()).unwrap());
    let rejected = trim::rejected_path(t.path());
    assert_eq!(rejected, dir.path().join("feedback.jsonl.rejected"));
    let moved = b"not json at all\n{\"at\": \"yesterday\", \"nudge_id\": \"b\"}\n";
    assert_eq!(std::fs::read(&rejected).unwrap(), moved);
    assert_eq!(log_lines(t.path()).len(), 2, "only records are left in the log");
    let ids: Vec<_> = t.records().unwrap().into_iter().map(|r| r.nudge_id).collect();
    assert_eq!(ids, ["a", "c"]);
    assert!(t.trim_if_due(t0() + Duration::days(1)).unwrap());
    assert_eq!(std::fs::read(&rejected).unwrap(), moved, "not moved twice");
}

#[test]
fn when_the_rejected_file_cannot_be_written_the_log_is_left_as_it_was() {
    let dir = tempfile::tempdir().unwrap();
    let t = tracker(dir.path());
    sent(&t, "old", "water", "cli:1", true, t0() - Duration::days(40));
    push_raw(t.path(), b"{torn");
    std::fs::create_dir(trim::rejected_path(t.path())).unwrap();
    let before = std::fs::read(t.path()).unwrap();
    let err = t.trim_if_due(t0()).unwrap_err();
    assert!(matches!(err, FeedbackError::Rejected { .. }), "{err}");
    assert_eq!(std::fs::read(t.path()).unwrap(), before);
    std::fs::remove_dir(trim::rejected_path(t.path())).unwrap();
    assert!(t.trim_if_due(t0()).unwrap(), "the day's trim is tried again");
    assert_eq!(log_lines(t.path()).len(), 0);
}

#[test]
fn a_byte_that_is_not_utf8_spoils_one_line_and_learning_goes_on() {
    let dir = tempfile::tempdir().unwrap();
    let t = tracker(dir.path());
    sent(&t, "a", "water", "cli:1", true, t0());
    let bad = b"{\"at\": \"2026-03-02T10:00:00Z\", \"nudge_id\": \"x\xff\", \"event\": \"accepted\"}";
    push_raw(t.path(), bad);
    t.record_verdict("a", "accepted", "", t0() + Duration::minutes(1)).unwrap();
    sent(&t, "b", "water", "cli:1", true, t0());
    t.record_verdict("b", "dismissed", "", t0() + Duration::minutes(2)).unwrap();
    assert_eq!(t.records().unwrap().len(), 4, "every other record is read");
    let s = t.summary(t0() + Duration::hours(1)).unwrap();
    assert_eq!(s.overall, Rate { accepted: 1, dismissed: 1 });
    assert!(t.trim_if_due(t0()).unwrap());
    let mut moved = bad.to_vec();
    moved.push(b'\n');
    assert_eq!(std::fs::read(trim::rejected_path(t.path())).unwrap(), moved, "moved byte for byte");
}

/// Counts the warnings emitted on the thread it is the default of.
/// Collects the message of every warn event.
struct Warnings(std::sync::Arc<std::sync::Mutex<Vec<String>>>);

struct Message<'a>(&'a mut String);

impl tracing::field::Visit for Message<'_> {
    fn record_debug(&mut self, field: &tracing::field::Field, value: &dyn std::fmt::Debug) {
        if field.name() == "message" {
            *self.0 = format!("{value:?}");
        }
    }
}

impl tracing::Subscriber for Warnings {
    fn enabled(&self, _: &tracing::Metadata<'_>) -> bool {
        true
    }
    fn new_span(&self, _: &tracing::span::Attributes<'_>) -> tracing::span::Id {
        tracing::span::Id::from_u64(1)
    }
    fn record(&self, _: &tracing::span::Id, _: &tracing::span::Record<'_>) {}
    fn record_follows_from(&self, _: &tracing::span::Id, _: &tracing::span::Id) {}
    fn event(&self, event: &tracing::Event<'_>) {
        if *event.metadata().level() == tracing::Level::WARN {
            let mut message = String::new();
            event.record(&mut Message(&mut message));
            self.0.lock().unwrap().push(message);
        }
    }
    fn enter(&self, _: &tracing::span::Id) {}
    fn exit(&self, _: &tracing::span::Id) {}
}

#[test]
fn an_unreadable_line_is_reported_once_however_often_the_log_is_read() {
    let dir = tempfile::tempdir().unwrap();
    let t = tracker(dir.path());
    sent(&t, "a", "water", "cli:1", true, t0());
    push_raw(t.path(), b"{torn");
    let warned = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    tracing::subscriber::with_default(Warnings(warned.clone()), || {
        for _ in 0..5 {
            assert_eq!(t.records().unwrap().len(), 1);
            assert_eq!(tracker(dir.path()).records().unwrap().len(), 1, "another tracker of the same log");
        }
    });
    let warned = warned.lock().unwrap();
    assert_eq!(warned.len(), 1, "{warned:?}");
    let named = format!("{}: line 2 is skipped", t.path().display());
    assert!(warned[0].starts_with(&named), "the file and the line are named: {warned:?}");
}
