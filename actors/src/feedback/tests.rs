use super::*;
use chrono::{Duration, TimeZone};

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
        t.record_dispatched(id, topic, p, Some("cli:1"), Source::Sentinel, now).unwrap();
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
    t.record_dispatched("n1", "water", Priority::Low, None, Source::Sentinel, t0()).unwrap();
    t.record_verdict("n1", "accepted", "", t0()).unwrap();
    for i in 0..5 {
        t.record_cron_fire(&format!("cron-{i}"), "water", t0()).unwrap();
    }
    let s = t.summary(t0()).unwrap();
    assert_eq!(s.overall, Rate { accepted: 1, dismissed: 0 });
    assert_eq!(s.overall.acceptance(), Some(1.0));
}

#[test]
fn the_latest_verdict_wins_and_old_ones_leave_the_window() {
    let dir = tempfile::tempdir().unwrap();
    let t = tracker(dir.path());
    t.record_dispatched("n1", "water", Priority::Low, None, Source::Sentinel, t0()).unwrap();
    t.record_verdict("n1", "dismissed", "", t0()).unwrap();
    t.record_verdict("n1", "accepted", "", t0() + Duration::minutes(5)).unwrap();
    assert_eq!(t.summary(t0() + Duration::hours(1)).unwrap().overall, Rate { accepted: 1, dismissed: 0 });
    assert_eq!(t.summary(t0() + Duration::days(15)).unwrap().overall, Rate::default());
}

#[test]
fn hard_rejects_weigh_more_and_decay() {
    let dir = tempfile::tempdir().unwrap();
    let t = tracker(dir.path());
    t.record_dispatched("a", "gym", Priority::Low, None, Source::Sentinel, t0()).unwrap();
    t.record_verdict("a", "dismissed", "stop reminding me about the gym", t0()).unwrap();
    t.record_dispatched("b", "tea", Priority::Low, None, Source::Sentinel, t0()).unwrap();
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
    let mut t = tracker(dir.path());
    t.record_dispatched("old", "x", Priority::Low, None, Source::Sentinel, t0() - Duration::days(40)).unwrap();
    t.record_dispatched("new", "x", Priority::Low, None, Source::Sentinel, t0()).unwrap();
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
    t.record_dispatched("a", "x", Priority::Low, None, Source::Sentinel, t0()).unwrap();
    std::fs::OpenOptions::new().append(true).open(t.path()).unwrap().write_all(b"{\"at\": \"20").unwrap();
    assert_eq!(t.records().unwrap().len(), 1);
    t.record_dispatched("b", "x", Priority::Low, None, Source::Sentinel, t0()).unwrap();
    let ids: Vec<_> = t.records().unwrap().into_iter().map(|r| r.nudge_id).collect();
    assert_eq!(ids, vec!["a", "b"], "the record after a torn line survives");
}
