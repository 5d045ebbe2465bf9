//! One test per layer in which that layer alone denies; the high-priority bypass rows; and
//! frozen-clock tests of windows, cooldowns, dedup and the adaptive multiplier.

use super::*;
use crate::config::{DndWindow, PolicyConfig, TimeOfDay, Window};
use crate::feedback::{FeedbackSummary, Rate, TopicFeedback};
use chrono::{DateTime, Duration, TimeZone, Utc};
use chrono_tz::Tz;
use raven_proto::{Action, PolicyLayer, Priority, Verdict};

/// Monday 2026-03-02 12:00 UTC: outside quiet hours, a weekday.
fn noon() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 3, 2, 12, 0, 0).unwrap()
}

fn policy() -> NudgePolicy {
    NudgePolicy::new(PolicyConfig::default(), Tz::UTC)
}

fn ask(p: &NudgePolicy, content: &str, priority: Priority, at: DateTime<Utc>) -> Verdict {
    p.check(Action::Nudge, Some("cli:1"), content, priority, at)
}

/// Fires on distinct sessions, topics and contents, so only count-based layers see them.
fn fire_distinct(p: &mut NudgePolicy, n: usize, start: DateTime<Utc>, step: Duration) {
    let words = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india", "juliet"];
    for i in 0..n {
        let content = format!("{} check-in number {i}", words[i % words.len()].repeat(3));
        p.record_fired(Action::Nudge, Some(&format!("s:{i}")), &content, Priority::Low, None, start + step * i as i32);
    }
}

fn with_feedback(p: &mut NudgePolicy, f: impl FnOnce(&mut FeedbackSummary)) {
    let mut s = p.state().feedback.clone();
    if s.by_hour.is_empty() {
        s.by_hour = vec![Rate::default(); 24];
    }
    f(&mut s);
    let mut state = p.state().clone();
    state.feedback = s;
    p.replace_state(state);
}

const MSG: &str = "Drink a glass of water";

fn assert_denied_by(v: &Verdict, layer: PolicyLayer) {
    assert!(!v.allow, "expected a denial by {layer}, got {v:?}");
    assert_eq!(v.layer, Some(layer), "{v:?}");
}

/// Each case sets up exactly one layer to deny a low-priority nudge at noon.
/// Builds the policy, the time and the action of one case.
type Setup = Box<dyn Fn() -> (NudgePolicy, DateTime<Utc>, Action)>;

fn layer_cases() -> Vec<(PolicyLayer, Setup)> {
    vec![
        (PolicyLayer::Skip, Box::new(|| (policy(), noon(), Action::Skip))),
        (PolicyLayer::QuietHours, Box::new(|| (policy(), noon() + Duration::minutes(11 * 60 + 30), Action::Nudge))),
        (
            PolicyLayer::DynamicDnd,
            Box::new(|| {
                let mut p = policy();
                with_feedback(&mut p, |s| s.by_hour[12] = Rate { accepted: 0, dismissed: 3 });
                (p, noon(), Action::Nudge)
            }),
        ),
        (
            PolicyLayer::PersonaDnd,
            Box::new(|| {
                let mut cfg = PolicyConfig::default();
                cfg.dnd_windows.push(DndWindow {
                    name: "focus".into(),
                    start: TimeOfDay::hm(11, 0),
                    end: TimeOfDay::hm(13, 0),
                    weekdays: vec![chrono::Weekday::Mon],
                });
                (NudgePolicy::new(cfg, Tz::UTC), noon(), Action::Nudge)
            }),
        ),
        (
            PolicyLayer::DayQuota,
            Box::new(|| {
                let mut p = policy();
                fire_distinct(&mut p, 8, noon() - Duration::hours(11), Duration::hours(1));
                (p, noon(), Action::Nudge)
            }),
        ),
        (
            PolicyLayer::HourQuota,
            Box::new(|| {
                let mut p = policy();
                fire_distinct(&mut p, 2, noon() - Duration::minutes(40), Duration::minutes(10));
                (p, noon(), Action::Nudge)
            }),
        ),
        (
            PolicyLayer::SessionCooldown,
            Box::new(|| {
                let mut p = policy();
                p.record_fired(
                    Action::Nudge,
                    Some("cli:1"),
                    "Stretch your legs",
                    Priority::Low,
                    None,
                    noon() - Duration::minutes(10),
                );
                (p, noon(), Action::Nudge)
            }),
        ),
        (
            PolicyLayer::DismissalCooldown,
            Box::new(|| {
                let mut p = policy();
                with_feedback(&mut p, |s| s.last_dismissal = Some(noon() - Duration::minutes(30)));
                (p, noon(), Action::Nudge)
            }),
        ),
        (
            PolicyLayer::TopicRejectCooldown,
            Box::new(|| {
                let mut p = policy();
                with_feedback(&mut p, |s| {
                    s.by_topic.insert(
                        "water".into(),
                        TopicFeedback {
                            rate: Rate { accepted: 0, dismissed: 1 },
                            reject_weight: 1.0,
                            last_reject: Some(noon() - Duration::hours(3)),
                            ..Default::default()
                        },
                    );
                });
                (p, noon(), Action::Nudge)
            }),
        ),
        (
            PolicyLayer::TopicAcceptance,
            Box::new(|| {
                let mut p = policy();
                with_feedback(&mut p, |s| {
                    s.by_topic.insert(
                        "water".into(),
                        TopicFeedback {
                            rate: Rate { accepted: 0, dismissed: 4 },
                            reject_weight: 0.0,
                            last_reject: None,
                            ..Default::default()
                        },
                    );
                });
                (p, noon(), Action::Nudge)
            }),
        ),
        (
            PolicyLayer::ContentDedup,
            Box::new(|| {
                let mut p = policy();
                p.record_fired(
                    Action::Nudge,
                    Some("tg:9"),
                    MSG,
                    Priority::Low,
                    Some("hydration"),
                    noon() - Duration::hours(2),
                );
                (p, noon(), Action::Nudge)
            }),
        ),
        (
            PolicyLayer::TopicQuota,
            Box::new(|| {
                let mut p = policy();
                for (i, text) in ["Water break!", "Time for some water", "Have you had water?"].iter().enumerate() {
                    p.record_fired(
                        Action::Nudge,
                        Some(&format!("s:{i}")),
                        text,
                        Priority::Low,
                        Some("water"),
                        noon() - Duration::hours(2 + i as i64),
                    );
                }
                (p, noon(), Action::Nudge)
            }),
        ),
    ]
}

