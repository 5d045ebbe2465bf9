use super::*;
use crate::context::deadlines::deadlines_in;
use crate::planner::rules::RulesProvider;
use crate::time::DateOrder;
use chrono::TimeZone;
use raven_proto::TopicFireHistory;

fn at(h: u32, m: u32) -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 3, 2, h, m, 0).unwrap()
}

const FOUR: &str = "- [ ] Phone the accountant due: 2026-03-02 12:00\n\
                    - [ ] Fetch the parcel due: 2026-03-02 12:05\n\
                    - [ ] Feed the goldfish due: 2026-03-02 12:10\n\
                    - [ ] Water the geraniums due: 2026-03-02 12:15\n";

/// Ticks from `first` every `step` until 12:30, each nudge the gate would let through (one per
/// `cooldown`, as the session cooldown does) filed under the first item it names: when each
/// title was first named, and how many nudges went out.
fn run(first: DateTime<Utc>, step: Duration, cooldown: Duration) -> (Vec<(String, DateTime<Utc>)>, usize) {
    let rules = RulesProvider::new(Tz::UTC);
    let mut ctx = PlannerContext::empty(first);
    ctx.memory_md = FOUR.into();
    let (mut named, mut sent, mut last) = (Vec::<(String, DateTime<Utc>)>::new(), 0, None::<DateTime<Utc>>);
    while ctx.now <= at(12, 30) {
        let decision = rules.decide(&ctx);
        let message = decision["nudge_message"].as_str().unwrap_or_default().to_owned();
        if decision["action"] == "nudge" && last.is_none_or(|l| ctx.now - l >= cooldown) {
            let deadlines = deadlines_in(&ctx, Tz::UTC, DateOrder::default(), &Default::default());
            let filed = deadlines.iter().find(|d| message.contains(&d.title)).unwrap();
            let h = ctx.fire_history.entry(filed.topic.clone()).or_default();
            (h.fired, h.last_fired) = (h.fired + 1, Some(ctx.now));
            for d in deadlines.iter().filter(|d| message.contains(&d.title)) {
                if !named.iter().any(|(t, _)| t == &d.title) {
                    named.push((d.title.clone(), ctx.now));
                }
            }
            (sent, last) = (sent + 1, Some(ctx.now));
        }
        ctx.now += step;
    }
    (named, sent)
}

#[test]
fn four_timed_notes_within_an_hour_each_get_their_reminder_before_they_start() {
    let dues = [at(12, 0), at(12, 5), at(12, 10), at(12, 15)];
    for (first, step) in [(at(10, 47), 30), (at(11, 1), 30), (at(11, 0), 5), (at(11, 58), 1)] {
        let (named, sent) = run(first, Duration::minutes(step), Duration::minutes(30));
        assert_eq!(named.len(), 4, "every note named, ticks from {first} every {step} min: {named:?}");
        for ((title, when), due) in named.iter().zip(dues) {
            assert!(*when < due, "{title} named at {when}, due {due} (ticks from {first} every {step} min)");
        }
        assert!(sent <= 3, "a heads-up and one reminder for the cluster, not one each: {sent} sent");
    }
}

#[test]
fn one_reminder_lists_the_others_and_each_is_said_once() {
    let deadlines: Vec<Deadline> = {
        let mut ctx = PlannerContext::empty(at(11, 20));
        ctx.memory_md = FOUR.into();
        deadlines_in(&ctx, Tz::UTC, DateOrder::default(), &Default::default())
    };
    let mut ctx = PlannerContext::empty(at(11, 20));
    let r = due_reminder(&deadlines, &ctx).unwrap();
    assert_eq!(
        r.message(ctx.now, Tz::UTC, crate::time::Language::English),
        "Reminder: Phone the accountant is due at 12:00. Also: Fetch the parcel (is due at 12:05); \
         Feed the goldfish (is due at 12:10); Water the geraniums (is due at 12:15)."
    );
    let fired = TopicFireHistory { fired: 1, last_fired: Some(at(11, 20)), ..Default::default() };
    ctx.fire_history.insert("accountant".into(), fired);
    ctx.now = at(11, 50);
    assert!(due_reminder(&deadlines, &ctx).is_none(), "each was listed in that one");
}
