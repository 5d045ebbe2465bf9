use super::*;
use crate::config::{FeedbackConfig, TimeOfDay};
use crate::cron::store::{JobsStore, Schedule};
use crate::feedback::{Dispatch, Lifecycle, Source};
use chrono::TimeZone;
use raven_proto::Priority;

struct Fixture {
    _tmp: tempfile::TempDir,
    dir: DataDir,
    tracker: NudgeFeedbackTracker,
    verdicts: Verdicts,
}

fn fixture(config: RavenConfig) -> Fixture {
    let tmp = tempfile::tempdir().unwrap();
    let dir = DataDir::new(tmp.path());
    std::fs::create_dir_all(dir.feedback().parent().unwrap()).unwrap();
    let tracker = NudgeFeedbackTracker::new(dir.feedback(), FeedbackConfig::default(), Tz::UTC);
    let verdicts = Verdicts::of(&dir, &config);
    Fixture { _tmp: tmp, dir, tracker, verdicts }
}

fn config() -> RavenConfig {
    let mut c = RavenConfig::default();
    c.general.timezone = Tz::UTC;
    c.policy.quiet_hours = Window::new(TimeOfDay::hm(23, 0), TimeOfDay::hm(7, 0));
    c.channels.telegram.enabled = true;
    c.channels.ntfy.enabled = true;
    c
}

fn said_at(f: &Fixture, id: &str, session: &str, source: Source, at: DateTime<Utc>) {
    let d = Dispatch::new(id, "dentist", Priority::Medium, source);
    f.tracker.record_said(&d, Some(session), true, "Heads-up: the dentist at 15:00", at).unwrap();
}

fn later(id: &str) -> GiveFeedback {
    GiveFeedback { nudge_id: Some(id.into()), verdict: LATER.into(), ..Default::default() }
}

fn noon() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 3, 2, 12, 0, 0).unwrap()
}

#[test]
fn later_sends_the_message_again_to_its_conversation_after_an_hour_and_rates_nothing() {
    let f = fixture(config());
    said_at(&f, "n1", "telegram:42", Source::Sentinel, noon());
    let given = f.verdicts.give(&f.tracker, &later("n1"), noon()).unwrap();
    assert_eq!(given.verdict, "later");
    assert_eq!(given.again_at, Some(noon() + Duration::hours(1)));

    let jobs = JobsStore::new(f.dir.jobs()).load().unwrap().jobs;
    assert_eq!(jobs.len(), 1, "one job sends it again");
    assert_eq!(Some(&jobs[0].id), given.again_job.as_ref());
    assert_eq!(jobs[0].message, "Heads-up: the dentist at 15:00");
    assert_eq!(jobs[0].schedule, Schedule::At { at: noon() + Duration::hours(1) });
    assert_eq!(jobs[0].target.as_deref(), Some("telegram:42"));
    assert_eq!(jobs[0].topic.as_deref(), Some("dentist"));

    let records = f.tracker.records().unwrap();
    let last = records.last().unwrap();
    assert_eq!(last.event, Lifecycle::Later, "a snooze of the item, not a neutral rating");
    assert!(!records.iter().any(|r| r.event == Lifecycle::Neutral));
    let summary = f.tracker.summary(noon()).unwrap();
    assert_eq!(summary.overall.accepted + summary.overall.dismissed, 0, "later rates it neither way");
    assert!(f.tracker.latest_undecided("telegram:42", noon()).unwrap().is_none(), "/ok no longer means it");
}

#[test]
fn later_into_the_quiet_hours_comes_when_they_end() {
    let f = fixture(config());
    let late = Utc.with_ymd_and_hms(2026, 3, 2, 22, 30, 0).unwrap();
    said_at(&f, "n1", "ntfy:phone", Source::Sentinel, late);
    let given = f.verdicts.give(&f.tracker, &later("n1"), late).unwrap();
    assert_eq!(given.again_at, Some(Utc.with_ymd_and_hms(2026, 3, 3, 7, 0, 0).unwrap()));
}

#[test]
fn the_wait_is_configurable_and_a_cron_reminder_can_be_put_off_too() {
    let mut c = config();
    c.feedback.later_minutes = 15;
    let f = fixture(c);
    said_at(&f, "cron-abc-1", "telegram:42", Source::Cron, noon());
    let by_session = GiveFeedback { session: Some("telegram:42".into()), verdict: LATER.into(), ..Default::default() };
    let given = f.verdicts.give(&f.tracker, &by_session, noon()).unwrap();
    assert_eq!(given.again_at, Some(noon() + Duration::minutes(15)));
    let answer = said(&given, Tz::UTC, noon());
    assert_eq!(
        answer,
        format!(
            "Later, then: I'll send it again at 12:15 (job {0}; /cancel {0} to drop it).",
            given.again_job.clone().unwrap()
        )
    );
    let late = Utc.with_ymd_and_hms(2026, 3, 2, 22, 30, 0).unwrap();
    let next_morning = Given { again_at: Some(Utc.with_ymd_and_hms(2026, 3, 3, 7, 0, 0).unwrap()), ..given };
    assert!(said(&next_morning, Tz::UTC, late).contains("again tomorrow at 07:00"));
    let zh = said_in(&next_morning, Tz::UTC, late, crate::time::Language::Chinese);
    let job = next_morning.again_job.clone().unwrap();
    assert_eq!(zh, format!("好的，晚点：我会在明天 07:00 再发一次（任务 {job}；/cancel {job} 取消）。"));
}

#[test]
fn a_message_to_a_channel_no_longer_set_up_is_not_put_off_and_nothing_is_recorded() {
    let f = fixture(config());
    said_at(&f, "n1", "matrix:!room", Source::Sentinel, noon());
    let err = f.verdicts.give(&f.tracker, &later("n1"), noon()).unwrap_err();
    assert!(matches!(&err, GiveError::NotPutOff(why) if why.contains("matrix")), "{err}");
    assert!(JobsStore::new(f.dir.jobs()).load().unwrap().jobs.is_empty());
    assert!(!f.tracker.records().unwrap().iter().any(|r| r.event == Lifecycle::Later));
}

#[test]
fn other_verdicts_are_given_as_before_and_an_unknown_one_is_refused() {
    let f = fixture(config());
    said_at(&f, "n1", "telegram:42", Source::Sentinel, noon());
    let ok = GiveFeedback { nudge_id: Some("n1".into()), verdict: "accepted".into(), ..Default::default() };
    assert_eq!(f.verdicts.give(&f.tracker, &ok, noon()).unwrap().again_job, None);
    let bad = GiveFeedback { nudge_id: Some("n1".into()), verdict: "soon".into(), ..Default::default() };
    assert!(matches!(f.verdicts.give(&f.tracker, &bad, noon()), Err(GiveError::BadVerdict(_))));
    assert!(JobsStore::new(f.dir.jobs()).load().unwrap().jobs.is_empty());
}