#[test]
fn every_layer_alone_denies_and_the_verdict_names_it() {
    // Without any setup the message is allowed.
    assert!(ask(&policy(), MSG, Priority::Low, noon()).allow);
    let cases = layer_cases();
    assert_eq!(cases.len(), PolicyLayer::ALL.len(), "one case per layer");
    for (layer, setup) in cases {
        let (p, at, action) = setup();
        let v = p.check(action, Some("cli:1"), MSG, Priority::Low, at);
        assert_denied_by(&v, layer);
        assert!(!v.reason.is_empty());
    }
}

#[test]
fn high_priority_bypasses_exactly_the_rows_the_spec_marks_yes() {
    for (layer, setup) in layer_cases() {
        if layer == PolicyLayer::Skip {
            continue; // n/a in the table: a skip is never delivered
        }
        let (p, at, action) = setup();
        let v = p.check(action, Some("cli:1"), MSG, Priority::High, at);
        let spec_says_bypass = matches!(
            layer,
            PolicyLayer::QuietHours | PolicyLayer::DynamicDnd | PolicyLayer::PersonaDnd | PolicyLayer::HourQuota
        );
        if spec_says_bypass {
            assert!(v.allow, "{layer}: high priority should bypass, got {v:?}");
            assert_eq!(v.bypassed, vec![layer]);
        } else {
            assert_denied_by(&v, layer);
        }
    }
}

#[test]
fn the_quiet_hours_bypass_is_withdrawn_when_high_priority_acceptance_is_low() {
    let mut p = policy();
    let night = noon() + Duration::hours(12);
    assert!(ask(&p, MSG, Priority::High, night).allow);
    assert!(p.snapshot_state(night).quiet_bypass_open);
    with_feedback(&mut p, |s| s.high_priority = Rate { accepted: 1, dismissed: 5 });
    let v = ask(&p, MSG, Priority::High, night);
    assert_denied_by(&v, PolicyLayer::QuietHours);
    assert!(v.reason.contains("withdrawn"), "{}", v.reason);
    assert!(!p.snapshot_state(night).quiet_bypass_open, "what the Sentinel's fast path reads");
    // Too few verdicts to judge: the bypass stays.
    with_feedback(&mut p, |s| s.high_priority = Rate { accepted: 0, dismissed: 2 });
    assert!(ask(&p, MSG, Priority::High, night).allow);
    // The withdrawal is about quiet hours only: other bypasses still apply by day.
    with_feedback(&mut p, |s| {
        s.high_priority = Rate { accepted: 1, dismissed: 5 };
        s.by_hour[12] = Rate { accepted: 0, dismissed: 3 };
    });
    assert!(ask(&p, MSG, Priority::High, noon()).allow);
}

