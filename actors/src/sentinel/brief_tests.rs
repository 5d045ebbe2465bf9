//! The morning brief from the tick: once a day at its time, with each item recorded as a
//! message of its own, nothing on an empty day, held back by the gate and tried again, and
//! not sent twice by a second runner on the data dir.

use super::decision_cache::DecisionCache;
use super::tests::{at, rig, Rig};
use crate::config::TimeOfDay;

const NOTES: &str = "- [ ] Call the bank due: 2026-03-02 15:00\n- [ ] Pay the rent due: 2026-03-03\n";

/// A rig at `start` whose runner briefs at 07:00, keeping the brief's day in `dir`'s
/// decision cache (its own when `None`).
fn briefing(start: chrono::DateTime<chrono::Utc>, dir: Option<&crate::data_dir::DataDir>) -> Rig {
    let mut r = rig(start);
    let store = crate::store::owners::open(dir.unwrap_or(&r.dir), crate::store::owners::Owner::DecisionCache);
    let cache = DecisionCache::on(store.unwrap());
    r.runner.set_brief(TimeOfDay::hm(7, 0), cache);
    r
}

fn briefs(r: &Rig) -> Vec<crate::feedback::Dispatch> {
    r.router.said.borrow().iter().filter(|d| d.topic == "morning brief").cloned().collect()
}

#[actix_rt::test]
async fn the_brief_goes_once_at_its_time_with_each_item_its_own_message() {
    let mut r = briefing(at(6, 50), None);
    std::fs::write(r.dir.memory(), NOTES).unwrap();
    r.runner.tick_once().await;
    assert!(briefs(&r).is_empty(), "before its time (and in quiet hours)");
    r.clock.set(at(7, 5));
    r.runner.tick_once().await;
    let sent = briefs(&r);
    assert_eq!(sent.len(), 1, "{:?}", r.router.said.borrow());
    let items: Vec<(&str, &str)> = sent[0].items.iter().map(|i| (i.topic.as_str(), i.text.as_str())).collect();
    assert_eq!(items.len(), 2, "{items:?}");
    assert_eq!(items[0].1, "Reminder: Call the bank is due at 15:00.");
    assert_eq!(items[1].1, "Heads-up: Pay the rent is due tomorrow.");
    let text = r.router.routed.borrow().iter().find_map(|d| d.nudge_message.clone().filter(|m| m.starts_with("Good")));
    let text = text.unwrap();
    assert!(
        text.contains("1. Call the bank (is due at 15:00)\n") && text.contains("Coming up:\n2. Pay the rent"),
        "{text}"
    );
    r.clock.set(at(9, 0));
    r.runner.tick_once().await;
    assert_eq!(briefs(&r).len(), 1, "once a day");
}

#[actix_rt::test]
async fn an_empty_day_sends_nothing() {
    let mut r = briefing(at(7, 5), None);
    std::fs::write(r.dir.memory(), "- [ ] Far away due: 2026-04-30\n").unwrap();
    r.runner.tick_once().await;
    r.clock.set(at(8, 0));
    r.runner.tick_once().await;
    assert!(briefs(&r).is_empty(), "{:?}", r.router.said.borrow());
}

#[actix_rt::test]
async fn a_second_runner_on_the_data_dir_does_not_brief_again() {
    let mut r = briefing(at(7, 5), None);
    let dir = r.dir.clone();
    std::fs::write(r.dir.memory(), NOTES).unwrap();
    r.runner.tick_once().await;
    assert_eq!(briefs(&r).len(), 1);
    let mut second = briefing(at(7, 30), Some(&dir));
    std::fs::write(second.dir.memory(), NOTES).unwrap();
    second.runner.tick_once().await;
    assert!(briefs(&second).is_empty(), "the brief's day is shared through the data dir");
}

#[actix_rt::test]
async fn a_topic_the_user_stopped_stays_out_of_the_brief() {
    let mut r = briefing(at(7, 5), None);
    let dir = r.dir.clone();
    std::fs::write(r.dir.memory(), NOTES).unwrap();
    let tracker = crate::feedback::NudgeFeedbackTracker::new(dir.feedback(), Default::default(), chrono_tz::Tz::UTC);
    tracker.record_mute("rent", Some(at(7, 0) + chrono::Duration::days(30)), at(7, 0)).unwrap();
    r.runner.tick_once().await;
    let sent = briefs(&r);
    let texts: Vec<&str> = sent[0].items.iter().map(|i| i.text.as_str()).collect();
    assert_eq!(texts, ["Reminder: Call the bank is due at 15:00."]);
}

