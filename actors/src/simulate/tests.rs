use super::*;
use chrono::{DateTime, Duration, Utc};

fn plan(text: &str) -> Plan {
    parse(text, "tiny", Adjust::default()).expect("scenario")
}

async fn run(text: &str) -> Output {
    simulate(&plan(text), &Place::Temporary).await.expect("simulation")
}

fn day<'a>(out: &'a Output, date: &str) -> &'a report::Counts {
    &out.report.days.iter().find(|d| d.date == date).unwrap_or_else(|| panic!("no day {date}")).counts
}

#[actix_rt::test]
async fn a_deadline_at_ten_is_nudged_once_and_not_proposed_again() {
    let out = run(r##"
start = "2026-03-02T09:00:00Z"
hours = 1
[config.brief]
enabled = false
[memory]
text = "# Memory\n- [ ] Send the report due: 2026-03-02 10:00\n"
"##)
    .await;
    let d = day(&out, "2026-03-02");
    assert_eq!(d.ticks, 2);
    assert_eq!(d.nudges_sent(), 1, "{}", out.text);
    assert_eq!(d.nudges.get("nudge"), Some(&1));
    assert!(d.denials.is_empty(), "reminded once, it is not proposed again to be denied: {}", out.text);
    assert_eq!(d.rules_calls.get("planner"), Some(&2), "{}", out.text);
    assert!(d.llm_calls.is_empty() && out.text.contains("llm calls:    0 (-)"), "no LLM: {}", out.text);
    let sent: Vec<_> = out.report.marks.iter().filter(|m| m.lane == "sentinel").collect();
    assert_eq!(sent.len(), 1);
    assert!(sent[0].label.contains("Send the report"), "{}", sent[0].label);
    assert_eq!(d.deliveries.get("cli"), Some(&1));
}

#[actix_rt::test]
async fn a_night_deadline_is_skipped_by_the_quiet_hours_fast_path_without_an_llm_call() {
    let out = run(r##"
start = "2026-03-02T23:00:00Z"
hours = 4
[memory]
text = "# Memory\n- [ ] Night backup due: 2026-03-03 02:00\n"
[config.heartbeat]
enabled = false
"##)
    .await;
    assert_eq!(out.report.days.len(), 2);
    let (first, second) = (day(&out, "2026-03-02"), day(&out, "2026-03-03"));
    assert_eq!((first.ticks, second.ticks), (2, 6));
    assert_eq!(first.avoided.get("quiet_hours"), Some(&2));
    assert_eq!(second.avoided.get("quiet_hours"), Some(&6));
    assert_eq!(out.report.total.nudges_sent(), 0, "{}", out.text);
    assert_eq!(out.report.total.rules_calls.get("planner"), None, "{}", out.text);
}

#[actix_rt::test]
async fn a_cron_every_hour_fires_six_times_in_six_hours_and_strikes_pause_it_by_default() {
    let job = r##"
start = "2026-03-02T08:00:00Z"
hours = 6
[[cron]]
id = "water"
message = "Drink water"
every_minutes = 60
"##;
    let raised = format!("{job}[config.cron]\nstrike_limit = 10\n");
    let out = run(&raised).await;
    assert_eq!(out.report.total.cron_fires, 6, "{}", out.text);
    assert_eq!(out.report.marks.iter().filter(|m| m.lane == "cron").count(), 6);
    let minutes: Vec<i64> = out.report.marks.iter().filter(|m| m.lane == "cron").map(|m| m.minute).collect();
    assert_eq!(minutes, [0, 60, 120, 180, 240, 300]);
    // With the default strike limit (5 fires with no reply) the sixth never comes.
    let out = run(job).await;
    assert_eq!(out.report.total.cron_fires, 5, "{}", out.text);
    assert!(out.report.notes.iter().any(|n| n.contains("paused")), "{:?}", out.report.notes);
}

#[actix_rt::test]
async fn messages_and_verdicts_are_counted_and_a_verdict_with_no_nudge_is_noted() {
    let out = run(r##"
start = "2026-03-02T09:00:00Z"
hours = 2
[config.brief]
enabled = false
[memory]
text = "# Memory\n- [ ] Send the report due: 2026-03-02 10:00\n"
[[message]]
at = "2026-03-02T09:05:00Z"
text = "hello"
[[feedback]]
at = "2026-03-02T08:00:00Z"
verdict = "neutral"
[[feedback]]
at = "2026-03-02T09:10:00Z"
verdict = "accepted"
"##)
    .await;
    let t = &out.report.total;
    assert_eq!(t.user_messages, 1);
    assert_eq!(t.verdicts.get("accepted"), Some(&1));
    assert_eq!(t.rules_calls.get("user turn"), Some(&1), "{}", out.text);
    assert!(out.report.notes.iter().any(|n| n.contains("`neutral` had no nudge")), "{:?}", out.report.notes);
}

#[actix_rt::test]
async fn the_svg_has_one_lane_per_source_and_a_shaded_rect_per_quiet_span() {
    let p = plan(
        r##"
start = "2026-03-02T00:00:00+01:00"
days = 2
timezone = "Europe/Berlin"
[config.heartbeat]
enabled = false
"##,
    );
    let out = simulate(&p, &Place::Temporary).await.unwrap();
    for (key, label, _) in svg::LANES {
        assert_eq!(out.svg.matches(&format!(r#"data-lane="{key}""#)).count(), 1, "{key}");
        assert!(out.svg.contains(label));
    }
    // 00:00-07:00 and 23:00-07:00 twice: the first night and each evening, clipped to the run.
    let spans = svg::quiet_spans(&p, &drive::config_for(&p).unwrap().policy.quiet_hours);
    assert_eq!(spans.len(), 3);
    assert_eq!(out.svg.matches(r#"<rect class="quiet""#).count(), 3);
    assert_eq!(out.svg.matches(r#"class="day-label""#).count(), 2);
    assert!(out.svg.contains("Mon 2026-03-02") && out.svg.contains("Tue 2026-03-03"));
    assert!(out.svg.starts_with("<svg") && out.svg.trim_end().ends_with("</svg>"));
    // An hour axis (06, 12, 18 each day) and a legend for the quiet band.
    assert_eq!(out.svg.matches(r#"class="hour-label""#).count(), 6);
    assert!(out.svg.contains(">quiet hours 23:00-07:00</text>"), "{}", out.svg);
}

/// A denied mark takes its layer's colour, and the legend names each layer shown; tooltips
/// are in the scenario's zone; a calendar event is drawn when it starts, not when it was noted.
#[actix_rt::test]
async fn the_svg_colours_denials_by_layer_and_shows_local_times() {
    let p = plan(
        r##"
start = "2026-03-02T00:00:00+01:00"
days = 2
timezone = "Europe/Berlin"
[[calendar]]
title = "Team lunch"
at = "2026-03-03T12:30:00+01:00"
"##,
    );
    let out = simulate(&p, &Place::Temporary).await.unwrap();
    let lunch = out.svg.lines().find(|l| l.contains("CET Team lunch")).expect("the calendar mark");
    assert!(lunch.contains("<title>Tue 2026-03-03 12:30 CET Team lunch"), "{lunch}");
    // Two denials at different layers, drawn in their layers' colours.
    let mut report = out.report.clone();
    for (minute, label) in
        [(600, "nudge denied at layer 2 (quiet_hours)"), (700, "nudge denied at layer 10 (content_dedup)")]
    {
        let at = (p.start + chrono::Duration::minutes(minute)).to_rfc3339();
        report.marks.push(report::Mark { at, minute, lane: "denied".into(), label: label.into() });
    }
    let quiet = drive::config_for(&p).unwrap().policy.quiet_hours;
    let drawn = svg::render(&p, &report, &quiet);
    let denied = drawn.lines().filter(|l| l.contains("<circle") && l.contains("denied at layer ")).collect::<Vec<_>>();
    assert_eq!(denied.len(), 2, "{drawn}");
    for mark in &denied {
        let n: usize = mark.split("layer ").nth(1).unwrap().split(' ').next().unwrap().parse().unwrap();
        assert!(mark.contains(&format!("fill=\"{}\"", svg::LAYER_COLOURS[n - 1])), "{mark}");
        assert!(drawn.contains(&format!(">layer {n}</text>")), "the legend names layer {n}");
    }
}

#[test]
fn a_bad_scenario_names_the_key_and_the_line() {
    let err = parse("start = \"2026-03-02T00:00:00Z\"\ndayz = 3\n", "bad", Adjust::default()).unwrap_err();
    assert!(err.contains("dayz") && err.contains("line 2"), "{err}");
    let err = parse("start = \"monday\"\n", "bad", Adjust::default()).unwrap_err();
    assert!(err.contains("start") && err.contains("RFC 3339"), "{err}");
    let text = "start = \"2026-03-02T00:00:00Z\"\n[[cron]]\nid = \"x\"\nmessage = \"m\"\n";
    let err = parse(text, "bad", Adjust::default()).unwrap_err();
    assert!(err.contains("cron[0]") && err.contains("exactly one"), "{err}");
    let text = "start = \"2026-03-02T00:00:00Z\"\n[[feedback]]\nat = \"2026-03-02T01:00:00Z\"\nverdict = \"meh\"\n";
    assert!(parse(text, "bad", Adjust::default()).unwrap_err().contains("feedback[0].verdict"));
}

#[test]
fn the_seed_moves_message_times_within_the_jitter_and_the_days_flag_wins() {
    let text = "start = \"2026-03-02T00:00:00Z\"\ndays = 3\njitter_minutes = 10\nhours = 5\n[[message]]\nat = \"2026-03-02T09:00:00Z\"\ntext = \"hi\"\n";
    let at = |seed| parse(text, "j", Adjust { seed: Some(seed), days: None }).unwrap().events[0].0;
    assert_eq!(at(1), at(1));
    let base = chrono::DateTime::parse_from_rfc3339("2026-03-02T09:00:00Z").unwrap().to_utc();
    assert!((0..20).all(|s| (at(s) - base).num_minutes().abs() <= 10));
    assert!((0..20).any(|s| at(s) != at(0)));
    let p = parse(text, "j", Adjust { days: Some(2), seed: None }).unwrap();
    assert_eq!((p.end - p.start).num_hours(), 48);
}

/// The shipped month of plain-written notes: every item is nudged in the two days before it,
/// nothing is said about an event once it started, a deadline is mentioned overdue at most
/// once, and the done one never.
#[actix_rt::test]
async fn the_month_of_plain_notes_nudges_each_item_before_it_and_never_after() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../scenarios/month.toml");
    let plan = load(&path, Adjust::default()).expect("the shipped scenario");
    let out = simulate(&plan, &Place::Temporary).await.expect("simulation");
    let tz = plan.tz;
    let at = |s: &str| {
        let local = chrono::NaiveDateTime::parse_from_str(s, "%Y-%m-%d %H:%M").unwrap();
        local.and_local_timezone(tz).unwrap().to_utc()
    };
    // (words of the nudge, when it is due or starts, is it an event)
    let items = [
        ("Dentist", at("2026-04-03 15:00"), true),
        ("Zahnarzt", at("2026-04-08 10:00"), true),
        ("tax return", at("2026-04-10 17:00"), false),
        ("checkup for Mia", at("2026-04-14 23:59"), true),
        ("passport", at("2026-04-16 11:00"), false),
        ("pay the nanny", at("2026-04-20 23:59"), false),
        ("landlord", at("2026-04-22 23:59"), false),
        ("Team retro", at("2026-04-24 10:30"), true),
        ("Parents' evening", at("2026-04-28 18:00"), true),
    ];
    let nudges: Vec<(DateTime<Utc>, &str)> = out
        .report
        .marks
        .iter()
        .filter(|m| m.lane == "sentinel")
        .map(|m| (DateTime::parse_from_rfc3339(&m.at).unwrap().to_utc(), m.label.as_str()))
        .collect();
    for (words, due, event) in items {
        let about: Vec<&(DateTime<Utc>, &str)> = nudges.iter().filter(|(_, l)| l.contains(words)).collect();
        let before = about.iter().filter(|(t, _)| *t < due && due - *t <= Duration::hours(48)).count();
        assert!(before >= 1, "`{words}` nudged in the two days before it: {about:?}\n{}", out.text);
        let after: Vec<_> = about.iter().filter(|(t, _)| *t >= due).collect();
        match event {
            true => assert!(after.is_empty(), "`{words}` is never announced after it started: {after:?}"),
            false => assert!(after.len() <= 1, "`{words}` is mentioned overdue at most once: {after:?}"),
        }
    }
    assert!(!nudges.iter().any(|(_, l)| l.contains("Book flights")), "the done one never: {nudges:?}");
}

/// The shipped month of the learning loop: per day the report shows the verdicts, the
/// multiplier and the denials by layer; nothing on `water` after the user's `/stop`; the
/// multiplier falls after the dismissals and rises after enough acceptances; the medication
/// routine (shown on three days) is nudged from the fourth on; the recurring .ics class and the
/// dentist are announced before they start and never after; no menu at the weekend.
#[actix_rt::test]
async fn the_month_of_the_learning_loop_learns_from_a_scripted_user() {
    use chrono::{Datelike, Timelike, Weekday};
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../scenarios/learning.toml");
    let plan = load(&path, Adjust::default()).expect("the shipped scenario");
    let out = simulate(&plan, &Place::Temporary).await.expect("simulation");
    let tz = plan.tz;
    for d in &out.report.days {
        assert!(!d.counts.multiplier.is_empty(), "{}: a multiplier every day", d.date);
    }
    let rendered = out.report.render();
    assert!(rendered.contains("  multiplier:   ") && rendered.contains("  verdicts:     accepted="), "{rendered}");
    assert!(rendered.contains("layer 7 (dismissal_cooldown)="), "denials by layer: {rendered}");

    let when = |m: &report::Mark| DateTime::parse_from_rfc3339(&m.at).unwrap().to_utc();
    let deliveries: Vec<(DateTime<Utc>, &str)> =
        out.report.marks.iter().filter(|m| m.lane == "delivery").map(|m| (when(m), m.label.as_str())).collect();
    let stop = out.report.marks.iter().find(|m| m.lane == "feedback" && m.label.starts_with("stop ")).map(when);
    let stop = stop.expect("the user said stop to water");
    let water: Vec<_> = deliveries.iter().filter(|(_, l)| l.contains("handle water")).collect();
    assert_eq!(water.len(), 1, "one water nudge, then none after the stop: {water:?}");
    assert!(water[0].0 < stop);

    let m: Vec<f64> = out.report.days.iter().map(|d| d.counts.multiplier.parse().unwrap()).collect();
    let low = m.iter().cloned().fold(f64::MAX, f64::min);
    let at_low = m.iter().position(|x| *x == low).unwrap();
    assert!(low < 1.0, "the dismissals tighten: {m:?}");
    assert!(m[at_low..].iter().any(|x| *x > 1.0), "the acceptances loosen later: {m:?}");

    let medication = |date: &str| day(&out, date).topics.get("medication").copied().unwrap_or(0);
    assert_eq!((medication("2026-06-01"), medication("2026-06-02"), medication("2026-06-03")), (0, 0, 0));
    for date in ["2026-06-04", "2026-06-05", "2026-06-12", "2026-06-20", "2026-06-29"] {
        assert_eq!(medication(date), 1, "{date}: the routine is nudged daily from the fourth day");
    }

    let yoga: Vec<_> = deliveries.iter().filter(|(_, l)| l.contains("Yoga class")).collect();
    assert!(yoga.len() >= 4, "each week's class is announced: {yoga:?}");
    for (t, l) in &yoga {
        // The class: Wednesdays 18:00-19:00 local, from June 3.
        let local = t.with_timezone(&tz);
        let (day, hour) = (local.weekday(), local.hour());
        let before = day == Weekday::Tue && hour >= 18 || day == Weekday::Wed && hour < 18;
        assert!(before, "announced before it starts, never after: {local} {l}");
    }
    // Its alarm says 30 minutes: each class also gets its reminder in the half hour before.
    let reminded = yoga.iter().filter(|(_, l)| l.contains("Reminder: Yoga class starts at 18:00")).count();
    assert!(reminded >= 3, "the alarm's notice is kept: {yoga:?}");
    let dentist = crate::time::parse_absolute("2026-06-11 14:00", tz).unwrap();
    let about: Vec<_> = deliveries.iter().filter(|(_, l)| l.contains("Dentist")).collect();
    assert!(!about.is_empty() && about.iter().all(|(t, _)| *t < dentist), "{about:?}");

    let menus: Vec<_> = deliveries.iter().filter(|(_, l)| l.contains("take off your plate")).collect();
    assert!(menus.len() >= 2, "{menus:?}");
    for (t, _) in &menus {
        let d = t.with_timezone(&tz).weekday();
        assert!(!matches!(d, Weekday::Sat | Weekday::Sun), "no menu at the weekend: {t}");
    }
    let report_menu = menus.iter().find(|(_, l)| l.contains("quarterly report")).expect("the new item is offered");
    assert_eq!(report_menu.0.with_timezone(&tz).weekday(), Weekday::Mon, "held over the weekend");
}

#[actix_rt::test]
async fn the_report_lists_every_event_in_order_with_source_action_id_topic_and_target() {
    let text = r##"
start = "2026-03-02T09:00:00Z"
hours = 2
[config.brief]
enabled = false
[memory]
text = "# Memory\n- [ ] Send the report due: 2026-03-02 10:00\n- [ ] Call the bank due: 2026-03-02 10:25\n"
[config.policy]
session_cooldown_minutes = 45
[[cron]]
id = "water"
message = "Drink water"
every_minutes = 60
[[message]]
at = "2026-03-02T09:05:00Z"
text = "hello"
[[feedback]]
at = "2026-03-02T09:10:00Z"
verdict = "accepted"
"##;
    let out = run(text).await;
    let events = &out.report.events;
    let seen = |source: &str, kind: &str| events.iter().filter(|e| e.source == source && e.kind == kind).count();
    assert_eq!(seen("sentinel", "delivered"), 2, "each reminder once: {events:#?}");
    assert_eq!(seen("cron", "delivered"), 2, "{events:#?}");
    assert_eq!(seen("user", "message"), 1, "{events:#?}");
    assert_eq!(seen("sentinel", "denied"), 1, "the bank's, held by the session cooldown once: {events:#?}");

    let nudge = events.iter().find(|e| e.source == "sentinel" && e.kind == "delivered").unwrap();
    assert_eq!(nudge.action.as_deref(), Some("nudge"));
    assert!(nudge.nudge_id.is_some() && nudge.topic.is_some() && nudge.target.as_deref() == Some("cli:local"));
    let verdict = events.iter().find(|e| e.kind == "verdict" && e.action.as_deref() == Some("accepted")).unwrap();
    assert_eq!(verdict.at, "2026-03-02T09:10:00+00:00", "{events:#?}");
    assert!(verdict.nudge_id.is_some(), "{verdict:?}");
    assert!(!nudge.nudge_id.as_ref().unwrap().contains(&std::process::id().to_string()), "no pid in a report");
    let denied = events.iter().find(|e| e.kind == "denied").unwrap();
    assert!(denied.detail.as_deref().is_some_and(|d| d.starts_with("layer ")), "{denied:?}");
    let reminder = events.iter().find(|e| e.source == "cron").unwrap();
    assert_eq!((reminder.action.as_deref(), reminder.detail.as_deref()), (Some("reminder"), Some("water")));

    let times: Vec<_> = events.iter().map(|e| chrono::DateTime::parse_from_rfc3339(&e.at).unwrap()).collect();
    assert!(times.windows(2).all(|w| w[0] <= w[1]), "in the order they happened: {events:#?}");
    let again = run(text).await;
    assert_eq!(again.report.to_json(), out.report.to_json(), "one scenario, one report");
}

#[actix_rt::test]
async fn the_report_shows_the_quiet_hours_the_notes_ask_for() {
    let out = run(r##"
start = "2026-03-02T09:00:00Z"
hours = 1
[config.brief]
enabled = false
[memory]
text = "# Memory\n## Proactivity preferences\n- quiet hours: 22:30-06:00\n"
"##)
    .await;
    assert_eq!(out.report.quiet_hours, "22:30-07:00", "the configured 23:00-07:00 widened by the notes");
    assert!(out.text.contains("quiet hours 22:30-07:00"), "{}", out.text);
}