#[test]
fn quiet_hours_follow_the_users_time_zone() {
    let p = NudgePolicy::new(PolicyConfig::default(), chrono_tz::Asia::Tokyo);
    // 15:00 UTC is 00:00 in Tokyo.
    let v = ask(&p, MSG, Priority::Low, noon() + Duration::hours(3));
    assert_denied_by(&v, PolicyLayer::QuietHours);
    assert!(v.reason.contains("Asia/Tokyo"));
    assert!(ask(&p, MSG, Priority::Low, noon() - Duration::hours(9)).allow, "03:00 UTC is 12:00 in Tokyo");
}

#[test]
fn hour_quota_is_a_rolling_window() {
    let mut p = policy();
    p.record_fired(Action::Nudge, Some("a:1"), "first thing", Priority::Low, Some("t1"), noon());
    p.record_fired(
        Action::Nudge,
        Some("a:2"),
        "second thing",
        Priority::Low,
        Some("t2"),
        noon() + Duration::minutes(10),
    );
    assert_denied_by(&ask(&p, MSG, Priority::Low, noon() + Duration::minutes(59)), PolicyLayer::HourQuota);
    assert!(ask(&p, MSG, Priority::Low, noon() + Duration::minutes(60)).allow, "the first fire left the window");
}

#[test]
fn day_quota_resets_at_local_midnight() {
    let cfg = PolicyConfig {
        // An empty window: no quiet hours.
        quiet_hours: Window::new(TimeOfDay::hm(0, 0), TimeOfDay::hm(0, 0)),
        ..Default::default()
    };
    let tz = chrono_tz::Europe::Berlin;
    let mut p = NudgePolicy::new(cfg, tz);
    // 2026-03-02 in Berlin (UTC+1): fires from 08:00 to 22:00 local.
    let local8 = tz.with_ymd_and_hms(2026, 3, 2, 8, 0, 0).unwrap().with_timezone(&Utc);
    fire_distinct(&mut p, 8, local8, Duration::hours(2));
    let before_midnight = tz.with_ymd_and_hms(2026, 3, 2, 23, 59, 0).unwrap().with_timezone(&Utc);
    assert_denied_by(&ask(&p, MSG, Priority::High, before_midnight), PolicyLayer::DayQuota);
    let after_midnight = tz.with_ymd_and_hms(2026, 3, 3, 0, 0, 0).unwrap().with_timezone(&Utc);
    assert!(ask(&p, MSG, Priority::Low, after_midnight).allow);
}

/// `max_per_weekend_day = 2`: a Saturday takes two nudges, a Monday the day's eight; a
/// preference may lower it (never raise it), and the Planner sees the weekend's remainder.
#[test]
fn a_weekend_day_has_its_own_lower_cap() {
    let cfg = PolicyConfig {
        quiet_hours: Window::new(TimeOfDay::hm(0, 0), TimeOfDay::hm(0, 0)),
        max_per_weekend_day: Some(2),
        ..Default::default()
    };
    let saturday = Utc.with_ymd_and_hms(2026, 3, 7, 8, 0, 0).unwrap();
    let mut p = NudgePolicy::new(cfg.clone(), Tz::UTC);
    fire_distinct(&mut p, 2, saturday, Duration::hours(2));
    let later = saturday + Duration::hours(6);
    assert_eq!(p.snapshot_state(later).remaining_today, 0);
    assert_denied_by(&ask(&p, MSG, Priority::Low, later), PolicyLayer::DayQuota);
    let monday = Utc.with_ymd_and_hms(2026, 3, 9, 8, 0, 0).unwrap();
    fire_distinct(&mut p, 2, monday, Duration::hours(2));
    assert!(ask(&p, MSG, Priority::Low, monday + Duration::hours(6)).allow, "a weekday keeps max_per_day");

    let (eff, notes) =
        overrides::tighten(&cfg, &PolicyOverrides { max_per_weekend_day: Some(1), ..Default::default() });
    assert_eq!((eff.max_per_weekend_day, notes.len()), (Some(1), 0));
    let (eff, notes) =
        overrides::tighten(&cfg, &PolicyOverrides { max_per_weekend_day: Some(5), ..Default::default() });
    assert_eq!((eff.max_per_weekend_day, notes.len()), (Some(2), 1), "never raised: {notes:?}");
    let unset = PolicyConfig::default();
    let (eff, _) = overrides::tighten(&unset, &PolicyOverrides { max_per_weekend_day: Some(2), ..Default::default() });
    assert_eq!(eff.max_per_weekend_day, Some(2), "a preference alone sets it");
}

