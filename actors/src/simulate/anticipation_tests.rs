//! Weeks in Shanghai with notes in Chinese and English and no model: heads-ups as far ahead
//! as the notes ask or their kind needs, a monthly duty, a weekday routine, the morning brief.

use super::*;
use chrono::DateTime;

async fn run(text: &str) -> Output {
    let plan = parse(text, "tiny", Adjust::default()).expect("scenario");
    simulate(&plan, &Place::Temporary).await.expect("simulation")
}

/// What the Sentinel said, when (`03-17 07:00`, Shanghai time) and in what words.
fn said_in_shanghai(out: &Output) -> Vec<(String, String)> {
    let sentinel = out.report.marks.iter().filter(|m| m.lane == "sentinel");
    sentinel
        .map(|m| {
            let at = DateTime::parse_from_rfc3339(&m.at).unwrap().with_timezone(&chrono_tz::Asia::Shanghai);
            (at.format("%m-%d %H:%M").to_string(), m.label.clone())
        })
        .collect()
}

fn day<'a>(out: &'a Output, date: &str) -> &'a report::Counts {
    &out.report.days.iter().find(|d| d.date == date).unwrap_or_else(|| panic!("no day {date}")).counts
}

/// Three weeks from 2 March in Shanghai with no model, heartbeat, discovery or brief: `config` more
/// of the config, `memory` the notes.
fn three_weeks_in_shanghai(config: &str, memory: &str) -> String {
    format!(
        "start = \"2026-03-02T00:00:00+08:00\"\ndays = 20\ntick_minutes = 60\ntimezone = \"Asia/Shanghai\"\n\
         [config.heartbeat]\nenabled = false\n[config.discovery]\nenabled = false\n[config.brief]\nenabled = false\n{config}\n\
         [memory]\ntext = {memory:?}\n"
    )
}

/// Three weeks of notes in Shanghai with no model: the anniversary that asks for a week
/// (`提前一周`) is first mentioned seven days before it, the rent (a payment) three days before,
/// the dentist (an appointment) only the day before.
#[actix_rt::test]
async fn heads_ups_come_as_far_ahead_as_the_note_asks_or_its_kind_needs() {
    let notes = "# Memory\n3/20 结婚纪念日 提前一周订餐厅\nPay the rent on March 20\nDentist on March 20 at 10am\n";
    let out = run(&three_weeks_in_shanghai("", notes)).await;
    let first = |words: &str| {
        let mark = out.report.marks.iter().find(|m| m.lane == "sentinel" && m.label.contains(words));
        let at = mark.unwrap_or_else(|| panic!("no nudge about {words}: {}", out.text)).at.clone();
        DateTime::parse_from_rfc3339(&at).unwrap().with_timezone(&chrono_tz::Asia::Shanghai).date_naive().to_string()
    };
    assert_eq!(first("结婚纪念日"), "2026-03-13", "a week before the 20th");
    assert_eq!(first("rent"), "2026-03-17", "a payment: three days before");
    assert_eq!(first("Dentist"), "2026-03-19", "an appointment: the day before");

    // `[anticipation]` sets the ladder: a payment five days ahead.
    let config = "[config.anticipation]\npayment_days = 5";
    let out = run(&three_weeks_in_shanghai(config, "# Memory\nPay the rent on March 20\n")).await;
    let mark = out.report.marks.iter().find(|m| m.lane == "sentinel" && m.label.contains("rent")).unwrap();
    assert!(mark.at.starts_with("2026-03-14T23:00") || mark.at.starts_with("2026-03-15"), "{}", mark.at);
}