/// The learner: three dismissed early heads-ups of payments, and a payment's heads-up three
/// days ahead leaves the brief (told: no heads-up of its own either); the day before, it comes.
#[actix_rt::test]
async fn a_kind_dismissed_three_times_is_told_the_day_before_only() {
    use crate::feedback::{BriefItem, Dispatch, NudgeFeedbackTracker, Source};
    let mut r = briefing(at(7, 5), None);
    let dir = r.dir.clone();
    std::fs::write(r.dir.memory(), "- [ ] Pay the rent due: 2026-03-05\n").unwrap();
    let tracker = NudgeFeedbackTracker::new(dir.feedback(), Default::default(), chrono_tz::Tz::UTC);
    for n in 1..=3 {
        let brief = Dispatch::new(format!("b{n}"), "morning brief", raven_proto::Priority::Medium, Source::Sentinel);
        let item = BriefItem {
            nudge_id: format!("b{n}.1"),
            topic: format!("bill {n}"),
            text: "Heads-up: a bill".into(),
            kind: Some("payment".into()),
        };
        // At noon: dismissals at 07:00 would teach the gate a do-not-disturb hour there.
        let sent = at(12, 0) - chrono::Duration::days(n);
        tracker.record_item(&brief, &item, Some("cli:local"), true, sent).unwrap();
        tracker.record_verdict(&item.nudge_id, "dismissed", "", sent + chrono::Duration::minutes(1)).unwrap();
    }
    r.runner.tick_once().await;
    assert!(briefs(&r).is_empty(), "three days ahead: not in a brief {:?}", r.router.said.borrow());
    r.clock.set(at(7, 5) + chrono::Duration::days(2));
    r.runner.tick_once().await;
    let sent = briefs(&r);
    let journal = std::fs::read_to_string(dir.root().join("journal.jsonl")).unwrap_or_default();
    assert_eq!(sent.len(), 1, "the day before: {journal}");
    assert_eq!(sent[0].items[0].text, "Heads-up: Pay the rent is due tomorrow.");
    assert_eq!(sent[0].items[0].kind, None, "the day before is no kind's lead");
}

/// The user said a payment came too late (`/earlier`): the brief tells payments six days
/// ahead instead of three (the Planner's own heads-up: `planner::tests::rules`).
#[actix_rt::test]
async fn a_kind_asked_earlier_is_told_twice_as_far_ahead() {
    use crate::feedback::{BriefItem, Dispatch, NudgeFeedbackTracker, Source};
    let mut r = briefing(at(7, 5), None);
    let dir = r.dir.clone();
    std::fs::write(r.dir.memory(), "- [ ] Pay the rent due: 2026-03-08\n").unwrap();
    r.runner.tick_once().await;
    assert!(briefs(&r).is_empty(), "six days ahead: not yet for a payment {:?}", r.router.said.borrow());

    let tracker = NudgeFeedbackTracker::new(dir.feedback(), Default::default(), chrono_tz::Tz::UTC);
    let brief = Dispatch::new("b1", "morning brief", raven_proto::Priority::Medium, Source::Sentinel);
    let item = BriefItem {
        nudge_id: "b1.1".into(),
        topic: "bill".into(),
        text: "Heads-up: a bill".into(),
        kind: Some("payment".into()),
    };
    let sent = at(12, 0) - chrono::Duration::days(3);
    tracker.record_item(&brief, &item, Some("cli:local"), true, sent).unwrap();
    tracker.record_verdict("b1.1", "neutral", crate::feedback::EARLIER, sent + chrono::Duration::minutes(1)).unwrap();
    r.clock.set(at(9, 0));
    r.runner.tick_once().await;
    let sent = briefs(&r);
    assert_eq!(sent.len(), 1, "{:?}", r.router.said.borrow());
    assert_eq!(sent[0].items[0].text, "Heads-up: Pay the rent is due on Sun 8 Mar.");
    assert_eq!(sent[0].items[0].kind.as_deref(), Some("payment"));
}