#[test]
fn session_and_dismissal_cooldowns_expire_on_time() {
    let mut p = policy();
    p.record_fired(Action::Nudge, Some("cli:1"), "Stretch your legs", Priority::Low, None, noon());
    assert_denied_by(&ask(&p, MSG, Priority::Low, noon() + Duration::minutes(29)), PolicyLayer::SessionCooldown);
    assert!(ask(&p, MSG, Priority::Low, noon() + Duration::minutes(30)).allow);
    assert!(
        p.check(Action::Nudge, Some("cli:2"), MSG, Priority::Low, noon() + Duration::minutes(1)).allow,
        "per session"
    );
    let mut p = policy();
    p.record_fired(Action::Nudge, None, "Stretch your legs", Priority::Low, None, noon());
    let untargeted = p.check(Action::Nudge, None, MSG, Priority::Low, noon() + Duration::minutes(1));
    assert!(
        untargeted.reason.starts_with("the default targets were nudged at"),
        "not `session *`: {}",
        untargeted.reason
    );

    let mut p = policy();
    with_feedback(&mut p, |s| s.last_dismissal = Some(noon()));
    assert_denied_by(&ask(&p, MSG, Priority::Low, noon() + Duration::minutes(119)), PolicyLayer::DismissalCooldown);
    assert!(ask(&p, MSG, Priority::Low, noon() + Duration::minutes(120)).allow);
}

#[test]
fn topic_reject_cooldown_scales_with_weight() {
    let mut p = policy();
    let reject = |w: f64| TopicFeedback {
        rate: Rate { accepted: 0, dismissed: 1 },
        reject_weight: w,
        last_reject: Some(noon()),
        ..Default::default()
    };
    with_feedback(&mut p, |s| {
        s.by_topic.insert("water".into(), reject(0.9));
    });
    assert!(ask(&p, MSG, Priority::Low, noon() + Duration::hours(1)).allow, "below the threshold");
    with_feedback(&mut p, |s| {
        s.by_topic.insert("water".into(), reject(2.0));
    });
    assert_denied_by(&ask(&p, MSG, Priority::Low, noon() + Duration::hours(95)), PolicyLayer::TopicRejectCooldown);
    assert!(ask(&p, MSG, Priority::Low, noon() + Duration::hours(96)).allow, "48h x weight 2");
}

#[test]
fn a_muted_topic_and_a_snooze_deny_and_a_snooze_is_not_bypassed_by_high_priority() {
    let mut p = policy();
    with_feedback(&mut p, |s| {
        s.muted.insert("water".into(), noon() + Duration::days(30));
    });
    assert_denied_by(&ask(&p, MSG, Priority::High, noon()), PolicyLayer::TopicRejectCooldown);
    assert!(ask(&p, MSG, Priority::Low, noon() + Duration::days(30)).allow, "the mute ends");
    let mut p = policy();
    with_feedback(&mut p, |s| s.snoozed_until = Some(noon() + Duration::hours(2)));
    assert_denied_by(&ask(&p, "Call the bank", Priority::High, noon()), PolicyLayer::PersonaDnd);
    assert!(ask(&p, "Call the bank", Priority::Low, noon() + Duration::hours(2)).allow);
}

#[test]
fn a_single_stop_cools_its_topic_down_although_its_weight_decays() {
    let mut p = policy();
    with_feedback(&mut p, |s| {
        let t = TopicFeedback {
            rate: Rate { accepted: 0, dismissed: 1 },
            reject_weight: 0.99,
            weight_at_last_reject: 1.0,
            last_reject: Some(noon()),
        };
        s.by_topic.insert("water".into(), t);
    });
    assert_denied_by(&ask(&p, MSG, Priority::Low, noon() + Duration::minutes(10)), PolicyLayer::TopicRejectCooldown);
}