/// Notes written in Chinese, no model, seven weeks in Shanghai: the monthly duty `每月20号`
/// gets its heads-up three days ahead (a payment) and its reminder on the 20th of each month,
/// at the first hour after quiet hours (never at night), in Chinese.
#[actix_rt::test]
async fn a_monthly_duty_written_in_chinese_comes_on_the_20th_at_a_sensible_hour_in_chinese() {
    let plan = three_weeks_in_shanghai("", "# 备忘\n每月20号 付保姆工资 5000\n").replace("days = 20", "days = 52");
    let out = run(&plan).await;
    let said = said_in_shanghai(&out);
    let expected = [
        ("03-17 07:00", "nudge: 提前提醒：「付保姆工资 5000」3月20日（周五）到期。"),
        ("03-20 07:00", "nudge: 提前提醒：「付保姆工资 5000」今天到期。"),
        ("04-17 07:00", "nudge: 提前提醒：「付保姆工资 5000」4月20日（周一）到期。"),
        ("04-20 07:00", "nudge: 提前提醒：「付保姆工资 5000」今天到期。"),
    ];
    let expected: Vec<(String, String)> = expected.iter().map(|(a, b)| (a.to_string(), b.to_string())).collect();
    assert_eq!(said, expected, "{}", out.text);
}

/// Three weeks in Shanghai: the user takes their medication at 08:10 on weekdays only. Once
/// two weeks show the pattern (`RoutineDays::of`: a habit mentioned now and then is not taken
/// to skip the weekend sooner), the routine is nudged on weekdays and keeps quiet at the
/// weekend.
#[actix_rt::test]
async fn a_routine_learned_on_weekdays_stays_quiet_at_the_weekend() {
    use chrono::{Datelike, NaiveDate, Weekday};
    let first = NaiveDate::from_ymd_opt(2026, 3, 2).unwrap();
    let weekend = |d: &NaiveDate| matches!(d.weekday(), Weekday::Sat | Weekday::Sun);
    let mut plan = three_weeks_in_shanghai("", "# Memory\n").replace("days = 20", "days = 21");
    // The user welcomes the nudge (else, ignored, the gate learns to hold it back).
    plan.push_str("[[react]]\ntopic = \"medication\"\nwith = \"accept\"\n");
    for day in first.iter_days().take(21).filter(|d| !weekend(d)) {
        plan.push_str(&format!("[[message]]\nat = \"{day}T08:10:00+08:00\"\ntext = \"took my medication\"\n"));
    }
    let out = run(&plan).await;
    let medication = |d: NaiveDate| day(&out, &d.to_string()).topics.get("medication").copied().unwrap_or(0);
    let third_week: Vec<NaiveDate> = first.iter_days().skip(14).take(7).collect();
    for d in third_week.iter().copied() {
        match weekend(&d) {
            true => assert_eq!(medication(d), 0, "{d} ({}): a weekday routine keeps quiet", d.weekday()),
            false => assert_eq!(medication(d), 1, "{d} ({}): nudged on a weekday\n{}", d.weekday(), out.text),
        }
    }
}

/// The same three weeks with the morning brief (on by default): it comes at 07:00, the end of
/// quiet hours, only on days with something to say, once; it tells the anniversary a week
/// ahead (`提前一周`), the rent three days ahead and the dentist the day before, and no
/// heads-up of its own repeats an item it told.
#[actix_rt::test]
async fn the_morning_brief_tells_each_heads_up_once_a_morning_and_keeps_quiet_on_empty_days() {
    let notes = "# Memory\n3/20 结婚纪念日 提前一周订餐厅\nPay the rent on March 20\nDentist on March 20 at 10am\n";
    let out = run(&three_weeks_in_shanghai("", notes).replace("[config.brief]\nenabled = false\n", "")).await;
    let said = said_in_shanghai(&out);
    let briefs: Vec<&(String, String)> = said.iter().filter(|(_, l)| l.contains("Good morning")).collect();
    let days: Vec<&str> = briefs.iter().map(|(at, _)| at.as_str()).collect();
    assert_eq!(days, ["03-13 07:00", "03-17 07:00", "03-19 07:00", "03-20 07:00"], "{}", out.text);
    let first = |words: &str| said.iter().find(|(_, l)| l.contains(words)).map(|(at, _)| at.as_str());
    assert_eq!(first("结婚纪念日"), Some("03-13 07:00"), "a week ahead, in the brief");
    assert_eq!(first("rent"), Some("03-17 07:00"), "a payment: three days ahead");
    assert_eq!(first("Dentist"), Some("03-19 07:00"), "an appointment: the day before");
    let alone: Vec<_> = said.iter().filter(|(_, l)| l.contains("Heads-up")).collect();
    assert!(alone.is_empty(), "each heads-up was in a brief: {alone:?}\n{}", out.text);
}