#[test]
fn high_priority_passes_the_quiet_hours_once_per_topic_per_window() {
    let mut p = policy();
    let ask_on = |p: &NudgePolicy, session: &str, content: &str, topic: &str, at: DateTime<Utc>| {
        let req = CheckRequest {
            action: Action::Nudge,
            session_key: Some(session),
            content,
            priority: Priority::High,
            topic: Some(topic),
            solicited: false,
        };
        p.explain(&req, at).0
    };
    let night = Utc.with_ymd_and_hms(2026, 3, 2, 23, 30, 0).unwrap();
    let first = ask_on(&p, "cli:1", "Call the bank: the payment is overdue", "bank", night);
    assert!(first.allow && first.bypassed.contains(&PolicyLayer::QuietHours), "{first:?}");
    p.record_fired(Action::Nudge, Some("cli:1"), "Call the bank", Priority::High, Some("bank"), night);
    let later = night + Duration::hours(3);
    let again = ask_on(&p, "cli:2", "The bank payment, again", "bank", later);
    assert_denied_by(&again, PolicyLayer::QuietHours);
    assert!(again.reason.contains("already passed this window once for `bank`"), "{again:?}");
    assert!(ask_on(&p, "cli:3", "Your flight leaves at 6", "flight", later).allow, "another topic may");
    let next_night = night + Duration::hours(24);
    assert!(ask_on(&p, "cli:4", "The bank payment", "bank", next_night).allow, "the next window may");
}

#[test]
fn dedup_window_expires() {
    let mut p = policy();
    p.record_fired(Action::Nudge, Some("tg:1"), MSG, Priority::Low, Some("x"), noon());
    let v =
        p.check(Action::Nudge, Some("tg:2"), "drink a glass  of WATER", Priority::Low, noon() + Duration::minutes(359));
    assert_denied_by(&v, PolicyLayer::ContentDedup);
    assert!(p.check(Action::Nudge, Some("tg:2"), MSG, Priority::Low, noon() + Duration::minutes(361)).allow);
}

#[test]
fn topic_quota_stack_counts_hour_day_and_week() {
    let mut p = policy();
    p.record_fired(Action::Nudge, Some("a:1"), "water one", Priority::Low, Some("water"), noon());
    let v = p.check_request(
        &CheckRequest {
            action: Action::Nudge,
            session_key: Some("b:1"),
            content: "water two",
            priority: Priority::Low,
            topic: Some("water"),
            solicited: false,
        },
        noon() + Duration::minutes(30),
    );
    assert_denied_by(&v, PolicyLayer::TopicQuota);
    assert!(v.reason.contains("hour"));
    // Week: 10 fires 14 hours apart (never 3 in a day).
    let mut p = policy();
    for i in 0..10 {
        let at = noon() - Duration::days(6) + Duration::hours(14 * i);
        p.record_fired(Action::Nudge, Some(&format!("s:{i}")), &format!("water {i}"), Priority::Low, Some("water"), at);
    }
    let v = p.check_request(
        &CheckRequest {
            action: Action::Nudge,
            session_key: Some("b:1"),
            content: "water again",
            priority: Priority::Low,
            topic: Some("water"),
            solicited: false,
        },
        noon(),
    );
    assert_denied_by(&v, PolicyLayer::TopicQuota);
    assert!(v.reason.contains("week"), "{}", v.reason);
}

#[test]
fn spawn_has_its_own_quota_line_but_shares_dedup() {
    let mut p = policy();
    fire_distinct(&mut p, 8, noon() - Duration::hours(11), Duration::hours(1));
    assert_denied_by(&ask(&p, MSG, Priority::Low, noon()), PolicyLayer::DayQuota);
    let task = "Compile the weekly digest";
    assert!(
        p.check(Action::SpawnAgent, Some("cli:1"), task, Priority::Low, noon()).allow,
        "nudge quota is not spawn quota"
    );
    p.record_fired(Action::SpawnAgent, Some("cli:1"), task, Priority::Low, None, noon());
    let v = p.check(Action::SpawnAgent, Some("tg:7"), task, Priority::Low, noon() + Duration::hours(2));
    assert_denied_by(&v, PolicyLayer::ContentDedup);
    // And a spawn's day cap is its own.
    let mut p = policy();
    for i in 0..4 {
        p.record_fired(
            Action::SpawnAgent,
            Some(&format!("s:{i}")),
            &format!("task {i} {}", "x".repeat(i + 3)),
            Priority::Low,
            Some(&format!("t{i}")),
            noon() - Duration::hours(2 + i as i64),
        );
    }
    assert_denied_by(
        &p.check(Action::SpawnAgent, Some("z:1"), "another task entirely", Priority::Low, noon()),
        PolicyLayer::DayQuota,
    );
    assert!(ask(&p, MSG, Priority::Low, noon()).allow, "spawns did not use the nudge quota");
}

#[test]
fn a_cron_fire_suppresses_the_topic_in_the_dedup_window_without_charging_quota() {
    let mut p = policy();
    for i in 0..20 {
        p.record_cron_fire(Some(&format!("job{i}")), &format!("cron job {i}"), noon() - Duration::minutes(5));
    }
    p.record_cron_fire(None, "Take your medication", noon());
    let v = ask(&p, "Remember the medications!", Priority::Low, noon() + Duration::hours(1));
    assert_denied_by(&v, PolicyLayer::ContentDedup);
    assert!(v.reason.contains("cron"), "{}", v.reason);
    assert!(ask(&p, MSG, Priority::Low, noon()).allow, "21 cron fires charged no quota");
    assert!(ask(&p, "Remember the medications!", Priority::Low, noon() + Duration::minutes(361)).allow);
    assert_eq!(p.snapshot_state(noon()).remaining_today, 8);
}

/// A recurring job's fires are all the same topic and text: only its latest one can matter to
/// a layer (cron fires charge no quota), so the ledger keeps one record per job however often
/// it fires, and a week of an every-minute job does not grow state.json by 10,000 records.
#[test]
fn a_recurring_cron_job_keeps_one_ledger_record_and_still_suppresses_its_topic() {
    let mut p = policy();
    for minute in 0..600 {
        let at = noon() - Duration::hours(10) + Duration::minutes(minute);
        p.record_cron_fire(None, "Take your medication", at);
        p.record_cron_fire(None, &format!("Stand up, round {}", minute % 3), at);
    }
    assert_eq!(p.state().fires.len(), 4, "one per topic and text: {:?}", p.state().fires);
    assert_eq!(p.state().fires.iter().map(|f| f.at).max(), Some(noon() - Duration::minutes(1)));
    let v = ask(&p, "Remember the medications!", Priority::Low, noon() + Duration::hours(1));
    assert_denied_by(&v, PolicyLayer::ContentDedup);
    assert!(ask(&p, "Remember the medications!", Priority::Low, noon() + Duration::minutes(360)).allow);
    // Sentinel fires are each kept: they are counted by the quotas.
    fire_distinct(&mut p, 3, noon(), Duration::minutes(1));
    p.record_fired(Action::Nudge, Some("s:0"), "alphaalphaalpha check-in number 0", Priority::Low, None, noon());
    assert_eq!(p.state().fires.len(), 8);
}

#[test]
fn adaptive_tuning_tightens_and_loosens_the_hour_quota() {
    let mut p = policy();
    assert_eq!(p.hour_limit(false, chrono::Weekday::Mon), 2);
    let summary = |a, d| FeedbackSummary { overall: Rate { accepted: a, dismissed: d }, ..Default::default() };
    assert!(matches!(p.apply_adaptive_tuning(summary(1, 9)), Tuning::Tightened { .. }));
    assert_eq!(p.hour_limit(false, chrono::Weekday::Mon), 1);
    p.record_fired(Action::Nudge, Some("a:1"), "something", Priority::Low, None, noon());
    assert_denied_by(&ask(&p, MSG, Priority::Low, noon() + Duration::minutes(40)), PolicyLayer::HourQuota);
    assert!(matches!(p.apply_adaptive_tuning(summary(20, 0)), Tuning::Loosened { .. }));
    assert_eq!(p.hour_limit(false, chrono::Weekday::Mon), 3);
    assert!(ask(&p, MSG, Priority::Low, noon() + Duration::minutes(40)).allow);
    assert_eq!(p.snapshot_state(noon()).adaptive_multiplier, 1.5);
}

#[test]
fn the_weekend_factor_stacks_on_the_multiplier() {
    let p = policy();
    assert_eq!(p.hour_limit(false, chrono::Weekday::Sat), 1);
    let saturday = noon() + Duration::days(5);
    let snap = p.snapshot_state(saturday);
    assert_eq!(snap.weekend_factor, 0.5);
    assert_eq!(snap.remaining_this_hour, 1);
}

#[test]
fn no_flapping_across_a_hundred_ticks_around_the_threshold() {
    let mut p = policy();
    let mut changes = 0;
    let mut directions = Vec::new();
    for tick in 0..100u32 {
        // Acceptance jitters between 34% and 36% (50 verdicts): the target multiplier
        // hovers around the edge of the band below 1.0.
        let accepted = if tick % 2 == 0 { 17 } else { 18 };
        let s = FeedbackSummary { overall: Rate { accepted, dismissed: 50 - accepted }, ..Default::default() };
        match p.apply_adaptive_tuning(s) {
            Tuning::Tightened { .. } => {
                changes += 1;
                directions.push('-')
            }
            Tuning::Loosened { .. } => {
                changes += 1;
                directions.push('+')
            }
            _ => {}
        }
    }
    assert!(changes <= 1, "multiplier moved {changes} times: {directions:?}");
    let m = p.snapshot_state(noon()).adaptive_multiplier;
    assert!(m < 1.0 && m > 0.8, "{m}");
    // Jitter around the pivot never moves it at all.
    let mut p = policy();
    for tick in 0..100u32 {
        let accepted = 20 + (tick % 5) * 2; // 40%..56%
        let s = FeedbackSummary { overall: Rate { accepted, dismissed: 50 - accepted }, ..Default::default() };
        assert_eq!(p.apply_adaptive_tuning(s), Tuning::Unchanged, "tick {tick}");
    }
}

#[test]
fn overrides_tighten_on_the_next_check_and_loosening_is_refused() {
    let mut p = policy();
    let at = noon() + Duration::hours(10); // 22:00
    assert!(ask(&p, MSG, Priority::Low, at).allow);
    let notes = p.set_overrides(&PolicyOverrides {
        quiet_hours: Some(Window::new(TimeOfDay::hm(21, 0), TimeOfDay::hm(7, 0))),
        ..Default::default()
    });
    assert!(notes.is_empty());
    assert_denied_by(&ask(&p, MSG, Priority::Low, at), PolicyLayer::QuietHours);
    let notes = p.set_overrides(&PolicyOverrides {
        quiet_hours: Some(Window::new(TimeOfDay::hm(1, 0), TimeOfDay::hm(5, 0))),
        max_per_day: Some(99),
        ..Default::default()
    });
    assert_eq!(notes.len(), 1, "a narrower window inside the configured one is merged in; a higher cap is refused");
    assert_denied_by(
        &ask(&p, MSG, Priority::Low, noon() + Duration::hours(11) + Duration::minutes(30)),
        PolicyLayer::QuietHours,
    );
}

#[test]
fn fire_history_lists_recent_topics_with_reactions() {
    let mut p = policy();
    p.record_fired(Action::Nudge, Some("a:1"), "Drink water", Priority::Low, None, noon());
    with_feedback(&mut p, |s| {
        s.by_topic
            .insert("water".into(), TopicFeedback { rate: Rate { accepted: 2, dismissed: 1 }, ..Default::default() });
    });
    let h = p.fire_history(noon());
    assert_eq!(h["water"].fired, 1);
    assert_eq!(h["water"].accepted, 2);
    assert_eq!(h["water"].dismissed, 1);
    assert!(p.fire_history(noon() + Duration::days(8)).is_empty());
}

#[test]
fn the_ledger_forgets_what_no_layer_can_see() {
    let mut p = policy();
    fire_distinct(&mut p, 5, noon() - Duration::days(20), Duration::hours(1));
    p.record_fired(Action::Nudge, Some("a:1"), "fresh", Priority::Low, None, noon());
    assert_eq!(p.state().fires.len(), 1);
}

mod actor {
    use super::*;
    use crate::clock::ManualClock;
    use crate::store::JsonStateStore;
    use crate::supervise::{start, Handle, Metrics, RestartPolicy};
    use std::path::Path;

    fn nudge(session: &str, content: &str) -> Nudge {
        Nudge {
            action: Action::Nudge,
            session_key: Some(session.into()),
            content: content.into(),
            priority: Priority::Low,
            topic: None,
            solicited: false,
        }
    }

    fn check(content: &str) -> Check {
        Check(nudge("cli:1", content))
    }

    /// A policy actor on the state file at `path`.
    fn service(path: &Path, clock: &ManualClock, metrics: &Metrics) -> Handle<NudgePolicyService> {
        let store = Some(crate::policy::ledger_in(JsonStateStore::new(path)));
        start(NudgePolicyService::new(policy(), store, clock.shared()), metrics, RestartPolicy::default())
    }

    fn stored(path: &Path) -> PolicyState {
        JsonStateStore::new(path).read::<PolicyState>("policy").unwrap().0
    }

    #[actix_rt::test]
    async fn a_failed_dispatch_charges_no_quota_and_a_good_one_does() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("state.json");
        let clock = ManualClock::new(noon());
        let h = service(&path, &clock, &Metrics::default());

        let out: Gated<(), &str> = dispatch_through(&h, nudge("cli:1", MSG), || async { Err("outlet down") }).await;
        assert!(matches!(out, Gated::Failed("outlet down")));
        assert_eq!(h.call(Snapshot).await.unwrap().state.remaining_today, 8, "nothing charged");
        assert!(stored(&path).fires.is_empty());

        let out: Gated<u8, &str> = dispatch_through(&h, nudge("cli:1", MSG), || async { Ok(7) }).await;
        assert!(matches!(out, Gated::Delivered(7)));
        assert_eq!(h.call(Snapshot).await.unwrap().state.remaining_today, 7);
        assert_eq!(stored(&path).fires.len(), 1);
        let out: Gated<u8, &str> = dispatch_through(&h, nudge("cli:1", MSG), || async { Ok(7) }).await;
        let Gated::Denied(v) = out else { panic!("expected a denial") };
        assert_eq!(v.layer, Some(PolicyLayer::SessionCooldown));
    }

    #[actix_rt::test]
    async fn the_fire_is_on_disk_before_the_dispatch_runs_so_a_crash_never_sends_twice() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("state.json");
        let clock = ManualClock::new(noon());
        let h = service(&path, &clock, &Metrics::default());
        let p = path.clone();
        let out: Gated<usize, &str> =
            dispatch_through(&h, nudge("cli:1", MSG), || async move { Ok(stored(&p).fires.len()) }).await;
        assert!(matches!(out, Gated::Delivered(1)), "charged before it went out: {out:?}");
    }

    /// Two gates sharing one ledger in the test double hold the same rule as on a file or the
    /// database: each sees the other's fire (the keeper's version moved) and denies after it.
    #[actix_rt::test]
    async fn two_policies_sharing_the_test_double_see_each_others_fires() {
        use crate::store::keeper::MemoryKeeper;
        let clock = ManualClock::new(noon());
        let metrics = Metrics::default();
        let ledger: crate::policy::LedgerKeeper = std::sync::Arc::new(MemoryKeeper::<PolicyState>::default());
        let gate = |ledger: &crate::policy::LedgerKeeper| {
            let service = NudgePolicyService::new(policy(), Some(ledger.clone()), clock.shared());
            start(service, &metrics, RestartPolicy::default())
        };
        let (a, b) = (gate(&ledger), gate(&ledger));
        assert!(matches!(a.call_async(Reserve(nudge("cli:1", MSG))).await.unwrap().unwrap(), Reservation::Held(..)));
        let v = b.call(check(MSG)).await.unwrap();
        assert_eq!(v.layer, Some(PolicyLayer::SessionCooldown), "b hydrated a's fire: {v:?}");
        assert_eq!(ledger.load().unwrap().0.fires.len(), 1, "the fire is in the keeper");
    }

    #[actix_rt::test]
    async fn two_policies_on_one_state_file_see_each_others_fires() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("state.json");
        let clock = ManualClock::new(noon());
        let metrics = Metrics::default();
        let a = service(&path, &clock, &metrics);
        let b = service(&path, &clock, &metrics);
        assert!(b.call(check(MSG)).await.unwrap().allow);
        assert!(matches!(a.call_async(Reserve(nudge("cli:1", MSG))).await.unwrap().unwrap(), Reservation::Held(..)));
        let v = b.call(check(MSG)).await.unwrap();
        assert_eq!(v.layer, Some(PolicyLayer::SessionCooldown), "b hydrated a's fire: {v:?}");
        // b's own fire merges with a's instead of overwriting it.
        clock.advance(Duration::hours(3));
        assert!(matches!(b.call_async(Reserve(nudge("tg:2", "other"))).await.unwrap().unwrap(), Reservation::Held(..)));
        assert_eq!(stored(&path).fires.len(), 2);
        assert_eq!(a.call(Snapshot).await.unwrap().state.remaining_today, 6);
    }

    #[actix_rt::test]
    async fn a_cron_fire_through_the_actor_suppresses_the_topic() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("state.json");
        let clock = ManualClock::new(noon());
        let h = service(&path, &clock, &Metrics::default());
        let cron = RecordCronFire { topic: Some("water".into()), content: "Hydrate!".into() };
        h.call_async(cron).await.unwrap().unwrap();
        let v = h.call(check(MSG)).await.unwrap();
        assert_eq!(v.layer, Some(PolicyLayer::ContentDedup), "{v:?}");
        assert_eq!(stored(&path).fires[0].kind, FireKind::Cron);
    }

    #[actix_rt::test]
    async fn tuning_through_the_actor_persists_the_multiplier() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("state.json");
        let metrics = Metrics::default();
        let a = service(&path, &ManualClock::new(noon()), &metrics);
        let s = FeedbackSummary { overall: Rate { accepted: 1, dismissed: 9 }, ..Default::default() };
        assert!(matches!(a.call_async(ApplyTuning(s)).await.unwrap().unwrap(), Tuning::Tightened { .. }));
        assert!((stored(&path).multiplier - 0.6).abs() < 1e-9);
        assert_eq!(metrics.snapshot()[0].name, "NudgePolicy");
    }
}
